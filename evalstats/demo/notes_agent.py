"""The notes assistant: answers a question from the notes in a workspace, with tools.

Run it as::

    python -m evalstats.demo.notes_agent --workspace DIR --model TASK --trace FILE \\
        [--base-url URL] [--seed N] [--max-model-calls 8] [--max-tool-calls 8] \\
        [--max-bytes 65536] [--deadline-s 60] "question"

``TASK`` is a provider task name (``openai:notes``, ``ollama:qwen3:0.6b``);
``--base-url`` moves the provider's host, and the per-request seed is
``--seed`` or else the ``EVALSTATS_SEED`` environment variable (the same seed
for every request of one run).

The model gets three tools: ``list_notes()`` (the paths in the workspace's
``NOTES`` index, one per line), ``read_note(path)`` and ``propose_note(path,
text)``. :class:`NotesDispatcher` runs them locally and refuses, each with
its own message the model sees: ``..`` in a path, absolute paths, notes not
listed in ``NOTES``, links that leave the workspace or lead to an unlisted
file, files with more than one hard link, listed notes that are missing, and
files that are not text (NUL bytes, not UTF-8). Every path is opened
relative to a descriptor of the workspace, one component at a time with
``O_NOFOLLOW`` (a link inside the workspace is read and its target walked
again from the root), so another process that swaps a folder for a link
while a call runs cannot lead a read or a write outside; such a race ends in
a refusal, never an exception. A proposal is written only after approval of that exact path and
text (on stdin, ``approve? [y/N]``; at end of input it is refused and nothing
is written), and only as a new file (created exclusively).

The loop sends the conversation and tool definitions, runs every structured
tool call the model made, appends the calls and results, and asks again,
until the model answers without calling a tool or a budget runs out: model
calls, tool calls, bytes read or the deadline. Budgets are checked before a
round of calls runs, so every call that ran has its result in a later
request; a round that does not fit is not run. When the deadline passes
while a round runs (a slow approval), the results still go into a last
request record, which is not sent. The last content the model
sent is the answer, printed on stdout.

The trace (JSONL, flushed after each record) holds a ``start`` record, one
``request`` record per model request (the full history in evalstats' neutral
form, tool results with an ``error`` flag), one ``response`` record per
response and a ``final`` record with the answer and why it stopped (None, a
budget name, or ``"error: ..."``). Each request record holds the whole
history, so a trace grows with turns times bytes read; the default budgets
(8 model calls, 64 KiB read) keep a trace of text notes under the 1 MiB the
``cmd:`` harness reads.

Exit codes: 0 when it ended (a budget stop included: the trace says so),
2 for bad arguments or an unusable workspace, 3 when the model service
failed, 75 (``EX_TEMPFAIL``) when it failed in a way a retry may cure (a
timeout, 429 or 5xx), so a harness can tell the two apart.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import os
import posixpath
import re
import stat
import sys
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .._terminal import visible
from ..errors import EvalStatsError, ProviderError, TransientProviderError
from ..results._recordable import NOTES_KEY, recordable, recordable_text
from ..running._workspace import INDEX_NAME

__all__ = [
    "EXIT_BAD_ARGUMENTS",
    "EXIT_PROVIDER_ERROR",
    "EXIT_TRANSIENT",
    "INDEX_NAME",
    "SYSTEM_PROMPT",
    "TOOLS",
    "Budgets",
    "NotesDispatcher",
    "NotesRun",
    "Proposal",
    "ToolResult",
    "main",
    "run_notes",
]

EXIT_BAD_ARGUMENTS = 2
EXIT_PROVIDER_ERROR = 3
#: ``EX_TEMPFAIL`` from sysexits.h: the service failed in a way a retry may cure.
EXIT_TRANSIENT = 75

SYSTEM_PROMPT = (
    "You answer questions about the user's notes. Tools: list_notes() lists the notes "
    "you may read; read_note(path) returns the text of one of them; propose_note(path, "
    "text) proposes a new note, which the user must approve before it is saved. Answer "
    "from what the notes say. If a note could not be read, say so and why."
)

TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "list_notes",
        "description": "List the notes you may read, one path per line.",
        "parameters": {"type": "object", "properties": {}},
    },
    {
        "name": "read_note",
        "description": "Read one note, by a path that list_notes gives.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "the note's path"}},
            "required": ["path"],
        },
    },
    {
        "name": "propose_note",
        "description": "Propose a new note; it is saved only if the user approves.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "the new note's path"},
                "text": {"type": "string", "description": "the new note's text"},
            },
            "required": ["path", "text"],
        },
    },
)


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave back: the text the model sees, whether it was
    refused or failed, and how many bytes of notes it read."""

    content: str
    error: bool
    bytes_read: int = 0


@dataclass(frozen=True)
class Proposal:
    """One proposed note, exactly as it would be written."""

    path: str
    text: str


class _Refused(Exception):
    pass


def ask_on_stdin(
    proposal: Proposal, *, stdin: TextIO | None = None, stderr: TextIO | None = None
) -> bool:
    """Show ``proposal`` on stderr and read ``y``/``yes`` from stdin; end of input is no.

    The path and text are the model's: shown raw, they could erase lines, move
    the cursor, hide text (``ESC[8m``) or print a fake path while a person
    decides. So every control character, escape sequence and bidirectional
    override is written as its escape, and each line of the text is indented
    behind a bar: nothing the model wrote starts at column 0 or looks like
    this prompt's own lines.

    >>> import io
    >>> err = io.StringIO()
    >>> ask_on_stdin(Proposal("a.txt", "hi\\x1b[2A\\rpath: 'safe.txt'"),
    ...              stdin=io.StringIO("n\\n"), stderr=err)
    False
    >>> print(err.getvalue().rstrip())
    The assistant proposes a new note.
    path: 'a.txt'
    text (23 characters; controls shown as escapes):
      | hi\\x1b[2A\\rpath: 'safe.txt'
    approve? [y/N]
    """
    stdin = sys.stdin if stdin is None else stdin
    stderr = sys.stderr if stderr is None else stderr
    lines = "".join(f"  | {visible(line, keep='')}\n" for line in proposal.text.split("\n"))
    stderr.write(
        "The assistant proposes a new note.\n"
        f"path: {visible(repr(proposal.path), keep='')}\n"
        f"text ({len(proposal.text)} characters; controls shown as escapes):\n"
        f"{lines}approve? [y/N] "
    )
    stderr.flush()
    try:
        line = stdin.readline()
    except (OSError, ValueError):  # closed or unreadable stdin: no approval
        return False
    return line.strip().lower() in ("y", "yes")


class NotesDispatcher:
    """Runs the notes tools inside one workspace, refusing everything not allowed.

    Parameters
    ----------
    workspace : path
        The workspace root; its ``NOTES`` file lists the readable notes.
    approve : callable, optional
        ``approve(Proposal) -> bool``, asked once for every proposal; the
        default asks on stdin (:func:`ask_on_stdin`). Only the proposal it
        approved is written, and a different path or text is a different
        proposal that needs its own approval.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "NOTES").write_text("notes.txt\\n")
    >>> _ = (root / "notes.txt").write_text("Project name: Paper Kite\\n")
    >>> d = NotesDispatcher(root, approve=lambda proposal: False)
    >>> d.dispatch("read_note", {"path": "notes.txt"})
    ToolResult(content='Project name: Paper Kite\\n', error=False, bytes_read=25)
    >>> d.dispatch("read_note", {"path": "../private.txt"}).content
    "refused: '..' is not allowed in a note path"
    >>> import shutil; shutil.rmtree(root)
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        approve: Callable[[Proposal], bool] | None = None,
    ) -> None:
        root = Path(workspace)
        if not root.is_dir():
            raise EvalStatsError(f"workspace={str(workspace)!r} is not a folder")
        self.root = Path(os.path.realpath(root))
        self.approve = approve if approve is not None else ask_on_stdin
        # Every path is opened relative to this descriptor of the workspace,
        # one component at a time and without following links, so swapping a
        # folder for a link while a call runs cannot lead outside.
        try:
            self._root_fd = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise EvalStatsError(
                f"workspace={str(workspace)!r} cannot be opened: {exc.strerror}"
            ) from None
        self._closer = weakref.finalize(self, os.close, self._root_fd)
        self._roots = {str(self.root), os.path.abspath(root)}

    def close(self) -> None:
        """Close the workspace's descriptor (garbage collection does it too)."""
        self._closer()

    # -- the index

    def listed(self) -> tuple[str, ...]:
        """The note paths in ``NOTES``, normalised, in order; () when there is no index.

        ``NOTES`` must be a regular file with a single link, read from the
        workspace itself (not through a link); at most 1 MiB of it is read.
        """
        try:
            fd = os.open(INDEX_NAME, _READ_FLAGS, dir_fd=self._root_fd)
        except OSError:
            return ()
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                return ()
            data = os.read(fd, _INDEX_CAP)
        except OSError:
            return ()
        finally:
            os.close(fd)
        out: list[str] = []
        for line in data.decode("utf-8", errors="replace").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                path = posixpath.normpath(line)
                if path not in out:
                    out.append(path)
        return tuple(out)

    # -- the tools

    def dispatch(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the tool ``name`` with ``arguments``; never raises for a bad call.

        A file system that changes under a call (a folder swapped for a
        link, a file removed) gives a refusal, never an exception.
        """
        if "_unparsed" in arguments:
            return ToolResult(
                f"refused: the arguments of {name} were not a JSON object", error=True
            )
        try:
            if name == "list_notes":
                return self.list_notes()
            if name == "read_note":
                unknown = set(arguments) - {"path"}
                if unknown:
                    raise _Refused(f"read_note takes only a path, not {sorted(unknown)[0]!r}")
                return self.read_note(arguments.get("path"))
            if name == "propose_note":
                unknown = set(arguments) - {"path", "text"}
                if unknown:
                    raise _Refused(
                        f"propose_note takes a path and a text, not {sorted(unknown)[0]!r}"
                    )
                return self.propose_note(arguments.get("path"), arguments.get("text"))
        except _Refused as refusal:
            return ToolResult(f"refused: {refusal}", error=True)
        except (OSError, ValueError) as exc:  # a race the checks did not foresee
            why = getattr(exc, "strerror", None) or str(exc)
            return ToolResult(
                f"refused: the workspace changed while {name} ran ({why})", error=True
            )
        names = ", ".join(t["name"] for t in TOOLS)
        return ToolResult(f"refused: there is no tool {name!r}; the tools are {names}", error=True)

    def list_notes(self) -> ToolResult:
        """The listed note paths, one per line."""
        listed = self.listed()
        if not listed:
            return ToolResult("there are no notes", error=False)
        return ToolResult("\n".join(listed), error=False)

    def read_note(self, path: Any) -> ToolResult:
        """The text of a listed note, or the reason it cannot be read.

        ``bytes_read`` counts the bytes read from the file, so a file refused
        as not text still spends them; a path refused before opening spends none.
        """
        try:
            fd = self._open_note(path)
            try:
                data = _read_all(fd)
            except OSError as exc:
                raise _Refused(f"{path!r} could not be read: {exc.strerror}") from None
            finally:
                os.close(fd)
        except _Refused as refusal:
            return ToolResult(f"refused: {refusal}", error=True)
        if b"\x00" in data:
            return ToolResult(
                f"refused: {path!r} is not a text file (it holds NUL bytes)",
                error=True,
                bytes_read=len(data),
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return ToolResult(
                f"refused: {path!r} is not a text file (not UTF-8)",
                error=True,
                bytes_read=len(data),
            )
        return ToolResult(text, error=False, bytes_read=len(data))

    def read_cost(self, path: Any) -> int:
        """How many bytes :meth:`read_note` would read for ``path`` (0 if the path is refused)."""
        try:
            fd = self._open_note(path)
        except (_Refused, OSError, ValueError):
            return 0
        try:
            return os.fstat(fd).st_size
        except OSError:
            return 0
        finally:
            os.close(fd)

    def propose_note(self, path: Any, text: Any) -> ToolResult:
        """Write a new note after approval of this exact path and text."""
        try:
            relative = self._check_path(path)
            if not isinstance(text, str):
                raise _Refused("a proposal's text must be a string")
            folder, name = posixpath.split(relative)
            parent = self._open_folder(folder, path)
            try:
                _refuse_existing(parent, name, relative)
            finally:
                os.close(parent)
        except _Refused as refusal:
            return ToolResult(f"refused: {refusal}", error=True)
        proposal = Proposal(relative, text)
        if not self.approve(proposal):
            return ToolResult(
                f"refused: the proposal of {relative!r} was not approved; nothing was written",
                error=True,
            )
        data = proposal.text.encode("utf-8")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        try:
            # The folder is opened again: it may have changed during the approval.
            parent = self._open_folder(folder, path)
        except _Refused as refusal:
            return ToolResult(f"refused: {refusal}", error=True)
        try:
            fd = os.open(name, flags, 0o644, dir_fd=parent)
        except FileExistsError:
            return ToolResult(f"refused: {relative!r} already exists; nothing was written", True)
        except OSError as exc:
            return ToolResult(f"failed: could not create {relative!r}: {exc.strerror}", True)
        finally:
            os.close(parent)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return ToolResult(f"saved {relative!r} ({len(data)} bytes)", error=False)

    # -- path rules

    def _check_path(self, path: Any) -> str:
        if not isinstance(path, str) or not path.strip():
            raise _Refused(f"path={path!r} must be a note path such as list_notes gives")
        if "\x00" in path:
            raise _Refused("a note path cannot hold a NUL character")
        if path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[/\\]", path):
            raise _Refused(f"absolute paths such as {path!r} are not allowed; use a listed note")
        if ".." in path.replace("\\", "/").split("/"):
            raise _Refused("'..' is not allowed in a note path")
        return posixpath.normpath(path)

    def _open_note(self, path: Any) -> int:
        """A descriptor of the listed note ``path``, opened for reading, or a refusal.

        Links inside the workspace are followed by reading them and opening
        their target from the workspace's root again; the note it leads to
        must be listed too. The file must be regular with a single link (a
        hard link could be a file outside the workspace).
        """
        relative = self._check_path(path)
        listed = self.listed()
        if relative not in listed:
            raise _Refused(f"{path!r} is not a listed note (list_notes gives the notes)")
        fd, real = self._walk(relative, path, final=_READ_FLAGS)
        try:
            if real != relative and real not in listed:
                raise _Refused(f"{path!r} is a link to {real!r}, which is not a listed note")
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _Refused(f"{path!r} is not a regular file")
            if info.st_nlink != 1:
                raise _Refused(
                    f"{path!r} has {info.st_nlink} hard links; a note must have exactly one "
                    "(another could be a file outside the workspace)"
                )
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_folder(self, folder: str, path: Any) -> int:
        """A descriptor of the workspace folder ``folder`` ('' for the root)."""
        if not folder:
            return os.dup(self._root_fd)
        try:
            fd, _ = self._walk(folder, path, final=os.O_RDONLY | _DIRECTORY)
        except _Refused as refusal:
            text = str(refusal)
            if "outside the workspace" in text:
                raise _Refused(f"{path!r} is in a folder outside the workspace") from None
            if "does not exist" in text or "not a folder" in text:
                raise _Refused(f"the folder of {path!r} does not exist") from None
            raise
        return fd

    def _walk(self, relative: str, path: Any, *, final: int) -> tuple[int, str]:
        """``(descriptor, the path it really is)`` for the workspace path ``relative``.

        Each component is opened relative to its folder's descriptor with
        ``O_NOFOLLOW``; a link met on the way is read and its target (which
        must stay inside the workspace) walked again from the root.
        """
        parts = relative.split("/")
        for _ in range(_LINK_HOPS):
            fd = os.dup(self._root_fd)
            done: list[str] = []
            try:
                for i, name in enumerate(parts):
                    last = i == len(parts) - 1
                    flags = (final if last else os.O_RDONLY | _DIRECTORY) | _NOFOLLOW | _CLOEXEC
                    try:
                        next_fd = os.open(name, flags, dir_fd=fd)
                    except OSError as exc:
                        target = _link_target(fd, name)
                        if target is None:
                            raise _Refused(_open_failure(path, exc, last)) from None
                        parts = self._follow(done, target, parts[i + 1 :], path)
                        break
                    os.close(fd)
                    fd = next_fd
                    if name not in (".", ""):
                        done.append(name)
                else:
                    return fd, "/".join(done) or "."
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        raise _Refused(f"{path!r} goes through more than {_LINK_HOPS} links")

    def _follow(self, done: list[str], target: str, rest: list[str], path: Any) -> list[str]:
        """The components of a link's target (then ``rest``), inside the workspace."""
        if os.path.isabs(target):
            target = posixpath.normpath(target)
            for root in self._roots:
                if target == root or target.startswith(root.rstrip("/") + "/"):
                    inside = posixpath.relpath(target, root)
                    break
            else:
                raise _Refused(f"{path!r} is a link that leads outside the workspace")
        else:
            inside = posixpath.normpath(posixpath.join(*done, target) if done else target)
        if inside == ".." or inside.startswith("../"):
            raise _Refused(f"{path!r} is a link that leads outside the workspace")
        parts = [p for p in inside.split("/") if p not in ("", ".")]
        return [*parts, *rest] or ["."]


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# O_NONBLOCK: opening a FIFO planted under a note's name must not wait for a writer.
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_LINK_HOPS = 16
_INDEX_CAP = 1 << 20


def _link_target(folder: int, name: str) -> str | None:
    """The target of the link ``name`` in ``folder``, or None when it is no link."""
    try:
        if not stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            return None
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def _open_failure(path: Any, exc: OSError, last: bool) -> str:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return (
            f"{path!r} is listed but does not exist"
            if last
            else (f"{path!r} does not exist (a folder on its way is not a folder)")
        )
    return f"{path!r} could not be opened: {exc.strerror}"


def _refuse_existing(folder: int, name: str, relative: str) -> None:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    raise _Refused(f"{relative!r} already exists; nothing was written")


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


# --- the loop ---------------------------------------------------------------------


@dataclass(frozen=True)
class Budgets:
    """How much one run may spend; a run stops before a round would exceed one."""

    model_calls: int = 8
    tool_calls: int = 8
    bytes_read: int = 65536
    deadline_s: float = 60.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _TraceWriter:
    def __init__(self, handle: TextIO) -> None:
        self.handle = handle

    def write(self, record: Mapping[str, Any]) -> None:
        # Strict JSON in UTF-8 whatever the model sent: a lone surrogate is
        # written as its escape and NaN as "NaN", with a note in the record.
        clean, notes = recordable(record, str(record.get("type", "record")))
        if notes:
            clean = {**clean, NOTES_KEY: notes}
        self.handle.write(json.dumps(clean, ensure_ascii=False, allow_nan=False) + "\n")
        self.handle.flush()


@dataclass(frozen=True)
class NotesRun:
    """How a run ended: the answer, why it stopped (None when the model answered)
    and the exit code the command returns."""

    answer: str
    stopped: str | None
    exit_code: int


async def run_notes(
    question: str,
    *,
    provider: Any,
    dispatcher: NotesDispatcher,
    trace: TextIO,
    task: str = "",
    seed: int | None = None,
    budgets: Budgets | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> NotesRun:
    """Answer ``question`` with ``provider`` and the notes tools, writing the trace.

    ``provider`` is anything with ``async complete(messages, *, seed)``
    returning a :class:`~evalstats.running.providers._base.Completion` (a
    :class:`~evalstats.running.providers._base.Provider` made with :data:`TOOLS`).
    """
    budgets = budgets or Budgets()
    writer = _TraceWriter(trace)
    started = clock()
    writer.write(
        {
            "type": "start",
            "question": question,
            "model": task,
            "workspace_notes": list(dispatcher.listed()),
            "budgets": budgets.as_dict(),
        }
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question},
    ]
    tool_names = [t["name"] for t in TOOLS]
    answer = ""
    spent = _Spent()
    stopped: str | None = None
    exit_code = 0
    unsent = False  # results of a round that ran and are in no request record yet
    while True:
        left = budgets.deadline_s - (clock() - started)
        if left <= 0 and not unsent:
            stopped = "deadline"
            break
        writer.write(
            {
                "type": "request",
                "turn": spent.model_calls,
                "messages": messages,
                "tools": tool_names,
            }
        )
        unsent = False
        if left <= 0:
            # The deadline passed while the last round ran: its results are in
            # the request record just written (so the trace shows every call
            # that ran), but no time is left to send it.
            stopped = "deadline"
            break
        turn = spent.model_calls
        spent.model_calls += 1
        done, stopped, exit_code = await _complete(provider, messages, seed, left)
        if done is None:
            break
        calls = _numbered_calls(done.tool_calls, turn, spent.used_ids)
        writer.write(
            {
                "type": "response",
                "turn": turn,
                "content": done.answer if done.answer or not calls else None,
                "tool_calls": calls,
                "tokens": dict(done.tokens) if done.tokens is not None else None,
                "model": done.model,
            }
        )
        answer = done.answer or ""
        if not calls:
            break
        stopped = _over_budget(
            calls, dispatcher, budgets, spent, lambda: clock() - started >= budgets.deadline_s
        )
        if stopped:
            break
        messages.append({"role": "assistant", "content": done.answer or None, "tool_calls": calls})
        unsent = True
        _run_round(calls, dispatcher, messages, spent)
    writer.write({"type": "final", "answer": answer, "stopped": stopped})
    return NotesRun(answer=answer, stopped=stopped, exit_code=exit_code)


@dataclass
class _Spent:
    """What a run has used so far: model calls, tool calls, bytes read, call ids."""

    model_calls: int = 0
    tool_calls: int = 0
    bytes_read: int = 0
    used_ids: set[str] = field(default_factory=set)


async def _complete(
    provider: Any, messages: list[dict[str, Any]], seed: int | None, left: float
) -> tuple[Any, str | None, int]:
    """One model call within the time left: the completion, or None with why the run
    stops and its exit code (a transient failure and a provider error differ)."""
    try:
        done = await asyncio.wait_for(provider.complete(messages, seed=seed), timeout=left)
    except TimeoutError:
        return None, "deadline", 0
    except TransientProviderError as exc:
        return None, f"error: {exc}", EXIT_TRANSIENT
    except ProviderError as exc:
        return None, f"error: {exc}", EXIT_PROVIDER_ERROR
    return done, None, 0


def _numbered_calls(
    tool_calls: Iterable[Mapping[str, Any]], turn: int, used_ids: set[str]
) -> list[dict[str, Any]]:
    """The response's tool calls, each with an id used once in the conversation."""
    calls: list[dict[str, Any]] = []
    for i, c in enumerate(tool_calls):
        call_id = str(c.get("id") or "")
        if not call_id or call_id in used_ids:
            # Services without call ids (Ollama, Gemini) get ids numbered per
            # response; a conversation needs each id once to match results.
            call_id = f"call_{turn}_{i}"
        used_ids.add(call_id)
        calls.append({"id": call_id, "name": str(c["name"]), "arguments": dict(c["arguments"])})
    return calls


def _over_budget(
    calls: list[dict[str, Any]],
    dispatcher: NotesDispatcher,
    budgets: Budgets,
    spent: _Spent,
    past_deadline: Callable[[], bool],
) -> str | None:
    """The budget the next round would exceed, or None.

    Every budget is checked before the round runs, so that each call that runs
    has its result sent (and recorded) in the next request.
    """
    cost = sum(
        dispatcher.read_cost(c["arguments"].get("path"))
        for c in calls
        if c["name"] == "read_note" and "_unparsed" not in c["arguments"]
    )
    if spent.model_calls >= budgets.model_calls:
        return "model_calls"
    if spent.tool_calls + len(calls) > budgets.tool_calls:
        return "tool_calls"
    if spent.bytes_read + cost > budgets.bytes_read:
        return "bytes_read"
    if past_deadline():
        return "deadline"
    return None


def _run_round(
    calls: list[dict[str, Any]],
    dispatcher: NotesDispatcher,
    messages: list[dict[str, Any]],
    spent: _Spent,
) -> None:
    """Run each call of a round and add its result to the conversation."""
    for call in calls:
        result = dispatcher.dispatch(call["name"], call["arguments"])
        spent.tool_calls += 1
        spent.bytes_read += result.bytes_read
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "name": call["name"],
                "content": result.content,
                "error": result.error,
            }
        )


# --- the command ------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds > 0")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalstats.demo.notes_agent",
        description="Answer a question from the notes in a workspace, with tools; "
        "write a JSONL trace.",
    )
    parser.add_argument("--workspace", required=True, help="the folder holding NOTES")
    parser.add_argument("--model", required=True, help="a provider task, e.g. openai:notes")
    parser.add_argument("--base-url", help="where the model service is")
    parser.add_argument("--trace", required=True, help="the JSONL trace file to write")
    parser.add_argument("--seed", type=int, help="the seed sent with every request")
    parser.add_argument("--max-model-calls", type=_positive_int, default=8)
    parser.add_argument("--max-tool-calls", type=_positive_int, default=8)
    parser.add_argument("--max-bytes", type=_positive_int, default=65536)
    parser.add_argument("--deadline-s", type=_positive_float, default=60.0)
    parser.add_argument("question")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (see the module docstring)."""
    from ..running.providers import provider_from_name

    args = _parser().parse_args(argv)
    seed = args.seed
    if seed is None and os.environ.get("EVALSTATS_SEED", "").strip():
        try:
            seed = int(os.environ["EVALSTATS_SEED"])
        except ValueError:
            print(
                f"notes: EVALSTATS_SEED={os.environ['EVALSTATS_SEED']!r} is not a whole number",
                file=sys.stderr,
            )
            return EXIT_BAD_ARGUMENTS
    budgets = Budgets(
        model_calls=args.max_model_calls,
        tool_calls=args.max_tool_calls,
        bytes_read=args.max_bytes,
        deadline_s=args.deadline_s,
    )
    try:
        dispatcher = NotesDispatcher(args.workspace)
        settings = {"base_url": args.base_url} if args.base_url else {}
        provider = provider_from_name(
            args.model, settings, tools=list(TOOLS), timeout=min(120.0, args.deadline_s)
        )
    except EvalStatsError as exc:
        print(f"notes: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    try:
        trace = open(args.trace, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        print(f"notes: cannot write the trace {args.trace!r}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS

    async def go() -> NotesRun:
        try:
            return await run_notes(
                args.question,
                provider=provider,
                dispatcher=dispatcher,
                trace=trace,
                task=args.model,
                seed=seed,
                budgets=budgets,
            )
        finally:
            await provider.aclose()

    try:
        outcome = asyncio.run(go())
    finally:
        trace.close()
    # The answer goes out as UTF-8 whatever the locale says, so a note's
    # non-ASCII text cannot crash the command after the trace is complete.
    out = getattr(sys.stdout, "buffer", None)
    if out is not None:
        sys.stdout.flush()
        out.write((recordable_text(outcome.answer)[0] + "\n").encode("utf-8"))
        out.flush()
    else:  # pragma: no cover - a replaced sys.stdout without a byte buffer
        print(outcome.answer)
    if outcome.stopped and outcome.stopped.startswith("error: "):
        print(f"notes: {outcome.stopped[len('error: ') :]}", file=sys.stderr)
    return outcome.exit_code


if __name__ == "__main__":  # pragma: no cover - exercised through subprocess tests
    sys.exit(main())
