"""The betting interval, its p-value and the verdicts on it do not depend on the order of cases.

Reversing, sorting or shuffling a suite's cases (and renaming them, so that
their sorted names follow the new order) never changes an interval, a
p-value or a verdict about cases like these: through ``clustered_mean_ci``,
``clustered_paired_diff_ci`` and its p-value, ``compare(...,
method="clustered")``, ``gate`` and ``non_inferiority`` on a results file,
and ``report``. Then a reduced ``simulations/order_free.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import results
from strategies import clustered_outcomes

from evalstats.deciding._gate import gate, non_inferiority
from evalstats.presenting._report import report
from evalstats.stats._clustered_pvalues import clustered_paired_pvalue
from evalstats.stats._compare import compare
from evalstats.stats._intervals import clustered_mean_ci, clustered_paired_diff_ci

#: The listings tried: the cases reversed, sorted by their mean (both ways), and shuffled.
LISTINGS = ("reversed", "ascending", "descending", "shuffled")


def _relisted(blocks: list, key: list[float], how: str, shuffle: list[int]) -> list:
    """``blocks`` (one per case) in the listing ``how`` (``key`` orders the sorted ones)."""
    if how == "reversed":
        order = list(range(len(blocks)))[::-1]
    elif how == "ascending":
        order = sorted(range(len(blocks)), key=lambda i: key[i])
    elif how == "descending":
        order = sorted(range(len(blocks)), key=lambda i: -key[i])
    else:
        order = shuffle
    return [blocks[i] for i in order]


def _flatten(blocks: list[list]) -> tuple[list, list[int]]:
    """The runs of every case one after another, each labelled by its case's new place."""
    values, labels = [], []
    for place, runs in enumerate(blocks):
        values += runs
        labels += [place] * len(runs)
    return values, labels


def _cases(outcomes: list[float], labels: list[int]) -> list[list[float]]:
    by_case: dict[int, list[float]] = {}
    for y, c in zip(outcomes, labels, strict=True):
        by_case.setdefault(c, []).append(y)
    return list(by_case.values())


@settings(max_examples=40, deadline=None)
@given(data=clustered_outcomes(min_clusters=2, max_clusters=12), seed=st.integers(0, 2**32 - 1))
def test_clustered_mean_ci_does_not_depend_on_the_order_of_cases(data, seed) -> None:
    blocks = _cases(*data)
    rng = np.random.default_rng(seed)
    means = [float(np.mean(b)) for b in blocks]
    want = clustered_mean_ci(*_flatten(blocks)).to_dict()
    for how in LISTINGS:
        shuffle = [int(i) for i in rng.permutation(len(blocks))]
        listed = [list(rng.permutation(b)) for b in _relisted(blocks, means, how, shuffle)]
        assert clustered_mean_ci(*_flatten(listed)).to_dict() == want, how


@st.composite
def paired_cases(draw: st.DrawFn, max_cases: int = 12) -> list[list[tuple[float, float]]]:
    """Per case, its (A, B) outcome pairs: mostly 0/1, sometimes scores in [0, 1]."""
    value = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1))
    pair = st.tuples(value, value)
    cases = draw(st.integers(2, max_cases))
    return [draw(st.lists(pair, min_size=1, max_size=5)) for _ in range(cases)]


@settings(max_examples=40, deadline=None)
@given(blocks=paired_cases(), seed=st.integers(0, 2**32 - 1))
def test_paired_interval_and_pvalue_do_not_depend_on_the_order_of_cases(blocks, seed) -> None:
    rng = np.random.default_rng(seed)
    gains = [float(np.mean([b - a for a, b in block])) for block in blocks]

    def figures(listed):
        pairs, labels = _flatten(listed)
        a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        ci = clustered_paired_diff_ci(a, b, labels)
        return ci.to_dict(), clustered_paired_pvalue(a, b, labels)

    want = figures(blocks)
    for how in LISTINGS:
        shuffle = [int(i) for i in rng.permutation(len(blocks))]
        listed = [[block[i] for i in rng.permutation(len(block))] for block in blocks]
        assert figures(_relisted(listed, gains, how, shuffle)) == want, how


@st.composite
def suites(draw: st.DrawFn, min_cases: int = 5, max_cases: int = 10):
    """Pass/fail outcomes of A and B, ``runs`` repeats of each case: ``(runs, [(a, b), ...])``."""
    runs = draw(st.integers(1, 4))
    cases = draw(st.integers(min_cases, max_cases))
    outcomes = st.lists(st.booleans(), min_size=runs, max_size=runs)
    return runs, [(draw(outcomes), draw(outcomes)) for _ in range(cases)]


def _as_dicts(listed) -> tuple[dict, dict]:
    names = [f"case{place:02d}" for place in range(len(listed))]
    a = {n: list(pa) for n, (pa, _) in zip(names, listed, strict=True)}
    b = {n: list(pb) for n, (_, pb) in zip(names, listed, strict=True)}
    return a, b


def _listings(cases, seed: int):
    rng = np.random.default_rng(seed)
    rates = [sum(pb) - sum(pa) for pa, pb in cases]
    for how in LISTINGS:
        shuffle = [int(i) for i in rng.permutation(len(cases))]
        yield how, _relisted(cases, rates, how, shuffle)


@settings(max_examples=30, deadline=None)
@given(suite=suites(), seed=st.integers(0, 2**32 - 1))
def test_compare_clustered_does_not_depend_on_the_order_of_cases(suite, seed) -> None:
    _, cases = suite

    def verdict(listed):
        c = compare(*_as_dicts(listed), method="clustered")
        return c.verdict, c.difference.to_dict(), c.pvalue, c.detectable

    want = verdict(cases)
    for how, listed in _listings(cases, seed):
        assert verdict(listed) == want, how


@settings(max_examples=25, deadline=None)
@given(suite=suites(), seed=st.integers(0, 2**32 - 1), threshold=st.floats(0.05, 0.95))
def test_gates_and_report_on_a_results_file_do_not_depend_on_the_order_of_cases(
    suite, seed, threshold
) -> None:
    runs, cases = suite

    def decisions(listed):
        a, b = _as_dicts(listed)
        res = results({"A": a, "B": b}, runs, missed="missed")
        bound = gate(
            res, variant="B", min_pass=threshold, on="lower-bound", about="cases_like_these"
        )
        worse = non_inferiority(res, "A", "B", margin=0.1, advice=False, about="cases_like_these")
        summary = report(res).variant("B")
        return (
            bound.passed,
            bound.checked,
            worse.verdict,
            worse.comparison.difference.to_dict(),
            worse.comparison.pvalue,
            summary.clustered.to_dict(),
        )

    want = decisions(cases)
    for how, listed in _listings(cases, seed):
        assert decisions(listed) == want, how


# --- a reduced simulations/order_free.py ---------------------------------------------


def _simulation():
    """simulations/order_free.py, loaded from its file (the folder is not a package)."""
    from simulation import load

    return load("order_free")


@pytest.mark.slow
def test_order_free_interval_keeps_its_level_when_cases_are_listed_easy_first() -> None:
    # The case: a true rate of exactly 0.75 (icc 0.3, 3 runs), 300
    # cases listed easy first. Betting in listing order, the min-pass gate at
    # 0.75 passes far more often than 2.5% (simulations/order_free.py); the
    # order-free interval's lower limit reaches the truth well under 2.5% of
    # the time in every listing, the same runs giving the same interval.
    sim = _simulation()
    n = 400
    cells = sim.one_variant(0.75, 0.3, 300, 3, n, seed=5)
    for how in sim.LISTINGS:
        covered, above, below = cells[how, "order-free"]
        assert cells[how, "order-free"] == cells["random", "order-free"]
        assert above <= 0.025 * n and below <= 0.025 * n and covered >= 0.95 * n
    assert cells["easy first", "in listing order"][1] > 0.20 * n


@pytest.mark.slow
def test_order_free_gate_keeps_its_size_and_power() -> None:
    # 30 cases x 3 runs, margin 10 points: with B exactly 10 points worse
    # the no-regression gate passes at most 2.5% in every listing; with B as
    # good as A it passes about as often as betting in (random) listing order.
    sim = _simulation()
    n = 400
    cells = sim.boundary(0.7, 30, 3, n, seed=7)
    for how in sim.LISTINGS:
        assert cells[how, "order-free"] <= 0.025 * n
    both, free_only, listed_only = sim.power(0.9, 30, 3, n, seed=8)
    assert free_only - listed_only >= -0.02 * n
