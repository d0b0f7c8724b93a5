"""Whatever a model or an agent returns is recordable: lone surrogates, NaN, ±Infinity.

Each of these used to stop a run for good ("the sample record cannot be
written as JSON", and every ``--resume`` met the same sample again) or crash
the notes assistant while it wrote its trace.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.demo.notes_agent import NotesDispatcher, run_notes
from evalstats.results._file import ResultsWriter, read_results
from evalstats.results._recordable import NOTES_KEY, recordable, recordable_text
from evalstats.running._checks import contains
from evalstats.running._engine import TaskResult, Variant, run
from evalstats.running._suite import Case
from evalstats.running.providers import OpenAIProvider
from evalstats.running.providers._base import Completion


def strict_loads(text: str):
    """json.loads that refuses NaN and ±Infinity, as strict JSON readers do."""

    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def strict_dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


# Anything a JSON reader (Python's, which takes NaN and lone surrogate escapes)
# can give back.
json_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | json_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(json_text, inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_any_json_value_becomes_strict_json_in_utf8(value):
    clean, notes = recordable(value, "answer")
    strict_loads(strict_dumps(clean).decode("utf-8"))  # neither raises
    try:
        strict_dumps(value)
    except ValueError:
        assert notes, "a value that needed rewriting was rewritten without a note"
    else:
        assert clean == value and notes == []


def test_surrogates_are_escaped_visibly_and_pairs_joined():
    assert recordable_text("hi \ud800") == ("hi \\ud800", 1)
    assert recordable_text("a\udfffb\ud800") == ("a\\udfffb\\ud800", 2)
    assert recordable_text("\ud83d\ude00") == ("\U0001f600", 0)
    clean, notes = recordable({"finish_reason": math.nan, "args": {"n": -math.inf}}, "trace")
    assert clean == {"finish_reason": "NaN", "args": {"n": "-Infinity"}}
    assert notes == [
        "trace.finish_reason: NaN is not a JSON number; written as the string",
        "trace.args.n: -Infinity is not a JSON number; written as the string",
    ]


def test_nesting_deeper_than_json_readers_go_is_cut():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    clean, notes = recordable(deep, "trace")
    strict_dumps(clean)
    assert notes and "nested deeper than 200 levels" in notes[0]


def test_the_writer_records_what_json_cannot_hold_with_notes(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    record = {
        "case": "a",
        "variant": "v",
        "repeat": 0,
        "status": "completed",
        "checks": [],
        "answer": "hi \ud800",
        "latency_s": math.inf,
    }
    with ResultsWriter.create(path, {"suite": {"name": "s"}}) as w:
        w.write_sample(record)
        w.close({"status": "finished"})
    strict_loads(path.read_text(encoding="utf-8").splitlines()[1])
    (sample,) = read_results(path).samples
    assert sample["answer"] == "hi \\ud800" and sample["latency_s"] == "Infinity"
    assert len(sample[NOTES_KEY]) == 2
    assert record["answer"] == "hi \ud800"  # the caller's record is left alone


def test_a_run_completes_and_the_check_sees_what_was_recorded(tmp_path: Path) -> None:
    def task(prompt: str) -> TaskResult:
        return TaskResult(
            answer="hi \ud800",
            trace={"finish_reason": math.nan, "arguments": {"path": math.nan}, "obj": object()},
            model="m\udfff",
        )

    cases = [
        Case("a", "Hello?", (contains("\\ud800"),)),  # the escape, as recorded
        Case("b", "Hello again?", (contains("\ud800"),)),  # the raw surrogate is gone
    ]
    out = tmp_path / "r.jsonl"
    run(cases, [Variant("v", task)], runs=2, out=out, progress=False)
    text = out.read_text(encoding="utf-8")
    for line in text.splitlines():
        strict_loads(line)
    results = read_results(out)
    assert results.summary["status"] == "finished"
    by_case = {s["case"]: s for s in results.samples if s["repeat"] == 0}
    assert {s["status"] for s in results.samples} == {"completed"}
    assert by_case["a"]["checks"][0]["status"] == "passed"
    assert by_case["b"]["checks"][0]["status"] == "failed"
    sample = by_case["a"]
    assert sample["answer"] == "hi \\ud800"
    assert sample["trace"]["finish_reason"] == "NaN"
    assert sample["trace"]["arguments"] == {"path": "NaN"}
    assert sample["trace"]["obj"].startswith("<object object")
    assert sample["model"] == "m\\udfff"
    notes = " | ".join(sample[NOTES_KEY])
    assert "answer: 1 lone surrogate" in notes and "trace.finish_reason: NaN" in notes
    assert "trace.obj: a object is not JSON" in notes


def test_a_provider_answer_with_a_surrogate_and_nan_arguments_is_rewritten(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000")
    body = (
        '{"model": "gpt-x\\udfff", "choices": [{"index": 0, "finish_reason": NaN, '
        '"message": {"role": "assistant", "content": "hi \\ud800", "tool_calls": '
        '[{"id": "c1", "type": "function", "function": {"name": "read_note", '
        '"arguments": "{\\"path\\": NaN}"}}]}}], "usage": {"prompt_tokens": 1, '
        '"completion_tokens": Infinity}}'
    )
    transport = httpx.MockTransport(
        lambda request: httpx.Response(
            200, content=body.encode(), headers={"content-type": "application/json"}
        )
    )
    provider = OpenAIProvider("gpt-x", transport=transport)
    done = asyncio.run(provider.complete("Hi", seed=1))
    assert done.answer == "hi \\ud800" and done.model == "gpt-x\\udfff"
    assert done.stop_reason == "NaN"
    assert done.tool_calls[0]["arguments"] == {"path": "NaN"}
    assert done.tokens == {"input": 1, "output": None}
    strict_dumps(done.trace())
    assert len(done.trace()[NOTES_KEY]) == 4
    # and it can be sent back: httpx refuses NaN and cannot encode a surrogate
    asyncio.run(
        provider.complete(
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": done.answer, "tool_calls": list(done.tool_calls)},
                {"role": "tool", "tool_call_id": "c1", "name": "read_note", "content": "x"},
            ],
            seed=1,
        )
    )


class _Scripted:
    def __init__(self, script):
        self.script = list(script)

    async def complete(self, messages, *, seed=None):
        return self.script.pop(0)


@pytest.mark.parametrize("surrogate_in", ["answer", "arguments"])
def test_the_notes_assistant_writes_its_trace_whatever_the_model_sent(
    tmp_path: Path, surrogate_in: str
) -> None:
    (tmp_path / "NOTES").write_text("notes.txt\n")
    (tmp_path / "notes.txt").write_text("Paper Kite\n")
    odd = {"path": math.nan} if surrogate_in == "answer" else {"path": "notes\ud800.txt"}
    script = [
        Completion(answer="", tool_calls=({"id": "c0", "name": "read_note", "arguments": odd},)),
        Completion(answer="It is \ud800 Paper Kite", stop_reason=math.inf),
    ]
    trace_path = tmp_path / "trace.jsonl"
    with open(trace_path, "w", encoding="utf-8") as trace:
        outcome = asyncio.run(
            run_notes(
                "Name?",
                provider=_Scripted(script),
                dispatcher=NotesDispatcher(tmp_path, approve=lambda p: False),
                trace=trace,
            )
        )
    assert outcome.exit_code == 0 and outcome.stopped is None
    records = [strict_loads(line) for line in trace_path.read_text("utf-8").splitlines()]
    assert [r["type"] for r in records][-1] == "final"
    assert records[-1]["answer"] == "It is \\ud800 Paper Kite"
    assert any(NOTES_KEY in r for r in records)


def test_a_full_disk_is_one_error_and_leaves_no_partial_manifest(tmp_path: Path, monkeypatch):
    from evalstats.errors import ResultsFileError

    path = tmp_path / "r.jsonl"
    full = open("/dev/full", "wb", buffering=1 << 20)  # noqa: SIM115 - closed by the writer
    w = ResultsWriter.create(path, {"suite": {"name": "s"}})
    w._file.close()
    w._file = full
    record = {"case": "a", "variant": "v", "repeat": 0, "status": "completed", "checks": []}
    with pytest.raises(ResultsFileError, match="No space left"):
        w.write_sample(record)
    with pytest.raises(ResultsFileError, match="cannot finish writing .*--resume"):
        w.close({"status": "finished"})

    # A manifest that cannot be written leaves no file behind to block the path.
    def no_space(self, line):
        raise ResultsFileError(f"cannot write to {self.path}: No space left on device")

    monkeypatch.setattr(ResultsWriter, "_write", no_space)
    other = tmp_path / "s.jsonl"
    with pytest.raises(ResultsFileError, match="No space left"):
        ResultsWriter.create(other, {"suite": {"name": "s"}})
    assert not other.exists()


def test_the_key_guard_catches_case_variants_and_base64(tmp_path: Path, monkeypatch) -> None:
    import base64

    from evalstats.errors import ResultsFileError
    from evalstats.running.providers._base import scrub, url_secrets

    key = "sk-Canary-0123456789abcdef"
    monkeypatch.setenv("MY_API_KEY", key)
    encoded = base64.b64encode(key.encode()).decode()
    with ResultsWriter.create(tmp_path / "r.jsonl", {"suite": {"name": "s"}}) as w:
        for leaked in (key.upper(), key.lower(), encoded):
            record = {"case": "a", "variant": "v", "repeat": 0, "status": "completed"}
            with pytest.raises(ResultsFileError, match="MY_API_KEY"):
                w.write_sample({**record, "checks": [], "answer": f"here: {leaked}"})
        w.close({"status": "finished"})
    assert scrub(f"echo {key.upper()} and {encoded}") == "echo [redacted] and [redacted]"
    basic = url_secrets("http://me:pa55word-xyz@127.0.0.1:1/v1")[-1]
    assert scrub(f"Authorization: Basic {basic}", url_secrets("http://me:pa55word-xyz@h/")) == (
        "Authorization: Basic [redacted]"
    )


def test_a_run_cut_off_in_its_manifest_is_started_again_by_resume(tmp_path: Path, capsys) -> None:
    from evalstats.cli import main

    out = tmp_path / "r.jsonl"
    out.write_bytes(b'{"type":"manifest","format":1,"sui')  # the disk filled here
    argv = ["run", "shop", "--variant", "v=standin:shop-v1", "--runs", "1", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 2  # never overwritten without --resume
    assert main([*argv, "--resume", str(out)]) == 0
    assert "held only a cut-off manifest" in capsys.readouterr().err
    results = read_results(out)
    assert results.summary["status"] == "finished" and len(results.samples) == 4
