"""run --resume and --extend given options that differ from the results file's manifest.

A resume or an extension either honours a changed option and records it in the
manifest, so that every reader accepts the file, or refuses it in one line
(exit 2) and leaves the file byte for byte as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.errors import EvalStatsError
from evalstats.results._file import read_results
from evalstats.running._engine import run

# Two variants that are the same stand-in: no verdict, so every round runs.
SAME = ["--variant", "a=standin:shop-v1", "--variant", "b=standin:shop-v1"]
SHOP = ["--variant", "a=standin:shop-v1", "--variant", "b=standin:shop-v2"]


def _sequential(out: Path, max_runs: int, *more: str, flag: str = "--out") -> int:
    argv = ["run", "shop", *SAME, "--until-decided", "--max-runs", str(max_runs)]
    return main([*argv, "--no-progress", *more, flag, str(out)])


def _made(out: Path, max_runs: int, capsys: pytest.CaptureFixture[str]) -> bytes:
    """A sequential run of ``max_runs`` rounds written to ``out``: its bytes."""
    assert _sequential(out, max_runs) == 0
    capsys.readouterr()
    return out.read_bytes()


def _one_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


def _cut(path: Path, keep: int) -> None:
    """Keep the manifest and the first ``keep`` records, as a crash would."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[: 1 + keep]), encoding="utf-8")


# --- run --until-decided --resume with another --max-runs ---------------------------


def test_a_larger_budget_on_resume_is_recorded_so_every_reader_accepts_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "seq.jsonl"
    before = _made(out, 2, capsys)
    # Refused for another reason (another seed): the budget is not written either.
    assert _sequential(out, 4, "--seed", "9", flag="--resume") == 2
    _one_line(capsys, "seed")
    assert out.read_bytes() == before
    # The same run with a larger budget continues, and the manifest says so.
    assert _sequential(out, 4, flag="--resume") == 0
    res = read_results(out)
    assert [look["round"] for look in res.looks] == [1, 2, 3, 4]
    recorded = res.manifest["until_decided"]
    assert recorded["max_runs"] == 4
    assert [b["max_runs"] for b in recorded["budgets"]] == [[2, 4]]
    assert res.summary["until_decided"]["rounds"] == 4
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert main(["compare", str(out), "--a", "a", "--b", "b", "--sequential"]) == 0
    # The budget now recorded is the one a further resume keeps.
    capsys.readouterr()
    after = out.read_bytes()
    assert _sequential(out, 4, flag="--resume") == 0
    assert out.read_bytes() == after


def test_a_budget_below_the_rounds_taken_is_refused_and_the_file_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "seq.jsonl"
    before = _made(out, 3, capsys)
    assert _sequential(out, 2, flag="--resume") == 2
    _one_line(capsys, "max_runs=2", "3 rounds")
    assert out.read_bytes() == before


def test_a_budget_below_a_round_cut_short_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "seq.jsonl"
    assert _sequential(out, 3) == 0
    capsys.readouterr()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    second = next(i for i, r in enumerate(records) if r["type"] == "look" and r["round"] == 2)
    _cut(out, second + 2)  # round 3 begun: two of its samples written, no look
    before = out.read_bytes()
    assert _sequential(out, 2, flag="--resume") == 2
    _one_line(capsys, "max_runs=2", "3 rounds")
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("more", "named"),
    [
        (["--seed", "5"], "seed"),
        (["--variant", "b=standin:shop-v2"], "the variants"),
        (["--limit", "2"], "the cases"),
    ],
)
def test_a_spent_run_resumed_as_another_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], more: list[str], named: str
) -> None:
    # Nothing is left to run, so no round compares this run with the file's; it is
    # still refused, not answered with the file's own verdict.
    out = tmp_path / "seq.jsonl"
    before = _made(out, 2, capsys)
    argv = ["run", "shop", "--variant", "a=standin:shop-v1"]
    argv += more if more[0] == "--variant" else ["--variant", "b=standin:shop-v1", *more]
    argv += ["--until-decided", "--max-runs", "2", "--no-progress", "--resume", str(out)]
    assert main(argv) == 2
    _one_line(capsys, "cannot resume", named)
    assert out.read_bytes() == before
    assert _sequential(out, 2, flag="--resume") == 0
    assert out.read_bytes() == before


def test_a_sequential_run_resumed_as_a_fixed_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its rounds would be taken without their looks, past the budget the file records.
    out = tmp_path / "seq.jsonl"
    before = _made(out, 2, capsys)
    argv = ["run", "shop", *SAME, "--runs", "4", "--no-progress", "--resume", str(out)]
    assert main(argv) == 2
    _one_line(capsys, "--until-decided --max-runs 2")
    assert out.read_bytes() == before


# --- a shard extended or resumed without its --shard --------------------------------


def _shards(tmp_path: Path, capsys: pytest.CaptureFixture[str], *more: str) -> list[Path]:
    paths = []
    for i in (1, 2):
        path = tmp_path / f"s{i}.jsonl"
        argv = ["run", "shop", *SHOP, "--runs", "2", *more, "--shard", f"{i}/2"]
        assert main([*argv, "--out", str(path), "--no-progress"]) == 0
        paths.append(path)
    capsys.readouterr()
    return paths


def test_a_shard_is_not_extended_and_its_shards_still_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s1, s2 = _shards(tmp_path, capsys)
    before = s1.read_bytes()
    argv = ["run", "shop", *SHOP, "--runs", "3", "--extend", str(s1), "--no-progress"]
    assert main(argv) == 2
    _one_line(capsys, "shard 1/2", "merge")
    assert s1.read_bytes() == before
    # The same refusal from the Python API.
    with pytest.raises(EvalStatsError, match="shard 1/2"):
        run("shop", SHOP[1::2], runs=3, out=s1, extend=True, progress=False)
    assert s1.read_bytes() == before
    merged = tmp_path / "merged.jsonl"
    assert main(["merge", str(s1), str(s2), "--out", str(merged)]) == 0


def test_a_shard_resumed_without_its_shard_names_the_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s1, _ = _shards(tmp_path, capsys)
    _cut(s1, 2)
    before = s1.read_bytes()
    argv = ["run", "shop", *SHOP, "--runs", "2", "--resume", str(s1), "--no-progress"]
    assert main(argv) == 2
    _one_line(capsys, "shard", "--shard 1/2")
    assert s1.read_bytes() == before
    assert main([*argv, "--shard", "1/2"]) == 0


def test_a_shard_resumed_as_another_shard_of_the_same_cases_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Of 3 cases, shard 2/2 and shard 2/3 are the same one case: the samples would
    # agree, but the file would go on saying 2/2 and never merge with 1/3 and 3/3.
    path = tmp_path / "s.jsonl"
    argv = ["run", "shop", *SHOP, "--runs", "2", "--limit", "3", "--no-progress"]
    assert main([*argv, "--shard", "2/2", "--out", str(path)]) == 0
    capsys.readouterr()
    _cut(path, 2)
    before = path.read_bytes()
    assert main([*argv, "--shard", "2/3", "--resume", str(path)]) == 2
    _one_line(capsys, "shard", "2/2", "2/3")
    assert path.read_bytes() == before
    # Not a shard at all: refused, naming the shard to give.
    assert main([*argv, "--resume", str(path)]) == 2
    _one_line(capsys, "--shard 2/2")
    assert path.read_bytes() == before
    assert main([*argv, "--shard", "2/2", "--resume", str(path)]) == 0
