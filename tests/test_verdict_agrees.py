"""No printed interval contradicts its verdict: for every method, about both
claims, fixed and sequential, in Python and on the command line."""

from __future__ import annotations

import json

import records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import levels, paired_results, write_results_file

from evalstats.cli import main
from evalstats.deciding._sequential import sequential_compare
from evalstats.stats._compare import compare


def _agrees(verdict: str, low: float, high: float) -> bool:
    """'B better' exactly when the interval lies above 0, 'A better' below it."""
    if verdict == "b_better":
        return low > 0
    if verdict == "a_better":
        return high < 0
    return low <= 0 <= high


@settings(max_examples=150, deadline=None)
@given(
    paired_results(max_cases=8, max_repeats=6),
    levels,
    st.sampled_from(["mcnemar", "clustered", "newcombe", "ztest", "overlap"]),
)
def test_every_method_s_verdict_agrees_with_its_interval(results, level, method):
    a, b = results
    if method == "clustered" and len(a) < 2:
        return
    c = compare(a, b, level=level, method=method)
    assert _agrees(c.verdict, c.difference.low, c.difference.high), (c, method)


def test_the_sequential_verdict_is_printed_with_its_confidence_sequence():
    # The sequential verdict is printed with the confidence sequence at the
    # latest look, not a fixed-n interval; here they agree.
    a = {"order": [True, False] * 10, "refund": [True, False] * 10}
    b = {"order": [True] * 20, "refund": [True] * 20}
    seq = sequential_compare(a, b)
    assert seq.verdict == "b_better" and seq.difference.method == "mixture confidence sequence"
    assert _agrees(seq.verdict, seq.difference.low, seq.difference.high)
    assert str(seq.difference) in str(seq)


def test_a_sequential_verdict_whose_confidence_sequence_still_holds_0():
    # The verdict (A better, reached at 8 pairs) stands at 9 pairs though the
    # e-value fell back; the interval, intersected over the looks, stands too.
    a = {"case0": [True, True], "case1": [False, True, True, True, True, False], "case2": [True]}
    b = {"case0": [False, False], "case1": [False] * 5 + [True], "case2": [False]}
    seq = sequential_compare(a, b, level=0.9)
    assert _agrees(seq.verdict, seq.difference.low, seq.difference.high), seq
    assert seq.verdict == "a_better" and seq.decided_at == 8 and seq.pairs == 9


@settings(max_examples=150, deadline=None)
@given(
    paired_results(max_cases=6, max_repeats=8),
    levels,
    st.sampled_from(["these_cases", "cases_like_these"]),
    st.sampled_from([None, (0.7, 0.9), (0.6, 0.4)]),
)
def test_every_sequential_look_s_interval_agrees_with_its_verdict(results, level, about, planned):
    # At every look, for both claims and the planned e-processes: the interval
    # excludes 0 exactly when the verdict at that look says which is better.
    a, b = results
    if about == "cases_like_these" and (len(a) < 2 or planned is not None):
        return
    seq = sequential_compare(a, b, level=level, about=about, planned_for=planned)
    for look in seq.trajectory:
        assert _agrees(look.verdict, look.low, look.high), (look, about, planned)
    assert _agrees(seq.verdict, seq.difference.low, seq.difference.high)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(paired_results(min_cases=2, max_cases=6, max_repeats=5))
def test_the_commands_print_intervals_that_agree_with_their_verdicts(tmp_path, capsys, results):
    # compare and gate read a results file; each verdict they print (both
    # claims, as text and JSON) agrees with the interval printed beside it.
    a, b = results
    runs = max(len(x) for x in [*a.values(), *b.values()])
    res = records.results({"A": a, "B": b}, runs, missed="missed")
    path = tmp_path / "r.jsonl"
    path.unlink(missing_ok=True)
    write_results_file(path, res.manifest, [dict(s) for s in res.samples], {"status": "finished"})
    for about in ("these-cases", "cases-like-these"):
        argv = ["compare", str(path), "--a", "A", "--b", "B", "--about", about]
        assert main([*argv, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        for claim in ("these_cases", "cases_like_these", "primary"):
            c = doc[claim]
            if c is not None:
                assert _agrees(c["verdict"], c["difference"]["low"], c["difference"]["high"])
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert doc["primary"]["summary"] in text
