"""The lm-evaluation-harness reader on samples files as lm-eval writes them, and as users hand them.

Each line is built the way lm-eval's evaluator logs a document (``doc_id``,
``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``,
``metrics``, the three hashes, each metric's value under its name) and its
tracker saves it (responses as text, one JSON object a line). What a file
holds that no pass rate can be honestly read from is refused in one line that
names the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from importing import one_line_error

from evalstats.reading._logs import load_results

DATA = Path(__file__).parent / "data"
LM_EVAL = next((DATA / "lm_eval").glob("samples_*.jsonl"))
RESULTS = next((DATA / "lm_eval").glob("results_*.json"))
DATE = "2026-01-02T03-04-05.678901"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _line(doc_id, *, filter="none", answer="4", **metrics):
    """One document's line as lm-eval logs a generated answer."""
    return {
        "doc_id": doc_id,
        "doc": {"question": f"q{doc_id}"},
        "target": "4",
        "arguments": {"gen_args_0": {"arg_0": f"q{doc_id}", "arg_1": {"until": ["\n"]}}},
        "resps": [[answer]],
        "filtered_resps": [answer],
        "filter": filter,
        "metrics": list(metrics),
        "doc_hash": _sha(f"doc{doc_id}"),
        "prompt_hash": _sha(f"q{doc_id}"),
        "target_hash": _sha("4"),
        **metrics,
    }


def _write(folder: Path, lines, *, task="quiz", date=DATE) -> Path:
    path = folder / f"samples_{task}_{date}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _passes(res) -> int:
    (variant,) = res.variants()
    return sum(sum(v) for v in res.outcomes(variant).values())


# --- how the file is encoded ---------------------------------------------------------


def test_a_byte_order_mark_is_read_as_the_rest(tmp_path):
    bom = tmp_path / LM_EVAL.name
    bom.write_bytes(b"\xef\xbb\xbf" + LM_EVAL.read_bytes())
    shutil.copyfile(RESULTS, tmp_path / RESULTS.name)
    res = load_results(bom)
    assert len(res.samples) == 30 and _passes(res) == 19
    assert res.variants() == ("example-org/tiny-model",)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path, capsys):
    path = _write(tmp_path, [_line(i, acc=1.0) for i in range(4)])
    text = path.read_bytes().split(b"\n")
    text[2] = text[2].replace(b'"q2"', b'"q\xff"', 1)
    path.write_bytes(b"\n".join(text))
    one_line_error(capsys, "report", path, naming=[path, "line 3", "UTF-8"])


# --- documents -----------------------------------------------------------------------


@pytest.mark.parametrize("doc_id", [None, [1], {"id": 1}, True, 1.5, ""])
def test_a_doc_id_that_names_no_document_is_refused(doc_id, tmp_path, capsys):
    path = _write(tmp_path, [_line(0, acc=1.0), _line(doc_id, acc=0.0), _line(2, acc=1.0)])
    one_line_error(capsys, "report", path, naming=[path, "line 2", '"doc_id"'])


def test_a_document_twice_in_one_filter_is_refused_naming_both_lines(tmp_path, capsys):
    # Two tasks' samples joined into one file: both count their documents from 0.
    first = [_line(i, acc=1.0) for i in range(3)]
    second = [_line(i, acc=0.0) for i in range(5)]
    path = _write(tmp_path, first + second)
    one_line_error(capsys, "report", path, naming=[path, "line 4", "line 1", "doc_id 0", "'none'"])
    # 1 and "1" are the same case, so the same document.
    path = _write(tmp_path, [_line(1, acc=1.0), _line("1", acc=0.0)])
    one_line_error(capsys, "report", path, naming=[path, "line 2", "line 1", "doc_id"])
    # The same document under two filters is how lm-eval writes gsm8k: one line each.
    lines = [_line(i, filter="strict-match", exact_match=float(i % 2)) for i in range(4)]
    lines += [_line(i, filter="flexible-extract", exact_match=1.0) for i in range(4)]
    path = _write(tmp_path, lines)
    assert _passes(load_results(path)) == 2
    assert _passes(load_results(path, metric="exact_match,flexible-extract")) == 4


def test_a_filter_that_is_not_a_name_is_refused(tmp_path, capsys):
    path = _write(tmp_path, [_line(0, acc=1.0), _line(1, filter=None, acc=1.0)])
    one_line_error(capsys, "report", path, naming=[path, "line 2", '"filter"'])


# --- metrics -------------------------------------------------------------------------


def test_metrics_that_are_not_a_list_of_names_are_refused(tmp_path, capsys):
    line = _line(0, acc=1.0)
    line["metrics"] = [["acc"]]
    path = _write(tmp_path, [line])
    one_line_error(capsys, "report", path, naming=[path, "line 1", '"metrics"'])


def test_a_metric_on_no_line_names_the_metrics_there_are(tmp_path, capsys):
    path = _write(tmp_path, [_line(i, acc=1.0, acc_norm=0.0) for i in range(3)])
    one_line_error(
        capsys,
        "report",
        path,
        "--metric",
        "acc_nrom",
        naming=[path, "'acc_nrom'", "no line", "'acc', 'acc_norm'"],
    )
    # On some lines only, the first line without it is named, as before.
    lines = [_line(0, acc=1.0, f1=1.0), _line(1, acc=1.0)]
    path = _write(tmp_path, lines)
    one_line_error(
        capsys, "report", path, "--metric", "f1", naming=[path, 'line 2 (doc_id 1) has no "f1"']
    )


def test_a_perplexity_task_says_it_has_no_metric_that_passes_a_document(tmp_path, capsys):
    # wikitext: each metric is (loglikelihood, weight), aggregated over the whole task.
    lines = [
        _line(i, word_perplexity=[-12.5, 7], byte_perplexity=[-12.5, 30], bits_per_byte=[-12.5, 30])
        for i in range(3)
    ]
    path = _write(tmp_path, lines)
    err = one_line_error(
        capsys, "report", path, naming=[path, "line 1", "'word_perplexity'", "whole task"]
    )
    assert "no metric of its own" in err
    # A corpus BLEU beside a per-document metric: the message names the one to use.
    lines = [_line(i, bleu=[["4"], "4"], exact_match=1.0) for i in range(3)]
    path = _write(tmp_path, lines)
    one_line_error(
        capsys, "report", path, naming=[path, "line 1", "'bleu'", "--metric exact_match"]
    )


# --- the aggregated results file -----------------------------------------------------


def _results(model: str, **more) -> dict:
    return {
        "results": {"quiz": {"alias": "quiz", "acc,none": 0.5}},
        "group_subtasks": {"quiz": []},
        "configs": {"quiz": {"task": "quiz"}},
        "versions": {"quiz": 1.0},
        "n-shot": {"quiz": 0},
        "higher_is_better": {"quiz": {"acc": True}},
        "n-samples": {"quiz": {"original": 4, "effective": 4}},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "model_name": model,
        "lm_eval_version": "0.4.9",
        **more,
    }


def test_the_results_file_given_instead_of_the_samples_says_which_to_give(tmp_path, capsys):
    _write(tmp_path, [_line(i, acc=1.0) for i in range(4)])
    results = tmp_path / f"results_{DATE}.json"
    results.write_text(json.dumps(_results("org/a"), indent=2), encoding="utf-8")
    naming = [results, "aggregated results", f"samples_quiz_{DATE}.jsonl"]
    one_line_error(capsys, "report", results, naming=naming)
    one_line_error(capsys, "report", results, "--format", "lm-eval", naming=naming)


def test_the_model_comes_from_the_results_file_output_path_named(tmp_path):
    # lm_eval --output_path out/run.json writes run_<date>.json beside the samples.
    path = _write(tmp_path, [_line(i, acc=1.0) for i in range(4)])
    (tmp_path / f"run_{DATE}.json").write_text(json.dumps(_results("org/a")), encoding="utf-8")
    res = load_results(path)
    assert res.variants() == ("org/a",)
    assert res.manifest["imported"]["aggregated_results"] == f"run_{DATE}.json"


def test_the_results_file_of_another_run_names_no_model(tmp_path):
    # Two runs in one folder (lm_eval --output_path out/results.json, once per model); the
    # samples' own results file is not there: the other run's model is not this one's.
    path = _write(tmp_path, [_line(i, acc=1.0) for i in range(4)])
    other = "results_2026-03-01T00-00-00.000000.json"
    (tmp_path / other).write_text(json.dumps(_results("org/b")), encoding="utf-8")
    res = load_results(path)
    assert res.variants() == ("model",)
    assert any("the model is unknown" in w and other in w for w in res.warnings)
    # Renamed, the samples say no date: no results file is theirs.
    res = load_results(path.rename(tmp_path / "quiz-samples.jsonl"), format="lm-eval")
    assert res.variants() == ("model",)


# --- answers -------------------------------------------------------------------------


def test_a_multiple_choice_answer_is_no_loglikelihood(tmp_path):
    # A multiple-choice document: one loglikelihood request per choice, each response
    # (loglikelihood, is_greedy) saved as text.
    line = _line(0, acc=0.0, acc_norm=1.0)
    line["target"] = "2"
    line["resps"] = [[["-1.25", "False"]], [["-0.5", "True"]], [["-3.0", "False"]]]
    line["filtered_resps"] = [["-1.25", "False"], ["-0.5", "True"], ["-3.0", "False"]]
    path = _write(tmp_path, [line])
    (sample,) = load_results(path).samples
    assert sample["answer"] is None
    assert sample["checks"][0]["reason"] == "acc=0.0: target '2'"
    # Two generated answers (repeats) that read True and False are answers still.
    line = _line(0, acc=0.0)
    line["filtered_resps"] = [["True", "False"]]
    path = _write(tmp_path, [line])
    assert load_results(path).samples[0]["answer"] == "True"


def test_metrics_numpy_wrote_as_text_read_as_their_numbers(tmp_path):
    # lm-eval writes what JSON has no type for as its str(): a metric computed as a
    # numpy.float32 is "0.5", one as a numpy.bool_ "True" (these were refused as
    # "text, not a number", or read as text beside numbers)
    as_numbers = [_line(i, f1=v) for i, v in enumerate([0.25, 0.5, 1.0, 0.0])]
    as_text = [_line(i, f1=str(v)) for i, v in enumerate([0.25, 0.5, 1.0, 0.0])]
    a = load_results(_write(tmp_path, as_numbers, task="n"), metric="f1", pass_threshold=0.5)
    b = load_results(_write(tmp_path, as_text, task="t"), metric="f1", pass_threshold=0.5)
    assert [s["score"] for s in b.samples] == [s["score"] for s in a.samples] == [0.25, 0.5, 1, 0]
    assert _passes(a) == _passes(b) == 2
    flags = [_line(i, acc=str(v)) for i, v in enumerate([True, False, True])]
    res = load_results(_write(tmp_path, flags, task="b"))
    assert _passes(res) == 2 and all("score" not in s for s in res.samples)
