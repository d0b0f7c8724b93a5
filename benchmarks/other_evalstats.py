"""How fast is ``compare`` on a CSV table, against the other package named evalstats?

The other package is the unrelated ``evalstats`` on PyPI (0.3.3, "Statistically
sane analysis methods for comparing AI model and prompt performance"). Its
import name is ours too, so it lives in an interpreter of its own, given with
``--other-python PATH``; without it, or when that interpreter cannot import
that package (its distribution is named ``evalstats``, ours
``evalstats-honest``), its figure is skipped with a message.

The table is the one of benchmarks/tables.py (``case,variant,repeat,passed``,
benchmarks/shapes.py; two variants ``old`` and ``new``, 10,000 cases, a few
empty cells for unmeasured samples) at 100,000 rows (5 repeats of each case
and variant) and, with ``--huge``, 1,000,000 (50 repeats). Each figure is from
fresh processes (median wall, median CPU time and peak RSS of ``--repeat`` runs
after a warm-up; benchmarks/report.py's measurement), import time included:

* ours: ``evalstats compare TABLE --a old --b new``;
* theirs: a process of the other interpreter that reads the same table with
  ``pandas.read_csv``, drops the rows whose ``passed`` cell is empty (an
  unmeasured sample, which ours leaves out too), and compares the two variants
  as its README shows: ``load_from(frame, col_map=...)`` with ``case`` as its
  item, ``variant`` as its prompt and ``passed`` as its score (``repeat`` it
  takes as its run column by name), then ``compare(data, factors="prompt")``
  and ``result.summary()``, all with its defaults (``method="auto"``,
  ``n_bootstrap=10,000``, seed 37, alpha 0.05). It takes per-sample rows, one
  a (case, variant, repeat), not per-case means.

What it computes (``evalstats.compare`` -> ``core.router.analyze`` ->
``core.paired.all_pairwise`` -> ``pairwise_differences``): it pivots the rows
into a (variant, case, run) array, fills a missing run of a case with the mean
of that case's other runs (its ``from_dataframe`` repair), and takes each
case's mean over its runs. The filled means make the scores no longer 0/1, so
its automatic choice reads them as ordinal ("Likert") data and gives a paired
normal-inverse-gamma (NIG) interval on the mean of the per-case differences,
with a Wilcoxon signed-rank p-value; on a table without empty cells it would
give its binary choice, a shrunk Bonett-Price interval, at about the same
cost. At 1,000,000 rows (50 runs a case) the means no longer look discrete, and
it gives a paired logit-t interval instead. Neither resamples: its default of
10,000 bootstrap resamples goes unused on this path. On the 100,000-row table
it finds new - old = +1.55 points (95% +1.11 to +1.99), as ours finds +2% (+1%
to +2%); ours also gives a clustered interval about cases like these and every
case's own difference and interval, which the other package's report has not.

Measured on the 2-core development machine, shared with other work, at a load
average of 3.1-4.0 (``uptime`` 3.06 at the start of the first run, 3.81 at the
end of the second), the tree of main before the faster table reading; medians
of 3 runs at 100,000 rows, one run at 1,000,000, in each of two runs of this
script (``--repeat 3 --huge``):

==========================  ==============  ==============  ===========  ==========  ==========
figure                      CPU             wall            peak         ours /      ours /
                                                                         theirs,     theirs,
                                                                         CPU         wall
==========================  ==============  ==============  ===========  ==========  ==========
100,000 rows (2.0 MB)
theirs (load_from+compare)  2.049, 1.964 s  3.040, 2.959 s  171 MB
ours (compare)              1.782, 1.749 s  2.646, 2.588 s  132 MB       0.87, 0.89  0.87, 0.87
1,000,000 rows (20.8 MB)
theirs (load_from+compare)  6.047, 5.066 s  9.170, 7.658 s  511 MB
ours (compare)              6.782, 6.667 s  9.989, 9.142 s  749, 745 MB  1.12, 1.32  1.09, 1.19
==========================  ==============  ==============  ===========  ==========  ==========

So at 100,000 rows ours takes less CPU than theirs (0.87-0.89x); at 1,000,000
rows more (1.12-1.32x; a single run each, and theirs varied by 20% between the
two). Of theirs' CPU at 100,000 rows about 1.3 s is its imports (``python -I -c
"import pandas, evalstats"`` in its interpreter: 1.23-1.33 s, pandas alone
0.40 s) and about 0.75 s the reading and the comparison: those alone take
about 0.4x the CPU of ours' whole process. Where ours goes is in
benchmarks/tables.py's docstring (the table's reading and the per-case
intervals).

Then the table became a run of checked columns counted with numpy (see
benchmarks/tables.py). One run of this script (``--repeat 3 --huge``) at a
load average of 2.3-2.7:

==========================  =======  =======  ======  ==========  ==========
figure                      CPU      wall     peak    ours /      ours /
                                                      theirs,     theirs,
                                                      CPU         wall
==========================  =======  =======  ======  ==========  ==========
100,000 rows (2.0 MB)
theirs (load_from+compare)  1.671 s  1.721 s  169 MB
ours (compare)              0.981 s  0.988 s  86 MB   0.59        0.57
1,000,000 rows (20.8 MB)
theirs (load_from+compare)  4.726 s  4.761 s  512 MB
ours (compare)              1.668 s  1.701 s  374 MB  0.35        0.36
==========================  =======  =======  ======  ==========  ==========

Ours now takes less CPU than theirs at both sizes, imports included on both
sides; at 1,000,000 rows about a third of it.

The theirs figure also counts the start of a bare interpreter (``-I -S``, at most
0.01 s of CPU), which replaces itself with the other one (``os.execve``, same process)
so that benchmarks/report.py's measurement can time it.

Usage::

    python benchmarks/other_evalstats.py --other-python PATH [--repeat 3] [--huge]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import OUT, cli, one, show  # noqa: E402
from tables import tables  # noqa: E402

#: Replaces the measured process by the other interpreter, without our tree on
#: its path (benchmarks/report.py's children get it through PYTHONPATH).
_EXEC = """
import os, sys
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
os.execve(sys.argv[1], sys.argv[1:], env)
"""

#: Whether the other interpreter has the other package: its version, or an error.
_PROBE = """
import importlib.metadata
import evalstats, pandas
assert callable(evalstats.load_from) and callable(evalstats.compare)
print(importlib.metadata.version("evalstats"))
"""

#: The other package's comparison of old and new, as its README shows it.
_THEIRS = """
import sys
import pandas as pd
import evalstats as es

frame = pd.read_csv(sys.argv[1]).dropna(subset=["passed"])
data = es.load_from(frame, col_map={"case": "item", "variant": "prompt", "passed": "score"})
result = es.compare(data, factors="prompt")
result.summary()
pair = result.to_dict()["pairwise"][0]
methods = result.methods()
print(
    f"{pair['b']} - {pair['a']}: {-pair['diff']:+.4f} "
    f"({-pair['ci_high']:+.4f} to {-pair['ci_low']:+.4f}), p {pair['p_value']:.3g}; "
    f"interval {methods['pairwise_ci']['name']}, p-value {methods['p_values']['test']['name']}, "
    f"data read as {methods['data_kind']['name']}, "
    f"n_bootstrap {methods['resampling']['n_bootstrap']}, seed {methods['resampling']['rng_seed']}"
)
"""


def _other_version(python: str) -> str | None:
    """The other package's version in ``python``, or None (with a message)."""
    try:
        done = subprocess.run(
            [python, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"the other interpreter cannot be run ({error}): its figures are skipped")
        return None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"the other interpreter cannot import the other evalstats ({last}): skipped")
        return None
    return done.stdout.strip()


def _theirs(python: str, path: Path) -> list[str]:
    """The argv, after our interpreter, of one measured run of the other package."""
    return ["-I", "-S", "-c", _EXEC, python, "-I", "-W", "ignore", "-c", _THEIRS, str(path)]


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--other-python", metavar="PATH", help="an interpreter with the other evalstats (PyPI)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; medians")
    parser.add_argument("--huge", action="store_true", help="also 1,000,000 rows")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    other = None
    if args.other_python is None:
        print("no --other-python: the other evalstats' figures are skipped")
    else:
        version = _other_version(args.other_python)
        if version is not None:
            other = args.other_python
            print(f"the other evalstats {version}, run by {other}")
    print(f"load average {_load()}")
    for path, reps in tables(args.huge, args.repeat):
        theirs = None
        if other is not None:
            said = subprocess.run(
                [other, "-I", "-W", "ignore", "-c", _THEIRS, str(path)],
                capture_output=True,
                text=True,
                check=True,
                cwd=OUT,
            ).stdout.strip()
            print(f"   theirs finds {said.splitlines()[-1]}")
            theirs = one(_theirs(other, path), repeat=reps)
            show("theirs (load_from+compare)", theirs, None)
        ours = one(cli("compare", str(path), "--a", "old", "--b", "new"), repeat=reps)
        show("ours (compare)", ours, None)
        if theirs is not None:
            print(
                f"   {'ours / theirs:':<27} CPU {ours['cpu'] / theirs['cpu']:.2f}x, "
                f"wall {ours['wall'] / theirs['wall']:.2f}x, "
                f"peak {ours['peak_mb'] / theirs['peak_mb']:.2f}x"
            )
    print(f"load average {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
