"""The stand-in server's batch endpoints, in each provider's wire format.

Three batch APIs over the same stand-in models, so that ``run --batch`` is
tested offline against what the services document:

========================================================  ===============================
``POST /v1/files`` (multipart, ``purpose=batch``)          OpenAI: upload the JSONL input
``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``     a file, and its bytes
``POST /v1/batches``, ``GET /v1/batches[/{id}]``           create, list, read a batch
``POST /v1/batches/{id}/cancel``                           cancel it
``POST /v1/messages/batches``                              Anthropic: create (inline requests)
``GET /v1/messages/batches/{id}[/results]``                read it; its results as JSONL
``POST /v1/messages/batches/{id}/cancel``                  cancel it
``POST /v1beta/models/{model}:batchGenerateContent``       Gemini: create (inline requests)
``GET /v1beta/batches/{id}``, ``POST ...:cancel``          read the operation; cancel it
========================================================  ===============================

OpenAI (API reference, "Batch" and "Files"): each input line is ``{"custom_id",
"method": "POST", "url": "/v1/chat/completions", "body"}``; a batch goes
``validating``, ``in_progress``, then ``completed``, ``expired``, ``failed``
or ``cancelled``; its output file holds ``{"id", "custom_id", "response":
{"status_code", "request_id", "body"}, "error": null}`` per request, in no
particular order (here shuffled, so a client that relies on the order fails),
and its error file ``{"custom_id", "response": null, "error": {"code":
"batch_expired" | "batch_cancelled", "message"}}``. At most 50,000 requests.

Anthropic (API reference, "Message Batches"): ``{"requests": [{"custom_id",
"params"}]}`` with ids of 1 to 64 letters, digits, ``-`` or ``_``;
``processing_status`` ``in_progress``, ``canceling``, ``ended``; the results
are JSONL lines ``{"custom_id", "result": {"type": "succeeded", "message"} |
{"type": "errored", "error"} | {"type": "canceled"} | {"type": "expired"}}``.
At most 100,000 requests.

Gemini (API reference, "Batch API"): ``{"batch": {"display_name",
"input_config": {"requests": {"requests": [{"request", "metadata": {"key"}}]}}}}``
answered with a long-running operation ``{"name": "batches/ID", "metadata":
{"state": "BATCH_STATE_PENDING" | "BATCH_STATE_RUNNING" | ...}, "done"}``;
once done, ``response.inlinedResponses.inlinedResponses`` lists a
``{"response"}`` or ``{"error"}`` per request, in the order sent. An expired
batch (``BATCH_STATE_EXPIRED``) has no responses.

The answers are the stand-in models' (:meth:`StandinApp.openai_answer`): an
OpenAI request with a seed gets exactly what ``/v1/chat/completions`` gives
it. Anthropic's API has no seed: a request's answer is seeded from its
``custom_id``, so it is the same in every batch it is sent in.

Knobs (:class:`BatchKnobs`), each draw made per request from a hash of the
server's seed, the batch's number and the request's id (so a request sent
again in a later batch draws afresh):

* ``delay_s``: seconds from creation until a batch ends;
* ``error_rate``: the probability that a request errors (HTTP 500 inside the
  output, Anthropic ``errored``, a Gemini error status);
* ``expire_rate``: the probability that a request expires; a batch with one
  ends as ``expired`` (Gemini: ``BATCH_STATE_EXPIRED``, with no responses);
  with ``expire_prefix``, only requests whose ``custom_id`` starts with it
  may expire (``"ej-"``: the judge's requests, ``"es-"``: the answers');
* ``never_ends``: every batch stays in progress until it is cancelled.

:meth:`BatchService.creations` counts the batches created, per API.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .._validate import as_rate
from ..errors import InvalidArgument

__all__ = ["BATCH_LIMITS", "BatchKnobs", "BatchService"]

#: The most requests one batch may hold, per API (OpenAI 50,000; Anthropic 100,000;
#: Gemini's inline requests are bounded by the 20 MB body rather than a count).
BATCH_LIMITS = {"openai": 50_000, "anthropic": 100_000, "gemini": 100_000}

#: The largest batch body the server reads: OpenAI's input file limit (200 MB).
MAX_BATCH_BODY_BYTES = 200 * 2**20

_ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMPLETION_WINDOW_S = 24 * 3600
_GEMINI_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta."


@dataclass(frozen=True)
class BatchKnobs:
    """How the stand-in's batches behave; see the module docstring."""

    delay_s: float = 0.0
    error_rate: float = 0.0
    expire_rate: float = 0.0
    never_ends: bool = False
    expire_prefix: str = ""

    def __post_init__(self) -> None:
        d = self.delay_s
        if (
            isinstance(d, bool)
            or not isinstance(d, int | float)
            or not (math.isfinite(d) and d >= 0)
        ):
            raise InvalidArgument(f"batch_delay_s={d!r} must be seconds, finite and at least 0")
        object.__setattr__(self, "delay_s", float(d))
        object.__setattr__(self, "error_rate", as_rate("batch_error_rate", self.error_rate))
        object.__setattr__(self, "expire_rate", as_rate("batch_expire_rate", self.expire_rate))
        if not isinstance(self.never_ends, bool):
            raise InvalidArgument(f"batch_never_ends={self.never_ends!r} must be True or False")
        if not isinstance(self.expire_prefix, str):
            raise InvalidArgument(
                f"expire_prefix={self.expire_prefix!r} must be the start of a custom_id (text)"
            )


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass
class _Request:
    custom_id: str
    outcome: str  # "succeeded", "errored", "expired"
    answer: Any = None  # the API's answer document, or its error
    error_status: int = 500
    meta: Any = None  # what the request carried to be sent back (Gemini's metadata)


@dataclass
class _Batch:
    id: str
    api: str
    number: int
    created: float
    requests: list[_Request]
    info: dict[str, Any] = field(default_factory=dict)
    cancelled: float | None = None
    output_ids: tuple[str | None, str | None] | None = None


class _Refused(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def _dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _jsonl(documents: list[Any]) -> bytes:
    return b"".join(_dumps(d) + b"\n" for d in documents)


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _uniforms(seed: int, number: int, custom_id: str) -> tuple[float, float, int]:
    digest = hashlib.sha256(f"evalstats.standin.batch:{seed}:{number}:{custom_id}".encode())
    raw = digest.digest()
    a, b = (int.from_bytes(raw[i : i + 7], "big") / 2**56 for i in (0, 7))
    return a, b, int.from_bytes(raw[14:22], "big")


def _id_seed(custom_id: str) -> int:
    """The seed of a request that carries none: from its id, the same in every batch."""
    digest = hashlib.sha256(f"evalstats.standin.batch.answer:{custom_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    raise _Refused(400, "messages: each content must be a string or a list of blocks")


class BatchService:
    """The batch routes of one :class:`~evalstats.demo._server.StandinApp`.

    ``answer(request, index)`` is the app's OpenAI answer to a chat request
    (raising an error with ``status`` and ``message`` for a bad one).
    """

    def __init__(
        self,
        answer: Callable[[dict[str, Any], int], dict[str, Any]],
        knobs: BatchKnobs,
        *,
        seed: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.answer = answer
        self.knobs = knobs
        self.seed = seed
        self.clock = clock
        self.base_url = ""
        self._lock = threading.Lock()
        self._files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._batches: dict[str, _Batch] = {}
        self._created: Counter[str] = Counter()

    def creations(self) -> dict[str, int]:
        """Batches created so far, per API (``openai``, ``anthropic``, ``gemini``)."""
        with self._lock:
            return dict(self._created)

    # --- routing -----------------------------------------------------------------

    def route(self, method: str, path: str, body: bytes) -> Reply | None:
        """The reply to a batch route, or None when ``path`` is not one."""
        api = (
            "anthropic"
            if path.startswith("/v1/messages/batches")
            else "gemini"
            if path.startswith("/v1beta/")
            else "openai"
            if path.startswith(("/v1/files", "/v1/batches"))
            else None
        )
        if api is None:
            return None
        try:
            return self._route(api, method, path, body)
        except _Refused as exc:
            return _error(api, exc)

    def _route(self, api: str, method: str, path: str, body: bytes) -> Reply:
        parts = path.strip("/").split("/")
        if api == "openai":
            if parts[:2] == ["v1", "files"]:
                if len(parts) == 2 and method == "POST":
                    return self._upload(body)
                if len(parts) == 3 and method == "GET":
                    return Reply(200, _dumps(self._file(parts[2])[0]))
                if len(parts) == 4 and parts[3] == "content" and method == "GET":
                    return Reply(200, self._file(parts[2])[1], "application/octet-stream")
            else:
                if len(parts) == 2 and method == "POST":
                    return self._openai_create(body)
                if len(parts) == 2 and method == "GET":
                    with self._lock:
                        mine = [b for b in self._batches.values() if b.api == "openai"]
                    data = [self._openai_object(b) for b in reversed(mine)]
                    return Reply(200, _dumps({"object": "list", "data": data, "has_more": False}))
                if len(parts) == 3 and method == "GET":
                    return Reply(200, _dumps(self._openai_object(self._batch(parts[2], api))))
                if len(parts) == 4 and parts[3] == "cancel" and method == "POST":
                    batch = self._cancel(parts[2], api)
                    return Reply(200, _dumps(self._openai_object(batch)))
        elif api == "anthropic":
            rest = parts[3:]
            if not rest and method == "POST":
                return self._anthropic_create(body)
            if len(rest) == 1 and method == "GET":
                return Reply(200, _dumps(self._anthropic_object(self._batch(rest[0], api))))
            if len(rest) == 2 and rest[1] == "results" and method == "GET":
                return self._anthropic_results(self._batch(rest[0], api))
            if len(rest) == 2 and rest[1] == "cancel" and method == "POST":
                return Reply(200, _dumps(self._anthropic_object(self._cancel(rest[0], api))))
        else:
            tail = "/".join(parts[1:])
            if tail.startswith("models/") and tail.endswith(":batchGenerateContent"):
                if method == "POST":
                    model = tail.removeprefix("models/").removesuffix(":batchGenerateContent")
                    return self._gemini_create(model, body)
            elif tail.startswith("batches/"):
                name = tail.removeprefix("batches/")
                if name.endswith(":cancel") and method == "POST":
                    self._cancel(name.removesuffix(":cancel"), api)
                    return Reply(200, b"{}")
                if method == "GET":
                    return Reply(200, _dumps(self._gemini_operation(self._batch(name, api))))
        raise _Refused(404, f"Invalid URL ({method} {path})", "not_found_error")

    # --- shared ----------------------------------------------------------------

    def _batch(self, batch_id: str, api: str) -> _Batch:
        with self._lock:
            batch = self._batches.get(batch_id)
        if batch is None or batch.api != api:
            raise _Refused(404, f"No batch found with id '{batch_id}'", "not_found_error")
        return batch

    def _cancel(self, batch_id: str, api: str) -> _Batch:
        batch = self._batch(batch_id, api)
        with self._lock:
            if batch.cancelled is None and not self._ended(batch):
                batch.cancelled = self.clock()
        return batch

    def _ended(self, batch: _Batch) -> bool:
        if batch.cancelled is not None:
            return True
        if self.knobs.never_ends:
            return False
        return self.clock() - batch.created >= self.knobs.delay_s

    def _expired(self, batch: _Batch) -> bool:
        return any(r.outcome == "expired" for r in batch.requests)

    def _new(self, api: str, ids: list[str], info: dict[str, Any]) -> tuple[_Batch, list[tuple]]:
        """A new batch of the requests ``ids``: its outcomes drawn, its number taken."""
        with self._lock:
            self._created[api] += 1
            number = sum(self._created.values())
        prefix = {"openai": "batch_", "anthropic": "msgbatch_", "gemini": ""}[api]
        batch = _Batch(
            id=f"{prefix}{uuid.uuid4().hex[:24]}",
            api=api,
            number=number,
            created=self.clock(),
            requests=[],
            info=info,
        )
        draws = []
        for custom_id in ids:
            u_expire, u_error, index = _uniforms(self.seed, number, custom_id)
            outcome = (
                "expired"
                if u_expire < self.knobs.expire_rate
                and custom_id.startswith(self.knobs.expire_prefix)
                else "errored"
                if u_error < self.knobs.error_rate
                else "succeeded"
            )
            draws.append((custom_id, outcome, index))
        return batch, draws

    def _keep(self, batch: _Batch) -> None:
        with self._lock:
            self._batches[batch.id] = batch

    def _chat(self, request: dict[str, Any], index: int) -> tuple[int, dict[str, Any]]:
        """``(status, document)`` of the app's chat answer: 200 and a completion, or the
        error the chat route would give."""
        try:
            return 200, self.answer(request, index)
        except Exception as exc:  # the app's own 400 and 404, with their message
            status = getattr(exc, "status", None)
            if not isinstance(status, int):
                raise
            message = getattr(exc, "message", str(exc))
            return status, {"error": {"message": message, "type": "invalid_request_error"}}

    # --- OpenAI ------------------------------------------------------------------

    def _upload(self, body: bytes) -> Reply:
        fields = _multipart(body)
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if "file" not in fields:
            raise _Refused(400, "Missing required parameter: 'file'.")
        if purpose != "batch":
            raise _Refused(400, f"'{purpose}' is not a purpose this stand-in takes; use 'batch'")
        filename, content = fields["file"]
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        entry = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(self.clock()),
            "filename": filename or "upload.jsonl",
            "purpose": "batch",
            "status": "processed",
        }
        with self._lock:
            self._files[file_id] = (entry, content)
        return Reply(200, _dumps(entry))

    def _file(self, file_id: str) -> tuple[dict[str, Any], bytes]:
        with self._lock:
            found = self._files.get(file_id)
        if found is None:
            raise _Refused(404, f"No such File object: {file_id}", "not_found_error")
        return found

    def _openai_create(self, body: bytes) -> Reply:
        request = _object(body)
        for name in ("input_file_id", "endpoint", "completion_window"):
            if not isinstance(request.get(name), str):
                raise _Refused(400, f"Missing required parameter: '{name}'.")
        if request["endpoint"] != "/v1/chat/completions":
            raise _Refused(400, f"endpoint {request['endpoint']!r} is not /v1/chat/completions")
        if request["completion_window"] != "24h":
            raise _Refused(400, "completion_window must be '24h'")
        _entry, content = self._file(request["input_file_id"])
        lines, problems = [], []
        seen: set[str] = set()
        for number, raw in enumerate(content.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                problems.append((number, "the line is not valid JSON"))
                continue
            custom_id = line.get("custom_id") if isinstance(line, dict) else None
            if not isinstance(custom_id, str) or not custom_id:
                problems.append((number, "custom_id is missing"))
            elif custom_id in seen:
                problems.append((number, f"the custom_id {custom_id!r} is not unique"))
            elif line.get("method") != "POST" or line.get("url") != request["endpoint"]:
                problems.append((number, "method must be POST and url the batch's endpoint"))
            elif not isinstance(line.get("body"), dict):
                problems.append((number, "body must be an object"))
            else:
                seen.add(custom_id)
                lines.append(line)
        if len(lines) > BATCH_LIMITS["openai"]:
            problems.append((0, f"more than {BATCH_LIMITS['openai']:,} requests"))
        info = {
            "input_file_id": request["input_file_id"],
            "endpoint": request["endpoint"],
            "metadata": request.get("metadata"),
            "problems": problems,
        }
        batch, draws = self._new("openai", [ln["custom_id"] for ln in lines], info)
        for line, (custom_id, outcome, index) in zip(lines, draws, strict=True):
            req = _Request(custom_id, outcome)
            if outcome == "succeeded":
                status, document = self._chat(line["body"], index)
                req.answer, req.error_status = document, status
            batch.requests.append(req)
        self._keep(batch)
        return Reply(200, _dumps(self._openai_object(batch)))

    def _openai_status(self, batch: _Batch) -> str:
        if batch.info.get("problems"):
            return "failed"
        if batch.cancelled is not None:
            return "cancelled"
        if not self._ended(batch):
            return "in_progress"
        return "expired" if self._expired(batch) else "completed"

    def _openai_object(self, batch: _Batch) -> dict[str, Any]:
        status = self._openai_status(batch)
        done = status in ("completed", "expired", "cancelled")
        if done and batch.output_ids is None:
            self._openai_outputs(batch, status)
        output_id, error_id = batch.output_ids or (None, None)
        ok = sum(1 for r in batch.requests if r.outcome == "succeeded" and r.error_status == 200)
        end = batch.cancelled if batch.cancelled is not None else batch.created + self.knobs.delay_s
        problems = batch.info.get("problems") or []
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.info.get("endpoint"),
            "errors": (
                {
                    "object": "list",
                    "data": [
                        {"code": "invalid_request", "message": m, "param": None, "line": n or None}
                        for n, m in problems
                    ],
                }
                if problems
                else None
            ),
            "input_file_id": batch.info.get("input_file_id"),
            "completion_window": "24h",
            "status": status,
            "output_file_id": output_id,
            "error_file_id": error_id,
            "created_at": int(batch.created),
            "in_progress_at": None if problems else int(batch.created),
            "expires_at": int(batch.created) + _COMPLETION_WINDOW_S,
            "finalizing_at": int(end) if status in ("completed", "expired") else None,
            "completed_at": int(end) if status == "completed" else None,
            "failed_at": int(batch.created) if problems else None,
            "expired_at": int(end) if status == "expired" else None,
            "cancelling_at": int(batch.cancelled) if batch.cancelled is not None else None,
            "cancelled_at": int(batch.cancelled) if batch.cancelled is not None else None,
            "request_counts": {
                "total": len(batch.requests),
                "completed": ok if done else 0,
                "failed": len(batch.requests) - ok if done else 0,
            },
            "metadata": batch.info.get("metadata"),
        }

    def _openai_outputs(self, batch: _Batch, status: str) -> None:
        out, errors = [], []
        for r in batch.requests:
            line: dict[str, Any] = {
                "id": f"batch_req_{uuid.uuid4().hex[:24]}",
                "custom_id": r.custom_id,
            }
            if status == "cancelled" or r.outcome == "expired":
                code, why = (
                    ("batch_cancelled", "This request was not executed: the batch was cancelled.")
                    if status == "cancelled"
                    else (
                        "batch_expired",
                        "This request could not be executed before the completion window expired.",
                    )
                )
                errors.append({**line, "response": None, "error": {"code": code, "message": why}})
                continue
            if r.outcome == "errored":
                body = {
                    "error": {
                        "message": "The server had an error while processing your request "
                        "(stand-in batch fault).",
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                }
                status_code = 500
            else:
                body, status_code = r.answer, r.error_status
            request_id = f"req_{uuid.uuid4().hex[:24]}"
            out.append(
                {
                    **line,
                    "response": {
                        "status_code": status_code,
                        "request_id": request_id,
                        "body": body,
                    },
                    "error": None,
                }
            )
        # In no particular order, as the API says: a client must join by custom_id.
        random.Random(f"evalstats.standin.batch.order:{batch.id}").shuffle(out)
        ids: list[str | None] = []
        for documents, purpose in ((out, "batch_output"), (errors, "batch_output")):
            if not documents:
                ids.append(None)
                continue
            content = _jsonl(documents)
            file_id = f"file-{uuid.uuid4().hex[:24]}"
            entry = {
                "id": file_id,
                "object": "file",
                "bytes": len(content),
                "created_at": int(self.clock()),
                "filename": f"{batch.id}_{'output' if documents is out else 'error'}.jsonl",
                "purpose": purpose,
                "status": "processed",
            }
            with self._lock:
                self._files[file_id] = (entry, content)
            ids.append(file_id)
        batch.output_ids = (ids[0], ids[1])

    # --- Anthropic ----------------------------------------------------------------

    def _anthropic_create(self, body: bytes) -> Reply:
        request = _object(body)
        requests = request.get("requests")
        if not isinstance(requests, list) or not requests:
            raise _Refused(400, "requests: Field required, a non-empty list")
        if len(requests) > BATCH_LIMITS["anthropic"]:
            raise _Refused(400, f"requests: at most {BATCH_LIMITS['anthropic']:,} requests")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not _ANTHROPIC_ID.fullmatch(custom_id):
                raise _Refused(
                    400, f"requests.{i}.custom_id: must be 1 to 64 letters, digits, - or _"
                )
            if custom_id in seen:
                raise _Refused(400, f"requests.{i}.custom_id: {custom_id!r} is not unique")
            seen.add(custom_id)
            params = item.get("params")
            if not isinstance(params, dict) or not isinstance(params.get("messages"), list):
                raise _Refused(400, f"requests.{i}.params: must hold model, max_tokens, messages")
            if not isinstance(params.get("max_tokens"), int):
                raise _Refused(400, f"requests.{i}.params.max_tokens: Field required")
        batch, draws = self._new("anthropic", [r["custom_id"] for r in requests], {})
        for item, (custom_id, outcome, _index) in zip(requests, draws, strict=True):
            req = _Request(custom_id, outcome)
            if outcome == "succeeded":
                req.answer, req.error_status = self._anthropic_message(item["params"], custom_id)
            batch.requests.append(req)
        self._keep(batch)
        return Reply(200, _dumps(self._anthropic_object(batch)))

    def _anthropic_message(self, params: dict[str, Any], custom_id: str) -> tuple[Any, int]:
        chat = [{"role": "system", "content": params["system"]}] if params.get("system") else []
        try:
            chat += [
                {"role": m["role"], "content": _text(m["content"])} for m in params["messages"]
            ]
        except (KeyError, TypeError):
            return _anthropic_error_body(400, "messages: each needs a role and content"), 400
        request = {
            "model": params.get("model"),
            "messages": chat,
            "max_tokens": params["max_tokens"],
            "seed": _id_seed(custom_id),
        }
        for name in ("temperature", "top_p"):
            if name in params:
                request[name] = params[name]
        status, document = self._chat(request, 0)
        if status != 200:
            return _anthropic_error_body(status, document["error"]["message"]), status
        choice = document["choices"][0]
        usage = document["usage"]
        message = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": document["model"],
            "content": [{"type": "text", "text": choice["message"]["content"] or ""}],
            "stop_reason": "max_tokens" if choice["finish_reason"] == "length" else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage["prompt_tokens"],
                "output_tokens": usage["completion_tokens"],
            },
        }
        return message, 200

    def _anthropic_object(self, batch: _Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        counts = Counter()
        for r in batch.requests:
            if not ended:
                counts["processing"] += 1
            elif batch.cancelled is not None:
                counts["canceled"] += 1
            elif r.outcome == "succeeded" and r.error_status == 200:
                counts["succeeded"] += 1
            else:
                counts["expired" if r.outcome == "expired" else "errored"] += 1
        end = batch.cancelled if batch.cancelled is not None else batch.created + self.knobs.delay_s
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                k: counts[k] for k in ("processing", "succeeded", "errored", "canceled", "expired")
            },
            "ended_at": _iso(end) if ended else None,
            "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + _COMPLETION_WINDOW_S),
            "archived_at": None,
            "cancel_initiated_at": _iso(batch.cancelled),
            "results_url": (
                f"{self.base_url}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }

    def _anthropic_results(self, batch: _Batch) -> Reply:
        if not self._ended(batch):
            raise _Refused(400, f"Batch {batch.id} has not ended yet; its results are not ready")
        lines = []
        for r in batch.requests:
            if batch.cancelled is not None:
                result: dict[str, Any] = {"type": "canceled"}
            elif r.outcome == "expired":
                result = {"type": "expired"}
            elif r.outcome == "errored":
                result = {
                    "type": "errored",
                    "error": _anthropic_error_body(
                        500, "Internal server error (stand-in batch fault)"
                    ),
                }
            elif r.error_status != 200:
                result = {"type": "errored", "error": r.answer}
            else:
                result = {"type": "succeeded", "message": r.answer}
            lines.append({"custom_id": r.custom_id, "result": result})
        random.Random(f"evalstats.standin.batch.order:{batch.id}").shuffle(lines)
        return Reply(200, _jsonl(lines), "application/binary")

    # --- Gemini -------------------------------------------------------------------

    def _gemini_create(self, model: str, body: bytes) -> Reply:
        request = _object(body)
        spec = request.get("batch")
        config = None
        if isinstance(spec, dict):
            config = spec.get("input_config", spec.get("inputConfig"))
        holder = config.get("requests") if isinstance(config, dict) else None
        items = holder.get("requests") if isinstance(holder, dict) else None
        if not isinstance(items, list) or not items:
            raise _Refused(
                400, "batch.input_config.requests.requests: a non-empty list is required"
            )
        keys = []
        for i, item in enumerate(items):
            inner = item.get("request") if isinstance(item, dict) else None
            if not isinstance(inner, dict) or not isinstance(inner.get("contents"), list):
                raise _Refused(400, f"requests[{i}].request: contents are required")
            meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
            keys.append(str(meta.get("key", i)))
        info = {"model": model, "display_name": spec.get("display_name", spec.get("displayName"))}
        batch, draws = self._new("gemini", keys, info)
        batch.id = f"{uuid.uuid4().hex[:20]}"
        for item, (key, outcome, index) in zip(items, draws, strict=True):
            req = _Request(key, outcome)
            req.meta = item.get("metadata")
            if outcome == "succeeded":
                req.answer, req.error_status = self._gemini_response(model, item["request"], index)
            batch.requests.append(req)
        self._keep(batch)
        return Reply(200, _dumps(self._gemini_operation(batch)))

    def _gemini_response(self, model: str, request: dict[str, Any], index: int) -> tuple[Any, int]:
        chat = []
        system = request.get("systemInstruction", request.get("system_instruction"))
        if isinstance(system, dict):
            chat.append({"role": "system", "content": _text(system.get("parts"))})
        for content in request["contents"]:
            role = "assistant" if content.get("role") == "model" else "user"
            chat.append({"role": role, "content": _text(content.get("parts"))})
        config = request.get("generationConfig", request.get("generation_config")) or {}
        chat_request: dict[str, Any] = {"model": model, "messages": chat}
        if isinstance(config.get("seed"), int):
            chat_request["seed"] = config["seed"]
        if isinstance(config.get("maxOutputTokens"), int):
            chat_request["max_tokens"] = config["maxOutputTokens"]
        status, document = self._chat(chat_request, index)
        if status != 200:
            return {
                "code": status,
                "message": document["error"]["message"],
                "status": "INVALID_ARGUMENT",
            }, status
        choice = document["choices"][0]
        usage = document["usage"]
        return {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": choice["message"]["content"] or ""}],
                    },
                    "finishReason": "MAX_TOKENS" if choice["finish_reason"] == "length" else "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": usage["prompt_tokens"],
                "candidatesTokenCount": usage["completion_tokens"],
                "totalTokenCount": usage["total_tokens"],
            },
            "modelVersion": model,
        }, 200

    def _gemini_operation(self, batch: _Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        if batch.cancelled is not None:
            state = "BATCH_STATE_CANCELLED"
        elif not ended:
            state = "BATCH_STATE_RUNNING"
        elif self._expired(batch):
            state = "BATCH_STATE_EXPIRED"
        else:
            state = "BATCH_STATE_SUCCEEDED"
        name = f"batches/{batch.id}"
        n = len(batch.requests)
        ok = sum(1 for r in batch.requests if r.outcome == "succeeded" and r.error_status == 200)
        operation: dict[str, Any] = {
            "name": name,
            "metadata": {
                "@type": _GEMINI_TYPE + "GenerateContentBatch",
                "model": f"models/{batch.info.get('model')}",
                "displayName": batch.info.get("display_name"),
                "createTime": _iso(batch.created),
                "updateTime": _iso(self.clock()),
                "batchStats": {
                    "requestCount": str(n),
                    "pendingRequestCount": str(0 if ended else n),
                    "successfulRequestCount": str(ok if state == "BATCH_STATE_SUCCEEDED" else 0),
                },
                "state": state,
                "name": name,
            },
            "done": ended,
        }
        if state == "BATCH_STATE_SUCCEEDED":
            responses = []
            for r in batch.requests:
                meta = r.meta
                entry: dict[str, Any] = {}
                if r.outcome == "errored":
                    entry["error"] = {
                        "code": 13,
                        "message": "Internal error (stand-in batch fault)",
                        "status": "INTERNAL",
                    }
                elif r.error_status != 200:
                    entry["error"] = r.answer
                else:
                    entry["response"] = r.answer
                if meta is not None:
                    entry["metadata"] = meta
                responses.append(entry)
            operation["response"] = {
                "@type": _GEMINI_TYPE + "GenerateContentBatchOutput",
                "inlinedResponses": {"inlinedResponses": responses},
            }
        elif state == "BATCH_STATE_EXPIRED":
            operation["error"] = {
                "code": 4,
                "message": "The batch expired before it ran.",
                "status": "DEADLINE_EXCEEDED",
            }
        return operation


def _anthropic_error_body(status: int, message: str) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _error(api: str, exc: _Refused) -> Reply:
    if api == "anthropic":
        document: dict[str, Any] = _anthropic_error_body(exc.status, exc.message)
    elif api == "gemini":
        status = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(exc.status, "INTERNAL")
        document = {"error": {"code": exc.status, "message": exc.message, "status": status}}
    else:
        document = {
            "error": {"message": exc.message, "type": exc.kind, "param": None, "code": None}
        }
    return Reply(exc.status, _dumps(document))


def _object(body: bytes) -> dict[str, Any]:
    try:
        document = json.loads(body)
    except ValueError:
        raise _Refused(400, "The body is not valid JSON.") from None
    if not isinstance(document, dict):
        raise _Refused(400, "The body must be a JSON object.")
    return document


def _multipart(body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a ``multipart/form-data`` body, ``name -> (filename, bytes)``.

    The boundary is read from the body's first line (RFC 7578: the body starts
    with ``--`` and the boundary), so the route needs no header.
    """
    first, sep, _rest = body.partition(b"\r\n")
    if not sep or not first.startswith(b"--") or len(first) < 3:
        raise _Refused(400, "The upload must be multipart/form-data.")
    delimiter = b"\r\n" + first
    fields: dict[str, tuple[str | None, bytes]] = {}
    for chunk in (b"\r\n" + body).split(delimiter)[1:]:
        if chunk.startswith(b"--"):
            break
        head, _sep, content = chunk.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        disposition = ""
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if line.lower().startswith("content-disposition:"):
                disposition = line
        name = re.search(r'\bname="([^"]*)"', disposition)
        filename = re.search(r'\bfilename="([^"]*)"', disposition)
        if name is not None:
            fields[name.group(1)] = (filename.group(1) if filename else None, content)
    return fields
