"""Two runs of the same suite and variants, joined into one results file.

Run a suite today and again tomorrow (with another seed), and :func:`merge_runs`
writes one results file holding both, as if the repeats had been taken in one
run: the second run's repeats are numbered after the first's (repeat ``r`` of
the second becomes ``runs_first + r``), and its pairs after the first's pairs.
A pair keeps its case, its repeat and the order its variants ran in, so the
merged file compares paired exactly as each part did, and the alternating
schedule stays balanced (each part's is).

Only runs that measure the same thing are merged: the same suite (its parsed
cases and checks), the same variants (task and prompt transform; prices are
not part of a variant), the same judge and counting method, the same machine
where the machine can change the answers (see
:func:`~evalstats.results._comparability.machine_matters`), and different seeds. Equal seeds give
the second run the same per-sample seeds as the first for every case and
repeat: where a service honours seeds (and always on the stand-ins) its
answers repeat the first run's, and merging would count them twice.

The merged manifest is the first run's, with ``runs`` the total of repeats,
the schedule of both, and ``merged_from`` listing each part: its file name and
SHA-256, the repeats it holds in the merged file, its seed, when it started,
its machine, its status, and the variants as it recorded them (with their
prices). Merging a merged file keeps its parts in the list.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._text import canonical_json, short_repr
from ..errors import InvalidArgument, ResultsFileError
from ..results._comparability import comparability
from ..results._file import Results, read_results
from ..running._prices import without_prices

__all__ = [
    "MergeOutcome",
    "ShardsOutcome",
    "is_shard",
    "merge_runs",
    "merge_shards",
    "merged_spans",
    "refuse_imported",
    "shard_of",
]


@dataclass(frozen=True)
class MergeOutcome:
    """What :func:`merge_runs` wrote.

    ``out`` is the merged file, ``samples`` its number of sample records,
    ``runs`` its repeats per case, and ``parts`` the merged runs as
    ``(file name, first repeat, last repeat + 1)`` in the merged numbering.
    """

    out: str
    samples: int
    runs: int
    parts: tuple[tuple[str, int, int], ...]
    unfinished: str = ""

    def __str__(self) -> str:
        parts = "; ".join(
            f"{name}: repeats {start} to {stop - 1}"
            if stop - start > 1
            else f"{name}: repeat {start}"
            for name, start, stop in self.parts
        )
        return (
            f"merged {len(self.parts)} runs into {self.out}: {self.runs} repeats per case, "
            f"{self.samples} samples ({parts})"
            + (f"; {self.unfinished}" if self.unfinished else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "samples": self.samples,
            "runs": self.runs,
            "parts": [{"file": n, "repeats": [a, b]} for n, a, b in self.parts],
            "unfinished": self.unfinished or None,
        }


def _read(value: Any, name: str) -> Results:
    if isinstance(value, Results):
        return value
    if not isinstance(value, str | os.PathLike):
        raise InvalidArgument(f"{name}={value!r} must be a Results or the path of a results file")
    return read_results(value)


def _label(run: Results, name: str) -> str:
    return os.path.basename(run.path) if run.path else name


def _sha256(path: str | None) -> str | None:
    if not path or not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def refuse_imported(run: Results, label: str, done: str, why: str = "") -> None:
    """Refuse a file imported from another tool's log (``evalstats import``): it has
    no schedule, seeds or prompts of evalstats' own, so only a results file written
    by ``evalstats run`` can be ``done`` (merged, rescored); ``why`` says what else
    it lacks."""
    imported = run.manifest.get("imported")
    if imported is None:
        return
    tool = imported.get("tool") if isinstance(imported, Mapping) else None
    raise InvalidArgument(
        f"{label}: imported from {short_repr(tool or 'another tool')} (evalstats import)"
        f"{why}; only a results file written by evalstats run can be {done}"
    )


def merged_spans(manifest: Mapping[str, Any]) -> list[tuple[str, int, int, Any]]:
    """The parts of a merged file (``merged_from``) as ``(file name, first repeat, last
    repeat + 1, seed)`` in the merged numbering; the parts whose span is not two whole
    numbers are left out (none, for a file written by merge)."""
    spans = []
    for part in manifest.get("merged_from") or ():
        if not isinstance(part, Mapping):
            continue
        span = part.get("repeats")
        if isinstance(span, list) and len(span) == 2 and all(_whole(x) for x in span):
            spans.append((str(part.get("file")), int(span[0]), int(span[1]), part.get("seed")))
    return spans


def _schedule(run: Results, label: str) -> list[list[Any]]:
    """The run's schedule, each of the run's samples in one of its slots; a file
    without one, or imported from another tool's log, cannot be merged."""
    refuse_imported(run, label, "merged")
    if isinstance(run.manifest.get("until_decided"), Mapping):
        # Its schedule is one round's, run again round by round: numbered after its
        # "runs", another run's repeats would take the slots of its later rounds.
        raise InvalidArgument(
            f"{label}: a run made with --until-decided, whose rounds were looked at as they "
            "came; it is not merged with another run (read it as it is, with compare "
            "--sequential)"
        )
    slots = run.manifest.get("schedule")
    runs = run.manifest.get("runs")
    if not isinstance(slots, list) or not slots or not _whole(runs):
        raise InvalidArgument(
            f"{label}: its manifest has no schedule and number of runs; only results files "
            "written by evalstats run can be merged"
        )
    out = [list(slot) for slot in slots]
    _refuse_unplanned(run, label, out)
    return out


def _refuse_unplanned(run: Results, label: str, schedule: Sequence[Sequence[Any]]) -> None:
    """Refuse a sample of a slot the run's schedule does not have, naming its field.

    Merged, it would be in a file that report refuses, or in the slot of another
    part's sample, counted twice.
    """
    planned = {
        (str(s[0]), str(s[4]), s[1])
        for s in schedule
        if len(s) >= 5 and _whole(s[1]) and isinstance(s[0], str) and isinstance(s[4], str)
    }
    cases = {str(s[0]) for s in schedule if s}
    variants = {str(s[4]) for s in schedule if len(s) >= 5}
    for s in run.samples:
        case, variant, repeat = s.get("case"), s.get("variant"), s.get("repeat")
        if (case, variant, repeat) in planned:
            continue
        field = "case" if case not in cases else "variant" if variant not in variants else "repeat"
        raise InvalidArgument(
            f"{label}: a sample of case {short_repr(case)}, variant {short_repr(variant)}, "
            f"repeat {short_repr(repeat)}, which the run did not plan (its {field} is not in "
            "the manifest's schedule); merge only what evalstats run wrote (remove that "
            "sample)"
        )


def _variants(manifest: Mapping[str, Any]) -> dict[str, Any]:
    return {
        str(v.get("name")): without_prices(v)
        for v in manifest.get("variants") or ()
        if isinstance(v, Mapping)
    }


def merge_problems(first: Results, second: Results) -> list[str]:
    """Why two runs cannot be merged, one phrase each; empty when they can."""
    names_a, names_b = list(_variants(first.manifest)), list(_variants(second.manifest))
    problems: list[str] = []
    if sorted(names_a) != sorted(names_b):
        problems.append(f"the variants differ ({names_a} then {names_b})")
        chosen = [n for n in names_a if n in names_b]
    else:
        chosen = names_a
        va, vb = _variants(first.manifest), _variants(second.manifest)
        for name in names_a:
            if canonical_json(va[name]) != canonical_json(vb[name]):
                keys = sorted(
                    k
                    for k in set(va[name]) | set(vb[name])
                    if canonical_json(va[name].get(k)) != canonical_json(vb[name].get(k))
                )
                problems.append(f"variant {name!r} differs in its {', '.join(keys)}")
    if chosen:
        _, details = comparability(first.manifest, second.manifest, chosen)
        problems += [d for d in details if not d.startswith("model differs")]
    for key in ("include_holdout",):
        if bool(first.manifest.get(key)) != bool(second.manifest.get(key)):
            problems.append(f"{key} differs")
    shared = [s for s in _seeds(first.manifest) if s in _seeds(second.manifest)]
    if shared:
        problems.append(
            f"both used seed={shared[0]!r}, so samples of the second have the same seeds as the "
            "first's for their case and repeat, and repeat the first's answers wherever seeds "
            "are honoured (run the second with another --seed, or add repeats with run --extend)"
        )
    return problems


def _seeds(manifest: Mapping[str, Any]) -> list[Any]:
    """The seeds of a run: of each part, for a merged file."""
    parts = manifest.get("merged_from")
    if isinstance(parts, list) and parts:
        return [p.get("seed") for p in parts if isinstance(p, Mapping)]
    return [manifest.get("seed")]


def _part(run: Results, label: str, start: int, stop: int) -> dict[str, Any]:
    m = run.manifest
    summary = run.summary or {}
    return {
        "file": label,
        "sha256": _sha256(run.path),
        "repeats": [start, stop],
        "seed": m.get("seed"),
        "started_at": m.get("started_at"),
        "machine": m.get("machine"),
        "evalstats": m.get("evalstats"),
        "status": summary.get("status") if run.summary is not None else None,
        "variants": m.get("variants"),
    }


def _parts(run: Results, label: str, offset: int, stop: int) -> list[dict[str, Any]]:
    """The parts a run brings, shifted by ``offset`` repeats: its own parts when it is a
    merged file, else the run itself."""
    earlier = run.manifest.get("merged_from")
    if isinstance(earlier, list) and earlier and all(isinstance(p, Mapping) for p in earlier):
        out = []
        for p in earlier:
            part = dict(p)
            span = part.get("repeats")
            if isinstance(span, list) and len(span) == 2 and all(_whole(x) for x in span):
                part["repeats"] = [span[0] + offset, span[1] + offset]
            out.append(part)
        return out
    return [_part(run, label, offset, stop)]


def _unfinished(parts: Sequence[tuple[str, Results]]) -> str:
    """Why the merged file reads as unfinished ("" when it does not): the parts that
    have no summary (cut short) or one whose status is not finished."""
    cut = [label for label, run in parts if run.summary is None]
    ended = [
        f"{label} ({run.summary.get('status')})"
        for label, run in parts
        if run.summary is not None and run.summary.get("status") != "finished"
    ]
    if cut:
        return (
            f"{', '.join(cut)} {'has' if len(cut) == 1 else 'have'} no summary (cut short), so "
            "the merged file has none and reads as unfinished (gate refuses it without "
            "--allow-unfinished)"
        )
    if ended:
        return (
            f"{', '.join(ended)} did not finish, so the merged file reads as unfinished (gate "
            "refuses it without --allow-unfinished)"
        )
    return ""


def _summary(parts: Sequence[tuple[str, Results]], samples: Sequence[Mapping[str, Any]]) -> Any:
    """The merged summary: finished when every part finished; else the first part's status
    that was not, with the reason naming the part. None when a part has no summary."""
    if any(run.summary is None for _, run in parts):
        return None
    status, reason = "finished", None
    for label, run in parts:
        part = run.summary or {}
        if part.get("status") != "finished":
            status = str(part.get("status"))
            why = part.get("reason")
            reason = f"{label} ended with status {status!r}" + (f": {why}" if why else "")
            break
    by_variant: dict[str, dict[str, int]] = {}
    for s in samples:
        counts = by_variant.setdefault(
            str(s["variant"]), {"completed": 0, "incomplete": 0, "unmeasured": 0}
        )
        if s.get("status") in counts:
            counts[s["status"]] += 1
    return {
        "status": status,
        "reason": reason,
        "samples": len(samples),
        "by_variant": by_variant,
        "finished_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
    }


def merge_runs(
    first: Any, second: Any, *, out: str | os.PathLike[str], force: bool = False
) -> MergeOutcome:
    """Join two runs of the same suite and variants into one results file.

    Parameters
    ----------
    first, second : Results or path
        Two results files written by ``evalstats run`` (or by an earlier
        merge). The second's repeats are numbered after the first's.
    out : path
        The merged file; created exclusively (mode 0600).
    force : bool
        Replace ``out`` if it exists, in one step once the merged file is whole
        (without it an existing file is refused and left as it was).

    Returns
    -------
    MergeOutcome

    Raises
    ------
    InvalidArgument
        When the runs differ in suite (cases or checks), variants (names,
        tasks, prompt transforms), judge, counting method, holdout cases, or
        machine where it matters, or used the same seed; the message says
        which, in one line. Also when a file has no schedule or was imported
        (``evalstats import``), was made with ``--until-decided`` (its repeats
        are its rounds), or holds a sample its schedule does not plan (named by
        its case, variant and repeat, and the field that is not planned).
    ResultsFileError
        When ``out`` exists (without ``force``), or a file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from evalstats.running._engine import run
    >>> folder = tempfile.mkdtemp()
    >>> a, b = os.path.join(folder, "a.jsonl"), os.path.join(folder, "b.jsonl")
    >>> _ = run("shop", ["v1=standin:shop-v1"], runs=3, out=a, progress=False)
    >>> _ = run("shop", ["v1=standin:shop-v1"], runs=2, seed=1, out=b, progress=False)
    >>> merged = merge_runs(a, b, out=os.path.join(folder, "ab.jsonl"))
    >>> merged.runs, merged.samples, merged.parts[1][1:]
    (5, 20, (3, 5))
    """
    if not isinstance(out, str | os.PathLike) or not os.fspath(out):
        raise InvalidArgument(f"out={out!r} must be a file path")
    shown = os.fspath(out)
    from .._files import refuse_existing

    if os.path.lexists(shown) and not force and not os.path.isdir(shown):
        raise ResultsFileError(
            f"{shown} already exists; results are never overwritten: choose a new --out "
            "path, or add --force to replace it"
        )
    refuse_existing(shown, force=force, error=ResultsFileError)
    a, b = _read(first, "first"), _read(second, "second")
    label_a, label_b = _label(a, "first"), _label(b, "second")
    if a.path and b.path and os.path.exists(a.path) and os.path.samefile(a.path, b.path):
        raise InvalidArgument(f"second={b.path!r} is the same file as first; merge two runs")
    if label_a == label_b:
        label_b = f"{label_b} (second)"
    schedule_a, schedule_b = _schedule(a, label_a), _schedule(b, label_b)
    problems = merge_problems(a, b)
    if problems:
        raise InvalidArgument(f"cannot merge {label_a} and {label_b}: " + "; ".join(problems))
    # The second run's repeats follow the first's scheduled repeats (taken or
    # not), and its pairs follow the first's pairs, so no (case, repeat) slot
    # and no pair number is used twice.
    offset = max([int(a.manifest["runs"]), *(int(s[1]) + 1 for s in schedule_a)])
    pair_offset = max(int(s[2]) for s in schedule_a) + 1
    runs_b = max([int(b.manifest["runs"]), *(int(s[1]) + 1 for s in schedule_b)])

    def moved(slot: Sequence[Any]) -> list[Any]:
        return [slot[0], int(slot[1]) + offset, int(slot[2]) + pair_offset, *slot[3:]]

    samples = [dict(s) for s in a.samples]
    for s in b.samples:
        record = dict(s)
        record["repeat"] = int(s["repeat"]) + offset
        if _whole(s.get("pair")):
            record["pair"] = int(s["pair"]) + pair_offset
        samples.append(record)
    manifest = {k: v for k, v in a.manifest.items() if k not in ("type", "format")}
    manifest["runs"] = offset + runs_b
    manifest["schedule"] = schedule_a + [moved(slot) for slot in schedule_b]
    manifest["merged_from"] = _parts(a, label_a, 0, offset) + _parts(
        b, label_b, offset, offset + runs_b
    )
    manifest["merged_at"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
    from ._logs import write_results

    merged = Results(
        shown,
        manifest,
        tuple(samples),
        _summary([(label_a, a), (label_b, b)], samples),
        (),
    )
    path = write_results(merged, shown, force=force)
    spans = tuple((name, start, stop) for name, start, stop, _ in merged_spans(manifest))
    unfinished = _unfinished([(label_a, a), (label_b, b)])
    return MergeOutcome(path, len(samples), offset + runs_b, spans, unfinished)


# --- shards of one run --------------------------------------------------------------


@dataclass(frozen=True)
class ShardsOutcome:
    """What :func:`merge_shards` wrote: ``out``, its sample records, the whole run's
    cases, and the shards as ``(file name, index)``, in index order."""

    out: str
    samples: int
    cases: int
    count: int
    parts: tuple[tuple[str, int], ...]
    unfinished: str = ""

    def __str__(self) -> str:
        parts = ", ".join(f"{index}/{self.count} {name}" for name, index in self.parts)
        return (
            f"merged {self.count} shards into {self.out}: {self.cases} cases, "
            f"{self.samples} samples ({parts})"
            + (f"; {self.unfinished}" if self.unfinished else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "samples": self.samples,
            "cases": self.cases,
            "shards": [{"file": n, "index": i, "count": self.count} for n, i in self.parts],
            "unfinished": self.unfinished or None,
        }


def is_shard(run: Results) -> bool:
    """Whether a results file is one shard of a run (``run --shard I/N``)."""
    return isinstance(run.manifest.get("shard"), Mapping)


#: What makes a run, compared between shards to say how two differ.
_RUN_KEYS = ("runs", "seed", "include_holdout", "selection", "judge", "counting_method")


def shard_of(run: Results, label: str) -> tuple[int, int, int, str]:
    """``(index, count, cases, run digest)`` of a shard's manifest, checked."""
    shard = run.manifest.get("shard")
    if not isinstance(shard, Mapping):
        raise InvalidArgument(
            f"{label}: is not a shard (its manifest has no shard); merge the files that "
            "run --shard I/N wrote, or two whole runs as merge FIRST SECOND"
        )
    index, count, cases, digest = (shard.get(k) for k in ("index", "count", "cases", "run"))
    if not (
        _whole(index)
        and _whole(count)
        and _whole(cases)
        and 1 <= index <= count
        and isinstance(digest, str)
    ):
        raise InvalidArgument(f"{label}: its manifest's shard {shard!r} is not I of N shards")
    return int(index), int(count), int(cases), digest


def _how_runs_differ(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """The first parts of two manifests that make them different runs, as a phrase."""
    found = []
    if (a.get("suite") or {}).get("sha256") != (b.get("suite") or {}).get("sha256"):
        found.append("suite")
    if canonical_json(_variants(a)) != canonical_json(_variants(b)):
        found.append("variants")
    found += [
        f"{k} ({a.get(k)!r} and {b.get(k)!r})"
        for k in _RUN_KEYS
        if canonical_json(a.get(k)) != canonical_json(b.get(k))
    ]
    return ", ".join(found) or "the cases of the run"


def merge_shards(
    files: Sequence[Any], *, out: str | os.PathLike[str], force: bool = False
) -> ShardsOutcome:
    """Join the N shards of one run (``run --shard I/N``) into the whole run's file.

    The shards must be one run: the same run digest (suite, cases, variants
    without prices, runs, seed, holdout cases, selection, judge, counting
    method) and shard count, each index once, no case in two shards and
    every case of the run in one. The merged file is the one the whole run
    would have written: its manifest is the first shard's with every case (in
    the run's order) and the whole schedule, and ``sharded_from`` lists each
    shard (file name, SHA-256, index, start time, machine, status); the
    samples are the shards', in the order of the run's schedule.

    Parameters
    ----------
    files : sequence of Results or path
        The shards, in any order.
    out : path
        The merged file; created exclusively, never overwriting.
    force : bool
        Replace an existing ``out`` in one step once the merged file is whole.

    Raises
    ------
    InvalidArgument
        In one line, when a file is not a shard, the shards are of different
        runs or counts, are scored differently (a shard rescored with another
        suite or judge than the others), a shard is given twice or missing, a
        case is in two shards or in none, or a shard holds a sample its schedule
        does not plan.
    ResultsFileError
        When ``out`` exists, or a file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from evalstats.running._engine import run
    >>> folder = tempfile.mkdtemp()
    >>> paths = [os.path.join(folder, f"shard{i}.jsonl") for i in (1, 2)]
    >>> for i, path in enumerate(paths, start=1):
    ...     _ = run("shop", ["v1=standin:shop-v1"], runs=2, out=path, shard=(i, 2),
    ...             progress=False)
    >>> print(merge_shards(paths[::-1], out=os.path.join(folder, "all.jsonl")))
    merged 2 shards into .../all.jsonl: 4 cases, 8 samples (1/2 shard1.jsonl, 2/2 shard2.jsonl)
    """
    if not isinstance(out, str | os.PathLike) or not os.fspath(out):
        raise InvalidArgument(f"out={out!r} must be a file path")
    from .._files import refuse_existing

    shown = os.fspath(out)
    refuse_existing(shown, force=force, error=ResultsFileError)
    if isinstance(files, str | os.PathLike) or not files:
        raise InvalidArgument("give the shards' results files, at least one")
    runs = [_read(f, f"files[{i}]") for i, f in enumerate(files)]
    labels = [_label(r, f"files[{i}]") for i, r in enumerate(runs)]
    shards = [shard_of(r, label) for r, label in zip(runs, labels, strict=True)]
    first_index, count, total, digest = shards[0]
    by_index: dict[int, int] = {}
    for i, (index, n, cases, theirs) in enumerate(shards):
        if theirs != digest or cases != total:
            why = _how_runs_differ(runs[0].manifest, runs[i].manifest)
            raise InvalidArgument(
                f"{labels[0]} and {labels[i]} are shards of different runs (they differ in "
                f"{why}); merge the shards of one run"
            )
        scored = _scored_differently(runs[0].manifest, runs[i].manifest)
        if scored:
            raise InvalidArgument(
                f"{labels[0]} and {labels[i]} are scored differently ({scored}; was one "
                "rescored?); rescore every shard the same way, or rescore the merged file"
            )
        if n != count:
            raise InvalidArgument(
                f"{labels[0]} is shard {first_index} of {count} and {labels[i]} shard "
                f"{index} of {n}; the shards of one run have one count"
            )
        if index in by_index:
            raise InvalidArgument(
                f"shard {index}/{count} is given twice ({labels[by_index[index]]} and {labels[i]})"
            )
        by_index[index] = i
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise InvalidArgument(
            f"shard{'s' * (len(missing) > 1)} {', '.join(f'{i}/{count}' for i in missing)} "
            f"{'are' if len(missing) > 1 else 'is'} missing; merge all {count} shards of the run"
        )
    order = [by_index[i] for i in range(1, count + 1)]
    where: dict[str, str] = {}
    cases: dict[str, Any] = {}
    schedule: list[list[Any]] = []
    for i in order:
        run, label = runs[i], labels[i]
        for case in run.manifest.get("cases") or ():
            cid = case.get("id") if isinstance(case, Mapping) else case
            if cid in where:
                raise InvalidArgument(f"case {cid!r} is in two shards ({where[cid]} and {label})")
            where[cid] = label
            cases[cid] = case
        schedule += _schedule(run, label)
    if len(cases) != total:
        raise InvalidArgument(
            f"the shards hold {len(cases)} cases, the run has {total}; a shard is not "
            "the run's (was a case added or removed between them?)"
        )
    schedule.sort(key=lambda s: (int(s[2]), int(s[3])))
    place: dict[str, int] = {}
    for s in schedule:
        place.setdefault(str(s[0]), int(s[2]) - int(s[1]) * total)
    # In the whole run's schedule order, as one run taking one sample at a time writes
    # them: the report lists checks and axes in the order it first meets them.
    rank = {(str(s[0]), str(s[4]), int(s[1])): n for n, s in enumerate(schedule)}
    samples = sorted(
        (dict(s) for i in order for s in runs[i].samples),
        key=lambda s: rank.get((s["case"], s["variant"], s["repeat"]), len(rank)),
    )
    manifest = {
        k: v for k, v in runs[order[0]].manifest.items() if k not in ("type", "format", "shard")
    }
    manifest["cases"] = sorted(cases.values(), key=lambda c: place.get(_case_id(c), total))
    manifest["schedule"] = schedule
    manifest["sharded_from"] = [
        {**_part(runs[i], labels[i], 0, 0), "shard": [shards[i][0], count]} for i in order
    ]
    for part in manifest["sharded_from"]:
        del part["repeats"]
    manifest["merged_at"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
    from ._logs import write_results

    merged = Results(
        shown,
        manifest,
        tuple(samples),
        _summary([(labels[i], runs[i]) for i in order], samples),
        (),
    )
    path = write_results(merged, shown, force=force)
    parts = tuple((labels[i], shards[i][0]) for i in order)
    unfinished = _unfinished([(labels[i], runs[i]) for i in order])
    return ShardsOutcome(path, len(samples), total, count, parts, unfinished)


def _case_id(case: Any) -> str:
    return str(case.get("id")) if isinstance(case, Mapping) else str(case)


def _scored_differently(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """How two shards of one run differ in what scored their samples (the suite's
    checks, the judge), which rescore changes and the run's digest does not."""

    def sha(manifest: Mapping[str, Any]) -> Any:
        suite = manifest.get("suite")
        return suite.get("sha256") if isinstance(suite, Mapping) else suite

    found = []
    if canonical_json(sha(a)) != canonical_json(sha(b)):
        found.append(f"suite SHA-256 {str(sha(a))[:12]}... and {str(sha(b))[:12]}...")
    if canonical_json(a.get("judge")) != canonical_json(b.get("judge")):
        judges = [
            j.get("spec") if isinstance(j, Mapping) else j for j in (a.get("judge"), b.get("judge"))
        ]
        found.append(f"judge {short_repr(judges[0])} and {short_repr(judges[1])}")
    return "; ".join(found)
