"""``evalstats run --until-decided``: run round by round until the answer is clear.

Each round runs every case once with each of the two variants (the paired,
alternating schedule of :func:`evalstats.running._engine.run`), then looks: the
anytime-valid comparison of :mod:`evalstats.deciding._sequential` is computed on every
pair so far and written to the results file as a ``look`` record. The run
stops at the first look with a verdict, or when the budget of ``max_runs``
rounds is spent. Looking after every round is what the e-processes allow: the
chance of a false verdict stays within 1 - level however many looks.

With ``on="score"`` the look compares the variants' mean scores instead
(:mod:`evalstats.deciding._score_sequential`): for a suite with graded checks,
whose samples carry a score in [0, 1]. Pass/fail is the default, so a suite
with graded checks still decides on pass rates unless asked.

Each look record says when the round started and when the look was taken
(``started_at``, ``at``) and, under ``--batch``, how many batches the round
sent (``batches``): the report's wall time per round.

Resuming continues where the run stopped: a round cut short is completed by
the engine's resume, the e-process is recomputed from the samples (so nothing
is counted twice), and a round that already has its look is not looked at
again. A resume keeps the claim, level, planned effect and what is compared,
and may give another budget: ``max_runs`` no fewer than the rounds already
taken becomes the run's budget, recorded in the manifest (the old and new
under ``until_decided.budgets``), since the anytime-valid comparison stays
valid however many rounds it runs. A resume with nothing left to run (a
verdict reached, the budget spent) still refuses another run's options.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import check_level, check_method, whole_number
from ..errors import InvalidArgument
from ..results._file import ResultsWriter, read_results
from ..stats._claims import check_about, refuses_scope
from ._sequential import (
    SequentialComparison,
    _planned_about,
    _planned_for,
    planned_record,
    sequential_results,
)

__all__ = ["SequentialRun", "run_until_decided"]


@dataclass(frozen=True)
class SequentialRun:
    """How a sequential run ended.

    ``status``: ``"decided"`` (a verdict at the last look), ``"budget"`` (all
    ``max_runs`` rounds ran without one), or the engine's ``"interrupted"`` /
    ``"stopped"``. ``comparison`` is the anytime-valid comparison at the last
    look (None before the first one).
    """

    path: str
    status: str
    rounds: int
    max_runs: int
    comparison: SequentialComparison | None
    reason: str | None = None

    def __str__(self) -> str:
        head = {
            "decided": f"decided after {self.rounds} of at most {self.max_runs} rounds",
            "budget": f"no verdict within the budget of {self.max_runs} rounds",
        }.get(self.status, f"{self.status} after {self.rounds} complete rounds")
        text = f"{self.path}: {head}"
        if self.comparison is not None:
            text += f"\n{self.comparison}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "rounds": self.rounds,
            "max_runs": self.max_runs,
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "reason": self.reason,
        }


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _look_record(
    rounds: int,
    seq: SequentialComparison,
    *,
    started_at: str | None = None,
    batches: int = 0,
) -> dict[str, Any]:
    """What a look records: enough to redraw the trajectory and to recompute it
    (the claim, level and planned effect that chose the e-process, and what
    was compared when not pass rates), and when: ``started_at`` the round's
    start in the session that ran it, ``at`` the look; ``batches`` the batches
    the round sent, when it sent any."""

    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    return {
        "round": rounds,
        "pairs": seq.pairs,
        "about": seq.about,
        "level": seq.level,
        "evalue_b": num(seq.evalue_b),
        "evalue_a": num(seq.evalue_a),
        "estimate": num(float(seq.difference.estimate)),
        "low": float(seq.difference.low),
        "high": float(seq.difference.high),
        "verdict": seq.verdict,
        "decided_at": seq.decided_at,
        "planned_for": planned_record(seq.planned_for),
        **({"on": seq.on} if seq.on != "pass" else {}),
        "started_at": started_at,
        "at": _now(),
        **({"batches": batches} if batches else {}),
    }


def _comparison(res: Any, about: str, level: float, planned: Any, on: str) -> SequentialComparison:
    """The anytime-valid comparison of the file's first two variants, on what was asked."""
    a, b = res.variants()[:2]
    if on == "score":
        from ._score_sequential import sequential_score_results

        return sequential_score_results(res, a, b, about=about, level=level)
    return sequential_results(res, a, b, about=about, level=level, planned_for=planned)


def _variant_count(variants: Any) -> int:
    if isinstance(variants, str | bytes) or not isinstance(variants, Sequence):
        raise InvalidArgument(f"variants={variants!r} must be a list of two variants")
    return len(variants)


@refuses_scope
def run_until_decided(
    suite_or_cases: Any,
    variants: Sequence[Any],
    *,
    max_runs: int,
    out: str | Path,
    about: str = "these_cases",
    level: float = 0.95,
    resume: bool = False,
    planned_for: tuple[float, float] | None = None,
    on: str = "pass",
    **run_options: Any,
) -> SequentialRun:
    """Run two variants round by round until the anytime-valid comparison decides.

    Parameters
    ----------
    suite_or_cases, variants
        As for :func:`evalstats.running._engine.run`; exactly two variants, A then B.
    max_runs : int
        The budget: at most this many runs of each case per variant. A resume
        may raise it, or lower it to no fewer than the rounds already taken;
        the manifest records the change.
    out : path
        The results file (created; with ``resume``, continued).
    about : {"these_cases"}
        The claim of the anytime-valid comparison that decides (see
        :func:`evalstats.deciding._sequential.sequential_compare`): about these
        cases. Every round runs the same cases again, which adds runs but no
        cases, so ``"cases_like_these"`` is refused.
    level : float
        Each direction's false-verdict rate is at most (1 - level) / 2.
    resume : bool
        Continue a sequential run in ``out``.
    planned_for : (p_a, p_b), optional
        The pass rates the budget was planned for (``evalstats plan
        --sequential``): the e-process then concentrates on that effect (see
        :func:`evalstats.deciding._sequential.planned_prior`). Recorded in the manifest
        and in every look; a resume must give the same.
    on : {"pass", "score"}
        What the look compares: pass rates, or mean scores (a suite with
        graded checks; see
        :func:`evalstats.deciding._score_sequential.sequential_score_compare`).
        Recorded in the manifest when ``"score"``; a resume must give the same.
    **run_options
        Passed to :func:`evalstats.running._engine.run` (``concurrency``, ``timeout``,
        ``retries``, ``seed``, ``include_holdout``, ``progress``, ...).

    Returns
    -------
    SequentialRun
    """
    from ..running._engine import run

    max_runs = whole_number("max_runs", max_runs)
    level = check_level(level)
    about = check_about(about) or "these_cases"
    if about == "cases_like_these":
        raise InvalidArgument(
            "about='cases_like_these': each round of a run until decided repeats the same "
            "cases, and repeats add no cases, so it cannot decide about cases like these; "
            "use about='these_cases', or run a larger suite and compare it once"
        )
    planned = _planned_about(_planned_for(planned_for), about)
    on = check_method(on, ("pass", "score"), name="on")
    if on == "score" and planned is not None:
        raise InvalidArgument(
            f"planned_for={planned_for!r} plans the pass/fail e-process; on='score' bets on "
            "the score differences without a planned effect"
        )
    count = _variant_count(variants)
    if count != 2:
        raise InvalidArgument(
            f"until-decided compares exactly two variants (A, then B), got {count}"
        )
    for key in ("runs", "until_decided"):
        if key in run_options:
            raise InvalidArgument(f"{key}= is set round by round; give max_runs instead")
    settings = {
        "max_runs": max_runs,
        "about": about,
        "level": level,
        "planned_for": planned_record(planned),
        **({"on": on} if on != "pass" else {}),
    }
    path = str(out)
    start = 1
    if resume:
        res = read_results(path)
        recorded = res.manifest.get("until_decided")
        if not isinstance(recorded, Mapping):
            raise InvalidArgument(
                f"{path} was not started with --until-decided; resume it without it"
            )
        for key in ("about", "level", "planned_for"):
            # files written before the claim was called "about" recorded it as "scope"
            was = recorded.get(key, recorded.get("scope")) if key == "about" else recorded.get(key)
            if was != settings[key]:
                shown = {"planned_for": planned}.get(key, settings[key])
                raise InvalidArgument(
                    f"{key}={shown!r} differs from the run's {was!r}; "
                    "a sequential run keeps the claim, level and planned effect it started with"
                )
        if recorded.get("on", "pass") != on:
            raise InvalidArgument(
                f"on={on!r} differs from the run's {recorded.get('on', 'pass')!r}; a sequential "
                "run keeps comparing what it started comparing"
            )
        rounds = [int(look["round"]) for look in res.looks if isinstance(look.get("round"), int)]
        start = max(rounds, default=0) + 1
        _check_budget(max_runs, recorded.get("max_runs"), res, start - 1)
        decided = bool(res.looks) and res.looks[-1].get("verdict") != "cant_tell"
        if decided or start > max_runs:
            # Nothing left to run, so no round's resume compares this run with the
            # file's: compare them here (another seed or variants is refused).
            from ..running._engine import check_resumable

            check_resumable(
                suite_or_cases,
                variants,
                runs=max(start - 1, 1),
                out=path,
                until_decided=settings,
                **run_options,
            )
        if decided:
            done = _comparison(res, about, level, planned, on)
            return SequentialRun(path, "decided", start - 1, max_runs, done)
    seq: SequentialComparison | None = None
    batches_before = _batches_submitted(read_results(path).batches) if resume else 0
    for r in range(start, max_runs + 1):
        started_at = _now()
        outcome = run(
            suite_or_cases,
            variants,
            runs=r,
            out=path,
            resume=resume or r > 1,
            until_decided=settings,
            **run_options,
        )
        if outcome.status != "finished":
            return SequentialRun(path, outcome.status, r - 1, max_runs, seq, outcome.reason)
        res = read_results(path)
        seq = _comparison(res, about, level, planned, on)
        sent = _batches_submitted(res.batches) - batches_before
        batches_before += sent
        writer, _ = ResultsWriter.resume(path)
        writer.write_look(_look_record(r, seq, started_at=started_at, batches=sent))
        decided = seq.verdict != "cant_tell"
        if decided or r == max_runs:
            summary = dict(res.summary or {"status": "finished"})
            summary.pop("type", None)
            summary["until_decided"] = {
                "verdict": seq.verdict,
                "rounds": r,
                "pairs": seq.pairs,
                "decided_at": seq.decided_at,
            }
            writer.close(summary)
            return SequentialRun(path, "decided" if decided else "budget", r, max_runs, seq)
        # No summary between rounds: the next round's resume appends after the look.
        writer.close(None)
    # Resumed with nothing left to run (the budget was already spent).
    res = read_results(path)
    last = _comparison(res, about, level, planned, on)
    return SequentialRun(path, "budget", start - 1, max_runs, last)


def _check_budget(max_runs: int, was: Any, res: Any, looked: int) -> None:
    """Refuse a resume's budget below the rounds the run has already taken.

    A larger budget, or a smaller one the run has not reached, is the run's
    budget from now on (the engine records it in the manifest): the
    anytime-valid comparison holds however many rounds it runs. Below the
    rounds already looked at, or begun (a round cut short has samples and no
    look), the file would hold rounds beyond its own budget."""
    repeats = [r for r in (s.get("repeat") for s in res.samples) if isinstance(r, int)]
    taken = max(looked, max(repeats, default=-1) + 1)
    if max_runs < taken:
        rounds = f"{taken} round{'s' * (taken != 1)}"
        raise InvalidArgument(
            f"max_runs={max_runs} is fewer than the {rounds} the run has already taken "
            f"(its budget: max_runs={was!r}); the budget counts all its rounds, so give "
            f"{taken} or more"
        )


def _batches_submitted(records: Sequence[Mapping[str, Any]]) -> int:
    """How many batches the records say were submitted (each batch's id once)."""
    return len({r.get("id") for r in records if r.get("state") == "submitted"})
