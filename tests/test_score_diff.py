"""The score interval printed beside the z test's verdict (stats/_score_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import ndtri
from statsmodels.stats.proportion import proportions_ztest

from evalstats.stats._compare import compare_counts
from evalstats.stats._score_diff import _restricted, score_diff_interval, score_diff_z


def test_newcombe_s_example_a_by_mee_s_method() -> None:
    # Newcombe, R. G. (1998). Interval estimation for the difference between
    # independent proportions: comparison of eleven methods. Statistics in
    # Medicine 17, 873-890, table II, example (a), method 5 (Mee's score
    # interval): 56/70 against 48/80 gives 0.0533 to 0.3377.
    est, low, high = score_diff_interval(48, 80, 56, 70, level=0.95)
    assert (round(float(low), 4), round(float(high), 4)) == (0.0533, 0.3377)
    assert float(est) == pytest.approx(0.2)


@pytest.mark.parametrize(
    ("ka", "na", "kb", "nb", "d"),
    [(7, 11, 44, 48, 0.2), (3, 10, 9, 10, -0.1), (20, 50, 40, 50, 0.35), (0, 9, 4, 12, 0.5)],
)
def test_the_restricted_rates_maximise_the_likelihood(ka, na, kb, nb, d) -> None:
    # Against a numerical maximisation of the likelihood under p_b - p_a = d.
    def nll(ra: float) -> float:
        rb = ra + d
        return -(
            ka * np.log(ra)
            + (na - ka) * np.log1p(-ra)
            + kb * np.log(rb)
            + (nb - kb) * np.log1p(-rb)
        )

    lo, hi = max(0.0, -d) + 1e-12, min(1.0, 1.0 - d) - 1e-12
    best = minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13})
    ra, rb = _restricted(*(np.asarray(float(x)) for x in (ka / na, na, kb / nb, nb, d)))
    assert float(ra) == pytest.approx(best.x, abs=1e-7)
    assert float(rb) == pytest.approx(best.x + d, abs=1e-7)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 80).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 80).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_the_interval_inverts_the_pooled_z_test(a, b, level) -> None:
    (ka, na), (kb, nb) = a, b
    z0 = float(score_diff_z(ka, na, kb, nb, 0.0))
    if 0 < ka + kb < na + nb:
        # At d = 0 the score statistic is the pooled z (statsmodels).
        z_ref, _ = proportions_ztest([kb, ka], [nb, na], value=0)
        assert z0 == pytest.approx(z_ref, rel=1e-9, abs=1e-12)
    est, low, high = (float(x) for x in score_diff_interval(ka, na, kb, nb, level=level))
    assert -1.0 <= low <= est <= high <= 1.0
    crit = float(ndtri(1 - (1 - level) / 2))
    # Each limit strictly inside (-1, 1) is where the statistic meets the quantile.
    if -1.0 < low < min(est, 0.0):
        assert float(score_diff_z(ka, na, kb, nb, low)) == pytest.approx(crit, abs=1e-6)
    if max(est, 0.0) < high < 1.0:
        assert float(score_diff_z(ka, na, kb, nb, high)) == pytest.approx(-crit, abs=1e-6)
    c = compare_counts(ka, na, kb, nb, method="ztest", level=level)
    assert c.difference.method == "score"
    assert (c.verdict == "b_better") == (c.difference.low > 0)
    assert (c.verdict == "a_better") == (c.difference.high < 0)


def test_overlap_prints_the_interval_its_rule_reads() -> None:
    c = compare_counts(30, 40, 39, 40, method="overlap")
    assert c.difference.method == "wilson overlap"
    assert (c.verdict == "b_better") == (c.difference.low > 0)
    assert c.difference.low <= c.difference.estimate <= c.difference.high
