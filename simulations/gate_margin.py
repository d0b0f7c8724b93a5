"""How often the no-regression gate passes a variant that is truly worse.

Each simulated run draws 10 cases from a case model (A's case rates from a
Beta with mean 0.9 and icc 0.3; B's shifted on the logit scale to the mean
stated), runs both variants 5 times per case on a paired schedule, and asks
the gate's own rule (:func:`evalstats.gate.non_inferiority`, the rule
``gate --no-regression-vs old --margin M`` applies) whether ``new`` is not
worse than ``old`` by more than M. It prints how often it passes, with the
95% Monte-Carlo (Wilson) interval, and how often it says "can't tell"
(which fails the gate), for the gate's default comparison and, in the last
column, for the clustered comparison (a claim about cases like these).

Goal: with ``new`` truly 20 points worse (90% -> 70%) the gate passes at
most 2.5% of the time, whatever the margin below 20 points; at the margin's
own boundary (B exactly M worse) it passes at most about 2.5% (the one-sided
level of a two-sided 95% interval). Before the margin, "can't tell" counted
as no regression and the gate passed 35% of such runs (81% at 90% -> 80%).

Run: python simulations/gate_margin.py [--experiments 2000]  (a few minutes)
"""

from __future__ import annotations

import argparse

import numpy as np

from evalstats.gate import non_inferiority
from evalstats.intervals import proportion_ci
from evalstats.power import CaseModel
from evalstats.results import Results

CASES, RUNS = 10, 5
# (A's mean, B's mean, margin)
SCENARIOS = [
    (0.9, 0.7, 0.0),
    (0.9, 0.7, 0.05),
    (0.9, 0.7, 0.1),
    (0.9, 0.7, 0.19),
    (0.9, 0.8, 0.1),
    (0.9, 0.85, 0.05),
    (0.9, 0.9, 0.1),
]


def run(rng: np.random.Generator, model: CaseModel) -> Results:
    """One paired run of 'old' (A) and 'new' (B) as a results file would hold it."""
    cases = [f"c{i}" for i in range(CASES)]
    qa, qb = model.draw(rng, (CASES,))
    schedule, samples = [], []
    for r in range(RUNS):
        for i, case in enumerate(cases):
            order = ("old", "new") if (i + r) % 2 == 0 else ("new", "old")
            for position, v in enumerate(order):
                schedule.append([case, r, r * CASES + i, position, v])
                ok = rng.random() < (qa[i] if v == "old" else qb[i])
                samples.append(
                    {
                        "type": "sample",
                        "case": case,
                        "variant": v,
                        "repeat": r,
                        "pair": r * CASES + i,
                        "position": position,
                        "status": "completed",
                        "checks": [{"check": "c", "status": "passed" if ok else "failed"}],
                    }
                )
    manifest = {
        "type": "manifest",
        "cases": [{"id": c} for c in cases],
        "variants": [{"name": "old"}, {"name": "new"}],
        "runs": RUNS,
        "schedule": schedule,
    }
    return Results(None, manifest, tuple(samples), {"status": "finished"}, ())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=2000)
    args = parser.parse_args()
    n = args.experiments
    print(f"{CASES} cases x {RUNS} runs, icc 0.3, paired; {n} runs each; 95% Monte-Carlo intervals")
    print(
        f"{'old -> new':<12} {'margin':>6}  {'gate passes':<22} {'can not tell':<22} "
        f"{'method':<9} gate passes with the clustered comparison (cases like these)"
    )
    for i, (p_a, p_b, margin) in enumerate(SCENARIOS):
        rng = np.random.default_rng(1000 + i)
        model = CaseModel(p_a, p_b, 0.3)
        passes = unsure = clustered = 0
        method = ""
        for _ in range(n):
            res = run(rng, model)
            found = non_inferiority(res, "old", "new", margin=margin, advice=False)
            passes += found.verdict == "not_worse"
            unsure += found.verdict == "cant_tell"
            method = found.comparison.method
            about = non_inferiority(
                res, "old", "new", margin=margin, advice=False, method="clustered"
            )
            clustered += about.verdict == "not_worse"
        print(
            f"{f'{p_a:.0%} -> {p_b:.0%}':<12} {margin:>6g}  {str(proportion_ci(passes, n)):<22} "
            f"{str(proportion_ci(unsure, n)):<22} {method:<9} "
            f"{proportion_ci(clustered, n)}"
        )


if __name__ == "__main__":
    main()
