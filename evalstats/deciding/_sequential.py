"""Anytime-valid comparisons of two variants: look as often as you like.

The fixed-n :func:`~evalstats.stats._compare.compare` is valid for one look at a
planned number of runs. Looking again after more runs, and stopping at the
first "B better", inflates its false-positive rate (with A and B identical, ten
looks give a false "B better" about three times as often as the nominal 2.5%).
The comparisons here stay valid however many times, and after however many
pairs, one looks: each is built on an *e-process*, a non-negative process that
starts at 1 and, when there is no difference, stays small. By Ville's
inequality the chance that it *ever* reaches 1/a is at most a.

Two claims, as for the fixed-n comparison:

``these_cases``
    The discordant (case, repeat) pairs: under "no difference" each pair on
    which exactly one variant passed favours B with probability 1/2. The
    e-process for "B better" is the likelihood ratio of the observed split
    against 1/2, mixed over a uniform distribution of the share of discordant
    pairs B wins on [1/2, 1]; "A better" mixes over [0, 1/2]. Both are closed
    forms in the incomplete beta function (Robbins 1970; Howard et al. 2021).
    A design planned for an effect (``planned_for=(p_a, p_b)``) mixes instead
    over a Beta distribution concentrated on the share that effect gives
    (see :func:`planned_prior`): any fixed mixture of likelihood ratios is a
    martingale under "no difference", so it stays valid whatever the truth,
    and it decides nearly as early as a test told the true share when the
    plan is right.

``cases_like_these``
    Cases are a sample of a population of cases; the question is the mean,
    over that population, of each case's p_b - p_a. Each case's mean paired
    difference lies in [-1, 1] and is an unbiased estimate of that case's
    difference; for a bet ``u`` in [0, 1] the wealth prod_c (1 + u x_c) over
    the cases' current means x_c has expectation 1 after the first round when
    the population mean is 0 (cases independent), and as runs are added it is
    a *reverse* martingale (a case's running mean is one), so by Doob's maximal
    inequality applied backwards it reaches 1/a with probability at most a
    whatever the number of looks (the device of Manole & Ramdas 2023). Mixing
    over u uniform on [0, 1] gives the e-process for "B better" (betting, as in
    Waudby-Smith & Ramdas 2024); u on [-1, 0] gives "A better". It stays valid
    when cases differ (icc > 0) and when B's gain varies by case, and it needs
    enough cases: with C cases it can never exceed 2^C.

The two-sided test at level ``level`` gives each direction half of
a = 1 - level: about cases like these, B is better once the "B better"
e-process reaches 2 / a (40 at 95%). About these cases the printed interval
for p_b - p_a also spends 1% of a on the discordance rate, so the verdict's
e-processes decide at 2 / (0.99 a) (40.4 at 95%), and the interval's limits
for the share of discordant pairs B wins invert the same e-processes
(:func:`log_evalue_share`). The interval at each look is the intersection of
the confidence sequence's intervals so far, which stands once it excludes 0
as the verdict does: at every look the interval excludes 0 exactly when a
verdict has been reached. The anytime-valid p-value is min(1, bound a / the
largest e-value so far) in either direction (bound the e-value that decides),
so p < a exactly then too.

References
----------
Ville, J. (1939). Etude critique de la notion de collectif. Gauthier-Villars.

Robbins, H. (1970). Statistical methods related to the law of the iterated
logarithm. Annals of Mathematical Statistics 41, 1397-1409.

Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform,
nonparametric, nonasymptotic confidence sequences. Annals of Statistics 49,
1055-1080.

Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random
variables by betting. JRSS Series B 86, 1-27.

Manole, T. and Ramdas, A. (2023). Martingale methods for sequential estimation
of convex functionals and divergences. IEEE Transactions on Information Theory
69, 4641-4658.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from .._terminal import visible
from .._validate import check_level, check_method
from ..errors import InvalidArgument
from ..stats._claims import check_about, claim_words, refuses_scope
from ..stats._intervals import Interval

__all__ = [
    "PLANNED_CONCENTRATION",
    "Look",
    "SequentialComparison",
    "SequentialPlan",
    "SequentialPower",
    "discordant_thresholds",
    "planned_prior",
    "planned_share",
    "sequential_compare",
    "sequential_plan",
    "sequential_results",
    "simulate_sequential",
]

VerdictName = Literal["b_better", "a_better", "cant_tell"]
Scope = Literal["these_cases", "cases_like_these"]

#: Share of 1 - level spent on the discordance rate in the "these cases"
#: interval for p_b - p_a. The rest goes to the share of discordant pairs B
#: wins, on which the verdict rests: the verdict's e-processes decide at
#: 2 / ((1 - share) (1 - level)) (40.4 at 95%), and the interval's limits for
#: that share invert the same e-processes, so the printed interval excludes 0
#: exactly when a verdict has been reached.
_DISCORDANCE_SHARE = 0.01


def _log_bound(about: str, alpha: float) -> float:
    """Log of the e-value a direction must reach for a verdict at 1 - ``alpha``."""
    if about == "these_cases":
        return math.log(2.0 / ((1.0 - _DISCORDANCE_SHARE) * alpha))
    return math.log(2.0 / alpha)


_LOG2 = math.log(2.0)

#: How strongly the e-process planned for an effect concentrates on the share
#: of discordant pairs that effect gives: its Beta prior for the share is worth
#: this many discordant pairs (a standard deviation of about 0.05 around a
#: planned share of 0.8). More concentrated priors decide no earlier and lose
#: more when the plan is too optimistic (``simulations/sequential.py``).
PLANNED_CONCENTRATION = 60.0


# --- "these cases": the discordant pairs --------------------------------------


def _log_uniform_mixture(k: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Log of U(k, m), the likelihood ratio (2t)^k (2(1-t))^(m-k) of a share t
    against 1/2 averaged over t uniform on [1/2, 1] (density 2):

        U = 2^(m+1) B(k+1, m-k+1) P(Beta(k+1, m-k+1) > 1/2)
          = 2^(m+1) B(k+1, m-k+1) I_{1/2}(m-k+1, k+1),

    I the regularized incomplete beta function.
    """
    from scipy.special import betainc, betaln, hyp2f1

    a, b = m - k + 1.0, k + 1.0
    tail = betainc(a, b, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_tail = np.log(tail)
        # Where B won few of many pairs the tail underflows; there
        # I_x(a, b) = x^a (1-x)^b 2F1(a+b, 1; a+1; x) / (a B(a, b)), a series
        # that converges fast because a is large (Abramowitz & Stegun 26.5.23).
        small = tail < 1e-280
        if np.any(small):
            series = (
                -(a + b) * _LOG2
                - np.log(a)
                - betaln(a, b)
                + np.log(hyp2f1(a + b, 1.0, a + 1.0, 0.5))
            )
            log_tail = np.where(small, series, log_tail)
    return (m + 1.0) * _LOG2 + betaln(b, a) + log_tail  # type: ignore[no-any-return]


def _log_betainc_half(x: Any, y: Any) -> np.ndarray:
    """log I_{1/2}(x, y), I the regularized incomplete beta function.

    Where the value underflows (x much larger than y) the series
    I_{1/2}(x, y) = 2^-(x+y) F / (x B(x, y)), F = 2F1(x + y, 1; x + 1; 1/2)
    = sum over n of prod_{j<n} (x + y + j) / (2 (x + 1 + j)), gives its log
    (Abramowitz & Stegun 26.5.23). The series is summed here: its terms shrink
    at least as fast as (x + y) / (2 (x + 1)) < 1 when y < x + 2, which
    holds wherever the value underflows, and scipy's 2F1 is wrong for such
    large parameters (it gives 2e5 for a sum of about 2).
    """
    from scipy.special import betainc, betaln

    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    value = betainc(x, y, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(value)
        small = value < 1e-280
        if np.any(small):
            xs, ys = x[small], y[small]
            term = np.ones(xs.shape)
            total = np.ones(xs.shape)
            for j in range(10_000):
                term = term * (xs + ys + j) / (2.0 * (xs + 1.0 + j))
                total += term
                if np.all(term < 1e-17 * total):
                    break
            series = -(xs + ys) * _LOG2 - np.log(xs) - betaln(xs, ys) + np.log(total)
            out = np.array(out, dtype=float)
            out[small] = series
    return out  # type: ignore[no-any-return]


def _log_planned_mixture(k: np.ndarray, m: np.ndarray, a: float, b: float) -> np.ndarray:
    """Log of the likelihood ratio (2t)^k (2(1-t))^(m-k) averaged over a
    Beta(a, b) distribution of t restricted to [1/2, 1]:

        E = 2^m B(a + k, b + m - k) I_{1/2}(b + m - k, a + k) / (B(a, b) I_{1/2}(b, a)),

    the integral of t^(a+k-1) (1-t)^(b+m-k-1) over [1/2, 1] being
    B(a + k, b + m - k) P(Beta(a + k, b + m - k) > 1/2).
    """
    from scipy.special import betaln

    rest = m - k
    return (  # type: ignore[no-any-return]
        m * _LOG2
        + betaln(a + k, b + rest)
        - betaln(a, b)
        + _log_betainc_half(b + rest, a + k)
        - _log_betainc_half(b, a)
    )


def planned_share(p_a: float, p_b: float) -> float:
    """The share of discordant pairs B wins when A and B pass at ``p_a``, ``p_b``.

    For answers that pass independently at these rates, a pair is won by B alone
    with probability p_b (1 - p_a) and by A alone with p_a (1 - p_b), so

        q = p_b (1 - p_a) / (p_b (1 - p_a) + p_a (1 - p_b)).

    Examples
    --------
    >>> round(planned_share(0.7, 0.9), 4)  # 0.27 / 0.34
    0.7941
    """
    from .._validate import as_rate

    a = float(as_rate("p_a", p_a, open_interval=True))
    b = float(as_rate("p_b", p_b, open_interval=True))
    only_b, only_a = b * (1.0 - a), a * (1.0 - b)
    return only_b / (only_b + only_a)


def _planned_for(planned_for: Any) -> tuple[float, float] | None:
    """``planned_for`` checked: None, or two different rates strictly inside (0, 1)."""
    if planned_for is None:
        return None
    from .._validate import as_rate

    if isinstance(planned_for, str | bytes | Mapping) or not isinstance(
        planned_for, Sequence | np.ndarray
    ):
        raise InvalidArgument(
            f"planned_for={planned_for!r} must be the two pass rates (p_a, p_b) the design "
            "was planned for, or None"
        )
    if len(planned_for) != 2:
        raise InvalidArgument(
            f"planned_for={tuple(planned_for)!r} must be two pass rates (p_a, p_b), got "
            f"{len(planned_for)} numbers"
        )
    p_a, p_b = (
        float(as_rate(f"planned_for[{i}]", x, open_interval=True))
        for i, x in enumerate(planned_for)
    )
    if p_a == p_b:
        raise InvalidArgument(
            f"planned_for=({p_a:g}, {p_b:g}) plans for no difference; give the rates of the "
            "effect the design should find, or None"
        )
    return p_a, p_b


def planned_prior(
    p_a: float, p_b: float, *, concentration: float = PLANNED_CONCENTRATION
) -> tuple[float, float]:
    """The Beta(a, b) prior of the "B better" e-process planned for rates ``p_a``, ``p_b``.

    The share of discordant pairs B wins, t, gets a Beta distribution with
    mean q = max(s, 1 - s), s = :func:`planned_share` (p_a, p_b), and
    a + b = ``concentration``, restricted to [1/2, 1]; the "A better"
    e-process uses its mirror on [0, 1/2]. Taking the larger of s and 1 - s
    makes the design symmetric: swapping A and B mirrors every verdict.

    Any fixed mixture of likelihood ratios against 1/2 is a non-negative
    martingale when each discordant pair favours B with probability 1/2
    (Robbins 1970; Howard et al. 2021), and a supermartingale when B is worse,
    because each ratio with t >= 1/2 is; so the planned e-process is valid
    whatever the truth. The plan only decides where it spends its evidence:
    near the planned share it grows nearly as fast as the likelihood ratio at
    the true share.

    Examples
    --------
    >>> a, b = planned_prior(0.7, 0.9)
    >>> round(a, 3), round(b, 3)
    (47.647, 12.353)
    """
    share = planned_share(p_a, p_b)
    if share == 0.5:
        raise InvalidArgument(
            f"p_a={p_a!r} and p_b={p_b!r} plan for no difference; give the rates of the "
            "effect the design should find"
        )
    try:
        concentration = float(concentration)
    except (TypeError, ValueError):
        raise InvalidArgument(f"concentration={concentration!r} must be a number") from None
    if not concentration > 0 or not math.isfinite(concentration):
        raise InvalidArgument(f"concentration={concentration!r} must be a positive number")
    share = max(share, 1.0 - share)
    return concentration * share, concentration * (1.0 - share)


def log_evalue_discordant(
    wins: Any, discordant: Any, *, prior: tuple[float, float] | None = None
) -> np.ndarray:
    """Log of the one-sided mixture e-process for "B wins more than half".

    With ``k = wins`` of ``m = discordant`` discordant pairs won by B, the
    likelihood ratio of a share t against 1/2 is (2t)^k (2(1-t))^(m-k). It is
    averaged over a Beta(2, 2) distribution of B's edge s = 2t - 1 on [0, 1]
    (density 6 s (1 - s), so t has density 24 (2t - 1)(1 - t) on [1/2, 1]).
    Against the uniform distribution of t this moves weight from the edges to
    the middle: none on s = 0, where no evidence can build up, and little on
    s near 1 (B wins every discordant pair), which real prompt changes rarely
    reach; on the shop stand-in it reaches a verdict with about 8% fewer pairs
    on average for the same power (simulations/sequential.py). Since
    24 (2t - 1)(1 - t) (2t)^k (2(1-t))^(m-k) =
    6 [(2t)^(k+1) (2(1-t))^(m-k+1) - (2t)^k (2(1-t))^(m-k+2)],

        E(k, m) = 3 [U(k + 1, m + 2) - U(k, m + 2)],

    U the uniform mixture (see :func:`_log_uniform_mixture`), positive because
    U grows with k. It starts at 1 (m = 0) and is a martingale when each
    discordant pair favours B with probability 1/2 (a mixture of likelihood
    ratios; Robbins 1970). Vectorised; ``wins`` and ``discordant`` broadcast.
    The "A better" process is the same with ``discordant - wins`` in place of
    ``wins``.

    With ``prior=(a, b)`` the share t is mixed instead over Beta(a, b)
    restricted to [1/2, 1] (the e-process planned for an effect; see
    :func:`planned_prior` and :func:`_log_planned_mixture`).
    """
    from scipy.special import hyp2f1

    k = np.asarray(wins, dtype=float)
    m = np.asarray(discordant, dtype=float)
    if prior is not None:
        return _log_planned_mixture(k, m, float(prior[0]), float(prior[1]))
    upper = _log_uniform_mixture(k + 1.0, m + 2.0)
    lower = _log_uniform_mixture(k, m + 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_e = math.log(3.0) + upper + np.log1p(-np.exp(lower - upper))
        # Where B won at most half, the two terms are close (U(k+1)/U(k) - 1 is
        # about 2/(m - 2k)) and their difference loses digits. There a series
        # of positive terms gives it whole: with b = m - k + 2,
        #     E = 3 F / (2 b (b + 1)),  F = 2F1(m + 4, 2; m - k + 4; 1/2),
        # from the incomplete beta function's hypergeometric series
        # (Abramowitz & Stegun 26.5.23) and its recurrence in a (26.5.16).
        # scipy's 2F1 overflows near an even split; the difference serves there.
        losing = 2.0 * k <= m
        if np.any(losing):
            b = m - k + 2.0
            series = hyp2f1(m + 4.0, 2.0, b + 2.0, 0.5)
            log_series = math.log(1.5) + np.log(series) - np.log(b) - np.log(b + 1.0)
            log_e = np.where(losing & np.isfinite(log_series), log_series, log_e)
    return log_e  # type: ignore[no-any-return]


def _bisect(f: Any, lo: np.ndarray, hi: np.ndarray, *, iterations: int = 44) -> np.ndarray:
    """Vectorised bisection for the point where f changes from True to False.

    ``f(x)`` is True at (or towards) ``lo`` and False at (or towards) ``hi``,
    elementwise; returns the boundary, to 2^-44 (6e-14) of the bracket by default.
    """
    lo = np.array(lo, dtype=float)
    hi = np.array(hi, dtype=float)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        inside = f(mid)
        lo = np.where(inside, mid, lo)
        hi = np.where(inside, hi, mid)
    return 0.5 * (lo + hi)


def _mixture_cs(successes: Any, trials: Any, alpha: Any) -> tuple[np.ndarray, np.ndarray]:
    """Robbins' uniform-mixture confidence sequence for a Bernoulli rate.

    The set of rates t with B(k+1, n-k+1) / (t^k (1-t)^(n-k)) < 1/alpha: the
    mixture likelihood ratio of the uniform prior against t, a martingale at
    the true rate, so the set covers it at every n at once with probability at
    least 1 - alpha (Ville). The log ratio is convex in t with its minimum
    (at most 0) at k/n, so the set is an interval; both ends are found by one
    vectorised bisection. Vectorised over k, n and alpha.
    """
    from scipy.special import betaln, xlog1py, xlogy

    k, n, a = (
        np.ravel(x)
        for x in np.broadcast_arrays(
            np.asarray(successes, dtype=float),
            np.asarray(trials, dtype=float),
            np.asarray(alpha, dtype=float),
        )
    )
    shape = np.broadcast_shapes(np.shape(successes), np.shape(trials), np.shape(alpha))
    mle = np.divide(k, n, out=np.full(k.shape, 0.5), where=n > 0)
    # Stack the two ends: the first half bisects [0, k/n], the second [k/n, 1].
    kk, nn = np.concatenate([k, k]), np.concatenate([n, n])
    level = np.log(1.0 / np.concatenate([a, a]))
    base = betaln(kk + 1.0, nn - kk + 1.0)
    side = np.concatenate([np.ones(k.shape, bool), np.zeros(k.shape, bool)])

    def toward_lo(t: np.ndarray) -> np.ndarray:
        inside = base - xlogy(kk, t) - xlog1py(nn - kk, -t) < level
        # Low end: outside below it. High end: inside below it.
        return np.where(side, ~inside, inside)

    lo = np.concatenate([np.zeros(k.shape), mle])
    hi = np.concatenate([mle, np.ones(k.shape)])
    ends = _bisect(toward_lo, lo, hi)
    low, high = ends[: k.size], ends[k.size :]
    low = np.where(k == 0, 0.0, low).reshape(shape)
    high = np.where(k == n, 1.0, high).reshape(shape)
    return low, high


def log_evalue_share(
    wins: Any, discordant: Any, share: Any, *, prior: tuple[float, float] | None = None
) -> np.ndarray:
    """Log of the one-sided e-process for "B wins more than ``share`` of discordant pairs".

    The family of which :func:`log_evalue_discordant` is the member at
    ``share`` = 1/2. With ``k = wins`` of ``m = discordant`` pairs and x =
    ``share``, the likelihood ratio of a share t against x is
    (t / x)^k ((1 - t) / (1 - x))^(m - k), averaged over t = x + (1 - x) s with
    B's edge s ~ Beta(2, 2) (density 6 s (1 - s)), as at 1/2. Any such mixture
    over t >= x is a supermartingale whenever the true share is at most x
    (each pair's factor has mean at most 1 there), so the set of shares it
    does not reject at 2 / a, together with the "A better" process (the same
    with ``m - k`` wins and share 1 - x), is a confidence sequence; its limits
    are where :func:`_share_interval` finds them. In closed form, with
    J(p, q) = integral of t^(p-1) (1-t)^(q-1) over [x, 1] and the recurrence
    J(p + 1, q) = (p J(p, q) + x^p (1-x)^q) / (p + q) (integration by parts),

        E = 6 / (1 - x)^3 [R ((k + 1) / (m + 3) - x) + x (1 - x)^2 / (m + 3)],
        R = J(k + 1, m - k + 2) / (x^k (1 - x)^(m - k)),

    computed in logs. With ``prior=(a, b)`` the share is mixed over Beta(a, b)
    restricted to [x, 1] (the planned e-process's family), whose ratio is
    B(a + k, b + m - k) Q_x(a + k, b + m - k) / (x^k (1-x)^(m-k) B(a, b) Q_x(a, b)),
    Q the upper regularized incomplete beta function. Vectorised.
    """
    from scipy.special import betaincc, betaln

    k, m, x = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (wins, discordant, share)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        base = -k * np.log(x) - (m - k) * np.log1p(-x)
        if prior is not None:
            a, b = float(prior[0]), float(prior[1])
            return (  # type: ignore[no-any-return]
                base
                + betaln(a + k, b + m - k)
                + np.log(betaincc(a + k, b + m - k, x))
                - betaln(a, b)
                - np.log(betaincc(a, b, x))
            )
        q = m - k + 2.0
        log_r = base + betaln(k + 1.0, q) + np.log(betaincc(k + 1.0, q, x))
        c = (k + 1.0) / (m + 3.0) - x
        edge = np.log(x) + 2.0 * np.log1p(-x) - np.log(m + 3.0)
        gaining = np.logaddexp(log_r + np.log(np.abs(c)), edge)
        # Where x is above (k + 1) / (m + 3) the first term is negative and the
        # e-value small (at most 6 x / ((1 - x)(m + 3))); the difference is taken there.
        losing = edge + np.log1p(-np.exp(np.minimum(log_r + np.log(np.abs(c)) - edge, 0.0)))
        inner = np.where(c > 0, gaining, losing)
        log_e = math.log(6.0) - 3.0 * np.log1p(-x) + inner
    # From the observed share k / m on, every ratio in the mixture is at most 1
    # (the likelihood falls beyond its maximum), and so is the e-value; the
    # difference above loses its digits far in that tail.
    above = x * m >= k
    return np.where(above, np.minimum(log_e, 0.0), log_e)  # type: ignore[no-any-return]


def _share_interval(
    wins: np.ndarray,
    discordant: np.ndarray,
    bound: float,
    prior: tuple[float, float] | None,
    verdict_b: np.ndarray,
    verdict_a: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The shares of discordant pairs B wins that neither e-process rejects at ``bound``.

    The "B better than x" e-process falls as x rises towards the observed
    share k / m (where it is at most 1), so the low limit is where it falls
    below the bound, found by bisection on [0, k / m]; the high limit likewise
    from the "A better" side. A limit on the far side of 1/2 from where the
    verdict at 1/2 (``verdict_b``, ``verdict_a``) puts it is a bisection
    tolerance (2^-50), and is set to 1/2 exactly, so the interval excludes 1/2
    exactly when a verdict has been reached.
    """
    k = np.asarray(wins, dtype=float)
    m = np.asarray(discordant, dtype=float)
    mle = np.divide(k, m, out=np.full(k.shape, 0.5), where=m > 0)

    def rejects_low(x: np.ndarray) -> np.ndarray:
        return ~(log_evalue_share(k, m, x, prior=prior) < bound)

    def keeps_high(x: np.ndarray) -> np.ndarray:
        return log_evalue_share(m - k, m, 1.0 - x, prior=prior) < bound

    low = _bisect(rejects_low, np.zeros(k.shape), mle, iterations=50)
    high = _bisect(keeps_high, mle, np.ones(k.shape), iterations=50)
    low = np.where(k == 0, 0.0, low)
    high = np.where(k == m, 1.0, high)
    half = np.nextafter(0.5, 1.0)
    low = np.where(verdict_b, np.maximum(low, half), np.minimum(low, 0.5))
    high = np.where(verdict_a, np.minimum(high, np.nextafter(0.5, 0.0)), np.maximum(high, 0.5))
    return low, high


def _discordant_interval(
    only_b: np.ndarray,
    only_a: np.ndarray,
    pairs: np.ndarray,
    alpha: float,
    prior: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Anytime-valid interval of p_b - p_a = pi (2 theta - 1) over these cases.

    theta (the share of discordant pairs B wins) gets the confidence sequence
    that inverts the verdict's own e-processes (:func:`log_evalue_share`, at
    the verdict's bound 2 / ((1 - s) alpha)) and the discordance pi Robbins'
    confidence sequence at 1 - s alpha, s = ``_DISCORDANCE_SHARE``; the
    difference's limits are the extremes of pi (2 theta - 1) over that
    rectangle, so it covers with probability at least 1 - alpha at every look
    at once (a union bound), and excludes 0 exactly when the verdict is
    reached (pi's low limit is positive once a pair is discordant).
    """
    m = only_b + only_a
    bound = _log_bound("these_cases", alpha)
    verdict_b = log_evalue_discordant(only_b, m, prior=prior) >= bound
    verdict_a = log_evalue_discordant(only_a, m, prior=prior) >= bound
    t_lo, t_hi = _share_interval(only_b, m, bound, prior, verdict_b, verdict_a)
    p_lo, p_hi = _mixture_cs(m, pairs, _DISCORDANCE_SHARE * alpha)
    lo_shift, hi_shift = 2.0 * t_lo - 1.0, 2.0 * t_hi - 1.0
    low = lo_shift * np.where(lo_shift < 0, p_hi, p_lo)
    high = hi_shift * np.where(hi_shift > 0, p_hi, p_lo)
    estimate = np.divide(only_b - only_a, pairs, out=np.full(m.shape, np.nan), where=pairs > 0)
    return estimate, np.minimum(low, estimate), np.maximum(high, estimate)


# --- "cases like these": the cases' mean paired differences -----------------


@functools.cache
def _legendre(cases: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on [0, 1] and weights (sum 1), exact for degree ``cases``."""
    nodes, weights = np.polynomial.legendre.leggauss(max(1, (cases + 2) // 2))
    return (nodes + 1.0) / 2.0, weights / 2.0


def log_evalue_cases(means: Any, *, null: Any = 0.0, direction: int = 1) -> np.ndarray:
    """Log of the betting e-process over cases' mean paired differences.

    ``means`` has the cases on its last axis: each case's current mean of
    (B pass - A pass) over its pairs, in [-1, 1]. For ``direction=1`` ("B
    better") the value is

        log of integral over u in [0, 1] of prod_c (1 + u (x_c - null) / (1 + null)) du,

    the wealth of betting a fraction u on each case's excess over ``null``,
    mixed over u uniformly; ``direction=-1`` ("A better") bets against it:
    prod_c (1 - u (x_c - null) / (1 - null)). The integrand is a polynomial of
    degree C in u, so Gauss-Legendre quadrature with C/2 + 1 nodes is exact.
    Vectorised over the leading axes.
    """
    x = np.asarray(means, dtype=float)
    cases = x.shape[-1]
    u, w = _legendre(cases)
    y = (x - null) / (1.0 + null) if direction > 0 else (null - x) / (1.0 - null)
    with np.errstate(divide="ignore"):
        logs = np.log1p(u[:, None] * y[..., None, :]).sum(axis=-1)  # (..., nodes)
    return _logsumexp(logs + np.log(w))


def _logsumexp(x: np.ndarray) -> np.ndarray:
    """log(sum(exp(x))) over the last axis (scipy's is slow on small arrays)."""
    top = np.max(x, axis=-1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(x - safe[..., None]), axis=-1))


def _cases_interval(means: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The confidence sequence for the population mean paired difference.

    The low end is where the "B better" e-process against ``null`` falls below
    2 / alpha as ``null`` rises (it decreases in ``null``); the high end where
    the "A better" one does as ``null`` falls. Each side spends alpha / 2, so
    the interval excludes 0 exactly when one of the two e-processes at 0
    reaches 2 / alpha: interval and verdict agree.
    """
    bound = math.log(2.0 / alpha)
    shape = means.shape[:-1]

    def above_low(null: np.ndarray) -> np.ndarray:
        return log_evalue_cases(means, null=null[..., None], direction=1) >= bound

    def below_high(null: np.ndarray) -> np.ndarray:
        return log_evalue_cases(means, null=null[..., None], direction=-1) < bound

    low = _bisect(above_low, np.full(shape, -1.0), np.full(shape, 1.0), iterations=50)
    high = _bisect(below_high, np.full(shape, -1.0), np.full(shape, 1.0), iterations=50)
    return low, high


# --- results --------------------------------------------------------------------


@dataclass(frozen=True)
class Look:
    """One look at the data: after ``pairs`` pairs, what the e-processes said.

    ``verdict`` is the verdict reached at or before this look (once reached it
    stands: the experiment stops there).
    """

    pairs: int
    evalue_b: float
    evalue_a: float
    estimate: float
    low: float
    high: float
    verdict: VerdictName

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {
            "pairs": self.pairs,
            "evalue_b": num(self.evalue_b),
            "evalue_a": num(self.evalue_a),
            "estimate": num(self.estimate),
            "low": num(self.low),
            "high": num(self.high),
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class SequentialComparison:
    """The anytime-valid comparison of A and B after the latest look.

    Attributes
    ----------
    verdict : {"b_better", "a_better", "cant_tell"}
        Reached at the first look where an e-process reached ``threshold``;
        never "no difference".
    evalue_b, evalue_a : float
        The current values of the e-processes for "B better" and "A better"
        (each started at 1).
    pvalue : float
        The anytime-valid two-sided p-value, min(1, threshold (1 - level) /
        the largest e-value in either direction at any look so far): below
        1 - level exactly when a verdict has been reached.
    difference : Interval
        The confidence sequence's interval for p_b - p_a (these cases) or for
        the mean over cases like these, intersected over the looks so far: it
        excludes 0 exactly when the verdict says which is better.
    about : {"these_cases", "cases_like_these"}
    level : float
    pairs, looks : int
        Pairs so far and the number of looks taken.
    cases : int
        Number of cases.
    only_a, only_b : int
        Discordant pairs A alone passed and B alone passed.
    decided_at : int or None
        Pairs at the look where the verdict was reached.
    trajectory : tuple of Look
        Every look, in order.
    reason : str
        Anything a reader must know (for example, not every case has a pair yet).
    planned_for : (float, float) or None
        The pass rates (p_a, p_b) the e-process was planned for (see
        :func:`planned_prior`); None for the default mixture.
    on : {"pass", "score"}
        What is compared: pass rates, or mean scores (see
        :func:`evalstats.deciding._score_sequential.sequential_score_compare`,
        where ``only_a`` and ``only_b`` count the pairs A, B scored higher).
    """

    verdict: VerdictName
    evalue_b: float
    evalue_a: float
    pvalue: float
    difference: Interval
    about: str
    level: float
    pairs: int
    looks: int
    cases: int
    only_a: int
    only_b: int
    decided_at: int | None = None
    trajectory: tuple[Look, ...] = ()
    reason: str = field(default="")
    planned_for: tuple[float, float] | None = None
    on: str = "pass"

    @property
    def threshold(self) -> float:
        """The e-value a direction must reach for a verdict.

        2 / (1 - level) about cases like these and for mean scores; about these
        cases' pass rates 2 / ((1 - s) (1 - level)), s the share of 1 - level
        the interval spends on the discordance rate (40.4 at 95%).
        """
        if self.on == "score":
            return 2.0 / (1.0 - self.level)
        return math.exp(_log_bound(self.about, 1.0 - self.level))

    @property
    def evalue(self) -> float:
        """The larger of the current e-values (the direction the data lean)."""
        return max(self.evalue_b, self.evalue_a)

    def __str__(self) -> str:
        head = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}[
            self.verdict
        ]
        about = claim_words(self.about)
        if self.on == "score":
            about += ", mean score"
        if self.planned_for is not None:
            about += f", planned for {self.planned_for[0]:g} -> {self.planned_for[1]:g}"
        p = "p<0.001" if self.pvalue < 0.001 else f"p={self.pvalue:.2g}"
        text = (
            f"{head}: {self.difference}, anytime-valid ({about}), e-value {_e(self.evalue)} "
            f"(decides at {self.threshold:.3g}), {p}, {self.pairs} pairs, {self.looks} "
            f"look{'s' if self.looks != 1 else ''}, {100 * self.level:g}%"
        )
        if self.decided_at is not None:
            text += f"; decided after {self.decided_at} pairs"
        if self.reason:
            text += f"; {self.reason}"
        return visible(text, keep="")  # one line, whatever the reason quotes

    def trajectory_text(self, *, limit: int = 12) -> str:
        """The looks as a small table (the first, the last and the deciding one
        when there are more than ``limit``)."""
        looks = list(self.trajectory)
        keep = set(range(len(looks)))
        if len(looks) > limit:
            keep = set(range(limit // 2)) | set(range(len(looks) - limit // 2, len(looks)))
            keep |= {i for i, look in enumerate(looks) if look.pairs == self.decided_at}
        lines = [f"{'pairs':>7}  {'e-value B':>10}  {'e-value A':>10}  interval of B − A"]
        gap = False
        for i, look in enumerate(looks):
            if i not in keep:
                if not gap:
                    lines.append(f"{'...':>7}")
                gap = True
                continue
            gap = False
            ci = self._look_interval(look)
            mark = "  <- decided" if look.pairs == self.decided_at else ""
            lines.append(
                f"{look.pairs:>7}  {_e(look.evalue_b):>10}  {_e(look.evalue_a):>10}  {ci}{mark}"
            )
        return "\n".join(lines)

    def _look_interval(self, look: Look) -> Interval:
        """A look's interval, printed as the comparison's own is (points or a score)."""
        if self.on == "score":
            from ..stats._scores import ScoreInterval

            return ScoreInterval(
                look.estimate, look.low, look.high, self.level, "", difference=True
            )
        return Interval(look.estimate, look.low, look.high, self.level, "", difference=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``summary`` holds ``str(self)``."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) else (float(x) if math.isfinite(x) else None)

        return {
            "verdict": self.verdict,
            "summary": str(self),
            "about": self.about,
            "level": self.level,
            "threshold": self.threshold,
            "evalue_b": num(self.evalue_b),
            "evalue_a": num(self.evalue_a),
            "pvalue": float(self.pvalue),
            "difference": self.difference.to_dict(),
            "pairs": self.pairs,
            "looks": self.looks,
            "cases": self.cases,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "decided_at": self.decided_at,
            "trajectory": [look.to_dict() for look in self.trajectory],
            "reason": self.reason,
            "planned_for": None if self.planned_for is None else list(self.planned_for),
            **({"on": self.on} if self.on != "pass" else {}),
        }

    def _repr_html_(self) -> str:
        """A notebook's display: the verdict and its interval in the verdict's colour,
        then the text ``print`` gives and the looks."""
        from .._repr import result_html, verdict_words

        head = f"{verdict_words(self.verdict)}: {self.difference}"
        text = f"{self}\n{self.trajectory_text()}"
        return result_html(text, headline=head, verdict=self.verdict)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


def _e(x: float) -> str:
    if not math.isfinite(x) or x >= 1e6:
        return f"{x:.2g}" if math.isfinite(x) else "inf"
    return f"{x:.3g}"


# --- sequential_compare ---------------------------------------------------------


def _outcomes(name: str, results: Any) -> dict[str, np.ndarray]:
    """As the fixed-n compare checks them, without a Python loop over boolean arrays."""
    from ..stats._compare import _outcomes as checked

    if (
        isinstance(results, Mapping)
        and results
        and all(
            isinstance(seq, np.ndarray) and seq.dtype == bool and seq.ndim == 1 and seq.size
            for seq in results.values()
        )
    ):
        out = {str(case): seq for case, seq in results.items()}
        if len(out) == len(results):
            return out
    return checked(name, results)


def _paired_outcomes(
    results_a: Any, results_b: Any
) -> tuple[list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    a = _outcomes("results_a", results_a)
    b = _outcomes("results_b", results_b)
    from ..stats._compare import _pairing_problem

    problem = _pairing_problem(a, b)
    if problem:
        raise InvalidArgument(
            f"an anytime-valid comparison needs outcomes paired by (case, repeat): {problem}"
        )
    return list(a), a, b


def _round_robin(cases: list[str], lengths: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(case index, repeat) of every pair in the order rounds run them.

    Round r runs repeat r of every case that has one, in case order: the
    paired, alternating schedule of ``evalstats run``.
    """
    rounds = max(lengths)
    grid_case = np.tile(np.arange(len(cases)), rounds)
    grid_rep = np.repeat(np.arange(rounds), len(cases))
    keep = grid_rep < np.asarray(lengths)[grid_case]
    return grid_case[keep], grid_rep[keep]


def _look_points(looks: Any, case_idx: np.ndarray, rep: np.ndarray) -> np.ndarray:
    total = len(case_idx)
    if looks is None:
        # After every round: the last pair of each round.
        ends = np.flatnonzero(np.diff(rep, append=rep[-1] + 1) != 0) + 1
        return ends.astype(np.int64)
    if isinstance(looks, str | bytes) or not isinstance(looks, Sequence | np.ndarray):
        raise InvalidArgument(
            f"looks={looks!r} must be a sequence of pair counts (or None: after every round)"
        )
    points: list[int] = []
    for i, t in enumerate(looks):
        if isinstance(t, bool) or not isinstance(t, int | np.integer):
            raise InvalidArgument(f"looks[{i}]={t!r} must be a whole number of pairs")
        if not 1 <= t <= total:
            raise InvalidArgument(f"looks[{i}]={t!r} must be between 1 and {total} (the pairs)")
        if points and t <= points[-1]:
            raise InvalidArgument(f"looks[{i}]={t!r} must be larger than the look before it")
        points.append(int(t))
    if not points:
        raise InvalidArgument("looks=[] is empty; expected at least one look")
    return np.asarray(points, dtype=np.int64)


@refuses_scope
def sequential_compare(
    results_a: Mapping[str, Sequence[bool]],
    results_b: Mapping[str, Sequence[bool]],
    *,
    about: str = "these_cases",
    level: float = 0.95,
    looks: Sequence[int] | None = None,
    planned_for: tuple[float, float] | None = None,
) -> SequentialComparison:
    """Compare two variants with a verdict valid however often one looks.

    Parameters
    ----------
    results_a, results_b : mapping of case id to sequence of bool
        Each case's pass/fail outcomes in repeat order; paired by (case,
        repeat), so both sides need the same cases with the same repeat counts.
        The pairs are taken in the order ``evalstats run`` runs them: round r
        is repeat r of every case, in case order.
    about : {"these_cases", "cases_like_these"}
        ``these_cases``: a mixture e-process on the discordant pairs (see the
        module docstring), which speaks about these cases. ``cases_like_these``:
        a betting e-process over the cases' mean paired differences, which
        speaks about the population the cases were drawn from; it needs at
        least 2 cases and decides only after every case has a pair.
    level : float
        The confidence level; each direction spends (1 - level) / 2.
    looks : sequence of int, optional
        The numbers of pairs at which the data were looked at (increasing).
        By default, after every round (as ``evalstats run --until-decided``
        looks). The verdict is the one reached at the first look where an
        e-process reached :attr:`SequentialComparison.threshold`; later looks do
        not undo it.
    planned_for : (p_a, p_b), optional
        The pass rates the design was planned for (as given to
        :func:`sequential_plan`), chosen before the data: the "these cases"
        e-processes then mix over a prior concentrated on the share of
        discordant pairs that effect gives (:func:`planned_prior`). Valid
        whatever the truth; it decides earlier when the plan is about right
        and later when it is far off. None: the default mixture. For
        ``cases_like_these`` it is refused (its e-process is not planned).

    Returns
    -------
    SequentialComparison

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021).
    Time-uniform, nonparametric, nonasymptotic confidence sequences. Annals of
    Statistics 49, 1055-1080.

    Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random
    variables by betting. JRSS Series B 86, 1-27.

    Examples
    --------
    >>> a = {"order": [True, False] * 10, "refund": [True, False] * 10}
    >>> b = {"order": [True] * 20, "refund": [True] * 20}
    >>> c = sequential_compare(a, b)
    >>> c.verdict, c.only_b, c.only_a, c.decided_at
    ('b_better', 20, 0, 16)
    >>> round(c.evalue_b, 1)
    44998.2
    """
    level = check_level(level)
    about = check_about(about) or "these_cases"
    planned = _planned_about(planned_for, about)
    cases, a, b = _paired_outcomes(results_a, results_b)
    case_idx, points, xa, xb = _in_round_order(cases, a, b, looks, about)
    diff = xb.astype(np.int64) - xa.astype(np.int64)
    alpha = 1.0 - level
    reason = ""
    if about == "these_cases":
        only_b = np.cumsum(diff > 0)[points - 1]
        only_a = np.cumsum(diff < 0)[points - 1]
        prior = None if planned is None else planned_prior(*planned)
        log_b = log_evalue_discordant(only_b, only_b + only_a, prior=prior)
        log_a = log_evalue_discordant(only_a, only_b + only_a, prior=prior)
        estimate, low, high = _discordant_interval(only_b, only_a, points, alpha, prior)
        method = "mixture confidence sequence"
    else:
        estimate, low, high, log_b, log_a, started = _cases_trajectory(
            diff, case_idx, points, len(cases), alpha
        )
        if not started[-1]:
            reason = "not every case has a pair yet, so nothing is known about cases like these"
        method = "betting confidence sequence"
    return _comparison(
        points,
        (log_b, log_a),
        (estimate, low, high),
        diff,
        bound=_log_bound(about, alpha),
        interval=lambda est, lo, hi, _pairs: Interval(est, lo, hi, level, method, difference=True),
        about=about,
        level=level,
        cases=len(cases),
        reason=reason,
        planned_for=planned,
    )


def _in_round_order(
    cases: Sequence[str], a: Mapping[str, Any], b: Mapping[str, Any], looks: Any, about: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of ``a`` and ``b`` (per case, by repeat) taken round by round: each
    pair's case index, the looks' numbers of pairs, and A's and B's values in that
    order. About cases like these it takes at least 2 cases."""
    if about == "cases_like_these" and len(cases) < 2:
        raise InvalidArgument(
            f"about='cases_like_these' needs at least 2 cases, got {len(cases)}; "
            "use about='these_cases'"
        )
    lengths = [len(a[c]) for c in cases]
    case_idx, rep = _round_robin(cases, lengths)
    points = _look_points(looks, case_idx, rep)
    xa = np.concatenate([a[c] for c in cases])
    xb = np.concatenate([b[c] for c in cases])
    start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    flat = start[case_idx] + rep  # position of each round-robin pair in xa / xb
    return case_idx, points, xa[flat], xb[flat]


def _comparison(
    points: np.ndarray,
    log_evalues: tuple[np.ndarray, np.ndarray],
    sequence: tuple[np.ndarray, np.ndarray, np.ndarray],
    diff: np.ndarray,
    *,
    bound: float,
    interval: Callable[[float, float, float, int], Interval],
    about: str,
    level: float,
    cases: int,
    reason: str,
    **fields: Any,
) -> SequentialComparison:
    """An anytime-valid comparison from its looks' log e-values (B's, A's) and its
    confidence sequence (estimate, low, high) at each look's ``points`` pairs.

    The verdict comes from the first look where a side's e-value reaches
    ``bound`` (it stands once reached); the interval is intersected over the
    looks and held to the estimate where that keeps the verdict's side of 0;
    ``interval(estimate, low, high, pairs)`` makes the last look's printed
    interval. ``diff`` are the pairs' differences B - A in round order;
    ``fields`` go to :class:`SequentialComparison` as they are.
    """
    log_b, log_a = log_evalues
    estimate, low, high = sequence
    alpha = 1.0 - level
    low, high = _running_intersection(low, high)
    crossed_b = log_b >= bound
    crossed_a = log_a >= bound
    first = np.flatnonzero(crossed_b | crossed_a)
    verdicts: list[VerdictName] = ["cant_tell"] * len(points)
    decided_at = None
    if first.size:
        i = int(first[0])
        decision: VerdictName = "b_better" if crossed_b[i] else "a_better"
        verdicts[i:] = [decision] * (len(points) - i)
        decided_at = int(points[i])
    low, high = _holding_the_estimate(low, high, estimate, verdicts)
    best = float(np.max(np.maximum(log_b, log_a)))
    trajectory = tuple(
        Look(
            pairs=int(points[i]),
            evalue_b=float(np.exp(log_b[i])),
            evalue_a=float(np.exp(log_a[i])),
            estimate=float(estimate[i]),
            low=float(low[i]),
            high=float(high[i]),
            verdict=verdicts[i],
        )
        for i in range(len(points))
    )
    last = trajectory[-1]
    n = int(points[-1])
    used = diff[:n]
    return SequentialComparison(
        verdict=last.verdict,
        evalue_b=last.evalue_b,
        evalue_a=last.evalue_a,
        pvalue=float(min(1.0, math.exp(bound - best) * alpha)),
        difference=interval(last.estimate, last.low, last.high, n),
        about=about,
        level=level,
        pairs=n,
        looks=len(points),
        cases=cases,
        only_a=int(np.sum(used < 0)),
        only_b=int(np.sum(used > 0)),
        decided_at=decided_at,
        trajectory=trajectory,
        reason=reason,
        **fields,
    )


def _running_intersection(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The intersection of a confidence sequence's intervals over the looks so far.

    A confidence sequence covers at every look at once, so the intersection up
    to each look covers whenever every look does: it is a confidence sequence
    too, never wider (Howard et al. 2021, section 3). The verdict stands once
    reached, and so does an interval that excluded 0: the interval printed at a
    look agrees with the verdict there. The current estimate can fall outside
    it. Were the intersection ever empty (coverage already failed, a chance of
    at most 1 - level) it keeps the last interval that was not.
    """
    lo, hi = np.array(low, dtype=float), np.array(high, dtype=float)
    for i in range(1, len(lo)):
        new_lo, new_hi = max(lo[i], lo[i - 1]), min(hi[i], hi[i - 1])
        lo[i], hi[i] = (new_lo, new_hi) if new_lo <= new_hi else (lo[i - 1], hi[i - 1])
    return lo, hi


def _holding_the_estimate(
    low: np.ndarray, high: np.ndarray, estimate: np.ndarray, verdicts: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Each look's interval widened to the estimate there, where that keeps it on
    the verdict's side of 0 (a wider interval covers whenever the narrower one
    does). Only where the data turned after a verdict (B better reached, the
    estimate since fallen to 0 or below) does the estimate stay outside."""
    lo, hi = np.array(low, dtype=float), np.array(high, dtype=float)
    est = np.asarray(estimate, dtype=float)
    v = np.asarray(verdicts)
    known = np.isfinite(est)
    widen_low = known & ((v != "b_better") | (est > 0))
    widen_high = known & ((v != "a_better") | (est < 0))
    lo = np.where(widen_low, np.minimum(lo, est), lo)
    hi = np.where(widen_high, np.maximum(hi, est), hi)
    return lo, hi


def _planned_about(planned_for: Any, about: str) -> tuple[float, float] | None:
    planned = _planned_for(planned_for)
    if planned is not None and about != "these_cases":
        raise InvalidArgument(
            f"planned_for={planned_for!r} plans the 'these_cases' e-process; "
            f"about={about!r} mixes over its bets without a planned effect"
        )
    return planned


def _cases_trajectory(
    diff: np.ndarray, case_idx: np.ndarray, points: np.ndarray, cases: int, alpha: float
) -> tuple[np.ndarray, ...]:
    """Case means at each look and the "cases like these" e-processes there.

    Before every case has a pair the e-processes are 1 (the reverse-martingale
    argument starts at the first complete round) and the interval is [-1, 1].
    """
    counts = np.empty((len(points), cases), dtype=np.int64)
    # integer pass/fail differences are summed exactly; scores' as floats
    sums = np.empty((len(points), cases), dtype=np.result_type(diff.dtype, np.int64))
    for c in range(cases):
        where = np.flatnonzero(case_idx == c)
        n_c = np.searchsorted(where, points, side="left")
        cum = np.concatenate([[0], np.cumsum(diff[where])])
        counts[:, c] = n_c
        sums[:, c] = cum[n_c]
    started = (counts > 0).all(axis=1)
    means = np.divide(sums, counts, out=np.zeros(sums.shape), where=counts > 0)
    log_b = np.where(started, log_evalue_cases(means, direction=1), 0.0)
    log_a = np.where(started, log_evalue_cases(means, direction=-1), 0.0)
    low = np.full(len(points), -1.0)
    high = np.full(len(points), 1.0)
    if started.any():
        low[started], high[started] = _cases_interval(means[started], alpha)
    estimate = np.where(started, means.mean(axis=1), np.nan)
    # The limits come from a bisection to within ~1e-15; where every case mean sits on a
    # bound (all pairs won by B, say) that tolerance could leave the estimate just outside.
    low = np.where(started, np.minimum(low, estimate), low)
    high = np.where(started, np.maximum(high, estimate), high)
    return estimate, low, high, log_b, log_a, np.asarray(started)


# --- simulation: power, pairs to a verdict, false verdicts ----------------------


def discordant_thresholds(
    pairs: int, *, level: float = 0.95, prior: tuple[float, float] | None = None
) -> np.ndarray:
    """For m = 0..pairs discordant pairs, the fewest B wins that reach the verdict's bound.

    The bound is 2 / ((1 - s) (1 - level)), as :attr:`SequentialComparison.threshold`.

    The "B better" mixture grows with B's wins at a fixed number of discordant
    pairs, so B is better exactly when its wins reach this count (``m + 1``
    where no split of m pairs is enough). The simulator compares counts with
    this table instead of evaluating the mixture at every pair. ``prior``: as
    for :func:`log_evalue_discordant` (the planned mixture, also growing with
    the wins).
    """
    bound = _log_bound("these_cases", 1.0 - level)
    m = np.arange(pairs + 1)
    lo = np.full(pairs + 1, -1)  # a count known to fall short (-1: none yet)
    hi = m + 1  # a count known to reach it (m + 1 stands for "no split does")
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2  # in [0, m] while hi - lo > 1
        ok = log_evalue_discordant(mid, m, prior=prior) >= bound
        narrowing = hi - lo > 1
        hi = np.where(narrowing & ok, mid, hi)
        lo = np.where(narrowing & ~ok, mid, lo)
    return hi


@dataclass(frozen=True)
class SequentialPower:
    """What a sequential design does, by simulation.

    Attributes
    ----------
    power : Interval
        Share of experiments ending in "B better" within the budget, with its
        95% Monte Carlo (Wilson) interval. With p_a == p_b it is the false
        "B better" rate.
    wrong : Interval
        Share ending in "A better".
    expected_pairs : Interval
        Mean number of pairs run (to the verdict, or the whole budget), with a
        95% Monte Carlo interval (mean +- 1.96 SE).
    median_pairs : float
        Median number of pairs run.
    budget : int
        The budget in pairs (runs per case x cases).
    experiments : int
    settings : dict
    """

    power: Interval
    wrong: Interval
    expected_pairs: Interval
    median_pairs: float
    budget: int
    experiments: int
    settings: dict[str, Any] = field(default_factory=dict)
    stopped: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    verdicts: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def __str__(self) -> str:
        return (
            f"power {self.power} within {self.budget} pairs; on average "
            f"{self.expected_pairs.estimate:.1f} pairs ({self.expected_pairs.low:.1f} to "
            f"{self.expected_pairs.high:.1f}), median {self.median_pairs:g}; "
            f"{self.experiments} simulated experiments, ranges are 95% Monte Carlo intervals"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "power": self.power.to_dict(),
            "wrong": self.wrong.to_dict(),
            "expected_pairs": self.expected_pairs.to_dict(),
            "median_pairs": self.median_pairs,
            "budget": self.budget,
            "experiments": self.experiments,
            "settings": dict(self.settings),
        }


def _draw_differences(
    rng: np.random.Generator,
    experiments: int,
    runs: int,
    cases: int,
    p_a: float,
    p_b: float,
    icc: float,
    spread: float,
) -> np.ndarray:
    """Paired differences (B pass - A pass), shape (experiments, runs, cases).

    Each case's rates come from :class:`~evalstats.planning._power.CaseModel` (one draw
    per experiment and case); given them, A and B pass each run independently,
    as the stand-ins do.
    """
    from ..planning._power import CaseModel

    if icc == 0.0 and spread == 0.0:
        qa = np.full((experiments, cases), p_a)
        qb = np.full((experiments, cases), p_b)
    else:
        qa, qb = CaseModel(p_a, p_b, icc, spread).draw(rng, (experiments, cases))
    only_b = (qb * (1.0 - qa))[:, None, :]
    only_a = (qa * (1.0 - qb))[:, None, :]
    u = rng.random((experiments, runs, cases))
    return np.where(u < only_b, 1, np.where(u < only_b + only_a, -1, 0)).astype(np.int8)


def _first_crossing(
    up: np.ndarray, down: np.ndarray, every: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs run and verdict (+1, -1, 0) from crossing masks of shape (experiments, pairs).

    With ``every`` > 1 the data are looked at only after every ``every`` pairs
    (after each round of that many cases).
    """
    if every > 1:
        up, down = up[:, every - 1 :: every], down[:, every - 1 :: every]
    either = up | down
    hit = either.any(axis=1)
    first = np.argmax(either, axis=1)
    rows = np.arange(len(first))
    verdict = np.where(hit, np.where(up[rows, first], 1, -1), 0).astype(np.int8)
    stopped = np.where(hit, first + 1, up.shape[1]) * every
    return stopped, verdict


def _simulate_these(
    d: np.ndarray, table: np.ndarray, every: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    flat = d.reshape(d.shape[0], -1)
    wins_b = np.cumsum(flat > 0, axis=1)
    wins_a = np.cumsum(flat < 0, axis=1)
    need = table[wins_a + wins_b]
    return _first_crossing(wins_b >= need, wins_a >= need, every)


def _simulate_cases(d: np.ndarray, level: float, every: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """First crossings of the cases-like-these e-processes, looking after every pair.

    After a pair of case c in round r only case c's mean changes, so each
    direction's log wealth at every node of the mixture is a running sum of
    per-pair changes; before every case has a pair the e-processes are 1.
    """
    from scipy.special import logsumexp

    experiments, runs, cases = d.shape
    u, w = _legendre(cases)
    means = np.cumsum(d, axis=1, dtype=np.float64) / np.arange(1, runs + 1)[None, :, None]
    bound = math.log(2.0 / (1.0 - level))
    masks = []
    for sign in (1.0, -1.0):
        terms = np.log1p(sign * u[None, None, None, :] * means[..., None])  # (E, R, C, nodes)
        terms[:, 1:] -= terms[:, :-1].copy()
        log_w = np.cumsum(terms.reshape(experiments, runs * cases, len(u)), axis=1)
        log_e = logsumexp(log_w + np.log(w), axis=-1)
        log_e[:, : cases - 1] = 0.0
        masks.append(log_e >= bound)
    return _first_crossing(masks[0], masks[1], every)


#: The largest budget (runs x cases pairs) a simulation of the sequential
#: design takes: its thresholds and e-processes grow with the budget, and
#: 20,000 pairs already take about half a minute.
MAX_SIMULATED_PAIRS = 20_000

#: The most pairs simulated in all (experiments x budget), about two minutes.
MAX_SIMULATED_WORK = 200_000_000


def _check_simulated(runs: int, cases: int, experiments: int) -> None:
    """Refuse a simulation too large to finish: the budget, or budget times experiments."""
    pairs = runs * cases
    if pairs > MAX_SIMULATED_PAIRS:
        raise InvalidArgument(
            f"runs={runs} x cases={cases} is a budget of {pairs:,} pairs, more than the "
            f"{MAX_SIMULATED_PAIRS:,} a simulation of the sequential design takes"
        )
    if pairs * experiments > MAX_SIMULATED_WORK:
        raise InvalidArgument(
            f"experiments={experiments} x {pairs:,} pairs is more than the "
            f"{MAX_SIMULATED_WORK:,} simulated pairs a simulation runs; give fewer experiments"
        )


@refuses_scope
def simulate_sequential(
    p_a: float,
    p_b: float,
    runs: int,
    *,
    cases: int = 1,
    icc: float = 0.0,
    spread: float = 0.0,
    about: str = "these_cases",
    level: float = 0.95,
    experiments: int = 2000,
    seed: int = 0,
    looks: str = "pair",
    planned_for: tuple[float, float] | None = None,
) -> SequentialPower:
    """Simulate the sequential design: power within a budget, pairs to a verdict.

    Each experiment runs ``cases`` cases round by round (one pair of every
    case per round) for at most ``runs`` rounds, looks after every pair, and
    stops at the first verdict of :func:`sequential_compare` (the same
    e-processes and threshold). Case rates follow
    :class:`~evalstats.planning._power.CaseModel` (``icc``, ``spread``); given them, A
    and B pass independently. Vectorised over experiments with numpy.

    Parameters
    ----------
    p_a, p_b : float
        Mean pass rates of A and B.
    runs : int
        The budget: runs per case (``--max-runs``).
    cases : int
        Number of cases (1: every pair alike).
    icc, spread : float
        Between-case spread of A's rates and of B's gain (see ``CaseModel``).
    about : {"these_cases", "cases_like_these"}
    level : float
    experiments, seed : int
    looks : {"pair", "round"}
        Look after every pair, or only after every round (as ``evalstats run
        --until-decided`` does).
    planned_for : (p_a, p_b), optional
        The rates the e-process was planned for (see
        :func:`sequential_compare`); they need not be the true ``p_a``,
        ``p_b``, so a wrong plan can be simulated. None: the default mixture.

    Returns
    -------
    SequentialPower

    Examples
    --------
    >>> sim = simulate_sequential(0.7, 0.9, 120, experiments=400, seed=1)
    >>> 0.8 < sim.power.estimate < 1.0 and sim.expected_pairs.estimate < 100
    True
    """
    from .._validate import as_rate, check_experiments, check_spread, whole_number
    from ..stats._intervals import proportion_ci

    p_a = float(as_rate("p_a", p_a))
    p_b = float(as_rate("p_b", p_b))
    runs = whole_number("runs", runs)
    cases = whole_number("cases", cases)
    experiments = check_experiments(experiments)
    seed = whole_number("seed", seed, minimum=0)
    level = check_level(level)
    about = check_about(about) or "these_cases"
    every = cases if check_method(looks, ("pair", "round"), name="looks") == "round" else 1
    try:
        icc, spread = float(icc), float(spread)
    except (TypeError, ValueError):
        raise InvalidArgument(f"icc={icc!r} and spread={spread!r} must be numbers") from None
    spread = check_spread(spread)
    if icc != 0 or spread != 0:
        from ..stats._casemodel import CaseModel

        CaseModel(p_a, p_b, icc, spread)  # a case model it cannot draw from is refused now
    if about == "cases_like_these" and cases < 2:
        raise InvalidArgument(f"about='cases_like_these' needs at least 2 cases, got cases={cases}")
    _check_simulated(runs, cases, experiments)
    planned = _planned_about(planned_for, about)
    prior = None if planned is None else planned_prior(*planned)
    rng = np.random.default_rng(seed)
    pairs = runs * cases
    table = (
        discordant_thresholds(pairs, level=level, prior=prior) if about == "these_cases" else None
    )
    # Bound memory: the cases-like-these e-process holds (block, pairs, nodes) floats.
    width = pairs * (len(_legendre(cases)[0]) if table is None else 1)
    block = max(1, min(experiments, 4_000_000 // max(width, 1)))
    stopped, verdicts = [], []
    for start in range(0, experiments, block):
        n = min(block, experiments - start)
        d = _draw_differences(rng, n, runs, cases, p_a, p_b, icc, spread)
        if table is not None:
            s, v = _simulate_these(d, table, every)
        else:
            s, v = _simulate_cases(d, level, every)
        stopped.append(s)
        verdicts.append(v)
    stop = np.concatenate(stopped)
    verdict = np.concatenate(verdicts)
    mean = float(stop.mean())
    half = (
        1.959963984540054 * float(stop.std(ddof=1)) / math.sqrt(experiments)
        if experiments > 1
        else math.nan
    )
    return SequentialPower(
        power=proportion_ci(int(np.sum(verdict == 1)), experiments, method="wilson"),
        wrong=proportion_ci(int(np.sum(verdict == -1)), experiments, method="wilson"),
        expected_pairs=Interval(mean, mean - half, mean + half, 0.95, "normal"),
        median_pairs=float(np.median(stop)),
        budget=pairs,
        experiments=experiments,
        settings={
            "p_a": p_a,
            "p_b": p_b,
            "runs": runs,
            "cases": cases,
            "icc": icc,
            "spread": spread,
            "about": about,
            "level": level,
            "seed": seed,
            "looks": looks,
            "planned_for": planned,
        },
        stopped=stop,
        verdicts=verdict,
    )


# --- planning the sequential design ---------------------------------------------


@dataclass(frozen=True)
class SequentialPlan:
    """The sequential design for given true rates and a budget, against the fixed one.

    Attributes
    ----------
    simulation : SequentialPower
        Power within the budget, mean and median pairs to a verdict.
    fixed_power : float or None
        Power of the fixed design that spends the whole budget (the paired
        score test of ``compare``, :func:`~evalstats.planning._power.paired_power`,
        for "these cases", :func:`~evalstats.planning._power.clustered_power` for
        "cases like these").
    fixed_pairs : int or None
        Pairs the fixed design needs to reach the sequential design's power
        (None when it needs more than 20 times the budget).
    batched : bool
        Whether the rounds go through a provider's batch API (``run
        --until-decided --batch``): then each round is a batch per variant.
    turnaround_s : float or None
        With ``batched``, a batch's expected turnaround in seconds: the
        expected wall time is then the rounds times it.

    With a look after every round (``looks="round"``, as ``run --until-decided``
    looks), :attr:`rounds` gives the rounds run to a verdict (or the budget):
    their mean with a 95% Monte Carlo interval, and their median and 90th
    percentile, each with a 95% Monte Carlo interval from the order
    statistics of the simulated experiments.
    """

    simulation: SequentialPower
    fixed_power: float | None
    fixed_pairs: int | None
    batched: bool = False
    turnaround_s: float | None = None

    @property
    def rounds(self) -> dict[str, Any] | None:
        """Rounds run (to a verdict, or the whole budget) by simulation; None unless the
        simulation looked after every round."""
        s = self.simulation
        if s.settings.get("looks") != "round" or not len(s.stopped):
            return None
        return _round_figures(np.asarray(s.stopped) // int(s.settings["cases"]))

    def __str__(self) -> str:
        s = self.simulation
        about = claim_words(s.settings["about"])
        cases = s.settings["cases"]
        lines = [
            f"sequential design ({about}), p_a={s.settings['p_a']:g}, "
            f"p_b={s.settings['p_b']:g}, budget {s.settings['runs']} runs x {cases} "
            f"case{'s' if cases != 1 else ''} = {s.budget} pairs:",
            f"  power within the budget: {s.power}",
            f"  pairs to a verdict (or the budget): mean {s.expected_pairs.estimate:.1f} "
            f"({s.expected_pairs.low:.1f} to {s.expected_pairs.high:.1f}), median "
            f"{s.median_pairs:g}",
        ]
        planned = s.settings.get("planned_for")
        if planned is not None:
            lines.insert(
                1,
                f"  e-process planned for {planned[0]:g} -> {planned[1]:g} (run it with "
                f"--until-decided --planned-for {planned[0]:g},{planned[1]:g})",
            )
        if self.fixed_power is not None:
            lines.append(
                f"  the fixed design spending all {s.budget} pairs: power {self.fixed_power:.1%}"
            )
        if self.fixed_pairs is not None:
            ratio = s.expected_pairs.estimate / self.fixed_pairs
            lines.append(
                f"  the fixed design needs {self.fixed_pairs} pairs for the same power; the "
                f"sequential one uses {ratio:.2f} of that on average"
            )
        lines += self._round_lines()
        lines.append(
            f"  ({s.experiments} simulated experiments, seed {s.settings['seed']}; ranges are "
            "95% Monte Carlo intervals)"
        )
        return "\n".join(lines)

    def _round_lines(self) -> list[str]:
        """The rounds (looks) to a verdict and, with batches, the batches and wall time."""
        r = self.rounds
        if r is None:
            return []
        mean, median, p90 = r["mean"], r["median"], r["p90"]
        lines = [
            f"  rounds (looks) to a verdict or the budget of {self.simulation.settings['runs']}: "
            f"mean {mean['estimate']:.1f} ({mean['low']:.1f} to {mean['high']:.1f}), median "
            f"{median['estimate']:g} ({median['low']:g} to {median['high']:g}), 90th percentile "
            f"{p90['estimate']:g} ({p90['low']:g} to {p90['high']:g})"
        ]
        if self.batched:
            lines.append(
                "  with --batch each round is one batch per variant, sent together (more when "
                f"a round holds more requests than --batch SIZE): {2 * mean['estimate']:.1f} "
                "batches on average"
            )
            if self.turnaround_s is not None:
                t = self.turnaround_s
                lines.append(
                    f"  at {_hours(t)} a batch, wall time mean {_hours(mean['estimate'] * t)} "
                    f"({_hours(mean['low'] * t)} to {_hours(mean['high'] * t)}), median "
                    f"{_hours(median['estimate'] * t)}, 90th percentile "
                    f"{_hours(p90['estimate'] * t)}"
                )
        return lines

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "simulation": self.simulation.to_dict(),
            "fixed_power": self.fixed_power,
            "fixed_pairs": self.fixed_pairs,
        }
        rounds = self.rounds
        if rounds is not None:
            out["rounds"] = rounds
            if self.batched:
                out["batches_per_round"] = 2
                out["batch_turnaround_s"] = self.turnaround_s
                if self.turnaround_s is not None:
                    out["wall_time_s"] = {
                        k: {q: v * self.turnaround_s for q, v in rounds[k].items()}
                        for k in ("mean", "median", "p90")
                    }
        return out

    def _repr_html_(self) -> str:
        """A notebook's display: the text ``print`` gives, its first line as the headline."""
        from .._repr import result_html

        head, _, rest = str(self).partition("\n")
        return result_html(rest, headline=head)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


def _round_figures(rounds: np.ndarray) -> dict[str, Any]:
    """Mean, median and 90th percentile of simulated rounds, each with a 95% Monte Carlo
    interval: mean +- 1.96 SE, and for a quantile q the order statistics of ranks
    Binomial(n, q)'s 2.5% and 97.5% points (distribution-free)."""
    from scipy.stats import binom

    x = np.sort(np.asarray(rounds, dtype=float))
    n = len(x)
    mean = float(x.mean())
    half = 1.959963984540054 * float(x.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan

    def quantile(q: float) -> dict[str, float]:
        lo = int(binom.ppf(0.025, n, q))
        hi = int(binom.ppf(0.975, n, q))
        return {
            "estimate": float(np.quantile(x, q, method="inverted_cdf")),
            "low": float(x[max(lo - 1, 0)]),
            "high": float(x[min(hi, n - 1)]),
        }

    return {
        "mean": {"estimate": mean, "low": mean - half, "high": mean + half},
        "median": quantile(0.5),
        "p90": quantile(0.9),
    }


def _hours(seconds: float) -> str:
    """A planned wall time: 45 min, 3.5 h, 2.1 days."""
    if seconds < 3600:
        return f"{seconds / 60:.3g} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.3g} days"


@refuses_scope
def sequential_plan(
    p_a: float,
    p_b: float,
    runs: int,
    *,
    cases: int = 1,
    icc: float = 0.0,
    spread: float = 0.0,
    about: str | None = None,
    level: float = 0.95,
    experiments: int = 4000,
    seed: int = 0,
    looks: str = "pair",
    planned_for: tuple[float, float] | None = None,
) -> SequentialPlan:
    """Power within a budget and pairs to a verdict of the sequential design.

    Simulates :func:`simulate_sequential` and sets it beside the fixed design:
    its power when it spends the whole budget, and the pairs it needs for the
    power the sequential design reaches. ``about`` defaults to "these_cases"
    when ``icc`` and ``spread`` are 0 and to "cases_like_these" otherwise.
    ``planned_for``: the rates the e-process is planned for (usually
    ``(p_a, p_b)`` themselves; give the same to ``run_until_decided`` or
    ``sequential_compare``), or None for the default mixture.

    Examples
    --------
    >>> plan = sequential_plan(0.7, 0.9, 131, experiments=2000)
    >>> plan.fixed_pairs, round(plan.simulation.power.estimate, 2)
    (86, 0.91)
    """
    from ..planning._power import CaseModel, clustered_power, paired_power

    if about is None:
        about = "these_cases" if icc == 0 and spread == 0 else "cases_like_these"
    sim = simulate_sequential(
        p_a,
        p_b,
        runs,
        cases=cases,
        icc=icc,
        spread=spread,
        about=about,
        level=level,
        experiments=experiments,
        seed=seed,
        looks=looks,
        planned_for=planned_for,
    )
    target = float(sim.power.estimate)
    fixed_power: float | None = None
    fixed_pairs: int | None = None
    if about == "these_cases" and icc == 0 and spread == 0:
        fixed_power = paired_power(p_a, p_b, sim.budget, level=level)
        fixed_pairs = next(
            (
                n
                for n in range(1, 20 * sim.budget + 1)
                if paired_power(p_a, p_b, n, level=level) >= target
            ),
            None,
        )
    elif about == "cases_like_these":
        model = CaseModel(p_a, p_b, icc, spread)
        fixed_power = float(clustered_power(model, cases, runs, level=level))
        repeats = np.arange(1, 20 * runs + 1)
        reach = np.flatnonzero(clustered_power(model, cases, repeats, level=level) >= target)
        fixed_pairs = int(repeats[reach[0]]) * cases if reach.size else None
    return SequentialPlan(sim, fixed_power, fixed_pairs)


# --- results files ---------------------------------------------------------------


@refuses_scope
def sequential_results(
    results: Any,
    a: str,
    b: str,
    *,
    about: str = "these_cases",
    level: float = 0.95,
    planned_for: tuple[float, float] | None = None,
) -> SequentialComparison:
    """The anytime-valid comparison of variant ``b`` with ``a`` in a results file.

    Valid however many times the file has been looked at, and however it grew
    (resumed, extended with more runs). The outcomes are paired by (case,
    repeat); a pair where either side is unmeasured or missing is left out, and
    the reason says how many. The pairs are taken round by round in the order
    ``evalstats run`` runs them, with a look after every round.

    Parameters
    ----------
    results : Results, RunSource or path
        A results file, what :func:`evalstats.results._file.read_results` returned,
        or a :class:`~evalstats.reading._source.RunSource` (counted once).
    a, b : str
        Variant names; positive differences mean B passes more often.
    about : {"these_cases", "cases_like_these"}
    level : float
    planned_for : (p_a, p_b), optional
        The rates the e-process was planned for (see
        :func:`sequential_compare`). A run started with ``run_until_decided(...,
        planned_for=...)`` records them in its manifest, and they are used
        when this is None; a different planned effect is refused, because an
        e-process has to be chosen before the data it judges.
    """
    from ..reading._source import tally
    from ..results._file import Results

    level = check_level(level)
    about = check_about(about) or "these_cases"
    res = results if isinstance(results, Results) else tally(results)
    planned_for = _recorded_plan(res, _planned_for(planned_for))
    if a == b:
        raise InvalidArgument(f"a={a!r} and b={b!r} are the same variant; name two")
    out_a, out_b = res.outcomes(a), res.outcomes(b)
    if set(out_a) != set(out_b) or any(len(out_a[c]) != len(out_b[c]) for c in out_a):
        raise InvalidArgument(
            f"an anytime-valid comparison needs {a!r} and {b!r} run on the same (case, "
            "repeat) slots, which this file's schedule did not do"
        )
    xa: dict[str, list[bool]] = {}
    xb: dict[str, list[bool]] = {}
    left_out = 0
    for case in out_a:
        for x, y in zip(out_a[case], out_b[case], strict=True):
            if x is None or y is None:
                left_out += 1
                continue
            xa.setdefault(case, []).append(bool(x))
            xb.setdefault(case, []).append(bool(y))
    if not xa:
        raise InvalidArgument(
            f"{res.path or 'the results'}: no (case, repeat) pair has a measured outcome "
            f"for both {a!r} and {b!r}; nothing to compare"
        )
    result = sequential_compare(xa, xb, about=about, level=level, planned_for=planned_for)
    notes = [result.reason] if result.reason else []
    if left_out:
        notes.append(
            f"{left_out} pair{'s' if left_out != 1 else ''} with an unmeasured or missing side "
            "left out"
        )
    return replace(result, reason="; ".join(notes))


def planned_record(planned_for: tuple[float, float] | None) -> dict[str, float] | None:
    """What a results file records of a planned effect: the rates, the share and
    the prior, so the e-process can be recomputed from the file alone."""
    if planned_for is None:
        return None
    share = planned_share(*planned_for)
    return {
        "p_a": planned_for[0],
        "p_b": planned_for[1],
        "share": max(share, 1.0 - share),
        "concentration": PLANNED_CONCENTRATION,
    }


def _recorded_plan(res: Any, given: tuple[float, float] | None) -> tuple[float, float] | None:
    """The planned effect of a sequential run's manifest, checked against ``given``."""
    settings = res.manifest.get("until_decided") if isinstance(res.manifest, Mapping) else None
    recorded = settings.get("planned_for") if isinstance(settings, Mapping) else None
    if not isinstance(recorded, Mapping):
        return given
    where = res.path or "the results"
    try:
        planned = _planned_for((recorded["p_a"], recorded["p_b"]))
    except (KeyError, InvalidArgument):
        raise InvalidArgument(
            f"{where}: the manifest's planned effect {dict(recorded)!r} cannot be read"
        ) from None
    if recorded.get("concentration") != PLANNED_CONCENTRATION:
        raise InvalidArgument(
            f"{where}: the run's planned e-process has concentration "
            f"{recorded.get('concentration')!r}; this version of evalstats uses "
            f"{PLANNED_CONCENTRATION:g} and cannot recompute that one"
        )
    if given is not None and given != planned:
        raise InvalidArgument(
            f"planned_for={given!r} differs from the effect this run was planned for "
            f"{planned!r}; an e-process is chosen before the data it judges, so it keeps that one"
        )
    return planned
