"""Check functions and the :class:`Verdict` they come to.

A check is any callable ``check(answer) -> None | str``: ``None`` when the answer
is fine, otherwise the problem in a few words. A check may also return a
:class:`Verdict`, for example to say that it does not apply (``unscored``). The
runner wraps every result in a ``Verdict`` with :func:`run_check`, which also
turns a check that raises into a failed verdict instead of a crashed run.

The built-in checks are factories that return configured callables, each with a
readable ``name`` (also its ``__name__``), such as ``contains('A-1042')``:

* :func:`contains`, :func:`contains_any`, :func:`avoids`: substrings, compared
  case-insensitively (by Unicode case folding) unless asked otherwise;
* :func:`has_terms`: whole terms on word boundaries, a lexical screen;
* :func:`word_count`, :func:`matches`, :func:`is_json_with`: length, a regular
  expression, and a JSON object with given (possibly nested) keys;
* :func:`equals`, :func:`json_schema`: the one right answer, and JSON a JSON
  Schema accepts;
* :func:`links_within`: the answer's links all lead to given domains.

**Nothing to inspect is a failure.** Every built-in check fails an answer that
is ``None``, not text, empty or only whitespace, with a reason that starts with
:data:`INSPECTION_FAILURE`, so that reports can count such failures apart from
real misses. This holds for :func:`avoids` too: an empty answer does avoid every
phrase, but there was nothing to inspect, and counting it as a pass would let a
broken assistant pass every safety screen.

Argument errors (a wrong type, no terms, a bad regular expression, bounds the
wrong way round) raise :class:`~evalstats.errors.InvalidArgument` when the check
is built, never when it scores.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from .._validate import suggest
from ..errors import InvalidArgument, ProviderError
from ..results._records import INSPECTION_FAILURE
from ._threads import Alarm, CallTimedOut

__all__ = [
    "BUILTIN_CHECKS",
    "CHECK_ERROR",
    "Check",
    "INSPECTION_FAILURE",
    "Verdict",
    "avoids",
    "check_from_spec",
    "check_name",
    "contains",
    "contains_any",
    "equals",
    "has_terms",
    "is_json_with",
    "json_schema",
    "links_within",
    "matches",
    "review_only",
    "sample_seed_now",
    "scoring_sample",
    "run_check",
    "word_count",
]

#: Reasons that start with this say the check itself raised an exception (a bug
#: in the check, not a problem of the answer); see :func:`run_check`.
CHECK_ERROR = "the check itself raised"

Status = Literal["passed", "failed", "unscored"]
_STATUSES = ("passed", "failed", "unscored")


@dataclass(frozen=True)
class Verdict:
    """What one check concluded about one answer.

    ``status`` is ``"passed"``, ``"failed"`` or ``"unscored"``; ``reason`` says
    why (empty for a pass). **Unscored is not passed**: an unscored verdict
    leaves that check's denominator.

    Examples
    --------
    >>> Verdict.of(None)
    Verdict(status='passed', reason='')
    >>> Verdict.of("doesn't mention 'A-1042'").status
    'failed'
    >>> Verdict.unscored("no order id in this case").is_scored
    False
    """

    status: Status
    reason: str = ""
    #: What a model-graded check saw and said (the judge's prompt and raw reply),
    #: kept with the verdict in the sample record; not part of the verdict's value.
    evidence: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    #: A graded check's score in [0, 1] (None for a pass/fail check); see :meth:`scored`.
    score: float | None = field(default=None, repr=False)
    #: The score as the check gave it, on ``scale`` (None when not graded).
    raw_score: float | None = field(default=None, repr=False)
    #: The scale of ``raw_score``, ``(low, high)``; (0, 1) unless declared.
    scale: tuple[float, float] | None = field(default=None, repr=False)
    #: The tokens a model-graded check's judge call took, ``{"input": n, "output": n}``
    #: as the model service reported them, and the model it was asked for (None when
    #: the judge called no model, or does not say); recorded for the run's cost.
    judge_tokens: Mapping[str, int | None] | None = field(default=None, compare=False, repr=False)
    judge_model: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise InvalidArgument(
                f"status={self.status!r} is not one of {', '.join(_STATUSES)}"
                f"{suggest(str(self.status), _STATUSES)}"
            )

    @classmethod
    def scored(
        cls,
        value: Any,
        *,
        scale: Any = (0, 1),
        threshold: Any = None,
        reason: str = "",
    ) -> Verdict:
        """A graded verdict: ``value`` on ``scale``, mapped linearly to a score in [0, 1].

        The score as given is kept (``raw_score``, ``scale``). ``threshold``
        (on the same scale) turns it into pass/fail for the pass rates:
        passed when ``value >= threshold``; without one the verdict passes
        only at the top of the scale (full marks). A value or threshold
        outside the scale, NaN or not a number is refused in one line naming
        it (``scale=(1, 5)``: ``score=7 is outside its scale (1, 5)``).

        >>> v = Verdict.scored(4, scale=(1, 5), threshold=4)
        >>> v.status, v.score, v.raw_score
        ('passed', 0.75, 4.0)
        >>> Verdict.scored(0.5).status
        'failed'
        """
        low, high = _scale(scale)
        raw = _on_scale("score", value, low, high)
        cut = None if threshold is None else _on_scale("threshold", threshold, low, high)
        score = (raw - low) / (high - low)
        passed = raw >= cut if cut is not None else raw == high
        if not passed and not reason:
            shown = f"{raw:g}" if (low, high) != (0.0, 1.0) else f"{raw:.3g}"
            where = f" of {low:g}-{high:g}" if (low, high) != (0.0, 1.0) else ""
            reason = (
                f"scored {shown}{where}, below the threshold {cut:g}"
                if cut is not None
                else f"scored {shown}{where}, not full marks"
            )
        return cls(
            "passed" if passed else "failed",
            "" if passed else reason,
            score=score,
            raw_score=raw,
            scale=(low, high),
        )

    @classmethod
    def passed(cls) -> Verdict:
        return cls("passed")

    @classmethod
    def failed(cls, reason: str) -> Verdict:
        return cls("failed", str(reason))

    @classmethod
    def unscored(cls, reason: str) -> Verdict:
        return cls("unscored", str(reason))

    @classmethod
    def of(cls, result: Any) -> Verdict:
        """Wrap what a check returned: ``None`` passes, a string fails, a Verdict stays,
        a float is a score in [0, 1] (:meth:`scored`; an int is refused as before)."""
        if isinstance(result, Verdict):
            return result
        if result is None:
            return cls.passed()
        if isinstance(result, str):
            return cls.failed(result or "failed")
        if isinstance(result, float):
            return cls.scored(result)
        raise TypeError(
            f"a check must return None, a str or a Verdict, not {type(result).__name__}"
        )

    @property
    def is_passed(self) -> bool:
        return self.status == "passed"

    @property
    def is_failed(self) -> bool:
        return self.status == "failed"

    @property
    def is_scored(self) -> bool:
        """False for ``unscored``: such a verdict is in no pass-rate denominator."""
        return self.status != "unscored"

    @property
    def not_inspected(self) -> bool:
        """A failure because there was nothing to inspect."""
        return self.is_failed and self.reason.startswith(INSPECTION_FAILURE)


def _scale(scale: Any) -> tuple[float, float]:
    """``scale`` checked: two finite numbers, low below high."""
    import math

    try:
        low, high = (float(x) for x in scale)
    except (TypeError, ValueError):
        raise InvalidArgument(f"scale={scale!r} must be two numbers (low, high)") from None
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise InvalidArgument(f"scale={scale!r} must be two finite numbers, low below high")
    return low, high


def _on_scale(name: str, value: Any, low: float, high: float) -> float:
    """``value`` as a float within [low, high], or one line naming ``name``."""
    import math

    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            import numpy as np

            if not isinstance(value, np.integer | np.floating):
                raise TypeError
        except TypeError:
            raise InvalidArgument(
                f"{name}={value!r} must be a number on the scale ({low:g}, {high:g})"
            ) from None
    x = float(value)
    if math.isnan(x):
        raise InvalidArgument(f"{name}=nan must be a number on the scale ({low:g}, {high:g})")
    if not low <= x <= high:
        raise InvalidArgument(f"{name}={x:g} is outside its scale ({low:g}, {high:g})")
    return x


# --- running a check -------------------------------------------------------


def check_name(check: Callable[..., Any]) -> str:
    """A readable name for any check: its ``name``, else ``__name__``, else ``repr``.

    Examples
    --------
    >>> check_name(contains("A-1042"))
    "contains('A-1042')"
    >>> def no_shouting(answer):
    ...     return None
    >>> check_name(no_shouting)
    'no_shouting'
    """
    name = getattr(check, "name", None)
    if isinstance(name, str) and name:
        return name
    name = getattr(check, "__name__", None)
    if isinstance(name, str) and name and name != "<lambda>":
        return name
    return repr(check)


def run_check(check: Callable[[Any], Any], answer: Any, *, alarm: Alarm | None = None) -> Verdict:
    """Run one check on one answer and return its :class:`Verdict`.

    What the check returns is wrapped with :meth:`Verdict.of`. A check that
    raises an exception (any ``Exception``; ``KeyboardInterrupt`` and the like
    still propagate), or that returns something other than ``None``, a string
    or a ``Verdict``, gives a *failed* verdict whose reason starts with
    :data:`CHECK_ERROR` and names the check and the error: a bug in one check
    must not crash a whole run, and must not pass an answer either (a check
    declared graded, such as a judge asked for a score, then scores 0). The
    exception is :class:`~evalstats.errors.ProviderError` (from a model-graded
    check such as :func:`~evalstats.running._judge.judged_by`), which propagates: a
    judge that could not be reached has not judged the answer.

    Parameters
    ----------
    check : callable
        ``check(answer) -> None | str | Verdict``.
    answer : object
        What the assistant answered, usually a string.
    alarm : Alarm, optional
        The run's deadline of a call (its ``--timeout``, on the main thread;
        see :class:`~evalstats.running._threads.Alarm`): a check that outlives
        it is stopped and gives a failed verdict saying so.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> run_check(contains("A-1042"), "Your order A-1042 has shipped.")
    Verdict(status='passed', reason='')
    >>> run_check(contains("A-1042"), "It has shipped.").reason
    "doesn't mention 'A-1042'"
    >>> def broken(answer):
    ...     return len(answer) / 0
    >>> run_check(broken, "text").reason
    'the check itself raised: broken: ZeroDivisionError: division by zero'
    """
    try:
        if alarm is None:
            result = check(answer)
        else:
            with alarm.bounding():
                result = check(answer)
    except CallTimedOut:
        assert alarm is not None
        return _check_error(
            check,
            f"{CHECK_ERROR}: {check_name(check)}: it did not return within "
            f"{alarm.seconds:g} s (the run's --timeout) and was stopped",
        )
    except ProviderError:
        # A model-graded check whose model service failed has not judged the
        # answer: the runner decides (a transient error makes the sample
        # unmeasured, any other stops the run); it is not a failed answer.
        raise
    except Exception as exc:  # a check bug becomes a failure, not a crash
        return _check_error(
            check, f"{CHECK_ERROR}: {check_name(check)}: {type(exc).__name__}: {exc}"
        )
    try:
        return Verdict.of(result)
    except TypeError:
        return _check_error(
            check,
            f"{CHECK_ERROR}: {check_name(check)} returned {type(result).__name__}, "
            "not None, a str or a Verdict",
        )
    except InvalidArgument as exc:  # a score outside [0, 1], or NaN
        return _check_error(check, f"{CHECK_ERROR}: {check_name(check)} returned {exc}")


def _check_error(check: Callable[[Any], Any], reason: str) -> Verdict:
    """The failure of a check that erred; a check declared graded also scores 0, as an
    unclear judge's score does, so that its errors cannot lift a mean score by leaving it."""
    if getattr(check, "graded", False) is True:
        return Verdict("failed", reason, score=0.0)
    return Verdict.failed(reason)


# --- the built-in checks ---------------------------------------------------


_SAMPLE_SEED: ContextVar[int | None] = ContextVar("evalstats_sample_seed", default=None)


@contextmanager
def scoring_sample(seed: int) -> Iterator[None]:
    """While the engine scores one sample: the sample's seed, for checks that draw.

    A check is called with the answer alone; one that draws random numbers
    (the offline stand-in judge) reads the seed of the sample being scored
    with :func:`sample_seed_now`, so that its draws are fixed by the sample,
    not by the order in which samples happened to be scored.
    """
    token = _SAMPLE_SEED.set(seed)
    try:
        yield
    finally:
        _SAMPLE_SEED.reset(token)


def sample_seed_now() -> int | None:
    """The seed of the sample being scored (see :func:`scoring_sample`), or None."""
    return _SAMPLE_SEED.get()


class Check:
    """A configured check: call it with an answer; ``name`` says what it checks.

    The built-in factories return instances of this class. Calling one returns
    ``None`` when the answer is fine and the problem as a string otherwise.
    """

    def __init__(self, name: str, fn: Callable[[str], str | None]) -> None:
        self.name = name
        self.__name__ = name
        self.__qualname__ = name
        self._fn = fn

    def __call__(self, answer: Any) -> str | None:
        problem = nothing_to_inspect(answer)
        if problem is not None:
            return f"{INSPECTION_FAILURE}: {problem}"
        return self._fn(answer)

    def __repr__(self) -> str:
        return self.name


def nothing_to_inspect(answer: Any) -> str | None:
    """Why an answer has nothing to inspect (None, not text, empty, blank), or None."""
    if answer is None:
        return "there is no answer"
    if not isinstance(answer, str):
        return f"the answer is {type(answer).__name__}, not text"
    if not answer:
        return "the answer is empty"
    if answer.isspace():
        return "the answer is only whitespace"
    return None


def _texts(
    factory: str, name: str, values: tuple[Any, ...], *, one: bool = False, blank: bool = False
) -> tuple[str, ...]:
    """Check that ``values`` is a non-empty tuple of non-empty strings.

    ``name`` is the parameter's name (``"terms"``); messages label elements
    ``terms[1]``, or just ``text`` when ``one`` says there is a single value.
    ``blank`` allows strings of only whitespace (JSON keys may be such).
    """
    if not values:
        singular = name[:-1] if name.endswith("s") else name
        raise InvalidArgument(f"{factory}() needs at least one {singular}; got none")
    for i, v in enumerate(values):
        label = name if one else f"{name}[{i}]"
        if not isinstance(v, str):
            raise InvalidArgument(
                f"{factory}(): {label}={v!r} must be a string, not {type(v).__name__}"
            )
        if not v or (v.isspace() and not blank):
            raise InvalidArgument(f"{factory}(): {label}={v!r} must not be empty")
    return tuple(values)


def _bool(factory: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{factory}(): {name}={value!r} must be True or False")
    return value


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(repr(v) for v in values)


def contains(text: str, *, case_sensitive: bool = False) -> Check:
    """A check that the answer contains ``text``.

    Parameters
    ----------
    text : str
        The substring to look for (not empty).
    case_sensitive : bool, optional
        By default letters are compared by Unicode case folding, so
        ``contains("strasse")`` accepts "STRASSE" and "Straße".

    Returns
    -------
    Check
        ``check(answer)``: None, or ``doesn't mention 'text'``. An empty answer
        fails with a reason starting ``could not be inspected``.

    See Also
    --------
    has_terms : whole terms on word boundaries rather than any substring.

    Examples
    --------
    >>> check = contains("A-1042")
    >>> check("Your order a-1042 has shipped.") is None
    True
    >>> check("Your order has shipped.")
    "doesn't mention 'A-1042'"
    >>> check("")
    'could not be inspected: the answer is empty'
    """
    (text,) = _texts("contains", "text", (text,), one=True)
    _bool("contains", "case_sensitive", case_sensitive)
    problem = f"doesn't mention {text!r}"
    if case_sensitive:

        def fn(answer: str) -> str | None:
            return None if text in answer else problem

        return Check(f"contains({text!r}, case_sensitive=True)", fn)
    folded = text.casefold()

    def fn_folded(answer: str) -> str | None:
        return None if folded in answer.casefold() else problem

    return Check(f"contains({text!r})", fn_folded)


def contains_any(*texts: str, case_sensitive: bool = False) -> Check:
    """A check that the answer contains at least one of ``texts``.

    Parameters
    ----------
    *texts : str
        Substrings, at least one; compared by Unicode case folding unless
        ``case_sensitive=True``.
    case_sensitive : bool, optional
        Compare exactly instead.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``mentions none of 'a', 'b'``.

    Examples
    --------
    >>> check = contains_any("sorry", "apologise", "apologize")
    >>> check("We apologise for the broken lamp.") is None
    True
    >>> check("The lamp is broken.")
    "mentions none of 'sorry', 'apologise', 'apologize'"
    """
    texts = _texts("contains_any", "texts", texts)
    _bool("contains_any", "case_sensitive", case_sensitive)
    problem = f"mentions none of {_quoted(texts)}"
    if case_sensitive:
        name = f"contains_any({_quoted(texts)}, case_sensitive=True)"

        def fn(answer: str) -> str | None:
            return None if any(t in answer for t in texts) else problem

        return Check(name, fn)
    folded = tuple(t.casefold() for t in texts)

    def fn_folded(answer: str) -> str | None:
        a = answer.casefold()
        return None if any(t in a for t in folded) else problem

    return Check(f"contains_any({_quoted(texts)})", fn_folded)


def avoids(*phrases: str) -> Check:
    """A check that the answer contains none of ``phrases`` (case-insensitive).

    When several phrases occur, the reason names the one that occurs **first
    in the answer** (the one a reader meets first), not the first in argument
    order. Phrases that start at the same place are reported longest first
    (the more specific phrase), then in argument order. Positions are those
    in the case-folded answer, which keeps their order.

    An empty answer *fails* (``could not be inspected: ...``) although it
    contains no phrase: an assistant that answers nothing has not shown that
    it avoids anything.

    Parameters
    ----------
    *phrases : str
        At least one phrase; compared by Unicode case folding.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``says 'phrase'``.

    Examples
    --------
    >>> check = avoids("SAVE100", "discount code:")
    >>> check("I can't change prices, sorry.") is None
    True
    >>> check("Here is a discount code: save100")
    "says 'discount code:'"
    """
    phrases = _texts("avoids", "phrases", phrases)
    # Longest first, then argument order: the order in which ties are reported.
    order = sorted(range(len(phrases)), key=lambda i: -len(phrases[i].casefold()))
    folded = [(phrases[i].casefold(), phrases[i]) for i in order]

    def fn(answer: str) -> str | None:
        a = answer.casefold()
        best: tuple[int, str] | None = None
        for f, original in folded:
            at = a.find(f)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, original)
        return None if best is None else f"says {best[1]!r}"

    return Check(f"avoids({_quoted(phrases)})", fn)


def _whole_number(factory: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(
            f"{factory}(): {name}={value!r} must be a whole number, not {type(value).__name__}"
        )
    if value < 0:
        raise InvalidArgument(f"{factory}(): {name}={value!r} is negative")
    return int(value)


def word_count(low: int, high: int) -> Check:
    """A check that the answer has between ``low`` and ``high`` words, inclusive.

    Words are the pieces between runs of whitespace, any Unicode whitespace
    (as :meth:`str.split` with no argument splits): spaces, tabs, newlines,
    no-break and ideographic spaces alike. Punctuation is not a separator, so
    "A-1042." is one word.

    Parameters
    ----------
    low, high : int
        Inclusive bounds, ``0 <= low <= high``.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``has 31 words, more than 25`` /
        ``has 2 words, fewer than 3``. An empty answer fails as not inspected,
        whatever ``low`` is.

    Examples
    --------
    >>> check = word_count(3, 25)
    >>> check("You are welcome, happy to help!") is None
    True
    >>> check("Thanks!")
    'has 1 word, fewer than 3'
    """
    low = _whole_number("word_count", "low", low)
    high = _whole_number("word_count", "high", high)
    if low > high:
        raise InvalidArgument(f"word_count(): low={low} is larger than high={high}")

    def fn(answer: str) -> str | None:
        n = len(answer.split())
        noun = "word" if n == 1 else "words"
        if n < low:
            return f"has {n} {noun}, fewer than {low}"
        if n > high:
            return f"has {n} {noun}, more than {high}"
        return None

    return Check(f"word_count({low}, {high})", fn)


def matches(pattern: str | re.Pattern[str], *, flags: int = 0) -> Check:
    """A check that the regular expression ``pattern`` is found in the answer.

    The answer passes when :func:`re.search` finds the pattern anywhere; anchor
    it with ``^``/``$`` or ``\\A``/``\\Z`` to demand more.

    Parameters
    ----------
    pattern : str or re.Pattern
        A regular expression (validated when the check is built).
    flags : int, optional
        :mod:`re` flags such as ``re.IGNORECASE``; must be 0 for a compiled
        pattern, which carries its own.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``doesn't match 'pattern'``.

    Examples
    --------
    >>> import re
    >>> check = matches("A-[0-9]{4}")
    >>> check("Order A-1042 has shipped.") is None
    True
    >>> check("Order a-1042 has shipped.")
    "doesn't match 'A-[0-9]{4}'"
    >>> matches("A-[0-9]{4}", flags=re.IGNORECASE)("order a-1042") is None
    True
    """
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise InvalidArgument(f"matches(): flags={flags!r} must be re flags (an int)")
    if isinstance(pattern, re.Pattern):
        if flags:
            raise InvalidArgument(
                f"matches(): flags={flags!r} cannot be added to a compiled pattern; "
                "compile it with the flags instead"
            )
        if not isinstance(pattern.pattern, str):
            raise InvalidArgument(f"matches(): pattern={pattern!r} must be a text pattern")
        compiled = pattern
    elif isinstance(pattern, str):
        if not pattern:
            raise InvalidArgument("matches(): pattern='' must not be empty")
        try:
            compiled = re.compile(pattern, flags)
        except (re.error, ValueError, OverflowError) as exc:
            raise InvalidArgument(
                f"matches(): pattern={pattern!r} is not a valid regular expression: {exc}"
            ) from None
    else:
        raise InvalidArgument(
            f"matches(): pattern={pattern!r} must be a string, not {type(pattern).__name__}"
        )
    shown_flags = compiled.flags & ~re.UNICODE
    name = f"matches({compiled.pattern!r}"
    if shown_flags:
        name += f", flags={re.RegexFlag(shown_flags)!r}"
    name += ")"
    problem = f"doesn't match {compiled.pattern!r}"
    search = _bounded_search(compiled)

    def fn(answer: str) -> str | None:
        return None if search(answer) else problem

    return Check(name, fn)


#: The seconds a regular expression may search one answer.
REGEX_TIMEOUT_S = 1.0


def _bounded_search(compiled: re.Pattern[str]) -> Callable[[str], bool]:
    """``compiled.search`` within :data:`REGEX_TIMEOUT_S`, by the ``regex`` engine.

    The ``regex`` module, in its ``re``-compatible mode (``V0``), finds what
    ``re`` finds (Unicode ``\\w``, ``\\d`` and ``\\b`` included, unlike RE2, whose
    classes are ASCII), handles the classic catastrophic patterns such as
    ``^(a+)+$`` without backtracking, and takes a timeout: a search that runs
    past it raises ``TimeoutError``, which :func:`run_check` turns into a
    failed verdict naming the check, never a pass and never a hung run. A
    pattern the ``regex`` module cannot compile is searched by ``re``.
    """
    import regex

    try:
        engine = regex.compile(compiled.pattern, compiled.flags | regex.V0)
    except (regex.error, ValueError, OverflowError, TypeError):  # pragma: no cover - rare
        return lambda answer: compiled.search(answer) is not None

    def search(answer: str) -> bool:
        try:
            return engine.search(answer, timeout=REGEX_TIMEOUT_S) is not None
        except TimeoutError:
            raise TimeoutError(
                f"the regular expression ran longer than {REGEX_TIMEOUT_S:g} s on an answer "
                f"of {len(answer):,} characters (it backtracks: rewrite it without nested "
                "repeats)"
            ) from None

    return search


def is_json_with(*keys: str) -> Check:
    """A check that the answer is a JSON object that has every key in ``keys``.

    A key with dots is a path into nested objects: ``"order.id"`` asks for
    ``{"order": {"id": ...}}``. A key that itself contains a dot cannot be
    named. Whitespace around the JSON is allowed; anything else around it
    (prose, a Markdown code fence) makes the answer invalid JSON.

    An answer that is not valid JSON, or is JSON but not an object (a list, a
    string, a number), could not be inspected: it fails with a reason starting
    ``could not be inspected``. A missing key is an ordinary failure.

    Parameters
    ----------
    *keys : str
        At least one key or dotted path, without empty parts.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``JSON object lacks 'a', 'b.c'``.

    Examples
    --------
    >>> check = is_json_with("order.id", "status")
    >>> check('{"order": {"id": "A-1042"}, "status": "shipped"}') is None
    True
    >>> check('{"order": {}, "status": "shipped"}')
    "JSON object lacks 'order.id'"
    >>> check('["A-1042"]')
    'could not be inspected: the JSON is an array, not an object'
    """
    keys = _texts("is_json_with", "keys", keys, blank=True)
    paths = []
    for i, key in enumerate(keys):
        parts = tuple(key.split("."))
        if any(not p for p in parts):
            raise InvalidArgument(
                f"is_json_with(): keys[{i}]={key!r} has an empty part; "
                "write nested keys as 'outer.inner'"
            )
        paths.append(parts)

    def fn(answer: str) -> str | None:
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            return (
                f"{INSPECTION_FAILURE}: not valid JSON ({exc.msg} at line {exc.lineno} "
                f"column {exc.colno})"
            )
        except (RecursionError, ValueError) as exc:
            return f"{INSPECTION_FAILURE}: not valid JSON ({type(exc).__name__})"
        if not isinstance(data, dict):
            return f"{INSPECTION_FAILURE}: the JSON is {_json_kind(data)}, not an object"
        missing = [key for key, parts in zip(keys, paths, strict=True) if not _has(data, parts)]
        if missing:
            return f"JSON object lacks {_quoted(tuple(missing))}"
        return None

    return Check(f"is_json_with({_quoted(keys)})", fn)


def equals(text: str, *, case_sensitive: bool = True) -> Check:
    """A check that the answer is ``text``, whitespace around either aside.

    For answers with one right form: a number, a label, a yes or no.
    Compared exactly (case included) unless ``case_sensitive`` is false, when
    both sides are case-folded.

    Parameters
    ----------
    text : str
        The expected answer; not empty.
    case_sensitive : bool, optional
        True by default.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``is not '42'``.

    Examples
    --------
    >>> check = equals("42")
    >>> check(" 42 ") is None, check("42.")
    (True, "is not '42'")
    >>> equals("Yes", case_sensitive=False)("yes") is None
    True
    """
    (text,) = _texts("equals", "text", (text,), one=True)
    sensitive = _bool("equals", "case_sensitive", case_sensitive)
    want = text.strip() if sensitive else text.strip().casefold()
    problem = f"is not {_prefix(repr(text.strip()), 80)}"

    def fn(answer: str) -> str | None:
        got = answer.strip() if sensitive else answer.strip().casefold()
        return None if got == want else problem

    name = f"equals({text!r}" + ("" if sensitive else ", case_sensitive=False") + ")"
    return Check(name, fn)


def json_schema(schema: Mapping[str, Any]) -> Check:
    """A check that the answer is JSON that a JSON Schema accepts.

    The schema is checked when the check is built, against the draft its
    ``$schema`` names (the latest draft when it names none), by the
    ``jsonschema`` package. As for :func:`is_json_with`, whitespace around
    the JSON is allowed and an answer that is not valid JSON could not be
    inspected; JSON the schema refuses fails with the schema's most relevant
    error and where in the answer it is.

    Parameters
    ----------
    schema : mapping
        A JSON Schema, such as ``{"type": "object", "required": ["id"]}``.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``at $.id: 7 is not of type 'string'``.

    Examples
    --------
    >>> check = json_schema({"type": "object", "required": ["id"],
    ...                      "properties": {"id": {"type": "string"}}})
    >>> check('{"id": "A-1042"}') is None
    True
    >>> check('{"id": 7}')
    "at $.id: 7 is not of type 'string'"
    >>> check('{}')
    "at $: 'id' is a required property"
    """
    if not isinstance(schema, Mapping):
        raise InvalidArgument(
            f"json_schema(): schema={_prefix(repr(schema))} must be a JSON Schema object, "
            'such as {"type": "object", "required": ["id"]}'
        )
    import jsonschema
    from jsonschema import exceptions

    try:
        plain = json.loads(json.dumps(schema, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"json_schema(): the schema is not JSON: {exc}") from None
    cls = jsonschema.validators.validator_for(plain)
    try:
        cls.check_schema(plain)
    except exceptions.SchemaError as exc:
        where = "".join(f"[{p!r}]" for p in exc.absolute_path) or " at its top"
        raise InvalidArgument(
            f"json_schema(): the schema is not valid{where}: {_prefix(exc.message)}"
        ) from None
    validator = cls(plain)

    def fn(answer: str) -> str | None:
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            return (
                f"{INSPECTION_FAILURE}: not valid JSON ({exc.msg} at line {exc.lineno} "
                f"column {exc.colno})"
            )
        except (RecursionError, ValueError) as exc:
            return f"{INSPECTION_FAILURE}: not valid JSON ({type(exc).__name__})"
        error = exceptions.best_match(validator.iter_errors(data))
        if error is None:
            return None
        path = "$" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        return f"at {path}: {_prefix(error.message)}"

    shown = json.dumps(plain, sort_keys=True, ensure_ascii=False)
    return Check(f"json_schema({_prefix(shown, 60)})", fn)


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _has(data: Any, parts: tuple[str, ...]) -> bool:
    for part in parts:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


# A web link: http:// or https:// and what follows up to whitespace, a quote,
# an angle bracket or a closing bracket (Markdown's "[text](url)" ends there).
_LINK = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)
_DOMAIN = re.compile(r"[^\s/:@?#\[\]]+")


def _link_host(link: str) -> str | None:
    """The host of a link (found by ``_LINK``, trailing punctuation cut), or None."""
    try:
        host = urlsplit(link).hostname
    except ValueError:  # a malformed IPv6 literal, say
        return None
    return host.rstrip(".") or None if host else None


def links_within(*domains: str) -> Check:
    """A check that the answer has links and every one leads to one of ``domains``.

    A link is any ``http://`` or ``https://`` address in the answer (in Markdown
    ``[text](url)`` too). A link is within a domain when its host is that domain
    or a subdomain of it: ``docs.example.com`` is within ``example.com``, while
    ``example.com.evil.net`` and ``notexample.com`` are not. Hosts are compared
    case-insensitively.

    **Nothing to inspect is a failure.** An answer with no links at all fails
    with ``could not be inspected: the answer has no links``: it shows nothing
    about where its links lead, and counting it as a pass would let an
    assistant that never links pass the screen.

    Parameters
    ----------
    *domains : str
        At least one domain name, such as ``"example.com"``, without a scheme,
        a path or a port.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``links outside example.com: <first such link>``
        (a link whose host cannot be read counts as outside).

    Examples
    --------
    >>> check = links_within("example.com")
    >>> check("See https://docs.example.com/refunds for details.") is None
    True
    >>> check("See https://example.com.evil.net/refunds.")
    'links outside example.com: https://example.com.evil.net/refunds'
    >>> check("Our team will reply within 2 working days.")
    'could not be inspected: the answer has no links'
    """
    domains = _texts("links_within", "domains", domains)
    wanted = []
    for i, domain in enumerate(domains):
        d = domain.strip().lower().rstrip(".")
        if not _DOMAIN.fullmatch(d) or d.startswith("."):
            raise InvalidArgument(
                f"links_within(): domains[{i}]={domain!r} must be a domain name such as "
                "'example.com', without a scheme, a path or a port"
            )
        wanted.append(d)
    shown = ", ".join(wanted)

    def within(host: str | None) -> bool:
        return host is not None and any(host == d or host.endswith("." + d) for d in wanted)

    def fn(answer: str) -> str | None:
        links = [m.group(0).rstrip(".,;:!?") for m in _LINK.finditer(answer)]
        if not links:
            return f"{INSPECTION_FAILURE}: the answer has no links"
        for link in links:
            if not within(_link_host(link)):
                return f"links outside {shown}: {link}"
        return None

    return Check(f"links_within({_quoted(domains)})", fn)


_WORD = re.compile(r"\w")


def _is_word_char(ch: str) -> bool:
    # Unicode \w, plus combining marks: the accent of a decomposed "é" belongs
    # to its word, so "cafe" is not a whole term inside "cafe\u0301".
    return bool(_WORD.match(ch)) or unicodedata.category(ch)[0] == "M"


class _Term:
    """One term of :func:`has_terms`, matched on case-folded text."""

    def __init__(self, term: str) -> None:
        self.term = term
        words = term.casefold().split()
        self.pattern = re.compile(r"\s+".join(re.escape(w) for w in words))

    def found_in(self, text: str, folded: str, starts: dict[int, int] | None) -> bool:
        """Whether the term occurs as a whole term in ``text``.

        ``folded`` is ``text`` case-folded; ``starts`` maps each position in
        ``folded`` where an original character's folding begins to that
        character's index (None when folding kept every character's length,
        so positions agree). Word boundaries are judged on the original
        characters, so folding cannot create or remove a boundary.
        """
        pos = 0
        n = len(text)
        while True:
            m = self.pattern.search(folded, pos)
            if m is None:
                return False
            s, e = m.span()
            if starts is None:
                i, j = s, e
            else:
                i = starts.get(s, -1)
                j = starts.get(e, -1) if e < len(folded) else n
            if i >= 0 and j >= 0:
                before_ok = i == 0 or not _is_word_char(text[i - 1])
                after_ok = j == n or not _is_word_char(text[j])
                if before_ok and after_ok:
                    return True
            pos = s + 1


def _fold_with_starts(text: str) -> tuple[str, dict[int, int] | None]:
    folded = text.casefold()
    if len(folded) == len(text):
        # Case folding never maps a character to nothing, so equal lengths
        # mean every character folded to exactly one character.
        return folded, None
    starts: dict[int, int] = {}
    at = 0
    for i, ch in enumerate(text):
        starts[at] = i
        at += len(ch.casefold())
    return folded, starts


def has_terms(*terms: str) -> Check:
    """A check that every one of ``terms`` appears as a whole term in the answer.

    A lexical screen: each term must occur case-insensitively (by Unicode case
    folding) with no word character right before its first character or
    right after its last, so "GO" satisfies ``has_terms("Go")`` while
    "ongoing" and "Gopher" do not. Terms that start or end with punctuation
    ("C++", "Node.js", "A-1042") and several words ("Paper Kite", where any
    run of whitespace may separate the words) match as whole terms. Word
    characters are Unicode ones (Unicode ``\\w``, plus combining marks), so
    non-ASCII text and terms work. In scripts written without spaces between
    words (Chinese, Japanese, Thai) a run of text is one long "word", so a
    term inside it has no boundary and is not found: screen such text with
    :func:`contains`.

    **A lexical screen is not a semantic judge.** It sees that a term is
    there, not what the sentence says about it: "The project does not use
    Go." satisfies ``has_terms("Go")``. This limit is kept on purpose; judge
    meaning with a model-graded check and calibrate it.

    Parameters
    ----------
    *terms : str
        At least one term, none empty.

    Returns
    -------
    Check
        ``check(answer)``: None, or ``doesn't mention the term 'Go'`` /
        ``doesn't mention the terms 'Go', 'Rust'``.

    Examples
    --------
    >>> check = has_terms("Go", "Paper Kite")
    >>> check("We use GO at paper\\n kite.") is None
    True
    >>> check("An ongoing project at Paper Kite.")
    "doesn't mention the term 'Go'"
    >>> has_terms("Go")("The project does not use Go.") is None  # not a judge
    True
    """
    terms = _texts("has_terms", "terms", terms)
    compiled = [_Term(t) for t in terms]

    def fn(answer: str) -> str | None:
        folded, starts = _fold_with_starts(answer)
        missing = tuple(t.term for t in compiled if not t.found_in(answer, folded, starts))
        if not missing:
            return None
        noun = "term" if len(missing) == 1 else "terms"
        return f"doesn't mention the {noun} {_quoted(missing)}"

    return Check(f"has_terms({_quoted(terms)})", fn)


class _ReviewOnly(Check):
    """The check :func:`review_only` returns: always ``Verdict.unscored(reason)``."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"review_only({reason!r})", lambda answer: None)
        self.reason = reason

    def __call__(self, answer: Any) -> Verdict:  # type: ignore[override]
        return Verdict.unscored(self.reason)


def review_only(reason: str) -> Check:
    """A check that leaves the answer to a person: every verdict is ``unscored``.

    For cases where no lexical screen is honest (an answer that must stay
    within the notes, a refusal worded freely): the check records, for every
    answer, ``Verdict.unscored(reason)``, so the case's answer axis has no
    denominator instead of a made-up pass. **Unscored is not passed**; the
    reviewed task-success rate comes from ``evalstats review``. An incomplete
    sample still fails every check, this one included (the engine's rule).

    Parameters
    ----------
    reason : str
        What only a person can judge (not empty); it is the verdict's reason.

    Returns
    -------
    Check
        ``check(answer) -> Verdict`` (always unscored).

    Examples
    --------
    >>> check = review_only("only a person can judge whether it stays within the notes")
    >>> check("Anything at all.")
    Verdict(status='unscored', reason='only a person can judge whether it stays within the notes')
    >>> check_from_spec({"review_only": "a person judges the refusal"}).name
    "review_only('a person judges the refusal')"
    """
    (reason,) = _texts("review_only", "reason", (reason,), one=True)
    return _ReviewOnly(reason)


# --- checks from declarative specs -----------------------------------------

#: The checks a case file can name, by name.
BUILTIN_CHECKS: Mapping[str, Callable[..., Check]] = {
    "avoids": avoids,
    "equals": equals,
    "json_schema": json_schema,
    "contains": contains,
    "contains_any": contains_any,
    "has_terms": has_terms,
    "is_json_with": is_json_with,
    "links_within": links_within,
    "matches": matches,
    "review_only": review_only,
    "word_count": word_count,
}


def check_from_spec(spec: Mapping[str, Any]) -> Check:
    """Build a built-in check from a declarative spec, as written in case files.

    A spec is a mapping with one key naming the check; its value gives the
    arguments: a list is positional arguments, a mapping is keyword
    arguments, anything else is the single argument. Optional ``"axis"`` and
    ``"name"`` keys are allowed (and ignored here: they belong to the case's
    check, :class:`~evalstats.running._suite.CaseCheck`).

    Parameters
    ----------
    spec : mapping
        For example ``{"contains": "A-1042"}``, ``{"word_count": [3, 25]}``,
        ``{"avoids": ["SAVE100", "discount code:"], "axis": "safety"}`` or
        ``{"contains": {"text": "A-1042", "case_sensitive": true}}``.

    Returns
    -------
    Check

    Raises
    ------
    InvalidArgument
        For an unknown check name (with the closest known name), a spec that
        is not a mapping or names no check or several, or bad arguments.

    Examples
    --------
    >>> check_from_spec({"word_count": [3, 25]})
    word_count(3, 25)
    >>> check_from_spec({"contain": "A-1042"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: unknown check 'contain' (did you mean 'contains'?); ...
    """
    if not isinstance(spec, Mapping):
        raise InvalidArgument(
            f"a check spec must be a mapping like {{'contains': 'A-1042'}}, not {spec!r}"
        )
    names = [k for k in spec if k not in ("axis", "name")]
    if len(names) != 1:
        what = "no check" if not names else f"several checks ({', '.join(map(str, names))})"
        raise InvalidArgument(f"a check spec must name exactly one check; {spec!r} names {what}")
    name = names[0]
    if not isinstance(name, str) or name not in BUILTIN_CHECKS:
        raise InvalidArgument(
            f"unknown check {name!r}{suggest(str(name), BUILTIN_CHECKS)}; "
            f"choose one of {', '.join(sorted(BUILTIN_CHECKS))}"
        )
    factory = BUILTIN_CHECKS[name]
    value = spec[name]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}
    if name == "json_schema":  # the value is the schema itself
        args = (value,)
    elif isinstance(value, list):
        args = tuple(value)
    elif isinstance(value, Mapping):
        kwargs = dict(value)
    else:
        args = (value,)
    try:
        return factory(*args, **kwargs)
    except TypeError as exc:
        raise InvalidArgument(
            f"check {name!r} cannot take {_prefix(repr(value))}: {_prefix(str(exc))}"
        ) from None


def _prefix(text: str, limit: int = 120) -> str:
    """At most ``limit`` characters of ``text``, marked when cut."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"
