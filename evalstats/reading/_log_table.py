"""Long tables (CSV, Parquet): one row per (case, variant, repeat) with a pass column.

Columns, found by name (case-insensitive) unless mapped with ``columns=``
(``--columns case=item,variant=prompt``):

* ``case`` (required): the case id;
* ``variant`` (optional, else one variant named after the file);
* ``repeat`` (optional, else the rows of each (case, variant) are numbered in
  file order);
* the pass column: the first of ``passed``, ``pass``, ``correct``, ``score``
  (a mapped ``pass=`` column wins; without any, the ``score=`` column). Booleans,
  1/0 and words such as yes/no/true/false/C/I are read as pass/fail; other
  numbers need ``pass_threshold``. An empty cell is a sample that was not
  measured;
* ``score`` (only as mapped, ``--columns score=rating``): each sample's score,
  a number (or ``C``/``P``/``I``, 1, 0.5 and 0) on 0 to 1, or on the
  ``scale=`` given (``--scale 1,5``), which a number outside 0 to 1 needs; it is
  mapped to [0, 1] and kept as given beside pass/fail. An empty cell is a
  sample without a score. A pass column of graded numbers (some not 0 or 1)
  is kept as the score too, when no score column is mapped;
* optional ``latency_s`` (or ``latency``): seconds, a finite number of at
  least 0 or empty; ``answer``, ``model``.

A cell of the wrong type (a pass value that is neither a pass/fail word nor a
number, a score that is not a number, a repeat that is not a whole number, a
latency that is not seconds) or a score off its scale is refused with one
line naming the file, the row and the column.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .._files import check_input, open_input
from .._text import csv_separator
from ..errors import InvalidArgument, ResultsFileError
from ..results._file import Results
from ..results._records import MAX_RUNS
from ._log_common import (
    SCORE_WORDS,
    OffScale,
    PassRule,
    build,
    check,
    check_scale,
    file_error,
    score_number,
    score_scale,
    suite_digest,
    with_score,
)

ROLES = ("case", "variant", "repeat", "pass", "score", "latency_s", "answer", "model")
PASS_COLUMNS = ("passed", "pass", "correct", "score")
#: The column names that tell a separator apart (see :func:`~evalstats._text.csv_separator`).
_KNOWN = frozenset({"case", "variant", "repeat", *PASS_COLUMNS, "latency_s", "latency"})
#: The names each role's column is found by; a score column only as mapped.
_ALIASES = {"latency_s": ("latency_s", "latency"), "pass": PASS_COLUMNS, "score": ()}


def parse_columns(spec: Any) -> dict[str, str]:
    """``"case=item,variant=prompt"`` (or a mapping) as ``{role: column}``."""
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        pairs = list(spec.items())
    elif isinstance(spec, str):
        pairs = []
        for part in spec.split(","):
            if not part.strip():
                continue
            role, eq, column = part.partition("=")
            if not eq or not role.strip() or not column.strip():
                raise InvalidArgument(
                    f"columns={spec!r}: {part.strip()!r} must read ROLE=COLUMN, such as case=item"
                )
            pairs.append((role.strip(), column.strip()))
    else:
        raise InvalidArgument(f"columns={spec!r} must be text such as 'case=item,variant=prompt'")
    out = {}
    for role, column in pairs:
        role = {"passed": "pass", "latency": "latency_s"}.get(role) or role
        if role not in ROLES:
            from .._validate import suggest

            raise InvalidArgument(
                f"columns={spec!r}: {role!r} is not a column role{suggest(role, ROLES)}; "
                f"the roles are {', '.join(ROLES)}"
            )
        out[role] = str(column)
    return out


class _Columns:
    """A table as its columns: ``columns`` the header's names, ``table[name]`` a
    column's cells as a list, ``len(table)`` the number of rows; ``lines``, when
    a row need not be on the line of its number (a CSV table with blank lines or
    cells over several lines), computes each row's first line in the file."""

    __slots__ = ("_cells", "_lines", "columns", "rows")

    def __init__(
        self,
        columns: list[Any],
        cells: list[list[Any]],
        rows: int,
        lines: Callable[[], list[int]] | None = None,
    ) -> None:
        self.columns, self._cells, self.rows = columns, cells, rows
        self._lines: Callable[[], list[int]] | list[int] | None = lines

    def __len__(self) -> int:
        return self.rows

    def __getitem__(self, name: Any) -> list[Any]:
        return self._cells[self.columns.index(name)]

    def place(self, row: int) -> str:
        """Where row ``row`` (0: the first after the header) is: ``row N``, the
        header being row 1, with its line in the file when that is another
        number (computed when first asked: only a refused cell asks)."""
        shown = f"row {row + 2}"
        if self._lines is None:
            return shown
        if callable(self._lines):
            self._lines = self._lines()
        line = self._lines[row]
        return shown if line == row + 2 else f"{shown} (line {line})"


class _BadCell(ValueError):
    """A cell a column's rule refuses: the row it is on and why (placed and named
    by :func:`table_run`, which knows the file)."""

    def __init__(self, row: int, why: str) -> None:
        super().__init__(why)
        self.row, self.why = row, why


def _frame(path: str, fmt: str) -> _Columns:
    if fmt == "parquet":
        return _parquet(path)
    try:
        # A regular file only, opened without blocking: a FIFO is refused.
        with open_input(path, what="a CSV table", error=ResultsFileError) as f:
            data = f.read()
        return _csv_columns(io.StringIO(_decoded(data), newline=""))
    except _Ragged as ragged:
        raise file_error(path, f"not a readable CSV table ({ragged})") from None
    except (csv.Error, ValueError) as e:
        raise file_error(path, f"not a readable CSV table ({str(e).splitlines()[0]})") from None
    except FileNotFoundError:
        raise file_error(path, "no such file") from None
    except OSError as error:
        raise file_error(path, f"cannot read: {error.strerror or error}") from None


class _NotUtf8(ValueError):
    """A table whose bytes are not UTF-8, naming the line of the first bad one."""


def _decoded(data: bytes) -> str:
    """The text of a CSV table's bytes (UTF-8, a byte order mark dropped); bytes of
    another encoding are refused naming the line they are on."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        line = body.count(b"\n", 0, error.start) + 1
        raise _NotUtf8(
            f"line {line} holds the byte 0x{body[error.start]:02x}, which is not UTF-8 text; "
            "save the table as UTF-8"
        ) from None


class _Ragged(ValueError):
    """A row with more cells than the header."""


def _csv_columns(f: Any) -> _Columns:
    """The CSV text ``f`` read in one pass into columns of text cells.

    The separator is the one the header uses most (comma, semicolon or tab),
    outside its quoted names. Every cell stays text (the pass column is read by
    the pass rule, and case ids such as 007 keep their zeros); a row with fewer
    cells than the header has empty cells for the rest, one with more is
    refused, and blank lines are skipped (before the header too). Lines may end
    in LF, CRLF or CR, and a quoted cell may hold separators, new lines and any
    number of characters. A name the header repeats is numbered on (``a``,
    ``a.1``).
    """
    text = f.read()
    if not text.strip():
        raise ValueError("No columns to parse from file")
    sep = csv_separator(text, _KNOWN)
    plain = _plain_columns(text, sep)
    if plain is not None:
        return plain
    with _any_field_size(len(text)):
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        names = _header_row(reader)
        width = len(names)
        rows = list(reader)
        if set(map(len, rows)) - {width}:
            rows = _even(csv.reader(io.StringIO(text, newline=""), delimiter=sep), width)
    cells = [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in names]
    return _Columns(_numbered(names), cells, len(rows), lambda: _first_lines(text, sep))


def _first_lines(text: str, sep: str) -> list[int]:
    """The line (1 the first) each row after the header starts on, as the csv
    module reads the text: blank lines are no rows, a quoted cell may span lines."""
    with _any_field_size(len(text)):
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        _header_row(reader)
        lines, before = [], reader.line_num
        for row in reader:
            if not _blank(row):
                lines.append(before + 1)
            before = reader.line_num
    return lines


def _blank(row: list[str]) -> bool:
    return not row or (len(row) == 1 and not row[0].strip())


def _header_row(reader: Any) -> list[str]:
    """The header of a CSV reader's rows: the first that is not blank."""
    for row in reader:
        if not _blank(row):
            return row
    raise ValueError("No columns to parse from file")


@contextlib.contextmanager
def _any_field_size(size: int) -> Iterator[None]:
    """The csv module's cap on one cell (128 KiB by default) raised to ``size`` for
    the read: a table's answer may be longer; the cap is the process's own."""
    before = csv.field_size_limit()
    csv.field_size_limit(max(before, size + 1))
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _plain_columns(text: str, sep: str) -> _Columns | None:
    """The columns of a CSV text that no quote, carriage return or NUL can make
    other than it looks, read by splitting it on ``sep`` and new lines (what the
    csv module reads of it, but at a few string operations for the whole
    text); None when the text has any of those, or a line (a blank one too)
    whose number of cells is not the header's, which the csv module reads."""
    import numpy as np

    if '"' in text or "\r" in text or "\0" in text:
        return None
    body = text[:-1] if text.endswith("\n") else text
    # Every line must hold as many separators as the header: counted with numpy
    # on the encoded text (separators and new lines are single bytes in UTF-8).
    data = np.frombuffer(body.encode("utf-8", "surrogatepass"), np.uint8)
    ends = np.flatnonzero(data == 10)
    seps = np.flatnonzero(data == ord(sep))
    per_line = np.diff(np.searchsorted(seps, ends), prepend=0, append=seps.size)
    width = int(per_line[0]) + 1
    if width < 2 or bool((per_line != width - 1).any()):
        return None
    cells = body.replace("\n", sep).split(sep)
    names = cells[:width]
    rows = len(cells) // width - 1
    return _Columns(_numbered(names), [cells[width + k :: width] for k in range(width)], rows)


def _even(reader: Any, width: int) -> list[list[str]]:
    """The rows after the header, blank lines skipped, short rows filled with empty
    cells; a row longer than the header is refused, naming its line."""
    _header_row(reader)
    rows = []
    for row in reader:
        if _blank(row):
            continue
        if len(row) > width:
            raise _Ragged(
                f"Error tokenizing data. C error: Expected {width} fields in line "
                f"{reader.line_num}, saw {len(row)}"
            )
        rows.append(row + [""] * (width - len(row)))
    return rows


def _numbered(names: list[str]) -> list[str]:
    """Column names with repeats numbered on, ``a``, ``a.1``, ``a.2``."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name in seen:
            count = seen[name]
            while f"{name}.{count}" in seen:
                count += 1
            seen[name] = count + 1
            name = f"{name}.{count}"
        seen[name] = seen.get(name, 0) or 1
        out.append(name)
    return out


def _parquet(path: str) -> _Columns:
    """A Parquet file's columns, read by pyarrow, its cells as Python values (an
    integer column with empty cells as floats, NaN where empty, as it reads in
    pandas)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise file_error(
            path, "reading Parquet needs pyarrow: pip install pyarrow (or convert to CSV)"
        ) from None
    import pyarrow as pa

    try:
        check_input(path, what="a Parquet table", error=ResultsFileError)  # no FIFO
        table = pq.read_table(path)
    except ResultsFileError:
        raise
    except FileNotFoundError:
        raise file_error(path, "no such file") from None
    except Exception as error:  # pyarrow raises its own types for a broken file
        raise file_error(path, f"not a readable Parquet file ({error})") from None
    cells = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        column = _plain_column(column, pa)
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            try:  # text written as bytes without its annotation (as some writers do)
                column = column.cast(pa.large_string())
            except pa.ArrowInvalid:
                raise file_error(
                    path, f"column {name!r} holds bytes that are not UTF-8 text"
                ) from None
        values = column.to_pylist()
        if pa.types.is_integer(column.type) and column.null_count:
            values = [math.nan if v is None else float(v) for v in values]
        cells.append(values)
    return _Columns(list(table.column_names), cells, table.num_rows)


#: Seconds in one unit of a Parquet duration.
_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _plain_column(column: Any, pa: Any) -> Any:
    """A Parquet column as values the cells' rules read: a dictionary-encoded one
    decoded, decimals as floats (a score of ``0.5`` written as DECIMAL(3, 1)), a
    duration as its seconds, fixed-size bytes as bytes."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
        kind = column.type
    if pa.types.is_decimal(kind):
        return column.cast(pa.float64())
    if pa.types.is_duration(kind):
        import pyarrow.compute as pc

        return pc.multiply(column.cast(pa.int64()).cast(pa.float64()), _UNIT_SECONDS[kind.unit])
    if pa.types.is_fixed_size_binary(kind):
        return column.cast(pa.binary())
    return column


def read_table(
    path: str | os.PathLike[str],
    *,
    format: str = "csv",
    pass_threshold: float | None = None,
    columns: Any = None,
    scale: Any = None,
) -> Results:
    """Read a long table of outcomes into :class:`~evalstats.results._file.Results`."""
    return table_run(
        path, format=format, pass_threshold=pass_threshold, columns=columns, scale=scale
    ).results()


def table_run(
    path: str | os.PathLike[str],
    *,
    format: str = "csv",
    pass_threshold: float | None = None,
    columns: Any = None,
    scale: Any = None,
) -> TableRun:
    """Read a long table into its checked columns (see :class:`TableRun`): every cell
    of the wrong type is refused here, before any view reads the run."""
    shown = os.fspath(path)
    mapping = parse_columns(columns)
    declared = check_scale(scale)
    frame = _frame(shown, format)
    if len(frame) == 0:
        raise file_error(shown, "the table has no rows")
    found = _found_columns(frame, mapping, shown)
    stem = os.path.splitext(os.path.basename(shown))[0] or "table"
    pass_name = str(found["pass"])
    rule = PassRule(pass_threshold, what=f"column {pass_name!r}")
    try:
        scores = _scores(frame, found, declared, shown)
        rows = _rows(frame, found, rule, pass_name, stem, shown)
    except _BadCell as bad:
        raise file_error(shown, f"{frame.place(bad.row)}: {bad.why}") from None
    return TableRun(shown, format, found, stem, rule.describe(), scores, declared, rows)


class TableRun:
    """A table read into its checked columns: what a view of it reads.

    :meth:`tally` counts the columns as they are, one variant at a time with
    numpy, into the very :class:`~evalstats.reading._tally.Tally` that counting
    the records would give; :meth:`results` builds the records and the manifest
    (one sample record a row) the first time a view asks for them. ``path`` is
    the table as given.
    """

    def __init__(
        self,
        shown: str,
        fmt: str,
        found: dict[str, Any],
        stem: str,
        rule: str,
        scores: Any,
        declared: Any,
        rows: _Rows,
    ) -> None:
        self.path = shown
        self._fmt, self._found, self._stem, self._rule = fmt, found, stem, rule
        self._scores, self._declared, self._rows = scores, declared, rows
        self._results: Results | None = None
        self._digest: str | None = None

    def _build(self, samples: list[dict[str, Any]], placed: Any) -> Results:
        rows, fmt, pass_name = self._rows, self._fmt, self._rows.pass_name
        scores = self._scores
        if self._digest is None:  # the same for the counts and the records
            self._digest = suite_digest([fmt, rows.case_ids])
        return build(
            self.path,
            samples,
            tool=fmt,
            tool_version=None,
            suite={"name": self._stem, "sha256": self._digest},
            variants=[{"name": v, "task": {"kind": fmt, "variant": v}} for v in rows.variants],
            pass_rule=f"column {pass_name!r} says so ({self._rule})",
            extra={"columns": {role: str(c) for role, c in self._found.items()}},
            scores=None
            if scores is None
            else (
                f"column {str(self._found.get('score', pass_name))!r}",
                scores[1],
                self._declared is not None,
            ),
            placed=placed,
            built=True,
        )

    def results(self) -> Results:
        """The run as records: a sample record for each row, and the manifest."""
        if self._results is None:
            from ..results._file import _gc_paused

            rows = self._rows
            with _gc_paused():  # many small records and no cycles
                samples = _records(rows, self._scores)
                runs = rows.runs
                placed = (
                    None if runs is False else (_schedule(rows), dict.fromkeys(rows.case_ids), runs)
                )
                self._results = self._build(samples, placed)
        return self._results

    def tally(self) -> Any:
        """The counts of the run, from its columns (from its records when a (case,
        variant, repeat) has two rows, which ``build`` notes and counts the first of)."""
        from ._tally import _tally_results, tally_columns

        rows = self._rows
        if rows.runs is False:
            return _tally_results(self.results(), checked=True)
        head = self._build([], ([], dict.fromkeys(rows.case_ids), rows.runs))  # no schedule
        raws, scale = self._scores if self._scores is not None else (None, None)
        return tally_columns(
            head,
            rows.case_ids,
            rows.variants,
            rows.codes,
            rows.positions,
            rows.repeats,
            rows.verdicts,
            rows.verdict_codes,
            raws=raws,
            scale=scale,
            latencies=rows.latencies,
        )


@dataclass(frozen=True, slots=True)
class _Rows:
    """A table's columns, each cell checked and converted, as numpy arrays of one
    entry a row: ``codes`` (the index of the row's case in ``case_ids``, the
    cases in order of first appearance), ``positions`` (that of its variant in
    ``variants``), ``repeats``, ``verdict_codes`` (that of its check record in
    ``verdicts``, the distinct ones, None for a row not measured);
    ``latencies`` (the distinct seconds, None for none, and each row's index
    among them) or None; ``answers`` and ``models`` as lists, or None; ``runs``
    the repeats of every (case, variant), None when they differ, False when a
    (case, variant, repeat) has two rows."""

    pass_name: str
    case_ids: list[str]
    codes: Any
    variants: list[str]
    positions: Any
    verdicts: list[dict[str, Any] | None]
    verdict_codes: Any
    repeats: Any
    latencies: tuple[list[float | None], Any] | None
    answers: list[str | None] | None
    models: list[str | None] | None
    runs: int | None | bool

    @staticmethod
    def column(values: list[Any], codes: Any) -> list[Any]:
        """A column's cell of each row, from its distinct ``values`` and ``codes``."""
        return list(map(values.__getitem__, codes.tolist()))


def _scores(
    frame: Any, found: dict[str, Any], declared: Any, shown: str
) -> tuple[list[float | None], tuple[float, float]] | None:
    """Each row's score as given (None: an empty cell) and the scale, or None when the
    table keeps no scores: no score column is mapped and the pass column's numbers
    are 0 and 1 only."""
    asked = "score" in found
    name = found["score"] if asked else found["pass"]
    if asked:
        convert: Any = _score_of(name)
    else:

        def convert(value: Any) -> float | None:
            if _text(value) == "":
                return None  # not measured
            return score_number(value if not isinstance(value, str) else value.strip())

    cells = frame[name]
    raws = _mapped(cells, convert)
    distinct = [x for x in dict.fromkeys(raws) if x is not None]
    what = f"column {str(name)!r}"
    try:
        found_scale = score_scale(
            distinct,
            scale=declared,
            asked=asked or declared is not None,
            what=what,
            place=lambda i: frame.place(raws.index(distinct[i])),
        )
    except OffScale as problem:
        raise file_error(shown, str(problem)) from None
    if found_scale is not None and found_scale != (0.0, 1.0):
        # C, P, I and yes/no are scores from 0 to 1, not numbers on another scale
        for cell in dict.fromkeys(cells):
            if _is_word(cell):
                row = cells.index(cell)
                low, high = found_scale
                raise _BadCell(
                    row,
                    f"{what} is {_text(cell)!r}, a word worth "
                    f"{raws[row]:g} on 0 to 1, but the scale is {low:g} to {high:g} (--scale)",
                )
    return None if found_scale is None else (raws, found_scale)


def _is_word(value: Any) -> bool:
    return isinstance(value, bool) or (
        isinstance(value, str) and value.strip().lower() in SCORE_WORDS
    )


def _score_of(column: Any) -> Any:
    """The number of a score cell: empty is none; text that is not a number (nor a
    score word, C/P/I) is refused."""

    def convert(value: Any) -> float | None:
        if _text(value) == "":
            return None
        number = score_number(value if not isinstance(value, str) else value.strip())
        if number is None:
            raise ValueError(f"column {column!r} is {_text(value)!r}, not a number")
        return number

    return convert


def _found_columns(frame: Any, mapping: dict[str, str], shown: str) -> dict[str, Any]:
    """The column of each role: as mapped (``--columns``), else by a known alias
    (any case); a table without a case or a pass column is refused."""
    by_lower: dict[str, str] = {}
    for name in frame.columns:
        by_lower.setdefault(str(name).strip().lower(), name)
    found: dict[str, Any] = {}
    for role in ROLES:
        if role in mapping:
            column = mapping[role]
            if column not in frame.columns and column.lower() not in by_lower:
                raise file_error(
                    shown,
                    f"columns: {role}={column} names no column; the columns are "
                    + ", ".join(str(c) for c in frame.columns),
                )
            found[role] = column if column in frame.columns else by_lower[column.lower()]
            continue
        for alias in _ALIASES.get(role, (role,)):
            if alias in by_lower:
                found[role] = by_lower[alias]
                break
    if "pass" not in found and "score" in found:
        found["pass"] = found["score"]  # the score column decides, by the pass rule
    for role, label in (
        ("case", "case column"),
        ("pass", "pass column (passed, pass, correct or score)"),
    ):
        if role not in found:
            raise file_error(
                shown,
                f"the table has no {label}; its columns are "
                + ", ".join(str(c) for c in frame.columns)
                + f"; map one with --columns {role}=NAME",
            )
    return found


def _rows(
    frame: Any, found: dict[str, Any], rule: PassRule, pass_name: str, stem: str, shown: str
) -> _Rows:
    """Each column of the table checked and converted (see :class:`_Rows`).

    Each distinct cell is converted once (a table of 100,000 rows has few
    distinct cases, repeats and pass values), and a bad one is reported at the
    first row that holds it.
    """
    import numpy as np

    n = len(frame)

    def non_empty(role: str) -> Any:
        def convert(value: Any) -> str:
            if isinstance(value, float) and value.is_integer():
                value = int(value)  # a Parquet integer column written as floats: 7, not 7.0
            text = _text(value)
            if not text:
                raise ValueError(f"the {role} column {found[role]!r} is empty")
            return text

        return convert

    passed_check: dict[str, Any] = check(pass_name, True)

    def outcome(value: Any) -> dict[str, Any] | None:
        text = _text(value)
        if text == "":
            return None
        passed = rule(value if not isinstance(value, str) else value.strip())
        return passed_check if passed else check(pass_name, False, reason=f"{pass_name}={text}")

    case_ids, codes = _coded(frame[found["case"]], non_empty("case"))
    if "variant" in found:
        variants, positions = _coded(frame[found["variant"]], non_empty("variant"))
    else:
        variants, positions = [stem], np.zeros(n, np.int64)
    verdicts, verdict_codes = _coded(frame[found["pass"]], outcome, key=id)
    if "repeat" in found:
        values, which = _coded(frame[found["repeat"]], _repeat_of)
        repeats = np.array(values, np.int64)[which]
    else:
        repeats = _counted_repeats(codes * len(variants) + positions)
    latencies = None
    if "latency_s" in found:
        latencies = _coded(frame[found["latency_s"]], _latency_of(found["latency_s"]))
    answers = [_text(v) or None for v in frame[found["answer"]]] if "answer" in found else None
    models = (
        _mapped(frame[found["model"]], lambda v: _text(v) or None) if "model" in found else None
    )
    return _Rows(
        case_ids=case_ids,
        codes=codes,
        variants=variants,
        positions=positions,
        verdicts=verdicts,
        verdict_codes=verdict_codes,
        repeats=repeats,
        latencies=latencies,
        answers=answers,
        models=models,
        pass_name=pass_name,
        runs=_runs(codes, positions, repeats, len(case_ids), len(variants)),
    )


def _records(rows: _Rows, scores: Any = None) -> list[dict[str, Any]]:
    """One sample record per row, each with its ``pair`` and ``position`` unless a
    (case, variant, repeat) has two rows; with ``scores`` (each row's raw score and
    the scale), a measured row's check and record carry its score."""
    cases = rows.column(rows.case_ids, rows.codes)
    variants_of = rows.column(rows.variants, rows.positions)
    verdicts = rows.column(rows.verdicts, rows.verdict_codes)
    repeats = rows.repeats.tolist()
    latencies = None if rows.latencies is None else rows.column(*rows.latencies)
    answers, models = rows.answers, rows.models
    no_value = f"no value in column {rows.pass_name!r}"
    samples: list[dict[str, Any]] = []
    append = samples.append
    raws, scale = scores if scores is not None else (None, None)
    # One list of checks per verdict (and score), shared by the records that have it
    # (records are read-only, as a results file's are read).
    lists: dict[Any, list[dict[str, Any]]] = {}
    none: list[dict[str, Any]] = []
    pairs = positions = None
    if rows.runs is not False:
        pairs, positions = _pairs(rows).tolist(), rows.positions.tolist()
    for i, (case, variant, repeat, verdict) in enumerate(
        zip(cases, variants_of, repeats, verdicts, strict=True)
    ):
        if verdict is None:
            record = {
                "case": case,
                "variant": variant,
                "repeat": repeat,
                "status": "unmeasured",
                "reason": no_value,
                "checks": none,
            }
        else:
            raw = None if raws is None else raws[i]
            key = id(verdict) if raw is None else (id(verdict), raw)
            checks = lists.get(key)
            if checks is None:
                graded = verdict if raw is None else with_score(dict(verdict), raw, scale)
                checks = lists[key] = [graded]
            record = {
                "case": case,
                "variant": variant,
                "repeat": repeat,
                "status": "completed",
                "reason": None,
                "checks": checks,
            }
            if raw is not None:
                record["score"] = checks[0]["score"]
        if latencies is not None and latencies[i] is not None:
            record["latency_s"] = latencies[i]
        if answers is not None:
            record["answer"] = answers[i]
        if models is not None:
            record["model"] = models[i]
        if pairs is not None:
            record["pair"] = pairs[i]
            record["position"] = positions[i]
        append(record)
    return samples


def _runs(codes: Any, positions: Any, repeats: Any, cases: int, variants: int) -> Any:
    """The repeats of every (case, variant) when they are the same, else None; False
    when a (case, variant, repeat) has two rows (``build`` then notes the second
    and places the rest itself)."""
    import numpy as np

    keys = codes * variants + positions  # the (case, variant) of each row
    most = int(repeats.max()) + 1
    if not _distinct(keys * most + repeats, cases * variants * most):
        return False
    top = np.full(cases * variants, -1, np.int64)  # the highest repeat of each key
    np.maximum.at(top, keys, repeats)
    counts = np.unique(top[top >= 0])
    return int(counts[0]) + 1 if counts.size == 1 else None


def _dense(ids: Any, size: int) -> bool:
    """Whether ids below ``size`` are few enough to count in an array of that size."""
    return size <= 4 * ids.size + 4096


def _distinct(ids: Any, size: int) -> bool:
    """Whether the whole numbers ``ids`` (each below ``size``) are all different."""
    import numpy as np

    if _dense(ids, size):
        return int(np.bincount(ids, minlength=1).max()) <= 1
    return bool(np.unique(ids).size == ids.size)


def _first_seen(ids: Any, size: int) -> Any:
    """Each of ``ids`` (whole numbers below ``size``) numbered by the order in which
    its value first appears: 0 for the first value, 1 for the next new one, ..."""
    import numpy as np

    n = ids.size
    if _dense(ids, size):
        first = np.full(size, n, np.int64)
        np.minimum.at(first, ids, np.arange(n))
        present = np.flatnonzero(first < n)
        number = np.empty(size, np.int64)
        number[present[np.argsort(first[present], kind="stable")]] = np.arange(present.size)
        return number[ids]
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    number = np.empty(first.size, np.int64)
    number[np.argsort(first, kind="stable")] = np.arange(first.size)
    return number[inverse.reshape(-1)]


def _pairs(rows: _Rows) -> Any:
    """Each row's pair: the number of its (case, repeat) slot, in order of first
    appearance, as :func:`~evalstats.reading._log_common.build` numbers them."""
    most = int(rows.repeats.max()) + 1
    return _first_seen(rows.codes * most + rows.repeats, len(rows.case_ids) * most)


def _schedule(rows: _Rows) -> list[list[Any]]:
    """The manifest's schedule: a slot ``[case, repeat, pair, position, variant]`` a row."""
    return list(
        map(
            list,
            zip(
                rows.column(rows.case_ids, rows.codes),
                rows.repeats.tolist(),
                _pairs(rows).tolist(),
                rows.positions.tolist(),
                rows.column(rows.variants, rows.positions),
                strict=True,
            ),
        )
    )


def _repeat_of(value: Any) -> int:
    whole = _whole(value)
    if whole is None or whole >= MAX_RUNS:
        raise ValueError(f"repeat={value!r} must be a whole number from 0 to {MAX_RUNS - 1:,}")
    return whole


def _latency_of(column: Any) -> Any:
    """The seconds of a latency cell: empty is none; anything but a finite number of at
    least 0 is refused (it used to become "no latency" without a word)."""

    def convert(value: Any) -> float | None:
        text = _text(value)
        if text == "":
            return None
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(
                f"column {column!r} is {text!r}, not a number of seconds (finite, at least 0)"
            )
        return seconds

    return convert


def _counted_repeats(keys: Any) -> Any:
    """Without a repeat column, the rows of each (case, variant) (one of ``keys`` a
    row) are its repeats 0, 1, ... in row order."""
    import numpy as np

    n = keys.size
    order = np.argsort(keys, kind="stable")  # each key's rows together, in row order
    ordered = keys[order]
    starts = np.ones(n, bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    start = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    repeats = np.empty(n, np.int64)
    repeats[order] = np.arange(n) - start
    return repeats


def _coded(values: list[Any], convert: Any, *, key: Any = None) -> tuple[list[Any], Any]:
    """``convert`` of each value of a column, as the distinct results in order of
    first appearance and each row's index among them (a numpy array); results
    told apart by ``key`` (default: by value). Each distinct cell is converted
    once; a value ``convert`` refuses is reported at the first row that holds it
    (a :class:`_BadCell`)."""
    import numpy as np

    results: list[Any] = []
    index: dict[Any, int] = {}
    try:
        distinct: dict[Any, Any] = dict.fromkeys(values)
    except TypeError:  # a cell Parquet gives as a list or a mapping
        codes = []
        for v in values:
            out = _convert(convert, v, values)
            k = out if key is None else key(out)
            if k not in index:
                index[k] = len(results)
                results.append(out)
            codes.append(index[k])
        return results, np.array(codes, np.int64)
    for value in distinct:
        out = _convert(convert, value, values)
        k = out if key is None else key(out)
        if k not in index:
            index[k] = len(results)
            results.append(out)
        distinct[value] = index[k]
    return results, np.fromiter(map(distinct.__getitem__, values), np.int64, len(values))


def _mapped(values: list[Any], convert: Any) -> list[Any]:
    """``convert`` of each value of a column, as a list of one entry a row (see
    :func:`_coded`, which converts each distinct value once)."""
    results, codes = _coded(values, convert, key=id)
    return _Rows.column(results, codes)


def _convert(convert: Any, value: Any, values: list[Any]) -> Any:
    try:
        return convert(value)
    except ValueError as error:
        row = next(i for i, v in enumerate(values) if v is value or v == value)
        raise _BadCell(row, str(error)) from None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from Parquet
        return ""
    return str(value).strip()


def _whole(value: Any) -> int | None:
    text = _text(value)
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0 or number != int(number):
        return None
    return int(number)
