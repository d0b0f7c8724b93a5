"""The cost on the Report object: per sample, per variant and per run, from the tally."""

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
from evalstats.planning._cost import Prices, sample_cost
from evalstats.presenting._report import report
from evalstats.results._file import ResultsWriter, read_results

VARIANTS = [
    {
        "name": "a",
        "task": {"kind": "openai", "model": "m"},
        "prices": {"input": 1.0, "output": 2.0},
    },
    {"name": "b", "task": {"kind": "openai", "model": "n"}},
]


def _write(path: Path, samples: list[dict], variants=VARIANTS) -> Path:
    runs = max([3, *(s["repeat"] + 1 for s in samples)])  # a sample past the runs is refused
    manifest = {"suite": {"name": "toy"}, "cases": [{"id": "x"}, {"id": "y"}], "runs": runs}
    with ResultsWriter.create(path, dict(manifest, variants=variants)) as w:
        for s in samples:
            w.write_sample(s)
        w.close({"status": "finished"})
    return path


SAMPLES = [
    sample("x", "a", 0, tokens={"input": 1000, "output": 500}, name="c"),
    sample("x", "a", 1, None, tokens={"input": 3000, "output": 0}, name="c"),
    sample("y", "a", 0, False, tokens={"input": 2000, "output": 1000}, name="c"),
    sample("x", "b", 0, tokens={"input": 10, "output": 10}, name="c"),
    sample("y", "b", 0, name="c"),
]


def test_the_report_carries_the_cost(tmp_path):
    r = report(_write(tmp_path / "r.jsonl", SAMPLES))
    assert r.priced
    a, b = r.cost.variants
    # by hand: (1000 + 3000 + 2000) * $1 / 1e6 + (500 + 0 + 1000) * $2 / 1e6 = 0.006 + 0.003
    assert a.total == pytest.approx(0.009)
    assert a.per_sample == pytest.approx(0.003)
    assert a.per_measured_sample == pytest.approx(0.0045)  # 2 measured samples paid for 3
    assert (a.samples, a.measured, a.priced, a.no_tokens) == (3, 2, 3, 0)
    assert b.prices is None and r.cost.unpriced == ("b",)
    assert r.cost.total == pytest.approx(0.009)
    doc = r.to_dict()
    assert doc["cost"]["variants"][0]["per_sample"] == pytest.approx(0.003)
    assert doc["cost"]["total"] == pytest.approx(0.009)
    text = str(r)
    assert "cost\n  a: $0.009 for 3 samples ($0.003 per sample, $0.0045 per measured sample" in text


def test_a_prices_table_prices_the_other_variant(tmp_path):
    path = _write(tmp_path / "r.jsonl", SAMPLES)
    r = report(path, prices={"n": Prices(0.5, 0.5)})
    b = r.cost.variants[1]
    assert b.price_source == "the prices file"
    assert (b.samples, b.priced, b.no_tokens) == (2, 1, 1)
    assert b.total == pytest.approx(20 * 0.5 / 1e6)
    assert b.per_measured_sample is None  # one sample's cost is unknown
    assert r.cost.total == pytest.approx(0.009 + 1e-5)
    assert r.cost.no_tokens == 1


def test_no_price_no_cost(tmp_path):
    path = _write(tmp_path / "r.jsonl", SAMPLES, variants=[{"name": "a"}, {"name": "b"}])
    r = report(path)
    assert r.cost is None and not r.priced
    assert "cost" not in r.to_dict() and "\ncost" not in str(r)


def test_prices_for_no_model_of_the_run_say_which_they_are_for(tmp_path, capsys):
    plain = [{"name": "a", "task": {"model": "m"}}, {"name": "b", "task": {"model": "n"}}]
    path = _write(tmp_path / "r.jsonl", SAMPLES, variants=plain)
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-x: {input: 1, output: 2}\nm-2: {input: 1, output: 1}\n")
    r = report(path, prices=str(prices))
    assert r.priced and not r.cost.known  # given, but they price nothing of this run
    assert r.cost.unpriced == ("a", "b") and r.cost.total is None
    text = str(r)
    assert "  a: no price for model m (the prices given are for gpt-x, m-2 only)" in text
    assert main(["report", str(path), "--prices", str(prices), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"]["unpriced"] == ["a", "b"]


def test_the_tally_and_the_records_agree(tmp_path):
    path = _write(tmp_path / "r.jsonl", SAMPLES)
    from_file = report(path).cost.to_dict()
    from_records = report(read_results(path)).cost.to_dict()
    assert from_file == from_records


def test_report_with_prices_reads_the_file_in_its_one_streaming_pass(tmp_path, monkeypatch, capsys):
    # The cost is counted with the rest as the file is read: no record is held.
    import evalstats.results._file as results_module

    path = _write(tmp_path / "r.jsonl", SAMPLES)
    prices = tmp_path / "prices.yaml"
    prices.write_text("n: {input: 0.5, output: 0.5}\n", encoding="utf-8")

    def whole(*args, **kwargs):
        raise AssertionError("the whole results file was read into memory")

    monkeypatch.setattr(results_module, "_read", whole)
    assert main(["report", str(path), "--prices", str(prices), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cost"]["variants"][1]["total"] == pytest.approx(20 * 0.5 / 1e6)
    assert doc["cost"]["total"] == pytest.approx(0.009 + 1e-5)
    with pytest.raises(AssertionError, match="into memory"):
        read_results(path)  # the guard itself works


def test_the_json_report_carries_it(tmp_path, capsys):
    path = _write(tmp_path / "r.jsonl", SAMPLES)
    assert main(["report", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "evalstats.report/2"
    assert doc["cost"]["variants"][0]["total"] == pytest.approx(0.009)


def test_bad_prices_are_refused_by_name(tmp_path, capsys):
    path = _write(tmp_path / "r.jsonl", SAMPLES)
    with pytest.raises(InvalidArgument, match=r"prices\['n'\]=0.5 must be a Prices"):
        report(path, prices={"n": 0.5})
    with pytest.raises(InvalidArgument, match="prices=3 must be a prices file"):
        report(path, prices=3)
    bad = tmp_path / "prices.yaml"
    bad.write_text("n: {input: -1, output: 2}\n")
    before = path.read_bytes()
    assert main(["report", str(path), "--prices", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "n.input=-1" in err
    assert path.read_bytes() == before


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.booleans(), st.booleans()),
        min_size=1,
        max_size=12,
    ),
    st.floats(0, 100),
    st.floats(0, 100),
)
def test_the_report_total_is_the_sum_of_the_sample_costs(rows, p_in, p_out):
    import tempfile

    prices = Prices(p_in, p_out)
    samples = [
        sample(
            "x" if i % 2 else "y",
            "a",
            i // 2,
            None if lost else True,
            tokens={"input": t_in, "output": t_out} if has else None,
            name="c",
        )
        for i, (t_in, t_out, has, lost) in enumerate(rows)
    ]
    variants = [{"name": "a", "task": {"model": "m"}, "prices": prices.to_dict()}]
    with tempfile.TemporaryDirectory() as folder:
        r = report(_write(Path(folder) / "r.jsonl", samples, variants=variants))
    a = r.cost.variants[0]
    costs = [sample_cost(s, prices) for s in samples]
    known = [c for c in costs if c is not None]
    if known:
        assert a.total == pytest.approx(math.fsum(known), rel=1e-9, abs=1e-12)
        assert a.per_sample == pytest.approx(math.fsum(known) / len(known), rel=1e-9, abs=1e-12)
    else:
        assert a.total is None
    assert a.no_tokens == sum(c is None for c in costs)
    measured = sum(s["status"] != "unmeasured" for s in samples)
    if known and measured and a.no_tokens == 0:
        assert a.per_measured_sample == pytest.approx(math.fsum(known) / measured, rel=1e-9)
    else:
        assert a.per_measured_sample is None
