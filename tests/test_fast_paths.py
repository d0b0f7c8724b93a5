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
