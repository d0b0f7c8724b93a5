"""Invariants of the intervals and the decisions on them, as property tests.

What the older property tests leave unstated: that every interval widens
with its level (any two levels, not only 95% and 99%), that more passes for B
never move a difference interval down nor make "B better" less likely, that
the intervals about cases like these ignore the order the cases are listed
in (shuffled, not only reversed), that the same input gives the same output
(a seeded bootstrap too), and that the gates are monotone in their
thresholds and margins.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import results
from strategies import counts, one_more_pass, paired_cells, paired_runs

from evalstats.deciding import gate, non_inferiority, sequential_compare
from evalstats.stats import (
    cases_for_margin,
    clustered_mean_ci,
    clustered_paired_diff_ci,
    compare,
    compare_counts,
    compare_scores,
    diff_ci,
    paired_diff_ci,
    paired_diff_pvalue,
    ppi_diff,
    ppi_pass_rate,
    proportion_ci,
    score_mean_ci,
    score_non_inferiority,
)
from evalstats.stats._compare import UNPAIRED_METHODS
from evalstats.stats._intervals import DIFF_METHODS, PAIRED_METHODS, PROPORTION_METHODS
from evalstats.stats._scores import SCORE_METHODS

FAST = settings(max_examples=100, deadline=None)
SLOW = settings(max_examples=40, deadline=None)

#: Two levels, the first below the second.
level_pairs = st.tuples(
    st.floats(0.5, 0.995, allow_nan=False), st.floats(0.5, 0.995, allow_nan=False)
).map(sorted)

SWAP = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}
#: How favourable a verdict is to B.
RANK = {"a_better": -1, "cant_tell": 0, "b_better": 1}


def _limits(ci) -> tuple[float, float, float]:
    return ci.estimate, ci.low, ci.high


def _nested(narrow, wide) -> bool:
    return wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


# --- one rate, a difference, a paired difference ------------------------------------


@FAST
@given(counts(200), level_pairs, st.sampled_from(PROPORTION_METHODS))
def test_a_rate_s_interval_widens_with_its_level(kn, levels, method) -> None:
    k, n = kn
    lo, hi = levels
    assert _nested(
        proportion_ci(k, n, level=lo, method=method), proportion_ci(k, n, level=hi, method=method)
    )


@FAST
@given(counts(200), st.floats(0.5, 0.995), st.sampled_from(PROPORTION_METHODS))
def test_one_more_success_never_lowers_a_rate_s_limits(kn, level, method) -> None:
    k, n = kn
    if k == n:
        k -= 1
    fewer = proportion_ci(k, n, level=level, method=method)
    more = proportion_ci(k + 1, n, level=level, method=method)
    assert more.low >= fewer.low - 1e-12 and more.high >= fewer.high - 1e-12


@FAST
@given(counts(150), counts(150), level_pairs, st.sampled_from(DIFF_METHODS))
def test_a_difference_s_interval_widens_with_its_level(a, b, levels, method) -> None:
    lo, hi = levels
    narrow = diff_ci(*a, *b, level=lo, method=method)
    assert _nested(narrow, diff_ci(*a, *b, level=hi, method=method))


#: Wald's intervals collapse to a point where a rate is 0 or 1 (their docstrings
#: keep them for teaching): one more pass can widen such a point both ways.
NOT_WALD_DIFF = tuple(m for m in DIFF_METHODS if m != "wald")
NOT_WALD_PAIRED = tuple(m for m in PAIRED_METHODS if m != "wald")


@FAST
@given(counts(150), counts(150), st.floats(0.5, 0.995), st.sampled_from(NOT_WALD_DIFF))
def test_one_more_pass_for_b_never_lowers_the_difference(a, b, level, method) -> None:
    kb, nb = b
    if kb == nb:
        kb -= 1
    fewer = diff_ci(*a, kb, nb, level=level, method=method)
    more = diff_ci(*a, kb + 1, nb, level=level, method=method)
    assert more.low >= fewer.low - 1e-12 and more.high >= fewer.high - 1e-12
    ka, na = a
    if ka == 0:
        ka += 1
    # and one fewer pass for A likewise
    worse_a = diff_ci(ka, na, *b, level=level, method=method)
    better_a = diff_ci(ka - 1, na, *b, level=level, method=method)
    assert better_a.low >= worse_a.low - 1e-12 and better_a.high >= worse_a.high - 1e-12


@FAST
@given(paired_cells(200), level_pairs, st.sampled_from(PAIRED_METHODS))
def test_a_paired_interval_widens_with_its_level(cells, levels, method) -> None:
    lo, hi = levels
    narrow = paired_diff_ci(*cells, level=lo, method=method)
    assert _nested(narrow, paired_diff_ci(*cells, level=hi, method=method))


#: The moves of one pair that make B pass where it failed: (from cell, to cell)
#: among (both, only_a, only_b, neither).
B_PASSES_MORE = [(3, 2), (1, 0)]
#: ... and that make A fail where it passed.
A_FAILS_MORE = [(0, 2), (1, 3)]


@FAST
@given(
    paired_cells(200),
    st.floats(0.5, 0.995),
    st.sampled_from(NOT_WALD_PAIRED),
    st.sampled_from(B_PASSES_MORE + A_FAILS_MORE),
)
def test_a_pair_turned_towards_b_never_lowers_the_paired_interval(cells, level, method, move):
    src, dst = move
    if cells[src] == 0:
        return
    moved = list(cells)
    moved[src] -= 1
    moved[dst] += 1
    before = paired_diff_ci(*cells, level=level, method=method)
    after = paired_diff_ci(*moved, level=level, method=method)
    assert after.low >= before.low - 1e-12 and after.high >= before.high - 1e-12


@FAST
@given(paired_cells(200), st.floats(-0.9, 0.9), st.sampled_from(["tango", "tango_cc"]))
def test_one_sided_pvalues_are_monotone_in_delta0(cells, delta0, method) -> None:
    # P(B - A > delta0) is tested by alternative="greater": a larger delta0 is harder.
    p = paired_diff_pvalue(*cells, delta0=delta0, alternative="greater", method=method)
    q = paired_diff_pvalue(*cells, delta0=delta0 + 0.05, alternative="greater", method=method)
    assert q >= p - 1e-12


# --- compare_counts and compare ---------------------------------------------------


@FAST
@given(counts(150), counts(150), st.floats(0.5, 0.995), st.sampled_from(UNPAIRED_METHODS))
def test_one_more_pass_for_b_never_makes_compare_counts_less_favourable(a, b, level, method):
    kb, nb = b
    if kb == nb:
        kb -= 1
    fewer = compare_counts(*a, kb, nb, method=method, level=level)
    more = compare_counts(*a, kb + 1, nb, method=method, level=level)
    assert RANK[more.verdict] >= RANK[fewer.verdict]


@FAST
@given(counts(150), counts(150), level_pairs, st.sampled_from(UNPAIRED_METHODS))
def test_a_verdict_at_a_higher_level_is_one_at_a_lower_level(a, b, levels, method) -> None:
    lo, hi = levels
    strict = compare_counts(*a, *b, method=method, level=hi)
    if strict.verdict != "cant_tell":
        assert compare_counts(*a, *b, method=method, level=lo).verdict == strict.verdict


def _compare(a, b, about, level=0.95):
    return compare(a, b, about=about, level=level)


@SLOW
@given(paired_runs(min_cases=2), st.sampled_from(["these_cases", "cases_like_these"]), st.data())
def test_a_b_fail_turned_pass_never_makes_compare_less_favourable(runs, about, data) -> None:
    a, b = runs
    better = one_more_pass(b, data)
    before, after = _compare(a, b, about), _compare(a, better, about)
    assert RANK[after.verdict] >= RANK[before.verdict]
    assert after.difference.low >= before.difference.low - 1e-12


@SLOW
@given(paired_runs(min_cases=2), st.sampled_from(["these_cases", "cases_like_these"]), level_pairs)
def test_compare_s_verdict_at_a_higher_level_holds_at_a_lower_one(runs, about, levels) -> None:
    lo, hi = levels
    strict = _compare(*runs, about, level=hi)
    loose = _compare(*runs, about, level=lo)
    assert _nested(loose.difference, strict.difference)
    if strict.verdict != "cant_tell":
        assert loose.verdict == strict.verdict


@SLOW
@given(paired_runs(min_cases=2), st.sampled_from(["these_cases", "cases_like_these"]))
def test_compare_is_deterministic_and_symmetric(runs, about) -> None:
    a, b = runs
    first, again, back = _compare(a, b, about), _compare(a, b, about), _compare(b, a, about)
    assert first.to_dict() == again.to_dict()
    assert back.verdict == SWAP[first.verdict]
    d, e = first.difference, back.difference
    assert (e.estimate, e.low, e.high) == pytest.approx((-d.estimate, -d.high, -d.low), abs=1e-12)


# --- clustered intervals ----------------------------------------------------------


@st.composite
def clustered(draw, min_cases: int = 2, max_cases: int = 8, max_runs: int = 4):
    """Outcomes in [0, 1] with their case labels, cases listed in blocks."""
    value = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1))
    cases = draw(st.integers(min_cases, max_cases))
    blocks = [draw(st.lists(value, min_size=1, max_size=max_runs)) for _ in range(cases)]
    return blocks


def _flat(blocks):
    y = [v for blk in blocks for v in blk]
    g = [i for i, blk in enumerate(blocks) for _ in blk]
    return y, g


@SLOW
@given(clustered(), level_pairs, st.sampled_from(["auto", "cr2", "cr1", "betting"]))
def test_a_clustered_interval_widens_with_its_level(blocks, levels, method) -> None:
    lo, hi = levels
    y, g = _flat(blocks)
    narrow = clustered_mean_ci(y, g, level=lo, method=method)
    wide = clustered_mean_ci(y, g, level=hi, method=method)
    assert 0.0 <= wide.low <= wide.estimate <= wide.high <= 1.0
    assert _nested(narrow, wide)


@SLOW
@given(clustered(), clustered(), level_pairs, st.sampled_from(["auto", "cr2", "betting"]))
def test_a_clustered_paired_interval_widens_with_its_level(ba, bb, levels, method) -> None:
    lo, hi = levels
    ya, g = _flat(ba)
    yb = (list(_flat(bb)[0]) * (len(ya) // max(1, len(_flat(bb)[0])) + 1))[: len(ya)]
    narrow = clustered_paired_diff_ci(ya, yb, g, level=lo, method=method)
    wide = clustered_paired_diff_ci(ya, yb, g, level=hi, method=method)
    assert -1.0 <= wide.low <= wide.estimate <= wide.high <= 1.0
    assert _nested(narrow, wide)


@SLOW
@given(clustered(), st.randoms(use_true_random=False))
def test_the_betting_interval_ignores_any_listing_of_its_runs(blocks, rnd) -> None:
    y, g = _flat(blocks)
    want = clustered_mean_ci(y, g, method="betting").to_dict()
    order = list(range(len(y)))
    rnd.shuffle(order)
    got = clustered_mean_ci([y[i] for i in order], [g[i] for i in order], method="betting")
    assert got.to_dict() == want


@settings(max_examples=40, deadline=None)
@given(st.floats(0.02, 0.5), st.floats(0.02, 0.5), st.sampled_from([0.8, 0.9, 0.95]))
def test_a_wider_margin_never_takes_more_cases(m1, m2, level) -> None:
    small, large = sorted((m1, m2))
    need_small, need_large = cases_for_margin(small, level), cases_for_margin(large, level)
    if need_small is not None:
        assert need_large is not None and need_large <= need_small


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 0.5), level_pairs)
def test_a_higher_level_never_takes_fewer_cases(margin, levels) -> None:
    lo, hi = levels
    need_lo, need_hi = cases_for_margin(margin, lo), cases_for_margin(margin, hi)
    if need_hi is not None:
        assert need_lo is not None and need_lo <= need_hi


# --- mean scores ------------------------------------------------------------------

_SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
SCORE_CLAIMS = [(a, m) for a, ms in SCORE_METHODS.items() for m in ms]


@st.composite
def scored(draw, max_cases: int = 8, max_runs: int = 3):
    cases = draw(st.integers(1, max_cases))
    blocks = [draw(st.lists(_SCORES, min_size=1, max_size=max_runs)) for _ in range(cases)]
    return blocks


@SLOW
@given(scored(), level_pairs, st.sampled_from(SCORE_CLAIMS))
def test_a_score_interval_widens_with_its_level_and_is_deterministic(blocks, levels, claim):
    about, method = claim
    lo, hi = levels
    y, g = _flat(blocks)
    kw = {"about": about, "method": method, "resamples": 199, "seed": 3}
    narrow = score_mean_ci(y, g, level=lo, **kw)
    wide = score_mean_ci(y, g, level=hi, **kw)
    assert 0.0 <= wide.low <= wide.estimate <= wide.high <= 1.0
    if narrow.method == wide.method:
        # (with few cases the studentized bootstrap's limits can be undefined at
        # one level and not another, and the betting interval is given instead)
        assert _nested(narrow, wide)
    assert score_mean_ci(y, g, level=hi, **kw).to_dict() == wide.to_dict()


@SLOW
@given(scored(), st.randoms(use_true_random=False), st.sampled_from(SCORE_CLAIMS))
def test_a_score_interval_ignores_a_shuffled_listing(blocks, rnd, claim) -> None:
    about, method = claim
    y, g = _flat(blocks)
    kw = {"about": about, "method": method, "resamples": 199, "seed": 3}
    want = score_mean_ci(y, g, **kw)
    order = list(range(len(y)))
    rnd.shuffle(order)
    got = score_mean_ci([y[i] for i in order], [g[i] for i in order], **kw)
    assert _limits(got) == pytest.approx(_limits(want), abs=1e-12)


@st.composite
def paired_scores(draw, max_cases: int = 8, max_runs: int = 3):
    cases = draw(st.integers(1, max_cases))
    runs = draw(st.integers(1, max_runs))
    n = cases * runs
    a = draw(st.lists(_SCORES, min_size=n, max_size=n))
    b = draw(st.lists(_SCORES, min_size=n, max_size=n))
    return a, b, [c for c in range(cases) for _ in range(runs)]


COMPARE_CLAIMS = [
    (about, method)
    for about in ("these_cases", "cases_like_these")
    for method in ("auto", "t", "betting")
]


@SLOW
@given(paired_scores(), st.randoms(use_true_random=False), st.sampled_from(COMPARE_CLAIMS))
def test_a_score_comparison_ignores_the_listing_and_is_deterministic(data, rnd, claim) -> None:
    about, method = claim
    a, b, g = data
    want = compare_scores(a, b, g, about=about, method=method, resamples=199)
    again = compare_scores(a, b, g, about=about, method=method, resamples=199)
    assert again.to_dict() == want.to_dict()
    order = list(range(len(a)))
    rnd.shuffle(order)
    got = compare_scores(
        [a[i] for i in order],
        [b[i] for i in order],
        [g[i] for i in order],
        about=about,
        method=method,
        resamples=199,
    )
    assert got.verdict == want.verdict
    assert _limits(got.difference) == pytest.approx(_limits(want.difference), abs=1e-12)


@SLOW
@given(paired_scores(), level_pairs, st.sampled_from(COMPARE_CLAIMS))
def test_a_score_comparison_widens_with_its_level(data, levels, claim) -> None:
    about, method = claim
    lo, hi = levels
    narrow = compare_scores(*data, about=about, method=method, level=lo, resamples=199)
    wide = compare_scores(*data, about=about, method=method, level=hi, resamples=199)
    assert _nested(narrow.difference, wide.difference)
    if wide.verdict != "cant_tell":
        assert narrow.verdict == wide.verdict


@SLOW
@given(paired_scores(), st.floats(0.01, 0.5), st.floats(0.01, 0.5), st.sampled_from(COMPARE_CLAIMS))
def test_a_wider_score_margin_never_fails_what_a_narrower_one_passes(data, m1, m2, claim):
    about, method = claim
    small, large = sorted((m1, m2))
    kw = {"about": about, "method": method, "resamples": 199}
    tight = score_non_inferiority(*data, margin=small, **kw)
    loose = score_non_inferiority(*data, margin=large, **kw)
    if tight.passed:
        assert loose.passed


# --- gates and the sequential comparison ---------------------------------------------


@SLOW
@given(
    paired_runs(min_cases=2),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.sampled_from(["estimate", "lower-bound"]),
    st.sampled_from(["these_cases", "cases_like_these"]),
)
def test_a_higher_min_pass_never_passes_what_a_lower_one_fails(runs, t1, t2, on, about) -> None:
    a, b = runs
    low, high = sorted((t1, t2))
    res = results({"A": a, "B": b})
    strict = gate(res, variant="B", min_pass=high, on=on, about=about)
    if strict.passed:
        assert gate(res, variant="B", min_pass=low, on=on, about=about).passed


@SLOW
@given(
    paired_runs(min_cases=2),
    st.floats(0.01, 0.5),
    st.floats(0.01, 0.5),
    st.sampled_from(["these_cases", "cases_like_these"]),
)
def test_a_wider_margin_never_fails_what_a_narrower_one_passes(runs, m1, m2, about) -> None:
    a, b = runs
    small, large = sorted((m1, m2))
    res = results({"A": a, "B": b})
    tight = non_inferiority(res, "A", "B", margin=small, advice=False, about=about)
    loose = non_inferiority(res, "A", "B", margin=large, advice=False, about=about)
    order = {"worse": -1, "cant_tell": 0, "not_worse": 1}
    assert order[loose.verdict] >= order[tight.verdict]


@SLOW
@given(paired_runs(min_cases=2), st.sampled_from(["these_cases", "cases_like_these"]))
def test_the_sequential_comparison_is_deterministic_and_symmetric(runs, about) -> None:
    a, b = runs
    first = sequential_compare(a, b, about=about)
    again = sequential_compare(a, b, about=about)
    back = sequential_compare(b, a, about=about)
    assert (first.verdict, _limits(first.difference)) == (again.verdict, _limits(again.difference))
    assert back.verdict == SWAP[first.verdict]
    assert (back.evalue_a, back.evalue_b) == pytest.approx((first.evalue_b, first.evalue_a))
    d, e = first.difference, back.difference
    assert _limits(e) == pytest.approx((-d.estimate, -d.high, -d.low), abs=1e-12)
    assert -1.0 <= d.low <= d.estimate <= d.high <= 1.0


# --- prediction-powered rates -------------------------------------------------------


@st.composite
def reviewed(draw, max_n: int = 40):
    """Automatic verdicts, which samples were reviewed (at least ten), the person's."""
    n = draw(st.integers(10, max_n))
    auto = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    mask = [True] * 10 + draw(st.lists(st.booleans(), min_size=n - 10, max_size=n - 10))
    human = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return auto, mask, human


@FAST
@given(reviewed(), level_pairs, st.sampled_from(["ppi++", "wald"]))
def test_a_ppi_rate_widens_with_its_level_and_is_deterministic(data, levels, method) -> None:
    lo, hi = levels
    auto, mask, human = data
    human = [h if m else None for h, m in zip(human, mask, strict=True)]
    narrow = ppi_pass_rate(auto, mask, human, level=lo, method=method)
    wide = ppi_pass_rate(auto, mask, human, level=hi, method=method)
    assert _nested(narrow, wide)
    assert _limits(ppi_pass_rate(auto, mask, human, level=hi, method=method)) == _limits(wide)


@FAST
@given(reviewed(), reviewed(), level_pairs, st.sampled_from(["ppi++", "wald"]))
def test_a_ppi_difference_widens_with_its_level_and_swaps(da, db, levels, method) -> None:
    lo, hi = levels
    auto_a, mask, human_a = da
    n = len(mask)
    auto_b = (db[0] * n)[:n]
    human_b = (db[2] * n)[:n]
    narrow = ppi_diff(auto_a, auto_b, mask, human_a, human_b, level=lo, method=method)
    wide = ppi_diff(auto_a, auto_b, mask, human_a, human_b, level=hi, method=method)
    assert -1.0 <= wide.low <= wide.estimate <= wide.high <= 1.0
    assert _nested(narrow, wide)
    back = ppi_diff(auto_b, auto_a, mask, human_b, human_a, level=hi, method=method)
    assert _limits(back) == pytest.approx((-wide.estimate, -wide.high, -wide.low), abs=1e-12)


#: A t interval is not monotone in one score (raising one widens it when it
#: adds spread: B's 0.25, 0.5, 0.5 over A's zeros in one case shows +0.42 by
#: the paired t, and 0.75 in place of one 0.5 does not); the betting ones are.
@SLOW
@given(paired_scores(), st.data(), st.sampled_from(["these_cases", "cases_like_these"]))
def test_a_higher_score_for_b_never_makes_betting_less_favourable(data, draw, about):
    method = "betting"
    a, b, g = data
    i = draw.draw(st.sampled_from([i for i, v in enumerate(b) if v < 1.0] or [None]))
    if i is None:
        return
    raised = list(b)
    raised[i] = min(1.0, b[i] + 0.25)
    kw = {"about": about, "method": method, "resamples": 199}
    before = compare_scores(a, b, g, **kw)
    after = compare_scores(a, raised, g, **kw)
    assert RANK[after.verdict] >= RANK[before.verdict]
