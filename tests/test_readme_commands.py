"""The README's "Run your own eval" commands, run as written from a copy of the
repository's ``cases/`` folder: every file they name is there, and each command
ends as the README says (run, report and compare exit 0; gate 0 or 1)."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from evalstats.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split("Run two variants on it, paired and in alternating order", 1)[1]
    block = after.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_the_run_your_own_eval_commands_work_as_written(tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "cases", tmp_path / "cases")
    monkeypatch.chdir(tmp_path)
    commands = _commands()
    assert [c[:2] for c in commands] == [
        ["evalstats", "run"],
        ["evalstats", "report"],
        ["evalstats", "compare"],
        ["evalstats", "gate"],
    ]
    for argv in commands:
        code = main(argv[1:])
        err = capsys.readouterr().err
        assert "Traceback" not in err and "error:" not in err, (argv, err)
        assert code in ((0, 1) if argv[1] == "gate" else (0,)), (argv, code, err)
    assert (tmp_path / "results.jsonl").is_file()
    assert sorted(p.name for p in (tmp_path / "figures").iterdir())
