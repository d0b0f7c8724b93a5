"""Text helpers every stage shares: canonical JSON, text cut short for messages, the
separator of a CSV text, and the columns a terminal gives a text (to line up tables)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Collection
from functools import lru_cache
from typing import Any

from ._terminal import visible

__all__ = [
    "align_left",
    "canonical_json",
    "clip",
    "csv_separator",
    "display_width",
    "short_repr",
]


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


def display_width(text: str) -> int:
    """The columns a terminal gives ``text``: two for a wide or fullwidth character
    (East Asian width W or F: CJK, most emoji), none for a combining mark, a format
    character (zero width space, joiner, variation selector) or a conjoining Hangul
    vowel or final, one for any other character.

    A control character counts as the escape that :func:`~evalstats._terminal.visible`
    writes for it (``\\n``, ``\\x1b``), which is what a report shows in its place.
    A sequence that a terminal draws as one glyph (an emoji joined by U+200D, a flag)
    counts as the sum of its characters, as most terminals draw it.

    >>> display_width("order")
    5
    >>> display_width("注文の状況")
    10
    >>> display_width("cafe\u0301")
    4
    >>> display_width("ok \U0001f600")
    5
    """
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(map(_char_width, text))


@lru_cache(maxsize=4096)
def _char_width(char: str) -> int:
    """The columns of one character (see :func:`display_width`)."""
    if not char.isprintable():
        shown = visible(char, keep="")
        if shown != char:  # a control, written as its escape
            return len(shown)
    if unicodedata.combining(char) or unicodedata.category(char) in _ZERO_WIDTH:
        return 0
    if "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff":
        return 0  # conjoining Hangul vowels and finals: drawn within the syllable's block
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


#: The general categories of characters that take no column: non-spacing and
#: enclosing marks, and format characters.
_ZERO_WIDTH = frozenset({"Mn", "Me", "Cf"})


def align_left(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (as :func:`display_width`
    counts them); a wider text as is, as ``f"{text:<{width}}"`` leaves it.

    >>> align_left("注文", 6) + "|"
    '注文  |'
    >>> align_left("abc", 2)
    'abc'
    """
    return text + " " * (width - display_width(text))
