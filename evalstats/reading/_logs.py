"""Readers that turn other tools' logs into :class:`~evalstats.results._file.Results`.

Every analysis (``report``, ``compare``, ``compare-runs``, ``gate``, ``plan
--from``, the figures) reads the same in-memory ``Results``: a manifest and
sample records of the results-file contract. :func:`load_results` reads any
supported file into one, finding the format from the content (or told it):

============  ==========================================================
``evalstats``  our own results JSONL (``evalstats run``)
``inspect``    Inspect AI logs, ``.eval`` and ``.json`` (needs the ``inspect`` extra)
``promptfoo``  promptfoo's ``results.json`` (``promptfoo eval -o results.json``)
``lm-eval``    lm-evaluation-harness ``samples_<task>_*.jsonl`` (``--log_samples``)
``csv``        a long table, one row per (case, variant, repeat) with a pass column
``parquet``    the same table as Parquet (needs pyarrow)
============  ==========================================================

:func:`merge` joins runs of the same task made separately (say two Inspect
logs, one per model) into one ``Results`` whose variants compare paired by
(case, repeat), and :func:`write_results` writes any ``Results`` as our JSONL.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from .._files import check_input, open_input, place_file, process_running, too_deep
from .._validate import suggest
from ..errors import InvalidArgument, ResultsFileError
from ._log_common import (
    LM_EVAL_RESULTS_KEYS,
    check_scale,
    check_threshold,
    check_threshold_on_scale,
    file_error,
    opening,
    suite_digest,
    unique_names,
)

if TYPE_CHECKING:
    from ..results._file import Results

# The results format (and msgspec, its schema's) is imported when a file is read,
# not when the command line is parsed, which lists FORMATS.

__all__ = ["FORMATS", "detect_format", "load_results", "log_files", "merge", "write_results"]

FORMATS = ("evalstats", "inspect", "promptfoo", "lm-eval", "csv", "parquet")

_SNIFF_BYTES = 64 * 1024
#: How a results file written by evalstats begins: its manifest's "type" comes first.
_MANIFEST_START = re.compile(rb'\{\s*"type"\s*:\s*"manifest"\s*[,}]')


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of ``path``, found from its content (see :data:`FORMATS`).

    Raises :class:`~evalstats.errors.ResultsFileError` naming the file when
    it cannot be read or is none of the supported formats.
    """
    found, f = open_detected(path)
    f.close()
    return found


def open_detected(path: str | os.PathLike[str]) -> tuple[str, IO[bytes]]:
    """The format of ``path`` (as :func:`detect_format` finds it) and the file, open
    for reading from its start, so that the file a reader goes on to read is opened
    once. The caller closes it."""
    shown = os.fspath(path)
    with opening(shown, folder="a results file or log", missing="no such results file or log"):
        # A regular file only: a FIFO or a device is refused, never waited on.
        f = open_input(shown, what="a results file or log", error=ResultsFileError)
        try:
            head = f.read(_SNIFF_BYTES)
            found = _format_of(head, shown)
        except BaseException:
            f.close()
            raise
    f.seek(0)
    return found, f


def _format_of(head: bytes, shown: str) -> str:
    """The format of a file that begins with ``head`` (see :func:`detect_format`)."""
    if not head.strip():
        raise file_error(shown, "the file is empty")
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "inspect"  # an .eval log is a zip archive
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        first_line = text.split(b"\n", 1)[0]
        try:
            first = json.loads(first_line)
        except (ValueError, RecursionError):  # RecursionError: nested past the parser
            first = None
        if isinstance(first, dict):  # JSON Lines (or a one-line JSON document)
            if first.get("type") == "manifest":
                return "evalstats"
            if first.get("type") in ("sample", "summary"):
                raise file_error(
                    shown,
                    f"the first line is a {first['type']!r} record; an evalstats results file "
                    "begins with its manifest (was the file's start cut off, or lines joined?)",
                )
            if "doc_id" in first:
                return "lm-eval"
            if "evalId" in first or _promptfoo_shape(first):
                return "promptfoo"
            if {"testIdx", "promptIdx", "success"} <= first.keys():
                return "promptfoo"  # its -o results.jsonl, which its reader names as such
            if "eval" in first and ("samples" in first or "status" in first):
                return "inspect"
        if first is None and _MANIFEST_START.match(first_line):
            # Our manifest line, longer than the bytes read (a large run's schedule).
            return "evalstats"
        # A pretty-printed JSON document: look at its top-level keys.
        keys = set(_top_keys(text))
        if "results" in keys and keys & LM_EVAL_RESULTS_KEYS:
            return "lm-eval"  # its aggregated results, which its reader refuses by name
        if "evalId" in keys or ("results" in keys and "config" in keys and "eval" not in keys):
            return "promptfoo"
        if "eval" in keys and ("status" in keys or "version" in keys):
            return "inspect"
        if '"doc_id"' in first_line.decode("utf-8", "replace"):
            return "lm-eval"
        raise file_error(
            shown,
            "a JSON file that is neither an evalstats results file, an Inspect log, a "
            "promptfoo results.json nor an lm-eval samples file; name its --format",
        )
    # A character cut at the end of the bytes looked at waits for the rest.
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        sample = decoder.decode(text[:4096])
    except UnicodeDecodeError:
        # Text in another encoding (a table saved as Latin-1 or cp1252), which the
        # table reader refuses naming its line, or binary content.
        sample = text[:4096].decode("utf-8", "replace")
        controls = sum(ch < " " and ch not in "\t\r\n" for ch in sample)
        if controls or sample.count("\ufffd") * 10 > len(sample) or not _looks_like_table(sample):
            raise file_error(
                shown, "binary content that is neither an Inspect .eval log nor Parquet"
            ) from None
    if _looks_like_table(sample):
        return "csv"
    raise file_error(shown, "cannot tell its format; name it with --format " + "|".join(FORMATS))


def _looks_like_table(sample: str) -> bool:
    """Whether text begins as a table does: a separator in its first line (a
    semicolon anywhere)."""
    first = sample.split("\n", 1)[0]
    return "," in first or "\t" in first or ";" in sample


def _promptfoo_shape(doc: dict[str, Any]) -> bool:
    inner = doc.get("results")
    return isinstance(inner, dict) and "results" in inner and "prompts" in inner


def _top_keys(text: bytes) -> list[str]:
    """Keys at depth 1 of a (possibly cut-off) JSON object, read from its start."""
    keys: list[str] = []
    depth = 0
    in_string = False
    escape = False
    start = -1
    s = text.decode("utf-8", "replace")
    for i, ch in enumerate(s):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
                if depth == 1:
                    rest = s[i + 1 : i + 40].lstrip()
                    if rest.startswith(":"):
                        keys.append(s[start + 1 : i])
            continue
        if ch == '"':
            in_string, start = True, i
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return keys


#: The files of a log folder that are never logs: Inspect's own listings.
_NOT_LOGS = frozenset({"logs.json", "listing.json", "eval-set.json"})


#: What a file left out of a folder of Inspect logs is, by its format, for the warning.
_OTHER_LOGS = {
    "evalstats": "an evalstats results file",
    "promptfoo": "a promptfoo results file",
    "lm-eval": "an lm-eval samples file",
    "csv": "a table",
    "parquet": "a Parquet table",
}


def log_files(path: str | os.PathLike[str], *, left_out: list[str] | None = None) -> list[str]:
    """The logs in a folder of Inspect AI logs, in name order (Inspect's names
    begin with the time of the run): its ``.eval`` files and the ``.json`` files
    that are Inspect logs. A path that is not a folder is returned as it is.

    ``left_out``, when given, is extended with a line for each file of the
    folder that is another tool's log or a results file (``.json``, ``.jsonl``,
    ``.csv``, ``.parquet``): it is not read with the Inspect logs, and says so.

    Raises :class:`~evalstats.errors.ResultsFileError` for a folder that holds
    no log.
    """
    shown = os.fspath(path)
    if not os.path.isdir(shown):
        return [shown]
    found = []
    for name in sorted(os.listdir(shown)):
        full = os.path.join(shown, name)
        if name.startswith(".") or name in _NOT_LOGS or not os.path.isfile(full):
            continue
        if name.endswith(".eval"):
            found.append(full)
        elif name.endswith((".json", ".jsonl", ".csv", ".parquet")):
            try:
                fmt = detect_format(full)
            except ResultsFileError:
                continue
            if fmt == "inspect":
                found.append(full)
            elif left_out is not None and fmt in _OTHER_LOGS:
                left_out.append(
                    f"{full} is {_OTHER_LOGS[fmt]}, not an Inspect AI log: a folder is read "
                    "as its Inspect logs, and this file was left out (name it to read it)"
                )
    if not found:
        raise file_error(shown, "is a folder with no Inspect AI log (.eval, .json) in it")
    return found


def load_results(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    pass_threshold: float | None = None,
    columns: Any = None,
    scorer: str | None = None,
    metric: str | None = None,
    scale: Any = None,
) -> Results:
    """Read a results file or another tool's log into :class:`~evalstats.results._file.Results`.

    Parameters
    ----------
    path : str or path-like
        The file.
    format : str, optional
        One of :data:`FORMATS`; by default found from the content.
    pass_threshold : float, optional
        For numeric scores that are not just 0 and 1: a score at least this
        high passes (Inspect scorers, lm-eval metrics, a table's ``score``).
    columns : str or mapping, optional
        For tables: which column plays which role, as ``"case=item,variant=prompt"``.
    scorer : str, optional
        For Inspect logs: the scorer whose value decides (the log's first by default);
        ``"name/key"`` (or ``"key"``) for one metric of a scorer whose values are
        dictionaries of metrics.
    metric : str, optional
        For lm-eval samples: the metric (and optionally ``,filter``) that decides.
    scale : str or pair of numbers, optional
        The scale of the log's scores, ``"1,5"`` or ``(1, 5)``: each score is
        mapped linearly from it to [0, 1] and kept as given beside. Without it
        scores from 0 to 1 are taken as they are and others are refused, asking
        for it. Given, the log's scores are kept even when they are all 0 or 1.

    Returns
    -------
    Results
        For a foreign log, ``warnings`` begins with the rule that decided a
        pass, and the manifest's ``imported`` says where the data came from.
        A log whose scores are graded (some score is not 0 or 1: an Inspect
        scorer's numbers or ``P`` partial credit, promptfoo's graded
        assertions, an lm-eval metric such as F1, a table's score column) keeps
        them beside pass/fail: each check and sample record carries ``score``
        in [0, 1], ``raw_score`` and ``scale`` (see each reader).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "table.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("case,variant,passed\\nq1,a,1\\nq1,a,0\\nq2,a,yes\\n")
    >>> res = load_results(path)
    >>> res.outcomes("a")
    {'q1': [True, False], 'q2': [True]}
    >>> print(res.warnings[0][:60])
    imported from csv: a sample passes when column 'passed' says
    """
    from ..results._file import _gc_paused

    with _gc_paused():  # many small records and no cycles: see results._gc_paused
        run = _load(
            path,
            format=format,
            pass_threshold=pass_threshold,
            columns=columns,
            scorer=scorer,
            metric=metric,
            scale=scale,
        )
    from ._log_table import TableRun

    return run.results() if isinstance(run, TableRun) else run  # type: ignore[no-any-return]


def load_run(path: str | os.PathLike[str], **options: Any) -> Any:
    """What :func:`load_results` reads, but a table (CSV, Parquet) as its checked
    columns (a :class:`~evalstats.reading._log_table.TableRun`, which a
    :class:`~evalstats.reading._source.RunSource` counts without building its
    records, and builds them only for a view that lists samples)."""
    from ..results._file import _gc_paused

    defaults = dict.fromkeys(("format", "pass_threshold", "columns", "scorer", "metric", "scale"))
    with _gc_paused():
        return _load(path, **{**defaults, **options})


def _load(
    path: str | os.PathLike[str],
    *,
    format: str | None,
    pass_threshold: float | None,
    columns: Any,
    scorer: str | None,
    metric: str | None,
    scale: Any,
) -> Any:
    """A Results, or for a table its :class:`~evalstats.reading._log_table.TableRun`."""
    shown = os.fspath(path)
    threshold = check_threshold(pass_threshold)
    declared = check_scale(scale)
    check_threshold_on_scale(threshold, declared)
    if format is None:
        fmt = detect_format(shown)
    else:
        fmt = {"lm_eval": "lm-eval", "inspect_ai": "inspect", "jsonl": "evalstats"}.get(
            format, format
        )
        if fmt not in FORMATS:
            raise InvalidArgument(
                f"format={format!r} is not a format{suggest(str(format), FORMATS)}; choose one "
                "of " + ", ".join(FORMATS)
            )
        # Each reader opens the file by name: refuse a FIFO or a device first.
        with opening(shown, folder="a results file or log", missing="no such file"):
            check_input(shown, what="a results file or log", error=ResultsFileError)
    extra = {"columns": columns, "scorer": scorer, "metric": metric}
    for name, value in extra.items():
        owner = {"columns": ("csv", "parquet"), "scorer": ("inspect",), "metric": ("lm-eval",)}
        if value is not None and fmt not in owner[name]:
            raise InvalidArgument(
                f"{name}={value!r} is for {' and '.join(owner[name])} files, but {shown} is "
                f"read as {fmt}"
            )
    if fmt == "evalstats":
        if threshold is not None:
            raise InvalidArgument(
                f"pass_threshold={pass_threshold!r} is for imported scores; an evalstats "
                "results file already says which samples passed"
            )
        if declared is not None:
            raise InvalidArgument(
                f"scale={scale!r} is for imported scores; an evalstats results file "
                "records each score with its scale"
            )
        from ..results._file import read_results

        return read_results(shown)
    try:
        return _read_log(shown, fmt, threshold, columns, scorer, metric, declared)
    except RecursionError:
        # A document nested past the JSON parser, in whichever reader met it.
        raise ResultsFileError(too_deep(shown, f"a log ({fmt})")) from None


def _read_log(
    shown: str, fmt: str, threshold: Any, columns: Any, scorer: Any, metric: Any, scale: Any
) -> Any:
    if fmt == "inspect":
        from ._log_inspect import read_inspect

        return read_inspect(shown, pass_threshold=threshold, scorer=scorer, scale=scale)
    if fmt == "promptfoo":
        from ._log_promptfoo import read_promptfoo

        return read_promptfoo(shown, pass_threshold=threshold, scale=scale)
    if fmt == "lm-eval":
        from ._log_lm_eval import read_lm_eval

        return read_lm_eval(shown, pass_threshold=threshold, metric=metric, scale=scale)
    from ._log_table import table_run

    return table_run(shown, format=fmt, pass_threshold=threshold, columns=columns, scale=scale)


def merge(runs: Sequence[Results]) -> Results:
    """Join separately made runs of the same task into one ``Results``.

    The runs must be of the same task (the same suite digest), or Inspect AI
    logs of different tasks over the same samples (the same sample ids, inputs
    and targets, scored by the same scorer: one ``@task`` per prompt), which a
    warning then names. The samples keep their (case, repeat) slots, so
    variants run on the same cases and repeats compare paired.

    Each run's variants keep their names, except that Inspect logs (one model
    each) are named by what differs between them: the task, the task's
    arguments, the model (``quiz_terse``, ``style=polite``, ``mockllm/b``), or
    when nothing does, the file (or ``run1``, ``run2``, ... for long names). A
    name that two other runs share is told apart by the file name.
    """
    if not runs:
        raise InvalidArgument("runs=[] must hold at least one run")
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    digest = (first.manifest.get("suite") or {}).get("sha256")
    tasks_differ = False
    for other in runs[1:]:
        theirs = (other.manifest.get("suite") or {}).get("sha256")
        if theirs != digest:
            problem = _not_pairable(first, other)
            if problem is not None:
                raise file_error(other.path or "results", problem)
            tasks_differ = True
    if all(_inspect_of(r) is not None and len(r.variants()) == 1 for r in runs):
        names = _inspect_names(runs)
        rename = {(i, run.variants()[0]): names[i] for i, run in enumerate(runs)}
    else:
        rename = _renamed(runs)
    finals = list(rename.values())
    variants: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    schedule: list[list[Any]] = []
    cases: dict[str, None] = {}
    pairs: dict[tuple[str, int], int] = {}
    position = {new: k for k, new in enumerate(finals)}
    for i, run in enumerate(runs):
        listed = {
            str(v.get("name")): v for v in run.manifest.get("variants", []) if isinstance(v, dict)
        }
        for name in run.variants():
            v = dict(listed.get(name, {"name": name}))
            v["name"] = rename[(i, name)]
            variants.append(v)
        for s in run.samples:
            record = dict(s)
            record["variant"] = rename[(i, s["variant"])]
            slot = (record["case"], record["repeat"])
            record["pair"] = pairs.setdefault(slot, len(pairs))
            record["position"] = position[record["variant"]]
            cases.setdefault(record["case"], None)
            schedule.append(
                [
                    record["case"],
                    record["repeat"],
                    record["pair"],
                    record["position"],
                    record["variant"],
                ]
            )
            samples.append(record)
    shared = set.intersection(*(set(r.warnings) for r in runs))
    warnings = [w for w in first.warnings if w in shared]
    for i, run in enumerate(runs):
        label = os.path.basename(run.path or f"run {i + 1}")
        warnings += [f"{label}: {w}" for w in run.warnings if w not in shared]
    manifest = dict(first.manifest)
    if tasks_differ:
        names = [str((r.manifest.get("suite") or {}).get("name")) for r in runs]
        ids = [c["id"] for c in first.manifest.get("cases") or () if isinstance(c, dict)]
        warnings.insert(
            1 if warnings else 0,
            "the logs are of different tasks ("
            + ", ".join(repr(n) for n in dict.fromkeys(names))
            + f") over the same {len(ids)} samples (ids, inputs and targets): each is a "
            "variant, compared paired by (sample id, epoch)",
        )
        manifest["suite"] = {
            "name": " + ".join(dict.fromkeys(names)),
            "version": None,
            "sha256": suite_digest(
                sorted(str((r.manifest.get("suite") or {}).get("sha256")) for r in runs)
            ),
        }
        manifest["cases"] = list(first.manifest.get("cases") or [])
    manifest.update(
        variants=variants,
        schedule=schedule,
        cases=_merged_cases(runs, cases),
        runs=first.manifest.get("runs")
        if len({r.manifest.get("runs") for r in runs}) == 1
        else None,
        merged=[os.path.basename(r.path or "") for r in runs],
    )
    finished = all(r.summary is not None and r.summary.get("status") == "finished" for r in runs)
    summary = {"type": "summary", "status": "finished"} if finished else None
    from ..results._file import Results

    return Results(
        path=" + ".join(r.path or "" for r in runs),
        manifest=manifest,
        samples=tuple(samples),
        summary=summary,
        warnings=tuple(warnings),
    )


def _renamed(runs: Sequence[Results]) -> dict[tuple[int, str], str]:
    """Each run's variants keep their names; a name two runs share gets the file's."""
    labels: list[tuple[int, str]] = [
        (i, name) for i, run in enumerate(runs) for name in run.variants()
    ]
    counts: dict[str, int] = {}
    for _, name in labels:
        counts[name] = counts.get(name, 0) + 1
    renamed = []
    for i, name in labels:
        if counts[name] > 1:
            stem = os.path.splitext(os.path.basename(runs[i].path or f"run{i + 1}"))[0]
            renamed.append(f"{name} ({stem})")
        else:
            renamed.append(name)
    finals = unique_names(renamed)
    return {label: new for label, new in zip(labels, finals, strict=True)}


def _inspect_of(run: Results) -> dict[str, Any] | None:
    """What an Inspect import records of its log (task, task arguments, model), or None."""
    imported = run.manifest.get("imported")
    if isinstance(imported, dict) and imported.get("tool") == "inspect_ai":
        return imported
    return None


#: A file stem short and plain enough to be a variant's name.
_PLAIN_STEM = re.compile(r"[\w.+-]{1,24}")


def _inspect_names(runs: Sequence[Results]) -> list[str]:
    """Names for Inspect logs, one variant each, from what differs between them."""
    described = [_inspect_of(r) or {} for r in runs]
    tasks = [
        str(d.get("task") or (r.manifest.get("suite") or {}).get("name"))
        for d, r in zip(described, runs, strict=True)
    ]
    models = [str(d.get("model") or r.variants()[0]) for d, r in zip(described, runs, strict=True)]
    args = [d.get("task_args") if isinstance(d.get("task_args"), dict) else {} for d in described]
    keys = sorted({k for a in args for k in a})
    differing = [k for k in keys if len({json.dumps(a.get(k), sort_keys=True) for a in args}) > 1]
    names = []
    for i in range(len(runs)):
        parts = []
        if len(set(tasks)) > 1:
            parts.append(tasks[i])
        if differing:
            parts.append(",".join(f"{k}={_arg(args[i].get(k))}" for k in differing))
        if len(set(models)) > 1:
            parts.append(models[i])
        names.append("/".join(parts))
    if not all(names) or len(set(names)) < len(names):
        stems = [os.path.splitext(os.path.basename(r.path or ""))[0] for r in runs]
        plain = all(_PLAIN_STEM.fullmatch(x) for x in stems) and len(set(stems)) == len(stems)
        names = [
            "/".join(p for p in (n, stems[i] if plain else f"run{i + 1}") if p)
            for i, n in enumerate(names)
        ]
    return unique_names(names)


def _arg(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _not_pairable(first: Results, other: Results) -> str | None:
    """Why ``other`` cannot be joined with ``first``, a run of another task; None
    when both are Inspect logs of the same samples, scored by the same scorer."""
    a = (first.manifest.get("suite") or {}).get("name")
    b = (other.manifest.get("suite") or {}).get("name")
    refused = (
        f"is not a run of the same task as {first.path} ({b!r} against {a!r}, or "
        "other cases or scorer); only runs of the same task, or Inspect logs of the same "
        "samples, are compared"
    )
    mine, theirs = _inspect_of(first), _inspect_of(other)
    if mine is None or theirs is None:
        return refused
    if mine.get("scorer") != theirs.get("scorer"):
        return (
            f"is scored by {theirs.get('scorer')!r} and {first.path} by {mine.get('scorer')!r}; "
            "give --scorer NAME to compare both by the same scorer"
        )
    cases_a, cases_b = _identities(first), _identities(other)
    if cases_a is None or cases_b is None:
        return refused + " (a log read by an earlier evalstats records no sample inputs)"
    problems = []
    only_a = [c for c in cases_a if c not in cases_b]
    only_b = [c for c in cases_b if c not in cases_a]
    if only_a:
        problems.append(f"samples only in {first.path}: {_few(only_a)}")
    if only_b:
        problems.append(f"samples only in {other.path}: {_few(only_b)}")
    for field, what in (("input_sha256", "input"), ("target_sha256", "target")):
        changed = [c for c in cases_a if c in cases_b and cases_a[c][field] != cases_b[c][field]]
        if changed:
            problems.append(f"another {what} for {_few(changed)}")
    if problems:
        return (
            f"cannot be paired with {first.path} ({b!r} against {a!r}): "
            + "; ".join(problems)
            + "; only logs of the same samples (ids, inputs and targets) are compared"
        )
    return None


def _identities(run: Results) -> dict[str, dict[str, Any]] | None:
    """Each case's input and target digests, as an Inspect import lists them, or None."""
    out = {}
    for c in run.manifest.get("cases") or ():
        if not isinstance(c, dict) or "input_sha256" not in c or "target_sha256" not in c:
            return None
        out[str(c["id"])] = c
    return out


def _few(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _merged_cases(runs: Sequence[Results], order: dict[str, None]) -> list[dict[str, Any]]:
    """The cases of joined runs in order of first appearance, with what their
    manifests say of them (the first run's word wins)."""
    known: dict[str, dict[str, Any]] = {}
    for run in runs:
        for c in run.manifest.get("cases") or ():
            if isinstance(c, dict) and isinstance(c.get("id"), str):
                known.setdefault(c["id"], c)
    return [dict(known.get(c, {"id": c})) for c in order]


def write_results(results: Results, out: str | os.PathLike[str], *, force: bool = False) -> str:
    """Write ``results`` as an evalstats results file (created exclusively, mode 0600).

    With ``force`` an existing ``out`` is replaced in one step once the new
    file is whole (:func:`evalstats._files.place_file`); without it an existing
    file is refused and left as it was. The file is written beside ``out`` and
    given its name in one step, so a command killed midway leaves none.
    Returns the path written. The file reads back with
    :func:`~evalstats.results._file.read_results` to the same samples,
    manifest, look and batch records.
    """
    from ..results._file import ResultsWriter

    shown = os.fspath(out)
    if os.path.lexists(shown) and not force and not os.path.isdir(shown):
        # ResultsWriter.create refuses it too; this says it for imports
        raise ResultsFileError(
            f"{shown} already exists; results are never overwritten: choose a new --out "
            "path, or add --force to replace it"
        )
    manifest = {k: v for k, v in results.manifest.items() if k not in ("type", "format")}
    folder, name = os.path.split(shown)
    if folder and not os.path.isdir(folder):
        raise ResultsFileError(f"cannot create {shown}: the folder {folder} does not exist")
    # Written whole beside the target, then given its name in one step: a command
    # killed midway (merge, rescore, import --out) leaves no partial results file
    # that a gate could read as the run, only a hidden temporary one.
    _sweep_parts(folder, name)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.part")
    try:
        with ResultsWriter.create(temporary, manifest) as writer:
            for batch in results.batches:  # a batch run's batches, before its samples
                writer.write_batch({k: v for k, v in batch.items() if k != "type"})
            for s in results.samples:
                writer.write_sample({k: v for k, v in s.items() if k != "type"})
            for look in results.looks:  # a sequential run's looks, read wherever they sit
                writer.write_look({k: v for k, v in look.items() if k != "type"})
            summary = results.summary
            writer.close({k: v for k, v in summary.items() if k != "type"} if summary else None)
        place_file(temporary, shown, force=force, error=ResultsFileError)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return shown


def _sweep_parts(folder: str, name: str) -> None:
    """Remove what a killed ``write_results`` to ``name`` left: its hidden
    ``.NAME.PID.part`` files whose process no longer runs (one that runs is another
    command writing the same file, and keeps its own)."""
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return
    prefix = f".{name}."
    for entry in entries:
        pid = entry[len(prefix) : -len(".part")]
        if not (entry.startswith(prefix) and entry.endswith(".part") and pid.isdecimal()):
            continue
        if int(pid) == os.getpid() or process_running(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, entry))
