"""The claim of a verdict (about): chosen, stated and defaulted, for compare_results,
gate, the multi-variant comparison, the report and their commands."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import sample
from strategies import paired_results, results_manifest, write_results_file

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.deciding._gate import gate, non_inferiority
from evalstats.deciding._several import compare_variants
from evalstats.errors import InvalidArgument
from evalstats.presenting._report import report
from evalstats.results._file import Results
from evalstats.stats._claims import DEFAULT_NOTE


def _results(
    per_variant: dict[str, dict[str, list[bool]]], *, paired: bool = True, sampled: bool = False
) -> Results:
    variants = list(per_variant)
    cases = list(next(iter(per_variant.values())))
    runs = max(len(x) for by_case in per_variant.values() for x in by_case.values())
    manifest = results_manifest(cases, variants, runs, sampled=sampled)
    if not paired:
        # variant B's runs scheduled on slots of their own: not paired with A's
        manifest["schedule"] = [
            row if row[4] == variants[0] else [row[0], row[1] + runs, row[2], row[3], row[4]]
            for row in manifest["schedule"]
        ]
    samples = [
        sample(case, v, r if paired or v == variants[0] else r + runs, x)
        for v, by_case in per_variant.items()
        for case, outcomes in by_case.items()
        for r, x in enumerate(outcomes)
    ]
    return Results(None, manifest, tuple(samples), {"status": "finished"}, ())


def _run(cases: int, *, gain: bool = True, runs: int = 4, sampled: bool = False) -> Results:
    """A run where B passes every time and A half the time (or both alike)."""
    a = {f"c{i}": [True, False] * (runs // 2) for i in range(cases)}
    b = {f"c{i}": [True] * runs if gain else [True, False] * (runs // 2) for i in range(cases)}
    return _results({"old": a, "new": b}, sampled=sampled)


# --- compare_results ------------------------------------------------------------------


def test_default_is_these_cases_and_says_why():
    cmp = compare_results(_run(12), "old", "new")
    assert cmp.about == "these_cases" and cmp.about_note == DEFAULT_NOTE
    assert cmp.primary is cmp.these_cases and cmp.primary.method == "mcnemar"
    assert f"verdict: B better, about these cases; {DEFAULT_NOTE}" in str(cmp)
    # the other claim is computed and shown beside it
    assert cmp.cases_like_these is not None and "cases like these: B better" in str(cmp)
    assert cmp.to_dict()["about"] == "these_cases"


def test_a_suite_sampled_at_random_defaults_to_cases_like_these_from_5_cases():
    # 12 cases that all gain 50 points: enough for the distribution-free
    # interval (8 are not: can't tell, +50% (-9% to +82%))
    cmp = compare_results(_run(12, sampled=True), "old", "new")
    assert cmp.about == "cases_like_these"
    assert cmp.about_note == "the suite declares its cases sampled at random"
    assert cmp.primary is cmp.cases_like_these and cmp.primary.method == "clustered"
    assert "verdict: B better, about cases like these" in str(cmp)
    assert cmp.to_dict()["about"] == "cases_like_these"


def test_a_sampled_suite_below_5_cases_is_about_these_cases_and_says_why():
    cmp = compare_results(_run(4, sampled=True), "old", "new")
    assert cmp.about == "these_cases" and cmp.primary is cmp.these_cases
    note = "with 4 cases nothing can be said about cases like these (it takes at least 5)"
    assert cmp.about_note == note
    assert f"verdict: B better, about these cases; {note}" in str(cmp)
    assert cmp.to_dict()["about_note"] == note


def test_scope_is_chosen_explicitly():
    run = _run(8)
    trials = compare_results(run, "old", "new", about="these_cases")
    assert trials.about == "these_cases" and trials.primary is trials.these_cases
    assert trials.about_note == ""  # asked for, so nothing to explain
    # cases like these from 4 cases, asked for: given, with the note
    few = compare_results(_run(4), "old", "new", about="cases_like_these")
    assert few.about == "cases_like_these" and few.primary is few.cases_like_these
    assert few.about_note.startswith("with 4 cases nothing can be said")
    # a method implies its about
    assert compare_results(run, "old", "new", method="mcnemar").about == "these_cases"
    assert compare_results(_run(3), "old", "new", method="clustered").about == "cases_like_these"


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"about": "everything"}, "about='everything'"),
        (
            {"about": "cases_like_these", "method": "mcnemar"},
            "about='cases_like_these' does not fit method='mcnemar'",
        ),
        (
            {"about": "these_cases", "method": "clustered"},
            "about='these_cases' does not fit method='clustered'",
        ),
    ],
)
def test_bad_scope_is_refused_by_name(kwargs, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        compare_results(_run(8), "old", "new", **kwargs)


def test_cases_like_these_needs_two_cases_and_pairs():
    with pytest.raises(
        InvalidArgument, match="about='cases_like_these' needs pairs from at least 2 cases"
    ):
        compare_results(_run(1), "old", "new", about="cases_like_these")
    a = {f"c{i}": [True, False] for i in range(6)}
    b = {f"c{i}": [True, True] for i in range(6)}
    unpaired = _results({"old": a, "new": b}, paired=False)
    with pytest.raises(InvalidArgument, match="about='cases_like_these' needs outcomes paired"):
        compare_results(unpaired, "old", "new", about="cases_like_these")
    default = compare_results(unpaired, "old", "new")
    assert default.about == "these_cases" and default.about_note == DEFAULT_NOTE
    sampled = _results({"old": a, "new": b}, paired=False, sampled=True)
    default = compare_results(sampled, "old", "new")
    assert default.about == "these_cases" and default.about_note.startswith("not paired")


@settings(max_examples=40, deadline=None)
@given(
    pair=paired_results(min_cases=1, max_cases=8, max_repeats=4),
    about=st.sampled_from([None, "these_cases", "cases_like_these"]),
    sampled=st.booleans(),
)
def test_the_primary_verdict_is_the_comparison_of_its_scope(pair, about, sampled):
    a, b = pair
    run = _results({"old": a, "new": b}, sampled=sampled)
    cases = len(a)
    if about == "cases_like_these" and cases < 2:
        with pytest.raises(InvalidArgument, match="about='cases_like_these'"):
            compare_results(run, "old", "new", about=about)
        return
    cmp = compare_results(run, "old", "new", about=about)
    want = about or ("cases_like_these" if cases >= 5 and sampled else "these_cases")
    assert cmp.about == want
    assert cmp.primary is (cmp.cases_like_these if want == "cases_like_these" else cmp.these_cases)
    assert cmp.verdict == cmp.primary.verdict
    assert (cmp.about_note != "") == (about is None or (about == "cases_like_these" and cases < 5))


# --- gate and non_inferiority ----------------------------------------------------------


def test_gate_no_regression_states_its_claim():
    run = _run(8, gain=False, runs=10)
    like = gate(run, variant="new", no_regression_vs="old", margin=0.1, about="cases_like_these")
    these = gate(run, variant="new", no_regression_vs="old", margin=0.1, about="these_cases")
    assert "about cases like these" in like.checked[0]
    assert "about these cases" in these.checked[0] and these.checked[0] != like.checked[0]
    # each shows the other claim beside its verdict; 8 cases cannot show 10
    # points about cases like these, and the line says what it would take
    assert like.beside[0].startswith("about these cases (not the claim decided): not worse")
    assert these.beside[0].startswith("about cases like these (not the claim decided): can't")
    assert "it needs at least 41 cases for a 10% margin" in these.beside[0]
    default = gate(run, variant="new", no_regression_vs="old", margin=0.1)
    assert default.checked[0] == these.checked[0].replace(
        "about these cases)", f"about these cases: {DEFAULT_NOTE})"
    )
    assert default.passed and default.beside == these.beside
    found = non_inferiority(run, "old", "new", margin=0.1, advice=False, about="these_cases")
    assert found.about == "these_cases" and found.comparison.method == "mcnemar"
    assert found.to_dict()["about"] == "these_cases"
    few = non_inferiority(_run(3, gain=False, sampled=True), "old", "new", margin=0.1, advice=False)
    assert few.about == "these_cases" and "with 3 cases nothing can be said" in str(few)
    with pytest.raises(InvalidArgument, match="about='some'"):
        gate(run, variant="new", min_pass=0.5, about="some")


def test_about_these_cases_decides_where_cases_like_these_cannot():
    # 8 cases x 10 runs with new as good as old: the claim about these cases can
    # show "not worse by 10 points"; about cases like these 8 cases cannot
    # (the distribution-free interval needs more cases), and the gate says so.
    run = _run(8, gain=False, runs=10)
    assert non_inferiority(
        run, "old", "new", margin=0.1, advice=False, about="these_cases"
    ).verdict == ("not_worse")
    assert non_inferiority(run, "old", "new", margin=0.1, advice=False).verdict == "not_worse"
    like = non_inferiority(run, "old", "new", margin=0.1, advice=False, about="cases_like_these")
    assert like.verdict == "cant_tell"
    sampled = _run(8, gain=False, runs=10, sampled=True)
    assert non_inferiority(sampled, "old", "new", margin=0.1, advice=False).verdict == "cant_tell"


# --- several variants and the report ---------------------------------------------------


def _three(cases: int = 8, *, sampled: bool = False) -> Results:
    return _results(
        {
            "a": {f"c{i}": [True, False] * 5 for i in range(cases)},
            "b": {f"c{i}": [True] * 10 for i in range(cases)},
            "c": {f"c{i}": [True, False] * 5 for i in range(cases)},
        },
        sampled=sampled,
    )


def test_several_variants_about_cases_like_these_use_the_clustered_tests_holm_adjusted():
    run = _three()
    many = compare_variants(run, all_pairs=True, about="cases_like_these")
    assert many.adjust == "holm" and many.about == "cases_like_these"
    assert "Holm-adjusted over 3 comparisons, about cases like these" in str(many)
    assert "about cases like these" in many.ranking()
    for p in many.pairs:
        alone = compare_results(run, p.a, p.b, about="cases_like_these").primary
        assert p.comparison.difference == alone.difference
    # these cases is the default, as for two variants; cases like these beside it
    default = compare_variants(run, all_pairs=True)
    assert default.about == "these_cases" and "about these cases" in default.ranking()
    assert default.beside == many.ranking() and f"beside: {many.ranking()}" in str(default)
    assert many.beside == default.ranking().replace(f": {DEFAULT_NOTE}", "")
    # 8 paired cases of a suite sampled at random: cases like these
    sampled = compare_variants(_three(sampled=True), all_pairs=True)
    assert sampled.about == "cases_like_these"
    assert "about cases like these" in sampled.ranking()
    trials = compare_variants(run, all_pairs=True, about="these_cases")
    assert trials.about == "these_cases" and "about these cases" in trials.ranking()


def test_report_ranking_follows_the_scope():
    run = _three()
    ranking, beside = report(run).ranking.split("\n")
    assert "about these cases" in ranking and beside.startswith("beside: ranking")
    assert "about cases like these" in beside
    assert "about cases like these" in report(run, about="cases_like_these").ranking
    assert "about cases like these" in report(_three(sampled=True)).ranking.split("\n")[0]
    few = report(_three(cases=4, sampled=True)).ranking
    assert "about these cases: with 4 cases nothing can be said about cases like these" in few
    with pytest.raises(InvalidArgument, match="about='all'"):
        report(run, about="all")


# --- the commands ----------------------------------------------------------------------


def _file(tmp_path, run: Results):
    path = tmp_path / "results.jsonl"
    write_results_file(path, run.manifest, [dict(s) for s in run.samples], {"status": "finished"})
    return str(path)


def test_cli_about(tmp_path, capsys):
    path = _file(tmp_path, _run(8, gain=False, runs=10))
    assert main(["compare", path, "--a", "old", "--b", "new", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["about"] == "these_cases"
    assert main(["compare", path, "--a", "old", "--b", "new", "--about", "these-cases"]) == 0
    verdict = [x for x in capsys.readouterr().out.splitlines() if x.startswith("verdict:")]
    assert verdict == ["verdict: can't tell yet, about these cases"] or verdict[0].startswith(
        "verdict: B better, about these cases"
    )
    args = ["gate", path, "--variant", "new", "--no-regression-vs", "old", "--margin", "0.1"]
    assert main(args) == 0
    assert "about these cases" in capsys.readouterr().out
    assert main(args + ["--about", "cases-like-these"]) == 1  # 8 cases cannot show it
    out = capsys.readouterr().out
    assert "about cases like these" in out and "beside: about these cases" in out
    assert main(["report", path, "--about", "cases-like-these"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{f}", "--a", "old", "--b", "new", "--about", "everything"],
        ["gate", "{f}", "--variant", "new", "--min-pass", "0.5", "--about", "x"],
        ["report", "{f}", "--about", "nope"],
        [
            "compare",
            "{f}",
            "--a",
            "old",
            "--b",
            "new",
            "--sequential",
            "--scope",
            "cases_like_these",
        ],
        [
            "compare",
            "{f}",
            "--a",
            "old",
            "--b",
            "new",
            "--about",
            "cases-like-these",
            "--method",
            "mcnemar",
        ],
    ],
)
def test_cli_bad_about_is_one_line_and_exit_2(tmp_path, capsys, argv):
    path = _file(tmp_path, _run(8))
    code = main([a.replace("{f}", path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "about=" in err or "--about" in err


def test_old_spellings_are_refused_with_the_new_one():
    # Python: scope= and the old values name about= and its values.
    run = _results({"old": {"a": [True]}, "new": {"a": [True]}})
    with pytest.raises(
        InvalidArgument, match=r"scope='cases': the claim is now given as about='cases_like_these'"
    ):
        compare_results(run, "old", "new", scope="cases")
    with pytest.raises(
        InvalidArgument, match=r"about='trials' is the old spelling; say about='these_cases'"
    ):
        compare_results(run, "old", "new", about="trials")
    with pytest.raises(InvalidArgument, match=r"scope=.*about="):
        gate(run, variant="new", min_pass=0.5, scope="trials")
