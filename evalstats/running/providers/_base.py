"""What every model provider shares: settings, one HTTP client per run, errors.

A provider is a :class:`~evalstats.running._tasks.Task` that sends one chat request
per sample to a model service over httpx and returns the answer text, any
structured tool calls, the token usage and the model identity the service
reported. The subclasses (:mod:`.openai`, :mod:`.ollama`, :mod:`.anthropic`,
:mod:`.gemini`) only translate to and from their wire format; everything
else lives here:

* **Settings.** Generation settings use one vocabulary for every provider
  (``temperature``, ``max_tokens``, ``top_p``, ``seed``, ``stop`` and, for
  Ollama, ``context``); each provider maps them to its own field names. An
  unknown name is an :class:`~evalstats.errors.InvalidArgument` that lists the
  known ones and suggests the closest.
* **Seeds.** With no ``seed`` setting, each request carries the per-sample
  seed the engine passes to :meth:`Provider.run` (reduced modulo 2**31, since
  Gemini takes a 32-bit seed), so a run can be repeated and the repeats of a
  case still differ from each other. ``seed=N`` sends N with every request
  (repeats then agree wherever the service honours seeds, which defeats
  repeating) and ``seed=None`` (``seed=none`` in a variant spec) sends none.
  Anthropic's API has no seed and sends none.
* **One client pool per run.** An :class:`httpx.AsyncClient` is made on
  first use, with explicit timeouts and a keep-alive connection pool shared
  by every sample. Under concurrency, requests are spread over up to
  :data:`CLIENT_SHARDS` clients (a new one only when all are busy), because
  one httpcore pool's bookkeeping grows with its connections. The clients
  belong to the event loop they were made in, and a later run on a new loop
  gets new ones. :meth:`Provider.aclose` closes them.
* **Errors.** HTTP 429, 408 and 5xx (Anthropic's 529 included), dropped
  connections and timeouts raise
  :class:`~evalstats.errors.TransientProviderError`, with ``retry_after`` read
  from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date). Any
  other 4xx raises :class:`~evalstats.errors.ProviderError` with one line:
  the provider, the status, the URL (credentials and query removed) and the
  service's own message from its documented error body. 408 (request timeout)
  counts as transient because it is a timeout, not a bad request. A 3xx is
  never taken as the answer, whatever its body: redirects are not followed,
  and one raises :class:`~evalstats.errors.ProviderError` naming where it
  points.
* **Bounds.** Nothing a server does can hold a request longer than the
  provider's ``timeout`` or make it hold more than ``max_reply_bytes`` of
  body: every reply is streamed through one bounded reader
  (:mod:`evalstats.running.providers._body`), and one deadline covers the whole
  exchange, connection, headers and body, so a trickle of one byte a second
  ends at the timeout. A body too large, too slow or in a coding not asked for
  raises :class:`~evalstats.errors.TransientProviderError`: the service gave no
  answer (the engine records the sample as unmeasured after its retries), not
  a wrong one. The check before a run reads only a reply's status line and
  headers, within :data:`ENDPOINT_CHECK_S` seconds. How long a service may ask
  to wait before a retry (``retry_after``) is the engine's to bound, since it
  knows the run's timeout.
* **Secrets.** Keys come from environment variables only, are sent in headers
  only, and are scrubbed from every error message: the key itself, any value
  of an environment variable whose name ends in ``_API_KEY`` or ``_TOKEN``,
  and any word that looks like a masked copy of the key (services such as
  OpenAI echo ``sk-abc***wxyz``). A base URL that holds a user name or
  password (which httpx would send as Basic credentials, where an echoing
  server puts them in the answer), a query or fragment, or a control
  character is refused with one line.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import email.utils
import json
import math
import os
import re
import time
import unicodedata
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from ..._validate import suggest
from ...errors import InvalidArgument, ProviderError, TransientProviderError
from ...results._recordable import NOTES_KEY, recordable
from ._body import (
    ACCEPT_ENCODING,
    DEFAULT_MAX_REPLY_BYTES,
    ReplyTooLarge,
    ReplyUnreadable,
    byte_size,
    read_body,
)

__all__ = [
    "Completion",
    "Provider",
    "normalise_tools",
    "retry_after_seconds",
    "scrub",
]

#: The seed sent to a service is reduced modulo this (Gemini's seed is an int32).
SEED_MODULUS = 2**31

#: Requests are spread over at most this many ``httpx.AsyncClient`` pools. The
#: httpcore pool walks every connection it holds on each request and release
#: (encode/httpcore pull requests 924 and 1035), so many requests in flight on
#: one pool spend milliseconds of CPU per request on bookkeeping; smaller
#: pools do not (``benchmarks/http_throughput.py`` measures it with CLIENT_SHARDS set).
CLIENT_SHARDS = 32

#: How much of a service's error message an error line keeps.
MESSAGE_LIMIT = 300

#: Seconds (at most; less when the provider's timeout is shorter) the check
#: before a run waits for the status line and headers of its GET.
ENDPOINT_CHECK_S = 10.0

#: Every setting any provider knows, with what it means, for error messages.
SETTING_HELP = {
    "temperature": "sampling temperature, a number >= 0",
    "max_tokens": "the most tokens to generate, a whole number >= 1",
    "top_p": "nucleus sampling, a number in (0, 1]",
    "seed": "a whole number sent with every request, or None to send none",
    "stop": "a stop sequence or a list of them",
    "context": "the context window in tokens (Ollama's num_ctx), a whole number >= 1",
    "format": "json to ask for a JSON object (OpenAI response_format json_object, Ollama format)",
}


@dataclass(frozen=True)
class Completion:
    """One answer from a model service, in the same shape for every provider.

    ``answer`` is the text (the text parts joined; ``""`` when there were
    none), ``tool_calls`` a list of ``{"id", "name", "arguments": dict}``,
    ``tokens`` ``{"input": n, "output": n}`` (either may be None when the
    service did not say), ``model`` the identity the service reported,
    ``stop_reason`` the service's own reason for stopping, ``request`` the
    request body without the conversation and tool definitions (the model and
    the settings exactly as sent, in the service's field names) and
    ``settings`` the same settings in evalstats' names. ``notes`` say what of
    the service's answer was rewritten so that JSON can hold it (a lone
    surrogate as its escape, NaN as ``"NaN"``: see :mod:`evalstats.results._recordable`);
    the answer and calls are exactly what is recorded and sent back.
    """

    answer: str
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    tokens: Mapping[str, int | None] | None = None
    model: str | None = None
    stop_reason: str | None = None
    request: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def trace(self) -> dict[str, Any]:
        """The JSON-ready trace a :class:`~evalstats.running._tasks.TaskResult` carries."""
        trace: dict[str, Any] = {
            "request": dict(self.request),
            "settings": dict(self.settings),
            "tool_calls": [dict(c) for c in self.tool_calls],
            "stop_reason": self.stop_reason,
        }
        if self.notes:
            trace[NOTES_KEY] = list(self.notes)
        return trace


# --- secrets -------------------------------------------------------------------


def _secret_values(extra: Sequence[str | None] = ()) -> list[str]:
    values = [v for v in extra if v]
    for name, value in os.environ.items():
        if name.endswith(("_API_KEY", "_TOKEN")) and len(value) >= 8:
            values.append(value)
    # A key also travels as base64 (Basic auth made from a URL's user:password).
    values += [base64.b64encode(v.encode()).decode() for v in values if len(v) >= 8]
    # Longest first, so a key that contains another is removed whole.
    return sorted(set(values), key=len, reverse=True)


def url_secrets(url: str) -> list[str]:
    """The password of a URL's userinfo and the Basic credentials made from it.

    Examples
    --------
    >>> url_secrets("http://me:hunter2-secret@localhost:8080/v1")
    ['hunter2-secret', 'me:hunter2-secret', 'bWU6aHVudGVyMi1zZWNyZXQ=']
    >>> url_secrets("http://localhost:8080")
    []
    """
    try:
        parts = urllib.parse.urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    if not password:
        return []
    pair = f"{urllib.parse.unquote(user or '')}:{urllib.parse.unquote(password)}"
    return [urllib.parse.unquote(password), pair, base64.b64encode(pair.encode()).decode()]


def scrub(text: str, secrets: Sequence[str | None] = ()) -> str:
    """``text`` with every secret in it replaced by ``[redacted]``.

    The secrets are ``secrets`` and the values of the environment variables
    whose names end in ``_API_KEY`` or ``_TOKEN``. A word that starts with the
    first six characters of a secret or ends with its last four (a masked
    echo such as ``sk-abc1***wxyz``) is redacted too.

    Examples
    --------
    >>> scrub("Incorrect API key provided: sk-abc1***wxyz.", ["sk-abc1234567wxyz"])
    'Incorrect API key provided: [redacted].'
    """
    values = _secret_values(secrets)
    for value in values:
        # In any case: an echo may upper- or lower-case what it was sent.
        text = re.sub(re.escape(value), "[redacted]", text, flags=re.IGNORECASE)

    def masked(match: re.Match[str]) -> str:
        word = match.group(0)
        for value in values:
            if len(value) >= 10 and (word.startswith(value[:6]) or word.endswith(value[-4:])):
                return "[redacted]"
        return word

    if values:
        text = re.sub(r"[^\s.,;:'\"()\[\]{}]{8,}", masked, text)
    return text


def _shown_url(url: str) -> str:
    """A URL that cannot be parsed, cut and without what looks like credentials.

    Examples
    --------
    >>> _shown_url("http://me:pw@host/v1"), _shown_url("me:pw@host:11434")
    ('http://***@host/v1', '***@host:11434')
    """
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    authority, tail = re.match(r"([^/?#]*)(.*)", rest, re.DOTALL).groups()  # type: ignore[union-attr]
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    return (scheme + sep + authority + tail)[:120]


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment: safe to show and record.

    Examples
    --------
    >>> public_url("https://user:pw@host.example/v1?key=abc")
    'https://host.example/v1'
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# --- Retry-After ---------------------------------------------------------------


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The delay a response asks for before a retry, in seconds, or None.

    ``retry-after-ms`` (milliseconds, sent by OpenAI) wins over
    ``Retry-After``, which holds either seconds or an HTTP date (RFC 9110,
    section 10.2.3). A date in the past gives 0; an unreadable value gives None.

    Examples
    --------
    >>> retry_after_seconds({"Retry-After": "7"})
    7.0
    >>> retry_after_seconds({"retry-after-ms": "1500", "Retry-After": "2"})
    1.5
    >>> retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
    ...                     now=1445412470.0)
    10.0
    """
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms)
        except ValueError:
            ms = math.nan
        if math.isfinite(ms) and ms >= 0:
            return ms / 1000.0
    raw = lower.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
        return max(0.0, seconds)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


# --- tools ---------------------------------------------------------------------


def normalise_tools(tools: Any) -> tuple[dict[str, Any], ...]:
    """Tool definitions as ``({"name", "description", "parameters"}, ...)``.

    Each tool is a mapping with a ``name``, an optional ``description`` and an
    optional ``parameters`` JSON schema (default: an object with no
    properties). OpenAI's ``{"type": "function", "function": {...}}`` form is
    accepted too. Each provider turns these into its own format.
    """
    if tools is None:
        return ()
    if isinstance(tools, Mapping | str | bytes):
        raise InvalidArgument("tools must be a list of tool definitions")
    out = []
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidArgument(f"tools[{i}]={tool!r} must be a mapping with a 'name'")
        if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
            tool = tool["function"]
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"tools[{i}] has no 'name'")
        if name in names:
            raise InvalidArgument(f"tools[{i}]: the name {name!r} is used twice")
        names.add(name)
        unknown = set(tool) - {"name", "description", "parameters"}
        if unknown:
            bad = sorted(unknown)[0]
            raise InvalidArgument(
                f"tools[{i}] ({name}): unknown field {bad!r}"
                f"{suggest(bad, ['name', 'description', 'parameters'])}"
            )
        parameters = tool.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(parameters, Mapping):
            raise InvalidArgument(f"tools[{i}] ({name}): parameters must be a JSON schema object")
        out.append(
            {
                "name": name,
                "description": str(tool.get("description") or ""),
                "parameters": json.loads(json.dumps(parameters)),
            }
        )
    return tuple(out)


def token_count(value: Any) -> int | None:
    """``value`` if it is a whole number of tokens, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def tool_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: a JSON object or its text (OpenAI sends text).

    Arguments that are not a JSON object become ``{"_unparsed": raw}`` so the
    call is still recorded and a check can say what was wrong with it.
    """
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"_unparsed": raw}
        if isinstance(value, dict):
            return value
    return {"_unparsed": raw}


def tool_call(index: int, call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """One tool call from an answer as ``{"id", "name", "arguments": dict}``.

    A call without an id (Ollama's never have one, Gemini's often) is given
    ``call_{index}``, ``index`` its position among the answer's calls.
    """
    return {
        "id": str(call_id or f"call_{index}"),
        "name": str(name),
        "arguments": tool_arguments(arguments),
    }


def function_calls(raw: Any) -> tuple[dict[str, Any], ...]:
    """Tool calls sent as ``[{"id", "function": {"name", "arguments"}}, ...]``.

    OpenAI's Chat Completions and Ollama's ``/api/chat`` both answer in this
    form (Ollama without ids, with arguments as an object rather than JSON
    text).
    """
    calls = []
    for i, call in enumerate(raw or ()):
        function = call.get("function") or {}
        calls.append(
            tool_call(i, call.get("id"), function.get("name", ""), function.get("arguments"))
        )
    return tuple(calls)


# --- settings ------------------------------------------------------------------


def _as_float(kind: str, name: str, value: Any, low: float, high: float, open_low: bool) -> float:
    if isinstance(value, bool):
        raise InvalidArgument(f"{kind}: {name}={value!r} must be a number")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise InvalidArgument(f"{kind}: {name}={value!r} must be a number") from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidArgument(f"{kind}: {name}={value!r} must be a finite number")
    value = float(value)
    if value < low or value > high or (open_low and value == low):
        bounds = f"{'(' if open_low else '['}{low:g}, {high:g}]"
        raise InvalidArgument(f"{kind}: {name}={value!r} must be in {bounds}")
    return value


def _as_int(kind: str, name: str, value: Any, low: int) -> int:
    if isinstance(value, bool):
        raise InvalidArgument(f"{kind}: {name}={value!r} must be a whole number")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InvalidArgument(f"{kind}: {name}={value!r} must be a whole number") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise InvalidArgument(f"{kind}: {name}={value!r} must be a whole number")
    if value < low:
        raise InvalidArgument(f"{kind}: {name}={value!r} must be at least {low}")
    return value


def check_setting(kind: str, name: str, value: Any) -> Any:
    """``value`` checked (and, from a string, converted) for the setting ``name``."""
    if name == "temperature":
        return _as_float(kind, name, value, 0.0, 2.0, False)
    if name == "top_p":
        return _as_float(kind, name, value, 0.0, 1.0, True)
    if name in ("max_tokens", "context"):
        return _as_int(kind, name, value, 1)
    if name == "seed":
        if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
            return None
        return _as_int(kind, name, value, 0)
    if name == "stop":
        if isinstance(value, str):
            if not value:
                raise InvalidArgument(f"{kind}: stop={value!r} must not be empty")
            return (value,)
        if isinstance(value, Sequence) and value and all(isinstance(s, str) and s for s in value):
            return tuple(value)
        raise InvalidArgument(f"{kind}: stop={value!r} must be a string or a list of strings")
    if name == "format":
        if value != "json":
            raise InvalidArgument(f"{kind}: format={value!r} must be json (a JSON object reply)")
        return value
    raise AssertionError(name)  # pragma: no cover - callers check the name first


# --- the provider ----------------------------------------------------------------


class Provider:
    """A model service reached over HTTP; implements the engine's ``Task``.

    Subclasses set :attr:`kind`, :attr:`settings_known`, :attr:`key_env` (the
    environment variable holding the key, or None), :attr:`default_base_url`
    and implement :meth:`_request` (build the body), :meth:`_settings_sent`
    (read the settings back out of it), :meth:`_parse` (read the response)
    and :meth:`_error_message` (read an error body).

    Parameters
    ----------
    model : str
        The model name the service knows.
    settings : mapping, optional
        Generation settings in evalstats' names (see :data:`SETTING_HELP`);
        the ones a provider does not support are rejected.
    base_url : str, optional
        Where the service is; overrides the provider's default and its
        environment variable.
    tools : list of mappings, optional
        Tool definitions ``{"name", "description", "parameters"}`` sent with
        every request.
    timeout : float
        Seconds one request may take, from connecting (at most 10 s of it) to
        the last byte of the reply.
    transport : httpx.AsyncBaseTransport, optional
        For tests: an ``httpx.MockTransport``.
    max_reply_bytes : int or str
        The most bytes a reply body may hold once decoded (default
        :data:`~evalstats.running.providers._body.DEFAULT_MAX_REPLY_BYTES`, 8 MiB),
        a whole number or text such as ``32MiB``, from 1 KiB to 1 GiB. A
        larger reply is not read on: the request fails as transient.
    """

    kind: ClassVar[str] = "provider"
    settings_known: ClassVar[tuple[str, ...]] = ()
    key_env: ClassVar[str | None] = None
    base_url_env: ClassVar[str | None] = None
    default_base_url: ClassVar[str] = ""
    #: Whether the service takes a seed (the per-sample seed is sent by default).
    takes_seed: ClassVar[bool] = True
    #: The highest temperature the service accepts.
    temperature_max: ClassVar[float] = 2.0

    def __init__(
        self,
        model: str,
        *,
        settings: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        tools: Any = None,
        timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
        max_reply_bytes: int | str = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidArgument(f"{self.kind}: model={model!r} must be a model name")
        self.model = model.strip()
        self.settings = self._check_settings(settings or {})
        self.base_url = self._resolve_base_url(base_url)
        self.tools = normalise_tools(tools)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not (math.isfinite(timeout) and timeout > 0)
        ):
            raise InvalidArgument(
                f"{self.kind}: timeout={timeout!r} must be a finite number of seconds > 0"
            )
        self.timeout = float(timeout)
        self.max_reply_bytes = byte_size(f"{self.kind}: max_reply_bytes", max_reply_bytes)
        self._transport = transport
        self._api_key = self._read_key()
        self._ssl_context: Any = None
        self._reset_clients()

    # -- construction helpers

    def _check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(settings, Mapping):
            raise InvalidArgument(f"{self.kind}: settings must be a mapping of name to value")
        out: dict[str, Any] = {}
        known = self.settings_known
        for name, value in settings.items():
            if name not in known:
                hint = suggest(str(name), known)
                extra = ""
                if name in SETTING_HELP and not hint:
                    extra = f" ({self.kind} does not take it)"
                raise InvalidArgument(
                    f"{self.kind}: unknown setting {name!r}{hint}{extra}; "
                    f"known settings: {', '.join(known)}"
                )
            out[name] = check_setting(self.kind, name, value)
            if name == "temperature" and out[name] > self.temperature_max:
                raise InvalidArgument(
                    f"{self.kind}: temperature={out[name]!r} must be in "
                    f"[0, {self.temperature_max:g}]"
                )
        return out

    def _resolve_base_url(self, base_url: str | None) -> str:
        env = os.environ.get(self.base_url_env, "").strip() if self.base_url_env else ""
        name = "base_url"
        if base_url:
            url = str(base_url)
        elif env:
            name, url = str(self.base_url_env), env
        else:
            url = self.default_base_url
        url = url.strip()
        self._check_url_text(name, url)
        url = self._normalise_base_url(url)
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port  # raises for a port out of 0-65535
        except ValueError as exc:
            raise InvalidArgument(
                f"{self.kind}: {name}={_shown_url(url)!r} is not a valid URL: {exc}"
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
            raise InvalidArgument(
                f"{self.kind}: {name}={public_url(url)!r} must be an http:// or https:// URL"
            )
        return url.rstrip("/")

    def _check_url_text(self, name: str, url: str) -> None:
        """Refuse a base URL with a control character, credentials, a query or a fragment.

        Credentials in a URL would go out as Basic auth on every request, where
        a server that echoes its request puts them into the recorded answer;
        keys come from environment variables and travel in headers only.
        """
        for char in url:
            if char.isspace() or unicodedata.category(char) in ("Cc", "Cf"):
                raise InvalidArgument(
                    f"{self.kind}: {name}={_shown_url(url)!r} holds the character "
                    f"U+{ord(char):04X}; a URL is one line with no spaces or control characters"
                )
        rest = url.split("://", 1)[1] if "://" in url else url
        authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
        if "@" in authority:
            where = f"; put the key in {self.key_env}" if self.key_env else ""
            raise InvalidArgument(
                f"{self.kind}: {name}={_shown_url(url)!r} holds a user name or password; "
                f"evalstats takes no credentials from a URL{where}"
            )
        if "?" in url or "#" in url:
            shown = re.split(r"[?#]", url, maxsplit=1)[0][:120]
            raise InvalidArgument(
                f"{self.kind}: {name}={shown + '?...'!r} holds a query or fragment; give the "
                "service's base URL only (a key goes in an environment variable)"
            )

    def _normalise_base_url(self, url: str) -> str:
        return url

    def _read_key(self) -> str | None:
        if self.key_env is None:
            return None
        key = os.environ.get(self.key_env, "").strip()
        if not key and self._key_required():
            raise InvalidArgument(
                f"{self.kind}: no API key: set the environment variable {self.key_env}"
            )
        if key and not (key.isascii() and key.isprintable()):
            # An HTTP header cannot carry it: every request would fail, and every
            # sample would be incomplete while the run "finished".
            raise InvalidArgument(
                f"{self.kind}: the API key in {self.key_env} holds a character that is not "
                "printable ASCII (a pasted space, a control character, a typographic quote?)"
            )
        return key or None

    def _key_required(self) -> bool:
        # A key is needed only by the provider's own service: a local or
        # self-hosted server at another base_url usually takes none.
        default_host = urllib.parse.urlsplit(self.default_base_url).hostname
        return urllib.parse.urlsplit(self.base_url).hostname == default_host

    # -- the Task protocol

    def describe(self) -> dict[str, Any]:
        """The provider for the manifest: kind, model, base URL, settings; never a key."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "model": self.model,
            "base_url": public_url(self.base_url),
            "settings": _jsonable(self.settings),
        }
        if self.tools:
            out["tools"] = [t["name"] for t in self.tools]
        if self.max_reply_bytes != DEFAULT_MAX_REPLY_BYTES:
            out["max_reply_bytes"] = self.max_reply_bytes
        return out

    async def prepare(self) -> None:
        """Called once per run before the first sample; fetches facts for :meth:`describe`.

        The base class checks that something answers at the base URL, so that a
        run against a dead endpoint stops at once with one line naming the URL,
        instead of retrying every sample and recording them all as unmeasured.
        """
        await self._check_endpoint()

    async def _check_endpoint(self) -> None:
        """Raise :class:`ProviderError` when nothing listens at the base URL.

        Any HTTP answer at all (a 404 for the bare base URL, a 401, a redirect)
        shows a server is there; only a refused connection, an unknown host or
        a URL no client can use fails. Only the status line and headers are
        read, within :data:`ENDPOINT_CHECK_S` seconds (or the provider's
        timeout, if shorter); the body is never read. A time-out is transient:
        the engine retries it.
        """
        where = self._where("")
        client = self.client()
        limit = min(self.timeout, ENDPOINT_CHECK_S)
        try:
            async with asyncio.timeout(limit):
                response = await client.send(client.build_request("GET", ""), stream=True)
                await response.aclose()
        except (TimeoutError, httpx.TimeoutException):
            raise TransientProviderError(
                f"{self.kind}: no answer from {where} within {limit:g} s"
            ) from None
        except (httpx.ConnectError, httpx.UnsupportedProtocol) as exc:
            detail = self._scrub(str(exc)) or type(exc).__name__
            raise ProviderError(
                f"{self.kind}: nothing answers at {where} ({detail}); "
                "is the server running and the base URL right?"
            ) from None
        except httpx.RequestError:
            # Something is there but spoke no clean HTTP to a bare GET; the
            # samples' own requests will say more.
            return

    async def run(self, prompt: Any, *, seed: int) -> Any:
        """Send ``prompt`` and return an :class:`~evalstats.running._tasks.TaskResult`."""
        from .._tasks import TaskResult

        done = await self.complete(prompt, seed=seed)
        return TaskResult(
            answer=done.answer, trace=done.trace(), tokens=done.tokens, model=done.model
        )

    async def complete(self, prompt: Any, *, seed: int | None = None) -> Completion:
        """Send one request for ``prompt`` and read the answer.

        ``prompt`` is an :class:`~evalstats.running._tasks.Prompt` (or anything with
        ``messages`` and ``system``), a list of messages, or a plain string
        sent as one user message. Messages may include tool turns in the
        neutral form :func:`conversation` describes. Raises
        :class:`~evalstats.errors.TransientProviderError` or
        :class:`~evalstats.errors.ProviderError` as the module docstring says.
        """
        method, path, body, settings_sent = self.prepared(prompt, seed=seed)
        data = await self._send(method, path, body)
        return self.completed(path, body, settings_sent, data)

    def prepared(
        self, prompt: Any, *, seed: int | None = None
    ) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
        """``(method, path, body, settings_sent)``: the request :meth:`complete` would send
        for ``prompt`` (a batch sends the same body), its settings checked."""
        system, messages = conversation(prompt)
        sent_seed = self._seed_to_send(seed)
        method, path, body = self._request(system, messages, sent_seed)
        settings_sent = self._settings_sent(body)
        self._verify_sent(settings_sent, sent_seed)
        return method, path, body, settings_sent

    def completed(
        self, path: str, body: Mapping[str, Any], settings_sent: Mapping[str, Any], data: Any
    ) -> Completion:
        """The :class:`Completion` of the reply ``data`` to the request ``body`` sent to
        ``path``, as :meth:`complete` returns it."""
        try:
            done = self._parse(data)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            # A response in a shape the API reference does not describe: the
            # server is not what the base URL promised, so say so and stop.
            raise ProviderError(
                f"{self.kind}: could not read the response from {self._where(path)} "
                f"({type(exc).__name__}: {self._scrub(str(exc))[:120]}); is the base URL right?"
            ) from None
        request = {k: v for k, v in body.items() if k not in self._conversation_fields}
        # Whatever the service sent must be recordable and sendable back (httpx
        # refuses NaN and cannot encode a lone surrogate): rewrite it visibly.
        answer, notes = recordable(done.answer, "answer")
        calls, more = recordable(list(done.tool_calls), "tool_calls")
        notes += more
        model, more = recordable(done.model, "model")
        notes += more
        stop_reason, more = recordable(done.stop_reason, "stop_reason")
        notes += more
        return Completion(
            answer=answer,
            tool_calls=tuple(calls),
            tokens=done.tokens,
            model=model,
            stop_reason=stop_reason,
            request=request,
            settings=dict(settings_sent),
            notes=tuple(notes),
        )

    async def aclose(self) -> None:
        """Close the HTTP clients (a later request makes new ones)."""
        clients = self._clients
        self._reset_clients()
        for client in clients:
            await client.aclose()

    def fresh_copy(self) -> Provider:
        """A copy with the same model and settings and no HTTP client of its own yet."""
        twin = copy.copy(self)
        twin._reset_clients()
        return twin

    async def __aenter__(self) -> Provider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={public_url(self.base_url)!r})"
        )

    # -- for subclasses

    #: Body fields that hold the conversation or tools, left out of the recorded request.
    _conversation_fields: ClassVar[frozenset[str]] = frozenset(
        {"messages", "system", "contents", "systemInstruction", "tools"}
    )

    def _request(
        self, system: str | None, messages: list[dict[str, Any]], seed: int | None
    ) -> tuple[str, str, dict[str, Any]]:
        raise NotImplementedError

    def _settings_sent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _parse(self, data: Any) -> Completion:
        raise NotImplementedError

    def _error_message(self, data: Any) -> str | None:
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        return {}

    def _retry_after_from_body(self, data: Any) -> float | None:
        return None

    # -- shared machinery

    def _wire_settings(self, fields: Mapping[str, str], seed: int | None) -> dict[str, Any]:
        """The settings in ``fields`` (evalstats' name -> the service's field), in its order.

        ``seed`` is the seed to send (None: none) rather than the setting, and
        ``stop`` is sent as a list.
        """
        out: dict[str, Any] = {}
        for name, wire in fields.items():
            if name == "seed":
                if seed is not None:
                    out[wire] = seed
            elif name in self.settings:
                value = self.settings[name]
                out[wire] = list(value) if name == "stop" else value
        return out

    def _seed_to_send(self, seed: int | None) -> int | None:
        if not self.takes_seed:
            return None
        if "seed" in self.settings:
            return self.settings["seed"]
        if seed is None:
            return None
        return int(seed) % SEED_MODULUS

    def _verify_sent(self, sent: Mapping[str, Any], seed: int | None) -> None:
        asked = dict(self.settings)
        if self.takes_seed:
            asked["seed"] = seed
        for name, value in asked.items():
            if value is None and name not in sent:
                continue
            got = sent.get(name)
            if isinstance(value, tuple):
                got = tuple(got) if isinstance(got, list | tuple) else got
            if got != value:
                raise ProviderError(
                    f"{self.kind}: the request would send {name}={got!r} but {value!r} was "
                    "asked for; not sending it"
                )

    def _reset_clients(self) -> None:
        self._urls: dict[str, httpx.URL] = {}
        self._clients: list[httpx.AsyncClient] = []
        self._in_flight: list[int] = []
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _new_client(self) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        transport = self._transport
        if transport is None and self.base_url[:7].lower() == "http://":
            # A plain-HTTP service (a local model server): connections on
            # asyncio's own transports, a request in one write (see _plainhttp).
            from ._plainhttp import PlainHTTPTransport

            transport = PlainHTTPTransport(limits=limits)
        elif self._ssl_context is None and transport is None:
            # One TLS context for all the clients: each would otherwise load the
            # CA bundle again (about 20 ms), once per client pool of every run.
            self._ssl_context = httpx.create_ssl_context()
        return httpx.AsyncClient(
            base_url=self.base_url,
            # Only the codings the bounded reader decodes (httpx would add br
            # and zstd when their packages are installed).
            headers={"Accept-Encoding": ACCEPT_ENCODING, **self._headers()},
            verify=self._ssl_context if self._ssl_context is not None else True,
            timeout=httpx.Timeout(self.timeout, connect=min(10.0, self.timeout), pool=None),
            limits=limits,
            transport=transport,
            follow_redirects=False,
        )

    def _check_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._client_loop is not loop:
            # A new run (event loop): the old clients belong to a loop that is gone.
            self._reset_clients()
            self._client_loop = loop

    def _pick_client(self) -> int:
        """The index of the client for the next request, made if needed.

        Requests go to the client with the fewest in flight; a new client is
        made only when every existing one is busy, up to :data:`CLIENT_SHARDS`.
        Sequential requests therefore share one client and one connection.
        """
        self._check_loop()
        if self._clients:
            index = min(range(len(self._clients)), key=self._in_flight.__getitem__)
            if self._clients[index].is_closed:
                # Closed by hand (``aclose`` forgets its clients): start afresh,
                # without scanning every client before every request.
                self._reset_clients()
                self._client_loop = asyncio.get_running_loop()
            elif self._in_flight[index] == 0 or len(self._clients) >= CLIENT_SHARDS:
                return index
        self._clients.append(self._new_client())
        self._in_flight.append(0)
        return len(self._clients) - 1

    def client(self) -> httpx.AsyncClient:
        """The run's first HTTP client, made on first use in the running event loop."""
        self._check_loop()
        if not self._clients or self._clients[0].is_closed:
            self._pick_client()
        return self._clients[0]

    def _where(self, path: str) -> str:
        return public_url(self.base_url + path)

    def _url(self, client: httpx.AsyncClient, path: str) -> httpx.URL:
        """``path`` joined to the base URL as httpx joins it, once per path.

        Every client of a run has the same base URL; a request given the
        whole URL is not parsed and joined again (about 0.07 ms a request).
        """
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = client.build_request("GET", path).url
        return url

    async def _send(self, method: str, path: str, body: Any = None) -> Any:
        """Send one request and return the JSON of its reply, read within the bounds.

        One deadline, the provider's ``timeout``, covers the whole exchange,
        and the body is read by :func:`~evalstats.running.providers._body.read_body`
        up to ``max_reply_bytes``; a 3xx is refused unread.
        """
        index = self._pick_client()
        client = self._clients[index]
        url = self._url(client, path)
        self._in_flight[index] += 1
        response: httpx.Response | None = None
        try:
            async with asyncio.timeout(self.timeout):
                if method == "GET":
                    request = client.build_request("GET", url)
                else:
                    request = client.build_request("POST", url, json=body)
                response = await client.send(request, stream=True)
                try:
                    status = response.status_code
                    if 300 <= status < 400:
                        self._raise_for_redirect(status, response, path)
                    try:
                        raw: bytes | None = await read_body(response, self.max_reply_bytes)
                    except (ReplyTooLarge, ReplyUnreadable):
                        if status < 400:
                            raise
                        raw = None  # an error all the same: its status says which
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.TimeoutException) as exc:
            where = self._where(path)
            if response is None:
                what = f"no answer from {where}"
            else:
                what = f"the reply from {where} did not end"
            # httpx's own time-outs name their phase; the deadline is the whole exchange's.
            kind = type(exc).__name__ if isinstance(exc, httpx.TimeoutException) else None
            raise TransientProviderError(
                f"{self.kind}: {what} within the time allowed ({kind or f'{self.timeout:g} s'})"
            ) from None
        except httpx.RequestError as exc:
            detail = self._scrub(str(exc)) or "no detail"
            where = self._where(path)
            raise TransientProviderError(
                f"{self.kind}: could not reach {where}: {type(exc).__name__}: {detail}"
            ) from None
        except (ReplyTooLarge, ReplyUnreadable) as exc:
            raise TransientProviderError(
                f"{self.kind}: HTTP {status} from {self._where(path)} is no answer: {exc}"
            ) from None
        finally:
            if index < len(self._clients) and self._clients[index] is client:
                self._in_flight[index] -= 1
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = None
        except RecursionError:
            raise TransientProviderError(
                f"{self.kind}: HTTP {status} from {self._where(path)} is no answer: its JSON "
                "is nested too deeply to read"
            ) from None
        if status >= 400:
            self._raise_for(status, response, raw, data, self._where(path))
        if data is None:
            where = self._where(path)
            text = self._scrub(" ".join(_text_of(response, raw).split()))[:120]
            raise ProviderError(
                f"{self.kind}: HTTP {status} from {where} is not JSON"
                f"{': ' + text if text else ''}; is the base URL right?"
            )
        return data

    def _raise_for_redirect(self, status: int, response: httpx.Response, path: str) -> None:
        """A redirect is never the answer: say where it points, and stop."""
        location = response.headers.get("location", "")
        try:
            shown = public_url(str(response.url.join(location))) if location else ""
        except (ValueError, httpx.InvalidURL):
            shown = _shown_url(location)
        phrase = response.reason_phrase or ""
        target = f"to {self._scrub(shown)[:120]!r}" if shown else "elsewhere"
        raise ProviderError(
            f"{self.kind}: HTTP {status}{' ' + phrase if phrase else ''} from "
            f"{self._where(path)} redirects {target}; evalstats does not follow redirects: "
            "set base_url to where the service answers"
        )

    def _raise_for(
        self, status: int, response: httpx.Response, raw: bytes | None, data: Any, where: str
    ) -> None:
        message = None
        if data is not None:
            try:
                message = self._error_message(data)
            except Exception:  # a body in another shape: fall back to the raw text
                message = None
        if not message:
            if raw is None:
                message = "(a body too large to read)"
            else:
                message = _text_of(response, raw) if data is None else json.dumps(data)
        message = self._scrub(" ".join(str(message).split()))
        if len(message) > MESSAGE_LIMIT:
            message = message[: MESSAGE_LIMIT - 1].rstrip() + "\u2026"
        phrase = response.reason_phrase or ""
        line = f"{self.kind}: HTTP {status}{' ' + phrase if phrase else ''} from {where}"
        if message:
            line += f": {message}"
        if status in (408, 429) or status >= 500:
            retry_after = retry_after_seconds(response.headers)
            if retry_after is None and data is not None:
                retry_after = self._retry_after_from_body(data)
            raise TransientProviderError(line, retry_after=retry_after)
        if "seed" in message.lower() and self.takes_seed and "seed" not in self.settings:
            # The seed was evalstats' per-sample default, not the user's choice.
            line += " (evalstats sent a per-sample seed; add the setting seed=none to send none)"
        raise ProviderError(line)

    def _scrub(self, text: str) -> str:
        return scrub(text, [self._api_key, *url_secrets(self.base_url)])


def _text_of(response: httpx.Response, raw: bytes | None) -> str:
    """A reply body as text, in its declared charset when Python knows it."""
    if not raw:
        return ""
    try:
        return raw.decode(response.charset_encoding or "utf-8", errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def _jsonable(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(settings.items())}


def conversation(prompt: Any) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` from a Prompt-like object, a list of messages or a string.

    ``messages`` keeps every non-system message in order, in evalstats'
    neutral form, which each provider maps to its own wire format:

    * ``{"role": "user" | "assistant", "content": str}``;
    * an assistant turn that called tools,
      ``{"role": "assistant", "content": str | None, "tool_calls": [{"id",
      "name", "arguments": dict}, ...]}``;
    * a tool's result, ``{"role": "tool", "tool_call_id": str, "name": str,
      "content": str}``. Other fields (an evalstats trace's ``"error"`` flag)
      are dropped: they are never sent.

    The system text is the content of the system messages (joined by a blank
    line), or ``prompt.system`` when there are none.

    Examples
    --------
    >>> conversation([{"role": "user", "content": "Which notes are there?"},
    ...               {"role": "assistant", "content": None, "tool_calls": [
    ...                   {"id": "c1", "name": "list_notes", "arguments": {}}]},
    ...               {"role": "tool", "tool_call_id": "c1", "name": "list_notes",
    ...                "content": "notes.txt", "error": False}])[1][2]
    {'role': 'tool', 'tool_call_id': 'c1', 'name': 'list_notes', 'content': 'notes.txt'}
    """
    if isinstance(prompt, str):
        return None, [{"role": "user", "content": prompt}]
    if isinstance(prompt, list | tuple):
        raw: Any = prompt
        prompt = None
    else:
        raw = getattr(prompt, "messages", None)
    if raw is None:
        text = getattr(prompt, "text", None)
        if not isinstance(text, str):
            raise InvalidArgument(
                f"a prompt must be text or have messages, not {type(prompt).__name__}"
            )
        raw = ({"role": "user", "content": text},)
    system_parts: list[str] = []
    messages: list[dict[str, Any]] = []
    for i, message in enumerate(raw):
        if not isinstance(message, Mapping):
            raise InvalidArgument(f"messages[{i}]={message!r} must be a mapping")
        role = message.get("role")
        content = message.get("content")
        if role == "assistant" and message.get("tool_calls"):
            messages.append(_assistant_with_calls(i, content, message["tool_calls"]))
            continue
        if role == "tool":
            messages.append(_tool_result(i, message))
            continue
        if role not in ("system", "user", "assistant") or not isinstance(content, str):
            raise InvalidArgument(
                f"messages[{i}] must have a role of system, user or assistant and text "
                "content (or be an assistant turn with tool_calls, or a tool result)"
            )
        if role == "system":
            system_parts.append(content)
        else:
            messages.append({"role": role, "content": content})
    system = "\n\n".join(system_parts) if system_parts else getattr(prompt, "system", None)
    if not messages:
        raise InvalidArgument("a prompt needs at least one user message")
    return system, messages


def _assistant_with_calls(i: int, content: Any, calls: Any) -> dict[str, Any]:
    if content is not None and not isinstance(content, str):
        raise InvalidArgument(f"messages[{i}]: an assistant turn's content must be text or None")
    if isinstance(calls, Mapping | str | bytes) or not isinstance(calls, Sequence):
        raise InvalidArgument(f"messages[{i}]: tool_calls must be a list of calls")
    out = []
    for j, call in enumerate(calls):
        where = f"messages[{i}].tool_calls[{j}]"
        if not isinstance(call, Mapping):
            raise InvalidArgument(f"{where}={call!r} must be a mapping")
        call_id, name, arguments = call.get("id"), call.get("name"), call.get("arguments", {})
        if not isinstance(call_id, str) or not call_id:
            raise InvalidArgument(f"{where}: id={call_id!r} must be a non-empty string")
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"{where}: name={name!r} must be a tool name")
        if not isinstance(arguments, Mapping):
            raise InvalidArgument(f"{where}: arguments={arguments!r} must be a mapping")
        out.append({"id": call_id, "name": name, "arguments": dict(arguments)})
    return {"role": "assistant", "content": content, "tool_calls": out}


def _tool_result(i: int, message: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool"}
    for key in ("tool_call_id", "name", "content"):
        value = message.get(key)
        if not isinstance(value, str) or (key != "content" and not value):
            raise InvalidArgument(
                f"messages[{i}]: a tool result needs {key} as text, not {value!r}"
            )
        out[key] = value
    return out
