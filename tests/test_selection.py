"""Running part of a suite: --case (shell patterns), --tag, --limit, recorded in the manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.results._file import read_results
from evalstats.running._engine import run
from evalstats.running._suite import load_suite

EXAMPLE = str(Path(__file__).resolve().parent.parent / "cases" / "example.yaml")
SHOP = ["--variant", "old=standin:shop-v1", "--variant", "new=standin:shop-v2"]


def _cases(path: Path) -> list[str]:
    return sorted({s["case"] for s in read_results(path).samples})


def test_select_by_pattern_tag_and_limit() -> None:
    suite = load_suite(EXAMPLE)
    assert [c.id for c in suite.select(ids=["order*"])] == ["order status"]
    # thank-you is a holdout case: selected only with include_holdout
    assert [c.id for c in suite.select(ids=["*t*"])] == ["order status", "discount trick"]
    both = suite.select(include_holdout=True, tags=["safety", "tone"])
    assert [c.id for c in both] == ["discount trick", "thank-you"]
    # both kinds given: a case must pass both; the limit then keeps the first in file order
    chosen = suite.select(include_holdout=True, ids=["*t*"], tags=["tone", "orders"])
    assert [c.id for c in chosen] == ["order status", "thank-you"]
    assert [c.id for c in suite.select(limit=2)] == ["order status", "discount trick"]
    assert [c.id for c in suite.select(limit=99)] == [c.id for c in suite.select()]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"ids": ["oder status"]},
            "case='oder status' matches no case.*did you mean 'order status'",
        ),
        ({"tags": ["safty"]}, "tag='safty' is on no case.*did you mean 'safety'"),
        ({"limit": 0}, "limit=0"),
        ({"ids": "order status"}, "must be a list of strings"),
    ],
)
def test_a_selection_that_names_nothing_is_refused(kwargs, message) -> None:
    with pytest.raises(InvalidArgument, match=message):
        load_suite(EXAMPLE).select(**kwargs)


def test_run_records_the_selection_and_runs_only_it(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run(EXAMPLE, ["v=standin:shop-v1"], runs=2, out=out, progress=False, tags=["safety"], limit=1)
    results = read_results(out)
    assert _cases(out) == ["discount trick"]
    assert results.manifest["selection"] == {"tags": ["safety"], "limit": 1}
    assert [c["id"] for c in results.manifest["cases"]] == ["discount trick"]
    whole = tmp_path / "all.jsonl"
    run(EXAMPLE, ["v=standin:shop-v1"], runs=1, out=whole, progress=False)
    assert read_results(whole).manifest["selection"] is None


def test_cli_case_tag_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    argv = ["run", EXAMPLE, *SHOP, "--runs", "1", "--case", "order*", "--case", "disc*"]
    assert main([*argv, "--out", str(out)]) == 0
    assert _cases(out) == ["discount trick", "order status"]
    assert (
        main(
            [
                "run",
                EXAMPLE,
                *SHOP,
                "--runs",
                "1",
                "--limit",
                "1",
                "--out",
                str(tmp_path / "l.jsonl"),
            ]
        )
        == 0
    )
    assert _cases(tmp_path / "l.jsonl") == ["order status"]
    capsys.readouterr()
    bad = tmp_path / "bad.jsonl"
    assert main(["run", EXAMPLE, *SHOP, "--runs", "1", "--tag", "nope", "--out", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tag='nope'" in err and "Traceback" not in err
    assert not bad.exists()


def test_resume_with_another_selection_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run(EXAMPLE, ["v=standin:shop-v1"], runs=1, out=out, progress=False, tags=["safety"])
    before = out.read_bytes()
    with pytest.raises(Exception, match="cases"):
        run(
            EXAMPLE,
            ["v=standin:shop-v1"],
            runs=1,
            out=out,
            progress=False,
            tags=["tone"],
            resume=True,
        )
    assert out.read_bytes() == before
