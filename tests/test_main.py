"""``python -m evalstats`` is the ``evalstats`` command."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_runs_the_command():
    done = subprocess.run(
        [sys.executable, "-m", "evalstats", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "evalstats" in done.stdout


def test_python_dash_m_bad_verb_is_one_line_and_exit_2():
    done = subprocess.run(
        [sys.executable, "-m", "evalstats", "reprot"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "report" in done.stderr
    assert "Traceback" not in done.stderr


def test_every_json_document_names_its_verb_and_layout_version(tmp_path, capsys):
    import json

    from evalstats.cli import main

    for argv, verb in [
        (["power", "--pa", "0.7", "--pb", "0.9", "--trials", "20", "--json"], "power"),
        (["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0.1", "--cases", "10", "--json"], "plan"),
        (["demo", "--runs", "2", "--no-plots", "--json"], "demo"),
    ]:
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["schema"] == f"evalstats.{verb}/2"
