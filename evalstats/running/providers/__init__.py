"""Model providers over httpx: OpenAI-compatible servers, Ollama, Anthropic, Gemini.

Each provider is a :class:`~evalstats.running._tasks.Task`: it sends one chat request
per sample and returns the answer, any tool calls, the token usage and the
model identity the service reported. No vendor SDKs; one
:class:`httpx.AsyncClient` per run. :mod:`evalstats.running.providers._base` says how
settings, seeds, errors and secrets are handled.

* :data:`PROVIDERS` maps a kind (``"openai"``, ``"ollama"``, ``"anthropic"``,
  ``"gemini"``) to its class.
* :func:`make_provider` builds one from text settings, as a variant spec
  gives them (``temperature=0.2``, ``max_tokens=1024``, ``context=8192``,
  ``base_url=...``).
* :func:`make_judge_from_provider` turns a provider into a judge for
  :func:`evalstats.running._judge.judged_by`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from ..._validate import suggest
from ...errors import InvalidArgument
from ._anthropic import AnthropicProvider
from ._base import Completion, Provider
from ._gemini import GeminiProvider
from ._ollama import OllamaProvider
from ._openai import OpenAIProvider

__all__ = [
    "PROVIDERS",
    "AnthropicProvider",
    "Completion",
    "GeminiProvider",
    "OllamaProvider",
    "OpenAIProvider",
    "Provider",
    "ProviderJudge",
    "make_judge_from_provider",
    "make_provider",
    "provider_from_name",
    "task_factory",
]

#: Provider classes by kind, the part of a task name before the first colon.
PROVIDERS: dict[str, type[Provider]] = {
    "openai": OpenAIProvider,
    "ollama": OllamaProvider,
    "anthropic": AnthropicProvider,
    "gemini": GeminiProvider,
}


def make_provider(
    kind: str, model: str, settings: Mapping[str, str] | None = None, **options: Any
) -> Provider:
    """A provider of ``kind`` for ``model``, with settings given as text.

    Parameters
    ----------
    kind : str
        One of :data:`PROVIDERS`.
    model : str
        The model name the service knows (for Ollama it may hold a colon,
        as in ``qwen3:0.6b``).
    settings : mapping of str to str, optional
        ``base_url`` and the generation settings, as written in a variant
        spec: numbers as text (``temperature=0.2``, ``max_tokens=1024``,
        ``context=8192``), ``seed=none`` to send no seed, ``stop=TEXT`` for
        one stop sequence. Values that are not text are taken as they are.
        ``max_reply_bytes`` (``32MiB``) is not sent: it is the most a reply
        body may hold (8 MiB unless set; see :class:`Provider`).
    **options
        Passed to the provider class (``tools=``, ``timeout=``, ``transport=``).

    Returns
    -------
    Provider

    Raises
    ------
    InvalidArgument
        For an unknown kind or setting (with the closest name suggested), a
        value that does not parse or is out of range, or a missing API key
        (naming the environment variable).

    Examples
    --------
    >>> p = make_provider("ollama", "qwen3:0.6b",
    ...                   {"temperature": "0.2", "context": "8192", "base_url": "127.0.0.1:11434"})
    >>> p.describe()
    {'kind': 'ollama', 'model': 'qwen3:0.6b', 'base_url': 'http://127.0.0.1:11434', \
'settings': {'context': 8192, 'temperature': 0.2}}
    >>> make_provider("olama", "qwen3:0.6b")
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: unknown provider 'olama' (did you mean 'ollama'?); \
choose one of anthropic, gemini, ollama, openai
    """
    if not isinstance(kind, str) or kind not in PROVIDERS:
        raise InvalidArgument(
            f"unknown provider {kind!r}{suggest(str(kind), PROVIDERS)}; "
            f"choose one of {', '.join(sorted(PROVIDERS))}"
        )
    settings = dict(settings or {})
    base_url = settings.pop("base_url", None)
    if base_url is not None and (not isinstance(base_url, str) or not base_url.strip()):
        raise InvalidArgument(f"{kind}: base_url={base_url!r} must be a URL")
    if "max_reply_bytes" in settings:
        options["max_reply_bytes"] = settings.pop("max_reply_bytes")
    return PROVIDERS[kind](model, settings=settings, base_url=base_url, **options)


def provider_from_name(
    name: str, settings: Mapping[str, str] | None = None, **options: Any
) -> Provider:
    """A provider from a task name ``KIND:MODEL`` such as ``ollama:qwen3:0.6b``.

    The kind is the part before the first colon, so model names may hold
    colons. ``settings`` and ``options`` are as for :func:`make_provider`.

    Examples
    --------
    >>> provider_from_name("ollama:qwen3:0.6b", {"context": "8192"}).describe()["model"]
    'qwen3:0.6b'
    """
    if not isinstance(name, str) or ":" not in name:
        raise InvalidArgument(
            f"task name {name!r} must be KIND:MODEL with KIND one of {', '.join(sorted(PROVIDERS))}"
        )
    kind, _, model = name.partition(":")
    return make_provider(kind.strip(), model, settings, **options)


def task_factory(kind: str) -> Any:
    """A ``TASK_KINDS`` entry: ``factory(model) -> Provider`` with no settings."""
    if kind not in PROVIDERS:
        raise InvalidArgument(f"unknown provider {kind!r}{suggest(str(kind), PROVIDERS)}")

    def factory(model: str) -> Provider:
        return make_provider(kind, model)

    factory.__name__ = f"{kind}_task"
    return factory


class ProviderJudge:
    """A judge (``prompt -> text``) that asks a provider; made by :func:`make_judge_from_provider`.

    Calls may come from any thread, with or without a running event loop:
    each one is sent on the judge's own event loop in a background thread,
    so all calls share one HTTP client and its connections.
    :class:`~evalstats.errors.TransientProviderError` and
    :class:`~evalstats.errors.ProviderError` pass through to the caller.
    :meth:`complete` gives the whole completion, with the tokens the provider
    read from its reply's usage: a judged check records them.
    """

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever,
                    name=f"evalstats-judge-{self.provider.kind}",
                    daemon=True,
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def complete(self, prompt: str) -> Completion:
        """The provider's whole :class:`Completion` for ``prompt``."""
        if not isinstance(prompt, str):
            raise InvalidArgument(f"a judge prompt must be text, not {type(prompt).__name__}")
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(self.provider.complete(prompt), loop)
        return future.result()

    def __call__(self, prompt: str) -> str:
        return self.complete(prompt).answer

    @property
    def model(self) -> str:
        """The model the judge asks for (the name a prices file prices its calls by)."""
        return str(getattr(self.provider, "model", ""))

    def check(self) -> None:
        """Raise :class:`~evalstats.errors.ProviderError` when nothing answers at the
        judge's base URL (the check a variant's provider makes before a run), so
        that a run with a dead judge stops at its start in one line instead of
        finishing with every judged verdict unmeasured. A slow answer passes:
        the samples' own calls are retried."""
        import contextlib

        from ...errors import TransientProviderError

        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(self.provider._check_endpoint(), loop)
        with contextlib.suppress(TransientProviderError):
            future.result()

    def close(self) -> None:
        """Close the HTTP client and stop the background loop."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self.provider.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()

    def __repr__(self) -> str:
        return f"ProviderJudge({self.provider!r})"


def make_judge_from_provider(provider: Provider) -> ProviderJudge:
    """A judge for :func:`evalstats.running._judge.judged_by` that asks ``provider``.

    The judge is a plain callable ``prompt -> text``: it sends the prompt as
    one user message with the provider's settings (no per-sample seed: a
    ``seed`` setting is sent if there is one) and returns the answer text.
    It works on a copy of ``provider`` with its own HTTP client, so the same
    provider can also be a task in a run. Transient failures raise
    :class:`~evalstats.errors.TransientProviderError`, which the engine
    retries and, in the end, records as a check unmeasured for the judge.

    Examples
    --------
    >>> import httpx
    >>> from evalstats.running._judge import judged_by
    >>> def service(request):
    ...     return httpx.Response(200, json={"model": "judge-1", "choices": [
    ...         {"message": {"role": "assistant", "content": "It names the order.\\nPASS"}}]})
    >>> provider = OpenAIProvider("judge-1", base_url="http://127.0.0.1:9/v1",
    ...                           transport=httpx.MockTransport(service))
    >>> judge = make_judge_from_provider(provider)
    >>> judged_by(judge, "Names the order number.")("Order A-1042 ships today.").status
    'passed'
    >>> judge.close()
    """
    if not isinstance(provider, Provider):
        raise InvalidArgument(
            f"provider must be a Provider (see make_provider), not {type(provider).__name__}"
        )
    return ProviderJudge(provider.fresh_copy())
