"""Tango's score test and interval for a difference of paired pass rates.

Both variants ran on the same ``n`` (case, repeat) pairs; ``only_a`` pairs
passed under A alone and ``only_b`` under B alone. The difference of pass
rates is ``delta = p_b - p_a``, the probability of an only-B pair minus that
of an only-A pair, estimated by ``(only_b - only_a) / n``; the pairs where
both or neither passed enter only through ``n``.

The score test of ``H0: delta = delta0`` (Tango 1998) compares
``S = only_b - only_a - n delta0`` with its standard deviation under H0, in
which the probability of the less likely discordant cell is its maximum
likelihood estimate under the constraint (the root of a quadratic). At
``delta0 = 0`` its statistic is McNemar's,
``(only_b - only_a) / sqrt(only_a + only_b)``. The interval collects the
``delta0`` the test does not reject, so the test and the interval agree by
construction: ``delta0`` lies outside the interval exactly when the test's
two-sided p-value at ``delta0`` is below ``1 - level``.

Everything here is vectorised over tables: the counts may be arrays that
broadcast together. Arguments are trusted (the public doors are
:func:`evalstats.stats._intervals.paired_diff_ci` and :func:`paired_diff_pvalue`).

References
----------
Tango, T. (1998). Equivalence test and confidence interval for the difference
in proportions for the paired-sample design. Statistics in Medicine 17,
891-908.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate
from ..errors import InvalidArgument

__all__ = ["paired_diff_pvalue"]

#: The continuity correction of ``tango_cc``, in pairs: ``|S|`` is reduced by a
#: quarter of a pair before it is compared with its standard deviation. The
#: choice and what it buys are measured in simulations/gate_margin.py.
CORRECTION = 0.25

#: The score methods and their continuity corrections (pairs).
CORRECTIONS = {"tango": 0.0, "tango_cc": CORRECTION}

#: Bisection steps for the limits: 2 / 2**60 is below the spacing of floats near 1.
_STEPS = 60


def _smaller_cell(small: Any, large: Any, n: Any, t: Any) -> np.ndarray:
    """The constrained MLE of the less likely discordant cell's probability.

    Under ``|delta| = t`` the discordant cells have probabilities ``s`` and
    ``s + t``; ``small`` pairs fell in the first, ``large`` in the second.
    The likelihood's maximum is the root in ``[0, (1 - t) / 2]`` of
    ``2 n s^2 + B s + C = 0`` with ``B = -(small + large) + t (2 n + small - large)``
    and ``C = -small t (1 - t)``, where the derivative of the log likelihood
    ``small log s + large log(s + t) + rest log(1 - 2 s - t)`` vanishes
    (tests/test_tango.py checks it against a numerical maximisation);
    ``C <= 0``, so the root is the non-negative one, computed without
    cancellation.
    """
    b = -(small + large) + t * (2.0 * n + small - large)
    c = -small * t * (1.0 - t)
    root = np.sqrt(np.maximum(b * b - 8.0 * n * c, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        # (-b + root) / (4 n), written as -2 c / (b + root) when b > 0
        s = np.where(b > 0, -2.0 * c / np.where(b > 0, b + root, 1.0), (root - b) / (4.0 * n))
    return np.clip(s, 0.0, (1.0 - t) / 2.0)


def statistic(only_a: Any, only_b: Any, n: Any, delta0: Any, correction: float) -> np.ndarray:
    """Tango's score statistic for ``H0: p_b - p_a = delta0`` (vectorised).

    ``(S - sign(S) min(|S|, correction)) / sqrt(n (2 s + t (1 - t)))`` with
    ``S = only_b - only_a - n delta0``, ``t = |delta0|`` and ``s`` the
    constrained MLE of the less likely discordant cell (only-A pairs when
    ``delta0 >= 0``, only-B pairs otherwise). Large values speak for
    ``delta > delta0``. Where the variance is 0 (``delta0 = +-1``, or no
    discordant pair at ``delta0 = 0``) the statistic is 0 if ``S`` is within
    the correction of 0 and +-inf otherwise. It is non-increasing in
    ``delta0`` (tests/test_tango.py checks it on every table of up to 40 pairs).
    """
    only_a = np.asarray(only_a, dtype=float)
    only_b = np.asarray(only_b, dtype=float)
    n = np.asarray(n, dtype=float)
    d0 = np.asarray(delta0, dtype=float)
    t = np.abs(d0)
    up = d0 >= 0
    s = _smaller_cell(np.where(up, only_a, only_b), np.where(up, only_b, only_a), n, t)
    var = n * (2.0 * s + t * (1.0 - t))
    raw = only_b - only_a - n * d0
    score = np.sign(raw) * np.maximum(np.abs(raw) - correction, 0.0)
    positive = var > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        z = score / np.sqrt(np.where(positive, var, 1.0))
    degenerate = np.where(score > 0, np.inf, np.where(score < 0, -np.inf, 0.0))
    return np.where(positive, z, degenerate)


def _lower(only_a: np.ndarray, only_b: np.ndarray, n: np.ndarray, z: float, c: float) -> np.ndarray:
    """The least ``delta0`` whose statistic is at most ``z`` (the lower limit), by bisection.

    The statistic is non-increasing in ``delta0`` and 0 at the estimate, so the
    limit lies in ``[-1, estimate]``. 0 is placed in the bracket first, so the
    limit is above 0 exactly when the statistic at 0 exceeds ``z``.
    """
    est = (only_b - only_a) / n
    lo = np.full(np.shape(est), -1.0)
    hi = est.copy()
    at0 = statistic(only_a, only_b, n, 0.0, c) > z
    lo = np.where((est > 0) & at0, 0.0, lo)
    hi = np.where((est > 0) & ~at0, 0.0, hi)
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        above = statistic(only_a, only_b, n, mid, c) > z
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return hi


def limits(
    only_a: Any, only_b: Any, n: Any, z: float, correction: float
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``p_b - p_a`` that inverts the score test (n > 0).

    ``z`` is the two-sided normal quantile of the level
    (:func:`evalstats.stats._intervals._z`). ``[low, high]`` is the set of
    ``delta0`` whose two-sided p-value is at least ``1 - level``: low solves
    ``statistic = z`` and high ``statistic = -z``. The upper limit is the
    mirror of the lower one (A and B swapped), so swapping the variants
    mirrors the interval exactly.
    """
    only_a = np.asarray(only_a, dtype=float)
    only_b = np.asarray(only_b, dtype=float)
    n = np.asarray(n, dtype=float)
    only_a, only_b, n = np.broadcast_arrays(only_a, only_b, n)
    low = _lower(only_a, only_b, n, z, correction)
    high = -_lower(only_b, only_a, n, z, correction)
    return low, high


def _normal_sf(x: np.ndarray) -> np.ndarray:
    """P(N(0, 1) > x), elementwise: ``math.erfc`` for one value (no scipy import on a
    report's path), ``scipy.special.ndtr`` for arrays (the same to about 1e-16)."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return np.asarray(0.5 * math.erfc(float(x) / math.sqrt(2.0)))
    from scipy.special import ndtr

    return np.asarray(ndtr(-x))


def pvalues(
    only_a: Any, only_b: Any, n: Any, delta0: Any, alternative: str, correction: float
) -> np.ndarray:
    """The score test's p-value of ``H0: p_b - p_a = delta0`` (n > 0), vectorised.

    ``"two-sided"``: ``2 P(N > |Z|)``, capped at 1; ``"greater"`` (H1: the
    difference is above ``delta0``, the non-inferiority test at margin
    ``-delta0``): ``P(N > Z)``; ``"less"``: ``P(N < Z)``.
    """
    z = statistic(only_a, only_b, n, delta0, correction)
    if alternative == "greater":
        return _normal_sf(z)
    if alternative == "less":
        return _normal_sf(-z)
    return np.minimum(2.0 * _normal_sf(np.abs(z)), 1.0)


ALTERNATIVES = ("two-sided", "greater", "less")


def paired_diff_pvalue(
    both: Any,
    only_a: Any,
    only_b: Any,
    neither: Any,
    *,
    delta0: Any = 0.0,
    alternative: str = "two-sided",
    method: str = "tango_cc",
) -> Any:
    """P-value of ``H0: p_b - p_a = delta0`` from paired pass/fail outcomes.

    The test whose inversion is ``paired_diff_ci(..., method=method)``: at
    any ``level``, ``delta0`` lies outside that interval exactly when the
    two-sided p-value is below ``1 - level``. With ``alternative="greater"``
    and ``delta0 = -margin`` it is the non-inferiority test of
    ``H0: p_b - p_a <= -margin`` (B worse than A by the margin or more); its
    p-value is below ``(1 - level) / 2`` exactly when the interval's lower
    limit is above ``-margin``, the rule of the no-regression gate.

    Parameters
    ----------
    both, only_a, only_b, neither : int or array_like of int
        The cells of the 2x2 table of A's outcome against B's over the pairs;
        arrays broadcast together.
    delta0 : float or array_like
        The difference under H0, in [-1, 1].
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 is ``p_b - p_a > delta0``; ``"less"``: below it.
    method : {"tango_cc", "tango"}
        ``tango_cc`` (default): Tango's score statistic with ``|S|`` reduced
        by a quarter of a pair (:data:`CORRECTION`); ``tango``: the score
        statistic as Tango (1998) gives it, whose one-sided error exceeds its
        nominal level at some small numbers of pairs.

    Returns
    -------
    float or numpy.ndarray
        The p-value; 1 where there are no pairs (nothing to test).

    Notes
    -----
    The test treats the pairs as independent draws of one 2x2 table (the
    (case, repeat) pairs of a paired run are independent given the cases;
    that the cases differ makes it, if anything, conservative) and rests on
    the normal approximation of the score, so its error rates are measured,
    not guaranteed: by exact enumeration at 10 to 3,000 pairs, over every
    table a paired run can produce (A's and B's outcomes on a pair not
    negatively associated), a non-inferiority claim (``"greater"`` at
    ``delta0 = -0.05`` or ``-0.1``) and a claim of B better at 0 err with
    probability at most 2.47% for a nominal 2.5%, and so does the gate that
    uses them (simulations/gate_margin.py). The claims that move away from
    0 on the other side (the lower limit above a positive ``delta0``, or the
    upper limit below a negative one) can err more when the discordant
    counts are small, up to 4.2% at about 100 pairs. Without the correction
    (``method="tango"``) the first kind errs up to 3.1%.

    References
    ----------
    Tango, T. (1998). Equivalence test and confidence interval for the
    difference in proportions for the paired-sample design. Statistics in
    Medicine 17, 891-908.

    Examples
    --------
    McNemar's statistic at 0 (here without the correction): 12 pairs passed
    only under B and 2 only under A, so z = 10 / sqrt(14).

    >>> round(paired_diff_pvalue(36, 2, 12, 0, method="tango"), 4)
    0.0075
    >>> round(paired_diff_pvalue(36, 2, 12, 0, delta0=-0.05, alternative="greater"), 5)
    0.00087
    """
    method = _validate.check_method(method, tuple(CORRECTIONS))
    alternative = _validate.check_method(alternative, ALTERNATIVES, name="alternative")
    named = {"both": both, "only_a": only_a, "only_b": only_b, "neither": neither}
    counts = [_validate.as_counts(name, value) for name, value in named.items()]
    d0 = _delta0(delta0)
    try:
        a, b, c, d, d0 = np.broadcast_arrays(*counts, d0)
    except ValueError:
        shapes = ", ".join(
            f"{k} has shape {np.shape(v)}" for k, v in zip(named, counts, strict=True)
        )
        raise InvalidArgument(
            f"{shapes}, delta0 has shape {np.shape(d0)}; they must broadcast together"
        ) from None
    scalar = all(np.ndim(x) == 0 for x in counts)
    a, b, c, d = (x.astype(float) for x in (a, b, c, d))
    n = a + b + c + d
    empty = n == 0
    p = pvalues(b, c, np.where(empty, 1.0, n), d0, alternative, CORRECTIONS[method])
    p = np.where(empty, 1.0, p)
    scalar = scalar and np.ndim(d0) == 0
    return float(p) if scalar else np.asarray(p, dtype=float)


def _delta0(value: Any) -> np.ndarray:
    """``delta0`` checked: finite numbers in [-1, 1]."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument(f"delta0={value!r} must be a number in [-1, 1]") from None
    bad = ~np.isfinite(arr) | (arr < -1.0) | (arr > 1.0)
    if bad.any():
        shown = value if arr.ndim == 0 else arr[bad][0]
        raise InvalidArgument(
            f"delta0={shown!r} must be a number in [-1, 1] (a difference of pass rates, "
            "such as -0.05 for B 5 points worse)"
        )
    return arr


def thresholds(discordant: Any, z: float, correction: float) -> np.ndarray:
    """The least ``only_b`` for which the score test at 0 says B is better.

    With ``m`` discordant pairs the statistic at 0 is
    ``(|2 only_b - m| - correction) / sqrt(m)`` with the sign of
    ``2 only_b - m``, so B is better when ``only_b > (m + correction + z sqrt(m)) / 2``;
    ``m + 1`` where no split of ``m`` pairs is enough. Vectorised over ``m``,
    and checked against :func:`statistic` itself, so that it is exactly the
    rule of :func:`limits` (the lower limit is above 0); ``z`` is the
    two-sided normal quantile of the level.
    """
    m = np.asarray(discordant, dtype=np.int64)
    guess = np.floor((m + correction + z * np.sqrt(m)) / 2.0).astype(np.int64) + 1
    guess = np.clip(guess, 0, m + 1)

    def wins(c: np.ndarray) -> np.ndarray:
        inside = (c >= 0) & (c <= m)
        cc = np.clip(c, 0, m)
        return inside & (statistic(m - cc, cc, np.maximum(m, 1), 0.0, correction) > z)

    guess = np.where((guess > 0) & wins(guess - 1), guess - 1, guess)
    guess = np.where((guess <= m) & ~wins(guess), guess + 1, guess)
    return np.minimum(guess, m + 1)
