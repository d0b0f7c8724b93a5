"""Speed of ``evalstats plan``, against baselines measured in the same run.

Prints the wall time (best of ``--repeat``) of the README's plan commands
run as a person runs them (a fresh ``evalstats`` process each time):

* ``evalstats plan --pa 0.7 --pb 0.9 --icc 0.3 --cases 4`` (the README's
  first example: a ceiling, four cases-needed searches and the minimum
  number of cases, every design simulated on 8,000 experiments);
* ``evalstats plan --pa 0.9 --pb 0.97 --icc 0.3 --cases 20`` (the second);

each against the same command with ``--approximate`` (the normal
approximation alone, which includes starting Python and importing scipy),
and the simulated designs the first one evaluated. The goal is under 5 s on
2 cores for the README example. Never asserts a time.

Usage::

    python benchmarks/plan.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

# the console script installed beside this interpreter (as in a virtualenv)
COMMAND = (
    shutil.which("evalstats", path=str(Path(sys.executable).parent)) or "evalstats"
)

EXAMPLES = [
    ["--pa", "0.7", "--pb", "0.9", "--icc", "0.3", "--cases", "4"],
    ["--pa", "0.9", "--pb", "0.97", "--icc", "0.3", "--cases", "20"],
]


def wall(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [COMMAND, "plan", *args],
            check=True,
            capture_output=True,
        )
        best = min(best, time.perf_counter() - start)
    return best


def evaluations(args: list[str]) -> int:
    """How many designs the planner simulated for ``args`` (in this process)."""
    from evalstats.power import _Powers, plan

    count = 0
    original = _Powers.__call__

    def counting(self: _Powers, cases: int, repeats: float) -> float:
        nonlocal count
        if (cases, repeats) not in self._memo:
            count += 1
        return original(self, cases, repeats)

    _Powers.__call__ = counting  # type: ignore[method-assign]
    try:
        opts = dict(zip(args[::2], args[1::2], strict=True))
        plan(
            float(opts["--pa"]),
            float(opts["--pb"]),
            icc=float(opts["--icc"]),
            cases=int(opts["--cases"]),
        )
    finally:
        _Powers.__call__ = original  # type: ignore[method-assign]
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for example in EXAMPLES:
        simulated = wall(example, args.repeat)
        approximate = wall([*example, "--approximate"], args.repeat)
        print(f"evalstats plan {' '.join(example)}")
        print(
            f"  simulated search {simulated:.2f} s ({evaluations(example)} designs simulated); "
            f"approximation alone {approximate:.2f} s; ratio {simulated / approximate:.1f}x "
            f"(goal: under 5 s)"
        )


if __name__ == "__main__":
    main()
