"""The OpenAI-compatible provider against httpx.MockTransport.

Payloads follow the Chat Completions API reference,
https://platform.openai.com/docs/api-reference/chat/create (request: model,
messages, temperature, max_tokens, top_p, seed, stop, tools as
``{"type": "function", "function": {...}}``; response: ``choices[0].message``
with ``content`` and ``tool_calls`` whose ``function.arguments`` is a JSON
string, ``usage.prompt_tokens``/``completion_tokens``, ``model``,
``finish_reason``) and the error body of
https://platform.openai.com/docs/guides/error-codes
(``{"error": {"message", "type", "param", "code"}}``).
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from services import Service

from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.running._engine import Prompt, TaskResult
from evalstats.running.providers import OpenAIProvider

CANARY = "sk-canary-0123456789abcdefXYZ"


def completion(content="Your order A-1042 has shipped.", **extra):
    # The response object from the Chat Completions reference.
    message = {"role": "assistant", "content": content, "refusal": None}
    message.update(extra)
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1677652288,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if "tool_calls" in extra else "stop",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21},
    }


PROMPT = Prompt(
    text="Where is my order A-1042?",
    system="You are a helpful shop assistant.",
    messages=(
        {"role": "system", "content": "You are a helpful shop assistant."},
        {"role": "user", "content": "Where is my order A-1042?"},
    ),
)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def provider(reply, **kwargs) -> tuple[OpenAIProvider, Service]:
    service = Service(reply)
    kwargs.setdefault("transport", httpx.MockTransport(service))
    return OpenAIProvider("gpt-4o-mini", **kwargs), service


def test_plain_answer_request_and_response():
    p, service = provider(
        lambda r: httpx.Response(200, json=completion()),
        settings={"temperature": 0.2, "max_tokens": 256, "top_p": 0.9, "stop": "END"},
    )
    done = asyncio.run(p.complete(PROMPT, seed=2**31 + 5))
    request = service.requests[0]
    assert request.method == "POST"
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {CANARY}"
    assert request.headers["content-type"] == "application/json"
    assert service.body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a helpful shop assistant."},
            {"role": "user", "content": "Where is my order A-1042?"},
        ],
        "temperature": 0.2,
        "max_tokens": 256,
        "top_p": 0.9,
        "seed": 5,  # the per-sample seed modulo 2**31
        "stop": ["END"],
    }
    assert done.answer == "Your order A-1042 has shipped."
    assert done.tokens == {"input": 9, "output": 12}
    assert done.model == "gpt-4o-mini-2024-07-18"
    assert done.stop_reason == "stop"
    assert done.tool_calls == ()
    assert done.settings == {
        "temperature": 0.2,
        "max_tokens": 256,
        "top_p": 0.9,
        "seed": 5,
        "stop": ["END"],
    }
    assert done.request == {"model": "gpt-4o-mini", **done.settings}


def test_no_settings_sends_only_model_messages_and_seed():
    p, service = provider(lambda r: httpx.Response(200, json=completion()))
    asyncio.run(p.complete("Hi", seed=3))
    assert service.body == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Hi"}],
        "seed": 3,
    }


def test_run_returns_a_task_result_with_the_trace():
    p, _ = provider(lambda r: httpx.Response(200, json=completion()))
    result = asyncio.run(p.run(PROMPT, seed=11))
    assert isinstance(result, TaskResult)
    assert result.answer == "Your order A-1042 has shipped."
    assert result.tokens == {"input": 9, "output": 12}
    assert result.model == "gpt-4o-mini-2024-07-18"
    assert result.trace == {
        "request": {"model": "gpt-4o-mini", "seed": 11},
        "settings": {"seed": 11},
        "tool_calls": [],
        "stop_reason": "stop",
    }
    json.dumps(result.trace)


TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order by its number.",
        "parameters": {
            "type": "object",
            "properties": {"order": {"type": "string"}},
            "required": ["order"],
        },
    }
]


def test_tool_calls_sent_and_parsed():
    reply = completion(
        content=None,
        tool_calls=[
            {
                "id": "call_abc123",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": '{"order": "A-1042"}'},
            },
            {
                "id": "call_def456",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": "{not json"},
            },
        ],
    )
    p, service = provider(lambda r: httpx.Response(200, json=reply), tools=TOOLS)
    done = asyncio.run(p.complete(PROMPT, seed=0))
    assert service.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Look up an order by its number.",
                "parameters": {
                    "type": "object",
                    "properties": {"order": {"type": "string"}},
                    "required": ["order"],
                },
            },
        }
    ]
    assert done.answer == ""
    assert done.stop_reason == "tool_calls"
    assert done.tool_calls == (
        {"id": "call_abc123", "name": "lookup_order", "arguments": {"order": "A-1042"}},
        {"id": "call_def456", "name": "lookup_order", "arguments": {"_unparsed": "{not json"}},
    )
    assert p.describe()["tools"] == ["lookup_order"]


def test_openai_tool_form_is_accepted_too():
    p, service = provider(
        lambda r: httpx.Response(200, json=completion()),
        tools=[{"type": "function", "function": TOOLS[0]}],
    )
    asyncio.run(p.complete("Hi", seed=0))
    assert service.body["tools"][0]["function"]["name"] == "lookup_order"


def test_base_url_from_environment_and_argument(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1/")
    p, service = provider(lambda r: httpx.Response(200, json=completion()))
    asyncio.run(p.complete("Hi", seed=0))
    assert str(service.requests[0].url) == "http://127.0.0.1:8000/v1/chat/completions"
    p, service = provider(
        lambda r: httpx.Response(200, json=completion()), base_url="http://127.0.0.1:9/v1"
    )
    asyncio.run(p.complete("Hi", seed=0))
    assert str(service.requests[0].url) == "http://127.0.0.1:9/v1/chat/completions"


def test_local_server_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    p, service = provider(
        lambda r: httpx.Response(200, json=completion()), base_url="http://127.0.0.1:9/v1"
    )
    asyncio.run(p.complete("Hi", seed=0))
    assert "authorization" not in service.requests[0].headers


def test_missing_key_for_openai_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(InvalidArgument, match="OPENAI_API_KEY"):
        OpenAIProvider("gpt-4o-mini")


def test_429_with_retry_after_headers_is_transient():
    headers = {"retry-after-ms": "1250", "retry-after": "2", "x-ratelimit-remaining-requests": "0"}
    body = {
        "error": {
            "message": "Rate limit reached for gpt-4o-mini on requests per min (RPM).",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    p, _ = provider(lambda r: httpx.Response(429, json=body, headers=headers))
    with pytest.raises(TransientProviderError) as info:
        asyncio.run(p.complete("Hi", seed=0))
    assert info.value.retry_after == 1.25
    text = str(info.value)
    assert text.startswith("openai: HTTP 429 Too Many Requests from ")
    assert "Rate limit reached for gpt-4o-mini" in text
    assert "rate_limit_exceeded" in text


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_transient(status):
    body = {"error": {"message": "The server had an error", "type": "server_error"}}
    p, _ = provider(lambda r: httpx.Response(status, json=body))
    with pytest.raises(TransientProviderError, match=f"openai: HTTP {status}"):
        asyncio.run(p.complete("Hi", seed=0))


def test_connection_error_and_timeout_are_transient():
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    p, _ = provider(None, transport=httpx.MockTransport(refuse))
    with pytest.raises(TransientProviderError, match="could not reach .*ConnectError"):
        asyncio.run(p.complete("Hi", seed=0))

    def stall(request):
        raise httpx.ReadTimeout("timed out", request=request)

    p, _ = provider(None, transport=httpx.MockTransport(stall))
    with pytest.raises(TransientProviderError, match=r"no answer from .* \(ReadTimeout\)"):
        asyncio.run(p.complete("Hi", seed=0))


def test_4xx_error_line_names_provider_status_message_and_never_the_key():
    # OpenAI's 401 echoes a masked key; this service also echoes the header in full.
    def reply(request):
        masked = CANARY[:8] + "*" * 10 + CANARY[-4:]
        return httpx.Response(
            401,
            json={
                "error": {
                    "message": f"Incorrect API key provided: {masked}. You passed "
                    f"{request.headers['authorization']}.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
        )

    p, _ = provider(reply)
    with pytest.raises(ProviderError) as info:
        asyncio.run(p.complete("Hi", seed=0))
    assert not isinstance(info.value, TransientProviderError)
    text = str(info.value)
    assert text.startswith(
        "openai: HTTP 401 Unauthorized from https://api.openai.com/v1/chat/completions: "
        "Incorrect API key provided: [redacted]."
    )
    assert "(invalid_request_error, invalid_api_key)" in text
    assert "\n" not in text
    for leaked in (CANARY, CANARY[:8], CANARY[-4:]):
        assert leaked not in text
        assert leaked not in repr(info.value)
        assert leaked not in json.dumps(p.describe())
        assert leaked not in repr(p)


def test_400_names_the_field():
    body = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
    p, _ = provider(lambda r: httpx.Response(400, json=body), settings={"max_tokens": 5})
    with pytest.raises(ProviderError, match="HTTP 400 .*Use 'max_completion_tokens' instead"):
        asyncio.run(p.complete("Hi", seed=0))


def test_vllm_style_error_body():
    # vLLM's ErrorResponse puts message/type/code at the top level.
    body = {
        "object": "error",
        "message": "The model `nope` does not exist.",
        "type": "NotFoundError",
        "param": None,
        "code": 404,
    }
    p, _ = provider(lambda r: httpx.Response(404, json=body), base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ProviderError, match=r"HTTP 404 .*The model `nope` does not exist"):
        asyncio.run(p.complete("Hi", seed=0))


def test_not_json_200_says_check_the_base_url():
    p, _ = provider(lambda r: httpx.Response(200, text="<html>hello</html>"))
    with pytest.raises(ProviderError, match="is not JSON.*base URL"):
        asyncio.run(p.complete("Hi", seed=0))


def test_no_choices_is_an_error():
    p, _ = provider(lambda r: httpx.Response(200, json={"model": "m", "choices": []}))
    with pytest.raises(ProviderError, match="no choices"):
        asyncio.run(p.complete("Hi", seed=0))


def test_unknown_setting_suggests_the_closest():
    with pytest.raises(InvalidArgument, match="'temprature' \\(did you mean 'temperature'\\?\\)"):
        OpenAIProvider("gpt-4o-mini", settings={"temprature": 0.2})
    with pytest.raises(InvalidArgument, match="'context' \\(openai does not take it\\)"):
        OpenAIProvider("gpt-4o-mini", settings={"context": 8192})


@pytest.mark.parametrize(("code", "transient"), [(502, True), (429, True), (400, False)])
def test_an_error_object_in_a_200_answer(code, transient):
    # OpenRouter's error responses (https://openrouter.ai/docs/api-reference/errors):
    # {"error": {"code": int, "message": str, "metadata": {...}}}, sometimes with status 200.
    body = {"error": {"code": code, "message": f"Upstream error {CANARY}", "metadata": {}}}
    p, _ = provider(lambda r: httpx.Response(200, json=body))
    with pytest.raises(ProviderError) as info:
        asyncio.run(p.complete("Hi", seed=0))
    assert isinstance(info.value, TransientProviderError) is transient
    assert "the service answered with an error: Upstream error" in str(info.value)
    assert CANARY not in str(info.value)


def test_a_rejected_default_seed_says_how_to_send_none():
    body = {
        "error": {
            "message": "Unsupported parameter: 'seed'",
            "type": "invalid_request_error",
            "param": "seed",
            "code": "unsupported_parameter",
        }
    }
    p, _ = provider(lambda r: httpx.Response(400, json=body))
    with pytest.raises(ProviderError, match="add the setting seed=none to send none"):
        asyncio.run(p.complete("Hi", seed=1))
    p, service = provider(lambda r: httpx.Response(200, json=completion()), settings={"seed": None})
    asyncio.run(p.complete("Hi", seed=1))
    assert "seed" not in service.body
