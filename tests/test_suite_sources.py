"""Suites beyond the built-in checks: equals, json_schema, Python checks, names, tables."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from evalstats.cli import main
from evalstats.errors import CaseFileError, InvalidArgument
from evalstats.results._file import read_results
from evalstats.running._checks import CHECK_ERROR, equals, json_schema, run_check
from evalstats.running._suite import load_suite
from evalstats.running._variants import Variant

CHECKS_PY = """
def is_polite(answer):
    return None if "thank" in answer.lower() else "does not thank the customer"

def broken(answer):
    return 1 / 0
"""


def _suite(folder: Path, body: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(body, encoding="utf-8")
    return path


# --- equals and json_schema ----------------------------------------------------------


def test_equals_compares_the_whole_answer_whitespace_around_it_aside() -> None:
    assert run_check(equals("42"), "  42\n").status == "passed"
    assert run_check(equals("42"), "42.").reason == "is not '42'"
    assert run_check(equals("42"), "The answer is 42").status == "failed"
    assert run_check(equals("Yes", case_sensitive=False), "YES").status == "passed"
    assert run_check(equals("Yes"), "yes").status == "failed"
    assert run_check(equals("42"), "").reason.startswith("could not be inspected")
    with pytest.raises(InvalidArgument, match="equals"):
        equals("")


SCHEMA = {
    "type": "object",
    "required": ["order", "status"],
    "properties": {
        "order": {"type": "string", "pattern": "^A-[0-9]{4}$"},
        "status": {"enum": ["shipped", "pending"]},
        "items": {"type": "array", "items": {"type": "integer"}},
    },
}


@pytest.mark.parametrize(
    "answer",
    [
        '{"order": "A-1042", "status": "shipped"}',
        '{"order": "A-1042", "status": "lost"}',
        '{"order": "B-1", "status": "pending"}',
        '{"status": "pending"}',
        '{"order": "A-1042", "status": "shipped", "items": [1, "two"]}',
        "[1, 2]",
    ],
)
def test_json_schema_agrees_with_jsonschema_itself(answer: str) -> None:
    # the reference: jsonschema.validate on the parsed answer
    try:
        jsonschema.validate(json.loads(answer), SCHEMA)
        expected = "passed"
    except jsonschema.ValidationError:
        expected = "failed"
    verdict = run_check(json_schema(SCHEMA), answer)
    assert verdict.status == expected, verdict.reason
    if expected == "failed":
        assert verdict.reason.startswith("at $")


def test_json_schema_names_the_place_and_refuses_a_bad_schema() -> None:
    verdict = run_check(
        json_schema(SCHEMA), '{"order": "A-1042", "status": "shipped", "items": [1, "x"]}'
    )
    assert verdict.reason == "at $.items[1]: 'x' is not of type 'integer'"
    assert run_check(json_schema(SCHEMA), "not json").reason.startswith(
        "could not be inspected: not valid JSON"
    )
    with pytest.raises(InvalidArgument, match="the schema is not valid"):
        json_schema({"type": "nothing-like-a-type"})
    with pytest.raises(InvalidArgument, match="must be a JSON Schema object"):
        json_schema(["type", "object"])  # type: ignore[arg-type]


# --- Python checks, names ---------------------------------------------------------------


def test_python_checks_are_imported_from_the_suite_folder_and_named(tmp_path: Path) -> None:
    path = _suite(
        tmp_path / "s",
        "cases:\n"
        "  - id: thanks\n"
        "    prompt: Where is A-1042?\n"
        "    checks:\n"
        "      - python: checks:is_polite\n"
        "      - python: checks:broken\n"
        "      - equals: '42'\n"
        "        name: the answer\n"
        "      - json_schema: {type: object}\n"
        "        name: is an object\n",
        {"checks.py": CHECKS_PY},
    )
    suite = load_suite(path)
    checks = suite.cases[0].checks
    assert [c.name for c in checks] == [
        "checks:is_polite",
        "checks:broken",
        "the answer",
        "is an object",
    ]
    assert run_check(checks[0].check, "Thank you!").status == "passed"
    assert run_check(checks[0].check, "Hi").reason == "does not thank the customer"
    broken = run_check(checks[1].check, "Hi")
    assert broken.status == "failed"
    assert broken.reason == f"{CHECK_ERROR}: checks:broken: ZeroDivisionError: division by zero"
    # the Python file is part of the suite: changing it changes the suite's hash
    before = suite.sha256
    edited = CHECKS_PY.replace('"does not thank the customer"', '"no thanks"')
    (tmp_path / "s" / "checks.py").write_text(edited + "\n# edited\n")
    again = load_suite(path)
    assert again.sha256 != before
    # and the edited function is the one used
    assert run_check(again.cases[0].checks[0].check, "Hi").reason == "no thanks"


def test_names_are_what_the_results_and_reports_show(tmp_path: Path, capsys) -> None:
    path = _suite(
        tmp_path / "s",
        "cases:\n"
        "  - id: c\n"
        "    prompt: Where is A-1042?\n"
        "    checks:\n"
        "      - contains: A-1042\n"
        "        name: order number\n"
        "      - python: checks:is_polite\n"
        "        name: polite\n",
        {"checks.py": CHECKS_PY},
    )
    out = tmp_path / "r.jsonl"
    argv = ["run", str(path), "--variant", "v=standin:shop-v2", "--runs", "2", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    names = {c["check"] for s in read_results(out).samples for c in s["checks"]}
    assert names == {"order number", "polite"}
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "order number" in text and "polite" in text


@pytest.mark.parametrize(
    ("check", "files", "message"),
    [
        (
            "python: nowhere:fn",
            {},
            'case "c": checks[0]: check "python": cannot import "nowhere": no nowhere.py',
        ),
        (
            "python: checks:missing",
            {"checks.py": CHECKS_PY},
            'checks[0]: check "python": "checks" has no function "missing"',
        ),
        (
            "python: boom:fn",
            {"boom.py": "raise RuntimeError('no config')\n"},
            'checks[0]: check "python": importing "boom" (boom.py) raised RuntimeError: no config',
        ),
        (
            "python: boom:fn",
            {"boom.py": "def fn(:\n"},
            'importing "boom" (boom.py) raised SyntaxError',
        ),
        ("python: not a target", {}, 'check "python"'),
        ("python: checks:is_polite\n        name: ''", {"checks.py": CHECKS_PY}, "checks[0]: name"),
    ],
)
def test_a_python_check_that_cannot_be_imported_is_one_line_naming_file_case_field(
    tmp_path: Path, capsys, check: str, files: dict[str, str], message: str
) -> None:
    path = _suite(
        tmp_path / "s",
        f"cases:\n  - id: c\n    prompt: hi\n    checks:\n      - {check}\n",
        files,
    )
    with pytest.raises(CaseFileError) as error:
        load_suite(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)
    out = tmp_path / "r.jsonl"
    code = main(
        ["run", str(path), "--variant", "v=standin:shop-v2", "--runs", "1", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_two_checks_of_a_case_cannot_share_a_name(tmp_path: Path) -> None:
    path = _suite(
        tmp_path / "s",
        "cases:\n  - id: c\n    prompt: hi\n    checks:\n"
        "      - {contains: a, name: same}\n      - {contains: b, name: same}\n",
    )
    with pytest.raises(CaseFileError, match=r'checks\[1\]\.name: "same" is already the name'):
        load_suite(path)


def test_a_judged_check_takes_its_name_whole(tmp_path: Path) -> None:
    from evalstats.demo._judge import make_judge

    rubric = "The reply names the customer's order number and says when it will arrive."
    path = _suite(
        tmp_path / "s",
        f"cases:\n  - id: c\n    prompt: hi\n    checks:\n"
        f"      - judged_by: {rubric}\n        name: names the order and the day\n",
    )
    judge = make_judge(lambda a: True, sensitivity=1, specificity=1)
    (check,) = load_suite(path, judge=judge).cases[0].checks
    assert check.name == "names the order and the day"
    assert check.check.rubric == rubric


# --- cases from a table -----------------------------------------------------------------

TABLE_SUITE = """\
name: tickets
cases:
  from: {table}
  columns: {{id: ticket, prompt: message, tags: labels}}
  checks:
    - contains: "{{expected}}"
      name: the key fact
"""


def test_cases_come_from_a_csv_file_one_per_row(tmp_path: Path) -> None:
    csv_text = (
        "ticket,message,expected,labels,holdout\n"
        't1,Where is order A-1042?,A-1042,"orders, shipping",\n'
        "t2,I want a refund for the lamp,refund,refunds,yes\n"
        '"t3","A message, with a comma",lamp,,no\n'
    )
    path = _suite(tmp_path / "s", TABLE_SUITE.format(table="t.csv"), {"t.csv": csv_text})
    suite = load_suite(path)
    assert [c.id for c in suite.select()] == ["t1", "t3"]  # t2 is held out
    assert [c.id for c in suite.cases] == ["t1", "t2", "t3"]
    first = suite.cases[0]
    assert first.prompt == "Where is order A-1042?" and first.tags == ("orders", "shipping")
    assert first.checks[0].to_dict() == {"contains": "A-1042", "name": "the key fact"}
    assert suite.cases[2].prompt == "A message, with a comma"
    # the table is part of the suite: editing it changes the hash
    before = suite.sha256
    (tmp_path / "s" / "t.csv").write_text(csv_text.replace("A-1042,", "A-1043,"))
    assert load_suite(path).sha256 != before


def test_cases_come_from_a_csv_file_separated_by_semicolons(tmp_path: Path) -> None:
    # a spreadsheet's export in many languages; the commas in a message stay in it
    csv_text = (
        "ticket;message;expected;labels\n"
        "t1;Where is order A-1042, please?;A-1042;orders\n"
        "t2;Hi;hi;\n"
    )
    path = _suite(tmp_path / "s", TABLE_SUITE.format(table="t.csv"), {"t.csv": csv_text})
    suite = load_suite(path)
    assert [(c.id, c.prompt) for c in suite.cases] == [
        ("t1", "Where is order A-1042, please?"),
        ("t2", "Hi"),
    ]
    assert suite.cases[0].checks[0].to_dict() == {"contains": "A-1042", "name": "the key fact"}


def test_cases_come_from_a_jsonl_file_with_their_own_checks(tmp_path: Path) -> None:
    rows = [
        {"ticket": "j1", "message": "Hi", "expected": "hello", "checks": [{"equals": "Hello"}]},
        {"ticket": "j2", "message": "Order?", "expected": "A-1", "labels": ["orders"]},
    ]
    text = "\n".join(json.dumps(r) for r in rows) + "\n"
    path = _suite(tmp_path / "s", TABLE_SUITE.format(table="t.jsonl"), {"t.jsonl": text})
    suite = load_suite(path)
    assert [c.name for c in suite.cases[0].checks] == ["equals('Hello')", "the key fact"]
    assert suite.cases[1].tags == ("orders",)


@pytest.mark.parametrize(
    ("table", "columns", "message"),
    [
        (
            "ticket,message\nt1,hi\n",
            "{id: ticket, prompt: message}",
            't.csv: row 2: cases.checks[0]: "{expected}" names no column',
        ),
        (
            "ticket,message,expected\nt1,hi,\n",
            "{id: ticket, prompt: message}",
            'row 2: cases.checks[0]: the column "expected" is empty',
        ),
        (
            "ticket,message,expected\nt1,hi,x\n",
            "{id: tiket, prompt: message}",
            'cases.columns.id: "tiket" is not a column of t.csv (did you mean "ticket"?)',
        ),
        (
            "ticket,message,expected\nt1,hi,x\n",
            "{idd: ticket}",
            'cases.columns: unknown case field "idd"',
        ),
        (
            "ticket,message,expected,holdout\nt1,hi,x,maybe\n",
            "{id: ticket, prompt: message}",
            'row 2: holdout: must be true or false, not "maybe"',
        ),
        ("ticket,message,expected\n,hi,x\n", "{id: ticket, prompt: message}", "id"),
    ],
)
def test_a_bad_table_is_one_line_naming_the_file_row_and_field(
    tmp_path: Path, table: str, columns: str, message: str
) -> None:
    body = TABLE_SUITE.format(table="t.csv").replace(
        "{id: ticket, prompt: message, tags: labels}", columns
    )
    path = _suite(tmp_path / "s", body, {"t.csv": table})
    with pytest.raises(CaseFileError) as error:
        load_suite(path)
    assert message in str(error.value), str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_table_is_refused(tmp_path: Path) -> None:
    path = _suite(tmp_path / "s", TABLE_SUITE.format(table="none.csv"))
    with pytest.raises(CaseFileError, match="none.csv: cannot be read"):
        load_suite(path)


# --- templates ----------------------------------------------------------------------------


def test_a_jinja_placeholder_in_a_template_is_refused_with_the_fix() -> None:
    with pytest.raises(InvalidArgument) as error:
        Variant("v", lambda p: p, template="Customer says: {{ prompt }}")
    text = str(error.value)
    assert "Jinja-style '{{ prompt }}'" in text and "'Customer says: {prompt}'" in text
    assert Variant("v", lambda p: p, template="Customer says: {prompt}").template
