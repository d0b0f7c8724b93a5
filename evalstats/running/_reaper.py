"""Ending a ``cmd:`` task's whole process tree, even one that hid from its group.

A command runs in a session of its own, so its process group is easy to
signal; but a descendant may call ``setsid()`` and leave both, keeping the
pipes open and running on. Every command is therefore started with a
variable no other process has, :data:`TOKEN_VARIABLE` set to a fresh random
token, which its descendants inherit: on Linux, :func:`members` finds the
live processes of this user that hold the token in their environment (or
are in the command's session) by scanning ``/proc``, and :func:`end_tree`
kills them all, round after round, until none is left. Where there is no
``/proc``, the process group alone is signalled.

A descendant can drop the token too, or change its pid faster than a scan
of ``/proc`` sees it; on Linux, the command's keeper (:mod:`._keeper`)
collects those, and the token and the session only back it up (a command
that killed its keeper). Without a keeper, if evalstats itself is killed
(``kill -9``), a watchdog does it: a small process of its own session
(:func:`start_watchdog`), told on a pipe which commands are running, notices
the pipe's end when evalstats dies and ends every command it was told of.
It gets none of evalstats' secrets (:func:`_watchdog_environment`), and
:func:`hide_environment` keeps evalstats' own environment from the commands.
:func:`sweep` removes the temporary folders a killed evalstats left behind
(those whose owner process is gone).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from ._workspace import OWNER_FILE, read_regular, remove_tree

__all__ = [
    "OWNER_FILE",
    "PREFIXES",
    "TOKEN_VARIABLE",
    "end_tree",
    "hide_environment",
    "kill_round",
    "members",
    "new_token",
    "register",
    "sweep",
    "unregister",
    "write_owner",
]

#: The environment variable that marks every process of one command.
TOKEN_VARIABLE = "EVALSTATS_TASK_TOKEN"


#: Prefixes of the temporary folders the ``cmd:`` harness makes.
PREFIXES = ("evalstats-ws-", "evalstats-trace-")

_PROC = Path("/proc")

# An owner file holds a pid and a start time: a few dozen bytes.
_OWNER_CAP = 100


def new_token() -> str:
    """A fresh token for one command."""
    return secrets.token_hex(16)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """``(state, session, start time)`` of a process, or None when it is gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold anything.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode(), int(fields[3]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _holds(pid: int, marker: bytes) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return marker in environ.split(b"\0")


def members(token: str, session: int | None) -> list[int]:
    """Live processes of this user in ``session`` (unless None) or holding ``token``.

    [] without ``/proc``.
    """
    if not _PROC.is_dir():
        return []
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    me, uid = os.getpid(), os.getuid()
    found = []
    try:
        entries = list(os.scandir(_PROC))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        info = _stat(pid)
        if info is None or info[0] in ("Z", "X"):  # a zombie is dead already
            continue
        if (session is not None and info[1] == session) or _holds(pid, marker):
            found.append(pid)
    return found


def _signal(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _signal_group(pgid: int | None, sig: int) -> None:
    if pgid is not None and pgid > 1:  # never 0 (our own group) nor -1 (everything)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)


def signal_tree(pgid: int | None, token: str, sig: int) -> None:
    """Send ``sig`` to the command's group and to every process :func:`members` finds.

    ``pgid`` is the command's pid (its group and its session); with None,
    only the token is looked for.
    """
    _signal_group(pgid, sig)
    _signal(members(token, pgid), sig)


def kill_round(pgid: int | None, token: str) -> int:
    """SIGKILL the command's group and every member found; how many were found."""
    _signal_group(pgid, signal.SIGKILL)
    left = members(token, pgid)
    _signal(left, signal.SIGKILL)
    return len(left)


def end_tree(pgid: int | None, token: str, *, within: float = 1.0) -> bool:
    """SIGKILL the command's whole tree until none of it is left; False if ``within`` s passed.

    Rounds repeat because a process may fork while the previous round runs.
    """
    deadline = time.monotonic() + within
    while kill_round(pgid, token):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


# --- what a command can read of evalstats ---------------------------------------

_PR_SET_DUMPABLE = 4
_hidden: bool | None = None


def hide_environment() -> bool:
    """Keep evalstats' environment and memory from the commands it runs (Linux); whether it could.

    A command runs as the same user as evalstats, so it could read
    ``/proc/<evalstats' pid>/environ``, every variable evalstats was given
    (``AWS_SECRET_ACCESS_KEY``, ``DB_PASSWORD``), and its memory, by a
    debugger or ``/proc/<pid>/mem``. ``prctl(PR_SET_DUMPABLE, 0)`` makes
    evalstats non-dumpable: those files then belong to root, and attaching
    is refused, to every process of the user; only root (a process with
    ``CAP_SYS_PTRACE``, ``CAP_SYS_ADMIN`` or ``CAP_PERFMON``) still reads
    them. The cost: a running evalstats
    writes no core dump and takes no debugger. The first call does it (before
    the first command starts), later calls return its result; elsewhere it
    does nothing and returns False.
    """
    global _hidden
    if _hidden is None:
        _hidden = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                _hidden = libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
            except (ImportError, OSError, AttributeError):
                pass
    return _hidden


# --- the watchdog ----------------------------------------------------------------

_lock = threading.Lock()
_watchdog: subprocess.Popen[bytes] | None = None


def start_watchdog() -> None:
    """Start the watchdog now, if it is not running.

    Called before a command is spawned, so that registering the command right
    after is one write on an open pipe: were the watchdog started only then, a
    kill -9 during its start would leave the new command running.
    """
    global _watchdog
    with _lock:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = _start()


def _tell(line: str) -> None:
    global _watchdog
    with _lock:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = _start()
            if _watchdog is None:
                return
        try:
            assert _watchdog.stdin is not None
            _watchdog.stdin.write(line.encode() + b"\n")
            _watchdog.stdin.flush()
        except OSError:
            _watchdog = None


# Of our variables, the watchdog gets only what finds Python and evalstats.
_WATCHDOG_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "VIRTUAL_ENV")


def _watchdog_environment() -> dict[str, str]:
    """The watchdog's variables: what finds Python and evalstats, never a secret.

    Its ``/proc/PID/environ`` is open to the commands (it is a process of
    the same user, and dumpable), so it gets none of evalstats' secrets.
    """
    from ..results._file import is_secret_name

    return {
        k: v
        for k, v in os.environ.items()
        if (k in _WATCHDOG_ENV or k.startswith("PYTHON")) and not is_secret_name(k)
    }


def _start() -> subprocess.Popen[bytes] | None:
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from evalstats.running._reaper import watch; watch()"],
            env=_watchdog_environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # out of reach of a Ctrl-C meant for evalstats
            close_fds=True,
        )
    except OSError:
        return None
    atexit.register(_stop, proc)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=2.0)


def register(token: str, pgid: int) -> None:
    """Tell the watchdog a command is running (started on first use)."""
    _tell(f"+ {token} {pgid}")


def unregister(token: str) -> None:
    """Tell the watchdog a command's tree has been ended."""
    _tell(f"- {token}")


def watch() -> None:
    """The watchdog's loop: read registrations until the pipe ends, then end them all."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    running: dict[str, int] = {}
    for line in sys.stdin.buffer:
        parts = line.decode(errors="replace").split()
        if len(parts) == 3 and parts[0] == "+" and parts[2].isdigit():
            running[parts[1]] = int(parts[2])
        elif len(parts) == 2 and parts[0] == "-":
            running.pop(parts[1], None)
    for token, pgid in running.items():
        end_tree(pgid, token, within=5.0)


# --- leftover folders ------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    info = _stat(pid)
    return None if info is None else info[2]


def write_owner(folder: str | os.PathLike[str]) -> None:
    """Mark ``folder`` as used by this process (its pid and start time)."""
    pid = os.getpid()
    start = _start_time(pid)
    Path(folder, OWNER_FILE).write_text(f"{pid} {start if start is not None else '-'}\n")


# The largest pid an owner file may name (Linux allows 2**22).
_MAX_PID = 1 << 22


def _owner_alive(text: str) -> bool:
    from .._files import process_running

    parts = text.split()
    if len(parts) != 2 or not parts[0].isdecimal() or len(parts[0]) > 7:
        return True  # not ours to judge: keep it
    pid = int(parts[0])
    if not process_running(pid):
        return False
    if not 1 < pid <= _MAX_PID:
        return True
    if parts[1].isdecimal() and len(parts[1]) < 20 and _PROC.is_dir():
        # The pid may have been reused by another process since.
        return _start_time(pid) == int(parts[1])
    return True


def sweep(folder: str | os.PathLike[str] | None = None) -> list[str]:
    """Remove the harness's temporary folders whose owner process is gone.

    Only folders named with :data:`PREFIXES` that hold an :data:`OWNER_FILE`
    naming a process that no longer runs are removed; kept workspaces
    (``--keep-workspaces``) have no owner file and stay. Returns the paths
    removed. It never raises and never waits: a folder it cannot read or
    remove (whatever a killed run's command left in it: an owner file that is
    a FIFO, folders thousands deep, no permissions) is skipped or left, and a
    later sweep tries again.
    """
    base = Path(tempfile.gettempdir() if folder is None else folder)
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(PREFIXES):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            raw, _ = read_regular(os.path.join(entry.path, OWNER_FILE), cap=_OWNER_CAP)
            text = raw.decode("ascii")
        except (OSError, UnicodeDecodeError):
            continue
        if not _owner_alive(text) and remove_tree(entry.path, last=OWNER_FILE):
            removed.append(entry.path)
    return removed
