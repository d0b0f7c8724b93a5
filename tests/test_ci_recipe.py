"""The README's CI workflow, run as written: its YAML parsed, its shell steps run.

The workflow is taken from the README, parsed as YAML, and its steps run in
order with bash, as GitHub Actions runs a ``run:`` step (``bash -e``), in a
scratch git repository laid out as the README says: the evalstats checkout
under ``tools/evalstats``, prompts, cases and the agent in their folders. The
``evalstats`` command is the installed package's; the model is the offline
stand-in server on 127.0.0.1 (the only change to the commands: the model name
the stand-in knows, and its address in ``OPENAI_BASE_URL``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _workflow() -> dict:
    text = README.read_text(encoding="utf-8")
    after = text.split("An example CI workflow", 1)[1]
    block = after.split("```yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


def _steps() -> list[dict]:
    (job,) = _workflow()["jobs"].values()
    return job["steps"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _expand(script: str, event: str) -> str:
    """The step's script as GitHub gives it to bash: its expressions filled in."""
    script = script.replace("${{ github.event_name }}", event)
    return re.sub(r"\$\{\{\s*secrets\.[A-Z_]+\s*\}\}", "sk-test-not-a-key", script)


def _bash(script: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's repository: two commits, the second changing a prompt."""
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    for folder in ("prompts", "agent", "cases"):
        (repo / folder).mkdir()
    (repo / "prompts" / "system.txt").write_text("Be brief.\n")
    (repo / "agent" / "agent.py").write_text("print('hello')\n")
    shutil.copy(ROOT / "cases" / "example.yaml", repo / "cases" / "suite.yaml")
    # the checkout of evalstats the workflow installs from (a submodule in real use)
    tools = repo / "tools" / "evalstats"
    tools.mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", tools / "pyproject.toml")
    (repo / "README").write_text("a project\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    (repo / "prompts" / "system.txt").write_text("Be brief and kind.\n")
    _git(repo, "commit", "-q", "-am", "kinder prompt")
    return repo


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    output = tmp_path / "github_output"
    output.write_text("")
    # the installed package's command first on PATH, as after `pip install`
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(PATH=bin_dir + os.pathsep + env.get("PATH", ""), GITHUB_OUTPUT=str(output))
    env.update(extra)
    return env


def test_the_workflow_parses_and_installs_this_project_from_the_checkout(project: Path) -> None:
    workflow = _workflow()
    # YAML 1.1 (PyYAML, and GitHub's own reader) reads the key `on` as true
    assert set(workflow.get("on", workflow.get(True))) == {"push", "schedule"}
    steps = _steps()
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["submodules"] is True and checkout["with"]["fetch-depth"] >= 2
    (install,) = [s["run"] for s in steps if "pip install" in str(s.get("run", ""))]
    words = install.split("#", 1)[0].split()
    assert words[:2] == ["pip", "install"] and len(words) == 3
    # the path names a checkout of this project: pip installs what its pyproject names
    # (./ so that pip reads it as a folder, not a name on PyPI)
    assert words[2].startswith("./")
    pyproject = project / words[2] / "pyproject.toml"
    described = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    assert described["name"] == "evalstats-honest"
    assert described["scripts"]["evalstats"] == "evalstats.cli:main"


def test_the_changed_step_decides_as_the_readme_says(project: Path, tmp_path: Path) -> None:
    (step,) = [s for s in _steps() if s.get("id") == "changed"]
    output = tmp_path / "github_output"

    def decide(event: str) -> str:
        done = _bash(_expand(step["run"], event), project, _env(tmp_path))
        assert done.returncode == 0, done.stderr
        return output.read_text().strip()

    assert decide("push") == "run=yes"  # the last commit changed prompts/
    (project / "README").write_text("a project, described\n")
    _git(project, "commit", "-q", "-am", "docs only")
    assert decide("push") == "run=no"
    assert decide("schedule") == "run=yes"  # once a week whatever changed
    # a watched folder that does not exist fails the job (exit 2), never "unchanged"
    shutil.rmtree(project / "agent")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "no agent folder")
    _git(project, "commit", "-q", "--allow-empty", "-m", "later")
    done = _bash(_expand(step["run"], "push"), project, _env(tmp_path))
    assert done.returncode == 1
    assert "'agent/' names no file or folder" in done.stderr
    assert "evalstats changed failed with exit status 2" in done.stderr


def test_the_eval_step_runs_reports_and_gates(project: Path, tmp_path: Path) -> None:
    from evalstats.demo._server import serve

    (step,) = [s for s in _steps() if str(s.get("if", "")).startswith("steps.changed")]
    script = _expand(step["run"], "push")
    assert "openai:gpt-4o-mini" in script
    # the stand-in knows shop-v2, not gpt-4o-mini: the one change to the commands
    script = script.replace("openai:gpt-4o-mini", "openai:shop-v2")
    secrets = {k: _expand(v, "push") for k, v in step["env"].items()}
    with serve(seed=0) as server:
        env = _env(tmp_path, OPENAI_BASE_URL=f"{server.base_url}/v1", **secrets)
        done = _bash(script, project, env)
    # run and report succeed; the gate decides the step (0 passed, 1 failed)
    assert done.returncode in (0, 1), done.stderr
    assert (project / "results.jsonl").is_file()
    assert ": finished, " in done.stdout and "pass rate per trial" in done.stdout
    assert ("gate passed" in done.stdout) == (done.returncode == 0)
    if done.returncode == 1:
        assert "would pass:" in done.stdout
    assert "Traceback" not in done.stderr
