"""How often the no-regression gate passes a variant at, or beyond, its margin.

``gate --no-regression-vs old --margin M`` passes when the lower limit of the
interval for p_new - p_old lies above -M (:func:`evalstats.deciding._gate.non_inferiority`).
A variant exactly M worse sits on the boundary: a gate at level 0.95 (a
one-sided test at 2.5%) should pass it at most 2.5% of the time, and one
truly worse by more should pass less often. What "exactly M worse" means
depends on the claim the gate makes:

* about **these cases** (``--about these-cases``: the paired score test and the
  interval that inverts it, ``paired_diff_ci(..., method="tango_cc")``, on all
  runs): these cases' own rates differ by M. Each experiment draws its
  cases from the case model and then shifts new's rates on the logit scale
  so that these cases' mean difference is exactly -M.
* about **cases like these** (the clustered comparison: the
  distribution-free betting interval, at every number of cases): the case
  model's mean difference is -M, and each experiment's cases are a fresh draw.

Part "these" (the default): the gate about these cases at these cases'
boundary over the grid of issue 23, 10, 30, 100 and 300 cases x 1, 3, 5 and
10 runs per case x icc 0, 0.2 and 0.5 x old's pass rate 0.5, 0.8, 0.9 and
0.98, margins 5 and 10 points (384 cells), for the old rule (Newcombe's
paired interval) and the new one (Tango's score interval with a quarter-pair
continuity correction), beside the candidates it was chosen from: Tango's
interval without the correction, with half a pair, and an exact
unconditional test on Tango's statistic (:func:`eu_critical`, Sidik 2003).
For each cell: the share of runs the gate passes, the share it calls
"worse", and for icc 0 (the same rates on every case, so the pooled table is
multinomial) the new rule's exact rate (:func:`exact_icc0`). Then, with new
exactly as good as old on these cases: the false "B better" and "A better"
verdicts at 95% (the old verdict: the exact McNemar test), and the gate's
power at a 10-point margin at 10 x 5 and 30 x 3. The verdicts are
vectorised over experiments (the public ``paired_diff_pvalue`` and
``paired_diff_ci``); :func:`check_these_against_public` confirms on the
first experiments of every design that ``compare`` and ``non_inferiority``
give the same verdicts.

Part "exact": each score rule's largest one-sided error by exact
enumeration (:func:`exact_errors`) at every number of pairs from 10 to 150,
then 160 to 400 by 20 and 500 to 3,000, over every nuisance value a paired
run allows (old's and new's outcomes on a pair independent given the case,
so not negatively associated).

Part "like": at old 90%, icc 0.3, the claims compared: the these-cases rule
at its own boundary, the cases-like-these rule at its boundary, the
these-cases rule judged against the cases-like-these boundary (the rate at
which a verdict about these cases would wrongly pass a variant that is M
worse on cases like these: the reason the claim must be chosen and stated),
the power of the cases-like-these rule when new is as good as old, and how
often each passes a new variant 20 points worse (90% -> 70%), where before
the margin "can't tell" counted as no regression and the gate passed 35% of
10-case runs. Part "candidates": the limits about cases like these from 100
cases, where the gate once switched to CR2 + t: that t interval, Johnson's
(1978) modified t, Hall's (1992) cubic transformation of t, and the betting
interval (:func:`candidate_limits`).

Every rate is printed with its 95% Monte-Carlo (Wilson) interval.

Measured, part "these" (50,000 experiments a cell, seed 2024):

* the new rule passes at most 2.61% (2.47 to 2.75) of runs at the boundary
  (0.5, icc 0.2, margin 10, 300 x 5); no cell's Monte-Carlo upper bound is
  above 2.8%, and the 8 cells whose estimate is above 2.5% are at 300
  cases, where its exact rate at icc 0 is 2.44-2.47%. At icc 0 its exact
  rate is at most 2.47% in every cell. At 100 x 3 it passes 0.04-2.48%.
* the old rule (Newcombe's interval) passes up to 3.58% (3.42 to 3.75, 0.5,
  icc 0, margin 5, 10 x 1); 113 cells are above 2.5%, about 38 of them
  beyond Monte-Carlo error (lower bound above 2.5%), and 36 have an upper
  bound above 2.8% (3.0-3.6% at 10 and 30 cases with rates near 0.5); at
  100 x 3 up to 2.67% (2.53 to 2.81).
* the candidates: without the correction up to 2.84% (2.70 to 2.99, 10 x 5,
  rate 0.5), 61 cells above 2.5%; half a pair up to 2.56%, 5 cells; the
  exact unconditional test up to 2.61%, 18 cells above 2.5% by Monte-Carlo
  error alone (its exact size is at most 2.5% in every cell).
* "worse" (the upper limit below -M) at the boundary, which should also err
  at most 2.5%: the new rule up to 3.16% (3.01 to 3.32, rate 0.98, icc 0,
  margin 5, 100 x 1), 21 cells above 2.5%, all with few discordant pairs
  (rates 0.9-0.98); half a pair the same worst cell, 3 cells; the exact
  unconditional test at most 2.41%; Newcombe up to 2.61%.
* new = old: false "B better" at most 2.54% (2.41 to 2.68) and "A better" at
  most 2.57% (2.43 to 2.71), both at 300 cases, no upper bound above 2.8%
  (exact McNemar, the old verdict: at most 2.36% and 2.43%; Newcombe's
  interval up to 3.16%).
* the gate's power when new = old, margin 10 points, old 90%: 10 x 5 runs
  30.4% (30.0 to 30.8) at icc 0, 35.2% at icc 0.2, 47.5% at icc 0.5; 30 x 3
  52.6% (52.1 to 53.0), 61.4%, 77.6% (Newcombe's interval: 32.8%, 37.8%,
  50.8% and 56.4%, 64.7%, 80.1%; the exact unconditional test the same as
  the new rule to 0.4 points). At old 98%: 61.8-80.5% and 93.9-98.3%. At
  old 50% and 80% the runs are too few for a 10-point margin: 15.1-34.0% at
  10 x 5 and 24.7-57.2% at 30 x 3 (Newcombe's 18.1-38.9% and 27.5-62.8%).

Measured, part "exact": with the quarter pair, the gate's pass at margins
10 and 5 and "B better" at 0 err at most 2.470%, 2.465% and 2.463% (all at
3,000 pairs, rising towards 2.5% from below); the claims on the other side
(lower limit above +5 or +10 points, the mirror of "worse") up to 4.24% (106
pairs, s = 0.0067) and 4.06%. Without the correction: 3.14%, 3.05% (17 and 20
pairs) and 2.69%; with half a pair 2.43%, 2.43%, 2.42% and up to 3.50% on the
other side.

Measured, part "like" (6,000 experiments a cell; old 90%, icc 0.3; margins 5
and 10 points):

* about these cases, at these cases' boundary: 1.2-2.0% at 10 x 5, 40 x 3,
  100 x 3 and 300 x 3 (worst 2.0%, 1.7 to 2.4): within 2.5%.
* the same verdict against the cases-like-these boundary: 1.7-3.4% (worst
  3.4%, 2.9 to 3.9, at 10 x 5 and at 300 x 3 with a 10-point margin).
* about cases like these (the betting interval at every size): 0.0-0.5%
  (worst 0.5%, 0.4 to 0.7, at 100 x 3 with a 10-point margin): within 2.5%.
  A new variant as good as the old passes 0.0% of 10 x 5 runs, 1.2% and
  28.6% (27.5 to 29.8) of 40 x 3 runs, 29.4% (28.3 to 30.6) and 93.6% of
  100 x 3 runs and 89.8% (89.0 to 90.5) and 100% of 300 x 3 runs, at a 5-
  and a 10-point margin.
* 20 points worse (90% -> 70%) with a 10-point margin: 0.2% (0.1 to 0.3)
  about these cases at 10 x 5, 0.0% elsewhere.
* candidates from 100 cases, at the boundary (passes / says 'worse'; power
  when new = old), 100 x 3 and 300 x 3, margins 5 and 10 points: the t
  interval on the case means (CR2 + Satterthwaite, which the gate used from
  100 cases before) passes 3.3%, 3.5%, 3.4% and 3.6% (worst 3.2 to 4.2),
  above its level; Johnson's modified t 3.2%, 2.4%, 2.6%, 2.8% and Hall's
  transformation 3.1%, 3.0%, 2.5%, 2.5%, their upper limits erring 2.3-2.8%
  (worst Monte-Carlo upper bound 3.7%): near the level, not within it; the
  betting interval 0.3-0.4% on each side. Power at a 5-point margin: t 68.9%
  (67.7 to 70.1), Johnson 66.4%, Hall 66.8%, betting 29.6% (28.5 to 30.8)
  at 100 x 3; 98.5% against 89.9% (89.1 to 90.7) at 300 x 3. The betting
  interval is the only candidate that keeps 2.5%, and the gate uses it.

Run: python simulations/gate_margin.py [--part these|exact|like|candidates|all]
[--experiments N] [--check N] [--seed S]. The default (part "these", 4,000
experiments a cell) takes a few minutes on one core; the figures above came
from --experiments 50000 (about 20 minutes of one core); "exact" takes about
4 minutes, "like" and "candidates" about 15 together.
"""

from __future__ import annotations

import argparse

import numpy as np

from evalstats.planning._power import CaseModel
from evalstats.stats._intervals import clustered_limits, paired_diff_ci, proportion_ci
from evalstats.stats._tango import paired_diff_pvalue

#: (cases, runs) per variant.
DESIGNS = [(10, 5), (40, 3), (100, 3), (300, 3)]
P_OLD, ICC = 0.9, 0.3
MARGINS = (0.05, 0.1)
LEVEL = 0.95
#: The interval the gate about these cases uses (paired_diff_ci's method).
THESE_METHOD = "tango_cc"


def case_rates(
    rng: np.random.Generator, model: CaseModel, shape: tuple[int, int], *, these: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case rates of old and new, shape (experiments, cases).

    With ``these`` new's rates are shifted on the logit scale, experiment by
    experiment, so that these cases' mean difference is exactly the model's
    p_b - p_a (bisection on the shift, to 1e-12).
    """
    from scipy.special import expit, logit

    qa, qb = model.draw(rng, shape)
    if not these:
        return qa, qb
    target = model.p_b - model.p_a
    base = logit(qb)
    lo = np.full(shape[0], -20.0)
    hi = np.full(shape[0], 20.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        gap = (expit(base + mid[:, None]) - qa).mean(axis=1) - target
        lo, hi = np.where(gap < 0, mid, lo), np.where(gap < 0, hi, mid)
    return qa, expit(base + hi[:, None])


def runs(
    rng: np.random.Generator, qa: np.ndarray, qb: np.ndarray, repeats: int
) -> tuple[np.ndarray, np.ndarray]:
    """Paired pass/fail outcomes, shape (experiments, cases, runs): run r of old
    and run r of new on a case are one pair."""
    shape = qa.shape + (repeats,)
    return rng.random(shape) < qa[..., None], rng.random(shape) < qb[..., None]


def passes_these(xa: np.ndarray, xb: np.ndarray, margin: float) -> np.ndarray:
    """The gate's verdict about these cases: the score interval on all runs (tango_cc)."""
    both = np.sum(xa & xb, axis=(1, 2))
    only_a = np.sum(xa & ~xb, axis=(1, 2))
    only_b = np.sum(~xa & xb, axis=(1, 2))
    neither = np.sum(~xa & ~xb, axis=(1, 2))
    low = paired_diff_ci(both, only_a, only_b, neither, level=LEVEL, method=THESE_METHOD).low
    return np.asarray(low) > -margin


def passes_like(xa: np.ndarray, xb: np.ndarray, margin: float) -> np.ndarray:
    """The gate's verdict about cases like these: the clustered interval."""
    d = xb.mean(axis=2) - xa.mean(axis=2)
    low, _ = clustered_limits(d, LEVEL, difference=True)
    return low > -margin


# --- the gate about these cases, over the grid of the issue ---------------------------------

#: The grid: cases, runs per case, intra-case correlation, old's pass rate.
GRID_CASES = (10, 30, 100, 300)
GRID_REPEATS = (1, 3, 5, 10)
GRID_ICCS = (0.0, 0.2, 0.5)
GRID_RATES = (0.5, 0.8, 0.9, 0.98)
#: The designs whose power is asked for (cases, runs), at a 10-point margin.
POWER_DESIGNS = ((10, 5), (30, 3))
#: B's logit is A's, capped at +-this (rates within 1e-12 of 0 or 1), plus the shift.
_LOGIT_CAP = 27.631021115928547

#: The rules compared: the old one (Newcombe's paired interval), the new one
#: (THESE_METHOD), and the candidates it was chosen from.
RULES = ("newcombe", "tango_cc", "tango", "tango_cc_half", "exact_unconditional")
RULE_NAMES = {
    "newcombe": "Newcombe's paired interval (old)",
    "tango_cc": "Tango's score, correction 1/4 pair (new)",
    "tango": "Tango's score, no correction",
    "tango_cc_half": "Tango's score, correction 1/2 pair",
    "exact_unconditional": "exact unconditional test on Tango's statistic",
}


def boundary_rates(
    rng: np.random.Generator, rate: float, icc: float, shape: tuple[int, int], target: float
) -> tuple[np.ndarray, np.ndarray]:
    """Case rates of old and new, shape (experiments, cases), with mean(new - old) = target.

    Old's rates are the case model's (mean ``rate``, intra-case correlation
    ``icc``); new's are old's shifted on the logit scale by the one constant
    per experiment that makes these cases' mean difference exactly
    ``target`` (safeguarded Newton on the shift, to 1e-13). Old's logit is
    capped at +-27.6 (rates within 1e-12 of 0 or 1), so that a case that
    always passes under old can still move under new.
    """
    from scipy.special import expit

    qa, _ = CaseModel(rate, rate, icc).draw(rng, shape)
    if target == 0.0:
        return qa, qa.copy()
    with np.errstate(divide="ignore"):
        la = np.clip(np.log(qa) - np.log1p(-qa), -_LOGIT_CAP, _LOGIT_CAP)
    goal = qa.mean(axis=1) + target
    lo = np.full(shape[0], -4.0 * _LOGIT_CAP)
    hi = np.full(shape[0], 4.0 * _LOGIT_CAP)
    s = np.zeros(shape[0])
    for _ in range(200):
        q = expit(la + s[:, None])
        gap = q.mean(axis=1) - goal
        lo = np.where(gap < 0, s, lo)
        hi = np.where(gap < 0, hi, s)
        if np.all(np.abs(gap) < 1e-13):
            break
        slope = (q * (1.0 - q)).mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = s - gap / slope
        s = np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi))
    return qa, expit(la + s[:, None])


def pooled_tables(
    rng: np.random.Generator, qa: np.ndarray, qb: np.ndarray, repeats: int
) -> tuple[np.ndarray, ...]:
    """The pooled 2 x 2 table of each experiment: (both, only_a, only_b, neither).

    Run r of old and run r of new on a case are one pair, independent given
    the case's two rates: old passes a binomial number of the runs, and new
    passes each run with its own rate whatever old did.
    """
    ka = rng.binomial(repeats, qa)
    both = rng.binomial(ka, qb)
    only_b = rng.binomial(repeats - ka, qb)
    only_a = ka - both
    neither = repeats - ka - only_b
    return tuple(x.sum(axis=1) for x in (both, only_a, only_b, neither))


_EU_CACHE: dict[tuple[int, float], float] = {}


def eu_critical(n: int, delta0: float, alpha: float = (1.0 - LEVEL) / 2.0) -> float:
    """The exact unconditional test's critical value of Tango's statistic.

    The one-sided test of H0: p_new - p_old <= delta0 that rejects when
    Tango's statistic (no correction) is at least t, with t the least value
    such that the rejection probability is at most ``alpha`` for every value
    of the nuisance parameter (the probability s of the less likely
    discordant cell, on a grid of 500 points over its whole range); the
    approach of Sidik (2003, Statistics in Medicine 22, 265-278). For a
    given number m of discordant pairs the statistic grows with only_new, so
    the region is only_new >= c(m) and its probability a sum over m of
    binomial tails; t is found by bisection to 1e-10. A comparator for the
    simulation, not a package method.
    """
    from scipy.special import bdtrc, gammaln

    from evalstats.stats._tango import statistic

    key = (n, round(delta0, 12))
    if key in _EU_CACHE:
        return _EU_CACHE[key]
    m = np.arange(n + 1)
    t = abs(delta0)
    grid = np.unique(np.r_[np.geomspace(1e-7, 0.01, 60), np.linspace(0.0, (1.0 - t) / 2, 441)])
    grid = grid[(grid > 0) & (grid < (1.0 - t) / 2)]
    psi = 2.0 * grid + t
    share = (grid + t if delta0 > 0 else grid) / psi  # P(only_new | discordant)
    log_choose = gammaln(n + 1) - gammaln(m + 1) - gammaln(n - m + 1)
    weight = np.exp(
        log_choose[None, :]
        + m[None, :] * np.log(psi[:, None])
        + (n - m)[None, :] * np.log1p(-psi[:, None])
    )
    # only the numbers of discordant pairs that carry probability at some grid point
    row, col = np.nonzero(weight > 1e-16 * weight.max(axis=1, keepdims=True))
    w, p = weight[row, col], share[row]
    used = np.unique(col)
    where = np.searchsorted(used, col)

    def first(threshold: float) -> np.ndarray:
        """The least only_new with statistic >= threshold, for each m in ``used`` (m + 1: none)."""
        lo = np.zeros(used.size, dtype=np.int64)  # candidates lo..hi, hi = m + 1 meaning none
        hi = used + 1
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            c = np.minimum(mid, used)
            ok = (mid <= used) & (statistic(used - c, c, n, delta0, 0.0) >= threshold)
            hi = np.where((lo < hi) & ok, mid, hi)
            lo = np.where((lo < hi) & ~ok, mid + 1, lo)
        return lo

    def worst(threshold: float) -> float:
        f = first(threshold)[where]
        mm = col
        tail = bdtrc(np.clip(f - 1, 0, None), mm, p)
        tail = np.where(f <= 0, 1.0, np.where(f > mm, 0.0, tail))
        return float(np.bincount(row, weights=w * tail, minlength=grid.size).max())

    lo, hi = 0.0, 6.0
    while worst(hi) > alpha:
        hi *= 2.0
        if hi > 1e3:
            _EU_CACHE[key] = np.inf
            return np.inf
    while hi - lo > 1e-10:
        mid = 0.5 * (lo + hi)
        if worst(mid) <= alpha:
            hi = mid
        else:
            lo = mid
    _EU_CACHE[key] = hi
    return hi


def verdicts(
    rule: str, tables: tuple[np.ndarray, ...], delta0: float
) -> tuple[np.ndarray, np.ndarray]:
    """(above, below): the rule's interval lies wholly above ``delta0``, or wholly below it.

    At ``delta0 = -margin`` "above" is the gate's pass and "below" its
    "worse"; at 0 they are "B better" and "A better". The new rule and
    Tango's are judged by the public p-value (``paired_diff_pvalue``, whose
    one-sided p-value is below 2.5% exactly when the 95% interval excludes
    ``delta0`` on that side), Newcombe's by the public interval.
    """
    from evalstats.stats._intervals import _z
    from evalstats.stats._tango import statistic

    both, only_a, only_b, neither = tables
    alpha = (1.0 - LEVEL) / 2.0
    if rule == "newcombe":
        ci = paired_diff_ci(both, only_a, only_b, neither, level=LEVEL, method="newcombe")
        return np.asarray(ci.low) > delta0, np.asarray(ci.high) < delta0
    if rule in ("tango_cc", "tango"):

        def p(side: str) -> np.ndarray:
            return paired_diff_pvalue(
                both, only_a, only_b, neither, delta0=delta0, alternative=side, method=rule
            )

        return p("greater") < alpha, p("less") < alpha
    n = both + only_a + only_b + neither
    if rule == "tango_cc_half":
        z = statistic(only_a, only_b, n, delta0, 0.5)
        return z > _z(LEVEL), z < -_z(LEVEL)
    # exact unconditional: one critical value per number of pairs and side
    size = int(n[0])
    assert np.all(n == size)
    up = statistic(only_a, only_b, size, delta0, 0.0) >= eu_critical(size, delta0)
    down = statistic(only_b, only_a, size, -delta0, 0.0) >= eu_critical(size, -delta0)
    return up, down


def mcnemar_verdicts(tables: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The old verdict at 0 (B better, A better): the exact McNemar test at 5%."""
    from evalstats.stats._binomial import mcnemar_pvalue

    _, only_a, only_b, _ = tables
    hit = np.asarray(mcnemar_pvalue(only_a, only_b)) < 1.0 - LEVEL
    return hit & (only_b > only_a), hit & (only_a > only_b)


def exact_icc0(rule: str, n: int, qa: float, qb: float, delta0: float) -> float:
    """P(the rule's interval lies wholly above delta0), exactly, when every case has rates qa, qb.

    With no spread between cases the pooled table is multinomial: only_old and
    only_new are trinomial with probabilities qa (1 - qb) and (1 - qa) qb,
    summed over every count with probability above 1e-15 (a score rule
    depends on the table only through them and n).
    """
    from scipy.special import gammaln
    from scipy.stats import binom

    pb, pc = qa * (1.0 - qb), (1.0 - qa) * qb
    lo_b, hi_b = binom.ppf(1e-15, n, pb), binom.isf(1e-15, n, pb)
    lo_c, hi_c = binom.ppf(1e-15, n, pc), binom.isf(1e-15, n, pc)
    b = np.arange(max(lo_b - 1, 0), min(hi_b + 2, n + 1))[:, None]
    c = np.arange(max(lo_c - 1, 0), min(hi_c + 2, n + 1))[None, :]
    b, c = np.broadcast_arrays(b, c)
    ok = b + c <= n
    b, c = b[ok].astype(float), c[ok].astype(float)
    rest = n - b - c
    log_w = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(rest + 1)
    log_w += b * np.log(pb) + c * np.log(pc) + rest * np.log1p(-pb - pc)
    # the score rules need no concordant split: put the concordant pairs in "both"
    above, _ = verdicts(rule, (rest, b, c, np.zeros_like(b)), delta0)
    return float(np.exp(log_w) @ above)


def check_these_against_public(check: int, seed: int) -> tuple[int, int]:
    """(disagreements, verdicts checked) between the vectorised rule and the public functions.

    On the first ``check`` experiments of every design (old 90%, icc 0.2;
    new 10 points worse on these cases for the gate, as good for the
    comparison), run by run: :func:`evalstats.deciding._gate.non_inferiority`
    about these cases against the vectorised pass / worse verdict at a
    10-point margin, and :func:`evalstats.compare` with ``method="mcnemar"``
    against the vectorised verdict at 0.
    """
    from evalstats import compare
    from evalstats.deciding._gate import non_inferiority

    wrong = checked = 0
    for i, (cases, repeats) in enumerate((c, r) for c in GRID_CASES for r in GRID_REPEATS):
        rng = np.random.default_rng([seed, 5000 + i])
        for target in (-0.1, 0.0):
            qa, qb = boundary_rates(rng, 0.9, 0.2, (check, cases), target)
            xa, xb = runs(rng, qa, qb, repeats)
            tables = (
                np.sum(xa & xb, axis=(1, 2)),
                np.sum(xa & ~xb, axis=(1, 2)),
                np.sum(~xa & xb, axis=(1, 2)),
                np.sum(~xa & ~xb, axis=(1, 2)),
            )
            if target < 0:
                up, down = verdicts(THESE_METHOD, tables, -0.1)
                want = np.where(up, "not_worse", np.where(down, "worse", "cant_tell"))
                for j in range(check):
                    res = gate_results(xa[j], xb[j])
                    got = non_inferiority(
                        res, "old", "new", margin=0.1, advice=False, about="these_cases"
                    ).verdict
                    wrong += got != want[j]
                    checked += 1
            else:
                up, down = verdicts(THESE_METHOD, tables, 0.0)
                want = np.where(up, "b_better", np.where(down, "a_better", "cant_tell"))
                for j in range(check):
                    a = {f"c{k}": list(xa[j, k]) for k in range(cases)}
                    b = {f"c{k}": list(xb[j, k]) for k in range(cases)}
                    wrong += compare(a, b, method="mcnemar").verdict != want[j]
                    checked += 1
    return wrong, checked


#: Numbers of pairs at which the one-sided errors are enumerated exactly.
EXACT_PAIRS = (*range(10, 151), *range(160, 401, 20), 500, 700, 1000, 1500, 2000, 3000)


def exact_errors(
    rule: str, delta0: float, pairs: int, *, design_only: bool = True
) -> tuple[float, float]:
    """The largest P(the rule's interval lies wholly above delta0) at delta = delta0, and where.

    Exact: the pooled table of ``pairs`` independent pairs is multinomial,
    and the rule depends on it only through (only_old, only_new), which are
    trinomial with probabilities s + t and s when delta0 = -t <= 0 (s and
    s + t when delta0 = t > 0). The maximum is over s on a grid of 190
    points (dense near 0); with ``design_only`` over the values a paired run
    can have, s <= (1 - t)^2 / 4: old and new run independently given the
    case, so their outcomes on a pair are not negatively associated
    (odds ratio at least 1). Returns (the largest probability, its s).
    """
    from scipy.special import gammaln

    n = pairs
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = b + c <= n
    b, c = b[ok].astype(float), c[ok].astype(float)
    rest = n - b - c
    above, _ = verdicts(rule, (rest, b, c, np.zeros_like(b)), delta0)
    b, c, rest = b[above], c[above], rest[above]
    if b.size == 0:
        return 0.0, float("nan")
    t = abs(delta0)
    top = (1.0 - t) ** 2 / 4.0 if design_only else (1.0 - t) / 2.0
    log_choose = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(rest + 1)
    best, arg = 0.0, float("nan")
    for s in np.r_[np.geomspace(1e-4, 0.02, 40), np.linspace(0.02, top, 150)]:
        p_old, p_new = (s + t, s) if delta0 <= 0 else (s, s + t)
        if p_old + p_new >= 1.0:
            continue
        logs = log_choose + b * np.log(p_old) + c * np.log(p_new) + rest * np.log1p(-p_old - p_new)
        value = float(np.exp(logs).sum())
        if value > best:
            best, arg = value, float(s)
    return best, arg


def print_exact(rules: tuple[str, ...] = ("tango_cc", "tango", "tango_cc_half")) -> None:
    """Each score rule's largest one-sided error, by exact enumeration, at 10 to 3,000 pairs."""
    print(
        "\none-sided errors by exact enumeration, every number of pairs from 10 to 150, then "
        "160 to 400 by 20, and 500, 700, 1,000, 1,500, 2,000, 3,000; the largest over the "
        "nuisance (s, the less likely discordant cell) within what a paired run allows"
    )
    claims = (
        (-0.1, "the gate passes at margin 10 (B exactly 10 worse)"),
        (-0.05, "the gate passes at margin 5 (B exactly 5 worse)"),
        (0.0, "'B better' when B = A ('A better' mirrors it)"),
        (0.05, "lower limit above +5 (B exactly 5 better; mirrors 'worse' at margin 5)"),
        (0.1, "lower limit above +10 (B exactly 10 better; mirrors 'worse' at margin 10)"),
    )
    for rule in rules:
        print(f"  {RULE_NAMES[rule]}:")
        for delta0, what in claims:
            found = [(exact_errors(rule, delta0, n), n) for n in EXACT_PAIRS]
            (value, s), n = max(found, key=lambda x: x[0][0])
            over = sum(1 for (v, _), _ in found if v > 0.025)
            print(
                f"    {what}: at most {100 * value:.3f}% ({n} pairs, s = {s:.4f}); "
                f"above 2.5% at {over} of {len(found)} numbers of pairs"
            )


def _tally(counts: dict, key: tuple, rule: str, hits: tuple[np.ndarray, ...]) -> None:
    slot = counts.setdefault((key, rule), [0] * len(hits))
    for i, h in enumerate(hits):
        slot[i] += int(np.count_nonzero(h))


def _blocks(n: int, cases: int) -> list[int]:
    per = max(1, 400_000 // cases)
    return [min(per, n - i) for i in range(0, n, per)]


def boundary_grid(n: int, seed: int, rules: tuple[str, ...] = RULES) -> dict:
    """Counts of (pass, worse) per cell and rule, new exactly ``margin`` worse on these cases."""
    counts: dict = {}
    cell = 0
    for rate in GRID_RATES:
        for icc in GRID_ICCS:
            for margin in MARGINS:
                for cases in GRID_CASES:
                    cell += 1
                    rng = np.random.default_rng([seed, cell])
                    for m in _blocks(n, cases):
                        qa, qb = boundary_rates(rng, rate, icc, (m, cases), -margin)
                        for repeats in GRID_REPEATS:
                            tables = pooled_tables(rng, qa, qb, repeats)
                            key = (rate, icc, margin, cases, repeats)
                            for rule in rules:
                                _tally(counts, key, rule, verdicts(rule, tables, -margin))
    return counts


def null_grid(n: int, seed: int, rules: tuple[str, ...] = RULES) -> dict:
    """New exactly as good as old on every case: counts of (B better, A better, pass 5, pass 10)."""
    counts: dict = {}
    cell = 0
    for rate in GRID_RATES:
        for icc in GRID_ICCS:
            for cases in GRID_CASES:
                cell += 1
                rng = np.random.default_rng([seed, 1000 + cell])
                for m in _blocks(n, cases):
                    qa, qb = boundary_rates(rng, rate, icc, (m, cases), 0.0)
                    for repeats in GRID_REPEATS:
                        tables = pooled_tables(rng, qa, qb, repeats)
                        key = (rate, icc, cases, repeats)
                        _tally(counts, key, "mcnemar", mcnemar_verdicts(tables))
                        for rule in rules:
                            better, worse = verdicts(rule, tables, 0.0)
                            gate = [verdicts(rule, tables, -mg)[0] for mg in MARGINS]
                            _tally(counts, key, rule, (better, worse, *gate))
    return counts


def _pct_ci(k: int, n: int) -> str:
    ci = proportion_ci(k, n)
    return f"{100 * k / n:.2f}% ({100 * ci.low:.2f}-{100 * ci.high:.2f})"


def _worst(counts: dict, rule: str, index: int, n: int) -> str:
    """The rule's largest rate over the cells, with its cell, and how many cells exceed 2.5%."""
    rows = [(k[index], key) for (key, r), k in counts.items() if r == rule]
    k, key = max(rows)
    above = sum(1 for kk, _ in rows if kk / n > 0.025)
    upper = sum(1 for kk, _ in rows if proportion_ci(kk, n).high > 0.028)
    return f"worst {_pct_ci(k, n)} at {key}; above 2.5%: {above}, upper bound above 2.8%: {upper}"


def print_boundary(counts: dict, n: int) -> None:
    print(
        "\nthe gate about these cases at these cases' boundary (new exactly M worse on these "
        f"cases), {n} experiments a cell: the share of runs it passes (goal: at most 2.5%, the "
        "95% Monte-Carlo upper bound at most 2.8%), and the share it calls 'worse'"
    )
    print(
        f"{'rate':>5} {'icc':>4} {'M':>5} {'design':>9}  {'old: passes':<22} {'new: passes':<22} "
        f"{'new, exact':<11} {'new: says worse':<22}"
    )
    for (key, rule), k in counts.items():
        if rule != "tango_cc":
            continue
        rate, icc, margin, cases, repeats = key
        old = counts[(key, "newcombe")][0] if (key, "newcombe") in counts else None
        exact = ""
        if icc == 0.0:
            pairs = cases * repeats
            exact = f"{100 * exact_icc0('tango_cc', pairs, rate, rate - margin, -margin):.2f}%"
        print(
            f"{rate:>5g} {icc:>4g} {margin:>5g} {f'{cases} x {repeats}':>9}  "
            f"{_pct_ci(old, n) if old is not None else '':<22} {_pct_ci(k[0], n):<22} "
            f"{exact:<11} {_pct_ci(k[1], n):<22}"
        )
    for rule in sorted({r for _, r in counts}, key=RULES.index):
        print(f"  {RULE_NAMES[rule]}: passes {_worst(counts, rule, 0, n)}")
        print(f"  {'':{len(RULE_NAMES[rule])}}  says worse {_worst(counts, rule, 1, n)}")


def print_null(counts: dict, n: int) -> None:
    print(
        f"\nnew exactly as good as old on these cases, {n} experiments a cell: false 'B better' "
        "and 'A better' verdicts at 95% (goal: at most 2.5% each), and the gate's power at a "
        "5- and a 10-point margin"
    )
    print(
        f"{'rate':>5} {'icc':>4} {'design':>9}  {'old: B better':<22} {'new: B better':<22} "
        f"{'new: A better':<22} {'old: pass 10':<22} {'new: pass 10':<22}"
    )
    for (key, rule), k in counts.items():
        if rule != "tango_cc":
            continue
        rate, icc, cases, repeats = key
        old = counts[(key, "mcnemar")]
        old_gate = counts.get((key, "newcombe"))
        print(
            f"{rate:>5g} {icc:>4g} {f'{cases} x {repeats}':>9}  {_pct_ci(old[0], n):<22} "
            f"{_pct_ci(k[0], n):<22} {_pct_ci(k[1], n):<22} "
            f"{_pct_ci(old_gate[3], n) if old_gate else '':<22} {_pct_ci(k[3], n):<22}"
        )
    print("  exact McNemar test (the old verdict): B better " + _worst(counts, "mcnemar", 0, n))
    print("  " + " " * 37 + "A better " + _worst(counts, "mcnemar", 1, n))
    for rule in sorted({r for _, r in counts if r != "mcnemar"}, key=RULES.index):
        print(f"  {RULE_NAMES[rule]}: B better {_worst(counts, rule, 0, n)}")
        print(f"  {'':{len(RULE_NAMES[rule])}}  A better {_worst(counts, rule, 1, n)}")
    print(
        "\nthe gate's power when new = old, margin 10 points (goal: at least 30% at 10 x 5, "
        "50% at 30 x 3)"
    )
    rules = sorted({r for _, r in counts if r != "mcnemar"}, key=RULES.index)
    print(f"{'rate':>5} {'icc':>4} {'design':>7}  " + " ".join(f"{r:<22}" for r in rules))
    for rate in GRID_RATES:
        for icc in GRID_ICCS:
            for cases, repeats in POWER_DESIGNS:
                key = (rate, icc, cases, repeats)
                cells = " ".join(f"{_pct_ci(counts[(key, r)][3], n):<22}" for r in rules)
                print(f"{rate:>5g} {icc:>4g} {f'{cases}x{repeats}':>7}  {cells}")


# --- candidates for the clustered one-sided limits from 100 cases -----------------


def candidate_limits(d: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided 95% limits for the mean of the case differences ``d`` (rows).

    ``how``: ``"t"``, the t interval on the case means (CR2 + Satterthwaite
    with equal runs per case); ``"johnson"``, Johnson's (1978) modified t;
    ``"hall"``, Hall's (1992) monotone cubic transformation of t; ``"betting"``,
    the distribution-free betting interval (what the gate uses). Johnson's
    and Hall's statistics are inverted in closed form with the t quantile on
    cases - 1 df (each reduces to the t interval when the sample skewness is
    0); both are clipped to [-1, 1] and made to contain the mean, as
    :func:`evalstats.stats._intervals.clustered_limits` does.

    With T = (mean - mu) / (s / sqrt(n)) and g = m3 / m2^(3/2) / sqrt(n) (the
    sample skewness over sqrt(n), m_k the central moments with divisor n):

    * Johnson (1978): t1 = T + g / 6 + g T^2 / 3, that is
      [(mean - mu) + m3 / (6 s^2 n) + m3 / (3 s^4) (mean - mu)^2] / (s / sqrt(n))
      with s^2 in place of m2 in the skewness term; the limits are the roots
      of t1 = +-q on the branch through T = 0 (no root: the whole range).
    * Hall (1992): T2 = T + g T^2 / 3 + g^2 T^3 / 27 + g / 6, which
      is monotone in T, so that T = 3 / g ((1 + g (y - g / 6))^(1/3) - 1)
      solves T2 = y.

    References: Johnson, N. J. (1978). Modified t tests and confidence
    intervals for asymmetrical populations. JASA 73, 536-544. Hall, P. (1992).
    On the removal of skewness by transformation. JRSS-B 54, 221-228.
    """
    from scipy.special import stdtrit

    x = np.asarray(d, dtype=float)
    n = x.shape[-1]
    mean = x.mean(axis=-1)
    if how in ("t", "betting"):
        low, high = clustered_limits(x, LEVEL, difference=True, method="cr2" if how == "t" else how)
        return np.asarray(low), np.asarray(high)
    centred = x - mean[..., None]
    m2 = np.mean(centred**2, axis=-1)
    m3 = np.mean(centred**3, axis=-1)
    se = np.sqrt(m2 * n / (n - 1) / n)
    flat = se < 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(flat, 0.0, m3 / np.where(flat, 1.0, m2) ** 1.5) / np.sqrt(n)
    q = float(stdtrit(n - 1, 0.5 + LEVEL / 2.0))
    small = np.abs(g) < 1e-12
    safe = np.where(small, 1.0, g)

    def solve(y: float) -> np.ndarray:
        """T with statistic(T) = y."""
        if how == "hall":
            return np.where(
                small, y - g / 6.0, 3.0 / safe * (np.cbrt(1.0 + g * (y - g / 6.0)) - 1.0)
            )
        # johnson: (g / 3) T^2 + T + (g / 6 - y) = 0, the root near y - g / 6
        disc = 1.0 - 4.0 * (g / 3.0) * (g / 6.0 - y)
        root = (-1.0 + np.sqrt(np.maximum(disc, 0.0))) / (2.0 * safe / 3.0)
        root = np.where(small, y - g / 6.0, root)
        return np.where(disc < 0.0, np.sign(y) * np.inf, root)

    with np.errstate(invalid="ignore"):
        low = mean - se * solve(q)
        high = mean - se * solve(-q)
    if flat.any():  # no spread: the betting interval, as the t methods do
        bl, bh = clustered_limits(x[flat], LEVEL, difference=True, method="betting")
        low[flat], high[flat] = bl, bh
    low = np.fmin(np.clip(np.nan_to_num(low, nan=-1.0), -1.0, 1.0), mean)
    high = np.fmax(np.clip(np.nan_to_num(high, nan=1.0), -1.0, 1.0), mean)
    return low, high


CANDIDATES = ("t", "johnson", "hall", "betting")
CANDIDATE_DESIGNS = [(100, 3), (300, 3)]


def candidate_rates(
    how: str, p_new: float, margin: float, cases: int, repeats: int, n: int, seed: int
) -> tuple[int, int, int]:
    """(passes, 'worse' verdicts, n): the lower limit above -margin, the upper below it."""
    rng = np.random.default_rng(seed)
    model = CaseModel(P_OLD, p_new, ICC)
    passed = worse = done = 0
    block = max(1, 200_000 // (cases * repeats))
    while done < n:
        m = min(block, n - done)
        qa, qb = case_rates(rng, model, (m, cases), these=False)
        xa, xb = runs(rng, qa, qb, repeats)
        low, high = candidate_limits(xb.mean(axis=2) - xa.mean(axis=2), how)
        passed += int(np.count_nonzero(low > -margin))
        worse += int(np.count_nonzero(high < -margin))
        done += m
    return passed, worse, n


def compare_candidates(n: int) -> None:
    """Each candidate's one-sided errors at the boundary and its power when new = old."""
    print(
        "\ncandidates for the limits about cases like these, from 100 cases: at the boundary "
        "(new exactly M worse) the lower limit's error (the gate passes) and the upper "
        "limit's (it says 'worse'), each at most 2.5% wanted; then the gate's power when "
        "new is as good as old"
    )
    print(
        f"{'design':<10} {'margin':>6}  {'rule':<8} {'passes at -M':<20} {'worse at -M':<20} "
        f"{'power at =':<20}"
    )
    seed = 5000
    for cases, repeats in CANDIDATE_DESIGNS:
        for margin in MARGINS:
            for how in CANDIDATES:
                seed += 1
                k, w, _ = candidate_rates(how, P_OLD - margin, margin, cases, repeats, n, seed)
                pw, _, _ = candidate_rates(how, P_OLD, margin, cases, repeats, n, seed + 500)
                print(
                    f"{f'{cases} x {repeats}':<10} {margin:>6g}  {how:<8} {_ci(k, n):<20} "
                    f"{_ci(w, n):<20} {_ci(pw, n):<20}"
                )


def gate_results(xa: np.ndarray, xb: np.ndarray):
    """One experiment as a results file holds it (for the public functions)."""
    from evalstats.results._file import Results

    cases, repeats = xa.shape
    names = [f"c{i}" for i in range(cases)]
    schedule, samples = [], []
    for r in range(repeats):
        for i, case in enumerate(names):
            order = ("old", "new") if (i + r) % 2 == 0 else ("new", "old")
            for position, v in enumerate(order):
                pair = r * cases + i
                schedule.append([case, r, pair, position, v])
                ok = bool(xa[i, r] if v == "old" else xb[i, r])
                samples.append(
                    {
                        "type": "sample",
                        "case": case,
                        "variant": v,
                        "repeat": r,
                        "pair": pair,
                        "position": position,
                        "status": "completed",
                        "checks": [{"check": "c", "status": "passed" if ok else "failed"}],
                    }
                )
    manifest = {
        "type": "manifest",
        "cases": [{"id": c} for c in names],
        "variants": [{"name": "old"}, {"name": "new"}],
        "runs": repeats,
        "schedule": schedule,
    }
    return Results(None, manifest, tuple(samples), {"status": "finished"}, ())


def check_against_gate(xa: np.ndarray, xb: np.ndarray, margin: float) -> int:
    """Experiments on which the vectorised rules and the public gate disagree."""
    from evalstats.deciding._gate import non_inferiority

    these = passes_these(xa, xb, margin)
    like = passes_like(xa, xb, margin)
    wrong = 0
    for i in range(xa.shape[0]):
        res = gate_results(xa[i], xb[i])
        got_these = non_inferiority(
            res, "old", "new", margin=margin, advice=False, about="these_cases"
        )
        got_like = non_inferiority(
            res, "old", "new", margin=margin, advice=False, about="cases_like_these"
        )
        wrong += (got_these.verdict == "not_worse") != bool(these[i])
        wrong += (got_like.verdict == "not_worse") != bool(like[i])
    return wrong


def rate(
    p_new: float,
    margin: float,
    cases: int,
    repeats: int,
    n: int,
    seed: int,
    *,
    rule: str,
    these: bool,
) -> tuple[int, int]:
    """Passes of ``rule`` ("these" or "like") out of ``n`` experiments."""
    rng = np.random.default_rng(seed)
    model = CaseModel(P_OLD, p_new, ICC)
    passed = done = 0
    block = max(1, 200_000 // (cases * repeats))
    while done < n:
        m = min(block, n - done)
        qa, qb = case_rates(rng, model, (m, cases), these=these)
        xa, xb = runs(rng, qa, qb, repeats)
        ok = passes_these(xa, xb, margin) if rule == "these" else passes_like(xa, xb, margin)
        passed += int(np.count_nonzero(ok))
        done += m
    return passed, n


def _ci(k: int, n: int) -> str:
    """A rate and its 95% Wilson interval, in percent to 0.1."""
    ci = proportion_ci(k, n)
    return f"{100 * k / n:.1f}% ({100 * ci.low:.1f} to {100 * ci.high:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        choices=("these", "exact", "like", "candidates", "all"),
        default="these",
        help="these: the grid about these cases (default); exact: the score rules' "
        "one-sided errors by exact enumeration; like: the claims compared at "
        "old 90%%, icc 0.3; candidates: the limits about cases like these from 100 cases",
    )
    parser.add_argument("--experiments", type=int, default=None)
    parser.add_argument("--check", type=int, default=None, help="experiments checked per design")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    if args.part in ("these", "all"):
        n = args.experiments or 4000
        print(
            f"about these cases: {len(GRID_RATES)} rates x {len(GRID_ICCS)} iccs x "
            f"{len(GRID_CASES)} case counts x {len(GRID_REPEATS)} runs per case, margins "
            f"{', '.join(f'{m:g}' for m in MARGINS)}; {n} experiments a cell; 95% "
            "Monte-Carlo (Wilson) intervals"
        )
        check = 10 if args.check is None else args.check
        if check:
            wrong, checked = check_these_against_public(check, args.seed)
            print(
                f"(the public comparison and gate agreed on {checked - wrong} of {checked} "
                "verdicts)"
            )
        print_boundary(boundary_grid(n, args.seed), n)
        print_null(null_grid(n, args.seed), n)
    if args.part in ("exact", "all"):
        print_exact()
    if args.part in ("like", "all"):
        compare_claims(args.experiments or 6000, args.check or 100)
    if args.part in ("candidates", "all"):
        compare_candidates(args.experiments or 6000)


def compare_claims(n: int, check: int) -> None:
    """The claims compared at old 90%, icc 0.3 (the table of the module docstring)."""
    print(
        f"old {P_OLD:.0%}, icc {ICC}, paired runs; {n} experiments a cell; "
        "95% Monte-Carlo intervals; goal at the boundary: at most 2.5%"
    )
    header = (
        f"{'design':<13} {'margin':>6}  {'these: boundary':<20} {'like these: boundary':<22} "
        f"{'these, read as like':<20} {'like: power at =':<20} {'these: 90->70':<18} "
        f"{'like: 90->70':<18}"
    )
    print(header)
    seed = 0
    for cases, repeats in DESIGNS:
        rng = np.random.default_rng(99)
        qa, qb = case_rates(rng, CaseModel(P_OLD, P_OLD - 0.1, ICC), (check, cases), these=False)
        xa, xb = runs(rng, qa, qb, repeats)
        wrong = check_against_gate(xa, xb, 0.1)
        for margin in MARGINS:
            p_edge = P_OLD - margin
            cells = []
            for rule, these, p_new in (
                ("these", True, p_edge),
                ("like", False, p_edge),
                ("these", False, p_edge),
                ("like", False, P_OLD),
                ("these", False, 0.7),
                ("like", False, 0.7),
            ):
                seed += 1
                cells.append(
                    _ci(*rate(p_new, margin, cases, repeats, n, seed, rule=rule, these=these))
                )
            print(
                f"{f'{cases} x {repeats}':<13} {margin:>6g}  {cells[0]:<20} {cells[1]:<22} "
                f"{cells[2]:<20} {cells[3]:<20} {cells[4]:<18} {cells[5]:<18}"
            )
        print(f"  (the public gate agreed on {2 * check - wrong} of {2 * check} verdicts)")


if __name__ == "__main__":
    main()
