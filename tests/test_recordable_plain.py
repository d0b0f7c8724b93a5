"""recordable's fast path (nothing to rewrite) gives exactly what the full walk gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evalstats.results._recordable import MAX_DEPTH, _Walk, recordable

texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF), max_size=8)
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | texts | st.just("é")
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(texts | st.integers() | st.floats(), inner, max_size=4)
    ),
    max_leaves=20,
)


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


def walked(value: Any, strict: bool) -> tuple[Any, list[str]]:
    walk = _Walk(strict)
    return walk.value(value, "value", 0), walk.notes


def same(a: Any, b: Any) -> bool:
    """Equal, NaN included, and of the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@given(values, st.booleans())
def test_the_fast_path_matches_the_walk(value: Any, strict: bool) -> None:
    got, notes = recordable(value, strict=strict)
    want, want_notes = walked(value, strict)
    assert notes == want_notes
    assert same(got, want)
    assert (got is value) == (want is value)  # the caller's own object when nothing changes


def test_the_fast_path_leaves_what_needs_rewriting_to_the_walk() -> None:
    deep: Any = "x"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    for value in ({"a": "\ud800"}, [float("nan")], {float("inf"): 1}, ("t",), deep, [Opaque()]):
        got, notes = recordable(value)
        assert got is not value and same((got, notes), walked(value, False)), value


_opaque = Opaque()


def test_an_opaque_object_is_left_alone_when_strict() -> None:
    value = [_opaque]
    assert recordable(value, strict=True) == (value, [])
    assert recordable(value) == (
        ["Opaque()"],
        ["value[0]: a Opaque is not JSON; written as its repr"],
    )
