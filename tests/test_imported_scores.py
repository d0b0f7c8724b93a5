"""Other tools' logs keep their scores beside pass/fail (evalstats.reading._log_*).

The graded fixtures are the tools' own output where they run offline: Inspect
AI with its mock model (``tests/data/inspect/make_inspect_scores.py``: its
``f1()`` scorer, a ``C``/``P``/``I`` scorer, a 1-to-5 rubric) and promptfoo with
its echo provider (``tests/data/promptfoo/promptfoo-graded.json``); lm-eval's
is written in its documented format (``tests/data/lm_eval_graded``). Each
expected mean is computed here from the raw values in the file, read as plain
JSON or text, not by the readers under test. Logs that score pass or fail only
must import as they did before (``tests/data/imports_expected``).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from importing import HAVE_INSPECT, cli, needs_inspect, one_line_error

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.reading._log_common import check_scale, score_number, score_scale
from evalstats.reading._logs import load_results

DATA = Path(__file__).resolve().parent / "data"
SCORES = DATA / "inspect" / "scores"
F1_LOG = SCORES / "scores_f1.json"
CPI_LOG = SCORES / "scores_cpi.json"
RUBRIC_LOG = SCORES / "scores_rubric.json"
PROMPTFOO = DATA / "promptfoo" / "promptfoo-graded.json"
LM_EVAL = next((DATA / "lm_eval_graded").glob("samples_*.jsonl"))
EXPECTED = DATA / "imports_expected"


def _mean_scores(capsys, *argv):
    """``report --json``'s mean score of each variant, and the text report's lines."""
    code, out, _ = cli(capsys, "report", *argv, "--json")
    assert code == 0
    doc = json.loads(out)
    means = {s["variant"]: s for s in doc["scores"]}
    code, text, _ = cli(capsys, "report", *argv)
    assert code == 0
    return means, text


def _inspect_samples(path):
    return json.loads(path.read_text(encoding="utf-8"))["samples"]


# --- Inspect AI -----------------------------------------------------------------


@needs_inspect
def test_inspect_numeric_scores_are_kept_and_averaged(capsys):
    samples = _inspect_samples(F1_LOG)
    values = [s["scores"]["f1"]["value"] for s in samples]
    assert any(0 < v < 1 for v in values)  # the fixture is graded
    means, text = _mean_scores(capsys, F1_LOG, "--pass-threshold", "0.5")
    got = means["mockllm/model"]
    assert got["samples"] == len(values) == 8
    assert got["these_cases"]["estimate"] == pytest.approx(sum(values) / len(values), abs=1e-12)
    assert "mean scores (0 to 1, 95% intervals)" in text
    assert "variant mockllm/model: 8 scored samples of 4 cases" in text
    res = load_results(F1_LOG, pass_threshold=0.5)
    for s, value in zip(res.samples, values, strict=True):
        (c,) = s["checks"]
        assert c["score"] == s["score"] == value and c["raw_score"] == value
        assert c["scale"] == [0.0, 1.0]
        assert c["status"] == ("passed" if value >= 0.5 else "failed")  # the pass rule
    assert res.manifest["imported"]["scores"] == {"of": "the value of scorer 'f1'", "scale": [0, 1]}
    assert "each sample's score is the value of scorer 'f1', from 0 to 1" in res.warnings


@needs_inspect
def test_inspect_eval_and_json_logs_keep_the_same_scores():
    eval_log = load_results(F1_LOG.with_suffix(".eval"), pass_threshold=0.5)
    json_log = load_results(F1_LOG, pass_threshold=0.5)

    def scored(res):
        return [(s["case"], s["repeat"], s["score"], s["checks"][0]) for s in res.samples]

    assert scored(eval_log) == scored(json_log)
    assert eval_log.manifest["imported"]["scores"] == json_log.manifest["imported"]["scores"]


@needs_inspect
def test_inspect_partial_credit_is_read_as_value_to_float_reads_it(capsys):
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()  # Inspect's own mapping, the reference
    values = [s["scores"]["partial_credit"]["value"] for s in _inspect_samples(CPI_LOG)]
    assert set(values) == {"C", "P", "I"}
    expected = [to_float(v) for v in values]
    assert [score_number(v) for v in values] == expected
    means, text = _mean_scores(capsys, CPI_LOG, "--pass-threshold", "1")
    assert means["mockllm/model"]["these_cases"]["estimate"] == pytest.approx(
        sum(expected) / len(expected), abs=1e-12
    )
    res = load_results(CPI_LOG, pass_threshold=1)
    passed = [s["checks"][0]["status"] == "passed" for s in res.samples]
    assert passed == [v == "C" for v in values]  # P is 0.5: below a threshold of 1


@needs_inspect
def test_inspect_partial_credit_without_a_threshold_asks_for_one(capsys, tmp_path):
    line = one_line_error(
        capsys,
        "import",
        CPI_LOG,
        "--out",
        tmp_path / "out.jsonl",
        naming=[CPI_LOG, "sample 'q1', epoch 2", "'P', partial credit (0.5)", "--pass-threshold"],
    )
    assert line.startswith("evalstats: error:")
    assert not (tmp_path / "out.jsonl").exists()


@needs_inspect
def test_inspect_rubric_needs_its_scale_and_is_mapped_from_it(capsys, tmp_path):
    one_line_error(
        capsys,
        "report",
        RUBRIC_LOG,
        "--pass-threshold",
        "4",
        naming=[RUBRIC_LOG, "sample 'q1', epoch 1", "is 5, outside 0 to 1", "--scale LOW,HIGH"],
    )
    samples = _inspect_samples(RUBRIC_LOG)
    # make_inspect_scores.py: q4's second epoch ended in an error; it scores 0.
    errored = [s for s in samples if s.get("error")]
    assert [(s["id"], s["epoch"]) for s in errored] == [("q4", 2)]
    scored = [(s["scores"]["rubric"]["value"] - 1) / 4 for s in samples if not s.get("error")]
    expected = (sum(scored) + 0.0) / len(samples)
    means, text = _mean_scores(capsys, RUBRIC_LOG, "--scale", "1,5", "--pass-threshold", "4")
    assert means["mockllm/model"]["these_cases"]["estimate"] == pytest.approx(expected, abs=1e-12)
    assert "scale 1 to 5 (--scale), mapped to 0 to 1" in text
    res = load_results(RUBRIC_LOG, scale="1,5", pass_threshold=4)
    q3 = next(s for s in res.samples if s["case"] == "q3" and s["repeat"] == 1)
    assert (q3["checks"][0]["raw_score"], q3["checks"][0]["scale"]) == (4.0, [1.0, 5.0])
    assert q3["score"] == 0.75 and q3["checks"][0]["status"] == "passed"
    bad = next(s for s in res.samples if s["status"] == "incomplete")
    assert bad["score"] == 0.0 and "score" not in bad["checks"][0]
    # a declared scale the values do not fit, and a threshold off the scale
    one_line_error(
        capsys,
        "report",
        RUBRIC_LOG,
        "--scale",
        "0,4",
        "--pass-threshold",
        "4",
        naming=[RUBRIC_LOG, "sample 'q1', epoch 1", "is 5, outside its scale 0 to 4"],
    )
    one_line_error(
        capsys,
        "report",
        RUBRIC_LOG,
        "--scale",
        "1,5",
        "--pass-threshold",
        "7",
        naming=["pass_threshold=7 is outside scale=1,5"],
    )


@needs_inspect
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (float("inf"), "is inf, not a finite score"),  # NaN is Inspect's "unscored"
        ("lots", "'lots', which is neither a pass/fail word"),
        (12, "is 12, outside 0 to 1"),
    ],
)
def test_inspect_bad_score_values_name_the_sample(value, problem, capsys, tmp_path):
    doc = json.loads(F1_LOG.read_text(encoding="utf-8"))
    doc["samples"][2]["scores"]["f1"]["value"] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")  # NaN as Python's json writes it
    one_line_error(
        capsys,
        "report",
        bad,
        "--pass-threshold",
        "0.5",
        naming=[bad, "sample 'q3', epoch 1", problem],
    )


@needs_inspect
def test_a_cut_off_graded_inspect_log_is_one_line(capsys, tmp_path):
    bad = tmp_path / "cut.json"
    bad.write_bytes(RUBRIC_LOG.read_bytes()[:6000])
    one_line_error(
        capsys,
        "report",
        bad,
        "--scale",
        "1,5",
        "--pass-threshold",
        "4",
        naming=[bad, "not a readable Inspect AI log"],
    )


# --- promptfoo ----------------------------------------------------------------------


def _promptfoo_entries():
    return json.loads(PROMPTFOO.read_text(encoding="utf-8"))["results"]["results"]


def test_promptfoo_keeps_each_assertion_score_and_the_answer_score(capsys):
    entries = _promptfoo_entries()
    prompts = {0: "terse", 1: "polite"}
    by_variant: dict[str, list[float]] = {"terse": [], "polite": []}
    for e in entries:
        by_variant[prompts[e["promptIdx"]]].append(e["score"])
    means, text = _mean_scores(capsys, PROMPTFOO)
    for variant, scores in by_variant.items():
        got = means[variant]["these_cases"]["estimate"]
        assert got == pytest.approx(sum(scores) / len(scores), abs=1e-12)
    assert "variant terse: 6 scored samples of 3 cases" in text
    res = load_results(PROMPTFOO)
    assert res.variants() == ("terse", "polite")
    first = entries[1]  # testIdx 0, promptIdx 0: terse, order status, repeat 0
    record = next(
        s
        for s in res.samples
        if (s["variant"], s["case"], s["repeat"]) == ("terse", "order status", 0)
    )
    assert record["score"] == first["score"]
    components = first["gradingResult"]["componentResults"]
    assert [c["score"] for c in record["checks"]] == [c["score"] for c in components]
    assert [c.get("threshold") for c in record["checks"]] == [
        c["assertion"].get("threshold") for c in components
    ]
    # promptfoo's score is the weighted mean of its assertions' (weights 1, 1, 2)
    weights = [c["assertion"].get("weight", 1) for c in components]
    assert record["score"] == pytest.approx(
        sum(w * c["score"] for w, c in zip(weights, components, strict=True)) / sum(weights)
    )


def test_promptfoo_pass_fail_stays_its_own_verdict():
    from evalstats.results._file import sample_passed

    res = load_results(PROMPTFOO)
    got = sorted(sample_passed(s) for s in res.samples)
    assert got == sorted(e["success"] for e in _promptfoo_entries())


def _broken_promptfoo(tmp_path, change):
    doc = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    change(doc["results"]["results"][3])
    path = tmp_path / "graded.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda e: e["gradingResult"]["componentResults"][1].update(score="0.7"),
            "componentResults[1].score is '0.7', not a number",
        ),
        (
            lambda e: e["gradingResult"]["componentResults"][1].update(score=None),
            "componentResults[1].score is None, not a number",
        ),
        (lambda e: e.update(score=1.5), "score: the score is 1.5, outside 0 to 1"),
    ],
)
def test_promptfoo_bad_scores_name_the_line_and_field(change, problem, capsys, tmp_path):
    bad = _broken_promptfoo(tmp_path, change)
    line = one_line_error(capsys, "report", bad, naming=[bad, "results.results[3].", problem])
    assert "line " in line


def test_promptfoo_scores_off_zero_to_one_take_a_scale(tmp_path, capsys):
    def shift(e):
        e["score"] = 2.0  # a provider of scores on 0 to 2, say

    bad = _broken_promptfoo(tmp_path, shift)
    one_line_error(capsys, "report", bad, naming=["--scale LOW,HIGH"])
    res = load_results(bad, scale="0,2")
    assert sum(s.get("score") == 1.0 for s in res.samples) == 1


def test_a_cut_off_graded_promptfoo_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "cut.json"
    bad.write_bytes(PROMPTFOO.read_bytes()[:9000])
    one_line_error(
        capsys, "report", bad, "--format", "promptfoo", naming=[bad, "is not valid JSON"]
    )


# --- lm-evaluation-harness ---------------------------------------------------------


def _lm_lines():
    return [json.loads(line) for line in LM_EVAL.read_text(encoding="utf-8").splitlines()]


def test_lm_eval_metric_picks_a_continuous_score(capsys):
    lines = _lm_lines()
    f1 = [line["f1"] for line in lines]
    means, text = _mean_scores(capsys, LM_EVAL, "--metric", "f1", "--pass-threshold", "0.5")
    got = means["example-org/tiny-reader"]
    assert got["samples"] == 20
    assert got["these_cases"]["estimate"] == pytest.approx(sum(f1) / len(f1), abs=1e-12)
    assert "each sample's score is metric 'f1', from 0 to 1" in text
    res = load_results(LM_EVAL, metric="f1", pass_threshold=0.5)
    assert [s["checks"][0]["status"] == "passed" for s in res.samples] == [x >= 0.5 for x in f1]


def test_lm_eval_binary_metric_keeps_no_score_and_continuous_needs_a_threshold(capsys):
    res = load_results(LM_EVAL)  # em, the first metric: 1 or 0
    assert all("score" not in s for s in res.samples)
    assert "scores" not in res.manifest["imported"]
    one_line_error(
        capsys,
        "report",
        LM_EVAL,
        "--metric",
        "f1",
        naming=[LM_EVAL, "line 2: metric 'f1' is 0.5, not 0 or 1; give --pass-threshold"],
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("half", "line 4: metric 'f1' is 'half', which is neither a pass/fail word"),
        (float("nan"), "line 4 (doc_id 3): metric 'f1' is nan, not a finite score"),
        (64.0, "line 4 (doc_id 3): metric 'f1' is 64, outside 0 to 1"),
    ],
)
def test_lm_eval_bad_metric_values_name_the_line(value, problem, capsys, tmp_path):
    lines = _lm_lines()
    lines[3]["f1"] = value
    bad = tmp_path / LM_EVAL.name
    bad.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    one_line_error(
        capsys,
        "report",
        bad,
        "--metric",
        "f1",
        "--pass-threshold",
        "0.5",
        naming=[bad, problem],
    )


def test_lm_eval_a_percent_metric_is_read_on_its_scale(tmp_path, capsys):
    lines = _lm_lines()
    for line in lines:
        line["f1"] = 100 * line["f1"]
    path = tmp_path / LM_EVAL.name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    res = load_results(path, metric="f1", pass_threshold=50, scale=(0, 100))
    originals = [x["f1"] for x in _lm_lines()]
    assert [s["score"] for s in res.samples] == pytest.approx(originals, abs=1e-12)
    assert res.samples[1]["checks"][0]["scale"] == [0.0, 100.0]


def test_a_cut_off_lm_eval_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / LM_EVAL.name
    bad.write_text(LM_EVAL.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    one_line_error(
        capsys,
        "report",
        bad,
        "--metric",
        "f1",
        "--pass-threshold",
        "0.5",
        naming=[bad, "line 20 is not valid JSON"],
    )


# --- tables -------------------------------------------------------------------------


def _table(tmp_path, rows, name="rated.csv"):
    path = tmp_path / name
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["item", "prompt", "ok", "rating"], *rows])
    return path


RATED = [
    ["a", "p1", "1", "5"],
    ["a", "p1", "0", "2"],
    ["b", "p1", "1", "4"],
    ["a", "p2", "1", "3"],
    ["b", "p2", "", "1"],  # not measured: its rating is not counted
    ["b", "p2", "0", ""],  # measured without a score
]


def test_a_table_score_column_on_its_scale(tmp_path, capsys):
    path = _table(tmp_path, RATED)
    columns = "case=item,variant=prompt,pass=ok,score=rating"
    means, text = _mean_scores(capsys, path, "--columns", columns, "--scale", "1,5")
    # by hand: p1 rates 5, 2, 4 on 1 to 5 -> (4 + 1 + 3) / 4 / 3; p2 rates 3 -> 0.5
    assert means["p1"]["these_cases"]["estimate"] == pytest.approx(8 / 12, abs=1e-12)
    assert means["p1"]["samples"] == 3
    assert means["p2"]["these_cases"]["estimate"] == pytest.approx(0.5, abs=1e-12)
    assert means["p2"]["samples"] == 1
    assert "column 'rating' on its scale 1 to 5 (--scale)" in text
    res = load_results(path, columns=columns, scale="1,5")
    assert res.outcomes("p1") == {"a": [True, False], "b": [True]}  # pass=ok decides
    assert res.samples[1]["checks"][0] == {
        "check": "ok",
        "axis": None,
        "status": "failed",
        "reason": "ok=0",
        "score": 0.25,
        "raw_score": 2.0,
        "scale": [1.0, 5.0],
    }


def test_a_table_score_column_alone_decides_by_the_threshold(tmp_path):
    path = _table(tmp_path, RATED)
    res = load_results(
        path, columns="case=item,variant=prompt,score=rating", scale="1,5", pass_threshold=4
    )
    # no pass column: the ratings pass at 4 or more, and an empty rating is unmeasured
    assert res.outcomes("p1") == {"a": [True, False], "b": [True]}
    assert res.outcomes("p2") == {"a": [False], "b": [False, None]}
    assert res.manifest["imported"]["columns"]["pass"] == "rating"


@pytest.mark.parametrize(
    ("cell", "extra", "problem"),
    [
        ("lots", [], "row 4: column 'rating' is 'lots', not a number"),
        ("nan", [], "row 4: column 'rating' is nan, not a finite score"),
        ("7", [], "row 4: column 'rating' is 7, outside its scale 1 to 5"),
        ("C", [], "row 4: column 'rating' is 'C', a word worth 1 on 0 to 1"),
        ("4", ["--scale", "1,3"], "row 2: column 'rating' is 5, outside its scale 1 to 3"),
    ],
)
def test_bad_score_cells_name_the_row_and_column(cell, extra, problem, tmp_path, capsys):
    rows = [list(r) for r in RATED]
    rows[2][3] = cell
    path = _table(tmp_path, rows)
    argv = ["--columns", "case=item,variant=prompt,pass=ok,score=rating"]
    one_line_error(
        capsys, "report", path, *argv, *(extra or ["--scale", "1,5"]), naming=[path, problem]
    )


def test_a_table_of_graded_scores_without_a_scale_asks_for_one(tmp_path, capsys):
    path = _table(tmp_path, RATED)
    one_line_error(
        capsys,
        "report",
        path,
        "--columns",
        "case=item,variant=prompt,pass=ok,score=rating",
        naming=[path, "row 2: column 'rating' is 5, outside 0 to 1", "--scale LOW,HIGH"],
    )


def test_a_pass_column_of_graded_numbers_keeps_them_as_scores(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("case,score\nx,0.9\nx,0.2\ny,0.5\ny,\n", encoding="utf-8")
    res = load_results(path, pass_threshold=0.5)
    assert [s.get("score") for s in res.samples] == [0.9, 0.2, 0.5, None]
    assert res.outcomes("t") == {"x": [True, False], "y": [True, None]}


def test_a_parquet_score_column(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {
            "case": ["a", "a", "b", "b"],
            "passed": [True, False, True, None],
            "judge": [0.75, 0.25, 1.0, math.nan],
        }
    )
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    res = load_results(path, columns="score=judge")
    assert [s.get("score") for s in res.samples] == [0.75, 0.25, 1.0, None]
    assert [s["status"] for s in res.samples][-1] == "unmeasured"


def test_scale_is_for_imported_logs_only(tmp_path, capsys):
    results = tmp_path / "r.jsonl"
    code, _, _ = cli(capsys, "import", DATA / "table" / "table.csv", "--out", results)
    assert code == 0
    one_line_error(
        capsys, "report", results, "--scale", "1,5", naming=["scale='1,5' is for imported"]
    )
    one_line_error(capsys, "report", results, "--scale", "5,1", naming=["LOW below HIGH"])


# --- the rules ----------------------------------------------------------------------


@given(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6))
def test_a_declared_scale_maps_its_ends_to_zero_and_one(low, width):
    high = low + width
    if not low < high:
        return
    assert check_scale(f"{low!r},{high!r}") == (low, high)
    assert score_scale([low, high], scale=(low, high), asked=True, what="x", place=str) == (
        low,
        high,
    )
    from evalstats.reading._log_common import with_score

    assert with_score({}, low, (low, high))["score"] == 0.0
    assert with_score({}, high, (low, high))["score"] == 1.0
    mid = with_score({}, low + width / 2, (low, high))["score"]
    assert 0.0 <= mid <= 1.0 and mid == pytest.approx(0.5, abs=1e-6)


@given(st.lists(st.sampled_from([0.0, 1.0, True, False, "C", "I", "yes", "no"]), min_size=1))
def test_pass_fail_values_keep_no_score(values):
    numbers = [score_number(v) for v in values]
    assert score_scale(numbers, scale=None, asked=False, what="x", place=str) is None


@pytest.mark.parametrize("bad", ["5", "1,x", "1,2,3", (1,), (2, 1), "nan,1", (True, 2)])
def test_a_bad_scale_is_refused_naming_it(bad):
    with pytest.raises(InvalidArgument, match="scale="):
        check_scale(bad)


# --- logs without graded scores import as before ---------------------------------------


def _expected_cases():
    spec = importlib.util.spec_from_file_location("make_expected", EXPECTED / "make_expected.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MAKER = _expected_cases()


@pytest.mark.parametrize(("name", "log", "argv"), _MAKER.CASES, ids=[c[0] for c in _MAKER.CASES])
def test_pass_fail_logs_say_what_they_said(name, log, argv, monkeypatch):
    if log.startswith("inspect/") and not HAVE_INSPECT:
        pytest.skip("inspect_ai is not installed")
    monkeypatch.chdir(DATA)
    got = _MAKER.output(log, argv)
    assert got == (EXPECTED / name).read_text(encoding="utf-8")


def test_readme_commands_on_graded_logs_show_mean_scores(capsys, monkeypatch):
    import shlex

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = text.split("Graded scores come along.", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert len(commands) == 3
    monkeypatch.chdir(DATA.parent.parent)
    for argv in commands:
        if not HAVE_INSPECT and any("data/inspect/" in a for a in argv):
            continue
        code, out, err = cli(capsys, *argv[1:])
        assert code == 0, err
        assert "mean scores (0 to 1, 95% intervals)" in out


# --- a table placed column by column is the table placed record by record -----------

_ROW = st.tuples(
    st.sampled_from(["q1", "q2", "007", "q 4"]),
    st.sampled_from(["old", "new", "mid"]),
    st.integers(0, 3),
    st.sampled_from(["1", "0", "yes", "", "0.25", "0.75"]),
    st.sampled_from(["", "0.5", "1.25"]),
)


def _record_by_record(monkeypatch):
    """Make the table reader place its rows as every other reader does (build's own
    loop) and leave its records to be checked by the tally."""
    from evalstats.reading import _log_table

    plain = _log_table.build
    monkeypatch.setattr(_log_table, "_runs", lambda *args: False)  # as if a row came twice
    monkeypatch.setattr(
        _log_table, "build", lambda *a, **k: plain(*a, **{**k, "placed": None, "built": False})
    )


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(_ROW, min_size=1, max_size=14), repeat_column=st.booleans())
def test_a_table_placed_by_column_reads_as_placed_by_record(rows, repeat_column, tmp_path_factory):
    folder = tmp_path_factory.mktemp("t")
    path = folder / "t.csv"
    header = ["case", "variant", "passed", "latency_s"] + (["repeat"] if repeat_column else [])
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        for case, variant, repeat, passed, latency in rows:
            out.writerow([case, variant, passed, latency] + ([repeat] if repeat_column else []))
    verbs = [["report", path, "--json"], ["report", path], ["compare", path, "--json"]]

    import contextlib
    import io

    def run_all():
        texts = []
        for argv in verbs:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
                code = main([str(a) for a in argv] + ["--pass-threshold", "0.5"])
            texts.append((code, buffer.getvalue()))
        try:
            res = load_results(path, pass_threshold=0.5)
        except Exception as error:  # the same refusal either way
            return texts, str(error)
        return texts, (res.manifest, res.samples, res.warnings)

    fast = run_all()
    with pytest.MonkeyPatch.context() as monkeypatch:
        _record_by_record(monkeypatch)
        slow = run_all()
    assert fast == slow


def test_a_built_table_is_counted_the_same_a_chunk_at_a_time(tmp_path, monkeypatch):
    from evalstats.reading import _tally

    path = tmp_path / "t.csv"
    rows = [f"c{k % 7},{'ab'[k % 2]},{k // 14},{k % 3 % 2},{k / 10}\n" for k in range(40)]
    path.write_text("case,variant,repeat,passed,latency_s\n" + "".join(rows), encoding="utf-8")
    res = load_results(path)
    assert getattr(res, "built", False) is True
    whole = _tally._tally_results(res)
    monkeypatch.setattr(_tally, "_CONVERTED", 3)  # 40 records in 14 chunks
    chunked = _tally._tally_results(res)
    for v in ("a", "b"):
        assert chunked.outcomes(v) == whole.outcomes(v) == res.outcomes(v)
        assert chunked.counts(v).completed == whole.counts(v).completed == 20


# --- a built log's records are counted by their shared checks as one by one ------------

_BUILT_CHECKS = [
    [{"check": "p", "axis": None, "status": "passed", "reason": ""}],
    [{"check": "p", "axis": None, "status": "failed", "reason": "p=0"}],
    [{"check": "p", "axis": "a", "status": "failed", "reason": "could not be inspected"}],
    [{"check": "j", "axis": None, "status": "unscored", "reason": "", "judge_unmeasured": True}],
    [
        {"check": "g", "axis": None, "status": "passed", "reason": "", "score": 0.75}
        | {"raw_score": 4.0, "scale": [1.0, 5.0]},
        {"check": "p", "axis": None, "status": "failed", "reason": "p=0"},
    ],
    [
        {"check": "g", "axis": None, "status": "failed", "reason": "", "score": 0.3}
        | {"raw_score": 2.2, "scale": [1.0, 5.0]}
    ],
]


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["c1", "c2", "c3"]),
            st.sampled_from(["a", "b"]),
            st.integers(0, 3),
            st.sampled_from(["completed", "incomplete", "unmeasured"]),
            st.integers(0, len(_BUILT_CHECKS) - 1),
            st.booleans(),  # the list of checks shared, or a copy of its own
        ),
        min_size=1,
        max_size=30,
    )
)
def test_a_built_log_is_counted_by_its_shared_checks_as_one_by_one(rows):
    import copy

    from evalstats.reading import _tally
    from evalstats.reading._log_common import build

    samples = []
    for case, variant, repeat, status, k, shared in rows:
        checks = _BUILT_CHECKS[k] if shared else copy.deepcopy(_BUILT_CHECKS[k])
        samples.append(
            {"case": case, "variant": variant, "repeat": repeat, "status": status}
            | {"reason": None if status == "completed" else "x"}
            | {"checks": [] if status == "unmeasured" else checks}
        )

    def made(built):
        return build(
            "t.log",
            copy.copy([dict(s) for s in samples]) if not built else samples,
            tool="t",
            tool_version=None,
            suite={"name": "t"},
            variants=[{"name": "a"}, {"name": "b"}],
            pass_rule="p",
            built=built,
        )

    fast, slow = (_tally._tally_results(made(b)) for b in (True, False))
    for v in ("a", "b"):
        if v not in slow._variants:
            continue
        f, s = fast.counts(v), slow.counts(v)
        assert list(f.verdicts.items()) == list(s.verdicts.items())
        assert list(f.levels.items()) == list(s.levels.items())
        assert f.judge_unmeasured == s.judge_unmeasured
        assert (f.completed, f.incomplete) == (s.completed, s.incomplete)
        assert f.unmeasured == s.unmeasured
        assert fast.outcomes(v) == slow.outcomes(v)
        assert list(f.scores) == list(s.scores)
