"""Inspect AI logs (``.eval`` and ``.json``), read through ``inspect_ai.log.read_eval_log``.

Each sample of each epoch becomes one sample record: the sample id is the
case, ``epoch - 1`` the repeat, the log's model the variant. The pass is the
value of one scorer (the log's first, or ``scorer=``; for a scorer whose
value is a dictionary of metrics, one key of it, ``scorer="name/key"``, the
log's first by default; for one whose value is a list, one place of it,
``scorer="name/0"``), read by
:class:`~evalstats.reading._log_common.PassRule`: ``C`` (CORRECT), ``1`` and
``True`` pass; ``I``, ``N``, ``0`` and ``False`` fail; other numbers pass when
they reach ``pass_threshold``; ``P`` (partial credit) is 0.5 and passes only
by the threshold too. A value of ``NaN``, Inspect's mark of a sample left
unscored, leaves the sample unscored. A sample that ended in an error or hit a limit
is incomplete (it stays in the denominator as a failure), and a log whose
run ended in an error says so, with the error's message.

A scorer whose values are graded (a number other than 0 and 1, or ``P``)
keeps them as scores beside pass/fail, read as Inspect's ``value_to_float``
reads them (``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, numbers as they are): on 0
to 1, or on the ``scale=`` given (``--scale 1,5``), which a number outside 0
to 1 needs. The check and the sample record carry the score in [0, 1], the
value as given and its scale; an incomplete sample scores 0, an unscored one
has no score.

The manifest records what identifies each sample (a digest of its input and
of its target) and the log's task, task arguments and model, so that logs of
different tasks over the same samples (one ``@task`` per prompt, the usual
way to compare prompts in Inspect) can be joined and compared paired
(:func:`~evalstats.reading._logs.merge`).

inspect_ai is an optional dependency: ``pip install "evalstats-honest[inspect]"``.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Any

from ..results._file import Results
from ._log_common import (
    SCORE_WORDS,
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

EXTRA = 'pip install "evalstats-honest[inspect]"'


def _read_log(shown: str) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise file_error(
            shown, f"reading Inspect AI logs needs the inspect extra: {EXTRA}"
        ) from None
    if not os.path.exists(shown):
        raise file_error(shown, "no such file")
    if os.path.isdir(shown):
        raise file_error(shown, "is a folder, not an Inspect log")
    try:
        return read_eval_log(shown)
    except Exception as error:  # zipfile, pydantic and JSON errors alike: one line
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        kind = type(error).__name__
        details = getattr(error, "errors", None)  # pydantic: name the field
        if callable(details):
            # keep the first line when the details cannot be read
            with contextlib.suppress(Exception):
                message = _invalid_field(details())
        raise file_error(
            shown, f"not a readable Inspect AI log ({kind}{': ' + message if message else ''})"
        ) from None


def _invalid_field(errors: list[dict[str, Any]]) -> str:
    """pydantic's errors as one line naming the field: the first error, or, when a
    field may hold one of several types (a score's value) and holds none of them,
    the value and the types it may be.

    >>> _invalid_field([{"loc": ("samples", 0, "epoch"), "msg": "Field required"}])
    'samples.0.epoch: Field required'
    >>> _invalid_field([
    ...     {"loc": ("v", "str"), "msg": "Input should be a valid string", "input": None},
    ...     {"loc": ("v", "int"), "msg": "Input should be a valid integer", "input": None}])
    'v: None should be a valid string or a valid integer'
    """
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    union = [e for e in errors if tuple(e.get("loc", ()))[:-1] == loc[:-1]]
    if len(union) > 1 and len(loc) > 1:
        kinds = [
            str(e.get("msg", "")).removeprefix("Input should be ").split(", got ")[0] for e in union
        ]
        where = ".".join(str(part) for part in loc[:-1])
        value = repr(first.get("input"))[:80]
        return f"{where}: {value} should be {', '.join(kinds[:-1])} or {kinds[-1]}"
    where = ".".join(str(part) for part in loc)
    return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))


def _tokens(sample: Any) -> dict[str, int] | None:
    usage = getattr(sample, "model_usage", None) or {}
    if not usage:
        return None
    total_in = total_out = 0
    for u in usage.values():
        total_in += int(getattr(u, "input_tokens", 0) or 0)
        total_out += int(getattr(u, "output_tokens", 0) or 0)
    return {"input": total_in, "output": total_out}


def read_inspect(
    path: str | os.PathLike[str],
    *,
    pass_threshold: float | None = None,
    scorer: str | None = None,
    scale: object = None,
) -> Results:
    """Read an Inspect AI log into :class:`~evalstats.results._file.Results`."""
    shown = os.fspath(path)
    declared = check_scale(scale)
    log = _read_log(shown)
    samples_in = _samples_of(log, shown)
    spec = log.eval
    pick = _chosen_scorer(log, samples_in, scorer, shown)
    chosen = pick.name
    what = f"the value of scorer {chosen!r}"
    found = _scale(samples_in, pick, declared, what, shown)
    rule = PassRule(pass_threshold, what=what)
    model = str(spec.model)
    records = [_record(s, pick, rule, model, shown, found) for s in samples_in]
    status = getattr(log, "status", None)
    packages = getattr(spec, "packages", None) or {}
    config = getattr(spec, "config", None)
    reason = None
    if status != "success":
        reason = f"Inspect status {status!r}"
        message = _error_message(log)
        if message:
            reason += f": {message}"
    return build(
        shown,
        records,
        tool="inspect_ai",
        tool_version=packages.get("inspect_ai"),
        suite=_suite(spec, samples_in, chosen),
        variants=[{"name": model, "task": _task(spec, model)}],
        pass_rule=f"scorer {chosen!r} says so ({rule.describe()})",
        finished=status == "success",
        reason=reason,
        extra={
            "scorer": chosen,
            "run_id": getattr(spec, "run_id", None),
            "epochs": getattr(config, "epochs", None),
            "task": str(spec.task),
            "task_args": _plain(getattr(spec, "task_args", None) or {}),
            "model": model,
        },
        case_fields=_case_fields(samples_in),
        scores=None if found is None else (what, found, bool(declared)),
    )


def _measured(s: Any) -> bool:
    return getattr(s, "error", None) is None and getattr(s, "limit", None) is None


_UNSCORED = object()  # a value that leaves its sample unscored


class _Pick:
    """The scorer that decides, and for one whose value is a dictionary of metrics,
    the key of the metric (for a list of values, the index of one): ``name`` is how
    the check is called (``scorer/key``)."""

    def __init__(self, scorer: str, key: str | None = None) -> None:
        self.scorer, self.key = scorer, key
        self.name = scorer if key is None else f"{scorer}/{key}"

    def value(self, s: Any) -> Any:
        """The sample's value, or ``_UNSCORED`` when the scorer did not score it: no
        score, Inspect's ``NaN`` mark of an unscored sample, or a dictionary without
        the key."""
        score = (s.scores or {}).get(self.scorer)
        if score is None:
            return _UNSCORED
        value = score.value
        if self.key is not None and isinstance(value, dict):
            value = value.get(self.key, _UNSCORED)
        elif self.key is not None and isinstance(value, list | tuple):
            at = int(self.key) if self.key.isdigit() else len(value)
            value = value[at] if at < len(value) else _UNSCORED
        if isinstance(value, float) and math.isnan(value):
            return _UNSCORED
        return value

    def unscored(self, s: Any) -> str:
        score = (s.scores or {}).get(self.scorer)
        if score is None:
            return f"scorer {self.scorer!r} did not score this sample"
        if self.key is not None and isinstance(score.value, dict) and self.key not in score.value:
            return f"scorer {self.scorer!r} gave no {self.key!r} for this sample"
        listed = isinstance(score.value, list | tuple)
        if self.key is not None and listed and not self.key.isdigit():
            return f"scorer {self.scorer!r} gave a list of values, no {self.key!r}"
        if self.key is not None and listed and int(self.key) >= len(score.value):
            return f"scorer {self.scorer!r} gave {len(score.value)} values, no item {self.key}"
        return f"scorer {self.name!r} left this sample unscored (NaN)"


def _scale(
    samples_in: Any, pick: _Pick, declared: Any, what: str, shown: str
) -> tuple[float, float] | None:
    """The scale of the chosen scorer's values, or None when they are pass/fail only
    (see :func:`~evalstats.reading._log_common.score_scale`)."""
    numbers: list[float] = []
    words: list[bool] = []
    places: list[Any] = []
    for s in samples_in:
        value = pick.value(s)
        if value is _UNSCORED or not _measured(s):
            continue
        number = score_number(value)
        if number is None:
            continue  # neither a number nor a word: the pass rule refuses it, naming it
        numbers.append(number)
        words.append(
            isinstance(value, bool)
            or (isinstance(value, str) and value.strip().lower() in SCORE_WORDS)
        )
        places.append(s)
    try:
        return score_scale(
            numbers,
            scale=declared,
            asked=declared is not None,
            what=what,
            place=lambda i: f"sample {str(places[i].id)!r}, epoch {places[i].epoch}",
            words=words,
        )
    except ValueError as problem:
        raise file_error(shown, str(problem)) from None


def _error_message(log: Any) -> str:
    """The first line of the error the log's run ended in, or ""."""
    error = getattr(log, "error", None)
    if error is None:
        return ""
    lines = str(getattr(error, "message", error)).strip().splitlines()
    return lines[0][:300] if lines else ""


def _case_fields(samples_in: Any) -> dict[str, dict[str, Any]]:
    """What identifies each sample's question: digests of its input and target (the
    first epoch's; every epoch of a sample has the same)."""
    out: dict[str, dict[str, Any]] = {}
    for s in samples_in:
        case = str(s.id)
        if case not in out:
            out[case] = {
                "input_sha256": suite_digest([_plain(s.input)]),
                "target_sha256": suite_digest([_plain(s.target)]),
            }
    return out


def _samples_of(log: Any, shown: str) -> Any:
    """The log's samples, after checking its version; a log without samples is refused."""
    version = getattr(log, "version", None)
    if version not in (1, 2):
        raise file_error(
            shown, f"Inspect log version={version!r}; evalstats reads versions 1 and 2"
        )
    samples_in = log.samples
    _check_ids(samples_in, shown)
    if not samples_in:
        status = getattr(log, "status", None)
        if status == "error":
            raise file_error(shown, _errored(log, "before any sample was logged"))
        raise file_error(
            shown,
            f"the log has no samples (status {status!r}); log the samples (the default) "
            "to analyse them",
        )
    return samples_in


def _check_ids(samples_in: Any, shown: str) -> None:
    """Refuse what cannot be a case and repeat: an epoch below 1, and two sample
    ids, such as ``1`` and ``"1"``, that Inspect tells apart and a case id does not."""
    ids: dict[str, Any] = {}
    for s in samples_in or ():
        epoch = s.epoch
        if not isinstance(epoch, int) or epoch < 1:
            raise file_error(
                shown, f"sample {str(s.id)!r}: epoch={epoch!r}; Inspect counts epochs from 1"
            )
        other = ids.setdefault(str(s.id), s.id)
        if other != s.id or type(other) is not type(s.id):
            raise file_error(
                shown,
                f"sample ids {other!r} and {s.id!r} are different samples to Inspect but "
                "the same case here (a case id is text); give the samples distinct ids",
            )


def _errored(log: Any, what: str) -> str:
    message = _error_message(log)
    return (
        f"the Inspect run ended in an error{f' ({message})' if message else ''} {what}; "
        "fix it and run the task again (or inspect eval-retry)"
    )


def _chosen_scorer(log: Any, samples_in: Any, scorer: str | None, shown: str) -> _Pick:
    """The scorer whose value decides a pass: the one asked for, else the log's first;
    for a scorer whose values are dictionaries of metrics, one key of them (the
    one asked for as ``scorer/key``, else the first Inspect's results name)."""
    names: list[str] = []
    keys: dict[str, list[str]] = {}  # each dictionary-valued scorer's keys, in order
    lists: set[str] = set()  # the scorers whose values are lists: their keys are indices
    for s in samples_in:
        for name, score in (s.scores or {}).items():
            if name not in names:
                names.append(name)
            value = score.value
            if isinstance(value, dict):
                seen = keys.setdefault(name, [])
                seen.extend(str(k) for k in value if str(k) not in seen)
            elif isinstance(value, list | tuple):
                lists.add(name)
                seen = keys.setdefault(name, [])
                seen.extend(str(i) for i in range(len(seen), len(value)))
    if scorer is None:
        return _first_scorer(log, names, keys, lists, shown)
    if scorer in names:
        if scorer in keys:
            raise file_error(shown, _name_a_key(scorer, keys[scorer], scorer in lists))
        return _Pick(scorer)
    owner, _, key = scorer.rpartition("/")
    if owner in keys and key in keys[owner]:
        return _Pick(owner, key)
    owners = [name for name, seen in keys.items() if scorer in seen and name not in lists]
    if len(owners) == 1:  # a metric's key alone, as Inspect's results name it
        return _Pick(owners[0], scorer)
    from .._validate import suggest

    choices = [n for n in names if n not in keys]
    choices += [f"{n}/{k}" for n, seen in keys.items() for k in seen]
    raise file_error(
        shown,
        f"scorer={scorer!r} scored no sample{suggest(scorer, choices)}; the scorers are "
        + (", ".join(repr(n) for n in choices) or "none"),
    )


def _first_scorer(
    log: Any, names: list[str], keys: dict[str, list[str]], lists: set[str], shown: str
) -> _Pick:
    """The log's first score: the first of Inspect's results (a metric of a
    dictionary-valued scorer names its key there), else the first sample's. A
    scorer whose values are lists has no first part to take: its index is asked for."""
    results_scores = getattr(getattr(log, "results", None), "scores", None) or []
    first = None
    for r in results_scores:
        name = getattr(r, "name", None)
        owner = getattr(r, "scorer", None) or name
        if owner in keys and owner not in lists and name in keys[owner]:
            return _Pick(owner, name)
        if name in names:
            first = name
            break
    if first is None and not names:
        if getattr(log, "status", None) == "error":
            raise file_error(shown, _errored(log, "before any sample was scored"))
        raise file_error(shown, "no sample has a score; score the log first (inspect score)")
    first = names[0] if first is None else first
    if first in lists:
        raise file_error(shown, _name_a_key(first, keys[first], True))
    return _Pick(first, keys[first][0]) if keys.get(first) else _Pick(first)


def _name_a_key(scorer: str, seen: list[str], indexed: bool = False) -> str:
    shown = " or ".join(repr(f"{scorer}/{k}") for k in seen[:4])
    if indexed:
        return (
            f"the values of scorer {scorer!r} are lists of up to {len(seen)} values; name "
            f"the one that decides by its place from 0, as {shown}"
        )
    return (
        f"the values of scorer {scorer!r} are dictionaries of metrics "
        f"({', '.join(map(repr, seen))}); name the one that decides, as {shown}"
    )


def _record(
    s: Any, pick: _Pick, rule: PassRule, model: str, shown: str, scale: Any
) -> dict[str, Any]:
    """One sample record: its status and the chosen scorer's check, answer, timing,
    tokens; and with a ``scale``, the score of the check and the sample."""
    case = str(s.id)
    repeat = int(s.epoch or 1) - 1
    record: dict[str, Any] = {"case": case, "variant": model, "repeat": repeat}
    error = getattr(s, "error", None)
    limit = getattr(s, "limit", None)
    chosen = pick.name
    value = pick.value(s)
    if error is not None or limit is not None:
        if error is not None:
            message = str(getattr(error, "message", error)).strip().splitlines()
            reason = "error: " + (message[0] if message else "unknown")
        else:
            reason = f"hit the {getattr(limit, 'type', '')} limit".replace("  ", " ")
        record.update(
            status="incomplete", reason=reason, checks=[check(chosen, False, reason=reason)]
        )
        if scale is not None:
            record["score"] = 0.0  # every applicable check fails
    elif value is _UNSCORED:
        record.update(
            status="completed",
            reason=None,
            checks=[check(chosen, None, reason=pick.unscored(s))],
        )
    else:
        verdict = _scored(s, s.scores[pick.scorer], value, pick, rule, shown)
        record.update(status="completed", reason=None, checks=[verdict])
        if scale is not None:
            record["score"] = with_score(verdict, _number(value), scale)["score"]
    output = getattr(s, "output", None)
    record["answer"] = getattr(output, "completion", None) if output is not None else None
    latency = getattr(s, "total_time", None)
    if isinstance(latency, int | float) and latency >= 0:
        record["latency_s"] = float(latency)
    record["tokens"] = _tokens(s)
    record["model"] = model
    if s.scores and (len(s.scores) > 1 or pick.key is not None):
        record["scores"] = {k: _plain(v.value) for k, v in s.scores.items()}
    return record


def _scored(s: Any, score: Any, value: Any, pick: _Pick, rule: PassRule, shown: str) -> Any:
    """The check of a scored sample: passed by the rule, or failed with what was wrong."""
    where = f"sample {str(s.id)!r}, epoch {s.epoch}"
    if isinstance(value, dict | list | tuple) and pick.key is None:
        parts = (
            [str(k) for k in value]
            if isinstance(value, dict)
            else list(map(str, range(len(value))))
        )
        indexed = not isinstance(value, dict)
        raise file_error(shown, f"{where}: {_name_a_key(pick.scorer, parts, indexed)}")
    try:
        passed = rule(value)
    except ValueError as problem:
        raise file_error(shown, f"{where}: {problem}") from None
    why = ""
    if not passed:
        why = f"answer {score.answer!r}" if score.answer is not None else "scored as failed"
        why += f", target {s.target!r}" if s.target not in (None, "") else ""
        why += f" (value {value!r})"
        if score.explanation and score.explanation != score.answer:
            why += f": {str(score.explanation).strip()[:300]}"
    return check(pick.name, passed, reason=why)


def _number(value: Any) -> float:
    number = score_number(value)
    assert number is not None  # the pass rule refused any value that is not a score
    return number


def _suite(spec: Any, samples_in: Any, chosen: str) -> dict[str, Any]:
    """The manifest's suite: the task, and a digest of what makes runs comparable."""
    dataset = getattr(spec, "dataset", None)
    ids = sorted({str(s.id) for s in samples_in})
    return {
        "name": str(spec.task),
        "version": getattr(spec, "task_version", None),
        "sha256": suite_digest(
            [
                "inspect_ai",
                spec.task,
                getattr(spec, "task_version", None),
                getattr(dataset, "name", None),
                ids,
                chosen,
            ]
        ),
    }


def _task(spec: Any, model: str) -> dict[str, Any]:
    return {
        "kind": "inspect_ai",
        "model": model,
        "model_args": _plain(getattr(spec, "model_args", None) or {}),
        "generate": _plain(getattr(spec, "model_generate_config", None) or {}),
    }


def _plain(value: Any) -> Any:
    """JSON-ready copy of Inspect values (pydantic models, tuples)."""
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(exclude_none=True))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None  # Inspect's NaN of an unscored sample: JSON has no such number
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
