"""Speed of ``evalstats plan``, against baselines measured in the same run.

Prints the wall time (best of ``--repeat``) of the README's plan commands
run as a person runs them (a fresh ``evalstats`` process each time):

* ``evalstats plan --pa 0.7 --pb 0.9 --icc 0.3 --cases 4`` (the README's
  first example: a ceiling, four cases-needed searches and the minimum
  number of cases, every design simulated on 8,000 experiments);
* ``evalstats plan --pa 0.7 --pb 0.9 --icc 0.3 --cases 40`` (the second:
  a reachable design);
* ``evalstats plan --pa 0.9 --pb 0.97 --icc 0.3 --cases 20`` (the third);

each against the same command with ``--approximate`` (the normal
approximation alone, which includes starting Python and importing scipy),
and the simulated designs each evaluated. The goal is under 5 s on 2 cores
for the README examples. Then the planner's judging of the betting rule
(:func:`evalstats.stats._intervals.betting_signs`, one evaluation of the betting
capital per side) against computing the interval's limits by bisection and
comparing them (:func:`evalstats.stats._intervals.clustered_limits`), on the same
8,000 simulated experiments of 40 cases. Never asserts a time.

Measured (2 shared cores, load about 1; best of 3): 1.72 s, 1.22 s and
3.20 s for the three examples (0.78-0.83 s for the approximation alone);
the betting rule's decisions 14x faster than its bisected limits. The
planner counts only "B better" (power and false-positive rate), so it
evaluates the betting capital on that side alone (the third example took
4.75 s when both sides were evaluated).

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
COMMAND = shutil.which("evalstats", path=str(Path(sys.executable).parent)) or "evalstats"

EXAMPLES = [
    ["--pa", "0.7", "--pb", "0.9", "--icc", "0.3", "--cases", "4"],
    ["--pa", "0.7", "--pb", "0.9", "--icc", "0.3", "--cases", "40"],
    ["--pa", "0.9", "--pb", "0.97", "--icc", "0.3", "--cases", "20"],
]


def wall(args: list[str], repeat: int) -> tuple[float, float]:
    """Best wall time and best CPU time (user + system) of the command.

    The CPU time is what the command itself used, whatever else the machine
    was running; on an otherwise idle machine the wall time is about that.
    """
    import resource

    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [COMMAND, "plan", *args],
            check=True,
            capture_output=True,
        )
        best = min(best, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu = min(best_cpu, cpu)
    return best, best_cpu


def evaluations(args: list[str]) -> int:
    """How many designs the planner simulated for ``args`` (in this process)."""
    from evalstats.planning._power import _Powers, plan

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


def betting_rule(repeat: int) -> None:
    """Time the betting rule's decisions: fast path against the bisected limits."""
    import numpy as np

    from evalstats.stats._casemodel import CaseModel
    from evalstats.stats._intervals import betting_signs, clustered_limits

    rng = np.random.default_rng(0)
    qa, qb = CaseModel(0.7, 0.9, 0.3).draw(rng, (8000, 40))
    d = (rng.binomial(3, qb) - rng.binomial(3, qa)) / 3

    def limits() -> np.ndarray:
        low, high = clustered_limits(d, 0.95, difference=True, method="betting")
        return np.where(low > 1e-12, 1, np.where(high < -1e-12, -1, 0))

    def signs() -> np.ndarray:
        return betting_signs(d, 0.95, threshold=1e-12)

    best = {}
    for name, f in (("limits", limits), ("signs", signs)):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - start)
        best[name] = (min(times), out)
    same = bool(np.array_equal(best["limits"][1], best["signs"][1]))
    print("betting rule on 8,000 experiments x 40 cases (3 runs, 0.7 -> 0.9, icc 0.3)")
    print(
        f"  decisions without limits {best['signs'][0] * 1000:.1f} ms; bisected limits "
        f"{best['limits'][0] * 1000:.1f} ms; ratio {best['limits'][0] / best['signs'][0]:.0f}x "
        f"faster; same decisions: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for example in EXAMPLES:
        simulated, simulated_cpu = wall(example, args.repeat)
        approximate, approximate_cpu = wall([*example, "--approximate"], args.repeat)
        print(f"evalstats plan {' '.join(example)}")
        print(
            f"  simulated search {simulated:.2f} s wall, {simulated_cpu:.2f} s CPU "
            f"({evaluations(example)} designs simulated); approximation alone "
            f"{approximate:.2f} s wall, {approximate_cpu:.2f} s CPU; ratio "
            f"{simulated / approximate:.1f}x wall, {simulated_cpu / approximate_cpu:.1f}x CPU "
            "(goal: under 5 s)"
        )
    betting_rule(args.repeat)


if __name__ == "__main__":
    main()
