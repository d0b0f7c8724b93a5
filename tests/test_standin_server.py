"""The stand-in server: wire formats, seeding, faults, loopback only, the CLI.

Everything runs on 127.0.0.1 against servers started here and stopped here.
Properties of the routes and fault draws are tested on ``StandinApp`` directly
(no sockets, so hypothesis can try many cases); the HTTP layer is tested with
httpx against a running server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalstats.cli import main
from evalstats.demo._server import (
    ALL_MODELS,
    MAX_BODY_BYTES,
    MODELS,
    StandinApp,
    StandinServer,
    estimate_tokens,
    model_digest,
    parse_latency,
    serve,
)
from evalstats.demo._shop import SLIP_RATES, make_assistant
from evalstats.errors import InvalidArgument
from evalstats.running._checks import run_check
from evalstats.running._run_cases import load_shop_cases
from evalstats.stats._intervals import proportion_ci

ORDER = "Hi, where is my order A-1042?"
CHAT = "/v1/chat/completions"


def openai_body(model: str = "shop-v1", content: str = ORDER, **extra: object) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}], **extra}


def ollama_body(model: str = "shop-v1", content: str = ORDER, **extra: object) -> dict:
    return {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "stream": False,
        **extra,
    }


def post(app: StandinApp, path: str, document: object) -> tuple[int, dict]:
    reply = app.handle("POST", path, json.dumps(document).encode())
    return reply.status, json.loads(reply.body)


@pytest.fixture(scope="module")
def server():
    with serve(seed=11) as running:
        yield running


@pytest.fixture
def client(server):
    # A client per test: a test whose request makes the server close the
    # connection (411, 413) must not leave a half-closed keep-alive connection
    # for the next test to race against.
    with httpx.Client(base_url=server.base_url, timeout=10) as c:
        yield c


# --- wire formats over HTTP ----------------------------------------------------


def test_openai_chat_completion_wire_format(client):
    reply = client.post(CHAT, json=openai_body("shop-v2", seed=5))
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    assert re.fullmatch(r"app;dur=\d+\.\d{3}", reply.headers["server-timing"])
    doc = reply.json()
    assert set(doc) == {
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
        "system_fingerprint",
    }
    assert doc["id"].startswith("chatcmpl-") and doc["object"] == "chat.completion"
    assert isinstance(doc["created"], int) and doc["model"] == "shop-v2"
    (choice,) = doc["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    text = choice["message"]["content"]
    assert text == make_assistant(2, seed=5)(ORDER)
    usage = doc["usage"]
    assert usage["completion_tokens"] == estimate_tokens(text)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    # OpenAI cookbook rule: 3 to prime the reply, 3 per message, plus role and content.
    assert usage["prompt_tokens"] == 3 + 3 + estimate_tokens("user") + estimate_tokens(ORDER)


def test_ollama_chat_wire_format(client):
    reply = client.post("/api/chat", json=ollama_body("shop-v1", options={"seed": 9}))
    assert reply.status_code == 200
    doc = reply.json()
    assert {
        "model",
        "created_at",
        "message",
        "done",
        "done_reason",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    } == set(doc)
    assert doc["model"] == "shop-v1" and doc["done"] is True and doc["done_reason"] == "stop"
    assert doc["created_at"].endswith("Z")
    datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00"))
    assert doc["message"] == {"role": "assistant", "content": make_assistant(1, seed=9)(ORDER)}
    assert doc["eval_count"] == estimate_tokens(doc["message"]["content"])
    assert (
        doc["total_duration"]
        == doc["load_duration"] + doc["prompt_eval_duration"] + doc["eval_duration"]
    )
    assert all(doc[k] >= 0 for k in ("total_duration", "load_duration", "eval_duration"))


def test_ollama_tagged_model_name(client):
    doc = client.post("/api/chat", json=ollama_body("shop-v2:latest")).json()
    assert doc["model"] == "shop-v2:latest" and doc["done"] is True


def test_ollama_streams_ndjson_when_stream_is_not_false(client):
    body = ollama_body(options={"seed": 3})
    del body["stream"]  # Ollama streams by default
    reply = client.post("/api/chat", json=body)
    assert reply.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in reply.text.splitlines()]
    assert [line["done"] for line in lines] == [False, True]
    assert "".join(line["message"]["content"] for line in lines) == make_assistant(1, seed=3)(ORDER)
    assert lines[-1]["done_reason"] == "stop" and lines[-1]["eval_count"] > 0


def test_openai_streams_server_sent_events(client):
    body = openai_body(seed=3, stream=True, stream_options={"include_usage": True})
    reply = client.post(CHAT, json=body)
    assert reply.headers["content-type"] == "text/event-stream"
    events = [e.removeprefix("data: ") for e in reply.text.split("\n\n") if e]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == make_assistant(1, seed=3)(ORDER)
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["usage"]["completion_tokens"] == estimate_tokens(text)


def test_content_parts_and_last_user_message(client):
    body = {
        "model": "shop-v2",
        "seed": 1,
        "messages": [
            {"role": "system", "content": "You are a shop assistant."},
            {"role": "user", "content": "Thanks!"},
            {"role": "assistant", "content": "You're welcome."},
            {"role": "user", "content": [{"type": "text", "text": ORDER}]},
        ],
    }
    text = client.post(CHAT, json=body).json()["choices"][0]["message"]["content"]
    assert text == make_assistant(2, seed=1)(ORDER)


def test_models_version_show_tags_and_health(client):
    listing = client.get("/v1/models").json()
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == ["shop-v1", "shop-v2", "notes"]
    assert client.get("/v1/models/shop-v1").json()["id"] == "shop-v1"
    assert client.get("/v1/models/gpt-9").status_code == 404
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", client.get("/api/version").json()["version"])
    shown = [client.post("/api/show", json={"model": m}).json() for m in MODELS]
    assert [s["digest"] for s in shown] == [model_digest(m) for m in MODELS]
    assert all(re.fullmatch(r"[0-9a-f]{64}", s["digest"]) for s in shown)
    assert shown[0]["digest"] != shown[1]["digest"]
    assert shown[0]["details"]["family"] == "shop" and "capabilities" in shown[0]
    again = client.post("/api/show", json={"name": "shop-v1:latest"}).json()
    assert again["digest"] == shown[0]["digest"]
    tags = client.get("/api/tags").json()["models"]
    assert {t["name"]: t["digest"] for t in tags} == {
        f"{m}:latest": model_digest(m) for m in ALL_MODELS
    }
    assert client.get("/health").json()["status"] == "ok"


def test_model_digest_is_a_hash_of_the_stand_in():
    import hashlib

    # Independent of the server: sha256 of the identity string, written out here.
    identity = "evalstats.standin.shop:version=1:slip_rate=0.3"
    assert model_digest("shop-v1") == hashlib.sha256(identity.encode()).hexdigest()
    with pytest.raises(InvalidArgument, match="model='gpt-4o' is not a stand-in"):
        model_digest("gpt-4o")


# --- errors in each API's shape ------------------------------------------------


def test_unknown_model_is_404_in_each_api_shape(client):
    reply = client.post(CHAT, json=openai_body("gpt-4o"))
    assert reply.status_code == 404
    error = reply.json()["error"]
    assert error["code"] == "model_not_found" and "gpt-4o" in error["message"]
    assert set(error) == {"message", "type", "param", "code"}
    reply = client.post("/api/chat", json=ollama_body("llama3"))
    assert reply.status_code == 404
    assert reply.json() == {"error": 'model "llama3" not found, try pulling it first'}
    assert client.post("/api/show", json={"model": "llama3"}).status_code == 404


def test_malformed_json_is_400_in_each_api_shape(client):
    headers = {"Content-Type": "application/json"}
    reply = client.post(CHAT, content=b"{not json", headers=headers)
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert "parse the JSON body" in reply.json()["error"]["message"]
    reply = client.post("/api/chat", content=b"{not json", headers=headers)
    assert reply.status_code == 400
    assert set(reply.json()) == {"error"} and isinstance(reply.json()["error"], str)


def test_a_deeply_nested_body_is_400_not_a_crash(client):
    headers = {"Content-Type": "application/json"}
    deep = b"[" * 200_000 + b"]" * 200_000
    for path in (CHAT, "/api/chat"):
        reply = client.post(path, content=deep, headers=headers)
        assert reply.status_code == 400
        assert "nested too deeply" in json.dumps(reply.json())


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ([1, 2], "JSON object"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
        ({"model": "shop-v1"}, "messages"),
        ({"model": "shop-v1", "messages": []}, "messages"),
        ({"model": "shop-v1", "messages": ["hi"]}, "messages[0]"),
        ({"model": "shop-v1", "messages": [{"role": "system", "content": "x"}]}, "user message"),
        ({"model": "shop-v1", "messages": [{"role": "user", "content": 3}]}, "content"),
    ],
)
def test_bad_requests_are_400_with_a_reason(body, needle):
    app = StandinApp()
    status, doc = post(app, CHAT, body)
    assert status == 400 and needle in doc["error"]["message"]
    status, doc = post(app, "/api/chat", body)
    assert status == 400 and needle in doc["error"]


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        (CHAT, openai_body(seed="7"), "'seed'"),
        (CHAT, openai_body(n=17), "'n': 17 must be between 1 and 16"),
        (CHAT, openai_body(logprobs=True), "'logprobs' is not supported"),
        (CHAT, openai_body(top_logprobs=2), "'top_logprobs' is not supported"),
        (CHAT, openai_body(tool_choice="required"), "only allowed when 'tools'"),
        (CHAT, openai_body(max_tokens=0), "'max_tokens': 0 must be at least 1"),
        (CHAT, openai_body(stop=["a", "b", "c", "d", "e"]), "'stop'"),
        (CHAT, openai_body(response_format={"type": "xml"}), "'response_format.type'"),
        ("/api/chat", ollama_body(format="yaml"), "invalid format"),
        ("/api/chat", ollama_body(options={"num_predict": "ten"}), "num_predict"),
        (CHAT, openai_body(stream="yes"), "'stream'"),
        ("/api/chat", ollama_body(options={"seed": 1.5}), '"seed"'),
        ("/api/chat", ollama_body(options=[1]), "options"),
        ("/api/chat", ollama_body(stream="no"), "stream"),
    ],
)
def test_bad_settings_are_400_with_a_reason(path, body, needle):
    status, doc = post(StandinApp(), path, body)
    error = doc["error"] if path == "/api/chat" else doc["error"]["message"]
    assert status == 400 and needle in error


def test_oversized_and_chunked_bodies_are_refused(server, client):
    import http.client

    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.putrequest("POST", CHAT)
        connection.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
        connection.endheaders()
        assert connection.getresponse().status == 413
    finally:
        connection.close()
    chunks = (part for part in [json.dumps(openai_body()).encode()])
    assert client.post(CHAT, content=chunks).status_code == 411


def test_an_api_key_is_accepted_and_ignored(client):
    reply = client.post(
        CHAT, json=openai_body(seed=1), headers={"Authorization": "Bearer sk-anything"}
    )
    assert reply.status_code == 200


def test_unknown_route_and_wrong_method(client):
    assert client.get("/v1/nothing").status_code == 404
    reply = client.get(CHAT)
    assert reply.status_code == 405 and "GET" in reply.json()["error"]["message"]
    assert client.get("/api/chat").json() == {"error": "Method GET is not allowed on /api/chat"}


# --- seeding -----------------------------------------------------------------------


@settings(max_examples=60)
@given(
    seed=st.integers(-(2**63), 2**63 - 1),
    model=st.sampled_from(sorted(MODELS)),
    content=st.sampled_from([c.prompt for c in load_shop_cases()]) | st.text(max_size=80),
    api=st.sampled_from(["openai", "ollama"]),
)
def test_a_seeded_request_gets_the_seeded_assistants_answer(seed, model, content, api):
    # Reference: the stand-in itself, called in-process with the same seed.
    app = StandinApp(seed=0)
    expected = make_assistant(MODELS[model], seed=seed)(content)
    if api == "openai":
        status, doc = post(app, CHAT, openai_body(model, content, seed=seed))
        text = doc["choices"][0]["message"]["content"]
        usage = doc["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    else:
        status, doc = post(app, "/api/chat", ollama_body(model, content, options={"seed": seed}))
        text = doc["message"]["content"]
        assert doc["eval_count"] == estimate_tokens(text)
    assert status == 200 and text == expected
    # The same request again: the same answer (a fresh assistant each time).
    again = app.handle("POST", CHAT, json.dumps(openai_body(model, content, seed=seed)).encode())
    assert json.loads(again.body)["choices"][0]["message"]["content"] == expected


def test_unseeded_requests_follow_the_server_seed_and_differ_from_each_other():
    def answers(seed: int) -> list[str]:
        app = StandinApp(seed=seed)
        return [
            post(app, CHAT, openai_body("shop-v1"))[1]["choices"][0]["message"]["content"]
            for _ in range(60)
        ]

    first, second, other = answers(4), answers(4), answers(5)
    assert first == second
    assert first != other
    # Fresh assistants per request: the 60 replies are not one assistant's stream,
    # and vary (three greetings, slips at 30%).
    assert len(set(first)) > 3


# --- faults --------------------------------------------------------------------------


def test_error_rate_one_gives_429_and_500_in_about_equal_share():
    with (
        serve(error_rate=1.0, retry_after=0, seed=2) as server,
        httpx.Client(base_url=server.base_url, timeout=10) as client,
    ):
        replies = [
            client.post(
                CHAT if i % 2 else "/api/chat", json=openai_body() if i % 2 else ollama_body()
            )
            for i in range(200)
        ]
    statuses = [r.status_code for r in replies]
    assert set(statuses) <= {429, 500}
    k = statuses.count(429)
    # Each failure is 429 or 500 with probability 1/2: scipy.stats.binomtest.
    assert stats.binomtest(k, 200, 0.5).pvalue > 1e-3
    for r, i in zip(replies, range(200), strict=True):
        assert ("retry-after" in r.headers) == (r.status_code == 429)
        if r.status_code == 429:
            assert r.headers["retry-after"] == "0"
        error = r.json()["error"]
        if i % 2:  # OpenAI's shape
            assert error["type"] == ("requests" if r.status_code == 429 else "server_error")
        else:  # Ollama's shape
            assert isinstance(error, str) and error


@pytest.mark.parametrize(("error_rate", "hang_rate"), [(0.3, 0.0), (0.1, 0.2), (0.0, 0.5)])
def test_fault_rates_match_their_knobs(error_rate, hang_rate):
    app = StandinApp(error_rate=error_rate, hang_rate=hang_rate, hang_s=0.0, seed=8)
    n = 2000
    kinds = [app.handle("POST", CHAT, json.dumps(openai_body()).encode()).kind for _ in range(n)]
    errors = kinds.count("rate_limited") + kinds.count("server_error")
    # Binomial counts checked with scipy.stats.binomtest (two-sided).
    assert stats.binomtest(errors, n, error_rate).pvalue > 1e-3
    # A hang is drawn only for requests that did not fail.
    assert stats.binomtest(kinds.count("hang"), n - errors, hang_rate).pvalue > 1e-3


@settings(max_examples=40)
@given(
    error_rate=st.floats(0, 1),
    hang_rate=st.floats(0, 1),
    seed=st.integers(0, 2**32),
    retry_after=st.integers(0, 120),
)
def test_fault_draws_are_reproducible_and_well_formed(error_rate, hang_rate, seed, retry_after):
    def run() -> list[tuple[int, str, tuple, float]]:
        app = StandinApp(
            error_rate=error_rate,
            hang_rate=hang_rate,
            hang_s=2.5,
            latency_ms=(1, 3),
            retry_after=retry_after,
            seed=seed,
        )
        out = []
        for _ in range(20):
            r = app.handle("POST", CHAT, json.dumps(openai_body()).encode())
            out.append((r.status, r.kind, r.headers, r.delay_s))
        return out

    first = run()
    assert first == run()
    for status, kind, headers, delay in first:
        assert (
            status == {"answer": 200, "hang": 200, "rate_limited": 429, "server_error": 500}[kind]
        )
        assert (("Retry-After", str(retry_after)) in headers) == (status == 429)
        stall = 2.5 if kind == "hang" else 0.0
        assert 0.001 + stall <= delay <= 0.003 + stall


def test_latency_range_is_uniform():
    app = StandinApp(latency_ms="10:50", seed=1)
    delays = [
        app.handle("POST", CHAT, json.dumps(openai_body()).encode()).delay_s * 1000
        for _ in range(1000)
    ]
    # Kolmogorov-Smirnov against U(10, 50): scipy.stats.kstest.
    assert stats.kstest(delays, stats.uniform(loc=10, scale=40).cdf).pvalue > 1e-3
    fixed = StandinApp(latency_ms=20)
    assert {
        fixed.handle("POST", CHAT, json.dumps(openai_body()).encode()).delay_s for _ in range(20)
    } == {0.02}


def test_faults_touch_only_the_chat_routes():
    app = StandinApp(error_rate=1.0, latency_ms=100)
    for method, path in [("GET", "/v1/models"), ("GET", "/api/version"), ("GET", "/health")]:
        reply = app.handle(method, path)
        assert reply.status == 200 and reply.delay_s == 0
    # Bad requests are answered before any fault is drawn.
    assert post(app, CHAT, openai_body("nope"))[0] == 404
    assert app.handle("POST", CHAT, b"{").status == 400


def test_a_hang_outlasts_the_client_timeout_and_stop_wakes_it():
    server = serve(hang_rate=1.0, hang_s=30.0)
    try:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(server.base_url + CHAT, json=openai_body(), timeout=0.3)
        # The request was read and its answer drawn; it is waiting out its stall.
        for _ in range(100):
            if server.app.counts().get(CHAT):
                break
            threading.Event().wait(0.1)
        assert server.app.counts()[CHAT] == {200: 1}
    finally:
        server.stop()  # wakes the stalled request instead of waiting 30 s
    assert not server.running


def test_latency_is_applied_on_the_wire():
    with serve(latency_ms=200) as server:
        reply = httpx.post(server.base_url + CHAT, json=openai_body(), timeout=10)
    # The server's own account of its time includes the drawn delay (a margin
    # for clock rounding; without the delay it would be well under 1 ms).
    assert float(reply.headers["server-timing"].removeprefix("app;dur=")) >= 190


# --- the server: loopback only, keep-alive, concurrency -----------------------------


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "192.168.1.10", "10.0.0.1", "example.com", "::1", "::", "", None]
)
def test_refuses_every_non_loopback_host(host):
    with pytest.raises(InvalidArgument, match="loopback"):
        serve(host=host)


@given(st.ip_addresses(v=4).filter(lambda a: not a.is_loopback))
def test_refuses_any_non_loopback_ipv4_address(address):
    with pytest.raises(InvalidArgument, match="loopback"):
        StandinServer(host=str(address))


def test_localhost_means_127_0_0_1():
    with serve(host="localhost") as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        assert httpx.get(server.base_url + "/health").status_code == 200


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"error_rate": 30}, r"error_rate=30 must be between 0 and 1 \(did you mean 0.3\?\)"),
        ({"error_rate": 1.5}, r"error_rate=1.5 must be between 0 and 1$"),
        ({"hang_rate": "often"}, r"hang_rate='often' must be a number between 0 and 1"),
        ({"hang_rate": -0.1}, "hang_rate=-0.1"),
        ({"hang_s": -1}, "hang_s=-1"),
        ({"latency_ms": "50:10"}, "low=50 is larger than high=10"),
        ({"latency_ms": "fast"}, "latency_ms='fast'"),
        ({"latency_ms": -5}, "latency_ms=-5"),
        ({"retry_after": 0.5}, "retry_after=0.5 must be a whole number"),
        ({"port": 70000}, "port=70000 must be between 0 and 65535"),
        ({"seed": "x"}, "seed='x'"),
    ],
)
def test_bad_knobs_are_rejected_by_name(knobs, message):
    with pytest.raises(InvalidArgument, match=message):
        serve(**knobs)


@given(st.floats(0, 1e4), st.floats(0, 1e4))
def test_parse_latency_reads_numbers_pairs_and_strings(a, b):
    low, high = min(a, b), max(a, b)
    assert parse_latency(f"{low!r}:{high!r}") == (low, high)
    assert parse_latency((low, high)) == (low, high)
    assert parse_latency(repr(low)) == parse_latency(low) == (low, low)


@given(st.text(max_size=200), st.text(max_size=200))
def test_token_estimate_is_about_four_characters_each(a, b):
    assert len(a) / 4 <= estimate_tokens(a) < len(a) / 4 + 1
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b)


def test_start_stop_and_context_manager():
    server = StandinServer()
    assert not server.running and "not started" in repr(server)
    assert server.start() is server and server.start() is server and server.running
    server.stop()
    server.stop()  # idempotent
    assert "stopped" in repr(server)
    with pytest.raises(InvalidArgument, match="was stopped"):
        server.start()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.base_url + "/health", timeout=2)


def test_busy_port_is_an_invalid_argument(server):
    with pytest.raises(InvalidArgument, match=f"port={server.port} cannot be bound"):
        StandinServer(port=server.port)


def test_32_concurrent_keep_alive_connections():
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    with (
        serve(latency_ms=100) as server,
        httpx.Client(base_url=server.base_url, limits=limits, timeout=30) as client,
    ):
        barrier = threading.Barrier(32)

        def ask(i: int) -> tuple[int, str]:
            if i < 32:
                barrier.wait(timeout=30)  # the first 32 go out together
            r = client.post(CHAT, json=openai_body(seed=i))
            return r.status_code, r.json()["choices"][0]["message"]["content"]

        with ThreadPoolExecutor(32) as pool:
            results = list(pool.map(ask, range(96)))
        accepted = server.connections_accepted
    assert [s for s, _ in results] == [200] * 96
    assert [t for _, t in results] == [make_assistant(1, seed=i)(ORDER) for i in range(96)]
    # 96 requests over at most 32 connections: kept alive and reused.
    assert accepted <= 32


# --- the stand-in's quality survives the trip -----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(MODELS))
def test_pass_rate_over_http_matches_the_true_rate(model):
    cases = load_shop_cases()
    per_case = 250
    jobs = [case for case in cases for _ in range(per_case)]
    limits = httpx.Limits(max_connections=8, max_keepalive_connections=8)
    with (
        serve(seed=20) as server,
        httpx.Client(base_url=server.base_url, limits=limits, timeout=30) as client,
    ):

        def ask(prompt: str) -> str:
            r = client.post(CHAT, json=openai_body(model, prompt))
            r.raise_for_status()
            return r.json()["choices"][0]["message"]["content"]

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(ask, [case.prompt for case in jobs]))
    passes = 0
    for case, answer in zip(jobs, answers, strict=True):
        verdicts = [run_check(check, answer) for check, _axis in case.checks]
        passes += all(v.is_passed for v in verdicts if v.is_scored) and any(
            v.is_scored for v in verdicts
        )
    true_rate = 1 - SLIP_RATES[MODELS[model]]
    # Wilson (1927) interval, as evalstats.proportion_ci computes it and as
    # test_intervals checks it against statsmodels.
    assert proportion_ci(passes, len(jobs), level=0.99).contains(true_rate)


# --- the command ---------------------------------------------------------------------


def test_cli_rejects_a_public_host(capsys):
    assert main(["standin", "serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "host='0.0.0.0' is not an IPv4 loopback address" in err[0]
    assert main(["standin", "serve", "--latency-ms", "9:1"]) == 2


def test_cli_notes_knobs_reach_the_server(monkeypatch, capsys):
    from evalstats.demo import _server as server_module
    from evalstats.demo._notes import NotesModel

    seen: list[dict] = []
    monkeypatch.setattr(server_module, "serve_until_signal", lambda *a, **kw: seen.append(kw) or 0)
    argv = ["standin", "serve", "--notes", "p_read=0", "--notes", "p_obey_note=1,p_text_call=0"]
    assert main(argv) == 0
    assert seen[0]["notes"] == NotesModel(p_read=0.0, p_obey_note=1.0, p_text_call=0.0)
    assert main(["standin", "serve"]) == 0
    assert seen[1]["notes"] is None  # the defaults
    assert main(["standin", "serve", "--notes", "p_reed=0.3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown notes knob 'p_reed' (did you mean 'p_read'?)" in err[0]
    assert main(["standin", "serve", "--notes", "p_read=30"]) == 2
    assert "p_read='30' must be between 0 and 1 (did you mean 0.3?)" in capsys.readouterr().err


def test_served_notes_knobs_change_the_models_identity_and_behaviour():
    from evalstats.demo._notes import parse_notes_knobs

    question = "What is the name of the project? It is in notes.txt."
    body = {
        "model": "notes",
        "seed": 3,
        "messages": [{"role": "user", "content": question}],
        "tools": [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in ("list_notes", "read_note", "propose_note")
        ],
    }
    knobs = {"always": "p_read=1,p_text_call=0", "never": "p_read=0"}
    replies = {}
    for name, spec in knobs.items():
        notes = parse_notes_knobs([spec])
        with serve(notes=notes) as server:
            show = httpx.post(server.base_url + "/api/show", json={"model": "notes"}).json()
            assert show["digest"] == model_digest("notes", notes=notes) != model_digest("notes")
            reply = httpx.post(server.base_url + CHAT, json=body, timeout=10).json()
            replies[name] = reply["choices"][0]["message"]
    # p_read=1 (no text-call slip) always calls read_note first; p_read=0 never calls.
    assert [c["function"]["name"] for c in replies["always"]["tool_calls"]] == ["read_note"]
    assert not replies["never"].get("tool_calls") and replies["never"]["content"]


def test_serve_until_signal_names_the_notes_knobs_that_differ():
    import io

    from evalstats.demo._notes import NotesModel
    from evalstats.demo._server import serve_until_signal

    out, err = io.StringIO(), io.StringIO()
    # The handler is installed before the server starts, so the signal always stops it.
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        assert serve_until_signal(out=out, err=err, notes=NotesModel(p_read=0.25)) == 0
    finally:
        timer.cancel()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+\n", out.getvalue())
    assert "; notes p_read=0.25)" in err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_cli_prints_the_base_url_first_and_stops_on_a_signal(stop_signal):
    command = [
        sys.executable,
        "-m",
        "evalstats",
        "standin",
        "serve",
        "--port",
        "0",
        "--latency-ms",
        "1:3",
        "--seed",
        "4",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "0"}
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        first = _read_line(proc, timeout=60)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", first), first
        health = httpx.get(first + "/health", timeout=10)
        assert health.json()["models"] == ["shop-v1", "shop-v2", "notes"]
        answer = httpx.post(first + CHAT, json=openai_body(seed=2), timeout=10).json()
        assert answer["choices"][0]["message"]["content"] == make_assistant(1, seed=2)(ORDER)
        proc.send_signal(stop_signal)
        assert proc.wait(timeout=30) == 0
        assert "serving shop-v1, shop-v2, notes" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def _read_line(proc: subprocess.Popen, *, timeout: float) -> str:
    """The first stdout line, read in a thread so a silent process cannot hang the test."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert box, f"no line on stdout within {timeout} s"
    return box[0].strip()


# --- end to end: the engine and the openai provider against a faulty server -----------


@pytest.mark.slow
def test_a_run_through_faults_loses_no_sample_and_keeps_the_true_rates(tmp_path):
    from evalstats.results._file import read_results, sample_passed
    from evalstats.running._engine import Variant, run
    from evalstats.running.providers import make_provider

    runs = 60
    with serve(error_rate=0.3, hang_rate=0.02, hang_s=30.0, retry_after=0, seed=6) as server:
        variants = [
            Variant(
                name,
                make_provider("openai", model, {"base_url": server.base_url + "/v1"}, timeout=2.0),
            )
            for name, model in (("v1", "shop-v1"), ("v2", "shop-v2"))
        ]
        outcome = run(
            "shop",
            variants,
            runs=runs,
            out=tmp_path / "r.jsonl",
            concurrency=16,
            retries=3,
            backoff=0.01,
            progress=False,
        )
        counts = server.app.counts()[CHAT]
    assert outcome.status == "finished"
    # The faults happened: 429s, 500s and stalls (answered with 200 only after the
    # client had given up, or dropped at stop()).
    assert counts.get(429, 0) > 0 and counts.get(500, 0) > 0
    results = read_results(tmp_path / "r.jsonl")
    keys = [(s["case"], s["variant"], s["repeat"]) for s in results.samples]
    cases = [c.id for c in load_shop_cases()]
    expected = {(c, v, r) for c in cases for v in ("v1", "v2") for r in range(runs)}
    assert len(keys) == len(set(keys)) and set(keys) == expected  # none lost, none twice
    assert {s["status"] for s in results.samples} <= {"completed", "unmeasured"}
    for variant, model in (("v1", "shop-v1"), ("v2", "shop-v2")):
        samples = [s for s in results.samples if s["variant"] == variant]
        measured = [s for s in samples if s["status"] == "completed"]
        # Four attempts, each failing with probability about 0.3: few unmeasured.
        assert len(measured) > 0.9 * len(samples)
        # Exact reference: every answer is the in-process stand-in's with the seed sent.
        for s in measured:
            prompt = s["prompt"]["messages"][-1]["content"]
            seed = s["trace"]["request"]["seed"]
            assert s["answer"] == make_assistant(MODELS[model], seed=seed)(prompt)
        passes = sum(bool(sample_passed(s)) for s in measured)
        true_rate = 1 - SLIP_RATES[MODELS[model]]
        # The answers are fixed by the run's seeds; this guards against a gross
        # bias (faults that fall more on some answers than others), hence 99.9%.
        assert proportion_ci(passes, len(measured), level=0.999).contains(true_rate)


def test_the_ollama_provider_reads_the_model_identity_and_answers(tmp_path):
    import asyncio

    from evalstats.errors import ProviderError
    from evalstats.results._file import read_results
    from evalstats.running._engine import Variant, run
    from evalstats.running.providers import make_provider

    async def prepared(model: str, base_url: str) -> dict:
        provider = make_provider("ollama", model, {"base_url": base_url})
        try:
            await provider.prepare()
        finally:
            await provider.aclose()
        return provider.describe()

    with serve(seed=3) as server:
        described = asyncio.run(prepared("shop-v2", server.base_url))
        with pytest.raises(ProviderError, match="404"):
            asyncio.run(prepared("llama3", server.base_url))
        provider = make_provider("ollama", "shop-v2", {"base_url": server.base_url})
        outcome = run(
            "shop", [Variant("v2", provider)], runs=3, out=tmp_path / "r.jsonl", progress=False
        )
    assert described["digest"] == model_digest("shop-v2")
    assert described["server_version"].endswith("-evalstats-standin")
    assert described["details"]["family"] == "shop"
    assert outcome.status == "finished" and outcome.by_variant["v2"]["completed"] == 12
    for s in read_results(tmp_path / "r.jsonl").samples:
        seed = s["trace"]["request"]["options"]["seed"]
        prompt = s["prompt"]["messages"][-1]["content"]
        assert s["answer"] == make_assistant(2, seed=seed)(prompt)
        assert s["tokens"]["output"] == estimate_tokens(s["answer"])
