"""The clustered comparison's p-values: they agree with its interval and with references."""

from __future__ import annotations

import math

import betting_reference
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import levels

from evalstats.errors import InvalidArgument
from evalstats.stats._clustered_pvalues import (
    _NULL,
    _log_capital,
    betting_pvalue,
    clustered_paired_pvalue,
)
from evalstats.stats._intervals import clustered_paired_diff_ci


@pytest.mark.parametrize(
    ("x", "m", "level"),
    [
        ([1.0] * 6, 0.5, 0.95),
        ([0.9, 0.7, 1.0, 0.55, 0.8, 0.6, 0.75], 0.5, 0.95),
        ([0.2, 0.9, 0.4, 1.0, 0.0, 0.8, 0.65, 0.3], 0.3, 0.9),
        (list(np.random.default_rng(0).random(40)), 0.45, 0.99),
        ([0.5] * 10, 0.5, 0.95),  # no information: capital 1, p = 1
    ],
)
def test_betting_pvalue_is_one_over_the_capital_computed_by_hand(x, m, level):
    # the capital averaged over the orders of the sorted values, one value at
    # a time (tests/betting_reference.py)
    alpha = (1.0 - level) / 2.0
    expected = min(1.0, 1.0 / betting_reference.averaged_capital(x, m, alpha))
    assert betting_pvalue(x, m, level=level) == pytest.approx(expected, rel=1e-12)


def test_betting_pvalue_of_six_full_gains_is_the_published_bound():
    # Six case differences of +1 (rescaled to 1): each bet is capped at
    # 0.9 / 0.5 = 1.8, so K = 1.9**6 and p = 1 / 1.9**6 = 0.02126, below
    # 0.025: the smallest number of unanimous cases that a level-95% rule can
    # call (2**-6 < 0.025), as the interval's comment in intervals.py says.
    assert betting_pvalue([1.0] * 6, 0.5) == pytest.approx(1.9**-6, rel=1e-12)
    assert betting_pvalue([1.0] * 5, 0.5) > 0.025


def test_betting_pvalue_is_vectorised_over_rows():
    rng = np.random.default_rng(1)
    x = rng.random((5, 12))
    rows = betting_pvalue(x, 0.4)
    assert rows.shape == (5,)
    for row, p in zip(x, rows, strict=True):
        assert betting_pvalue(row, 0.4) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize(
    ("x", "null", "pattern"),
    [
        ([], 0.5, "at least one observation"),
        ([0.2, 1.2], 0.5, r"\[0, 1\]"),
        ([0.2], 1.0, "null=1.0"),
        ([0.2], -0.1, "null=-0.1"),
    ],
)
def test_betting_pvalue_bad_input(x, null, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        betting_pvalue(x, null)


# --- the t side -------------------------------------------------------------------------------


@pytest.mark.parametrize(("cases", "runs", "seed"), [(5, 3, 0), (12, 4, 1), (120, 2, 2)])
def test_cr2_pvalue_on_balanced_cases_is_the_one_sample_t_test_of_case_means(cases, runs, seed):
    # With the same number of runs in every case CR2 is the t interval on the
    # case means with cases - 1 df, so its test is scipy's one-sample t test
    # on the case mean differences (scipy.stats.ttest_1samp, two-sided).
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(seed)
    rates = rng.beta(2, 2, cases)
    a = (rng.random((cases, runs)) < rates[:, None]).ravel()
    b = (rng.random((cases, runs)) < np.clip(rates + 0.1, 0, 1)[:, None]).ravel()
    clusters = np.repeat(np.arange(cases), runs)
    means = (b.astype(float) - a).reshape(cases, runs).mean(axis=1)
    reference = ttest_1samp(means, 0.0).pvalue
    got = clustered_paired_pvalue(a, b, clusters, method="cr2")
    assert got == pytest.approx(reference, rel=1e-10)
    # the default is the betting test at every number of cases
    assert clustered_paired_pvalue(a, b, clusters) == clustered_paired_pvalue(
        a, b, clusters, method="betting"
    )


def test_cr2_pvalue_with_unequal_runs_uses_satterthwaite_df():
    from scipy.stats import t

    a = [0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1]
    b = [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1]
    clusters = [0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4, 4]
    ci = clustered_paired_diff_ci(a, b, clusters, method="cr2")
    assert ci.df != 4  # unequal runs: Satterthwaite's df, not cases - 1
    expected = 2 * t.sf(abs(ci.estimate) / ci.se, ci.df)  # scipy's t distribution
    assert clustered_paired_pvalue(a, b, clusters, method="cr2") == pytest.approx(expected)


# --- the p-value and the interval agree ----------------------------------------------------


@st.composite
def paired_case_outcomes(draw, max_cases=30):
    cases = draw(st.integers(2, max_cases))
    shift = draw(st.sampled_from([0.0, 0.2, 0.5, -0.3]))
    balanced = draw(st.booleans())
    runs = draw(st.integers(1, 5))
    a, b, clusters = [], [], []
    for c in range(cases):
        r = runs if balanced else draw(st.integers(1, 5))
        for _ in range(r):
            pa = draw(st.sampled_from([0.2, 0.5, 0.8]))
            a.append(draw(st.booleans()) if pa == 0.5 else pa > 0.5)
            b.append(draw(st.booleans()) or (shift > 0 and draw(st.booleans())))
            clusters.append(c)
    return a, b, clusters


@settings(max_examples=300, deadline=None)
@given(paired_case_outcomes(), levels, st.sampled_from(["auto", "cr2", "cr1", "betting"]))
def test_pvalue_rejects_exactly_when_the_interval_excludes_zero(data, level, method):
    a, b, clusters = data
    ci = clustered_paired_diff_ci(a, b, clusters, level=level, method=method)
    p = clustered_paired_pvalue(a, b, clusters, level=level, method=method)
    alpha = 1.0 - level
    assert 0.0 <= p <= 1.0
    assert ci.method in ("betting", "cr2", "cr1")
    # keep away from the knife edge, where rounding may fall either way
    assume(abs(p - alpha) > 1e-9 * alpha)
    assert (p < alpha) == (ci.low > 0 or ci.high < 0)


def test_agreement_on_random_designs_of_every_size():
    # the default (betting at every number of cases), and CR2 asked for by name
    rng = np.random.default_rng(5)
    for cases in (6, 20, 99, 100, 150):
        for shift in (0.0, 0.05, 0.15):
            rates = rng.beta(1.5, 1.0, cases)
            a = (rng.random((cases, 3)) < rates[:, None]).ravel()
            b = (rng.random((cases, 3)) < np.clip(rates + shift, 0, 1)[:, None]).ravel()
            clusters = np.repeat(np.arange(cases), 3)
            ci = clustered_paired_diff_ci(a, b, clusters)
            p = clustered_paired_pvalue(a, b, clusters)
            assert ci.method == "betting"
            assert (p < 0.05) == (ci.low > 0 or ci.high < 0)
            ci = clustered_paired_diff_ci(a, b, clusters, method="cr2")
            p = clustered_paired_pvalue(a, b, clusters, method="cr2")
            assert ci.method in ("cr2", "betting")  # betting where no case differs
            assert (p < 0.05) == (ci.low > 0 or ci.high < 0)


def test_betting_side_is_tested_at_the_grid_point_the_interval_uses():
    # the bisection's grid step above 1/2: a difference of 2**-41
    assert _NULL == 0.5 + 2.0**-42
    x = np.array([0.9, 0.6, 1.0, 0.7])
    assert _log_capital(x, _NULL, 0.025) <= _log_capital(x, 0.5, 0.025)


def test_betting_pvalue_is_valid_under_the_null():
    # Case mean differences symmetric about 0 (20 cases), 4,000 experiments:
    # P(p <= a) <= a at the thresholds Holm's steps use (0.05, 0.05/2,
    # 0.05/3); the betting test is conservative, so the observed share sits
    # well below a (margin: 3 binomial standard errors).
    rng = np.random.default_rng(11)
    n = 4000
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(n, 20), p=[0.1, 0.2, 0.4, 0.2, 0.1])
    unit = (d + 1.0) / 2.0
    up = np.exp(-_log_capital(unit, 0.5, 0.025))
    down = np.exp(-_log_capital(1.0 - unit, 0.5, 0.025))
    mean = d.mean(axis=1)
    p = np.minimum(1, 2 * np.minimum(np.where(mean > 0, up, 1), np.where(mean < 0, down, 1)))
    for a in (0.05, 0.05 / 2, 0.05 / 3):
        assert np.mean(p <= a) <= a + 3 * math.sqrt(a * (1 - a) / n)


def test_case_means_pvalues_are_the_clustered_pvalues_row_by_row():
    from evalstats.stats._clustered_pvalues import case_means_pvalues

    rng = np.random.default_rng(9)
    for cases in (3, 30, 99, 100, 140):
        a = rng.random((4, cases, 3)) < 0.6
        b = rng.random((4, cases, 3)) < 0.65
        b[0] = a[0]  # no difference at all: every case mean 0, the betting test
        d = (b.astype(float) - a).mean(axis=-1)
        rows = case_means_pvalues(d)
        clusters = np.repeat(np.arange(cases), 3)
        for i in range(4):
            one = clustered_paired_pvalue(a[i].ravel(), b[i].ravel(), clusters)
            assert rows[i] == pytest.approx(one, rel=1e-9)
    with pytest.raises(InvalidArgument, match="case_means holds 1 case"):
        case_means_pvalues([[0.5]])
