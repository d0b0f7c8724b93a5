"""lm-evaluation-harness per-sample logs: ``samples_<task>_<date>.jsonl`` from ``--log_samples``.

One JSON object per line, as the harness writes them: ``doc_id``, ``doc``,
``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``,
``metrics`` (the names of the metric values on the line), the hashes, and
each metric's value under its own name. ``doc_id`` becomes the case (one
repeat each), the task's primary metric the pass: the first name in
``metrics`` unless ``metric=`` names another (``exact_match`` or, with a
filter, ``exact_match,flexible-extract`` as the harness spells its results).
When the harness wrote several filters, the first one seen is used unless the
metric names one. The model is taken from the aggregated results file
(``results_<date>.json`` in the same folder) when there is one.

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
from ..errors import ResultsFileError
from ..results._file import Results
from ._log_common import (
    OffScale,
    PassRule,
    build,
    check,
    check_scale,
    file_error,
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


def _aggregated(path: str, date: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The aggregated results file beside the samples (same date first), if any."""
    folder = os.path.dirname(os.path.abspath(path))
    candidates = []
    if date is not None:
        candidates.append(os.path.join(folder, f"results_{date}.json"))
    candidates += sorted(glob.glob(os.path.join(folder, "results_*.json")), reverse=True)
    for candidate in candidates:
        if not os.path.isfile(candidate):
            continue
        try:
            with open(candidate, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data, os.path.basename(candidate)
    return None, None


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
    filtered = line.get("filtered_resps")
    while isinstance(filtered, list) and filtered:
        filtered = filtered[0]
    if isinstance(filtered, str):
        return filtered
    return None


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
    lines: list[tuple[int, dict[str, Any]]] = []
    with (
        opening(shown, folder="a samples file", text="an lm-eval samples file"),
        io.TextIOWrapper(
            open_input(shown, what="an lm-eval samples file", error=ResultsFileError),
            encoding="utf-8",
        ) as f,
    ):
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError:
                raise file_error(shown, f"line {number} is not valid JSON") from None
            if not isinstance(line, dict):
                raise file_error(shown, f"line {number} is not a JSON object")
            lines.append((number, line))
    if not lines:
        raise file_error(shown, "the file is empty; it has no samples")
    for number, line in lines:
        if "doc_id" not in line:
            raise file_error(
                shown, f'line {number} has no "doc_id"; is this an lm-eval samples file?'
            )
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
    found = _scale(lines, chosen, chosen_filter, declared, shown)
    task, date = _task_and_date(shown)
    aggregated, aggregated_name = _aggregated(shown, date)
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
            why = f"{chosen}={line[chosen]!r}: answer {answer!r}, target {line.get('target')!r}"
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
        warnings=()
        if aggregated is not None
        else ("no aggregated results file (results_<date>.json) beside it: the model is unknown",),
        scores=None if found is None else (f"metric {chosen!r}", found, declared is not None),
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
    (``true`` and ``false`` too); in a metric that keeps its scores a value of
    text is refused (the harness writes numbers), and one of another kind is left
    for the pass rule to refuse, naming its line."""
    numbers: list[float] = []
    places: list[str] = []
    texts: list[tuple[int, Any]] = []
    for number, line in lines:
        if str(line.get("filter", "none")) != chosen_filter or chosen not in line:
            continue
        value = line[chosen]
        if isinstance(value, int | float):  # bool too: it is a pass or a fail
            numbers.append(float(value))
            places.append(f"line {number} (doc_id {line['doc_id']!r})")
        elif isinstance(value, str):
            texts.append((number, value))
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
    if found is not None and texts:
        number, value = texts[0]
        raise file_error(
            shown, f"line {number}: metric {chosen!r} is {value!r}, text, not a number"
        )
    return found
