"""Text tables line up by the columns a terminal shows, not by code points.

A CJK character takes two columns, a combining mark none, so a case id like
"注文の状況" (5 characters, 10 columns) or "résumé" written with combining
accents (8 characters, 6 columns) must be padded by its display width for the
columns after it to start at the same place on every row.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from records import manifest, sample, write

from evalstats._terminal import lines_text, visible
from evalstats._text import align_left, display_width
from evalstats.cli import main

# --- the width of a text ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("", 0),
        ("order-42", 8),
        (" ~!{}", 5),
        ("注文の状況", 10),  # CJK ideographs and hiragana: W
        ("ｶﾀｶﾅ", 4),  # halfwidth katakana: H, one column each
        ("ＡＢ", 4),  # fullwidth Latin: F
        ("한국어", 6),  # precomposed Hangul syllables: W
        ("\u1112\u1161\u11ab", 2),  # 한 as conjoining jamo (NFD): one wide block
        ("re\u0301sume\u0301", 6),  # résumé with U+0301 COMBINING ACUTE ACCENT
        ("résumé", 6),  # the same, precomposed
        ("a\u0308\u0323", 1),  # two combining marks on one letter
        ("\U0001f600", 2),  # 😀: W
        ("ok \U0001f44d", 5),  # 👍
        ("\u2764\ufe0f", 1),  # ❤ (N) and the variation selector (Mn): zero
        ("a\u200bb", 2),  # ZERO WIDTH SPACE (Cf)
        ("\ufeff", 0),  # ZERO WIDTH NO-BREAK SPACE (Cf)
        ("\u3000", 2),  # IDEOGRAPHIC SPACE: F
        ("é", 1),
    ],
)
def test_display_width(text, width):
    assert display_width(text) == width


def test_a_control_counts_as_the_escape_a_report_shows():
    # Names from another tool's log may hold controls; lines_text writes them as
    # escapes, and the table is laid out for what is shown.
    for text in ("a\nb", "tab\there", "\x1b[2J", "\u202eevil", "\x9b"):
        assert display_width(text) == len(visible(text, keep=""))


def test_padding_examples():
    assert align_left("注文", 6) == "注文  "
    assert align_left("cafe\u0301", 6) == "cafe\u0301  "
    assert align_left("toolong", 3) == "toolong"


@pytest.mark.parametrize("text", ["", "case", "order-42", "a b  c", "~"])
@pytest.mark.parametrize("width", [0, 3, 8, 22])
def test_ascii_pads_as_format_does(text, width):
    assert align_left(text, width) == f"{text:<{width}}" == text.ljust(width)


# --- properties, for any text -----------------------------------------------------------

#: Any text, from every plane, controls and lone surrogates among it.
ANY_TEXT = st.text(st.characters(codec=None), max_size=30)
#: Text without control characters (what a terminal draws as it is).
DRAWN_TEXT = st.text(
    st.characters(exclude_categories=["Cc", "Cs"]).filter(lambda c: visible(c, keep="") == c),
    max_size=30,
)
WIDTHS = st.integers(min_value=0, max_value=40)


@given(DRAWN_TEXT | ANY_TEXT, WIDTHS)
def test_padded_text_has_the_width_asked(text, width):
    wanted = max(width, display_width(text))
    left = align_left(text, width)
    assert display_width(left) == wanted
    assert left == text + " " * (wanted - display_width(text))


@given(DRAWN_TEXT | ANY_TEXT)
def test_the_width_is_the_width_of_what_is_shown(text):
    shown = lines_text([text])
    assert display_width(shown) == display_width(text)
    assert display_width(text + text) == 2 * display_width(text)


# --- the tables ---------------------------------------------------------------------------

#: Case ids whose code points and columns differ: CJK (10 columns in 5 characters),
#: combining accents (6 in 8), an emoji, and plain ASCII.
CASES = ["注文の状況", "re\u0301sume\u0301", "order", "返品\U0001f4e6"]
#: Variant names of 8 columns: 4 katakana, 9 characters with a combining grave.
OLD, NEW, THIRD = "旧モデル", "mode\u0300le-2", "第三版"
#: Tags that differ the same way.
TAGS = {
    "注文の状況": ["注文"],
    "re\u0301sume\u0301": ["re\u0301sume\u0301s"],
    "order": ["注文"],
    "返品\U0001f4e6": ["plain"],
}


@pytest.fixture
def wide_file(tmp_path):
    variants = [OLD, NEW, THIRD]
    head = manifest(CASES, variants, 6)
    for case in head["cases"]:
        case["tags"] = TAGS[case["id"]]
    drawn = []
    for i, case in enumerate(CASES):
        for r in range(6):
            for k, (variant, passes) in enumerate(((OLD, 2 + i % 2), (NEW, 5), (THIRD, 4))):
                score = ((r + k + i) % 7) / 6
                drawn.append(
                    sample(case, variant, r, r < passes, name="形式", axis="内容", score=score)
                )
    return str(write(tmp_path / "results.jsonl", head, drawn, {"status": "finished"}))


def _out(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.splitlines()


def _table(lines, title):
    """The lines of the table under the line starting with ``title``, to a blank line."""
    start = next(i for i, line in enumerate(lines) if line.startswith(title)) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line)
    return rows


def _column(line, pattern, start=0):
    """The display column where ``pattern`` first matches in ``line`` after ``start``."""
    m = re.compile(pattern).search(line, start)
    assert m is not None, (pattern, line)
    return display_width(line[: m.start()])


def _end(line, pattern, start=0):
    """The display column just after the first match of ``pattern`` in ``line`` after
    ``start`` (of a right-aligned column, its end is the column's edge)."""
    m = re.compile(pattern).search(line, start)
    assert m is not None, (pattern, line)
    return display_width(line[: m.end()])


def _count_end(line, start=0):
    """The display column just after the first count like 2/6 or 4/12."""
    return _end(line, r"\d+/\d+", start)


#: The start of an interval like 33% (10% to 70%) or +50% (−4% to +77%).
INTERVAL = r"[+−-]?\d+% \("


def test_report_per_case_table_lines_up(wide_file, capsys):
    rows = _table(_out(capsys, "report", wide_file), "per case")
    head, body = rows[0], rows[1:]
    assert len(body) == len(CASES) * 3
    # case: 2 + 10 columns ("注文の状況") + 2, variant: 8 + 2, passes: 7 (right-aligned)
    assert _column(head, "variant") == 14
    assert _column(head, "passes") == 25
    for row in body:
        case = next(c for c in CASES if row.startswith(f"  {c} "))
        assert _column(row, r"\S", 2 + len(case)) == 14, row  # the variant
        assert _count_end(row) == 31, row  # the end of passes
        assert _column(row, INTERVAL) == _column(head, "rate") == 33, row
        assert _column(row, "形式") == _column(head, "most failed") == 76, row


def test_report_per_tag_axis_and_check_tables_line_up(wide_file, capsys):
    lines = _out(capsys, "report", wide_file)
    tags = _table(lines, "per tag")
    assert len(tags) == 3 * 3
    # tag: the widest is "résumés" (7 columns, 9 characters), then the variant (8)
    assert {_column(row, r"\S", 2 + len(row.split()[0])) for row in tags} == {11}
    assert {_count_end(row) for row in tags} == {28}
    assert {_column(row, INTERVAL) for row in tags} == {30}
    for title, after in (("per axis", "内容"), ("per check", "形式")):
        rows = _table(lines, title)
        assert len(rows) == 3
        assert {_column(row, after) for row in rows} == {12}, rows


def test_compare_per_case_table_lines_up(wide_file, capsys):
    rows = _table(_out(capsys, "compare", wide_file, "--a", OLD, "--b", NEW), "per case")
    head, body = rows[0], rows[1:]
    assert len(body) == len(CASES)
    # "  " + 10 columns + "  " + 7 (A, right-aligned) + "  " + 7 (B)
    assert _end(head, "A") == 21
    assert {_count_end(row) for row in body} == {21}
    assert {_count_end(row, row.index("/") + 2) for row in body} == {30}
    assert {_column(row, INTERVAL) for row in body} == {_column(head, "B - A")} == {32}


def test_compare_mean_score_per_case_table_lines_up(wide_file, capsys):
    rows = _table(_out(capsys, "compare", wide_file, "--a", OLD, "--b", NEW), "per case: mean")
    head, body = rows[0], rows[1:]
    assert len(body) == len(CASES)
    # "  " + 10 columns + "  " + 5 (A, right-aligned) + "  " + 5 (B) + "  " + 6 (B - A)
    assert {_end(row, r"\d\.\d\d") for row in body} == {_end(head, "A")} == {19}
    assert {_column(row, r"(?<=\d) +\S+$") for row in body} == {34}  # the end of B - A


def test_compare_of_several_variants_lines_up(wide_file, capsys):
    lines = _out(capsys, "compare", wide_file, "--all-pairs")
    rates = [r for r in _table(lines, "  comparison") if " vs " in r]
    scores = [r for r in _table(lines, "mean scores") if " vs " in r]
    assert len(rates) == len(scores) == 3
    # "  " + the widest comparison, "modèle-2 vs 旧モデル" (20 columns, 21 characters) + "  "
    assert {_column(row, INTERVAL) for row in rates} == {24}
    assert {_column(row, r"[+−]?\d\.\d\d \(") for row in scores} == {24}


def test_corrected_rates_table_lines_up():
    from types import SimpleNamespace

    from evalstats.presenting._review_design import CorrectedRates, CorrectedRow
    from evalstats.stats._intervals import proportion_ci

    def row(variant):
        return CorrectedRow(
            variant,
            proportion_ci(6, 10),
            6,
            10,
            proportion_ci(3, 5),
            3,
            5,
            proportion_ci(7, 12),
        )

    design = SimpleNamespace(stratified_by=None, sample=5, population=10, seed=1)
    rates = CorrectedRates(design, (row(OLD), row(NEW), row("v")), None, None, 0, 0)  # type: ignore[arg-type]
    rows = [line for line in rates.lines("95%") if "automatic" in line]
    assert len(rows) == 3
    assert {_column(line, "automatic") for line in rows} == {2 + 8 + 2}
    assert {_column(line, "reviewed") for line in rows} == {_column(rows[2], "reviewed")}
