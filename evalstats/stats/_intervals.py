"""Confidence intervals for pass rates and for differences between pass rates.

- :func:`proportion_ci`: one pass rate (Wilson by default).
- :func:`diff_ci`: ``p_b - p_a`` for two independent samples (Newcombe's hybrid score).
- :func:`paired_diff_ci`: ``p_b - p_a`` for paired outcomes (Tango's score interval, or
  Newcombe's paired method 10).
- :func:`clustered_mean_ci`, :func:`clustered_paired_diff_ci`: means over runs grouped
  by case, with cluster-robust standard errors.
- :func:`coverage`: the exact coverage probability of a one-sample method.

The result of every interval function is an :class:`Interval` (a
:class:`ClusteredInterval` for the clustered ones). All count arguments may be
scalars or numpy arrays; scalars give Python floats, arrays give arrays.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
else:

    class _LazyNumpy:
        """numpy, imported when first used: a report's scalar intervals never need it,
        and importing it is half the time of a small report."""

        def __getattr__(self, name: str) -> Any:
            import numpy

            globals()["np"] = numpy  # from now on the module itself
            return getattr(numpy, name)

    np = _LazyNumpy()

from .. import _validate
from ..errors import InvalidArgument

__all__ = [
    "ClusteredInterval",
    "Interval",
    "cases_for_margin",
    "clustered_mean_ci",
    "clustered_paired_diff_ci",
    "coverage",
    "diff_ci",
    "paired_diff_ci",
    "proportion_ci",
]


def _ndim(x: Any) -> int:
    """``np.ndim(x)``, without importing numpy for a plain Python number."""
    return 0 if type(x) in (float, int) else int(np.ndim(x))


#: The texts of the proportions formatted so far (a report formats the same few
#: rates thousands of times: one per case and variant), by (value, signed).
def _pct(x: float, *, signed: bool = False) -> str:
    """:func:`_pct_text`, kept for the values formatted before (equal values, the
    same text: 0.0 and -0.0 both read 0%)."""
    try:
        return _pct_kept(x, signed)
    except TypeError:  # not hashable (an array of one value)
        return _pct_text(x, signed=signed)


@functools.lru_cache(maxsize=1 << 16)
def _pct_kept(x: float, signed: bool) -> str:
    return _pct_text(x, signed=signed)


def _pct_text(x: float, *, signed: bool = False) -> str:
    """Format a proportion as a percentage, whole where that is honest.

    A value that would round to 0% or 100% without being exactly that keeps
    decimals, one or as many as it takes not to read as that exact figure, so
    that 99.6% never reads as a certain 100% and 0.046% is 0.05%, not 0.0%.
    Halves round away from zero, with a tolerance for floating error, so that
    33/40 - 30/40 (0.07499999...) reads +8% like the 7.5 points it is.
    """
    if math.isnan(x):
        return "n/a"
    p = 100.0 * x
    whole = int(math.copysign(math.floor(abs(p) + 0.5 + 1e-9), p))
    if whole in (0, 100, -100) and abs(p - whole) > 1e-9:
        decimals = 1
        text = f"{p:.1f}"
        while float(text) in (0.0, 100.0, -100.0) and decimals < 10:
            decimals += 1
            text = f"{p:.{decimals}f}"
    else:
        text = f"{whole:d}"
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
        if _ndim(self.estimate) or _ndim(self.low):
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
            if _ndim(v):
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

    def _repr_html_(self) -> str:
        """A notebook's display: the interval, its level and its method."""
        from .._repr import result_html

        return result_html(f"{self}, {100 * self.level:g}% interval, {self.method}")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


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
PAIRED_METHODS = ("newcombe", "tango_cc", "tango", "wald")


#: The two-sided standard normal quantile at the usual levels, exactly as
#: ``scipy.special.ndtri(0.5 + level / 2)`` gives it (tests/test_intervals.py
#: checks each against scipy), so that a report at one of these levels does not
#: import scipy (about 0.1 s, 40% of a small report).
_Z_TABLE = {
    0.5: 0.6744897501960817,
    0.8: 1.2815515655446004,
    0.9: 1.6448536269514722,
    0.95: 1.959963984540054,
    0.98: 2.3263478740408408,
    0.99: 2.5758293035489004,
    0.995: 2.807033768343811,
    0.999: 3.2905267314919255,
}


def _z(level: float) -> float:
    """The two-sided standard normal quantile for ``level``."""
    z = _Z_TABLE.get(level)
    if z is not None:
        return z
    from scipy.special import ndtri

    return float(ndtri(0.5 + level / 2.0))


def _t_within(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with a whole number ``df`` of degrees of freedom.

    The finite series of Abramowitz & Stegun (1964), 26.7.3 (odd df) and
    26.7.4 (even df), in theta = atan(t / sqrt(df)); every term is positive.
    """
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    if df % 2 == 0:
        term = total = 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total
    if df == 1:
        return 2.0 / math.pi * theta
    term = total = c
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + s * total)


#: Above this many degrees of freedom the series gets long: scipy computes the quantile.
#: ``benchmarks/crossovers.py``: the series takes 1 ms at 2,500 df, 17 ms at 20,000
#: and 93 ms at 160,000, against about 0.5 s to import scipy.special in a fresh
#: process and 2 microseconds a call once imported; so below this the series spares
#: a process the import at up to 17 ms a call. The two agree to 4e-13 up to it.
_T_SERIES_MAX_DF = 20_000


def _t(df: int, level: float) -> float:
    """The two-sided Student t quantile: P(|T| <= t) = ``level``, df a whole number.

    Closed forms for 1 and 2 degrees of freedom; otherwise Newton's method on
    :func:`_t_within`, from the Cornish-Fisher start z + (z^3 + z) / (4 df) and
    kept inside a bracket. It agrees with ``scipy.special.stdtrit`` to about
    1e-13 (tests/test_intervals.py), without importing scipy.
    """
    if df == 1:
        return math.tan(math.pi * level / 2.0)
    if df == 2:
        return level * math.sqrt(2.0 / (1.0 - level * level))
    if df > _T_SERIES_MAX_DF or not 0.0 < level < 1.0:
        from scipy.special import stdtrit

        return float(stdtrit(df, 0.5 + level / 2.0))
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    t = z + (z**3 + z) / (4.0 * df)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    low, high = 0.0, math.inf
    for _ in range(200):
        f = _t_within(t, df) - level
        if f > 0:
            high = min(high, t)
        else:
            low = max(low, t)
        density = 2.0 * math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))
        new = t - f / density
        if not low < new < high:
            new = (low + high) / 2.0 if high < math.inf else 2.0 * t
        if abs(new - t) <= 1e-15 * t:
            return new
        t = new
    return t


def _clustered_note(method: str, used: str, groups: int, df: float) -> str:
    """The note of a clustered interval: the method ``used`` for the one asked for."""
    if used == "betting":
        what = f"betting interval over {groups} cases (distribution-free)"
        if method == "betting":
            return what
        return (
            f"every case has the same mean outcome, so the {method.upper()} standard "
            f"error is 0 and says nothing about cases not run; {what} instead"
        )
    df_text = f"{df:.3g}" if abs(df - round(df)) > 1e-9 else f"{round(df)}"
    return f"{method.upper()} cluster-robust SE over {groups} cases, t with {df_text} df"


def _t_quantile(df: float, level: float) -> float:
    """:func:`_t` for a whole number of degrees of freedom (within rounding), else
    scipy's ``stdtrit`` (Satterthwaite's df are seldom whole)."""
    whole = round(df)
    if whole >= 1 and abs(df - whole) <= 1e-9 * max(1.0, df):
        return _t(whole, level)
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2.0))


def _out(x: np.ndarray, scalar: bool) -> Any:
    """A Python float for scalar input, else a float array."""
    return float(x) if scalar else np.asarray(x, dtype=float)


def _counts(**named: Any) -> tuple[list[np.ndarray], bool]:
    """Validate counts, broadcast them together and say whether all were scalars."""
    arrays = [_validate.as_counts(name, value) for name, value in named.items()]
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
    if (
        method == "wilson"
        and type(successes) is int
        and type(trials) is int
        and 0 <= successes <= trials
        and trials > 0
    ):
        return _wilson(successes, trials, level)
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


def _wilson(successes: int, trials: int, level: float) -> Interval:
    """:func:`proportion_ci` for one count, ``0 <= successes <= trials`` and
    ``trials > 0``, without numpy: the same operations in the same order as
    :func:`_one_sample_limits`, so the same floats (tests/test_intervals.py)."""
    z = _z(level)
    z2 = z * z
    k, n = float(successes), float(trials)
    centre = (k + z2 / 2.0) / (n + z2)
    half = z * math.sqrt(k * (n - k) / n + z2 / 4.0) / (n + z2)
    low = 0.0 if successes == 0 else min(max(centre - half, 0.0), 1.0)
    high = 1.0 if successes == trials else min(max(centre + half, 0.0), 1.0)
    est = k / n
    return Interval(est, min(low, est), max(high, est), level, "wilson")


# ---------------------------------------------------------------------------
# Differences
# ---------------------------------------------------------------------------


def _finish_difference(
    est: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    empty: np.ndarray,
    scalar: bool,
    level: float,
    method: str,
    what: str,
) -> Interval:
    """Clip to [-1, 1], make the interval contain the estimate, blank out empty input."""
    low = np.clip(low, -1.0, 1.0)
    high = np.clip(high, -1.0, 1.0)
    est = np.where(empty, np.nan, est)
    low = np.where(empty, -1.0, np.fmin(low, est))
    high = np.where(empty, 1.0, np.fmax(high, est))
    note = _zero_note(empty, scalar, what, "is (-1, 1)")
    return Interval(
        _out(est, scalar),
        _out(low, scalar),
        _out(high, scalar),
        level,
        method,
        difference=True,
        note=note,
    )


def _square_and_add(
    p1: np.ndarray,
    l1: np.ndarray,
    u1: np.ndarray,
    p2: np.ndarray,
    l2: np.ndarray,
    u2: np.ndarray,
    phi: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's limits for p1 - p2 from the limits (l, u) of each rate.

    ``phi`` is the correlation term of the paired version (Newcombe 1998c); it is
    0 for independent samples (Newcombe 1998b).
    """
    theta = p1 - p2
    a, b = p1 - l1, u2 - p2
    c, d = u1 - p1, p2 - l2
    delta = np.sqrt(np.maximum(a * a - 2.0 * phi * a * b + b * b, 0.0))
    epsilon = np.sqrt(np.maximum(c * c - 2.0 * phi * c * d + d * d, 0.0))
    return theta - delta, theta + epsilon


def diff_ci(
    successes_a: Any,
    trials_a: Any,
    successes_b: Any,
    trials_b: Any,
    *,
    level: float = 0.95,
    method: str = "newcombe",
) -> Interval:
    """Confidence interval for the difference of two pass rates, ``p_b - p_a``.

    For independent samples: variant A passed ``successes_a`` of ``trials_a`` and
    variant B passed ``successes_b`` of ``trials_b``. A positive difference means
    B passes more often.

    Parameters
    ----------
    successes_a, trials_a, successes_b, trials_b : int or array_like of int
        Counts; arrays broadcast together.
    level : float, optional
        Confidence level, strictly between 0 and 1.
    method : {"newcombe", "newcombe_cc", "agresti_caffo", "wald"}
        ``newcombe``: the hybrid score interval from the two Wilson intervals
        (Newcombe 1998b, method 10), the default.
        ``newcombe_cc``: the same from continuity-corrected Wilson intervals
        (method 11), more conservative.
        ``agresti_caffo``: Wald after adding one success and one failure to each
        sample (Agresti & Caffo 2000).
        ``wald``: the textbook normal interval, kept for teaching.

    Returns
    -------
    Interval
        ``estimate`` is ``successes_b / trials_b - successes_a / trials_a`` and
        ``difference`` is True. Limits lie in [-1, 1] and satisfy
        ``low <= estimate <= high`` (the Agresti-Caffo interval, centred on the
        adjusted rates, is widened to the observed difference where at low levels
        or extreme counts it would miss it). Zero trials on either side give a
        NaN estimate and the interval (-1, 1), with a note.

    References
    ----------
    Newcombe, R. G. (1998b). Interval estimation for the difference between
    independent proportions: comparison of eleven methods. Statistics in
    Medicine 17, 873-890.
    Agresti, A. & Caffo, B. (2000). Simple and effective confidence intervals
    for proportions and differences of proportions result from adding two
    successes and two failures. The American Statistician 54, 280-288.
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Examples
    --------
    Newcombe (1998b), table II, example (a): 56/70 against 48/80, here with the
    first sample as B.

    >>> ci = diff_ci(48, 80, 56, 70)
    >>> round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)
    (0.2, 0.0524, 0.3339)
    >>> print(ci)
    +20% (+5% to +33%)
    """
    level = _validate.check_level(level)
    method = _validate.check_method(method, DIFF_METHODS)
    (ka, na, kb, nb), scalar = _counts(
        successes_a=successes_a, trials_a=trials_a, successes_b=successes_b, trials_b=trials_b
    )
    _validate.check_not_larger("successes_a", ka, "trials_a", na)
    _validate.check_not_larger("successes_b", kb, "trials_b", nb)
    empty = (na == 0) | (nb == 0)
    safe_a = np.where(na > 0, na, 1.0)
    safe_b = np.where(nb > 0, nb, 1.0)
    pa, pb = ka / safe_a, kb / safe_b
    est = pb - pa
    if method in ("newcombe", "newcombe_cc"):
        single = "wilson" if method == "newcombe" else "wilson_cc"
        la, ua = _one_sample_limits(single, ka, safe_a, level)
        lb, ub = _one_sample_limits(single, kb, safe_b, level)
        low, high = _square_and_add(pb, lb, ub, pa, la, ua)
    else:
        z = _z(level)
        if method == "agresti_caffo":
            ta, tb = (ka + 1.0) / (safe_a + 2.0), (kb + 1.0) / (safe_b + 2.0)
            centre = tb - ta
            se = np.sqrt(ta * (1.0 - ta) / (safe_a + 2.0) + tb * (1.0 - tb) / (safe_b + 2.0))
        else:  # wald
            centre = est
            se = np.sqrt(pa * (1.0 - pa) / safe_a + pb * (1.0 - pb) / safe_b)
        low, high = centre - z * se, centre + z * se
    what = "trials_a=0 or trials_b=0" if not scalar else _which_empty(na, nb)
    return _finish_difference(est, low, high, empty, scalar, level, method, what)


def _which_empty(na: np.ndarray, nb: np.ndarray) -> str:
    if na == 0 and nb == 0:
        return "trials_a=0 and trials_b=0"
    return "trials_a=0" if na == 0 else "trials_b=0"


def _newcombe_phi(both: Any, only_a: Any, only_b: Any, neither: Any, n: Any) -> np.ndarray:
    """Newcombe's (1998c) correlation term of paired 2x2 tables (vectorised).

    The phi coefficient with a continuity correction of ``n / 2`` applied to
    positive association only; 0 when a margin is empty. Used by
    :func:`paired_diff_ci` and by :func:`evalstats.ppi_diff`.
    """
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    det = both * neither - only_a * only_b
    corrected = np.where(det > n / 2.0, det - n / 2.0, np.where(det < 0, det, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(margins > 0, corrected / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)


def paired_diff_ci(
    both: Any,
    only_a: Any,
    only_b: Any,
    neither: Any,
    *,
    level: float = 0.95,
    method: str = "newcombe",
) -> Interval:
    """Confidence interval for ``p_b - p_a`` from paired pass/fail outcomes.

    Each case (or each repeat of a case) was run under both variants; the four
    arguments are the cells of the 2x2 table of A's outcome against B's.

    Parameters
    ----------
    both : int or array_like of int
        Pairs where A and B both passed.
    only_a : int or array_like of int
        Pairs where A passed and B failed.
    only_b : int or array_like of int
        Pairs where A failed and B passed.
    neither : int or array_like of int
        Pairs where both failed.
    level : float, optional
        Confidence level, strictly between 0 and 1.
    method : {"newcombe", "tango_cc", "tango", "wald"}
        ``newcombe``: Newcombe's (1998c) method 10, the square-and-add
        combination of the Wilson intervals of the two marginal rates with a
        correction for their correlation. ``tango_cc``: the interval that
        inverts Tango's (1998) score test with a continuity correction of a
        quarter of a pair, the interval of the comparison and the gate about
        these cases; every ``delta0`` outside it has a two-sided p-value
        (:func:`~evalstats.stats._tango.paired_diff_pvalue`) below
        ``1 - level``, and every one inside does not. ``tango``: the same
        without the correction, as Tango (1998) gives it. ``wald``: the
        textbook normal interval on ``(only_b - only_a) / n``, kept for
        teaching.

    Returns
    -------
    Interval
        ``estimate`` is ``(only_b - only_a) / n`` with ``n`` the number of pairs;
        ``difference`` is True; limits lie in [-1, 1] around the estimate. No
        pairs give a NaN estimate and the interval (-1, 1), with a note.

    Notes
    -----
    Newcombe's correlation term is the phi coefficient of the table with a
    continuity correction applied only to positive association:
    ``phi = C / sqrt((both + only_a)(only_b + neither)(both + only_b)(only_a + neither))``
    where, with ``D = both * neither - only_a * only_b``, ``C = D - n/2`` if
    ``D > n/2``, ``C = 0`` if ``0 <= D <= n/2`` and ``C = D`` if ``D < 0``;
    ``phi = 0`` when any margin is empty.

    Tango's limits are the two roots of ``Z(delta0) = +-z``, ``Z`` the score
    statistic of :mod:`evalstats.stats._tango`, found by bisection to the
    spacing of floats; with ``tango_cc`` the statistic's numerator
    ``only_b - only_a - n delta0`` is moved a quarter of a pair towards 0.
    Its one-sided errors at 10 to 3,000 pairs, by exact enumeration and by
    simulation of paired runs, are in simulations/gate_margin.py.

    References
    ----------
    Newcombe, R. G. (1998c). Improved confidence intervals for the difference
    between binomial proportions based on paired data. Statistics in Medicine
    17, 2635-2650.
    Tango, T. (1998). Equivalence test and confidence interval for the
    difference in proportions for the paired-sample design. Statistics in
    Medicine 17, 891-908.
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Examples
    --------
    Newcombe (1998c), table III, first example: 36 pairs passed under both,
    12 only under B, 2 only under A, none under neither.

    >>> ci = paired_diff_ci(36, 2, 12, 0)
    >>> round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)
    (0.2, 0.0569, 0.3404)
    >>> print(ci)
    +20% (+6% to +34%)
    >>> print(paired_diff_ci(36, 2, 12, 0, method="tango_cc"))
    +20% (+6% to +35%)
    """
    level = _validate.check_level(level)
    method = _validate.check_method(method, PAIRED_METHODS)
    (a, b_only, c_only, d), scalar = _counts(
        both=both, only_a=only_a, only_b=only_b, neither=neither
    )
    n = a + b_only + c_only + d
    empty = n == 0
    safe_n = np.where(empty, 1.0, n)
    est = (c_only - b_only) / safe_n
    if method == "newcombe":
        # Newcombe's table has the first classification's rate minus the second's;
        # taking B as the first gives p_b - p_a directly (phi is the same either way).
        kb, ka = a + c_only, a + b_only
        pb, pa = kb / safe_n, ka / safe_n
        lb, ub = _one_sample_limits("wilson", kb, safe_n, level)
        la, ua = _one_sample_limits("wilson", ka, safe_n, level)
        phi = _newcombe_phi(a, b_only, c_only, d, safe_n)
        low, high = _square_and_add(pb, lb, ub, pa, la, ua, phi)
    elif method in ("tango_cc", "tango"):
        from ._tango import CORRECTIONS, limits

        low, high = limits(b_only, c_only, safe_n, _z(level), CORRECTIONS[method])
    else:  # wald
        z = _z(level)
        se = np.sqrt(np.maximum(b_only + c_only - (c_only - b_only) ** 2 / safe_n, 0.0)) / safe_n
        low, high = est - z * se, est + z * se
    what = "no pairs (both + only_a + only_b + neither = 0)"
    return _finish_difference(est, low, high, empty, scalar, level, method, what)


# ---------------------------------------------------------------------------
# Many intervals at once: one per case
# ---------------------------------------------------------------------------


def _each(ci: Interval, empty: Any, note_of: Any) -> list[Interval]:
    """The array interval ``ci`` as one scalar :class:`Interval` per element, each
    with the note the scalar call gives it (``note_of(i)`` where ``empty[i]``)."""
    est, low, high = (np.atleast_1d(x).tolist() for x in (ci.estimate, ci.low, ci.high))
    level, method, diff = ci.level, ci.method, ci.difference
    out = [
        Interval(e, lo, hi, level, method, diff) for e, lo, hi in zip(est, low, high, strict=True)
    ]
    for i in np.flatnonzero(empty).tolist():
        out[i] = Interval(est[i], low[i], high[i], level, method, diff, note=note_of(i))
    return out


def _flat(named: dict[str, Any]) -> list[np.ndarray]:
    """Counts as flat int64 arrays of one length, checked as :func:`_counts` checks them."""
    arrays = [np.ravel(_validate.as_counts(name, value)) for name, value in named.items()]
    if len({a.size for a in arrays}) > 1:
        sizes = ", ".join(f"{n} has {a.size}" for n, a in zip(named, arrays, strict=True))
        raise InvalidArgument(f"{sizes} counts; give one count of each per table")
    return arrays


def diff_cis(
    successes_a: Any,
    trials_a: Any,
    successes_b: Any,
    trials_b: Any,
    *,
    level: float = 0.95,
    method: str = "newcombe",
) -> list[Interval]:
    """:func:`diff_ci` of each case, computed for all cases at once.

    The arguments are sequences of one count per case; the result is one
    scalar :class:`Interval` per case, the same floats and note as
    ``diff_ci(successes_a[i], trials_a[i], successes_b[i], trials_b[i])``
    (tests/test_intervals_many.py checks it), in one vectorised pass.

    Examples
    --------
    >>> [str(ci) for ci in diff_cis([48, 1], [80, 2], [56, 2], [70, 2])]
    ['+20% (+5% to +33%)', '+50% (−27% to +91%)']
    """
    ka, na, kb, nb = _flat(
        {"successes_a": successes_a, "trials_a": trials_a, "successes_b": successes_b,
         "trials_b": trials_b}
    )  # fmt: skip
    if ka.size == 0:
        return []
    ci = diff_ci(ka, na, kb, nb, level=level, method=method)
    empty = (na == 0) | (nb == 0)
    what = "nothing to estimate from, so the estimate is NaN and the interval is (-1, 1)"
    return _each(ci, empty, lambda i: f"{_which_empty(na[i], nb[i])}: {what}")


def paired_diff_cis(
    both: Any,
    only_a: Any,
    only_b: Any,
    neither: Any,
    *,
    level: float = 0.95,
    method: str = "newcombe",
) -> list[Interval]:
    """:func:`paired_diff_ci` of each case's 2 x 2 table, computed for all cases at once.

    The arguments are sequences of one count per case; the result is one
    scalar :class:`Interval` per case, the same floats and note as
    ``paired_diff_ci(both[i], only_a[i], only_b[i], neither[i])``
    (tests/test_intervals_many.py checks it), in one vectorised pass.

    Examples
    --------
    >>> [str(ci) for ci in paired_diff_cis([36, 0], [2, 1], [12, 3], [0, 0])]
    ['+20% (+6% to +34%)', '+50% (−40% to +91%)']
    """
    a, b, c, d = _flat({"both": both, "only_a": only_a, "only_b": only_b, "neither": neither})
    if a.size == 0:
        return []
    ci = paired_diff_ci(a, b, c, d, level=level, method=method)
    empty = (a + b + c + d) == 0
    note = (
        "no pairs (both + only_a + only_b + neither = 0): nothing to estimate from, "
        "so the estimate is NaN and the interval is (-1, 1)"
    )
    return _each(ci, empty, lambda i: note)


# ---------------------------------------------------------------------------
# Clustered samples: several runs of each case
# ---------------------------------------------------------------------------


#: Methods of the clustered intervals. ``auto`` is ``betting`` at every
#: number of cases: see :data:`AUTO_METHOD`.
CLUSTERED_METHODS = ("auto", "cr2", "cr1", "betting")

#: What ``method="auto"`` uses, at every number of cases: the distribution-free
#: betting interval, whose one-sided limits each miss with probability at most
#: (1 - level) / 2 whatever the distribution of case rates in [0, 1]. The t
#: intervals (CR2 + Satterthwaite, and Johnson's or Hall's skewness-corrected
#: t) do not keep that on case rates as skewed as evals', even at 100-300
#: cases; the betting interval pays for it in width. ``simulations/gate_margin.py``
#: (its candidates part) and ``simulations/few_cases.py`` measure both.
#: ``method="cr2"`` (or ``"cr1"``) asks for a t interval; it is never chosen
#: by default.
AUTO_METHOD = "betting"

#: The betting fraction cap (Waudby-Smith & Ramdas 2024, section 5: bets are
#: truncated at c / m, c in (0, 1)); any c in (0, 1) keeps the guarantee. 0.9
#: lets 6 cases that all gain +1 exclude 0 (1.9^6 > 40), as the best possible
#: level-95% rule does (6 is the fewest with 2^-cases < 2.5%).
_BET_CAP = 0.9


@dataclass(frozen=True)
class ClusteredInterval(Interval):
    """An :class:`Interval` over runs grouped by case (a case is a cluster).

    Attributes
    ----------
    se : float
        The cluster-robust standard error of the estimate (CR2, or CR1 with
        ``method="cr1"``); NaN with fewer than two clusters. Reported for every
        method, including ``betting``, whose limits do not use it.
    df : float
        Degrees of freedom of the t quantile: Satterthwaite's for CR2
        (clusters - 1 when every case has the same number of runs), clusters
        - 1 for CR1; NaN with one cluster. For ``betting`` the Satterthwaite
        value is reported but not used.
    clusters : int
        The number of clusters (cases).
    design_effect : float
        The clustered variance divided by the variance the same data would get
        if every sample were independent (the ordinary OLS variance of the mean,
        ``sum((y - mean)**2) / (N (N - 1))``); 1 when each case has one sample,
        above 1 when runs of a case agree with each other. NaN when undefined.
    """

    se: float = math.nan
    df: float = math.nan
    clusters: int = 0
    design_effect: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """As :meth:`Interval.to_dict`, with ``se``, ``df``, ``clusters`` and ``design_effect``."""
        out = super().to_dict()
        for key in ("se", "df", "design_effect"):
            value = float(getattr(self, key))
            out[key] = None if math.isnan(value) else value
        out["clusters"] = self.clusters
        return out

    # IPython prefers a subclass's own (dataclass) __repr__ to an inherited _repr_pretty_.
    _repr_pretty_ = Interval._repr_pretty_


def _outcomes(name: str, value: Any) -> np.ndarray:
    """Validate a 1-D sequence of outcomes in [0, 1] (booleans allowed)."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise InvalidArgument(f"{name} must be a one-dimensional sequence, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(float)
    if arr.dtype.kind not in "iuf":
        raise InvalidArgument(f"{name} must hold numbers in [0, 1] or booleans")
    return _validate.as_rate(name, arr.astype(float))


def _cluster_codes(clusters: Any, size: int, names: str) -> np.ndarray:
    labels = np.asarray(clusters)
    if labels.ndim != 1:
        raise InvalidArgument(f"clusters must be one-dimensional, got shape {labels.shape}")
    if labels.shape[0] != size:
        raise InvalidArgument(
            f"clusters has {labels.shape[0]} labels but {names} has {size} outcomes; "
            "give one cluster label per outcome"
        )
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise InvalidArgument("clusters must not contain NaN")
    _, codes = np.unique(labels, return_inverse=True)
    return codes.reshape(-1)


def _cr2(sizes: np.ndarray, sums: np.ndarray, n: float) -> tuple[float, float]:
    """CR2 variance and Satterthwaite df of a mean clustered into cases of ``sizes`` runs.

    ``sums`` holds each case's sum of residuals from the mean over all ``n`` runs.

    The mean is OLS on a constant, so for cluster g with n_g runs and residual
    sum S_g, H_gg = J / N and the CR2 adjustment (I - H_gg)^(-1/2) (Bell &
    McCaffrey 2002) scales S_g by (1 - n_g / N)^(-1/2):

        V = sum_g S_g^2 / (1 - n_g / N) / N^2.

    Satterthwaite's degrees of freedom under the working model of independent
    runs with equal variance (Pustejovsky & Tipton 2018, eq. 11; the default
    of clubSandwich's ``coef_test(test="Satterthwaite")`` for ``lm``) are
    (sum_g p_g'p_g)^2 / sum_g sum_h (p_g'p_h)^2 with p_g = k_g (1_g - (n_g/N) 1)
    and k_g^2 = 1 / (N^2 (1 - n_g / N)), so p_g'p_h = k_g k_h (delta_gh n_g -
    n_g n_h / N) and the numerator's sum is 1 / N. With equal n_g the variance
    is CR1's and the df are G - 1.
    """
    keep = 1.0 - sizes / n
    var = float(np.sum(sums * sums / keep)) / (n * n)
    k2 = 1.0 / (n * n * keep)
    diag = k2 * k2 * (sizes - sizes * sizes / n) ** 2
    cross = (float(np.sum(k2 * sizes * sizes)) ** 2 - float(np.sum(k2 * k2 * sizes**4))) / (n * n)
    df = (1.0 / n) ** 2 / (float(diag.sum()) + cross)
    return var, df


#: Bisection steps of the betting bound: its lower limit is a multiple of
#: 2**-_BISECTIONS (rounded down), 2.3e-13 apart.
_BISECTIONS = 42

#: Orders of the cases the betting capital is averaged over (see :func:`_orders`).
_ORDERS = 8
#: Each seeded order is also taken at this many evenly spaced rotations.
_TURNS = 4
#: The recorded seed of the orders. The orders come from integer arithmetic
#: (:func:`_order_keys`), not from numpy's generators, so the same cases give
#: the same interval on every machine and with every version of numpy.
_ORDER_SEED = 23

_MASK = (1 << 64) - 1


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of unsigned 64-bit integers, wrapping round.

    z + 0x9E3779B97F4A7C15, then the two xor-shift-multiply rounds and the
    final xor-shift of Steele, Lea & Flood (2014).
    """
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


def _order_keys(cases: int, bases: int) -> np.ndarray:
    """Keys of shape (bases, cases): key (b, i) = mix(s + b cases + i), s = mix(seed + cases)."""
    start = _mix(np.array([(_ORDER_SEED + cases) & _MASK], dtype=np.uint64))
    counter = np.arange(bases * cases, dtype=np.uint64) + start
    return _mix(counter).reshape(bases, cases)


@functools.lru_cache(maxsize=64)
def _orders(cases: int) -> np.ndarray:
    """The orders in which the betting capital of ``cases`` sorted values is averaged.

    An array of shape (orders, cases) of indices into the sorted values:
    order k takes ``sorted_values[_orders(cases)[k]]``. When cases! is at
    most :data:`_ORDERS`, every order once (itertools' order). Otherwise
    :data:`_ORDERS` orders: :data:`_ORDERS` / :data:`_TURNS` seeded uniformly
    random ones (the ranks of :func:`_order_keys`, ties kept in place), each
    also started ``j cases // _TURNS`` places in and wrapped round, for j = 1
    .. :data:`_TURNS` - 1. A rotation of a uniformly random order is one too,
    and the rotations put each case once in each quarter of the sequence of
    a base order's rotations: no case comes early (or late) in all of them.
    """
    if cases <= 10 and math.factorial(cases) <= _ORDERS:
        import itertools

        out = np.array(list(itertools.permutations(range(cases))), dtype=np.intp)
        out = out.reshape(-1, cases)
    else:
        base = np.argsort(_order_keys(cases, _ORDERS // _TURNS), axis=-1, kind="stable")
        places = np.arange(cases)
        turns = [(places + (j * cases) // _TURNS) % cases for j in range(_TURNS)]
        out = np.stack([base[:, t] for t in turns], axis=1).reshape(-1, cases)
    out.setflags(write=False)
    return out


#: Factors of the capital multiplied together before their logarithm is
#: taken: each factor is at least 1 - c = 0.1 and at most 1 + sqrt(8 log(1 /
#: alpha)) (the largest bet), below 78 for any alpha a float can hold, so a
#: product of 128 stays within 1e-128 and 1e243, clear of underflow and
#: overflow.
_RUN = 128

#: Values (cases x orders x rows) worked on at once: a block of rows at a
#: time keeps the betting capital's four arrays near 1 MB each, whatever the
#: number of rows. ``benchmarks/crossovers.py`` times 8,192 rows of 20 values
#: (where this sets the block): from 1 << 14 to 1 << 20, 0.83-1.08x of this
#: setting's time, no setting ahead beyond the noise of 2 shared cores.
_BLOCK = 1 << 17
#: ... and at least this many values (orders x rows) a place, so that the
#: place-by-place running sums are not mostly the cost of numpy's calls.
#: ``benchmarks/crossovers.py`` times 2,048 rows of 200 values (where this
#: sets the block): 2048 is the fastest setting, 1.1x slower at 1024, 1.3x
#: at 256, 1.5x at 4096, 2.2x at 16384.
_WIDE = 2048


def _log_wealth(
    xo: np.ndarray, alpha: float, work: np.ndarray, lam: np.ndarray, bet: np.ndarray
) -> Any:
    """The log of the averaged betting capital of ``xo`` (shape (n, orders, rows), in [0, 1]).

    ``xo[:, k, r]`` holds row r's n values in order k; ``work``, ``lam`` and
    ``bet`` are arrays of the same shape to work in (overwritten). Returns
    ``log_wealth(m)``, of shape (rows,): the log of (1 / orders) sum_k
    K_k(m), where K_k(m) = prod_i (1 + lambda_ki(m) (x_ki - m)) is the capital
    of betting that the mean exceeds m on the values in order k, with the
    predictable plug-in bets of Waudby-Smith & Ramdas (2024), section 5, for
    a known n: lambda_i(m) = min(sqrt(2 log(1 / alpha) / (n s2_{i-1})), c /
    m), where s2_{i-1} = (1/4 + sum_{j<i} (x_j - mu_j)^2) / i and mu_j = (1/2
    + sum_{k<=j} x_k) / (j + 1) use only earlier values of the same order.
    ``m`` is a number or has one entry per row. ``work`` holds the factors
    of the last evaluation.

    Every factor of every K_k is nonincreasing in m (for x_i >= m both the
    bet and x_i - m shrink; for x_i < m the factor is the larger of 1 -
    lambda (m - x_i) and 1 - c (1 - x_i / m), both decreasing), and so is
    their average. Sums and products run down the first axis, one value
    after another, and a capital is the sum of the logs of its products of
    :data:`_RUN` factors at a time, so each row's figure is the same whatever
    the other rows (and ``evalstats.stats._smallstats`` computes it in the
    same order without numpy).
    """
    n = xo.shape[0]
    # The running total t_i = (x_1 + 1/2) + x_2 + ... + x_i, the mean mu_i =
    # t_i / (i + 1), the bet before value i, sqrt(g_i / v_{i-1}) with g_i = 2
    # log(1 / alpha) i / n and v_{i-1} = 1/4 + sum_{j<i} (x_j - mu_j)^2 (the
    # formula above with s2_{i-1} written out), then v_i.
    scale = 2.0 * math.log(1.0 / alpha)
    few = xo[0].size < _FEW
    if few:
        _bets_at_once(xo, scale, lam)
    else:
        # place by place: each place's values stay in cache
        total = np.add(xo[0], 0.5)
        spread = np.full_like(total, 0.25)
        step = np.empty_like(total)
        for i in range(n):
            if i:
                np.add(total, xo[i], out=total)
            np.divide(scale * (i + 1.0) / n, spread, out=lam[i])
            np.sqrt(lam[i], out=lam[i])
            np.divide(total, i + 2.0, out=step)
            np.subtract(xo[i], step, out=step)
            np.multiply(step, step, out=step)
            np.add(spread, step, out=spread)
    log_orders = math.log(xo.shape[1])

    def log_wealth(m: Any) -> np.ndarray:
        mm = np.asarray(m, dtype=float)
        with np.errstate(divide="ignore"):
            cap = np.where(mm > 0, _BET_CAP / np.maximum(mm, 1e-300), np.inf)
        np.minimum(lam, cap, out=bet)
        np.subtract(xo, mm, out=work)
        np.multiply(work, bet, out=work)
        np.add(work, 1.0, out=work)
        if few and n > 2 * _RUN:
            # every whole run's product in one call, their logs summed run after run
            whole = n // _RUN * _RUN
            runs = work[:whole].reshape((whole // _RUN, _RUN) + work.shape[1:])
            run_logs = np.log(np.multiply.reduce(runs, axis=1))
            logs = np.add.accumulate(run_logs, axis=0)[-1]
            if whole < n:
                logs += np.log(np.multiply.reduce(work[whole:], axis=0))
        else:
            logs = np.log(np.multiply.reduce(work[:_RUN], axis=0))
            for start in range(_RUN, n, _RUN):
                logs += np.log(np.multiply.reduce(work[start : start + _RUN], axis=0))
        top = logs.max(axis=0)
        # summed one order after another (an accumulation: numpy's sum would
        # add pairwise for a single row, and so differ from row to row)
        total = np.add.accumulate(np.exp(logs - top), axis=0)[-1]
        out: np.ndarray = top + (np.log(total) - log_orders)
        return out

    return log_wealth


#: Below this many values a place (orders x rows: one interval over many cases), the
#: bets are worked out by whole-array running sums rather than place by place,
#: where a loop of a numpy call or seven per place on a few values is all overhead.
#: The two give the same floats (tests/test_fast_paths.py). ``benchmarks/crossovers.py``
#: measures the crossover on betting bounds of rows of 100 and 1,000 values: on 2
#: cores the running sums are faster below it (1.35-2.9x at 8 values a place,
#: 1.1x at 128), the two are even at 256, and place by place is faster above (1.17x at
#: 512, 1.2-1.3x at 2,048).
_FEW = 256


def _bets_at_once(xo: np.ndarray, scale: float, lam: np.ndarray) -> None:
    """The bets of :func:`_log_wealth` into ``lam``, by running sums down the places.

    The same operations as its loop, place by place, so the same floats: a
    running sum (``np.cumsum``) adds one place after another, as the loop does,
    and every other step acts value by value.
    """
    n = xo.shape[0]
    places = np.arange(n, dtype=float).reshape((n,) + (1,) * (xo.ndim - 1))
    total = np.array(xo)
    np.add(total[0], 0.5, out=total[0])
    np.cumsum(total, axis=0, out=total)
    np.divide(total, places + 2.0, out=total)
    np.subtract(xo, total, out=total)
    np.multiply(total, total, out=total)  # (x_i - mu_i)^2
    np.add(total[0], 0.25, out=total[0])
    np.cumsum(total, axis=0, out=total)  # v_i
    lam[0] = 0.25
    lam[1:] = total[:-1]  # v_{i-1}
    np.divide(scale * (places + 1.0) / n, lam, out=lam)
    np.sqrt(lam, out=lam)


def _wealth_blocks(x: np.ndarray, alpha: float, *, in_listing_order: bool = False) -> Any:
    """``(rows, log_wealth)`` for blocks of the rows of ``x`` (shape (rows, n), in [0, 1]).

    ``rows`` is a slice of the rows of ``x`` and ``log_wealth`` the function
    of :func:`_log_wealth` for them: each row's values sorted and taken in
    every order of :func:`_orders`, so that it depends only on the multiset
    of the row's values. ``in_listing_order`` takes them in the order given
    instead (one order, the capital of Waudby-Smith & Ramdas 2024 as
    published: valid only when that order is random; kept to measure what
    averaging over orders changes, simulations/order_free.py). A block's
    function is valid until the next block is yielded (they share arrays).
    """
    rows, n = x.shape
    orders = None if in_listing_order else _orders(n)
    count = 1 if orders is None else orders.shape[0]
    step = max(_WIDE // count, _BLOCK // max(1, count * n), 1)
    space = np.empty((4, n, count, min(step, rows)))
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        xo, work, lam, bet = space[:, :, :, : stop - start]
        block = x[start:stop]
        if orders is None:
            xo[:, 0, :] = block.T
        else:
            np.take(np.sort(block, axis=-1).T, orders.T, axis=0, out=xo, mode="wrap")
        yield slice(start, stop), _log_wealth(xo, alpha, work, lam, bet)


def _betting_lower(x: np.ndarray, alpha: float, *, in_listing_order: bool = False) -> np.ndarray:
    """Lower confidence bounds, at error ``alpha`` each, for the mean of ``x`` in [0, 1].

    ``x`` has shape (..., n): rows of n independent observations with a
    common mean m. The bound is the smallest m at which the averaged capital
    of :func:`_log_wealth`, over the observations sorted and taken in each
    order of :func:`_orders`, stays below 1 / alpha; it does not depend on
    the order the observations are given in. Sorting them and taking them in
    a uniformly random order gives a sequence distributed as the sample
    itself, so in each order the capital at the true mean is a nonnegative
    martingale with expectation 1 (a supermartingale at any mean below it),
    and so is their average: by Markov's inequality it reaches 1 / alpha
    with probability at most alpha, and the bound exceeds the mean with
    probability at most alpha, whatever the distribution on [0, 1]. The
    orders are drawn once, from a recorded seed, so the guarantee is over
    the data and that draw; simulations/order_free.py measures the coverage
    with the recorded orders. The capital is nonincreasing in m, so the
    bound is found by bisection (:data:`_BISECTIONS` steps, rounding down to
    a multiple of 2**-42). ``in_listing_order`` as in :func:`_wealth_blocks`.
    """
    arr = np.asarray(x, dtype=float)
    flat = arr.reshape(-1, arr.shape[-1])
    out = np.empty(flat.shape[0])
    threshold = math.log(1.0 / alpha)
    for rows, log_wealth in _wealth_blocks(flat, alpha, in_listing_order=in_listing_order):
        size = rows.stop - rows.start
        lo = np.zeros(size)  # rejected, or 0
        hi = np.ones(size)  # never rejected: every factor is at most 1 at m = 1
        start = log_wealth(lo) >= threshold
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            rej = log_wealth(mid) >= threshold
            lo = np.where(rej, mid, lo)
            hi = np.where(rej, hi, mid)
        out[rows] = np.where(start, lo, 0.0)
    return out.reshape(arr.shape[:-1])


def _rejected_at(
    x: np.ndarray, alpha: float, m: float, keep: np.ndarray, *, in_listing_order: bool = False
) -> np.ndarray:
    """Whether the betting test of each row of ``x`` (shape (rows, n)) rejects at ``m``.

    Only the rows where ``keep`` is True are evaluated (the others are False).
    ``in_listing_order`` as in :func:`_wealth_blocks`. A sieve first: the
    average of the capitals over K orders is at least the first order's
    capital over K, so a row whose first capital alone reaches K / alpha
    (with a margin of 1e-9 in its log, far beyond rounding) is rejected
    without the other orders; the others are computed as :func:`_betting_lower`
    computes them, so the decisions are the same as the bisection's.
    """
    out = np.zeros(x.shape[0], dtype=bool)
    which = np.flatnonzero(keep)
    threshold = math.log(1.0 / alpha)
    orders = _orders(x.shape[1])
    if not in_listing_order and orders.shape[0] > 1 and which.size:
        first = np.sort(x[which], axis=-1)[:, orders[0]]
        sure = np.zeros(which.size, dtype=bool)
        for rows, log_wealth in _wealth_blocks(first, alpha, in_listing_order=True):
            sure[rows] = log_wealth(m) >= threshold + math.log(orders.shape[0]) + 1e-9
        out[which[sure]] = True
        which = which[~sure]
    blocks = _wealth_blocks(x[which], alpha, in_listing_order=in_listing_order)
    for rows, log_wealth in blocks:
        out[which[rows]] = log_wealth(m) >= threshold
    return out


def betting_signs(
    d: Any, level: float, *, threshold: float = 0.0, only_above: bool = False
) -> np.ndarray:
    """+1 / -1 / 0 per row of differences ``d`` in [-1, 1]: the betting interval's verdict.

    +1 where the lower limit of :func:`clustered_limits` ``(d, level,
    difference=True, method="betting")`` is above ``threshold``, -1 where its
    upper limit is below ``-threshold``, else 0; exactly those decisions, at
    the cost of one evaluation of the betting capital per side instead of
    the bisection's 43. The lower limit is -1 + 2 b, b the bisection's bound
    on the rescaled (d + 1) / 2, a multiple k / 2**42; -1 + 2 b is exact in
    floating point, so it exceeds ``threshold`` exactly when k >= 2**41 +
    floor(threshold 2**41) + 1, and, the test being monotone in m (see
    :func:`_log_wealth`), the bisection ends at such a k exactly when the
    test rejects at that grid point. The limit is also capped at the mean,
    so the mean must exceed ``threshold`` too (the capital is computed only
    for those rows). The upper side is the same on 1 - (d + 1) / 2. With
    ``only_above`` the upper side is not evaluated and no row is -1 (for
    callers that count only "B better": half the work). Like the limits,
    the decisions depend only on the multiset of each row's values.
    """
    x = np.asarray(d, dtype=float)
    if not 0.0 <= threshold < 1.0:
        raise InvalidArgument(f"threshold={threshold!r} must be in [0, 1)")
    alpha = (1.0 - level) / 2.0
    point = _above_point(threshold)
    flat = x.reshape(-1, x.shape[-1])
    unit = (flat + 1.0) / 2.0
    mean = flat.mean(axis=-1)
    above = _rejected_at(unit, alpha, point, mean > threshold)
    if only_above:
        return above.astype(np.int8).reshape(x.shape[:-1])
    below = _rejected_at(1.0 - unit, alpha, point, mean < -threshold)
    return np.where(above, 1, np.where(below, -1, 0)).astype(np.int8).reshape(x.shape[:-1])


def _above_point(threshold: float) -> float:
    """The grid point of the rescaled mean at which the betting test must reject
    for the lower limit to be above ``threshold`` (see :func:`betting_signs`)."""
    half = 2.0 ** (_BISECTIONS - 1)
    return (half + math.floor(threshold * half) + 1.0) / (2.0 * half)


def betting_never_above(d: Any, level: float, *, threshold: float = 0.0) -> bool:
    """Whether no row of differences ``d`` in [-1, 1] has a betting lower limit above
    ``threshold``: :func:`betting_signs` gives no row +1, whatever the rows' means.

    Only the betting test is evaluated (not the cap at the mean, which can
    only take a +1 away), so the answer holds for the rows' values in any
    order, their means summed in any order too.
    """
    x = np.asarray(d, dtype=float)
    flat = x.reshape(-1, x.shape[-1])
    keep = np.ones(flat.shape[0], dtype=bool)
    return not _rejected_at(
        (flat + 1.0) / 2.0, (1.0 - level) / 2.0, _above_point(threshold), keep
    ).any()


def betting_limits(
    x: Any, level: float, *, in_listing_order: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided betting limits for the mean of ``x`` in [0, 1] along the last axis.

    Each side has error (1 - level) / 2 (the upper limit is one minus the
    lower limit of ``1 - x``), so the interval misses the mean with
    probability at most 1 - level, and lies wholly above it with probability
    at most (1 - level) / 2: a one-sided claim made from it keeps that error.
    The limits depend only on the multiset of each row's values (see
    :func:`_betting_lower`; ``in_listing_order`` as in :func:`_wealth_blocks`).
    """
    arr = np.asarray(x, dtype=float)
    alpha = (1.0 - level) / 2.0
    return (
        _betting_lower(arr, alpha, in_listing_order=in_listing_order),
        1.0 - _betting_lower(1.0 - arr, alpha, in_listing_order=in_listing_order),
    )


def clustered_limits(
    case_means: Any,
    level: float,
    *,
    difference: bool = False,
    method: str = "auto",
    in_listing_order: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised limits from per-case means of equally many runs per case.

    ``case_means`` has shape (..., cases); with the same number of runs in
    every case the mean over runs is the mean of the case means and CR2 (like
    CR1) is the t interval on the case means with cases - 1 degrees of
    freedom. ``method`` as in :func:`clustered_mean_ci`; where the case means
    are all equal (standard error 0) the t methods give way to ``betting``, as
    :func:`clustered_mean_ci` does. Differences (``difference=True``) lie in
    [-1, 1]. Used by the simulators so that they judge exactly as
    :func:`evalstats.stats._compare.compare` does. ``in_listing_order`` bets
    on the case means in the order given (see :func:`_wealth_blocks`), to
    measure what averaging over orders changes.
    """
    x = np.asarray(case_means, dtype=float)
    cases = x.shape[-1]
    lo_bound = -1.0 if difference else 0.0
    mean = x.mean(axis=-1)
    if method == "auto":
        method = AUTO_METHOD
    unit = (x - lo_bound) / (1.0 - lo_bound)
    if method == "betting":
        low, high = betting_limits(unit, level, in_listing_order=in_listing_order)
    else:
        from scipy.special import stdtrit  # the betting interval needs no scipy

        se = x.std(axis=-1, ddof=1) / math.sqrt(cases)
        se = np.where(se < 1e-12, 0.0, se)
        t = float(stdtrit(cases - 1, 0.5 + level / 2.0))
        low_t, high_t = (
            (mean - t * se - lo_bound) / (1.0 - lo_bound),
            (mean + t * se - lo_bound) / (1.0 - lo_bound),
        )
        flat = se == 0.0
        if flat.any():
            bl, bh = betting_limits(unit[flat], level)
            low_t = np.array(low_t, dtype=float)
            high_t = np.array(high_t, dtype=float)
            low_t[flat], high_t[flat] = bl, bh
        low, high = low_t, high_t
    scale = 1.0 - lo_bound
    low = np.clip(lo_bound + scale * low, lo_bound, 1.0)
    high = np.clip(lo_bound + scale * high, lo_bound, 1.0)
    return np.fmin(low, mean), np.fmax(high, mean)


#: The most cases :func:`cases_for_margin` looks at.
MAX_MARGIN_CASES = 100_000


def cases_for_margin(margin: float, level: float = 0.95) -> int | None:
    """The fewest cases whose clustered paired interval can show "within ``margin``".

    With B equal to A on every pair (every case's mean difference 0), the
    lower limit of the distribution-free interval about cases like these
    (:func:`clustered_limits`, ``difference=True``) rises towards 0 as cases
    are added; this is the fewest cases at which it lies above ``-margin``,
    a floor no run with fewer cases can pass whatever its outcomes. None when
    it takes more than :data:`MAX_MARGIN_CASES` cases (or the margin is 0).

    >>> cases_for_margin(0.10), cases_for_margin(0.05)
    (41, 83)
    """
    try:
        m = float(margin)
    except (TypeError, ValueError):
        raise InvalidArgument(f"margin={margin!r} must be a number in [0, 1)") from None
    if math.isnan(m) or not 0.0 <= m < 1.0:
        raise InvalidArgument(f"margin={margin!r} must be at least 0 and less than 1")
    return _cases_for_margin(m, _validate.check_level(level))


@functools.lru_cache(maxsize=64)
def _cases_for_margin(margin: float, level: float) -> int | None:
    if margin == 0.0:
        return None

    alpha = (1.0 - level) / 2.0

    def passes(n: int) -> bool:
        # The lower limit of clustered_limits(np.zeros((1, n)), level,
        # difference=True): every rescaled value is 1/2, so every order of
        # them is the same sequence and one order's capital is the average
        # of all of theirs, to the last bit (tests/test_fast_paths.py).
        low = -1.0 + 2.0 * _betting_lower(np.full((1, n), 0.5), alpha, in_listing_order=True)
        return bool(min(max(float(low[0]), -1.0), 0.0) > -margin)

    # The lower limit rises with the number of cases, so the fewest that pass
    # (of 2 to MAX_MARGIN_CASES) are found by stepping out from a guess by 1,
    # 2, 4, ... cases until they are bracketed, then by bisection: the guess,
    # 1.14 log(1 / alpha) / margin, is within a few cases of the answer (0.95
    # to 1.18 times it at levels 0.8 to 0.999 and margins 0.01 to 0.3).
    guess = math.ceil(1.14 * math.log(1.0 / alpha) / margin)
    x = min(max(guess, 2), MAX_MARGIN_CASES)
    step = 1
    if passes(x):
        good = x
        while good > 2:
            probe = max(good - step, 2)
            if not passes(probe):
                bad = probe
                break
            good, step = probe, 2 * step
        else:
            return 2
    else:
        bad = x
        while True:
            if bad == MAX_MARGIN_CASES:
                return None
            probe = min(bad + step, MAX_MARGIN_CASES)
            if passes(probe):
                good = probe
                break
            bad, step = probe, 2 * step
    while good - bad > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if passes(mid) else (good, mid)
    return good


def _clustered(
    y: np.ndarray, codes: np.ndarray, level: float, *, difference: bool, method: str
) -> ClusteredInterval:
    """Mean of ``y`` clustered by case, with the interval of ``method``.

    The runs are taken in the order of their values, so that every sum (and
    so every figure, to the last bit) is the same however the runs and the
    cases are listed.
    """
    n = y.size
    if n == 0:
        return _no_outcomes(level, difference=difference, method=method)
    by_value = np.argsort(y, kind="stable")
    y, codes = y[by_value], codes[by_value]
    groups = int(codes.max()) + 1
    mean = float(y.mean())
    resid = y - mean
    sizes = np.bincount(codes, minlength=groups).astype(float)
    return _cluster_robust(
        n,
        mean,
        sizes,
        np.bincount(codes, weights=resid, minlength=groups),
        np.bincount(codes, weights=y, minlength=groups) / sizes,
        float(resid @ resid),
        level,
        difference=difference,
        method=method,
    )


def _no_outcomes(level: float, *, difference: bool, method: str) -> ClusteredInterval:
    lo_bound, hi_bound = (-1.0, 1.0) if difference else (0.0, 1.0)
    return ClusteredInterval(
        math.nan,
        lo_bound,
        hi_bound,
        level,
        method,
        difference=difference,
        note=f"no outcomes: nothing to estimate from, so the estimate is NaN and the "
        f"interval is ({lo_bound:g}, {hi_bound:g})",
    )


def _clustered_counts(
    passes: Sequence[int], runs: Sequence[int], level: float, *, method: str = "auto"
) -> ClusteredInterval:
    """:func:`clustered_mean_ci` of 0/1 outcomes from their counts per cluster.

    ``passes[g]`` of ``runs[g]`` outcomes of cluster g are 1 (clusters with no
    run are left out): the same interval without one number per run. Like
    every betting interval here it depends only on the multiset of the
    case means, not on the order the cases are given in.
    """
    cells = [(p, r) for p, r in zip(passes, runs, strict=True) if r > 0]
    n = sum(r for _, r in cells)
    total = sum(p for p, _ in cells)
    if n == 0:
        return _no_outcomes(level, difference=False, method=method)
    mean = total / n
    hits = np.array([p for p, _ in cells], dtype=float)
    sizes = np.array([r for _, r in cells], dtype=float)
    # Residuals are 1 - mean for a pass and -mean otherwise: their sum over a
    # cluster is p - r * mean, and their squares add up as below.
    resid_ss = total * (1.0 - mean) ** 2 + (n - total) * mean**2
    return _cluster_robust(
        n,
        mean,
        sizes,
        hits - sizes * mean,
        hits / sizes,
        resid_ss,
        level,
        difference=False,
        method=method,
    )


def _cluster_robust(
    n: int,
    mean: float,
    sizes: np.ndarray,
    sums: np.ndarray,
    case_means: np.ndarray,
    resid_ss: float,
    level: float,
    *,
    difference: bool,
    method: str,
) -> ClusteredInterval:
    """The interval of ``method`` from per-case run counts, residual sums and means.

    ``sizes``, ``sums`` and ``case_means`` hold one entry per case (with at
    least one run), in any one order of the cases; ``resid_ss`` is the sum of
    the squared residuals of all ``n`` runs. No figure depends on that order:
    the cases are first put in the order of their means (then sizes and
    sums), so that the sums over cases are the same to the last bit.
    """
    canonical = np.lexsort((sums, sizes, case_means))
    sizes, sums, case_means = sizes[canonical], sums[canonical], case_means[canonical]
    lo_bound, hi_bound = (-1.0, 1.0) if difference else (0.0, 1.0)
    full = f"({lo_bound:g}, {hi_bound:g})"
    groups = int(sizes.size)
    if groups < 2:
        return ClusteredInterval(
            mean,
            lo_bound,
            hi_bound,
            level,
            method,
            difference=difference,
            note=f"one case only: nothing can be said about cases like these from one "
            f"case, so the interval is the whole range {full}",
            clusters=groups,
        )
    if method == "auto":
        method = AUTO_METHOD
    if method == "cr1":
        # CR1 (Cameron & Miller 2015; Miller 2024, arXiv 2411.00640), as
        # statsmodels' OLS(y, 1).fit(cov_type="cluster"): G/(G-1) * sum S_g^2 / N^2
        # (the (N-1)/(N-K) factor is 1 for K = 1), with t on G - 1 df.
        var = groups / (groups - 1) * float(sums @ sums) / (n * n)
        df = float(groups - 1)
    else:
        var, df = _cr2(sizes, sums, float(n))
    if var < 1e-24:
        # Every case has the same mean: the residual sums are 0 up to rounding
        # (about 1e-17), and the standard error is exactly 0, not a tiny
        # number that would pass for a confident interval downstream.
        var = 0.0
    se = math.sqrt(var)
    iid = resid_ss / (n * (n - 1)) if n > 1 else math.nan
    deff = var / iid if iid > 0 else math.nan
    scale = hi_bound - lo_bound
    if method == "betting" or se == 0.0:
        # Case means as independent draws with the mean sought (each case's
        # expected mean is the mean over cases like these, however many runs
        # it had); the limits depend only on their multiset.
        bl, bh = betting_limits((case_means - lo_bound) / scale, level)
        low, high = lo_bound + scale * float(bl), lo_bound + scale * float(bh)
        used = "betting"
    else:
        t = _t_quantile(df, level)
        low, high = mean - t * se, mean + t * se
        used = method
    note = _clustered_note(method, used, groups, df)
    low = min(max(low, lo_bound), mean)
    high = max(min(high, hi_bound), mean)
    return ClusteredInterval(
        mean,
        low,
        high,
        level,
        used,
        difference=difference,
        note=note,
        se=se,
        df=df,
        clusters=groups,
        design_effect=deff,
    )


def _clustered_method(method: Any) -> str:
    return _validate.check_method(method, CLUSTERED_METHODS)


def clustered_mean_ci(
    outcomes: Any, clusters: Any, *, level: float = 0.95, method: str = "auto"
) -> ClusteredInterval:
    """Mean pass rate over runs grouped by case, with an interval about cases like these.

    When each case is run several times, runs of the same case are not
    independent: a hard case fails again and again. Treating every run as an
    independent trial then makes the interval too narrow. This function keeps
    the runs of a case together, as Miller (2024) recommends for evals: the
    interval speaks about the mean pass rate over cases like these (the cases
    seen being a sample of them), not only about the cases run.

    Parameters
    ----------
    outcomes : array_like
        One outcome per run: booleans, 0/1, or fractional scores in [0, 1].
    clusters : array_like
        One label per run naming its case (any hashable values numpy can sort).
    level : float, optional
        Confidence level, strictly between 0 and 1.
    method : {"auto", "cr2", "cr1", "betting"}
        ``cr2``: the bias-reduced cluster-robust standard error of Bell &
        McCaffrey (2002) with Satterthwaite degrees of freedom (Pustejovsky &
        Tipton 2018), as R's clubSandwich computes them (``vcovCR(type =
        "CR2")``, ``coef_test(test = "Satterthwaite")``); with the same number
        of runs per case it is the t interval on the case means with cases - 1
        degrees of freedom. ``cr1``: the CR1 standard error (statsmodels'
        ``OLS(y, ones).fit(cov_type="cluster")``) with t on cases - 1 degrees
        of freedom. ``betting``: the betting confidence interval of
        Waudby-Smith & Ramdas (2024) on the case means, its capital averaged
        over fixed orders of the sorted case means (so it does not depend on
        the order or the names of the cases: see Notes), which covers the
        mean with probability at least ``level`` whatever the distribution of
        case pass rates in [0, 1] and however few the cases; it is wide,
        which is the honest answer from few cases. ``auto`` (default):
        ``betting``, at every number of cases; the t intervals' one-sided
        errors exceed their level on case pass rates as skewed as evals' even
        at 100-300 cases (see :data:`AUTO_METHOD`).

    Returns
    -------
    ClusteredInterval
        ``estimate`` is the mean outcome over all runs; ``se`` the CR2 (or
        CR1) standard error and ``df`` its degrees of freedom; ``method`` the
        method used (``cr2``, ``cr1`` or ``betting``). The limits are clipped
        to [0, 1] and contain the estimate. When the case means are all equal
        the standard error is 0 and the t methods give way to the betting
        interval, with a note. ``design_effect`` compares the clustered
        variance with the independent-runs one. A single case gives the
        interval (0, 1): nothing can be said about cases like these from one.

    Notes
    -----
    The betting capital of Waudby-Smith & Ramdas (2024) multiplies one
    factor per case in sequence, and its guarantee holds when the sequence is
    in random order; suites list their cases easy first, by topic or by
    difficulty. So the case means are sorted and the capital is averaged over
    fixed orders of the sorted values (8: two seeded uniformly random orders,
    each at four evenly spaced rotations; every order when there are 3 cases
    or fewer). A sorted sample taken in a uniformly random order is
    distributed as the sample itself, so each order's capital at the true
    mean is an e-value, and so is their average: the limits keep the
    guarantee (over the data and the draw of the orders, which a recorded
    seed fixes once) and depend only on the multiset of case means.
    ``simulations/order_free.py`` measures the coverage and the one-sided
    errors with the recorded orders, the cases listed in random order, easy
    first, by topic and by true rate, at 10-300 cases; the exact coverage
    with one run per case is in tests/test_clustered.py.

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
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.
    Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to
    cluster-robust inference. Journal of Human Resources 50, 317-372.

    Examples
    --------
    >>> y = [1, 1, 1, 0, 0, 0, 1, 0]
    >>> ci = clustered_mean_ci(y, ["a", "a", "b", "b", "c", "c", "d", "d"], method="cr2")
    >>> round(ci.estimate, 3), round(ci.se, 4), ci.df, ci.clusters
    (0.5, 0.2041, 3.0, 4)
    >>> ci.note
    'CR2 cluster-robust SE over 4 cases, t with 3 df'
    >>> print(clustered_mean_ci([1] * 12, [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]))
    100% (51% to 100%)
    """
    level = _validate.check_level(level)
    method = _clustered_method(method)
    y = _outcomes("outcomes", outcomes)
    codes = _cluster_codes(clusters, y.size, "outcomes")
    return _clustered(y, codes, level, difference=False, method=method)


def clustered_paired_diff_ci(
    outcomes_a: Any,
    outcomes_b: Any,
    clusters: Any,
    *,
    level: float = 0.95,
    method: str = "auto",
) -> ClusteredInterval:
    """Mean paired difference ``b - a`` over runs grouped by case.

    Each position holds one pair: the outcome of variant A and of variant B on
    the same case (and the same repeat). The per-pair differences ``b - a`` are
    averaged, and the interval speaks about cases like these, as in
    :func:`clustered_mean_ci` (the betting interval works on the case mean
    differences, which lie in [-1, 1]).

    Parameters
    ----------
    outcomes_a, outcomes_b : array_like
        Outcomes of the two variants, pair by pair: booleans, 0/1 or scores in
        [0, 1], of equal length.
    clusters : array_like
        One case label per pair.
    level : float, optional
        Confidence level, strictly between 0 and 1.
    method : {"auto", "cr2", "cr1", "betting"}
        As in :func:`clustered_mean_ci`.

    Returns
    -------
    ClusteredInterval
        ``difference`` is True; the limits are clipped to [-1, 1]. A single case
        gives (-1, 1).

    References
    ----------
    Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for
    cluster-robust variance estimation and hypothesis testing in fixed effects
    models. Journal of Business & Economic Statistics 36, 672-683.
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random
    variables by betting. Journal of the Royal Statistical Society, Series B
    86, 1-27.
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.

    Examples
    --------
    >>> a = [0, 0, 1, 1, 0, 1]
    >>> b = [1, 1, 1, 1, 0, 1]
    >>> ci = clustered_paired_diff_ci(a, b, [1, 1, 2, 2, 3, 3])
    >>> round(ci.estimate, 4), ci.clusters, ci.method
    (0.3333, 3, 'betting')
    """
    level = _validate.check_level(level)
    method = _clustered_method(method)
    a = _outcomes("outcomes_a", outcomes_a)
    b = _outcomes("outcomes_b", outcomes_b)
    if a.size != b.size:
        raise InvalidArgument(
            f"outcomes_a has {a.size} outcomes and outcomes_b has {b.size}; "
            "they must be paired one to one"
        )
    codes = _cluster_codes(clusters, a.size, "outcomes_a")
    return _clustered(b - a, codes, level, difference=True, method=method)


# ---------------------------------------------------------------------------
# Exact coverage
# ---------------------------------------------------------------------------


def coverage(method: str, trials: int, p: Any, *, level: float = 0.95) -> Any:
    """Exact coverage probability of a one-sample interval method.

    The probability, when the true pass rate is ``p``, that the interval from
    :func:`proportion_ci` with ``trials`` trials contains ``p``: the sum of the
    binomial probabilities of every success count whose interval covers ``p``.
    No sampling is involved.

    Parameters
    ----------
    method : str
        One of the methods of :func:`proportion_ci`.
    trials : int
        Number of trials, at least 1.
    p : float or array_like of float
        True pass rates in [0, 1].
    level : float, optional
        Nominal confidence level.

    Returns
    -------
    float or numpy.ndarray
        The coverage at each ``p`` (a float for scalar ``p``).

    References
    ----------
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a
    binomial proportion. Statistical Science 16, 101-133 (figures 1-5 plot this
    function).

    Examples
    --------
    With one trial the Wilson interval is (0, 0.7935) after a failure and
    (0.2065, 1) after a success, so a true rate of 0.1 is covered only by the
    failure, which happens with probability 0.9.

    >>> round(coverage("wilson", 1, 0.1), 12)
    0.9
    >>> coverage("clopper_pearson", 20, [0.1, 0.5]).round(4)
    array([0.9887, 0.9586])
    """
    from ._binomial import binom_pmf as _binom_pmf

    level = _validate.check_level(level)
    method = _validate.check_method(method, PROPORTION_METHODS)
    n = _validate.as_counts("trials", trials, minimum=1)
    if n.ndim:
        raise InvalidArgument(f"trials must be a single count, got shape {n.shape}")
    rate = _validate.as_rate("p", p)
    k = np.arange(int(n) + 1)
    ci = proportion_ci(k, int(n), level=level, method=method)
    flat = rate.reshape(-1)
    covered = (ci.low[None, :] <= flat[:, None]) & (flat[:, None] <= ci.high[None, :])
    # Binomial probabilities in log space: exact 0 and 1 at p = 0 and 1, and no
    # overflow for subnormal p (where scipy.stats.binom.pmf can raise). One row
    # per p, summed along the row, so that each p's sum is the one it gets alone.
    probs = _binom_pmf(k[None, :], n, flat[:, None])
    result = (probs * covered).sum(axis=-1).reshape(rate.shape)
    return float(result) if rate.ndim == 0 else result
