"""A judged check records the tokens its judge's call took, and the judge's model.

Each provider's reply states its usage in its own wire format (the payloads
below follow the references named in ``test_providers_*.py``): OpenAI's chat
completion ``usage.prompt_tokens``/``completion_tokens``, Anthropic's message
``usage.input_tokens``/``output_tokens``, Gemini's ``usageMetadata.
promptTokenCount``/``candidatesTokenCount``, Ollama's ``prompt_eval_count``/
``eval_count``. The provider's own reading of them is what a judge's verdict
keeps, as ``judge_tokens`` beside ``judge_model`` (``test_judge_cost.py`` prices them).
"""

from __future__ import annotations

import json

import httpx
import pytest
from records import check, sample

from evalstats.results._records import Tokens, sample_problem
from evalstats.running._judge import judged_by
from evalstats.running._scoring import verdict_record
from evalstats.running.providers import (
    AnthropicProvider,
    GeminiProvider,
    OllamaProvider,
    OpenAIProvider,
    make_judge_from_provider,
)

# --- each provider's usage, read into the verdict ------------------------------------

OPENAI = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "It names the order.\nPASS"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 131, "completion_tokens": 9, "total_tokens": 140},
}
ANTHROPIC = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-3-5-haiku-20241022",
    "content": [{"type": "text", "text": "It names the order.\nPASS"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 131, "output_tokens": 9},
}
GEMINI = {
    "candidates": [
        {
            "content": {"parts": [{"text": "It names the order.\nPASS"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 131, "candidatesTokenCount": 9, "totalTokenCount": 140},
    "modelVersion": "gemini-2.0-flash-001",
}
OLLAMA = {
    "model": "qwen3:0.6b",
    "created_at": "2024-07-22T20:33:28.123648Z",
    "message": {"role": "assistant", "content": "It names the order.\nPASS"},
    "done_reason": "stop",
    "done": True,
    "prompt_eval_count": 131,
    "eval_count": 9,
}


def _ollama(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/api/chat":
        return httpx.Response(200, json=OLLAMA)
    if request.url.path == "/api/version":
        return httpx.Response(200, json={"version": "0.9.6"})
    return httpx.Response(200, json={"details": {"family": "qwen3"}, "model_info": {}})


PROVIDERS = {
    "openai": (OpenAIProvider, "gpt-4o-mini", lambda r: httpx.Response(200, json=OPENAI)),
    "anthropic": (
        AnthropicProvider,
        "claude-3-5-haiku-latest",
        lambda r: httpx.Response(200, json=ANTHROPIC),
    ),
    "gemini": (GeminiProvider, "gemini-2.0-flash", lambda r: httpx.Response(200, json=GEMINI)),
    "ollama": (OllamaProvider, "qwen3:0.6b", _ollama),
}


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "test-key-0123456789")
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_a_provider_judge_s_verdict_keeps_the_usage_its_reply_states(kind):
    cls, model, service = PROVIDERS[kind]
    judge = make_judge_from_provider(cls(model, transport=httpx.MockTransport(service)))
    try:
        verdict = judged_by(judge, "Names the order number.")("Order A-1042 ships today.")
    finally:
        judge.close()
    assert verdict.status == "passed"
    assert verdict.judge_tokens == {"input": 131, "output": 9}
    # the model asked for (what a prices file names), not the version the service reports
    assert verdict.judge_model == model
    record = verdict_record("judged", None, verdict)
    assert record.judge_tokens == Tokens(input=131, output=9) and record.judge_model == model
    assert record.judge["reply"].endswith("PASS")


def test_a_reply_without_usage_records_the_model_and_no_tokens():
    bare = {k: v for k, v in OPENAI.items() if k != "usage"}
    judge = make_judge_from_provider(
        OpenAIProvider(
            "gpt-4o-mini", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=bare))
        )
    )
    try:
        verdict = judged_by(judge, "Names the order number.")("Order A-1042 ships today.")
    finally:
        judge.close()
    record = verdict_record("judged", None, verdict)
    assert record.judge_model == "gpt-4o-mini"
    assert "judge_tokens" not in json.loads(json.dumps(_as_dict(record)))


def test_an_in_process_judge_records_no_usage():
    verdict = judged_by(lambda prompt: "Fine.\nPASS", "Polite.")("Thank you.")
    record = _as_dict(verdict_record("judged", None, verdict))
    assert "judge_tokens" not in record and "judge_model" not in record


def _as_dict(record):
    from evalstats.results._records import to_record

    return to_record(record)


def test_a_bad_judge_tokens_field_is_named_by_the_reader():
    record = sample("x", "a", 0, checks=[dict(check("passed", "j"), judge_tokens={"input": -1})])
    assert sample_problem(record) == (
        'checks[0]: "judge_tokens"={\'input\': -1} must be an object {"input": n, "output": n}'
    )
