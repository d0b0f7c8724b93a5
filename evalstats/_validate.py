"""Argument checks shared by the public functions.

Every public function checks its arguments at the door and raises
:class:`~evalstats.errors.InvalidArgument` with a message in ``name=value`` form
that says what was expected, so that nobody meets a bare traceback from deep
inside numpy.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .errors import InvalidArgument

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "as_counts",
    "as_rate",
    "check_level",
    "check_method",
    "check_not_larger",
    "closest",
    "suggest",
    "whole_number",
]


def closest(value: str, options: Iterable[str]) -> str | None:
    """The option most like ``value`` (difflib, similarity 0.5 or more), or None."""
    close = difflib.get_close_matches(str(value), list(options), n=1, cutoff=0.5)
    return close[0] if close else None


def suggest(value: str, options: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest option, or ``""``."""
    close = closest(value, options)
    return f" (did you mean {close!r}?)" if close is not None else ""


def check_method(method: Any, options: Sequence[str], *, name: str = "method") -> str:
    """Return ``method`` if it is one of ``options``, else raise with a suggestion."""
    if not isinstance(method, str) or method not in options:
        choices = ", ".join(repr(o) for o in options)
        what = "method" if name == "method" else "choice"
        raise InvalidArgument(
            f"{name}={method!r} is not a known {what}{suggest(str(method), options)}; "
            f"choose one of {choices}"
        )
    return method


def whole_number(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` if it is an integer (not a bool) of at least ``minimum``.

    numpy integers count (``int(np.int64(3))``); floats, even whole ones, do not.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgument(f"{name}={value!r} must be a whole number")
    if value < minimum:
        raise InvalidArgument(f"{name}={value!r} must be at least {minimum}")
    return int(value)


def check_level(level: Any) -> float:
    """Return ``level`` as a float strictly between 0 and 1."""
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise InvalidArgument(f"level={level!r} must be a number between 0 and 1") from None
    if isinstance(level, bool) or math.isnan(value) or not 0.0 < value < 1.0:
        hint = ""
        if 1.0 < value < 100.0:
            hint = f" (did you mean {value / 100:g}?)"
        raise InvalidArgument(f"level={level!r} must be between 0 and 1{hint}")
    return value


def _first_bad(mask: np.ndarray) -> tuple[int, ...] | None:
    import numpy as np

    if not mask.any():
        return None
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _label(name: str, index: tuple[int, ...] | None, shape: tuple[int, ...]) -> str:
    if index is None or not shape:
        return name
    return f"{name}[{', '.join(str(i) for i in index)}]"


def _show(value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return repr(float(value))
    return repr(value.item() if isinstance(value, np.generic) else value)


def as_counts(name: str, value: Any, *, minimum: int = 0) -> np.ndarray:
    """Return ``value`` as an int64 array of counts, each at least ``minimum``.

    Floats are accepted only when they are whole numbers; NaN, infinities,
    booleans, negative and fractional values are rejected with the argument's
    name, and for arrays the position of the first offending element.
    """
    import numpy as np

    if isinstance(value, bool | np.bool_):
        raise InvalidArgument(f"{name}={value!r} must be a whole number, not a boolean")
    try:
        arr = np.asarray(value)
    except Exception:  # pragma: no cover - numpy accepts nearly anything
        raise InvalidArgument(f"{name}={value!r} must be a whole number") from None
    if arr.dtype == bool:
        raise InvalidArgument(f"{name} must hold whole numbers, not booleans")
    if arr.dtype.kind not in "iuf":
        raise InvalidArgument(f"{name}={value!r} must be a whole number")
    if arr.dtype.kind == "f":
        bad = _first_bad(~np.isfinite(arr))
        if bad is not None:
            raise InvalidArgument(
                f"{_label(name, bad, arr.shape)}={_show(arr[bad] if arr.shape else arr)} "
                "must be a finite whole number"
            )
        bad = _first_bad(arr != np.floor(arr))
        if bad is not None:
            raise InvalidArgument(
                f"{_label(name, bad, arr.shape)}={_show(arr[bad] if arr.shape else arr)} "
                "must be a whole number"
            )
    counts = arr.astype(np.int64)
    bad = _first_bad(counts < minimum)
    if bad is not None:
        what = "negative" if minimum == 0 else f"less than {minimum}"
        raise InvalidArgument(
            f"{_label(name, bad, arr.shape)}={_show(arr[bad] if arr.shape else arr)} "
            f"is {what}; expected a count of at least {minimum}"
        )
    return counts


def check_not_larger(small_name: str, small: np.ndarray, big_name: str, big: np.ndarray) -> None:
    """Raise when any ``small`` exceeds the matching ``big`` (after broadcasting)."""
    import numpy as np

    try:
        s, b = np.broadcast_arrays(small, big)
    except ValueError:
        raise InvalidArgument(
            f"{small_name} has shape {np.shape(small)} and {big_name} has shape "
            f"{np.shape(big)}; they must broadcast together"
        ) from None
    bad = _first_bad(s > b)
    if bad is not None:
        raise InvalidArgument(
            f"{_label(small_name, bad, s.shape)}={int(s[bad])} is larger than "
            f"{_label(big_name, bad, b.shape)}={int(b[bad])}"
        )


def as_rate(name: str, value: Any, *, open_interval: bool = False) -> np.ndarray:
    """Return ``value`` as a float array of probabilities in [0, 1] (or (0, 1))."""
    import numpy as np

    if isinstance(value, bool | np.bool_):
        raise InvalidArgument(f"{name}={value!r} must be a number between 0 and 1")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={value!r} must be a number between 0 and 1") from None
    if open_interval:
        mask = ~((arr > 0) & (arr < 1))
        expected = "strictly between 0 and 1"
    else:
        mask = ~((arr >= 0) & (arr <= 1))
        expected = "between 0 and 1"
    bad = _first_bad(mask)
    if bad is not None:
        shown = arr[bad] if arr.shape else arr
        hint = ""
        if 2 <= float(shown) <= 100:
            hint = f" (did you mean {float(shown) / 100:g}?)"
        raise InvalidArgument(
            f"{_label(name, bad, arr.shape)}={_show(value if not arr.shape else shown)} "
            f"must be {expected}{hint}"
        )
    return arr
