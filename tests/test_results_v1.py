"""A results file written by an earlier evalstats still reads, and reports, the same.

``tests/data/results_v1/results.jsonl`` was written by the engine before the
record schema was one definition (before check verdicts carried
``not_inspected``), and ``expected/`` holds what ``report``, ``compare``,
``gate`` and the HTML page say of it with the readers of that time (see
``make_results.py`` there). When a reader's output is meant to change (a new
statistic, a new line), ``expected/`` is made again by the readers before the
change, run on the same file, and this test then holds the change to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.presenting._html import render_html
from evalstats.results._file import read_results

HERE = Path(__file__).resolve().parent / "data" / "results_v1"
FILE = HERE / "results.jsonl"

VERBS = {
    "report.txt": ["report", "FILE"],
    "report.json": ["report", "FILE", "--json"],
    "compare.txt": ["compare", "FILE", "--a", "a", "--b", "b"],
    "compare.json": ["compare", "FILE", "--a", "a", "--b", "b", "--json"],
    "gate.txt": ["gate", "FILE", "--variant", "b", "--min-pass", "0.5"],
}


def _expected(name: str) -> str:
    return (HERE / "expected" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(VERBS))
def test_the_verbs_say_what_they_said(name, capsys):
    shown = str(FILE)
    code = main([shown if a == "FILE" else a for a in VERBS[name]])
    out = capsys.readouterr().out
    assert f"exit {code}\n{out}".replace(shown, "FILE") == _expected(name)


def test_the_html_page_is_the_same():
    shown = str(FILE)
    assert render_html(shown).replace(shown, "FILE") == _expected("report.html")


def test_the_records_read_back_as_written():
    res = read_results(FILE)
    assert res.warnings == () and res.summary["status"] == "finished"
    assert len(res.samples) == 40
    statuses = [s["status"] for s in res.samples]
    assert statuses.count("incomplete") == 2 and statuses.count("unmeasured") == 1
    checks = [c for s in res.samples for c in s["checks"]]
    assert all("not_inspected" not in c for c in checks)  # written before the field
    assert sum(c.get("judge_unmeasured") is True for c in checks) == 1
    with open(FILE, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    assert [s for s in lines if s["type"] == "sample"] == [
        {"type": "sample", **s} for s in res.samples
    ]
