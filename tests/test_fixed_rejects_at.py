"""The fixed-bet test decided from bounds of its capital gives the full computation's verdicts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.stats import _scores
from evalstats.stats._scores import _fixed_rejects, _fixed_rejects_at


def _same(x: np.ndarray, m: float, alpha: float) -> None:
    full = _fixed_rejects(x, np.full(x.shape[0], m), alpha)
    assert np.array_equal(_fixed_rejects_at(x, m, alpha), full)


@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 60),
    st.integers(1, 300),
    st.floats(0.02, 0.98),
    st.sampled_from([0.025, 0.05, 0.005]),
    st.booleans(),
)
def test_bounded_verdicts_are_the_full_capitals_verdicts(seed, rows, n, m, alpha, levels) -> None:
    rng = np.random.default_rng(seed)
    x = rng.beta(rng.uniform(0.2, 5), rng.uniform(0.2, 5), (rows, n))
    if levels:
        x = np.round(x * 4) / 4  # ties, 0s and 1s
    _same(x, m, alpha)


def test_rows_near_the_threshold_are_worked_out_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    # a planner's simulated experiments at a gain the test just detects, with the
    # bounds made to decide nothing on a wide band about the threshold
    rng = np.random.default_rng(0)
    diffs = np.clip(rng.normal(0.09, 0.3, (4000, 100)), -1.0, 1.0)
    x = (diffs + 1.0) / 2.0
    m = 0.5 + 2.0**-41
    _same(x, m, 0.025)
    monkeypatch.setattr(_scores, "_SURE", 2.0)
    _same(x, m, 0.025)
    assert 0 < _fixed_rejects_at(x, m, 0.025).mean() < 1


def test_the_bounds_settle_almost_every_row_of_a_planners_experiments(monkeypatch) -> None:
    # The point of the bounds: at the default margin, few of a planner's rows need
    # the full capital (fewer than 0.05% on the score planner's own simulations;
    # here 1 in 4,000), so the shortcut cannot silently fall back on every row.
    rng = np.random.default_rng(0)
    x = (np.clip(rng.normal(0.09, 0.3, (4000, 100)), -1.0, 1.0) + 1.0) / 2.0
    full = []
    monkeypatch.setattr(
        _scores,
        "_fixed_rejects",
        lambda rows, m, a: full.append(len(rows)) or _fixed_rejects(rows, m, a),
    )
    got = _fixed_rejects_at(x, 0.5 + 2.0**-41, 0.025)
    assert np.array_equal(got, _fixed_rejects(x, np.full(len(x), 0.5 + 2.0**-41), 0.025))
    assert sum(full) <= 0.01 * len(x)
