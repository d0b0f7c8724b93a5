"""Invariants of the release policies on mean scores and of the unpaired
comparison, read from a run (evalstats.deciding), as property tests.

The statistics under them have their own (tests/test_interval_properties.py);
these hold the decisions a run gets: ``gate --min-score`` is monotone in its
floor, its lower-bound rule is the stricter one, and higher scores never fail
what lower ones passed; ``gate --no-regression-vs --score-margin`` is monotone
in its margin and in B's scores, and finds no difference between a variant and
itself;
``compare --method newcombe|ztest|overlap`` on a paired run (its samples as
independent ones) moves with B's passes, swaps with A and B, and keeps a
verdict at a lower level.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import manifest, results, sample
from strategies import one_more_pass, paired_runs

from evalstats.deciding import compare_results
from evalstats.deciding._score_gate import score_gate, score_no_regression
from evalstats.results._file import Results
from evalstats.stats._compare import UNPAIRED_METHODS

SLOW = settings(max_examples=40, deadline=None)
ABOUT = st.sampled_from(["these_cases", "cases_like_these"])
ON = st.sampled_from(["estimate", "lower-bound"])
SWAP = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}
RANK = {"a_better": -1, "cant_tell": 0, "b_better": 1}
#: Scores as graded checks give them: the ends, a few steps between, any number.
SCORE = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(0, 1))

level_pairs = st.tuples(st.floats(0.5, 0.995), st.floats(0.5, 0.995)).map(sorted)


@st.composite
def scored_runs(draw, min_cases: int = 2, max_cases: int = 8, max_runs: int = 3, top: float = 1):
    """Scores of A and B (each at most ``top``), case by case, equally many repeats."""
    runs = draw(st.integers(1, max_runs))
    cases = draw(st.integers(min_cases, max_cases))
    value = SCORE.map(lambda s: s * top)
    row = st.lists(value, min_size=runs, max_size=runs)
    return tuple({f"c{i}": draw(row) for i in range(cases)} for _ in "AB")


def _run(a: dict, b: dict) -> Results:
    """A finished run of A's and B's scores, paired and alternating; a sample passes
    when its score is above 0.5."""
    drawn = [
        sample(case, variant, r, score > 0.5, score=score)
        for variant, scores in (("A", a), ("B", b))
        for case, row in scores.items()
        for r, score in enumerate(row)
    ]
    runs = len(next(iter(a.values())))
    return Results(
        None, manifest(list(a), ["A", "B"], runs), tuple(drawn), {"status": "finished"}, ()
    )


def _raised(scores: dict, by: float) -> dict:
    return {case: [min(1.0, s + by) for s in row] for case, row in scores.items()}


# --- gate --min-score ---------------------------------------------------------------


@SLOW
@given(scored_runs(), st.floats(0, 1), st.floats(0, 1), ON, ABOUT)
def test_a_higher_min_score_never_passes_what_a_lower_one_fails(runs, t1, t2, on, about):
    run = _run(*runs)
    low, high = sorted((t1, t2))
    if score_gate(run, variant="B", min_score=high, on=on, about=about).passed:
        assert score_gate(run, variant="B", min_score=low, on=on, about=about).passed


@SLOW
@given(scored_runs(), st.floats(0, 1), ABOUT)
def test_the_lower_bound_rule_passes_only_what_the_estimate_rule_passes(runs, floor, about):
    run = _run(*runs)
    strict = score_gate(run, variant="B", min_score=floor, on="lower-bound", about=about)
    loose = score_gate(run, variant="B", min_score=floor, on="estimate", about=about)
    assert strict.score.low <= strict.score.estimate + 1e-12
    if strict.passed:
        assert loose.passed


@SLOW
@given(scored_runs(), st.floats(0.01, 0.5), st.floats(0, 1), ON, ABOUT)
def test_higher_scores_never_fail_a_min_score_gate_they_passed(runs, by, floor, on, about):
    a, b = runs
    before = score_gate(_run(a, b), variant="B", min_score=floor, on=on, about=about)
    after = score_gate(_run(a, _raised(b, by)), variant="B", min_score=floor, on=on, about=about)
    assert after.score.estimate >= before.score.estimate - 1e-12
    if before.passed:
        assert after.passed, (before, after)


# --- gate --no-regression-vs --score-margin -------------------------------------------


@SLOW
@given(scored_runs(), st.floats(0.01, 0.5), st.floats(0.01, 0.5), ABOUT)
def test_a_wider_score_margin_never_fails_a_run_a_narrower_one_passes(runs, m1, m2, about):
    run = _run(*runs)
    small, large = sorted((m1, m2))
    if score_no_regression(run, variant="B", vs="A", margin=small, about=about).passed:
        assert score_no_regression(run, variant="B", vs="A", margin=large, about=about).passed


@SLOW
@given(scored_runs(top=0.6), st.floats(0.01, 0.4), st.floats(0.01, 0.5), ABOUT)
def test_higher_scores_for_b_never_fail_a_no_regression_it_passed(runs, by, margin, about):
    a, b = runs  # B's scores at most 0.6, so raising them by at most 0.4 clips none
    before = score_no_regression(_run(a, b), variant="B", vs="A", margin=margin, about=about)
    raised = _run(a, _raised(b, by))
    after = score_no_regression(raised, variant="B", vs="A", margin=margin, about=about)
    if before.passed:
        assert after.passed, (before, after)


@SLOW
@given(scored_runs(), st.floats(0.01, 0.5), ABOUT)
def test_a_variant_against_itself_differs_by_nothing(runs, margin, about):
    # (Not that it passes: at a few pairs the interval about these cases is wide
    # whatever the differences are, and then the gate cannot tell.)
    a, _ = runs
    same = score_no_regression(_run(a, a), variant="B", vs="A", margin=margin, about=about)
    d = same.primary.difference
    assert d.estimate == pytest.approx(0, abs=1e-12)
    assert d.low <= 1e-12 and d.high >= -1e-12
    assert same.passed == (d.low > -margin)


# --- compare with an unpaired method --------------------------------------------------


def _unpaired(a, b, method, level=0.95, names=("A", "B")):
    run = results({"A": a, "B": b})
    return compare_results(run, *names, method=method, level=level).primary


@SLOW
@given(paired_runs(), st.sampled_from(UNPAIRED_METHODS), st.data())
def test_a_b_fail_turned_pass_never_makes_an_unpaired_compare_less_favourable(runs, method, data):
    a, b = runs
    better = one_more_pass(b, data)
    before, after = _unpaired(a, b, method), _unpaired(a, better, method)
    assert RANK[after.verdict] >= RANK[before.verdict]
    assert after.difference.estimate > before.difference.estimate
    if method != "overlap":  # overlap's difference interval is Newcombe's, its verdict not
        assert after.difference.low >= before.difference.low - 1e-12


@SLOW
@given(paired_runs(), st.sampled_from(UNPAIRED_METHODS))
def test_an_unpaired_compare_swaps_with_a_and_b(runs, method):
    there = _unpaired(*runs, method)
    back = _unpaired(*runs, method, names=("B", "A"))
    assert back.verdict == SWAP[there.verdict]
    d, e = there.difference, back.difference
    assert (e.estimate, e.low, e.high) == pytest.approx((-d.estimate, -d.high, -d.low), abs=1e-12)


@SLOW
@given(paired_runs(), st.sampled_from(UNPAIRED_METHODS), level_pairs)
def test_an_unpaired_verdict_at_a_higher_level_holds_at_a_lower_one(runs, method, levels):
    lo, hi = levels
    strict, loose = _unpaired(*runs, method, level=hi), _unpaired(*runs, method, level=lo)
    assert loose.difference.low >= strict.difference.low - 1e-12
    assert loose.difference.high <= strict.difference.high + 1e-12
    if strict.verdict != "cant_tell":
        assert loose.verdict == strict.verdict
