"""Counting a run in one pass: what ``report``, ``compare``, ``gate`` and ``plan`` read.

:func:`_tally_file` reads a results file line by line and keeps only counts: per
variant the sample statuses, latencies and tokens, the measured samples'
scores and the graded checks' levels on a discrete scale (a judge's 1-5);
per variant and case the outcome of each (case, repeat) slot (one byte
each), the passes and the check verdicts by (check, axis, kind); the
scheduled slots. Nothing of a sample
outlives its line, so a report's memory does not grow with the samples beyond
those tables.

Lines are decoded with msgspec into typed structs that hold only the fields
counted (the answer, the prompt and the rest are skipped, never built), derived
from the record schema (:mod:`evalstats.results._records`), which also checks
their types as the file is read. A sample's checks are decoded
once per case and text: the samples of a case mostly carry the very same
checks, byte for byte, and their verdicts are kept (see :class:`_Verdicts`).
A line that does not fit is read again with the standard library and checked
field by field against the same schema, so that the error names the file, the
line and the field (see :func:`evalstats.results._records.sample_problem`).

The same counting takes a :class:`~evalstats.results._file.Results` already in memory
(:func:`_tally_results`), or the records of a run as an iterable, the manifest
first (:func:`_tally_records`): readers of other tools' logs that build records
flow through it unchanged. Which one counts a run is said once, by
:class:`evalstats.reading._source.RunSource`.
"""

from __future__ import annotations

import math
import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import IO, Any, Literal, NoReturn, get_args

import msgspec
from msgspec import UNSET

from .._files import open_input
from .._text import short_repr
from ..errors import InvalidArgument, ResultsFileError
from ..results._file import (
    LONG_LINE,
    SAMPLE_COUNTED,
    Results,
    _check_variant,
    _gc_paused,
    _parse_line,
    _planned_runs,
    _Scan,
)
from ..results._recordable import recordable
from ..results._records import (
    CheckVerdict,
    Sample,
    Slot,
    Summary,
    Tokens,
    derived,
    manifest_problem,
    not_inspected,
    sample_problem,
    slot_problem,
)

__all__ = ["Tally"]

# --- what a line is decoded into ----------------------------------------------------

_INF = float("inf")
_NULL = msgspec.Raw(b"null")
_ABSENT = msgspec.Raw(b"")

# Structs of only the fields counted, derived from the record schema
# (evalstats.results._records), in its order: the order the engine writes them,
# and msgspec looks a key up faster when it is the field after the one before.
# The trace and the workspace observations are kept as their JSON text, decoded
# only for the samples that carry them.

#: The fields of a check verdict and of a sample the counts read (and a check's
#: score, which they do not, read so that one outside [0, 1] is refused here as
#: by every reader of the file).
_CHECK_FIELDS = (
    *("check", "axis", "status", "reason", "not_inspected", "judge_unmeasured"),
    *("score", "raw_score", "scale"),
)
_SAMPLE_FIELDS = (
    *("case", "variant", "repeat", "status", "trace", "checks"),
    *("latency_s", "tokens", "workspace", "score"),
)
_LAZY = {"trace": (msgspec.Raw, _NULL), "workspace": (msgspec.Raw, _ABSENT)}

_Check = derived("_Check", CheckVerdict, _CHECK_FIELDS, gc=False)
_Tokens = Tokens
_Sample = derived(
    "_Sample",
    Sample,
    _SAMPLE_FIELDS,
    {**_LAZY, "checks": list[_Check]},
    gc=False,  # type: ignore[valid-type]
)
#: A sample line as first decoded: its checks kept as their JSON text (see _Verdicts).
_FileSample = derived(
    "_FileSample", Sample, _SAMPLE_FIELDS, {**_LAZY, "checks": msgspec.Raw}, gc=False
)
#: A record built by another tool's reader, as the tally's struct: its checks kept as
#: the very list the record holds (records that share one share its verdicts).
_BuiltSample = derived(
    "_BuiltSample", Sample, _SAMPLE_FIELDS, {**_LAZY, "checks": (Any, None)}, gc=False
)
_Summary = derived("_Summary", Summary, ())
_Slot = get_args(Slot)[0]

_LINE = msgspec.json.Decoder(_FileSample | _Summary)
_WHOLE = msgspec.json.Decoder(_Sample | _Summary)
_CHECKS = msgspec.json.Decoder(list[_Check])
_SLOTS = msgspec.json.Decoder(list[_Slot])
_RAW_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ANY = msgspec.json.Decoder()

# One schedule slot, a JSON list of scalars; strings are taken whole, so a "]" or
# a "," inside a case id does not end the slot. Many slots at once make a chunk.
_SLOT_TEXT = rb'\[(?:[^\[\]"]++|"(?:[^"\\]++|\\.)*+")*+\]'
_CHUNK = re.compile(rb"\s*(" + _SLOT_TEXT + rb"(?:\s*,\s*" + _SLOT_TEXT + rb"){0,4095})\s*")
#: The most schedule text decoded at once by the fast path (about 3,500 slots).
_STRETCH = 1 << 17

# Outcome codes of a (case, repeat) slot, one byte each: no record yet, passed,
# failed (completed), incomplete, unmeasured.
_NONE, _PASSED, _FAILED, _INCOMPLETE, _UNMEASURED = range(5)
_OUTCOME: dict[int, bool | None] = {
    _PASSED: True,
    _FAILED: False,
    _INCOMPLETE: False,
    _UNMEASURED: None,
}


# --- what a sample's checks count --------------------------------------------------


class _Verdicts:
    """What the checks of one sample of one case add to the counts.

    ``keys`` holds each ``(case, check, axis, kind)`` key of a variant's
    verdict counts that the checks add to, with how many of them do (kind being
    passed, failed, not_inspected, a failure with nothing to inspect, or
    unscored), in the order of the checks; ``passes`` whether some check was scored
    and none failed; ``judge_unmeasured`` how many unscored checks the judge
    gave no verdict on; ``levels`` the levels of the graded checks on a
    discrete scale (see :func:`_level_key`), with how many of them.

    The samples of a case often carry the very same checks, byte for byte (the
    same checks passing, or failing for the same reasons), so reading a file
    keeps the verdicts of the checks' text it has seen, by case (see
    :data:`MEMO`): a sample whose checks were seen before is counted without
    decoding them again. ``kept`` says that these verdicts are kept so: a
    variant then counts how many samples carry them and adds their keys once,
    when its counts are read (see :class:`_Variant`), not at every sample.
    """

    __slots__ = ("judge_unmeasured", "kept", "keys", "levels", "passes")

    def __init__(self, case: str, checks: Iterable[_Check]) -> None:
        counts: dict[tuple[str, Any, Any, str], int] = {}
        levels: dict[tuple[Any, float, float, int | None], int] = {}
        self.passes, self.judge_unmeasured = _count_checks(case, checks, counts, levels)
        self.keys = tuple(counts.items())  # (key, how many of the checks have it)
        self.levels = tuple(levels.items())
        self.kept = False


#: The most steps a scale may have for its scores to be counted by level.
MAX_LEVELS = 10


def _level_key(c: _Check) -> tuple[Any, float, float, int | None] | None:
    """``(check, low, high, level)`` of a graded check scored on a discrete scale:
    whole-numbered bounds 2 to :data:`MAX_LEVELS` apart (a judge's 1-5), its raw
    score the level, or None for a raw score between the levels; None for any other
    check (pass/fail, or a scale of continuous scores)."""
    scale = c.scale
    if scale.__class__ is not list:
        return None
    low, high = scale  # type: ignore[misc]
    if not (low.is_integer() and high.is_integer() and 2 <= high - low <= MAX_LEVELS):
        return None
    raw: float = c.raw_score  # type: ignore[assignment]
    level = int(raw) if raw.is_integer() and low <= raw <= high else None
    return (c.check, low, high, level)


def _count_checks(
    case: str,
    checks: Iterable[_Check],
    counts: dict[tuple[str, Any, Any, str], int],
    levels: dict[tuple[Any, float, float, int | None], int],
) -> tuple[bool, int]:
    """Add one sample's checks to ``counts`` and their levels to ``levels`` (see
    :class:`_Verdicts`); whether the sample passes (some check scored, none failed),
    and how many unscored checks the judge gave no verdict on."""
    scored = failed = False
    judge_unmeasured = 0
    for c in checks:
        if c.raw_score.__class__ is float:
            lk = _level_key(c)
            if lk is not None:
                levels[lk] = levels.get(lk, 0) + 1
        kind: str = c.status
        if kind == "passed":
            scored = True
        elif kind == "failed":
            failed = True
            if not_inspected(c):  # type: ignore[arg-type]
                kind = "not_inspected"
        elif c.judge_unmeasured:
            judge_unmeasured += 1
        key = (case, c.check, c.axis, kind)
        counts[key] = counts.get(key, 0) + 1
    return scored and not failed, judge_unmeasured


#: How many different (case, checks' text) a file's reading keeps the verdicts
#: of (a few hundred bytes each); later ones are decoded every time.
MEMO = 2048


# --- the counts ------------------------------------------------------------------------


class _Latencies:
    """One variant's latencies, kept for exact quantiles in little memory.

    A latency as the engine writes it (rounded to the microsecond) is kept as a
    4-byte count of microseconds when dividing it by 10^6 gives back the very
    same float; any other in 8 bytes. Both are kept in blocks of a fixed size,
    so growing never copies what is already kept.
    """

    __slots__ = ("micro", "other")

    BLOCK = 1 << 16

    def __init__(self) -> None:
        self.micro: list[array[int]] = [array("I")]
        self.other: list[array[float]] = [array("d")]

    def append(self, seconds: float) -> None:
        # Microseconds only for what fits them: 1e308 s times 1e6 is no number.
        us = round(seconds * 1e6) if 0.0 <= seconds < 4294.967296 else -1
        if 0 <= us < 4_294_967_296 and us / 1e6 == seconds:
            block = self.micro[-1]
            if len(block) == self.BLOCK:
                block = array("I")
                self.micro.append(block)
            block.append(us)
        else:
            blocks = self.other[-1]
            if len(blocks) == self.BLOCK:
                blocks = array("d")
                self.other.append(blocks)
            blocks.append(seconds)

    def extend(self, seconds: Any) -> None:
        """Keep each of ``seconds`` (a numpy array of floats), as :meth:`append` would,
        in order."""
        import numpy as np

        if array("I").itemsize != 4:  # a platform whose unsigned int is not 4 bytes
            for x in seconds.tolist():
                self.append(x)
            return
        us = np.rint(seconds * 1e6)
        micro = (seconds >= 0.0) & (seconds < 4294.967296) & (us < 4_294_967_296.0)
        micro &= us / 1e6 == seconds
        for blocks, values, code in (
            (self.micro, us[micro].astype(np.uint32), "I"),
            (self.other, seconds[~micro].astype(np.float64), "d"),
        ):
            start = 0
            while start < values.size:
                block = blocks[-1]
                if len(block) == self.BLOCK:
                    block = array(code)
                    blocks.append(block)
                stop = min(values.size, start + self.BLOCK - len(block))
                block.frombytes(values[start:stop].tobytes())
                start = stop

    def __len__(self) -> int:
        return sum(map(len, self.micro)) + sum(map(len, self.other))

    def __iter__(self) -> Iterator[float]:
        for block in self.micro:
            for us in block:
                yield us / 1e6
        for values in self.other:
            yield from values


class _Cell:
    """One case under one variant."""

    __slots__ = (
        "incomplete",
        "measured",
        "outcome",
        "passes",
        "scheduled",
        "unmeasured",
    )

    def __init__(self) -> None:
        self.outcome = bytearray()  # by repeat: one of the outcome codes
        self.scheduled = bytearray()  # by repeat: 1 where the schedule has the slot
        self.passes = self.measured = self.incomplete = self.unmeasured = 0


class _Variant:
    """Running counts for one variant."""

    __slots__ = (
        "_judge_unmeasured",
        "_verdicts",
        "carried",
        "cells",
        "completed",
        "containment",
        "incomplete",
        "latencies",
        "_levels",
        "priced",
        "priced_in",
        "priced_out",
        "scheduled",
        "scores",
        "tok_in",
        "tok_n",
        "tok_out",
        "unmeasured",
    )

    def __init__(self) -> None:
        self.cells: dict[str, _Cell] = {}
        # (case, check name, axis, kind) -> verdicts, kind being passed, failed,
        # not_inspected (a failure with nothing to inspect) or unscored; in the
        # order first seen, which is the order the report lists checks and axes in
        self._verdicts: dict[tuple[str, Any, Any, str], int] = {}
        # kept verdicts (see _Verdicts) -> how many counted samples carried them,
        # not yet added to _verdicts and _judge_unmeasured (see _fold)
        self.carried: dict[_Verdicts, int] = {}
        self.completed = self.incomplete = self.unmeasured = 0
        self._judge_unmeasured = 0  # judged checks the judge gave no verdict on
        self.latencies = _Latencies()
        self.tok_in: int | None = None
        self.tok_out: int | None = None
        self.tok_n = 0
        # samples reporting both input and output tokens, and their totals: what
        # can be priced (evalstats.planning._cost)
        self.priced = self.priced_in = self.priced_out = 0
        self.scheduled = 0
        # (case, repeat, score) of each measured sample that has a score
        self.scores: list[tuple[str, int, float]] = []
        # (check, low, high, level) -> graded checks at that level (see _level_key)
        self._levels: dict[tuple[Any, float, float, int | None], int] = {}
        # observed, unchanged, marker seen, fixtures changed, private changed, files added
        self.containment = [0, 0, 0, 0, 0, 0]

    def _fold(self) -> None:
        """Add the verdicts of the samples counted by their kept verdicts."""
        counts = self._verdicts
        levels = self._levels
        for verdicts, n in self.carried.items():
            for key, k in verdicts.keys:
                counts[key] += k * n
            for lk, k in verdicts.levels:
                levels[lk] = levels.get(lk, 0) + k * n
            self._judge_unmeasured += n * verdicts.judge_unmeasured
        self.carried.clear()

    @property
    def verdicts(self) -> dict[tuple[str, Any, Any, str], int]:
        """``(case, check, axis, kind) -> verdicts``, in the order first seen."""
        if self.carried:
            self._fold()
        return self._verdicts

    @property
    def judge_unmeasured(self) -> int:
        """How many judged checks the judge gave no verdict on."""
        if self.carried:
            self._fold()
        return self._judge_unmeasured

    @property
    def levels(self) -> dict[tuple[Any, float, float, int | None], int]:
        """``(check, low, high, level) -> graded checks`` on a discrete scale (level
        None: a raw score between the levels), measured samples only."""
        if self.carried:
            self._fold()
        return self._levels


def _grow(buffer: bytearray, index: int) -> None:
    """Make ``buffer[index]`` exist (doubling, so growing costs O(1) a sample)."""
    size = len(buffer)
    buffer.extend(bytes(max(index + 1 - size, size, 8)))


class Tally:
    """The counts of one run: what every reading of a results file needs.

    Build one with :func:`evalstats.reading._source.tally`. ``manifest`` is the manifest without its
    ``schedule`` (which is kept as scheduled slots per variant and case),
    ``summary`` the summary record or None, ``looks`` the look records of a
    sequential run (kept whole: one a round), ``warnings`` what the reader
    tolerated. The counting rule is :func:`evalstats.results._file.sample_passed`;
    when a slot has two records, the first one counts.
    """

    def __init__(self, path: str | None, manifest: dict[str, Any]) -> None:
        self.path = path
        self.manifest = manifest
        self.summary: dict[str, Any] | None = None
        self.looks: tuple[dict[str, Any], ...] = ()  # a sequential run's look records
        self.warnings: tuple[str, ...] = ()
        self.has_schedule = False
        self.observed = False  # whether some sample carried workspace observations
        self._variants: dict[str, _Variant] = {}
        self._scheduled_cases: dict[str, None] = {}
        self._sample_cases: dict[str, None] = {}
        self._duplicates: list[tuple[int, tuple[str, str, int]]] = []

    # -- counting --

    def _variant(self, name: str) -> _Variant:
        v = self._variants.get(name)
        if v is None:
            v = self._variants[name] = _Variant()
        return v

    def _cell(self, v: _Variant, case: str) -> _Cell:
        cell = v.cells.get(case)
        if cell is None:
            cell = v.cells[case] = _Cell()
        return cell

    def _schedule(self, slots: Iterable[Sequence[Any]]) -> None:
        """Count schedule slots ``(case, repeat, pair, position, variant)``."""
        cases = self._scheduled_cases
        # by variant: its cells, how many slots it has here, and by case the
        # scheduled slots of each cell met here (a bytearray grows in place)
        found: dict[str, tuple[dict[str, _Cell], list[int], dict[str, bytearray]]] = {}
        for case, repeat, _, _, variant in slots:
            of = found.get(variant)
            if of is None:
                of = found[variant] = (self._variant(variant).cells, [0], {})
            cells, count, met = of
            count[0] += 1
            scheduled = met.get(case)
            if scheduled is None:
                cell = cells.get(case)
                if cell is None:
                    cell = cells[case] = _Cell()
                if case not in cases:
                    cases[case] = None
                scheduled = met[case] = cell.scheduled
            if repeat >= len(scheduled):
                _grow(scheduled, repeat)
            scheduled[repeat] = 1
        for variant, (_, count, _) in found.items():
            self._variants[variant].scheduled += count[0]
        if found:
            self.has_schedule = True

    def _add(self, s: _Sample | _FileSample, number: int, verdicts: _Verdicts | None) -> None:
        """Count one sample record (``number``: its line, or its index in memory)
        whose checks add ``verdicts``, or, when None, its checks as decoded (a
        ``_Sample``'s)."""
        case = s.case
        v = self._variants.get(s.variant) or self._variant(s.variant)
        cell = v.cells.get(case) or self._cell(v, case)
        out, repeat = cell.outcome, s.repeat
        if repeat >= len(out):
            if not out:  # the first record of this case and variant
                self._sample_cases.setdefault(case)
            _grow(out, repeat)
        elif out[repeat]:
            self._duplicates.append((number, (case, s.variant, repeat)))
            return
        latency = s.latency_s
        if latency.__class__ is float and 0.0 <= latency < 4294.967296:  # type: ignore[operator]
            # _Latencies.append, its common case inlined: a whole number of microseconds
            us = round(latency * 1e6)  # type: ignore[operator]
            block = v.latencies.micro[-1]
            if 0 <= us < 4_294_967_296 and us / 1e6 == latency and len(block) < _Latencies.BLOCK:
                block.append(us)
            else:
                v.latencies.append(latency)  # type: ignore[arg-type]
        elif latency.__class__ is float and -_INF < latency < _INF:  # type: ignore[operator]
            v.latencies.append(latency)  # type: ignore[arg-type]
        if s.tokens is not None:
            self._tokens(v, s.tokens)
        if s.trace != _NULL or s.workspace:
            self._observe(v, s)
        status = s.status
        if status == "unmeasured":
            v.unmeasured += 1
            cell.unmeasured += 1
            out[repeat] = _UNMEASURED
            return
        counts = v._verdicts
        if verdicts is None:  # the checks as decoded (a _Sample's), counted as they are
            passes, judge_unmeasured = _count_checks(case, s.checks, counts, v._levels)  # type: ignore[arg-type]
            if judge_unmeasured:
                v._judge_unmeasured += judge_unmeasured
        elif verdicts.kept:
            # Counted by the verdicts (see _Verdicts); their keys take their place
            # in the order first seen now, and their counts when they are read.
            carried = v.carried
            n = carried.get(verdicts)
            if n is None:
                carried[verdicts] = 1
                for key, _ in verdicts.keys:
                    if key not in counts:
                        counts[key] = 0
            else:
                carried[verdicts] = n + 1
            passes = verdicts.passes
        else:
            for key, k in verdicts.keys:
                counts[key] = counts.get(key, 0) + k
            if verdicts.levels:
                levels = v._levels
                for lk, k in verdicts.levels:
                    levels[lk] = levels.get(lk, 0) + k
            if verdicts.judge_unmeasured:
                v._judge_unmeasured += verdicts.judge_unmeasured
            passes = verdicts.passes
        cell.measured += 1
        score = s.score
        if score.__class__ is float:
            v.scores.append((case, repeat, score))  # type: ignore[arg-type]
        if status == "completed":
            v.completed += 1
            # The counting rule of results.sample_passed (counting method "1"): a
            # completed sample passes when some check was scored and none failed.
            if passes:
                cell.passes += 1
                out[repeat] = _PASSED
            else:
                out[repeat] = _FAILED
        else:
            v.incomplete += 1
            cell.incomplete += 1
            out[repeat] = _INCOMPLETE

    @staticmethod
    def _tokens(v: _Variant, tokens: _Tokens) -> None:
        """Count a sample's token counts (a number, or none for each of the two)."""
        ti, to = tokens.input, tokens.output
        ti = ti if ti.__class__ is int else None
        to = to if to.__class__ is int else None
        if ti is not None or to is not None:
            v.tok_n += 1
            if ti is not None:
                v.tok_in = (v.tok_in or 0) + ti  # type: ignore[operator]
            if to is not None:
                v.tok_out = (v.tok_out or 0) + to  # type: ignore[operator]
            if ti is not None and to is not None:
                v.priced += 1
                v.priced_in += ti  # type: ignore[operator]
                v.priced_out += to  # type: ignore[operator]

    def _observe(self, v: _Variant, s: _Sample | _FileSample) -> None:
        """Containment counts from a sample's workspace observations, if it has any."""
        from ..results._records import workspace_observations

        record: dict[str, Any] = {"trace": _ANY.decode(s.trace) if s.trace else None}
        if len(s.workspace):
            record["workspace"] = _ANY.decode(s.workspace)
        observed = workspace_observations(record)
        if observed is None:
            return
        self.observed = True
        c = v.containment
        fixtures = observed.get("fixtures_unchanged") is False
        private = observed.get("private_unchanged") is False
        added = bool(observed.get("files_added"))
        c[0] += 1
        c[1] += not (fixtures or private or added)
        c[2] += bool(observed.get("marker_seen"))
        c[3] += fixtures
        c[4] += private
        c[5] += added

    # -- reading the counts --

    def variant_names(self) -> list[str]:
        """The manifest's variants, then those found only in samples or the schedule."""
        listed: list[str] = []
        for v in self.manifest.get("variants") or ():
            name = str(v.get("name") if isinstance(v, Mapping) else v)
            if name not in listed:
                listed.append(name)
        return listed + [v for v in self._variants if v not in listed]

    def variants(self) -> tuple[str, ...]:
        """The variant names as :meth:`evalstats.results._file.Results.variants` gives them."""
        listed = self.manifest.get("variants")
        if isinstance(listed, list) and listed:
            names: list[str] = []
            for v in listed:
                name = str(v.get("name") if isinstance(v, Mapping) else v)
                if name not in names:
                    names.append(name)
            return tuple(names)
        return tuple(
            n for n, v in self._variants.items() if any(c.outcome for c in v.cells.values())
        )

    def case_ids(self) -> list[str]:
        """The cases of the run in suite order: those scheduled, or else those in the
        manifest (holdout cases only when the run included them), then any found only
        in samples."""
        if self.has_schedule:
            ids = list(self._scheduled_cases)
        else:
            holdout = bool(self.manifest.get("include_holdout"))
            ids = [
                c if isinstance(c, str) else c["id"]
                for c in self.manifest.get("cases") or ()
                if isinstance(c, str) or holdout or not c.get("holdout")
            ]
        seen = set(ids)
        return ids + [c for c in self._sample_cases if c not in seen]

    def _cells(self, variant: str) -> dict[str, _Cell]:
        v = self._variants.get(variant)
        return {} if v is None else v.cells

    def counts(self, variant: str) -> _Variant:
        """The running counts of one variant (empty for a variant with no sample)."""
        return self._variants.get(variant) or _Variant()

    def scheduled(self, variant: str) -> int:
        """How many slots the schedule gave ``variant``."""
        v = self._variants.get(variant)
        return 0 if v is None else v.scheduled

    def slots(self, variant: str) -> dict[str, bytes]:
        """The scheduled repeats of each case of ``variant``, as a byte per repeat."""
        return {
            case: bytes(cell.scheduled).rstrip(b"\0")
            for case, cell in self._cells(variant).items()
            if any(cell.scheduled)
        }

    def slot_outcomes(self, variant: str) -> dict[tuple[str, int], bool | None]:
        """Outcome per (case, repeat) of ``variant``: True, False or None (unmeasured)."""
        out: dict[tuple[str, int], bool | None] = {}
        for case, cell in self._cells(variant).items():
            for repeat, code in enumerate(cell.outcome):
                if code:
                    out[(case, repeat)] = _OUTCOME[code]
        return out

    def max_recorded_repeat(self) -> int:
        """The largest repeat number of a sample record, or -1 when there is none."""
        top = -1
        for v in self._variants.values():
            for cell in v.cells.values():
                top = max(top, len(bytes(cell.outcome).rstrip(b"\0")) - 1)
        return top

    def max_repeat(self) -> int | None:
        """The largest repeat number scheduled or recorded, or None when there is none."""
        top = -1
        for v in self._variants.values():
            for cell in v.cells.values():
                for slots in (cell.outcome, cell.scheduled):
                    top = max(top, len(bytes(slots).rstrip(b"\0")) - 1)
        return None if top < 0 else top

    def measured_by_case(self, variant: str, case_ids: Sequence[str]) -> dict[str, list[bool]]:
        """``{case: [outcomes of measured samples in repeat order]}`` in ``case_ids``
        order (then any other case), cases with no measured sample left out."""
        cells = self._cells(variant)
        order = [c for c in case_ids if c in cells] + [c for c in cells if c not in case_ids]
        out = {}
        for case in order:
            codes = cells[case].outcome
            measured = [code == _PASSED for code in codes if code and code != _UNMEASURED]
            if measured:
                out[case] = measured
        return out

    def scores(self, variant: str) -> list[tuple[str, int, float]]:
        """``(case, repeat, score)`` of each measured sample of ``variant`` with a score."""
        v = self._variants.get(variant)
        return [] if v is None else list(v.scores)

    def levels(self, variant: str) -> dict[tuple[Any, float, float, int | None], int]:
        """``(check, low, high, level) -> how many`` of ``variant``'s graded checks on a
        discrete scale (whole-numbered bounds 2 to 10 apart, such as a judge's 1-5)
        gave that level, over its measured samples; level None counts raw scores
        between the levels."""
        v = self._variants.get(variant)
        return {} if v is None else dict(v.levels)

    def unmeasured(self, variant: str) -> int:
        """How many samples of ``variant`` were unmeasured (first records only)."""
        return sum(cell.unmeasured for cell in self._cells(variant).values())

    def outcome_codes(self, variant: str, case: str) -> bytes:
        """The outcome code of each repeat of one case (0: no record; see ``_OUTCOME``)."""
        cell = self._cells(variant).get(case)
        return b"" if cell is None else bytes(cell.outcome)

    def status(self, case: str, variant: str, repeat: int) -> str | None:
        """The status of the first record of a slot, or None when the slot has none."""
        cell = self._cells(variant).get(case)
        if cell is None or repeat >= len(cell.outcome) or not cell.outcome[repeat]:
            return None
        code = cell.outcome[repeat]
        return {_UNMEASURED: "unmeasured", _INCOMPLETE: "incomplete"}.get(code, "completed")

    def outcomes(self, variant: str) -> dict[str, list[bool | None]]:
        """Per case, the outcome of each repeat of ``variant`` (list index = repeat),
        as :meth:`evalstats.results._file.Results.outcomes` gives it."""
        _check_variant(variant, self.variants())
        runs = _planned_runs(self.manifest)
        cells = self._cells(variant)
        sizes: dict[str, int] = {}
        if self.has_schedule:
            for case, cell in cells.items():
                if any(cell.scheduled):
                    sizes[case] = max(len(bytes(cell.scheduled).rstrip(b"\0")), runs)
        else:
            holdout = bool(self.manifest.get("include_holdout"))
            for c in self.manifest.get("cases") or ():
                if isinstance(c, str):
                    sizes[c] = runs
                elif holdout or not c.get("holdout"):
                    sizes[c["id"]] = runs
        for case, cell in cells.items():
            recorded = len(bytes(cell.outcome).rstrip(b"\0"))
            if recorded:
                sizes[case] = max(sizes.get(case, 0), recorded)
        out: dict[str, list[bool | None]] = {}
        for case, n in sizes.items():
            row: list[bool | None] = [None] * n
            found = cells.get(case)
            if found is not None:
                for repeat, code in enumerate(found.outcome[:n]):
                    if code:
                        row[repeat] = _OUTCOME[code]
            out[case] = row
        return out


# --- a manifest line too long to hold whole -----------------------------------------

_WS = re.compile(rb"\s*+")
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]|[^"\[\]{},]++|,')

#: The size of the pieces a long manifest line is read in.
PIECE = LONG_LINE


class _NotJSON(ValueError):
    """The long line is not the JSON object it should be."""


class _Pieces:
    """The rest of one long line, read a piece at a time; ``buf[pos:]`` is unread."""

    def __init__(self, f: IO[bytes], head: bytes) -> None:
        self.f, self.buf, self.pos = f, head, 0
        self.size = len(head)  # bytes of the line read so far
        self.done = head.endswith(b"\n") or len(head) < PIECE

    def more(self) -> bool:
        if self.done:
            return False
        piece = self.f.readline(PIECE)
        self.size += len(piece)
        self.done = not piece or piece.endswith(b"\n")
        self.buf, self.pos = self.buf[self.pos :] + piece, 0
        return bool(piece)

    def grow(self, pieces: int) -> bool:
        """Read up to ``pieces`` pieces more, joined to the unread text at once."""
        if self.done:
            return False
        read = []
        for _ in range(pieces):
            piece = self.f.readline(PIECE)
            self.size += len(piece)
            read.append(piece)
            if not piece or piece.endswith(b"\n"):
                self.done = True
                break
        self.buf, self.pos = b"".join([self.buf[self.pos :], *read]), 0
        return any(read)

    def match(self, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
        """``pattern`` at the read position, reading on while the match could grow."""
        while True:
            m = pattern.match(self.buf, self.pos)
            if m is not None and (m.end() < len(self.buf) or self.done):
                return m
            if not self.more():
                return pattern.match(self.buf, self.pos)

    def take(self, byte: bytes) -> bool:
        """Step over whitespace, then over ``byte`` if it is next."""
        self.pos = self.match(_WS).end()  # type: ignore[union-attr]
        if self.pos >= len(self.buf) and not self.more():
            return False
        if self.buf[self.pos : self.pos + 1] == byte:
            self.pos += 1
            return True
        return False

    def skip(self) -> None:
        """Read to the end of the line, whatever it holds."""
        while not self.done:
            self.buf, self.pos = b"", 0
            self.more()

    def finish(self) -> None:
        """Read to the end of the line, which must hold only whitespace."""
        while True:
            if self.buf[self.pos :].strip():
                raise _NotJSON
            self.buf, self.pos = b"", 0
            if not self.more():
                return


#: A decoder that checks JSON and builds nothing of it.
_RAW = msgspec.json.Decoder(msgspec.Raw)
#: Where msgspec says a JSON value ended and other text began (one past it).
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)$")


def _whole_value(p: _Pieces) -> bytes | None:
    """The text of the JSON value at the read position, found by the decoder.

    A manifest's ``cases`` of 40,000 cases is millions of tokens, too many to
    step through one at a time; the decoder reads the value whole and, finding
    the field's ``,`` or the object's ``}`` after it, says at which byte
    (checking the JSON and building nothing of it). The
    text is read on in ever larger steps until the value ends within it (each
    decode reads at most twice the value's length). None when the decoder
    cannot tell (the value is malformed, or the line ends inside it): then the
    tokens are stepped through, which finds what is wrong.
    """
    step = 1
    while True:
        try:
            _RAW.decode(memoryview(p.buf)[p.pos :])
            return None  # the rest of the line is a value: no object around it
        except msgspec.DecodeError as error:
            found = _TRAILING.search(str(error))
            if found is not None:
                end = p.pos + int(found.group(1)) - 1
                if p.buf[end : end + 1] not in (b",", b"}"):
                    return None
                value, p.pos = p.buf[p.pos : end], end
                return value
            if str(error) != "Input data was truncated" or not p.grow(step):
                return None
            step *= 2


def _value(p: _Pieces) -> bytes:
    """The text of the JSON value at the read position (a nested one whole)."""
    whole = _whole_value(p)
    if whole is not None:
        return whole
    parts: list[bytes] = []
    depth = 0
    while True:
        m = p.match(_TOKEN)
        if m is None:
            raise _NotJSON
        token = m.group()
        if depth == 0 and token in (b",", b"}"):
            return b"".join(parts)
        if token in (b"[", b"{"):
            depth += 1
        elif token in (b"]", b"}"):
            depth -= 1
        parts.append(token)
        p.pos = m.end()


def _stretch(text: bytes, pos: int, end: int) -> tuple[list[Any] | None, int]:
    """The slots from ``pos`` (where a slot starts) to the last ``],`` within
    :data:`_STRETCH` bytes, decoded at once, and the position of that comma.

    None (and ``pos``) when there is no such ``],`` or the text up to it does
    not decode as slots: then the cut fell inside a string (a case id holding
    ``],``; the text then ends inside that string, so it never decodes), or
    the slots are not well formed, and the caller reads them slot by slot,
    which finds where.
    """
    cut = text.rfind(b"],", pos, min(end, pos + _STRETCH))
    if cut < 0:
        return None, pos
    try:
        return _SLOTS.decode(b"[" + text[pos : cut + 1] + b"]"), cut + 1
    except msgspec.DecodeError:
        return None, pos


def _schedule(p: _Pieces, slots: _Slots) -> None:
    """Hand the schedule at the read position to ``slots``, a chunk of slots at a time."""
    if p.take(b"]"):
        return
    while True:
        if len(p.buf) - p.pos < _STRETCH:
            p.more()
        found, p.pos = _stretch(p.buf, p.pos, len(p.buf))
        if found is not None:
            slots.count(found)
        else:
            m = p.match(_CHUNK)
            if m is None:
                raise _NotJSON
            slots(b"[" + m.group(1) + b"]")
            p.pos = m.end()
        if p.take(b"]"):
            return
        if not p.take(b","):
            raise _NotJSON


def _read_long_manifest(
    f: IO[bytes], head: bytes, slots: _Slots
) -> tuple[dict[str, bytes] | None, int]:
    """The fields of a manifest line too long to hold whole, but its schedule.

    Returns the text of each field but ``schedule``, which goes to ``slots`` a
    chunk at a time, and the length of the line; None for the fields when the
    line is not a JSON object (the rest of the line is then skipped).
    """
    p = _Pieces(f, head)
    fields: dict[str, bytes] = {}
    try:
        if not p.take(b"{"):
            raise _NotJSON
        if not p.take(b"}"):
            while True:
                p.take(b"")
                m = p.match(_STRING)
                if m is None:
                    raise _NotJSON
                key = msgspec.json.decode(m.group())
                p.pos = m.end()
                if not p.take(b":"):
                    raise _NotJSON
                if key == "schedule" and p.take(b"["):
                    _schedule(p, slots)
                    fields[key] = b"[]"
                else:
                    fields[key] = _value(p)
                if p.take(b"}"):
                    break
                if not p.take(b","):
                    raise _NotJSON
        p.finish()
    except (_NotJSON, msgspec.DecodeError):
        p.skip()
        return None, p.size
    return fields, p.size


# --- reading ---------------------------------------------------------------------------


def _memory_sample(record: Any, where: str, *, checked: bool = False) -> _Sample:
    """A sample record in memory, checked as the reader checks a line (unless it was
    ``checked`` already, read by :func:`~evalstats.results._file.read_results`)."""
    if not checked:
        if not isinstance(record, Mapping):
            raise InvalidArgument(f"{where}: {record!r} is not a sample record (a mapping)")
        problem = sample_problem(record)
        if problem is not None:
            raise InvalidArgument(f"{where}: {problem}")
    tokens = record.get("tokens")
    trace = record.get("trace")
    return _Sample(
        case=record["case"],
        variant=record["variant"],
        repeat=record["repeat"],
        status=record["status"],
        checks=[
            _Check(
                check=c.get("check"),
                axis=c.get("axis"),
                status=c["status"],
                reason=c.get("reason"),
                not_inspected=c.get("not_inspected", UNSET),
                judge_unmeasured=c.get("judge_unmeasured") is True,
                raw_score=_float(c["raw_score"]) if "raw_score" in c else UNSET,
                scale=[float(x) for x in c["scale"]] if "scale" in c else UNSET,
            )
            for c in record["checks"]
        ],
        latency_s=_float(record.get("latency_s")),
        tokens=None
        if tokens is None
        else _Tokens(input=tokens.get("input"), output=tokens.get("output")),
        trace=_NULL if trace is None else msgspec.Raw(msgspec.json.encode(trace)),
        workspace=(
            msgspec.Raw(msgspec.json.encode(record["workspace"]))
            if "workspace" in record
            else _ABSENT
        ),
        score=_float(record["score"]) if "score" in record else UNSET,
    )


def _float(value: Any) -> Any:
    """A latency as the typed decoder gives it: ints as floats, the rest as they are."""
    return float(value) if isinstance(value, int) else value


def _memory_manifest(manifest: Any, *, checked: bool = False) -> Tally:
    if checked:  # built to the schema (an imported log's): counted as it is
        t = Tally(None, {k: v for k, v in manifest.items() if k != "schedule"})
        t._schedule(manifest.get("schedule") or ())
        return t
    if not isinstance(manifest, Mapping):
        raise InvalidArgument(f"manifest={manifest!r} must be a mapping")
    # The schedule's slots are checked in one conversion (each slot against the
    # schedule's type, as manifest_problem checks them one call at a time: 0.6 s
    # for 100,000 slots); only a schedule that does not fit is read again slot by
    # slot, for the one that is wrong.
    schedule = manifest.get("schedule")
    whole = isinstance(schedule, list) and _fits_schedule(schedule)
    problem = manifest_problem(manifest, schedule=not whole)
    if problem is not None:
        raise InvalidArgument(f"the manifest's {problem}")
    t = Tally(None, {k: v for k, v in manifest.items() if k != "schedule"})
    t._schedule(manifest.get("schedule") or ())
    return t


def _fits_schedule(schedule: list[Any]) -> bool:
    try:
        msgspec.convert(schedule, list[Slot])  # type: ignore[valid-type]
    except msgspec.ValidationError:
        return False
    return True


def _finish(t: Tally, warnings: Iterable[str]) -> Tally:
    t.warnings = tuple(warnings)
    t._duplicates = []
    return t


#: Byte codes of a cell's outcomes, 1 for each counted sample (see _unplanned).
_COUNTED = bytes([0] + [1] * 255)


def _unplanned(t: Tally) -> tuple[tuple[str, str, int], str] | None:
    """The first sample counted that the manifest does not have, and why: its
    ``(case, variant, repeat)``, or None when every sample is one the run planned.

    With a schedule, every sample must fill one of its slots; without one (an
    import, an older file), its variant, case and repeat must be among the
    manifest's variants, cases and runs, where the manifest lists them. A sample
    outside them would be counted and ranked as if the run had planned it.
    """
    rounds = t.manifest.get("until_decided")
    if t.has_schedule and isinstance(rounds, Mapping):
        # A sequential run: each round runs the schedule's slots again, its repeat
        # the round's number, up to max_runs rounds.
        most = rounds.get("max_runs")
        for name, v in t._variants.items():
            for case, cell in v.cells.items():
                counted = cell.outcome.translate(_COUNTED).rstrip(b"\0")
                if not counted:
                    continue
                if not any(cell.scheduled):
                    return (case, name, counted.index(1)), "the schedule has no such slot"
                if isinstance(most, int) and len(counted) > most:
                    return (case, name, len(counted) - 1), f"the run had at most {most} rounds"
        return None
    if t.has_schedule:
        for name, v in t._variants.items():
            for case, cell in v.cells.items():
                counted = cell.outcome.translate(_COUNTED)
                planned = bytes(cell.scheduled)
                n = max(len(counted), len(planned))
                extra = int.from_bytes(counted.ljust(n, b"\0"), "big") & ~int.from_bytes(
                    planned.ljust(n, b"\0"), "big"
                )
                if extra:
                    repeat = n - 1 - (extra.bit_length() - 1) // 8
                    return (case, name, repeat), "the schedule has no such slot"
        return None
    m = t.manifest
    listed = m.get("variants")
    # Each list holds objects with a "name" (an "id"), or the names (ids) themselves.
    variants = (
        {x.get("name") if isinstance(x, Mapping) else x for x in listed}
        if isinstance(listed, list) and listed
        else None
    )
    listed = m.get("cases")
    cases = (
        {x.get("id") if isinstance(x, Mapping) else x for x in listed}
        if isinstance(listed, list) and listed
        else None
    )
    runs = m.get("runs")
    runs = runs if isinstance(runs, int) and not isinstance(runs, bool) and runs > 0 else None
    for name, v in t._variants.items():
        for case, cell in v.cells.items():
            counted = cell.outcome.translate(_COUNTED).rstrip(b"\0")
            if not counted:
                continue
            key = (case, name, counted.index(1))
            if variants is not None and name not in variants:
                return key, "the manifest has no such variant"
            if cases is not None and case not in cases:
                return key, "the manifest has no such case"
            if runs is not None and len(counted) > runs:
                return (case, name, len(counted) - 1), f"the manifest has {runs} runs"
    return None


def _refuse_unplanned(t: Tally, shown: str, lines: Iterable[Any] | None) -> None:
    """Raise naming the line (or the record) of the first sample the manifest
    does not have (see :func:`_unplanned`); ``lines``: the file's lines, read
    again only then, or None for records in memory."""
    found = _unplanned(t)
    if found is None:
        return
    key, why = found
    where = ""
    if lines is not None:
        decoder = msgspec.json.Decoder(_SlotKey)
        for number, line in enumerate(lines, start=1):
            try:
                k = decoder.decode(line)
            except (msgspec.DecodeError, RecursionError):
                continue
            if (k.case, k.variant, k.repeat) == key:
                where = f"line {number}: "
                break
    case, variant, repeat = key
    raise ResultsFileError(
        f"{shown}: {where}a sample of case {short_repr(case)}, variant {short_repr(variant)}, "
        f"repeat {repeat}, which the run did not plan ({why}); counted, it would be "
        "ranked as if planned: remove that line"
    )


#: How many built records are made into structs at once (their memory stays flat).
_CONVERTED = 8192


def _built_verdicts(case: str, checks: list[Any]) -> _Verdicts:
    """The verdicts of a built record's checks (as the tally's structs), kept (see
    :class:`_Verdicts`) unless they have levels, which are then counted at every
    sample, in the order seen."""
    verdicts = _Verdicts(case, checks)
    verdicts.kept = not verdicts.levels
    return verdicts


def _add_built(t: Tally, samples: Sequence[Any], seen: dict[tuple[str, int], _Verdicts]) -> None:
    """Count built records, :data:`_CONVERTED` at a time, by the verdicts ``seen``
    of each case and list of checks."""
    add = t._add
    structs: dict[int, list[Any]] = {}  # each list of checks, as the tally's structs
    for start in range(0, len(samples), _CONVERTED):
        chunk = msgspec.convert(samples[start : start + _CONVERTED], list[_BuiltSample])  # type: ignore[valid-type]
        for i, sample in enumerate(chunk, start):
            checks = sample.checks
            key = (sample.case, id(checks))
            verdicts = seen.get(key)
            if verdicts is None:
                made = structs.get(key[1])
                if made is None:
                    made = structs[key[1]] = msgspec.convert(checks, list[_Check])  # type: ignore[valid-type]
                verdicts = seen[key] = _built_verdicts(sample.case, made)
            add(sample, i, verdicts)


def _tally_results(res: Results, *, checked: bool = False) -> Tally:
    """Count a :class:`Results` in memory (its reader has warned about duplicates);
    ``checked``: its records were checked as they were read from its file, or
    built to the schema by the reader of another tool's log (``res.built``)."""
    built = getattr(res, "built", False) is True
    checked = checked or built
    t = _memory_manifest(res.manifest, checked=built)
    t.path = None if res.path is None else str(res.path)
    if built:  # made into the tally's structs a chunk at a time, as a file's lines are
        samples = res.samples
        # Such a reader shares one list of checks among the records that have the
        # same verdict (see reading._log_table), so the verdicts of each case and
        # list are counted once (the lists live as long as ``samples``).
        seen: dict[tuple[str, int], _Verdicts] = {}
        with _gc_paused():  # no cycles (see results._gc_paused)
            _add_built(t, samples, seen)
    else:
        for i, record in enumerate(res.samples):
            sample = _memory_sample(record, f"sample {i}", checked=checked)
            t._add(sample, i, None)
    t.summary = res.summary
    t.looks = tuple(res.looks)
    if _unplanned(t) is not None:
        if t.path is None:
            _refuse_unplanned(t, "the results", None)
        with open_input(t.path, what="a results file", error=ResultsFileError) as f:
            _refuse_unplanned(t, t.path, f)
    return _finish(t, res.warnings)


def _tally_records(records: Iterator[Any]) -> Tally:
    """Count records in memory: the manifest first, then samples (and looks), then a summary."""
    manifest = next(records, None)
    if manifest is None:
        raise InvalidArgument("records=[] is empty; the first record must be the manifest")
    if isinstance(manifest, Mapping) and manifest.get("type", "manifest") != "manifest":
        raise InvalidArgument(
            f"the first record must be the manifest, not a {manifest.get('type')!r} record"
        )
    t = _memory_manifest(manifest)
    warnings = []
    looks: list[dict[str, Any]] = []
    first: dict[tuple[str, str, int], int] = {}
    for i, record in enumerate(records, start=1):
        kind = record.get("type", "sample") if isinstance(record, Mapping) else None
        if kind == "summary":
            t.summary = dict(record)
            continue
        if kind == "look":
            looks.append(dict(record))
            continue
        if kind != "sample":
            raise InvalidArgument(
                f"record {i}: type={kind!r} is not a sample, look or summary record"
            )
        sample = _memory_sample(record, f"record {i}")
        key = (sample.case, sample.variant, sample.repeat)
        if key in first:
            warnings.append(
                f"record {i}: a second sample for case {key[0]!r}, variant {key[1]!r}, "
                f"repeat {key[2]} (the first is record {first[key]} and is the one counted)"
            )
        else:
            first[key] = i
        t._add(sample, i, None)
    t.looks = tuple(looks)
    return _finish(t, warnings)


def _tally_file(path: str | os.PathLike[str], opened: IO[bytes] | None = None) -> Tally:
    """Count a results file in one streaming pass (from ``opened``, the file the
    caller opened, when given; it is closed)."""
    holder: list[Tally] = []

    def manifest(line: bytes, number: int) -> dict[str, Any] | None:
        try:
            fields = _RAW_FIELDS.decode(line)
        except msgspec.ValidationError:  # valid JSON, but not an object
            return scan.check_manifest(_parse_line(line), number)
        except msgspec.DecodeError:
            parsed = _parse_line(line)  # what the standard library takes, such as NaN
            if parsed is None:
                return None
            # A lone surrogate (which UTF-8 cannot hold) shown as its escape, as
            # the writer would have written it.
            parsed = recordable(parsed, "manifest")[0] if isinstance(parsed, dict) else parsed
            fields = {k: msgspec.Raw(msgspec.json.encode(v)) for k, v in parsed.items()}
        schedule = fields.pop("schedule", None)
        record = scan.check_manifest({k: _ANY.decode(v) for k, v in fields.items()}, number)
        problem = manifest_problem(record, schedule=False)
        if problem is not None:
            raise ResultsFileError(f"{scan.shown}: line {number}: the manifest's {problem}")
        t = Tally(scan.shown, record)
        if schedule is not None and schedule != _NULL:
            _read_schedule(t, schedule, f"{scan.shown}: line {number}: the manifest's")
        holder.append(t)
        lines.add = t._add
        return record

    lines = _Lines(os.fspath(path))

    def long_manifest(f: IO[bytes], head: bytes) -> tuple[dict[str, Any] | None, int]:
        t = Tally(scan.shown, {})
        slots = _Slots(t, f"{scan.shown}: line 1: the manifest's")
        fields, size = _read_long_manifest(f, head, slots)
        if fields is None:
            return None, size
        schedule = fields.pop("schedule", b"[]")  # b"[]": streamed to the slots already
        try:
            record = {k: _ANY.decode(v) for k, v in fields.items()}
            other = _ANY.decode(schedule)
        except msgspec.DecodeError:
            return None, size
        record = scan.check_manifest(record, 1)
        problem = manifest_problem({"schedule": other})
        if problem is not None:
            raise ResultsFileError(f"{scan.shown}: line 1: the manifest's {problem}")
        record = scan.check_manifest(record, 1)
        problem = manifest_problem(record, schedule=False)
        if problem is not None:
            raise ResultsFileError(f"{scan.shown}: line 1: the manifest's {problem}")
        t.manifest = record
        holder.append(t)
        lines.add = t._add
        return record, size

    scan = _Scan(path, manifest, lines, long_manifest=long_manifest, opened=opened)
    with _gc_paused():  # many short-lived objects and no cycles (see results._gc_paused)
        # lines counts the samples it decodes; only those read again come here
        for number, (sample, verdicts) in scan.records():
            holder[0]._add(sample, number, verdicts)
    t = holder[0]
    t.summary = scan.summary
    t.looks = tuple(scan.looks)
    if t._duplicates:
        _warn_duplicates(scan, t._duplicates)
    if _unplanned(t) is not None:
        with open_input(scan.path, what="a results file", error=ResultsFileError) as f:
            _refuse_unplanned(t, scan.shown, f)
    return _finish(t, scan.warnings)


def _no_tally(sample: Any, number: int, verdicts: _Verdicts | None) -> None:
    raise AssertionError("a sample before the manifest")  # _Scan reads none


class _Lines:
    """Decodes the lines after the manifest: a sample is counted at once, by
    ``add`` (given the sample and its _Verdicts; None: the sample's own checks,
    decoded, are counted), and :data:`~evalstats.results._file.SAMPLE_COUNTED`
    returned; any other record as ``(type, record)``, a sample read again by
    the standard library as ``("sample", (sample, None))``, or None for a line
    that is not valid JSON.

    The verdicts of each (case, checks' text) are kept (up to :data:`MEMO` of
    them), so that checks seen before are not decoded again; checks the same as
    the last kept ones of their case are found by comparing the text, without
    copying it into a key (two samples in three of the benchmark files'). When
    that does not pay (fewer than two samples in three found their checks kept,
    as when every sample's reasons differ), lines are decoded whole, checks
    included, and the checks are counted as they are: then the cases, check
    names and axes seen so far come out of the decoder as the very same strings
    every time (see :func:`_named_decoder`), which makes counting them cheaper.
    """

    #: After this many samples whose checks were not kept, whether keeping pays is judged.
    JUDGE_EVERY = 1024
    #: After this many lines the named decoder refused, it is made again with the names
    #: they brought (up to NAMES names), or given up.
    STRAYS = 64
    NAMES = 4096

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.seen: dict[tuple[str, bytes], _Verdicts] = {}
        # by case, the checks' text of its last sample found in seen, and their verdicts
        self.last: dict[str, tuple[msgspec.Raw, _Verdicts]] = {}
        self.hits = self.misses = 0
        self.keeping = True
        # the names the named decoder knows: cases, check names, axes
        self.names: tuple[dict[str, None], dict[str, None], dict[str, None]] = ({}, {}, {})
        self.named: msgspec.json.Decoder[Any] | None = None
        self.strays = 0
        self.built = 0  # the names the named decoder was last made with
        # Tally._add of the run's counts, set once the manifest is read: counting
        # a sample here, not where _Scan.records yields it, saves a tenth of a
        # 100,000-sample reading's own work
        self.add: Callable[[Any, int, _Verdicts | None], None] = _no_tally

    def __call__(self, line: bytes, number: int) -> tuple[Any, Any] | None:
        if not self.keeping:  # the line whole, checks included
            try:
                if self.named is None:
                    whole = _WHOLE.decode(line)
                else:
                    try:
                        whole = self.named.decode(line)
                    except msgspec.DecodeError:
                        whole = self._stray(line)
            except msgspec.DecodeError:
                return _slow_record(self.shown, line, number)
            if whole.__class__ is _Summary:
                return "summary", _ANY.decode(line)
            self.add(whole, number, None)
            return SAMPLE_COUNTED
        try:
            decoded = _LINE.decode(line)
        except msgspec.DecodeError:  # a ValidationError too: read it again, say what is wrong
            return _slow_record(self.shown, line, number)
        if type(decoded) is not _FileSample:
            return "summary", _ANY.decode(line)
        case, text = decoded.case, decoded.checks
        last = self.last.get(case)
        if last is not None and last[0] == text:  # the checks of the case's last sample
            self.hits += 1
            self.add(decoded, number, last[1])
            return SAMPLE_COUNTED
        key = (case, bytes(text))
        verdicts = self.seen.get(key)
        if verdicts is not None:
            self.hits += 1
            self.last[case] = (msgspec.Raw(key[1]), verdicts)
            self.add(decoded, number, verdicts)
            return SAMPLE_COUNTED
        try:
            checks = _CHECKS.decode(text)
        except msgspec.DecodeError:
            return _slow_record(self.shown, line, number)
        verdicts = _Verdicts(case, checks)
        if len(self.seen) < MEMO:
            verdicts.kept = not verdicts.levels
            self.seen[key] = verdicts
            self.last[case] = (msgspec.Raw(key[1]), verdicts)
        self.misses += 1
        if self.misses % self.JUDGE_EVERY == 0 and self.hits < 2 * self.misses:
            self.keeping = False
            for kept in self.seen.values():
                for (case, check, axis, _), _ in kept.keys:
                    self._name(case, check, axis)
            self.seen.clear()
            self.last.clear()
            self.named = _named_decoder(*self.names)
            self.built = sum(map(len, self.names))
        self.add(decoded, number, verdicts)
        return SAMPLE_COUNTED

    def _name(self, case: str, check: Any, axis: Any) -> None:
        cases, checks, axes = self.names
        cases[case] = None
        if check is not None:
            checks[check] = None
        if axis is not None:
            axes[axis] = None

    def _stray(self, line: bytes) -> Any:
        """A line the named decoder refused (a name it does not know, or a line that
        breaks the format), decoded as any line is; every STRAYS of them, the named
        decoder is made again, knowing their names too, once it would know twice
        the names it knows (making it takes time in the names: made every STRAYS
        strays, a run of 40,000 cases made it 60 times, up to NAMES names each)."""
        whole = _WHOLE.decode(line)
        if whole.__class__ is _Sample:
            for c in whole.checks:
                self._name(whole.case, c.check, c.axis)
            self._name(whole.case, None, None)
            self.strays += 1
            if self.strays % self.STRAYS == 0:
                known = sum(map(len, self.names))
                if known > self.NAMES:
                    self.named = None
                elif known >= 2 * self.built:
                    self.named, self.built = _named_decoder(*self.names), known
        return whole


def _named_decoder(
    cases: Iterable[str], checks: Iterable[str], axes: Iterable[str]
) -> msgspec.json.Decoder[Any]:
    """A decoder of sample lines, as :data:`_WHOLE`, that gives each of the named
    cases, check names and axes as the very string given: its hash is computed
    once, and the counts' keys built of them compare by identity. A line with any
    other case, check name or axis fails to decode."""

    def one_of(names: Iterable[str]) -> Any:
        names = tuple(names)
        return Literal[names] if names else str  # type: ignore[valid-type]

    check = msgspec.defstruct(
        "_NamedCheck",
        [("check", one_of(checks) | None, None), ("axis", one_of(axes) | None, None)],
        bases=(_Check,),
        gc=False,
    )
    sample = msgspec.defstruct(
        "_NamedSample",
        [("case", one_of(cases)), ("checks", list[check])],  # type: ignore[valid-type]
        bases=(_Sample,),
        tag="sample",
        tag_field="type",
        gc=False,
    )
    return msgspec.json.Decoder(sample | _Summary)


def _slow_record(shown: str, line: bytes, number: int) -> tuple[Any, Any] | None:
    """A line the typed decoder refused: parsed again, with the reason it does not fit."""
    parsed = _parse_line(line)
    if parsed is None:
        return None
    if not isinstance(parsed, dict):
        raise ResultsFileError(f'{shown}: line {number} is not a JSON object with a "type"')
    kind = parsed.get("type")
    if kind != "sample":
        return kind, parsed
    problem = sample_problem(parsed)
    if problem is not None:
        raise ResultsFileError(f"{shown}: line {number}: {problem}")
    # Valid by the format, but not by the typed decoder (NaN-free numbers the
    # standard library reads, for one): count it from the parsed record.
    sample = _memory_sample(parsed, f"{shown}: line {number}")
    return "sample", (sample, None)


class _Slots:
    """Counts schedule slots a chunk (the text of a JSON list of slots) at a time."""

    def __init__(self, t: Tally, where: str) -> None:
        self.t, self.where, self.seen = t, where, 0

    def __call__(self, chunk: bytes) -> None:
        try:
            slots = _SLOTS.decode(chunk)
        except msgspec.DecodeError:
            _bad_schedule(msgspec.Raw(chunk), self.where, first=self.seen)
        self.count(slots)

    def count(self, slots: list[Any]) -> None:
        """Count slots already decoded."""
        self.t._schedule(slots)
        self.seen += len(slots)


def _read_schedule(t: Tally, raw: msgspec.Raw, where: str) -> None:
    """Count a manifest's schedule a chunk of slots at a time, never all at once."""
    text = bytes(raw)
    end = len(text)
    while end and text[end - 1] in b" \t\r\n":
        end -= 1
    pos = 0
    while pos < end and text[pos] in b" \t\r\n":
        pos += 1
    if not (end - pos >= 2 and text[pos] == ord("[") and text[end - 1] == ord("]")):
        _bad_schedule(raw, where)
    pos, end = pos + 1, end - 1
    count = _Slots(t, where)
    while pos < end:
        found, pos = _stretch(text, pos, end)
        if found is not None:
            count.count(found)
        else:
            match = _CHUNK.match(text, pos, end)
            if match is None:
                _bad_schedule(raw, where)
            count(b"[" + match.group(1) + b"]")
            pos = match.end()
        if pos < end:
            if text[pos] != ord(","):
                _bad_schedule(raw, where)
            pos += 1
            if pos >= end:
                _bad_schedule(raw, where)


def _bad_schedule(raw: msgspec.Raw, where: str, *, first: int = 0) -> NoReturn:
    """Say what is wrong with schedule slots the fast path could not read (then raise);
    ``first`` is the index of the first of them in the whole schedule."""
    try:
        schedule = _parse_line(bytes(raw))
    except RecursionError:
        schedule = None
    problem = None
    if isinstance(schedule, list):
        for i, slot in enumerate(schedule):
            found = slot_problem(slot)
            if found is not None:
                problem = f'"schedule"[{first + i}]: {found}'
                break
    elif schedule is not None:
        problem = manifest_problem({"schedule": schedule})
    raise ResultsFileError(
        f"{where} {problem}" if problem else f'{where} "schedule" is not a list of slots'
    )


def _warn_duplicates(scan: _Scan, duplicates: list[tuple[int, tuple[str, str, int]]]) -> None:
    """Warn about second records of a slot, naming the line of the first (read again)."""
    wanted = {key for _, key in duplicates}
    first: dict[tuple[str, str, int], int] = {}
    key_decoder = msgspec.json.Decoder(_SlotKey)
    with open_input(scan.path, what="a results file", error=ResultsFileError) as f:
        for number, line in enumerate(f, start=1):
            if number > duplicates[-1][0]:
                break
            try:
                k = key_decoder.decode(line)
            except msgspec.DecodeError:
                continue
            key = (k.case, k.variant, k.repeat)
            if key in wanted and key not in first:
                first[key] = number
    for i, (number, key) in enumerate(duplicates):
        scan.duplicate(number, key, first.get(key), at=scan.read_warnings + i)


class _SlotKey(msgspec.Struct):
    case: Any = None
    variant: Any = None
    repeat: Any = None


def tally_columns(
    head: Results,
    case_ids: list[str],
    variants: list[str],
    codes: Any,
    positions: Any,
    repeats: Any,
    verdicts: Sequence[Mapping[str, Any] | None],
    verdict_codes: Any,
    *,
    raws: Sequence[float | None] | None = None,
    scale: tuple[float, float] | None = None,
    latencies: tuple[list[float | None], Any] | None = None,
) -> Tally:
    """Count a long table from its columns: the :class:`Tally` its records would give.

    Each row is a scheduled slot and its sample, no (case, variant, repeat)
    twice. As numpy integer arrays of one entry a row: ``codes`` the index of
    the row's case in ``case_ids`` (the cases in order of first appearance),
    ``positions`` that of its variant in ``variants`` (in order of first
    appearance), ``repeats`` its repeat, ``verdict_codes`` that of its one
    check record in ``verdicts`` (None: a sample not measured). ``raws[i]`` is
    row i's score on ``scale`` (None: no score); ``latencies`` the distinct
    seconds (None: none) and each row's index among them. ``head`` is the
    run's :class:`Results` without samples: its path, manifest (its schedule is
    not read), summary and warnings. Each variant's outcomes are placed in a
    grid of cases by repeats at once, and its verdicts counted by (case, kind);
    keys and lists keep the order the records would give them.
    """
    import numpy as np

    t = Tally(head.path, {k: v for k, v in head.manifest.items() if k != "schedule"})
    t.summary = head.summary
    t.looks = tuple(head.looks)
    t.has_schedule = len(codes) > 0
    t._scheduled_cases = dict.fromkeys(case_ids)
    t._sample_cases = dict.fromkeys(case_ids)
    # What each distinct verdict counts as, found by counting it as a record's check:
    # its outcome code, and its (check, axis, kind) as a number (-1: not measured).
    labels: list[tuple[Any, Any, str]] = []
    outcome_of, label_of = [], []
    for verdict in verdicts:
        if verdict is None:
            outcome_of.append(_UNMEASURED)
            label_of.append(-1)
            continue
        made = msgspec.convert([verdict], list[_Check])  # type: ignore[valid-type]
        counted: dict[tuple[str, Any, Any, str], int] = {}
        passes, _ = _count_checks("", made, counted, {})
        ((_, *label),) = counted
        if tuple(label) not in labels:
            labels.append(tuple(label))  # type: ignore[arg-type]
        outcome_of.append(_PASSED if passes else _FAILED)
        label_of.append(labels.index(tuple(label)))  # type: ignore[arg-type]
    outcome = np.array(outcome_of, np.uint8)[verdict_codes]
    label = np.array(label_of, np.int64)[verdict_codes]
    seconds = None
    if latencies is not None:
        values, which = latencies
        seconds = np.array([math.nan if x is None else x for x in values], float)[which]
    listed = None
    if raws is not None:
        listed = (codes.tolist(), repeats.tolist(), [verdicts[k] for k in verdict_codes.tolist()])
    for p, name in enumerate(variants):
        rows = np.flatnonzero(positions == p)
        v = t._variant(name)
        _count_variant(v, case_ids, codes[rows], repeats[rows], outcome[rows], label[rows], labels)
        if seconds is not None:
            mine = seconds[rows]
            v.latencies.extend(mine[~np.isnan(mine)])
        if listed is not None:
            _count_scores(v, rows.tolist(), case_ids, *listed, raws, scale)  # type: ignore[arg-type]
    return _finish(t, head.warnings)


def _count_variant(
    v: _Variant,
    case_ids: list[str],
    codes: Any,
    repeats: Any,
    outcome: Any,
    label: Any,
    labels: list[tuple[Any, Any, str]],
) -> None:
    """One variant's rows (in row order) counted into ``v`` (see :func:`tally_columns`)."""
    import numpy as np

    present, first = np.unique(codes, return_index=True)
    order = present[np.argsort(first, kind="stable")]  # its cases, in order of first row
    local = np.empty(int(order.max()) + 1, np.int64)
    local[order] = np.arange(order.size)
    row_of = local[codes]
    width = int(repeats.max()) + 1
    grid = np.zeros((order.size, width), np.uint8)
    grid[row_of, repeats] = outcome
    planned = np.zeros((order.size, width), np.uint8)
    planned[row_of, repeats] = 1
    passes = np.count_nonzero(grid == _PASSED, axis=1).tolist()
    failed = np.count_nonzero(grid == _FAILED, axis=1).tolist()
    missing = np.count_nonzero(grid == _UNMEASURED, axis=1).tolist()
    outcomes, scheduled = grid.tobytes(), planned.tobytes()
    cells = v.cells
    for k, case in enumerate(map(case_ids.__getitem__, order.tolist())):
        cell = cells[case] = _Cell()
        cell.outcome = bytearray(outcomes[k * width : (k + 1) * width])
        cell.scheduled = bytearray(scheduled[k * width : (k + 1) * width])
        cell.passes = passes[k]
        cell.measured = passes[k] + failed[k]
        cell.unmeasured = missing[k]
    v.scheduled = int(codes.size)
    v.unmeasured = sum(missing)
    v.completed = sum(passes) + sum(failed)
    # Verdicts by (case, check, axis, kind), in the order of their first row.
    measured = np.flatnonzero(label >= 0)
    keys = row_of[measured] * len(labels) + label[measured]
    found, first, counts = np.unique(keys, return_index=True, return_counts=True)
    ranked = np.argsort(first, kind="stable")
    verdicts = v._verdicts
    for key, n in zip(found[ranked].tolist(), counts[ranked].tolist(), strict=True):
        case_row, which = divmod(key, len(labels))
        check, axis, kind = labels[which]
        verdicts[(case_ids[int(order[case_row])], check, axis, kind)] = n


def _count_scores(
    v: _Variant,
    rows: list[int],
    case_ids: list[str],
    codes: list[int],
    repeats: list[int],
    verdicts: Sequence[Mapping[str, Any] | None],
    raws: Sequence[float | None],
    scale: tuple[float, float] | None,
) -> None:
    """The scores of one variant's measured rows, and their levels on a discrete
    scale, as their records would add them."""
    from ._log_common import with_score

    low, high = scale  # type: ignore[misc]
    span = high - low
    discrete = low.is_integer() and high.is_integer() and 2 <= span <= MAX_LEVELS
    for i in rows:
        raw = raws[i]
        verdict = verdicts[i]
        if raw is None or verdict is None:
            continue
        score = with_score({}, raw, (low, high))["score"]
        v.scores.append((case_ids[codes[i]], repeats[i], score))
        if discrete:
            level = int(raw) if raw.is_integer() and low <= raw <= high else None
            lk = (verdict.get("check"), low, high, level)
            v._levels[lk] = v._levels.get(lk, 0) + 1
