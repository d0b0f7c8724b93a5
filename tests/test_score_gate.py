"""gate --min-score: a release policy on a variant's mean score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.deciding._score_gate import score_gate
from evalstats.errors import InvalidArgument
from evalstats.running._checks import contains
from evalstats.running._engine import Variant, run
from evalstats.running._graded import covers
from evalstats.running._suite import Case
from evalstats.stats import score_mean_ci

WORDS = ["x", "y", "z", "w"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gate") / "r.jsonl"
    cases = [Case(f"c{i}", " ".join(WORDS[: 1 + i % 4]), (covers(*WORDS),)) for i in range(8)]
    run(cases, [Variant("v", lambda t: t)], runs=2, out=out, progress=False, timeout=None)
    return out


def test_the_gate_holds_the_estimate_or_the_lower_bound(graded: Path) -> None:
    scores = [(1 + i % 4) / 4 for i in range(8) for _ in range(2)]
    cases = [f"c{i}" for i in range(8) for _ in range(2)]
    ci = score_mean_ci(scores, cases)
    assert score_gate(str(graded), variant="v", min_score=0.6).passed == (ci.estimate >= 0.6)
    low = score_gate(str(graded), variant="v", min_score=0.5, on="lower-bound")
    assert low.score == ci and low.passed == (ci.low >= 0.5)
    like = score_gate(str(graded), variant="v", min_score=0.5, about="cases_like_these")
    assert like.score == score_mean_ci(scores, cases, about="cases_like_these", seed=0)


def test_the_command_exits_1_when_it_fails_and_2_on_bad_input(graded, capsys) -> None:
    assert main(["gate", str(graded), "--variant", "v", "--min-score", "0.5"]) == 0
    assert "gate passed: v mean score 0.62 reaches 0.50" in capsys.readouterr().out
    args = ["gate", str(graded), "--variant", "v", "--min-score", "0.5", "--on", "lower-bound"]
    assert main(args) == 1
    both = ["gate", str(graded), "--variant", "v", "--min-score", "0.9", "--min-pass", "0.1"]
    capsys.readouterr()
    assert main([*both, "--json"]) == 1  # the pass rate passes, the score does not
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is False and doc["score_gate"]["passed"] is False
    assert main(["gate", str(graded), "--variant", "v", "--min-score", "7"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "evalstats: error: min_score=7.0 must be a number from 0 to 1 (scores are mapped to 0-1)"
    ]


def test_a_run_without_scores_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    run(
        [Case("a", "x", (contains("x"),))],
        [Variant("v", lambda t: t)],
        runs=1,
        out=out,
        progress=False,
        timeout=None,
    )
    with pytest.raises(InvalidArgument, match="variant 'v' has no scored samples"):
        score_gate(str(out), variant="v", min_score=0.5)
    with pytest.raises(InvalidArgument, match="min_score=nan must be a number from 0 to 1"):
        score_gate(str(out), variant="v", min_score=float("nan"))
