"""The Ollama provider against httpx.MockTransport.

Payloads follow Ollama's API reference, docs/api.md in github.com/ollama/ollama
("Generate a chat completion": ``model``, ``messages``, ``stream``, ``think``,
``options`` with the Modelfile parameters ``temperature``, ``num_ctx``,
``num_predict``, ``seed``, ``top_p``, ``stop``, and ``tools``; the response's
``message.content``/``message.tool_calls`` with ``function.arguments`` as an
object, ``done_reason``, ``prompt_eval_count``, ``eval_count``; "Show Model
Information" ``POST /api/show``; "List Local Models" ``GET /api/tags`` with
``digest``; ``GET /api/version``; errors as ``{"error": "..."}``), and the
``OLLAMA_HOST`` rules of Ollama's envconfig (scheme optional, port 11434 by
default).
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.running._engine import Prompt
from evalstats.running.providers import OllamaProvider
from evalstats.running.providers._ollama import ollama_host

DIGEST = "fe938a131f40e6f6d40083c9f0f430a515233eb2edaa6d72eb85c50d64f2300e"


def chat(content="Your order A-1042 has shipped.", tool_calls=None):
    message = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "model": "qwen3:0.6b",
        "created_at": "2024-07-22T20:33:28.123648Z",
        "message": message,
        "done_reason": "stop",
        "done": True,
        "total_duration": 885095291,
        "load_duration": 3753500,
        "prompt_eval_count": 122,
        "prompt_eval_duration": 328493000,
        "eval_count": 33,
        "eval_duration": 552222000,
    }


class Service:
    def __init__(self, reply=None):
        self.reply = reply or (lambda r: httpx.Response(200, json=chat()))
        self.requests: list[httpx.Request] = []

    def __call__(self, request):
        self.requests.append(request)
        path = request.url.path
        if path == "/api/show":
            return httpx.Response(
                200,
                json={
                    "modelfile": "FROM qwen3",
                    "parameters": "temperature 0.6",
                    "template": "{{ .Prompt }}",
                    "details": {
                        "parent_model": "",
                        "format": "gguf",
                        "family": "qwen3",
                        "families": ["qwen3"],
                        "parameter_size": "751.63M",
                        "quantization_level": "Q4_K_M",
                    },
                    "model_info": {"general.architecture": "qwen3"},
                },
            )
        if path == "/api/tags":
            return httpx.Response(
                200,
                json={
                    "models": [
                        {"name": "llama3:latest", "model": "llama3:latest", "digest": "0" * 64},
                        {"name": "qwen3:0.6b", "model": "qwen3:0.6b", "digest": DIGEST},
                    ]
                },
            )
        if path == "/api/version":
            return httpx.Response(200, json={"version": "0.9.6"})
        return self.reply(request)

    @property
    def body(self):
        return json.loads(self.requests[-1].content)


@pytest.fixture(autouse=True)
def no_host(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def provider(reply=None, **kwargs):
    service = Service(reply)
    kwargs.setdefault("transport", httpx.MockTransport(service))
    return OllamaProvider("qwen3:0.6b", **kwargs), service


PROMPT = Prompt(
    text="Where is my order?",
    system="Be brief.",
    messages=(
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where is my order?"},
    ),
)


def test_plain_answer_request_and_response():
    p, service = provider(
        settings={
            "temperature": 0.2,
            "max_tokens": 1024,
            "context": 8192,
            "top_p": 0.8,
            "stop": ["</s>", "User:"],
        }
    )
    done = asyncio.run(p.complete(PROMPT, seed=42))
    request = service.requests[0]
    assert str(request.url) == "http://127.0.0.1:11434/api/chat"
    assert "authorization" not in request.headers
    assert service.body == {
        "model": "qwen3:0.6b",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Where is my order?"},
        ],
        "stream": False,
        "think": False,
        "options": {
            "temperature": 0.2,
            "num_ctx": 8192,
            "num_predict": 1024,
            "seed": 42,
            "top_p": 0.8,
            "stop": ["</s>", "User:"],
        },
    }
    assert done.answer == "Your order A-1042 has shipped."
    assert done.tokens == {"input": 122, "output": 33}
    assert done.model == "qwen3:0.6b"
    assert done.stop_reason == "stop"
    assert done.request == {
        "model": "qwen3:0.6b",
        "stream": False,
        "think": False,
        "options": service.body["options"],
    }
    assert done.settings == {
        "temperature": 0.2,
        "context": 8192,
        "max_tokens": 1024,
        "seed": 42,
        "top_p": 0.8,
        "stop": ["</s>", "User:"],
    }


def test_tool_calls():
    tools = [
        {
            "name": "get_current_weather",
            "description": "Get the current weather for a location",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        }
    ]
    calls = [{"function": {"name": "get_current_weather", "arguments": {"location": "Paris, FR"}}}]
    p, service = provider(lambda r: httpx.Response(200, json=chat("", calls)), tools=tools)
    done = asyncio.run(p.complete("Weather in Paris?", seed=1))
    assert service.body["tools"] == [{"type": "function", "function": tools[0]}]
    assert done.tool_calls == (
        {"id": "call_0", "name": "get_current_weather", "arguments": {"location": "Paris, FR"}},
    )
    assert done.answer == ""


def test_prepare_records_digest_details_and_server_version():
    p, service = provider(settings={"context": 8192})
    before = p.describe()
    assert before == {
        "kind": "ollama",
        "model": "qwen3:0.6b",
        "base_url": "http://127.0.0.1:11434",
        "settings": {"context": 8192},
    }
    asyncio.run(p.prepare())
    assert [r.url.path for r in service.requests] == ["/api/show", "/api/tags", "/api/version"]
    assert json.loads(service.requests[0].content) == {"model": "qwen3:0.6b"}
    assert p.describe() == {
        **before,
        "digest": DIGEST,
        "details": {
            "family": "qwen3",
            "parameter_size": "751.63M",
            "quantization_level": "Q4_K_M",
            "format": "gguf",
        },
        "server_version": "0.9.6",
    }


def test_prepare_with_an_unknown_model_stops_with_the_server_message():
    def service(request):
        return httpx.Response(404, json={"error": "model 'qwen9' not found"})

    p = OllamaProvider("qwen9", transport=httpx.MockTransport(service))
    with pytest.raises(
        ProviderError,
        match=r"ollama: HTTP 404 Not Found from .*/api/show: "
        r"model 'qwen9' not found",
    ) as info:
        asyncio.run(p.prepare())
    assert not isinstance(info.value, TransientProviderError)


@pytest.mark.parametrize("failures", [1, 3, 4])
def test_a_run_retries_a_transient_failure_of_prepare(tmp_path, failures):
    from evalstats.results._file import read_results
    from evalstats.running._engine import Variant, run
    from evalstats.running._suite import Case

    service = Service()
    left = {"503s": failures}

    def flaky(request):
        if request.url.path == "/api/show" and left["503s"] > 0:
            left["503s"] -= 1
            return httpx.Response(503, json={"error": "server busy"}, headers={"Retry-After": "0"})
        return service(request)

    p = OllamaProvider("qwen3:0.6b", transport=httpx.MockTransport(flaky))
    case = Case("order", "Where is my order?", ({"contains": "A-1042"},))
    out = tmp_path / "r.jsonl"
    if failures > 3:  # more than the three retries: the run does not start
        with pytest.raises(TransientProviderError, match="HTTP 503"):
            run([case], [Variant("v", p)], runs=1, out=out, retries=3, backoff=0, progress=False)
        assert not out.exists()
        return
    outcome = run([case], [Variant("v", p)], runs=1, out=out, retries=3, backoff=0, progress=False)
    assert outcome.status == "finished"
    assert read_results(out).manifest["variants"][0]["task"]["digest"] == DIGEST


def test_latest_tag_is_matched_in_tags():
    p = OllamaProvider("llama3", transport=httpx.MockTransport(Service()))
    asyncio.run(p.prepare())
    assert p.describe()["digest"] == "0" * 64


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        ("localhost", "http://localhost:11434"),
        (":11434", "http://127.0.0.1:11434"),
        ("http://gpu-box:11434/", "http://gpu-box:11434"),
        ("http://gpu-box", "http://gpu-box:80"),
        ("https://ollama.example.com", "https://ollama.example.com:443"),
        ("[::1]:11434", "http://[::1]:11434"),
        ("https://proxy.example/ollama/", "https://proxy.example:443/ollama"),
    ],
)
def test_ollama_host_forms(value, url):
    assert ollama_host(value) == url


def test_ollama_host_environment(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11500")
    p, service = provider()
    asyncio.run(p.complete("Hi", seed=0))
    assert str(service.requests[0].url) == "http://127.0.0.1:11500/api/chat"
    p, service = provider(base_url="http://box:1234")
    asyncio.run(p.complete("Hi", seed=0))
    assert str(service.requests[0].url) == "http://box:1234/api/chat"


def test_error_body_and_transient_statuses():
    p, _ = provider(lambda r: httpx.Response(400, json={"error": "invalid options: num_ctx"}))
    with pytest.raises(ProviderError, match="ollama: HTTP 400 .*invalid options: num_ctx"):
        asyncio.run(p.complete("Hi", seed=0))
    p, _ = provider(
        lambda r: httpx.Response(
            503, json={"error": "server busy, please try again"}, headers={"Retry-After": "1"}
        )
    )
    with pytest.raises(TransientProviderError, match="server busy") as info:
        asyncio.run(p.complete("Hi", seed=0))
    assert info.value.retry_after == 1.0


def test_connection_refused_is_transient():
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    p, _ = provider(transport=httpx.MockTransport(refuse))
    with pytest.raises(TransientProviderError, match=r"could not reach http://127.0.0.1:11434/"):
        asyncio.run(p.complete("Hi", seed=0))


def test_context_must_be_a_whole_number():
    with pytest.raises(InvalidArgument, match="ollama: context='big' must be a whole number"):
        OllamaProvider("qwen3:0.6b", settings={"context": "big"})
