"""The exact binomial helpers against scipy.stats computing the same quantities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from evalstats.stats._binomial import mcnemar_pvalue


@settings(max_examples=200, deadline=None)
@given(only_a=st.integers(0, 5000), only_b=st.integers(0, 5000))
def test_mcnemar_pvalue_is_scipys_two_sided_binomial_test(only_a: int, only_b: int) -> None:
    got = float(mcnemar_pvalue(only_a, only_b))
    if only_a + only_b == 0:
        assert got == 1.0
        return
    want = binomtest(only_b, only_a + only_b, 0.5).pvalue
    assert got == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_mcnemar_pvalue_vectorised_matches_binom_cdf_in_the_far_tail() -> None:
    # Tails down to 1e-300 and below: the incomplete beta function and
    # scipy.stats.binom.cdf agree to a relative 1e-12 wherever the tail is a
    # normal float.
    rng = np.random.default_rng(7)
    m = rng.integers(1, 200_000, size=20_000)
    k = (rng.random(m.size) * (m // 2)).astype(np.int64)
    got = mcnemar_pvalue(k, m - k)
    want = np.minimum(2.0 * binom.cdf(k, m, 0.5), 1.0)
    normal = want > 1e-290
    assert normal.sum() > 1000 and (~normal).sum() > 100
    assert np.allclose(got[normal], want[normal], rtol=1e-12, atol=0)
    assert np.all(got[~normal] < 1e-280)
