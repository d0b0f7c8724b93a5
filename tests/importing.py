"""What the tests of other tools' logs share: whether Inspect AI is installed, and
the command run as a user runs it, its one-line refusals checked."""

from __future__ import annotations

from typing import Any

import pytest

from evalstats.cli import main

try:
    import inspect_ai.log  # noqa: F401

    HAVE_INSPECT = True
except ImportError:  # pragma: no cover - the inspect extra is optional
    HAVE_INSPECT = False

needs_inspect = pytest.mark.skipif(
    not HAVE_INSPECT, reason='inspect_ai is not installed (pip install ".[inspect]")'
)


def cli(capsys: Any, *argv: Any) -> tuple[int, str, str]:
    """``evalstats ARGV``: its exit code, stdout and stderr."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys: Any, *argv: Any, naming: Any) -> str:
    """``evalstats ARGV`` refused in one line, exit 2, no traceback, the line naming
    ``naming`` (one thing, or each of a list of things); the line."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for part in naming if isinstance(naming, list | tuple) else [naming]:
        assert str(part) in lines[0], lines[0]
    return lines[0]
