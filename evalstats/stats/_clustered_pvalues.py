"""P-values of the clustered comparison (about cases like these) that agree with its interval.

The clustered comparison judges the mean paired difference by an interval:
by default the distribution-free betting interval, at every number of cases
(:data:`~evalstats.stats._intervals.AUTO_METHOD`); CR2 with Satterthwaite's t or
CR1 when asked for by name (see
:func:`~evalstats.stats._intervals.clustered_paired_diff_ci`). Holm's and Shaffer's
steps over several comparisons need p-values. The p-values here test H0: the
mean paired difference is 0, and reject at ``1 - level`` exactly when the
interval at ``level`` excludes 0:

- CR2 or CR1: the t test, ``2 P(T_df > |estimate| / SE)`` on the interval's
  own degrees of freedom.
- betting: ``1 / K`` for each side, K the betting capital at the null mean with
  the interval's own bets (Waudby-Smith & Ramdas 2024, section 5), averaged
  over the interval's orders of the sorted case means, two sides combined by
  Bonferroni (twice the smaller), as the interval spends ``(1 - level) / 2`` on
  each side. Under H0 each order's capital, and so their average, has
  expectation at most 1 (a nonnegative supermartingale in a uniformly random
  order), so ``P(1 / K <= a) <= a`` for every ``a`` by Markov's inequality: the
  p-value is valid at any threshold Holm's steps use, not only at ``1 - level``.
  Like the interval, it does not depend on the order the cases are listed in.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate
from ..errors import InvalidArgument
from ._intervals import (
    _BISECTIONS,
    ClusteredInterval,
    _cluster_codes,
    _clustered_method,
    _outcomes,
    _wealth_blocks,
    clustered_paired_diff_ci,
)

__all__ = ["betting_pvalue", "clustered_paired_pvalue"]


def _log_capital(x: np.ndarray, null: float, alpha: float) -> np.ndarray:
    """log K(null) of betting that the mean of ``x`` (shape (..., n), in [0, 1]) exceeds ``null``.

    K is the capital of :func:`evalstats.stats._intervals._log_wealth` with the
    bets of the betting interval at error ``alpha``: the capital of each order
    of :func:`evalstats.stats._intervals._orders` (the values sorted, then
    taken in that order), averaged over the orders. It is the very number the
    interval's test compares with 1 / alpha, so the two agree exactly, and
    like the interval it depends only on the multiset of each row's values.
    """
    arr = np.asarray(x, dtype=float)
    flat = arr.reshape(-1, arr.shape[-1])
    out = np.empty(flat.shape[0])
    for rows, log_wealth in _wealth_blocks(flat, alpha):
        out[rows] = log_wealth(null)
    return out.reshape(arr.shape[:-1])


def betting_pvalue(x: Any, null: float, *, level: float = 0.95) -> Any:
    """One-sided p-value that the mean of ``x`` in [0, 1] is at most ``null``, by betting.

    ``1 / K`` (at most 1), K the capital of betting that the mean exceeds
    ``null`` with the predictable plug-in bets of the betting interval at
    ``level`` (:func:`evalstats.stats._intervals.betting_limits`, which spends
    ``(1 - level) / 2`` on each side), averaged over that interval's orders of
    the sorted observations: the p-value is at most ``(1 - level) / 2``
    exactly when that interval's lower limit test rejects ``null``, and it
    does not depend on the order of the observations. Valid at every
    threshold, whatever the distribution on [0, 1]: when the mean is at most
    ``null`` the capital in a uniformly random order is a nonnegative
    supermartingale started at 1, and so is an average of such capitals, so
    ``P(1 / K <= a) <= a`` (Markov's inequality on the final capital).

    Parameters
    ----------
    x : array_like
        Observations in [0, 1] along the last axis (in any order).
    null : float
        The mean under the null hypothesis, in [0, 1).
    level : float
        The level of the betting interval whose bets are used.

    Returns
    -------
    float or ndarray
        One p-value per row of ``x``.

    References
    ----------
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random
    variables by betting. Journal of the Royal Statistical Society, Series B
    86, 1-27 (section 5; p-values from e-values, section 2).

    Examples
    --------
    >>> round(float(betting_pvalue([1.0] * 6, 0.5)), 4)  # six gains of the most: 1 / 1.9**6
    0.0213
    """
    level = _validate.check_level(level)
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise InvalidArgument(f"x must hold at least one observation, got {x!r}")
    if not 0.0 <= null < 1.0:
        raise InvalidArgument(f"null={null!r} must be in [0, 1)")
    if np.any((arr < 0) | (arr > 1)) or np.isnan(arr).any():
        raise InvalidArgument("x must hold numbers in [0, 1]")
    p = np.minimum(1.0, np.exp(-_log_capital(arr, null, (1.0 - level) / 2.0)))
    return float(p) if p.ndim == 0 else p


#: The null mean the betting side tests: the interval's limits come from a
#: bisection to 2**-_BISECTIONS (rounded down), so
#: its lower limit of the rescaled difference exceeds 1/2 exactly when the
#: test rejects at the next grid point above 1/2 (see
#: :func:`evalstats.stats._intervals.betting_signs`). Testing there (a difference of
#: 2**-41, 4.5e-13) keeps the p-value and the interval in exact agreement; the
#: capital is nonincreasing in the null, so the p-value is at least the one at
#: 1/2 exactly.
_NULL = (2.0 ** (_BISECTIONS - 1) + 1.0) / 2.0**_BISECTIONS


def _betting_two_sided(unit: np.ndarray, estimate: Any, level: float) -> Any:
    """Two-sided p for H0: mean of ``unit`` is 1/2 (difference 0), sides Bonferroni-combined.

    A side counts only when the estimate lies on it, as the interval's limits
    are capped at the estimate.
    """
    alpha = (1.0 - level) / 2.0
    est = np.asarray(estimate, dtype=float)
    up = np.where(est > 0, np.exp(-_log_capital(unit, _NULL, alpha)), 1.0)
    down = np.where(est < 0, np.exp(-_log_capital(1.0 - unit, _NULL, alpha)), 1.0)
    return np.minimum(1.0, 2.0 * np.minimum(up, down))


def _t_two_sided(estimate: Any, se: Any, df: Any) -> Any:
    """The t test's two-sided p-value: 2 P(T_df > |estimate| / se)."""
    from scipy.special import stdtr

    t = np.abs(np.asarray(estimate, dtype=float)) / np.asarray(se, dtype=float)
    return 2.0 * stdtr(df, -t)


def pvalue_of(difference: ClusteredInterval, case_means: Any) -> float:
    """The p-value agreeing with a clustered paired-difference interval.

    ``difference`` is what :func:`~evalstats.stats._intervals.clustered_paired_diff_ci`
    returned (its ``method`` is the one used: ``cr2``, ``cr1`` or ``betting``);
    ``case_means`` are the per-case mean differences (in any order), used by
    the betting side only. With fewer than
    two cases (the interval is the whole range) the p-value is 1.
    """
    if difference.clusters < 2 or math.isnan(difference.estimate):
        return 1.0
    if difference.method == "betting":
        unit = (np.asarray(case_means, dtype=float) + 1.0) / 2.0
        return float(_betting_two_sided(unit, difference.estimate, difference.level))
    if not difference.se > 0:
        return 1.0
    return float(_t_two_sided(difference.estimate, difference.se, difference.df))


def clustered_paired_pvalue(
    outcomes_a: Any,
    outcomes_b: Any,
    clusters: Any,
    *,
    level: float = 0.95,
    method: str = "auto",
) -> float:
    """Two-sided p-value for H0: mean paired difference ``b - a`` is 0, cases as clusters.

    The test of :func:`~evalstats.stats._intervals.clustered_paired_diff_ci` with the
    same arguments: it is below ``1 - level`` exactly when that interval
    excludes 0. With CR2 (or CR1) it is the t test on the interval's standard
    error and degrees of freedom; with the betting interval (the default,
    :data:`~evalstats.stats._intervals.AUTO_METHOD`, or when every case has the
    same mean difference) it is twice the smaller of the two sides' ``1 / K``,
    K the betting capital at a difference of 0 with the interval's bets (see
    :func:`betting_pvalue`), which depends on ``level`` through the bets but is
    valid at any threshold.

    Parameters
    ----------
    outcomes_a, outcomes_b, clusters, level, method
        As in :func:`~evalstats.stats._intervals.clustered_paired_diff_ci`.

    Returns
    -------
    float

    References
    ----------
    Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors
    for linear regression with multi-stage samples. Survey Methodology 28,
    169-181.
    Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for
    cluster-robust variance estimation and hypothesis testing in fixed effects
    models. Journal of Business & Economic Statistics 36, 672-683.
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random
    variables by betting. Journal of the Royal Statistical Society, Series B
    86, 1-27.

    Examples
    --------
    Six cases that all gained fully: the betting interval excludes 0, and the
    p-value is 2 / 1.9**6 = 0.0425, below 0.05.

    >>> a = [0] * 6
    >>> b = [1] * 6
    >>> round(clustered_paired_pvalue(a, b, range(6)), 4)
    0.0425
    """
    level = _validate.check_level(level)
    method = _clustered_method(method)
    difference = clustered_paired_diff_ci(
        outcomes_a, outcomes_b, clusters, level=level, method=method
    )
    a = _outcomes("outcomes_a", outcomes_a)
    b = _outcomes("outcomes_b", outcomes_b)
    codes = _cluster_codes(clusters, a.size, "outcomes_a")
    if a.size == 0:
        return 1.0
    # the pairs in the order of their differences, as the interval adds them
    d = b - a
    by_value = np.argsort(d, kind="stable")
    sizes = np.bincount(codes).astype(float)
    case_means = np.bincount(codes[by_value], weights=d[by_value]) / sizes
    return pvalue_of(difference, case_means)


def case_means_pvalues(case_means: Any, *, level: float = 0.95) -> Any:
    """Vectorised :func:`clustered_paired_pvalue` from per-case mean differences.

    ``case_means`` has shape (..., cases): each case's mean paired difference
    from equally many runs per case, so that the run-weighted estimate is the
    mean of the case means and CR2 is the t test on them with cases - 1
    degrees of freedom. As the clustered comparison judges (``method="auto"``):
    the betting test (:data:`~evalstats.stats._intervals.AUTO_METHOD`, at every
    number of cases; the t test, where every case mean differs, only if that
    default were a t method).
    Used by the simulators so that they judge exactly as
    :func:`~evalstats.deciding._several.compare_variants` does.
    """
    from ._intervals import AUTO_METHOD

    level = _validate.check_level(level)
    d = np.asarray(case_means, dtype=float)
    cases = d.shape[-1]
    if cases < 2:
        raise InvalidArgument(f"case_means holds {cases} case; the clustered test needs 2")
    mean = d.mean(axis=-1)
    betting = _betting_two_sided((d + 1.0) / 2.0, mean, level)
    if AUTO_METHOD == "betting":
        return betting
    se = d.std(axis=-1, ddof=1) / math.sqrt(cases)
    flat = se < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _t_two_sided(mean, np.where(flat, 1.0, se), cases - 1)
    return np.where(flat, betting, t)
