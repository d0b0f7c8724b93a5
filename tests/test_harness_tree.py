"""The ``cmd:`` harness ends a command's whole process tree, whatever it does.

A descendant that calls ``setsid()`` leaves the command's group and session
and may keep stdout open: before, the harness waited on that pipe until the
engine's safety net fired (timeout + 15 s), the sample was retried as a
transient timeout and ended unmeasured, and the process ran on. Each test
here is bounded to a few seconds.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalstats.results._file import read_results
from evalstats.running import _reaper
from evalstats.running._command import CmdTask
from evalstats.running._engine import Prompt, Variant
from evalstats.running._engine import run as run_engine
from evalstats.running._suite import Case

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

# mode pidfile: fork a grandchild that leaves the group and session with
# setsid(), keeps stdout open (or not) and sleeps; record its pid; then the
# command itself either hangs or ends at once.
ESCAPER = textwrap.dedent(
    r"""
    import os, sys, time

    mode, pid_file = sys.argv[1], sys.argv[2]
    print("the answer: Paper Kite", flush=True)
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:  # a double fork: reparented away from the command
            if mode == "quiet":
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
            with open(pid_file + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(pid_file + ".tmp", pid_file)
            time.sleep(60)
        os._exit(0)
    os.waitpid(child, 0)
    while not os.path.exists(pid_file):
        time.sleep(0.01)
    if mode == "hang":
        time.sleep(60)
    """
)

CASE = Case(
    id="c",
    prompt="What is the project called?",
    checks=[{"contains": "Paper Kite"}],
    fixtures={"notes.txt": "Project name: Paper Kite\n"},
)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def gone_soon(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture(params=["keeper", "direct"])
def escaper(request, tmp_path: Path, monkeypatch) -> Path:
    """The escaper script; each test runs it under a keeper and started directly."""
    from evalstats.running import _command

    if request.param == "direct":
        monkeypatch.setattr(_command, "_KEEPER_ON", False)
    elif _command._keeper_command() is None:
        pytest.skip("no keeper here")
    path = tmp_path / "escaper.py"
    path.write_text(ESCAPER)
    return path


def task(escaper: Path, mode: str, pid_file: Path) -> CmdTask:
    return CmdTask(f"{sys.executable} {escaper} {mode} {pid_file}")


def run_once(t: CmdTask, timeout: float):
    prompt = Prompt(CASE.prompt, None, ({"role": "user", "content": CASE.prompt},))
    return asyncio.run(t.run(prompt, seed=1, case=CASE, timeout=timeout))


def test_a_timed_out_command_with_a_setsid_grandchild_on_stdout_ends_in_time(escaper, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    t0 = time.monotonic()
    result = run_once(task(escaper, "hang", pid_file), timeout=1.0)
    elapsed = time.monotonic() - t0
    assert elapsed < 1.0 + 2.0, elapsed
    assert result.answer is None
    assert result.trace["incomplete"] == "the command did not finish within 1 s and was killed"
    assert gone_soon(int(pid_file.read_text()), within=0.5)


@pytest.mark.parametrize("mode", ["stay", "quiet"])
def test_what_a_finished_command_left_running_is_ended(escaper, tmp_path, mode):
    pid_file = tmp_path / "grandchild.pid"
    t0 = time.monotonic()
    result = run_once(task(escaper, mode, pid_file), timeout=20.0)
    assert time.monotonic() - t0 < 5.0
    assert result.trace["exit_code"] == 0 and result.trace["incomplete"] is None
    assert result.answer == "the answer: Paper Kite"
    assert gone_soon(int(pid_file.read_text()), within=0.5)


def test_the_engine_records_a_timed_out_command_as_incomplete(escaper, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    out = tmp_path / "r.jsonl"
    t0 = time.monotonic()
    run_engine(
        [CASE],
        [Variant("v", task(escaper, "hang", pid_file))],
        runs=1,
        out=out,
        timeout=1.0,
        progress=False,
    )
    assert time.monotonic() - t0 < 1.0 + 2.0 + 2.0  # the sample, and the run around it
    (sample,) = read_results(out).samples
    assert sample["status"] == "incomplete" and sample["attempts"] == 1
    assert not alive(int(pid_file.read_text()))


DRIVER = textwrap.dedent(
    r"""
    import asyncio, sys
    from evalstats.running._suite import Case
    from evalstats.running._engine import Prompt
    from evalstats.running import _command
    from evalstats.running._command import CmdTask

    _command._KEEPER_ON = sys.argv[2] == "True"
    case = Case(id="c", prompt="q", checks=[{"contains": "x"}])
    task = CmdTask(sys.argv[1])
    asyncio.run(task.run(Prompt("q", None, ({"role": "user", "content": "q"},)), seed=1,
                         case=case, timeout=60))
    """
)


def test_kill_9_of_evalstats_leaves_no_command_running(escaper, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    driver = subprocess.Popen(
        [
            sys.executable,
            "-c",
            DRIVER,
            f"{sys.executable} {escaper} hang {pid_file}",
            str(_command_keeper_on()),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10.0
        while not pid_file.exists():
            assert time.monotonic() < deadline, "the command never started"
            assert driver.poll() is None
            time.sleep(0.02)
        grandchild = int(pid_file.read_text())
        workspaces = [p for p in Path(_tmp()).glob("evalstats-ws-*") if _owned_by(p, driver.pid)]
        assert alive(grandchild) and workspaces
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    # The watchdog is a Python process of its own; on two loaded cores its start
    # and its turn to run can take seconds, so the window is generous (it returns
    # as soon as the command is gone).
    assert gone_soon(grandchild, within=15.0)
    # The next start removes what the killed process left in the temporary folder.
    removed = _reaper.sweep()
    assert {str(p) for p in workspaces} <= set(removed)
    assert not any(p.exists() for p in workspaces)


def _command_keeper_on() -> bool:
    from evalstats.running import _command

    return _command._KEEPER_ON


def _tmp() -> str:
    import tempfile

    return tempfile.gettempdir()


def _owned_by(folder: Path, pid: int) -> bool:
    try:
        return (folder / _reaper.OWNER_FILE).read_text().split()[0] == str(pid)
    except OSError:
        return False


def test_sweep_removes_only_folders_of_processes_that_are_gone(tmp_path):
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    dead = tmp_path / "evalstats-ws-dead"
    live = tmp_path / "evalstats-trace-live"
    kept = tmp_path / "evalstats-ws-kept"  # --keep-workspaces: no owner file
    other = tmp_path / "other-dead"
    for folder in (dead, live, kept, other):
        (folder / "work").mkdir(parents=True)
    (dead / _reaper.OWNER_FILE).write_text(f"{done.pid} 1\n")
    (other / _reaper.OWNER_FILE).write_text(f"{done.pid} 1\n")
    _reaper.write_owner(live)
    os.chmod(dead / "work", 0o500)  # read-only leftovers are removed too
    assert _reaper.sweep(tmp_path) == [str(dead)]
    assert not dead.exists() and live.exists() and kept.exists() and other.exists()


ENV_DUMP = "import json, os; print(json.dumps(dict(os.environ)))"


def test_a_command_gets_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-0123456789")
    monkeypatch.setenv("DB_PASSWORD", "db-password-0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-0123456789")
    monkeypatch.setenv("MY_FLAG", "on")
    script = tmp_path / "dump.py"
    script.write_text(ENV_DUMP)
    import json

    from evalstats.running._engine import parse_variant

    variant = parse_variant(
        f"v=cmd:{sys.executable} {script} --model=openai:notes,env=MY_FLAG+UNSET_ONE"
    )
    got = json.loads(run_once(variant.task, timeout=20.0).answer)
    assert got["MY_FLAG"] == "on" and got["OPENAI_API_KEY"] == "sk-test-0123456789"
    assert got["PATH"] == os.environ["PATH"]
    for secret in ("AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "ANTHROPIC_API_KEY", "UNSET_ONE"):
        assert secret not in got
    assert {k for k in got if k.startswith("EVALSTATS_")} == {
        "EVALSTATS_WORKSPACE",
        "EVALSTATS_TRACE",
        "EVALSTATS_SEED",
        _reaper.TOKEN_VARIABLE,
    }


@pytest.mark.parametrize("spec", ["env=1BAD", "env=A;B", "colour=red"])
def test_bad_cmd_settings_are_refused(tmp_path, spec):
    from evalstats.errors import InvalidArgument
    from evalstats.running._engine import parse_variant

    with pytest.raises(InvalidArgument, match="env|takes only"):
        parse_variant(f"v=cmd:{sys.executable} -c pass,{spec}")


def test_the_watchdog_is_running_before_a_command_is_spawned(escaper, tmp_path, monkeypatch):
    # Registering a command must be a write on an open pipe: the watchdog starts
    # before the spawn, so a kill -9 in between cannot leave the command running.
    from evalstats.running import _command as harness

    seen: list[bool] = []
    spawn = harness._spawn

    async def checking_spawn(*args, **kwargs):
        watchdog = _reaper._watchdog
        seen.append(watchdog is not None and watchdog.poll() is None)
        return await spawn(*args, **kwargs)

    monkeypatch.setattr(harness, "_spawn", checking_spawn)
    monkeypatch.setattr(harness, "_KEEPER_ON", False)  # the watchdog is for a command without
    monkeypatch.setattr(_reaper, "_watchdog", None)
    result = run_once(task(escaper, "answer", tmp_path / "grandchild.pid"), timeout=30.0)
    assert seen == [True]
    assert result.trace["exit_code"] == 0


def test_a_keeper_that_cannot_start_makes_the_sample_incomplete_with_its_reason(
    tmp_path, monkeypatch
):
    from evalstats.running import _command

    if _command._keeper_command() is None:
        pytest.skip("no keeper here")
    broken = tmp_path / "keeper.py"
    broken.write_text("import sys\nsys.exit('the keeper cannot start here')\n")
    monkeypatch.setattr(_command, "_KEEPER_PATH", str(broken))
    result = run_once(CmdTask(f"{sys.executable} -c pass"), timeout=20.0)
    assert result.answer is None and result.trace["exit_code"] is None
    assert result.trace["incomplete"] == (
        "the command's keeper (the process evalstats runs it under) ended with status 1: "
        "the keeper cannot start here"
    )


def test_a_program_gone_before_its_sample_is_one_reason(tmp_path):
    from evalstats.running import _command

    if _command._keeper_command() is None:
        pytest.skip("no keeper here")
    program = tmp_path / "agent.sh"
    program.write_text("#!/bin/sh\necho hi\n")
    program.chmod(0o755)
    t = CmdTask(str(program))
    program.unlink()
    result = run_once(t, timeout=20.0)
    assert result.answer is None and result.trace["exit_code"] == 127
    assert result.trace["incomplete"].startswith(
        f"the command exited with status 127: evalstats: cannot run {str(program)!r}"
    )
