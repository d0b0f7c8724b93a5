"""compare, gate and plan --from count one results file in one streaming pass.

The tally (evalstats.reading._tally) keeps per-variant, per-case and per-(case, repeat)
outcome codes; the comparison counted from it must equal the one counted from
every record read into a Results, and the CLI must never read the file whole.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imported import imported_of
from records import samples
from strategies import paired_run_outcomes, results_manifest, write_results_file

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.deciding._gate import gate
from evalstats.results._file import read_results


def _write(path, outcomes, drop: int = 0):
    cases = list(outcomes["A"])
    runs = len(outcomes["A"][cases[0]])
    records = samples(outcomes, name="c", missed="missed")
    records = records[: len(records) - drop]  # a run stopped early: some slots have no record
    return write_results_file(path, results_manifest(cases, ["A", "B"], runs), records)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    outcomes=paired_run_outcomes(max_cases=6, max_runs=5),
    drop=st.integers(0, 3),
    about=st.sampled_from([None, "these_cases", "cases_like_these"]),
)
def test_the_tally_comparison_equals_the_records_comparison(tmp_path, outcomes, drop, about):
    path = _write(tmp_path / "r.jsonl", outcomes, drop)
    results = read_results(path)
    try:
        expected = compare_results(results, "A", "B", about=about).to_dict()
    except Exception as error:  # the same refusal, by the same words
        with pytest.raises(type(error), match=None) as raised:
            compare_results(str(path), "A", "B", about=about)
        assert str(raised.value) == str(error)
        return
    assert compare_results(str(path), "A", "B", about=about).to_dict() == expected
    # a file cut short is refused unless asked (see tests/test_gate.py); asked, it is
    # judged as far as it went, the same way from the file as from its records
    g_records = gate(results, variant="B", min_pass=0.3, allow_unfinished=True)
    g_file = gate(str(path), variant="B", min_pass=0.3, allow_unfinished=True)
    assert g_file.to_dict() == g_records.to_dict()


GATE = ["gate", "{f}", "--variant", "B", "--min-pass", "0.5", "--allow-unfinished"]
GATE += ["--no-regression-vs", "A", "--margin", "0.05"]


@pytest.fixture
def run_file(tmp_path):
    rng = np.random.default_rng(7)
    outcomes = {
        v: {f"c{i}": [bool(x) for x in rng.random(6) < p] for i in range(6)}
        for v, p in (("A", 0.5), ("B", 0.8))
    }
    return _write(tmp_path / "r.jsonl", outcomes)


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{f}", "--a", "A", "--b", "B"],
        ["compare", "{f}", "--a", "A", "--b", "B", "--about", "these-cases"],
        ["compare", "{f}"],
        GATE,
        ["plan", "--from", "{f}", "--pb", "+0.1", "--approximate"],
    ],
)
def test_compare_gate_and_plan_read_the_file_in_one_streaming_pass(
    run_file, argv, monkeypatch, capsys
):
    import evalstats.results._file as results_module

    argv = [a.format(f=run_file) for a in argv]
    assert main(argv + ["--json"]) in (0, 1)
    expected = json.loads(capsys.readouterr().out)

    def whole(*args, **kwargs):
        raise AssertionError("the whole results file was read into memory")

    monkeypatch.setattr(results_module, "_read", whole)
    assert main(argv + ["--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out) == expected
    with pytest.raises(AssertionError, match="into memory"):
        read_results(run_file)  # the guard itself works


VERBS = pytest.mark.parametrize("argv", [["compare", "{f}", "--a", "A", "--b", "B"], GATE])


@VERBS
def test_compare_and_gate_do_not_import_scipy_stats(run_file, argv):
    # scipy.stats alone takes about 0.5 s and 50 MB to import: more than
    # counting 100,000 samples (benchmarks/compare.py).
    assert imported_of(argv, ["scipy.stats"], run_file) == []


@VERBS
def test_compare_and_gate_of_unscored_samples_import_no_score_or_writing_modules(run_file, argv):
    # Samples without scores have no mean scores to compare, and a verb that
    # only reads writes no file (tempfile imports random, secrets hmac).
    unused = ["evalstats.deciding._score_results", "evalstats.stats._score_compare", "tempfile"]
    assert imported_of(argv, unused, run_file) == []


@VERBS
def test_compare_and_gate_of_a_results_file_do_not_import_the_table_reader(run_file, argv):
    # A results file is no table: telling a table apart needs no table reader (nor csv).
    assert imported_of(argv, ["evalstats.reading._log_table", "csv"], run_file) == []


def test_the_noncentral_t_tail_is_scipy_stats_nct_sf():
    # Reference: scipy.stats.nct.sf and t.isf computing the same quantities.
    from scipy.special import stdtrit
    from scipy.stats import nct, t

    from evalstats.planning._power import _nct_sf

    df = np.array([1.0, 2.0, 4.0, 9.0, 29.0, 199.0])
    for nc in (0.0, 0.7, 2.5, -1.2, 8.0):
        for level in (0.8, 0.95, 0.99):
            crit = -stdtrit(df, (1 - level) / 2)
            assert np.array_equal(crit, t.isf((1 - level) / 2, df))
            assert np.array_equal(_nct_sf(crit, df, nc), nct.sf(crit, df, nc))
