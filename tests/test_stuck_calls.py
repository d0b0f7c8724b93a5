"""A Python check or task that never returns neither freezes a run nor keeps it from
exiting: the check is stopped at the run's --timeout and fails saying so, SIGTERM
ends the run once it is, and a stuck task's thread does not hold up the exit.

Each run is a child process given a bounded wait; before these fixes each of
them hung (an inline check froze the event loop: no timeout, SIGTERM unheard;
a task's worker thread was joined at exit for as long as it was stuck).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from evalstats.running._threads import Alarm, CallTimedOut, DaemonPool

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")

SUITE = """\
name: stuck
cases:
  - id: a
    prompt: Where is my order A-1042?
    checks: [{python: "checks:stuck"}, {contains: A-1042}]
"""
#: A check that waits for ever (a lock never released, a loop that never ends).
CHECKS = "import threading\ndef stuck(answer):\n    threading.Event().wait()\n"


def _evalstats(*argv: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalstats", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ended(proc: subprocess.Popen[str], within: float) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"the run did not end within {within:g} s")
    return proc.returncode, out, err


def _suite(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "checks.py").write_text(CHECKS, encoding="utf-8")


def test_a_check_that_never_returns_fails_at_the_timeout(tmp_path: Path) -> None:
    _suite(tmp_path)
    run = ["run", "suite.yaml", "--variant", "a=standin:shop-v1", "--runs", "2"]
    proc = _evalstats(*run, "--timeout", "1", "--no-progress", "--out", "r.jsonl", cwd=tmp_path)
    code, _, err = _ended(proc, 60)
    assert code == 0, err
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    samples = [r for r in records if r["type"] == "sample"]
    assert len(samples) == 2 and records[-1]["status"] == "finished"
    for s in samples:
        stuck, found = s["checks"]
        assert stuck["status"] == "failed" and found["status"] == "passed"
        assert stuck["reason"] == (
            "the check itself raised: checks:stuck: it did not return within 1 s "
            "(the run's --timeout) and was stopped"
        )


def test_sigterm_during_a_check_that_never_returns_ends_the_run(tmp_path: Path) -> None:
    _suite(tmp_path)
    run = ["run", "suite.yaml", "--variant", "a=standin:shop-v1", "--runs", "50"]
    proc = _evalstats(*run, "--timeout", "3", "--no-progress", "--out", "r.jsonl", cwd=tmp_path)
    time.sleep(2)  # the first sample's check is under way
    proc.send_signal(signal.SIGTERM)
    code, _, err = _ended(proc, 30)
    summary = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])
    assert summary["type"] == "summary" and summary["status"] == "interrupted", err
    assert code != 0


def test_a_task_that_never_returns_does_not_hold_up_the_exit(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import threading
        from evalstats.running._checks import contains
        from evalstats.running._engine import run
        from evalstats.running._suite import Case
        from evalstats.running._variants import Variant

        def stuck(prompt):
            threading.Event().wait()

        case = Case("a", "hi", (contains("x"),))
        outcome = run([case], [Variant("v", stuck)], runs=2, out="r.jsonl",
                      progress=False, timeout=0.5, retries=0)
        print(outcome.by_variant["v"]["unmeasured"])
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    code, out, err = _ended(proc, 60)
    assert code == 0, err
    assert out.strip() == "2"  # each timed out: no answer, unmeasured


def test_the_pool_serves_the_next_call_while_one_is_stuck() -> None:
    pool = DaemonPool("test")
    release = threading.Event()
    stuck = pool.submit(release.wait)
    assert pool.submit(pow, 3, 4).result(timeout=10) == 81
    assert not stuck.done()
    release.set()
    assert stuck.result(timeout=10) is True
    pool.shutdown(wait=True)
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(pow, 1, 1)


def test_the_alarm_is_only_where_it_can_ring_and_leaves_the_signal_as_it_was() -> None:
    with Alarm.installed(None) as none:
        assert none is None
    seen: list[Alarm | None] = []
    worker = threading.Thread(target=lambda: seen.append(Alarm.installed(5).__enter__()))
    worker.start()
    worker.join()
    assert seen == [None]  # off the main thread no signal arrives
    with Alarm.installed(0.05) as alarm:
        assert alarm is not None
        with alarm.bounding():
            pass  # a call that returns in time: nothing raised later
        time.sleep(0.1)
        with pytest.raises(CallTimedOut), alarm.bounding():
            time.sleep(5)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_rescore_stops_a_check_that_never_returns_at_the_runs_timeout(tmp_path: Path) -> None:
    _suite(tmp_path)
    run = ["run", "suite.yaml", "--variant", "a=standin:shop-v1", "--runs", "1"]
    code, _, err = _ended(
        _evalstats(*run, "--timeout", "1", "--no-progress", "--out", "r.jsonl", cwd=tmp_path), 60
    )
    assert code == 0, err
    again = ["rescore", "r.jsonl", "--suite", "suite.yaml", "--out", "again.jsonl"]
    code, _, err = _ended(_evalstats(*again, cwd=tmp_path), 60)
    assert code == 0, err
    (sample,) = [
        json.loads(line)
        for line in (tmp_path / "again.jsonl").read_text().splitlines()
        if json.loads(line)["type"] == "sample"
    ]
    assert "did not return within 1 s" in sample["checks"][0]["reason"]
