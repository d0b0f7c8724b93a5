"""Rich display in notebooks: what Jupyter and IPython show for a result.

A result (a comparison, a report, a plan, an interval) shows in a notebook as
its text, the same words ``print`` gives, under a headline that carries the
verdict in its colour (:mod:`evalstats._palette`). Every character of a name
from a file reaches the page escaped: ``<``, ``>``, ``&`` and quotes as
entities, controls (bidi overrides among them) as visible escapes, so a case
named ``<img src=x onerror=alert(1)>`` is shown, never run.

Each result class has two small methods that call the functions here::

    def _repr_html_(self) -> str:
        return result_html(str(self), headline=..., verdict=self.verdict)

    def _repr_pretty_(self, p, cycle) -> None:
        pretty(self, p, cycle)
"""

from __future__ import annotations

import html
from typing import Any

from ._palette import verdict_colour
from ._terminal import visible

__all__ = ["escaped", "pretty", "result_html", "verdict_words"]

#: How the texts name each verdict.
_WORDS = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}


def verdict_words(verdict: str) -> str:
    """A verdict as the texts write it: ``B better``, ``A better``, ``can't tell yet``.

    >>> verdict_words("b_better"), verdict_words("cant_tell")
    ('B better', "can't tell yet")
    """
    return _WORDS.get(verdict, _WORDS["cant_tell"])


def escaped(value: Any) -> str:
    """``value`` as text safe inside HTML: controls as visible escapes (newlines and
    tabs kept), then ``&``, ``<``, ``>`` and both quotes as entities.

    >>> escaped('<img src=x onerror="alert(1)">\\u202e')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;\\\\u202e'
    """
    return html.escape(visible(str(value)), quote=True)


def result_html(text: str, *, headline: str = "", verdict: str | None = None) -> str:
    """A result's rich display: ``headline`` in bold (in the colour of ``verdict``
    when there is one), then ``text`` as preformatted lines that wrap.

    >>> result_html("B better: +20% (+5% to +35%)", headline="B better", verdict="b_better")
    '<div class="evalstats-result"><p style="margin:0 0 4px 0"><strong style="color:#009E73">B better</strong></p><pre style="white-space:pre-wrap;margin:0">B better: +20% (+5% to +35%)</pre></div>'
    """  # noqa: E501
    parts = ['<div class="evalstats-result">']
    if headline:
        style = f' style="color:{verdict_colour(verdict)}"' if verdict is not None else ""
        parts.append(f'<p style="margin:0 0 4px 0"><strong{style}>{escaped(headline)}</strong></p>')
    parts.append(f'<pre style="white-space:pre-wrap;margin:0">{escaped(text)}</pre>')
    parts.append("</div>")
    return "".join(parts)


def pretty(obj: Any, p: Any, cycle: bool) -> None:
    """IPython's plain display of a result: its text, the same as ``print`` gives.

    ``p`` is IPython's pretty printer; ``cycle`` is True when ``obj`` is reached
    again inside itself (never for these results, handled all the same).
    """
    p.text(f"{type(obj).__name__}(...)" if cycle else str(obj))
