"""Mean scores in the report: per variant, about these cases and about cases like these.

Shown only for a run whose samples carry scores (graded checks); a run of
pass/fail checks reports as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..stats._claims import MIN_CASES
from ..stats._scores import ScoreInterval, _num, score_mean_ci

__all__ = ["LevelCounts", "ScoreSummary", "level_counts", "score_lines", "score_summaries"]


@dataclass(frozen=True)
class LevelCounts:
    """How many of one graded check's scores fell at each level of its discrete scale.

    ``counts`` holds ``(level, answers)`` for every level from ``low`` to
    ``high``; ``between`` the raw scores that fell between two levels. The
    share of a level is its count over ``total`` (every score, between ones
    too).
    """

    check: str | None
    low: int
    high: int
    counts: tuple[tuple[int, int], ...]
    between: int = 0

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts) + self.between

    def shares(self) -> tuple[tuple[int, float], ...]:
        """``(level, share of the scores)`` for every level."""
        t = self.total
        return tuple((lv, n / t if t else 0.0) for lv, n in self.counts)

    def text(self) -> str:
        """``1: 3 (8%), 2: 10 (28%), ...`` of ``total``."""
        t = self.total
        parts = [f"{lv}: {n} ({100 * n / t:.0f}%)" for lv, n in self.counts] if t else []
        if self.between:
            parts.append(f"between levels: {self.between} ({100 * self.between / t:.0f}%)")
        return ", ".join(parts) + f" of {t}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``counts`` and ``shares`` keyed by level (as text)."""
        return {
            "check": self.check,
            "scale": [self.low, self.high],
            "counts": {str(lv): n for lv, n in self.counts},
            "shares": {str(lv): x for lv, x in self.shares()},
            "between": self.between,
            "total": self.total,
        }


def level_counts(tally: Any, variant: str) -> tuple[LevelCounts, ...]:
    """The level counts of each of ``variant``'s graded checks on a discrete scale,
    in the order their scales were first seen (see :meth:`Tally.levels`); a
    check most of whose scores fall between the levels is scored on a
    continuous scale, and has none."""
    found: dict[tuple[Any, float, float], dict[int | None, int]] = {}
    for (check, low, high, level), n in tally.levels(variant).items():
        found.setdefault((check, low, high), {})[level] = n
    out = []
    for (check, low, high), by in found.items():
        lo, hi = int(low), int(high)
        if 2 * by.get(None, 0) > sum(by.values()):
            continue
        out.append(
            LevelCounts(
                check,
                lo,
                hi,
                tuple((lv, by.get(lv, 0)) for lv in range(lo, hi + 1)),
                by.get(None, 0),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class ScoreSummary:
    """One variant's mean score over its measured samples that carry a score.

    ``levels``: for graded checks on a discrete scale (a judge's 1-5), the
    share of scores at each level, shown beside the mean (which assumes the
    steps between levels are equal). ``by_case``: each case's scored samples,
    mean, lowest and highest score, in suite order (the per-case distribution).
    """

    variant: str
    samples: int
    cases: int
    these_cases: ScoreInterval
    cases_like_these: ScoreInterval
    levels: tuple[LevelCounts, ...] = ()
    by_case: tuple[tuple[str, int, float, float, float], ...] = ()

    def spread_text(self) -> str:
        """One line of the per-case means: the lowest, the median and the highest."""
        if not self.by_case:
            return ""
        ranked = sorted(self.by_case, key=lambda r: (r[2], r[0]))
        lo, hi = ranked[0], ranked[-1]
        n = len(ranked)
        mid = ranked[n // 2][2] if n % 2 else (ranked[n // 2 - 1][2] + ranked[n // 2][2]) / 2
        return (
            f"per-case means from {_num(lo[2])} ({lo[0]!r}) to {_num(hi[2])} ({hi[0]!r}), "
            f"median {_num(mid)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``levels`` only when some check has a discrete scale)."""
        return {
            "variant": self.variant,
            "samples": self.samples,
            "cases": self.cases,
            "these_cases": self.these_cases.to_dict(),
            "cases_like_these": self.cases_like_these.to_dict(),
            **({"levels": [x.to_dict() for x in self.levels]} if self.levels else {}),
            "by_case": [
                {"case": c, "samples": n, "mean": m, "min": lo, "max": hi}
                for c, n, m, lo, hi in self.by_case
            ],
        }


def _by_case(tally: Any, rows: Sequence[tuple[str, int, float]]) -> tuple:
    """``(case, samples, mean, min, max)`` of each case with a score, in suite order."""
    found: dict[str, list[float]] = {}
    for c, _, x in rows:
        found.setdefault(c, []).append(x)
    order = {c: i for i, c in enumerate(tally.case_ids())}
    return tuple(
        (c, len(xs), sum(xs) / len(xs), min(xs), max(xs))
        for c, xs in sorted(found.items(), key=lambda kv: order.get(kv[0], len(order)))
    )


def score_summaries(tally: Any, variants: Sequence[str], level: float) -> tuple[ScoreSummary, ...]:
    """Each variant's mean score with both claims' intervals (``method="auto"``)."""
    out = []
    for v in variants:
        rows = tally.scores(v)
        if not rows:
            continue
        cases = [c for c, _, _ in rows]
        scores = [s for _, _, s in rows]
        n_cases = len(set(cases))
        out.append(
            ScoreSummary(
                v,
                len(rows),
                n_cases,
                score_mean_ci(scores, cases, about="these_cases", level=level),
                score_mean_ci(scores, cases, about="cases_like_these", level=level, seed=0),
                level_counts(tally, v),
                _by_case(tally, rows),
            )
        )
    return tuple(out)


def score_lines(summaries: Sequence[ScoreSummary], level: float) -> list[str]:
    """The report's lines of mean scores (none when no sample has a score)."""
    if not summaries:
        return []
    pct = f"{100 * level:g}%"
    lines = ["", f"mean scores (0 to 1, {pct} intervals)"]
    for s in summaries:
        lines.append(f"  variant {s.variant}: {s.samples} scored samples of {s.cases} cases")
        lines.append(
            f"    these cases       {s.these_cases}  {s.these_cases.method}: the mean these "
            "cases would score if run again"
        )
        like = s.cases_like_these
        if s.cases < MIN_CASES:
            lines.append(
                f"    cases like these  {like}  with {s.cases} case"
                f"{'s' if s.cases != 1 else ''} little can be said of cases not run"
            )
        else:
            lines.append(
                f"    cases like these  {like}  {like.method}: the mean over cases like these"
            )
        if s.cases > 1:
            lines.append(f"    {s.spread_text()}")
        for lc in s.levels:
            name = "a check" if lc.check is None else repr(lc.check)
            lines.append(f"    levels of {name} ({lc.low} to {lc.high}): {lc.text()}")
    if any(s.levels for s in summaries):
        lines.append(
            "  a mean over a scale of levels assumes equal steps between them (4 is as far "
            "above 3 as 2 is above 1); the shares at each level do not"
        )
    return lines
