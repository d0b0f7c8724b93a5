"""Figures of a report: per-case intervals (a forest plot) and paired differences.

matplotlib is imported inside the functions, and figures are drawn on a bare
:class:`matplotlib.figure.Figure` with the Agg renderer, so nothing here needs a
display or touches pyplot's global state.
"""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument
from ..stats._claims import claim_words

if TYPE_CHECKING:
    from ..deciding._compare_results import ResultsComparison
    from ..deciding._sequential import SequentialComparison
    from ..stats._compare import Comparison
    from ._report import Report

__all__ = [
    "forest_figure",
    "forest_plot",
    "paired_difference_figure",
    "paired_difference_plot",
    "report_plots",
    "sequential_plot",
]


def _figure(rows: int) -> Any:
    from matplotlib.figure import Figure

    # About a third of an inch per row, within bounds: a suite of hundreds of cases gives a
    # tall figure, not one taller than image viewers handle.
    height = min(max(2.5, 0.32 * rows + 1.6), 60.0)
    return Figure(figsize=(7.5, height), layout="constrained")


def _save(
    fig: Any, path: str | os.PathLike[str], *, overwrite: bool = True, dpi: int = 110
) -> Path:
    """Write ``fig`` as PNG to ``path``, never through a symbolic link.

    An existing file is replaced only with ``overwrite``; otherwise it is
    refused and left as it was. Every failure is an :class:`InvalidArgument`
    naming the path.
    """
    out = Path(path)
    shown = os.fspath(path)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= os.O_TRUNC if overwrite else os.O_EXCL
    try:
        fd = os.open(out, flags, 0o644)
    except FileExistsError:
        raise InvalidArgument(
            f"path={shown!r} already exists; choose another file or add --force to replace it"
        ) from None
    except FileNotFoundError:
        raise InvalidArgument(
            f"path={shown!r}: the folder {os.fspath(out.parent)!r} does not exist"
        ) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise InvalidArgument(
                f"path={shown!r} is a symbolic link; a figure is never written through one"
            ) from None
        raise InvalidArgument(
            f"path={shown!r}: cannot write the figure: {error.strerror or error}"
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            fig.savefig(handle, dpi=dpi, format="png")
    except OSError as error:
        raise InvalidArgument(
            f"path={shown!r}: cannot write the figure: {error.strerror or error}"
        ) from None
    return out


def _finite(x: Any) -> bool:
    return not math.isnan(float(x))


def _bar(
    ax: Any, ci: Any, y: float, *, overall: bool, color: str, label: str | None = None
) -> None:
    """One interval as a marker with error bars: a dot for a case, a diamond for all cases."""
    est = float(ci.estimate)
    ax.errorbar(
        [est],
        [y],
        xerr=[[est - float(ci.low)], [float(ci.high) - est]],
        fmt="D" if overall else "o",
        color=color,
        capsize=3,
        markersize=4,
        label=label,
    )


def forest_plot(report: Report, path: str | os.PathLike[str]) -> Path:
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
        The PNG file to write.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    return _save(forest_figure(report), path)


def forest_figure(report: Report) -> Any:
    """The figure :func:`forest_plot` draws, as a matplotlib ``Figure`` (for other formats)."""
    variants = [v.variant for v in report.variants]
    cases = list(report.case_ids)
    labels = cases + ["all: these cases", "all: cases like these"]
    fig = _figure(len(labels) * max(1, len(variants)) // 2 + len(labels))
    ax = fig.add_subplot()
    step = 0.7 / max(len(variants), 1)
    colours = [f"C{i}" for i in range(len(variants))]
    for j, v in enumerate(variants):
        offset = ((len(variants) - 1) / 2 - j) * step  # the first variant on top
        rows = {r.case: r for r in report.rows(v)}
        summary = report.variant(v)
        intervals = [rows[c].interval if c in rows else None for c in cases]
        intervals += [summary.per_trial, summary.clustered]
        for i, ci in enumerate(intervals):
            if ci is None or not _finite(ci.estimate):
                continue
            _bar(
                ax,
                ci,
                len(labels) - 1 - i + offset,
                overall=i >= len(cases),
                color=colours[j],
                label=v if i == 0 or (i == len(cases) and not cases) else None,
            )
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.axhline(1.5, color="0.7", linewidth=0.8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"pass rate ({100 * report.level:g}% interval)")
    ax.set_title("pass rate per case")
    ax.grid(axis="x", color="0.9")
    handles, names = ax.get_legend_handles_labels()
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
    comparison: ResultsComparison | Comparison, path: str | os.PathLike[str]
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
        The PNG file to write.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    return _save(paired_difference_figure(comparison), path)


def paired_difference_figure(comparison: ResultsComparison | Comparison) -> Any:
    """The figure :func:`paired_difference_plot` draws, as a matplotlib ``Figure``."""
    from ..stats._compare import Comparison

    these: Comparison | None
    like: Comparison | None
    if isinstance(comparison, Comparison):
        these, like, title = comparison, None, "B − A per case"
    else:
        these, like = comparison.these_cases, comparison.cases_like_these
        title = f"{comparison.b} − {comparison.a} per case"
    rows = list(these.cases) if these is not None else []
    overall = []
    if these is not None:
        overall.append(("all: these cases", these.difference))
    if like is not None:
        overall.append(("all: cases like these", like.difference))
    labels = [r.case for r in rows] + [name for name, _ in overall]
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


def sequential_plot(comparison: SequentialComparison, path: str | os.PathLike[str]) -> Path:
    """Draw a sequential comparison's trajectory into a PNG file.

    Top: the e-values for "B better" and "A better" at every look against the
    pairs so far, on a log scale, with the decision boundary 2 / (1 - level).
    Bottom: the confidence sequence's interval of the difference at every
    look, with 0 marked. A vertical line marks the look where the verdict was
    reached.
    """
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
    return _save(fig, path)


def report_plots(
    results: Any, directory: str | os.PathLike[str], *, level: float = 0.95
) -> tuple[Path, ...]:
    """Write the figures of a results file into ``directory`` (created if missing).

    ``results`` is a :class:`~evalstats.reading._source.RunSource` (the
    command's report and comparisons of it are then made once), a Results or
    a path. ``forest.png`` always; ``paired-differences.png`` when the run has at
    least two variants, comparing the second (B) with the first (A) in
    manifest order, as :func:`evalstats.deciding._compare_results.compare_results` does; and
    ``sequential.png`` (see :func:`sequential_plot`) for a sequential run,
    one with ``look`` records.

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
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InvalidArgument(
            f"directory={os.fspath(directory)!r}: cannot create it: {error.strerror or error}"
        ) from None
    rep = report(source, level=level)
    written = [forest_plot(rep, folder / "forest.png")]
    names = [v.variant for v in rep.variants]
    if len(names) >= 2:
        cmp = comparison(source, names[0], names[1], level)
        written.append(paired_difference_plot(cmp, folder / "paired-differences.png"))
    if res.looks and len(names) >= 2:
        # A sequential run (run --until-decided): its trajectory, judged as it was.
        from ..deciding._sequential import sequential_results

        last = res.looks[-1]
        about = last.get("about", last.get("scope", "these_cases"))  # "scope": older files
        seq = sequential_results(source, names[0], names[1], about=about, level=level)
        written.append(sequential_plot(seq, folder / "sequential.png"))
    return tuple(written)


def comparison(source: Any, a: str, b: str, level: float) -> Any:
    """B compared with A in a run (:func:`~evalstats.deciding._compare_results.compare_results`
    with its defaults), made once per :class:`~evalstats.reading._source.RunSource`:
    the figures and the HTML page of one command show the same comparison."""
    from ..deciding._compare_results import compare_results

    return source.once(
        ("compare_results", a, b, level), lambda: compare_results(source, a, b, level=level)
    )
