"""Check the planner against fresh simulations of its own case model.

For each scenario, `plan` chooses a design by
simulating the case model (DesignPowers, seed 0). This script then
simulates the chosen design afresh with `simulate_clustered` (a different
seed and a different drawing code path: plain binomial counts, no nesting)
on 20,000 experiments and prints:

* the fresh simulated power of the recommended design with its 95%
  Monte-Carlo (Wilson) interval, and its distance from the target: a
  recommended design must reach the target by its own simulation;
* the fresh simulated power of the next smaller design (one repeat or one
  case fewer), which should fall short of the target or lie within the
  Monte-Carlo margin the search keeps above it;
* for a ceiling (too few cases for any number of repeats), the planner's
  ceiling against a fresh simulation with 5,000 repeats per case;
* the normal approximation beside each.

Goal: every recommended design at or above the target by a fresh
simulation, and the next smaller design not clearly above the search's goal
(a design is taken when its estimate clears the target by 1.96 standard
errors of 8,000 experiments, 0.9 points): its fresh power at most the goal
plus its own Monte-Carlo half-width.

Run: python simulations/plan_check.py  (about 10 minutes on one core)
"""

from __future__ import annotations

import math

from evalstats.planning._power import CaseModel, clustered_power, plan
from evalstats.planning._simulate import simulate_clustered

EXPERIMENTS = 20_000
TARGET = 0.8

# (p_a, p_b, icc, spread, cases, repeats): what the user fixes
SCENARIOS = [
    (0.7, 0.9, 0.3, 0.0, 4, None),
    (0.7, 0.9, 0.3, 0.0, 6, None),
    (0.7, 0.9, 0.3, 0.0, 8, None),
    (0.7, 0.9, 0.3, 0.0, 10, None),
    (0.7, 0.9, 0.3, 0.0, 12, None),
    (0.7, 0.9, 0.3, 0.0, 20, None),
    (0.7, 0.9, 0.3, 0.0, None, None),
    (0.7, 0.9, 0.3, 0.0, None, 3),
    (0.9, 0.97, 0.3, 0.0, 20, None),
    (0.9, 0.97, 0.3, 0.0, 40, None),
    (0.6, 0.75, 0.2, 0.5, 30, None),
    (0.5, 0.6, 0.1, 0.0, None, 5),
    (0.5, 0.6, 0.1, 0.0, None, None),
]


def fresh(model: CaseModel, cases: int, repeats: int, seed: int, experiments: int = EXPERIMENTS):
    return simulate_clustered(
        model, cases=cases, repeats=repeats, experiments=experiments, seed=seed
    ).power


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def part_one() -> None:
    print(
        f"The model given: target power {pct(TARGET)}; fresh simulations of "
        f"{EXPERIMENTS} experiments, 95% Monte-Carlo intervals"
    )
    worst = -math.inf  # the next smaller design's fresh power less the goal and its MC error
    goal = TARGET + 1.959964 * math.sqrt(TARGET * (1 - TARGET) / 8000)  # the search's _goal
    lowest = math.inf
    for i, (p_a, p_b, icc, spread, cases, repeats) in enumerate(SCENARIOS):
        model = CaseModel(p_a, p_b, icc, spread)
        p = plan(p_a, p_b, icc=icc, spread=spread, cases=cases, repeats=repeats, power=TARGET)
        fixed = [f"{k}={v}" for k, v in (("cases", cases), ("repeats", repeats)) if v]
        head = f"{p_a:g} -> {p_b:g}, icc {icc:g}, spread {spread:g}; fixed: " + (
            ", ".join(fixed) or "nothing"
        )
        if not p.reachable and p.repeats is None:
            many = simulate_clustered(
                model, cases=cases, repeats=5000, experiments=EXPERIMENTS, seed=100 + i
            ).power
            gap = abs(p.ceiling - float(many.estimate))
            print(
                f"{head}\n  ceiling: planner {pct(p.ceiling)}, fresh (5,000 repeats) "
                f"{many.estimate:.3f} ({many.low:.3f} to {many.high:.3f}), gap "
                f"{100 * gap:.1f} points; approximation {pct(p.approximate_ceiling)}"
            )
            for r, c in sorted(p.cases_needed.items()):
                got = fresh(model, c, r, 200 + i * 10 + r)
                below = fresh(model, c - 1, r, 300 + i * 10 + r)
                lowest = min(lowest, float(got.estimate))
                worst = max(worst, float(below.estimate) - goal - (below.high - below.low) / 2)
                print(
                    f"  enough cases {c} x {r}: fresh {got.estimate:.3f} "
                    f"({got.low:.3f} to {got.high:.3f}); {c - 1} x {r}: "
                    f"{below.estimate:.3f}; approximation "
                    f"{pct(float(clustered_power(model, c, r)))}"
                )
            continue
        c, r = p.cases, p.repeats
        got = fresh(model, c, r, 400 + i)
        lowest = min(lowest, float(got.estimate))
        smaller = (c, r - 1) if p.fixed == "cases" else (c - 1, r)
        possible = smaller[0] >= 2 and smaller[1] >= 1
        below = fresh(model, *smaller, 500 + i) if possible else None
        off = float(got.estimate) - TARGET
        mc = (float(got.high) - float(got.low)) / 2
        step = None if below is None else float(got.estimate) - float(below.estimate)
        if below is not None:
            worst = max(worst, float(below.estimate) - goal - (below.high - below.low) / 2)
        print(
            f"{head}\n  plan {c} cases x {r} runs (stated {pct(p.power)}): fresh "
            f"{got.estimate:.3f} ({got.low:.3f} to {got.high:.3f}), {100 * off:+.1f} points "
            f"from the target (MC half-width {100 * mc:.1f}); approximation "
            f"{pct(float(clustered_power(model, c, r)))}"
        )
        if below is not None:
            print(
                f"  one smaller, {smaller[0]} x {smaller[1]}: fresh {below.estimate:.3f} "
                f"({below.low:.3f} to {below.high:.3f}); step {100 * step:.1f} points"
            )
    print(
        f"lowest fresh power of a recommended design: {pct(lowest)} (goal: at least "
        f"{pct(TARGET)}); a next smaller design's fresh power less the search's goal "
        f"({pct(goal)}) and its Monte-Carlo half-width: at most {100 * worst:+.1f} points "
        "(goal: at most 0)"
    )


def main() -> None:
    part_one()


if __name__ == "__main__":
    main()
