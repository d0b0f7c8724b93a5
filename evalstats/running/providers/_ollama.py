"""Ollama's native chat API: ``POST {host}/api/chat``.

The host is ``http://127.0.0.1:11434`` unless ``OLLAMA_HOST`` or the
``base_url`` argument says otherwise. ``OLLAMA_HOST`` is read the way Ollama
reads it: the scheme is optional (``http`` by default), the port defaults to
11434 without a scheme (80 or 443 with one), and the listen-everywhere
address ``0.0.0.0`` means this machine (``127.0.0.1``).

Every request has ``"stream": false`` and ``"think": false`` (a thinking
model otherwise spends the token budget on hidden reasoning), and the
settings go in ``options``: ``temperature``, ``num_ctx`` (from ``context``),
``num_predict`` (from ``max_tokens``), ``seed``, ``top_p`` and ``stop``.

:meth:`OllamaProvider.prepare` asks the server which model it will run:
``/api/show`` for the model's details, ``/api/tags`` for its digest and
``/api/version`` for the server's version, and :meth:`describe` then
includes them, so the manifest names the exact weights.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import ProviderError
from ._base import Completion, Provider, function_calls, token_count

__all__ = ["OllamaProvider", "ollama_host"]

_SETTINGS = ("temperature", "max_tokens", "top_p", "seed", "stop", "context", "format")
# evalstats' name -> Ollama's option name
_OPTIONS = {
    "temperature": "temperature",
    "context": "num_ctx",
    "max_tokens": "num_predict",
    "seed": "seed",
    "top_p": "top_p",
    "stop": "stop",
}


def ollama_host(value: str) -> str:
    """The base URL an ``OLLAMA_HOST`` value stands for.

    Examples
    --------
    >>> ollama_host("127.0.0.1:11434")
    'http://127.0.0.1:11434'
    >>> ollama_host("0.0.0.0")
    'http://127.0.0.1:11434'
    >>> ollama_host("https://ollama.example")
    'https://ollama.example:443'
    >>> ollama_host("http://[::1]:8080/")
    'http://[::1]:8080'
    """
    value = value.strip()
    scheme, sep, rest = value.partition("://")
    if not sep:
        scheme, rest, port = "http", value, "11434"
    else:
        scheme = scheme.lower()
        port = {"http": "80", "https": "443"}.get(scheme, "11434")
    hostport, _, path = rest.partition("/")
    parts = urllib.parse.urlsplit(f"//{hostport}")
    try:
        explicit_port = parts.port
    except ValueError:
        explicit_port = None
    host = parts.hostname or ""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    port = str(explicit_port) if explicit_port is not None else port
    tail = f"/{path}".rstrip("/") if path else ""
    return f"{scheme}://{host}:{port}{tail}"


class OllamaProvider(Provider):
    """A model served by Ollama's ``/api/chat``.

    See :class:`~evalstats.running.providers._base.Provider` for the arguments; Ollama
    also takes the ``context`` setting (``num_ctx``) and needs no key.
    """

    kind: ClassVar[str] = "ollama"
    settings_known: ClassVar[tuple[str, ...]] = _SETTINGS
    key_env: ClassVar[str | None] = None
    base_url_env: ClassVar[str | None] = "OLLAMA_HOST"
    default_base_url: ClassVar[str] = "http://127.0.0.1:11434"

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.facts: dict[str, Any] = {}

    def _normalise_base_url(self, url: str) -> str:
        return ollama_host(url)

    def describe(self) -> dict[str, Any]:
        """Kind, model, host and settings; after :meth:`prepare`, digest and server version."""
        out = super().describe()
        out.update(self.facts)
        return out

    async def prepare(self) -> None:
        """Ask the server for the model's details and digest and its own version.

        A model the server does not have is a
        :class:`~evalstats.errors.ProviderError` (HTTP 404) here, before the
        run starts.
        """
        show = await self._send("POST", "/api/show", {"model": self.model})
        tags = await self._send("GET", "/api/tags")
        version = await self._send("GET", "/api/version")
        facts: dict[str, Any] = {}
        digest = show.get("digest") if isinstance(show, Mapping) else None
        if not digest:
            digest = _digest_from_tags(tags, self.model)
        facts["digest"] = digest
        details = show.get("details") if isinstance(show, Mapping) else None
        if isinstance(details, Mapping):
            facts["details"] = {
                k: details[k]
                for k in ("family", "parameter_size", "quantization_level", "format")
                if k in details
            }
        facts["server_version"] = version.get("version") if isinstance(version, Mapping) else None
        self.facts = facts

    def _request(
        self, system: str | None, messages: list[dict[str, Any]], seed: int | None
    ) -> tuple[str, str, dict[str, Any]]:
        chat = [{"role": "system", "content": system}] if system is not None else []
        chat += [_wire_message(m) for m in messages]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": chat,
            "stream": False,
            "think": False,
            "options": self._wire_settings(_OPTIONS, seed),
        }
        if self.settings.get("format") == "json":
            body["format"] = "json"
        if self.tools:
            body["tools"] = [{"type": "function", "function": dict(t)} for t in self.tools]
        return "POST", "/api/chat", body

    def _settings_sent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        options = body.get("options") or {}
        sent = {name: options[option] for name, option in _OPTIONS.items() if option in options}
        if body.get("format") == "json":
            sent["format"] = "json"
        return sent

    def _parse(self, data: Any) -> Completion:
        if not isinstance(data, Mapping) or not isinstance(data.get("message"), Mapping):
            raise ProviderError("ollama: the response has no message")
        message = data["message"]
        content = message.get("content")
        return Completion(
            answer=content if isinstance(content, str) else "",
            tool_calls=function_calls(message.get("tool_calls")),
            tokens={
                "input": token_count(data.get("prompt_eval_count")),
                "output": token_count(data.get("eval_count")),
            },
            model=data.get("model") if isinstance(data.get("model"), str) else None,
            stop_reason=data.get("done_reason"),
        )

    def _error_message(self, data: Any) -> str | None:
        # {"error": "model \"x\" not found, try pulling it first"}
        error = data.get("error") if isinstance(data, Mapping) else None
        return error if isinstance(error, str) else None


def _wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A neutral message in the ``/api/chat`` format.

    Ollama's calls carry no id and their arguments are an object
    (``{"function": {"name", "arguments": {...}}}``); a tool result is
    ``{"role": "tool", "content", "tool_name"}`` (Ollama docs/api.md,
    "Generate a chat completion": the ``tool_calls`` and ``tool_name`` fields
    of a message). Results are matched to calls by order.
    """
    if message["role"] == "tool":
        return {"role": "tool", "content": message["content"], "tool_name": message["name"]}
    if "tool_calls" in message:
        return {
            "role": "assistant",
            "content": message["content"] or "",
            "tool_calls": [
                {"function": {"name": call["name"], "arguments": dict(call["arguments"])}}
                for call in message["tool_calls"]
            ],
        }
    return {"role": message["role"], "content": message["content"]}


def _digest_from_tags(tags: Any, model: str) -> str | None:
    names = {model} if ":" in model.rsplit("/", 1)[-1] else {model, f"{model}:latest"}
    models = tags.get("models") if isinstance(tags, Mapping) else None
    for entry in models or ():
        if isinstance(entry, Mapping) and (
            entry.get("name") in names or entry.get("model") in names
        ):
            digest = entry.get("digest")
            return digest if isinstance(digest, str) else None
    return None
