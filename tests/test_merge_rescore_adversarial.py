"""merge and rescore given the files users hand them: each refusal one line naming the
file, the sample and the field; each file written one that report reads as it should."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importing import one_line_error

from evalstats.cli import main
from evalstats.reading._merge import merge_runs, merge_shards
from evalstats.reading._rescore import rescore
from evalstats.results._file import read_results
from evalstats.running._engine import run

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "cases" / "shop.json"
JUDGED = str(ROOT / "cases" / "judged.yaml")
VARIANTS = ["v1=standin:shop-v1", "v2=standin:shop-v2"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _shop_with_a_new_check(path: Path) -> Path:
    """The shop suite with one more check in every case (a check every answer fails)."""
    doc = json.loads(SHOP.read_text(encoding="utf-8"))
    for case in doc["cases"]:
        case["checks"].append({"contains": "zzz-never-said"})
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _slots(path: Path) -> dict[tuple[str, str, int], dict]:
    return {(s["case"], s["variant"], s["repeat"]): s for s in read_results(path).samples}


# --- rescore keeps what the run recorded besides its samples ------------------------


def test_rescore_keeps_the_looks_of_a_run_made_until_decided(tmp_path: Path, capsys) -> None:
    first = tmp_path / "sequential.jsonl"
    argv = ["run", "shop", "--variant", VARIANTS[0], "--variant", VARIANTS[1]]
    assert main([*argv, "--until-decided", "--max-runs", "4", "--out", str(first)]) == 0
    before = read_results(first)
    assert before.looks
    again = tmp_path / "again.jsonl"
    rescore(first, "shop", out=again)
    after = read_results(again)
    # The looks are the run's history: the report's rounds, compare's warning that the
    # file was looked at as it grew, where run --until-decided --resume goes on from.
    assert after.looks == before.looks
    capsys.readouterr()
    assert main(["compare", str(again), "--a", "v1", "--b", "v2"]) == 0
    assert f"the file was looked at {len(before.looks)} times" in capsys.readouterr().out


def test_rescore_keeps_the_batch_records_of_the_run(tmp_path: Path) -> None:
    first = tmp_path / "r.jsonl"
    run("shop", VARIANTS, runs=1, out=first, progress=False)
    lines = _lines(first)
    batch = {
        "type": "batch",
        "id": "batch_1",
        "provider": "openai",
        "variant": "v1",
        "state": "ended",
        "answered": 4,
    }
    _write_lines(first, [lines[0], batch, *lines[1:]])
    again = tmp_path / "again.jsonl"
    rescore(first, "shop", out=again)
    assert read_results(again).batches == read_results(first).batches != ()


def test_merge_refuses_runs_made_until_decided(tmp_path: Path, capsys) -> None:
    # A sequential run's schedule is one round's, its repeats the rounds: numbered after
    # its "runs" (1), the second run's samples took the first's later rounds, each slot
    # then holding two samples of which report counted one.
    paths = []
    for seed in (0, 1):
        path = tmp_path / f"until-{seed}.jsonl"
        argv = ["run", "shop", "--variant", VARIANTS[0], "--variant", VARIANTS[1]]
        argv += ["--until-decided", "--max-runs", "3", "--seed", str(seed), "--out", str(path)]
        assert main(argv) == 0
        paths.append(path)
    assert max(s["repeat"] for s in read_results(paths[0]).samples) > 0
    capsys.readouterr()
    out = tmp_path / "both.jsonl"
    one_line_error(
        capsys, "merge", *paths, "--out", out, naming=["until-0.jsonl", "--until-decided"]
    )
    assert not out.exists()


# --- rescore of a merged file: each part under its own seeds ------------------------


def test_a_merged_file_is_rescored_as_its_parts_are(tmp_path: Path, capsys) -> None:
    weak = "standin:judge,sensitivity=0.6,specificity=0.6,seed=1"
    parts = []
    for name, seed in (("a.jsonl", 4), ("b.jsonl", 5)):
        path = tmp_path / name
        argv = ["run", JUDGED, "--variant", VARIANTS[0], "--variant", VARIANTS[1], "--runs", "3"]
        argv += ["--seed", str(seed), "--judge", weak, "--out", str(path), "--no-progress"]
        assert main(argv) == 0
        parts.append(path)
    merged = tmp_path / "ab.jsonl"
    merge_runs(*parts, out=merged)
    # Another drawing judge: each verdict is drawn under the sample's own seed, the seed
    # its part gave it, so the merged file rescored is the parts rescored and merged.
    other = "standin:judge,sensitivity=0.6,specificity=0.6,seed=2"
    rescore(merged, JUDGED, out=tmp_path / "ab-again.jsonl", judge=other)
    for i, path in enumerate(parts):
        rescore(path, JUDGED, out=tmp_path / f"part{i}-again.jsonl", judge=other)
    whole = _slots(tmp_path / "ab-again.jsonl")
    for i in range(2):
        for (case, variant, repeat), record in _slots(tmp_path / f"part{i}-again.jsonl").items():
            moved = whole[(case, variant, repeat + 3 * i)]
            assert [c["status"] for c in moved["checks"]] == [
                c["status"] for c in record["checks"]
            ], (case, variant, repeat, i)


# --- shards rescored, and shards scored differently ----------------------------------


def _shards(folder: Path, count: int = 2, **options) -> list[Path]:
    paths = [folder / f"shard-{i}.jsonl" for i in range(1, count + 1)]
    for i, path in enumerate(paths, start=1):
        run(str(SHOP), VARIANTS, runs=2, out=path, shard=(i, count), progress=False, **options)
    return paths


def test_a_shard_is_rescored_with_the_whole_runs_suite(tmp_path: Path) -> None:
    shards = _shards(tmp_path)
    suite = _shop_with_a_new_check(tmp_path / "shop2.json")
    rescored = [tmp_path / f"again-{i}.jsonl" for i in (1, 2)]
    for shard, out in zip(shards, rescored, strict=True):
        outcome = rescore(shard, str(suite), out=out)
        assert outcome.rescored == len(read_results(shard).samples)
        assert outcome.left_out == 2  # the other shard's cases
        assert f"the run is shard {shards.index(shard) + 1}/2; 2 other cases" in str(outcome)
    # Both shards rescored with one suite merge into the whole run rescored.
    merge_shards(rescored, out=tmp_path / "all-again.jsonl")
    merge_shards(shards, out=tmp_path / "all.jsonl")
    rescore(tmp_path / "all.jsonl", str(suite), out=tmp_path / "again-all.jsonl")
    assert _slots(tmp_path / "all-again.jsonl") == _slots(tmp_path / "again-all.jsonl")


def test_a_shard_rescored_with_a_case_added_is_refused(tmp_path: Path, capsys) -> None:
    shard = _shards(tmp_path)[0]
    doc = json.loads(SHOP.read_text(encoding="utf-8"))
    doc["cases"].append({"id": "late case", "prompt": "Hello?", "checks": [{"contains": "hi"}]})
    suite = tmp_path / "grown.json"
    suite.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "again.jsonl"
    one_line_error(
        capsys, "rescore", shard, "--suite", suite, "--out", out, naming=[str(shard), "5 cases"]
    )
    assert not out.exists()


def test_shards_scored_by_different_suites_are_not_merged(tmp_path: Path, capsys) -> None:
    # A shard rescored with new checks beside a shard that was not: merged, half the
    # cases would be counted by one suite's checks and half by another's.
    shards = _shards(tmp_path, limit=4)  # a selection, which rescore takes as it is
    suite = _shop_with_a_new_check(tmp_path / "shop2.json")
    again = tmp_path / "shard-1-again.jsonl"
    rescore(shards[0], str(suite), out=again)
    out = tmp_path / "all.jsonl"
    one_line_error(
        capsys,
        "merge",
        again,
        shards[1],
        "--out",
        out,
        naming=["shard-1-again.jsonl", "shard-2.jsonl", "suite"],
    )
    assert not out.exists()


def test_shards_judged_by_different_judges_are_not_merged(tmp_path: Path, capsys) -> None:
    weak = "standin:judge,sensitivity=0.6,specificity=0.6,seed=1"
    shards = []
    for i in (1, 2):
        path = tmp_path / f"shard-{i}.jsonl"
        argv = ["run", JUDGED, "--variant", VARIANTS[0], "--variant", VARIANTS[1], "--runs", "2"]
        argv += ["--shard", f"{i}/2", "--limit", "4", "--judge", weak, "--out", str(path)]
        assert main([*argv, "--no-progress"]) == 0
        shards.append(path)
    again = tmp_path / "shard-1-again.jsonl"
    perfect = "standin:judge,sensitivity=1,specificity=1,seed=1"
    rescore(shards[0], JUDGED, out=again, judge=perfect)
    capsys.readouterr()
    out = tmp_path / "all.jsonl"
    one_line_error(
        capsys,
        "merge",
        again,
        shards[1],
        "--out",
        out,
        naming=["shard-1-again.jsonl", "shard-2.jsonl", "judge", "specificity=1"],
    )
    assert not out.exists()


# --- files evalstats run did not write ------------------------------------------------


def _imported(folder: Path, name: str, passes: tuple[int, int]) -> Path:
    table = folder / f"{name}.csv"
    rows = [f"order status,{v},0,{p}" for v, p in zip(("v1", "v2"), passes, strict=True)]
    table.write_text("case,variant,repeat,pass\n" + "\n".join(rows) + "\n", encoding="utf-8")
    out = folder / f"{name}.jsonl"
    assert main(["import", str(table), "--out", str(out)]) == 0
    return out


def test_merge_of_imported_files_says_they_are_imported(tmp_path: Path, capsys) -> None:
    a, b = _imported(tmp_path, "a", (1, 0)), _imported(tmp_path, "b", (0, 1))
    capsys.readouterr()
    out = tmp_path / "ab.jsonl"
    line = one_line_error(capsys, "merge", a, b, "--out", out, naming=["a.jsonl", "imported"])
    assert "--seed" not in line  # not "run the second with another seed"
    assert not out.exists()


def test_rescore_of_an_imported_file_says_it_is_imported(tmp_path: Path, capsys) -> None:
    a = _imported(tmp_path, "a", (1, 0))
    capsys.readouterr()
    out = tmp_path / "again.jsonl"
    line = one_line_error(
        capsys, "rescore", a, "--suite", "shop", "--out", out, naming=[str(a), "imported"]
    )
    assert "changed its prompt" not in line
    assert not out.exists()


# --- samples their own file does not plan ---------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"), [("variant", "v3"), ("case", "no such case"), ("repeat", 7)]
)
def test_merge_refuses_a_sample_its_file_does_not_plan(
    tmp_path: Path, capsys, field: str, value
) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run("shop", VARIANTS, runs=2, out=a, progress=False)
    run("shop", VARIANTS, runs=2, seed=1, out=b, progress=False)
    lines = _lines(b)
    lines[3][field] = value
    _write_lines(b, lines)
    out = tmp_path / "ab.jsonl"
    # Merged, the sample would be refused by report, in the merged file: merge refuses
    # it in the file it came from, naming the sample and the field.
    one_line_error(
        capsys, "merge", a, b, "--out", out, naming=["b.jsonl", repr(value), f"its {field}"]
    )
    assert not out.exists()


def test_merge_of_shards_refuses_a_sample_of_another_shards_case(tmp_path: Path, capsys) -> None:
    shards = _shards(tmp_path)
    mine = _lines(shards[0])
    theirs = next(line for line in _lines(shards[1]) if line["type"] == "sample")
    # shard 1 holding a sample of shard 2's case: merged, that slot would hold two samples
    _write_lines(shards[0], [mine[0], theirs, *mine[1:]])
    out = tmp_path / "all.jsonl"
    one_line_error(
        capsys,
        "merge",
        *shards,
        "--out",
        out,
        naming=["shard-1.jsonl", repr(theirs["case"]), "its case"],
    )
    assert not out.exists()


def test_a_killed_writes_hidden_part_is_removed_by_the_next_write(tmp_path):
    # kill -9 during merge, rescore or import --out leaves .NAME.PID.part beside the
    # target; the next write of that name removes it when its process is gone, and
    # leaves one whose process runs (another command writing the same file)
    import os
    import subprocess
    import sys

    from evalstats.reading._logs import load_results, write_results

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f".out.jsonl.{gone.pid}.part"
    dead.write_text("half a file")
    alive = tmp_path / f".out.jsonl.{os.getppid()}.part"
    alive.write_text("being written")
    other = tmp_path / ".other.jsonl.1.part"
    other.write_text("another name's")
    data = Path(__file__).parent / "data" / "lm_eval"
    res = load_results(next(data.glob("samples_*.jsonl")))
    write_results(res, tmp_path / "out.jsonl")
    assert not dead.exists() and alive.exists() and other.exists()


def test_rescore_refusals_name_the_suite_file_and_the_run(tmp_path: Path, capsys) -> None:
    # they said "suite: ..." and named neither file
    out = tmp_path / "r.jsonl"
    run(str(SHOP), VARIANTS, runs=1, out=out, progress=False)
    doc = json.loads(SHOP.read_text(encoding="utf-8"))
    doc["cases"][0]["prompt"] = doc["cases"][0]["prompt"] + " Please."
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc), encoding="utf-8")
    first = doc["cases"][0]["id"]
    one_line_error(
        capsys,
        "rescore",
        out,
        "--suite",
        edited,
        "--out",
        tmp_path / "x.jsonl",
        naming=[f"suite {edited}: case {first!r} changed its prompt since the run in {out}"],
    )
    doc["cases"] = doc["cases"][1:]
    fewer = tmp_path / "fewer.json"
    fewer.write_text(json.dumps(doc), encoding="utf-8")
    one_line_error(
        capsys,
        "rescore",
        out,
        "--suite",
        fewer,
        "--out",
        tmp_path / "y.jsonl",
        naming=[f"suite {fewer}: its cases are not those of the run in {out} (not in the suite"],
    )


def test_merge_says_when_the_merged_file_reads_as_unfinished(tmp_path: Path, capsys) -> None:
    # a part cut short (no summary) or interrupted made a merged file gate refuses,
    # and merge's line did not say so
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run(str(SHOP), VARIANTS, runs=1, out=a, progress=False)
    run(str(SHOP), VARIANTS, runs=1, seed=1, out=b, progress=False)
    whole = merge_runs(a, b, out=tmp_path / "whole.jsonl")
    assert whole.unfinished == "" and "unfinished" not in str(whole)
    lines = b.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")
    assert main(["merge", str(a), str(cut), "--out", str(tmp_path / "m.jsonl")]) == 0
    said = capsys.readouterr().out
    assert "; cut.jsonl has no summary (cut short), so the merged file has none" in said
    assert "--allow-unfinished" in said
    summary = json.loads(lines[-1]) | {"status": "interrupted"}
    stopped = _write_lines(tmp_path / "stopped.jsonl", [*map(json.loads, lines[:-1]), summary])
    outcome = merge_runs(a, stopped, out=tmp_path / "n.jsonl")
    assert outcome.unfinished.startswith("stopped.jsonl (interrupted) did not finish")
    assert outcome.to_dict()["unfinished"] == outcome.unfinished
