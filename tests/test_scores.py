"""Intervals for a mean score: each method against an independent reference."""

from __future__ import annotations

import itertools
import math

import betting_reference
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_clustered import cr2_by_matrices

from evalstats.errors import InvalidArgument
from evalstats.stats import ScoreInterval, score_mean_ci
from evalstats.stats._scores import (
    SCORE_METHODS,
    auto_score_method,
    fixed_bet_limits,
    score_limits,
    studentized_limits,
)


def _data(seed: int, cases: int, runs: int | None = None):
    rng = np.random.default_rng(seed)
    sizes = np.full(cases, runs) if runs else rng.integers(1, 6, size=cases)
    groups = np.repeat(np.arange(cases), sizes)
    mu = rng.beta(2, 2, size=cases)
    y = np.clip(rng.normal(mu[groups], 0.2), 0, 1).round(3)
    return y, groups


# --- t intervals ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_t_about_these_cases_is_scipys_t_over_runs(seed: int, level: float) -> None:
    from scipy import stats

    y, groups = _data(seed, 7)
    ci = score_mean_ci(y, groups, about="these_cases", level=level, method="t")
    # scipy.stats.ttest_1samp(...).confidence_interval: the one-sample t interval
    ref = stats.ttest_1samp(y, 0.5).confidence_interval(level)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-10)
    assert ci.estimate == pytest.approx(y.mean(), abs=1e-12)
    assert ci.df == y.size - 1 and ci.method == "t" and ci.about == "these_cases"


@pytest.mark.parametrize("seed", range(6))
def test_t_about_cases_like_these_balanced_is_the_t_on_case_means(seed: int) -> None:
    import statsmodels.api as sm
    from scipy import stats

    y, groups = _data(seed, 9, runs=3)
    ci = score_mean_ci(y, groups, about="cases_like_these", method="t")
    means = np.array([y[groups == g].mean() for g in range(9)])
    ref = stats.ttest_1samp(means, 0.5).confidence_interval(0.95)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-10)
    # statsmodels' cluster-robust OLS on a constant (CR1, t on G - 1 df) is the
    # same interval when every case has the same number of runs
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    lo, hi = fit.conf_int(alpha=0.05)[0]
    assert (ci.low, ci.high) == pytest.approx((lo, hi), abs=1e-10)
    assert ci.df == pytest.approx(8.0, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_t_about_cases_like_these_unbalanced_is_cr2(seed: int) -> None:
    from scipy import stats

    y, groups = _data(100 + seed, 8)
    ci = score_mean_ci(y, groups, about="cases_like_these", method="t")
    # Pustejovsky & Tipton (2018) by matrices (tests/test_clustered.py, checked
    # there against clubSandwich's published MortalityRates example)
    var, df = cr2_by_matrices(y, np.ones((y.size, 1)), groups, np.ones(1))
    half = stats.t.ppf(0.975, df) * math.sqrt(var)
    assert ci.se == pytest.approx(math.sqrt(var), rel=1e-10)
    assert ci.df == pytest.approx(df, rel=1e-10)
    assert ci.low == pytest.approx(max(y.mean() - half, 0.0), abs=1e-10)
    assert ci.high == pytest.approx(min(y.mean() + half, 1.0), abs=1e-10)


# --- betting intervals ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_betting_about_cases_like_these_is_the_reference_on_case_means(seed: int) -> None:
    y, groups = _data(200 + seed, 6, runs=2)
    ci = score_mean_ci(y, groups, about="cases_like_these", method="betting")
    means = [float(y[groups == g].mean()) for g in range(6)]
    # tests/betting_reference.py: Waudby-Smith & Ramdas (2024), section 5, in plain Python
    low = betting_reference.lower_bound(means, 0.025)
    high = 1.0 - betting_reference.lower_bound([1.0 - m for m in means], 0.025)
    assert ci.low == pytest.approx(min(low, ci.estimate), abs=1e-9)
    assert ci.high == pytest.approx(max(high, ci.estimate), abs=1e-9)
    assert ci.method == "betting"


def _fixed_capital(x: list[float], m: float) -> float:
    """(1/16) sum_k prod_i (1 + 0.9 2**-k (x_i / m - 1)), one value at a time."""
    total = 0.0
    for k in range(16):
        a = 0.9 * 2.0**-k
        prod = 1.0
        for xi in x:
            prod *= 1.0 + a * (xi / m - 1.0)
        total += prod
    return total / 16


def _fixed_lower(x: list[float], alpha: float) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if _fixed_capital(x, mid) >= 1 / alpha:
            lo = mid
        else:
            hi = mid
    return lo


@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=12))
def test_fixed_bet_limits_are_the_plain_python_bisection(x: list[float]) -> None:
    low, high = fixed_bet_limits(np.array([x]), 0.95)
    mean = sum(x) / len(x)
    ref_low = min(_fixed_lower(x, 0.025), mean)
    ref_high = max(1.0 - _fixed_lower([1.0 - v for v in x], 0.025), mean)
    # the same bisection; products and sums of logs differ by rounding only,
    # which can move a step where the capital is within 1e-12 of 1 / alpha
    assert float(low[0]) == pytest.approx(ref_low, abs=1e-9)
    assert float(high[0]) == pytest.approx(ref_high, abs=1e-9)


@pytest.mark.parametrize("p", [(0.1, 0.2, 0.9, 0.95, 0.5, 0.3, 0.7, 0.05), (0.5,) * 8])
def test_fixed_bets_keep_their_error_with_unequal_means_exactly(p) -> None:
    # Exact enumeration: independent 0/1 runs with unequal means p_i, every one
    # of the 2^8 outcomes weighed by its probability; each side may miss the
    # average mean with probability at most 2.5%.
    p = np.array(p)
    outcomes = np.array(list(itertools.product([0.0, 1.0], repeat=p.size)))
    prob = np.prod(np.where(outcomes == 1.0, p, 1 - p), axis=1)
    low, high = fixed_bet_limits(outcomes, 0.95)
    target = p.mean()
    assert float(prob[low > target].sum()) <= 0.025
    assert float(prob[high < target].sum()) <= 0.025


# --- bootstraps ----------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_balanced_is_scipys_with_the_same_seed(method: str) -> None:
    from scipy.stats import bootstrap

    y, groups = _data(300, 12, runs=3)
    ci = score_mean_ci(y, groups, about="cases_like_these", method=method, seed=5, resamples=999)
    means = np.sort([y[groups == g].mean() for g in range(12)])  # the cases in order of mean
    ref = bootstrap(
        (means,),
        np.mean,
        n_resamples=999,
        method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_bootstrap_unbalanced_resamples_cases_with_their_runs() -> None:
    from scipy.stats import bootstrap

    y, groups = _data(301, 10)
    ci = score_mean_ci(y, groups, about="cases_like_these", method="bca", seed=2, resamples=999)
    sums = np.array([y[groups == g].sum() for g in range(10)])
    sizes = np.array([float((groups == g).sum()) for g in range(10)])
    order = np.lexsort((sizes, sums / sizes))
    ref = bootstrap(
        (sums[order], sizes[order]),
        lambda s, n, axis=-1: s.sum(axis=axis) / n.sum(axis=axis),
        n_resamples=999,
        paired=True,
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_studentized_is_the_textbook_loop() -> None:
    # Efron & Tibshirani (1993), section 12.5, written one resample at a time
    y, groups = _data(302, 9)
    sums = np.array([y[groups == g].sum() for g in range(9)])
    sizes = np.array([float((groups == g).sum()) for g in range(9)])

    def est(s, n):
        r = s.sum() / n.sum()
        se = math.sqrt(9 / 8 * float(((s - r * n) ** 2).sum()) / n.sum() ** 2)
        return r, se

    r, se = est(sums, sizes)
    rng = np.random.default_rng(4)
    ts = []
    for _ in range(512 // 256):
        idx = rng.integers(0, 9, (1, 256, 9))[0]
        for row in idx:
            rr, rse = est(sums[row], sizes[row])
            ts.append((rr - r) / rse if rse > 1e-12 else math.copysign(math.inf, rr - r))
    lo_q, hi_q = np.quantile(ts, [0.025, 0.975])
    low, high = studentized_limits(sums[None], sizes[None], 0.95, 512, np.random.default_rng(4))
    assert float(low[0]) == pytest.approx(r - hi_q * se, abs=1e-12)
    assert float(high[0]) == pytest.approx(r - lo_q * se, abs=1e-12)


# --- the function's contract -----------------------------------------------------


@pytest.mark.parametrize(
    ("about", "method"), [(a, m) for a, ms in SCORE_METHODS.items() for m in ms[1:]]
)
def test_vectorised_limits_are_the_function(about: str, method: str) -> None:
    rng = np.random.default_rng(9)
    scores = rng.binomial(4, rng.beta(4, 1, (3, 8))[..., None], (3, 8, 2)) / 4
    low, high = score_limits(scores, 0.95, about=about, method=method, resamples=999, seed=1)
    for row in range(3):
        y = scores[row].reshape(-1)
        ci = score_mean_ci(
            y, np.repeat(np.arange(8), 2), about=about, method=method, resamples=999, seed=1
        )
        if method in ("t", "betting"):  # the bootstraps' draws differ row by row
            assert (ci.low, ci.high) == pytest.approx((low[row], high[row]), abs=1e-9)
        assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


@given(
    st.lists(st.tuples(st.integers(0, 5), st.floats(0, 1)), min_size=1, max_size=30),
    st.sampled_from([(a, m) for a, ms in SCORE_METHODS.items() for m in ms]),
)
def test_limits_hold_the_estimate_and_ignore_the_listing_order(rows, claim) -> None:
    about, method = claim
    cases = [c for c, _ in rows]
    y = [s for _, s in rows]
    ci = score_mean_ci(y, cases, about=about, method=method, resamples=200, seed=0)
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0
    back = score_mean_ci(
        y[::-1], [f"c{c}" for c in cases[::-1]], about=about, method=method, resamples=200, seed=0
    )
    assert (back.estimate, back.low, back.high) == pytest.approx(
        (ci.estimate, ci.low, ci.high), abs=1e-12
    )


def test_prints_as_a_score_and_says_its_claim() -> None:
    ci = score_mean_ci([0.5, 0.75, 1.0, 1.0], ["a", "a", "b", "b"], method="t")
    assert isinstance(ci, ScoreInterval)
    assert str(ci) == "0.81 (0.43 to 1.00)"
    d = ci.to_dict()
    assert d["about"] == "these_cases" and d["cases"] == 2 and d["runs"] == 4
    assert str(ScoreInterval(0.12, -0.03, 0.27, 0.95, "t", difference=True)) == (
        "+0.12 (−0.03 to +0.27)"
    )
    assert str(ScoreInterval(0.999, 0.9991, 1.0, 0.95, "t")) == "0.999 (0.999 to 1.00)"


def test_equal_scores_give_the_betting_interval_not_a_point() -> None:
    for about, method in [
        ("these_cases", "t"),
        ("cases_like_these", "t"),
        ("cases_like_these", "bca"),
        ("cases_like_these", "studentized"),
    ]:
        ci = score_mean_ci([1.0] * 12, np.repeat(np.arange(6), 2), about=about, method=method)
        assert ci.method == "betting" and ci.low < 0.8 and ci.high == 1.0, (about, method)


def test_one_case_about_cases_like_these_is_the_whole_range() -> None:
    ci = score_mean_ci([0.2, 0.4, 0.6], ["a"] * 3, about="cases_like_these")
    assert (ci.low, ci.high) == (0.0, 1.0) and "one case" in ci.note
    # ... while about these cases it is that case's interval over its repeats
    assert score_mean_ci([0.2, 0.4, 0.6], ["a"] * 3).high < 1.0


def test_auto_follows_the_stated_rule() -> None:
    assert auto_score_method(5, "cases_like_these") == "betting"
    assert auto_score_method(20, "cases_like_these") == "studentized"
    assert auto_score_method(5, "these_cases", 10) == "betting"
    assert auto_score_method(5, "these_cases", 30) == "t"
    y, g = _data(7, 25, runs=2)
    assert score_mean_ci(y, g, about="cases_like_these", seed=0).method == "studentized"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"scores": [0.5, math.nan]}, "scores[1]=nan must be between 0 and 1"),
        ({"scores": [0.5, 1.5]}, "scores[1]=1.5 must be between 0 and 1"),
        ({"scores": [0.5, 0.5], "method": "bca"}, "method='bca' is not a known method"),
        ({"scores": [0.5, 0.5], "about": "cases"}, "about='cases' is the old spelling"),
        ({"scores": [0.5, 0.5], "level": 95}, "level=95"),
        ({"scores": [0.5], "cases": ["a", "b"]}, "clusters has 2 labels but scores has 1"),
    ],
)
def test_bad_input_names_the_argument(kwargs, words) -> None:
    kwargs = {"cases": ["a", "b"], **kwargs}
    with pytest.raises(InvalidArgument, match="^" + __import__("re").escape(words)):
        score_mean_ci(kwargs.pop("scores"), kwargs.pop("cases"), **kwargs)


# --- reduced-size simulations/score_coverage.py ----------------------------------


def _simulation():
    from simulation import load

    return load("score_coverage")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "cases", "repeats"),
    [("skewed", 5, 1), ("skewed", 20, 1), ("bimodal", 10, 3), ("likert", 30, 10)],
)
def test_the_default_covers_in_the_hard_cells(kind: str, cases: int, repeats: int) -> None:
    from evalstats.stats._intervals import proportion_ci

    sim = _simulation()
    n = 400
    for about in SCORE_METHODS:
        auto = auto_score_method(cases, about, cases * repeats)
        res = sim.cell(kind, cases, repeats, n, 11, methods={(about, auto), (about, "t")})
        covered, width = res[about, auto]
        # the Monte Carlo upper limit must reach 94%: a default that covers less
        # would fail this about 19 times in 20 (the full run: 1,000 a cell)
        assert proportion_ci(covered, n).high >= 0.94, (about, auto, covered)
        if cases >= 30:
            assert width <= 1.35 * res[about, "t"][1], (about, auto, width)


def test_a_studentized_quantile_next_to_an_infinite_t_falls_back_on_betting() -> None:
    # Two cases scoring 0 and 1: most resamples repeat one case (se* = 0, t* =
    # -inf or +inf), so the quantiles fall next to infinite t*, which numpy's
    # interpolation turns to NaN. The limits are then the betting interval's,
    # said as such, and nothing warns.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = score_mean_ci(
            [0.0, 1.0], [0, 1], about="cases_like_these", method="studentized", resamples=200
        )
    assert ci.method == "betting"
    assert 0.0 <= ci.low <= ci.estimate == 0.5 <= ci.high <= 1.0


def test_a_studentized_fallback_over_cases_that_differ_says_why() -> None:
    # Three cases of means 0, 1/8 and 1/2: at 87.5% a quantile of t* falls next
    # to a resample of one case repeated (t* infinite), and the interval is
    # the betting one; its note once said every case had the same mean score.
    y, g = [0.0, 0.0, 0.25, 0.0, 1.0], [0, 1, 1, 2, 2]
    ci = score_mean_ci(
        y, g, about="cases_like_these", method="studentized", level=0.875, resamples=199, seed=3
    )
    assert ci.method == "betting"
    assert "same mean score" not in ci.note
    assert ci.note.startswith("the studentized bootstrap's limits are undefined")
    flat = score_mean_ci([0.5, 0.5, 0.5], [0, 1, 2], about="cases_like_these", method="studentized")
    assert flat.note.startswith("every case has the same mean score")
