"""One-pass counting of a run (evalstats.reading._tally): a file, a Results and records agree."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import results_manifest, variant_sample_records, write_results_file

from evalstats.deciding._compare_results import compare_results
from evalstats.presenting._report import report
from evalstats.reading._source import tally
from evalstats.results._file import read_results


def _three_ways(path):
    """The same run counted from its file, from read_results, and from its records."""
    res = read_results(path)
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return tally(path), tally(res), tally(iter(records))


@settings(max_examples=25, deadline=None)
@given(variant_sample_records(variant="A"), variant_sample_records(variant="B"))
def test_file_results_and_records_give_the_same_report(tmp_path_factory, a, b):
    path = tmp_path_factory.mktemp("t") / "r.jsonl"
    write_results_file(
        path, results_manifest(["c1", "c2", "c3"], ["A", "B"], 5), a + b, {"status": "finished"}
    )
    reports = [report(t).to_dict() for t in _three_ways(path)]
    reports[0]["path"] = reports[1]["path"] = reports[2]["path"] = None
    assert reports[0] == reports[1] == reports[2]
    comparisons = [compare_results(t, "A", "B").to_dict() for t in _three_ways(path)]
    assert comparisons[0] == comparisons[1] == comparisons[2]


@settings(max_examples=25, deadline=None)
@given(variant_sample_records(variant="A"))
def test_outcomes_match_results_outcomes(tmp_path_factory, a):
    path = tmp_path_factory.mktemp("t") / "r.jsonl"
    write_results_file(path, results_manifest(["c1", "c2", "c3"], ["A"], 5), a)
    res = read_results(path)
    counted = tally(path)
    assert counted.variants() == res.variants()
    assert counted.outcomes("A") == res.outcomes("A")


# Case ids that a naive split of the schedule would cut in the wrong place.
AWKWARD = st.text(alphabet=st.sampled_from(list('ab],["\\ {}:\u00e9\n')), min_size=1, max_size=8)


@settings(max_examples=30, deadline=None)
@given(st.lists(AWKWARD, min_size=1, max_size=4, unique=True), st.integers(1, 3))
def test_schedule_with_awkward_case_ids_is_read_slot_by_slot(tmp_path_factory, cases, runs):
    path = tmp_path_factory.mktemp("t") / "r.jsonl"
    manifest = results_manifest(cases, ["A", "B"], runs)
    write_results_file(path, manifest, [])
    counted = tally(path)
    assert counted.case_ids() == list(dict.fromkeys(slot[0] for slot in manifest["schedule"]))
    for v in ("A", "B"):
        assert counted.scheduled(v) == len(cases) * runs
        assert counted.slots(v) == {c: b"\x01" * runs for c in cases}


def test_a_long_schedule_is_read_in_chunks(tmp_path):
    # More slots than one chunk (4,096), with spaces after the commas.
    runs = 1500
    manifest = results_manifest(["x", "y"], ["A", "B"], runs)
    path = tmp_path / "r.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, separators=(", ", ": ")) + "\n")
    counted = tally(path)
    assert counted.scheduled("A") == counted.scheduled("B") == 2 * runs
    assert counted.slots("A") == {"x": b"\x01" * runs, "y": b"\x01" * runs}
    r = report(path)
    assert r.variant("A").missing == 2 * runs


@settings(max_examples=40, deadline=None)
@given(
    st.lists(AWKWARD, min_size=1, max_size=4, unique=True),
    st.integers(1, 12),
    st.integers(4, 400),
    st.sampled_from([", ", ","]),
    st.booleans(),
)
def test_a_schedule_decoded_in_stretches_counts_every_slot(
    tmp_path_factory, cases, runs, stretch, comma, long_line
):
    # The schedule is decoded a stretch of text at a time, cut after a "],";
    # with short stretches and case ids holding "],", cuts fall inside strings
    # and between slots everywhere, in a manifest read whole or in pieces.
    import evalstats.reading._tally as tally_module
    import evalstats.results._file as results_module

    path = tmp_path_factory.mktemp("t") / "r.jsonl"
    manifest = results_manifest(cases, ["A", "B"], runs)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, separators=(comma, ": ")) + "\n")
    old = tally_module._STRETCH, results_module.LONG_LINE, tally_module.PIECE
    tally_module._STRETCH = stretch
    if long_line:
        results_module.LONG_LINE = tally_module.PIECE = 64
    try:
        counted = tally(path)
    finally:
        tally_module._STRETCH, results_module.LONG_LINE, tally_module.PIECE = old
    assert counted.case_ids() == list(cases)
    for v in ("A", "B"):
        assert counted.scheduled(v) == len(cases) * runs
        assert counted.slots(v) == {c: b"\x01" * runs for c in cases}


@pytest.mark.parametrize("long_line", [False, True])
def test_a_bad_slot_after_many_good_ones_is_named_by_its_index(tmp_path, monkeypatch, long_line):
    # The stretch holding the bad slot does not decode; read slot by slot, the
    # error names the slot's place in the whole schedule.
    import evalstats.reading._tally as tally_module
    import evalstats.results._file as results_module
    from evalstats.errors import ResultsFileError

    manifest = results_manifest(["x", "y"], ["A", "B"], 3000)
    manifest["schedule"][9000][1] = -1
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    if long_line:
        monkeypatch.setattr(results_module, "LONG_LINE", 4096)
        monkeypatch.setattr(tally_module, "PIECE", 4096)
    with pytest.raises(ResultsFileError, match=r'"schedule"\[9000\]: .*repeat'):
        tally(path)


_POOL_CHECKS = [
    {"check": "x", "axis": "content", "status": "passed", "reason": ""},
    {"check": "x", "axis": "content", "status": "failed", "reason": "x missed"},
    {"check": "y", "axis": None, "status": "failed", "reason": "could not be inspected: empty"},
    # written with the flag: the flag, not the reason, says whether it was inspected
    {"check": "y", "status": "failed", "reason": "could not be inspected", "not_inspected": False},
    {"check": "z", "status": "failed", "reason": "no links", "not_inspected": True},
    {"check": "j", "axis": "judge", "status": "unscored", "reason": "", "judge_unmeasured": True},
    {"check": "j", "axis": "judge", "status": "unscored", "reason": "n/a"},
    {"check": "j", "axis": "judge", "status": "passed", "reason": "fine"},
]


@st.composite
def repeating_samples(draw: st.DrawFn) -> list[dict]:
    """Samples of two variants whose checks often repeat byte for byte, and sometimes
    carry a reason of their own."""
    runs = draw(st.integers(1, 12))
    samples = []
    for r in range(runs):
        for case in ("c1", "c2"):
            for v in ("A", "B"):
                picks = draw(st.lists(st.integers(0, len(_POOL_CHECKS) - 1), max_size=3))
                checks = [dict(_POOL_CHECKS[i]) for i in picks]
                if checks and draw(st.integers(0, 3)) == 0:
                    checks[0]["reason"] += f" ({case} {v} {r})"  # seen once only
                status = draw(
                    st.sampled_from(["completed", "completed", "incomplete", "unmeasured"])
                )
                samples.append(
                    {"case": case, "variant": v, "repeat": r, "status": status, "checks": checks}
                )
    return samples


@settings(max_examples=40, deadline=None)
@given(repeating_samples(), st.sampled_from([(1, 1), (2, 3), (4, 2048), (1024, 2048)]))
def test_checks_seen_before_count_as_when_decoded_each_time(tmp_path_factory, samples, memo):
    # A file's reading keeps the verdicts of each (case, checks' text) it has seen
    # (up to MEMO), and gives up keeping them when that does not pay (judged every
    # JUDGE_EVERY samples not found): the counts are those of the records in memory.
    import evalstats.reading._tally as tally_module

    path = tmp_path_factory.mktemp("t") / "r.jsonl"
    manifest = results_manifest(["c1", "c2"], ["A", "B"], 12)
    write_results_file(path, manifest, samples, {"status": "finished"})
    old = tally_module._Lines.JUDGE_EVERY, tally_module.MEMO
    tally_module._Lines.JUDGE_EVERY, tally_module.MEMO = memo
    try:
        from_file = tally(path)
    finally:
        tally_module._Lines.JUDGE_EVERY, tally_module.MEMO = old
    in_memory = tally(
        [{**manifest, "type": "manifest"}, *samples, {"type": "summary", "status": "finished"}]
    )
    for v in ("A", "B"):
        assert from_file.counts(v).verdicts == in_memory.counts(v).verdicts
        assert from_file.counts(v).judge_unmeasured == in_memory.counts(v).judge_unmeasured
        assert from_file.outcomes(v) == in_memory.outcomes(v)
    one, two = report(from_file).to_dict(), report(in_memory).to_dict()
    one["path"] = two["path"] = None
    assert one == two


def test_not_inspected_is_the_flag_and_for_older_records_the_reason(tmp_path):
    manifest = results_manifest(["c1"], ["A"], 1)
    checks = [
        {"check": "a", "status": "failed", "reason": "could not be inspected: empty"},  # older
        {
            "check": "b",
            "status": "failed",
            "reason": "could not be inspected",
            "not_inspected": False,
        },
        {"check": "c", "status": "failed", "reason": "no links", "not_inspected": True},
        {"check": "d", "status": "failed", "reason": "it could not be inspected"},
    ]
    sample = {"case": "c1", "variant": "A", "repeat": 0, "status": "completed", "checks": checks}
    path = write_results_file(tmp_path / "r.jsonl", manifest, [sample])
    for counted in _three_ways(path):
        kinds = {check: kind for (_, check, _, kind), n in counted.counts("A").verdicts.items()}
        assert kinds == {"a": "not_inspected", "b": "failed", "c": "not_inspected", "d": "failed"}


@pytest.mark.parametrize("judge_every", [1, 1024])
def test_bad_checks_after_good_ones_are_named_by_line(tmp_path, judge_every, monkeypatch):
    import evalstats.reading._tally as tally_module
    from evalstats.errors import ResultsFileError

    good = {"case": "c1", "variant": "A", "status": "completed"}
    good["checks"] = [{"check": "x", "status": "passed"}]
    samples = [dict(good, repeat=r) for r in range(4)]
    samples.append(dict(good, repeat=4, checks=[{"check": "x", "status": "maybe"}]))
    path = write_results_file(tmp_path / "r.jsonl", results_manifest(["c1"], ["A"], 5), samples)
    monkeypatch.setattr(tally_module._Lines, "JUDGE_EVERY", judge_every)
    with pytest.raises(ResultsFileError, match="line 6"):
        tally(path)


def test_duplicates_are_counted_once_and_named_with_both_lines(tmp_path):
    sample = {
        "case": "c1",
        "variant": "A",
        "repeat": 0,
        "status": "completed",
        "checks": [{"status": "passed"}],
    }
    path = write_results_file(
        tmp_path / "r.jsonl",
        results_manifest(["c1"], ["A"], 2),
        [sample, sample, dict(sample, repeat=1)],
    )
    counted = tally(path)
    assert counted.counts("A").completed == 2
    assert any("line 3: a second sample" in w and "line 2" in w for w in counted.warnings)
    assert counted.warnings == read_results(path).warnings


@settings(max_examples=40, deadline=None)
@given(
    st.lists(AWKWARD, min_size=1, max_size=3, unique=True),
    st.integers(1, 4),
    st.integers(8, 200),
    st.sampled_from([", ", ","]),
)
def test_a_manifest_line_read_in_small_pieces_counts_the_same(
    tmp_path_factory, cases, runs, piece, comma
):
    # A first line longer than LONG_LINE is read in pieces; with pieces of a few
    # bytes every token, string and slot gets cut somewhere.
    import evalstats.reading._tally as tally_module
    import evalstats.results._file as results_module

    path = tmp_path_factory.mktemp("t") / "r.jsonl"
    manifest = results_manifest(cases, ["A", "B"], runs)
    sample = {"type": "sample", "case": cases[0], "variant": "A", "repeat": 0}
    sample |= {"status": "completed", "checks": [{"status": "passed"}]}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, separators=(comma, ": ")) + "\n")
        f.write(json.dumps(sample) + "\n")
    whole = tally(path)
    old = results_module.LONG_LINE, tally_module.PIECE
    results_module.LONG_LINE = tally_module.PIECE = piece
    try:
        pieces = tally(path)
    finally:
        results_module.LONG_LINE, tally_module.PIECE = old
    assert pieces.manifest == whole.manifest
    assert pieces.case_ids() == whole.case_ids() == list(cases)
    for v in ("A", "B"):
        assert pieces.slots(v) == whole.slots(v)
    assert pieces.outcomes("A") == whole.outcomes("A")
    assert pieces.warnings == whole.warnings


@pytest.mark.parametrize(
    "line, words",
    [
        (b'{"type": "manifest", "format": 1, "schedule": [["x", "r", 0, 0, "A"]]}', "repeat"),
        (b'{"type": "manifest", "format": 1, "runs": "many", "schedule": []}', '"runs"'),
        (b'{"type": "manifest", "format": 1, "schedule": [["x", 0, 0, 0, "A"]', "incomplete"),
        (b'{"type": "manifest", "format": 1, "schedule": "notalist"}', '"schedule"'),
        (b'{"type": "sample", "format": 1, "schedule": []}', "should be the manifest"),
        (b'["type", "manifest"]', "not a JSON object|not valid JSON"),
    ],
)
def test_a_bad_long_manifest_line_is_refused_by_line(tmp_path, monkeypatch, line, words):
    import evalstats.reading._tally as tally_module
    import evalstats.results._file as results_module
    from evalstats.errors import ResultsFileError

    path = tmp_path / "r.jsonl"
    path.write_bytes(line + b"\n")
    monkeypatch.setattr(results_module, "LONG_LINE", 16)
    monkeypatch.setattr(tally_module, "PIECE", 16)
    with pytest.raises(ResultsFileError, match=words):
        tally(path)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 10**8).map(lambda us: us / 1e6),  # as the engine writes them
            st.floats(0, 1e4, allow_nan=False),
        ),
        min_size=1,
        max_size=300,
    ),
    st.booleans(),
)
def test_kept_latencies_give_the_exact_quantiles(values, select):
    # Latencies are kept as microseconds where that is exact, in blocks; their
    # quantiles, by sorting or by numpy's selection, are latency_summary's.
    import importlib

    from evalstats.presenting._report import latency_summary
    from evalstats.reading._tally import _Latencies

    report_module = importlib.import_module("evalstats.presenting._report")
    old = report_module._SELECT_FROM, _Latencies.BLOCK
    report_module._SELECT_FROM = 0 if select else 10**9
    _Latencies.BLOCK = 7  # many blocks
    try:
        kept = _Latencies()
        for v in values:
            kept.append(v)
        assert sorted(kept) == sorted(values) and len(kept) == len(values)
        assert report_module._latency_quantiles(kept) == latency_summary(values)
    finally:
        report_module._SELECT_FROM, _Latencies.BLOCK = old


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=300),
    st.integers(1, 9),
)
def test_quantiles_of_many_microsecond_latencies_are_found_without_numpy(micros, block):
    # All latencies in whole microseconds (as the engine writes them): each
    # block is sorted apart and the ranks found by bisection over the blocks;
    # the figures are latency_summary's, ties and the largest counts included.
    import importlib

    from evalstats.presenting._report import latency_summary
    from evalstats.reading._tally import _Latencies

    report_module = importlib.import_module("evalstats.presenting._report")
    values = [us / 1e6 for us in micros]
    old = report_module._SELECT_FROM, _Latencies.BLOCK
    report_module._SELECT_FROM, _Latencies.BLOCK = 0, block
    try:
        kept = _Latencies()
        for v in values:
            kept.append(v)
        assert not any(kept.other)
        assert report_module._latency_quantiles(kept) == latency_summary(values)
        none = report_module._latency_quantiles(_Latencies())
        assert all(math.isnan(x) for x in none)  # no latency: (nan, nan), as latency_summary
    finally:
        report_module._SELECT_FROM, _Latencies.BLOCK = old


def test_look_records_are_kept_and_later_rounds_pair_as_the_first(tmp_path):
    # A sequential run's file: the manifest schedules round 0, each later round
    # runs the same slots again (repeat = round), and a look follows each round.
    manifest = results_manifest(["c1", "c2"], ["A", "B"], 1)
    manifest["until_decided"] = {"max_rounds": 5}
    lines = [json.dumps({**manifest, "type": "manifest"})]
    for rnd in range(3):
        for case in ("c1", "c2"):
            for variant, ok in (("A", rnd == 0), ("B", True)):
                check = {"check": "k", "axis": None, "status": "passed" if ok else "failed"}
                lines.append(
                    json.dumps(
                        {
                            "type": "sample",
                            "case": case,
                            "variant": variant,
                            "repeat": rnd,
                            "status": "completed",
                            "checks": [check],
                        }
                    )
                )
        lines.append(
            json.dumps(
                {"type": "look", "round": rnd, "pairs": 2 * (rnd + 1), "verdict": "cant_tell"}
            )
        )
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    for counted in _three_ways(path):
        assert [look["round"] for look in counted.looks] == [0, 1, 2]
        cmp = compare_results(counted, "A", "B")
        assert cmp.paired and cmp.pairs == 6 and cmp.dropped_missing == 0
        assert any("looked at 3 times" in w for w in cmp.warnings)
