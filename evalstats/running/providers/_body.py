"""One bounded reader for every reply body a provider reads.

A model server can send a body that never ends, one that declares or holds
gigabytes, or a small gzip stream that expands without end. :func:`read_body`
reads a streamed :class:`httpx.Response` chunk by chunk and stops as soon as
the body, once decoded, would pass ``limit`` bytes; the body is never held
whole before it is counted. Time is not its business: the provider bounds the
whole exchange, body included, with one deadline (see
:meth:`~evalstats.running.providers._base.Provider._send`), so a trickle of one
byte a second ends at the provider's timeout, not at the first quiet gap.

Only the content codings the providers ask for are decoded (``gzip`` and
``deflate``, with the output of each step bounded); a body in any other coding
is refused as unreadable.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import httpx

from ...errors import InvalidArgument

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_MAX_REPLY_BYTES",
    "MAX_REPLY_BYTES_LIMIT",
    "ReplyTooLarge",
    "ReplyUnreadable",
    "byte_size",
    "read_body",
]

#: The most bytes a reply body may hold, decoded, unless the provider is told otherwise.
DEFAULT_MAX_REPLY_BYTES = 8 << 20
#: The highest ``max_reply_bytes`` a provider accepts (1 GiB).
MAX_REPLY_BYTES_LIMIT = 1 << 30
#: The content codings the providers ask for, and the only ones they decode.
ACCEPT_ENCODING = "gzip, deflate"

_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


class ReplyTooLarge(Exception):
    """A body larger than the limit; ``declared`` is its ``Content-Length`` when that said so."""

    def __init__(self, limit: int, declared: int | None = None) -> None:
        self.limit = limit
        self.declared = declared
        if declared is None:
            what = f"passed the limit of {limit:,} bytes (max_reply_bytes) and was not read on"
        else:
            what = f"declares {declared:,} bytes, more than the limit of {limit:,}"
            what += " (max_reply_bytes)"
        super().__init__(f"its body {what}")


class ReplyUnreadable(Exception):
    """A body in a coding that was not asked for, or that does not decode."""


def byte_size(name: str, value: Any) -> int:
    """``value`` as a number of bytes: a whole number, or text such as ``16MiB``.

    Examples
    --------
    >>> byte_size("max_reply_bytes", "16MiB")
    16777216
    >>> byte_size("max_reply_bytes", 4096)
    4096
    >>> byte_size("max_reply_bytes", "lots")
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: max_reply_bytes='lots' must be a whole number of bytes \
(such as 8388608 or 8MiB) from 1KiB to 1GiB
    """
    size: Any = value
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d{1,12})\s*([a-zA-Z]*)\s*", value)
        unit = _UNITS.get(match.group(2).lower()) if match else None
        size = int(match.group(1)) * unit if match and unit else None
    if (
        isinstance(size, bool)
        or not isinstance(size, int)
        or not 1024 <= size <= MAX_REPLY_BYTES_LIMIT
    ):
        raise InvalidArgument(
            f"{name}={value!r} must be a whole number of bytes (such as 8388608 or 8MiB) "
            "from 1KiB to 1GiB"
        )
    return size


def _decoder(encoding: str) -> Any:
    """A zlib decompressor for ``encoding``, or None for the identity coding."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    if coding == "deflate":
        # RFC 9110 deflate is the zlib format; some servers send raw deflate.
        return _Deflate()
    raise ReplyUnreadable(f"its body is in the content coding {encoding[:40]!r}, not asked for")


class _Deflate:
    """``deflate`` as zlib data, or as raw deflate when the first bytes say so."""

    def __init__(self) -> None:
        self._inner: Any = None

    def decompress(self, data: bytes, max_length: int) -> bytes:
        if self._inner is None:
            header = int.from_bytes(data[:2]) if len(data) >= 2 else 0
            zlib_header = header >> 8 & 0x0F == 8 and header % 31 == 0
            wbits = zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS
            self._inner = zlib.decompressobj(wbits)
        return self._inner.decompress(data, max_length)

    def flush(self, length: int) -> bytes:
        return self._inner.flush(length) if self._inner is not None else b""


async def read_body(response: httpx.Response, limit: int) -> bytes:
    """The body of a streamed ``response``, decoded, if it holds at most ``limit`` bytes.

    Raises :class:`ReplyTooLarge` when ``Content-Length`` declares more, or as
    soon as the bytes read (decoded) pass ``limit``; at most about ``limit``
    bytes plus one network read are ever held. Raises :class:`ReplyUnreadable`
    for a content coding other than ``gzip``, ``deflate`` or ``identity``, or
    one that does not decode. The caller closes the response.
    """
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge(limit, int(declared))
    encoding = response.headers.get("content-encoding", "")
    if response.is_stream_consumed:
        # A response made in memory (httpx.MockTransport): already read and decoded.
        content = response.content
        if len(content) > limit:
            raise ReplyTooLarge(limit)
        return content
    decoder = _decoder(encoding) if encoding else None
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_raw():
            if decoder is not None:
                # Never more output than the room left plus one byte: a small
                # compressed chunk cannot expand past the limit in memory.
                chunk = decoder.decompress(chunk, limit - size + 1)
            size += len(chunk)
            if size > limit:
                raise ReplyTooLarge(limit)
            chunks.append(chunk)
        if decoder is not None:
            rest = decoder.flush(limit - size + 1)
            size += len(rest)
            if size > limit:
                raise ReplyTooLarge(limit)
            chunks.append(rest)
    except zlib.error as exc:
        raise ReplyUnreadable(f"its {encoding[:40]} body does not decode ({exc})") from None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
