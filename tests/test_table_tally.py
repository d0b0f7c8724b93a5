"""A table counted from its columns is the tally its records give, field by field.

``report`` and ``compare`` of a CSV or Parquet table count its columns
(:func:`evalstats.reading._log_table.TableRun.tally`) and build its sample records
only for a view that lists samples. These tests draw tables of every shape the
reader takes (a repeat column or none, unmeasured cells, pass words, graded
scores on 0-1 or a discrete scale, latencies, rows given twice) and check that
the counts from the columns equal, field by field and in the order of every key,
those from counting the records, and that the commands print the same.
"""

from __future__ import annotations

import csv
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalstats.cli._main import main
from evalstats.reading._log_common import _place
from evalstats.reading._log_table import table_run
from evalstats.reading._source import RunSource
from evalstats.reading._tally import _tally_results


def state(t):
    """Everything a tally holds, as plain values in the order it holds them."""
    variants = {}
    for name, v in t._variants.items():
        variants[name] = {
            "cells": [
                (
                    case,
                    bytes(c.outcome).rstrip(b"\0"),
                    bytes(c.scheduled).rstrip(b"\0"),
                    c.passes,
                    c.measured,
                    c.incomplete,
                    c.unmeasured,
                )
                for case, c in v.cells.items()
            ],
            "verdicts": list(v.verdicts.items()),
            "levels": list(v.levels.items()),
            "judge_unmeasured": v.judge_unmeasured,
            "counts": (v.completed, v.incomplete, v.unmeasured, v.scheduled),
            "latencies": sorted(v.latencies),
            "latency_blocks": [len(b) for b in v.latencies.micro]
            + [len(b) for b in v.latencies.other],
            "tokens": (v.tok_in, v.tok_out, v.tok_n, v.priced),
            "scores": list(v.scores),
        }
    return {
        "path": t.path,
        "manifest": t.manifest,
        "summary": t.summary,
        "looks": t.looks,
        "warnings": t.warnings,
        "has_schedule": t.has_schedule,
        "observed": t.observed,
        "scheduled_cases": list(t._scheduled_cases),
        "sample_cases": list(t._sample_cases),
        "variants": variants,
        "case_ids": t.case_ids(),
    }


PASS_CELLS = ["1", "0", "yes", "no", "C", "I", "", "true", " 1 "]
SCORED_CELLS = ["1", "0", "0.5", "0.25", "", "C", "P"]
SCALE_CELLS = ["1", "2", "3", "4", "5", "2.5", ""]


@st.composite
def tables(draw):
    """A CSV table's text, and the reader's options for it."""
    cases = draw(st.lists(st.sampled_from(["q1", "q2", "007", "é", "x y", "q,3"]), min_size=1))
    variants = draw(st.sampled_from([["a"], ["a", "b"], ["b", "a", "c"]]))
    repeat_column = draw(st.booleans())
    kind = draw(st.sampled_from(["pass", "score01", "scale15"]))
    latency = draw(st.booleans())
    header = ["case", "variant"] + (["repeat"] if repeat_column else []) + ["passed"]
    options: dict = {}
    if kind != "pass":
        header.append("rating")
        options = {"columns": "score=rating", "pass_threshold": 0.5 if kind == "score01" else 3}
        if kind == "scale15":
            options["scale"] = "1,5"
    if latency:
        header.append("latency_s")
    lines = [",".join(header)]
    rows = draw(st.integers(1, 40))
    for _ in range(rows):
        cells = [
            draw(st.sampled_from(cases)),
            draw(st.sampled_from(variants)),
        ]
        if repeat_column:
            cells.append(str(draw(st.integers(0, 4))))
        if kind == "pass":
            cells.append(draw(st.sampled_from(PASS_CELLS)))
        else:
            score = draw(st.sampled_from(SCORED_CELLS if kind == "score01" else SCALE_CELLS))
            cells += [draw(st.sampled_from(["1", "0", ""])), score]
        if latency:
            cells.append(draw(st.sampled_from(["", "0.25", "1.000001", "5000", "0"])))
        lines.append(",".join(f'"{c}"' if "," in c else c for c in cells))
    return "\n".join(lines) + "\n", options


SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(tables())
def test_the_columns_count_as_the_records_do(tmp_path, table):
    text, options = table
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    run = table_run(path, **options)
    from_columns = state(run.tally())
    from_records = state(_tally_results(table_run(path, **options).results(), checked=True))
    assert from_columns == from_records


@SETTINGS
@given(tables())
def test_the_columns_place_the_rows_as_build_places_records(tmp_path, table):
    """The pairs, positions, schedule, cases and runs found column by column are the
    ones ``build`` finds placing the records one by one."""
    text, options = table
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    res = table_run(path, **options).results()
    unplaced = [{k: v for k, v in s.items() if k not in ("pair", "position")} for s in res.samples]
    names = [v["name"] for v in res.manifest["variants"]]
    notes: list[str] = []
    schedule, cases, runs = _place(unplaced, names, notes)
    if notes:  # a (case, variant, repeat) given twice: build placed the records itself
        return
    assert res.manifest["schedule"] == schedule
    assert [c["id"] for c in res.manifest["cases"]] == list(cases)
    assert res.manifest["runs"] == runs
    assert list(res.samples) == unplaced  # _place set each one's pair and position


def test_a_table_view_builds_records_only_when_it_lists_samples(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("case,variant,passed\nq1,a,1\nq1,b,0\nq2,a,1\nq2,b,1\n", encoding="utf-8")
    source = RunSource(table_run(path))
    source.tally()
    assert source._results is None  # counted from the columns
    assert len(source.results().samples) == 4
    assert source.results() is source.results()


def test_a_table_given_twice_a_slot_is_counted_from_its_records(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("case,variant,repeat,passed\nq1,a,0,1\nq1,a,0,0\nq2,a,0,1\n", encoding="utf-8")
    t = table_run(path).tally()
    assert t.outcomes("a") == {"q1": [True], "q2": [True]}
    assert any("a second sample" in w for w in t.warnings)


def test_report_compare_and_gate_print_what_the_records_give(tmp_path, capsys, monkeypatch):
    """The commands on a table print, byte for byte, what counting its records prints."""
    lines = ["case,variant,repeat,passed,latency_s"]
    for c in range(30):
        for r in range(3):
            for v, shift in (("old", 0), ("new", 1)):
                passed = "" if (c * 7 + r) % 17 == 0 else str(int((c * 3 + r + shift) % 4 > 1))
                lines.append(f"case-{c:02d},{v},{r},{passed},{0.5 + c / 100 + r / 1000}")
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    commands = [
        ["report", str(path)],
        ["report", str(path), "--json"],
        ["compare", str(path), "--a", "old", "--b", "new"],
        ["compare", str(path), "--a", "old", "--b", "new", "--json"],
        ["gate", str(path), "--variant", "new", "--no-regression-vs", "old"],
        ["gate", str(path), "--variant", "new", "--min-pass", "0.4", "--json"],
    ]
    printed = []
    for command in commands:
        main(command)
        printed.append(capsys.readouterr().out)
    # The same commands with the table's tally counted from its records.
    monkeypatch.setattr(
        "evalstats.reading._log_table.TableRun.tally",
        lambda self: _tally_results(self.results(), checked=True),
    )
    for command, before in zip(commands, printed, strict=True):
        main(command)
        assert capsys.readouterr().out == before
    assert json.loads(printed[1])


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=',;\t\n\r"a1é \x00', min_size=1, max_size=60))
def test_a_plain_csv_text_splits_as_the_csv_module_reads_it(text):
    """Split on its separator and new lines, a CSV text gives the columns the csv
    module gives, or is left to the csv module (quotes, carriage returns, NUL,
    lines of another width)."""
    import io

    from evalstats.reading import _log_table

    def read(fast):
        saved = _log_table._plain_columns
        if not fast:
            _log_table._plain_columns = lambda text, sep: None
        try:
            table = _log_table._csv_columns(io.StringIO(text))
        except (ValueError, csv.Error) as error:
            return type(error).__name__
        finally:
            _log_table._plain_columns = saved
        return table.columns, [table[c] for c in table.columns], len(table)

    assert read(True) == read(False)
    if text.strip():
        sep = max((",", ";", "\t"), key=text.split("\n")[0].count)
        plain = _log_table._plain_columns(text, sep)
        if '"' not in text and "\r" not in text and "\x00" not in text:
            lines = (text[:-1] if text.endswith("\n") else text).split("\n")
            if len(lines) > 1 and len({line.count(sep) for line in lines}) == 1 and sep in text:
                assert plain is not None  # the fast path is taken where it can be
