"""Intervals for a mean score in [0, 1], about these cases or about cases like these.

A graded check gives each run a score in [0, 1] (a 1-5 rubric mapped
linearly, the share of facts covered, an F1). :func:`score_mean_ci` puts an
interval on the mean score of one variant's runs, grouped by case:

- ``about="cases_like_these"``: the mean over cases drawn the way these were
  (each case one draw). ``t``: the t interval on the case means, which is
  CR2 with Satterthwaite's degrees of freedom when the cases have unequal
  numbers of runs (:func:`evalstats.stats._intervals.clustered_mean_ci`);
  ``betting``: the distribution-free betting interval of Waudby-Smith &
  Ramdas (2024) on the case means (the binary side's, which holds for any
  values in [0, 1]); ``percentile`` and ``bca``: the bootstrap over cases of
  ``scipy.stats.bootstrap``.
- ``about="these_cases"``: the mean these same cases would score if run
  again (only the runs vary). ``t``: the t interval over all runs as if they
  were one sample (the between-case spread it counts only widens it, as the
  per-trial Wilson interval does for pass rates); ``betting``: a
  distribution-free interval from fixed bets (:func:`fixed_bet_limits`),
  valid for independent runs whose means differ from case to case.

Which method ``auto`` uses at which number of cases is measured by
``simulations/score_coverage.py`` and stated in :data:`AUTO_RULE`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _validate
from ._claims import check_about, claim_words
from ._intervals import (
    Interval,
    _cluster_codes,
    _clustered,
    _outcomes,
    _t_quantile,
    betting_limits,
    clustered_limits,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "AUTO_RULE",
    "SCORE_METHODS",
    "ScoreInterval",
    "auto_score_method",
    "fixed_bet_limits",
    "score_limits",
    "score_mean_ci",
    "studentized_limits",
]

#: Methods of :func:`score_mean_ci`, by claim.
SCORE_METHODS = {
    "cases_like_these": ("auto", "t", "betting", "percentile", "bca", "studentized"),
    "these_cases": ("auto", "t", "betting"),
}

#: What ``method="auto"`` uses, by claim: ``(fewest, method)`` pairs, the
#: last whose count is reached applies; the count is the number of cases
#: about cases like these and the number of runs about these cases. Chosen
#: from ``simulations/score_coverage.py`` (its docstring has the figures):
#: the betting intervals are the only ones that keep 94% with few cases and
#: cost about 1.4-2x the t interval's width; from 20 cases the studentized
#: bootstrap keeps it at little over the t interval's width, which itself
#: falls short on skewed scores even at 100 cases; about these cases the t
#: interval over runs keeps it from 30 runs.
AUTO_RULE: dict[str, tuple[tuple[int, str], ...]] = {
    "cases_like_these": ((0, "betting"), (20, "studentized")),
    "these_cases": ((0, "betting"), (30, "t")),
}


def auto_score_method(cases: int, about: str, runs: int | None = None) -> str:
    """The method ``method="auto"`` uses for ``cases`` cases (``runs`` runs) and ``about``.

    ``runs`` (default: ``cases``) decides about these cases, ``cases`` about
    cases like these (see :data:`AUTO_RULE`).
    """
    count = cases if about == "cases_like_these" or runs is None else runs
    chosen = AUTO_RULE[about][0][1]
    for fewest, method in AUTO_RULE[about]:
        if count >= fewest:
            chosen = method
    return chosen


def _num(x: float, *, signed: bool = False) -> str:
    """A score with two decimals, more where two would read as an exact bound."""
    if math.isnan(x):
        return "n/a"
    decimals = 2
    text = f"{x:.2f}"
    while float(text) in (0.0, 1.0, -1.0) and x != float(text) and decimals < 6:
        decimals += 1
        text = f"{x:.{decimals}f}"
    if signed and float(text) > 0:
        text = "+" + text
    return text.replace("-", "−")


@dataclass(frozen=True)
class ScoreInterval(Interval):
    """An :class:`~evalstats.stats._intervals.Interval` for a mean score (or a difference).

    Printed as a score, not a percentage: ``0.72 (0.65 to 0.79)``.

    Attributes
    ----------
    about : str
        The claim: ``"these_cases"`` or ``"cases_like_these"``.
    cases, runs : int
        The cases and the runs (scores) the interval is made from.
    se : float
        The standard error of the t methods (NaN for the others).
    df : float
        The t quantile's degrees of freedom (NaN for the others).
    """

    about: str = "these_cases"
    cases: int = 0
    runs: int = 0
    se: float = math.nan
    df: float = math.nan

    def __str__(self) -> str:
        s = self.difference
        return (
            f"{_num(float(self.estimate), signed=s)} "
            f"({_num(float(self.low), signed=s)} to {_num(float(self.high), signed=s)})"
        )

    def to_dict(self) -> dict[str, Any]:
        """As :meth:`Interval.to_dict`, with ``about``, ``cases``, ``runs``, ``se`` and ``df``."""
        out = super().to_dict()
        out.update(about=self.about, cases=self.cases, runs=self.runs)
        for key in ("se", "df"):
            value = float(getattr(self, key))
            out[key] = None if math.isnan(value) else value
        return out


# ---------------------------------------------------------------------------
# Fixed bets: a betting interval for independent runs with differing means
# ---------------------------------------------------------------------------

#: Bets of the fixed-bet capital: lambda_k(m) = c 2**-k / m, k = 0 .. 15.
_FIXED_BETS = 16
_FIXED_CAP = 0.9
_FIXED_BISECTIONS = 40
#: Values (rows x runs x bets) worked on at once.
_FIXED_BLOCK = 1 << 21
#: Bets whose log products :func:`_fixed_bounded` works out (the larger
#: ones); the smaller ones it bounds.
_EXACT_BETS = 2
#: The least margin (on the log scale) by which bounds of the capital must
#: clear the threshold to decide a row, beside the margin for rounding.
_SURE = 1e-6
#: The spacing of floats at 1 (2 u, twice the unit roundoff), for the rounding margin.
_EPS = 2.0**-52


def _fixed_log_capital(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """log of (1/K) sum_k prod_i (1 + a_k (x_i / m - 1)), a_k = c 2**-k, per row of ``x``."""
    import numpy as np

    a = _FIXED_CAP * 2.0 ** -np.arange(_FIXED_BETS)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = x / m[:, None] - 1.0  # (rows, n); inf where m = 0 and x > 0
    logs = np.log1p(ratio[:, :, None] * a).sum(axis=1)  # (rows, K)
    top = logs.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    out: np.ndarray = safe + np.log(np.exp(logs - safe[:, None]).mean(axis=1))
    return np.where(np.isfinite(top), out, top)


def _fixed_rejects(
    x: np.ndarray, m: Any, alpha: float, *, bounds: np.ndarray | None = None
) -> np.ndarray:
    """Whether the fixed-bet capital of each row of ``x`` at ``m`` reaches 1 / alpha.

    ``x`` has shape (rows, n), values >= 0 (in [0, 1] for every caller);
    ``m`` is one mean per row, or one for all. The booleans are those of
    ``_fixed_log_capital(x, m) >= log(1 / alpha)``, sooner: each row's log
    capital is first bounded (:func:`_fixed_bounded`), and only the rows
    whose bounds do not settle it are worked out in full. ``bounds``
    (default: every row) marks the rows to bound first, the others are
    worked out in full at once; where given, it is cleared in place for
    the rows the bounds did not settle, so that a bisection, which closes
    in on the threshold, stops bounding a row once its bounds no longer
    settle it.
    """
    import numpy as np

    rows, n = x.shape
    m = np.asarray(m, dtype=float)
    if m.ndim == 0:
        m = np.full(rows, m)
    out = np.empty(rows, dtype=bool)
    threshold = math.log(1.0 / alpha)
    step = max(1, _FIXED_BLOCK // 4 // max(1, n))  # a quarter: several (rows, n) at once
    for start in range(0, rows, step):
        block = slice(start, start + step)
        xb, mb = x[block], m[block]
        if bounds is None or bounds[block].all():
            got, settled = _fixed_bounded(xb, mb, threshold)
        else:
            tried = bounds[block]
            got, settled = np.zeros_like(tried), np.zeros_like(tried)
            if tried.any():
                got[tried], settled[tried] = _fixed_bounded(xb[tried], mb[tried], threshold)
        if not settled.any():
            got = _fixed_exact_rejects(xb, mb, threshold)
        elif not settled.all():
            unsure = ~settled
            got[unsure] = _fixed_exact_rejects(xb[unsure], mb[unsure], threshold)
        if bounds is not None:
            bounds[block] = settled
        out[block] = got
    return out


def _fixed_bounded(x: np.ndarray, m: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Verdicts from bounds of the log capital, and the rows they settle.

    The :data:`_EXACT_BETS` largest bets' log products are worked out and
    the others' bounded from the sums s_j of r**j, r = x / m - 1, j = 1, 2,
    3, by

    - log1p(y) <= y - y**2 / 2 + y**3 / 3 for every y > -1 (the difference
      has derivative y**3 / (1 + y), of the sign of y, and is 0 at 0);
    - log1p(y) >= y - y**2 / (2 (1 - a)**2) for every y >= -a, 0 < a < 1
      (the difference has derivative y (1 / (1 - a)**2 - 1 / (1 + y)), of
      the sign of y as 1 + y >= 1 - a >= (1 - a)**2, and is 0 at 0). This
      holds for y = a r as r >= -1, that is as x >= 0.

    A row is settled when its bounds clear the threshold by more than a
    margin; not where they are not finite (at m = 0, or where x / m passes
    the largest float). The margin covers the rounding of both
    computations, which share r (the same floating-point operations on the
    same values): a sum of n terms computed in any order is within (n - 1)
    u times the sum of their absolute values of the exact sum (u = 2**-53),
    and each term here, a product and a log1p, within a few u of its own
    magnitude, so each side's log capital is within (n + 16) u S of its
    value in exact arithmetic on r, where S bounds the absolute values
    summed: at most |E| + 5 n for the largest bet's log products (E their
    sum; each is above log 0.1), and |s1| + 2 n, s2 and |s3| + 2 n for the
    powers of r (|r| <= r + 2 as r >= -1). The margin is :data:`_SURE` plus
    twice both sides' bounds, 2 eps (n + 16) S with eps = 2 u. At tested
    means away from 0, S is of the order of 10 n (at most about 50 n for
    m >= 1/4), so the rounding term is about 5e-11 at a hundred values and
    reaches 1e-6 only between about 7,000 and 15,000: :data:`_SURE` is the
    margin for the runs the package meets, far beyond the rounding. The
    rounding term takes over for longer runs (it grows as n**2, a worst
    case that summation seldom approaches) and as m nears 0, where S grows
    as n / m**3; there the bounds are too far apart to settle a row anyway.
    """
    import numpy as np

    rows, n = x.shape
    big, small = _fixed_bound_terms()
    sides = np.empty((rows, 2, _FIXED_BETS))  # the lower and the upper bound's log products
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = x / m[:, None] - 1.0  # as _fixed_log_capital's ratio
        for k, bet in enumerate(big):
            sides[:, :, k] = np.log1p(r * bet).sum(axis=1)[:, None]
        r2 = r * r
        s1 = r.sum(axis=1)[:, None]
        s2 = r2.sum(axis=1)[:, None]
        s3 = (r2 * r).sum(axis=1)[:, None]
        linear = s1 * small[0]
        sides[:, 0, len(big) :] = linear + s2 * small[3]
        sides[:, 1, len(big) :] = linear + s2 * small[1] + s3 * small[2]
        top = sides.max(axis=2)
        low, high = (
            top + np.log(np.exp(sides - top[:, :, None]).sum(axis=2)) - math.log(_FIXED_BETS)
        ).T
        scale = np.abs(sides[:, 0, 0]) + 9.0 * n + (np.abs(s1) + s2 + np.abs(s3))[:, 0]
        margin = _SURE + 2.0 * _EPS * (n + _FIXED_BETS) * scale
        got = low >= threshold + margin
        settled = got | (high < threshold - margin)  # False wherever a NaN is
    return got, settled


@functools.cache
def _fixed_bound_terms() -> tuple[tuple[float, ...], np.ndarray]:
    """The bets worked out, and the others' coefficients of s1, s2, s3 and the lower bound's s2."""
    import numpy as np

    bets = _FIXED_CAP * 2.0 ** -np.arange(_FIXED_BETS)
    a = bets[_EXACT_BETS:]
    terms = np.stack([a, -(a**2) / 2.0, a**3 / 3.0, -(a**2) / (2.0 * (1.0 - a) ** 2)])
    terms.flags.writeable = False
    return tuple(bets[:_EXACT_BETS].tolist()), terms


def _fixed_exact_rejects(x: np.ndarray, m: np.ndarray, threshold: float) -> np.ndarray:
    """``_fixed_log_capital(x, m) >= threshold``, a block of rows at a time."""
    import numpy as np

    rows, n = x.shape
    out = np.empty(rows, dtype=bool)
    step = max(1, _FIXED_BLOCK // max(1, n * _FIXED_BETS))
    for start in range(0, rows, step):
        block = slice(start, start + step)
        out[block] = _fixed_log_capital(x[block], m[block]) >= threshold
    return out


def _fixed_lower(x: np.ndarray, alpha: float) -> np.ndarray:
    import numpy as np

    rows = x.shape[0]
    lo, hi = np.zeros(rows), np.ones(rows)
    bounds = np.ones(rows, dtype=bool)
    for _ in range(_FIXED_BISECTIONS):
        mid = 0.5 * (lo + hi)
        rej = _fixed_rejects(x, mid, alpha, bounds=bounds)
        lo = np.where(rej, mid, lo)
        hi = np.where(rej, hi, mid)
    return lo


def fixed_bet_limits(x: Any, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided fixed-bet limits for the mean of the means of independent ``x`` in [0, 1].

    ``x`` has shape (..., n): per row, n independent values in [0, 1] whose
    expectations mu_i may differ; the limits are for their average mean
    (1/n) sum mu_i, each side with error at most (1 - level) / 2.

    The lower limit is the smallest m at which the capital C(m) = (1/K)
    sum_k prod_i (1 + lambda_k (x_i - m)) stays below 2 / (1 - level), with K
    = 16 bets lambda_k = 0.9 2**-k / m fixed in advance (not learnt from the
    data). For a fixed bet and independent values, E prod_i (1 + lambda (x_i
    - m)) = prod_i (1 + lambda (mu_i - m)), at most (1 + lambda (mean(mu) -
    m))**n by the inequality of arithmetic and geometric means (every factor
    is positive): at m = mean(mu) each product, and so their average, is an
    e-value, and by Markov's inequality C reaches 1 / alpha there with
    probability at most alpha. Every factor decreases in m, so the limit is
    found by bisection (40 steps, rounded down). The upper limit is one minus
    the lower limit of 1 - x (each step's verdicts decided from bounds of
    the capital where they settle it, as :func:`_fixed_rejects` says, the
    same as in full). The predictable bets of Waudby-Smith & Ramdas
    (2024) would need identically distributed values; these do not, at a
    small price in width, and do not depend on the order of the values.
    """
    import numpy as np

    arr = np.asarray(x, dtype=float)
    flat = arr.reshape(-1, arr.shape[-1])
    alpha = (1.0 - level) / 2.0
    low = _fixed_lower(flat, alpha)
    high = 1.0 - _fixed_lower(1.0 - flat, alpha)
    mean = flat.mean(axis=-1)
    shape = arr.shape[:-1]
    return np.fmin(low, mean).reshape(shape), np.fmax(high, mean).reshape(shape)


# ---------------------------------------------------------------------------
# The studentized bootstrap over cases
# ---------------------------------------------------------------------------

#: Resamples drawn at once by the studentized bootstrap (per row).
_STUDENT_BATCH = 256


def _ratio_se(sums: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean over runs sum(sums) / sum(sizes) and its cluster-robust (CR1) standard error.

    Along the last axis (cases): se^2 = G / (G - 1) sum_g (s_g - r n_g)^2 / N^2,
    which with equal n_g is the variance of the case means over G (G - 1).
    """
    import numpy as np

    total = sizes.sum(axis=-1)
    ratio = sums.sum(axis=-1) / total
    g = sums.shape[-1]
    resid = sums - ratio[..., None] * sizes
    var = g / (g - 1.0) * np.sum(resid * resid, axis=-1) / (total * total)
    return ratio, np.sqrt(var)


def studentized_limits(
    sums: Any, sizes: Any, level: float, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The studentized (bootstrap-t) limits for the mean over runs, rows along axis 0.

    ``sums`` and ``sizes`` have shape (rows, cases): each case's sum of scores
    and number of runs. Per row, ``resamples`` resamples of the cases with
    replacement, drawn as ``rng.integers(0, cases, (resamples, cases))``
    (rows one after another, in batches of 256 resamples: each batch's
    draws for all rows, then the next), each giving t* = (r* - r) / se*
    (:func:`_ratio_se`); a resample whose se* is 0 counts as t* = +inf or
    -inf (0 if r* = r). The limits are r - q(1 - a) se and r - q(a) se, q the
    quantiles of t* (numpy's default, linear; NaN where that interpolates
    next to an infinite t*, so that the limit is NaN) and a = (1 - level) / 2 (Efron &
    Tibshirani 1993, section 12.5). Unlike the percentile and BCa intervals
    it corrects for the skewness of the case means, and it widens when the
    resamples' standard errors vary, as they do with few cases.
    """
    import numpy as np

    s = np.asarray(sums, dtype=float)
    n = np.asarray(sizes, dtype=float)
    rows, g = s.shape
    ratio, se = _ratio_se(s, n)
    ts = np.empty((rows, resamples))
    equal = bool(np.all(n == n[:, :1]))
    for start in range(0, resamples, _STUDENT_BATCH):
        b = min(_STUDENT_BATCH, resamples - start)
        idx = rng.integers(0, g, (rows, b, g))
        drawn = np.take_along_axis(s[:, None, :], idx, axis=-1)
        if equal:  # every case of a row has the same runs: no need to draw the sizes
            rs, rse = _ratio_se(drawn, np.broadcast_to(n[:, None, :1], drawn.shape))
        else:
            rs, rse = _ratio_se(drawn, np.take_along_axis(n[:, None, :], idx, axis=-1))
        diff = rs - ratio[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(rse > 1e-12, diff / rse, np.sign(diff) * np.inf)
        ts[:, start : start + b] = np.where(np.isnan(t), 0.0, t)
    a = (1.0 - level) / 2.0
    # A quantile between two order statistics of which one is infinite comes
    # out NaN from numpy's interpolation (inf - inf), and so do the limits it
    # sets: score_mean_ci then falls back on the betting interval.
    with np.errstate(invalid="ignore"):
        q_lo = np.quantile(ts, a, axis=-1)
        q_hi = np.quantile(ts, 1.0 - a, axis=-1)
        low = np.where(np.isinf(q_hi), 0.0, ratio - q_hi * se)
        high = np.where(np.isinf(q_lo), 1.0, ratio - q_lo * se)
    return low, high


# ---------------------------------------------------------------------------
# Vectorised limits (the simulations judge with these)
# ---------------------------------------------------------------------------


def _bootstrap_limits(
    case_means: np.ndarray, level: float, method: str, resamples: int, seed: Any
) -> tuple[np.ndarray, np.ndarray]:
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate rows give NaN, handled below
        with np.errstate(all="ignore"):
            res = bootstrap(
                (case_means,),
                np.mean,
                n_resamples=resamples,
                vectorized=True,
                axis=-1,
                confidence_level=level,
                method="BCa" if method == "bca" else "percentile",
                rng=np.random.default_rng(seed),
            )
    return np.asarray(res.confidence_interval.low), np.asarray(res.confidence_interval.high)


def score_limits(
    scores: Any,
    level: float,
    *,
    about: str,
    method: str,
    resamples: int = 9999,
    seed: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Limits of :func:`score_mean_ci` for rows of a balanced design, vectorised.

    ``scores`` has shape (rows, cases, repeats); each row is one run of
    ``cases`` cases with ``repeats`` runs each, and gets the limits
    :func:`score_mean_ci` would give it (``method`` a concrete one, not
    ``auto``). The bootstrap draws its resamples for all rows from one
    generator, so only its row-by-row distribution, not each row's
    figures, is that of :func:`score_mean_ci` with a seed.
    """
    import numpy as np

    y = np.asarray(scores, dtype=float)
    rows, cases, repeats = y.shape
    if about == "these_cases":
        runs = y.reshape(rows, cases * repeats)
        if method == "betting":
            return fixed_bet_limits(runs, level)
        mean = runs.mean(axis=-1)
        n = runs.shape[-1]
        if n < 2:
            return np.zeros(rows), np.ones(rows)
        se = runs.std(axis=-1, ddof=1) / math.sqrt(n)
        se = np.where(se < 1e-12, 0.0, se)
        t = _t_quantile(float(n - 1), level)
        low, high = mean - t * se, mean + t * se
        flat = se == 0.0
        if flat.any():
            low[flat], high[flat] = fixed_bet_limits(runs[flat], level)
        return np.clip(np.fmin(low, mean), 0, 1), np.clip(np.fmax(high, mean), 0, 1)
    case_means = y.mean(axis=-1)
    if cases < 2:
        return np.zeros(rows), np.ones(rows)
    if method in ("t", "betting"):
        return clustered_limits(case_means, level, method="cr2" if method == "t" else "betting")
    if method == "studentized":
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        sizes = np.full(case_means.shape, float(repeats))
        low, high = studentized_limits(case_means * repeats, sizes, level, resamples, rng)
    else:
        low, high = _bootstrap_limits(case_means, level, method, resamples, seed)
    mean = case_means.mean(axis=-1)
    flat = ~(np.isfinite(low) & np.isfinite(high)) | (case_means.std(axis=-1) < 1e-12)
    if flat.any():
        bl, bh = betting_limits(case_means[flat], level)
        low[flat], high[flat] = bl, bh
    return np.clip(np.fmin(low, mean), 0, 1), np.clip(np.fmax(high, mean), 0, 1)


# ---------------------------------------------------------------------------
# The public function
# ---------------------------------------------------------------------------


def _whole(
    mean: float, about: str, cases: int, runs: int, level: float, note: str
) -> ScoreInterval:
    return ScoreInterval(
        mean, 0.0, 1.0, level, "none", note=note, about=about, cases=cases, runs=runs
    )


def score_mean_ci(
    scores: Any,
    cases: Any,
    *,
    about: str = "these_cases",
    level: float = 0.95,
    method: str = "auto",
    resamples: int = 9999,
    seed: Any = None,
) -> ScoreInterval:
    """Mean score in [0, 1] over runs grouped by case, with a confidence interval.

    Parameters
    ----------
    scores : array_like
        One score per run, in [0, 1] (a score on another scale is mapped to
        [0, 1] by the check that gives it). NaN is refused: an unscored run
        is left out before, not passed in.
    cases : array_like
        One label per run naming its case. For one case's interval give its
        runs and one label: about these cases it is the interval of that
        case's mean over its repeats.
    about : {"these_cases", "cases_like_these"}
        ``"these_cases"`` (default): the mean these cases would score if run
        again. ``"cases_like_these"``: the mean over cases drawn the way
        these were; it needs at least 2 cases (with one the interval is
        (0, 1)).
    level : float
        Confidence level, strictly between 0 and 1.
    method : str
        About cases like these: ``t`` (the t interval on the case means with
        cases - 1 degrees of freedom; CR2 with Satterthwaite's degrees of
        freedom when the cases have unequal numbers of runs, as R's
        clubSandwich computes them), ``betting`` (Waudby-Smith & Ramdas 2024
        on the case means, capital averaged over fixed orders: at least
        ``level`` whatever the distribution of case means in [0, 1]),
        ``percentile`` or ``bca`` (``scipy.stats.bootstrap`` over cases,
        ``resamples`` resamples from ``seed``; the statistic is the mean over
        runs, so cases with more runs weigh more, as in the estimate). About
        these cases: ``t`` (all runs as one sample, n - 1 degrees of
        freedom) or ``betting`` (:func:`fixed_bet_limits`: at least
        ``level`` whatever the scores' distributions). ``auto`` (default):
        the method :data:`AUTO_RULE` names for the number of cases. Where
        every score (about cases like these: every case mean) is the same,
        the t and bootstrap intervals would have width 0 and say nothing of
        runs not seen; the betting interval is given instead, with a note.
    resamples : int
        Bootstrap resamples (``percentile`` and ``bca`` only).
    seed : int or numpy.random.Generator, optional
        The bootstrap's random numbers (``percentile`` and ``bca`` only).

    Returns
    -------
    ScoreInterval
        ``estimate`` is the mean over all runs; the limits lie in [0, 1] and
        contain it. ``method`` is the method used.

    Notes
    -----
    Coverage, one-sided errors and widths of every method at 5-300 cases
    and 1-10 repeats, for skewed, mostly-0-and-1 and 1-5 rubric scores, are
    measured by ``simulations/score_coverage.py``; :data:`AUTO_RULE` is
    chosen from it. The t and bootstrap intervals assume enough cases for
    the mean to be near normal; the betting intervals assume only that the
    scores lie in [0, 1] (and, about cases like these, that the cases are
    independent draws; about these cases, that the runs are independent).

    References
    ----------
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random
    variables by betting. Journal of the Royal Statistical Society, Series B
    86, 1-27.
    Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for
    cluster-robust variance estimation and hypothesis testing in fixed effects
    models. Journal of Business & Economic Statistics 36, 672-683.
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82, 171-185.

    Examples
    --------
    >>> s = [0.5, 0.75, 1.0, 1.0, 0.25, 0.5, 0.75, 1.0]
    >>> c = ["a", "a", "b", "b", "c", "c", "d", "d"]
    >>> ci = score_mean_ci(s, c, about="cases_like_these", method="t")
    >>> print(ci, ci.df)
    0.72 (0.28 to 1.00) 3.0
    >>> print(score_mean_ci(s, c, method="t"))
    0.72 (0.48 to 0.95)
    """
    import numpy as np

    about = check_about(about) or "these_cases"
    level = _validate.check_level(level)
    method = _validate.check_method(method, SCORE_METHODS[about])
    y = _outcomes("scores", scores)
    codes = _cluster_codes(cases, y.size, "scores")
    resamples = _validate.whole_number("resamples", resamples, minimum=100)
    n = int(y.size)
    groups = int(codes.max()) + 1 if n else 0
    if n == 0:
        return ScoreInterval(
            math.nan,
            0.0,
            1.0,
            level,
            method,
            note="no scores: nothing to estimate from",
            about=about,
        )
    mean = float(np.sort(y).mean())
    if method == "auto":
        method = auto_score_method(groups, about, n)
    if about == "these_cases":
        return _these_cases(y, groups, mean, level, method)
    if groups < 2:
        return _whole(
            mean,
            about,
            groups,
            n,
            level,
            "one case only: nothing can be said about "
            "cases like these from one case, so the interval is the whole range (0, 1)",
        )
    if method in ("t", "betting"):
        ci = _clustered(
            y, codes, level, difference=False, method="cr2" if method == "t" else "betting"
        )
        used = "t" if ci.method == "cr2" else "betting"
        t_ok = method == "t" and used == "t"
        return ScoreInterval(
            ci.estimate,
            ci.low,
            ci.high,
            level,
            used,
            note=ci.note,
            about=about,
            cases=groups,
            runs=n,
            se=ci.se if t_ok else math.nan,
            df=ci.df if t_ok else math.nan,
        )
    return _bootstrap(y, codes, groups, mean, level, method, resamples, seed)


def _these_cases(
    y: np.ndarray, groups: int, mean: float, level: float, method: str
) -> ScoreInterval:
    import numpy as np

    n = int(y.size)
    words = claim_words("these_cases")
    if method == "t" and n >= 2:
        se = float(np.sort(y).std(ddof=1)) / math.sqrt(n)
        if se >= 1e-12:
            t = _t_quantile(float(n - 1), level)
            return ScoreInterval(
                mean,
                max(mean - t * se, 0.0),
                min(mean + t * se, 1.0),
                level,
                "t",
                note=f"t over {n} runs of {groups} cases ({words}), {n - 1} df",
                about="these_cases",
                cases=groups,
                runs=n,
                se=se,
                df=float(n - 1),
            )
    if method == "t" and n < 2:
        return _whole(
            mean,
            "these_cases",
            groups,
            n,
            level,
            "one score only: the interval is the whole range (0, 1)",
        )
    low, high = fixed_bet_limits(y[None, :], level)
    note = f"fixed-bet betting interval over {n} runs of {groups} cases (distribution-free)"
    if method == "t":
        note = f"every score is the same, so the t standard error is 0; {note} instead"
    return ScoreInterval(
        mean,
        float(low[0]),
        float(high[0]),
        level,
        "betting",
        note=note,
        about="these_cases",
        cases=groups,
        runs=n,
    )


def _bootstrap(
    y: np.ndarray,
    codes: np.ndarray,
    groups: int,
    mean: float,
    level: float,
    method: str,
    resamples: int,
    seed: Any,
) -> ScoreInterval:
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    sizes = np.bincount(codes, minlength=groups).astype(float)
    # Each case's scores summed in order of value, so that the sums (and the
    # resamples' order statistics) are the same bits in any listing order.
    by_value = np.lexsort((y, codes))
    sums = np.bincount(codes[by_value], weights=y[by_value], minlength=groups)
    case_means = sums / sizes
    order = np.lexsort((sizes, case_means))  # the cases' listing order changes nothing
    sums, sizes, case_means = sums[order], sizes[order], case_means[order]
    low = high = math.nan
    names = {"bca": "BCa", "percentile": "percentile", "studentized": "studentized"}
    name = names[method]
    if float(np.ptp(case_means)) > 1e-12 and method == "studentized":
        lows, highs = studentized_limits(
            sums[None, :], sizes[None, :], level, resamples, np.random.default_rng(seed)
        )
        low, high = float(lows[0]), float(highs[0])
    elif float(np.ptp(case_means)) > 1e-12:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                if float(np.ptp(sizes)) == 0.0:
                    data: tuple[np.ndarray, ...] = (case_means,)
                    statistic: Any = np.mean
                else:
                    data = (sums, sizes)

                    def statistic(s: np.ndarray, m: np.ndarray, axis: int = -1) -> np.ndarray:
                        out: np.ndarray = s.sum(axis=axis) / m.sum(axis=axis)
                        return out

                res = bootstrap(
                    data,
                    statistic,
                    n_resamples=resamples,
                    vectorized=True,
                    paired=len(data) > 1,
                    confidence_level=level,
                    method="BCa" if method == "bca" else "percentile",
                    rng=np.random.default_rng(seed),
                )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        bl, bh = betting_limits(case_means[None, :], level)
        if float(np.ptp(case_means)) <= 1e-12:
            why = (
                f"every case has the same mean score, so the {name} bootstrap says nothing "
                f"of cases not run"
            )
        elif method == "studentized":
            # The cases differ, but a quantile of t* fell next to a resample
            # whose cases all have one mean (t* infinite): the limit is undefined.
            why = (
                f"the {name} bootstrap's limits are undefined with so few cases (some "
                f"resamples repeat cases of one mean score, with no standard error)"
            )
        else:
            why = f"the {name} bootstrap gives no finite limits for these cases"
        return ScoreInterval(
            mean,
            min(float(bl[0]), mean),
            max(float(bh[0]), mean),
            level,
            "betting",
            note=f"{why}; betting interval over {groups} cases (distribution-free) instead",
            about="cases_like_these",
            cases=groups,
            runs=int(y.size),
        )
    return ScoreInterval(
        mean,
        min(max(low, 0.0), mean),
        max(min(high, 1.0), mean),
        level,
        method,
        note=f"{name} bootstrap over {groups} cases, {resamples} resamples",
        about="cases_like_these",
        cases=groups,
        runs=int(y.size),
    )
