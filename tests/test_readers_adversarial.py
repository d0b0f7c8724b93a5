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

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from importing import cli, one_line_error

from evalstats.reading._log_table import table_run
from evalstats.reading._logs import detect_format, load_results

DATA = Path(__file__).parent / "data"
PROMPTFOO = DATA / "promptfoo" / "promptfoo-results.json"

# --- CSV tables against an independent count ---------------------------------------

#: Case ids as people write them: numbers, zeros that matter, separators, quotes.
CASES = ["q1", "007", "7", "1.0", "x y", "q,3", "a;b", 'say "hi"', "é", "tab\there"]
#: Pass cells, each with the outcome it stands for (None: not measured).
PASS_CELLS = {
    "1": True,
    "true": True,
    "True": True,
    "TRUE": True,
    "yes": True,
    "Y": True,
    "pass": True,
    "C": True,
    "1.0": True,
    " 1 ": True,
    "0": False,
    "false": False,
    "False": False,
    "no": False,
    "N": False,
    "fail": False,
    "I": False,
    "0.0": False,
    " no ": False,
    "": None,
}
ANSWERS = ["", "plain", "a, b; c", 'she said "no"', "two\nlines", "crlf\r\nend", "x" * 300]


@st.composite
def written_tables(draw):
    """A table's rows (its truth), and its text as some tool would write it."""
    variants = draw(st.sampled_from([["a"], ["a", "b"], ["new", "old", "base"]]))
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(CASES),
                st.sampled_from(variants),
                st.sampled_from(sorted(PASS_CELLS)),
                st.sampled_from(ANSWERS),
                st.sampled_from(["", "0.5", "12"]),
            ),
            min_size=1,
            max_size=40,
        )
    )
    sep = draw(st.sampled_from([",", ";", "\t"]))
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    if end == "\r":  # the writer quotes no LF in a cell then: one line to any reader
        rows = [(c, v, p, a.replace("\r", "").replace("\n", " "), s) for c, v, p, a, s in rows]
    header = ["case", "variant", "passed", "answer", "latency_s"]
    if quoting == csv.QUOTE_ALL:  # quoted, a name may hold the other separators
        header.append("note, with, commas; and; more")
    else:
        header.append("note")
    order = draw(st.permutations(range(len(header))))
    names = [draw(st.sampled_from([n, n.upper(), f" {n} "])) for n in header]
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=sep, quoting=quoting, lineterminator=end)
    writer.writerow([names[k] for k in order])
    for row in rows:
        cells = [*row, "free text"]
        writer.writerow([cells[k] for k in order])
    text = out.getvalue()
    text = draw(st.sampled_from(["", end, end + end])) + text  # blank lines before
    text += draw(st.sampled_from(["", end, end + end]))  # and after
    bom = draw(st.booleans())
    return rows, text, bom


def truth_counts(rows):
    """Passes, measured and not measured per (variant, case), counted by pandas."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "case": [c.strip() for c, *_ in rows],
            "variant": [v for _, v, *_ in rows],
            "outcome": [PASS_CELLS[p] for _, _, p, *_ in rows],
        }
    )
    frame["passed"] = frame["outcome"].map(lambda o: o is True)
    frame["measured"] = frame["outcome"].map(lambda o: o is not None)
    frame["unmeasured"] = ~frame["measured"]
    grouped = frame.groupby(["variant", "case"])[["passed", "measured", "unmeasured"]].sum()
    return {key: tuple(int(x) for x in values) for key, values in grouped.iterrows()}


def tally_counts(tally):
    counts = {}
    for variant in tally.variants():
        for case, outcomes in tally.outcomes(variant).items():
            if outcomes:
                counts[(variant, case)] = (
                    sum(o is True for o in outcomes),
                    sum(o is not None for o in outcomes),
                    sum(o is None for o in outcomes),
                )
    return counts


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(written_tables())
def test_a_table_counts_as_its_rows_however_it_is_written(tmp_path, capsys, table):
    rows, text, bom = table
    path = tmp_path / "t.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    expected = truth_counts(rows)
    assert tally_counts(table_run(path).tally()) == expected
    assert tally_counts(load_results(path)) == expected
    code, out, err = cli(capsys, "report", path, "--json")
    assert code == 0, err
    report = {v["variant"]: v for v in json.loads(out)["variants"]}
    for variant in {v for v, _ in expected}:
        mine = [n for (v, _), n in expected.items() if v == variant]
        assert report[variant]["passes"] == sum(n[0] for n in mine)
        assert report[variant]["measured"] == sum(n[1] for n in mine)
        assert report[variant]["unmeasured"] == sum(n[2] for n in mine)


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Lines ended by CR alone, as old spreadsheets on the Mac write them.
        ("case,passed\rq1,1\rq2,0\r", {"q1": [True], "q2": [False]}),
        ('case,passed,answer\rq1,1,"two\rlines"\rq2,0,x\r', {"q1": [True], "q2": [False]}),
        # Blank lines before the header.
        ("\ncase,passed\nq1,1\nq2,0\n", {"q1": [True], "q2": [False]}),
        ("\r\n  \r\ncase,passed\r\nq1,1\r\n", {"q1": [True]}),
        # A semicolon table whose quoted header names hold commas.
        (
            '"case";"passed";"note, with, commas"\nq1;1;"a, b"\nq2;0;x\n',
            {"q1": [True], "q2": [False]},
        ),
        ('"case"\t"a, b, c; d; e"\t"passed"\nq1\tx, y\tyes\n', {"q1": [True]}),
        # A semicolon table whose unquoted header and rows hold more commas than
        # semicolons (as a spreadsheet set to semicolons writes them).
        (
            "case;passed;note, short, free\nq1;1;x, y, z\nq2;0;u, v, w\n",
            {"q1": [True], "q2": [False]},
        ),
        ("case;passed;a, b, c\nq1;1;x\nq2;0;y\n", {"q1": [True], "q2": [False]}),
        ("case\tpassed\tnote, x\nq1\t1\tfoo\n", {"q1": [True]}),
    ],
)
def test_a_table_as_other_writers_write_it(tmp_path, text, expected):
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    assert load_results(path).outcomes("t") == expected


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("case,passed\nq1,1\nq2,maybe\n", "row 3: "),
        # A blank line: the third row is on the file's fourth line.
        ("case,passed\nq1,1\n\nq2,maybe\n", "row 3 (line 4): "),
        ("\n\ncase,passed\nq1,1\nq2,maybe\n", "row 3 (line 5): "),
        # A quoted cell over two lines.
        ('case,passed,answer\nq1,1,"two\nlines"\nq2,maybe,x\n', "row 3 (line 4): "),
        ('case,passed,answer\r\nq1,1,"a\r\nb\r\nc"\r\n\r\nq2,maybe,x\r\n', "row 3 (line 6): "),
    ],
)
def test_a_refused_cell_names_the_line_it_is_on(tmp_path, capsys, text, place):
    """An editor shows lines: where blank lines or cells over several lines put a row
    on another line than its number, the error names both."""
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    line = one_line_error(capsys, "report", path, naming=[path, place + "column 'passed'"])
    assert "'maybe'" in line
    lines = text.replace("\r\n", "\n").split("\n")
    if "(line " in place:  # the line named is the one that holds the cell
        number = int(place.split("(line ")[1].split(")")[0])
        assert lines[number - 1].startswith("q2,maybe")


def test_a_quoted_answer_longer_than_the_csv_modules_cap_is_read(tmp_path):
    """A long answer (200,000 characters) quoted because it holds a comma: the csv
    module's cap of 128 KiB a cell is the table's size here, and left as it was."""
    answer = "word, " * 40_000
    path = tmp_path / "t.csv"
    path.write_text(f'case,passed,answer\nq1,1,"{answer}"\nq2,0,short\n', encoding="utf-8")
    before = csv.field_size_limit()
    res = load_results(path)
    assert res.outcomes("t") == {"q1": [True], "q2": [False]}
    assert res.samples[0]["answer"] == answer.strip()
    assert csv.field_size_limit() == before


# --- Parquet ------------------------------------------------------------------------


def _parquet(tmp_path, columns):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), path)
    return path


def test_parquet_nulls_dictionaries_and_integer_ids_count_as_pandas_counts(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    cases = [3, 1, 3, 2, 1, 3]
    variants = ["a", "b", "a", "a", "a", "b"]
    passed = [True, None, False, True, True, None]
    path = _parquet(
        tmp_path,
        {
            "case": pa.array(cases, pa.int32()),
            "variant": pa.array(variants).dictionary_encode(),
            "passed": pa.array(passed, pa.bool_()),
            "latency_s": pa.array([0.5, None, 1, None, 2, 3], pa.float64()),
        },
    )
    frame = pd.read_parquet(path)
    frame["case"] = frame["case"].astype(str)
    expected = {
        (v, c): (int(g["passed"].fillna(False).sum()), int(g["passed"].notna().sum()))
        for (v, c), g in frame.groupby(["variant", "case"])
    }
    res = load_results(path)
    got = {
        (v, c): (sum(o is True for o in out), sum(o is not None for o in out))
        for v in res.variants()
        for c, out in res.outcomes(v).items()
        if out
    }
    assert got == expected


def test_parquet_case_ids_written_as_whole_floats_are_whole(tmp_path):
    """An integer id column that went through floats (pandas writes an integer column
    with gaps so) names case 7, not 7.0; ids that are not whole stay as they are."""
    pa = pytest.importorskip("pyarrow")
    path = _parquet(
        tmp_path,
        {
            "case": pa.array([7.0, 12.0, 7.0, 2.5], pa.float64()),
            "passed": pa.array([True, False, False, True]),
        },
    )
    assert load_results(path).outcomes("t") == {
        "7": [True, False],
        "12": [False],
        "2.5": [True],
    }


def test_a_parquet_decimal_column_is_a_number(tmp_path):
    """DECIMAL columns (as SQL engines write rounded numbers) are numbers: a pass
    column of 1 and 0, a score column of 0.5."""
    import decimal

    pa = pytest.importorskip("pyarrow")
    path = _parquet(
        tmp_path,
        {
            "case": ["q1", "q1", "q2"],
            "passed": pa.array([decimal.Decimal(x) for x in "101"], pa.decimal128(3, 0)),
            "rating": pa.array(
                [decimal.Decimal(x) for x in ("0.5", "1.0", "0.0")], pa.decimal128(3, 1)
            ),
        },
    )
    res = load_results(path, columns="score=rating")
    assert res.outcomes("t") == {"q1": [True, False], "q2": [True]}
    assert [s["score"] for s in res.samples] == [0.5, 1.0, 0.0]


def test_parquet_text_written_as_bytes_is_text(tmp_path, capsys):
    """Some writers store strings as BINARY without the UTF-8 annotation; their ids
    are the text, not ``b'q1'``. Bytes that are not UTF-8 are refused naming the column."""
    pa = pytest.importorskip("pyarrow")
    path = _parquet(
        tmp_path,
        {"case": pa.array([b"q1", b"q2"], pa.binary()), "passed": pa.array([b"yes", b"no"])},
    )
    assert load_results(path).outcomes("t") == {"q1": [True], "q2": [False]}
    path = _parquet(tmp_path, {"case": pa.array([b"q\xe9"], pa.binary()), "passed": [1]})
    one_line_error(capsys, "report", path, naming=[path, "column 'case'", "not UTF-8"])


def test_a_parquet_duration_latency_is_its_seconds(tmp_path):
    pa = pytest.importorskip("pyarrow")
    path = _parquet(
        tmp_path,
        {
            "case": ["q1", "q2"],
            "passed": [1, 0],
            "latency_s": pa.array([1500, None], pa.duration("ms")),
        },
    )
    assert [s.get("latency_s") for s in load_results(path).samples] == [1.5, None]


# --- promptfoo ----------------------------------------------------------------------


def _promptfoo(tmp_path, change):
    doc = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    change(doc)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def _prompt_labels(doc, labels):
    for prompt, label in zip(doc["results"]["prompts"], labels, strict=True):
        prompt["label"] = label
    for entry in doc["results"]["results"]:
        entry["prompt"]["label"] = labels[entry["promptIdx"]]


@pytest.mark.parametrize(
    "labels",
    [
        ["same", "same"],
        # Long prompts alike in their first 60 characters, the length of a name.
        [
            "You are a helpful support assistant for an online shop. Reply tersely.",
            "You are a helpful support assistant for an online shop. Reply politely.",
        ],
    ],
)
def test_promptfoo_prompts_whose_names_agree_stay_two_variants(tmp_path, labels):
    """Each (provider, prompt) is a variant: two prompts of one name were one variant,
    and half the answers were dropped as second samples of the first."""
    base = load_results(PROMPTFOO)
    path = _promptfoo(tmp_path, lambda doc: _prompt_labels(doc, labels))
    res = load_results(path)
    assert len(res.variants()) == 2
    assert len(res.samples) == len(base.samples)
    assert not any("a second sample" in w for w in res.warnings)
    for mine, theirs in zip(res.variants(), base.variants(), strict=True):
        assert list(res.outcomes(mine).values()) == list(base.outcomes(theirs).values())


def test_promptfoo_names_that_differ_are_kept(tmp_path):
    assert load_results(PROMPTFOO).variants() == ("terse", "polite")


@pytest.mark.parametrize(
    ("value", "kind"), [("3", "a string"), (-3, "a number"), (2.5, "a number")]
)
def test_promptfoo_token_counts_of_the_wrong_type_name_the_entry(tmp_path, capsys, value, kind):
    def change(doc):
        doc["results"]["results"][4]["response"]["tokenUsage"] = {
            "total": 5,
            "prompt": value,
            "completion": 2,
        }

    path = _promptfoo(tmp_path, change)
    one_line_error(
        capsys,
        "report",
        path,
        naming=[path, "results.results[4].response.tokenUsage.prompt", kind],
    )


def test_promptfoo_token_counts_left_null_are_none(tmp_path):
    def change(doc):
        doc["results"]["results"][0]["response"]["tokenUsage"] = {"total": 5, "prompt": None}

    assert len(load_results(_promptfoo(tmp_path, change)).samples) == 18


# --- lm-eval ------------------------------------------------------------------------


def test_lm_eval_without_a_metric_names_the_line_it_looked_at(tmp_path, capsys):
    path = tmp_path / "samples_quiz_2024-01-01T00-00-00.jsonl"
    lines = [
        {"doc_id": 0, "filter": "strict", "metrics": ["exact_match"], "exact_match": 1},
        {"doc_id": 0, "filter": "loose", "target": "a"},
    ]
    path.write_text("\n" + "\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    one_line_error(
        capsys, "report", path, "--metric", ",loose", naming=[path, 'line 3 has no "metrics"']
    )
