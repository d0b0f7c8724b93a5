"""How long do the order-free betting interval and the verdicts on it take?

The interval about cases like these averages the betting capital over the
orders of :func:`evalstats.stats._intervals._orders` (8 for 4 cases or more)
instead of betting once in the listing order. This script measures what
that costs:

1. Fresh processes (best wall time and best CPU time, user + system, of
   ``--repeat`` runs after a warm-up), on results files of 40 and 300 cases
   (2 variants x 3 runs, written to ``benchmarks/out/`` and reused):
   ``report FILE``, ``compare FILE --a A --b B --about cases-like-these`` and ``gate FILE
   --variant B --min-pass 0.5 --on lower-bound --about cases-like-these``; and the
   README's slowest plan, ``plan --pa 0.9 --pb 0.97 --icc 0.3 --cases 20``
   (the planner simulates the clustered comparison's own rule on 8,000
   experiments of each design it tries). Run it with
   the interpreter of another checkout (``--python``; its package imported
   from ``--source``) to time the code before a change on the same files.
2. In one process: ``clustered_paired_diff_ci`` at 40 and 300 cases
   (bisected limits) and :func:`evalstats.stats._intervals.betting_signs` on
   8,000 rows of 40 cases (the planner's fast path), averaged over the orders
   against betting once in the listing order (``in_listing_order``), with
   their ratio.

Never asserts a time.

Measured on the 2-core development machine, shared and loaded (load
average 5-8), best of 5 fresh processes, in each of two runs of this
script alternating the code before the change (betting in listing order)
and after; CPU seconds, which the load disturbs less than wall time:

=================  ============  ============
verb               before        after
=================  ============  ============
report, 40 cases   0.156, 0.173  0.174, 0.187
report, 300        0.203, 0.193  0.231, 0.239
compare, 40        1.038, 1.093  1.113, 1.166
compare, 300       1.296, 1.328  1.280, 1.319
gate, 40           0.255, 0.266  0.280, 0.278
gate, 300          0.270, 0.269  0.321, 0.311
plan (0.9 -> 0.97) 3.39, 3.37    6.50, 6.36
=================  ============  ============

So report and gate take 10-20% more CPU (the report's pure-Python
interval averages 8 capitals), compare no more (most of its second is
importing scipy.stats for the McNemar detectable difference), and the
planner 1.9x: it judges 8,000 simulated experiments of every design with
the betting rule, now 8 capitals each (for the rows whose first capital
does not already decide). In one process, the bisected limits of one
interval cost what betting in listing order did (40 cases: 2.9 and 7.6 ms
against 3.0 and 7.6; 300 cases: 15.2 and 10.9 ms against 16.5 and 18.9:
the 43 steps' calls dominate), and ``betting_signs`` on 8,000 rows of 40
cases 42-71 ms against 3-4 ms for one order.

Usage::

    python benchmarks/order_free.py [--repeat 5] [--python PYTHON --source DIR]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out"


def results_file(cases: int, runs: int = 3) -> Path:
    """A results file of ``cases`` cases, variants A and B paired, written with plain json."""
    path = OUT / f"order_free_{cases}.jsonl"
    if path.exists():
        return path
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(cases)
    names = [f"case{i:03d}" for i in range(cases)]
    rates = rng.beta(2.0, 0.8, size=cases)
    schedule = []
    for r in range(runs):
        for i, case in enumerate(names):
            order = ("A", "B") if (i + r) % 2 == 0 else ("B", "A")
            for position, v in enumerate(order):
                schedule.append([case, r, r * cases + i, position, v])
    manifest = {
        "type": "manifest",
        "format": 1,
        "counting_method": "1",
        "suite": {"name": "bench", "version": 1, "path": "cases/bench.json", "sha256": "0" * 64},
        "cases": [{"id": c, "prompt": f"prompt of {c}", "checks": []} for c in names],
        "include_holdout": False,
        "variants": [
            {"name": v, "task": {"kind": "python", "name": f"task_{v}"}, "transform": {}}
            for v in ("A", "B")
        ],
        "runs": runs,
        "schedule": schedule,
        "seed": 0,
        "machine": "fingerprint-1",
    }
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest) + "\n")
        for v, shift in (("A", 0.0), ("B", 0.03)):
            for case, rate in zip(names, rates, strict=True):
                for r in range(runs):
                    ok = bool(rng.random() < min(1.0, rate + shift))
                    check = {"check": "x", "axis": None, "status": "passed" if ok else "failed"}
                    check["reason"] = "" if ok else "missed"
                    sample = {"type": "sample", "case": case, "variant": v, "repeat": r}
                    sample |= {"status": "completed", "checks": [check], "latency_s": 0.1}
                    f.write(json.dumps(sample) + "\n")
        f.write(json.dumps({"type": "summary", "status": "finished"}) + "\n")
    return path


def timed(
    command: list[str], repeat: int, env: dict[str, str], cwd: str | None
) -> tuple[float, float]:
    """Best wall and best CPU time of ``command`` in fresh processes, after a warm-up."""
    subprocess.run(command, capture_output=True, check=False, env=env, cwd=cwd)
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False, env=env, cwd=cwd)
        best = min(best, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu = min(best_cpu, cpu)
    return best, best_cpu


def verbs(python: str, source: str | None, repeat: int) -> None:
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = source
    for cases in (40, 300):
        path = str(results_file(cases))
        for name, args in (
            ("report", ["report", path]),
            ("compare", ["compare", path, "--a", "A", "--b", "B", "--about", "cases-like-these"]),
            (
                "gate",
                ["gate", path, "--variant", "B", "--min-pass", "0.5", "--on", "lower-bound"]
                + ["--about", "cases-like-these"],
            ),
        ):
            # run from the source folder: python -m puts the working folder first on the path
            wall, cpu = timed([python, "-m", "evalstats", *args], repeat, env, source)
            print(f"  {name:<8} {cases:3d} cases: wall {wall:.3f} s, cpu {cpu:.3f} s", flush=True)
    plan = ["plan", "--pa", "0.9", "--pb", "0.97", "--icc", "0.3", "--cases", "20"]
    wall, cpu = timed([python, "-m", "evalstats", *plan], max(1, repeat // 2), env, source)
    print(f"  {' '.join(plan)}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)


def best_of(f, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        out = min(out, time.perf_counter() - start)
    return out


def kernels(repeat: int) -> None:
    from evalstats.stats._intervals import (
        _BISECTIONS,
        _rejected_at,
        betting_limits,
        betting_signs,
        clustered_paired_diff_ci,
    )

    rng = np.random.default_rng(1)
    for cases in (40, 300):
        a = (rng.random((cases, 3)) < 0.7).ravel()
        b = (rng.random((cases, 3)) < 0.75).ravel()
        groups = np.repeat(np.arange(cases), 3)
        free = best_of(functools.partial(clustered_paired_diff_ci, a, b, groups), repeat)
        d = (b.astype(float) - a).reshape(cases, 3).mean(axis=1)
        unit = (d + 1.0) / 2.0
        listed = best_of(
            functools.partial(betting_limits, unit, 0.95, in_listing_order=True), repeat
        )
        averaged = best_of(functools.partial(betting_limits, unit, 0.95), repeat)
        print(
            f"  clustered_paired_diff_ci, {cases} cases: {1e3 * free:.1f} ms; its betting "
            f"limits {1e3 * averaged:.1f} ms against {1e3 * listed:.1f} ms in listing order "
            f"({averaged / listed:.1f}x)"
        )
    d = (rng.binomial(3, 0.8, (8000, 40)) - rng.binomial(3, 0.7, (8000, 40))) / 3
    averaged = best_of(lambda: betting_signs(d, 0.95, threshold=1e-12, only_above=True), repeat)
    unit, keep = (d + 1.0) / 2.0, d.mean(axis=1) > 1e-12
    half = 2.0 ** (_BISECTIONS - 1)  # the grid point betting_signs tests at threshold 1e-12
    point = (half + math.floor(1e-12 * half) + 1.0) / (2.0 * half)
    listed = best_of(lambda: _rejected_at(unit, 0.025, point, keep, in_listing_order=True), repeat)
    print(
        f"  betting_signs, 8,000 rows of 40 cases: {1e3 * averaged:.0f} ms against "
        f"{1e3 * listed:.0f} ms in listing order ({averaged / listed:.1f}x)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the interpreter to time")
    parser.add_argument("--source", default=None, help="import evalstats from this folder")
    args = parser.parse_args(argv)
    print("1. fresh processes (best of runs after a warm-up)")
    verbs(args.python, args.source, args.repeat)
    if args.source is None:
        print("2. in one process (best of runs)")
        kernels(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
