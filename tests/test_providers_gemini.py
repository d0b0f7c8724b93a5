"""The Gemini provider against httpx.MockTransport.

Payloads follow the generateContent reference,
https://ai.google.dev/api/generate-content (request ``contents`` with roles
``user``/``model`` and ``parts``, ``systemInstruction``, ``generationConfig``
with ``temperature``, ``maxOutputTokens``, ``topP``, ``seed``,
``stopSequences``; response ``candidates[0].content.parts``, ``finishReason``,
``usageMetadata.promptTokenCount``/``candidatesTokenCount``, ``modelVersion``,
``promptFeedback.blockReason``), the function-calling guide
https://ai.google.dev/gemini-api/docs/function-calling (``tools:
[{"functionDeclarations": [...]}]``, ``functionCall {name, args}`` parts), the
API-key header ``x-goog-api-key`` of https://ai.google.dev/gemini-api/docs/api-key
and the error body of https://ai.google.dev/gemini-api/docs/troubleshooting
(``{"error": {"code", "message", "status", "details"}}``, RetryInfo on 429).
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from services import Service

from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.running._engine import Prompt
from evalstats.running.providers import GeminiProvider

CANARY = "AIzaSyCanary-0123456789abcdefghijkl"


def response(parts, finish="STOP"):
    return {
        "candidates": [
            {"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 5, "totalTokenCount": 13},
        "modelVersion": "gemini-2.0-flash-001",
        "responseId": "abc",
    }


def error(status, code_name, text, details=None, headers=None):
    body = {"error": {"code": status, "message": text, "status": code_name}}
    if details is not None:
        body["error"]["details"] = details
    return lambda r: httpx.Response(status, json=body, headers=headers or {})


PROMPT = Prompt(
    text="Where is my order A-1042?",
    system="You are a helpful shop assistant.",
    messages=(
        {"role": "system", "content": "You are a helpful shop assistant."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": "Where is my order A-1042?"},
    ),
)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)


def provider(reply, model="gemini-2.0-flash", **kwargs):
    service = Service(reply)
    kwargs.setdefault("transport", httpx.MockTransport(service))
    return GeminiProvider(model, **kwargs), service


def test_plain_answer_request_and_response():
    p, service = provider(
        lambda r: httpx.Response(200, json=response([{"text": "It "}, {"text": "shipped."}])),
        settings={"temperature": 0.7, "max_tokens": 200, "top_p": 0.95, "stop": ["END"]},
    )
    done = asyncio.run(p.complete(PROMPT, seed=77))
    request = service.requests[0]
    assert str(request.url) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
    )
    assert request.url.query == b""  # the key never goes in the URL
    assert request.headers["x-goog-api-key"] == CANARY
    assert service.body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Hello"}]},
            {"role": "model", "parts": [{"text": "Hi!"}]},
            {"role": "user", "parts": [{"text": "Where is my order A-1042?"}]},
        ],
        "systemInstruction": {"parts": [{"text": "You are a helpful shop assistant."}]},
        "generationConfig": {
            "temperature": 0.7,
            "maxOutputTokens": 200,
            "topP": 0.95,
            "seed": 77,
            "stopSequences": ["END"],
        },
    }
    assert done.answer == "It shipped."
    assert done.tokens == {"input": 8, "output": 5}
    assert done.model == "gemini-2.0-flash-001"
    assert done.stop_reason == "STOP"
    assert done.request == {"generationConfig": service.body["generationConfig"]}
    assert done.settings == {
        "temperature": 0.7,
        "max_tokens": 200,
        "top_p": 0.95,
        "seed": 77,
        "stop": ["END"],
    }


def test_models_prefix_is_accepted():
    p, service = provider(
        lambda r: httpx.Response(200, json=response([{"text": "ok"}])),
        model="models/gemini-1.5-pro",
    )
    asyncio.run(p.complete("Hi", seed=0))
    assert service.requests[0].url.path == "/v1beta/models/gemini-1.5-pro:generateContent"


def test_function_calling():
    tools = [
        {
            "name": "schedule_meeting",
            "description": "Schedules a meeting with specified attendees.",
            "parameters": {
                "type": "object",
                "properties": {"attendees": {"type": "array", "items": {"type": "string"}}},
                "required": ["attendees"],
            },
        }
    ]
    parts = [
        {"functionCall": {"name": "schedule_meeting", "args": {"attendees": ["Bob", "Alice"]}}}
    ]
    p, service = provider(lambda r: httpx.Response(200, json=response(parts)), tools=tools)
    done = asyncio.run(p.complete("Book it", seed=0))
    assert service.body["tools"] == [{"functionDeclarations": tools}]
    assert done.answer == ""
    assert done.tool_calls == (
        {"id": "call_0", "name": "schedule_meeting", "arguments": {"attendees": ["Bob", "Alice"]}},
    )


def test_thought_parts_are_not_the_answer():
    parts = [{"text": "thinking...", "thought": True}, {"text": "Answer."}]
    p, _ = provider(lambda r: httpx.Response(200, json=response(parts)))
    assert asyncio.run(p.complete("Hi", seed=0)).answer == "Answer."


def test_blocked_prompt_gives_an_empty_answer_with_the_reason():
    body = {
        "promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        "modelVersion": "gemini-2.0-flash-001",
    }
    p, _ = provider(lambda r: httpx.Response(200, json=body))
    done = asyncio.run(p.complete("Hi", seed=0))
    assert done.answer == ""
    assert done.stop_reason == "blocked: SAFETY"
    assert done.tokens == {"input": 8, "output": None}


def test_429_retry_info_in_the_body():
    details = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "28s"},
    ]
    p, _ = provider(error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", details))
    with pytest.raises(TransientProviderError) as info:
        asyncio.run(p.complete("Hi", seed=0))
    assert info.value.retry_after == 28.0
    assert "gemini: HTTP 429" in str(info.value)
    assert "(RESOURCE_EXHAUSTED)" in str(info.value)


def test_retry_after_header_wins_over_the_body():
    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "28s"}]
    p, _ = provider(
        error(429, "RESOURCE_EXHAUSTED", "quota", details, headers={"Retry-After": "3"})
    )
    with pytest.raises(TransientProviderError) as info:
        asyncio.run(p.complete("Hi", seed=0))
    assert info.value.retry_after == 3.0


def test_503_unavailable_is_transient():
    p, _ = provider(error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."))
    with pytest.raises(TransientProviderError, match="HTTP 503.*overloaded"):
        asyncio.run(p.complete("Hi", seed=0))


def test_read_error_is_transient():
    def drop(request):
        raise httpx.ReadError("connection reset", request=request)

    p, _ = provider(None, transport=httpx.MockTransport(drop))
    with pytest.raises(TransientProviderError, match="ReadError"):
        asyncio.run(p.complete("Hi", seed=0))


def test_invalid_key_line_has_no_key():
    p, _ = provider(
        error(400, "INVALID_ARGUMENT", f"API key not valid. Please pass a valid API key. {CANARY}")
    )
    with pytest.raises(ProviderError) as info:
        asyncio.run(p.complete("Hi", seed=0))
    line = str(info.value)
    assert not isinstance(info.value, TransientProviderError)
    assert line.startswith("gemini: HTTP 400 Bad Request from https://generativelanguage")
    assert "API key not valid" in line and "(INVALID_ARGUMENT)" in line
    assert CANARY not in line and CANARY[:6] not in line
    assert CANARY not in json.dumps(p.describe())


def test_missing_key(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(InvalidArgument, match="set the environment variable GEMINI_API_KEY"):
        GeminiProvider("gemini-2.0-flash")


def test_local_server_needs_no_key(monkeypatch):
    # A self-hosted or proxy base_url takes no key: none is demanded and no empty header is sent.
    monkeypatch.delenv("GEMINI_API_KEY")
    p, service = provider(
        lambda r: httpx.Response(200, json=response([{"text": "Hi"}])),
        base_url="http://127.0.0.1:9/v1beta",
    )
    asyncio.run(p.complete(PROMPT, seed=0))
    assert "x-goog-api-key" not in service.requests[0].headers
