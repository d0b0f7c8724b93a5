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

A model-graded check calls its judge (``judge=``) only when its verdict
cannot be reused: a stored verdict is kept when the judge would be sent the
same prompt (the same rubric, the same stored answer) by the same judge (the
run's, when no other is given). A judge that cannot be reached leaves that
sample unmeasured, with the reason.

A run made of part of a suite (``run --case``, ``--tag``, ``--limit``, which
its manifest records under ``"selection"``) is rescored against the whole
edited suite: the run's cases are taken from it, and the others left out. So
is one shard of a run (``run --shard I/N``), whose cases must be the ones the
suite deals to it; the shards of a run merge when each was rescored with the
same suite and judge. A merged file's samples are scored under the seeds their
parts gave them, and a run's look and batch records are kept.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._text import canonical_json, short_repr
from ..errors import InvalidArgument, ProviderError, ResultsFileError
from ..results._file import Results, read_results
from ..results._records import to_record
from ..running._checks import INSPECTION_FAILURE, Verdict, run_check
from ..running._threads import Alarm
from ._merge import is_shard, merged_spans, refuse_imported, shard_of

__all__ = ["SCORING_FIELDS", "RescoreOutcome", "rescore"]

#: The fields of a case that rescoring may change: the scoring, and notes for
#: people. Every other field (prompt, messages, system prompt, fixtures,
#: holdout) is what the model was given, and must be the same.
SCORING_FIELDS = frozenset({"checks", "required_actions", "review", "tags"})


@dataclass(frozen=True)
class RescoreOutcome:
    """What :func:`rescore` wrote.

    ``out`` is the new results file; ``samples`` how many sample records it
    holds, ``rescored`` how many completed samples were scored again;
    ``verdicts_changed`` how many of those had a check whose status changed
    (a check is matched to its earlier verdict by name, else by its place
    among the case's checks, so a check whose settings changed is compared
    with what it was), and ``passes_changed`` how many changed from pass to
    fail or back (``now_pass`` of them now pass). ``checks_changed`` names the
    cases whose checks differ from the run's; ``left_out`` counts the suite's
    cases that the run did not select. ``judged_again`` and ``judged_reused``
    count the judged verdicts that called the judge and those kept because
    the judge and its prompt were the same. ``shard`` is ``(index, count)`` when the
    run is one shard of a run (``run --shard I/N``).
    """

    out: str
    samples: int
    rescored: int
    verdicts_changed: int
    checks_changed: tuple[str, ...]
    passes_changed: int = 0
    now_pass: int = 0
    left_out: int = 0
    judged_again: int = 0
    judged_reused: int = 0
    shard: tuple[int, int] | None = None

    def __str__(self) -> str:
        n = len(self.checks_changed)
        changed = (
            f"the checks changed in {n} case{'s' if n != 1 else ''}"
            if n
            else "no case's checks changed"
        )
        took = (
            f"the run is shard {self.shard[0]}/{self.shard[1]}"
            if self.shard
            else "the run selected its cases"
        )
        selection = (
            f" ({took}; {self.left_out} other case"
            f"{'s' if self.left_out != 1 else ''} of the suite left out)"
            if self.left_out
            else ""
        )
        judged = ""
        if self.judged_again or self.judged_reused:
            judged = (
                f"; judged verdicts: {self.judged_reused} kept (same rubric, answer and judge), "
                f"{self.judged_again} judged again"
            )
        flips = ""
        if self.passes_changed:
            now_fail = self.passes_changed - self.now_pass
            flips = f" ({self.now_pass} now pass, {now_fail} now fail)"
        return (
            f"rescored {self.rescored} of {self.samples} samples without calling a model"
            f"{selection}; {changed}{judged}.\n"
            f"{_samples(self.verdicts_changed)} changed a check's status; "
            f"{_samples(self.passes_changed)} changed pass/fail{flips}. Written to {self.out}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "samples": self.samples,
            "rescored": self.rescored,
            "verdicts_changed": self.verdicts_changed,
            "passes_changed": self.passes_changed,
            "now_pass": self.now_pass,
            "now_fail": self.passes_changed - self.now_pass,
            "checks_changed": list(self.checks_changed),
            "left_out": self.left_out,
            "judged_again": self.judged_again,
            "judged_reused": self.judged_reused,
        }


def _samples(n: int) -> str:
    return f"{n} sample{'s' if n != 1 else ''}"


def _input_of(case: Mapping[str, Any]) -> dict[str, Any]:
    """The case's fields that the model was given; an empty value (no fixtures, not
    holdout) counts as absent, so a manifest from a version that did not write the
    field compares equal."""
    return {
        k: v
        for k, v in case.items()
        if k not in SCORING_FIELDS and v not in (None, False, "", [], {})
    }


def _check_same_inputs(
    run: Results, new_cases: Mapping[str, Mapping[str, Any]], suite_path: str | None = None
) -> list[str]:
    """Refuse when the run's cases and the suite's differ in anything but scoring;
    return the ids of the cases whose checks changed. ``new_cases`` are the
    suite's cases that the run's selection keeps; the refusal names the suite's
    file (``suite_path``) and the run's."""
    suite = f"suite {suite_path}" if suite_path else "suite"
    ran = f" in {run.path}" if run.path else ""
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
            f"{suite}: its cases are not those of the run{ran} ("
            + "; ".join(parts)
            + "); rescore applies new checks to the same cases (run the new cases, or extend "
            "the run)"
        )
    for case_id, case in old.items():
        a, b = _input_of(case), _input_of(new_cases[case_id])
        if canonical_json(a) != canonical_json(b):
            fields = sorted(
                k for k in set(a) | set(b) if canonical_json(a.get(k)) != canonical_json(b.get(k))
            )
            raise InvalidArgument(
                f"{suite}: case {case_id!r} changed its {', '.join(fields)} since the run{ran}; "
                "the stored answers answer the old one, so only checks may change when "
                "rescoring (run it again)"
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
    record: Mapping[str, Any],
    checks: Any,
    needs_trace: Callable[[Any], bool],
    *,
    reuse: bool,
    judged: dict[str, int],
    alarm: Alarm | None = None,
) -> dict[str, Any]:
    """The record with its verdicts from ``checks``; unmeasured when a judge fails.
    A check that is not judged is bounded by ``alarm`` (the run's timeout), as the
    run bounded it.

    With ``reuse``, a judged check whose prompt (rubric and stored answer) is
    the one an earlier verdict of the record was given keeps that verdict
    instead of calling the judge; ``judged`` counts ``"again"`` and ``"reused"``.
    """
    from ..running._judge import JudgedCheck
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
    earlier = _judged_verdicts(record) if reuse else {}
    verdicts = []
    for check, axis, name in checks:
        subject = trace if needs_trace(check) else answer
        if isinstance(check, JudgedCheck) and isinstance(answer, str) and answer.strip():
            kept = earlier.get(check.prompt(answer))
            if kept is not None:
                verdicts.append({**kept, "check": name, "axis": axis})
                judged["reused"] += 1
                continue
            if isinstance(check.judge, _RunsJudge):
                check.judge.refuse(check, record)
            judged["again"] += 1
        if subject is None and needs_trace(check):
            verdict = Verdict.failed(f"{INSPECTION_FAILURE}: no trace is stored")
        else:
            try:
                bound = None if isinstance(check, JudgedCheck) else alarm
                verdict = run_check(check, subject, alarm=bound)
            except (TimeoutError, ProviderError) as exc:  # a judge that could not answer
                out.update(
                    status="unmeasured", reason=f"the check {name} could not be scored: {exc}"
                )
                out["checks"] = []
                return out
        # A judged verdict keeps the judge's prompt and reply, to be reused next time.
        verdicts.append(to_record(verdict_record(name, axis, verdict)))
    out["checks"] = verdicts
    return out


def _rescore_sample_score(record: dict[str, Any], checks: Any, weights: Any, rule: str) -> None:
    """The record's ``score`` made again from its new verdicts, as the engine makes it
    (the suite's rule, the checks' weights); removed when the new checks give none."""
    from msgspec import UNSET

    from ..running._graded import record_score

    status = str(record.get("status"))
    # a completed record's verdicts are one per check, in order (_score_sample)
    score = record_score(record.get("checks") or [], checks, status, weights=weights, rule=rule)
    if score is UNSET:
        record.pop("score", None)
    else:
        record["score"] = score


def _judged_verdicts(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The record's judged verdicts by the prompt their judge was given."""
    out = {}
    for c in record.get("checks") or ():
        judge = c.get("judge") if isinstance(c, Mapping) else None
        if isinstance(judge, Mapping) and isinstance(judge.get("prompt"), str):
            out.setdefault(judge["prompt"], dict(c))
    return out


def _statuses(record: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    return [
        (c.get("check"), c.get("status"))
        for c in record.get("checks") or []
        if isinstance(c, Mapping)
    ]


def _status_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a check's status differs between two records of one sample.

    Each new verdict is matched with the earlier verdict of the same check
    name; the verdicts left over on both sides (a check whose settings, and so
    its name, changed) are matched in the order the case lists them. A check
    added or removed is a change.
    """
    before, after = _statuses(old), _statuses(new)
    if before == after:
        return False
    left = list(before)
    unmatched = []
    for name, status in after:
        for i, (was, earlier) in enumerate(left):
            if was == name:
                if earlier != status:
                    return True
                del left[i]
                break
        else:
            unmatched.append(status)
    if len(unmatched) != len(left):
        return True
    return any(a != b for a, (_, b) in zip(unmatched, left, strict=True))


def _passed(record: Mapping[str, Any]) -> bool | None:
    from ..results._file import sample_passed

    try:
        return sample_passed(record)
    except InvalidArgument:
        return None


class _RunsJudge:
    """The judge of a rescore given none: the run's own, whose stored verdicts are
    reused; a judged check that would need a new verdict is refused."""

    def __call__(self, prompt: str) -> str:  # never called: refuse() comes first
        raise InvalidArgument("judge: give --judge SPEC (judge=) to judge again")

    @staticmethod
    def refuse(check: Any, record: Mapping[str, Any]) -> None:
        raise InvalidArgument(
            f"judge: case {record.get('case')!r}: the check {check.name} needs a new "
            "verdict (its rubric is not the one the run's judge was given, or the run kept "
            "no judge prompt): give --judge SPEC (judge=) to judge it"
        )


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
        added or removed (say which), or ``out`` exists (without ``force``);
        when the file was imported from another tool's log (it records no
        prompts).

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
    refuse_imported(
        run,
        run.path or "results",
        "rescored",
        ", it records no prompts to compare with the suite's",
    )
    described: dict[str, Any] | None = None
    recorded = run.manifest.get("judge")
    if isinstance(judge, str):
        from ..running._judge_spec import judge_from_spec

        judge, described = judge_from_spec(judge)
        reuse = isinstance(recorded, Mapping) and canonical_json(recorded) == canonical_json(
            described
        )
    elif judge is not None:
        if not callable(judge):
            raise InvalidArgument(f"judge={judge!r} must be a callable or a judge spec")
        name = getattr(judge, "__qualname__", None) or type(judge).__qualname__
        described = {"spec": None, "kind": "callable", "name": name}
        reuse = False  # a function is not known to be the one that judged the run
    else:
        reuse = isinstance(recorded, Mapping)
        if reuse:
            judge = _RunsJudge()
    try:
        return _rescore(run, suite, out, judge, described, force=force, reuse=reuse)
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
    reuse: bool,
) -> RescoreOutcome:
    from ..running._scoring import checks_of, needs_trace, weights_of
    from ..running._suite import Suite, load_suite
    from ._logs import write_results

    if not isinstance(suite, Suite):
        if not isinstance(suite, str | os.PathLike):
            raise InvalidArgument(f"suite={suite!r} must be a Suite, a suite file or a name")
        suite = load_suite(suite, judge=judge)
    include_holdout = bool(run.manifest.get("include_holdout"))
    cases = {c.id: c for c in suite.select(include_holdout=include_holdout)}
    left_out = 0
    shard = shard_of(run, run.path or "the results") if is_shard(run) else None
    if run.manifest.get("selection") or shard is not None:
        # The run took part of its suite (--case, --tag, --limit, or one shard of
        # it): its cases are taken from the edited suite, the others left out.
        listed = run.manifest.get("cases")
        ran = {c.get("id") for c in listed if isinstance(c, Mapping)} if listed else set()
        left_out = sum(1 for i in cases if i not in ran)
        if shard is not None and not run.manifest.get("selection"):
            cases = _shard_share(run, shard, cases, ran)
        else:
            cases = {i: c for i, c in cases.items() if i in ran}
    changed = _check_same_inputs(
        run, {i: c.to_dict() for i, c in cases.items()}, getattr(suite, "path", None)
    )
    checks = {case_id: checks_of(case) for case_id, case in cases.items()}
    weights = {case_id: weights_of(case) for case_id, case in cases.items()}
    samples = []
    rescored = differ = flips = now_pass = 0
    judged = {"again": 0, "reused": 0}
    from ..running._checks import scoring_sample
    from ..running._engine import sample_seed

    seed_of = _sample_seeds(run.manifest, sample_seed)
    with Alarm.installed(_check_timeout(run.manifest)) as alarm:
        for record in run.samples:
            case_checks = checks.get(record["case"])
            if case_checks is None:
                # A sample of a case the run's manifest does not have: no check of it to apply.
                where = run.path or "the results"
                raise ResultsFileError(
                    f"{where}: a sample of case {short_repr(record['case'])}, variant "
                    f"{short_repr(record.get('variant'))}, repeat {record.get('repeat')}, which "
                    "the run's manifest does not have; rescore scores the run's own cases only"
                )
            # scored under the sample's seed, as the run scored it, so a judge that
            # draws (the stand-in) draws again what it drew then
            seed = seed_of(record["case"], record["repeat"], record["variant"])
            with scoring_sample(seed):
                new = _score_sample(
                    record, case_checks, needs_trace, reuse=reuse, judged=judged, alarm=alarm
                )
            _rescore_sample_score(new, case_checks, weights[record["case"]], suite.score)
            if record.get("status") == "completed":
                rescored += 1
                differ += _status_changed(record, new)
                was, now = _passed(record), _passed(new)
                if was is not None and now is not None and was != now:
                    flips += 1
                    now_pass += now
            samples.append(new)
    manifest = dict(run.manifest)
    manifest["cases"] = [cases[c["id"]].to_dict() for c in run.manifest["cases"]]
    manifest["suite"] = {
        "name": suite.name,
        "version": suite.version,
        "path": suite.path,
        "sha256": suite.sha256,
    }
    if suite.score != "mean":  # how the samples' scores were made, as a run records it
        manifest["suite"]["score"] = suite.score
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
        manifest["judge"] = described  # else the run's judge, whose verdicts were kept
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
    written = Results(
        run.path, manifest, tuple(samples), summary, run.warnings, run.looks, run.batches
    )
    path = write_results(written, out, force=force)
    return RescoreOutcome(
        path,
        len(samples),
        rescored,
        differ,
        tuple(changed),
        passes_changed=flips,
        now_pass=now_pass,
        left_out=left_out,
        judged_again=judged["again"],
        judged_reused=judged["reused"],
        shard=None if shard is None else shard[:2],
    )


def _check_timeout(manifest: Mapping[str, Any]) -> float:
    """The seconds a check may take: the run's timeout, or the default of a run."""
    from ..running._options import DEFAULT_TIMEOUT_S

    given = manifest.get("timeout_s")
    if isinstance(given, int | float) and not isinstance(given, bool) and given > 0:
        return float(given)
    return float(DEFAULT_TIMEOUT_S)


def _sample_seeds(
    manifest: Mapping[str, Any], sample_seed: Callable[[int, str, int, str], int]
) -> Callable[[str, int, str], int]:
    """``(case, repeat, variant) -> seed``: each sample's seed as its run gave it.

    A merged file's repeats were renumbered after the first part's, and each part
    had its own seed: a sample of a part is scored under that part's seed and its
    repeat in that part. A repeat no part holds (an extension of the merged file)
    has the seed of the manifest, as the extension gave it.
    """
    own = manifest.get("seed")
    own = own if isinstance(own, int) and not isinstance(own, bool) else 0
    spans = [
        (start, stop, seed)
        for _, start, stop, seed in merged_spans(manifest)
        if isinstance(seed, int) and not isinstance(seed, bool)
    ]

    def seed_of(case: str, repeat: int, variant: str) -> int:
        for start, stop, seed in spans:
            if start <= repeat < stop:
                return sample_seed(seed, case, repeat - start, variant)
        return sample_seed(own, case, repeat, variant)

    return seed_of


def _shard_share(
    run: Results, shard: tuple[int, int, int, str], cases: dict[str, Any], ran: set[Any]
) -> dict[str, Any]:
    """The suite's cases that fall to the shard, which must be the shard's own.

    The suite dealt into the run's shards must give this shard the cases it ran,
    out of as many as the whole run had; else cases were added or removed.
    """
    from ..running._shards import shard_cases

    where = run.path or "the results"
    index, count, total, _ = shard
    if len(cases) != total:
        raise InvalidArgument(
            f"{where}: shard {index}/{count} of a run of {total} cases, and the suite has "
            f"{len(cases)} cases; rescore applies new checks to the same cases (run the "
            "new cases, or rescore the merged shards)"
        )
    mine = {c.id for c in shard_cases(list(cases.values()), (index, count))}
    return {i: c for i, c in cases.items() if i in mine or i in ran}
