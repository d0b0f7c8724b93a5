"""promptfoo's ``results.json``, as ``promptfoo eval -o results.json`` writes it.

The file is ``{"evalId", "results": {"version", "prompts", "results": [...],
"stats"}, "config", ...}``; each entry of ``results.results`` is one answer of
one provider to one prompt on one test. Here each (provider, prompt) pair is a
variant (named by the prompt's label, the provider's label or id, or both when
there are several of each), each test (each combination of a test's vars, which
promptfoo runs as a row of its own) a case, and with ``--repeat N`` the N
rows of it the repeats (see :func:`_cases`; a file that does not say ``N``
is read for it). ``success`` is the pass; the assertion results are the
checks. An answer that ended in an error (``failureReason`` 2) is incomplete.

A log whose assertions are graded (some assertion's ``score`` is not 0 or 1:
``rouge-n``, a ``javascript`` returning a number, ...), or read with
``scale=``, keeps the scores: each assertion's check carries its ``score``
(and its ``threshold`` where the assertion has one), and each sample
promptfoo's own ``score`` of the answer (the weighted mean of its
assertions'); an answer that ended in an error scores 0. An assertion whose
verdict promptfoo's overall one overrules (unscored, see below) keeps its
score, which promptfoo's score of the answer counts. promptfoo's scores lie
from 0 to 1; one outside is refused unless ``scale=`` says its scale.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from typing import Any

from .._files import read_input, too_deep
from .._text import clip, short_repr
from ..errors import ResultsFileError
from ..results._file import Results
from ._log_common import (
    OffScale,
    build,
    check,
    check_scale,
    file_error,
    json_line,
    opening,
    score_scale,
    strict_bool,
    strict_index,
    suite_digest,
    unique_names,
    with_score,
)

#: Versions of the ``results`` object this reader knows (promptfoo 0.4x to 0.12x).
VERSIONS = (2, 3)


def _load(shown: str) -> tuple[dict[str, Any], str]:
    kind = "a promptfoo results.json"
    with opening(shown, folder=kind, text=kind):
        raw = read_input(shown, what=kind, error=ResultsFileError).decode("utf-8")
    raw = raw.removeprefix("\ufeff")  # a byte order mark, as editors and PowerShell write
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise file_error(shown, too_deep("", kind)[2:]) from None
    except ValueError as error:
        raise file_error(shown, _not_json(raw, error)) from None
    if not isinstance(doc, dict):
        raise file_error(shown, "is not a JSON object; is it a promptfoo results.json?")
    return doc, raw


#: promptfoo's ``ResultFailureReason``: none, an assertion failed, an error.
_FAILURE_REASONS = (0, 1, 2)

#: Top-level keys of a promptfoo config (``promptfooconfig.yaml``).
_CONFIG_KEYS = re.compile(
    r"^(prompts|providers|targets|tests|scenarios|defaultTest|description|evaluateOptions"
    r"|outputPath|redteam|sharing|env|extensions|derivedMetrics)\s*:",
    re.MULTILINE,
)

_JSON_OUTPUT = "evalstats reads the JSON file of promptfoo eval -o results.json"


def _not_json(raw: str, error: ValueError) -> str:
    """Why ``raw`` is not a results.json, as a problem: promptfoo's config, its
    CSV or JSON Lines output (``-o results.csv``, ``-o results.jsonl``), or
    JSON cut short."""
    text = raw.lstrip()
    first = text.split("\n", 1)[0]
    at = getattr(error, "pos", 0) - (len(raw) - len(text))
    if not text.startswith("{"):
        if _CONFIG_KEYS.search(raw):
            return (
                "is a promptfoo config (YAML), not its results; run promptfoo eval -c CONFIG "
                "-o results.json and read results.json"
            )
        if "," in first and at <= len(first):
            return f"is not JSON but a table, such as promptfoo's CSV output; {_JSON_OUTPUT}"
    if isinstance(error, json.JSONDecodeError) and error.msg == "Extra data":
        try:
            line = json.loads(first)
        except ValueError:
            line = None
        if isinstance(line, dict):
            return (
                "is JSON Lines, one JSON object a line, such as promptfoo's -o results.jsonl; "
                + _JSON_OUTPUT
            )
    return f"is not valid JSON ({error}); was it cut short?"


class _Entries:
    """Where an entry of ``results.results`` is, for errors that name the line and field."""

    def __init__(self, shown: str, raw: str) -> None:
        self.shown = shown
        self.raw = raw

    def error(self, i: int, problem: str) -> Exception:
        line = json_line(self.raw, lambda d: d["results"]["results"][i])
        at = f"line {line}: " if line is not None else ""
        return file_error(self.shown, f"{at}results.results[{i}].{problem}")


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clip(" ".join(str(text).split()), limit)


def _assertion_name(component: dict[str, Any]) -> str:
    assertion = component.get("assertion") or {}
    kind = str(assertion.get("type") or "assertion")
    if "metric" in assertion and assertion["metric"]:
        return str(assertion["metric"])
    value = assertion.get("value")
    return f"{kind}({_short(value)})" if value is not None else kind


def _components(entry: dict[str, Any]) -> list[dict[str, Any]]:
    grading = entry.get("gradingResult") or {}
    return [c for c in grading.get("componentResults") or [] if isinstance(c, dict)]


def _checks(entry: dict[str, Any], success: bool, scale: Any = None) -> list[dict[str, Any]]:
    grading = entry.get("gradingResult") or {}
    components = _components(entry)
    checks = []
    all_passed = True
    for c in components:
        passed = c["pass"]  # true or false (checked by _entries)
        all_passed &= passed
        reason = "" if passed else str(c.get("reason") or "failed")
        verdict = check(_assertion_name(c), passed, reason=reason, axis="assertion")
        if scale is not None and "score" in c:
            with_score(verdict, float(c["score"]), scale)
            threshold = (c.get("assertion") or {}).get("threshold")
            if _number(threshold):
                verdict["threshold"] = float(threshold)
        checks.append(verdict)
    if not components:
        reason = "" if success else str(grading.get("reason") or entry.get("error") or "failed")
        verdict = check("success", success, reason=reason)
        if scale is not None and _number(entry.get("score")):
            with_score(verdict, float(entry["score"]), scale)
        return [verdict]
    if all_passed != success:
        # promptfoo's overall verdict can differ from its parts (a threshold on an
        # assert-set, weights); its ``success`` decides, the parts stay as notes.
        why = f"promptfoo's overall verdict (success={success}) decides"
        checks = [
            dict(c, status="unscored", reason=(c["reason"] + "; " if c["reason"] else "") + why)
            for c in checks
        ]
        checks.append(
            check(
                "success", success, reason="" if success else str(grading.get("reason") or "failed")
            )
        )
    return checks


def read_promptfoo(
    path: str | os.PathLike[str], *, pass_threshold: float | None = None, scale: Any = None
) -> Results:
    """Read a promptfoo ``results.json`` into :class:`~evalstats.results._file.Results`."""
    shown = os.fspath(path)
    declared = check_scale(scale)
    if pass_threshold is not None:
        from ..errors import InvalidArgument

        raise InvalidArgument(
            f"pass_threshold={pass_threshold!r}: promptfoo decides each test's pass itself "
            "(success); set a threshold in the promptfoo config instead"
        )
    doc, raw = _load(shown)
    where = _Entries(shown, raw)
    for key in ("config", "metadata", "runtimeOptions"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise file_error(shown, f"{key} is {short_repr(doc[key])}, not an object")
    inner, entries = _entries(doc, shown, where)
    config = doc.get("config") or {}
    placed, repeat, repeat_note = _cases(entries, _repeat(doc, config, shown))
    names = _Names(entries, inner.get("prompts") or [])
    found = _scale(entries, declared, where)
    variant_specs: dict[str, dict[str, Any]] = {}
    records: list[dict[str, Any]] = []
    for e in sorted(entries, key=lambda e: (e["promptIdx"], e["testIdx"])):
        variant = names.variant(e)
        p = e.get("provider")
        variant_specs.setdefault(
            variant,
            {
                "name": variant,
                "task": {
                    "kind": "promptfoo",
                    "provider": p.get("id") if isinstance(p, dict) else p,
                    "prompt": (e.get("prompt") or {}).get("label") or names.prompt(e),
                },
            },
        )
        case, rep = placed[e["testIdx"]]
        records.append(_record(e, case, variant, rep, found))
    meta = doc.get("metadata") or {}
    case_names = list(dict.fromkeys(case for case, _ in placed.values()))
    description = config.get("description") or os.path.splitext(os.path.basename(shown))[0]
    return build(
        shown,
        records,
        tool="promptfoo",
        tool_version=meta.get("promptfooVersion"),
        suite={
            "name": str(description),
            "sha256": suite_digest(["promptfoo", config.get("tests"), case_names]),
        },
        variants=list(variant_specs.values()),
        pass_rule="promptfoo's own verdict (success) says so; the assertion results are the checks",
        warnings=[] if repeat_note is None else [repeat_note],
        extra={"eval_id": doc.get("evalId"), "repeat": repeat},
        scores=None
        if found is None
        else ("promptfoo's score of the answer", found, declared is not None),
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scale(
    entries: list[dict[str, Any]], declared: Any, where: _Entries
) -> tuple[float, float] | None:
    """The scale of the log's scores, or None when it keeps none: every assertion
    (or, without assertion results, every answer) scored 0 or 1 and no scale was
    declared, a pass/fail log whose pass rates say it all. In a log that keeps
    its scores, a score that is not a number (text, null: promptfoo writes NaN as
    null) or lies off the scale is refused, naming its entry and field."""
    numbers: list[float] = []
    places: list[tuple[int, str]] = []
    wrong: list[tuple[int, str, Any]] = []
    graded = declared is not None

    def add(i: int, field: str, value: Any, decides: bool) -> None:
        nonlocal graded
        if not _number(value):
            wrong.append((i, field, value))
            return
        numbers.append(float(value))
        places.append((i, field))
        graded = graded or (decides and value not in (0, 1))

    for i, e in enumerate(entries):
        if _failed(e):
            continue
        components = _components(e)
        for j, c in enumerate(components):
            if "score" in c:
                add(i, f"gradingResult.componentResults[{j}].score", c["score"], True)
        if "score" in e:
            add(i, "score", e["score"], not components)
    if not graded:
        return None
    if wrong:
        i, field, value = wrong[0]
        raise where.error(i, f"{field} is {short_repr(value)}, not a number")
    try:
        return score_scale(
            numbers, scale=declared, asked=True, what="the score", place=places.__getitem__
        )
    except OffScale as problem:
        i, field = places[problem.index]
        raise where.error(i, f"{field}: {problem.problem}") from None


def _entries(
    doc: dict[str, Any], shown: str, where: _Entries
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The inner results object and its entries, checked: a known version, and every
    entry an object with ``success`` (true or false: ``"false"`` would count as a
    pass), whole-number ``testIdx`` and ``promptIdx``, and assertion results whose
    ``pass`` is true or false; the error names the line and the field."""
    inner = doc.get("results")
    if not isinstance(inner, dict):
        raise file_error(shown, 'has no "results" object; is it a promptfoo results.json?')
    version = inner.get("version")
    if version not in VERSIONS:
        raise file_error(
            shown,
            f"promptfoo results version={version!r}; evalstats reads versions "
            + " and ".join(str(v) for v in VERSIONS),
        )
    if inner.get("prompts") is not None and not isinstance(inner["prompts"], list):
        raise file_error(shown, f"results.prompts is {short_repr(inner['prompts'])}, not a list")
    entries = inner.get("results")
    if not isinstance(entries, list) or not entries:
        raise file_error(shown, "results.results is empty or missing: there are no answers")
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise file_error(shown, f"results.results[{i}] is not an object")
        for key in ("success", "testIdx", "promptIdx"):
            if key not in e:
                older = (
                    f" (results of version {version}, from an older promptfoo, do not say which "
                    "test and prompt each answer is of; run the eval again with a current one)"
                    if version == 2 and key != "success"
                    else ""
                )
                raise file_error(shown, f'results.results[{i}] has no "{key}"{older}')
        try:
            _check_entry(e)
        except ValueError as problem:
            raise where.error(i, str(problem)) from None
    return inner, entries


def _check_entry(e: dict[str, Any]) -> None:
    """The types of one entry's fields that decide or place a sample (ValueError naming one)."""
    strict_bool(e["success"], "success")
    strict_index(e["testIdx"], "testIdx")
    strict_index(e["promptIdx"], "promptIdx")
    reason = e.get("failureReason")
    if reason is not None and (type(reason) is not int or reason not in _FAILURE_REASONS):
        raise ValueError(
            f"failureReason is {short_repr(reason)}, not one of promptfoo's "
            "0 (none), 1 (an assertion failed) and 2 (an error)"
        )
    _object(e.get("prompt"), "prompt")
    response = e.get("response")
    _object(response, "response")
    if isinstance(response, dict):
        usage = response.get("tokenUsage")
        _object(usage, "response.tokenUsage")
        if isinstance(usage, dict) and usage.get("total"):  # the counts a record keeps
            for key in ("prompt", "completion"):
                if usage.get(key) is not None:
                    strict_index(usage[key], f"response.tokenUsage.{key}")
    grading = e.get("gradingResult")
    if grading is None:
        return
    if not isinstance(grading, dict):
        raise ValueError(f"gradingResult is {short_repr(grading)}, not an object")
    components = grading.get("componentResults")
    if components is None:
        return
    if not isinstance(components, list):
        raise ValueError(f"gradingResult.componentResults is {short_repr(components)}, not a list")
    for j, c in enumerate(components):
        if isinstance(c, dict):
            strict_bool(c.get("pass"), f"gradingResult.componentResults[{j}].pass")
            _object(c.get("assertion"), f"gradingResult.componentResults[{j}].assertion")


def _object(value: Any, where: str) -> None:
    """Refuse a field that must be an object (or absent) but is something else."""
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"{where} is {short_repr(value)}, not an object")


def _repeat(doc: dict[str, Any], config: dict[str, Any], shown: str) -> int | None:
    """How many times each test ran (``--repeat``); None when the file does not say.

    A repeat that is not a whole number of at least 1 is refused: taken as 1,
    ``"3"`` would make every repeat a case of its own."""
    for where, holder in (
        ("runtimeOptions", doc.get("runtimeOptions")),
        ("config.evaluateOptions", config.get("evaluateOptions")),
    ):
        if isinstance(holder, dict) and holder.get("repeat") is not None:
            repeat = holder["repeat"]
            if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat >= 1:
                return repeat
            raise file_error(
                shown, f"{where}.repeat is {short_repr(repeat)}, not a whole number of at least 1"
            )
    return None


class _Names:
    """Variant names: the prompt when one provider ran several prompts, the provider
    when one prompt ran on several providers, else both. Each (provider, prompt)
    is a variant of its own: two whose names agree (prompts of one label, or
    whose first 60 characters agree) are told apart as ``name``, ``name (2)``."""

    def __init__(self, entries: list[dict[str, Any]], prompts: list[Any]) -> None:
        self.prompts = prompts
        self.providers = list(dict.fromkeys(self.provider(e) for e in entries))
        self.prompt_keys = list(dict.fromkeys(e["promptIdx"] for e in entries))
        first: dict[tuple[str, int], dict[str, Any]] = {}
        for e in sorted(entries, key=lambda e: (e["promptIdx"], e["testIdx"])):  # as records go
            first.setdefault(self.key(e), e)
        keys = list(first)
        self.names = dict(
            zip(keys, unique_names([self._name(first[k]) for k in keys]), strict=True)
        )

    @staticmethod
    def key(e: dict[str, Any]) -> tuple[str, int]:
        """What tells a variant: its provider (id and label) and its prompt."""
        p = e.get("provider")
        if isinstance(p, dict):
            provider = json.dumps([p.get("id"), p.get("label")], default=str)
        else:
            provider = json.dumps(p, default=str)
        return provider, e["promptIdx"]

    @staticmethod
    def provider(e: dict[str, Any]) -> str:
        p = e.get("provider")
        if isinstance(p, dict):
            return str(p.get("label") or p.get("id") or "provider")
        return str(p or "provider")

    def prompt(self, e: dict[str, Any]) -> str:
        idx = e["promptIdx"]
        prompts = self.prompts
        if isinstance(idx, int) and 0 <= idx < len(prompts) and isinstance(prompts[idx], dict):
            label = prompts[idx].get("label") or prompts[idx].get("raw")
            if label:
                return _short(label, 60)
        p = e.get("prompt") or {}
        return _short(p.get("label") or p.get("raw") or f"prompt {idx}", 60)

    def _name(self, e: dict[str, Any]) -> str:
        if len(self.providers) == 1 and len(self.prompt_keys) > 1:
            return self.prompt(e)
        if len(self.prompt_keys) == 1:
            return self.provider(e)
        return f"{self.provider(e)} · {self.prompt(e)}"

    def variant(self, e: dict[str, Any]) -> str:
        return self.names[self.key(e)]


def _test_key(e: dict[str, Any]) -> str | None:
    """What a test is, as text: its description, the vars of its combination and
    its assertions (alike in every repeat, promptfoo's own fields); None when
    the row has none of them to tell."""
    case = e.get("testCase")
    case = case if isinstance(case, dict) else {}
    vars_ = case.get("vars", e.get("vars"))
    parts = [case.get(k) for k in ("description", "assert", "threshold")]
    if not vars_ and not any(parts):
        return None
    return json.dumps([vars_, *parts], sort_keys=True, default=str, ensure_ascii=False)


def _cases(
    entries: list[dict[str, Any]], repeat: int | None
) -> tuple[dict[int, tuple[str, int]], int, str | None]:
    """Each testIdx's case and repeat, the number of repeats, and a note when the
    file did not say it.

    promptfoo numbers a row per (test, repeat, combination of vars), the
    combinations of one repeat in a row (``en r0, fr r0, en r1, fr r1``), so
    the repeat of a row is not ``testIdx % N``: each row is placed by what it
    tests (:func:`_test_key`), its ``k``-th such row in order being repeat
    ``k % N`` of case ``k // N`` of that test (tests alike stay cases of their
    own). A file that does not say ``--repeat`` (promptfoo before it wrote
    ``runtimeOptions``) ran each test as often as the tests alike in it run,
    when all run a multiple of the same number of times: that number."""
    first: dict[int, dict[str, Any]] = {}
    for e in sorted(entries, key=lambda e: (e["testIdx"], e["promptIdx"])):
        first.setdefault(e["testIdx"], e)
    told = {idx: _test_key(e) for idx, e in first.items()}
    counts: dict[str, int] = {}
    for key in told.values():
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    note = None
    if repeat is None:
        repeat = math.gcd(*counts.values()) or 1
        if repeat > 1:
            note = (
                f"the file does not say how often each test ran (--repeat); every test "
                f"runs a multiple of {repeat} times, read as {repeat} repeats"
            )
    seen: dict[str, int] = {}
    slot: dict[int, tuple[tuple[str, int], int]] = {}
    opened: dict[tuple[str, int], dict[str, Any]] = {}  # each case's first row
    for idx, told_key in told.items():
        # A row with nothing to tell its test by is placed by its number alone.
        key = f"#{idx // repeat}" if told_key is None else told_key
        k = seen.get(key, 0)
        seen[key] = k + 1
        slot[idx] = ((key, k // repeat), k % repeat)
        opened.setdefault((key, k // repeat), first[idx])
    label = dict(zip(opened, _case_names(list(opened.values())), strict=True))
    return {idx: (label[case], rep) for idx, (case, rep) in slot.items()}, repeat, note


def _case_names(tests: list[dict[str, Any]]) -> list[str]:
    """Case names, in order: a test's description, else its vars, else ``test N``;
    names that agree told apart by their vars, then by ``(test N)``."""

    def described(vars_: Any) -> str:
        if isinstance(vars_, dict) and vars_:
            return ", ".join(f"{k}={_short(v, 30)}" for k, v in vars_.items())
        return ""

    names: list[str] = []
    varses: list[str] = []
    for t, e in enumerate(tests):
        case = e.get("testCase")
        case = case if isinstance(case, dict) else {}
        desc = case.get("description")
        varses.append(described(case.get("vars")))
        names.append(_short(desc, 80) if desc else varses[t] or f"test {t + 1}")
    plain = Counter(names)
    for t, name in enumerate(names):
        if plain[name] > 1 and varses[t] and varses[t] != name:
            names[t] = f"{name} ({varses[t]})"
    told = Counter(names)
    return [f"{n} (test {t + 1})" if told[n] > 1 else n for t, n in enumerate(names)]


def _failed(e: dict[str, Any]) -> bool:
    """Whether the answer ended in an error (promptfoo's ``failureReason`` 2, or an
    error without an answer): an incomplete sample."""
    response = e.get("response") or {}
    output = response.get("output") if isinstance(response, dict) else None
    return e.get("failureReason") == 2 or bool(e.get("error") and output is None)


def _record(
    e: dict[str, Any], case: str, variant: str, rep: int, scale: Any = None
) -> dict[str, Any]:
    """One sample record: status and checks, answer, latency and tokens; with a
    ``scale``, the scores of the checks and of the answer."""
    success = e["success"]  # true or false (checked by _entries)
    response = e.get("response") or {}
    output = response.get("output") if isinstance(response, dict) else None
    if output is not None and not isinstance(output, str):
        output = json.dumps(output, ensure_ascii=False)
    record: dict[str, Any] = {"case": case, "variant": variant, "repeat": rep}
    if _failed(e):
        reason = "error: " + _short(e.get("error") or "the provider failed", 300)
        record.update(
            status="incomplete",
            reason=reason,
            checks=[check("success", False, reason=reason)],
        )
        if scale is not None:
            record["score"] = 0.0  # every applicable check fails
    else:
        record.update(status="completed", reason=None, checks=_checks(e, success, scale))
        if scale is not None and "score" in e:
            record["score"] = with_score({}, float(e["score"]), scale)["score"]
    record["answer"] = output
    latency = e.get("latencyMs")
    if isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0:
        record["latency_s"] = latency / 1000.0
    usage = (response.get("tokenUsage") if isinstance(response, dict) else None) or {}
    if usage.get("total"):
        record["tokens"] = {"input": usage.get("prompt"), "output": usage.get("completion")}
    record["model"] = record["variant"]
    return record
