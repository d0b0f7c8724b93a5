"""The score interval of a difference of two independent rates, and its test.

The pooled two-proportion z test (``compare(..., method="ztest")``) rejects
"no difference" when |z| exceeds the normal quantile, z computed with the
variance at the pooled rate: the rates' maximum-likelihood estimates under
p_b - p_a = 0. Asking the same question of every difference d, with the
variance at the maximum-likelihood rates under p_b - p_a = d, gives the score
test of each d; the differences it does not reject form the score interval
(Mee 1984; Farrington & Manning 1990; Newcombe 1998, method 5). At d = 0 the
test is the pooled z test, so the interval excludes 0 exactly when the z test
finds a difference: the interval printed beside the z test's verdict.

References
----------
Mee, R. W. (1984). Confidence bounds for the difference between two
probabilities. Biometrics 40, 1175-1176.

Farrington, C. P. and Manning, G. (1990). Test statistics and sample size
formulae for comparative binomial trials with null hypothesis of non-zero risk
difference or non-unity relative risk. Statistics in Medicine 9, 1447-1454.

Miettinen, O. and Nurminen, M. (1985). Comparative analysis of two rates.
Statistics in Medicine 4, 213-226 (the restricted estimates, appendix).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["score_diff_interval", "score_diff_z"]


def _restricted(pa: np.ndarray, na: np.ndarray, pb: np.ndarray, nb: np.ndarray, d: np.ndarray):
    """The maximum-likelihood rates (p_a, p_b) under p_b - p_a = d.

    The root in [max(0, -d), min(1, 1 - d)] of the likelihood equation's cubic,
    in the trigonometric form of Miettinen & Nurminen (1985), with B as their
    first sample (theta = n_a / n_b).
    """
    theta = na / nb
    a = 1.0 + theta
    b = -(1.0 + theta + pb + theta * pa + d * (theta + 2.0))
    c = d * d + d * (2.0 * pb + theta + 1.0) + pb + theta * pa
    e = -pb * d * (1.0 + d)
    v = b**3 / (27.0 * a**3) - b * c / (6.0 * a * a) + e / (2.0 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b * b / (9.0 * a * a) - c / (3.0 * a), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(u != 0.0, v / u**3, 0.0)
    w = (math.pi + np.arccos(np.clip(ratio, -1.0, 1.0))) / 3.0
    rb = np.clip(2.0 * u * np.cos(w) - b / (3.0 * a), 0.0, 1.0)
    ra = np.clip(rb - d, 0.0, 1.0)
    return ra, rb


def score_diff_z(ka: Any, na: Any, kb: Any, nb: Any, d: Any = 0.0) -> np.ndarray:
    """The score statistic of p_b - p_a = ``d``: (observed difference - d) / its
    standard error at the restricted estimates. At ``d`` = 0 it is the pooled z.
    Infinite where that standard error is 0 and the difference is not ``d``;
    0 where both are. Vectorised."""
    ka, na, kb, nb, d = np.broadcast_arrays(
        *(np.asarray(x, dtype=float) for x in (ka, na, kb, nb, d))
    )
    pa, pb = ka / na, kb / nb
    ra, rb = _restricted(pa, na, pb, nb, d)
    var = ra * (1.0 - ra) / na + rb * (1.0 - rb) / nb
    gap = pb - pa - d
    with np.errstate(divide="ignore", invalid="ignore"):
        z = gap / np.sqrt(var)
    edge = np.where(gap > 0, np.inf, np.where(gap < 0, -np.inf, 0.0))
    return np.where(var > 0, z, edge)


def score_diff_interval(
    ka: Any, na: Any, kb: Any, nb: Any, *, level: float, verdict: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) of the score interval of p_b - p_a at ``level``.

    The score statistic falls as d rises, so each limit is where it crosses the
    normal quantile, found by bisection (60 steps, to 1e-18 of the bracket) on
    [-1, estimate]; the high limit as the low one of A - B, so that swapping
    A and B mirrors the interval exactly. Where the pooled z test rejects (or
    keeps) "no difference" the interval is made to exclude (or hold) 0 to
    within that tolerance, so it always agrees with the test's verdict:
    ``verdict`` (+1 B better, -1 A better, 0), as the caller's z test gave it,
    or the test computed here. Vectorised over the counts (all trials positive).

    Examples
    --------
    Newcombe (1998), table II, example (a), method 5 (Mee): 56/70 against 48/80.

    >>> est, low, high = score_diff_interval(48, 80, 56, 70, level=0.95)
    >>> round(float(low), 4), round(float(high), 4)
    (0.0533, 0.3377)
    """
    from scipy.special import ndtri

    ka, na, kb, nb = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (ka, na, kb, nb)))
    crit = float(ndtri(1.0 - (1.0 - level) / 2.0))
    est = kb / nb - ka / na

    def lower(ka: np.ndarray, na: np.ndarray, kb: np.ndarray, nb: np.ndarray) -> np.ndarray:
        # Where the statistic, falling in d, meets the quantile on [-1, estimate].
        lo, hi = np.full(ka.shape, -1.0), kb / nb - ka / na
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            outside = score_diff_z(ka, na, kb, nb, mid) >= crit
            lo, hi = np.where(outside, mid, lo), np.where(outside, hi, mid)
        return np.where(score_diff_z(ka, na, kb, nb, -1.0) < crit, -1.0, 0.5 * (lo + hi))

    # The high limit is the low one of the difference the other way round, so
    # that swapping A and B mirrors the interval to the last bit.
    low, high = lower(ka, na, kb, nb), -lower(kb, nb, ka, na)
    if verdict is None:
        from scipy.special import ndtr

        z0 = score_diff_z(ka, na, kb, nb, 0.0)
        significant = 2.0 * ndtr(-np.abs(z0)) < 1.0 - level
        verdict = np.where(significant, np.sign(est), 0.0)
    verdict = np.broadcast_to(np.asarray(verdict, dtype=float), est.shape)
    tiny = np.nextafter(0.0, 1.0)
    low = np.where(verdict > 0, np.maximum(low, tiny), np.minimum(low, 0.0))
    high = np.where(verdict < 0, np.minimum(high, -tiny), np.maximum(high, 0.0))
    return est, np.minimum(low, est), np.maximum(high, est)
