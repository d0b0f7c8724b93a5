"""report: pass rates per tag, clustered by case, and labels that count measured cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from records import samples

from evalstats.cli import main
from evalstats.presenting._report import report
from evalstats.results._file import Results
from evalstats.stats._intervals import clustered_mean_ci, proportion_ci

# Passes of 4 repeats per case, and each case's tags.
PASSES = {"a": 3, "b": 1, "c": 4, "d": 0}
TAGS = {"a": ["orders"], "b": ["orders", "refunds"], "c": ["refunds"], "d": []}


def _results(passes=PASSES, tags=TAGS, *, unmeasured=(), runs=4) -> Results:
    cases = [{"id": c, "prompt": "p", "tags": tags[c]} for c in passes]
    manifest = {"suite": {"name": "toy"}, "cases": cases, "variants": [{"name": "v"}], "runs": runs}
    outcomes = {
        c: [None if c in unmeasured else r < k for r in range(runs)] for c, k in passes.items()
    }
    recorded = tuple(samples({"v": outcomes}, name="c"))
    return Results(None, manifest, recorded, {"status": "finished"}, ())


def _outcomes(cases, passes=PASSES, runs=4):
    outcomes = [int(r < passes[c]) for c in cases for r in range(runs)]
    clusters = [c for c in cases for _ in range(runs)]
    return outcomes, clusters


def test_each_tag_gets_its_cases_rate_with_both_intervals():
    r = report(_results())
    rows = {t.tag: t for t in r.tags}
    assert list(rows) == ["orders", "refunds"]  # in the order the cases first carry them
    orders, refunds = rows["orders"], rows["refunds"]
    assert (orders.passes, orders.measured, orders.cases) == (4, 8, 2)  # a 3/4 + b 1/4
    assert (refunds.passes, refunds.measured, refunds.cases) == (5, 8, 2)  # b 1/4 + c 4/4
    for row, cases in ((orders, ["a", "b"]), (refunds, ["b", "c"])):
        assert str(row.per_trial) == str(proportion_ci(row.passes, row.measured))
        # the clustered interval of the tag's samples, by the public function on the
        # sample outcomes (not on the counts the report keeps)
        ref = clustered_mean_ci(*_outcomes(cases))
        assert row.clustered.estimate == pytest.approx(ref.estimate)
        assert row.clustered.low == pytest.approx(ref.low)
        assert row.clustered.high == pytest.approx(ref.high)
        assert row.clustered.method == ref.method
    text = str(r)
    assert "per tag (passes of measured samples" in text
    assert "\n  orders   v            4/8  50% (" in text and "(2 cases)" in text
    doc = r.to_dict()
    assert [t["tag"] for t in doc["tags"]] == ["orders", "refunds"]
    assert doc["tags"][0]["clustered"]["estimate"] == pytest.approx(0.5)


def test_no_tags_no_section():
    r = report(_results(tags={c: [] for c in PASSES}))
    assert r.tags == () and "per tag" not in str(r) and r.to_dict()["tags"] == []


def test_labels_count_the_cases_with_measured_samples():
    r = report(_results(unmeasured=("c",)))
    v = r.variant("v")
    assert v.cases_measured == 3 and v.clustered.clusters == 3
    text = str(r)
    assert "how often these 3 cases would pass if run again" in text
    assert "how often these 4 cases" not in text
    refunds = next(t for t in r.tags if t.tag == "refunds")
    assert (refunds.cases, refunds.measured) == (1, 4)  # c has no measured sample
    assert r.to_dict()["variants"][0]["cases_measured"] == 3


def test_malformed_tags_in_a_manifest_are_left_out():
    tags = {"a": "orders", "b": [1, "refunds"], "c": None, "d": []}
    r = report(_results(tags=tags))
    assert [t.tag for t in r.tags] == ["refunds"]


def test_the_command_line_prints_the_tags(tmp_path, capsys):
    from evalstats.reading._logs import write_results

    path = write_results(_results(), tmp_path / "r.jsonl")
    assert main(["report", str(path)]) == 0
    assert "per tag" in capsys.readouterr().out
    assert main(["report", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tags"][1]["passes"] == 5
    assert main(["report", str(tmp_path / "none.jsonl")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_readme_tag_report_works_offline(tmp_path, monkeypatch, capsys):
    import shlex
    import shutil

    root = Path(__file__).resolve().parent.parent
    text = (root / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run your own eval", 1)[1].split("\n## ", 1)[0]
    block = section.split("Pass rates per tag", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert [c[1] for c in commands] == ["run", "report"]
    shutil.copytree(root / "cases", tmp_path / "cases")
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        assert main([*argv[1:], *(["--no-progress"] if argv[1] == "run" else [])]) == 0, argv
    out = capsys.readouterr().out
    assert "per tag" in out and "prompt-injection" in out
