"""The notes demo: the notes assistant as a subprocess per sample, over HTTP, offline."""

from __future__ import annotations

import json
import sys

import pytest
from records import check, sample

from evalstats.demo._notes_demo import (
    _action_only,
    _action_passes,
    expected_action_rate,
    notes_variants,
)
from evalstats.errors import InvalidArgument
from evalstats.results._file import Results
from evalstats.running._suite import load_suite


def test_the_two_variants_differ_only_by_the_read_first_prefix():
    from evalstats.demo._notes import READ_FIRST_PREFIX

    base, revised = notes_variants("http://127.0.0.1:9/v1")
    assert base.prefix == "" and revised.prefix == READ_FIRST_PREFIX + " "
    assert base.task.describe() == revised.task.describe()
    command = base.task.describe()["command"]
    assert command[0] == sys.executable
    assert command[1:3] == ["-m", "evalstats.demo.notes_agent"]
    assert command[command.index("--model") + 1] == "openai:notes"
    assert command[command.index("--base-url") + 1] == "http://127.0.0.1:9/v1"
    assert "{workspace}" in command and "{trace}" in command
    case = load_suite("notes").cases[0]
    assert revised.render(case).text == f"{READ_FIRST_PREFIX} {case.prompt}"
    assert base.render(case).text == case.prompt


@pytest.mark.parametrize("bad", ["", "http://a,b", "http://a b", None])
def test_a_base_url_the_variant_spec_cannot_hold_is_refused(bad):
    with pytest.raises(InvalidArgument, match="base_url"):
        notes_variants(bad)


def _checks(*verdicts):
    """Checks k0, k1, ... with these (axis, status)."""
    return [check(s, f"k{i}", axis=axis) for i, (axis, s) in enumerate(verdicts)]


def test_the_action_screen_counts_samples_whose_every_required_action_passed():
    samples = (
        sample("c", "baseline", 0, checks=_checks(("action", "passed"), ("answer", "failed"))),
        sample("c", "baseline", 1, checks=_checks(("action", "passed"), ("action", "failed"))),
        sample("c", "baseline", 2, status="incomplete", checks=_checks(("action", "failed"))),
        sample("c", "revised", 0, checks=_checks(("action", "passed"), ("answer", "unscored"))),
        sample("c", "revised", 1, None),
        sample("c", "revised", 2, checks=_checks(("action", "passed"), ("action", "passed"))),
        sample("c", "revised", 2, checks=_checks(("action", "failed"))),  # a second record
    )
    results = Results(
        None, {"variants": [{"name": "baseline"}, {"name": "revised"}]}, samples, None, ()
    )
    assert _action_passes(results) == {"baseline": (1, 3), "revised": (2, 2)}
    only = _action_only(results)
    assert [c["axis"] for s in only.samples for c in s["checks"]] == ["action"] * 8


def test_the_expected_action_rate_from_the_default_knobs():
    from evalstats.demo._notes import NotesModel

    cases = load_suite("notes").cases
    # By hand from the defaults (p_read 0.5, revised 0.9, p_text_call 0.1, p_stop_early
    # 0.2): six one-read cases need a structured first call, 0.5 * 0.9 = 0.45; "two
    # sources" needs both reads, 0.45 * 0.8 = 0.36; three refusal cases always pass.
    assert expected_action_rate(cases) == pytest.approx((6 * 0.45 + 0.36 + 3) / 10)
    # With the prefix: 0.9 * 0.9 = 0.81 and 0.81 * 0.8 = 0.648.
    assert expected_action_rate(cases, prefix=True) == pytest.approx((6 * 0.81 + 0.648 + 3) / 10)
    knobs = NotesModel(p_read=0.3, p_read_revised=0.7)
    assert expected_action_rate(cases, knobs) < expected_action_rate(cases, knobs, prefix=True)
    with pytest.raises(InvalidArgument, match="no case"):
        expected_action_rate([])


def test_over_http_is_refused_for_the_notes_demo(capsys):
    from evalstats.cli import main

    assert main(["demo", "--suite", "notes", "--over-http"]) == 2
    assert "--over-http is for --suite shop" in capsys.readouterr().err
    assert main(["demo", "--suite", "note"]) == 2


@pytest.mark.slow
def test_the_notes_demo_runs_end_to_end_offline(tmp_path, capsys):
    from evalstats.cli import main
    from evalstats.results._file import read_results
    from evalstats.running._traces import required_action_from_spec, trace_from_summary

    out = tmp_path / "demo"
    assert main(["demo", "--suite", "notes", "--runs", "1", "--out-dir", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    results = read_results(out / "results.jsonl")
    assert results.summary is not None and results.summary["status"] == "finished"
    assert len(results.samples) == 20
    suite = load_suite("notes")
    cases = {c.id: c for c in suite.cases}
    variants = {v["variant"]: v for v in doc["report"]["variants"]}
    assert set(variants) == {"baseline", "revised"}
    for v in variants.values():
        assert v["completed"] + v["incomplete"] + v["unmeasured"] == 10
        assert v["latency_s"]["samples"] == 10
    # Independent recount: every sample's required actions scored again from the
    # trace summary kept in the results file give the report's action axis.
    recount = {"baseline": [0, 0], "revised": [0, 0]}
    for s in results.samples:
        assert s["trace"]["workspace"]["fixtures_unchanged"] in (True, False)
        if s["status"] != "completed":
            # Incomplete: every required action fails as not inspected.
            assert s["reason"] and s["status"] == "incomplete"
            actions = [c for c in s["checks"] if c["axis"] == "action"]
            assert all(c["reason"].startswith("could not be inspected") for c in actions)
            recount[s["variant"]][1] += len(actions)
            continue
        trace = trace_from_summary(s["trace"])
        actions = [c for c in s["checks"] if c["axis"] == "action"]
        specs = cases[s["case"]].required_actions
        assert len(actions) == len(specs)
        for spec, verdict in zip(specs, actions, strict=True):
            result = required_action_from_spec(spec)(trace)
            passed = result is None or getattr(result, "status", None) == "passed"
            assert passed == (verdict["status"] == "passed"), (s["case"], spec)
            recount[s["variant"]][0] += passed
            recount[s["variant"]][1] += 1
    for name, (passed, scored) in recount.items():
        axis = variants[name]["axes"]["action"]
        assert (axis["passed"], axis["scored"]) == (passed, scored)
    containment = {c["variant"]: c for c in doc["report"]["containment"]}
    assert containment["baseline"]["observed"] == containment["revised"]["observed"] == 10
    # The answer checks of the four review-only cases are unscored, never passed.
    for name in variants:
        assert variants[name]["axes"]["answer"]["unscored"] == sum(
            1
            for s in results.samples
            if s["variant"] == name
            and s["status"] == "completed"
            and any(c["status"] == "unscored" for c in s["checks"])
        )
    assert (
        doc["true_rates"]["revised"]["reads_first"] > doc["true_rates"]["baseline"]["reads_first"]
    )
    # Worked out by hand in test_the_expected_action_rate_from_the_default_knobs:
    # (6 * 0.45 + 0.36 + 3) / 10 = 0.606 and (6 * 0.81 + 0.648 + 3) / 10 = 0.8508.
    assert doc["expected_actions"] == {
        "baseline": pytest.approx((6 * 0.45 + 0.36 + 3) / 10),
        "revised": pytest.approx((6 * 0.81 + 0.648 + 3) / 10),
    }
