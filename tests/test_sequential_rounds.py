"""plan --sequential: the rounds to a verdict, and with --batch the batches and wall time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalstats.cli import main
from evalstats.deciding._sequential import discordant_thresholds, sequential_plan


def _exact_rounds(p_a: float, p_b: float, budget: int) -> tuple[float, list[float]]:
    """The exact distribution of the pairs run (one case: a round is a pair) by the
    "these cases" design, by dynamic programming over (B's wins, A's wins): each pair is
    won by B alone with probability p_b (1 - p_a), by A alone with p_a (1 - p_b); the run
    stops at the first pair where either count reaches the verdict's threshold for the
    discordant pairs so far. Returns the mean of min(stop, budget) and P(stop = t)."""
    need = discordant_thresholds(budget)
    only_b, only_a = p_b * (1 - p_a), p_a * (1 - p_b)
    same = 1 - only_b - only_a
    alive = {(0, 0): 1.0}
    stop = [0.0] * (budget + 1)
    for t in range(1, budget + 1):
        nxt: dict[tuple[int, int], float] = {}
        for (kb, ka), mass in alive.items():
            for (b, a), p in (((kb + 1, ka), only_b), ((kb, ka + 1), only_a), ((kb, ka), same)):
                if b >= need[b + a] or a >= need[b + a]:
                    stop[t] += mass * p
                else:
                    nxt[(b, a)] = nxt.get((b, a), 0.0) + mass * p
        alive = nxt
    left = sum(alive.values())
    mean = sum(t * stop[t] for t in range(budget + 1)) + budget * left
    stop[budget] += left
    return mean, stop


def test_the_planned_rounds_match_the_exact_distribution() -> None:
    # One case, so a round is a pair; the default mixture (planned_for=None).
    plan = sequential_plan(0.6, 0.85, 60, experiments=4000, seed=3, looks="round")
    rounds = plan.rounds
    assert rounds is not None
    exact_mean, dist = _exact_rounds(0.6, 0.85, 60)  # exact enumeration, no simulation
    mean = rounds["mean"]
    se = (mean["high"] - mean["low"]) / (2 * 1.959963984540054)
    assert abs(mean["estimate"] - exact_mean) <= 3 * se  # within 3 Monte Carlo SEs
    cdf = np.cumsum(dist)
    exact_median = int(np.searchsorted(cdf, 0.5)) if cdf[-1] > 0 else 60
    exact_p90 = int(np.searchsorted(cdf, 0.9))
    assert rounds["median"]["low"] <= exact_median <= rounds["median"]["high"]
    assert rounds["p90"]["low"] <= exact_p90 <= rounds["p90"]["high"]
    assert "rounds (looks) to a verdict or the budget of 60: mean" in str(plan)


def test_rounds_follow_the_simulation_it_reports() -> None:
    plan = sequential_plan(0.7, 0.9, 20, cases=4, experiments=500, looks="round")
    stopped = plan.simulation.stopped
    assert np.all(stopped % 4 == 0)
    rounds = stopped // 4
    assert plan.rounds["mean"]["estimate"] == pytest.approx(rounds.mean())
    assert plan.rounds["median"]["estimate"] == np.quantile(rounds, 0.5, method="inverted_cdf")
    # power --sequential looks after every pair: no rounds there, its text as before
    assert sequential_plan(0.7, 0.9, 20, experiments=200).rounds is None
    assert "rounds (looks)" not in str(sequential_plan(0.7, 0.9, 20, experiments=200))


def test_plan_sequential_batch_states_batches_and_wall_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0", "--cases", "4", "--repeats"]
    argv += ["20", "--sequential", "--experiments", "400"]
    assert main([*argv, "--batch", "--batch-turnaround", "2h"]) == 0
    text = capsys.readouterr().out
    assert "with --batch each round is one batch per variant" in text
    assert "at 2 h a batch, wall time mean" in text
    assert main([*argv, "--batch", "--batch-turnaround", "30m", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    mean = doc["rounds"]["mean"]["estimate"]
    assert doc["batches_per_round"] == 2 and doc["batch_turnaround_s"] == 1800.0
    assert doc["wall_time_s"]["mean"]["estimate"] == pytest.approx(1800.0 * mean)
    assert main([*argv, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "batches_per_round" not in plain and plain["rounds"]["mean"]["estimate"] == mean


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--batch-turnaround", "1h"], "--batch-turnaround goes with --sequential --batch"),
        (["--sequential", "--batch", "--batch-turnaround", "soon"], "--batch-turnaround='soon'"),
        (["--sequential", "--batch", "--batch-turnaround", "0h"], "must be a positive duration"),
        (["--sequential", "--batch-turnaround", "1h"], "goes with --sequential --batch"),
    ],
)
def test_batch_turnaround_bad_usage_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    argv = ["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0", "--cases", "4", "--repeats"]
    assert main([*argv, "20", "--experiments", "200", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
