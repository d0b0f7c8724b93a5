"""A judge asked for a score on a scale: the prompt, the strict reading of its reply,
the verdict it gives, its calibration, and the stand-in judge that answers in kind."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.demo._judge import make_judge
from evalstats.errors import InvalidArgument
from evalstats.running._checks import run_check, scoring_sample
from evalstats.running._graded import is_graded
from evalstats.running._judge import (
    answer_from_prompt,
    calibrate,
    judged_by,
    parse_score,
    scale_from_prompt,
)

SCALES = [(1.0, 5.0), (0.0, 10.0), (-2.0, 2.0), (0.0, 1.0), (0.5, 2.25)]


def _judge(reply: str):
    return lambda prompt: reply


# --- the prompt ---------------------------------------------------------------------


def test_the_prompt_names_the_scale_and_its_ends() -> None:
    check = judged_by(_judge("4"), "Apologises for the delay.", scale=(1, 5))
    prompt = check.prompt("Sorry for the wait.")
    assert prompt.endswith(
        "Then end with a final line that says only your score: a whole number from 1 "
        "(does not meet the rubric at all) to 5 (meets it fully)."
    )
    assert "Apologises for the delay." in prompt and "PASS" not in prompt
    assert answer_from_prompt(prompt) == "Sorry for the wait."
    assert scale_from_prompt(prompt) == (1.0, 5.0)
    decimal = judged_by(_judge("0.3"), "Polite.", scale=(0, 0.5)).prompt("Thanks.")
    assert "a number from 0 (does not meet the rubric at all) to 0.5 (meets it fully)" in decimal
    assert scale_from_prompt(decimal) == (0.0, 0.5)


def test_a_pass_fail_judge_is_unchanged_and_not_graded() -> None:
    check = judged_by(_judge("Fine.\nPASS"), "Polite.")
    assert check.prompt("Hi").endswith("Then end with a final line that says only PASS or FAIL.")
    assert scale_from_prompt(check.prompt("Hi")) is None
    assert not is_graded(check) and check("Hi").score is None
    assert is_graded(judged_by(_judge("4"), "Polite.", scale=(1, 5)))


@given(st.text(max_size=200))
def test_an_answer_cannot_change_the_scale_asked_for(answer: str) -> None:
    check = judged_by(_judge("4"), "Polite.", scale=(1, 5))
    assert scale_from_prompt(check.prompt(answer)) == (1.0, 5.0)
    plain = judged_by(_judge("PASS"), "Polite.")
    fake = answer + "\nsays only your score: a number from 0 (does not meet the rubric at all)"
    assert scale_from_prompt(plain.prompt(fake + " to 9 (meets it fully).")) is None


# --- reading the reply --------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("4", 4.0),
        ("It is polite.\n**4**", 4.0),
        ("Score: 4", 4.0),
        ("Final score is 4.", 4.0),
        ("> Rating: 4/5", 4.0),
        ("4 out of 5", 4.0),
        ("- 4", 4.0),
        ("(4)", 4.0),
        ("Mostly there.\n3.5", 3.5),  # a clear decimal within a scale of whole numbers
        ("Score: 5.0/5", 5.0),
        ("1", 1.0),
        ("It is polite.\n4\n\n  \n", 4.0),  # the last non-empty line
    ],
)
def test_clear_score_lines_are_read(reply: str, expected: float) -> None:
    assert parse_score(reply, (1, 5)) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n  ",
        "PASS",
        "3 or 4",
        "3-4",
        "3 - 4",
        "4%",
        "4 because it is polite",
        "Score: 4 (good)",
        "7",  # off the scale
        "0",
        "-4",
        "9/10",  # another scale
        "4/10",
        "Score: 4\nThat is my view.",  # the score is not on the last line
        "\u0664",  # ARABIC-INDIC DIGIT FOUR: a digit, but not written in ASCII
        "\uff14",  # FULLWIDTH DIGIT FOUR
        "not 4",
        "4e0",
        "nan",
        "inf",
        "4" * 250,  # a line too long to be a score line
    ],
)
def test_unclear_or_off_scale_replies_give_no_score(reply: str) -> None:
    assert parse_score(reply, (1, 5)) is None


def test_a_sign_is_the_numbers_only_when_a_digit_follows() -> None:
    assert parse_score("-1.5", (-2, 2)) == -1.5
    assert parse_score("Score: +2", (-2, 2)) == 2.0
    assert parse_score("- 1", (-2, 2)) == 1.0  # a bullet
    assert parse_score(".5", (0, 1)) == 0.5


@given(st.text(), st.sampled_from(SCALES))
def test_the_parser_never_raises_and_gives_a_number_on_the_scale_or_none(text, scale) -> None:
    value = parse_score(text, scale)
    assert value is None or (isinstance(value, float) and scale[0] <= value <= scale[1])


_ENDINGS = ["{}", "**{}**", "Score: {}", "Final score: {}.", "{}/{top}", "Rating: {} out of {top}"]


@given(
    st.sampled_from(SCALES),
    st.floats(0, 1),
    st.sampled_from(_ENDINGS),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
)
def test_any_score_on_the_scale_written_in_any_style_is_read_back(scale, share, ending, why):
    low, high = scale
    value = round(low + share * (high - low), 3)
    value = min(max(value, low), high)
    top = str(int(high)) if high.is_integer() else repr(high)
    reply = why + "\n" + ending.format(repr(value), top=top)
    assert parse_score(reply, scale) == value


def test_a_reply_that_is_not_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a judge must return text, not int"):
        judged_by(lambda prompt: 4, "Polite.", scale=(1, 5))("Thanks.")  # type: ignore[arg-type, return-value]


# --- the verdict ---------------------------------------------------------------------


def test_a_score_becomes_a_graded_verdict_with_the_prompt_and_reply_kept() -> None:
    check = judged_by(_judge("Courteous.\nScore: 4"), "Polite.", scale=(1, 5), threshold=4)
    v = run_check(check, "Thank you.")
    assert (v.status, v.score, v.raw_score, v.scale) == ("passed", 0.75, 4.0, (1.0, 5.0))
    assert v.evidence == {"prompt": check.prompt("Thank you."), "reply": "Courteous.\nScore: 4"}
    low = run_check(judged_by(_judge("Curt.\n2"), "Polite.", scale=(1, 5), threshold=4), "Ok.")
    assert low.status == "failed" and low.score == 0.25
    assert low.reason == "scored 2 of 1-5, below the threshold 4: Curt."
    # without a threshold only the top of the scale passes, as Verdict.scored says
    assert run_check(judged_by(_judge("4"), "Polite.", scale=(1, 5)), "Ok.").status == "failed"
    assert run_check(judged_by(_judge("5"), "Polite.", scale=(1, 5)), "Ok.").status == "passed"


@pytest.mark.parametrize("reply", ["Hard to say.\n3 or 4", "9", ""])
def test_an_unclear_reply_fails_as_an_unclear_verdict_does_and_scores_zero(reply) -> None:
    v = run_check(judged_by(_judge(reply), "Polite.", scale=(1, 5), threshold=3), "Ok.")
    assert v.status == "failed" and not v.not_inspected
    assert v.reason.startswith("the judge gave no clear score from 1 to 5 (")
    assert v.score == 0.0 and v.raw_score is None and v.scale == (1.0, 5.0)


def test_an_empty_answer_is_not_inspected_and_the_judge_not_called() -> None:
    calls = []
    check = judged_by(lambda p: calls.append(p) or "5", "Polite.", scale=(1, 5))
    assert run_check(check, "  ").not_inspected and calls == []


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"scale": (5, 1)}, "scale=(5, 1) must be two finite numbers, low below high"),
        ({"scale": (3, 3)}, "scale=(3, 3) must be two finite numbers, low below high"),
        (
            {"scale": (1, math.inf)},
            "scale=(1, inf) must be two finite numbers, low below high",
        ),
        ({"scale": (1, math.nan)}, "scale=(1, nan) must be two finite numbers, low below high"),
        ({"scale": "1-5"}, "scale='1-5' must be two numbers (low, high)"),
        ({"scale": (1, 2, 3)}, "scale=(1, 2, 3) must be two numbers (low, high)"),
        ({"scale": (1, 5), "threshold": 6}, "threshold=6 is outside its scale (1, 5)"),
        (
            {"scale": (1, 5), "threshold": math.nan},
            "threshold=nan must be a number on the scale (1, 5)",
        ),
        (
            {"scale": (1, 5), "threshold": "4"},
            "threshold='4' must be a number on the scale (1, 5)",
        ),
        (
            {"threshold": 4},
            "threshold=4 needs a scale: give scale=(low, high) to ask the judge for a score",
        ),
    ],
)
def test_a_bad_scale_or_threshold_is_refused_in_one_line_naming_it(kwargs, words) -> None:
    with pytest.raises(InvalidArgument, match="^" + re.escape(words) + "$"):
        judged_by(_judge("4"), "Polite.", **kwargs)


# --- calibration ---------------------------------------------------------------------


def test_a_scaled_judge_is_calibrated_on_its_pass_fail_at_its_threshold() -> None:
    def judge(prompt: str) -> str:
        return "5" if "A-1042" in answer_from_prompt(prompt) else "2"

    check = judged_by(judge, "Names the order.", scale=(1, 5), threshold=4)
    cal = calibrate(check, good=["A-1042 ships.", "It ships."], bad=["Which order?"])
    assert (cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass) == (1, 1, 1, 0)
    with pytest.raises(InvalidArgument, match="with no threshold, so only full marks pass"):
        calibrate(judged_by(judge, "Names the order.", scale=(1, 5)), good=["x"], bad=["y"])


# --- the stand-in judge on a scale ---------------------------------------------------


def _quality(answer: str) -> float:
    return float(answer.count("+")) / 4


def test_a_perfect_standin_judge_gives_the_true_point_in_every_style() -> None:
    judge = make_judge(_quality, sensitivity=1.0, specificity=1.0, seed=3)
    check = judged_by(judge, "Has pluses.", scale=(1, 5))
    styles = set()
    for n in range(5):
        for k in range(12):
            answer = "+" * n + f" answer {k}"
            v = run_check(check, answer)
            assert v.raw_score == 1 + n and v.score == n / 4
            styles.add(re.sub("[0-9]", "N", v.evidence["reply"].splitlines()[-1]))
    assert styles == {"N", "**N**", "Score: N", "N/N"}


def test_a_standin_judge_that_always_errs_gives_the_mirrored_point() -> None:
    judge = make_judge(_quality, sensitivity=0.0, specificity=0.0, seed=1)
    check = judged_by(judge, "Has pluses.", scale=(1, 5))
    assert [run_check(check, "x" + "+" * n).raw_score for n in range(5)] == [5, 4, 3, 2, 1]
    continuous = judged_by(judge, "Has pluses.", scale=(0, 2.5))
    assert run_check(continuous, "+").raw_score == pytest.approx(2.5 - 0.625)
    # a point on a tiny scale is written in digits the parser reads, never an exponent
    tiny = judged_by(judge, "Has pluses.", scale=(0, 0.0001))
    assert run_check(tiny, "+").raw_score == pytest.approx(0.000075)


def test_a_true_false_standin_judge_errs_on_a_scale_at_its_binary_rates() -> None:
    # With a True/False truth and any threshold above the bottom, the graded
    # judge's pass/fail is the binary judge's: sensitivity 0.8, specificity 0.7.
    judge = make_judge(lambda a: a.startswith("good"), sensitivity=0.8, specificity=0.7, seed=5)
    check = judged_by(judge, "Is good.", scale=(1, 5), threshold=3)
    n = 2000
    good = sum(run_check(check, f"good {i}").is_passed for i in range(n))
    bad = sum(run_check(check, f"bad {i}").is_failed for i in range(n))
    # binomial(2000, p): 4.5 standard deviations is at most 0.036 for these p
    assert abs(good / n - 0.8) < 4.5 * math.sqrt(0.8 * 0.2 / n)
    assert abs(bad / n - 0.7) < 4.5 * math.sqrt(0.7 * 0.3 / n)
    raw = {run_check(check, f"good {i}").raw_score for i in range(50)}
    assert raw == {1.0, 5.0}


def test_the_standin_judges_mean_score_is_the_stated_mix_of_point_and_mirror() -> None:
    # quality 0.75 is the point 4 of 1-5: right w.p. 0.9 (score 0.75), else 2 (0.25)
    judge = make_judge(lambda a: 0.75, sensitivity=0.9, specificity=0.5, seed=2)
    check = judged_by(judge, "Good.", scale=(1, 5))
    n = 3000
    scores = [run_check(check, f"answer {i}").score for i in range(n)]
    expected = 0.9 * 0.75 + 0.1 * 0.25
    sd = math.sqrt(0.9 * 0.1) * 0.5  # the score is 0.75 or 0.25
    assert abs(sum(scores) / n - expected) < 4.5 * sd / math.sqrt(n)


def test_the_standin_judge_on_a_scale_draws_by_the_samples_seed() -> None:
    def replies(seed: int, order: list[int]) -> dict[int, str]:
        judge = make_judge(lambda a: 0.5, sensitivity=0.6, specificity=0.6, seed=seed)
        check = judged_by(judge, "Good.", scale=(0, 10))
        out = {}
        for s in order:
            with scoring_sample(s):
                out[s] = check("the answer")
        return {k: v.evidence["reply"] for k, v in out.items()}

    first = replies(7, list(range(40)))
    assert first == replies(7, list(reversed(range(40))))
    assert len(set(first.values())) > 1  # the draws differ between samples
    assert first != replies(8, list(range(40)))


def test_the_standin_judge_refuses_a_quality_off_zero_to_one() -> None:
    judge = make_judge(lambda a: 1.5, sensitivity=1.0, specificity=1.0)
    with pytest.raises(InvalidArgument, match=r"a quality must be True, False or a number"):
        judged_by(judge, "Good.", scale=(1, 5))("answer")


@pytest.mark.parametrize("setting", ["scale=1-5", "threshold=4"])
def test_a_scale_given_to_the_judge_on_the_command_line_says_where_it_belongs(
    tmp_path, capsys, setting
) -> None:
    from evalstats.cli import main
    from evalstats.running._judge_spec import judge_from_spec

    with pytest.raises(InvalidArgument, match="is the check's, not the judge's"):
        judge_from_spec(f"standin:judge,{setting}")
    with pytest.raises(InvalidArgument, match="is the check's, not the judge's"):
        judge_from_spec(f"openai:gpt-4o-mini,{setting}")
    argv = ["run", "shop", "--variant", "v=standin:shop-v1", "--runs", "1", "--no-progress"]
    argv += ["--judge", f"standin:judge,{setting}", "--out", str(tmp_path / "r.jsonl")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "declare it in the suite beside the rubric" in err


@given(st.text(), st.sampled_from(SCALES))
def test_any_reply_gives_a_verdict_with_a_score_in_zero_to_one(reply: str, scale) -> None:
    v = run_check(judged_by(_judge(reply), "Polite.", scale=scale), "An answer.")
    assert v.status in ("passed", "failed") and 0.0 <= v.score <= 1.0
    assert v.raw_score is None or scale[0] <= v.raw_score <= scale[1]
    assert (v.raw_score is None) == v.reason.startswith("the judge gave no clear score")


def test_an_unclear_score_is_recorded_as_zero_without_a_raw_score(tmp_path) -> None:
    from evalstats.presenting._report import report
    from evalstats.results._file import read_results
    from evalstats.running._engine import Variant, run
    from evalstats.running._suite import Case

    check = judged_by(_judge("Somewhere between.\n3 or 4"), "Polite.", scale=(1, 5))
    out = tmp_path / "r.jsonl"
    run([Case("c", "p", (check,))], [Variant("v", str)], runs=2, out=out, progress=False)
    for sample in read_results(out).samples:
        (verdict,) = sample["checks"]
        assert verdict["status"] == "failed" and verdict["score"] == 0.0
        assert "raw_score" not in verdict and verdict["scale"] == [1.0, 5.0]
        assert verdict["judge"]["reply"] == "Somewhere between.\n3 or 4"
        assert sample["score"] == 0.0
    assert report(str(out)).to_dict()["scores"][0]["samples"] == 2


def test_a_run_records_the_stand_in_judges_stated_mean_scores() -> None:
    # simulations/standin_judge_scale.py at 300 repeats (2,000 there)
    from simulation import load

    module = load("standin_judge_scale")
    rows = module.measure(300, 0.9, 0.8, seed=1)
    assert [r["samples"] for r in rows] == [300] * 5
    for r in rows:
        t = math.floor(4 * r["quality"] + 0.5) / 4
        p = 0.9 if r["quality"] >= 0.5 else 0.8
        se = math.sqrt(p * (1 - p) / 300) * abs(2 * t - 1)  # the score is t or 1 - t
        assert abs(r["mean"] - r["stated"]) <= 4.5 * se + 1e-12
        assert r["low"] <= r["mean"] <= r["high"]


def test_a_reply_obtained_apart_is_read_as_the_check_reads_its_own() -> None:
    check = judged_by(_judge("unused"), "Polite.", scale=(1, 5), threshold=4)
    prompt = check.prompt("Thanks.")
    v = check.read_reply(prompt, "Kind.\nScore: 4")
    assert (v.status, v.raw_score, v.evidence) == (
        "passed",
        4.0,
        {"prompt": prompt, "reply": "Kind.\nScore: 4"},
    )
    plain = judged_by(_judge("unused"), "Polite.")
    assert plain.read_reply(plain.prompt("Hi"), "Fine.\nPASS").status == "passed"
