"""Anthropic's Messages API: ``POST https://api.anthropic.com/v1/messages``.

The key is read from ``ANTHROPIC_API_KEY`` and sent as ``x-api-key`` with
``anthropic-version: 2023-06-01``; ``ANTHROPIC_BASE_URL`` or the
``base_url`` argument moves the host, and the key is then required only if
the host is still api.anthropic.com (a local proxy usually takes none). The
system prompt is the top-level ``system`` field and the conversation holds
only user and assistant turns.
``max_tokens`` is required by the API: without the setting, 1024 is sent (and
recorded). ``stop`` becomes ``stop_sequences``; the API has no seed, so none
is sent, and its temperature runs from 0 to 1. Tool definitions are sent as
``{"name", "description", "input_schema"}`` and ``tool_use`` blocks in the
answer become tool calls. A 529 (overloaded) is transient like any 5xx.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import ProviderError
from ._base import Completion, Provider, token_count, tool_call

__all__ = ["AnthropicProvider"]

#: The API version every request names.
ANTHROPIC_VERSION = "2023-06-01"

#: ``max_tokens`` sent when the variant does not set it (the API requires one).
DEFAULT_MAX_TOKENS = 1024

_SETTINGS = ("temperature", "max_tokens", "top_p", "stop")
# evalstats' name -> the body's field
_FIELDS = {
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "top_p": "top_p",
    "stop": "stop_sequences",
}


class AnthropicProvider(Provider):
    """A Claude model behind Anthropic's Messages API.

    See :class:`~evalstats.running.providers._base.Provider` for the arguments.
    """

    kind: ClassVar[str] = "anthropic"
    settings_known: ClassVar[tuple[str, ...]] = _SETTINGS
    key_env: ClassVar[str | None] = "ANTHROPIC_API_KEY"
    base_url_env: ClassVar[str | None] = "ANTHROPIC_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    takes_seed: ClassVar[bool] = False
    temperature_max: ClassVar[float] = 1.0

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _request(
        self, system: str | None, messages: list[dict[str, Any]], seed: int | None
    ) -> tuple[str, str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.settings.get("max_tokens", DEFAULT_MAX_TOKENS),
            "messages": _wire_messages(messages),
        }
        if system is not None:
            body["system"] = system
        body.update(self._wire_settings(_FIELDS, None))
        if self.tools:
            body["tools"] = [
                {
                    "name": t["name"],
                    "description": t["description"],
                    "input_schema": t["parameters"],
                }
                for t in self.tools
            ]
        return "POST", "/v1/messages", body

    def _settings_sent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {name: body[f] for name, f in _FIELDS.items() if f in body}

    def _parse(self, data: Any) -> Completion:
        if not isinstance(data, Mapping) or not isinstance(data.get("content"), list):
            raise ProviderError("anthropic: the response has no content")
        texts = []
        calls: list[dict[str, Any]] = []
        for block in data["content"]:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                name = block.get("name", "")
                calls.append(tool_call(len(calls), block.get("id"), name, block.get("input")))
        usage = data.get("usage") or {}
        return Completion(
            answer="".join(texts),
            tool_calls=tuple(calls),
            tokens={
                "input": token_count(usage.get("input_tokens")),
                "output": token_count(usage.get("output_tokens")),
            },
            model=data.get("model") if isinstance(data.get("model"), str) else None,
            stop_reason=data.get("stop_reason"),
        )

    def _error_message(self, data: Any) -> str | None:
        # {"type": "error", "error": {"type": "invalid_request_error", "message": "..."}}
        error = data.get("error") if isinstance(data, Mapping) else None
        if not isinstance(error, Mapping) or not error.get("message"):
            return None
        kind = error.get("type")
        return f"{error['message']}" + (f" ({kind})" if kind else "")


def _wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages in the Messages API format.

    An assistant turn's calls become ``tool_use`` content blocks (``{"type":
    "tool_use", "id", "name", "input"}``) after its text, if any; tool results
    become ``tool_result`` blocks (``{"type": "tool_result", "tool_use_id",
    "content"}``) in a user turn, the results of one assistant turn together
    in one user turn, and a user message that follows them joins that turn as
    a text block, since the roles must alternate (Anthropic docs, "Tool use":
    handling tool_use and tool_result content blocks).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant" and "tool_calls" in message:
            blocks: list[dict[str, Any]] = []
            if message["content"]:
                blocks.append({"type": "text", "text": message["content"]})
            blocks += [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["name"],
                    "input": dict(call["arguments"]),
                }
                for call in message["tool_calls"]
            ]
            out.append({"role": "assistant", "content": blocks})
        elif (
            role == "user"
            and out
            and out[-1]["role"] == "user"
            and isinstance(out[-1]["content"], list)
        ):
            out[-1]["content"].append({"type": "text", "text": message["content"]})
        else:
            out.append({"role": role, "content": message["content"]})
    return out
