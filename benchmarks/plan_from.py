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

Measured on the 2-core development machine at a load average of about 1
(0.88 as it started, 1.30 as it ended), medians of 3 runs (``--repeat 3
--against 6ed54e4``), this tree against the revision before each case's
difference was drawn through its law, the search for the fewest cases
was aimed by the powers it finds, and B's shift was solved without
scipy.optimize:

==============================  ==================  ==================  ===========
figure                          this tree           before              CPU, peak
                                CPU, peak           CPU, peak           ratio
==============================  ==================  ==================  ===========
report                          0.561 s, 27 MB      0.588 s, 31 MB      0.95x
plan --from --pb +0.1           4.24 s, 169 MB      9.10 s, 186 MB      0.47x 0.91x
  --experiments 4000            2.87 s, 167 MB      5.87 s, 183 MB      0.49x 0.91x
  --experiments 16000           6.33 s, 162 MB      15.64 s, 189 MB     0.40x 0.86x
==============================  ==================  ==================  ===========

The peak at 16,000 experiments is 0.97x the one at 4,000 (1.04x before):
nothing is kept between designs but the laws of a case's difference, and
the rest is the betting rule's working arrays for the multisets judged
at once and the assurance's blocks. So ``plan --from`` takes 7.6x the
report's CPU (15.5x before): the goal of 2x is still out of reach. Where
its 4.2 s go (one run under cProfile, 5.5 s there): 1.5 s the betting
rule on the multisets of differences met for the first time (each judged
once; about 2,400 new ones a design, and 11 designs simulated: 8 by the
search, the ceiling, the fresh check and the assurance's two), 0.6 s
drawing the case rates of unlimited repeats for the ceiling (Beta draws,
54 ns each, 8.2 million of them), 0.6 s reading the file, 0.4 s the
posterior on its grid and its models' nodes, 0.3 s importing scipy.special
and numpy, and about 0.3 s drawing the uniforms and counting the
multisets' keys. Before, drawing each case's two rates and two binomial
counts took 5.2 s, and the search simulated 16 designs, starting from
the normal approximation's guess (312 cases where 512 are needed).

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
            ("import numpy, scipy.special", ["-c", "import numpy, scipy.special"]),
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
