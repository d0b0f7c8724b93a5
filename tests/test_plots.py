"""The figures read back: ticks in percent, no text cut, colours of the verdicts, the last look.

Each test draws a figure and reads its matplotlib objects (tick labels, text
bounding boxes against the figure's, the colours of the rows, the data of the
lines), not its pixels, except where a colour must be the same in PNG and SVG.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from matplotlib.colors import to_hex, to_rgb
from matplotlib.text import Text
from records import results

from evalstats._palette import BETTER, NEUTRAL, OKABE_ITO, VERDICT_COLOURS, WORSE
from evalstats.deciding._compare_results import compare_results
from evalstats.deciding._sequential import sequential_compare, sequential_results
from evalstats.presenting._plots import (
    LABEL_LIMIT,
    forest_figure,
    paired_difference_figure,
    png_bytes,
    sequential_figure,
)
from evalstats.presenting._report import report
from evalstats.stats._compare import compare

LONG = "a case whose name runs on and on, well past what fits: " + "x" * 80
VARIANT = "$\\frac{$ a variant named at length, " + "y" * 60


def _run(*, long: bool = False):
    """A paired run of 6 cases x 10 repeats in which B is clearly better overall,
    clearly worse on one case and clearly better on none by itself."""
    names = [LONG if long else "c0"] + [f"c{i}" for i in range(1, 6)]
    a_name, b_name = ("v1", VARIANT) if long else ("v1", "v2")
    a = {c: [i % 2 == 0 for i in range(10)] for c in names}
    b = {c: [True] * 10 for c in names}
    a[names[5]] = [True] * 10
    b[names[5]] = [False] * 10
    return results({a_name: a, b_name: b}, sampled=True)


@pytest.fixture(scope="module")
def run():
    return _run()


@pytest.fixture(scope="module")
def long_run():
    return _run(long=True)


def _drawn_tick_labels(axis):
    """The tick labels the axis draws: the ones whose tick lies in its view."""
    low, high = sorted(axis.get_view_interval())
    locs = axis.get_majorticklocs()
    return [
        label
        for loc, tick in zip(locs, axis.get_major_ticks(len(locs)), strict=True)
        for label in (tick.label1, tick.label2)
        if low - 1e-9 <= loc <= high + 1e-9 and label.get_visible() and label.get_text()
    ]


def _texts(fig):
    """Every text the figure draws: titles, axis labels, legends, notes and drawn ticks."""
    fig.draw_without_rendering()
    ticks = {id(t) for ax in fig.axes for a in (ax.xaxis, ax.yaxis) for t in a.get_ticklabels()}
    texts = [
        t
        for t in fig.findobj(Text)
        if id(t) not in ticks and t.get_visible() and t.get_text().strip()
    ]
    for ax in fig.axes:
        texts += _drawn_tick_labels(ax.xaxis) + _drawn_tick_labels(ax.yaxis)
    return texts


def _outside(fig):
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    for text in _texts(fig):
        bb = text.get_window_extent(renderer)
        if min(bb.x0 - box.x0, bb.y0 - box.y0, box.x1 - bb.x1, box.y1 - bb.y1) < -0.5:
            out.append(text.get_text())
    return out


_DRAWN: dict[int, dict] = {}


def _figures(run):
    """The three figures of ``run``, drawn once per module (the tests only read them)."""
    if id(run) not in _DRAWN:
        a, b = (v["name"] for v in run.manifest["variants"])
        _DRAWN[id(run)] = {
            "forest": forest_figure(report(run)),
            "paired": paired_difference_figure(compare_results(run, a, b)),
            "sequential": sequential_figure(sequential_results(run, a, b)),
        }
    return _DRAWN[id(run)]


# --- percent ---------------------------------------------------------------------------


def test_rates_and_differences_are_ticked_in_percent(run):
    figs = _figures(run)
    forest = [t.get_text() for t in _drawn_tick_labels(figs["forest"].axes[0].xaxis)]
    assert forest == ["0%", "20%", "40%", "60%", "80%", "100%"]
    paired = [t.get_text() for t in _drawn_tick_labels(figs["paired"].axes[0].xaxis)]
    assert paired == ["−100%", "−75%", "−50%", "−25%", "0%", "+25%", "+50%", "+75%", "+100%"]
    bottom = [t.get_text() for t in _drawn_tick_labels(figs["sequential"].axes[1].yaxis)]
    assert bottom and all(re.fullmatch(r"[+−]?\d+%", t) for t in bottom)
    assert "0%" in bottom and "+50%" in bottom


def test_the_e_value_axis_is_labelled_in_plain_numbers_not_mathtext(run):
    fig = _figures(run)["sequential"]
    labels = [t.get_text() for t in _drawn_tick_labels(fig.axes[0].yaxis)]
    assert labels and "1" in labels and "10" in labels
    assert not any("$" in t or "mathdefault" in t for t in labels)


# --- nothing cut -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["forest", "paired", "sequential"])
def test_every_text_lies_inside_the_figure(run, long_run, kind):
    for r in (run, long_run):
        fig = _figures(r)[kind]
        assert _texts(fig), "the figure draws some text"
        assert _outside(fig) == []


def test_long_names_are_drawn_whole_up_to_the_limit_and_still_fit(long_run):
    fig = _figures(long_run)["paired"]
    labels = [t.get_text() for t in _drawn_tick_labels(fig.axes[0].yaxis)]
    assert LONG[: LABEL_LIMIT - 1] + "…" in labels
    title = fig.axes[0].get_title().replace("\n", " ")
    assert "$\\frac{$" in title  # drawn as the characters it holds
    assert _outside(fig) == []


def test_a_figure_grown_for_long_names_is_wider_not_cut(run, long_run):
    short = _figures(run)["forest"].get_figwidth()
    wide = _figures(long_run)["forest"].get_figwidth()
    assert wide > short


# --- colours ---------------------------------------------------------------------------


def _row_colours(fig):
    """Colour and marker of each row of the paired figure, by its y position (top first)."""
    ax = fig.axes[0]
    rows = {}
    for container in ax.containers:
        line = container.lines[0]
        rows[float(line.get_ydata()[0])] = (to_hex(line.get_color()), line.get_marker())
    return [rows[y] for y in sorted(rows, reverse=True)]


def _expected(cmp):
    """Each row's verdict as the text gives it (top first)."""
    rows = []
    text = str(cmp)
    for r in cmp.these_cases.cases:
        line = next(x for x in text.splitlines() if x.startswith(f"  {r.case} "))
        if line.endswith("B clearly worse"):
            rows.append("a_better")
        elif line.endswith("B clearly better"):
            rows.append("b_better")
        else:
            rows.append("cant_tell")
    for head, c in (("these cases:", cmp.these_cases), ("cases like these:", cmp.cases_like_these)):
        line = next(x for x in text.splitlines() if x.startswith(head))
        words = line.split(":", 1)[1].strip()
        verdict = {"B better": "b_better", "A better": "a_better"}.get(
            words.split(":")[0], "cant_tell"
        )
        assert verdict == c.verdict
        rows.append(verdict)
    return rows


def test_each_row_has_the_colour_of_the_verdict_the_text_gives(run):
    cmp = compare_results(run, "v1", "v2")
    expected = _expected(cmp)
    # The run is built so that every colour is there: B better about these cases (the
    # row drawn in the neutral colour before), B clearly worse on one case.
    assert expected[-2] == "b_better" and "a_better" in expected and "cant_tell" in expected
    colours = _row_colours(paired_difference_figure(cmp))
    assert [c for c, _ in colours] == [VERDICT_COLOURS[v].lower() for v in expected]
    markers = [m for _, m in colours]
    assert markers[expected.index("a_better")] == "v" and markers[-2] == "^"


def test_the_legend_names_every_colour_in_words(run):
    fig = paired_difference_figure(compare_results(run, "v1", "v2"))
    legend = fig.axes[0].get_legend()
    words = [t.get_text() for t in legend.get_texts()]
    assert words == ["B clearly better", "B clearly worse", "can't tell"]
    colours = [to_hex(h.get_color()) for h in legend.legend_handles]
    assert colours == [BETTER.lower(), WORSE.lower(), NEUTRAL.lower()]


def test_a_plain_comparison_draws_its_verdict_colour_too():
    a = {"c": [True] * 30 + [False] * 30}
    b = {"c": [True] * 60}
    cmp = compare(a, b)
    assert cmp.verdict == "b_better"
    colours = _row_colours(paired_difference_figure(cmp))
    assert colours[-1][0] == BETTER.lower()


def test_variants_take_the_palette_in_order(run):
    fig = forest_figure(report(run))
    legend = fig.axes[0].get_legend()
    colours = [to_hex(h.get_color()[0]) for h in legend.legend_handles]
    assert colours == [OKABE_ITO["blue"].lower(), OKABE_ITO["orange"].lower()]


def test_png_and_svg_use_the_palettes_colours(run):
    fig = paired_difference_figure(compare_results(run, "v1", "v2"))
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    svg = buf.getvalue().lower()
    found = set(re.findall(r"#[0-9a-f]{6}", svg))
    palette = {c.lower() for c in OKABE_ITO.values()}
    greys = {c for c in found if c[1:3] == c[3:5] == c[5:7]}
    assert {BETTER.lower(), WORSE.lower()} <= found
    assert found - greys <= palette
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png_bytes(fig)))[..., :3]
    for colour in (BETTER, WORSE):
        target = np.array(to_rgb(colour))
        assert (np.abs(pixels - target).max(axis=-1) < 2 / 255).sum() > 20


# --- the sequential plot ---------------------------------------------------------------


def _lines(fig):
    return {line.get_label(): line for line in fig.axes[0].get_lines()}


def test_the_sequential_lines_run_to_the_last_look(run):
    seq = sequential_results(run, "v1", "v2")
    last = seq.trajectory[-1]
    fig = sequential_figure(seq)
    lines = _lines(fig)
    for label, value in (
        ("e-value, B better", last.evalue_b),
        ("e-value, A better", last.evalue_a),
    ):
        x, y = lines[label].get_xdata(), lines[label].get_ydata()
        assert x[-1] == last.pairs == seq.pairs
        assert y[-1] == pytest.approx(value)
        assert list(x[1:]) == [look.pairs for look in seq.trajectory]
        assert (x[0], y[0]) == (0, 1.0)  # every e-process starts at 1
    interval = fig.axes[1].get_lines()
    assert any(line.get_xdata()[-1] == last.pairs for line in interval)


def test_the_last_looks_e_value_is_written_as_the_table_writes_it():
    # Decided at the last look: the line's last step is the one that crosses the boundary.
    a = {f"c{i}": [j % 3 == 0 for j in range(12)] for i in range(4)}
    b = {f"c{i}": [True] * 12 for i in range(4)}
    rounds = sequential_compare(a, b).decided_at // 4  # stop the data where it decided
    seq = sequential_compare(
        {c: x[:rounds] for c, x in a.items()}, {c: x[:rounds] for c, x in b.items()}
    )
    last = seq.trajectory[-1]
    assert seq.decided_at == last.pairs and last.evalue_b > seq.threshold
    fig = sequential_figure(seq)
    table = seq.trajectory_text().splitlines()[-1].split()
    notes = [t.get_text() for t in fig.axes[0].texts]
    assert notes == [f"{table[1]} at {last.pairs} pairs"]
    y = _lines(fig)["e-value, B better"].get_ydata()
    assert y[-1] > seq.threshold > y[-2]
    low, high = fig.axes[0].get_ylim()
    assert high > y[-1]  # drawn inside the axes, not at its edge
    assert _outside(fig) == []


def test_a_sequential_comparison_with_no_looks_draws_a_note():
    from dataclasses import replace

    base = sequential_compare({"c": [True, False]}, {"c": [True, True]})
    seq = replace(base, trajectory=())
    fig = sequential_figure(seq)
    assert "no looks yet" in [t.get_text() for t in fig.axes[0].texts]
    assert _outside(fig) == []


# --- the power figure ------------------------------------------------------------------


def test_the_power_figure_is_in_percent_and_in_the_palette():
    from evalstats._palette import VARIANT_COLOURS
    from evalstats.planning._power import power_figure

    fig = power_figure(0.7, 0.9, [20, 40], methods=("newcombe", "mcnemar"))
    ax = fig.axes[0]
    fig.draw_without_rendering()
    labels = [t.get_text() for t in _drawn_tick_labels(ax.yaxis)]
    assert labels == ["0%", "20%", "40%", "60%", "80%", "100%"]
    powers = [line for line in ax.get_lines() if line.get_label().endswith(" power")]
    assert [to_hex(line.get_color()) for line in powers] == [c.lower() for c in VARIANT_COLOURS[:2]]
    import matplotlib.pyplot as plt

    plt.close(fig)


# --- the mean-score figure ---------------------------------------------------------------


def _scored_run(tmp_path, *, long: bool = False):
    from scored import scored_run

    name = "c-" + "x" * 70 if long else "c0"
    # On the first case B scores 1 where A scores 5, 8 times: its sign-flip p-value is
    # 2/256, clearly lower after Holm over 6 cases; elsewhere B is a step higher.
    old = {name: [5] * 8, **{f"c{i}": [2 + (i + r) % 3 for r in range(8)] for i in range(1, 6)}}
    new = {name: [1] * 8, **{f"c{i}": [3 + (i + r) % 3 for r in range(8)] for i in range(1, 6)}}
    return scored_run(tmp_path / f"r{long}.jsonl", {"old": old, "new": new})


def test_the_score_figure_colours_each_row_by_the_verdict_the_text_gives(tmp_path):
    from evalstats.presenting._plots import score_figure, score_rows

    path = _scored_run(tmp_path)
    cmp = compare_results(str(path), "old", "new")
    text = "\n".join(cmp.scores.lines())
    expected = []
    for r in cmp.scores.these_cases.cases:
        line = next(x for x in text.splitlines() if x.startswith(f"  {r.case} "))
        expected.append(
            "a_better"
            if line.endswith("B clearly lower")
            else "b_better"
            if line.endswith("B clearly higher")
            else "cant_tell"
        )
    for head in ("these cases:", "cases like these:"):
        line = next(x for x in text.splitlines() if x.startswith(head))
        words = line.split(":", 1)[1].strip().split(":")[0]
        expected.append({"B better": "b_better", "A better": "a_better"}.get(words, "cant_tell"))
    assert expected[0] == "a_better" and "cant_tell" in expected
    assert [v for _, _, v in score_rows(report(str(path)), cmp)] == expected
    fig = score_figure(report(str(path)), cmp)
    colours = _row_colours(fig)
    assert [c for c, _ in colours] == [VERDICT_COLOURS[v].lower() for v in expected]
    # on the 0-1 score scale the report prints, not in percent
    ticks = [t.get_text() for t in _drawn_tick_labels(fig.axes[0].xaxis)]
    assert (
        ticks[0] == "−1" and "+0.5" in ticks and "0" in ticks and not any("%" in t for t in ticks)
    )
    assert _outside(fig) == []


def test_the_score_figure_of_long_names_and_one_variant_cuts_nothing(tmp_path):
    from scored import scored_run

    from evalstats.presenting._plots import score_figure

    path = _scored_run(tmp_path, long=True)
    cmp = compare_results(str(path), "old", "new")
    assert _outside(score_figure(report(str(path)), cmp)) == []
    one = scored_run(tmp_path / "one.jsonl", {"v-" + "y" * 70: {"c": [1, 3, 5]}})
    fig = score_figure(report(str(one)))
    assert _outside(fig) == []
    ticks = [t.get_text() for t in _drawn_tick_labels(fig.axes[0].xaxis)]
    assert ticks == ["0", "0.25", "0.5", "0.75", "1"]


def test_report_plots_draws_the_score_figure_only_for_scores(tmp_path):
    from evalstats.cli import main

    path = _scored_run(tmp_path)
    assert main(["report", str(path), "--plots", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / "scores.png").read_bytes()[:4] == b"\x89PNG"
    plain = tmp_path / "plain.jsonl"
    import records

    outcomes = {v: {"x": [True, False] * 2} for v in ("a", "b")}
    records.write(plain, records.manifest(["x"], ["a", "b"], 4), records.samples(outcomes))
    assert main(["report", str(plain), "--plots", str(tmp_path / "p")]) == 0
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [
        "forest.png",
        "paired-differences.png",
    ]
