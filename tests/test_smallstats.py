"""The report's intervals of a few counts in pure Python agree with the numpy ones."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import levels, results_manifest, write_results_file

from evalstats.stats._intervals import _clustered_counts, proportion_ci
from evalstats.stats._intervals import betting_limits as numpy_betting_limits
from evalstats.stats._smallstats import PURE_CASES, betting_limits, clustered_counts, wilson_ci

TOLERANCE = 1e-12
FIELDS = ("estimate", "low", "high", "se", "df", "design_effect")


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE


@st.composite
def case_counts(draw: st.DrawFn, max_cases: int = 130) -> tuple[list[int], list[int]]:
    """Passes and runs per case: some cases with no run, rates from all-fail to all-pass."""
    runs = draw(st.lists(st.integers(0, 12), min_size=0, max_size=max_cases))
    rate = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0, None]))
    passes = [
        draw(st.integers(0, r)) if rate is None else round(rate * r)
        for r in runs  # a fixed rate gives cases of equal means: the SE-is-0 branch
    ]
    return passes, runs


@settings(max_examples=300, deadline=None)
@given(case_counts(), levels, st.sampled_from(["auto", "cr2", "betting"]))
def test_clustered_counts_agree_with_the_numpy_path(counts, level, method) -> None:
    passes, runs = counts
    ours = clustered_counts(passes, runs, level, method=method)
    ref = _clustered_counts(passes, runs, level, method=method)
    assert type(ours) is type(ref)
    assert (ours.method, ours.note, ours.clusters, ours.level, ours.difference) == (
        ref.method,
        ref.note,
        ref.clusters,
        ref.level,
        ref.difference,
    )
    for field in FIELDS:
        assert _close(getattr(ours, field), getattr(ref, field)), field
    assert str(ours) == str(ref)


def test_the_usual_few_case_run_agrees_closely() -> None:
    # The shop suite's four cases at 125 runs (benchmarks/report.py), and 99 cases,
    # the most the betting interval takes by default, with one case apart.
    for passes, runs in (([88, 112, 87, 90], [125] * 4), ([3] * 98 + [0], [5] * 99)):
        ours = clustered_counts(passes, runs, 0.95)
        ref = _clustered_counts(passes, runs, 0.95)
        assert ours.method == ref.method == "betting"
        for field in FIELDS:
            assert _close(getattr(ours, field), getattr(ref, field)), field


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=60), levels)
def test_betting_limits_agree_with_the_numpy_path(x, level) -> None:
    low, high = betting_limits(x, level)
    ref_low, ref_high = numpy_betting_limits(np.array(x), level)
    assert abs(low - float(ref_low)) <= TOLERANCE
    assert abs(high - float(ref_high)) <= TOLERANCE


def test_more_cases_than_the_pure_path_takes_go_to_numpy() -> None:
    runs = [3] * (PURE_CASES + 1)
    passes = [i % 4 for i in range(PURE_CASES + 1)]
    ours = clustered_counts(passes, runs, 0.95)
    ref = _clustered_counts(passes, runs, 0.95)
    assert (ours.low, ours.high, ours.note) == (ref.low, ref.high, ref.note)
    # cr1 has no pure path: the numpy one answers
    assert clustered_counts([1, 2], [3, 3], 0.95, method="cr1") == _clustered_counts(
        [1, 2], [3, 3], 0.95, method="cr1"
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400), levels)
def test_wilson_ci_is_proportion_ci(k, n, level) -> None:
    k = min(k, n)
    ours, ref = wilson_ci(k, n, level), proportion_ci(k, n, level=level)
    assert (ours.method, ours.level, ours.note) == (ref.method, ref.level, ref.note)
    for field in ("estimate", "low", "high"):
        a, b = getattr(ours, field), getattr(ref, field)
        assert (math.isnan(a) and math.isnan(b)) or a == b
        assert type(a) is float


def test_wilson_ci_refuses_what_proportion_ci_refuses() -> None:
    from evalstats.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="level"):
        wilson_ci(0, 0, 95)
    with pytest.raises(InvalidArgument, match="successes"):
        wilson_ci(3, 2, 0.95)


def test_a_small_report_imports_no_numpy_scipy_or_matplotlib(tmp_path) -> None:
    # A report of a few cases, one of them never measured (a Wilson interval of
    # zero trials), printed as text and as JSON, through the command; the second
    # time with the latency quantiles found as for many samples.
    samples = [
        {
            "case": c,
            "variant": v,
            "repeat": r,
            "status": "unmeasured" if c == "d" else "completed",
            "checks": []
            if c == "d"
            else [{"check": "k", "status": "passed" if (r + len(c)) % 3 else "failed"}],
            "latency_s": 0.25 + r / 100,
        }
        for c in ("a", "bb", "ccc", "d")
        for v in ("A", "B")
        for r in range(5)
    ]
    path = write_results_file(
        tmp_path / "r.jsonl", results_manifest(["a", "bb", "ccc", "d"], ["A", "B"], 5), samples
    )
    code = (
        "import sys\n"
        "from evalstats.cli._main import main\n"
        f"main(['report', {str(path)!r}])\n"
        # latency quantiles as for many samples (selected from the kept counts)
        "import evalstats.presenting._report\n"
        "sys.modules['evalstats.presenting._report']._SELECT_FROM = 1\n"
        f"main(['report', {str(path)!r}, '--json'])\n"
        "heavy = [m for m in ('numpy', 'scipy', 'matplotlib', 'statsmodels') if m in sys.modules]\n"
        "print(heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert '"schema": "evalstats.report/2"' in done.stdout  # both printed
    assert done.stderr.strip().splitlines()[-1] == "[]"
