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
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._terminal import visible
from .errors import InvalidArgument

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "LEVEL_MAX",
    "LEVEL_MIN",
    "MAX_EXPERIMENTS",
    "MAX_SPREAD",
    "as_counts",
    "as_rate",
    "check_experiments",
    "check_level",
    "check_method",
    "check_not_larger",
    "check_spread",
    "closest",
    "confusable",
    "confusable_message",
    "name_key",
    "name_problem",
    "plain_name",
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


#: The confidence levels (and target powers) evalstats accepts. Below 0.5 an
#: interval misses more often than it covers and a "verdict" is a coin toss
#: (``--level 1e-300`` printed "B better" after a 1e-298% test); above 0.9999
#: the tails are past what a few thousand samples can say anything about.
LEVEL_MIN = 0.5
LEVEL_MAX = 0.9999


def check_level(level: Any, name: str = "level") -> float:
    """Return ``level`` as a float, at least :data:`LEVEL_MIN` and at most :data:`LEVEL_MAX`.

    >>> check_level(0.95)
    0.95
    >>> check_level(1e-300)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: level=1e-300 must be at least 0.5 and at most 0.9999 (...)
    """
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={level!r} must be a number between 0 and 1") from None
    if isinstance(level, bool) or math.isnan(value) or not 0.0 < value < 1.0:
        hint, between = "", "between"
        if 1.0 < value < 100.0:
            hint = f" (did you mean {value / 100:g}?)"
        elif value in (0.0, 1.0):  # "1 must be between 0 and 1" reads as wrong
            hint, between = f" ({_such_as(name)})", "strictly between"
        raise InvalidArgument(f"{name}={level!r} must be {between} 0 and 1{hint}")
    if not LEVEL_MIN <= value <= LEVEL_MAX:
        raise InvalidArgument(
            f"{name}={level!r} must be at least {LEVEL_MIN:g} and at most {LEVEL_MAX:g} "
            f"({_such_as(name)})"
        )
    return value


def _such_as(name: str) -> str:
    return "a power such as 0.8" if name == "power" else "a confidence level such as 0.95"


#: The most experiments a simulation runs: its Monte-Carlo error (±0.25 points
#: at a power of 80%) is then far below anything a plan turns on, and a plan of
#: 100,000 experiments per design already takes minutes.
MAX_EXPERIMENTS = 100_000

#: The largest case-by-variant spread (logit scale) a case model takes: the
#: ceiling of what a pilot fit reports. A spread of 8 already puts one case's
#: gain eight logits (a pass rate from 50% to 99.97%) from another's.
MAX_SPREAD = 8.0


def check_experiments(value: Any) -> int:
    """Return ``value`` as a number of simulated experiments, 1 to :data:`MAX_EXPERIMENTS`."""
    n = whole_number("experiments", value)
    if n > MAX_EXPERIMENTS:
        raise InvalidArgument(
            f"experiments={n} is more than the {MAX_EXPERIMENTS:,} a simulation runs "
            "(8,000 keep a power near 80% within ±0.9 points)"
        )
    return n


def check_spread(value: Any, name: str = "spread") -> float:
    """Return ``value`` as a spread: a finite number from 0 to :data:`MAX_SPREAD`."""
    if isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be a number of at least 0")
    try:
        spread = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={value!r} must be a number of at least 0") from None
    if math.isnan(spread) or spread < 0:
        raise InvalidArgument(f"{name}={value!r} must be a number of at least 0")
    if spread > MAX_SPREAD:
        raise InvalidArgument(
            f"{name}={value!r} is more than {MAX_SPREAD:g}, the largest case-by-variant "
            "spread (logit scale) a case model takes; a pilot fit never reports more"
        )
    return spread


# --- names and ids ------------------------------------------------------------------
#
# A case id, a tag or a variant name is printed at the start of report lines,
# used as a key and compared: it must be plain text, one way of writing it.


def name_problem(value: str) -> str | None:
    """What makes ``value`` unfit as a name or an id, or None.

    A name may not hold control characters (newlines, tabs, ESC and its
    sequences, C1 controls, bidirectional overrides; see
    :mod:`evalstats._terminal`) nor lone surrogates, and must be in Unicode
    normal form NFC, so that a name is written one way only.

    >>> name_problem("order 7") is None
    True
    >>> print(name_problem("a\\nFAKE"))  # doctest: +ELLIPSIS
    holds the control character \\n at position 1; names and ids cannot hold controls (...)
    >>> name_problem("cafe\\u0301")
    "is not in Unicode normal form NFC (write it composed: 'café')"
    """
    shown = visible(value, keep="")
    if shown != value:
        at = next(i for i, (a, b) in enumerate(zip(value, shown, strict=False)) if a != b)
        return (
            f"holds the control character {visible(value[at], keep='')} at position {at}; "
            "names and ids cannot hold controls (newlines, tabs, escape sequences, "
            "bidirectional overrides)"
        )
    composed = unicodedata.normalize("NFC", value)
    if composed != value:
        return f"is not in Unicode normal form NFC (write it composed: {composed!r})"
    return None


def plain_name(name: str, value: Any) -> str:
    """Return ``value`` if it is a non-empty string fit as a name (:func:`name_problem`)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name}={value!r} must be a non-empty string")
    problem = name_problem(value)
    if problem is not None:
        raise InvalidArgument(f"{name}={value!r} {problem}")
    return value


def name_key(value: str) -> str:
    """What a name looks like: its NFKC form without invisible format characters.

    Two names with the same key look alike on a page or a terminal: they
    differ only by zero-width characters (U+200B, U+200D, U+FEFF, ...) or by
    compatibility forms (a ligature, a full-width letter, a no-break space).

    >>> name_key("or\\u200bder") == name_key("order") == name_key("\\uff4frder")
    True
    """
    folded = unicodedata.normalize("NFKC", value)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf")


def confusable(names: Iterable[str]) -> tuple[int, int] | None:
    """Positions ``(first, second)`` of the first two different names that look alike.

    >>> confusable(["a", "b", "\\u200bb"])
    (1, 2)
    >>> confusable(["a", "b"]) is None
    True
    """
    seen: dict[str, tuple[int, str]] = {}
    for i, value in enumerate(names):
        key = name_key(value)
        earlier = seen.get(key)
        if earlier is not None and earlier[1] != value:
            return earlier[0], i
        seen.setdefault(key, (i, value))
    return None


def confusable_message(what: str, first: str, second: str) -> str:
    """The words for two names that look alike (see :func:`confusable`)."""
    return (
        f"the {what} {second!r} looks the same as {first!r}: they differ only by invisible "
        "characters or Unicode compatibility forms; rename one"
    )


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
