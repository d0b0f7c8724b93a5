"""The report as one self-contained HTML file.

:func:`html_report` writes everything ``evalstats report`` and ``evalstats
compare`` say about a run into one file a person can open and click through,
in the order a reader asks: first the verdict of each comparison (what it
claims, the difference with the interval that agrees with it, and what would
decide it), then the per-case paired results, then the details (pass rates,
tags, reviews and corrected rates, cost, containment, sequential looks,
figures, counts per case, axis and check, latency and tokens), the samples,
and last the manifest in words (the variants with their full prompt text,
the judge, the models the services reported, the seed of every merged part).

The samples are embedded once, compactly, as JSON the browser never runs
(:func:`samples_data`, :func:`~evalstats.presenting._markup.json_script`),
and drawn on demand by the page's one script
(:mod:`evalstats.presenting._page_script`): filters by variant, case, tag,
status and failed check, "failed only", each sample's prompt, answer,
checks with their reasons, judge's reply and tool trace, and the
side-by-side view of the variants' answers to one (case, repeat). A
100,000-sample run opens in well under 2 s (``benchmarks/html.py``).

The file stands alone: no stylesheet, font, image or script is fetched; the
figures are inline SVG drawn by matplotlib's SVG backend, text kept as text.
Its Content-Security-Policy lets nothing load and only the page's own script
run (by its hash), and requires Trusted Types, so no script can turn a string
into HTML. Answers and traces may be private: the file is created with mode
0600 and never overwrites an existing one unless told to. Every value on the
page, names from other tools' logs included, goes through the escaping of
:mod:`evalstats.presenting._markup`: it shows as text and never becomes an
element. The layout is one column that reads on a phone (390 px): the
verdicts and the per-case table fit its width; wider tables scroll inside
their own box.
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
from ..results._file import COUNTING_METHOD, sample_passed
from ._markup import Markup, csp, element, inline_script, join, json_script, shown

__all__ = ["JSON_PLACES", "html_report", "render_html", "samples_data"]

#: At most this many samples are embedded; a larger run embeds the first ones
#: (in case order) and says how many it left out.
MAX_SAMPLES = 100_000

#: Answers, prompts, replies and traces longer than this are cut in the samples' data.
MAX_TEXT = 20_000

#: Where each section of ``report --json`` is on the page: the id of its element.
JSON_PLACES = {
    "path": "manifest",
    "suite": "manifest",
    "level": "verdict",
    "status": "manifest",
    "runs": "manifest",
    "warnings": "warnings",
    "variants": "rates",
    "cases": "cases",
    "reviewed": "reviews",
    "corrected": "reviews",
    "containment": "containment",
    "ranking": "ranking",
    "tags": "tags",
    "cost": "cost",
    "scores": "scores",
}

_CSS = """
:root { color-scheme: light; --line: #d6d6d6; --muted: #5f5f5f; --bad: #a3410c; --good: #005f8f;
        --bg-bad: #fdf0e6; --bg-good: #e6f3fa; --bg-none: #f3f3f3; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       padding: 12px; color: #1b1b1b; background: #fff; max-width: 1100px; margin-inline: auto; }
h1 { font-size: 1.35em; margin: 0.2em 0 0.2em; overflow-wrap: anywhere; }
h2 { font-size: 1.15em; margin: 1.6em 0 0.5em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1em; margin: 1.2em 0 0.4em; overflow-wrap: anywhere; }
p, li, dd, dt { overflow-wrap: anywhere; }
td { overflow-wrap: break-word; }
.muted { color: var(--muted); }
.lede { margin: 0 0 0.6em; color: var(--muted); }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; max-width: 100%; }
table { border-collapse: collapse; margin: 0.3em 0 1em; font-size: 0.93em; }
th, td { border: 1px solid var(--line); padding: 4px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll td.num { white-space: nowrap; }
.passed, .better { color: var(--good); } .failed, .worse { color: var(--bad); font-weight: 600; }
.better { font-weight: 600; }
.headline { border: 1px solid var(--line); border-left: 6px solid var(--muted); padding: 8px 12px;
            margin: 0.6em 0 1em; background: var(--bg-none); }
.headline.b_better, .headline.a_better { border-left-color: var(--good);
                                         background: var(--bg-good); }
.headline p { margin: 0.35em 0; }
.headline .verdict { font-size: 1.3em; font-weight: 700; display: block; }
.headline .pair-name { font-weight: 600; }
.headline .figure-line { font-variant-numeric: tabular-nums; }
table.differences, table.overall { width: 100%; table-layout: fixed; }
table.overall td { overflow-wrap: anywhere; }
table.overall td.num { white-space: normal; }
table.overall th:nth-child(2) { width: 4.5em; }
table.differences th:nth-child(2), table.differences th:nth-child(3) { width: 3.9em; }
table.differences th:nth-child(4) { width: 38%; }
table.differences td { overflow-wrap: anywhere; }
table.differences td.num { white-space: normal; }
table.differences .flag { display: block; font-size: 0.9em; }
figure { margin: 0.5em 0 1.2em; overflow-x: auto; }
figure svg { width: 100%; height: auto; display: block; }
details > summary { cursor: pointer; color: #1a4f8b; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; padding: 6px;
      margin: 4px 0; max-height: 24em; overflow-y: auto; font-size: 0.9em; }
ul.warnings li { color: #7a4b00; }
nav { display: flex; flex-wrap: wrap; gap: 0.2em 0.9em; }
nav a { white-space: nowrap; }
dl.manifest dt { font-weight: 600; margin-top: 0.6em; }
dl.manifest dd { margin: 0.1em 0 0 1em; }
.filters { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 0.4em 0; }
.filter { display: flex; flex-direction: column; font-size: 0.9em; max-width: 100%; }
.filter select { max-width: 14em; }
.filter.check { flex-direction: row; align-items: center; gap: 4px; }
ol.rows { list-style: none; padding: 0; margin: 0; }
li.row { border-top: 1px solid var(--line); padding: 6px 0; }
.row-head { display: flex; flex-wrap: wrap; gap: 2px 10px; }
.row-head .case { font-weight: 600; overflow-wrap: anywhere; }
.failed-checks { font-size: 0.9em; color: var(--bad); overflow-wrap: anywhere; }
.row-buttons { display: flex; gap: 8px; margin-top: 3px; }
button { font: inherit; font-size: 0.9em; padding: 2px 8px; }
.details { margin: 6px 0 4px; padding-left: 8px; border-left: 3px solid var(--line); }
.block .label, .label { font-size: 0.85em; color: var(--muted); }
table.sample-checks { width: 100%; }
.pair { border: 1px solid var(--line); padding: 8px; margin: 8px 0; background: #fbfbfb; }
.pair-head { display: flex; justify-content: space-between; gap: 8px; align-items: baseline; }
.pair-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr));
             gap: 10px; }
.side { min-width: 0; }
.side-head { display: flex; gap: 10px; }
@media (max-width: 600px) {
  body { font-size: 14px; padding: 8px; } th, td { padding: 3px 4px; }
  figure svg { width: 560px; max-width: none; }
  .pair-grid { grid-template-columns: 1fr; }
}
"""


def _pct(x: Any, *, signed: bool = False) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(x):
        return "–"
    return f"{100 * x:+.0f}%" if signed else f"{100 * x:.0f}%"


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


def _table(
    head: Sequence[Any], rows: Iterable[Sequence[Any]], *, cls: str, scroll: bool = True
) -> Markup:
    """A table, by default in a sideways-scrolling box.

    A cell is a value (escaped), :class:`Markup`, or a ``(content, css class)`` pair.
    """
    body = [element("tr", *(_cell(c) for c in row)) for row in rows]
    table = element(
        "table",
        element("thead", element("tr", *(element("th", h) for h in head))),
        element("tbody", *body),
        cls=cls,
    )
    return element("div", table, cls="scroll") if scroll else table


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


def _muted(words: Any) -> Markup:
    return element("p", words, cls="muted")


def _section(anchor: str, title: str, *body: Any) -> Markup:
    return element("section", element("h2", title), *body, id=anchor)


# --- the headline ---------------------------------------------------------------------

_VERDICT_WORDS = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}


def _claim_meaning(cmp: Any, primary: Any) -> str:
    """What the verdict claims, in words."""
    about = primary.about if primary is not None else cmp.about
    if about == "cases_like_these":
        where = "on cases like these (cases drawn the way these were, each case one draw)"
    else:
        n = len(primary.cases) if primary is not None and primary.cases else None
        where = f"on these {n} cases run again" if n else "on these cases run again"
    if cmp.verdict == "b_better":
        return f"The claim: {cmp.b} passes more often than {cmp.a} {where}."
    if cmp.verdict == "a_better":
        return f"The claim: {cmp.b} passes less often than {cmp.a} {where}."
    return (
        f"No claim yet: the data cannot tell whether {cmp.b} passes more or less often than "
        f"{cmp.a} {where}."
    )


def _pairs_to_decide(primary: Any, level: float) -> tuple[int, str] | None:
    """The fewest trials at which the primary's rule would usually (80%) detect the
    difference seen, by :func:`~evalstats.stats._compare.detectable_difference`, with
    what a trial is; None when it cannot be planned (no difference seen, or too many)."""
    from ..stats._compare import detectable_difference

    d = abs(float(primary.difference.estimate))
    n = int(primary.trials_a)
    if not n or not d or math.isnan(d) or primary.method not in ("mcnemar", "newcombe"):
        return None
    if primary.method == "mcnemar":
        disc = (int(primary.only_a or 0) + int(primary.only_b or 0)) / n

        def detectable(m: int) -> float:
            return detectable_difference(m, method="mcnemar", discordance=disc, level=level)

        unit = "pairs"
    else:
        rate = (primary.successes_a + primary.successes_b) / (primary.trials_a + primary.trials_b)

        def detectable(m: int) -> float:
            return detectable_difference(m, m, rate=rate, method="newcombe", level=level)

        unit = "runs of each variant"
    now = primary.detectable if primary.detectable is not None else detectable(n)
    if now is None or math.isnan(now):
        now = 1.0
    # The detectable difference shrinks about as 1/sqrt(trials): start there,
    # then bracket and bisect on the exact figure.
    guess = max(n + 1, math.ceil(n * (now / d) ** 2))
    if guess > 200_000:
        return None

    def enough(m: int) -> bool:
        found = detectable(m)
        return not math.isnan(found) and found <= d

    lo, hi = n, guess
    while not enough(hi):
        lo, hi = hi, 2 * hi
        if hi > 200_000:
            return None
    for _ in range(12):
        if hi - lo <= max(1, hi // 50):
            break
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi, unit


def _cases_plan(source: Any, cmp: Any, level: float) -> str:
    """How many cases would usually decide the claim about cases like these, planned by
    :func:`~evalstats.planning._power.plan` (the clustered comparison simulated on the
    case model fitted from this run, at the rates seen); empty when it cannot be planned."""
    from ..errors import InvalidArgument
    from ..planning._power import case_model_from_results, plan

    try:
        fitted = case_model_from_results(source, variants=[cmp.a, cmp.b])
        if fitted.p_a == fitted.p_b or fitted.cases is None or fitted.cases < 2:
            return ""
        runs = max(fitted.repeats or 1, 1)
        # The fit taken as the truth (as gate's advice takes it): the rates and how
        # cases differ, without the pilot's own uncertainty.
        model = type(fitted)(fitted.p_a, fitted.p_b, fitted.icc, fitted.spread)
        found = plan(0, 0, model=model, repeats=runs, level=level, experiments=1000)
    except InvalidArgument:
        return ""
    if not found.reachable or not found.cases:
        return ""
    return (
        f"about {found.cases:,} cases × {runs} runs would usually (80%) decide it, if the "
        f"rates are the {_pct(fitted.p_a)} and {_pct(fitted.p_b)} seen (planned by simulating "
        f"the clustered comparison on the case model fitted from this run, icc "
        f"{fitted.icc:.2g}, taken as the truth)"
    )


def _decide_line(cmp: Any, level: float, cases_plan: str) -> Markup:
    """What would decide a "can't tell yet", or what decided the verdict."""
    from ..stats._compare import _detectable_text

    primary = cmp.primary
    if cmp.verdict != "cant_tell":
        return element(
            "p",
            f"Decided at {100 * level:g}%: the interval lies wholly "
            f"{'above' if cmp.verdict == 'b_better' else 'below'} 0.",
        )
    words = [_detectable_text(primary.detectable).capitalize() + "."]
    planned = _pairs_to_decide(primary, level)
    if planned is not None:
        trials, unit = planned
        cases = len(primary.cases)
        if unit == "pairs" and cases:
            runs = math.ceil(trials / cases)
            words.append(
                f"If the true difference is the {_pct(primary.difference.estimate, signed=True)} "
                f"seen, about {cases} cases × {runs} runs ({trials:,} pairs) would usually (80%) "
                "decide it (the paired test's detectable difference at the discordance seen)."
            )
        else:
            words.append(
                f"If the true difference is the {_pct(primary.difference.estimate, signed=True)} "
                f"seen, about {trials:,} {unit} would usually (80%) decide it."
            )
    elif primary.about == "cases_like_these" and cases_plan:
        words.append(cases_plan[0].upper() + cases_plan[1:] + ".")
    return element("p", " ".join(words), cls="decide")


def _headline(cmp: Any, level: float, source: Any = None) -> Markup:
    from ..stats._claims import claim_words

    primary = cmp.primary
    undecided_like = any(
        c is not None and c.about == "cases_like_these" and c.verdict == "cant_tell"
        for c in (cmp.primary, cmp.cases_like_these)
    )
    cases_plan = _cases_plan(source, cmp, level) if source is not None and undecided_like else ""
    title = element("p", f"{cmp.b} (B) against {cmp.a} (A)", cls="pair-name")
    if primary is None:
        return element(
            "div",
            title,
            element("strong", "can't tell", cls="verdict"),
            element("p", cmp.reason or "Nothing to compare."),
            cls="headline cant_tell",
        )
    verdict = _VERDICT_WORDS.get(cmp.verdict, cmp.verdict)
    about = claim_words(primary.about if primary.cases else cmp.about)
    test = primary.test_name + (
        f", p={primary.pvalue:.2g}"
        if primary.pvalue is not None and primary.pvalue >= 0.001
        else (", p<0.001" if primary.pvalue is not None else "")
    )
    parts = [
        title,
        element("strong", f"{verdict}, about {about}", cls="verdict"),
        element("p", _claim_meaning(cmp, primary)),
        element(
            "p",
            "Difference B − A: ",
            element("strong", str(primary.difference)),
            f" ({100 * level:g}% interval, {test}); the interval that agrees with the verdict.",
            cls="figure-line",
        ),
        _decide_line(cmp, level, cases_plan),
    ]
    other = cmp.cases_like_these if primary is cmp.these_cases else cmp.these_cases
    if other is not None and other is not primary:
        plan_words = (
            f"; {cases_plan}"
            if cases_plan and other.about == "cases_like_these" and other.verdict == "cant_tell"
            else ""
        )
        parts.append(
            _muted(
                f"Beside it, about {claim_words(other.about)} (not the claim decided): "
                f"{_VERDICT_WORDS.get(other.verdict, other.verdict)}, {other.difference}"
                f"{plan_words}."
            )
        )
    if cmp.about_note:
        parts.append(_muted(f"Why this claim: {cmp.about_note}."))
    for w in cmp.warnings:
        parts.append(element("p", f"Warning: {w}", cls="muted"))
    return element("div", *parts, cls=f"headline {cmp.verdict}")


def _single_headline(rep: Any) -> Markup:
    """One variant: its pass rate, both ways."""
    v = rep.variants[0] if rep.variants else None
    if v is None:
        return _muted("No variant in this run.")
    return element(
        "div",
        element("p", f"{v.variant}: one variant only, nothing to compare", cls="pair-name"),
        element("strong", f"passed {v.passes} of {v.measured}", cls="verdict"),
        element("p", f"About these cases: {v.per_trial}; about cases like these: {v.clustered}."),
        cls="headline cant_tell",
    )


def _ranking_section(rep: Any) -> Markup:
    if not rep.ranking:
        return _muted("Two variants or fewer: no ranking (it takes three or more).")
    lines = rep.ranking.split("\n")
    return join(
        [
            element("p", element("strong", lines[0])),
            *(_muted(line) for line in lines[1:]),
            _muted("Every pair compared, the p-values Holm-adjusted over the pairs."),
        ]
    )


# --- per case, paired -------------------------------------------------------------------


def _differences(cmp: Any) -> Markup:
    out = [element("h3", f"{cmp.b} (B) − {cmp.a} (A)")]
    if cmp.paired:
        out.append(
            _muted(
                f"Paired by (case, repeat): {cmp.pairs} pairs; {cmp.dropped_unmeasured} dropped "
                f"because a side was unmeasured, {cmp.dropped_missing} because a side was not "
                "run."
            )
        )
    else:
        out.append(_muted("Not paired: compared as independent samples."))
    base = cmp.these_cases
    if base is None or not base.cases:
        out.append(_muted(cmp.reason or "No per-case rows."))
        return join(out)
    rows = []
    for r in base.cases:
        flag = (
            element("span", "B clearly worse", cls="flag worse")
            if r.worse
            else element("span", "B clearly better", cls="flag better")
            if r.better
            else ""
        )
        rows.append(
            [
                r.case,
                (f"{r.passes_a}/{r.trials_a}", "num"),
                (f"{r.passes_b}/{r.trials_b}", "num"),
                (join([str(r.difference), flag]), "num"),
            ]
        )
    out.append(
        _table(
            ["case", "A", "B", "B − A (its own interval)"],
            rows,
            cls="differences",
            scroll=False,
        )
    )
    out.append(
        _muted(
            "Each case's interval is exploratory (not adjusted for the number of cases); "
            f"the flags are {base.flags_text()}."
        )
    )
    return join(out)


# --- details --------------------------------------------------------------------------


def _overall_section(rep: Any) -> Markup:
    level = f"{100 * rep.level:g}%"
    rates = [
        [
            v.variant,
            (f"{v.passes}/{v.measured}", "num"),
            (v.per_trial, "num"),
            (v.clustered, "num"),
        ]
        for v in rep.variants
    ]
    counts = []
    for v in rep.variants:
        flat = v.clustered.clusters >= 2 and v.clustered.se == 0.0
        deff = "n/a" if flat or math.isnan(v.design_effect) else f"{v.design_effect:.2f}"
        counts.append(
            [
                v.variant,
                (v.clustered.clusters, "num"),
                (deff, "num"),
                (v.completed, "num"),
                (v.incomplete, "num"),
                (v.unmeasured, "num"),
                (v.missing, "num"),
            ]
        )
    note = _muted(
        '"These cases": how often these cases would pass if run again '
        '(every sample an independent trial). "Cases like these": how often cases like '
        "these would pass, the cases being a sample of those one could have written. "
        "Incomplete samples count as failures; unmeasured ones (no answer from the "
        "service) are left out of the rates."
    )
    return join(
        [
            _table(
                [
                    "variant",
                    "passed",
                    f"these cases ({level} Wilson)",
                    f"cases like these ({level} clustered)",
                ],
                rates,
                cls="overall",
                scroll=False,
            ),
            note,
            _table(
                [
                    "variant",
                    "cases",
                    "design effect",
                    "completed",
                    "incomplete",
                    "unmeasured",
                    "not run",
                ],
                counts,
                cls="statuses",
            ),
            _muted(
                "Samples by status; the cases with a measured sample and the design effect "
                "of the case-clustered interval, as the text report gives them."
            ),
        ]
    )


def _tags_section(rep: Any) -> Markup:
    if not rep.tags:
        return _muted("No case carries a tag.")
    level = f"{100 * rep.level:g}%"
    rows = [
        [
            t.tag,
            t.variant,
            (t.cases, "num"),
            (f"{t.passes}/{t.measured}", "num"),
            (t.per_trial, "num"),
            (t.clustered, "num"),
        ]
        for t in rep.tags
    ]
    head = [
        "tag",
        "variant",
        "cases",
        "passed",
        f"these cases ({level} Wilson)",
        f"cases like these ({level} clustered)",
    ]
    return join(
        [
            _table(head, rows, cls="tags"),
            _muted("A case with several tags is in each tag's rate."),
        ]
    )


def _reviews_section(rep: Any) -> Markup:
    parts = []
    level = f"{100 * rep.level:g}%"
    if rep.reviewed:
        rows = [
            [
                r.variant,
                (f"{r.passed}/{r.decided}", "num"),
                (r.interval, "num"),
                (r.needs_review, "num"),
                (r.not_reviewed, "num"),
            ]
            for r in rep.reviewed
        ]
        parts.append(
            _table(
                [
                    "variant",
                    "reviewed pass",
                    f"task success ({level} Wilson)",
                    "needs review",
                    "not reviewed",
                ],
                rows,
                cls="reviewed",
            )
        )
    if rep.corrected is not None:
        parts.append(element("pre", "\n".join(rep.corrected.lines(level)), cls="corrected"))
    if not parts:
        return _muted(
            "No reviews given (report --reviews REVIEWS.jsonl adds a person's verdicts and, "
            "for a random review sample, the pass rates corrected by it)."
        )
    return join(parts)


def _cost_section(rep: Any) -> Markup:
    if not rep.priced:
        return _muted(
            "No prices: no variant carries a price (report --prices PRICES.yaml prices them)."
        )
    return element("pre", "\n".join(rep.cost.lines()), cls="cost")


def _containment_section(rep: Any) -> Markup:
    if not rep.containment:
        return _muted("No sample carries workspace observations (only cmd: tasks record them).")
    rows = [
        [
            w.variant,
            (f"{w.unchanged}/{w.observed}", "num"),
            (w.marker_seen, "num"),
            (w.fixtures_changed, "num"),
            (w.private_changed, "num"),
            (w.files_added, "num"),
        ]
        for w in rep.containment
    ]
    head = [
        "variant",
        "workspaces unchanged",
        "marker seen",
        "fixtures changed",
        "private files changed",
        "files added",
    ]
    return join(
        [
            _table(head, rows, cls="containment"),
            _muted("A read whose content never surfaced is not seen."),
        ]
    )


def _warnings_section(rep: Any) -> Markup:
    if not rep.warnings:
        return _muted("None.")
    return element("ul", *(element("li", w) for w in rep.warnings), cls="warnings")


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
    head = [
        "variant",
        "median latency",
        "95th percentile",
        "samples with a latency",
        "tokens",
        "samples with tokens",
    ]
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


def _sequential_section(source: Any, names: Sequence[str], level: float) -> tuple[Markup, Any]:
    """The sequential looks of a run that has them: the anytime-valid comparison and its
    trajectory; the comparison (or None) for the figure."""
    res = source.tally()
    if not res.looks or len(names) < 2:
        return _muted("No sequential looks (run --until-decided records them)."), None
    from ..deciding._sequential import sequential_results

    last = res.looks[-1]
    about = last.get("about", last.get("scope", "these_cases"))  # "scope": older files
    seq = sequential_results(source, names[0], names[1], about=about, level=level)
    rows = [
        [
            (look.get("round", i + 1), "num"),
            (look.get("pairs"), "num"),
            (_number(look.get("evalue_b")), "num"),
            (_number(look.get("evalue_a")), "num"),
            _VERDICT_WORDS.get(str(look.get("verdict")), look.get("verdict")),
        ]
        for i, look in enumerate(res.looks)
    ]
    parts = [
        element("pre", str(seq), cls="sequential"),
        _muted(f"The {len(res.looks)} looks the run recorded as it grew:"),
        _table(
            ["look", "pairs", "e-value for B", "e-value for A", "verdict then"],
            rows,
            cls="looks",
        ),
    ]
    return join(parts), seq


def _number(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float) or math.isnan(x):
        return "–"
    return f"{x:.3g}"


# --- the manifest, in words -------------------------------------------------------------


def _prompt_words(transform: Any) -> list[Markup]:
    """What a variant sends: the case's prompt, with its system text, prefix, suffix or
    template, each in full."""
    if not isinstance(transform, Mapping):
        return [_muted("How the prompt was made is not recorded.")]
    out = []
    for key, words in (
        ("system", "system prompt"),
        ("template", "template (the case's prompt at {prompt})"),
        ("prefix", "prefix, before the case's prompt"),
        ("suffix", "suffix, after the case's prompt"),
    ):
        value = transform.get(key)
        if value:
            out.append(join([element("span", words, cls="label"), element("pre", str(value))]))
    if not out:
        out.append(element("p", "The case's prompt as written: no system prompt, nothing added."))
    return out


def _task_words(task: Any) -> str:
    if not isinstance(task, Mapping):
        return "not recorded"
    kind = task.get("kind")
    bits = []
    for key in ("model", "name", "base_url", "command"):
        if task.get(key):
            bits.append(f"{key} {task[key]}")
    settings = task.get("settings")
    if isinstance(settings, Mapping) and settings:
        bits.append("settings " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    rest = {
        k: v
        for k, v in task.items()
        if k not in ("kind", "model", "name", "base_url", "command", "settings") and v
    }
    if rest:
        bits.append(json.dumps(rest, ensure_ascii=False, default=str))
    return f"{kind or 'a task'}" + (f": {'; '.join(str(b) for b in bits)}" if bits else "")


def _models_seen(res: Any) -> dict[str, list[str]]:
    """Per variant, the models the services reported in the samples (their digests or
    versions), each once, in order."""
    seen: dict[str, dict[str, None]] = {}
    for s in res.samples:
        model = s.get("model")
        if model is None or model == "":
            continue
        text = model if isinstance(model, str) else json.dumps(model, default=str, sort_keys=True)
        seen.setdefault(s["variant"], {})[text] = None
    return {v: list(m)[:20] for v, m in seen.items()}


def _manifest_section(res: Any, rep: Any) -> Markup:
    m = res.manifest
    suite = m.get("suite") or {}
    items: list[tuple[str, Any]] = []
    name = suite.get("name") or "–"
    version = f", version {suite['version']}" if suite.get("version") is not None else ""
    where = f", from {suite['path']}" if suite.get("path") else ""
    items.append(("suite", f"{name}{version}{where}"))
    if suite.get("sha256"):
        items.append(("suite SHA-256", _code_text(suite["sha256"])))
    if rep.path:
        items.append(("results file", rep.path))
    runs = rep.runs if rep.runs is not None else "a varying number of"
    items.append(("cases and runs", f"{len(rep.case_ids)} cases, {runs} runs of each per variant"))
    items.append(("status", rep.status or "did not finish (no summary)"))
    imported = m.get("imported")
    if isinstance(imported, Mapping):
        source = f"{imported.get('tool')}" + (
            f" {imported.get('version')}" if imported.get("version") else ""
        )
        files = m.get("merged") or [imported.get("file")]
        items.append(("imported from", f"{source}, " + ", ".join(str(f) for f in files)))
        items.append(("a sample passes when", imported.get("pass_rule")))
    models = _models_seen(res)
    for v in m.get("variants") or []:
        if not isinstance(v, Mapping):
            continue
        vname = v.get("name")
        body: list[Any] = [element("p", _task_words(v.get("task")))]
        body += _prompt_words(v.get("transform"))
        if isinstance(v.get("prices"), Mapping):
            body.append(element("p", "prices (dollars per million tokens): " + _kv(v["prices"])))
        reported = models.get(str(vname))
        body.append(
            element(
                "p",
                "models the service reported: " + ", ".join(reported)
                if reported
                else "the service reported no model version",
                cls="muted",
            )
        )
        items.append((f"variant {vname}", join(body)))
    judge = m.get("judge")
    if isinstance(judge, Mapping):
        items.append(("judge", _kv(judge)))
    else:
        items.append(
            (
                "judge",
                "none named on the command line (judged checks, if any, use the judge the "
                "suite names)",
            )
        )
    parts = m.get("merged_from")
    if isinstance(parts, list) and parts:
        lines = []
        for p in parts:
            if not isinstance(p, Mapping):
                continue
            span = p.get("repeats")
            span_words = (
                f"repeats {span[0]} to {span[1] - 1}"
                if isinstance(span, list) and len(span) == 2
                else "repeats ?"
            )
            lines.append(
                element(
                    "li",
                    f"{p.get('file')}: {span_words}, seed {p.get('seed')}, started "
                    f"{p.get('started_at') or '?'}, status {p.get('status') or '?'}",
                )
            )
        items.append((f"merged from {len(lines)} runs", element("ul", *lines)))
    elif m.get("seed") is not None:
        items.append(("seed", f"{m['seed']} (each sample's seed follows from it and its place)"))
    counting = m.get("counting_method")
    if counting is not None:
        meaning = (
            "a completed sample passes when at least one check was scored and every scored "
            "check passed; an incomplete one is a failure; an unmeasured one (no answer) is "
            "left out of every rate"
            if str(counting) == COUNTING_METHOD
            else "a version of the counting rules other than this evalstats's"
        )
        items.append((f"counting method {counting}", meaning))
    for key, label in (
        ("evalstats", "evalstats version"),
        ("machine", "machine (a fingerprint, no name)"),
        ("started_at", "started"),
    ):
        if m.get(key) is not None:
            items.append((label, m[key]))
    env = [f"{k} {m[k]}" for k in ("python", "os", "arch") if m.get(k)]
    if env:
        items.append(("environment", ", ".join(env)))
    env_map = m.get("environment")
    if isinstance(env_map, Mapping):
        items.append(("environment", ", ".join(f"{k} {v}" for k, v in env_map.items())))
    return element(
        "dl",
        *(join([element("dt", k), element("dd", v)]) for k, v in items),
        cls="manifest",
    )


def _code_text(value: Any) -> Markup:
    return element("code", value)


def _kv(mapping: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items())


# --- the samples ----------------------------------------------------------------------


def _cut(value: Any) -> str:
    text = shown(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " […]"


def _prompt_text(prompt: Any) -> str | None:
    if prompt is None:
        return None
    if isinstance(prompt, Mapping) and isinstance(prompt.get("messages"), list):
        lines = []
        if prompt.get("system"):
            lines.append(f"[system]\n{prompt['system']}")
        for msg in prompt["messages"]:
            if isinstance(msg, Mapping):
                content = msg.get("content")
                if not isinstance(content, str):
                    content = json.dumps(content, ensure_ascii=False, default=str)
                lines.append(f"[{msg.get('role')}]\n{content}")
            else:
                lines.append(str(msg))
        return "\n\n".join(lines)
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt, ensure_ascii=False, indent=1, default=str)


class _Table:
    """Strings, as the page shows them, numbered in order of first use."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.index: dict[str, int] = {}  # a string shown, or as given, to its number

    def __call__(self, value: Any) -> int:
        found = self.index.get(value) if type(value) is str else None
        if found is None:
            key = shown(value)
            found = self.index.get(key)
            if found is None:
                found = self.index[key] = len(self.shown)
                self.shown.append(key)
            if type(value) is str:
                self.index[value] = found
        return found

    def names(self) -> list[str]:
        return list(self.shown)


def samples_data(res: Any, case_order: Sequence[str], limit: int) -> dict[str, Any]:
    """The samples as the page's script reads them: tables of names, and one row per sample.

    A row is ``[case, variant, repeat, status, outcome, latency, reason, answer,
    prompt, trace, checks]``: indices into ``cases``, ``variants`` and
    ``statuses``; the outcome 1 passed, 0 failed, -1 not measured; the latency
    in seconds or null; the reason, answer and trace as text (or null); the
    prompt sent as an index into ``prompts`` (-1: none); each check as
    ``[check, status, reason, judge's reply]`` (indices into ``checks`` and
    ``checkStatuses``). Every string is :func:`~evalstats.presenting._markup.shown`
    (controls and bidirectional overrides as escapes) and long texts are cut
    at :data:`MAX_TEXT` characters. At most ``limit`` samples, the first in
    case order; ``total`` counts them all.
    """
    order = {c: i for i, c in enumerate(case_order)}
    names = {v: i for i, v in enumerate(res.variants())}
    samples = sorted(
        res.samples,
        key=lambda s: (
            order.get(s["case"], len(order)),
            str(s["case"]),
            names.get(s["variant"], len(names)),
            s["repeat"] if isinstance(s["repeat"], int) else 0,
        ),
    )
    cases, variants, statuses, checks, check_statuses, prompts, tags = (_Table() for _ in range(7))
    for c in case_order:
        cases(c)
    for v in res.variants():
        variants(v)
    for st in ("completed", "incomplete", "unmeasured"):
        statuses(st)
    for st in ("passed", "failed", "unscored"):
        check_statuses(st)
    rows = []
    for s in samples[:limit]:
        passed = sample_passed(s)
        verdicts = []
        for c in s.get("checks") or ():
            if not isinstance(c, Mapping):
                continue
            judge = c.get("judge")
            reply = judge.get("reply") if isinstance(judge, Mapping) else None
            verdicts.append(
                [
                    checks(c.get("check") or "check"),
                    check_statuses(c.get("status")),
                    shown(c.get("reason") or ""),
                    None if reply is None else _cut(reply),
                ]
            )
        prompt = _prompt_text(s.get("prompt"))
        trace = s.get("trace")
        latency = s.get("latency_s")
        rows.append(
            [
                cases(s["case"]),
                variants(s["variant"]),
                s["repeat"] if isinstance(s["repeat"], int) else shown(s["repeat"]),
                statuses(s.get("status")),
                -1 if passed is None else int(passed),
                latency
                if isinstance(latency, int | float)
                and not isinstance(latency, bool)
                and math.isfinite(latency)
                else None,
                shown(s.get("reason") or ""),
                None if s.get("answer") is None else _cut(s["answer"]),
                -1 if prompt is None else prompts(_cut(prompt)),
                None
                if not trace
                else _cut(json.dumps(trace, ensure_ascii=False, indent=1, default=str)),
                verdicts,
            ]
        )
    known = {c: i for i, c in enumerate(cases.names())}
    case_tags: list[list[int]] = [[] for _ in known]
    for entry in res.manifest.get("cases") or ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("tags"), list):
            continue
        i = known.get(shown(entry.get("id")))
        if i is None:
            continue
        case_tags[i] = [tags(t) for t in entry["tags"] if isinstance(t, str)]
    return {
        "cases": cases.names(),
        "variants": variants.names(),
        "statuses": statuses.names(),
        "checks": checks.names(),
        "checkStatuses": check_statuses.names(),
        "prompts": prompts.names(),
        "tags": tags.names(),
        "caseTags": case_tags,
        "total": len(samples),
        "s": rows,
    }


def _samples_section(res: Any, rep: Any, max_samples: int) -> Markup:
    data = samples_data(res, rep.case_ids, max_samples)
    parts = []
    if data["total"] > max_samples:
        parts.append(
            _muted(f"The first {max_samples:,} of {data['total']:,} samples, in case order.")
        )
    parts.append(
        _muted(
            "Answers, prompts and traces may hold private data: each shows only when its "
            'sample is opened. Filter below; "side by side" shows every variant\'s answer to '
            "the same case and repeat."
        )
    )
    parts.append(
        element(
            "div",
            element(
                "noscript",
                "The samples are listed by the page's own script, which is turned off here.",
            ),
            id="samples-app",
        )
    )
    parts.append(json_script(data, id="samples-data"))
    return join(parts)


# --- the page -------------------------------------------------------------------------


def _details(rep: Any, sequential: Markup, looked: bool) -> list[Markup]:
    """The sections a run may or may not have: each one it has, then one short list of
    those it has not (each item keeps its section's id)."""
    sections = [
        ("tags", "Per tag", bool(rep.tags), _tags_section(rep)),
        (
            "reviews",
            "Reviews",
            bool(rep.reviewed) or rep.corrected is not None,
            _reviews_section(rep),
        ),
        ("cost", "Cost", rep.priced, _cost_section(rep)),
        ("containment", "Containment", bool(rep.containment), _containment_section(rep)),
        ("sequential", "Sequential looks", looked, sequential),
        ("warnings", "Warnings", bool(rep.warnings), _warnings_section(rep)),
    ]
    out = [_section(anchor, title, body) for anchor, title, has, body in sections if has]
    if not rep.ranking:  # with three or more variants the ranking heads the verdicts
        sections.insert(0, ("ranking", "Ranking", False, _ranking_section(rep)))
    missing = [
        element("li", element("strong", title), ": ", _words_of(body), id=anchor)
        for anchor, title, has, body in sections
        if not has
    ]
    if missing:
        out.append(_section("absent", "Not in this run", element("ul", *missing, cls="absent")))
    return out


def _words_of(muted: Markup) -> Markup:
    """The words of a one-paragraph note, without its paragraph."""
    found = re.fullmatch(r'<p class="muted">(.*)</p>', muted, flags=re.S)
    return Markup(found.group(1)) if found else muted


# --- mean scores (a run whose samples carry scores) ---------------------------------------
#
# Beside each pass-rate headline, the mean-score comparison's headline (its verdict
# about the claim decided, the interval that agrees with it, what would decide it,
# the other claim beside it); and a section "scores": each variant's mean score with
# both claims' intervals, the share of scores at each level of a discrete scale, the
# per-case distribution (each case's mean and the range of its scores, sorted), and
# each comparison's per-case rows with their Holm-adjusted flags.


def _score_headline(cmp: Any, level: float) -> Markup:
    """The mean-score comparison of ``cmp`` (a ResultsComparison) as a headline, or
    nothing when its samples carry no scores."""
    from ..stats._claims import claim_words
    from ..stats._scores import _num

    sc = getattr(cmp, "scores", None)
    if sc is None:
        return Markup("")
    primary = sc.primary
    verdict = _VERDICT_WORDS.get(sc.verdict, sc.verdict)
    parts = [
        element("p", f"{cmp.b} (B) against {cmp.a} (A), mean score (0 to 1)", cls="pair-name"),
        element("strong", f"mean score: {verdict}, about {claim_words(sc.about)}", cls="verdict"),
        element(
            "p",
            "Mean score B − A: ",
            element("strong", str(primary.difference)),
            f" ({100 * level:g}% interval, {primary.method}); the interval that agrees with "
            f"the verdict. A {_num(primary.mean_a)}, B {_num(primary.mean_b)} over "
            f"{sc.pairs} pairs of {sc.cases} cases.",
            cls="figure-line",
        ),
    ]
    if sc.verdict == "cant_tell":
        if primary.detectable is None:
            words = "No difference in [−1, 1] would usually be detected at these pairs."
        else:
            words = (
                f"To decide: these pairs would usually detect a difference of "
                f"{_num(primary.detectable)} or more; a smaller one takes more pairs."
            )
        parts.append(element("p", words))
    other = sc.cases_like_these if primary is sc.these_cases else sc.these_cases
    if other is not None and other is not primary:
        parts.append(
            _muted(
                f"Beside it, about {claim_words(other.about)} (not the claim decided): "
                f"{_VERDICT_WORDS.get(other.verdict, other.verdict)}, {other.difference} "
                f"({other.method})."
            )
        )
    elif sc.reason:
        parts.append(_muted(sc.reason + "."))
    flagged = [(r.case, "lower") for r in sc.these_cases.cases if r.worse]
    flagged += [(r.case, "higher") for r in sc.these_cases.cases if r.better]
    if flagged:
        parts.append(
            _muted(
                "B clearly "
                + "; ".join(f"{how} on {case}" for case, how in flagged)
                + " (each case's sign-flip test, Holm-adjusted)."
            )
        )
    return element("div", *parts, cls=f"headline score {sc.verdict}")


def _score_means_table(rep: Any) -> Markup:
    from ..stats._claims import MIN_CASES

    level = f"{100 * rep.level:g}%"
    rows = []
    for s in rep.scores:
        like = s.cases_like_these
        rows.append(
            [
                s.variant,
                (s.samples, "num"),
                (s.cases, "num"),
                (f"{s.these_cases} {s.these_cases.method}", "num"),
                (
                    f"{like} {like.method}" + (" (few cases)" if s.cases < MIN_CASES else ""),
                    "num",
                ),
            ]
        )
    return _table(
        [
            "variant",
            "scored samples",
            "cases",
            f"these cases ({level})",
            f"cases like these ({level})",
        ],
        rows,
        cls="scores",
        scroll=False,
    )


def _score_levels_tables(rep: Any) -> list[Markup]:
    out: list[Markup] = []
    for s in rep.scores:
        for lc in s.levels:
            name = "a check" if lc.check is None else lc.check
            head = ["variant", "check", *(str(lv) for lv, _ in lc.counts)]
            cells: list[Any] = [s.variant, name]
            total = lc.total
            for _, n in lc.counts:
                cells.append((f"{n} ({100 * n / total:.0f}%)" if total else "0", "num"))
            if lc.between:
                head.append("between levels")
                cells.append((f"{lc.between} ({100 * lc.between / total:.0f}%)", "num"))
            out.append(_table(head, [cells], cls="levels", scroll=True))
    if out:
        out.append(
            _muted(
                "Answers at each level of the scale (count and share of the scored answers). "
                "A mean over levels assumes equal steps between them; two variants' shares "
                "can rank them differently from their means."
            )
        )
    return out


def _score_by_case_tables(rep: Any) -> list[Markup]:
    from ..stats._scores import _num

    out: list[Markup] = []
    for s in rep.scores:
        ranked = sorted(s.by_case, key=lambda r: (r[2], r[0]))
        rows = [
            [case, (n, "num"), (_num(mean), "num"), (f"{_num(lo)} to {_num(hi)}", "num")]
            for case, n, mean, lo, hi in ranked
        ]
        out.append(element("h3", f"{s.variant}: per case, lowest mean first"))
        out.append(
            _table(["case", "scored samples", "mean", "lowest to highest"], rows, cls="by-case")
        )
    return out


def _score_case_rows(comparisons: Sequence[Any]) -> list[Markup]:
    from ..stats._scores import _num

    out: list[Markup] = []
    for cmp in comparisons:
        sc = getattr(cmp, "scores", None)
        if sc is None:
            continue
        rows = []
        for r in sc.these_cases.cases:
            flag = (
                element("span", "B clearly lower", cls="flag worse")
                if r.worse
                else element("span", "B clearly higher", cls="flag better")
                if r.better
                else ""
            )
            rows.append(
                [
                    r.case,
                    (r.pairs, "num"),
                    (_num(r.mean_a), "num"),
                    (_num(r.mean_b), "num"),
                    (join([_num(r.mean_b - r.mean_a, signed=True), " ", flag]), "num"),
                    (f"{r.adjusted_pvalue:.3g}", "num"),
                ]
            )
        out.append(element("h3", f"{cmp.b} (B) − {cmp.a} (A), mean score per case"))
        out.append(
            _table(
                ["case", "pairs", "A", "B", "B − A", "adjusted p"],
                rows,
                cls="score-differences",
            )
        )
        out.append(
            _muted(
                "Flags: each case's sign-flip test of its mean difference, Holm-adjusted "
                "over the cases."
            )
        )
    return out


def _scores_section(rep: Any, comparisons: Sequence[Any]) -> Markup:
    """The section ``scores`` of a run whose samples carry scores; nothing otherwise."""
    if not rep.scores:
        return Markup("")
    body: list[Any] = [
        _score_means_table(rep),
        _muted(
            '"These cases": the mean these cases would score if run again. "Cases like '
            'these": the mean over cases drawn the way these were. Scores are on 0 to 1 '
            "(a scale such as 1 to 5 mapped linearly); incomplete samples score 0, "
            "unmeasured ones are left out."
        ),
        *_score_levels_tables(rep),
        *_score_by_case_tables(rep),
        *_score_case_rows(comparisons),
    ]
    return _section("scores", "Mean scores", *body)


def _score_caption(rep: Any, comparisons: Sequence[Any]) -> str:
    """What the mean-score figure shows."""
    cmp = comparisons[0] if comparisons else None
    if cmp is not None and cmp.scores is not None:
        return (
            f"Mean score {cmp.b} − {cmp.a} per case (its sign-flip flag, Holm-adjusted) and "
            f"over all cases with its {100 * rep.level:g}% interval, both claims."
        )
    return f"Mean score per case and over all cases with its {100 * rep.level:g}% interval."


def render_html(
    results: Any,
    *,
    level: float = 0.95,
    max_samples: int = MAX_SAMPLES,
    reviews: Any = None,
    about: str | None = None,
    prices: Any = None,
) -> str:
    """The HTML report of ``results`` (a :class:`~evalstats.reading._source.RunSource`,
    a :class:`~evalstats.Results` or a path), as text.

    See :func:`html_report`, which writes it to a file.
    """
    from .._validate import check_level, whole_number
    from ..reading._source import RunSource
    from ._page_script import SCRIPT
    from ._plots import comparison, forest_figure, paired_difference_figure, sequential_figure
    from ._report import report

    level = check_level(level)
    max_samples = whole_number("max_samples", max_samples, minimum=0)
    # The samples show answers, so this view holds the records; the report and
    # the comparisons are made once per source, counted from the same records.
    source = RunSource.of(results)
    res = source.results()
    rep = report(source, level=level, reviews=reviews, about=about, prices=prices)
    names = [v.variant for v in rep.variants]
    comparisons = [comparison(source, names[0], b, level) for b in names[1:]]
    suite = (res.manifest.get("suite") or {}).get("name") or "run"
    title = f"evalstats report: {suite}"
    script, script_hash = inline_script(SCRIPT)
    nav = [
        ("verdict", "verdict"),
        ("per-case", "per case"),
        ("rates", "pass rates"),
        ("figures", "figures"),
        ("samples", "samples"),
        ("manifest", "manifest"),
    ]
    head = Markup(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        # No request of any kind leaves this page, and no script runs but its own.
        f"{csp(script_hash)}\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    )
    lede = (
        f"{len(rep.case_ids)} cases × "
        f"{rep.runs if rep.runs is not None else '?'} runs, variants "
        f"{', '.join(names) or 'none'}; every interval at {100 * level:g}%."
    )
    selected = getattr(source, "selected", None)
    if selected is not None:  # a narrowed run (--case, --tag, --variant) says so
        lede += f" Only part of the run: {selected.described()}."
    verdicts = [
        join([_headline(c, level, source), _score_headline(c, level)]) for c in comparisons
    ] or [_single_headline(rep)]
    if rep.ranking:
        verdicts.insert(
            0,
            element(
                "div",
                element("h3", "Ranking of the variants"),
                _ranking_section(rep),
                element("h3", "Each against the first"),
                id="ranking",
                cls="ranking",
            ),
        )
    seq_section, seq = _sequential_section(source, names, level)
    if seq is not None and comparisons:
        # A run looked at as it grew: the comparison valid however often one looked.
        verdicts.insert(
            1 if rep.ranking else 0,
            element(
                "div",
                element(
                    "p", f"{names[1]} (B) against {names[0]} (A), look by look", cls="pair-name"
                ),
                element(
                    "strong",
                    _VERDICT_WORDS.get(seq.verdict, seq.verdict) + ", anytime-valid",
                    cls="verdict",
                ),
                element("p", str(seq).split("\n")[0]),
                _muted(
                    "Valid however often the run was looked at as it grew (its looks are below); "
                    "the fixed-n verdict that follows is not."
                ),
                cls=f"headline {seq.verdict}",
            ),
        )
    figures = [
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
    ]
    for c in comparisons:
        figures.append(
            element(
                "figure",
                _svg(paired_difference_figure(c)),
                element("figcaption", f"{c.b} − {c.a} per case, each with its own interval."),
                cls="paired",
            )
        )
    if rep.scores:
        from ._plots import score_figure

        figures.append(
            element(
                "figure",
                _svg(score_figure(rep, comparisons[0] if comparisons else None)),
                element("figcaption", _score_caption(rep, comparisons)),
                cls="score",
            )
        )
    if seq is not None:
        figures.append(
            element(
                "figure",
                _svg(sequential_figure(seq)),
                element("figcaption", "The sequential comparison, look by look."),
                cls="sequential",
            )
        )
    parts: list[Markup] = [
        head,
        join([Markup("<title>"), title, Markup(f"</title><style>{_CSS}</style></head><body>")]),
        element("h1", title),
        element("p", lede, cls="lede"),
        _section("verdict", "Verdict", *verdicts),
        element("nav", *(element("a", words, href=f"#{anchor}") for anchor, words in nav)),
        _section(
            "per-case",
            "Per case, paired",
            *(
                [_differences(c) for c in comparisons]
                or [_muted("One variant only: nothing to compare.")]
            ),
        ),
        _section("rates", "Pass rates", _overall_section(rep)),
        _scores_section(rep, comparisons),
        *_details(rep, seq_section, seq is not None),
        _section("figures", "Figures", *figures),
        _section("cases", "Per case and variant", _cases_section(rep)),
        _section(
            "checks",
            "Per axis and per check",
            element("h3", "per axis"),
            _counts_table(rep, "axes", "axis"),
            element("h3", "per check"),
            _counts_table(rep, "checks", "check"),
        ),
        _section(
            "latency",
            "Latency and tokens",
            _latency_section(rep),
            _muted("Over every sample that recorded one, whatever its status."),
        ),
        _section("samples", "Samples", _samples_section(res, rep, max_samples)),
        _section("manifest", "Manifest", _manifest_section(res, rep)),
        script,
        Markup("</body></html>\n"),
    ]
    # a section a run does not have (its scores, when no sample carries one) is left out whole
    return join([p for p in parts if p], "\n")


def html_report(
    results: Any,
    path: str | os.PathLike[str],
    *,
    level: float = 0.95,
    max_samples: int = MAX_SAMPLES,
    reviews: Any = None,
    about: str | None = None,
    prices: Any = None,
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
        Samples embedded at most (the first ones in case order).
    reviews, about, prices
        As :func:`~evalstats.presenting._report.report` takes them: the
        page shows the reviewed and corrected rates, the ranking's claim and
        the cost they give.
    force : bool
        Replace an existing file at ``path`` (``report --html ... --force``).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    from .._files import refuse_existing, write_output

    refuse_existing(path, force=force, error=ResultsFileError)  # before the work of drawing
    page = render_html(
        results,
        level=level,
        max_samples=max_samples,
        reviews=reviews,
        about=about,
        prices=prices,
    )
    return write_output(path, page, force=force, mode=0o600, error=ResultsFileError)
