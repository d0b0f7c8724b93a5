"""Coverage, one-sided error and power of the betting interval however the cases are listed.

The distribution-free interval about cases like these
(:func:`evalstats.stats._intervals.clustered_mean_ci`,
``compare(..., method="clustered")`` and the gates about cases like these)
bets on the case means one after another. Betting in the order the cases
are listed is valid only when that order is random, and suites list their
cases grouped. The interval now averages the betting capital over fixed
orders of the sorted case means (:func:`evalstats.stats._intervals._orders`),
so it depends only on the cases' values. This script draws cases from the
package's case model (:class:`evalstats.stats._casemodel.CaseModel`: Beta case
pass rates with intra-case correlation ``icc``, B shifted on the logit
scale), lists them four ways:

- ``random``: in the order drawn;
- ``easy first``: by true pass rate, highest first (A's rate for pairs);
- ``by topic``: five topics of cases of similar rates (the cases sorted by
  rate and cut in five), the topics in random order, random within each;
- ``by true rate``: by true pass rate, lowest first;

and judges every simulated run with
:func:`evalstats.stats._intervals.clustered_limits` (equal runs per case),
both as the package now does (``order-free``) and betting in the listing
order (``in listing order``, the rule before: the published capital, one
order). Every figure has its 95% Monte-Carlo (Wilson) interval.

1. One variant (what ``report`` prints about cases like these and what
   ``gate --min-pass P --on lower-bound`` decides): coverage of the 95%
   interval for the mean pass rate over cases like these, and how often
   its lower limit is at or above the true rate (the gate passing a variant
   whose true rate is exactly P; nominal at most 2.5%) or its upper limit
   below it. Cells: true rate 0.5, 0.75, 0.9 x icc 0.1, 0.3 x 1 or 3 runs
   per case, at 10, 30, 100 and 300 cases; the worst cell of each listing.
2. Two variants (``gate --no-regression-vs old --margin M`` about cases like
   these: B passes when the lower limit for p_b - p_a is above -M; M is 10
   points at 10 and 30 cases, 5 at 100 and 300): how often it passes when B
   is exactly M worse (the size at the boundary, nominal at most 2.5%), in
   each listing. B's change varies from case to case (the case model's
   case-by-variant spread, logit sd 1), and here the listings sort the
   cases by their true change p_b - p_a instead of their rate: ``easy
   first`` lists the cases B gains most on first (a regression that sits on
   a few cases comes last), ``by true rate`` the ones it loses most on
   first, and the topics are blocks of similar changes. Cells: p_a 0.7, 0.9
   x 1 or 3 runs, icc 0.3.
3. The gate's power when B is exactly as good as A, cases in random order,
   order-free beside in listing order, and their difference on the same
   runs (with its paired Newcombe interval).

4. (``--parts 4`` only) How many orders: for 8, 32 and 64 orders, the
   power of "B better" over four seeds of the orders, how much it varies
   between seeds, how often two seeds' verdicts differ, and the time.

Goal: coverage at least 95% and one-sided errors at most 2.5% in every
listing; power not lower than in listing order (random order) beyond
Monte-Carlo error.

Measured (2,000 experiments a cell, seed 0; parts 2 and 3 run with
``--parts 2 3``). Order-free, the same in every listing (the same runs give
the same interval): coverage at least 99.0% (98.5 to 99.4) in every cell at
10-300 cases, the lower limit at or above the true rate at most 0.55%
(0.31 to 0.98), the upper limit below it at most 0.60% (0.34 to 1.05); the
no-regression gate at its boundary passes at most 0.75% (0.46 to 1.23).
In listing order, at 300 cases: listed easy first the lower limit reaches
the true rate in 45.3% (43.1 to 47.5) of runs (rate 0.75, icc 0.3, 3 runs;
coverage 55.8%), listed by true rate the upper limit falls below it in
42.6% (40.5 to 44.8), by topic 5.8% and 6.4% (coverage 88.3%); the gate
passes 10.7% (9.4 to 12.1) of runs that list first the cases B loses most
on (2.4% at 100 cases); at 10-30 cases listing order changes little. The
gate's power with B as good as A, order-free minus in (random) listing
order on the same runs: at 10 cases 0 (both at most 0.4%); at 30 cases
-0.7 to -0.3 points (paired intervals -1.15 to +0.19; power 2.7-9.2%; the
sign depends on the recorded orders: with other seeds the 30 x 1 cell at
p 0.9 gains 0.1 point); at 100 cases -0.25 to +4.05 points (+1.25, +4.05,
+2.40 excluding 0); at 300 cases -0.1 to +1.2 (90.7% against 89.5% at 300
x 3, p 0.9).

Usage::

    python simulations/order_free.py [--experiments 2000] [--seed 0] [--quick] [--parts 1 2 3]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from evalstats.stats._casemodel import CaseModel
from evalstats.stats._intervals import (
    betting_signs,
    clustered_limits,
    paired_diff_ci,
    proportion_ci,
)

LEVEL = 0.95
CASES = (10, 30, 100, 300)
LISTINGS = ("random", "easy first", "by topic", "by true rate")
RULES = ("order-free", "in listing order")
RATES = (0.5, 0.75, 0.9)
ICCS = (0.1, 0.3)
RUNS = (1, 3)
PAIRED_RATES = (0.7, 0.9)
SPREAD = 1.0  # logit sd of B's change between cases, in part 2
TOPICS = 5


def margin(cases: int) -> float:
    """The no-regression margin the issue's table uses at this many cases."""
    return 0.10 if cases <= 30 else 0.05


def listing(rates: np.ndarray, how: str, rng: np.random.Generator) -> np.ndarray:
    """Per experiment (row of ``rates``), the order in which its cases are listed."""
    rows, cases = rates.shape
    if how == "random":
        return np.broadcast_to(np.arange(cases), rates.shape)
    if how == "easy first":
        return np.argsort(-rates, axis=1, kind="stable")
    if how == "by true rate":
        return np.argsort(rates, axis=1, kind="stable")
    # by topic: blocks of similar rates, blocks in random order, shuffled within
    by_rate = np.argsort(rates, axis=1, kind="stable")
    bounds = np.linspace(0, cases, TOPICS + 1).round().astype(int)
    out = np.empty_like(by_rate)
    for r in range(rows):
        blocks = [rng.permutation(by_rate[r, a:b]) for a, b in itertools.pairwise(bounds)]
        out[r] = np.concatenate([blocks[i] for i in rng.permutation(TOPICS)])
    return out


def limits(values: np.ndarray, rule: str, *, difference: bool) -> tuple[np.ndarray, np.ndarray]:
    """The betting interval of each row of per-case means, by ``rule``."""
    return clustered_limits(
        values,
        LEVEL,
        difference=difference,
        method="betting",
        in_listing_order=rule == "in listing order",
    )


def one_variant(
    p: float, icc: float, cases: int, runs: int, experiments: int, seed: int
) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(covered, lower limit >= p, upper limit < p) counts per (listing, rule)."""
    rng = np.random.default_rng(seed)
    rates, _ = CaseModel(p, p, icc).draw(rng, (experiments, cases))
    means = rng.binomial(runs, rates) / runs
    out = {}
    for how in LISTINGS:
        order = listing(rates, how, rng)
        listed = np.take_along_axis(means, order, axis=1)
        for rule in RULES:
            low, high = limits(listed, rule, difference=False)
            out[how, rule] = (
                int(np.count_nonzero((low <= p) & (p <= high))),
                int(np.count_nonzero(low >= p)),
                int(np.count_nonzero(high < p)),
            )
    return out


def paired_runs(
    p_a: float, p_b: float, cases: int, runs: int, experiments: int, seed: int, spread: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case mean differences B - A of ``runs`` runs each, and the cases' true changes."""
    rng = np.random.default_rng(seed)
    qa, qb = CaseModel(p_a, p_b, 0.3, spread).draw(rng, (experiments, cases))
    d = (rng.binomial(runs, qb) - rng.binomial(runs, qa)) / runs
    return d, qb - qa


def gate_passes(d: np.ndarray, rule: str, m: float) -> np.ndarray:
    """Whether the no-regression gate at margin ``m`` passes each row of differences."""
    low, _ = limits(d, rule, difference=True)
    return low > -m


def boundary(
    p_a: float, cases: int, runs: int, experiments: int, seed: int
) -> dict[tuple[str, str], int]:
    """Passes of the gate with B exactly one margin worse, per (listing, rule)."""
    m = margin(cases)
    d, change = paired_runs(p_a, p_a - m, cases, runs, experiments, seed, SPREAD)
    rng = np.random.default_rng(seed + 1)
    out = {}
    for how in LISTINGS:
        listed = np.take_along_axis(d, listing(change, how, rng), axis=1)
        for rule in RULES:
            out[how, rule] = int(np.count_nonzero(gate_passes(listed, rule, m)))
    return out


def power(p_a: float, cases: int, runs: int, experiments: int, seed: int) -> tuple[int, int, int]:
    """Passes with B as good as A, cases in random order: (both, order-free only, listing only)."""
    m = margin(cases)
    d, _ = paired_runs(p_a, p_a, cases, runs, experiments, seed, 0.0)
    free = gate_passes(d, "order-free", m)
    listed = gate_passes(d, "in listing order", m)
    return (
        int(np.count_nonzero(free & listed)),
        int(np.count_nonzero(free & ~listed)),
        int(np.count_nonzero(~free & listed)),
    )


def _mc(hits: int, n: int) -> str:
    ci = proportion_ci(hits, n)
    d = 1 if ci.high >= 0.1 else 2
    return f"{100 * hits / n:.{d}f}% ({100 * ci.low:.{d}f} to {100 * ci.high:.{d}f})"


def _runs(r: int) -> str:
    return f"{r} run" + ("" if r == 1 else "s")


def _cell(key: tuple[float, float, int]) -> str:
    return f"{key[0]}/{key[1]}/{key[2]}"


def part_one(cases_list: tuple[int, ...], n: int, seed: int) -> None:
    print("1. one variant: coverage of the 95% interval; lower limit at or above the true rate")
    print("   (the min-pass gate passing at its threshold); upper limit below it. Worst cell of")
    print(f"   {len(RATES) * len(ICCS) * len(RUNS)} cells (rate/icc/runs) per listing and rule:")
    for cases in cases_list:
        cells = {}
        for k, (p, icc, runs) in enumerate(itertools.product(RATES, ICCS, RUNS)):
            cells[p, icc, runs] = one_variant(p, icc, cases, runs, n, seed + 1000 * cases + k)
        print(f"  {cases} cases")
        for how, rule in itertools.product(LISTINGS, RULES):
            worst_cov = min(cells, key=lambda c: cells[c][how, rule][0])
            worst_low = max(cells, key=lambda c: cells[c][how, rule][1])
            worst_high = max(cells, key=lambda c: cells[c][how, rule][2])
            cov = cells[worst_cov][how, rule][0]
            above = cells[worst_low][how, rule][1]
            below = cells[worst_high][how, rule][2]
            print(
                f"    {how:<12} {rule:<16} coverage {_mc(cov, n):<21} "
                f"low>=p {_mc(above, n):<21} high<p {_mc(below, n):<21} "
                f"(worst cells: {_cell(worst_cov)}; {_cell(worst_low)}; {_cell(worst_high)})"
            )


def part_two(cases_list: tuple[int, ...], n: int, seed: int) -> None:
    print("\n2. no-regression gate about cases like these, B exactly one margin worse than A")
    print("   (B's change varying between cases; listed by the cases' true change):")
    print(
        f"   share of runs it passes (nominal at most 2.5%), worst of {len(PAIRED_RATES) * 2} cells"
    )
    for cases in cases_list:
        cells = {}
        for k, (p_a, runs) in enumerate(itertools.product(PAIRED_RATES, RUNS)):
            cells[p_a, runs] = boundary(p_a, cases, runs, n, seed + 2000 * cases + k)
        print(f"  {cases} cases, margin {100 * margin(cases):g} points")
        for how, rule in itertools.product(LISTINGS, RULES):
            worst = max(cells, key=lambda c: cells[c][how, rule])
            print(
                f"    {how:<12} {rule:<16} {_mc(cells[worst][how, rule], n):<22}"
                f" (worst: p_a {worst[0]}, {_runs(worst[1])})"
            )


def part_three(cases_list: tuple[int, ...], n: int, seed: int) -> None:
    print("\n3. the gate's power with B exactly as good as A (cases in random order):")
    for cases in cases_list:
        for k, (p_a, runs) in enumerate(itertools.product(PAIRED_RATES, RUNS)):
            both, free_only, listed_only = power(p_a, cases, runs, n, seed + 3000 * cases + k)
            free, listed = both + free_only, both + listed_only
            gap = paired_diff_ci(both, listed_only, free_only, n - both - free_only - listed_only)
            print(
                f"  {cases:3d} cases x {_runs(runs):<6} p {p_a}, margin {100 * margin(cases):g}: "
                f"order-free {_mc(free, n):<21} in listing order {_mc(listed, n):<21} "
                f"difference {100 * gap.estimate:+.2f} points "
                f"({100 * gap.low:+.2f} to {100 * gap.high:+.2f})"
            )


def part_four(cases_list: tuple[int, ...], n: int, seed: int) -> None:
    """How many orders: power, dependence on the seed of the orders, and time."""
    from evalstats.stats import _intervals

    print("\n4. how many orders: the power of 'B better' (compare, about cases like these) over")
    print("   4 seeds of the orders, its spread between seeds, the share of runs whose verdict")
    print("   two seeds disagree on, and the time (icc 0.3; cases in random order):")
    settings = [(30, 3, 0.7, 0.85), (100, 3, 0.7, 0.78), (300, 1, 0.7, 0.76)]
    saved = _intervals._ORDERS, _intervals._ORDER_SEED
    try:
        for cases, runs, p_a, p_b in settings:
            if cases not in cases_list:
                continue
            rng = np.random.default_rng(seed + 4000 + cases)
            qa, qb = CaseModel(p_a, p_b, 0.3).draw(rng, (n, cases))
            d = (rng.binomial(runs, qb) - rng.binomial(runs, qa)) / runs
            listed = limits(d, "in listing order", difference=True)[0] > 1e-12
            print(
                f"  {cases} cases x {_runs(runs)}, {p_a} -> {p_b}: "
                f"in listing order {_mc(int(listed.sum()), n)}"
            )
            for orders in (8, 32, 64):
                _intervals._ORDERS = orders
                verdicts, start = [], time.perf_counter()
                for k in range(4):
                    _intervals._ORDER_SEED = 101 + k
                    _intervals._orders.cache_clear()
                    verdicts.append(betting_signs(d, LEVEL, threshold=1e-12, only_above=True) == 1)
                took = (time.perf_counter() - start) / 4
                v = np.array(verdicts)
                flips = np.mean(
                    [np.mean(v[a] != v[b]) for a, b in itertools.combinations(range(4), 2)]
                )
                print(
                    f"    {orders:2d} orders: power {100 * v.mean():.2f}% (seeds' sd "
                    f"{100 * v.mean(axis=1).std(ddof=1):.2f} points), verdicts differing "
                    f"{100 * flips:.2f}%, {took:.2f} s"
                )
    finally:
        _intervals._ORDERS, _intervals._ORDER_SEED = saved
        _intervals._orders.cache_clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=2000, help="experiments per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="10 and 30 cases only")
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3, 4])
    args = parser.parse_args(argv)
    cases_list = CASES[:2] if args.quick else CASES
    start = time.perf_counter()
    print(f"{args.experiments} experiments per cell, seed {args.seed}; ranges are 95% Monte-Carlo")
    print("(Wilson) intervals; the difference in part 3 is a paired Newcombe interval.\n")
    parts = {1: part_one, 2: part_two, 3: part_three, 4: part_four}
    for k in args.parts:
        parts[k](cases_list, args.experiments, args.seed)
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
