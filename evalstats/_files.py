"""Input files read within bounds; output files written whole or not at all.

Every file evalstats reads (a suite, a results file, another tool's log, a
prices table, a prompt given as ``@FILE``, a reviews or calibration file) is
opened by :func:`open_input` or :func:`read_input`: it must be a regular file,
told from its status *before* it is opened, so that a named pipe (FIFO), a
device such as ``/dev/zero``, a socket or a folder is refused with one line
instead of blocking the command for ever or filling its memory. The file is
then opened without blocking and its status checked again on the open file,
so a name swapped between the two looks is caught too. A file read whole has
a size cap (:data:`INPUT_LIMIT` unless the reader says less), checked on the
bytes actually read, not on the size the file claims; and a document nested
deeper than its parser takes is refused by :func:`too_deep` in one line.

A figure, an HTML report or any other file evalstats makes for a person is
written by :func:`write_output`: into a temporary file beside the target, synced,
then moved onto the target's name in one step. So the target either keeps what
it held or holds the whole new file: a drawing that fails, a full disk or an
interruption leaves nothing behind (no empty file that blocks the next try),
and an existing file is never truncated. An existing target is refused unless
``force`` is given, and even then it is replaced, not written through: a
symbolic link planted at the name is replaced by the file, its target left alone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from .errors import EvalStatsError, InvalidArgument

__all__ = [
    "INPUT_LIMIT",
    "check_input",
    "check_opened",
    "open_input",
    "place_file",
    "process_running",
    "read_input",
    "refuse_existing",
    "replacing",
    "too_deep",
    "write_output",
]

#: The most a file read whole may hold (a suite, a log, a prices table, a prompt).
INPUT_LIMIT = 512 << 20

#: How deep a value evalstats writes may nest (lists and mappings inside each
#: other): well inside what its readers take (libyaml stops at 1000 levels, the
#: JSON parsers at the interpreter's recursion limit, about 1000 less the stack
#: in use), so that nothing it writes is refused when read back.
DEPTH_LIMIT = 200


def _kind(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_kind(shown: str, mode: int, what: str, error: type[EvalStatsError]) -> None:
    kind = _kind(mode)
    if kind is None:
        return
    if kind == "a folder":
        # Left to the caller's own words for a folder, as when ``open`` finds one.
        raise IsADirectoryError(errno.EISDIR, "Is a directory", shown)
    raise error(f"{shown}: is {kind}, not {what}; give a regular file")


def check_input(
    path: str | os.PathLike[str],
    *,
    what: str = "a file",
    error: type[EvalStatsError] = InvalidArgument,
) -> None:
    """Raise ``error`` when ``path`` is not a regular file, without opening it.

    For readers that open the file by name themselves (a table read by pandas,
    an Inspect log read by Inspect). A missing file and a folder raise
    :class:`FileNotFoundError` and :class:`IsADirectoryError`, which each
    reader words for its own file; a FIFO, a device or a socket raises
    ``error`` with one line: ``PATH: is a named pipe (FIFO), not WHAT; ...``.
    """
    shown = os.fspath(path)
    _refuse_kind(shown, os.stat(shown).st_mode, what, error)


def check_opened(
    fd: int,
    path: str | os.PathLike[str],
    *,
    what: str = "a file",
    error: type[EvalStatsError] = InvalidArgument,
) -> None:
    """:func:`check_input` for a file already open (opened without blocking) as ``fd``."""
    _refuse_kind(os.fspath(path), os.fstat(fd).st_mode, what, error)


def open_input(
    path: str | os.PathLike[str],
    *,
    what: str = "a file",
    error: type[EvalStatsError] = InvalidArgument,
) -> IO[bytes]:
    """``path`` open for reading in binary, refused unless it is a regular file.

    The status is looked at before the open (nothing is opened that is not a
    regular file), the open does not block (a FIFO put at the name meanwhile
    opens at once), and the open file's status is looked at again. Errors of
    the system (a missing file, a folder, no permission) are raised as they
    are, for the caller to word; anything else that is not a regular file
    raises ``error``, as :func:`check_input` does.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> fifo = os.path.join(folder, "pipe")
    >>> os.mkfifo(fifo)
    >>> open_input(fifo, what="a suite file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: ...pipe: is a named pipe (FIFO), not a suite file; ...
    """
    shown = os.fspath(path)
    check_input(shown, what=what, error=error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOCTTY", 0)
    fd = os.open(shown, flags)
    try:
        check_opened(fd, shown, what=what, error=error)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(
    path: str | os.PathLike[str],
    *,
    what: str = "a file",
    limit: int = INPUT_LIMIT,
    error: type[EvalStatsError] = InvalidArgument,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Opened by :func:`open_input`; a file that holds more than ``limit`` bytes
    (counted as read, so a file that grows or claims a size of 0 is caught
    too) raises ``error``: ``PATH: holds more than 512 MiB; WHAT is read whole,
    at most 512 MiB``. System errors are raised as they are.
    """
    shown = os.fspath(path)
    with open_input(shown, what=what, error=error) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        size = _size(limit)
        raise error(f"{shown}: holds more than {size}; {what} is read whole, at most {size}")
    return data


def too_deep(shown: str, what: str) -> str:
    """The line for a document nested deeper than its parser takes (a
    :class:`RecursionError`, or libyaml's limit), naming ``shown``."""
    return (
        f"{shown}: nested too deep to read as {what} (lists or mappings inside each other "
        "hundreds of levels deep)"
    )


def _size(n: int) -> str:
    for unit, step in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= step:
            return f"{n / step:g} {unit}"
    return f"{n} bytes"


#: What a refusal of an existing file tells the reader to do.
FORCE_HINT = "choose another path, or add --force (force=True) to replace it"


def refuse_existing(
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    error: type[EvalStatsError] = InvalidArgument,
) -> None:
    """Raise ``error`` when ``path`` cannot take an output file: it exists (and not
    ``force``), it is a folder, or its folder is missing.

    Called for every output of a command before anything is written, so that
    a refusal leaves every file as it was.
    """
    shown = os.fspath(path)
    if os.path.isdir(shown) and not os.path.islink(shown):
        raise error(f"{shown} is a folder; give the path of a file")
    if os.path.lexists(shown) and not force:
        raise error(f"{shown} already exists; {FORCE_HINT}")
    folder = os.path.dirname(shown) or "."
    if not os.path.isdir(folder):
        raise error(f"cannot create {shown}: the folder {folder} does not exist")


def write_output(
    path: str | os.PathLike[str],
    content: bytes | str | Callable[[IO[bytes]], object],
    *,
    force: bool = False,
    mode: int = 0o644,
    error: type[EvalStatsError] = InvalidArgument,
) -> Path:
    """Write ``content`` to ``path`` whole or not at all; return ``path``.

    Parameters
    ----------
    path : path
        The file to make. Its folder must exist.
    content : bytes, str or callable
        The bytes, text (written as UTF-8), or a function that writes them to
        the binary stream it is given (``lambda f: fig.savefig(f, format="png")``).
    force : bool
        Replace an existing file. Without it an existing path is refused and
        left as it was.
    mode : int
        The new file's permissions (0600 for files that may hold private answers).
    error : exception class
        What a refusal or a failure raises, with one line naming the path.

    Raises
    ------
    EvalStatsError
        ``error``: the path exists (without ``force``), is a folder, its
        folder is missing, or the writing failed (the reason, such as a full
        disk). In every case ``path`` is as it was and no temporary file is left.
    """
    shown = os.fspath(path)
    refuse_existing(shown, force=force, error=error)
    folder = os.path.dirname(shown) or "."
    name = os.path.basename(shown)
    import tempfile  # only for a file written: reading verbs do without it (and random)

    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise error(f"cannot create {shown}: {exc.strerror or exc}") from None
    try:
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as handle:
                if isinstance(content, str):
                    handle.write(content.encode("utf-8"))
                elif isinstance(content, bytes | bytearray):
                    handle.write(content)
                else:
                    content(handle)
                handle.flush()
                os.fsync(handle.fileno())
            _move(temporary, shown, force=force, error=error)
        except OSError as exc:
            raise error(f"cannot write {shown}: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(folder)
    return Path(shown)


def place_file(
    temporary: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    error: type[EvalStatsError] = InvalidArgument,
) -> None:
    """Give the finished (synced) file ``temporary``, in the folder of ``path``,
    the name ``path`` in one step, as :func:`write_output` does: an existing
    ``path`` is refused unless ``force`` (and then replaced, never written
    through). ``temporary`` is gone afterwards, whatever happens."""
    shown, temp = os.fspath(path), os.fspath(temporary)
    try:
        try:
            _move(temp, shown, force=force, error=error)
        except OSError as exc:
            raise error(f"cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    _sync_folder(os.path.dirname(shown) or ".")


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    keep: bool = False,
    error: type[EvalStatsError] = InvalidArgument,
) -> Iterator[str]:
    """The path to write a file made in several steps (a results file) that
    replaces ``path`` whole or not at all.

    Without ``force``, or when ``path`` does not exist, yields ``path`` itself
    (refused first by :func:`refuse_existing`: an existing path, a folder, a
    missing folder), for the writer to create exclusively. With ``force`` over
    an existing file, yields a fresh name beside it; when the block ends, the
    file made there (if any) takes ``path``'s name in one step, so ``path``
    holds either the old file or the whole new one, never a half-written one.
    When the block raises, what it made there is removed and ``path`` is as it
    was; with ``keep``, what it made takes ``path``'s name all the same (a run
    stopped after some samples keeps them; a writer that made nothing leaves
    ``path`` as it was).
    """
    shown = os.fspath(path)
    refuse_existing(shown, force=force, error=error)
    if not (force and os.path.lexists(shown)):
        yield shown
        return
    import secrets

    folder = os.path.dirname(shown) or "."
    temporary = os.path.join(folder, f".{os.path.basename(shown)}.{secrets.token_hex(6)}.part")
    try:
        yield temporary
    except BaseException:
        if keep:
            _take_name(temporary, shown, folder, error)
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _take_name(temporary, shown, folder, error)


def _take_name(temporary: str, shown: str, folder: str, error: type[EvalStatsError]) -> None:
    """Move the file made at ``temporary`` (if any) onto ``shown`` in one step."""
    if not os.path.lexists(temporary):
        return
    try:
        os.replace(temporary, shown)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise error(f"cannot replace {shown}: {exc.strerror or exc}") from None
    _sync_folder(folder)


def _move(temporary: str, shown: str, *, force: bool, error: type[EvalStatsError]) -> None:
    """Give the finished temporary file the target's name, in one step."""
    if force:
        os.replace(temporary, shown)
        return
    # A hard link fails if the name was taken meanwhile: no check-then-write race.
    try:
        os.link(temporary, shown)
    except FileExistsError:
        raise error(f"{shown} already exists; {FORCE_HINT}") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV):
            raise
        # A file system without hard links: checked just before, replaced in one step.
        if os.path.lexists(shown):
            raise error(f"{shown} already exists; {FORCE_HINT}") from None
        os.replace(temporary, shown)
        return
    os.unlink(temporary)


def _sync_folder(folder: str) -> None:
    """Make the new name durable (best effort: not every system syncs folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: The largest process id (Linux allows 2**22).
MAX_PID = 1 << 22


def process_running(pid: int) -> bool:
    """Whether process ``pid`` runs: False only when the system says it does not
    (a pid out of range, or one this process may not signal, counts as running,
    so that what it owns is left alone)."""
    if not 1 < pid <= MAX_PID:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
