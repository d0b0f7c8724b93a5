"""Output files written whole or not at all.

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
import secrets
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from .errors import EvalStatsError, InvalidArgument

__all__ = ["refuse_existing", "replacing", "write_output"]

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
