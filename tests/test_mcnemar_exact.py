"""The exact McNemar p-value in integer arithmetic, against scipy and exact fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from evalstats.stats._binomial import mcnemar_pvalue_exact


def exact(only_a: int, only_b: int) -> float:
    """Twice the smaller binomial tail at 1/2, capped at 1, as an exact fraction made float."""
    m, k = only_a + only_b, min(only_a, only_b)
    if m == 0:
        return 1.0
    tail = Fraction(sum(math.comb(m, i) for i in range(k + 1)), 2**m)
    return float(min(2 * tail, Fraction(1)))


@settings(max_examples=300, deadline=None)
@given(only_a=st.integers(0, 5000), only_b=st.integers(0, 5000))
def test_it_is_scipys_two_sided_binomial_test(only_a: int, only_b: int) -> None:
    got = mcnemar_pvalue_exact(only_a, only_b)
    if only_a + only_b == 0:
        assert got == 1.0
        return
    want = binomtest(only_b, only_a + only_b, 0.5).pvalue  # scipy.stats.binomtest
    # (scipy's incomplete beta function underflows to 0 below about 1e-268)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-250)


@settings(max_examples=300, deadline=None)
@given(only_a=st.integers(0, 1500), only_b=st.integers(0, 1500))
def test_it_is_the_exact_fraction_to_the_last_bit(only_a: int, only_b: int) -> None:
    # The tail sum keeps 128 bits: the float is the exact value's correctly
    # rounded one, or (when the exact value lies within 2**-64 of a halfway
    # point) its neighbour.
    want = exact(only_a, only_b)
    got = mcnemar_pvalue_exact(only_a, only_b)
    assert abs(got - want) <= math.ulp(want)


def test_it_is_symmetric_and_one_when_the_split_is_even() -> None:
    assert mcnemar_pvalue_exact(0, 0) == 1.0
    assert mcnemar_pvalue_exact(5, 5) == 1.0
    assert mcnemar_pvalue_exact(5, 6) == 1.0  # P(X <= 5 | 11) is exactly 1/2
    assert mcnemar_pvalue_exact(3, 9) == mcnemar_pvalue_exact(9, 3) == exact(3, 9)
    assert mcnemar_pvalue_exact(0, 1) == 1.0
    assert mcnemar_pvalue_exact(0, 10) == 2.0**-9  # twice 1 / 2**10
    assert mcnemar_pvalue_exact(0, 2000) == 0.0  # 2**-1999 underflows, as a float would


def test_large_counts_match_scipy_binom_cdf_in_the_tail() -> None:
    # Counts up to 200,000 discordant pairs, tails down to about 1e-250: the
    # integer sum and scipy.stats.binom.cdf agree to a relative 1e-11 wherever
    # scipy's value is a normal float above 1e-250 (below, scipy's incomplete
    # beta function underflows to 0 before the float does).
    rng = np.random.default_rng(11)
    m = rng.integers(1, 200_000, size=150)
    near = m // 2 - (rng.random(m.size) * 5 * np.sqrt(m)).astype(np.int64)
    far = (rng.random(m.size) * (m // 2)).astype(np.int64)
    for mm, k in zip(np.concatenate([m, m]), np.concatenate([near, far]), strict=True):
        mm, k = int(mm), max(int(k), 0)
        got = mcnemar_pvalue_exact(k, mm - k)
        want = min(2.0 * float(binom.cdf(k, mm, 0.5)), 1.0)
        if want > 1e-250:
            assert got == pytest.approx(want, rel=1e-11), (k, mm)
        else:
            assert got < 1e-240, (k, mm)


def test_counts_must_be_integers() -> None:
    with pytest.raises(TypeError):
        mcnemar_pvalue_exact(1.5, 3)  # type: ignore[arg-type]
