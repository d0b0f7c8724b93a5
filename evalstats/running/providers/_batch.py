"""Provider batch APIs: a run's requests sent in batches, durable across ``kill -9``.

``run --batch [SIZE]`` sends each variant's requests through its provider's
batch API (half the price, their own rate limits) instead of one request per
sample: OpenAI's Batch API (a JSONL file uploaded with ``purpose=batch``,
``POST /v1/batches``, results as JSONL keyed by ``custom_id`` in any order),
Anthropic's Message Batches (``POST /v1/messages/batches`` with the requests
inline, results JSONL of ``{custom_id, result: {type}}``) and Gemini's
``batchGenerateContent`` (inline requests, each with ``metadata.key``, under
20 MB; the responses inline in the finished operation). An expired Gemini
batch has no responses: all its requests are unanswered.

How it fits the engine. Each variant's provider is wrapped in a
:class:`BatchedTask`: the engine takes samples as usual, ``SIZE`` times the
batches in flight at once, and each sample's request waits in the task's
queue; the queue is sent as a batch when it holds ``SIZE`` requests (or the
provider's count or size limit), or when no request has joined it for
``linger_s``. The answer a batch gives a request is scored and written as
the usual sample record, exactly once.

* **custom_id.** A request's ``custom_id`` is ``es-`` and its sample's seed
  in hex: the seed is a SHA-256 of the run's seed, the case, the repeat and
  the variant (:func:`evalstats.running._engine.sample_seed`), so the id is
  the same in every session of the run, joins the result back to exactly
  one sample, and fits Anthropic's ``[A-Za-z0-9_-]{1,64}``.
* **Durable.** A ``batch`` record (:class:`~evalstats.results._records.BatchRecord`)
  with the batch's id and its requests is written to the results file as
  soon as the provider gives the id, before the run waits on it. A run
  killed at any moment and resumed (``--resume``) polls the batches its
  file lists instead of sending their requests again. For OpenAI the batch
  also carries a key written beforehand (``state="submitting"``), so a
  batch the provider created in the instant before its record was written is
  found again by that key; Anthropic's batches carry no such key.
* **Unanswered requests.** A request that expired, was cancelled or failed
  on the provider's side (HTTP 429 or 5xx inside the batch) raises
  :class:`BatchUnanswered`, a transient error: the engine retries it in a
  later batch, and after its last retry the sample is unmeasured. The
  batch's ``ended`` record lists such requests; ``--resume`` removes their
  unmeasured samples (:func:`~evalstats.results._file.drop_samples`) and takes
  them again. A request the provider refused (another 4xx) is a
  :class:`~evalstats.errors.ProviderError` and stops the run, as in a run
  without batches.
* **The judge.** A judge named with ``--judge`` whose provider has a batch
  API sends its calls in batches too (:class:`BatchedJudge`): its own queue,
  its batches recorded under the name :data:`JUDGE_BATCHES`, each request's
  ``custom_id`` ``ej-`` and a SHA-256 of the sample's seed and the check's
  name (:func:`judge_custom_id`), so each reply joins back to one (sample,
  check). A sample's record is written once, when its answer and every
  verdict are in; killed in between, ``--resume`` reads the answer again
  from its ended batch and polls the judge's batch. A judge request a batch
  did not answer is retried in a later batch (``--retries``), as a failed
  judge call is retried, and then leaves the check unscored and
  ``judge_unmeasured``; ``--resume`` takes such samples again.
* **Time limit.** A batch that has not ended ``time_limit_s`` after this
  session started waiting on it stops the run with a
  :class:`~evalstats.errors.ProviderError` saying so in one line; the batch is
  left running at the provider, and ``--resume`` polls it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import math
import random
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx

from ..._validate import whole_number
from ...errors import InvalidArgument, ProviderError, TransientProviderError
from ._base import Provider, retry_after_seconds
from ._body import ReplyTooLarge, ReplyUnreadable, read_body

__all__ = [
    "BATCH_KINDS",
    "JUDGE_BATCHES",
    "BatchOptions",
    "BatchUnanswered",
    "BatchedJudge",
    "BatchedTask",
    "batched",
    "batched_judge",
    "custom_id",
    "judge_custom_id",
    "unanswered_sample",
]

#: The most a batch reply (a results file) may hold, in bytes.
MAX_RESULTS_BYTES = 1 << 30

#: Seconds between retries of a poll the service did not answer.
_POLL_RETRY_S = 1.0


class BatchUnanswered(TransientProviderError):
    """A batch gave no answer for a request: it expired, was cancelled or failed there."""


def custom_id(seed: int) -> str:
    """The ``custom_id`` of the request of the sample whose seed is ``seed``.

    Examples
    --------
    >>> custom_id(255)
    'es-00000000000000ff'
    """
    return f"es-{int(seed):016x}"


def unanswered_sample(record: Mapping[str, Any]) -> bool:
    """Whether a sample record is unmeasured because its batches gave it no answer, or
    has a judged check left without a verdict because the judge's batches gave none."""
    if record.get("status") == "unmeasured":
        return "BatchUnanswered: " in str(record.get("reason") or "")
    checks = record.get("checks")
    return isinstance(checks, list) and any(
        isinstance(c, Mapping)
        and c.get("judge_unmeasured") is True
        and "BatchUnanswered: " in str(c.get("reason") or "")
        for c in checks
    )


def judge_custom_id(seed: int, check: str) -> str:
    """The ``custom_id`` of the judge's request for the check named ``check`` of the
    sample whose seed is ``seed``: ``ej-`` and 32 hex digits of their SHA-256.

    Examples
    --------
    >>> judge_custom_id(255, "polite") == judge_custom_id(255, "polite")
    True
    >>> judge_custom_id(255, "polite") != judge_custom_id(255, "names the order")
    True
    >>> len(judge_custom_id(255, "polite"))
    35
    """
    digest = hashlib.sha256(f"{int(seed):x}\0{check}".encode("utf-8", "surrogatepass"))
    return "ej-" + digest.hexdigest()[:32]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class BatchOptions:
    """How a run sends its requests in batches (``run --batch``).

    ``size`` requests per batch at most (the provider's own limits bind too:
    OpenAI 50,000 requests or 200 MB, Anthropic 100,000 or 256 MB);
    ``in_flight`` batches submitted and not ended at once, per variant;
    ``poll_s`` seconds between looks at a batch; ``time_limit_s`` how long a
    session waits for a batch to end; ``linger_s`` how long a batch that is not
    full waits for more requests. ``prices`` are the batch prices a prices file
    gives (``run --batch --prices``), ``(model, input, output)`` in dollars per
    million tokens, recorded for the cost report.
    """

    size: int = 5_000
    in_flight: int = 2
    poll_s: float = 15.0
    time_limit_s: float = 25 * 3600.0
    linger_s: float = 0.5
    prices: tuple[tuple[str, float, float], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", whole_number("batch size", self.size))
        object.__setattr__(self, "in_flight", whole_number("batches in flight", self.in_flight))
        for name in ("poll_s", "time_limit_s", "linger_s"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (math.isfinite(value) and value >= 0)
            ):
                raise InvalidArgument(f"{name}={value!r} must be seconds, finite and at least 0")
            object.__setattr__(self, name, float(value))
        if self.time_limit_s <= 0:
            raise InvalidArgument(f"time_limit_s={self.time_limit_s!r} must be more than 0")
        from .._prices import Prices

        checked = []
        for entry in self.prices:
            model, p_in, p_out = entry
            price = Prices(p_in, p_out)  # refused as price_in=/price_out= when not prices
            checked.append((str(model), price.input, price.output))
        object.__setattr__(self, "prices", tuple(checked))

    def record(self) -> dict[str, Any]:
        """What the manifest records under ``"batch"``."""
        out: dict[str, Any] = {
            "size": self.size,
            "in_flight": self.in_flight,
            "poll_s": self.poll_s,
            "time_limit_s": self.time_limit_s,
        }
        if self.prices:
            out["prices"] = {m: {"input": i, "output": o} for m, i, o in self.prices}
        return out


# --- the wire: one class per batch API ---------------------------------------------------


@dataclass
class _Outcome:
    """What a batch said of one request: an answer (the reply body), or why it has none."""

    data: Any = None
    unanswered: str | None = None
    refused: str | None = None


class _API:
    """One provider's batch API, over the provider's own HTTP client."""

    kind: ClassVar[str] = ""
    max_count: ClassVar[int] = 0
    max_bytes: ClassVar[int] = 0

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def line_bytes(self, cid: str, path: str, body: Mapping[str, Any]) -> int:
        return len(json.dumps(body, ensure_ascii=False)) + len(cid) + 64

    async def submit(
        self, items: Sequence[tuple[str, str, Mapping[str, Any]]], key: str
    ) -> tuple[str, str]:
        raise NotImplementedError

    async def find(self, key: str) -> str | None:
        """The id of a batch created with ``key``, or None (or when the API cannot say)."""
        return None

    async def poll(self, batch_id: str) -> tuple[bool, str, Mapping[str, Any]]:
        """``(ended, status, document)``."""
        raise NotImplementedError

    async def results(self, batch_id: str, document: Mapping[str, Any]) -> dict[str, _Outcome]:
        raise NotImplementedError

    async def cancel(self, batch_id: str) -> None:
        raise NotImplementedError

    # -- HTTP

    async def call(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        files: Any = None,
        data: Any = None,
        raw: bool = False,
    ) -> Any:
        """One request to the batch API, read within the provider's bounds: the JSON
        reply (or its bytes with ``raw``); 429 and 5xx raise TransientProviderError,
        other 4xx ProviderError."""
        provider = self.provider
        client = provider.client()
        where = provider._where(path)
        limit = MAX_RESULTS_BYTES if raw else provider.max_reply_bytes
        try:
            async with asyncio.timeout(max(provider.timeout, 60.0)):
                request = client.build_request(method, path, json=json_body, files=files, data=data)
                response = await client.send(request, stream=True)
                try:
                    status = response.status_code
                    body = await read_body(response, limit)
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.TimeoutException):
            raise TransientProviderError(f"{self.kind}: no answer from {where} in time") from None
        except httpx.RequestError as exc:
            detail = provider._scrub(str(exc)) or type(exc).__name__
            raise TransientProviderError(
                f"{self.kind}: could not reach {where}: {detail}"
            ) from None
        except (ReplyTooLarge, ReplyUnreadable) as exc:
            raise TransientProviderError(f"{self.kind}: the reply from {where}: {exc}") from None
        if status >= 400 or 300 <= status < 400:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            message = provider._error_message(parsed) if parsed is not None else None
            line = provider._scrub(
                f"{self.kind}: HTTP {status} from {where}" + (f": {message}" if message else "")
            )[:400]
            if status in (408, 429) or status >= 500:
                error = TransientProviderError(line)
                error.retry_after = retry_after_seconds(response.headers)
                raise error
            raise ProviderError(line)
        if raw:
            return body
        try:
            return json.loads(body)
        except ValueError:
            raise ProviderError(f"{self.kind}: HTTP {status} from {where} is not JSON") from None


def _jsonl(raw: bytes) -> Iterable[dict[str, Any]]:
    for line in raw.splitlines():
        if line.strip():
            try:
                document = json.loads(line)
            except ValueError:
                continue
            if isinstance(document, dict):
                yield document


class _OpenAIBatches(_API):
    """OpenAI's Batch API (API reference, "Batch"; the guide "Batch API")."""

    kind = "openai"
    max_count = 50_000
    max_bytes = 200 * 10**6

    def _url(self, path: str) -> str:
        # The line's url is the endpoint's path from the host: /v1/chat/completions.
        return urllib.parse.urlsplit(self.provider.base_url).path.rstrip("/") + path

    async def submit(
        self, items: Sequence[tuple[str, str, Mapping[str, Any]]], key: str
    ) -> tuple[str, str]:
        url = self._url(items[0][1])
        content = b"".join(
            json.dumps(
                {"custom_id": cid, "method": "POST", "url": url, "body": body},
                ensure_ascii=False,
                separators=(",", ":"),
            ).encode()
            + b"\n"
            for cid, _path, body in items
        )
        upload = await self.call(
            "POST",
            "/files",
            files={"file": ("evalstats-batch.jsonl", content, "application/jsonl")},
            data={"purpose": "batch"},
        )
        created = await self.call(
            "POST",
            "/batches",
            json_body={
                "input_file_id": upload["id"],
                "endpoint": url,
                "completion_window": "24h",
                "metadata": {"evalstats_key": key},
            },
        )
        return str(created["id"]), str(created.get("status"))

    async def find(self, key: str) -> str | None:
        listed = await self.call("GET", "/batches?limit=100")
        for batch in listed.get("data") or ():
            meta = batch.get("metadata") if isinstance(batch, Mapping) else None
            if isinstance(meta, Mapping) and meta.get("evalstats_key") == key:
                return str(batch["id"])
        return None

    async def poll(self, batch_id: str) -> tuple[bool, str, Mapping[str, Any]]:
        document = await self.call("GET", f"/batches/{batch_id}")
        status = str(document.get("status"))
        if status == "failed":
            errors = (document.get("errors") or {}).get("data") or []
            why = "; ".join(str(e.get("message")) for e in errors[:3] if isinstance(e, Mapping))
            raise ProviderError(f"openai: batch {batch_id} failed: {why or 'no reason given'}")
        return status in ("completed", "expired", "cancelled"), status, document

    async def results(self, batch_id: str, document: Mapping[str, Any]) -> dict[str, _Outcome]:
        out: dict[str, _Outcome] = {}
        for name in ("output_file_id", "error_file_id"):
            file_id = document.get(name)
            if not file_id:
                continue
            raw = await self.call("GET", f"/files/{file_id}/content", raw=True)
            for line in _jsonl(raw):
                cid = line.get("custom_id")
                if not isinstance(cid, str):
                    continue
                response = line.get("response")
                error = line.get("error")
                if isinstance(response, Mapping) and response.get("status_code") == 200:
                    out[cid] = _Outcome(data=response.get("body"))
                elif isinstance(response, Mapping):
                    code = response.get("status_code")
                    message = self.provider._error_message(response.get("body")) or ""
                    why = f"HTTP {code} in batch {batch_id}" + (f": {message}" if message else "")
                    if isinstance(code, int) and (code in (408, 429) or code >= 500):
                        out[cid] = _Outcome(unanswered=why)
                    else:
                        out[cid] = _Outcome(refused=why)
                else:
                    code = error.get("code") if isinstance(error, Mapping) else None
                    out[cid] = _Outcome(unanswered=f"{code or 'no answer'} in batch {batch_id}")
        return out

    async def cancel(self, batch_id: str) -> None:
        await self.call("POST", f"/batches/{batch_id}/cancel")


class _AnthropicBatches(_API):
    """Anthropic's Message Batches API (API reference, "Message Batches")."""

    kind = "anthropic"
    max_count = 100_000
    max_bytes = 256 * 10**6

    async def submit(
        self, items: Sequence[tuple[str, str, Mapping[str, Any]]], key: str
    ) -> tuple[str, str]:
        created = await self.call(
            "POST",
            "/v1/messages/batches",
            json_body={"requests": [{"custom_id": cid, "params": body} for cid, _p, body in items]},
        )
        return str(created["id"]), str(created.get("processing_status"))

    async def poll(self, batch_id: str) -> tuple[bool, str, Mapping[str, Any]]:
        document = await self.call("GET", f"/v1/messages/batches/{batch_id}")
        status = str(document.get("processing_status"))
        return status == "ended", status, document

    async def results(self, batch_id: str, document: Mapping[str, Any]) -> dict[str, _Outcome]:
        # The results' own path on the API's host: a results_url elsewhere is not followed.
        raw = await self.call("GET", f"/v1/messages/batches/{batch_id}/results", raw=True)
        out: dict[str, _Outcome] = {}
        for line in _jsonl(raw):
            cid, result = line.get("custom_id"), line.get("result")
            if not isinstance(cid, str) or not isinstance(result, Mapping):
                continue
            kind = result.get("type")
            if kind == "succeeded":
                out[cid] = _Outcome(data=result.get("message"))
            elif kind == "errored":
                error = result.get("error")
                inner = error.get("error") if isinstance(error, Mapping) else None
                etype = inner.get("type") if isinstance(inner, Mapping) else None
                message = inner.get("message") if isinstance(inner, Mapping) else None
                why = f"{etype or 'error'} in batch {batch_id}" + (
                    f": {message}" if message else ""
                )
                if etype in ("invalid_request_error", "not_found_error", "permission_error"):
                    out[cid] = _Outcome(refused=why)
                else:
                    out[cid] = _Outcome(unanswered=why)
            else:
                out[cid] = _Outcome(unanswered=f"{kind or 'no answer'} in batch {batch_id}")
        return out

    async def cancel(self, batch_id: str) -> None:
        await self.call("POST", f"/v1/messages/batches/{batch_id}/cancel")


class _GeminiBatches(_API):
    """Gemini's Batch API with inline requests (API reference, "Batch API":
    ``models.batchGenerateContent``, ``batches.get``, ``batches.cancel``)."""

    kind = "gemini"
    max_count = 100_000
    max_bytes = 20 * 10**6  # inline requests: the whole request under 20 MB

    async def submit(
        self, items: Sequence[tuple[str, str, Mapping[str, Any]]], key: str
    ) -> tuple[str, str]:
        path = items[0][1].replace(":generateContent", ":batchGenerateContent")
        requests = [{"request": body, "metadata": {"key": cid}} for cid, _p, body in items]
        created = await self.call(
            "POST",
            path,
            json_body={
                "batch": {
                    "display_name": f"evalstats-{key}",
                    "input_config": {"requests": {"requests": requests}},
                }
            },
        )
        name = str(created["name"])
        state = (created.get("metadata") or {}).get("state")
        return name.removeprefix("batches/"), str(state)

    async def poll(self, batch_id: str) -> tuple[bool, str, Mapping[str, Any]]:
        document = await self.call("GET", f"/batches/{batch_id}")
        state = str((document.get("metadata") or {}).get("state"))
        if state == "BATCH_STATE_FAILED":
            error = document.get("error") or {}
            raise ProviderError(
                f"gemini: batch {batch_id} failed: {error.get('message') or 'no reason given'}"
            )
        return bool(document.get("done")), state, document

    async def results(self, batch_id: str, document: Mapping[str, Any]) -> dict[str, _Outcome]:
        out: dict[str, _Outcome] = {}
        response = document.get("response") or {}
        holder = response.get("inlinedResponses") or {}
        entries = holder.get("inlinedResponses") if isinstance(holder, Mapping) else None
        for entry in entries or ():
            if not isinstance(entry, Mapping):
                continue
            meta = entry.get("metadata")
            cid = meta.get("key") if isinstance(meta, Mapping) else None
            if not isinstance(cid, str):
                continue
            if isinstance(entry.get("response"), Mapping):
                out[cid] = _Outcome(data=entry["response"])
                continue
            error = entry.get("error") if isinstance(entry.get("error"), Mapping) else {}
            code, message = error.get("code"), error.get("message")
            why = f"error {code} in batch {batch_id}" + (f": {message}" if message else "")
            # google.rpc codes: 3 invalid argument, 5 not found, 7 permission denied.
            if code in (3, 5, 7, 400, 403, 404):
                out[cid] = _Outcome(refused=why)
            else:
                out[cid] = _Outcome(unanswered=why)
        return out

    async def cancel(self, batch_id: str) -> None:
        await self.call("POST", f"/batches/{batch_id}:cancel")


_APIS: dict[str, type[_API]] = {
    "openai": _OpenAIBatches,
    "anthropic": _AnthropicBatches,
    "gemini": _GeminiBatches,
}

#: The provider kinds with a batch API evalstats sends batches to.
BATCH_KINDS: tuple[str, ...] = tuple(_APIS)


# --- the task -------------------------------------------------------------------------


@dataclass
class _Waiter:
    future: asyncio.Future[Any]
    path: str
    body: dict[str, Any]
    settings: dict[str, Any]


@dataclass
class _Known:
    """A batch the file lists: its requests, and those it left unanswered once ended."""

    requests: set[str] = field(default_factory=set)
    unanswered: set[str] = field(default_factory=set)
    ended: bool = False
    key: str | None = None
    submitted: bool = False


class BatchedTask:
    """A provider whose requests go through its batch API; see the module docstring.

    It answers as the provider does (the same request bodies, the same
    answers and traces, with ``"batch"``: the batch's id added to the trace);
    the engine attaches the results writer (:meth:`attach`) before the first
    sample.
    """

    def __init__(self, provider: Provider, variant: str, options: BatchOptions) -> None:
        self.provider = provider
        self.variant = variant
        self.options = options
        self.api = _APIS[provider.kind](provider)
        self.name = getattr(provider, "name", provider.kind)
        self.writer: Any = None
        self.known: dict[str, str] = {}  # custom_id -> batch id, from the file
        self.batches: dict[str, _Known] = {}
        self.pending_keys: dict[str, list[str]] = {}  # submitting, never recorded submitted
        self.adopting: dict[str, asyncio.Future[str | None]] = {}
        self.waiting: dict[str, _Waiter] = {}
        self.queue: list[tuple[str, str, dict[str, Any]]] = []
        self.tried: set[str] = set()
        self.held: dict[str, dict[str, _Outcome]] = {}  # batch id -> results not yet taken
        self.watchers: dict[str, asyncio.Task[None]] = {}
        self._flusher: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self.submitted = 0
        self.rng = random.Random()

    # -- as a task

    def describe(self) -> dict[str, Any]:
        return self.provider.describe()

    async def prepare(self) -> None:
        prepare = getattr(self.provider, "prepare", None)
        if prepare is not None:
            await prepare()

    def attach(self, writer: Any, recorded: Sequence[Mapping[str, Any]]) -> None:
        """Write this variant's batch records with ``writer``; ``recorded`` are the batch
        records the file already holds (a resumed run), whose batches are polled."""
        self.writer = writer
        for record in recorded:
            if record.get("variant") != self.variant:
                continue
            batch_id = str(record.get("id"))
            state = record.get("state")
            if state == "submitting":
                self.pending_keys[batch_id] = list(record.get("requests") or ())
                continue
            known = self.batches.setdefault(batch_id, _Known())
            if isinstance(record.get("key"), str):
                self.pending_keys.pop(str(record["key"]), None)
            if state == "submitted":
                known.submitted = True
                known.requests.update(record.get("requests") or ())
                for cid in known.requests:
                    self.known[cid] = batch_id
            elif state in ("ended", "cancelled"):
                known.ended = True
                known.unanswered.update(record.get("unanswered") or ())
        for batch_id, known in self.batches.items():
            for cid in known.unanswered:
                # Unanswered there: sent again in a later batch, or to be sent again.
                if self.known.get(cid) == batch_id:
                    del self.known[cid]

    async def run(self, prompt: Any, *, seed: int) -> Any:
        from .._tasks import TaskResult

        completion, from_batch = await self.request(custom_id(seed), prompt, seed=seed)
        trace = completion.trace()
        trace["batch"] = from_batch
        return TaskResult(
            answer=completion.answer, trace=trace, tokens=completion.tokens, model=completion.model
        )

    async def request(self, cid: str, prompt: Any, *, seed: int | None) -> tuple[Any, str]:
        """The provider's :class:`~evalstats.running.providers._base.Completion` for
        ``prompt``, sent as request ``cid`` in a batch (or read from the batch the file
        lists it in), and the id of the batch that answered it."""
        self._start()
        method, path, body, settings = self.provider.prepared(prompt, seed=seed)
        if cid in self.waiting:
            raise ProviderError(f"{self.provider.kind}: two samples share the request id {cid}")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[cid] = _Waiter(future, path, body, settings)
        first = cid not in self.tried
        self.tried.add(cid)
        try:
            batch_id = self.known.get(cid) if first else None
            if batch_id is None and first:
                batch_id = await self._adopted(cid)
            if batch_id is not None:
                self._watch(batch_id)
                held = self.held.get(batch_id)
                if held is not None and cid in held:
                    self._resolve(batch_id, cid, held.pop(cid))
            else:
                self.queue.append((cid, path, body))
                assert self._wake is not None
                self._wake.set()
            completion, from_batch = await future
        finally:
            self.waiting.pop(cid, None)
        self.tried.discard(cid)  # answered: nothing about it is kept
        return completion, from_batch

    async def cancel_unfinished(self) -> int:
        """Cancel at the provider the batches this run submitted that have not ended (a run
        interrupted); how many. Their answered requests are still read on resume."""
        cancelled = 0
        for batch_id, known in list(self.batches.items()):
            if known.submitted and not known.ended:
                with contextlib.suppress(ProviderError):
                    await self.api.cancel(batch_id)
                    cancelled += 1
        return cancelled

    async def aclose(self) -> None:
        for task in [self._flusher, *self.watchers.values()]:
            if task is not None:
                task.cancel()
        for task in [self._flusher, *self.watchers.values()]:
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._flusher = None
        self.watchers.clear()
        await self.provider.aclose()

    # -- batching

    def _start(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._wake = asyncio.Event()
            self._slots = asyncio.Semaphore(self.options.in_flight)
            self._flusher = asyncio.ensure_future(self._flush_forever())

    async def _adopted(self, cid: str) -> str | None:
        """The batch created for ``cid`` whose record was cut off before its id was
        written (found by its key, where the API can), recorded now; or None.

        Every request of that batch waits on the one look for it, so none of them
        is sent again while the look is under way."""
        for key, requests in self.pending_keys.items():
            if cid in requests:
                look = self.adopting.get(key)
                if look is None:
                    look = self.adopting[key] = asyncio.ensure_future(self._adopt(key, requests))
                return await asyncio.shield(look)
        return None

    async def _adopt(self, key: str, requests: list[str]) -> str | None:
        batch_id = await self.api.find(key)
        if batch_id is None:
            return None
        self._write({"id": batch_id, "state": "submitted", "key": key, "requests": list(requests)})
        self.batches[batch_id] = _Known(requests=set(requests), submitted=True)
        for other in requests:
            self.known.setdefault(other, batch_id)
        return batch_id

    async def _flush_forever(self) -> None:
        assert self._wake is not None and self._slots is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            # Let more requests join, until the batch is full or none came for a while.
            while len(self.queue) < self.options.size:
                size = len(self.queue)
                await asyncio.sleep(self.options.linger_s)
                if len(self.queue) == size:
                    break
            while self.queue:
                items = self._take()
                await self._slots.acquire()
                task = asyncio.ensure_future(self._send(items))
                task.add_done_callback(lambda _t: self._slots.release())  # type: ignore[union-attr]

    def _take(self) -> list[tuple[str, str, dict[str, Any]]]:
        """The next batch's requests: up to the size and the provider's limits."""
        limit = min(self.options.size, self.api.max_count)
        taken, total = [], 0
        while self.queue and len(taken) < limit:
            cid, path, body = self.queue[0]
            size = self.api.line_bytes(cid, path, body)
            if taken and total + size > self.api.max_bytes:
                break
            taken.append(self.queue.pop(0))
            total += size
        return taken

    async def _send(self, items: list[tuple[str, str, dict[str, Any]]]) -> None:
        ids = [cid for cid, _p, _b in items]
        key = uuid.uuid4().hex
        try:
            if self.api.find.__func__ is not _API.find:  # type: ignore[attr-defined]
                # Written first, so a batch created just before a kill is found again.
                self._write({"id": key, "state": "submitting", "requests": ids})
            batch_id, status = await self._submit(items, key)
        except Exception as exc:
            self._fail(ids, exc)
            return
        self.submitted += 1
        self._write(
            {"id": batch_id, "state": "submitted", "key": key, "requests": ids, "status": status}
        )
        self.batches[batch_id] = _Known(requests=set(ids), submitted=True)
        for cid in ids:
            self.known[cid] = batch_id
        await self._follow(batch_id)

    async def _submit(
        self, items: list[tuple[str, str, dict[str, Any]]], key: str
    ) -> tuple[str, str]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self.api.submit(items, key)
            except TransientProviderError as exc:
                if attempt > 3:
                    raise
                wait = exc.retry_after if exc.retry_after is not None else 2.0**attempt
                await asyncio.sleep(min(60.0, max(0.0, wait)))

    def _watch(self, batch_id: str) -> None:
        if batch_id not in self.watchers and batch_id not in self.held:
            self.watchers[batch_id] = asyncio.ensure_future(self._follow(batch_id))

    async def _follow(self, batch_id: str) -> None:
        """Poll a batch until it ends (or the time limit), then answer its waiters."""
        started = time.monotonic()
        first = True
        while True:
            if not first:
                await asyncio.sleep(self.options.poll_s)
            first = False
            try:
                ended, status, document = await self.api.poll(batch_id)
            except TransientProviderError:
                ended, status, document = False, "unknown", {}
                await asyncio.sleep(_POLL_RETRY_S)
            except ProviderError as exc:
                self._fail_batch(batch_id, exc)
                return
            if ended:
                break
            if time.monotonic() - started > self.options.time_limit_s:
                self._fail_batch(
                    batch_id,
                    ProviderError(
                        f"{self.provider.kind} batch {batch_id} has not ended after "
                        f"{self.options.time_limit_s:g} s (status {status}; the batch time "
                        "limit); it is left running at the provider, and --resume polls it again"
                    ),
                )
                return
        try:
            outcomes = await self.api.results(batch_id, document)
        except Exception as exc:
            self._fail_batch(batch_id, exc)
            return
        known = self.batches.setdefault(batch_id, _Known())
        unanswered = sorted(
            cid for cid in known.requests if cid not in outcomes or outcomes[cid].unanswered
        )
        if not known.ended:
            known.ended = True
            self._write(
                {
                    "id": batch_id,
                    "state": "cancelled" if status in ("cancelled", "canceled") else "ended",
                    "status": status,
                    "answered": len(known.requests) - len(unanswered),
                    "unanswered": unanswered,
                }
            )
        for cid in known.requests:
            outcomes.setdefault(cid, _Outcome(unanswered=f"no result in batch {batch_id}"))
        self.held[batch_id] = outcomes
        for cid in list(outcomes):
            if cid in self.waiting and self.known.get(cid) == batch_id:
                self._resolve(batch_id, cid, outcomes.pop(cid))
        known.requests.clear()  # answered or held: the ids are not needed again
        if not outcomes:
            self.held.pop(batch_id, None)
        self.watchers.pop(batch_id, None)

    def _resolve(self, batch_id: str, cid: str, outcome: _Outcome) -> None:
        waiter = self.waiting.get(cid)
        if waiter is None or waiter.future.done():
            return
        # Answered once: a retry of this request goes to a new batch.
        if self.known.get(cid) == batch_id:
            del self.known[cid]
        kind = self.provider.kind
        if outcome.refused is not None:
            waiter.future.set_exception(ProviderError(f"{kind}: request {cid}: {outcome.refused}"))
        elif outcome.unanswered is not None:
            waiter.future.set_exception(BatchUnanswered(f"{kind}: {outcome.unanswered}"))
        else:
            try:
                done = self.provider.completed(
                    waiter.path, waiter.body, waiter.settings, outcome.data
                )
            except Exception as exc:
                waiter.future.set_exception(exc)
            else:
                waiter.future.set_result((done, batch_id))

    def _fail(self, ids: Iterable[str], error: BaseException) -> None:
        for cid in ids:
            waiter = self.waiting.get(cid)
            if waiter is not None and not waiter.future.done():
                waiter.future.set_exception(error)

    def _fail_batch(self, batch_id: str, error: BaseException) -> None:
        known = self.batches.get(batch_id)
        self._fail(
            [cid for cid, b in self.known.items() if b == batch_id]
            if known is None
            else known.requests,
            error,
        )
        self.watchers.pop(batch_id, None)

    def _write(self, record: dict[str, Any]) -> None:
        if self.writer is None:
            return
        full = {
            "id": record["id"],
            "provider": self.provider.kind,
            "variant": self.variant,
            "state": record["state"],
            "at": _now(),
            **{k: v for k, v in record.items() if k not in ("id", "state")},
        }
        self.writer.write_batch(full)


def batched(provider: Any, variant: str, options: BatchOptions) -> BatchedTask:
    """``provider`` wrapped to send its requests in batches; refuses a task that is not a
    provider with a batch API, in one line."""
    kind = getattr(provider, "kind", None)
    if not isinstance(provider, Provider) or kind not in _APIS:
        what = (
            f"{kind}:{getattr(provider, 'model', '')}"
            if isinstance(provider, Provider)
            else getattr(provider, "name", type(provider).__name__)
        )
        raise InvalidArgument(
            f"variant {variant!r} ({what}) has no batch API evalstats can use; --batch "
            f"takes the providers {', '.join(k + ':' for k in BATCH_KINDS)}"
        )
    return BatchedTask(provider, variant, options)


# --- the judge ------------------------------------------------------------------------

#: The name a judge's batches are recorded under, in place of a variant's (no variant
#: can be named so: a variant's name has no parentheses).
JUDGE_BATCHES = "(judge)"

#: While the engine asks a batched judge: ``None`` when the check has yet to give its
#: prompt, else the completion the batch gave for it.
_JUDGE_TURN: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "evalstats_judge_turn", default=None
)


class _JudgeAsked(ProviderError):
    """A batched judge's prompt, raised out of the check so that the engine can send it
    in a batch (a ProviderError, so that the check's wrapper lets it through)."""

    def __init__(self, prompt: str) -> None:
        super().__init__("the judge's prompt goes in a batch")
        self.prompt = prompt


class BatchedJudge:
    """A provider's judge (``prompt -> text``) whose calls go through its batch API.

    ``run --batch`` puts one in place of a judge named on the command line whose
    provider has a batch API (``openai:``, ``anthropic:``, ``gemini:``). The engine
    scores a judged check with :meth:`verdict`, on its event loop, in two steps: the
    check is called with this judge, which raises its prompt instead of answering;
    the prompt is sent as the request ``judge_custom_id(sample seed, check name)`` of
    the judge's own batches (a :class:`BatchedTask` whose records are those of
    :data:`JUDGE_BATCHES`); and the check is called again, the judge now giving the
    batch's reply. So the check parses the reply as it parses a direct call's, no
    worker thread waits on a batch, and a sample's record, written once when its
    answer and every verdict are in, holds the verdicts a run without batches gives
    for the same replies. Called outside :meth:`verdict` (a check called by hand),
    it asks the provider directly.
    """

    def __init__(self, direct: Any, options: BatchOptions) -> None:
        self.direct = direct
        self.kind = direct.provider.kind
        self.model = getattr(direct.provider, "model", "")
        # Its own copy of the provider: its HTTP client lives on the engine's loop.
        self.task = BatchedTask(direct.provider.fresh_copy(), JUDGE_BATCHES, options)

    def __call__(self, prompt: str) -> str:
        return str(self.complete(prompt).answer)

    def complete(self, prompt: str) -> Any:
        """The provider's completion for ``prompt``: the batch's, in :meth:`verdict`
        (with the tokens the batch's result reports), else a direct call's."""
        turn = _JUDGE_TURN.get()
        if turn is None:
            return self.direct.complete(prompt)
        if turn[0] is None:
            raise _JudgeAsked(prompt)
        return turn[0]

    async def verdict(self, check: Any, subject: Any, name: str, seed: int) -> Any:
        """The verdict of the judged ``check`` (named ``name``) on ``subject``, of the
        sample whose seed is ``seed``, its judge's call sent in a batch."""
        from .._checks import run_check

        turn: list[Any] = [None]
        token = _JUDGE_TURN.set(turn)
        try:
            try:
                # The check decides without its judge (an empty answer), or gives its prompt.
                return run_check(check, subject)
            except _JudgeAsked as asked:
                prompt = asked.prompt
            completion, _batch = await self.task.request(
                judge_custom_id(seed, name), prompt, seed=None
            )
            turn[0] = completion
            return run_check(check, subject)
        finally:
            _JUDGE_TURN.reset(token)

    def describe(self) -> dict[str, Any]:
        """What the manifest records of the judge's batches."""
        return {"provider": self.kind, "model": self.model}

    def __repr__(self) -> str:
        return f"BatchedJudge({self.direct!r})"


def batched_judge(judge: Any, options: BatchOptions) -> BatchedJudge | None:
    """``judge`` sending its calls in batches, when it is a provider's judge whose
    provider has a batch API; else None (the judge is left as it is)."""
    from . import ProviderJudge

    if isinstance(judge, ProviderJudge) and judge.provider.kind in _APIS:
        return BatchedJudge(judge, options)
    return None
