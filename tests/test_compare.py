"""Tests of evalstats.compare: verdicts, p-values, detectable differences, per-case rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import norm
from strategies import counts, levels

from evalstats.errors import InvalidArgument
from evalstats.stats._claims import DEFAULT_NOTE
from evalstats.stats._compare import (
    EXACT_LIMIT,
    Comparison,
    _mcnemar_pvalue,
    _ztest_pvalue,
    compare,
    compare_counts,
    decide,
    detectable_difference,
)
from evalstats.stats._tango import paired_diff_pvalue

UNPAIRED = ("newcombe", "overlap", "ztest")
FLIP = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}


# --- local strategies (used only here) ------------------------------------------


@st.composite
def case_results(draw: st.DrawFn, max_cases: int = 5, max_repeats: int = 12) -> dict:
    """A mapping of case id to a non-empty list of pass/fail outcomes."""
    n_cases = draw(st.integers(1, max_cases))
    return {
        f"case{i}": draw(st.lists(st.booleans(), min_size=1, max_size=max_repeats))
        for i in range(n_cases)
    }


@st.composite
def paired_results(draw: st.DrawFn, max_cases: int = 5, max_repeats: int = 12) -> tuple:
    """Results of A and B on the same cases with the same repeat counts."""
    a = draw(case_results(max_cases=max_cases, max_repeats=max_repeats))
    b = {
        case: draw(st.lists(st.booleans(), min_size=len(x), max_size=len(x)))
        for case, x in a.items()
    }
    return a, b


def outcomes_from_cells(both: int, only_a: int, only_b: int, neither: int) -> tuple:
    """One case whose (A, B) pairs have the given 2x2 cell counts."""
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return {"case": a}, {"case": b}


def swapped(verdict: str) -> str:
    return FLIP[verdict]


# --- McNemar -------------------------------------------------------------------


def test_mcnemar_pvalue_matches_statsmodels_exact_on_a_grid() -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    for only_a in range(0, 31):
        for only_b in range(0, 31):
            # statsmodels mcnemar(table, exact=True): binomial test on table[0,1], table[1,0]
            ref = mcnemar(np.array([[5, only_a], [only_b, 7]]), exact=True).pvalue
            assert _mcnemar_pvalue(only_a, only_b) == pytest.approx(ref, rel=1e-12, abs=0)


def test_mcnemar_pvalue_matches_scipy_binomtest() -> None:
    from scipy.stats import binomtest

    for only_a, only_b in [(0, 1), (3, 9), (10, 10), (40, 61), (150, 86), (0, 12), (7, 0)]:
        m = only_a + only_b
        ref = binomtest(only_b, m, 0.5).pvalue  # scipy.stats.binomtest, two-sided
        assert _mcnemar_pvalue(only_a, only_b) == pytest.approx(ref, rel=1e-10)
    assert _mcnemar_pvalue(0, 0) == 1.0  # no discordant pair: nothing against 1/2


def test_agresti_presidential_approval() -> None:
    # Agresti (2013), Categorical Data Analysis, 3rd ed., section 11.1, table 11.1:
    # 1600 people rated the president twice; approve/approve 794, approve then
    # disapprove 150, disapprove then approve 86, disapprove/disapprove 570.
    # The book gives z = -4.17 (z^2 = 17.36), P < 0.0001, and the 95% interval
    # (-0.06, -0.02) for the change in approval (second survey minus first).
    a, b = outcomes_from_cells(794, 150, 86, 570)  # A: first survey, B: second
    c = compare(a, b)
    assert c.paired and c.method == "mcnemar"
    assert (c.both, c.only_a, c.only_b, c.neither) == (794, 150, 86, 570)
    assert c.verdict == "a_better"
    assert c.pvalue < 0.0001
    # The comparison's test is the score test, whose statistic at 0 is
    # McNemar's: without the correction it is the book's z = -4.17 ...
    z = (86 - 150) / math.sqrt(86 + 150)
    assert round(z, 2) == -4.17 and round(z * z, 2) == 17.36
    assert paired_diff_pvalue(794, 150, 86, 570, method="tango") == pytest.approx(
        2 * norm.sf(abs(z)), rel=1e-12
    )
    # ... and compare's p-value moves |only_b - only_a| a quarter of a pair towards 0
    assert c.pvalue == pytest.approx(2 * norm.sf((64 - 0.25) / math.sqrt(236)), rel=1e-12)
    assert c.difference.method == "tango_cc"
    assert c.difference.estimate == pytest.approx(-0.04)
    assert round(c.difference.low, 2) == -0.06
    assert round(c.difference.high, 2) == -0.02
    assert "A better" in str(c)
    assert "p<0.001" in str(c)


@given(paired_results(max_cases=4, max_repeats=10), levels)
def test_mcnemar_verdict_interval_and_pvalue_agree(results: tuple, level: float) -> None:
    # About these cases the verdict, the printed interval and the p-value are
    # one test: the interval excludes 0 exactly when p < 1 - level, on the
    # side the verdict says.
    a, b = results
    c = compare(a, b, level=level)
    assert c.method == "mcnemar" and c.paired
    significant = c.pvalue < 1 - level
    low, high = c.difference.low, c.difference.high
    assert significant == (low > 0 or high < 0)
    if c.verdict == "b_better":
        assert significant and low > 0 and c.only_b > c.only_a
    elif c.verdict == "a_better":
        assert significant and high < 0 and c.only_a > c.only_b
    else:
        assert not significant and low <= 0 <= high
        assert c.detectable is not None


def test_mcnemar_with_no_discordant_pairs_has_pvalue_one() -> None:
    a, b = outcomes_from_cells(12, 0, 0, 8)
    c = compare(a, b, about="these_cases")
    assert c.pvalue == 1.0
    assert c.verdict == "cant_tell"
    assert c.detectable is not None and 0 < c.detectable <= 1


# --- z test ----------------------------------------------------------------------


@given(counts(max_trials=300), counts(max_trials=300))
def test_ztest_pvalue_matches_statsmodels(a: tuple, b: tuple) -> None:
    from statsmodels.stats.proportion import proportions_ztest

    (ka, na), (kb, nb) = a, b
    assume(0 < ka + kb < na + nb)  # statsmodels' z is 0/0 when every trial agrees
    _, ref = proportions_ztest([kb, ka], [nb, na], value=0)  # pooled, two-sided
    assert _ztest_pvalue(ka, na, kb, nb) == pytest.approx(ref, rel=1e-9, abs=1e-300)
    c = compare_counts(ka, na, kb, nb, method="ztest")
    assert c.pvalue == pytest.approx(ref, rel=1e-9, abs=1e-300)
    if ref < 0.05:
        assert c.verdict == ("b_better" if kb / nb > ka / na else "a_better")
    else:
        assert c.verdict == "cant_tell"


def test_ztest_reference_values() -> None:
    from statsmodels.stats.proportion import proportions_ztest

    for ka, na, kb, nb in [(30, 40, 39, 40), (20, 50, 40, 50), (82, 100, 98, 120)]:
        _, ref = proportions_ztest([kb, ka], [nb, na])  # statsmodels, pooled variance
        assert compare_counts(ka, na, kb, nb, method="ztest").pvalue == pytest.approx(ref)


def test_ztest_when_every_trial_agrees() -> None:
    c = compare_counts(10, 10, 15, 15, method="ztest")
    assert c.verdict == "cant_tell" and c.pvalue == 1.0
    assert "0/0" in c.reason


# --- Newcombe and overlap ---------------------------------------------------------


@given(counts(max_trials=200), counts(max_trials=200), levels)
def test_newcombe_verdict_is_its_interval(a: tuple, b: tuple, level: float) -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep

    (ka, na), (kb, nb) = a, b
    c = compare_counts(ka, na, kb, nb, level=level)
    low, high = c.difference.low, c.difference.high
    expected = "b_better" if low > 0 else "a_better" if high < 0 else "cant_tell"
    assert c.verdict == expected
    assert c.pvalue is None
    # statsmodels confint_proportions_2indep(method="newcomb") for p_b - p_a
    ref = confint_proportions_2indep(kb, nb, ka, na, method="newcomb", alpha=1 - level)
    assert low == pytest.approx(ref[0], abs=1e-9)
    assert high == pytest.approx(ref[1], abs=1e-9)


def _wilson_sm(k: int, n: int, level: float) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return float(lo), float(hi)


@given(counts(max_trials=150), counts(max_trials=150), levels)
def test_overlap_rule_against_statsmodels_wilson(a: tuple, b: tuple, level: float) -> None:
    # Reference: statsmodels proportion_confint(method="wilson"), rule low_b > high_a.
    (ka, na), (kb, nb) = a, b
    la, ha = _wilson_sm(ka, na, level)
    lb, hb = _wilson_sm(kb, nb, level)
    assume(abs(lb - ha) > 1e-9 and abs(la - hb) > 1e-9)  # no floating-point ties
    expected = "b_better" if lb > ha else "a_better" if la > hb else "cant_tell"
    assert compare_counts(ka, na, kb, nb, method="overlap", level=level).verdict == expected


def test_overlap_hand_computed_example() -> None:
    # statsmodels proportion_confint(30, 40, method="wilson") = (0.5981, 0.8581) and
    # proportion_confint(39, 40, method="wilson") = (0.8712, 0.9956): apart, so B better.
    assert _wilson_sm(30, 40, 0.95)[1] == pytest.approx(0.8581, abs=1e-4)
    assert _wilson_sm(39, 40, 0.95)[0] == pytest.approx(0.8712, abs=1e-4)
    c = compare_counts(30, 40, 39, 40, method="overlap")
    assert c.verdict == "b_better"
    assert "apart" in str(c)
    # 33/40 = (0.6794, 0.9125) overlaps 39/40, although Newcombe's interval may not.
    assert compare_counts(33, 40, 39, 40, method="overlap").verdict == "cant_tell"


@given(counts(max_trials=200), counts(max_trials=200), levels)
def test_overlap_b_better_implies_newcombe_b_better(a: tuple, b: tuple, level: float) -> None:
    # True by the triangle inequality: Newcombe's lower limit is
    # d - sqrt((p_b - l_b)^2 + (u_a - p_a)^2) >= d - (p_b - l_b) - (u_a - p_a) = l_b - u_a.
    (ka, na), (kb, nb) = a, b
    v = compare_counts(ka, na, kb, nb, method="overlap", level=level).verdict
    if v != "cant_tell":
        assert compare_counts(ka, na, kb, nb, method="newcombe", level=level).verdict == v


# --- decide -----------------------------------------------------------------------


@given(
    st.lists(st.tuples(counts(max_trials=60), counts(max_trials=60)), min_size=1, max_size=20),
    st.sampled_from(UNPAIRED),
    levels,
)
def test_vectorised_decide_equals_scalar_loop(pairs: list, method: str, level: float) -> None:
    ka = np.array([p[0][0] for p in pairs])
    na = np.array([p[0][1] for p in pairs])
    kb = np.array([p[1][0] for p in pairs])
    nb = np.array([p[1][1] for p in pairs])
    vec = decide(ka, na, kb, nb, method=method, level=level)
    loop = [int(decide(*q, method=method, level=level)) for q in zip(ka, na, kb, nb, strict=True)]
    assert vec.tolist() == loop
    names = {1: "b_better", -1: "a_better", 0: "cant_tell"}
    verdicts = [
        compare_counts(*map(int, q), method=method, level=level).verdict
        for q in zip(ka, na, kb, nb, strict=True)
    ]
    assert [names[v] for v in loop] == verdicts


def test_decide_broadcasts_over_an_outcome_grid() -> None:
    k = np.arange(21)
    grid = decide(k[:, None], 20, k[None, :], 20)
    assert grid.shape == (21, 21) and grid.dtype == np.int8
    assert (grid == -grid.T).all()  # swapping A and B flips every verdict
    assert grid[0, 20] == 1 and grid[20, 0] == -1 and (np.diag(grid) == 0).all()


def test_decide_zero_trials_is_cant_tell() -> None:
    assert decide([0, 5], [0, 10], [3, 10], [10, 10]).tolist() == [0, 1]
    assert decide(3, 10, 0, 0, method="ztest").tolist() == 0


# --- symmetry and pooling -----------------------------------------------------------


@given(counts(max_trials=200), counts(max_trials=200), st.sampled_from(UNPAIRED), levels)
def test_swapping_a_and_b_flips_the_verdict(a: tuple, b: tuple, method: str, level: float) -> None:
    (ka, na), (kb, nb) = a, b
    ab = compare_counts(ka, na, kb, nb, method=method, level=level)
    ba = compare_counts(kb, nb, ka, na, method=method, level=level)
    assert ba.verdict == swapped(ab.verdict)
    assert ba.difference.low == pytest.approx(-ab.difference.high, abs=1e-12)
    assert ba.difference.high == pytest.approx(-ab.difference.low, abs=1e-12)
    assert ba.difference.estimate == pytest.approx(-ab.difference.estimate, abs=1e-12)
    if ab.pvalue is not None:
        assert ba.pvalue == pytest.approx(ab.pvalue, rel=1e-12)


@given(paired_results(max_cases=4, max_repeats=8), st.sampled_from(["mcnemar", "clustered"]))
def test_swapping_paired_results_flips_the_verdict(results: tuple, method: str) -> None:
    a, b = results
    assume(method == "mcnemar" or len(a) >= 2)
    ab = compare(a, b, method=method)
    ba = compare(b, a, method=method)
    assert ba.verdict == swapped(ab.verdict)
    assert ba.difference.low == pytest.approx(-ab.difference.high, abs=1e-9)
    assert ba.difference.high == pytest.approx(-ab.difference.low, abs=1e-9)
    assert (ba.pvalue is None) == (ab.pvalue is None)
    if ab.pvalue is not None:
        assert ba.pvalue == pytest.approx(ab.pvalue, rel=1e-9)
    assert [r.worse for r in ba.cases] == [r.better for r in ab.cases]


def _same(x: float | None, y: float | None) -> bool:
    if x is None or y is None:
        return x is y
    return (math.isnan(x) and math.isnan(y)) or x == y


@given(case_results(), case_results(), st.sampled_from(UNPAIRED), levels)
def test_unpaired_compare_equals_compare_counts_on_pooled_counts(
    a: dict, b: dict, method: str, level: float
) -> None:
    c = compare(a, b, paired=False, method=method, level=level)
    ka, na = sum(sum(x) for x in a.values()), sum(len(x) for x in a.values())
    kb, nb = sum(sum(x) for x in b.values()), sum(len(x) for x in b.values())
    ref = compare_counts(ka, na, kb, nb, method=method, level=level)
    assert not c.paired
    assert (c.successes_a, c.trials_a, c.successes_b, c.trials_b) == (ka, na, kb, nb)
    assert c.verdict == ref.verdict
    assert c.difference == ref.difference
    assert _same(c.pvalue, ref.pvalue) and _same(c.detectable, ref.detectable)
    assert len(c.cases) == len(set(a) | set(b))


def test_compare_on_dicts_pairs_when_it_can() -> None:
    a = {"x": [True, False, True], "y": [False, False]}
    b = {"x": [True, True, True], "y": [True, False]}
    assert compare(a, b).paired
    assert compare(a, b).method == "mcnemar"
    assert not compare(a, b, paired=False).paired
    assert compare(a, b, paired=False).method == "newcombe"
    # an unpaired method asked for by name compares the pooled counts
    assert not compare(a, b, method="overlap").paired
    unequal = {"x": [True, True], "y": [True, False]}
    assert not compare(a, unequal).paired


# --- per-case rows ----------------------------------------------------------------


def test_a_case_where_b_got_clearly_worse_is_visible() -> None:
    # B improves five cases from 4/10 to 10/10 but drops one from 10/10 to 1/10.
    a = {f"c{i}": [True] * 4 + [False] * 6 for i in range(5)}
    b = {f"c{i}": [True] * 10 for i in range(5)}
    a["refund"] = [True] * 10
    b["refund"] = [False] * 9 + [True]
    for method in ("mcnemar", "clustered", "newcombe"):
        c = compare(a, b, method=method)
        rows = {r.case: r for r in c.cases}
        assert rows["refund"].worse and not rows["refund"].better
        assert (rows["refund"].passes_a, rows["refund"].passes_b) == (10, 1)
        assert rows["refund"].difference.high < 0
        assert not any(rows[f"c{i}"].worse for i in range(5))
        assert c.worse_cases == ("refund",)
        assert "B clearly worse on 1 case (discrete Holm-adjusted over 6 cases): 'refund'" in str(c)
    # About these cases (the default) the average improved.
    assert compare(a, b).verdict == "b_better" and compare(a, b).about == "these_cases"
    # About cases like these, 6 cases with one lost badly cannot tell.
    assert compare(a, b, about="cases_like_these").verdict == "cant_tell"


def test_unpaired_rows_cover_cases_run_by_one_variant_only() -> None:
    a = {"x": [True, False], "only_a": [True]}
    b = {"x": [True, True, True], "only_b": [False, False]}
    c = compare(a, b)
    assert not c.paired
    rows = {r.case: r for r in c.cases}
    assert list(rows) == ["x", "only_a", "only_b"]
    assert (rows["only_a"].trials_b, rows["only_b"].trials_a) == (0, 0)
    assert math.isnan(rows["only_a"].difference.estimate)
    assert not rows["only_a"].worse and not rows["only_a"].better


# --- clustered --------------------------------------------------------------------


@given(paired_results(max_cases=6, max_repeats=8), levels)
def test_clustered_verdict_and_pvalue_agree_with_its_interval(results: tuple, level: float) -> None:
    a, b = results
    assume(len(a) >= 2)
    c = compare(a, b, method="clustered", level=level)
    low, high = c.difference.low, c.difference.high
    expected = "b_better" if low > 0 else "a_better" if high < 0 else "cant_tell"
    assert c.verdict == expected
    # the t test's p-value, or the betting capital's (few cases, or no spread
    # between cases): either rejects exactly when the interval excludes 0
    assert 0.0 <= c.pvalue <= 1.0
    if abs(low) > 1e-9 and abs(high) > 1e-9:  # away from ties at the boundary
        assert (c.pvalue < 1 - level) == (c.verdict != "cant_tell")


def test_clustered_pvalue_matches_statsmodels_cluster_robust_ols() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(7)
    a = {f"c{i}": list(rng.random(6) < 0.5) for i in range(12)}
    b = {f"c{i}": list(rng.random(6) < 0.7) for i in range(12)}
    a = {k: [bool(x) for x in v] for k, v in a.items()}
    b = {k: [bool(x) for x in v] for k, v in b.items()}
    from evalstats.stats._compare import _clustered_pvalue
    from evalstats.stats._intervals import clustered_paired_diff_ci

    d = np.concatenate([np.array(b[k], float) - np.array(a[k], float) for k in a])
    groups = np.repeat(np.arange(12), 6)
    xa = np.concatenate([np.array(a[k], float) for k in a])
    xb = np.concatenate([np.array(b[k], float) for k in a])
    c = clustered_paired_diff_ci(xa, xb, groups, method="cr1")
    # statsmodels: OLS of the paired differences on a constant, cluster-robust by
    # case, t with cases - 1 degrees of freedom.
    fit = sm.OLS(d, np.ones_like(d)).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    assert c.estimate == pytest.approx(fit.params[0])
    assert _clustered_pvalue(c) == pytest.approx(fit.pvalues[0], rel=1e-6)
    # Balanced, so CR2 with Satterthwaite df gives the same test.
    cr2 = clustered_paired_diff_ci(xa, xb, groups, method="cr2")
    assert _clustered_pvalue(cr2) == pytest.approx(fit.pvalues[0], rel=1e-6)


def test_clustered_detectable_against_statsmodels_ttestpower() -> None:
    # (t_{1-a/2} + t_{power}) * SE approximates the one-sample t test's power;
    # statsmodels TTestPower (noncentral t) gives the exact effect size in SD
    # units, d = effect * sqrt(cases) * SE.
    from statsmodels.stats.power import TTestPower

    from evalstats.stats._compare import _clustered_detectable

    for cases in (5, 10, 30):
        se = 0.05
        effect = TTestPower().solve_power(effect_size=None, nobs=cases, alpha=0.05, power=0.8)
        ref = effect * math.sqrt(cases) * se
        assert _clustered_detectable(se, cases, 0.95, 0.8) == pytest.approx(ref, rel=0.05)


def test_clustered_needs_two_cases() -> None:
    with pytest.raises(InvalidArgument, match="at least 2 cases"):
        compare({"x": [True, False]}, {"x": [True, True]}, method="clustered")


# --- the detectable difference ---------------------------------------------------------


def _binom_pmf(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def _power_independent_by_hand(na: int, nb: int, rate: float, d: float) -> float:
    """Exact power of the Newcombe rule, from statsmodels' interval and math.comb."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    pa = min(max(rate - d / 2, 0.0), 1.0 - d)
    pb = pa + d
    total = 0.0
    for ka in range(na + 1):
        wa = _binom_pmf(ka, na, pa)
        for kb in range(nb + 1):
            low, _ = confint_proportions_2indep(kb, nb, ka, na, method="newcomb")
            if low > 0:
                total += wa * _binom_pmf(kb, nb, pb)
    return total


@pytest.mark.parametrize(("na", "nb", "rate"), [(12, 12, 0.5), (15, 10, 0.8)])
def test_detectable_difference_by_exact_enumeration(na: int, nb: int, rate: float) -> None:
    d = detectable_difference(na, nb, rate=rate)
    assert 0 < d < 1
    assert _power_independent_by_hand(na, nb, rate, d) >= 0.8
    assert _power_independent_by_hand(na, nb, rate, d - 1e-4) < 0.8


def _power_mcnemar_by_hand(pairs: int, disc: float, d: float, level: float) -> float:
    """Exact power of compare's paired rule, a trinomial sum.

    The rule written out from the formula, with scipy's normal quantile: B is
    better when McNemar's statistic with |only_b - only_a| moved a quarter of
    a pair towards 0 exceeds z (Tango's score statistic at 0).
    """
    z = norm.ppf(0.5 + level / 2)
    pi = max(disc, d)
    pb, pa = (pi + d) / 2, (pi - d) / 2
    total = 0.0
    for only_a in range(pairs + 1):
        for only_b in range(pairs + 1 - only_a):
            m = only_a + only_b
            if only_b <= only_a or (only_b - only_a - 0.25) / math.sqrt(m) <= z:
                continue
            rest = pairs - only_a - only_b
            ways = math.comb(pairs, only_a) * math.comb(pairs - only_a, only_b)
            total += ways * pa**only_a * pb**only_b * (1 - pi) ** rest
    return total


@pytest.mark.parametrize(("pairs", "disc"), [(25, 0.3), (30, 0.0), (20, 0.6)])
def test_detectable_difference_mcnemar_by_exact_enumeration(pairs: int, disc: float) -> None:
    d = detectable_difference(pairs, method="mcnemar", discordance=disc)
    assert 0 < d < 1
    assert _power_mcnemar_by_hand(pairs, disc, d, 0.95) >= 0.8
    assert _power_mcnemar_by_hand(pairs, disc, d - 1e-4, 0.95) < 0.8


@given(st.integers(1, 14), st.floats(0, 1), st.sampled_from([0.8, 0.9, 0.95]))
def test_mcnemar_detectable_is_where_power_reaches_80_percent(
    pairs: int, disc: float, level: float
) -> None:
    d = detectable_difference(pairs, method="mcnemar", discordance=disc, level=level)
    if math.isnan(d):
        assert _power_mcnemar_by_hand(pairs, disc, 1.0, level) < 0.8
        return
    assert 0 <= d <= 1
    assert _power_mcnemar_by_hand(pairs, disc, d, level) >= 0.8
    if d > 1e-4:
        assert _power_mcnemar_by_hand(pairs, disc, d - 1e-4, level) < 0.8


@given(
    st.integers(1, 40),
    st.integers(1, 40),
    st.floats(0, 1),
    st.sampled_from(UNPAIRED),
    st.sampled_from([0.8, 0.9, 0.95]),
)
def test_detectable_difference_is_where_power_reaches_80_percent(
    na: int, nb: int, rate: float, method: str, level: float
) -> None:
    def pmf(n: int, p: float) -> np.ndarray:
        return np.array([_binom_pmf(k, n, p) for k in range(n + 1)])

    d = detectable_difference(na, nb, rate=rate, method=method, level=level)
    if math.isnan(d):
        # even the largest difference (p_a = 0, p_b = 1) is not usually detected
        ka, kb = np.arange(na + 1), np.arange(nb + 1)
        wins = decide(ka[:, None], na, kb[None, :], nb, method=method, level=level) == 1
        assert pmf(na, 0.0) @ wins @ pmf(nb, 1.0) < 0.8
        return

    def power_at(x: float) -> float:
        pa = min(max(rate - x / 2, 0.0), 1.0 - x)
        ka, kb = np.arange(na + 1), np.arange(nb + 1)
        wins = decide(ka[:, None], na, kb[None, :], nb, method=method, level=level) == 1
        return float(pmf(na, pa) @ wins @ pmf(nb, pa + x))

    assert 0 <= d <= 1
    assert power_at(d) >= 0.8
    if d > 1e-4:
        assert power_at(d - 1e-4) < 0.8


def test_detectable_difference_normal_approximation_against_statsmodels() -> None:
    # statsmodels NormalIndPower works with Cohen's h = 2 asin(sqrt(p_b)) -
    # 2 asin(sqrt(p_a)); an approximate cross-check of the normal approximation
    # used above EXACT_LIMIT trials per side.
    from statsmodels.stats.power import NormalIndPower

    for n in (EXACT_LIMIT + 1, 5000, 20000):
        d = detectable_difference(n, rate=0.5)
        h = NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8)
        ours = 2 * math.asin(math.sqrt(0.5 + d / 2)) - 2 * math.asin(math.sqrt(0.5 - d / 2))
        assert ours == pytest.approx(h, rel=0.01)


@pytest.mark.slow
def test_exact_and_normal_detectable_differences_meet_at_the_limit() -> None:
    exact = detectable_difference(EXACT_LIMIT, rate=0.7)
    approx = detectable_difference(EXACT_LIMIT + 1, rate=0.7)
    assert exact == pytest.approx(approx, rel=0.03)
    exact = detectable_difference(EXACT_LIMIT, method="mcnemar", discordance=0.2)
    approx = detectable_difference(EXACT_LIMIT + 1, method="mcnemar", discordance=0.2)
    assert exact == pytest.approx(approx, rel=0.03)


def test_detectable_difference_is_nan_when_too_few_trials() -> None:
    # With one trial per side, Newcombe's interval for 0/1 against 1/1 still
    # contains 0, so no difference is ever detected.
    assert math.isnan(detectable_difference(1, rate=0.5))
    c = compare_counts(0, 1, 1, 1)
    assert c.verdict == "cant_tell" and math.isnan(c.detectable)
    assert "too few" in str(c)
    assert json.loads(json.dumps(c.to_dict(), allow_nan=False))["detectable"] is None


def test_cant_tell_always_carries_a_detectable_difference() -> None:
    c = compare_counts(33, 40, 36, 40)
    assert c.verdict == "cant_tell"
    assert 0 < c.detectable < 1
    assert f"{math.ceil(100 * c.detectable)} points or more" in str(c)
    assert compare_counts(5, 40, 36, 40).detectable is None


# --- text and JSON -----------------------------------------------------------------


@given(
    st.one_of(
        st.tuples(counts(max_trials=60), counts(max_trials=60), st.sampled_from(UNPAIRED)),
        paired_results(max_cases=4, max_repeats=8),
    ),
    levels,
)
def test_text_never_says_no_difference(data: tuple, level: float) -> None:
    if len(data) == 3:
        (ka, na), (kb, nb), method = data
        results = [compare_counts(ka, na, kb, nb, method=method, level=level)]
    else:
        a, b = data
        results = [compare(a, b, level=level), compare(a, b, paired=False, level=level)]
        if len(a) >= 2:
            results.append(compare(a, b, method="clustered", level=level))
    for c in results:
        text = str(c)
        assert "no difference" not in text.lower()
        assert "\n" not in text
        if c.verdict == "cant_tell":
            assert text.startswith("can't tell yet")
            assert c.detectable is not None
        json.dumps(c.to_dict(), allow_nan=False)


def test_str_reads_like_the_examples() -> None:
    c = compare_counts(20, 50, 40, 50)
    assert str(c) == "B better: +40% (+21% to +55%), newcombe, 95%"
    c = compare_counts(40, 50, 20, 50, level=0.99)
    assert str(c).startswith("A better: −40% (")
    assert str(c).endswith("newcombe, 99%")


def test_zero_trials_is_cant_tell_with_a_reason() -> None:
    c = compare_counts(0, 0, 3, 10)
    assert c.verdict == "cant_tell"
    assert "trials_a=0" in c.reason
    assert str(c) == "can't tell yet: trials_a=0: no outcomes to compare"
    assert math.isnan(c.difference.estimate)
    c = compare_counts(0, 0, 0, 0, method="ztest")
    assert "trials_a=0 and trials_b=0" in str(c)
    json.dumps(c.to_dict(), allow_nan=False)


def test_to_dict_is_json_ready() -> None:
    a = {"x": [True, False, True, True], "y": [False, True, False, False]}
    b = {"x": [True, True, True, True], "y": [True, True, False, True]}
    d = json.loads(json.dumps(compare(a, b).to_dict(), allow_nan=False))
    assert d["verdict"] in ("b_better", "a_better", "cant_tell")
    assert d["paired"] is True and d["method"] == "mcnemar"
    assert [row["case"] for row in d["cases"]] == ["x", "y"]
    assert d["summary"] == str(compare(a, b))


def test_comparison_is_frozen() -> None:
    c = compare_counts(3, 10, 5, 10)
    assert isinstance(c, Comparison)
    with pytest.raises(AttributeError):
        c.verdict = "b_better"  # type: ignore[misc]


# --- bad input ----------------------------------------------------------------------


def test_unknown_method_suggests_the_closest() -> None:
    with pytest.raises(InvalidArgument, match=r"method='newcomb'.*did you mean 'newcombe'"):
        compare_counts(3, 10, 5, 10, method="newcomb")
    with pytest.raises(InvalidArgument, match=r"did you mean 'mcnemar'"):
        compare({"x": [True]}, {"x": [False]}, method="mcnemr")
    # A misspelled paired method given for counts is named too, with why it does not fit.
    for typo, meant in [("mcnemr", "mcnemar"), ("clusterd", "clustered")]:
        with pytest.raises(InvalidArgument) as info:
            compare_counts(3, 10, 5, 10, method=typo)
        assert f"method={typo!r} is not a known method (did you mean {meant!r}? " in str(info.value)
        assert "pass per-case outcomes to compare()" in str(info.value)
        assert "for counts choose one of 'newcombe', 'overlap', 'ztest'" in str(info.value)
    with pytest.raises(InvalidArgument, match=r"^method='xyz' is not a known method; choose"):
        decide(3, 10, 5, 10, method="xyz")


def test_paired_method_on_counts_says_why() -> None:
    with pytest.raises(InvalidArgument, match=r"method='mcnemar' needs outcomes paired"):
        compare_counts(3, 10, 5, 10, method="mcnemar")
    with pytest.raises(InvalidArgument, match=r"method='clustered' needs outcomes paired"):
        decide(3, 10, 5, 10, method="clustered")


def test_paired_method_on_unpaired_results_says_why() -> None:
    a = {"x": [True, False], "y": [True]}
    b = {"x": [True, True, True], "z": [False]}
    with pytest.raises(InvalidArgument, match=r"method='mcnemar' needs outcomes paired.*'y'"):
        compare(a, b, method="mcnemar")
    with pytest.raises(InvalidArgument, match=r"paired=False was asked for"):
        compare(a, a, method="mcnemar", paired=False)


def test_paired_true_with_mismatched_shapes_names_what_differs() -> None:
    a = {"x": [True, False], "y": [True]}
    with pytest.raises(InvalidArgument, match=r"cases only in results_a: 'y'"):
        compare(a, {"x": [True, True]}, paired=True)
    with pytest.raises(InvalidArgument, match=r"cases only in results_b: 'z'"):
        compare(a, {**a, "z": [True]}, paired=True)
    with pytest.raises(
        InvalidArgument,
        match=r"repeat counts differ: results_a\['x'\] has 2, results_b\['x'\] has 3",
    ):
        compare(a, {"x": [True] * 3, "y": [False]}, paired=True)
    with pytest.raises(InvalidArgument, match=r"method='newcombe' treats A and B as independent"):
        compare(a, a, paired=True, method="newcombe")


def test_bad_results() -> None:
    with pytest.raises(InvalidArgument, match=r"results_a=\{\} is empty"):
        compare({}, {"x": [True]})
    with pytest.raises(InvalidArgument, match=r"results_b\['x'\]\[1\]=1 must be True or False"):
        compare({"x": [True, False]}, {"x": [True, 1]})
    with pytest.raises(InvalidArgument, match=r"results_a\['x'\] is empty"):
        compare({"x": []}, {"x": [True]})
    with pytest.raises(InvalidArgument, match=r"results_a\['x'\]='pass' must be a sequence"):
        compare({"x": "pass"}, {"x": [True]})
    with pytest.raises(InvalidArgument, match=r"results_a must map each case id"):
        compare([True, False], {"x": [True]})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"paired='yes'"):
        compare({"x": [True]}, {"x": [True]}, paired="yes")  # type: ignore[arg-type]


def test_bad_counts_name_the_argument() -> None:
    with pytest.raises(InvalidArgument, match=r"^successes_a=12 is larger than trials_a=10$"):
        compare_counts(12, 10, 5, 10)
    with pytest.raises(InvalidArgument, match=r"successes_b=-1 is negative"):
        compare_counts(3, 10, -1, 10)
    with pytest.raises(InvalidArgument, match=r"trials_b=2.5 must be a whole number"):
        compare_counts(3, 10, 1, 2.5)
    with pytest.raises(InvalidArgument, match=r"trials_a=nan must be a finite"):
        compare_counts(3, float("nan"), 1, 2)
    with pytest.raises(InvalidArgument, match=r"level=95 must be between 0 and 1 \(did you mean"):
        compare_counts(3, 10, 5, 10, level=95)
    with pytest.raises(
        InvalidArgument,
        match=r"^level=1 must be strictly between 0 and 1 \(a confidence level such as 0.95\)$",
    ):
        compare_counts(3, 10, 5, 10, level=1)
    with pytest.raises(InvalidArgument, match=r"successes_a has shape \(2,\)"):
        compare_counts([1, 2], 10, 5, 10)  # type: ignore[arg-type]
    with pytest.raises(
        InvalidArgument, match=r"successes_b\[1\]=11 is larger than trials_b\[1\]=10"
    ):
        decide([1, 2], 10, [3, 11], 10)
    with pytest.raises(InvalidArgument, match=r"discordance=None"):
        detectable_difference(10, method="mcnemar")
    with pytest.raises(InvalidArgument, match=r"trials_a=0 must be at least 1"):
        detectable_difference(0)
    with pytest.raises(InvalidArgument, match=r"power=1.0 must be strictly between 0 and 1"):
        detectable_difference(10, power=1.0)


def test_clustered_without_spread_between_cases() -> None:
    same = {"x": [True, False, True], "y": [False, False, True]}
    c = compare(same, same, method="clustered")
    assert c.verdict == "cant_tell" and c.pvalue == 1.0
    assert c.difference.method == "betting" and c.method == "clustered"
    # From 2 cases nothing can be told about cases like these: even a gain of
    # +1 on both has probability 1/4 under no difference.
    assert math.isnan(c.detectable)
    # Every case improved alike: the clustered SE is 0, and a zero-width
    # interval would claim "B better" from 3 cases. The distribution-free
    # interval cannot: a gain of +1 on all three has probability 1/8 when half
    # the cases like these gain +1 and half lose 1 (mean 0).
    a = {f"case {i}": [False] * 4 for i in range(3)}
    b = {f"case {i}": [True] * 4 for i in range(3)}
    c = compare(a, b, method="clustered")
    assert c.verdict == "cant_tell" and c.difference.low < 0
    # Six cases all gaining +1 is 1/64 < 2.5% under such a mean-0 spread: it can.
    a = {f"case {i}": [False] * 2 for i in range(6)}
    b = {f"case {i}": [True] * 2 for i in range(6)}
    c = compare(a, b, method="clustered")
    assert c.verdict == "b_better" and c.difference.low > 0


def test_clustered_false_positive_rate_stays_nominal_with_two_cases() -> None:
    # Exact enumeration over every outcome of 2 cases x 1 run with p_a = p_b = 0.5
    # (each of the 4 outcomes equally likely, 4**2 tables of 16 pairs): the chance
    # of a false "B better" must not exceed the nominal 2.5% one side.
    import itertools

    outcomes = list(itertools.product([False, True], repeat=4))
    false_b = 0
    for xa, ya, xb, yb in outcomes:
        c = compare({"x": [xa], "y": [ya]}, {"x": [xb], "y": [yb]}, method="clustered")
        false_b += c.verdict == "b_better"
    assert false_b / len(outcomes) <= 0.025


def test_clustered_zero_standard_error_up_to_rounding_is_zero() -> None:
    # 120 cases x 3 runs, A passes 2 of 3 and B 3 of 3 in every case: the cluster
    # residual sums leave ~1e-17, not 0. That must count as no spread (the
    # betting interval), never as a tiny standard error claiming certainty.
    from evalstats.stats._intervals import clustered_paired_diff_ci

    a = {f"c{i}": [True, True, False] for i in range(120)}
    b = {f"c{i}": [True, True, True] for i in range(120)}
    c = compare(a, b, method="clustered")
    # the same with the t interval asked for by name: it gives way to betting
    groups = np.repeat(np.arange(120), 3)
    ya = np.tile([1.0, 1.0, 0.0], 120)
    t_ci = clustered_paired_diff_ci(ya, np.ones(360), groups, method="cr2")
    assert t_ci.method == "betting" and t_ci.se == 0.0
    assert c.difference.method == "betting" and c.difference.se == 0.0
    assert c.verdict == "b_better" and 0 < c.difference.low < 1 / 3 - 0.02


def test_adjust_pvalues_is_holms_step_down() -> None:
    from evalstats.stats._compare import adjust_pvalues

    # Holm (1979) by hand: sorted p (0.01, 0.03, 0.04) times (3, 2, 1) is
    # (0.03, 0.06, 0.04), made non-decreasing: (0.03, 0.06, 0.06).
    got = adjust_pvalues([0.04, 0.01, 0.03, math.nan])
    assert got[:3].tolist() == pytest.approx([0.06, 0.03, 0.06])
    assert math.isnan(got[3])
    # Bonferroni: times the number tested, capped at 1; "none" leaves them
    assert adjust_pvalues([0.04, 0.01, 0.5], method="bonferroni").tolist() == pytest.approx(
        [0.12, 0.03, 1.0]
    )
    assert adjust_pvalues([0.04, 0.01], method="none").tolist() == [0.04, 0.01]
    # and statsmodels' multipletests on random p-values, with ties
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 40):
        p = np.round(rng.random(size) ** 3, 2)
        for method in ("holm", "bonferroni"):
            ref = multipletests(p, method=method)[1]
            assert adjust_pvalues(p, method=method) == pytest.approx(ref, abs=1e-15)
    with pytest.raises(InvalidArgument, match="adjust='hochberg'"):
        adjust_pvalues([0.1], method="hochberg")


@given(
    st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12), st.data()), min_size=1, max_size=5)
)
def test_unpaired_case_pvalues_are_fishers(tables) -> None:
    from scipy.stats import fisher_exact

    from evalstats.stats._compare import _fisher_pvalues

    rows = []
    for na, nb, data in tables:
        rows.append((data.draw(st.integers(0, na)), na, data.draw(st.integers(0, nb)), nb))
    got = _fisher_pvalues(*np.array(rows).T)
    for (ka, na, kb, nb), p in zip(rows, got, strict=True):
        ref = fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue
        assert p == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_case_flags_are_adjusted_for_the_number_of_cases_and_say_so() -> None:
    # Ten cases, one of which B drops from 10/10 to 4/10: on its own (exact
    # McNemar, 6 discordant pairs, p = 2 / 64 = 0.031) it is flagged; Holm- or
    # Bonferroni-adjusted over ten cases it is not.
    a = {f"c{i}": [True] * 10 for i in range(10)}
    b = {f"c{i}": [True] * 10 for i in range(10)}
    b["c0"] = [True] * 4 + [False] * 6
    raw = compare(a, b, adjust="none")
    row = raw.cases[0]
    assert row.pvalue == pytest.approx(2 / 2**6)  # scipy binomtest(0, 6, 0.5)
    assert row.worse and raw.worse_cases == ("c0",)
    assert "not adjusted for the 10 cases tested" in str(raw)
    for adjust in ("holm", "bonferroni"):
        c = compare(a, b, adjust=adjust)
        assert c.adjust == adjust and not c.worse_cases
        assert c.cases[0].adjusted_pvalue == pytest.approx(min(1.0, 10 * row.pvalue))
        # the exploratory per-case interval is the same, adjusted or not
        assert c.cases[0].difference == row.difference
        assert c.to_dict()["cases"][0]["adjusted_pvalue"] == pytest.approx(10 * 2 / 2**6)
    # The other nine cases have no discordant pair, so their tests can give no
    # p-value but 1: the discrete adjustments (the default) do not count them.
    for adjust in ("discrete_holm", "tarone"):
        c = compare(a, b, adjust=adjust)
        assert c.cases[0].adjusted_pvalue == pytest.approx(row.pvalue)
        assert c.worse_cases == ("c0",)
    assert compare(a, b).adjust == "discrete_holm"
    assert "discrete Holm-adjusted over 10 cases" in compare(a, b).flags_text()
    with pytest.raises(InvalidArgument, match="adjust='sidak'"):
        compare(a, b, adjust="sidak")


@pytest.mark.parametrize(("cases", "runs", "paired"), [(20, 10, True), (40, 5, False)])
def test_with_a_equal_to_b_few_comparisons_flag_any_case(cases, runs, paired) -> None:
    # Reduced version of simulations/case_flags.py part 2 through compare(): A
    # and B identical per case (case rates from a Beta, icc 0.3), 200
    # comparisons; the flags (discrete Holm, the default) mark some case in at
    # most 5% of them (Monte-Carlo margin), while unadjusted flags do so far
    # more often. tests/test_case_flags.py runs larger ones.
    from evalstats.planning._power import CaseModel

    rng = np.random.default_rng(cases)
    rates, _ = CaseModel(0.7, 0.7, 0.3).draw(rng, (200, cases))
    flagged = {"discrete_holm": 0, "none": 0}
    for q in rates:
        a = {f"c{i}": list(rng.random(runs) < x) for i, x in enumerate(q)}
        b = {f"c{i}": list(rng.random(runs) < x) for i, x in enumerate(q)}
        for adjust in flagged:
            c = compare(a, b, adjust=adjust, paired=paired)
            flagged[adjust] += bool(c.worse_cases or c.better_cases)
    # at most 5% of 200 is 10; the margin of 3 is about one binomial sd
    assert flagged["discrete_holm"] <= 0.05 * 200 + 3
    assert flagged["none"] > 3 * max(flagged["discrete_holm"], 1)


def test_clustered_detectable_is_computed_for_the_rule_used() -> None:
    from scipy.stats import t

    from evalstats.planning._simulate import simulate_clustered
    from evalstats.stats._casemodel import CaseModel
    from evalstats.stats._compare import _clustered_rule_detectable
    from evalstats.stats._intervals import clustered_paired_diff_ci

    rng = np.random.default_rng(3)
    # For a t interval (method="cr2", asked for by name) the detectable
    # difference is (t_.975 + t_.8) * SE on the interval's Satterthwaite df
    # (G - 1 here).
    g = 110
    ya = (rng.random((g, 2)) < 0.6).astype(float)
    yb = (rng.random((g, 2)) < 0.6).astype(float)
    ci = clustered_paired_diff_ci(ya.ravel(), yb.ravel(), np.repeat(np.arange(g), 2), method="cr2")
    assert ci.method == "cr2"
    se, df = ci.se, ci.df
    assert df == pytest.approx(g - 1)
    got = _clustered_rule_detectable(ci, (yb - ya).mean(axis=1), 0.95, 0.8)
    assert got == pytest.approx((t.ppf(0.975, df) + t.ppf(0.8, df)) * se, rel=1e-9)
    # compare's rule is the betting interval, whose power at the detectable
    # difference is simulated on the case model: about 80% (70-90% asserted).
    model = CaseModel(0.7, 0.7, 0.1)
    qa, qb = model.draw(rng, (60,))
    a = {f"c{i}": [bool(x) for x in rng.random(3) < qa[i]] for i in range(60)}
    b = {f"c{i}": [bool(x) for x in rng.random(3) < qb[i]] for i in range(60)}
    c = compare(a, b, method="clustered")
    assert c.difference.method == "betting" and c.verdict == "cant_tell"
    d = c.detectable
    sim = simulate_clustered(
        CaseModel(0.7 - d / 2, 0.7 + d / 2, 0.1), cases=60, repeats=3, experiments=2000, seed=1
    )
    assert sim.power.low >= 0.7 and sim.power.high <= 0.92


# --- about: these cases or cases like these ------------------------------------------


def _cases(n: int, a_passes: int, b_passes: int, runs: int = 4) -> tuple[dict, dict]:
    a = {f"c{i}": [True] * a_passes + [False] * (runs - a_passes) for i in range(n)}
    b = {f"c{i}": [True] * b_passes + [False] * (runs - b_passes) for i in range(n)}
    return a, b


def test_about_defaults_to_these_cases_and_says_why() -> None:
    # Outcomes given directly come from no suite declared sampled at random:
    # the verdict is the paired score test's, about these cases, labelled so.
    for n in (4, 5, 40):
        a, b = _cases(n, 1, 3)
        c = compare(a, b)
        assert (c.about, c.method, c.about_note) == ("these_cases", "mcnemar", DEFAULT_NOTE)
        assert str(c).endswith(f", about these cases; {DEFAULT_NOTE}")
        assert c.to_dict()["about"] == "these_cases"
    asked = compare(*_cases(5, 1, 3), about="cases_like_these")
    assert (asked.about, asked.method, asked.about_note) == ("cases_like_these", "clustered", "")
    assert ", about cases like these" in str(asked)


def test_scope_chosen_explicitly() -> None:
    a, b = _cases(8, 1, 3)
    assert compare(a, b, about="these_cases").method == "mcnemar"
    assert compare(a, b, about="these_cases", paired=False).method == "newcombe"
    assert compare(a, b, about="cases_like_these").method == "clustered"
    # With 3 cases a claim about cases like these can be asked for; it says so.
    few = compare(*_cases(3, 0, 4), about="cases_like_these")
    assert few.method == "clustered" and few.verdict == "cant_tell"
    assert "nothing can be said about cases like these" in few.about_note


def test_scope_bad_input_names_the_argument() -> None:
    a, b = _cases(6, 1, 3)
    with pytest.raises(
        InvalidArgument, match=r"about='cases_like_these' does not fit method='mcnemar'"
    ):
        compare(a, b, about="cases_like_these", method="mcnemar")
    with pytest.raises(
        InvalidArgument, match=r"about='these_cases' does not fit method='clustered'"
    ):
        compare(a, b, about="these_cases", method="clustered")
    with pytest.raises(
        InvalidArgument, match=r"about='case' must be 'these_cases' or 'cases_like_these'"
    ):
        compare(a, b, about="case")
    with pytest.raises(InvalidArgument, match=r"about='cases_like_these' needs at least 2 cases"):
        compare(*_cases(1, 1, 3), about="cases_like_these")
    with pytest.raises(InvalidArgument, match=r"about='cases_like_these' needs outcomes paired"):
        compare(a, b, about="cases_like_these", paired=False)


def test_unpaired_outcomes_say_why_the_verdict_is_about_these_cases() -> None:
    a, b = _cases(6, 1, 3)
    b["c0"] = [True]
    c = compare(a, b)
    assert c.about == "these_cases" and not c.paired and c.about_note == DEFAULT_NOTE
