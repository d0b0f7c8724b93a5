"""Invariants of evalstats.stats that the other property tests leave unstated.

The binomial helpers (the pmf sums to 1, the tail is its complement, McNemar's
p-value is symmetric, vectorised as its scalar twin computes it, and its
thresholds are exactly where it drops below the level), the exact coverage of
a rate's interval (vectorised as scalar, mirrored at 1 - p), the detectable
difference (monotone in power and level, mirrored with A and B), the
multiplicity adjustments (they follow the p-values wherever they are listed
and ignore NaN), what an exact test can attain (symmetric in its two sides,
smaller with more runs), the fixed-bet and betting limits and p-values (order
free, monotone), the sign-flip p-value, the clustered estimate (the mean
over runs; a variant against itself gains nothing), the score test's interval of a
difference (A and B swapped mirror it to the last bit), the one-sided paired
p-values (swapped with A and B), the comparisons' per-case rows (they follow
their cases in any listing and swap with A and B), the score gate (read off
the comparison's own interval), the corrected rates (order free, mirrored,
Wilson's or Newcombe's when the judge tells nothing) and the default claim.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import (
    attained_families,
    clustered_outcomes,
    counts,
    paired_cells,
    paired_runs,
    reviewed_samples,
)

from evalstats.stats import (
    clustered_mean_ci,
    clustered_paired_diff_ci,
    compare,
    compare_scores,
    detectable_difference,
    paired_diff_ci,
    paired_diff_pvalue,
    ppi_diff,
    ppi_pass_rate,
    proportion_ci,
    score_non_inferiority,
)
from evalstats.stats._binomial import (
    binom_pmf,
    binom_sf,
    mcnemar_pvalue,
    mcnemar_pvalue_exact,
    mcnemar_thresholds,
)
from evalstats.stats._claims import MIN_CASES, default_about
from evalstats.stats._clustered_pvalues import betting_pvalue
from evalstats.stats._compare import ADJUST_METHODS, UNPAIRED_METHODS, adjust_pvalues
from evalstats.stats._discrete import (
    adjust_discrete,
    fisher_attainable,
    flag_power,
    repeats_to_flag,
    smallest_pvalue,
)
from evalstats.stats._intervals import PROPORTION_METHODS, coverage
from evalstats.stats._score_compare import sign_flip_pvalue
from evalstats.stats._score_diff import score_diff_interval, score_diff_z
from evalstats.stats._scores import fixed_bet_limits

FAST = settings(max_examples=100, deadline=None)
SLOW = settings(max_examples=30, deadline=None)

#: Two levels, the first below the second.
level_pairs = st.tuples(st.floats(0.5, 0.995), st.floats(0.5, 0.995)).map(sorted)
#: Scores as graded checks give them: the ends, a few steps between, any number.
SCORES = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(0, 1))
SWAP = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}


def _limits(ci) -> tuple[float, float, float]:
    return ci.estimate, ci.low, ci.high


def _mirrored(ci) -> tuple[float, float, float]:
    """The limits of a difference with A and B swapped: negated and exchanged."""
    return -ci.estimate, -ci.high, -ci.low


# --- the binomial helpers ------------------------------------------------------------


@FAST
@given(st.integers(0, 300), st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(0, 1)))
def test_the_binomial_law_sums_to_one_and_its_tail_is_the_rest(n, p) -> None:
    k = np.arange(n + 1)
    pmf = binom_pmf(k, n, p)
    assert (pmf >= 0).all() and pmf.sum() == pytest.approx(1.0, abs=1e-9)
    # P(X > k) = 1 - P(X <= k), falling in k, 1 below 0 and 0 from n on
    sf = binom_sf(np.arange(-2, n + 3), np.full(n + 5, n), p)
    assert sf[:2].tolist() == [1.0, 1.0] and sf[-3:].tolist() == [0.0, 0.0, 0.0]
    assert np.all(np.diff(sf) <= 1e-15)
    np.testing.assert_allclose(sf[2:-2], 1.0 - np.cumsum(pmf), atol=1e-9)


@FAST
@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_s_pvalue_is_symmetric_and_its_scalar_twin_agrees(only_a, only_b) -> None:
    p = float(mcnemar_pvalue(only_a, only_b))
    assert 0.0 < p <= 1.0
    # which variant won the discordant pairs does not matter to a two-sided test
    assert float(mcnemar_pvalue(only_b, only_a)) == p
    assert mcnemar_pvalue_exact(only_b, only_a) == mcnemar_pvalue_exact(only_a, only_b)
    # the integer path computes the same p-value (to rounding, where it does not underflow)
    assert mcnemar_pvalue_exact(only_a, only_b) == pytest.approx(p, rel=1e-9, abs=1e-300)


@FAST
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200)), min_size=1, max_size=12))
def test_mcnemar_s_vectorised_pvalue_is_its_scalar_one(pairs) -> None:
    a, b = (np.array(x) for x in zip(*pairs, strict=True))
    got = mcnemar_pvalue(a, b)
    assert got.tolist() == [float(mcnemar_pvalue(x, y)) for x, y in pairs]


@FAST
@given(st.integers(0, 300), st.floats(0.5, 0.999))
def test_mcnemar_s_pvalue_falls_as_the_split_moves_away_from_even(d, level) -> None:
    # With d discordant pairs, the further only_b is from d / 2 the smaller p;
    # and B is better exactly from the threshold on (its docstring's promise).
    only_b = np.arange(d + 1)
    p = mcnemar_pvalue(d - only_b, only_b)
    upper = p[only_b * 2 >= d]
    assert np.all(np.diff(upper) <= 1e-15)
    threshold = int(mcnemar_thresholds(d, level))
    wins = (only_b * 2 > d) & (p < 1.0 - level)
    assert wins.tolist() == (only_b >= threshold).tolist()


@FAST
@given(st.lists(st.integers(0, 150), min_size=1, max_size=8), level_pairs)
def test_a_higher_level_never_lowers_mcnemar_s_threshold(ds, levels) -> None:
    lo, hi = levels
    d = np.array(ds)
    loose, strict = mcnemar_thresholds(d, lo), mcnemar_thresholds(d, hi)
    assert np.all(strict >= loose)
    assert loose.tolist() == [int(mcnemar_thresholds(x, lo)) for x in ds]


# --- exact coverage --------------------------------------------------------------------


@FAST
@given(
    st.sampled_from(PROPORTION_METHODS),
    st.integers(1, 80),
    st.lists(st.floats(0, 1), min_size=1, max_size=6),
    st.floats(0.5, 0.99),
)
def test_coverage_is_a_probability_vectorised_as_scalar_and_mirrored(method, n, ps, level):
    got = coverage(method, n, ps, level=level)
    assert ((got >= 0.0) & (got <= 1.0 + 1e-12)).all()
    assert got.tolist() == [coverage(method, n, p, level=level) for p in ps]
    # every method's interval mirrors at k -> n - k, so its coverage mirrors at
    # p -> 1 - p (where 1 - p is exact: 1 - 1e-300 is 1, which the ends cover)
    exact = [i for i, p in enumerate(ps) if 1.0 - (1.0 - p) == p]
    back = coverage(method, n, [1.0 - ps[i] for i in exact], level=level)
    np.testing.assert_allclose(back, got[exact], atol=1e-9)


# --- the detectable difference ----------------------------------------------------------


@SLOW
@given(
    st.integers(1, 60),
    st.integers(1, 60),
    st.floats(0, 1),
    st.sampled_from(UNPAIRED_METHODS),
    level_pairs,
    st.tuples(st.floats(0.5, 0.95), st.floats(0.5, 0.95)).map(sorted),
)
def test_detectable_difference_grows_with_power_and_level(na, nb, rate, method, levels, powers):
    # A stricter rule or a higher power can only ask for a larger difference
    # (NaN, "none is enough", being the largest).
    def d(level, power):
        found = detectable_difference(na, nb, rate=rate, method=method, level=level, power=power)
        return math.inf if math.isnan(found) else found

    lo, hi = levels
    weak, strong = powers
    base = d(lo, weak)
    assert base >= 0.0
    assert d(lo, strong) >= base
    assert d(hi, weak) >= base


@SLOW
@given(
    st.integers(1, 200),
    st.floats(0, 1),
    level_pairs,
    st.tuples(st.floats(0.5, 0.95), st.floats(0.5, 0.95)).map(sorted),
)
def test_the_paired_detectable_difference_grows_with_power_and_level(pairs, disc, levels, powers):
    def d(level, power):
        found = detectable_difference(
            pairs, method="mcnemar", discordance=disc, level=level, power=power
        )
        return math.inf if math.isnan(found) else found

    lo, hi = levels
    weak, strong = powers
    assert d(lo, strong) >= d(lo, weak) and d(hi, weak) >= d(lo, weak)


@SLOW
@given(st.integers(1, 60), st.integers(1, 60), st.floats(0, 1), st.sampled_from(UNPAIRED_METHODS))
def test_detectable_difference_mirrors_with_a_and_b(na, nb, rate, method) -> None:
    # Every unpaired rule is symmetric in A and B and in passes and fails, so
    # B ahead by d around `rate` is as detectable as A's failures ahead by d
    # around 1 - rate: detectable(na, nb, rate) = detectable(nb, na, 1 - rate).
    there = detectable_difference(na, nb, rate=rate, method=method)
    back = detectable_difference(nb, na, rate=1.0 - rate, method=method)
    if math.isnan(there):
        assert math.isnan(back)
    else:
        assert back == pytest.approx(there, abs=1e-5)


# --- multiplicity adjustments and what exact tests attain --------------------------------


@FAST
@given(
    st.lists(st.one_of(st.floats(0, 1), st.just(math.nan)), min_size=1, max_size=10),
    st.randoms(use_true_random=False),
)
def test_holm_and_bonferroni_follow_the_pvalues_wherever_they_are_listed(p, rnd) -> None:
    raw = np.array(p)
    ok = ~np.isnan(raw)
    order = list(range(len(p)))
    rnd.shuffle(order)
    holm = adjust_pvalues(p, method="holm")
    bonf = adjust_pvalues(p, method="bonferroni")
    assert np.array_equal(np.isnan(holm), ~ok) and np.array_equal(np.isnan(bonf), ~ok)
    # raw <= Holm <= Bonferroni <= 1, and Holm keeps the raw p-values' order
    assert (raw[ok] <= holm[ok] + 1e-15).all() and (holm[ok] <= bonf[ok] + 1e-15).all()
    assert (bonf[ok] <= 1.0).all()
    by_raw = np.argsort(raw[ok], kind="stable")
    assert (np.diff(holm[ok][by_raw]) >= -1e-15).all()
    for method, adjusted in (("holm", holm), ("bonferroni", bonf)):
        listed = adjust_pvalues([p[i] for i in order], method=method)
        np.testing.assert_array_equal(listed, adjusted[order])
        # a NaN (a case not tested) counts for nothing
        np.testing.assert_array_equal(adjust_pvalues(raw[ok], method=method), adjusted[ok])


@FAST
@given(attained_families(max_size=7), st.randoms(use_true_random=False))
def test_the_discrete_adjustments_follow_the_pvalues_wherever_they_are_listed(family, rnd):
    # A step-down that broke ties by position, or read the sets out of step
    # with the p-values, would move a case's adjusted p-value with its place.
    p, sets = family
    order = list(range(len(p)))
    rnd.shuffle(order)
    for method in ("discrete_holm", "tarone"):
        want = adjust_discrete(p, sets, method=method)
        got = adjust_discrete([p[i] for i in order], [sets[i] for i in order], method=method)
        np.testing.assert_allclose(got, want[order], rtol=1e-12, atol=0)
        with_gap = adjust_discrete([*p, math.nan], [*sets, None], method=method)
        assert math.isnan(with_gap[-1])
        np.testing.assert_allclose(with_gap[:-1], want, rtol=1e-12, atol=0)


@FAST
@given(st.integers(1, 12), st.integers(1, 12), st.data())
def test_fisher_s_attainable_values_ignore_which_side_is_which(na, nb, data) -> None:
    passes = data.draw(st.integers(0, na + nb))
    values = fisher_attainable(na, nb, passes)
    assert values[-1] == pytest.approx(1.0) and values[0] > 0.0
    assert (np.diff(values) > 0).all()
    # the same tables with A and B swapped, or passes and fails swapped
    np.testing.assert_allclose(fisher_attainable(nb, na, passes), values, rtol=1e-9)
    np.testing.assert_allclose(fisher_attainable(na, nb, na + nb - passes), values, rtol=1e-9)


@FAST
@given(st.integers(0, 30), st.integers(0, 30))
def test_more_runs_never_raise_the_smallest_attainable_pvalue(na, nb) -> None:
    unpaired = smallest_pvalue(na, nb, paired=False)
    assert 0.0 < unpaired <= 1.0
    assert smallest_pvalue(nb, na, paired=False) == pytest.approx(unpaired, rel=1e-12)
    assert smallest_pvalue(na + 1, nb, paired=False) <= unpaired * (1 + 1e-12)
    assert smallest_pvalue(na + 1, na + 1, paired=True) <= smallest_pvalue(na, na, paired=True)


@SLOW
@given(
    st.integers(1, 25),
    st.tuples(st.floats(1e-4, 0.2), st.floats(1e-4, 0.2)).map(sorted),
    st.booleans(),
)
def test_flag_power_is_a_probability_rising_with_its_threshold(repeats, thresholds, paired):
    small, large = thresholds
    low = flag_power(repeats, small, paired=paired)
    assert 0.0 <= low <= 1.0 + 1e-12
    assert flag_power(repeats, large, paired=paired) >= low - 1e-12


@settings(max_examples=15, deadline=None)
@given(st.tuples(st.integers(1, 40), st.integers(1, 40)).map(sorted), st.booleans())
def test_more_cases_never_take_fewer_repeats_to_flag_one(cases, paired) -> None:
    # Among more cases the adjusted threshold is lower, so every design that
    # usually flags the case among more cases does among fewer.
    few, many = cases
    need_few = repeats_to_flag(few, level=0.95, paired=paired, adjusted=True)
    need_many = repeats_to_flag(many, level=0.95, paired=paired, adjusted=True)
    if need_many is not None:
        assert need_few is not None and need_few <= need_many


# --- betting and fixed-bet limits and p-values ------------------------------------------


@st.composite
def score_rows(draw, max_rows: int = 3, max_size: int = 12) -> np.ndarray:
    """Rows of equally many values in [0, 1]."""
    size = draw(st.integers(1, max_size))
    rows = draw(st.integers(1, max_rows))
    row = st.lists(SCORES, min_size=size, max_size=size)
    return np.array([draw(row) for _ in range(rows)])


@FAST
@given(score_rows(), st.floats(0.5, 0.99), st.randoms(use_true_random=False))
def test_fixed_bet_limits_ignore_the_order_and_each_row_is_its_own(x, level, rnd) -> None:
    low, high = fixed_bet_limits(x, level)
    mean = x.mean(axis=-1)
    assert ((low >= 0.0) & (low <= mean) & (mean <= high) & (high <= 1.0)).all()
    order = list(range(x.shape[-1]))
    rnd.shuffle(order)
    shuffled = fixed_bet_limits(x[:, order], level)
    np.testing.assert_allclose(shuffled[0], low, atol=1e-12)
    np.testing.assert_allclose(shuffled[1], high, atol=1e-12)
    for i, row in enumerate(x):
        alone = fixed_bet_limits(row[None, :], level)
        assert (float(alone[0][0]), float(alone[1][0])) == (low[i], high[i])


@FAST
@given(score_rows(max_rows=1), st.floats(0.5, 0.99), st.data())
def test_a_higher_value_never_lowers_the_fixed_bet_limits(x, level, data) -> None:
    # Every factor 1 + lambda (x_i - m) rises with x_i: the capital, and so
    # both limits, can only rise with a value.
    i = data.draw(st.integers(0, x.shape[-1] - 1))
    raised = x.copy()
    raised[0, i] = data.draw(st.floats(float(x[0, i]), 1.0))
    low, high = fixed_bet_limits(x, level)
    rlow, rhigh = fixed_bet_limits(raised, level)
    assert rlow[0] >= low[0] - 1e-12 and rhigh[0] >= high[0] - 1e-12


@FAST
@given(score_rows(max_rows=1), st.floats(0.5, 0.99))
def test_fixed_bet_limits_mirror_at_one_minus_the_values(x, level) -> None:
    low, high = fixed_bet_limits(x, level)
    mlow, mhigh = fixed_bet_limits(1.0 - x, level)
    assert (float(mlow[0]), float(mhigh[0])) == pytest.approx(
        (1.0 - float(high[0]), 1.0 - float(low[0])), abs=1e-9
    )


@FAST
@given(
    score_rows(max_size=10),
    st.tuples(st.floats(0, 0.99), st.floats(0, 0.99)).map(sorted),
    st.floats(0.5, 0.99),
    st.randoms(use_true_random=False),
)
def test_the_betting_pvalue_ignores_the_order_and_rises_with_the_null(x, nulls, level, rnd):
    lower_null, higher_null = nulls
    p = betting_pvalue(x, lower_null, level=level)
    assert ((p > 0.0) & (p <= 1.0)).all()
    order = list(range(x.shape[-1]))
    rnd.shuffle(order)
    np.testing.assert_array_equal(betting_pvalue(x[:, order], lower_null, level=level), p)
    # a larger null mean is harder to reject: its p-value is no smaller
    assert (betting_pvalue(x, higher_null, level=level) >= p * (1 - 1e-12)).all()
    for i, row in enumerate(x):
        assert betting_pvalue(row, lower_null, level=level) == p[i]


@FAST
@given(st.lists(SCORES.map(lambda s: 2 * s - 1), min_size=1, max_size=12))
def test_the_sign_flip_pvalue_ignores_signs_and_order_and_keeps_its_floor(d) -> None:
    p = sign_flip_pvalue(d)
    assert 0.0 < p <= 1.0
    assert sign_flip_pvalue([-x for x in d]) == p
    assert sign_flip_pvalue(d[::-1]) == p
    if any(d):
        assert p >= 2.0 / 2 ** len(d) - 1e-15
    else:
        assert p == 1.0


@SLOW
@given(clustered_outcomes(), st.sampled_from(["auto", "cr2", "cr1", "betting"]))
def test_a_clustered_estimate_is_the_mean_over_runs_and_one_case_says_nothing(data, method):
    # The mean over all runs, not the mean of the case means (which differ when
    # cases have unequal runs); one case gives the whole range.
    y, g = data
    ci = clustered_mean_ci(y, g, method=method)
    assert ci.estimate == pytest.approx(float(np.mean(y)), abs=1e-12)
    assert ci.clusters == len(set(g))
    if ci.clusters == 1:
        assert (ci.low, ci.high) == (0.0, 1.0)
    # a variant paired with itself gains nothing, and its interval holds 0
    same = clustered_paired_diff_ci(y, y, g, method=method)
    assert same.estimate == 0.0 and same.low <= 0.0 <= same.high
    assert same.clusters == ci.clusters


# --- the score test of an unpaired difference ---------------------------------------------


@FAST
@given(counts(150), counts(150), st.floats(0.5, 0.995))
def test_the_score_interval_of_a_difference_mirrors_with_a_and_b(a, b, level) -> None:
    # its docstring: the high limit is the low one of A - B, "so that swapping A
    # and B mirrors the interval to the last bit"
    est, low, high = (float(x) for x in score_diff_interval(*a, *b, level=level))
    back = tuple(float(x) for x in score_diff_interval(*b, *a, level=level))
    assert back == (-est, -high, -low)
    # and the statistic swaps sign with the hypothesised difference
    d = 0.5 * (low + high)
    assert float(score_diff_z(*b, *a, -d)) == pytest.approx(
        -float(score_diff_z(*a, *b, d)), rel=1e-9, abs=1e-9
    )


# --- paired p-values ------------------------------------------------------------------------


@FAST
@given(paired_cells(200), st.floats(-0.95, 0.95), st.sampled_from(["tango_cc", "tango"]))
def test_one_sided_paired_pvalues_swap_with_a_and_b(cells, delta0, method) -> None:
    # B ahead of A by more than delta0 is A ahead of B by less than -delta0.
    both, only_a, only_b, neither = cells
    swapped = (both, only_b, only_a, neither)
    greater = paired_diff_pvalue(*cells, delta0=delta0, alternative="greater", method=method)
    less = paired_diff_pvalue(*swapped, delta0=-delta0, alternative="less", method=method)
    assert less == pytest.approx(greater, rel=1e-12, abs=1e-300)
    two = paired_diff_pvalue(*cells, delta0=delta0, method=method)
    assert two == pytest.approx(min(1.0, 2.0 * min(greater, 1.0 - greater)), rel=1e-9, abs=1e-15)


@FAST
@given(
    st.lists(paired_cells(120), min_size=1, max_size=6),
    st.floats(-0.9, 0.9),
    st.sampled_from(["two-sided", "greater", "less"]),
)
def test_paired_pvalues_of_many_tables_are_each_table_s_own(tables, delta0, alternative):
    cells = [np.array(c) for c in zip(*tables, strict=True)]
    got = paired_diff_pvalue(*cells, delta0=delta0, alternative=alternative)
    one_by_one = [paired_diff_pvalue(*t, delta0=delta0, alternative=alternative) for t in tables]
    # (a single table's tail comes from math.erfc, an array's from scipy's ndtr)
    np.testing.assert_allclose(got, one_by_one, rtol=1e-12, atol=1e-300)


# --- a comparison's per-case rows -----------------------------------------------------------

PAIRED_CLAIMS = [("mcnemar", a) for a in ADJUST_METHODS] + [
    ("clustered", "discrete_holm"),
    ("newcombe", "discrete_holm"),
    ("newcombe", "holm"),
]


def _rows(comparison) -> dict[str, dict]:
    return {row.case: row.to_dict() for row in comparison.cases}


@SLOW
@given(
    paired_runs(min_cases=2, max_cases=8, max_runs=4),
    st.sampled_from(PAIRED_CLAIMS),
    st.randoms(use_true_random=False),
)
def test_a_comparison_and_its_rows_ignore_how_cases_and_pairs_are_listed(runs, claim, rnd):
    # The cases in another order and each case's (A, B) pairs in another
    # order: the verdict, the interval, the p-value and every case's row and
    # flag stay the same (a flag adjusted by position would move).
    method, adjust = claim
    a, b = runs
    want = compare(a, b, method=method, adjust=adjust)
    cases = list(a)
    rnd.shuffle(cases)
    repeats = len(a[cases[0]])
    la, lb = {}, {}
    for case in cases:
        order = list(range(repeats))
        rnd.shuffle(order)
        la[case] = [a[case][i] for i in order]
        lb[case] = [b[case][i] for i in order]
    got = compare(la, lb, method=method, adjust=adjust)
    assert got.verdict == want.verdict and got.pvalue == want.pvalue
    assert got.difference.to_dict() == want.difference.to_dict()
    assert got.detectable == want.detectable or (
        got.detectable is not None and math.isnan(got.detectable) and math.isnan(want.detectable)
    )
    assert _rows(got) == _rows(want)


@SLOW
@given(paired_runs(min_cases=2, max_cases=8, max_runs=4), st.sampled_from(PAIRED_CLAIMS))
def test_a_comparison_s_rows_swap_with_a_and_b(runs, claim) -> None:
    method, adjust = claim
    a, b = runs
    there = compare(a, b, method=method, adjust=adjust)
    back = compare(b, a, method=method, adjust=adjust)
    alpha = 1.0 - there.level
    for row in there.cases:
        other = next(r for r in back.cases if r.case == row.case)
        assert (other.passes_a, other.passes_b) == (row.passes_b, row.passes_a)
        assert _limits(other.difference) == pytest.approx(_mirrored(row.difference), abs=1e-12)
        assert other.pvalue == pytest.approx(row.pvalue, rel=1e-9, nan_ok=True)
        assert other.adjusted_pvalue == pytest.approx(row.adjusted_pvalue, rel=1e-9, nan_ok=True)
        if abs(row.adjusted_pvalue - alpha) > 1e-9:
            assert (other.worse, other.better) == (row.better, row.worse)


# --- mean scores: rows and the gate -----------------------------------------------------------


@st.composite
def paired_scores(draw, max_cases: int = 8, max_runs: int = 3):
    """Scores of A and B pair by pair, with the case of each pair."""
    cases = draw(st.integers(1, max_cases))
    runs = draw(st.integers(1, max_runs))
    n = cases * runs
    a = draw(st.lists(SCORES, min_size=n, max_size=n))
    b = draw(st.lists(SCORES, min_size=n, max_size=n))
    return a, b, [f"c{c}" for c in range(cases) for _ in range(runs)]


SCORE_CLAIMS = [
    (about, method) for about in ("these_cases", "cases_like_these") for method in ("t", "betting")
]


@SLOW
@given(paired_scores(), st.sampled_from(SCORE_CLAIMS))
def test_a_score_comparison_s_rows_swap_with_a_and_b(data, claim) -> None:
    about, method = claim
    a, b, g = data
    there = compare_scores(a, b, g, about=about, method=method)
    back = compare_scores(b, a, g, about=about, method=method)
    assert back.verdict == SWAP[there.verdict]
    assert [r.case for r in back.cases] == [r.case for r in there.cases]
    for row, other in zip(there.cases, back.cases, strict=True):
        # a case's sign-flip test is two-sided: it ignores which variant gained
        assert (other.pvalue, other.adjusted_pvalue) == (row.pvalue, row.adjusted_pvalue)
        assert (other.worse, other.better) == (row.better, row.worse)


@SLOW
@given(paired_scores(), st.floats(0.01, 0.5), st.sampled_from(SCORE_CLAIMS), st.floats(0.8, 0.99))
def test_the_score_gate_reads_the_comparison_s_own_interval(data, margin, claim, level) -> None:
    # "the lower limit of the same interval decides": the gate's interval is the
    # comparison's, and it passes exactly when that lower limit clears -margin.
    about, method = claim
    kw = {"about": about, "method": method, "level": level}
    gate = score_non_inferiority(*data, margin=margin, **kw)
    assert gate.difference.to_dict() == compare_scores(*data, **kw).difference.to_dict()
    assert gate.passed == (gate.difference.low > -margin)


# --- rates corrected by a reviewed subset -------------------------------------------------------


@FAST
@given(reviewed_samples(), st.randoms(use_true_random=False), st.sampled_from(["ppi++", "wald"]))
def test_a_corrected_rate_ignores_the_order_of_the_samples(data, rnd, method) -> None:
    # A human verdict read against the wrong sample would change with the order.
    auto, mask, human = data
    want = ppi_pass_rate(auto, mask, human, method=method)
    order = list(range(len(auto)))
    rnd.shuffle(order)
    got = ppi_pass_rate(
        [auto[i] for i in order], [mask[i] for i in order], [human[i] for i in order],
        method=method,
    )  # fmt: skip
    assert _limits(got) == pytest.approx(_limits(want), abs=1e-12)


@FAST
@given(reviewed_samples(), st.sampled_from(["ppi++", "wald"]), st.floats(0.5, 0.99))
def test_a_corrected_rate_mirrors_when_every_verdict_is_turned(data, method, level) -> None:
    # Passes and fails play the same part: turning every verdict, the judge's
    # and the person's, turns the rate into 1 - rate and mirrors its interval.
    auto, mask, human = data
    ci = ppi_pass_rate(auto, mask, human, method=method, level=level)
    turned = ppi_pass_rate(
        [not x for x in auto], mask, [not x for x in human], method=method, level=level
    )
    assert _limits(turned) == pytest.approx((1 - ci.estimate, 1 - ci.high, 1 - ci.low), abs=1e-9)


@FAST
@given(reviewed_samples(), st.booleans(), st.floats(0.5, 0.99))
def test_a_judge_that_says_the_same_of_every_sample_leaves_wilson_s_interval(data, verdict, level):
    # Such a judge carries no information (lambda = 0): the interval is the
    # reviewed answers' own Wilson interval, to the last bit.
    _, mask, human = data
    auto = [verdict] * len(mask)
    ci = ppi_pass_rate(auto, mask, human, level=level)
    reviewed = [h for h, m in zip(human, mask, strict=True) if m]
    want = proportion_ci(sum(reviewed), len(reviewed), level=level)
    assert _limits(ci) == _limits(want)


@FAST
@given(reviewed_samples(), st.data(), st.floats(0.5, 0.99))
def test_a_judge_that_sees_no_difference_leaves_newcombe_s_paired_interval(data, draw, level):
    # The judge gives A and B the same verdict on every pair: its differences
    # are all 0 and tell nothing, and the interval is paired_diff_ci's of the
    # reviewed pairs.
    auto, mask, human_a = data
    n = len(mask)
    human_b = draw.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    ci = ppi_diff(auto, auto, mask, human_a, human_b, level=level)
    pairs = [(x, y) for x, y, m in zip(human_a, human_b, mask, strict=True) if m]
    cells = [sum(1 for p in pairs if p == want) for want in ((1, 1), (1, 0), (0, 1), (0, 0))]
    ref = paired_diff_ci(*cells, level=level)
    assert _limits(ci) == pytest.approx(_limits(ref), abs=1e-12)


@FAST
@given(reviewed_samples(), st.data(), st.randoms(use_true_random=False))
def test_a_corrected_difference_ignores_the_order_of_the_pairs(data, draw, rnd) -> None:
    auto_a, mask, human_a = data
    n = len(mask)
    auto_b = draw.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    human_b = draw.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    want = ppi_diff(auto_a, auto_b, mask, human_a, human_b)
    order = list(range(n))
    rnd.shuffle(order)

    def listed(xs):
        return [xs[i] for i in order]

    got = ppi_diff(*(listed(x) for x in (auto_a, auto_b, mask, human_a, human_b)))
    assert _limits(got) == pytest.approx(_limits(want), abs=1e-12)


# --- the default claim ------------------------------------------------------------------------


@FAST
@given(st.integers(0, 3 * MIN_CASES), st.sampled_from(["", "repeat counts differ"]), st.booleans())
def test_the_default_claim_is_about_cases_like_these_only_when_it_can_be(n, not_paired, sampled):
    about, note = default_about(n_cases=n, not_paired=not_paired, sampled=sampled)
    can = sampled and not not_paired and n >= MIN_CASES
    assert about == ("cases_like_these" if can else "these_cases")
    assert note
