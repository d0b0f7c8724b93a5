"""Shortcuts taken for speed give exactly what the long way gives, to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from evalstats.stats._intervals import (
    MAX_MARGIN_CASES,
    _cases_for_margin,
    cases_for_margin,
    clustered_limits,
)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_the_margin_floor_is_the_lower_limit_of_cases_that_all_tie(level):
    # The long way: clustered_limits on n cases whose differences are all 0,
    # averaged over every order of them, for each n in turn.
    margins = (0.9, 0.5, 0.3, 0.1, 0.05)
    lows = {
        n: float(clustered_limits(np.zeros((1, n)), level, difference=True)[0][0])
        for n in range(2, 130)
    }
    for margin in margins:
        expected = next((n for n, low in lows.items() if low > -margin), None)
        assert expected is not None
        assert cases_for_margin(margin, level) == expected


def test_the_margin_floor_at_the_documented_margins():
    # The docstring's figures, and gate's 2-point margin (README).
    assert (cases_for_margin(0.10), cases_for_margin(0.05), cases_for_margin(0.02)) == (41, 83, 211)
    assert _cases_for_margin(0.0, 0.95) is None
    assert MAX_MARGIN_CASES == 100_000


# --- the planner's simulation: multisets judged once, experiments in chunks ------


def _counts(rng, rows, cases, repeats):
    q = rng.beta(2.0, 2.0, size=(rows, 1))
    a = rng.binomial(repeats, q, size=(rows, cases))
    b = rng.binomial(repeats, np.clip(q + 0.15, 0.0, 1.0), size=(rows, cases))
    return a, b


@pytest.mark.parametrize("only_b_better", [True, False])
@pytest.mark.parametrize(
    ("rows", "cases", "repeats"),
    [
        (1500, 40, 1),
        (800, 25, 3),
        (300, 9, 1),
        (200, 60, 2),
        (300, 6, 12),  # keys past 64 bits (7**24): the histogram's rows name multisets
        (120, 4, 40),
        (60, 12, 1 << 20),
    ],
)
def test_decisions_judged_once_per_multiset_are_betting_signs_row_by_row(
    rows, cases, repeats, only_b_better, monkeypatch
):
    from evalstats.planning import _simulate
    from evalstats.stats._intervals import betting_signs

    a, b = _counts(np.random.default_rng(rows + cases), rows, cases, repeats)
    expected = betting_signs(
        (b - a) / repeats, 0.95, threshold=_simulate._DECIDED, only_above=only_b_better
    )
    memo: dict = {}
    got = _simulate.clustered_decisions(
        a, b, repeats, level=0.95, only_b_better=only_b_better, memo=memo
    )
    np.testing.assert_array_equal(got, expected)
    # judged a few experiments at a time, with the verdicts already kept
    monkeypatch.setattr(_simulate, "_JUDGED", 7 * cases)
    again = _simulate.clustered_decisions(
        a, b, repeats, level=0.95, only_b_better=only_b_better, memo=memo
    )
    np.testing.assert_array_equal(again, expected)
    if repeats < 10:
        assert 0 < len(memo) < rows  # experiments that share a multiset were judged once
    kinds = {type(k) for k in memo}
    assert kinds <= ({bytes} if (cases + 1) ** (2 * repeats) >= 2**63 else {int})


def _direct(model, seed, experiments, cases, repeats):
    """found_better the long way: every block's uniforms (or, for unlimited repeats,
    its rates) drawn at once, each case's difference found by searching its row's
    distribution function on its own, all the experiments judged at once by
    betting_signs."""
    from evalstats.planning._simulate import _COLUMNS, _DECIDED, _UNLIMITED
    from evalstats.stats._intervals import betting_signs

    blocks = -(-cases // _COLUMNS)
    if repeats == "inf":
        ka, kb = [], []
        for j in range(blocks):
            qa, qb = model.draw(
                np.random.default_rng(np.random.SeedSequence([seed, 1, j])),
                (experiments, _COLUMNS),
            )
            ka.append(np.rint(qa * _UNLIMITED))
            kb.append(np.rint(qb * _UNLIMITED))
        d = (np.concatenate(kb, axis=1) - np.concatenate(ka, axis=1))[:, :cases] / _UNLIMITED
        return betting_signs(d, 0.95, threshold=_DECIDED, only_above=True) == 1
    u = np.concatenate(
        [
            np.random.default_rng(np.random.SeedSequence([seed, 2, j])).random(
                (experiments, _COLUMNS)
            )
            for j in range(blocks)
        ],
        axis=1,
    )[:, :cases]
    laws = np.atleast_2d(model.differences(repeats))
    per = experiments // laws.shape[0]
    d = np.empty(u.shape)
    for i in range(experiments):
        cdf = np.cumsum(laws[i // per])
        d[i] = np.searchsorted(cdf[:-1], u[i], side="right") - repeats
    return betting_signs(d / repeats, 0.95, threshold=_DECIDED, only_above=True) == 1


def _mixture(spread):
    """Case models drawn from a pilot's posterior, 30 experiments each."""
    from evalstats.planning._pilot import Mixture, Posterior, wanted
    from evalstats.stats._casemodel import PilotCounts

    counts = ((2, 3), (1, 3), (3, 3), (0, 3), (2, 3), (3, 3), (1, 3), (2, 3))
    pilot = PilotCounts(counts, counts, tuple((min(y + 1, 3), n) for y, n in counts))
    posterior = Posterior(pilot, wanted("+0.15"), p_a=None, spread=spread, seed=3)
    return Mixture(posterior.draw(20, 2), 30, spread)


def _models():
    from evalstats.stats._casemodel import CaseModel

    return {
        "spread": CaseModel(0.6, 0.75, 0.2, 0.3),
        "no spread": CaseModel(0.6, 0.75, 0.2),
        "identical cases": CaseModel(0.6, 0.75, 0.0),
        "mixture": _mixture(0.0),
        "mixture with spread": _mixture(0.4),
    }


@pytest.mark.parametrize("model", list(_models()))
@pytest.mark.parametrize("repeats", [1, 2, "inf"])
def test_the_design_simulator_in_chunks_is_the_simulation_at_once(repeats, model, monkeypatch):
    # Without spread, unlimited repeats draw each block's rates a slice of
    # experiments at a time, as they are judged: the same rates as at once.
    import math

    from evalstats.planning import _simulate

    model = _models()[model]
    r = math.inf if repeats == "inf" else repeats
    n = 600 if not hasattr(model, "per_model") else model.experiments
    expected = _direct(model, 5, n, 37, repeats)
    sim = _simulate.DesignPowers(model, experiments=n, level=0.95, seed=5)
    np.testing.assert_array_equal(sim.found_better(37, r), expected)
    monkeypatch.setattr(_simulate, "_JUDGED", 50 * 37)  # 12 chunks of 50 experiments
    fresh = _simulate.DesignPowers(model, experiments=n, level=0.95, seed=5)
    np.testing.assert_array_equal(fresh.found_better(37, r), expected)


def test_a_mixtures_rates_drawn_in_slices_are_its_rates_drawn_at_once():
    # without spread: a spread's normal draws would come after all the Beta draws
    mixture = _mixture(0.0)
    rows = mixture.experiments
    qa, qb = mixture.draw(np.random.default_rng(8), (rows, 16))
    g = np.random.default_rng(8)
    parts = [mixture.draw_rows(g, slice(s, min(s + 70, rows)), 16) for s in range(0, rows, 70)]
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), qa)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), qb)
    # and at once they are the case model's rates written out
    from scipy.special import expit, logit

    g = np.random.default_rng(8)
    a = g.beta(mixture._a, mixture._b, (rows, 16))
    a = np.where(mixture._spread_rows[:, None], a, mixture._p_a)
    np.testing.assert_array_equal(a, qa)
    np.testing.assert_array_equal(expit(logit(a) + mixture._shift), qb)


def test_the_design_simulator_is_the_same_whatever_was_asked_before():
    import math

    from evalstats.planning._simulate import DesignPowers
    from evalstats.stats._casemodel import CaseModel

    model = CaseModel(0.5, 0.7, 0.3)
    first = DesignPowers(model, experiments=400, level=0.95, seed=2)
    asked = [(20, 3), (33, 1), (20, 4), (20, 3), (40, math.inf), (33, 6), (17, 5)]
    seen = [first.hits(c, r) for c, r in asked]
    for (c, r), hits in zip(asked, seen, strict=True):
        alone = DesignPowers(model, experiments=400, level=0.95, seed=2)
        assert alone.hits(c, r) == hits


# --- compare's pairs: cases counted side by side ----------------------------------


@pytest.mark.parametrize("chunk", [1 << 14, 16, 5])
def test_pairs_counted_side_by_side_are_the_pairs_counted_case_by_case(chunk, monkeypatch):
    from evalstats.deciding import _compare_results as cr

    rng = np.random.default_rng(chunk)
    ids = [f"c{k}" for k in range(60)]
    scheduled, recorded = {}, {}
    for case in ids:
        n = int(rng.integers(1, 12))
        scheduled[case] = bytes(rng.choice([0, 1], size=n, p=[0.1, 0.9]).astype(np.uint8))
        for v in ("A", "B"):
            m = int(rng.integers(0, n + 3))  # short of the schedule, or past it
            recorded[(v, case)] = bytes(rng.integers(0, 5, size=m).astype(np.uint8))
    del scheduled["c7"]  # a case listed but not scheduled

    def codes(variant, case):
        return recorded[(variant, case)]

    # the long way: each case's own key counts, in the order of the cases listed
    order = sorted(scheduled, key=[c for c in ids if c in scheduled].index)
    cases, tables, unmeasured, missing = [], [], 0, 0
    for case in order:
        by = cr._case_keys(scheduled[case], codes("A", case), codes("B", case))[1:]
        by = by.reshape(4, 4)
        unmeasured += int(by[3, :].sum() + by[:3, 3].sum())
        missing += int(by[0, :3].sum() + by[1:3, 0].sum())
        table = (int(by[1, 1]), int(by[1, 2]), int(by[2, 1]), int(by[2, 2]))
        if sum(table):
            cases.append(case)
            tables.append(table)
    monkeypatch.setattr(cr, "_CHUNK", chunk)
    got = cr._pairs(scheduled, codes, "A", "B", list(reversed(ids)) + ["c7"])
    expected_order = sorted(scheduled, key=list(reversed(ids)).index)
    assert list(got.cases) == [c for c in expected_order if c in cases]
    by_case = dict(zip(cases, tables, strict=True))
    assert list(got.tables) == [by_case[c] for c in got.cases]
    assert (got.dropped_unmeasured, got.dropped_missing) == (unmeasured, missing)
    assert all(type(x) is int for t in got.tables for x in t)


def test_the_verdicts_kept_in_the_process_are_the_verdicts(monkeypatch):
    from evalstats.planning import _simulate
    from evalstats.stats._intervals import betting_signs

    a, b = _counts(np.random.default_rng(11), 900, 30, 1)
    expected = betting_signs(b - a, 0.9, threshold=_simulate._DECIDED, only_above=True)
    monkeypatch.setattr(_simulate, "_VERDICTS", {})
    for _ in range(2):  # judged, then read from the kept verdicts
        got = _simulate.clustered_decisions(a, b, 1, level=0.9, only_b_better=True)
        np.testing.assert_array_equal(got, expected)
    assert 0 < len(_simulate._VERDICTS[(30, 1, 0.9, True)]) < 900
    monkeypatch.setattr(_simulate, "_KEPT_VERDICTS", 10)  # emptied as it fills
    got = _simulate.clustered_decisions(a[:300], b[:300], 1, level=0.9, only_b_better=True)
    np.testing.assert_array_equal(got, expected[:300])
    got = _simulate.clustered_decisions(a, b, 1, level=0.9, only_b_better=True)
    np.testing.assert_array_equal(got, expected)


# --- the difference the clustered rule would detect: no draws when none can pass --


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95])
@pytest.mark.parametrize("cases", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_detectable_difference_without_draws_is_the_one_the_draws_give(
    level, cases, seed, monkeypatch
):
    from types import SimpleNamespace

    from evalstats.stats import _compare

    rng = np.random.default_rng(seed)
    per_case = np.round(rng.uniform(-0.3, 0.6, size=cases), 3)
    if seed == 2:
        per_case[:] = per_case[0]  # no spread between the cases
        per_case[-1] += 0.01
    difference = SimpleNamespace(method="betting", se=0.1, df=cases - 1)
    got = _compare._clustered_rule_detectable(difference, per_case, level, 0.8)
    monkeypatch.setattr(_compare, "_no_resample_better", lambda centred, level: False)
    drawn = _compare._clustered_rule_detectable(difference, per_case, level, 0.8)
    assert got == drawn or (np.isnan(got) and np.isnan(drawn))


def test_no_resample_is_better_with_four_cases_at_95_and_some_can_be_with_more():
    from evalstats.stats._compare import _no_resample_better

    assert _no_resample_better(np.array([-0.1, 0.0, 0.05, 0.05]), 0.95)
    assert not _no_resample_better(np.zeros(5), 0.8)  # all +1 at a shift of 1: better
    assert not _no_resample_better(np.zeros(6), 0.95)  # 462 multisets: left to the draws


@pytest.mark.parametrize(("p_a", "icc"), [(0.7, 0.001), (0.5, 0.004), (0.98, 0.3), (0.02, 0.6)])
def test_the_case_models_quantile_nodes_are_scipys_beta_ppf(p_a, icc):
    from scipy.stats import beta

    from evalstats.stats._casemodel import _QUAD_SMOOTH, CaseModel

    model = CaseModel(p_a, p_a, icc)
    nodes, _ = model._nodes()
    u = (np.arange(_QUAD_SMOOTH) + 0.5) / _QUAD_SMOOTH
    s = 1 / icc - 1
    np.testing.assert_array_equal(nodes, beta.ppf(u, p_a * s, (1 - p_a) * s))


@pytest.mark.parametrize(("cases", "repeats"), [(5, 1), (40, 1), (12, 2), (600, 3), (3, 9)])
def test_a_multisets_key_names_it_exactly(cases, repeats):
    from evalstats.planning._simulate import _multiset_keys

    rng = np.random.default_rng(cases * repeats)
    diff = rng.integers(-repeats, repeats + 1, size=(3000, cases))
    diff[1::2] = rng.permuted(diff[::2], axis=1)  # every other row a shuffle of the one before
    keys = _multiset_keys(diff, repeats)
    rows = [tuple(sorted(row)) for row in diff.tolist()]
    pairs = rng.integers(0, diff.shape[0], size=(20_000, 2))
    for i, j in pairs.tolist() + [(k, k + 1) for k in range(0, diff.shape[0], 2)]:
        assert (keys[i] == keys[j]) == (rows[i] == rows[j])
    assert _multiset_keys(np.zeros((2, 600), dtype=np.int64), 4) is None  # 601**8 > 2**63


@pytest.mark.parametrize("repeats", [1, 2, 4, 5, 30])
@pytest.mark.parametrize("cases", [1, 16, 40])
def test_differences_drawn_from_uniforms_are_each_rows_inverse_distribution(repeats, cases):
    # Up to _COMPARED steps the uniforms are compared with each step; beyond,
    # one sorted search over every row's steps: both are each row's own search.
    from evalstats.planning._simulate import _drawn_differences, _drawn_keys, _multiset_keys

    rng = np.random.default_rng(repeats * 100 + cases)
    laws = rng.dirichlet(np.full(2 * repeats + 1, 0.5), size=7)
    laws[3] = 0.0
    laws[3, repeats] = 1.0  # every case alike
    cdf = np.cumsum(laws, axis=1)
    model = rng.integers(0, 7, size=300)
    u = rng.random((300, cases))
    u[0, 0] = cdf[model[0], 0]  # a uniform exactly on a step goes past it
    drawn = _drawn_differences(u, cdf, model, repeats)
    for i in range(300):
        expected = np.searchsorted(cdf[model[i], :-1], u[i], side="right") - repeats
        np.testing.assert_array_equal(drawn[i], expected)
    keys = _drawn_keys(u, cdf, model, repeats)
    if 2 * repeats <= 9:
        np.testing.assert_array_equal(keys, _multiset_keys(drawn, repeats))
    else:
        assert keys is None


@pytest.mark.parametrize(
    ("n", "orders", "rows", "levels"),
    [(10, 8, 3, None), (517, 8, 1, 3), (5000, 8, 1, None), (300, 1, 5, 5), (64, 24, 2, None)],
)
def test_the_betting_capitals_bets_by_running_sums_are_the_loops(
    monkeypatch, n, orders, rows, levels
):
    # One interval over many cases has a few values a place, where the bets are
    # worked out by whole-array running sums and the products of the runs of
    # factors in one call; the place-by-place loop and the run-by-run products
    # give the same floats, and so the same capital, at any mean.
    from evalstats.stats import _intervals

    rng = np.random.default_rng(n)
    xo = rng.random((n, orders, rows))
    if levels is not None:  # values on a grid, as differences of pass counts are
        xo = np.round(xo * (levels - 1)) / (levels - 1)
    found = []
    for few in (0, 1 << 30):  # the loop always; the running sums always
        monkeypatch.setattr(_intervals, "_FEW", few)
        work, lam, bet = (np.empty_like(xo) for _ in range(3))
        log_wealth = _intervals._log_wealth(xo, 0.025, work, lam, bet)
        found.append((lam.copy(), log_wealth(np.full(rows, 0.45)), log_wealth(0.5)))
    for loop, sums in zip(*found, strict=True):
        assert np.array_equal(loop, sums)


@pytest.mark.parametrize("n", [2, 3, 5, 12, 60, 512, 900])
@pytest.mark.parametrize("grid", [True, False])
def test_the_betting_tests_sieve_decides_as_the_average_over_every_order(n, grid):
    # The long way: each row's capital averaged over all its orders in one block of
    # _wealth_blocks, compared with the threshold. _rejected_at first rejects the
    # rows whose first order's capital alone reaches K / alpha, then averages the
    # others' orders: the same decisions, row for row.
    from evalstats.stats import _intervals

    rng = np.random.default_rng(n + grid)
    rows = 1500
    mean = rng.uniform(0.3, 0.9, (rows, 1))  # each row its own mean, some near m
    if grid:  # differences of one pass each, rescaled to [0, 1], as the planner judges
        u = rng.random((rows, n))  # B ahead on 0.8 mean of the cases, behind on 0.8 (1 - mean)
        x = np.where(u < 0.8 * mean, 1.0, np.where(u < 0.8, 0.0, 0.5))
    else:
        x = rng.beta(4.0 * mean, 4.0 * (1.0 - mean), size=(rows, n))
    alpha, m = 0.025, 0.52
    keep = rng.random(rows) < 0.9
    average = np.full(rows, -np.inf)
    for part, log_wealth in _intervals._wealth_blocks(x[keep], alpha):
        average[np.flatnonzero(keep)[part]] = log_wealth(m)
    expected = average >= np.log(1.0 / alpha)
    found = _intervals._rejected_at(x, alpha, m, keep)
    np.testing.assert_array_equal(found, expected)
    if n >= 12:
        assert 0 < found.sum() < keep.sum()  # both decisions are met
