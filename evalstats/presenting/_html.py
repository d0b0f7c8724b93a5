"""The report as one self-contained HTML file.

:func:`html_report` writes everything ``evalstats report`` and ``evalstats
compare`` say about a run into one file a person can open and click through:
the manifest, overall and per-case pass rates with their intervals, the
comparison verdicts, the forest and paired-difference figures, counts per
axis and per check, latency and tokens, and one row per sample with its
status and the reasons of its failed checks.

The file stands alone: no script, no stylesheet, font or image is fetched;
the figures are inline SVG drawn by matplotlib's SVG backend, text kept as
text. Answers and traces may be private, so they are shown only behind a
click (``<details>``), and the file is created with mode 0600 and never
overwrites an existing one unless told to. Every value on the page, names from
other tools' logs included, goes through the escaping of
:mod:`evalstats.presenting._markup`: it shows as text and never becomes an
element. The layout is one column that reads on a phone: wide tables scroll
sideways inside their own box.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ..errors import ResultsFileError
from ..results._file import sample_passed
from ._markup import Markup, element, join

__all__ = ["html_report", "render_html"]

#: At most this many samples are listed one by one; a larger run lists the
#: first ones (in case order) and says how many it left out.
MAX_SAMPLES = 5000

#: Answers and traces longer than this are cut in the per-sample view.
MAX_TEXT = 20_000

_CSS = """
:root { color-scheme: light; --line: #d6d6d6; --muted: #5f5f5f; --bad: #b3261e; --good: #1e6b2e; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       padding: 12px; color: #1b1b1b; background: #fff; max-width: 1100px; margin-inline: auto; }
h1 { font-size: 1.35em; margin: 0.2em 0 0.4em; overflow-wrap: anywhere; }
h2 { font-size: 1.15em; margin: 1.6em 0 0.5em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1em; margin: 1.2em 0 0.4em; overflow-wrap: anywhere; }
p, li { overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; max-width: 100%; }
table { border-collapse: collapse; margin: 0.3em 0 1em; font-size: 0.93em; }
th, td { border: 1px solid var(--line); padding: 4px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.passed { color: var(--good); } .failed, .worse { color: var(--bad); font-weight: 600; }
.better { color: var(--good); font-weight: 600; }
.verdict { font-weight: 600; }
figure { margin: 0.5em 0 1.2em; }
figure svg { max-width: 100%; height: auto; display: block; }
details > summary { cursor: pointer; color: #1a4f8b; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; padding: 6px;
      margin: 4px 0; max-height: 24em; overflow-y: auto; font-size: 0.9em; }
ul.warnings li { color: #7a4b00; }
nav { display: flex; flex-wrap: wrap; gap: 0.2em 0.9em; }
nav a { white-space: nowrap; }
@media (max-width: 600px) { body { font-size: 14px; padding: 8px; } th, td { padding: 3px 5px; } }
"""


def _pct(x: Any) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(x) else f"{100 * x:.0f}%"


def _seconds(x: Any) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(x):
        return "–"
    if x >= 1.0:
        return f"{x:.3g} s"
    if x >= 1e-3:
        return f"{1e3 * x:.3g} ms"
    return f"{1e6 * x:.3g} µs"


def _table(head: Sequence[Any], rows: Iterable[Sequence[Any]], *, cls: str) -> Markup:
    """A table in a sideways-scrolling box.

    A cell is a value (escaped), :class:`Markup`, or a ``(content, css class)`` pair.
    """
    body = [element("tr", *(_cell(c) for c in row)) for row in rows]
    table = element(
        "table",
        element("thead", element("tr", *(element("th", h) for h in head))),
        element("tbody", *body),
        cls=cls,
    )
    return element("div", table, cls="scroll")


def _cell(c: Any) -> Markup:
    if isinstance(c, tuple):  # (content, css class)
        return element("td", c[0], cls=c[1])
    return element("td", c)


def _svg(fig: Any) -> Markup:
    """A matplotlib figure as inline SVG: text as text, no metadata, no external reference."""
    from ._plots import plain_text

    buf = io.StringIO()
    with plain_text({"svg.fonttype": "none", "svg.hashsalt": "evalstats"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML declaration and DOCTYPE (a DTD URL)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    _check_svg(svg)
    return Markup(svg)


#: What matplotlib's SVG drawing of a report's figures is made of.
_SVG_TAGS = frozenset(
    {"svg", "defs", "style", "g", "path", "use", "clippath", "rect", "text", "tspan", "title"}
)


class _SvgCheck(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _SVG_TAGS:
            self.bad.append(f"<{tag}>")
        for name, value in attrs:
            linked = name in ("href", "xlink:href") and not (value or "").startswith("#")
            if name.startswith("on") or linked:
                self.bad.append(f"{name}= on <{tag}>")


def _check_svg(svg: str) -> None:
    """Refuse a drawing holding more than shapes and text (a mistake of ours, not data)."""
    check = _SvgCheck()
    check.feed(svg)
    check.close()
    if check.bad:
        raise ValueError(f"the figure's SVG holds {', '.join(check.bad[:3])}")


# --- sections -------------------------------------------------------------------------


def _code(value: Any) -> Markup:
    return element("code", value)


def _manifest_section(res: Any, rep: Any) -> Markup:
    m = res.manifest
    suite = m.get("suite") or {}
    rows: list[tuple[str, Any]] = []
    rows.append(("suite", suite.get("name") or "–"))
    if suite.get("version") is not None:
        rows.append(("suite version", suite["version"]))
    if suite.get("sha256"):
        rows.append(("suite SHA-256", _code(f"{str(suite['sha256'])[:16]}…")))
    imported = m.get("imported")
    if isinstance(imported, Mapping):
        source = f"{imported.get('tool')}" + (
            f" {imported.get('version')}" if imported.get("version") else ""
        )
        files = m.get("merged") or [imported.get("file")]
        rows.append(("imported from", f"{source}, " + ", ".join(str(f) for f in files)))
        rows.append(("a sample passes when", imported.get("pass_rule")))
    rows.append(("cases", len(rep.case_ids)))
    rows.append(("runs per case", rep.runs if rep.runs is not None else "varies"))
    for v in m.get("variants") or []:
        if isinstance(v, Mapping):
            task = v.get("task")
            rows.append(
                (
                    f"variant {v.get('name')}",
                    _code(json.dumps(task, ensure_ascii=False, default=str))
                    if task is not None
                    else "–",
                )
            )
    for key, label in (
        ("counting_method", "counting method"),
        ("machine", "machine"),
        ("evalstats", "evalstats version"),
        ("seed", "seed"),
    ):
        if m.get(key) is not None:
            rows.append((label, m[key]))
    env = m.get("environment")
    if isinstance(env, Mapping):
        rows.append(("environment", ", ".join(f"{k} {v}" for k, v in env.items())))
    rows.append(("status", rep.status or "did not finish (no summary)"))
    parts = [_table(["", ""], rows, cls="manifest")]
    if rep.warnings:
        parts.append(element("ul", *(element("li", w) for w in rep.warnings), cls="warnings"))
    return join(parts)


def _muted(words: Any) -> Markup:
    return element("p", words, cls="muted")


def _overall_section(rep: Any) -> Markup:
    level = f"{100 * rep.level:g}%"
    rows = []
    for v in rep.variants:
        flat = v.clustered.clusters >= 2 and v.clustered.se == 0.0
        deff = "n/a" if flat or math.isnan(v.design_effect) else f"{v.design_effect:.2f}"
        rows.append(
            [
                v.variant,
                (f"{v.passes}/{v.measured}", "num"),
                (v.per_trial, "num"),
                (v.clustered, "num"),
                (v.clustered.clusters, "num"),
                (deff, "num"),
                (v.completed, "num"),
                (v.incomplete, "num"),
                (v.unmeasured, "num"),
                (v.missing, "num"),
            ]
        )
    head = [
        "variant",
        "passed",
        f"these cases ({level} Wilson)",
        f"cases like these ({level} clustered)",
        "cases",
        "design effect",
        "completed",
        "incomplete",
        "unmeasured",
        "not run",
    ]
    note = _muted(
        '"These cases": how often these cases would pass if run again '
        '(every sample an independent trial). "Cases like these": how often cases like '
        "these would pass, the cases being a sample of those one could have written. "
        "Incomplete samples count as failures; unmeasured ones (no answer from the "
        "service) are left out of the rates."
    )
    return join([_table(head, rows, cls="overall"), note])


def _latency_section(rep: Any) -> Markup:
    rows = []
    for v in rep.variants:
        tokens = (
            f"{v.tokens_input if v.tokens_input is not None else '?'} in, "
            f"{v.tokens_output if v.tokens_output is not None else '?'} out"
            if v.tokens_samples
            else "–"
        )
        rows.append(
            [
                v.variant,
                (_seconds(v.latency_median), "num"),
                (_seconds(v.latency_p95), "num"),
                (v.latency_samples, "num"),
                (tokens, "num"),
                (v.tokens_samples, "num"),
            ]
        )
    head = ["variant", "median", "95th percentile", "samples", "tokens", "samples"]
    return _table(head, rows, cls="latency")


def _cases_section(rep: Any) -> Markup:
    rows = []
    for r in rep.cases:
        problems = ", ".join(
            f"{n} ×{k}" + (f" ({ni} not inspected)" if ni else "") for n, k, ni in r.problems
        )
        rows.append(
            [
                r.case,
                r.variant,
                (f"{r.passes}/{r.measured}", "num"),
                (r.interval, "num"),
                (r.unmeasured, "num"),
                (r.incomplete, "num"),
                problems or "–",
            ]
        )
    head = [
        "case",
        "variant",
        "passed",
        f"pass rate ({100 * rep.level:g}% Wilson)",
        "unmeasured",
        "incomplete",
        "most failed checks",
    ]
    return _table(head, rows, cls="cases")


def _counts_table(rep: Any, attr: str, what: str) -> Markup:
    rows = []
    for v in rep.variants:
        for name, c in getattr(v, attr).items():
            rows.append(
                [
                    v.variant,
                    name,
                    (c.passed, "num"),
                    (c.scored - c.passed, "num"),
                    (_pct(c.rate), "num"),
                    (c.unscored, "num"),
                    (c.not_inspected, "num"),
                ]
            )
    head = ["variant", what, "passed", "failed", "rate", "unscored", "nothing to inspect"]
    if not rows:
        return join([_muted(f"No {what} verdicts."), _table(head, [], cls=attr)])
    return _table(head, rows, cls=attr)


def _verdict_text(cmp: Any) -> Markup | str:
    if cmp is None:
        return "–"
    words = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}
    said = str(cmp)
    head = words.get(cmp.verdict, cmp.verdict)
    if said.startswith(head):
        said = said[len(head) :]
    return join([element("span", head, cls="verdict"), said])


def _comparison_section(cmp: Any) -> Markup:
    out = [element("h3", f"{cmp.b} (B) against {cmp.a} (A)")]
    if cmp.paired:
        how = (
            f"Paired by (case, repeat): {cmp.pairs} pairs; {cmp.dropped_unmeasured} dropped "
            f"because a side was unmeasured, {cmp.dropped_missing} because a side was not run."
        )
    else:
        how = "Not paired: compared as independent samples."
    out.append(element("p", how))
    rows: list[list[Any]] = [
        ["about these cases", _verdict_text(cmp.these_cases)],
        ["about cases like these", _verdict_text(cmp.cases_like_these)],
    ]
    out.append(_table(["question", "verdict"], rows, cls="verdicts"))
    if cmp.reason:
        out.append(_muted(cmp.reason))
    base = cmp.these_cases
    if base is not None and base.cases:
        rows = []  # the same list type as above
        for r in base.cases:
            flag = ("B clearly worse", "worse") if r.worse else ("B clearly better", "better")
            rows.append(
                [
                    r.case,
                    (f"{r.passes_a}/{r.trials_a}", "num"),
                    (f"{r.passes_b}/{r.trials_b}", "num"),
                    (r.difference, "num"),
                    flag if (r.worse or r.better) else "–",
                ]
            )
        out.append(_table(["case", "A", "B", "B − A", ""], rows, cls="differences"))
    return join(out)


def _private(label: str, shown: str) -> Markup:
    """Text that may be private, behind a click; cut at :data:`MAX_TEXT` characters."""
    cut = " […]" if len(shown) > MAX_TEXT else ""
    return element("details", element("summary", label), element("pre", shown[:MAX_TEXT] + cut))


def _sample_rows(res: Any, case_order: Sequence[str], limit: int) -> tuple[Markup, int]:
    order = {c: i for i, c in enumerate(case_order)}
    names = {v: i for i, v in enumerate(res.variants())}
    samples = sorted(
        res.samples,
        key=lambda s: (
            order.get(s["case"], len(order)),
            s["case"],
            names.get(s["variant"], len(names)),
            s["repeat"],
        ),
    )
    shown = samples[:limit]
    rows = []
    for s in shown:
        passed = sample_passed(s)
        outcome = (
            ("not measured", "muted")
            if passed is None
            else ("passed", "passed")
            if passed
            else ("failed", "failed")
        )
        failed = [
            c
            for c in s.get("checks") or ()
            if isinstance(c, Mapping) and c.get("status") == "failed"
        ]
        reasons = [
            element(
                "li",
                str(c.get("check") or "check")
                + (f": {c.get('reason')}" if c.get("reason") else ""),
            )
            for c in failed
        ]
        detail = []
        if s.get("reason"):
            detail.append(element("p", s["reason"]))
        if reasons:
            detail.append(element("ul", *reasons))
        private = []
        answer = s.get("answer")
        if answer is not None:
            private.append(_private("answer", str(answer)))
        trace = s.get("trace")
        if trace:
            private.append(
                _private("trace", json.dumps(trace, ensure_ascii=False, indent=1, default=str))
            )
        latency = s.get("latency_s")
        rows.append(
            [
                s["case"],
                s["variant"],
                (s["repeat"], "num"),
                s.get("status"),
                outcome,
                join(detail) if detail else "–",
                (_seconds(latency) if isinstance(latency, int | float) else "–", "num"),
                join(private) if private else "–",
            ]
        )
    head = ["case", "variant", "repeat", "status", "outcome", "failed checks", "latency", ""]
    return _table(head, rows, cls="samples"), len(samples)


def render_html(results: Any, *, level: float = 0.95, max_samples: int = MAX_SAMPLES) -> str:
    """The HTML report of ``results`` (a :class:`~evalstats.reading._source.RunSource`,
    a :class:`~evalstats.Results` or a path), as text.

    See :func:`html_report`, which writes it to a file.
    """
    from .._validate import check_level, whole_number
    from ..reading._source import RunSource
    from ._plots import comparison, forest_figure, paired_difference_figure
    from ._report import report

    level = check_level(level)
    max_samples = whole_number("max_samples", max_samples, minimum=0)
    # The samples table shows answers, so this view holds the records; the report
    # and the comparisons are made once per source, counted from the same records.
    source = RunSource.of(results)
    res = source.results()
    rep = report(source, level=level)
    names = [v.variant for v in rep.variants]
    comparisons = [comparison(source, names[0], b, level) for b in names[1:]]
    suite = (res.manifest.get("suite") or {}).get("name") or "run"
    title = f"evalstats report: {suite}"
    nav = [
        ("manifest", "manifest"),
        ("overall", "overall"),
        ("comparisons", "comparisons"),
        ("figures", "figures"),
        ("cases", "per case"),
        ("checks", "axes and checks"),
        ("latency", "latency"),
        ("samples", "samples"),
    ]
    head = Markup(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # No request of any kind leaves this page, even if someone adds a link later.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">\n"
    )
    parts: list[Markup] = [
        head,
        join([Markup("<title>"), title, Markup(f"</title><style>{_CSS}</style></head><body>")]),
        element("h1", title),
        element("nav", *(element("a", words, href=f"#{anchor}") for anchor, words in nav)),
        element("h2", "Manifest", id="manifest"),
        _manifest_section(res, rep),
        element("h2", "Overall", id="overall"),
        _overall_section(rep),
        element("h2", "Comparisons", id="comparisons"),
    ]
    if comparisons:
        parts += [_comparison_section(c) for c in comparisons]
    else:
        parts.append(_muted("One variant only: nothing to compare."))
    parts.append(element("h2", "Figures", id="figures"))
    parts.append(
        element(
            "figure",
            _svg(forest_figure(rep)),
            element(
                "figcaption",
                f"Pass rate per case with its {100 * level:g}% interval; the last rows are "
                "each variant over all cases.",
            ),
            cls="forest",
        )
    )
    for c in comparisons:
        parts.append(
            element(
                "figure",
                _svg(paired_difference_figure(c)),
                element(
                    "figcaption",
                    f"{c.b} − {c.a} per case; red: B clearly worse, green: B clearly better.",
                ),
                cls="paired",
            )
        )
    parts += [
        element("h2", "Per case", id="cases"),
        _cases_section(rep),
        element("h2", "Per axis and per check", id="checks"),
        element("h3", "per axis"),
        _counts_table(rep, "axes", "axis"),
        element("h3", "per check"),
        _counts_table(rep, "checks", "check"),
        element("h2", "Latency and tokens", id="latency"),
        _latency_section(rep),
        _muted("Over every sample that recorded one, whatever its status."),
        element("h2", "Samples", id="samples"),
    ]
    table, total = _sample_rows(res, rep.case_ids, max_samples)
    if total > max_samples:
        parts.append(_muted(f"The first {max_samples} of {total} samples, in case order."))
    parts.append(_muted("Answers and traces may hold private data: each opens only on a click."))
    parts.append(table)
    parts.append(Markup("</body></html>\n"))
    return join(parts, "\n")


def html_report(
    results: Any,
    path: str | os.PathLike[str],
    *,
    level: float = 0.95,
    max_samples: int = MAX_SAMPLES,
    force: bool = False,
) -> Path:
    """Write the report of a run as one self-contained HTML file.

    Parameters
    ----------
    results : RunSource, Results or path
        A run opened once per command (:class:`~evalstats.reading._source.RunSource`),
        as :func:`evalstats.results._file.read_results` or
        :func:`evalstats.reading._logs.load_results` returned it, or the path of a
        results file.
    path : path
        The file to create, with mode 0600, since answers may be private. An
        existing file is refused unless ``force``; the page is written whole
        or not at all (:func:`evalstats._files.write_output`).
    level : float
        Confidence level of every interval.
    max_samples : int
        Samples listed one by one at most (the first ones in case order).
    force : bool
        Replace an existing file at ``path`` (``report --html ... --force``).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    from .._files import refuse_existing, write_output

    refuse_existing(path, force=force, error=ResultsFileError)  # before the work of drawing
    page = render_html(results, level=level, max_samples=max_samples)
    return write_output(path, page, force=force, mode=0o600, error=ResultsFileError)
