"""Making whatever a model or an agent returned recordable as strict JSON in UTF-8.

Two things a model service or an agent can hand back have no place in a
results file or a trace: a lone UTF-16 surrogate (``"hi \\ud800"``, which a
JSON text may spell and Python keeps, but UTF-8 cannot encode) and the
non-finite numbers NaN and ±Infinity (which Python's ``json`` reads but JSON
has no spelling for). Refusing them would stop a run for good, since every
``--resume`` meets the same sample again; so they are rewritten visibly, and
each rewrite leaves a note saying where and what:

- a lone surrogate becomes the six characters of its escape (``\\ud800``),
  after joining any high-low pair into the character it stands for;
- NaN, Infinity and -Infinity become the strings ``"NaN"``, ``"Infinity"``
  and ``"-Infinity"``;
- a value nested deeper than :data:`MAX_DEPTH` is cut and replaced with a
  string saying so.

:func:`recordable` leaves everything else as it is (and returns the very
object when nothing needed rewriting), so the common case costs one walk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "NOTES_KEY", "recordable", "recordable_text"]

#: Containers nested deeper than this are cut (JSON readers give up near 1000).
MAX_DEPTH = 200

#: The record key under which the notes of what was rewritten are kept.
NOTES_KEY = "recording_notes"

_SURROGATE = re.compile("[\ud800-\udfff]")
_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def recordable_text(text: str) -> tuple[str, int]:
    """``(text, n)``: the text with its ``n`` lone surrogates written as escapes.

    Examples
    --------
    >>> recordable_text("hi \\ud800!")
    ('hi \\\\ud800!', 1)
    >>> recordable_text("\\ud83d\\ude00")  # a pair is the character it stands for
    ('😀', 0)
    """
    if _SURROGATE.search(text) is None:
        return text, 0
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.subn(lambda m: f"\\u{ord(m.group()):04x}", joined)


def _number(value: float) -> str:
    return "NaN" if math.isnan(value) else _NON_FINITE[value]


class _Walk:
    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.notes: list[str] = []

    def text(self, value: str, where: str) -> str:
        clean, n = recordable_text(value)
        if n:
            escape = "escape" if n == 1 else "escapes"
            self.notes.append(
                f"{where}: {n} lone surrogate{'s' if n > 1 else ''} (not encodable as "
                f"UTF-8) written as \\uXXXX {escape}"
            )
        return clean

    def key(self, key: Any, where: str) -> Any:
        if isinstance(key, str):
            return self.text(key, where)
        if isinstance(key, float) and not math.isfinite(key):
            self.notes.append(f"{where}: the key {key!r} is not a JSON number; written as text")
            return _number(key)
        return key

    def value(self, value: Any, where: str, depth: int) -> Any:
        if isinstance(value, str):
            return self.text(value, where)
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            text = _number(value)
            self.notes.append(f"{where}: {text} is not a JSON number; written as the string")
            return text
        if value is None or isinstance(value, int):
            return value
        if depth >= MAX_DEPTH:
            self.notes.append(f"{where}: nested deeper than {MAX_DEPTH} levels; cut there")
            return f"(cut: nested deeper than {MAX_DEPTH} levels)"
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            changed = type(value) is not dict
            for k, v in value.items():
                named = isinstance(k, str) and k.isidentifier()
                inner = f"{where}.{k}" if named else f"{where}[{k!r}]"
                ck = self.key(k, where)
                cv = self.value(v, inner, depth + 1)
                changed = changed or ck is not k or cv is not v
                out[ck] = cv
            return out if changed else value
        if isinstance(value, list | tuple):
            items = [self.value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
            if type(value) is list and all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items
        if self.strict:
            return value  # left for json.dumps to refuse: a caller's bug, not a model's output
        self.notes.append(f"{where}: a {type(value).__name__} is not JSON; written as its repr")
        return self.text(repr(value), where)


def recordable(value: Any, where: str = "value", *, strict: bool = False) -> tuple[Any, list[str]]:
    """``(value, notes)``: ``value`` rewritten so that strict JSON in UTF-8 holds it.

    ``where`` names the value in the notes (``"answer"``, ``"trace"``). Tuples
    become lists and read-only mappings dicts. An object JSON has no form for
    is written as its ``repr`` (with a note), unless ``strict`` is set: then
    it is left for the JSON encoder to refuse.

    Examples
    --------
    >>> recordable({"path": float("nan")}, "arguments")
    ({'path': 'NaN'}, ['arguments.path: NaN is not a JSON number; written as the string'])
    >>> recordable(["fine", 1, 2.5])
    (['fine', 1, 2.5], [])
    """
    if _plain(value, 0, strict):
        return value, []  # nothing to rewrite: skip building the names notes would need
    walk = _Walk(strict)
    return walk.value(value, where, 0), walk.notes


def _plain(value: Any, depth: int, strict: bool) -> bool:
    """Whether :class:`_Walk` would return ``value`` itself, with no note (it mirrors it)."""
    if isinstance(value, str):
        return value.isascii() or _SURROGATE.search(value) is None
    if isinstance(value, float):
        return math.isfinite(value)
    if value is None or isinstance(value, int):
        return True
    if depth >= MAX_DEPTH:
        return False
    if type(value) is dict:
        for k, v in value.items():
            if isinstance(k, str):
                if not (k.isascii() or _SURROGATE.search(k) is None):
                    return False
            elif isinstance(k, float) and not math.isfinite(k):
                return False
            if not _plain(v, depth + 1, strict):
                return False
        return True
    if type(value) is list:
        return all(_plain(v, depth + 1, strict) for v in value)
    if isinstance(value, Mapping | list | tuple):
        return False  # another mapping or a tuple: rewritten as a dict or a list
    return strict
