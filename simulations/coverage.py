"""Exact coverage of the one-sample interval methods, in the manner of Brown, Cai & DasGupta (2001).

For each method of :func:`evalstats.stats._intervals.proportion_ci` and each number of
trials, the coverage probability is computed exactly (by summing binomial
probabilities, no sampling) over a fine grid of true pass rates. The script
writes a CSV table and a figure with one panel per method and number of trials,
like figure 1 of Brown, Cai & DasGupta (2001), and prints a summary: the mean
coverage over the grid and the share of the grid where coverage falls below
``level - 0.02``.

Usage::

    python simulations/coverage.py [--out simulations/out] [--level 0.95]
        [--trials 10 20 40 100] [--points 500]

Reference: Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation
for a binomial proportion. Statistical Science 16, 101-133.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from evalstats.stats._intervals import PROPORTION_METHODS, coverage


def coverage_table(
    trials: list[int], p: np.ndarray, *, level: float
) -> dict[tuple[str, int], np.ndarray]:
    """Exact coverage for every method and number of trials over the rates ``p``."""
    return {(m, n): coverage(m, n, p, level=level) for m in PROPORTION_METHODS for n in trials}


def write_csv(path: Path, table: dict[tuple[str, int], np.ndarray], p: np.ndarray) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["method", "trials", "p", "coverage"])
        for (method, n), values in table.items():
            for pi, ci in zip(p, values, strict=True):
                writer.writerow([method, n, f"{pi:.6f}", f"{ci:.6f}"])


def plot(
    path: Path,
    table: dict[tuple[str, int], np.ndarray],
    p: np.ndarray,
    trials: list[int],
    level: float,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols = len(PROPORTION_METHODS), len(trials)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.2 * cols, 2.0 * rows), sharex=True, sharey=True, squeeze=False
    )
    for i, method in enumerate(PROPORTION_METHODS):
        for j, n in enumerate(trials):
            ax = axes[i][j]
            ax.plot(p, table[(method, n)], lw=0.7, color="tab:blue")
            ax.axhline(level, color="tab:red", lw=0.8, ls="--")
            ax.set_ylim(0.75, 1.0)
            if i == 0:
                ax.set_title(f"n = {n}")
            if j == 0:
                ax.set_ylabel(method, fontsize=9)
            if i == rows - 1:
                ax.set_xlabel("true pass rate p")
    fig.suptitle(f"Exact coverage of nominal {level:.0%} intervals (dashed: nominal level)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="simulations/out", help="output directory")
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--trials", type=int, nargs="+", default=[10, 20, 40, 100])
    parser.add_argument("--points", type=int, default=500, help="grid points in (0, 1)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    p = np.linspace(0.001, 0.999, args.points)
    table = coverage_table(args.trials, p, level=args.level)
    write_csv(out / "coverage.csv", table, p)
    plot(out / "coverage.png", table, p, args.trials, args.level)

    print(f"exact coverage, nominal level {args.level:g}, {args.points} rates in [0.001, 0.999]")
    print(f"{'method':<16}{'n':>5}{'mean':>9}{'min':>9}{'share < level-0.02':>21}")
    for (method, n), values in table.items():
        low_share = float(np.mean(values < args.level - 0.02))
        print(f"{method:<16}{n:>5}{values.mean():>9.4f}{values.min():>9.4f}{low_share:>21.1%}")
    print(
        f"wrote {out / 'coverage.csv'} and {out / 'coverage.png'} "
        f"in {time.perf_counter() - start:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
