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
   a fixed chunk (the design simulator judges its experiments
   ``_JUDGED`` values at a time and keeps only their pass counts, a byte a
   case and variant; the assurance draws its experiments in blocks of at
   most 2,000,000 values).

With ``--against REF`` every figure is also measured on the tree of that git
revision, runs alternating with this tree's, and printed with the ratio of
this tree's median to that revision's.

Measured on the 2-core development machine at a load average of about 2,
one run of each figure (``--repeat 1 --against main``), this tree against
the revision before the simulator kept only pass counts, judged each
multiset of differences once and judged its experiments in chunks:

==============================  ==================  ==================  ===========
figure                          this tree           before              CPU, peak
                                CPU, peak           CPU, peak           ratio
==============================  ==================  ==================  ===========
report                          0.586 s, 30 MB      0.584 s, 30 MB      1.00x
plan --from --pb +0.1           10.05 s, 260 MB     16.41 s, 1,024 MB   0.61x 0.25x
  --experiments 4000            6.36 s, 206 MB      9.00 s, 594 MB      0.71x 0.35x
  --experiments 16000           17.06 s, 333 MB     30.29 s, 1,902 MB   0.56x 0.18x
==============================  ==================  ==================  ===========

So ``plan --from`` takes 17x the report's CPU (28x before): the goal of 2x
is not met. Its peak grew 1.62x from 4,000 to 16,000 experiments (3.20x
before). Then the counts of unlimited repeats (on which the plan's
ceiling is judged) were kept as one difference in four bytes a value
instead of two counts: one run each, at a load of about 2.5, 9.48 s of
CPU at 231 MB (default), 5.95 s at 209 MB (4,000 experiments) and 16.47 s
at 273 MB (16,000): the peak 1.30x from 4,000 to 16,000 experiments. What is left
of the memory that grows with experiments is the pass counts the design
simulator keeps for its common random numbers (a byte a case, variant and
experiment; 200 case models x 160 experiments of 567 cases at 16,000),
and of the time: drawing the case rates and runs (about a third, the
same draws as before, so that plans are unchanged), judging the betting
rule on the distinct multisets (about a third), reading the file (0.6 s),
the posterior on its grid (0.4 s) and the assurance's fresh experiments.

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
