"""A run as one command reads it: opened once, passed down, read at most once.

``evalstats report FILE --plots D --html H`` makes a report, figures and an
HTML page of one run. The command opens the file once (:meth:`RunSource.open`:
its first bytes tell an evalstats results file from another tool's log, and
the same opening is then read). Each output takes the :class:`RunSource`,
which counts the file once (:meth:`RunSource.tally`), reads its records once
when a view lists samples (:meth:`RunSource.results`), and keeps what the
views make of the run (a report, a comparison) so that each is made once
(:meth:`RunSource.once`). Every function that reads a run (``report``,
``compare_results``, ``gate``, ``report_plots``, ``html_report``, ...) takes
one, or a path, a :class:`~evalstats.results._file.Results`, a
:class:`~evalstats.reading._tally.Tally` or the records of a run, which it
opens as a source of its own.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from .._validate import suggest
from ..errors import InvalidArgument
from ..results._file import Results, _read
from ._tally import Tally, _tally_file, _tally_records, _tally_results

__all__ = ["RunSource", "Selected", "Subset", "tally"]

T = TypeVar("T")


def _strings(name: str, values: Any) -> tuple[str, ...] | None:
    """``values`` of ``--name`` checked: None, or a list of non-empty strings."""
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidArgument(f"{name}={values!r} must be a list of strings")
    for v in values:
        if not isinstance(v, str) or not v:
            raise InvalidArgument(f"{name}={v!r} must be a non-empty string")
    return tuple(dict.fromkeys(values)) or None


def _shown(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values)


@dataclass(frozen=True)
class Subset:
    """The part of a run an analysis reads: some cases, some variants.

    ``cases`` keeps the cases whose id matches any of these shell-style
    patterns (``order*``; an exact id matches itself), ``tags`` those that
    carry any of these tags (the tags the run's manifest records for its
    cases); given both, a case must pass both. ``variants`` keeps these
    variants. None keeps everything. A pattern that matches no case of the
    run, a tag no case carries, a name that is no variant is refused
    (:class:`~evalstats.errors.InvalidArgument`, naming the argument), as
    :meth:`~evalstats.running._suite.Suite.select` refuses them for a run:
    a typo would otherwise analyse less than it says.

    Examples
    --------
    >>> manifest = {"variants": [{"name": "a"}, {"name": "b"}], "runs": 1,
    ...             "cases": [{"id": "order-1", "tags": ["orders"]}, {"id": "refund-1"}]}
    >>> samples = [{"case": c, "variant": v, "repeat": 0, "status": "completed",
    ...             "checks": [{"status": "passed"}]} for c in ("order-1", "refund-1")
    ...            for v in ("a", "b")]
    >>> run = Results(None, manifest, tuple(samples), None)
    >>> part, selected = Subset(cases=("order*",), variants=("b",)).apply(run)
    >>> [(s["case"], s["variant"]) for s in part.samples]
    [('order-1', 'b')]
    >>> print(selected)
    selection: --case 'order*', --variant 'b': 1 of 2 cases, 1 of 2 variants
    """

    cases: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    variants: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "cases", _strings("case", self.cases))
        object.__setattr__(self, "tags", _strings("tag", self.tags))
        object.__setattr__(self, "variants", _strings("variant", self.variants))

    @classmethod
    def of(
        cls,
        cases: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        variants: Sequence[str] | None = None,
    ) -> Subset | None:
        """The subset, or None when nothing is narrowed."""
        subset = cls(cases=cases, tags=tags, variants=variants)
        return None if subset.everything else subset

    @property
    def everything(self) -> bool:
        return self.cases is None and self.tags is None and self.variants is None

    def case_ids(self, run: Results) -> list[str]:
        """The run's cases (in its order) that the subset keeps; refuses a pattern
        or a tag that keeps none."""
        listed = run.manifest.get("cases")
        cases = [c for c in listed if isinstance(c, Mapping)] if isinstance(listed, list) else []
        ids = list(dict.fromkeys([str(c.get("id")) for c in cases] + _scheduled_cases(run)))
        ids = list(dict.fromkeys(ids + [str(x["case"]) for x in run.samples]))
        chosen = ids
        if self.cases is not None:
            for pattern in self.cases:
                if not any(_matches(i, pattern) for i in ids):
                    raise InvalidArgument(
                        f"--case {pattern!r} matches no case of the run"
                        + (suggest(pattern, ids) or f" (it has {len(ids)} cases)")
                    )
            chosen = [i for i in ids if any(_matches(i, p) for p in self.cases)]
        if self.tags is not None:
            tagged: dict[str, set[str]] = {}
            for c in cases:
                tags = c.get("tags")
                for tag in tags if isinstance(tags, list) else ():
                    if isinstance(tag, str):
                        tagged.setdefault(tag, set()).add(str(c.get("id")))
            for tag in self.tags:
                if tag not in tagged:
                    known = sorted(tagged)
                    raise InvalidArgument(
                        f"--tag {tag!r} is on no case of the run"
                        + (suggest(tag, known) or f" (tags: {', '.join(known) or 'none'})")
                    )
            with_tag = set().union(*(tagged[t] for t in self.tags))
            chosen = [i for i in chosen if i in with_tag]
            if not chosen:
                raise InvalidArgument(
                    f"--tag {_shown(self.tags)} and --case {_shown(self.cases or ())} keep "
                    "no case together"
                )
        return chosen

    def variant_names(self, run: Results) -> list[str]:
        """The run's variants that the subset keeps; refuses a name that is none."""
        names = list(dict.fromkeys([*run.variants(), *(str(s["variant"]) for s in run.samples)]))
        if self.variants is None:
            return names
        for name in self.variants:
            if name not in names:
                raise InvalidArgument(
                    f"--variant {name!r} is not a variant of the run{suggest(name, names)}; "
                    f"it has {_shown(names) or 'none'}"
                )
        return [n for n in names if n in self.variants]

    def apply(self, run: Results) -> tuple[Results, Selected]:
        """The part of ``run`` the subset keeps, and what it kept."""
        everything = Subset()
        ids_all, names_all = everything.case_ids(run), everything.variant_names(run)
        ids, names = self.case_ids(run), self.variant_names(run)
        keep_c, keep_v = set(ids), set(names)
        manifest = dict(run.manifest)
        listed = manifest.get("cases")
        if isinstance(listed, list):
            manifest["cases"] = [
                c for c in listed if not isinstance(c, Mapping) or str(c.get("id")) in keep_c
            ]
        listed = manifest.get("variants")
        if isinstance(listed, list):
            manifest["variants"] = [
                v for v in listed if str(v.get("name") if isinstance(v, Mapping) else v) in keep_v
            ]
        schedule = manifest.get("schedule")
        if isinstance(schedule, list):
            manifest["schedule"] = [
                slot
                for slot in schedule
                if not isinstance(slot, list)
                or len(slot) < 5
                or (str(slot[0]) in keep_c and str(slot[4]) in keep_v)
            ]
        samples = tuple(
            s for s in run.samples if str(s["case"]) in keep_c and str(s["variant"]) in keep_v
        )
        summary = dict(run.summary) if run.summary is not None else None
        if summary is not None and isinstance(summary.get("by_variant"), Mapping):
            summary["by_variant"] = {k: v for k, v in summary["by_variant"].items() if k in keep_v}
        # Looks were taken over the whole run; they describe no part of it.
        looks = run.looks if len(ids) == len(ids_all) else ()
        selected = Selected(self, tuple(ids), len(ids_all), tuple(names), len(names_all))
        return Results(run.path, manifest, samples, summary, run.warnings, looks), selected


def _matches(case_id: str, pattern: str) -> bool:
    return case_id == pattern or fnmatch.fnmatchcase(case_id, pattern)


def _scheduled_cases(run: Results) -> list[str]:
    schedule = run.manifest.get("schedule")
    if not isinstance(schedule, list):
        return []
    return list(dict.fromkeys(str(slot[0]) for slot in schedule if isinstance(slot, list) and slot))


@dataclass(frozen=True)
class Selected:
    """What a :class:`Subset` kept of a run: its cases and variants, of how many.

    Printed as the line a verb shows above its output; :meth:`to_dict` is the
    ``"selection"`` of its ``--json`` document.
    """

    subset: Subset
    cases: tuple[str, ...]
    cases_in_run: int
    variants: tuple[str, ...]
    variants_in_run: int

    def __str__(self) -> str:
        return f"selection: {self.described()}"

    def described(self) -> str:
        """What was asked and what it kept: ``--tag 'orders': 1 of 3 cases``."""
        given = []
        for option, values in (
            ("--case", self.subset.cases),
            ("--tag", self.subset.tags),
            ("--variant", self.subset.variants),
        ):
            if values is not None:
                given.append(", ".join(f"{option} {v!r}" for v in values))
        kept = f"{len(self.cases)} of {self.cases_in_run} cases"
        if self.subset.variants is not None:
            kept += f", {len(self.variants)} of {self.variants_in_run} variants"
        return f"{', '.join(given)}: {kept}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_patterns": None if self.subset.cases is None else list(self.subset.cases),
            "tags": None if self.subset.tags is None else list(self.subset.tags),
            "variants_asked": None if self.subset.variants is None else list(self.subset.variants),
            "cases": list(self.cases),
            "cases_in_run": self.cases_in_run,
            "variants": list(self.variants),
            "variants_in_run": self.variants_in_run,
        }


class RunSource:
    """One run to read: a results file, a Results, the counts of a run, or its records.

    Parameters
    ----------
    source : path, Results, Tally or iterable of records
        A results file; a :class:`~evalstats.results._file.Results` already read
        (or built by a reader of another tool's log); the counts of a run; or
        the records of a run as mappings, the manifest first, then samples
        (and looks), then optionally a summary, each with or without its
        ``"type"``.
    subset : Subset, optional
        The part of the run to read (some cases, some variants): every view
        then sees only it, and :attr:`selected` says what it kept. The run's
        records are then read whole once, and narrowed.
    records : bool
        Whether the views will need each sample's record (the HTML page lists
        the samples; the review-corrected rates weigh them). A file is then
        read once into a Results and counted from it; otherwise it is counted
        as it is read, keeping no record, and reading its records later reads
        it again.

    Attributes
    ----------
    path : str or None
        The results file, when the run has one.
    selected : Selected or None
        With a ``subset``, what it kept (once the run is read).

    Examples
    --------
    >>> manifest = {"variants": [{"name": "v"}], "cases": [{"id": "x"}], "runs": 1}
    >>> sample = {"case": "x", "variant": "v", "repeat": 0, "status": "completed",
    ...           "checks": [{"status": "passed"}]}
    >>> source = RunSource([manifest, sample])
    >>> source.tally() is source.tally(), source.tally().outcomes("v")
    (True, {'x': [True]})
    """

    __slots__ = (
        "_made",
        "_opened",
        "_records",
        "_results",
        "_source",
        "_subset",
        "_table",
        "_tally",
        "path",
        "selected",
    )

    def __init__(self, source: Any, *, records: bool = False, subset: Subset | None = None) -> None:
        self._source = source
        self._records = bool(records)
        self._results: Results | None = None
        self._tally: Tally | None = None
        self._made: dict[Hashable, Any] = {}
        self._opened: IO[bytes] | None = None
        self._table: Any = None  # a table read into its columns (reading._log_table)
        if subset is not None and not isinstance(subset, Subset):
            raise InvalidArgument(f"subset={subset!r} must be a Subset or None")
        self._subset = None if subset is None or subset.everything else subset
        self.selected: Selected | None = None
        if isinstance(source, str | os.PathLike):
            self.path: str | None = os.fspath(source)
        elif isinstance(source, Results):
            self.path, self._results = source.path, source
            if self._subset is not None:
                self._results, self.selected = self._subset.apply(source)
        elif _is_table(source):
            self.path = source.path
            if self._subset is not None:
                self._results, self.selected = self._subset.apply(source.results())
            else:
                self._table = source
        elif self._subset is not None:
            raise InvalidArgument(
                "subset= narrows a results file or a Results, not counts or records in memory"
            )
        elif isinstance(source, Tally):
            self.path, self._tally = source.path, source
        elif isinstance(source, Iterable) and not isinstance(source, Mapping | str | bytes):
            self.path, self._source = None, iter(source)
        else:
            raise InvalidArgument(
                f"results={source!r} must be a Results (from read_results) or the path of a "
                "results file"
            )

    @classmethod
    def of(cls, source: Any) -> RunSource:
        """``source`` itself when it is a RunSource, else a RunSource of it."""
        return source if isinstance(source, RunSource) else cls(source)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        records: bool = False,
        subset: Subset | None = None,
    ) -> RunSource:
        """The run in the file ``path``, an evalstats results file or another tool's
        log, told apart by its content: a results file is opened once, to tell its
        format and then to read it (its first read reads the file as opened); a log
        is read into a Results by its reader.

        Raises :class:`~evalstats.errors.ResultsFileError` naming the file when it
        cannot be read or is none of the formats
        (:func:`~evalstats.reading._logs.detect_format`).
        """
        from ._logs import load_run, open_detected

        found, f = open_detected(path)
        if found != "evalstats":
            f.close()
            return cls(load_run(path, format=found), subset=subset)
        source = cls(path, records=records, subset=subset)
        source._opened = f
        if source._subset is not None:
            source.results()  # narrowed once, so that selected says what was kept
        return source

    def _file(self) -> IO[bytes] | None:
        """The file as :meth:`open` opened it, the first time (read from its start)."""
        f, self._opened = self._opened, None
        return f

    def tally(self) -> Tally:
        """The counts of the run, counted the first time they are asked for."""
        if self._tally is None:
            if self._table is not None:  # counted from its columns
                self._tally = self._table.tally()
            elif self._results is not None:
                # Records this source read from its file were checked as they were read.
                read = not isinstance(self._source, Results)
                self._tally = _tally_results(self._results, checked=read)
            elif self.path is not None and (self._records or self._subset is not None):
                self._tally = _tally_results(self.results(), checked=True)
            elif self.path is not None:
                self._tally = _tally_file(self.path, self._file())
            else:
                self._tally = _tally_records(self._source)
        return self._tally

    def results(self, *, need: str = "this view needs each sample's record") -> Results:
        """The run's records, read the first time they are asked for.

        For a run given as counts or records in memory, whose records are not
        kept, raises :class:`~evalstats.errors.InvalidArgument` beginning with
        ``need`` (what needs them).
        """
        if self._results is None:
            if self._table is not None:
                self._results = self._table.results()
                return self._results
            if self.path is None:
                raise InvalidArgument(f"{need}: give the results file or a Results")
            self._results = _read(self.path, self._file())[0]
            if self._subset is not None:
                self._results, self.selected = self._subset.apply(self._results)
        return self._results

    @property
    def loaded(self) -> Results | None:
        """The run's records when they are in memory already (read, narrowed to a
        subset, or built by another tool's reader), else None."""
        return self._results

    @property
    def results_file(self) -> str | None:
        """The path of the run's evalstats results file, when it was opened from one
        and its records are not in memory: what a view streams line by line."""
        if self._table is not None or self._results is not None:
            return None
        return self.path

    def once(self, key: Hashable, make: Callable[[], T]) -> T:
        """What ``make()`` makes of the run, made the first time ``key`` is asked for:
        a view made once however many of a command's outputs show it."""
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        what = self.path if self.path is not None else type(self._source).__name__
        return f"<RunSource {what!r}>"


def _is_table(source: Any) -> bool:
    """Whether ``source`` is a table read into its columns (without importing its
    reader for every other kind of source: until its module is imported, no
    table can have been read)."""
    reader = sys.modules.get(f"{__package__}._log_table")
    return reader is not None and isinstance(source, reader.TableRun)


def tally(source: Any) -> Tally:
    """Count a run in one pass.

    Parameters
    ----------
    source : RunSource, path, Results, Tally or iterable of records
        See :class:`RunSource`; a Tally is returned as it is.

    Returns
    -------
    Tally

    Raises
    ------
    ResultsFileError
        For a file that breaks the results format, naming the line.
    InvalidArgument
        For records in memory that break it, naming the record.

    Examples
    --------
    >>> manifest = {"variants": [{"name": "v"}], "cases": [{"id": "x"}], "runs": 2}
    >>> samples = [{"case": "x", "variant": "v", "repeat": r, "status": "completed",
    ...             "checks": [{"status": "passed" if r else "failed"}]} for r in range(2)]
    >>> t = tally([manifest, *samples])
    >>> t.outcomes("v")
    {'x': [False, True]}
    """
    return RunSource.of(source).tally()
