"""Tests of the sequential comparison: the anytime-valid e-processes and confidence sequences."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import levels, paired_results

from evalstats.deciding._sequential import (
    SequentialComparison,
    _mixture_cs,
    log_evalue_cases,
    log_evalue_discordant,
    sequential_compare,
)
from evalstats.errors import InvalidArgument

FLIP = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}
SCOPES = ("these_cases", "cases_like_these")


# --- the discordant-pair mixture ------------------------------------------------


def _quad_discordant(k: int, m: int) -> float:
    """The mixture by direct numerical integration: the density 24 (2t - 1)(1 - t)
    on [1/2, 1] (Beta(2, 2) for 2t - 1) times the likelihood ratio
    (2t)^k (2(1-t))^(m-k) of a share t against 1/2."""
    from scipy.integrate import quad

    value, _ = quad(
        lambda t: (
            24.0 * (2.0 * t - 1.0) * (1.0 - t) * (2.0 * t) ** k * (2.0 * (1.0 - t)) ** (m - k)
        ),
        0.5,
        1.0,
        epsabs=0.0,
        epsrel=1e-13,
        limit=200,
    )
    return value


@pytest.mark.parametrize(
    ("k", "m"), [(0, 0), (1, 1), (0, 1), (5, 5), (3, 7), (12, 20), (30, 40), (25, 60), (0, 9)]
)
def test_discordant_evalue_matches_numerical_integration(k: int, m: int) -> None:
    # Independent computation: scipy.integrate.quad of the mixture integral.
    expected = _quad_discordant(k, m)
    got = math.exp(float(log_evalue_discordant(k, m)))
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)


def _exact_discordant(k: int, m: int) -> Fraction:
    """The mixture in exact rational arithmetic. With x = 2t - 1 the integral is
    6 * integral over [0, 1] of x (1 - x)^(m-k+1) (1 + x)^k dx; expanding (1 + x)^k
    by the binomial theorem, each term is a beta integral:
    6 * sum over j of C(k, j) (j + 1)! (m - k + 1)! / (m - k + j + 3)!."""
    r = m - k
    term = Fraction(6 * math.factorial(r + 1), math.factorial(r + 3))  # j = 0
    total = Fraction(0)
    for j in range(k + 1):
        total += term
        term *= Fraction((k - j) * (j + 2), (j + 1) * (r + j + 4))
    return total


def test_discordant_evalue_worked_value() -> None:
    # By hand: 5 of 5 discordant pairs to B, 6 * integral of x (1 - x)(1 + x)^5
    # over [0, 1] = 261/28.
    assert _exact_discordant(5, 5) == Fraction(261, 28)
    assert math.exp(float(log_evalue_discordant(5, 5))) == pytest.approx(261 / 28, rel=1e-12)


@pytest.mark.parametrize(
    ("k", "m"),
    [(0, 0), (0, 1), (1, 1), (7, 10), (40, 60), (5, 80), (150, 200), (418, 2387), (865, 3849)],
)
def test_discordant_evalue_matches_exact_rational_arithmetic(k: int, m: int) -> None:
    # Independent computation: the integral in exact fractions.
    expected = _exact_discordant(k, m)
    assert float(log_evalue_discordant(k, m)) == pytest.approx(
        math.log(expected.numerator) - math.log(expected.denominator), abs=1e-9
    )


def test_discordant_evalue_starts_at_one() -> None:
    assert float(log_evalue_discordant(0, 0)) == pytest.approx(0.0, abs=1e-15)


@given(st.integers(0, 3000), st.integers(0, 3000))
def test_discordant_evalue_is_a_martingale_under_half(k: int, rest: int) -> None:
    # Under "each discordant pair favours B with probability 1/2", the expected
    # next value equals the current one, exactly.
    # (In logs: the values span hundreds of orders of magnitude.)
    from scipy.special import logsumexp

    m = k + rest
    now = float(log_evalue_discordant(k, m))
    up, down = log_evalue_discordant([k + 1, k], m + 1)
    # To 1e-9 in logs wherever the e-value is above e^-5 (a search of a million
    # (k, m) found at most 2.5e-10 there); far below, where B is losing clearly
    # and no verdict for B is near, the closed form keeps about 8 digits of its logs.
    tolerance = 1e-9 if now >= -5.0 else 5e-8
    assert float(logsumexp([up, down]) - math.log(2)) == pytest.approx(now, abs=tolerance)


@given(st.integers(0, 3000), st.integers(0, 3000))
def test_discordant_evalue_is_non_negative_and_finite_in_logs(k: int, rest: int) -> None:
    log_e = float(log_evalue_discordant(k, k + rest))
    assert math.isfinite(log_e)  # so the e-value exp(log_e) is a number >= 0
    # A balanced split is no evidence: the mixture is at most the largest
    # likelihood ratio, which is 1 when B won exactly half.
    if k == rest:
        assert log_e <= 1e-12


# --- the mixture planned for an effect ------------------------------------------


def _quad_planned(k: int, m: int, a: float, b: float) -> float:
    """The planned mixture by direct numerical integration: the likelihood ratio
    (2t)^k (2(1-t))^(m-k) against the Beta(a, b) density restricted to [1/2, 1],
    divided by that density's mass there."""
    from scipy.integrate import quad
    from scipy.stats import beta

    def lr(t: float) -> float:
        return (2.0 * t) ** k * (2.0 * (1.0 - t)) ** (m - k) * beta.pdf(t, a, b)

    # The integrand can be a narrow spike near t = 1/2 (B losing) or near k/m.
    spikes = sorted({0.5 + 1e-3, 0.5 + 1e-2, min(max(k / max(m, 1), 0.51), 0.999)})
    top, _ = quad(lr, 0.5, 1.0, epsabs=0.0, epsrel=1e-13, limit=500, points=spikes)
    mass, _ = quad(lambda t: beta.pdf(t, a, b), 0.5, 1.0, epsabs=0.0, epsrel=1e-13)
    return top / mass


def test_planned_prior_by_hand() -> None:
    # 0.7 -> 0.9: B alone passes with 0.9 * 0.3 = 0.27, A alone with 0.7 * 0.1 = 0.07,
    # so B wins 27/34 of the discordant pairs; the prior is Beta(60 * 27/34, 60 * 7/34).
    from evalstats.deciding._sequential import planned_prior, planned_share

    assert planned_share(0.7, 0.9) == pytest.approx(27 / 34, rel=1e-15)
    a, b = planned_prior(0.7, 0.9)
    assert (a, b) == pytest.approx((60 * 27 / 34, 60 * 7 / 34), rel=1e-15)
    # Symmetric: planned for A better, the same pair of mirrored e-processes.
    assert planned_prior(0.9, 0.7) == pytest.approx((a, b), rel=1e-15)


@pytest.mark.parametrize(
    ("k", "m"),
    [
        (0, 0),
        (1, 1),
        (0, 1),
        (5, 5),
        (3, 7),
        (12, 20),
        (30, 40),
        (25, 60),
        (0, 9),
        (0, 100),
        (0, 3000),
        (40, 3000),
        (900, 1200),
    ],
)
def test_planned_evalue_matches_numerical_integration(k: int, m: int) -> None:
    # Independent computation: scipy.integrate.quad of the mixture integral with
    # scipy.stats.beta's density, at the prior planned for 0.7 -> 0.9.
    from evalstats.deciding._sequential import planned_prior

    a, b = planned_prior(0.7, 0.9)
    expected = _quad_planned(k, m, a, b)
    got = float(log_evalue_discordant(k, m, prior=(a, b)))
    assert got == pytest.approx(math.log(expected), abs=1e-9)


def _exact_planned(k: int, m: int, a: int, b: int) -> Fraction:
    """The mixture over Beta(a, b) on [1/2, 1], a and b whole, in exact fractions:
    2^m times the integral of t^(a+k-1) (1-t)^(b+m-k-1) over [1/2, 1] divided by
    that of t^(a-1) (1-t)^(b-1); each integrand is expanded by the binomial
    theorem, and t^j integrates to (1 - 2^-(j+1)) / (j + 1)."""

    def integral(p: int, q: int) -> Fraction:  # of t^p (1 - t)^q over [1/2, 1]
        return sum(
            (
                Fraction((-1) ** i * math.comb(q, i))
                * (1 - Fraction(1, 2 ** (p + i + 1)))
                / (p + i + 1)
                for i in range(q + 1)
            ),
            Fraction(0),
        )

    return 2**m * integral(a + k - 1, b + m - k - 1) / integral(a - 1, b - 1)


@pytest.mark.parametrize(("a", "b"), [(48, 12), (7, 3), (2, 2)])
@pytest.mark.parametrize(("k", "m"), [(0, 0), (1, 1), (0, 4), (9, 12), (30, 40), (15, 50)])
def test_planned_evalue_matches_exact_rational_arithmetic(a: int, b: int, k: int, m: int) -> None:
    expected = _exact_planned(k, m, a, b)
    got = float(log_evalue_discordant(k, m, prior=(a, b)))
    assert got == pytest.approx(
        math.log(expected.numerator) - math.log(expected.denominator), abs=1e-9
    )


def test_planned_with_a_uniform_share_is_the_uniform_mixture_of_the_edge() -> None:
    # Beta(1, 1) on [1/2, 1] is the uniform share; with every discordant pair to
    # B its mixture is 2 * integral of (2t)^m over [1/2, 1] = (2^(m+1) - 1) / (m + 1).
    for m in (0, 1, 5, 20):
        got = math.exp(float(log_evalue_discordant(m, m, prior=(1.0, 1.0))))
        assert got == pytest.approx((2 ** (m + 1) - 1) / (m + 1), rel=1e-12)


@given(st.integers(0, 3000), st.integers(0, 3000))
def test_planned_evalue_is_a_martingale_under_half(k: int, rest: int) -> None:
    # The planned mixture of likelihood ratios is a martingale when each
    # discordant pair favours B with probability 1/2 (Robbins 1970): whatever
    # the planned effect, so the verdict stays valid when the plan is wrong.
    from scipy.special import logsumexp

    from evalstats.deciding._sequential import planned_prior

    prior = planned_prior(0.7, 0.9)
    m = k + rest
    now = float(log_evalue_discordant(k, m, prior=prior))
    up, down = log_evalue_discordant([k + 1, k], m + 1, prior=prior)
    assert math.isfinite(now)
    assert float(logsumexp([up, down]) - math.log(2)) == pytest.approx(now, abs=1e-9)


@settings(max_examples=200)
@given(st.integers(0, 2000), st.integers(0, 2000), st.floats(0.01, 0.5))
def test_planned_evalue_is_a_supermartingale_when_b_is_worse(
    k: int, rest: int, share: float
) -> None:
    # When B wins each discordant pair with probability share <= 1/2 the expected
    # next value is at most the current one: each likelihood ratio with t >= 1/2
    # has expectation 1 + (2t - 1)(2 share - 1) <= 1, so "B better" stays valid
    # under the composite null "B not better", whatever the plan.
    from evalstats.deciding._sequential import planned_prior

    prior = planned_prior(0.7, 0.9)
    m = k + rest
    now = float(log_evalue_discordant(k, m, prior=prior))
    up, down = (float(x) for x in log_evalue_discordant([k + 1, k], m + 1, prior=prior))
    expected = np.logaddexp(math.log(share) + up, math.log1p(-share) + down)
    assert expected <= now + 1e-9


# --- the Robbins mixture confidence sequence ------------------------------------


@pytest.mark.parametrize(("k", "n"), [(3, 10), (0, 5), (5, 5), (40, 100), (1, 1000)])
def test_mixture_cs_limits_solve_the_boundary_equation(k: int, n: int) -> None:
    # Independent computation: scipy's brentq on the defining equation
    # B(k+1, n-k+1) / (t^k (1-t)^(n-k)) = 1/alpha on each side of k/n.
    from scipy.optimize import brentq
    from scipy.special import betaln, xlog1py, xlogy

    alpha = 0.05

    def g(t: float) -> float:
        return betaln(k + 1, n - k + 1) - xlogy(k, t) - xlog1py(n - k, -t) - math.log(1 / alpha)

    low, high = (float(x) for x in _mixture_cs(k, n, alpha))
    mle = k / n
    expected_low = 0.0 if k == 0 else brentq(g, 1e-300, mle, xtol=1e-15)
    expected_high = 1.0 if k == n else brentq(g, mle, 1 - 1e-16, xtol=1e-15)
    assert low == pytest.approx(expected_low, abs=1e-9)
    assert high == pytest.approx(expected_high, abs=1e-9)


# --- the cases-like-these betting mixture ---------------------------------------


@pytest.mark.parametrize(
    "means",
    [[0.0, 0.0], [0.5, -0.25, 1.0], [1.0] * 7, [-1.0, 1.0, 0.3, 0.2, -0.1, 0.9, 0.4, 0.0, 0.5]],
)
@pytest.mark.parametrize("null", [0.0, 0.2, -0.3])
@pytest.mark.parametrize("direction", [1, -1])
def test_cases_evalue_matches_numerical_integration(
    means: list[float], null: float, direction: int
) -> None:
    # Independent computation: quad of the bet's wealth over u in [0, 1].
    from scipy.integrate import quad

    x = np.asarray(means)
    scale = (1.0 + null) if direction > 0 else -(1.0 - null)

    def wealth(u: float) -> float:
        return float(np.prod(1.0 + u * (x - null) / scale))

    expected, _ = quad(wealth, 0.0, 1.0, epsabs=0.0, epsrel=1e-13)
    got = math.exp(float(log_evalue_cases(x, null=null, direction=direction)))
    assert got == pytest.approx(expected, rel=1e-9)


def test_cases_evalue_starts_at_one() -> None:
    assert float(log_evalue_cases(np.zeros(5))) == pytest.approx(0.0, abs=1e-14)


# --- sequential_compare -----------------------------------------------------------


def test_clear_gain_is_found_and_the_verdict_stands() -> None:
    a = {"order": [True, False] * 10, "refund": [True, False] * 10}
    b = {"order": [True] * 20, "refund": [True] * 20}
    c = sequential_compare(a, b)
    assert c.verdict == "b_better"
    assert (c.only_b, c.only_a, c.pairs, c.looks) == (20, 0, 40, 20)
    # With every discordant pair to B, E(m, m) in exact fractions (the
    # integral of 6 x (1 - x)(1 + x)^m over [0, 1]): 257/10 < 40 at m = 7,
    # 7181/165 >= 40 at m = 8.
    # Discordant pairs come 2 per even round, so m = 8 after round 8 (16 pairs).
    assert c.decided_at == 16
    assert c.trajectory[7].verdict == "b_better"
    assert all(look.verdict == "cant_tell" for look in c.trajectory[:7])
    assert _exact_discordant(7, 7) == Fraction(257, 10)
    assert _exact_discordant(8, 8) == Fraction(7181, 165)
    assert c.evalue_b == pytest.approx(float(_exact_discordant(20, 20)), rel=1e-9)
    # The verdict's bound is 2 / (0.99 * 0.05): 1% of 1 - level goes to the discordance rate.
    assert c.pvalue == pytest.approx(2 / (0.99 * c.evalue_b))
    assert c.difference.low > 0
    assert "B better" in str(c)
    d = c.to_dict()
    assert d["verdict"] == "b_better" and len(d["trajectory"]) == 20


def test_nothing_discordant_cannot_tell_and_starts_at_one() -> None:
    a = {"x": [True, False, True], "y": [False, False, True]}
    c = sequential_compare(a, a)
    assert c.verdict == "cant_tell"
    assert c.evalue_b == pytest.approx(1.0) and c.evalue_a == pytest.approx(1.0)
    assert c.pvalue == 1.0
    assert "can't tell yet" in str(c) and "no difference" not in str(c)


def test_cases_like_these_waits_for_every_case() -> None:
    a = {"x": [False] * 3, "y": [False] * 1}
    b = {"x": [True] * 3, "y": [True] * 1}
    c = sequential_compare(a, b, about="cases_like_these", looks=[1, 2, 3, 4])
    first = c.trajectory[0]
    assert (first.evalue_b, first.low, first.high) == (1.0, -1.0, 1.0)
    assert c.trajectory[1].evalue_b > 1.0
    # Two cases can never give more than 2^2 = 4: no verdict, however clear.
    assert c.verdict == "cant_tell"


def test_cases_like_these_decides_with_enough_cases() -> None:
    a = {f"c{i}": [False] * 4 for i in range(12)}
    b = {f"c{i}": [True] * 4 for i in range(12)}
    c = sequential_compare(a, b, about="cases_like_these")
    # prod (1 + u) integrated over [0, 1] = (2^13 - 1) / 13 = 630 >= 40 from round 1.
    assert c.evalue_b == pytest.approx((2**13 - 1) / 13, rel=1e-12)
    assert c.verdict == "b_better" and c.decided_at == 12
    assert c.difference.low > 0


def test_interval_and_verdict_agree_for_cases_like_these() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = {f"c{i}": list(rng.random(6) < 0.5) for i in range(15)}
        b = {f"c{i}": list(rng.random(6) < 0.8) for i in range(15)}
        c = sequential_compare(a, b, about="cases_like_these")
        crossed = False
        for look in c.trajectory:
            # The verdict stands from the first look whose e-value reached the
            # threshold, and the interval (intersected over the looks) with it.
            crossed = crossed or look.evalue_b >= c.threshold
            assert crossed == (look.low > 0) == (look.verdict == "b_better")


@settings(max_examples=60, deadline=None)
@given(
    paired_results(min_cases=2),
    st.sampled_from([*SCOPES, "planned"]),
    levels,
)
def test_swapping_a_and_b_mirrors_everything(pair: tuple, about: str, level: float) -> None:
    # "planned": these cases, planned for 0.6 -> 0.85 (the design is symmetric, so
    # the same plan judges B against A).
    a, b = pair
    kw = {"about": about, "level": level}
    if about == "planned":
        kw = {"about": "these_cases", "level": level, "planned_for": (0.6, 0.85)}
    ab = sequential_compare(a, b, **kw)
    ba = sequential_compare(b, a, **kw)
    assert ba.verdict == FLIP[ab.verdict]
    assert ba.decided_at == ab.decided_at
    assert ba.evalue_b == pytest.approx(ab.evalue_a, rel=1e-9)
    assert ba.evalue_a == pytest.approx(ab.evalue_b, rel=1e-9)
    assert ba.pvalue == pytest.approx(ab.pvalue, rel=1e-9)
    assert ba.difference.low == pytest.approx(-ab.difference.high, abs=1e-9)
    assert ba.difference.high == pytest.approx(-ab.difference.low, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(paired_results(min_cases=2), st.sampled_from(SCOPES), levels)
def test_evalues_non_negative_interval_sane_p_consistent(
    pair: tuple, about: str, level: float
) -> None:
    a, b = pair
    c = sequential_compare(a, b, about=about, level=level)
    for look in c.trajectory:
        assert look.evalue_b >= 0 and look.evalue_a >= 0
        assert -1.0 <= look.low <= look.high <= 1.0
        # The interval holds the estimate, unless the data turned after a verdict
        # (the verdict stands; the estimate has crossed 0 since).
        turned = (look.verdict == "b_better" and look.estimate <= 0) or (
            look.verdict == "a_better" and look.estimate >= 0
        )
        assert turned or look.low <= look.estimate <= look.high
    assert 0.0 < c.pvalue <= 1.0
    # p < 1 - level exactly when a verdict was reached.
    decided = c.verdict != "cant_tell"
    assert decided == (c.pvalue < 1 - level) or math.isclose(c.pvalue, 1 - level)


def test_looks_change_only_when_the_verdict_is_reached() -> None:
    a = {"x": [True, False] * 10}
    b = {"x": [True] * 20}
    every = sequential_compare(a, b, looks=list(range(1, 21)))
    once = sequential_compare(a, b, looks=[20])
    assert every.evalue_b == pytest.approx(once.evalue_b)
    # m = 8 discordant pairs (the first reaching 40, see above) at pair 16.
    assert every.decided_at == 16 and once.decided_at == 20


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"about": "these"},
            "about='these' must be 'these_cases' or 'cases_like_these' "
            "(did you mean 'these_cases'?)",
        ),
        ({"level": 95}, "level=95 must be between 0 and 1"),
        ({"looks": [3, 2]}, "looks[1]=2 must be larger than the look before it"),
        ({"looks": [0]}, "looks[0]=0 must be between 1 and 4"),
        ({"looks": [1.5]}, "looks[0]=1.5 must be a whole number of pairs"),
        ({"looks": "all"}, "looks='all' must be a sequence of pair counts"),
        ({"looks": []}, "looks=[] is empty"),
    ],
)
def test_bad_arguments_name_themselves(kwargs: dict, message: str) -> None:
    a = {"x": [True, False], "y": [True, True]}
    import re

    with pytest.raises(InvalidArgument, match=re.escape(message)):
        sequential_compare(a, a, **kwargs)


def test_unpaired_outcomes_and_one_case_clustered_are_refused() -> None:
    with pytest.raises(InvalidArgument, match="needs outcomes paired by"):
        sequential_compare({"x": [True]}, {"x": [True, False]})
    with pytest.raises(InvalidArgument, match="needs at least 2 cases"):
        sequential_compare({"x": [True]}, {"x": [False]}, about="cases_like_these")


def test_numpy_boolean_arrays_give_the_same_answer_as_lists() -> None:
    rng = np.random.default_rng(0)
    a = {f"c{i}": rng.random(30) < 0.6 for i in range(3)}
    b = {f"c{i}": rng.random(30) < 0.8 for i in range(3)}
    listed = sequential_compare(
        {k: list(v) for k, v in a.items()}, {k: list(v) for k, v in b.items()}
    )
    arrays = sequential_compare(a, b)
    assert isinstance(arrays, SequentialComparison)
    assert arrays.to_dict() == listed.to_dict()


def test_interval_contains_the_estimate_when_b_wins_every_pair() -> None:
    # Every case mean at the bound 1: the bisection's tolerance must not leave the
    # estimate (exactly 1) above the upper limit. (Found by the property test above.)
    a = {c: [False] * 3 for c in "xyz"}
    b = {c: [True] * 3 for c in "xyz"}
    for about in SCOPES:
        c = sequential_compare(a, b, about=about)
        for look in c.trajectory:
            assert look.low <= look.estimate <= look.high


# --- the simulator -------------------------------------------------------------


def _as_results(d: np.ndarray) -> tuple[dict, dict]:
    """Outcomes whose paired differences are ``d`` (runs x cases): -1 A only, +1 B only."""
    runs, cases = d.shape
    a = {f"c{c}": [bool(x < 0) for x in d[:, c]] for c in range(cases)}
    b = {f"c{c}": [bool(x > 0) for x in d[:, c]] for c in range(cases)}
    return a, b


@pytest.mark.parametrize(
    ("about", "cases", "p_b", "icc", "planned_for"),
    [
        ("these_cases", 3, 0.85, 0.0, None),
        ("these_cases", 3, 0.85, 0.0, (0.6, 0.8)),
        ("cases_like_these", 12, 0.95, 0.2, None),
    ],
)
def test_simulator_stops_where_sequential_compare_decides(
    about: str, cases: int, p_b: float, icc: float, planned_for: tuple | None
) -> None:
    from evalstats.deciding._sequential import (
        _draw_differences,
        _simulate_cases,
        _simulate_these,
        discordant_thresholds,
        planned_prior,
    )

    rng = np.random.default_rng(7)
    runs = 15
    d = _draw_differences(rng, 30, runs, cases, 0.6, p_b, icc, 0.0)
    if about == "these_cases":
        prior = None if planned_for is None else planned_prior(*planned_for)
        table = discordant_thresholds(runs * cases, prior=prior)
        stopped, verdicts = _simulate_these(d, table)
    else:
        stopped, verdicts = _simulate_cases(d, 0.95)
    signs = {"b_better": 1, "a_better": -1, "cant_tell": 0}
    decided = 0
    for i in range(len(d)):
        a, b = _as_results(d[i])
        c = sequential_compare(
            a, b, about=about, looks=list(range(1, runs * cases + 1)), planned_for=planned_for
        )
        assert signs[c.verdict] == verdicts[i]
        assert (c.decided_at or runs * cases) == stopped[i]
        decided += c.decided_at is not None
    assert decided > 0  # the comparison is not vacuous


def test_discordant_thresholds_are_where_the_mixture_crosses() -> None:
    from evalstats.deciding._sequential import discordant_thresholds

    table = discordant_thresholds(60)
    bound = math.log(40)
    for m in range(61):
        k = int(table[m])
        if k <= m:
            assert float(log_evalue_discordant(k, m)) >= bound
        if k >= 1:
            assert float(log_evalue_discordant(k - 1, m)) < bound
    # Hand check from the all-to-B values (2^(m+1) - 1) / (m + 1): m = 8 needs 8 of 8.
    assert table[7] == 8 and table[8] == 8


def _repeated_mcnemar_false_rate(experiments: int, pairs: int, every: int) -> float:
    """The unsafe practice: the fixed-n exact McNemar test after every ``every`` pairs."""
    from evalstats.stats._binomial import mcnemar_thresholds

    rng = np.random.default_rng(11)
    u = rng.random((experiments, pairs))
    wins_b = np.cumsum(u < 0.2, axis=1)[:, every - 1 :: every]
    disc = np.cumsum(u < 0.4, axis=1)[:, every - 1 :: every]
    return float(np.mean((wins_b >= mcnemar_thresholds(disc, 0.95)).any(axis=1)))


def test_no_inflation_under_continuous_monitoring_reduced() -> None:
    # simulations/sequential.py: 20,000 experiments to 2,000 pairs. Here 3,000
    # to 600 pairs, looking after every pair; nominal one-sided 2.5%.
    from evalstats.deciding._sequential import simulate_sequential

    sim = simulate_sequential(0.5, 0.5, 600, experiments=3000, seed=3)
    assert sim.power.estimate <= 0.035
    # The same data looked at with the fixed-n test after every 10 pairs: the
    # inflation this module exists to prevent (so the check above can fail).
    assert _repeated_mcnemar_false_rate(3000, 600, 10) > 0.06


def test_clustered_scope_valid_when_cases_differ_reduced() -> None:
    from evalstats.deciding._sequential import simulate_sequential

    for icc, spread in ((0.3, 0.0), (0.3, 1.0)):
        sim = simulate_sequential(
            0.7,
            0.7,
            25,
            cases=20,
            icc=icc,
            spread=spread,
            about="cases_like_these",
            experiments=300,
            seed=5,
        )
        assert sim.power.estimate <= 0.035


def test_efficiency_at_ninety_percent_power_reduced() -> None:
    # simulations/sequential.py: the fixed paired score test needs 83 pairs for
    # 90% power at 0.7 vs 0.9 (paired_power); with a budget of 122 pairs the
    # sequential design reaches 90% and stops on average after 62.4 pairs
    # (0.751 of 83; 20,000 experiments).
    from evalstats.deciding._sequential import simulate_sequential
    from evalstats.planning._power import paired_power

    assert paired_power(0.7, 0.9, 83) >= 0.9 > paired_power(0.7, 0.9, 82)
    sim = simulate_sequential(0.7, 0.9, 122, experiments=3000, seed=9)
    assert sim.power.estimate >= 0.88
    assert sim.expected_pairs.estimate <= 0.79 * 83


def test_efficiency_at_eighty_percent_power_reduced() -> None:
    # simulations/sequential.py: 64 pairs give the fixed paired score test 80%
    # power; a budget of 96 pairs gives the sequential design 81%, on average
    # 58.6 pairs (0.916 of 64; 20,000 experiments).
    from evalstats.deciding._sequential import simulate_sequential
    from evalstats.planning._power import paired_power

    assert paired_power(0.7, 0.9, 64) >= 0.8 > paired_power(0.7, 0.9, 63)
    sim = simulate_sequential(0.7, 0.9, 96, experiments=3000, seed=9)
    assert sim.power.estimate >= 0.78
    assert sim.expected_pairs.estimate <= 0.95 * 64


def test_planned_design_valid_under_continuous_monitoring_reduced() -> None:
    # simulations/sequential.py: 20,000 experiments to 2,000 pairs. Here 3,000
    # to 600 pairs, looking after every pair, with the e-process planned for
    # 0.7 -> 0.9 while A = B (the plan is wrong); nominal one-sided 2.5%.
    from evalstats.deciding._sequential import simulate_sequential

    for p in (0.5, 0.8):
        sim = simulate_sequential(p, p, 600, experiments=3000, seed=3, planned_for=(0.7, 0.9))
        assert sim.power.estimate <= 0.035
        assert sim.settings["planned_for"] == (0.7, 0.9)
    # B worse than A (0.8 -> 0.7) while planned for B better: "B better" is rarer still,
    # and "A better" (the mirrored e-process) is found.
    sim = simulate_sequential(0.8, 0.7, 600, experiments=1000, seed=4, planned_for=(0.7, 0.9))
    assert sim.power.estimate <= 0.01
    assert sim.wrong.estimate >= 0.6  # 0.705 at this seed (a small effect: 0.24 vs 0.14)


def test_planned_design_efficiency_reduced() -> None:
    # simulations/sequential.py (20,000 experiments): planned for the true
    # 0.7 -> 0.9, a budget of 87 pairs gives 80% power and stops on average
    # after 52.6 pairs, 0.82 of the 64 the fixed paired score test needs (the
    # default mixture: 0.92); a budget of 116 pairs gives 90%, 0.68 of 83.
    from evalstats.deciding._sequential import simulate_sequential

    sim = simulate_sequential(0.7, 0.9, 87, experiments=3000, seed=9, planned_for=(0.7, 0.9))
    assert sim.power.estimate >= 0.78
    assert sim.expected_pairs.estimate <= 0.85 * 64
    sim = simulate_sequential(0.7, 0.9, 116, experiments=3000, seed=9, planned_for=(0.7, 0.9))
    assert sim.power.estimate >= 0.88
    assert sim.expected_pairs.estimate <= 0.71 * 83


def test_planned_comparison_says_what_it_was_planned_for() -> None:
    a = {"order": [True, False] * 10, "refund": [True, False] * 10}
    b = {"order": [True] * 20, "refund": [True] * 20}
    c = sequential_compare(a, b, planned_for=(0.7, 0.9))
    assert c.planned_for == (0.7, 0.9)
    assert "planned for 0.7 -> 0.9" in str(c)
    assert c.to_dict()["planned_for"] == [0.7, 0.9]
    # Every discordant pair to B (two per even round): the values at the looks
    # after 14 and 16 pairs (m = 6, 8) by numerical integration. The mixture is
    # a little above the likelihood ratio at the planned share, (2 * 27/34)^m
    # (16.1 and 40.5), since all-B data favour larger shares; m = 8 decides, as
    # with the default mixture.
    from evalstats.deciding._sequential import planned_prior

    a_, b_ = planned_prior(0.7, 0.9)
    e6, e8 = _quad_planned(6, 6, a_, b_), _quad_planned(8, 8, a_, b_)
    looked = {look.pairs: look for look in c.trajectory}
    assert looked[14].evalue_b == pytest.approx(e6, rel=1e-9)
    assert looked[16].evalue_b == pytest.approx(e8, rel=1e-9)
    assert (2 * 27 / 34) ** 6 < e6 < 40 <= (2 * 27 / 34) ** 8 < e8
    assert c.decided_at == 16


@pytest.mark.parametrize(
    ("planned_for", "message"),
    [
        ((0.7, 0.7), "planned_for=(0.7, 0.7) plans for no difference"),
        ((0.7,), "planned_for=(0.7,) must be two pass rates (p_a, p_b), got 1 numbers"),
        ("0.7,0.9", "planned_for='0.7,0.9' must be the two pass rates"),
        ((0.7, 1.0), "planned_for[1]=1.0 must be strictly between 0 and 1"),
        ((70, 90), "planned_for[0]=70 must be strictly between 0 and 1 (did you mean 0.7?)"),
    ],
)
def test_bad_planned_for_names_itself(planned_for: object, message: str) -> None:
    import re

    a = {"x": [True, False], "y": [True, True]}
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        sequential_compare(a, a, planned_for=planned_for)  # type: ignore[arg-type]


def test_planned_for_is_refused_for_cases_like_these() -> None:
    a = {"x": [True, False], "y": [True, True]}
    with pytest.raises(InvalidArgument, match="about='cases_like_these' mixes over its bets"):
        sequential_compare(a, a, about="cases_like_these", planned_for=(0.7, 0.9))


def test_confidence_sequences_cover_at_every_look_reduced() -> None:
    # Share of experiments in which some look's interval misses the true
    # difference: at most 1 - level (5%) by construction; allow MC error.
    rng = np.random.default_rng(13)
    misses = {"these_cases": 0, "cases_like_these": 0}
    experiments = 100
    for _ in range(experiments):
        d = _draw_differences_for_test(rng)
        a, b = _as_results(d)
        for about in misses:
            c = sequential_compare(a, b, about=about)
            truth = 0.1
            misses[about] += any(not (look.low <= truth <= look.high) for look in c.trajectory)
    assert misses["these_cases"] / experiments <= 0.06
    assert misses["cases_like_these"] / experiments <= 0.06


def _draw_differences_for_test(rng: np.random.Generator) -> np.ndarray:
    # 10 cases x 40 runs, every case at 0.7 vs 0.8 (so both targets are 0.1).
    u = rng.random((40, 10))
    return np.where(u < 0.8 * 0.3, 1, np.where(u < 0.8 * 0.3 + 0.7 * 0.2, -1, 0))


def test_simulate_sequential_bad_input() -> None:
    from evalstats.deciding._sequential import simulate_sequential

    with pytest.raises(InvalidArgument, match="runs=0 must be at least 1"):
        simulate_sequential(0.7, 0.9, 0)
    with pytest.raises(InvalidArgument, match="p_b=90.0 must be between 0 and 1"):
        simulate_sequential(0.7, 90.0, 10)
    with pytest.raises(InvalidArgument, match="needs at least 2 cases"):
        simulate_sequential(0.7, 0.9, 10, about="cases_like_these")


# --- the family the "these cases" interval inverts ---------------------------


def _share_by_quadrature(k: int, m: int, x: float, prior=None) -> float:
    # The mixture integrated numerically, independently of the closed form:
    # default, t = x + (1 - x) s with s ~ Beta(2, 2); planned, Beta(a, b) on [x, 1].
    from scipy import integrate, stats

    def ratio(t: float) -> float:
        return math.exp(k * math.log(t / x) + (m - k) * math.log((1 - t) / (1 - x)))

    if prior is None:
        value, _ = integrate.quad(lambda s: ratio(x + (1 - x) * s) * 6 * s * (1 - s), 0, 1)
        return value
    a, b = prior
    dist = stats.beta(a, b)
    value, _ = integrate.quad(lambda t: ratio(t) * dist.pdf(t), x, 1, epsabs=0, epsrel=1e-12)
    return value / dist.sf(x)


@pytest.mark.parametrize("prior", [None, (47.647, 12.353), (3.0, 2.0)])
@pytest.mark.parametrize(
    ("k", "m", "x"),
    [(5, 5, 0.5), (3, 10, 0.2), (30, 40, 0.6), (0, 7, 0.1), (12, 20, 0.35), (9, 12, 0.8)],
)
def test_the_share_e_process_is_the_mixture_it_says(k, m, x, prior) -> None:
    from evalstats.deciding._sequential import log_evalue_share

    got = math.exp(float(log_evalue_share(k, m, x, prior=prior)))
    assert got == pytest.approx(_share_by_quadrature(k, m, x, prior), rel=1e-8)


@pytest.mark.parametrize("prior", [None, (3.0, 2.0)])
def test_the_share_e_process_at_one_half_is_the_verdict_s(prior) -> None:
    from evalstats.deciding._sequential import log_evalue_share

    k, m = np.meshgrid(np.arange(0, 61), np.arange(0, 61))
    keep = k <= m
    got = log_evalue_share(k[keep], m[keep], 0.5, prior=prior)
    want = log_evalue_discordant(k[keep], m[keep], prior=prior)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("prior", [None, (47.647, 12.353)])
def test_the_share_e_process_falls_as_the_share_rises(prior) -> None:
    # What makes the set of rejected shares an interval from 0, so that the
    # printed limit is where bisection finds it: up to the observed share k / m
    # the e-value falls as the share rises, and from there on it is at most 1
    # (below any bound). For every split of 1 to 150 discordant pairs (16 counts).
    from evalstats.deciding._sequential import log_evalue_share

    x = np.linspace(0.002, 0.998, 250)
    for m in (*range(1, 40, 3), 60, 97, 150):
        for k in range(0, m + 1):
            v = log_evalue_share(k, m, x, prior=prior)
            assert not np.any(np.isnan(v)) and not np.any(v == np.inf), (k, m)
            below = x <= k / m
            assert np.all(np.diff(v[below]) <= 1e-9), (k, m)
            assert np.all(v[~below] <= 1e-12), (k, m)
