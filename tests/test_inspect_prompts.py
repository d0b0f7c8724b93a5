"""Prompt comparisons in Inspect AI logs: one task per prompt over the same samples.

The logs in ``tests/data/inspect`` were made offline with Inspect's mock model
(``make_prompt_logs.py``); ``imported/`` holds the results files their import
makes, so that joining them is tested without inspect-ai installed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from importing import cli, needs_inspect

from evalstats.deciding._compare_results import compare_results
from evalstats.errors import ResultsFileError
from evalstats.reading._logs import load_results, merge

DATA = Path(__file__).resolve().parent / "data" / "inspect"
IMPORTED = DATA / "imported"


def _imported(*stems: str):
    return [load_results(IMPORTED / f"{stem}.jsonl") for stem in stems]


# --- the joining, from the committed imports (no inspect-ai needed) ---------------


def test_two_tasks_over_the_same_samples_are_paired_by_sample_and_epoch() -> None:
    both = merge(_imported("quiz_terse", "quiz_polite"))
    assert both.variants() == ("quiz_terse", "quiz_polite")  # named by what differs: the task
    note = next(w for w in both.warnings if "different tasks" in w)
    assert "('quiz_terse', 'quiz_polite') over the same 5 samples" in note
    cmp = compare_results(both, "quiz_terse", "quiz_polite")
    assert cmp.paired and cmp.pairs == 15
    # Discordant pairs by hand from make_logs.py's ANSWERS (terse answers as "a",
    # polite as "b"): only polite is right in q2/3, q3/2, q5/1, q5/2; only terse in q4/3.
    assert (cmp.these_cases.only_a, cmp.these_cases.only_b) == (1, 4)


def test_logs_of_other_samples_are_refused_naming_them() -> None:
    with pytest.raises(ResultsFileError) as refused:
        merge(_imported("quiz_terse", "quiz_changed"))
    message = str(refused.value)
    assert "cannot be paired with" in message
    assert "samples only in" in message and "'q5'" in message
    assert "another target for 'q3'" in message
    assert "\n" not in message


def test_another_scorer_is_refused_naming_both() -> None:
    a, b = _imported("quiz_terse", "quiz_polite")
    b.manifest["imported"] = {**b.manifest["imported"], "scorer": "includes"}
    b.manifest["suite"] = {**b.manifest["suite"], "sha256": "1" * 64}
    with pytest.raises(ResultsFileError, match="scored by 'includes'.*'match'.*--scorer"):
        merge([a, b])


def test_an_import_without_sample_digests_is_refused_as_before() -> None:
    a, b = _imported("quiz_terse", "quiz_polite")
    b.manifest["cases"] = [{"id": c["id"]} for c in b.manifest["cases"]]
    with pytest.raises(ResultsFileError, match="not a run of the same task.*records no sample"):
        merge([a, b])


def test_one_task_with_two_arguments_is_named_by_the_argument() -> None:
    both = merge(_imported("quiz_style_terse", "quiz_style_polite"))
    assert both.variants() == ("style=terse", "style=polite")
    assert not any("different tasks" in w for w in both.warnings)  # one task
    assert compare_results(both, "style=terse", "style=polite").pairs == 15


def test_the_names_are_what_a_command_takes(capsys) -> None:
    files = [IMPORTED / "quiz_terse.jsonl", IMPORTED / "quiz_polite.jsonl"]
    code, out, err = cli(capsys, "compare", *files, "--a", "quiz_polite", "--b", "quiz_terse")
    assert code == 0, err
    assert "B=quiz_terse against A=quiz_polite" in out
    assert "paired by (case, repeat): 15 pairs" in out
    code, out, err = cli(
        capsys, "compare", *files, "--a", "quiz_terse", "--b", "quiz_polite", "--sequential"
    )
    assert code == 0, err
    assert "15 pairs" in out
    code, out, err = cli(capsys, "compare", *files, "--a", "quiz_terse", "--b", "quiz_changed")
    assert code == 2 and err.count("\n") == 1 and "'quiz_changed' is not a variant" in err


def test_the_refusal_on_the_command_line_is_one_line(capsys) -> None:
    files = [IMPORTED / "quiz_terse.jsonl", IMPORTED / "quiz_changed.jsonl"]
    code, _, err = cli(capsys, "compare", *files)
    assert code == 2 and err.count("\n") == 1
    assert "another target for 'q3'" in err


# --- the logs themselves (inspect-ai installed) -----------------------------------


@needs_inspect
def test_a_folder_of_logs_is_read_as_a_set(capsys) -> None:
    code, out, err = cli(capsys, "compare", DATA / "prompts", "--json")
    assert code == 0, err
    doc = json.loads(out)
    # In name order: quiz_polite.eval, then quiz_terse.eval.
    assert (doc["a"], doc["b"]) == ("quiz_polite", "quiz_terse")
    assert doc["these_cases"]["trials_a"] == 15
    code, out, err = cli(capsys, "report", DATA / "prompts", "--variant", "quiz_terse")
    assert code == 0, err
    assert out.startswith("selection: --variant 'quiz_terse'") and "variants quiz_terse" in out


@needs_inspect
def test_another_tools_log_in_a_folder_of_logs_is_named_as_left_out(tmp_path, capsys) -> None:
    for log in (DATA / "prompts").glob("*.eval"):
        shutil.copyfile(log, tmp_path / log.name)
    shutil.copyfile(IMPORTED / "quiz_terse.jsonl", tmp_path / "kept.jsonl")  # evalstats' own
    (tmp_path / "notes.txt").write_text("not a log")
    (tmp_path / "config.json").write_text('{"model": "x"}')  # JSON, but no log
    code, out, err = cli(capsys, "compare", tmp_path, "--json")
    assert code == 0, err
    assert (json.loads(out)["a"], json.loads(out)["b"]) == ("quiz_polite", "quiz_terse")
    (line,) = err.strip().splitlines()
    assert line.startswith(f"evalstats: warning: {tmp_path / 'kept.jsonl'} is an evalstats")
    assert "left out (name it to read it)" in line


@needs_inspect
def test_a_folder_without_logs_is_one_line(tmp_path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("not a log")
    code, _, err = cli(capsys, "report", tmp_path)
    assert code == 2 and err.count("\n") == 1 and "no Inspect AI log" in err


@needs_inspect
def test_the_logs_read_as_their_imports() -> None:
    for stem in ("quiz_terse", "quiz_polite"):
        log = load_results(DATA / "prompts" / f"{stem}.eval")
        kept = load_results(IMPORTED / f"{stem}.jsonl")
        assert log.manifest["cases"] == kept.manifest["cases"]
        assert log.outcomes("mockllm/model") == kept.outcomes("mockllm/model")
    both = merge(
        [load_results(DATA / "prompts" / f"{s}.eval") for s in ("quiz_terse", "quiz_polite")]
    )
    assert both.variants() == ("quiz_terse", "quiz_polite")


@needs_inspect
def test_an_errored_log_says_it_errored(capsys) -> None:
    code, _, err = cli(capsys, "report", DATA / "quiz_error.eval")
    assert code == 2 and err.count("\n") == 1
    assert "the Inspect run ended in an error" in err
    assert "the tool server refused the connection" in err
    assert "no sample has a score" not in err


@needs_inspect
def test_two_runs_of_one_task_and_model_get_short_names(tmp_path) -> None:
    again = tmp_path / "again.eval"
    shutil.copyfile(DATA / "inspect_a.eval", again)
    both = merge([load_results(DATA / "inspect_a.eval"), load_results(again)])
    assert both.variants() == ("inspect_a", "again")
    long_a = tmp_path / "2026-12-01T08-21-37-00-00_support_2UuAbCdEfGh.eval"
    long_b = tmp_path / "2026-12-01T09-02-11-00-00_support_7QqXyZwVuTs.eval"
    shutil.copyfile(DATA / "inspect_a.eval", long_a)
    shutil.copyfile(DATA / "inspect_a.eval", long_b)
    both = merge([load_results(long_a), load_results(long_b)])
    assert both.variants() == ("run1", "run2")
