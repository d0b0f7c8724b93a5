"""Graded checks: a score in [0, 1] beside pass/fail, and the score of a sample.

- :func:`covers`: the share of terms an answer mentions (whole terms, as
  :func:`~evalstats.running._checks.has_terms` finds them).
- :func:`sample_score`: a sample's score from its checks' scores, as the
  suite declares it (``score: mean | min``), each check weighted.

Any Python check may also return a number in [0, 1]
(:meth:`~evalstats.running._checks.Verdict.of`), or a
:meth:`~evalstats.running._checks.Verdict.scored` verdict on a scale of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidArgument
from ._checks import Check, Verdict, _fold_with_starts, _quoted, _Term, _texts

__all__ = ["SCORE_RULES", "covers", "sample_score"]

#: How a sample's score is made from its checks' scores.
SCORE_RULES = ("mean", "min")


def covers(*terms: str, threshold: float | None = None) -> Check:
    """A graded check: the share of ``terms`` the answer mentions, as a score in [0, 1].

    Each term is found as :func:`~evalstats.running._checks.has_terms` finds it
    (a whole term, case-insensitively). The verdict passes when the share is
    at least ``threshold`` (every term, without one) and carries the share
    as its score. A lexical screen, not a judge of meaning.

    >>> check = covers("refund", "14 days", "receipt")
    >>> v = check("Refunds take 14 days.")
    >>> v.status, round(v.score, 3), v.reason
    ('failed', 0.333, "mentions 1 of 3 terms; not 'refund', 'receipt'")
    >>> covers("refund", "receipt", threshold=0.5)("A refund needs a receipt.").status
    'passed'
    """
    terms = _texts("covers", "terms", terms)
    if threshold is not None:
        Verdict.scored(0.0, threshold=threshold)  # checked at the door: in [0, 1]
    compiled = [_Term(t) for t in terms]

    def fn(answer: str) -> Verdict:
        folded, starts = _fold_with_starts(answer)
        missing = tuple(t.term for t in compiled if not t.found_in(answer, folded, starts))
        share = (len(compiled) - len(missing)) / len(compiled)
        reason = ""
        if missing:
            reason = (
                f"mentions {len(compiled) - len(missing)} of {len(compiled)} terms; "
                f"not {_quoted(missing)}"
            )
        return Verdict.scored(share, threshold=threshold, reason=reason)

    shown = _quoted(terms) + (f", threshold={threshold:g}" if threshold is not None else "")
    check = Check(f"covers({shown})", fn)  # type: ignore[arg-type]
    check.graded = True  # type: ignore[attr-defined]
    return check


def sample_score(
    scores: Sequence[float | None],
    *,
    weights: Sequence[float] | None = None,
    rule: str = "mean",
) -> float | None:
    """A sample's score from its checks' scores (None: that check gave no score).

    ``rule="mean"`` (default, as promptfoo does): the weighted mean of the
    scores given; ``"min"``: the lowest. Checks without a score (pass/fail
    checks, unscored verdicts) are left out, and so are checks of weight 0
    (under either rule); None when none is left. A score off [0, 1] or NaN,
    a weight that is negative, NaN or not a number, weights that are all 0,
    and an unknown rule are refused in one line naming the argument.

    >>> sample_score([0.5, None, 1.0], weights=[1, 5, 3])
    0.875
    >>> sample_score([0.5, 1.0], rule="min")
    0.5
    """
    if rule not in SCORE_RULES:
        raise InvalidArgument(f"score={rule!r} must be 'mean' or 'min'")
    for i, s in enumerate(scores):
        if s is not None and (
            isinstance(s, bool) or not isinstance(s, int | float) or not 0 <= s <= 1
        ):
            raise InvalidArgument(f"scores[{i}]={s!r} must be a number from 0 to 1 or None")
    w = [1.0] * len(scores) if weights is None else _weights(weights, len(scores))
    given = [(s, x) for s, x in zip(scores, w, strict=True) if s is not None and x > 0]
    if not given:
        return None
    if rule == "min":
        return min(s for s, _ in given)
    total = sum(x for _, x in given)
    if not 1e-150 < total < 1e150:  # weights so small or large that products would not keep
        top = max(x for _, x in given)
        given = [(s, x / top) for s, x in given]
        total = sum(x for _, x in given)
    mean = sum(s * x for s, x in given) / total
    # within the scores given, whatever the rounding
    return min(max(mean, min(s for s, _ in given)), max(s for s, _ in given))


def _weights(weights: Any, n: int) -> list[float]:
    """``weights`` checked: one finite number, 0 or more, per score, not all 0."""
    if isinstance(weights, str | bytes) or not isinstance(weights, Sequence):
        raise InvalidArgument(f"weights={weights!r} must be a list of numbers, one per score")
    if len(weights) != n:
        raise InvalidArgument(f"weights has {len(weights)} numbers for {n} scores; give one each")
    out = []
    for i, x in enumerate(weights):
        if isinstance(x, bool) or not isinstance(x, int | float) or not 0 <= x < math.inf:
            raise InvalidArgument(f"weights[{i}]={x!r} must be a finite number, 0 or more")
        out.append(float(x))
    if out and not any(out):
        raise InvalidArgument(
            f"weights={list(weights)!r} are all 0; give at least one a weight above 0"
        )
    return out


def is_graded(check: Any) -> bool:
    """Whether a check is declared graded (it gives a score)."""
    return getattr(check, "graded", False) is True


def record_score(
    verdicts: Sequence[Any],
    checks: Sequence[Any],
    status: str,
    *,
    weights: Sequence[float] | None = None,
    rule: str = "mean",
) -> Any:
    """The ``score`` of a sample record: its checks' score by the suite's rule, or unset.

    ``verdicts`` are the sample's check records (objects or dicts, as a
    results file holds them), ``checks`` its case's ``(check, axis, name)``
    triples, ``weights`` their weights (:func:`~evalstats.running._scoring.weights_of`;
    1 each by default) and ``rule`` the suite's ``score`` (see
    :func:`sample_score`). Unmeasured: unset (its own bucket). An incomplete
    sample scores 0 when its case has a check declared graded (:func:`covers`,
    a scaled judge), as every applicable check fails.
    """
    from msgspec import UNSET

    if status == "unmeasured":
        return UNSET
    if status == "incomplete":
        return 0.0 if any(is_graded(c[0]) for c in checks) else UNSET
    scores = [_score_of(v) for v in verdicts]
    score = sample_score(scores, weights=weights, rule=rule)
    return UNSET if score is None else score


def _score_of(verdict: Any) -> float | None:
    value = verdict.get("score") if isinstance(verdict, dict) else getattr(verdict, "score", None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
