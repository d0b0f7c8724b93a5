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


def _printed_limits(text: str) -> tuple[float, float]:
    """The two limits of an interval as printed: '+18% (−7% to +39%)'."""
    import re

    inside = text[text.index("(") + 1 : text.rindex(")")]
    low, high = (
        float(x.replace("−", "-").replace("+", "").rstrip("%")) for x in inside.split(" to ")
    )
    assert re.fullmatch(r"[+−]?[\d.]+%", inside.split(" to ")[0].strip()), text
    return low, high


def _printed_agrees(verdict: str, text: str) -> bool:
    low, high = _printed_limits(text)
    return _agrees(verdict, low, high)


@settings(max_examples=15, deadline=None)
@given(paired_results(min_cases=2, max_cases=5, max_repeats=4), st.booleans())
def test_the_page_prints_intervals_that_agree_with_their_verdicts(results, sampled):
    # The HTML page's headline: the verdict, the difference with its interval as
    # printed, and the other claim's verdict and interval beside it.
    import html as html_lib
    import re

    from evalstats.presenting._html import render_html

    a, b = results
    runs = max(len(x) for x in [*a.values(), *b.values()])
    page = render_html(records.results({"A": a, "B": b}, runs, missed="missed", sampled=sampled))
    heads = re.findall(r'<div class="headline (\w+)">(.*?)</div>', page, flags=re.S)
    assert heads
    for verdict, body in heads:
        body = html_lib.unescape(body)
        printed = re.search(r"Difference B − A: <strong>([^<]+)</strong>", body)
        if printed is None:  # nothing to compare: no interval printed
            assert verdict == "cant_tell"
            continue
        assert _printed_agrees(verdict, printed.group(1)), (verdict, printed.group(1))
        beside = re.search(r"not the claim decided\): ([^,]+), (.+?%\))", body)
        if beside is not None:
            words = {"B better": "b_better", "A better": "a_better"}
            other = words.get(beside.group(1), "cant_tell")
            assert _printed_agrees(other, beside.group(2)), beside.group(0)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(2, 5), st.integers(1, 3), st.integers(-2, 2), st.integers(0, 1000))
def test_the_printed_mean_score_verdict_agrees_with_its_interval(
    tmp_path, capsys, cases, repeats, shift, seed
):
    # compare on a scored run (a judge's 1-5), on the command line: the score
    # verdict is the side of 0 its printed interval lies on, both claims.
    import random

    from scored import scored_run

    rng = random.Random(seed)
    levels = {
        "a": {f"c{i}": [rng.randint(2, 4) for _ in range(repeats)] for i in range(cases)},
        "b": {
            f"c{i}": [max(1, min(5, rng.randint(2, 4) + shift)) for _ in range(repeats)]
            for i in range(cases)
        },
    }
    path = scored_run(tmp_path / f"s{cases}-{repeats}-{shift}-{seed}.jsonl", levels)
    assert main(["compare", str(path), "--a", "a", "--b", "b", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["scores"]
    for key in ("primary", "these_cases", "cases_like_these"):
        c = doc[key]
        if c is not None:
            d = c["difference"]
            assert _agrees(c["verdict"], d["low"], d["high"]), (key, c)
    assert doc["verdict"] == doc["primary"]["verdict"]
