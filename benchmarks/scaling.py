"""Do ``report``, ``compare`` and ``gate`` take time and memory linear in samples and cases?

Each figure is from fresh processes (median wall time, start to exit, of
``--repeat`` runs after a warm-up, median CPU time and peak RSS; see
benchmarks/report.py, whose measurement this script shares), with its ratio to
the floor measured in the same run: a loop that only parses every line of the
same file with orjson and keeps nothing.

1. Samples: the shop suite's run (4 cases, benchmarks/report.py's files) at
   1,000, 100,000 and (``--huge``) 1,000,000 samples: ``report``, ``compare``
   and ``gate`` against the floor; goal for ``compare`` and ``gate`` at most
   1.5x the floor at 100,000 samples, and the peak memory flat in samples.
2. Cases: two variants run twice on 100, 10,000 and 100,000 cases
   (benchmarks/shapes.py: 400, 40,000 and 400,000 samples, a manifest line of
   up to 17 MB): the same verbs; goal 10x the cases in at most 11x the time
   (time and peak memory growing at most linearly), and the ratio to the
   floor not growing with the cases.
3. ``plan --from FILE --pb +0.1`` against ``report`` on the 100,000-sample
   file (one run each: the planner's simulation takes seconds): goal at most 2x.

Measured on the 2-core development machine at a load average of about 10
(wall times were 8-15x the CPU times, so the CPU ratios are the figures to
read), medians of 2 runs, one run of this script, without ``--huge``:

==========================  =========  ==========  =========  ==========
figure                      CPU        ratio to    peak       goal
                                       floor CPU
==========================  =========  ==========  =========  ==========
orjson loop, 100,000        0.482 s    1           59 MB
report, 100,000 samples     0.619 s    1.29x       30 MB
compare, 100,000 samples    0.706 s    1.47x       42 MB      1.5x
gate, 100,000 samples       0.976 s    2.03x       57 MB      1.5x
orjson loop, 10,000 cases   0.212 s    1           46 MB
report, 10,000 cases        1.367 s    6.45x       74 MB
compare, 10,000 cases       1.625 s    7.67x       93 MB
gate, 10,000 cases          1.483 s    7.00x       81 MB
==========================  =========  ==========  =========  ==========

From 1,000 to 100,000 samples (100x) the CPU grew 4.9x (report), 3.5x
(compare), 2.1x (gate), the peak 1.30x, 1.08x, 1.01x; from 100 to 10,000
cases (100x) the CPU grew 9.0x, 3.5x, 2.7x and the peak 3.2x, 1.4x, 1.2x:
linear or better (what does not grow is the start, about 0.15-0.5 s). gate
pays a fixed 0.27 s over compare at both sizes (its policies' imports), so it
misses 1.5x at 100,000 samples (compare meets it). What is above the floor on
many cases is per case and linear: the clustered (betting) interval over
the cases, the per-case rows and their text. Before the per-case intervals
were computed for all cases at once, compare on a 40,000-case run (80,000
samples) took 19.8 s of CPU, 6.4 s after (one run each).

plan --from on the 100,000-sample file (``--pb +0.1``, one run): 16.5 s of CPU
at 1,022 MB against report's 0.61 s at 30 MB, 27x (goal 2x, not met): the
planner's simulation of 200 case models drawn from the pilot's posterior,
80 experiments each, with its common random numbers kept for every design
it tries, is the time and the peak; fitting the case model from the tally's
per-case counts is a small part.

With ``--huge``, one run of this script at ``--repeat 1`` (one run of each
figure), on the same machine at a load average of 6-17 (wall times up to
100x the CPU times: only the CPU figures mean anything). It began before
gate's margin floor was computed without scipy (benchmarks/compare.py) and
before compare's pairs were counted side by side, and its plan figure was
measured after the simulator's chunks and multisets (benchmarks/plan_from.py):

=============================  ========  ==========  =======
figure                         CPU       ratio to    peak
                                         floor CPU
=============================  ========  ==========  =======
orjson loop, 1,000 samples     0.055 s   1           15 MB
report, 1,000 samples          0.115 s   2.08x       23 MB
compare, 1,000 samples         0.181 s   3.28x       39 MB
gate, 1,000 samples            0.249 s   4.52x       39 MB
orjson loop, 100,000           0.434 s   1           59 MB
report, 100,000 samples        0.588 s   1.36x       30 MB
compare, 100,000 samples       0.673 s   1.55x       42 MB
gate, 100,000 samples          0.744 s   1.71x       42 MB
orjson loop, 1,000,000         4.446 s   1           482 MB
report, 1,000,000 samples      5.073 s   1.14x       33 MB
compare, 1,000,000 samples     6.129 s   1.38x       48 MB
gate, 1,000,000 samples        6.196 s   1.39x       48 MB
orjson loop, 100 cases         0.060 s   1           15 MB
report, 100 cases              0.144 s   2.41x       23 MB
compare, 100 cases             0.407 s   6.79x       67 MB
gate, 100 cases                0.509 s   8.50x       67 MB
orjson loop, 10,000 cases      0.199 s   1           46 MB
report, 10,000 cases           1.400 s   7.03x       75 MB
compare, 10,000 cases          1.534 s   7.70x       93 MB
gate, 10,000 cases             1.419 s   7.13x       81 MB
orjson loop, 100,000 cases     1.920 s   1           344 MB
report, 100,000 cases          12.577 s  6.55x       420 MB
compare, 100,000 cases         14.377 s  7.49x       492 MB
gate, 100,000 cases            15.824 s  8.24x       506 MB
=============================  ========  ==========  =======

From 100,000 to 1,000,000 samples (10x) the CPU grew 8.63x (report), 9.11x
(compare) and 8.33x (gate), the peak 1.12x, 1.14x and 1.14x: linear in
time, flat in memory (the orjson loop's peak grows 8x: it parses the
manifest, whose schedule lists every slot, into Python objects).
From 10,000 to 100,000 cases (10x) the CPU grew 8.98x, 9.37x and 11.15x,
the peak 5.6x, 5.3x and 6.2x (per-case tables, ids and rows: linear or
better). gate's 11.15x is one run at a load of about 12; in a profile at
10,000 cases, what gate does beyond reading is the betting interval over
the cases (a fixed number of evaluations of the capital, each a pass over
the cases) and the per-case rows, none of them more than linear (its
pairing of the outcomes, a few numpy calls a case, is now counted for many
cases at once: 26 ms of CPU at 10,000 cases). With it, measured again one
run each (user + system CPU, load about 6-8): gate 1.33 s at 10,000 cases
and 12.88 s at 100,000 (9.7x), compare 1.43 s and 11.50 s (8.0x), at 83
and 519 MB, 95 and 506 MB. plan --from on the
100,000-sample file: 11.09 s of CPU at 260 MB against report's 0.657 s at
30 MB, 16.9x (goal 2x, not met; before the simulator's chunks, 27x at
1,022 MB).

Measured again, one run of this script (``--repeat 2 --huge``: medians of 2,
one run at 1,000,000 samples and 100,000 cases) at a load average of about
1.2-2, once tables were counted from their columns and the planner's draws
packed:

=============================  ========  ==========  =======
figure                         CPU       ratio to    peak
                                         floor CPU
=============================  ========  ==========  =======
report, 100,000 samples        0.609 s   1.37x       30 MB
compare, 100,000 samples       0.682 s   1.54x       42 MB
gate, 100,000 samples          0.686 s   1.55x       42 MB
report, 1,000,000 samples      4.824 s   1.11x       34 MB
compare, 1,000,000 samples     5.793 s   1.33x       46 MB
gate, 1,000,000 samples        5.907 s   1.36x       46 MB
report, 10,000 cases           1.319 s   6.72x       76 MB
compare, 10,000 cases          1.350 s   6.87x       93 MB
gate, 10,000 cases             1.264 s   6.44x       82 MB
report, 100,000 cases          11.389 s  6.07x       421 MB
compare, 100,000 cases         10.581 s  5.64x       494 MB
gate, 100,000 cases            11.741 s  6.26x       506 MB
plan --from, 100,000 samples   9.254 s   15.65x      187 MB
=============================  ========  ==========  =======

(plan --from's ratio is to report's 0.591 s.) 10x the samples took 7.92x
(report), 8.49x (compare) and 8.61x (gate) the CPU, at 1.10-1.12x the
peak; 10x the cases 8.64x, 7.84x and 9.29x, at 5.3-6.2x the peak: every
growth within the goal of 11x. The ratio to the floor does not grow with
the cases (6.4-6.9x at 10,000, 5.6-6.3x at 100,000). plan --from is still
15.7x report (goal 2x, not met): its simulation draws the same random
numbers as before, so that every plan stays the same, and those draws
alone are about half its time (benchmarks/plan_from.py).

Measured again, one run of this script (``--repeat 2 --huge``) at a load
average of about 1, after compare's and gate's reading reached the floor
and an interval over many cases worked out its bets by running sums:

=============================  ========  ==========  =======
figure                         CPU       ratio to    peak
                                         floor CPU
=============================  ========  ==========  =======
report, 100,000 samples        0.584 s   1.30x       27 MB
compare, 100,000 samples       0.638 s   1.42x       38 MB
gate, 100,000 samples          0.638 s   1.42x       39 MB
report, 1,000,000 samples      4.674 s   0.98x       30 MB
compare, 1,000,000 samples     4.927 s   1.04x       43 MB
gate, 1,000,000 samples        4.759 s   1.00x       42 MB
report, 10,000 cases           0.946 s   4.65x       72 MB
compare, 10,000 cases          1.076 s   5.28x       94 MB
gate, 10,000 cases             0.852 s   4.18x       78 MB
report, 100,000 cases          8.394 s   4.47x       418 MB
compare, 100,000 cases         7.068 s   3.76x       490 MB
gate, 100,000 cases            6.662 s   3.55x       503 MB
=============================  ========  ==========  =======

10x the samples took 8.01x (report), 7.72x (compare) and 7.45x (gate)
the CPU, at 1.10-1.14x the peak; 10x the cases 8.87x, 6.57x and 7.82x, at
5.2-6.4x the peak: every growth within the goal of 11x, and compare and
gate within 1.5x of the floor at 100,000 samples. (At 1,000,000 samples
the floor's orjson loop also builds the manifest's 1,000,000 schedule
slots as Python lists, which the tally does not.) plan --from in the
same run: 2.62 s against a report that took 1.07 s in its one run (0.57
s in benchmarks/plan_from.py's medians, where plan --from is 4.9x).

Usage::

    python benchmarks/scaling.py [--repeat 3] [--huge]   # --huge: the 1,000,000 sizes too
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import _FLOOR, OUT, base_file, cli, large_file, one, show  # noqa: E402
from shapes import results_file  # noqa: E402


def verbs(path: Path, a: str = "old", b: str = "new") -> list[tuple[str, list[str]]]:
    f = str(path)
    gate = ["gate", f, "--variant", b, "--min-pass", "0.5", "--no-regression-vs", a]
    return [
        ("report", cli("report", f)),
        ("compare", cli("compare", f, "--a", a, "--b", b)),
        ("gate", cli(*gate, "--margin", "0.02")),
    ]


def _growth(name: str, sizes: list[int], figs: dict[int, dict[str, float]], unit: str) -> None:
    steps = []
    for small, big in zip(sizes, sizes[1:], strict=False):
        time = figs[big]["cpu"] / figs[small]["cpu"]
        peak = figs[big]["peak_mb"] / figs[small]["peak_mb"]
        steps.append(
            f"{small:,} -> {big:,} {unit} ({big / small:.0f}x): CPU {time:.2f}x, peak {peak:.2f}x"
        )
    print(f"   {name + ':':<9} " + "; ".join(steps))


def _section(
    title: str, files: dict[int, Path], unit: str, repeat: int
) -> dict[str, dict[int, dict[str, float]]]:
    print(title)
    by_verb: dict[str, dict[int, dict[str, float]]] = {}
    for size, path in files.items():
        reps = repeat if size < 1_000_000 else 1
        floor = one(["-c", _FLOOR, str(path)], repeat=reps)
        print(f"  {size:,} {unit} ({path.stat().st_size / 1e6:.1f} MB)")
        show("floor (orjson loop)", floor, None)
        for name, command in verbs(path):
            fig = one(command, repeat=reps)
            show(name, fig, floor)
            by_verb.setdefault(name, {})[size] = fig
    sizes = sorted(files)
    print(f"  growth (goal: 10x the {unit} in at most 11x the CPU):")
    for name, figs in by_verb.items():
        _growth(name, sizes, figs, unit)
    return by_verb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; medians")
    parser.add_argument("--huge", action="store_true", help="also the 1,000,000 sizes")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    sample_sizes = [1_000, 100_000] + ([1_000_000] if args.huge else [])
    case_sizes = [100, 10_000] + ([100_000] if args.huge else [])
    # The files are made by a child: a child starts with its parent's peak memory.
    here = Path(__file__).resolve().parent
    big = [str(s) for s in sample_sizes[1:]]
    for samples in big:
        subprocess.run(
            [sys.executable, str(here / "report.py"), "--make", "--samples", samples]
            + ["--large", samples],
            check=True,
        )
    for cases in case_sizes:
        subprocess.run(
            [sys.executable, str(here / "shapes.py"), "results", str(cases), "2"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    samples = {s: (base_file() if s == 1_000 else large_file(s)) for s in sample_sizes}
    cases = {c: results_file(c, 2) for c in case_sizes}
    _section("1. samples (the shop suite: 4 cases)", samples, "samples", args.repeat)
    _section("2. cases (two variants, 2 runs of each case)", cases, "cases", args.repeat)
    print("3. plan --from against report on the same file (goal at most 2x; one run each)")
    path = samples[100_000]
    rep = one(cli("report", str(path)), repeat=1)
    plan = one(cli("plan", "--from", str(path), "--pb", "+0.1"), repeat=1)
    print(f"  {path.name}")
    show("report", rep, None)
    show("plan --from --pb +0.1", plan, rep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
