"""The README's examples run as doctests, so the tour stays true."""

from __future__ import annotations

import doctest
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run() -> None:
    failures, tried = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert tried > 10
    assert failures == 0


def test_quick_start_has_exactly_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = quick.split("```sh\n")[1:]
    commands = [b.split("```", 1)[0].strip() for b in blocks]
    assert len(commands) == 2
    assert commands[0].endswith("evalstats demo")
    assert ".[test]" in commands[1] and "pytest" in commands[1]
    # .ci/run runs the README's test command.
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1].split("&& ", 1)[1].replace(".venv/bin/", "") in ci.replace(".venv/bin/", "")


def test_quick_start_shows_what_the_demo_prints(tmp_path: Path) -> None:
    # The excerpt under Quick start is the default demo's own output (10 runs,
    # seed 0), line for line, so it cannot drift from what a newcomer sees.
    from evalstats.demo._shop_demo import run_demo

    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    excerpt = quick.split("```text\n", 1)[1].split("```", 1)[0]
    shown = [line for line in excerpt.splitlines() if line.strip()]
    assert len(shown) >= 10
    printed = str(run_demo(out=tmp_path, plots=False)).splitlines()
    for line in shown:
        assert line in printed, line
    start = printed.index(shown[0])
    assert [line for line in printed[start:] if line.strip()][: len(shown)] == shown


def test_plan_examples_print_what_the_command_prints(capsys, monkeypatch) -> None:
    # Each `$ evalstats plan ...` block under "How many runs" is the command's
    # own output (the simulation is seeded), so the figures cannot drift from
    # what the planner says. When the clustered rule changes, rerun the
    # commands and paste their output. Paths in them are from the repository's
    # root, as in the README.
    import shlex

    from evalstats.cli import main

    monkeypatch.chdir(README.parent)

    text = README.read_text(encoding="utf-8")
    section = text.split("## How many runs", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```text\n")[1:]]
    plans = [b for b in blocks if b.startswith("$ evalstats plan ")]
    assert len(plans) >= 2
    for block in plans:
        command, _, shown = block.partition("\n")
        assert main(shlex.split(command)[2:]) == 0
        assert capsys.readouterr().out == shown, command


def test_sequential_plan_example_prints_what_the_command_prints(capsys) -> None:
    # The `$ evalstats plan ... --sequential` block under "Is version 2 better? Look
    # as often as you like" is the command's own (seeded) output.
    import shlex

    from evalstats.cli import main

    text = README.read_text(encoding="utf-8")
    section = text.split("## Is version 2 better? Look as often", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```text\n")[1:]]
    plans = [b for b in blocks if b.startswith("$ evalstats plan ") and "--sequential" in b]
    assert len(plans) == 1
    command, _, shown = plans[0].partition("\n")
    assert "--planned-for" in shown
    assert main(shlex.split(command)[2:]) == 0
    assert capsys.readouterr().out == shown, command


def test_gate_example_prints_what_the_command_prints(tmp_path: Path, capsys) -> None:
    # The `$ evalstats gate ...` block beside the claims is the command's output
    # on the demo's results file, each line matched fragment by fragment
    # around its "..." elisions.
    from evalstats.cli import main
    from evalstats.demo._shop_demo import run_demo

    text = README.read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```text\n")[1:]]
    (block,) = [b for b in blocks if b.startswith("$ evalstats gate ")]
    command, *shown = block.strip().splitlines()
    run_demo(out=tmp_path, plots=False)
    capsys.readouterr()
    argv = command.removeprefix("$ evalstats ").split()
    argv[1] = str(tmp_path / argv[1])
    assert main(argv) == 1
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(shown)
    for want, got in zip(shown, printed, strict=True):
        at = 0
        for fragment in want.split("..."):
            found = got.find(fragment.strip(), at)
            assert found >= 0, (fragment, got)
            at = found + len(fragment.strip())
