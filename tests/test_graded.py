"""Graded checks: scores in verdicts, on a scale, with a threshold, and in the results file."""

from __future__ import annotations

import math
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.errors import InvalidArgument
from evalstats.results._file import read_results
from evalstats.results._records import CheckVerdict, Sample
from evalstats.running._checks import Verdict, has_terms, run_check
from evalstats.running._engine import Variant, run
from evalstats.running._graded import covers, sample_score
from evalstats.running._suite import Case


@given(st.integers(1, 5), st.integers(1, 5))
def test_a_rubric_score_maps_linearly_and_keeps_what_was_given(value: int, cut: int) -> None:
    v = Verdict.scored(value, scale=(1, 5), threshold=cut)
    assert v.score == (value - 1) / 4
    assert v.raw_score == value and v.scale == (1.0, 5.0)
    assert v.status == ("passed" if value >= cut else "failed")


def test_without_a_threshold_only_full_marks_pass() -> None:
    assert Verdict.scored(1.0).status == "passed"
    v = Verdict.scored(0.9)
    assert v.status == "failed" and v.reason == "scored 0.9, not full marks"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"value": 7, "scale": (1, 5)}, "score=7 is outside its scale (1, 5)"),
        ({"value": math.nan}, "score=nan must be a number on the scale (0, 1)"),
        ({"value": 3, "scale": (1, 5), "threshold": 6}, "threshold=6 is outside its scale (1, 5)"),
        ({"value": "4"}, "score='4' must be a number on the scale (0, 1)"),
        ({"value": 1, "scale": (5, 1)}, "scale=(5, 1) must be two finite numbers, low below high"),
    ],
)
def test_bad_scores_name_the_argument(kwargs, words) -> None:
    with pytest.raises(InvalidArgument, match="^" + __import__("re").escape(words) + "$"):
        Verdict.scored(**kwargs)


def test_a_python_check_may_return_a_float_score() -> None:
    v = run_check(lambda answer: 0.25, "text")
    assert v.score == 0.25 and v.status == "failed"
    assert run_check(lambda answer: 1.0, "text").status == "passed"
    assert "returned int" in run_check(lambda answer: 1, "text").reason  # a float is a score
    bad = run_check(lambda answer: 1.5, "text")
    assert bad.status == "failed" and "score=1.5 is outside its scale (0, 1)" in bad.reason
    assert run_check(lambda answer: True, "text").status == "failed"  # a bool is not a score


def test_covers_finds_terms_as_has_terms_does() -> None:
    terms = ("Go", "Paper Kite", "C++")
    for text in ["We use GO at paper\n kite with C++.", "ongoing Gopher", "C++ only", ""]:
        v = run_check(covers(*terms), text)
        found = sum(run_check(has_terms(t), text).is_passed for t in terms)
        if text:
            assert v.score == pytest.approx(found / 3)
        else:  # nothing to inspect: a failure, without a score
            assert v.not_inspected
    assert run_check(covers("a", "b", threshold=0.5), "a").is_passed
    with pytest.raises(InvalidArgument, match="threshold=2 is outside its scale"):
        covers("a", threshold=2)


def test_sample_score_is_the_weighted_mean_or_the_min() -> None:
    assert sample_score([0.5, None, 1.0]) == 0.75
    assert sample_score([0.5, 1.0], weights=[3, 1]) == 0.625
    assert sample_score([0.5, 1.0], rule="min") == 0.5
    assert sample_score([None, None]) is None
    with pytest.raises(InvalidArgument, match="score='median' must be 'mean' or 'min'"):
        sample_score([0.5], rule="median")


def test_the_results_file_records_each_check_and_the_sample_score(tmp_path: Path) -> None:
    def rubric(answer: str) -> Verdict:
        return Verdict.scored(4 if "refund" in answer else 2, scale=(1, 5), threshold=4)

    cases = [
        Case("a", "refund in 14 days", (covers("refund", "14 days", "receipt"), rubric)),
        Case("b", "hello", (covers("hello"),)),
    ]
    run(
        cases,
        [Variant("echo", lambda text: text)],
        runs=2,
        out=tmp_path / "r.jsonl",
        progress=False,
        timeout=None,
    )
    samples = read_results(tmp_path / "r.jsonl").samples
    a = next(s for s in samples if s["case"] == "a")
    assert [c.get("score") for c in a["checks"]] == [pytest.approx(2 / 3), 0.75]
    assert a["checks"][1]["raw_score"] == 4.0 and a["checks"][1]["scale"] == [1.0, 5.0]
    assert a["score"] == pytest.approx((2 / 3 + 0.75) / 2)
    b = next(s for s in samples if s["case"] == "b")
    assert b["score"] == 1.0


def test_an_incomplete_sample_of_a_graded_case_scores_zero(tmp_path: Path) -> None:
    def broken(text: str) -> str:
        raise RuntimeError("down")

    run(
        [Case("a", "x", (covers("x"),))],
        [Variant("v", broken)],
        runs=1,
        out=tmp_path / "r.jsonl",
        progress=False,
        timeout=None,
    )
    (sample,) = read_results(tmp_path / "r.jsonl").samples
    assert sample["status"] == "incomplete" and sample["score"] == 0.0


def test_records_without_scores_read_as_before_and_bad_scores_are_named(tmp_path, capsys) -> None:
    import json

    from evalstats.cli import main
    from evalstats.errors import ResultsFileError

    old = b'{"check": "c", "axis": null, "status": "passed", "reason": ""}'
    assert msgspec.json.decode(old, type=CheckVerdict).score is msgspec.UNSET
    out = tmp_path / "r.jsonl"
    run(
        [Case("a", "x", (covers("x"),))],
        [Variant("v", lambda t: t)],
        runs=1,
        out=out,
        progress=False,
        timeout=None,
    )
    lines = out.read_text().splitlines()
    for where, value, words in [
        ("check", 1.5, 'line 2: checks[0]: "score"=1.5 must be a number from 0 to 1'),
        ("sample", "high", "line 2: \"score\"='high' must be a number from 0 to 1"),
    ]:
        record = json.loads(lines[1])
        if where == "check":
            record["checks"][0]["score"] = value
        else:
            record["score"] = value
        bad = tmp_path / f"bad-{where}.jsonl"
        bad.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
        with pytest.raises(ResultsFileError) as err:
            read_results(bad)
        assert str(err.value).endswith(words.replace('\\"', '"'))
        # the tally report counts from refuses it too, not only the full reader
        assert main(["report", str(bad)]) == 2
        assert capsys.readouterr().err.strip().endswith(words.replace('\\"', '"'))
    assert Sample.__struct_fields__[-1] == "score"


def test_the_report_shows_mean_scores_only_when_samples_carry_them(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from evalstats.presenting._report import report
    from evalstats.running._checks import contains
    from evalstats.stats import score_mean_ci

    words = ["x", "y", "z", "w"]
    cases = [Case(f"c{i}", " ".join(words[: 1 + i % 4]), (covers(*words),)) for i in range(8)]
    out = tmp_path / "r.jsonl"
    run(cases, [Variant("v", lambda t: t)], runs=2, out=out, progress=False, timeout=None)
    r = report(str(out))
    (summary,) = r.scores
    scores = [(1 + i % 4) / 4 for i in range(8) for _ in range(2)]
    labels = [f"c{i}" for i in range(8) for _ in range(2)]
    like = score_mean_ci(scores, labels, about="cases_like_these", seed=0)
    assert summary.cases_like_these == like
    assert summary.these_cases == score_mean_ci(scores, labels)
    text = str(r)
    assert f"    cases like these  {like}  betting: the mean over cases like these" in text
    assert r.to_dict()["scores"][0]["samples"] == 16
    shown = subprocess.run(
        [sys.executable, "-m", "evalstats", "report", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(shown)["scores"][0]["cases_like_these"]["method"] == "betting"
    plain = tmp_path / "p.jsonl"
    run(
        [Case("a", "x", (contains("x"),))],
        [Variant("v", lambda t: t)],
        runs=1,
        out=plain,
        progress=False,
        timeout=None,
    )
    assert "scores" not in report(str(plain)).to_dict()
    assert "mean scores" not in str(report(str(plain)))
