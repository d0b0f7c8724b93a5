"""The plain-HTTP transport (evalstats.running.providers._plainhttp) against local servers.

Each test runs its own small asyncio server on 127.0.0.1 that says exactly
what the test needs: a normal answer, nothing at all, a closed connection.
"""

from __future__ import annotations

import asyncio
import json

import httpcore
import httpx
import pytest

from evalstats.errors import TransientProviderError
from evalstats.running.providers import OpenAIProvider
from evalstats.running.providers._plainhttp import (
    HOLD_LIMIT,
    PlainHTTPTransport,
    _Backend,
    _Protocol,
    _Stream,
)

ANSWER = json.dumps(
    {
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "Hello."}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
).encode()


async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    """One HTTP/1.1 request with a Content-Length body, or None at the end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


def _reply(body: bytes = ANSWER) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


def _serve(handler):
    """Run ``test(base_url)`` against an asyncio server with ``handler``."""

    async def main(test):
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await test(f"http://127.0.0.1:{port}/v1")
        finally:
            server.close()

    return main


def test_an_http_base_url_gets_the_plain_transport_and_https_does_not():
    async def kinds():
        plain = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1").client()
        tls = OpenAIProvider("m", base_url="https://127.0.0.1:9/v1").client()
        out = type(plain._transport), type(tls._transport)
        await plain.aclose()
        await tls.aclose()
        return out

    plain, tls = asyncio.run(kinds())
    assert plain is PlainHTTPTransport and tls is httpx.AsyncHTTPTransport


def test_requests_answers_and_keep_alive_over_the_plain_transport(monkeypatch):
    connections = []
    requests = []
    streams = []
    connect = _Backend.connect_tcp

    async def recording(self, *args, **kwargs):
        streams.append(await connect(self, *args, **kwargs))
        return streams[-1]

    monkeypatch.setattr(_Backend, "connect_tcp", recording)

    async def handler(reader, writer):
        connections.append(writer)
        while (request := await _read_request(reader)) is not None:
            requests.append(request)
            writer.write(_reply())
            await writer.drain()
        writer.close()

    async def test(url):
        p = OpenAIProvider("m", base_url=url)
        answers = [(await p.complete(f"Hi {i}", seed=i)).answer for i in range(5)]
        big = "x" * (2 * HOLD_LIMIT)  # a body longer than what is held for one write
        answers.append((await p.complete(big, seed=9)).answer)
        await p.aclose()
        return answers

    answers = asyncio.run(_serve(handler)(test))
    assert answers == ["Hello."] * 6
    assert len(connections) == 1  # one kept-alive connection for sequential requests
    assert [type(s) for s in streams] == [_Stream]
    assert all(json.loads(r.split(b"\r\n\r\n", 1)[1])["model"] == "m" for r in requests)
    assert len(requests[-1]) > 2 * HOLD_LIMIT


class _Recording:
    """A transport that records what is written and is never closing."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False


def test_a_request_leaves_in_one_write_when_the_response_is_read():
    async def go():
        protocol = _Protocol()
        transport = _Recording()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        stream = _Stream(protocol)
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        await stream.write(b'{"a": 1}')
        assert transport.writes == []  # held until the response is read
        protocol.data_received(b"HTTP/1.1 200 OK\r\n")
        first = await stream.read(5)
        rest = await stream.read(1000)
        await stream.write(b"x" * HOLD_LIMIT)  # long: sent at once
        return transport.writes, first, rest

    writes, first, rest = asyncio.run(go())
    assert writes == [b'POST / HTTP/1.1\r\n\r\n{"a": 1}', b"x" * HOLD_LIMIT]
    assert (first, rest) == (b"HTTP/", b"1.1 200 OK\r\n")


def test_a_silent_server_is_a_read_timeout_and_a_transient_error():
    async def handler(reader, writer):
        await _read_request(reader)
        await asyncio.sleep(5)  # never answers within the client's timeout
        writer.close()

    async def test(url):
        p = OpenAIProvider("m", base_url=url, timeout=0.3)
        try:
            with pytest.raises(TransientProviderError, match="no answer .* within the time"):
                await p.complete("Hi", seed=1)
        finally:
            await p.aclose()

    asyncio.run(_serve(handler)(test))


def test_a_connection_closed_before_the_answer_is_a_transient_error():
    async def handler(reader, writer):
        await _read_request(reader)
        writer.close()

    async def test(url):
        p = OpenAIProvider("m", base_url=url)
        try:
            with pytest.raises(TransientProviderError, match="could not reach"):
                await p.complete("Hi", seed=1)
        finally:
            await p.aclose()

    asyncio.run(_serve(handler)(test))


def test_nothing_listening_is_a_transient_connect_error():
    async def go():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()  # the port is free again: nothing answers there
        p = OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1")
        try:
            with pytest.raises(TransientProviderError, match="ConnectError"):
                await p.complete("Hi", seed=1)
        finally:
            await p.aclose()

    asyncio.run(go())


def test_a_keep_alive_connection_the_server_closed_is_not_reused():
    connections = []

    async def handler(reader, writer):
        # Answer one request, then close the connection without saying so.
        connections.append(writer)
        if await _read_request(reader) is not None:
            writer.write(_reply())
            await writer.drain()
        writer.close()

    async def test(url):
        p = OpenAIProvider("m", base_url=url)
        try:
            first = (await p.complete("Hi", seed=1)).answer
            await asyncio.sleep(0.1)  # the server's close arrives
            second = (await p.complete("Hi", seed=2)).answer
        finally:
            await p.aclose()
        return first, second

    assert asyncio.run(_serve(handler)(test)) == ("Hello.", "Hello.")
    assert len(connections) == 2


def test_tls_is_refused_by_name():
    async def go():
        stream = _Stream(_Protocol())
        with pytest.raises(httpcore.ConnectError, match="TLS"):
            await stream.start_tls(None)  # type: ignore[arg-type]

    asyncio.run(go())
