"""Reading part of a run: ``--case`` (patterns), ``--tag`` and ``--variant`` on every
reading verb, the selection stated in the output and the JSON, bad input refused."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import records

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.reading._source import RunSource, Subset
from evalstats.results._file import Results, read_results

SUITE = Path(__file__).resolve().parent.parent / "cases" / "example.yaml"
VARIANTS = ["--variant", "old=standin:shop-v1", "--variant", "new=standin:shop-v2"]


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("subset") / "r.jsonl"
    argv = ["run", str(SUITE), *VARIANTS, "--runs", "4", "--include-holdout", "--no-progress"]
    argv += ["--out", str(out)]
    assert main(argv) == 0
    return out


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_report_by_tag_counts_only_the_tagged_cases(run_file: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["report", str(run_file), "--tag", "orders", "--json"]) == 0
    doc = _json(capsys)
    assert doc["selection"]["cases"] == ["order status"] and doc["selection"]["tags"] == ["orders"]
    assert doc["selection"]["cases_in_run"] == 3
    for v in doc["variants"]:
        assert v["measured"] + v["unmeasured"] == 4  # one case, four repeats
    assert main(["report", str(run_file), "--tag", "orders"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "selection: --tag 'orders': 1 of 3 cases"


def test_the_page_of_a_narrowed_run_says_which_part_it_shows(
    run_file: Path, tmp_path: Path, capsys
) -> None:
    page = tmp_path / "part.html"
    assert main(["report", str(run_file), "--tag", "orders", "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    lede = text[text.index('class="lede"') : text.index("</p>", text.index('class="lede"'))]
    assert "Only part of the run: --tag &#x27;orders&#x27;: 1 of 3 cases." in lede, lede
    whole = tmp_path / "whole.html"
    assert main(["report", str(run_file), "--html", str(whole)]) == 0
    assert "Only part of the run" not in whole.read_text(encoding="utf-8")


def test_report_of_one_variant(run_file: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["report", str(run_file), "--variant", "new", "--json"]) == 0
    doc = _json(capsys)
    assert [v["variant"] for v in doc["variants"]] == ["new"]
    assert doc["selection"]["variants"] == ["new"] and doc["selection"]["variants_in_run"] == 2


def test_compare_by_case_pattern_pairs_only_those_cases(run_file: Path, capsys) -> None:
    capsys.readouterr()
    argv = ["compare", str(run_file), "--a", "old", "--b", "new", "--json"]
    assert main([*argv, "--case", "*r*"]) == 0
    doc = _json(capsys)
    kept = doc["selection"]["cases"]
    assert kept == ["order status", "discount trick"]
    assert doc["these_cases"]["trials_a"] == 4 * len(kept)
    assert main(argv) == 0  # all of it, and no selection stated
    doc = _json(capsys)
    assert "selection" not in doc and doc["these_cases"]["trials_a"] == 12


def test_gate_on_part_of_the_run(run_file: Path, capsys) -> None:
    capsys.readouterr()
    argv = ["gate", str(run_file), "--variant", "new", "--min-pass", "0.0", "--tag", "tone"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "selection: --tag 'tone': 1 of 3 cases"
    assert main([*argv, "--json"]) == 0
    assert _json(capsys)["selection"]["cases"] == ["thank-you"]


def test_import_writes_only_the_selection(run_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "part.jsonl"
    capsys.readouterr()
    assert main(["import", str(run_file), "--case", "thank*", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "selection: --case 'thank*': 1 of 3 cases" in printed
    part = read_results(out)
    assert {s["case"] for s in part.samples} == {"thank-you"}
    assert [c["id"] for c in part.manifest["cases"]] == ["thank-you"]
    assert {s[0] for s in part.manifest["schedule"]} == {"thank-you"}


def test_review_walks_only_the_selection(run_file: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    capsys.readouterr()
    argv = ["review", str(run_file), "--out", str(tmp_path / "rv.jsonl")]
    assert main([*argv, "--case", "order*", "--variant", "new"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("selection: --case 'order*', --variant 'new': 1 of 3 cases")
    assert "4 samples to review" in out  # one case, one variant, four repeats


@pytest.mark.parametrize(
    ("verb", "extra", "named"),
    [
        ("report", ["--tag", "ordrs"], "--tag 'ordrs' is on no case of the run (did you mean"),
        ("report", ["--case", "zz*"], "--case 'zz*' matches no case of the run"),
        ("report", ["--variant", "nwe"], "--variant 'nwe' is not a variant of the run"),
        ("compare", ["--case", "zz*"], "--case 'zz*'"),
        ("gate", ["--variant", "new", "--min-pass", "0.5", "--tag", "x"], "--tag 'x'"),
        ("import", ["--out", "{tmp}/x.jsonl", "--variant", "v9"], "--variant 'v9'"),
        ("review", ["--out", "{tmp}/rv.jsonl", "--tag", "x"], "--tag 'x'"),
    ],
)
def test_a_selection_of_nothing_is_one_line_and_exit_2(
    verb, extra, named, run_file: Path, tmp_path: Path, capsys
) -> None:
    capsys.readouterr()
    argv = [verb, str(run_file), *(x.format(tmp=tmp_path) for x in extra)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def _run() -> Results:
    tags = {"order-1": ["orders"], "order-2": ["orders", "hard"], "refund-1": ["refunds", "hard"]}
    run = records.results({v: {c: [True] for c in tags} for v in ("a", "b")})
    for case in run.manifest["cases"]:
        case["tags"] = tags[case["id"]]
    return run


def test_a_case_must_pass_both_patterns_and_tags() -> None:
    part, selected = Subset(cases=("order*",), tags=("hard",)).apply(_run())
    assert selected.cases == ("order-2",) and {s["case"] for s in part.samples} == {"order-2"}
    part, selected = Subset(tags=("orders", "refunds")).apply(_run())
    assert selected.cases == ("order-1", "order-2", "refund-1")
    with pytest.raises(InvalidArgument, match="keep no case together"):
        Subset(cases=("refund*",), tags=("orders",)).apply(_run())


def test_an_exact_id_with_pattern_characters_matches_itself() -> None:
    run = records.results({v: {"order[1]": [True], "order-1": [False]} for v in ("a", "b")})
    _, selected = Subset(cases=("order[1]",)).apply(run)
    assert selected.cases == ("order[1]",)


def test_the_source_counts_only_the_subset() -> None:
    source = RunSource(_run(), subset=Subset(variants=("b",), cases=("order*",)))
    t = source.tally()
    assert t.variant_names() == ["b"] and t.case_ids() == ["order-1", "order-2"]
    assert str(source.selected) == (
        "selection: --case 'order*', --variant 'b': 2 of 3 cases, 1 of 2 variants"
    )
    with pytest.raises(InvalidArgument, match="subset= narrows"):
        RunSource(iter([]), subset=Subset(tags=("x",)))


def test_plan_from_part_of_a_pilot(run_file: Path, capsys) -> None:
    capsys.readouterr()
    argv = ["plan", "--from", str(run_file), "--pb", "+0.1", "--repeats", "3", "--approximate"]
    assert main([*argv, "--case", "*r*", "--json"]) == 0
    doc = _json(capsys)
    assert doc["selection"]["cases"] == ["order status", "discount trick"]
    assert main([*argv, "--case", "*r*"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("selection: --case '*r*': 2 of 3 cases")
    assert "from a pilot of 2 cases x 4 runs" in out
    # --variant names A and B, in the order given.
    assert main([*argv, "--variant", "new", "--variant", "old", "--json"]) == 0
    swapped = _json(capsys)
    assert main([*argv, "--json"]) == 0
    assert swapped["pilot"] != _json(capsys)["pilot"]


def test_plan_takes_a_selection_only_with_from(capsys) -> None:
    assert main(["plan", "--pa", "0.5", "--pb", "0.6", "--icc", "0.1", "--tag", "orders"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--from" in err
