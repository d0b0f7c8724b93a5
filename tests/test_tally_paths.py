"""A file's reader counts the same whichever way it decodes a line (evalstats.reading._tally).

The reader keeps the verdicts of checks it has seen (by case and checks' text)
and counts a sample by them; when that does not pay it decodes lines whole and
counts their checks one by one. Both ways, and the records in memory, must give
the very same counts in the very same order (the report lists checks and axes
in the order first seen), the same report and JSON, and the same error for a
line that breaks the format.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import results_manifest

import evalstats.reading._tally as tally_module
from evalstats.errors import ResultsFileError
from evalstats.presenting._report import report
from evalstats.reading._source import tally

CASES = ("c1", "c2")
VARIANTS = ("A", "B")
RUNS = 10

# A check as written: its name, axis, status and reason (and, drawn below, its
# flags). Without a not_inspected flag (an older file), reasons that start with the
# inspection-failure text, or spell it with a \u escape, count apart.
_CHECKS = [
    ("x", "content", "passed", ""),
    ("x", "content", "failed", "x missed"),
    ("y", None, "failed", "could not be inspected: the answer is empty"),
    ("y", None, "failed", "\u0063ould not be inspected"),  # written as \u0063 by json.dumps
    ("y", None, "failed", "it could not be inspected"),  # not at the start: a plain failure
    ("j", "judge", "unscored", ""),
    ("j", "judge", "passed", "fine \u00e9"),
    ("k", None, "unscored", None),
    ('say "hi"\n', "t\u00f6ne", "passed", ""),  # names that take escapes, or not ASCII
    ('say "hi"\n', "t\u00f6ne", "failed", 'no "hi"'),
]


@st.composite
def runs(draw: st.DrawFn) -> list[dict]:
    """Samples of two variants whose checks repeat, some with reasons of their own."""
    samples = []
    for r in range(draw(st.integers(1, RUNS))):
        for case in CASES:
            for v in VARIANTS:
                checks = []
                for i in draw(st.lists(st.integers(0, len(_CHECKS) - 1), max_size=4)):
                    name, axis, status, reason = _CHECKS[i]
                    check = {"check": name, "axis": axis, "status": status, "reason": reason}
                    if draw(st.integers(0, 2)) == 0 and reason is not None:
                        check["reason"] = f"{reason} ({case} {v} {r})"  # a reason of its own
                    if status == "unscored" and draw(st.booleans()):
                        check["judge_unmeasured"] = True
                    if draw(st.integers(0, 2)) == 0:
                        check["not_inspected"] = draw(st.booleans())
                    checks.append(check)
                status = draw(
                    st.sampled_from(["completed", "completed", "incomplete", "unmeasured"])
                )
                samples.append(
                    {
                        "case": case,
                        "variant": v,
                        "repeat": r,
                        "status": status,
                        "checks": checks,
                        "latency_s": draw(st.sampled_from([None, 0.25, 1.5])),
                    }
                )
    if samples and draw(st.booleans()):
        samples.append(dict(samples[draw(st.integers(0, len(samples) - 1))]))  # a duplicate
    return samples


def _write(path: Path, samples: list[dict], *, ascii_only: bool) -> Path:
    manifest = results_manifest(list(CASES), list(VARIANTS), RUNS)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest) + "\n")
        for s in samples:
            f.write(json.dumps({"type": "sample", **s}, ensure_ascii=ascii_only) + "\n")
        f.write(json.dumps({"type": "summary", "status": "finished"}) + "\n")
    return path


#: The ways a file's lines are read: the reader as it is (keeping verdicts while
#: that pays), lines decoded whole from the first, keeping given up after the
#: first sample not found (then lines are decoded whole by a decoder that knows
#: the names seen so far, made again as lines bring new ones), the same with
#: that decoder made again at every line it refuses, or given up at the first,
#: and a memo with room for one set of checks only.
WAYS = (
    "as is",
    "whole",
    "judge every sample",
    "named again at every stray",
    "named given up",
    "memo of one",
)


def _tally(path: Path, way: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        if way == "whole":
            start = tally_module._Lines.__init__

            def whole_from_the_first(self, shown: str) -> None:
                start(self, shown)
                self.keeping = False

            m.setattr(tally_module._Lines, "__init__", whole_from_the_first)
        elif way == "judge every sample":
            m.setattr(tally_module._Lines, "JUDGE_EVERY", 1)
        elif way.startswith("named"):
            m.setattr(tally_module._Lines, "JUDGE_EVERY", 1)
            m.setattr(tally_module._Lines, "STRAYS", 1)
            if way == "named given up":
                m.setattr(tally_module._Lines, "NAMES", 0)
        elif way == "memo of one":
            m.setattr(tally_module, "MEMO", 1)
        return tally(path)


def _counted(t) -> list:
    """Everything the counts hold, in their order."""
    out = []
    for v in VARIANTS:
        c = t.counts(v)
        out.append(
            (
                list(c.verdicts.items()),
                c.judge_unmeasured,
                c.completed,
                c.incomplete,
                c.unmeasured,
                sorted(c.latencies),
                t.outcomes(v),
            )
        )
    return out


def _shown(t) -> tuple[str, str]:
    """The report's JSON document, keys in their order, and its text."""
    r = report(t)
    document = r.to_dict()
    document["path"] = None
    return json.dumps(document, allow_nan=True), str(r).replace(str(t.path), "FILE")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs(), st.booleans())
def test_every_way_of_reading_counts_and_reports_the_same(
    tmp_path_factory, monkeypatch, samples, ascii_only
):
    path = _write(tmp_path_factory.mktemp("t") / "r.jsonl", samples, ascii_only=ascii_only)
    tallies = [_tally(path, way, monkeypatch) for way in WAYS]
    manifest = results_manifest(list(CASES), list(VARIANTS), RUNS)
    in_memory = tally([manifest, *samples, {"type": "summary", "status": "finished"}])
    expected = _counted(in_memory)
    for way, t in zip(WAYS, tallies, strict=True):
        assert _counted(t) == expected, way
    shown = [_shown(t) for t in tallies]
    assert all(s == shown[0] for s in shown), "the reports differ"


def test_counts_by_kept_verdicts_keep_the_order_first_seen(tmp_path, monkeypatch):
    # Variant A first meets check "b" through checks the memo keeps, later "a"
    # through checks it has no room for: the order stays b, a.
    kept = [{"check": "b", "status": "passed"}]
    other = [{"check": "a", "status": "failed", "reason": "r"}]
    samples = [
        {"case": "c1", "variant": "A", "repeat": r, "status": "completed", "checks": checks}
        for r, checks in enumerate([kept, other, kept, other + kept])
    ]
    path = _write(tmp_path / "r.jsonl", samples, ascii_only=False)
    monkeypatch.setattr(tally_module, "MEMO", 1)
    t = tally(path)
    assert list(t.counts("A").verdicts.items()) == [
        (("c1", "b", None, "passed"), 3),
        (("c1", "a", None, "failed"), 2),
    ]


# Ways a sample line can break the format, each with what the error must name.
_BROKEN = {
    "a check's status": ({"status": "maybe"}, r'checks\[\d\]: "status"=\'maybe\''),
    "a check's reason": ({"reason": 5}, r'checks\[\d\]: "reason"=5 must be a string'),
    "a check's name": ({"check": ["x"]}, r'checks\[\d\]: "check"=\[\'x\'\] must be a string'),
    "a check's axis": ({"axis": 1.5}, r'checks\[\d\]: "axis"=1.5 must be a string'),
    "a check without a status": (
        {"status": None},
        r'checks\[\d\] must be an object with a "status"',
    ),
}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs(), st.sampled_from(sorted(_BROKEN)), st.data())
def test_a_broken_line_is_named_alike_every_way(
    tmp_path_factory, monkeypatch, samples, broken, data
):
    with_checks = [i for i, s in enumerate(samples) if s["checks"]]
    if not with_checks:
        samples.append(
            {
                "case": "c1",
                "variant": "A",
                "repeat": 0,
                "status": "completed",
                "checks": [{"check": "x", "status": "passed"}],
            }
        )
        with_checks = [len(samples) - 1]
    i = data.draw(st.sampled_from(with_checks))
    j = data.draw(st.integers(0, len(samples[i]["checks"]) - 1))
    change, pattern = _BROKEN[broken]
    check = {**samples[i]["checks"][j], **change}
    if check["status"] is None:
        del check["status"]
    samples[i] = {
        **samples[i],
        "checks": [*samples[i]["checks"][:j], check, *samples[i]["checks"][j + 1 :]],
    }
    path = _write(tmp_path_factory.mktemp("t") / "r.jsonl", samples, ascii_only=False)
    messages = []
    for way in WAYS:
        with pytest.raises(ResultsFileError) as error:
            _tally(path, way, monkeypatch)
        messages.append(str(error.value))
    assert all(m == messages[0] for m in messages), messages
    # the file, the line (the manifest is line 1) and the field
    first_broken = next(k for k, s in enumerate(samples) if any(_is_broken(c) for c in s["checks"]))
    assert messages[0].startswith(f"{path}: line {first_broken + 2}: ")
    assert pytest.importorskip("re").search(pattern, messages[0]), messages[0]


def _is_broken(check: dict) -> bool:
    return check.get("status") not in ("passed", "failed", "unscored") or any(
        check.get(k) is not None and not isinstance(check.get(k), str)
        for k in ("check", "axis", "reason")
    )


@pytest.mark.parametrize("way", WAYS)
def test_a_reason_that_is_not_utf8_is_not_valid_json_every_way(tmp_path, monkeypatch, way):
    # msgspec skips an answer's text unchecked, but a reason is decoded to text:
    # a reason that is not UTF-8 makes the line invalid JSON, whichever way it is read.
    good = {"type": "sample", "case": "c1", "variant": "A", "status": "completed"}
    lines = [json.dumps(results_manifest(["c1"], ["A"], 3)).encode()]
    for r in range(3):
        check = {"check": "x", "status": "failed", "reason": f"reason {r} REASON"}
        lines.append(json.dumps({**good, "repeat": r, "checks": [check]}).encode())
    lines[2] = lines[2].replace(b"REASON", b"\xff\xfe")
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ResultsFileError, match=r"line 3 is not valid JSON"):
        _tally(path, way, monkeypatch)


def test_the_named_decoder_gives_the_names_it_knows_as_the_very_strings(monkeypatch):
    decoder = tally_module._named_decoder({"c1": None}, {"x": None}, {"content": None})
    known = decoder.decode(
        b'{"type":"sample","case":"c1","variant":"A","repeat":0,"status":"completed",'
        b'"checks":[{"check":"x","axis":"content","status":"passed"}]}'
    )
    assert known.case == "c1" and known.checks[0].check == "x"
    assert known.checks[0].axis == "content"
    with pytest.raises(msgspec.ValidationError):
        decoder.decode(
            b'{"type":"sample","case":"c1","variant":"A","repeat":0,"status":"completed",'
            b'"checks":[{"check":"y","status":"passed"}]}'
        )
