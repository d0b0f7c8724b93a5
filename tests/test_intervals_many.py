"""The per-case intervals computed for all cases at once equal the scalar ones.

``paired_diff_cis``, ``diff_cis`` (one vectorised pass) and ``wilson_cis``
(each distinct count once) give, case by case, what ``paired_diff_ci``,
``diff_ci`` and ``wilson_ci`` give on that case alone: the same estimate and
limits (to 1e-12), the same method and the same note. So do the per-case rows
of a comparison, which are made from them.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.stats._compare import _mcnemar_pvalue, _paired_rows
from evalstats.stats._discrete import mcnemar_attainable
from evalstats.stats._intervals import diff_ci, diff_cis, paired_diff_ci, paired_diff_cis
from evalstats.stats._smallstats import wilson_ci, wilson_cis

LEVELS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
SMALL = st.integers(0, 12)


def _same(many, one) -> None:
    for name in ("estimate", "low", "high"):
        x, y = float(getattr(many, name)), float(getattr(one, name))
        assert (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-12, (name, x, y)
        assert type(getattr(many, name)) is float
    assert (many.level, many.method, many.difference, many.note) == (
        one.level,
        one.method,
        one.difference,
        one.note,
    )


tables = st.lists(st.tuples(SMALL, SMALL, SMALL, SMALL), min_size=0, max_size=40)


@settings(max_examples=150, deadline=None)
@given(tables, LEVELS, st.sampled_from(["newcombe", "tango_cc", "wald"]))
def test_paired_diff_cis_are_paired_diff_ci_case_by_case(cells, level, method):
    columns = [[t[k] for t in cells] for k in range(4)]
    many = paired_diff_cis(*columns, level=level, method=method)
    assert len(many) == len(cells)
    for table, ci in zip(cells, many, strict=True):
        _same(ci, paired_diff_ci(*table, level=level, method=method))


counts = st.tuples(SMALL, SMALL, SMALL, SMALL).map(
    lambda t: (min(t[0], t[1]), t[1], min(t[2], t[3]), t[3])
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(counts, max_size=40),
    LEVELS,
    st.sampled_from(["newcombe", "newcombe_cc", "agresti_caffo", "wald"]),
)
def test_diff_cis_are_diff_ci_case_by_case(cells, level, method):
    columns = [np.array([t[k] for t in cells], dtype=np.int64) for k in range(4)]
    many = diff_cis(*columns, level=level, method=method)
    assert len(many) == len(cells)
    for (ka, na, kb, nb), ci in zip(cells, many, strict=True):
        _same(ci, diff_ci(ka, na, kb, nb, level=level, method=method))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(SMALL, SMALL).map(lambda t: (min(t), max(t))), max_size=60), LEVELS)
def test_wilson_cis_are_wilson_ci_case_by_case(cells, level):
    many = wilson_cis([k for k, _ in cells], [n for _, n in cells], level)
    for (k, n), ci in zip(cells, many, strict=True):
        _same(ci, wilson_ci(k, n, level))


@settings(max_examples=100, deadline=None)
@given(tables, LEVELS)
def test_a_comparisons_rows_are_each_cases_own(cells, level):
    cases = [f"c{i}" for i in range(len(cells))]
    rows, attainable = _paired_rows(cases, cells, level)
    for case, (a, b, c, d), row, sets in zip(cases, cells, rows, attainable, strict=True):
        assert (row.case, row.passes_a, row.trials_a, row.passes_b, row.trials_b) == (
            case,
            a + b,
            a + b + c + d,
            a + c,
            a + b + c + d,
        )
        _same(row.difference, paired_diff_ci(a, b, c, d, level=level, method="newcombe"))
        assert row.pvalue == float(_mcnemar_pvalue(b, c))
        assert sets.tolist() == mcnemar_attainable(b + c).tolist()
