"""More than two variants of one run compared, adjusted for multiplicity.

Every variant against a baseline (``baseline="old"``), or every pair
(``all_pairs=True``), each pair by :func:`~evalstats.deciding._compare_results.compare_results`
(paired by (case, repeat) when the schedule allows it), with the p-values and
the verdicts adjusted for the number of comparisons: Holm's step-down method
by default, Shaffer's for all pairs (which uses that not every combination of
equalities between variants is possible), or none. Every verdict makes one
claim, as ``compare_results`` does by default: about these cases (the paired
score test, Tango's), or about cases like these (each pair's clustered test,
whose p-value agrees with its interval; see
:mod:`evalstats.stats._clustered_pvalues`) when the suite declares its cases
sampled at random and every pair is paired over at least 5 cases. The ranking
by the other claim is given beside it. When the samples carry scores, the
same pairs' mean scores are compared beside, Holm-adjusted on their intervals
(:func:`~evalstats.deciding._score_results.score_family`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .._terminal import lines_text
from .._text import align_left, display_width
from .._validate import check_level, check_method
from ..errors import InvalidArgument
from ..reading._views import (
    _case_ids,
    _check_variant,
    _results,
    _variant_names,
)
from ..stats._claims import check_about, claim_words, refuses_scope
from ..stats._intervals import _pct
from ._score_results import ScoreFamily, score_family

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..stats._compare import Comparison

__all__ = ["PairComparison", "MultipleComparison", "compare_variants", "shaffer_limits"]

#: Multiplicity adjustments of compare_variants.
ADJUSTMENTS = ("holm", "shaffer", "none")
_NAMES = {"holm": "Holm", "shaffer": "Shaffer", "none": "no"}
_TESTS = {"mcnemar": "the paired score test (Tango)", "ztest": "the z test"}


@lru_cache(maxsize=64)
def _possible_true(k: int) -> frozenset[int]:
    """How many of the k (k - 1) / 2 pairwise equalities can hold at once.

    Equal variants form groups; a partition of k variants into groups of
    sizes n_1, n_2, ... makes sum C(n_i, 2) equalities true (Shaffer 1986).
    """
    if k <= 1:
        return frozenset({0})
    out = set()
    # the group holding the first variant has size s; the rest are partitioned
    for s in range(1, k + 1):
        for rest in _possible_true(k - s):
            out.add(s * (s - 1) // 2 + rest)
    return frozenset(out)


def shaffer_limits(variants: int) -> list[int]:
    """Shaffer's multipliers t_1, ..., t_m for all pairwise comparisons of k variants.

    At step j (the j-th smallest p-value, the j - 1 smaller ones rejected),
    t_j is the largest number of equalities that can still all be true: the
    largest attainable number of true hypotheses that is at most m - j + 1.
    Holm uses m - j + 1 itself.

    References
    ----------
    Shaffer, J. P. (1986). Modified sequentially rejective multiple test
    procedures. JASA 81, 826-831 (procedure S1).

    Examples
    --------
    >>> shaffer_limits(4)  # Garcia & Herrera (2008), JMLR 9, section 2.2
    [6, 3, 3, 3, 2, 1]
    """
    k = int(variants)
    m = k * (k - 1) // 2
    attainable = _possible_true(k)
    return [max(t for t in attainable if t <= m - j) for j in range(m)]


def _adjust(pvalues: list[float], method: str, variants: int, all_pairs: bool) -> np.ndarray:
    from ..stats._compare import adjust_pvalues

    p = np.asarray(pvalues, dtype=float)
    if method != "shaffer" or not all_pairs:
        # Shaffer's multipliers for comparisons with one baseline are Holm's:
        # any combination of them can be true at once.
        return adjust_pvalues(p, method="none" if method == "none" else "holm")
    limits = np.asarray(shaffer_limits(variants), dtype=float)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p[order] * limits), 1.0)
    out = np.empty_like(p)
    out[order] = stepped
    return out


@dataclass(frozen=True)
class PairComparison:
    """One pair of a multi-variant comparison: ``b`` against ``a``.

    ``comparison`` is the pair's own comparison (its p-value and verdict
    unadjusted); ``adjusted_pvalue`` and ``verdict`` are adjusted for the
    number of comparisons.
    """

    a: str
    b: str
    comparison: Comparison
    adjusted_pvalue: float
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "verdict": self.verdict,
            "pvalue": self.comparison.pvalue,
            "adjusted_pvalue": None if math.isnan(self.adjusted_pvalue) else self.adjusted_pvalue,
            "comparison": self.comparison.to_dict(),
        }


@dataclass(frozen=True)
class MultipleComparison:
    """Several variants of one run compared, adjusted for multiplicity.

    Attributes
    ----------
    pairs : tuple of PairComparison
        One per comparison: each other variant against ``baseline``, or every
        pair (A the earlier variant of the run).
    baseline : str or None
        The baseline, or None for all pairs.
    adjust : {"holm", "shaffer", "none"}
        How p-values and verdicts are adjusted.
    level : float
        Confidence level; a pair's verdict is decided when its adjusted
        p-value is below ``1 - level``.
    rates : dict
        Each variant's pass rate (pooled over measured samples).
    about : {"these_cases", "cases_like_these"}
        The claim of every verdict: about cases like these (each pair's
        clustered test) or about these cases (the paired score test when
        paired).
    about_note : str
        Why the default claim is the one made (the suite not declared
        sampled, too few cases, or not paired), or that the cases are too few
        for the claim asked for; empty otherwise.
    beside : str
        The ranking by the other claim, or why it has none; it decides
        nothing.
    scores : ScoreFamily or None
        The same pairs' mean scores compared, Holm-adjusted on their
        intervals (:func:`~evalstats.deciding._score_results.score_family`),
        when the samples carry scores; None otherwise.
    """

    pairs: tuple[PairComparison, ...]
    baseline: str | None
    adjust: str
    level: float
    rates: dict[str, float]
    about: str = "these_cases"
    about_note: str = ""
    beside: str = ""
    scores: ScoreFamily | None = None

    def _about(self) -> str:
        return f"about {claim_words(self.about)}"

    def _tests(self) -> str:
        """The tests whose p-values were adjusted, as the pairs used them."""
        used: list[str] = []
        for p in self.pairs:
            c = p.comparison
            name = _TESTS.get(c.method, f"the {c.method} test")
            if c.method == "clustered":
                inner = str(getattr(c.difference, "method", ""))
                kind = "betting" if inner == "betting" else f"{inner.upper()} t"
                name = f"the clustered {kind} test"
            if name not in used:
                used.append(name)
        return " and ".join(used)

    def _adjusted(self) -> str:
        return "unadjusted" if self.adjust == "none" else f"{_NAMES[self.adjust]}-adjusted"

    def adjustment_text(self) -> str:
        n = len(self.pairs)
        noun = "comparison" if n == 1 else "comparisons"
        how = (
            f"p-values not adjusted for the {n} {noun}"
            if self.adjust == "none"
            else f"p-values and verdicts {_NAMES[self.adjust]}-adjusted over {n} {noun}"
        )
        text = f"{how}, {self._about()} (p-values of {self._tests()}; intervals unadjusted)"
        if self.about_note:
            text += f"; {self.about_note}"
        return text

    def ranking(self) -> str:
        """One line: variants by pass rate, with the adjusted verdicts between them."""
        order = sorted(self.rates, key=lambda v: -self.rates[v])
        verdicts = {}
        for p in self.pairs:
            verdicts[(p.a, p.b)] = p.verdict
            flip = {"b_better": "a_better", "a_better": "b_better"}.get(p.verdict, p.verdict)
            verdicts[(p.b, p.a)] = flip
        about = self._about()
        if self.about_note:
            about += f": {self.about_note}"
        if self.baseline is not None:
            parts = []
            for v in order:
                if v == self.baseline:
                    continue
                said = verdicts[(self.baseline, v)]
                word = {"b_better": "better", "a_better": "worse"}.get(said, "can't tell")
                parts.append(f"{v} {_pct(self.rates[v])} {word}")
            return (
                f"ranking against {self.baseline} {_pct(self.rates[self.baseline])} "
                f"({self._adjusted()}, {about}): " + ", ".join(parts)
            )
        text = f"{order[0]} {_pct(self.rates[order[0]])}"
        for hi, lo in zip(order, order[1:], strict=False):
            sign = ">" if verdicts[(lo, hi)] == "b_better" else "~"
            text += f" {sign} {lo} {_pct(self.rates[lo])}"
        return f"ranking ({self._adjusted()}, {about}; '>' clearly better, '~' can't tell): " + text

    def __str__(self) -> str:
        lines = [self.adjustment_text()]
        width = max(display_width(f"{p.b} vs {p.a}") for p in self.pairs)
        lines.append(f"  {'comparison':<{width}}  {'B - A':<26} {'p':>8} {'adjusted':>8}  verdict")
        for p in self.pairs:
            c = p.comparison
            verdict = {"b_better": "B better", "a_better": "A better"}.get(p.verdict, "can't tell")
            raw = "n/a" if c.pvalue is None else f"{c.pvalue:.3g}"
            adj = "n/a" if math.isnan(p.adjusted_pvalue) else f"{p.adjusted_pvalue:.3g}"
            lines.append(
                f"  {align_left(f'{p.b} vs {p.a}', width)}  {str(c.difference):<26} {raw:>8} "
                f"{adj:>8}  {verdict} ({c.test_name})"
            )
        lines.append(self.ranking())
        if self.beside:
            lines.append(f"beside: {self.beside}")
        if self.scores is not None:
            lines += self.scores.lines()
        return lines_text(lines)  # a name holding a newline cannot forge a line

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "adjust": self.adjust,
            "level": self.level,
            "about": self.about,
            "about_note": self.about_note,
            "rates": dict(self.rates),
            "pairs": [p.to_dict() for p in self.pairs],
            "ranking": self.ranking(),
            "beside": self.beside,
            "summary": str(self),
            **({"scores": self.scores.to_dict()} if self.scores is not None else {}),
        }


@refuses_scope
def compare_variants(
    results: Any,
    *,
    baseline: str | None = None,
    all_pairs: bool = False,
    adjust: str = "holm",
    method: str | None = None,
    level: float = 0.95,
    about: str | None = None,
) -> MultipleComparison:
    """Compare three or more variants of one run, adjusted for multiplicity.

    Give ``baseline`` to compare every other variant with it, or
    ``all_pairs=True`` to compare every pair. Each pair is compared by
    :func:`~evalstats.deciding._compare_results.compare_results`, and every pair's verdict
    makes the same claim (``about``). The p-values are adjusted by
    ``adjust``: Holm's step-down method (default), Shaffer's (for all pairs,
    whose equalities constrain one another; with a baseline it is Holm's), or
    none; a pair's verdict is "B better" or "A better" only when its adjusted
    p-value is below ``1 - level``, in the direction of its estimate.

    Parameters
    ----------
    results : Results or path
    baseline : str, optional
        The variant every other is compared with.
    all_pairs : bool
        Compare every pair instead.
    adjust : {"holm", "shaffer", "none"}
    method : str, optional
        The comparison method, as in ``compare_results``; it implies the
        claim. A comparison without a p-value, such as Newcombe's interval on
        unpaired runs, is replaced by the z test on the same counts.
    level : float
    about : {"these_cases", "cases_like_these"}, optional
        The claim of the verdicts. ``"cases_like_these"``: each
        pair by the clustered comparison, whose p-value is the test that
        agrees with its interval
        (:func:`~evalstats.stats._clustered_pvalues.clustered_paired_pvalue`: the
        betting capital's, at every number of cases); it needs
        outcomes paired over at least 2 cases. ``"these_cases"``: the paired
        score test (Tango's), or the z test (unpaired). By default as in
        ``compare_results``: ``"these_cases"``, unless the suite declares its
        cases sampled at random and every pair is paired over at least 5
        cases; ``about_note`` says why, and ``beside`` ranks by the other claim.

    Returns
    -------
    MultipleComparison

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scandinavian Journal of Statistics 6, 65-70.
    Shaffer, J. P. (1986). Modified sequentially rejective multiple test
    procedures. JASA 81, 826-831.
    """
    from ._compare_results import compare_results

    level = check_level(level)
    adjust = check_method(adjust, ADJUSTMENTS, name="adjust")
    about = check_about(about)
    if not isinstance(all_pairs, bool):
        raise InvalidArgument(f"all_pairs={all_pairs!r} must be True or False")
    res = _results(results)
    names = _variant_names(res)
    if (baseline is None) == (not all_pairs):
        raise InvalidArgument(
            f"baseline={baseline!r} and all_pairs={all_pairs!r}: give a baseline or "
            "all_pairs=True (one of them)"
        )
    if len(names) < 2:
        what = "baseline" if baseline is not None else "all_pairs"
        raise InvalidArgument(
            f"{what}: the run has {len(names)} variant ({', '.join(map(repr, names))}); "
            "comparing needs at least 2"
        )
    if baseline is not None:
        baseline = _check_variant(baseline, names, arg="baseline")
        wanted = [(baseline, v) for v in names if v != baseline]
    else:
        wanted = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    each = []
    for a, b in wanted:
        rc = compare_results(res, a, b, method=method, level=level, about=about)
        if rc.primary is None:
            raise InvalidArgument(f"{b!r} cannot be compared with {a!r}: nothing measured")
        each.append(rc)
    # One claim for the family: cases like these only when every pair can make it.
    like = all(rc.about == "cases_like_these" for rc in each)
    chosen = "cases_like_these" if like else "these_cases"
    note = next((rc.about_note for rc in each if rc.about_note), "")
    pairs = _family(each, chosen, adjust, len(names), baseline is None, level)
    rates = _rates(res, names)
    other = "these_cases" if like else "cases_like_these"
    missing = next((rc for rc in each if getattr(rc, other) is None), None)
    if missing is None:
        found = MultipleComparison(
            _family(each, other, adjust, len(names), baseline is None, level),
            baseline,
            adjust,
            level,
            rates,
            other,
        )
        beside = found.ranking()
    else:
        why = missing.reason.split(": ", 1)[-1] if missing.reason else "nothing to compare"
        beside = (
            f"about {claim_words(other)}, no ranking: {missing.b!r} against {missing.a!r}: {why}"
        )
    scores = score_family(res, wanted, about=chosen, level=level, adjust=adjust)
    return MultipleComparison(
        tuple(pairs), baseline, adjust, level, rates, chosen, note, beside, scores
    )


def _family(
    each: Sequence[Any], about: str, adjust: str, variants: int, all_pairs: bool, level: float
) -> tuple[PairComparison, ...]:
    """Every pair judged about ``about``, its p-value adjusted over the family."""
    found = [(rc.a, rc.b, _pair_test(rc, about, level)) for rc in each]
    raw = [math.nan if c.pvalue is None else float(c.pvalue) for _, _, c in found]
    adjusted = _adjust(raw, adjust, variants, all_pairs)
    alpha = 1.0 - level
    pairs = []
    for (a, b, cmp), q in zip(found, adjusted, strict=True):
        gap = cmp.difference.estimate
        sign = 1 if gap > 0 else -1 if gap < 0 else 0
        verdict = (
            {1: "b_better", -1: "a_better"}.get(sign, "cant_tell") if q < alpha else "cant_tell"
        )
        pairs.append(PairComparison(a, b, cmp, float(q), verdict))
    return tuple(pairs)


def _pair_test(rc: Any, about: str, level: float) -> Comparison:
    """The pair's comparison for the family's claim, with the p-value Holm's steps adjust."""
    from ..stats._compare import compare_counts

    if about == "cases_like_these":
        # its p-value is the clustered test that agrees with its interval
        # (evalstats.stats._clustered_pvalues): the t test's, or the betting capital's
        cmp: Comparison = rc.cases_like_these
        return cmp
    cmp = rc.primary if rc.about == "these_cases" else rc.these_cases
    if cmp.pvalue is None:
        counts = (cmp.successes_a, cmp.trials_a, cmp.successes_b, cmp.trials_b)
        cmp = replace(compare_counts(*counts, method="ztest", level=level), cases=cmp.cases)
    return cmp


def _rates(res: Any, names: Sequence[str]) -> dict[str, float]:
    from ._compare_results import _measured_counts

    rates = {}
    cases = _case_ids(res)
    for v in names:
        counts = _measured_counts(res, v, cases).values()
        passes, measured = sum(k for k, _ in counts), sum(n for _, n in counts)
        rates[v] = passes / measured if measured else math.nan
    return rates
