"""A release policy on a variant's mean score: ``gate --min-score``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument
from ..reading._source import RunSource
from ..reading._views import _check_variant, _variant_names
from ..stats._claims import check_about, claim_words
from ..stats._scores import ScoreInterval, _num, score_mean_ci

__all__ = ["ScoreGateResult", "score_gate"]

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
