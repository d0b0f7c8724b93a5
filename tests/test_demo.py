"""The demo end to end, and the command's contract: one line and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.demo._shop_demo import run_demo
from evalstats.errors import EvalStatsError, InvalidArgument
from evalstats.results._file import read_results, sample_passed
from evalstats.stats._compare import compare_counts
from evalstats.stats._intervals import proportion_ci


def test_demo_counts_agree_with_the_results_file(tmp_path: Path) -> None:
    result = run_demo(runs=7, seed=4, out=tmp_path, plots=False)
    samples = read_results(tmp_path / "results.jsonl").samples
    assert len(samples) == 2 * 4 * 7
    for variant in ("v1", "v2"):
        mine = [s for s in samples if s["variant"] == variant]
        passes = sum(bool(sample_passed(s)) for s in mine)
        summary = result.report.variant(variant)
        assert (summary.passes, summary.measured) == (passes, len(mine))
        # The overall interval is the Wilson interval of the pooled counts.
        assert summary.per_trial == proportion_ci(passes, len(mine))
    a, b = (result.report.variant(v) for v in ("v1", "v2"))
    assert result.comparisons["newcombe"] == compare_counts(
        a.passes, a.measured, b.passes, b.measured
    )
    assert result.comparisons["mcnemar"].paired and result.comparisons["clustered"].paired
    assert not result.comparisons["overlap"].paired


def test_demo_is_reproducible_for_a_seed_and_varies_across_seeds(tmp_path: Path) -> None:
    def outcomes(seed: int, folder: str) -> list[tuple[str, str, int, bool | None]]:
        run_demo(runs=5, seed=seed, out=tmp_path / folder, plots=False)
        return sorted(
            (s["case"], s["variant"], s["repeat"], sample_passed(s))
            for s in read_results(tmp_path / folder / "results.jsonl").samples
        )

    assert outcomes(3, "a") == outcomes(3, "b")
    assert len({tuple(outcomes(s, f"s{s}")) for s in range(4)}) > 1


def test_demo_text_never_says_no_difference(tmp_path: Path) -> None:
    for seed in range(4):
        text = str(run_demo(runs=3, seed=seed, out=tmp_path / str(seed), plots=False))
        assert "no difference" not in text.lower()
        assert "The stand-in's true pass rates are 70% and 90%." in text


def test_many_runs_make_the_interval_methods_see_the_improvement(tmp_path: Path) -> None:
    # True rates 70% against 90%: at 100 runs per case (400 trials per version)
    # Newcombe, McNemar and the overlap rule detect the 20-point gap with power
    # above 99% (evalstats.planning._power.power_table(0.7, 0.9, [400]) gives 0.9999+).
    result = run_demo(runs=100, seed=0, out=tmp_path, plots=False)
    for method in ("overlap", "newcombe", "mcnemar"):
        assert result.comparisons[method].verdict == "b_better", method
    assert "version 2 is better" in result.meaning


def test_demo_writes_results_and_figures_and_never_overwrites(tmp_path: Path) -> None:
    result = run_demo(runs=2, seed=0, out=tmp_path)
    assert {p.name for p in result.plots} == {"forest.png", "paired-differences.png"}
    for figure in result.plots:
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    before = (tmp_path / "results.jsonl").read_bytes()
    with pytest.raises(EvalStatsError, match="results.jsonl"):
        run_demo(runs=2, seed=1, out=tmp_path)
    assert (tmp_path / "results.jsonl").read_bytes() == before


def test_demo_json_is_one_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--runs", "3", "--json", "--out-dir", str(tmp_path), "--no-plots"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["runs"] == 3
    assert set(document["comparisons"]) == {"overlap", "newcombe", "mcnemar", "clustered"}
    assert document["results_file"].endswith("results.jsonl")


def test_bad_runs_raise_and_the_cli_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidArgument, match="runs=0"):
        run_demo(runs=0)
    assert main(["demo", "--runs", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "runs=0" in err and "Traceback" not in err


def test_an_existing_results_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results.jsonl").write_text("keep me\n")
    assert main(["demo", "--out-dir", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (tmp_path / "results.jsonl").read_text() == "keep me\n"


def test_unknown_verb_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dmeo"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'demo'" in err and err.count("\n") == 1


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--runs", "many"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--runs" in err


@pytest.mark.slow
def test_the_command_runs_the_demo(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalstats", "demo", "--runs", "2", "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Is version 2 better than version 1?" in done.stdout
    assert str(tmp_path / "results.jsonl") in done.stdout


@pytest.mark.slow
def test_demo_over_http_takes_the_path_a_real_model_takes(tmp_path: Path) -> None:
    result = run_demo(runs=3, seed=2, out=tmp_path, plots=False, over_http=True)
    assert result.over_http is not None and result.over_http.startswith("http://127.0.0.1:")
    manifest = result.results.manifest
    assert [v["task"]["kind"] for v in manifest["variants"]] == ["openai", "openai"]
    assert [v["task"]["model"] for v in manifest["variants"]] == ["shop-v1", "shop-v2"]
    samples = result.results.samples
    assert len(samples) == 2 * 4 * 3
    assert all(s["status"] == "completed" and s["model"] for s in samples)
    assert "over HTTP" in str(result)


def test_base_url_needs_over_http() -> None:
    with pytest.raises(InvalidArgument, match="over_http"):
        run_demo(runs=1, base_url="http://127.0.0.1:9/v1")


def test_demo_text_has_the_table_the_comparisons_and_one_plain_sentence(tmp_path: Path) -> None:
    # What `evalstats demo` must print: per case and variant the passes out of
    # runs with the Wilson interval and the most common problems; the overall
    # line; overlap, newcombe and mcnemar side by side; one plain sentence.
    # Every figure is recomputed here from the results file.
    from collections import Counter

    result = run_demo(out=tmp_path, plots=False)  # the defaults: 10 runs, seed 0
    assert result.runs == 10 and result.seed == 0
    text = str(result)
    lines = text.splitlines()
    samples = read_results(tmp_path / "results.jsonl").samples
    cases = ["order status", "broken lamp refund", "discount trick", "thank-you"]
    header = next(i for i, line in enumerate(lines) if line.startswith("case "))
    assert "Wilson" in lines[header] and "failed most often" in lines[header]
    rows = lines[header + 1 : header + 1 + 2 * len(cases)]
    for row, (case, variant) in zip(
        rows, [(c, v) for c in cases for v in ("v1", "v2")], strict=True
    ):
        mine = [s for s in samples if s["case"] == case and s["variant"] == variant]
        passes = sum(bool(sample_passed(s)) for s in mine)
        assert row.split()[: len(case.split()) + 1] == [*case.split(), variant]
        assert f"{passes:>3}/{len(mine)}" in row
        wilson = str(proportion_ci(passes, len(mine), method="wilson"))
        assert wilson in row
        failed = Counter(c["check"] for s in mine for c in s["checks"] if c["status"] == "failed")
        problems = row.split(wilson, 1)[1].strip()
        if not failed:
            assert problems == "-"
        else:
            top = max(failed.values())
            assert any(
                problems.startswith(f"{name} x{n}") for name, n in failed.items() if n == top
            ), (problems, failed)
    for variant, line in zip(("v1", "v2"), lines[header + 1 + 2 * len(cases) :], strict=False):
        mine = [s for s in samples if s["variant"] == variant]
        passes = sum(bool(sample_passed(s)) for s in mine)
        assert line.split()[:2] == ["overall", variant]
        assert f"{passes}/{len(mine)}" in line and str(proportion_ci(passes, len(mine))) in line
    start = lines.index("Is version 2 better than version 1?")
    shown = [line.split()[0] for line in lines[start + 1 :: 2][:4]]
    assert shown[:3] == ["overlap", "newcombe", "mcnemar"]
    for method in ("overlap", "newcombe", "mcnemar"):
        i = start + 1 + 2 * shown.index(method)
        assert lines[i + 1].strip() == str(result.comparisons[method])
    assert result.comparisons["overlap"].method == "overlap"
    assert result.comparisons["mcnemar"].pvalue is not None
    sentence = result.meaning
    assert sentence in lines and sentence.endswith(".")
    assert "no difference" not in sentence.lower()


def test_the_command_takes_runs_and_seed(tmp_path: Path, capsys) -> None:
    assert (
        main(["demo", "--json", "--out-dir", str(tmp_path / "a"), "--no-plots", "--no-progress"])
        == 0
    )
    default = json.loads(capsys.readouterr().out)
    assert (default["runs"], default["seed"]) == (10, 0)
    assert [v["measured"] for v in default["report"]["variants"]] == [40, 40]
    argv = ["demo", "--runs", "4", "--seed", "7", "--no-plots", "--no-progress"]
    assert main([*argv, "--json", "--out-dir", str(tmp_path / "b")]) == 0
    chosen = json.loads(capsys.readouterr().out)
    assert (chosen["runs"], chosen["seed"]) == (4, 7)
    same = run_demo(runs=4, seed=7, out=tmp_path / "c", plots=False)
    assert chosen["comparisons"] == {m: c.to_dict() for m, c in same.comparisons.items()}
    assert main([*argv, "--out-dir", str(tmp_path / "d")]) == 0
    printed = capsys.readouterr().out
    expected = str(run_demo(runs=4, seed=7, out=tmp_path / "d2", plots=False))
    assert (
        printed.replace(str(tmp_path / "d"), "DIR")
        == expected.replace(str(tmp_path / "d2"), "DIR") + "\n"
    )


def test_demo_without_out_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without --out the demo works in a temporary folder and removes it; the samples stay in
    # memory and the text says how to keep them.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = run_demo(runs=2, seed=0)
    assert list(tmp_path.iterdir()) == []
    assert result.directory is None and result.results_file is None and result.plots == ()
    assert result.report.variant("v1").measured == 8
    assert "Add --out-dir DIR" in str(result)
