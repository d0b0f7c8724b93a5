"""Readers of other tools' logs (evalstats.reading._logs), on real files those tools wrote.

The fixtures under tests/data/ are the tools' own output (Inspect AI with its
mock model, promptfoo with its echo provider), or for lm-eval a file in its
documented samples format; each folder says how it was made. Broken files are
made here from the real ones: a cut-off zip, an unknown version, a missing field.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from importing import HAVE_INSPECT, cli, needs_inspect, one_line_error

from evalstats.deciding._compare_results import compare_results
from evalstats.errors import InvalidArgument, ResultsFileError
from evalstats.reading._log_common import PassRule
from evalstats.reading._logs import detect_format, load_results, merge, write_results
from evalstats.results._file import read_results

DATA = Path(__file__).parent / "data"
INSPECT_A = DATA / "inspect" / "inspect_a.eval"
INSPECT_B = DATA / "inspect" / "inspect_b.eval"
INSPECT_A_JSON = DATA / "inspect" / "inspect_a.json"
PROMPTFOO = DATA / "promptfoo" / "promptfoo-results.json"
LM_EVAL = next((DATA / "lm_eval").glob("samples_*.jsonl"))
TABLE = DATA / "table" / "table.csv"


def _import_error(capsys, tmp_path, path, *extra):
    """Import ``path``: exit 2 with one line naming it, and no output file."""
    out = tmp_path / "imported.jsonl"
    line = one_line_error(capsys, "import", path, "--out", out, *extra, naming=path)
    assert not out.exists()
    return line


# --- detection ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (INSPECT_A, "inspect"),
        (INSPECT_A_JSON, "inspect"),
        (PROMPTFOO, "promptfoo"),
        (LM_EVAL, "lm-eval"),
        (TABLE, "csv"),
    ],
)
def test_format_is_found_from_content_not_name(path, fmt, tmp_path):
    renamed = tmp_path / "data.bin"
    shutil.copyfile(path, renamed)
    assert detect_format(renamed) == fmt


def test_our_own_results_file_is_detected_and_read_as_is(tmp_path):
    out = tmp_path / "r.jsonl"
    write_results(load_results(TABLE), out)
    assert detect_format(out) == "evalstats"
    assert load_results(out).outcomes("baseline") == load_results(TABLE).outcomes("baseline")


def test_unknown_format_name_suggests(tmp_path):
    with pytest.raises(InvalidArgument, match="format='promptfo'.*did you mean 'promptfoo'"):
        load_results(TABLE, format="promptfo")


def test_a_json_file_of_another_kind_is_refused_naming_the_file(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text('{"hello": [1, 2, 3]}')
    _import_error(capsys, tmp_path, other)


# --- Inspect AI -----------------------------------------------------------------

# make_logs.py: model a answers q2 wrong in epoch 3, q3 in epoch 2 and q5 in
# epochs 1 and 2; model b answers only q4 wrong, in epoch 3.
A_OUTCOMES = {
    "q1": [True, True, True],
    "q2": [True, True, False],
    "q3": [True, False, True],
    "q4": [True, True, True],
    "q5": [False, False, True],
}
B_OUTCOMES = {
    "q1": [True, True, True],
    "q2": [True, True, True],
    "q3": [True, True, True],
    "q4": [True, True, False],
    "q5": [True, True, True],
}


@needs_inspect
def test_inspect_samples_times_epochs_become_cases_times_repeats():
    res = load_results(INSPECT_A)
    assert res.variants() == ("mockllm/a",)
    assert res.outcomes("mockllm/a") == A_OUTCOMES
    assert res.manifest["imported"]["tool"] == "inspect_ai"
    assert res.manifest["imported"]["scorer"] == "match"
    assert "scorer 'match' says so (C/correct/yes pass" in res.warnings[0]
    s = next(s for s in res.samples if s["case"] == "q5" and s["repeat"] == 0)
    assert s["answer"] == "2"
    assert s["checks"][0]["status"] == "failed"
    assert "answer '2', target '2.5'" in s["checks"][0]["reason"]
    assert s["tokens"] == {"input": 5, "output": 1}
    assert s["latency_s"] > 0


@needs_inspect
def test_inspect_json_and_eval_logs_read_the_same():
    a, j = load_results(INSPECT_A), load_results(INSPECT_A_JSON)
    assert j.outcomes("mockllm/a") == a.outcomes("mockllm/a")
    assert j.manifest["suite"]["sha256"] == a.manifest["suite"]["sha256"]


@needs_inspect
def test_two_inspect_logs_of_one_task_compare_paired_by_sample_and_epoch():
    both = merge([load_results(INSPECT_A), load_results(INSPECT_B)])
    assert both.variants() == ("mockllm/a", "mockllm/b")
    cmp = compare_results(both, "mockllm/a", "mockllm/b")
    assert cmp.paired and cmp.pairs == 15
    # Discordant pairs by hand from A_OUTCOMES and B_OUTCOMES: only b passes in
    # q2/3, q3/2, q5/1, q5/2; only a passes in q4/3.
    assert (cmp.these_cases.only_a, cmp.these_cases.only_b) == (1, 4)
    assert cmp.these_cases.verdict == "cant_tell"


@needs_inspect
def test_merging_logs_of_different_tasks_is_refused(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("case,passed\nq1,1\n")
    with pytest.raises(ResultsFileError, match="not a run of the same task"):
        merge([load_results(INSPECT_A), load_results(other)])


@needs_inspect
def test_two_logs_of_the_same_model_are_told_apart_by_file(tmp_path):
    copy = tmp_path / "again.eval"
    shutil.copyfile(INSPECT_A, copy)
    both = merge([load_results(INSPECT_A), load_results(copy)])
    assert both.variants() == ("inspect_a", "again")  # nothing else differs: short to type


@needs_inspect
def test_an_unknown_scorer_is_refused_with_the_ones_there_are(capsys, tmp_path):
    line = _import_error(capsys, tmp_path, INSPECT_A, "--scorer", "mach")
    assert "scorer='mach'" in line and "did you mean 'match'" in line


@needs_inspect
@pytest.mark.parametrize(
    ("breakage", "problem"),
    [
        ("truncated zip", "not a readable Inspect AI log"),
        ("version 99", "version 99"),
        ("no epoch", "samples.0.epoch: Field required"),
        ("no samples", "the log has no samples"),
        ("cut json", "not a readable Inspect AI log"),
    ],
)
def test_broken_inspect_logs_give_one_line_and_exit_2(breakage, problem, tmp_path, capsys):
    if breakage == "truncated zip":
        bad = tmp_path / "cut.eval"
        bad.write_bytes(INSPECT_A.read_bytes()[:5000])
    elif breakage == "cut json":
        bad = tmp_path / "cut.json"
        bad.write_bytes(INSPECT_A_JSON.read_bytes()[:3000])
    else:
        doc = json.loads(INSPECT_A_JSON.read_text())
        if breakage == "version 99":
            doc["version"] = 99
        elif breakage == "no epoch":
            del doc["samples"][0]["epoch"]
        else:
            doc["samples"] = []
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(doc))
    assert problem in _import_error(capsys, tmp_path, bad)


def test_a_missing_inspect_ai_names_the_extra(monkeypatch, capsys, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    line = _import_error(capsys, tmp_path, INSPECT_A)
    assert 'pip install "evalstats-honest[inspect]"' in line


# --- promptfoo ------------------------------------------------------------------


def test_promptfoo_prompts_are_variants_tests_cases_repeats_repeats():
    res = load_results(PROMPTFOO)
    assert res.variants() == ("terse", "polite")
    # promptfooconfig.yaml: the polite prompt's answer is too long for "order
    # status"; only the polite prompt contains "politely" (refund).
    assert res.outcomes("terse") == {
        "order status": [True] * 3,
        "refund": [False] * 3,
        "thanks": [True] * 3,
    }
    assert res.outcomes("polite") == {
        "order status": [False] * 3,
        "refund": [True] * 3,
        "thanks": [True] * 3,
    }
    refund = next(s for s in res.samples if s["case"] == "refund" and s["variant"] == "terse")
    statuses = {c["check"]: c["status"] for c in refund["checks"]}
    assert statuses == {"icontains(refund)": "passed", "icontains(politely)": "failed"}
    assert refund["answer"] == "Reply briefly: The lamp arrived broken, I want a refund."
    assert res.manifest["imported"]["repeat"] == 3


def test_promptfoo_pass_is_its_own_success_flag():
    doc = json.loads(PROMPTFOO.read_text())
    res = load_results(PROMPTFOO)
    from evalstats.results._file import sample_passed

    got = sorted(sample_passed(s) for s in res.samples)
    assert got == sorted(bool(e["success"]) for e in doc["results"]["results"])


def test_promptfoo_overall_verdict_wins_over_its_parts(tmp_path):
    doc = json.loads(PROMPTFOO.read_text())
    entry = next(e for e in doc["results"]["results"] if not e["success"])
    entry["success"] = True  # as an assert-set with a threshold can decide
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    res = load_results(path)
    from evalstats.results._file import sample_passed

    assert sum(sample_passed(s) for s in res.samples) == 13


def test_promptfoo_errors_are_incomplete_samples(tmp_path):
    doc = json.loads(PROMPTFOO.read_text())
    entry = doc["results"]["results"][0]
    entry.update(success=False, failureReason=2, error="provider timed out", response=None)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    res = load_results(path)
    bad = [s for s in res.samples if s["status"] == "incomplete"]
    assert len(bad) == 1 and "provider timed out" in bad[0]["reason"]


@pytest.mark.parametrize(
    ("breakage", "problem"),
    [
        ("cut", "is not valid JSON"),
        ("version", "promptfoo results version=99"),
        ("no success", 'results.results[4] has no "success"'),
    ],
)
def test_broken_promptfoo_files_give_one_line(breakage, problem, tmp_path, capsys):
    bad = tmp_path / "results.json"
    if breakage == "cut":
        bad.write_bytes(PROMPTFOO.read_bytes()[:4000])
        extra = ["--format", "promptfoo"]
    else:
        doc = json.loads(PROMPTFOO.read_text())
        if breakage == "version":
            doc["results"]["version"] = 99
        else:
            del doc["results"]["results"][4]["success"]
        bad.write_text(json.dumps(doc))
        extra = []
    assert problem in _import_error(capsys, tmp_path, bad, *extra)


# --- lm-evaluation-harness ---------------------------------------------------------


def test_lm_eval_doc_ids_are_cases_and_the_model_comes_from_the_results_file():
    res = load_results(LM_EVAL)
    assert res.variants() == ("example-org/tiny-model",)
    outcomes = res.outcomes("example-org/tiny-model")
    assert len(outcomes) == 30 and all(len(v) == 1 for v in outcomes.values())
    # make_samples.py: doc_id % 3 == 2 and doc 10 are wrong: 30 - 10 - 1 = 19 right.
    assert sum(v[0] for v in outcomes.values()) == 19
    assert outcomes["2"] == [False] and outcomes["10"] == [False]
    assert "metric 'exact_match'" in res.warnings[0]
    assert res.manifest["suite"]["name"] == "arith_tiny"


def test_lm_eval_without_its_results_file_says_the_model_is_unknown(tmp_path):
    alone = tmp_path / LM_EVAL.name
    shutil.copyfile(LM_EVAL, alone)
    res = load_results(alone)
    assert res.variants() == ("model",)
    assert any("the model is unknown" in w for w in res.warnings)


def _lm_lines():
    return [json.loads(line) for line in LM_EVAL.read_text().splitlines()]


def test_lm_eval_non_binary_metric_needs_a_threshold(tmp_path, capsys):
    lines = _lm_lines()
    for i, line in enumerate(lines):
        line["metrics"] = ["f1", "exact_match"]
        line["f1"] = round(0.05 * (i % 20), 2)
    path = tmp_path / "samples_x_2026-01-01T00-00-00.000000.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    line = _import_error(capsys, tmp_path, path)
    assert "metric 'f1' is 0.05, not 0 or 1; give --pass-threshold" in line
    res = load_results(path, pass_threshold=0.5)
    # f1 = 0.05 * (i % 20) >= 0.5 exactly for i in 10..19 (i = 20..29 start again at 0).
    assert sum(v[0] for v in res.outcomes("model").values()) == 10
    assert "at least 0.5 (--pass-threshold)" in res.warnings[0]
    res = load_results(path, metric="exact_match")
    assert sum(v[0] for v in res.outcomes("model").values()) == 19


def test_lm_eval_missing_field_and_bad_lines(tmp_path, capsys):
    lines = _lm_lines()
    del lines[3]["exact_match"]
    path = tmp_path / "samples_x.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    line = _import_error(
        capsys,
        tmp_path,
        path,
        "--format",
        "lm-eval",
    )
    assert 'line 4 (doc_id 3) has no "exact_match" value' in line
    path.write_text(LM_EVAL.read_text()[:-50])
    line = _import_error(
        capsys,
        tmp_path,
        path,
        "--format",
        "lm-eval",
    )
    assert "line 30 is not valid JSON" in line


# --- tables -------------------------------------------------------------------------


def test_csv_rows_are_samples():
    res = load_results(TABLE)
    assert res.variants() == ("baseline", "new-prompt")
    base = res.outcomes("baseline")
    assert len(base) == 8 and all(len(v) == 5 for v in base.values())
    rows = TABLE.read_text().splitlines()[1:]
    passes = sum(r.split(",")[3] == "true" for r in rows if r.split(",")[1] == "baseline")
    assert sum(sum(v) for v in base.values()) == passes
    assert compare_results(res, "baseline", "new-prompt").paired


def test_csv_columns_can_be_mapped_and_scores_need_a_threshold(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("item;prompt;score\nx;p1;0.9\nx;p1;0.2\ny;p1;0.5\nx;p2;1\n")
    line = _import_error(
        capsys,
        tmp_path,
        path,
        "--columns",
        "case=item",
    )
    assert "column 'score' is 0.9, not 0 or 1; give --pass-threshold" in line
    res = load_results(path, columns="case=item,variant=prompt", pass_threshold=0.5)
    assert res.outcomes("p1") == {"x": [True, False], "y": [True]}
    assert res.outcomes("p2") == {"x": [True]}


def test_csv_problems_name_the_column(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("item,ok\nx,1\n")
    line = _import_error(capsys, tmp_path, path)
    assert "the table has no case column" in line and "--columns case=NAME" in line
    line = _import_error(
        capsys,
        tmp_path,
        path,
        "--columns",
        "case=itme",
    )
    assert "case=itme names no column" in line
    with pytest.raises(InvalidArgument, match="'cse' is not a column role"):
        load_results(path, columns="cse=item")
    path.write_text("case,passed\nx,maybe\n")
    line = _import_error(capsys, tmp_path, path)
    assert "row 2: column 'passed' is 'maybe'" in line


def test_empty_pass_cell_is_unmeasured(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("case,passed\nx,1\nx,\nx,0\n")
    res = load_results(path)
    assert res.outcomes("t") == {"x": [True, None, False]}


def test_parquet_reads_like_csv_or_says_what_it_needs(tmp_path, monkeypatch, capsys):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"case": ["a", "a", "b"], "variant": ["v", "v", "v"], "correct": [True, False, True]}
    )
    path = tmp_path / "t.parquet"
    try:
        frame.to_parquet(path)
    except ImportError:
        path.write_bytes(b"PAR1" + b"\0" * 16 + b"PAR1")
        line = _import_error(capsys, tmp_path, path)
        assert "reading Parquet needs pyarrow" in line
        return
    assert load_results(path).outcomes("v") == {"a": [True, False], "b": [True]}
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    line = _import_error(capsys, tmp_path, path)
    assert "reading Parquet needs pyarrow" in line


@given(st.one_of(st.booleans(), st.sampled_from([0, 1, 0.0, 1.0, "C", "I", "yes", "NO"])))
def test_pass_rule_reads_binary_values_without_a_threshold(value):
    rule = PassRule(None, what="x")
    expected = value in (True, 1, 1.0, "C", "yes")
    assert rule(value) is expected


@given(st.floats(0, 1), st.floats(0, 1))
def test_pass_rule_threshold_is_at_least(score, threshold):
    assert PassRule(threshold, what="x")(score) is (score >= threshold)


# --- import ---------------------------------------------------------------------------


def test_import_writes_our_jsonl_0600_and_never_overwrites(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    code, stdout, err = cli(capsys, "import", PROMPTFOO, "--out", out)
    assert code == 0, err
    assert "18 samples, 3 cases, variants terse, polite" in stdout
    assert "promptfoo's own verdict" in err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    back = read_results(out)
    res = load_results(PROMPTFOO)
    for v in res.variants():
        assert back.outcomes(v) == res.outcomes(v)
    assert back.manifest["imported"]["pass_rule"].startswith("promptfoo's own verdict")
    before = out.read_bytes()
    line = one_line_error(capsys, "import", TABLE, "--out", out, naming=out)
    assert "already exists" in line
    assert out.read_bytes() == before


def test_import_options_for_another_format_are_refused(capsys, tmp_path):
    line = _import_error(capsys, tmp_path, TABLE, "--scorer", "match")
    assert "scorer='match' is for inspect files" in line


# --- the command line and the README --------------------------------------------------

README = Path(__file__).resolve().parent.parent / "README.md"


def _readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_readme_commands_on_the_committed_files_work(tmp_path):
    import shlex
    import subprocess
    import sys

    section = _readme_section("Analyse runs you already have")
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip()]
    verbs = [c.split()[1] for c in commands]
    assert verbs == ["compare", "compare", "report", "gate", "plan", "import"]
    shutil.copytree(DATA, tmp_path / "tests" / "data")
    exe = str(Path(sys.executable).with_name("evalstats"))
    for command in commands:
        argv = shlex.split(command)
        if not HAVE_INSPECT and any("data/inspect/" in a for a in argv):  # logs, a folder
            continue
        done = subprocess.run(
            [exe, *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.strip(), command
    html = tmp_path / "r.html"
    assert html.exists() and stat.S_IMODE(os.stat(html).st_mode) == 0o600
    if HAVE_INSPECT:
        both = read_results(tmp_path / "quiz.jsonl")
        assert both.variants() == ("mockllm/a", "mockllm/b")
        assert both.outcomes("mockllm/a") == A_OUTCOMES


def _ci_step() -> str:
    section = _readme_section("Run your own eval")
    yaml_text = section.split("```yaml\nname: eval", 1)[1].split("```", 1)[0]
    step = yaml_text.split("id: changed", 1)[1].split("run: |\n", 1)[1]
    lines = []
    for line in step.splitlines():
        if line.strip().startswith("- ") and not line.startswith(" " * 12):
            break
        lines.append(line[10:])
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("status", "event", "expected"),
    [
        (0, "push", "run=yes"),
        (1, "push", "run=no"),
        (1, "schedule", "run=yes"),
        (2, "push", None),  # another program called evalstats, or bad usage
        (127, "push", None),  # not installed at all
    ],
)
def test_readme_ci_example_fails_on_a_broken_install(tmp_path, status, event, expected):
    """The CI example treats only 0 and 1 from `changed` as answers; anything else fails."""
    import subprocess

    script = _ci_step().replace("${{ github.event_name }}", event)
    assert "evalstats changed" in script
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "evalstats").write_text(f"#!/bin/sh\nexit {status}\n")
    (fake / "evalstats").chmod(0o755)
    output = tmp_path / "github_output"
    output.write_text("")
    env = {"PATH": f"{fake}:/usr/bin:/bin", "GITHUB_OUTPUT": str(output)}
    done = subprocess.run(
        ["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=30
    )
    if expected is None:
        assert done.returncode != 0
        assert f"exit status {status}" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        assert output.read_text().strip() == expected


def test_readme_says_the_pypi_evalstats_is_another_project():
    text = README.read_text(encoding="utf-8")
    assert "`pip install evalstats` does not install this one" in text
    # not on PyPI: the CI recipe installs the distribution from a checkout
    # (tests/test_ci_recipe.py runs it)
    section = _readme_section("Run your own eval")
    assert "pip install ./tools/evalstats" in section and "evalstats-honest" in section
    import tomllib

    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    assert project["name"] == "evalstats-honest"
    assert "inspect" in project["optional-dependencies"]


@needs_inspect
def test_compare_two_inspect_files_on_the_command_line(capsys):
    code, out, err = cli(capsys, "compare", INSPECT_A, INSPECT_B)
    assert code == 0, err
    assert "B=mockllm/b against A=mockllm/a" in out
    assert "paired by (case, repeat): 15 pairs" in out


def test_compare_needs_names_when_a_run_has_more_than_two_variants(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("case,variant,passed\nx,a,1\nx,b,0\nx,c,1\n")
    line = one_line_error(capsys, "compare", path, naming="'a', 'b', 'c'")
    assert "--a and --b" in line
    code, out, _ = cli(capsys, "compare", path, "--a", "c", "--b", "a")
    assert code == 0 and "B=a against A=c" in out


def test_every_analysis_verb_reads_foreign_files(tmp_path, capsys):
    code, out, _ = cli(capsys, "report", PROMPTFOO)
    assert code == 0 and "variant terse: 6 of 9 measured samples passed" in out
    code, out, _ = cli(
        capsys, "gate", LM_EVAL, "--variant", "example-org/tiny-model", "--min-pass", "0.6"
    )
    assert code == 0 and "63%" in out
    code, out, _ = cli(
        capsys, "gate", LM_EVAL, "--variant", "example-org/tiny-model", "--min-pass", "0.7"
    )
    assert code == 1
    code, out, _ = cli(capsys, "compare-runs", TABLE, TABLE, "--json")
    assert code == 0 and json.loads(out)
    code, out, _ = cli(capsys, "plan", "--from", TABLE, "--pb", "0.95", "--json")
    assert code == 0 and json.loads(out)["cases"] > 0
    code, out, err = cli(capsys, "report", TABLE, "--plots", tmp_path / "fig")
    assert code == 0 and (tmp_path / "fig" / "forest.png").exists()
    # A pass option for a format that has none is refused, not ignored.
    line = one_line_error(capsys, "report", PROMPTFOO, "--pass-threshold", "0.5", naming="0.5")
    assert "promptfoo decides each test's pass itself" in line


def test_report_writes_html_and_never_overwrites(tmp_path, capsys):
    out = tmp_path / "r.html"
    code, _, err = cli(capsys, "report", TABLE, "--html", out)
    assert code == 0 and f"wrote {out}" in err
    before = out.read_bytes()
    line = one_line_error(capsys, "report", TABLE, "--html", out, naming=out)
    assert "already exists" in line
    assert out.read_bytes() == before


@st.composite
def _long_tables(draw):
    """Rows (case, variant, repeat, pass-or-None) of two variants on the same slots."""
    cases = draw(st.lists(st.sampled_from("pqrstu"), min_size=1, max_size=4, unique=True))
    repeats = draw(st.integers(1, 4))
    rows = []
    for case in cases:
        for r in range(repeats):
            for v in ("old", "new"):
                rows.append((case, v, r, draw(st.sampled_from([True, False, None]))))
    return rows


def _write_table(path, rows):
    cell = {True: "yes", False: "no", None: ""}
    path.write_text(
        "case,variant,repeat,passed\n" + "".join(f"{c},{v},{r},{cell[p]}\n" for c, v, r, p in rows)
    )


@settings(max_examples=25)  # each example reads three small CSV files with pandas
@given(_long_tables())
def test_merging_runs_split_by_variant_gives_the_same_outcomes_and_pairs(rows):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        whole, old, new = (Path(folder) / n for n in ("whole.csv", "a.csv", "b.csv"))
        _write_table(whole, rows)
        _write_table(old, [r for r in rows if r[1] == "old"])
        _write_table(new, [r for r in rows if r[1] == "new"])
        one = load_results(whole)
        two = merge([load_results(old), load_results(new)])
        by_slot = {(c, v, r): p for c, v, r, p in rows}
        for v in ("old", "new"):
            expected: dict[str, list] = {}
            for c, vv, _, p in rows:
                if vv == v:
                    expected.setdefault(c, []).append(p)
            assert one.outcomes(v) == expected
            assert two.outcomes(v) == expected
        a, b = compare_results(one, "old", "new"), compare_results(two, "old", "new")
        # A pair counts when both sides were measured.
        measured = sum(
            by_slot[(c, "old", r)] is not None and by_slot[(c, "new", r)] is not None
            for c, v, r, _ in rows
            if v == "old"
        )
        assert a.paired and b.paired and a.pairs == b.pairs == measured


def test_a_results_file_with_a_manifest_line_longer_than_the_sniffed_bytes_is_ours(tmp_path):
    # A large run's schedule makes the manifest line far longer than the 64 KiB
    # read to tell the format; the file is still an evalstats results file.
    from strategies import results_manifest, write_results_file

    cases = [f"case {i:05d}" for i in range(2000)]
    path = write_results_file(tmp_path / "r.jsonl", results_manifest(cases, ["A", "B"], 2), [])
    assert len(path.read_bytes().split(b"\n", 1)[0]) > 64 * 1024
    assert detect_format(path) == "evalstats"
    other = tmp_path / "other.json"
    other.write_text('{"kind": "manifest", "x": "' + "y" * 70_000 + '"}\n')
    with pytest.raises(ResultsFileError, match="neither an evalstats results file"):
        detect_format(other)


@pytest.mark.parametrize("kind", ["sample", "summary"])
def test_a_results_file_without_its_manifest_line_says_so(kind, tmp_path, capsys):
    from records import manifest, sample, write

    done = {"type": "summary", "status": "finished"}
    whole = write(tmp_path / "r.jsonl", manifest(["c"], ["A"], 1), [sample("c", "A", 0)], done)
    lines = whole.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[1:] if kind == "sample" else lines[2:]) + "\n")
    one_line_error(
        capsys,
        "report",
        cut,
        naming=[cut, f"the first line is a {kind!r} record", "begins with its manifest"],
    )
