"""The two claims a verdict can make, in one vocabulary, and the rule that picks one.

* ``"these_cases"``: would these same cases, run again, pass more often with
  B? The paired, alternating design makes this claim valid whatever the
  cases are.
* ``"cases_like_these"``: would cases drawn the way these were pass more often
  with B? It treats each case as one draw, so it needs paired outcomes and
  enough cases.

Every function and verb takes the claim as ``about`` (``--about these-cases |
cases-like-these`` on the command line); the words and the default are
decided here, once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .._validate import suggest
from ..errors import InvalidArgument

__all__ = [
    "CLAIMS",
    "DEFAULT_NOTE",
    "MIN_CASES",
    "check_about",
    "check_fits",
    "claim_of",
    "claim_words",
    "default_about",
    "few_cases_note",
    "refuses_scope",
]

#: The claims, as ``about=`` takes them.
CLAIMS = ("these_cases", "cases_like_these")

_WORDS = {"these_cases": "these cases", "cases_like_these": "cases like these"}

#: The old spellings, refused with the new one named.
_OLD = {
    "trials": "these_cases",
    "cases": "cases_like_these",
    "these-cases": "these_cases",
    "cases-like-these": "cases_like_these",
}

#: With fewer cases than this, nothing is claimed about cases like these by
#: default: a distribution-free claim at 95% needs at least 6 cases that all
#: moved the same way (1/2^cases < 2.5%), and the clustered interval cannot
#: tell anything from fewer.
MIN_CASES = 5

F = TypeVar("F", bound=Callable[..., Any])


def check_about(about: Any, *, name: str = "about") -> str | None:
    """``about`` checked: one of :data:`CLAIMS`, or None (the default).

    >>> check_about("cases_like_these")
    'cases_like_these'
    >>> check_about("trials")
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: about='trials' is the old spelling; say about='these_cases'
    """
    if about is None or about in CLAIMS:
        return about  # type: ignore[no-any-return]
    if isinstance(about, str) and about in _OLD:
        raise InvalidArgument(f"{name}={about!r} is the old spelling; say {name}={_OLD[about]!r}")
    raise InvalidArgument(
        f"{name}={about!r} must be 'these_cases' or 'cases_like_these'{suggest(str(about), CLAIMS)}"
    )


def claim_words(about: str) -> str:
    """The claim as a reader says it: ``"these cases"`` or ``"cases like these"``."""
    return _WORDS[about]


def claim_of(method: str) -> str:
    """The claim a comparison method makes: the clustered one is about cases like these."""
    return "cases_like_these" if method == "clustered" else "these_cases"


def few_cases_note(n_cases: int) -> str:
    """Why nothing is said about cases like these from ``n_cases`` cases."""
    return (
        f"with {n_cases} case{'s' if n_cases != 1 else ''} nothing can be said about cases "
        f"like these (it takes at least {MIN_CASES})"
    )


#: Why a verdict is about these cases when nothing asked for a claim.
DEFAULT_NOTE = "the default, as the suite does not declare its cases sampled at random"


def default_about(*, n_cases: int, not_paired: str = "", sampled: bool = False) -> tuple[str, str]:
    """The claim made when none is asked for, and the note saying why.

    About these cases, unless the suite declares its cases sampled at random
    (``sampled``), the outcomes are paired (``not_paired`` is empty) and
    there are at least :data:`MIN_CASES` cases: then about cases like these.
    A hand-built suite is not a random sample of anything, and the paired,
    alternating runs make the claim about these cases valid whatever the
    cases are. The note says what decided it.

    >>> default_about(n_cases=40)
    ('these_cases', 'the default, as the suite does not declare its cases sampled at random')
    >>> default_about(n_cases=40, sampled=True)
    ('cases_like_these', 'the suite declares its cases sampled at random')
    >>> default_about(n_cases=4, sampled=True)
    ('these_cases', 'with 4 cases nothing can be said about cases like these (it takes at least 5)')
    """
    if not sampled:
        return "these_cases", DEFAULT_NOTE
    if not not_paired and n_cases >= MIN_CASES:
        return "cases_like_these", "the suite declares its cases sampled at random"
    if n_cases < MIN_CASES:
        return "these_cases", few_cases_note(n_cases)
    return "these_cases", (
        f"not paired ({not_paired}), and a claim about cases like these compares A and B "
        "case by case"
    )


def check_fits(method: str | None, about: str | None) -> None:
    """Refuse a ``method`` that makes another claim than ``about``."""
    if method is None or about is None or claim_of(method) == about:
        return
    fits = (
        "method='clustered' for cases like these"
        if about == "cases_like_these"
        else "method='mcnemar' (paired) or 'newcombe' for these cases"
    )
    raise InvalidArgument(
        f"about={about!r} does not fit method={method!r}, which speaks about "
        f"{claim_words(claim_of(method))}; give one of them, or {fits}"
    )


def refuses_scope(func: F) -> F:
    """Refuse the old keyword ``scope=`` of ``func`` in one line naming ``about=``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "scope" in kwargs:
            old = kwargs["scope"]
            new = _OLD.get(old) if isinstance(old, str) else None
            hint = f"about={new!r}" if new else "about='these_cases' or about='cases_like_these'"
            raise InvalidArgument(f"scope={old!r}: the claim is now given as {hint}")
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
