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
   a fixed chunk (the design simulator keeps only its pass counts, packed
   in as few bits as they need: a bit a case and variant at one run; it
   judges its experiments ``_JUDGED`` values at a time, and without spread
   draws the case rates of unlimited repeats a slice of experiments at a
   time as it judges them; the assurance draws its experiments in blocks
   of at most 2,000,000 values).

With ``--against REF`` every figure is also measured on the tree of that git
revision, runs alternating with this tree's, and printed with the ratio of
this tree's median to that revision's.

Measured on the 2-core development machine at a load average of about 1.3
(1.38 as it started, 1.18 as it ended), one run of each figure (``--repeat 1 --against
main``), this tree against the revision before the pass counts were
packed, the keys of multisets were integers and scipy.stats was left
unimported:

==============================  ==================  ==================  ===========
figure                          this tree           before              CPU, peak
                                CPU, peak           CPU, peak           ratio
==============================  ==================  ==================  ===========
report                          0.608 s, 30 MB      0.606 s, 30 MB      1.00x
plan --from --pb +0.1           9.44 s, 190 MB      10.32 s, 228 MB     0.91x 0.83x
  --experiments 4000            5.99 s, 185 MB      6.58 s, 206 MB      0.91x 0.90x
  --experiments 16000           15.81 s, 192 MB     17.33 s, 268 MB     0.91x 0.71x
==============================  ==================  ==================  ===========

The peak at 16,000 experiments is 1.04x the one at 4,000 (1.30x before):
what remains of the growth is the packed pass counts (a bit a case,
variant and experiment at one run: the search's 200 case models x 160
experiments of 567 cases take 4.5 MB at 16,000), and the fixed part is the betting
rule's working arrays for the multisets judged at once and the
assurance's blocks. So ``plan --from`` takes 15.5x the report's CPU
(17x before): the goal of 2x is out of reach without changing the
random numbers, which every plan printed and tested comes from. Where
its 9.5 s go (one run, timed by function, at a load of about 1.2): 5.2 s
drawing random numbers that must stay the same (1.9 s the design
simulator's case rates, Beta draws and their logit shift, of which
0.6 s draws again for the ceiling's unlimited repeats what was drawn
for the search, rather than keeping 4 bytes a value; 1.8 s its binomial
pass counts; 1.5 s the assurance's own experiments), 2.1 s the betting
rule on the 44,000 multisets of differences met for the first time
(each judged once, by betting_signs), 0.9 s reading the file and
fitting the case model, 0.4 s keying multisets, 0.3 s the posterior on
its grid, 0.6 s the rest. Before, the keys of multisets were rows of a
histogram found by np.unique over rows (about 1.3 s under cProfile,
against 0.35 s), the case model's nodes imported scipy.stats (0.4 s),
the pass counts took a byte a value, and unlimited repeats kept every
block's case rates as four-byte counts at once.

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
