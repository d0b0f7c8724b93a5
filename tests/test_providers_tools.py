"""Tool turns in every provider's wire format.

The expected bodies follow each service's documentation:

* OpenAI, API reference "Create chat completion": an assistant message's
  ``tool_calls`` are ``{"id", "type": "function", "function": {"name",
  "arguments": JSON text}}`` and a result is ``{"role": "tool",
  "tool_call_id", "content"}``.
* Ollama, docs/api.md "Generate a chat completion": a message's
  ``tool_calls`` are ``{"function": {"name", "arguments": object}}`` and a
  result is ``{"role": "tool", "content", "tool_name"}``.
* Anthropic, "Tool use": ``tool_use`` blocks ``{"type", "id", "name",
  "input"}`` in the assistant turn and ``tool_result`` blocks ``{"type",
  "tool_use_id", "content"}`` in the next user turn.
* Gemini, "Function calling": ``functionCall`` parts ``{"name", "args"}`` in a
  ``model`` turn and ``functionResponse`` parts ``{"name", "response":
  object}`` in the next ``user`` turn.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import tool_conversations

from evalstats.errors import InvalidArgument, TransientProviderError
from evalstats.running.providers import PROVIDERS, make_provider
from evalstats.running.providers._base import conversation


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-gemini-0123456789")
    for name in ("OPENAI_BASE_URL", "OLLAMA_HOST", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def body_of(kind, messages):
    p = make_provider(kind, "m", settings={"seed": "none"} if kind != "anthropic" else None)
    system, neutral = conversation(messages)
    _, _, body = p._request(system, neutral, None)
    return body


CONVERSATION = [
    {"role": "system", "content": "Use the tools."},
    {"role": "user", "content": "What is in notes.txt?"},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": "c1", "name": "list_notes", "arguments": {}},
            {"id": "c2", "name": "read_note", "arguments": {"path": "notes.txt"}},
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "name": "list_notes",
        "content": "notes.txt",
        "error": False,
    },
    {
        "role": "tool",
        "tool_call_id": "c2",
        "name": "read_note",
        "content": "Project name: Paper Kite",
        "error": False,
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c3", "name": "read_note", "arguments": {"path": "../x"}}],
    },
    {
        "role": "tool",
        "tool_call_id": "c3",
        "name": "read_note",
        "content": "refused: '..' is not allowed in a note path",
        "error": True,
    },
    {"role": "assistant", "content": "It says Paper Kite."},
    {"role": "user", "content": "Thanks."},
]


def test_openai_wire_format():
    body = body_of("openai", CONVERSATION)
    assert body["messages"] == [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "What is in notes.txt?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "list_notes", "arguments": "{}"},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "read_note", "arguments": '{"path": "notes.txt"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "notes.txt"},
        {"role": "tool", "tool_call_id": "c2", "content": "Project name: Paper Kite"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c3",
                    "type": "function",
                    "function": {"name": "read_note", "arguments": '{"path": "../x"}'},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c3",
            "content": "refused: '..' is not allowed in a note path",
        },
        {"role": "assistant", "content": "It says Paper Kite."},
        {"role": "user", "content": "Thanks."},
    ]


def test_ollama_wire_format():
    body = body_of("ollama", CONVERSATION)
    assert body["messages"] == [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "What is in notes.txt?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {"function": {"name": "list_notes", "arguments": {}}},
                {"function": {"name": "read_note", "arguments": {"path": "notes.txt"}}},
            ],
        },
        {"role": "tool", "content": "notes.txt", "tool_name": "list_notes"},
        {"role": "tool", "content": "Project name: Paper Kite", "tool_name": "read_note"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "read_note", "arguments": {"path": "../x"}}}],
        },
        {
            "role": "tool",
            "content": "refused: '..' is not allowed in a note path",
            "tool_name": "read_note",
        },
        {"role": "assistant", "content": "It says Paper Kite."},
        {"role": "user", "content": "Thanks."},
    ]


def test_anthropic_wire_format():
    body = body_of("anthropic", CONVERSATION)
    assert body["system"] == "Use the tools."
    assert body["messages"] == [
        {"role": "user", "content": "What is in notes.txt?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "c1", "name": "list_notes", "input": {}},
                {
                    "type": "tool_use",
                    "id": "c2",
                    "name": "read_note",
                    "input": {"path": "notes.txt"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "notes.txt"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "Project name: Paper Kite"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c3", "name": "read_note", "input": {"path": "../x"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c3",
                    "content": "refused: '..' is not allowed in a note path",
                },
            ],
        },
        {"role": "assistant", "content": "It says Paper Kite."},
        {"role": "user", "content": "Thanks."},
    ]


def test_anthropic_joins_a_user_message_after_tool_results_to_their_turn():
    messages = CONVERSATION[1:5] + [{"role": "user", "content": "And the language?"}]
    body = body_of("anthropic", messages)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][-1]["content"][-1] == {"type": "text", "text": "And the language?"}


def test_gemini_wire_format():
    body = body_of("gemini", CONVERSATION)
    assert body["systemInstruction"] == {"parts": [{"text": "Use the tools."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "What is in notes.txt?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me look."},
                {"functionCall": {"name": "list_notes", "args": {}}},
                {"functionCall": {"name": "read_note", "args": {"path": "notes.txt"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "list_notes", "response": {"content": "notes.txt"}}},
                {
                    "functionResponse": {
                        "name": "read_note",
                        "response": {"content": "Project name: Paper Kite"},
                    }
                },
            ],
        },
        {
            "role": "model",
            "parts": [{"functionCall": {"name": "read_note", "args": {"path": "../x"}}}],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "read_note",
                        "response": {"content": "refused: '..' is not allowed in a note path"},
                    }
                },
            ],
        },
        {"role": "model", "parts": [{"text": "It says Paper Kite."}]},
        {"role": "user", "parts": [{"text": "Thanks."}]},
    ]


@pytest.mark.parametrize(
    ("message", "match"),
    [
        ({"role": "tool", "name": "read_note", "content": "x"}, "needs tool_call_id"),
        ({"role": "tool", "tool_call_id": "c1", "content": "x"}, "needs name"),
        ({"role": "tool", "tool_call_id": "c1", "name": "f", "content": None}, "needs content"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "", "name": "f", "arguments": {}}],
            },
            "id='' must be",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}],
            },
            "arguments='{}' must",
        ),
        (
            {
                "role": "assistant",
                "content": 3,
                "tool_calls": [{"id": "c", "name": "f", "arguments": {}}],
            },
            "text or None",
        ),
        ({"role": "assistant", "content": None, "tool_calls": {"id": "c"}}, "must be a list"),
    ],
)
def test_malformed_tool_turns_are_refused_at_the_door(message, match):
    with pytest.raises(InvalidArgument, match=match):
        conversation([{"role": "user", "content": "q"}, message])


def _sent_calls(kind, body):
    """``[(name, arguments)]`` of every call in a wire body, in order."""
    out = []
    if kind in ("openai", "ollama"):
        for m in body["messages"]:
            for c in m.get("tool_calls", ()):
                args = c["function"]["arguments"]
                out.append((c["function"]["name"], json.loads(args) if kind == "openai" else args))
    elif kind == "anthropic":
        for m in body["messages"]:
            if isinstance(m["content"], list):
                out += [(b["name"], b["input"]) for b in m["content"] if b["type"] == "tool_use"]
    else:
        for c in body["contents"]:
            out += [
                (p["functionCall"]["name"], p["functionCall"]["args"])
                for p in c["parts"]
                if "functionCall" in p
            ]
    return out


def _sent_results(kind, body):
    """``[content]`` of every tool result in a wire body, in order."""
    if kind in ("openai", "ollama"):
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if kind == "anthropic":
        return [
            b["content"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
    return [
        p["functionResponse"]["response"]["content"]
        for c in body["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]


def _keys(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


@settings(max_examples=60)
@given(tool_conversations(), st.sampled_from(sorted(PROVIDERS)))
def test_every_wire_format_sends_every_call_and_result_in_order_and_no_error_flag(messages, kind):
    body = body_of(kind, messages)
    calls = [(c["name"], c["arguments"]) for m in messages for c in m.get("tool_calls", ())]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert _sent_calls(kind, body) == calls
    assert _sent_results(kind, body) == results
    # The trace's "error" flag is evalstats' own and never goes over the wire
    # (argument values are drawn without such a key).
    assert "error" not in set(_keys(body["messages" if kind != "gemini" else "contents"]))
    if kind == "openai":
        ids = [c["id"] for m in body["messages"] for c in m.get("tool_calls", ())]
        assert [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"] == ids
    if kind == "anthropic":
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False))


def _tool_reply(kind, call_id, name, args):
    """A response asking for one tool call, in ``kind``'s wire format."""
    if kind == "openai":
        return {
            "model": "m",
            "choices": [
                {
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                        ],
                    },
                }
            ],
        }
    if kind == "ollama":
        return {
            "model": "m",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": name, "arguments": args}}],
            },
            "done": True,
        }
    if kind == "anthropic":
        return {
            "model": "m",
            "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}],
        }
    return {
        "modelVersion": "m",
        "candidates": [
            {
                "finishReason": "STOP",
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": name, "args": args}}],
                },
            }
        ],
    }


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_a_call_read_from_a_response_goes_back_with_its_result(kind):
    """The loop an assistant runs: read a call, run it, send call and result back."""
    bodies = []

    def service(request):
        bodies.append(json.loads(request.content))
        return httpx.Response(
            200, json=_tool_reply(kind, "toolu_1", "read_note", {"path": "notes.txt"})
        )

    p = make_provider(kind, "m", transport=httpx.MockTransport(service))

    async def go():
        messages = [{"role": "user", "content": "What is the project called?"}]
        first = await p.complete(messages, seed=3)
        (call,) = first.tool_calls
        assert (call["name"], call["arguments"]) == ("read_note", {"path": "notes.txt"})
        messages.append(
            {
                "role": "assistant",
                "content": first.answer or None,
                "tool_calls": list(first.tool_calls),
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "name": call["name"],
                "content": "Project name: Paper Kite",
                "error": False,
            }
        )
        await p.complete(messages, seed=3)
        await p.aclose()
        return call

    call = asyncio.run(go())
    second = bodies[1]
    assert _sent_calls(kind, second) == [("read_note", {"path": "notes.txt"})]
    assert _sent_results(kind, second) == ["Project name: Paper Kite"]
    if kind in ("openai", "anthropic"):  # the service's own id goes back
        assert call["id"] == "toolu_1"
        assert "toolu_1" in json.dumps(second)


# --- a whole request with tools and settings, every field asserted -------------------

READ_NOTE = {
    "name": "read_note",
    "description": "Read one note.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
QUESTION = "What is in notes.txt?"

# Each body as the service's documentation writes a request with tools (see the
# module docstring), with temperature 0.2, 64 tokens at most and seed 5.
WHOLE_BODIES = {
    "openai": {
        "model": "m",
        "messages": [{"role": "user", "content": QUESTION}],
        "temperature": 0.2,
        "max_tokens": 64,
        "seed": 5,
        "tools": [{"type": "function", "function": READ_NOTE}],
    },
    "ollama": {
        "model": "m",
        "messages": [{"role": "user", "content": QUESTION}],
        "stream": False,
        "think": False,
        "options": {"temperature": 0.2, "num_predict": 64, "seed": 5},
        "tools": [{"type": "function", "function": READ_NOTE}],
    },
    "anthropic": {  # Anthropic takes no seed
        "model": "m",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": QUESTION}],
        "temperature": 0.2,
        "tools": [
            {
                "name": "read_note",
                "description": "Read one note.",
                "input_schema": READ_NOTE["parameters"],
            }
        ],
    },
    "gemini": {
        "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
        "generationConfig": {"temperature": 0.2, "maxOutputTokens": 64, "seed": 5},
        "tools": [{"functionDeclarations": [READ_NOTE]}],
    },
}


@pytest.mark.parametrize("kind", sorted(WHOLE_BODIES))
def test_a_request_with_tools_and_settings_has_no_stray_field(kind):
    sent = []

    def service(request):
        sent.append(json.loads(request.content))
        return httpx.Response(500, json={"error": {"message": "stop here"}})

    p = make_provider(
        kind,
        "m",
        {"temperature": "0.2", "max_tokens": "64", "base_url": "http://127.0.0.1:9"},
        tools=[READ_NOTE],
        transport=httpx.MockTransport(service),
    )
    with pytest.raises(TransientProviderError, match="HTTP 500"):
        asyncio.run(p.complete(QUESTION, seed=5))
    assert sent == [WHOLE_BODIES[kind]]
