"""Tool-call traces: what was requested, what was executed, and required actions.

A tool-using assistant (such as :mod:`evalstats.demo.notes_agent`) writes a trace
file: JSON Lines, one object per line, each with a ``"type"``:

* ``{"type": "start", "question": ..., "model": ..., "workspace_notes": [...],
  "budgets": {...}}`` first;
* ``{"type": "request", "turn": n, "messages": [...], "tools": [...]}`` for
  every model request, ``n = 0, 1, 2, ...``, with the **whole** conversation
  so far, tool results included as ``{"role": "tool", "tool_call_id": ...,
  "name": ..., "content": ..., "error": true | false}`` messages;
* ``{"type": "response", "turn": n, "content": ..., "tool_calls": [{"id",
  "name", "arguments"}], "tokens": ..., "model": ...}`` for every model
  response;
* ``{"type": "final", "answer": ..., "stopped": null | "model_calls" | ...}``
  last.

:func:`read_trace` turns such a file into a :class:`Trace` and keeps two
things apart that are easy to confuse:

* **requested** calls, counted from the response records: what the model
  *asked* for, whether or not it ran;
* **executed** outcomes, recovered *once*, from the latest request's history:
  each tool message matched to the preceding assistant call with the same id,
  in order. Every later request repeats the whole history, so counting tool
  messages across requests would count the same read several times; reading
  only the latest history counts each once. A call that was requested but
  never executed (a budget ran out) has no tool message and no outcome.

A refused call is an outcome with ``error=True``: :func:`required_action`
never takes a refused read for a required successful read.

Nothing is invented. A trace that is missing, cut off, malformed, that answers
a call nobody made, rewrites its history, or has no final record raises
:class:`TraceError` with the reason; the engine then marks the sample
``incomplete`` and fails every check as not inspected, rather than guessing
outcomes from the calls the model generated.

Tasks hand traces to the engine in :attr:`evalstats.running._engine.TaskResult.trace`,
either as a :class:`Trace` or as a dict with a ``"trace_file"`` key (see
:func:`trace_of` for every form the engine accepts).
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._text import canonical_json, clip, short_repr
from .._validate import suggest
from ..errors import EvalStatsError, InvalidArgument
from ._checks import INSPECTION_FAILURE

__all__ = [
    "RECORD_TYPES",
    "ToolCall",
    "ToolOutcome",
    "Trace",
    "TraceError",
    "read_trace",
    "required_action",
    "required_action_from_spec",
    "trace_from_summary",
    "trace_of",
    "trace_summary",
]

#: The record types of a trace file, in the order they may appear.
RECORD_TYPES = ("start", "request", "response", "final")

#: The keys of a required-action spec in a case file.
ACTION_KEYS = ("tool", "path", "error", "or_no_call")


class TraceError(EvalStatsError):
    """A trace that cannot be read: missing, cut off, malformed or incomplete.

    ``missing`` is True when there was no trace file at all (a task that
    writes none), as opposed to a trace that exists and is broken.
    """

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for, in response number ``turn``."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    turn: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", _frozen(self.arguments))

    def __hash__(self) -> int:
        return hash((self.id, self.name, canonical_json(dict(self.arguments)), self.turn))

    def __str__(self) -> str:
        args = ", ".join(
            f"{v!r}" if k == "path" else f"{k}={v!r}" for k, v in self.arguments.items()
        )
        return f"{self.name}({args})"

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "name", "arguments", "turn"}``, JSON-ready."""
        return {
            "id": self.id,
            "name": self.name,
            "arguments": dict(self.arguments),
            "turn": self.turn,
        }


@dataclass(frozen=True)
class ToolOutcome:
    """A call that was executed, with the text it returned and whether it was an error."""

    call: ToolCall
    content: str
    error: bool


@dataclass(frozen=True)
class Trace:
    """What a tool-using assistant did in one sample.

    ``requested`` holds every call of every response, in order; ``executed``
    the calls that ran, each once, with their results; ``answer`` and
    ``stopped`` come from the final record (``stopped`` is None when the
    assistant ended on its own, else the budget or error that stopped it);
    ``turns`` counts the model requests.
    """

    requested: tuple[ToolCall, ...]
    executed: tuple[ToolOutcome, ...]
    answer: str | None
    stopped: str | None
    turns: int

    def reads(self, *, ok: bool = True) -> tuple[str, ...]:
        """Paths of the executed ``read_note`` calls: successful ones, or refused ones.

        Examples
        --------
        >>> call = ToolCall("c1", "read_note", {"path": "notes.txt"}, 0)
        >>> trace = Trace((call,), (ToolOutcome(call, "Project name: Paper Kite", False),),
        ...               "Paper Kite", None, 2)
        >>> trace.reads(), trace.reads(ok=False)
        (('notes.txt',), ())
        """
        return tuple(
            str(o.call.arguments.get("path"))
            for o in self.executed
            if o.call.name == "read_note" and o.error is not ok and "path" in o.call.arguments
        )


# --- reading ----------------------------------------------------------------


def _load_lines(path_or_lines: Any) -> tuple[list[str], str]:
    """The lines of a trace and how to name it in messages."""
    if isinstance(path_or_lines, str | os.PathLike):
        shown = os.fspath(path_or_lines)
        try:
            with open(path_or_lines, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise TraceError(f"no trace: {shown} does not exist", missing=True) from None
        except IsADirectoryError:
            raise TraceError(f"no trace: {shown} is a directory", missing=True) from None
        except OSError as exc:
            raise TraceError(f"trace {shown} cannot be read: {exc.strerror or exc}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceError(f"trace {shown} is not UTF-8 text (byte {exc.start})") from None
        return split_records(text), f"trace {shown}"
    if isinstance(path_or_lines, bytes):
        raise InvalidArgument("path_or_lines must be a path or lines of text, not bytes")
    try:
        lines = list(path_or_lines)
    except TypeError:
        raise InvalidArgument(
            f"path_or_lines={path_or_lines!r} must be a path or an iterable of lines"
        ) from None
    for i, line in enumerate(lines):
        if not isinstance(line, str):
            raise InvalidArgument(f"path_or_lines[{i}]={line!r} must be a string")
    return lines, "trace"


def _need(record: Mapping[str, Any], key: str, kind: type, what: str, where: str) -> Any:
    if key not in record:
        raise TraceError(f"{where}: the {record['type']} record has no {key!r}")
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, kind):  # true is no turn number
        raise TraceError(f"{where}: {key}={short_repr(value)} must be {what}")
    return value


def _call(raw: Any, turn: int, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise TraceError(f"{where}: a tool call must be an object, not {short_repr(raw)}")
    for key in ("id", "name"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise TraceError(
                f"{where}: a tool call's {key}={short_repr(raw.get(key))} "
                "must be a non-empty string"
            )
    arguments = raw.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise TraceError(
            f"{where}: the arguments of tool call {raw['id']!r} must be an object, "
            f"not {short_repr(arguments)}"
        )
    return ToolCall(raw["id"], raw["name"], arguments, turn)


def _parse(lines: list[str], shown: str) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` pairs; blank lines are skipped."""
    records: list[tuple[int, dict[str, Any]]] = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"{shown}, line {i + 1}"
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            if i == last and not line.endswith("\n"):
                raise TraceError(
                    f"{shown} is truncated: its last line (line {i + 1}) is cut off"
                ) from None
            msg = getattr(exc, "msg", type(exc).__name__)
            raise TraceError(f"{where}: malformed record: not valid JSON ({msg})") from None
        if not isinstance(record, dict):
            raise TraceError(f"{where}: malformed record: a record must be a JSON object")
        kind = record.get("type")
        if kind not in RECORD_TYPES:
            raise TraceError(
                f"{where}: malformed record: unknown type {short_repr(kind)}"
                f"{suggest(str(kind), RECORD_TYPES)}; expected one of {', '.join(RECORD_TYPES)}"
            )
        records.append((i + 1, record))
    return records


def _executed(
    messages: list[Any], requested: tuple[ToolCall, ...], where: str
) -> tuple[ToolOutcome, ...]:
    """Match each tool message of one history to the preceding assistant call with its id."""
    # The turn of a call in the history is the turn of the response that
    # requested it: the requested calls with that id, taken in order.
    turns: dict[str, deque[int]] = {}
    for call in requested:
        turns.setdefault(call.id, deque()).append(call.turn)
    pending: dict[str, deque[ToolCall]] = {}
    out: list[ToolOutcome] = []
    for j, message in enumerate(messages):
        at = f"{where}: messages[{j}]"
        if not isinstance(message, Mapping):
            raise TraceError(f"{at}: a message must be an object, not {short_repr(message)}")
        role = message.get("role")
        if role == "assistant":
            raw_calls = message.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise TraceError(f"{at}: tool_calls must be a list, not {short_repr(raw_calls)}")
            for raw in raw_calls:
                call = _call(raw, -1, at)
                queue = turns.get(call.id)
                if not queue:
                    raise TraceError(
                        f"{at}: the history holds a call {call.id!r} ({call}) that no "
                        "response requested"
                    )
                call = ToolCall(call.id, call.name, call.arguments, queue.popleft())
                pending.setdefault(call.id, deque()).append(call)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            waiting = pending.get(call_id) if isinstance(call_id, str) else None
            if not waiting:
                raise TraceError(
                    f"{at}: a tool message answers tool_call_id={short_repr(call_id)}, which "
                    "no earlier assistant call is waiting for"
                )
            call = waiting.popleft()
            content = message.get("content")
            if not isinstance(content, str):
                raise TraceError(
                    f"{at}: the result of call {call_id!r} has "
                    f"content={short_repr(content)}, not text"
                )
            error = message.get("error")
            if not isinstance(error, bool):
                raise TraceError(
                    f"{at}: the result of call {call_id!r} has error={short_repr(error)}; a "
                    "trace must say whether each result was an error (true or false)"
                )
            name = message.get("name")
            if name is not None and name != call.name:
                raise TraceError(
                    f"{at}: the result of call {call_id!r} names tool {name!r}, but the "
                    f"call was to {call.name!r}"
                )
            out.append(ToolOutcome(call, content, error))
    return tuple(out)


def split_records(text: str) -> list[str]:
    """A trace file's text as lines, each complete one ending in ``"\\n"``.

    Records end at ``"\\n"`` only: :meth:`str.splitlines` would also split
    inside a record at U+2028 and the other line breaks that JSON may carry
    unescaped. A last line without its newline is kept as it is, so that
    :func:`read_trace` can tell it was cut off.
    """
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def read_trace(path_or_lines: str | os.PathLike[str] | Iterable[str]) -> Trace:
    """Read a trace file (or its lines) into a :class:`Trace`.

    Requested calls come from the response records, in order. Executed
    outcomes come from the **latest** request's history only: each
    ``role: "tool"`` message is matched to the earliest still-unanswered
    assistant call with that ``tool_call_id`` before it, so a result is
    counted once however many later requests repeat it. Each request's
    history must extend the one before it (the file records the whole
    conversation), so the latest history holds every result.

    Parameters
    ----------
    path_or_lines : path or iterable of str
        A trace file, or its lines (with or without their newlines).

    Returns
    -------
    Trace

    Raises
    ------
    TraceError
        With the reason: no such file (``missing=True``); a cut-off last line
        (truncated); a record that is not JSON, not an object, of an unknown
        type or lacking a field (malformed); requests out of order or a
        history that is rewritten; a tool message that answers no call; a
        call in the history that no response requested; a record after the
        final one; no final record.

    Examples
    --------
    >>> import json
    >>> call = {"id": "c1", "name": "read_note", "arguments": {"path": "notes.txt"}}
    >>> question = {"role": "user", "content": "What is the project called?"}
    >>> result = {"role": "tool", "tool_call_id": "c1", "name": "read_note",
    ...           "content": "Project name: Paper Kite", "error": False}
    >>> records = [
    ...     {"type": "start", "question": question["content"], "model": "notes",
    ...      "workspace_notes": ["notes.txt"], "budgets": {}},
    ...     {"type": "request", "turn": 0, "messages": [question], "tools": ["read_note"]},
    ...     {"type": "response", "turn": 0, "content": None, "tool_calls": [call]},
    ...     {"type": "request", "turn": 1, "tools": ["read_note"], "messages": [
    ...         question, {"role": "assistant", "content": None, "tool_calls": [call]}, result]},
    ...     {"type": "response", "turn": 1, "content": "Paper Kite.", "tool_calls": []},
    ...     {"type": "final", "answer": "Paper Kite.", "stopped": None},
    ... ]
    >>> lines = [json.dumps(r) for r in records]
    >>> trace = read_trace(lines)
    >>> len(trace.requested), trace.reads(), trace.answer, trace.turns
    (1, ('notes.txt',), 'Paper Kite.', 2)
    >>> read_trace(lines[:-1])
    Traceback (most recent call last):
    ...
    evalstats.running._traces.TraceError: trace has no final record: the assistant did not finish
    """
    lines, shown = _load_lines(path_or_lines)
    records = _parse(lines, shown)
    _check_start(records, shown)
    walk = _TraceWalk(shown)
    for number, record in records[1:]:
        walk.take(number, record)
    return walk.trace()


def _check_start(records: list[tuple[int, dict[str, Any]]], shown: str) -> None:
    """A trace has records, and the first is the ``start`` record."""
    if not records:
        raise TraceError(f"{shown} is empty: no records")
    first_line, first = records[0]
    if first["type"] != "start":
        raise TraceError(
            f"{shown}, line {first_line}: malformed record: the first record is a "
            f"{first['type']!r} record, not the 'start' record"
        )


class _TraceWalk:
    """The records after ``start``, taken in order: requests, responses, the final record."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.requested: list[ToolCall] = []
        self.latest: list[Any] = []
        self.latest_where = shown
        self.requests = 0
        self.answered = True  # whether the latest request has its response
        self.final: dict[str, Any] | None = None

    def take(self, number: int, record: dict[str, Any]) -> None:
        where = f"{self.shown}, line {number}"
        kind = record["type"]
        if self.final is not None:
            raise TraceError(f"{where}: malformed trace: a {kind!r} record after the final record")
        if kind == "start":
            raise TraceError(f"{where}: malformed trace: a second 'start' record")
        if kind == "request":
            self._request(record, where)
        elif kind == "response":
            self._response(record, where)
        else:
            self._final(record, where)

    def _request(self, record: dict[str, Any], where: str) -> None:
        turn = _need(record, "turn", int, "a whole number", where)
        if turn != self.requests:
            raise TraceError(
                f"{where}: malformed trace: request turn={turn}, expected turn={self.requests}"
            )
        messages = _need(record, "messages", list, "a list of messages", where)
        if messages[: len(self.latest)] != self.latest:
            raise TraceError(
                f"{where}: malformed trace: request turn={turn} does not repeat the "
                "history of the request before it"
            )
        self.latest, self.latest_where = messages, where
        self.requests += 1
        self.answered = False

    def _response(self, record: dict[str, Any], where: str) -> None:
        turn = _need(record, "turn", int, "a whole number", where)
        if self.answered or turn != self.requests - 1:
            raise TraceError(
                f"{where}: malformed trace: a response for turn={turn} with no request "
                "waiting for it"
            )
        content = record.get("content")
        if content is not None and not isinstance(content, str):
            raise TraceError(f"{where}: content={short_repr(content)} must be text or null")
        raw_calls = record.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise TraceError(f"{where}: tool_calls={short_repr(raw_calls)} must be a list")
        self.requested.extend(_call(raw, turn, where) for raw in raw_calls)
        self.answered = True

    def _final(self, record: dict[str, Any], where: str) -> None:
        answer = record.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise TraceError(f"{where}: answer={short_repr(answer)} must be text or null")
        stopped = record.get("stopped")
        if stopped is not None and not isinstance(stopped, str):
            raise TraceError(f"{where}: stopped={short_repr(stopped)} must be text or null")
        self.final = record

    def trace(self) -> Trace:
        """The trace, once every record is taken; a trace must end with its final record."""
        final = self.final
        if final is None:
            raise TraceError(f"{self.shown} has no final record: the assistant did not finish")
        requested = tuple(self.requested)
        executed = _executed(self.latest, requested, self.latest_where)
        return Trace(requested, executed, final.get("answer"), final.get("stopped"), self.requests)


# --- summaries and the forms tasks hand over --------------------------------


def trace_summary(trace: Trace) -> dict[str, Any]:
    """The JSON summary of a trace kept in a sample record.

    ``{"requested": [{"id", "name", "arguments", "turn"}], "executed":
    [{"id", "name", "arguments", "turn", "error", "content"}], "answer",
    "stopped", "turns"}``, in order. :func:`trace_from_summary` reads it
    back, so required actions can be scored again from a results file.

    Examples
    --------
    >>> call = ToolCall("c1", "read_note", {"path": "../private.txt"}, 0)
    >>> trace = Trace((call,), (ToolOutcome(call, "refused: '..' is not allowed", True),),
    ...               "I could not read it.", None, 2)
    >>> trace_summary(trace)["executed"][0]["error"]
    True
    >>> trace_from_summary(trace_summary(trace)) == trace
    True
    """
    return {
        "requested": [c.to_dict() for c in trace.requested],
        "executed": [
            {**o.call.to_dict(), "error": o.error, "content": o.content} for o in trace.executed
        ],
        "answer": trace.answer,
        "stopped": trace.stopped,
        "turns": trace.turns,
    }


def trace_from_summary(summary: Mapping[str, Any]) -> Trace:
    """The :class:`Trace` a :func:`trace_summary` describes.

    Raises
    ------
    TraceError
        When ``summary`` is not such a summary.
    """
    try:
        requested = tuple(
            ToolCall(c["id"], c["name"], c["arguments"], int(c["turn"]))
            for c in summary["requested"]
        )
        executed = tuple(
            ToolOutcome(
                ToolCall(o["id"], o["name"], o["arguments"], int(o["turn"])),
                str(o["content"]),
                bool(o["error"]),
            )
            for o in summary["executed"]
        )
        return Trace(
            requested,
            executed,
            summary.get("answer"),
            summary.get("stopped"),
            int(summary.get("turns", 0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise TraceError(f"not a trace summary: {type(exc).__name__}: {exc}") from None


def trace_of(value: Any) -> Trace | TraceError | None:
    """The trace a task handed over in ``TaskResult.trace``, or why it cannot be read.

    Accepted forms, tried in this order:

    * a :class:`Trace`;
    * a mapping with a :class:`Trace` value (under any key, such as
      ``"trace"``), or a :class:`TraceError` value (the task already tried
      and failed to read it);
    * a mapping with ``"trace_error"``: the reason, as text;
    * a mapping holding a :func:`trace_summary` (its keys merged in, or under
      ``"summary"``);
    * a mapping with ``"trace_file"``: the file is read with :func:`read_trace`.

    Returns None when ``value`` holds no trace at all; never raises for a
    broken trace, but returns the :class:`TraceError`.

    Examples
    --------
    >>> trace_of(None) is None
    True
    >>> trace_of({"trace_error": "the trace file was cut at 1 MiB"})
    TraceError('the trace file was cut at 1 MiB')
    """
    if isinstance(value, Trace):
        return value
    if not isinstance(value, Mapping):
        return None
    for item in value.values():
        if isinstance(item, Trace | TraceError):
            return item
    error = value.get("trace_error")
    if isinstance(error, str) and error:
        return TraceError(error)
    for summary in (value, value.get("summary")):
        if isinstance(summary, Mapping) and "requested" in summary and "executed" in summary:
            try:
                return trace_from_summary(summary)
            except TraceError as exc:
                return exc
    path = value.get("trace_file")
    if isinstance(path, str | os.PathLike):
        try:
            return read_trace(path)
        except TraceError as exc:
            return exc
    return None


# --- required actions ---------------------------------------------------------


class RequiredAction:
    """A check that a tool ran with a path and an error flag: see :func:`required_action`."""

    needs_trace = True

    def __init__(self, tool: str, path: str | None, error: bool, or_no_call: bool) -> None:
        self.tool = tool
        self.path = path
        self.error = error
        self.or_no_call = or_no_call
        args = [repr(tool)]
        if path is not None:
            args.append(repr(path))
        if error:
            args.append("error=True")
        if or_no_call:
            args.append("or_no_call=True")
        self.name = f"required_action({', '.join(args)})"
        self.__name__ = self.name

    def __repr__(self) -> str:
        return self.name

    def _wanted(self, call: ToolCall) -> bool:
        if call.name != self.tool:
            return False
        return self.path is None or call.arguments.get("path") == self.path

    def __call__(self, trace: Any) -> str | None:
        if not isinstance(trace, Trace):
            return (
                f"{INSPECTION_FAILURE}: {self.name} needs the tool-call trace, and was "
                f"given {type(trace).__name__}"
            )
        what = f"{self.tool}({self.path!r})" if self.path is not None else self.tool
        outcomes = [o for o in trace.executed if self._wanted(o.call)]
        if any(o.error is self.error for o in outcomes):
            return None
        requested = [c for c in trace.requested if self._wanted(c)]
        if self.or_no_call and not requested:
            return None
        if not requested:
            return f"{what} was never called"
        if not outcomes:
            n = len(requested)
            return f"{what} was requested {_times(n)} but never executed"
        if self.error:
            return f"{what} was executed and not refused"
        lines = outcomes[0].content.strip().splitlines()
        return f"{what} was refused: {clip(lines[0], 80)}" if lines else f"{what} was refused"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def required_action(
    tool: str, path: str | None = None, error: bool = False, *, or_no_call: bool = False
) -> RequiredAction:
    """A check that the trace holds an executed call to ``tool`` with that result.

    Passes when an **executed** outcome (not merely a requested call) has the
    tool name ``tool``, the ``path`` argument ``path`` (when given; compared
    exactly) and the error flag ``error``. A refused read never satisfies a
    required successful read, and a successful read never satisfies a
    required refusal. With ``or_no_call=True`` (for cases where declining
    without trying is also right, such as a request to read
    ``../private.txt``) the check also passes when no call to ``tool`` with
    that path was requested at all.

    The check has ``needs_trace = True``: the engine calls it with the
    sample's :class:`Trace` instead of the answer.

    Parameters
    ----------
    tool : str
        The tool's name, such as ``"read_note"``.
    path : str, optional
        The ``path`` argument the call must have.
    error : bool, optional
        Whether the outcome must be an error (a refusal); default False.
    or_no_call : bool, optional
        Also pass when no such call was requested.

    Returns
    -------
    callable
        ``check(trace) -> None | str``.

    Examples
    --------
    >>> call = ToolCall("c1", "read_note", {"path": "../private.txt"}, 0)
    >>> refused = Trace((call,), (ToolOutcome(call, "refused: '..' is not allowed", True),),
    ...                 "I could not read it.", None, 2)
    >>> required_action("read_note", "../private.txt")(refused)
    "read_note('../private.txt') was refused: refused: '..' is not allowed"
    >>> required_action("read_note", "../private.txt", error=True)(refused) is None
    True
    >>> nothing = Trace((), (), "I will not read that.", None, 1)
    >>> required_action("read_note", "../private.txt", error=True, or_no_call=True)(nothing) is None
    True
    """
    if not isinstance(tool, str) or not tool.strip():
        raise InvalidArgument(f"tool={tool!r} must be a tool's name, such as 'read_note'")
    if path is not None and (not isinstance(path, str) or not path):
        raise InvalidArgument(f"path={path!r} must be a non-empty string or None")
    if not isinstance(error, bool):
        raise InvalidArgument(f"error={error!r} must be true or false")
    if not isinstance(or_no_call, bool):
        raise InvalidArgument(f"or_no_call={or_no_call!r} must be true or false")
    return RequiredAction(tool, path, error, or_no_call)


def required_action_from_spec(spec: Mapping[str, Any]) -> RequiredAction:
    """A :func:`required_action` check from its case-file form.

    Parameters
    ----------
    spec : mapping
        ``{"tool": "read_note", "path": "notes.txt"}``, or with ``"error":
        true`` and ``"or_no_call": true``.

    Raises
    ------
    InvalidArgument
        For an unknown key (with the closest known one), a missing ``tool``
        or a value of the wrong kind.

    Examples
    --------
    >>> required_action_from_spec({"tool": "read_note", "path": "notes.txt"})
    required_action('read_note', 'notes.txt')
    >>> required_action_from_spec({"tool": "read_note", "pth": "notes.txt"})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: unknown key 'pth' (did you mean 'path'?); keys are ...
    """
    if not isinstance(spec, Mapping):
        raise InvalidArgument(
            f"a required action must be a mapping like {{'tool': 'read_note', 'path': "
            f"'notes.txt'}}, not {short_repr(spec)}"
        )
    for key in spec:
        if key not in ACTION_KEYS:
            raise InvalidArgument(
                f"unknown key {key!r}{suggest(str(key), ACTION_KEYS)}; keys are "
                f"{', '.join(ACTION_KEYS)}"
            )
    if "tool" not in spec:
        raise InvalidArgument("'tool' is missing: name the tool, such as 'read_note'")
    return required_action(
        spec["tool"],
        spec.get("path"),
        spec.get("error", False),
        or_no_call=spec.get("or_no_call", False),
    )
