"""Tests of the intervals against published tables, statsmodels, scipy and enumeration."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import counts, levels, paired_cells

from evalstats.errors import InvalidArgument
from evalstats.stats._intervals import (
    DIFF_METHODS,
    PAIRED_METHODS,
    PROPORTION_METHODS,
    Interval,
    coverage,
    diff_ci,
    paired_diff_ci,
    proportion_ci,
)

# ---------------------------------------------------------------------------
# proportion_ci: published values
# ---------------------------------------------------------------------------

# Newcombe (1998a), Stat Med 17:857-872, table II: 95% intervals for the worked
# examples 81/263, 15/148, 0/20 and 1/29; method 3 (Wilson score), method 4 (score
# with continuity correction) and method 5 (Clopper-Pearson "exact").
NEWCOMBE_1998A = {
    "wilson": [  # method 3
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
    "wilson_cc": [  # method 4
        (81, 263, 0.2535, 0.3682),
        (15, 148, 0.0598, 0.1644),
        (0, 20, 0.0000, 0.2005),
        (1, 29, 0.0018, 0.1963),
    ],
    "clopper_pearson": [  # method 5
        (81, 263, 0.2527, 0.3676),
        (15, 148, 0.0578, 0.1617),
        (0, 20, 0.0000, 0.1684),
        (1, 29, 0.0009, 0.1776),
    ],
    "wald": [  # method 1, limits below 0 shown by Newcombe as "<0" (we clip to 0)
        (81, 263, 0.2522, 0.3638),
        (15, 148, 0.0527, 0.1500),
        (0, 20, 0.0000, 0.0000),
    ],
}


@pytest.mark.parametrize(
    ("method", "k", "n", "low", "high"),
    [(m, *row) for m, rows in NEWCOMBE_1998A.items() for row in rows],
)
def test_newcombe_1998a_worked_examples(method: str, k: int, n: int, low: float, high: float):
    ci = proportion_ci(k, n, method=method)
    assert ci.low == pytest.approx(low, abs=5e-5)
    assert ci.high == pytest.approx(high, abs=5e-5)
    assert ci.estimate == pytest.approx(k / n)


def test_exact_ends_are_exact() -> None:
    for method in PROPORTION_METHODS:
        assert proportion_ci(0, 20, method=method).low == 0.0
        assert proportion_ci(20, 20, method=method).high == 1.0
    # Brown, Cai & DasGupta (2001), section 4.1.2: Jeffreys' lower limit is 0 at x = 0
    # and its upper limit 1 at x = n.
    assert proportion_ci(0, 7, method="jeffreys").low == 0.0
    assert proportion_ci(7, 7, method="jeffreys").high == 1.0


# ---------------------------------------------------------------------------
# proportion_ci: statsmodels and scipy over grids
# ---------------------------------------------------------------------------

GRID = [
    (k, n) for n in (1, 2, 3, 5, 10, 17, 50, 263, 1000) for k in range(0, n + 1, max(1, n // 9))
]
GRID += [(n, n) for n in (1, 2, 3, 5, 10, 17, 50, 263, 1000)]

SM_NAMES = {
    "wilson": "wilson",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
    "agresti_coull": "agresti_coull",
    "wald": "normal",
}


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("method", sorted(SM_NAMES))
def test_matches_statsmodels_proportion_confint(method: str, level: float) -> None:
    from statsmodels.stats.proportion import proportion_confint

    k = np.array([g[0] for g in GRID])
    n = np.array([g[1] for g in GRID])
    ci = proportion_ci(k, n, level=level, method=method)
    lo, hi = proportion_confint(k, n, alpha=1 - level, method=SM_NAMES[method])
    lo, hi = np.clip(lo, 0, 1), np.clip(hi, 0, 1)
    if method == "jeffreys":
        # statsmodels uses the plain equal-tailed posterior interval; Brown, Cai &
        # DasGupta (2001) put the lower limit at 0 for x = 0 and the upper at 1 for x = n.
        lo = np.where(k == 0, 0.0, lo)
        hi = np.where(k == n, 1.0, hi)
    np.testing.assert_allclose(ci.low, lo, atol=1e-10)
    np.testing.assert_allclose(ci.high, hi, atol=1e-10)


@pytest.mark.parametrize(
    ("method", "scipy_name"),
    [("wilson", "wilson"), ("wilson_cc", "wilsoncc"), ("clopper_pearson", "exact")],
)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_matches_scipy_binomtest(method: str, scipy_name: str, level: float) -> None:
    from scipy.stats import binomtest

    for k, n in GRID:
        ref = binomtest(k, n).proportion_ci(confidence_level=level, method=scipy_name)
        ci = proportion_ci(k, n, level=level, method=method)
        assert ci.low == pytest.approx(ref.low, abs=1e-9), (k, n)
        assert ci.high == pytest.approx(ref.high, abs=1e-9), (k, n)


# ---------------------------------------------------------------------------
# proportion_ci: shapes, degenerate input, bad input
# ---------------------------------------------------------------------------


def test_scalar_in_gives_python_floats() -> None:
    ci = proportion_ci(3, 10)
    assert type(ci.estimate) is float and type(ci.low) is float and type(ci.high) is float
    assert isinstance(ci, Interval) and ci.method == "wilson" and ci.level == 0.95
    assert not ci.difference


def test_array_in_gives_arrays_that_broadcast() -> None:
    ci = proportion_ci([[0], [5]], [10, 20, 30])
    assert ci.low.shape == (2, 3)
    assert isinstance(ci.estimate, np.ndarray)
    np.testing.assert_allclose(ci.estimate[1], [0.5, 0.25, 5 / 30])


def test_zero_trials_is_not_a_confident_number() -> None:
    ci = proportion_ci(0, 0)
    assert math.isnan(ci.estimate)
    assert (ci.low, ci.high) == (0.0, 1.0)
    assert "trials=0" in ci.note and "NaN" in ci.note
    many = proportion_ci([0, 3], [0, 4], method="clopper_pearson")
    assert math.isnan(many.estimate[0]) and many.estimate[1] == 0.75
    assert (many.low[0], many.high[0]) == (0.0, 1.0)
    assert "trials=0" in many.note
    assert proportion_ci(3, 4).note == ""


def test_one_million_wilson_intervals_are_vectorised() -> None:
    rng = np.random.default_rng(1)
    n = rng.integers(0, 1000, size=1_000_000)
    k = rng.integers(0, n + 1)
    ci = proportion_ci(k, n)
    assert ci.low.shape == (1_000_000,)
    ok = n > 0
    assert np.all(ci.low[ok] <= ci.estimate[ok]) and np.all(ci.estimate[ok] <= ci.high[ok])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"successes": 12, "trials": 10}, "successes=12 is larger than trials=10"),
        ({"successes": [1, 12], "trials": 10}, "successes[1]=12 is larger than trials[1]=10"),
        ({"successes": -1, "trials": 10}, "successes=-1 is negative"),
        ({"successes": 1.5, "trials": 10}, "successes=1.5 must be a whole number"),
        ({"successes": float("nan"), "trials": 10}, "successes=nan must be a finite"),
        ({"successes": 1, "trials": -3}, "trials=-3 is negative"),
        ({"successes": 1, "trials": 10, "level": 95}, "level=95 must be between 0 and 1"),
        ({"successes": 1, "trials": 10, "level": 0}, "level=0 must be strictly between 0 and 1"),
        ({"successes": 1, "trials": 10, "level": 1.0}, "level=1.0 must be strictly between"),
        ({"successes": 1, "trials": 10, "method": "wilsn"}, "did you mean 'wilson'?"),
        ({"successes": 1, "trials": 10, "method": "exact"}, "method='exact' is not a known"),
        ({"successes": [1, 2], "trials": [3, 4, 5]}, "must broadcast together"),
    ],
)
def test_bad_input_names_the_argument(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidArgument, match=None) as info:
        proportion_ci(**kwargs)
    assert message in str(info.value)


# ---------------------------------------------------------------------------
# proportion_ci: properties
# ---------------------------------------------------------------------------

methods = st.sampled_from(PROPORTION_METHODS)


@given(counts(), levels, methods)
def test_limits_in_unit_interval_and_contain_estimate(kn, level, method) -> None:
    k, n = kn
    ci = proportion_ci(k, n, level=level, method=method)
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@given(counts(), levels, methods)
def test_mirror_k_to_n_minus_k(kn, level, method) -> None:
    # Every method here treats successes and failures alike.
    k, n = kn
    a = proportion_ci(k, n, level=level, method=method)
    b = proportion_ci(n - k, n, level=level, method=method)
    assert a.low == pytest.approx(1 - b.high, abs=1e-12)
    assert a.high == pytest.approx(1 - b.low, abs=1e-12)


@given(counts(), methods)
def test_99_contains_95(kn, method) -> None:
    k, n = kn
    wide = proportion_ci(k, n, level=0.99, method=method)
    narrow = proportion_ci(k, n, level=0.95, method=method)
    assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


@given(counts(), levels)
def test_doubling_trials_at_the_same_rate_never_widens_wilson(kn, level) -> None:
    # (k, n) -> (2k, 2n) keeps the observed rate; the Wilson width
    # 2 z sqrt(n p q + z^2/4) / (n + z^2) decreases in n for fixed p.
    k, n = kn
    a = proportion_ci(k, n, level=level)
    b = proportion_ci(2 * k, 2 * n, level=level)
    assert b.width <= a.width + 1e-12


@given(st.lists(counts(), min_size=1, max_size=20), levels, methods)
def test_vectorised_equals_scalar_loop(pairs, level, method) -> None:
    k = np.array([p[0] for p in pairs])
    n = np.array([p[1] for p in pairs])
    many = proportion_ci(k, n, level=level, method=method)
    for i, (ki, ni) in enumerate(pairs):
        one = proportion_ci(int(ki), int(ni), level=level, method=method)
        assert many.low[i] == one.low and many.high[i] == one.high
        assert many.estimate[i] == one.estimate


# ---------------------------------------------------------------------------
# diff_ci (independent samples), p_b - p_a
# ---------------------------------------------------------------------------

# Newcombe (1998b), Stat Med 17:873-890, table II: 95% limits for p1 - p2 in the
# worked examples (a)-(h); columns "method 10" (score, no continuity correction)
# and "method 11" (score with continuity correction). Sample 1 is passed as B.
NEWCOMBE_1998B = [
    # (k1, n1, k2, n2), method 10, method 11
    ((56, 70, 48, 80), (0.0524, 0.3339), (0.0428, 0.3422)),  # (a)
    ((9, 10, 3, 10), (0.1705, 0.8090), (0.1013, 0.8387)),  # (b)
    ((6, 7, 2, 7), (0.0582, 0.8062), (-0.0290, 0.8423)),  # (c)
    ((5, 56, 0, 29), (-0.0381, 0.1926), (-0.0667, 0.2037)),  # (d)
    ((0, 10, 0, 20), (-0.1611, 0.2775), (-0.2005, 0.3445)),  # (e)
    ((0, 10, 0, 10), (-0.2775, 0.2775), (-0.3445, 0.3445)),  # (f)
    ((10, 10, 0, 20), (0.6791, 1.0000), (0.6014, 1.0000)),  # (g)
    ((10, 10, 0, 10), (0.6075, 1.0000), (0.5128, 1.0000)),  # (h)
]


@pytest.mark.parametrize(("counts_", "m10", "m11"), NEWCOMBE_1998B)
def test_newcombe_1998b_table_ii(counts_, m10, m11) -> None:
    k1, n1, k2, n2 = counts_
    ci = diff_ci(k2, n2, k1, n1)
    assert ci.estimate == pytest.approx(k1 / n1 - k2 / n2)
    assert (ci.low, ci.high) == pytest.approx(m10, abs=5e-5)
    assert ci.difference and ci.method == "newcombe"
    cc = diff_ci(k2, n2, k1, n1, method="newcombe_cc")
    assert (cc.low, cc.high) == pytest.approx(m11, abs=5e-5)


DIFF_GRID = [
    (ka, na, kb, nb)
    for na in (1, 4, 15, 80)
    for nb in (1, 7, 30)
    for ka in sorted({0, 1, na // 2, na - 1, na})
    for kb in sorted({0, 1, nb // 3, nb - 1, nb})
    if ka >= 0 and kb >= 0
]


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize(
    ("method", "sm_method"),
    [("newcombe", "newcomb"), ("agresti_caffo", "agresti-caffo"), ("wald", "wald")],
)
def test_diff_matches_statsmodels(method: str, sm_method: str, level: float) -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep

    for ka, na, kb, nb in DIFF_GRID:
        ci = diff_ci(ka, na, kb, nb, level=level, method=method)
        # statsmodels gives p1 - p2; ours is p_b - p_a, so B goes first.
        lo, hi = confint_proportions_2indep(
            kb, nb, ka, na, method=sm_method, compare="diff", alpha=1 - level
        )
        lo, hi = max(lo, -1.0), min(hi, 1.0)
        est = kb / nb - ka / na
        # Ours is widened to reach the observed difference where a shifted centre
        # (Agresti-Caffo) or a collapsed Wald interval would miss it.
        lo, hi = min(lo, est), max(hi, est)
        assert ci.low == pytest.approx(lo, abs=1e-10), (ka, na, kb, nb)
        assert ci.high == pytest.approx(hi, abs=1e-10), (ka, na, kb, nb)


def test_newcombe_cc_is_built_from_scipy_wilsoncc_limits() -> None:
    # Newcombe (1998b), method 11, from the continuity-corrected Wilson limits that
    # scipy computes independently (binomtest(...).proportion_ci(method="wilsoncc")).
    from scipy.stats import binomtest

    for ka, na, kb, nb in DIFF_GRID:
        a = binomtest(ka, na).proportion_ci(method="wilsoncc")
        b = binomtest(kb, nb).proportion_ci(method="wilsoncc")
        pa, pb = ka / na, kb / nb
        lo = pb - pa - math.hypot(pb - b.low, a.high - pa)
        hi = pb - pa + math.hypot(b.high - pb, pa - a.low)
        ci = diff_ci(ka, na, kb, nb, method="newcombe_cc")
        assert ci.low == pytest.approx(max(lo, -1), abs=1e-9)
        assert ci.high == pytest.approx(min(hi, 1), abs=1e-9)


def test_diff_zero_trials() -> None:
    for args in [(0, 0, 3, 5), (3, 5, 0, 0), (0, 0, 0, 0)]:
        ci = diff_ci(*args)
        assert math.isnan(ci.estimate) and (ci.low, ci.high) == (-1.0, 1.0)
        assert "trials_" in ci.note and "NaN" in ci.note
    many = diff_ci([0, 2], [0, 4], [1, 2], [2, 2], method="wald")
    assert math.isnan(many.estimate[0]) and many.estimate[1] == 0.5
    assert "trials_a=0" in many.note


def test_diff_bad_input() -> None:
    with pytest.raises(InvalidArgument, match=r"successes_b=9 is larger than trials_b=8"):
        diff_ci(1, 2, 9, 8)
    with pytest.raises(InvalidArgument, match=r"trials_a=-2 is negative"):
        diff_ci(1, -2, 1, 8)
    with pytest.raises(InvalidArgument, match=r"did you mean 'newcombe'"):
        diff_ci(1, 2, 3, 4, method="newcomb")
    with pytest.raises(InvalidArgument, match=r"level=0.0 must be strictly between 0 and 1"):
        diff_ci(1, 2, 3, 4, level=0.0)


diff_methods = st.sampled_from(DIFF_METHODS)


@given(counts(), counts(), levels, diff_methods)
def test_diff_limits_and_estimate(a, b, level, method) -> None:
    ci = diff_ci(*a, *b, level=level, method=method)
    assert -1.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@given(counts(), counts(), levels, diff_methods)
def test_swapping_a_and_b_negates_the_difference(a, b, level, method) -> None:
    ab = diff_ci(*a, *b, level=level, method=method)
    ba = diff_ci(*b, *a, level=level, method=method)
    assert ab.estimate == pytest.approx(-ba.estimate, abs=1e-12)
    assert ab.low == pytest.approx(-ba.high, abs=1e-12)
    assert ab.high == pytest.approx(-ba.low, abs=1e-12)


@given(counts(), counts(), diff_methods)
def test_diff_99_contains_95(a, b, method) -> None:
    wide = diff_ci(*a, *b, level=0.99, method=method)
    narrow = diff_ci(*a, *b, level=0.95, method=method)
    assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


@given(st.lists(st.tuples(counts(), counts()), min_size=1, max_size=12), levels, diff_methods)
def test_diff_vectorised_equals_scalar_loop(rows, level, method) -> None:
    arr = np.array([[*a, *b] for a, b in rows]).T
    many = diff_ci(arr[0], arr[1], arr[2], arr[3], level=level, method=method)
    for i, (a, b) in enumerate(rows):
        one = diff_ci(*a, *b, level=level, method=method)
        assert (many.low[i], many.estimate[i], many.high[i]) == (one.low, one.estimate, one.high)


# ---------------------------------------------------------------------------
# paired_diff_ci
# ---------------------------------------------------------------------------

# Newcombe (1998c), Stat Med 17:2635-2650, table III (the worked examples;
# table II holds the method definitions), column "method 10": 95% limits
# for theta = (f - g) / n with cells e (both +), f (first + only), g (second + only),
# h (both -). Taking B as Newcombe's first classification, e = both, f = only_b,
# g = only_a, h = neither, so theta = p_b - p_a and the limits carry over unchanged.
NEWCOMBE_1998C_M10 = [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((20, 12, 2, 16), (0.0562, 0.3292)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((36, 14, 0, 0), (0.1528, 0.4167)),
    ((35, 14, 0, 1), (0.1461, 0.4175)),
    ((18, 14, 0, 18), (0.1441, 0.3963)),
    ((2, 97, 1, 0), (0.8721, 0.9854)),
    ((1, 97, 1, 1), (0.8736, 0.9850)),  # ours 0.87367: the table's last digit is truncated
    ((0, 29, 1, 0), (0.6666, 0.9882)),
    ((2, 98, 0, 0), (0.9178, 0.9945)),
    ((1, 98, 0, 1), (0.9171, 0.9916)),
    ((0, 30, 0, 0), (0.8395, 1.0000)),
    ((54, 0, 0, 0), (-0.0664, 0.0664)),
]


@pytest.mark.parametrize(("efgh", "limits"), NEWCOMBE_1998C_M10)
def test_newcombe_1998c_table_iii_method_10(efgh, limits) -> None:
    e, f, g, h = efgh
    ci = paired_diff_ci(both=e, only_a=g, only_b=f, neither=h)
    assert ci.estimate == pytest.approx((f - g) / (e + f + g + h))
    assert (ci.low, ci.high) == pytest.approx(limits, abs=1e-4)
    assert ci.difference and ci.method == "newcombe"


def test_paired_newcombe_phi_cases_by_hand() -> None:
    # The three branches of Newcombe's (1998c) corrected phi, against a direct
    # evaluation of his formulas with Wilson limits from statsmodels.
    from statsmodels.stats.proportion import proportion_confint

    def by_hand(e, f, g, h):
        n = e + f + g + h
        p1, p2 = (e + f) / n, (e + g) / n
        l1, u1 = proportion_confint(e + f, n, method="wilson")
        l2, u2 = proportion_confint(e + g, n, method="wilson")
        det = e * h - f * g
        c = det - n / 2 if det > n / 2 else (det if det < 0 else 0)
        den = (e + f) * (g + h) * (e + g) * (f + h)
        phi = c / math.sqrt(den) if den else 0.0
        d = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
        eps = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
        return max(p1 - p2 - d, -1), min(p1 - p2 + eps, 1)

    # det > n/2; 0 <= det <= n/2; det < 0; an empty margin
    for e, f, g, h in [(20, 5, 3, 12), (2, 3, 3, 3), (1, 9, 7, 2), (0, 4, 6, 0)]:
        ci = paired_diff_ci(e, g, f, h)
        assert (ci.low, ci.high) == pytest.approx(by_hand(e, f, g, h), abs=1e-12)


def test_paired_wald_against_the_expanded_data() -> None:
    # The paired Wald interval is the normal interval for the mean of the per-pair
    # differences d = b - a, with the variance of d taken with divisor n (numpy).
    for cells in [(10, 3, 8, 9), (0, 5, 1, 2), (4, 0, 0, 6), (1, 1, 1, 1)]:
        both, only_a, only_b, neither = cells
        d = np.array([0] * both + [-1] * only_a + [1] * only_b + [0] * neither, dtype=float)
        z = 1.959963984540054
        se = d.std() / math.sqrt(d.size)
        ci = paired_diff_ci(*cells, method="wald")
        assert ci.estimate == pytest.approx(d.mean())
        assert ci.low == pytest.approx(max(d.mean() - z * se, -1), abs=1e-12)
        assert ci.high == pytest.approx(min(d.mean() + z * se, 1), abs=1e-12)


def test_paired_no_pairs() -> None:
    ci = paired_diff_ci(0, 0, 0, 0)
    assert math.isnan(ci.estimate) and (ci.low, ci.high) == (-1.0, 1.0)
    assert "no pairs" in ci.note
    with pytest.raises(InvalidArgument, match=r"only_b=-1 is negative"):
        paired_diff_ci(1, 2, -1, 3)
    with pytest.raises(InvalidArgument, match=r"did you mean 'wald'"):
        paired_diff_ci(1, 2, 1, 3, method="wlad")


paired_methods = st.sampled_from(PAIRED_METHODS)


@given(paired_cells(), levels, paired_methods)
def test_paired_limits_and_estimate(cells, level, method) -> None:
    ci = paired_diff_ci(*cells, level=level, method=method)
    assert -1.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@given(paired_cells(), levels, paired_methods)
def test_paired_swap_negates(cells, level, method) -> None:
    both, only_a, only_b, neither = cells
    ab = paired_diff_ci(both, only_a, only_b, neither, level=level, method=method)
    ba = paired_diff_ci(both, only_b, only_a, neither, level=level, method=method)
    assert ab.estimate == pytest.approx(-ba.estimate, abs=1e-12)
    assert ab.low == pytest.approx(-ba.high, abs=1e-12)
    assert ab.high == pytest.approx(-ba.low, abs=1e-12)


@given(paired_cells(), paired_methods)
def test_paired_99_contains_95(cells, method) -> None:
    wide = paired_diff_ci(*cells, level=0.99, method=method)
    narrow = paired_diff_ci(*cells, level=0.95, method=method)
    assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


@given(st.lists(paired_cells(), min_size=1, max_size=12), levels, paired_methods)
def test_paired_vectorised_equals_scalar_loop(rows, level, method) -> None:
    arr = np.array(rows).T
    many = paired_diff_ci(*arr, level=level, method=method)
    for i, cells in enumerate(rows):
        one = paired_diff_ci(*cells, level=level, method=method)
        assert (many.low[i], many.estimate[i], many.high[i]) == (one.low, one.estimate, one.high)


# ---------------------------------------------------------------------------
# coverage
# ---------------------------------------------------------------------------


def test_coverage_by_hand_one_trial() -> None:
    # n = 1, Wilson 95%: k = 0 gives (0, z^2/(1+z^2)) = (0, 0.7935), k = 1 gives
    # (1/(1+z^2), 1) = (0.2065, 1). p = 0.1 is covered by k = 0 only (probability
    # 0.9); p = 0.5 by both (probability 1); p = 0.8 by k = 1 only (0.8).
    assert coverage("wilson", 1, 0.1) == pytest.approx(0.9, abs=1e-12)
    assert coverage("wilson", 1, 0.5) == pytest.approx(1.0, abs=1e-12)
    assert coverage("wilson", 1, 0.8) == pytest.approx(0.8, abs=1e-12)


@pytest.mark.parametrize("method", PROPORTION_METHODS)
@pytest.mark.parametrize("n", [2, 5, 13])
def test_coverage_matches_a_plain_enumeration(method: str, n: int) -> None:
    ps = np.linspace(0.0, 1.0, 23)
    got = coverage(method, n, ps, level=0.9)
    for p, value in zip(ps, got, strict=True):
        total = 0.0
        for k in range(n + 1):
            ci = proportion_ci(k, n, level=0.9, method=method)
            if ci.low <= p <= ci.high:
                total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        assert value == pytest.approx(total, abs=1e-12)


@given(st.integers(1, 60), st.floats(0, 1), levels)
def test_clopper_pearson_never_undercovers(n, p, level) -> None:
    # Clopper & Pearson (1934): the exact interval covers with probability >= level.
    assert coverage("clopper_pearson", n, p, level=level) >= level - 1e-9


def test_wald_coverage_collapses_near_zero() -> None:
    # Brown, Cai & DasGupta (2001), section 2: the Wald interval's coverage tends
    # to 0 as p -> 0 at any fixed n (it is (0, 0) whenever k = 0).
    assert coverage("wald", 40, 0.001) < 0.05
    assert coverage("wilson", 40, 0.001) > 0.95


def test_coverage_bad_input() -> None:
    with pytest.raises(InvalidArgument, match=r"trials=0 is less than 1"):
        coverage("wilson", 0, 0.5)
    with pytest.raises(InvalidArgument, match=r"p=1.5 must be between 0 and 1"):
        coverage("wilson", 10, 1.5)
    with pytest.raises(InvalidArgument, match=r"did you mean 'jeffreys'"):
        coverage("jefreys", 10, 0.5)


def test_coverage_script_writes_table_and_figure(tmp_path) -> None:
    import csv

    from simulation import load

    module = load("coverage")
    assert module.main(["--out", str(tmp_path), "--trials", "3", "7", "--points", "11"]) == 0
    with (tmp_path / "coverage.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(PROPORTION_METHODS) * 2 * 11
    row = next(r for r in rows if r["method"] == "wilson" and r["trials"] == "7")
    assert float(row["coverage"]) == pytest.approx(coverage("wilson", 7, float(row["p"])), abs=1e-6)
    assert (tmp_path / "coverage.png").stat().st_size > 1000


# ---------------------------------------------------------------------------
# Interval: frozen, and printed the way a person would write it
# ---------------------------------------------------------------------------


def test_interval_is_frozen_with_the_named_fields() -> None:
    import dataclasses

    ci = proportion_ci(29, 40)
    assert (ci.estimate, ci.level, ci.method) == (29 / 40, 0.95, "wilson")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.low = 0.0  # type: ignore[misc]
    low, high = ci.low, ci.high
    assert 0 < low < ci.estimate < high < 1


def test_interval_prints_like_a_person_writes_it() -> None:
    assert str(Interval(0.82, 0.68, 0.91, 0.95, "wilson")) == "82% (68% to 91%)"
    # statsmodels proportion_confint(29, 40, method="wilson") = (0.5725, 0.8427)
    assert str(proportion_ci(29, 40)) == "73% (57% to 84%)"
    # A limit that would round to 100% without being 1 keeps a decimal; 1 itself is 100%.
    assert str(Interval(0.996, 0.99, 1.0, 0.95, "wilson")) == "99.6% (99% to 100%)"
    assert str(Interval(0.0, 0.0, 0.004, 0.95, "wilson")) == "0% (0% to 0.4%)"
    # Hypothesis found 1/11 at 99% (Clopper-Pearson lower limit 0.000456) printed as
    # "0.0%": as many decimals as it takes not to read as an exact 0% or 100%.
    assert str(proportion_ci(1, 11, level=0.99, method="clopper_pearson")).startswith(
        "9% (0.05% to "
    )
    assert str(Interval(0.9996, 0.99, 0.99996, 0.95, "wilson")) == "99.96% (99% to 99.996%)"
    # Differences carry a sign, with a real minus sign.
    assert str(Interval(-0.12, -0.27, 0.03, 0.95, "newcombe", difference=True)) == (
        "\u221212% (\u221227% to +3%)"
    )
    assert str(proportion_ci(0, 0)) == "n/a (0% to 100%)"


_PRINTED = re.compile(r"^(\S+)% \((\S+)% to (\S+)%\)$")


@given(counts(), levels, methods)
def test_printed_percentages_are_the_limits_rounded(kn, level, method) -> None:
    # Each printed figure is within half a unit of its last printed digit of the
    # value, and 0% or 100% is printed only for an exact 0 or 1.
    ci = proportion_ci(*kn, level=level, method=method)
    match = _PRINTED.match(str(ci))
    assert match is not None, str(ci)
    for text, value in zip(match.groups(), (ci.estimate, ci.low, ci.high), strict=True):
        shown = float(text)
        step = 10.0 ** -len(text.split(".")[1]) if "." in text else 1.0
        assert abs(shown - 100 * value) <= step / 2 + 1e-9
        if shown in (0.0, 100.0):
            assert min(abs(value), abs(1 - value)) <= 1e-11, (text, value)


@given(st.integers(1, 10_000), st.data(), st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.97]))
def test_scalar_wilson_is_the_array_wilson_to_the_last_bit(trials, data, level):
    # proportion_ci takes a path without numpy for one count; it must give the very
    # floats of the vectorised path.
    successes = data.draw(st.integers(0, trials))
    one = proportion_ci(successes, trials, level=level)
    many = proportion_ci(np.array([successes, 0]), np.array([trials, 1]), level=level)
    assert (one.estimate, one.low, one.high) == (
        float(many.estimate[0]),
        float(many.low[0]),
        float(many.high[0]),
    )
    assert one.note == "" and one.method == "wilson"


@given(
    xs=st.lists(
        st.one_of(
            st.floats(-2.0, 2.0),
            st.just(math.nan),
            st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 0.995, 0.0004, 1e-300]),
        ),
        max_size=20,
    ),
    signed=st.booleans(),
)
def test_a_kept_percentage_reads_as_one_formatted_anew(xs, signed):
    from evalstats.stats._intervals import _pct, _pct_text

    for x in xs + xs + [np.float64(x) for x in xs]:
        assert _pct(x, signed=signed) == _pct_text(x, signed=signed)
    assert _pct(np.array(0.25)) == _pct_text(np.array(0.25)) == "25%"
