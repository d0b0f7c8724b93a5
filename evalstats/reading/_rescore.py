"""Score stored answers again with a suite's current checks, calling no model.

A check changes far more often than the model. :func:`rescore` reads a
results file, applies the checks of a suite to each stored answer (and to the
tool-call trace kept in the record, for required actions), and writes a new
results file, created exclusively like every results file. Only the checks
may differ between the run's cases and the suite's: a changed prompt, a
changed fixture, an added or removed case would mean the stored answers
answer another question, so rescoring refuses and says which case changed.

What each stored sample becomes:

- **completed**: every check of its case is run on the stored answer (a
  required action on the stored trace);
- **incomplete**: stays incomplete, and every check fails as not inspected,
  as the engine scores an incomplete sample;
- **unmeasured**: stays unmeasured (there is no answer to score).

A model-graded check calls its judge (``judge=``); a judge that cannot be
reached leaves that sample unmeasured, with the reason.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._text import canonical_json
from ..errors import InvalidArgument, ProviderError
from ..results._file import Results, read_results
from ..results._records import to_record
from ..running._checks import INSPECTION_FAILURE, Verdict, run_check

__all__ = ["SCORING_FIELDS", "RescoreOutcome", "rescore"]

#: The fields of a case that rescoring may change: the scoring, and notes for
#: people. Every other field (prompt, messages, system prompt, fixtures,
#: holdout) is what the model was given, and must be the same.
SCORING_FIELDS = frozenset({"checks", "required_actions", "review", "tags"})


@dataclass(frozen=True)
class RescoreOutcome:
    """What :func:`rescore` wrote.

    ``out`` is the new results file; ``samples`` how many sample records it
    holds, ``rescored`` how many completed samples were scored again, and
    ``verdicts_changed`` how many of those got a different set of verdicts
    (status per check) than before; ``checks_changed`` names the cases whose
    checks differ from the run's.
    """

    out: str
    samples: int
    rescored: int
    verdicts_changed: int
    checks_changed: tuple[str, ...]

    def __str__(self) -> str:
        changed = (
            f"; the checks changed in {len(self.checks_changed)} case"
            f"{'s' if len(self.checks_changed) != 1 else ''}"
            if self.checks_changed
            else "; no case's checks changed"
        )
        return (
            f"rescored {self.rescored} of {self.samples} samples without calling a model"
            f"{changed}; {self.verdicts_changed} got different verdicts. Written to {self.out}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "samples": self.samples,
            "rescored": self.rescored,
            "verdicts_changed": self.verdicts_changed,
            "checks_changed": list(self.checks_changed),
        }


def _input_of(case: Mapping[str, Any]) -> dict[str, Any]:
    """The case's fields that the model was given; an empty value (no fixtures, not
    holdout) counts as absent, so a manifest from a version that did not write the
    field compares equal."""
    return {
        k: v
        for k, v in case.items()
        if k not in SCORING_FIELDS and v not in (None, False, "", [], {})
    }


def _check_same_inputs(run: Results, new_cases: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Refuse when the run's cases and the suite's differ in anything but scoring;
    return the ids of the cases whose checks changed."""
    listed = run.manifest.get("cases")
    if not isinstance(listed, list) or not all(
        isinstance(c, Mapping) and isinstance(c.get("id"), str) for c in listed
    ):
        raise InvalidArgument(
            f"{run.path}: the manifest lists no cases to compare with the suite; "
            "only a results file written by evalstats run can be rescored"
        )
    old = {c["id"]: c for c in listed}
    missing = [c for c in old if c not in new_cases]
    added = [c for c in new_cases if c not in old]
    if missing or added:
        parts = []
        if missing:
            parts.append("not in the suite: " + ", ".join(repr(c) for c in missing[:3]))
        if added:
            parts.append("not in the run: " + ", ".join(repr(c) for c in added[:3]))
        raise InvalidArgument(
            "suite: its cases are not the run's (" + "; ".join(parts) + "); rescore applies "
            "new checks to the same cases (run the new cases, or extend the run)"
        )
    for case_id, case in old.items():
        a, b = _input_of(case), _input_of(new_cases[case_id])
        if canonical_json(a) != canonical_json(b):
            fields = sorted(
                k for k in set(a) | set(b) if canonical_json(a.get(k)) != canonical_json(b.get(k))
            )
            raise InvalidArgument(
                f"suite: case {case_id!r} changed its {', '.join(fields)}; the stored answers "
                "answer the old one, so only checks may change when rescoring (run it again)"
            )
    return [
        c
        for c in old
        if any(
            canonical_json(old[c].get(k)) != canonical_json(new_cases[c].get(k))
            for k in SCORING_FIELDS
        )
    ]


def _score_sample(
    record: Mapping[str, Any], checks: Any, needs_trace: Callable[[Any], bool]
) -> dict[str, Any]:
    """The record with its verdicts from ``checks``; unmeasured when a judge fails."""
    from ..running._scoring import not_inspected, verdict_record

    out = dict(record)
    status = record.get("status")
    if status == "unmeasured":
        return out
    if status != "completed":
        why = str(record.get("reason") or "incomplete")
        out["checks"] = [to_record(v) for v in not_inspected(checks, why)]
        return out
    answer = record.get("answer")
    trace = None
    if any(needs_trace(check) for check, _, _ in checks):
        from ..running._traces import TraceError, trace_from_summary

        try:
            trace = trace_from_summary(record.get("trace") or {})
        except TraceError:
            trace = None
    verdicts = []
    for check, axis, name in checks:
        subject = trace if needs_trace(check) else answer
        if subject is None and needs_trace(check):
            verdict = Verdict.failed(f"{INSPECTION_FAILURE}: no trace is stored")
        else:
            try:
                verdict = run_check(check, subject)
            except (TimeoutError, ProviderError) as exc:  # a judge that could not answer
                out.update(
                    status="unmeasured", reason=f"the check {name} could not be scored: {exc}"
                )
                out["checks"] = []
                return out
        verdicts.append(to_record(verdict_record(name, axis, verdict, evidence=False)))
    out["checks"] = verdicts
    return out


def _statuses(record: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    return [
        (c.get("check"), c.get("status"))
        for c in record.get("checks") or []
        if isinstance(c, Mapping)
    ]


def rescore(
    results: Results | str | os.PathLike[str],
    suite: Any,
    *,
    out: str | os.PathLike[str],
    judge: Callable[[str], str] | str | None = None,
    force: bool = False,
) -> RescoreOutcome:
    """Apply a suite's current checks to a run's stored answers; write a new results file.

    Parameters
    ----------
    results : Results or path
        The run to score again (a file written by ``evalstats run``).
    suite : Suite, path or name
        The suite with the new checks. Its cases must be the run's, with the
        same prompts, conversations and fixtures; only ``checks``,
        ``required_actions``, ``review`` and ``tags`` may differ.
    out : path
        The new results file; created exclusively (mode 0600); an existing
        one is refused unless ``force``, and then replaced in one step once the
        new file is whole (``out`` may be the run's own file). Its manifest
        records the new suite and, under ``rescored``, the run's original
        suite (name, path, SHA-256) and file.
    judge : callable or str, optional
        What judges the suite's ``judged_by`` checks: ``prompt -> text``, or a
        judge spec as ``evalstats run --judge`` takes it
        (``"standin:judge,sensitivity=0.9,specificity=0.8,seed=1"``,
        ``"openai:gpt-4o-mini,temperature=0"``). The new manifest records it
        under ``"judge"`` (a callable by its name), so the rescored run is
        compared only with runs judged the same way.

    Returns
    -------
    RescoreOutcome

    Raises
    ------
    InvalidArgument
        When a case's prompt, conversation or fixtures changed, or cases were
        added or removed (say which), or ``out`` exists (without ``force``).

    Examples
    --------
    >>> import os, tempfile
    >>> from evalstats.running._engine import run
    >>> folder = tempfile.mkdtemp()
    >>> _ = run("shop", ["v1=standin:shop-v1"], runs=2, out=os.path.join(folder, "r.jsonl"),
    ...         progress=False)
    >>> outcome = rescore(os.path.join(folder, "r.jsonl"), "shop",
    ...                   out=os.path.join(folder, "again.jsonl"))
    >>> outcome.rescored, outcome.verdicts_changed
    (8, 0)
    """
    from .._files import refuse_existing
    from ..errors import ResultsFileError

    refuse_existing(out, force=force, error=ResultsFileError)  # before a judge is called
    run = results if isinstance(results, Results) else read_results(results)
    described: dict[str, Any] | None = None
    if isinstance(judge, str):
        from ..running._judge_spec import judge_from_spec

        judge, described = judge_from_spec(judge)
    elif judge is not None:
        if not callable(judge):
            raise InvalidArgument(f"judge={judge!r} must be a callable or a judge spec")
        name = getattr(judge, "__qualname__", None) or type(judge).__qualname__
        described = {"spec": None, "kind": "callable", "name": name}
    try:
        return _rescore(run, suite, out, judge, described, force=force)
    finally:
        if described is not None and described.get("kind") != "callable":
            close = getattr(judge, "close", None)
            if close is not None:
                close()


def _rescore(
    run: Results,
    suite: Any,
    out: str | os.PathLike[str],
    judge: Callable[[str], str] | None,
    described: dict[str, Any] | None,
    *,
    force: bool,
) -> RescoreOutcome:
    from ..running._scoring import checks_of, needs_trace
    from ..running._suite import Suite, load_suite
    from ._logs import write_results

    if not isinstance(suite, Suite):
        if not isinstance(suite, str | os.PathLike):
            raise InvalidArgument(f"suite={suite!r} must be a Suite, a suite file or a name")
        suite = load_suite(suite, judge=judge)
    include_holdout = bool(run.manifest.get("include_holdout"))
    cases = {c.id: c for c in suite.select(include_holdout=include_holdout)}
    changed = _check_same_inputs(run, {i: c.to_dict() for i, c in cases.items()})
    checks = {case_id: checks_of(case) for case_id, case in cases.items()}
    samples = []
    rescored = differ = 0
    for record in run.samples:
        new = _score_sample(record, checks[record["case"]], needs_trace)
        if record.get("status") == "completed":
            rescored += 1
            differ += _statuses(new) != _statuses(record)
        samples.append(new)
    manifest = dict(run.manifest)
    manifest["cases"] = [cases[c["id"]].to_dict() for c in run.manifest["cases"]]
    manifest["suite"] = {
        "name": suite.name,
        "version": suite.version,
        "path": suite.path,
        "sha256": suite.sha256,
    }
    history = list(manifest.get("rescored") or [])
    history.append(
        {
            "from_suite": run.manifest.get("suite"),
            "from_file": os.path.basename(run.path) if run.path else None,
            "checks_changed": changed,
            "at": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
        }
    )
    manifest["rescored"] = history
    if described is not None:
        manifest["judge"] = described
    summary = dict(run.summary) if run.summary else None
    if summary is not None:
        by_variant: dict[str, dict[str, int]] = {}
        for s in samples:
            counts = by_variant.setdefault(
                str(s["variant"]), {"completed": 0, "incomplete": 0, "unmeasured": 0}
            )
            if s.get("status") in counts:
                counts[s["status"]] += 1
        summary["by_variant"] = by_variant
    written = Results(run.path, manifest, tuple(samples), summary, run.warnings)
    path = write_results(written, out, force=force)
    return RescoreOutcome(path, len(samples), rescored, differ, tuple(changed))
