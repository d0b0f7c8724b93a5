"""Records of a results file as the engine writes them: the tests' one factory.

Each function returns the plain dicts a results file holds (what
``read_results`` gives back), built through the record schema
(:mod:`evalstats.results._records`), so that a test's sample has the engine's
fields, in the engine's order, with the values the engine would give the
ones a test leaves out:

* :func:`check`: one check's verdict (``not_inspected`` as the engine marks it);
* :func:`sample`: one sample; by default one check ``x`` that passed or failed;
* :func:`samples`: samples from outcomes ``{variant: {case: [True, False or None]}}``
  (None: unmeasured), repeat by repeat;
* :func:`manifest`: a manifest with a full paired schedule (alternating order);
* :func:`results`: a :class:`~evalstats.results._file.Results` of outcomes;
* :func:`write`: a results file written with plain ``json`` (independent of the writer);
* :func:`scored_pilot`: the score planner's tests' pilot, 12 cases x 3 runs of A and B.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UNSET

from evalstats.results._file import Results
from evalstats.results._records import (
    INSPECTION_FAILURE,
    CheckVerdict,
    Sample,
    Tokens,
    to_record,
)

#: When the factory's samples started and finished.
TIME = "2026-01-01T00:00:00.000+00:00"

_UNSET: Any = object()


def check(
    status: str = "passed",
    name: str | None = "x",
    *,
    axis: str | None = None,
    reason: str | None = "",
    not_inspected: bool | None = None,
    judge_unmeasured: bool | None = None,
    judge: Mapping[str, Any] | None = None,
    judge_tokens: Mapping[str, Any] | None = None,
    judge_model: str | None = None,
    score: float | None = None,
    raw_score: float | None = None,
    scale: Sequence[float] | None = None,
) -> dict[str, Any]:
    """A check verdict as a sample record holds it (``score``, ``raw_score`` and
    ``scale``: a graded check's; ``judge_tokens`` and ``judge_model``: a judged
    check's call to its judge; each set only when given).

    The flags default to what the engine records: on a failure, ``not_inspected``
    (whether its reason starts with ``could not be inspected``); on an unscored
    verdict, ``judge_unmeasured`` false; on the other statuses neither.
    """
    if not_inspected is None and status == "failed":
        not_inspected = (reason or "").startswith(INSPECTION_FAILURE)
    if judge_unmeasured is None and status == "unscored":
        judge_unmeasured = False
    verdict = CheckVerdict(
        check=name,
        axis=axis,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        not_inspected=UNSET if not_inspected is None else not_inspected,
        judge_unmeasured=UNSET if judge_unmeasured is None else judge_unmeasured,
    )
    if judge is not None:
        verdict.judge = dict(judge)
    if judge_tokens is not None:
        verdict.judge_tokens = Tokens(**judge_tokens)
    if judge_model is not None:
        verdict.judge_model = judge_model
    if score is not None:
        verdict.score = float(score)
    if raw_score is not None:
        verdict.raw_score = float(raw_score)
    if scale is not None:
        verdict.scale = [float(x) for x in scale]
    return to_record(verdict)


def sample(
    case: str = "c",
    variant: str = "A",
    repeat: int = 0,
    passed: bool | None = True,
    *,
    status: str | None = None,
    checks: Sequence[Mapping[str, Any]] | None = None,
    name: str = "x",
    axis: str | None = None,
    missed: str = "",
    reason: Any = _UNSET,
    pair: int | None = None,
    position: int = 0,
    prompt: Any = _UNSET,
    answer: Any = _UNSET,
    trace: Any = None,
    latency_s: Any = 0.1,
    attempts: int = 1,
    tokens: Mapping[str, Any] | None = None,
    model: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A sample record, with ``"type": "sample"`` first.

    ``passed`` None makes an unmeasured sample (no checks, no answer); else
    ``status`` is ``"completed"`` unless given. Without ``checks``, a
    completed sample has one check ``name`` (on ``axis``) that passed or
    failed (its reason then ``missed``), and an incomplete one that check
    failed with nothing to inspect, as the engine records it. ``pair``
    defaults to the repeat and the prompt to ``prompt of <case>``. ``extra``
    fields follow the schema's (a ``workspace``, ``recording_notes``).
    """
    if status is None:
        status = "unmeasured" if passed is None else "completed"
    if reason is _UNSET:
        reason = {
            "completed": None,
            "incomplete": "the task raised ValueError: broken",
            "unmeasured": "no answer after 4 attempts: TransientProviderError: 503",
        }[status]
    if checks is None:
        if status == "unmeasured":
            checks = []
        elif status == "incomplete":
            checks = [check("failed", name, axis=axis, reason=f"{INSPECTION_FAILURE}: {reason}")]
        else:
            checks = [
                check(
                    "passed" if passed else "failed",
                    name,
                    axis=axis,
                    reason="" if passed else missed,
                )
            ]
    if prompt is _UNSET:
        prompt = {"system": None, "messages": [{"role": "user", "content": f"prompt of {case}"}]}
    if answer is _UNSET:
        answer = "ok" if status == "completed" else None
    record = Sample(
        case=case,
        variant=variant,
        repeat=repeat,
        pair=repeat if pair is None else pair,
        position=position,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        prompt=prompt,
        answer=answer,
        trace=trace,
        checks=[],
        latency_s=latency_s,
        attempts=attempts,
        model=model,
        started_at=TIME,
        finished_at=TIME,
    )
    out = {"type": "sample", **to_record(record)}
    out["checks"] = [dict(c) for c in checks]
    out["tokens"] = None if tokens is None else dict(tokens)
    out.update(extra)
    return out


def samples(
    outcomes: Mapping[str, Mapping[str, Sequence[bool | None]]], **fields: Any
) -> list[dict[str, Any]]:
    """The samples of ``{variant: {case: [True, False or None per repeat]}}`` (None:
    unmeasured), variant by variant and case by case; ``fields`` go to :func:`sample`."""
    return [
        sample(case, variant, repeat, ok, **fields)
        for variant, by_case in outcomes.items()
        for case, row in by_case.items()
        for repeat, ok in enumerate(row)
    ]


def manifest(
    cases: list[str], variants: list[str], runs: int, *, sampled: bool = False, **extra: Any
) -> dict[str, Any]:
    """A results-file manifest with a full paired schedule (alternating order);
    ``sampled``: its suite declares its cases sampled at random."""
    schedule = []
    for r in range(runs):
        for i, case in enumerate(cases):
            order = variants if (i + r) % 2 == 0 else variants[::-1]
            for position, v in enumerate(order):
                schedule.append([case, r, r * len(cases) + i, position, v])
    record = {
        "type": "manifest",
        "format": 1,
        "counting_method": "1",
        "suite": {
            "name": "crafted",
            "version": 1,
            "path": "cases/crafted.json",
            "sha256": "0" * 64,
        },
        "cases": [{"id": c, "prompt": f"prompt of {c}", "checks": []} for c in cases],
        "include_holdout": False,
        "variants": [
            {"name": v, "task": {"kind": "python", "name": f"task_{v}"}, "transform": {}}
            for v in variants
        ],
        "runs": runs,
        "schedule": schedule,
        "seed": 0,
        "machine": "fingerprint-1",
    }
    if sampled:
        record["suite"]["sampled"] = True
    record.update(extra)
    return record


def results(
    outcomes: Mapping[str, Mapping[str, Sequence[bool | None]]],
    runs: int | None = None,
    *,
    summary: Mapping[str, Any] | None = None,
    sampled: bool = False,
    **fields: Any,
) -> Results:
    """A finished run of ``outcomes`` (see :func:`samples`) in memory, its manifest
    scheduling ``runs`` repeats (default: the most any case has) of every case
    (``sampled``: its suite declares its cases sampled at random)."""
    variants = list(outcomes)
    cases = list(dict.fromkeys(c for by_case in outcomes.values() for c in by_case))
    if runs is None:
        runs = max(
            (len(row) for by_case in outcomes.values() for row in by_case.values()), default=0
        )
    return Results(
        None,
        manifest(cases, variants, runs, sampled=sampled),
        tuple(samples(outcomes, **fields)),
        dict(summary or {"status": "finished"}),
        (),
    )


def write(path: Any, manifest: dict, samples: list[dict], summary: dict | None = None) -> Any:
    """Write a results file with plain json (independent of the writer under test)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({**manifest, "type": "manifest"}) + "\n")
        for s in samples:
            f.write(json.dumps({"type": "sample", **s}) + "\n")
        if summary is not None:
            f.write(json.dumps({"type": "summary", **summary}) + "\n")
    return path


def scored_pilot(path: Any, *, scored: bool = True) -> Any:
    """Write the score planner's tests' pilot (12 cases x 3 runs of A and B, B's case
    means 0.1 above A's, seeded) to ``path``: each sample's score, and a pass when it
    is above 0.5; without ``scored``, the passes alone."""
    import numpy as np

    rng = np.random.default_rng(0)
    cases = [f"c{i}" for i in range(12)]
    mu = rng.beta(3, 2, size=len(cases))
    drawn = []
    for variant, shift in (("A", 0.0), ("B", 0.1)):
        for i, case in enumerate(cases):
            for r in range(3):
                score = float(np.clip(mu[i] + shift + rng.normal(0, 0.1), 0, 1))
                extra = {"score": score} if scored else {}
                drawn.append(sample(case, variant, r, score > 0.5, **extra))
    write(path, manifest(cases, ["A", "B"], 3), drawn, {"type": "summary", "status": "finished"})
    return path
