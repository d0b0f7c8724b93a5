"""Tests of evalstats.intervals against published tables, statsmodels, scipy and enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import counts, levels

from evalstats.errors import InvalidArgument
from evalstats.intervals import PROPORTION_METHODS, Interval, proportion_ci

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
        ({"successes": 1, "trials": 10, "level": 0}, "level=0 must be between 0 and 1"),
        ({"successes": 1, "trials": 10, "level": 1.0}, "level=1.0 must be between 0 and 1"),
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
