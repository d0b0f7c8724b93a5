"""The task protocol: what the engine sends a task and what a task gives back.

A :class:`Task` answers one :class:`Prompt` at a time and returns a
:class:`TaskResult` (or a plain answer string). The engine
(:mod:`evalstats.running._engine`), the subprocess harness (:mod:`evalstats.running._command`)
and the model-service providers (:mod:`evalstats.running.providers`) all speak it, and
import it from here: this module imports none of them.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidArgument

__all__ = [
    "CallableTask",
    "Prompt",
    "Task",
    "TaskResult",
    "as_task",
    "check_timeout",
]


# --- what is sent and what comes back ---------------------------------------


@dataclass(frozen=True)
class Prompt:
    """What is sent to a task for one sample.

    ``text`` is the final user message after the variant's transform;
    ``system`` the system prompt, if any; ``messages`` the whole conversation
    in chat form, the system message first if there is one and the user
    message (``text``) last.
    """

    text: str
    system: str | None
    messages: tuple[Mapping[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"system": ..., "messages": [...]}``: the exact prompt, for the record."""
        return {"system": self.system, "messages": [dict(m) for m in self.messages]}


@dataclass(frozen=True)
class TaskResult:
    """What a task returned: the answer and, when it knows them, more facts.

    ``trace`` is anything JSON-ready the task wants kept (a tool-call trace;
    what JSON cannot hold is rewritten visibly, with a note in the record's
    ``recording_notes``: a lone surrogate as its escape, NaN as ``"NaN"``,
    another object as its repr);
    ``tokens`` is ``{"input": n, "output": n}`` (either may be None); ``model``
    is the identity the service reported.
    """

    answer: str | None
    trace: Any = None
    tokens: Mapping[str, int | None] | None = None
    model: str | None = None


@runtime_checkable
class Task(Protocol):
    """Anything that answers prompts for the engine.

    ``describe()`` returns a JSON-ready description for the manifest (kind,
    model, base URL, generation settings; never credentials); ``run`` answers
    one prompt, with ``seed`` derived from the sample (:func:`sample_seed`).

    A task with the class attribute ``wants_case = True`` (the ``cmd:``
    harness, :class:`evalstats.running._command.CmdTask`) is called as ``run(prompt,
    seed=seed, case=case, timeout=timeout)``: it gets the sample's case (for
    its fixtures) and the run's timeout, which it enforces itself (``timeout``
    is left out when the run has none, or was given none and the task has a
    ``timeout`` attribute of its own: the task's default then holds).
    """

    def describe(self) -> dict[str, Any]: ...

    async def run(self, prompt: Prompt, *, seed: int) -> TaskResult | str: ...


def _qualified_name(obj: Any) -> str:
    target = getattr(obj, "func", obj) if not inspect.isroutine(obj) else obj  # a partial
    if not hasattr(target, "__qualname__"):
        target = type(target)  # a callable object: name its class
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or repr(obj)
    return f"{module}.{name}" if module and module != "builtins" else str(name)


def _is_async_callable(obj: Any) -> bool:
    if inspect.iscoroutinefunction(obj):
        return True
    call = getattr(obj, "__call__", None)  # noqa: B004 - a callable object's method
    return call is not None and inspect.iscoroutinefunction(call)


class CallableTask:
    """A plain callable ``f(text) -> str`` (sync or async), seen as a :class:`Task`.

    It receives ``prompt.text`` only: no system prompt, no earlier turns and
    no seed. Made by :func:`as_task`. A sync callable runs in a worker thread
    when the engine has a timeout to enforce (see :func:`run_async`).
    """

    def __init__(self, fn: Callable[[str], Any]) -> None:
        self.fn = fn
        self.is_async = _is_async_callable(fn)
        self.name = _qualified_name(fn)

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "name": self.name}

    async def run(self, prompt: Prompt, *, seed: int) -> TaskResult | str:
        if self.is_async:
            return await self.fn(prompt.text)  # type: ignore[no-any-return]
        result = await asyncio.to_thread(self.fn, prompt.text)
        if inspect.isawaitable(result):
            result = await result
        return result  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"as_task({self.name})"


def as_task(obj: Any) -> Task:
    """Return ``obj`` as a :class:`Task`.

    A :class:`Task` (an object with ``describe()`` and an ``async run(prompt,
    *, seed)``) passes through. A plain callable ``f(text) -> str``, sync or
    async, is wrapped: it is called with the final user message text, and
    described in the manifest as ``{"kind": "python", "name": <qualified
    name>}``. Such a callable cannot receive a system prompt, earlier turns
    of a conversation or the sample's seed, and it keeps whatever state it
    has between samples: give a fresh object per sample through a Task when
    that matters (the stand-ins do).

    Examples
    --------
    >>> task = as_task(str.upper)
    >>> task.describe()
    {'kind': 'python', 'name': 'str.upper'}
    >>> as_task(task) is task
    True
    """
    if hasattr(obj, "run") and hasattr(obj, "describe"):
        if not inspect.iscoroutinefunction(obj.run):
            raise InvalidArgument(
                f"task={obj!r} has a run method that is not async; a Task needs "
                "'async def run(self, prompt, *, seed)'"
            )
        return obj  # type: ignore[no-any-return]
    if callable(obj):
        return CallableTask(obj)
    raise InvalidArgument(f"task={obj!r} is neither a Task nor a callable f(text) -> str")


def check_timeout(timeout: Any) -> float:
    """``timeout`` as a float, if it is a positive, finite number of seconds."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not (math.isfinite(timeout) and timeout > 0)
    ):
        raise InvalidArgument(f"timeout={timeout!r} must be a positive number of seconds")
    return float(timeout)
