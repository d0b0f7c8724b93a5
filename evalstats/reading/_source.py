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

import os
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import IO, Any, TypeVar

from ..errors import InvalidArgument
from ..results._file import Results, _read
from ._tally import Tally, _tally_file, _tally_records, _tally_results

__all__ = ["RunSource", "tally"]

T = TypeVar("T")


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

    Examples
    --------
    >>> manifest = {"variants": [{"name": "v"}], "cases": [{"id": "x"}], "runs": 1}
    >>> sample = {"case": "x", "variant": "v", "repeat": 0, "status": "completed",
    ...           "checks": [{"status": "passed"}]}
    >>> source = RunSource([manifest, sample])
    >>> source.tally() is source.tally(), source.tally().outcomes("v")
    (True, {'x': [True]})
    """

    __slots__ = ("_made", "_opened", "_records", "_results", "_source", "_tally", "path")

    def __init__(self, source: Any, *, records: bool = False) -> None:
        self._source = source
        self._records = bool(records)
        self._results: Results | None = None
        self._tally: Tally | None = None
        self._made: dict[Hashable, Any] = {}
        self._opened: IO[bytes] | None = None
        if isinstance(source, str | os.PathLike):
            self.path: str | None = os.fspath(source)
        elif isinstance(source, Results):
            self.path, self._results = source.path, source
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
    def open(cls, path: str | os.PathLike[str], *, records: bool = False) -> RunSource:
        """The run in the file ``path``, an evalstats results file or another tool's
        log, told apart by its content: a results file is opened once, to tell its
        format and then to read it (its first read reads the file as opened); a log
        is read into a Results by its reader.

        Raises :class:`~evalstats.errors.ResultsFileError` naming the file when it
        cannot be read or is none of the formats
        (:func:`~evalstats.reading._logs.detect_format`).
        """
        from ._logs import load_results, open_detected

        found, f = open_detected(path)
        if found != "evalstats":
            f.close()
            return cls(load_results(path, format=found))
        source = cls(path, records=records)
        source._opened = f
        return source

    def _file(self) -> IO[bytes] | None:
        """The file as :meth:`open` opened it, the first time (read from its start)."""
        f, self._opened = self._opened, None
        return f

    def tally(self) -> Tally:
        """The counts of the run, counted the first time they are asked for."""
        if self._tally is None:
            if self._results is not None:
                # Records this source read from its file were checked as they were read.
                read = self._results is not self._source
                self._tally = _tally_results(self._results, checked=read)
            elif self.path is not None and self._records:
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
            if self.path is None:
                raise InvalidArgument(f"{need}: give the results file or a Results")
            self._results = _read(self.path, self._file())[0]
        return self._results

    def once(self, key: Hashable, make: Callable[[], T]) -> T:
        """What ``make()`` makes of the run, made the first time ``key`` is asked for:
        a view made once however many of a command's outputs show it."""
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        what = self.path if self.path is not None else type(self._source).__name__
        return f"<RunSource {what!r}>"


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
