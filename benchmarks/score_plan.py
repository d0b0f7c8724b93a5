"""How much faster is the score planner's vectorised decision than calling compare_scores?

:func:`evalstats.planning._score_plan.score_decisions` judges many simulated
experiments at once, as ``compare_scores(..., method="auto")`` would judge
each (tests/test_score_plan.py checks that they agree verdict by verdict).
The baseline, measured in the same run on the same experiments, is
``compare_scores`` called once per experiment, which also computes the
per-case sign-flip flags and the detectable difference a plan does not need.
Printed: the time per experiment of each, and their ratio, for a few designs
and both claims; then the time of one whole ``score_plan`` search.

Usage::

    python benchmarks/score_plan.py [--experiments 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalstats.planning._score_plan import ScoreModel, _draw_block, score_decisions, score_plan
from evalstats.stats._score_compare import compare_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiments", type=int, default=200)
    args = parser.parse_args()
    n = args.experiments
    model = ScoreModel(0.6, 0.7, between=0.15, within=0.1)
    print(f"{'design':>14} {'claim':>17} {'vectorised':>12} {'compare_scores':>15} {'ratio':>7}")
    for cases, repeats in ((20, 1), (40, 3), (100, 2)):
        a, b = _draw_block(model, cases, repeats, n, 0, 0, False)
        labels = np.repeat(np.arange(cases), repeats)
        for about in ("these_cases", "cases_like_these"):
            start = time.perf_counter()
            fast = score_decisions(a, b, about=about)
            t_fast = (time.perf_counter() - start) / n
            start = time.perf_counter()
            slow = [
                compare_scores(a[e].ravel(), b[e].ravel(), labels, about=about).verdict
                == "b_better"
                for e in range(n)
            ]
            t_slow = (time.perf_counter() - start) / n
            assert list(fast) == slow
            print(
                f"{cases:>6} x {repeats:<5} {about:>17} {1e3 * t_fast:9.3f} ms "
                f"{1e3 * t_slow:12.3f} ms {t_slow / t_fast:6.0f}x"
            )
    start = time.perf_counter()
    plan = score_plan(model, cases=40, experiments=4000)
    print(
        f"score_plan(cases=40, 4000 experiments a design): {time.perf_counter() - start:.1f} s "
        f"-> {plan.cases} x {plan.repeats}"
    )


if __name__ == "__main__":
    main()
