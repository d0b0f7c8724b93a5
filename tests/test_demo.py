"""The demo end to end, and the command's contract: one line and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evalstats.cli import main
from evalstats.demo import run_demo
from evalstats.errors import InvalidArgument
from evalstats.intervals import proportion_ci


def test_demo_counts_agree_with_the_samples() -> None:
    result = run_demo(runs=7, seed=4)
    for run in result.results:
        assert run.trials == 4 * 7
        assert run.passes == sum(s.passed for s in run.samples)
        # The overall interval is the Wilson interval of the pooled counts.
        assert result.rate(run) == proportion_ci(run.passes, run.trials)
    a, b = result.results
    for comparison in result.comparisons.values():
        assert comparison.successes_a == a.passes and comparison.trials_a == a.trials
        assert comparison.successes_b == b.passes and comparison.trials_b == b.trials
    assert result.comparisons["mcnemar"].paired
    assert not result.comparisons["newcombe"].paired


def test_demo_is_reproducible_for_a_seed_and_varies_across_seeds() -> None:
    assert str(run_demo(seed=3)) == str(run_demo(seed=3))
    first = [run_demo(seed=s).results[0].outcomes() for s in range(4)]
    outcomes = {tuple(map(tuple, o.values())) for o in first}
    assert len(outcomes) > 1


def test_demo_text_never_says_no_difference() -> None:
    for seed in range(5):
        text = str(run_demo(runs=3, seed=seed))
        assert "no difference" not in text.lower()
        assert "The stand-in's true pass rates are 70% and 90%." in text


def test_many_runs_make_every_method_see_the_improvement() -> None:
    # True rates 70% against 90%: at 100 runs per case (400 trials per version)
    # every method detects the 20-point gap with power far above 99%.
    result = run_demo(runs=100, seed=0)
    assert {c.verdict for c in result.comparisons.values()} == {"b_better"}
    assert "say version 2 is better" in result.meaning


def test_demo_json_is_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--runs", "3", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["runs"] == 3
    assert [v["version"] for v in document["versions"]] == [1, 2]
    assert set(document["comparisons"]) == {"overlap", "newcombe", "mcnemar"}
    assert all("samples" not in v for v in document["versions"])


def test_bad_runs_raise_and_the_cli_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidArgument, match="runs=0"):
        run_demo(runs=0)
    assert main(["demo", "--runs", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "runs=0" in err and "Traceback" not in err


def test_unknown_verb_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dmeo"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'demo'" in err and err.count("\n") == 1


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--runs", "many"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--runs" in err


@pytest.mark.slow
def test_the_installed_command_runs_the_demo() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalstats.cli", "demo", "--runs", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Is version 2 better than version 1?" in done.stdout
