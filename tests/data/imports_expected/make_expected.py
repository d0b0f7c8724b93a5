"""Write what the verbs print for the logs of other tools that carry no graded scores.

The logs under ``tests/data`` (Inspect AI, promptfoo, lm-eval, a CSV table)
score pass or fail only, and importing them must say what it said before
imported logs kept their scores: the same records, the same report and
comparison, text and ``--json``. The files here were written by this script
with the readers of that time; ``tests/test_imported_scores.py`` holds the
verbs to them. When an output is meant to change, write the files again with
the readers before the change, then make it. Run from this folder (Inspect's
entries need inspect-ai installed):

    python make_expected.py
"""

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent

#: (name of the file written, the log, the verb's arguments; FILE the log, OUT a
#: new file in a temporary folder whose lines are written instead of the output).
CASES = [
    ("table.report.txt", "table/table.csv", ["report", "FILE"]),
    ("table.report.json", "table/table.csv", ["report", "FILE", "--json"]),
    ("table.compare.txt", "table/table.csv", ["compare", "FILE"]),
    ("table.compare.json", "table/table.csv", ["compare", "FILE", "--json"]),
    ("table.import.jsonl", "table/table.csv", ["import", "FILE", "--out", "OUT"]),
    ("promptfoo.report.txt", "promptfoo/promptfoo-results.json", ["report", "FILE"]),
    ("promptfoo.report.json", "promptfoo/promptfoo-results.json", ["report", "FILE", "--json"]),
    (
        "promptfoo.compare.json",
        "promptfoo/promptfoo-results.json",
        ["compare", "FILE", "--a", "terse", "--b", "polite", "--json"],
    ),
    (
        "promptfoo.import.jsonl",
        "promptfoo/promptfoo-results.json",
        ["import", "FILE", "--out", "OUT"],
    ),
    (
        "lm_eval.report.txt",
        "lm_eval/samples_arith_tiny_2026-11-30T13-45-00.000000.jsonl",
        ["report", "FILE"],
    ),
    (
        "lm_eval.report.json",
        "lm_eval/samples_arith_tiny_2026-11-30T13-45-00.000000.jsonl",
        ["report", "FILE", "--json"],
    ),
    (
        "lm_eval.import.jsonl",
        "lm_eval/samples_arith_tiny_2026-11-30T13-45-00.000000.jsonl",
        ["import", "FILE", "--out", "OUT"],
    ),
    ("inspect_a.report.txt", "inspect/inspect_a.eval", ["report", "FILE"]),
    ("inspect_a.report.json", "inspect/inspect_a.eval", ["report", "FILE", "--json"]),
    ("inspect_a.import.jsonl", "inspect/inspect_a.eval", ["import", "FILE", "--out", "OUT"]),
    (
        "inspect_ab.compare.txt",
        "inspect/inspect_a.eval",
        ["compare", "FILE", "inspect/inspect_b.eval"],
    ),
]


def output(log: str, argv: list[str]) -> str:
    """``exit CODE`` and what the verb printed (or wrote to OUT), the log's path as
    FILE; run from ``tests/data`` (the paths are relative to it)."""
    from evalstats.cli import main

    shown = os.path.relpath(DATA / log)
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "imported.jsonl")
        args = [shown if a == "FILE" else out if a == "OUT" else a for a in argv]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            code = main(args)
        text = printed.getvalue()
        if "OUT" in argv:
            with open(out, encoding="utf-8") as f:
                text = f.read()
    return f"exit {code}\n{text}".replace(shown, "FILE")


if __name__ == "__main__":
    os.chdir(DATA)
    only = sys.argv[1:]
    for name, log, argv in CASES:
        if only and name not in only:
            continue
        (HERE / name).write_text(output(log, argv), encoding="utf-8")
