"""Two variants' mean scores compared, paired by case and repeat, and a non-inferiority gate.

:func:`compare_scores` judges B against A from paired scores in [0, 1]: the
verdict (``b_better``, ``a_better``, ``cant_tell``) is read off the
interval for the mean difference B - A, so the interval printed beside it
always agrees with it (the test is the interval inverted: B better exactly
when the lower limit is above 0).

- About these cases: the interval over the (case, repeat) pairs' differences
  in [-1, 1], as :func:`~evalstats.stats._scores.score_mean_ci` makes it about
  these cases (``t`` over the pairs, or the distribution-free fixed-bet
  ``betting`` interval), on (d + 1) / 2.
- About cases like these: the interval over the case mean differences in [-1,
  1] (``t``, CR2 when cases have unequal numbers of pairs; ``betting``;
  ``studentized``).

:func:`score_non_inferiority` passes B when the lower limit is above -margin.
``simulations/score_compare.py`` measures the false "B better" and the gate's
size at its margin, and their power.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import _validate
from ..errors import InvalidArgument
from ._claims import check_about, claim_words
from ._intervals import _cluster_codes, _outcomes
from ._scores import SCORE_METHODS, ScoreInterval, _num, score_mean_ci

__all__ = [
    "COMPARE_RULE",
    "ScoreCaseRow",
    "ScoreComparison",
    "ScoreNonInferiority",
    "compare_method",
    "compare_scores",
    "score_non_inferiority",
    "sign_flip_pvalue",
]

#: What ``method="auto"`` uses in a comparison and the gate, by claim, as
#: :data:`~evalstats.stats._scores.AUTO_RULE` (cases about cases like these,
#: pairs about these cases): the betting intervals at every size, as the
#: pass-rate comparisons do. ``simulations/score_compare.py`` measures the
#: one-sided false "B better" and the gate's size at its margin: with B's
#: losses concentrated on a few runs (a run scored 0 now and then) the
#: differences are skewed, and the t interval's lower limit passes a B that
#: is worse by the margin 3-6% of the time at 30-100 cases (the studentized
#: bootstrap 3-5%), where the betting intervals keep it below 2.5% whatever
#: the scores. ``method="t"`` asks for the t interval.
COMPARE_RULE: dict[str, tuple[tuple[int, str], ...]] = {
    "cases_like_these": ((0, "betting"),),
    "these_cases": ((0, "betting"),),
}


def compare_method(cases: int, about: str, pairs: int | None = None) -> str:
    """The method a comparison's ``method="auto"`` uses (see :data:`COMPARE_RULE`)."""
    count = cases if about == "cases_like_these" or pairs is None else pairs
    chosen = COMPARE_RULE[about][0][1]
    for fewest, method in COMPARE_RULE[about]:
        if count >= fewest:
            chosen = method
    return chosen


#: 80% power: the standard normal quantile added to the interval's half-width.
_Z_POWER = 0.8416212335729143

#: With at most this many pairs a case's sign-flip p-value enumerates every flip.
_EXACT_FLIPS = 16
#: ... and with more, this many random flips (the p-value counts the data's own).
_RANDOM_FLIPS = 1 << 14


def sign_flip_pvalue(d: Any, *, seed: int = 0) -> float:
    """Two-sided sign-flip p-value of the mean of the paired differences ``d``.

    Under the null that A and B are exchangeable within each pair (the
    paired, alternating runs of one case), every pattern of signs of the
    differences is equally likely; the p-value is the share of patterns
    whose |mean| is at least the data's (within 1e-12). Exact (all 2^n
    patterns) for at most 16 pairs; beyond, 16,384 random patterns from
    ``seed`` plus the data's own, (1 + hits) / (1 + draws), still valid.
    With n pairs it is never below 2 / 2^n: 3 repeats cannot reach 5%.
    A case with every difference 0 gets 1.
    """
    import numpy as np

    x = np.asarray(d, dtype=float)
    n = x.size
    observed = abs(float(x.mean())) if n else 0.0
    if n == 0 or observed == 0.0:
        return 1.0
    if n <= _EXACT_FLIPS:
        codes = np.arange(1 << n)[:, None] >> np.arange(n) & 1
        signs = 1.0 - 2.0 * codes
        means = np.abs(signs @ x) / n
        return float(np.mean(means >= observed - 1e-12))
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(_RANDOM_FLIPS, n))
    hits = int(np.sum(np.abs(signs @ x) / n >= observed - 1e-12))
    return (1 + hits) / (1 + _RANDOM_FLIPS)


@dataclass(frozen=True)
class ScoreCaseRow:
    """One case of a score comparison.

    ``mean_a``, ``mean_b``: the case's mean scores over its pairs; ``pairs``
    their number; ``pvalue`` the sign-flip p-value of its mean difference
    (:func:`sign_flip_pvalue`) and ``adjusted_pvalue`` Holm's over the
    cases; ``worse``/``better``: B clearly worse/better on this case
    (adjusted p below 1 - level).
    """

    case: str
    pairs: int
    mean_a: float
    mean_b: float
    pvalue: float
    adjusted_pvalue: float
    worse: bool
    better: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "case": self.case,
            "pairs": self.pairs,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "pvalue": self.pvalue,
            "adjusted_pvalue": self.adjusted_pvalue,
            "worse": self.worse,
            "better": self.better,
        }


_HEAD = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}


@dataclass(frozen=True)
class ScoreComparison:
    """Variant B's mean score against variant A's, paired by case and repeat.

    Attributes
    ----------
    verdict : {"b_better", "a_better", "cant_tell"}
        ``b_better`` exactly when ``difference.low > 0``, ``a_better`` exactly
        when ``difference.high < 0``.
    difference : ScoreInterval
        The mean of B - A with its interval (``difference=True``, in [-1, 1]).
    mean_a, mean_b : float
        Each variant's mean score over the pairs.
    about : str
        The claim.
    method, level
        The interval's method (the one used) and level.
    pairs, n_cases : int
        Pairs and cases compared.
    detectable : float or None
        For ``cant_tell``: about the smallest |B - A| these pairs would
        detect with 80% power (the half-width of the interval plus 0.84
        standard errors of the mean difference); None otherwise.
    cases : tuple of ScoreCaseRow
        Per case, with Holm-adjusted sign-flip flags.
    """

    verdict: str
    difference: ScoreInterval
    mean_a: float
    mean_b: float
    about: str
    method: str
    level: float
    pairs: int
    n_cases: int
    detectable: float | None
    cases: tuple[ScoreCaseRow, ...] = ()

    @property
    def worse_cases(self) -> tuple[str, ...]:
        """Ids of the cases on which B clearly scored lower (Holm-adjusted)."""
        return tuple(r.case for r in self.cases if r.worse)

    @property
    def better_cases(self) -> tuple[str, ...]:
        """Ids of the cases on which B clearly scored higher (Holm-adjusted)."""
        return tuple(r.case for r in self.cases if r.better)

    def __str__(self) -> str:
        text = (
            f"{_HEAD[self.verdict]}: mean score {self.difference} ({self.method}, "
            f"{100 * self.level:g}%, about {claim_words(self.about)}); "
            f"A {_num(self.mean_a)}, B {_num(self.mean_b)} over {self.pairs} pairs of "
            f"{self.n_cases} cases"
        )
        if self.verdict == "cant_tell":
            if self.detectable is None or math.isnan(self.detectable):
                text += "; no difference in [-1, 1] would usually be detected"
            else:
                text += f"; would usually detect a difference of {_num(self.detectable)}"
        for flagged, how in ((self.worse_cases, "lower"), (self.better_cases, "higher")):
            if flagged:
                shown = ", ".join(repr(c) for c in flagged[:3]) + (
                    ", ..." if len(flagged) > 3 else ""
                )
                text += f"; B clearly {how} on {len(flagged)} (Holm-adjusted): {shown}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "verdict": self.verdict,
            "difference": self.difference.to_dict(),
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "about": self.about,
            "method": self.method,
            "level": self.level,
            "pairs": self.pairs,
            "cases": self.n_cases,
            "detectable": None
            if self.detectable is None or math.isnan(self.detectable)
            else self.detectable,
            "case_rows": [r.to_dict() for r in self.cases],
        }


def _paired(scores_a: Any, scores_b: Any, cases: Any):
    a = _outcomes("scores_a", scores_a)
    b = _outcomes("scores_b", scores_b)
    if a.size != b.size:
        raise InvalidArgument(
            f"scores_a has {a.size} scores and scores_b has {b.size}; "
            "they must be paired one to one (same case, same repeat)"
        )
    codes = _cluster_codes(cases, a.size, "scores_a")
    return a, b, codes


def _difference(
    d: Any, codes: Any, about: str, level: float, method: str, resamples: int, seed: Any
) -> ScoreInterval:
    """The interval for the mean of ``d`` in [-1, 1], from score_mean_ci on (d + 1) / 2."""
    if method == "auto":
        method = compare_method(int(codes.max()) + 1, about, int(d.size))
    ci = score_mean_ci(
        (d + 1.0) / 2.0,
        codes,
        about=about,
        level=level,
        method=method,
        resamples=resamples,
        seed=seed,
    )
    return ScoreInterval(
        2.0 * ci.estimate - 1.0,
        2.0 * ci.low - 1.0,
        2.0 * ci.high - 1.0,
        level,
        ci.method,
        difference=True,
        note=ci.note,
        about=about,
        cases=ci.cases,
        runs=ci.runs,
        se=2.0 * ci.se,
        df=ci.df,
    )


def _verdict(diff: ScoreInterval, threshold: float = 0.0) -> str:
    if diff.low > threshold:
        return "b_better"
    if diff.high < -threshold:
        return "a_better"
    return "cant_tell"


def compare_scores(
    scores_a: Any,
    scores_b: Any,
    cases: Any,
    *,
    about: str = "these_cases",
    level: float = 0.95,
    method: str = "auto",
    resamples: int = 9999,
    seed: Any = 0,
) -> ScoreComparison:
    """Compare two variants' mean scores from scores paired by case and repeat.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Scores in [0, 1], position by position one pair: the same case and
        repeat run by A and by B.
    cases : array_like
        One case label per pair.
    about : {"these_cases", "cases_like_these"}
        The claim (see :mod:`evalstats.stats._claims`).
    level : float
        Confidence level of the interval; each one-sided error is at most
        (1 - level) / 2 (for the betting intervals whatever the scores'
        distributions; for ``t`` and ``studentized`` as measured by
        ``simulations/score_compare.py``).
    method : str
        As :func:`~evalstats.stats._scores.score_mean_ci` for the claim, on the
        differences: ``auto``, ``t``, ``betting`` (and about cases like these
        ``studentized``, ``percentile``, ``bca``).
    resamples, seed
        For the bootstrap methods; ``seed`` also for the sign-flip p-values of
        cases with more than 16 pairs.

    Returns
    -------
    ScoreComparison
        The verdict read off the interval, the interval, the per-case flags
        (Holm over the cases of their sign-flip p-values) and, for
        ``cant_tell``, the detectable difference.

    Examples
    --------
    >>> a = [0.5, 0.5, 0.75, 0.5, 0.25, 0.5] * 6
    >>> b = [0.75, 1.0, 1.0, 0.75, 0.5, 0.75] * 6
    >>> cmp = compare_scores(a, b, [c for c in range(18) for _ in range(2)])
    >>> cmp.verdict, cmp.method, round(cmp.difference.estimate, 3)
    ('b_better', 'betting', 0.292)
    """
    import numpy as np

    from ._compare import adjust_pvalues

    about = check_about(about) or "these_cases"
    level = _validate.check_level(level)
    method = _validate.check_method(method, SCORE_METHODS[about])
    a, b, codes = _paired(scores_a, scores_b, cases)
    if a.size == 0:
        raise InvalidArgument("scores_a and scores_b hold no pairs: nothing to compare")
    labels = np.unique(np.asarray(cases))
    d = b - a
    diff = _difference(d, codes, about, level, method, resamples, seed)
    verdict = _verdict(diff)
    detectable = None
    if verdict == "cant_tell":
        groups = int(codes.max()) + 1
        if about == "these_cases":
            se = float(np.std(d, ddof=1)) / math.sqrt(d.size) if d.size > 1 else math.nan
        else:
            means = np.bincount(codes, weights=d) / np.bincount(codes)
            se = float(np.std(means, ddof=1)) / math.sqrt(groups) if groups > 1 else math.nan
        half = (diff.high - diff.low) / 2.0
        detectable = half + _Z_POWER * se if not math.isnan(se) else math.nan
        if detectable > 1.0:
            detectable = math.nan
    rows = []
    pvalues = []
    for g in range(labels.size):
        mask = codes == g
        pvalues.append(sign_flip_pvalue(d[mask], seed=seed if isinstance(seed, int) else 0))
    adjusted = adjust_pvalues(pvalues, method="holm")
    alpha = 1.0 - level
    for g, label in enumerate(labels):
        mask = codes == g
        ma, mb = float(a[mask].mean()), float(b[mask].mean())
        adj = float(adjusted[g])
        rows.append(
            ScoreCaseRow(
                str(label),
                int(mask.sum()),
                ma,
                mb,
                pvalues[g],
                adj,
                worse=adj < alpha and mb < ma,
                better=adj < alpha and mb > ma,
            )
        )
    return ScoreComparison(
        verdict,
        diff,
        float(np.sort(a).mean()),
        float(np.sort(b).mean()),
        about,
        diff.method,
        level,
        int(a.size),
        int(labels.size),
        detectable,
        tuple(rows),
    )


@dataclass(frozen=True)
class ScoreNonInferiority:
    """Whether B's mean score is no more than ``margin`` below A's.

    ``passed`` exactly when ``difference.low > -margin``: the interval's lower
    limit, whose one-sided error is at most (1 - level) / 2, so a B truly
    ``margin`` worse passes with probability at most that.
    """

    passed: bool
    margin: float
    difference: ScoreInterval
    about: str
    level: float

    def __str__(self) -> str:
        word = "passed" if self.passed else "failed"
        return (
            f"non-inferiority {word}: mean score B - A {self.difference}, lower limit "
            f"{_num(float(self.difference.low), signed=True)} "
            f"{'above' if self.passed else 'not above'} {_num(-self.margin, signed=True)} "
            f"({self.difference.method}, {100 * self.level:g}%, about {claim_words(self.about)})"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "passed": self.passed,
            "margin": self.margin,
            "difference": self.difference.to_dict(),
            "about": self.about,
            "level": self.level,
        }


def score_non_inferiority(
    scores_a: Any,
    scores_b: Any,
    cases: Any,
    *,
    margin: float,
    about: str = "these_cases",
    level: float = 0.95,
    method: str = "auto",
    resamples: int = 9999,
    seed: Any = 0,
) -> ScoreNonInferiority:
    """Pass B when its mean score is shown to be at most ``margin`` below A's.

    ``margin`` is on the [0, 1] score scale (0.05 = a twentieth of the
    scale; a 1-5 rubric's one step is 0.25). The other arguments are
    those of :func:`compare_scores`; the lower limit of the same interval
    decides.

    >>> a = [0.75, 0.5, 1.0, 0.75, 0.25, 0.5] * 10
    >>> b = [0.75, 0.75, 1.0, 0.5, 0.25, 0.75] * 10
    >>> r = score_non_inferiority(a, b, [c for c in range(30) for _ in range(2)], margin=0.1)
    >>> r.passed
    True
    >>> print(r.difference)
    +0.04 (−0.09 to +0.16)
    """
    try:
        m = float(margin)
    except (TypeError, ValueError):
        raise InvalidArgument(f"margin={margin!r} must be a number in (0, 1)") from None
    if math.isnan(m) or not 0.0 < m < 1.0:
        hint = " (the margin is on the [0, 1] score scale)" if m >= 1.0 else ""
        raise InvalidArgument(f"margin={margin!r} must be above 0 and below 1{hint}")
    about = check_about(about) or "these_cases"
    level = _validate.check_level(level)
    method = _validate.check_method(method, SCORE_METHODS[about])
    a, b, codes = _paired(scores_a, scores_b, cases)
    if a.size == 0:
        raise InvalidArgument("scores_a and scores_b hold no pairs: nothing to compare")
    diff = _difference(b - a, codes, about, level, method, resamples, seed)
    return ScoreNonInferiority(bool(diff.low > -m), m, diff, about, level)
