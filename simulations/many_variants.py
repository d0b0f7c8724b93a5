"""How often a comparison of several identical variants finds a difference.

Each simulated run has k identical variants (every case with the same pass
rate under each, drawn from a Beta with mean 0.7 and icc 0.3), 10 cases x 5
runs each on a paired schedule, compared by
:func:`evalstats.multiple.compare_variants` (the ``compare --baseline`` /
``--all-pairs`` command). It prints the share of runs in which some pair is
called different (the family-wise error rate of the verdicts), with its 95%
Monte-Carlo (Wilson) interval, for Holm (default), Shaffer and no
adjustment, with a baseline and for all pairs.

Goal: at most 5% with Holm or Shaffer; without adjustment it grows with the
number of comparisons.

Run: python simulations/many_variants.py [--experiments 400]  (a few minutes)
"""

from __future__ import annotations

import argparse

import numpy as np

from evalstats.casemodel import CaseModel
from evalstats.intervals import proportion_ci
from evalstats.multiple import _adjust, compare_variants
from evalstats.results import Results

CASES, RUNS = 10, 5
ADJUST = ("holm", "shaffer", "none")


def run(rng: np.random.Generator, variants: list[str]) -> Results:
    cases = [f"c{i}" for i in range(CASES)]
    rates, _ = CaseModel(0.7, 0.7, 0.3).draw(rng, (CASES,))
    schedule, samples = [], []
    for r in range(RUNS):
        for i, case in enumerate(cases):
            order = variants if (i + r) % 2 == 0 else variants[::-1]
            for position, v in enumerate(order):
                schedule.append([case, r, r * CASES + i, position, v])
                ok = rng.random() < rates[i]
                samples.append(
                    {
                        "type": "sample",
                        "case": case,
                        "variant": v,
                        "repeat": r,
                        "status": "completed",
                        "checks": [{"check": "c", "status": "passed" if ok else "failed"}],
                    }
                )
    manifest = {
        "type": "manifest",
        "cases": [{"id": c} for c in cases],
        "variants": [{"name": v} for v in variants],
        "runs": RUNS,
        "schedule": schedule,
    }
    return Results(None, manifest, tuple(samples), {"status": "finished"}, ())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=400)
    args = parser.parse_args()
    n = args.experiments
    print(
        f"k identical variants, {CASES} cases x {RUNS} runs, paired (McNemar per pair); "
        f"{n} runs each; share of runs calling some pair different, 95% MC intervals"
    )
    print(f"{'k':>2} {'mode':<9} {'Holm':<22} {'Shaffer':<22} {'none':<22}")
    alpha = 0.05
    for k in (3, 5):
        variants = [f"v{i}" for i in range(k)]
        rng = np.random.default_rng(k)
        counts = {(m, a): 0 for m in ("baseline", "all pairs") for a in ADJUST}
        for _ in range(n):
            res = run(rng, variants)
            for mode in ("baseline", "all pairs"):
                kw = {"baseline": "v0"} if mode == "baseline" else {"all_pairs": True}
                # one comparison per pair; each adjustment of its p-values is
                # the one compare_variants(adjust=...) applies
                many = compare_variants(res, adjust="none", **kw)
                raw = [p.comparison.pvalue for p in many.pairs]
                for adj in ADJUST:
                    adjusted = _adjust(raw, adj, k, mode == "all pairs")
                    counts[(mode, adj)] += bool((adjusted < alpha).any())
        for mode in ("baseline", "all pairs"):
            cells = [str(proportion_ci(counts[(mode, a)], n)) for a in ADJUST]
            print(f"{k:>2} {mode:<9} {cells[0]:<22} {cells[1]:<22} {cells[2]:<22}")


if __name__ == "__main__":
    main()
