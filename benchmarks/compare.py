"""How fast do ``compare``, ``gate`` and ``plan --from`` read a large results file?

Each figure is from fresh processes (median wall time, start to exit, of
``--repeat`` runs after a warm-up, median CPU time and peak RSS), with its
ratio to the floor measured in the same run: a loop that only parses every
line of the same file with orjson and keeps nothing (see benchmarks/report.py,
whose files, measurement and floor this script shares).

1. On 100,000 samples: ``compare FILE --a old --b new``, ``gate FILE ...`` and
   ``plan --from FILE``; goal at most 1.5x the orjson loop where feasible.
2. The same verbs on 1,000 and on 400,000 samples: the peak memory must not
   grow with samples beyond the per-case and per-(case, repeat) tables of the
   tally (one byte per slot and variant; for a fixed suite they grow with the
   repeats, 100,000 bytes at 400,000 samples of two variants).

All three verbs count the file in the one streaming pass of
``evalstats.tally`` (no record is held: tests/test_compare_stream.py). What is
left above the floor is fixed, not per sample: importing numpy and
scipy.special (about 0.3-0.4 s and 35 MB together; scipy.stats, 0.5 s and
50 MB more, is no longer imported by compare or gate), and for ``plan`` the
case model's fit and the simulated planner, whose arrays set its peak whatever
the file's size.

Measured on the 2-core development machine, shared with other work and noisy
(single runs vary by 10-30%), medians of 5 runs (3 at 400,000), one run of this
script at a load average of about 2:

==========================  ========  ======  ======  ========  ======  =====
figure                      wall      ratio   peak    wall      ratio   peak
                            100,000   floor   MB      400,000   floor   MB
==========================  ========  ======  ======  ========  ======  =====
orjson loop (floor)         0.451 s   1       59      1.745 s   1       200
compare --a old --b new     0.874 s   1.94x   64      2.296 s   1.32x   83
gate (min-pass, vs old)     0.845 s   1.87x   65      2.410 s   1.38x   84
plan --from                 1.772 s   3.93x   192     3.325 s   1.91x   194
==========================  ========  ======  ======  ========  ======  =====

On 1,000 samples compare and gate take 0.36 s at 58 MB and plan --from 1.50 s
at 213 MB: the fixed part. So at 100,000 samples compare and gate are about
0.5 s (the floor's 0.45 s plus the fixed imports) short of 1.5x: not met;
the ratio falls as the file grows (1.3-1.4x at 400,000). plan --from's peak
does not grow with samples (0.90x the 1,000-sample one at 100,000 and 400,000):
its 190-210 MB is the planner's. compare's and gate's peak grows 1.11x from
1,000 to 100,000 samples and 1.44x to 400,000 (+19 MB for 200,000 pairs, about
95 bytes a pair): the paired outcomes are handed to the comparison as Python
lists of bools per case (evalstats.comparison._pairs), not as the tally's
one-byte codes; making them compact is what is left to do.

Before these changes (benchmarks/report.py, same machine): compare 3.3-3.6x
the floor at 108 MB, gate 3.3-3.8x at 108 MB, plan --from 5.5-6.0x at 218 MB.

Usage::

    python benchmarks/compare.py [--samples 100000] [--large 400000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import _FLOOR, OUT, base_file, cli, large_file, measure, show  # noqa: E402


def verbs(path: Path) -> list[tuple[str, list[str]]]:
    f = str(path)
    gate = ["gate", f, "--variant", "new", "--min-pass", "0.5"]
    gate += ["--no-regression-vs", "old", "--margin", "0.02"]
    return [
        ("compare", cli("compare", f, "--a", "old", "--b", "new")),
        ("gate", cli(*gate)),
        ("plan --from", cli("plan", "--from", f)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each figure; medians")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    # The files are made by a child: a child starts with its parent's peak memory.
    report = str(Path(__file__).resolve().parent / "report.py")
    subprocess.run(
        [sys.executable, report, "--make", "--samples", str(args.samples)]
        + ["--large", str(args.large)],
        check=True,
    )
    n = args.repeat
    peaks: dict[str, dict[int, float]] = {}
    for samples, path, repeat in (
        (args.samples, large_file(args.samples), n),
        (1_000, base_file(), n),
        (args.large, large_file(args.large), max(1, n // 2)),
    ):
        floor = measure(["-c", _FLOOR, str(path)], repeat=repeat)
        print(f"on {samples:,} samples ({path.stat().st_size / 1e6:.0f} MB)")
        show("floor (orjson loop)", floor, None)
        for name, command in verbs(path):
            fig = measure(command, repeat=repeat)
            show(name, fig, floor, "1.5x" if samples == args.samples else "")
            peaks.setdefault(name, {})[samples] = fig["peak_mb"]
    print("peak memory against the 1,000-sample run's:")
    for name, by in peaks.items():
        print(
            f"   {name + ':':<14}"
            + ", ".join(
                f"{s:,} samples {by[s] / by[1_000]:.2f}x" for s in (args.samples, args.large)
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
