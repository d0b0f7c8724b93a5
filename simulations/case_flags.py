"""How often per-case "clearly worse / better" flags fire when A and B are identical.

Each simulated comparison draws case pass rates from a Beta (mean 0.7, icc
0.3), runs A and B on every case with the same rate (so any flag is false),
and compares them with the public ``compare``: paired (each case's exact
McNemar test) and unpaired (each case's Fisher exact test). It prints the
share of comparisons that flag at least one case (the family-wise error
rate of the flags), with its 95% Monte-Carlo (Wilson) interval, for the
Holm-adjusted flags (the default), for the unadjusted tests
(``adjust="none"``), and for the earlier rule of flagging a case whose own
(exploratory, unadjusted) interval excludes 0.

Goal: with A = B, at most 5% of comparisons flag any case, at 10 to 100
cases.

Run: python simulations/case_flags.py [--experiments 1000]  (a few minutes)
"""

from __future__ import annotations

import argparse

import numpy as np

from evalstats.planning._power import CaseModel
from evalstats.stats._compare import compare
from evalstats.stats._intervals import proportion_ci

SETTINGS = [(10, 10), (20, 10), (40, 10), (100, 5)]  # (cases, runs per case)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=1000)
    args = parser.parse_args()
    n = args.experiments
    print(
        f"A = B (case rates Beta, mean 0.7, icc 0.3); {n} comparisons each; share that "
        "flag any case, 95% Monte-Carlo intervals"
    )
    print(
        f"{'cases':>5} {'runs':>4}  {'design':<8} {'Holm (default)':<22} {'unadjusted':<22} "
        "a case interval excludes 0"
    )
    worst = 0.0
    for cases, runs in SETTINGS:
        rng = np.random.default_rng(cases * 100 + runs)
        rates, _ = CaseModel(0.7, 0.7, 0.3).draw(rng, (n, cases))
        for paired in (True, False):
            holm = raw = apart = 0
            for q in rates:
                a = {f"c{i}": rng.random(runs) < x for i, x in enumerate(q)}
                b = {f"c{i}": rng.random(runs) < x for i, x in enumerate(q)}
                c = compare(a, b, paired=paired)
                holm += bool(c.worse_cases or c.better_cases)
                raw += any(row.pvalue < 0.05 for row in c.cases)
                apart += any(row.difference.high < 0 or row.difference.low > 0 for row in c.cases)
            h = proportion_ci(holm, n)
            r = proportion_ci(raw, n)
            e = proportion_ci(apart, n)
            worst = max(worst, float(h.estimate))
            design = "paired" if paired else "unpaired"
            print(f"{cases:>5} {runs:>4}  {design:<8} {str(h):<22} {str(r):<22} {e}")
    print(f"largest Holm-adjusted rate: {100 * worst:.1f}% (goal: at most 5%)")


if __name__ == "__main__":
    main()
