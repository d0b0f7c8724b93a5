"""The results file: JSON Lines with a manifest, one record per sample, a summary.

A run writes one file, one JSON object per line, each with a ``"type"``:

* ``{"type": "manifest", "format": 1, ...}`` first: what produced the run (the
  suite and its SHA-256, the cases, the variants, the schedule, the seed, the
  machine; see :data:`FORMAT_VERSION`);
* ``{"type": "sample", "case": ..., "variant": ..., "repeat": ..., "status": ...,
  "checks": [...], ...}`` for every sample, in the order the samples finished;
* ``{"type": "look", "round": ..., "pairs": ..., "verdict": ..., ...}`` after
  each round of a sequential run (``evalstats run --until-decided``): what the
  anytime-valid comparison said at that look;
* ``{"type": "batch", "id": ..., "provider": ..., "state": ..., ...}`` when a run
  sends its requests to a provider's batch API (``run --batch``): each batch as
  it is submitted (before the run waits on it) and again as it ends;
* ``{"type": "summary", "status": ..., ...}`` last, when the run ended normally
  or was interrupted cleanly.

Each record's fields, and what the reader checks of them, are defined once in
:mod:`evalstats.results._records`.

Durability. :class:`ResultsWriter` creates the file exclusively (an existing
path is refused and left untouched) with mode 0600, writes each record as one
line and hands it to the operating system at once (so a crashed or killed
process loses nothing it wrote), and calls ``fsync`` at most once a second from
a background thread while there is unsynced data, and at close, so that the
data is on disk at least every second. After ``kill -9`` at any moment the file
is a valid prefix of the run: :func:`read_results` drops a cut-off last line
with a warning, and :meth:`ResultsWriter.resume` truncates it and appends.

Whatever a model returned is written: text and numbers strict JSON in UTF-8
cannot hold (a lone surrogate, NaN, ±Infinity, nesting deeper than 200 levels)
are rewritten visibly (``"\\ud800"``, ``"NaN"``) and the record's
``"recording_notes"`` list says what was rewritten and where.

Counting. :func:`sample_passed` is the one rule that turns a sample record
into pass, fail or "not measured"; :data:`COUNTING_METHOD` names its version,
so that runs counted under different rules are never compared.

Secrets. As a last line of defence, every line is checked before it is written:
a line that contains the value of an environment variable named like a secret
(:func:`is_secret_name`: ending in ``_KEY``, ``TOKEN``, ``SECRET``,
``PASSWORD``, ``CREDENTIALS`` and a few more, in any case, such as
``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ``DB_PASSWORD``), or the
password in a URL held by a variable ending in ``_URL``, ``_URI`` or ``_DSN``
(``DATABASE_URL=postgres://user:password@host/db``), is refused with
:class:`~evalstats.errors.ResultsFileError` and nothing is written. Values
shorter than 8 characters are not looked for (they would match everywhere).
"""

from __future__ import annotations

import base64
import contextlib
import gc
import json
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, TypeVar

import msgspec

from .._files import check_input, check_opened, open_input, too_deep
from .._text import short_repr
from .._validate import suggest
from ..errors import InvalidArgument, ResultsFileError
from ._recordable import MAX_DEPTH, NOTES_KEY, recordable
from ._records import (
    CHECK_STATUSES,
    FORMAT_VERSION,
    SAMPLE_STATUSES,
    BatchRecord,
    Look,
    Sample,
    manifest_problem,
    sample_problem,
    to_record,
)

__all__ = [
    "COUNTING_METHOD",
    "FORMAT_VERSION",
    "Results",
    "ResultsWriter",
    "environment",
    "is_secret_name",
    "machine_fingerprint",
    "read_results",
    "sample_passed",
]

#: Version of the rules in :func:`sample_passed` that turn verdicts into
#: pass/fail. Bump it whenever those rules change: runs counted under different
#: rules are not comparable.
COUNTING_METHOD = "1"

#: Environment variables whose values are never written: how their names end
#: (in any case). ``_KEY`` covers ``OPENAI_API_KEY`` and ``AWS_SECRET_ACCESS_KEY``.
SECRET_SUFFIXES = (
    "_KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "_PWD",
    "_PASS",
    "CREDENTIAL",
    "CREDENTIALS",
    "_AUTH",
)
#: Variables holding a URL, whose password part is never written.
URL_SUFFIXES = ("_URL", "_URI", "_DSN")
_SECRET_MIN_LENGTH = 8
_SECRET_SUFFIXES_BYTES = tuple(s.encode("ascii") for s in SECRET_SUFFIXES)
_URL_SUFFIXES_BYTES = tuple(s.encode("ascii") for s in URL_SUFFIXES)


def is_secret_name(name: str) -> bool:
    """Whether the environment variable ``name`` is taken to hold a secret.

    Examples
    --------
    >>> names = ["AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "PGPASSWORD", "GH_TOKEN", "PATH"]
    >>> [n for n in names + ["GOOGLE_APPLICATION_CREDENTIALS", "AWS_ACCESS_KEY_ID"]
    ...  if is_secret_name(n)]  # doctest: +NORMALIZE_WHITESPACE
    ['AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'PGPASSWORD', 'GH_TOKEN',
     'GOOGLE_APPLICATION_CREDENTIALS']
    """
    return name.upper().endswith(SECRET_SUFFIXES)


def _url_passwords(value: str) -> list[str]:
    """The password of a URL with credentials, as written and decoded."""
    if "@" not in value or "://" not in value:
        return []
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        return []
    return [] if not password else list(dict.fromkeys((password, unquote(password))))


#: Seconds between two ``fsync`` calls at most (and the longest unsynced time).
SYNC_INTERVAL_S = 1.0

TRUNCATED_WARNING = "the last line was truncated (an interrupted run?) and was dropped"
NO_SUMMARY_WARNING = "no summary: the run did not finish"


# --- serialisation and the secret guard --------------------------------------


def _secrets() -> list[tuple[str, str, str]]:
    """(name, value, value as escaped inside a JSON string) of secret variables."""
    env = os.environ
    # This runs before every line, so it must be cheap. Iterating ``os.environ``
    # decodes every name and value (about 1 us each); CPython's encoded store
    # ``os.environ._data`` lets us match the names as bytes and decode only the
    # few that match. It is read, never written, and the public way is the
    # fallback.
    raw = getattr(env, "_data", None)
    if isinstance(raw, dict) and all(type(k) is bytes for k in raw):
        names = [os.fsdecode(k) for k in list(raw) if k.upper().endswith(_SECRET_SUFFIXES_BYTES)]
        urls = [
            os.fsdecode(k)
            for k, v in list(raw.items())
            if b"@" in v and k.upper().endswith(_URL_SUFFIXES_BYTES)
        ]
    else:
        names = [n for n in list(env) if is_secret_name(n)]
        urls = [n for n in list(env) if n.upper().endswith(URL_SUFFIXES)]
    found = []
    values = [(name, env.get(name)) for name in names]
    for name in urls:
        values.extend((name, p) for p in _url_passwords(env.get(name) or ""))
    for name, value in values:
        if value is not None and len(value) >= _SECRET_MIN_LENGTH:
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]
            found.append((name, value, escaped))
    return found


def _jsonable(value: Any) -> Any:
    """``json.dumps`` fallback: read-only mappings (such as a case's messages) as objects."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _schedule_text(chunk: list[Any]) -> bytes:
    """Items of a manifest's schedule as JSON, without the brackets, after the secret guard."""
    try:
        text = _dumps(chunk)  # type: ignore[arg-type]
    except (ValueError, RecursionError):
        text = _dumps(recordable(chunk, "manifest", strict=True)[0])
    for name, value, escaped in _secrets():
        if value in text or escaped in text:
            raise ResultsFileError(
                f"refusing to write a credential (the value of ${name}) into the results file"
            )
    return text[1:-1].encode("utf-8")


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(
        record, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_jsonable
    )


def _serialize(record: Mapping[str, Any], what: str) -> bytes:
    """One JSON line (with its newline) as UTF-8, after the secret guard.

    Text and numbers JSON cannot hold (a lone surrogate, NaN, ±Infinity, a
    value nested too deeply: what a model may return) are rewritten visibly
    by :func:`evalstats.results._recordable.recordable`, and the notes of what was
    rewritten go into the record under ``"recording_notes"``. Objects JSON
    has no form for are refused with :class:`InvalidArgument`.
    """
    try:
        try:
            text = _dumps(record)
            if text.count("[") + text.count("{") > MAX_DEPTH:
                # Possibly nested deeper than the reader takes (json.dumps goes
                # about as deep as the readers give up): cut it as below, so
                # that nothing is written that the reader would refuse.
                clean, notes = recordable(record, what, strict=True)
                if notes:
                    raise RecursionError
            line = (text + "\n").encode("utf-8")
        except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
            clean, notes = recordable(record, what, strict=True)
            if notes:
                clean[NOTES_KEY] = [*(clean.get(NOTES_KEY) or ()), *notes]
            text = _dumps(clean)
            line = (text + "\n").encode("utf-8")
    except (TypeError, ValueError, RecursionError) as error:
        raise InvalidArgument(f"the {what} record cannot be written as JSON: {error}") from None
    secrets = _secrets()
    if secrets:
        folded = text.casefold()
        for name, value, escaped in secrets:
            # The value as written, in another case, or as base64 (Basic auth).
            encoded = base64.b64encode(value.encode()).decode()
            if value.casefold() in folded or escaped.casefold() in folded or encoded in text:
                raise ResultsFileError(
                    f"refusing to write a credential (the value of ${name}) into the results file"
                )
    return line


_BUSY = "is being written by another evalstats run; wait for it to end (or stop it) before resuming"


def _lock(fd: int, shown: str, *, busy: str = _BUSY) -> None:
    """Take an exclusive advisory lock, so two writers never share one file.

    ``busy`` ends the error when another process holds the lock.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Windows
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ResultsFileError(f"{shown} {busy}") from None
    except OSError:  # a file system without locks: go on without one
        pass


def _cannot_create(shown: str, error: OSError) -> ResultsFileError:
    """Why a new file (results, or reviews) cannot be created at ``shown``."""
    if isinstance(error, FileNotFoundError):
        folder = os.path.dirname(shown) or "."
        return ResultsFileError(f"cannot create {shown}: the folder {folder} does not exist")
    return ResultsFileError(f"cannot create {shown}: {error.strerror or error}")


def sample_passed(record: Mapping[str, Any]) -> bool | None:
    """Whether a sample passed, under counting method :data:`COUNTING_METHOD`.

    Parameters
    ----------
    record : mapping
        A sample record, with a ``"status"`` and a list of ``"checks"``, each
        with a ``"status"`` of ``"passed"``, ``"failed"`` or ``"unscored"``.

    Returns
    -------
    bool or None
        ``None`` for an ``unmeasured`` sample (the service gave no answer: it
        leaves pass rates); ``False`` for an ``incomplete`` one (it stays in the
        denominator); for a completed sample, ``True`` exactly when at least
        one check was scored and every scored check passed. **Unscored is not
        passed**: a sample whose checks were all unscored showed nothing and
        does not pass.

    Raises
    ------
    InvalidArgument
        When the record lacks a status or checks, or holds an unknown status.

    Examples
    --------
    >>> sample_passed({"status": "completed", "checks": [
    ...     {"status": "passed"}, {"status": "unscored"}]})
    True
    >>> sample_passed({"status": "completed", "checks": [{"status": "unscored"}]})
    False
    >>> sample_passed({"status": "unmeasured", "checks": []}) is None
    True
    """
    if not isinstance(record, Mapping):
        raise InvalidArgument(f"record={record!r} must be a sample record (a mapping)")
    status = record.get("status")
    if status not in SAMPLE_STATUSES:
        raise InvalidArgument(
            f"status={status!r} is not a sample status{suggest(str(status), SAMPLE_STATUSES)}"
        )
    checks = record.get("checks")
    if not isinstance(checks, list | tuple):
        raise InvalidArgument(f"checks={checks!r} must be a list of check verdicts")
    scored = False
    failed = False
    for i, check in enumerate(checks):
        verdict = check.get("status") if isinstance(check, Mapping) else None
        if verdict == "passed":
            scored = True
        elif verdict == "failed":
            scored = failed = True
        elif verdict != "unscored":
            raise InvalidArgument(
                f"checks[{i}] status={verdict!r} is not a check status"
                f"{suggest(str(verdict), CHECK_STATUSES)}"
            )
    if status == "unmeasured":
        return None
    if status == "incomplete":
        return False
    return scored and not failed


# --- the machine --------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return ""


def machine_fingerprint() -> str:
    """A short, stable identifier of this machine, for comparing runs.

    The first 16 hexadecimal digits of the SHA-256 of the host name, the
    architecture, the processor, the CPU count and (where the system has
    ``/proc/cpuinfo``) the CPU model name. Two runs are only compared when
    their fingerprints match, because latency, and with local models even
    answers, depend on the machine.

    Examples
    --------
    >>> fp = machine_fingerprint()
    >>> len(fp), fp == machine_fingerprint()
    (16, True)
    """
    # imported here: reading a results file needs neither (hashlib loads OpenSSL)
    import hashlib
    import platform

    parts = [
        platform.node(),
        platform.machine(),
        platform.processor(),
        str(os.cpu_count()),
        _cpu_model(),
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def environment() -> dict[str, str]:
    """The environment to record in a manifest.

    Returns ``{"python": version, "os": system and release, "arch": machine
    architecture, "machine": machine_fingerprint()}``.

    Examples
    --------
    >>> sorted(environment())
    ['arch', 'machine', 'os', 'python']
    """
    import platform

    return {
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}".strip(),
        "arch": platform.machine(),
        "machine": machine_fingerprint(),
    }


# --- reading -------------------------------------------------------------------


@dataclass(frozen=True)
class Results:
    """A results file as read: manifest, samples in file order, summary, warnings.

    ``summary`` is None when the run did not end cleanly (a crash, ``kill -9``,
    or a file that is still being written). ``warnings`` says what the reader
    tolerated, such as a truncated last line or a missing summary.

    The records are the plain dicts and lists that JSON gives, but identical
    parts of different samples (the prompt of a case and variant, equal check
    verdicts, equal token counts) are one shared object, which keeps a file of
    100,000 samples in well under half the memory: treat them as read-only.
    """

    path: str | None
    manifest: dict[str, Any]
    samples: tuple[dict[str, Any], ...]
    summary: dict[str, Any] | None
    warnings: tuple[str, ...] = ()
    looks: tuple[dict[str, Any], ...] = ()
    #: The ``batch`` records of a run that used a provider's batch API, in file order.
    batches: tuple[dict[str, Any], ...] = ()

    def variants(self) -> tuple[str, ...]:
        """The variant names, in manifest order.

        A manifest variant may be an object with a ``"name"`` or a bare name.
        When the manifest lists no variants, the names come from the samples,
        in order of first appearance.
        """
        listed = self.manifest.get("variants")
        if isinstance(listed, list) and listed:
            names = []
            for v in listed:
                name = v.get("name") if isinstance(v, Mapping) else v
                if isinstance(name, str) and name not in names:
                    names.append(name)
            return tuple(names)
        return tuple(dict.fromkeys(s["variant"] for s in self.samples))

    def outcomes(self, variant: str) -> dict[str, list[bool | None]]:
        """Per case, the outcome of each repeat of ``variant`` (list index = repeat).

        Each entry is ``True`` or ``False`` (see :func:`sample_passed`) for a
        measured sample and ``None`` for an unmeasured or missing one, so that
        repeats of two variants stay aligned for paired comparisons.

        The cases and the number of repeats come from the manifest: the
        ``schedule`` when there is one (its slots for this variant), else the
        manifest ``cases`` (without holdout cases unless ``include_holdout``)
        and ``runs``. Cases and repeats found only in the samples are added.
        When a slot has two samples (which a correct run never writes), the
        first one counts and the reader has warned about it.
        """
        _check_variant(variant, self.variants())
        runs = _planned_runs(self.manifest)
        slots: dict[str, int] = {}  # case -> number of repeats
        schedule = self.manifest.get("schedule")
        if isinstance(schedule, list) and schedule:
            for slot in schedule:
                if isinstance(slot, list | tuple) and len(slot) >= 5 and slot[4] == variant:
                    case, repeat = slot[0], slot[1]
                    slots[case] = max(slots.get(case, 0), int(repeat) + 1, runs)
        else:
            include_holdout = bool(self.manifest.get("include_holdout"))
            for case in self.manifest.get("cases") or ():
                if isinstance(case, Mapping) and isinstance(case.get("id"), str):
                    if case.get("holdout") and not include_holdout:
                        continue
                    slots[case["id"]] = runs
        mine = [s for s in self.samples if s["variant"] == variant]
        for s in mine:
            slots[s["case"]] = max(slots.get(s["case"], 0), s["repeat"] + 1)
        out: dict[str, list[bool | None]] = {case: [None] * n for case, n in slots.items()}
        seen: set[tuple[str, int]] = set()
        for s in mine:
            key = (s["case"], s["repeat"])
            if key in seen:
                continue
            seen.add(key)
            out[s["case"]][s["repeat"]] = sample_passed(s)
        return out


def _why_not(line: bytes) -> str:
    """Why ``line``, which is JSON all the same, is no record (an integer of more
    than 4,300 digits, which Python will not convert), or "" when it is not JSON."""
    try:
        json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return ""
    except ValueError as exc:
        return str(exc).split(";")[0][:120]
    return ""


def _parse_line(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None


class _Sharer:
    """Shares identical parts of sample records, so 100,000 samples fit in memory.

    ``json.loads`` makes fresh key strings and fresh objects for every line.
    Across a run most of that repeats: the same keys, the same prompt for a
    case and variant, the same check verdicts. Sharing them cuts the memory
    of a read file by more than half.
    """

    def __init__(self) -> None:
        self.keys: dict[str, str] = {}
        self.prompts: dict[tuple[Any, Any], Any] = {}
        self.parts: dict[tuple[Any, ...], Any] = {}

    def _part(self, part: Any) -> Any:
        if type(part) is not dict:
            return part
        try:
            return self.parts.setdefault(tuple(part.items()), part)
        except TypeError:  # a value that is a list or an object: keep it as is
            return part

    def share(self, record: dict[str, Any]) -> dict[str, Any]:
        keys = self.keys
        record = {keys.setdefault(k, k): v for k, v in record.items()}
        prompt = record.get("prompt")
        if prompt is not None:
            where = (record.get("case"), record.get("variant"))
            seen = self.prompts.get(where)
            if seen is not None and seen == prompt:
                record["prompt"] = seen
            else:
                self.prompts[where] = prompt
        checks = record.get("checks")
        if type(checks) is list:
            record["checks"] = [self._part(c) for c in checks]
        tokens = record.get("tokens")
        if tokens is not None:
            record["tokens"] = self._part(tokens)
        return record


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many records.

    Parsed JSON holds no reference cycles, but every few hundred new objects
    the collector walks the young ones, and ever more often the old ones too;
    with 100,000 records that costs a fifth of the reading time for nothing.
    Reference counting still frees everything as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: What ``record(line, number)`` of :class:`_Scan` returns for a sample it counted
#: itself as it decoded it: kept as a sample, but not yielded by :meth:`_Scan.records`.
SAMPLE_COUNTED = ("sample", None)

#: The longest first line :class:`_Scan` holds whole when asked to read it in pieces.
LONG_LINE = 1 << 20


class _Scan:
    """One pass over a results file's lines, holding the file to its structure.

    The manifest comes first (with this reader's ``format``), then samples,
    then at most one summary, which must be the last record; a line that is
    not valid JSON is fatal unless it is the last one (an interrupted run), and
    is then dropped with a warning. Every error names the file and the line.

    How a line becomes a record is the caller's: ``manifest(line, number)``
    decodes the first record (None when it is not valid JSON) and
    ``record(line, number)`` every later one, returning ``(type, record)``,
    :data:`SAMPLE_COUNTED` for a sample it counted itself, or None when the
    line is not valid JSON. :meth:`records` yields ``(line number, record)``
    for each other sample; afterwards ``manifest``, ``summary``, ``warnings``,
    ``keep_end`` (the offset just after the last kept sample, or the manifest)
    and ``keep_newline`` (whether that prefix ends with a newline) say the rest.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        manifest: Callable[[bytes, int], dict[str, Any] | None],
        record: Callable[[bytes, int], tuple[Any, Any] | None],
        *,
        long_manifest: Callable[[Any, bytes], tuple[dict[str, Any] | None, int]] | None = None,
        opened: IO[bytes] | None = None,
    ) -> None:
        self.shown = os.fspath(path)
        self.path = path
        self._opened = opened
        self._decode_manifest = manifest
        self._decode = record
        self._long_manifest = long_manifest
        self.manifest: dict[str, Any] | None = None
        self.summary: dict[str, Any] | None = None
        self.looks: list[dict[str, Any]] = []
        self.batches: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.keep_end = 0
        self.keep_newline = True
        self.read_warnings = 0

    def _open(self) -> Any:
        """The file, opened here, or as the caller opened it (at its start)."""
        if self._opened is not None:
            f, self._opened = self._opened, None
            f.seek(0)
            return f
        shown = self.shown
        try:
            # A regular file only: a FIFO or a device is refused, never waited on.
            return open_input(self.path, what="a results file", error=ResultsFileError)
        except FileNotFoundError:
            raise ResultsFileError(f"{shown}: no such results file") from None
        except IsADirectoryError:
            raise ResultsFileError(f"{shown}: is a folder, not a results file") from None
        except OSError as error:
            raise ResultsFileError(f"{shown}: cannot read: {error.strerror or error}") from None

    def records(self) -> Iterator[tuple[int, Any]]:
        shown = self.shown
        f = self._open()
        offset = 0
        summary_line = 0
        pending: tuple[int, bytes] | None = None  # an unparsable line, fatal unless last
        last = b""  # the last kept line, to tell whether it ended with a newline
        start = 1
        with f:
            if self._long_manifest is not None:
                # A first line longer than LONG_LINE (a schedule of many samples) is
                # read in pieces by long_manifest, never held whole.
                head = f.readline(LONG_LINE)
                if len(head) == LONG_LINE and not head.endswith(b"\n"):
                    try:
                        manifest, size = self._long_manifest(f, head)
                    except RecursionError:
                        raise self._too_deep(1) from None
                    offset, start = size, 2
                    if manifest is None:
                        pending = (1, b"")
                    else:
                        self.manifest = self.check_manifest(manifest, 1)
                        self.keep_end, last = offset, b"\n"
                else:
                    f.seek(0)
            for number, line in enumerate(f, start=start):
                offset += len(line)
                if line.isspace():
                    continue
                if pending is not None:
                    why = _why_not(pending[1])
                    raise ResultsFileError(
                        f"{shown}: line {pending[0]} cannot be read: {why}"
                        if why
                        else f"{shown}: line {pending[0]} is not valid JSON; only the last line "
                        "of a results file may be cut short"
                    )
                if self.manifest is None:
                    try:
                        manifest = self._decode_manifest(line, number)
                    except RecursionError:
                        raise self._too_deep(number) from None
                    if manifest is None:
                        pending = (number, line)
                        continue
                    self.manifest = manifest
                    self.keep_end, last = offset, line
                    continue
                try:
                    decoded = self._decode(line, number)
                except RecursionError:
                    raise self._too_deep(number) from None
                if decoded is None:
                    pending = (number, line)
                    continue
                if decoded is SAMPLE_COUNTED:  # a sample the caller counted as it decoded it
                    if self.summary is not None:
                        raise self._after_summary("sample", number, summary_line)
                    self.keep_end, last = offset, line
                    continue
                kind, record = decoded
                if self.summary is not None:
                    raise self._after_summary(kind, number, summary_line)
                if kind == "sample":
                    yield number, record
                    self.keep_end, last = offset, line
                elif kind == "look":
                    # A sequential run's look after a round (evalstats.deciding._sequential):
                    # kept, so that resuming never drops the trajectory.
                    self.looks.append(record)
                    self.keep_end, last = offset, line
                elif kind == "batch":
                    # A batch sent to a provider's batch API (run --batch): kept, so
                    # that resuming polls it instead of submitting it again.
                    self.batches.append(record)
                    self.keep_end, last = offset, line
                elif kind == "summary":
                    self.summary, summary_line = record, number
                elif kind == "manifest":
                    raise ResultsFileError(f"{shown}: line {number}: a second manifest")
                else:
                    raise ResultsFileError(
                        f"{shown}: line {number}: unknown record type {short_repr(kind)}"
                        f"{suggest(str(kind), ('sample', 'look', 'batch', 'summary'))}"
                    )
        self.keep_newline = last.endswith(b"\n") if last else True
        self._finish(pending)

    def _after_summary(self, kind: Any, number: int, summary_line: int) -> ResultsFileError:
        return ResultsFileError(
            f"{self.shown}: line {number}: a {kind!r} record after the summary "
            f"(line {summary_line}); the summary must be the last record"
        )

    def _too_deep(self, number: int) -> ResultsFileError:
        """A line of lists or mappings inside each other deeper than the JSON
        parsers go (the writer cuts what it records at MAX_DEPTH levels)."""
        return ResultsFileError(too_deep(f"{self.shown}: line {number}", "a record"))

    def _finish(self, pending: tuple[int, bytes] | None) -> None:
        shown, warnings = self.shown, self.warnings
        self.read_warnings = len(warnings)  # those about lines; then those about the end
        if self.manifest is None:
            if pending is not None:
                raise ResultsFileError(
                    f"{shown}: the manifest (line {pending[0]}) is incomplete or not valid "
                    "JSON; the run was cut off before it started, or this is not a results file"
                )
            raise ResultsFileError(f"{shown}: the file is empty; it has no manifest")
        if pending is not None:
            warnings.append(
                TRUNCATED_WARNING
                if not pending[1].endswith(b"\n")
                else f"the last line (line {pending[0]}) is not valid JSON "
                "(an interrupted run?) and was dropped"
            )
        summary = self.summary
        if summary is None:
            warnings.append(NO_SUMMARY_WARNING)
        elif summary.get("status") not in (None, "finished"):
            reason = summary.get("reason")
            warnings.append(
                f"the run ended with status {summary.get('status')!r}"
                + (f": {reason}" if reason else "")
            )

    def check_manifest(self, record: Any, number: int) -> dict[str, Any]:
        """The first record, once it is known to be this format's manifest."""
        shown = self.shown
        if not isinstance(record, dict):
            raise ResultsFileError(f'{shown}: line {number} is not a JSON object with a "type"')
        kind = record.get("type")
        if kind != "manifest":
            raise ResultsFileError(
                f"{shown}: line {number} should be the manifest, but its type is "
                f"{short_repr(kind)}; is this an evalstats results file?"
            )
        fmt = record.get("format")
        if fmt != FORMAT_VERSION:
            raise ResultsFileError(
                f"{shown}: line {number}: the manifest has format={short_repr(fmt)}; this "
                f"evalstats reads format {FORMAT_VERSION}"
            )
        return record

    def duplicate(
        self, number: int, key: tuple[Any, Any, Any], first: int | None, *, at: int | None = None
    ) -> None:
        """Warn about a second sample for one (case, variant, repeat) slot (at index ``at``
        of the warnings, or last)."""
        where = f"line {first}" if first is not None else "an earlier line"
        self.warnings.insert(
            len(self.warnings) if at is None else at,
            f"line {number}: a second sample for case {key[0]!r}, variant {key[1]!r}, "
            f"repeat {key[2]} (the first is on {where} and is the one counted)",
        )


def _check_variant(variant: str, names: Sequence[str]) -> None:
    """Refuse a variant the run does not have, naming the ones it has."""
    if variant not in names:
        raise InvalidArgument(
            f"variant={variant!r} is not in this run{suggest(variant, names)}; "
            f"the variants are {', '.join(repr(n) for n in names) or 'none'}"
        )


def _planned_runs(manifest: Mapping[str, Any]) -> int:
    """The manifest's ``runs`` when it is a positive whole number, else 0."""
    runs = manifest.get("runs")
    return runs if isinstance(runs, int) and not isinstance(runs, bool) and runs > 0 else 0


def _read(
    path: str | os.PathLike[str], opened: IO[bytes] | None = None
) -> tuple[Results, int, bool]:
    """Read a results file (from ``opened``, the file the caller opened, when given;
    it is closed).

    Returns the results, the byte offset where the last kept sample (or the
    manifest) ends, and whether that kept prefix ends with a newline.
    """

    def manifest(line: bytes, number: int) -> dict[str, Any] | None:
        record = _parse_line(line)
        if record is None:
            return None
        record = scan.check_manifest(record, number)
        problem = manifest_problem(record)
        if problem is not None:
            raise ResultsFileError(f"{scan.shown}: line {number}: the manifest's {problem}")
        return record  # type: ignore[no-any-return]

    def record(line: bytes, number: int) -> tuple[Any, Any] | None:
        parsed = _parse_line(line)
        if parsed is None:
            return None
        if not isinstance(parsed, dict):
            raise ResultsFileError(
                f'{scan.shown}: line {number} is not a JSON object with a "type"'
            )
        return parsed.get("type"), parsed

    scan = _Scan(path, manifest, record, opened=opened)
    samples: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, int], int] = {}
    sharer = _Sharer()
    with _gc_paused():
        for number, sample in scan.records():
            problem = sample_problem(sample)
            if problem is not None:
                raise ResultsFileError(f"{scan.shown}: line {number}: {problem}")
            key = (sample["case"], sample["variant"], sample["repeat"])
            if key in seen:
                scan.duplicate(number, key, seen[key])
            else:
                seen[key] = number
            samples.append(sharer.share(sample))
    assert scan.manifest is not None  # records() raised otherwise
    results = Results(
        path=scan.shown,
        manifest=scan.manifest,
        samples=tuple(samples),
        summary=scan.summary,
        warnings=tuple(scan.warnings),
        looks=tuple(scan.looks),
        batches=tuple(scan.batches),
    )
    return results, scan.keep_end, scan.keep_newline


def read_results(path: str | os.PathLike[str]) -> Results:
    """Read a results file written by :class:`ResultsWriter`.

    Parameters
    ----------
    path : str or path-like
        The JSON Lines results file.

    Returns
    -------
    Results
        The manifest, the sample records in file order, the summary (None when
        the run did not finish) and the warnings.

    Raises
    ------
    ResultsFileError
        Naming the file and the line: when the file is missing or empty, its
        first line is not a manifest or is cut short, the manifest has an
        unknown ``format``, a line that is not the last is not valid JSON, a
        sample lacks a required key (``case``, ``variant``, ``repeat``,
        ``status``, ``checks``) or has an unknown status, or a record follows
        the summary.

    Notes
    -----
    The reader is tolerant where an interrupted run leaves its marks, and says
    so in ``Results.warnings``: a last line that is cut short or not valid JSON
    is dropped, and a missing summary is noted. A last line without its
    newline that is a complete JSON object is kept (no strict prefix of a JSON
    object is itself a JSON object, so it cannot be a cut-off record).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "results.jsonl")
    >>> with ResultsWriter.create(path, {"variants": [{"name": "a"}], "runs": 1}) as w:
    ...     w.write_sample({"case": "c1", "variant": "a", "repeat": 0,
    ...                     "status": "completed", "checks": [{"status": "passed"}]})
    ...     w.close({"status": "finished"})
    >>> results = read_results(path)
    >>> results.outcomes("a"), results.warnings
    ({'c1': [True]}, ())
    """
    return _read(path)[0]


# --- writing -------------------------------------------------------------------


class _Syncer:
    """Calls ``fsync`` on a file at most once an interval while it has unsynced data.

    It works on its own duplicate of the file descriptor, so it can never touch
    another file whose descriptor reuses the number after the writer closed.
    """

    def __init__(self, fd: int, interval: float) -> None:
        self._fd = os.dup(fd)
        self._interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.dirty = False
        self._thread = threading.Thread(target=self._loop, name="evalstats-fsync", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.sync()

    def sync(self) -> None:
        with self._lock:
            if self.dirty and self._fd >= 0:
                self.dirty = False
                with contextlib.suppress(OSError):
                    os.fsync(self._fd)

    def stop(self) -> None:
        """End the thread and sync what is left (also when a writer is never closed)."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        self.sync()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _fsync_folder(path: str) -> None:
    """Make the file's directory entry durable (best effort)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_cut_manifest(path: str | os.PathLike[str]) -> bool:
    """Remove ``path`` when it holds nothing but the start of a manifest line, cut
    off; return whether it did.

    What a run leaves when the disk fills while it writes its first line: no
    sample was taken, so resuming it means starting it again. The file's lock
    is taken before it is looked at, and held while it is removed: a run still
    writing its manifest (a long schedule, written in pieces) holds that lock,
    so its file is refused as busy (:class:`~evalstats.errors.ResultsFileError`),
    never taken for a cut one and removed under it. A path that is not a
    regular file is left for the resume to refuse.
    """
    shown = os.fspath(path)
    try:
        f = open_input(path, what="a results file", error=ResultsFileError)
    except (OSError, ResultsFileError):
        return False
    with f:
        _lock(f.fileno(), shown)
        head = f.read(1 << 20)
        cut = b"\n" not in head and head.startswith(b'{"type":"manifest"') and len(head) < 1 << 20
        if cut:
            os.unlink(path)  # under the lock: no writer can be midway through it
        return cut


class ResultsWriter:
    """Writes a results file: the manifest, then samples as they finish, then a summary.

    Make one with :meth:`create` (a new file) or :meth:`resume` (append to an
    interrupted run). Each :meth:`write_sample` writes one line and hands it to
    the operating system at once; ``fsync`` runs at most once a second while
    there is unsynced data and at close. Used as a context manager, the writer
    closes the file on exit; when the block ends without :meth:`close` having
    been called (for example through an exception), the file is closed without
    a summary, so it reads back as an unfinished run.

    ``path`` is the file as given, ``samples_written`` counts the samples this
    writer wrote (after a resume, only the new ones) and ``closed`` says
    whether it is closed. While a writer is open it holds an exclusive lock on
    the file (where the system has ``flock``), so a second process cannot
    resume the same run at the same time.

    Records are written from the calling thread; the writer is not meant to
    be shared by several threads.
    """

    def __init__(self, path: str, fd: int, *, _token: object = None) -> None:
        if _token is not _PRIVATE:
            raise TypeError(
                "use ResultsWriter.create(path, manifest) or ResultsWriter.resume(path)"
            )
        self.path = path
        self._file = os.fdopen(fd, "wb")
        self._syncer = _Syncer(fd, SYNC_INTERVAL_S)
        self._finalizer = weakref.finalize(self, self._syncer.stop)
        self.samples_written = 0
        self.batches_written = 0
        self.closed = False

    # -- making one --

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        manifest: Mapping[str, Any],
        *,
        schedule: Iterable[Any] | None = None,
    ) -> ResultsWriter:
        """Create a new results file and write its manifest line.

        The file is created exclusively (``O_CREAT | O_EXCL``): an existing
        path, even a dangling symbolic link, is refused with
        :class:`~evalstats.errors.ResultsFileError` and left untouched. The
        mode is 0600 whatever the umask.

        ``manifest`` is written with ``"type": "manifest"`` and ``"format":``
        :data:`FORMAT_VERSION` first; ``"counting_method"`` defaults to
        :data:`COUNTING_METHOD`. A manifest that holds a credential (see the
        module notes) is refused before the file is created.

        ``schedule``, when given, is the manifest's ``"schedule"``, written
        item by item as the iterable yields them (the last field of the
        manifest line), so that a long schedule is never held whole.
        """
        shown = os.fspath(path)
        if not isinstance(manifest, Mapping):
            raise InvalidArgument(f"manifest={manifest!r} must be a mapping")
        if manifest.get("type", "manifest") != "manifest":
            raise InvalidArgument(f"manifest type={manifest['type']!r} must be 'manifest'")
        if manifest.get("format", FORMAT_VERSION) != FORMAT_VERSION:
            raise InvalidArgument(
                f"manifest format={manifest['format']!r}; this evalstats writes format "
                f"{FORMAT_VERSION}"
            )
        problem = manifest_problem(manifest)
        if problem is not None:  # a file its own reader would refuse is never begun
            raise InvalidArgument(f"manifest: {problem}")
        record: dict[str, Any] = {"type": "manifest", "format": FORMAT_VERSION}
        record.update(manifest)
        record.setdefault("counting_method", COUNTING_METHOD)
        if schedule is not None:
            record.pop("schedule", None)
        line = _serialize(record, "manifest")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            raise ResultsFileError(
                f"{shown} already exists; results are never overwritten: choose a new "
                "--out path, or resume that run with --resume"
            ) from None
        except OSError as error:
            raise _cannot_create(shown, error) from None
        try:
            os.fchmod(fd, 0o600)  # the umask may have removed bits; set exactly 0600
            _lock(fd, shown)
            writer = cls(shown, fd, _token=_PRIVATE)
        except BaseException:
            os.close(fd)
            raise
        try:
            if schedule is None:
                writer._write(line)
            else:
                writer._write_with_schedule(line, schedule)
            writer._syncer.sync()
        except BaseException:
            # A file holding part of a manifest (a full disk) is no run: remove
            # the file this call created, so the next run can use the path.
            writer._shutdown(quiet=True)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        _fsync_folder(shown)
        return writer

    @classmethod
    def resume(
        cls,
        path: str | os.PathLike[str],
        *,
        check: Callable[[Results], None] | None = None,
    ) -> tuple[ResultsWriter, Results]:
        """Open an interrupted (or finished) run to append more samples.

        The file is read with :func:`read_results`; a cut-off last line and a
        trailing summary are removed by truncating the file just after its
        last complete sample line (or the manifest, when there is no sample),
        and the file is opened for appending. ``check``, when given, is called
        with what was read before anything is truncated; an exception it
        raises (say, the run asked for differs from the file's) leaves the
        file as it was. Returns the writer and the :class:`Results` read so
        far, whose ``summary`` is None and whose ``warnings`` say what was
        dropped.
        """
        shown = os.fspath(path)
        try:
            # A regular file only (a FIFO would block this open for ever), told
            # before the open; the open itself does not block either.
            check_input(path, what="a results file", error=ResultsFileError)
            flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
            try:
                check_opened(fd, shown, what="a results file", error=ResultsFileError)
                if hasattr(os, "set_blocking"):
                    os.set_blocking(fd, True)
            except BaseException:
                os.close(fd)
                raise
        except FileNotFoundError:
            raise ResultsFileError(f"{shown}: no such results file to resume") from None
        except IsADirectoryError:
            raise ResultsFileError(f"{shown}: is a folder, not a results file") from None
        except OSError as error:
            raise ResultsFileError(
                f"cannot open {shown} to resume: {error.strerror or error}"
            ) from None
        try:
            _lock(fd, shown)  # before reading, so nobody appends between read and truncate
            results, keep_end, keep_newline = _read(path)
            if check is not None:
                check(results)
        except BaseException:
            os.close(fd)
            raise
        warnings = [w for w in results.warnings if w != NO_SUMMARY_WARNING]
        if results.summary is not None:
            warnings = [w for w in warnings if not w.startswith("the run ended with status")]
            warnings.append(
                f"removed the summary (status {results.summary.get('status')!r}) of the "
                "earlier session to append to the run"
            )
        try:
            os.ftruncate(fd, keep_end)
            os.fsync(fd)
            writer = cls(shown, fd, _token=_PRIVATE)
        except OSError as error:
            os.close(fd)
            raise ResultsFileError(
                f"cannot truncate {shown} to resume: {error.strerror or error}"
            ) from None
        if not keep_newline:
            writer._write(b"\n")  # the last record was complete but lacked its newline
        resumed = Results(
            path=results.path,
            manifest=results.manifest,
            samples=results.samples,
            summary=None,
            warnings=tuple(warnings),
            looks=results.looks,
            batches=results.batches,
        )
        return writer, resumed

    # -- writing --

    def _write_with_schedule(self, line: bytes, schedule: Iterable[Any]) -> None:
        """The manifest ``line`` with ``"schedule"`` as its last field, written in chunks."""
        self._write(line[: -len(b"}\n")] + b',"schedule":[')
        first = True
        for chunk in _chunks(schedule, 4096):
            text = _schedule_text(chunk)
            self._write(text if first else b"," + text)
            first = False
        self._write(b"]}\n")

    def _write(self, line: bytes) -> None:
        if self.closed:
            raise ResultsFileError(f"{self.path}: the results file is already closed")
        try:
            self._file.write(line)
            self._file.flush()
        except OSError as error:
            raise ResultsFileError(
                f"cannot write to {self.path}: {error.strerror or error}"
            ) from None
        self._syncer.dirty = True

    def write_sample(self, record: Mapping[str, Any] | Sample) -> None:
        """Write one sample record as one line (adding ``"type": "sample"``).

        ``record`` is a :class:`~evalstats.results._records.Sample` (as the
        engine makes them) or a mapping of its fields. It must have ``case``,
        ``variant``, ``repeat``, ``status`` and ``checks`` (with known
        statuses), as the reader requires; otherwise
        :class:`~evalstats.errors.InvalidArgument`. The line reaches the
        operating system before this returns.
        """
        if record.__class__ is Sample:  # (isinstance of a struct class takes a microsecond)
            record = to_record(record)
        elif not isinstance(record, Mapping):
            raise InvalidArgument(f"record={record!r} must be a mapping")
        problem = sample_problem(record, written=False)
        if problem is not None:
            raise InvalidArgument(f"cannot write the sample: {problem}")
        line: dict[str, Any] = {"type": "sample"}
        line.update(record)
        line["type"] = "sample"
        self._write(_serialize(line, "sample"))
        self.samples_written += 1

    def write_look(self, record: Mapping[str, Any]) -> None:
        """Write one look of a sequential run (adding ``"type": "look"``).

        The record must say after how many ``pairs`` the look was taken and
        its ``verdict``; :mod:`evalstats.deciding._sequential` writes the e-values and
        the interval too.
        """
        if not isinstance(record, Mapping):
            raise InvalidArgument(f"record={record!r} must be a mapping")
        for key in _LOOK_REQUIRED:
            if key not in record:
                raise InvalidArgument(f"cannot write the look: it has no {key!r}")
        line: dict[str, Any] = {"type": "look"}
        line.update(record)
        line["type"] = "look"
        self._write(_serialize(line, "look"))

    def write_batch(self, record: Mapping[str, Any] | BatchRecord) -> None:
        """Write one batch record (adding ``"type": "batch"``, as its first field); the
        line reaches the operating system before this returns."""
        if record.__class__ is BatchRecord:
            record = to_record(record)  # type: ignore[arg-type]
        elif not isinstance(record, Mapping):
            raise InvalidArgument(f"record={record!r} must be a mapping")
        for key in ("id", "provider", "variant", "state"):
            if not isinstance(record.get(key), str):
                raise InvalidArgument(f"cannot write the batch record: its {key!r} is not text")
        line: dict[str, Any] = {"type": "batch"}
        line.update(record)
        line["type"] = "batch"
        self._write(_serialize(line, "batch"))
        self.batches_written += 1

    def close(self, summary: Mapping[str, Any] | None = None) -> None:
        """Write the summary line (adding ``"type": "summary"``), fsync and close.

        With ``summary=None`` the file is closed without a summary, which
        readers take as a run that did not finish.
        """
        if self.closed:
            raise ResultsFileError(f"{self.path}: the results file is already closed")
        try:
            if summary is not None:
                if not isinstance(summary, Mapping):
                    raise InvalidArgument(f"summary={summary!r} must be a mapping")
                line: dict[str, Any] = {"type": "summary"}
                line.update(summary)
                line["type"] = "summary"
                self._write(_serialize(line, "summary"))
        finally:
            self._shutdown()  # syncs what is left, then closes

    def _shutdown(self, *, quiet: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._syncer.sync()
            try:
                self._file.close()  # closes the descriptor even when the flush fails
            except OSError as error:
                # A full disk: what was written before is a valid prefix of
                # the run, and --resume continues from it.
                if not quiet:
                    raise ResultsFileError(
                        f"cannot finish writing {self.path}: {error.strerror or error}; the "
                        "samples written before are kept (free some space, then --resume)"
                    ) from None
        finally:
            self._finalizer()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._shutdown(quiet=exc is not None)  # never hide the error that ended the block

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<ResultsWriter {self.path!r} {state}, {self.samples_written} samples written>"


_PRIVATE = object()
_LOOK_REQUIRED = tuple(f.name for f in msgspec.structs.fields(Look) if f.required)


@contextlib.contextmanager
def _locked_read(path: str | os.PathLike[str]) -> Iterator[tuple[Results, int, bool]]:
    """The results file ``path`` opened (regular files only), locked and read:
    (what it holds, the end of its last whole record, whether that ends its line).
    The lock is held until the block ends."""
    shown = os.fspath(path)
    try:
        handle = open_input(path, what="a results file", error=ResultsFileError)
    except FileNotFoundError:
        raise ResultsFileError(f"{shown}: no such results file") from None
    except IsADirectoryError:
        raise ResultsFileError(f"{shown}: is a folder, not a results file") from None
    except OSError as error:
        raise ResultsFileError(f"cannot open {shown}: {error.strerror or error}") from None
    fd = os.dup(handle.fileno())  # the lock is held on this descriptor, closed below
    handle.close()
    try:
        _lock(fd, shown)
        yield _read(path)
    finally:
        os.close(fd)


_T = TypeVar("_T")


def _replace_whole(path: str | os.PathLike[str], write: Callable[[IO[bytes], IO[bytes]], _T]) -> _T:
    """Write a results file again beside itself and rename it over the old one.

    ``write(new, old)`` copies what it keeps from the old file (open at its
    start) into the new one (created exclusively, mode 0600); the new file is
    then fsynced and renamed over the old in one step, so a crash leaves one
    or the other, never a mix. What ``write`` returns is returned."""
    shown = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(shown))
    temp = os.path.join(folder, f".{name}.{os.getpid()}.rewrite")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        out = os.open(temp, flags, 0o600)
    except OSError as error:
        raise _cannot_create(temp, error) from None
    try:
        os.fchmod(out, 0o600)
        with os.fdopen(out, "wb") as new, open(path, "rb") as old:
            kept = write(new, old)
            new.flush()
            os.fsync(new.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(shown)
    return kept


def rewrite_manifest(
    path: str | os.PathLike[str],
    new_manifest: Callable[[Results], Mapping[str, Any] | None],
) -> Results:
    """Give a results file a new manifest, keeping its samples and looks byte for byte.

    The file is locked and read; ``new_manifest`` is called with what was read
    and returns the manifest to write (None: leave the file as it is). An
    exception it raises leaves the file as it was. The new file is written
    beside the old one (created exclusively, mode 0600): the new manifest line,
    then the old file's sample and look lines as they are (a cut-off last line
    and the summary are dropped, as when resuming), fsynced, and renamed over
    the old file in one step, so a crash leaves either the old file or the new
    one, never a mix. This is how ``run --extend`` records what it adds.

    Returns what was read (before the rewrite).
    """
    with _locked_read(path) as (results, keep_end, keep_newline):
        manifest = new_manifest(results)
        if manifest is None:
            return results
        record: dict[str, Any] = {"type": "manifest", "format": FORMAT_VERSION}
        record.update({k: v for k, v in manifest.items() if k not in ("type", "format")})
        problem = manifest_problem(record)
        if problem is not None:
            raise InvalidArgument(f"manifest: {problem}")
        line = _serialize(record, "manifest")

        def write(new: IO[bytes], old: IO[bytes]) -> None:
            new.write(line)
            old.readline()  # the old manifest line
            left = max(0, keep_end - old.tell())
            while left:
                block = old.read(min(left, 1 << 20))
                if not block:
                    break
                new.write(block)
                left -= len(block)
            if not keep_newline:
                new.write(b"\n")

        _replace_whole(path, write)
        return results


def drop_samples(path: str | os.PathLike[str], drop: Callable[[Mapping[str, Any]], bool]) -> int:
    """Remove the sample records ``drop`` says to from a results file; how many it removed.

    For a batch run resumed (``run --batch --resume``): the samples its batches
    gave no answer for (expired, errored) are unmeasured, and are taken again,
    each sample staying once in the file; the batch records keep which requests
    went unanswered. As :func:`rewrite_manifest` does, the file is locked and read,
    and (when there is something to drop) written again beside itself with
    every other line byte for byte (a cut-off last line and the summary
    dropped, as when resuming), fsynced and renamed over it in one step.
    """
    with _locked_read(path) as (results, keep_end, _keep_newline):
        if not any(drop(s) for s in results.samples):
            return 0

        def write(new: IO[bytes], old: IO[bytes]) -> int:
            dropped = 0
            new.write(old.readline())  # the manifest, as it is
            while old.tell() < keep_end:
                line = old.readline()
                if line.startswith(b'{"type":"sample"'):
                    record = _parse_line(line)
                    if isinstance(record, dict) and drop(record):
                        dropped += 1
                        continue
                new.write(line if line.endswith(b"\n") else line + b"\n")
            return dropped

        return _replace_whole(path, write)
