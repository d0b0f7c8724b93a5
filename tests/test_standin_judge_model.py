"""The stand-in server's judge model (``shop-judge``) and the knob that expires some ids."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from evalstats.demo._server import JUDGE_MODEL, StandinApp, serve
from evalstats.demo._shop import make_assistant, reply_is_good
from evalstats.demo._standin_batches import BatchKnobs
from evalstats.errors import InvalidArgument
from evalstats.running._judge import judged_by, parse_judgement
from evalstats.stats import proportion_ci

RUBRIC = "Gives the status of order A-1042, naming it by its id."
PROMPT = judged_by(lambda p: "PASS", RUBRIC).prompt


def _ask(app: StandinApp, answer: str, seed: int) -> str:
    request = {"model": JUDGE_MODEL, "messages": [{"role": "user", "content": PROMPT(answer)}]}
    document = app.openai_answer({**request, "seed": seed}, 0)
    return document["choices"][0]["message"]["content"]


def test_the_judge_model_gives_the_same_verdict_for_the_same_seed_and_prompt():
    app = StandinApp()
    good = make_assistant(1, seed=3)("Where is my order A-1042?", slip=False)
    bad = make_assistant(1, seed=3)("Where is my order A-1042?", slip="forgets_id")
    assert reply_is_good(good) and not reply_is_good(bad)
    assert _ask(app, good, 7) == _ask(app, good, 7)
    # Its replies end as a real judge's do, and judged_by reads them.
    assert parse_judgement(_ask(app, good, 7)).status in ("passed", "failed")


def test_the_judge_model_errs_at_its_rates():
    # 0.9 sensitivity and 0.9 specificity, over 2000 seeds each; the 99% Wilson interval
    # of the observed rate must hold 0.9.
    app = StandinApp()
    good = make_assistant(1, seed=3)("Where is my order A-1042?", slip=False)
    bad = make_assistant(1, seed=3)("Where is my order A-1042?", slip="forgets_id")
    n = 2000
    passed_good = sum(parse_judgement(_ask(app, good, s)).status == "passed" for s in range(n))
    failed_bad = sum(parse_judgement(_ask(app, bad, s)).status == "failed" for s in range(n))
    for k in (passed_good, failed_bad):
        ci = proportion_ci(k, n, level=0.99)
        assert ci.low <= 0.9 <= ci.high, ci


def test_the_judge_model_is_answered_not_listed_and_wants_an_answer_block():
    with serve() as server, httpx.Client(base_url=server.base_url) as client:
        listed = [m["id"] for m in client.get("/v1/models").json()["data"]]
        assert JUDGE_MODEL not in listed
        body = {"model": JUDGE_MODEL, "messages": [{"role": "user", "content": "hello"}]}
        refused = client.post("/v1/chat/completions", json=body)
        assert refused.status_code == 400 and "<answer>" in refused.json()["error"]["message"]
        body["messages"][0]["content"] = PROMPT("Your order A-1042 has shipped.")
        body["seed"] = 5
        first = client.post("/v1/chat/completions", json=body).json()
        again = client.post("/v1/chat/completions", json=body).json()
        text = first["choices"][0]["message"]["content"]
        assert text == again["choices"][0]["message"]["content"]
        assert first["model"] == JUDGE_MODEL and first["usage"]["completion_tokens"] > 0


def test_expire_prefix_expires_only_the_ids_it_starts():
    params = {
        "model": "shop-v1",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Where is my order A-1042?"}],
    }
    ids = [f"es-{i}" for i in range(5)] + [f"ej-{i}" for i in range(5)]
    requests = [{"custom_id": cid, "params": params} for cid in ids]
    with serve() as server, httpx.Client(base_url=server.base_url) as client:
        server.app.batches.knobs = BatchKnobs(expire_rate=1.0, expire_prefix="ej-")
        batch = client.post("/v1/messages/batches", json={"requests": requests}).json()
        for _ in range(200):
            status = client.get(f"/v1/messages/batches/{batch['id']}").json()
            if status["processing_status"] == "ended":
                break
            time.sleep(0.02)
        results = client.get(f"/v1/messages/batches/{batch['id']}/results").text
        kinds = {
            r["custom_id"]: r["result"]["type"] for r in map(json.loads, results.splitlines()) if r
        }
    assert {k for k, v in kinds.items() if v == "expired"} == set(ids[5:])
    assert {k for k, v in kinds.items() if v == "succeeded"} == set(ids[:5])


def test_expire_prefix_is_checked():
    with pytest.raises(InvalidArgument, match="expire_prefix=3 must be the start of a custom_id"):
        BatchKnobs(expire_prefix=3)
