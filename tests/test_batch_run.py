"""run --batch: provider batch APIs against the stand-in, durable across kill -9."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.demo._server import serve
from evalstats.demo._standin_batches import BatchKnobs
from evalstats.errors import ProviderError
from evalstats.results._file import read_results
from evalstats.running._engine import run
from evalstats.running.providers._batch import BatchOptions

FAST = {"poll_s": 0.02, "linger_s": 0.02}


def _variants(server, kind: str = "openai") -> list[str]:
    url = server.base_url + ("/v1" if kind == "openai" else "")
    return [f"v1={kind}:shop-v1,base_url={url}", f"v2={kind}:shop-v2,base_url={url}"]


def _key(sample: dict) -> tuple:
    return (sample["case"], sample["variant"], sample["repeat"])


def _submitted(path: Path) -> list[dict]:
    return [b for b in read_results(path).batches if b["state"] == "submitted"]


def _same_sample(a: dict, b: dict) -> bool:
    keep = ("status", "answer", "checks", "tokens", "model", "pair", "position", "prompt")
    trace_a = {k: v for k, v in (a["trace"] or {}).items() if k != "batch"}
    return all(a[k] == b[k] for k in keep) and trace_a == b["trace"]


def _without(value, keys):
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def test_a_batch_run_takes_the_samples_a_run_without_batches_takes(tmp_path: Path, capsys) -> None:
    with serve(batch_delay_s=0.05) as server:
        variants = _variants(server)
        batched, plain = tmp_path / "batched.jsonl", tmp_path / "plain.jsonl"
        outcome = run(
            "shop",
            variants,
            runs=6,
            out=batched,
            progress=False,
            seed=3,
            batch=BatchOptions(size=10, **FAST),
        )
        assert outcome.status == "finished" and outcome.samples_written == 48
        run("shop", variants, runs=6, out=plain, progress=False, seed=3, concurrency=4)
        creations = server.app.batches.creations()["openai"]
    a, b = read_results(batched), read_results(plain)
    assert {_key(s) for s in a.samples} == {_key(s) for s in b.samples}
    mine = {_key(s): s for s in b.samples}
    assert all(_same_sample(s, mine[_key(s)]) for s in a.samples)
    # 24 requests per variant in batches of at most 10: 3 batches each, every request in one.
    submitted = _submitted(batched)
    assert len(submitted) == creations == 6
    ids = [cid for b in submitted for cid in b["requests"]]
    assert len(ids) == len(set(ids)) == 48 and max(len(b["requests"]) for b in submitted) <= 10
    assert {s["trace"]["batch"] for s in a.samples} == {b["id"] for b in submitted}
    assert a.manifest["batch"]["size"] == 10
    ended = [b for b in a.batches if b["state"] == "ended"]
    assert len(ended) == 6 and all(b["unanswered"] == [] for b in ended)
    # The batch records are skipped by every reader of samples: the reports are the same
    # (but for the latencies and the file's name).
    reports = []
    for path in (batched, plain):
        assert main(["report", str(path), "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        reports.append(_without(document, ("latency_s", "path")))
    assert reports[0] == reports[1]


def test_anthropic_message_batches_answer_every_sample(tmp_path: Path) -> None:
    with serve(batch_delay_s=0.05) as server:
        out = tmp_path / "anthropic.jsonl"
        outcome = run(
            "shop",
            _variants(server, "anthropic"),
            runs=3,
            out=out,
            progress=False,
            batch=BatchOptions(size=100, **FAST),
        )
        assert server.app.batches.creations() == {"anthropic": 2}
    assert outcome.by_variant["v2"]["completed"] == 12
    samples = read_results(out).samples
    assert all(s["answer"] and s["model"] in ("shop-v1", "shop-v2") for s in samples)
    assert all(s["trace"]["batch"].startswith("msgbatch_") for s in samples)


def test_expired_requests_are_unmeasured_and_resume_takes_them(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    with serve(batch_expire_rate=0.4) as server:
        options = {
            "runs": 4,
            "out": out,
            "progress": False,
            "retries": 0,
            "stop_after_unmeasured": None,
            "batch": BatchOptions(size=50, **FAST),
        }
        first = run("shop", _variants(server), **options)
        unmeasured = sum(c["unmeasured"] for c in first.by_variant.values())
        assert 0 < unmeasured < 32
        samples = read_results(out).samples
        lost = [s for s in samples if s["status"] == "unmeasured"]
        assert all("BatchUnanswered" in s["reason"] and "expired" in s["reason"] for s in lost)
        ended = [b for b in read_results(out).batches if b["state"] == "ended"]
        assert sum(len(b["unanswered"]) for b in ended) == unmeasured
        server.app.batches.knobs = BatchKnobs()
        again = run("shop", _variants(server), resume=True, **options)
        assert f"taking again {unmeasured} samples" in capsys.readouterr().err
        assert again.samples_written == unmeasured
        assert again.by_variant == {
            "v1": {"completed": 16, "incomplete": 0, "unmeasured": 0},
            "v2": {"completed": 16, "incomplete": 0, "unmeasured": 0},
        }
    final = read_results(out)
    assert len(final.samples) == 32 and len({_key(s) for s in final.samples}) == 32
    assert not final.warnings


def test_a_batch_that_never_ends_stops_at_the_time_limit_and_resumes(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "r.jsonl"
    with serve(batch_never_ends=True) as server:
        variants = _variants(server)
        options = {"runs": 2, "out": out, "progress": False}
        with pytest.raises(ProviderError, match="has not ended after 0.3 s") as stopped:
            run("shop", variants, **options, batch=BatchOptions(time_limit_s=0.3, **FAST))
        assert "\n" not in str(stopped.value) and "--resume polls it again" in str(stopped.value)
        held = read_results(out)
        assert held.summary["status"] == "stopped" and not held.samples
        assert server.app.batches.creations() == {"openai": 2}
        server.app.batches.knobs = BatchKnobs()
        done = run("shop", variants, **options, resume=True, batch=BatchOptions(**FAST))
        assert done.status == "finished" and done.samples_written == 16
        assert "not seen to end" not in capsys.readouterr().err
        assert server.app.batches.creations() == {"openai": 2}  # polled, not sent again


def test_batch_with_a_provider_without_a_batch_api_is_one_line(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    for spec in ("v=standin:shop-v1", "v=ollama:qwen3,base_url=http://127.0.0.1:9"):
        argv = ["run", "shop", "--variant", spec, "--runs", "1", "--batch", "--out", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "has no batch API" in err and "openai:" in err
    assert not out.exists()


def test_batches_lists_a_runs_batches(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    with serve(batch_delay_s=0.02) as server:
        run("shop", _variants(server), runs=2, out=out, progress=False,
            batch=BatchOptions(size=5, **FAST))  # fmt: skip
    assert main(["batches", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("r.jsonl: 4 batches, 0 not seen to end")
    assert text.count(" ended ") == 4
    assert main(["batches", str(out), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "evalstats.batches/2"
    assert sorted(b["requests"] for b in document["batches"]) == [3, 3, 5, 5]


def _run_cli(base: str, out: Path, *extra: str) -> subprocess.Popen:
    argv = [
        sys.executable, "-m", "evalstats", "run", "shop",
        "--variant", f"v1=openai:shop-v1,base_url={base}/v1",
        "--variant", f"v2=openai:shop-v2,base_url={base}/v1",
        "--runs", "6", "--batch", "4", "--batch-poll-s", "0.05", "--no-progress",
        "--out", str(out), *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_nothing_and_pays_once(tmp_path: Path) -> None:
    # 48 samples in 12 batches of 4, each batch ending 0.2 s after it was made.
    rng = random.Random(20261201)
    cut = 0
    with serve(batch_delay_s=0.2) as server:
        for moment in range(6):
            out = tmp_path / f"run-{moment}.jsonl"
            before = server.app.batches.creations().get("openai", 0)
            process = _run_cli(server.base_url, out)
            for _ in range(400):  # from when the run has its file (the interpreter's start aside)
                if out.exists() or process.poll() is not None:
                    break
                time.sleep(0.025)
            time.sleep(rng.uniform(0.0, 2.0))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            cut += read_results(out).summary is None
            resumed = _run_cli(server.base_url, out, "--resume")
            _, err = resumed.communicate(timeout=120)
            assert resumed.returncode == 0, err.decode()
            results = read_results(out)
            keys = Counter(_key(s) for s in results.samples)
            assert len(keys) == 48 and max(keys.values()) == 1  # 0 lost, 0 twice
            assert all(s["status"] == "completed" for s in results.samples)
            submitted = _submitted(out)
            requests = Counter(cid for b in submitted for cid in b["requests"])
            assert len(requests) == 48 and max(requests.values()) == 1  # each sent once
            made = server.app.batches.creations()["openai"] - before
            assert made == len(submitted), (moment, made, len(submitted))
    assert cut >= 3  # most moments fell while the run was under way


def test_readme_batch_example_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    import shlex

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Batch APIs", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    serve_line, run_line, list_line = [line for line in block.splitlines() if line.strip()]
    serve_argv = shlex.split(serve_line.rstrip("& "))
    assert serve_argv[:3] == ["evalstats", "standin", "serve"]
    delay = float(serve_argv[serve_argv.index("--batch-delay-s") + 1])
    monkeypatch.chdir(tmp_path)
    with serve(batch_delay_s=min(delay, 0.2)) as server:
        argv = shlex.split(run_line.replace("http://127.0.0.1:8765", server.base_url))
        assert main([*argv[1:], "--no-progress"]) == 0
    assert main(shlex.split(list_line)[1:]) == 0
    out = capsys.readouterr().out
    assert "batch.jsonl: 4 batches, 0 not seen to end" in out
    assert len(read_results(tmp_path / "batch.jsonl").samples) == 80


def test_gemini_batches_answer_as_generate_content_would(tmp_path: Path) -> None:
    with serve(batch_delay_s=0.05) as server:
        url = server.base_url + "/v1beta"
        out = tmp_path / "gemini.jsonl"
        run("shop", [f"v2=gemini:shop-v2,base_url={url}"], runs=3, out=out, progress=False,
            seed=3, batch=BatchOptions(size=5, **FAST))  # fmt: skip
        assert server.app.batches.creations() == {"gemini": 3}
        plain = tmp_path / "plain.jsonl"
        run("shop", [f"v2=openai:shop-v2,base_url={server.base_url}/v1"], runs=3, out=plain,
            progress=False, seed=3)  # fmt: skip
    # The same seeds give the same answers, whichever API carried them.
    answers = {_key(s): s["answer"] for s in read_results(plain).samples}
    samples = read_results(out).samples
    assert len(samples) == 12 and all(answers[_key(s)] == s["answer"] for s in samples)
    assert all(s["tokens"]["input"] > 0 for s in samples)


def test_a_batch_run_is_costed_at_half_the_listed_price(tmp_path: Path) -> None:
    from evalstats.planning._cost import cost_summary

    with serve(batch_delay_s=0.02) as server:
        variants = [v + ",price_in=1,price_out=2" for v in _variants(server)]
        batched, plain = tmp_path / "batched.jsonl", tmp_path / "plain.jsonl"
        run("shop", variants, runs=2, out=batched, progress=False,
            batch=BatchOptions(**FAST))  # fmt: skip
        run("shop", variants, runs=2, out=plain, progress=False)
    half, full = cost_summary(read_results(batched)), cost_summary(read_results(plain))
    assert half.total == pytest.approx(full.total / 2) and full.total > 0
    assert half.variants[0].prices.to_dict() == {"input": 0.5, "output": 1.0}
    assert "at half for the batch API" in str(half)


def test_interrupting_a_batch_run_cancels_its_batches(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with serve(batch_never_ends=True) as server:
        process = _run_cli(server.base_url, out)
        for _ in range(800):
            if out.exists() and b'"state":"submitted"' in out.read_bytes():
                break
            time.sleep(0.025)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 130, err.decode()
        assert "cancelled" in err.decode() and "unfinished batch" in err.decode()
        submitted = _submitted(out)
        assert submitted
        import httpx

        for record in submitted:
            batch = httpx.get(f"{server.base_url}/v1/batches/{record['id']}").json()
            assert batch["status"] == "cancelled"
        server.app.batches.knobs = BatchKnobs()
        resumed = _run_cli(server.base_url, out, "--resume")
        _, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err.decode()
    assert len({_key(s) for s in read_results(out).samples}) == 48


def test_until_decided_sends_each_round_in_its_own_batches(tmp_path: Path, capsys) -> None:
    out = tmp_path / "seq.jsonl"
    with serve(batch_delay_s=0.02) as server:
        v1, v2 = _variants(server)
        argv = ["run", "shop", "--variant", v1, "--variant", v2, "--until-decided",
                "--max-runs", "4", "--batch", "--batch-poll-s", "0.02", "--out", str(out),
                "--no-progress"]  # fmt: skip
        assert main(argv) == 0
        made = server.app.batches.creations()["openai"]
    results = read_results(out)
    rounds = len(results.looks)
    assert 1 <= rounds <= 4
    # One batch per variant per round: each look waited for its round's answers.
    assert made == 2 * rounds == len(_submitted(out))
    assert len(results.samples) == 8 * rounds


def test_a_request_sent_again_is_polled_in_its_latest_batch_on_resume(tmp_path: Path) -> None:
    # Expired in its first batch, sent again in a second that has not ended when the run
    # stops: resumed, the run polls the second batch rather than paying for a third.
    out = tmp_path / "r.jsonl"
    with serve(batch_expire_rate=0.5) as server:
        variants = _variants(server)[:1]
        first = BatchOptions(size=50, time_limit_s=0.5, **FAST)
        server.app.batches.knobs = BatchKnobs(expire_rate=0.5)
        # The first batch ends expired at once; the second never ends.
        original = server.app.batches._ended

        def ended(batch):
            return batch.number == 1 and original(batch)

        server.app.batches._ended = ended
        made = server.app.batches._new

        def new(*args, **kwargs):  # only the first batch's requests expire
            try:
                return made(*args, **kwargs)
            finally:
                server.app.batches.knobs = BatchKnobs()

        server.app.batches._new = new
        with pytest.raises(ProviderError, match="has not ended"):
            run("shop", variants, runs=2, out=out, progress=False, batch=first, backoff=0)
        records = read_results(out).batches
        assert [b["state"] for b in records if b["state"] != "submitting"] == [
            "submitted", "ended", "submitted"
        ]  # fmt: skip
        assert server.app.batches.creations() == {"openai": 2}
        server.app.batches._ended = original
        server.app.batches.knobs = BatchKnobs()
        done = run("shop", variants, runs=2, out=out, progress=False, resume=True,
                   batch=BatchOptions(**FAST))  # fmt: skip
        assert done.status == "finished"
        assert server.app.batches.creations() == {"openai": 2}
    assert len({_key(s) for s in read_results(out).samples}) == 8


def test_resuming_a_batch_run_without_batch_says_its_batches_go_unread(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "r.jsonl"
    with serve(batch_never_ends=True) as server:
        variants = _variants(server)
        with pytest.raises(ProviderError, match="has not ended"):
            run("shop", variants, runs=1, out=out, progress=False,
                batch=BatchOptions(time_limit_s=0.2, **FAST))  # fmt: skip
        capsys.readouterr()
        run("shop", variants, runs=1, out=out, progress=False, resume=True)
    err = capsys.readouterr().err
    assert "lists 2 batches not seen to end" in err and "give --batch to poll them" in err
