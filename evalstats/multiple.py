"""More than two variants of one run compared, adjusted for multiplicity.

Every variant against a baseline (``baseline="old"``), or every pair
(``all_pairs=True``), each pair by :func:`~evalstats.comparison.compare_results`
(paired by (case, repeat) when the schedule allows it), with the p-values and
the verdicts adjusted for the number of comparisons: Holm's step-down method
by default, Shaffer's for all pairs (which uses that not every combination of
equalities between variants is possible), or none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ._layout import (
    _case_ids,
    _check_variant,
    _pooled,
    _results,
    _variant_names,
)
from ._validate import check_level, check_method
from .errors import InvalidArgument
from .intervals import _pct

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .compare import Comparison

__all__ = ["PairComparison", "MultipleComparison", "compare_variants", "shaffer_limits"]

#: Multiplicity adjustments of compare_variants.
ADJUSTMENTS = ("holm", "shaffer", "none")
_NAMES = {"holm": "Holm", "shaffer": "Shaffer", "none": "no", "bonferroni": "Bonferroni"}


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
    from .compare import adjust_pvalues

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
    """

    pairs: tuple[PairComparison, ...]
    baseline: str | None
    adjust: str
    level: float
    rates: dict[str, float]

    def adjustment_text(self) -> str:
        n = len(self.pairs)
        noun = "comparison" if n == 1 else "comparisons"
        if self.adjust == "bonferroni":
            each = 1.0 - (1.0 - self.level) / n
            return (
                f"about cases like these: each pair's clustered interval at level {each:.4g} "
                f"(Bonferroni over {n} {noun})"
            )
        if self.adjust == "none":
            return f"p-values not adjusted for the {n} {noun}"
        return (
            f"p-values and verdicts {_NAMES[self.adjust]}-adjusted over {n} {noun}, "
            "about these cases"
        )

    def ranking(self) -> str:
        """One line: variants by pass rate, with the adjusted verdicts between them."""
        order = sorted(self.rates, key=lambda v: -self.rates[v])
        verdicts = {}
        for p in self.pairs:
            verdicts[(p.a, p.b)] = p.verdict
            flip = {"b_better": "a_better", "a_better": "b_better"}.get(p.verdict, p.verdict)
            verdicts[(p.b, p.a)] = flip
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
                f"({_NAMES[self.adjust]}-adjusted, {self._about()}): " + ", ".join(parts)
            )
        text = f"{order[0]} {_pct(self.rates[order[0]])}"
        for hi, lo in zip(order, order[1:], strict=False):
            sign = ">" if verdicts[(lo, hi)] == "b_better" else "~"
            text += f" {sign} {lo} {_pct(self.rates[lo])}"
        return (
            f"ranking ({_NAMES[self.adjust]}-adjusted, {self._about()}; '>' clearly better, "
            "'~' can't tell): " + text
        )

    def _about(self) -> str:
        return "about cases like these" if self.adjust == "bonferroni" else "about these cases"

    def __str__(self) -> str:
        lines = [self.adjustment_text()]
        width = max(len(f"{p.b} vs {p.a}") for p in self.pairs)
        lines.append(f"  {'comparison':<{width}}  {'B - A':<26} {'p':>8} {'adjusted':>8}  verdict")
        for p in self.pairs:
            c = p.comparison
            verdict = {"b_better": "B better", "a_better": "A better"}.get(p.verdict, "can't tell")
            raw = "n/a" if c.pvalue is None else f"{c.pvalue:.3g}"
            adj = "n/a" if math.isnan(p.adjusted_pvalue) else f"{p.adjusted_pvalue:.3g}"
            lines.append(
                f"  {f'{p.b} vs {p.a}':<{width}}  {str(c.difference):<26} {raw:>8} {adj:>8}  "
                f"{verdict} ({c.method})"
            )
        lines.append(self.ranking())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "adjust": self.adjust,
            "level": self.level,
            "rates": dict(self.rates),
            "pairs": [p.to_dict() for p in self.pairs],
            "ranking": self.ranking(),
            "summary": str(self),
        }


def compare_variants(
    results: Any,
    *,
    baseline: str | None = None,
    all_pairs: bool = False,
    adjust: str = "holm",
    method: str | None = None,
    level: float = 0.95,
    scope: str | None = None,
) -> MultipleComparison:
    """Compare three or more variants of one run, adjusted for multiplicity.

    Give ``baseline`` to compare every other variant with it, or
    ``all_pairs=True`` to compare every pair. Each pair is compared by
    :func:`~evalstats.comparison.compare_results` (``method`` as there; a
    comparison without a p-value, such as Newcombe's interval on unpaired
    runs, is replaced by the z test on the same counts). The p-values are
    adjusted by ``adjust``: Holm's step-down method (default), Shaffer's
    (for all pairs, whose equalities constrain one another; with a baseline
    it is Holm's), or none; a pair's verdict is "B better" or "A better" only
    when its adjusted p-value is below ``1 - level``.

    Parameters
    ----------
    results : Results or path
    baseline : str, optional
        The variant every other is compared with.
    all_pairs : bool
        Compare every pair instead.
    adjust : {"holm", "shaffer", "none"}
    method : str, optional
        The comparison method, as in ``compare_results``.
    level : float
    scope : {"cases", "trials"}, optional
        The claim, as in ``compare_results``, but about these cases by default
        (``"trials"``: McNemar's p-values, which Holm's and Shaffer's steps
        adjust). About cases like these (``"cases"``) each pair is judged by its
        clustered interval at level ``1 - (1 - level) / m`` for ``m``
        comparisons (Bonferroni, which holds for any interval; the
        distribution-free interval used below 100 cases has no p-value for
        Holm's or Shaffer's steps), and ``adjust`` is ``"bonferroni"``.

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
    from .compare import SCOPES
    from .comparison import compare_results

    level = check_level(level)
    adjust = check_method(adjust, ADJUSTMENTS, name="adjust")
    if scope is not None:
        scope = check_method(scope, SCOPES, name="scope")
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
    if scope == "cases" or method == "clustered":
        return _by_intervals(res, names, wanted, baseline, level, method)
    found = []
    for a, b in wanted:
        cmp = compare_results(
            res, a, b, method=method, level=level, scope="trials" if method is None else None
        ).primary
        if cmp is None:
            raise InvalidArgument(f"{b!r} cannot be compared with {a!r}: nothing measured")
        if cmp.pvalue is None:
            counts = (cmp.successes_a, cmp.trials_a, cmp.successes_b, cmp.trials_b)
            from .compare import compare_counts

            cmp = replace(compare_counts(*counts, method="ztest", level=level), cases=cmp.cases)
        found.append((a, b, cmp))
    raw = [math.nan if c.pvalue is None else float(c.pvalue) for _, _, c in found]
    adjusted = _adjust(raw, adjust, len(names), baseline is None)
    alpha = 1.0 - level
    pairs = []
    for (a, b, cmp), q in zip(found, adjusted, strict=True):
        gap = cmp.difference.estimate
        sign = 1 if gap > 0 else -1 if gap < 0 else 0
        verdict = (
            {1: "b_better", -1: "a_better"}.get(sign, "cant_tell") if q < alpha else "cant_tell"
        )
        pairs.append(PairComparison(a, b, cmp, float(q), verdict))
    return MultipleComparison(tuple(pairs), baseline, adjust, level, _rates(res, names))


def _rates(res: Any, names: Sequence[str]) -> dict[str, float]:
    rates = {}
    cases = _case_ids(res)
    for v in names:
        passes, measured = _pooled(res.measured_by_case(v, cases))
        rates[v] = passes / measured if measured else math.nan
    return rates


def _by_intervals(
    res: Any,
    names: Sequence[str],
    wanted: Sequence[tuple[str, str]],
    baseline: str | None,
    level: float,
    method: str | None,
) -> MultipleComparison:
    """About cases like these: each pair's clustered interval at the Bonferroni level."""
    from .comparison import compare_results

    each = 1.0 - (1.0 - level) / len(wanted)
    pairs = []
    for a, b in wanted:
        cmp = compare_results(res, a, b, method=method, level=each, scope="cases").primary
        if cmp is None:
            raise InvalidArgument(f"{b!r} cannot be compared with {a!r}: nothing measured")
        pairs.append(PairComparison(a, b, cmp, math.nan, cmp.verdict))
    return MultipleComparison(tuple(pairs), baseline, "bonferroni", level, _rates(res, names))
