"""merge: two runs of the same suite and variants joined, repeats numbered on, pairs kept."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.errors import InvalidArgument, ResultsFileError
from evalstats.reading._merge import merge_runs
from evalstats.results._file import read_results
from evalstats.running._engine import run

SUITE = {
    "name": "mini",
    "version": 1,
    "cases": [
        {
            "id": "order",
            "prompt": "Hi, where is my order A-1042?",
            "checks": [{"contains": "A-1042"}],
        },
        {"id": "refund", "prompt": "The lamp arrived broken.", "checks": [{"contains": "sorry"}]},
        {"id": "thanks", "prompt": "Thanks, that's all!", "checks": [{"word_count": [1, 12]}]},
    ],
}
VARIANTS = ["old=standin:shop-v1", "new=standin:shop-v2"]


def _suite(path: Path, **changes) -> Path:
    doc = json.loads(json.dumps(SUITE))
    for case_id, fields in changes.items():
        for case in doc["cases"]:
            if case["id"] == case_id:
                case.update(fields)
    path.write_text(json.dumps(doc, indent=2))
    return path


def _run(folder: Path, name: str, *, runs: int, seed: int, variants=VARIANTS, suite=None) -> Path:
    suite = suite or _suite(folder / "suite.json")
    out = folder / name
    run(str(suite), variants, runs=runs, seed=seed, out=out, progress=False)
    return out


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    return _run(tmp_path, "a.jsonl", runs=3, seed=0), _run(tmp_path, "b.jsonl", runs=2, seed=1)


def _by_slot(path: Path) -> dict[tuple[str, str, int], dict]:
    return {(s["case"], s["variant"], s["repeat"]): s for s in read_results(path).samples}


def test_the_second_runs_repeats_follow_the_firsts(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "ab.jsonl"
    outcome = merge_runs(a, b, out=out)
    assert (outcome.runs, outcome.samples) == (5, 30)
    assert outcome.parts == (("a.jsonl", 0, 3), ("b.jsonl", 3, 5))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    merged, first, second = _by_slot(out), _by_slot(a), _by_slot(b)
    assert len(merged) == 30
    for (case, variant, repeat), record in merged.items():
        source = (
            first[(case, variant, repeat)] if repeat < 3 else second[(case, variant, repeat - 3)]
        )
        assert record["answer"] == source["answer"]
        assert record["checks"] == source["checks"]
        assert record["position"] == source["position"]  # who ran first is what happened
    # Each variant's outcomes are the first run's repeats, then the second's.
    ra, rb, rm = read_results(a), read_results(b), read_results(out)
    for variant in ("old", "new"):
        ma, mb, mm = ra.outcomes(variant), rb.outcomes(variant), rm.outcomes(variant)
        assert mm == {case: ma[case] + mb[case] for case in ma}


def test_pairs_stay_paired_and_the_schedule_balanced(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "ab.jsonl"
    merge_runs(a, b, out=out)
    merged = read_results(out)
    schedule = merged.manifest["schedule"]
    assert len(schedule) == 30 and merged.manifest["runs"] == 5
    pairs: dict[int, list] = {}
    for case, repeat, pair, position, variant in schedule:
        pairs.setdefault(pair, []).append((case, repeat, position, variant))
    assert len(pairs) == 15  # 3 cases x 5 repeats, no pair number used twice
    for members in pairs.values():
        assert len({(c, r) for c, r, _, _ in members}) == 1  # one case and repeat per pair
        assert sorted(p for _, _, p, _ in members) == [0, 1]
        assert sorted(v for _, _, _, v in members) == ["new", "old"]
    for s in merged.samples:  # a sample's pair is its slot's
        assert [s["case"], s["repeat"], s["pair"], s["position"], s["variant"]] in schedule
    first = Counter(v for _, _, _, p, v in schedule if p == 0)
    assert abs(first["old"] - first["new"]) <= len(SUITE["cases"])  # each part alternates
    comparison = compare_results(merged, "old", "new")
    assert comparison.pairs == 15


def test_the_manifest_records_each_part(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "ab.jsonl"
    merge_runs(a, b, out=out)
    manifest = read_results(out).manifest
    parts = manifest["merged_from"]
    assert [p["file"] for p in parts] == ["a.jsonl", "b.jsonl"]
    assert [p["repeats"] for p in parts] == [[0, 3], [3, 5]]
    assert [p["seed"] for p in parts] == [0, 1]
    for part, path in zip(parts, (a, b), strict=True):
        assert part["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert part["started_at"] == read_results(path).manifest["started_at"]
        assert part["status"] == "finished"
    assert manifest["merged_at"]
    summary = read_results(out).summary
    assert summary["status"] == "finished" and summary["samples"] == 30
    assert summary["by_variant"]["old"]["completed"] == 15


def test_a_merged_file_merges_again_keeping_its_parts(two_runs, tmp_path):
    a, b = two_runs
    merge_runs(a, b, out=tmp_path / "ab.jsonl")
    c = _run(tmp_path, "c.jsonl", runs=1, seed=2)
    outcome = merge_runs(tmp_path / "ab.jsonl", c, out=tmp_path / "abc.jsonl")
    assert outcome.parts == (("a.jsonl", 0, 3), ("b.jsonl", 3, 5), ("c.jsonl", 5, 6))
    assert read_results(tmp_path / "abc.jsonl").manifest["runs"] == 6
    # b is already in ab: its seeds would count its answers twice
    with pytest.raises(InvalidArgument, match="both used seed=1"):
        merge_runs(tmp_path / "ab.jsonl", b, out=tmp_path / "abb.jsonl")


def test_prices_are_not_part_of_a_variant(tmp_path):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    priced = ["old=standin:shop-v1,price_in=3,price_out=15", "new=standin:shop-v2"]
    b = _run(tmp_path, "b.jsonl", runs=1, seed=1, variants=priced)
    merge_runs(a, b, out=tmp_path / "ab.jsonl")
    parts = read_results(tmp_path / "ab.jsonl").manifest["merged_from"]
    assert "prices" not in parts[0]["variants"][0]
    assert parts[1]["variants"][0]["prices"] == {"input": 3.0, "output": 15.0}


def test_the_command_line_merges_and_says_where(two_runs, tmp_path, capsys):
    a, b = two_runs
    out = tmp_path / "ab.jsonl"
    assert main(["merge", str(a), str(b), "--out", str(out), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "evalstats.merge/2"
    assert document["runs"] == 5 and document["samples"] == 30
    assert document["parts"][1] == {"file": "b.jsonl", "repeats": [3, 5]}
    assert main(["report", str(out)]) == 0


def _refused(capsys, tmp_path, a: Path, b: Path, needle: str) -> None:
    files = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    out = tmp_path / "merged.jsonl"
    assert main(["merge", str(a), str(b), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalstats: error: "), captured.err
    assert needle in lines[0], lines[0]
    assert "Traceback" not in captured.err
    assert not out.exists()
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == files


def test_another_task_is_refused(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    b = _run(tmp_path, "b.jsonl", runs=1, seed=1, variants=["old=standin:shop-v2", VARIANTS[1]])
    _refused(capsys, tmp_path, a, b, "variant 'old' differs in its task")


def test_another_prompt_transform_is_refused(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    b = _run(
        tmp_path, "b.jsonl", runs=1, seed=1, variants=[VARIANTS[0], VARIANTS[1] + ",prefix=Hi "]
    )
    _refused(capsys, tmp_path, a, b, "variant 'new' differs in its transform")


def test_other_variants_are_refused(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    b = _run(tmp_path, "b.jsonl", runs=1, seed=1, variants=[VARIANTS[0], "newer=standin:shop-v2"])
    _refused(capsys, tmp_path, a, b, "the variants differ (['old', 'new'] then ['old', 'newer'])")


def test_a_changed_check_is_refused_and_named(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    other = _suite(tmp_path / "other.json", refund={"checks": [{"contains": "refund"}]})
    b = _run(tmp_path, "b.jsonl", runs=1, seed=1, suite=other)
    _refused(capsys, tmp_path, a, b, "checks changed in case 'refund'")


def test_a_comment_only_edit_is_the_same_suite(tmp_path):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    reformatted = tmp_path / "same.json"
    reformatted.write_text(json.dumps(SUITE))  # other bytes, the same cases
    b = _run(tmp_path, "b.jsonl", runs=1, seed=1, suite=reformatted)
    assert merge_runs(a, b, out=tmp_path / "ab.jsonl").runs == 2


def test_the_same_seed_is_refused(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    b = _run(tmp_path, "b.jsonl", runs=1, seed=0)
    _refused(capsys, tmp_path, a, b, "both used seed=0")


def test_the_same_file_twice_is_refused(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    _refused(capsys, tmp_path, a, a, "is the same file as first")


def _edit_manifest(path: Path, out: Path, **fields) -> Path:
    lines = path.read_text().splitlines(keepends=True)
    manifest = json.loads(lines[0])
    manifest.update(fields)
    out.write_text(json.dumps(manifest) + "\n" + "".join(lines[1:]))
    return out


def test_another_machine_is_refused_only_where_it_matters(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    b = _run(tmp_path, "b.jsonl", runs=1, seed=1)
    # the in-process stand-ins answer the same everywhere: the machine does not matter
    moved = _edit_manifest(b, tmp_path / "moved.jsonl", machine="another")
    assert merge_runs(a, moved, out=tmp_path / "ok.jsonl").runs == 2
    os.unlink(tmp_path / "ok.jsonl")
    # a locally served model is another measurement on another machine
    manifest_a = json.loads(a.read_text().splitlines()[0])
    local = [
        dict(v, task={"kind": "ollama", "model": "m", "base_url": "http://127.0.0.1:11434"})
        for v in manifest_a["variants"]
    ]
    la = _edit_manifest(a, tmp_path / "la.jsonl", variants=local)
    lb = _edit_manifest(b, tmp_path / "lb.jsonl", variants=local, machine="another")
    _refused(capsys, tmp_path, la, lb, "machine differs")


def test_a_file_without_a_schedule_is_refused(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    lines = a.read_text().splitlines(keepends=True)
    manifest = json.loads(lines[0])
    manifest.pop("schedule")  # as an imported log's manifest has none
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps(dict(manifest, seed=5)) + "\n" + "".join(lines[1:]))
    _refused(capsys, tmp_path, a, bare, "only results files written by evalstats run")


def test_an_existing_out_is_never_overwritten(two_runs, tmp_path, capsys):
    a, b = two_runs
    out = tmp_path / "taken.jsonl"
    out.write_text("someone's file\n")
    assert main(["merge", str(a), str(b), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "already exists" in err
    assert out.read_text() == "someone's file\n"
    with pytest.raises(ResultsFileError, match="already exists"):
        merge_runs(a, b, out=out)


def test_a_missing_file_is_one_line(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=1, seed=0)
    assert main(["merge", str(a), str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_an_interrupted_part_makes_an_unfinished_merge(tmp_path):
    a = _run(tmp_path, "a.jsonl", runs=2, seed=0)
    b = _run(tmp_path, "b.jsonl", runs=2, seed=1)
    lines = b.read_text().splitlines(keepends=True)
    summary = json.loads(lines[-1])
    summary.update(status="interrupted", reason="SIGINT")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-3]) + json.dumps(summary) + "\n")  # two samples missing
    merge_runs(a, cut, out=tmp_path / "m.jsonl")
    merged = read_results(tmp_path / "m.jsonl")
    assert merged.summary["status"] == "interrupted"
    assert "cut.jsonl ended with status 'interrupted'" in merged.summary["reason"]
    assert len(merged.samples) == 12 + 10
    assert len(merged.manifest["schedule"]) == 24  # the missing slots stay scheduled, untaken


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs_a=st.integers(1, 3), runs_b=st.integers(1, 3))
def test_merged_outcomes_are_the_parts_in_order(runs_a, runs_b):
    with tempfile.TemporaryDirectory() as folder:
        d = Path(folder)
        a = _run(d, "a.jsonl", runs=runs_a, seed=3)
        b = _run(d, "b.jsonl", runs=runs_b, seed=4)
        outcome = merge_runs(a, b, out=d / "m.jsonl")
        assert outcome.runs == runs_a + runs_b
        ra, rb, rm = read_results(a), read_results(b), read_results(d / "m.jsonl")
        for variant in ("old", "new"):
            ma, mb = ra.outcomes(variant), rb.outcomes(variant)
            assert rm.outcomes(variant) == {c: ma[c] + mb[c] for c in ma}
        slots = {(s[0], s[1], s[4]) for s in rm.manifest["schedule"]}
        assert len(slots) == len(rm.manifest["schedule"]) == 3 * 2 * (runs_a + runs_b)


def test_readme_merge_commands_work_offline(tmp_path, monkeypatch, capsys):
    import shlex
    import shutil

    root = Path(__file__).resolve().parent.parent
    text = (root / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run your own eval", 1)[1].split("\n## ", 1)[0]
    block = section.split("More repeats later", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert [c[1] for c in commands] == ["run", "run", "merge", "run", "compare"]
    shutil.copytree(root / "cases", tmp_path / "cases")
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        assert main([*argv[1:], *(["--no-progress"] if argv[1] == "run" else [])]) == 0, argv
    out = capsys.readouterr().out
    assert "paired by (case, repeat)" in out and "the run was extended once" in out
    both = read_results(tmp_path / "both.jsonl")
    assert both.manifest["runs"] == 20 and both.manifest["extensions"][0]["runs"] == [10, 20]
    assert len(both.samples) == 20 * 2 * len(both.manifest["cases"])
