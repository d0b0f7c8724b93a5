"""Power against runs per case: the shop stand-in, version 1 against version 2.

Version 1 of the offline shop assistant slips on 30% of replies, version 2 on
10%, so their true pass rates are 0.7 and 0.9. For each number of runs per
case (1 to 50 on the four shop cases, so 4 to 200 trials per variant) the
script simulates whole evals (``experiments`` each, judged by ``overlap``, as
tutorials do) and draws the simulated power with its Monte-Carlo interval over
the exact power curve of ``overlap``, then adds the exact curves of
``newcombe`` and of the paired ``mcnemar`` test. It prints, for each rule, the
trials per variant needed for 80% power and the false-positive rate there.

Usage::

    python simulations/power_vs_runs.py [--out simulations/out] [--experiments 300]
        [--max-runs 50] [--seed 0] [--quick]

``--quick`` runs a handful of points with few experiments (a smoke test).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from functools import cache, partial
from pathlib import Path

import numpy as np

from evalstats.demo._shop import SLIP_RATES, make_assistant
from evalstats.planning._power import paired_power, power, sample_size
from evalstats.planning._simulate import simulate_power
from evalstats.running._run_cases import load_shop_cases

P_A = 1.0 - SLIP_RATES[1]
P_B = 1.0 - SLIP_RATES[2]
RULES = ("overlap", "newcombe", "mcnemar")


@cache  # the table rows and the plotted curves ask for the same n
def exact(rule: str, n: int, *, null: bool = False) -> float:
    """Exact power (or, with null, false-positive rate) at n trials per variant."""
    p_b = P_A if null else P_B
    if rule == "mcnemar":
        return paired_power(P_A, p_b, n)  # slips are independent: correlation 0
    return power(P_A, p_b, n, method=rule)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="simulations/out", help="output directory")
    parser.add_argument("--experiments", type=int, default=300, help="experiments per point")
    parser.add_argument("--max-runs", type=int, default=50, help="largest runs per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a few points, few experiments")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cases = load_shop_cases()
    k = len(cases)
    if args.quick:
        runs_list, experiments = [1, 5, 10], 40
    else:
        runs_list, experiments = list(range(1, args.max_runs + 1)), args.experiments
    started = time.perf_counter()
    rows = []
    for runs in runs_list:
        n = k * runs
        sim = simulate_power(
            partial(make_assistant, 1),
            partial(make_assistant, 2),
            cases,
            runs_per_case=runs,
            experiments=experiments,
            method="overlap",
            seed=args.seed + runs,
        )
        row = {
            "runs_per_case": runs,
            "trials": n,
            "simulated_overlap": sim.power.estimate,
            "simulated_low": float(sim.power.low),
            "simulated_high": float(sim.power.high),
            "simulated_false_positives": sim.false_positive_rate.estimate,
        }
        for rule in RULES:
            row[f"exact_{rule}"] = exact(rule, n)
            row[f"false_positives_{rule}"] = exact(rule, n, null=True)
        rows.append(row)
    with (out / "power_vs_runs.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {key: f"{v:.6f}" if isinstance(v, float) else v for key, v in row.items()}
            )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    dense = np.arange(k, k * max(runs_list) + 1, k)
    for rule, style in zip(RULES, ("-", "--", "-."), strict=True):
        ax.plot(
            dense / k, [exact(rule, int(n)) for n in dense], style, label=f"exact power, {rule}"
        )
    r = np.array([row["runs_per_case"] for row in rows])
    est = np.array([row["simulated_overlap"] for row in rows])
    low = np.array([row["simulated_low"] for row in rows])
    high = np.array([row["simulated_high"] for row in rows])
    ax.errorbar(
        r,
        est,
        yerr=[est - low, high - est],
        fmt="o",
        markersize=3,
        capsize=2,
        color="black",
        label=f"simulated evals, overlap ({experiments} each, 95% MC)",
    )
    ax.axhline(0.8, color="grey", linewidth=0.5)
    ax.set_xlabel(f"runs per case ({k} cases; trials per variant = {k} x runs)")
    ax.set_ylabel("probability of 'version 2 is better'")
    ax.set_title(f"Shop stand-in: v1 ({P_A:.0%}) against v2 ({P_B:.0%})")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "power_vs_runs.png", dpi=120)

    print(f"shop stand-in, v1 passes {P_A:.0%} and v2 {P_B:.0%}, {k} cases; 80% power needs:")
    for rule in RULES:
        if rule == "mcnemar":
            n = sample_size(P_A, P_B, design="paired")
        else:
            n = sample_size(P_A, P_B, method=rule)
        print(
            f"  {rule:<9} {n:>4} trials per variant ({math.ceil(n / k)} runs per case), "
            f"false-positive rate {exact(rule, n, null=True):.1%}"
        )
    print(
        f"wrote {out / 'power_vs_runs.csv'} and {out / 'power_vs_runs.png'} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
