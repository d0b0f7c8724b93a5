"""The promptfoo reader on files promptfoo really writes, and on files people hand it.

promptfoo numbers its rows ``testIdx`` one per (test, repeat, combination of
vars): a test whose vars hold lists runs once per combination, every repeat
of them in a row (``test 0, repeat 0: en, fr; repeat 1: en, fr``). Files of
promptfoo before ``runtimeOptions`` was written do not say ``--repeat`` at
all. A file with a byte order mark, promptfoo's config, or its CSV or JSON
Lines output given in place of its JSON output are each one line naming the
file and what it is.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from importing import one_line_error

from evalstats.reading._logs import load_results
from evalstats.results._file import sample_passed

DATA = Path(__file__).parent / "data" / "promptfoo"
PROMPTFOO = DATA / "promptfoo-results.json"


def _base() -> dict:
    return json.loads(PROMPTFOO.read_text(encoding="utf-8"))


def _write(tmp_path: Path, doc: dict, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _entry(test_idx: int, prompt_idx: int, test: dict, passed: bool) -> dict:
    """An answer as promptfoo writes it, with its test case (description, the
    vars of its combination, its assertions)."""
    template = _base()["results"]["results"][1]
    entry = copy.deepcopy(template)
    label = ["terse", "polite"][prompt_idx]
    entry.update(
        testIdx=test_idx,
        promptIdx=prompt_idx,
        success=passed,
        score=1 if passed else 0,
        failureReason=0 if passed else 1,
        vars=dict(test["vars"]),
        testCase={**test, "vars": dict(test["vars"])},
        prompt={"raw": label, "label": label},
        gradingResult=None,
    )
    return entry


def _run(tests: list[dict], outcome, repeat: int | None) -> dict:
    """The file of ``promptfoo eval --repeat REPEAT`` over ``tests`` (each already
    one combination of vars) and two prompts, numbered as promptfoo numbers them:
    ``tests`` grouped by the test they came from (``"test"``), each group's
    combinations run once per repeat in a row."""
    doc = _base()
    entries = []
    idx = 0
    groups: dict[int, list[dict]] = {}
    for t in tests:
        groups.setdefault(t.pop("test"), []).append(t)
    for group in groups.values():
        for r in range(repeat or 1):
            for t in group:
                for p in (0, 1):
                    entries.append(_entry(idx, p, t, outcome(t, p, r)))
                idx += 1
    doc["results"]["results"] = entries
    if repeat is None:
        del doc["runtimeOptions"]["repeat"]
    else:
        doc["runtimeOptions"]["repeat"] = repeat
    return doc


# --- which answers are a case, which are its repeats --------------------------------


def test_combinations_of_vars_are_cases_and_repeats_stay_repeats(tmp_path):
    """``vars: {lang: [en, fr]}`` with ``--repeat 2``: promptfoo numbers the rows
    en r0, fr r0, en r1, fr r1; read as testIdx // 2, each case held an en and a
    fr answer as its two repeats."""
    tests = [
        {"test": 0, "description": "greet", "vars": {"lang": "en"}, "assert": []},
        {"test": 0, "description": "greet", "vars": {"lang": "fr"}, "assert": []},
        {"test": 1, "description": "bye", "vars": {"lang": "en"}, "assert": []},
    ]
    doc = _run(tests, lambda t, p, r: t["vars"]["lang"] == "en", repeat=2)
    res = load_results(_write(tmp_path, doc))
    for variant in ("terse", "polite"):
        got = res.outcomes(variant)
        assert sorted(got.values()) == [[False, False], [True, True], [True, True]], got
    assert len(res.samples) == 12
    assert res.manifest["runs"] == 2
    assert not any("a second sample" in w for w in res.warnings)
    greet = [c for c in res.outcomes("terse") if c.startswith("greet")]
    assert len(greet) == 2 and any("lang=fr" in c for c in greet), greet


def test_tests_alike_stay_cases_of_their_own_with_combinations(tmp_path):
    """Two tests of the same description and vars are two cases, each with its
    repeats, also when another test's vars expand into several combinations."""
    tests = [
        {"test": 0, "description": "q", "vars": {"x": "1"}, "assert": []},
        {"test": 0, "description": "q", "vars": {"x": "2"}, "assert": []},
        {"test": 1, "description": "same", "vars": {"x": "1"}, "assert": []},
        {"test": 2, "description": "same", "vars": {"x": "1"}, "assert": []},
    ]
    doc = _run(tests, lambda t, p, r: t["vars"]["x"] == "1", repeat=3)
    res = load_results(_write(tmp_path, doc))
    got = res.outcomes("terse")
    assert len(got) == 4, got
    assert sorted(got.values()) == [[False] * 3] + [[True] * 3] * 3, got


def test_a_file_that_does_not_say_its_repeat_reads_its_repeats(tmp_path):
    """promptfoo before ``runtimeOptions`` kept ``--repeat 3`` nowhere in the file:
    each repeat was read as a case of its own (9 cases of 1 run, not 3 of 3)."""
    doc = _base()
    del doc["runtimeOptions"]
    base = load_results(PROMPTFOO)
    res = load_results(_write(tmp_path, doc))
    assert res.variants() == base.variants()
    for variant in base.variants():
        assert res.outcomes(variant) == base.outcomes(variant)
    assert res.manifest["runs"] == 3
    assert res.manifest["imported"]["repeat"] == 3
    assert any("--repeat" in w and "3" in w for w in res.warnings), res.warnings
    assert sorted(sample_passed(s) for s in res.samples) == sorted(
        sample_passed(s) for s in base.samples
    )
    # No repeat recorded and no two tests alike but one given twice: each test is
    # a case of one run, and nothing is said about repeats.
    tests = [
        {"test": 0, "description": "a", "vars": {"x": "1"}, "assert": []},
        {"test": 1, "description": "b", "vars": {"x": "1"}, "assert": []},
        {"test": 2, "description": "b", "vars": {"x": "1"}, "assert": []},
    ]
    res = load_results(_write(tmp_path, _run(tests, lambda t, p, r: True, repeat=None)))
    assert len(res.outcomes("terse")) == 3
    assert res.manifest["runs"] == 1
    assert not any("--repeat" in w for w in res.warnings), res.warnings
    # Rows with no test case and no vars have nothing to tell them apart by: each
    # number is a case, not a repeat of one case.
    doc = _base()
    del doc["runtimeOptions"]
    for e in doc["results"]["results"]:
        del e["testCase"], e["vars"]
    res = load_results(_write(tmp_path, doc))
    assert len(res.outcomes("terse")) == 9 and res.manifest["runs"] == 1


# --- files that are not promptfoo's results.json ------------------------------------


def test_a_byte_order_mark_is_read_past(tmp_path):
    """A results.json saved by an editor or PowerShell with a BOM was refused as
    "not valid JSON ...; was it cut short?"."""
    path = tmp_path / "results.json"
    path.write_bytes(b"\xef\xbb\xbf" + PROMPTFOO.read_bytes())
    res = load_results(path)
    base = load_results(PROMPTFOO)
    assert res.outcomes("terse") == base.outcomes("terse")
    assert res.outcomes("polite") == base.outcomes("polite")


def test_a_promptfoo_config_is_named_as_such(tmp_path, capsys):
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text((DATA / "promptfooconfig.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    line = one_line_error(
        capsys, "report", path, "--format", "promptfoo", naming=[path, "config", "-o"]
    )
    assert "cut short" not in line


def test_promptfoo_csv_output_is_named_as_such(tmp_path, capsys):
    path = tmp_path / "results.csv"
    path.write_text(
        "message,[echo] terse,[echo] polite\nWhere is my order?,[PASS] Where,[FAIL] Where\n",
        encoding="utf-8",
    )
    line = one_line_error(
        capsys, "report", path, "--format", "promptfoo", naming=[path, "CSV", "-o results.json"]
    )
    assert "cut short" not in line


def test_promptfoo_jsonl_output_is_named_as_such(tmp_path, capsys):
    path = tmp_path / "results.jsonl"
    entries = _base()["results"]["results"]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    line = one_line_error(
        capsys, "report", path, "--format", "promptfoo", naming=[path, "JSON Lines", "-o"]
    )
    assert "cut short" not in line
    # told apart without --format too (it was "neither ... name its --format")
    assert one_line_error(capsys, "report", path, naming=[path, "JSON Lines", "-o"]) == line


def test_version_2_results_without_test_numbers_say_why(tmp_path, capsys):
    """Results of version 2 (an older promptfoo) carry no ``testIdx``: the line says
    which version the file is, not only that a field is missing."""
    doc = _base()
    doc["results"]["version"] = 2
    doc["results"]["table"] = {"head": {"prompts": [], "vars": ["message"]}, "body": []}
    for e in doc["results"]["results"]:
        del e["testIdx"], e["promptIdx"]
    path = _write(tmp_path, doc)
    one_line_error(
        capsys, "report", path, naming=[path, "results.results[0]", "testIdx", "version 2"]
    )


# --- fields that decide a sample ----------------------------------------------------


@pytest.mark.parametrize("value", ["2", 2.5, True, 7])
def test_a_failure_reason_that_is_not_promptfoos_is_one_line(tmp_path, capsys, value):
    """``failureReason`` tells an error (2) from a failed assertion (1); text or
    another number made an error a completed failure."""
    doc = _base()
    entry = doc["results"]["results"][3]
    entry.update(success=False, failureReason=value, error="provider timed out")
    path = _write(tmp_path, doc)
    one_line_error(
        capsys, "report", path, naming=[path, "results.results[3].failureReason", "line "]
    )


def test_a_long_description_is_clipped_to_a_name(tmp_path):
    """A test's description (a CSV column, a generated one) is the case's name: a
    paragraph of 5,000 characters made every table as wide as it."""
    doc = _base()
    long = "Ask about the refund policy " + "in great detail " * 300
    for e in doc["results"]["results"]:
        if e["testCase"]["description"] == "refund":
            e["testCase"]["description"] = long
    res = load_results(_write(tmp_path, doc))
    cases = list(res.outcomes("terse"))
    assert len(cases) == 3
    assert max(len(c) for c in cases) <= 80, cases
    assert any(c.startswith("Ask about the refund policy") for c in cases)
