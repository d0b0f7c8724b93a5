"""Check the planner against fresh simulations, with the model given and from pilots.

Part 1, the model given. For each scenario, `plan` chooses a design by
simulating the case model (DesignPowers, seed 0). This script then
simulates the chosen design afresh with `simulate_clustered` (a different
seed and a different drawing code path: case rates drawn from the Beta,
then plain binomial counts, where DesignPowers draws each case's
difference through its law)
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

Part 2, from pilots. For each known case model ("truth"), it draws pilots
of 10 cases x 3 runs of both variants, fits them (`fit_case_model`), and
plans from each (`plan(p_b=..., pilot=...)`, the user asking for the truth's
gain over A, "+0.2", or for the truth's rate of B, 0.9; 80% power with
certainty 80%, 8,000 experiments, as `plan --from` does by default); then
it simulates the recommended design under the truth (20,000 experiments,
the rule the planner simulates) and compares the power the plan stated
(its assurance) with the power delivered. It prints, for each truth and
pooled over the truths, each with its 95% Monte-Carlo interval over the pilots: the mean
stated and the mean delivered power, their mean difference, the share of
recommendations that reach the target, and the mean cases. Beside it the
same pilots planned the way `plan --from` planned before (the pilot's
estimates taken as truth, for the same p_b).

Goal: part 1, every recommended design at or above the target by a fresh
simulation, and the next smaller design not clearly above the search's goal
(a design is taken when its estimate clears the target by 1.96 standard
errors of 8,000 experiments, 0.9 points): its fresh power at most the goal
plus its own Monte-Carlo half-width. Part 2, delivered power within 3 points
of the stated on average, and at least 75% of recommendations reaching the
target. The assurance is an average over what the pilot allows, so for one
truth it can be off either way: high where the truth is among the hardest
models the pilot allows (A near 50%), low where it is among the easiest;
and a spread the pilot cannot tell from 0 is planned as 0 (give `spread`).

Run: python simulations/plan_check.py [--part 1|2] [--pilots 60] [--jobs 2]
(part 1 about 6 minutes on one core; part 2 about 45 minutes of CPU at 60
pilots a truth with the baseline, one truth a job)
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from evalstats.errors import InvalidArgument
from evalstats.planning._power import CaseModel, clustered_power, fit_case_model, plan
from evalstats.planning._simulate import simulate_clustered
from evalstats.stats._intervals import proportion_ci

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

# Part 2: (truth (p_a, p_b, icc, spread), what the user asks for, repeats fixed)
PILOT_TRUTHS = [
    ((0.7, 0.9, 0.3, 0.0), "gain", 1),
    ((0.7, 0.9, 0.3, 0.0), "gain", 3),
    ((0.6, 0.75, 0.2, 0.0), "gain", 3),
    ((0.8, 0.9, 0.5, 0.0), "gain", 3),
    ((0.5, 0.65, 0.1, 0.0), "gain", 3),
    ((0.6, 0.75, 0.2, 0.5), "gain", 3),
    ((0.7, 0.9, 0.3, 0.0), "rate", 3),
]
PILOT_CASES, PILOT_RUNS = 10, 3


def fresh(model: CaseModel, cases: int, repeats: int, seed: int, experiments: int = EXPERIMENTS):
    return simulate_clustered(
        model, cases=cases, repeats=repeats, experiments=experiments, seed=seed
    ).power


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def part_one() -> None:
    print(
        f"Part 1, the model given: target power {pct(TARGET)}; fresh simulations of "
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


def draw_pilot(truth: CaseModel, rng: np.random.Generator):
    """A pilot of PILOT_CASES x PILOT_RUNS of both variants drawn from ``truth``."""
    qa, qb = truth.draw(rng, (PILOT_CASES,))
    ya, yb = rng.binomial(PILOT_RUNS, qa), rng.binomial(PILOT_RUNS, qb)

    def outcomes(k):
        return {f"c{i}": [True] * int(x) + [False] * (PILOT_RUNS - int(x)) for i, x in enumerate(k)}

    return outcomes(ya), outcomes(yb)


def pilot_trials(
    truth: tuple[float, float, float, float],
    asked: str,
    repeats: int,
    *,
    pilots: int,
    seed: int,
    experiments: int = 8000,
    check: int = EXPERIMENTS,
    baseline: bool = True,
) -> dict[str, np.ndarray]:
    """Plan from ``pilots`` pilots drawn from ``truth`` and measure what each delivers.

    ``asked`` is what the user gives as p_b: ``"gain"`` (the truth's gain, as
    "+0.2") or ``"rate"`` (the truth's p_b). Returns per-pilot arrays: the
    stated power (assurance), the delivered power (``check`` fresh
    experiments of the truth at the recommended design), the cases, and the
    same for the plan that takes the pilot's estimates as truth
    (``baseline``). A pilot whose plan is refused (for example, a gain it
    leaves no room for) counts in ``refused``.
    """
    model = CaseModel(*truth)
    p_b = f"+{truth[1] - truth[0]:.10g}" if asked == "gain" else truth[1]
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {k: [] for k in ("stated", "delivered", "cases", "refused")}
    for k in ("point_stated", "point_delivered", "point_cases"):
        out[k] = []
    for i in range(pilots):
        a, b = draw_pilot(model, rng)
        fitted = fit_case_model(a, b)
        try:
            p = plan(p_b=p_b, pilot=fitted, repeats=repeats, experiments=experiments, seed=seed + i)
        except InvalidArgument:  # a refusal is a result here
            out["refused"].append(1.0)
            continue
        out["refused"].append(0.0)
        got = fresh(model, p.cases, p.repeats, 10_000 + seed + i, check)
        out["stated"].append(p.power)
        out["delivered"].append(float(got.estimate))
        out["cases"].append(p.cases)
        if baseline:
            point_b = fitted.p_a + (truth[1] - truth[0]) if asked == "gain" else truth[1]
            point = CaseModel(fitted.p_a, min(point_b, 1.0), fitted.icc, fitted.spread)
            try:
                q = plan(model=point, repeats=repeats, experiments=experiments, seed=seed + i)
            except InvalidArgument:  # B no better than A by the pilot's A
                continue
            if q.cases is None or q.repeats is None:
                continue
            got_q = fresh(model, q.cases, q.repeats, 20_000 + seed + i, check)
            out["point_stated"].append(q.power)
            out["point_delivered"].append(float(got_q.estimate))
            out["point_cases"].append(q.cases)
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def mean_ci(x: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% normal interval over the pilots."""
    m = float(x.mean())
    half = 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else math.nan
    return m, m - half, m + half


def summary(stated: np.ndarray, delivered: np.ndarray, cases: np.ndarray) -> str:
    s, d, g = mean_ci(stated), mean_ci(delivered), mean_ci(delivered - stated)
    reach = proportion_ci(int((delivered >= TARGET).sum()), delivered.size, method="wilson")
    c = mean_ci(cases)
    return (
        f"stated {pct(s[0])} ({pct(s[1])} to {pct(s[2])}), delivered {pct(d[0])} "
        f"({pct(d[1])} to {pct(d[2])}), delivered - stated {100 * g[0]:+.1f} points "
        f"({100 * g[1]:+.1f} to {100 * g[2]:+.1f}); reach {pct(TARGET)}: "
        f"{pct(float(reach.estimate))} ({pct(float(reach.low))} to {pct(float(reach.high))}); "
        f"cases {c[0]:.0f} ({c[1]:.0f} to {c[2]:.0f})"
    )


def _trial(j: int, pilots: int, baseline: bool) -> tuple[dict[str, np.ndarray], float]:
    truth, asked, repeats = PILOT_TRUTHS[j]
    start = time.time()
    r = pilot_trials(truth, asked, repeats, pilots=pilots, seed=1000 * j, baseline=baseline)
    return r, time.time() - start


def part_two(pilots: int, baseline: bool, jobs: int = 1) -> None:
    print(
        f"\nPart 2, from pilots of {PILOT_CASES} cases x {PILOT_RUNS} runs: target power "
        f"{pct(TARGET)}, certainty 80% (the default); {pilots} pilots a truth, each "
        f"recommended design simulated under the truth ({EXPERIMENTS} experiments); 95% "
        "Monte-Carlo intervals over the pilots",
        flush=True,
    )
    from concurrent.futures import ProcessPoolExecutor, as_completed

    keys = ("stated", "delivered", "cases")
    results: dict[int, dict[str, np.ndarray]] = {}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_trial, j, pilots, baseline): j for j in range(len(PILOT_TRUTHS))}
        for future in as_completed(futures):  # each truth printed when done
            j = futures[future]
            results[j], seconds = future.result()
            r = results[j]
            (p_a, p_b, icc, spread), asked, repeats = PILOT_TRUTHS[j]
            gain = f"+{p_b - p_a:.2g}" if asked == "gain" else f"{p_b:g}"
            lines = [
                f"truth {p_a:g} -> {p_b:g}, icc {icc:g}, spread {spread:g}; p_b={gain}, "
                f"repeats={repeats} ({seconds:.0f} s)",
                f"  from the pilot's posterior: {summary(r['stated'], r['delivered'], r['cases'])}",
            ]
            if r["refused"].sum():
                lines.append(
                    f"  refused (no room for the gain asked): {int(r['refused'].sum())} of {pilots}"
                )
            if baseline and r["point_stated"].size > 1:
                lines.append(
                    "  estimates taken as truth:   "
                    + summary(r["point_stated"], r["point_delivered"], r["point_cases"])
                )
            print("\n".join(lines), flush=True)
    name = f"all {len(PILOT_TRUTHS)} truths"
    joined = {k: np.concatenate([results[j][k] for j in sorted(results)]) for k in keys}
    print(f"{name}, from the pilot's posterior: " + summary(*(joined[k] for k in keys)))
    if baseline:
        point = [np.concatenate([results[j][f"point_{k}"] for j in sorted(results)]) for k in keys]
        print(f"{name}, estimates taken as truth: " + summary(*point))
    gap = mean_ci(joined["delivered"] - joined["stated"])
    reach = float(np.mean(joined["delivered"] >= TARGET))
    print(
        f"goal: delivered within 3 points of stated on average ({100 * gap[0]:+.1f}), "
        f"at least 75% reaching {pct(TARGET)} ({pct(reach)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("1", "2", "all"), default="all")
    parser.add_argument("--pilots", type=int, default=60)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--jobs", type=int, default=1, help="processes for part 2 (1)")
    args = parser.parse_args()
    if args.part in ("1", "all"):
        part_one()
    if args.part in ("2", "all"):
        part_two(args.pilots, not args.no_baseline, args.jobs)


if __name__ == "__main__":
    main()
