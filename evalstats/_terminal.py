"""Showing text from models, agents and files on a terminal without obeying it.

An answer is data, but a terminal takes some characters as orders: ESC
starts sequences that retitle the window, clear the screen or move the
cursor, a carriage return lets later text overwrite the line, a backspace
erases, and the bidirectional controls reorder what follows, so a line can
hide or fake its own text. :func:`visible` writes every such character as
its escape (``\\x1b``, ``\\r``, ``\\u202e``), so a reviewer reads what the
model sent rather than what it wanted shown. A lone surrogate (which a JSON
file may spell, and no encoding can write) is shown as its escape too.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import Any, TextIO

__all__ = ["VisibleWriter", "lines_text", "visible"]

# C0 controls and DEL, the C1 controls (U+0080-U+009F: U+009B is a one-byte
# CSI on some terminals), and the bidirectional embeddings, overrides and
# isolates with the marks (U+200E, U+200F, U+061C); and lone surrogates, which no
# terminal encoding can carry (writing one would crash the command).
_CONTROLS = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_SHORT = {"\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\n": "\\n", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_PATTERNS: dict[str, re.Pattern[str]] = {}


def visible(text: str, *, keep: str = "\n\t") -> str:
    """``text`` with every control character written as its escape, except those in ``keep``.

    Examples
    --------
    >>> visible("ok\\x1b]0;pwned\\x07 \\rdone")
    'ok\\\\x1b]0;pwned\\\\x07 \\\\rdone'
    >>> visible("two\\nlines", keep="")
    'two\\\\nlines'
    """
    pattern = _PATTERNS.get(keep)
    if pattern is None:
        spared = f"(?![{re.escape(keep)}])" if keep else ""
        pattern = _PATTERNS[keep] = re.compile(f"{spared}[{_CONTROLS}]")
    return pattern.sub(lambda m: _escape(m.group()), text)


def lines_text(lines: Iterable[str]) -> str:
    """The lines joined by newlines, each shown as one line whatever it quotes.

    A report is built as a list of lines; a case id or a variant name in one
    of them that holds a newline (from another tool's log, say) would start a
    forged line at column 0. Here each line's own newlines, tabs and controls
    are written as escapes, so only the report's own line breaks remain.

    >>> print(lines_text(["case a\\nFAKE: all passed", "done"]))
    case a\\nFAKE: all passed
    done
    """
    return "\n".join(visible(line, keep="") for line in lines)


class VisibleWriter(io.TextIOBase):
    """A text stream that writes to ``stream`` with controls made visible (but newlines, tabs)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
