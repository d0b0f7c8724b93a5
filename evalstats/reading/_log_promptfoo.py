"""promptfoo's ``results.json``, as ``promptfoo eval -o results.json`` writes it.

The file is ``{"evalId", "results": {"version", "prompts", "results": [...],
"stats"}, "config", ...}``; each entry of ``results.results`` is one answer of
one provider to one prompt on one test. Here each (provider, prompt) pair is a
variant (named by the prompt's label, the provider's label or id, or both when
there are several of each), each test a case, and with ``--repeat N`` the
N copies of a test (promptfoo numbers them ``testIdx = test * N + r``) the
repeats. ``success`` is the pass; the assertion results are the checks. An
answer that ended in an error (``failureReason`` 2) is incomplete.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .._files import read_input, too_deep
from .._text import clip, short_repr
from ..errors import ResultsFileError
from ..results._file import Results
from ._log_common import (
    build,
    check,
    file_error,
    json_line,
    opening,
    strict_bool,
    strict_index,
    suite_digest,
)

#: Versions of the ``results`` object this reader knows (promptfoo 0.4x to 0.12x).
VERSIONS = (2, 3)


def _load(shown: str) -> tuple[dict[str, Any], str]:
    kind = "a promptfoo results.json"
    with opening(shown, folder=kind, text=kind):
        raw = read_input(shown, what=kind, error=ResultsFileError).decode("utf-8")
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise file_error(shown, too_deep("", kind)[2:]) from None
    except ValueError as error:
        raise file_error(shown, f"is not valid JSON ({error}); was it cut short?") from None
    if not isinstance(doc, dict):
        raise file_error(shown, "is not a JSON object; is it a promptfoo results.json?")
    return doc, raw


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


def _checks(entry: dict[str, Any], success: bool) -> list[dict[str, Any]]:
    grading = entry.get("gradingResult") or {}
    components = [c for c in grading.get("componentResults") or [] if isinstance(c, dict)]
    checks = []
    all_passed = True
    for c in components:
        passed = c["pass"]  # true or false (checked by _entries)
        all_passed &= passed
        reason = "" if passed else str(c.get("reason") or "failed")
        checks.append(check(_assertion_name(c), passed, reason=reason, axis="assertion"))
    if not components:
        reason = "" if success else str(grading.get("reason") or entry.get("error") or "failed")
        return [check("success", success, reason=reason)]
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


def read_promptfoo(path: str | os.PathLike[str], *, pass_threshold: float | None = None) -> Results:
    """Read a promptfoo ``results.json`` into :class:`~evalstats.results._file.Results`."""
    shown = os.fspath(path)
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
    repeat = _repeat(doc, config, shown)
    names = _Names(entries, inner.get("prompts") or [])
    labels = _case_labels(entries, repeat)
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
        test, rep = divmod(e["testIdx"], repeat)
        records.append(_record(e, labels[test], variant, rep))
    meta = doc.get("metadata") or {}
    description = config.get("description") or os.path.splitext(os.path.basename(shown))[0]
    return build(
        shown,
        records,
        tool="promptfoo",
        tool_version=meta.get("promptfooVersion"),
        suite={
            "name": str(description),
            "sha256": suite_digest(["promptfoo", config.get("tests"), list(labels.values())]),
        },
        variants=list(variant_specs.values()),
        pass_rule="promptfoo's own verdict (success) says so; the assertion results are the checks",
        extra={"eval_id": doc.get("evalId"), "repeat": repeat},
    )


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
                raise file_error(shown, f'results.results[{i}] has no "{key}"')
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
    _object(e.get("prompt"), "prompt")
    response = e.get("response")
    _object(response, "response")
    if isinstance(response, dict):
        _object(response.get("tokenUsage"), "response.tokenUsage")
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


def _repeat(doc: dict[str, Any], config: dict[str, Any], shown: str) -> int:
    """How many times each test ran (``--repeat``); 1 when not said.

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
    return 1


class _Names:
    """Variant names: the prompt when one provider ran several prompts, the provider
    when one prompt ran on several providers, else both."""

    def __init__(self, entries: list[dict[str, Any]], prompts: list[Any]) -> None:
        self.prompts = prompts
        self.providers = list(dict.fromkeys(self.provider(e) for e in entries))
        self.prompt_keys = list(dict.fromkeys(e["promptIdx"] for e in entries))

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

    def variant(self, e: dict[str, Any]) -> str:
        if len(self.providers) == 1 and len(self.prompt_keys) > 1:
            return self.prompt(e)
        if len(self.prompt_keys) == 1:
            return self.provider(e)
        return f"{self.provider(e)} · {self.prompt(e)}"


def _case_labels(entries: list[dict[str, Any]], repeat: int) -> dict[int, str]:
    """Cases: the test of each testIdx, named by its description (or vars), made unique."""
    tests: dict[int, dict[str, Any]] = {}
    for e in sorted(entries, key=lambda e: (e["testIdx"], e["promptIdx"])):
        tests.setdefault(int(e["testIdx"]) // repeat, e.get("testCase") or {})
    labels: dict[int, str] = {}
    for t, case in tests.items():
        desc = case.get("description") if isinstance(case, dict) else None
        if not desc:
            vars_ = case.get("vars") if isinstance(case, dict) else None
            desc = (
                ", ".join(f"{k}={_short(v, 30)}" for k, v in vars_.items())
                if isinstance(vars_, dict) and vars_
                else f"test {t + 1}"
            )
        labels[t] = str(desc)
    names = list(labels.values())
    for t, name in list(labels.items()):
        if names.count(name) > 1:
            labels[t] = f"{name} (test {t + 1})"
    return labels


def _record(e: dict[str, Any], case: str, variant: str, rep: int) -> dict[str, Any]:
    """One sample record: status and checks, answer, latency and tokens."""
    success = e["success"]  # true or false (checked by _entries)
    failure = e.get("failureReason")
    response = e.get("response") or {}
    output = response.get("output") if isinstance(response, dict) else None
    if output is not None and not isinstance(output, str):
        output = json.dumps(output, ensure_ascii=False)
    record: dict[str, Any] = {"case": case, "variant": variant, "repeat": rep}
    if failure == 2 or (e.get("error") and output is None):
        reason = "error: " + _short(e.get("error") or "the provider failed", 300)
        record.update(
            status="incomplete",
            reason=reason,
            checks=[check("success", False, reason=reason)],
        )
    else:
        record.update(status="completed", reason=None, checks=_checks(e, success))
    record["answer"] = output
    latency = e.get("latencyMs")
    if isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0:
        record["latency_s"] = latency / 1000.0
    usage = (response.get("tokenUsage") if isinstance(response, dict) else None) or {}
    if usage.get("total"):
        record["tokens"] = {"input": usage.get("prompt"), "output": usage.get("completion")}
    record["model"] = record["variant"]
    return record
