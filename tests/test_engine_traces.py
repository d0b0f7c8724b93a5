"""The engine scores required actions on a task's tool-call trace, with axis "action"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalstats.results._file import read_results
from evalstats.running._checks import INSPECTION_FAILURE, has_terms
from evalstats.running._engine import Prompt, TaskResult, Variant, run
from evalstats.running._suite import Case, CaseCheck
from evalstats.running._traces import Trace, read_trace

QUESTION = "What is the project called? It is in notes.txt."
READ = {"id": "c1", "name": "read_note", "arguments": {"path": "notes.txt"}}


def records(result: dict[str, Any] | None, *, stopped: str | None = None) -> list[dict]:
    """A trace: one read of notes.txt with ``result`` (None: never executed), then an answer."""
    user = {"role": "user", "content": QUESTION}
    out: list[dict] = [
        {
            "type": "start",
            "question": QUESTION,
            "model": "openai:notes",
            "workspace_notes": ["notes.txt"],
            "budgets": {"model_calls": 8},
        },
        {"type": "request", "turn": 0, "messages": [user], "tools": ["read_note"]},
        {"type": "response", "turn": 0, "content": None, "tool_calls": [READ]},
    ]
    if result is not None:
        history = [
            user,
            {"role": "assistant", "content": None, "tool_calls": [READ]},
            {"role": "tool", "tool_call_id": "c1", "name": "read_note", **result},
        ]
        out += [
            {"type": "request", "turn": 1, "messages": history, "tools": ["read_note"]},
            {"type": "response", "turn": 1, "content": "It is Paper Kite.", "tool_calls": []},
        ]
    out.append({"type": "final", "answer": "It is Paper Kite.", "stopped": stopped})
    return out


def trace_of(result: dict[str, Any] | None, *, stopped: str | None = None) -> Trace:
    return read_trace([json.dumps(r) for r in records(result, stopped=stopped)])


READ_OK = {"content": "Project name: Paper Kite", "error": False}
REFUSED = {"content": "refused: notes.txt is not listed", "error": True}


class ScriptedTask:
    """Answers each case (by prompt) with a fixed TaskResult."""

    def __init__(self, by_prompt: dict[str, Any]) -> None:
        self.by_prompt = by_prompt

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "name": "scripted tool-using task"}

    async def run(self, prompt: Prompt, *, seed: int) -> Any:
        return self.by_prompt[prompt.text]


def case(case_id: str, *, actions: bool = True, extra: tuple = ()) -> Case:
    return Case(
        case_id,
        f"{case_id}: {QUESTION}",
        ((has_terms("Paper Kite"), "answer"), *extra),
        required_actions=({"tool": "read_note", "path": "notes.txt"},) if actions else (),
    )


def run_cases(tmp_path: Path, results: dict[str, Any], **case_kwargs: Any) -> dict[str, dict]:
    cases = [case(cid, **case_kwargs.get(cid, {})) for cid in results]
    task = ScriptedTask({f"{cid}: {QUESTION}": r for cid, r in results.items()})
    out = tmp_path / "results.jsonl"
    run(cases, [Variant("v", task)], runs=1, out=out, progress=False, timeout=None)
    return {s["case"]: s for s in read_results(out).samples}


ACTION = "required_action('read_note', 'notes.txt')"


def test_required_actions_are_scored_on_the_trace_with_axis_action(tmp_path: Path) -> None:
    samples = run_cases(
        tmp_path,
        {
            "read": TaskResult("It is Paper Kite.", trace=trace_of(READ_OK)),
            "refused": TaskResult("It is Paper Kite.", trace=trace_of(REFUSED)),
        },
    )
    read, refused = samples["read"], samples["refused"]
    assert read["status"] == refused["status"] == "completed"
    assert read["checks"] == [
        {"check": "has_terms('Paper Kite')", "axis": "answer", "status": "passed", "reason": ""},
        {"check": ACTION, "axis": "action", "status": "passed", "reason": ""},
    ]
    # The same right answer, but the read was refused: a guess, not a read.
    assert refused["checks"][0]["status"] == "passed"
    assert refused["checks"][1] == {
        "check": ACTION,
        "axis": "action",
        "status": "failed",
        "reason": "read_note('notes.txt') was refused: refused: notes.txt is not listed",
        "not_inspected": False,
    }
    # The record keeps the trace's JSON summary: requested, executed, stopped.
    summary = read["trace"]
    assert [c["name"] for c in summary["requested"]] == ["read_note"]
    assert [(e["name"], e["arguments"], e["error"]) for e in summary["executed"]] == [
        ("read_note", {"path": "notes.txt"}, False)
    ]
    assert summary["stopped"] is None


def test_a_trace_file_named_by_the_task_is_read_and_its_facts_kept(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(READ_OK)), encoding="utf-8")
    given = {"trace_file": str(path), "exit_code": 0, "workspace": {"marker_seen": False}}
    sample = run_cases(tmp_path, {"read": TaskResult("It is Paper Kite.", trace=given)})["read"]
    assert sample["status"] == "completed"
    assert sample["checks"][1]["status"] == "passed"
    assert sample["trace"]["exit_code"] == 0
    assert sample["trace"]["workspace"] == {"marker_seen": False}
    assert sample["trace"]["executed"][0]["content"] == "Project name: Paper Kite"


@pytest.mark.parametrize(
    ("trace", "reason"),
    [
        (None, "the task produced no trace to inspect"),
        ({"exit_code": 1}, "the task produced no trace to inspect"),
        ("truncated", "is truncated: its last line (line 6) is cut off"),
        ("missing", "does not exist"),
        ({"trace_error": "the trace file was larger than 1 MiB"}, "larger than 1 MiB"),
    ],
)
def test_no_readable_trace_makes_the_sample_incomplete_and_invents_nothing(
    tmp_path: Path, trace: Any, reason: str
) -> None:
    if trace in ("truncated", "missing"):
        path = tmp_path / "trace.jsonl"
        if trace == "truncated":
            text = "".join(json.dumps(r) + "\n" for r in records(READ_OK))
            path.write_text(text[:-20], encoding="utf-8")
        trace = {"trace_file": str(path)}
    # The answer is right, and would pass its term check: it must not count.
    sample = run_cases(tmp_path, {"read": TaskResult("It is Paper Kite.", trace=trace)})["read"]
    assert sample["status"] == "incomplete"
    assert reason in sample["reason"]
    assert [c["status"] for c in sample["checks"]] == ["failed", "failed"]
    for verdict in sample["checks"]:
        assert verdict["reason"] == f"{INSPECTION_FAILURE}: {sample['reason']}"
    assert [c["axis"] for c in sample["checks"]] == ["answer", "action"]
    assert "executed" not in (sample["trace"] or {})


def test_an_assistant_stopped_by_a_budget_is_incomplete(tmp_path: Path) -> None:
    trace = trace_of(None, stopped="model_calls")
    sample = run_cases(tmp_path, {"read": TaskResult("It is Paper Kite.", trace=trace)})["read"]
    assert sample["status"] == "incomplete"
    assert sample["reason"] == "the assistant was stopped before it finished: model_calls"
    assert all(c["status"] == "failed" for c in sample["checks"])
    assert sample["trace"]["stopped"] == "model_calls"
    assert sample["trace"]["executed"] == []


def test_a_read_requested_but_never_executed_fails_the_action(tmp_path: Path) -> None:
    trace = trace_of(None)  # asked to read, then answered without the result
    sample = run_cases(tmp_path, {"read": TaskResult("It is Paper Kite.", trace=trace)})["read"]
    assert sample["status"] == "completed"
    assert sample["checks"][1]["reason"] == (
        "read_note('notes.txt') was requested once but never executed"
    )


def test_cases_without_trace_checks_are_unaffected(tmp_path: Path) -> None:
    samples = run_cases(
        tmp_path,
        {"plain": "It is Paper Kite.", "missing": TaskResult("It is Paper Kite.", trace={"x": 1})},
        plain={"actions": False},
        missing={"actions": False},
    )
    assert samples["plain"]["status"] == "completed" and samples["plain"]["trace"] is None
    assert samples["missing"]["status"] == "completed"
    assert samples["missing"]["trace"] == {"x": 1}
    assert [c["axis"] for c in samples["plain"]["checks"]] == ["answer"]


def test_a_python_trace_check_receives_the_trace(tmp_path: Path) -> None:
    seen: list[Any] = []

    def read_before_answering(trace: Any) -> str | None:
        seen.append(trace)
        return None if trace.reads() else "answered without reading"

    read_before_answering.needs_trace = True  # type: ignore[attr-defined]
    trace = trace_of(READ_OK)
    sample = run_cases(
        tmp_path,
        {"read": TaskResult("It is Paper Kite.", trace=trace)},
        read={"actions": False, "extra": (CaseCheck(read_before_answering, "process"),)},
    )["read"]
    assert seen == [trace]
    assert sample["checks"][1] == {
        "check": "read_before_answering",
        "axis": "process",
        "status": "passed",
        "reason": "",
    }


def test_a_harness_dict_with_an_embedded_summary_is_scored_and_kept_once(tmp_path: Path) -> None:
    # The cmd: harness reads the trace before removing the workspace and hands
    # over its summary; the trace file itself is gone by then.
    from evalstats.running._traces import trace_summary

    given = {
        "trace_file": str(tmp_path / "removed" / "trace.jsonl"),
        "summary": trace_summary(trace_of(REFUSED)),
        "trace_error": None,
        "exit_code": 0,
    }
    sample = run_cases(tmp_path, {"read": TaskResult("It is Paper Kite.", trace=given)})["read"]
    assert sample["status"] == "completed"
    assert sample["checks"][1]["reason"] == (
        "read_note('notes.txt') was refused: refused: notes.txt is not listed"
    )
    assert "summary" not in sample["trace"]
    assert sample["trace"]["executed"][0]["error"] is True
    assert sample["trace"]["exit_code"] == 0
