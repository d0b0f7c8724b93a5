"""Speed of power calculations, each against a baseline measured in the same run.

Prints:

* exact power at n = 1,000 trials per variant, per method, against the full
  1001 x 1001 enumeration without tail trimming;
* experiments per second of the vectorised clustered simulator (10,000
  experiments x 20 cases x 10 repeats x 2 variants, power and false positives)
  against a plain Python loop making the same draws on a subset;
* experiments per second of ``simulate_power`` on the shop stand-in with one
  and with two processes.

Never asserts a time.

Usage::

    python benchmarks/power.py [--repeat 5] [--quick]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
import timeit
from functools import partial

import numpy as np


def full_enumeration(p_a: float, p_b: float, n: int, method: str) -> float:
    """Exact power over the whole grid, nothing trimmed: the baseline."""
    from scipy.stats import binom

    from evalstats.stats._compare import decide

    k = np.arange(n + 1)
    d = decide(k[:, None], n, k[None, :], n, method=method)
    return float(binom.pmf(k, n, p_a) @ (d == 1) @ binom.pmf(k, n, p_b))


def loop_clustered(model, cases: int, repeats: int, experiments: int, seed: int) -> int:
    """The clustered simulation in plain Python: one draw per case and run."""
    from scipy.stats import t as t_dist

    rng = random.Random(seed)
    ab = model._beta()
    shift = model.shift()
    crit = float(t_dist.isf(0.025, cases - 1))
    hits = 0
    for _ in range(experiments):
        diffs = []
        for _ in range(cases):
            qa = rng.betavariate(*ab) if ab else model.p_a
            if qa <= 0.0 or qa >= 1.0:
                qb = qa
            else:
                qb = 1.0 / (1.0 + math.exp(-(math.log(qa / (1.0 - qa)) + shift)))
            pa = sum(rng.random() < qa for _ in range(repeats))
            pb = sum(rng.random() < qb for _ in range(repeats))
            diffs.append((pb - pa) / repeats)
        mean = statistics.fmean(diffs)
        se = statistics.stdev(diffs) / math.sqrt(cases)
        hits += mean - crit * se > 1e-12
    return hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing repeats (best of)")
    parser.add_argument("--quick", action="store_true", help="smaller workloads")
    args = parser.parse_args(argv)

    from evalstats.demo._shop import make_assistant
    from evalstats.planning._power import METHODS, CaseModel, power
    from evalstats.planning._simulate import simulate_clustered, simulate_power
    from evalstats.running._run_cases import load_shop_cases

    n = 1000
    power(0.7, 0.75, 10)  # warm the imports
    print(f"exact power at n = {n:,} per variant (p_a = 0.7, p_b = 0.75), best of {args.repeat}:")
    for method in METHODS:
        fast = min(
            timeit.repeat(
                lambda m=method: power(0.7, 0.75, n, method=m), number=1, repeat=args.repeat
            )
        )
        full = min(
            timeit.repeat(
                lambda m=method: full_enumeration(0.7, 0.75, n, m),
                number=1,
                repeat=max(1, args.repeat // 2),
            )
        )
        gap = abs(power(0.7, 0.75, n, method=method) - full_enumeration(0.7, 0.75, n, method))
        print(
            f"  {method:<9} {fast * 1e3:7.1f} ms; full 1001 x 1001 grid {full * 1e3:7.1f} ms "
            f"(x{full / fast:.0f}); difference {gap:.1e}"
        )

    model = CaseModel(0.7, 0.9, 0.3)
    experiments, cases, repeats = (2000 if args.quick else 10_000), 20, 10
    simulate_clustered(model, cases=cases, repeats=repeats, experiments=100)  # warm
    vec = min(
        timeit.repeat(
            lambda: simulate_clustered(
                model, cases=cases, repeats=repeats, experiments=experiments
            ),
            number=1,
            repeat=args.repeat,
        )
    )
    subset = 50 if args.quick else 200
    loop = min(
        timeit.repeat(lambda: loop_clustered(model, cases, repeats, subset, 0), number=1, repeat=1)
    )
    # the vectorised call simulates power and false positives: 2 x experiments
    vec_rate = 2 * experiments / vec
    loop_rate = subset / loop
    print(
        f"clustered simulator, {experiments:,} experiments x {cases} cases x {repeats} repeats "
        f"x 2 variants (power and false positives): {vec:.3f} s, {vec_rate:,.0f} experiments/s"
    )
    print(
        f"  plain Python loop, same draws, {subset} experiments: {loop_rate:,.0f} experiments/s; "
        f"vectorised is x{vec_rate / loop_rate:.0f}"
    )

    cases_list = load_shop_cases()
    exps, runs = (40, 5) if args.quick else (200, 10)
    rates = {}
    for processes in (1, 2):
        t = time.perf_counter()
        simulate_power(
            partial(make_assistant, 1),
            partial(make_assistant, 2),
            cases_list,
            runs_per_case=runs,
            experiments=exps,
            processes=processes,
            seed=0,
        )
        rates[processes] = exps / (time.perf_counter() - t)
    print(
        f"simulate_power on the shop stand-in ({len(cases_list)} cases x {runs} runs, "
        f"{exps} experiments, 3 evals each):"
    )
    print(
        f"  1 process {rates[1]:,.0f} experiments/s; 2 processes {rates[2]:,.0f} experiments/s "
        f"(x{rates[2] / rates[1]:.2f}, including starting the workers)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
