"""Scoring a sample: a case's checks, each one's verdict as the record keeps it.

Shared by the engine, which scores answers as they arrive, and by ``rescore``,
which scores stored answers again: the checks of a case (its own, then its
required actions), which of them need the trace or may block, and the verdict
records they give (:class:`~evalstats.results._records.CheckVerdict`, each
saying whether it had nothing to inspect and whether its judge gave no verdict).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from ..results._records import CheckVerdict, Tokens
from ._checks import INSPECTION_FAILURE, Verdict, check_name

__all__ = [
    "JUDGE_UNMEASURED",
    "checks_of",
    "is_judged",
    "judge_unmeasured",
    "may_block",
    "needs_trace",
    "not_inspected",
    "verdict_record",
    "weights_of",
]


def checks_of(case: Any) -> tuple[tuple[Callable[[Any], Any], str | None, str], ...]:
    """``(check, axis, name)`` of each check of a case (CaseCheck or (check, axis) pairs).

    The case's required actions follow its own checks, as checks with axis
    ``"action"`` scored on the sample's tool-call trace.
    """
    out = []
    for c in case.checks:
        if isinstance(c, tuple):
            check, axis = c
            out.append((check, axis, check_name(check)))
        else:
            out.append((c.check, c.axis, getattr(c, "name", None) or check_name(c.check)))
    actions = getattr(case, "required_actions", None) or ()
    if actions:
        from ._traces import required_action_from_spec

        for spec in actions:
            action = required_action_from_spec(spec)
            out.append((action, "action", action.name))
    return tuple(out)


def weights_of(case: Any) -> tuple[float, ...]:
    """The weight of each check of a case in its sample's score, as :func:`checks_of`
    lists them: a :class:`~evalstats.running._suite.CaseCheck`'s ``weight``, else 1
    (a ``(check, axis)`` pair, a required action, which gives no score)."""
    out = [float(getattr(c, "weight", 1.0)) for c in case.checks]
    out += [1.0] * len(getattr(case, "required_actions", None) or ())
    return tuple(out)


def needs_trace(check: Callable[[Any], Any]) -> bool:
    """Whether a check is scored on the tool-call trace instead of the answer."""
    return getattr(check, "needs_trace", False) is True


def may_block(check: Callable[[Any], Any]) -> bool:
    """Whether a check calls a model (and so runs in a worker thread)."""
    from ._judge import JudgedCheck

    return isinstance(check, JudgedCheck) or bool(getattr(check, "blocking", False))


#: The reason of a judged check whose judge gave no verdict after retries.
JUDGE_UNMEASURED = "the judge gave no verdict"


def is_judged(check: Callable[[Any], Any]) -> bool:
    from ._judge import JudgedCheck

    return isinstance(check, JudgedCheck)


def verdict_record(
    name: str, axis: str | None, verdict: Verdict, *, evidence: bool = True
) -> CheckVerdict:
    """One check's verdict as a sample record keeps it; with ``evidence``, a judged
    check keeps the judge's prompt and raw reply, so that the verdict can be audited."""
    kept = getattr(verdict, "evidence", None) if evidence else None
    status = verdict.status
    return CheckVerdict(
        check=name,
        axis=axis,
        status=status,
        reason=verdict.reason,
        # each flag where it can be true (see evalstats.results._records)
        not_inspected=verdict.not_inspected if status == "failed" else UNSET,
        judge_unmeasured=False if status == "unscored" else UNSET,
        judge=dict(kept) if kept else UNSET,
        # a graded check's score, as given and mapped (see Verdict.scored)
        score=verdict.score if getattr(verdict, "score", None) is not None else UNSET,
        raw_score=verdict.raw_score if getattr(verdict, "raw_score", None) is not None else UNSET,
        scale=list(verdict.scale) if getattr(verdict, "scale", None) is not None else UNSET,
        # what the judge's model call took, for the cost (kept with or without evidence)
        judge_tokens=_judge_tokens(getattr(verdict, "judge_tokens", None)),
        judge_model=_judge_model(getattr(verdict, "judge_model", None)),
    )


def _judge_tokens(tokens: Any) -> Tokens | Any:
    """A judge call's token counts as the record keeps them (the providers read them
    from their replies' usage), or unset when unknown or not counts the schema holds."""
    if not isinstance(tokens, Mapping):
        return UNSET
    try:
        found = msgspec.convert(
            {"input": tokens.get("input"), "output": tokens.get("output")}, Tokens
        )
    except msgspec.ValidationError:
        return UNSET
    return UNSET if found.input is None and found.output is None else found


def _judge_model(model: Any) -> str | Any:
    return model if isinstance(model, str) and model else UNSET


def judge_unmeasured(name: str, axis: str | None, why: str) -> CheckVerdict:
    """A judged check whose judge gave no verdict after retries: unscored, and marked."""
    return CheckVerdict(
        check=name,
        axis=axis,
        status="unscored",
        reason=f"{JUDGE_UNMEASURED}: {why}",
        judge_unmeasured=True,
    )


def not_inspected(
    checks: Sequence[tuple[Callable[[Any], Any], str | None, str]], why: str
) -> list[CheckVerdict]:
    """Every check failed as not inspected, for an incomplete sample."""
    failed = f"{INSPECTION_FAILURE}: {why}"
    return [
        CheckVerdict(check=name, axis=axis, status="failed", reason=failed, not_inspected=True)
        for _, axis, name in checks
    ]
