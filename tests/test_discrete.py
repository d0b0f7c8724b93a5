"""The discrete multiplicity adjustments behind the per-case flags (evalstats.stats._discrete)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import attained_families

from evalstats.errors import InvalidArgument
from evalstats.stats._compare import adjust_pvalues, compare
from evalstats.stats._discrete import (
    adjust_discrete,
    fisher_attainable,
    flag_power,
    flags_note,
    mcnemar_attainable,
    repeats_to_flag,
    smallest_pvalue,
)

# --- what each test can attain ------------------------------------------------


def test_mcnemar_attainable_values_are_binomtests() -> None:
    from scipy.stats import binomtest

    for d in range(0, 31):
        ref = sorted({binomtest(k, d, 0.5).pvalue for k in range(d + 1)}) if d else [1.0]
        assert mcnemar_attainable(d).tolist() == pytest.approx(ref, rel=1e-12)


def test_mcnemar_attainable_with_kept_bits_is_the_exact_one(monkeypatch) -> None:
    # The leading bits and an error bound give the very floats of exact integers,
    # past the first cut, near the underflow to 0.0 and where compare meets them.
    from evalstats.stats import _discrete

    exact = _discrete._mcnemar_attainable_exact
    fast = _discrete._mcnemar_attainable.__wrapped__
    monkeypatch.setattr(_discrete, "_EXACT_BELOW", 1)
    monkeypatch.setattr(_discrete, "_mcnemar_attainable_exact", None)  # no fallback taken
    for d in [*range(1, 200), 1074, 1075, 1076, 1077, 2148, 2149, 2150, 2151, 4200, 5200]:
        assert [v.hex() for v in fast(d)] == [v.hex() for v in exact(d)], d


def test_fisher_attainable_values_are_fisher_exacts() -> None:
    from scipy.stats import fisher_exact

    from evalstats.stats._discrete import _fisher_all

    for na, nb in [(1, 1), (3, 3), (2, 7), (10, 10), (6, 4)]:
        for s in range(na + nb + 1):
            ka = range(max(0, s - nb), min(na, s) + 1)
            ref = [fisher_exact([[k, na - k], [s - k, nb - s + k]]).pvalue for k in ka]
            assert _fisher_all(na, nb, s).tolist() == pytest.approx(ref, rel=1e-9)
            assert fisher_attainable(na, nb, s).tolist() == pytest.approx(
                sorted(set(np.round(ref, 12).tolist())), rel=1e-9
            )


def test_smallest_pvalue_is_the_smallest_over_every_table() -> None:
    assert smallest_pvalue(5, 5, paired=True) == 2 / 2**5
    assert smallest_pvalue(6, 6, paired=True) == 2 / 2**6
    assert smallest_pvalue(1600, 1600, paired=True) == 0.0  # underflows, no error
    for na in range(1, 13):
        for nb in range(1, 13):
            every = min(fisher_attainable(na, nb, s)[0] for s in range(na + nb + 1))
            assert smallest_pvalue(na, nb, paired=False) == pytest.approx(every, rel=1e-12)
    # both sides n: all of A passes and none of B, or the other way round
    assert smallest_pvalue(4, 4, paired=False) == pytest.approx(2 / math.comb(8, 4))


# --- the adjustments: references ---------------------------------------------------

# One-sided binomial p-values, the example of the R package MHTdiscrete 1.0.1 (Zhu
# & Guo's implementation of their 2019 paper): p = pbinom(1, n, q) for (n, q) =
# (8, 0.5), (5, 0.75), (6, 0.6), each test attaining pbinom(0:n, n, q).
MHT_P = [9 / 256, 1 / 64, 0.04096]
MHT_SETS = [
    [sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k + 1)) for k in range(n + 1)]
    for n, q in ((8, 0.5), (5, 0.75), (6, 0.6))
]


def test_tarone_reproduces_mhtdiscrete() -> None:
    got = adjust_discrete(MHT_P, MHT_SETS, method="tarone")
    # MHTdiscrete 1.0.1, Tarone.p.adjust(p, p.set): its documented example output,
    # printed to 7 significant digits
    assert got.tolist() == pytest.approx([0.1054688, 0.0468750, 0.1228800], abs=6e-8)


def test_discrete_holm_by_hand() -> None:
    # Zhu & Guo (2019), the modified Holm procedure, step by step on the
    # example above. Sorted: p2 = 1/64 < p1 = 9/256 < p3 = 0.04096.
    # Step 1 at t = 1/64: test 1 reaches 1/256 at most, test 2 1/64, test 3
    # 0.4^6 = 0.004096: 1/256 + 1/64 + 0.004096 = 0.02362725.
    # Step 2 at t = 9/256, tests 1 and 3: 9/256 + 0.004096 = 0.03925225.
    # Step 3 at t = 0.04096, test 3: 0.04096.
    got = adjust_discrete(MHT_P, MHT_SETS, method="discrete_holm")
    assert got.tolist() == pytest.approx([0.03925225, 0.02362725, 0.04096], rel=1e-12)
    # Holm multiplies by 3, 2, 1 (statsmodels' multipletests gives the same)
    assert adjust_pvalues(MHT_P, method="holm").tolist() == pytest.approx(
        [0.0703125, 0.046875, 0.0703125]
    )


def test_first_step_is_the_discrete_bonferroni_of_westfall_and_wolfinger() -> None:
    # The smallest p-value's adjusted value is sum_j p*_j, p*_j the largest
    # value test j can attain at or below it (Westfall & Wolfinger 1997; as
    # SAS PROC MULTTEST computes its Bonferroni adjustment for exact tests).
    rng = np.random.default_rng(5)
    for _ in range(50):
        d = rng.integers(0, 15, size=6)
        sets = [mcnemar_attainable(x) for x in d]
        p = np.array([s[rng.integers(s.size)] for s in sets])
        i = int(np.argmin(p))
        ref = sum(s[s <= p[i]].max(initial=0.0) for s in sets)
        got = adjust_discrete(p, sets, method="discrete_holm")[i]
        assert got == pytest.approx(min(ref, 1.0), rel=1e-12)


def _closed_test(p: list[float], sets: list[np.ndarray]) -> list[float]:
    """Adjusted p-values of the closed test, every intersection enumerated.

    The local test of a set I of hypotheses is the discrete Bonferroni test:
    its p-value is the sum over I of F_j(min p_I), F_j(t) the largest value
    test j attains at or below t. A hypothesis' adjusted p-value is the
    largest local p-value over the sets that hold it.
    """
    m = len(p)

    def floor(s: np.ndarray, t: float) -> float:
        below = s[s <= t * (1 + 1e-12)]
        return float(below.max()) if below.size else 0.0

    out = [0.0] * m
    for size in range(1, m + 1):
        for subset in itertools.combinations(range(m), size):
            t = min(p[i] for i in subset)
            local = min(1.0, sum(floor(sets[j], t) for j in subset))
            for i in subset:
                out[i] = max(out[i], local)
    return out


@settings(max_examples=150, deadline=None)
@given(attained_families())
def test_discrete_holm_is_its_closed_test(family) -> None:
    p, sets = family
    got = adjust_discrete(p, sets, method="discrete_holm")
    assert got.tolist() == pytest.approx(_closed_test(p, sets), rel=1e-9, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(attained_families(max_size=8), st.data())
def test_adjusted_pvalues_invariants(family, data) -> None:
    p, sets = family
    raw = np.array(p)
    dholm = adjust_discrete(p, sets, method="discrete_holm")
    tarone = adjust_discrete(p, sets, method="tarone")
    holm = adjust_pvalues(p, method="holm")
    bonf = adjust_pvalues(p, method="bonferroni")
    tol = 1e-12
    for adj in (dholm, tarone):
        assert ((adj >= raw - tol) & (adj <= 1.0)).all()
        # ordered as the raw p-values are
        order = np.argsort(raw, kind="stable")
        assert (np.diff(adj[order]) >= -tol).all()
    # the discrete Holm adjusts no more than Holm or Tarone, Tarone no more than Bonferroni
    assert (dholm <= holm + tol).all() and (dholm <= tarone + tol).all()
    assert (tarone <= bonf + tol).all()
    # lowering one p-value to a smaller value its test attains raises no adjusted one
    i = data.draw(st.integers(0, len(p) - 1))
    below = sets[i][sets[i] < p[i]]
    if below.size:
        lower = list(p)
        lower[i] = float(below[data.draw(st.integers(0, below.size - 1))])
        for method, before in (("discrete_holm", dholm), ("tarone", tarone)):
            after = adjust_discrete(lower, sets, method=method)
            assert (after <= before + tol).all()


def test_nan_pvalues_are_left_out() -> None:
    sets = [mcnemar_attainable(8), None, mcnemar_attainable(3)]
    got = adjust_discrete([2 / 2**8, math.nan, 0.25], sets, method="discrete_holm")
    assert math.isnan(got[1])
    assert got[[0, 2]].tolist() == pytest.approx([2 / 2**8, 0.25])


# --- family-wise error, exactly -------------------------------------------------


def _outcomes(kind: tuple) -> list[tuple[float, float]]:
    """(p-value, null probability) of every outcome of a test given what it conditions on."""
    from scipy.stats import binomtest, fisher_exact, hypergeom

    if kind[0] == "mcnemar":
        d = kind[1]
        return [
            (binomtest(k, d, 0.5).pvalue if d else 1.0, math.comb(d, k) / 2**d)
            for k in range(d + 1)
        ]
    _, na, nb, s = kind
    return [
        (
            fisher_exact([[k, na - k], [s - k, nb - s + k]]).pvalue,
            float(hypergeom.pmf(k, na + nb, s, na)),
        )
        for k in range(max(0, s - nb), min(na, s) + 1)
    ]


def _attainable(kind: tuple) -> np.ndarray:
    return mcnemar_attainable(kind[1]) if kind[0] == "mcnemar" else fisher_attainable(*kind[1:])


FAMILIES = [
    [("mcnemar", 6), ("mcnemar", 7), ("mcnemar", 3)],
    [("mcnemar", 10), ("mcnemar", 10), ("mcnemar", 10)],
    [("mcnemar", 8), ("mcnemar", 2), ("mcnemar", 9), ("mcnemar", 5)],
    [("fisher", 5, 5, 5), ("fisher", 4, 4, 4), ("fisher", 6, 6, 3)],
    [("fisher", 8, 8, 8), ("mcnemar", 9), ("fisher", 3, 7, 4)],
]


@pytest.mark.parametrize("tests", FAMILIES)
@pytest.mark.parametrize("method", ["discrete_holm", "tarone"])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_family_wise_error_is_kept_exactly(tests, method, alpha) -> None:
    # Strong control, by enumeration: for every set of true nulls, and every
    # outcome of the false ones, the exact chance of flagging a true null.
    sets = [_attainable(t) for t in tests]
    outcomes = [_outcomes(t) for t in tests]
    m = len(tests)
    worst = 0.0
    for size in range(1, m + 1):
        for nulls in itertools.combinations(range(m), size):
            others = [i for i in range(m) if i not in nulls]
            for fixed in itertools.product(*(outcomes[i] for i in others)):
                error = 0.0
                for drawn in itertools.product(*(outcomes[i] for i in nulls)):
                    p = [0.0] * m
                    prob = 1.0
                    for i, (q, w) in zip(nulls, drawn, strict=True):
                        p[i] = q
                        prob *= w
                    for i, (q, _) in zip(others, fixed, strict=True):
                        p[i] = q
                    adj = adjust_discrete(p, sets, method=method)
                    if (adj[list(nulls)] < alpha).any():
                        error += prob
                worst = max(worst, error)
    assert worst <= alpha + 1e-12


# --- adjust_pvalues checks its arguments -------------------------------------------


def test_adjust_pvalues_discrete_needs_attainable_sets() -> None:
    sets = [mcnemar_attainable(8), mcnemar_attainable(2)]
    got = adjust_pvalues([2 / 2**8, 1.0], method="discrete_holm", attainable=sets)
    assert got.tolist() == [2 / 2**8, 1.0]
    with pytest.raises(InvalidArgument, match="attainable=None: adjust='discrete_holm'"):
        adjust_pvalues([0.01], method="discrete_holm")
    with pytest.raises(InvalidArgument, match="one set of p-values for each of the 2"):
        adjust_pvalues([0.01, 0.5], method="tarone", attainable=sets[:1])
    with pytest.raises(InvalidArgument, match=r"pvalues\[1\]=0.3 is not among attainable\[1\]"):
        adjust_pvalues([2 / 2**8, 0.3], method="tarone", attainable=sets)
    with pytest.raises(InvalidArgument, match=r"attainable\[0\] must be the p-values in \(0, 1\]"):
        adjust_pvalues([0.5], method="tarone", attainable=[[0.5, 0.2, 1.0]])
    with pytest.raises(InvalidArgument, match="adjust='tarrone'.*did you mean 'tarone'"):
        adjust_pvalues([0.5], method="tarrone")


# --- wired into compare --------------------------------------------------------------


def test_compare_flags_use_the_discrete_adjustment_of_each_cases_test() -> None:
    rng = np.random.default_rng(11)
    a = {f"c{i}": list(rng.random(10) < 0.7) for i in range(12)}
    b = {f"c{i}": list(rng.random(10) < 0.7) for i in range(12)}
    a["c0"], b["c0"] = [True] * 10, [False] * 10
    for paired in (True, False):
        c = compare(a, b, paired=paired, about="these_cases")
        assert c.adjust == "discrete_holm"
        raw = [row.pvalue for row in c.cases]
        if paired:
            sets = [mcnemar_attainable(int(np.sum(np.array(a[k]) != np.array(b[k])))) for k in a]
        else:
            sets = [
                fisher_attainable(10, 10, int(np.sum(a[k]) + np.sum(b[k])))  # margins
                for k in a
            ]
        ref = adjust_pvalues(raw, method="discrete_holm", attainable=sets)
        assert [row.adjusted_pvalue for row in c.cases] == pytest.approx(ref.tolist())
        assert c.worse_cases == ("c0",)
        assert c.to_dict()["flags_possible"] is True


# --- when no case can be flagged ---------------------------------------------------------


def test_with_five_repeats_the_flags_say_no_case_can_be_flagged() -> None:
    a = {f"c{i}": [True] * 5 for i in range(40)}
    b = {f"c{i}": [True] * 4 + [False] for i in range(40)}
    b["c0"] = [False] * 5
    c = compare(a, b, about="these_cases")
    assert not c.worse_cases  # 5 pairs one way: p = 0.0625 at best
    text = c.flags_text()
    assert text == (
        "discrete Holm-adjusted over 40 cases; with 5 repeats no single case can be flagged "
        "at 95%; 34 repeats would usually flag a case that drops from 90% to 40% among 40 cases"
    )
    d = c.to_dict()
    assert d["flags"] == text and d["flags_possible"] is False
    # six repeats can reach p = 0.03125: no note
    six = compare({k: v + [True] for k, v in a.items()}, {k: v + [True] for k, v in b.items()})
    assert six.flags_possible and ";" not in six.flags_text()
    # unadjusted, the same case alone
    assert "18 repeats would usually flag" in compare(a, b, adjust="none").flags_text()
    # unpaired, Fisher's test reaches 2 / C(2n, n): below 5% from 4 repeats a side
    three = {k: v[:3] for k, v in a.items()}
    worse = {k: v[:3] for k, v in b.items()}
    unpaired = compare(three, worse, paired=False)
    assert "with 3 repeats no single case can be flagged at 95%" in unpaired.flags_text()
    four = compare({k: v[:4] for k, v in a.items()}, {k: v[:4] for k, v in b.items()}, paired=False)
    assert four.flags_possible


def _power_by_enumeration(n: int, threshold: float, paired: bool) -> float:
    """The chance of a worse-direction p < threshold, every outcome enumerated (scipy's tests)."""
    from scipy.stats import binomtest, fisher_exact

    pa, pb = 0.9, 0.4
    total = 0.0
    if paired:
        qa, qb = pa * (1 - pb), pb * (1 - pa)
        for oa in range(n + 1):
            for ob in range(n + 1 - oa):
                d = oa + ob
                if oa > ob and binomtest(ob, d, 0.5).pvalue < threshold:
                    ways = math.factorial(n) // (
                        math.factorial(oa) * math.factorial(ob) * math.factorial(n - d)
                    )
                    total += ways * qa**oa * qb**ob * (1 - qa - qb) ** (n - d)
        return total
    for ka in range(n + 1):
        for kb in range(ka):
            if fisher_exact([[ka, n - ka], [kb, n - kb]]).pvalue < threshold:
                total += (
                    math.comb(n, ka)
                    * pa**ka
                    * (1 - pa) ** (n - ka)
                    * math.comb(n, kb)
                    * pb**kb
                    * (1 - pb) ** (n - kb)
                )
    return total


@pytest.mark.parametrize("paired", [True, False])
def test_flag_power_is_exact(paired) -> None:
    for n, threshold in ((6, 0.05), (10, 0.005), (14, 0.05 / 40)):
        got = flag_power(n, threshold, paired=paired)
        assert got == pytest.approx(
            _power_by_enumeration(n, threshold, paired), rel=1e-9, abs=1e-15
        )


def test_repeats_to_flag_is_the_first_with_eighty_percent() -> None:
    for cases, paired in ((1, True), (10, True), (10, False)):
        n = repeats_to_flag(cases, level=0.95, paired=paired, adjusted=True)
        assert n is not None
        threshold = 0.05 / cases
        assert flag_power(n, threshold, paired=paired) >= 0.8
        assert all(flag_power(k, threshold, paired=paired) < 0.8 for k in range(1, n))
    assert flags_note([], level=0.95, paired=True, adjusted=True) == ""
    assert flags_note([(10, 10)] * 3, level=0.95, paired=True, adjusted=True) == ""
    note = flags_note([(2, 3), (3, 2)], level=0.9, paired=False, adjusted=True)
    assert note.startswith("with at most 3 repeats per case no single case can be flagged at 90%")
