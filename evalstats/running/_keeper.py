"""The keeper: on Linux, the parent of one ``cmd:`` command, which ends all the command leaves.

A command's descendants can hide from every mark evalstats sets on them: a
new session (``setsid()``), the task's token dropped from the environment or
overwritten, a fork and an exit on every hop so that no pid lasts. None of
them can leave the process tree. evalstats starts each command through a
keeper, a small process that marks itself a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``): every descendant orphaned on the way
becomes the keeper's child, and the keeper ends the command by killing its
children until it has none. A process it has not yet reaped keeps its pid,
so nothing but the command's own processes is ever signalled.

It runs as a script, ``python -I -S _keeper.py STATUS_FD PROGRAM ARGS...``:
the standard library only, no variable of evalstats' environment (it gets
the command's), a few milliseconds to start. It speaks with evalstats
through

- its stdin, the control pipe, whose other end only evalstats holds: ``t``
  asks it to send SIGTERM to the command's tree (the time is up); the end of
  file, when evalstats closes the pipe or dies (even by ``kill -9``), asks it
  to end everything now;
- ``STATUS_FD``, on which it writes ``pid N`` once the command runs and
  ``exit N`` or ``signal N`` once the command has ended;
- stdout and stderr, which it leaves to the command.

The command runs in a session of its own, with stdin at end of file, the
signals Python ignores (SIGPIPE, SIGXFSZ) back at their defaults, and
``PR_SET_PDEATHSIG`` set to SIGKILL, so it dies with its keeper. When it
exits, what it left running has :data:`LINGER_S` to end by itself; then all
of it is killed and reaped (for :data:`END_WITHIN_S` at most) and the keeper
exits. SIGTERM, SIGINT or SIGHUP to the keeper ends everything too.

What it cannot do: a process of the same user may kill the keeper itself
(SIGKILL cannot be caught); the command then dies of its parent-death
signal, and evalstats ends what still holds the token or the session, but a
descendant that had left both is out of reach. Without ``prctl`` (not
Linux, or a seccomp policy that refuses it) orphans go to init as they
would anyway.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

#: Seconds what the command left running may take to end by itself once it exited.
LINGER_S = 0.5

#: Seconds the keeper spends killing what is left at most.
END_WITHIN_S = 5.0

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_ENDING = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})

_libc = None


def _prctl(option: int, value: int) -> bool:
    global _libc
    try:
        if _libc is None:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        return _libc.prctl(option, value, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


class _Tree:
    """The command and the keeper's other children."""

    def __init__(self, me: int) -> None:
        self.me = me
        self.command = 0
        self.status: str | None = None
        self.own_children = f"/proc/{me}/task/{me}/children"

    def children(self) -> list[int]:
        """The keeper's live and unreaped children."""
        try:
            with open(self.own_children, "rb") as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            pass
        found = []  # a kernel without the children file: look for our pid as parent
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat", "rb") as f:
                        raw = f.read()
                    if int(raw[raw.rfind(b")") + 2 :].split()[1]) == self.me:
                        found.append(int(name))
                except (OSError, ValueError, IndexError):
                    continue
        return found

    def reap(self) -> bool:
        """Collect every child that ended; whether any child is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.command:
                self.command = 0
                if os.WIFSIGNALED(status):
                    self.status = f"signal {os.WTERMSIG(status)}"
                else:
                    self.status = f"exit {os.waitstatus_to_exitcode(status)}"

    def signal_all(self, sig: int) -> int:
        """Send ``sig`` to the command's group (while it is ours) and to every child."""
        group = self.command
        if group:
            try:
                os.killpg(group, sig)
            except OSError:
                group = 0
        sent = 0
        for pid in self.children():
            try:
                if group and os.getpgid(pid) == group:
                    continue  # the group had it
                os.kill(pid, sig)
                sent += 1
            except OSError:
                continue
        return sent

    def end(self, within: float) -> bool:
        """Kill and reap until no child is left; False if ``within`` seconds passed first."""
        deadline = time.monotonic() + within
        while True:
            killed = self.signal_all(signal.SIGKILL)
            if not self.reap():
                return True
            if time.monotonic() > deadline:
                return False
            if not killed:
                time.sleep(0.001)  # children that are dying: their orphans come next


def _start(argv: list[str], devnull: int, me: int) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setsid()
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != me:  # the keeper died before the signal was set
            os._exit(1)
        os.dup2(devnull, 0)
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, *_ENDING):
            signal.signal(sig, signal.SIG_DFL)
        os.execv(argv[0], argv)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(2, f"evalstats: cannot run {argv[0]!r}: {exc}\n".encode(errors="replace"))
    os._exit(127)


def _write(fd: int, line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, line.encode() + b"\n")


def main(argv: list[str]) -> int:
    """Run the command ``argv[2:]`` and keep it; ``argv[1]`` is the status descriptor."""
    status_fd = int(argv[1])
    command = argv[2:]
    os.set_inheritable(status_fd, False)
    me = os.getpid()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    for sig in (signal.SIGCHLD, *_ENDING):
        signal.signal(sig, lambda *_: None)
    tree = _Tree(me)
    devnull = os.open(os.devnull, os.O_RDONLY)
    tree.command = _start(command, devnull, me)
    os.close(devnull)
    _write(status_fd, f"pid {tree.command}")
    control = 0  # stdin
    linger_until: float | None = None
    try:
        while True:
            left = tree.reap()
            if tree.status is not None:
                if not left:
                    break
                now = time.monotonic()
                if linger_until is None:
                    linger_until = now + LINGER_S
                if now >= linger_until:
                    break
            wait = None if linger_until is None else max(0.0, linger_until - time.monotonic())
            ready, _, _ = select.select([control, wake_r], [], [], wait)
            if wake_r in ready:
                woken = b""
                with contextlib.suppress(OSError):
                    woken = os.read(wake_r, 4096)
                if any(n in _ENDING for n in woken):
                    break
            if control in ready:
                data = os.read(control, 4096)
                if not data:
                    break  # evalstats closed the pipe, or is gone
                if b"t" in data:
                    tree.signal_all(signal.SIGTERM)
    finally:
        ended = tree.end(END_WITHIN_S)
    if tree.status is not None:
        _write(status_fd, tree.status)
    return 0 if ended else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
