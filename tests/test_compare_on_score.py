"""compare --sequential --on score: the anytime-valid comparison of mean scores of a
finished run, on the command line and in --json, equal to the library's."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import records
from scored import random_levels, scored_run

from evalstats.cli import main
from evalstats.deciding._score_sequential import sequential_score_compare
from evalstats.deciding._sequential import sequential_results

#: this file's runs: 8 cases x 6 repeats unless a test says otherwise
_levels = functools.partial(random_levels, cases=8, repeats=6)


def _scores(levels: dict) -> dict[str, list[float]]:
    """Each case's scores in repeat order, laid out by the test itself: (level - 1) / 4."""
    return {case: [(lv - 1) / 4 for lv in row] for case, row in levels.items()}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, dict]:
    levels = _levels(3)
    return scored_run(tmp_path_factory.mktemp("s") / "r.jsonl", levels), levels


SEQ = ["--a", "old", "--b", "new", "--sequential"]


def test_the_printed_verdict_and_interval_are_the_librarys(run, capsys) -> None:
    path, levels = run
    want = sequential_score_compare(_scores(levels["old"]), _scores(levels["new"]))
    assert want.verdict == "b_better"  # the data decide, so the test can tell verdicts apart
    assert main(["compare", str(path), *SEQ, "--on", "score"]) == 0
    out = capsys.readouterr().out
    first, *table = out.splitlines()
    assert first == str(want)
    assert first.startswith(f"B better: {want.difference}, anytime-valid (these cases, mean score)")
    assert "\n".join(table) == want.trajectory_text()


def test_json_is_the_librarys_to_dict(run, capsys) -> None:
    path, levels = run
    want = sequential_score_compare(_scores(levels["old"]), _scores(levels["new"]))
    assert main(["compare", str(path), *SEQ, "--on", "score", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == want.verdict and doc["on"] == "score"
    assert doc["difference"]["low"] == pytest.approx(want.difference.low, abs=1e-12)
    assert doc["difference"]["high"] == pytest.approx(want.difference.high, abs=1e-12)
    assert doc["decided_at"] == want.decided_at
    assert doc["summary"] == str(want)


def test_cases_like_these_is_the_librarys(run, capsys) -> None:
    path, levels = run
    want = sequential_score_compare(
        _scores(levels["old"]), _scores(levels["new"]), about="cases_like_these"
    )
    argv = ["compare", str(path), *SEQ, "--on", "score", "--about", "cases-like-these"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == str(want)


def test_a_no_difference_run_cant_tell(tmp_path: Path, capsys) -> None:
    levels = _levels(4, shift=0, repeats=2)
    path = scored_run(tmp_path / "r.jsonl", levels)
    want = sequential_score_compare(_scores(levels["old"]), _scores(levels["new"]))
    assert want.verdict == "cant_tell"
    assert main(["compare", str(path), *SEQ, "--on", "score"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == str(want) and first.startswith("can't tell yet: ")


def test_on_pass_is_the_pass_rate_comparison_unchanged(run, capsys) -> None:
    path, _ = run
    assert main(["compare", str(path), *SEQ]) == 0
    default = capsys.readouterr().out
    assert main(["compare", str(path), *SEQ, "--on", "pass"]) == 0
    assert capsys.readouterr().out == default
    want = sequential_results(str(path), "old", "new")
    assert default == f"{want}\n{want.trajectory_text()}\n"
    assert "mean score" not in default
    assert main(["compare", str(path), *SEQ, "--on", "pass", "--json"]) == 0
    assert "on" not in json.loads(capsys.readouterr().out)


def test_the_plot_draws_the_score_trajectory(run, tmp_path: Path, capsys) -> None:
    path, _ = run
    png = tmp_path / "looks.png"
    assert main(["compare", str(path), *SEQ, "--on", "score", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    assert "wrote" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--on", "score"], "--on goes with --sequential"),
        (["--on", "pass"], "--on goes with --sequential"),
        (
            ["--sequential", "--on", "score", "--planned-for", "0.5,0.7"],
            "--on score goes without it",
        ),
        (["--sequential", "--on", "mean"], "--on: invalid choice"),
    ],
)
def test_bad_usage_is_one_line_exit_2(run, capsys, extra: list[str], message: str) -> None:
    path, _ = run
    assert main(["compare", str(path), "--a", "old", "--b", "new", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_run_without_scores_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    outcomes = {"old": {"c": [True, False]}, "new": {"c": [True, True]}}
    path = records.write(
        tmp_path / "r.jsonl",
        records.manifest(["c"], ["old", "new"], 2),
        records.samples(outcomes),
        {"status": "finished"},
    )
    assert main(["compare", str(path), *SEQ, "--on", "score"]) == 2
    err = capsys.readouterr().err
    assert "no sample carries a score" in err and err.count("\n") == 1
    assert main(["compare", str(path), *SEQ]) == 0  # pass rates still compare


def test_a_selection_compares_its_cases_only(run, capsys) -> None:
    path, levels = run
    keep = ("c1", "c2")
    want = sequential_score_compare(
        {c: _scores(levels["old"])[c] for c in keep}, {c: _scores(levels["new"])[c] for c in keep}
    )
    argv = ["compare", str(path), *SEQ, "--on", "score", "--case", "c1", "--case", "c2"]
    assert main(argv) == 0
    selection, first, *_ = capsys.readouterr().out.splitlines()
    assert selection.startswith("selection: ") and first == str(want)
