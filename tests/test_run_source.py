"""A run opened once per command (evalstats.reading._source.RunSource): read once,
its report and comparisons made once, however many outputs show them."""

from __future__ import annotations

import builtins
import io
import os

import pytest
from records import manifest, samples, write

import evalstats.presenting._report as report_module
from evalstats.cli import main
from evalstats.deciding._gate import gate
from evalstats.errors import InvalidArgument
from evalstats.presenting._html import render_html
from evalstats.presenting._plots import report_plots
from evalstats.presenting._report import report
from evalstats.reading._source import RunSource, tally
from evalstats.reading._tally import Tally
from evalstats.results._file import read_results

OUTCOMES = {
    "A": {"c1": [True, False, True], "c2": [False, False, True]},
    "B": {"c1": [True, True, True], "c2": [True, None, True]},
}


@pytest.fixture
def run_file(tmp_path):
    run = manifest(["c1", "c2"], ["A", "B"], 3)
    return write(tmp_path / "r.jsonl", run, samples(OUTCOMES), {"status": "finished"})


@pytest.fixture
def counted(monkeypatch, run_file):
    """How many times anything opened the results file (by ``open``, ``io.open`` or
    ``os.open``: to tell its format, to count it, to read its records), and how many
    times the report was made."""
    seen = {"opens": 0, "reports": 0}
    target = os.path.realpath(run_file)
    real_open, real_os_open, making = builtins.open, os.open, report_module._report

    def count(file):
        if isinstance(file, str | bytes | os.PathLike):
            seen["opens"] += os.path.realpath(os.fsdecode(file)) == target

    def count_open(file, *args, **kwargs):
        count(file)
        return real_open(file, *args, **kwargs)

    def count_os_open(file, *args, **kwargs):
        count(file)
        return real_os_open(file, *args, **kwargs)

    def count_report(*args, **kwargs):
        seen["reports"] += 1
        return making(*args, **kwargs)

    monkeypatch.setattr(builtins, "open", count_open)
    monkeypatch.setattr(io, "open", count_open)
    monkeypatch.setattr(os, "open", count_os_open)
    monkeypatch.setattr(report_module, "_report", count_report)
    return seen


def test_report_with_figures_and_a_page_reads_the_file_once(run_file, tmp_path, counted, capsys):
    page = tmp_path / "r.html"
    argv = ["report", str(run_file), "--plots", str(tmp_path / "figs"), "--html", str(page)]
    assert main(argv) == 0
    assert counted == {"opens": 1, "reports": 1}
    text = capsys.readouterr().out
    assert text.strip() == str(report(run_file))
    assert page.read_text(encoding="utf-8") == render_html(run_file)
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "forest.png",
        "paired-differences.png",
    ]


@pytest.mark.parametrize("extra", [[], ["--plots", "FIGS"], ["--html", "PAGE"]])
def test_report_alone_or_with_one_output_reads_the_file_once(
    run_file, tmp_path, counted, capsys, extra
):
    paths = {"FIGS": str(tmp_path / "figs"), "PAGE": str(tmp_path / "r.html")}
    assert main(["report", str(run_file), *[paths.get(a, a) for a in extra]]) == 0
    assert counted == {"opens": 1, "reports": 1}
    capsys.readouterr()


def test_a_source_made_of_a_path_is_read_once_by_every_view(run_file, tmp_path, counted):
    source = RunSource(run_file, records=True)
    first = report(source)
    report_plots(source, tmp_path / "figs")
    render_html(source)
    assert gate(source, variant="B", min_pass=0.5).passed
    assert report(source) is first and counted == {"opens": 1, "reports": 1}
    assert report(source, level=0.9) is not first and counted["reports"] == 2


def test_the_page_alone_reads_the_records_once_and_counts_them(run_file, counted):
    assert render_html(RunSource(run_file)) == render_html(run_file)
    assert counted["opens"] == 1 + 1  # once for each page


def test_every_kind_of_run_counts_the_same(run_file):
    res = read_results(run_file)
    lines = [res.manifest, *res.samples, res.summary]
    expected = report(run_file).to_dict()
    for source in (run_file, str(run_file), res, tally(run_file), iter(lines), lines):
        got = report(RunSource(source)).to_dict()
        got["path"] = expected["path"]
        assert got == expected, type(source)


def test_a_source_is_itself_and_counts_are_a_source():
    t = tally([manifest(["c"], ["A"], 1), *samples({"A": {"c": [True]}})])
    source = RunSource.of(t)
    assert RunSource.of(source) is source and source.tally() is t and tally(source) is t
    assert isinstance(t, Tally)


def test_records_in_memory_have_no_records_to_list(capsys):
    source = RunSource([manifest(["c"], ["A"], 1), *samples({"A": {"c": [True]}})])
    with pytest.raises(InvalidArgument, match="needs each sample's record: give the results"):
        render_html(source)


@pytest.mark.parametrize("bad", [42, b"r.jsonl", {"manifest": {}}, None])
def test_anything_else_is_refused_by_name(bad):
    with pytest.raises(InvalidArgument, match="must be a Results .* or the path of a results"):
        RunSource(bad)


def test_a_file_opened_to_tell_its_format_is_read_from_that_opening(run_file, counted):
    source = RunSource.open(run_file)
    assert counted["opens"] == 1
    assert source.tally().outcomes("A") == tally(run_file).outcomes("A")
    assert counted["opens"] == 2  # the source's count, then tally(run_file)'s own
    source.results()  # the records, not kept by the count: read again, opened again
    assert counted["opens"] == 3


def test_opening_a_missing_file_names_it(tmp_path):
    from evalstats.errors import ResultsFileError

    with pytest.raises(ResultsFileError, match="no such results file or log"):
        RunSource.open(tmp_path / "none.jsonl")
