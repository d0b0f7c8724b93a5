"""Text helpers every stage shares: canonical JSON, text cut short for messages, and
the separator of a CSV text."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

__all__ = ["canonical_json", "clip", "csv_separator", "short_repr"]


def canonical_json(value: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, text as is, anything else as its ``repr``.

    Two values that JSON holds alike give the same text, so it compares
    manifests, cases and settings, and hashes suites.

    >>> canonical_json({"b": [1, "é"], "a": None})
    '{"a":null,"b":[1,"é"]}'
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )


def clip(text: str, limit: int, ellipsis: str = "...") -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``ellipsis`` when cut.

    >>> clip("abcdefgh", 6)
    'abc...'
    >>> clip("abc", 6)
    'abc'
    """
    return text if len(text) <= limit else text[: limit - len(ellipsis)] + ellipsis


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut short, so that a message never quotes a whole record."""
    return clip(repr(value), limit)


def csv_separator(text: str, known: Collection[str] = ()) -> str:
    """The separator of a CSV text: of comma, semicolon and tab, the one the header
    uses most outside its quoted names, but first of those the next lines (up to
    ``_SNIFFED``) use as many times as the header does (``case;note, short`` is
    parted by its semicolons when the rows are); of several the rows agree on, the
    one that parts the header into the most names in ``known`` (lower case).

    >>> csv_separator("case;note, short\\nq1;fine\\n")
    ';'
    >>> csv_separator("case;note, short\\nq1;fine, thanks\\n", known={"case"})
    ';'
    >>> csv_separator("human\\tcheck\\npass\\tfail\\n")
    '\\t'
    """
    lines = [_QUOTED.sub("", line) for line in _HEADER.findall(text, 0, 1 << 16)[:_SNIFFED]]
    if not lines:
        return ","
    header = lines[0]
    ranked = sorted((",", ";", "\t"), key=header.count, reverse=True)
    even = [
        sep
        for sep in ranked
        if header.count(sep) and all(line.count(sep) == header.count(sep) for line in lines)
    ]
    if not even:
        return ranked[0]
    return max(
        even,
        key=lambda sep: sum(n.strip().strip('"').lower() in known for n in header.split(sep)),
    )


#: The lines :func:`csv_separator` reads: the header and the rows after it.
_SNIFFED = 20
#: A line that is not blank (the header: the first).
_HEADER = re.compile(r"[^\r\n]*\S[^\r\n]*")
#: A quoted name in the header, whose separators do not part cells.
_QUOTED = re.compile(r'"[^"]*"')
