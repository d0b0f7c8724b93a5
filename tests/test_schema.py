"""The record schema (evalstats.results._records): one definition the writer, the
reader's checks and the tally's decoders all follow."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec import UNSET

import evalstats.reading._tally as tally_module
from evalstats.results._records import (
    CheckVerdict,
    Sample,
    Tokens,
    derived,
    not_inspected,
    sample_problem,
    slot_problem,
    to_record,
)


def test_a_record_is_laid_out_in_the_schema_order_without_unset_fields():
    sample = Sample(
        case="c",
        variant="v",
        repeat=0,
        status="completed",
        checks=[
            CheckVerdict(check="x", status="passed", reason=""),
            CheckVerdict(check="y", status="failed", reason="no", not_inspected=False),
            CheckVerdict(check="z", status="unscored", judge_unmeasured=True),
        ],
        tokens=Tokens(input=3, output=None),
    )
    record = to_record(sample)
    assert list(record)[:6] == ["case", "variant", "repeat", "pair", "position", "status"]
    assert "recording_notes" not in record and "workspace" not in record
    x, y, z = record["checks"]
    assert x == {"check": "x", "axis": None, "status": "passed", "reason": ""}
    assert list(y) == ["check", "axis", "status", "reason", "not_inspected"]
    assert list(z) == ["check", "axis", "status", "reason", "judge_unmeasured"]
    assert record["tokens"] == {"input": 3, "output": None}
    assert sample_problem(record) is None


def test_a_derived_struct_keeps_the_fields_named_in_the_schema_order():
    part = derived("Part", Sample, ("status", "case"))
    assert part.__struct_fields__ == ("case", "status")
    assert part.__struct_config__.tag == "sample"
    with pytest.raises(TypeError, match="no field answers"):
        derived("Part", Sample, ("answers",))


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        ({"status": "failed", "reason": "could not be inspected: empty"}, True),  # older file
        ({"status": "failed", "reason": "it could not be inspected"}, False),
        ({"status": "failed", "reason": "could not be inspected", "not_inspected": False}, False),
        ({"status": "failed", "reason": "no links", "not_inspected": True}, True),
        ({"status": "passed", "reason": "could not be inspected", "not_inspected": True}, False),
        ({"status": "failed", "reason": None}, False),
    ],
)
def test_not_inspected_is_the_field_or_for_older_files_the_reason(check, expected):
    verdict = msgspec.convert(check, CheckVerdict)
    assert verdict.not_inspected is (check.get("not_inspected", UNSET))
    assert not_inspected(verdict) is expected


def test_a_slot_is_five_items():
    assert slot_problem(["c", 0, 0, 1, "v"]) is None
    assert "must be a list [case, repeat, pair, position, variant]" in slot_problem(
        ["c", 0, 0, 1, "v", "extra"]
    )


# --- the reader's checks and the tally's decoder accept the same records -------------

_VALUES = st.sampled_from(
    [None, True, 0, 3, -1, 2.5, 10**7, "x", "NaN", "-Infinity", [], ["x"], {}, {"a": 1}]
)
_CHECK_FIELDS = ("check", "axis", "status", "reason", "not_inspected", "judge_unmeasured")
_SAMPLE_FIELDS = ("case", "variant", "repeat", "status", "checks", "latency_s", "tokens")


@st.composite
def _records(draw: st.DrawFn) -> dict:
    """A sample record, valid or with a few fields (or the checks' fields) set at random."""
    check = {"check": "x", "axis": None, "status": "failed", "reason": "r"}
    for key in draw(st.lists(st.sampled_from(_CHECK_FIELDS), max_size=2)):
        check[key] = draw(_VALUES | st.sampled_from(["passed", "unscored"]))
    record = {
        "case": "c",
        "variant": "v",
        "repeat": 1,
        "status": "completed",
        "checks": [check],
        "latency_s": 0.5,
        "tokens": {"input": 1, "output": 2},
    }
    for key in draw(st.lists(st.sampled_from(_SAMPLE_FIELDS), max_size=2)):
        if draw(st.booleans()):
            record[key] = draw(_VALUES | st.sampled_from(["completed", "unmeasured"]))
        else:
            record.pop(key, None)
    if draw(st.booleans()):
        record["tokens"] = {"input": draw(_VALUES), "output": 4}
    return record


@given(_records())
def test_the_reader_refuses_exactly_the_lines_the_tally_cannot_decode(record):
    line = json.dumps({"type": "sample", **record}).encode()
    try:
        tally_module._WHOLE.decode(line)
    except msgspec.ValidationError:
        decodes = False
    else:
        decodes = True
    assert (sample_problem(record) is None) == decodes, sample_problem(record)


def test_the_tests_factory_writes_the_fields_the_engine_writes(tmp_path):
    import records

    from evalstats.results._file import read_results
    from evalstats.running._checks import contains
    from evalstats.running._engine import Variant, run
    from evalstats.running._suite import Case

    cases = [Case("c", "Where is A-1042?", (contains("A-1042"),))]
    out = tmp_path / "r.jsonl"
    answers = iter(["A-1042", "no", "  "])
    run(cases, [Variant("A", lambda text: next(answers))], runs=3, out=out, progress=False)
    written = read_results(out).samples
    # passed, failed, and incomplete (failed with nothing to inspect)
    made = [
        records.sample("c", "A", 0),
        records.sample("c", "A", 1, False),
        records.sample("c", "A", 2, status="incomplete"),
    ]
    for ours, theirs in zip(made, written, strict=True):
        assert list(ours) == list(theirs)
        assert [list(c) for c in ours["checks"]] == [list(c) for c in theirs["checks"]]
        ((a,), (b,)) = ours["checks"], theirs["checks"]
        assert {k: a[k] for k in ("status", "not_inspected") if k in a} == {
            k: b[k] for k in ("status", "not_inspected") if k in b
        }
