"""``evalstats run``: exit codes, refusals, resume, signals, kill -9 and the canary key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.results._file import read_results

SHOP = ["--variant", "old=standin:shop-v1", "--variant", "new=standin:shop-v2"]
SLOW = [
    "--variant",
    "old=standin:shop-v1?delay=0.01",
    "--variant",
    "new=standin:shop-v2?delay=0.01",
]


def keys(path: Path) -> list[tuple[str, str, int]]:
    return [(s["case"], s["variant"], s["repeat"]) for s in read_results(path).samples]


def test_run_writes_the_results_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "3", "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"{out}: finished, 24 samples written" in captured.out
    assert captured.err == ""
    results = read_results(out)
    assert len(results.samples) == 24 and results.summary["status"] == "finished"  # type: ignore[index]


def test_run_exits_0_whatever_the_model_did(tmp_path: Path) -> None:
    # a prefix that the stand-in does not understand: every order answer fails, the run finishes
    out = tmp_path / "r.jsonl"
    code = main(
        [
            "run",
            "shop",
            "--variant",
            "x=standin:shop-v1,template=No order here: {prompt}",
            "--runs",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0


def test_an_existing_out_is_refused_with_one_line_and_left_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    assert main(["run", "shop", *SHOP, "--runs", "1", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err
    assert out.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "x=standin:shop-v1,prefx=a"], "did you mean 'prefix'"),
        (["--variant", "x=standin:shop-v9"], "unknown stand-in 'shop-v9'"),
        (["--variant", "x=standin:shop-v1", "--concurrency", "0"], "concurrency=0"),
        (["--variant", "x=standin:shop-v1", "--variant", "x=standin:shop-v2"], "appears twice"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *argv, "--runs", "1", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not out.exists()


def test_out_or_resume_is_required_and_must_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "shop", *SHOP, "--runs", "1", "--no-progress"]) == 2
    assert "give --out FILE" in capsys.readouterr().err
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "1", "--out", str(a), "--resume", str(b)]) == 2
    assert "name different files" in capsys.readouterr().err


def test_resume_file_and_resume_flag_both_complete_a_run(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "3", "--out", str(out), "--no-progress"]) == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:10]))  # a crash after 9 samples
    assert main(["run", "shop", *SHOP, "--runs", "3", "--resume", str(out), "--no-progress"]) == 0
    assert len(keys(out)) == len(set(keys(out))) == 24
    out.write_bytes(b"".join(lines[:5]))
    assert (
        main(["run", "shop", *SHOP, "--runs", "3", "--out", str(out), "--resume", "--no-progress"])
        == 0
    )
    assert len(keys(out)) == len(set(keys(out))) == 24


# --- real processes ------------------------------------------------------------------


def evalstats(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalstats", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for_samples(path: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") > n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the run ended early: {proc.communicate()}")
        time.sleep(0.01)
    raise AssertionError("no samples appeared")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_interrupts_cleanly_with_130_and_resume_completes(
    tmp_path: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "r.jsonl"
    args = ["run", "shop", *SLOW, "--runs", "30", "--out", str(out), "--no-progress"]
    proc = evalstats(*args)
    wait_for_samples(out, 5, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    first = read_results(out)
    assert first.summary is not None and first.summary["status"] == "interrupted"
    assert first.summary["reason"] == f"interrupted by {sig.name}"
    assert 5 <= len(first.samples) < 240
    done = evalstats(*args, "--resume", "--concurrency", "8")
    _, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    assert len(keys(out)) == len(set(keys(out))) == 240
    assert read_results(out).summary["status"] == "finished"  # type: ignore[index]


@pytest.mark.slow
def test_after_kill_9_the_file_is_a_valid_prefix_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = [
        "run",
        "shop",
        *SLOW,
        "--runs",
        "30",
        "--out",
        str(out),
        "--no-progress",
        "--concurrency",
        "4",
    ]
    proc = evalstats(*args)
    wait_for_samples(out, 12, proc)
    proc.kill()
    proc.communicate(timeout=60)
    crashed = read_results(out)  # readable: at worst a cut-off last line
    assert crashed.summary is None
    done = evalstats(*args, "--resume")
    _, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    samples = keys(out)
    assert len(samples) == len(set(samples)) == 240
    kept = [(s["case"], s["variant"], s["repeat"]) for s in crashed.samples]
    assert samples[: len(kept)] == kept


@pytest.mark.slow
def test_the_canary_key_is_in_no_file_and_no_output(tmp_path: Path) -> None:
    canary = "sk-canary-3f9a1c77e2b54d0b9a6e"
    env = {
        **os.environ,
        "OPENAI_API_KEY": canary,
        "EVALSTATS_CANARY_API_KEY": canary,
        "EVALSTATS_CANARY_TOKEN": canary,
    }
    system = tmp_path / "system.txt"
    system.write_text("You answer for a small shop.\n", encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "r.jsonl"
    proc = evalstats(
        "run",
        "shop",
        "--variant",
        "old=standin:shop-v1",
        "--variant",
        f"new=standin:shop-v2,system=@{system}",
        "--runs",
        "2",
        "--out",
        str(out),
        env=env,
    )
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert out.exists() and len(read_results(out).samples) == 16
    assert canary not in stdout and canary not in stderr
    for path in out_dir.rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path


@pytest.mark.slow
@pytest.mark.parametrize("echo_in_model", [False, True])
def test_the_canary_key_sent_to_a_service_that_echoes_it_is_in_no_file_and_no_output(
    tmp_path: Path, echo_in_model: bool
) -> None:
    # The stand-in tasks above never touch the key. Here an OpenAI-compatible
    # service on 127.0.0.1 receives it as "Authorization: Bearer ..." and echoes
    # it back: in the response id, in a 5xx body (a transient error: after the
    # last retry the sample is unmeasured, with a reason) and, with
    # echo_in_model, in the model name, which the sample records. The provider
    # scrubs what it reports of errors, so that run finishes; a key in the model
    # name is caught by the results file's guard, which stops the run (exit 2)
    # before writing it. Either way the key reaches no file and no output.
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    canary = "sk-canary-5e1d0a93c4b7f2e68d10"
    seen: list[str] = []
    lock = threading.Lock()

    class Echo(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            auth = self.headers.get("Authorization", "")
            with lock:
                seen.append(auth)
                n = len(seen)
            prompt = json.loads(body)["messages"][-1]["content"]
            if n % 3 == 0:  # every third request fails, echoing the header
                payload = {"error": {"message": f"upstream failed for {auth}", "code": 503}}
                data, status = json.dumps(payload).encode(), 503
            else:
                payload = {
                    "id": f"chatcmpl-{auth}",
                    "object": "chat.completion",
                    "model": f"echo {auth}" if echo_in_model else "echo-model",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": f"You said: {prompt}"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
                }
                data, status = json.dumps(payload).encode(), 200
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    outputs = []
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        env = {**os.environ, "OPENAI_API_KEY": canary}
        out_dir = tmp_path / "out"
        out_dir.mkdir()
        out = out_dir / "r.jsonl"
        proc = evalstats(
            "run",
            "shop",
            "--variant",
            f"a=openai:echo-model,base_url={base}",
            "--runs",
            "3",
            "--retries",
            "0",
            "--out",
            str(out),
            env=env,
        )
        outputs += proc.communicate(timeout=60)
        if echo_in_model:
            assert proc.returncode == 2
            assert "refusing to write a credential" in outputs[1]
        else:
            assert proc.returncode == 0, outputs[1]
        if out.exists():  # a run stopped before its first sample leaves no file
            report = evalstats("report", str(out), "--json", env=env)
            outputs += report.communicate(timeout=60)
            assert report.returncode == 0, outputs[-1]
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    assert seen and all(auth == f"Bearer {canary}" for auth in seen)  # the key was in play
    samples = read_results(out).samples if out.exists() else []
    if echo_in_model:
        assert len(samples) < 12
    else:
        assert len(samples) == 12
        assert {s["status"] for s in samples} == {"completed", "unmeasured"}
    for text in outputs:
        assert canary not in text
    for path in out_dir.rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path


def test_progress_bar_only_on_a_terminal_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Captured stderr is no terminal: no bar by default; --progress forces one; --no-progress
    # turns it off even on a terminal; --quiet, the old spelling, is refused naming it.
    base = ["run", "shop", *SHOP, "--runs", "2"]
    assert main([*base, "--out", str(tmp_path / "a.jsonl")]) == 0
    assert "sample" not in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "b.jsonl"), "--progress"]) == 0
    assert "16/16" in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main([*base, "--out", str(tmp_path / "c.jsonl"), "--no-progress"]) == 0
    assert "16/16" not in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "d.jsonl"), "--quiet"]) == 2
    assert capsys.readouterr().err == "evalstats run: --quiet is now --no-progress\n"
    assert not (tmp_path / "d.jsonl").exists()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind", ["openai", "anthropic", "gemini"])
def test_dead_endpoint_stops_the_run_before_any_sample(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing listens at the base URL: one line naming it, exit 2, and no sample recorded
    # as unmeasured (the run used to retry every sample and exit 0).
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    out = tmp_path / "r.jsonl"
    argv = ["run", "shop", "--variant", f"a={kind}:m,base_url={url}", "--runs", "1"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"nothing answers at {url}" in err
    assert not out.exists()


def test_a_live_endpoint_that_answers_404_at_its_root_is_not_dead(tmp_path: Path) -> None:
    # The stand-in server answers 404 for the bare base URL; that still shows a server.
    from evalstats.demo._server import serve

    with serve(seed=0) as server:
        url = f"{server.base_url}/v1"
        out = tmp_path / "r.jsonl"
        argv = ["run", "shop", "--variant", f"a=openai:shop-v1,base_url={url}", "--runs", "1"]
        assert main([*argv, "--out", str(out)]) == 0
    assert len([s for s in read_results(out).samples if s["status"] == "completed"]) == 4


def test_circuit_breaker_stops_a_run_whose_service_is_down_and_resume_takes_those_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every request fails (the stand-in server with error rate 1): after N unmeasured samples
    # in a row the run stops with one line, exit 2; the held-back unmeasured samples are not
    # written, so --resume runs them once the service answers again. A run that stops
    # before writing any sample leaves no file: the same command then starts it afresh.
    from evalstats.demo._server import serve

    with serve(seed=0, error_rate=1.0, retry_after=0) as server:
        url = f"{server.base_url}/v1"
        out = tmp_path / "r.jsonl"
        argv = [
            "run", "shop", "--variant", f"a=openai:shop-v1,base_url={url}", "--runs", "5",
            "--retries", "0", "--stop-after-unmeasured", "6", "--no-progress", "--out", str(out),
        ]  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "6 samples in a row were unmeasured" in err
        assert not out.exists()  # nothing was written: no file to refuse the next run
        server.app.error_rate = 0.0
        assert main(argv) == 0
    done = read_results(out)
    assert len(done.samples) == 20 and {s["status"] for s in done.samples} == {"completed"}


def test_circuit_breaker_writes_a_short_streak_of_unmeasured_samples(tmp_path: Path) -> None:
    # Fewer unmeasured in a row than the breaker's N: every one is written, none lost.
    from evalstats.errors import TransientProviderError
    from evalstats.running._engine import Variant, run

    calls = {"n": 0}

    def flaky(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            raise TransientProviderError("HTTP 503")
        return "Your order A-1042 has shipped."

    out = tmp_path / "r.jsonl"
    variants = [Variant("v", flaky)]
    run("shop", variants, runs=3, out=out, progress=False, retries=0, backoff=0.0,
        stop_after_unmeasured=2)  # fmt: skip
    samples = read_results(out).samples
    assert len(samples) == 12
    assert sum(s["status"] == "unmeasured" for s in samples) == 4


def test_stop_after_unmeasured_must_be_a_whole_number(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    argv = ["run", "shop", *SHOP, "--runs", "1", "--stop-after-unmeasured", "-1", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stop_after_unmeasured=-1" in err
    assert not out.exists()


def test_a_model_service_over_http_runs_8_at_a_time_by_default(tmp_path: Path, capsys) -> None:
    # 40 calls at 200 ms: one at a time they took 9.3 s, 8 at a time 2.0 s.
    from evalstats.demo._server import serve

    out = tmp_path / "r.jsonl"
    with serve(seed=0, latency_ms=200) as server:
        url = f"{server.base_url}/v1"
        argv = [
            "run", "shop", "--variant", f"old=openai:shop-v1,base_url={url}",
            "--runs", "10", "--out", str(out), "--no-progress",
        ]  # fmt: skip
        assert main(argv) == 0
    results = read_results(out)
    assert results.manifest["concurrency"] == 8
    # The samples were in flight together: at some start, several had begun and
    # not yet finished (one at a time, never more than one).
    spans = [(s["started_at"], s["finished_at"]) for s in results.samples]
    overlap = max(sum(a <= t < b for a, b in spans) for t, _ in spans)
    assert overlap >= 2, overlap
    capsys.readouterr()
    # A stand-in in the process, a Python task or a command still runs one at a time.
    local = tmp_path / "local.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "1", "--out", str(local), "--no-progress"]) == 0
    assert read_results(local).manifest["concurrency"] == 1
    chosen = tmp_path / "chosen.jsonl"
    argv = ["run", "shop", *SHOP, "--runs", "1", "--out", str(chosen), "--no-progress"]
    assert main([*argv, "--concurrency", "3"]) == 0
    assert read_results(chosen).manifest["concurrency"] == 3


def test_run_ends_with_the_pass_rates_and_the_verdict_of_report_and_compare(
    tmp_path: Path, capsys
) -> None:
    from evalstats import compare_results, report

    out = tmp_path / "r.jsonl"
    assert main(["run", "shop", *SHOP, "--runs", "5", "--out", str(out), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{out}: finished, 40 samples written")
    rep = report(out)
    assert lines[1] == (
        f"pass rate per trial (95%): old {rep.variant('old').per_trial}; "
        f"new {rep.variant('new').per_trial}"
    )
    assert lines[2] == f"new against old: {compare_results(out, 'old', 'new').primary}"
    assert len(lines) == 3
    # One variant: its pass rate, and no comparison.
    one = tmp_path / "one.jsonl"
    argv = ["run", "shop", "--variant", "only=standin:shop-v2", "--runs", "2"]
    assert main([*argv, "--out", str(one), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"pass rate per trial (95%): only {report(one).variant('only').per_trial}"
    assert len(lines) == 2
