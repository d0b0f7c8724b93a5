from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.errors import InvalidArgument, TransientProviderError
from evalstats.running._command import DEFAULT_TIMEOUT_S, OUTPUT_CAP, TRACE_CAP, CmdTask, _Capture
from evalstats.running._engine import Prompt, TaskResult, task_from_name
from evalstats.running._suite import Case
from evalstats.running._workspace import MARKER_PREFIX

# A stand-in for a tool-using assistant: what it does is chosen by its first
# argument. It writes the trace format of evalstats.running._traces (start, request,
# response, final) when asked to.
SCRIPT = textwrap.dedent(
    r"""
    import json, os, signal, subprocess, sys, time

    mode = sys.argv[1]
    ws = os.environ["EVALSTATS_WORKSPACE"]
    trace_path = os.environ["EVALSTATS_TRACE"]

    def write_trace(records):
        with open(trace_path, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")

    def read_trace_records(question, answer, content):
        call = {"id": "c1", "name": "read_note", "arguments": {"path": "notes.txt"}}
        user = {"role": "user", "content": question}
        result = {"role": "tool", "tool_call_id": "c1", "name": "read_note",
                  "content": content, "error": False}
        return [
            {"type": "start", "question": question, "model": "fake",
             "workspace_notes": ["notes.txt"], "budgets": {}},
            {"type": "request", "turn": 0, "messages": [user], "tools": ["read_note"]},
            {"type": "response", "turn": 0, "content": None, "tool_calls": [call]},
            {"type": "request", "turn": 1, "tools": ["read_note"], "messages": [
                user, {"role": "assistant", "content": None, "tool_calls": [call]}, result]},
            {"type": "response", "turn": 1, "content": answer, "tool_calls": []},
            {"type": "final", "answer": answer, "stopped": None},
        ]

    if mode == "trace":
        content = open("notes.txt").read()
        answer = "According to notes.txt: " + content.strip()
        write_trace(read_trace_records(sys.argv[-1], answer, content))
        print("stdout is not the answer when there is a trace")
    elif mode == "trace_private":
        # A "tool result" that carries the private file: the marker surfaces
        # in the trace only, not in the answer or the output.
        content = open("private.txt").read()
        write_trace(read_trace_records(sys.argv[-1], "I read it.", content))
    elif mode == "argv":
        print(json.dumps(sys.argv[1:]))
    elif mode == "env":
        print(json.dumps({"cwd": os.getcwd(), "ws": ws, "trace": trace_path,
                          "seed": os.environ["EVALSTATS_SEED"], "stdin": sys.stdin.read()}))
    elif mode == "hang":
        if len(sys.argv) > 3:
            with open(sys.argv[2], "w") as f:
                f.write(f"{os.getpid()}\n{os.getcwd()}\n")
        print("started", flush=True)
        time.sleep(60)
    elif mode == "hang_hard":
        # Ignores SIGTERM, and leaves a child behind in its process group.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(sys.argv[2], "w") as f:
            f.write(str(child.pid))
        time.sleep(60)
    elif mode == "bigout":
        sys.stdout.write("x" * (1024 * 1024))
        sys.stderr.write("e" * (200 * 1024))
    elif mode == "bigtrace":
        records = read_trace_records(sys.argv[-1], "fine", "y" * 100)
        with open(trace_path, "w") as f:
            for r in records[:-1]:
                f.write(json.dumps(r) + "\n")
            pad = {"type": "response", "turn": 9, "content": "z" * (2 * 1024 * 1024)}
            f.write(json.dumps(pad) + "\n")
            f.write(json.dumps(records[-1]) + "\n")
        print("done")
    elif mode == "leak":
        print(open("../private.txt").read())
    elif mode == "modify":
        with open("notes.txt", "a") as f:
            f.write("an extra line\n")
        print("edited")
    elif mode == "add":
        with open("new.txt", "x") as f:
            f.write("hello")
        print("added")
    elif mode == "fail":
        print("partial answer")
        sys.stderr.write("traceback...\nRuntimeError: boom\n")
        sys.exit(1)
    elif mode == "fail_with_trace":
        content = open("notes.txt").read()
        write_trace(read_trace_records(sys.argv[-1], "Paper Kite", content))
        sys.exit(3)
    elif mode == "tempfail":
        sys.stderr.write("model service: 503\n")
        sys.exit(75)
    elif mode == "bad_trace":
        with open(trace_path, "w") as f:
            f.write('{"type": "start"')
        print("an answer on stdout")
    """
)

CASE = Case(
    id="project name",
    prompt="What is the project called? Look in notes.txt.",
    checks=[{"contains": "Paper Kite"}],
    fixtures={"notes.txt": "Project name: Paper Kite\n"},
)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "fake_assistant.py"
    path.write_text(SCRIPT)
    return path


def command(script: Path, *args: str) -> str:
    return shlex.join([sys.executable, str(script), *args])


def prompt(text: str = CASE.prompt) -> Prompt:
    return Prompt(text, None, ({"role": "user", "content": text},))


def run(task: CmdTask, *, case=CASE, seed: int = 1, timeout=None, text=CASE.prompt) -> TaskResult:
    return asyncio.run(task.run(prompt(text), seed=seed, case=case, timeout=timeout))


def test_trace_answer_summary_and_clean_workspace(script):
    result = run(CmdTask(command(script, "trace")))
    assert result.answer == "According to notes.txt: Project name: Paper Kite"
    record = result.trace
    json.dumps(record)  # JSON-ready for the results file
    assert record["trace_error"] is None and record["incomplete"] is None
    assert record["exit_code"] == 0
    assert record["capped"] == []
    executed = record["summary"]["executed"]
    assert [(o["name"], o["arguments"], o["error"]) for o in executed] == [
        ("read_note", {"path": "notes.txt"}, False)
    ]
    assert record["workspace"] == {
        "marker_seen": False,
        "fixtures_unchanged": True,
        "private_unchanged": True,
        "files_added": [],
    }
    assert record["kept_workspace"] is None
    assert not Path(record["trace_file"]).exists()  # removed with the sample


def test_engine_reads_the_summary(script):
    from evalstats.running._traces import Trace, trace_of

    record = run(CmdTask(command(script, "trace"))).trace
    trace = trace_of(record)
    assert isinstance(trace, Trace)
    assert trace.reads() == ("notes.txt",)


def test_marker_in_a_tool_result_only(script):
    record = run(CmdTask(command(script, "trace_private"))).trace
    assert record["workspace"]["marker_seen"] is True


def test_prompt_is_the_last_argument(script):
    text = "a prompt with 'quotes', {trace} and spaces"
    result = run(CmdTask(command(script, "argv")), text=text)
    assert json.loads(result.answer) == ["argv", text]


def test_placeholders_are_single_arguments(script):
    cmd = command(script, "argv") + " --q {prompt} --ws={workspace} {trace} last"
    text = "two words"
    result = run(CmdTask(cmd), text=text)
    args = json.loads(result.answer)
    assert args[:3] == ["argv", "--q", "two words"]
    assert args[3].startswith("--ws=") and args[3].endswith("/work")
    assert args[4].endswith("trace.jsonl")
    assert args[5] == "last"
    assert len(args) == 6  # the prompt is not appended a second time


def test_cwd_env_and_stdin_at_eof(script):
    # Were stdin not at end of file, reading it would wait until the timeout.
    result = run(CmdTask(command(script, "env")), seed=42, timeout=20)
    seen = json.loads(result.answer)
    assert seen["cwd"] == seen["ws"]
    assert Path(seen["ws"]).name == "work"
    assert seen["trace"] == result.trace["trace_file"]
    assert seen["seed"] == "42"
    assert seen["stdin"] == ""
    assert not Path(seen["ws"]).exists()  # the workspace is gone afterwards


def test_keep_workspaces(script):
    task = CmdTask(command(script, "add"), keep_workspaces=True)
    result = run(task)
    kept = Path(result.trace["kept_workspace"])
    try:
        assert (kept / "new.txt").read_text() == "hello"
        assert (kept / "notes.txt").exists()
        assert (kept.parent / "private.txt").read_text().startswith(MARKER_PREFIX)
    finally:
        shutil.rmtree(kept.parent)
        shutil.rmtree(Path(result.trace["trace_file"]).parent, ignore_errors=True)


def test_hung_command_is_killed_at_its_timeout(script):
    result = run(CmdTask(command(script, "hang")), timeout=2)
    assert result.answer is None
    reason = result.trace["incomplete"]
    assert reason == "the command did not finish within 2 s and was killed"
    assert result.trace["trace_error"] == reason
    assert result.trace["exit_code"] < 0  # ended by a signal, not by its 60 s sleep
    assert result.trace["stdout_bytes"] in (0, len("started\n"))  # what it printed is kept


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the child")
def test_sigterm_ignored_and_children_killed_with_the_group(script, tmp_path):
    pid_file = tmp_path / "child.pid"
    # 5 s leaves room for a slow start on a loaded machine.
    result = run(CmdTask(command(script, "hang_hard", str(pid_file))), timeout=5)
    assert result.trace["incomplete"].startswith("the command did not finish")
    assert result.trace["exit_code"] == -9  # SIGKILL after the grace
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_output_is_capped_and_noted(script):
    result = run(CmdTask(command(script, "bigout")))
    record = result.trace
    assert record["stdout_bytes"] == 1024 * 1024
    assert record["stderr_bytes"] == 200 * 1024
    # The answer is stdout, cut at the cap: the sample is incomplete, not scored on a part.
    assert record["incomplete"].startswith(f"the answer on stdout has {1024 * 1024} bytes")
    assert record["capped"] == [
        f"stdout: {1024 * 1024} bytes, kept the first {OUTPUT_CAP} ({1024 * 1024 - OUTPUT_CAP} "
        "dropped)",
        f"stderr: {200 * 1024} bytes, kept the first {OUTPUT_CAP} ({200 * 1024 - OUTPUT_CAP} "
        "dropped)",
    ]


def test_oversized_trace_is_cut_and_unreadable(script):
    result = run(CmdTask(command(script, "bigtrace")))
    record = result.trace
    assert record["trace_bytes"] > 2 * 1024 * 1024
    assert record["summary"] is None
    assert "truncated" in record["trace_error"]
    assert any(note.startswith("trace:") and str(TRACE_CAP) in note for note in record["capped"])


def test_reading_the_parent_private_file_is_seen(script):
    result = run(CmdTask(command(script, "leak")))
    obs = result.trace["workspace"]
    assert obs["marker_seen"] is True
    assert obs["private_unchanged"] is True
    assert MARKER_PREFIX in result.answer


def test_modified_fixture(script):
    obs = run(CmdTask(command(script, "modify"))).trace["workspace"]
    assert obs["fixtures_unchanged"] is False
    assert obs["files_added"] == []


def test_added_file(script):
    obs = run(CmdTask(command(script, "add"))).trace["workspace"]
    assert obs["files_added"] == ["new.txt"]
    assert obs["fixtures_unchanged"] is True


def test_nonzero_exit_without_trace_is_incomplete(script):
    result = run(CmdTask(command(script, "fail")))
    assert result.answer is None
    assert result.trace["exit_code"] == 1
    assert result.trace["incomplete"] == "the command exited with status 1: RuntimeError: boom"
    assert result.trace["trace_error"] == result.trace["incomplete"]


def test_nonzero_exit_with_a_final_record_keeps_the_answer(script):
    result = run(CmdTask(command(script, "fail_with_trace")))
    assert result.trace["exit_code"] == 3
    assert result.trace["incomplete"] is None
    assert result.answer == "Paper Kite"


def test_exit_75_is_transient(script):
    with pytest.raises(TransientProviderError, match="status 75.*model service: 503"):
        run(CmdTask(command(script, "tempfail")))


def test_unreadable_trace_falls_back_to_stdout_and_says_why(script):
    result = run(CmdTask(command(script, "bad_trace")))
    assert result.answer == "an answer on stdout"
    assert result.trace["summary"] is None
    assert result.trace["trace_error"]


def test_no_trace_file_means_stdout_answer(script):
    from evalstats.running._traces import TraceError, trace_of

    result = run(CmdTask(command(script, "argv")))
    assert result.trace["trace_error"] is None and result.trace["summary"] is None
    missing = trace_of(result.trace)
    assert isinstance(missing, TraceError) and missing.missing


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the process")
def test_cancelled_run_kills_the_command_and_removes_the_workspace(script, tmp_path):
    pid_file = tmp_path / "pid"
    task = CmdTask(command(script, "hang", str(pid_file)))

    async def cancel_once_started() -> None:
        job = asyncio.ensure_future(task.run(prompt(), seed=1, case=CASE, timeout=60))
        while not pid_file.exists() or not pid_file.read_text().endswith("\n"):
            await asyncio.sleep(0.05)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(cancel_once_started())
    pid, cwd = pid_file.read_text().split("\n")[:2]
    assert not _alive(int(pid))
    assert Path(cwd).name == "work" and not Path(cwd).parent.exists()


def test_describe_and_task_from_name(script):
    task = task_from_name(f"cmd:{command(script, 'argv')}")
    assert isinstance(task, CmdTask)
    desc = task.describe()
    assert desc["kind"] == "cmd"
    assert desc["command"] == [sys.executable, str(script), "argv"]
    assert desc["executable"] == os.path.abspath(shutil.which(sys.executable))
    # The coreutils program, where there is one, is a reference independent of
    # Python; hashlib over the whole file otherwise (the task reads it in blocks).
    sha256sum = shutil.which("sha256sum")
    if sha256sum is not None:
        line = subprocess.run(
            [sha256sum, desc["executable"]], capture_output=True, text=True, check=True
        ).stdout
        expected = line.split()[0]
    else:
        expected = hashlib.sha256(Path(desc["executable"]).read_bytes()).hexdigest()
    assert desc["sha256"] == expected


def test_braced_words_unlike_a_placeholder_are_kept_as_text():
    task = CmdTask("""python -c "print('{x} {count}')" {prompt}""")
    assert task.arguments("Hi", workspace="/w", trace="/t")[1:] == [
        "-c",
        "print('{x} {count}')",
        "Hi",
    ]


@pytest.mark.parametrize(
    "cmd, problem",
    [
        ("", "give a command"),
        ("   ", "give a command"),
        ("'unclosed", "cannot be split"),
        ("no-such-program-evalstats --x", "was not found"),
        ("{prompt} x", "cannot be a placeholder"),
        ("python agent.py {promt}", r"unknown placeholder \{promt\} \(did you mean 'prompt'\?\)"),
        ("python agent.py --trace={tarce}", r"unknown placeholder \{tarce\}"),
        ("python agent.py --in {Workspace}", r"\(did you mean 'workspace'\?\)"),
    ],
)
def test_bad_commands(cmd, problem):
    with pytest.raises(InvalidArgument, match=problem):
        CmdTask(cmd)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), True, "5"])
def test_bad_timeouts(script, timeout):
    with pytest.raises(InvalidArgument, match="timeout="):
        CmdTask(command(script, "argv"), timeout=timeout)


# --- through the engine and the command line -----------------------------------------


ACTION_CASE = Case(
    id="project name",
    prompt="What is the project called? Look in notes.txt.",
    checks=[{"has_terms": ["Paper Kite"], "axis": "answer"}],
    fixtures={"notes.txt": "Project name: Paper Kite\n"},
    required_actions=[{"tool": "read_note", "path": "notes.txt"}],
)


def test_engine_gives_the_case_and_scores_the_trace(script, tmp_path):
    from evalstats.results._file import read_results
    from evalstats.running._engine import run as run_engine

    out = tmp_path / "results.jsonl"
    variants = [
        f"reads=cmd:{command(script, 'trace')}",
        f"hangs=cmd:{command(script, 'hang')}",
        f"leaks=cmd:{command(script, 'leak')}",
    ]
    outcome = run_engine([ACTION_CASE], variants, runs=1, out=out, timeout=2, progress=False)
    assert outcome.status == "finished"
    samples = {s["variant"]: s for s in read_results(out).samples}

    reads = samples["reads"]
    assert reads["status"] == "completed"
    assert reads["answer"] == "According to notes.txt: Project name: Paper Kite"
    assert [(c["axis"], c["status"]) for c in reads["checks"]] == [
        ("answer", "passed"),
        ("action", "passed"),
    ]
    assert reads["trace"]["workspace"]["fixtures_unchanged"] is True
    assert reads["trace"]["executed"][0]["arguments"] == {"path": "notes.txt"}

    # Killed at the run's timeout: incomplete with the reason, not retried.
    hangs = samples["hangs"]
    assert hangs["status"] == "incomplete"
    assert hangs["attempts"] == 1
    assert hangs["reason"] == "the command did not finish within 2 s and was killed"
    assert all(c["status"] == "failed" for c in hangs["checks"])

    # Stdout is the answer when there is no trace; the required read never ran.
    leaks = samples["leaks"]
    assert leaks["status"] == "incomplete"
    assert leaks["trace"]["workspace"]["marker_seen"] is True

    manifest = read_results(out).manifest
    assert [v["task"]["kind"] for v in manifest["variants"]] == ["cmd"] * 3


class _TimeoutProbe:
    """A harness-like task that records the timeout the engine passes it."""

    wants_case = True

    def __init__(self, own: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = own
        self.seen: list[object] = []

    def describe(self) -> dict:
        return {"kind": "probe"}

    async def run(self, prompt, *, seed, case=None, **kwargs):
        self.seen.append(kwargs.get("timeout", "none given"))
        return TaskResult(answer="Paper Kite")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, "none given"),
        ({"timeout": 60}, 60.0),
        ({"timeout": 7.5}, 7.5),
        ({"timeout": None}, "none given"),
    ],
)
def test_a_cmd_task_keeps_its_own_130_s_unless_the_run_sets_a_timeout(tmp_path, given, expected):
    from evalstats.results._file import read_results
    from evalstats.running._engine import DEFAULT_TIMEOUT_S as RUN_DEFAULT
    from evalstats.running._engine import Variant
    from evalstats.running._engine import run as run_engine

    assert DEFAULT_TIMEOUT_S == 130.0 and CmdTask(command(Path(sys.executable))).timeout == 130.0
    probe = _TimeoutProbe()
    out = tmp_path / "results.jsonl"
    run_engine([CASE], [Variant("p", probe)], runs=2, out=out, progress=False, **given)
    # No timeout given: the task is left its own (130 s for cmd:); a timeout
    # given on purpose, even the run's default of 60 s, binds it.
    assert probe.seen == [expected, expected]
    manifest = read_results(out).manifest
    assert manifest["timeout_s"] == given.get("timeout", RUN_DEFAULT)


def test_without_a_run_timeout_the_command_is_killed_at_the_tasks_own(script, tmp_path):
    from evalstats.results._file import read_results
    from evalstats.running._engine import Variant
    from evalstats.running._engine import run as run_engine

    out = tmp_path / "results.jsonl"
    task = CmdTask(command(script, "hang"), timeout=2)
    run_engine([CASE], [Variant("hangs", task)], runs=1, out=out, progress=False)
    [sample] = read_results(out).samples
    assert sample["status"] == "incomplete" and sample["attempts"] == 1
    assert sample["reason"] == "the command did not finish within 2 s and was killed"


def test_cli_run_passes_the_default_timeout_unless_given(monkeypatch, tmp_path):
    from evalstats.cli import main
    from evalstats.running import _engine as engine
    from evalstats.running._options import gather

    seen: list[object] = []
    signature = inspect.signature(engine.run)

    def fake_run(*args, **kwargs):
        # The timeout run would use: the one passed, else run's own default.
        call = signature.bind(*args, **kwargs)
        call.apply_defaults()
        a = call.arguments
        _, _, limits = gather(a["selection"], a["retries"], a["limits"], a["options"])
        seen.append(limits.timeout)
        return SimpleNamespace(status="finished")

    monkeypatch.setattr(engine, "run", fake_run)
    argv = ["run", "shop", "--variant", "a=standin:shop-v1", "--runs", "1", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "a.jsonl")]) == 0
    assert main([*argv, "--out", str(tmp_path / "b.jsonl"), "--timeout", "60"]) == 0
    assert seen[0] is engine.DEFAULT_TIMEOUT_S
    assert seen[1] == 60.0 and seen[1] is not engine.DEFAULT_TIMEOUT_S


@pytest.mark.parametrize("keep", [False, True])
def test_cli_keep_workspaces(script, tmp_path, keep):
    from evalstats.cli import main
    from evalstats.results._file import read_results

    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"name": "one", "cases": [CASE.to_dict()]}))
    out = tmp_path / "results.jsonl"
    argv = ["run", str(suite), "--variant", f"a=cmd:{command(script, 'add')}"]
    argv += ["--runs", "2", "--out", str(out), "--no-progress"]
    assert main(argv + (["--keep-workspaces"] if keep else [])) == 0
    samples = read_results(out).samples
    assert [s["trace"]["workspace"]["files_added"] for s in samples] == [["new.txt"]] * 2
    for s in samples:
        kept = s["trace"]["kept_workspace"]
        if keep:
            assert (Path(kept) / "new.txt").read_text() == "hello"
            shutil.rmtree(Path(kept).parent)
            shutil.rmtree(Path(s["trace"]["trace_file"]).parent, ignore_errors=True)
        else:
            assert kept is None


# --- properties ------------------------------------------------------------------------

_prompts = st.text(
    alphabet=st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from("{}'\" \n")),
    max_size=40,
) | st.sampled_from(["{prompt}", "{trace}", "{workspace}", "a {prompt} b", "--x={trace}"])


@given(text=_prompts, where=st.sampled_from(["end", "middle", "inside"]))
def test_the_prompt_is_one_argument_exactly_as_given(text, where):
    base = {"end": "python agent.py --trace {trace}", "middle": "python agent.py {prompt} -v"}
    cmd = base.get(where, "python agent.py --q={prompt}")
    args = CmdTask(cmd).arguments(text, workspace="/ws {x}", trace="/t {prompt}")
    if where == "end":
        assert args[1:] == ["agent.py", "--trace", "/t {prompt}", text]
    elif where == "middle":
        assert args[1:] == ["agent.py", text, "-v"]
    else:
        assert args[1:] == ["agent.py", "--q=" + text]


@given(
    chunks=st.lists(st.binary(min_size=1, max_size=300), max_size=20),
    cap=st.integers(0, 2000),
)
def test_capture_keeps_the_first_cap_bytes_and_counts_all(chunks, cap):
    async def drain() -> _Capture:
        reader = asyncio.StreamReader()
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        capture = _Capture(cap)
        await capture.drain(reader)
        return capture

    capture = asyncio.run(drain())
    data = b"".join(chunks)
    assert bytes(capture.kept) == data[:cap]
    assert capture.total == len(data)


def test_a_line_separator_inside_a_record_keeps_the_trace_readable() -> None:
    # The notes assistant writes U+2028 unescaped (json.dumps(ensure_ascii=False));
    # records end at "\n" only, so a note holding one must not look malformed.
    import json

    from evalstats.running._command import _parse_trace

    records = [
        {"type": "start", "question": "q", "model": "m", "workspace_notes": [], "budgets": {}},
        {"type": "request", "turn": 0, "messages": [{"role": "user", "content": "q"}], "tools": []},
        {
            "type": "response",
            "turn": 0,
            "content": "line\u2028break",
            "tool_calls": [],
            "tokens": None,
            "model": None,
        },
        {"type": "final", "answer": "line\u2028break", "stopped": None},
    ]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    summary, error = _parse_trace(text)
    assert error is None and summary is not None
    assert summary["answer"] == "line\u2028break"
