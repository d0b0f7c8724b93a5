"""Cluster-robust intervals against statsmodels' cluster-robust OLS on a constant."""

from __future__ import annotations

import math

import betting_reference
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import clustered_outcomes, levels

from evalstats.errors import InvalidArgument
from evalstats.stats._intervals import (
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
    ci = clustered_mean_ci(y, groups, level=level, method="cr1")
    assert isinstance(ci, ClusteredInterval)
    assert ci.estimate == pytest.approx(est, abs=1e-12)
    assert ci.se == pytest.approx(se, rel=1e-10)
    assert ci.df == df == cases - 1
    assert ci.clusters == cases
    assert ci.low == pytest.approx(max(lo, 0.0), abs=1e-10)
    assert ci.high == pytest.approx(min(hi, 1.0), abs=1e-10)
    if iid_var > 0:
        assert ci.design_effect == pytest.approx(se**2 / iid_var, rel=1e-10)
    assert ci.note == f"CR1 cluster-robust SE over {cases} cases, t with {cases - 1} df"


@pytest.mark.parametrize("seed", range(6))
def test_paired_difference_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    cases = int(rng.integers(2, 25))
    groups = np.repeat(rng.permutation(cases) * 7 + 3, rng.integers(1, 6, size=cases))
    a = rng.random(groups.size) < 0.5
    b = rng.random(groups.size) < 0.65
    d = b.astype(float) - a.astype(float)
    est, se, lo, hi, df, _ = statsmodels_reference(d, groups, 0.95)
    ci = clustered_paired_diff_ci(a, b, groups, method="cr1")
    assert ci.difference and ci.estimate == pytest.approx(est, abs=1e-12)
    assert ci.se == pytest.approx(se, rel=1e-10) and ci.df == df
    assert ci.low == pytest.approx(max(lo, -1.0), abs=1e-10)
    assert ci.high == pytest.approx(min(hi, 1.0), abs=1e-10)


def test_string_labels_and_fractional_scores() -> None:
    y = [0.25, 1.0, 0.5, 0.0, 0.75, 1.0, 0.1]
    labels = ["x", "x", "y", "z", "z", "z", "w"]
    codes = np.unique(labels, return_inverse=True)[1]
    est, se, lo, hi, _, _ = statsmodels_reference(np.array(y), codes, 0.95)
    ci = clustered_mean_ci(y, labels, method="cr1")
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
    ci = clustered_mean_ci([1, 1, 1, 1], [1, 1, 2, 2], method="cr2")
    # A zero standard error says nothing about cases not run: the betting
    # interval takes over, and from two cases it cannot exclude anything.
    assert ci.se == 0.0 and ci.method == "betting" and (ci.low, ci.high) == (0.0, 1.0)
    assert "standard error is 0" in ci.note


def test_to_dict_carries_the_extra_fields() -> None:
    ci = clustered_mean_ci([1, 0, 1, 0, 1], [1, 1, 2, 2, 3])
    d = ci.to_dict()
    assert d["clusters"] == 3 and d["df"] == pytest.approx(1.8)  # Satterthwaite, sizes 2, 2, 1
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
    order = list(range(len(y)))
    rnd.shuffle(order)
    distinct = sorted(set(groups))
    shuffled = distinct[:]
    rnd.shuffle(shuffled)
    names = {g: f"case-{s}" for g, s in zip(distinct, shuffled, strict=True)}
    # CR2: nothing depends on labels or order.
    ci = clustered_mean_ci(y, groups, method="cr2")
    other = clustered_mean_ci(
        [y[i] for i in order], [names[groups[i]] for i in order], method="cr2"
    )
    assert other.estimate == pytest.approx(ci.estimate, abs=1e-12)
    assert other.se == pytest.approx(ci.se, rel=1e-9, abs=1e-12, nan_ok=True)
    if ci.method == "cr2":
        assert (other.low, other.high) == pytest.approx((ci.low, ci.high), abs=1e-9)
    # Betting takes the cases in the order of their sorted labels: reordering
    # the runs (labels kept) changes nothing.
    bet = clustered_mean_ci(y, groups, method="betting")
    again = clustered_mean_ci([y[i] for i in order], [groups[i] for i in order], method="betting")
    assert (again.low, again.high) == pytest.approx((bet.low, bet.high), abs=1e-12)


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
    assert clustered_mean_ci(y, groups, method="cr1").se == pytest.approx(se, rel=1e-9, abs=1e-12)


def test_normal_quantile_table_is_scipys_to_the_last_bit() -> None:
    from scipy.special import ndtri

    from evalstats.stats._intervals import _Z_TABLE, _z

    for level, z in _Z_TABLE.items():
        assert z == float(ndtri(0.5 + level / 2.0)), level  # scipy.special.ndtri
    assert _z(0.97) == float(ndtri(0.985))  # not in the table: scipy itself


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_t_quantile_agrees_with_scipy(level: float) -> None:
    from scipy.special import stdtrit

    from evalstats.stats._intervals import _t

    for df in [*range(1, 200), 500, 1999, 5000, 30_000]:
        expected = float(stdtrit(df, 0.5 + level / 2.0))  # scipy.special.stdtrit
        assert _t(df, level) == pytest.approx(expected, rel=1e-12, abs=0), (df, level)


def test_a_report_at_the_usual_levels_does_not_import_scipy(tmp_path) -> None:
    import subprocess
    import sys

    from records import manifest, sample, write

    samples = [
        sample(c, v, r, (r + len(c)) % 3 != 0, name="k")
        for c in ("a", "bb", "ccc")
        for v in ("A", "B")
        for r in range(4)
    ]
    path = write(tmp_path / "r.jsonl", manifest(["a", "bb", "ccc"], ["A", "B"], 4), samples)
    code = (
        "import sys\n"
        "from evalstats.presenting._report import report\n"
        "from evalstats.deciding._compare_results import compare_results\n"
        f"r = report({str(path)!r}); str(r)\n"
        f"report({str(path)!r}, level=0.9)\n"
        "print(r.variant('A').clustered.clusters, 'scipy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["3", "False"]


# --- CR2 and Satterthwaite degrees of freedom -----------------------------------


def cr2_by_matrices(y: np.ndarray, x: np.ndarray, groups: np.ndarray, c: np.ndarray):
    """CR2 variance and Satterthwaite df of c'beta, written out as matrices.

    Pustejovsky & Tipton (2018), JBES 36, eqs. (5)-(6) and (11), with OLS
    (W = I) and the working model Phi = I that clubSandwich's
    vcovCR(type = "CR2") and coef_test(test = "Satterthwaite") use for lm():
    A_j = ((I - H)_jj)^(-1/2) (Bell & McCaffrey 2002), V = M sum_j X_j' A_j
    e_j e_j' A_j X_j M, and df = (sum_j p_j'p_j)^2 / sum_i sum_j (p_i'p_j)^2
    with p_j = (I - H)_j' A_j X_j M c. Written independently of the closed
    form in evalstats.stats._intervals (which only handles a constant).

    Checked against a published clubSandwich example: on clubSandwich's
    MortalityRates data (motor-vehicle deaths 1970-1983, 700 state-years),
    OLS of mrate on legal, beertaxa and state and year effects, clustered
    by state, this function gives SE 2.5131 and df 24.5785 for legal and
    SE 5.2650 and df 5.7684 for beertaxa, where clubSandwich's article
    "Cluster-robust standard errors and hypothesis tests in panel data
    models" (section "Unweighted OLS", coef_test(lm_unweighted, vcov =
    "CR2", cluster = MV_deaths$state, test = "Satterthwaite")) prints 2.51
    and 24.58, and 5.27 and 5.77. Its example needs the Moore-Penrose root:
    with state effects every (I - H)_jj is singular. The data are not
    redistributed with these tests; the functions below check the closed form
    against this one on data drawn here.
    """
    n = y.size
    m = np.linalg.inv(x.T @ x)
    h = x @ m @ x.T
    resid = y - h @ y
    i_h = np.eye(n) - h
    meat = np.zeros((x.shape[1], x.shape[1]))
    ps = []
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        # The symmetric square root of the Moore-Penrose inverse (PT 2018,
        # eq. 5: B_j^{+1/2}); the plain inverse square root where (I - H)_jj
        # is nonsingular, and still defined when fixed effects make it
        # singular (as in the vignette's state-by-year panel).
        vals, vecs = np.linalg.eigh(i_h[np.ix_(rows, rows)])
        keep = vals > 1e-10 * max(float(vals.max()), 1.0)
        root = np.zeros_like(vals)
        root[keep] = vals[keep] ** -0.5
        a = vecs @ np.diag(root) @ vecs.T
        u = x[rows].T @ a @ resid[rows]
        meat += np.outer(u, u)
        ps.append(i_h[rows].T @ a @ x[rows] @ m @ c)
    v = m @ meat @ m
    gram = np.array([[pi @ pj for pj in ps] for pi in ps])
    return float(c @ v @ c), float(np.trace(gram) ** 2 / np.sum(gram**2))


@pytest.mark.parametrize("seed", range(8))
def test_cr2_matches_the_matrix_formulas(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    cases = int(rng.integers(2, 15))
    sizes = rng.integers(1, 9, size=cases)
    groups = np.repeat(np.arange(cases), sizes)
    y = rng.random(groups.size) < rng.beta(1, 1, size=cases)[groups]
    y = y.astype(float)
    var, df = cr2_by_matrices(y, np.ones((y.size, 1)), groups, np.ones(1))
    ci = clustered_mean_ci(y, groups, method="cr2")
    assert ci.se**2 == pytest.approx(var, rel=1e-9, abs=1e-15)
    assert ci.df == pytest.approx(df, rel=1e-9)
    if var > 0:
        from scipy.stats import t

        half = t.ppf(0.975, df) * math.sqrt(var)
        assert ci.low == pytest.approx(max(y.mean() - half, 0.0), abs=1e-9)
        assert ci.high == pytest.approx(min(y.mean() + half, 1.0), abs=1e-9)
    assert ci.method == "cr2"


def test_matrix_cr2_is_welch_with_one_run_per_cluster() -> None:
    # With every observation its own cluster CR2 is HC2, and for a difference of
    # two group means HC2 is exactly Welch's variance s1^2/n1 + s2^2/n2 (Imbens
    # & Kolesar 2016, Review of Economics and Statistics 98, section 3); scipy's
    # Welch t statistic gives that variance independently.
    from scipy.stats import ttest_ind

    rng = np.random.default_rng(7)
    y1, y2 = rng.normal(0, 1, 7), rng.normal(1, 3, 11)
    y = np.concatenate([y1, y2])
    x = np.column_stack([np.ones(18), np.r_[np.zeros(7), np.ones(11)]])
    var, _ = cr2_by_matrices(y, x, np.arange(18), np.array([0.0, 1.0]))
    welch = ttest_ind(y2, y1, equal_var=False).statistic
    assert math.sqrt(var) == pytest.approx((y2.mean() - y1.mean()) / welch, rel=1e-12)


@pytest.mark.parametrize("cases,runs", [(4, 3), (9, 1), (25, 6)])
def test_cr2_balanced_is_the_t_test_on_case_means(cases: int, runs: int) -> None:
    # Equal runs per case: CR2 equals CR1 and the Satterthwaite df are G - 1
    # (Pustejovsky & Tipton 2018, section 3.2), i.e. the one-sample t test on
    # the case means, here scipy.stats.ttest_1samp.
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(cases)
    groups = np.repeat(np.arange(cases), runs)
    y = (rng.random(groups.size) < 0.6).astype(float)
    means = y.reshape(cases, runs).mean(axis=1)
    ci = clustered_mean_ci(y, groups, method="cr2", level=0.9)
    ref = ttest_1samp(means, 0.0).confidence_interval(0.9)
    assert ci.df == pytest.approx(cases - 1, rel=1e-12)
    assert ci.se == pytest.approx(clustered_mean_ci(y, groups, method="cr1").se, rel=1e-12)
    assert ci.low == pytest.approx(max(ref.low, 0.0), abs=1e-12)
    assert ci.high == pytest.approx(min(ref.high, 1.0), abs=1e-12)


def test_cr2_unbalanced_df_below_cases_minus_one() -> None:
    # One large case among small ones: CR2 inflates that case's residual sum
    # and the Satterthwaite df fall well below G - 1 (here about 1.4).
    y = np.r_[np.tile([1.0, 0.0], 20), [1.0, 1.0], [0.0], [1.0, 0.0, 1.0]]
    groups = np.r_[np.zeros(40), [1, 1], [2], [3, 3, 3]]
    ci = clustered_mean_ci(y, groups, method="cr2")
    var, df = cr2_by_matrices(y, np.ones((y.size, 1)), groups, np.ones(1))
    assert ci.df == pytest.approx(df, rel=1e-9) and ci.df < 2.0
    assert ci.se**2 == pytest.approx(var, rel=1e-9)


# --- the betting interval ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_betting_bound_is_where_the_averaged_capital_crosses(seed: int) -> None:
    # The reference (tests/betting_reference.py) averages the capital of each
    # order of the sorted values, written from the paper one value at a time.
    from evalstats.stats._intervals import betting_limits

    rng = np.random.default_rng(seed)
    x = rng.beta(0.5, 0.3, size=int(rng.integers(4, 30)))
    low, high = betting_limits(x, 0.95)
    low, high = float(low), float(high)
    assert 0.0 <= low < x.mean() < high <= 1.0
    ref = betting_reference.averaged_capital
    assert ref(list(x), low - 1e-9, 0.025) >= 40.0 or low == 0.0
    assert ref(list(x), low + 1e-7, 0.025) < 40.0
    assert ref(list(1 - x), 1 - high - 1e-9, 0.025) >= 40.0 or high == 1.0
    assert ref(list(1 - x), 1 - high + 1e-7, 0.025) < 40.0


@settings(max_examples=25, deadline=None)
@given(
    x=st.lists(
        st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1)), min_size=1, max_size=9
    ),
    alpha=st.sampled_from([0.025, 0.05]),
)
def test_betting_lower_limit_is_the_reference_bisection(x, alpha) -> None:
    # The whole bound, bisection included, from the slow reference: equal to
    # the grid step (the two may round a product of factors differently).
    from evalstats.stats._intervals import _betting_lower

    got = float(_betting_lower(np.array(x), alpha))
    assert abs(got - betting_reference.lower_bound(x, alpha)) <= 2.0**-41


@settings(max_examples=80, deadline=None)
@given(
    x=st.lists(st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)), min_size=1, max_size=40),
    m=st.floats(0, 0.99),
    alpha=st.sampled_from([0.005, 0.025, 0.05]),
)
def test_averaged_capital_is_the_reference(x, m, alpha) -> None:
    from evalstats.stats._intervals import _wealth_blocks

    ((_, log_wealth),) = list(_wealth_blocks(np.array([x]), alpha))
    want = betting_reference.averaged_capital(x, m, alpha)
    assert math.exp(float(log_wealth(m)[0])) == pytest.approx(want, rel=1e-10)


def test_orders_are_the_documented_ones() -> None:
    from evalstats.stats._intervals import _orders
    from evalstats.stats._smallstats import orders as pure_orders

    for n in [*range(1, 13), 40, 127, 300]:
        got = _orders(n)
        want = np.array(betting_reference.orders(n)).reshape(-1, n)
        assert np.array_equal(got, want), n
        assert np.array_equal(np.array(pure_orders(n)).reshape(-1, n), want), n
        # every order is a permutation of the places, and each is used once
        assert np.array_equal(np.sort(got, axis=1), np.broadcast_to(np.arange(n), got.shape))
        assert len({tuple(o) for o in got}) == got.shape[0]
    assert _orders(3).shape == (6, 3)  # every order: 3! = 6 <= 8
    assert _orders(4).shape == (8, 4)


def test_order_keys_are_splitmix64() -> None:
    # SplitMix64 seeded with 0: its first three outputs are 0xE220A8397B1DCDAF,
    # 0x6E789E6AA1B965F4, 0x06C45D188009454F (Vigna's reference splitmix64.c;
    # Steele, Lea & Flood 2014); the package's function is the output for a state.
    from evalstats.stats._intervals import _mix

    golden = 0x9E3779B97F4A7C15
    states = np.array([0, golden, (2 * golden) % 2**64], dtype=np.uint64)
    want = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert [int(v) for v in _mix(states)] == want
    assert [betting_reference.splitmix64(int(s)) for s in states] == want


@pytest.mark.parametrize("cases", [30, 100])
def test_betting_coverage_by_exact_binomial_sums(cases: int) -> None:
    # One run per case: the interval depends only on how many cases passed
    # (it is order-free), so its coverage is a sum over the binomial
    # distribution of that count, exactly, at every true rate on a grid,
    # with the recorded orders. Each side misses at most 2.5%.
    from scipy.stats import binom

    from evalstats.stats._intervals import betting_limits

    k = np.arange(cases + 1)
    x = (np.arange(cases)[None, :] < k[:, None]).astype(float)
    low, high = betting_limits(x, 0.95)
    for p in np.linspace(0.005, 0.995, 199):
        prob = binom.pmf(k, cases, p)
        assert prob @ (low > p) <= 0.025
        assert prob @ (high < p) <= 0.025


@pytest.mark.parametrize("cases", [4, 6, 10])
def test_betting_coverage_by_exact_enumeration(cases: int) -> None:
    # One run per case: every sequence of pass/fail outcomes and its
    # probability, so the coverage is exact. It holds at every true rate,
    # and each side misses with probability at most 2.5%.
    import itertools

    seqs = np.array(list(itertools.product([0.0, 1.0], repeat=cases)))
    groups = np.arange(cases)
    cis = [clustered_mean_ci(s, groups) for s in seqs]
    low = np.array([c.low for c in cis])
    high = np.array([c.high for c in cis])
    k = seqs.sum(axis=1)
    for p in np.linspace(0.01, 0.99, 99):
        prob = p**k * (1 - p) ** (cases - k)
        assert prob @ (low > p) <= 0.025 + 1e-12
        assert prob @ (high < p) <= 0.025 + 1e-12


def test_auto_is_the_betting_interval_at_every_number_of_cases() -> None:
    # The t intervals' one-sided errors exceed their level at 100-300 cases
    # on skewed case rates (simulations/gate_margin.py, candidates), so auto
    # never switches to them; cr2 and cr1 stay available by name.
    rng = np.random.default_rng(1)
    for cases in (5, 99, 100, 400):
        groups = np.repeat(np.arange(cases), 2)
        assert clustered_mean_ci(rng.random(groups.size), groups).method == "betting"
        y = rng.random(groups.size) < 0.7
        assert clustered_paired_diff_ci(y, ~y, groups).method == "betting"
    groups = np.repeat(np.arange(150), 2)
    assert clustered_mean_ci(rng.random(groups.size), groups, method="cr2").method == "cr2"
    assert clustered_mean_ci([1, 1, 0, 1], [1, 1, 2, 2], method="cr1").method == "cr1"


def test_unknown_method_names_the_argument() -> None:
    with pytest.raises(InvalidArgument, match=r"method='cr3' is not a known method"):
        clustered_mean_ci([1, 0], [1, 2], method="cr3")


# --- the betting rule's decisions without its limits (the simulators' fast path) ---


def _random_differences(rng: np.random.Generator, rows: int, cases: int, repeats: int):
    """Per-case mean paired differences of ``repeats`` runs, rates varying by case."""
    qa = rng.beta(2.0, 1.0, size=(rows, cases))
    qb = np.clip(qa + rng.normal(rng.uniform(-0.1, 0.3), 0.15, size=(rows, cases)), 0, 1)
    return (rng.binomial(repeats, qb) - rng.binomial(repeats, qa)) / repeats


@pytest.mark.parametrize("seed", range(6))
def test_betting_signs_are_the_limits_decisions(seed: int) -> None:
    # The same decisions as the bisected limits, row for row, on random data
    # across case counts, repeats, levels and both thresholds used.
    from evalstats.stats._intervals import betting_signs, clustered_limits

    rng = np.random.default_rng(seed)
    cases = int(rng.integers(2, 100))
    repeats = int(rng.integers(1, 11))
    level = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    d = _random_differences(rng, 3000, cases, repeats)
    low, high = clustered_limits(d, level, difference=True, method="betting")
    for threshold in (0.0, 1e-12):
        want = np.where(low > threshold, 1, np.where(high < -threshold, -1, 0))
        got = betting_signs(d, level, threshold=threshold)
        assert np.array_equal(got, want)
        # The one-sided shortcut the planner counts with: the same "B better" rows, no -1.
        above = betting_signs(d, level, threshold=threshold, only_above=True)
        assert np.array_equal(above, (want == 1).astype(np.int8))
    # Not a vacuous agreement: every verdict occurs somewhere.
    assert set(np.unique(want)) >= {0, 1} or set(np.unique(want)) >= {0, -1}


@settings(max_examples=60, deadline=None)
@given(data=st.data(), cases=st.integers(2, 40), repeats=st.integers(1, 6), level=levels)
def test_betting_signs_agree_with_the_scalar_interval(data, cases, repeats, level) -> None:
    # The scalar interval compare() uses (clustered_paired_diff_ci on runs),
    # judged as compare() judges it (low > 0, high < 0).
    from evalstats.stats._intervals import betting_signs

    counts = st.lists(st.integers(0, repeats), min_size=cases, max_size=cases)
    ka, kb = np.array(data.draw(counts)), np.array(data.draw(counts))
    runs = np.arange(repeats)
    xa = (runs[None, :] < ka[:, None]).astype(float).ravel()
    xb = (runs[None, :] < kb[:, None]).astype(float).ravel()
    groups = np.repeat(np.arange(cases), repeats)
    ci = clustered_paired_diff_ci(xa, xb, groups, level=level, method="betting")
    want = 1 if ci.low > 0 else -1 if ci.high < 0 else 0
    assert betting_signs(((kb - ka) / repeats)[None, :], level)[0] == want


@settings(max_examples=60, deadline=None)
@given(
    x=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30),
    alpha=st.sampled_from([0.005, 0.025, 0.05, 0.1]),
)
def test_betting_test_is_monotone_in_the_mean(x, alpha) -> None:
    # What makes one evaluation at a grid point equal to the bisection: the
    # rows rejected at m are rejected at every smaller m.
    from evalstats.stats._intervals import _wealth_blocks

    grid = np.linspace(0.0, 1.0, 401)
    ((_, log_wealth),) = list(_wealth_blocks(np.tile(x, (grid.size, 1)), alpha))
    rej = log_wealth(grid) >= math.log(1.0 / alpha)
    assert not np.any(rej[1:] & ~rej[:-1])


def test_betting_signs_rejects_a_threshold_outside_its_range() -> None:
    from evalstats.stats._intervals import betting_signs

    with pytest.raises(InvalidArgument, match="threshold=1.5"):
        betting_signs(np.zeros((1, 4)), 0.95, threshold=1.5)
