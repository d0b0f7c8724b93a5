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
- :func:`join` joins markup.

A plain ``str`` is never markup: text that reaches an element without
passing through here is escaped, so a slip shows ``&lt;`` on the page
rather than making an element.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .._terminal import visible
from ..results._recordable import recordable_text

__all__ = ["Markup", "element", "join", "safe_href", "text"]


class Markup(str):
    """Text that is already HTML, made by this module; anything else is escaped."""

    __slots__ = ()


#: The elements a report is made of; any other tag is a mistake of ours.
TAGS = frozenset(
    {
        "a",
        "code",
        "details",
        "div",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "li",
        "nav",
        "p",
        "pre",
        "span",
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
    shown = visible(recordable_text(str(value))[0])
    return Markup(html.escape(shown, quote=True))


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
