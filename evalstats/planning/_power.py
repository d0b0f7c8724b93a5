"""Power and planning: how many runs an eval needs before it is run.

Exact power by enumeration for the independent and the paired design, sample
sizes (exact and by normal approximation), and cases-by-repeats plans for the
clustered design in which cases differ in difficulty.

Every power figure comes with the false-positive rate of the same decision
rule. For the independent and paired designs the false-positive rate is the
power at ``p_b == p_a``: the probability that the comparison says
``b_better`` when B is exactly as good as A, A staying at its stated rate.
It is one-sided (a false "B better"; a false "A better" is as likely again),
so its nominal value at level 0.95 is 2.5%. Counts are discrete, so the
exact figure differs from that and is always computed, never assumed: often
it is lower, but Newcombe's interval and the z test exceed it at small n
(``power(0.5, 0.5, 50)`` is 0.0284, ``power(0.5, 0.5, 25)`` 0.0325).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validate import as_counts, as_rate, check_experiments, check_level, check_method
from ..errors import InvalidArgument
from ..stats._casemodel import CaseModel

if TYPE_CHECKING:
    from ..stats._intervals import Interval

__all__ = [
    "METHODS",
    "CaseModel",
    "Plan",
    "PowerCurve",
    "PowerTable",
    "anova_icc",
    "case_model_from_results",
    "clustered_power",
    "fit_case_model",
    "paired_power",
    "plan",
    "power",
    "power_curve",
    "power_figure",
    "power_table",
    "sample_size",
]

#: Decision rules of the independent design whose power is computed exactly.
METHODS = ("overlap", "newcombe", "ztest")
_DESIGNS = ("independent", "paired")
_APPROXIMATIONS = ("score", "arcsine")

# Outcomes whose binomial tail mass is below this are left out of the
# enumeration. At most _TAIL is dropped from each tail of each variant, so the
# exact power is off by less than 4 * _TAIL = 4e-12 (and never by more than the
# mass dropped); the saving at n = 1,000 is a grid of ~4e4 instead of 1e6 cells.
_TAIL = 1e-12
_SCAN_TAIL = 1e-4  # the coarse first pass of sample_size; see there


# --- argument checks -------------------------------------------------------


def _single(name: str, arr: np.ndarray) -> np.ndarray:
    if arr.ndim:
        raise InvalidArgument(f"{name} must be a single number, not an array of shape {arr.shape}")
    return arr


def _rate(name: str, value: Any) -> float:
    return float(_single(name, as_rate(name, value)))


def _count(name: str, value: Any, *, minimum: int = 1) -> int:
    return int(_single(name, as_counts(name, value, minimum=minimum)))


#: Trials per variant exact enumeration takes (its memory grows with them).
MAX_EXACT_TRIALS = 100_000

#: The most trials a power figure draws (one exact power per number of trials).
MAX_FIGURE_TRIALS = 1_000


def _trials(name: str, value: Any) -> int:
    """A number of trials for exact enumeration: at least 1, at most :data:`MAX_EXACT_TRIALS`."""
    n = _count(name, value)
    if n > MAX_EXACT_TRIALS:
        raise InvalidArgument(
            f"{name}={n} is more than the {MAX_EXACT_TRIALS:,} trials exact power enumerates; "
            "at that size the normal approximation (sample_size(..., exact=False)) is as good"
        )
    return n


def _target(value: Any) -> float:
    """A target power, from 0.5 to 0.9999 (the bounds of a level)."""
    target = float(_single("power", as_rate("power", value, open_interval=True)))
    return check_level(target, "power")


#: The most experiments per design a plan's search simulates: the search keeps
#: every experiment's counts in memory, so this bound is below the one of a
#: simulation (``MAX_EXPERIMENTS``); 20,000 keep a power near 80% within ±0.6 points.
MAX_PLAN_EXPERIMENTS = 20_000


def _plan_experiments(value: Any) -> int:
    n = check_experiments(value)
    if n > MAX_PLAN_EXPERIMENTS:
        raise InvalidArgument(
            f"experiments={n} is more than the {MAX_PLAN_EXPERIMENTS:,} a plan simulates per "
            "design (it keeps them all in memory); 8,000 keep a power near 80% within ±0.9 points"
        )
    return n


# --- exact power, independent design ---------------------------------------


def _support(n: int, p: float, tail: float = _TAIL) -> tuple[np.ndarray, np.ndarray]:
    """Counts 0..n with their binomial probabilities, tails below ``tail`` dropped."""
    k = np.arange(n + 1)
    if p in (0.0, 1.0):
        at = 0 if p == 0.0 else n
        return np.array([at]), np.array([1.0])
    from ..stats._binomial import binom_pmf as _binom_pmf

    pmf = _binom_pmf(k, n, p)
    # Tail masses by summing from each end, which keeps small tails accurate.
    lower = np.concatenate(([0.0], np.cumsum(pmf)[:-1]))  # mass strictly below k
    upper = np.concatenate((np.cumsum(pmf[::-1])[::-1][1:], [0.0]))  # strictly above k
    lo = int(np.count_nonzero(lower <= tail)) - 1  # lower[0] == 0, so lo >= 0
    hi = int(np.argmax(upper <= tail))  # upper[n] == 0, so one exists
    return k[lo : hi + 1], pmf[lo : hi + 1]


def _decide(
    k_a: np.ndarray, n_a: Any, k_b: np.ndarray, n_b: Any, *, method: str, level: float
) -> np.ndarray:
    # The decision rule is compare_counts' own, so that power is the probability
    # that compare_counts says b_better: one rule, one place.
    from ..stats._compare import decide

    return np.asarray(decide(k_a, n_a, k_b, n_b, method=method, level=level))


def _outcome_probabilities(
    p_a: float, p_b: float, n_a: int, n_b: int, *, method: str, level: float
) -> tuple[float, float]:
    """P(b_better) and P(a_better) by enumeration of both binomial outcomes."""
    k_a, w_a = _support(n_a, p_a)
    k_b, w_b = _support(n_b, p_b)
    d = _decide(k_a[:, None], n_a, k_b[None, :], n_b, method=method, level=level)
    d = np.broadcast_to(d, (k_a.size, k_b.size))
    b_better = float(w_a @ (d == 1) @ w_b)
    a_better = float(w_a @ (d == -1) @ w_b)
    return min(max(b_better, 0.0), 1.0), min(max(a_better, 0.0), 1.0)


def _many_probabilities(
    p_a: float,
    p_b: float,
    ns: Sequence[int] | np.ndarray,
    *,
    method: str,
    level: float,
    budget: int = 2_000_000,
    tail: float = _TAIL,
) -> np.ndarray:
    """P(b_better) for equal trials ``n`` per variant, for every n in ``ns``.

    The same enumeration as :func:`_outcome_probabilities`, with the grids of
    many n judged in one call of the decision rule (up to ``budget`` cells at
    a time), so that scanning n = 1, 2, ... is not dominated by call overhead.
    """
    out = np.empty(len(ns))
    start = 0
    while start < len(ns):
        parts_ka, parts_kb, parts_n, parts_w, parts_g = [], [], [], [], []
        cells, stop = 0, start
        while stop < len(ns) and (cells == 0 or cells < budget):
            n = int(ns[stop])
            k_a, w_a = _support(n, p_a, tail)
            k_b, w_b = _support(n, p_b, tail)
            ka, kb = np.meshgrid(k_a, k_b, indexing="ij")
            parts_ka.append(ka.ravel())
            parts_kb.append(kb.ravel())
            parts_w.append(np.outer(w_a, w_b).ravel())
            parts_n.append(np.full(ka.size, n))
            parts_g.append(np.full(ka.size, stop - start))
            cells += ka.size
            stop += 1
        n_flat = np.concatenate(parts_n)
        d = _decide(
            np.concatenate(parts_ka),
            n_flat,
            np.concatenate(parts_kb),
            n_flat,
            method=method,
            level=level,
        )
        weights = np.concatenate(parts_w) * (d == 1)
        sums = np.bincount(np.concatenate(parts_g), weights=weights, minlength=stop - start)
        out[start:stop] = np.clip(sums, 0.0, 1.0)
        start = stop
    return out


def power(
    p_a: float,
    p_b: float,
    trials: int,
    *,
    method: str = "newcombe",
    level: float = 0.95,
    trials_b: int | None = None,
) -> float:
    """Exact probability that ``compare_counts`` says B is better.

    A and B have true pass rates ``p_a`` and ``p_b`` and are run on
    ``trials`` independent trials each (``trials_b`` for B if it differs).
    Every pair of outcomes ``(k_a, k_b)`` is enumerated with its binomial
    probability and judged by the same decision rule as
    :func:`evalstats.stats._compare.compare_counts`; no sampling. With
    ``p_a == p_b`` the result is the rule's one-sided false-positive rate
    (nominally (1 - level) / 2, but exactly this figure: 0.0284 for
    ``power(0.5, 0.5, 50)``).

    Parameters
    ----------
    p_a, p_b : float
        True pass rates of A and B, in [0, 1].
    trials : int
        Trials of A (and of B unless ``trials_b`` is given), at least 1.
    method : {"newcombe", "overlap", "ztest"}
        The decision rule: the Newcombe hybrid score interval for p_b - p_a
        excludes 0; the two Wilson intervals do not overlap; the pooled
        two-proportion z test is significant.
    level : float
        Confidence level of the rule (two-sided).
    trials_b : int, optional
        Trials of B.

    Returns
    -------
    float
        The power, exact up to 4e-12: binomial tails with less than 1e-12
        probability are left out of the enumeration.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between
    independent proportions. Statistics in Medicine 17, 873-890.

    Examples
    --------
    >>> round(power(0.7, 0.9, 100, method="newcombe"), 3)
    0.953
    >>> round(power(0.7, 0.9, 100, method="overlap"), 3)
    0.805
    >>> round(power(0.8, 0.8, 50, method="ztest"), 4)  # its false-positive rate
    0.0261
    """
    p_a = _rate("p_a", p_a)
    p_b = _rate("p_b", p_b)
    n_a = _trials("trials", trials)
    n_b = n_a if trials_b is None else _trials("trials_b", trials_b)
    method = check_method(method, METHODS)
    level = check_level(level)
    return _outcome_probabilities(p_a, p_b, n_a, n_b, method=method, level=level)[0]


# --- power curves and tables -----------------------------------------------


def _pct(x: float) -> str:
    """A percentage: whole above 10%, one decimal below it and near 100%."""
    if math.isnan(x):
        return "n/a"
    p = 100 * x
    if (p < 10 or p > 99) and abs(p - round(p)) > 0.05:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


@dataclass(frozen=True)
class PowerCurve:
    """Exact power and false-positive rate of one rule over a range of trials.

    ``power[i]`` and ``false_positive_rate[i]`` belong to ``trials[i]`` trials
    per variant; the false-positive rate is the power at ``p_b == p_a``.
    Exact power is not monotone in the number of trials (a saw-tooth, because
    counts are discrete), which the curve shows.
    """

    p_a: float
    p_b: float
    method: str
    level: float
    trials: np.ndarray
    power: np.ndarray
    false_positive_rate: np.ndarray

    def smallest(self, target: float) -> int | None:
        """The smallest number of trials on the curve with power >= ``target``."""
        hits = np.nonzero(self.power >= target)[0]
        return int(self.trials[hits[0]]) if hits.size else None

    def __str__(self) -> str:
        lines = [
            f"power of {self.method!r} to find B better: p_a={self.p_a:g}, p_b={self.p_b:g}, "
            f"level={self.level:g}",
            f"{'trials':>8} {'power':>8} {'false pos.':>10}",
        ]
        for n, pw, fp in zip(self.trials, self.power, self.false_positive_rate, strict=True):
            lines.append(f"{int(n):>8d} {_pct(float(pw)):>8} {_pct(float(fp)):>10}")
        lines.append(_ONE_SIDED.format(nominal=_pct((1 - self.level) / 2)))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "p_a": self.p_a,
            "p_b": self.p_b,
            "method": self.method,
            "level": self.level,
            "trials": [int(n) for n in self.trials],
            "power": [float(x) for x in self.power],
            "false_positive_rate": [float(x) for x in self.false_positive_rate],
        }

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw power (and the false-positive rate, dotted) against trials."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        (line,) = ax.plot(self.trials, self.power, label=f"{self.method} power", **kwargs)
        ax.plot(
            self.trials,
            self.false_positive_rate,
            linestyle=":",
            color=line.get_color(),
            label=f"{self.method} false positives",
        )
        ax.set_xlabel("trials per variant")
        ax.set_ylabel("probability of 'B is better'")
        ax.set_ylim(0, 1)
        from matplotlib.ticker import PercentFormatter

        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))  # as the texts write it
        return ax


def power_curve(
    p_a: float,
    p_b: float,
    trials_range: Iterable[int],
    *,
    method: str = "newcombe",
    level: float = 0.95,
) -> PowerCurve:
    """Exact power and false-positive rate for each number of trials in a range.

    Parameters
    ----------
    p_a, p_b : float
        True pass rates of A and B.
    trials_range : iterable of int
        Trials per variant, each at least 1 (for example ``range(1, 101)``).
    method, level
        The decision rule, as in :func:`power`.

    Returns
    -------
    PowerCurve

    References
    ----------
    Chernick, M. R., & Liu, C. Y. (2002). The saw-toothed behavior of power
    versus sample size and software solutions: single binomial proportion
    using exact methods. The American Statistician 56, 149-155.

    Examples
    --------
    >>> curve = power_curve(0.7, 0.9, [20, 40, 60], method="newcombe")
    >>> [round(float(x), 3) for x in curve.power]
    [0.341, 0.631, 0.794]
    >>> [round(float(x), 3) for x in curve.false_positive_rate]
    [0.027, 0.024, 0.026]
    """
    p_a = _rate("p_a", p_a)
    p_b = _rate("p_b", p_b)
    method = check_method(method, METHODS)
    level = check_level(level)
    if hasattr(trials_range, "__len__") and len(trials_range) > MAX_EXACT_TRIALS:  # type: ignore[arg-type]
        raise InvalidArgument(
            f"trials_range has {len(trials_range):,} numbers of trials; the limit is "  # type: ignore[arg-type]
            f"{MAX_EXACT_TRIALS:,}"
        )
    ns = as_counts("trials_range", list(trials_range), minimum=1).ravel()
    if ns.size and int(ns.max()) > MAX_EXACT_TRIALS:
        _trials("trials_range", int(ns.max()))
    pw = _many_probabilities(p_a, p_b, ns, method=method, level=level)
    fp = _many_probabilities(p_a, p_a, ns, method=method, level=level)
    return PowerCurve(p_a, p_b, method, level, ns, pw, fp)


@dataclass(frozen=True)
class PowerTable:
    """Exact power and false-positive rate for several rules and trial counts.

    ``rows`` holds one dict per (method, trials) with keys ``method``,
    ``trials``, ``power`` and ``false_positive_rate``.
    """

    p_a: float
    p_b: float
    level: float
    rows: tuple[dict[str, Any], ...]

    def __str__(self) -> str:
        head = (
            f"Chance of concluding 'B is better': power when A passes {_pct(self.p_a)} "
            f"and B {_pct(self.p_b)},\none-sided false positives (a false 'B better') "
            f"when B is no better; level {self.level:g}"
        )
        lines = [head, f"{'method':<10} {'trials':>7} {'power':>7} {'false pos.':>10}"]
        for r in self.rows:
            lines.append(
                f"{r['method']:<10} {r['trials']:>7d} {_pct(r['power']):>7} "
                f"{_pct(r['false_positive_rate']):>10}"
            )
        if any(r["method"] == "mcnemar" for r in self.rows):
            lines.append(
                "mcnemar: paired design (trials = pairs), A's and B's outcomes on a pair "
                "independent; false positives with both at A's rate"
            )
        else:
            lines.append("false positives: both variants at A's rate")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "p_a": self.p_a,
            "p_b": self.p_b,
            "level": self.level,
            "rows": [dict(r) for r in self.rows],
        }


def power_table(
    p_a: float,
    p_b: float,
    trials: Sequence[int],
    *,
    methods: Sequence[str] = ("newcombe",),
    level: float = 0.95,
) -> PowerTable:
    """Exact power with its false-positive rate for each method and trial count.

    ``methods`` may include ``"mcnemar"`` for the paired design (outcomes of
    A and B on a pair assumed independent, see :func:`paired_power`).

    Examples
    --------
    >>> print(power_table(0.7, 0.9, [40], methods=["overlap", "newcombe"]))
    Chance of concluding 'B is better': power when A passes 70% and B 90%,
    one-sided false positives (a false 'B better') when B is no better; level 0.95
    method      trials   power false pos.
    overlap         40     29%       0.3%
    newcombe        40     63%       2.4%
    false positives: both variants at A's rate
    """
    p_a = _rate("p_a", p_a)
    p_b = _rate("p_b", p_b)
    level = check_level(level)
    ns = [_trials("trials", n) for n in trials]
    if not ns:
        raise InvalidArgument("trials=[] must name at least one number of trials")
    rows = []
    for m in methods:
        m = check_method(m, (*METHODS, "mcnemar"))
        for n in ns:
            if m == "mcnemar":
                pw = paired_power(p_a, p_b, n, level=level)
                fp = paired_power(p_a, p_a, n, level=level)
            else:
                pw = _outcome_probabilities(p_a, p_b, n, n, method=m, level=level)[0]
                fp = _outcome_probabilities(p_a, p_a, n, n, method=m, level=level)[0]
            rows.append({"method": m, "trials": n, "power": pw, "false_positive_rate": fp})
    return PowerTable(p_a, p_b, level, tuple(rows))


# --- exact power, paired design (the score test, McNemar's statistic) ------------


def _discordance(p_a: float, p_b: float, discordance: Any, correlation: Any) -> float:
    """The probability that A and B disagree on a pair, checked for consistency."""
    delta = p_b - p_a
    lo = abs(delta)
    hi = min(p_a + p_b, 2.0 - p_a - p_b)
    if discordance is not None and correlation is not None:
        raise InvalidArgument("give discordance or correlation, not both")
    if discordance is None:
        r = 0.0 if correlation is None else float(correlation)
        if not -1.0 <= r <= 1.0 or math.isnan(r):
            raise InvalidArgument(f"correlation={correlation!r} must be between -1 and 1")
        both = p_a * p_b + r * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
        psi = p_a + p_b - 2.0 * both
        if not lo - 1e-12 <= psi <= hi + 1e-12:
            raise InvalidArgument(
                f"correlation={correlation!r} is impossible for p_a={p_a:g} and p_b={p_b:g}; "
                f"the discordance it implies ({psi:.4g}) must lie between {lo:.4g} and {hi:.4g}"
            )
        return min(max(psi, lo), hi)
    psi = _rate("discordance", discordance)
    if not lo - 1e-12 <= psi <= hi + 1e-12:
        raise InvalidArgument(
            f"discordance={discordance!r} is impossible for p_a={p_a:g} and p_b={p_b:g}; "
            f"it must lie between |p_b - p_a|={lo:.4g} and {hi:.4g}"
        )
    return min(max(psi, lo), hi)


def _paired_b_better(p_a: float, p_b: float, pairs: int, psi: float, *, level: float) -> float:
    """P(compare's paired test says b_better) over ``pairs`` pairs with discordance ``psi``."""
    from scipy.stats import binom

    from ..stats._compare import THESE_CASES_INTERVAL
    from ..stats._intervals import _z
    from ..stats._tango import CORRECTIONS, thresholds

    if psi == 0.0:
        return 0.0
    pi_b = ((psi + (p_b - p_a)) / 2.0) / psi  # P(only_b | discordant)
    pi_b = min(max(pi_b, 0.0), 1.0)
    d, w = _support(pairs, psi)
    # the least B-only count with which the score test at 0 says b_better
    t = thresholds(d, _z(level), CORRECTIONS[THESE_CASES_INTERVAL])
    return min(max(float(w @ binom.sf(t - 1, d, pi_b)), 0.0), 1.0)


def paired_power(
    p_a: float,
    p_b: float,
    pairs: int,
    *,
    discordance: float | None = None,
    correlation: float | None = None,
    level: float = 0.95,
) -> float:
    """Exact power of the paired comparison to find B better in a paired design.

    Each of ``pairs`` pairs runs A and B on the same item. The pair disagrees
    (one passes, the other fails) with probability ``discordance``; give it
    directly, or give the ``correlation`` of A's and B's outcomes on a pair
    (the phi coefficient), or neither, in which case A and B are taken to be
    independent given the pair (correlation 0), as for a stand-in whose slips
    are independent draws.

    The number of discordant pairs is ``D ~ Binomial(pairs, discordance)`` and,
    given ``D = d``, the pairs only B passes are ``Binomial(d, p01 /
    discordance)`` with ``p01 = (discordance + p_b - p_a) / 2``. The power is
    the exact sum over ``d`` of the probability that the test of
    ``compare(..., method="mcnemar")`` says B is better: Tango's score test at
    0 with a quarter-pair continuity correction, whose statistic is
    McNemar's, ``(|only_b - only_a| - 1/4) / sqrt(d)``.

    Parameters
    ----------
    p_a, p_b : float
        Marginal pass rates of A and B.
    pairs : int
        Number of pairs (trials per variant), at least 1.
    discordance, correlation : float, optional
        How often A and B disagree on a pair, or the correlation of their
        outcomes; at most one.
    level : float
        Confidence level; B is better when the two-sided p-value is below
        ``1 - level`` and B won more of the discordant pairs.

    Returns
    -------
    float

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12, 153-157.
    Tango, T. (1998). Equivalence test and confidence interval for the
    difference in proportions for the paired-sample design. Statistics in
    Medicine 17, 891-908.
    Connor, R. J. (1987). Sample size for testing differences in proportions
    for the paired-sample design. Biometrics 43, 207-211.

    Examples
    --------
    >>> round(paired_power(0.7, 0.9, 60), 3)
    0.775
    >>> round(paired_power(0.7, 0.9, 60, discordance=0.2), 3)  # B never worse
    0.996
    >>> round(paired_power(0.7, 0.7, 60), 4)  # the false-positive rate
    0.022
    """
    p_a = _rate("p_a", p_a)
    p_b = _rate("p_b", p_b)
    n = _count("pairs", pairs)
    level = check_level(level)
    psi = _discordance(p_a, p_b, discordance, correlation)
    return _paired_b_better(p_a, p_b, n, psi, level=level)


_ONE_SIDED = (
    "false pos.: one-sided, a false 'B better' when B is exactly as good (nominal "
    "{nominal}); the exact figure, which discrete counts can put above the nominal one"
)


# --- sample sizes ----------------------------------------------------------


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.isf(q))


def _approximate_independent(
    p_a: float, p_b: float, target: float, method: str, level: float, approximation: str
) -> float:
    """Normal-approximation trials per variant (not rounded)."""
    delta = abs(p_b - p_a)
    za, zb = _z((1 - level) / 2), _z(1 - target)
    va, vb = p_a * (1 - p_a), p_b * (1 - p_b)
    if approximation == "arcsine":
        # Cohen's effect size h = 2 asin(sqrt(p_b)) - 2 asin(sqrt(p_a)); the
        # variance of 2 asin(sqrt(p_hat)) is 1/n. As statsmodels'
        # NormalIndPower with proportion_effectsize (Cohen 1988, ch. 6).
        # Power counts both rejection tails, as NormalIndPower and R's
        # pwr.2p.test do: Phi(h sqrt(n/2) - z) + Phi(-h sqrt(n/2) - z). The far
        # tail only adds power, so n lies below the near-tail answer
        # 2 ((z + z_b) / h)^2; solve for it there.
        from scipy.optimize import brentq
        from scipy.special import ndtr

        h = abs(2 * math.asin(math.sqrt(p_b)) - 2 * math.asin(math.sqrt(p_a)))
        near = 2.0 * ((za + zb) / h) ** 2

        def shortfall(n: float) -> float:
            s = h * math.sqrt(n / 2.0)
            return float(ndtr(s - za) + ndtr(-s - za)) - target

        tiny = 1e-9
        if near <= tiny or shortfall(tiny) >= 0:
            return tiny  # the target is below the test's size: any n reaches it
        return float(brentq(shortfall, tiny, near, xtol=1e-10, rtol=1e-14))
    if method == "ztest":
        # The pooled variance under the null, the unpooled one under the
        # alternative: the formula of R's power.prop.test (strict = FALSE),
        # Fleiss, Levin & Paik (2003), eq. 4.14 without continuity correction.
        pbar = (p_a + p_b) / 2
        root = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(va + vb)
        return (root / delta) ** 2
    if method == "overlap":
        # The intervals separate when p_b_hat - p_a_hat exceeds the sum of the
        # two half-widths, z (se_a + se_b), not z sqrt(se_a^2 + se_b^2).
        root = za * (math.sqrt(va) + math.sqrt(vb)) + zb * math.sqrt(va + vb)
        return (root / delta) ** 2
    # newcombe: an unpooled (Wald-type) test of p_b - p_a.
    return (za + zb) ** 2 * (va + vb) / delta**2


def _approximate_paired(p_a: float, p_b: float, psi: float, target: float, level: float) -> float:
    # Connor (1987), eq. (3): n = [z_{a/2} sqrt(psi) + z_b sqrt(psi - delta^2)]^2 / delta^2
    delta = abs(p_b - p_a)
    za, zb = _z((1 - level) / 2), _z(1 - target)
    return ((za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta**2, 0.0))) / delta) ** 2


def sample_size(
    p_a: float,
    p_b: float,
    *,
    power: float = 0.8,
    method: str = "newcombe",
    level: float = 0.95,
    exact: bool = True,
    design: str = "independent",
    discordance: float | None = None,
    correlation: float | None = None,
    approximation: str = "score",
    max_trials: int = 2000,
) -> int:
    """Trials per variant needed to find B better with the given power.

    With ``exact=True``, the smallest ``n`` whose exact power (from
    :func:`power`, or :func:`paired_power` for ``design="paired"``) reaches
    the target. Exact power saw-tooths with ``n``: because counts are
    discrete, there may be some ``n' > n`` whose power falls below the target
    again; :func:`power_curve` shows the whole curve. Every ``n`` from 1 up is
    tried, up to ``max_trials``: first by an enumeration that drops tails of
    probability 1e-4 (a lower bound on power, at most 4e-4 short), and by the
    full one wherever the target falls within that margin, so the answer is
    that of the full enumeration. The work grows with n squared: about a
    second for n near 1,000.

    With ``exact=False``, the normal-approximation answer, rounded up:

    * ``ztest``: the formula of R's ``power.prop.test`` (pooled variance under
      the null, unpooled under the alternative). ``approximation="arcsine"``
      uses Cohen's effect size h instead and counts both rejection tails, as
      statsmodels' ``NormalIndPower().solve_power(proportion_effectsize(p_b,
      p_a))`` and R's ``pwr.2p.test`` do.
    * ``newcombe``: the unpooled (Wald) test of the difference.
    * ``overlap``: the difference must exceed the sum of the two half-widths.
    * ``design="paired"``: Connor (1987), eq. (3), the normal approximation
      of McNemar's test (the exact answer is for the paired score test of
      :func:`paired_power`).

    Parameters
    ----------
    p_a, p_b : float
        True pass rates; they must differ.
    power : float
        The target power, strictly between 0 and 1.
    method : {"newcombe", "overlap", "ztest"}
        The decision rule of the independent design (ignored when paired).
    level : float
        Confidence level of the rule.
    exact : bool
        Exact enumeration (True) or normal approximation (False).
    design : {"independent", "paired"}
        Independent samples, or pairs compared by the paired score test
        (McNemar's statistic; :func:`paired_power`).
    discordance, correlation : float, optional
        For the paired design, as in :func:`paired_power`.
    approximation : {"score", "arcsine"}
        Which normal approximation ``exact=False`` uses (see above).
    max_trials : int
        The largest ``n`` tried with ``exact=True``.

    Returns
    -------
    int
        Trials per variant (pairs, for the paired design).

    Raises
    ------
    InvalidArgument
        When no ``n`` up to ``max_trials`` reaches the target; the message
        names the largest ``n`` tried and its power.

    References
    ----------
    Fleiss, J. L., Levin, B., & Paik, M. C. (2003). Statistical Methods for
    Rates and Proportions, 3rd ed., section 4.2.
    Connor, R. J. (1987). Sample size for testing differences in proportions
    for the paired-sample design. Biometrics 43, 207-211.
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences,
    2nd ed., chapter 6.

    Examples
    --------
    >>> sample_size(0.5, 0.75, power=0.9, method="ztest", exact=False)
    77
    >>> sample_size(0.7, 0.9, method="newcombe")
    61
    >>> sample_size(0.7, 0.9, design="paired")
    64
    """
    p_a = _rate("p_a", p_a)
    p_b = _rate("p_b", p_b)
    target = _target(power)
    method = check_method(method, METHODS)
    level = check_level(level)
    design = check_method(design, _DESIGNS, name="design")
    approximation = check_method(approximation, _APPROXIMATIONS, name="approximation")
    max_n = _count("max_trials", max_trials)
    if p_a == p_b:
        raise InvalidArgument(
            f"p_a={p_a:g} equals p_b={p_b:g}: there is no difference to detect "
            "(power at p_a == p_b is the false-positive rate)"
        )
    psi = _discordance(p_a, p_b, discordance, correlation) if design == "paired" else 0.0
    if not exact:
        if design == "paired":
            n = _approximate_paired(p_a, p_b, psi, target, level)
        else:
            n = _approximate_independent(p_a, p_b, target, method, level, approximation)
        return max(1, math.ceil(n - 1e-9))
    last = 0.0
    if design == "paired":
        for n in range(1, max_n + 1):
            last = _paired_b_better(p_a, p_b, n, psi, level=level)
            if last >= target:
                return n
    else:
        # Scan every n from 1 in blocks, doubling the block as n grows.
        start, block = 1, 16
        while start <= max_n:
            ns = np.arange(start, min(start + block, max_n + 1))
            # A coarse enumeration first: dropping tails of mass 1e-4 only
            # removes probability, so the exact power lies in
            # [coarse, coarse + 4e-4]; n is decided by the coarse value unless
            # the target falls in that gap, and then by the full enumeration.
            coarse = _many_probabilities(p_a, p_b, ns, method=method, level=level, tail=_SCAN_TAIL)
            for i in np.nonzero(coarse + 4 * _SCAN_TAIL >= target)[0]:
                if coarse[i] >= target:
                    return int(ns[i])
                n = int(ns[i])
                if _outcome_probabilities(p_a, p_b, n, n, method=method, level=level)[0] >= target:
                    return n
            last = float(coarse[-1])
            start += block
            block = min(2 * block, 256)
    raise InvalidArgument(
        f"power={target:g} is not reached by any n up to max_trials={max_n}: "
        f"n={max_n} gives power {last:.3f}; raise max_trials or use exact=False"
    )


# --- cases x repeats: fitting the case model and planning -------------------
_SPREAD_Z = 1.6448536269514722  # one-sided 5% normal quantile, scipy.stats.norm.isf(0.05)


def _case_means(outcomes: Mapping[Any, Sequence[Any]], name: str) -> dict[Any, tuple[int, int]]:
    """``{case: (passes, runs)}`` from ``{case: [bool, ...]}``, checked.

    ``None`` entries (unmeasured samples: the service gave no answer) leave the
    counts, as they leave pass rates; a case with no measured run is left out.
    """
    if not isinstance(outcomes, Mapping) or not outcomes:
        raise InvalidArgument(f"{name} must be a non-empty dict {{case_id: [bool, ...]}}")
    out = {}
    for case, runs in outcomes.items():
        values = [v for v in runs if v is not None]
        if any(not isinstance(v, bool | np.bool_ | int) or v not in (0, 1) for v in values):
            raise InvalidArgument(f"{name}[{case!r}] must hold only True/False outcomes")
        if values:
            out[case] = (int(sum(bool(v) for v in values)), len(values))
    if not out:
        raise InvalidArgument(f"{name} has no measured runs")
    return out


#: Repeats per case a pilot run may hold (a plan lays out one slot per repeat).
MAX_PILOT_REPEATS = 100_000


def _check_pilot_size(run: Any) -> None:
    """Refuse a pilot whose repeat numbers or runs would lay out absurdly many slots."""
    shown = run.path or "the results"
    runs = run.manifest.get("runs")
    if isinstance(runs, int) and not isinstance(runs, bool) and runs > MAX_PILOT_REPEATS:
        raise InvalidArgument(
            f"{shown}: runs={runs} in the manifest is more than the {MAX_PILOT_REPEATS:,} "
            "repeats a pilot may hold (MAX_PILOT_REPEATS)"
        )
    repeat = run.max_repeat()  # the largest repeat scheduled or recorded
    if repeat is not None and repeat >= MAX_PILOT_REPEATS:
        raise InvalidArgument(
            f"{shown}: repeat={repeat} is more than the {MAX_PILOT_REPEATS:,} repeats a "
            "pilot may hold (MAX_PILOT_REPEATS)"
        )


def case_model_from_results(
    results: Any,
    *,
    variants: Sequence[str] | None = None,
    p_a: float | None = None,
    p_b: float | None = None,
) -> CaseModel:
    """Fit a :class:`CaseModel` from a pilot run's results file.

    ``results`` is a run (:class:`~evalstats.reading._source.RunSource`), a
    path to a results file, a :class:`~evalstats.results._file.Results`
    already read, or its :class:`~evalstats.reading._tally.Tally`. ``variants`` names A and
    B (default: the first two variants of the run; with one variant B is a
    copy of A). ``p_a`` and ``p_b`` replace the fitted rates (``p_b`` also as a
    gain over A, ``"+0.1"``, as :func:`plan` takes it). The model keeps the
    pilot's per-case counts: pass it to ``plan(..., pilot=model)``, which
    carries what the pilot leaves uncertain into the plan. Unmeasured samples
    are left out, as everywhere.
    """
    from ..reading._source import tally

    run = tally(results)  # one pass over a file, keeping only the counts
    _check_pilot_size(run)
    names = tuple(run.variants()) if variants is None else tuple(variants)
    if not names:
        raise InvalidArgument("the results hold no variants to fit a case model to")
    a = run.outcomes(names[0])
    b = run.outcomes(names[1]) if len(names) > 1 else None
    fitted = fit_case_model(a, b)
    new_a = fitted.p_a if p_a is None else _rate("p_a", p_a)
    new_b = fitted.p_b
    if p_b is not None:
        from ._pilot import wanted

        want = wanted(p_b)
        if want.kind == "observed":
            raise InvalidArgument(
                "p_b='observed' is the fitted B rate: leave p_b out (plan takes 'observed')"
            )
        new_b = min(want.rate(new_a), 1.0)
    return CaseModel(
        new_a,
        new_b,
        fitted.icc,
        fitted.spread,
        cases=fitted.cases,
        repeats=fitted.repeats,
        icc_b=fitted.icc_b,
        pilot=fitted.pilot,
    )


def anova_icc(outcomes: Mapping[Any, Sequence[Any]]) -> float:
    """The ANOVA estimate of the intra-case correlation of binary outcomes.

    ``rho = (MSB - MSW) / (MSB + (n0 - 1) MSW)`` from the one-way analysis of
    variance of the 0/1 outcomes grouped by case, with
    ``n0 = (N - sum(n_i^2) / N) / (k - 1)`` for unequal numbers of runs;
    negative estimates are set to 0. With fewer than two cases, or when every
    outcome is the same, there is nothing to estimate from and the result is 0.

    References
    ----------
    Ridout, M. S., Demetrio, C. G. B., & Firth, D. (1999). Estimating
    intraclass correlation for binary data. Biometrics 55, 137-148
    (the ANOVA estimator).

    Examples
    --------
    >>> round(anova_icc({"a": [True] * 9 + [False], "b": [True, False] * 5,
    ...                  "c": [False] * 9 + [True]}), 3)
    0.475
    """
    return _icc(_case_means(outcomes, "outcomes"))


def _icc(cells: Mapping[Any, tuple[int, int]]) -> float:
    """:func:`anova_icc` from ``{case: (passes, runs)}``."""
    y = np.array([c[0] for c in cells.values()], dtype=float)
    n = np.array([c[1] for c in cells.values()], dtype=float)
    k, total = y.size, n.sum()
    if k < 2 or total <= k:
        return 0.0
    ssb = float((y**2 / n).sum() - y.sum() ** 2 / total)
    ssw = float(y.sum() - (y**2 / n).sum())
    msb, msw = ssb / (k - 1), ssw / (total - k)
    n0 = (total - float((n**2).sum()) / total) / (k - 1)
    denom = msb + (n0 - 1) * msw
    if denom <= 0:
        return 0.0
    return float(min(max((msb - msw) / denom, 0.0), 0.99))


def fit_case_model(
    outcomes_a: Mapping[Any, Sequence[Any]],
    outcomes_b: Mapping[Any, Sequence[Any]] | None = None,
) -> CaseModel:
    """Estimate a :class:`CaseModel` from a pilot run, so it can plan the real one.

    ``outcomes_a`` (and ``outcomes_b``) map each case to its run outcomes,
    ``{case_id: [True, False, ...]}``. The pass rates are the pooled rates.
    The estimates follow the model :func:`plan` simulates (see
    :class:`CaseModel`), in which ``icc`` is A's intra-case correlation and
    B's case rates are A's shifted on the logit scale:

    * ``icc`` is the ANOVA estimate (:func:`anova_icc`) from A's outcomes
      alone; B's own estimate is kept in ``icc_b``. (B's icc differs from A's
      by the model itself: a logit shift towards 0 or 1 squeezes the case
      rates, so B at 0.9 has a smaller icc than A at 0.7. Averaging the two
      would understate A's.)
    * ``spread`` (the case-by-variant standard deviation on the logit scale)
      is set by the method of moments, so that the model's variance of
      per-case differences B - A matches the observed one after removing the
      binomial noise of the runs. It is 0 unless the observed differences
      vary more than the model without spread implies by more than 1.645
      standard errors (a one-sided 5% test): a spread the pilot cannot tell
      from 0 is reported as 0, since near 0 the moment estimate is the square
      root of a noisy variance and errs upward by 0.2 to 0.4 even on 3,000
      cases x 10 runs. It is also 0 when ``outcomes_b`` is missing (then B's
      rate equals A's).

    On 3,000 cases x 10 runs from ``CaseModel(0.7, 0.9, 0.3)`` the estimates
    are within 0.03 of the icc and 0.1 of the spread (tests/test_plan.py).

    References
    ----------
    Ridout, M. S., Demetrio, C. G. B., & Firth, D. (1999). Biometrics 55,
    137-148.

    Examples
    --------
    >>> a = {"x": [True] * 8 + [False] * 2, "y": [True] * 4 + [False] * 6}
    >>> b = {"x": [True] * 10, "y": [True] * 7 + [False] * 3}
    >>> m = fit_case_model(a, b)
    >>> (m.p_a, m.p_b, m.cases, m.repeats)
    (0.6, 0.85, 2, 10)
    """
    from ..stats._casemodel import PilotCounts

    cells_a = _case_means(outcomes_a, "outcomes_a")
    runs_a = sum(c[1] for c in cells_a.values())
    p_a = sum(c[0] for c in cells_a.values()) / runs_a
    icc = _icc(cells_a)
    repeats = round(runs_a / len(cells_a))
    if outcomes_b is None:
        counts = PilotCounts(tuple(cells_a.values()))
        return CaseModel(
            p_a, p_a, icc, 0.0, cases=len(cells_a), repeats=repeats, icc_b=icc, pilot=counts
        )
    cells_b = _case_means(outcomes_b, "outcomes_b")
    runs_b = sum(c[1] for c in cells_b.values())
    p_b = sum(c[0] for c in cells_b.values()) / runs_b
    icc_b = _icc(cells_b)
    common = [c for c in cells_a if c in cells_b]
    counts = PilotCounts(
        tuple(cells_a.values()),
        tuple(cells_a[c] for c in common),
        tuple(cells_b[c] for c in common),
    )
    model = CaseModel(
        p_a, p_b, icc, 0.0, cases=len(cells_a), repeats=repeats, icc_b=icc_b, pilot=counts
    )
    if len(common) < 2:
        return model
    diffs, noise = [], []
    for c in common:
        (ya, na), (yb, nb) = cells_a[c], cells_b[c]
        diffs.append(yb / nb - ya / na)
        # unbiased estimate of the binomial variance of each case mean
        noise.append(
            (ya / na) * (1 - ya / na) / max(na - 1, 1) + (yb / nb) * (1 - yb / nb) / max(nb - 1, 1)
        )
    d, e = np.asarray(diffs), np.asarray(noise)
    # Each case's (d - mean)^2 - noise estimates the between-case variance of
    # the differences; their mean is the method-of-moments estimate and their
    # spread its standard error.
    u = (d - d.mean()) ** 2 * (d.size / (d.size - 1)) - e
    between = float(u.mean())
    se = float(u.std(ddof=1) / math.sqrt(d.size))
    # A spread is reported only when the differences vary more than the model
    # without spread implies by more than sampling noise (one-sided 5%): near
    # 0 the moment estimate of spread behaves like the square root of a noisy
    # variance (about 0.2 to 0.4 at 3,000 cases x 10 runs when there is none),
    # and a spread that the pilot cannot tell from 0 is reported as 0.
    if p_a in (0.0, 1.0) or p_b in (0.0, 1.0):
        # every run of a variant passed (or failed): no logit shift spans it
        return model
    if between - model.moments()["between"] <= _SPREAD_Z * se:
        return model
    from scipy.optimize import brentq

    def gap(s: float) -> float:
        return CaseModel(p_a, p_b, model.icc, s).moments()["between"] - between

    top = 8.0
    spread = top if gap(top) < 0 else float(brentq(gap, 0.0, top, xtol=1e-06))
    return CaseModel(
        p_a,
        p_b,
        model.icc,
        spread,
        cases=len(cells_a),
        repeats=repeats,
        icc_b=icc_b,
        pilot=counts,
    )


# --- cases x repeats: the plan --------------------------------------------


_NC_BOUND = 1e6


def _nct_sf(x: Any, df: Any, nc: Any) -> np.ndarray:
    """``scipy.stats.nct.sf(x, df, nc)`` for df > 0 and finite nc, without importing scipy.stats.

    It calls the function ``nct.sf`` itself calls (Boost's noncentral t in
    ``scipy.special``), clipped to [0, 1] as ``nct.sf`` clips it, so the figures
    are the same to the last bit; importing ``scipy.stats`` alone takes about
    0.5 s and 50 MB, more than ``gate`` takes to count 100,000 samples. A SciPy
    without it falls back on ``nct.sf``. Past ``|nc| = 1e6`` Boost returns NaN
    (from about 1e12), where the tail is 0 or 1 to the last bit (as it is from
    about 40), so ``nc`` is clipped there.
    """
    nc = np.clip(nc, -_NC_BOUND, _NC_BOUND)
    try:
        from scipy.special._ufuncs import _nct_sf as sf
    except ImportError:  # pragma: no cover - a SciPy that no longer has it
        from scipy.stats import nct

        return np.asarray(nct.sf(x, df, nc), dtype=float)
    with np.errstate(over="ignore"):
        return np.clip(sf(x, df, nc), 0.0, 1.0)


def clustered_power(
    model: CaseModel, cases: Any, repeats: Any, *, level: float = 0.95
) -> np.ndarray:
    """Approximate power of the clustered paired comparison under a case model.

    Each of ``cases`` cases runs A and B ``repeats`` times each; the analysis
    is the cluster-robust (per-case) paired t test with ``cases - 1`` degrees
    of freedom, B better when the t statistic exceeds its two-sided critical
    value. The variance of a case's mean difference is
    ``between + within / repeats`` (Miller 2024, eq. 9-10: the variance of the
    case means plus the mean within-case variance over the number of
    resamples; for one variant this is ``p(1 - p) (1 + (R - 1) icc) / R``,
    the design effect). Power is that of the one-sample t test, from the
    noncentral t distribution. Vectorised over ``cases`` and ``repeats``.

    References
    ----------
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640, section 5, eq. 9-10.
    """
    from scipy.special import stdtrit

    level = check_level(level)
    c = as_counts("cases", cases, minimum=2).astype(float)
    r = np.asarray(repeats, dtype=float)
    if np.any(r < 1) or np.any(np.isnan(r)):
        raise InvalidArgument(f"repeats={repeats!r} must be at least 1")
    m = model.moments()
    var = m["between"] + m["within"] / r
    df = c - 1
    crit = -stdtrit(df, (1 - level) / 2)  # t.isf, as scipy.stats computes it
    with np.errstate(divide="ignore", invalid="ignore"):
        nc = m["difference"] / np.sqrt(var / c)
    nc = np.where(var > 0, nc, np.sign(m["difference"]) * np.inf)
    out = np.where(
        np.isinf(nc), (nc > 0).astype(float), _nct_sf(crit, df, np.where(np.isinf(nc), 0.0, nc))
    )
    return np.asarray(out, dtype=float)


def _ceiling(model: CaseModel, cases: Any, level: float) -> np.ndarray:
    """Power with unlimited repeats: only the spread between cases is left."""
    return clustered_power(model, cases, np.inf, level=level)


def _first_reaching(f: Any, target: float, lo: int, hi: int) -> int | None:
    """The smallest integer x in [lo, hi] with f(x) >= target, f increasing in x.

    Power of the clustered t test increases with cases (more degrees of
    freedom and a larger noncentrality) and with repeats (a smaller variance),
    so a bisection finds the first that reaches the target.
    """
    if float(f(hi)) < target:
        return None
    if float(f(lo)) >= target:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(f(mid)) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _gallop(
    f: Any, target: float, lo: int, hi: int, guess: int, *, crit: float | None = None
) -> int | None:
    """As :func:`_first_reaching`, searching outwards from ``guess`` first.

    For simulated power, whose cost grows with the design: probes step away
    from the guess by 1, 2, 4, ... until they bracket the first x that
    reaches the target, then bisect; the far bound is evaluated only when
    nothing nearer reaches the target. With ``crit`` (for a search over
    cases: the critical value of the test's z statistic), the search starts
    where the powers found near the guess say the target lies
    (:func:`_aimed`), and its first step is a hundredth of that; only its
    path differs.
    """
    x = min(max(guess, lo), hi)
    step = 1
    if crit is not None:
        x = _aimed(f, x, target, crit, lo, hi)
        step = max(1, x // 100)
    if float(f(x)) >= target:
        good = x
        while True:
            if good == lo:
                return lo
            probe = max(good - step, lo)
            if float(f(probe)) < target:
                bad = probe
                break
            good, step = probe, 2 * step
    else:
        bad = x
        while True:
            if bad == hi:
                return None
            probe = min(bad + step, hi)
            if float(f(probe)) >= target:
                good = probe
                break
            bad, step = probe, 2 * step
    while good - bad > 1:
        mid = (good + bad) // 2
        if float(f(mid)) >= target:
            good = mid
        else:
            bad = mid
    return good


def _aimed(f: Any, x: int, target: float, crit: float, lo: int, hi: int) -> int:
    """Where the cases reaching ``target`` power lie, from the power at ``x`` and one more.

    The power of a test on n cases is about Phi(sqrt(n) k - crit), for an
    effect per case k in standard units. The power found at ``x`` gives k,
    and k a second design; the line through the two powers' probits against
    sqrt(n) gives the third, returned. The normal approximation's guess can
    be off by half (it misjudges k with few cases or rates near 0 or 1, and
    the quantile of a posterior's powers falls faster than one model's);
    two simulated powers put the search within a few percent. A power of 0
    or 1 tells nothing of k: the design found so far is returned.
    """
    from scipy.special import ndtri

    def probit(n: int) -> float:
        p = float(f(n))
        return float(ndtri(p)) if 0.0 < p < 1.0 else math.nan

    def within(n: float) -> int:
        return min(max(math.ceil(n), lo), hi)

    aim = float(ndtri(target))
    z0 = probit(x)
    k = (z0 + crit) / math.sqrt(x)
    if not k > 0.0:
        return x
    x1 = within(((aim + crit) / k) ** 2)
    z1 = probit(x1) if x1 != x else math.nan
    if not math.isfinite(z1) or z1 == z0:
        return x1
    root = math.sqrt(x) + (aim - z0) * (math.sqrt(x1) - math.sqrt(x)) / (z1 - z0)
    return within(root**2) if root > 0.0 else x1


#: The planner simulates designs of at most this many cases; beyond it the
#: clustered t statistic is a mean of thousands of case differences, the
#: normal approximation holds, and the plan uses it (and says so).
_SIMULATED_CASES = 1000


class _Powers:
    """Power of designs under one model: simulated (default) or approximated."""

    def __init__(
        self, model: CaseModel, level: float, *, experiments: int | None, seed: int
    ) -> None:
        self.model = model
        self.level = level
        self.approximated_beyond = False
        self._sim: Any = None
        self._hits: dict[tuple[int, float], int] = {}  # each design simulated once
        if experiments is not None:
            from ._simulate import DesignPowers

            self._sim = DesignPowers(model, experiments=experiments, level=level, seed=seed)

    @property
    def simulated(self) -> bool:
        return self._sim is not None

    @property
    def experiments(self) -> int | None:
        """Simulated experiments per design (None when approximated)."""
        return None if self._sim is None else int(self._sim.experiments)

    def model_at(self, repeats: float) -> CaseModel:
        """The model whose power is searched at ``repeats``."""
        return self.model

    def approximate(self, cases: float, repeats: float) -> float:
        return float(clustered_power(self.model, cases, repeats, level=self.level))

    def _exact(self, cases: int, repeats: float) -> bool:
        """Whether (cases, repeats) is left to the approximation."""
        if cases > _SIMULATED_CASES:
            self.approximated_beyond = True
            return True
        # Unlimited repeats on cases that do not differ (no variance between
        # them): the differences are known exactly, and the power is 1 (or 0).
        return math.isinf(repeats) and self.model.moments()["between"] == 0.0

    def _hits_of(self, cases: int, repeats: float) -> int:
        key = (cases, repeats)
        if key not in self._hits:
            self._hits[key] = self._sim.hits(cases, repeats)
        return self._hits[key]

    def __call__(self, cases: int, repeats: float) -> float:
        if self._sim is None or self._exact(cases, repeats):
            return self.approximate(cases, repeats)
        return self._hits_of(cases, repeats) / self._sim.experiments

    def interval(self, cases: int, repeats: float) -> Interval | None:
        """The simulated power with its Monte-Carlo interval (None when approximated)."""
        if self._sim is None or self._exact(cases, repeats):
            return None
        from ._simulate import _wilson

        return _wilson(self._hits_of(cases, repeats), self._sim.experiments)

    def fewest(
        self, f: Any, target: float, lo: int, hi: int, guess: Any, crit: float | None = None
    ) -> int | None:
        """The smallest x in [lo, hi] with f(x) >= target; ``guess()`` starts a simulated
        search (moved by the power found there, with ``crit``: see :func:`_gallop`)."""
        if self._sim is None:
            return _first_reaching(f, target, lo, hi)
        start = guess()
        if start > 2 * _SIMULATED_CASES:
            # far beyond what is simulated: the approximation answers
            self.approximated_beyond = True
            return _first_reaching(f, target, lo, hi)
        return _gallop(f, target, lo, hi, start, crit=crit)


class _PilotPowers:
    """Power of designs over the case models a pilot leaves uncertain.

    The power searched for a design is the one it reaches in ``certainty`` of
    :data:`~evalstats.planning._pilot.MODELS` case models drawn from the
    posterior: the (1 - certainty) quantile of their simulated powers, each
    model simulated on its own ``experiments // 100`` experiments (at least
    10) by one :class:`~evalstats.planning._simulate.DesignPowers` over their
    :class:`~evalstats.planning._pilot.Mixture`, with common random numbers
    across designs. Each model's power is then noisy (sd 0.045 at 80
    experiments and power 0.8), which spreads the quantile a little towards
    the conservative side. The normal approximation beside it is the same
    quantile of each model's :func:`clustered_power`, over the posterior's
    ranked draws.
    """

    def __init__(
        self, posterior: Any, level: float, *, experiments: int | None, seed: int, certainty: float
    ) -> None:
        self.posterior, self.level, self.certainty = posterior, level, certainty
        self.approximated_beyond = False
        self._memo: dict[tuple[int, float], tuple[float, int]] = {}
        self._sim: Any = None
        self.mixture: Any = None
        if experiments is not None:
            from ._pilot import MODELS, Mixture
            from ._simulate import DesignPowers

            per_model = max(10, experiments // 100)
            self.mixture = Mixture(posterior.draw(MODELS, 2), per_model, posterior.spread)
            self._sim = DesignPowers(
                self.mixture, experiments=self.mixture.experiments, level=level, seed=seed
            )

    @property
    def simulated(self) -> bool:
        return self._sim is not None

    @property
    def experiments(self) -> int | None:
        return None if self._sim is None else int(self._sim.experiments)

    def model_at(self, repeats: float) -> CaseModel:
        """The ranked draw at the certainty's quantile of the approximation's effect."""
        return self.posterior.model(self.posterior.hard(repeats, self.certainty))

    def approximate(self, cases: float, repeats: float) -> float:
        pw = _approximate_powers(self.posterior.ranked, cases, repeats, self.level)
        return float(np.quantile(pw, 1.0 - self.certainty))

    def _quantile(self, cases: int, repeats: float) -> tuple[float, int]:
        key = (cases, repeats)
        if key not in self._memo:
            powers = self.mixture.powers(self._sim.found_better(cases, repeats))
            k = at_certainty(powers, self.certainty)
            self._memo[key] = (float(powers[k]), k)
        return self._memo[key]

    def __call__(self, cases: int, repeats: float) -> float:
        if self._sim is None or cases > _SIMULATED_CASES:
            self.approximated_beyond = self.approximated_beyond or self._sim is not None
            return self.approximate(cases, repeats)
        return self._quantile(cases, repeats)[0]

    def model_for(self, cases: int, repeats: float) -> CaseModel:
        """The drawn model at the quantile of simulated power for this design."""
        if self._sim is None or cases > _SIMULATED_CASES:
            return self.model_at(repeats)
        d = self.mixture.draws
        k = self._quantile(cases, repeats)[1]
        return CaseModel(float(d.p_a[k]), float(d.p_b[k]), float(d.icc[k]), self.posterior.spread)

    def interval(self, cases: int, repeats: float) -> Interval | None:
        return None  # a quantile over models, not a share of experiments

    fewest = _Powers.fewest  # the same search, over the quantile of the models' powers


def at_certainty(powers: np.ndarray, certainty: float) -> int:
    """Which of the models' ``powers`` is reached or beaten by ``certainty`` of them: the
    index of their (1 - certainty) order statistic (ties in the models' order)."""
    order = np.argsort(powers, kind="stable")
    return int(order[certainty_place(powers.size, certainty)])


def certainty_place(size: int, certainty: float) -> int:
    """The place, in ascending order of ``size`` models, of their (1 - certainty) order
    statistic (the floor of (1 - certainty) size, at most the last)."""
    return min(int((1.0 - certainty) * size), size - 1)


def _approximate_powers(draws: Any, cases: float, repeats: float, level: float) -> np.ndarray:
    """:func:`clustered_power` of each drawn model, from its effect per case.

    The draws of a gridded posterior repeat the same models (about 250 distinct
    among the 4,000 ranked ones of the benchmark pilot), so each distinct
    effect's tail is computed once (2.3 microseconds each), the same value.
    """
    from scipy.special import stdtrit

    score, back = np.unique(draws.score(repeats), return_inverse=True)
    crit = -stdtrit(cases - 1, (1 - level) / 2)
    finite = np.isfinite(score)
    nc = np.where(finite, math.sqrt(cases) * np.where(finite, score, 0.0), 0.0)
    out: np.ndarray = np.where(finite, _nct_sf(crit, cases - 1, nc), (score > 0).astype(float))
    return out[back.ravel()]


def _no_gain(posterior: Any, certainty: float) -> str:
    """Why a pilot leaves no gain to plan for with this certainty."""
    gain = posterior.gain_interval
    shown = (
        f"the pilot's gain of B over A is {_signed_pct(gain[0])} ({_signed_pct(gain[1])} to "
        f"{_signed_pct(gain[2])})"
        if gain is not None
        else "the rates the pilot allows"
    )
    return (
        f"p_b='observed': {shown}, which leaves a chance above {_pct(1 - certainty)} that B is "
        "no better than A; give the p_b you want to detect"
    )


def _signed_pct(x: float) -> str:
    return f"{100 * x:+.0f}%"


#: The ceiling's figures of a plan made without them.
_UNKNOWN_CEILING: dict[str, Any] = {
    "ceiling": math.nan,
    "approximate_ceiling": None,
    "ceiling_interval": None,
}


@dataclass(frozen=True)
class Plan:
    """How many cases and repeats a paired, clustered eval needs.

    The plan searches designs by simulating its own case model
    (:class:`~evalstats.planning._simulate.DesignPowers`: the clustered comparison's own
    decision rule, common random numbers across designs) unless made with
    ``simulate=False``; ``method`` says which (``"simulation"`` or
    ``"approximation"``).

    ``power`` is the power of ``cases`` x ``repeats`` (per variant): the
    estimate of an independent simulation of that design (``simulated``, a
    :class:`~evalstats.planning._simulate.PowerResult` with Monte-Carlo intervals for
    power and false-positive rate), or the normal approximation without
    simulation. ``approximate_power`` is always the normal approximation
    (:func:`clustered_power`), shown beside it: it is rough with few cases or
    rates near 0 or 1. ``false_positive_rate`` is that of the same rule when
    B is no better (simulated, or ``1 - level`` over 2 for the t test).
    ``ceiling`` is the power with these cases and unlimited repeats
    (``ceiling_interval`` its Monte-Carlo interval, ``approximate_ceiling``
    the approximation). ``reachable`` says whether the target is met; when it
    is not, ``cases_needed`` maps a number of repeats to the cases that would
    meet it and ``repeats_needed`` says how many repeats the given cases
    would need (None when no number of repeats up to ``max_repeats``, the
    search bound, does it; ``minimum_cases`` is then set when the ceiling
    itself is below the target, and says how many cases unlimited repeats
    would need). ``approximated_beyond`` is True when some design searched
    had more cases than the planner simulates (1,000), where the
    approximation was used.

    A plan from a pilot (``plan(..., pilot=...)``) states a different power:
    ``power`` is then the design's ``assurance``, its power averaged over
    what the pilot leaves uncertain (an :class:`Interval` whose limits are
    the 95% Monte-Carlo interval); ``reach`` is the share of case models
    drawn afresh from the pilot's posterior in which the design reaches the
    target (planned to be ``certainty``), ``model`` the drawn model at that
    quantile of power, and ``false_positive_rate`` the rule's averaged over
    the posterior too; ``simulated`` is None. ``pilot`` describes the pilot
    and its posterior (the intervals of A's rate and the icc, what B should
    reach, the models simulated).
    """

    model: CaseModel
    target: float
    level: float
    cases: int | None
    repeats: int | None
    power: float
    false_positive_rate: float
    reachable: bool
    design_effect: float | None
    cases_needed: dict[int, int] = field(default_factory=dict)
    repeats_needed: int | None = None
    minimum_cases: int | None = None
    fixed: str = ""
    simulated: Any = None
    max_repeats: int | None = None
    method: str = "approximation"
    approximate_power: float | None = None
    experiments: int | None = None
    approximated_beyond: bool = False
    assurance: Interval | None = None
    certainty: float | None = None
    pilot: dict[str, Any] | None = None
    reach: Interval | None = None
    #: The ceiling's figures (``ceiling``, ``approximate_ceiling``, ``ceiling_interval``),
    #: worked out when first asked for: the text of a plan of one run a case does not
    #: show its ceiling, and simulating unlimited repeats is a quarter of its time.
    _ceilings: Callable[[], dict[str, Any]] = field(
        default=lambda: _UNKNOWN_CEILING, repr=False, compare=False
    )

    @property
    def ceiling(self) -> float:
        """The power of these cases with unlimited repeats."""
        out: float = self._ceilings()["ceiling"]
        return out

    @property
    def approximate_ceiling(self) -> float | None:
        """The normal approximation of :attr:`ceiling`."""
        out: float | None = self._ceilings()["approximate_ceiling"]
        return out

    @property
    def ceiling_interval(self) -> Interval | None:
        """The Monte-Carlo interval of a simulated :attr:`ceiling` (else None)."""
        out: Interval | None = self._ceilings()["ceiling_interval"]
        return out

    @property
    def calls(self) -> int | None:
        """Model calls for both variants: 2 x cases x repeats."""
        if self.cases is None or self.repeats is None:
            return None
        return 2 * self.cases * self.repeats

    def _power_text(self) -> str:
        sim = self.simulated
        if sim is None:
            return (
                f"power {_pct(self.power)} (normal approximation), "
                f"false-positive rate {_pct(self.false_positive_rate)}"
            )
        return (
            f"power {_ci(sim.power)} by simulation (normal approximation "
            f"{_pct(float(self.approximate_power or 0.0))}), "
            f"false-positive rate {_ci(sim.false_positive_rate)}"
        )

    def _ceiling_text(self) -> str:
        if self.ceiling_interval is None:
            return f"{_pct(self.ceiling)}"
        return (
            f"{_ci(self.ceiling_interval)} by simulation (normal approximation "
            f"{_pct(float(self.approximate_ceiling or 0.0))})"
        )

    def _pilot_head(self) -> list[str]:
        """The first lines of a plan from a pilot: what it plans for, and what the pilot
        leaves uncertain."""
        pilot = self.pilot or {}
        want, fixed_a = pilot.get("p_b") or {}, pilot.get("p_a")
        kind, value = want.get("kind"), want.get("value")
        if kind == "observed":
            gain = pilot["gain_interval"]
            what = (
                f"the pilot's own gain of B over A, {_signed_pct(gain[0])} "
                f"({_signed_pct(gain[1])} to {_signed_pct(gain[2])})"
            )
        elif fixed_a is not None:
            b = value if kind == "rate" else fixed_a + value
            what = f"{_pct(fixed_a)} -> {_pct(b)}"
        elif kind == "rate":
            what = f"B at {_pct(value)}"
        else:
            what = f"a gain of {100 * value:.0f} points over A (whatever A's rate)"
        if fixed_a is None:
            mean, low, high = pilot["p_a_interval"]
            a_text = f"A's rate {_pct(mean)} ({_pct(low)} to {_pct(high)})"
        else:
            a_text = f"A's rate {_pct(fixed_a)} (given)"
        mean, low, high = pilot["icc_interval"]
        spread = pilot.get("spread") or 0.0
        head = (
            f"Plan to detect {what} with {_pct(self.target)} power (level {self.level:g}), "
            f"from a pilot of {pilot['cases']} cases x {_runs(pilot['repeats'])}: {a_text}, "
            f"icc {mean:.2f} ({low:.2f} to {high:.2f})"
            + (
                f", spread {spread:g} ({'given' if pilot.get('spread_given') else 'as fitted'})"
                if spread
                else ""
            )
            + "; 95% intervals of what the pilot leaves uncertain (Jeffreys prior)."
        )
        lines = [head]
        kept = float(pilot.get("kept", 1.0))
        if kind in ("rate", "gain") and kept < 0.995:
            limit = value if kind == "rate" else 1 - value
            lines.append(
                f"B can gain that much only if A's rate is below {_pct(limit)}, which the pilot "
                f"gives probability {_pct(kept)}: the plan takes it to be."
            )
        return lines

    def _planned_for(self) -> str:
        m = self.model
        return (
            f"the case model at the {_pct(1 - float(self.certainty or 0.0))} point of those "
            f"the pilot allows (A at {_pct(m.p_a)}, B at {_pct(m.p_b)}, icc {m.icc:.2f})"
        )

    def _pilot_design(self) -> list[str]:
        """What a plan from a pilot says of its design."""
        sure = _pct(float(self.certainty or 0.0))
        assured = self.assurance
        if assured is None or assured.method == "approximation":
            return [
                f"Run {self.cases} cases x {_runs(self.repeats)} per variant ({self.calls} "
                f"calls): power {_pct(self.power)} averaged over what the pilot leaves "
                f"uncertain (assurance, by the normal approximation); it reaches "
                f"{_pct(self.target)} for {sure} of the case models the pilot allows."
            ]
        reach = self.reach
        reach_text = "" if reach is None else f" {_ci(reach)} of"
        return [
            f"Run {self.cases} cases x {_runs(self.repeats)} per variant ({self.calls} calls): "
            f"power {_ci(assured)} averaged over what the pilot leaves uncertain "
            f"(assurance), and at least {_pct(self.target)} for{reach_text} the case "
            f"models the pilot allows (planned for {sure}); false-positive rate "
            f"{_pct(self.false_positive_rate)}.",
            f"Sized for {self._planned_for()}.",
        ]

    def __str__(self) -> str:
        m = self.model
        if self.pilot is not None:
            lines = self._pilot_head()
        else:
            lines = [
                f"Plan to detect {_pct(m.p_a)} -> {_pct(m.p_b)} with {_pct(self.target)} power "
                f"(level {self.level:g}), cases differing with icc {m.icc:g}"
                + (f" and case-by-variant spread {m.spread:g}" if m.spread else "")
                + "."
            ]
        if self.reachable:
            if self.pilot is not None:
                lines.extend(self._pilot_design())
            else:
                lines.append(
                    f"Run {self.cases} cases x {_runs(self.repeats)} per variant "
                    f"({self.calls} calls): {self._power_text()}."
                )
            # With icc 0 and no spread, cases do not differ: a repeat carries as
            # much information as a new case (design effect 1), and more cases
            # only give the clustered test more degrees of freedom.
            alike = m.icc == 0 and m.spread == 0
            if self.fixed == "" and self.repeats == 1:
                if alike:
                    why = "more cases give the clustered test more degrees of freedom"
                elif m.icc > 0:
                    why = f"repeats carry the design effect 1 + (R - 1) x {m.icc:g}"
                else:
                    why = "repeats cannot average out how B's gain differs between cases"
                lines.append(
                    "With every call costing the same, one run per case is the cheapest "
                    f"design: {why}."
                )
            if alike and self.repeats and self.repeats > 1:
                lines.append(
                    "Cases do not differ here (icc 0, no spread), so a repeat is worth as much "
                    "as a new case; more cases only add degrees of freedom to the test."
                )
            elif self.design_effect is not None and self.repeats and self.repeats > 1:
                if m.icc > 0:
                    text = (
                        f"Each extra repeat is worth less than a new case: the design effect "
                        f"of {self.repeats} repeats is {self.design_effect:.2f} (1 + (R - 1) x icc)"
                    )
                else:
                    text = (
                        "Each extra repeat is worth less than a new case: B's gain differs "
                        f"between cases (spread {m.spread:g}), which repeats cannot average out"
                    )
                if self.ceiling < 0.995:
                    text += (
                        f", and no number of repeats on {self.cases} cases gets past "
                        f"{_pct(self.ceiling)} power"
                    )
                lines.append(text + ".")
        else:
            if self.pilot is not None:
                lines.append(
                    "Powers below are those reached in "
                    f"{_pct(float(self.certainty or 0.0))} of the case models the pilot allows:"
                )
            if self.repeats is not None and self.cases is not None:
                lines.append(
                    f"{self.cases} cases x {_runs(self.repeats)} per variant give only "
                    f"{self._power_text()}."
                )
            if self.repeats_needed is not None:
                lines.append(
                    f"With {self.cases} cases, {self.repeats_needed} repeats would reach "
                    "the target."
                )
            elif self.cases is not None and self.ceiling >= self.target:
                # The ceiling is above the target, but further out than the search went.
                lines.append(
                    f"With {self.cases} cases, more than {self.max_repeats} repeats would be "
                    f"needed (the search bound, max_repeats); unlimited repeats would give "
                    f"{self._ceiling_text()}. Add cases."
                )
            elif self.cases is not None:
                lines.append(
                    f"With {self.cases} cases no number of repeats reaches "
                    f"{_pct(self.target)}: the ceiling is {self._ceiling_text()}, set by how "
                    "much cases differ. Add cases."
                )
            if self.cases_needed:
                alts = ", ".join(
                    f"{c} cases x {_runs(r)}" for r, c in sorted(self.cases_needed.items())
                )
                lines.append(f"Enough cases: {alts}.")
            if self.minimum_cases is not None:
                lines.append(
                    f"At least {self.minimum_cases} cases are needed however many repeats."
                )
        if self.method == "simulation" and self.pilot is not None:
            lines.append(
                f"Designs found by simulating {self.pilot['models']} case models drawn from the "
                f"pilot's posterior ({self.pilot['per_model']} experiments each, the clustered "
                "comparison's own rule); ranges are 95% Monte-Carlo intervals."
            )
        elif self.method == "simulation":
            lines.append(
                f"Designs found by simulating the case model ({self.experiments} experiments "
                "each, the clustered comparison's own rule); ranges are 95% Monte-Carlo "
                "intervals."
            )
            if self.approximated_beyond:
                lines.append(
                    f"Designs of more than {_SIMULATED_CASES} cases use the normal "
                    "approximation, which holds there."
                )
        else:
            lines.append(
                "Designs from the normal approximation alone (not simulated): rough with "
                "few cases or rates near 0 or 1."
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        ci = self.ceiling_interval
        return {
            "method": self.method,
            "simulated": None if self.simulated is None else self.simulated.to_dict(),
            "model": self.model.to_dict(),
            "target": self.target,
            "level": self.level,
            "cases": self.cases,
            "repeats": self.repeats,
            "calls": self.calls,
            "power": self.power,
            "approximate_power": self.approximate_power,
            "false_positive_rate": self.false_positive_rate,
            "ceiling": self.ceiling,
            "ceiling_interval": None if ci is None else ci.to_dict(),
            "approximate_ceiling": self.approximate_ceiling,
            "reachable": self.reachable,
            "design_effect": self.design_effect,
            "cases_needed": {str(r): c for r, c in sorted(self.cases_needed.items())},
            "repeats_needed": self.repeats_needed,
            "minimum_cases": self.minimum_cases,
            "max_repeats": self.max_repeats,
            "experiments": self.experiments,
            "approximated_beyond": self.approximated_beyond,
            "assurance": None if self.assurance is None else self.assurance.to_dict(),
            "certainty": self.certainty,
            "pilot": self.pilot,
            "reach": None if self.reach is None else self.reach.to_dict(),
        }

    def _repr_html_(self) -> str:
        """A notebook's display: the text ``print`` gives, its first line as the headline."""
        from .._repr import result_html

        head, _, rest = str(self).partition("\n")
        return result_html(rest, headline=head)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


_SUGGESTED_REPEATS = (1, 3, 5, 10)


def _ci(interval: Interval) -> str:
    """A Monte-Carlo interval of a rate, in :func:`_pct`'s precision (0.1 below 10%)."""
    return (
        f"{_pct(float(interval.estimate))} ({_pct(float(interval.low))} to "
        f"{_pct(float(interval.high))})"
    )


def _runs(r: int | None) -> str:
    return f"{r} run" if r == 1 else f"{r} runs"


def plan(
    p_a: float | None = None,
    p_b: float | str | None = None,
    *,
    icc: float | None = None,
    cases: int | None = None,
    repeats: int | None = None,
    power: float = 0.8,
    level: float = 0.95,
    spread: float | None = None,
    model: CaseModel | None = None,
    pilot: CaseModel | None = None,
    certainty: float = 0.8,
    max_cases: int = 100_000,
    max_repeats: int = 10_000,
    simulate: bool = True,
    experiments: int = 8000,
    seed: int = 0,
) -> Plan:
    """Cases and repeats for a paired comparison when cases differ.

    A and B run on the same cases, each case ``repeats`` times per variant,
    compared by the clustered paired comparison (``compare(...,
    method="clustered")``). Given ``cases``, the plan finds the fewest
    repeats that reach the target, or says that no number of repeats does
    (the ceiling set by the spread between cases) and how many cases would.
    Given ``repeats``, it finds the fewest cases. Given both, it reports their
    power and what would reach the target. Given neither, one run per case on
    enough cases: when every call costs the same, that is the cheapest design,
    since repeats carry the design effect ``1 + (R - 1) icc``.

    The search is by simulation of the case model itself
    (:class:`~evalstats.planning._simulate.DesignPowers`): ``experiments`` simulated
    experiments per design, judged by the comparison's own decision rule
    (:func:`~evalstats.planning._simulate.clustered_decisions`, which calls the
    interval functions ``compare`` uses), with common random numbers across
    designs, so neighbouring designs differ by design and not by simulation
    luck. A design is taken when the lower end of its 95% Monte-Carlo interval
    reaches the target (not its estimate, which, being the first of many
    noisy estimates to cross, is biased upwards), and is then simulated
    afresh (an independent seed) for the power and false-positive rate it
    states; should that fresh figure still fall short of the target, the
    search goes on to larger designs. The normal approximation
    (:func:`clustered_power`) is shown beside it; with few cases it can be
    far off (at 20 cases, 0.9 -> 0.97, icc 0.3 it asks for 162 repeats where
    18 give 80%). ``simulate=False`` plans by the approximation alone.

    From a pilot (``pilot``, a model fitted by :func:`fit_case_model` or
    :func:`case_model_from_results`), the plan does not take the pilot's
    estimates as truth: a pilot of 10 cases leaves A's rate and the icc
    uncertain, and planning for its point estimates delivers less power
    than it states. It draws case models from the pilot's posterior
    (:class:`~evalstats.planning._pilot.Posterior`), searches for the
    smallest design that reaches the target in ``certainty`` of them (200
    models, each simulated on its own experiments by the same rule), so
    that over what the pilot leaves uncertain the design reaches the target
    with about that probability, and states its power averaged over the
    posterior (its assurance), simulated with a fresh case model for every
    experiment (``simulations/plan_check.py`` measures both against pilots
    drawn from known models). Nor does it plan for the pilot's observed
    gain unless asked: ``p_b`` is required.

    Parameters
    ----------
    p_a : float, optional
        Mean pass rate of A over cases. Required unless ``model`` or
        ``pilot`` is given; with a pilot, a given ``p_a`` fixes A's rate
        (its uncertainty is then that of the icc alone).
    p_b : float or str, optional
        What B should reach: a mean pass rate (``0.9``), or a gain over A
        written with its sign (``"+0.1"``: B ten points above A, whatever A's
        rate). With a pilot also ``"observed"``: the pilot's own B, with the
        uncertainty of its gain over A. Required unless ``model`` is given.
    icc : float
        Intra-case correlation of A's outcomes, in [0, 1): the share of the
        outcome variance that lies between cases. Required unless ``model``
        or ``pilot`` is given.
    cases, repeats : int, optional
        What is fixed.
    power : float
        The target power.
    level : float
        Confidence level of the test.
    spread : float, optional
        Case-by-variant standard deviation on the logit scale (0, or the
        pilot's fitted one: B's gain is the same shift for every case).
    model : CaseModel, optional
        A case model taken as truth; overrides ``p_a``, ``p_b``, ``icc`` and
        ``spread``. A model fitted from a pilot goes in ``pilot`` instead.
    pilot : CaseModel, optional
        A model fitted from a pilot run, with its per-case counts.
    certainty : float
        With a pilot: the probability, over what the pilot leaves uncertain,
        with which the design should reach the target power.
    max_cases, max_repeats : int
        Search bounds. When the question has no answer within them (given
        ``repeats``, no number of cases up to ``max_cases`` reaches the
        target; given only ``cases``, repeats could reach it with these cases
        but not within ``max_repeats``), :class:`InvalidArgument` names the
        bound and the power there.
    simulate : bool
        Search by simulation (True) or by the normal approximation alone.
    experiments : int
        Simulated experiments per design: 8,000 keep the 95% Monte-Carlo
        interval of a power near 80% within +-0.9 points.
    seed : int
        Seed of the simulation; the same seed gives the same plan.

    Returns
    -------
    Plan

    References
    ----------
    Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640,
    section 5, eq. 9-10.
    Donner, A., & Klar, N. (2000). Design and Analysis of Cluster
    Randomization Trials in Health Research, chapter 5 (the design effect).
    O'Hagan, A., Stevens, J. W., & Campbell, M. J. (2005). Assurance in
    clinical trial design. Pharmaceutical Statistics 4, 187-201.
    Browne, R. H. (1995). On the use of a pilot sample for sample size
    determination. Statistics in Medicine 14, 1933-1940.
    Julious, S. A., & Owen, R. J. (2006). Sample size calculations for
    clinical studies allowing for uncertainty about the variance.
    Pharmaceutical Statistics 5, 29-37.

    Examples
    --------
    >>> p = plan(0.7, 0.9, icc=0.3, cases=40, experiments=4000)
    >>> (p.cases, p.repeats, p.reachable)
    (40, 3, True)
    >>> print(p.simulated.power)  # the normal approximation says 98%
    89% (88% to 90%)
    >>> p = plan(0.7, 0.9, icc=0.3, cases=4, experiments=4000)
    >>> p.reachable, p.repeats_needed, p.minimum_cases
    (False, None, 27)
    """
    target = _target(power)
    level = check_level(level)
    n_exp = _plan_experiments(experiments) if simulate else None
    seed = _count("seed", seed, minimum=0)
    certainty = float(_single("certainty", as_rate("certainty", certainty, open_interval=True)))
    bounds = {"max_cases": max_cases, "max_repeats": max_repeats}
    if pilot is not None:
        return _plan_from_pilot(
            pilot,
            p_a,
            p_b,
            icc=icc,
            spread=spread,
            model=model,
            certainty=certainty,
            design=(cases, repeats),
            target=target,
            level=level,
            experiments=n_exp,
            seed=seed,
            bounds=bounds,
        )
    if model is None:
        model = _given_model(p_a, p_b, icc, spread)
    elif not isinstance(model, CaseModel):
        raise InvalidArgument(f"model={model!r} must be a CaseModel")
    elif model.pilot is not None:
        raise InvalidArgument(
            f"model=CaseModel(p_a={model.p_a:.3g}, p_b={model.p_b:.3g}, icc={model.icc:.3g}, "
            f"...) is fitted from a pilot of {model.pilot.cases} cases: pass it as pilot=, "
            "with the p_b to detect, so that the plan carries what the pilot leaves uncertain "
            "(or build CaseModel(p_a, p_b, icc, spread) to take the fit as truth)"
        )
    powers = _Powers(model, level, experiments=n_exp, seed=seed)
    return _searched(
        powers, cases=cases, repeats=repeats, target=target, level=level, seed=seed, **bounds
    )


def _given_model(p_a: Any, p_b: Any, icc: Any, spread: Any) -> CaseModel:
    """The case model given as numbers, checked."""
    from ._pilot import wanted

    if p_a is None:
        raise InvalidArgument(
            "p_a=None: give A's mean pass rate (or pilot=, a model fitted from a pilot run)"
        )
    rate_a = _rate("p_a", p_a)
    if p_b is None:
        raise InvalidArgument("p_b=None: give the rate B should reach, such as 0.9")
    want = wanted(p_b)
    if want.kind == "observed":
        raise InvalidArgument(
            "p_b='observed' plans for a pilot's own B rate: give pilot=, a model fitted from "
            "a pilot run"
        )
    rate_b = want.rate(rate_a)
    if rate_b > 1.0:
        raise InvalidArgument(
            f"p_b={p_b!r} puts B above 100% with p_a={rate_a:g}: give a gain of at most "
            f"+{1 - rate_a:g}"
        )
    if icc is None:
        raise InvalidArgument(
            "icc=None: give the intra-case correlation, or a model fitted from a pilot "
            "(pilot=case_model_from_results(...))"
        )
    return CaseModel(rate_a, rate_b, icc, 0.0 if spread is None else spread)


#: How often a planned design is searched again when its fresh simulation
#: falls short of the target.
_ROUNDS = 4


def _goal(target: float, experiments: int | None) -> float:
    """What a simulated power must reach for its 95% Wilson interval to lie at or above
    ``target``: the score test of ``target`` rejects at 1.96 when the estimate is at
    least ``target + 1.96 sqrt(target (1 - target) / experiments)`` (the Wilson interval
    is that test inverted)."""
    if experiments is None:
        return target
    return min(target + _WILSON_Z * math.sqrt(target * (1.0 - target) / experiments), 1.0)


_WILSON_Z = 1.959963984540054  # scipy.stats.norm.isf(0.025)


def _within_bounds(cases: Any, repeats: Any, max_c: int, max_r: Any) -> None:
    """A fixed design past the search bounds is refused: simulating it would not end."""
    max_r = _count("max_repeats", max_r)
    if cases is not None and _count("cases", cases, minimum=2) > max_c:
        raise InvalidArgument(f"cases={cases} is more than max_cases={max_c}")
    if repeats is not None and _count("repeats", repeats) > max_r:
        raise InvalidArgument(f"repeats={repeats} is more than max_repeats={max_r}")


def _searched(
    powers: Any,
    *,
    cases: int | None,
    repeats: int | None,
    target: float,
    level: float,
    seed: int,
    max_cases: int,
    max_repeats: int,
) -> Plan:
    """:func:`_plan` by ``powers``, and the planned design simulated afresh for the
    power it states; searched again, higher, while that falls short of the target."""
    from dataclasses import replace

    from ._simulate import simulate_clustered

    n_exp = powers.experiments
    goal = _goal(target, n_exp)
    args = {"level": level, "max_cases": max_cases, "max_repeats": max_repeats}

    def fresh(c: int, r: int, round_: int) -> Any:
        # The planned design, simulated afresh: its power is not the search's own
        # estimate (chosen for reaching the target, so biased upwards a little).
        return simulate_clustered(
            powers.model_at(r),
            cases=c,
            repeats=r,
            experiments=n_exp,
            level=level,
            seed=seed + 1 + round_,
        )

    given = None
    if n_exp is not None and cases is not None and repeats is not None:
        _within_bounds(cases, repeats, _count("max_cases", max_cases, minimum=2), max_repeats)
        c, r = _count("cases", cases, minimum=2), _count("repeats", repeats)
        if c <= _SIMULATED_CASES:
            given = fresh(c, r, 0)  # a design given, not chosen: judged by its own figure
    result = _plan(
        powers,
        cases=cases,
        repeats=repeats,
        target=target,
        goal=goal,
        given=None if given is None else float(given.power.estimate),
        **args,
    )
    if n_exp is None or result.cases is None or result.repeats is None:
        return result
    if result.cases > _SIMULATED_CASES:
        return result  # the approximation holds there, and the text says so
    sim = given
    for round_ in range(_ROUNDS):
        if given is None:
            sim = fresh(result.cases, result.repeats, round_)
        shortfall = target - float(sim.power.estimate)
        if given is not None or shortfall <= 0 or not result.reachable:
            break
        if round_ == _ROUNDS - 1:
            break
        # Short of the target by simulation luck: search again for a design whose
        # searched power clears it by the shortfall and one more standard error.
        goal += shortfall + math.sqrt(target * (1.0 - target) / n_exp)
        result = _plan(powers, cases=cases, repeats=repeats, target=target, goal=goal, **args)
        if result.cases is None or result.repeats is None or result.cases > _SIMULATED_CASES:
            return result
    return replace(
        result,
        simulated=sim,
        power=float(sim.power.estimate),
        false_positive_rate=float(sim.false_positive_rate.estimate),
    )


def _plan_from_pilot(
    pilot: Any,
    p_a: Any,
    p_b: Any,
    *,
    icc: Any,
    spread: Any,
    model: Any,
    certainty: Any,
    design: tuple[Any, Any],
    target: float,
    level: float,
    experiments: int | None,
    seed: int,
    bounds: dict[str, Any],
) -> Plan:
    """:func:`plan` from a pilot: for the model harder than ``certainty`` of those the
    pilot allows, with the design's assurance."""
    from dataclasses import replace

    from ._pilot import Posterior, wanted

    if not isinstance(pilot, CaseModel) or pilot.pilot is None:
        raise InvalidArgument(
            f"pilot={pilot!r} must be a CaseModel fitted from a pilot run (fit_case_model "
            "or case_model_from_results), which keeps the pilot's counts"
        )
    if model is not None:
        raise InvalidArgument("model= and pilot= exclude each other: the pilot is the model")
    if icc is not None:
        raise InvalidArgument(
            f"icc={icc!r} with pilot=: the pilot's icc is fitted, with its uncertainty"
        )
    if p_b is None:
        raise InvalidArgument(
            "p_b=None: a plan from a pilot needs the rate B should reach (such as 0.9), a "
            "gain over A ('+0.1'), or 'observed' to plan for the pilot's own B rate"
        )
    want = wanted(p_b)
    fixed_a = None if p_a is None else _rate("p_a", p_a)
    sure = float(certainty)
    spread_given = spread is not None
    if spread is None:
        spread = pilot.spread
    spread = CaseModel(0.5, 0.5, 0.0, spread).spread  # checked as the model checks it
    if want.kind == "observed" and not pilot.pilot.b:
        raise InvalidArgument(
            "p_b='observed': the pilot ran one variant, so it has no B rate of its own; "
            "give the p_b to detect"
        )
    posterior = Posterior(pilot.pilot, want, p_a=fixed_a, spread=spread, seed=seed)
    if posterior.kept < _KEPT:
        raise InvalidArgument(_out_of_reach(p_b, want, posterior))
    if np.mean(posterior.ranked.difference <= 1e-9) > 1.0 - sure:
        raise InvalidArgument(_no_gain(posterior, sure))
    powers = _PilotPowers(posterior, level, experiments=experiments, seed=seed, certainty=sure)
    cases, repeats = design
    result = _plan(
        powers, cases=cases, repeats=repeats, target=target, goal=target, level=level, **bounds
    )
    c, r = result.cases, result.repeats
    summary = {**posterior.to_dict(), "spread_given": spread_given}
    if powers.mixture is not None:
        summary.update(models=powers.mixture.models, per_model=powers.mixture.per_model)
    extra: dict[str, Any] = {"certainty": sure, "pilot": summary}
    if c is None or r is None:
        extra["model"] = powers.model_at(math.inf if r is None else r)
        return replace(result, **extra)
    planned = powers.model_for(c, r)
    extra["model"] = planned
    extra["design_effect"] = 1.0 + (r - 1) * planned.icc
    if experiments is None or c > _SIMULATED_CASES:
        from ..stats._intervals import Interval

        pw = _approximate_powers(posterior.ranked, c, r, level)
        mean = float(pw.mean())
        extra["assurance"] = Interval(mean, mean, mean, 0.95, "approximation")
        extra["power"] = mean
        return replace(result, **extra)
    from ._pilot import MODELS, Mixture
    from ._simulate import DesignPowers, _wilson

    # Afresh, with other models and experiments: the share of the pilot's models
    # in which the design reaches the target, and its power averaged over them.
    fresh = Mixture(posterior.draw(MODELS, 3), max(10, experiments // 100), spread)
    sim = DesignPowers(fresh, experiments=fresh.experiments, level=level, seed=seed + 1)
    shares = fresh.powers(sim.found_better(c, r))
    assurance, false_positives = posterior.assurance(
        c, r, experiments=experiments, level=level, stream=1
    )
    extra.update(
        assurance=assurance,
        power=float(assurance.estimate),
        reach=_wilson(int(np.count_nonzero(shares >= target)), shares.size),
        false_positive_rate=float(false_positives.estimate),
        simulated=None,
        approximate_power=powers.approximate(c, r),
    )
    return replace(result, **extra)


#: The least share of the pilot's posterior that must leave room for the gain asked.
_KEPT = 0.05


def _out_of_reach(p_b: Any, want: Any, posterior: Any) -> str:
    mean, low, high = posterior.mu_interval
    shown = (
        f"the pilot puts A's rate at {_pct(mean)} ({_pct(low)} to {_pct(high)})"
        if posterior.fixed_a is None
        else f"p_a={posterior.fixed_a:g}"
    )
    room = "B's rate" if want.kind == "rate" else "a gain that large"
    return (
        f"p_b={p_b!r}: {shown}, which leaves almost no room for {room} to be an improvement; "
        "give a higher rate or a smaller gain"
    )


def _plan(
    pw: Any,
    *,
    cases: int | None,
    repeats: int | None,
    target: float,
    goal: float,
    level: float,
    max_cases: int,
    max_repeats: int,
    given: float | None = None,
) -> Plan:
    """The plan: with the cases fixed, the repeats they need (or what more cases would
    do); otherwise the fewest cases reaching the target at the repeats given (or 1).
    ``given`` is the power of the design when both are fixed, simulated afresh."""
    max_c = _count("max_cases", max_cases, minimum=2)
    max_r = _count("max_repeats", max_repeats)
    model = pw.model_at(1 if repeats is None else _count("repeats", repeats))
    if model.p_a == model.p_b:
        raise InvalidArgument(
            f"p_a={model.p_a:g} equals p_b={model.p_b:g}: there is no difference to plan for; "
            "give the p_b you want to detect (with a pilot run of one variant, B is a copy "
            "of A until you do)"
        )
    if model.p_b < model.p_a:
        raise InvalidArgument(
            f"p_b={model.p_b:g} is below p_a={model.p_a:g}: a plan sizes an eval to show B "
            "better than A, which no number of cases shows of a B that is worse; give the "
            "p_b above p_a you want to detect"
        )
    _within_bounds(cases, repeats, max_c, max_r)
    search = _Search(model, pw, target=target, goal=goal, level=level, max_c=max_c, max_r=max_r)
    search.given = given
    if cases is not None:
        return _plan_with_cases(search, _count("cases", cases, minimum=2), repeats)
    return _plan_cases(search, repeats)


class _Search:
    """What the steps of :func:`_plan` share: the model, its powers, the target, the
    search bounds, and how a finished :class:`Plan` is made."""

    def __init__(
        self,
        model: CaseModel,
        pw: _Powers,
        *,
        target: float,
        goal: float,
        level: float,
        max_c: int,
        max_r: int,
    ) -> None:
        self.model, self.pw, self.target, self.level = model, pw, target, level
        # What a design's searched power must reach: the target, raised by the
        # Monte-Carlo error when the power is simulated (see _goal).
        self.goal = goal
        self.given: float | None = None
        self.max_c, self.max_r = max_c, max_r
        self.fp = (1 - level) / 2
        self.common: dict[str, Any] = {
            "method": "simulation" if pw.simulated else "approximation",
            "experiments": pw.experiments,
        }

    def cases_for(self, r: float) -> int | None:
        """The fewest cases reaching the target with ``r`` repeats (None past max_cases)."""
        pw, target, goal, max_c = self.pw, self.target, self.goal, self.max_c

        def guess() -> int:
            # the normal approximation's answer, where the simulated search starts
            approx = _first_reaching(lambda c: pw.approximate(c, r), target, 2, max_c)
            return max_c if approx is None else approx

        from scipy.special import ndtri

        crit = float(ndtri(1.0 - (1.0 - self.level) / 2.0))
        return pw.fewest(lambda c: pw(c, r), goal, 2, max_c, guess, crit)

    def deff(self, r: int | None) -> float | None:
        """The design effect of ``r`` repeats per case."""
        return None if r is None else 1.0 + (r - 1) * self.model.icc

    def ceiling_at(self, c: int) -> dict[str, Any]:
        """The power of ``c`` cases with unlimited repeats, simulated and approximated."""
        pw = self.pw
        return {
            "ceiling": pw(c, math.inf),
            "approximate_ceiling": pw.approximate(c, math.inf),
            "ceiling_interval": pw.interval(c, math.inf),
        }

    def done(self, ceilings: dict[str, Any] | Callable[[], dict[str, Any]], **kw: Any) -> Plan:
        """The :class:`Plan` with these fields and those every plan carries; its
        ceiling's figures are ``ceilings``, or what calling it gives when first asked."""
        pw = self.pw
        c, r = kw["cases"], kw["repeats"]
        approx = pw.approximate(c, r) if c is not None and r is not None else None
        figures = functools.cache(ceilings) if callable(ceilings) else lambda: ceilings
        return Plan(
            self.model,
            self.target,
            self.level,
            false_positive_rate=self.fp,
            approximate_power=approx,
            approximated_beyond=pw.approximated_beyond,
            _ceilings=figures,
            **self.common,
            **kw,
        )


def _plan_with_cases(search: _Search, c: int, repeats: int | None) -> Plan:
    """The plan for ``c`` cases: the repeats they need, or, with the repeats fixed too,
    the power they give and what would reach the target."""
    pw, target, max_r = search.pw, search.target, search.max_r
    ceil = search.ceiling_at(c)
    reachable_by_repeats = ceil["ceiling"] >= search.goal

    def repeats_guess() -> int:
        approx = _first_reaching(lambda r: pw.approximate(c, r), target, 1, max_r)
        # the approximation errs both ways (at 20 cases, 0.9 -> 0.97, icc 0.3
        # it asks 162 repeats where 18 do): start low and gallop up
        return 1 if approx is None else max(1, approx // 4)

    r_need = (
        pw.fewest(lambda r: pw(c, r), search.goal, 1, max_r, repeats_guess)
        if reachable_by_repeats
        else None
    )
    if repeats is None:
        return _plan_repeats(search, c, ceil, r_need)
    return _plan_both(search, c, _count("repeats", repeats), ceil, r_need)


def _plan_repeats(search: _Search, c: int, ceil: dict[str, Any], r_need: int | None) -> Plan:
    """The fewest repeats with which ``c`` cases reach the target; when no number of
    repeats does, the cases that would."""
    pw, target, max_r = search.pw, search.target, search.max_r
    reachable_by_repeats = ceil["ceiling"] >= search.goal
    if r_need is not None:
        return search.done(
            cases=c,
            repeats=r_need,
            power=pw(c, r_need),
            reachable=True,
            design_effect=search.deff(r_need),
            fixed="cases",
            ceilings=ceil,
        )
    if reachable_by_repeats:
        # Repeats could reach the target, only not within the search bound.
        raise InvalidArgument(
            f"power={target:g} is not reached by any number of repeats up to "
            f"max_repeats={max_r} with cases={c}: {max_r} repeats give power "
            f"{pw(c, max_r):.3f} (unlimited repeats {ceil['ceiling']:.3f}); add "
            "cases or raise max_repeats"
        )
    cases_for = search.cases_for
    return search.done(
        cases=c,
        repeats=None,
        power=ceil["ceiling"],
        reachable=False,
        design_effect=None,
        cases_needed={r: n for r in _SUGGESTED_REPEATS if (n := cases_for(r)) is not None},
        minimum_cases=cases_for(math.inf),
        fixed="cases",
        max_repeats=max_r,
        ceilings=ceil,
    )


def _plan_both(search: _Search, c: int, r: int, ceil: dict[str, Any], r_need: int | None) -> Plan:
    """The power of ``c`` cases with ``r`` repeats; when short of the target, the cases
    (at ``r`` repeats) or the repeats (at ``c`` cases) that would reach it."""
    pw, max_r = search.pw, search.max_r
    reachable_by_repeats = ceil["ceiling"] >= search.goal
    # A design given, not chosen: judged by its own (fresh) simulation where there is one.
    p_cr = pw(c, r) if search.given is None else search.given
    if p_cr >= search.target:
        return search.done(
            cases=c,
            repeats=r,
            power=p_cr,
            reachable=True,
            design_effect=search.deff(r),
            fixed="both",
            ceilings=ceil,
        )
    n_r = search.cases_for(r)
    return search.done(
        cases=c,
        repeats=r,
        power=p_cr,
        reachable=False,
        design_effect=search.deff(r),
        cases_needed={r: n_r} if n_r is not None else {},
        repeats_needed=r_need,
        minimum_cases=None
        if r_need is not None or reachable_by_repeats
        else search.cases_for(math.inf),
        fixed="both",
        max_repeats=max_r,
        ceilings=ceil,
    )


def _plan_cases(search: _Search, repeats: int | None) -> Plan:
    """The fewest cases reaching the target with the repeats given (1 when not given)."""
    pw, target, max_c = search.pw, search.target, search.max_c
    r = 1 if repeats is None else _count("repeats", repeats)
    c_need = search.cases_for(r)
    if c_need is None:
        raise InvalidArgument(
            f"power={target:g} is not reached by any number of cases up to "
            f"max_cases={max_c} with repeats={r}: {max_c} cases give power {pw(max_c, r):.3f}"
        )
    return search.done(
        cases=c_need,
        repeats=r,
        power=pw(c_need, r),
        reachable=True,
        design_effect=search.deff(r),
        fixed="repeats" if repeats is not None else "",
        ceilings=lambda: search.ceiling_at(c_need),
    )


def power_figure(
    p_a: float,
    p_b: float,
    trials: Sequence[int],
    *,
    methods: Sequence[str] = ("newcombe",),
    level: float = 0.95,
) -> Any:
    """A matplotlib figure of exact power against trials, 1 to ``max(trials)``.

    One solid line of power and one dotted line of the false-positive rate per
    method (``"mcnemar"`` included, as in :func:`power_table`), with the
    requested trial counts marked.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    p_a = _rate("p_a", p_a)
    p_b = _rate("p_b", p_b)
    level = check_level(level)
    ns_marked = [_trials("trials", n) for n in trials]
    if max(ns_marked, default=0) > MAX_FIGURE_TRIALS:
        raise InvalidArgument(
            f"trials={max(ns_marked)} is more than the {MAX_FIGURE_TRIALS:,} trials a power "
            "figure draws (it computes every number of trials up to the largest)"
        )
    top = max(ns_marked)
    ns = np.arange(1, top + 1)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    from .._palette import VARIANT_COLOURS

    ax.set_prop_cycle(color=list(VARIANT_COLOURS))  # the figures' one palette
    for m in methods:
        m = check_method(m, (*METHODS, "mcnemar"))
        if m == "mcnemar":
            pw = np.array([paired_power(p_a, p_b, int(n), level=level) for n in ns])
            fp = np.array([paired_power(p_a, p_a, int(n), level=level) for n in ns])
            curve = PowerCurve(p_a, p_b, m, level, ns, pw, fp)
        else:
            curve = power_curve(p_a, p_b, ns, method=m, level=level)
        curve.plot(ax)
        marked = np.array(ns_marked) - 1
        ax.plot(ns[marked], curve.power[marked], "o", color=ax.lines[-1].get_color())
    ax.axhline(0.8, color="grey", linewidth=0.5)
    ax.set_title(f"A passes {_pct(p_a)}, B {_pct(p_b)}: exact power (level {level:g})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
