"""How long does a score plan sized with a certainty take, ``plan --from PILOT --certainty C``?

The pilot is the tests' scored pilot (12 cases x 3 runs per variant, A's
mean 0.53, B's gain 0.09; ``tests/test_score_plan.py``), written to
``benchmarks/out/`` by this script. Each figure is from fresh processes
(median wall time, start to exit, of ``--repeat`` runs after a warm-up,
median CPU time, user + system, and peak RSS; see benchmarks/report.py,
whose measurement this script shares), at the default 8,000 experiments:

1. ``plan --from PILOT --score-b observed --repeats 2 --certainty 0.8`` (the
   README's: 81 cases x 2 runs, 9 designs searched over 200 drawn models x
   80 experiments, then the design on 200 fresh models);
2. ``--score-b observed --certainty 0.9`` (one run per case searched: 254
   cases, 11 designs, the largest past the 80 MB of cases kept);
3. ``--score-b observed --repeats 2`` without a certainty (no drawn models:
   the design for the fit and its assurance), which the simulator of drawn
   models does not touch.

With ``--against REF`` every figure is also measured on the tree of that
git revision, runs alternating with this tree's, and printed with the
ratio of this tree's median to that revision's.

Measured on the 2-core development machine, shared with other work, at a
load average of 1.0 as it started (a simulation running beside it for its
first 4 minutes) and 0.1 as it ended, medians of 1 run after the warm-up
(``--repeat 1 --against 53d7632``: this tree against the revision before
the drawn models' case means were read from quantile tables and the
fixed-bet test was decided from bounds of its capital; the text and
``--json`` output of both trees were compared byte for byte by hand, outside
this script, which sends the output nowhere: identical for these commands
and for five more ``--certainty`` plans):

==================================  ===================  ===================  ===========
figure                              this tree            before               ratio
                                    wall, CPU, peak      wall, CPU, peak      wall, CPU
==================================  ===================  ===================  ===========
--repeats 2 --certainty 0.8         7.97, 7.92 s, 251    22.69, 22.58 s, 272  0.35x 0.35x
--certainty 0.9 (repeats searched)  18.47, 18.38 s, 438  68.54, 68.52 s, 480  0.27x 0.27x
--repeats 2, no certainty           6.03, 6.03 s, 151    7.17, 7.17 s, 183    0.84x 0.84x
==================================  ===================  ===================  ===========

(peaks in MB). The plan without a certainty gains from the fixed-bet
verdicts alone (its search for the fit's design judges by the same test).
Measured again at a load of about 1, medians of 2 runs (``--repeat 2
--against 53d7632``), once a steeply U-shaped beta's case means were
computed exactly: 7.81 s against 22.39 s of CPU (0.35x), 18.65 s against
69.56 s (0.27x), and 6.31 s against 7.45 s (0.85x), at 0.82-0.93x the peak.
Once the bisection's verdicts too were decided from bounds of the capital
(``--repeat 1 --against 7ef618b``, the revision before, at a load of
about 1.5 to 2): 7.37 s against 7.34 s of CPU (1.00x), 18.28 s against
18.24 s (1.00x) and 6.00 s against 6.04 s (0.99x), at the same peaks;
the plans' verdicts were already so decided, and the output of the first
and, with ``--json``, of the second and third is byte for byte the same.

Where the time of the first went before (one run under cProfile, at a load of
about 3): 23 s of 46 in the exact beta quantile of every case of every experiment of each
design (betaincinv, 4.4 us each under the profiler), 7 s judging the
fixed-bet test (16 bets' log products for every run), 5.5 s drawing the
runs repeat by repeat, and 3.5 s importing scipy.stats (still so). A design's 16,000
experiments share 200 models, so each model now has a table of 513
quantiles (a 16th of those a design of 84 cases needs); most experiments'
verdicts are settled from 2 bets worked out and 14 bounded. What remains
of the first figure (in-process, 7.6 s): 2.7 s the assurance (a drawn
model for each of its 8,000 experiments, its exact quantiles untouched),
1.2 s the design on 200 fresh models, 1.1 s the fresh simulation of the
model at the certainty's point, 1.6 s the 9 designs searched, and about 1 s the
start (imports, reading the pilot, the posterior's draws).

Usage::

    python benchmarks/score_certainty.py [--repeat 3] [--against main]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import HERE, OUT, _tree_of, cli, measure, tree_env  # noqa: E402


def pilot(path: Path) -> Path:
    """The tests' scored pilot (``tests/records.py``'s ``scored_pilot``)."""
    sys.path.insert(0, str(HERE / "tests"))
    import records

    out: Path = records.scored_pilot(path)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; medians")
    parser.add_argument("--against", metavar="REF", help="also measure on this revision's tree")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    path = str(pilot(OUT / "scored_pilot.jsonl"))
    plan = ["plan", "--from", path, "--score-b", "observed"]
    figures = [
        ("--repeats 2 --certainty 0.8", cli(*plan, "--repeats", "2", "--certainty", "0.8")),
        ("--certainty 0.9 (repeats searched)", cli(*plan, "--certainty", "0.9")),
        ("--repeats 2, no certainty", cli(*plan, "--repeats", "2")),
    ]
    with tempfile.TemporaryDirectory() as folder:
        envs = [tree_env(HERE)]
        if args.against:
            envs.append(tree_env(_tree_of(args.against, Path(folder))))
        names = ["this tree"] + ([args.against] if args.against else [])
        found = {name: measure(command, repeat=args.repeat, envs=envs) for name, command in figures}
    for k, tree in enumerate(names):
        print(f" {tree}:")
        for name, _ in figures:
            fig = found[name][k]
            print(
                f"   {name + ':':<38} {fig['wall']:7.2f} s wall, CPU {fig['cpu']:6.2f} s, "
                f"peak {fig['peak_mb']:4.0f} MB"
            )
    if args.against:
        print(f"this tree / {args.against} (median wall, median CPU, peak):")
        for name, _ in figures:
            now, before = found[name]
            print(
                f"   {name + ':':<38} wall {now['wall'] / before['wall']:.2f}x, "
                f"CPU {now['cpu'] / before['cpu']:.2f}x, "
                f"peak {now['peak_mb'] / before['peak_mb']:.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
