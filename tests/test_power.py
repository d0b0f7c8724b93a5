"""Exact power, power curves, sample sizes and paired (McNemar) power."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import binom, norm
from strategies import levels, rates

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.planning._power import (
    METHODS,
    _approximate_independent,
    _outcome_probabilities,
    paired_power,
    power,
    power_curve,
    power_table,
    sample_size,
)
from evalstats.stats._compare import compare_counts, decide

# --- exact power -------------------------------------------------------------


def _full_enumeration(p_a: float, p_b: float, n_a: int, n_b: int, method: str, level=0.95):
    """P(b_better) over the whole (n_a + 1) x (n_b + 1) grid, nothing trimmed."""
    k_a = np.arange(n_a + 1)
    k_b = np.arange(n_b + 1)
    d = decide(k_a[:, None], n_a, k_b[None, :], n_b, method=method, level=level)
    return float(binom.pmf(k_a, n_a, p_a) @ (d == 1) @ binom.pmf(k_b, n_b, p_b))


@pytest.mark.parametrize("method", METHODS)
def test_power_is_the_probability_that_compare_counts_says_b_better(method):
    # Brute force through the public scalar API: every outcome pair, its
    # binomial probability, and compare_counts' own verdict.
    n_a, n_b, p_a, p_b = 9, 11, 0.45, 0.8
    total = 0.0
    for k_a in range(n_a + 1):
        for k_b in range(n_b + 1):
            verdict = compare_counts(k_a, n_a, k_b, n_b, method=method).verdict
            if verdict == "b_better":
                total += binom.pmf(k_a, n_a, p_a) * binom.pmf(k_b, n_b, p_b)
    assert power(p_a, p_b, n_a, trials_b=n_b, method=method) == pytest.approx(total, abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("p_a", "p_b", "n"), [(0.7, 0.9, 300), (0.5, 0.52, 400), (0.02, 0.1, 250)])
def test_trimmed_tails_change_power_by_less_than_the_stated_bound(method, p_a, p_b, n):
    # The docstring promises an error below 4e-12 from dropping tails < 1e-12.
    assert (
        abs(power(p_a, p_b, n, method=method) - _full_enumeration(p_a, p_b, n, n, method)) < 4e-12
    )


@given(
    p_a=rates,
    p_b=rates,
    n_a=st.integers(1, 40),
    n_b=st.integers(1, 40),
    method=st.sampled_from(METHODS),
    level=levels,
)
def test_power_matches_full_enumeration(p_a, p_b, n_a, n_b, method, level):
    got = power(p_a, p_b, n_a, trials_b=n_b, method=method, level=level)
    assert 0.0 <= got <= 1.0
    assert got == pytest.approx(_full_enumeration(p_a, p_b, n_a, n_b, method, level), abs=4e-12)


@given(p_a=rates, p_b=rates, n=st.integers(1, 80), level=levels)
def test_overlap_never_has_more_power_than_newcombe(p_a, p_b, n, level):
    # Non-overlapping Wilson intervals mean d > w_a + w_b >= sqrt(w_a^2 + w_b^2),
    # so overlap's b_better region lies inside Newcombe's.
    assert (
        power(p_a, p_b, n, method="overlap", level=level)
        <= power(p_a, p_b, n, method="newcombe", level=level) + 1e-12
    )


@given(p_a=rates, p_b=rates, n=st.integers(1, 60), method=st.sampled_from(METHODS))
def test_swapping_a_and_b_swaps_the_verdicts(p_a, p_b, n, method):
    b_better, a_better = _outcome_probabilities(p_a, p_b, n, n, method=method, level=0.95)
    b_swapped, a_swapped = _outcome_probabilities(p_b, p_a, n, n, method=method, level=0.95)
    assert b_better == pytest.approx(a_swapped, abs=1e-12)
    assert a_better == pytest.approx(b_swapped, abs=1e-12)


@given(p_a=rates, lo=rates, hi=rates, n=st.integers(1, 60))
def test_overlap_power_grows_with_p_b(p_a, lo, hi, n):
    # Overlap's b_better region is an upper set in k_b (Wilson's lower limit
    # rises with k), so by stochastic ordering power cannot fall as p_b rises.
    lo, hi = sorted((lo, hi))
    assert power(p_a, lo, n, method="overlap") <= power(p_a, hi, n, method="overlap") + 1e-12


def test_power_at_equal_rates_is_the_false_positive_rate_near_half_alpha():
    # Large n: the two-sided 5% tests say b_better about 2.5% of the time
    # under the null (normal theory); overlap far less (Schenker & Gentleman
    # 2001: non-overlap of 95% intervals tests at about the 0.6% level).
    assert power(0.5, 0.5, 2000, method="ztest") == pytest.approx(0.025, abs=0.002)
    assert power(0.5, 0.5, 2000, method="newcombe") == pytest.approx(0.025, abs=0.002)
    assert power(0.5, 0.5, 2000, method="overlap") < 0.005


def test_exact_ztest_power_approaches_the_normal_approximation():
    # statsmodels power_proportions_2indep (pooled variance under the null,
    # unpooled under the alternative, two-sided) is the normal-approximation
    # power of the same test; at n = 1,000 per group the exact power agrees to
    # within 0.01 (the a_better tail it also counts is below 1e-6 here).
    from statsmodels.stats.proportion import power_proportions_2indep

    exact = power(0.5, 0.55, 1000, method="ztest")
    approx = power_proportions_2indep(0.05, 0.5, 1000, alpha=0.05).power
    assert exact == pytest.approx(approx, abs=0.01)


def test_degenerate_rates():
    assert 0.0 <= power(1e-310, 0.5, 10) <= 1.0  # subnormal rates do not overflow
    assert power(0.0, 1.0, 10) == 1.0
    assert power(1.0, 0.0, 10) == 0.0
    assert power(0.5, 0.5, 1) == 0.0  # one trial never shows anything


# --- power curves and tables ---------------------------------------------------


def test_power_curve_is_pointwise_power_and_shows_the_saw_tooth():
    ns = list(range(40, 90))
    curve = power_curve(0.7, 0.9, ns, method="newcombe")
    assert curve.power == pytest.approx([power(0.7, 0.9, n) for n in ns], abs=1e-12)
    assert curve.false_positive_rate == pytest.approx([power(0.7, 0.7, n) for n in ns], abs=1e-12)
    # Exact power is not monotone in n (discreteness), which is why
    # sample_size scans every n.
    assert (np.diff(curve.power) < 0).any()
    assert curve.smallest(0.8) == sample_size(0.7, 0.9, method="newcombe")
    d = curve.to_dict()
    assert d["trials"][0] == 40 and len(d["power"]) == len(ns)
    assert "false pos." in str(curve)


def test_power_table_pairs_each_power_with_its_false_positive_rate():
    table = power_table(0.7, 0.9, [20, 100], methods=["overlap", "newcombe", "mcnemar"])
    rows = {(r["method"], r["trials"]): r for r in table.rows}
    assert rows[("newcombe", 100)]["power"] == pytest.approx(power(0.7, 0.9, 100))
    assert rows[("overlap", 20)]["false_positive_rate"] == pytest.approx(
        power(0.7, 0.7, 20, method="overlap")
    )
    assert rows[("mcnemar", 20)]["power"] == pytest.approx(paired_power(0.7, 0.9, 20))
    text = str(table)
    assert "false pos." in text and "mcnemar" in text
    json.dumps(table.to_dict())


# --- sample sizes ----------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("p_a", "p_b", "target"), [(0.7, 0.9, 0.8), (0.3, 0.6, 0.9)])
def test_exact_sample_size_is_the_first_n_reaching_the_target(method, p_a, p_b, target):
    n = sample_size(p_a, p_b, power=target, method=method)
    curve = power_curve(p_a, p_b, range(1, n + 1), method=method)
    assert curve.power[-1] >= target
    assert (curve.power[:-1] < target).all()


def test_exact_sample_size_handles_a_target_inside_the_coarse_gap():
    # The scan first uses a coarse enumeration (tails of 1e-4 dropped) and
    # falls back to the full one when the target lies within 4e-4 above the
    # coarse power; a target set just below the exact power of n exercises it.
    n = sample_size(0.7, 0.8, method="ztest")
    exact = power(0.7, 0.8, n, method="ztest")
    assert sample_size(0.7, 0.8, method="ztest", power=exact - 1e-6) <= n
    assert sample_size(0.7, 0.8, method="ztest", power=exact) == n


def test_normal_sample_size_ztest_agrees_with_r_power_prop_test():
    # R documentation, ?power.prop.test, example:
    # power.prop.test(p1 = .50, p2 = .75, power = .90)  ## => n = 76.7
    # (strict = FALSE; pooled variance under the null, unpooled under the
    # alternative). The same formula by hand:
    # ((1.959964 * sqrt(0.46875) + 1.281552 * sqrt(0.4375)) / 0.25)^2 = 76.7069
    raw = _approximate_independent(0.5, 0.75, 0.9, "ztest", 0.95, "score")
    assert raw == pytest.approx(76.7069, abs=1e-3)
    assert round(raw, 1) == 76.7
    assert sample_size(0.5, 0.75, power=0.9, method="ztest", exact=False) == 77


@pytest.mark.parametrize(
    ("p_a", "p_b", "target", "level"),
    [
        (0.5, 0.75, 0.9, 0.95),
        (0.7, 0.9, 0.8, 0.95),
        (0.2, 0.25, 0.8, 0.95),
        # power 0.5 and levels 0.8-0.9: where the far rejection tail matters
        (0.5, 0.7, 0.5, 0.95),
        (0.3, 0.35, 0.5, 0.8),
        (0.6, 0.9, 0.6, 0.9),
        (0.9, 0.97, 0.5, 0.8),
        (0.5, 0.55, 0.8, 0.8),
    ],
)
def test_normal_sample_size_arcsine_agrees_with_statsmodels(p_a, p_b, target, level):
    # statsmodels NormalIndPower().solve_power(effect_size=Cohen's h), whose
    # two-sided power counts both rejection tails, as R's pwr.2p.test does:
    # for p = 0.5 vs 0.75 at 90% power it gives 76.653 (not power.prop.test's
    # 76.707: the arcsine transform differs slightly from R's formula).
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    h = proportion_effectsize(p_b, p_a)
    ref = NormalIndPower().solve_power(effect_size=abs(h), power=target, alpha=1 - level, ratio=1.0)
    raw = _approximate_independent(p_a, p_b, target, "ztest", level, "arcsine")
    assert raw == pytest.approx(ref, rel=1e-6)  # statsmodels solves by root-finding
    got = sample_size(
        p_a, p_b, power=target, method="ztest", exact=False, approximation="arcsine", level=level
    )
    assert got == math.ceil(ref - 1e-6)


def test_arcsine_sample_size_far_tail_by_hand() -> None:
    # At power 0.5 and level 0.8 the far tail adds Phi(-2 z) ~ 0.5% of power:
    # h = 2 asin(sqrt(0.35)) - 2 asin(sqrt(0.3)) = 0.10682, z = 1.28155; the
    # near tail alone needs n = 2 (z / h)^2 = 287.8, while Phi(s - z) +
    # Phi(-s - z) = 0.5 at s = h sqrt(n / 2) = 1.2680 gives n = 281.8 (scipy
    # brentq on that equation, written out here).
    from scipy.optimize import brentq
    from scipy.stats import norm

    h = 2 * math.asin(math.sqrt(0.35)) - 2 * math.asin(math.sqrt(0.3))
    z = norm.isf(0.1)
    s = brentq(lambda s: norm.cdf(s - z) + norm.cdf(-s - z) - 0.5, 0.0, 5.0)
    n = 2 * (s / h) ** 2
    assert 2 * (z / h) ** 2 - n > 5
    assert sample_size(
        0.3, 0.35, power=0.5, level=0.8, method="ztest", exact=False, approximation="arcsine"
    ) == math.ceil(n)


def test_normal_sample_size_for_the_other_rules():
    # newcombe: unpooled Wald test, n = (z_a/2 + z_b)^2 (pq_a + pq_b) / d^2;
    # (1.959964 + 0.841621)^2 * (0.21 + 0.09) / 0.04 = 58.87 -> 59.
    assert sample_size(0.7, 0.9, method="newcombe", exact=False) == 59
    # overlap needs the difference to exceed the sum of the half-widths, so it
    # needs more trials than the test of the difference.
    assert sample_size(0.7, 0.9, method="overlap", exact=False) > 59
    # And the approximations land near the exact answers.
    for m in METHODS:
        exact = sample_size(0.7, 0.9, method=m)
        approx = sample_size(0.7, 0.9, method=m, exact=False)
        assert abs(exact - approx) / exact < 0.25


def test_unreachable_target_names_the_largest_n_and_its_power():
    with pytest.raises(InvalidArgument, match=r"max_trials=30: n=30 gives power 0\.\d{3}"):
        sample_size(0.7, 0.75, max_trials=30)


# --- paired power ------------------------------------------------------------------


def _paired_brute_force(p_a, p_b, n, psi, level=0.95):
    """Sum over every (only_a, only_b) of the trinomial probability where compare's
    paired test finds B better: McNemar's statistic with |only_b - only_a| moved a
    quarter of a pair towards 0 above scipy's normal quantile (Tango's score test
    at 0, written out by hand)."""
    from scipy.stats import multinomial, norm

    z = norm.ppf(0.5 + level / 2)
    p01 = (psi + p_b - p_a) / 2  # only B passes
    p10 = (psi - p_b + p_a) / 2  # only A passes
    total = 0.0
    for only_a in range(n + 1):
        for only_b in range(n + 1 - only_a):
            d = only_a + only_b
            if d == 0 or only_b <= only_a:
                continue
            if (only_b - only_a - 0.25) / math.sqrt(d) > z:
                total += multinomial.pmf([only_a, only_b, n - d], n, [p10, p01, 1 - psi])
    return total


@pytest.mark.parametrize(
    ("p_a", "p_b", "n", "psi"), [(0.7, 0.9, 25, 0.3), (0.5, 0.6, 30, 0.5), (0.8, 0.8, 20, 0.32)]
)
def test_paired_power_equals_brute_force_enumeration(p_a, p_b, n, psi):
    got = paired_power(p_a, p_b, n, discordance=psi)
    assert got == pytest.approx(_paired_brute_force(p_a, p_b, n, psi), abs=1e-10)


def test_mcnemar_thresholds_follow_scipy_binomtest():
    # Reference: scipy.stats.binomtest(only_b, d, 0.5).pvalue, the exact
    # McNemar test, scanned over every split of d discordant pairs.
    from scipy.stats import binomtest

    from evalstats.stats._binomial import mcnemar_thresholds

    for level in (0.9, 0.95, 0.99):
        d = np.arange(0, 121)
        expected = [
            next(
                (b for b in range(m + 1) if 2 * b > m and binomtest(b, m, 0.5).pvalue < 1 - level),
                m + 1,
            )
            for m in d
        ]
        np.testing.assert_array_equal(mcnemar_thresholds(d, level), expected)


def test_paired_power_agrees_with_a_monte_carlo_of_compare():
    # 4,000 simulated paired experiments judged by compare(..., method="mcnemar");
    # tolerance 4 Monte-Carlo standard errors (sqrt(p(1-p)/4000) <= 0.0079).
    from evalstats.stats._compare import compare

    rng = np.random.default_rng(7)
    n, p_a, p_b = 30, 0.6, 0.8
    hits = 0
    reps = 4000
    a = rng.random((reps, n)) < p_a
    b = rng.random((reps, n)) < p_b  # independent within a pair: correlation 0
    for i in range(reps):
        res = compare({"c": a[i].tolist()}, {"c": b[i].tolist()}, paired=True, method="mcnemar")
        hits += res.verdict == "b_better"
    exact = paired_power(p_a, p_b, n)
    se = math.sqrt(exact * (1 - exact) / reps)
    assert abs(hits / reps - exact) < 4 * se


@given(p_a=rates, p_b=rates, n=st.integers(1, 80), r=st.floats(-1, 1))
def test_paired_power_is_a_probability_and_discordance_matches_correlation(p_a, p_b, n, r):
    both = p_a * p_b + r * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    psi = p_a + p_b - 2 * both
    lo, hi = abs(p_b - p_a), min(p_a + p_b, 2 - p_a - p_b)
    if psi < lo - 1e-9 or psi > hi + 1e-9:
        with pytest.raises(InvalidArgument):
            paired_power(p_a, p_b, n, correlation=r)
        return
    assume(lo - 1e-12 <= psi <= hi + 1e-12)  # skip the rounding band at the edges
    got = paired_power(p_a, p_b, n, correlation=r)
    assert 0.0 <= got <= 1.0
    # The correlation path clips its discordance into [lo, hi] (rounding can put
    # it a hair outside, e.g. -4e-28); a discordance given directly must already
    # be a probability, so compare with the clipped value.
    clipped = min(max(psi, lo), hi)
    assert got == pytest.approx(paired_power(p_a, p_b, n, discordance=clipped), abs=1e-9)


def test_paired_sample_size_exact_and_connor():
    n = sample_size(0.7, 0.9, design="paired")
    assert paired_power(0.7, 0.9, n) >= 0.8 > max(paired_power(0.7, 0.9, m) for m in range(1, n))
    # Connor (1987), eq. (3): n = [z_{a/2} sqrt(psi) + z_b sqrt(psi - d^2)]^2 / d^2,
    # solved here independently by root-finding on the normal power function.
    from scipy.optimize import brentq

    psi, d = 0.3, 0.2

    def f(m):
        z = norm.isf(0.025)
        return norm.cdf((d * math.sqrt(m) - z * math.sqrt(psi)) / math.sqrt(psi - d * d)) - 0.8

    ref = brentq(f, 1, 1e4)
    assert sample_size(0.7, 0.9, design="paired", discordance=psi, exact=False) == math.ceil(ref)
    # Published worked example (powerandsamplesize.com, "Compare Paired
    # Proportions: McNemar's Z-test, 2-Sided Equality", after Connor 1987,
    # p. 209): p01 = 0.45, p10 = 0.05, alpha = 0.05, power 0.8 -> n = 22.01,
    # ceiling 23. Here only_b = p01 = 0.45 and only_a = p10 = 0.05, so
    # p_b - p_a = 0.4 and the discordance is 0.5.
    assert sample_size(0.5, 0.9, design="paired", discordance=0.5, exact=False) == 23
    # The exact power of compare's paired score test (the quarter-pair
    # correction and the discrete counts) reaches 80% a little earlier here.
    n = sample_size(0.5, 0.9, design="paired", discordance=0.5)
    assert n == 21
    assert paired_power(0.5, 0.9, n, discordance=0.5) >= 0.8
    assert paired_power(0.5, 0.9, n - 1, discordance=0.5) < 0.8
    # Pairing pays when A and B agree more often than independent runs would.
    assert sample_size(0.7, 0.9, design="paired", discordance=0.2) < sample_size(0.7, 0.9)


# --- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: power(1.2, 0.5, 10), "p_a=1.2"),
        (lambda: power(0.5, -0.1, 10), "p_b=-0.1"),
        (lambda: power(0.5, 0.6, 0), "trials=0"),
        (lambda: power(0.5, 0.6, 10, trials_b=0), "trials_b=0"),
        (lambda: power(0.5, 0.6, 10, method="newcomb"), "did you mean 'newcombe'"),
        (lambda: power(0.5, 0.6, 10, level=95), "level=95"),
        (lambda: sample_size(0.5, 0.6, power=1.0), "power=1.0"),
        (lambda: sample_size(0.5, 0.6, power=0), "power=0"),
        (lambda: sample_size(0.5, 0.5), "no difference"),
        (lambda: sample_size(0.5, 0.6, design="pared"), "did you mean 'paired'"),
        (lambda: paired_power(0.5, 0.9, 10, discordance=0.1), "discordance=0.1"),
        (lambda: paired_power(0.5, 0.9, 10, discordance=0.5, correlation=0.1), "not both"),
        (lambda: power_curve(0.5, 0.6, [10, 0]), r"trials_range\[1\]=0"),
    ],
)
def test_bad_input_names_the_argument(call, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        call()


# --- the command ------------------------------------------------------------------


def test_cli_power_prints_power_and_false_positive_rate(capsys):
    assert (
        main(
            [
                "power",
                "--pa",
                "0.7",
                "--pb",
                "0.9",
                "--trials",
                "20",
                "40",
                "100",
                "--method",
                "overlap",
                "newcombe",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "false pos." in out
    assert f"{100 * power(0.7, 0.9, 100):.0f}%" in out


def test_cli_power_json_and_plot(capsys, tmp_path):
    png = tmp_path / "power.png"
    assert (
        main(
            ["power", "--pa", "0.7", "--pb", "0.9", "--trials", "30", "--json", "--plot", str(png)]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["rows"]
    assert row["power"] == pytest.approx(power(0.7, 0.9, 30))
    assert row["false_positive_rate"] == pytest.approx(power(0.7, 0.7, 30))
    assert png.stat().st_size > 1000


def test_cli_power_bad_input_exits_2(capsys):
    assert main(["power", "--pa", "1.5", "--pb", "0.9", "--trials", "10"]) == 2
    assert "p_a=1.5" in capsys.readouterr().err
    assert (
        main(["power", "--pa", "0.5", "--pb", "0.9", "--trials", "10", "--method", "overlapp"]) == 2
    )
    assert "did you mean 'overlap'" in capsys.readouterr().err


def test_false_positive_wording_is_one_sided_with_the_computed_figure() -> None:
    # power(0.5, 0.5, 50) = 0.028445, the exact figure the tests of exact power
    # above check; the table must call it one-sided and print it, not claim
    # "at most 2.5%".
    assert power(0.5, 0.5, 50) == pytest.approx(0.028445, abs=1e-6)
    text = str(power_table(0.5, 0.6, [50]))
    assert "one-sided false positives" in text
    assert text.splitlines()[3].split()[-1] == "2.8%"
    curve = str(power_curve(0.5, 0.6, [50]))
    assert "one-sided" in curve and "nominal 2.5%" in curve and "2.8%" in curve
