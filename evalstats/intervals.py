"""Confidence intervals for pass rates and for differences between pass rates.

The result of every function here is an :class:`Interval`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _validate
from .errors import InvalidArgument

__all__ = [
    "Interval",
    "proportion_ci",
]


def _pct(x: float, *, signed: bool = False) -> str:
    """Format a proportion as a percentage, whole where that is honest.

    A value that would round to 0% or 100% without being exactly that keeps one
    decimal, so that 99.6% never reads as a certain 100%.
    """
    if math.isnan(x):
        return "n/a"
    p = 100.0 * x
    whole = round(p)
    text = f"{p:.1f}" if whole in (0, 100, -100) and abs(p - whole) > 1e-9 else f"{whole:d}"
    if signed and p > 0 and float(text) != 0:
        text = "+" + text
    return text.replace("-", "−") + "%"


@dataclass(frozen=True)
class Interval:
    """An estimate with a confidence interval.

    Attributes
    ----------
    estimate, low, high : float or numpy.ndarray
        The point estimate and the limits; arrays when the inputs were arrays.
        A NaN estimate means there was nothing to estimate from (zero trials).
    level : float
        The confidence level, for example 0.95.
    method : str
        The name of the method that produced the interval.
    difference : bool
        True for an interval of a difference of rates (printed with a sign).
    note : str
        Anything a reader must know to trust the interval, such as the degrees
        of freedom used or why the estimate is undefined.

    Examples
    --------
    >>> print(Interval(0.82, 0.68, 0.91, 0.95, "wilson"))
    82% (68% to 91%)
    >>> print(Interval(0.12, -0.03, 0.27, 0.95, "newcombe", difference=True))
    +12% (−3% to +27%)
    """

    estimate: Any
    low: Any
    high: Any
    level: float
    method: str
    difference: bool = False
    note: str = field(default="", compare=False)

    @property
    def width(self) -> Any:
        """``high - low``."""
        return self.high - self.low

    def contains(self, value: Any) -> Any:
        """Whether ``value`` lies within ``[low, high]`` (elementwise for arrays)."""
        return (self.low <= value) & (value <= self.high)

    def __str__(self) -> str:
        if np.ndim(self.estimate) or np.ndim(self.low):
            n = np.size(self.low)
            return f"<{n} intervals, method={self.method!r}, level={self.level:g}>"
        s = self.difference
        text = (
            f"{_pct(float(self.estimate), signed=s)} "
            f"({_pct(float(self.low), signed=s)} to {_pct(float(self.high), signed=s)})"
        )
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN becomes None, arrays become lists."""

        def clean(v: Any) -> Any:
            if np.ndim(v):
                return [clean(x) for x in np.asarray(v).tolist()]
            v = float(v)
            return None if math.isnan(v) else v

        return {
            "estimate": clean(self.estimate),
            "low": clean(self.low),
            "high": clean(self.high),
            "level": self.level,
            "method": self.method,
            "difference": self.difference,
            "note": self.note,
        }


# ---------------------------------------------------------------------------
# Shared machinery
# ---------------------------------------------------------------------------

PROPORTION_METHODS = (
    "wilson",
    "wilson_cc",
    "clopper_pearson",
    "jeffreys",
    "agresti_coull",
    "wald",
)
DIFF_METHODS = ("newcombe", "newcombe_cc", "agresti_caffo", "wald")
PAIRED_METHODS = ("newcombe", "wald")


def _z(level: float) -> float:
    """The two-sided standard normal quantile for ``level``."""
    from scipy.special import ndtri

    return float(ndtri(0.5 + level / 2.0))


def _out(x: np.ndarray, scalar: bool) -> Any:
    """A Python float for scalar input, else a float array."""
    return float(x) if scalar else np.asarray(x, dtype=float)


def _as_counts(name: str, value: Any) -> np.ndarray:
    """:func:`_validate.as_counts`, with a scalar shown as ``x`` rather than ``array(x)``."""
    try:
        return _validate.as_counts(name, value)
    except InvalidArgument as exc:
        text = re.sub(r"=array\((.*?)\)", r"=\1", str(exc))
        raise InvalidArgument(text) from None


def _counts(**named: Any) -> tuple[list[np.ndarray], bool]:
    """Validate counts, broadcast them together and say whether all were scalars."""
    arrays = [_as_counts(name, value) for name, value in named.items()]
    try:
        arrays = list(np.broadcast_arrays(*arrays))
    except ValueError:
        shapes = ", ".join(
            f"{name} has shape {np.shape(a)}" for name, a in zip(named, arrays, strict=True)
        )
        raise InvalidArgument(f"{shapes}; they must broadcast together") from None
    scalar = all(np.ndim(a) == 0 for a in arrays)
    return [a.astype(float) for a in arrays], scalar


def _zero_note(mask: np.ndarray, scalar: bool, what: str, full: str) -> str:
    if not mask.any():
        return ""
    if scalar:
        return f"{what}: nothing to estimate from, so the estimate is NaN and the interval {full}"
    return f"the estimate is NaN and the interval {full} where {what}"


def _one_sample_limits(
    method: str, k: np.ndarray, n: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Raw limits for ``k`` successes in ``n > 0`` trials (entries with n == 0 are junk)."""
    z = _z(level)
    z2 = z * z
    alpha = 1.0 - level
    safe_n = np.where(n > 0, n, 1.0)
    p = k / safe_n
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "wilson":
            # Wilson (1927): the p with |p_hat - p| <= z sqrt(p (1 - p) / n), solved in
            # closed form; Newcombe (1998a), method 3.
            centre = (k + z2 / 2.0) / (safe_n + z2)
            half = z * np.sqrt(k * (safe_n - k) / safe_n + z2 / 4.0) / (safe_n + z2)
            low, high = centre - half, centre + half
        elif method == "wilson_cc":
            # Newcombe (1998a), method 4: the score interval with continuity correction.
            denom = 2.0 * (safe_n + z2)
            root_low = np.sqrt(
                np.maximum(z2 - 2.0 - 1.0 / safe_n + 4.0 * p * (safe_n - k + 1.0), 0)
            )
            root_high = np.sqrt(
                np.maximum(z2 + 2.0 - 1.0 / safe_n + 4.0 * p * (safe_n - k - 1.0), 0)
            )
            low = (2.0 * k + z2 - 1.0 - z * root_low) / denom
            high = (2.0 * k + z2 + 1.0 + z * root_high) / denom
        elif method == "clopper_pearson":
            from scipy.special import betaincinv

            # Clopper & Pearson (1934): quantiles of Beta(k, n - k + 1) and Beta(k + 1, n - k).
            low = betaincinv(np.maximum(k, 1.0), safe_n - k + 1.0, alpha / 2.0)
            high = betaincinv(k + 1.0, np.maximum(safe_n - k, 1.0), 1.0 - alpha / 2.0)
        elif method == "jeffreys":
            from scipy.special import betaincinv

            # Equal-tailed Beta(k + 1/2, n - k + 1/2) posterior interval; Brown, Cai &
            # DasGupta (2001) section 4.1.2 set the lower limit to 0 at k = 0 and the
            # upper to 1 at k = n, which the end fix below does.
            low = betaincinv(k + 0.5, safe_n - k + 0.5, alpha / 2.0)
            high = betaincinv(k + 0.5, safe_n - k + 0.5, 1.0 - alpha / 2.0)
        elif method == "agresti_coull":
            # Agresti & Coull (1998): Wald around (k + z^2/2) / (n + z^2).
            n_t = safe_n + z2
            p_t = (k + z2 / 2.0) / n_t
            half = z * np.sqrt(p_t * (1.0 - p_t) / n_t)
            low, high = p_t - half, p_t + half
        else:  # wald
            half = z * np.sqrt(p * (1.0 - p) / safe_n)
            low, high = p - half, p + half
    # Exact ends: every method here gives 0 at k = 0 and 1 at k = n in exact arithmetic
    # (or by the definition cited above, or after clipping); write them exactly so that
    # floating error cannot leave a lower limit of 1e-17 above an observed rate of 0.
    low = np.where(k == 0, 0.0, low)
    high = np.where(k == safe_n, 1.0, high)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


# ---------------------------------------------------------------------------
# One sample
# ---------------------------------------------------------------------------


def proportion_ci(
    successes: Any, trials: Any, *, level: float = 0.95, method: str = "wilson"
) -> Interval:
    """Confidence interval for a pass rate from ``successes`` out of ``trials``.

    Parameters
    ----------
    successes, trials : int or array_like of int
        Counts; arrays broadcast together and give an interval per element.
    level : float, optional
        Confidence level, strictly between 0 and 1.
    method : {"wilson", "wilson_cc", "clopper_pearson", "jeffreys", "agresti_coull", "wald"}
        ``wilson``: the score interval (Wilson 1927), the default, recommended by
        Newcombe (1998a) and Brown, Cai & DasGupta (2001).
        ``wilson_cc``: the score interval with continuity correction (Newcombe
        1998a, method 4), more conservative.
        ``clopper_pearson``: the "exact" interval (Clopper & Pearson 1934), which
        never covers less than ``level`` and so is wide.
        ``jeffreys``: the equal-tailed Jeffreys-prior interval, with the lower
        limit 0 at ``successes=0`` and the upper limit 1 at ``successes=trials``
        as in Brown, Cai & DasGupta (2001).
        ``agresti_coull``: Wald around the "add z^2/2 successes and failures"
        estimate (Agresti & Coull 1998), clipped to [0, 1].
        ``wald``: the textbook normal interval, clipped to [0, 1]; kept for
        teaching: it collapses to a point at 0 or all successes.

    Returns
    -------
    Interval
        ``estimate`` is ``successes / trials``. Python floats for scalar input,
        arrays for array input. The limits lie in [0, 1] and always satisfy
        ``low <= estimate <= high``. Zero trials give a NaN estimate and the
        interval (0, 1), with a ``note`` saying why.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial
    limits illustrated in the case of the binomial. Biometrika 26, 404-413.
    Newcombe, R. G. (1998a). Two-sided confidence intervals for the single
    proportion: comparison of seven methods. Statistics in Medicine 17, 857-872.
    Agresti, A. & Coull, B. A. (1998). Approximate is better than "exact" for
    interval estimation of binomial proportions. The American Statistician 52,
    119-126.
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a
    binomial proportion. Statistical Science 16, 101-133.

    Examples
    --------
    >>> ci = proportion_ci(81, 263)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.2553, 0.3662)
    >>> print(proportion_ci(0, 20))
    0% (0% to 16%)
    >>> proportion_ci([0, 10], [20, 10], method="clopper_pearson").high.round(4)
    array([0.1684, 1.    ])
    """
    level = _validate.check_level(level)
    method = _validate.check_method(method, PROPORTION_METHODS)
    (k, n), scalar = _counts(successes=successes, trials=trials)
    _validate.check_not_larger("successes", k, "trials", n)
    empty = n == 0
    low, high = _one_sample_limits(method, k, n, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(empty, np.nan, k / np.where(empty, 1.0, n))
    low = np.where(empty, 0.0, np.fmin(low, est))
    high = np.where(empty, 1.0, np.fmax(high, est))
    note = _zero_note(empty, scalar, "trials=0", "is (0, 1)")
    return Interval(
        _out(est, scalar), _out(low, scalar), _out(high, scalar), level, method, note=note
    )
