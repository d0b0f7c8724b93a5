"""Batch prices: a prices file's batch price per model, the report, the plan, the demo."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import sample

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.planning._cost import BATCH_DISCOUNT, Prices, design_cost, load_prices
from evalstats.presenting._report import report
from evalstats.results._file import ResultsWriter

VARIANTS = [
    {"name": "a", "task": {"kind": "openai", "model": "m"}},
    {"name": "b", "task": {"kind": "anthropic", "model": "n"}},
]

SAMPLES = [
    sample("x", "a", 0, tokens={"input": 1000, "output": 500}, name="c"),
    sample("y", "a", 0, False, tokens={"input": 2000, "output": 1000}, name="c"),
    sample("x", "b", 0, tokens={"input": 4000, "output": 2000}, name="c"),
    sample("y", "b", 0, tokens={"input": 0, "output": 1000}, name="c"),
]


def _write(path: Path, *, batch: bool) -> Path:
    manifest = {
        "suite": {"name": "toy"},
        "cases": [{"id": "x"}, {"id": "y"}],
        "runs": 1,
        "variants": VARIANTS,
    }
    if batch:
        manifest["batch"] = {"size": 10, "in_flight": 2, "poll_s": 1.0, "time_limit_s": 60.0}
    with ResultsWriter.create(path, manifest) as w:
        for s in SAMPLES:
            w.write_sample(s)
        w.close({"status": "finished"})
    return path


def _prices(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_prices_file_gives_batch_prices_two_ways(tmp_path):
    table = load_prices(
        _prices(
            tmp_path,
            "m: {input: 0.15, output: 0.60, batch_input: 0.1, batch_output: 0.25}\n"
            "n: {input: 0.80, output: 4.00, batch: 0.4}\n"
            "o: {input: 1, output: 2}\n",
        )
    )
    assert table["m"] == Prices(0.15, 0.6, 0.1, 0.25)
    assert table["m"].batched() == Prices(0.1, 0.25)
    # a share of the listed price: 0.4 x 0.80 and 0.4 x 4.00
    assert table["n"].batched().input == pytest.approx(0.32)
    assert table["n"].batched().output == pytest.approx(1.6)
    # no batch price: half the listed one, as the providers bill
    assert not table["o"].has_batch and table["o"].batched() == Prices(0.5, 1.0)
    assert table["o"].to_dict() == {"input": 1.0, "output": 2.0}
    assert table["m"].to_dict()["batch_output"] == 0.25


def test_a_batch_run_is_priced_at_the_files_batch_price(tmp_path):
    path = _write(tmp_path / "r.jsonl", batch=True)
    prices = _prices(
        tmp_path,
        "m: {input: 1, output: 2, batch_input: 0.2, batch_output: 0.4}\nn: {input: 1, output: 2}\n",
    )
    r = report(path, prices=prices)
    a, b = r.cost.variants
    # by hand: a = (1000 + 2000) * 0.2 / 1e6 + (500 + 1000) * 0.4 / 1e6 = 0.0006 + 0.0006
    assert a.total == pytest.approx(0.0012)
    assert a.price_source == "the prices file's batch price"
    # b, no batch price: half of (4000 * 1 + 3000 * 2) / 1e6 = 0.005
    assert b.total == pytest.approx(0.005)
    assert b.price_source == "the prices file, at half for the batch API"
    text = str(r)
    assert "$0.2 in, $0.4 out per million tokens, from the prices file's batch price" in text
    # the same file on a run without --batch: the listed prices, the batch ones unused
    plain = report(_write(tmp_path / "plain.jsonl", batch=False), prices=prices)
    assert plain.cost.variants[0].total == pytest.approx((3000 * 1 + 1500 * 2) / 1e6)
    assert plain.cost.variants[0].price_source == "the prices file"


def test_the_report_command_reads_batch_prices(tmp_path, capsys):
    path = _write(tmp_path / "r.jsonl", batch=True)
    prices = _prices(tmp_path, "m: {input: 1, output: 2, batch: 0.25}\n")
    assert main(["report", str(path), "--prices", str(prices), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    a = doc["cost"]["variants"][0]
    # 0.25 of the listed prices: (3000 * 0.25 + 1500 * 0.5) / 1e6
    assert a["total"] == pytest.approx(0.0015)
    assert a["prices"] == {"input": 0.25, "output": 0.5}


def test_without_batch_prices_the_report_is_as_before(tmp_path):
    # A manifest's own prices on a batch run, no file: half, worded as before.
    path = _write(tmp_path / "r.jsonl", batch=True)
    r = report(path, prices={"m": Prices(1, 2)})
    assert r.cost.variants[0].total == pytest.approx(
        0.006 * BATCH_DISCOUNT
    )  # (3000 * 1 + 1500 * 2) / 1e6, halved
    assert r.cost.variants[0].price_source == "the prices file, at half for the batch API"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("m: {input: 1, output: 2, batch: -0.1}\n", "m.batch=-0.1 must be from 0 to 1"),
        ("m: {input: 1, output: 2, batch: 1.5}\n", "m.batch=1.5 must be from 0 to 1"),
        ("m: {input: 1, output: 2, batch: half}\n", "m.batch='half' must be a number from 0"),
        ("m: {input: 1, output: 2, batch: .nan}\n", "m.batch=nan must be from 0 to 1"),
        (
            "m: {input: 1, output: 2, batch_input: cheap, batch_output: 1}\n",
            "m.batch_input='cheap' must be a number",
        ),
        ("m: {input: 1, output: 2, batch_input: 0.5}\n", "m.batch_input goes with m.batch_output"),
        ("m: {input: 1, output: 2, batch_output: 0.5}\n", "m.batch_output goes with m.batch_input"),
        (
            "m: {input: 1, output: 2, batch_input: -1, batch_output: 1}\n",
            "m.batch_input=-1 must be a finite number >= 0",
        ),
        (
            "m: {input: 1, output: 2, batch: 0.5, batch_input: 0.5, batch_output: 1}\n",
            "m.batch goes without batch_input and batch_output",
        ),
        ("m: {input: 1, output: 2, batch_in: 0.5}\n", "m has unknown key 'batch_in'"),
    ],
)
def test_bad_batch_prices_are_one_line_naming_the_file_and_field(tmp_path, capsys, text, said):
    path = _write(tmp_path / "r.jsonl", batch=True)
    prices = _prices(tmp_path, text)
    with pytest.raises(InvalidArgument, match="prices='.*prices.yaml'"):
        load_prices(prices)
    before = path.read_bytes()
    assert main(["report", str(path), "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert said in err and "prices.yaml" in err
    assert path.read_bytes() == before


def test_prices_refuse_half_a_batch_price():
    with pytest.raises(InvalidArgument, match="batch_input goes with batch_output"):
        Prices(1, 2, batch_input=0.5)
    with pytest.raises(InvalidArgument, match="batch_output=-1 must be a finite number >= 0"):
        Prices(1, 2, 0.5, -1)


PLAN = ["plan", "--pa", "0.7", "--pb", "0.85", "--icc", "0.1", "--cases", "40", "--repeats", "5",
        "--approximate"]  # fmt: skip


def test_plan_takes_a_batch_cost_per_call(capsys):
    assert main([*PLAN, "--cost-per-call", "0.002", "--batch-cost-per-call", "0.0012"]) == 0
    # 40 cases x 5 repeats x 2 variants = 400 calls, x $0.0012
    assert "Cost: 400 calls x $0.0012 (the batch price; $0.002 listed) = $0.48." in (
        capsys.readouterr().out
    )
    assert (
        main([*PLAN, "--cost-per-call", "0.002", "--batch-cost-per-call", "0.0012", "--json"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["cost"] == {
        "calls": 400,
        "cost_per_call": 0.002,
        "total": pytest.approx(0.48),
        "batch": True,
        "batch_cost_per_call": 0.0012,
    }


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--batch-cost-per-call", "0.001"], "--batch-cost-per-call goes with --cost-per-call"),
        (["--cost-per-call", "0.002", "--batch-cost-per-call", "-1"], "batch_cost_per_call=-1.0"),
        (["--cost-per-call", "0.002", "--batch-cost-per-call", "nan"], "batch_cost_per_call=nan"),
        (["--cost-per-call", "0.002", "--batch-cost-per-call", "5000"], "more than $1,000 a call"),
        (["--cost-per-call", "0.002", "--batch-cost-per-call", "x"], "invalid float value: 'x'"),
    ],
)
def test_plan_refuses_a_bad_batch_cost_in_one_line(capsys, extra, said):
    assert main([*PLAN, *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err


@settings(max_examples=50, deadline=None)
@given(
    st.floats(0, 100, allow_nan=False),
    st.floats(0, 100, allow_nan=False),
    st.floats(0, 1, allow_nan=False),
    st.integers(0, 10**7),
    st.integers(0, 10**7),
)
def test_a_batch_share_scales_the_cost_and_never_exceeds_the_listed(p_in, p_out, share, n, m):
    listed = Prices(p_in, p_out)
    batch = Prices(p_in, p_out, p_in * share, p_out * share).batched()
    assert batch.cost(n, m) == pytest.approx(share * listed.cost(n, m), rel=1e-12, abs=1e-12)
    assert batch.cost(n, m) <= listed.cost(n, m) * (1 + 1e-12)
    assert Prices(p_in, p_out).batched().cost(n, m) == pytest.approx(
        listed.cost(n, m) / 2, rel=1e-12, abs=1e-12
    )


def test_design_cost_at_a_batch_price_is_calls_times_it():
    cost = design_cost(400, 0.002, batch_cost_per_call=0.0012)
    assert cost.batch and cost.total == pytest.approx(400 * 0.0012)
    assert design_cost(None, 0.002, batch_cost_per_call=0.0).total is None


def test_the_demo_states_its_batch_price():
    from evalstats.demo._shop_demo import run_demo

    result = run_demo(runs=2, seed=0, plots=False)
    n_in = sum(v.input_tokens for v in result.cost.variants)
    n_out = sum(v.output_tokens for v in result.cost.variants)
    listed = (n_in * 0.15 + n_out * 0.6) / 1e6
    assert math.isclose(result.cost.total, listed)
    from evalstats.planning._cost import _dollars

    text = str(result)
    assert f"or about {_dollars(listed / 2)} through a batch API (`run --batch`" in text


def test_run_batch_with_prices_records_the_batch_prices_for_the_report(tmp_path, capsys):
    from evalstats.demo._server import serve

    prices = _prices(
        tmp_path,
        "shop-v1: {input: 1, output: 2, batch_input: 0.3, batch_output: 0.6}\n"
        "shop-v2: {input: 1, output: 2}\n",
    )
    out = tmp_path / "r.jsonl"
    with serve(batch_delay_s=0.02) as server:
        url = server.base_url + "/v1"
        argv = ["run", "shop", "--runs", "1", "--batch", "--batch-poll-s", "0.02",
                "--variant", f"v1=openai:shop-v1,base_url={url}",
                "--variant", f"v2=openai:shop-v2,base_url={url}",
                "--prices", str(prices), "--no-progress"]  # fmt: skip
        assert main([*argv, "--out", str(out)]) == 0
    capsys.readouterr()
    from evalstats.planning._cost import cost_summary
    from evalstats.results._file import read_results

    res = read_results(out)
    assert res.manifest["batch"]["prices"] == {"shop-v1": {"input": 0.3, "output": 0.6}}
    v1, v2 = cost_summary(res).variants
    assert v1.prices == Prices(0.3, 0.6)
    assert v1.price_source == "the run's manifest, its batch price"
    assert v1.total == pytest.approx((v1.input_tokens * 0.3 + v1.output_tokens * 0.6) / 1e6)
    assert v1.total > 0
    assert v2.prices == Prices(0.5, 1.0)  # no batch price: half
    assert v2.price_source == "the run's manifest, at half for the batch API"
