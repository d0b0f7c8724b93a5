"""Mean scores in the report: per variant, about these cases and about cases like these.

Shown only for a run whose samples carry scores (graded checks); a run of
pass/fail checks reports as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..stats._claims import MIN_CASES
from ..stats._scores import ScoreInterval, score_mean_ci

__all__ = ["ScoreSummary", "score_lines", "score_summaries"]


@dataclass(frozen=True)
class ScoreSummary:
    """One variant's mean score over its measured samples that carry a score."""

    variant: str
    samples: int
    cases: int
    these_cases: ScoreInterval
    cases_like_these: ScoreInterval

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "variant": self.variant,
            "samples": self.samples,
            "cases": self.cases,
            "these_cases": self.these_cases.to_dict(),
            "cases_like_these": self.cases_like_these.to_dict(),
        }


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
    return lines
