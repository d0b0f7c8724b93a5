"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

from hypothesis import strategies as st

levels = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


@st.composite
def counts(draw: st.DrawFn, max_trials: int = 500) -> tuple[int, int]:
    """A (successes, trials) pair with trials >= 1."""
    n = draw(st.integers(1, max_trials))
    k = draw(st.integers(0, n))
    return k, n


@st.composite
def paired_cells(draw: st.DrawFn, max_total: int = 300) -> tuple[int, int, int, int]:
    """Cells (both, only_a, only_b, neither) of a paired 2x2 table, total >= 1."""
    cells = draw(st.lists(st.integers(0, max_total // 4), min_size=4, max_size=4))
    if sum(cells) == 0:
        cells[draw(st.integers(0, 3))] = 1
    return tuple(cells)  # type: ignore[return-value]
