"""Tango's paired score test and interval (evalstats.stats._tango, paired_diff_ci's tango methods).

References: a published worked example (the Cavo et al. data of Fagerland,
Lydersen & Laake), an independent computation (the constrained maximum
likelihood found by scipy.optimize, the limits by root finding on that), and
exact enumeration of the test's one-sided errors at small numbers of pairs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammaln
from scipy.stats import norm
from strategies import levels, paired_cells

from evalstats import paired_diff_ci, paired_diff_pvalue
from evalstats.errors import InvalidArgument
from evalstats.stats._intervals import _z
from evalstats.stats._tango import CORRECTION, statistic, thresholds

SCORE_METHODS = ("tango_cc", "tango")
CORRECTIONS = {"tango_cc": CORRECTION, "tango": 0.0}


# --- a published worked example ---------------------------------------------------


def test_the_cavo_example_of_fagerland_lydersen_and_laake():
    # Cavo et al. (2012), complete response before (rows) and after (columns)
    # consolidation therapy, 161 patients: [[59, 6], [16, 80]]. Fagerland,
    # Lydersen & Laake (2017), Statistical Analysis of Contingency Tables,
    # chapter 8 (the paired 2 x 2 table), work it by Tango's asymptotic score
    # interval; their R package contingencytables prints for it
    # Tango_asymptotic_score_CI_paired_2x2: "estimate = -0.0621 (95% CI
    # -0.1240 to -0.0054)" for pi_1+ - pi_+1, and
    # McNemar_asymptotic_test_paired_2x2: "P = 0.033006, Z = -2.132"
    # (tests/testthat/test-ch8.R of that package). Here A is the row
    # classification, so p_b - p_a is their difference with its sign turned.
    ci = paired_diff_ci(59, 6, 16, 80, method="tango")
    assert round(ci.estimate, 4) == 0.0621
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0054, 0.1240)
    assert round(float(statistic(6, 16, 161, 0.0, 0.0)), 3) == 2.132
    assert round(paired_diff_pvalue(59, 6, 16, 80, method="tango"), 6) == 0.033006
    # the same table with the rows and columns swapped: the mirror image
    swapped = paired_diff_ci(59, 16, 6, 80, method="tango")
    assert (round(swapped.low, 4), round(swapped.high, 4)) == (-0.1240, -0.0054)


def test_mcnemars_statistic_at_zero():
    # At delta0 = 0 the constrained estimate of each discordant cell is
    # (only_a + only_b) / (2 n), so the score statistic is McNemar's
    # (only_b - only_a) / sqrt(only_a + only_b), as Tango (1998) notes, and
    # with the correction |only_b - only_a| is a quarter of a pair smaller.
    for only_a, only_b, n in [(2, 12, 50), (150, 86, 1600), (7, 7, 30), (0, 5, 5)]:
        m = only_a + only_b
        assert statistic(only_a, only_b, n, 0.0, 0.0) == pytest.approx(
            (only_b - only_a) / math.sqrt(m), rel=1e-12
        )
        d = only_b - only_a
        want = math.copysign(max(abs(d) - CORRECTION, 0.0), d) / math.sqrt(m)
        assert statistic(only_a, only_b, n, 0.0, CORRECTION) == pytest.approx(want, abs=1e-12)


# --- an independent computation -------------------------------------------------------


def _smaller_cell_by_optimisation(only_a: int, only_b: int, n: int, delta0: float) -> float:
    """The constrained MLE of the smaller discordant cell, by scipy.optimize (no closed form).

    Under p_b - p_a = delta0 the discordant cells are s + t and s (t = |delta0|),
    the concordant ones share 1 - 2 s - t; the log likelihood of the counts is
    maximised over s in [0, (1 - t) / 2].
    """
    t = abs(delta0)
    small, large = (only_a, only_b) if delta0 >= 0 else (only_b, only_a)
    rest = n - only_a - only_b

    def minus_loglik(s: float) -> float:
        out = 0.0
        for k, p in ((small, s), (large, s + t), (rest, 1.0 - 2.0 * s - t)):
            if k:
                out -= k * math.log(max(p, 1e-300))
        return out

    top = (1.0 - t) / 2.0
    found = minimize_scalar(
        minus_loglik, bounds=(0.0, top), method="bounded", options={"xatol": 1e-13}
    )
    # the bounded search does not try the ends themselves
    return min((0.0, top, float(found.x)), key=minus_loglik)


def _statistic_by_hand(only_a: int, only_b: int, n: int, delta0: float, correction: float) -> float:
    s = _smaller_cell_by_optimisation(only_a, only_b, n, delta0)
    t = abs(delta0)
    var = n * (2 * s + t * (1 - t))
    raw = only_b - only_a - n * delta0
    score = math.copysign(max(abs(raw) - correction, 0.0), raw)
    if var <= 0:
        return 0.0 if score == 0 else math.copysign(math.inf, score)
    return score / math.sqrt(var)


TABLES = [
    (36, 2, 12, 0),
    (59, 6, 16, 80),
    (1, 1, 7, 12),
    (794, 150, 86, 570),
    (10, 0, 0, 10),
    (0, 0, 3, 0),
    (5, 3, 0, 2),
    (40, 9, 1, 50),
]


@pytest.mark.parametrize("cells", TABLES)
@pytest.mark.parametrize("method", SCORE_METHODS)
def test_limits_solve_the_score_equation_found_independently(cells, method):
    both, only_a, only_b, neither = cells
    n = sum(cells)
    correction = CORRECTIONS[method]
    for level in (0.9, 0.95, 0.99):
        z = norm.ppf(0.5 + level / 2)
        ci = paired_diff_ci(*cells, level=level, method=method)
        est = (only_b - only_a) / n

        def f(d0: float, target: float) -> float:
            return _statistic_by_hand(only_a, only_b, n, d0, correction) - target

        # the lower limit is where the statistic comes down to z, the upper to -z
        want_low = -1.0 if f(-1.0 + 1e-12, z) <= 0 else brentq(f, -1.0 + 1e-12, est, (z,))
        want_high = 1.0 if f(1.0 - 1e-12, -z) >= 0 else brentq(f, est, 1.0 - 1e-12, (-z,))
        assert ci.low == pytest.approx(want_low, abs=1e-8)
        assert ci.high == pytest.approx(want_high, abs=1e-8)


@given(paired_cells(max_total=200), st.floats(-0.95, 0.95), st.sampled_from(SCORE_METHODS))
def test_the_statistic_is_the_one_from_the_optimised_likelihood(cells, delta0, method):
    _, only_a, only_b, _ = cells
    n = sum(cells)
    got = float(statistic(only_a, only_b, n, delta0, CORRECTIONS[method]))
    want = _statistic_by_hand(only_a, only_b, n, delta0, CORRECTIONS[method])
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_the_statistic_never_increases_with_delta0():
    # Every table of up to 40 pairs, delta0 on a grid of 399 points: the
    # statistic is non-increasing, so the set of delta0 it does not reject is
    # an interval, and its ends are what the bisection finds.
    d0 = np.linspace(-0.995, 0.995, 399)[:, None]
    for n in range(1, 41):
        a, b = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        ok = a + b <= n
        for correction in (0.0, CORRECTION):
            z = statistic(a[ok][None, :], b[ok][None, :], n, d0, correction)
            assert not np.any(np.diff(z, axis=0) > 1e-12), (n, correction)


# --- properties -------------------------------------------------------------------------


@given(paired_cells(), levels, st.sampled_from(SCORE_METHODS))
def test_the_interval_holds_its_estimate_within_minus_one_and_one(cells, level, method):
    ci = paired_diff_ci(*cells, level=level, method=method)
    assert -1.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@given(paired_cells(), levels, st.sampled_from(SCORE_METHODS))
def test_swapping_a_and_b_mirrors_the_interval_and_keeps_the_pvalue(cells, level, method):
    both, only_a, only_b, neither = cells
    ci = paired_diff_ci(*cells, level=level, method=method)
    swapped = paired_diff_ci(both, only_b, only_a, neither, level=level, method=method)
    assert swapped.low == -ci.high and swapped.high == -ci.low
    p = paired_diff_pvalue(*cells, method=method)
    assert paired_diff_pvalue(both, only_b, only_a, neither, method=method) == p


@given(paired_cells(), levels, st.sampled_from(SCORE_METHODS))
def test_the_interval_excludes_zero_exactly_when_the_test_rejects(cells, level, method):
    ci = paired_diff_ci(*cells, level=level, method=method)
    p = paired_diff_pvalue(*cells, method=method)
    assert (ci.low > 0 or ci.high < 0) == (p < 1 - level)
    # one-sided: the lower limit is above 0 exactly when the one-sided test says so
    greater = paired_diff_pvalue(*cells, alternative="greater", method=method)
    assert (ci.low > 0) == (greater < (1 - level) / 2)


@given(paired_cells(), levels, st.floats(-0.99, 0.99), st.sampled_from(SCORE_METHODS))
def test_every_delta0_outside_the_interval_is_rejected_and_no_other(cells, level, delta0, method):
    # The non-inferiority rule of the gate: the lower limit is above -margin
    # exactly when the one-sided p-value at -margin is below (1 - level) / 2.
    ci = paired_diff_ci(*cells, level=level, method=method)
    z = float(statistic(cells[1], cells[2], sum(cells), delta0, CORRECTIONS[method]))
    if abs(abs(z) - norm.ppf(0.5 + level / 2)) < 1e-9:
        return  # on the limit itself, up to rounding
    p = paired_diff_pvalue(*cells, delta0=delta0, method=method)
    assert (delta0 < ci.low or delta0 > ci.high) == (p < 1 - level)
    greater = paired_diff_pvalue(*cells, delta0=delta0, alternative="greater", method=method)
    assert (ci.low > delta0) == (greater < (1 - level) / 2)
    less = paired_diff_pvalue(*cells, delta0=delta0, alternative="less", method=method)
    assert (ci.high < delta0) == (less < (1 - level) / 2)


def test_arrays_give_what_each_table_gives_alone():
    cells = np.array(TABLES).T
    for method in SCORE_METHODS:
        ci = paired_diff_ci(*cells, level=0.9, method=method)
        p = paired_diff_pvalue(*cells, delta0=-0.05, alternative="greater", method=method)
        for i, table in enumerate(TABLES):
            one = paired_diff_ci(*table, level=0.9, method=method)
            assert (ci.low[i], ci.high[i]) == (one.low, one.high)
            alone = paired_diff_pvalue(*table, delta0=-0.05, alternative="greater", method=method)
            assert p[i] == pytest.approx(alone, rel=1e-13, abs=1e-300)
    # delta0 may be an array too, broadcast with the counts
    many = paired_diff_pvalue(36, 2, 12, 0, delta0=[-0.1, 0.2, 0.5])
    assert many.shape == (3,) and many[1] == 1.0 and many[0] < 0.01 and many[2] < 0.01


def test_no_pairs_and_no_discordant_pairs():
    empty = paired_diff_ci(0, 0, 0, 0, method="tango_cc")
    assert math.isnan(empty.estimate) and (empty.low, empty.high) == (-1.0, 1.0)
    assert paired_diff_pvalue(0, 0, 0, 0) == 1.0
    # no discordant pair: the interval is still a proper one around 0 (Tango's
    # method applies to off-diagonal zeros), and the test at 0 says nothing
    ci = paired_diff_ci(12, 0, 0, 8, method="tango_cc")
    assert ci.estimate == 0 and -0.3 < ci.low < 0 < ci.high < 0.3 and ci.low == -ci.high
    assert paired_diff_pvalue(12, 0, 0, 8) == 1.0
    # every pair only under B: the upper limit is 1
    assert paired_diff_ci(0, 0, 10, 0, method="tango").high == 1.0


def test_thresholds_are_the_least_winning_split():
    m = np.arange(0, 300)
    for level in (0.8, 0.95, 0.99):
        z = norm.ppf(0.5 + level / 2)
        for correction in (0.0, CORRECTION):
            got = thresholds(m, _z(level), correction)
            for k in range(300):
                c = np.arange(k + 1)
                wins = (c > k - c) & ((2 * c - k - correction) / math.sqrt(max(k, 1)) > z)
                assert got[k] == (int(c[wins][0]) if wins.any() else k + 1)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(InvalidArgument, match=r"method='tango_c' is not a known method"):
        paired_diff_pvalue(1, 2, 3, 4, method="tango_c")
    with pytest.raises(InvalidArgument, match=r"alternative='two_sided'.*did you mean"):
        paired_diff_pvalue(1, 2, 3, 4, alternative="two_sided")
    with pytest.raises(InvalidArgument, match=r"delta0=1.5 must be a number in \[-1, 1\]"):
        paired_diff_pvalue(1, 2, 3, 4, delta0=1.5)
    with pytest.raises(InvalidArgument, match=r"delta0='x' must be a number"):
        paired_diff_pvalue(1, 2, 3, 4, delta0="x")
    with pytest.raises(InvalidArgument, match=r"only_a=-1"):
        paired_diff_pvalue(1, -1, 3, 4)
    with pytest.raises(InvalidArgument, match=r"did you mean 'tango_cc'"):
        paired_diff_ci(1, 2, 3, 4, method="tango-cc")


# --- exact one-sided errors (the full enumeration is simulations/gate_margin.py --part exact) --


def _largest_error(n: int, delta0: float, correction: float) -> float:
    """max over s of P(statistic(delta0) > z) at p_b - p_a = delta0, by exact enumeration.

    Written here from the trinomial, not with the simulation's code: only_a
    and only_b have probabilities s + t and s when delta0 = -t <= 0 (s and
    s + t when delta0 = t > 0), and s runs over what a paired run allows, up
    to (1 - t)^2 / 4 (no negative association between A's and B's outcome
    on a pair).
    """
    a, b = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = a + b <= n
    a, b = a[ok].astype(float), b[ok].astype(float)
    hit = statistic(a, b, n, delta0, correction) > norm.ppf(0.975)
    a, b = a[hit], b[hit]
    rest = n - a - b
    log_choose = gammaln(n + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(rest + 1)
    t = abs(delta0)
    worst = 0.0
    for s in np.r_[np.geomspace(1e-4, 0.02, 25), np.linspace(0.02, (1 - t) ** 2 / 4, 80)]:
        pa, pb = (s + t, s) if delta0 <= 0 else (s, s + t)
        logs = log_choose + a * np.log(pa) + b * np.log(pb) + rest * np.log1p(-pa - pb)
        worst = max(worst, float(np.exp(logs).sum()))
    return worst


@pytest.mark.parametrize("delta0", [-0.1, -0.05, 0.0])
def test_the_gate_and_b_better_keep_their_level_by_exact_enumeration(delta0):
    # The gate passes (the lower limit above -margin) when B is exactly the
    # margin worse, and "B better" is said when B = A, with probability at
    # most 2.5% at every number of pairs tried, for every nuisance value;
    # without the correction Tango's test goes above it (simulations/
    # gate_margin.py --part exact: up to 3.1% at 17 pairs).
    ns = (*range(10, 41), 50, 60, 80, 100, 150, 200)
    assert max(_largest_error(n, delta0, CORRECTION) for n in ns) <= 0.025
    assert max(_largest_error(n, delta0, 0.0) for n in ns) > 0.026
