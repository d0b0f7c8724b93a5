"""The readers of tables and other tools' logs on unusual but plausible input.

A table's counts are checked against a count made apart from the reader: the
rows a test draws are its truth, counted per (case, variant) with pandas, and
the table written from them in any of the ways spreadsheets and scripts write
CSV (separator, quoting, line ends, a byte order mark, blank lines, columns in
any order, extra columns) must count the same through ``report --json`` and
the tally. Malformed files are refused in one line that names the file and
where in it the problem is.
"""

from __future__ import annotations

from pathlib import Path

from importing import one_line_error

from evalstats.reading._logs import detect_format, load_results

DATA = Path(__file__).parent / "data"
PROMPTFOO = DATA / "promptfoo" / "promptfoo-results.json"


def test_a_character_cut_at_the_bytes_the_format_is_told_from_is_still_a_table(tmp_path):
    """The format is told from the first 4096 bytes; a character of two bytes across
    that edge is text, not binary content."""
    line = "q,1," + "é" * 40 + "\n"
    for pad in range(2):
        text = "case,passed,answer" + " " * pad + "\n" + line * 200
        if not _decodes(text.encode()[:4096]):
            break
    assert not _decodes(text.encode()[:4096])
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    assert detect_format(path) == "csv"
    assert load_results(path).outcomes("t") == {"q": [True] * 200}


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_a_table_not_in_utf8_is_refused_naming_its_line(tmp_path, capsys):
    """A table saved as Latin-1 (as spreadsheets do) is a table whose bytes are wrong,
    not binary content; the line says where and what to do."""
    path = tmp_path / "t.csv"
    path.write_bytes("case,passed\nq1,1\ncaf\u00e9,0\n".encode("latin-1"))
    line = one_line_error(capsys, "report", path, naming=[path, "line 3", "0xe9", "UTF-8"])
    assert "binary" not in line
    line = one_line_error(capsys, "report", path, "--format", "csv", naming=[path, "line 3"])


def test_binary_content_is_still_told_binary(tmp_path, capsys):
    path = tmp_path / "t.dat"
    path.write_bytes(b"PK\x01\x02,\xff\xfe\x00\x01" * 50)
    one_line_error(capsys, "report", path, naming=[path, "binary content"])
