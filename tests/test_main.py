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
