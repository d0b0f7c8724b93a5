"""evalstats run --judge: a judged suite from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from evalstats import compare_runs, read_results, report
from evalstats.cli import main
from evalstats.demo._server import serve
from evalstats.running._scoring import JUDGE_UNMEASURED

SUITE = str(Path(__file__).resolve().parent.parent / "cases" / "judged.yaml")
STANDIN = "standin:judge,sensitivity=0.9,specificity=0.8,seed=1"
VARIANTS = ["--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]


def _run(out: Path, judge: str, runs: int = 5, *extra: str) -> int:
    return main(
        [
            "run",
            SUITE,
            "--judge",
            judge,
            *VARIANTS,
            "--runs",
            str(runs),
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ]
    )


def test_a_judged_suite_runs_and_keeps_the_judge_s_prompt_and_reply(tmp_path) -> None:
    out = tmp_path / "judged.jsonl"
    assert _run(out, STANDIN, 25) == 0
    res = read_results(out)
    assert res.manifest["judge"]["spec"] == STANDIN
    assert res.manifest["judge"]["settings"] == {"sensitivity": 0.9, "specificity": 0.8, "seed": 1}
    for sample in res.samples:
        (check,) = sample["checks"]
        assert check["judge"]["prompt"].startswith("You are grading one answer")
        assert sample["answer"] in check["judge"]["prompt"]
        last = check["judge"]["reply"].strip().splitlines()[-1]
        assert ("fail" in last.lower()) == (check["status"] == "failed")
    # The stand-in judge errs at its set rates: the judged pass rate of shop-v1
    # (true rate 0.7) is 0.9 * 0.7 + 0.2 * 0.3 = 0.69, of shop-v2 0.9*0.9 + 0.2*0.1 = 0.83.
    rep = report(out)
    for name, expected in (("v1", 0.69), ("v2", 0.83)):
        assert (
            rep.variant(name).per_trial.low - 0.05
            <= expected
            <= rep.variant(name).per_trial.high + 0.05
        )


def test_without_a_judge_the_suite_is_refused_and_bad_judges_are_one_line(tmp_path, capsys) -> None:
    argv = ["run", SUITE, *VARIANTS, "--runs", "1", "--out", str(tmp_path / "a.jsonl")]
    assert main(argv) == 2
    assert "needs a judge" in capsys.readouterr().err
    for judge, message in [
        ("opanai:gpt-4o-mini", "unknown provider 'opanai'"),
        ("standin:jduge", "unknown stand-in judge 'jduge'"),
        ("standin:judge,sensitivty=0.9", "unknown setting 'sensitivty'"),
        ("standin:judge,sensitivity=1.5", "sensitivity"),
        ("gpt-4o", "must be KIND:MODEL"),
    ]:
        assert _run(tmp_path / "b.jsonl", judge, 1) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith("evalstats: error: ") and message in err, err
        assert not (tmp_path / "b.jsonl").exists()


def test_a_different_judge_makes_runs_not_comparable(tmp_path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    assert _run(a, STANDIN) == 0
    assert _run(b, "standin:judge,sensitivity=0.9,specificity=0.8,seed=2") == 0
    assert _run(c, STANDIN) == 0
    differ = compare_runs(a, b)
    assert differ.comparable is False and "judge" in differ.differences
    assert "judge differs (standin:judge,sensitivity=0.9,specificity=0.8,seed=1 then" in str(differ)
    same = compare_runs(a, c)
    assert "judge" not in getattr(same, "differences", ())


def test_a_judge_that_fails_after_retries_leaves_its_check_unmeasured(tmp_path) -> None:
    # A judge over HTTP whose every request fails with 429 or 500.
    with serve(error_rate=1.0, retry_after=0) as server:
        judge = f"openai:shop-v2,base_url=http://{server.host}:{server.port}/v1"
        out = tmp_path / "failing.jsonl"
        assert _run(out, judge, 1, "--retries", "1") == 0
    res = read_results(out)
    for sample in res.samples:
        assert sample["status"] == "completed"  # the answer was measured; the judge was not
        (check,) = sample["checks"]
        assert check["status"] == "unscored" and check["judge_unmeasured"] is True
        assert check["reason"].startswith(JUDGE_UNMEASURED)
    text = str(report(out))
    assert "variant v1: 4 judged check verdict(s) unmeasured" in text
    doc = json.loads(json.dumps(report(out).to_dict()))
    assert any("judged check verdict(s) unmeasured" in w for w in doc["warnings"])


def test_the_readme_s_judged_suite_commands_run(tmp_path, monkeypatch, capsys) -> None:
    import io

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A judged suite, end to end", 1)[1].split("```sh\n", 1)[1]
    commands = [line.split() for line in block.split("```", 1)[0].splitlines()]
    assert [c[1] for c in commands] == ["run", "review", "report"]
    monkeypatch.chdir(root)  # cases/judged.yaml as written
    out = tmp_path / "judged.jsonl"
    sample = tmp_path / "judged-sample.jsonl"

    def local(argv: list[str]) -> list[str]:
        return [
            str(out) if a == "judged.jsonl" else str(sample) if a == "judged-sample.jsonl" else a
            for a in argv[1:]
        ]

    assert main([*local(commands[0]), "--no-progress"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("p\nfine\n" * 40))
    assert main(local(commands[1])) == 0
    capsys.readouterr()
    assert main(local(commands[2])) == 0
    text = capsys.readouterr().out
    assert "corrected by the random review (PPI++" in text and "v2 - v1, corrected" in text
