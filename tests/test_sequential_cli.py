"""The sequential comparison on results files and on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from records import sample

from evalstats.cli import main
from evalstats.deciding._sequential import sequential_compare, sequential_results
from evalstats.errors import InvalidArgument, ResultsFileError
from evalstats.results._file import ResultsWriter, read_results

SHOP = ["--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]


def _write(path: Path, a: dict, b: dict, *, looks: list[dict] | None = None) -> None:
    runs = max(len(v) for v in a.values())
    manifest = {
        "cases": [{"id": c} for c in a],
        "variants": [{"name": "A"}, {"name": "B"}],
        "runs": runs,
        "schedule": [[c, r, 0, 0, v] for r in range(runs) for c in a for v in "AB"],
    }
    with ResultsWriter.create(path, manifest) as w:
        for r in range(runs):
            for c in a:
                w.write_sample(sample(c, "A", r, a[c][r], name="c"))
                w.write_sample(sample(c, "B", r, b[c][r], name="c"))
        for look in looks or ():
            w.write_look(look)
        w.close({"status": "finished"})


def test_results_file_gives_the_same_answer_as_the_outcomes(tmp_path: Path) -> None:
    a = {"x": [True, False] * 10, "y": [False, True] * 10}
    b = {"x": [True] * 20, "y": [True] * 20}
    path = tmp_path / "r.jsonl"
    _write(path, a, b)
    from_file = sequential_results(path, "A", "B")
    direct = sequential_compare(a, b)
    assert from_file.to_dict() == direct.to_dict()


def test_unmeasured_pairs_are_left_out_and_counted(tmp_path: Path) -> None:
    a = {"x": [True, None, False, True], "y": [False, False, False, False]}
    b = {"x": [True, True, True, None], "y": [True, True, True, True]}
    path = tmp_path / "r.jsonl"
    _write(path, a, b)
    got = sequential_results(path, "A", "B")
    assert got.pairs == 6
    assert "2 pairs with an unmeasured or missing side left out" in got.reason


def test_look_records_are_read_and_kept_when_resuming(tmp_path: Path) -> None:
    a = {"x": [True, False]}
    look = {"round": 1, "pairs": 1, "verdict": "cant_tell", "evalue_b": 1.0}
    path = tmp_path / "r.jsonl"
    _write(path, a, a, looks=[look])
    assert [dict(x, type=None) for x in read_results(path).looks] == [dict(look, type=None)]
    writer, resumed = ResultsWriter.resume(path)
    writer.close(None)
    assert len(resumed.looks) == 1
    assert len(read_results(path).looks) == 1  # not truncated away


def test_write_look_needs_pairs_and_verdict(tmp_path: Path) -> None:
    with ResultsWriter.create(tmp_path / "r.jsonl", {"runs": 1}) as w:
        with pytest.raises(InvalidArgument, match="it has no 'verdict'"):
            w.write_look({"pairs": 3})
        w.close(None)


def test_an_unknown_record_type_still_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"type": "manifest", "format": 1}\n{"type": "lok"}\n')
    with pytest.raises(ResultsFileError, match="did you mean 'look'"):
        read_results(path)


def test_cli_compare_sequential_prints_verdict_and_trajectory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "12", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    png = tmp_path / "seq.png"
    assert (
        main(["compare", str(out), "--a", "v1", "--b", "v2", "--sequential", "--plot", str(png)])
        == 0
    )
    text = capsys.readouterr().out
    assert "anytime-valid (these cases)" in text and "48 pairs, 12 looks" in text
    assert "e-value B" in text
    assert png.stat().st_size > 1000
    assert (
        main(
            [
                "compare",
                str(out),
                "--a",
                "v1",
                "--b",
                "v2",
                "--sequential",
                "--json",
                "--about",
                "cases-like-these",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["about"] == "cases_like_these" and len(doc["trajectory"]) == 12


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sequential", "--method", "mcnemar"], "--method is for the fixed-n compare"),
        (["--plot", "x.png"], "--plot and --planned-for go with --sequential"),
        (["--sequential", "--about", "these"], "--about: 'these': choose these-cases or"),
        (["--sequential", "--scope", "these_cases"], "--scope is now --about"),
        (["--about", "trials"], "'trials' is the old spelling; say --about these-cases"),
    ],
)
def test_cli_compare_sequential_bad_usage_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    path = tmp_path / "r.jsonl"
    _write(path, {"x": [True, False]}, {"x": [True, True]})
    assert main(["compare", str(path), "--a", "A", "--b", "B", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_power_and_plan_sequential(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "power",
                "--pa",
                "0.7",
                "--pb",
                "0.9",
                "--trials",
                "60",
                "--sequential",
                "--experiments",
                "300",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "sequential design (these cases)" in text and "budget 60 runs x 1 case" in text
    assert "the fixed design spending all 60 pairs: power" in text
    assert (
        main(
            [
                "plan",
                "--pa",
                "0.7",
                "--pb",
                "0.9",
                "--icc",
                "0.3",
                "--cases",
                "20",
                "--repeats",
                "5",
                "--sequential",
                "--experiments",
                "200",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["simulation"]["settings"]["about"] == "cases_like_these"
    assert doc["simulation"]["budget"] == 100
    assert main(["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0.3", "--sequential"]) == 2
    assert "--sequential needs" in capsys.readouterr().err


# --- run --until-decided -----------------------------------------------------------


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_until_decided_stops_at_the_verdict_and_records_every_look(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    argv = [
        "run",
        "shop",
        *SHOP,
        "--until-decided",
        "--max-runs",
        "40",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    res = read_results(out)
    looks = res.looks
    rounds = len(looks)
    assert [look["round"] for look in looks] == list(range(1, rounds + 1))
    assert [look["pairs"] for look in looks] == [4 * r for r in range(1, rounds + 1)]
    # Every look but the last undecided; the run stopped at the first verdict (or the budget).
    assert all(look["verdict"] == "cant_tell" for look in looks[:-1])
    assert looks[-1]["verdict"] != "cant_tell" or rounds == 40
    assert len(res.samples) == 8 * rounds
    assert res.summary["until_decided"]["rounds"] == rounds  # type: ignore[index]
    assert f"decided after {rounds} of at most 40 rounds" in text or rounds == 40
    # The looks are what the anytime-valid comparison says of the file.
    seq = sequential_results(res, "v1", "v2")
    assert [lk.evalue_b for lk in seq.trajectory] == pytest.approx(
        [look["evalue_b"] for look in looks]
    )
    # The fixed-n compare of the same file warns about the looks.
    assert main(["compare", str(out), "--a", "v1", "--b", "v2"]) == 0
    assert f"looked at {rounds} times" in capsys.readouterr().out
    # report --plots draws the trajectory.
    figures = tmp_path / "figures"
    assert main(["report", str(out), "--plots", str(figures)]) == 0
    assert (figures / "sequential.png").stat().st_size > 1000


def test_until_decided_resume_continues_without_double_counting(tmp_path: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    base = [
        "run",
        "shop",
        *SHOP,
        "--until-decided",
        "--max-runs",
        "40",
        "--no-progress",
        "--seed",
        "3",
    ]
    assert main([*base, "--out", str(whole)]) == 0
    complete = _records(whole)
    looks = [r for r in complete if r["type"] == "look"]
    assert len(looks) >= 4
    # Cut the file as a crash would: after round 3's look and half of round 4.
    cut = tmp_path / "cut.jsonl"
    lines = whole.read_text().splitlines(keepends=True)
    third = next(i for i, r in enumerate(complete) if r["type"] == "look" and r["round"] == 3)
    cut.write_text("".join(lines[: third + 1 + 4]))
    assert main([*base, "--resume", str(cut)]) == 0
    resumed = _records(cut)
    key = lambda r: (r.get("case"), r.get("variant"), r.get("repeat"))  # noqa: E731
    samples = [key(r) for r in resumed if r["type"] == "sample"]
    assert len(samples) == len(set(samples)) == len([r for r in complete if r["type"] == "sample"])
    # the same looks, but for when they were taken
    times = ("type", "started_at", "at")
    strip = lambda r: {k: v for k, v in r.items() if k not in times}  # noqa: E731
    assert [strip(r) for r in resumed if r["type"] == "look"] == [strip(r) for r in looks]
    # Resuming a decided run runs nothing more.
    assert main([*base, "--resume", str(cut)]) == 0
    assert len(_records(cut)) == len(resumed)


def test_until_decided_runs_the_selected_cases_only(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    argv = ["run", "shop", *SHOP, "--until-decided", "--max-runs", "3", "--limit", "2"]
    assert main([*argv, "--out", str(out), "--no-progress", "--seed", "1"]) == 0
    res = read_results(out)
    assert res.manifest["selection"]["limit"] == 2
    assert len({s["case"] for s in res.samples}) == 2
    assert [look["pairs"] for look in res.looks] == [2 * r for r in range(1, len(res.looks) + 1)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--until-decided"], "--until-decided needs --max-runs N"),
        (["--until-decided", "--max-runs", "5", "--runs", "3"], "give --max-runs, not --runs"),
        (["--max-runs", "5", "--runs", "3"], "--max-runs goes with --until-decided"),
        ([], "give --runs N"),
        (
            ["--until-decided", "--max-runs", "5", "--about", "cases-like-these"],
            "repeats add no cases, so it cannot decide about cases like these",
        ),
    ],
)
def test_until_decided_bad_usage_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *SHOP, "--out", str(out), "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_until_decided_needs_two_variants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    argv = [
        "run",
        "shop",
        "--variant",
        "v1=standin:shop-v1",
        "--until-decided",
        "--max-runs",
        "5",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "exactly two variants (A, then B), got 1" in err and err.count("\n") == 1


def test_resuming_a_fixed_run_as_sequential_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "2", "--out", str(out), "--no-progress"]) == 0
    argv = [
        "run",
        "shop",
        *SHOP,
        "--until-decided",
        "--max-runs",
        "5",
        "--resume",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 2
    assert "was not started with --until-decided" in capsys.readouterr().err


def test_fixed_compare_warns_after_a_resumed_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    lines = []
    assert main(["run", "shop", *SHOP, "--runs", "4", "--out", str(out), "--no-progress"]) == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:10]))  # cut short: resumed below
    assert main(["run", "shop", *SHOP, "--runs", "4", "--resume", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(out), "--a", "v1", "--b", "v2"]) == 0
    assert "resumed or extended after an earlier session" in capsys.readouterr().out


def test_demo_sequential_shows_the_pairs_against_the_fixed_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["demo", "--sequential", "--max-runs", "12", "--no-progress", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "a look after every round, at most 12 rounds (48 pairs)" in text
    assert "A fixed design with the power this budget gives" in text
    assert "the fixed design always uses" in text
    assert read_results(tmp_path / "results.jsonl").looks
    assert main(["demo", "--sequential", "--suite", "notes"]) == 2


# --- planning for an effect ---------------------------------------------------------


def test_until_decided_planned_for_is_recorded_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    base = [
        "run",
        "shop",
        *SHOP,
        "--until-decided",
        "--max-runs",
        "3",
        "--no-progress",
        "--seed",
        "2",
    ]
    assert main([*base, "--planned-for", "0.7,0.9", "--out", str(out)]) == 0
    assert "planned for 0.7 -> 0.9" in capsys.readouterr().out
    res = read_results(out)
    recorded = {"p_a": 0.7, "p_b": 0.9, "share": 0.27 / 0.34, "concentration": 60.0}
    planned = res.manifest["until_decided"]["planned_for"]
    assert planned == pytest.approx(recorded)
    assert all(look["planned_for"] == planned for look in res.looks)
    # The trajectory is recomputed from the file with the e-process it recorded:
    # the planned one, which differs from the default mixture.
    again = sequential_results(out, "v1", "v2")
    assert again.planned_for == (0.7, 0.9)
    assert [lk.evalue_b for lk in again.trajectory] == pytest.approx(
        [look["evalue_b"] for look in res.looks], rel=1e-12
    )
    default = sequential_compare(
        {c: [bool(x) for x in v] for c, v in res.outcomes("v1").items()},
        {c: [bool(x) for x in v] for c, v in res.outcomes("v2").items()},
    )
    assert [lk.evalue_b for lk in default.trajectory] != pytest.approx(
        [lk.evalue_b for lk in again.trajectory], rel=1e-6
    )
    # compare --sequential uses what the run recorded, and refuses another plan.
    assert main(["compare", str(out), "--a", "v1", "--b", "v2", "--sequential", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["planned_for"] == [0.7, 0.9]
    argv = ["compare", str(out), "--a", "v1", "--b", "v2", "--sequential"]
    assert main([*argv, "--planned-for", "0.6,0.9"]) == 2
    err = capsys.readouterr().err
    assert "differs from the effect this run was planned for" in err and err.count("\n") == 1
    # A resume with another planned effect (or none) is refused; with the same, it continues.
    more = ["--max-runs", "5", "--resume", str(out)]
    base5 = [a for a in base if a not in ("--max-runs", "3")]
    assert main([*base5, *more]) == 2
    assert "planned_for=None differs from the run's" in capsys.readouterr().err
    assert main([*base5, *more, "--planned-for", "0.7,0.9"]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "shop", *SHOP, "--runs", "2", "--planned-for", "0.7,0.9"], "goes with --until"),
        (
            ["run", "shop", *SHOP, "--until-decided", "--max-runs", "2", "--planned-for", "0.7"],
            "--planned-for='0.7' must be two pass rates PA,PB",
        ),
        (
            [
                "run",
                "shop",
                *SHOP,
                "--until-decided",
                "--max-runs",
                "2",
                "--about",
                "cases-like-these",
                "--planned-for",
                "0.7,0.9",
            ],
            "repeats add no cases, so it cannot decide about cases like these",
        ),
        (
            ["power", "--pa", "0.7", "--pb", "0.9", "--trials", "9", "--planned-for", "0.7,0.9"],
            "--planned-for goes with --sequential",
        ),
        (
            ["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0", "--planned-for", "0.7,0.9"],
            "--planned-for goes with --sequential",
        ),
        (
            [
                "power",
                "--pa",
                "0.7",
                "--pb",
                "0.9",
                "--trials",
                "9",
                "--sequential",
                "--planned-for",
                "0.7,x",
            ],
            "--planned-for='0.7,x' must be two pass rates",
        ),
    ],
)
def test_planned_for_bad_usage_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    if argv[0] == "run":
        argv = [*argv, "--out", str(tmp_path / "r.jsonl"), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_plan_sequential_plans_for_the_rates_it_is_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0", "--cases", "1"]
    argv += ["--repeats", "87", "--sequential", "--experiments", "2000", "--json"]
    assert main(argv) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["simulation"]["settings"]["planned_for"] == [0.7, 0.9]
    assert main([*argv, "--planned-for", "none"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["simulation"]["settings"]["planned_for"] is None
    # Planned for the true effect, the same budget reaches a verdict sooner and more often.
    p, d = planned["simulation"], default["simulation"]
    assert p["expected_pairs"]["estimate"] < d["expected_pairs"]["estimate"]
    assert p["power"]["estimate"] > d["power"]["estimate"]
    assert main(argv[:-1]) == 0
    assert "--planned-for 0.7,0.9" in capsys.readouterr().out
