"""lm-evaluation-harness per-sample logs: ``samples_<task>_<date>.jsonl`` from ``--log_samples``.

One JSON object per line, as the harness writes them: ``doc_id``, ``doc``,
``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``,
``metrics`` (the names of the metric values on the line), the hashes, and
each metric's value under its own name. ``doc_id`` becomes the case (one
repeat each), the task's primary metric the pass: the first name in
``metrics`` unless ``metric=`` names another (``exact_match`` or, with a
filter, ``exact_match,flexible-extract`` as the harness spells its results).
When the harness wrote several filters, the first one seen is used unless the
metric names one. The model is taken from the aggregated results file of the
same run (``results_<date>.json`` of the same date, in the same folder) when
there is one. A document is on one line per filter; a second line of it under
the same filter, a ``doc_id`` that is no document's, and a metric lm-eval
computes over the whole task (perplexity) are refused, naming the line.

A continuous metric (``metric="f1"``: some value is not 0 or 1) is kept as
each sample's score beside pass/fail, on 0 to 1, or on the ``scale=`` given,
which a value outside 0 to 1 needs (``--scale 0,100`` for a BLEU in percent).
The chosen metric decides the pass as well: a binary one (``exact_match``)
as it is, a continuous one only with ``pass_threshold`` (a sample passes when
its value is at least the threshold, on the metric's own scale); without a
threshold a continuous metric is refused, asking for one.
"""

from __future__ import annotations

import glob
import io
import json
import os
import re
from typing import Any

from .._files import open_input
from .._text import short_repr
from ..errors import ResultsFileError
from ..results._file import Results
from ._log_common import (
    LM_EVAL_RESULTS_KEYS,
    OffScale,
    PassRule,
    build,
    check,
    check_scale,
    file_error,
    json_kind,
    opening,
    score_number,
    score_scale,
    suite_digest,
    with_score,
)

_BOOKKEEPING = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)

_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")


def _task_and_date(path: str) -> tuple[str | None, str | None]:
    m = _NAME.match(os.path.basename(path))
    if m is None:
        return None, None
    return m.group("task"), m.group("date")


def _aggregated(path: str, date: str | None) -> tuple[dict[str, Any] | None, str | None, list[str]]:
    """The aggregated results file of the run that wrote the samples, its name, and
    the names of the other runs' results files beside them.

    lm-eval names it after the same date as the samples (``results_<date>.json``,
    or ``NAME_<date>.json`` with ``--output_path NAME.json``). A results file of
    another date is another run's, which may be of another model (its
    ``task_hashes`` are the same for every model run on the task), so it is not
    taken.
    """
    folder = os.path.dirname(os.path.abspath(path))
    same: list[str] = []
    if date is not None:
        same.append(os.path.join(folder, f"results_{date}.json"))
        same += sorted(glob.glob(os.path.join(glob.escape(folder), f"*_{glob.escape(date)}.json")))
    for candidate in dict.fromkeys(same):
        data = _results_file(candidate)
        if data is not None:
            return data, os.path.basename(candidate), []
    others = glob.glob(os.path.join(glob.escape(folder), "results_*.json"))
    return None, None, sorted(os.path.basename(x) for x in others)


def _results_file(candidate: str) -> dict[str, Any] | None:
    """``candidate`` read as an lm-eval aggregated results file, or None."""
    if not os.path.isfile(candidate):
        return None
    try:
        with open(candidate, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(data, dict) and ("results" in data or "config" in data):
        return data
    return None


def _model(results: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    if not results:
        return "model", {}
    config: dict[str, Any] = results.get("config") or {}
    if not isinstance(config, dict):
        config = {}
    name = results.get("model_name")
    if not isinstance(name, str) or not name:
        args = str(config.get("model_args") or "")
        match = re.search(r"(?:pretrained|model)=([^,]+)", args)
        name = match.group(1) if match else str(config.get("model") or "model")
    task = {
        "kind": "lm_eval",
        "model": config.get("model"),
        "model_args": config.get("model_args"),
    }
    return name, task


def _answer(line: dict[str, Any]) -> str | None:
    """The model's answer: the first filtered response when it is text. A
    loglikelihood request's response is a pair (the loglikelihood, whether it is
    the greedy continuation), no answer (a multiple-choice document has one per
    choice)."""
    filtered = line.get("filtered_resps")
    if isinstance(filtered, list) and filtered and all(_likelihood(x) for x in filtered):
        return None
    while isinstance(filtered, list) and filtered:
        filtered = filtered[0]
    if isinstance(filtered, str):
        return filtered
    return None


def _likelihood(response: Any) -> bool:
    """Whether ``response`` is a loglikelihood request's, ``[loglikelihood, is_greedy]``."""
    if not (isinstance(response, list) and len(response) == 2):
        return False
    loglikelihood, greedy = response
    if not (isinstance(greedy, bool) or greedy in ("True", "False")):
        return False
    if isinstance(loglikelihood, int | float) and not isinstance(loglikelihood, bool):
        return True
    try:
        float(loglikelihood)
    except (TypeError, ValueError):
        return False
    return True


_NOT_UTF8 = "not UTF-8 text; is it an lm-eval samples file?"

#: A key of lm-eval's aggregated results file, as its JSON text writes it.
_AGGREGATED_KEY = re.compile(
    '"(?:' + "|".join(map(re.escape, sorted(LM_EVAL_RESULTS_KEYS))) + r')"\s*:'
)


def _lines(shown: str) -> list[tuple[int, dict[str, Any]]]:
    """Each non-blank line of the file, with its number, as a JSON object."""
    lines: list[tuple[int, dict[str, Any]]] = []
    with (
        opening(shown, folder="a samples file", text="an lm-eval samples file"),
        io.TextIOWrapper(
            open_input(shown, what="an lm-eval samples file", error=ResultsFileError),
            encoding="utf-8-sig",  # a byte order mark, as an editor may save it, is read past
            errors="surrogateescape",  # bytes that are not UTF-8 are refused by line
        ) as f,
    ):
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise file_error(shown, f"line {number} is {_NOT_UTF8}") from None
            try:
                line = json.loads(text)
            except ValueError:
                if not lines:
                    _refuse_aggregated(shown)
                raise file_error(shown, f"line {number} is not valid JSON") from None
            if not isinstance(line, dict):
                raise file_error(shown, f"line {number} is not a JSON object")
            if not lines and "doc_id" not in line:
                _refuse_aggregated(shown)
            lines.append((number, line))
    return lines


def _refuse_aggregated(shown: str) -> None:
    """Refuse lm-eval's aggregated results file, given where its samples file belongs,
    naming the samples files beside it; return when ``shown`` is not one."""
    with opening(shown, folder="a samples file"), open_input(shown, what="a file") as f:
        head = f.read(64 * 1024).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not (head.startswith("{") and '"results"' in head and _AGGREGATED_KEY.search(head)):
        return
    name = os.path.basename(shown)
    match = re.match(r"^.+_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.json$", name)
    folder = glob.escape(os.path.dirname(os.path.abspath(shown)))
    beside = []
    if match is not None:
        beside = glob.glob(os.path.join(folder, f"samples_*_{glob.escape(match.group(1))}.jsonl"))
    beside = sorted(
        os.path.basename(x) for x in beside or glob.glob(os.path.join(folder, "samples_*.jsonl"))
    )
    if beside:
        shown_beside = ", ".join(beside[:3]) + (
            f" and {len(beside) - 3} more" if len(beside) > 3 else ""
        )
        where = f"give a samples file beside it: {shown_beside}"
    else:
        where = "give a samples_<task>_<date>.jsonl file, which lm-eval writes with --log_samples"
    raise file_error(
        shown,
        "is lm-eval's aggregated results file, which holds each task's scores but no "
        f"samples; {where}",
    )


def _check_lines(shown: str, lines: list[tuple[int, dict[str, Any]]]) -> None:
    """Refuse a line whose ``doc_id``, ``filter`` or ``metrics`` is not as lm-eval writes
    it, and a document twice under one filter (two runs or two tasks joined)."""
    seen: dict[tuple[str, str], int] = {}
    for number, line in lines:
        if "doc_id" not in line:
            raise file_error(
                shown, f'line {number} has no "doc_id"; is this an lm-eval samples file?'
            )
        doc_id = line["doc_id"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, int | str) or doc_id == "":
            raise file_error(
                shown,
                f'line {number}: "doc_id" is {short_repr(doc_id)} ({json_kind(doc_id)}), not a '
                "document's id (lm-eval writes its number)",
            )
        filter_name = line.get("filter", "none")
        if not isinstance(filter_name, str):
            raise file_error(
                shown,
                f'line {number} (doc_id {doc_id!r}): "filter" is {short_repr(filter_name)} '
                f"({json_kind(filter_name)}), not a filter's name",
            )
        listed = line.get("metrics")
        if listed is not None and not (
            isinstance(listed, list) and all(isinstance(x, str) for x in listed)
        ):
            raise file_error(
                shown,
                f'line {number} (doc_id {doc_id!r}): "metrics" is {short_repr(listed)}, not a '
                "list of metric names",
            )
        key = (str(doc_id), filter_name)
        if key in seen:
            raise file_error(
                shown,
                f"line {number} has doc_id {doc_id!r} again (line {seen[key]}), under the same "
                f"filter {filter_name!r}; lm-eval writes one line per document and filter: "
                "are two runs or two tasks joined in this file?",
            )
        seen[key] = number


def _metric_names(lines: list[tuple[int, dict[str, Any]]], chosen_filter: str) -> list[str]:
    """The metrics the lines of ``chosen_filter`` name, in order of first appearance."""
    names: dict[str, None] = {}
    for _, line in lines:
        if str(line.get("filter", "none")) != chosen_filter:
            continue
        listed = line.get("metrics")
        if isinstance(listed, list):
            names.update(dict.fromkeys(listed))
        else:
            names.update(
                (k, None)
                for k, v in line.items()
                if k not in _BOOKKEEPING and isinstance(v, int | float | list)
            )
    return list(names)


def _check_present(
    shown: str, lines: list[tuple[int, dict[str, Any]]], chosen: str, chosen_filter: str
) -> None:
    """Refuse a metric asked for that no line of the filter holds, naming those there are."""
    if any(chosen in line for _, line in lines if str(line.get("filter", "none")) == chosen_filter):
        return
    from .._validate import suggest

    names = _metric_names(lines, chosen_filter)
    there = ", ".join(repr(n) for n in names) if names else "none"
    raise file_error(
        shown,
        f"metric={chosen!r}: no line (filter {chosen_filter!r}) has a value of it"
        f"{suggest(chosen, names)}; the metrics are {there}",
    )


def _check_per_document(
    shown: str, lines: list[tuple[int, dict[str, Any]]], chosen: str, chosen_filter: str
) -> None:
    """Refuse a metric that lm-eval aggregates over the whole task (its value on a line a
    list: perplexity's loglikelihood and weight, corpus BLEU's reference and answer)."""
    for number, line in lines:
        if str(line.get("filter", "none")) != chosen_filter or not isinstance(
            line.get(chosen), list
        ):
            continue
        own = [
            name
            for name in _metric_names(lines, chosen_filter)
            if isinstance(line.get(name), int | float)
        ]
        if own:
            instead = "choose one that is: --metric " + " or --metric ".join(own[:3])
        else:
            instead = "this task has no metric of its own for each document to pass or fail by"
        raise file_error(
            shown,
            f"line {number} (doc_id {line['doc_id']!r}): metric {chosen!r} is "
            f"{short_repr(line[chosen])}, a part of a score lm-eval computes over the whole "
            f"task (perplexity, corpus BLEU), not a document's pass or score; {instead}",
        )


def read_lm_eval(
    path: str | os.PathLike[str],
    *,
    pass_threshold: float | None = None,
    metric: str | None = None,
    scale: Any = None,
) -> Results:
    """Read an lm-evaluation-harness samples file into :class:`~evalstats.results._file.Results`."""
    shown = os.fspath(path)
    declared = check_scale(scale)
    want_metric, _, want_filter = (metric or "").partition(",")
    lines = _lines(shown)
    if not lines:
        raise file_error(shown, "the file is empty; it has no samples")
    _check_lines(shown, lines)
    filters = list(dict.fromkeys(str(line.get("filter", "none")) for _, line in lines))
    chosen_filter = want_filter or filters[0]
    if chosen_filter not in filters:
        raise file_error(
            shown,
            f"metric={metric!r}: no line has filter {chosen_filter!r}; the filters are "
            + ", ".join(repr(f) for f in filters),
        )
    at, first = next(
        (number, line) for number, line in lines if str(line.get("filter", "none")) == chosen_filter
    )
    listed = first.get("metrics")
    if want_metric:
        chosen = want_metric
        _check_present(shown, lines, chosen, chosen_filter)
    elif isinstance(listed, list) and listed:
        chosen = str(listed[0])
    else:
        found = [
            k for k, v in first.items() if k not in _BOOKKEEPING and isinstance(v, int | float)
        ]
        if not found:
            raise file_error(
                shown, f'line {at} has no "metrics" list and no metric value; give --metric NAME'
            )
        chosen = found[0]
    rule = PassRule(pass_threshold, what=f"metric {chosen!r}")
    _check_per_document(shown, lines, chosen, chosen_filter)
    found = _scale(lines, chosen, chosen_filter, declared, shown)
    task, date = _task_and_date(shown)
    aggregated, aggregated_name, others = _aggregated(shown, date)
    model, spec = _model(aggregated)
    records: list[dict[str, Any]] = []
    ids: list[str] = []
    for number, line in lines:
        if str(line.get("filter", "none")) != chosen_filter:
            continue
        if chosen not in line:
            raise file_error(
                shown,
                f'line {number} (doc_id {line["doc_id"]!r}) has no "{chosen}" value; the '
                "metric must be on every line",
            )
        case = str(line["doc_id"])
        ids.append(case)
        try:
            passed = rule(line[chosen])
        except ValueError as problem:
            raise file_error(shown, f"line {number}: {problem}") from None
        answer = _answer(line)
        why = ""
        if not passed:
            why = (
                f"{chosen}={line[chosen]!r}: "
                + ("" if answer is None else f"answer {answer!r}, ")
                + f"target {line.get('target')!r}"
            )
        verdict = check(chosen, passed, reason=why)
        record = {
            "case": case,
            "variant": model,
            "repeat": 0,
            "status": "completed",
            "reason": None,
            "checks": [verdict],
            "answer": answer,
            "model": model,
        }
        if found is not None:
            number = score_number(line[chosen])
            assert number is not None  # the pass rule refused any value that is not one
            record["score"] = with_score(verdict, number, found)["score"]
        records.append(record)
    task_name = task or os.path.splitext(os.path.basename(shown))[0]
    versions = (aggregated or {}).get("versions") if aggregated else None
    return build(
        shown,
        records,
        tool="lm_eval",
        tool_version=(aggregated or {}).get("lm_eval_version"),
        suite={
            "name": task_name,
            "version": versions.get(task_name) if isinstance(versions, dict) else None,
            "sha256": suite_digest(["lm_eval", task_name, sorted(ids), chosen, chosen_filter]),
        },
        variants=[{"name": model, "task": spec or {"kind": "lm_eval", "model": model}}],
        pass_rule=f"metric {chosen!r} (filter {chosen_filter!r}) says so ({rule.describe()})",
        extra={
            "metric": chosen,
            "filter": chosen_filter,
            "aggregated_results": aggregated_name,
        },
        warnings=() if aggregated is not None else (_unknown_model(others),),
        scores=None if found is None else (f"metric {chosen!r}", found, declared is not None),
    )


def _unknown_model(others: list[str]) -> str:
    """The warning of a samples file whose run's results file is not beside it."""
    if not others:
        return "no aggregated results file (results_<date>.json) beside it: the model is unknown"
    named = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
    return (
        "no aggregated results file of the same date (results_<date>.json) beside it, only "
        f"another run's ({named}), which may be of another model: the model is unknown"
    )


def _scale(
    lines: list[tuple[int, dict[str, Any]]],
    chosen: str,
    chosen_filter: str,
    declared: Any,
    shown: str,
) -> tuple[float, float] | None:
    """The scale of the chosen metric's values, or None when they are 0 and 1 only
    (see :func:`~evalstats.reading._log_common.score_scale`). Only numbers count
    (``true`` and ``false`` too), and the text of one: the harness writes a
    value JSON has no type for as its ``str()``, so a metric computed as a
    ``numpy.float32`` is ``"0.5"`` and one as a ``numpy.bool_`` ``"True"``. A
    value of another kind is left for the pass rule to refuse, naming its line."""
    numbers: list[float] = []
    places: list[str] = []
    for number, line in lines:
        if str(line.get("filter", "none")) != chosen_filter or chosen not in line:
            continue
        value = line[chosen]
        if isinstance(value, int | float):  # bool too: it is a pass or a fail
            numbers.append(float(value))
        elif isinstance(value, str) and (written := _written_number(value)) is not None:
            numbers.append(written)
        else:
            continue
        places.append(f"line {number} (doc_id {line['doc_id']!r})")
    try:
        found = score_scale(
            numbers,
            scale=declared,
            asked=declared is not None,
            what=f"metric {chosen!r}",
            place=places.__getitem__,
        )
    except OffScale as problem:
        raise file_error(shown, str(problem)) from None
    return found


def _written_number(text: str) -> float | None:
    """The number ``text`` is as the harness writes a numpy scalar (``str(numpy.float32(
    0.5))``, ``str(numpy.bool_(True))``), or None for other text.

    >>> [_written_number(t) for t in ("0.5", "1e-3", "True", "False", "nan", "C", "yes")]
    [0.5, 0.001, 1.0, 0.0, nan, None, None]
    """
    if text in ("True", "False"):
        return 1.0 if text == "True" else 0.0
    try:
        return float(text)
    except ValueError:
        return None
