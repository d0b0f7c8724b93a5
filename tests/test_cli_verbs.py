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
