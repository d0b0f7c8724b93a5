"""Shards: run --shard I/N on several machines, merged into the whole run."""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.results._file import read_results
from evalstats.running._engine import run, schedule
from evalstats.running._shards import parse_shard, shard_cases

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ["v1=standin:shop-v1", "v2=standin:shop-v2"]


def _run(path: Path, **options) -> None:
    run("shop", VARIANTS, runs=3, out=path, progress=False, **options)


def _shards(folder: Path, count: int, **options) -> list[Path]:
    paths = [folder / f"shard-{i}.jsonl" for i in range(1, count + 1)]
    for i, path in enumerate(paths, start=1):
        _run(path, shard=(i, count), **options)
    return paths


def _report(argv: list[str], capsys) -> str:
    """What a verb prints, without what measures time or names the file."""
    assert main(argv) == 0
    out = capsys.readouterr().out
    if "--json" in argv:
        document = json.loads(out)

        def drop(value):
            if isinstance(value, dict):
                return {k: drop(v) for k, v in value.items() if k not in ("latency_s", "path")}
            if isinstance(value, list):
                return [drop(v) for v in value]
            return value

        return json.dumps(drop(document), sort_keys=True)
    return "\n".join(line for line in out.splitlines() if "latency" not in line)


@given(
    ids=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=30, unique=True),
    data=st.data(),
)
def test_every_case_is_in_exactly_one_shard_and_shards_are_even(ids, data) -> None:
    count = data.draw(st.integers(1, len(ids)))
    shares = [shard_cases(ids, (i, count)) for i in range(1, count + 1)]
    taken = [c for share in shares for c in share]
    assert sorted(taken) == sorted(ids)
    assert max(map(len, shares)) - min(map(len, shares)) <= 1
    for share in shares:  # each share keeps the given order
        assert list(share) == [c for c in ids if c in set(share)]
    # A case's shard depends on the ids, not on their order.
    shuffled = data.draw(st.permutations(ids))
    assert [set(shard_cases(shuffled, (i, count))) for i in range(1, count + 1)] == [
        set(s) for s in shares
    ]


def test_a_shard_takes_its_slots_of_the_whole_runs_schedule(tmp_path: Path) -> None:
    (path,) = [p for p in _shards(tmp_path, 4) if p.name == "shard-2.jsonl"]
    manifest = read_results(path).manifest
    mine = {c["id"] for c in manifest["cases"]}
    whole = [
        s.to_list()
        for s in schedule(
            ["order status", "broken lamp refund", "discount trick", "thank-you"], ["v1", "v2"], 3
        )
    ]
    assert manifest["schedule"] == [s for s in whole if s[0] in mine]
    assert manifest["shard"]["index"] == 2 and manifest["shard"]["count"] == 4


@pytest.mark.parametrize("count", [1, 4])
def test_merged_shards_report_what_the_whole_run_reports(tmp_path: Path, capsys, count) -> None:
    whole = tmp_path / "whole.jsonl"
    _run(whole)
    parts = _shards(tmp_path, count)
    merged = tmp_path / "merged.jsonl"
    assert main(["merge", *map(str, parts[::-1]), "--out", str(merged)]) == 0
    assert f"merged {count} shards" in capsys.readouterr().out
    for verb in (
        ["report"],
        ["report", "--json"],
        ["compare", "--a", "v1", "--b", "v2"],
        ["compare", "--a", "v1", "--b", "v2", "--json"],
    ):
        one = _report([verb[0], str(whole), *verb[1:]], capsys)
        other = _report([verb[0], str(merged), *verb[1:]], capsys)
        assert one == other, verb
    a, b = read_results(whole), read_results(merged)
    keep = ("case", "variant", "repeat", "pair", "position", "status", "answer", "checks")
    assert [{k: s[k] for k in keep} for s in a.samples] == [
        {k: s[k] for k in keep} for s in b.samples
    ]
    assert a.manifest["schedule"] == b.manifest["schedule"]
    assert a.manifest["cases"] == b.manifest["cases"]
    assert [p["shard"] for p in b.manifest["sharded_from"]] == [
        [i, count] for i in range(1, count + 1)
    ]
    assert "shard" not in b.manifest


def _refused(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_shards_that_are_not_one_run_are_refused_in_one_line(tmp_path: Path, capsys) -> None:
    parts = [str(p) for p in _shards(tmp_path, 4)]
    out = str(tmp_path / "merged.jsonl")
    assert "shard 3/4 is missing" in _refused(["merge", *parts[:2], parts[3], "--out", out], capsys)
    assert "shard 2/4 is given twice" in _refused(["merge", *parts, parts[1], "--out", out], capsys)
    other = tmp_path / "other"
    other.mkdir()
    seeded = [str(p) for p in _shards(other, 4, seed=5)]
    err = _refused(["merge", *parts[:3], seeded[3], "--out", out], capsys)
    assert "shards of different runs" in err and "seed (0 and 5)" in err
    halves = tmp_path / "halves"
    halves.mkdir()
    two = str(_shards(halves, 2)[0])
    assert "one count" in _refused(["merge", *parts[:3], two, "--out", out], capsys)
    whole = tmp_path / "whole.jsonl"
    _run(whole)
    assert "is not a shard" in _refused(["merge", parts[0], str(whole), "--out", out], capsys)
    assert not Path(out).exists()


def test_a_shard_index_out_of_range_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "x.jsonl")
    base = ["run", "shop", "--variant", VARIANTS[0], "--runs", "2", "--out", out, "--no-progress"]
    assert "index must be from 1 to the count" in _refused([*base, "--shard", "5/4"], capsys)
    assert "must be I/N" in _refused([*base, "--shard", "two"], capsys)
    assert "fewer than 8 shards" in _refused([*base, "--shard", "1/8"], capsys)
    assert "--shard goes without --until-decided" in _refused(
        [
            *base[:4],
            "--variant",
            VARIANTS[1],
            "--until-decided",
            "--max-runs",
            "3",
            "--out",
            out,
            "--shard",
            "1/2",
        ],
        capsys,
    )
    assert not Path(out).exists()
    with pytest.raises(InvalidArgument, match="index must be from 1"):
        parse_shard("0/3")


def test_an_interrupted_shard_resumes_as_its_shard(tmp_path: Path) -> None:
    path = tmp_path / "shard-1.jsonl"
    _run(path, shard=(1, 2))
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")  # two samples kept
    outcome = run("shop", VARIANTS, runs=3, out=path, progress=False, shard=(1, 2), resume=True)
    assert outcome.skipped == 2 and outcome.status == "finished"
    with pytest.raises(Exception, match="cases"):
        run("shop", VARIANTS, runs=3, out=path, progress=False, shard=(2, 2), resume=True)


def _readme_block(after: str, fence: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run your own eval", 1)[1].split("\n## ", 1)[0]
    return section.split(after, 1)[1].split(f"```{fence}\n", 1)[1].split("```", 1)[0]


def _shell(command: str, env: dict[str, str], capsys) -> None:
    """Run the evalstats commands of one shell line (joined by &&), as a shell would
    expand its variables and globs."""
    for part in command.split("&&"):
        for name, value in env.items():
            part = part.replace("${{ " + name + " }}", value).replace("${" + name + "}", value)
        argv = []
        for word in shlex.split(part):
            argv += sorted(glob.glob(word)) if "*" in word else [word]
        assert argv[0] == "evalstats", part
        if argv[1] == "run":
            argv.append("--no-progress")
        assert main(argv[1:]) == 0, argv
    capsys.readouterr()


def test_readme_github_actions_matrix_runs_and_merges(tmp_path, monkeypatch, capsys) -> None:
    import yaml

    workflow = yaml.safe_load(_readme_block("As a GitHub Actions matrix", "yaml"))
    jobs = workflow["jobs"]
    assert jobs["merge"]["needs"] == "shard"
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    shutil.copytree(ROOT / "cases", tmp_path / "cases")
    monkeypatch.chdir(tmp_path)
    runs = [s["run"] for s in jobs["shard"]["steps"] if s.get("run", "").startswith("evalstats ")]
    for shard in shards:
        for command in runs:
            _shell(command, {"matrix.shard": str(shard)}, capsys)
    (merge,) = [
        s["run"] for s in jobs["merge"]["steps"] if s.get("run", "").startswith("evalstats ")
    ]
    _shell(merge, {}, capsys)
    merged = read_results(tmp_path / "results.jsonl")
    assert len(merged.manifest["sharded_from"]) == len(shards) == 4
    assert len(merged.samples) == 5 * 2 * len(merged.manifest["cases"])


def test_readme_slurm_array_runs_and_merges(tmp_path, monkeypatch, capsys) -> None:
    script = _readme_block("As a SLURM array job", "sh")
    (array,) = re.findall(r"#SBATCH --array=(\d+)-(\d+)", script)
    (command,) = [line for line in script.splitlines() if line.startswith("evalstats ")]
    submit = _readme_block("submitted with a merge", "sh")
    (wrapped,) = re.findall(r'--wrap "([^"]+)"', submit)
    assert "--dependency=afterok:$job" in submit
    shutil.copytree(ROOT / "cases", tmp_path / "cases")
    monkeypatch.chdir(tmp_path)
    for task in range(int(array[0]), int(array[1]) + 1):
        _shell(command, {"SLURM_ARRAY_TASK_ID": str(task)}, capsys)
    _shell(wrapped, {}, capsys)
    merged = read_results(tmp_path / "results.jsonl")
    assert [p["shard"] for p in merged.manifest["sharded_from"]] == [[i, 4] for i in range(1, 5)]
