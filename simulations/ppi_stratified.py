"""Coverage and width of PPI++ corrected pass rates when the review is stratified by case.

``evalstats review --sample N`` draws the same number of (case, repeat) pairs
from every case, or as near as possible (:func:`evalstats.presenting._review_design.allocate`).
This script checks that the corrected interval stays valid for that design.

A run has cases of known sizes; each case has its own true pass rate (what a
person would say), and a judge passes a good answer with probability
``sensitivity`` and fails a bad one with probability ``specificity`` (in the
"unequal" runs, less specific on the small, hard cases). Every experiment
draws fresh answers and a fresh stratified review of ``reviewed`` answers,
and computes the corrected rate as ``report --reviews`` does: without weights
when every answer had the same chance to be reviewed (cases of one size), with
each case weighted by its share of the run otherwise (``strata=``). The target
is the run's true rate, the size-weighted mean of the cases' rates.

For each setting it prints the share of experiments whose interval holds the
target (with its Wilson 95% Monte Carlo interval), the average width of the
corrected interval divided by that of the reviewed answers' own Wilson interval
and by that of the judge's own Wilson interval over every answer, and how often
the judge's own interval holds the target, and the share of experiments in
which the corrected interval is at least as wide as the reviewed answers' own
(there the report says the judge adds nothing). For the runs of unequal sizes it
also prints the coverage of the unweighted estimator, which ignores the design.

Usage::

    python simulations/ppi_stratified.py [--experiments 2000] [--quick]

Claims checked (nominal 95%): coverage of at least 94% for the stratified
draw, weighted as the design needs, for judges of sensitivity 0.7-0.95 and
specificity 0.6-0.95 with 30-100 reviewed of about 1,000 answers in 20 cases.

Measured (2,000 experiments per setting): lowest coverage 95.5% (Monte Carlo
94.4% to 96.3%), in the equal run at sensitivity 0.95, specificity 0.6, 100
reviewed; 95.7% or more in the unequal run; the unweighted estimator in the
unequal run covers as little as 41.7%. Width against the reviewed answers' own
Wilson interval: 0.957 to 0.960 for the weak judge (0.7/0.6) in the equal run,
0.941 to 0.970 in the unequal run, 0.587 to 0.916 for the other judges.
Before (Agresti-Coull-like pseudo-reviews with a t quantile): lowest coverage
95.5% (94.6% to 96.4%), the weak judge's width ratio 0.972 to 0.998 (equal)
and 0.960 to 1.042 (unequal).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from dataclasses import dataclass

import numpy as np

from evalstats import ppi_pass_rate, proportion_ci
from evalstats.presenting._review_design import allocate


@dataclass(frozen=True)
class Run:
    """Cases of a run: their sizes, true rates, and how much less specific the judge is."""

    name: str
    sizes: tuple[int, ...]
    rates: tuple[float, ...]
    specificity_drop: tuple[float, ...]

    @property
    def target(self) -> float:
        sizes = np.array(self.sizes)
        return float((sizes * np.array(self.rates)).sum() / sizes.sum())


def equal_run() -> Run:
    """20 cases of 50 answers, true rates from 0.30 to 0.95."""
    rates = tuple(float(r) for r in np.linspace(0.30, 0.95, 20))
    return Run("equal", (50,) * 20, rates, (0.0,) * 20)


def unequal_run() -> Run:
    """20 cases of 10 to 95 answers (1,050 in all); the small cases are hard and the
    judge is 0.2 less specific on the smallest, so ignoring the design is biased."""
    sizes = tuple(int(s) for s in np.linspace(10, 95, 20).round())
    rates = tuple(float(r) for r in np.linspace(0.30, 0.95, 20))
    drop = tuple(float(d) for d in np.linspace(0.2, 0.0, 20))
    return Run("unequal", sizes, rates, drop)


@dataclass(frozen=True)
class Row:
    run: str
    sensitivity: float
    specificity: float
    reviewed: int
    coverage: float
    mc_low: float
    mc_high: float
    vs_reviewed: float
    wider: float
    vs_judge: float
    judge_coverage: float
    unweighted_coverage: float | None


def stratified_row(
    run: Run,
    se: float,
    sp: float,
    reviewed: int,
    *,
    experiments: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Row:
    """Coverage and widths of the corrected rate under the stratified draw."""
    rng = np.random.default_rng([seed, int(se * 1000), int(sp * 1000), reviewed, len(run.name)])
    sizes = np.array(run.sizes)
    case = np.repeat(np.arange(len(sizes)), sizes)
    p = np.repeat(run.rates, sizes)
    spec = np.clip(sp - np.repeat(run.specificity_drop, sizes), 0, 1)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    by_case = {str(h): int(n) for h, n in enumerate(sizes)}
    weighted = len(set(run.sizes)) > 1
    target = run.target
    hits = unweighted_hits = judge_hits = wider = 0
    width = reviewed_width = judge_width = 0.0
    for i in range(experiments):
        truth = rng.random(case.size) < p
        u = rng.random(case.size)
        auto = np.where(truth, u < se, u >= spec)
        counts = allocate(by_case, reviewed, random.Random(int(seed) * 1_000_003 + i))
        mask = np.zeros(case.size, dtype=bool)
        for h, n in counts.items():
            k = int(h)
            mask[starts[k] + rng.choice(sizes[k], n, replace=False)] = True
        ci = ppi_pass_rate(auto, mask, truth, level=level, strata=case if weighted else None)
        hits += ci.low <= target <= ci.high
        width += ci.high - ci.low
        if weighted:
            plain = ppi_pass_rate(auto, mask, truth, level=level)
            unweighted_hits += plain.low <= target <= plain.high
        own = proportion_ci(int(truth[mask].sum()), reviewed, level=level)
        reviewed_width += own.high - own.low
        wider += ci.high - ci.low >= own.high - own.low
        judge = proportion_ci(int(auto.sum()), auto.size, level=level)
        judge_width += judge.high - judge.low
        judge_hits += judge.low <= target <= judge.high
    mc = proportion_ci(hits, experiments)
    return Row(
        run.name,
        se,
        sp,
        reviewed,
        hits / experiments,
        mc.low,
        mc.high,
        width / reviewed_width,
        wider / experiments,
        width / judge_width,
        judge_hits / experiments,
        unweighted_hits / experiments if weighted else None,
    )


JUDGES = [(0.7, 0.6), (0.8, 0.75), (0.9, 0.9), (0.95, 0.95), (0.95, 0.6)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="a small grid, 300 experiments")
    args = parser.parse_args()
    experiments = 300 if args.quick else args.experiments
    judges = [(0.7, 0.6), (0.9, 0.9)] if args.quick else JUDGES
    sizes = [30] if args.quick else [30, 50, 100]
    start = time.perf_counter()
    print(f"PPI++ corrected pass rate, review stratified by case, {experiments} experiments each")
    print(
        f"{'run':>8} {'sens':>5} {'spec':>5} {'reviewed':>8}  coverage (MC 95%)      "
        "width/reviewed  wider  width/judge  judge covers  unweighted covers"
    )
    rows = []
    for run, (se, sp), n in itertools.product([equal_run(), unequal_run()], judges, sizes):
        r = stratified_row(run, se, sp, n, experiments=experiments)
        rows.append(r)
        unweighted = "" if r.unweighted_coverage is None else f"{r.unweighted_coverage:6.1%}"
        print(
            f"{r.run:>8} {r.sensitivity:5.2f} {r.specificity:5.2f} {r.reviewed:8d}  "
            f"{r.coverage:6.1%} ({r.mc_low:.1%} to {r.mc_high:.1%})  "
            f"{r.vs_reviewed:14.3f}  {r.wider:5.0%}  "
            f"{r.vs_judge:11.2f}  {r.judge_coverage:12.1%}  {unweighted:>17}"
        )
    worst = min(rows, key=lambda r: r.coverage)
    print(
        f"lowest coverage {worst.coverage:.1%} (MC {worst.mc_low:.1%} to {worst.mc_high:.1%}) "
        f"in the {worst.run} run at sensitivity={worst.sensitivity}, "
        f"specificity={worst.specificity}, reviewed={worst.reviewed}"
    )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
