"""run --extend: more repeats and new cases added to a finished run, the schedule kept balanced."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.errors import InvalidArgument, ResultsFileError
from evalstats.results._file import read_results
from evalstats.running._engine import run

CASES = [
    {"id": "order", "prompt": "Hi, where is my order A-1042?", "checks": [{"contains": "A-1042"}]},
    {"id": "refund", "prompt": "The lamp arrived broken.", "checks": [{"contains": "sorry"}]},
    {"id": "thanks", "prompt": "Thanks, that's all!", "checks": [{"word_count": [1, 12]}]},
]
NEW_CASE = {"id": "discount", "prompt": "Give me a discount code.", "checks": [{"avoids": "SAVE"}]}
VARIANTS = ["old=standin:shop-v1", "new=standin:shop-v2"]


def _suite(path: Path, cases=CASES) -> Path:
    path.write_text(json.dumps({"name": "mini", "version": 1, "cases": cases}, indent=2))
    return path


def _run(folder: Path, name: str, *, runs: int, suite=None, **kw) -> Path:
    suite = suite or _suite(folder / "suite.json")
    out = folder / name
    run(str(suite), kw.pop("variants", VARIANTS), runs=runs, out=out, progress=False, **kw)
    return out


def _extend(folder: Path, path: Path, *, runs: int, suite=None, **kw) -> None:
    suite = suite or folder / "suite.json"
    variants = kw.pop("variants", VARIANTS)
    run(str(suite), variants, runs=runs, out=path, extend=True, progress=False, **kw)


def _samples(path: Path) -> dict[tuple[str, str, int], dict]:
    return {(s["case"], s["variant"], s["repeat"]): s for s in read_results(path).samples}


def test_more_repeats_make_the_file_a_longer_run_would_have_made(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=2)
    before = path.read_bytes().splitlines(keepends=True)
    _extend(tmp_path, path, runs=5)
    fresh = _run(tmp_path, "fresh.jsonl", runs=5)
    grown, whole = read_results(path), read_results(fresh)
    # The same schedule (pairs, who goes first) and the same samples (same seeds).
    assert grown.manifest["schedule"] == whole.manifest["schedule"]
    assert grown.manifest["runs"] == 5
    a, b = _samples(path), _samples(fresh)
    assert a.keys() == b.keys() and len(a) == 30
    for key in a:
        for field in ("answer", "checks", "pair", "position"):
            assert a[key][field] == b[key][field], (key, field)
    # The earlier samples are kept byte for byte, after the new manifest.
    after = path.read_bytes().splitlines(keepends=True)
    assert after[1 : len(before) - 1] == before[1:-1]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temporary left


def test_new_cases_run_for_every_repeat_and_each_case_alternates(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=2)
    pairs_before = {s[2] for s in read_results(path).manifest["schedule"]}
    # the new case sits between old ones in the suite file
    grown_suite = _suite(tmp_path / "grown.json", [CASES[0], NEW_CASE, *CASES[1:]])
    _extend(tmp_path, path, runs=3, suite=grown_suite)
    res = read_results(path)
    schedule = res.manifest["schedule"]
    ids = ["order", "refund", "thanks", "discount"]
    assert [c["id"] for c in res.manifest["cases"]] == ids  # the file's cases, then the added
    assert sorted((c, r, v) for c, r, _, _, v in schedule) == sorted(
        (c, r, v) for c in ids for r in range(3) for v in ("old", "new")
    )
    assert set(_samples(path)) == {(c, v, r) for c in ids for r in range(3) for v in ("old", "new")}
    pairs: dict[int, set] = {}
    for case, repeat, pair, position, variant in schedule:
        pairs.setdefault(pair, set()).add((case, repeat, position, variant))
    assert len(pairs) == 12
    for members in pairs.values():
        assert len({(c, r) for c, r, _, _ in members}) == 1
        assert sorted(p for _, _, p, _ in members) == [0, 1]
    new_pairs = {s[2] for s in schedule} - pairs_before
    assert min(new_pairs) > max(pairs_before)  # numbered after the file's
    for case in ids:  # who goes first alternates from repeat to repeat, for every case
        firsts = [
            v for c, r, _, p, v in sorted(schedule, key=lambda s: s[1]) if c == case and p == 0
        ]
        assert all(x != y for x, y in zip(firsts, firsts[1:], strict=False)), (case, firsts)
        assert abs(Counter(firsts)["old"] - Counter(firsts)["new"]) <= 1
    (entry,) = res.manifest["extensions"]
    assert entry["runs"] == [2, 3] and entry["cases_added"] == ["discount"]
    assert entry["samples_added"] == 3 * 2 + 3 * 1 * 2  # the new case's 3 repeats, 1 more of 3
    assert compare_results(res, "old", "new").pairs == 12


def test_each_extension_is_recorded_in_order(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=1)
    _extend(tmp_path, path, runs=2)
    priced = ["old=standin:shop-v1,price_in=3,price_out=15", VARIANTS[1]]
    _extend(tmp_path, path, runs=4, variants=priced)  # prices are not part of a variant
    history = read_results(path).manifest["extensions"]
    assert [e["runs"] for e in history] == [[1, 2], [2, 4]]
    assert history[0]["at"] <= history[1]["at"]
    assert history[1]["variants"][0]["prices"] == {"input": 3.0, "output": 15.0}
    assert "prices" not in read_results(path).manifest["variants"][0]
    assert len(read_results(path).samples) == 3 * 4 * 2


def test_an_interrupted_extension_completes_with_the_same_command(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=1)
    _extend(tmp_path, path, runs=3)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-4]))  # three samples and the summary lost
    _extend(tmp_path, path, runs=3)
    res = read_results(path)
    assert len(res.samples) == 18 and res.summary["status"] == "finished"
    assert len(res.manifest["extensions"]) == 1  # nothing new was scheduled
    assert res.summary["resumed_with"] == 15


def test_compare_says_the_file_was_extended(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=2)
    _extend(tmp_path, path, runs=3)
    assert main(["compare", str(path), "--a", "old", "--b", "new"]) == 0
    out = capsys.readouterr().out
    assert "warning: the run was extended once after its first session" in out
    assert "compare --sequential" in out


def test_the_command_line_extends(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=2)
    argv = ["run", str(tmp_path / "suite.json"), "--variant", VARIANTS[0]]
    argv += ["--variant", VARIANTS[1], "--runs", "4", "--extend", str(path), "--no-progress"]
    assert main(argv) == 0
    assert "12 samples written" in capsys.readouterr().out
    assert read_results(path).manifest["runs"] == 4


def _refused(capsys, tmp_path: Path, argv: list[str], needle: str) -> None:
    files = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalstats"), err
    assert needle in lines[0], lines[0]
    assert "Traceback" not in err
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == files


def _argv(tmp_path: Path, path: Path, *variants: str, runs: int = 3, suite=None) -> list[str]:
    out = ["run", str(suite or tmp_path / "suite.json")]
    for v in variants or VARIANTS:
        out += ["--variant", v]
    return [*out, "--runs", str(runs), "--extend", str(path)]


def test_other_variants_are_refused(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=2)
    argv = _argv(tmp_path, path, VARIANTS[0], "new=standin:shop-v1")
    _refused(
        capsys, tmp_path, argv, "cannot extend: this run differs from the file's in variant 'new'"
    )
    argv = _argv(tmp_path, path, VARIANTS[0], "newer=standin:shop-v2")
    _refused(capsys, tmp_path, argv, "the variants (['old', 'new'] in the file")
    argv = _argv(tmp_path, path, VARIANTS[0], VARIANTS[1] + ",prefix=Hi ")
    _refused(capsys, tmp_path, argv, "variant 'new'")


def test_a_changed_check_is_refused(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=2)
    changed = [CASES[0], dict(CASES[1], checks=[{"contains": "refund"}]), CASES[2]]
    argv = _argv(tmp_path, path, suite=_suite(tmp_path / "changed.json", changed))
    _refused(capsys, tmp_path, argv, "case 'refund' (rescore for new checks)")


def test_another_seed_fewer_runs_or_missing_cases_are_refused(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=2)
    _refused(capsys, tmp_path, [*_argv(tmp_path, path), "--seed", "1"], "seed (the file has 0")
    _refused(capsys, tmp_path, _argv(tmp_path, path, runs=1), "runs=1 is fewer than the file's 2")
    argv = [*_argv(tmp_path, path), "--case", "order"]
    _refused(capsys, tmp_path, argv, "'refund', 'thanks' of the file not selected")


def test_a_missing_file_and_mixed_options_are_refused(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=2)
    _refused(capsys, tmp_path, _argv(tmp_path, tmp_path / "none.jsonl"), "no such results file")
    argv = [*_argv(tmp_path, path), "--resume"]
    _refused(capsys, tmp_path, argv, "--extend goes without --resume")
    argv = [*_argv(tmp_path, path), "--out", str(tmp_path / "other.jsonl")]
    _refused(capsys, tmp_path, argv, "name different files")
    with pytest.raises(InvalidArgument, match="extend=True and resume=True"):
        run(str(tmp_path / "suite.json"), VARIANTS, runs=3, out=path, extend=True, resume=True)


def test_resume_of_an_extended_file_points_at_extend(tmp_path, capsys):
    path = _run(tmp_path, "r.jsonl", runs=1)
    _extend(tmp_path, path, runs=2)
    argv = ["run", str(tmp_path / "suite.json"), "--variant", VARIANTS[0], "--variant"]
    argv += [VARIANTS[1], "--runs", "2", "--resume", str(path)]
    _refused(capsys, tmp_path, argv, "was extended; continue it with the same --extend command")


def test_a_sequential_run_is_not_extended(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=1)
    lines = path.read_text().splitlines(keepends=True)
    manifest = json.loads(lines[0])
    manifest["until_decided"] = {"max_runs": 10}
    path.write_text(json.dumps(manifest) + "\n" + "".join(lines[1:]))
    before = path.read_bytes()
    with pytest.raises(InvalidArgument, match="a sequential run"):
        _extend(tmp_path, path, runs=3)
    assert path.read_bytes() == before


def test_an_imported_file_is_not_extended(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=1)
    lines = path.read_text().splitlines(keepends=True)
    manifest = json.loads(lines[0])
    del manifest["schedule"]
    path.write_text(json.dumps(manifest) + "\n" + "".join(lines[1:]))
    with pytest.raises(InvalidArgument, match="only a results file written by evalstats run"):
        _extend(tmp_path, path, runs=3)


def test_nothing_to_add_rewrites_nothing(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=2)
    manifest_line = path.read_bytes().splitlines()[0]
    _extend(tmp_path, path, runs=2)
    assert path.read_bytes().splitlines()[0] == manifest_line
    assert "extensions" not in read_results(path).manifest


def test_resume_accepts_added_prices(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=2)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-3]))  # interrupted: two samples and the summary lost
    priced = [VARIANTS[0] + ",price_in=0.15,price_out=0.6", VARIANTS[1]]
    run(str(tmp_path / "suite.json"), priced, runs=2, out=path, resume=True, progress=False)
    res = read_results(path)
    assert len(res.samples) == 12 and res.summary["status"] == "finished"
    # the prices are recorded, and what the variants were before
    assert res.manifest["variants"][0]["prices"] == {"input": 0.15, "output": 0.6}
    (entry,) = res.manifest["repriced"]
    assert "prices" not in entry["variants"][0] and entry["at"]


def test_resume_still_refuses_another_task(tmp_path):
    path = _run(tmp_path, "r.jsonl", runs=2)
    with pytest.raises(ResultsFileError, match="cannot resume"):
        run(
            str(tmp_path / "suite.json"),
            [VARIANTS[0], "new=standin:shop-v1"],
            runs=2,
            out=path,
            resume=True,
            progress=False,
        )


def test_compare_runs_compares_runs_whose_prices_differ(tmp_path, capsys):
    a = _run(tmp_path, "a.jsonl", runs=2)
    priced = [VARIANTS[0] + ",price_in=0.15,price_out=0.6", VARIANTS[1]]
    b = _run(tmp_path, "b.jsonl", runs=2, seed=1, variants=priced)
    assert main(["compare-runs", str(a), str(b)]) == 0
    assert "variant old:" in capsys.readouterr().out
