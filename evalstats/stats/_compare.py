"""Comparisons of two variants, A and B, and the verdicts they come to.

Two entry points:

* :func:`compare_counts` takes pass counts of two independent samples;
* :func:`compare` takes, for each variant, the pass/fail outcomes of every
  repeat of every case, pairs them by (case, repeat) when it can, and lists
  per-case rows so that a case where B got clearly worse stays visible even
  when the average improved.

Both return a :class:`Comparison` whose ``verdict`` is ``"b_better"``,
``"a_better"`` or ``"cant_tell"``. A ``cant_tell`` verdict always comes with
``detectable``: the smallest difference these trials would usually (with 80%
power) detect. A comparison never reports "no difference".

The decision rules of the independent design are vectorised in :func:`decide`,
which the power calculations reuse so that the power of a method is the power of
exactly the rule :func:`compare_counts` applies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from .._validate import as_counts, as_rate, check_level, check_method, check_not_larger, closest
from ..errors import InvalidArgument
from ._binomial import binom_pmf as _binom_pmf
from ._binomial import binom_sf as _binom_sf
from ._binomial import mcnemar_pvalue_exact as _mcnemar_pvalue
from ._claims import (
    MIN_CASES,
    check_about,
    check_fits,
    claim_of,
    claim_words,
    default_about,
    few_cases_note,
    refuses_scope,
)
from ._intervals import Interval, _z

__all__ = [
    "CaseRow",
    "Comparison",
    "adjust_pvalues",
    "compare",
    "compare_counts",
    "decide",
    "detectable_difference",
]

VerdictName = Literal["b_better", "a_better", "cant_tell"]

#: Methods for two independent samples (also usable on per-case results).
UNPAIRED_METHODS = ("newcombe", "overlap", "ztest")
#: Methods that need outcomes paired by (case, repeat).
PAIRED_METHODS = ("mcnemar", "clustered")
METHODS = UNPAIRED_METHODS + PAIRED_METHODS

#: The interval (``paired_diff_ci``'s method) of the comparison about these
#: cases, ``method="mcnemar"``: Tango's score interval with a quarter-pair
#: continuity correction; its verdict and p-value are the score test it
#: inverts (at 0 the statistic is McNemar's). simulations/gate_margin.py
#: measures its one-sided errors and why this correction.
THESE_CASES_INTERVAL = "tango_cc"
#: How each method is named where a verdict is printed: the key "mcnemar"
#: (kept for the command line and results files) computes Tango's score test.
TEST_NAMES = {"mcnemar": "tango"}

#: Above this many trials per side (or pairs), :func:`detectable_difference`
#: uses the normal approximation instead of exact enumeration.
EXACT_LIMIT = 2000

_VERDICTS: dict[int, VerdictName] = {1: "b_better", -1: "a_better", 0: "cant_tell"}

#: How per-case flags are adjusted for the number of cases: the discrete
#: methods of :mod:`evalstats.stats._discrete` (the first is the default),
#: statsmodels' ``multipletests`` method names, and "none".
ADJUST_METHODS = ("discrete_holm", "tarone", "holm", "bonferroni", "none")
ADJUST_NAMES = {
    "discrete_holm": "discrete Holm",
    "tarone": "Tarone",
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "none": "not",
}
#: The per-case flags' adjustment when none is asked for.
DEFAULT_ADJUST = "discrete_holm"


# --- vectorised decision rules ----------------------------------------------


def _ztest_pvalue(ka: Any, na: Any, kb: Any, nb: Any) -> np.ndarray:
    """Two-sided p-value of the pooled two-proportion z test (all trials > 0).

    z = (p_b - p_a) / sqrt(p (1 - p) (1/n_a + 1/n_b)) with p the pooled rate,
    as statsmodels ``proportions_ztest(..., value=0)``. When the pooled rate is
    0 or 1 both samples agree exactly and z is 0/0; the p-value is taken as 1.
    """
    from scipy.special import ndtr

    ka, na, kb, nb = (np.asarray(x, dtype=float) for x in (ka, na, kb, nb))
    pooled = (ka + kb) / (na + nb)
    se = np.sqrt(pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (kb / nb - ka / na) / se
    p = 2.0 * ndtr(-np.abs(z))
    return np.where(se > 0, p, 1.0)


def decide(
    successes_a: Any,
    trials_a: Any,
    successes_b: Any,
    trials_b: Any,
    *,
    method: str = "newcombe",
    level: float = 0.95,
) -> np.ndarray:
    """The verdicts of :func:`compare_counts`, vectorised over numpy arrays.

    Parameters
    ----------
    successes_a, trials_a, successes_b, trials_b : int or array_like of int
        Pass counts and trials of A and B; they broadcast together.
    method : {"newcombe", "overlap", "ztest"}
        ``newcombe``: the Newcombe hybrid-score interval of p_b - p_a excludes
        0. ``overlap``: B's Wilson interval lies wholly above A's
        (``low_b > high_a``), or the other way round for A. ``ztest``: the
        two-sided pooled z test has p < 1 - level; the sign of p_b - p_a says
        which way.
    level : float
        Confidence level; the test size is ``1 - level``.

    Returns
    -------
    numpy.ndarray of int8
        +1 where B is better, -1 where A is better, 0 where one can't tell
        (always 0 where a side has zero trials).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Newcombe, R. G. (1998). Interval estimation for the difference between
    independent proportions: comparison of eleven methods. Statistics in
    Medicine 17, 873-890 (method 10).

    Examples
    --------
    >>> decide([30, 30], 40, [39, 33], 40).tolist()
    [1, 0]
    >>> decide(39, 40, 30, 40, method="overlap").tolist()
    -1
    """
    from ._intervals import diff_ci, proportion_ci

    level = check_level(level)
    method = _check_unpaired_method(method)
    ka = as_counts("successes_a", successes_a)
    na = as_counts("trials_a", trials_a)
    kb = as_counts("successes_b", successes_b)
    nb = as_counts("trials_b", trials_b)
    check_not_larger("successes_a", ka, "trials_a", na)
    check_not_larger("successes_b", kb, "trials_b", nb)
    ka, na, kb, nb = np.broadcast_arrays(ka, na, kb, nb)
    usable = (na > 0) & (nb > 0)
    # Zero trials on a side: nothing to compare. Compute on one trial instead
    # and mask the result, so the interval functions never see an empty side.
    na_ = np.where(usable, na, 1)
    nb_ = np.where(usable, nb, 1)
    ka_ = np.where(usable, ka, 0)
    kb_ = np.where(usable, kb, 0)
    if method == "newcombe":
        d = diff_ci(ka_, na_, kb_, nb_, level=level, method="newcombe")
        better = np.asarray(d.low) > 0
        worse = np.asarray(d.high) < 0
    elif method == "overlap":
        wa = proportion_ci(ka_, na_, level=level, method="wilson")
        wb = proportion_ci(kb_, nb_, level=level, method="wilson")
        better = np.asarray(wb.low) > np.asarray(wa.high)
        worse = np.asarray(wa.low) > np.asarray(wb.high)
    else:  # ztest
        p = _ztest_pvalue(ka_, na_, kb_, nb_)
        significant = p < 1.0 - level
        # Compare k_b / n_b with k_a / n_a by cross-multiplying: exact in integers.
        better = significant & (kb_ * na_ > ka_ * nb_)
        worse = significant & (ka_ * nb_ > kb_ * na_)
    out = np.where(better, 1, np.where(worse, -1, 0)).astype(np.int8)
    return np.where(usable, out, 0).astype(np.int8)


def _check_unpaired_method(method: Any) -> str:
    unpaired = ", ".join(repr(m) for m in UNPAIRED_METHODS)
    if method in PAIRED_METHODS:
        raise InvalidArgument(
            f"method={method!r} needs outcomes paired by (case, repeat), and counts of "
            "two independent samples carry no pairing; pass per-case outcomes to "
            f"compare(), or choose one of {unpaired}"
        )
    if isinstance(method, str) and method not in UNPAIRED_METHODS:
        # The closest name among every method, so a misspelled paired method is
        # named too, with why it does not fit counts.
        close = closest(method, METHODS)
        if close in PAIRED_METHODS:
            raise InvalidArgument(
                f"method={method!r} is not a known method (did you mean {close!r}? It "
                "needs outcomes paired by (case, repeat): pass per-case outcomes to "
                f"compare()); for counts choose one of {unpaired}"
            )
    return check_method(method, UNPAIRED_METHODS)


# --- the detectable difference ----------------------------------------------


def _bisect_first_crossing(
    power_at: Any, target: float, top: float, *, grid: int = 200, tol: float = 1e-6
) -> float:
    """Smallest d in [0, top] with power_at(d) >= target, or NaN if none.

    A grid scan finds the first grid point reaching the target (exact power of
    a discrete test need not be monotone in d), then bisection narrows the
    bracket until it is narrower than ``tol``; the upper end is returned, so
    power_at(result) >= target always holds.
    """
    if power_at(0.0) >= target:
        return 0.0
    prev = 0.0
    for d in np.linspace(0.0, top, grid + 1)[1:]:
        if power_at(float(d)) >= target:
            lo, hi = prev, float(d)
            while hi - lo > tol:
                mid = 0.5 * (lo + hi)
                if power_at(mid) >= target:
                    hi = mid
                else:
                    lo = mid
            return hi
        prev = float(d)
    return math.nan


def _centred(rate: float, d: float) -> tuple[float, float]:
    """Rates (p_a, p_b) with p_b - p_a = d, centred on ``rate``, kept in [0, 1]."""
    pa = min(max(rate - d / 2.0, 0.0), 1.0 - d)
    return pa, pa + d


def detectable_difference(
    trials_a: int,
    trials_b: int | None = None,
    *,
    rate: float = 0.5,
    method: str = "newcombe",
    level: float = 0.95,
    power: float = 0.8,
    discordance: float | None = None,
) -> float:
    """The smallest difference p_b - p_a that these trials would usually detect.

    "Usually" means with probability ``power`` (80% by default): the value
    returned is the smallest d such that, when B's true pass rate exceeds A's
    by d, the comparison returns ``b_better`` with probability at least
    ``power``. It is a statement about the design (the numbers of trials and
    the method), evaluated near the observed pass rate, not an estimate of the
    difference.

    Independent design (``newcombe``, ``overlap``, ``ztest``): the true rates
    are centred on ``rate`` (normally the pooled observed pass rate):
    p_a = rate - d/2 and p_b = rate + d/2, shifted as a pair to stay within
    [0, 1]. The power is exact: a sum over every outcome pair (k_a, k_b) of the
    binomial probabilities times whether :func:`decide` says ``b_better``.

    Paired design (``mcnemar``): ``trials_a`` is the number of (case, repeat)
    pairs and ``discordance`` the share of pairs on which A and B disagree
    (normally the observed share). Under a difference d the pairs split into
    B-only passes with probability (pi + d)/2 and A-only passes with
    probability (pi - d)/2, where pi = max(discordance, d) since a difference d
    needs at least a share d of discordant pairs. The power is exact: a sum over
    the number of discordant pairs and how they split, of the trinomial
    probabilities times whether the comparison's test (the paired score test
    of :data:`THESE_CASES_INTERVAL`, whose interval then lies above 0) says
    ``b_better``.

    Above ``EXACT_LIMIT`` (2,000) trials per side, or pairs, the exact sums are
    replaced by the normal approximation: for the independent design
    power = Phi((d - z sqrt(p(1-p)(1/n_a + 1/n_b))) / sqrt(p_a(1-p_a)/n_a +
    p_b(1-p_b)/n_b)) for every method, and for the paired design Connor's (1987)
    power = Phi((d sqrt(n) - z sqrt(pi)) / sqrt(pi - d^2)), z being the
    two-sided critical value at ``level``.

    Parameters
    ----------
    trials_a : int
        Trials of A, or the number of pairs for ``mcnemar``.
    trials_b : int, optional
        Trials of B (default: as many as A). Not used by ``mcnemar``.
    rate : float
        The pass rate around which the true rates are centred (independent).
    method : {"newcombe", "overlap", "ztest", "mcnemar"}
        The decision rule whose power is computed.
    level : float
        Confidence level of that rule.
    power : float
        The required probability of detecting the difference.
    discordance : float, optional
        Share of discordant pairs, required for ``mcnemar``.

    Returns
    -------
    float
        The detectable difference in probability units (0.24 means 24
        percentage points), or NaN when even the largest possible difference
        would be detected with probability below ``power``.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between
    independent proportions: comparison of eleven methods. Statistics in
    Medicine 17, 873-890.

    Connor, R. J. (1987). Sample size for testing differences in proportions
    for the paired-sample design. Biometrics 43, 207-211.

    Examples
    --------
    >>> round(detectable_difference(40, rate=0.75), 3)
    0.263
    >>> round(detectable_difference(40, method="mcnemar", discordance=0.2), 3)
    0.181
    """
    level = check_level(level)
    method = check_method(method, ("newcombe", "overlap", "ztest", "mcnemar"))
    target = float(as_rate("power", power, open_interval=True))
    na = _scalar_count("trials_a", trials_a)
    if na < 1:
        raise InvalidArgument(f"trials_a={trials_a!r} must be at least 1")
    if method == "mcnemar":
        if discordance is None:
            raise InvalidArgument(
                "discordance=None: method='mcnemar' needs the share of discordant pairs"
            )
        disc = float(as_rate("discordance", discordance))
        if na > EXACT_LIMIT:
            return _mcnemar_detectable_normal(na, disc, level, target)
        return _mcnemar_detectable_exact(na, disc, level, target)
    nb = na if trials_b is None else _scalar_count("trials_b", trials_b)
    if nb < 1:
        raise InvalidArgument(f"trials_b={trials_b!r} must be at least 1")
    p = float(as_rate("rate", rate))
    if max(na, nb) > EXACT_LIMIT:
        return _independent_detectable_normal(na, nb, p, level, target)
    return _independent_detectable_exact(na, nb, p, method, level, target)


def _independent_detectable_exact(
    na: int, nb: int, rate: float, method: str, level: float, target: float
) -> float:
    ka = np.arange(na + 1)
    kb = np.arange(nb + 1)
    # The decision does not depend on the true rates: compute it once.
    wins = (decide(ka[:, None], na, kb[None, :], nb, method=method, level=level) == 1).astype(float)

    def power_at(d: float) -> float:
        pa, pb = _centred(rate, d)
        return float(_binom_pmf(ka, na, pa) @ wins @ _binom_pmf(kb, nb, pb))

    return _bisect_first_crossing(power_at, target, 1.0)


def _independent_detectable_normal(
    na: int, nb: int, rate: float, level: float, target: float
) -> float:
    # scipy.special.ndtr is the normal CDF that scipy.stats.norm.cdf calls,
    # without waiting about 0.5 s for scipy.stats to import.
    from scipy.special import ndtr

    z = _z(level)

    def power_at(d: float) -> float:
        pa, pb = _centred(rate, d)
        pooled = (na * pa + nb * pb) / (na + nb)
        null_se = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
        alt_se = math.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
        if alt_se == 0:
            return 1.0 if d > z * null_se else 0.0
        return float(ndtr((d - z * null_se) / alt_se))

    return _bisect_first_crossing(power_at, target, 1.0)


def _mcnemar_detectable_exact(pairs: int, disc: float, level: float, target: float) -> float:
    from ._tango import CORRECTIONS, thresholds

    m = np.arange(pairs + 1)
    # the least B-only count with which the comparison says b_better, per m
    first_win = thresholds(m, _z(level), CORRECTIONS[THESE_CASES_INTERVAL])

    def power_at(d: float) -> float:
        pi = min(max(disc, d), 1.0)
        if pi == 0.0:
            return 0.0
        share_b = min((pi + d) / (2.0 * pi), 1.0)
        # P(only_b >= c_m | m discordant pairs) summed over m.
        return float(_binom_pmf(m, pairs, pi) @ _binom_sf(first_win - 1, m, share_b))

    return _bisect_first_crossing(power_at, target, 1.0)


def _mcnemar_detectable_normal(pairs: int, disc: float, level: float, target: float) -> float:
    from scipy.special import ndtr  # scipy.stats.norm.cdf's function

    z = _z(level)

    def power_at(d: float) -> float:
        pi = min(max(disc, d), 1.0)
        if pi == 0.0:
            return 0.0
        spread = pi - d * d
        if spread <= 0:
            return 1.0
        return float(ndtr((d * math.sqrt(pairs) - z * math.sqrt(pi)) / math.sqrt(spread)))

    return _bisect_first_crossing(power_at, target, 1.0)


def _clustered_detectable(se: float, cases: int, level: float, target: float) -> float:
    """d = (t_{1-alpha/2} + t_{power}) * SE with cases - 1 degrees of freedom.

    The usual approximation for a t test whose standard error stays what it was
    observed to be under the alternative; NaN when that exceeds 1, the largest
    possible difference.
    """
    return _t_detectable(se, float(cases - 1), level, target)


def _clustered_rule_detectable(
    difference: Any, case_differences: np.ndarray, level: float, target: float
) -> float:
    """The difference the clustered rule actually used would usually detect.

    For the t methods, (t_{1-alpha/2, df} + t_{target, df}) * SE on the
    interval's own degrees of freedom. For the betting interval, whose limits
    do not move with the mean as a t interval's do, the power is simulated
    for that rule: 400 resamples (with replacement, a fixed seed) of the
    observed per-case differences, centred (and scaled to their unbiased
    variance), shifted by d and kept within [-1, 1], are judged by the
    betting interval, and d is the smallest shift with B called better in a
    share ``target`` of them (an approximation: on the package's case model
    at 20-60 cases, the simulated power of the rule at the d returned was
    70-83% for a target of 80%). NaN when even a shift
    of 1 does not get there: with 5 cases or fewer no difference can be told
    about cases like these at 95% (a difference of +1 on every case happens
    with probability 1/2^cases under a mean of 0).
    """
    from ._intervals import betting_signs

    se = float(difference.se)
    if difference.method != "betting":
        return _t_detectable(se, float(difference.df), level, target)
    # sorted, so that the resamples (and the figure) do not depend on the order of the cases
    diffs = np.sort(np.asarray(case_differences, dtype=float))
    # Centred and scaled by sqrt(G / (G - 1)), so that the resamples' variance
    # is the unbiased one of the observed differences.
    centred = (diffs - diffs.mean()) * math.sqrt(diffs.size / (diffs.size - 1))
    if _no_resample_better(centred, level):
        return math.nan  # what the resamples find, without drawing them
    rng = np.random.default_rng(0)
    base = centred[rng.integers(0, diffs.size, size=(400, diffs.size))]

    def power_at(d: float) -> float:
        # the betting interval's "B better" decisions (lower limit above 1e-12), exactly
        signs = betting_signs(np.clip(base + d, -1.0, 1.0), level, threshold=1e-12, only_above=True)
        return float(np.mean(signs == 1))

    if power_at(1.0) < target:
        return math.nan
    lo, hi = 0.0, 1.0
    while hi - lo > 0.002:
        mid = 0.5 * (lo + hi)
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


#: Up to this many multisets of the cases' differences (G <= 5 cases), whether any
#: resample could be called B better at a shift of 1 is checked on them all first.
_MULTISETS = 400


def _no_resample_better(centred: np.ndarray, level: float) -> bool:
    """Whether no resample of the centred differences, shifted by 1, can be called
    B better, so that the power at every shift is 0 and the rule detects nothing.

    A resample's decision depends only on the multiset of its values (see
    :func:`~evalstats.stats._intervals.betting_signs`), and a resample of G
    values is one of the C(2G - 1, G) multisets of G of them: when none of
    those is called better, no draw is, and the draws (and numpy.random) are
    not needed. Checked only when there are at most :data:`_MULTISETS` of
    them (at most 5 cases, where at 95% nothing can be told); otherwise False.
    """
    from itertools import combinations_with_replacement

    from ._intervals import betting_never_above

    g = centred.size
    if math.comb(2 * g - 1, g) > _MULTISETS:
        return False
    every = np.array(list(combinations_with_replacement(range(g), g)), dtype=np.intp)
    shifted = np.clip(centred[every] + 1.0, -1.0, 1.0)  # as power_at(1.0) makes them
    return betting_never_above(shifted, level, threshold=1e-12)


def _t_detectable(se: float, df: float, level: float, target: float) -> float:
    """(t_{1-alpha/2, df} + t_{target, df}) * SE, or NaN above 1."""
    from scipy.special import stdtrit  # the t quantile scipy.stats.t.ppf calls

    d = float((stdtrit(df, 0.5 + level / 2.0) + stdtrit(df, target)) * se)
    return d if d <= 1.0 else math.nan


# --- results ------------------------------------------------------------------


@dataclass(frozen=True)
class CaseRow:
    """One case of a comparison.

    Attributes
    ----------
    case : str
        The case id.
    passes_a, trials_a, passes_b, trials_b : int
        Passes and runs of the case under A and under B (0 trials when the case
        was run under one variant only).
    difference : Interval
        p_b - p_a on this case, with its own interval at the comparison's
        level: Newcombe's paired interval when the comparison is paired,
        Newcombe's independent one otherwise. Exploratory: it is not adjusted
        for the number of cases, so with many cases some of these intervals
        exclude 0 by chance alone.
    pvalue : float
        The case's own two-sided test of A against B: the exact McNemar test
        on its discordant pairs when the comparison is paired, Fisher's exact
        test on its 2 x 2 table otherwise; NaN when the case was run under one
        variant only (it is then left out of the adjustment).
    adjusted_pvalue : float
        ``pvalue`` adjusted for the number of cases tested, by the
        comparison's ``adjust`` method (equal to ``pvalue`` with
        ``adjust="none"``). The discrete methods (the default) count each
        other case by the chance its own test has of a p-value this small, so
        a case whose test cannot reach it does not count.
    worse : bool
        B got clearly worse on this case: its adjusted p-value is below
        ``1 - level`` and B passed less often than A.
    better : bool
        B got clearly better on this case: likewise, with B passing more often.
    """

    case: str
    passes_a: int
    trials_a: int
    passes_b: int
    trials_b: int
    difference: Interval
    worse: bool
    better: bool
    pvalue: float = math.nan
    adjusted_pvalue: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {
            "case": self.case,
            "passes_a": self.passes_a,
            "trials_a": self.trials_a,
            "passes_b": self.passes_b,
            "trials_b": self.trials_b,
            "difference": self.difference.to_dict(),
            "pvalue": num(self.pvalue),
            "adjusted_pvalue": num(self.adjusted_pvalue),
            "worse": self.worse,
            "better": self.better,
        }


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing variant A with variant B.

    Attributes
    ----------
    verdict : {"b_better", "a_better", "cant_tell"}
        What the data say at the chosen level. Never "no difference":
        ``cant_tell`` comes with ``detectable``.
    difference : Interval
        p_b - p_a with its interval (Newcombe's for independent samples;
        Tango's score interval with a quarter-pair continuity correction,
        ``tango_cc``, for ``mcnemar``; the clustered one for ``clustered``).
    pvalue : float or None
        The p-value of the method's test (``ztest``; ``mcnemar``: the score
        test whose inversion is the interval, so that it is below
        ``1 - level`` exactly when the interval excludes 0; ``clustered``:
        the test that rejects exactly when its interval excludes 0, see
        :mod:`evalstats.stats._clustered_pvalues`); None for ``newcombe`` and
        ``overlap``, which are interval rules.
    method, level
        The decision rule and the confidence level (test size 1 - level).
    successes_a, trials_a, successes_b, trials_b : int
        Pooled counts.
    paired : bool
        Whether the outcomes were paired by (case, repeat).
    both, only_a, only_b, neither : int or None
        For a paired comparison, the cells of the A-pass x B-pass table.
    cases : tuple of CaseRow
        Per-case rows (empty for :func:`compare_counts`).
    detectable : float or None
        For ``cant_tell``: the smallest p_b - p_a that these trials would
        detect with 80% power, in probability units (see
        :func:`detectable_difference`); NaN when no difference is large enough;
        None for the other verdicts.
    rate_a, rate_b : Interval
        Each variant's pass rate with its Wilson interval.
    reason : str
        Why the verdict could not be reached or how it was computed, when that
        matters (zero trials, a fallback).
    about : {"these_cases", "cases_like_these"}
        The claim the verdict makes: about these cases, run again, or about
        cases like these. :func:`compare_counts` always gives ``"these_cases"``.
    about_note : str
        Why the claim is not the one asked for or the usual default, when it is
        not (too few cases for cases like these, outcomes not paired).
    """

    verdict: VerdictName
    difference: Interval
    pvalue: float | None
    method: str
    level: float
    successes_a: int
    trials_a: int
    successes_b: int
    trials_b: int
    rate_a: Interval
    rate_b: Interval
    paired: bool = False
    both: int | None = None
    only_a: int | None = None
    only_b: int | None = None
    neither: int | None = None
    cases: tuple[CaseRow, ...] = ()
    detectable: float | None = None
    reason: str = field(default="")
    adjust: str = DEFAULT_ADJUST
    about: str = "these_cases"
    about_note: str = ""

    @property
    def test_name(self) -> str:
        """The name of the method as a verdict prints it ("tango" for ``mcnemar``)."""
        return TEST_NAMES.get(self.method, self.method)

    @property
    def worse_cases(self) -> tuple[str, ...]:
        """Ids of the cases on which B got clearly worse (adjusted flags)."""
        return tuple(row.case for row in self.cases if row.worse)

    @property
    def better_cases(self) -> tuple[str, ...]:
        """Ids of the cases on which B got clearly better (adjusted flags)."""
        return tuple(row.case for row in self.cases if row.better)

    def flags_text(self) -> str:
        """How the per-case flags were decided, e.g. "discrete Holm-adjusted over 40 cases".

        When no case's own exact test can reach p < 1 - level at the numbers
        of repeats run, it says so, and how many repeats would usually flag a
        case that drops from 90% to 40% (:func:`~evalstats.stats._discrete.flags_note`):
        "...; with 5 repeats no single case can be flagged at 95%; 34 repeats
        would usually flag a case that drops from 90% to 40% among 40 cases".
        """
        tested = sum(1 for row in self.cases if not math.isnan(row.pvalue))
        noun = "case" if tested == 1 else "cases"
        if self.adjust == "none":
            text = f"not adjusted for the {tested} {noun} tested"
        else:
            text = f"{ADJUST_NAMES[self.adjust]}-adjusted over {tested} {noun}"
        note = self._flags_note()
        return f"{text}; {note}" if note else text

    @property
    def flags_possible(self) -> bool:
        """Whether some case's own exact test can reach p < 1 - level at its repeats."""
        return bool(self.cases) and not self._flags_note()

    def _flags_note(self) -> str:
        from ._discrete import flags_note

        trials = [(row.trials_a, row.trials_b) for row in self.cases if not math.isnan(row.pvalue)]
        return flags_note(
            trials, level=self.level, paired=self.paired, adjusted=self.adjust != "none"
        )

    def __str__(self) -> str:
        head = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}[
            self.verdict
        ]
        level = f"{100 * self.level:g}%"
        if self.trials_a == 0 or self.trials_b == 0:
            return f"{head}: {self.reason}"
        test = self.test_name
        if self.pvalue is not None:
            test += " " + _pvalue_text(self.pvalue)
        if self.method == "overlap":
            how = "apart" if self.verdict != "cant_tell" else "overlapping"
            text = (
                f"{head}: {self.difference}; Wilson intervals {how}: "
                f"A {self.rate_a}, B {self.rate_b}, {test}, {level}"
            )
        else:
            text = f"{head}: {self.difference}, {test}, {level}"
        if self.cases:
            text += f", about {claim_words(self.about)}"
        if self.verdict == "cant_tell":
            text += "; " + _detectable_text(self.detectable)
        for flagged, how in ((self.worse_cases, "worse"), (self.better_cases, "better")):
            if flagged:
                shown = ", ".join(repr(c) for c in flagged[:3])
                shown += ", ..." if len(flagged) > 3 else ""
                text += (
                    f"; B clearly {how} on {len(flagged)} case{'s' if len(flagged) > 1 else ''} "
                    f"({self.flags_text()}): {shown}"
                )
        if self.about_note:
            text += f"; {self.about_note}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes None); ``summary`` holds ``str(self)``."""

        def num(x: float | None) -> float | None:
            return None if x is None or math.isnan(x) else float(x)

        return {
            "verdict": self.verdict,
            "summary": str(self),
            "method": self.method,
            "level": self.level,
            "paired": self.paired,
            "difference": self.difference.to_dict(),
            "pvalue": num(self.pvalue),
            "detectable": num(self.detectable),
            "successes_a": self.successes_a,
            "trials_a": self.trials_a,
            "successes_b": self.successes_b,
            "trials_b": self.trials_b,
            "rate_a": self.rate_a.to_dict(),
            "rate_b": self.rate_b.to_dict(),
            "both": self.both,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "neither": self.neither,
            "cases": [row.to_dict() for row in self.cases],
            "adjust": self.adjust,
            "flags": self.flags_text() if self.cases else "",
            "flags_possible": self.flags_possible,
            "reason": self.reason,
            "about": self.about,
            "about_note": self.about_note,
        }

    def _repr_html_(self) -> str:
        """A notebook's display: the verdict and its interval in the verdict's colour,
        then the text ``print`` gives."""
        from .._repr import result_html, verdict_words

        head = verdict_words(self.verdict)
        if self.trials_a and self.trials_b:
            head += f": {self.difference}"
        return result_html(str(self), headline=head, verdict=self.verdict)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


def _pvalue_text(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.2g}"


def _detectable_text(d: float | None) -> str:
    if d is None or math.isnan(d):
        return "these trials are too few to usually detect even the largest possible difference"
    points = max(1, math.ceil(100 * d - 1e-9))
    unit = "point" if points == 1 else "points"
    return f"these trials would usually detect a difference of {points} {unit} or more"


# --- compare_counts -------------------------------------------------------------


def _scalar_count(name: str, value: Any) -> int:
    arr = as_counts(name, value)
    if arr.ndim:
        raise InvalidArgument(
            f"{name} has shape {arr.shape}; compare_counts takes single counts "
            "(use decide() for arrays)"
        )
    return int(arr)


def compare_counts(
    successes_a: int,
    trials_a: int,
    successes_b: int,
    trials_b: int,
    *,
    method: str = "newcombe",
    level: float = 0.95,
) -> Comparison:
    """Compare the pass rates of two independent samples, A and B.

    Parameters
    ----------
    successes_a, trials_a, successes_b, trials_b : int
        Passes and trials of A and of B.
    method : {"newcombe", "overlap", "ztest"}
        ``newcombe`` (default): B is better when the Newcombe hybrid-score
        interval of p_b - p_a lies wholly above 0 (A when wholly below).
        ``overlap``: B is better only when B's Wilson interval lies wholly
        above A's, strictly (``low_b > high_a``); the rule tutorials use,
        kept for teaching: it is conservative, since non-overlap of the two
        Wilson intervals implies that the Newcombe interval excludes 0 but not
        the other way round. ``ztest``: the two-sided pooled two-proportion z
        test has p < 1 - level, in the direction of the observed difference.
    level : float
        Confidence level.

    Returns
    -------
    Comparison
        With the Newcombe interval of p_b - p_a as ``difference`` whatever the
        method, the z test's ``pvalue`` for ``ztest`` (None otherwise), and for
        ``cant_tell`` the difference these trials would usually detect. Zero
        trials on a side gives ``cant_tell`` with the reason.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Newcombe, R. G. (1998). Interval estimation for the difference between
    independent proportions: comparison of eleven methods. Statistics in
    Medicine 17, 873-890.

    Examples
    --------
    >>> print(compare_counts(33, 40, 37, 40))
    can't tell yet: +10% (−5% to +25%), newcombe, 95%; these trials would usually \
detect a difference of 20 points or more
    >>> compare_counts(20, 50, 40, 50).verdict
    'b_better'
    >>> print(compare_counts(20, 50, 40, 50, method="ztest"))
    B better: +40% (+21% to +56%), ztest p<0.001, 95%
    """
    level = check_level(level)
    method = _check_unpaired_method(method)
    ka = _scalar_count("successes_a", successes_a)
    na = _scalar_count("trials_a", trials_a)
    kb = _scalar_count("successes_b", successes_b)
    nb = _scalar_count("trials_b", trials_b)
    check_not_larger("successes_a", np.asarray(ka), "trials_a", np.asarray(na))
    check_not_larger("successes_b", np.asarray(kb), "trials_b", np.asarray(nb))
    return _compare_independent(ka, na, kb, nb, method=method, level=level)


def _empty_reason(na: int, nb: int) -> str:
    sides = [f"trials_{s}=0" for s, n in (("a", na), ("b", nb)) if n == 0]
    return f"{' and '.join(sides)}: no outcomes to compare"


def _rates(ka: int, na: int, kb: int, nb: int, level: float) -> tuple[Interval, Interval]:
    from ._intervals import proportion_ci

    return (
        proportion_ci(ka, na, level=level, method="wilson"),
        proportion_ci(kb, nb, level=level, method="wilson"),
    )


def _compare_independent(
    ka: int, na: int, kb: int, nb: int, *, method: str, level: float
) -> Comparison:

    rate_a, rate_b = _rates(ka, na, kb, nb, level)
    verdict: VerdictName = "cant_tell"
    pvalue = None
    detectable: float | None = None
    if na == 0 or nb == 0:
        reason = _empty_reason(na, nb)
        difference = Interval(math.nan, -1.0, 1.0, level, "newcombe", difference=True, note=reason)
        detectable = math.nan
    else:
        sign = int(decide(ka, na, kb, nb, method=method, level=level))
        verdict = _VERDICTS[sign]
        difference = _unpaired_interval(ka, na, kb, nb, method=method, level=level, sign=sign)
        pvalue = float(_ztest_pvalue(ka, na, kb, nb)) if method == "ztest" else None
        reason = ""
        if method == "ztest" and ka + kb in (0, na + nb):
            reason = "every trial had the same outcome, so the z statistic is 0/0; p taken as 1"
        if verdict == "cant_tell":
            pooled = (ka + kb) / (na + nb)
            detectable = detectable_difference(na, nb, rate=pooled, method=method, level=level)
    return Comparison(
        verdict=verdict,
        difference=difference,
        pvalue=pvalue,
        method=method,
        level=level,
        successes_a=ka,
        trials_a=na,
        successes_b=kb,
        trials_b=nb,
        rate_a=rate_a,
        rate_b=rate_b,
        detectable=detectable,
        reason=reason,
    )


def _unpaired_interval(
    ka: int, na: int, kb: int, nb: int, *, method: str, level: float, sign: int
) -> Interval:
    """The interval of p_b - p_a that agrees with the method's verdict (``sign``).

    ``newcombe``: Newcombe's hybrid score interval, whose exclusion of 0 is the
    verdict. ``ztest``: the score interval that inverts the z test (Mee 1984;
    :mod:`._score_diff`), which excludes 0 exactly when the pooled z test
    rejects. ``overlap``: from B's and A's Wilson intervals, (low_b - high_a,
    high_b - low_a), which excludes 0 exactly when they do not overlap.
    """
    from ._intervals import diff_ci, proportion_ci

    if method == "ztest":
        from ._score_diff import score_diff_interval

        est, low, high = score_diff_interval(ka, na, kb, nb, level=level, verdict=sign)
        return Interval(float(est), float(low), float(high), level, "score", difference=True)
    if method == "overlap":
        wa = proportion_ci(ka, na, level=level, method="wilson")
        wb = proportion_ci(kb, nb, level=level, method="wilson")
        est = kb / nb - ka / na
        low, high = float(wb.low) - float(wa.high), float(wb.high) - float(wa.low)
        return Interval(
            est, min(low, est), max(high, est), level, "wilson overlap", difference=True
        )
    return diff_ci(ka, na, kb, nb, level=level, method="newcombe")


# --- compare on per-case results -------------------------------------------------


def _outcomes(name: str, results: Any) -> dict[str, np.ndarray]:
    if not isinstance(results, Mapping):
        raise InvalidArgument(
            f"{name} must map each case id to its sequence of pass/fail outcomes, "
            f"not {type(results).__name__}"
        )
    if not results:
        raise InvalidArgument(f"{name}={{}} is empty; expected at least one case")
    out: dict[str, np.ndarray] = {}
    for case, seq in results.items():
        label = f"{name}[{case!r}]"
        if isinstance(seq, str | bytes) or not isinstance(seq, Sequence | np.ndarray):
            raise InvalidArgument(
                f"{label}={seq!r} must be a sequence of True/False outcomes, one per repeat"
            )
        if len(seq) == 0:
            raise InvalidArgument(f"{label} is empty; expected at least one outcome")
        for i, x in enumerate(seq):
            if not isinstance(x, bool | np.bool_):
                raise InvalidArgument(
                    f"{label}[{i}]={x!r} must be True or False (a pass or a fail)"
                )
        out[str(case)] = np.asarray(seq, dtype=bool)
    if len(out) != len(results):
        raise InvalidArgument(f"{name} has case ids that coincide when written as text")
    return out


def _pairing_problem(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> str:
    """Why A and B cannot be paired by (case, repeat), or "" when they can."""
    problems = []
    only_a = [c for c in a if c not in b]
    only_b = [c for c in b if c not in a]

    def few(ids: list[str]) -> str:
        return ", ".join(repr(c) for c in ids[:3]) + (", ..." if len(ids) > 3 else "")

    if only_a:
        problems.append(f"cases only in results_a: {few(only_a)}")
    if only_b:
        problems.append(f"cases only in results_b: {few(only_b)}")
    lengths = [c for c in a if c in b and len(a[c]) != len(b[c])]
    if lengths:
        c = lengths[0]
        more = f" (and {len(lengths) - 1} more)" if len(lengths) > 1 else ""
        problems.append(
            f"repeat counts differ: results_a[{c!r}] has {len(a[c])}, "
            f"results_b[{c!r}] has {len(b[c])}{more}"
        )
    return "; ".join(problems)


@refuses_scope
def compare(
    results_a: Mapping[str, Sequence[bool]],
    results_b: Mapping[str, Sequence[bool]],
    *,
    paired: bool | None = None,
    method: str | None = None,
    level: float = 0.95,
    adjust: str = DEFAULT_ADJUST,
    about: str | None = None,
) -> Comparison:
    """Compare two variants from the pass/fail outcomes of each case's repeats.

    Parameters
    ----------
    results_a, results_b : mapping of case id to sequence of bool
        For each case, the outcomes of its repeats in repeat order.
    paired : bool, optional
        Pair the outcomes by (case, repeat). By default they are paired when
        both sides have the same cases with the same numbers of repeats (and
        the method is a paired one, or not given). ``paired=True`` with
        mismatched cases or repeat counts raises, naming what differs.
    method : str, optional
        Paired: ``mcnemar`` compares the pooled table of (case, repeat)
        pairs by Tango's (1998) score test with a continuity correction of a
        quarter of a pair, and prints the interval that inverts it
        (``paired_diff_ci(..., method="tango_cc")``), so that the verdict, the
        interval and the p-value always agree; at 0 the statistic is
        McNemar's, ``(only_b - only_a) / sqrt(only_a + only_b)``. It speaks
        about these cases, and is printed as ``tango``. ``clustered`` treats
        cases as clusters and speaks about cases like these: the mean paired
        difference with the interval of
        :func:`~evalstats.stats._intervals.clustered_paired_diff_ci` (the
        distribution-free betting interval, at every number of cases:
        :data:`~evalstats.stats._intervals.AUTO_METHOD`); its verdict is whether
        that interval excludes 0, and its p-value is the test that agrees
        with it (the betting capital's, or the t test's for a t interval:
        :func:`~evalstats.stats._clustered_pvalues.clustered_paired_pvalue`).
        Unpaired, on the pooled counts: ``newcombe`` (the default for
        ``about="these_cases"``), ``overlap``, ``ztest``, exactly as
        :func:`compare_counts`. Not given: chosen by ``about``.
    level : float
        Confidence level; the test size is 1 - level.
    adjust : {"discrete_holm", "tarone", "holm", "bonferroni", "none"}
        How the per-case flags are adjusted for the number of cases, so that
        when A and B are alike the chance of flagging any case at all is at
        most ``1 - level``. Each case's own test is exact (McNemar's on its
        discordant pairs when paired, Fisher's on its 2 x 2 table otherwise).
        ``"discrete_holm"`` (default) is Holm's step-down method with each case
        counted by the chance its own test has of reaching the p-value at
        hand, so that cases that cannot reach it (few discordant pairs, few
        repeats) do not count; ``"tarone"`` is Tarone's modified Bonferroni
        method (see :func:`~evalstats.stats._discrete.adjust_discrete`);
        ``"holm"`` and ``"bonferroni"`` count every case. ``"none"`` flags
        each case at ``1 - level`` on its own, and with 40 cases then flags
        some case in most comparisons of identical variants. When no case's
        test can reach ``1 - level`` at the repeats run, ``flags_text()``
        says so and how many repeats would usually flag a case that drops
        from 90% to 40%.
    about : {"these_cases", "cases_like_these"}, optional
        The claim the verdict makes. ``"cases_like_these"``: cases drawn the
        way these were (``method="clustered"``; needs paired outcomes and at
        least 2 cases). ``"these_cases"``: these cases, run again
        (``mcnemar`` when paired, else ``newcombe``). By default
        ``"these_cases"``, whose validity comes from the paired, alternating
        design whatever the cases are; ``about_note`` says so. Outcomes given
        here come from no suite declared sampled at random, so a claim about
        cases like these is made only when asked for. A method implies its
        claim; a claim that contradicts it raises.

    Returns
    -------
    Comparison
        ``about`` says which claim the verdict makes, and ``str()`` says it
        ("about cases like these" / "about these cases"). With a row per
        case. A row's ``worse`` flag says that B got clearly worse on that
        case (its adjusted p-value is below ``1 - level`` and B passed less
        often); ``better`` likewise. The row's interval of p_b - p_a
        (Newcombe's, paired or independent as the comparison) is not
        adjusted: it is exploratory.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12, 153-157.

    Tango, T. (1998). Equivalence test and confidence interval for the
    difference in proportions for the paired-sample design. Statistics in
    Medicine 17, 891-908.

    Newcombe, R. G. (1998). Improved confidence intervals for the difference
    between binomial proportions based on paired data. Statistics in Medicine
    17, 2635-2650.

    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.

    Examples
    --------
    By default the verdict is the paired score test's, about these cases.

    >>> a = {"order": [True] * 8 + [False] * 2, "refund": [False] * 5 + [True] * 5}
    >>> b = {"order": [True] * 10, "refund": [True] * 10}
    >>> c = compare(a, b)
    >>> c.verdict, c.about, c.only_b, c.only_a, round(c.pvalue, 4)
    ('b_better', 'these_cases', 7, 0, 0.0107)
    >>> c.about_note
    'the default, as the suite does not declare its cases sampled at random'
    >>> print(c)
    B better: +35% (+11% to +58%), tango p=0.011, 95%, about these cases; the default, as \
the suite does not declare its cases sampled at random
    >>> [row.passes_b - row.passes_a for row in c.cases]
    [2, 5]
    """
    level, adjust = _check_options(level, paired, method, adjust, about)
    a = _outcomes("results_a", results_a)
    b = _outcomes("results_b", results_b)
    method, paired, note = _settle(method, about, paired, _pairing_problem(a, b), len(a))
    if paired:
        result = _compare_paired(list(a), _tables(a, b), method=method, level=level, adjust=adjust)
    else:
        result = _compare_unpaired(_case_counts(a, b), method=method, level=level, adjust=adjust)
    return replace(result, about=claim_of(method), about_note=note)


def _compare_tables(
    cases: Sequence[str],
    tables: Sequence[Table],
    *,
    paired: bool | None = None,
    method: str | None = None,
    level: float = 0.95,
    adjust: str = DEFAULT_ADJUST,
    about: str | None = None,
) -> Comparison:
    """:func:`compare` of outcomes paired by (case, repeat), given as counts.

    ``cases`` are the case ids and ``tables`` their 2 x 2 tables of paired
    outcomes (see :data:`Table`; each with at least one pair), so that a
    comparison of many pairs holds a few numbers per case, not one object per
    pair. The arguments and the result are :func:`compare`'s:
    ``compare(a, b, ...)`` equals ``_compare_tables(list(a), _tables(a, b),
    ...)`` in every field (tests/test_compare_tables.py).
    """
    level, adjust = _check_options(level, paired, method, adjust, about)
    method, paired, note = _settle(method, about, paired, "", len(cases))
    if paired:
        result = _compare_paired(cases, tables, method=method, level=level, adjust=adjust)
    else:
        counts = [
            (c, t[0] + t[1], sum(t), t[0] + t[2], sum(t))
            for c, t in zip(cases, tables, strict=True)
        ]
        result = _compare_unpaired(counts, method=method, level=level, adjust=adjust)
    return replace(result, about=claim_of(method), about_note=note)


def _check_options(
    level: float, paired: Any, method: str | None, adjust: str, about: str | None
) -> tuple[float, str]:
    """compare()'s options checked one by one: the level and the adjust method, as checked."""
    level = check_level(level)
    if paired is not None and not isinstance(paired, bool | np.bool_):
        raise InvalidArgument(f"paired={paired!r} must be True, False or None")
    if method is not None:
        check_method(method, METHODS)
    adjust = check_method(adjust, ADJUST_METHODS, name="adjust")
    check_about(about)
    return level, adjust


def _settle(
    method: str | None, about: str | None, paired: bool | None, problem: str, n_cases: int
) -> tuple[str, bool, str]:
    """compare()'s method, whether it pairs, and its claim's note, from what was asked.

    ``problem`` says why the outcomes cannot be paired ("" when they can);
    ``n_cases`` is the number of cases of A. Refuses what does not fit.
    """
    check_fits(method, about)
    if method == "clustered":
        about = "cases_like_these"
    note = ""
    if about == "cases_like_these":
        if paired is False or (paired is None and problem):
            why = problem if problem else "paired=False was asked for"
            raise InvalidArgument(
                f"about='cases_like_these' needs outcomes paired by (case, repeat), since a "
                f"claim about cases like these compares A and B case by case: {why}; use "
                "about='these_cases'"
            )
        if n_cases < 2:
            raise InvalidArgument(
                f"about='cases_like_these' needs at least 2 cases to say anything about cases "
                f"like these, got {n_cases}; use about='these_cases'"
            )
        method = "clustered"
        if n_cases < MIN_CASES:
            note = few_cases_note(n_cases)
    elif about is None and method is None:
        unpaired = problem or ("paired=False was asked for" if paired is False else "")
        about, note = default_about(n_cases=n_cases, not_paired=unpaired)
        if about == "cases_like_these":
            method = "clustered"
    if paired is None:
        paired = not problem and (method is None or method in PAIRED_METHODS)
    if method is None:
        method = "mcnemar" if paired else "newcombe"
    if paired and problem:
        raise InvalidArgument(f"paired=True but the outcomes cannot be paired: {problem}")
    if method in PAIRED_METHODS and not paired:
        why = problem if problem else "paired=False was asked for"
        raise InvalidArgument(
            f"method={method!r} needs outcomes paired by (case, repeat): {why}; "
            f"for independent samples choose one of "
            f"{', '.join(repr(m) for m in UNPAIRED_METHODS)}"
        )
    if paired and method not in PAIRED_METHODS:
        raise InvalidArgument(
            f"method={method!r} treats A and B as independent samples, but paired=True; "
            f"choose {' or '.join(repr(m) for m in PAIRED_METHODS)}, or paired=False"
        )
    return method, paired, note


#: One case's outcomes counted for an unpaired comparison: the case id, then
#: A's passes and trials and B's passes and trials (0 trials: not run under it).
CaseCounts = tuple[str, int, int, int, int]
#: One case's 2 x 2 table of outcomes paired by (case, repeat): pairs both
#: passed, only A passed, only B passed, neither passed.
Table = tuple[int, int, int, int]


def _case_counts(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[CaseCounts]:
    """Each case's passes and trials under A and B: A's cases, then those only in B."""
    empty = np.zeros(0, dtype=bool)
    out = []
    for case in list(a) + [c for c in b if c not in a]:
        xa, xb = a.get(case, empty), b.get(case, empty)
        out.append((case, int(xa.sum()), len(xa), int(xb.sum()), len(xb)))
    return out


def _tables(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[Table]:
    """Each case's 2 x 2 table of paired outcomes, in the order of A's cases."""
    out = []
    for case, ya in a.items():
        yb = b[case]
        both = int(np.count_nonzero(ya & yb))
        only_a = int(np.count_nonzero(ya)) - both
        only_b = int(np.count_nonzero(yb)) - both
        out.append((both, only_a, only_b, len(ya) - both - only_a - only_b))
    return out


def _compare_unpaired(
    counts: Sequence[CaseCounts],
    *,
    method: str,
    level: float,
    adjust: str = DEFAULT_ADJUST,
) -> Comparison:
    """A and B as independent samples, from each case's counts (see :data:`CaseCounts`)."""
    from ._intervals import diff_cis

    ka = sum(c[1] for c in counts)
    na = sum(c[2] for c in counts)
    kb = sum(c[3] for c in counts)
    nb = sum(c[4] for c in counts)
    result = _compare_independent(ka, na, kb, nb, method=method, level=level)
    both = [i for i, c in enumerate(counts) if c[2] and c[4]]
    # Each case run under both variants: its Newcombe interval, in one vectorised
    # pass, and Fisher's exact p-value, likewise; a case run under one variant
    # has neither (NaN p-value, the interval (-1, 1) with why).
    diffs = diff_cis(*(np.array([counts[i][k] for i in both], dtype=np.int64) for k in range(1, 5)),
                     level=level, method="newcombe")  # fmt: skip
    pvalues = [math.nan] * len(counts)
    attainable: list[np.ndarray | None] = [None] * len(counts)
    if both:
        from ._discrete import fisher_attainable

        tables = np.array([[counts[i][1], counts[i][2], counts[i][3], counts[i][4]] for i in both])
        sets: dict[tuple[int, int, int], np.ndarray] = {}
        for i, q in zip(both, _fisher_pvalues(*tables.T).tolist(), strict=True):
            _, ca, cn, cb, cm = counts[i]
            pvalues[i] = q
            key = (cn, cm, ca + cb)
            found = sets.get(key)
            if found is None:
                found = sets[key] = fisher_attainable(*key)
            attainable[i] = found
    by_case = dict(zip(both, diffs, strict=True))
    rows = []
    for i, (case, ca, cn, cb, cm) in enumerate(counts):
        diff = by_case.get(i)
        if diff is None:
            note = _empty_reason(cn, cm)
            diff = Interval(math.nan, -1.0, 1.0, level, "newcombe", difference=True, note=note)
        rows.append(_row(case, ca, cn, cb, cm, diff, pvalues[i]))
    cases = _flag(rows, adjust=adjust, level=level, attainable=attainable)
    return replace(result, cases=cases, adjust=adjust)


def _row(case: str, ka: int, na: int, kb: int, nb: int, diff: Interval, pvalue: float) -> CaseRow:
    return CaseRow(
        case=case,
        passes_a=ka,
        trials_a=na,
        passes_b=kb,
        trials_b=nb,
        difference=diff,
        worse=False,
        better=False,
        pvalue=pvalue,
    )


def adjust_pvalues(
    pvalues: Any, *, method: str = "holm", attainable: Sequence[Any] | None = None
) -> np.ndarray:
    """P-values adjusted for multiplicity; NaN entries are left out and stay NaN.

    ``method`` is ``"holm"`` (Holm's step-down: the i-th smallest of m
    p-values times m - i + 1, made non-decreasing, capped at 1; it controls
    the family-wise error rate under any dependence), ``"bonferroni"`` (each
    times m, capped at 1) or ``"none"``. The values are those of
    ``statsmodels.stats.multitest.multipletests`` (tests/test_compare.py
    checks them against it), computed here because statsmodels' Holm branch
    runs a full garbage collection on every call, which made a comparison of
    40 cases ten times slower.

    The discrete methods, ``"discrete_holm"`` and ``"tarone"``
    (:func:`~evalstats.stats._discrete.adjust_discrete`), also control the
    family-wise error rate under any dependence, and need ``attainable``:
    for each p-value, every value its test could have given under its null
    (:func:`~evalstats.stats._discrete.mcnemar_attainable`,
    :func:`~evalstats.stats._discrete.fisher_attainable`; None for a NaN
    p-value). They never adjust more than Holm's method (``"tarone"``: than
    Bonferroni's), and a test that cannot reach a p-value as small as
    another's does not count against it.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scandinavian Journal of Statistics 6, 65-70.

    Tarone, R. E. (1990). A modified Bonferroni method for discrete data.
    Biometrics 46, 515-522.

    Westfall, P. H. & Wolfinger, R. D. (1997). Multiple tests with discrete
    distributions. The American Statistician 51, 3-8.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, float("nan")]).round(3).tolist()
    [0.03, 0.06, 0.06, nan]

    Two exact McNemar tests, on 8 and on 2 discordant pairs: the second can
    give no p-value below 0.5, so the discrete Holm does not count it against
    the first.

    >>> from evalstats.stats._discrete import mcnemar_attainable
    >>> sets = [mcnemar_attainable(8), mcnemar_attainable(2)]
    >>> adjust_pvalues([2 / 2**8, 1.0], method="discrete_holm", attainable=sets).tolist()
    [0.0078125, 1.0]
    >>> adjust_pvalues([2 / 2**8, 1.0], method="holm").tolist()
    [0.015625, 1.0]
    """
    method = check_method(method, ADJUST_METHODS, name="adjust")
    p = np.asarray(pvalues, dtype=float)
    if method in ("discrete_holm", "tarone"):
        from ._discrete import adjust_discrete

        return adjust_discrete(p, _check_attainable(p, attainable, method), method=method)
    out = p.copy()
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if method == "none" or m == 0:
        return out
    q = p[ok]
    if method == "bonferroni":
        out[ok] = np.minimum(q * m, 1.0)
        return out
    order = np.argsort(q, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(q[order] * np.arange(m, 0, -1)), 1.0)
    adjusted = np.empty(m)
    adjusted[order] = stepped
    out[ok] = adjusted
    return out


def _check_attainable(p: np.ndarray, attainable: Any, method: str) -> list[np.ndarray | None]:
    """``attainable`` checked for :func:`adjust_pvalues`: one set per p-value, holding it."""
    from ._discrete import TOLERANCE

    if attainable is None:
        raise InvalidArgument(
            f"attainable=None: adjust={method!r} needs, for each p-value, the values its "
            "test could give (e.g. mcnemar_attainable(discordant))"
        )
    if isinstance(attainable, str | bytes) or len(attainable) != p.size or p.ndim != 1:
        raise InvalidArgument(
            f"attainable must hold one set of p-values for each of the {p.size} p-values"
        )
    out: list[np.ndarray | None] = []
    for i, (q, values) in enumerate(zip(p.tolist(), attainable, strict=True)):
        if math.isnan(q):
            out.append(None)
            continue
        a = np.asarray(values, dtype=float)
        if (
            a.ndim != 1
            or a.size == 0
            or np.isnan(a).any()
            or a[0] <= 0.0
            or a[-1] > 1.0
            or (np.diff(a) <= 0).any()
        ):
            raise InvalidArgument(
                f"attainable[{i}] must be the p-values in (0, 1] that test can give, ascending"
            )
        if not (np.abs(a - q) <= TOLERANCE * q).any():
            raise InvalidArgument(
                f"pvalues[{i}]={q!r} is not among attainable[{i}], the values its test can give"
            )
        out.append(a)
    return out


def _flag(
    rows: list[CaseRow],
    *,
    adjust: str,
    level: float,
    attainable: Sequence[np.ndarray | None],
) -> tuple[CaseRow, ...]:
    """Set each row's adjusted p-value and its worse/better flags.

    ``attainable`` holds, for each row tested, the p-values its test could
    give (None for a row not tested), which the discrete methods need.
    """
    if adjust in ("discrete_holm", "tarone"):
        from ._discrete import adjust_discrete

        adjusted = adjust_discrete([r.pvalue for r in rows], attainable, method=adjust)
    else:
        adjusted = adjust_pvalues([r.pvalue for r in rows], method=adjust)
    alpha = 1.0 - level
    out = []
    for row, q in zip(rows, np.asarray(adjusted, dtype=float).tolist(), strict=True):
        sign = 0
        if q < alpha:
            gap = row.passes_b / row.trials_b - row.passes_a / row.trials_a
            sign = 1 if gap > 0 else -1 if gap < 0 else 0
        out.append(
            CaseRow(
                row.case,
                row.passes_a,
                row.trials_a,
                row.passes_b,
                row.trials_b,
                row.difference,
                sign < 0,
                sign > 0,
                row.pvalue,
                q,
            )
        )
    return tuple(out)


def _fisher_pvalues(ka: Any, na: Any, kb: Any, nb: Any) -> np.ndarray:
    """Fisher's exact two-sided p-values of independent 2 x 2 tables, vectorised.

    Given both margins, A's passes are hypergeometric; the p-value sums the
    probabilities of the tables no more likely than the one observed (with
    the relative tolerance 1e-7 that scipy.stats.fisher_exact uses), as
    ``scipy.stats.fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue``.
    """
    from scipy.stats import hypergeom

    ka, na, kb, nb = (np.asarray(x, dtype=np.int64)[:, None] for x in (ka, na, kb, nb))
    passes = ka + kb
    k = np.arange(int(na.max()) + 1)[None, :]
    inside = (k >= np.maximum(0, passes - nb)) & (k <= np.minimum(na, passes))
    pmf = np.where(inside, hypergeom.pmf(k, na + nb, passes, na), 0.0)
    seen = hypergeom.pmf(ka, na + nb, passes, na)
    p = np.where(inside & (pmf <= seen * (1 + 1e-7)), pmf, 0.0).sum(axis=1)
    return np.minimum(p, 1.0)


def _compare_paired(
    cases: Sequence[str],
    tables: Sequence[Table],
    *,
    method: str,
    level: float,
    adjust: str = DEFAULT_ADJUST,
) -> Comparison:
    """The paired comparison from each case's 2 x 2 table (see :data:`Table`).

    Every figure is a function of the tables: the score test and the
    interval that inverts it on the pooled table (about these cases), the
    clustered interval of the per-case tables (:func:`_clustered_tables`),
    and each case's row from its own.
    """
    from ._intervals import paired_diff_ci
    from ._tango import paired_diff_pvalue

    both, only_a, only_b, neither = (sum(t[i] for t in tables) for i in range(4))
    n = both + only_a + only_b + neither
    ka, kb = both + only_a, both + only_b
    rate_a, rate_b = _rates(ka, n, kb, n, level)
    reason = ""

    def mcnemar() -> tuple[Interval, float, VerdictName, float | None]:
        # The interval and the test it inverts: the verdict is the interval's
        # side of 0, and the p-value is below alpha exactly then.
        cells = (both, only_a, only_b, neither)
        difference = paired_diff_ci(*cells, level=level, method=THESE_CASES_INTERVAL)
        pvalue = float(paired_diff_pvalue(*cells, method=THESE_CASES_INTERVAL))
        low, high = float(difference.low), float(difference.high)
        verdict = _VERDICTS[1 if low > 0 else -1 if high < 0 else 0]
        detectable = None
        if verdict == "cant_tell":
            detectable = detectable_difference(
                n, method="mcnemar", discordance=(only_a + only_b) / n, level=level
            )
        return difference, pvalue, verdict, detectable

    pvalue: float | None
    if method == "mcnemar":
        difference, pvalue, verdict, detectable = mcnemar()
    else:  # clustered
        if len(cases) < 2:
            raise InvalidArgument(
                f"method='clustered' needs at least 2 cases to say anything about cases "
                f"like these, got {len(cases)}; use 'mcnemar' (about these cases)"
            )
        difference = _clustered_tables(tables, level)
        low, high = float(difference.low), float(difference.high)
        verdict = _VERDICTS[1 if low > 0 else -1 if high < 0 else 0]
        # The test that agrees with the interval: the t test (CR2, CR1), or the
        # betting capital's p-value (few cases, or no spread between cases),
        # from each case's mean difference as the interval took them.
        from ._clustered_pvalues import pvalue_of

        per_case_means = [(t[2] - t[1]) / sum(t) for t in tables]
        pvalue = pvalue_of(difference, per_case_means)
        detectable = None
        if verdict == "cant_tell":
            # B's rate minus A's on each case, as the means of its outcomes.
            per_case = np.array([(t[0] + t[2]) / sum(t) - (t[0] + t[1]) / sum(t) for t in tables])
            detectable = _clustered_rule_detectable(difference, per_case, level, 0.8)
    rows, attainable = _paired_rows(cases, tables, level)
    return Comparison(
        verdict=verdict,
        difference=difference,
        pvalue=pvalue,
        method=method,
        level=level,
        successes_a=ka,
        trials_a=n,
        successes_b=kb,
        trials_b=n,
        rate_a=rate_a,
        rate_b=rate_b,
        paired=True,
        both=both,
        only_a=only_a,
        only_b=only_b,
        neither=neither,
        cases=_flag(rows, adjust=adjust, level=level, attainable=attainable),
        detectable=detectable,
        reason=reason,
        adjust=adjust,
    )


def _paired_rows(
    cases: Sequence[str], tables: Sequence[Table], level: float
) -> tuple[list[CaseRow], list[np.ndarray]]:
    """Each case's row (its Newcombe paired interval and exact McNemar p-value) and
    the p-values its test can attain, for all cases at once: the intervals in
    one vectorised pass (:func:`~evalstats.stats._intervals.paired_diff_cis`),
    the p-values and their attainable sets once per distinct split of the
    discordant pairs (a case's test depends on nothing else)."""
    from ._discrete import mcnemar_attainable
    from ._intervals import paired_diff_cis

    if not tables:
        return [], []
    both, only_a, only_b, neither = (list(column) for column in zip(*tables, strict=True))
    diffs = paired_diff_cis(both, only_a, only_b, neither, level=level, method="newcombe")
    pvalues: dict[tuple[int, int], float] = {}
    sets: dict[int, np.ndarray] = {}
    rows = []
    attainable = []
    for case, (a, b, c, d), diff in zip(cases, tables, diffs, strict=True):
        case_p = pvalues.get((b, c))
        if case_p is None:
            case_p = pvalues[(b, c)] = float(_mcnemar_pvalue(b, c))
        found = sets.get(b + c)
        if found is None:
            found = sets[b + c] = mcnemar_attainable(b + c)
        pairs = a + b + c + d
        rows.append(_row(case, a + b, pairs, a + c, pairs, diff, case_p))
        attainable.append(found)
    return rows, attainable


def _clustered_tables(tables: Sequence[Table], level: float) -> Any:
    """:func:`~evalstats.stats._intervals.clustered_paired_diff_ci` from each case's 2 x 2 table.

    The interval (method ``"auto"``) of the mean paired difference ``b - a``
    with the cases (in any order) as clusters, without one number per
    pair: a pair's difference is +1 (only B passed), -1 (only A) or 0, so a
    case's sum of differences is only_b - only_a and its sum of residuals
    from the mean m is that minus pairs * m; the squared residuals add up to
    only_b (1 - m)^2 + only_a (1 + m)^2 + (both + neither) m^2.
    tests/test_compare_tables.py checks it against the function on the pairs.
    """
    from ._intervals import _cluster_robust

    counts = np.array(tables, dtype=np.int64).reshape(-1, 4)
    sizes = counts.sum(axis=1).astype(float)
    moved = (counts[:, 2] - counts[:, 1]).astype(float)
    n = int(counts.sum())
    only_a, only_b = int(counts[:, 1].sum()), int(counts[:, 2].sum())
    mean = (only_b - only_a) / n
    same = n - only_a - only_b
    resid_ss = only_b * (1.0 - mean) ** 2 + only_a * (1.0 + mean) ** 2 + same * mean**2
    return _cluster_robust(
        n,
        mean,
        sizes,
        moved - sizes * mean,
        moved / sizes,
        resid_ss,
        level,
        difference=True,
        method="auto",
    )


def _clustered_pvalue(difference: Any) -> float:
    """The clustered t test's two-sided p-value (for a standard error above 0).

    The interval is estimate +- t_{1-alpha/2, df} * SE (clipped to [-1, 1]),
    df being Satterthwaite's (CR2) or cases - 1 (CR1); the test is
    p = 2 P(T > |estimate| / SE) on the same degrees of freedom, so
    p < 1 - level exactly when the unclipped interval excludes 0.
    """
    from scipy.special import stdtr  # scipy.stats.t.sf(x, df) is stdtr(df, -x)

    statistic = abs(float(difference.estimate)) / float(difference.se)
    return float(2.0 * stdtr(float(difference.df), -statistic))
