"""The command as a package of verbs: every verb's --help ends with examples that parse."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from evalstats.cli import main
from evalstats.cli._main import VERBS, _verb_module, build_parser


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_example_parses(verb: str) -> None:
    examples = _verb_module(verb).EXAMPLES
    assert examples, f"{verb} has no examples"
    for example in examples:
        argv = shlex.split(example)
        assert argv[:2] == ["evalstats", verb], example
        args = build_parser(verb).parse_args(argv[1:])
        assert args.verb == verb


@pytest.mark.parametrize("verb", list(VERBS))
def test_help_ends_with_the_examples(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([verb, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "examples:\n" in out
    for example in _verb_module(verb).EXAMPLES:
        assert f"  {example}" in out


def test_options_are_never_abbreviated(capsys: pytest.CaptureFixture[str]) -> None:
    # plan --a used to be taken for --approximate
    assert main(["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.1", "--a"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --a" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--out", "x"], "--out is now --out-dir DIR"),
        (["demo", "--quiet"], "--quiet is now --no-progress"),
        (["demo", "--sequential", "--runs", "3"], "give --max-runs N, not --runs"),
        (["report", "r.jsonl", "--plot", "figs"], "--plot is now --plots DIR"),
        (["compare", "r.jsonl", "--scope", "these_cases"], "--scope is now --about"),
        (["gate", "r.jsonl", "--variant", "v", "--about", "trials"], "say --about these-cases"),
    ],
)
def test_old_spellings_get_a_one_line_hint(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_list_of_verbs_imports_no_verb() -> None:
    code = (
        "import sys\n"
        "from evalstats.cli._main import build_parser\n"
        "build_parser().format_help()\n"
        "print(sorted(m for m in sys.modules if m.startswith('evalstats.cli.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "['evalstats.cli._main', 'evalstats.cli._options']"


def test_json_is_written_as_json_dumps_writes_it_in_a_few_writes(capsys, monkeypatch):
    # A document of many pieces (more than one batch of them) is the text of
    # json.dumps(indent=2) and a newline, written in batches, not piece by piece.
    import json
    import sys

    from evalstats.cli import _options

    document = {"rows": [{"case": f"c{i}", "rate": i / 7, "ok": i % 2 == 0} for i in range(3000)]}
    writes = []
    write = sys.stdout.write
    monkeypatch.setattr(sys.stdout, "write", lambda text: writes.append(text) or write(text))
    _options.print_json(document, "report")
    out = capsys.readouterr().out
    want = {"schema": f"evalstats.report/{_options.JSON_SCHEMA_VERSION}", **document}
    assert out == json.dumps(want, indent=2) + "\n"
    assert 2 < len(writes) < 20
