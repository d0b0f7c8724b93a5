"""The colours of every figure and page: the Okabe–Ito palette, in one place.

Okabe and Ito chose eight colours that people with any of the common forms of
colour blindness (protanopia, deuteranopia, tritanopia) still tell apart, and
that stay apart in grey. The PNG and SVG figures (``presenting/_plots.py``), the
HTML page and the notebooks' rich display all take their colours from here, so
a verdict has the same colour wherever it is shown.

A verdict is never told by colour alone: the figures also give it a marker
shape (:data:`VERDICT_MARKERS`) and a legend, the page and the notebooks its
words. On white, :data:`BETTER` and :data:`WORSE` reach a contrast of about 3:1,
enough for bold or large text (WCAG 2.1, 1.4.3); body text stays black.

References
----------
Okabe, M. and Ito, K. (2008). Color Universal Design (CUD): how to make figures
and presentations that are friendly to colorblind people. J*Fly,
https://jfly.uni-koeln.de/color/
"""

from __future__ import annotations

__all__ = [
    "BETTER",
    "NEUTRAL",
    "OKABE_ITO",
    "VARIANT_COLOURS",
    "VERDICT_COLOURS",
    "VERDICT_MARKERS",
    "WORSE",
    "css_variables",
    "variant_colour",
    "verdict_colour",
]

#: The eight colours by name, as Okabe and Ito (2008) give them.
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}

#: B clearly better (a "b_better" verdict, a case flagged better).
BETTER = OKABE_ITO["bluish green"]
#: B clearly worse (an "a_better" verdict, a case flagged worse).
WORSE = OKABE_ITO["vermillion"]
#: Can't tell yet: no verdict either way.
NEUTRAL = OKABE_ITO["black"]

#: The colour of each verdict, by the names verdicts have in the code.
VERDICT_COLOURS: dict[str, str] = {"b_better": BETTER, "a_better": WORSE, "cant_tell": NEUTRAL}

#: The marker of each verdict in a figure: up for better, down for worse, a dot for neither.
VERDICT_MARKERS: dict[str, str] = {"b_better": "^", "a_better": "v", "cant_tell": "o"}

#: The colours of variants in order (yellow last: it is faint on white).
VARIANT_COLOURS: tuple[str, ...] = tuple(
    OKABE_ITO[name]
    for name in (
        "blue",
        "orange",
        "bluish green",
        "reddish purple",
        "sky blue",
        "vermillion",
        "black",
        "yellow",
    )
)


def verdict_colour(verdict: str) -> str:
    """The colour of ``verdict`` ("b_better", "a_better"; anything else is neutral).

    >>> verdict_colour("b_better"), verdict_colour("cant_tell")
    ('#009E73', '#000000')
    """
    return VERDICT_COLOURS.get(verdict, NEUTRAL)


def variant_colour(index: int) -> str:
    """The colour of the variant at ``index`` in manifest order (the palette repeats).

    >>> variant_colour(0), variant_colour(8)
    ('#0072B2', '#0072B2')
    """
    return VARIANT_COLOURS[index % len(VARIANT_COLOURS)]


def css_variables() -> str:
    """The palette as CSS custom properties, for a page's ``:root`` rule.

    >>> css_variables().split(";")[0]
    '--better: #009E73'
    """
    named = {"better": BETTER, "worse": WORSE, "neutral": NEUTRAL}
    named |= {f"variant-{i}": colour for i, colour in enumerate(VARIANT_COLOURS)}
    return "; ".join(f"--{name}: {colour}" for name, colour in named.items())
