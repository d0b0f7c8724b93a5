"""The self-contained HTML report (evalstats.presenting._html)."""

from __future__ import annotations

import html
import json
import math
import os
import re
import stat
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import Browser, fragment, needs_chromium
from records import check, manifest, sample

from evalstats.demo._shop_demo import run_demo
from evalstats.errors import ResultsFileError
from evalstats.presenting._html import (
    _VERDICT_WORDS,
    JSON_PLACES,
    html_report,
    render_html,
    samples_data,
)
from evalstats.presenting._markup import inline_script
from evalstats.presenting._page_script import SCRIPT
from evalstats.presenting._review import Review
from evalstats.reading._logs import load_results
from evalstats.results._file import Results, read_results, sample_passed
from evalstats.stats._scores import _num

DATA = Path(__file__).parent / "data"

TABLES = ("differences", "overall", "statuses", "cases", "axes", "checks", "latency")

#: Attributes through which a page loads or sends something.
FETCHING = {"src", "href", "xlink:href", "action", "formaction", "poster", "data", "srcset"}


class _Page(HTMLParser):
    """What the tests check: tables, figures, sections, scripts, fetching attributes, and
    the text outside the scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[str] = []
        self.sections: list[str] = []
        self.svgs = 0
        self.tags: set[str] = set()
        self.fetches: list[tuple[str, str, str]] = []
        self.urls_in_attributes: list[tuple[str, str]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.style = ""
        self._in: str | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "table":
            self.tables.append(attrs.get("class", ""))
        if tag == "section":
            self.sections.append(attrs.get("id", ""))
        if tag == "svg":
            self.svgs += 1
        if tag in ("style", "script"):
            self._in, self._attrs = tag, attrs
            if tag == "script":
                self.scripts.append((attrs, ""))
        for name, value in attrs.items():
            value = value or ""
            if name in FETCHING and not value.startswith("#"):
                self.fetches.append((tag, name, value))
            if "//" in value and not name.startswith("xmlns"):
                self.urls_in_attributes.append((name, value))

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "style":
            self.style += data
        elif self._in == "script":
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        else:
            self.text.append(data)

    def data(self) -> dict:
        """The samples' data the page embeds."""
        (found,) = [t for a, t in self.scripts if a.get("type") == "application/json"]
        return json.loads(found)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def _section(text: str, anchor: str) -> str:
    """The HTML of one section of the page, its character references read."""
    found = re.search(rf'<section id="{anchor}">(.*?)</section>', text, flags=re.S)
    assert found, anchor
    return html.unescape(found.group(1))


@pytest.fixture(scope="module")
def demo_results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    run_demo(out=folder, plots=False)
    return read_results(folder / "results.jsonl")


# --- a run with every section: three variants, tags, prices, judge, traces, merged ----

CASES = ["order", "refund", "hours"]
VARIANTS = ["base", "kind", "terse"]
SYSTEM = "You are the shop's assistant.\nAnswer in two sentences at most."
PREFIX = "Customer message follows:\n"


def _rich_run() -> Results:
    m = manifest(CASES, VARIANTS, 4)
    m["cases"] = [{"id": c, "prompt": f"prompt of {c}", "tags": [f"tag-{c[0]}"]} for c in CASES]
    m["cases"][0]["tags"].append("orders")
    for v in m["variants"]:
        v["task"] = {"kind": "openai", "model": f"model-{v['name']}", "base_url": None}
        v["prices"] = {"input": 1.0, "output": 2.0}
    m["variants"][1]["transform"] = {"system": SYSTEM, "prefix": PREFIX}
    m["judge"] = {"spec": "openai:judge-model"}
    m["merged_from"] = [
        {"file": "part-1.jsonl", "repeats": [0, 2], "seed": 11, "status": "finished"},
        {"file": "part-2.jsonl", "repeats": [2, 4], "seed": 12, "status": "finished"},
    ]
    records = []
    for v, rate in (("base", 1), ("kind", 3), ("terse", 2)):
        for i, c in enumerate(CASES):
            for r in range(4):
                ok = (r + i) % 4 < rate
                verdicts = [
                    check("passed" if ok else "failed", "tone", reason="" if ok else "too curt"),
                    check(
                        "passed" if ok else "failed",
                        "judged_by('Kind.')",
                        reason="" if ok else "the judge said FAIL",
                        judge={"prompt": "Grade it.", "reply": f"reply {v} {c} {r}\nPASS"},
                    ),
                ]
                records.append(
                    sample(
                        c,
                        v,
                        r,
                        ok,
                        checks=verdicts,
                        answer=f"answer of {v} to {c}, run {r}",
                        prompt={"system": SYSTEM, "messages": [{"role": "user", "content": c}]},
                        trace={"calls": [{"tool": "lookup", "arguments": {"case": c}}]},
                        tokens={"input": 100, "output": 20},
                        model=f"model-{v}@sha256:{'ab' * 8}",
                    )
                )
    return Results(None, m, tuple(records), {"status": "finished"}, ())


@pytest.fixture(scope="module")
def rich():
    return _rich_run()


@pytest.fixture(scope="module")
def rich_reviews(rich):
    return [
        Review(s["case"], s["variant"], s["repeat"], "pass" if sample_passed(s) else "fail", "ok")
        for s in rich.samples[:10]
    ]


@pytest.fixture(scope="module")
def rich_page(rich, rich_reviews):
    return render_html(rich, reviews=rich_reviews)


# --- the page, as text ------------------------------------------------------------------


def test_the_page_is_self_contained_and_runs_only_its_own_script(demo_results, tmp_path):
    out = html_report(demo_results, tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    page = _parse(text)
    assert text.startswith("<!DOCTYPE html>")
    for cls in TABLES:
        assert cls in page.tables, cls
    assert page.svgs == 2  # the forest plot and one paired-difference figure
    assert not {"link", "img", "iframe", "object", "embed", "base", "form"} & page.tags
    assert page.fetches == []
    assert page.urls_in_attributes == []
    assert "url(" not in page.style and "@import" not in page.style
    assert "@font-face" not in text
    assert '<meta name="viewport"' in text
    # Two scripts: the samples' data, which no browser runs, and the page's own,
    # allowed by its hash in the Content-Security-Policy, which allows nothing else.
    (data_attrs, _), (own_attrs, own) = page.scripts
    assert data_attrs == {"type": "application/json", "id": "samples-data"}
    assert own_attrs == {} and own == SCRIPT
    _, allowed = inline_script(own)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1)
    assert f"script-src {allowed};" in policy
    assert "default-src 'none'" in policy and "require-trusted-types-for 'script'" in policy
    assert text.index("Content-Security-Policy") < text.index("<script")
    # 80 samples of the demo, all embedded, and a light file.
    assert len(page.data()["s"]) == 80
    assert len(text.encode("utf-8")) < 400_000


def test_the_verdict_comes_first(demo_results):
    from evalstats.deciding._compare_results import compare_results
    from evalstats.stats._compare import _detectable_text

    text = render_html(demo_results)
    page = _parse(text)
    assert page.sections[:2] == ["verdict", "per-case"]
    assert page.sections[-1] == "manifest"
    assert text.index('<section id="verdict">') < text.index("<nav>")
    cmp = compare_results(demo_results, "v1", "v2")
    verdict = _section(text, "verdict")
    words = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}
    assert f"{words[cmp.verdict]}, about these cases" in verdict
    # the difference shown is the primary comparison's, the one that agrees with the verdict
    assert str(cmp.primary.difference) in verdict
    if cmp.verdict == "cant_tell":
        assert _detectable_text(cmp.primary.detectable).capitalize() in verdict
    assert str(cmp.cases_like_these.difference) in verdict  # the other claim, beside it
    # and what would decide that one: the planner's cases at the runs of this run
    from evalstats.planning._power import case_model_from_results, plan

    fitted = case_model_from_results(demo_results, variants=["v1", "v2"])
    model = type(fitted)(fitted.p_a, fitted.p_b, fitted.icc, fitted.spread)
    planned = plan(0, 0, model=model, repeats=fitted.repeats, experiments=1000)
    assert f"about {planned.cases:,} cases × {fitted.repeats} runs would usually" in verdict
    per_case = _section(text, "per-case")
    for r in cmp.these_cases.cases:
        assert f"{r.passes_a}/{r.trials_a}" in per_case and str(r.difference) in per_case


def test_what_would_decide_it_is_the_detectable_difference_of_the_test():
    from records import results

    from evalstats.deciding._compare_results import compare_results
    from evalstats.stats._compare import detectable_difference

    # 8 cases x 5 runs: B passes one more run of the first three cases; can't tell yet.
    outcomes = {
        "A": {f"c{i}": [r < 3 for r in range(5)] for i in range(8)},
        "B": {f"c{i}": [r < (4 if i < 3 else 3) for r in range(5)] for i in range(8)},
    }
    res = results(outcomes)
    cmp = compare_results(res, "A", "B")
    assert cmp.verdict == "cant_tell"
    verdict = _section(render_html(res), "verdict")
    found = re.search(r"about 8 cases × (\d+) runs \(([\d,]+) pairs\)", verdict)
    assert found, verdict
    runs, pairs = int(found.group(1)), int(found.group(2).replace(",", ""))
    assert runs == math.ceil(pairs / 8)
    p = cmp.primary
    seen = abs(p.difference.estimate)
    disc = (p.only_a + p.only_b) / p.trials_a

    def detectable(n):
        return detectable_difference(n, method="mcnemar", discordance=disc)

    # At the pairs stated the paired test would usually detect the difference seen;
    # a few percent fewer would not (the search stops within 2%).
    assert detectable(pairs) <= seen < detectable(int(pairs * 0.95))


def test_every_section_of_report_json_has_its_place(rich, rich_reviews, rich_page):
    from evalstats.presenting._report import report

    rep = report(rich, reviews=rich_reviews)
    doc = rep.to_dict()
    page = _parse(rich_page)
    assert set(doc) <= set(JSON_PLACES), set(doc) - set(JSON_PLACES)
    for key in doc:
        assert JSON_PLACES[key] in page.ids, key
    # and each shows what the text report says
    # with three variants the ranking heads the verdicts
    verdict = _section(rich_page, "verdict")
    assert rep.ranking and verdict.index('id="ranking"') < verdict.index('class="headline')
    assert rep.ranking.split("\n")[0] in verdict and "Holm" in verdict
    tags = _section(rich_page, "tags")
    for t in rep.tags:
        assert t.tag in tags and str(t.clustered) in tags
    cost = _section(rich_page, "cost")
    for line in rep.cost.lines():
        assert line.strip()[:40] in cost
    reviews = _section(rich_page, "reviews")
    for r in rep.reviewed:
        assert f"{r.passed}/{r.decided}" in reviews and str(r.interval) in reviews
    rates = _section(rich_page, "rates")
    for v in rep.variants:
        assert str(v.per_trial) in rates and str(v.clustered) in rates
    # what the run lacks is named in one list, each item where its section would be
    absent = _section(rich_page, "absent")
    assert 'id="containment"' in absent and 'id="sequential"' in absent
    assert 'id="corrected"' not in rich_page  # corrected rates sit with the reviews


def test_the_manifest_says_in_words_what_the_variants_were(rich_page):
    shown = _section(rich_page, "manifest")
    assert SYSTEM in shown and PREFIX in shown  # the full prompt text
    assert "model-kind" in shown and "openai" in shown
    assert "judge" in shown and "openai:judge-model" in shown
    assert f"model-kind@sha256:{'ab' * 8}" in shown  # what the service reported
    assert "part-1.jsonl: repeats 0 to 1, seed 11" in shown
    assert "part-2.jsonl: repeats 2 to 3, seed 12" in shown
    assert "counting method 1" in shown and "every scored check passed" in shown
    assert '{"kind"' not in shown  # no raw JSON of the task


def test_the_samples_are_embedded_once_and_compactly(demo_results):
    text = render_html(demo_results)
    page = _parse(text)
    data = page.data()
    assert data == samples_data(demo_results, data["cases"], 10**6)
    assert data["total"] == 80 and len(data["s"]) == 80
    visible = "".join(page.text)
    answers = {s["answer"] for s in demo_results.samples if s.get("answer")}
    assert answers
    shown = {row[7] for row in data["s"]}
    for answer in answers:
        assert answer in shown  # in the data the script draws from
        assert answer not in visible  # never in the page's own text
    by_key = {(s["case"], s["variant"], s["repeat"]): s for s in demo_results.samples}
    for row in data["s"]:
        s = by_key[(data["cases"][row[0]], data["variants"][row[1]], row[2])]
        passed = sample_passed(s)
        assert row[4] == (-1 if passed is None else int(passed))
        assert [data["checks"][c[0]] for c in row[10]] == [c["check"] for c in s["checks"]]
        assert data["prompts"][row[8]].endswith(s["prompt"]["messages"][0]["content"])


def test_the_numbers_are_those_of_the_text_report(demo_results):
    from evalstats.deciding._compare_results import compare_results
    from evalstats.presenting._report import report

    text = render_html(demo_results)
    rep = report(demo_results)
    for v in rep.variants:
        assert f"{v.passes}/{v.measured}" in text
        assert str(v.per_trial) in text and str(v.clustered) in text
    cmp = compare_results(demo_results, "v1", "v2")
    assert str(cmp.these_cases.difference) in text
    data = _parse(text).data()
    failed = next(c for s in demo_results.samples for c in s["checks"] if c["status"] == "failed")
    assert any(c[2] == failed["reason"] for row in data["s"] for c in row[10])


def test_file_is_private_and_never_overwritten(demo_results, tmp_path):
    out = tmp_path / "r.html"
    html_report(demo_results, out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    before = out.read_bytes()
    with pytest.raises(ResultsFileError, match="already exists"):
        html_report(demo_results, out)
    assert out.read_bytes() == before
    html_report(demo_results, out, force=True)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    with pytest.raises(ResultsFileError, match="does not exist"):
        html_report(demo_results, tmp_path / "missing" / "r.html")


def test_imported_logs_make_a_report_too(tmp_path):
    res = load_results(DATA / "promptfoo" / "promptfoo-results.json")
    text = html_report(res, tmp_path / "p.html").read_text(encoding="utf-8")
    page = _parse(text)
    assert "promptfoo" in text and "a sample passes when" in text
    assert "icontains(politely)" in json.dumps(page.data(), ensure_ascii=False)
    assert page.fetches == [] and page.svgs == 2


def test_long_runs_embed_the_first_samples_and_say_so(demo_results):
    text = render_html(demo_results, max_samples=10)
    assert "The first 10 of 80 samples" in text
    data = _parse(text).data()
    assert len(data["s"]) == 10 and data["total"] == 80


def test_report_html_passes_reviews_and_prices_to_the_page(tmp_path, capsys):
    from evalstats.cli import main

    run = tmp_path / "r.jsonl"
    res = _rich_run()
    with open(run, "w", encoding="utf-8") as f:
        f.write(json.dumps({**res.manifest, "type": "manifest"}) + "\n")
        for s in res.samples:
            f.write(json.dumps({"type": "sample", **s}) + "\n")
        f.write(json.dumps({"type": "summary", "status": "finished"}) + "\n")
    prices = tmp_path / "prices.yaml"
    prices.write_text("model-base: {input: 5.0, output: 5.0}\n", encoding="utf-8")
    page = tmp_path / "page.html"
    assert main(["report", str(run), "--prices", str(prices), "--html", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert '<section id="cost">' in text


# --- the page in a browser ----------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def demo_page(demo_results, tmp_path_factory):
    return html_report(demo_results, tmp_path_factory.mktemp("page") / "report.html")


@pytest.fixture(scope="module")
def rich_file(rich, rich_reviews, tmp_path_factory):
    return html_report(rich, tmp_path_factory.mktemp("rich") / "rich.html", reviews=rich_reviews)


def _layout(browser) -> dict[str, int]:
    text = browser.run("document.getElementById('samples-app').dataset.layout")
    return {k: int(v) for k, v in (part.rsplit(" ", 1) for part in text.split("; "))}


@needs_chromium
@pytest.mark.parametrize("width", [1280, 390])
def test_in_chromium_the_verdict_is_first_and_fits(browser, demo_page, rich_file, width):
    for page in (demo_page, rich_file):
        browser.open(page, width=width, hash="#samples?layout=1")
        assert browser.messages == []  # no error, no blocked request, no CSP violation
        layout = _layout(browser)
        assert layout["viewport"] == (width if width < 600 else layout["viewport"])
        # no sideways scrolling of the page, and the verdicts and the per-case table
        # within the viewport
        assert layout["page"] <= layout["viewport"]
        assert layout["verdict"] <= layout["viewport"]
        assert layout["per-case"] <= layout["viewport"]
        assert layout["rates"] <= layout["viewport"]  # the pass rates too, both claims
        first = browser.run(
            "(() => { const s = [...document.querySelectorAll('section')];"
            " return [s[0].id, s[0].getBoundingClientRect().top,"
            " document.querySelector('h1').getBoundingClientRect().bottom,"
            " s[0].querySelector('.verdict').textContent]; })()"
        )
        assert first[0] == "verdict" and first[1] < 200 and first[3]


def _shown(browser) -> tuple[int, int]:
    """(rows drawn, samples matching) as the page says."""
    text = browser.run("document.getElementById('shown').textContent")
    found = re.search(r"of ([\d,]+) matching", text)
    assert found, text
    rows = browser.run("document.querySelectorAll('#rows > li.row').length")
    return rows, int(found.group(1).replace(",", ""))


@needs_chromium
def test_in_chromium_the_filters_select_the_samples_they_name(browser, rich, rich_file):
    samples = rich.samples
    tags = {c["id"]: c["tags"] for c in rich.manifest["cases"]}

    def failed_check(s, name):
        return any(c["check"] == name and c["status"] == "failed" for c in s["checks"])

    views = [
        ({}, samples),
        ({"variant": "kind"}, [s for s in samples if s["variant"] == "kind"]),
        ({"case": "refund"}, [s for s in samples if s["case"] == "refund"]),
        ({"tag": "orders"}, [s for s in samples if "orders" in tags[s["case"]]]),
        ({"status": "completed"}, samples),
        ({"failed": "1"}, [s for s in samples if sample_passed(s) is False]),
        ({"check": "tone"}, [s for s in samples if failed_check(s, "tone")]),
        (
            {"variant": "terse", "failed": "1", "case": "order"},
            [
                s
                for s in samples
                if s["variant"] == "terse" and s["case"] == "order" and not sample_passed(s)
            ],
        ),
    ]
    for view, expected in views:
        browser.open(rich_file, hash=fragment(**view) if view else "")
        assert browser.messages == []
        rows, matching = _shown(browser)
        assert matching == len(expected), view
        assert rows == min(len(expected), 100)
        drawn = browser.run(
            "[...document.querySelectorAll('#rows > li.row')].map(li => "
            "[li.querySelector('.case').textContent, li.querySelector('.variant').textContent,"
            " +li.querySelector('.repeat').textContent.split(' ')[1]])"
        )
        order = sorted(
            expected,
            key=lambda s: (CASES.index(s["case"]), VARIANTS.index(s["variant"]), s["repeat"]),
        )  # in case order, then variant, then repeat
        assert drawn == [[s["case"], s["variant"], s["repeat"]] for s in order][:100]
    # the controls themselves: choose a variant and "failed only" as a reader would
    browser.open(rich_file)
    browser.run(
        "(() => { const v = document.getElementById('f-variant');"
        " v.value = String([...v.options].findIndex(o => o.text === 'base') - 1);"
        " v.dispatchEvent(new Event('change'));"
        " const f = document.getElementById('f-failed'); f.checked = true;"
        " f.dispatchEvent(new Event('change')); })()"
    )
    expected = [s for s in samples if s["variant"] == "base" and not sample_passed(s)]
    assert _shown(browser)[1] == len(expected)
    assert browser.run("location.hash") == "#samples?variant=base&failed=1"
    assert browser.messages == []


@needs_chromium
def test_in_chromium_side_by_side_shows_both_answers_in_full(browser, rich, rich_file):
    browser.open(rich_file, hash=fragment(pair="refund", repeat=2))
    assert browser.messages == []
    sides = browser.run("[...document.querySelectorAll('#pair .side')].map(s => s.innerText)")
    assert len(sides) == 3  # every variant's sample of (refund, 2), A and B first
    by_variant = {
        s["variant"]: s for s in rich.samples if (s["case"], s["repeat"]) == ("refund", 2)
    }
    for side, name in zip(sides, ["base", "kind", "terse"], strict=True):
        s = by_variant[name]
        assert side.startswith(
            name + (" (A)" if name == "base" else " (B)" if name == "kind" else "")
        )
        assert s["answer"] in side
        assert "prompt sent" in side and SYSTEM.split("\n")[0] in side
        assert (
            "the judge's reply" in side and s["checks"][1]["judge"]["reply"].split("\n")[0] in side
        )
        assert "tool trace" in side and '"lookup"' in side
        for c in s["checks"]:
            assert c["check"] in side and c["status"] in side
            if c["reason"]:
                assert c["reason"] in side
    # the row's button opens the same view, and "close" closes it
    browser.open(rich_file, hash=fragment(case="hours"))
    browser.run("document.querySelectorAll('#rows button.pair-open')[1].click()")
    assert browser.run("location.hash") == "#samples?case=hours&pair=hours&repeat=1"
    assert "hours, repeat 1" in browser.run("document.querySelector('#pair h3').textContent")
    browser.run("document.querySelector('#pair button.close').click()")
    assert browser.run("document.getElementById('pair').hidden") is True
    # one row's details, opened on demand
    browser.open(rich_file, hash=fragment(variant="kind", open=0))
    opened = browser.run("document.querySelector('#rows .details').innerText")
    assert "answer of kind to order, run 0" in opened
    assert browser.messages == []


@needs_chromium
def test_the_chromium_check_sees_console_messages(browser, tmp_path):
    # The checks above can fail: a page that tries to fetch an image is reported,
    # and so is a script the policy does not allow.
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src '
        "'none'\"><img src=\"http://127.0.0.1:9/x.png\"><script>document.title='ran'</script>",
        encoding="utf-8",
    )
    browser.open(page)
    assert any("Content Security Policy" in m for m in browser.messages), browser.messages
    assert browser.run("document.title") != "ran"


def test_a_sequential_run_shows_its_looks_and_their_figure(tmp_path, capsys):
    from evalstats.cli import main
    from evalstats.deciding._sequential import sequential_results

    run = tmp_path / "r.jsonl"
    argv = ["run", "shop", "--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]
    argv.append("--until-decided")
    assert main([*argv, "--max-runs", "12", "--out", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    res = read_results(run)
    assert res.looks
    text = render_html(res)
    looks = _section(text, "sequential")
    seq = sequential_results(res, "v1", "v2", about=res.looks[-1].get("about", "these_cases"))
    assert str(seq).split("\n")[0] in looks
    assert looks.count("<tr>") == 1 + len(res.looks)  # a row per look, under its head
    for look in res.looks:
        assert f'<td class="num">{look["pairs"]}</td>' in looks
    assert text.count("<svg") == 3  # forest, paired differences and the sequential figure
    verdict = _section(text, "verdict")  # the anytime-valid verdict first, the fixed-n one after
    assert verdict.index("anytime-valid") < verdict.index("Difference B − A")
    assert str(seq).split("\n")[0] in verdict
    assert 'class="sequential"' in _section(text, "figures")


def test_a_decided_verdict_says_so_and_an_unpaired_one_plans_runs():
    from records import results

    from evalstats.deciding._compare_results import compare_results

    better = results(
        {
            "A": {f"c{i}": [r < 2 for r in range(6)] for i in range(6)},
            "B": {f"c{i}": [r < 5 for r in range(6)] for i in range(6)},
        }
    )
    assert compare_results(better, "A", "B").verdict == "b_better"
    verdict = _section(render_html(better), "verdict")
    assert "B better, about these cases" in verdict
    assert "Decided at 95%: the interval lies wholly above 0." in verdict
    assert "would usually" not in verdict.split("Beside it")[0]
    # Unpaired (no schedule pairs the variants): runs of each variant are planned.
    loose = results(
        {
            "A": {f"c{i}": [r < 3 for r in range(5)] for i in range(6)},
            "B": {f"c{i}": [r < 4 for r in range(5)] for i in range(6)},
        }
    )
    loose.manifest.pop("schedule")
    cmp = compare_results(loose, "A", "B")
    assert not cmp.paired and cmp.verdict == "cant_tell"
    verdict = _section(render_html(loose), "verdict")
    found = re.search(r"about ([\d,]+) runs of each variant would usually \(80%\)", verdict)
    assert found, verdict
    from evalstats.stats._compare import detectable_difference

    n = int(found.group(1).replace(",", ""))
    p = cmp.primary
    rate = (p.successes_a + p.successes_b) / (p.trials_a + p.trials_b)
    seen = abs(p.difference.estimate)
    assert detectable_difference(n, n, rate=rate, level=0.95) <= seen
    assert detectable_difference(int(n * 0.95), rate=rate, level=0.95) > seen


def test_the_rates_corrected_by_a_random_review_are_on_the_page(tmp_path):
    from test_reviewsample import _person

    from evalstats.presenting._report import report
    from evalstats.running._engine import run

    results = tmp_path / "results.jsonl"
    run("shop", ["v1=standin:shop-v1", "v2=standin:shop-v2"], runs=15, out=results, progress=False)
    reviews = tmp_path / "reviews.jsonl"
    _person(results, reviews, sample=25, seed=1)
    rep = report(results, reviews=reviews)
    assert rep.corrected is not None
    section = _section(render_html(results, reviews=reviews), "reviews")
    for line in rep.corrected.lines("95%"):
        assert line.strip() in section
    for r in rep.reviewed:
        assert f"{r.passed}/{r.decided}" in section


def test_one_variant_or_nothing_measured_still_heads_the_page():
    from records import results

    one = _section(
        render_html(results({"only": {"a": [True, False], "b": [True, True]}})), "verdict"
    )
    assert "one variant only, nothing to compare" in one and "passed 3 of 4" in one
    assert "75% (30% to 95%)" in one  # Wilson, 3 of 4
    none = results({"A": {"a": [None, None]}, "B": {"a": [None, None]}})
    verdict = _section(render_html(none), "verdict")
    assert "can't tell" in verdict and "nothing to compare" in verdict


def test_every_section_of_a_scored_report_json_has_its_place(tmp_path):
    # A run whose samples carry a judge's 1-5 levels: its mean scores, levels and
    # per-case distribution (report --json "scores") are on the page, in the section
    # JSON_PLACES names, and the mean-score comparison heads the verdicts.
    from scored import scored_run

    from evalstats.deciding._compare_results import compare_results
    from evalstats.presenting._report import report

    levels = {
        "old": {f"c{i}": [2 + (i + r) % 3 for r in range(3)] for i in range(8)},
        "new": {f"c{i}": [3 + (i * r) % 3 for r in range(3)] for i in range(8)},
    }
    path = scored_run(tmp_path / "r.jsonl", levels)
    rep = report(str(path))
    doc = rep.to_dict()
    page_text = render_html(str(path))
    page = _parse(page_text)
    assert "scores" in doc and set(doc) <= set(JSON_PLACES)
    for key in doc:
        assert JSON_PLACES[key] in page.ids, key
    scores = _section(page_text, "scores")
    for s in rep.scores:
        assert str(s.these_cases) in scores and str(s.cases_like_these) in scores
        for lc in s.levels:
            total = lc.total
            for _, n in lc.counts:
                assert f"{n} ({100 * n / total:.0f}%)" in scores
        for case, n, mean, lo, hi in s.by_case:
            row = f'<td>{case}</td><td class="num">{n}</td><td class="num">{_num(mean)}</td>'
            assert row + f'<td class="num">{_num(lo)} to {_num(hi)}</td>' in scores
    cmp = compare_results(str(path), "old", "new").scores
    verdict = _section(page_text, "verdict")
    assert f"mean score: {_VERDICT_WORDS[cmp.verdict]}, about these cases" in verdict
    assert str(cmp.primary.difference) in verdict
    assert str(cmp.cases_like_these.difference) in verdict
    assert "mean score per case" in scores and "adjusted p" in scores
    assert 'class="score"' in _section(page_text, "figures")


def test_a_page_without_scores_has_no_score_parts(rich_page):
    assert 'id="scores"' not in rich_page and "headline score" not in rich_page
    assert "Mean score" not in rich_page
