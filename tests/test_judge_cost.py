"""The judge's calls priced in a run's cost, beside the assistant's.

Against the stand-in server, whose judge ``shop-judge`` reports its usage as
OpenAI's chat completions do; an older file, whose verdicts carry no judge
tokens, says so instead of pricing them at $0.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import check, sample

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
    # each variant's part: the judge calls that scored its own answers, by hand
    for v in rep.cost.variants:
        usage = [
            _stand_in_usage(c["judge"]["prompt"], c["judge"]["reply"])
            for s in read_results(out).samples
            if s["variant"] == v.variant
            for c in s["checks"]
            if "judge" in c
        ]
        (part,) = v.judges
        assert (part.calls, part.priced) == (8, 8)
        assert v.judge_total == pytest.approx(sum(i * 1 / 1e6 + o * 2 / 1e6 for i, o in usage))
        assert v.total_with_judge == pytest.approx(v.total + v.judge_total)
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
    v1, v2 = rep.cost.variants
    assert (
        f"    with the judge: {_dollars(v1.total_with_judge)} ({_dollars(v1.total)} the "
        f"assistant's, {_dollars(v1.judge_total)} the judge's for 8 calls)\n"
    ) in text
    assert main(["report", str(out), "--prices", str(prices), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["cost"]
    assert doc["judges"][0]["calls"] == 16
    assert doc["judge_total"] == pytest.approx(judge.total)
    assert [v["judges"][0]["calls"] for v in doc["variants"]] == [8, 8]
    assert doc["variants"][1]["judge_total"] == pytest.approx(v2.judge_total)
    assert doc["variants"][1]["total_with_judge"] == pytest.approx(v2.total_with_judge)
    # A part of the run (--variant, --case) counts its own judge calls only.
    assert main(["report", str(out), "--prices", str(prices), "--variant", "v1"]) == 0
    assert "  judge shop-judge: " in (text := capsys.readouterr().out)
    assert " for 8 judge calls (" in text
    assert main(["report", str(out), "--prices", str(prices), "--case", "refund"]) == 0
    assert " for 4 judge calls (" in (text := capsys.readouterr().out)
    assert text.count(" the judge's for 2 calls)\n") == 2


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
    cost = report(out, prices=stated).cost
    (judge,) = cost.judges
    assert judge.total == pytest.approx((n_in * 0.25 + n_out * 0.5) / 1e6)
    assert judge.price_source == "the prices file's batch price"
    # each variant's part at the same batch price
    parts = [j for v in cost.variants for j in v.judges]
    assert [j.calls for j in parts] == [4, 4]
    assert all(j.batch and j.price_source == judge.price_source for j in parts)
    assert math.fsum(j.total for j in parts) == pytest.approx(judge.total)


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
    # said once for the run, not again under each variant
    assert "with the judge" not in text
    (run,) = [line for line in text.splitlines() if line.startswith("  run: ")]
    assert run.endswith(", without the judge shop-judge (no price)")
    assert main(["report", str(out), "--prices", str(prices), "--json"]) == 0
    for v in json.loads(capsys.readouterr().out)["cost"]["variants"]:
        (part,) = v["judges"]
        assert (part["model"], part["prices"], part["calls"], part["total"]) == (
            "shop-judge",
            None,
            4,
            None,
        )
        assert v["judge_total"] is None and v["total_with_judge"] is None


# --- the judge's cost per variant --------------------------------------------------

#: Dollars per million tokens: the assistants' models m and n, the judge's model j.
PRICES = {"m": Prices(1.0, 2.0), "n": Prices(0.5, 1.0), "j": Prices(10.0, 20.0)}
EVIDENCE = {"prompt": "Is the answer right?", "reply": "PASS"}


def _judged(tokens: dict | None, model: str | None = "j") -> dict:
    """A judged verdict whose judge was asked, with the tokens its call took (None:
    the call reports none, as in a file written before they were recorded)."""
    return check("passed", "judged", judge=EVIDENCE, judge_tokens=tokens, judge_model=model)


def _judged_file(path: Path, judged: dict[str, list[list[dict]]], tokens: dict) -> Path:
    """A run whose variant ``v`` has a sample for each ``judged[v]`` (the sample's
    judged verdicts), each sample's assistant call taking ``tokens[v]``."""
    runs = max(len(per) for per in judged.values())
    variants = [
        {"name": "a", "task": {"kind": "openai", "model": "m"}},
        {"name": "b", "task": {"kind": "openai", "model": "n"}},
    ]
    manifest = {"suite": {"name": "toy"}, "cases": [{"id": "x"}], "runs": runs}
    with ResultsWriter.create(path, dict(manifest, variants=variants)) as w:
        for variant, per in judged.items():
            for r, verdicts in enumerate(per):
                checks = verdicts or [check("passed", "plain")]
                w.write_sample(sample("x", variant, r, checks=checks, tokens=tokens[variant]))
        w.close({"status": "finished"})
    return path


MILLION = {"input": 1_000_000, "output": 1_000_000}


def test_each_variant_shows_the_judge_calls_that_scored_its_answers(tmp_path, capsys):
    # a: 3 samples, one judged call each; b: 2 samples, two judged calls each
    call = {"input": 100_000, "output": 50_000}  # $1 + $1 at j's $10 in, $20 out
    path = _judged_file(
        tmp_path / "r.jsonl",
        {"a": [[_judged(call)]] * 3, "b": [[_judged(call), _judged(call)]] * 2},
        {"a": {"input": 1_000_000, "output": 500_000}, "b": {"input": 2_000_000, "output": 0}},
    )
    cost = report(path, prices=PRICES).cost
    a, b = cost.variants
    # by hand: a's samples 3 x ($1 + $1), its judge 3 x $2; b's 2 x $1, its judge 4 x $2
    assert (a.total, a.judge_total, a.total_with_judge) == pytest.approx((6.0, 6.0, 12.0))
    assert (b.total, b.judge_total, b.total_with_judge) == pytest.approx((2.0, 8.0, 10.0))
    assert [j.calls for j in a.judges] == [3] and [j.calls for j in b.judges] == [4]
    assert str(cost).splitlines() == [
        "cost",
        "  a: $6.00 for 3 samples ($2.00 per sample, $2.00 per measured sample; $1 in, $2 out "
        "per million tokens, from the prices file)",
        "    with the judge: $12.00 ($6.00 the assistant's, $6.00 the judge's for 3 calls)",
        "  b: $2.00 for 2 samples ($1.00 per sample, $1.00 per measured sample; $0.5 in, $1 "
        "out per million tokens, from the prices file)",
        "    with the judge: $10.00 ($2.00 the assistant's, $8.00 the judge's for 4 calls)",
        "  judge j: $14.00 for 7 judge calls ($2.00 per call; $10 in, $20 out per million "
        "tokens, from the prices file)",
        "  run: $22.00 ($8.00 the assistant's, $14.00 the judge's)",
    ]
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "m: {input: 1, output: 2}\nn: {input: 0.5, output: 1}\nj: {input: 10, output: 20}\n"
    )
    assert main(["report", str(path), "--prices", str(prices), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["cost"]
    va, vb = doc["variants"]
    assert list(va)[-3:] == ["judges", "judge_total", "total_with_judge"]
    assert va["judges"] == [
        {
            "model": "j",
            "prices": {"input": 10.0, "output": 20.0},
            "price_source": "the prices file",
            "calls": 3,
            "priced": 3,
            "no_tokens": 0,
            "input_tokens": 300_000,
            "output_tokens": 150_000,
            "total": pytest.approx(6.0),
            "per_call": pytest.approx(2.0),
            "batch": False,
        }
    ]
    assert (vb["judge_total"], vb["total_with_judge"]) == pytest.approx((8.0, 10.0))
    assert doc["judge_total"] == pytest.approx(14.0) and doc["total"] == pytest.approx(22.0)


def test_a_variant_s_unknown_judge_tokens_are_said_under_that_variant(tmp_path):
    # a: two calls with tokens and one without; b: every call without
    call = {"input": 100_000, "output": 50_000}
    path = _judged_file(
        tmp_path / "r.jsonl",
        {"a": [[_judged(call)], [_judged(call)], [_judged(None)]], "b": [[_judged(None)]] * 2},
        {"a": MILLION, "b": MILLION},
    )
    cost = report(path, prices=PRICES).cost
    a, b = cost.variants
    assert (a.judge_total, a.total_with_judge) == pytest.approx((4.0, 13.0))
    # b's judge part is unknown: neither it nor b's whole is taken as $0
    assert b.judge_total is None and b.total_with_judge is None
    assert [(j.calls, j.priced, j.no_tokens) for j in b.judges] == [(2, 0, 2)]
    lines = str(cost).splitlines()
    assert lines[2] == (
        "    with the judge: $13.00 ($9.00 the assistant's, $4.00 the judge's for 2 calls), "
        "without 1 judge calls that report no tokens"
    )
    assert (
        lines[4]
        == "    with the judge: unknown ($3.00 the assistant's; 2 judge calls report no tokens)"
    )
    assert lines[-1] == (
        "  run: $16.00 ($12.00 the assistant's, $4.00 the judge's), without 3 judge calls "
        "that report no tokens"
    )
    doc = cost.to_dict()["variants"]
    assert doc[0]["judges"][0]["no_tokens"] == 1
    assert (doc[1]["judge_total"], doc[1]["total_with_judge"]) == (None, None)


def test_a_variant_without_token_counts_still_shows_its_judge_s_part(tmp_path):
    call = {"input": 100_000, "output": 50_000}
    path = _judged_file(
        tmp_path / "r.jsonl",
        {"a": [[_judged(call), _judged(None)]], "b": [[_judged(call)]]},
        {"a": None, "b": MILLION},
    )
    cost = report(path, prices=PRICES).cost
    a = cost.variants[0]
    assert (a.total, a.judge_total, a.total_with_judge) == (None, pytest.approx(2.0), None)
    assert str(cost).splitlines()[3] == (
        "    with the judge: unknown (no sample reports tokens; $2.00 the judge's, without 1 "
        "judge calls that report no tokens)"
    )


def test_a_variant_whose_answers_no_judge_scored_adds_nothing(tmp_path):
    call = {"input": 100_000, "output": 50_000}
    path = _judged_file(
        tmp_path / "r.jsonl", {"a": [[_judged(call)]], "b": [[]]}, {"a": MILLION, "b": MILLION}
    )
    cost = report(path, prices=PRICES).cost
    b = cost.variants[1]
    assert (b.judges, b.judge_total, b.total_with_judge) == ((), 0.0, pytest.approx(1.5))
    assert "    with the judge: $1.50 (no judge calls)" in str(cost).splitlines()
    assert cost.to_dict()["variants"][1]["judges"] == []


def test_a_judge_without_a_price_leaves_each_variant_s_whole_unknown(tmp_path):
    call = {"input": 100_000, "output": 50_000}
    path = _judged_file(
        tmp_path / "r.jsonl", {"a": [[_judged(call)]], "b": [[_judged(call)]]},
        {"a": MILLION, "b": MILLION},
    )  # fmt: skip
    cost = report(path, prices={"m": PRICES["m"], "n": PRICES["n"]}).cost
    assert [(v.judge_total, v.total_with_judge) for v in cost.variants] == [(None, None)] * 2
    text = str(cost)
    assert [line for line in text.splitlines() if "no price" in line] == [
        "  judge j: no price for model j (2 judge calls; give it in --prices FILE)",
        "  run: $4.50, without the judge j (no price)",
    ]
    assert "with the judge" not in text


@st.composite
def _judged_split(draw: st.DrawFn) -> dict[str, list[list[dict]]]:
    """Judged calls split between variants a and b: each a few samples of up to three
    calls, each call's tokens drawn, or none reported."""
    counts = st.integers(0, 5_000_000)
    tokens = st.one_of(st.none(), st.builds(lambda i, o: {"input": i, "output": o}, counts, counts))
    samples = st.lists(st.lists(tokens.map(_judged), max_size=3), min_size=1, max_size=4)
    return {"a": draw(samples), "b": draw(samples)}


@settings(max_examples=40, deadline=None)
@given(judged=_judged_split(), price=st.tuples(st.floats(0, 100), st.floats(0, 100)))
def test_the_variants_judge_parts_add_up_to_the_judge_s_total(judged, price):
    table = dict(PRICES, j=Prices(*price))
    with tempfile.TemporaryDirectory() as folder:
        path = _judged_file(Path(folder) / "r.jsonl", judged, {"a": MILLION, "b": MILLION})
        cost = report(path, prices=table).cost
    parts = [j for v in cost.variants for j in v.judges or ()]
    for field in ("calls", "priced", "input_tokens", "output_tokens"):
        assert sum(getattr(j, field) for j in parts) == sum(getattr(j, field) for j in cost.judges)
    known = [v.judge_total for v in cost.variants if v.judge_total is not None]
    if cost.judge_total is None:
        assert all(v.judge_total in (None, 0.0) for v in cost.variants)
    else:
        # to the cent, and far closer: a call's price is linear in its tokens
        assert abs(math.fsum(known) - cost.judge_total) < 0.005
        assert math.isclose(math.fsum(known), cost.judge_total, rel_tol=1e-12, abs_tol=1e-12)
    wholes = [v.total_with_judge for v in cost.variants]
    if None not in wholes:
        assert math.isclose(math.fsum(wholes), cost.total, rel_tol=1e-12, abs_tol=1e-12)


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
    # judge calls were priced, one line more on the judge, and under each variant
    # that its judge calls' cost is unknown.
    before = expected.removeprefix("exit 0\n").replace("FILE", shown)
    assert text.startswith(before)
    assert text[len(before) :].splitlines() == [
        "",
        "cost",
        "  a: unknown ($0.15 in, $0.6 out per million tokens, but no sample reports tokens)",
        "    20 samples report no tokens: not in the total (their cost is unknown)",
        "    with the judge: unknown (no sample reports tokens; 4 judge calls report no tokens)",
        "  b: $0.0011 for 20 samples ($0.000053 per sample, $0.000053 per measured sample; "
        "$1 in, $2 out per million tokens, from the prices file)",
        "    with the judge: unknown ($0.0011 the assistant's; 3 judge calls report no tokens)",
        "  judge: unknown (7 judge calls report no tokens: a file written before judge tokens "
        "were recorded, or a judge that does not report usage)",
        "  run: $0.0011, without 20 samples that report no tokens; 7 judge calls that report "
        "no tokens",
    ]


def test_a_file_without_judged_verdicts_has_the_cost_it_had(tmp_path):
    # The text and the JSON document evalstats gave before judge calls were priced
    # at all, pinned: a run whose checks no model judged gains no field or line.
    path = tmp_path / "r.jsonl"
    variants = [
        {"name": "a", "task": {"kind": "openai", "model": "m"}},
        {"name": "b", "task": {"kind": "openai", "model": "n"}},
    ]
    manifest = {"suite": {"name": "toy"}, "cases": [{"id": "x"}], "runs": 2, "variants": variants}
    with ResultsWriter.create(path, manifest) as w:
        w.write_sample(sample("x", "a", 0, tokens={"input": 1000, "output": 500}))
        w.write_sample(sample("x", "a", 1, tokens=None))
        w.write_sample(sample("x", "b", 0, tokens={"input": 1000, "output": 500}))
        w.close({"status": "finished"})
    cost = report(path, prices={"m": Prices(1.0, 2.0)}).cost
    assert cost.judges == () and all(v.judges is None for v in cost.variants)
    assert str(cost).splitlines() == [
        "cost",
        "  a: $0.002 for 1 samples ($0.002 per sample; $1 in, $2 out per million tokens, from "
        "the prices file)",
        "    1 samples report no tokens: not in the total (their cost is unknown)",
        "  b: no price for model n (the prices given are for m only)",
        "  run: $0.002, without b (no price); 1 samples that report no tokens",
    ]
    fields = (
        '"samples": 2, "measured": 2, "priced": 1, "no_tokens": 1, "input_tokens": 1000, '
        '"output_tokens": 500, "total": 0.002, "per_sample": 0.002, "per_measured_sample": null'
    )
    assert json.dumps(cost.to_dict()) == (
        '{"currency": "USD", "unit": "per million tokens", "total": 0.002, "no_tokens": 1, '
        '"unpriced": ["b"], "estimated": false, "variants": [{"variant": "a", "model": "m", '
        '"prices": {"input": 1.0, "output": 2.0}, "price_source": "the prices file", '
        f'{fields}, "estimated": false}}, {{"variant": "b", "model": "n", "prices": null, '
        '"price_source": null, "samples": 1, "measured": 1, "priced": 1, "no_tokens": 0, '
        '"input_tokens": 1000, "output_tokens": 500, "total": null, "per_sample": null, '
        '"per_measured_sample": null, "estimated": false}]}'
    )


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
