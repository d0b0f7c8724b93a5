"""How fast are CSV tables read, against ``pandas.read_csv`` and a groupby?

A long table of two variants (``case,variant,repeat,passed``, benchmarks/shapes.py)
at 100,000 and (``--huge``) 1,000,000 rows, on 10,000 cases. Each figure is
from fresh processes (median wall, median CPU time and peak RSS of ``--repeat``
runs after a warm-up; benchmarks/report.py's measurement), with its ratio to
the floor measured in the same run: a process that reads the same table with
``pandas.read_csv`` (every cell as text, as the table reader reads it) and
counts the passes of each (case, variant) with a groupby, which is what a
report of the table needs at least. Goal: ``report`` and ``compare`` at most
2x the floor's CPU.

pandas is only the floor here (evalstats reads tables by splitting them or with the csv
module); without pandas the floor is skipped, with a message, and the figures
are printed alone.

Measured on the 2-core development machine at a load average of about 10,
medians of 3 runs at 100,000 rows, one run at 1,000,000 (one run of this
script, ``--repeat 3 --huge``):

==========================  =========  ===========  ======  =============
figure                      CPU        ratio to     peak    before
                                       floor CPU            (same table)
==========================  =========  ===========  ======  =============
100,000 rows
pandas.read_csv + groupby   0.640 s    1            141 MB
report                      1.465 s    2.29x        112 MB  3.02x
compare                     1.862 s    2.91x        131 MB  3.69x
1,000,000 rows
pandas.read_csv + groupby   1.195 s    1            280 MB
report                      7.044 s    5.89x        735 MB  (8.66x)
compare                     7.892 s    6.60x        743 MB  (9.04x)
==========================  =========  ===========  ======  =============

"before": at 100,000 rows the figures of the run before the rows were placed
column by column and the tally read the table's records as built (the first
run of this script, with pandas reading the table and every schedule slot
checked one call at a time, gave 4.00x and 4.63x); in brackets, the first
measurement at 1,000,000 rows, made once the rows were placed column by
column but before the placement used integer keys and the tally converted
the records in chunks. The floor's
own CPU varies by about 10% between runs on this machine. Not yet the 2x
goal. At 100,000 rows, in CPU seconds of one process: the columns 0.10, the
sample records and the manifest built from them about 0.15, the tally 0.40
(the records made into the tally's structs, 8,192 at a time, and counted),
the report's statistics and text about 1.0. At 1,000,000 rows (50 repeats
of each case and variant) reading the table into records takes about 3
and the tally about 3: per row, in Python, growing faster than the floor.

Since then the tally counts the verdicts of each (case, shared list of
checks) once, converting each list once, with the collector paused, and a
report keeps the text of each percentage it formats. Best CPU of 3 fresh
processes each, the tree before and after in the same run (100,000 rows):
report 1.582 s -> 1.466 s, compare 1.795 s -> 1.646 s; the tally alone
0.376 s -> 0.336 s, the report's text alone 0.127 s -> 0.092 s. One run of
this script then gave report 1.560 s (1.94x the floor's CPU) and compare
1.779 s (2.22x), but with a floor of 0.802 s, against 0.559 s (3.03x and
3.32x before these changes) in another run of the same hour: at a load
average of about 10 the floor's CPU varies by 40%, and the ratio with it.
What is left, in CPU seconds at 100,000 rows (profiled): counting each
record (Tally._add) about 0.3, the schedule's slots 0.15, the betting
intervals of the two variants' rates (stats._intervals._log_wealth) 0.3,
building the records 0.15.

Then the table became a run of checked columns (reading._log_table.TableRun):
each distinct cell converted once and every row a numpy code; the tally
counted from the columns, one variant at a time in a grid of cases by
repeats (reading._tally.tally_columns, the very tally the records give); the
sample records and the schedule built only when a view lists samples (the
HTML page); and a CSV text without quotes, carriage returns or ragged lines
split on its separator and new lines, which the csv module would read the
same. One run of this script (``--repeat 3 --huge``) at a load average of
about 1.4, text and ``--json`` byte for byte as before:

==========================  =========  ===========  ======
figure                      CPU        ratio to     peak
                                       floor CPU
==========================  =========  ===========  ======
100,000 rows
pandas.read_csv + groupby   0.715 s    1            140 MB
report                      0.927 s    1.30x        70 MB
compare                     1.064 s    1.49x        85 MB
1,000,000 rows
pandas.read_csv + groupby   1.229 s    1            276 MB
report                      1.760 s    1.43x        375 MB
compare                     1.762 s    1.43x        375 MB
==========================  =========  ===========  ======

The goal of 2x the floor's CPU is met at both sizes (at 1,000,000 rows the
same run of the tree before gave 2.72x; the first measurement, 8.66x). At
1,000,000 rows, in seconds of a profiled process (2.1 s in all): reading and
splitting the text 0.50, converting the columns to codes 0.37, the tally
0.16, the report 0.79 (of it the betting intervals of cases like these 0.33
and printing 10,000 lines a variant 0.23), importing 0.23.

Measured again (``--repeat 3 --huge``, load average about 0.7), after an
interval over many cases worked out its bets by running sums: at 100,000
rows report 0.625 s and compare 0.746 s of CPU against the floor's 0.663
s (0.94x and 1.12x), at 1,000,000 rows 1.449 s and 1.435 s against 1.248
s (1.16x and 1.15x); the same run's benchmarks/other_evalstats.py: our
compare 0.41x the CPU of the other evalstats' on the 100,000-row table.

Usage::

    python benchmarks/tables.py [--repeat 3] [--huge]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import OUT, cli, one, show  # noqa: E402
from shapes import table_file  # noqa: E402

CASES = 10_000

_PANDAS = """
import sys
import pandas as pd
frame = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
passed = frame["passed"].map({"1": 1, "0": 0})
frame.assign(passed=passed).groupby(["case", "variant"])["passed"].agg(["sum", "count"])
"""


def tables(huge: bool, repeat: int) -> Iterator[tuple[Path, int]]:
    """The benchmark's tables, made when missing (100,000 rows, and with ``huge``
    1,000,000), each with the runs to measure it by (one at 1,000,000 rows), said
    as each begins."""
    here = Path(__file__).resolve().parent
    for rows in [100_000] + ([1_000_000] if huge else []):
        subprocess.run(
            [sys.executable, str(here / "shapes.py"), "table", str(rows), str(CASES)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        path = table_file(rows, CASES)
        print(f"{rows:,} rows, {CASES:,} cases ({path.stat().st_size / 1e6:.1f} MB)")
        yield path, repeat if rows < 1_000_000 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; medians")
    parser.add_argument("--huge", action="store_true", help="also 1,000,000 rows")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    has_pandas = importlib.util.find_spec("pandas") is not None
    if not has_pandas:
        print("pandas is not installed: the floor (pandas.read_csv + groupby) is skipped")
    for path, reps in tables(args.huge, args.repeat):
        floor = None
        if has_pandas:
            floor = one(["-c", _PANDAS, str(path)], repeat=reps)
            show("floor (pandas + groupby)", floor, None)
        for name, command in (
            ("report", cli("report", str(path))),
            ("compare", cli("compare", str(path), "--a", "old", "--b", "new")),
        ):
            show(name, one(command, repeat=reps), floor, "2x its CPU" if floor else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
