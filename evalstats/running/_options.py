"""The engine's options that travel together, each a small frozen object.

:func:`~evalstats.run`, :func:`~evalstats.running._engine.run_async` and
``run --until-decided`` take them alike, checked once, in each object's
constructor (as ``httpx.Timeout`` and ``httpx.Limits`` are):

* :class:`Selection`: which cases of the suite run;
* :class:`Retries`: how transient failures are retried, and when the service
  is taken to be down;
* :class:`Limits`: how many samples are in flight and how long each may take.

The engine also takes their fields as keywords (``concurrency=8``), the
way httpx takes ``timeout=5.0`` for ``Timeout(5.0)``; :func:`gather` turns
either form into the three objects.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._validate import whole_number
from ..errors import InvalidArgument
from ._tasks import check_timeout

__all__ = ["DEFAULT_TIMEOUT_S", "HTTP_CONCURRENCY", "Limits", "Retries", "Selection", "gather"]


class _DefaultTimeout(float):
    """The timeout a run uses when it is given none: 60 s per attempt.

    A float, so it reads and records as 60.0, that also says it was not
    chosen: a harness task (``cmd:``) then keeps its own default (130 s, a
    whole assistant session rather than one model request), while a timeout
    given on purpose, even 60, applies to every task.
    """

    __slots__ = ()


#: Seconds each attempt may take when no timeout is given.
DEFAULT_TIMEOUT_S = _DefaultTimeout(60.0)

#: Samples in flight when none is chosen and a variant's task is a model service
#: over HTTP: what a local server and the hosted APIs take (their 429s are
#: retried as any transient error); 40 calls at 200 ms take 2 s instead of 9.
HTTP_CONCURRENCY = 8


def _texts(name: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidArgument(f"{name}={value!r} must be a list of texts")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise InvalidArgument(f"{name}[{i}]={item!r} must be a non-empty text")
    return tuple(value)


@dataclass(frozen=True)
class Selection:
    """Which cases of the suite run.

    ``case_ids`` are shell-style patterns of case ids, ``tags`` the tags a
    case may carry (a case runs when it matches any), ``limit`` keeps the
    first that many, and ``include_holdout`` adds the cases marked
    ``holdout``. See :meth:`~evalstats.Suite.select`. ``shard``, ``(index,
    count)`` with ``1 <= index <= count``, then keeps one of ``count``
    shares of those cases (see :func:`~evalstats.running._shards.shard_cases`).
    """

    case_ids: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    limit: int | None = None
    include_holdout: bool = False
    shard: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "case_ids", _texts("case_ids", self.case_ids))
        object.__setattr__(self, "tags", _texts("tags", self.tags))
        if self.limit is not None:
            object.__setattr__(self, "limit", whole_number("limit", self.limit))
        if not isinstance(self.include_holdout, bool):
            raise InvalidArgument(f"include_holdout={self.include_holdout!r} must be True or False")
        if self.shard is not None:
            from ._shards import check_shard

            object.__setattr__(self, "shard", check_shard(self.shard))

    def record(self) -> dict[str, Any]:
        """What the manifest records under ``"selection"``: only the parts given (the
        shard is recorded apart, under the manifest's ``"shard"``)."""
        parts = (("cases", self.case_ids), ("tags", self.tags), ("limit", self.limit))
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in parts if v is not None}


@dataclass(frozen=True)
class Retries:
    """How transient failures are retried.

    ``count`` retries of a transient failure (at most ``count + 1``
    attempts), waiting by exponential backoff with full jitter from
    ``backoff`` seconds; after ``stop_after_unmeasured`` unmeasured samples in
    a row the service is taken to be down and the run stops (None: never).
    """

    count: int = 3
    backoff: float = 0.5
    stop_after_unmeasured: int | None = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", whole_number("retries", self.count, minimum=0))
        b = self.backoff
        if (
            isinstance(b, bool)
            or not isinstance(b, int | float)
            or not (math.isfinite(b) and b >= 0)
        ):
            raise InvalidArgument(f"backoff={b!r} must be a number of seconds, 0 or more")
        object.__setattr__(self, "backoff", float(b))
        if self.stop_after_unmeasured is not None:
            object.__setattr__(
                self,
                "stop_after_unmeasured",
                whole_number("stop_after_unmeasured", self.stop_after_unmeasured),
            )


@dataclass(frozen=True)
class Limits:
    """How many samples are in flight at once, and how long each attempt may take.

    ``concurrency`` None (the default) is :data:`HTTP_CONCURRENCY` (8) when a
    variant's task is a model service over HTTP, and 1 otherwise (Python
    callables, ``cmd:`` commands and the stand-ins, one after the other).
    ``timeout`` is in seconds (None: no limit, and a plain sync callable
    runs in the event loop's thread); by default 60 s, and a ``cmd:`` task
    then keeps its own default.
    """

    concurrency: int | None = None
    timeout: float | None = DEFAULT_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.concurrency is not None:
            object.__setattr__(self, "concurrency", whole_number("concurrency", self.concurrency))
        if self.timeout is not None and not isinstance(self.timeout, _DefaultTimeout):
            object.__setattr__(self, "timeout", check_timeout(self.timeout))

    def concurrency_for(self, tasks: Iterable[Any]) -> int:
        """The samples in flight for a run of ``tasks``: the one chosen, or the default."""
        if self.concurrency is not None:
            return self.concurrency
        from .providers._base import Provider

        return HTTP_CONCURRENCY if any(isinstance(t, Provider) for t in tasks) else 1


_SHORTHAND = {
    "case_ids": (Selection, "case_ids"),
    "tags": (Selection, "tags"),
    "limit": (Selection, "limit"),
    "include_holdout": (Selection, "include_holdout"),
    "shard": (Selection, "shard"),
    "backoff": (Retries, "backoff"),
    "stop_after_unmeasured": (Retries, "stop_after_unmeasured"),
    "concurrency": (Limits, "concurrency"),
    "timeout": (Limits, "timeout"),
}


def gather(
    selection: Selection | None,
    retries: Retries | int,
    limits: Limits | None,
    shorthand: Mapping[str, Any],
) -> tuple[Selection, Retries, Limits]:
    """The three option objects, from the objects given and their fields given as keywords.

    ``retries`` may be the number of retries; a keyword that is not a field
    is refused, naming the closest, and so is a field given both ways.
    """
    unknown = sorted(set(shorthand) - set(_SHORTHAND))
    if unknown:
        from .._validate import suggest

        raise InvalidArgument(
            f"{unknown[0]}= is not an option of a run{suggest(unknown[0], _SHORTHAND)}"
        )
    given = {Selection: selection, Limits: limits}
    made: dict[type, Any] = {}
    for cls in (Selection, Limits):
        mine = {f: shorthand[k] for k, (c, f) in _SHORTHAND.items() if c is cls and k in shorthand}
        base = given[cls]
        if base is not None and mine:
            raise InvalidArgument(
                f"{', '.join(f'{k}=' for k in mine)} and {cls.__name__.lower()}= both given; "
                f"give one of them"
            )
        made[cls] = base if base is not None else cls(**mine)
    mine = {f: shorthand[k] for k, (c, f) in _SHORTHAND.items() if c is Retries and k in shorthand}
    if isinstance(retries, Retries):
        if mine:
            raise InvalidArgument(
                f"{', '.join(f'{k}=' for k in mine)} and retries=Retries(...) both given; "
                "give one of them"
            )
        made[Retries] = retries
    else:
        made[Retries] = Retries(retries, **mine)
    for cls in (Selection, Retries, Limits):
        if not isinstance(made[cls], cls):
            name = cls.__name__.lower()
            raise InvalidArgument(f"{name}={made[cls]!r} must be a {cls.__name__}")
    return made[Selection], made[Retries], made[Limits]
