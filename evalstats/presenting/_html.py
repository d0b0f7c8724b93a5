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
overwrites an existing one. The layout is one column that reads on a phone:
wide tables scroll sideways inside their own box.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ResultsFileError
from ..results._file import sample_passed

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


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


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


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], *, cls: str) -> str:
    """A table in a sideways-scrolling box; cells are raw HTML (escape before)."""
    out = [f'<div class="scroll"><table class="{cls}"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(_cell(c) for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _cell(c: Any) -> str:
    if isinstance(c, tuple):  # (html, css class)
        return f'<td class="{c[1]}">{c[0]}</td>'
    return f"<td>{c}</td>"


def _svg(fig: Any) -> str:
    """A matplotlib figure as inline SVG: text as text, no metadata, no external reference."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "evalstats"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # drop the XML declaration and DOCTYPE (a DTD URL)
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text


# --- sections -------------------------------------------------------------------------


def _manifest_section(res: Any, rep: Any) -> str:
    m = res.manifest
    suite = m.get("suite") or {}
    rows: list[tuple[str, str]] = []
    rows.append(("suite", _e(suite.get("name") or "–")))
    if suite.get("version") is not None:
        rows.append(("suite version", _e(suite["version"])))
    if suite.get("sha256"):
        rows.append(("suite SHA-256", f"<code>{_e(str(suite['sha256'])[:16])}…</code>"))
    imported = m.get("imported")
    if isinstance(imported, Mapping):
        source = f"{imported.get('tool')}" + (
            f" {imported.get('version')}" if imported.get("version") else ""
        )
        files = m.get("merged") or [imported.get("file")]
        rows.append(("imported from", _e(f"{source}, " + ", ".join(str(f) for f in files))))
        rows.append(("a sample passes when", _e(imported.get("pass_rule"))))
    rows.append(("cases", _e(len(rep.case_ids))))
    rows.append(("runs per case", _e(rep.runs if rep.runs is not None else "varies")))
    for v in m.get("variants") or []:
        if isinstance(v, Mapping):
            task = v.get("task")
            rows.append(
                (
                    f"variant {v.get('name')}",
                    f"<code>{_e(json.dumps(task, ensure_ascii=False, default=str))}</code>"
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
            rows.append((label, _e(m[key])))
    env = m.get("environment")
    if isinstance(env, Mapping):
        rows.append(("environment", _e(", ".join(f"{k} {v}" for k, v in env.items()))))
    rows.append(("status", _e(rep.status or "did not finish (no summary)")))
    body = _table(["", ""], rows, cls="manifest")
    if rep.warnings:
        body += '<ul class="warnings">' + "".join(f"<li>{_e(w)}</li>" for w in rep.warnings)
        body += "</ul>"
    return body


def _overall_section(rep: Any) -> str:
    level = f"{100 * rep.level:g}%"
    rows = []
    for v in rep.variants:
        flat = v.clustered.clusters >= 2 and v.clustered.se == 0.0
        deff = "n/a" if flat or math.isnan(v.design_effect) else f"{v.design_effect:.2f}"
        rows.append(
            [
                _e(v.variant),
                (f"{v.passes}/{v.measured}", "num"),
                (_e(v.per_trial), "num"),
                (_e(v.clustered), "num"),
                (_e(v.clustered.clusters), "num"),
                (deff, "num"),
                (_e(v.completed), "num"),
                (_e(v.incomplete), "num"),
                (_e(v.unmeasured), "num"),
                (_e(v.missing), "num"),
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
    note = (
        '<p class="muted">"These cases": how often these cases would pass if run again '
        '(every sample an independent trial). "Cases like these": how often cases like '
        "these would pass, the cases being a sample of those one could have written. "
        "Incomplete samples count as failures; unmeasured ones (no answer from the "
        "service) are left out of the rates.</p>"
    )
    return _table(head, rows, cls="overall") + note


def _latency_section(rep: Any) -> str:
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
                _e(v.variant),
                (_seconds(v.latency_median), "num"),
                (_seconds(v.latency_p95), "num"),
                (_e(v.latency_samples), "num"),
                (_e(tokens), "num"),
                (_e(v.tokens_samples), "num"),
            ]
        )
    head = ["variant", "median", "95th percentile", "samples", "tokens", "samples"]
    return _table(head, rows, cls="latency")


def _cases_section(rep: Any) -> str:
    rows = []
    for r in rep.cases:
        problems = ", ".join(
            f"{n} ×{k}" + (f" ({ni} not inspected)" if ni else "") for n, k, ni in r.problems
        )
        rows.append(
            [
                _e(r.case),
                _e(r.variant),
                (f"{r.passes}/{r.measured}", "num"),
                (_e(r.interval), "num"),
                (_e(r.unmeasured), "num"),
                (_e(r.incomplete), "num"),
                _e(problems or "–"),
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


def _counts_table(rep: Any, attr: str, what: str) -> str:
    rows = []
    for v in rep.variants:
        for name, c in getattr(v, attr).items():
            rows.append(
                [
                    _e(v.variant),
                    _e(name),
                    (_e(c.passed), "num"),
                    (_e(c.scored - c.passed), "num"),
                    (_pct(c.rate), "num"),
                    (_e(c.unscored), "num"),
                    (_e(c.not_inspected), "num"),
                ]
            )
    head = ["variant", what, "passed", "failed", "rate", "unscored", "nothing to inspect"]
    if not rows:
        return f'<p class="muted">No {what} verdicts.</p>' + _table(head, [], cls=attr)
    return _table(head, rows, cls=attr)


def _verdict_text(cmp: Any) -> str:
    if cmp is None:
        return "–"
    words = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}
    text = str(cmp)
    head = words.get(cmp.verdict, cmp.verdict)
    if text.startswith(head):
        text = text[len(head) :]
    return f'<span class="verdict">{_e(head)}</span>{_e(text)}'


def _comparison_section(cmp: Any) -> str:
    out = [f"<h3>{_e(cmp.b)} (B) against {_e(cmp.a)} (A)</h3>"]
    if cmp.paired:
        how = (
            f"Paired by (case, repeat): {cmp.pairs} pairs; {cmp.dropped_unmeasured} dropped "
            f"because a side was unmeasured, {cmp.dropped_missing} because a side was not run."
        )
    else:
        how = "Not paired: compared as independent samples."
    out.append(f"<p>{_e(how)}</p>")
    rows: list[list[Any]] = [
        ["about these cases", _verdict_text(cmp.these_cases)],
        ["about cases like these", _verdict_text(cmp.cases_like_these)],
    ]
    out.append(_table(["question", "verdict"], rows, cls="verdicts"))
    if cmp.reason:
        out.append(f'<p class="muted">{_e(cmp.reason)}</p>')
    base = cmp.these_cases
    if base is not None and base.cases:
        rows = []  # the same list type as above
        for r in base.cases:
            flag = ("B clearly worse", "worse") if r.worse else ("B clearly better", "better")
            rows.append(
                [
                    _e(r.case),
                    (f"{r.passes_a}/{r.trials_a}", "num"),
                    (f"{r.passes_b}/{r.trials_b}", "num"),
                    (_e(r.difference), "num"),
                    flag if (r.worse or r.better) else "–",
                ]
            )
        out.append(_table(["case", "A", "B", "B − A", ""], rows, cls="differences"))
    return "".join(out)


def _sample_rows(res: Any, case_order: Sequence[str], limit: int) -> tuple[str, int]:
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
        reasons = "".join(
            f"<li>{_e(c.get('check') or 'check')}"
            + (f": {_e(c.get('reason'))}" if c.get("reason") else "")
            + "</li>"
            for c in failed
        )
        detail = []
        if s.get("reason"):
            detail.append(f"<p>{_e(s['reason'])}</p>")
        if reasons:
            detail.append(f"<ul>{reasons}</ul>")
        private = []
        answer = s.get("answer")
        if answer is not None:
            text = str(answer)
            cut = len(text) > MAX_TEXT
            private.append(
                "<details><summary>answer</summary><pre>"
                + _e(text[:MAX_TEXT])
                + (" […]" if cut else "")
                + "</pre></details>"
            )
        trace = s.get("trace")
        if trace:
            text = json.dumps(trace, ensure_ascii=False, indent=1, default=str)
            private.append(
                "<details><summary>trace</summary><pre>"
                + _e(text[:MAX_TEXT])
                + (" […]" if len(text) > MAX_TEXT else "")
                + "</pre></details>"
            )
        latency = s.get("latency_s")
        rows.append(
            [
                _e(s["case"]),
                _e(s["variant"]),
                (_e(s["repeat"]), "num"),
                _e(s.get("status")),
                (outcome[0], outcome[1]),
                "".join(detail) or "–",
                (_seconds(latency) if isinstance(latency, int | float) else "–", "num"),
                "".join(private) or "–",
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

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # No request of any kind leaves this page, even if someone adds a link later.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        '<nav><a href="#manifest">manifest</a><a href="#overall">overall</a>'
        '<a href="#comparisons">comparisons</a><a href="#figures">figures</a>'
        '<a href="#cases">per case</a><a href="#checks">axes and checks</a>'
        '<a href="#latency">latency</a><a href="#samples">samples</a></nav>',
        '<h2 id="manifest">Manifest</h2>',
        _manifest_section(res, rep),
        '<h2 id="overall">Overall</h2>',
        _overall_section(rep),
        '<h2 id="comparisons">Comparisons</h2>',
    ]
    if comparisons:
        parts += [_comparison_section(c) for c in comparisons]
    else:
        parts.append('<p class="muted">One variant only: nothing to compare.</p>')
    parts.append('<h2 id="figures">Figures</h2>')
    parts.append(
        f'<figure class="forest">{_svg(forest_figure(rep))}<figcaption>Pass rate per case '
        f"with its {100 * level:g}% interval; the last rows are each variant over all "
        "cases.</figcaption></figure>"
    )
    for c in comparisons:
        parts.append(
            f'<figure class="paired">{_svg(paired_difference_figure(c))}<figcaption>'
            f"{_e(c.b)} − {_e(c.a)} per case; red: B clearly worse, green: B clearly "
            "better.</figcaption></figure>"
        )
    parts += [
        '<h2 id="cases">Per case</h2>',
        _cases_section(rep),
        '<h2 id="checks">Per axis and per check</h2>',
        "<h3>per axis</h3>",
        _counts_table(rep, "axes", "axis"),
        "<h3>per check</h3>",
        _counts_table(rep, "checks", "check"),
        '<h2 id="latency">Latency and tokens</h2>',
        _latency_section(rep),
        '<p class="muted">Over every sample that recorded one, whatever its status.</p>',
        '<h2 id="samples">Samples</h2>',
    ]
    table, total = _sample_rows(res, rep.case_ids, max_samples)
    if total > max_samples:
        parts.append(
            f'<p class="muted">The first {max_samples} of {total} samples, in case order.</p>'
        )
    parts.append(
        '<p class="muted">Answers and traces may hold private data: each opens only on a click.</p>'
    )
    parts.append(table)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def html_report(
    results: Any,
    path: str | os.PathLike[str],
    *,
    level: float = 0.95,
    max_samples: int = MAX_SAMPLES,
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
        The file to create. It must not exist: the report never overwrites a
        file. It is created with mode 0600, since answers may be private.
    level : float
        Confidence level of every interval.
    max_samples : int
        Samples listed one by one at most (the first ones in case order).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    text = render_html(results, level=level, max_samples=max_samples)
    shown = os.fspath(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(shown, flags, 0o600)
    except FileExistsError:
        raise ResultsFileError(
            f"{shown} already exists; the HTML report never overwrites a file: choose a new path"
        ) from None
    except FileNotFoundError:
        folder = os.path.dirname(shown) or "."
        raise ResultsFileError(
            f"cannot create {shown}: the folder {folder} does not exist"
        ) from None
    except OSError as error:
        raise ResultsFileError(f"cannot create {shown}: {error.strerror or error}") from None
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as error:
        raise ResultsFileError(f"cannot write {shown}: {error.strerror or error}") from None
    return Path(shown)
