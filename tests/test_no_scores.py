"""A results file without scores, as every file was before checks gave them, still
reads and reports the same, byte for byte.

``tests/data/no_scores/results.jsonl`` is built with the tests' record factory
and holds no ``score`` on any check or sample; ``expected/`` holds what the
verbs printed for it with the readers before suites could weight graded
checks (see ``make_expected.py`` there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalstats.presenting._report import report
from evalstats.results._file import read_results

HERE = Path(__file__).resolve().parent / "data" / "no_scores"
sys.path.insert(0, str(HERE))

import make_expected  # noqa: E402  (the file's builder and the verbs it was shown with)


def test_the_file_is_the_one_the_factory_builds_and_holds_no_score(tmp_path: Path) -> None:
    built = make_expected.write_results(tmp_path / "r.jsonl")
    assert built.read_bytes() == (HERE / "results.jsonl").read_bytes()
    for line in built.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert "score" not in record
        assert all("score" not in c for c in record.get("checks") or ())


@pytest.mark.parametrize("name", sorted(make_expected.VERBS))
def test_the_verbs_say_what_they_said_before_scores(name: str) -> None:
    expected = (HERE / "expected" / name).read_text(encoding="utf-8")
    assert make_expected.said(HERE / "results.jsonl", make_expected.VERBS[name]) == expected


def test_it_reads_without_scores() -> None:
    results = read_results(HERE / "results.jsonl")
    assert all("score" not in s for s in results.samples)
    made = report(str(HERE / "results.jsonl"))
    assert "scores" not in made.to_dict() and "mean score" not in str(made)
