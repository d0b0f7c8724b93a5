"""The ``cmd:`` task: run a command once per sample in a fresh workspace.

``cmd:COMMAND`` (a variant such as ``new=cmd:python -m evalstats.demo.notes_agent
--workspace {workspace} --model openai:notes --trace {trace}``) runs COMMAND
for every sample. A variant spec splits on commas, so COMMAND cannot hold
one: put such a command in a script. The program (COMMAND's first item) is
found when the task is made, relative to the current folder or on ``PATH``,
and runs by that absolute path. The other items are passed as written, and
the command runs in the workspace, so a script or file named by a relative
path is looked for there: give its absolute path (``cmd:python
/abs/path/agent.py``, or ``"$PWD/agent.py"`` in the shell). Process groups
make this POSIX-only.

- COMMAND is split like a shell would (:func:`shlex.split`, no shell runs);
  the argument items ``{workspace}``, ``{trace}`` and ``{prompt}`` are
  replaced by the workspace root, the trace file's path and the prompt's
  text, each as a single argument whatever it holds (inside a longer item,
  such as ``--trace={trace}``, too). Without ``{prompt}`` anywhere, the
  prompt's text is the last argument. A braced word close to one of these
  names (``{promt}``) is refused as a typo; other braces are plain text.
  The prompt is the final user message after the variant's transform; a
  system prompt is not passed.
- The working directory is the sample's workspace root, made by
  :func:`evalstats.running._workspace.make_workspace` from the case's fixtures. The
  environment is not ours but a minimal one (:meth:`CmdTask.environment`:
  ``PATH``, ``HOME``, ``LANG`` and a few more, the variables named with the
  variant's ``env=`` setting, and the key and base-URL variables of the
  providers the command names), so a secret such as ``AWS_SECRET_ACCESS_KEY``
  never reaches it; the harness adds ``EVALSTATS_WORKSPACE``,
  ``EVALSTATS_TRACE`` and ``EVALSTATS_SEED``; stdin is at end of file (``/dev/null``), so anything
  that asks for approval there is refused.
- stdout and stderr are captured separately, each up to 128 KiB (the rest is
  read and dropped, so the command never blocks on a full pipe, and the cut
  is noted in ``capped``; an answer taken from a cut stdout makes the sample
  incomplete); the trace file is read up to 1 MiB (a longer one
  is cut, and a cut trace cannot be read), and only if it is a regular
  file: a FIFO, a device or a symbolic link in its place is refused without
  being opened (``trace_error`` says what it is), so nothing the command
  leaves can make the harness wait.
- The command runs in its own process group (a new session), with
  ``EVALSTATS_TASK_TOKEN`` set to a fresh random token its descendants
  inherit. When it does not finish within the timeout (130 s, unless the run
  is given a ``timeout``: ``evalstats run --timeout``), its whole tree gets
  SIGTERM, then SIGKILL after a 1 s grace, and the sample is incomplete
  ("did not finish within 130 s and was killed"); the sample ends within
  the timeout and 2 s. When the command itself ends, what it left running
  has at most 0.5 s more and is then ended the same way; our ends of the
  pipes are closed, so nothing that holds them can make the harness wait.
  On Linux the command is started by a keeper (:mod:`evalstats.running._keeper`),
  its parent and a child subreaper: every descendant orphaned on the way
  becomes the keeper's child, so the tree is all the command started, even
  a descendant that called ``setsid()`` and dropped the token, or one that
  forks and exits on every hop; and the keeper ends it when evalstats closes
  its control pipe or dies (even by ``kill -9``). A command that kills its
  keeper dies with it (its parent-death signal) and the sample is
  incomplete. Elsewhere the tree is the group, the session, and every
  process holding the token, and a watchdog process ends every running
  command if evalstats is killed (see :mod:`evalstats.running._reaper`).
  Either way, the temporary folders a killed run left are removed when the
  next ``cmd:`` task is made.
- evalstats makes itself non-dumpable before the first command starts
  (:func:`evalstats.running._reaper.hide_environment`, Linux): its
  ``/proc/PID/environ`` and memory are then closed to the commands, which
  run as the same user.
- The workspace is observed (:func:`evalstats.running._workspace.observe`, with the
  trace's raw text and tool results, the answer and both captured streams as
  the texts; only the kept part of each, so a marker printed past the
  128 KiB cap is not seen) and then removed, unless ``keep_workspaces`` is set (the
  ``--keep-workspaces`` option of ``evalstats run``).

The answer is the trace's final answer when the command wrote a readable
trace with a final record, else its stdout (stripped). The task's
:attr:`~evalstats.running._tasks.TaskResult.trace` is a JSON-ready dict::

    {"trace_file": path, "summary": trace summary or None,
     "trace_error": reason or None, "stdout_bytes": n, "stderr_bytes": n,
     "trace_bytes": n, "exit_code": n, "capped": [notes],
     "incomplete": reason or None, "workspace": observations,
     "kept_workspace": path or None}

``summary`` is :func:`evalstats.running._traces.trace_summary` of the trace, read
before the sample's temporary folders are removed, so the engine scores
required actions from it (:func:`evalstats.running._traces.trace_of`). ``trace_error``
says why there is none: the trace is cut at the cap, cannot be read, or the
sample is incomplete. When the command wrote no trace file at all, neither
is set, and ``trace_file`` names the file that is not there: a case with
required actions is then incomplete ("no such file"), any other case is
scored on stdout. The sample is incomplete (``incomplete`` holds the reason,
and ``trace_error`` repeats it) when the command was killed at its timeout,
or exited with a non-zero status and wrote no readable trace (the reason
quotes stderr's last line), or killed its keeper (``exit_code`` is then
None: how the command ended is unknown). Exit status 75
(``EX_TEMPFAIL``, what :mod:`evalstats.demo.notes_agent` uses for a transient
model-service error) raises :class:`~evalstats.errors.TransientProviderError`,
so the engine retries the sample and, after its last retry, records it as
unmeasured.

:meth:`CmdTask.describe` gives ``{"kind": "cmd", "command": [...],
"executable": path, "sha256": ...}`` for the manifest: the SHA-256 of the
program that runs (found with :func:`shutil.which`), so two runs with
different programs are told apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import suggest
from ..errors import InvalidArgument, TransientProviderError
from ._keeper import END_WITHIN_S as _KEEPER_END_WITHIN_S
from ._keeper import LINGER_S as _KEEPER_LINGER_S
from ._keeper import __file__ as _KEEPER_FILE
from ._reaper import (
    OWNER_FILE,
    TOKEN_VARIABLE,
    end_tree,
    hide_environment,
    kill_round,
    new_token,
    register,
    signal_tree,
    start_watchdog,
    sweep,
    unregister,
    write_owner,
)
from ._tasks import Prompt, TaskResult
from ._tasks import check_timeout as _check_timeout
from ._workspace import NotRegularFile, make_workspace, observe, read_regular, remove, remove_tree

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "OUTPUT_CAP",
    "TRACE_CAP",
    "CmdTask",
    "cmd_task",
]

#: Seconds a command may run when the run sets no timeout.
DEFAULT_TIMEOUT_S = 130.0

#: Bytes of stdout, and of stderr, kept per sample.
OUTPUT_CAP = 128 * 1024

#: Bytes of the trace file read per sample.
TRACE_CAP = 1024 * 1024

#: Seconds between SIGTERM and SIGKILL when a command is stopped.
KILL_GRACE_S = 1.0

# Seconds the output of what a finished command left running is still read.
_LINGER_S = _KEEPER_LINGER_S

# Seconds the keeper may take to end what is left once asked, before it is killed itself.
_KEEPER_END_S = _KEEPER_END_WITHIN_S + 1.0

#: The exit status that means "a transient failure, try again" (sysexits.h).
EX_TEMPFAIL = 75

#: The variables of ours every command gets (when set); see :meth:`CmdTask.environment`.
BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACEHOLDER_NAMES = ("workspace", "trace", "prompt")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(_PLACEHOLDER_NAMES) + r")\}")
# Anything that looks like a placeholder: checked for misspelt ones.
_BRACED_NAME = re.compile(r"\{([A-Za-z_]\w*)\}")
_CHUNK = 64 * 1024


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fill(item: str, values: Mapping[str, str]) -> str:
    # One pass, so a prompt that contains "{trace}" stays as written.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], item)


class _Capture:
    """The first ``cap`` bytes of a stream, and how many bytes it had in all."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.total = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        """Read to the end, keeping what fits: past the cap, read and drop."""
        if stream is None:
            return
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                return
            self.total += len(chunk)
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


_swept = False


def _sweep_once() -> None:
    """At the first ``cmd:`` task of a process, remove what killed runs left behind."""
    global _swept
    if not _swept:
        _swept = True
        # Housekeeping never stops a run: sweep() raises nothing it expects,
        # and anything else it might is left for the next start.
        with contextlib.suppress(Exception):
            sweep()


class _Reader:
    """Our read end of a command's pipe, as an asyncio stream we can close at will."""

    def __init__(self, stream: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        self.stream = stream
        self.transport = transport

    @classmethod
    async def open(cls, fd: int) -> _Reader:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=_CHUNK, loop=loop)
        pipe = os.fdopen(fd, "rb", buffering=0)
        try:
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe
            )
        except BaseException:
            pipe.close()
            raise
        return cls(stream, transport)

    def close(self) -> None:
        self.transport.close()


async def _end_tree(pgid: int | None, token: str) -> None:
    """SIGKILL the command's group, its session and every process holding its token."""
    deadline = time.monotonic() + 1.0
    while kill_round(pgid, token) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _read_capped(path: Path, cap: int) -> tuple[bytes | None, int, str | None]:
    """The first ``cap`` bytes of a regular file, its size and why it cannot be read.

    (None, 0, None) if nothing is there. The command may have left anything
    in its place: a FIFO, a device or a link is refused without being
    opened (a FIFO without a writer would block the open for ever), and a
    sparse file of gigabytes costs ``cap`` bytes.
    """
    try:
        data, size = read_regular(path, cap=cap)
    except FileNotFoundError:
        return None, 0, None
    except NotRegularFile as exc:
        return None, 0, f"the trace file cannot be read: {exc}"
    except OSError as exc:
        return None, 0, f"the trace file cannot be read: {exc.strerror or exc}"
    return data, size, None


def _parse_trace(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A trace file's text -> (its summary, None) or (None, why it cannot be read)."""
    from ._traces import TraceError, read_trace, split_records, trace_summary

    try:
        trace = read_trace(split_records(text))
    except TraceError as exc:
        return None, str(exc)
    return trace_summary(trace), None


class CmdTask:
    """A command run once per sample in a fresh workspace: the ``cmd:`` task kind.

    See the module docstring for what the command gets and what the sample
    records. Made by :func:`cmd_task` (``task_from_name("cmd:COMMAND")``).

    Parameters
    ----------
    command : str
        The command line, split with :func:`shlex.split`.
    timeout : float, optional
        Seconds the command may run when the engine gives none (130).
    keep_workspaces : bool, optional
        Leave each sample's workspace (and trace file) in place; the record's
        ``kept_workspace`` says where.
    """

    #: The engine passes the sample's case (for its fixtures) to ``run``.
    wants_case = True

    def __init__(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        keep_workspaces: bool = False,
        env: Iterable[str] = (),
    ) -> None:
        if not isinstance(command, str) or not command.strip():
            raise InvalidArgument(
                f"cmd:{command!r}: give a command, such as "
                "'cmd:python /path/to/my_agent.py {prompt}'"
            )
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise InvalidArgument(
                f"cmd:{command!r} cannot be split into arguments: {exc}"
            ) from None
        if _PLACEHOLDER.search(argv[0]):
            raise InvalidArgument(
                f"cmd:{command!r}: the program {argv[0]!r} cannot be a placeholder"
            )
        for item in argv[1:]:
            for name in _BRACED_NAME.findall(item):
                # A braced word close to a placeholder's name is a typo (it would
                # be passed as written, and the prompt appended at the end);
                # other braced words, unlike any placeholder, are kept as text.
                hint = suggest(name, _PLACEHOLDER_NAMES)
                if name not in _PLACEHOLDER_NAMES and hint:
                    raise InvalidArgument(
                        f"cmd:{command!r}: unknown placeholder {{{name}}}{hint}; the "
                        "placeholders are {workspace}, {trace} and {prompt}"
                    )
        found = shutil.which(argv[0])
        if found is None:
            raise InvalidArgument(
                f"cmd:{command!r}: the program {argv[0]!r} was not found "
                "(not an executable file, nor on PATH)"
            )
        self.command = command
        self.argv = tuple(argv)
        self.executable = os.path.abspath(found)
        self.sha256 = _sha256(self.executable)
        self.timeout = _check_timeout(timeout)
        self.keep_workspaces = bool(keep_workspaces)
        if isinstance(env, str):
            env = env.replace("+", " ").split()
        names = tuple(env)
        for name in names:
            if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
                raise InvalidArgument(
                    f"cmd:{command!r}: env={name!r} is not the name of an environment variable"
                )
        self.env = names
        _sweep_once()

    def describe(self) -> dict[str, Any]:
        """``{"kind": "cmd", "command": [...], "executable": path, "sha256": hex}``."""
        return {
            "kind": "cmd",
            "command": list(self.argv),
            "executable": self.executable,
            "sha256": self.sha256,
        }

    def __repr__(self) -> str:
        return f"task_from_name({'cmd:' + self.command!r})"

    def environment(self) -> dict[str, str]:
        """The variables the command gets from ours: few, so our secrets stay ours.

        :data:`BASE_ENV` (``PATH``, ``HOME``, ``LANG``, ...), the names given
        as ``env``, and for every provider the command names (an item such
        as ``openai:notes`` or ``--model=ollama:qwen3``) its key and base-URL
        variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``). The harness adds
        ``EVALSTATS_WORKSPACE``, ``EVALSTATS_TRACE``, ``EVALSTATS_SEED`` and
        ``EVALSTATS_TASK_TOKEN``.

        Examples
        --------
        >>> task = CmdTask("python -m agent --model openai:gpt-4o", env=["MY_FLAG"])
        >>> sorted(task.environment_names() - set(BASE_ENV))
        ['MY_FLAG', 'OPENAI_API_KEY', 'OPENAI_BASE_URL']
        """
        names = self.environment_names()
        return {k: v for k, v in os.environ.items() if k in names}

    def environment_names(self) -> set[str]:
        """The names :meth:`environment` passes on when they are set."""
        from .providers import PROVIDERS

        names = {*BASE_ENV, *self.env}
        for item in self.argv[1:]:
            for kind, cls in PROVIDERS.items():
                if re.search(rf"(^|[=\s]){re.escape(kind)}:", item):
                    names.update(n for n in (cls.key_env, cls.base_url_env) if n)
        return names

    def arguments(self, prompt: str, *, workspace: str, trace: str) -> list[str]:
        """The argument list for one sample (the program first, as found).

        Examples
        --------
        >>> task = CmdTask("python agent.py --trace={trace} {prompt} --quiet")
        >>> task.arguments("What is {trace}?", workspace="/w", trace="/t")[1:]
        ['agent.py', '--trace=/t', 'What is {trace}?', '--quiet']
        >>> CmdTask("python agent.py").arguments("Hi there", workspace="/w", trace="/t")[1:]
        ['agent.py', 'Hi there']
        """
        values = {"workspace": workspace, "trace": trace, "prompt": prompt}
        args = [_fill(a, values) for a in self.argv[1:]]
        if not any("{prompt}" in a for a in self.argv[1:]):
            args.append(prompt)
        return [self.executable, *args]

    async def run(
        self, prompt: Prompt, *, seed: int, case: Any = None, timeout: float | None = None
    ) -> TaskResult:
        """Run the command for one sample of ``case``; see the module docstring."""
        limit = self.timeout if timeout is None else _check_timeout(timeout)
        text = prompt.text if isinstance(prompt, Prompt) else str(prompt)
        workspace = make_workspace(case, seed=seed)
        trace_dir = Path(tempfile.mkdtemp(prefix="evalstats-trace-"))
        trace_path = trace_dir / "trace.jsonl"
        keep = self.keep_workspaces
        try:
            for folder in (workspace.parent, trace_dir):
                write_owner(folder)  # a later start removes them if this process dies
            return await self._run(text, seed, workspace, trace_path, limit)
        finally:
            if not keep:
                remove(workspace)
                remove_tree(trace_dir)
            else:
                for folder in (workspace.parent, trace_dir):
                    with contextlib.suppress(OSError):
                        os.unlink(folder / OWNER_FILE)

    async def _run(
        self, text: str, seed: int, workspace: Any, trace_path: Path, limit: float
    ) -> TaskResult:
        argv = self.arguments(text, workspace=str(workspace.root), trace=str(trace_path))
        token = new_token()
        env = self.environment()
        env.update(
            EVALSTATS_WORKSPACE=str(workspace.root),
            EVALSTATS_TRACE=str(trace_path),
            EVALSTATS_SEED=str(seed),
        )
        env[TOKEN_VARIABLE] = token
        hide_environment()  # before the first command can look
        out, err = _Capture(OUTPUT_CAP), _Capture(OUTPUT_CAP)
        keeper = _keeper_command()
        if keeper is None:
            start_watchdog()  # running before the command is: see start_watchdog
            proc, out_r, err_r = await _spawn(argv, workspace.root, env)
            ended = await _wait_and_end(proc, token, (out_r, err_r), (out, err), limit)
        else:
            ended = await _run_kept(keeper, argv, workspace.root, env, token, (out, err), limit)
        stdout_bytes, stderr_bytes = out.total, err.total
        capped: list[str] = []
        for name, total in (("stdout", stdout_bytes), ("stderr", stderr_bytes)):
            if total > OUTPUT_CAP:
                capped.append(
                    f"{name}: {total} bytes, kept the first {OUTPUT_CAP} "
                    f"({total - OUTPUT_CAP} dropped)"
                )
        out_text, err_text = out.text(), err.text()
        summary, trace_text, trace_error, trace_bytes = _trace_of(trace_path, capped)
        answer = summary.get("answer") if summary is not None else out_text.strip()
        if ended.lost is None:
            incomplete = _incomplete(
                ended.timed_out, limit, ended.exit_code, err_text, summary, stdout_bytes
            )
        elif ended.started or not _last_line(err_text):
            incomplete = ended.lost
        else:  # the keeper could not start the command, and said why on stderr
            incomplete = f"{ended.lost}: {_last_line(err_text)}"
        texts = [trace_text, answer, out_text, err_text]
        if summary is not None:
            texts.extend(o.get("content") for o in summary.get("executed", ()))
        record = {
            "trace_file": str(trace_path),
            "summary": summary,
            # The engine takes a trace_error as the reason the sample is
            # incomplete: a command killed or failed overrides a readable trace.
            "trace_error": incomplete or trace_error,
            "stdout_bytes": stdout_bytes,
            "stderr_bytes": stderr_bytes,
            "trace_bytes": trace_bytes,
            "exit_code": ended.exit_code,
            "capped": capped,
            "incomplete": incomplete,
            "workspace": observe(workspace, texts=texts),
            "kept_workspace": str(workspace.root) if self.keep_workspaces else None,
        }
        return TaskResult(answer=None if incomplete else answer, trace=record)


@dataclass(frozen=True)
class _Ended:
    """How a command ended: out of time, its exit status, or why that is unknown."""

    timed_out: bool
    exit_code: int | None
    lost: str | None = None
    started: bool = True


def _keeper_command() -> list[str] | None:
    """The keeper's command line (:mod:`evalstats.running._keeper`), or None where there is none.

    Linux only (it needs ``/proc`` and ``prctl``), and only with a Python to
    run it by path; elsewhere a command is started directly, in its own
    session, with the watchdog behind it.
    """
    if not _KEEPER_ON or not sys.executable or not os.path.isfile(_KEEPER_PATH):
        return None
    return [sys.executable, "-I", "-S", _KEEPER_PATH]


_KEEPER_PATH = os.path.abspath(_KEEPER_FILE)
_KEEPER_ON = sys.platform.startswith("linux") and os.path.isdir("/proc")


async def _spawn(
    argv: Sequence[str], cwd: Any, env: Mapping[str, str]
) -> tuple[asyncio.subprocess.Process, int, int]:
    """Start the command in a new session, its stdout and stderr on pipes of our own.

    Our own pipes: asyncio's wait() for a process with pipes also waits for
    the pipes to close, which a descendant that left the group can delay for
    ever. With these, the exit is the exit, and we stop reading when we
    choose. Returns the process and the read ends of the two pipes.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
        )
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    return proc, out_r, err_r


async def _wait_and_end(
    proc: asyncio.subprocess.Process,
    token: str,
    fds: tuple[int, int],
    captures: tuple[_Capture, _Capture],
    limit: float,
) -> _Ended:
    """Read stdout and stderr while the command runs, for ``limit`` seconds at most,
    then end its whole process tree (where there is no keeper).

    Whatever happens (a cancellation by the engine included), nothing is left
    running and the pipes are closed.
    """
    pgid = proc.pid  # a new session: the group's (and session's) id is the leader's pid
    register(token, pgid)
    out, err = captures
    readers = [await _Reader.open(fd) for fd in fds]
    out_task = asyncio.ensure_future(out.drain(readers[0].stream))
    err_task = asyncio.ensure_future(err.drain(readers[1].stream))
    wait_task = asyncio.ensure_future(proc.wait())
    timed_out = False
    try:
        done, _ = await asyncio.wait({wait_task}, timeout=limit)
        if not done:
            timed_out = True
            signal_tree(pgid, token, signal.SIGTERM)
            await asyncio.wait({wait_task}, timeout=KILL_GRACE_S)  # the grace after SIGTERM
        else:
            # The command ended; what it left running may still hold the
            # pipes: read what is there for a moment, then end it all.
            await asyncio.wait({out_task, err_task}, timeout=_LINGER_S)
        await _end_tree(pgid, token)
        await wait_task
        # With every writer gone the pipes are at their end; stop reading anyway.
        _, pending = await asyncio.wait({out_task, err_task}, timeout=0.2)
        for t in pending:
            t.cancel()
    except BaseException:  # cancelled by the engine, or anything else: leave nothing running
        end_tree(pgid, token)
        parts: tuple[asyncio.Future[Any], ...] = (out_task, err_task, wait_task)
        for part in parts:
            part.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.shield(asyncio.wait_for(proc.wait(), 5.0))
        raise
    finally:
        for reader in readers:
            reader.close()
        unregister(token)
    return _Ended(timed_out, proc.returncode)


async def _run_kept(
    keeper: Sequence[str],
    argv: Sequence[str],
    cwd: Any,
    env: Mapping[str, str],
    token: str,
    captures: tuple[_Capture, _Capture],
    limit: float,
) -> _Ended:
    """Run the command under its keeper, reading stdout and stderr; see :mod:`._keeper`.

    The keeper is the command's parent and the subreaper of all it starts:
    at the timeout it is asked for SIGTERM (``t`` on its control pipe), after
    the grace the pipe is closed and it kills everything left and exits; a
    command that ends by itself has its leftovers ended the same way. Its
    status pipe says the command's pid and how it ended. Whatever happens (a
    cancellation by the engine included), nothing is left running and every
    pipe is closed.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    ctl_r, ctl_w = os.pipe()
    st_r, st_w = os.pipe()
    ours = [out_r, err_r, ctl_w, st_r]
    try:
        proc = await asyncio.create_subprocess_exec(
            *keeper,
            str(st_w),
            *argv,
            cwd=cwd,
            env=env,
            stdin=ctl_r,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
            pass_fds=(st_w,),
        )
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, ctl_r, st_w):
            os.close(fd)
    os.set_blocking(st_r, False)
    control = _Control(ctl_w)
    readers: list[_Reader] = []
    tasks: list[asyncio.Future[Any]] = []
    status = _KeeperStatus()
    timed_out = False
    try:
        for fd in (out_r, err_r):
            readers.append(await _Reader.open(fd))  # on failure, it has closed fd
        tasks = [
            asyncio.ensure_future(c.drain(r.stream)) for c, r in zip(captures, readers, strict=True)
        ]
        wait_task = asyncio.ensure_future(proc.wait())
        tasks.append(wait_task)
        try:
            done, _ = await asyncio.wait({wait_task}, timeout=limit)
            if not done:
                timed_out = True
                control.send(b"t")
                await asyncio.wait({wait_task}, timeout=KILL_GRACE_S)  # the grace after SIGTERM
            control.close()  # the keeper kills what is left, and exits
            done, _ = await asyncio.wait({wait_task}, timeout=_KEEPER_END_S)
            if not done:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await wait_task
            status.read(st_r)
            if not status.ended_all(proc.returncode):
                # What the keeper could not reach (it was killed): the token and the session.
                await _end_tree(status.pid, token)
            # With every writer gone the pipes are at their end; stop reading anyway.
            _, pending = await asyncio.wait(set(tasks[:2]), timeout=0.2)
            for t in pending:
                t.cancel()
        except BaseException:  # cancelled by the engine, or anything else: leave nothing running
            control.close()
            for t in tasks:
                t.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.shield(asyncio.wait_for(proc.wait(), _KEEPER_END_S))
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            status.read(st_r)
            if not status.ended_all(proc.returncode):
                end_tree(status.pid, token)
            raise
    finally:
        control.close()
        for reader in readers:
            reader.close()
        for fd in (out_r, err_r)[len(readers) + 1 :]:
            os.close(fd)  # not yet given to a reader
        os.close(st_r)
    if status.exit_code is None and not timed_out:
        started = status.pid is not None
        return _Ended(timed_out, None, _keeper_lost(proc.returncode, started), started)
    return _Ended(timed_out, status.exit_code)


def _keeper_lost(returncode: int | None, started: bool) -> str:
    """Why the sample is incomplete when the keeper ended without saying how the command did."""
    if returncode is not None and returncode < 0:
        how = f"signal {-returncode}"
    else:
        how = f"status {returncode}"
    if not started:
        return f"the command's keeper (the process evalstats runs it under) ended with {how}"
    return (
        f"the command's keeper (the process evalstats runs it under) ended with {how} "
        "before the command did, so what the command left running may not all be ended"
    )


class _Control:
    """Our end of the keeper's control pipe."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def send(self, data: bytes) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.write(self.fd, data)

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


class _KeeperStatus:
    """What the keeper said on its status pipe: the command's pid and exit status."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.exit_code: int | None = None
        self._text = b""

    def ended_all(self, returncode: int | None) -> bool:
        """Whether the keeper said how the command ended and exited having ended all else."""
        return self.exit_code is not None and returncode == 0

    def read(self, fd: int) -> None:
        """Read what is there (never waits: the keeper has ended, or is not waited for)."""
        while len(self._text) < 4096:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # BlockingIOError: nothing more now
                break
            if not chunk:
                break
            self._text += chunk
        for line in self._text.decode("ascii", errors="replace").splitlines():
            word, _, number = line.partition(" ")
            if not number.isdigit():
                continue
            if word == "pid":
                self.pid = int(number)
            elif word == "exit":
                self.exit_code = int(number)
            elif word == "signal":
                self.exit_code = -int(number)


def _trace_of(
    trace_path: Path, capped: list[str]
) -> tuple[dict[str, Any] | None, str, str | None, int]:
    """The trace file read back: its summary (or None), text, error and size.

    A trace past the cap is not parsed (it is said to be truncated, and
    ``capped`` says so too).
    """
    raw, trace_bytes, trace_error = _read_capped(trace_path, TRACE_CAP)
    summary: dict[str, Any] | None = None
    trace_text = ""
    if raw is not None:
        trace_text = raw.decode("utf-8", errors="replace")
        if trace_bytes > TRACE_CAP:
            capped.append(f"trace: {trace_bytes} bytes, read the first {TRACE_CAP}")
            trace_error = (
                f"the trace file is truncated: it has {trace_bytes} bytes and only "
                f"the first {TRACE_CAP} (1 MiB) are read"
            )
        else:
            summary, trace_error = _parse_trace(trace_text)
    return summary, trace_text, trace_error, trace_bytes


def _incomplete(
    timed_out: bool,
    limit: float,
    exit_code: int | None,
    err_text: str,
    summary: dict[str, Any] | None,
    stdout_bytes: int,
) -> str | None:
    """Why the sample is incomplete, or None; an exit with EX_TEMPFAIL is transient.

    Raises
    ------
    TransientProviderError
        The command exited with status 75 (EX_TEMPFAIL): retried, then unmeasured.
    """
    if timed_out:
        return f"the command did not finish within {limit:g} s and was killed"
    if exit_code == EX_TEMPFAIL:
        why = _last_line(err_text) or "no message on stderr"
        raise TransientProviderError(
            f"the command exited with status {EX_TEMPFAIL} (a transient failure): {why}"
        )
    if exit_code != 0 and summary is None:
        why = _last_line(err_text) or "no message on stderr"
        return f"the command exited with status {exit_code}: {why}"
    if summary is None and stdout_bytes > OUTPUT_CAP:
        # The answer is stdout, and only its first part was kept: a cut answer
        # is not scored as if it were whole.
        return (
            f"the answer on stdout has {stdout_bytes} bytes, more than the "
            f"{OUTPUT_CAP}-byte cap, so it cannot be scored whole"
        )
    return None


def cmd_task(command: str, settings: Mapping[str, str] | None = None) -> CmdTask:
    """The task ``cmd:COMMAND`` names (see :func:`evalstats.running._variants.task_from_name`).

    The one setting is ``env``: names of more variables the command gets,
    separated by spaces or ``+`` (the variant ``v=cmd:./agent.sh,env=PYTHONPATH+MY_FLAG``).

    Examples
    --------
    >>> task = cmd_task("python -c pass")
    >>> task.describe()["kind"], task.describe()["command"], len(task.describe()["sha256"])
    ('cmd', ['python', '-c', 'pass'], 64)
    """
    settings = dict(settings or {})
    env = settings.pop("env", "")
    if settings:
        raise InvalidArgument(
            f"cmd:{command!r} takes only the setting env, not {', '.join(sorted(settings))}"
        )
    return CmdTask(command, env=env)
