"""Release policies on mean scores: ``gate --min-score`` (a variant's mean score
reaches a floor) and ``gate --no-regression-vs NAME --score-margin M`` (its mean
score is shown no more than M below NAME's, paired by case and repeat)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument
from ..reading._source import RunSource
from ..reading._views import _check_variant, _variant_names
from ..stats._claims import check_about, claim_words
from ..stats._score_compare import ScoreNonInferiority
from ..stats._scores import ScoreInterval, _num, score_mean_ci

__all__ = ["ScoreGateResult", "ScoreNoRegression", "score_gate", "score_no_regression"]

_ON = ("estimate", "lower-bound")


@dataclass(frozen=True)
class ScoreGateResult:
    """Whether a variant's mean score reaches ``min_score`` (its estimate or lower bound)."""

    passed: bool
    variant: str
    min_score: float
    on: str
    score: ScoreInterval

    def __str__(self) -> str:
        held = "mean score" if self.on == "estimate" else "lower bound of the mean score"
        value = self.score.estimate if self.on == "estimate" else self.score.low
        word = "passed" if self.passed else "failed"
        return (
            f"gate {word}: {self.variant} {held} {_num(float(value))} "
            f"{'reaches' if self.passed else 'is below'} {_num(self.min_score)} "
            f"(mean score {self.score}, {self.score.method}, {100 * self.score.level:g}%, "
            f"about {claim_words(self.score.about)}, {self.score.runs} scored samples of "
            f"{self.score.cases} cases)"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "passed": self.passed,
            "variant": self.variant,
            "min_score": self.min_score,
            "on": self.on,
            "score": self.score.to_dict(),
        }


def score_gate(
    results: Any,
    *,
    variant: str,
    min_score: float,
    on: str = "estimate",
    about: str | None = None,
    level: float = 0.95,
) -> ScoreGateResult:
    """Pass ``variant`` when its mean score (or the interval's lower bound) reaches ``min_score``.

    ``min_score`` is on the [0, 1] score scale. The mean is over the
    variant's measured samples that carry a score (incomplete ones score 0);
    the interval is :func:`~evalstats.stats._scores.score_mean_ci`'s default
    for the claim ``about`` (these cases unless asked). A run with no scores
    is refused: there is nothing to hold to a score.
    """
    try:
        m = float(min_score)
    except (TypeError, ValueError):
        raise InvalidArgument(f"min_score={min_score!r} must be a number from 0 to 1") from None
    if math.isnan(m) or not 0.0 <= m <= 1.0:
        hint = " (scores are mapped to 0-1)" if m > 1 else ""
        raise InvalidArgument(f"min_score={min_score!r} must be a number from 0 to 1{hint}")
    if on not in _ON:
        raise InvalidArgument(f"on={on!r} must be 'estimate' or 'lower-bound'")
    about = check_about(about) or "these_cases"
    source = RunSource.of(results)
    tally = source.tally()
    _check_variant(variant, _variant_names(tally))
    rows = tally.scores(variant)
    if not rows:
        raise InvalidArgument(
            f"variant {variant!r} has no scored samples: --min-score needs graded checks"
        )
    ci = score_mean_ci(
        [s for _, _, s in rows], [c for c, _, _ in rows], about=about, level=level, seed=0
    )
    value = ci.estimate if on == "estimate" else ci.low
    return ScoreGateResult(bool(value >= m), variant, m, on, ci)


# --- no regression on the mean score: gate --no-regression-vs NAME --score-margin M ---


def _score_margin(value: Any) -> float:
    """A non-inferiority margin on the [0, 1] score scale, above 0 and below 1."""
    try:
        m = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"score_margin={value!r} must be a number above 0 and below 1, such as 0.05"
        ) from None
    if math.isnan(m) or not 0.0 < m < 1.0:
        hint = " (it is on the 0-1 score scale: one step of a 1-5 rubric is 0.25)" if m >= 1 else ""
        raise InvalidArgument(f"score_margin={value!r} must be above 0 and below 1{hint}")
    return m


_NI_HEAD = {True: "not worse", False: "can't tell yet"}


@dataclass(frozen=True)
class ScoreNoRegression:
    """Whether ``variant``'s mean score is shown no more than ``margin`` below ``vs``'s.

    ``primary`` is the non-inferiority of the claim ``about`` (passed exactly
    when the lower limit of the interval for the mean score B - A is above
    ``-margin``, the interval of :func:`~evalstats.stats._score_compare.compare_scores`);
    ``beside`` the other claim's, or None when it cannot be made (fewer than 2
    scored cases).
    """

    passed: bool
    variant: str
    vs: str
    margin: float
    about: str
    about_note: str
    primary: ScoreNonInferiority
    beside: ScoreNonInferiority | None
    pairs: int
    cases: int

    def __str__(self) -> str:
        word = "passed" if self.passed else "failed"
        floor = _num(-self.margin, signed=True)
        low = _num(float(self.primary.difference.low), signed=True)
        lines = [
            f"score gate {word}: {self.variant} against {self.vs}, mean score B - A "
            f"{self.primary.difference}, lower limit {low} "
            f"{'above' if self.passed else 'not above'} {floor} "
            f"({self.primary.difference.method}, {100 * self.primary.level:g}%, about "
            f"{claim_words(self.about)}, {self.pairs} scored pairs of {self.cases} cases)"
            + (f"; {self.about_note}" if self.about_note else "")
        ]
        if self.beside is not None:
            b = self.beside
            lines.append(
                f"  about {claim_words(b.about)} (not the claim decided): "
                f"{_NI_HEAD[b.passed]}: mean score B - A {b.difference}, lower limit "
                f"{_num(float(b.difference.low), signed=True)} "
                f"{'above' if b.passed else 'not above'} {floor} ({b.difference.method})"
            )
        else:
            lines.append(
                f"  about cases like these (not the claim decided): no verdict: needs scored "
                f"pairs from at least 2 cases, got {self.cases}"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "passed": self.passed,
            "variant": self.variant,
            "vs": self.vs,
            "margin": self.margin,
            "about": self.about,
            "about_note": self.about_note,
            "pairs": self.pairs,
            "cases": self.cases,
            "primary": self.primary.to_dict(),
            "beside": None if self.beside is None else self.beside.to_dict(),
        }


def score_no_regression(
    results: Any,
    *,
    variant: str,
    vs: str,
    margin: float,
    about: str | None = None,
    level: float = 0.95,
) -> ScoreNoRegression:
    """Pass ``variant`` when its mean score is shown at most ``margin`` below ``vs``'s.

    The scores are paired by (case, repeat)
    (:func:`~evalstats.reading._views.paired_scores`) and judged by
    :func:`~evalstats.stats._score_compare.score_non_inferiority`: B passes
    when the lower limit of the interval for the mean score B - A is above
    ``-margin``, whose one-sided error is at most (1 - level) / 2, so a B
    truly ``margin`` worse passes at most that often
    (``simulations/score_compare.py`` measures it). ``margin`` is on the
    [0, 1] score scale. ``about``: the claim decided, by default about these
    cases (about cases like these when the suite declares its cases sampled
    at random and there are at least 5 scored cases); the other is shown
    beside it. A run without scores is refused.
    """
    from ..reading._views import paired_scores, suite_sampled
    from ..stats._claims import default_about
    from ..stats._score_compare import score_non_inferiority

    m = _score_margin(margin)
    asked = check_about(about)
    source = RunSource.of(results)
    tally = source.tally()
    names = _variant_names(tally)
    _check_variant(variant, names)
    _check_variant(vs, names, arg="vs")
    if variant == vs:
        raise InvalidArgument(f"variant={variant!r} and vs={vs!r} are the same variant")
    paired = paired_scores(tally, vs, variant)
    if not paired.a:
        raise InvalidArgument(
            f"{variant!r} and {vs!r} have no scored pairs: --score-margin needs graded checks "
            "run by both on the same (case, repeat)"
        )
    note = ""
    if asked is None:
        asked, note = default_about(n_cases=paired.n_cases, sampled=suite_sampled(tally))
    if asked == "cases_like_these" and paired.n_cases < 2:
        raise InvalidArgument(
            f"about='cases_like_these' needs scored pairs from at least 2 cases, got "
            f"{paired.n_cases}; use about='these_cases'"
        )

    def judged(claim: str) -> ScoreNonInferiority:
        return score_non_inferiority(
            paired.a, paired.b, paired.cases, margin=m, about=claim, level=level
        )

    primary = judged(asked)
    other = "cases_like_these" if asked == "these_cases" else "these_cases"
    beside = judged(other) if other == "these_cases" or paired.n_cases >= 2 else None
    return ScoreNoRegression(
        primary.passed,
        variant,
        vs,
        m,
        asked,
        note,
        primary,
        beside,
        len(paired.a),
        paired.n_cases,
    )
