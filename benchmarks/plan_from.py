"""How long does ``plan --from`` take against ``report`` on the same file, and in what memory?

Each figure is from fresh processes (median wall time, start to exit, of
``--repeat`` runs after a warm-up, median CPU time, user + system, and peak
RSS from ``ru_maxrss``; see benchmarks/report.py, whose files and
measurement this script shares):

1. ``evalstats report FILE`` and ``evalstats plan --from FILE --pb +0.1`` on
   the 100,000-sample shop run (4 cases x 12,500 runs a variant: a plan of
   about 500 cases x 1 run, every design tried simulated on 200 case models
   x 80 experiments): goal at most 2x the report's time.
2. The same plan with ``--experiments`` at half and at twice the default
   (8,000): the peak memory must not grow with the simulation count beyond
   a fixed chunk (the design simulator keeps nothing between designs but
   the laws of a case's difference: it draws each design's uniforms again
   from each block's seed and judges its experiments ``_JUDGED`` values at
   a time, and without spread draws the case rates of unlimited repeats a
   slice of experiments at a time as it judges them; the assurance draws
   its experiments in blocks of at most 2,000,000 values).

With ``--against REF`` every figure is also measured on the tree of that git
revision, runs alternating with this tree's, and printed with the ratio of
this tree's median to that revision's.

Measured on the 2-core development machine at a load average of about 0.8
(0.66 as it started, 0.96 as it ended), medians of 3 runs (``--repeat 3
--against 53d7632``), this tree against the revision before the ceiling
was simulated only when read, the prior's information was computed by
recurrences, and each distinct drawn model's rates and approximate power
were computed once:

==============================  ==================  ==================  ===========
figure                          this tree           before              CPU, peak
                                CPU, peak           CPU, peak           ratio
==============================  ==================  ==================  ===========
report                          0.566 s, 27 MB      0.566 s, 27 MB      1.00x
import numpy, scipy.special     0.310 s, 51 MB      0.318 s, 52 MB      0.98x
plan --from --pb +0.1           2.80 s, 158 MB      4.40 s, 157 MB      0.63x 1.00x
  --experiments 4000            1.94 s, 167 MB      2.93 s, 166 MB      0.66x 1.01x
  --experiments 16000           3.74 s, 163 MB      6.44 s, 162 MB      0.58x 1.00x
==============================  ==================  ==================  ===========

So ``plan --from`` takes 4.9x the report's CPU (7.8x before, in the same
run). The goal of 2x is out of reach of a plan that simulates the
comparison's own rule: report plus the imports every plan needs and
report does not (numpy and scipy.special, with one BLAS thread as the
command sizes it: 0.31 s) is already 1.55x the report, which leaves 0.26 s
for the posterior (0.2 s) and the ten simulated designs (2 s). The peak
at 16,000 experiments is 0.97x the one at 4,000: nothing is kept between
designs but the laws of a case's difference, and the rest is the betting
rule's working arrays for the multisets judged at once and the
assurance's blocks.

Where the time goes (each part timed alone in one process, at a load of
about 1.5, where the whole took 3.4 s): 0.3-0.5 s imports, 0.45 s reading
the file, 0.1 s the fit and 0.2 s the posterior, and 2.3 s
the 10 simulated designs (8 by the search, the fresh check, the
assurance's two): of it 1.3 s the betting rule on the multisets of
differences met for the first time (about 2,400 a design, each judged
once: the sieve of one order decides 40% of them, the others take all 8
orders), 0.3 s drawing the uniforms and 0.2 s counting the multisets'
keys. The ceiling (unlimited repeats, 0.9 s) is no longer simulated for a
plan of one run a case, whose text does not show it; ``--json``, which
carries it, simulates it once (it was twice when both its power and its
interval were read). Jeffreys' prior on the grid took 0.29 s by betaln and
digamma, 0.09 s by their recurrences; the drawn models' Beta quantiles,
0.25 s computed twice, 0.09 s once; the approximate powers of the 4,000
ranked draws, 0.20 s, 0.04 s for their 257 distinct models.

The plan's own work does not grow with the file; the report's does. On
the same machine later (one run each, ``--samples 400000``, a file of
344 MB): report 1.34 s of CPU in 28 MB, ``plan --from`` 2.80 s in 153 MB,
2.09x the report (at 100,000 samples in that session, 5.2-5.75x); the
peak at 16,000 experiments 1.06x the one at 4,000. A pilot of more than
100,000 runs of a case (the 1,000,000-sample file's 125,000) is refused
(MAX_PILOT_REPEATS). Working the betting test's eight orders out a few at
a time, setting aside the rows the orders so far already reject (on the
planner's rows 70% by the first order, a further 4,100 of the remaining
11,100 partway), saves a third of the capitals but not time: the copies
of each stage's values into place cost what the capitals saved (0.99x of
the plan's CPU, and 1.0-1.3x on 2,400 rows of 512 cases), and was left out.

Usage::

    python benchmarks/plan_from.py [--repeat 3] [--against main]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import HERE, OUT, _tree_of, cli, large_file, measure, tree_env  # noqa: E402

#: What a plan imports that report does not, with one BLAS thread as the command
#: sizes it (evalstats.cli._main._one_blas_thread): a second one spins as numpy loads.
_IMPORTS = """
import os
for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")
import numpy, scipy.special
"""


def _line(name: str, fig: dict[str, float], base: dict[str, float] | None) -> str:
    line = (
        f"   {name + ':':<34} {fig['wall']:7.3f} s wall, CPU {fig['cpu']:6.3f} s, "
        f"peak {fig['peak_mb']:5.0f} MB"
    )
    if base is not None:
        cpu, wall = fig["cpu"] / base["cpu"], fig["wall"] / base["wall"]
        line += f"  [{cpu:.2f}x the report's CPU, {wall:.2f}x its wall]"
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; medians")
    parser.add_argument("--against", metavar="REF", help="also measure on this revision's tree")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    report = str(Path(__file__).resolve().parent / "report.py")
    subprocess.run(
        [sys.executable, report, "--make", "--samples", str(args.samples)]
        + ["--large", str(args.samples)],
        check=True,
    )
    path = str(large_file(args.samples))
    with tempfile.TemporaryDirectory() as folder:
        envs = [tree_env(HERE)]
        if args.against:
            envs.append(tree_env(_tree_of(args.against, Path(folder))))
        names = ["this tree"] + ([args.against] if args.against else [])
        plan = ["plan", "--from", path, "--pb", "+0.1"]
        figures = [
            ("report", cli("report", path)),
            # what any plan imports that report does not: the floor a plan adds
            ("import numpy, scipy.special", ["-c", _IMPORTS]),
            ("plan --from --pb +0.1", cli(*plan)),
            ("  --experiments 4000", cli(*plan, "--experiments", "4000")),
            ("  --experiments 16000", cli(*plan, "--experiments", "16000")),
        ]
        print(f"on {args.samples:,} samples ({Path(path).stat().st_size / 1e6:.0f} MB)")
        found: dict[str, list[dict[str, float]]] = {}
        for name, command in figures:
            found[name] = measure(command, repeat=args.repeat, envs=envs)
        for k, tree in enumerate(names):
            print(f" {tree}:")
            base = found["report"][k]
            for name, _ in figures:
                print(_line(name, found[name][k], None if name == "report" else base))
            floor = found["report"][k]["cpu"] + found["import numpy, scipy.special"][k]["cpu"]
            print(
                f"   report + those imports: CPU {floor:.3f} s "
                f"[{floor / base['cpu']:.2f}x the report's], before any plan is worked out"
            )
            low, high = found["  --experiments 4000"][k], found["  --experiments 16000"][k]
            print(
                f"   peak at 16,000 experiments / at 4,000: {high['peak_mb'] / low['peak_mb']:.2f}x"
                " (goal: about 1x)"
            )
        if args.against:
            print(f"this tree / {args.against} (median CPU, peak):")
            for name, _ in figures:
                now, before = found[name]
                print(
                    f"   {name + ':':<34} CPU {now['cpu'] / before['cpu']:.2f}x, "
                    f"peak {now['peak_mb'] / before['peak_mb']:.2f}x"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
