"""Text helpers every stage shares: canonical JSON, and text cut short for messages."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical_json", "clip", "short_repr"]


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
