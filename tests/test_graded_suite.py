"""Graded checks in suites: check weights, the suite's score rule, a judge on a scale;
the sample scores the engine and rescore record with them; bad input in one line."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.demo._judge import make_judge
from evalstats.errors import CaseFileError, InvalidArgument
from evalstats.reading._rescore import rescore
from evalstats.results._file import read_results
from evalstats.running._checks import contains
from evalstats.running._engine import Variant, run
from evalstats.running._graded import covers, is_graded, sample_score
from evalstats.running._scoring import weights_of
from evalstats.running._suite import (
    Case,
    CaseCheck,
    Suite,
    case_from_dict,
    load_suite,
    suite_from_cases,
)

TERMS = ["refund", "14 days", "receipt", "bank"]


def _quality(answer: str) -> float:
    """The stand-in judge's truth: the share of the four terms the answer holds."""
    return sum(t in answer for t in TERMS) / 4


def _suite_text(rule: str | None) -> str:
    head = "name: graded\nversion: 1\n" + (f"score: {rule}\n" if rule else "")
    return head + (
        "cases:\n"
        "  - id: full\n"
        "    prompt: A refund takes 14 days with a receipt, to your bank.\n"
        "    checks: &checks\n"
        "      - covers: [refund, 14 days, receipt]\n"
        "        weight: 3\n"
        "      - judged_by: {rubric: Explains the refund., scale: [1, 5], threshold: 4}\n"
        "        weight: 2\n"
        "      - contains: refund\n"
        "        weight: 0.5\n"
        "  - id: half\n"
        "    prompt: A refund takes some time.\n"
        "    checks: *checks\n"
        "  - id: none\n"
        "    prompt: Hello there.\n"
        "    checks: *checks\n"
    )


def _write_suite(folder: Path, rule: str | None, name: str = "graded.yaml") -> Path:
    path = folder / name
    path.write_text(_suite_text(rule), encoding="utf-8")
    return path


def _echo(text: str) -> str:
    return text


def _expected(prompt: str, rule: str) -> float:
    """The sample score by hand: covers' share (weight 3) and the judge's point
    (weight 2); the pass/fail check gives no score (its weight has none to weigh)."""
    share = sum(t in prompt for t in TERMS[:3]) / 3
    point = 1 + math.floor(4 * _quality(prompt) + 0.5)  # the stand-in's true point
    judged = (point - 1) / 4
    return (3 * share + 2 * judged) / 5 if rule == "mean" else min(share, judged)


def _run(tmp_path: Path, rule: str | None, out: str = "r.jsonl", **judge_rates: float) -> Path:
    rates = {"sensitivity": 1.0, "specificity": 1.0, **judge_rates}
    judge = make_judge(_quality, seed=4, **rates)
    suite = load_suite(_write_suite(tmp_path, rule), judge=judge)
    path = tmp_path / out
    run(suite, [Variant("echo", _echo)], runs=2, out=path, progress=False, timeout=None)
    return path


# --- the suite file ----------------------------------------------------------------


def test_weights_and_the_rule_are_read_and_kept_in_the_manifest(tmp_path: Path) -> None:
    judge = make_judge(_quality, sensitivity=1, specificity=1)
    suite = load_suite(_write_suite(tmp_path, "min"), judge=judge)
    assert suite.score == "min"
    case = suite.case("full")
    assert [c.weight for c in case.checks] == [3.0, 2.0, 0.5] == list(weights_of(case))
    assert is_graded(case.checks[0].check) and is_graded(case.checks[1].check)
    assert not is_graded(case.checks[2].check)
    written = case.to_dict()["checks"]
    assert written[0] == {"covers": ["refund", "14 days", "receipt"], "weight": 3}
    assert written[2] == {"contains": "refund", "weight": 0.5}
    assert case_from_dict(case.to_dict(), judge=judge) == case
    assert suite.to_dict()["score"] == "min"
    # the default writes nothing new: a manifest of a suite without weights is as before
    plain = load_suite(_write_suite(tmp_path, None, "plain.yaml"), judge=judge)
    assert plain.score == "mean" and "score" not in plain.to_dict()
    assert Case("a", "p", (contains("x"),)).to_dict()["checks"] == [{"python": "contains('x')"}]


def test_the_python_api_takes_weights_and_a_rule() -> None:
    check = CaseCheck(covers("a", "b"), weight=2)
    assert check.weight == 2.0 and check.to_dict()["weight"] == 2
    assert CaseCheck(covers("a"), weight=2) != CaseCheck(covers("a"), weight=1)
    suite = suite_from_cases([Case("c", "p", (check,))], score="min")
    assert suite.score == "min"
    # the rule is part of what a Python suite is: its hash tells the two apart
    assert suite.sha256 != suite_from_cases([Case("c", "p", (check,))]).sha256
    with pytest.raises(InvalidArgument, match=r"^score='median' must be 'mean' or 'min'"):
        Suite("s", 1, (Case("c", "p", (check,)),), score="median")
    with pytest.raises(InvalidArgument, match=r"^weight=-1 must be a finite number, 0 or more$"):
        CaseCheck(covers("a"), weight=-1)
    with pytest.raises(InvalidArgument, match=r"^weight=.2. must be a number, 0 or more$"):
        CaseCheck(covers("a"), weight="2")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"checks: every check has weight 0"):
        Case("c", "p", (CaseCheck(covers("a"), weight=0),))


# --- bad input: one line naming the file, the case and the field -------------------------

_CASE = "cases:\n  - id: c\n    prompt: p\n    checks:\n"


@pytest.mark.parametrize(
    ("checks", "words"),
    [
        (
            "      - {covers: [a], weight: -1}",
            'case "c": checks[0].weight: must be a finite number',
        ),
        ("      - {covers: [a], weight: .nan}", "checks[0].weight: must be a finite number, 0 or"),
        ("      - {covers: [a], weight: .inf}", "checks[0].weight: must be a finite number, 0 or"),
        (
            "      - {covers: [a], weight: heavy}",
            'checks[0].weight: must be a number, 0 or more, not "heavy"',
        ),
        (
            "      - {covers: [a], weight: true}",
            "checks[0].weight: must be a number, 0 or more, not true",
        ),
        (
            "      - {covers: [a], weight: 0}\n      - {contains: a, weight: 0}",
            'case "c": checks: every check has weight 0, so no sample could have a score',
        ),
        (
            "      - {judged_by: {rubric: r, scale: [5, 1]}}",
            'checks[0]: check "judged_by": scale=(5, 1) must be two finite numbers, low below',
        ),
        (
            "      - {judged_by: {rubric: r, scale: [1, .inf]}}",
            'checks[0]: check "judged_by": scale=(1, inf) must be two finite numbers',
        ),
        (
            "      - {judged_by: {rubric: r, scale: [3, 3]}}",
            'checks[0]: check "judged_by": scale=(3, 3) must be two finite numbers',
        ),
        (
            "      - {judged_by: {rubric: r, scale: [1, 5], threshold: 6}}",
            'checks[0]: check "judged_by": threshold=6 is outside its scale (1, 5)',
        ),
        (
            "      - {judged_by: {rubric: r, scale: 5}}",
            'checks[0]: check "judged_by": scale: must be a list of two numbers [low, high]',
        ),
        (
            "      - {judged_by: {rubric: r, scale: [1, 2, 3]}}",
            'check "judged_by": scale: must be a list of two numbers [low, high], such as '
            "[1, 5], not [1, 2, 3]",
        ),
        (
            "      - {judged_by: {rubric: r, threshold: 3}}",
            'check "judged_by": threshold=3 needs a scale',
        ),
        (
            "      - {judged_by: {rubric: r, scale: [1, 5], threshold: high}}",
            'check "judged_by": threshold: must be a number on the scale, not "high"',
        ),
        ("      - {covers: []}", 'checks[0]: check "covers" takes the terms'),
        ("      - {covers: {terms: [a], threshold: 2}}", 'check "covers": threshold=2 is outside'),
        (
            "      - {covers: {term: [a]}}",
            'check "covers": unknown field "term" (did you mean "terms"?)',
        ),
    ],
)
def test_a_bad_weight_scale_or_threshold_is_one_line_naming_file_case_field(
    tmp_path: Path, checks: str, words: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(_CASE + checks + "\n", encoding="utf-8")
    judge = make_judge(_quality, sensitivity=1, specificity=1)
    with pytest.raises(CaseFileError) as err:
        load_suite(path, judge=judge)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    assert words in message


_RULE = 'score: must be "mean" or "min" (how a sample\'s score is made from its checks\' scores)'


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('"median"', ' not "median" (did you mean "mean"?)'),
        ('"mins"', ' not "mins" (did you mean "min"?)'),
        ("3", " not a number"),
        ("null", " not null"),
    ],
)
def test_an_unknown_score_rule_is_one_line_naming_the_field(tmp_path, value, words) -> None:
    path = tmp_path / "bad.json"
    doc = '{"score": %s, "cases": [{"id": "c", "prompt": "p", "checks": [{"covers": ["a"]}]}]}'
    path.write_text(doc % value, encoding="utf-8")
    with pytest.raises(CaseFileError) as err:
        load_suite(path)
    assert str(err.value) == f"{path}: {_RULE},{words}"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            _CASE + "      - {covers: [a], weight: -2}\n",
            'case "c": checks[0].weight: must be a finite number, 0 or more, not -2',
        ),
        ("score: median\n" + _CASE + "      - {covers: [a]}\n", 'score: must be "mean" or'),
        (
            _CASE + "      - {judged_by: {rubric: r, scale: [1, 5], threshold: 0}}\n",
            'check "judged_by": threshold=0 is outside its scale (1, 5)',
        ),
    ],
)
def test_the_command_says_it_in_one_line_and_exits_2(tmp_path: Path, capsys, text, words) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    argv = ["run", str(path), "--variant", "v=standin:shop-v1", "--runs", "1"]
    argv += ["--judge", "standin:judge", "--out", str(tmp_path / "r.jsonl"), "--no-progress"]
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert words in err and str(path) in err
    assert not (tmp_path / "r.jsonl").exists()


# --- the sample's score, end to end ------------------------------------------------------


@pytest.mark.parametrize("rule", ["mean", "min"])
def test_the_engine_records_the_weighted_score_by_the_suites_rule(tmp_path, rule) -> None:
    results = read_results(_run(tmp_path, rule if rule == "min" else None))
    assert results.manifest["suite"].get("score") == (None if rule == "mean" else "min")
    listed = {c["id"]: c for c in results.manifest["cases"]}
    assert [c.get("weight") for c in listed["full"]["checks"]] == [3, 2, 0.5]
    for sample in results.samples:
        prompt = next(c["prompt"] for c in results.manifest["cases"] if c["id"] == sample["case"])
        assert sample["score"] == pytest.approx(_expected(prompt, rule), abs=1e-12)
        covers_v, judged, plain = sample["checks"]
        assert "score" not in plain
        assert judged["scale"] == [1.0, 5.0] and judged["raw_score"] in (1, 2, 3, 4, 5)
    full = [s["score"] for s in results.samples if s["case"] == "full"]
    # every term: covers 1 (weight 3), the judge's 5 of 1-5 (weight 2)
    assert full == [1.0, 1.0]
    half = [s["score"] for s in results.samples if s["case"] == "half"][0]
    # "refund" only: covers 1/3, judge 1 + round(4 * 1/4) = 2 -> 0.25
    assert half == pytest.approx((3 * (1 / 3) + 2 * 0.25) / 5 if rule == "mean" else 0.25)


def test_a_judge_that_errs_is_weighed_from_what_it_said(tmp_path: Path) -> None:
    results = read_results(_run(tmp_path, None, sensitivity=0.5, specificity=0.5))
    mirrored = 0
    for sample in results.samples:
        covers_v, judged, _ = sample["checks"]
        assert sample["score"] == pytest.approx((3 * covers_v["score"] + 2 * judged["score"]) / 5)
        prompt = next(c["prompt"] for c in results.manifest["cases"] if c["id"] == sample["case"])
        point = 1 + math.floor(4 * _quality(prompt) + 0.5)
        assert judged["raw_score"] in (point, 6 - point)
        mirrored += judged["raw_score"] != point
    assert 0 < mirrored < len(results.samples)  # the seeded draws err on some samples only


def test_rescore_makes_the_same_scores_and_new_ones_by_a_new_rule(tmp_path: Path) -> None:
    first = _run(tmp_path, None)
    judge = make_judge(_quality, sensitivity=1.0, specificity=1.0, seed=4)
    again = rescore(first, _write_suite(tmp_path, None), out=tmp_path / "again.jsonl", judge=judge)
    before, after = read_results(first).samples, read_results(again.out).samples
    assert [s["score"] for s in after] == [s["score"] for s in before]
    by_min = rescore(
        first, _write_suite(tmp_path, "min", "min.yaml"), out=tmp_path / "min.jsonl", judge=judge
    )
    results = read_results(by_min.out)
    assert results.manifest["suite"]["score"] == "min"
    for sample in results.samples:
        prompt = next(c["prompt"] for c in results.manifest["cases"] if c["id"] == sample["case"])
        assert sample["score"] == pytest.approx(_expected(prompt, "min"), abs=1e-12)


def test_rescore_with_pass_fail_checks_leaves_no_score_behind(tmp_path: Path) -> None:
    first = _run(tmp_path, None)
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        _suite_text(None).replace(
            "      - covers: [refund, 14 days, receipt]\n        weight: 3\n"
            "      - judged_by: {rubric: Explains the refund., scale: [1, 5], threshold: 4}\n"
            "        weight: 2\n",
            "",
        ),
        encoding="utf-8",
    )
    done = rescore(first, plain, out=tmp_path / "plain.jsonl")
    assert all("score" not in s for s in read_results(done.out).samples)


def test_an_incomplete_sample_of_a_case_with_a_scaled_judge_scores_zero(tmp_path) -> None:
    judge = make_judge(_quality, sensitivity=1, specificity=1)
    spec = {"judged_by": {"rubric": "r", "scale": [1, 5]}, "weight": 2}
    case = case_from_dict({"id": "c", "prompt": "p", "checks": [spec]}, judge=judge)
    assert case.checks[0].weight == 2.0 and is_graded(case.checks[0].check)

    def broken(text: str) -> str:
        raise RuntimeError("down")

    out = tmp_path / "r.jsonl"
    run([case], [Variant("v", broken)], runs=1, out=out, progress=False, timeout=None)
    (sample,) = read_results(out).samples
    assert sample["status"] == "incomplete" and sample["score"] == 0.0


# --- the rule itself ------------------------------------------------------------------------


@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.floats(0, 1)), st.floats(0, 1e300)),
        min_size=1,
        max_size=8,
    ).filter(lambda pairs: any(w > 0 for _, w in pairs))
)
def test_the_weighted_mean_is_within_the_scores_and_at_least_the_min(pairs) -> None:
    scores = [s for s, _ in pairs]
    weights = [w for _, w in pairs]
    mean = sample_score(scores, weights=weights)
    low = sample_score(scores, weights=weights, rule="min")
    kept = [s for s, w in pairs if s is not None and w > 0]
    if not kept:
        assert mean is None and low is None
        return
    assert low == min(kept)
    assert min(kept) - 1e-12 <= mean <= max(kept) + 1e-12
    # scaling every weight leaves the mean as it is
    assert sample_score(scores, weights=[3 * w for w in weights]) == pytest.approx(mean)


def test_sample_score_refuses_bad_weights_and_scores_naming_the_argument() -> None:
    for kwargs, words in [
        ({"weights": [-1, 1]}, "weights[0]=-1 must be a finite number, 0 or more"),
        ({"weights": [math.nan, 1]}, "weights[0]=nan must be a finite number, 0 or more"),
        ({"weights": ["2", 1]}, "weights[0]='2' must be a finite number, 0 or more"),
        ({"weights": [0, 0]}, "weights=[0, 0] are all 0; give at least one a weight above 0"),
        ({"weights": [1]}, "weights has 1 numbers for 2 scores; give one each"),
        ({"rule": "median"}, "score='median' must be 'mean' or 'min'"),
    ]:
        with pytest.raises(InvalidArgument, match="^" + re.escape(words) + "$"):
            sample_score([0.5, 1.0], **kwargs)
    with pytest.raises(InvalidArgument, match=r"^scores\[1\]=nan must be a number from 0 to 1"):
        sample_score([0.5, math.nan])
    with pytest.raises(InvalidArgument, match=r"^scores\[0\]=1.5 must be a number from 0 to 1"):
        sample_score([1.5])


def test_the_results_file_keeps_scores_json_can_hold(tmp_path: Path) -> None:
    path = _run(tmp_path, None)
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        record = json.loads(line)
        if record["type"] == "sample":
            assert 0.0 <= record["score"] <= 1.0


def test_the_command_runs_a_scaled_judge_and_rescore_reuses_its_scores(tmp_path, capsys) -> None:
    suite = tmp_path / "shop-graded.json"
    suite.write_text(
        json.dumps(
            {
                "name": "shop-graded",
                "score": "min",
                "cases": [
                    {
                        "id": "order status",
                        "prompt": "Hi, where is my order A-1042?",
                        "checks": [
                            {"covers": ["A-1042", "shipped"], "weight": 2},
                            {
                                "judged_by": {
                                    "rubric": "Says where the order is.",
                                    "scale": [1, 5],
                                    "threshold": 4,
                                }
                            },
                        ],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "r.jsonl"
    argv = ["run", str(suite), "--variant", "v=standin:shop-v1", "--runs", "6"]
    argv += ["--judge", "standin:judge,sensitivity=0.8", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    results = read_results(out)
    assert results.manifest["suite"]["score"] == "min"
    for sample in results.samples:
        share, judged = sample["checks"]
        assert judged["raw_score"] in (1.0, 5.0)  # a True/False truth: the ends of the scale
        assert sample["score"] == min(share["score"], judged["score"])
    again = tmp_path / "again.jsonl"
    assert main(["rescore", str(out), "--suite", str(suite), "--out", str(again)]) == 0
    capsys.readouterr()
    assert [s["score"] for s in read_results(again).samples] == [
        s["score"] for s in results.samples
    ]


def test_the_readme_s_graded_suite_loads_and_runs(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Graded scores", 1)[1].split("\n## ", 1)[0]
    path = tmp_path / "refunds.yaml"
    path.write_text(section.split("```yaml\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    judge = make_judge(lambda answer: "refund" in answer, sensitivity=1, specificity=1)
    suite = load_suite(path, judge=judge)
    assert suite.score == "mean" and [c.weight for c in suite.cases[0].checks] == [2.0, 1.0]
    out = tmp_path / "r.jsonl"
    run(suite, [Variant("echo", _echo)], runs=1, out=out, progress=False, timeout=None)
    (sample,) = read_results(out).samples
    # covers: "refund" of three terms (weight 2); the judge: 5 of 1-5 (weight 1)
    assert sample["score"] == pytest.approx((2 * (1 / 3) + 1.0) / 3)


PY_CHECKS = """\
def broken_score(answer):
    return float("nan")


broken_score.graded = True


def off_scale(answer):
    return 1.5
"""


def test_a_python_check_giving_nan_or_a_score_off_its_scale_fails_naming_it(tmp_path) -> None:
    (tmp_path / "checks.py").write_text(PY_CHECKS, encoding="utf-8")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        _CASE
        + "      - {python: 'checks:broken_score', weight: 3}\n"
        + "      - {python: 'checks:off_scale'}\n"
        + "      - {covers: [p, q]}\n",
        encoding="utf-8",
    )
    out = tmp_path / "r.jsonl"
    run(load_suite(suite), [Variant("echo", _echo)], runs=1, out=out, progress=False, timeout=None)
    (sample,) = read_results(out).samples
    declared, undeclared, share = sample["checks"]
    assert declared["status"] == "failed" and declared["score"] == 0.0
    assert declared["reason"] == (
        "the check itself raised: checks:broken_score returned score=nan must be a number "
        "on the scale (0, 1)"
    )
    # not declared graded: a failure without a score, left out of the sample's score
    assert undeclared["status"] == "failed" and "score" not in undeclared
    assert undeclared["reason"].endswith("returned score=1.5 is outside its scale (0, 1)")
    assert share["score"] == 0.5
    assert sample["score"] == pytest.approx((3 * 0.0 + 1 * 0.5) / 4)


def test_cases_from_a_table_weigh_their_checks(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text(
        "id,prompt,checks\n"
        'a,refund in 14 days,"[{""covers"": [""refund"", ""receipt""], ""weight"": 3}]"\n'
        "b,nothing here,\n",
        encoding="utf-8",
    )
    suite = tmp_path / "t.yaml"
    suite.write_text(
        "name: t\nscore: mean\ncases:\n  from: rows.csv\n  checks:\n"
        "    - {covers: ['14 days'], weight: 1}\n",
        encoding="utf-8",
    )
    loaded = load_suite(suite)
    assert [c.weight for c in loaded.case("a").checks] == [3.0, 1.0]
    out = tmp_path / "r.jsonl"
    run(loaded, [Variant("echo", _echo)], runs=1, out=out, progress=False, timeout=None)
    scores = {s["case"]: s["score"] for s in read_results(out).samples}
    assert scores == {"a": pytest.approx((3 * 0.5 + 1.0) / 4), "b": 0.0}
    bad = tmp_path / "bad.csv"
    bad.write_text('id,prompt,checks\na,p,"[{""covers"": [""x""], ""weight"": -1}]"\n')
    suite.write_text(suite.read_text().replace("rows.csv", "bad.csv"), encoding="utf-8")
    with pytest.raises(CaseFileError) as err:
        load_suite(suite)
    assert "checks[0].weight: must be a finite number, 0 or more, not -1" in str(err.value)
    assert "\n" not in str(err.value)
