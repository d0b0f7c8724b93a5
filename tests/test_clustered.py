"""Cluster-robust intervals against statsmodels' cluster-robust OLS on a constant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import clustered_outcomes, levels

from evalstats.errors import InvalidArgument
from evalstats.intervals import (
    ClusteredInterval,
    clustered_mean_ci,
    clustered_paired_diff_ci,
)


def statsmodels_reference(y: np.ndarray, groups: np.ndarray, level: float):
    """statsmodels OLS(y, 1) with cluster-robust (CR1) covariance and t(G - 1)."""
    import statsmodels.api as sm

    fit = sm.OLS(y, np.ones((y.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    lo, hi = fit.conf_int(alpha=1 - level)[0]
    plain = sm.OLS(y, np.ones((y.size, 1))).fit()
    return fit.params[0], fit.bse[0], lo, hi, fit.df_resid_inference, plain.bse[0] ** 2


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_mean_matches_statsmodels(seed: int, level: float) -> None:
    rng = np.random.default_rng(seed)
    cases = int(rng.integers(2, 30))
    sizes = rng.integers(1, 8, size=cases)
    groups = np.repeat(np.arange(cases), sizes)
    rates = rng.beta(2, 2, size=cases)
    y = (rng.random(groups.size) < rates[groups]).astype(float)
    est, se, lo, hi, df, iid_var = statsmodels_reference(y, groups, level)
    ci = clustered_mean_ci(y, groups, level=level)
    assert isinstance(ci, ClusteredInterval)
    assert ci.estimate == pytest.approx(est, abs=1e-12)
    assert ci.se == pytest.approx(se, rel=1e-10)
    assert ci.df == df == cases - 1
    assert ci.clusters == cases
    assert ci.low == pytest.approx(max(lo, 0.0), abs=1e-10)
    assert ci.high == pytest.approx(min(hi, 1.0), abs=1e-10)
    if iid_var > 0:
        assert ci.design_effect == pytest.approx(se**2 / iid_var, rel=1e-10)
    assert ci.note == f"cluster-robust SE over {cases} cases, t with {cases - 1} df"


@pytest.mark.parametrize("seed", range(6))
def test_paired_difference_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    cases = int(rng.integers(2, 25))
    groups = np.repeat(rng.permutation(cases) * 7 + 3, rng.integers(1, 6, size=cases))
    a = rng.random(groups.size) < 0.5
    b = rng.random(groups.size) < 0.65
    d = b.astype(float) - a.astype(float)
    est, se, lo, hi, df, _ = statsmodels_reference(d, groups, 0.95)
    ci = clustered_paired_diff_ci(a, b, groups)
    assert ci.difference and ci.estimate == pytest.approx(est, abs=1e-12)
    assert ci.se == pytest.approx(se, rel=1e-10) and ci.df == df
    assert ci.low == pytest.approx(max(lo, -1.0), abs=1e-10)
    assert ci.high == pytest.approx(min(hi, 1.0), abs=1e-10)


def test_string_labels_and_fractional_scores() -> None:
    y = [0.25, 1.0, 0.5, 0.0, 0.75, 1.0, 0.1]
    labels = ["x", "x", "y", "z", "z", "z", "w"]
    codes = np.unique(labels, return_inverse=True)[1]
    est, se, lo, hi, _, _ = statsmodels_reference(np.array(y), codes, 0.95)
    ci = clustered_mean_ci(y, labels)
    assert (ci.estimate, ci.se) == pytest.approx((est, se), rel=1e-10)
    assert ci.clusters == 4


def test_one_sample_per_case_has_design_effect_one() -> None:
    y = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1], dtype=float)
    ci = clustered_mean_ci(y, np.arange(10))
    assert ci.design_effect == pytest.approx(1.0, rel=1e-12)
    # and the SE is then the ordinary standard error of a mean, s / sqrt(n)
    assert ci.se == pytest.approx(y.std(ddof=1) / math.sqrt(y.size), rel=1e-12)


def test_identical_runs_within_a_case_inflate_the_variance() -> None:
    # Five cases run four times each, every run of a case giving the same answer:
    # the clustered variance is about four times the independent one.
    y = np.repeat([1.0, 0.0, 1.0, 1.0, 0.0], 4)
    ci = clustered_mean_ci(y, np.repeat(np.arange(5), 4))
    assert ci.design_effect == pytest.approx(4 * (5 / 4) * (19 / 20), rel=1e-12)


def test_single_case_is_never_a_confident_number() -> None:
    ci = clustered_mean_ci([1, 1, 0, 1], ["only"] * 4)
    assert (ci.low, ci.high) == (0.0, 1.0)
    assert ci.estimate == 0.75 and math.isnan(ci.se) and ci.clusters == 1
    assert "one case only" in ci.note
    d = clustered_paired_diff_ci([0, 1], [1, 1], [7, 7])
    assert (d.low, d.high) == (-1.0, 1.0) and d.difference
    empty = clustered_mean_ci([], [])
    assert math.isnan(empty.estimate) and (empty.low, empty.high) == (0.0, 1.0)
    assert empty.to_dict()["se"] is None and empty.to_dict()["clusters"] == 0


def test_all_equal_outcomes_say_so() -> None:
    ci = clustered_mean_ci([1, 1, 1, 1], [1, 1, 2, 2])
    assert ci.se == 0.0 and ci.low == ci.high == 1.0
    assert "standard error is 0" in ci.note


def test_to_dict_carries_the_extra_fields() -> None:
    ci = clustered_mean_ci([1, 0, 1, 0, 1], [1, 1, 2, 2, 3])
    d = ci.to_dict()
    assert d["clusters"] == 3 and d["df"] == 2.0
    assert d["se"] == pytest.approx(ci.se) and d["design_effect"] == pytest.approx(ci.design_effect)


def test_bad_input() -> None:
    with pytest.raises(InvalidArgument, match=r"clusters has 3 labels but outcomes has 4"):
        clustered_mean_ci([1, 0, 1, 1], [1, 2, 3])
    with pytest.raises(InvalidArgument, match=r"outcomes\[1\]=2.0 must be between 0 and 1"):
        clustered_mean_ci([1, 2, 0], [1, 2, 3])
    with pytest.raises(InvalidArgument, match=r"outcomes\[0\]=nan must be between 0 and 1"):
        clustered_mean_ci([float("nan"), 1], [1, 2])
    with pytest.raises(InvalidArgument, match=r"outcomes_a has 2 outcomes and outcomes_b has 3"):
        clustered_paired_diff_ci([1, 0], [1, 0, 1], [1, 2])
    with pytest.raises(InvalidArgument, match=r"level=1.5 must be between 0 and 1"):
        clustered_mean_ci([1, 0], [1, 2], level=1.5)
    with pytest.raises(InvalidArgument, match=r"one-dimensional"):
        clustered_mean_ci([[1, 0]], [1, 2])
    with pytest.raises(InvalidArgument, match=r"must hold numbers"):
        clustered_mean_ci(["pass", "fail"], [1, 2])


@given(clustered_outcomes(), levels)
def test_limits_contain_estimate(data, level) -> None:
    y, groups = data
    ci = clustered_mean_ci(y, groups, level=level)
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@given(clustered_outcomes(), st.randoms(use_true_random=False))
def test_relabelling_and_reordering_clusters_changes_nothing(data, rnd) -> None:
    y, groups = data
    ci = clustered_mean_ci(y, groups)
    order = list(range(len(y)))
    rnd.shuffle(order)
    distinct = sorted(set(groups))
    shuffled = distinct[:]
    rnd.shuffle(shuffled)
    names = {g: f"case-{s}" for g, s in zip(distinct, shuffled, strict=True)}
    other = clustered_mean_ci([y[i] for i in order], [names[groups[i]] for i in order])
    assert other.estimate == pytest.approx(ci.estimate, abs=1e-12)
    assert other.se == pytest.approx(ci.se, rel=1e-9, abs=1e-12, nan_ok=True)
    assert (other.low, other.high) == pytest.approx((ci.low, ci.high), abs=1e-9)


@given(clustered_outcomes(), clustered_outcomes(), levels)
def test_paired_swap_negates(da, db, level) -> None:
    a, groups = da
    b = (db[0] * (len(a) // len(db[0]) + 1))[: len(a)]
    ab = clustered_paired_diff_ci(a, b, groups, level=level)
    ba = clustered_paired_diff_ci(b, a, groups, level=level)
    assert ab.estimate == pytest.approx(-ba.estimate, abs=1e-12)
    assert (ab.low, ab.high) == pytest.approx((-ba.high, -ba.low), abs=1e-12)
    assert -1.0 <= ab.low <= ab.estimate <= ab.high <= 1.0


@settings(max_examples=40)
@given(clustered_outcomes(min_clusters=2))
def test_se_matches_statsmodels_property(data) -> None:
    y, groups = data
    arr = np.array(y, dtype=float)
    codes = np.unique(groups, return_inverse=True)[1]
    _, se, _, _, _, _ = statsmodels_reference(arr, codes, 0.95)
    assert clustered_mean_ci(y, groups).se == pytest.approx(se, rel=1e-9, abs=1e-12)
