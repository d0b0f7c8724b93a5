"""Cases and suites: the model, loading, validation messages and round trips."""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import evalstats
from evalstats._validate import name_key, name_problem
from evalstats.errors import CaseFileError, InvalidArgument
from evalstats.running import _run_cases as runner
from evalstats.running._checks import Verdict, contains, run_check, word_count
from evalstats.running._suite import (
    Case,
    CaseCheck,
    Suite,
    case_from_dict,
    find_suite,
    load_suite,
    shipped_suites,
    suite_from_cases,
    suite_from_dict,
)

SOURCE_CASES = Path(evalstats.__file__).parent.parent / "cases"
GOOD = {"id": "c1", "prompt": "p", "checks": [{"contains": "x"}]}


def write(tmp_path: Path, document: object, suffix: str) -> Path:
    """Write ``document`` as JSON or YAML (or write a string as it is)."""
    path = tmp_path / f"suite{suffix}"
    if isinstance(document, str):
        path.write_text(document, encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- the shipped suites ------------------------------------------------------


def test_shop_suite_loads_by_path_and_by_name() -> None:
    path = SOURCE_CASES / "shop.json"
    by_path = load_suite(path)
    by_name = load_suite("shop")
    assert find_suite("shop").name == "shop.json"
    assert by_path.name == by_name.name == "shop"
    assert by_path.version == 1
    assert by_path.description.startswith("Four customer messages")
    assert by_path.cases == by_name.cases
    assert [c.id for c in by_path.cases] == [
        "order status",
        "broken lamp refund",
        "discount trick",
        "thank-you",
    ]
    # The suite keeps the path as the user gave it.
    assert by_path.path == str(path)
    assert by_name.path == "shop"
    # sha256 of the file's bytes, computed here with hashlib directly.
    assert by_path.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert by_name.sha256 == by_path.sha256
    assert by_path.to_dict() == {
        "name": "shop",
        "version": 1,
        "path": str(path),
        "sha256": by_path.sha256,
    }
    # The same cases the first runner's loader gives.
    assert by_path.cases == runner.load_shop_cases()
    first = by_path.cases[0]
    assert [(c.name, c.axis) for c in first.checks] == [
        ("contains('A-1042')", "content"),
        ("has_terms('shipped')", "content"),
        ("word_count(3, 25)", "format"),
    ]


def test_example_yaml_suite() -> None:
    suite = load_suite(SOURCE_CASES / "example.yaml")
    assert suite.name == "example"
    assert [c.id for c in suite.select()] == ["order status", "discount trick"]
    assert [c.id for c in suite.select(include_holdout=True)] == [
        "order status",
        "discount trick",
        "thank-you",
    ]
    conversation = suite.cases[1]
    assert conversation.prompt is None
    assert [m["role"] for m in conversation.messages or ()] == ["system", "user"]
    assert conversation.tags == ("safety", "prompt-injection")
    assert "example" in shipped_suites() and "shop" in shipped_suites()


def test_find_suite_unknown_name_suggests_the_closest(tmp_path) -> None:
    with pytest.raises(CaseFileError) as info:
        find_suite("shopp")
    assert 'shopp: cannot be read: no such file (did you mean "shop"?)' in str(info.value)
    with pytest.raises(CaseFileError, match="is not a file"):
        find_suite(str(tmp_path))
    local = write(tmp_path, {"cases": [GOOD]}, ".json")
    assert find_suite(str(local)) == local
    assert find_suite(local) == local


def test_runner_case_is_the_cases_case() -> None:
    assert runner.Case is Case


# --- validation messages name the file, the case and the field --------------------

MESSAGE = {"role": "user", "content": "hi"}

# (document, expected text after "<file>: "). Each is checked written as JSON and
# as YAML.
INVALID = [
    (
        {
            "cases": [
                {
                    "id": "refund request",
                    "prompt": "p",
                    "checks": [{"contains": "x"}, {"contain": "y"}],
                }
            ]
        },
        'case "refund request": checks[1]: unknown check "contain" (did you mean "contains"?)',
    ),
    (
        {"cases": [{**GOOD, "promt": "p"}]},
        'case "c1": unknown field "promt" (did you mean "prompt"?)',
    ),
    ({"case": [GOOD]}, 'unknown top-level field "case" (did you mean "cases"?)'),
    (
        {"cases": [{**GOOD, "messages": [MESSAGE]}]},
        'case "c1": prompt: give either "prompt" or "messages", not both',
    ),
    ({"cases": [{"id": "c1", "checks": [{"contains": "x"}]}]}, 'case "c1": prompt: missing'),
    (
        {"cases": [{**GOOD, "prompt": 3}]},
        'case "c1": prompt: must be a non-empty string, not a number',
    ),
    (
        {"cases": [{**GOOD, "prompt": "  "}]},
        'case "c1": prompt: must be a non-empty string, not "  "',
    ),
    ({"cases": [{**GOOD, "checks": []}]}, 'case "c1": checks: has no checks'),
    ({"cases": [{"id": "c1", "prompt": "p"}]}, 'case "c1": checks: missing'),
    (
        {"cases": [{**GOOD, "checks": "contains"}]},
        'case "c1": checks: must be a list of checks, not a string',
    ),
    (
        {"cases": [{**GOOD, "checks": ["contains"]}]},
        "case \"c1\": checks[0]: 'contains' must be a check spec",
    ),
    ({"cases": [{**GOOD, "checks": [{}]}]}, 'case "c1": checks[0]: names no check'),
    ({"cases": [{**GOOD, "checks": [{"axis": "a"}]}]}, 'case "c1": checks[0]: names no check'),
    (
        {"cases": [{**GOOD, "checks": [{"contains": "x", "avoids": "y"}]}]},
        'case "c1": checks[0]: names several checks ("contains", "avoids")',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"word_count": [9, 1]}]}]},
        'case "c1": checks[0]: word_count(): low=9 is larger than high=1',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"contains": {"txt": "x"}}]}]},
        "case \"c1\": checks[0]: check 'contains' cannot take",
    ),
    (
        {"cases": [{**GOOD, "checks": [{"contains": "x", "axis": 3}]}]},
        'case "c1": checks[0].axis: must be a non-empty string, not a number',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"contains": "x", "axis": ""}]}]},
        'case "c1": checks[0].axis: must be a non-empty string, not ""',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"judged_by": {"rubric": "polite"}}]}]},
        'case "c1": checks[0]: check "judged_by" needs a judge, which a case file cannot hold',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"judged_by": {"rubrik": "polite"}}]}]},
        'case "c1": checks[0]: check "judged_by": unknown field "rubrik" (did you mean "rubric"?)',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"judged_by": {"name": "x"}}]}]},
        'case "c1": checks[0]: check "judged_by" needs a "rubric"',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"judged_by": 3}]}]},
        'case "c1": checks[0]: check "judged_by" takes a rubric',
    ),
    (
        {"cases": [{**GOOD, "checks": [{"python": "mine"}]}]},
        'case "c1": checks[0]: check "python" names a function in a .py file beside the suite',
    ),
    (
        {"cases": [{"id": "c1", "messages": "hi", "checks": [{"contains": "x"}]}]},
        'case "c1": messages: must be a list',
    ),
    (
        {"cases": [{"id": "c1", "messages": [], "checks": [{"contains": "x"}]}]},
        'case "c1": messages: is empty',
    ),
    (
        {"cases": [{"id": "c1", "messages": ["hi"], "checks": [{"contains": "x"}]}]},
        'case "c1": messages[0]: must be a mapping',
    ),
    (
        {
            "cases": [
                {
                    "id": "c1",
                    "messages": [{"role": "usr", "content": "hi"}],
                    "checks": [{"contains": "x"}],
                }
            ]
        },
        'case "c1": messages[0].role: unknown role "usr" (did you mean "user"?)',
    ),
    (
        {"cases": [{"id": "c1", "messages": [{"content": "hi"}], "checks": [{"contains": "x"}]}]},
        'case "c1": messages[0].role: missing',
    ),
    (
        {
            "cases": [
                {
                    "id": "c1",
                    "messages": [{"role": "user", "text": "hi"}],
                    "checks": [{"contains": "x"}],
                }
            ]
        },
        'case "c1": messages[0]: unknown field "text"',
    ),
    (
        {
            "cases": [
                {
                    "id": "c1",
                    "messages": [{"role": "user", "content": 5}],
                    "checks": [{"contains": "x"}],
                }
            ]
        },
        'case "c1": messages[0].content: must be a non-empty string, not a number',
    ),
    (
        {
            "cases": [
                {
                    "id": "c1",
                    "messages": [MESSAGE, {"role": "assistant", "content": "ok"}],
                    "checks": [{"contains": "x"}],
                }
            ]
        },
        'case "c1": messages[1].role: the last message must be from "user"',
    ),
    (
        {
            "cases": [
                {
                    "id": "c1",
                    "messages": [MESSAGE, {"role": "system", "content": "s"}, MESSAGE],
                    "checks": [{"contains": "x"}],
                }
            ]
        },
        'case "c1": messages[1].role: "system" may only be the first message',
    ),
    (
        {"cases": [{**GOOD, "fixtures": ["a.txt"]}]},
        'case "c1": fixtures: must be a mapping of relative path to text, not a list',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"/etc/passwd": "x"}}]},
        'case "c1": fixtures["/etc/passwd"]: the path must be relative',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"C:\\notes.txt": "x"}}]},
        'case "c1": fixtures["C:\\\\notes.txt"]: the path must be relative',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"\\\\server\\share\\a": "x"}}]},
        'case "c1": fixtures["\\\\\\\\server\\\\share\\\\a"]: the path must be relative',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"../secret.txt": "x"}}]},
        'case "c1": fixtures["../secret.txt"]: the path must stay inside the workspace',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"notes/../../x": "x"}}]},
        'case "c1": fixtures["notes/../../x"]: the path must stay inside the workspace',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"notes\\..\\x": "x"}}]},
        'case "c1": fixtures["notes\\\\..\\\\x"]: the path must stay inside the workspace',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"": "x"}}]},
        'case "c1": fixtures[""]: a fixture path must not be empty',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"./": "x"}}]},
        'case "c1": fixtures["./"]: the path names no file',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"a.txt": 3}}]},
        'case "c1": fixtures["a.txt"]: the file\'s content must be text (a string), not a number',
    ),
    (
        {"cases": [{**GOOD, "fixtures": {"a.txt": ["x"]}}]},
        'case "c1": fixtures["a.txt"]: the file\'s content must be text (a string), not a list',
    ),
    (
        {"cases": [{**GOOD, "required_actions": {"tool": "x"}}]},
        'case "c1": required_actions: must be a list of mappings, not a mapping',
    ),
    (
        {"cases": [{**GOOD, "required_actions": ["x"]}]},
        'case "c1": required_actions[0]: must be a mapping, not a string',
    ),
    ({"cases": [{**GOOD, "review": ["x"]}]}, 'case "c1": review: must be a string, not a list'),
    (
        {"cases": [{**GOOD, "tags": "x"}]},
        'case "c1": tags: must be a list of strings, not a string',
    ),
    (
        {"cases": [{**GOOD, "tags": ["a", 2]}]},
        'case "c1": tags[1]: must be a non-empty string, not a number',
    ),
    (
        {"cases": [{**GOOD, "holdout": "yes"}]},
        'case "c1": holdout: must be true or false, not "yes"',
    ),
    (
        {"cases": [{**GOOD, "holdout": 1}]},
        'case "c1": holdout: must be true or false, not a number',
    ),
    ({"cases": [{**GOOD, "holdout": None}]}, 'case "c1": holdout: must be true or false, not null'),
    (
        {"cases": [GOOD, {**GOOD, "prompt": "q"}]},
        'case "c1": id: duplicate: cases[0] and cases[1] both use it',
    ),
    ({"cases": [GOOD, {"prompt": "p", "checks": [{"contains": "x"}]}]}, "cases[1]: id: missing"),
    (
        {"cases": [GOOD, {**GOOD, "id": 7}]},
        "cases[1]: id: must be a non-empty string, not a number",
    ),
    ({"cases": [{**GOOD, "id": " "}]}, 'cases[0]: id: must be a non-empty string, not " "'),
    ({"cases": [{"promt": "p"}]}, 'cases[0]: unknown field "promt" (did you mean "prompt"?)'),
    ({"cases": [GOOD, 5]}, "cases[1]: must be a mapping"),
    ({"cases": []}, "cases: is empty"),
    # a mapping of cases is read as a table of cases (cases: {from: FILE, ...})
    ({"cases": {"c1": GOOD}}, 'cases: unknown field "c1"; cases from a table take from'),
    ({"name": "x"}, "cases: missing"),
    ({"name": 3, "cases": [GOOD]}, "name: must be a non-empty string, not a number"),
    ({"name": "", "cases": [GOOD]}, 'name: must be a non-empty string, not ""'),
    (
        {"version": True, "cases": [GOOD]},
        "version: must be a string, a whole number or null, not true",
    ),
    (
        {"version": 1.5, "cases": [GOOD]},
        "version: must be a string, a whole number or null, not a number",
    ),
    ({"description": 3, "cases": [GOOD]}, "description: must be a string, not a number"),
    ([GOOD], 'the top level must be a mapping with a "cases" list, not a list'),
]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize(("document", "message"), INVALID)
def test_invalid_suites_name_the_file_the_case_and_the_field(
    tmp_path, suffix, document, message
) -> None:
    path = write(tmp_path, document, suffix)
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    assert message in text, text
    assert "\n" not in text


def test_unknown_check_lists_the_known_ones(tmp_path) -> None:
    path = write(tmp_path, {"cases": [{**GOOD, "checks": [{"frobnicate": 1}]}]}, ".yaml")
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    text = str(info.value)
    assert 'checks[0]: unknown check "frobnicate"; choose one of avoids, contains' in text
    assert "judged_by" in text


def test_messages_in_the_documented_form(tmp_path) -> None:
    # The exact form the documentation promises, with the path relative as given.
    document = {
        "name": "shop",
        "cases": [
            {
                "id": "refund request",
                "prompt": "The lamp arrived broken.",
                "checks": [{"contains": "sorry"}, {"contain": "refund"}],
            }
        ],
    }
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "shop.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        with pytest.raises(CaseFileError) as info:
            load_suite("cases/shop.json")
    assert str(info.value).startswith(
        'cases/shop.json: case "refund request": checks[1]: '
        'unknown check "contain" (did you mean "contains"?)'
    )


# --- syntax errors: line and column ------------------------------------------------


def test_json_syntax_error_gives_line_and_column(tmp_path) -> None:
    text = '{\n  "cases": [\n    {"id": "a",, "prompt": "p"}\n  ]\n}\n'
    path = write(tmp_path, text, ".json")
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    # Line 3 is '    {"id": "a",, ...': the second comma is its 16th character.
    assert str(info.value) == (
        f"{path}: not valid JSON: Expecting property name enclosed in double quotes "
        "at line 3 column 16"
    )


def test_yaml_syntax_error_gives_line_and_column(tmp_path) -> None:
    text = "name: t\ncases:\n  - id: a\n    prompt: hi\n     checks: [x]\n"
    path = write(tmp_path, text, ".yaml")
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    # Line 5 is '     checks: [x]': five spaces and "checks" put the colon at column 12.
    # (libyaml says "... not allowed in this context", PyYAML's own parser "... here".)
    message = str(info.value)
    assert message.startswith(f"{path}: not valid YAML: mapping values are not allowed ")
    assert message.endswith(" at line 5 column 12")


def test_yaml_unclosed_bracket_gives_line_and_column(tmp_path) -> None:
    text = "cases:\n  - id: a\n    checks: [{contains: x}\n"
    path = write(tmp_path, text, ".yml")
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not valid YAML: ")
    # PyYAML reports the end of the stream: line 4, column 1 (after the last newline).
    assert message.endswith("at line 4 column 1")


@pytest.mark.parametrize(
    ("suffix", "text", "message"),
    [
        (
            ".json",
            '{"cases": [\n  {"id": "a", "prompt": "p", "prompt": "q"}]}',
            # The object's "{" is the third character of line 2.
            'not valid JSON: duplicate key "prompt" in the object at line 2 column 3 (the '
            "second would silently replace the first)",
        ),
        (
            ".yaml",
            "cases:\n  - id: a\n    prompt: p\n    prompt: q\n",
            'not valid YAML: found duplicate key "prompt" (the second would silently replace '
            "the first) at line 4 column 5",
        ),
        (".json", '{"cases": NaN}', "not valid JSON: NaN is not a JSON number"),
    ],
)
def test_duplicate_keys_and_nan_are_refused(tmp_path, suffix, text, message) -> None:
    path = write(tmp_path, text, suffix)
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    assert str(info.value) == f"{path}: {message}"


def test_non_utf8_bytes_give_line_and_column(tmp_path) -> None:
    path = tmp_path / "suite.json"
    path.write_bytes(b'{"cases": [\n  {"id": "caf\xe9"}]}')
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    # The byte 0xe9 is the 14th of line 2 ('  {"id": "caf' has 13 characters).
    assert str(info.value) == f"{path}: not UTF-8 text: byte 0xe9 at line 2 column 14"


def test_a_byte_order_mark_is_accepted(tmp_path) -> None:
    path = tmp_path / "suite.json"
    data = b"\xef\xbb\xbf" + json.dumps({"cases": [GOOD]}).encode()
    path.write_bytes(data)
    suite = load_suite(path)
    assert suite.sha256 == hashlib.sha256(data).hexdigest()


def test_file_errors(tmp_path) -> None:
    other = tmp_path / "suite.txt"
    other.write_text("{}", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"suite\.txt: a suite file must end in \.json"):
        load_suite(other)
    with pytest.raises(CaseFileError, match=r"nope\.yaml: cannot be read"):
        load_suite(tmp_path / "nope.yaml")
    with pytest.raises(InvalidArgument, match="must be a path"):
        load_suite(3)  # type: ignore[arg-type]


# --- hashes, names, holdout ----------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_sha256_is_of_the_file_bytes(tmp_path, suffix) -> None:
    path = write(tmp_path, {"name": "s", "cases": [GOOD]}, suffix)
    before = load_suite(path).sha256
    assert before == hashlib.sha256(path.read_bytes()).hexdigest()
    # One more byte (a trailing newline) is another file, though the same suite.
    path.write_bytes(path.read_bytes() + b"\n")
    after = load_suite(path)
    assert after.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() != before


def test_the_name_defaults_to_the_file_stem(tmp_path) -> None:
    path = write(tmp_path, {"cases": [GOOD]}, ".yaml")
    suite = load_suite(path)
    assert suite.name == "suite" and suite.version is None and suite.description == ""


def test_holdout_cases_are_selected_only_when_asked(tmp_path) -> None:
    document = {
        "cases": [
            {**GOOD, "id": "a"},
            {**GOOD, "id": "b", "holdout": True},
            {**GOOD, "id": "c", "holdout": False},
        ]
    }
    suite = load_suite(write(tmp_path, document, ".yaml"))
    assert [c.id for c in suite.select()] == ["a", "c"]
    assert [c.id for c in suite.select(include_holdout=True)] == ["a", "b", "c"]
    assert [c.id for c in runner.load_cases(write(tmp_path, document, ".json"))] == ["a", "c"]
    with pytest.raises(InvalidArgument, match="include_holdout='yes' must be True or False"):
        suite.select(include_holdout="yes")  # type: ignore[arg-type]


def test_suite_case_lookup() -> None:
    suite = load_suite("shop")
    assert suite.case("thank-you").prompt == "Thanks, that's all I needed!"
    with pytest.raises(InvalidArgument, match="did you mean 'thank-you'"):
        suite.case("thank you")


# --- judged_by ---------------------------------------------------------------------


def test_judged_by_specs_use_the_given_judge(tmp_path) -> None:
    prompts: list[str] = []

    def judge(prompt: str) -> str:
        prompts.append(prompt)
        return "It is polite.\nPASS" if "please" in prompt else "Rude.\nFAIL"

    document = {
        "cases": [
            {
                **GOOD,
                "checks": [
                    {"judged_by": {"rubric": "The reply is polite."}, "axis": "tone"},
                    {"judged_by": "Short rubric.", "axis": "tone"},
                    {"judged_by": {"rubric": "Named.", "name": "politeness"}},
                ],
            }
        ]
    }
    suite = load_suite(write(tmp_path, document, ".yaml"), judge=judge)
    checks = suite.cases[0].checks
    assert [c.axis for c in checks] == ["tone", "tone", None]
    assert checks[2].name == "politeness"
    assert run_check(checks[0].check, "Yes please.") == Verdict.passed()
    assert run_check(checks[0].check, "No.").status == "failed"
    assert "The reply is polite." in prompts[0]
    assert checks[0].to_dict() == {"judged_by": {"rubric": "The reply is polite."}, "axis": "tone"}
    # The round trip needs the judge again, and gives an equal case.
    assert case_from_dict(suite.cases[0].to_dict(), judge=judge) == suite.cases[0]
    with pytest.raises(CaseFileError, match="needs a judge"):
        case_from_dict(suite.cases[0].to_dict())


# --- the Python model ------------------------------------------------------------------


def test_case_accepts_checks_in_every_form() -> None:
    mine = contains("x")

    def polite(answer: str) -> str | None:
        return None

    case = Case(
        "c",
        "p",
        (
            mine,
            (word_count(1, 5), "format"),
            {"avoids": "SAVE100", "axis": "safety"},
            CaseCheck(polite, "tone"),
        ),
    )
    assert all(isinstance(c, CaseCheck) for c in case.checks)
    assert [(c.name, c.axis) for c in case.checks] == [
        ("contains('x')", None),
        ("word_count(1, 5)", "format"),
        ("avoids('SAVE100')", "safety"),
        ("polite", "tone"),
    ]
    # Unpacks as the (check, axis) pairs of the first runner.
    check, axis = case.checks[1]
    assert check.name == "word_count(1, 5)" and axis == "format"
    assert case.checks[0][0] is mine and case.checks[0][1] is None
    assert case.to_dict()["checks"] == [
        {"python": "contains('x')"},
        {"python": "word_count(1, 5)", "axis": "format"},
        {"avoids": "SAVE100", "axis": "safety"},
        {"python": "polite", "axis": "tone"},
    ]
    # a Python callable's name is no "module:function" a file could import
    with pytest.raises(CaseFileError, match='check "python" names a function in a .py file'):
        case_from_dict(case.to_dict())


def test_case_validation_raises_invalid_argument_with_the_field() -> None:
    ok = (contains("x"),)
    cases = [
        (lambda: Case("", "p", ok), "Case: id='' must be a non-empty string"),
        (lambda: Case("c", "p", ()), 'Case "c": checks: has no checks'),
        (lambda: Case("c", None, ok), 'Case "c": prompt: missing'),
        (lambda: Case("c", "p", ok, messages=[MESSAGE]), 'Case "c": prompt: give either'),
        (lambda: Case("c", "p", (("x", None),)), "Case \"c\": checks[0]: ('x', None) must be"),
        (lambda: Case("c", "p", ((contains("x"), 3),)), 'Case "c": checks[0]: axis=3 must be'),
        (lambda: Case("c", "p", ok, tags="a"), 'Case "c": tags: must be a list of strings'),
        (lambda: Case("c", "p", ok, holdout="no"), 'Case "c": holdout: must be true or false'),
        (
            lambda: Case("c", "p", ok, fixtures={"/abs": "x"}),
            'Case "c": fixtures["/abs"]: the path must be relative',
        ),
        (
            lambda: Case("c", messages=[{"role": "assistant", "content": "a"}], checks=ok),
            'Case "c": messages[0].role: the last message must be from "user"',
        ),
    ]
    for make, message in cases:
        with pytest.raises(InvalidArgument) as info:
            make()
        assert str(info.value).startswith(message), str(info.value)


def test_case_is_frozen_and_its_mappings_read_only() -> None:
    case = Case(
        "c",
        messages=[{"role": "system", "content": "s"}, MESSAGE],
        checks=[{"contains": "x"}],
        fixtures={"notes/a.txt": "hello"},
        required_actions=[{"tool": "write_file", "path": "a.txt"}],
    )
    with pytest.raises(AttributeError):
        case.id = "d"  # type: ignore[misc]
    with pytest.raises(TypeError, match="read-only|cannot be changed"):
        case.fixtures["b.txt"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        case.messages[0]["content"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        case.checks[0].spec["contains"] = "y"  # type: ignore[index]
    # They serialise as plain JSON, pickle and copy, and the case hashes.
    assert json.loads(json.dumps(case.to_dict()))["fixtures"] == {"notes/a.txt": "hello"}
    assert json.dumps(case.messages[1]) == '{"role": "user", "content": "hi"}'
    assert pickle.loads(pickle.dumps(case.fixtures)) == {"notes/a.txt": "hello"}
    assert copy.deepcopy(case.required_actions) == ({"tool": "write_file", "path": "a.txt"},)
    assert hash(case) == hash(case_from_dict(case.to_dict()))
    # Changing what was passed in does not change the case.
    source = {"a.txt": "one"}
    other = Case("d", "p", [{"contains": "x"}], fixtures=source)
    source["a.txt"] = "two"
    assert other.fixtures == {"a.txt": "one"}


def test_case_check_equality() -> None:
    a = CaseCheck.from_spec({"contains": "x", "axis": "content"})
    b = CaseCheck.from_spec({"contains": "x", "axis": "content"})
    assert a == b and hash(a) == hash(b) and a.check is not b.check
    assert a != CaseCheck.from_spec({"contains": "x"})
    assert a != CaseCheck.from_spec({"contains": "y", "axis": "content"})
    fn = contains("x")
    assert CaseCheck(fn) == CaseCheck(fn) != CaseCheck(contains("x"))
    assert CaseCheck(fn) != CaseCheck(fn, spec={"contains": "x"})
    with pytest.raises(InvalidArgument, match="must be callable"):
        CaseCheck("x")  # type: ignore[arg-type]
    assert CaseCheck(fn, spec={"contains": "x", "axis": "b"}).axis == "b"
    with pytest.raises(InvalidArgument, match="has axis='b' but the check has axis='a'"):
        CaseCheck(fn, "a", {"contains": "x", "axis": "b"})


def test_suite_from_cases_hashes_the_canonical_json_of_its_cases() -> None:
    cases = [Case("a", "p", ({"contains": "x"},)), Case("b", "q", ((contains("y"), "c"),))]
    suite = suite_from_cases(cases)
    assert suite.name == "python suite" and suite.path is None and suite.version is None
    # The canonical JSON written out here by hand: sorted keys, no spaces.
    expected = (
        '[{"checks":[{"contains":"x"}],"fixtures":{},"holdout":false,"id":"a","prompt":"p",'
        '"required_actions":[],"review":"","tags":[]},'
        '{"checks":[{"axis":"c","python":"contains(\'y\')"}],"fixtures":{},"holdout":false,'
        '"id":"b","prompt":"q","required_actions":[],"review":"","tags":[]}]'
    )
    assert suite.sha256 == hashlib.sha256(expected.encode("utf-8")).hexdigest()
    assert suite_from_cases(runner.load_shop_cases(), name="shop", version=1).name == "shop"
    with pytest.raises(InvalidArgument, match='cases\\[1\\] repeats the id "a" of cases\\[0\\]'):
        suite_from_cases([cases[0], cases[0]])
    with pytest.raises(InvalidArgument, match="cases\\[0\\]=3 must be a Case"):
        suite_from_cases([3])  # type: ignore[list-item]
    with pytest.raises(InvalidArgument, match="cases is empty"):
        suite_from_cases([])
    with pytest.raises(InvalidArgument, match="name='' must be a non-empty string"):
        Suite("", None, tuple(cases))


def test_run_cases_refuses_a_conversation() -> None:
    case = Case("talk", messages=[MESSAGE], checks=[{"contains": "x"}])
    with pytest.raises(InvalidArgument, match="is a conversation"):
        runner.run_cases(lambda p: p, [case], runs=1)


# --- round trips (property tests) ----------------------------------------------------------

_text = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
# Ids and tags are names: no controls, NFC, and none that looks like another (see
# evalstats._validate.name_problem and name_key; tests/test_hostile_inputs.py has the rest).
_names = _text.filter(lambda s: name_problem(s) is None and name_key(s) == s)
_words = st.lists(_text, min_size=1, max_size=3)
_specs = st.one_of(
    _text.map(lambda t: {"contains": t}),
    st.builds(lambda t, cs: {"contains": {"text": t, "case_sensitive": cs}}, _text, st.booleans()),
    _words.map(lambda ws: {"contains_any": ws}),
    _words.map(lambda ws: {"avoids": ws}),
    _words.map(lambda ws: {"has_terms": ws}),
    st.tuples(st.integers(0, 50), st.integers(0, 50)).map(
        lambda lh: {"word_count": [min(lh), max(lh)]}
    ),
    st.sampled_from(["A-\\d+", "^ok", "[a-z]{3}"]).map(lambda p: {"matches": p}),
    st.lists(st.sampled_from(["id", "order.id", "items"]), min_size=1, max_size=2).map(
        lambda ks: {"is_json_with": ks}
    ),
)
_check_dicts = st.builds(
    lambda spec, axis: spec if axis is None else {**spec, "axis": axis},
    _specs,
    st.none() | st.sampled_from(["content", "format", "safety", "tone"]),
)
_segment = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)
_fixture_paths = st.lists(_segment, min_size=1, max_size=3).map("/".join)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def _messages(draw: st.DrawFn) -> list[dict[str, str]]:
    turns = draw(st.integers(0, 2))
    out = [{"role": "system", "content": draw(_text)}] if draw(st.booleans()) else []
    for _ in range(turns):
        out.append({"role": "user", "content": draw(_text)})
        out.append({"role": "assistant", "content": draw(_text)})
    out.append({"role": "user", "content": draw(_text)})
    return out


@st.composite
def case_dicts(draw: st.DrawFn) -> dict[str, object]:
    """A valid case in the suite-file format, optional fields sometimes left out."""
    data: dict[str, object] = {"id": draw(_names)}
    if draw(st.booleans()):
        data["prompt"] = draw(_text)
    else:
        data["messages"] = draw(_messages())
    data["checks"] = draw(st.lists(_check_dicts, min_size=1, max_size=4))
    optional = {
        "fixtures": st.dictionaries(_fixture_paths, st.text(max_size=20), max_size=3),
        # Valid specs of evalstats.running._traces.required_action_from_spec (checked at load).
        "required_actions": st.lists(
            st.fixed_dictionaries(
                {"tool": _text},
                optional={"path": _text, "error": st.booleans(), "or_no_call": st.booleans()},
            ),
            max_size=2,
        ),
        "review": st.text(max_size=20),
        "tags": st.lists(_names, max_size=3),
        "holdout": st.booleans(),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            data[key] = draw(strategy)
    return data


DEFAULTS = {"fixtures": {}, "required_actions": [], "review": "", "tags": [], "holdout": False}


@given(case_dicts())
def test_to_dict_round_trips(data) -> None:
    case = case_from_dict(data)
    out = case.to_dict()
    assert out == {**DEFAULTS, **data}
    assert json.loads(json.dumps(out)) == out
    again = case_from_dict(out)
    assert again == case and hash(again) == hash(case)
    assert again.to_dict() == out


@given(st.lists(case_dicts(), min_size=1, max_size=4, unique_by=lambda d: d["id"]))
def test_json_and_yaml_files_give_the_same_suite(tmp_path_factory, cases) -> None:
    directory = tmp_path_factory.mktemp("suites")
    document = {"name": "s", "version": "2", "cases": cases}
    from_json = load_suite(write(directory, document, ".json"))
    from_yaml = load_suite(write(directory, document, ".yaml"))
    from_dict = suite_from_dict(document)
    assert from_json.cases == from_yaml.cases == from_dict.cases
    assert from_json.version == from_yaml.version == "2"
    # A Python suite of the same cases hashes the canonical JSON of the cases.
    expected = canonical([{**DEFAULTS, **c} for c in cases])
    assert from_dict.sha256 == hashlib.sha256(expected.encode("utf-8")).hexdigest()
    assert suite_from_cases(from_json.cases).sha256 == from_dict.sha256


@given(case_dicts(), st.sampled_from(sorted(DEFAULTS) + ["id", "prompt", "checks"]))
def test_a_misspelt_field_is_refused_with_a_suggestion(data, key) -> None:
    typo = key[:-1]  # "prompt" -> "promp"
    bad = {**data, typo: "x"}
    with pytest.raises(CaseFileError) as info:
        case_from_dict(bad)
    assert f'unknown field "{typo}" (did you mean "{key}"?)' in str(info.value)


def test_yaml_numbers_and_booleans_where_text_was_meant_get_a_hint(tmp_path) -> None:
    text = "cases:\n  - id: 3\n    prompt: p\n    checks: [{contains: x}]\n"
    with pytest.raises(CaseFileError) as info:
        load_suite(write(tmp_path, text, ".yaml"))
    assert str(info.value).endswith(
        "cases[0]: id: must be a non-empty string, not a number; put it in quotes to make it text"
    )
    text = "cases:\n  - id: a\n    prompt: p\n    checks: [{contains: x}]\n    tags: [no]\n"
    with pytest.raises(CaseFileError) as info:
        load_suite(write(tmp_path, text, ".yaml"))
    assert str(info.value).endswith(
        'case "a": tags[0]: must be a non-empty string, not false (a boolean); '
        "put it in quotes to make it text"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'the top level must be a mapping with a "cases" list, not null'),
        ("# only a comment\n", 'the top level must be a mapping with a "cases" list, not null'),
        ("- a\n- b\n", 'the top level must be a mapping with a "cases" list, not a list'),
        # Two documents in one file: the "---" of the second is line 2, column 1.
        (
            "cases: []\n---\ncases: []\n",
            "not valid YAML: expected a single document in the stream but found another "
            "document at line 2 column 1",
        ),
    ],
)
def test_yaml_documents_that_are_not_one_mapping(tmp_path, text, message) -> None:
    path = write(tmp_path, text, ".yaml")
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    assert str(info.value).startswith(f"{path}: {message}")


@given(_names, st.sampled_from(["prompt", "tags", "holdout", "fixtures", "checks"]))
def test_errors_name_any_case_id_on_one_line(case_id, field) -> None:
    bad_values = {"prompt": 3, "tags": "x", "holdout": "x", "fixtures": [], "checks": []}
    data = {**GOOD, "id": case_id, field: bad_values[field]}
    with pytest.raises(CaseFileError) as info:
        suite_from_dict({"cases": [data]}, path="s.yaml")
    text = str(info.value)
    assert text.startswith(f"s.yaml: case {json.dumps(case_id, ensure_ascii=False)}: {field}")
    assert "\n" not in text and "\r" not in text


def test_the_module_docstring_example_loads(tmp_path) -> None:
    import textwrap

    import evalstats.running._suite as module

    doc = module.__doc__ or ""
    start = doc.index("    name: shop")
    end = doc.index("\nTop-level fields")
    path = write(tmp_path, textwrap.dedent(doc[start:end]), ".yaml")
    suite = load_suite(path)
    assert [c.id for c in suite.select()] == ["order status"]
    assert suite.cases[1].messages[-1] == {"role": "user", "content": "A-1042, obviously."}


@given(st.lists(case_dicts(), min_size=1, max_size=3, unique_by=lambda d: d["id"]), st.data())
def test_a_json_duplicate_key_is_placed_at_its_object(tmp_path_factory, cases, data) -> None:
    # Repeat the "id" key of one case: the error points at that case's "{", which
    # is found here independently, from the indented dump's line structure.
    index = data.draw(st.integers(0, len(cases) - 1))
    text = json.dumps({"cases": cases}, indent=2)
    marker = f'"id": {json.dumps(cases[index]["id"])}'
    lines = text.split("\n")
    # With indent=2 each case's "{" stands alone on the line before its first key.
    starts = [i for i, line in enumerate(lines) if line == "    {"]
    key_line = starts[index] + 1
    assert lines[key_line].strip().startswith(marker)
    lines[key_line] = lines[key_line].replace(marker, f"{marker}, {marker}", 1)
    path = write(tmp_path_factory.mktemp("dup"), "\n".join(lines), ".json")
    with pytest.raises(CaseFileError) as info:
        load_suite(path)
    assert f"in the object at line {starts[index] + 1} column 5 " in str(info.value)


def test_a_suite_may_declare_its_cases_sampled(tmp_path):
    import json

    from evalstats.errors import CaseFileError
    from evalstats.running._suite import load_suite

    case = {"id": "a", "prompt": "Hi", "checks": [{"contains": "hi"}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "s", "sampled": True, "cases": [case]}))
    suite = load_suite(path)
    assert suite.sampled and suite.to_dict()["sampled"] is True
    path.write_text(json.dumps({"name": "s", "cases": [case]}))
    assert not load_suite(path).sampled and "sampled" not in load_suite(path).to_dict()
    path.write_text(json.dumps({"name": "s", "sampled": "yes", "cases": [case]}))
    with pytest.raises(CaseFileError, match=r's\.json: sampled: must be true or false .*"yes"'):
        load_suite(path)


def test_a_large_yaml_suite_is_not_taken_for_an_alias_bomb() -> None:
    # A valid 100,000-case suite holds 1.6 million values: more than the fixed
    # limit, but fewer than its text has bytes, so it is read; aliases that
    # multiply a small text past the limit are still refused.
    from evalstats.running._suite import MAX_EXPANDED_VALUES, CaseFileError, _check_expansion

    cases = [
        {"id": f"c{i}", "prompt": f"Where is order A-{i}?", "checks": [{"contains": f"A-{i}"}]}
        for i in range(100_000)
    ]
    document = {"name": "big", "cases": cases}
    text = yaml.safe_dump(document)
    _check_expansion(document, "big.yaml", len(text))  # no refusal
    row = ["lol"] * 10
    bomb: object = row
    for _ in range(7):  # 10**7 values from a few hundred bytes of aliases
        bomb = [bomb] * 10
    with pytest.raises(CaseFileError, match="expands to more than 1,000,000 values"):
        _check_expansion({"cases": bomb}, "bomb.yaml", 400)
    assert MAX_EXPANDED_VALUES == 1_000_000
