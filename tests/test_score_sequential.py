"""The anytime-valid comparison of mean scores: arithmetic, agreement, validity, runs."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.deciding._score_sequential import (
    SCORE_BETS,
    log_evalue_scores,
    score_crossings,
    sequential_score_compare,
    sequential_score_results,
)
from evalstats.deciding._until_decided import run_until_decided
from evalstats.errors import InvalidArgument
from evalstats.results._file import read_results
from evalstats.running._engine import Variant
from evalstats.running._graded import covers
from evalstats.running._suite import Case
from evalstats.stats._intervals import proportion_ci

# --- the e-process, against exact arithmetic ------------------------------------------


def _exact_evalue(diffs: list[Fraction], null: Fraction, direction: int) -> Fraction:
    """The e-process of the module docstring, one factor at a time in exact fractions:
    the mean over the 64 bets b_j = 9/10 (2j + 1) / 128 of prod_i (1 + b_j y_i)."""
    total = Fraction(0)
    for j in range(64):
        bet = Fraction(9, 10) * Fraction(2 * j + 1, 128)
        wealth = Fraction(1)
        for d in diffs:
            y = (d - null) / (1 + null) if direction > 0 else (null - d) / (1 - null)
            wealth *= 1 + bet * y
        total += wealth
    return total / 64


def test_the_evalue_matches_exact_arithmetic() -> None:
    assert SCORE_BETS == 64
    diffs = [Fraction(1, 2), Fraction(1, 4), Fraction(-1, 4), Fraction(3, 4), Fraction(0), 1, -1]
    diffs = [Fraction(d) for d in diffs]
    for null in (Fraction(0), Fraction(1, 5), Fraction(-3, 10)):
        for direction in (1, -1):
            got = np.exp(
                log_evalue_scores([float(d) for d in diffs], null=float(null), direction=direction)
            )
            want = [
                float(_exact_evalue(diffs[: t + 1], null, direction)) for t in range(len(diffs))
            ]
            assert got == pytest.approx(want, rel=1e-12)


def test_the_comparison_reports_the_evalue_of_its_pairs_in_round_order() -> None:
    # Round order: round r is repeat r of every case in case order, so the pairs are
    # x0, y0, x1, y1: differences 0.5, -0.25, 0.25, 1.
    a = {"x": [0.25, 0.5], "y": [0.5, 0.0]}
    b = {"x": [0.75, 0.75], "y": [0.25, 1.0]}
    c = sequential_score_compare(a, b, looks=[1, 2, 3, 4])
    diffs = [Fraction(1, 2), Fraction(-1, 4), Fraction(1, 4), Fraction(1)]
    for t, look in enumerate(c.trajectory):
        assert look.evalue_b == pytest.approx(float(_exact_evalue(diffs[: t + 1], 0, 1)))
        assert look.evalue_a == pytest.approx(float(_exact_evalue(diffs[: t + 1], 0, -1)))
    assert c.only_b == 3 and c.only_a == 1 and c.on == "score"
    assert c.difference.estimate == pytest.approx(0.375)
    assert c.threshold == pytest.approx(40.0)


# --- verdict and interval agree --------------------------------------------------------

score_values = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(0.0, 1.0)


@st.composite
def score_tables(draw: st.DrawFn) -> tuple[dict, dict]:
    cases = draw(st.integers(1, 4))
    runs = draw(st.integers(1, 12))
    shift = draw(st.sampled_from([-0.5, -0.2, 0.0, 0.2, 0.5]))
    a, b = {}, {}
    for c in range(cases):
        a[f"c{c}"] = [draw(score_values) for _ in range(runs)]
        b[f"c{c}"] = [min(1.0, max(0.0, draw(score_values) + shift)) for _ in range(runs)]
    return a, b


@settings(max_examples=40, deadline=None)
@given(score_tables(), st.sampled_from([0.8, 0.9, 0.95]))
def test_the_interval_excludes_zero_exactly_when_a_verdict_is_reached(tables, level) -> None:
    a, b = tables
    c = sequential_score_compare(a, b, level=level)
    for look in c.trajectory:
        assert (look.low > 0) == (look.verdict == "b_better")
        assert (look.high < 0) == (look.verdict == "a_better")
        assert -1.0 <= look.low <= look.high <= 1.0
    assert (c.pvalue < 1 - level) == (c.verdict != "cant_tell")
    # Swapping A and B mirrors everything.
    m = sequential_score_compare(b, a, level=level)
    mirror = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}
    assert m.verdict == mirror[c.verdict] and m.decided_at == c.decided_at
    assert m.difference.low == pytest.approx(-c.difference.high, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=30), st.floats(-0.9, 0.9))
def test_the_b_better_evalue_falls_as_the_null_rises(diffs, null) -> None:
    lower = log_evalue_scores(diffs, null=null)[-1]
    higher = log_evalue_scores(diffs, null=min(0.95, null + 0.05))[-1]
    assert higher <= lower + 1e-12
    assert log_evalue_scores(diffs, null=null, direction=-1)[-1] <= (
        log_evalue_scores(diffs, null=min(0.95, null + 0.05), direction=-1)[-1] + 1e-12
    )


def test_the_interval_inverts_the_evalues_at_one_look() -> None:
    rng = np.random.default_rng(4)
    a = {f"c{i}": list(rng.random(15)) for i in range(4)}
    b = {f"c{i}": list(np.clip(rng.random(15) + 0.2, 0, 1)) for i in range(4)}
    c = sequential_score_compare(a, b, looks=[60])
    diffs = np.array([b[f"c{i}"][r] - a[f"c{i}"][r] for r in range(15) for i in range(4)])
    bound = math.log(40.0)
    low, high = c.difference.low, c.difference.high
    assert log_evalue_scores(diffs, null=low - 1e-6)[-1] >= bound
    assert log_evalue_scores(diffs, null=low + 1e-6)[-1] < bound
    assert log_evalue_scores(diffs, null=high + 1e-6, direction=-1)[-1] >= bound
    assert log_evalue_scores(diffs, null=high - 1e-6, direction=-1)[-1] < bound


def test_text_and_json_say_mean_score() -> None:
    a = {"x": [0.5] * 30, "y": [0.25] * 30}
    b = {"x": [0.75] * 30, "y": [0.5] * 30}
    c = sequential_score_compare(a, b)
    assert str(c).startswith("B better: +0.25 (")
    assert "(these cases, mean score)" in str(c) and "decides at 40" in str(c)
    doc = c.to_dict()
    assert doc["on"] == "score" and doc["verdict"] == "b_better"
    assert "+0.25 (" in c.trajectory_text()


def test_the_cases_like_these_claim_bets_on_case_means() -> None:
    a = {f"c{i}": [0.2] * 10 for i in range(12)}
    b = {f"c{i}": [0.9] * 10 for i in range(12)}
    c = sequential_score_compare(a, b, about="cases_like_these")
    assert c.verdict == "b_better" and c.about == "cases_like_these"
    assert c.difference.low > 0
    with pytest.raises(InvalidArgument, match="needs at least 2 cases"):
        sequential_score_compare({"x": [0.1]}, {"x": [0.2]}, about="cases_like_these")


@pytest.mark.parametrize(
    ("a", "b", "words"),
    [
        ({"x": [0.1, 1.5]}, {"x": [0.1, 0.2]}, r"scores_a\['x'\]\[1\]=1.5 must be a score"),
        ({"x": [0.1]}, {"x": [float("nan")]}, r"scores_b\['x'\]\[0\]=nan must be a score"),
        ({"x": [0.1]}, {"x": [True]}, r"scores_b\['x'\]\[0\]=True must be a score"),
        ({"x": [0.1]}, {"y": [0.1]}, "paired by \\(case, repeat\\)"),
        ({"x": []}, {"x": []}, r"scores_a\['x'\] is empty"),
        ({}, {"x": [0.1]}, "scores_a must map each case id"),
    ],
)
def test_bad_scores_are_refused_naming_the_argument(a, b, words) -> None:
    with pytest.raises(InvalidArgument, match=words):
        sequential_score_compare(a, b)


# --- validity under continuous monitoring (reduced; simulations/score_sequential.py) ---


def test_the_simulator_stops_where_the_comparison_decides() -> None:
    rng = np.random.default_rng(7)
    d = np.clip(rng.normal(0.15, 0.4, size=(8, 40)), -1, 1)
    stopped, verdict = score_crossings(d)
    for row, stop, v in zip(d, stopped, verdict, strict=True):
        # one case whose A scores 0.5 - d/2 and B 0.5 + d/2: differences d
        a, b = {"x": list(0.5 - row / 2)}, {"x": list(0.5 + row / 2)}
        c = sequential_score_compare(a, b, looks=list(range(1, 41)))
        assert v == {"b_better": 1, "a_better": -1, "cant_tell": 0}[c.verdict]
        assert stop == (c.decided_at if c.decided_at is not None else 40)


def test_the_simulator_stops_where_the_comparison_decides_both_sides() -> None:
    rng = np.random.default_rng(8)
    d = np.clip(rng.normal(-0.1, 0.5, size=(15, 30)), -1, 1)
    stopped, verdict = score_crossings(d, every=3)
    for row, stop, v in zip(d, stopped, verdict, strict=True):
        # three cases: pair t of the row is case t % 3 of round t // 3
        a = {f"c{k}": [0.5 - x / 2 for x in row[k::3]] for k in range(3)}
        b = {f"c{k}": [0.5 + x / 2 for x in row[k::3]] for k in range(3)}
        c = sequential_score_compare(a, b)
        assert v == {"b_better": 1, "a_better": -1, "cant_tell": 0}[c.verdict]
        assert stop == (c.decided_at if c.decided_at is not None else 30)


def test_a_false_b_better_stays_rare_looking_after_every_pair() -> None:
    # simulations/score_sequential.py: 0.4% or less in every setting at 20,000
    # experiments. Here 1,500 experiments of 300 pairs of Likert scores with A = B.
    rng = np.random.default_rng(11)
    levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    p = np.array([0.05, 0.1, 0.2, 0.35, 0.3])
    a = rng.choice(levels, p=p, size=(1500, 300))
    b = rng.choice(levels, p=p, size=(1500, 300))
    _, verdict = score_crossings(b - a)
    false_b = proportion_ci(int(np.sum(verdict == 1)), len(verdict), method="wilson")
    assert false_b.high <= 0.025  # nominal at most 2.5%, with the Monte Carlo margin


def test_a_false_b_better_stays_rare_when_cases_disagree_looking_after_every_round() -> None:
    # simulations/score_sequential.py: 0.83% (0.59% to 1.16%) at 2 cases, 0.25% at 10, with
    # 4,000 experiments. Here B is 0.1 better on half of 10 cases and 0.1 worse on the rest
    # (the mean over these cases is 0), 1,000 experiments of 30 rounds.
    rng = np.random.default_rng(12)
    experiments, rounds, cases = 1000, 30, 10
    mean = rng.uniform(0.6, 0.85, size=(experiments, 1, cases))
    mean_b = mean + np.where(np.arange(cases) % 2 == 0, 0.1, -0.1)
    a = rng.beta(4 * mean, 4 * (1 - mean), size=(experiments, rounds, cases))
    b = rng.beta(4 * mean_b, 4 * (1 - mean_b), size=(experiments, rounds, cases))
    _, verdict = score_crossings((b - a).reshape(experiments, -1), every=cases)
    false_b = proportion_ci(int(np.sum(verdict == 1)), experiments, method="wilson")
    assert false_b.high <= 0.025


def test_the_interval_covers_the_true_difference_at_every_look() -> None:
    # A uniform on [0, 0.8] and B on [0.2, 1], drawn apart: the true mean difference is 0.2,
    # and an interval at some look misses it in at most 5% of experiments (looks every pair).
    rng = np.random.default_rng(13)
    a = rng.uniform(0.0, 0.8, size=(800, 200))
    b = rng.uniform(0.2, 1.0, size=(800, 200))
    _, verdict = score_crossings(b - a, null=0.2)
    missed = proportion_ci(int(np.sum(verdict != 0)), 800, method="wilson")
    assert missed.high <= 0.05


# --- run --until-decided --on score ----------------------------------------------------


def _graded_run(out: Path, *, on: str = "score", max_runs: int = 30, seed: int = 0):
    cases = [Case(f"c{i}", "q", (covers("refund", "14 days", "receipt"),)) for i in range(3)]
    rng = random.Random(seed)

    def a(text: str) -> str:
        return rng.choice(["refund", "refund receipt", "nothing"])

    def b(text: str) -> str:
        return rng.choice(["refund 14 days", "refund receipt 14 days", "refund"])

    return run_until_decided(
        cases,
        [Variant("A", a), Variant("B", b)],
        max_runs=max_runs,
        out=out,
        on=on,
        progress=False,
        timeout=None,
    )


def test_until_decided_on_score_decides_on_mean_scores(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = _graded_run(out)
    assert result.status == "decided" and result.comparison is not None
    assert result.comparison.on == "score" and result.comparison.verdict == "b_better"
    res = read_results(out)
    assert res.manifest["until_decided"]["on"] == "score"
    assert [look["on"] for look in res.looks] == ["score"] * len(res.looks)
    assert all(look["started_at"] <= look["at"] for look in res.looks)
    # The looks are what the comparison of mean scores says of the file.
    again = sequential_score_results(res, "A", "B")
    assert [lk.evalue_b for lk in again.trajectory] == pytest.approx(
        [look["evalue_b"] for look in res.looks]
    )
    with pytest.raises(InvalidArgument, match="on='pass' differs from the run's 'score'"):
        run_until_decided(
            [Case("c0", "q", (covers("x"),))],
            [Variant("A", str), Variant("B", str)],
            max_runs=3,
            out=out,
            resume=True,
            progress=False,
        )


def test_until_decided_on_pass_records_no_on(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = _graded_run(out, on="pass", max_runs=3)
    assert result.comparison is not None and result.comparison.on == "pass"
    res = read_results(out)
    assert "on" not in res.manifest["until_decided"]
    assert all("on" not in look for look in res.looks)
    assert "on" not in result.comparison.to_dict()


def test_a_file_without_scores_is_refused_in_one_line(tmp_path: Path) -> None:
    from evalstats.running._checks import has_terms
    from evalstats.running._engine import run

    out = tmp_path / "r.jsonl"
    run(
        [Case("c", "q", (has_terms("q"),))],
        [Variant("A", str), Variant("B", str)],
        runs=2,
        out=out,
        progress=False,
        timeout=None,
    )
    with pytest.raises(InvalidArgument, match="no sample carries a score"):
        sequential_score_results(out, "A", "B")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--runs", "3", "--on", "score"], "--on goes with --until-decided"),
        (
            ["--until-decided", "--max-runs", "3", "--on", "score", "--planned-for", "0.7,0.9"],
            "--on score goes without it",
        ),
        (["--until-decided", "--max-runs", "3", "--on", "mean"], "--on: invalid choice"),
    ],
)
def test_on_bad_usage_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "r.jsonl"
    shop = ["--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]
    assert main(["run", "shop", *shop, "--out", str(out), "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_on_score_on_a_suite_without_scores_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    shop = ["--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]
    argv = ["run", "shop", *shop, "--until-decided", "--max-runs", "3", "--on", "score"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "no sample carries a score" in err and err.count("\n") == 1
    assert json.loads(out.read_text().splitlines()[0])["type"] == "manifest"


def test_cli_until_decided_on_score_with_a_python_graded_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "graded.py").write_text(
        "def words(answer):\n"
        "    found = [w in answer.lower() for w in ('order', 'refund', 'sorry', 'welcome')]\n"
        "    return sum(found) / 4\n"
    )
    shop = json.loads((Path(__file__).parent.parent / "cases" / "shop.json").read_text())
    suite = {
        "name": "graded shop",
        "cases": [
            {"id": c["id"], "prompt": c["prompt"], "checks": [{"python": "graded:words"}]}
            for c in shop["cases"]
        ],
    }
    (tmp_path / "graded.json").write_text(json.dumps(suite))
    out = tmp_path / "r.jsonl"
    shop_variants = ["--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]
    base = ["run", str(tmp_path / "graded.json"), *shop_variants, "--until-decided"]
    base += ["--max-runs", "4", "--no-progress"]
    assert main([*base, "--on", "score", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "anytime-valid (these cases, mean score)" in text
    res = read_results(out)
    assert res.manifest["until_decided"]["on"] == "score"
    assert res.looks and all(look["on"] == "score" for look in res.looks)
    # resuming with pass rates is refused in one line
    assert main([*base, "--resume", str(out)]) == 2
    assert "differs from the run's 'score'" in capsys.readouterr().err


def test_report_plots_draw_the_score_trajectory(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _graded_run(out, max_runs=6)
    figures = tmp_path / "figures"
    assert main(["report", str(out), "--plots", str(figures)]) == 0
    assert (figures / "sequential.png").stat().st_size > 1000


def test_a_file_and_its_tally_give_the_same_score_comparison(tmp_path: Path) -> None:
    from evalstats.reading._source import RunSource

    out = tmp_path / "r.jsonl"
    _graded_run(out, max_runs=5)
    from_file = sequential_score_results(read_results(out), "A", "B")
    from_tally = sequential_score_results(RunSource.open(out), "A", "B")
    assert from_file.to_dict() == from_tally.to_dict()


@pytest.mark.parametrize("levels", [None, 5])  # continuous scores; five levels
def test_both_ways_of_counting_give_the_evalues_of_the_pairs_so_far(levels) -> None:
    from evalstats.deciding._score_sequential import _Looks

    rng = np.random.default_rng(5)
    raw = rng.random((2, 15, 4))
    if levels:
        raw = np.round(raw * (levels - 1)) / (levels - 1)
    a = {f"c{i}": list(raw[0, :, i]) for i in range(4)}
    b = {f"c{i}": list(np.clip(raw[1, :, i] + 0.15, 0, 1)) for i in range(4)}
    diffs = np.array([b[f"c{i}"][r] - a[f"c{i}"][r] for r in range(15) for i in range(4)])
    points = np.arange(4, 61, 4)
    assert _Looks(diffs, points).by_counts == bool(levels)  # the path under test
    c = sequential_score_compare(a, b)
    plain = log_evalue_scores(diffs)[points - 1]
    assert [np.log(lk.evalue_b) for lk in c.trajectory] == pytest.approx(plain, abs=1e-10)
    # The first look's interval (no intersection yet) inverts the e-values, on its wide side.
    first = c.trajectory[0]
    bound = math.log(40.0)
    assert log_evalue_scores(diffs[:4], null=first.low)[-1] >= bound - 1e-9
    assert log_evalue_scores(diffs[:4], null=first.low + 1e-7)[-1] < bound
    assert log_evalue_scores(diffs[:4], null=first.high, direction=-1)[-1] >= bound - 1e-9
    assert log_evalue_scores(diffs[:4], null=first.high - 1e-7, direction=-1)[-1] < bound


@settings(max_examples=30, deadline=None)
@given(score_tables(), st.randoms(use_true_random=False))
def test_looks_after_rounds_do_not_depend_on_the_order_cases_are_listed_in(tables, rnd) -> None:
    # Fixed bets: a round's factors multiply in any order, so the e-values at the ends of
    # rounds, and the verdict and interval, are the same whatever the case order.
    a, b = tables
    order = list(a)
    rnd.shuffle(order)
    c = sequential_score_compare(a, b)
    d = sequential_score_compare({k: a[k] for k in order}, {k: b[k] for k in order})
    assert d.verdict == c.verdict and d.decided_at == c.decided_at
    assert [lk.evalue_b for lk in d.trajectory] == pytest.approx(
        [lk.evalue_b for lk in c.trajectory], rel=1e-9
    )
    assert d.difference.low == pytest.approx(c.difference.low, abs=1e-8)
    assert d.difference.high == pytest.approx(c.difference.high, abs=1e-8)
