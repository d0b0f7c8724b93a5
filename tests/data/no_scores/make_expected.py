"""Write ``results.jsonl``, a run in the format of files without scores, and what the
readers say of it.

The file is built with the tests' record factory (``tests/records.py``): two
variants, three cases, three repeats, passes, failures, an incomplete and an
unmeasured sample, and no ``score`` on any check or sample, as every file was
before checks gave scores. ``expected/`` holds what ``report`` (text and
JSON), ``compare`` and ``gate`` print for it, made by the readers before
suites could weight graded checks, so that such files keep reading and
reporting the same (``tests/test_no_scores.py``).

Run it from the repository root with evalstats importable::

    python tests/data/no_scores/make_expected.py
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

import records  # noqa: E402  (the tests' record factory, beside this folder)

from evalstats.cli import main  # noqa: E402

OUTCOMES = {
    "a": {
        "order": [True, True, False],
        "refund": [False, True, None],
        "terms": [True, False, False],
    },
    "b": {
        "order": [True, True, True],
        "refund": [True, True, False],
        "terms": [True, True, False],
    },
}

VERBS = {
    "report.txt": ["report", "FILE"],
    "report.json": ["report", "FILE", "--json"],
    "compare.txt": ["compare", "FILE", "--a", "a", "--b", "b"],
    "gate.txt": ["gate", "FILE", "--variant", "b", "--min-pass", "0.5"],
}


def write_results(path: Path) -> Path:
    """The results file: the factory's samples, one of them incomplete."""
    run = records.results(OUTCOMES)
    samples = list(run.samples)
    samples[2] = records.sample("order", "a", 2, False, status="incomplete")
    return records.write(path, run.manifest, samples, {"status": "finished"})


def said(path: Path, argv: list[str]) -> str:
    """What a verb prints for the file, its exit code first, the file's path as FILE."""
    shown = str(path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([shown if a == "FILE" else a for a in argv])
    return f"exit {code}\n{out.getvalue()}".replace(shown, "FILE")


if __name__ == "__main__":
    file = HERE / "results.jsonl"
    if not file.exists():
        write_results(file)
    (HERE / "expected").mkdir(exist_ok=True)
    for name, argv in VERBS.items():
        (HERE / "expected" / name).write_text(said(file, argv), encoding="utf-8")
