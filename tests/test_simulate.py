"""Monte-Carlo power: the vectorised case-model simulator and whole evals on stand-ins."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.demo._shop import make_assistant
from evalstats.errors import InvalidArgument
from evalstats.planning._power import CaseModel, paired_power, power
from evalstats.planning._simulate import (
    PowerResult,
    clustered_decisions,
    simulate_clustered,
    simulate_power,
)
from evalstats.running._run_cases import load_shop_cases
from evalstats.stats._compare import compare
from evalstats.stats._intervals import proportion_ci

ROOT = Path(__file__).resolve().parents[1]

# --- the clustered decision rule ---------------------------------------------------


def _verdict_from_intervals(pa_row, pb_row, repeats, level):
    """Expand per-case counts into runs and judge them as compare() does."""
    a = {c: [True] * ka + [False] * (repeats - ka) for c, ka in enumerate(pa_row)}
    b = {c: [True] * kb + [False] * (repeats - kb) for c, kb in enumerate(pb_row)}
    verdict = compare(a, b, method="clustered", level=level).verdict
    return {"b_better": 1, "a_better": -1, "cant_tell": 0}[verdict]


@given(
    data=st.data(),
    cases=st.integers(2, 8),
    repeats=st.integers(1, 6),
    level=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_clustered_decisions_agree_with_compare_clustered(data, cases, repeats, level):
    counts = st.lists(st.integers(0, repeats), min_size=cases, max_size=cases)
    ka = data.draw(counts)
    kb = data.draw(counts)
    got = clustered_decisions(np.array([ka]), np.array([kb]), repeats, level=level)[0]
    assert got == _verdict_from_intervals(ka, kb, repeats, level)
    one_side = clustered_decisions(
        np.array([ka]), np.array([kb]), repeats, level=level, only_b_better=True
    )[0]
    assert one_side == (1 if got == 1 else 0)


def test_clustered_decisions_agree_with_statsmodels_cluster_robust_ols():
    # statsmodels OLS of the paired differences on a constant with
    # cov_type="cluster" (CR1) and t inference with G - 1 df: the same test.
    import statsmodels.api as sm

    rng = np.random.default_rng(9)
    for _ in range(20):
        cases, repeats = 6, 4
        ka = rng.integers(0, repeats + 1, cases)
        kb = np.minimum(ka + rng.integers(-1, 3, cases), repeats).clip(0)
        a = np.concatenate([[1] * k + [0] * (repeats - k) for k in ka])
        b = np.concatenate([[1] * k + [0] * (repeats - k) for k in kb])
        groups = np.repeat(np.arange(cases), repeats)
        fit = sm.OLS(b - a, np.ones(a.size)).fit(
            cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
        )
        low, high = fit.conf_int(alpha=0.05)[0]
        if np.isclose(fit.bse[0], 0.0):
            continue
        ref = 1 if low > 0 else -1 if high < 0 else 0
        got = clustered_decisions(ka[None], kb[None], repeats, level=0.95, method="cr1")
        assert got[0] == ref


# --- the vectorised simulator --------------------------------------------------------


def test_simulate_clustered_is_reproducible_and_seeded():
    m = CaseModel(0.6, 0.85, 0.2)
    one = simulate_clustered(m, cases=12, repeats=3, experiments=3000, seed=4)
    two = simulate_clustered(m, cases=12, repeats=3, experiments=3000, seed=4)
    other = simulate_clustered(m, cases=12, repeats=3, experiments=3000, seed=5)
    assert (one.hits, one.false_positives) == (two.hits, two.false_positives)
    assert (one.hits, one.false_positives) != (other.hits, other.false_positives)
    assert one.power.estimate == one.hits / 3000
    assert one.settings["cases"] == 12 and one.settings["method"] == "clustered"
    json.dumps(one.to_dict())
    assert "Monte-Carlo" in str(one)


def test_simulate_clustered_false_positive_rate_is_nominal_with_identical_cases():
    # icc = 0, many cases: the per-case differences are nearly normal, so the
    # CR2 t test's one-sided false-positive rate is the nominal 2.5%; the
    # betting interval compare uses at 40 cases stays below it.
    model = CaseModel(0.5, 0.6, 0.0)
    sim = simulate_clustered(model, cases=40, repeats=5, experiments=20_000, method="cr2")
    ci = proportion_ci(sim.false_positives, sim.experiments, level=0.999)
    assert ci.low <= 0.025 <= ci.high
    bet = simulate_clustered(model, cases=40, repeats=5, experiments=20_000)
    assert bet.settings["interval"] == "auto" and bet.false_positives < sim.false_positives


def test_simulate_clustered_blocks_give_the_same_distribution():
    # More experiments than one block (20,000) are drawn in pieces; the power
    # they estimate agrees with that of one block, within 4 standard errors of
    # the difference of two independent Monte-Carlo estimates.
    model = CaseModel(0.6, 0.8, 0.1)  # power near 24%
    sim = simulate_clustered(model, cases=10, repeats=2, experiments=45_000)
    one_block = simulate_clustered(model, cases=10, repeats=2, experiments=20_000, seed=1)
    assert sim.experiments == 45_000 and 0 < sim.hits < 45_000
    p = one_block.power.estimate
    assert abs(sim.power.estimate - p) < 4 * math.sqrt(p * (1 - p) * (1 / 45_000 + 1 / 20_000))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"cases": 1}, "cases=1"),
        ({"repeats": 0}, "repeats=0"),
        ({"experiments": 0}, "experiments=0"),
        ({"level": 2}, "level=2"),
        ({"seed": -1}, "seed=-1"),
    ],
)
def test_simulate_clustered_bad_input(kwargs, pattern):
    args = {"cases": 5, "repeats": 2} | kwargs
    with pytest.raises(InvalidArgument, match=pattern):
        simulate_clustered(CaseModel(0.5, 0.6, 0.1), **args)


# --- whole evals against the stand-in ------------------------------------------------

V1 = partial(make_assistant, 1)
V2 = partial(make_assistant, 2)


def test_simulate_power_is_reproducible_and_describes_its_settings():
    cases = load_shop_cases()
    one = simulate_power(V1, V2, cases, runs_per_case=3, experiments=40, seed=8)
    two = simulate_power(V1, V2, cases, runs_per_case=3, experiments=40, seed=8)
    assert one == two
    assert one.settings["task_a"] == "make_assistant(1, seed)"
    assert one.settings["processes"] == 1
    assert isinstance(one, PowerResult)
    json.dumps(one.to_dict())


@pytest.mark.slow
def test_simulate_power_is_the_same_with_two_processes():
    # Experiment seeds come from SeedSequence.spawn, so the split over
    # processes does not matter.
    cases = load_shop_cases()
    one = simulate_power(V1, V2, cases, runs_per_case=2, experiments=30, seed=6, processes=1)
    two = simulate_power(V1, V2, cases, runs_per_case=2, experiments=30, seed=6, processes=2)
    assert (one.hits, one.false_positives) == (two.hits, two.false_positives)
    # the tasks and the cases' checks reach forked workers without pickling
    three = simulate_power(
        lambda s: make_assistant(1, s),
        lambda s: make_assistant(2, s),
        cases,
        runs_per_case=2,
        experiments=30,
        seed=6,
        processes=2,
    )
    assert (three.hits, three.false_positives) == (one.hits, one.false_positives)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["overlap", "newcombe", "mcnemar"])
def test_exact_power_agrees_with_simulated_evals_of_the_stand_in(method):
    # The stand-in passes with probability 0.7 (v1) and 0.9 (v2) on every
    # reply, independently, so exact power with 4 cases x 5 runs = 20 trials
    # per variant must lie within the simulation's Monte-Carlo interval
    # (99.9% Wilson, so that a seeded run is a fair test).
    cases = load_shop_cases()
    res = simulate_power(V1, V2, cases, runs_per_case=5, experiments=600, method=method, seed=1)
    if method == "mcnemar":  # pairs by (case, repeat); slips independent: correlation 0
        exact, null = paired_power(0.7, 0.9, 20), paired_power(0.7, 0.7, 20)
    else:
        exact, null = power(0.7, 0.9, 20, method=method), power(0.7, 0.7, 20, method=method)
    ci = proportion_ci(res.hits, res.experiments, level=0.999)
    assert ci.low <= exact <= ci.high
    fp = proportion_ci(res.false_positives, res.experiments, level=0.999)
    assert fp.low <= null <= fp.high


def test_simulate_power_bad_input():
    cases = load_shop_cases()
    with pytest.raises(InvalidArgument, match="runs_per_case=0"):
        simulate_power(V1, V2, cases, runs_per_case=0)
    with pytest.raises(InvalidArgument, match="did you mean 'overlap'"):
        simulate_power(V1, V2, cases, runs_per_case=1, method="overlp")
    with pytest.raises(InvalidArgument, match="cases is empty"):
        simulate_power(V1, V2, [], runs_per_case=1)
    with pytest.raises(InvalidArgument, match="processes=0"):
        simulate_power(V1, V2, cases, runs_per_case=1, experiments=2, processes=0)


# --- the simulation scripts ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("script", ["power_vs_runs.py", "cases_vs_repeats.py"])
def test_simulation_scripts_run_quickly(script, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "simulations" / script), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    stem = script.removesuffix(".py")
    assert (tmp_path / f"{stem}.csv").stat().st_size > 100
    assert (tmp_path / f"{stem}.png").stat().st_size > 1000
    assert proc.stdout.strip()


def test_monte_carlo_interval_math():
    # A PowerResult's interval is the 95% Wilson interval of hits/experiments.
    sim = simulate_clustered(CaseModel(0.6, 0.8, 0.1), cases=8, repeats=2, experiments=500)
    ref = proportion_ci(sim.hits, 500, level=0.95, method="wilson")
    assert (sim.power.low, sim.power.high) == (ref.low, ref.high)
    assert math.isclose(sim.power.estimate, sim.hits / 500)
