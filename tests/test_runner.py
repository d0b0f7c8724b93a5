"""The in-process runner and the minimal case loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalstats
from evalstats.demo._shop import make_assistant
from evalstats.errors import CaseFileError, InvalidArgument
from evalstats.results._file import sample_passed
from evalstats.running import _run_cases as runner
from evalstats.running._checks import CHECK_ERROR, INSPECTION_FAILURE, Verdict, contains, word_count
from evalstats.running._run_cases import AxisCount, Case, load_cases, load_shop_cases, run_cases


def echo(prompt: str) -> str:
    return prompt


def test_every_check_runs_and_both_problems_are_recorded() -> None:
    case = Case("c", "hello there", ((contains("A-1042"), "content"), (word_count(3, 5), "format")))
    result = run_cases(echo, [case], runs=2)
    sample = result.samples[0]
    assert sample.status == "completed"
    assert sample.problems == ("doesn't mention 'A-1042'", "has 2 words, fewer than 3")
    assert [r.check for r in sample.checks] == ["contains('A-1042')", "word_count(3, 5)"]
    assert result.problems() == {
        "c": [("doesn't mention 'A-1042'", 2), ("has 2 words, fewer than 3", 2)]
    }
    assert result.problems(top=1) == {"c": [("doesn't mention 'A-1042'", 2)]}
    with pytest.raises(InvalidArgument, match="top=0 must be at least 1"):
        result.problems(top=0)
    assert result.outcomes() == {"c": [False, False]}


def test_a_task_that_raises_fails_every_check_and_stays_in_the_denominator() -> None:
    calls = []

    def flaky(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) % 2 == 0:
            raise TimeoutError("model took too long")
        return "order A-1042 has shipped"

    case = Case("c", "where?", (contains("A-1042"), (word_count(1, 10), "format")))
    result = run_cases(flaky, [case], runs=4)
    assert result.outcomes() == {"c": [True, False, True, False]}
    assert result.pass_counts() == {"c": (2, 4)}
    assert result.incomplete() == {"c": 2}
    bad = result.samples[1]
    assert bad.status == "incomplete" and bad.answer is None
    assert bad.error == "TimeoutError: model took too long"
    reason = f"{INSPECTION_FAILURE}: the task raised TimeoutError: model took too long"
    assert bad.problems == (reason, reason)
    assert all(r.verdict.not_inspected for r in bad.checks)
    assert result.axis_counts()["format"] == AxisCount(
        passed=2, scored=4, unscored=0, not_inspected=2
    )


def test_keyboard_interrupt_stops_the_run() -> None:
    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_cases(interrupted, [Case("c", "p", (contains("x"),))], runs=1)


@pytest.mark.parametrize("answer", ["", "   ", None, 42])
def test_nothing_to_inspect_is_an_incomplete_failure(answer) -> None:
    result = run_cases(
        lambda p: answer, [Case("c", "p", (contains("x"), word_count(0, 9)))], runs=1
    )
    sample = result.samples[0]
    assert sample.status == "incomplete"
    assert not sample.passed
    assert all(r.verdict.not_inspected for r in sample.checks)
    assert result.pass_counts() == {"c": (0, 1)}


def test_an_incomplete_sample_never_passes_even_when_its_checks_do() -> None:
    # A check of one's own may accept a non-text answer; the sample is still
    # incomplete, and counts as a failure as results.sample_passed says.
    result = run_cases(lambda p: 42, [Case("c", "p", (lambda answer: None,))], runs=1)
    sample = result.samples[0]
    assert sample.status == "incomplete" and sample.checks[0].verdict.is_passed
    assert not sample.passed
    assert sample_passed(sample.to_dict()) is False
    assert result.pass_counts() == {"c": (0, 1)} and result.passes == 0


def test_a_check_that_raises_fails_without_stopping_the_run() -> None:
    def broken(answer: str) -> None:
        raise RuntimeError("bug in check")

    result = run_cases(echo, [Case("c", "p", (broken, contains("p")))], runs=3)
    assert result.trials == 3 and result.passes == 0
    assert result.problems()["c"] == [(f"{CHECK_ERROR}: broken: RuntimeError: bug in check", 3)]


def test_unscored_is_not_passed_and_leaves_the_denominator() -> None:
    def not_applicable(answer: str) -> Verdict:
        return Verdict.unscored("no links")

    case = Case("c", "p", ((not_applicable, "links"), (contains("p"), "content")))
    result = run_cases(echo, [case], runs=3)
    # The scored check passed, so the sample passes; the unscored one is apart.
    assert result.outcomes() == {"c": [True, True, True]}
    assert result.axis_counts() == {
        "links": AxisCount(passed=0, scored=0, unscored=3, not_inspected=0),
        "content": AxisCount(passed=3, scored=3, unscored=0, not_inspected=0),
    }
    assert result.unscored_samples() == {"c": 0}


def test_a_sample_with_every_check_unscored_is_not_a_pass() -> None:
    case = Case("c", "p", (lambda a: Verdict.unscored("n/a"),))
    result = run_cases(echo, [case], runs=2)
    assert result.outcomes() == {"c": [False, False]}
    assert result.unscored_samples() == {"c": 2}
    assert result.problems() == {"c": []}


def test_schedule_is_repeat_by_repeat_and_outcomes_in_repeat_order() -> None:
    seen = []

    def task(prompt: str) -> str:
        seen.append(prompt)
        return "yes" if len(seen) in (1, 4) else "no"

    cases = [Case("a", "pa", (contains("yes"),)), Case("b", "pb", (contains("yes"),))]
    result = run_cases(task, cases, runs=2, variant="v2")
    assert seen == ["pa", "pb", "pa", "pb"]
    assert [(s.case, s.repeat) for s in result.samples] == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    assert result.outcomes() == {"a": [True, False], "b": [False, True]}
    assert result.variant == "v2" and all(s.variant == "v2" for s in result.samples)
    assert result.cases == ("a", "b") and result.runs == 2


def test_checks_without_an_axis_are_in_no_axis() -> None:
    result = run_cases(echo, [Case("c", "p", (contains("p"), (contains("q"), "x")))], runs=1)
    assert result.axis_counts() == {"x": AxisCount(0, 1, 0, 0)}


def test_shop_suite_on_the_stand_in() -> None:
    result = run_cases(make_assistant(1, seed=0), load_shop_cases(), runs=10)
    assert result.trials == 40
    assert set(result.outcomes()) == {
        "order status",
        "broken lamp refund",
        "discount trick",
        "thank-you",
    }
    assert set(result.axis_counts()) == {"content", "format", "tone", "safety"}
    document = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert document["passes"] == result.passes
    assert document["trials"] == 40
    assert len(document["samples"]) == 40
    assert [c["case"] for c in document["cases"]] == list(result.cases)
    assert sum(c["passes"] for c in document["cases"]) == result.passes
    assert document["axes"]["format"]["scored"] == 40


verdicts = st.sampled_from(
    [
        Verdict.passed(),
        Verdict.failed("bad"),
        Verdict.unscored("n/a"),
        Verdict.failed(f"{INSPECTION_FAILURE}: x"),
    ]
)


@given(
    table=st.lists(
        st.lists(st.tuples(verdicts, st.sampled_from([None, "a", "b"])), min_size=3, max_size=3),
        min_size=1,
        max_size=12,
    )
)
def test_counts_follow_the_rules_of_meaning(table) -> None:
    # Each row is one repeat; each column one check returning a fixed verdict per repeat.
    runs = len(table)
    axes = [table[0][j][1] for j in range(3)]  # each check keeps the first row's axis
    state = {"repeat": -1}

    def make(j: int):
        def check(answer: str) -> Verdict:
            return table[state["repeat"]][j][0]

        check.__name__ = f"check{j}"
        return check

    def task(prompt: str) -> str:
        state["repeat"] += 1
        return "answer"

    case = Case("c", "p", tuple((make(j), axes[j]) for j in range(3)))
    result = run_cases(task, [case], runs=runs)
    expected = []
    for row in table:
        scored = [v for v, _ in row if v.is_scored]
        expected.append(bool(scored) and all(v.is_passed for v in scored))
    assert result.outcomes() == {"c": expected}
    assert result.passes == sum(expected) and result.trials == runs
    for axis, count in result.axis_counts().items():
        column = [row[j][0] for row in table for j in range(3) if axes[j] == axis]
        assert count.scored == sum(v.is_scored for v in column)
        assert count.unscored == sum(not v.is_scored for v in column)
        assert count.passed == sum(v.is_passed for v in column)
        assert count.not_inspected == sum(v.not_inspected for v in column)
        assert 0 <= count.passed <= count.scored
    assert set(result.axis_counts()) == {a for a in axes if a is not None}
    failures = sum(v.is_failed for row in table for v, _ in row)
    assert sum(n for _, n in result.problems()["c"]) == failures


# --- bad arguments -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": 0}, "runs=0 must be at least 1"),
        ({"runs": True}, "runs=True must be a whole number"),
        ({"runs": 2.0}, "runs=2.0 must be a whole number"),
        ({"runs": 1, "variant": ""}, "variant='' must be a non-empty string"),
        ({"runs": 1, "task": "not callable"}, "task='not callable' must be callable"),
        ({"runs": 1, "cases": []}, "cases is empty"),
        ({"runs": 1, "cases": ["x"]}, "cases[0]='x' must be a Case"),
    ],
)
def test_run_cases_rejects_bad_arguments(kwargs, message) -> None:
    args = {"task": echo, "cases": [Case("c", "p", (contains("p"),))], **kwargs}
    with pytest.raises(InvalidArgument) as info:
        run_cases(args.pop("task"), args.pop("cases"), **args)
    assert message in str(info.value)


def test_run_cases_rejects_repeated_case_ids() -> None:
    case = Case("c", "p", (contains("p"),))
    with pytest.raises(InvalidArgument, match="cases\\[1\\] repeats the case id 'c'"):
        run_cases(echo, [case, case], runs=1)


def test_case_validation() -> None:
    with pytest.raises(InvalidArgument, match="has no checks"):
        Case("c", "p", ())
    with pytest.raises(InvalidArgument, match="id='' must be a non-empty string"):
        Case("", "p", (contains("p"),))
    with pytest.raises(InvalidArgument, match="checks\\[0\\]"):
        Case("c", "p", (("not callable", None),))
    assert Case("c", "p", (contains("p"),)).checks[0][1] is None


# --- loading -------------------------------------------------------------------


def test_load_shop_cases() -> None:
    cases = load_shop_cases()
    assert [c.id for c in cases] == [
        "order status",
        "broken lamp refund",
        "discount trick",
        "thank-you",
    ]
    assert cases[0].prompt == "Hi, where is my order A-1042?"
    assert [(c.name, axis) for c, axis in cases[0].checks] == [
        ("contains('A-1042')", "content"),
        ("has_terms('shipped')", "content"),
        ("word_count(3, 25)", "format"),
    ]


def test_shop_suite_is_found_in_the_package_first(tmp_path, monkeypatch) -> None:
    package = tmp_path / "evalstats"
    (package / "_cases").mkdir(parents=True)
    source = Path(evalstats.__file__).parent.parent / "cases" / "shop.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    document["cases"] = document["cases"][:1]
    (package / "_cases" / "shop.json").write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setattr(evalstats, "__file__", str(package / "__init__.py"))
    assert [c.id for c in runner.load_shop_cases()] == ["order status"]


def write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), "utf-8")
    return path


GOOD = {"id": "c1", "prompt": "p", "checks": [{"contains": "x"}]}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{", "suite.json: not valid JSON: Expecting property name"),
        ([], 'suite.json: the top level must be a mapping with a "cases" list'),
        ({"cases": []}, "suite.json: cases: is empty"),
        ({"cases": [5]}, "suite.json: cases[0]: must be a mapping"),
        ({"cases": [{"prompt": "p"}]}, "suite.json: cases[0]: id: missing"),
        ({"cases": [GOOD, GOOD]}, 'case "c1": id: duplicate: cases[0] and cases[1] both use it'),
        ({"cases": [{**GOOD, "prompt": ""}]}, 'case "c1": prompt: must be a non-empty string'),
        ({"cases": [{**GOOD, "checks": []}]}, 'case "c1": checks: has no checks'),
        (
            {"cases": [{**GOOD, "checks": [{"contains": "x"}, {"contain": "y"}]}]},
            'case "c1": checks[1]: unknown check "contain" (did you mean "contains"?)',
        ),
        (
            {"cases": [{**GOOD, "checks": [{"word_count": [9, 1]}]}]},
            'case "c1": checks[0]: word_count(): low=9 is larger than high=1',
        ),
        (
            {"cases": [{**GOOD, "checks": [{"contains": "x", "axis": 3}]}]},
            'case "c1": checks[0].axis: must be a non-empty string',
        ),
    ],
)
def test_load_cases_errors_name_file_case_and_field(tmp_path, document, message) -> None:
    path = write(tmp_path, document)
    with pytest.raises(CaseFileError) as info:
        load_cases(path)
    assert message in str(info.value)
    assert str(info.value).startswith(str(path))


def test_load_cases_missing_file(tmp_path) -> None:
    with pytest.raises(CaseFileError, match="cannot be read"):
        load_cases(tmp_path / "nope.json")


def test_transient_service_failures_are_unmeasured_not_failed() -> None:
    # Unmeasured is its own bucket (DESIGN.md): a task or a judge whose service
    # gave no answer leaves the sample out of every pass rate, and it is counted.
    from evalstats.errors import ProviderError, TransientProviderError

    calls = {"n": 0}

    def flaky(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            raise TransientProviderError("429 from the service", retry_after=1.0)
        return "Your order A-1042 has shipped."

    case = Case("order", "Where is A-1042?", (contains("A-1042"),))
    result = run_cases(flaky, [case], runs=6)
    assert [s.status for s in result.samples].count("unmeasured") == 2
    assert result.unmeasured() == {"order": 2}
    assert (result.passes, result.trials) == (4, 4)
    assert result.outcomes() == {"order": [True] * 4}
    assert result.to_dict()["cases"][0]["unmeasured"] == 2

    def judge_down(answer: str) -> None:
        raise TransientProviderError("503 from the judge")

    judged = Case("order", "Where is A-1042?", (judge_down,))
    result = run_cases(lambda p: "A-1042 shipped", [judged], runs=2)
    assert [s.status for s in result.samples] == ["unmeasured", "unmeasured"]
    assert result.trials == 0

    def refused(prompt: str) -> str:
        raise ProviderError("openai: 401 invalid key")

    with pytest.raises(ProviderError, match="401"):
        run_cases(refused, [case], runs=1)
