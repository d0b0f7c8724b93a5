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
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import refuse_existing, write_output
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
    "plain_text",
    "png_bytes",
    "report_plots",
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


def _figure(rows: int) -> Any:
    from matplotlib.figure import Figure

    # About a third of an inch per row, within bounds: a suite of hundreds of cases gives a
    # tall figure, not one taller than image viewers handle.
    height = min(max(2.5, 0.32 * rows + 1.6), 60.0)
    return Figure(figsize=(7.5, height), layout="constrained")


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


def _bar(ax: Any, ci: Any, y: float, *, overall: bool, color: str) -> Any:
    """One interval as a marker with error bars: a dot for a case, a diamond for all cases."""
    est = float(ci.estimate)
    return ax.errorbar(
        [est],
        [y],
        xerr=[[est - float(ci.low)], [float(ci.high) - est]],
        fmt="D" if overall else "o",
        color=color,
        capsize=3,
        markersize=4,
    )


def forest_plot(report: Report, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Draw each case's pass rate and interval for every variant into a PNG file.

    One row per case, one marker per variant (offset so that they do not
    overlap), with the case's Wilson interval as a bar; two extra rows at the
    bottom show each variant's overall rate with its per-trial interval (about
    these cases) and its case-clustered interval (about cases like these).
    Cases with no measured sample show no marker.

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
    fig = _figure(len(labels) * max(1, len(variants)) // 2 + len(labels))
    ax = fig.add_subplot()
    step = 0.7 / max(len(variants), 1)
    colours = [f"C{i}" for i in range(len(variants))]
    # The legend is given its entries: matplotlib would leave out a name starting with "_".
    handles: list[Any] = []
    names: list[str] = []
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
                ax, ci, len(labels) - 1 - i + offset, overall=i >= len(cases), color=colours[j]
            )
            if len(names) == j:
                handles.append(bar)
                names.append(drawn(v))
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.axhline(1.5, color="0.7", linewidth=0.8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"pass rate ({100 * report.level:g}% interval)")
    ax.set_title("pass rate per case")
    ax.grid(axis="x", color="0.9")
    if handles:  # none without variants
        ax.legend(
            handles,
            names,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
            title="variant",
        )
    return fig


def paired_difference_plot(
    comparison: ResultsComparison | Comparison,
    path: str | os.PathLike[str],
    *,
    force: bool = False,
) -> Path:
    """Draw the per-case differences B - A with their intervals into a PNG file.

    One row per case with the case's own interval of ``p_b - p_a`` (marked
    when B got clearly worse or better), and at the bottom the overall
    difference: about these cases (the paired score test's interval, which
    excludes 0 exactly when its verdict is not "can't tell") and, when there
    is one, about cases like these (the clustered interval). A vertical line
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

    these: Comparison | None
    like: Comparison | None
    if isinstance(comparison, Comparison):
        these, like, title = comparison, None, "B − A per case"
    else:
        these, like = comparison.these_cases, comparison.cases_like_these
        title = f"{drawn(comparison.b)} − {drawn(comparison.a)} per case"
    rows = list(these.cases) if these is not None else []
    overall = []
    if these is not None:
        overall.append(("all: these cases", these.difference))
    if like is not None:
        overall.append(("all: cases like these", like.difference))
    labels = [drawn(r.case) for r in rows] + [name for name, _ in overall]
    intervals = [r.difference for r in rows] + [ci for _, ci in overall]
    fig = _figure(len(labels))
    ax = fig.add_subplot()
    for i, ci in enumerate(intervals):
        if not _finite(ci.estimate):
            continue
        worse = i < len(rows) and rows[i].worse
        better = i < len(rows) and rows[i].better
        colour = "C3" if worse else "C2" if better else "C0"
        _bar(ax, ci, len(labels) - 1 - i, overall=i >= len(rows), color=colour)
    ax.axvline(0.0, color="0.4", linewidth=0.8)
    if overall and rows:
        ax.axhline(len(overall) - 0.5, color="0.7", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.set_xlim(-1.02, 1.02)
    level = these.level if these is not None else 0.95
    ax.set_xlabel(
        f"difference in pass rate, B − A ({100 * level:g}% interval; "
        "red: B clearly worse, green: B clearly better)"
    )
    ax.set_title(title)
    ax.grid(axis="x", color="0.9")
    if not labels:
        ax.text(0, 0.5, "no pairs to compare", ha="center", va="center")
    return fig


def sequential_plot(
    comparison: SequentialComparison, path: str | os.PathLike[str], *, force: bool = False
) -> Path:
    """Draw a sequential comparison's trajectory into a PNG file.

    Top: the e-values for "B better" and "A better" at every look against the
    pairs so far, on a log scale, with the decision boundary 2 / (1 - level).
    Bottom: the confidence sequence's interval of the difference at every
    look, with 0 marked. A vertical line marks the look where the verdict was
    reached. An existing file at ``path`` is refused unless ``force``.
    """
    refuse_existing(path, force=force)
    return _save(sequential_figure(comparison), path, force=force)


@plain_text()
def sequential_figure(comparison: SequentialComparison) -> Any:
    """The figure :func:`sequential_plot` draws, as a matplotlib ``Figure``."""
    from matplotlib.figure import Figure

    looks = comparison.trajectory
    pairs = [look.pairs for look in looks]
    fig = Figure(figsize=(7.5, 5.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    tiny = 1e-6  # a log axis cannot show 0
    top.step(pairs, [max(look.evalue_b, tiny) for look in looks], where="post", label="B better")
    top.step(pairs, [max(look.evalue_a, tiny) for look in looks], where="post", label="A better")
    top.axhline(comparison.threshold, color="black", lw=1, ls="--", label="decision boundary")
    top.set_yscale("log")
    top.set_ylabel("e-value")
    top.legend(loc="upper left", fontsize=8)
    about = claim_words(comparison.about)
    verdict = {"b_better": "B better", "a_better": "A better"}.get(
        comparison.verdict, "can't tell yet"
    )
    top.set_title(f"anytime-valid comparison ({about}): {verdict}")
    bottom.fill_between(
        pairs,
        [look.low for look in looks],
        [look.high for look in looks],
        step="post",
        alpha=0.3,
        label=f"{100 * comparison.level:g}% confidence sequence",
    )
    bottom.step(pairs, [look.estimate for look in looks], where="post", color="black", lw=1)
    bottom.axhline(0.0, color="grey", lw=1)
    bottom.set_ylabel("B − A")
    bottom.set_xlabel("pairs")
    bottom.legend(loc="upper right", fontsize=8)
    if comparison.decided_at is not None:
        for ax in (top, bottom):
            ax.axvline(comparison.decided_at, color="tab:red", lw=1)
    return fig


def report_plots(
    results: Any, directory: str | os.PathLike[str], *, level: float = 0.95, force: bool = False
) -> tuple[Path, ...]:
    """Write the figures of a results file into ``directory`` (created if missing).

    ``results`` is a :class:`~evalstats.reading._source.RunSource` (the
    command's report and comparisons of it are then made once), a Results or
    a path. ``forest.png`` always; ``paired-differences.png`` when the run has at
    least two variants, comparing the second (B) with the first (A) in
    manifest order, as :func:`evalstats.deciding._compare_results.compare_results` does; and
    ``sequential.png`` (see :func:`sequential_plot`) for a sequential run,
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
    if res.looks and len(names) >= 2:
        # A sequential run (run --until-decided): its trajectory, judged as it was.
        from ..deciding._sequential import sequential_results

        last = res.looks[-1]
        about = last.get("about", last.get("scope", "these_cases"))  # "scope": older files
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
