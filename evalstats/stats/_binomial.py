"""Exact binomial helpers shared by the interval, comparison, power and simulation modules.

They sit below all of those (numpy and scipy only), so that
:mod:`evalstats.stats._intervals`, :mod:`evalstats.stats._compare`, :mod:`evalstats.planning._power`
and :mod:`evalstats.planning._simulate` can share them without importing each other in
a circle.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

__all__ = [
    "binom_pmf",
    "binom_sf",
    "mcnemar_pvalue",
    "mcnemar_pvalue_exact",
    "mcnemar_thresholds",
]


def binom_pmf(k: np.ndarray, n: Any, p: Any) -> np.ndarray:
    """Binomial probabilities by log-gamma, robust for any p in [0, 1] (k, n, p broadcast).

    (``scipy.stats.binom.pmf`` overflows for subnormal p.)
    """
    from scipy.special import gammaln, xlog1py, xlogy

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    log = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return np.exp(log + xlogy(k, p) + xlog1py(n - k, -p))


def binom_sf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(X > k) for X ~ Binomial(n, p), elementwise; exact at p = 0 and p = 1."""
    from scipy.special import bdtrc

    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    if p <= 0.0:
        return (k < 0).astype(float)
    if p >= 1.0:
        return (k < n).astype(float)
    # bdtrc(k, n, p) = P(X > k) for 0 <= k < n; beyond that range the tail is 0 or 1.
    inside = bdtrc(np.clip(k, 0, np.maximum(n - 1, 0)), n, p)
    return np.where(k < 0, 1.0, np.where(k >= n, 0.0, inside))


def mcnemar_pvalue(only_a: Any, only_b: Any) -> np.ndarray:
    """Exact two-sided McNemar p-value from the discordant counts, vectorised.

    It is the two-sided binomial test of ``only_b`` successes in
    ``only_a + only_b`` trials at probability 1/2, as
    ``scipy.stats.binomtest(only_b, only_a + only_b, 0.5).pvalue``; with
    probability 1/2 the distribution is symmetric, so the p-value is twice the
    smaller tail, capped at 1. No discordant pair gives a p-value of 1.

    The tail P(X <= k) is the regularized incomplete beta function
    I_{1/2}(m - k, k + 1) (Abramowitz & Stegun 26.5.24), which is what
    ``scipy.stats.binom.cdf`` evaluates; ``scipy.special`` alone imports in
    half the time of ``scipy.stats``, which a ``compare`` would otherwise wait
    for.
    """
    from scipy.special import betainc

    only_a = np.asarray(only_a)
    only_b = np.asarray(only_b)
    m = only_a + only_b
    k = np.minimum(only_a, only_b)
    # k <= m / 2 < m whenever m > 0; the m = 0 rows are masked below.
    tail = betainc(np.maximum(m - k, 1).astype(float), k + 1.0, 0.5)
    p = 2.0 * tail
    return np.where(m > 0, np.minimum(p, 1.0), 1.0)


#: Bits kept of the binomial coefficients in :func:`mcnemar_pvalue_exact`.
_BITS = 128
#: Its tail sum stops once what is left is below 2**-_TAIL_BITS of the sum.
_TAIL_BITS = 64


def mcnemar_pvalue_exact(only_a: int, only_b: int) -> float:
    """:func:`mcnemar_pvalue` of one pair of counts, in integer arithmetic, without scipy.

    The smaller tail of Binomial(m, 1/2), m = only_a + only_b, at k =
    min(only_a, only_b) is sum_{i <= k} C(m, i) / 2^m, summed with integers
    that keep the leading :data:`_BITS` (128) bits of each term and a common
    power of 2: C(m, k) as the product of (m - k + j) / j for j = 1..k (each
    partial product is a binomial coefficient, so the divisions are exact
    until the bits are cut), then the terms below it by the recurrence
    C(m, i - 1) = C(m, i) i / (m - i + 1), until what is left is below
    2**-64 of the sum: the terms fall at least geometrically below k (their
    ratio i / (m - i + 1) < 1 falls with i), so what is left after the term
    T_i is at most T_i r / (1 - r), r that ratio. Each cut or division loses
    less than 2**-127 of the sum, so the sum is within about (k + 1) 2**-127
    + 2**-64 of the exact one, relatively: far below a float's 2**-53. Twice
    the sum over 2^m is one correctly rounded division of integers
    (underflowing to 0 as a float would), capped at 1.

    It gives the p-value of ``scipy.stats.binomtest(only_b, m, 0.5)``
    (tests/test_binomial.py checks it against that and against exact
    fractions), without importing scipy.special, which a ``compare`` would
    otherwise wait about 0.2 s for.
    """
    only_a, only_b = operator.index(only_a), operator.index(only_b)
    m = only_a + only_b
    k = min(only_a, only_b)
    if 2 * k + 1 >= m:  # the smaller tail holds half the mass or more: p = 1
        return 1.0
    # term * 2**exp is C(m, k), with at most _BITS bits kept
    term, exp = 1, 0
    for j in range(1, k + 1):
        term = term * (m - k + j) // j
        cut = term.bit_length() - _BITS
        if cut > 0:
            term >>= cut
            exp += cut
    if exp:  # a cut was made: keep _BITS bits below the leading one from here on
        term <<= _BITS
        exp -= _BITS
    total = term
    i = k
    while i > 0 and (term * i) << _TAIL_BITS >= total * (m - 2 * i + 1):
        term = term * i // (m - i + 1)
        i -= 1
        total += term
    shift = m - exp - 1  # p = total * 2**exp * 2 / 2**m
    p = total / (1 << shift) if shift >= 0 else float(total << -shift)
    return min(p, 1.0)


def mcnemar_thresholds(discordant: Any, level: float) -> np.ndarray:
    """The least ``only_b`` for which the exact McNemar test says ``b_better``.

    For each number ``d`` of discordant pairs (vectorised), the smallest count
    of B-only passes whose two-sided exact p-value (:func:`mcnemar_pvalue`)
    is below ``1 - level`` with ``only_b > only_a``; ``d + 1`` where no split
    of ``d`` pairs is significant. The p-value falls as ``only_b`` moves above
    ``d / 2``, so B is better exactly when ``only_b`` reaches this threshold.
    The power module sums over it; :func:`evalstats.stats._compare.detectable_difference` does too.
    """
    from scipy.stats import binom

    alpha = 1.0 - level
    d = np.asarray(discordant, dtype=np.int64)
    # A candidate from the binomial quantile, then the exact p-values of its
    # neighbours settle the boundary.
    k = np.asarray(binom.isf(alpha / 2, d, 0.5), dtype=float)
    k = np.where(np.isnan(k), d, k).astype(np.int64)
    best = np.full(d.shape, -1, dtype=np.int64)
    for cand in (k + 2, k + 1, k, k - 1):
        c = np.clip(cand, 0, None)
        ok = (c <= d) & (2 * c > d) & (mcnemar_pvalue(np.maximum(d - c, 0), c) < alpha)
        best = np.where(ok, c, best)
    return np.where(best < 0, d + 1, best)
