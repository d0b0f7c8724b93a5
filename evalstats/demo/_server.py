"""The shop stand-ins served over HTTP, in the wire formats of OpenAI and Ollama.

:func:`serve` starts a small HTTP server on the loopback interface whose models
``shop-v1`` and ``shop-v2`` are the offline shop assistants of
:func:`evalstats.demo._shop.make_assistant` (true pass rates 0.70 and 0.90 on
the shop suite). A provider that talks to a real model over HTTP can talk to
this server instead, so the whole path (requests, retries, timeouts, usage,
model identity) is exercised against a model whose true quality is known.

The model ``shop-judge`` (answered on the OpenAI routes and the batch
routes, not listed, so the listings stay those of the assistants) is the
offline stand-in judge of :func:`evalstats.demo._judge.make_judge` over HTTP:
it grades the answer inside a :func:`~evalstats.running._judge.judged_by`
prompt against the shop stand-ins' truth, passing a good answer with
probability 0.9 and failing a bad one with probability 0.9, drawn from the
request's seed and the prompt, so a judge request with a seed (``seed=N`` in
the judge's settings) gets the same verdict every time, batched or not.

The model ``notes`` is the tool-calling notes model of
:mod:`evalstats.demo._notes` (its behaviour rates set by a
:class:`~evalstats.demo._notes.NotesModel`, ``notes=`` here). It reads the
conversation with its tool turns, in either API's format (OpenAI assistant
``tool_calls`` with JSON-string arguments and ``role: "tool"`` results with a
``tool_call_id``; Ollama ``tool_calls`` with object arguments and
``role: "tool"`` results matched to calls in order), and the ``tools``
offered, and answers either with a final text or with one tool call:
OpenAI ``message.tool_calls`` and ``finish_reason: "tool_calls"``, Ollama
``message.tool_calls`` (no ids, object arguments). As the OpenAI API does, a
tool result that answers no preceding call, and a call left without a result,
are 400 errors on ``/v1/chat/completions``.

Routes
------
========================================  ==============================================
``POST /v1/chat/completions``             OpenAI chat completions (``stream`` as SSE too)
``GET /v1/models``, ``/v1/models/{id}``   the three models, in OpenAI's list format
``POST /api/chat``                        Ollama chat (``"stream": false``; streamed as
                                          NDJSON when ``stream`` is absent or true, as
                                          Ollama does)
``POST /api/show``, ``GET /api/tags``     model details, with a stable sha256 ``digest``
``GET /api/version``                      the server "version" (evalstats' own)
``GET /health``, ``GET /``                liveness
``/v1/files``, ``/v1/batches``            OpenAI's batch API; Anthropic's message batches
``/v1/messages/batches``, ``/v1beta/...`` and Gemini's batchGenerateContent (see
                                          :mod:`evalstats.demo._standin_batches`)
========================================  ==============================================

Each chat request gets a **fresh assistant**, seeded from the request's own
seed (OpenAI ``seed``, Ollama ``options.seed``) when it has one, otherwise from
the server's ``seed`` and the request's number, so requests are independent of
one another, and a request with a seed gets the same answer every time. The
answer is the assistant's reply to the last user message. Usage counts are
estimates in the shape real services report: about four characters a token,
plus a few tokens a message (the counting rule of OpenAI's cookbook, "How to
count tokens with tiktoken": 3 tokens per message and 3 to prime the reply).

Faults and load, drawn per chat request from a seeded generator under a lock
(four draws per request whatever happens, so one knob does not shift another):

* ``latency_ms``: a fixed delay, or ``(low, high)`` (``"low:high"`` on the
  command line) for a delay uniform between the two;
* ``error_rate``: the probability that a request fails, half of the failures
  with 429 and a ``Retry-After`` header of ``retry_after`` whole seconds (HTTP
  allows only whole seconds; 0 asks for an immediate retry), half with 500, each
  with the API's own error body;
* ``hang_rate`` and ``hang_s``: the probability that a request stalls for
  ``hang_s`` seconds more before it is answered, past a client's timeout.

Faults apply to the chat routes only. Malformed requests get 400 and unknown
models 404, with the API's error body, before any fault is drawn. Every
response carries ``Server-Timing: app;dur=MS``, the time the server spent on
it (the delays included), so clients can tell their own overhead apart.

Any ``Authorization`` header is accepted and ignored: the stand-ins need no
key. Request bodies need a ``Content-Length`` (411 otherwise) of at most
:data:`MAX_BODY_BYTES` (413 otherwise). The server binds loopback addresses
only and refuses any other host.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import math
import random
import signal
import socket
import socketserver
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, Any

from .._validate import as_rate
from ..errors import InvalidArgument
from ._notes import DEFAULT_NOTES_MODEL, NotesModel
from ._notes import respond as notes_respond
from ._shaping import (
    JSON_SLIP_RATES,
    Shape,
    ShapeError,
    cut,
    forced_call,
    json_answer,
    ollama_shape,
    openai_shape,
)
from ._shop import SLIP_RATES, make_assistant
from ._standin_batches import MAX_BATCH_BODY_BYTES, BatchKnobs, BatchService

__all__ = [
    "ALL_MODELS",
    "MAX_BODY_BYTES",
    "MODELS",
    "NOTES_MODEL",
    "StandinApp",
    "StandinReply",
    "StandinServer",
    "estimate_tokens",
    "model_digest",
    "parse_latency",
    "serve",
    "serve_until_signal",
]

#: The models the server answers as, and the shop assistant version behind each.
MODELS: dict[str, int] = {"shop-v1": 1, "shop-v2": 2}

#: The tool-calling notes model (:mod:`evalstats.demo._notes`).
NOTES_MODEL = "notes"

#: Every model the server answers as, in listing order.
ALL_MODELS: tuple[str, ...] = (*MODELS, NOTES_MODEL)

#: The stand-in judge over HTTP (answered, not listed): :func:`_judge_reply`.
JUDGE_MODEL = "shop-judge"

#: The largest request body the server reads (larger ones get 413).
MAX_BODY_BYTES = 16 * 2**20

# A fixed creation time (2025-01-01T00:00:00Z) so that listings are stable.
_MODELS_CREATED = 1_735_689_600
_MODIFIED_AT = "2025-01-01T00:00:00Z"


def model_digest(model: str, *, notes: NotesModel | None = None) -> str:
    """The stable sha256 digest the server reports for ``model``, as Ollama shows one.

    It is a hash of what makes the model what it is (the assistant's version
    and slip rate; for ``notes``, its behaviour knobs, ``notes`` or the
    defaults), so it changes only when the stand-in's behaviour does.

    Examples
    --------
    >>> model_digest("shop-v1") == model_digest("shop-v1")
    True
    >>> len(model_digest("shop-v2")), model_digest("shop-v1") != model_digest("shop-v2")
    (64, True)
    >>> model_digest("notes") != model_digest("notes", notes=NotesModel(p_read=0.6))
    True
    """
    if _base_name(model) == NOTES_MODEL:
        knobs = DEFAULT_NOTES_MODEL if notes is None else notes
        identity = f"evalstats.standin.notes:{knobs!r}"
        return hashlib.sha256(identity.encode()).hexdigest()
    if _base_name(model) == JUDGE_MODEL:
        identity = (
            f"evalstats.standin.judge:sensitivity={_JUDGE_RATE!r}:specificity={_JUDGE_RATE!r}"
        )
        return hashlib.sha256(identity.encode()).hexdigest()
    version = MODELS.get(_base_name(model))
    if version is None:
        raise InvalidArgument(f"model={model!r} is not a stand-in; choose one of {_model_list()}")
    identity = f"evalstats.standin.shop:version={version}:slip_rate={SLIP_RATES[version]!r}"
    return hashlib.sha256(identity.encode()).hexdigest()


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: one per four characters, rounded up.

    Four characters a token is the usual rule of thumb for English with the
    GPT tokenizers (OpenAI, "What are tokens and how to count them"); the
    stand-in has no tokenizer, and its usage figures only need to be realistic.

    Examples
    --------
    >>> estimate_tokens(""), estimate_tokens("Hi!"), estimate_tokens("Hello there")
    (0, 1, 3)
    """
    return math.ceil(len(text) / 4)


def _prompt_tokens(messages: list[tuple[str, str]]) -> int:
    # OpenAI cookbook, "How to count tokens with tiktoken": every message costs
    # 3 tokens plus its role and content; every reply is primed with 3 more.
    return 3 + sum(3 + estimate_tokens(role) + estimate_tokens(text) for role, text in messages)


def parse_latency(value: Any) -> tuple[float, float]:
    """Read a latency in milliseconds: a number (fixed) or a ``(low, high)`` range.

    Strings are read as the command line writes them: ``"20"`` is a fixed
    20 ms, ``"10:50"`` a delay uniform between 10 and 50 ms.

    Returns
    -------
    (low, high) : tuple of float
        Equal for a fixed latency.

    Examples
    --------
    >>> parse_latency(20), parse_latency("10:50"), parse_latency((0, 5))
    ((20.0, 20.0), (10.0, 50.0), (0.0, 5.0))
    """
    original = value
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) > 2 or not all(p.strip() for p in parts):
            raise InvalidArgument(
                f"latency_ms={original!r} must be milliseconds, like '20', or a range "
                "'low:high', like '10:50'"
            )
        value = tuple(parts) if len(parts) == 2 else parts[0]
    pair = value if isinstance(value, tuple | list) else (value, value)
    if len(pair) != 2:
        raise InvalidArgument(
            f"latency_ms={original!r} must be a number of milliseconds or a (low, high) pair"
        )
    bounds = []
    for v in pair:
        try:
            x = float(v)
        except (TypeError, ValueError):
            x = math.nan
        if isinstance(v, bool) or not math.isfinite(x) or x < 0:
            raise InvalidArgument(
                f"latency_ms={original!r} must be milliseconds, finite and at least 0"
            )
        bounds.append(x)
    low, high = bounds
    if low > high:
        raise InvalidArgument(f"latency_ms={original!r}: low={low:g} is larger than high={high:g}")
    return low, high


def _check_host(host: Any) -> str:
    """The IPv4 loopback address to bind, or InvalidArgument for anything else."""
    if not isinstance(host, str):
        raise InvalidArgument(f"host={host!r} must be a loopback address such as '127.0.0.1'")
    name = "127.0.0.1" if host.strip().lower() == "localhost" else host.strip()
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise InvalidArgument(
            f"host={host!r} is not an IPv4 loopback address; the stand-in server only "
            "listens on 127.0.0.1 (or another 127.x.y.z address)"
        )
    return str(address)


def _check_rate(name: str, value: Any) -> float:
    # The package's rate check, so a rate reads the same everywhere (a percent
    # hint for 2 to 100 only: 1.5 is more likely a slip than 1.5%).
    return float(as_rate(name, value))


def _check_whole(name: str, value: Any, *, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name}={value!r} must be a whole number")
    if value < low or (high is not None and value > high):
        limit = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidArgument(f"{name}={value!r} must be {limit}")
    return value


def _base_name(model: str) -> str:
    # Ollama names carry a tag; "shop-v1:latest" is "shop-v1".
    return model[: -len(":latest")] if model.endswith(":latest") else model


def _model_list() -> str:
    return ", ".join(repr(m) for m in ALL_MODELS)


@dataclass(frozen=True)
class StandinReply:
    """What the server sends for one request, and how long it waits first.

    ``delay_s`` is the drawn latency plus any hang; ``kind`` says what the
    request became (``"answer"``, ``"rate_limited"``, ``"server_error"``,
    ``"hang"``, ``"bad_request"``, ``"not_found"``, ``"meta"``).
    """

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    kind: str = "meta"


class _HTTPError(Exception):
    def __init__(
        self, status: int, message: str, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param


@dataclass(frozen=True)
class _Draw:
    index: int
    latency_s: float
    fault: str | None  # "rate_limited", "server_error", "hang" or None


class StandinApp:
    """The routes and the fault draws, without sockets.

    ``handle(method, path, body)`` returns the :class:`StandinReply` for one
    request; :class:`StandinServer` puts it on the wire. Thread-safe: the
    request counter, the fault generator and the status counts sit under one
    lock. The knobs are described in the module docstring and :func:`serve`.
    """

    def __init__(
        self,
        *,
        latency_ms: Any = 0,
        error_rate: float = 0.0,
        hang_rate: float = 0.0,
        hang_s: float = 5.0,
        retry_after: int = 1,
        seed: int = 0,
        notes: NotesModel | None = None,
        batch_delay_s: float = 0.0,
        batch_error_rate: float = 0.0,
        batch_expire_rate: float = 0.0,
        batch_never_ends: bool = False,
    ) -> None:
        if notes is not None and not isinstance(notes, NotesModel):
            raise InvalidArgument(f"notes={notes!r} must be a NotesModel (the notes model's knobs)")
        self.notes = DEFAULT_NOTES_MODEL if notes is None else notes
        self.latency_ms = parse_latency(latency_ms)
        self.error_rate = _check_rate("error_rate", error_rate)
        self.hang_rate = _check_rate("hang_rate", hang_rate)
        if (
            isinstance(hang_s, bool)
            or not isinstance(hang_s, int | float)
            or not (math.isfinite(hang_s) and hang_s >= 0)
        ):
            raise InvalidArgument(f"hang_s={hang_s!r} must be seconds, finite and at least 0")
        self.hang_s = float(hang_s)
        self.retry_after = _check_whole("retry_after", retry_after, low=0)
        self.seed = _check_whole("seed", seed, low=-(2**63))
        self._lock = threading.Lock()
        self._rng = random.Random(f"evalstats.standin.server:{self.seed}")
        self._next_index = 0
        self._counts: Counter[tuple[str, int]] = Counter()
        knobs = BatchKnobs(
            delay_s=batch_delay_s,
            error_rate=batch_error_rate,
            expire_rate=batch_expire_rate,
            never_ends=batch_never_ends,
        )
        #: The batch endpoints (:mod:`evalstats.demo._standin_batches`).
        self.batches = BatchService(self.openai_answer, knobs, seed=self.seed)
        self._routes: dict[tuple[str, str], Callable[[bytes], StandinReply]] = {
            ("POST", "/v1/chat/completions"): self._openai_chat,
            ("GET", "/v1/models"): self._openai_models,
            ("POST", "/api/chat"): self._ollama_chat,
            ("POST", "/api/show"): self._ollama_show,
            ("GET", "/api/tags"): self._ollama_tags,
            ("GET", "/api/version"): self._ollama_version,
            ("GET", "/health"): self._health,
            ("GET", "/"): self._root,
        }

    # --- bookkeeping ---------------------------------------------------------

    def counts(self) -> dict[str, dict[int, int]]:
        """Responses so far, ``{route: {status: count}}``."""
        with self._lock:
            out: dict[str, dict[int, int]] = {}
            for (route, status), n in sorted(self._counts.items()):
                out.setdefault(route, {})[status] = n
            return out

    def _count(self, route: str, status: int) -> None:
        with self._lock:
            self._counts[(route, status)] += 1

    def _draw(self) -> _Draw:
        with self._lock:
            index = self._next_index
            self._next_index += 1
            u_latency, u_error, u_kind, u_hang = (self._rng.random() for _ in range(4))
        low, high = self.latency_ms
        latency_s = (low + (high - low) * u_latency) / 1000.0
        fault = None
        if u_error < self.error_rate:
            fault = "rate_limited" if u_kind < 0.5 else "server_error"
        elif u_hang < self.hang_rate:
            fault = "hang"
        return _Draw(index, latency_s, fault)

    def _request_seed(self, index: int) -> int:
        # A request without a seed of its own gets one from the server's seed and
        # its number: distinct per request, the same in every run of the server.
        digest = hashlib.sha256(f"evalstats.standin.server:{self.seed}:{index}".encode())
        return int.from_bytes(digest.digest()[:8], "big")

    # --- routing -------------------------------------------------------------

    def handle(self, method: str, path: str, body: bytes = b"") -> StandinReply:
        """The reply to one request; ``path`` may carry a query string."""
        method = method.upper()
        path = path.split("?", 1)[0].rstrip("/") or "/"
        try:
            reply = self._route(method, path, body)
        except _HTTPError as exc:
            reply = _error("ollama" if path.startswith("/api/") else "openai", exc)
        self._count(path, reply.status)
        return reply

    def _route(self, method: str, path: str, body: bytes) -> StandinReply:
        batch = self.batches.route(method, path, body)
        if batch is not None:
            return StandinReply(batch.status, batch.body, batch.content_type)
        if method == "GET" and path.startswith("/v1/models/"):
            return self._openai_model(path.removeprefix("/v1/models/"))
        handler = self._routes.get((method, path))
        if handler is not None:
            return handler(body)
        if any(known == path for _method, known in self._routes):
            raise _HTTPError(405, f"Method {method} is not allowed on {path}")
        raise _HTTPError(404, f"Invalid URL ({method} {path})")

    # --- OpenAI --------------------------------------------------------------

    def _openai_chat(self, body: bytes) -> StandinReply:
        request = _json_object(body, api="openai")
        _model, _messages_, _seed, stream = _openai_checked(request)
        _shape(lambda: openai_shape(request, _tools(request.get("tools"), api="openai")))
        if _model == NOTES_MODEL:  # a conversation that cannot be read is a 400, undrawn
            _neutral_messages(request["messages"], api="openai")
        draw = self._draw()
        if draw.fault in ("rate_limited", "server_error"):
            return self._fault("openai", draw)
        head, choices, usage = self._openai_answer(request, draw.index)
        delay, kind = _delay(draw, self.hang_s)
        if not stream:
            document = _openai_completion(head, choices, usage)
            return StandinReply(200, _dumps(document), delay_s=delay, kind=kind)
        events = _openai_chunks(head, choices, usage, request.get("stream_options"))
        sse = b"".join(b"data: " + _dumps(e) + b"\n\n" for e in events) + b"data: [DONE]\n\n"
        return StandinReply(200, sse, "text/event-stream", delay_s=delay, kind=kind)

    def openai_answer(self, request: dict[str, Any], index: int) -> dict[str, Any]:
        """The ``chat.completion`` document for one chat request, with no fault and no delay
        (a batch's request; ``index`` seeds a request without a seed). Raises the 400 or
        404 the chat route would send, as an error with ``status`` and ``message``."""
        head, choices, usage = self._openai_answer(request, index)
        return _openai_completion(head, choices, usage)

    def _openai_answer(
        self, request: dict[str, Any], index: int
    ) -> tuple[dict[str, Any], list[_Choice], dict[str, int]]:
        model, messages, seed, _stream = _openai_checked(request)
        tools = _tools(request.get("tools"), api="openai")
        shape = _shape(lambda: openai_shape(request, tools))
        conversation = None
        if model == NOTES_MODEL:
            conversation = _neutral_messages(request["messages"], api="openai")
        base = self._request_seed(index) if seed is None else seed
        turns = [
            self._shaped_turn(
                model, messages, conversation, request.get("tools"), tools, shape, base + i
            )
            for i in range(shape.n)
        ]
        prompt_tokens = _prompt_tokens(
            messages if conversation is None else _token_pairs(conversation)
        )
        choices, completion_tokens = _openai_choices(turns)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        head = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": f"fp_{self._digest(model)[:10]}",
        }
        return head, choices, usage

    def _openai_models(self, _body: bytes) -> StandinReply:
        return StandinReply(
            200, _dumps({"object": "list", "data": [_openai_model_entry(m) for m in ALL_MODELS]})
        )

    def _openai_model(self, model: str) -> StandinReply:
        if model not in ALL_MODELS:
            raise _openai_not_found(model)
        return StandinReply(200, _dumps(_openai_model_entry(model)))

    # --- Ollama --------------------------------------------------------------

    def _ollama_chat(self, body: bytes) -> StandinReply:
        request = _json_object(body, api="ollama")
        model = request.get("model")
        if not isinstance(model, str) or not model:
            raise _HTTPError(400, "model is required")
        messages = _messages(request.get("messages"), api="ollama")
        options = request.get("options") or {}
        if not isinstance(options, dict):
            raise _HTTPError(400, "json: cannot unmarshal options: expected an object")
        seed = options.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise _HTTPError(400, f'option "seed" must be of type integer, not {seed!r}')
        stream = request.get("stream", True)
        if not isinstance(stream, bool):
            raise _HTTPError(400, "json: cannot unmarshal stream: expected a boolean")
        if _base_name(model) not in (*ALL_MODELS, JUDGE_MODEL):
            raise _HTTPError(404, f'model "{model}" not found, try pulling it first')
        shape = _shape(lambda: ollama_shape(request, options))
        conversation = tools = None
        if _base_name(model) == NOTES_MODEL:
            conversation = _neutral_messages(request["messages"], api="ollama")
            tools = _tools(request.get("tools"), api="ollama")
        started = time.perf_counter_ns()
        draw = self._draw()
        if draw.fault in ("rate_limited", "server_error"):
            return self._fault("ollama", draw)
        base = self._request_seed(draw.index) if seed is None else seed
        answer, calls, done_reason = self._shaped_turn(
            _base_name(model), messages, conversation, None, tools, shape, base
        )
        text = answer or ""
        # Ollama's calls carry no id, and their arguments are an object.
        wire_calls = [{"function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        reply_message: dict[str, Any] = {"role": "assistant", "content": text}
        if wire_calls:
            reply_message["tool_calls"] = wire_calls
        delay, kind = _delay(draw, self.hang_s)
        prompt_tokens = _prompt_tokens(
            messages if conversation is None else _token_pairs(conversation)
        )
        eval_count = estimate_tokens(text) + sum(
            estimate_tokens(c["name"] + json.dumps(c["arguments"])) for c in calls
        )
        # Durations in nanoseconds, as Ollama reports them: the time the
        # request will have taken (its delay plus the work done here), split
        # between reading the prompt and writing the answer by token counts.
        load = time.perf_counter_ns() - started
        work = int(delay * 1e9)
        prompt_eval = work * prompt_tokens // max(1, prompt_tokens + eval_count)
        created_at = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        final = {
            "model": model,
            "created_at": created_at,
            "message": reply_message,
            "done_reason": "length" if done_reason == "length" else "stop",
            "done": True,
            "total_duration": load + work,
            "load_duration": load,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": prompt_eval,
            "eval_count": eval_count,
            "eval_duration": work - prompt_eval,
        }
        if not stream:
            return StandinReply(200, _dumps(final), delay_s=delay, kind=kind)
        # Streamed, Ollama sends the text in pieces and the figures in a last
        # object whose message is empty.
        first = {"model": model, "created_at": created_at, "message": reply_message, "done": False}
        last = {**final, "message": {"role": "assistant", "content": ""}}
        ndjson = _dumps(first) + b"\n" + _dumps(last) + b"\n"
        return StandinReply(200, ndjson, "application/x-ndjson", delay_s=delay, kind=kind)

    def _ollama_show(self, body: bytes) -> StandinReply:
        request = _json_object(body, api="ollama")
        model = request.get("model", request.get("name"))
        if not isinstance(model, str) or not model:
            raise _HTTPError(400, "model is required")
        name = _base_name(model)
        if name == NOTES_MODEL:
            about = "the notes model"
            info = {f"evalstats.notes.{k}": v for k, v in asdict(self.notes).items()}
            capabilities = ["completion", "tools"]
        elif name in MODELS:
            version = MODELS[name]
            about = f"the shop assistant, version {version}"
            info = {
                "evalstats.shop.version": version,
                "evalstats.shop.slip_rate": SLIP_RATES[version],
            }
            capabilities = ["completion"]
        else:
            raise _HTTPError(404, f'model "{model}" not found, try pulling it first')
        document = {
            "license": "MIT",
            "modelfile": f"# evalstats stand-in: {about}\nFROM {name}\n",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": {
                "parent_model": "",
                "format": "standin",
                "family": _family(name),
                "families": [_family(name)],
                "parameter_size": "0",
                "quantization_level": "none",
            },
            "model_info": {
                "general.architecture": "evalstats-standin",
                "general.name": name,
                **info,
            },
            "capabilities": capabilities,
            "modified_at": _MODIFIED_AT,
            # Real Ollama lists the digest under /api/tags; it is given here too
            # so that one call identifies the model.
            "digest": self._digest(model),
        }
        return StandinReply(200, _dumps(document))

    def _ollama_tags(self, _body: bytes) -> StandinReply:
        models = [
            {
                "name": f"{m}:latest",
                "model": f"{m}:latest",
                "modified_at": _MODIFIED_AT,
                "size": 0,
                "digest": self._digest(m),
                "details": {
                    "format": "standin",
                    "family": _family(m),
                    "families": [_family(m)],
                    "parameter_size": "0",
                    "quantization_level": "none",
                },
            }
            for m in ALL_MODELS
        ]
        return StandinReply(200, _dumps({"models": models}))

    def _ollama_version(self, _body: bytes) -> StandinReply:
        from .. import __version__

        return StandinReply(200, _dumps({"version": f"{__version__}-evalstats-standin"}))

    # --- the rest ------------------------------------------------------------

    def _health(self, _body: bytes) -> StandinReply:
        return StandinReply(200, _dumps({"status": "ok", "models": list(ALL_MODELS)}))

    def _root(self, _body: bytes) -> StandinReply:
        return StandinReply(200, b"evalstats stand-in server is running", "text/plain")

    def _digest(self, model: str) -> str:
        return model_digest(model, notes=self.notes)

    def _shaped_turn(
        self,
        model: str,
        messages: list[tuple[str, str]],
        conversation: list[dict[str, Any]] | None,
        tool_defs: Any,
        tools: list[str] | None,
        shape: Shape,
        seed: int,
    ) -> tuple[str | None, list[dict[str, Any]], str]:
        """One choice: the model's turn, shaped to the request; and its finish reason."""
        if conversation is not None:
            offered = [] if shape.tool_choice == "none" else tools
            turn = notes_respond(conversation, offered, knobs=self.notes, seed=seed)
            text, calls = turn["content"], list(turn["tool_calls"])
        elif model == JUDGE_MODEL:
            last_user = next(t for role, t in reversed(messages) if role == "user")
            text, calls = _judge_reply(last_user, seed), []
        else:
            last_user = next(t for role, t in reversed(messages) if role == "user")
            text, calls = make_assistant(MODELS[model], seed=seed)(last_user), []
        if shape.tool_choice in ("required", "function") and tools:
            wanted = shape.function
            if not calls or (wanted is not None and calls[0]["name"] != wanted):
                name = wanted or tools[0]
                call = forced_call(name, _parameters(tool_defs, name))
                digest = hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:24]
                text, calls = None, [{"id": f"call_{digest}", **call}]
        if calls:
            return text, calls, "tool_calls"
        text = text or ""
        if shape.json is not None:
            text = json_answer(text, shape.json, slip_rate=JSON_SLIP_RATES[model], seed=seed)
        text, truncated = cut(text, shape)
        return text, [], "length" if truncated else "stop"

    def _fault(self, api: str, draw: _Draw) -> StandinReply:
        if draw.fault == "rate_limited":
            exc = _HTTPError(
                429,
                "Rate limit reached for requests (stand-in fault injection). "
                f"Please try again in {self.retry_after}s.",
                "rate_limit_exceeded",
            )
            reply = _error(api, exc, headers=(("Retry-After", str(self.retry_after)),))
            kind = "rate_limited"
        else:
            exc = _HTTPError(
                500,
                "The server had an error while processing your request "
                "(stand-in fault injection). Sorry about that!",
            )
            reply = _error(api, exc)
            kind = "server_error"
        return replace(reply, delay_s=draw.latency_s, kind=kind)


def _shape(read: Callable[[], Shape]) -> Shape:
    try:
        return read()
    except ShapeError as exc:
        raise _HTTPError(400, exc.message, exc.code, exc.param) from None


def _parameters(tool_defs: Any, name: str) -> Any:
    """The parameter schema of the tool ``name`` among the request's tool definitions."""
    for tool in tool_defs if isinstance(tool_defs, list) else ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == name:
            return function.get("parameters") or {}
    return {}


def _delay(draw: _Draw, hang_s: float) -> tuple[float, str]:
    if draw.fault == "hang":
        return draw.latency_s + hang_s, "hang"
    return draw.latency_s, "answer"


def _family(model: str) -> str:
    return "notes" if model == NOTES_MODEL else "shop"


def _openai_not_found(model: str) -> _HTTPError:
    return _HTTPError(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        "model_not_found",
    )


def _openai_model_entry(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": _MODELS_CREATED, "owned_by": "evalstats"}


def _dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _error(api: str, exc: _HTTPError, headers: tuple[tuple[str, str], ...] = ()) -> StandinReply:
    """An error in the API's own shape: OpenAI's nested object or Ollama's one string."""
    if api == "ollama":
        document: dict[str, Any] = {"error": exc.message}
    else:
        kinds = {
            400: "invalid_request_error",
            404: "invalid_request_error",
            405: "invalid_request_error",
            429: "requests",
            500: "server_error",
        }
        document = {
            "error": {
                "message": exc.message,
                "type": kinds.get(exc.status, "invalid_request_error"),
                "param": exc.param,
                "code": exc.code,
            }
        }
    kind = {400: "bad_request", 404: "not_found", 405: "bad_request"}.get(exc.status, "error")
    return StandinReply(exc.status, _dumps(document), headers=headers, kind=kind)


def _token_pairs(conversation: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(role, text)`` per message for the token estimate, tool calls as JSON text."""
    pairs = []
    for message in conversation:
        text = message.get("content") or ""
        for call in message.get("tool_calls") or ():
            text += call["name"] + json.dumps(call["arguments"])
        pairs.append((message["role"], text))
    return pairs


def _tools(raw: Any, *, api: str) -> list[str] | None:
    """The names of the tools offered (``[{"type": "function", "function": {...}}]``)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise _HTTPError(400, "'tools' must be a list of tools", param="tools")
    names = []
    for i, tool in enumerate(raw):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            message = (
                f"Missing required parameter: 'tools[{i}].function.name'."
                if api == "openai"
                else f"tools[{i}] must be a function with a name"
            )
            raise _HTTPError(400, message, "missing_required_parameter", f"tools[{i}]")
        names.append(name)
    return names


def _neutral_messages(raw: list[Any], *, api: str) -> list[dict[str, Any]]:
    """The conversation in evalstats' neutral form, tool turns included.

    Called after :func:`_messages` checked the roles and contents. OpenAI:
    an assistant's ``tool_calls`` need an ``id`` and JSON-string ``arguments``;
    each ``role: "tool"`` message must answer, by ``tool_call_id``, a call of
    the assistant message before it, and every such call must be answered
    before the conversation goes on (400 otherwise, as the OpenAI API does).
    Ollama: calls have object arguments and no id (ids ``call_0``, ``call_1``
    ... are given in order); a tool message answers the first unanswered call
    (with its ``tool_name``, when given).
    """
    out: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # calls of the last assistant turn not yet answered
    count = 0
    for i, message in enumerate(raw):
        role = message["role"]
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(
                p.get("text", "")
                for p in content
                if isinstance(p, dict) and p.get("type") == "text"
            )
        if role != "tool" and api == "openai" and waiting:
            ids = ", ".join(c["id"] for c in waiting)
            raise _HTTPError(
                400,
                "An assistant message with 'tool_calls' must be followed by "
                "tool messages responding to each 'tool_call_id'. The "
                f"following tool_call_ids did not have response messages: "
                f"{ids}",
                param=f"messages.[{i}].role",
            )
        if role == "assistant" and message.get("tool_calls") is not None:
            calls = _wire_calls(message["tool_calls"], i, api=api, first=count)
            count += len(calls)
            waiting = list(calls)
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif role == "tool":
            if api == "openai":
                call_id = message.get("tool_call_id")
                match = next((c for c in waiting if c["id"] == call_id), None)
                if match is None:
                    raise _HTTPError(
                        400,
                        "Invalid parameter: messages with role 'tool' must be "
                        "a response to a preceeding message with "
                        "'tool_calls'.",
                        param=f"messages.[{i}].role",
                    )
            else:
                name = message.get("tool_name", message.get("name"))
                match = next(
                    (c for c in waiting if c["name"] == name), waiting[0] if waiting else None
                )
            if match is not None:
                waiting.remove(match)
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": match["id"] if match else None,
                    "name": match["name"] if match else message.get("tool_name"),
                    "content": content if isinstance(content, str) else "",
                }
            )
        else:
            waiting = [] if api == "ollama" and role != "assistant" else waiting
            out.append({"role": role, "content": content})
    if api == "openai" and waiting:
        ids = ", ".join(c["id"] for c in waiting)
        raise _HTTPError(
            400,
            "An assistant message with 'tool_calls' must be followed by tool "
            "messages responding to each 'tool_call_id'. The following "
            f"tool_call_ids did not have response messages: {ids}",
            param="messages",
        )
    return out


def _wire_calls(raw: Any, i: int, *, api: str, first: int) -> list[dict[str, Any]]:
    """An assistant message's ``tool_calls`` as ``[{"id", "name", "arguments": dict}]``."""
    where = f"messages[{i}].tool_calls"
    if not isinstance(raw, list):
        raise _HTTPError(
            400, f"Invalid type for '{where}': expected an array.", "invalid_type", where
        )
    calls = []
    for k, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise _HTTPError(
                400,
                f"Missing required parameter: '{where}[{k}].function.name'.",
                "missing_required_parameter",
                f"{where}[{k}]",
            )
        arguments = function.get("arguments")
        if api == "openai":
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise _HTTPError(
                    400,
                    f"Missing required parameter: '{where}[{k}].id'.",
                    "missing_required_parameter",
                    f"{where}[{k}].id",
                )
            if not isinstance(arguments, str):
                raise _HTTPError(
                    400,
                    f"Invalid type for '{where}[{k}].function.arguments': "
                    f"expected a string, but got {type(arguments).__name__} "
                    "instead.",
                    "invalid_type",
                    f"{where}[{k}].function.arguments",
                )
            try:
                parsed = json.loads(arguments) if arguments else {}
            except (ValueError, RecursionError):
                parsed = None
        else:
            call_id = call.get("id") if isinstance(call.get("id"), str) else None
            call_id = call_id or f"call_{first + k}"
            parsed = arguments if arguments is not None else {}
            if not isinstance(parsed, dict):
                raise _HTTPError(
                    400,
                    "json: cannot unmarshal "
                    f"{type(arguments).__name__} into Go struct field "
                    ".messages.tool_calls.function.arguments of type "
                    "api.ToolCallFunctionArguments",
                )
        calls.append(
            {
                "id": call_id,
                "name": function["name"],
                "arguments": parsed if isinstance(parsed, dict) else {},
            }
        )
    return calls


def _json_object(body: bytes, *, api: str) -> dict[str, Any]:
    try:
        document = json.loads(body)
    except RecursionError:
        raise _HTTPError(400, "the request body is nested too deeply to read") from None
    except (ValueError, UnicodeDecodeError) as exc:
        if api == "ollama":
            raise _HTTPError(400, f"invalid JSON: {exc}") from None
        raise _HTTPError(
            400,
            "We could not parse the JSON body of your request. (HINT: This likely means "
            "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
            "payload.)",
        ) from None
    if not isinstance(document, dict):
        raise _HTTPError(400, "the request body must be a JSON object")
    return document


def _messages(raw: Any, *, api: str) -> list[tuple[str, str]]:
    """``[(role, text), ...]``; content parts (OpenAI's list form) are joined."""
    if not isinstance(raw, list) or not raw:
        raise _HTTPError(400, "'messages' must be a non-empty list of messages", param="messages")
    out = []
    for i, message in enumerate(raw):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _HTTPError(
                400, f"messages[{i}] must be an object with a 'role'", param=f"messages[{i}]"
            )
        content = message.get("content")
        if content is None:
            text = ""
        elif isinstance(content, str):
            text = content
        elif isinstance(content, list) and api == "openai":
            parts = [
                p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"
            ]
            if not all(isinstance(p, str) for p in parts):
                raise _HTTPError(
                    400,
                    f"messages[{i}].content has a text part without text",
                    param=f"messages[{i}].content",
                )
            text = "\n".join(parts)  # type: ignore[arg-type]
        else:
            raise _HTTPError(
                400, f"messages[{i}].content must be a string", param=f"messages[{i}].content"
            )
        out.append((message["role"], text))
    if not any(role == "user" for role, _ in out):
        raise _HTTPError(
            400, "messages has no user message for the stand-in to answer", param="messages"
        )
    return out


# --- the HTTP layer ------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response has a Content-Length
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, add=True)
        # Small replies on a kept-alive connection: send them at once.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, add=False)

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self._dispatch()

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch()

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch()

    def _dispatch(self) -> None:
        started = time.perf_counter()
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self.close_connection = True
            self._send(StandinReply(411, _dumps({"error": "send a Content-Length"})), started)
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send(StandinReply(400, _dumps({"error": "bad Content-Length"})), started)
            return
        limit = MAX_BATCH_BODY_BYTES if _batch_route(self.path) else MAX_BODY_BYTES
        if length > limit:
            self.close_connection = True
            self._send(StandinReply(413, _dumps({"error": "request body too large"})), started)
            return
        body = self.rfile.read(length) if length else b""
        reply = self.server.app.handle(self.command, self.path, body)
        if reply.delay_s > 0 and self.server.stopping.wait(reply.delay_s):
            self.close_connection = True  # shutting down: drop the request unanswered
            return
        self._send(reply, started)

    def _send(self, reply: StandinReply, started: float) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            elapsed_ms = (time.perf_counter() - started) * 1000
            self.send_header("Server-Timing", f"app;dur={elapsed_ms:.3f}")
            # Headers and body in one write (end_headers would send the headers
            # alone): a small reply then goes out as one segment.
            self._headers_buffer.append(b"\r\n" + reply.body)  # type: ignore[attr-defined]
            self.flush_headers()
        except OSError:
            self.close_connection = True  # the client went away

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: a load test would otherwise print a line per request."""


def _batch_route(path: str) -> bool:
    """Whether a request goes to a batch route, which takes bodies up to 200 MB."""
    return path.startswith(("/v1/files", "/v1/messages/batches")) or (
        path.startswith("/v1beta/") and ":batchGenerateContent" in path
    )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of 32+ connections must not overflow the backlog

    def __init__(self, address: tuple[str, int], app: StandinApp) -> None:
        self.app = app
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.connections_accepted = 0
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (killed, timed out) is no server error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up (getfqdn), which can
        # stall without a network; the address is all that is needed here.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def track(self, connection: socket.socket, *, add: bool) -> None:
        with self._connections_lock:
            if add:
                self._connections.add(connection)
                self.connections_accepted += 1
            else:
                self._connections.discard(connection)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class StandinServer:
    """The stand-in server on a loopback address; see :func:`serve`.

    Binds on construction, so :attr:`base_url` is known at once (``port=0``
    picks a free port); :meth:`start` serves in a background thread and
    :meth:`stop` stops it, closing open connections and waking stalled
    requests. As a context manager it starts (if needed) and stops.

    Attributes
    ----------
    base_url : str
        ``http://127.0.0.1:PORT``; OpenAI clients use ``base_url + "/v1"``.
    host : str
    port : int
    app : StandinApp
        The routes and the fault knobs; ``app.counts()`` tallies responses.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, **knobs: Any) -> None:
        address = _check_host(host)
        port = _check_whole("port", port, low=0, high=65535)
        self.app = StandinApp(**knobs)
        try:
            self._httpd = _HTTPServer((address, port), self.app)
        except OSError as exc:
            raise InvalidArgument(
                f"port={port!r} cannot be bound on {address}: {exc.strerror or exc}"
            ) from None
        self.host = address
        self.port = int(self._httpd.server_address[1])
        self.base_url = f"http://{self.host}:{self.port}"
        self.app.batches.base_url = self.base_url
        self._thread: threading.Thread | None = None
        self._stopped = False

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else "running" if self.running else "not started"
        return f"<StandinServer {self.base_url} {state}>"

    @property
    def connections_accepted(self) -> int:
        """TCP connections accepted so far (fewer than requests when kept alive)."""
        return self._httpd.connections_accepted

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> StandinServer:
        """Serve in a daemon thread; returns the server. Starting twice is a no-op."""
        if self._stopped:
            raise InvalidArgument(f"{self!r} was stopped; start a new one with serve()")
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.1},
                name=f"evalstats-standin-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and free the port. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._httpd.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.close_connections()
        self._httpd.server_close()

    def __enter__(self) -> StandinServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    latency_ms: float | tuple[float, float] | str = 0,
    error_rate: float = 0.0,
    hang_rate: float = 0.0,
    hang_s: float = 5.0,
    retry_after: int = 1,
    seed: int = 0,
    notes: NotesModel | None = None,
    batch_delay_s: float = 0.0,
    batch_error_rate: float = 0.0,
    batch_expire_rate: float = 0.0,
    batch_never_ends: bool = False,
) -> StandinServer:
    """Serve the stand-ins over HTTP on a loopback address, in the background.

    The models are the shop assistants ``shop-v1`` and ``shop-v2`` and the
    tool-calling notes model ``notes``.

    Parameters
    ----------
    host : str, optional
        An IPv4 loopback address (``"127.0.0.1"``, the default, or
        ``"localhost"``); any other host raises ``InvalidArgument``.
    port : int, optional
        0 (the default) picks a free port; read it from ``.base_url``.
    latency_ms : float or (float, float) or str, optional
        Delay before each chat answer: fixed, or uniform on ``(low, high)``
        (``"low:high"`` as a string). 0 by default.
    error_rate : float, optional
        Probability that a chat request fails: half of the failures are 429
        with ``Retry-After: retry_after``, half are 500.
    hang_rate : float, optional
        Probability that a chat request (that did not fail) stalls ``hang_s``
        seconds more before it is answered.
    hang_s : float, optional
        Length of a stall, in seconds (5 by default).
    retry_after : int, optional
        The whole seconds a 429 asks the client to wait (1 by default; 0
        means retry at once).
    seed : int, optional
        Seeds the fault draws and the answers of requests without a seed.
    notes : NotesModel, optional
        The behaviour knobs of the ``notes`` model (its defaults when None).
    batch_delay_s, batch_error_rate, batch_expire_rate, batch_never_ends : optional
        The batch endpoints' knobs: seconds until a batch ends, the probability that
        a request errors or expires, and batches that never end (see
        :mod:`evalstats.demo._standin_batches`; ``server.app.batches.creations()``
        counts the batches created).

    Returns
    -------
    StandinServer
        Running; stop it with ``.stop()`` or use it as a context manager.

    References
    ----------
    OpenAI API reference, "Create chat completion" (the chat.completion object
    and error objects); Ollama API documentation, ``/api/chat``, ``/api/show``,
    ``/api/tags`` and ``/api/version``. RFC 9110, section 10.2.3 (Retry-After).

    Examples
    --------
    >>> import httpx
    >>> message = "Where is my order A-1042?"
    >>> with serve(seed=1) as server:
    ...     reply = httpx.post(server.base_url + "/v1/chat/completions", json={
    ...         "model": "shop-v2", "seed": 7,
    ...         "messages": [{"role": "user", "content": message}]})
    >>> reply.status_code, reply.json()["choices"][0]["message"]["content"]
    (200, 'Hi there! Your order A-1042 has shipped and is on its way.')
    >>> reply.json()["usage"]
    {'prompt_tokens': 14, 'completion_tokens': 15, 'total_tokens': 29}

    A request with a seed gets what the assistant with that seed says:

    >>> make_assistant(2, seed=7)(message)
    'Hi there! Your order A-1042 has shipped and is on its way.'
    """
    server = StandinServer(
        host=host,
        port=port,
        latency_ms=latency_ms,
        error_rate=error_rate,
        hang_rate=hang_rate,
        hang_s=hang_s,
        retry_after=retry_after,
        seed=seed,
        notes=notes,
        batch_delay_s=batch_delay_s,
        batch_error_rate=batch_error_rate,
        batch_expire_rate=batch_expire_rate,
        batch_never_ends=batch_never_ends,
    )
    return server.start()


def serve_until_signal(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    **knobs: Any,
) -> int:
    """Serve in the foreground until SIGINT or SIGTERM; return 0 (the exit status).

    The first line written to ``out`` (standard output) is the base URL, flushed
    at once so that a script can read it; a line on ``err`` says what is served.
    Must run in the main thread (it installs signal handlers, and restores the
    previous ones on return).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    stop = threading.Event()

    def _on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with StandinServer(host=host, port=port, **knobs) as server:
            print(server.base_url, file=out, flush=True)
            app = server.app
            low, high = app.latency_ms
            latency = f"{low:g} ms" if low == high else f"{low:g} to {high:g} ms"
            changed = [
                f"{k}={v:g}"
                for k, v in asdict(app.notes).items()
                if v != getattr(DEFAULT_NOTES_MODEL, k)
            ]
            print(
                f"evalstats standin: serving {', '.join(ALL_MODELS)} at {server.base_url} "
                f"(OpenAI at /v1, Ollama at /api; latency {latency}, error rate "
                f"{app.error_rate:g}, hang rate {app.hang_rate:g} for {app.hang_s:g} s, "
                f"seed {app.seed}"
                f"{'; notes ' + ', '.join(changed) if changed else ''}); stop with Ctrl-C",
                file=err,
                flush=True,
            )
            while not stop.wait(0.2):
                pass
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0


# --- OpenAI chat completions: the steps of a request -------------------------------

_Choice = tuple[str | None, list[dict[str, Any]], str]


def _openai_checked(request: dict[str, Any]) -> tuple[str, Any, int | None, bool]:
    """The model, messages, seed and stream flag of a chat request, checked as OpenAI does."""
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise _HTTPError(400, "you must provide a model parameter", param="model")
    messages = _messages(request.get("messages"), api="openai")
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _HTTPError(
            400,
            f"Invalid type for 'seed': expected an integer, but got {type(seed).__name__} instead.",
            "invalid_type",
            "seed",
        )
    stream = request.get("stream", False)
    if not isinstance(stream, bool):
        raise _HTTPError(
            400, "Invalid type for 'stream': expected a boolean.", "invalid_type", "stream"
        )
    if model not in ALL_MODELS and model != JUDGE_MODEL:
        raise _openai_not_found(model)
    if model == JUDGE_MODEL:
        last_user = next((t for role, t in reversed(messages) if role == "user"), "")
        if _answer_in(last_user) is None:
            raise _HTTPError(
                400,
                f"{JUDGE_MODEL} grades a judged_by prompt: the last user message has no "
                "<answer> block",
                "invalid_request_error",
                "messages",
            )
    return model, messages, seed, stream


#: The stand-in judge's sensitivity and specificity.
_JUDGE_RATE = 0.9


def _answer_in(prompt: str) -> str | None:
    from ..running._judge import answer_from_prompt

    return answer_from_prompt(prompt)


def _judge_reply(prompt: str, seed: int) -> str:
    """The stand-in judge's reply to a judged_by prompt: reasoning, then PASS or FAIL,
    drawn from ``seed`` and the prompt (a fresh judge per request)."""
    from ._judge import make_judge
    from ._shop import reply_is_good

    judge = make_judge(
        reply_is_good, sensitivity=_JUDGE_RATE, specificity=_JUDGE_RATE, seed=seed % 2**63
    )
    return judge(prompt)


def _openai_choices(turns: Any) -> tuple[list[_Choice], int]:
    """Each turn as (text, tool calls on the wire, finish reason), and the tokens they hold."""
    choices: list[_Choice] = []
    completion_tokens = 0
    for text, calls, finish in turns:
        wire_calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in calls
        ]
        completion_tokens += estimate_tokens(text or "") + sum(
            estimate_tokens(c["function"]["name"] + c["function"]["arguments"]) for c in wire_calls
        )
        choices.append((text, wire_calls, finish))
    return choices, completion_tokens


def _openai_completion(
    head: dict[str, Any], choices: list[_Choice], usage: dict[str, int]
) -> dict[str, Any]:
    """The ``chat.completion`` document of a reply that is not streamed."""
    wire_choices = []
    for i, (text, wire_calls, finish) in enumerate(choices):
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if wire_calls:
            message["tool_calls"] = wire_calls
        wire_choices.append(
            {"index": i, "message": message, "logprobs": None, "finish_reason": finish}
        )
    return {
        "id": head["id"],
        "object": "chat.completion",
        "created": head["created"],
        "model": head["model"],
        "choices": wire_choices,
        "usage": usage,
        "system_fingerprint": head["system_fingerprint"],
    }


def _openai_chunks(
    head: dict[str, Any], choices: list[_Choice], usage: dict[str, int], options: Any
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events of a streamed reply: each choice's delta,
    then each one's finish reason, then the usage when ``stream_options`` asks."""
    chunk = {"object": "chat.completion.chunk", **head}
    events = []
    for i, (text, wire_calls, _finish) in enumerate(choices):
        delta: dict[str, Any] = {"role": "assistant", "content": text}
        if wire_calls:
            # One delta carries each call whole, with the index OpenAI streams
            # calls by; a client joins argument pieces, here there is one piece.
            delta["tool_calls"] = [{"index": j, **c} for j, c in enumerate(wire_calls)]
        events.append(
            {
                **chunk,
                "choices": [{"index": i, "delta": delta, "logprobs": None, "finish_reason": None}],
            }
        )
    for i, (_text, _calls, finish) in enumerate(choices):
        events.append(
            {
                **chunk,
                "choices": [{"index": i, "delta": {}, "logprobs": None, "finish_reason": finish}],
            }
        )
    if isinstance(options, dict) and options.get("include_usage"):
        events.append({**chunk, "choices": [], "usage": usage})
    return events
