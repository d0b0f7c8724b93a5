"""Cost: prices per million tokens in the variant spec and in a prices file, the
cost per sample, per variant and per run, the demo's estimate and the plan's cost."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from records import sample

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.planning._cost import Prices, cost_summary, design_cost, load_prices, sample_cost
from evalstats.results._file import Results, read_results
from evalstats.running._engine import parse_variant


def test_sample_cost_is_tokens_times_price_per_million() -> None:
    # by hand: 2000 * 0.15 / 1e6 + 1000 * 0.60 / 1e6 = 0.0003 + 0.0006
    assert sample_cost({"tokens": {"input": 2000, "output": 1000}}, Prices(0.15, 0.6)) == (
        pytest.approx(0.0009, abs=1e-15)
    )
    assert sample_cost({"tokens": None}, Prices(0.15, 0.6)) is None
    assert sample_cost({"tokens": {"input": 5, "output": None}}, Prices(0.15, 0.6)) is None


def test_prices_in_the_variant_spec_are_recorded_and_never_sent() -> None:
    v = parse_variant(
        "a=openai:gpt-4o-mini,temperature=0.2,price_in=0.15,price_out=0.6,"
        "base_url=http://127.0.0.1:9/v1"
    )
    d = v.describe()
    assert d["prices"] == {"input": 0.15, "output": 0.6}
    assert d["task"]["settings"] == {"temperature": 0.2}  # no price among the settings
    assert "prices" not in parse_variant("b=standin:shop-v1").describe()
    assert parse_variant("c=standin:shop-v1,price_in=1,price_out=2").price_out == 2.0


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("a=standin:shop-v1,price_in=-1,price_out=1", "price_in='-1'"),
        ("a=standin:shop-v1,price_in=1,price_out=cheap", "price_out='cheap'"),
        ("a=standin:shop-v1,price_in=1,price_out=nan", "price_out='nan'"),
        ("a=standin:shop-v1,price_in=1", "price_in=1.0 needs price_out"),
        ("a=standin:shop-v1,price_in=1,price_in=2,price_out=1", "price_in is given twice"),
    ],
)
def test_bad_prices_in_the_variant_spec_are_refused(spec: str, named: str) -> None:
    with pytest.raises(InvalidArgument, match="variant") as info:
        parse_variant(spec)
    assert named in str(info.value)


def test_load_prices_reads_a_yaml_mapping(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(
        "# list prices\ngpt-4o-mini: {input: 0.15, output: 0.60}\nbig:\n  input: 3\n  output: 15\n"
    )
    assert load_prices(path) == {"gpt-4o-mini": Prices(0.15, 0.6), "big": Prices(3, 15)}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("m: {input: -0.1, output: 1}", "m.input=-0.1"),
        ("m: {input: x, output: 1}", "m.input='x'"),
        ("m: {input: 1, output: 1, cached: 0.5}", "unknown key 'cached'"),
        ("m: {input: 1}", "m lacks output"),
        ("m: 3", "m=3"),
        ("- m", "expected a mapping"),
        ("m: {input: [1", "not valid YAML"),
    ],
)
def test_a_bad_prices_file_is_one_line_naming_the_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, named: str
) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(InvalidArgument, match="prices="):
        load_prices(path)
    results = tmp_path / "r.jsonl"
    assert main(["run", "shop", "--variant", "a=standin:shop-v1", "--runs", "1",
                 "--out", str(results), "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    for argv in (
        ["report", str(results), "--prices", str(path)],
        ["run", "shop", "--variant", "a=standin:shop-v1", "--runs", "1",
         "--out", str(tmp_path / "new.jsonl"), "--prices", str(path), "--no-progress"],
    ):  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "prices=" in err and named in err
    assert not (tmp_path / "new.jsonl").exists()


def _results(samples: list[dict], variants: list[dict]) -> Results:
    # as many runs as the samples' repeats need: a sample past the runs is refused
    runs = max([3, *(s["repeat"] + 1 for s in samples)])
    manifest = {"cases": [{"id": "x"}], "variants": variants, "runs": runs}
    return Results(None, manifest, tuple(samples), {"status": "finished"})


def test_samples_without_tokens_are_counted_apart_never_zero() -> None:
    variants = [
        {"name": "a", "task": {"model": "m"}, "prices": {"input": 1.0, "output": 2.0}},
        {"name": "b", "task": {"model": "n"}},
    ]
    samples = [
        # each sample of a variant needs its own repeat: a second record of a slot does not count
        sample("x", "a", 0, tokens={"input": 1000, "output": 500}),
        sample("x", "a", 1, None, tokens={"input": 3000, "output": 0}),
        sample("x", "a", 2),
        sample("x", "b", 0, tokens={"input": 10, "output": 10}),
    ]
    cost = cost_summary(_results(samples, variants))
    a, b = cost.variants
    # by hand: (1000 + 3000) * 1 / 1e6 + 500 * 2 / 1e6 = 0.004 + 0.001
    assert a.total == pytest.approx(0.005)
    assert (a.samples, a.measured, a.priced, a.no_tokens) == (3, 2, 2, 1)
    assert a.per_sample == pytest.approx(0.0025)
    assert a.per_measured_sample is None  # one sample's cost is unknown
    assert b.prices is None and b.total is None
    assert cost.total == pytest.approx(0.005) and cost.unpriced == ("b",)
    text = str(cost)
    assert "1 samples report no tokens" in text and "no price for model n" in text
    # a prices file gives b its price; a's own wins over the file's
    priced = cost_summary(
        _results(samples, variants), prices={"m": Prices(100, 100), "n": Prices(0.5, 0.5)}
    )
    assert priced.variants[0].total == pytest.approx(0.005)
    assert priced.variants[1].total == pytest.approx(20 * 0.5 / 1e6)
    assert priced.variants[1].price_source == "the prices file"
    assert priced.total == pytest.approx(0.005 + 1e-5)


def test_a_run_source_is_priced_from_its_counts_or_once_from_its_records(tmp_path: Path) -> None:
    from records import manifest, write

    from evalstats.reading._source import RunSource, tally

    variants = [{"name": "a", "task": {"model": "m"}, "prices": {"input": 1.0, "output": 2.0}}]
    samples = [sample("x", "a", r, tokens={"input": 100, "output": 50}) for r in range(3)]
    path = write(tmp_path / "r.jsonl", {**manifest(["x"], ["a"], 3), "variants": variants}, samples)
    source = RunSource(path)
    counted = cost_summary(source)
    assert counted.variants[0].total == pytest.approx(3 * (100 + 2 * 50) / 1e6)
    assert cost_summary(source).to_dict() == counted.to_dict() == cost_summary(path).to_dict()
    estimated = cost_summary(source, estimate=True)
    assert source.results() is source.results()  # read once, kept by the source
    assert estimated.variants[0].total == counted.variants[0].total
    with pytest.raises(InvalidArgument, match="estimate=True reads each sample's text"):
        cost_summary(tally([manifest(["x"], ["a"], 3), *samples]), estimate=True)


@given(
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.booleans()), max_size=20),
    st.floats(0, 100),
    st.floats(0, 100),
)
def test_total_is_the_sum_of_the_sample_costs(
    tokens: list[tuple[int, int, bool]], p_in: float, p_out: float
) -> None:
    prices = Prices(p_in, p_out)
    samples = [
        sample("x", "a", r, tokens={"input": i, "output": o} if has else None)
        for r, (i, o, has) in enumerate(tokens)
    ]
    cost = cost_summary(_results(samples, [{"name": "a", "prices": prices.to_dict()}])).variants[0]
    expected = math.fsum(c for s in samples if (c := sample_cost(s, prices)) is not None)
    if cost.priced:
        assert cost.total == pytest.approx(expected, rel=1e-9, abs=1e-12)
    else:  # no sample reports tokens: unknown, not $0
        assert cost.total is None and cost.per_sample is None
    assert cost.no_tokens == sum(not has for *_, has in tokens)
    assert cost.priced + cost.no_tokens == cost.samples


@pytest.mark.slow
def test_run_and_report_price_the_tokens_the_server_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalstats.demo._server import serve

    prices = tmp_path / "prices.yaml"
    prices.write_text("shop-v1: {input: 0.15, output: 0.60}\nshop-v2: {input: 99, output: 99}\n")
    out = tmp_path / "r.jsonl"
    with serve(seed=0) as server:
        url = f"{server.base_url}/v1"
        argv = [
            "run", "shop",
            "--variant", f"old=openai:shop-v1,base_url={url}",
            "--variant", f"new=openai:shop-v2,base_url={url},price_in=3,price_out=15",
            "--runs", "2", "--out", str(out), "--prices", str(prices), "--no-progress",
        ]  # fmt: skip
        assert main(argv) == 0
    res = read_results(out)
    described = {v["name"]: v for v in res.manifest["variants"]}
    assert described["old"]["prices"] == {"input": 0.15, "output": 0.6}  # from the file
    assert described["new"]["prices"] == {"input": 3.0, "output": 15.0}  # its own wins
    assert "price_in" not in json.dumps(described["new"]["task"])
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # independently: sum the recorded token counts and price them by hand
    for name, (p_in, p_out) in {"old": (0.15, 0.6), "new": (3, 15)}.items():
        mine = [s for s in res.samples if s["variant"] == name]
        assert all(s["tokens"]["input"] > 0 for s in mine)
        n_in = sum(s["tokens"]["input"] for s in mine)
        n_out = sum(s["tokens"]["output"] for s in mine)
        row = next(v for v in doc["cost"]["variants"] if v["variant"] == name)
        assert row["total"] == pytest.approx((n_in * p_in + n_out * p_out) / 1e6)
        assert row["per_sample"] == pytest.approx(row["total"] / 8)
        assert row["per_measured_sample"] == pytest.approx(row["total"] / 8)
        assert row["no_tokens"] == 0
    assert doc["cost"]["total"] == pytest.approx(sum(v["total"] for v in doc["cost"]["variants"]))
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "\ncost\n" in text and "  run: $" in text and "per measured sample" in text


def test_report_without_prices_shows_no_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", "--variant", "a=standin:shop-v1", "--runs", "1",
                 "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    assert "cost" not in json.loads(capsys.readouterr().out)
    # priced, the in-process stand-in reports no tokens: said, not zero
    prices = tmp_path / "p.yaml"
    prices.write_text("shop-v1: {input: 1, output: 1}\n")
    assert main(["report", str(out), "--prices", str(prices)]) == 0
    text = capsys.readouterr().out
    assert "4 samples report no tokens" in text and "$0" not in text
    assert "run: unknown" in text


def test_plan_states_the_cost_of_its_design(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--pa", "0.7", "--pb", "0.85", "--icc", "0.1", "--cases", "40",
            "--repeats", "5", "--approximate"]  # fmt: skip
    assert main([*argv, "--cost-per-call", "0.002", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # 40 cases x 5 repeats x 2 variants = 400 calls, x $0.002
    assert doc["cost"] == {"calls": 400, "cost_per_call": 0.002, "total": pytest.approx(0.8)}
    assert main([*argv, "--cost-per-call", "0.002"]) == 0
    assert "Cost: 400 calls x $0.002 = $0.80." in capsys.readouterr().out
    assert main([*argv, "--cost-per-call", "0.002", "--batch"]) == 0
    assert "Cost: 400 calls x $0.001 (half of $0.002, through a batch API) = $0.40." in (
        capsys.readouterr().out
    )
    assert main([*argv, "--cost-per-call", "0.002", "--batch", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cost"]["batch"] is True and doc["cost"]["total"] == pytest.approx(0.4)
    assert main([*argv, "--batch"]) == 2
    assert "--batch goes with --cost-per-call" in capsys.readouterr().err
    assert main([*argv, "--cost-per-call", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cost_per_call=-1.0" in err
    with pytest.raises(InvalidArgument):
        design_cost(10, float("inf"))


def test_the_demo_prices_its_run_as_an_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    from evalstats.demo._shop_demo import run_demo

    result = run_demo(runs=2, seed=0, plots=False)
    assert result.cost.estimated
    # the estimate by hand: 4 characters a token over the prompt messages and answers
    n_in = n_out = 0
    for s in result.results.samples:
        n_in += sum(math.ceil(len(m["content"]) / 4) for m in s["prompt"]["messages"])
        n_out += math.ceil(len(s["answer"]) / 4)
    assert result.cost.total == pytest.approx((n_in * 0.15 + n_out * 0.6) / 1e6)
    text = str(result)
    assert "example price of $0.15 in and $0.6 out per million tokens" in text
    assert "estimated from the text at 4 characters a token" in text
