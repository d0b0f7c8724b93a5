"""Reports and comparisons read from results files (evalstats.report, .comparison, .runs)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from records import check, sample, samples
from strategies import (
    paired_run_outcomes,
    results_manifest,
    variant_sample_records,
    write_results_file,
)

from evalstats.deciding._compare_results import compare_results
from evalstats.deciding._previous_runs import NotComparable, RunsComparison, compare_runs
from evalstats.errors import InvalidArgument
from evalstats.presenting._report import latency_summary, report
from evalstats.results._file import Results, read_results, sample_passed
from evalstats.stats._compare import compare
from evalstats.stats._intervals import clustered_mean_ci, diff_ci, proportion_ci

NI = "could not be inspected: the answer is empty"


P, F, U = "passed", "failed", "unscored"


def crafted_a() -> list[dict]:
    """Variant A of the crafted file; the expected counts are worked out in the tests."""
    x = lambda s, r="": check(s, "x", axis="content", reason=r)  # noqa: E731
    y = lambda s, r="": check(s, "y", axis="format", reason=r)  # noqa: E731
    tok = {"input": 10, "output": 5}
    return [
        # c1: pass, miss, incomplete (nothing inspected), unmeasured
        sample("c1", "A", 0, status="completed", checks=[x(P), y(P)], latency_s=1.0, tokens=tok),
        sample(
            "c1",
            "A",
            1,
            status="completed",
            checks=[x(F, "doesn't mention 'A-1'"), y(P)],
            latency_s=2.0,
            tokens=tok,
        ),
        sample(
            "c1",
            "A",
            2,
            status="incomplete",
            checks=[x(F, NI), y(F, NI)],
            latency_s=3.0,
            tokens={"input": 10, "output": None},
        ),
        sample(
            "c1",
            "A",
            3,
            status="unmeasured",
            checks=[x(U, "no answer"), y(U, "no answer")],
            latency_s=30.0,
        ),
        # c2: pass with an unscored check, all unscored (not a pass), pass, miss
        sample(
            "c2", "A", 0, status="completed", checks=[x(P), y(U, "n/a")], latency_s=4.0, tokens=tok
        ),
        sample("c2", "A", 1, status="completed", checks=[x(U, "n/a"), y(U, "n/a")], latency_s=5.0),
        sample("c2", "A", 2, status="completed", checks=[x(P), y(P)], latency_s=6.0),
        sample("c2", "A", 3, status="completed", checks=[x(P), y(F, "too long")], latency_s=7.0),
        # c3: four passes
        *[
            sample("c3", "A", r, status="completed", checks=[x(P), y(P)], latency_s=8.0 + r)
            for r in range(4)
        ],
    ]


def crafted_b() -> list[dict]:
    x = lambda s, r="": check(s, "x", axis="content", reason=r)  # noqa: E731
    out = []
    for case in ("c1", "c2", "c3"):
        for r in range(4):
            if case == "c2" and r == 1:
                out.append(sample(case, "B", r, status="unmeasured", checks=[], latency_s=60.0))
            elif case == "c3" and r == 0:
                out.append(sample(case, "B", r, status="completed", checks=[x(F, "missed")]))
            else:
                out.append(sample(case, "B", r, status="completed", checks=[x(P)]))
    return out


@pytest.fixture
def crafted(tmp_path):
    manifest = results_manifest(["c1", "c2", "c3"], ["A", "B"], 4)
    path = tmp_path / "results.jsonl"
    summary = {"status": "finished", "reason": None, "samples": 24}
    return write_results_file(path, manifest, crafted_a() + crafted_b(), summary)


# --- report denominators -------------------------------------------------------------


def test_report_counts_every_denominator(crafted):
    r = report(crafted)
    a = r.variant("A")
    # measured: 3 of c1 (one unmeasured left out), 4 of c2, 4 of c3
    assert (a.passes, a.measured) == (7, 11)
    assert (a.completed, a.incomplete, a.unmeasured, a.missing) == (10, 1, 1, 0)
    assert a.per_trial == proportion_ci(7, 11)
    outcomes = [1, 0, 0] + [1, 0, 1, 0] + [1, 1, 1, 1]
    clusters = ["c1"] * 3 + ["c2"] * 4 + ["c3"] * 4
    expected = clustered_mean_ci(outcomes, clusters)
    assert a.clustered.estimate == pytest.approx(expected.estimate)
    assert a.clustered.low == pytest.approx(expected.low)
    assert a.clustered.high == pytest.approx(expected.high)
    assert a.design_effect == pytest.approx(expected.design_effect)
    assert a.clustered.clusters == 3

    rows = {row.case: row for row in r.rows("A")}
    assert (
        rows["c1"].passes,
        rows["c1"].measured,
        rows["c1"].incomplete,
        rows["c1"].unmeasured,
    ) == (1, 3, 1, 1)
    assert (rows["c2"].passes, rows["c2"].measured) == (2, 4)
    assert (rows["c3"].passes, rows["c3"].measured) == (4, 4)
    assert rows["c1"].interval == proportion_ci(1, 3)
    assert rows["c2"].interval == proportion_ci(2, 4)
    # problems grouped by check name, not-inspected failures apart
    assert rows["c1"].problems == (("x", 2, 1), ("y", 1, 1))
    assert rows["c2"].problems == (("y", 1, 0),)
    assert rows["c3"].problems == ()

    # axes: the unmeasured sample's verdicts are not counted at all
    content, fmt = a.axes["content"], a.axes["format"]
    assert (content.passed, content.scored, content.unscored, content.not_inspected) == (
        8,
        10,
        1,
        1,
    )
    assert (fmt.passed, fmt.scored, fmt.unscored, fmt.not_inspected) == (7, 9, 2, 1)
    assert a.checks["x"] == content and a.checks["y"] == fmt

    # latency over all 12 samples, the unmeasured one (30 s) included:
    # sorted 1..11 and 30; lower middle is the 6th (6.0); nearest rank ceil(11.4) = 12th
    assert (a.latency_median, a.latency_p95, a.latency_samples) == (6.0, 30.0, 12)
    assert (a.tokens_input, a.tokens_output, a.tokens_samples) == (40, 15, 4)

    b = r.variant("B")
    assert (b.passes, b.measured, b.unmeasured) == (10, 11, 1)
    assert b.tokens_samples == 0 and b.tokens_input is None
    assert b.axes["content"].scored == 11
    assert r.status == "finished" and r.warnings == ()
    assert r.case_ids == ("c1", "c2", "c3") and r.runs == 4


def test_report_counts_scheduled_samples_never_run(tmp_path):
    manifest = results_manifest(["c1", "c2"], ["A"], 3)
    samples = [sample("c1", "A", r) for r in range(3)]
    path = write_results_file(tmp_path / "r.jsonl", manifest, samples)  # no summary
    r = report(path)
    assert r.variant("A").missing == 3
    assert r.status is None
    assert any("no summary" in w for w in r.warnings)
    row = r.rows("A")[1]
    assert (row.case, row.measured) == ("c2", 0)
    assert math.isnan(row.interval.estimate) and (row.interval.low, row.interval.high) == (0, 1)
    assert "did not finish" in str(r)


def test_report_counts_a_duplicate_slot_once(tmp_path):
    manifest = results_manifest(["c1"], ["A"], 2)
    samples = [
        sample("c1", "A", 0),
        sample("c1", "A", 0, False, missed="no"),
        sample("c1", "A", 1, False, missed="no"),
    ]
    r = report(write_results_file(tmp_path / "r.jsonl", manifest, samples))
    a = r.variant("A")
    assert (a.passes, a.measured) == (1, 2)  # the first record of the slot counts
    assert any("second sample" in w for w in r.warnings)


def test_report_says_a_clustered_interval_of_no_width_says_nothing(tmp_path):
    # Every case passes 2 of 3 runs: the case-clustered standard error is
    # exactly zero (clustered_mean_ci clears the ~1e-17 rounding leaves), which
    # says nothing about cases like these: the interval is the betting one.
    manifest = results_manifest(["c1", "c2", "c3", "c4"], ["A"], 3)
    samples = [
        sample(c, "A", r, r < 2, missed="no") for c in ("c1", "c2", "c3", "c4") for r in range(3)
    ]
    r = report(write_results_file(tmp_path / "r.jsonl", manifest, samples))
    a = r.variant("A")
    assert (a.passes, a.measured) == (8, 12)
    assert a.clustered.se == 0.0 and a.clustered.method == "betting"
    assert float(a.clustered.high) - float(a.clustered.low) > 0.5
    text = str(r)
    assert "standard error is 0 and says nothing about cases not run" in text
    assert "design effect n/a" in text
    # one case that differs gives a real interval and no such note
    samples[-1] = sample("c4", "A", 2)
    path = write_results_file(tmp_path / "s.jsonl", manifest, samples)
    text = str(report(path))
    assert "says nothing" not in text and "design effect n/a" not in text


def test_report_accepts_results_object_and_level(crafted):
    res = read_results(crafted)
    r = report(res, level=0.9)
    assert r.variant("A").per_trial == proportion_ci(7, 11, level=0.9)
    with pytest.raises(InvalidArgument, match="level=95"):
        report(res, level=95)
    with pytest.raises(InvalidArgument, match="variant='a'"):
        r.variant("a")
    with pytest.raises(InvalidArgument, match="must be a Results"):
        report(42)


def test_report_text_says_which_interval_is_which(crafted):
    text = str(report(crafted))
    assert "these cases" in text and "per-trial Wilson interval" in text
    assert "cases like these" in text and "case-clustered interval" in text
    assert "design effect" in text
    assert "unmeasured (left out of the rates)" in text
    assert "incomplete (counted as failures)" in text
    assert "had nothing to inspect" in text


def test_report_never_shows_answers(tmp_path):
    secret = "ZEBRA-ANSWER-4417"
    manifest = results_manifest(["c1"], ["A"], 2)
    samples = [
        sample(
            "c1", "A", 0, status="completed", checks=[check(P, "x", axis="content")], answer=secret
        ),
        sample(
            "c1",
            "A",
            1,
            status="incomplete",
            checks=[check(F, "x", axis="content", reason=NI)],
            answer=secret,
        ),
    ]
    samples[1]["reason"] = "the task raised ValueError: " + secret
    r = report(write_results_file(tmp_path / "r.jsonl", manifest, samples))
    assert secret not in str(r)
    assert secret not in json.dumps(r.to_dict())


def test_report_to_dict_is_json_ready(crafted):
    d = report(crafted).to_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    a = back["variants"][0]
    assert a["variant"] == "A" and a["passes"] == 7 and a["measured"] == 11
    assert a["axes"]["content"]["not_inspected"] == 1
    assert a["latency_s"] == {"median": 6.0, "p95": 30.0, "samples": 12}
    assert a["clustered"]["design_effect"] == pytest.approx(a["design_effect"])
    assert back["cases"][0]["problems"][0] == {"check": "x", "failed": 2, "not_inspected": 1}


@given(variant_sample_records())
def test_report_invariants(records):
    runs = max(s["repeat"] for s in records) + 1  # the schedule plans every repeat drawn
    manifest = results_manifest(["c1", "c2", "c3"], ["v"], runs)
    r = report(Results(None, manifest, tuple(records), None, ()))
    v = r.variant("v")
    measured = [s for s in records if s["status"] != "unmeasured"]
    assert v.measured == len(measured)
    assert v.unmeasured == len(records) - len(measured)
    assert v.completed + v.incomplete == v.measured
    assert sum(row.measured for row in r.rows("v")) == v.measured
    assert sum(row.passes for row in r.rows("v")) == v.passes
    assert sum(row.unmeasured for row in r.rows("v")) == v.unmeasured
    assert v.per_trial.to_dict() == proportion_ci(v.passes, v.measured).to_dict()
    # the report counts with the results format's own counting rule
    assert v.passes == sum(bool(sample_passed(s)) for s in records)
    # incomplete samples never pass
    incomplete = sum(row.incomplete for row in r.rows("v"))
    assert incomplete == v.incomplete and v.passes <= v.completed
    # each check's verdicts add up over the measured samples
    for name in ("x", "y", "z"):
        c = v.checks.get(name)
        total = 0 if c is None else c.scored + c.unscored
        assert total == len(measured)
        if c is not None:
            assert 0 <= c.not_inspected <= c.failed
    for axis, c in v.axes.items():
        assert c.passed <= c.scored and axis in ("content", "format")
    lat = [s["latency_s"] for s in records if s["latency_s"] is not None]
    assert v.latency_samples == len(lat)


# --- latency ------------------------------------------------------------------------------


def test_latency_on_known_lists():
    # odd count: the middle one; nearest rank ceil(0.95 * 5) = 5th
    assert latency_summary([5.0, 1.0, 3.0, 2.0, 4.0]) == (3.0, 5.0)
    # even count: the lower middle (2nd of 4); ceil(3.8) = 4th
    assert latency_summary([4.0, 1.0, 3.0, 2.0]) == (2.0, 4.0)
    # 20 values: ceil(0.95 * 20) = 19th exactly (no floating round-up to the 20th)
    assert latency_summary(range(1, 21)) == (10.0, 19.0)
    # 100 values: the 95th smallest
    assert latency_summary(range(100, 0, -1)) == (50.0, 95.0)
    assert latency_summary([7.0]) == (7.0, 7.0)
    median, p95 = latency_summary([])
    assert math.isnan(median) and math.isnan(p95)


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=200))
def test_latency_matches_numpy_order_statistics(values):
    median, p95 = latency_summary(values)
    # numpy's "lower" method at 50% is the lower middle order statistic, and so is
    # Hyndman & Fan's definition 1 ("inverted_cdf") at 50%
    assert median == np.percentile(values, 50, method="lower")
    assert median == np.percentile(values, 50, method="inverted_cdf")
    # nearest rank: the ceil(0.95 n)-th smallest, by exact integer arithmetic
    n = len(values)
    assert p95 == sorted(values)[math.ceil(95 * n / 100) - 1]
    assert median <= p95


# --- compare_results --------------------------------------------------------------------------


def test_compare_pairs_and_drops_unmeasured_pairs(crafted):
    cmp = compare_results(crafted, "A", "B")
    assert cmp.paired
    # A unmeasured at (c1, 3), B unmeasured at (c2, 1): both pairs dropped
    assert (cmp.pairs, cmp.dropped_unmeasured, cmp.dropped_missing) == (10, 2, 0)
    assert (cmp.unmeasured_a, cmp.unmeasured_b) == (1, 1)
    xa = {"c1": [True, False, False], "c2": [True, True, False], "c3": [True] * 4}
    xb = {"c1": [True, True, True], "c2": [True, True, True], "c3": [False, True, True, True]}
    expected = compare(xa, xb, paired=True, method="mcnemar")
    got = cmp.these_cases
    assert (got.both, got.only_a, got.only_b, got.neither) == (6, 1, 3, 0)
    assert got.pvalue == pytest.approx(expected.pvalue)
    # the paired score test: McNemar's statistic with |3 - 1| moved a quarter of
    # a pair towards 0, against scipy's normal distribution
    from scipy.stats import norm

    assert got.pvalue == pytest.approx(2 * norm.sf((3 - 1 - 0.25) / math.sqrt(4)))
    assert got.verdict == "cant_tell" and cmp.verdict == "cant_tell"
    like = cmp.cases_like_these
    assert like.method == "clustered"
    ref = compare(xa, xb, paired=True, method="clustered")
    assert like.difference.low == pytest.approx(ref.difference.low)
    assert like.difference.high == pytest.approx(ref.difference.high)
    assert [row.case for row in got.cases] == ["c1", "c2", "c3"]
    text = str(cmp)
    assert "10 pairs" in text and "2 dropped because a side was unmeasured" in text
    assert "these cases" in text and "cases like these" in text
    assert "no difference" not in text
    d = json.loads(json.dumps(cmp.to_dict(), allow_nan=False))
    assert d["pairs"] == 10 and d["dropped_unmeasured"] == 2


def test_compare_flags_cases_where_b_got_worse(tmp_path):
    manifest = results_manifest(["good", "bad"], ["A", "B"], 12)
    samples = []
    for r in range(12):
        samples.append(sample("good", "A", r))
        samples.append(sample("good", "B", r))
        samples.append(sample("bad", "A", r))
        samples.append(sample("bad", "B", r, False, missed="no"))
    cmp = compare_results(write_results_file(tmp_path / "r.jsonl", manifest, samples), "A", "B")
    assert cmp.worse_cases == ("bad",)
    assert cmp.verdict == "a_better"
    assert "B clearly worse" in str(cmp)


def test_compare_counts_missing_records_apart(tmp_path):
    manifest = results_manifest(["c1", "c2"], ["A", "B"], 3)
    samples = [
        sample(c, v, r)
        for c in ("c1", "c2")
        for v in ("A", "B")
        for r in range(3)
        if not (c == "c2" and v == "B" and r == 2)  # interrupted before this one
    ]
    cmp = compare_results(write_results_file(tmp_path / "r.jsonl", manifest, samples), "A", "B")
    assert (cmp.pairs, cmp.dropped_unmeasured, cmp.dropped_missing) == (5, 0, 1)


def test_compare_unpaired_schedule_uses_independent_samples(tmp_path):
    manifest = results_manifest(["c1"], ["A", "B"], 4)
    # B only ran on repeats 0 and 1: the schedule did not pair the variants
    manifest["schedule"] = [s for s in manifest["schedule"] if s[4] == "A" or s[1] < 2]
    samples = [sample("c1", "A", r, r > 0, missed="n") for r in range(4)]
    samples += [sample("c1", "B", r) for r in range(2)]
    path = write_results_file(tmp_path / "r.jsonl", manifest, samples)
    cmp = compare_results(path, "A", "B")
    assert not cmp.paired and cmp.cases_like_these is None
    assert cmp.these_cases.method == "newcombe"
    assert cmp.these_cases.difference == diff_ci(3, 4, 2, 2)
    assert "not paired" in str(cmp)
    with pytest.raises(InvalidArgument, match="paired by"):
        compare_results(path, "A", "B", method="mcnemar")


def test_compare_methods_and_bad_arguments(crafted):
    assert compare_results(crafted, "A", "B", method="clustered").primary.method == "clustered"
    z = compare_results(crafted, "A", "B", method="ztest")
    assert z.primary.method == "ztest" and not z.primary.paired
    with pytest.raises(InvalidArgument, match="b='b' is not a variant; .* 'A', 'B'"):
        compare_results(crafted, "A", "b")
    with pytest.raises(InvalidArgument, match="same variant"):
        compare_results(crafted, "A", "A")
    with pytest.raises(InvalidArgument, match="mcnemr"):
        compare_results(crafted, "A", "B", method="mcnemr")


def test_compare_with_every_pair_unmeasured(tmp_path):
    manifest = results_manifest(["c1"], ["A", "B"], 2)
    samples = [sample("c1", "A", r, None) for r in range(2)]
    samples += [sample("c1", "B", r) for r in range(2)]
    cmp = compare_results(write_results_file(tmp_path / "r.jsonl", manifest, samples), "A", "B")
    assert cmp.these_cases is None and cmp.primary is None
    assert cmp.verdict == "cant_tell" and cmp.dropped_unmeasured == 2
    assert "nothing to compare" in str(cmp)


# --- compare_runs ---------------------------------------------------------------------------------


def _run(tmp_path, name, passes, runs=10, **manifest_changes):
    manifest = results_manifest(["c1", "c2"], ["v"], runs)
    for key, value in manifest_changes.items():
        manifest[key] = value
    samples = [
        sample(c, "v", r, r < passes[c], missed="no") for c in ("c1", "c2") for r in range(runs)
    ]
    return write_results_file(tmp_path / name, manifest, samples, {"status": "finished"})


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"cases": [{"id": "c1", "prompt": "another prompt"}, {"id": "c2"}]}, "suite"),
        ({"variants": [{"name": "v", "task": {"kind": "openai", "model": "other"}}]}, "model"),
        # A file that names no counting method (another method's file is refused).
        ({"counting_method": None}, "counting method"),
        ({"machine": "fingerprint-2"}, "machine"),
    ],
)
def test_compare_runs_refuses_each_difference(tmp_path, change, named):
    old = _run(tmp_path, "old.jsonl", {"c1": 8, "c2": 5})
    new = _run(tmp_path, "new.jsonl", {"c1": 8, "c2": 5}, **change)
    result = compare_runs(old, new)
    assert isinstance(result, NotComparable)
    assert result.differences == (named,)
    assert str(result).startswith("no comparable previous run: ")
    assert f"{named} differs" in str(result)
    assert result.to_dict()["differences"] == [named]


def test_compare_runs_names_all_four(tmp_path):
    old = _run(tmp_path, "old.jsonl", {"c1": 8, "c2": 5})
    new = _run(
        tmp_path,
        "new.jsonl",
        {"c1": 8, "c2": 5},
        cases=[{"id": "c1"}],
        variants=[{"name": "v", "task": {"kind": "other"}}],
        counting_method=None,
        machine="m2",
    )
    assert compare_runs(old, new).differences == ("suite", "model", "counting method", "machine")


def test_compare_runs_compares_the_variant(tmp_path):
    old = _run(tmp_path, "old.jsonl", {"c1": 9, "c2": 10})
    new = _run(tmp_path, "new.jsonl", {"c1": 10, "c2": 1})
    result = compare_runs(old, new, variant="v")
    assert isinstance(result, RunsComparison)
    c = result.comparisons["v"]
    assert c.method == "newcombe" and not c.paired
    assert (c.successes_a, c.trials_a, c.successes_b, c.trials_b) == (19, 20, 11, 20)
    # statsmodels confint_proportions_2indep(11, 20, 19, 20, method="newcomb")
    from statsmodels.stats.proportion import confint_proportions_2indep

    low, high = confint_proportions_2indep(11, 20, 19, 20, method="newcomb", compare="diff")
    assert (c.difference.low, c.difference.high) == pytest.approx((low, high))
    rows = {row.case: row for row in c.cases}
    # Fisher's exact test on c2's 10/10 -> 1/10 (p = 0.0001), discrete Holm over 2 cases
    assert rows["c2"].worse and not rows["c1"].worse
    assert rows["c2"].difference == diff_ci(10, 10, 1, 10)
    assert "got clearly worse" in str(result)
    assert "flags discrete Holm-adjusted over 2 cases" in str(result)
    assert result.to_dict()["comparisons"]["v"]["flags_possible"] is True
    with pytest.raises(InvalidArgument, match="variant='w'"):
        compare_runs(old, new, variant="w")


def test_compare_runs_says_when_no_case_can_be_flagged(tmp_path):
    # 3 runs a case in each run: Fisher's test of 3/3 against 0/3 gives p = 0.1 at
    # best, so no case can be flagged, and the per-case line says what would do.
    old = _run(tmp_path, "old.jsonl", {"c1": 3, "c2": 3}, runs=3)
    new = _run(tmp_path, "new.jsonl", {"c1": 3, "c2": 0}, runs=3)
    result = compare_runs(old, new)
    c = result.comparisons["v"]
    assert not c.worse_cases and c.cases[1].pvalue == pytest.approx(0.1)
    note = (
        "flags discrete Holm-adjusted over 2 cases; with 3 repeats no single case can be "
        "flagged at 95%; 19 repeats would usually flag a case that drops from 90% to 40% "
        "among 2 cases"
    )
    assert note in str(result)
    d = result.to_dict()["comparisons"]["v"]
    assert d["flags_possible"] is False and d["flags"] == note.removeprefix("flags ")


def test_report_leaves_out_holdout_cases_that_were_not_run(tmp_path):
    manifest = results_manifest(["c1"], ["A"], 2)
    manifest["cases"].append({"id": "kept aside", "holdout": True})
    samples = [sample("c1", "A", r) for r in range(2)]
    r = report(write_results_file(tmp_path / "r.jsonl", manifest, samples))
    assert r.case_ids == ("c1",)
    del manifest["schedule"]
    r = report(write_results_file(tmp_path / "s.jsonl", manifest, samples))
    assert r.case_ids == ("c1",)
    manifest["include_holdout"] = True
    r = report(write_results_file(tmp_path / "t.jsonl", manifest, samples))
    assert r.case_ids == ("c1", "kept aside")
    assert r.rows("A")[1].measured == 0


def _results_from(outcomes: dict) -> Results:
    variants = list(outcomes)
    cases = list(outcomes[variants[0]])
    runs = len(outcomes[variants[0]][cases[0]])
    manifest = results_manifest(cases, variants, runs)
    return Results(None, manifest, tuple(samples(outcomes, missed="no")), None, ())


@given(paired_run_outcomes())
def test_compare_results_invariants(outcomes):
    res = _results_from(outcomes)
    ab = compare_results(res, "A", "B")
    ba = compare_results(res, "B", "A")
    slots = sum(len(xs) for xs in outcomes["A"].values())
    assert ab.paired and ab.pairs + ab.dropped_unmeasured + ab.dropped_missing == slots
    assert ab.dropped_missing == 0
    both_measured = sum(
        x is not None and y is not None
        for c in outcomes["A"]
        for x, y in zip(outcomes["A"][c], outcomes["B"][c], strict=True)
    )
    assert ab.pairs == both_measured
    assert (ab.pairs, ab.dropped_unmeasured) == (ba.pairs, ba.dropped_unmeasured)
    assert (ab.unmeasured_a, ab.unmeasured_b) == (ba.unmeasured_b, ba.unmeasured_a)
    flip = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}
    for x, y in ((ab.these_cases, ba.these_cases), (ab.cases_like_these, ba.cases_like_these)):
        assert (x is None) == (y is None)
        if x is not None:
            assert y.verdict == flip[x.verdict]
            assert x.difference.estimate == pytest.approx(-y.difference.estimate)
            assert (x.only_a, x.only_b) == (y.only_b, y.only_a)
    # a case where B got clearly worse is a case where A, as B, got clearly better
    if ab.these_cases is not None:
        assert ab.worse_cases == tuple(r.case for r in ba.these_cases.cases if r.better)


def test_compare_runs_of_a_run_with_itself(crafted):
    result = compare_runs(crafted, crafted)
    assert isinstance(result, RunsComparison)
    for c in result.comparisons.values():
        assert c.difference.estimate == 0 and c.verdict == "cant_tell"
        assert not any(row.worse or row.better for row in c.cases)
    assert "no difference" not in str(result)


def test_compare_runs_reads_the_suite_not_its_bytes(tmp_path):
    # A comment or formatting edit changes the file's SHA-256 but not one parsed case: the same
    # suite. A changed check, an added case and a changed prompt are each named.
    old = _run(tmp_path, "old.jsonl", {"c1": 8, "c2": 5})
    same = _run(tmp_path, "same.jsonl", {"c1": 8, "c2": 5}, suite={"sha256": "f" * 64})
    assert isinstance(compare_runs(old, same), RunsComparison)
    cases = results_manifest(["c1", "c2"], ["v"], 10)["cases"]
    cases[1] = dict(cases[1], checks=[{"contains": "refund"}])
    cases.append({"id": "c3", "prompt": "new", "checks": []})
    cases[0] = dict(cases[0], prompt="reworded")
    changed = _run(tmp_path, "changed.jsonl", {"c1": 8, "c2": 5}, cases=cases)
    result = compare_runs(old, changed)
    assert isinstance(result, NotComparable) and result.differences == ("suite",)
    text = str(result)
    assert "cases added: 'c3'" in text
    assert "checks changed in case 'c2'" in text
    assert "prompts changed in case 'c1'" in text


@pytest.mark.parametrize(
    ("task", "matters"),
    [
        (
            {"kind": "openai", "model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"},
            False,
        ),
        ({"kind": "anthropic", "model": "c", "base_url": "https://api.anthropic.com"}, False),
        ({"kind": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1"}, True),
        ({"kind": "openai", "model": "m", "base_url": "http://10.0.0.5:8000/v1"}, True),
        ({"kind": "ollama", "model": "qwen3", "base_url": "http://127.0.0.1:11434"}, True),
        ({"kind": "ollama", "model": "qwen3", "base_url": "http://gpu-box:11434"}, True),
        ({"kind": "cmd", "command": ["agent"]}, True),
        ({"kind": "python", "name": "my_task"}, True),
        ({"kind": "standin", "model": "shop-v1"}, False),
    ],
)
def test_the_machine_matters_only_where_it_can_change_answers(tmp_path, task, matters):
    from evalstats.results._comparability import machine_matters

    assert machine_matters(task) is matters
    variants = [{"name": "v", "task": task, "transform": {}}]
    old = _run(tmp_path, "old.jsonl", {"c1": 8, "c2": 5}, variants=variants)
    new = _run(tmp_path, "new.jsonl", {"c1": 8, "c2": 5}, variants=variants, machine="m2")
    result = compare_runs(old, new)
    assert isinstance(result, NotComparable) is matters


def test_compare_runs_allow_different_compares_and_says_so(tmp_path):
    old = _run(tmp_path, "old.jsonl", {"c1": 8, "c2": 5})
    new = _run(tmp_path, "new.jsonl", {"c1": 8, "c2": 5}, counting_method=None, machine="m2")
    assert compare_runs(old, new, allow_different=["machine"]).comparable is False
    result = compare_runs(old, new, allow_different=["machine", "counting-method"])
    assert isinstance(result, RunsComparison)
    assert result.warnings[:2] == (
        "compared although the counting method differs ('1' then None)",
        "compared although the machine differs ('fingerprint-1' then 'm2'; 'v' runs locally)",
    )
    assert str(result).splitlines()[1].startswith("warning: compared although")
    with pytest.raises(InvalidArgument, match="allow_different='suit'.*did you mean 'suite'"):
        compare_runs(old, new, allow_different=["suit"])
