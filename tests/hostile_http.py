"""A hostile model server on 127.0.0.1, for tests: it misbehaves in every way HTTP allows.

:class:`HostileServer` speaks the four wire formats the providers use and
answers a request according to the *mode* named by the first segment of its
path, so one server serves every test: a provider whose base URL is
``server.base_url("openai", "trickle")`` gets the trickle on every sample.

The mode applies to the sample requests (``/chat/completions``,
``/v1/messages``, ``:generateContent``, ``/api/chat``); every other request
(the endpoint check's ``GET`` of the base URL, Ollama's ``/api/show``,
``/api/tags`` and ``/api/version``) gets a small, well-formed reply. A mode
prefixed with ``setup-`` applies to those other requests instead, and the
samples are answered well.

Modes
-----
``ok``            a well-formed answer in the request's wire format
``delay``         the same answer after :data:`DELAY_S` seconds of silence
``trickle``       headers promising a 1 MB body, then one byte a second
``trickle-head``  the status line and headers themselves, one byte a second
``endless``       a chunked body that never ends
``huge``          ``Content-Length: 2147483648`` (2 GiB), and the bytes to go with it
``huge-close``    a body with no length, read to the close, that never ends
``gzip-bomb``     ``Content-Encoding: gzip`` over an endless stream of zeros
``gzip``          a well-formed answer, gzip-compressed (``deflate`` and ``br`` likewise;
                  the ``br`` body is not brotli at all)
``head-huge``     header lines that never end
``deep-json``     a JSON array nested 100,000 deep
``error-huge``    ``503`` with ``Retry-After: 1`` and a 2 GiB body
``redirect``      ``307`` to another host, with a well-formed answer as its body
``ra-seconds``    ``429`` with ``Retry-After: 99999999``
``ra-date``       ``429`` with ``Retry-After`` an HTTP date in the year 9999
``ra-ms``         ``429`` with ``retry-after-ms: 1e15``
``ra-ms-max``     ``429`` with ``retry-after-ms: 1e308``
``ra-503``        ``503`` with ``Retry-After: 86400``
``ra-body``       ``429`` with a ``google.rpc.RetryInfo`` delay of ``99999999s`` in its body
``echo``          a well-formed answer whose text is every request header

Every loop is bounded: a reply stops when the client goes away, after
:data:`MAX_REPLY_S` seconds or :data:`MAX_REPLY_BYTES` bytes, or when the
server is stopped (which wakes every sleeping reply at once).
"""

from __future__ import annotations

import gzip
import json
import socket
import socketserver
import threading
import time
import zlib
from collections import Counter
from typing import Any

#: Seconds of silence before the ``delay`` mode answers.
DELAY_S = 30.0
#: Seconds any one reply may last, however it misbehaves.
MAX_REPLY_S = 90.0
#: Bytes any one reply may send, however it misbehaves (4 GiB).
MAX_REPLY_BYTES = 4 << 30
#: The declared length of the ``huge`` mode (2 GiB).
HUGE_BYTES = 2 << 30

#: Every mode :class:`HostileServer` serves.
MODES = (
    "ok",
    "delay",
    "trickle",
    "trickle-head",
    "endless",
    "huge",
    "huge-close",
    "gzip-bomb",
    "gzip",
    "deflate",
    "br",
    "head-huge",
    "deep-json",
    "error-huge",
    "redirect",
    "ra-seconds",
    "ra-date",
    "ra-ms",
    "ra-ms-max",
    "ra-503",
    "ra-body",
    "echo",
)

#: The modes that ask for a delay before a retry: ``(status, headers, body)``.
RETRY_AFTER = {
    "ra-seconds": (429, {"Retry-After": "99999999"}, None),
    "ra-date": (429, {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, None),
    "ra-ms": (429, {"retry-after-ms": "1e15"}, None),
    "ra-ms-max": (429, {"retry-after-ms": "1e308"}, None),
    "ra-503": (503, {"Retry-After": "86400"}, None),
    "ra-body": (
        429,
        {},
        {
            "error": {
                "code": 429,
                "message": "Resource has been exhausted.",
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": "99999999s",
                    }
                ],
            }
        },
    ),
}

#: The base URL's path after the mode, for each provider kind.
PREFIX = {"openai": "/v1", "anthropic": "", "gemini": "/v1beta", "ollama": ""}

_CHUNK = b" " * 65536
JSON = {"Content-Type": "application/json"}


def wire_of(path: str) -> str | None:
    """The wire format of a sample request's path, or None for any other request."""
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith(":generateContent"):
        return "gemini"
    if path.endswith("/api/chat"):
        return "ollama"
    return None


def answer(wire: str, text: str = "Your order A-1042 has shipped.") -> dict[str, Any]:
    """A well-formed answer holding ``text`` in ``wire``'s format."""
    if wire == "openai":
        return {
            "model": "hostile-1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5},
        }
    if wire == "anthropic":
        return {
            "type": "message",
            "role": "assistant",
            "model": "hostile-1",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 5},
        }
    if wire == "gemini":
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 5},
            "modelVersion": "hostile-1",
        }
    return {
        "model": "hostile-1",
        "message": {"role": "assistant", "content": text},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 5,
        "eval_count": 5,
    }


def _setup_reply(path: str) -> tuple[int, dict[str, Any]]:
    """The well-formed reply to a request that is not a sample."""
    if path.endswith("/api/show"):
        return 200, {"details": {"family": "hostile", "format": "gguf"}, "digest": "sha256:0"}
    if path.endswith("/api/tags"):
        return 200, {"models": []}
    if path.endswith("/api/version"):
        return 200, {"version": "0.0.0-hostile"}
    return 404, {"error": "not found"}


class _Handler(socketserver.BaseRequestHandler):
    server: HostileServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10.0)  # a client that stops reading cannot hold a thread
        try:
            head, body = self._read_request(sock)
        except (OSError, ValueError):
            return
        if head is None:
            return
        method, path, headers = head
        segments = path.split("/", 2)
        mode = segments[1] if len(segments) > 1 else ""
        wire = wire_of(path)
        if mode.startswith("setup-"):
            mode, hostile = mode[len("setup-") :], wire is None
        else:
            hostile = wire is not None
        self.server.count(mode if hostile else "ok", wire or "setup")
        try:
            if not hostile or mode == "ok":
                self._well_formed(sock, path, wire)
            else:
                self._hostile(sock, mode, wire or "openai", headers)
        except OSError:
            return  # the client went away: the reply is over

    def _read_request(
        self, sock: socket.socket
    ) -> tuple[tuple[str, str, dict[str, str]] | None, bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk or len(data) > 1 << 20:
                return None, b""
            data += chunk
        raw_head, _, body = data.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = min(int(headers.get("content-length", "0")), 16 << 20)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return (method, path, headers), body

    def _well_formed(self, sock: socket.socket, path: str, wire: str | None) -> None:
        status, document = (200, answer(wire)) if wire else _setup_reply(path)
        _send_json(sock, status, document)

    def _hostile(self, sock: socket.socket, mode: str, wire: str, headers: dict[str, str]) -> None:
        stop = self.server.stopping
        started = time.monotonic()

        def going() -> bool:
            return not stop.is_set() and time.monotonic() - started < MAX_REPLY_S

        if mode in RETRY_AFTER:
            status, extra, document = RETRY_AFTER[mode]
            _send_json(sock, status, document or {"error": {"message": "slow down"}}, extra)
        elif mode == "delay":
            if not stop.wait(DELAY_S):
                _send_json(sock, 200, answer(wire))
        elif mode == "trickle":
            sock.sendall(_head(200, {**JSON, "Content-Length": "1000000"}))
            while going() and not stop.wait(1.0):
                sock.sendall(b" ")
        elif mode == "trickle-head":
            for byte in _head(200, {"Content-Length": "2"}) + b"{}":
                if not going() or stop.wait(1.0):
                    break
                sock.sendall(bytes([byte]))
        elif mode == "endless":
            sock.sendall(_head(200, {**JSON, "Transfer-Encoding": "chunked"}))
            chunk = b"%x\r\n%s\r\n" % (len(_CHUNK), _CHUNK)
            self._flood(sock, chunk, going)
        elif mode == "huge":
            sock.sendall(_head(200, {**JSON, "Content-Length": str(HUGE_BYTES)}))
            self._flood(sock, _CHUNK, going, limit=HUGE_BYTES)
        elif mode == "huge-close":
            sock.sendall(_head(200, {**JSON, "Connection": "close"}))
            self._flood(sock, _CHUNK, going)
        elif mode == "gzip-bomb":
            sock.sendall(_head(200, {**JSON, "Content-Encoding": "gzip", "Connection": "close"}))
            packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            zeros = b"\0" * (1 << 20)
            sent = 0
            while going() and sent < MAX_REPLY_BYTES:
                packed = packer.compress(zeros) + packer.flush(zlib.Z_SYNC_FLUSH)
                sock.sendall(packed)
                sent += len(packed)
        elif mode in ("gzip", "deflate", "br"):
            document = json.dumps(answer(wire)).encode()
            if mode == "gzip":
                document = gzip.compress(document)
            elif mode == "deflate":
                document = zlib.compress(document)
            head = {**JSON, "Content-Encoding": mode, "Content-Length": str(len(document))}
            sock.sendall(_head(200, {**head, "Connection": "close"}) + document)
        elif mode == "deep-json":
            document = b"[" * 100_000 + b"]" * 100_000
            head = {**JSON, "Content-Length": str(len(document)), "Connection": "close"}
            sock.sendall(_head(200, head) + document)
        elif mode == "error-huge":
            head = {**JSON, "Content-Length": str(HUGE_BYTES), "Retry-After": "1"}
            sock.sendall(_head(503, head))
            self._flood(sock, _CHUNK, going, limit=HUGE_BYTES)
        elif mode == "head-huge":
            sock.sendall(b"HTTP/1.1 200 OK\r\n")
            line = b"X-Padding: " + b"a" * 8000 + b"\r\n"
            self._flood(sock, line, going)
        elif mode == "redirect":
            extra = {"Location": "http://elsewhere.invalid/v1/chat/completions"}
            _send_json(sock, 307, answer(wire), extra)
        elif mode == "echo":
            text = "\n".join(f"{k}: {v}" for k, v in sorted(headers.items()))
            _send_json(sock, 200, answer(wire, text))
        else:
            _send_json(sock, 400, {"error": {"message": f"no such mode {mode!r}"}})

    @staticmethod
    def _flood(sock: socket.socket, chunk: bytes, going: Any, limit: int = MAX_REPLY_BYTES) -> None:
        sent = 0
        while going() and sent < limit:
            sock.sendall(chunk)
            sent += len(chunk)


def _head(status: int, headers: dict[str, str]) -> bytes:
    phrase = {200: "OK", 307: "Temporary Redirect", 404: "Not Found"}.get(status, "Hostile")
    lines = [f"HTTP/1.1 {status} {phrase}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _send_json(
    sock: socket.socket, status: int, document: Any, extra: dict[str, str] | None = None
) -> None:
    body = json.dumps(document).encode()
    headers = {
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        "Connection": "close",
        **(extra or {}),
    }
    sock.sendall(_head(status, headers) + body)


class HostileServer(socketserver.ThreadingTCPServer):
    """The hostile server, listening on 127.0.0.1 on a free port, in a thread.

    Use it as a context manager; ``stop()`` (or leaving the block) wakes every
    reply still running and waits for the listening thread.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stopping = threading.Event()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def root(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def base_url(self, kind: str, mode: str) -> str:
        """The base URL for provider ``kind`` that gets ``mode``."""
        return f"{self.root}/{mode}{PREFIX[kind]}"

    def count(self, mode: str, wire: str) -> None:
        with self._lock:
            self._counts[(mode, wire)] += 1

    def requests(self, mode: str, wire: str) -> int:
        """How many requests of ``wire`` (or ``"setup"``) were answered in ``mode``."""
        with self._lock:
            return self._counts[(mode, wire)]

    def start(self) -> HostileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()
        self._thread.join(10)

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
