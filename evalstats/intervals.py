"""Confidence intervals for pass rates and for differences between pass rates.

The result of every function here is an :class:`Interval`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Interval"]


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
