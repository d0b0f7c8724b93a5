"""run --batch with a provider's judge: the judge's calls go through the batch API too.

Against the stand-in server, whose model ``shop-judge`` grades judged_by prompts
(a verdict drawn from the request's seed and the prompt), behind the stand-in's
batch endpoints.
"""

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
from evalstats.results._file import read_results
from evalstats.running._engine import sample_seed
from evalstats.running.providers._batch import (
    JUDGE_BATCHES,
    judge_custom_id,
    unanswered_sample,
)

SUITE = str(Path(__file__).resolve().parent.parent / "cases" / "judged.yaml")


def _argv(base: str, out: Path, *extra: str, runs: int = 3, judge: str = "openai") -> list[str]:
    url = base + "/v1"
    judge_url = url if judge == "openai" else base
    return [
        "run", SUITE, "--runs", str(runs), "--no-progress",
        "--judge", f"{judge}:shop-judge,base_url={judge_url}" + (
            ",max_tokens=300" if judge == "anthropic" else ",seed=7"),
        "--variant", f"v1=openai:shop-v1,base_url={url}",
        "--variant", f"v2=openai:shop-v2,base_url={url}",
        "--out", str(out), *extra,
    ]  # fmt: skip


BATCH = ["--batch", "--batch-poll-s", "0.02"]


def _key(sample: dict) -> tuple:
    return (sample["case"], sample["variant"], sample["repeat"])


def _by_key(path: Path) -> dict[tuple, dict]:
    return {_key(s): s for s in read_results(path).samples}


def _judge_batches(path: Path, state: str = "submitted") -> list[dict]:
    return [
        b
        for b in read_results(path).batches
        if b["variant"] == JUDGE_BATCHES and b["state"] == state
    ]


def test_a_batched_judge_gives_the_verdicts_of_a_judge_called_one_by_one(tmp_path, capsys):
    plain, batched = tmp_path / "plain.jsonl", tmp_path / "batched.jsonl"
    with serve(batch_delay_s=0.02) as server:
        assert main(_argv(server.base_url, plain)) == 0
        assert server.app.batches.creations() == {}
        assert main(_argv(server.base_url, batched, *BATCH)) == 0
        made = server.app.batches.creations()["openai"]
    capsys.readouterr()
    a, b = _by_key(plain), _by_key(batched)
    assert a.keys() == b.keys() and len(a) == 4 * 2 * 3
    # Same seeds, same answers, same judge replies: the same verdicts, word for word.
    assert all(a[k]["checks"] == b[k]["checks"] for k in a)
    assert all(a[k]["answer"] == b[k]["answer"] for k in a)
    statuses = Counter(s["checks"][0]["status"] for s in b.values())
    assert statuses["passed"] > 0 and statuses["failed"] > 0  # the judge told them apart
    # Every judge request went in the judge's batches, one (sample, check) each, its id
    # derived from the sample's seed and the check's name.
    judged = _judge_batches(batched)
    assert made == len([x for x in read_results(batched).batches if x["state"] == "submitted"])
    requests = Counter(cid for x in judged for cid in x["requests"])
    assert max(requests.values()) == 1
    assert set(requests) == {
        judge_custom_id(
            sample_seed(0, s["case"], s["repeat"], s["variant"]), s["checks"][0]["check"]
        )
        for s in b.values()
    }
    manifest = read_results(batched).manifest
    assert manifest["batch"]["judge"] == {"provider": "openai", "model": "shop-judge"}
    assert "judge" not in read_results(plain).manifest.get("batch", {})


def test_the_judges_batches_are_listed(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    with serve(batch_delay_s=0.02) as server:
        assert main(_argv(server.base_url, out, *BATCH, runs=1)) == 0
    capsys.readouterr()
    assert main(["batches", str(out)]) == 0
    listed = capsys.readouterr().out
    assert f"openai    {JUDGE_BATCHES}" in listed or JUDGE_BATCHES in listed
    assert main(["batches", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["batches"]
    judge_rows = [r for r in rows if r["variant"] == JUDGE_BATCHES]
    assert judge_rows and all(r["state"] == "ended" and r["answered"] == 8 for r in judge_rows)


def test_an_expired_judge_batch_leaves_the_check_judge_unmeasured_then_resume_completes(
    tmp_path, capsys
):
    out = tmp_path / "r.jsonl"
    with serve(batch_delay_s=0.02) as server:
        first = _argv(server.base_url, out, *BATCH, "--retries", "0", runs=4)
        # The answers' batches answer; then every judge request expires.
        app = server.app.batches
        # The answers' batches answer; every judge request expires.
        app.knobs = BatchKnobs(delay_s=0.02, expire_rate=1.0, expire_prefix="ej-")
        assert main(first) == 0
        capsys.readouterr()
        samples = read_results(out).samples
        assert len(samples) == 32
        assert all(s["status"] == "completed" for s in samples)  # answered, not graded
        lost = [c for s in samples for c in s["checks"] if c.get("judge_unmeasured")]
        assert len(lost) == 32
        assert all(c["status"] == "unscored" and "BatchUnanswered" in c["reason"] for c in lost)
        assert all(unanswered_sample(s) for s in samples)
        ended = _judge_batches(out, "ended")
        assert sum(len(b["unanswered"]) for b in ended) == 32
        before = app.creations()["openai"]
        answer_batches = len(
            [b for b in read_results(out).batches if b["state"] == "submitted"]
        ) - len(_judge_batches(out))
        # The judge answers again: --resume takes those samples again, their answers
        # read from the answers' ended batches, their judge requests in new batches.
        app.knobs = BatchKnobs(delay_s=0.02)
        assert main([*first, "--resume", str(out)]) == 0
        err = capsys.readouterr().err
        assert "taking again 32 samples their batches did not answer" in err
        made = app.creations()["openai"] - before
    final = read_results(out)
    keys = Counter(_key(s) for s in final.samples)
    assert len(keys) == 32 and max(keys.values()) == 1
    assert not any(c.get("judge_unmeasured") for s in final.samples for c in s["checks"])
    assert {c["status"] for s in final.samples for c in s["checks"]} <= {"passed", "failed"}
    # No answer was paid for again: only judge batches were made on resume.
    assert made == len(_judge_batches(out)) - len(ended)
    assert (
        len([b for b in final.batches if b["state"] == "submitted"]) - len(_judge_batches(out))
        == answer_batches
    )


def test_a_judge_without_a_batch_api_is_said_in_one_line_and_called_as_before(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    with serve(batch_delay_s=0.02) as server:
        argv = _argv(server.base_url, out, *BATCH, runs=1, judge="ollama")
        assert main(argv) == 0
        made = server.app.batches.creations()
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "has no batch API" in line]
    assert said == [
        "evalstats: the judge (ollama:shop-judge) has no batch API evalstats can use; its "
        "calls are sent one by one"
    ]
    results = read_results(out)
    assert "judge" not in results.manifest["batch"]
    assert not [b for b in results.batches if b["variant"] == JUDGE_BATCHES]
    assert made == {"openai": 2}  # the answers' batches only
    assert all(c["status"] in ("passed", "failed") for s in results.samples for c in s["checks"])


def _run_cli(base: str, out: Path, *extra: str) -> subprocess.Popen:
    batch = ["--batch", "8", "--batch-poll-s", "0.05"]
    argv = [sys.executable, "-m", "evalstats", *_argv(base, out, *batch, *extra, runs=3)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


@pytest.mark.slow
def test_kill_9_during_the_judges_batches_loses_nothing_and_pays_once(tmp_path):
    # 24 samples; answers in batches of 8, then the judge's, each batch ending 0.3 s after
    # it was made; the run is killed at a random moment once a judge batch is written.
    rng = random.Random(20261202)
    during = 0
    with serve(batch_delay_s=0.3) as server:
        for moment in range(4):
            out = tmp_path / f"run-{moment}.jsonl"
            before = server.app.batches.creations().get("openai", 0)
            process = _run_cli(server.base_url, out)
            for _ in range(800):  # until the judge's first batch is in the file
                if process.poll() is not None:
                    break
                if out.exists() and f'"variant":"{JUDGE_BATCHES}"'.encode() in out.read_bytes():
                    break
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.4))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            during += read_results(out).summary is None
            resumed = _run_cli(server.base_url, out, "--resume", str(out))
            _, err = resumed.communicate(timeout=120)
            assert resumed.returncode == 0, err.decode()
            results = read_results(out)
            keys = Counter(_key(s) for s in results.samples)
            assert len(keys) == 24 and max(keys.values()) == 1  # 0 lost, 0 twice
            assert all(s["status"] == "completed" for s in results.samples)
            assert all(
                c["status"] in ("passed", "failed") for s in results.samples for c in s["checks"]
            )
            judged = _judge_batches(out)
            requests = Counter(cid for b in judged for cid in b["requests"])
            assert len(requests) == 24 and max(requests.values()) == 1  # each judged once
            submitted = [b for b in results.batches if b["state"] == "submitted"]
            made = server.app.batches.creations()["openai"] - before
            assert made == len(submitted), (moment, made, len(submitted))  # none twice
    assert during >= 2  # most kills fell while the judge's batches were out


def test_an_anthropic_judge_sends_message_batches(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    with serve(batch_delay_s=0.02) as server:
        assert main(_argv(server.base_url, out, *BATCH, runs=2, judge="anthropic")) == 0
        made = server.app.batches.creations()
    capsys.readouterr()
    results = read_results(out)
    judged = [b for b in results.batches if b["variant"] == JUDGE_BATCHES]
    assert {b["provider"] for b in judged} == {"anthropic"}
    assert made["anthropic"] == len([b for b in judged if b["state"] == "submitted"])
    assert made["openai"] == 2  # the answers', one a variant
    assert results.manifest["batch"]["judge"] == {"provider": "anthropic", "model": "shop-judge"}
    assert len(results.samples) == 16
    assert all(c["status"] in ("passed", "failed") for s in results.samples for c in s["checks"])
