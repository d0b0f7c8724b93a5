"""The Anthropic provider against httpx.MockTransport.

Payloads follow the Messages API reference, https://docs.anthropic.com/en/api/messages
(headers ``x-api-key`` and ``anthropic-version: 2023-06-01``; body ``model``,
``max_tokens``, top-level ``system``, ``messages``, ``temperature``, ``top_p``,
``stop_sequences``, ``tools`` as ``{"name", "description", "input_schema"}``;
response ``content`` blocks of type ``text`` and ``tool_use`` with ``id``,
``name``, ``input``, ``stop_reason``, ``usage.input_tokens``/``output_tokens``),
the tool-use guide https://docs.anthropic.com/en/docs/build-with-claude/tool-use
and the errors page https://docs.anthropic.com/en/api/errors
(``{"type": "error", "error": {"type", "message"}}``; 529 ``overloaded_error``;
429 with a ``retry-after`` header).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

import httpx
import pytest
from services import Service

from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.running._engine import Prompt
from evalstats.running.providers import AnthropicProvider

CANARY = "sk-ant-api03-canary0123456789abcdef"


def message(content, stop_reason="end_turn"):
    return {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": "claude-3-5-haiku-20241022",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 14},
    }


def error(status, kind, text, headers=None):
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return lambda r: httpx.Response(status, json=body, headers=headers or {})


PROMPT = Prompt(
    text="Where is my order A-1042?",
    system="You are a helpful shop assistant.",
    messages=(
        {"role": "system", "content": "You are a helpful shop assistant."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "Where is my order A-1042?"},
    ),
)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def provider(reply, **kwargs):
    service = Service(reply)
    kwargs.setdefault("transport", httpx.MockTransport(service))
    return AnthropicProvider("claude-3-5-haiku-latest", **kwargs), service


def test_plain_answer_request_and_response():
    reply = message([{"type": "text", "text": "Your order "}, {"type": "text", "text": "shipped."}])
    p, service = provider(
        lambda r: httpx.Response(200, json=reply),
        settings={"temperature": 0.5, "top_p": 0.9, "stop": ["###"], "max_tokens": 300},
    )
    done = asyncio.run(p.complete(PROMPT, seed=123))
    request = service.requests[0]
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == CANARY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert service.body == {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 300,
        "system": "You are a helpful shop assistant.",
        "messages": [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "Where is my order A-1042?"},
        ],
        "temperature": 0.5,
        "top_p": 0.9,
        "stop_sequences": ["###"],
    }  # no seed: the API has none
    assert done.answer == "Your order shipped."
    assert done.tokens == {"input": 25, "output": 14}
    assert done.model == "claude-3-5-haiku-20241022"
    assert done.stop_reason == "end_turn"
    assert done.settings == {"temperature": 0.5, "max_tokens": 300, "top_p": 0.9, "stop": ["###"]}


def test_max_tokens_defaults_to_1024_and_no_system_field_without_one():
    p, service = provider(lambda r: httpx.Response(200, json=message([])))
    done = asyncio.run(p.complete("Hi", seed=1))
    assert service.body == {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    assert done.answer == ""
    assert done.settings == {"max_tokens": 1024}


def test_tool_use():
    tools = [
        {
            "name": "get_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        }
    ]
    # The tool_use response of the tool-use guide.
    reply = message(
        [
            {"type": "text", "text": "I'll check the weather."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "get_weather",
                "input": {"location": "San Francisco, CA"},
            },
        ],
        stop_reason="tool_use",
    )
    p, service = provider(lambda r: httpx.Response(200, json=reply), tools=tools)
    done = asyncio.run(p.complete("Weather in SF?", seed=0))
    assert service.body["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the current weather in a given location",
            "input_schema": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        }
    ]
    assert done.answer == "I'll check the weather."
    assert done.stop_reason == "tool_use"
    assert done.tool_calls == (
        {
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "get_weather",
            "arguments": {"location": "San Francisco, CA"},
        },
    )


def test_429_retry_after_seconds():
    p, _ = provider(
        error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            headers={"retry-after": "30"},
        )
    )
    with pytest.raises(TransientProviderError) as info:
        asyncio.run(p.complete("Hi"))
    assert info.value.retry_after == 30.0
    assert "anthropic: HTTP 429" in str(info.value)
    assert "(rate_limit_error)" in str(info.value)


def test_429_retry_after_http_date():
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    p, _ = provider(error(429, "rate_limit_error", "slow down", headers={"retry-after": when}))
    with pytest.raises(TransientProviderError) as info:
        asyncio.run(p.complete("Hi"))
    # formatdate keeps whole seconds, and some time passes before the parse.
    assert 110 <= info.value.retry_after <= 121


def test_529_overloaded_is_transient():
    p, _ = provider(error(529, "overloaded_error", "Overloaded"))
    with pytest.raises(TransientProviderError, match=r"anthropic: HTTP 529.*Overloaded"):
        asyncio.run(p.complete("Hi"))


def test_500_api_error_is_transient():
    p, _ = provider(error(500, "api_error", "An unexpected error has occurred"))
    with pytest.raises(TransientProviderError, match="HTTP 500"):
        asyncio.run(p.complete("Hi"))


def test_connection_error_is_transient():
    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    p, _ = provider(None, transport=httpx.MockTransport(refuse))
    with pytest.raises(TransientProviderError, match="anthropic: could not reach"):
        asyncio.run(p.complete("Hi"))


def test_timeout_is_transient():
    def stall(request):
        raise httpx.ConnectTimeout("timed out", request=request)

    p, _ = provider(None, transport=httpx.MockTransport(stall))
    with pytest.raises(TransientProviderError, match="ConnectTimeout"):
        asyncio.run(p.complete("Hi"))


@pytest.mark.parametrize(
    ("status", "kind", "text"),
    [
        (400, "invalid_request_error", "max_tokens: Field required"),
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "Your API key does not have permission"),
        (404, "not_found_error", "model: claude-nope"),
    ],
)
def test_4xx_stops_with_one_clear_line(status, kind, text):
    p, _ = provider(error(status, kind, f"{text} (key {CANARY})"))
    with pytest.raises(ProviderError) as info:
        asyncio.run(p.complete("Hi"))
    assert not isinstance(info.value, TransientProviderError)
    line = str(info.value)
    assert line.startswith(f"anthropic: HTTP {status} ")
    assert "from https://api.anthropic.com/v1/messages: " in line
    assert text in line and f"({kind})" in line
    assert CANARY not in line and CANARY[-4:] not in line
    assert CANARY not in json.dumps(p.describe())


def test_seed_and_context_are_not_anthropic_settings():
    with pytest.raises(InvalidArgument, match="'seed' \\(anthropic does not take it\\)"):
        AnthropicProvider("claude-3-5-haiku-latest", settings={"seed": 1})
    with pytest.raises(InvalidArgument, match="context"):
        AnthropicProvider("claude-3-5-haiku-latest", settings={"context": 100})


def test_temperature_above_one_is_rejected():
    with pytest.raises(InvalidArgument, match=r"temperature=1.5 must be in \[0, 1\]"):
        AnthropicProvider("claude-3-5-haiku-latest", settings={"temperature": 1.5})


def test_missing_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(InvalidArgument) as info:
        AnthropicProvider("claude-3-5-haiku-latest")
    assert "ANTHROPIC_API_KEY" in str(info.value)


def test_local_server_needs_no_key(monkeypatch):
    # A self-hosted or proxy base_url takes no key: none is demanded and no empty header is sent.
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    p, service = provider(
        lambda r: httpx.Response(200, json=message([{"type": "text", "text": "Hi"}])),
        base_url="http://127.0.0.1:9",
    )
    asyncio.run(p.complete(PROMPT, seed=0))
    assert "x-api-key" not in service.requests[0].headers
