"""The judge's calls priced in a run's cost, beside the assistant's.

Against the stand-in server, whose judge ``shop-judge`` reports its usage as
OpenAI's chat completions do; an older file, whose verdicts carry no judge
tokens, says so instead of pricing them at $0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from records import sample

from evalstats.cli import main
from evalstats.demo._server import estimate_tokens, serve
from evalstats.planning._cost import Prices, judge_calls
from evalstats.presenting._report import report
from evalstats.results._file import ResultsWriter, read_results

SUITE = str(Path(__file__).resolve().parent.parent / "cases" / "judged.yaml")
HERE = Path(__file__).resolve().parent / "data" / "results_v1"


# --- the stand-in judge over HTTP, priced ---------------------------------------------


def _stand_in_run(out: Path, *extra: str, runs: int = 2) -> None:
    with serve(batch_delay_s=0.02) as server:
        url = server.base_url + "/v1"
        code = main(
            [
                "run", SUITE, "--runs", str(runs), "--no-progress", "--out", str(out),
                "--judge", f"openai:shop-judge,base_url={url},seed=7",
                "--variant", f"v1=openai:shop-v1,base_url={url}",
                "--variant", f"v2=openai:shop-v2,base_url={url}",
                *extra,
            ]
        )  # fmt: skip
    assert code == 0


def _stand_in_usage(prompt: str, reply: str) -> tuple[int, int]:
    # The stand-in counts as OpenAI's cookbook does ("How to count tokens with
    # tiktoken"): 3 to prime the reply, 3 per message, then its role and content at
    # one token per 4 characters (rounded up); the reply at 4 characters a token.
    return 3 + 3 + estimate_tokens("user") + estimate_tokens(prompt), estimate_tokens(reply)


def test_a_run_with_the_stand_in_judge_prices_its_calls(tmp_path, capsys):
    out = tmp_path / "judged.jsonl"
    _stand_in_run(out)
    capsys.readouterr()
    verdicts = [c for s in read_results(out).samples for c in s["checks"] if "judge" in c]
    assert len(verdicts) == 4 * 2 * 2  # 4 cases, 2 runs, 2 variants: every answer judged
    n_in = n_out = 0
    for v in verdicts:
        assert v["judge_model"] == "shop-judge"
        i, o = _stand_in_usage(v["judge"]["prompt"], v["judge"]["reply"])
        assert v["judge_tokens"] == {"input": i, "output": o}
        n_in, n_out = n_in + i, n_out + o
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "shop-v1: {input: 3, output: 15}\nshop-v2: {input: 0.15, output: 0.6}\n"
        "shop-judge: {input: 1, output: 2}\n",
        encoding="utf-8",
    )
    rep = report(out, prices=str(prices))
    (judge,) = rep.cost.judges
    # by hand: $1 per million prompt tokens and $2 per million reply tokens
    assert judge.total == pytest.approx(n_in * 1 / 1e6 + n_out * 2 / 1e6)
    assert (judge.calls, judge.priced, judge.input_tokens) == (16, 16, n_in)
    assistant = math.fsum(v.total for v in rep.cost.variants)
    assert rep.cost.total == pytest.approx(assistant + judge.total)
    assert main(["report", str(out), "--prices", str(prices)]) == 0
    text = capsys.readouterr().out
    from evalstats.planning._cost import _dollars

    assert (
        f"  judge shop-judge: {_dollars(judge.total)} for 16 judge calls "
        f"({_dollars(judge.total / 16)} per call; $1 in, $2 out per million tokens, "
        "from the prices file)\n"
    ) in text
    assert (
        f"  run: {_dollars(rep.cost.total)} ({_dollars(assistant)} the assistant's, "
        f"{_dollars(judge.total)} the judge's)\n"
    ) in text
    assert main(["report", str(out), "--prices", str(prices), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["cost"]
    assert doc["judges"][0]["calls"] == 16
    assert doc["judge_total"] == pytest.approx(judge.total)
    # A part of the run (--variant, --case) counts its own judge calls only.
    assert main(["report", str(out), "--prices", str(prices), "--variant", "v1"]) == 0
    assert "  judge shop-judge: " in (text := capsys.readouterr().out)
    assert " for 8 judge calls (" in text
    assert main(["report", str(out), "--prices", str(prices), "--case", "refund"]) == 0
    assert " for 4 judge calls (" in capsys.readouterr().out


def test_a_batched_judge_is_priced_at_the_batch_price(tmp_path, capsys):
    out = tmp_path / "batched.jsonl"
    _stand_in_run(out, "--batch", "--batch-poll-s", "0.02", runs=1)
    capsys.readouterr()
    assert read_results(out).manifest["batch"]["judge"]["model"] == "shop-judge"
    judged = judge_calls(out)
    ((calls, priced, n_in, n_out),) = judged.values()
    assert list(judged) == ["shop-judge"] and calls == priced == 8
    listed = {"shop-judge": Prices(1.0, 2.0)}
    (judge,) = report(out, prices=listed).cost.judges
    assert judge.batch and judge.total == pytest.approx((n_in * 1 + n_out * 2) / 1e6 / 2)
    stated = {"shop-judge": Prices(1.0, 2.0, batch_input=0.25, batch_output=0.5)}
    (judge,) = report(out, prices=stated).cost.judges
    assert judge.total == pytest.approx((n_in * 0.25 + n_out * 0.5) / 1e6)
    assert judge.price_source == "the prices file's batch price"


def test_a_judge_missing_from_the_prices_file_is_said_in_one_line(tmp_path, capsys):
    out = tmp_path / "judged.jsonl"
    _stand_in_run(out, runs=1)
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "shop-v1: {input: 3, output: 15}\nshop-v2: {input: 3, output: 15}\n", encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["report", str(out), "--prices", str(prices)]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.startswith("  judge")]
    assert lines == [
        "  judge shop-judge: no price for model shop-judge (8 judge calls; give it in "
        "--prices FILE)"
    ]
    (run,) = [line for line in text.splitlines() if line.startswith("  run: ")]
    assert run.endswith(", without the judge shop-judge (no price)")


# --- older files -------------------------------------------------------------------


def test_an_older_file_reports_as_before_and_says_its_judge_s_tokens_are_unknown(tmp_path, capsys):
    # tests/data/results_v1 was written before verdicts carried judge tokens: its 7
    # judged verdicts keep the judge's prompt and reply, and nothing of its usage.
    shown = str(HERE / "results.jsonl")
    assert main(["report", shown]) == 0
    expected = (HERE / "expected" / "report.txt").read_text(encoding="utf-8")
    assert f"exit 0\n{capsys.readouterr().out}".replace(shown, "FILE") == expected
    prices = tmp_path / "prices.yaml"
    prices.write_text("m-a: {input: 0.15, output: 0.6}\nm-b: {input: 1, output: 2}\n")
    assert main(["report", shown, "--prices", str(prices)]) == 0
    text = capsys.readouterr().out
    # Every line as before, then the cost: what evalstats said of this file before
    # judge calls were priced, and one line more on the judge.
    before = expected.removeprefix("exit 0\n").replace("FILE", shown)
    assert text.startswith(before)
    assert text[len(before) :].splitlines() == [
        "",
        "cost",
        "  a: unknown ($0.15 in, $0.6 out per million tokens, but no sample reports tokens)",
        "    20 samples report no tokens: not in the total (their cost is unknown)",
        "  b: $0.0011 for 20 samples ($0.000053 per sample, $0.000053 per measured sample; "
        "$1 in, $2 out per million tokens, from the prices file)",
        "  judge: unknown (7 judge calls report no tokens: a file written before judge tokens "
        "were recorded, or a judge that does not report usage)",
        "  run: $0.0011, without 20 samples that report no tokens; 7 judge calls that report "
        "no tokens",
    ]


def test_a_file_without_judged_verdicts_has_the_cost_it_had(tmp_path):
    path = tmp_path / "r.jsonl"
    variants = [{"name": "a", "task": {"kind": "openai", "model": "m"}}]
    manifest = {"suite": {"name": "toy"}, "cases": [{"id": "x"}], "runs": 2, "variants": variants}
    with ResultsWriter.create(path, manifest) as w:
        w.write_sample(sample("x", "a", 0, tokens={"input": 1000, "output": 500}))
        w.close({"status": "finished"})
    cost = report(path, prices={"m": Prices(1.0, 2.0)}).cost
    assert cost.judges == () and "judges" not in cost.to_dict()
    assert str(cost).splitlines()[-1] == "  run: $0.002"


# --- a plan's cost ----------------------------------------------------------------------


def test_a_plan_from_a_judged_pilot_says_its_judge_calls_are_not_in_the_cost(tmp_path, capsys):
    pilot = tmp_path / "pilot.jsonl"
    _stand_in_run(pilot)
    capsys.readouterr()
    argv = ["plan", "--from", str(pilot), "--pb", "+0.1", "--repeats", "2", "--approximate"]
    assert main([*argv, "--cost-per-call", "0.002"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cost = next(i for i, line in enumerate(lines) if line.startswith("Cost: "))
    calls = int(lines[cost].split()[1])  # "Cost: N calls x $0.002 = ..."
    # every answer of the pilot was judged once: one judge call a sample
    assert lines[cost + 1] == (
        "Judge calls not included: the pilot's judged checks made 1 judge calls a sample "
        f"(about {calls:,} in this design); add what they cost a sample to --cost-per-call, "
        "or price a run's with report --prices."
    )
    assert main([*argv, "--cost-per-call", "0.002", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["cost"]
    assert doc["judge_calls_per_sample"] == 1.0 and doc["judge_calls_included"] is False
