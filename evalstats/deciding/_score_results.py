"""Mean scores of a run's variants compared, beside their pass rates.

:func:`compare_result_scores` pairs two variants' scores by (case, repeat)
(:func:`~evalstats.reading._views.paired_scores`) and compares them with
:func:`~evalstats.stats._score_compare.compare_scores`, both claims: about
these cases (the default) and about cases like these, shown beside it. The
verdict is read off the interval printed beside it; the per-case flags are
each case's sign-flip test, Holm-adjusted over the cases.

:func:`score_family` judges several pairs of variants at once, Holm-adjusted
as :mod:`evalstats.deciding._several` does for pass rates. The score
comparisons' verdicts are read off intervals, not p-values, so Holm's steps
are taken on the intervals: at each step every remaining pair whose interval
at level ``1 - alpha / r`` (``r`` pairs remaining) excludes 0 is decided, and
the steps repeat with the pairs left, until a step decides none. With the
p-value of a pair taken as the least ``alpha`` at which its interval excludes
0, this is Holm's step-down procedure (Holm 1979), and each pair's interval
is the one of the step that judged it last, so it agrees with its verdict.

A run whose samples carry no score has no score comparison: its output is
what it was.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
Scandinavian Journal of Statistics 6, 65-70.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._text import align_left, display_width
from ..errors import InvalidArgument
from ..reading._views import PairedScores, paired_scores
from ..stats._claims import MIN_CASES, claim_words, few_cases_note
from ..stats._score_compare import ScoreComparison, compare_scores
from ..stats._scores import _num

__all__ = [
    "ResultsScoreComparison",
    "ScoreFamily",
    "ScorePair",
    "compare_result_scores",
    "score_family",
]

_VERDICT = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}


@dataclass(frozen=True)
class ResultsScoreComparison:
    """Variant B's mean score against A's in one run, paired by (case, repeat).

    Attributes
    ----------
    a, b : str
        The variants; positive differences mean B scores higher.
    about : {"these_cases", "cases_like_these"}
        The claim of ``verdict`` (the one the pass-rate verdict beside it makes).
    these_cases, cases_like_these : ScoreComparison or None
        The comparison about each claim: over the (case, repeat) pairs, and
        over the case mean differences (None with fewer than 2 cases; ``reason``
        says why).
    pairs, cases : int
        Pairs with a score on both sides, and their cases.
    unpaired : int
        Scored samples whose other side has no score (left out).
    level : float
        Confidence level of the intervals.
    """

    a: str
    b: str
    about: str
    these_cases: ScoreComparison
    cases_like_these: ScoreComparison | None
    pairs: int
    cases: int
    unpaired: int
    level: float
    reason: str = ""

    @property
    def primary(self) -> ScoreComparison:
        """The comparison whose verdict is the mean scores' verdict."""
        if self.about == "cases_like_these" and self.cases_like_these is not None:
            return self.cases_like_these
        return self.these_cases

    @property
    def verdict(self) -> str:
        """``b_better``, ``a_better`` or ``cant_tell``, about :attr:`about`."""
        return self.primary.verdict

    def lines(self) -> list[str]:
        """The comparison's lines of text, under the pass rates'."""
        out = [
            "",
            f"mean scores (0 to 1), paired by (case, repeat): {self.pairs} pairs of "
            f"{self.cases} case{'s' if self.cases != 1 else ''}"
            + (
                f"; {self.unpaired} scored samples without a partner left out"
                if self.unpaired
                else ""
            ),
            f"these cases:      {self.these_cases}",
        ]
        if self.cases_like_these is not None:
            line = f"cases like these: {self.cases_like_these}"
            if self.cases < MIN_CASES:
                line += f" ({few_cases_note(self.cases)})"
            out.append(line)
        if self.reason:
            out.append(self.reason)
        out.append(f"score verdict: {_VERDICT[self.verdict]}, about {claim_words(self.about)}")
        rows = self.these_cases.cases
        if rows:
            width = max(4, *(display_width(r.case) for r in rows))
            fewest = min(r.pairs for r in rows)
            reach = ""
            if 2.0 ** (1 - fewest) >= 1.0 - self.level:
                reach = (
                    f"; with {fewest} pair{'s' if fewest != 1 else ''} a case's sign-flip "
                    f"p-value is at least {2.0 ** (1 - fewest):.3g}, so such a case cannot "
                    f"be flagged at {100 * self.level:g}%"
                )
            out.append(
                f"per case: mean score B - A; flags by each case's sign-flip test, "
                f"Holm-adjusted over {len(rows)} case{'s' if len(rows) != 1 else ''}{reach}"
            )
            out.append(f"  {'case':<{width}}  {'A':>5}  {'B':>5}  {'B - A':>6}  adjusted p")
            for r in rows:
                flag = (
                    "  B clearly lower" if r.worse else ("  B clearly higher" if r.better else "")
                )
                out.append(
                    f"  {align_left(r.case, width)}  {_num(r.mean_a):>5}  {_num(r.mean_b):>5}  "
                    f"{_num(r.mean_b - r.mean_a, signed=True):>6}  {r.adjusted_pvalue:10.3g}{flag}"
                )
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "a": self.a,
            "b": self.b,
            "verdict": self.verdict,
            "about": self.about,
            "level": self.level,
            "pairs": self.pairs,
            "cases": self.cases,
            "unpaired": self.unpaired,
            "these_cases": self.these_cases.to_dict(),
            "cases_like_these": None
            if self.cases_like_these is None
            else self.cases_like_these.to_dict(),
            "primary": self.primary.to_dict(),
            "worse_cases": list(self.these_cases.worse_cases),
            "better_cases": list(self.these_cases.better_cases),
            "reason": self.reason,
        }


def _compared(
    paired: PairedScores, a: str, b: str, about: str, level: float
) -> ResultsScoreComparison:
    these = compare_scores(paired.a, paired.b, paired.cases, about="these_cases", level=level)
    order = {c: i for i, c in enumerate(dict.fromkeys(paired.cases))}  # suite order
    these = replace(these, cases=tuple(sorted(these.cases, key=lambda r: order[r.case])))
    like = None
    reason = ""
    if paired.n_cases >= 2:
        like = compare_scores(
            paired.a, paired.b, paired.cases, about="cases_like_these", level=level
        )
    else:
        reason = f"cases like these: needs scored pairs from at least 2 cases, got {paired.n_cases}"
    return ResultsScoreComparison(
        a,
        b,
        about if like is not None else "these_cases",
        these,
        like,
        len(paired.a),
        paired.n_cases,
        paired.unpaired,
        level,
        reason,
    )


def compare_result_scores(
    res: Any, a: str, b: str, *, about: str = "these_cases", level: float = 0.95
) -> ResultsScoreComparison | None:
    """B's mean score against A's in the tally ``res``, or None when no pair has scores.

    ``about`` is the claim of the verdict (the pass-rate comparison's);
    about cases like these it falls back to these cases with fewer than 2
    scored cases. Both claims use ``compare_scores``' default method.
    """
    paired = paired_scores(res, a, b)
    if not paired.a:
        return None
    return _compared(paired, a, b, about, level)


# --- several variants -----------------------------------------------------------------


@dataclass(frozen=True)
class ScorePair:
    """One pair of a family of score comparisons: ``b`` against ``a``.

    ``comparison`` is the pair's comparison at ``level`` (the level of Holm's
    last step that judged it, so that its interval agrees with ``verdict``).
    """

    a: str
    b: str
    comparison: ScoreComparison
    level: float
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "a": self.a,
            "b": self.b,
            "verdict": self.verdict,
            "level": self.level,
            "comparison": self.comparison.to_dict(),
        }


@dataclass(frozen=True)
class ScoreFamily:
    """Mean scores of several pairs of variants, Holm-adjusted (see :func:`score_family`)."""

    pairs: tuple[ScorePair, ...]
    about: str
    level: float
    adjust: str
    means: dict[str, float]

    def lines(self) -> list[str]:
        """The family's lines of text."""
        n = len(self.pairs)
        how = (
            "verdicts not adjusted"
            if self.adjust == "none"
            else f"verdicts Holm-adjusted over {n} comparison{'s' if n != 1 else ''} "
            "(each interval at the level of the step that judged it)"
        )
        out = ["", f"mean scores (0 to 1): {how}, about {claim_words(self.about)}"]
        width = max(display_width(f"{p.b} vs {p.a}") for p in self.pairs)
        out.append(f"  {'comparison':<{width}}  {'B - A':<24} {'level':>6}  verdict")
        for p in self.pairs:
            out.append(
                f"  {align_left(f'{p.b} vs {p.a}', width)}  {str(p.comparison.difference):<24} "
                f"{100 * p.level:>5.3g}%  {_VERDICT[p.verdict]} ({p.comparison.method})"
            )
        shown = ", ".join(f"{v} {_num(m)}" for v, m in self.means.items())
        out.append(f"  mean scores: {shown}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "about": self.about,
            "level": self.level,
            "adjust": self.adjust,
            "means": dict(self.means),
            "pairs": [p.to_dict() for p in self.pairs],
        }


def score_family(
    res: Any,
    wanted: Sequence[tuple[str, str]],
    *,
    about: str = "these_cases",
    level: float = 0.95,
    adjust: str = "holm",
) -> ScoreFamily | None:
    """The score comparisons of the pairs ``wanted``, Holm-adjusted on their intervals.

    None when some pair has no scored pairs (a run without scores). ``adjust``
    ``"none"`` judges every pair at ``level``; any other (``holm``, and
    ``shaffer``, for which Holm's steps are the valid stand-in here) takes
    Holm's steps (see the module's docstring). About cases like these only
    when every pair has scored pairs from at least 2 cases.
    """
    paired = [paired_scores(res, a, b) for a, b in wanted]
    if not wanted or any(not p.a for p in paired):
        return None
    if about == "cases_like_these" and any(p.n_cases < 2 for p in paired):
        about = "these_cases"
    alpha = 1.0 - level

    def judged(i: int, at: float) -> ScoreComparison:
        p = paired[i]
        return compare_scores(p.a, p.b, p.cases, about=about, level=at)

    m = len(wanted)
    if adjust != "none" and 1.0 - alpha / m > 0.9999:
        raise InvalidArgument(
            f"{m} score comparisons at level={level:g}: Holm's first step would need a "
            "level above 0.9999; compare fewer variants or use adjust='none'"
        )
    results: dict[int, tuple[ScoreComparison, float]] = {}
    if adjust == "none":
        results = {i: (judged(i, level), level) for i in range(m)}
    else:
        remaining = list(range(m))
        while remaining:
            at = 1.0 - alpha / len(remaining)
            step = {i: judged(i, at) for i in remaining}
            decided = [i for i in remaining if step[i].verdict != "cant_tell"]
            for i in remaining:
                results[i] = (step[i], at)
            if not decided:
                break
            remaining = [i for i in remaining if i not in decided]
    pairs = tuple(
        ScorePair(a, b, results[i][0], results[i][1], results[i][0].verdict)
        for i, (a, b) in enumerate(wanted)
    )
    means: dict[str, float] = {}
    for v in dict.fromkeys(x for ab in wanted for x in ab):
        rows = res.scores(v)
        means[v] = sum(s for _, _, s in rows) / len(rows) if rows else float("nan")
    return ScoreFamily(pairs, about, level, adjust, means)
