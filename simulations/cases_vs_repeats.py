"""Cases against repeats for a fixed budget of calls, at several intra-case correlations.

With a budget of ``budget`` calls per variant, every split into cases x repeats
(cases at least 2) is a possible design. For each split and each icc the
script computes the analytic power of the clustered paired comparison
(:func:`evalstats.planning._power.clustered_power`, Miller 2024, arXiv 2411.00640) and
the simulated power (:func:`evalstats.planning._simulate.simulate_clustered`), writes
both to a CSV, draws them, and prints the best split per icc. When cases
differ (icc > 0), a new case is worth more than another repeat of an old one.

Usage::

    python simulations/cases_vs_repeats.py [--out simulations/out] [--budget 120]
        [--pa 0.7] [--pb 0.8] [--experiments 4000] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from evalstats.planning._power import CaseModel, clustered_power
from evalstats.planning._simulate import simulate_clustered

ICCS = (0.0, 0.1, 0.3, 0.5)


def splits(budget: int) -> list[tuple[int, int]]:
    """(cases, repeats) with cases x repeats == budget and cases >= 2."""
    return [(budget // r, r) for r in range(1, budget // 2 + 1) if budget % r == 0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="simulations/out", help="output directory")
    parser.add_argument("--budget", type=int, default=120, help="calls per variant (120)")
    parser.add_argument("--pa", type=float, default=0.7)
    parser.add_argument("--pb", type=float, default=0.8)
    parser.add_argument("--experiments", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="few experiments")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    experiments = 300 if args.quick else args.experiments
    started = time.perf_counter()
    rows = []
    for icc in ICCS:
        model = CaseModel(args.pa, args.pb, icc)
        for cases, repeats in splits(args.budget):
            sim = simulate_clustered(
                model, cases=cases, repeats=repeats, experiments=experiments, seed=args.seed
            )
            rows.append(
                {
                    "icc": icc,
                    "cases": cases,
                    "repeats": repeats,
                    "analytic_power": float(clustered_power(model, cases, repeats)),
                    "simulated_power": float(sim.power.estimate),
                    "simulated_low": float(sim.power.low),
                    "simulated_high": float(sim.power.high),
                    "simulated_false_positives": float(sim.false_positive_rate.estimate),
                }
            )
    with (out / "cases_vs_repeats.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.6f}" if isinstance(v, float) else v for k, v in row.items()})

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    for icc in ICCS:
        sel = [r for r in rows if r["icc"] == icc]
        x = [r["repeats"] for r in sel]
        (line,) = ax.plot(x, [r["analytic_power"] for r in sel], "-", label=f"icc {icc:g}")
        est = [r["simulated_power"] for r in sel]
        ax.errorbar(
            x,
            est,
            yerr=[
                [e - r["simulated_low"] for e, r in zip(est, sel, strict=True)],
                [r["simulated_high"] - e for e, r in zip(est, sel, strict=True)],
            ],
            fmt="o",
            markersize=3,
            capsize=2,
            color=line.get_color(),
        )
    ax.set_xscale("log")
    ax.set_xlabel(f"repeats per case (cases = {args.budget} / repeats)")
    ax.set_ylabel("power of the clustered paired comparison")
    ax.set_title(
        f"{args.budget} calls per variant, {args.pa:.0%} against {args.pb:.0%}: "
        "lines analytic, points simulated"
    )
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "cases_vs_repeats.png", dpi=120)

    print(f"{args.budget} calls per variant, {args.pa:.0%} against {args.pb:.0%}:")
    for icc in ICCS:
        sel = [r for r in rows if r["icc"] == icc]
        best = max(sel, key=lambda r: r["simulated_power"])
        worst = min(sel, key=lambda r: r["simulated_power"])
        print(
            f"  icc {icc:<4g} best {best['cases']:>3} cases x {best['repeats']:>2} repeats: "
            f"power {best['simulated_power']:.0%} (analytic {best['analytic_power']:.0%}); "
            f"worst {worst['cases']} x {worst['repeats']}: {worst['simulated_power']:.0%}"
        )
    print(
        f"wrote {out / 'cases_vs_repeats.csv'} and {out / 'cases_vs_repeats.png'} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
