"""Terminal controls in model and agent text are shown, never obeyed."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from records import check, sample

from evalstats._terminal import visible
from evalstats.cli import main
from evalstats.presenting._review import review
from evalstats.results._file import ResultsWriter

# Retitle the window, clear the screen, hide text, overwrite the line, CSI in
# one byte, and a right-to-left override.
HOSTILE = "ok\x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\x1b[0m\rFAKE\b\x9b31m\u202egnp.exe"


CONTROLS = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n", "\t"}
CONTROLS |= set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@given(st.text())
def test_nothing_a_terminal_obeys_survives(text):
    shown = visible(text)
    assert not CONTROLS & set(shown)
    if not CONTROLS & set(text):
        assert shown == text  # text without controls is left exactly as it is


def test_controls_are_written_as_escapes():
    assert visible(HOSTILE) == (
        "ok\\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden\\x1b[0m\\rFAKE\\b\\x9b31m\\u202egnp.exe"
    )
    assert visible("a\nb\tc") == "a\nb\tc"
    assert visible("a\nb", keep="") == "a\\nb"


def results_with(tmp_path: Path, answer: str) -> Path:
    path = tmp_path / "r.jsonl"
    with ResultsWriter.create(
        path, {"suite": {"name": "s\x1b]0;t\x07"}, "cases": ["c\x1b[2J"]}
    ) as w:
        passed = check("passed", "n", reason="fine\x1b]0;x\x07")
        w.write_sample(sample("c\x1b[2J", "v", 0, answer=answer, checks=[passed]))
        w.close({"status": "finished"})
    return path


def test_review_shows_an_answer_with_controls_written_out(tmp_path):
    path = results_with(tmp_path, HOSTILE)
    out = io.StringIO()
    review(path, tmp_path / "reviews.jsonl", input=io.StringIO("q\n"), output=out)
    shown = out.getvalue()
    assert "\x1b" not in shown and "\r" not in shown and "\x9b" not in shown
    assert "\u202e" not in shown
    assert "\\x1b]0;pwned\\x07" in shown


def test_the_command_line_shows_controls_from_a_results_file(tmp_path, capsys):
    path = results_with(tmp_path, HOSTILE)
    for argv in (["report", str(path)], ["report", "--json", str(path)]):
        main(argv)
        out, err = capsys.readouterr()
        assert "\x1b" not in out + err and "\r" not in out + err
    json.loads(out)  # --json stays JSON


def test_an_error_quoting_controls_is_one_visible_line(tmp_path, capsys):
    bad = tmp_path / "suite\x1b[2J\nname.json"
    assert (
        main(["run", str(bad), "--variant", "v=standin:shop-v1", "--out", str(tmp_path / "o")]) == 2
    )
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "\x1b" not in err
