"""HTML built only from escaped text: the one door through which data reaches a page.

Every name, id, answer and reason on an HTML report comes from a file, and
some from other tools' logs: a variant named ``<meta http-equiv="refresh"
...>`` must show as those characters, not navigate the reader away. So the
page is built of :class:`Markup`, which only this module makes:

- :func:`text` turns any value into markup that shows it: ``& < > " '``
  escaped, control characters (and the bidirectional overrides, which would
  reorder what a reader sees) written as their escapes (``\\x1b``, ``\\u202e``),
  lone surrogates (which UTF-8 cannot hold) as ``\\udXXX``;
- :func:`element` makes an element of a known tag; its children are
  :class:`Markup` or else go through :func:`text`, its attribute values are
  escaped, and an ``href`` is kept only when it is a fragment of the page
  (``#cases``) or an ``http``/``https`` address (:func:`safe_href`);
- :func:`join` joins markup;
- :func:`json_script` embeds data for the page's own script, as JSON in a
  ``<script type="application/json">`` that no browser runs and no text in
  it can end (``<``, ``>`` and ``&`` are written ``\\u003c`` ...; every
  string shown as :func:`text` would show it);
- :func:`inline_script` is the page's one script, of our own code, with the
  hash a Content-Security-Policy allows it by (:func:`csp`).

A plain ``str`` is never markup: text that reaches an element without
passing through here is escaped, so a slip shows ``&lt;`` on the page
rather than making an element.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .._terminal import visible
from ..results._recordable import recordable_text

__all__ = [
    "Markup",
    "csp",
    "element",
    "inline_script",
    "join",
    "json_script",
    "safe_href",
    "shown",
    "text",
]


class Markup(str):
    """Text that is already HTML, made by this module; anything else is escaped."""

    __slots__ = ()


#: The elements a report is made of; any other tag is a mistake of ours.
TAGS = frozenset(
    {
        "a",
        "code",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "li",
        "nav",
        "noscript",
        "ol",
        "p",
        "pre",
        "section",
        "small",
        "span",
        "strong",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)

#: The attributes a report uses; none runs a script or loads anything.
ATTRIBUTES = frozenset({"class", "id", "href", "lang", "title"})

_FRAGMENT = re.compile(r"#[A-Za-z][A-Za-z0-9_-]*\Z")


def text(value: Any) -> Markup:
    """``value`` as markup that shows it, and nothing else.

    >>> text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    >>> text("ok\\x1b[8mhidden")
    'ok\\\\x1b[8mhidden'
    """
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(shown(value), quote=True))


def shown(value: Any) -> str:
    """``value`` as the page shows it, before any escaping of HTML: controls and the
    bidirectional overrides as their escapes, lone surrogates as ``\\udXXX``.

    >>> shown("abc\u202edef")
    'abc\\\\u202edef'
    """
    text = value if type(value) is str else str(value)
    if text.isascii() and (text.isprintable() or _ASCII_CONTROL.search(text) is None):
        return text  # the common case, checked in C: nothing to escape
    return visible(recordable_text(text)[0])


#: The ASCII controls :func:`shown` writes as escapes (newlines and tabs are kept).
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    """The parts one after another (each through :func:`text` unless it is markup)."""
    return Markup(text(sep).join(text(p) for p in parts))


def safe_href(url: Any) -> str | None:
    """``url`` if a link may point there: a fragment of this page, or an http(s) address.

    ``javascript:``, ``data:``, ``file:``, relative paths and anything with
    controls or spaces in it get None.

    >>> safe_href("https://example.org/x?y=1"), safe_href("#cases")
    ('https://example.org/x?y=1', '#cases')
    >>> safe_href("javascript:alert(1)") is None, safe_href(" java\\tscript:x") is None
    (True, True)
    """
    if not isinstance(url, str) or not url:
        return None
    if _FRAGMENT.match(url):
        return url
    if any(c.isspace() or not c.isprintable() for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


def element(tag: str, *children: Any, **attributes: Any) -> Markup:
    """``<tag attributes>children</tag>``, every child and value escaped unless it is markup.

    Attribute names are Python keywords (``cls`` for ``class``); a value of
    None leaves the attribute out, as does an ``href`` that :func:`safe_href`
    refuses (the element is kept, without its link).

    >>> element("td", "<b>", cls="num")
    '<td class="num">&lt;b&gt;</td>'
    >>> element("a", "x", href="javascript:alert(1)")
    '<a>x</a>'
    """
    if tag not in TAGS:
        raise ValueError(f"element {tag!r} is not one a report is made of")
    parts = [f"<{tag}"]
    for key, value in attributes.items():
        name = "class" if key == "cls" else key
        if name not in ATTRIBUTES:
            raise ValueError(f"attribute {name!r} is not one a report uses")
        if name == "href":
            value = safe_href(value)
        if value is None:
            continue
        parts.append(f' {name}="{html.escape(visible(recordable_text(str(value))[0]), True)}"')
    parts.append(">")
    parts.extend(text(c) for c in children)
    parts.append(f"</{tag}>")
    return Markup("".join(parts))


#: What JSON inside a ``<script>`` element writes as an escape: the characters that
#: could end the element or open a comment, and the line separators older parsers
#: of JavaScript refuse.
_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def json_script(data: Any, *, id: str) -> Markup:
    """``data`` as ``<script type="application/json" id=...>``: the page's script reads it
    with ``JSON.parse`` (the browser never runs it) and shows its strings as text.

    Every string in ``data`` should already be :func:`shown` (this function does
    not walk it); whatever it holds, nothing in it can end the element:

    >>> json_script({"a": "</script><b>"}, id="d")  # doctest: +ELLIPSIS
    '<script type="application/json" id="d">{"a":"\\\\u003c/script\\\\u003e...</script>'
    """
    if not _FRAGMENT.match(f"#{id}"):
        raise ValueError(f"id {id!r} is not one a page uses")
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(
        f'<script type="application/json" id="{id}">{body.translate(_JSON_ESCAPES)}</script>'
    )


def inline_script(code: str) -> tuple[Markup, str]:
    """The page's own script (our code, never data) and the CSP source that allows it,
    ``'sha256-...'`` of its exact text."""
    if "</script" in code.lower() or "<!--" in code:
        raise ValueError("the page's script holds a tag or a comment opening")
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode("ascii")
    return Markup(f"<script>{code}</script>"), f"'sha256-{digest}'"


def csp(*scripts: str) -> Markup:
    """The Content-Security-Policy meta tag of a page: nothing is fetched, sent or
    framed; styles inline; of scripts, only those whose hashes are given, and no
    string ever becomes HTML through a script (Trusted Types required)."""
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; "
        f"script-src {' '.join(scripts) if scripts else chr(39) + 'none' + chr(39)}; "
        "base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; "
        "trusted-types 'none'"
    )
    return Markup(f'<meta http-equiv="Content-Security-Policy" content="{policy}">')
