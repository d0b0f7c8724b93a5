"""Anytime-valid comparisons: validity under continuous monitoring, and pairs saved.

Validity. With A and B identical, the script looks after every pair up to
2,000 pairs and counts how often the sequential comparison ever says "B
better" (one-sided, nominal at most 2.5% at the 95% level):

* "these cases" on independent pairs (p = 0.7 and p = 0.5);
* "these cases" on 4 cases with icc 0.3 and A = B on every case, and on 4
  cases whose gain from B varies around zero on these very cases (rates A/B
  of 0.6/0.8, 0.8/0.6, 0.7/0.9, 0.9/0.7: the average over these cases is 0);
* "cases like these" for icc 0.1, 0.3, 0.5 and 5, 10, 20, 40 cases (the
  runs per case that make 2,000 pairs), and with B's gain varying by case.

and the same "these cases" lines for the e-process planned for 0.7 -> 0.9
(``planned_for``), which A = B makes a wrong plan. Each line prints the rate
with its 95% Monte Carlo (Wilson) interval.

Coverage. The interval ``compare --sequential`` prints beside its verdict is
a confidence sequence: with a look after every round, the script counts how
often some look's interval misses the true difference (nominal at most 5% at
95%), about both claims, through ``sequential_compare``.

Efficiency, on the shop stand-in (true pass rates 0.7 and 0.9, slips
independent). For the power a fixed design reaches with N pairs (the exact
power of compare's paired score test, ``paired_power``; N = 64 gives 80%), the
sequential design with the smallest
budget whose simulated power is at least as high uses, on average, some number
of pairs; the ratio of that to N is printed at 80% and 90% power, looking
after every pair and after every round of the 4 shop cases. The same for icc
0.3 with the "cases like these" claim, against the fixed clustered t test on
the same numbers of cases (its power simulated with the same case model).
This is done for the default mixture (no planned effect) and for the
e-process planned for the true effect (``planned_for=(0.7, 0.9)``: a Beta prior
of the share of discordant pairs B wins with mean 27/34 and concentration 60).
For reference, the same figures for a test told the true share of discordant
pairs B wins (the likelihood ratio at that share): the limit a mixture, which
must stay valid whatever the effect, is measured against.

Robustness: the design planned for 0.7 -> 0.9, with the budgets that give it
80% and 90% power there, run when the truth is 0.7 -> 0.8 (the plan too
optimistic) or 0.7 -> 0.95 (too pessimistic), and with a budget of 400 pairs:
power within the budget and mean pairs, beside the default mixture with the
same budget on the same draws.

Usage::

    python simulations/sequential.py [--experiments 20000] [--coverage-experiments 1000]
        [--seed 0] [--quick]

``--quick`` runs every part with few experiments (a smoke test).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from evalstats.deciding._sequential import SequentialPower, simulate_sequential
from evalstats.demo._shop import SLIP_RATES
from evalstats.planning._power import CaseModel, paired_power
from evalstats.planning._simulate import clustered_decisions
from evalstats.stats._intervals import proportion_ci

P_A = 1.0 - SLIP_RATES[1]
P_B = 1.0 - SLIP_RATES[2]
PLANNED = (P_A, P_B)
PAIRS = 2000


def rate_line(label: str, hits: int, n: int) -> str:
    ci = proportion_ci(hits, n, method="wilson")
    return (
        f"{label:<58} {100 * ci.estimate:6.2f}%  ({100 * ci.low:.2f}% to "
        f"{100 * ci.high:.2f}%)  n={n}"
    )


def validity(experiments: int, cases_experiments: int, seed: int) -> list[tuple[str, float]]:
    """Print the false "B better" rates; return (label, MC upper bound) pairs."""
    print(f"Validity: A = B, a look after every pair, up to {PAIRS} pairs")
    bounds = []

    def run(label: str, **kw: object) -> None:
        n = kw.pop("experiments")
        sim = simulate_sequential(**kw, experiments=n, seed=seed)  # type: ignore[arg-type]
        hits = int(np.sum(sim.verdicts == 1))
        print(rate_line(label, hits, n), flush=True)
        bounds.append((label, float(sim.power.high)))

    for p in (0.7, 0.5):
        run(
            f"these cases, independent pairs, p={p}",
            p_a=p,
            p_b=p,
            runs=PAIRS,
            experiments=experiments,
        )
    run(
        "these cases, 4 cases, icc=0.3",
        p_a=0.7,
        p_b=0.7,
        runs=PAIRS // 4,
        cases=4,
        icc=0.3,
        experiments=experiments,
    )
    hits = varying_gain_these_cases(experiments, seed)
    label = "these cases, 4 cases, gain +-0.2 by case (mean 0)"
    print(rate_line(label, hits, experiments), flush=True)
    bounds.append((label, float(proportion_ci(hits, experiments, method="wilson").high)))
    for p in (0.7, 0.5):
        run(
            f"planned for 0.7->0.9: these cases, independent pairs, p={p}",
            p_a=p,
            p_b=p,
            runs=PAIRS,
            experiments=experiments,
            planned_for=PLANNED,
        )
    run(
        "planned for 0.7->0.9: these cases, 4 cases, icc=0.3",
        p_a=0.7,
        p_b=0.7,
        runs=PAIRS // 4,
        cases=4,
        icc=0.3,
        experiments=experiments,
        planned_for=PLANNED,
    )
    hits = varying_gain_these_cases(experiments, seed, planned_for=PLANNED)
    label = "planned for 0.7->0.9: these cases, 4 cases, gain +-0.2 by case"
    print(rate_line(label, hits, experiments), flush=True)
    bounds.append((label, float(proportion_ci(hits, experiments, method="wilson").high)))
    for icc in (0.1, 0.3, 0.5):
        for cases in (5, 10, 20, 40):
            run(
                f"cases like these, icc={icc}, {cases} cases",
                p_a=0.7,
                p_b=0.7,
                runs=PAIRS // cases,
                cases=cases,
                icc=icc,
                about="cases_like_these",
                experiments=cases_experiments,
            )
    for cases in (10, 40):
        run(
            f"cases like these, icc=0.3, {cases} cases, gain varies (sd 1)",
            p_a=0.7,
            p_b=0.7,
            runs=PAIRS // cases,
            cases=cases,
            icc=0.3,
            spread=1.0,
            about="cases_like_these",
            experiments=cases_experiments,
        )
    return bounds


def coverage(experiments: int, seed: int) -> None:
    """Print how often some look's printed interval misses the true difference.

    Through :func:`sequential_compare`, as ``compare --sequential`` prints it:
    10 cases x 40 runs, a look after every round, pairs independent at the
    rates given (so the difference over these cases and over cases like these
    is p_b - p_a), and 20 cases whose rates vary (icc 0.3, A = B on every case)
    for cases like these. Nominal: at most 5% at 95%, at every look at once.
    """
    from evalstats.deciding._sequential import sequential_compare

    print("\nCoverage: some look's interval misses the truth (nominal at most 5%)")
    rng = np.random.default_rng(seed + 7)
    designs = [
        (0.7, 0.8, 10, 40, 0.0),
        (0.7, 0.9, 10, 40, 0.0),
        (0.5, 0.5, 10, 40, 0.0),
        (0.9, 0.6, 10, 40, 0.0),
        (0.7, 0.7, 20, 20, 0.3),
    ]
    for p_a, p_b, cases, runs, icc in designs:
        model = CaseModel(p_a, p_a, icc) if icc else None
        for about in ("these_cases", "cases_like_these"):
            misses = 0
            for _ in range(experiments):
                if model is None:
                    ra, rb = np.full(cases, p_a), np.full(cases, p_b)
                else:
                    ra, rb = model.draw(rng, (cases,))
                a = {f"c{i}": list(rng.random(runs) < ra[i]) for i in range(cases)}
                b = {f"c{i}": list(rng.random(runs) < rb[i]) for i in range(cases)}
                truth = p_b - p_a if about == "cases_like_these" else float(np.mean(rb - ra))
                c = sequential_compare(a, b, about=about)
                misses += any(not (look.low <= truth <= look.high) for look in c.trajectory)
            label = f"{about.replace('_', ' ')}, {p_a} -> {p_b}, {cases} cases x {runs} runs"
            if icc:
                label += f", icc={icc}"
            print(rate_line(label, misses, experiments), flush=True)


def varying_gain_these_cases(
    experiments: int, seed: int, planned_for: tuple[float, float] | None = None
) -> int:
    """False "B better" verdicts when B gains 0.2 on two cases and loses 0.2 on two."""
    from evalstats.deciding._sequential import _simulate_these, discordant_thresholds, planned_prior

    qa = np.array([0.6, 0.8, 0.7, 0.9])
    qb = np.array([0.8, 0.6, 0.9, 0.7])
    rng = np.random.default_rng(seed + 1)
    prior = None if planned_for is None else planned_prior(*planned_for)
    table = discordant_thresholds(PAIRS, prior=prior)
    hits = 0
    for start in range(0, experiments, 2000):
        n = min(2000, experiments - start)
        u = rng.random((n, PAIRS // 4, 4))
        only_b, only_a = qb * (1 - qa), qa * (1 - qb)
        d = np.where(u < only_b, 1, np.where(u < only_b + only_a, -1, 0)).astype(np.int8)
        hits += int(np.sum(_simulate_these(d, table)[1] == 1))
    return hits


def repeated_fixed_test(experiments: int, seed: int) -> None:
    """The unsafe practice, for contrast: the fixed-n test after every 10 runs of 4 cases
    (40 pairs), 10 looks, stopping at the first "B better": compare's paired score test
    (Tango's, McNemar's statistic at 0), and the exact McNemar test it replaced."""
    from evalstats.stats._binomial import mcnemar_thresholds
    from evalstats.stats._compare import THESE_CASES_INTERVAL
    from evalstats.stats._intervals import _z
    from evalstats.stats._tango import CORRECTIONS, thresholds

    def score_thresholds(disc: np.ndarray, level: float) -> np.ndarray:
        return thresholds(disc, _z(level), CORRECTIONS[THESE_CASES_INTERVAL])

    for name, first_win in (
        ("the paired score test", score_thresholds),
        ("exact McNemar", mcnemar_thresholds),
    ):
        rng = np.random.default_rng(seed + 2)
        every, looks = 40, 10
        hits = 0
        for start in range(0, experiments, 5000):
            n = min(5000, experiments - start)
            u = rng.random((n, every * looks))
            only_b = 0.7 * 0.3  # A = B = 0.7: each side alone passes with 0.21
            wins_b = np.cumsum(u < only_b, axis=1)[:, every - 1 :: every]
            disc = np.cumsum(u < 2 * only_b, axis=1)[:, every - 1 :: every]
            hits += int(np.sum((wins_b >= first_win(disc, 0.95)).any(axis=1)))
        print(
            rate_line(
                f"for contrast: fixed-n {name} after each 40 pairs, 10 looks", hits, experiments
            ),
            flush=True,
        )


def smallest_budget(stopped: np.ndarray, verdicts: np.ndarray, target: float, step: int) -> int:
    """Smallest budget (a multiple of ``step`` pairs) whose simulated power reaches target."""
    decided = np.where(verdicts == 1, stopped, np.iinfo(np.int64).max)
    budgets = np.arange(step, int(stopped.max()) + step, step)
    power = (decided[None, :] <= budgets[:, None]).mean(axis=1)
    reach = np.flatnonzero(power >= target)
    return int(budgets[reach[0]]) if reach.size else -1


def mean_pairs(stopped: np.ndarray, budget: int) -> tuple[float, float]:
    used = np.minimum(stopped, budget)
    return float(used.mean()), 1.959963984540054 * float(used.std(ddof=1)) / math.sqrt(len(used))


def efficiency(experiments: int, seed: int) -> dict[tuple[str, str, float], tuple[float, int]]:
    """Print the ratios; return {(e-process, looks, power): (ratio, budget)}."""
    ratios = {}
    for name, planned in (("default mixture", None), ("planned for 0.7->0.9", PLANNED)):
        print(f"\nEfficiency: shop stand-in, p_a = 0.7, p_b = 0.9 (these cases), {name}")
        sim = simulate_sequential(
            P_A, P_B, 400, experiments=experiments, seed=seed, planned_for=planned
        )
        for key, value in _ratios(sim, experiments).items():
            ratios[(name, *key)] = value
    told_the_truth(experiments, seed)
    return ratios


def _ratios(sim: SequentialPower, experiments: int) -> dict[tuple[str, float], tuple[float, int]]:
    ratios = {}
    for target_power in (0.8, 0.9):
        n = next(n for n in range(1, 1000) if paired_power(P_A, P_B, n) >= target_power)
        reached = paired_power(P_A, P_B, n)
        for step, how in ((1, "every pair"), (4, "every round of 4 cases")):
            # Looking after every round: a crossing inside a round is seen at its end.
            stopped = np.ceil(sim.stopped / step).astype(np.int64) * step
            budget = smallest_budget(stopped, sim.verdicts, reached, step)
            mean, half = mean_pairs(stopped, budget)
            power = proportion_ci(
                int(np.sum((sim.verdicts == 1) & (stopped <= budget))), experiments, method="wilson"
            )
            ratio = mean / n
            ratios[(how, target_power)] = (ratio, budget)
            print(
                f"  fixed score test N={n} pairs (exact power {100 * reached:.1f}%); sequential, "
                f"look after {how}: budget {budget} pairs, power {power}, mean pairs "
                f"{mean:.1f} ({mean - half:.1f} to {mean + half:.1f}); ratio {ratio:.3f} "
                f"({(mean - half) / n:.3f} to {(mean + half) / n:.3f})",
                flush=True,
            )
    return ratios


def robustness(experiments: int, seed: int, budgets: list[int]) -> None:
    """The design planned for 0.7 -> 0.9 when the truth is another effect."""
    print("\nRobustness: planned for 0.7 -> 0.9, the truth differs (these cases, every pair)")
    for p_b in (0.8, 0.95):
        for budget in budgets:
            figures = []
            for name, planned in (("planned", PLANNED), ("default", None)):
                # The same seed: both e-processes judge the same draws.
                sim = simulate_sequential(
                    P_A, p_b, budget, experiments=experiments, seed=seed + 5, planned_for=planned
                )
                m = sim.expected_pairs
                figures.append(
                    f"{name}: power {sim.power}, mean pairs {m.estimate:.1f} ({m.low:.1f} to "
                    f"{m.high:.1f})"
                )
            print(f"  truth 0.7->{p_b:g}, budget {budget} pairs: " + "; ".join(figures), flush=True)


def told_the_truth(experiments: int, seed: int) -> None:
    """The same on the same draws for a test that knows the true share of
    discordant pairs B wins: the likelihood ratio of that share against 1/2,
    stopped at 40. No test that must stay valid at every look without knowing
    the effect can expect to beat it by much, so its ratio shows how far the
    mixture is from the limit."""
    only_b, only_a = P_B * (1 - P_A), P_A * (1 - P_B)
    share = only_b / (only_b + only_a)
    rng = np.random.default_rng(seed)
    u = rng.random((experiments, 400))
    d = np.where(u < only_b, 1, np.where(u < only_b + only_a, -1, 0))
    wins_b, wins_a = np.cumsum(d > 0, axis=1), np.cumsum(d < 0, axis=1)
    up_step, down_step = math.log(2 * share), math.log(2 * (1 - share))
    bound = math.log(40.0)
    up = wins_b * up_step + wins_a * down_step >= bound
    down = wins_a * up_step + wins_b * down_step >= bound
    either = up | down
    hit = either.any(axis=1)
    first = np.argmax(either, axis=1)
    verdicts = np.where(hit, np.where(up[np.arange(experiments), first], 1, -1), 0)
    stopped = np.where(hit, first + 1, 400)
    for target_power in (0.8, 0.9):
        n = next(n for n in range(1, 1000) if paired_power(P_A, P_B, n) >= target_power)
        budget = smallest_budget(stopped, verdicts, paired_power(P_A, P_B, n), 1)
        mean, half = mean_pairs(stopped, budget)
        print(
            f"  told the true share ({share:.3f}), {100 * target_power:.0f}% power: budget "
            f"{budget} pairs, mean pairs {mean:.1f} ({mean - half:.1f} to {mean + half:.1f}); "
            f"ratio {mean / n:.3f} ({(mean - half) / n:.3f} to {(mean + half) / n:.3f})",
            flush=True,
        )


def clustered_efficiency(experiments: int, seed: int) -> None:
    print("\nEfficiency: icc 0.3, cases like these, against the fixed clustered t test")
    rng = np.random.default_rng(seed)
    model = CaseModel(P_A, P_B, 0.3)
    for cases in (20, 40):
        sim = simulate_sequential(
            P_A,
            P_B,
            60,
            cases=cases,
            icc=0.3,
            about="cases_like_these",
            experiments=experiments,
            seed=seed,
        )
        # The fixed design's power at r runs per case, simulated on the same model.
        fixed = {}
        for r in range(1, 61):
            qa, qb = model.draw(rng, (experiments, cases))
            ka, kb = rng.binomial(r, qa), rng.binomial(r, qb)
            fixed[r] = float(np.mean(clustered_decisions(ka, kb, r, level=0.95, rng=rng) == 1))
        for target_power in (0.8, 0.9):
            r = next((r for r in fixed if fixed[r] >= target_power), None)
            if r is None:
                print(
                    f"  {cases} cases: the fixed design does not reach {target_power:.0%} "
                    "within 60 runs per case"
                )
                continue
            n = r * cases
            budget = smallest_budget(sim.stopped, sim.verdicts, fixed[r], cases)
            ceiling = proportion_ci(int(np.sum(sim.verdicts == 1)), experiments, method="wilson")
            if budget < 0:
                print(
                    f"  {cases} cases: fixed t test N={n} pairs ({r} runs/case, power "
                    f"{100 * fixed[r]:.1f}%); the sequential design does not reach that power "
                    f"within 60 runs per case (it reaches {ceiling})"
                )
                continue
            mean, half = mean_pairs(sim.stopped, budget)
            print(
                f"  {cases} cases: fixed t test N={n} pairs ({r} runs/case, power "
                f"{100 * fixed[r]:.1f}%); sequential budget {budget} pairs, mean pairs "
                f"{mean:.1f} ({mean - half:.1f} to {mean + half:.1f}); ratio {mean / n:.3f} "
                f"({(mean - half) / n:.3f} to {(mean + half) / n:.3f})",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=20000)
    parser.add_argument(
        "--cases-experiments",
        type=int,
        default=2000,
        help="experiments per 'cases like these' validity point",
    )
    parser.add_argument(
        "--coverage-experiments",
        type=int,
        default=1000,
        help="experiments per design of the confidence sequences' coverage",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="few experiments")
    args = parser.parse_args(argv)
    if args.quick:
        args.experiments, args.cases_experiments, args.coverage_experiments = 400, 100, 40
    start = time.perf_counter()
    bounds = validity(args.experiments, args.cases_experiments, args.seed)
    worst = max(bounds, key=lambda b: b[1])
    print(f"largest Monte Carlo upper bound: {100 * worst[1]:.2f}% ({worst[0]})")
    coverage(args.coverage_experiments, args.seed)
    repeated_fixed_test(args.experiments, args.seed)
    ratios = efficiency(args.experiments, args.seed)
    budgets = sorted({ratios[("planned for 0.7->0.9", "every pair", p)][1] for p in (0.8, 0.9)})
    robustness(args.experiments, args.seed, [*budgets, 400])
    clustered_efficiency(max(args.cases_experiments, 200), args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
