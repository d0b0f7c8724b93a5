"""Chat completions against any OpenAI-compatible server.

OpenAI itself, vLLM, the llama.cpp server, LM Studio, OpenRouter and the
evalstats stand-in server all speak ``POST {base_url}/chat/completions``.
The base URL is ``https://api.openai.com/v1`` unless ``OPENAI_BASE_URL`` or
the ``base_url`` argument says otherwise. The key is read from
``OPENAI_API_KEY`` and sent as ``Authorization: Bearer``; it is required only
for api.openai.com (local servers usually take none).

Settings map one to one: ``temperature``, ``max_tokens``, ``top_p``,
``seed``, ``stop``. (OpenAI's newest reasoning models want
``max_completion_tokens`` instead of ``max_tokens``; they reject the request
with a 400 that names the field. A server that rejects ``seed`` is told
none with the setting ``seed=none``.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import ProviderError, TransientProviderError
from ._base import Completion, Provider, function_calls, token_count

__all__ = ["OpenAIProvider"]

_SETTINGS = ("temperature", "max_tokens", "top_p", "seed", "stop", "format")
# The body's field for each setting: the same names (format is response_format).
_FIELDS = {name: name for name in _SETTINGS if name != "format"}
_JSON_FORMAT = {"type": "json_object"}


class OpenAIProvider(Provider):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    See :class:`~evalstats.running.providers._base.Provider` for the arguments.

    Examples
    --------
    >>> import httpx
    >>> def service(request):
    ...     return httpx.Response(200, json={
    ...         "model": "gpt-4o-mini-2024-07-18",
    ...         "choices": [{"index": 0, "finish_reason": "stop",
    ...                      "message": {"role": "assistant", "content": "Hello."}}],
    ...         "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}})
    >>> p = OpenAIProvider("gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
    ...                    transport=httpx.MockTransport(service))
    >>> import asyncio
    >>> done = asyncio.run(p.complete("Say hello.", seed=1))
    >>> done.answer, done.tokens, done.model
    ('Hello.', {'input': 9, 'output': 2}, 'gpt-4o-mini-2024-07-18')
    """

    kind: ClassVar[str] = "openai"
    settings_known: ClassVar[tuple[str, ...]] = _SETTINGS
    key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    base_url_env: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _request(
        self, system: str | None, messages: list[dict[str, Any]], seed: int | None
    ) -> tuple[str, str, dict[str, Any]]:
        chat = [{"role": "system", "content": system}] if system is not None else []
        chat += [_wire_message(m) for m in messages]
        body: dict[str, Any] = {"model": self.model, "messages": chat}
        body.update(self._wire_settings(_FIELDS, seed))
        if self.settings.get("format") == "json":
            body["response_format"] = _JSON_FORMAT
        if self.tools:
            body["tools"] = [{"type": "function", "function": dict(t)} for t in self.tools]
        return "POST", "/chat/completions", body

    def _settings_sent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        sent = {name: body[name] for name in _FIELDS if name in body}
        if body.get("response_format") == _JSON_FORMAT:
            sent["format"] = "json"
        return sent

    def _parse(self, data: Any) -> Completion:
        if not isinstance(data, Mapping):
            raise ProviderError(f"openai: the response is not a JSON object: {str(data)[:80]}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            # Some gateways (OpenRouter) answer 200 with an error object when the
            # upstream model failed; its code says whether a retry may help.
            error_text = self._error_message(data) if "error" in data else None
            if error_text:
                error = data["error"]
                code = error.get("code") if isinstance(error, Mapping) else None
                line = self._scrub(f"openai: the service answered with an error: {error_text}")
                if isinstance(code, int) and (code in (408, 429) or code >= 500):
                    raise TransientProviderError(line)
                raise ProviderError(line)
            raise ProviderError("openai: the response has no choices")
        choice = choices[0]
        message = choice.get("message") or {}
        content = message.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(
                str(part.get("text", "")) for part in content if isinstance(part, Mapping)
            )
        usage = data.get("usage") or {}
        return Completion(
            answer=content if isinstance(content, str) else "",
            tool_calls=function_calls(message.get("tool_calls")),
            tokens={
                "input": token_count(usage.get("prompt_tokens")),
                "output": token_count(usage.get("completion_tokens")),
            },
            model=data.get("model") if isinstance(data.get("model"), str) else None,
            stop_reason=choice.get("finish_reason"),
        )

    def _error_message(self, data: Any) -> str | None:
        # {"error": {"message", "type", "code"}} (OpenAI); vLLM puts the same
        # fields at the top level; some servers send {"error": "text"} or {"detail": ...}.
        error = data.get("error") if isinstance(data, Mapping) else None
        if isinstance(error, str):
            return error
        source = error if isinstance(error, Mapping) else data
        if not isinstance(source, Mapping):
            return None
        message = source.get("message") or source.get("detail")
        if not message:
            return None
        labels = [str(source[k]) for k in ("type", "code") if source.get(k) not in (None, "")]
        return f"{message}" + (f" ({', '.join(labels)})" if labels else "")


def _wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A neutral message in the Chat Completions format.

    An assistant turn's calls become ``{"id", "type": "function", "function":
    {"name", "arguments": JSON text}}`` and a tool result becomes ``{"role":
    "tool", "tool_call_id", "content"}`` (OpenAI API reference, "Create chat
    completion", messages).
    """
    if message["role"] == "tool":
        return {
            "role": "tool",
            "tool_call_id": message["tool_call_id"],
            "content": message["content"],
        }
    if "tool_calls" in message:
        return {
            "role": "assistant",
            "content": message["content"],
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                    },
                }
                for call in message["tool_calls"]
            ],
        }
    return {"role": message["role"], "content": message["content"]}
