"""The law of one case's difference of passes, which the design simulator draws from.

``CaseModel.differences(R)`` is P(K_b - K_a = d) for a case drawn from the
model and run R times by each variant. It is checked against an independent
computation (scipy's Beta density and binomial pmf integrated by
``scipy.integrate.quad``), against the frequencies of the long way (case rates
drawn, then binomial runs), and for the invariants any such law has.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.errors import InvalidArgument
from evalstats.stats import _casemodel
from evalstats.stats._casemodel import CaseModel


def _by_quad(model: CaseModel, repeats: int) -> np.ndarray:
    """The law integrated over the Beta of A's case rates by scipy (no spread)."""
    from scipy import integrate, stats
    from scipy.special import expit, logit

    a, b = model._beta()
    shift = model.shift()
    k = np.arange(repeats + 1)

    def density(d: int):
        def f(p: float) -> float:
            pa = stats.binom.pmf(k, repeats, p)
            pb = stats.binom.pmf(k + d, repeats, expit(logit(p) + shift))
            return float(stats.beta.pdf(p, a, b) * (pa * pb).sum())

        return integrate.quad(f, 0.0, 1.0, limit=400, epsabs=1e-13, epsrel=1e-11)[0]

    return np.array([density(d) for d in range(-repeats, repeats + 1)])


@pytest.mark.parametrize(
    ("p_a", "p_b", "icc"), [(0.7, 0.9, 0.3), (0.5, 0.55, 0.01), (0.3, 0.2, 0.15), (0.6, 0.8, 0.4)]
)
@pytest.mark.parametrize("repeats", [1, 3])
def test_the_law_is_scipys_integral_of_the_beta(p_a, p_b, icc, repeats):
    model = CaseModel(p_a, p_b, icc)
    np.testing.assert_allclose(model.differences(repeats), _by_quad(model, repeats), atol=1e-9)


def test_identical_cases_give_the_difference_of_two_binomials():
    # icc 0: every case has A's rate; the law is the difference of two
    # independent binomials, written out by hand at one and two runs.
    model = CaseModel(0.6, 0.75, 0.0)
    qa, qb = 0.6, 0.75
    one = [qa * (1 - qb), qa * qb + (1 - qa) * (1 - qb), (1 - qa) * qb]
    np.testing.assert_allclose(model.differences(1), one, atol=1e-15)
    pa = [(1 - qa) ** 2, 2 * qa * (1 - qa), qa**2]
    pb = [(1 - qb) ** 2, 2 * qb * (1 - qb), qb**2]
    two = [sum(pa[k] * pb[k + d] for k in range(3) if 0 <= k + d < 3) for d in range(-2, 3)]
    np.testing.assert_allclose(model.differences(2), two, atol=1e-15)


@pytest.mark.parametrize("model", [CaseModel(0.7, 0.85, 0.3), CaseModel(0.6, 0.75, 0.2, 0.5)])
@pytest.mark.parametrize("repeats", [1, 4])
def test_the_law_is_what_drawn_rates_and_runs_give(model, repeats):
    # The long way: 400,000 cases' rates drawn from the model, then binomial
    # runs; each difference's frequency within 5 sd of its probability.
    rng = np.random.default_rng(repeats)
    qa, qb = model.draw(rng, (400_000,))
    d = rng.binomial(repeats, qb) - rng.binomial(repeats, qa)
    freq = np.bincount(d + repeats, minlength=2 * repeats + 1) / d.size
    law = model.differences(repeats)
    sd = np.sqrt(law * (1 - law) / d.size)
    assert np.all(np.abs(freq - law) <= 5 * sd + 1e-12)


@pytest.mark.parametrize("repeats", [5, 40, 200])
def test_the_convolution_by_fft_is_the_direct_sum(repeats, monkeypatch):
    model = CaseModel(0.65, 0.8, 0.25, 0.3)
    x, wx = model._nodes()
    y = _casemodel._shifted(x[:, None], model.shift(), model.spread)
    wy = _casemodel._hermite(model.spread)[1]
    args = (x[None, :], wx[None, :], y[None, :, :], wy, repeats)
    monkeypatch.setattr(_casemodel, "_PMF_FFT", 10**6)
    direct = _casemodel.difference_pmf(*args)
    monkeypatch.setattr(_casemodel, "_PMF_FFT", 0)
    by_fft = _casemodel.difference_pmf(*args)
    np.testing.assert_allclose(by_fft, direct, atol=1e-13)


def test_a_mixtures_law_is_its_models_law():
    # The posterior's models use 64 quantile nodes (and solve B's shift on
    # them); the CaseModel its own quadrature: the two laws agree to 1e-4.
    from evalstats.planning._pilot import _case_rates, _solve_shifts, differences_of

    for p_a, icc, p_b, spread in [(0.7, 0.3, 0.9, 0.0), (0.5, 0.05, 0.6, 0.4), (0.9, 0.5, 0.97, 0)]:
        mu, rho = np.array([p_a]), np.array([icc])
        shift = _solve_shifts(_case_rates(mu, rho), np.array([p_b]), spread)
        for repeats in (1, 3, 20):
            ours = differences_of(mu, rho, shift, spread, repeats)[0]
            theirs = CaseModel(p_a, p_b, icc, spread).differences(repeats)
            np.testing.assert_allclose(ours, theirs, atol=1e-4)


@settings(max_examples=60, deadline=None)
@given(
    p_a=st.floats(0.02, 0.98),
    gain=st.floats(-0.3, 0.3),
    icc=st.floats(0.0, 0.8),
    spread=st.sampled_from([0.0, 0.3, 1.0]),
    repeats=st.integers(1, 60),
)
def test_a_law_is_a_law_with_the_models_mean(p_a, gain, icc, spread, repeats):
    p_b = min(max(p_a + gain, 0.01), 0.99)
    try:
        model = CaseModel(p_a, p_b, icc, spread)
        law = model.differences(repeats)
    except InvalidArgument:
        return  # a model the case model refuses (nearly every case at 0 or 1)
    assert law.shape == (2 * repeats + 1,)
    assert np.all(law >= 0.0)
    assert math.isclose(law.sum(), 1.0, abs_tol=1e-12)
    mean = float((law * np.arange(-repeats, repeats + 1)).sum())
    assert mean == pytest.approx(repeats * model.moments()["difference"], abs=1e-8 * repeats)
    if p_b == p_a and spread == 0.0:
        # B is A: the difference is symmetric about 0, up to the shift that
        # makes the nodes' mean of B exactly p_b where the nodes' mean of A is
        # off it by the quadrature's error (3e-6 at p_a 0.125, icc 0.25, where
        # the Beta piles up at 0 and the nodes are its quantiles' midpoints)
        x, w = model._nodes()
        off = abs(float((x * w).sum()) - p_a)
        assert np.abs(law - law[::-1]).max() <= 4 * repeats * off + 1e-12


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_repeats_that_are_not_runs_are_refused_by_name(bad):
    with pytest.raises(InvalidArgument, match="repeats="):
        CaseModel(0.6, 0.7, 0.1).differences(bad)


@settings(max_examples=80, deadline=None)
@given(
    p_a=st.floats(0.01, 0.99),
    p_b=st.floats(0.01, 0.99),
    icc=st.sampled_from([0.0, 0.001, 0.05, 0.3, 0.7, 0.9]),
    spread=st.sampled_from([0.0, 0.5, 2.0]),
)
def test_the_shift_is_scipys_root_of_the_mean(p_a, p_b, icc, spread):
    # The case model solves B's logit shift by Newton's steps in a bracket;
    # scipy.optimize.brentq on the same mean gives the same root.
    from scipy.optimize import brentq

    try:
        model = CaseModel(p_a, p_b, icc, spread)
        shift = model.shift()
    except InvalidArgument:
        return  # nearly every case at 0 or 1
    x, w = model._nodes()
    weights = w[:, None] * _casemodel._hermite(spread)[1][None, :]

    def gap(s: float) -> float:
        return float((_casemodel._shifted(x[:, None], s, spread) * weights).sum()) - p_b

    assert abs(gap(shift)) < 1e-10
    if gap(-80.0) < 0.0 < gap(80.0):
        assert shift == pytest.approx(brentq(gap, -80.0, 80.0, xtol=1e-13), abs=1e-10)
