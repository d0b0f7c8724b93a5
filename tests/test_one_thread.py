"""compare and gate, run as the command, keep to one thread and to the imports they need.

A second thread (a linear algebra library's pool, started when numpy is first
imported) spins while it waits and makes a comparison use more CPU than wall
time; scipy.special takes about a quarter of a second to import, more than
the comparison of 100,000 samples (benchmarks/compare.py).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from records import samples
from strategies import results_manifest, write_results_file

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

#: Runs the command as ``evalstats`` does (``main()`` without arguments, which
#: ends the process itself) and prints, as it ends, the threads then alive.
_COUNTING = """
import os, sys
end = os._exit
def counted(code):
    sys.stderr.write(f"THREADS {len(os.listdir('/proc/self/task'))}\\n")
    sys.stderr.flush()
    end(code)
os._exit = counted
"""
_COUNTED = (
    _COUNTING
    + """
sys.argv = ['evalstats', *sys.argv[1:]]
from evalstats.cli._main import main
sys.exit(main())
"""
)


def _threads(stderr: str) -> int:
    counted = [line for line in stderr.splitlines() if line.startswith("THREADS ")]
    assert counted, stderr
    return int(counted[-1].split()[1])


@pytest.fixture
def run_file(tmp_path):
    rng = np.random.default_rng(3)
    outcomes = {
        v: {f"c{i}": [bool(x) for x in rng.random(4) < p] for i in range(30)}
        for v, p in (("A", 0.4), ("B", 0.9))
    }
    cases = list(outcomes["A"])
    records = samples(outcomes, name="c", missed="missed")
    return write_results_file(tmp_path / "r.jsonl", results_manifest(cases, ["A", "B"], 4), records)


GATE = ["gate", "{f}", "--variant", "B", "--min-pass", "0.5", "--allow-unfinished"]
GATE += ["--no-regression-vs", "A", "--margin", "0.05"]


@linux
@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{f}", "--a", "A", "--b", "B"],
        ["compare", "{f}", "--a", "A", "--b", "B", "--json"],
        GATE,
    ],
)
def test_compare_and_gate_end_with_one_thread(run_file, argv):
    argv = [a.format(f=run_file) for a in argv]
    done = subprocess.run(
        [sys.executable, "-c", _COUNTED, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 1), done.stderr
    assert _threads(done.stderr) == 1, done.stderr


@linux
def test_the_count_sees_a_second_thread():
    # The same count sees a thread still alive as the process ends.
    code = _COUNTING + (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert _threads(done.stderr) == 2, done.stderr


def test_the_margin_floor_and_betting_limits_import_no_scipy():
    # gate's line about cases like these (the fewest cases its margin takes)
    # and the betting interval are computed without scipy.
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from evalstats.stats._intervals import cases_for_margin, clustered_limits\n"
        "assert cases_for_margin(0.02) == 211\n"
        "clustered_limits(np.array([[0.1, -0.2, 0.3]]), 0.95, difference=True)\n"
        "assert not [m for m in sys.modules if m.startswith('scipy')], 'scipy imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
