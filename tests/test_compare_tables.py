"""The paired comparison from each case's 2 x 2 table, never from one object per pair.

``compare`` (outcomes) and the comparison of a results file (the tally's
one-byte outcome codes) both reach the comparison through the per-case tables
of paired outcomes; these tests check that the tables give exactly the
comparison of the outcomes they count, that the clustered interval from the
tables is the one of :func:`evalstats.stats._intervals.clustered_paired_diff_ci` on
the pairs themselves, and that comparing a file holds no object per pair.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from records import samples
from strategies import paired_run_outcomes, results_manifest, write_results_file

from evalstats.deciding._compare_results import compare_results
from evalstats.errors import InvalidArgument
from evalstats.reading._source import tally
from evalstats.stats._compare import _clustered_tables, _compare_tables, compare
from evalstats.stats._intervals import clustered_paired_diff_ci


def same(x, y, path="") -> None:
    """Equal in every field, recursively; NaN equals NaN, and a float must match exactly."""
    assert type(x) is type(y), f"{path}: {type(x).__name__} != {type(y).__name__}"
    if dataclasses.is_dataclass(x):
        for f in dataclasses.fields(x):
            same(getattr(x, f.name), getattr(y, f.name), f"{path}.{f.name}")
    elif isinstance(x, tuple | list):
        assert len(x) == len(y), path
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            same(u, v, f"{path}[{i}]")
    elif isinstance(x, float) and math.isnan(x):
        assert math.isnan(y), f"{path}: {x!r} != {y!r}"
    else:
        assert x == y, f"{path}: {x!r} != {y!r}"


def counted(a: dict[str, list[bool]], b: dict[str, list[bool]]) -> list[tuple[int, ...]]:
    """Each case's table (both, only A, only B, neither), counted pair by pair."""
    tables = []
    for case in a:
        cells = [0, 0, 0, 0]
        for x, y in zip(a[case], b[case], strict=True):
            if x and y:
                cells[0] += 1
            elif x:
                cells[1] += 1
            elif y:
                cells[2] += 1
            else:
                cells[3] += 1
        tables.append(tuple(cells))
    return tables


@st.composite
def paired_outcomes(draw, max_cases: int = 7, max_runs: int = 12):
    """Outcomes of A and B, paired: the same cases, each with as many repeats under both."""
    cases = [f"c{i}" for i in range(draw(st.integers(1, max_cases)))]
    runs = {c: draw(st.integers(1, max_runs)) for c in cases}
    rate = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    shift = draw(st.sampled_from([-0.3, 0.0, 0.2]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = {c: [bool(x) for x in rng.random(runs[c]) < rate] for c in cases}
    b = {c: [bool(x) for x in rng.random(runs[c]) < rate + shift] for c in cases}
    return a, b


def test_the_tables_are_counted_pair_by_pair():
    a = {"x": [True, True, False, False, True]}
    b = {"x": [True, False, True, False, True]}
    assert counted(a, b) == [(2, 1, 1, 1)]


@settings(max_examples=120, deadline=None)
@given(
    outcomes=paired_outcomes(),
    method=st.sampled_from([None, "mcnemar", "clustered", "newcombe", "overlap", "ztest"]),
    about=st.sampled_from([None, "these_cases", "cases_like_these"]),
    paired=st.sampled_from([None, True, False]),
    level=st.sampled_from([0.9, 0.95]),
    adjust=st.sampled_from(["discrete_holm", "tarone", "holm", "none"]),
)
def test_the_tables_give_exactly_the_comparison_of_the_outcomes(
    outcomes, method, about, paired, level, adjust
):
    a, b = outcomes
    kwargs = dict(method=method, about=about, paired=paired, level=level, adjust=adjust)
    try:
        expected = compare(a, b, **kwargs)
    except InvalidArgument as error:  # the same refusal, in the same words
        with pytest.raises(InvalidArgument) as raised:
            _compare_tables(list(a), counted(a, b), **kwargs)
        assert str(raised.value) == str(error)
        return
    same(_compare_tables(list(a), counted(a, b), **kwargs), expected)


@settings(max_examples=150, deadline=None)
@given(outcomes=paired_outcomes(max_cases=12, max_runs=30), level=st.sampled_from([0.8, 0.95]))
def test_the_clustered_interval_of_the_tables_is_the_one_of_the_pairs(outcomes, level):
    # Reference: evalstats.stats._intervals.clustered_paired_diff_ci, which takes one
    # outcome per pair and sums residuals pair by pair.
    a, b = outcomes
    cases = list(a)
    xa = np.concatenate([a[c] for c in cases])
    xb = np.concatenate([b[c] for c in cases])
    labels = np.concatenate([np.full(len(a[c]), i) for i, c in enumerate(cases)])
    ref = clustered_paired_diff_ci(xa, xb, labels, level=level)
    got = _clustered_tables(counted(a, b), level)
    assert got.estimate == ref.estimate
    assert (got.method, got.clusters, got.level, got.note) == (
        ref.method,
        ref.clusters,
        ref.level,
        ref.note,
    )
    for key in ("low", "high", "se", "df", "design_effect"):
        x, y = float(getattr(got, key)), float(getattr(ref, key))
        assert x == pytest.approx(y, rel=1e-9, abs=1e-12, nan_ok=True), key


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    outcomes=paired_run_outcomes(max_cases=6, max_runs=6),
    drop=st.integers(0, 4),
    method=st.sampled_from(["newcombe", "overlap", "ztest"]),
)
def test_a_results_file_compares_as_its_pairs_listed_one_by_one(tmp_path, outcomes, drop, method):
    # The tally's codes are paired by counting (evalstats.deciding._compare_results._pairs);
    # here the pairs are listed one by one and handed to compare().
    cases = list(outcomes["A"])
    runs = len(outcomes["A"][cases[0]])
    records = samples(outcomes, name="c")
    records = records[: len(records) - drop]  # a run stopped early: some slots have no record
    path = write_results_file(
        tmp_path / "r.jsonl", results_manifest(cases, ["A", "B"], runs), records
    )
    seen = {(r["variant"], r["case"], r["repeat"]) for r in records}

    def outcome(v, c, r):
        return outcomes[v][c][r] if (v, c, r) in seen else "missing"

    xa: dict[str, list[bool]] = {}
    xb: dict[str, list[bool]] = {}
    unmeasured = missing = 0
    for c in cases:
        for r in range(runs):
            x, y = outcome("A", c, r), outcome("B", c, r)
            if x is None or y is None:
                unmeasured += 1
            elif "missing" in (x, y):
                missing += 1
            else:
                xa.setdefault(c, []).append(x)
                xb.setdefault(c, []).append(y)
    got = compare_results(str(path), "A", "B")
    assert (got.pairs, got.dropped_unmeasured, got.dropped_missing) == (
        sum(len(v) for v in xa.values()),
        unmeasured,
        missing,
    )
    if not xa:
        assert got.these_cases is None and got.cases_like_these is None
        return
    same(got.these_cases, compare(xa, xb, paired=True, method="mcnemar"))
    if len(xa) >= 2:
        same(got.cases_like_these, compare(xa, xb, paired=True, method="clustered"))
    else:
        assert got.cases_like_these is None

    # The measured samples as independent samples, by case.
    def measured(variant):
        rows = {c: [outcome(variant, c, r) for r in range(runs)] for c in cases}
        rows = {c: [x for x in row if x in (True, False)] for c, row in rows.items()}
        return {c: row for c, row in rows.items() if row}

    ma, mb = measured("A"), measured("B")
    if ma and mb:
        primary = compare_results(str(path), "A", "B", method=method).primary
        same(primary, compare(ma, mb, paired=False, method=method))


def _many_pairs(runs: int, cases=("x", "y")):
    """The records of a run of two variants on two cases, made one at a time."""
    yield results_manifest(list(cases), ["A", "B"], runs)
    passed = [{"check": "c", "axis": None, "status": "passed", "reason": ""}]
    failed = [{"check": "c", "axis": None, "status": "failed", "reason": ""}]
    for r in range(runs):
        for i, c in enumerate(cases):
            for v, rate in (("A", 6), ("B", 7)):
                ok = (r * 7 + i * 3 + (v == "B") * 5) % 10 < rate
                yield {"type": "sample", "case": c, "variant": v, "repeat": r,
                       "status": "completed", "checks": passed if ok else failed}  # fmt: skip


def _comparison_peak(runs: int) -> tuple[int, int]:
    counts = tally(_many_pairs(runs))
    tracemalloc.start()
    try:
        pairs = compare_results(counts, "A", "B").pairs
        return tracemalloc.get_traced_memory()[1], pairs
    finally:
        tracemalloc.stop()


def test_comparing_a_file_holds_no_object_per_pair():
    # Two Python lists of one bool per pair, one per side, would alone take 16
    # bytes a pair (a list entry is a pointer); the comparison of the pairs as
    # lists took about 120 bytes a pair. Counting them into per-case tables
    # takes about 5 (the tally's slots and codes, one byte each, and working
    # arrays of a fixed size).
    _comparison_peak(50)  # imports and caches
    small, few = _comparison_peak(1_000)
    large, many = _comparison_peak(40_000)
    assert (few, many) == (2_000, 80_000)
    per_pair = (large - small) / (many - few)
    assert per_pair < 16, f"the comparison's peak grew {per_pair:.1f} bytes a pair"


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{f}", "--a", "A", "--b", "B"],
        ["compare", "{f}", "--a", "A", "--b", "B", "--about", "these-cases"],
        [
            "gate",
            "{f}",
            "--allow-unfinished",
            "--variant",
            "B",
            "--min-pass",
            "0.5",
            "--no-regression-vs",
            "A",
            "--margin",
            "0.05",
        ],
    ],
)
def test_a_clear_comparison_imports_no_scipy(tmp_path, argv):
    # The exact McNemar p-values are summed in integers
    # (evalstats.stats._binomial.mcnemar_pvalue_exact) and the betting interval is
    # numpy's: scipy.special alone takes about 0.2 s to import. (A "can't
    # tell" verdict still imports it, for the difference the trials would
    # detect.)
    import subprocess
    import sys

    rng = np.random.default_rng(3)
    outcomes = {
        v: {f"c{i}": [bool(x) for x in rng.random(20) < p] for i in range(20)}
        for v, p in (("A", 0.3), ("B", 0.95))
    }
    path = write_results_file(
        tmp_path / "r.jsonl",
        results_manifest(list(outcomes["A"]), ["A", "B"], 20),
        samples(outcomes, name="c"),
    )
    code = (
        "import sys\n"
        "from evalstats.cli._main import main\n"
        "code = main(sys.argv[1:])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'scipy')\n"
        "assert not loaded, f'scipy was imported: {loaded[:3]}'\n"
        "sys.exit(code)\n"
    )
    argv = [a.format(f=path) for a in argv]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv, "--json"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out.get("verdict") == "b_better" or out.get("passed") is True


def test_the_quantiles_and_tails_are_the_functions_scipy_stats_calls():
    # compare's detectable differences and clustered t test call scipy.special
    # directly; scipy.stats.norm and t evaluate these very functions.
    from scipy.special import ndtr, stdtr, stdtrit
    from scipy.stats import norm, t

    x = np.linspace(-8, 8, 161)
    assert np.array_equal(ndtr(x), norm.cdf(x))
    for df in (1.0, 2.5, 4.0, 17.3, 199.0):
        q = np.array([0.5, 0.8, 0.9, 0.95, 0.975, 0.995])
        assert np.array_equal(stdtrit(df, q), t.ppf(q, df))
        assert np.array_equal(stdtr(df, -np.abs(x)), t.sf(np.abs(x), df))


def test_a_cant_tell_comparison_of_many_pairs_imports_no_scipy_stats(tmp_path):
    # Over 2,000 pairs the detectable difference of McNemar's test is Connor's
    # normal approximation: its normal CDF is scipy.special's, so a "can't
    # tell" no longer waits about 0.5 s and 50 MB for scipy.stats.
    import subprocess
    import sys

    rng = np.random.default_rng(4)
    outcomes = {
        v: {c: [bool(x) for x in rng.random(1_100) < 0.6] for c in ("x", "y")} for v in "AB"
    }
    path = write_results_file(
        tmp_path / "r.jsonl",
        results_manifest(["x", "y"], ["A", "B"], 1_100),
        samples(outcomes, name="c"),
    )
    code = (
        "import sys\n"
        "from evalstats.deciding._compare_results import compare_results\n"
        "c = compare_results(sys.argv[1], 'A', 'B')\n"
        "assert c.these_cases.verdict == 'cant_tell' and c.pairs == 2200, c\n"
        "assert c.these_cases.detectable > 0\n"
        "assert 'scipy.stats' not in sys.modules, 'scipy.stats was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
