"""The fixed-bet test decided from bounds of its capital gives the full computation's verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from evalstats.stats import _scores
from evalstats.stats._scores import (
    _FIXED_BISECTIONS,
    _fixed_log_capital,
    _fixed_lower,
    _fixed_rejects,
    fixed_bet_limits,
)


def _exact(x: np.ndarray, m, alpha: float) -> np.ndarray:
    """The verdicts with every row's capital worked out in full: the reference."""
    m = np.broadcast_to(np.asarray(m, dtype=float), (x.shape[0],))
    return _fixed_log_capital(x, m) >= math.log(1.0 / alpha)


def _exact_lower(x: np.ndarray, alpha: float) -> np.ndarray:
    """The bisection of ``fixed_bet_limits`` on the reference verdicts."""
    lo, hi = np.zeros(x.shape[0]), np.ones(x.shape[0])
    for _ in range(_FIXED_BISECTIONS):
        mid = 0.5 * (lo + hi)
        rej = _exact(x, mid, alpha)
        lo, hi = np.where(rej, mid, lo), np.where(rej, hi, mid)
    return lo


def _exact_limits(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - level) / 2.0
    mean = x.mean(axis=-1)
    low = np.fmin(_exact_lower(x, alpha), mean)
    return low, np.fmax(1.0 - _exact_lower(1.0 - x, alpha), mean)


_VALUES = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 0.25, 0.75]), st.floats(0.0, 1.0))


@st.composite
def _rows_and_means(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Rows of values in [0, 1] (with exact 0s and 1s) and a tested mean per row.

    The means are anywhere in [0, 1], at 0, 1 or next to 0, a hair from the
    row's mean, or a hair from the row's lower fixed-bet limit, where the
    capital is at the threshold and only the full computation can tell.
    """
    rows = draw(st.integers(1, 6))
    n = draw(st.integers(1, 200))
    if draw(st.booleans()):
        x = draw(hnp.arrays(float, (rows, n), elements=_VALUES))
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        x = rng.beta(rng.uniform(0.2, 5), rng.uniform(0.2, 5), (rows, n))
        if draw(st.booleans()):
            x = np.round(x * 4) / 4  # ties, 0s and 1s
    kind = draw(st.sampled_from(["any", "edge", "mean", "limit"]))
    if kind == "any":
        m = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=rows, max_size=rows)))
    elif kind == "edge":
        edges = [0.0, 1.0, 5e-324, 1e-300, 1e-8, 2.0**-40]
        m = np.array(draw(st.lists(st.sampled_from(edges), min_size=rows, max_size=rows)))
    else:
        m = x.mean(axis=1) if kind == "mean" else _exact_lower(x, 0.025)
        hair = draw(st.sampled_from([-1e-12, -(2.0**-40), 0.0, 2.0**-40, 1e-12]))
        m = np.clip(m + hair, 0.0, 1.0)
        m = np.nextafter(m, draw(st.sampled_from([0.0, 1.0]))) if draw(st.booleans()) else m
    return x, m


@settings(max_examples=300, deadline=None)
@given(_rows_and_means(), st.floats(1e-6, 0.5, exclude_max=True), st.sampled_from([1e-6, 0.0]))
def test_bounded_verdicts_are_the_full_capitals_verdicts(data, alpha, sure) -> None:
    # with _SURE = 0 only the margin for rounding separates the bounds from
    # the threshold, which must be enough on its own
    x, m = data
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_scores, "_SURE", sure)
        got = _fixed_rejects(x, m, alpha)
        tried = np.ones(x.shape[0], dtype=bool)
        again = _fixed_rejects(x, m, alpha, bounds=tried)
    assert np.array_equal(got, _exact(x, m, alpha))
    assert np.array_equal(again, got)


def test_a_scalar_mean_is_every_rows_mean() -> None:
    x = np.random.default_rng(1).beta(2, 2, (50, 30))
    assert np.array_equal(
        _fixed_rejects(x, 0.45, 0.025), _fixed_rejects(x, np.full(50, 0.45), 0.025)
    )


def test_no_rows_and_no_values() -> None:
    assert _fixed_rejects(np.empty((0, 5)), np.empty(0), 0.025).shape == (0,)
    assert np.array_equal(
        _fixed_rejects(np.empty((3, 0)), 0.5, 0.025), _exact(np.empty((3, 0)), 0.5, 0.025)
    )


def test_rows_at_a_mean_of_0_are_left_to_the_full_capital() -> None:
    # x / 0 is inf (NaN for 0 / 0): the bounds are not finite and decide nothing
    x = np.array([[0.5, 1.0], [0.0, 1.0], [0.0, 0.0], [1e-320, 1.0]])
    assert _fixed_rejects(x, 0.0, 0.025).tolist() == _exact(x, 0.0, 0.025).tolist()
    assert _fixed_rejects(x, 0.0, 0.025).tolist() == [True, False, False, True]


def test_rows_the_bounds_leave_are_no_longer_bounded() -> None:
    # where ``bounds`` is given, the rows it marks are bounded first and it is
    # cleared for those the bounds did not settle; unmarked rows are worked out
    rng = np.random.default_rng(2)
    x = rng.beta(2, 1, (400, 40))
    m = np.concatenate([np.full(200, 0.3), _exact_lower(x[200:], 0.025)])
    tried = np.ones(400, dtype=bool)
    tried[:10] = False
    got = _fixed_rejects(x, m, 0.025, bounds=tried)
    assert np.array_equal(got, _exact(x, m, 0.025))
    assert not tried[:10].any()
    assert tried[10:200].all()  # far from the threshold: settled
    assert not tried[200:].any()  # at the threshold: worked out in full


def test_rows_near_the_threshold_are_worked_out_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    # a planner's simulated experiments at a gain the test just detects, with the
    # bounds made to decide nothing on a wide band about the threshold
    rng = np.random.default_rng(0)
    diffs = np.clip(rng.normal(0.09, 0.3, (4000, 100)), -1.0, 1.0)
    x = (diffs + 1.0) / 2.0
    m = 0.5 + 2.0**-41
    assert np.array_equal(_fixed_rejects(x, m, 0.025), _exact(x, m, 0.025))
    monkeypatch.setattr(_scores, "_SURE", 2.0)
    got = _fixed_rejects(x, m, 0.025)
    assert np.array_equal(got, _exact(x, m, 0.025))
    assert 0 < got.mean() < 1


def _bounded_errors(x: np.ndarray, m: np.ndarray) -> int:
    """Rows the bounds settle wrongly at thresholds a few floats from the full log capital."""
    capital = _fixed_log_capital(x, m)
    wrong = 0
    for i, value in enumerate(capital):
        for threshold in (value, *np.nextafter(value, [-np.inf, np.inf])):
            got, settled = _scores._fixed_bounded(x[i : i + 1], m[i : i + 1], float(threshold))
            wrong += int(settled[0] and got[0] != (value >= threshold))
    return wrong


def test_the_margin_covers_the_rounding_of_both_computations(monkeypatch) -> None:
    # Tested well below their values, long rows' capital is the largest bets',
    # which both computations work out, summing in different orders: the bounds
    # are as tight as the rounding, and only the margin for it keeps them from
    # settling a row the full capital puts on the other side of the threshold.
    x = np.random.default_rng(0).uniform(0.6, 1.0, (200, 100))
    m = np.full(200, 0.3)
    monkeypatch.setattr(_scores, "_SURE", 0.0)
    assert _bounded_errors(x, m) == 0
    monkeypatch.setattr(_scores, "_EPS", 0.0)
    assert _bounded_errors(x, m) > 0


def _count_full(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows that reach the full capital, counted as they go."""
    full: list[int] = []

    def counted(x: np.ndarray, m: np.ndarray) -> np.ndarray:
        full.append(len(x))
        return _fixed_log_capital(x, m)

    monkeypatch.setattr(_scores, "_fixed_log_capital", counted)
    return full


def test_the_bounds_settle_almost_every_row_of_a_planners_experiments(monkeypatch) -> None:
    # The point of the bounds: at the default margin, few of a planner's rows need
    # the full capital (fewer than 0.05% on the score planner's own simulations;
    # here 1 in 4,000), so the shortcut cannot silently fall back on every row.
    rng = np.random.default_rng(0)
    x = (np.clip(rng.normal(0.09, 0.3, (4000, 100)), -1.0, 1.0) + 1.0) / 2.0
    want = _exact(x, 0.5 + 2.0**-41, 0.025)
    full = _count_full(monkeypatch)
    got = _fixed_rejects(x, 0.5 + 2.0**-41, 0.025)
    assert np.array_equal(got, want)
    assert sum(full) <= 0.01 * len(x)


def test_the_bounds_settle_a_bisections_first_steps(monkeypatch) -> None:
    # 40 steps of 2,000 rows: far from the limit the bounds settle a step's rows,
    # close to it (within _SURE of the threshold, from the 20s) none; a row the
    # bounds leave is worked out in full from then on, so some 70% of the
    # steps' rows reach the full capital, not all
    x = np.random.default_rng(3).beta(2, 1, (2000, 20))
    want = _exact_lower(x, 0.025)
    full = _count_full(monkeypatch)
    assert np.array_equal(_fixed_lower(x, 0.025), want)
    assert 0.5 * _FIXED_BISECTIONS * len(x) < sum(full) < 0.85 * _FIXED_BISECTIONS * len(x)


# fixed_bet_limits(np.array([row]), level) at evalstats 7ef618b, before the
# bounds decided the bisection (every verdict worked out in full), float.hex
_ROWS = {
    "one 0": [0.0],
    "one 1": [1.0],
    "one half": [0.5],
    "0 and 1": [0.0, 1.0],
    "five 1s": [1.0] * 5,
    "five 0s": [0.0] * 5,
    "three 0s, a 1": [0.0, 0.0, 0.0, 1.0],
    "quarters": [0.25, 0.5, 0.75, 1.0, 1.0, 0.0],
    "20 spread": [(i * 37 % 101) / 100 for i in range(20)],
    "200 squares": [(i * i % 17) / 16 for i in range(200)],
    "200 alternating": [float(i % 2) for i in range(200)],
    "199 1s, a 0": [1.0] * 199 + [0.0],
    "2000 golden": [(i * 0.6180339887) % 1.0 for i in range(2000)],
}
_LIMITS = [
    (0.95, "one 0", "0x0.0p+0", "0x1.fe87003dc0000p-1"),
    (0.95, "one 1", "0x1.78ffc24000000p-9", "0x1.0000000000000p+0"),
    (0.95, "one half", "0x1.78ffc24000000p-10", "0x1.ff43801ee0000p-1"),
    (0.95, "0 and 1", "0x1.2d3eea7000000p-10", "0x1.ff69608ac8000p-1"),
    (0.95, "five 1s", "0x1.0c6f788acc000p-2", "0x1.0000000000000p+0"),
    (0.95, "five 0s", "0x0.0p+0", "0x1.79c843ba9a000p-1"),
    (0.95, "three 0s, a 1", "0x1.2c7d98c000000p-11", "0x1.df95d97ede000p-1"),
    (0.95, "quarters", "0x1.bedccdc860000p-4", "0x1.e7f6b611e2000p-1"),
    (0.95, "20 spread", "0x1.01cae984c4000p-2", "0x1.6ddd517a9a000p-1"),
    (0.95, "200 squares", "0x1.a59f999370000p-2", "0x1.2e5e470590000p-1"),
    (0.95, "200 alternating", "0x1.826df7fd00000p-2", "0x1.3ec9040180000p-1"),
    (0.95, "199 1s, a 0", "0x1.e7e7580a66000p-1", "0x1.fffe82f93c000p-1"),
    (0.95, "2000 golden", "0x1.e85809dd6c000p-2", "0x1.0bcc8fa2b0000p-1"),
    (0.5, "one 0", "0x0.0p+0", "0x1.ed7e870abe000p-1"),
    (0.5, "one 1", "0x1.28178f5420000p-5", "0x1.0000000000000p+0"),
    (0.5, "one half", "0x1.28178f5400000p-6", "0x1.f6bf438560000p-1"),
    (0.5, "0 and 1", "0x1.d2fc2d7280000p-7", "0x1.f8b40f4a36000p-1"),
    (0.5, "five 1s", "0x1.d4b0750268000p-2", "0x1.0000000000000p+0"),
    (0.5, "five 0s", "0x0.0p+0", "0x1.15a7c57ecc000p-1"),
    (0.5, "three 0s, a 1", "0x1.caded0d500000p-8", "0x1.ad4a425d0a000p-1"),
    (0.5, "quarters", "0x1.954be35628000p-3", "0x1.cc4ce7ffc0000p-1"),
    (0.5, "20 spread", "0x1.39eebd4ee4000p-2", "0x1.51d8e8ea5c000p-1"),
    (0.5, "200 squares", "0x1.bda88fc480000p-2", "0x1.220b422832000p-1"),
    (0.5, "200 alternating", "0x1.a158d55258000p-2", "0x1.2f539556d4000p-1"),
    (0.5, "199 1s, a 0", "0x1.ef844b742e000p-1", "0x1.ffef6c967a000p-1"),
    (0.5, "2000 golden", "0x1.ee9f18b50c000p-2", "0x1.08a902a1f4000p-1"),
    (0.99, "one 0", "0x0.0p+0", "0x1.ffb5f1caf6000p-1"),
    (0.99, "one 1", "0x1.2838d42800000p-11", "0x1.0000000000000p+0"),
    (0.99, "one half", "0x1.2838d42000000p-12", "0x1.ffdaf8e57c000p-1"),
    (0.99, "0 and 1", "0x1.d9d655c000000p-13", "0x1.ffe2629aa4000p-1"),
    (0.99, "five 1s", "0x1.7d7cda1d70000p-3", "0x1.0000000000000p+0"),
    (0.99, "five 0s", "0x0.0p+0", "0x1.a0a0c978a4000p-1"),
    (0.99, "three 0s, a 1", "0x1.d9276b4000000p-14", "0x1.eda4955534000p-1"),
    (0.99, "quarters", "0x1.39f81ca740000p-4", "0x1.f0a8c172f6000p-1"),
    (0.99, "20 spread", "0x1.cfa2811878000p-3", "0x1.7b8178bfc4000p-1"),
    (0.99, "200 squares", "0x1.9a447831ec000p-2", "0x1.344f90d0b0000p-1"),
    (0.99, "200 alternating", "0x1.72d8f50410000p-2", "0x1.4693857df8000p-1"),
    (0.99, "199 1s, a 0", "0x1.e360ec832e000p-1", "0x1.ffffb47ade000p-1"),
    (0.99, "2000 golden", "0x1.e4f90dd508000p-2", "0x1.0d7c025d92000p-1"),
    (0.999998, "one 0", "0x0.0p+0", "0x1.fffffc39a6000p-1"),
    (0.999998, "one 1", "0x1.e32d000000000p-24", "0x1.0000000000000p+0"),
    (0.999998, "one half", "0x1.e32c000000000p-25", "0x1.fffffe1cd4000p-1"),
    (0.999998, "0 and 1", "0x1.8288000000000p-25", "0x1.fffffe7d78000p-1"),
    (0.999998, "five 1s", "0x1.0e3a9bfc80000p-5", "0x1.0000000000000p+0"),
    (0.999998, "five 0s", "0x0.0p+0", "0x1.ef1c564038000p-1"),
    (0.999998, "three 0s, a 1", "0x1.8210000000000p-26", "0x1.fef5d2a99c000p-1"),
    (0.999998, "quarters", "0x1.b572b75c00000p-7", "0x1.fe4a0798e6000p-1"),
    (0.999998, "20 spread", "0x1.1a9461adb8000p-3", "0x1.ad50f443ea000p-1"),
    (0.999998, "200 squares", "0x1.716c1bca70000p-2", "0x1.491cf7fdf4000p-1"),
    (0.999998, "200 alternating", "0x1.340c757f60000p-2", "0x1.65f9c54050000p-1"),
    (0.999998, "199 1s, a 0", "0x1.ccfec1705a000p-1", "0x1.fffffffc26000p-1"),
    (0.999998, "2000 golden", "0x1.d9d3bd02e4000p-2", "0x1.130e855f92000p-1"),
]


@pytest.mark.parametrize(("level", "name", "low", "high"), _LIMITS)
def test_fixed_bet_limits_are_bit_for_bit_as_before(level, name, low, high) -> None:
    got_low, got_high = fixed_bet_limits(np.array([_ROWS[name]]), level)
    assert (float(got_low[0]), float(got_high[0])) == (float.fromhex(low), float.fromhex(high))


@pytest.mark.parametrize(
    ("seed", "shape", "level"),
    [(0, (300, 20), 0.95), (1, (40, 500), 0.95), (2, (500, 1), 0.9), (3, (200, 7), 1 - 2e-6)],
)
def test_fixed_bet_limits_are_the_full_capitals_bisection(seed, shape, level) -> None:
    rng = np.random.default_rng(seed)
    x = rng.beta(rng.uniform(0.3, 3), rng.uniform(0.3, 3), shape)
    x[: shape[0] // 4] = np.round(x[: shape[0] // 4] * 3) / 3  # ties, 0s and 1s
    low, high = fixed_bet_limits(x, level)
    want_low, want_high = _exact_limits(x, level)
    assert np.array_equal(low, want_low)
    assert np.array_equal(high, want_high)


@pytest.mark.slow
def test_long_runs_where_the_margin_grows_with_the_rounding(monkeypatch) -> None:
    # At 30,000 values a row's log capital sums terms whose absolute values add
    # up to some 10**5, and the rounding the margin must cover, 2 eps (n + 16)
    # times that, passes _SURE: the limits are still the full capital's
    x = np.random.default_rng(4).beta(2, 1, (3, 30_000))
    low, high = fixed_bet_limits(x, 0.95)
    want_low, want_high = _exact_limits(x, 0.95)
    assert np.array_equal(low, want_low)
    assert np.array_equal(high, want_high)
    monkeypatch.setattr(_scores, "_SURE", 0.0)
    assert np.array_equal(fixed_bet_limits(x, 0.95)[0], want_low)
