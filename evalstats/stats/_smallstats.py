"""A report's intervals of a few counts, in pure Python.

A report of a small run needs a Wilson interval per case and a case-clustered
interval per variant, each from a handful of counts; importing numpy for them
takes longer than the whole report (60-100 ms). These functions give the
intervals of :mod:`evalstats.stats._intervals` for such counts without numpy:

- :func:`wilson_ci`: ``proportion_ci(successes, trials, level=level)`` for
  Python ints, zero trials included.
- :func:`clustered_counts`: ``intervals._clustered_counts`` (the interval of
  :func:`~evalstats.stats._intervals.clustered_mean_ci` from passes and runs per
  case) for up to :data:`PURE_CASES` cases; more go to the numpy version.

They perform the same operations as the numpy versions, on one value at a
time, and like them depend only on the multiset of the cases' counts. They
agree with them to 1e-12 (tests/test_smallstats.py), not always bit for bit:
numpy adds the CR2 sums in a blocked order of its own, where these use
``math.fsum``, and may take a vectorised ``log`` or ``exp`` that differs from
the C library's in the last bit (the betting capital's running sums and
products go value by value in both).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._intervals import (
    _BET_CAP,
    _BISECTIONS,
    _ORDER_SEED,
    _ORDERS,
    _RUN,
    _TURNS,
    AUTO_METHOD,
    ClusteredInterval,
    Interval,
    _clustered_counts,
    _clustered_note,
    _no_outcomes,
    _t_quantile,
    proportion_ci,
)

__all__ = ["PURE_CASES", "clustered_counts", "wilson_ci"]

_MASK = (1 << 64) - 1

#: Up to this many cases the clustered interval is computed here; its betting
#: limits, averaged over 8 orders of the cases, take about 0.15 ms per case
#: (500 cases: about 75 ms, about as long as importing numpy).
PURE_CASES = 500


def wilson_ci(successes: int, trials: int, level: float) -> Interval:
    """``proportion_ci(successes, trials, level=level)`` (Wilson) for two Python ints.

    Zero trials give the NaN estimate and the interval (0, 1) with the note
    :func:`~evalstats.stats._intervals.proportion_ci` gives them, without numpy.
    """
    if trials == 0 and successes == 0 and type(trials) is int and type(successes) is int:
        from .._validate import check_level

        return Interval(
            math.nan,
            0.0,
            1.0,
            check_level(level),
            "wilson",
            note="trials=0: nothing to estimate from, so the estimate is NaN and the "
            "interval is (0, 1)",
        )
    return proportion_ci(successes, trials, level=level)


def wilson_cis(successes: Sequence[int], trials: Sequence[int], level: float) -> list[Interval]:
    """:func:`wilson_ci` of each case, for all cases at once, without numpy.

    One interval per ``(successes[i], trials[i])``; each distinct pair of
    counts is computed once (a table of 100,000 cases run a few times each
    holds only a few dozen), so the result is the very interval
    ``wilson_ci(successes[i], trials[i], level)`` gives, in time linear in
    the cases (tests/test_intervals_many.py checks it).

    >>> [str(ci) for ci in wilson_cis([3, 0, 3], [4, 0, 4], 0.95)]
    ['75% (30% to 95%)', 'n/a (0% to 100%)', '75% (30% to 95%)']
    """
    made: dict[tuple[int, int], Interval] = {}
    out = []
    for key in zip(successes, trials, strict=True):
        ci = made.get(key)
        if ci is None:
            ci = made[key] = wilson_ci(key[0], key[1], level)
        out.append(ci)
    return out


def clustered_counts(
    passes: Sequence[int], runs: Sequence[int], level: float, *, method: str = "auto"
) -> ClusteredInterval:
    """``intervals._clustered_counts(passes, runs, level, method=method)``.

    ``passes[g]`` of ``runs[g]`` outcomes of case g are 1; cases with no run
    are left out. Computed here for up to :data:`PURE_CASES` cases and the
    methods ``auto``, ``cr2`` and ``betting``; otherwise by the numpy version.
    """
    cells = [(p, r) for p, r in zip(passes, runs, strict=True) if r > 0]
    if len(cells) > PURE_CASES or method not in ("auto", "cr2", "betting"):
        return _clustered_counts(passes, runs, level, method=method)
    n = sum(r for _, r in cells)
    total = sum(p for p, _ in cells)
    if n == 0:
        return _no_outcomes(level, difference=False, method=method)
    mean = total / n
    groups = len(cells)
    if groups < 2:
        return ClusteredInterval(
            mean,
            0.0,
            1.0,
            level,
            method,
            difference=False,
            note="one case only: nothing can be said about cases like these from one "
            "case, so the interval is the whole range (0, 1)",
            clusters=groups,
        )
    sizes = [float(r) for _, r in cells]
    hits = [float(p) for p, _ in cells]
    # Residuals are 1 - mean for a pass and -mean otherwise: their sum over a
    # case is p - r * mean, and their squares add up as below.
    sums = [h - s * mean for h, s in zip(hits, sizes, strict=True)]
    case_means = [h / s for h, s in zip(hits, sizes, strict=True)]
    resid_ss = total * (1.0 - mean) ** 2 + (n - total) * mean**2
    if method == "auto":
        method = AUTO_METHOD
    var, df = _cr2(sizes, sums, float(n))
    if var < 1e-24:
        var = 0.0  # every case has the same mean (see intervals._cluster_robust)
    se = math.sqrt(var)
    iid = resid_ss / (n * (n - 1)) if n > 1 else math.nan
    deff = var / iid if iid > 0 else math.nan
    if method == "betting" or se == 0.0:
        low, high = betting_limits(case_means, level)
        used = "betting"
    else:
        t = _t_quantile(df, level)
        low, high = mean - t * se, mean + t * se
        used = method
    note = _clustered_note(method, used, groups, df)
    return ClusteredInterval(
        mean,
        min(max(low, 0.0), mean),
        max(min(high, 1.0), mean),
        level,
        used,
        difference=False,
        note=note,
        se=se,
        df=df,
        clusters=groups,
        design_effect=deff,
    )


def _cr2(sizes: list[float], sums: list[float], n: float) -> tuple[float, float]:
    """``intervals._cr2``: the CR2 variance of the mean and Satterthwaite's df."""
    keep = [1.0 - s / n for s in sizes]
    var = math.fsum(u * u / k for u, k in zip(sums, keep, strict=True)) / (n * n)
    k2 = [1.0 / (n * n * k) for k in keep]
    diag, square, quartic = [], [], []
    for k, s in zip(k2, sizes, strict=True):
        d = s - s * s / n
        diag.append(k * k * (d * d))
        square.append(k * s * s)
        quartic.append(k * k * s**4)
    cross = (math.fsum(square) ** 2 - math.fsum(quartic)) / (n * n)
    return var, (1.0 / n) ** 2 / (math.fsum(diag) + cross)


def betting_limits(x: Sequence[float], level: float) -> tuple[float, float]:
    """``intervals.betting_limits`` of one sequence ``x`` of values in [0, 1]."""
    alpha = (1.0 - level) / 2.0
    return _betting_lower(x, alpha), 1.0 - _betting_lower([1.0 - v for v in x], alpha)


def _mix(z: int) -> int:
    """``intervals._mix`` of one unsigned 64-bit integer (SplitMix64's output function)."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def orders(cases: int) -> list[list[int]]:
    """``intervals._orders(cases)`` as lists: the orders the betting capital is averaged in."""
    if cases <= 10 and math.factorial(cases) <= _ORDERS:
        import itertools

        return [list(p) for p in itertools.permutations(range(cases))]
    start = _mix((_ORDER_SEED + cases) & _MASK)
    out = []
    for b in range(_ORDERS // _TURNS):
        keys = [_mix((start + b * cases + i) & _MASK) for i in range(cases)]
        base = sorted(range(cases), key=keys.__getitem__)
        for j in range(_TURNS):
            shift = (j * cases) // _TURNS
            out.append([base[(i + shift) % cases] for i in range(cases)])
    return out


def _betting_lower(x: Sequence[float], alpha: float) -> float:
    """``intervals._betting_lower`` of one sequence: the lower betting bound of its mean.

    The capital of ``intervals._log_wealth``, averaged over the orders of
    :func:`orders` of the sorted values, with the bets of Waudby-Smith &
    Ramdas (2024, section 5) in each order (the running mean and plug-in
    variance of the order's earlier values, from the prior 1/2 and 1/4),
    each number computed by the same operations in the same order.
    """
    n = len(x)
    ranked = sorted(x)
    scale = 2.0 * math.log(1.0 / alpha)
    runs = []
    for order in orders(n):
        values = [ranked[k] for k in order]
        bets = []
        total, spread = 0.5, 0.25
        for i, value in enumerate(values):
            bets.append(math.sqrt(scale * (i + 1.0) / n / spread))
            total = total + value if i else value + 0.5
            d = value - total / (i + 2.0)
            spread = spread + d * d
        runs.append(list(zip(values, bets, strict=True)))
    threshold = math.log(1.0 / alpha)
    log_orders = math.log(len(runs))
    log, exp = math.log, math.exp

    def log_capital(run: list[tuple[float, float]], m: float, cap: float) -> float:
        out = 0.0
        for start in range(0, n, _RUN):
            product = 1.0
            for j, (v, b) in enumerate(run[start : start + _RUN]):
                factor = (v - m) * (b if b < cap else cap) + 1.0
                product = product * factor if j else factor
            out = out + log(product) if start else log(product)
        return out

    def rejected(m: float) -> bool:
        cap = _BET_CAP / max(m, 1e-300) if m > 0 else math.inf
        logs = [log_capital(run, m, cap) for run in runs]
        top = max(logs)
        total = 0.0
        for value in logs:
            total += exp(value - top)
        return top + (log(total) - log_orders) >= threshold

    if not rejected(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if rejected(mid):
            lo = mid
        else:
            hi = mid
    return lo
