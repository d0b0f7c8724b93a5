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


# --- text for the checks' property tests ------------------------------------


@st.composite
def word_chars_text(draw: st.DrawFn, max_size: int = 8) -> str:
    """A non-empty run of characters that regex ``\\w`` treats as word characters."""
    import re

    word = re.compile(r"\w")
    alphabet = st.characters(categories=["L", "Nd", "Nl", "No"]).filter(
        lambda c: bool(word.match(c))
    )
    return draw(st.text(alphabet, min_size=1, max_size=max_size))


def whitespace_runs() -> st.SearchStrategy[str]:
    """A non-empty run of Unicode whitespace (what ``str.split()`` splits on)."""
    return st.text(st.sampled_from(_unicode_spaces()), min_size=1, max_size=4)


def _unicode_spaces() -> list[str]:
    import sys

    global _SPACES
    if _SPACES is None:
        _SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    return _SPACES


_SPACES: list[str] | None = None


def json_keys() -> st.SearchStrategy[str]:
    """A JSON object key without dots (dots separate nested keys in ``is_json_with``)."""
    return st.text(min_size=1, max_size=6).filter(lambda k: "." not in k)


@st.composite
def clustered_outcomes(
    draw: st.DrawFn, min_clusters: int = 1, max_clusters: int = 15
) -> tuple[list[float], list[int]]:
    """Outcomes in [0, 1] (mostly 0/1) with a case label each; at least one outcome."""
    n_clusters = draw(st.integers(min_clusters, max_clusters))
    outcomes: list[float] = []
    labels: list[int] = []
    values = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1))
    for c in range(n_clusters):
        runs = draw(st.lists(values, min_size=1, max_size=6))
        outcomes += runs
        labels += [c] * len(runs)
    return outcomes, labels

# --- power and planning ---------------------------------------------------------

#: A true pass rate, including the ends 0 and 1.
rates = st.one_of(
    st.sampled_from([0.0, 1.0, 0.5]),
    # (scipy's binom.pmf, the tests' reference, overflows for p near 1e-308)
    st.floats(1e-12, 1.0 - 1e-12),
)

#: An intra-case correlation for the case model.
iccs = st.floats(0.0, 0.9, allow_nan=False)
