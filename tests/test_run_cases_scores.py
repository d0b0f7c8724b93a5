"""run_cases gives each sample the engine's score: weighted checks, the suite's rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalstats.results._file import read_results
from evalstats.running._checks import contains
from evalstats.running._engine import Variant, run
from evalstats.running._graded import covers
from evalstats.running._run_cases import run_cases
from evalstats.running._suite import Case, CaseCheck, suite_from_cases


def _answer(prompt: str) -> str:
    if prompt == "raise":
        raise ValueError("broken")
    if prompt == "empty":
        return ""
    return prompt


def _cases() -> list[Case]:
    return [
        # covers a, b (weight 3) and c (weight 1): "a c" covers 1/2 and 1 -> (3/2 + 1) / 4
        Case(
            "weighted",
            "a c",
            (CaseCheck(covers("a", "b"), weight=3), CaseCheck(covers("c"), weight=1)),
        ),
        # a weight-0 graded check and a pass/fail check leave the score to covers("a", "b")
        Case(
            "zero",
            "a",
            (
                CaseCheck(covers("a", "b")),
                CaseCheck(covers("z"), weight=0),
                CaseCheck(contains("a")),
            ),
        ),
        Case("pass/fail only", "a", (contains("a"),)),
        Case("raises", "raise", (CaseCheck(covers("a"), weight=2),)),
        Case("empty", "empty", (covers("a"),)),
    ]


#: By hand, from the comments above: None where no check gives a score, 0 for an
#: incomplete sample of a case with a graded check, as the engine records it.
BY_HAND = {
    "mean": {"weighted": 0.625, "zero": 0.5, "pass/fail only": None, "raises": 0.0, "empty": 0.0},
    "min": {"weighted": 0.5, "zero": 0.5, "pass/fail only": None, "raises": 0.0, "empty": 0.0},
}


def _engine_scores(suite, out: Path) -> dict[tuple[str, int], float | None]:
    run(suite, [Variant("A", _answer)], runs=2, out=out, progress=False, timeout=None, seed=3)
    return {(s["case"], s["repeat"]): s.get("score") for s in read_results(out).samples}


@pytest.mark.parametrize("rule", ["mean", "min"])
def test_sample_scores_are_the_engines(tmp_path: Path, rule: str) -> None:
    suite = suite_from_cases(_cases(), score=rule)
    result = run_cases(_answer, suite, runs=2)
    got = {(s.case, s.repeat): s.score for s in result.samples}
    assert got == _engine_scores(suite, tmp_path / "r.jsonl")
    assert got == {(c, r): v for c, v in BY_HAND[rule].items() for r in range(2)}
    assert result.mean_scores() == BY_HAND[rule]
    graded = [v for v in BY_HAND[rule].values() if v is not None]
    assert result.mean_score == pytest.approx(sum(graded) / len(graded))
    assert result.scores()["pass/fail only"] == []


def test_cases_alone_are_scored_by_the_weighted_mean(tmp_path: Path) -> None:
    result = run_cases(_answer, _cases(), runs=1)
    assert {s.case: s.score for s in result.samples} == BY_HAND["mean"]
    engine = _engine_scores(_cases(), tmp_path / "r.jsonl")
    assert {s.case: s.score for s in result.samples} == {
        c: v for (c, r), v in engine.items() if r == 0
    }


def test_an_unmeasured_sample_has_no_score() -> None:
    from evalstats.errors import TransientProviderError

    def flaky(prompt: str) -> str:
        raise TransientProviderError("503")

    result = run_cases(flaky, [Case("c", "p", (covers("p"),))], runs=2)
    assert [s.score for s in result.samples] == [None, None]
    assert result.mean_scores() == {"c": None} and result.mean_score is None


def test_json_carries_scores_only_when_there_are_some() -> None:
    plain = run_cases(_answer, [Case("c", "a", (contains("a"),))], runs=1).to_dict()
    assert "score" not in plain["samples"][0] and "mean_score" not in plain
    assert "mean_score" not in plain["cases"][0]
    graded = run_cases(_answer, _cases()[:1], runs=1).to_dict()
    assert graded["samples"][0]["score"] == 0.625
    assert graded["cases"][0]["mean_score"] == 0.625 and graded["mean_score"] == 0.625


def test_a_suite_runs_without_its_holdout_cases() -> None:
    suite = suite_from_cases([*_cases()[:1], Case("held", "a", (covers("a"),), holdout=True)])
    assert run_cases(_answer, suite, runs=1).cases == ("weighted",)
