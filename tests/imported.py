"""What a verb imports, run as the command in a fresh process, for the tests that pin it.

An import left out is a promise about start-up (scipy.stats alone takes about
0.5 s and 50 MB); a fresh process is the only place that sees it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence


def imported_of(argv: Sequence[str], modules: Sequence[str], run_file: object = None) -> list[str]:
    """Which of ``modules`` a fresh process imported running the verb ``argv`` (its
    ``{f}`` replaced by ``run_file``); the verb must end with 0 or 1."""
    code = (
        "import json, sys\n"
        "from evalstats.cli._main import main\n"
        "code = main(sys.argv[1:])\n"
        f"found = [m for m in {list(modules)!r} if m in sys.modules]\n"
        "print('imported:', json.dumps(found), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    args = [a.format(f=run_file) for a in argv]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 1), done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("imported: ")]
    assert len(said) == 1, done.stderr
    found: list[str] = json.loads(said[0].removeprefix("imported: "))
    return found
