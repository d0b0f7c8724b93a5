"""Google's Gemini API: ``POST .../v1beta/models/{model}:generateContent``.

The key is read from ``GEMINI_API_KEY`` and sent in the ``x-goog-api-key``
header, never in the URL (some examples put it in a ``?key=`` query, where it
would end up in logs and error messages); it is required only for Google's
own host, not for a local ``base_url``. The conversation becomes
``contents`` with the roles ``user`` and ``model``, the system prompt
``systemInstruction``, and the settings ``generationConfig``:
``temperature``, ``maxOutputTokens`` (from ``max_tokens``), ``topP``,
``seed`` and ``stopSequences``. Tools are sent as ``functionDeclarations``
and ``functionCall`` parts in the answer become tool calls. The reported
model identity is the response's ``modelVersion``.

A prompt the service blocks comes back with no candidates; the answer is
then empty (so the sample counts as incomplete) and the stop reason says
``blocked: REASON``. A 429's ``RetryInfo`` detail gives the retry delay when
there is no ``Retry-After`` header.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import ProviderError
from ._base import Completion, Provider, token_count, tool_call

__all__ = ["GeminiProvider"]

_SETTINGS = ("temperature", "max_tokens", "top_p", "seed", "stop")
# evalstats' name -> generationConfig field
_CONFIG = {
    "temperature": "temperature",
    "max_tokens": "maxOutputTokens",
    "top_p": "topP",
    "seed": "seed",
    "stop": "stopSequences",
}


class GeminiProvider(Provider):
    """A Gemini model behind ``generateContent``.

    See :class:`~evalstats.running.providers._base.Provider` for the arguments; the
    model may be given as ``gemini-2.0-flash`` or ``models/gemini-2.0-flash``.
    """

    kind: ClassVar[str] = "gemini"
    settings_known: ClassVar[tuple[str, ...]] = _SETTINGS
    key_env: ClassVar[str | None] = "GEMINI_API_KEY"
    base_url_env: ClassVar[str | None] = None
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com/v1beta"

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._api_key} if self._api_key else {}

    def _path(self) -> str:
        name = (
            self.model
            if self.model.startswith(("models/", "tunedModels/"))
            else (f"models/{self.model}")
        )
        return "/" + urllib.parse.quote(name, safe="/-_.") + ":generateContent"

    def _request(
        self, system: str | None, messages: list[dict[str, Any]], seed: int | None
    ) -> tuple[str, str, dict[str, Any]]:
        body: dict[str, Any] = {"contents": _wire_contents(messages)}
        if system is not None:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        body["generationConfig"] = self._wire_settings(_CONFIG, seed)
        if self.tools:
            body["tools"] = [{"functionDeclarations": [dict(t) for t in self.tools]}]
        return "POST", self._path(), body

    def _settings_sent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        config = body.get("generationConfig") or {}
        return {name: config[f] for name, f in _CONFIG.items() if f in config}

    def _parse(self, data: Any) -> Completion:
        if not isinstance(data, Mapping):
            raise ProviderError("gemini: the response is not a JSON object")
        usage = data.get("usageMetadata") or {}
        tokens = {
            "input": token_count(usage.get("promptTokenCount")),
            "output": token_count(usage.get("candidatesTokenCount")),
        }
        model = data.get("modelVersion") if isinstance(data.get("modelVersion"), str) else None
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = data.get("promptFeedback") or {}
            reason = feedback.get("blockReason") if isinstance(feedback, Mapping) else None
            if reason is None:
                raise ProviderError("gemini: the response has no candidates")
            return Completion(
                answer="", tokens=tokens, model=model, stop_reason=f"blocked: {reason}"
            )
        candidate = candidates[0]
        content = candidate.get("content") or {}
        texts = []
        calls: list[dict[str, Any]] = []
        for part in content.get("parts") or ():
            if not isinstance(part, Mapping):
                continue
            if isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
            call = part.get("functionCall")
            if isinstance(call, Mapping):
                calls.append(
                    tool_call(len(calls), call.get("id"), call.get("name", ""), call.get("args"))
                )
        return Completion(
            answer="".join(texts),
            tool_calls=tuple(calls),
            tokens=tokens,
            model=model,
            stop_reason=candidate.get("finishReason"),
        )

    def _error_message(self, data: Any) -> str | None:
        # {"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT"}}
        error = data.get("error") if isinstance(data, Mapping) else None
        if not isinstance(error, Mapping) or not error.get("message"):
            return None
        status = error.get("status")
        return f"{error['message']}" + (f" ({status})" if status else "")

    def _retry_after_from_body(self, data: Any) -> float | None:
        # google.rpc.RetryInfo: {"@type": ".../google.rpc.RetryInfo", "retryDelay": "28s"}
        error = data.get("error") if isinstance(data, Mapping) else None
        details = error.get("details") if isinstance(error, Mapping) else None
        for detail in details or ():
            if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("RetryInfo"):
                match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s\s*", str(detail.get("retryDelay", "")))
                if match:
                    return float(match.group(1))
        return None


def _wire_contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages as ``contents`` with the roles ``user`` and ``model``.

    An assistant turn's calls become ``functionCall`` parts (``{"name",
    "args"}``) after its text, if any; the tool results that follow become
    ``functionResponse`` parts (``{"name", "response": {"content": text}}``)
    in one ``user`` turn, in the order of the calls (Gemini API docs,
    "Function calling"; ``FunctionResponse.response`` must be a JSON object).
    Call ids are not sent: the ids evalstats records for Gemini calls that
    came without one are its own.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            part = {
                "functionResponse": {
                    "name": message["name"],
                    "response": {"content": message["content"]},
                }
            }
            if out and out[-1]["role"] == "user" and "functionResponse" in out[-1]["parts"][-1]:
                out[-1]["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
        elif role == "assistant" and "tool_calls" in message:
            parts: list[dict[str, Any]] = []
            if message["content"]:
                parts.append({"text": message["content"]})
            parts += [
                {"functionCall": {"name": call["name"], "args": dict(call["arguments"])}}
                for call in message["tool_calls"]
            ]
            out.append({"role": "model", "parts": parts})
        else:
            out.append(
                {
                    "role": "model" if role == "assistant" else "user",
                    "parts": [{"text": message["content"]}],
                }
            )
    return out
