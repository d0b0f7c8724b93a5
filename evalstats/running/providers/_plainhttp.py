"""Plain-HTTP connections for httpx on asyncio's own transports.

Local model servers (vLLM, llama.cpp, Ollama, the stand-in) speak plain HTTP,
where the client's CPU per request is what limits a run at high concurrency.
httpx's default connection layer reaches the socket through anyio, which costs
a cancel scope, a task lookup and a dictionary of socket attributes for every
read, write and keep-alive check, and it sends a request's headers and body in
two writes. :class:`PlainHTTPTransport` keeps httpx and httpcore (their
requests, pools, HTTP/1.1 parsing and errors) and gives httpcore network
streams built on an :class:`asyncio.Protocol`:

* a request is sent in one write: what httpcore writes is held until it reads
  the response (HTTP/1.1 always reads after a whole request), so headers and a
  small body leave in one segment;
* a read returns what the protocol has buffered, waiting (under the read
  timeout) only when nothing is;
* whether an idle keep-alive connection was closed by the server is known from
  the protocol's own state, without a system call.

TLS is not served here: the providers use this transport for ``http://`` base
URLs only, and httpx's default one for ``https://``.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["PlainHTTPTransport"]

#: A write at least this long is sent at once rather than held for the read.
HOLD_LIMIT = 64 * 1024
#: Reading from the socket pauses while this much received data waits unread.
READ_HIGH_WATER = 1 << 20


class _Protocol(asyncio.Protocol):
    """What arrived on one connection, and whoever waits for more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.eof = False
        self.error: BaseException | None = None
        self.reader: asyncio.Future[None] | None = None
        self.writer: asyncio.Future[None] | None = None
        self.paused = False
        self.reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > READ_HIGH_WATER and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()  # type: ignore[union-attr]
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        self._wake_writer()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake_writer()

    def _wake_reader(self) -> None:
        waiter, self.reader = self.reader, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_writer(self) -> None:
        waiter, self.writer = self.writer, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


async def _wait(future: asyncio.Future[None], timeout: float | None) -> None:
    if timeout is None:
        await future
    else:
        async with asyncio.timeout(timeout):
            await future


class _Stream(httpcore.AsyncNetworkStream):
    """One connection as httpcore reads and writes it."""

    def __init__(self, protocol: _Protocol) -> None:
        self._protocol = protocol
        self._transport: asyncio.Transport = protocol.transport  # type: ignore[assignment]
        self._held: list[bytes] = []

    def _send_held(self) -> None:
        held, self._held = self._held, []
        if self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if self._held:
            self._send_held()
        if not protocol.chunks:
            if not protocol.eof:
                protocol.reader = waiter = asyncio.get_running_loop().create_future()
                try:
                    await _wait(waiter, timeout)
                except TimeoutError:
                    raise httpcore.ReadTimeout("no data within the read timeout") from None
                finally:
                    protocol.reader = None
            if not protocol.chunks:
                if protocol.error is not None:
                    raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
                return b""  # the server closed the connection
        data = protocol.chunks[0]
        if len(data) <= max_bytes:
            del protocol.chunks[0]
        else:
            protocol.chunks[0] = data[max_bytes:]
            data = data[:max_bytes]
        protocol.buffered -= len(data)
        if protocol.reading_paused and protocol.buffered <= READ_HIGH_WATER // 2:
            protocol.reading_paused = False
            self._transport.resume_reading()
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held.append(buffer)
        protocol = self._protocol
        if len(buffer) < HOLD_LIMIT and not protocol.paused:
            return  # sent with the rest of the request, when the response is read
        self._send_held()
        if protocol.paused:
            protocol.writer = waiter = asyncio.get_running_loop().create_future()
            try:
                await _wait(waiter, timeout)
            except TimeoutError:
                raise httpcore.WriteTimeout("could not send within the write timeout") from None
            finally:
                protocol.writer = None
            if protocol.error is not None:
                raise httpcore.WriteError(str(protocol.error) or type(protocol.error).__name__)

    async def aclose(self) -> None:
        self._held = []
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("TLS is not served by the plain-HTTP transport")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # An idle keep-alive connection with data or an end of stream
            # waiting: the server closed it (httpcore then drops it).
            return bool(self._protocol.chunks) or self._protocol.eof
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        return None


class _Backend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        try:
            async with asyncio.timeout(timeout):
                # asyncio sets TCP_NODELAY on the connections it opens.
                transport, protocol = await loop.create_connection(
                    _Protocol, host, port, local_addr=local
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} in time") from None
        except OSError as error:
            raise httpcore.ConnectError(str(error) or type(error).__name__) from None
        sock: socket.socket | None = transport.get_extra_info("socket")
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return _Stream(protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class PlainHTTPTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with the connection pool on :class:`_Backend` (plain HTTP only).

    ``limits`` as for :class:`httpx.AsyncHTTPTransport`. No TLS context is made
    (loading the CA bundle costs about 20 ms a client): an ``https://`` URL
    fails to connect with :class:`httpx.ConnectError`.
    """

    def __init__(self, *, limits: httpx.Limits) -> None:
        # httpx's transport sends each request through ``self._pool``; the pool
        # is built here, as its own __init__ would, with the network backend set.
        self._pool = httpcore.AsyncConnectionPool(
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_Backend(),
        )
