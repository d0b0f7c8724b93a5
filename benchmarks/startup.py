"""Start-up time of the command: ``evalstats --help`` and a verb's ``--help``.

Every figure is the median wall time of ``python -m evalstats ...`` over
repeated runs, next to a bare ``python -c pass`` measured in the same run. With
``--against REF`` the same commands also run on the tree of that git revision
(extracted into a temporary folder), so the ratio of today's start-up to that
revision's is measured side by side.

Run from the repository root::

    python benchmarks/startup.py --against 86f6591 --repeats 30
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import evalstats": ["-c", "import evalstats"],
    "evalstats --help": ["-m", "evalstats", "--help"],
    "evalstats report --help": ["-m", "evalstats", "report", "--help"],
    "evalstats run --help": ["-m", "evalstats", "run", "--help"],
}


def _time(argv: list[str], tree: Path, repeats: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": ""}
    subprocess.run([sys.executable, *argv], env=env, capture_output=True, check=True)  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, *argv], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _tree_of(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--against", metavar="REF", help="also time the tree of this revision")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        old = _tree_of(args.against, Path(folder)) if args.against else None
        print(f"median of {args.repeats} runs, seconds")
        for name, argv in COMMANDS.items():
            # the two trees alternate command by command, so load changes hit both alike
            now = _time(argv, here, args.repeats)
            line = f"  {name:<26} {now:.4f}"
            if old is not None:
                before = _time(argv, old, args.repeats)
                line += f"   {args.against}: {before:.4f}   ratio {now / before:.2f}"
            print(line)


if __name__ == "__main__":
    main()
