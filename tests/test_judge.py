"""Model-graded checks, calibration against a person, and correction for judge error."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint
from strategies import levels

from evalstats.demo._judge import make_judge
from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.running._checks import INSPECTION_FAILURE, Verdict
from evalstats.running._judge import (
    Calibration,
    JudgedCheck,
    _lang_reiczigel,
    _z,
    answer_from_prompt,
    calibrate,
    calibration_from_pairs,
    corrected_pass_rate,
    judged_by,
    parse_judgement,
)
from evalstats.running._variants import Variant
from evalstats.stats._intervals import proportion_ci


@st.composite
def calibration_counts(draw: st.DrawFn, max_count: int = 200) -> tuple[int, int, int, int]:
    """Cells (true_pass, false_fail, true_fail, false_pass) of a person-by-check table."""
    return tuple(draw(st.integers(0, max_count)) for _ in range(4))  # type: ignore[return-value]


# --- reading the judge's reply -------------------------------------------------

PASS_LINES = [
    "PASS",
    "pass",
    "Pass",
    "PASS.",
    "pass!",
    "  PASS  ",
    "**PASS**",
    "*pass*",
    "__PASS__",
    "`PASS`",
    "[PASS]",
    "(pass)",
    "> **Pass**",
    "## PASS",
    "- PASS",
    "Verdict: PASS",
    "Verdict: **PASS**",
    "**Verdict:** PASS",
    "**Verdict: PASS**",
    "verdict - pass",
    "Final verdict: pass.",
    "Final answer: PASS",
    "Result = PASS",
    "Grade: PASSED",
    "PASS ✅",
    "«PASS»",
]

FAIL_LINES = [
    "FAIL",
    "fail",
    "FAIL.",
    "**FAIL**",
    "> **Fail**",
    "Verdict: FAIL.",
    "VERDICT: fail",
    "Decision: FAIL",
    "Failed",
    "**Final verdict: FAIL**",
    "— FAIL —",
]

UNCLEAR_LINES = [
    "PASS or FAIL",
    "PASS/FAIL",
    "pass fail",
    "FAIL? no, PASS",
    "not a pass",
    "This is not a fail",
    "I would say PASS",
    "The answer passes.",
    "PASSING",
    "Passable",
    "failure",
    "Verdict:",
    "Verdict: unclear",
    "bypass",
    "PASS PASS",
    "PASSÉ",
]


@pytest.mark.parametrize("line", PASS_LINES)
def test_pass_lines_are_read_as_pass(line: str) -> None:
    verdict = parse_judgement(f"The answer names the order and the date.\n{line}")
    assert verdict == Verdict.passed()


@pytest.mark.parametrize("line", FAIL_LINES)
def test_fail_lines_are_read_as_fail_with_the_reasoning(line: str) -> None:
    verdict = parse_judgement(f"It never names the order.\n{line}")
    assert verdict.is_failed
    assert verdict.reason == "the judge failed it: It never names the order."


@pytest.mark.parametrize("line", UNCLEAR_LINES)
def test_ambiguous_lines_are_no_clear_verdict(line: str) -> None:
    verdict = parse_judgement(f"Some reasoning.\n{line}")
    assert verdict.is_failed
    assert verdict.reason.startswith("the judge gave no clear verdict")
    assert " ".join(line.split())[:40] in verdict.reason


def test_only_the_last_non_empty_line_decides() -> None:
    assert parse_judgement("PASS\nOn reflection I am not sure.").reason.startswith(
        "the judge gave no clear verdict"
    )
    assert parse_judgement("FAIL at first sight.\nPASS").is_passed
    # Trailing blank lines, whitespace-only lines and Windows line ends are skipped.
    assert parse_judgement("Fine.\r\nPASS\r\n\r\n   \n\t\n").is_passed
    assert parse_judgement("Wrong order.\n\nFAIL\n\n").reason == "the judge failed it: Wrong order."


def test_an_empty_reply_is_no_clear_verdict() -> None:
    for text in ("", "   ", "\n\n"):
        verdict = parse_judgement(text)
        assert verdict.is_failed
        assert verdict.reason == "the judge gave no clear verdict (its reply was empty)"


def test_a_fail_without_reasoning_says_so() -> None:
    assert parse_judgement("FAIL").reason == "the judge failed it: (no reasoning given)"


def test_long_reasoning_is_shortened() -> None:
    reasoning = "word " * 500
    verdict = parse_judgement(f"{reasoning}\nFAIL")
    assert verdict.reason.startswith("the judge failed it: word word")
    assert verdict.reason.endswith("…")
    assert len(verdict.reason) <= len("the judge failed it: ") + 240


def test_a_long_unclear_line_is_quoted_in_part() -> None:
    line = "maybe " * 100
    reason = parse_judgement(line).reason
    assert reason.startswith('the judge gave no clear verdict (it ended with "maybe maybe')
    assert len(reason) < 140


def test_a_very_long_last_line_is_not_a_verdict() -> None:
    # A verdict line is short; a long one is rejected without a regex blow-up
    # (the old pattern took seconds on 16,000 punctuation marks).
    assert parse_judgement("!" * 300 + " PASS").reason.startswith("the judge gave no clear")
    assert parse_judgement("!" * 100_000 + "x").is_failed
    assert parse_judgement("!" * 190 + " PASS").is_passed


def test_a_reply_that_is_not_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="must return text"):
        parse_judgement(None)  # type: ignore[arg-type]


@given(st.text())
def test_the_parser_never_raises_on_any_text(text: str) -> None:
    verdict = parse_judgement(text)
    assert verdict.status in ("passed", "failed")
    assert verdict.is_passed or verdict.reason


@given(st.text(), st.sampled_from(PASS_LINES + FAIL_LINES))
def test_any_reasoning_followed_by_a_verdict_line_is_read(reasoning: str, line: str) -> None:
    verdict = parse_judgement(f"{reasoning}\n{line}\n")
    assert verdict.is_passed == (line in PASS_LINES)
    if verdict.is_failed:
        assert verdict.reason.startswith("the judge failed it: ")


# --- the check ---------------------------------------------------------------------


def _judge_saying(text: str, calls: list[str]):
    def judge(prompt: str) -> str:
        calls.append(prompt)
        return text

    return judge


def test_the_prompt_holds_the_rubric_and_the_answer_and_asks_for_a_final_line() -> None:
    calls: list[str] = []
    check = judged_by(_judge_saying("Good.\nPASS", calls), "Names the order number.")
    assert check("Order A-1042 has shipped.") == Verdict.passed()
    (prompt,) = calls
    assert "Names the order number." in prompt
    assert "Order A-1042 has shipped." in prompt
    assert "PASS or FAIL" in prompt
    assert answer_from_prompt(prompt) == "Order A-1042 has shipped."
    assert prompt == check.prompt("Order A-1042 has shipped.")


def test_a_fail_carries_the_judges_reasoning() -> None:
    check = judged_by(_judge_saying("It names no order.\nVerdict: FAIL.", []), "Names the order.")
    verdict = check("It has shipped.")
    assert verdict.is_failed and not verdict.not_inspected
    assert verdict.reason == "the judge failed it: It names no order."


def test_no_clear_verdict_is_a_failure() -> None:
    check = judged_by(_judge_saying("Hard to say.\nPASS or FAIL", []), "Names the order.")
    assert check("It has shipped.").reason == (
        'the judge gave no clear verdict (it ended with "PASS or FAIL")'
    )


@pytest.mark.parametrize("answer", ["", "   ", "\n\t", None])
def test_an_empty_answer_is_not_inspected_and_the_judge_is_not_called(answer) -> None:
    calls: list[str] = []
    check = judged_by(_judge_saying("PASS", calls), "Names the order.")
    verdict = check(answer)
    assert verdict.is_failed and verdict.not_inspected
    assert verdict.reason.startswith(f"{INSPECTION_FAILURE}: ")
    assert calls == []


def test_an_answer_that_is_not_text_is_not_inspected() -> None:
    calls: list[str] = []
    verdict = judged_by(_judge_saying("PASS", calls), "Names the order.")(42)
    assert verdict.not_inspected and calls == []


def test_a_transient_provider_error_propagates_so_the_sample_is_unmeasured() -> None:
    def judge(prompt: str) -> str:
        raise TransientProviderError("429 Too Many Requests", retry_after=2.0)

    check = judged_by(judge, "Names the order.")
    with pytest.raises(TransientProviderError) as info:
        check("Order A-1042 has shipped.")
    assert info.value.retry_after == 2.0


@pytest.mark.parametrize("error", [ProviderError("401 unauthorised"), RuntimeError("bug")])
def test_any_other_judge_error_propagates_too(error: Exception) -> None:
    def judge(prompt: str) -> str:
        raise error

    with pytest.raises(type(error)):
        judged_by(judge, "Names the order.")("Order A-1042 has shipped.")


def test_a_judge_returning_something_other_than_text_is_an_error() -> None:
    check = judged_by(lambda prompt: True, "Names the order.")
    with pytest.raises(TypeError, match="must return text, not bool"):
        check("Order A-1042 has shipped.")


@pytest.mark.parametrize(
    ("judge", "rubric", "name", "message"),
    [
        ("gpt", "Names the order.", None, "judge='gpt' must be a callable"),
        (None, "Names the order.", None, "judge=None must be a callable"),
        (str.upper, "", None, "rubric='' must be a non-empty"),
        (str.upper, "   ", None, "rubric='   ' must be a non-empty"),
        (str.upper, None, None, "rubric=None must be a non-empty"),
        (str.upper, "Names the order.", "", "name='' must be a non-empty"),
        (str.upper, "Names the order.", 3, "name=3 must be a non-empty"),
    ],
)
def test_bad_arguments_are_rejected_at_construction(judge, rubric, name, message) -> None:
    with pytest.raises(InvalidArgument, match=message):
        judged_by(judge, rubric, name=name)


def test_the_check_has_a_name() -> None:
    check = judged_by(str.upper, "Names the order number.")
    assert isinstance(check, JudgedCheck)
    assert check.name == check.__name__ == "judged_by('Names the order number.')"
    long = judged_by(str.upper, "Names the order number the customer gave, and the date.")
    assert long.name == "judged_by('Names the order number the customer gav…')"
    assert judged_by(str.upper, "x", name="order named").__name__ == "order named"
    assert "judged_by(rubric=" in repr(check)


@given(st.text(min_size=1).filter(str.strip), st.text(min_size=1).filter(str.strip))
def test_the_answer_can_be_read_back_from_any_prompt(answer: str, rubric: str) -> None:
    assume("\n<answer>\n" not in "\n" + rubric + "\n")
    check = judged_by(str.upper, rubric)
    assert answer_from_prompt(check.prompt(answer)) == answer


def test_answer_from_prompt_without_an_answer_block_is_none() -> None:
    assert answer_from_prompt("Grade this: hello") is None
    assert answer_from_prompt("x\n<answer>\nno closing tag") is None


# --- the stand-in judge --------------------------------------------------------------


def _is_good(answer: str) -> bool:
    return answer.endswith("good")


def test_the_standin_judge_errs_at_its_set_rates() -> None:
    judge = make_judge(_is_good, sensitivity=0.8, specificity=0.7, seed=3)
    check = judged_by(judge, "A good answer ends with 'good'.")
    m = 4000
    passed_good = sum(check(f"answer {i} is good").is_passed for i in range(m))
    failed_bad = sum(check(f"answer {i} is bad").is_failed for i in range(m))
    # Binomial standard error at m = 4000 is at most 0.008; allow 4 of them.
    assert abs(passed_good / m - 0.8) < 4 * math.sqrt(0.8 * 0.2 / m)
    assert abs(failed_bad / m - 0.7) < 4 * math.sqrt(0.7 * 0.3 / m)
    assert judge.calls == 2 * m


def test_the_standin_judge_is_deterministic_for_a_seed_and_order_free() -> None:
    answers = [f"answer {i} is {'good' if i % 3 else 'bad'}" for i in range(200)]
    a = judged_by(make_judge(_is_good, sensitivity=0.6, specificity=0.6, seed=7), "r")
    b = judged_by(make_judge(_is_good, sensitivity=0.6, specificity=0.6, seed=7), "r")
    c = judged_by(make_judge(_is_good, sensitivity=0.6, specificity=0.6, seed=8), "r")
    first = [a(x) for x in answers]
    assert [b(x) for x in reversed(answers)] == first[::-1]
    assert [c(x) for x in answers] != first


@pytest.mark.parametrize(("se", "sp"), [(0.9, 0.9), (0.8, 0.6), (0.97, 0.75)])
def test_the_standin_judge_errs_independently_on_every_call_of_every_case(se, sp) -> None:
    # The same answer judged 2,000 times (as the repeats of a case give it) is
    # passed at the set sensitivity if good and failed at the set specificity if
    # bad, for each of several cases: not the same verdict every time.
    judge = make_judge(_is_good, sensitivity=se, specificity=sp, seed=5)
    check = judged_by(judge, "A good answer ends with 'good'.")
    m = 2000
    for answer in ("Order A-1042 ships today, good", "refund done, good", "It is good"):
        rate = sum(check(answer).is_passed for _ in range(m)) / m
        # 4 binomial standard errors: a false alarm about 1 in 16,000 per case
        assert abs(rate - se) < 4 * math.sqrt(se * (1 - se) / m), (answer, rate)
    for answer in ("no idea, bad", "wrong order, bad"):
        rate = sum(check(answer).is_failed for _ in range(m)) / m
        assert abs(rate - sp) < 4 * math.sqrt(sp * (1 - sp) / m), (answer, rate)


def test_in_a_run_the_standin_judge_draws_per_sample_whatever_the_concurrency(tmp_path) -> None:
    # One answer for every repeat: the judge's verdicts differ between the
    # repeats at the set rate, and they are the same at concurrency 1 and 8,
    # because each draw is seeded by its sample, not by the order of the calls.
    from evalstats.running._engine import run
    from evalstats.running._suite import Case

    def verdicts(concurrency: int) -> dict[tuple[str, int], str]:
        judge = make_judge(_is_good, sensitivity=0.8, specificity=0.8, seed=2)
        cases = [
            Case(f"c{i}", "Where is my order?", (judged_by(judge, "Ends with good."),))
            for i in range(4)
        ]
        out = tmp_path / f"run{concurrency}.jsonl"
        run(
            cases,
            [Variant("v", lambda prompt: "It ships today, good")],
            runs=100,
            out=out,
            concurrency=concurrency,
            progress=False,
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        return {
            (r["case"], r["repeat"]): r["checks"][0]["status"]
            for r in rows
            if r["type"] == "sample"
        }

    one, eight = verdicts(1), verdicts(8)
    assert one == eight
    for i in range(4):
        passed = sum(one[(f"c{i}", r)] == "passed" for r in range(100))
        # 0.8 of 100, within 4 standard errors (4 * 0.04)
        assert 64 <= passed <= 96, passed


def test_a_perfect_standin_judge_agrees_with_the_truth_in_every_reply_style() -> None:
    judge = make_judge(_is_good, sensitivity=1.0, specificity=1.0)
    check = judged_by(judge, "r")
    assert all(check(f"{i} good").is_passed for i in range(300))
    assert all(check(f"{i} bad").is_failed for i in range(300))


def test_the_standin_judge_rejects_prompts_it_cannot_read_and_bad_arguments() -> None:
    judge = make_judge(_is_good, sensitivity=0.9, specificity=0.9)
    with pytest.raises(InvalidArgument, match="no <answer> block"):
        judge("Is this good?")
    with pytest.raises(InvalidArgument, match="truth=1 must be a callable"):
        make_judge(1, sensitivity=0.9, specificity=0.9)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"sensitivity=90 must be between 0 and 1"):
        make_judge(_is_good, sensitivity=90, specificity=0.9)
    with pytest.raises(InvalidArgument, match="specificity=nan"):
        make_judge(_is_good, sensitivity=0.9, specificity=float("nan"))
    with pytest.raises(InvalidArgument, match="seed=1.5 must be an integer"):
        make_judge(_is_good, sensitivity=0.9, specificity=0.9, seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="seed=True must be an integer"):
        make_judge(_is_good, sensitivity=0.9, specificity=0.9, seed=True)


# --- calibration -------------------------------------------------------------------------


def _mentions_order(answer: str) -> str | None:
    return None if "A-1042" in answer else "doesn't mention 'A-1042'"


GOOD = ["Order A-1042 ships today.", "A-1042 is on its way.", "It ships today.", "A-1042: sent"]
BAD = ["Which order?", "Order A-1042? No such order.", "We lost it.", "Try again later."]


def test_calibration_counts_by_hand() -> None:
    cal = calibrate(_mentions_order, GOOD, BAD)
    # good: 3 mention the order (passed), 1 does not (false fail);
    # bad: 1 mentions it (false pass), 3 do not (true fail).
    assert (cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass) == (3, 1, 3, 1)
    assert (cal.n_good, cal.n_bad, cal.n, cal.agreed) == (4, 4, 8, 6)
    assert cal.sensitivity.estimate == 3 / 4
    assert cal.specificity.estimate == 3 / 4
    assert cal.agreement.estimate == 6 / 8
    assert not cal.passed_calibration
    (first, second) = cal.disagreements
    assert (first.answer, first.person, first.check) == ("It ships today.", "passed", "failed")
    assert first.reason == "doesn't mention 'A-1042'"
    assert (second.answer, second.person, second.check, second.reason) == (
        "Order A-1042? No such order.",
        "failed",
        "passed",
        "",
    )
    assert cal.unscored == ()


def test_rates_carry_wilson_intervals_matching_statsmodels() -> None:
    cal = Calibration.from_counts(45, 5, 37, 13, level=0.9)
    for iv, (k, n) in (
        (cal.sensitivity, (45, 50)),
        (cal.specificity, (37, 50)),
        (cal.agreement, (82, 100)),
    ):
        # statsmodels proportion_confint(method="wilson"), an independent implementation
        low, high = proportion_confint(k, n, alpha=0.1, method="wilson")
        assert iv.low == pytest.approx(low, abs=1e-12)
        assert iv.high == pytest.approx(high, abs=1e-12)
        assert iv.level == 0.9


def test_kappa_by_hand_and_against_statsmodels() -> None:
    # person passed 25 (check: 20 pass, 5 fail), failed 25 (check: 10 pass, 15 fail).
    cal = Calibration.from_counts(20, 5, 15, 10)
    # Cohen (1960): kappa = (p_o - p_e) / (1 - p_e), p_o = 35/50 = 0.7,
    # p_e = (25/50)(30/50) + (25/50)(20/50) = 0.5, so kappa = 0.2 / 0.5 = 0.4.
    assert cal.kappa.estimate == pytest.approx(0.4, abs=1e-12)
    ref = cohens_kappa(np.array([[20, 5], [10, 15]]))
    assert cal.kappa.estimate == pytest.approx(ref.kappa, abs=1e-12)
    # statsmodels' 95% limits: kappa -/+ 1.96 * ASE (Fleiss, Cohen & Everitt 1969)
    assert cal.kappa.low == pytest.approx(ref.kappa_low, abs=1e-12)
    assert cal.kappa.high == pytest.approx(ref.kappa_upp, abs=1e-12)
    assert ref.kappa_low == pytest.approx(0.151092290476661, abs=1e-12)


def test_kappa_at_another_level_uses_the_same_standard_error() -> None:
    cal = Calibration.from_counts(20, 5, 15, 10, level=0.8)
    ref = cohens_kappa(np.array([[20, 5], [10, 15]]))
    z = 1.2815515655446004  # scipy.stats.norm.ppf(0.9)
    assert cal.kappa.low == pytest.approx(ref.kappa - z * ref.std_kappa, abs=1e-12)
    assert cal.kappa.high == pytest.approx(ref.kappa + z * ref.std_kappa, abs=1e-12)


@given(calibration_counts(), levels)
def test_kappa_matches_statsmodels_on_any_table(cells, level) -> None:
    tp, ff, tf, fp = cells
    assume(tp + ff > 0 and tf + fp > 0 and tp + fp > 0 and ff + tf > 0)
    cal = Calibration.from_counts(tp, ff, tf, fp, level=level)
    ref = cohens_kappa(np.array([[tp, ff], [fp, tf]], dtype=float))
    assert cal.kappa.estimate == pytest.approx(ref.kappa, abs=1e-9)
    assert -1 <= cal.kappa.low <= cal.kappa.estimate <= cal.kappa.high <= 1


def test_kappa_is_not_reported_when_it_measures_nothing() -> None:
    only_good = Calibration.from_counts(8, 2, 0, 0)
    assert math.isnan(only_good.kappa.estimate)
    assert "both good and bad" in only_good.kappa.note
    constant_check = Calibration.from_counts(10, 0, 0, 10)  # the check passes everything
    assert math.isnan(constant_check.kappa.estimate)
    assert "same verdict" in constant_check.kappa.note
    assert "n/a" in str(constant_check)


def test_unscored_answers_are_reported_and_not_counted() -> None:
    def check(answer: str):
        if answer.startswith("?"):
            return Verdict.unscored("no order in this answer")
        return _mentions_order(answer)

    cal = calibrate(check, ["A-1042 sent", "?"], ["nope", "? maybe"])
    assert (cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass) == (1, 0, 1, 0)
    assert [(u.answer, u.person, u.check) for u in cal.unscored] == [
        ("?", "passed", "unscored"),
        ("? maybe", "failed", "unscored"),
    ]
    assert cal.disagreements == ()
    assert cal.agreement.estimate == 1.0
    assert not cal.passed_calibration  # unscored is not agreement
    assert "2 answer(s) the check did not score" in str(cal)


def test_a_perfect_check_passes_calibration_once_enough_answers_show_it() -> None:
    # Wilson 95% lower end of 1 of 1 is 20.7%, of 20 of 20 is 83.9%
    # (statsmodels proportion_confint(20, 20, method="wilson")[0] = 0.8389).
    few = calibrate(_mentions_order, ["A-1042 sent"], ["lost"])
    assert not few.passed_calibration
    assert "sensitivity could be as low as 21% (needs 80%)" in str(few)
    cal = calibrate(_mentions_order, [f"A-1042 sent {i}" for i in range(20)], ["lost"] * 20)
    assert cal.passed_calibration
    assert "passed calibration: yes: sensitivity at least 84%, specificity at least 84%" in str(cal)
    strict = calibrate(
        _mentions_order, [f"A-1042 sent {i}" for i in range(20)], ["lost"] * 20, min_specificity=0.9
    )
    assert not strict.passed_calibration
    assert "specificity could be as low as 84% (needs 90%)" in str(strict)


def test_the_rule_is_the_lower_ends_of_the_intervals() -> None:
    # 86% agreement and kappa 0.73 with 43 of 50 good and 43 of 50 bad answers:
    # Wilson lower ends 73.8% (statsmodels proportion_confint(43, 50, method="wilson")).
    cal = Calibration.from_counts(43, 7, 43, 7)
    assert round(cal.agreement.estimate, 2) == 0.86 and round(cal.kappa.estimate, 2) == 0.72
    assert not cal.passed_calibration
    assert Calibration.from_counts(
        43, 7, 43, 7, min_sensitivity=0.7, min_specificity=0.7
    ).passed_calibration
    assert "must reach 80% for sensitivity and 80% for specificity" in cal.rule
    with pytest.raises(
        InvalidArgument, match=r"min_sensitivity=80 must be a share between 0 and 1 \(did you mean"
    ):
        Calibration.from_counts(1, 0, 1, 0, min_sensitivity=80)


def test_nothing_scored_is_not_a_calibration_pass() -> None:
    cal = calibrate(lambda a: Verdict.unscored("n/a"), ["a"], ["b"])
    assert cal.n == 0 and not cal.passed_calibration
    assert math.isnan(cal.agreement.estimate)


def test_str_and_to_dict() -> None:
    cal = calibrate(_mentions_order, GOOD, BAD)
    text = str(cal)
    assert "8 scored answers (4 good, 4 bad)" in text
    assert "sensitivity    75%" in text and "passed 3 of 4 good answers" in text
    assert "specificity    75%" in text and "failed 3 of 4 bad answers" in text
    assert "Cohen's kappa  0.50" in text
    assert 'person passed, check failed: "It ships today."' in text
    assert "passed calibration: no: sensitivity could be as low as 30% (needs 80%)" in text
    doc = json.loads(json.dumps(cal.to_dict(), allow_nan=False))
    assert doc["true_pass"] == 3 and doc["false_pass"] == 1
    assert doc["sensitivity"]["estimate"] == 0.75
    assert doc["passed_calibration"] is False
    assert doc["disagreements"][0]["answer"] == "It ships today."


def test_many_disagreements_are_listed_in_part() -> None:
    cal = calibrate(lambda a: "no", [f"good {i}" for i in range(25)], ["bad"])
    assert "... and 15 more" in str(cal)


def test_calibrating_a_judge_propagates_transient_errors() -> None:
    def judge(prompt: str) -> str:
        raise TransientProviderError("503")

    with pytest.raises(TransientProviderError):
        calibrate(judged_by(judge, "Names the order."), ["A-1042"], ["no"])


def test_calibrating_a_judged_check_records_the_judges_reasons() -> None:
    judge = make_judge(_is_good, sensitivity=0.5, specificity=0.5, seed=1)
    cal = calibrate(
        judged_by(judge, "r"), [f"{i} good" for i in range(40)], [f"{i} bad" for i in range(40)]
    )
    misses = [d for d in cal.disagreements if d.person == "passed"]
    assert misses and all(d.reason.startswith("the judge failed it: ") for d in misses)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("no", ["a"], ["b"]), "check='no' must be a callable"),
        ((_mentions_order, [], []), "good and bad are both empty"),
        ((_mentions_order, "A-1042", ["b"]), "good must be a list of answers, not a single"),
        ((_mentions_order, ["a"], 3), "bad=3 must be a list of answers"),
    ],
)
def test_calibrate_rejects_bad_arguments(args, message) -> None:
    with pytest.raises(InvalidArgument, match=message):
        calibrate(*args)


def test_calibrate_rejects_a_bad_level_and_a_bad_check_result() -> None:
    with pytest.raises(InvalidArgument, match="did you mean 0.95"):
        calibrate(_mentions_order, ["a"], ["b"], level=95)
    with pytest.raises(InvalidArgument, match="a check must return None, a str or a Verdict"):
        calibrate(lambda a: 1, ["a"], ["b"])


def test_from_counts_rejects_bad_counts() -> None:
    with pytest.raises(InvalidArgument, match="true_pass=-1 is negative"):
        Calibration.from_counts(-1, 0, 0, 0)
    with pytest.raises(InvalidArgument, match="false_pass=1.5 must be a whole number"):
        Calibration.from_counts(1, 0, 0, 1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="single count"):
        Calibration.from_counts([1, 2], 0, 0, 0)  # type: ignore[arg-type]


def test_calibration_from_pairs() -> None:
    cal = calibration_from_pairs(
        [(True, True), (True, False), (False, False), (False, True), (True, None)]
    )
    assert (cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass) == (1, 1, 1, 1)
    assert len(cal.unscored) == 1 and cal.unscored[0].person == "passed"
    assert [d.check for d in cal.disagreements] == ["failed", "passed"]


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([], "pairs is empty"),
        ("TT", "pairs must be a list of answers, not a single string"),
        ([(True,)], r"pairs\[0\]=\(True,\) must be a pair"),
        ([(True, True), 5], r"pairs\[1\]=5 must be a pair"),
        ([("pass", True)], r"pairs\[0\] human verdict 'pass' must be True or False"),
        ([(True, 1)], r"pairs\[0\] check verdict 1 must be True, False or None"),
    ],
)
def test_calibration_from_pairs_rejects_bad_pairs(pairs, message) -> None:
    with pytest.raises(InvalidArgument, match=message):
        calibration_from_pairs(pairs)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60), levels)
def test_pairs_and_calibrate_agree_and_counts_add_up(pairs, level) -> None:
    cal = calibration_from_pairs(pairs, level=level)
    answers = [f"{i}:{'pass' if c else 'fail'}" for i, (_, c) in enumerate(pairs)]

    def replay(answer: str) -> str | None:
        return None if answer.endswith("pass") else "failed"

    good = [a for a, (h, _) in zip(answers, pairs, strict=True) if h]
    bad = [a for a, (h, _) in zip(answers, pairs, strict=True) if not h]
    again = calibrate(replay, good, bad, level=level)
    counts = (cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass)
    assert counts == (again.true_pass, again.false_fail, again.true_fail, again.false_pass)
    assert sum(counts) == len(pairs)
    assert cal.n_good == sum(h for h, _ in pairs)
    assert len(cal.disagreements) == sum(h != c for h, c in pairs)
    assert cal.passed_calibration == (
        cal.n_good > 0
        and cal.n_bad > 0
        and cal.sensitivity.low >= 0.8
        and cal.specificity.low >= 0.8
    )
    for iv in (cal.agreement, cal.sensitivity, cal.specificity):
        assert 0 <= iv.low <= iv.high <= 1


# --- correcting a pass rate for judge error --------------------------------------------


def test_rogan_gladen_point_estimate_by_hand() -> None:
    cal = Calibration.from_counts(90, 10, 80, 20)  # Se = 0.9, Sp = 0.8
    iv = corrected_pass_rate(60, 100, cal)
    # Rogan & Gladen (1978): (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.4 / 0.7
    assert iv.estimate == pytest.approx(4 / 7, abs=1e-12)
    assert iv.method == "lang_reiczigel"
    assert iv.low < 4 / 7 < iv.high
    assert "sensitivity 0.9 (from 100 good answers)" in iv.note


# Lang & Reiczigel (2014), Preventive Veterinary Medicine 113:13-22, examples 1,
# 2 and 4 (two data sets), as listed with the paper's 95% limits in the examples
# of prevSeSp in the R package asht (M. P. Fay): observed passes x of n, the
# judge passing tp of n_good good and failing tf of n_bad bad answers.
LANG_REICZIGEL_2014 = [
    ((4060, 11284, 178, 179, 358, 359), (0.349, 0.372)),  # example 1
    ((51, 2971, 32, 33, 20, 20), (0.0, 0.053)),  # example 2
    ((259, 509, 84, 127, 96, 109), (0.58, 0.87)),  # example 4
    ((51, 509, 23, 41, 187, 195), (0.037, 0.195)),  # example 4, second data set
]


@pytest.mark.parametrize(("counts", "limits"), LANG_REICZIGEL_2014)
def test_lang_reiczigel_2014_worked_examples(counts, limits) -> None:
    x, n, tp, n_good, tf, n_bad = counts
    cal = Calibration.from_counts(tp, n_good - tp, tf, n_bad - tf)
    iv = corrected_pass_rate(x, n, cal)
    digits = len(str(limits[1]).split(".")[1])  # the precision the paper gives
    assert (round(iv.low, digits), round(iv.high, digits)) == limits
    # Rogan & Gladen (1978): (AP + Sp - 1) / (Se + Sp - 1), clipped to [0, 1]
    rg = (x / n + tf / n_bad - 1) / (tp / n_good + tf / n_bad - 1)
    assert iv.estimate == pytest.approx(min(max(rg, 0.0), 1.0), abs=1e-12)


def test_lang_reiczigel_2014_example_3() -> None:
    # Example 3 gives the observed rate as 6% of 11,862 (not a whole count), the
    # sensitivity as 8 of 10 and the specificity as 12 of 12; 95% limits 0 and 0.147.
    from evalstats.running._judge import _lang_reiczigel

    z = 1.959963984540054  # scipy.stats.norm.ppf(0.975)
    _, low, high, _ = _lang_reiczigel(0.06 * 11862, 11862, 8, 10, 12, 12, z)
    assert (round(float(low), 3), round(float(high), 3)) == (0.0, 0.147)


def test_estimates_outside_zero_one_are_clipped_and_say_so() -> None:
    cal = Calibration.from_counts(90, 10, 80, 20)
    low = corrected_pass_rate(10, 100, cal)  # (0.1 + 0.8 - 1) / 0.7 < 0
    assert low.estimate == 0.0 and low.low == 0.0
    assert "clipped" in low.note
    high = corrected_pass_rate(98, 100, cal)  # (0.98 + 0.8 - 1) / 0.7 > 1
    assert high.estimate == 1.0 and high.high == 1.0


def test_a_judge_no_better_than_chance_cannot_be_corrected() -> None:
    for counts in [(50, 50, 50, 50), (60, 40, 40, 60), (30, 70, 50, 50)]:
        with pytest.raises(InvalidArgument, match="no better than chance"):
            corrected_pass_rate(30, 60, Calibration.from_counts(*counts))


def test_a_calibration_without_good_or_bad_answers_cannot_correct() -> None:
    with pytest.raises(InvalidArgument, match="no bad answers, so the judge's specificity"):
        corrected_pass_rate(5, 10, Calibration.from_counts(9, 1, 0, 0))
    with pytest.raises(InvalidArgument, match="no good answers, so the judge's sensitivity"):
        corrected_pass_rate(5, 10, Calibration.from_counts(0, 0, 9, 1))


def test_corrected_pass_rate_rejects_bad_arguments() -> None:
    cal = Calibration.from_counts(90, 10, 80, 20)
    with pytest.raises(InvalidArgument, match="observed_passes=11 is larger than trials=10"):
        corrected_pass_rate(11, 10, cal)
    with pytest.raises(InvalidArgument, match="trials=-1 is negative"):
        corrected_pass_rate(0, -1, cal)
    with pytest.raises(InvalidArgument, match="must be a Calibration"):
        corrected_pass_rate(5, 10, (0.9, 0.8))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="level=1.5 must be between 0 and 1"):
        corrected_pass_rate(5, 10, cal, level=1.5)


def test_zero_trials_give_nothing_to_estimate() -> None:
    iv = corrected_pass_rate(0, 0, Calibration.from_counts(90, 10, 80, 20))
    assert math.isnan(iv.estimate) and (iv.low, iv.high) == (0.0, 1.0)
    assert "no trials" in iv.note


def test_arrays_give_the_same_intervals_as_scalars() -> None:
    cal = Calibration.from_counts(45, 5, 40, 10)
    k, n = np.array([0, 10, 30, 50, 0]), np.array([50, 50, 50, 50, 0])
    arr = corrected_pass_rate(k, n, cal)
    for i in range(4):
        one = corrected_pass_rate(int(k[i]), int(n[i]), cal)
        assert (arr.estimate[i], arr.low[i], arr.high[i]) == pytest.approx(
            (one.estimate, one.low, one.high), abs=1e-15
        )
    assert math.isnan(arr.estimate[4])


def test_with_a_perfect_well_known_judge_it_is_the_agresti_coull_interval() -> None:
    # With Se = Sp = 1 the Rogan-Gladen estimate is the observed rate, and as the
    # calibration grows the Lang & Reiczigel interval tends to the Agresti & Coull
    # (1998) interval, which adds z^2/2 successes and failures in the same way.
    cal = Calibration.from_counts(10**9, 0, 10**9, 0)
    for k, n in [(0, 20), (7, 20), (60, 100), (100, 100)]:
        iv = corrected_pass_rate(k, n, cal)
        assert iv.estimate == k / n
        # statsmodels proportion_confint(method="agresti_coull")
        low, high = proportion_confint(k, n, alpha=0.05, method="agresti_coull")
        assert iv.low == pytest.approx(max(low, 0.0), abs=1e-6)
        assert iv.high == pytest.approx(min(high, 1.0), abs=1e-6)


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.data())
def test_a_perfect_judge_leaves_the_observed_rate_unchanged(n_good, n_bad, data) -> None:
    n = data.draw(st.integers(1, 10_000))
    k = data.draw(st.integers(0, n))
    cal = Calibration.from_counts(n_good, 0, n_bad, 0)
    assert corrected_pass_rate(k, n, cal).estimate == pytest.approx(k / n, abs=1e-12)


@given(calibration_counts(), st.data(), levels)
def test_corrected_interval_lies_in_zero_one_and_contains_its_estimate(cells, data, level):
    tp, ff, tf, fp = cells
    assume(tp + ff > 0 and tf + fp > 0)
    assume(tp / (tp + ff) + tf / (tf + fp) > 1)
    n = data.draw(st.integers(1, 2000))
    k = data.draw(st.integers(0, n))
    iv = corrected_pass_rate(k, n, Calibration.from_counts(tp, ff, tf, fp), level=level)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


@given(calibration_counts(), st.integers(1, 300), st.data())
def test_a_higher_level_never_narrows_the_interval(cells, n, data) -> None:
    tp, ff, tf, fp = cells
    # With one or two calibration answers of a kind the adjusted-Wald centre moves
    # with the level enough to order the widths either way (25 good answers all
    # judged right and 1 bad one, k=0 of n=1: 0.528 at 80%, 0.527 at 99%); a
    # random search of 60,000 draws with at least 3 of each kind found no case.
    assume(tp + ff >= 3 and tf + fp >= 3 and tp / (tp + ff) + tf / (tf + fp) > 1)
    k = data.draw(st.integers(0, n))
    cal = Calibration.from_counts(tp, ff, tf, fp)
    narrow = corrected_pass_rate(k, n, cal, level=0.8)
    wide = corrected_pass_rate(k, n, cal, level=0.99)
    # Where clipping collapses the interval at one level but not the other, the two are
    # different methods (a one-sided Bonferroni bound against the Lang-Reiczigel interval),
    # and their widths need not be ordered: with k=0 of n=1, sensitivity 1 and specificity
    # 0.275, the 80% one-sided bound reaches 1 while the 99% interval ends at 0.993.
    assume(narrow.method == wide.method)
    # With a calibration sample of one or two answers the Lang-Reiczigel centre shift
    # (which grows with z^2) can move the interval enough that the higher level is the
    # narrower: by up to 0.136 with one answer, 0.035 with two, and not at all with 3, 5,
    # 10 or 25 (scanned over every count of 1, 2, 3, 5, 10 and 25 good and bad answers and
    # 1-100 trials); the method is meant for about 30 answers in each sample (Lang &
    # Reiczigel 2014).
    assume(min(tp + ff, tf + fp) >= 3)
    assert wide.width >= narrow.width - 1e-12


def test_a_tiny_calibration_interval_is_widened_to_contain_the_estimate() -> None:
    # Found by a random search: with two bad calibration answers the adjusted
    # centre moves far from the Rogan-Gladen estimate (0.294).
    cal = Calibration.from_counts(457, 9, 2, 0)
    iv = corrected_pass_rate(94, 326, cal)
    est, low, high, widened = _lang_reiczigel(94, 326, 457, 466, 2, 2, _z(0.95))
    assert widened  # the Lang & Reiczigel limits alone end below the estimate
    assert high == est == iv.high == pytest.approx((94 / 326) / (457 / 466))
    assert iv.low <= iv.estimate <= iv.high
    assert "widened" in iv.note


def test_the_interval_agrees_with_a_parametric_bootstrap() -> None:
    # Reference: parametric bootstrap of the Rogan-Gladen estimate over the three
    # independent binomial samples (observed, good, bad), percentile limits.
    # For samples this large both are close to normal and should agree closely.
    rng = np.random.default_rng(20140101)
    b = 20_000
    for x, n, tp, n_good, tf, n_bad in [
        (240, 400, 180, 200, 160, 200),
        (120, 300, 90, 100, 85, 100),
    ]:
        se = rng.binomial(n_good, tp / n_good, b) / n_good
        sp = rng.binomial(n_bad, tf / n_bad, b) / n_bad
        ap = rng.binomial(n, x / n, b) / n
        theta = np.clip((ap + sp - 1) / (se + sp - 1), 0, 1)
        low, high = np.percentile(theta, [2.5, 97.5])
        iv = corrected_pass_rate(x, n, Calibration.from_counts(tp, n_good - tp, tf, n_bad - tf))
        assert iv.low == pytest.approx(low, abs=0.015)
        assert iv.high == pytest.approx(high, abs=0.015)


# Coverage: how often the interval contains the true pass rate over many
# simulated experiments. The Lang & Reiczigel interval is approximate: in their
# simulations (and ours) it stays within about one percentage point of the
# nominal 95% away from the edges, and is conservative near 0 and 1. The
# tolerance is that allowance plus three Monte-Carlo standard errors,
# 3 * sqrt(0.95 * 0.05 / experiments).
METHOD_ALLOWANCE = 0.01


def _tolerance(experiments: int) -> float:
    return METHOD_ALLOWANCE + 3 * math.sqrt(0.95 * 0.05 / experiments)


@pytest.mark.parametrize(
    ("p", "se", "sp", "n", "n_good", "n_bad"),
    [
        (0.5, 0.95, 0.70, 150, 60, 60),  # a lenient judge: passes 30% of bad answers
        (0.8, 0.80, 0.80, 300, 40, 40),  # a mediocre judge, a large eval
        (0.3, 0.90, 0.75, 200, 80, 80),
        (0.6, 0.70, 0.95, 250, 50, 100),  # a harsh judge: fails 30% of good answers
    ],
)
def test_coverage_of_the_corrected_interval_is_near_nominal_and_naive_is_not(
    p, se, sp, n, n_good, n_bad
) -> None:
    # Counts drawn directly from the binomial model of a judge with known Se and Sp
    # (the stand-in judge's behaviour; the end-to-end test below goes through it).
    experiments = 10_000
    rng = np.random.default_rng(int(1000 * p + 100 * se + 10 * sp))
    p_obs = p * se + (1 - p) * (1 - sp)
    x = rng.binomial(n, p_obs, experiments)
    tp = rng.binomial(n_good, se, experiments)
    tf = rng.binomial(n_bad, sp, experiments)
    usable = tp / n_good + tf / n_bad > 1
    assert usable.mean() > 0.999  # the judges here are far better than chance
    _, low, high, _ = _lang_reiczigel(x, n, tp, n_good, tf, n_bad, _z(0.95))
    covered = ((low <= p) & (p <= high))[usable].mean()
    assert abs(covered - 0.95) <= _tolerance(experiments), covered
    naive = proportion_ci(x, n, level=0.95, method="wilson")
    naive_covered = ((naive.low <= p) & (p <= naive.high)).mean()
    assert naive_covered < 0.80, naive_covered


@pytest.mark.slow
def test_end_to_end_with_the_standin_judge_the_corrected_interval_covers() -> None:
    # Whole experiments through judged_by and the stand-in judge: calibrate on 60
    # good and 60 bad answers, then score 150 answers of which a share p = 0.5 is
    # good, and correct the judge's pass rate.
    p, se, sp = 0.5, 0.95, 0.70
    experiments, n_good, n_bad, n = 700, 60, 60, 150
    rng = np.random.default_rng(3)
    judge = make_judge(_is_good, sensitivity=se, specificity=sp, seed=11)
    check = judged_by(judge, "A good answer ends with 'good'.")
    covered = naive_covered = 0
    for e in range(experiments):
        cal = calibrate(
            check,
            [f"e{e} calibration {i} good" for i in range(n_good)],
            [f"e{e} calibration {i} bad" for i in range(n_bad)],
        )
        truth = rng.random(n) < p
        answers = [f"e{e} eval {i} {'good' if t else 'bad'}" for i, t in enumerate(truth)]
        passes = sum(check(a).is_passed for a in answers)
        iv = corrected_pass_rate(passes, n, cal)
        covered += iv.contains(p)
        naive_covered += proportion_ci(passes, n).contains(p)
    # The truth of the eval answers is itself random, so the target here is the
    # population rate p, as in the binomial simulation above.
    assert abs(covered / experiments - 0.95) <= _tolerance(experiments), covered
    assert naive_covered / experiments < 0.5, naive_covered


# --- a corrected rate whose interval collapses ------------------------------------


def test_collapsed_corrected_rate_gives_the_one_sided_bound() -> None:
    from evalstats.running._judge import Calibration, corrected_pass_rate

    cal = Calibration.from_counts(40, 10, 30, 10)  # sensitivity 0.8, specificity 0.75
    r = corrected_pass_rate(8, 100, cal)
    # The Lang & Reiczigel interval lies below 0 and clips to 0% (0% to 0%); the
    # bound instead: Clopper-Pearson one-sided bounds at 0.05 / 3 for the three
    # samples (scipy.stats.beta quantiles, written out here), combined as
    # (a_hi - f_lo) / (s_lo - f_lo).
    from scipy.stats import beta

    e = 0.05 / 3
    a_hi, f_lo, s_lo = beta.ppf(1 - e, 9, 92), beta.ppf(e, 10, 31), beta.ppf(e, 40, 11)
    assert r.method == "one_sided_bound" and r.low == 0.0 and r.estimate == 0.0
    assert r.high == pytest.approx((a_hi - f_lo) / (s_lo - f_lo), rel=1e-9)
    assert str(r) == "0% (0% to 7%)"
    assert r.note.startswith(
        "true pass rate at most 7% (one-sided 95%): the observed pass rate 8% is within "
        "the judge's error, since it passes 25% of bad answers;"
    )
    # Five passes lie below even what the judge's false passes alone would give.
    five = corrected_pass_rate(5, 100, cal)
    assert five.high == 0.0 and "beyond it" in five.note and "one-sided 95%" in five.note
    # The mirror image at 100%.
    top = corrected_pass_rate(99, 100, Calibration.from_counts(45, 5, 30, 10))
    assert top.method in ("lang_reiczigel", "one_sided_bound")
    if top.method == "one_sided_bound":
        assert top.high == 1.0 and top.low < 1.0 and "at least" in top.note


def test_one_sided_bound_coverage_by_exact_enumeration() -> None:
    # Every outcome of the three samples (observed 60, 30 good, 25 bad answers)
    # with its binomial probability: the upper bound covers the true rate with
    # probability at least 95%, at true rates where the interval collapses.
    from scipy.stats import binom

    from evalstats.running._judge import _one_sided_bound

    n, n_good, n_bad = 60, 30, 25
    x = np.arange(n + 1)[:, None, None]
    tp = np.arange(n_good + 1)[None, :, None]
    tf = np.arange(n_bad + 1)[None, None, :]
    for p, se, sp in [(0.0, 0.8, 0.75), (0.02, 0.9, 0.7), (0.05, 0.7, 0.85)]:
        a = p * se + (1 - p) * (1 - sp)
        prob = binom.pmf(x, n, a) * binom.pmf(tp, n_good, se) * binom.pmf(tf, n_bad, sp)
        upper = _one_sided_bound(x, n, tp, n_good, tf, n_bad, 0.95, upper=True)
        assert float((prob * (upper >= p)).sum()) >= 0.95
        lower = _one_sided_bound(x, n, tp, n_good, tf, n_bad, 0.95, upper=False)
        assert float((prob * (lower <= p)).sum()) >= 0.95
