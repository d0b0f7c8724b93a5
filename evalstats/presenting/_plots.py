"""Figures of a report: per-case intervals (a forest plot) and paired differences.

matplotlib is imported inside the functions, and figures are drawn on a bare
:class:`matplotlib.figure.Figure` with the Agg renderer, so nothing here needs a
display or touches pyplot's global state.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import refuse_existing, write_output
from .._palette import (
    BETTER,
    NEUTRAL,
    OKABE_ITO,
    VERDICT_MARKERS,
    WORSE,
    variant_colour,
    verdict_colour,
)
from .._terminal import visible
from .._text import clip
from ..errors import InvalidArgument
from ..results._recordable import recordable_text
from ..stats._claims import claim_words

if TYPE_CHECKING:
    from ..deciding._compare_results import ResultsComparison
    from ..deciding._sequential import SequentialComparison
    from ..stats._compare import Comparison
    from ._report import Report

__all__ = [
    "drawn",
    "forest_figure",
    "forest_plot",
    "paired_difference_figure",
    "paired_difference_plot",
    "percent",
    "plain_text",
    "png_bytes",
    "report_plots",
    "row_verdicts",
    "score_figure",
    "score_rows",
    "sequential_figure",
    "sequential_plot",
]


@contextlib.contextmanager
def plain_text(extra: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Draw every text as the characters it holds: no mathtext, no LaTeX.

    A case named ``$\\frac{$`` would otherwise be parsed as mathtext and end
    the drawing with an error (and with ``text.usetex`` set in someone's
    matplotlibrc, any ``%`` or ``_`` would reach LaTeX). Figures are built and
    saved inside this context, so each text is made with parsing off.
    """
    import matplotlib

    settings: Any = {"text.usetex": False, "text.parse_math": False, **(extra or {})}
    with matplotlib.rc_context(settings):
        yield


#: Characters of a name a figure shows at most (the page and the text show it whole).
LABEL_LIMIT = 60


def drawn(value: Any) -> str:
    """A name from a file as a figure shows it: controls and lone surrogates as
    escapes, cut to :data:`LABEL_LIMIT` characters.

    >>> drawn("case\\x1b[2J\\ud800")
    'case\\\\x1b[2J\\\\ud800'
    """
    return clip(visible(recordable_text(str(value))[0], keep=""), LABEL_LIMIT, "…")


def percent(value: float, *, signed: bool = False) -> str:
    """A tick's value as the text of the reports writes it: ``40%``; with
    ``signed``, ``+25%``, ``0%`` and ``−25%`` (a minus sign, not a hyphen).

    >>> percent(0.4), percent(-0.25, signed=True), percent(0.125, signed=True)
    ('40%', '−25%', '+12.5%')
    """
    number = round(100.0 * float(value), 6)
    text = f"{abs(number):g}%"
    if number < 0:
        return "−" + text
    return ("+" + text) if signed and number > 0 else text


def _percent_axis(axis: Any, *, signed: bool, step: float) -> None:
    """Ticks of ``axis`` every ``step`` (a share of 1), labelled in percent."""
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    axis.set_major_locator(MultipleLocator(step))
    axis.set_major_formatter(FuncFormatter(lambda x, _pos: percent(x, signed=signed)))


def _plain_log_axis(axis: Any) -> None:
    """A log axis labelled ``0.01``, ``1``, ``100``: the default labels are mathtext,
    which figures here draw as the characters they hold (see :func:`plain_text`)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
    axis.set_minor_formatter(NullFormatter())


#: Inches of a figure's width: at least this, wider when its names need it.
WIDTH = 7.5


#: Inches the plot itself keeps, however long the names beside it.
PLOT_WIDTH = 4.5


def _figure(rows: int, *, names: Sequence[str] = (), legend: Sequence[str] = ()) -> Any:
    """A bare figure for ``rows`` rows, wide enough for the longest of ``names`` (the
    row labels) beside the plot and of ``legend`` (a legend's entries) to its right."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # About a third of an inch per row, within bounds: a suite of hundreds of cases gives a
    # tall figure, not one taller than image viewers handle.
    height = min(max(2.5, 0.32 * rows + 1.6), 60.0)
    # A name of 60 characters takes about 5 inches at 10 points, 4.3 at "small" (a legend's).
    labels = max((len(n) for n in names), default=0)
    entries = max((len(n) for n in legend), default=0)
    width = PLOT_WIDTH + 0.4 + 0.085 * labels + (0.072 * entries + 0.9 if legend else 0.0)
    fig = Figure(figsize=(max(WIDTH, width), height), layout="constrained")
    FigureCanvasAgg(fig)  # measured by _fit; saving picks its own canvas by format
    return fig


def _wrapped(text: str, fig: Any, *, points: float = 10.0) -> str:
    """``text`` broken into lines that fit the width of ``fig`` at ``points``."""
    import textwrap

    # A character of DejaVu Sans is about 0.6 of its size wide on average.
    chars = max(20, int(fig.get_figwidth() * 72 / (0.62 * points)) - 4)
    return textwrap.fill(text, chars, break_long_words=True, break_on_hyphens=False)


def _fit(fig: Any) -> Any:
    """Grow ``fig`` until everything it draws lies inside it; returns ``fig``.

    Constrained layout shrinks the plot to make room for labels, titles and
    legends, but cannot make room that is not there: a long name would be cut
    at the edge, or the plot squeezed until its ticks overlap. Each round
    measures what the figure draws (its tight bounding box) and each plot's
    width, and widens or heightens the figure by what sticks out or is missing.
    """
    for _ in range(6):
        fig.draw_without_rendering()
        tight = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
        width, height = fig.get_size_inches()
        narrowest = min((ax.get_position().width * width for ax in fig.axes), default=PLOT_WIDTH)
        wider = max(0.0, -tight.x0) + max(0.0, tight.x1 - width)
        wider = max(wider, PLOT_WIDTH - 0.3 - narrowest)
        taller = max(0.0, -tight.y0) + max(0.0, tight.y1 - height)
        if wider < 0.005 and taller < 0.005:
            break
        fig.set_size_inches(
            width + (wider + 0.15 if wider >= 0.005 else 0.0),
            height + (taller + 0.15 if taller >= 0.005 else 0.0),
        )
    return fig


def png_bytes(fig: Any, *, dpi: int = 110) -> bytes:
    """``fig`` drawn as PNG, in memory: a drawing that fails writes nothing."""
    buf = io.BytesIO()
    with plain_text():
        fig.savefig(buf, dpi=dpi, format="png")
    return buf.getvalue()


def _save(fig: Any, path: str | os.PathLike[str], *, force: bool = False, dpi: int = 110) -> Path:
    """Write ``fig`` as PNG to ``path``, whole or not at all.

    An existing file is replaced only with ``force``; otherwise it is refused
    and left as it was (see :func:`evalstats._files.write_output`). Every
    failure is an :class:`InvalidArgument` naming the path.
    """
    refuse_existing(path, force=force)
    return write_output(path, png_bytes(fig, dpi=dpi), force=force)


def _finite(x: Any) -> bool:
    return not math.isnan(float(x))


def _bar(
    ax: Any,
    ci: Any,
    y: float,
    *,
    overall: bool,
    color: str,
    marker: str | None = None,
    label: str | None = None,
) -> Any:
    """One interval as a marker with error bars: a dot for a case, a diamond for all
    cases, unless ``marker`` is given; the overall rows are drawn heavier."""
    est = float(ci.estimate)
    return ax.errorbar(
        [est],
        [y],
        xerr=[[est - float(ci.low)], [float(ci.high) - est]],
        fmt=marker or ("D" if overall else "o"),
        color=color,
        capsize=3,
        markersize=6 if overall else 5,
        elinewidth=2.0 if overall else 1.2,
        label=label,
    )


def forest_plot(report: Report, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Draw each case's pass rate and interval for every variant into a PNG file.

    One row per case, one marker per variant (offset so that they do not
    overlap, coloured from :data:`evalstats._palette.VARIANT_COLOURS`), with
    the case's Wilson interval as a bar; two extra rows at the bottom show
    each variant's overall rate with its per-trial interval (about these
    cases) and its case-clustered interval (about cases like these). Rates
    are in percent. Cases with no measured sample show no marker.

    Parameters
    ----------
    report : Report
        From :func:`evalstats.presenting._report.report`.
    path : path
        The PNG file to write; an existing file is refused unless ``force``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    refuse_existing(path, force=force)
    return _save(forest_figure(report), path, force=force)


@plain_text()
def forest_figure(report: Report) -> Any:
    """The figure :func:`forest_plot` draws, as a matplotlib ``Figure`` (for other formats)."""
    variants = [v.variant for v in report.variants]
    cases = list(report.case_ids)
    labels = [drawn(c) for c in cases] + ["all: these cases", "all: cases like these"]
    names = [drawn(v) for v in variants]
    rows = len(labels) * max(1, len(variants)) // 2 + len(labels)
    fig = _figure(rows, names=labels, legend=names + ["variant"])
    ax = fig.add_subplot()
    step = 0.7 / max(len(variants), 1)
    # The legend is given its entries: matplotlib would leave out a name starting with "_".
    handles: list[Any] = []
    shown: list[str] = []
    for j, v in enumerate(variants):
        offset = ((len(variants) - 1) / 2 - j) * step  # the first variant on top
        rows = {r.case: r for r in report.rows(v)}
        summary = report.variant(v)
        intervals = [rows[c].interval if c in rows else None for c in cases]
        intervals += [summary.per_trial, summary.clustered]
        for i, ci in enumerate(intervals):
            if ci is None or not _finite(ci.estimate):
                continue
            bar = _bar(
                ax,
                ci,
                len(labels) - 1 - i + offset,
                overall=i >= len(cases),
                color=variant_colour(j),
            )
            if len(shown) == j:
                handles.append(bar)
                shown.append(names[j])
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.axhline(1.5, color="0.7", linewidth=0.8)
    ax.set_xlim(-0.02, 1.02)
    _percent_axis(ax.xaxis, signed=False, step=0.2)
    ax.set_xlabel(_wrapped(f"pass rate ({100 * report.level:g}% interval)", fig))
    ax.set_title("pass rate per case")
    ax.grid(axis="x", color="0.9")
    if handles:  # none without variants
        ax.legend(
            handles,
            shown,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
            title="variant",
        )
    return _fit(fig)


#: What the colour and marker of a row in the paired-difference figure say.
VERDICT_WORDS = {
    "b_better": "B clearly better",
    "a_better": "B clearly worse",
    "cant_tell": "can't tell",
}


def row_verdicts(comparison: ResultsComparison | Comparison) -> list[tuple[str, Any, str]]:
    """The rows of :func:`paired_difference_figure`, top to bottom: each row's
    label, its interval of B − A and the verdict the text gives for it.

    A case's verdict is its flag (``B clearly worse`` or ``better`` in the
    per-case table, adjusted for the number of cases); an overall row's is its
    comparison's verdict (``these cases:`` and ``cases like these:`` in the
    text), whose interval is the one drawn.
    """
    from ..stats._compare import Comparison

    these: Comparison | None
    like: Comparison | None
    if isinstance(comparison, Comparison):
        these, like = comparison, None
    else:
        these, like = comparison.these_cases, comparison.cases_like_these
    out: list[tuple[str, Any, str]] = []
    for r in these.cases if these is not None else ():
        verdict = "a_better" if r.worse else "b_better" if r.better else "cant_tell"
        out.append((drawn(r.case), r.difference, verdict))
    if these is not None:
        out.append(("all: these cases", these.difference, these.verdict))
    if like is not None:
        out.append(("all: cases like these", like.difference, like.verdict))
    return out


def paired_difference_plot(
    comparison: ResultsComparison | Comparison,
    path: str | os.PathLike[str],
    *,
    force: bool = False,
) -> Path:
    """Draw the per-case differences B - A with their intervals into a PNG file.

    One row per case with the case's own interval of ``p_b - p_a``, and at the
    bottom the overall difference: about these cases (the paired score test's
    interval, which excludes 0 exactly when its verdict is not "can't tell")
    and, when there is one, about cases like these (the clustered interval).
    Each row has the colour and marker of the verdict the text gives for it
    (:func:`row_verdicts`; colours from :mod:`evalstats._palette`), and a
    legend says which is which. Differences are in percent; a vertical line
    marks 0.

    Parameters
    ----------
    comparison : ResultsComparison or Comparison
        From :func:`evalstats.deciding._compare_results.compare_results` or
        :func:`evalstats.stats._compare.compare`.
    path : path
        The PNG file to write; an existing file is refused unless ``force``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    refuse_existing(path, force=force)
    return _save(paired_difference_figure(comparison), path, force=force)


@plain_text()
def paired_difference_figure(comparison: ResultsComparison | Comparison) -> Any:
    """The figure :func:`paired_difference_plot` draws, as a matplotlib ``Figure``."""
    from ..stats._compare import Comparison

    if isinstance(comparison, Comparison):
        title, level, cases = "B − A per case", comparison.level, len(comparison.cases)
    else:
        title = f"{drawn(comparison.b)} − {drawn(comparison.a)} per case"
        level = comparison.level
        cases = len(comparison.these_cases.cases) if comparison.these_cases is not None else 0
    rows = row_verdicts(comparison)
    labels = [label for label, _, _ in rows]
    fig = _figure(len(labels) + 1, names=labels, legend=list(VERDICT_WORDS.values()))
    ax = fig.add_subplot()
    seen = _verdict_bars(ax, rows, cases)
    ax.axvline(0.0, color="0.4", linewidth=0.8)
    if len(labels) > cases > 0:
        ax.axhline(len(labels) - cases - 0.5, color="0.7", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.set_xlim(-1.02, 1.02)
    _percent_axis(ax.xaxis, signed=True, step=0.25)
    ax.set_xlabel(_wrapped(f"difference in pass rate, B − A ({100 * level:g}% interval)", fig))
    ax.set_title(_wrapped(title, fig, points=12))
    ax.grid(axis="x", color="0.9")
    if seen:  # every verdict, drawn or not: the legend says what each colour means
        _verdict_legend(ax)
    if not labels:
        ax.text(0, 0.5, "no pairs to compare", ha="center", va="center")
    return _fit(fig)


def _verdict_bars(ax: Any, rows: Sequence[Any], cases: int) -> set[str]:
    """Each ``(label, interval, verdict)`` row drawn top down in its verdict's colour and
    marker, the rows after the first ``cases`` as overall ones; the verdicts drawn."""
    seen: set[str] = set()
    for i, (_, ci, verdict) in enumerate(rows):
        if not _finite(ci.estimate):
            continue
        _bar(
            ax,
            ci,
            len(rows) - 1 - i,
            overall=i >= cases,
            color=verdict_colour(verdict),
            marker=VERDICT_MARKERS[verdict],
        )
        seen.add(verdict)
    return seen


def _verdict_legend(ax: Any) -> None:
    """The legend of a figure coloured by verdict: every verdict, drawn or not, so
    that it says what each colour means."""
    from matplotlib.lines import Line2D

    order = ("b_better", "a_better", "cant_tell")
    keys = [
        Line2D([], [], color=verdict_colour(v), marker=VERDICT_MARKERS[v], markersize=5)
        for v in order
    ]
    ax.legend(
        keys,
        [VERDICT_WORDS[v] for v in order],
        title="verdict (a case:\nits adjusted flag)",
        title_fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
    )


def _score_tick(x: float, *, signed: bool) -> str:
    """A tick of a score axis, written as the reports write scores: ``0.25``, ``+0.5``."""
    text = f"{round(x, 6):g}".replace("-", "−")
    return "+" + text if signed and round(x, 6) > 0 else text


class _Point:
    """A value drawn as an interval of no width (a case's mean difference)."""

    def __init__(self, x: float) -> None:
        self.estimate = self.low = self.high = x


def score_rows(report: Report, comparison: Any = None) -> list[tuple[str, Any, str]]:
    """The rows of :func:`score_figure`, top to bottom: label, interval, verdict.

    With a score comparison (``comparison.scores``, B against A): each case's
    mean difference B − A (no interval: its verdict is its Holm-adjusted
    sign-flip flag), then the difference over all cases about these cases and
    about cases like these, each with its interval and verdict (the text's).
    Without one: each variant's mean score over all cases, both claims, with
    verdict ``cant_tell`` (nothing is compared).
    """
    sc = getattr(comparison, "scores", None)
    out: list[tuple[str, Any, str]] = []
    if sc is not None:
        for r in sc.these_cases.cases:
            verdict = "a_better" if r.worse else "b_better" if r.better else "cant_tell"
            out.append((drawn(r.case), _Point(r.mean_b - r.mean_a), verdict))
        out.append(("all: these cases", sc.these_cases.difference, sc.these_cases.verdict))
        if sc.cases_like_these is not None:
            like = sc.cases_like_these
            out.append(("all: cases like these", like.difference, like.verdict))
        return out
    for s in report.scores:
        out.append((f"{drawn(s.variant)}: these cases", s.these_cases, "cant_tell"))
        out.append((f"{drawn(s.variant)}: cases like these", s.cases_like_these, "cant_tell"))
    return out


@plain_text()
def score_figure(report: Report, comparison: Any = None) -> Any:
    """The mean-score figure of a run whose samples carry scores.

    With ``comparison`` (a :class:`ResultsComparison` whose ``scores`` is
    set): the mean score B − A per case and over all cases, both claims, each
    row in the colour and marker of its verdict (:func:`score_rows`; colours
    from :mod:`evalstats._palette`), on the 0-1 score scale the report prints
    (a difference from −1 to +1); otherwise each variant's mean score with both
    claims' intervals. Names are drawn as plain text and the figure grown until
    no text is cut.
    """
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    rows = score_rows(report, comparison)
    diff = getattr(comparison, "scores", None) is not None
    cases = sum(1 for _, ci, _ in rows if isinstance(ci, _Point))
    labels = [label for label, _, _ in rows]
    fig = _figure(len(labels) + 1, names=labels, legend=list(VERDICT_WORDS.values()))
    ax = fig.add_subplot()
    _verdict_bars(ax, rows, cases)
    if labels:
        ax.set_yticks(range(len(labels)), labels[::-1])
    if diff:
        ax.axvline(0.0, color="0.4", linewidth=0.8)
        if len(labels) > cases > 0:
            ax.axhline(len(labels) - cases - 0.5, color="0.7", linewidth=0.8)
        ax.set_xlim(-1.02, 1.02)
        title = f"{drawn(comparison.b)} − {drawn(comparison.a)}: mean score per case"
        what = f"difference in mean score, B − A, on 0 to 1 ({100 * report.level:g}% interval)"
    else:
        ax.set_xlim(-0.02, 1.02)
        title = "mean score per variant"
        what = f"mean score on 0 to 1 ({100 * report.level:g}% interval)"
    ax.xaxis.set_major_locator(MultipleLocator(0.25))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: _score_tick(x, signed=diff)))
    ax.set_xlabel(_wrapped(what, fig))
    ax.set_title(_wrapped(title, fig, points=12))
    ax.grid(axis="x", color="0.9")
    if diff:
        _verdict_legend(ax)
    if not labels:
        ax.text(0.5, 0.5, "no scores", ha="center", va="center")
    return _fit(fig)


def sequential_plot(
    comparison: SequentialComparison, path: str | os.PathLike[str], *, force: bool = False
) -> Path:
    """Draw a sequential comparison's trajectory into a PNG file.

    Top: the e-values for "B better" and "A better" from the start (1 at 0
    pairs) to the last look, a marker at every look, on a log scale, with the
    decision boundary 2 / (1 - level) and the last look's e-value written
    beside it. Bottom: the confidence sequence's interval of the difference at
    every look, in percent, with 0 marked. A dotted line in the verdict's
    colour marks the look where the verdict was reached. An existing file at
    ``path`` is refused unless ``force``.
    """
    refuse_existing(path, force=force)
    return _save(sequential_figure(comparison), path, force=force)


def _e_text(x: float) -> str:
    """An e-value as the trajectory's table writes it."""
    from ..deciding._sequential import _e

    return _e(x)


@plain_text()
def sequential_figure(comparison: SequentialComparison) -> Any:
    """The figure :func:`sequential_plot` draws, as a matplotlib ``Figure``."""
    looks = comparison.trajectory
    fig = _figure(13, legend=["95% confidence sequence"])  # 5.76 inches tall
    top, bottom = fig.subplots(2, 1, sharex=True)
    tiny = 1e-6  # a log axis cannot show 0
    # Each e-process starts at 1 before any pair; the lines run to the last look.
    pairs = [0] + [look.pairs for look in looks]
    marker = "o" if len(looks) <= 80 else None
    for name, values, colour in (
        ("B better", [look.evalue_b for look in looks], BETTER),
        ("A better", [look.evalue_a for look in looks], WORSE),
    ):
        top.plot(
            pairs,
            [1.0] + [max(v, tiny) for v in values],
            color=colour,
            marker=marker,
            markersize=3,
            lw=1.4,
            label=f"e-value, {name}",
        )
    top.axhline(
        comparison.threshold,
        color=NEUTRAL,
        lw=1,
        ls="--",
        label=f"decision boundary ({comparison.threshold:g})",
    )
    top.set_yscale("log")
    _plain_log_axis(top.yaxis)
    top.set_ylabel("e-value")
    about = claim_words(comparison.about)
    verdict = {"b_better": "B better", "a_better": "A better"}.get(
        comparison.verdict, "can't tell yet"
    )
    top.set_title(_wrapped(f"anytime-valid comparison ({about}): {verdict}", fig, points=12))
    if looks:
        last = looks[-1]
        lead = max(last.evalue_b, last.evalue_a)
        # Room above the boundary and the highest e-value for the last look's value.
        values = [max(v, tiny) for look in looks for v in (look.evalue_b, look.evalue_a)]
        top.set_ylim(min(min(values), 1.0) / 2.0, max(max(values), comparison.threshold) * 8.0)
        top.annotate(
            f"{_e_text(lead)} at {last.pairs} pairs",
            (last.pairs, max(lead, tiny)),
            xytext=(-4, 6),
            textcoords="offset points",
            ha="right",
            fontsize=8,
        )
        at = [look.pairs for look in looks]
        bottom.fill_between(
            at,
            [look.low for look in looks],
            [look.high for look in looks],
            color=OKABE_ITO["sky blue"],
            alpha=0.35,
            lw=0,
            label=f"{100 * comparison.level:g}% confidence sequence",
        )
        bottom.plot(
            at,
            [look.estimate for look in looks],
            color=NEUTRAL,
            lw=1,
            marker=marker,
            markersize=2.5,
            label="B − A so far",
        )
    else:
        top.text(0.5, 0.5, "no looks yet", ha="center", va="center", transform=top.transAxes)
    bottom.axhline(0.0, color="0.5", lw=1)
    if getattr(comparison, "on", "pass") == "score":  # mean scores: in score units
        bottom.set_ylabel("B − A (mean score)")
    else:
        _percent_axis(bottom.yaxis, signed=True, step=0.25)
        bottom.set_ylabel("B − A")
    bottom.set_ylim(-1.05, 1.05)
    bottom.set_xlabel("pairs")
    if comparison.decided_at is not None:
        for ax in (top, bottom):
            ax.axvline(
                comparison.decided_at,
                color=verdict_colour(comparison.verdict),
                lw=1.2,
                ls=":",
                zorder=0,
                label=f"decided after {comparison.decided_at} pairs" if ax is top else None,
            )
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    if looks:
        bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return _fit(fig)


def report_plots(
    results: Any, directory: str | os.PathLike[str], *, level: float = 0.95, force: bool = False
) -> tuple[Path, ...]:
    """Write the figures of a results file into ``directory`` (created if missing).

    ``results`` is a :class:`~evalstats.reading._source.RunSource` (the
    command's report and comparisons of it are then made once), a Results or
    a path. ``forest.png`` always; ``paired-differences.png`` when the run has at
    least two variants, comparing the second (B) with the first (A) in
    manifest order, as :func:`evalstats.deciding._compare_results.compare_results` does; and
    ``scores.png`` (see :func:`score_figure`) when the samples carry scores;
    and ``sequential.png`` (see :func:`sequential_plot`) for a sequential run,
    one with ``look`` records.

    Every figure is drawn before any file is written, and a figure already in
    ``directory`` is refused (nothing is written) unless ``force``; each file
    is then written whole or not at all.

    Returns
    -------
    tuple of pathlib.Path
        The files written.
    """
    from ..reading._source import RunSource
    from ._report import report

    source = RunSource.of(results)
    res = source.tally()
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise InvalidArgument(f"directory={os.fspath(directory)!r} is a file, not a folder")
    rep = report(source, level=level)
    names = [v.variant for v in rep.variants]
    figures: dict[str, Callable[[Report], Any]] = {"forest.png": forest_figure}
    if len(names) >= 2:
        cmp = comparison(source, names[0], names[1], level)
        figures["paired-differences.png"] = lambda _: paired_difference_figure(cmp)
    if rep.scores:
        cmp_s = comparison(source, names[0], names[1], level) if len(names) >= 2 else None
        figures["scores.png"] = lambda r: score_figure(r, cmp_s)
    if res.looks and len(names) >= 2:
        # A sequential run (run --until-decided): its trajectory, judged as it was.
        from ..deciding._sequential import sequential_results

        last = res.looks[-1]
        about = last.get("about", last.get("scope", "these_cases"))  # "scope": older files
        if last.get("on") == "score":  # run --until-decided --on score
            from ..deciding._score_sequential import sequential_score_results

            seq = sequential_score_results(source, names[0], names[1], about=about, level=level)
        else:
            seq = sequential_results(source, names[0], names[1], about=about, level=level)
        figures["sequential.png"] = lambda _: sequential_figure(seq)
    for name in figures:
        if os.path.lexists(folder / name) and not force:
            refuse_existing(folder / name)
    drawings = {name: png_bytes(make(rep)) for name, make in figures.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InvalidArgument(
            f"directory={os.fspath(directory)!r}: cannot create it: {error.strerror or error}"
        ) from None
    return tuple(write_output(folder / name, png, force=force) for name, png in drawings.items())


def comparison(source: Any, a: str, b: str, level: float) -> Any:
    """B compared with A in a run (:func:`~evalstats.deciding._compare_results.compare_results`
    with its defaults), made once per :class:`~evalstats.reading._source.RunSource`:
    the figures and the HTML page of one command show the same comparison."""
    from ..deciding._compare_results import compare_results

    return source.once(
        ("compare_results", a, b, level), lambda: compare_results(source, a, b, level=level)
    )
