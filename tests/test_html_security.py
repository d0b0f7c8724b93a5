"""The HTML page with hostile text in every field: shown as text, and no script runs but the
page's own, checked by parsing the page and in headless Chromium (with the page's
Content-Security-Policy, and without it: the escaping alone holds)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from browser import Browser, fragment, needs_chromium
from hypothesis import given
from hypothesis import strategies as st
from records import check, manifest, sample

from evalstats._terminal import visible
from evalstats.presenting._html import html_report, render_html
from evalstats.presenting._markup import TAGS, shown
from evalstats.presenting._page_script import SCRIPT
from evalstats.results._file import Results
from evalstats.results._recordable import recordable_text

#: Each payload, if it ever ran, would set window.__pwned (or fetch, or navigate).
HOSTILE = [
    '</script><script>window.__pwned="end of script"</script>',
    '<script>window.__pwned="script"</script>',
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<svg onload=\"window.__pwned='svg'\"><circle r=9/></svg>",
    'javascript:window.__pwned="a javascript: URL"',
    "<a href=\"javascript:window.__pwned='link'\">click</a>",
    '<!--<script>window.__pwned="comment"</script>-->',
    '"><iframe src="javascript:parent.__pwned=1"></iframe>',
    "'\"><body onload=\"window.__pwned='body'\">",
    "<style>body{display:none}</style>",
    '<meta http-equiv="refresh" content="0;url=javascript:window.__pwned=1">',
    "bidi \u202eexe.txt\u202c and \u2066isolate\u2069 \u200f",
    "line\u2028separators\u2029and \x1b[2J controls",
    '{"__proto__": {"polluted": 1}} ${window.__pwned=1}',
]


def _hostile_run() -> Results:
    pick = iter(HOSTILE * 40)
    cases = [next(pick) for _ in range(3)]
    variants = [next(pick), next(pick)]
    m = manifest(cases, variants, 2)
    m["suite"] = {"name": next(pick), "version": next(pick), "path": next(pick), "sha256": "0"}
    m["cases"] = [{"id": c, "prompt": next(pick), "tags": [next(pick)]} for c in cases]
    for v in m["variants"]:
        v["task"] = {"kind": next(pick), "model": next(pick), "settings": {next(pick): 1}}
        v["transform"] = {"system": next(pick), "prefix": next(pick), "template": next(pick)}
        v["prices"] = {"input": 1.0, "output": 1.0}
    m["judge"] = {"spec": next(pick)}
    m["machine"] = next(pick)
    m["merged_from"] = [{"file": next(pick), "repeats": [0, 2], "seed": 1, "status": next(pick)}]
    m["environment"] = {next(pick): next(pick)}
    records = []
    for c in cases:
        for v in variants:
            for r in range(2):
                ok = (r + len(v)) % 2 == 0
                verdicts = [
                    check(
                        "passed" if ok else "failed", next(pick), axis=next(pick), reason=next(pick)
                    ),
                    check(
                        "failed",
                        next(pick),
                        reason=next(pick),
                        judge={"prompt": next(pick), "reply": next(pick)},
                    ),
                ]
                records.append(
                    sample(
                        c,
                        v,
                        r,
                        ok,
                        checks=verdicts,
                        reason=next(pick),
                        answer=next(pick),
                        prompt={
                            "system": next(pick),
                            "messages": [{"role": "user", "content": next(pick)}],
                        },
                        trace={"calls": [{"tool": next(pick), "result": next(pick)}]},
                        tokens={"input": 10, "output": 5},
                        model=next(pick),
                    )
                )
    return Results(None, m, tuple(records), {"status": "finished"}, ())


def _scored(run: Results) -> Results:
    """The hostile run with every sample scored by its first check, a judge's level on
    1-5 (the check, the case and the variant named by hostile text): its page has the
    mean scores, the levels and the score comparison."""
    samples = []
    for i, s in enumerate(run.samples):
        s = {**s, "checks": [dict(c) for c in s["checks"]]}
        level = 1 + i % 5
        s["checks"][0].update(score=(level - 1) / 4, raw_score=float(level), scale=[1.0, 5.0])
        s["score"] = (level - 1) / 4
        samples.append(s)
    return Results(None, run.manifest, tuple(samples), run.summary, ())


@pytest.fixture(scope="module")
def hostile():
    return _hostile_run()


@pytest.fixture(scope="module")
def hostile_page(hostile):
    return render_html(hostile)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.comments: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._script = tag == "script"
        if self._script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._script = False

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


PAGE = TAGS | {"html", "head", "meta", "title", "style", "body", "script"}
SVG = {"svg", "defs", "style", "g", "path", "use", "clippath", "rect", "text", "tspan"}


def test_every_hostile_string_is_text_on_the_page(hostile_page):
    _all_text(hostile_page)


def test_every_hostile_string_is_text_on_the_page_of_scores(hostile):
    page = render_html(_scored(hostile))
    assert 'id="scores"' in page and "headline score" in page and "levels" in page
    _all_text(page)


def _all_text(hostile_page: str) -> None:
    parsed = _Elements()
    parsed.feed(hostile_page)
    parsed.close()
    assert parsed.comments == []
    for tag, attrs in parsed.elements:
        assert tag in PAGE | SVG, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert "javascript" not in (value or "") and "__pwned" not in (value or "")
            if name in ("href", "xlink:href"):
                assert (value or "").startswith("#")
    assert [a for t, a in parsed.elements if t == "script"] == [
        {"type": "application/json", "id": "samples-data"},
        {},
    ]
    assert parsed.scripts[1] == SCRIPT
    data_text = parsed.scripts[0]
    assert "<" not in data_text and "\u2028" not in data_text
    on_page = "".join(parsed.text) + "\n".join(_strings(json.loads(data_text)))
    for payload in HOSTILE:
        assert shown(payload) in on_page, payload  # shown, as the characters it is
    # no bidirectional control or line separator reaches the page as itself
    for c in "\u202e\u202c\u2066\u2069\u200f\x1b":
        assert c not in hostile_page


def _pwned(browser) -> list:
    """What a payload would have left if it had run: the marker, foreign elements, handlers,
    links to scripts, and the controls that reorder or hide text."""
    return browser.run(
        "(() => {"
        " const out = [];"
        " if (window.__pwned !== undefined) out.push('ran: ' + window.__pwned);"
        " if (({}).polluted !== undefined) out.push('prototype polluted');"
        " const scripts = document.querySelectorAll('script');"
        " if (scripts.length !== 2) out.push(scripts.length + ' scripts');"
        " for (const e of document.querySelectorAll('img,iframe,object,embed,form,base,link,"
        "meta[http-equiv=refresh]')) out.push('element ' + e.tagName);"
        " for (const e of document.querySelectorAll('body style'))"
        "  if (!e.closest('svg')) out.push('a style element in the body');"
        " for (const e of document.querySelectorAll('*')) {"
        "  for (const a of e.attributes) {"
        "   if (a.name.startsWith('on')) out.push('handler ' + a.name + ' on ' + e.tagName);"
        "   if (/javascript:/i.test(a.value)) out.push('javascript: in ' + a.name);"
        "  }"
        " }"
        " if (/[\\u202a-\\u202e\\u2066-\\u2069\\u200f\\u001b]/.test(document.body.innerText))"
        "  out.push('a control character shown as itself');"
        " if (document.body.offsetHeight < 500) out.push('the page was hidden');"
        " return out; })()"
    )


def _views(hostile) -> list[str]:
    """Views that draw every hostile string: every sample opened, the side-by-side view,
    and filters named by hostile names."""
    case0 = hostile.samples[0]["case"]
    variant1 = hostile.samples[-1]["variant"]
    tag = hostile.manifest["cases"][0]["tags"][0]
    check_name = hostile.samples[0]["checks"][1]["check"]
    return [
        fragment(pair=case0, repeat=0, open=0),
        fragment(pair=case0, repeat=1, variant=variant1, open=0),
        fragment(tag=tag, check=check_name, open=0),
        fragment(failed="1", open=1),
    ]


@needs_chromium
@pytest.mark.parametrize("policy", ["with its policy", "without its policy"])
def test_in_chromium_no_hostile_string_runs(hostile, tmp_path, policy):
    page = html_report(hostile, tmp_path / "hostile.html")
    if policy == "without its policy":
        # The escaping alone: the page's Content-Security-Policy taken out, so that a
        # string that became markup would run.
        text = page.read_text(encoding="utf-8")
        text, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
        assert n == 1
        page.write_text(text, encoding="utf-8")
    with Browser() as browser:
        for width in (1280, 390):
            for view in _views(hostile):
                browser.open(page, width=width, hash=view)
                assert browser.messages == [], (view, browser.messages)
                assert _pwned(browser) == [], view
                # the hostile strings were drawn (as text) in this view
                assert browser.run("document.querySelectorAll('#rows li.row').length") > 0
                assert browser.run("document.querySelectorAll('#rows .details').length") == 1
            # opening every row's details and side-by-side view draws every sample's strings
            browser.open(page, width=width)
            browser.run("document.querySelectorAll('#rows button.open').forEach(b => b.click())")
            texts = browser.run("document.getElementById('rows').innerText")
            for s in hostile.samples:
                drawn = [s["answer"], s["reason"], s["prompt"]["messages"][0]["content"]]
                for c in s["checks"]:
                    drawn += [c["check"], c["reason"], (c.get("judge") or {}).get("reply")]
                for value in drawn:
                    if value:
                        assert shown(value) in texts, value
            browser.run(
                "document.querySelectorAll('#rows button.pair-open').forEach(b => b.click())"
            )
            assert browser.messages == []
            assert _pwned(browser) == []
            options = browser.run(
                "[...document.querySelectorAll('#f-variant option')].map(o => o.text)"
            )
            assert options[1:] == [shown(v) for v in hostile.variants()]


@given(st.text(st.characters(exclude_categories=()), max_size=60))
def test_the_quick_path_of_shown_is_the_escaping(value):
    # shown() skips the escaping for ASCII text with no control: the same result
    assert shown(value) == visible(recordable_text(value)[0])
    assert shown(value.encode("ascii", "ignore").decode()) == visible(
        value.encode("ascii", "ignore").decode()
    )


@needs_chromium
def test_in_chromium_no_hostile_string_runs_on_the_page_of_scores(hostile, tmp_path):
    # The scored page without its Content-Security-Policy: the escaping alone keeps
    # the hostile names in the mean-score headline, tables and figure as text.
    page = html_report(_scored(hostile), tmp_path / "scored.html")
    text = page.read_text(encoding="utf-8")
    text, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert n == 1 and 'id="scores"' in text
    page.write_text(text, encoding="utf-8")
    with Browser() as browser:
        browser.open(page, width=1280)
        assert browser.messages == []
        assert _pwned(browser) == []
        shown_text = browser.run("document.getElementById('scores').innerText")
        for c in hostile.manifest["cases"]:
            assert shown(c["id"]) in shown_text or c["id"] in shown_text
