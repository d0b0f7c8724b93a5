"""The self-contained HTML report (evalstats.presenting._html)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from evalstats.demo._shop_demo import run_demo
from evalstats.errors import ResultsFileError
from evalstats.presenting._html import html_report, render_html
from evalstats.reading._logs import load_results
from evalstats.results._file import read_results

DATA = Path(__file__).parent / "data"

TABLES = (
    "manifest",
    "overall",
    "verdicts",
    "differences",
    "cases",
    "axes",
    "checks",
    "latency",
    "samples",
)

#: Attributes through which a page loads or sends something.
FETCHING = {"src", "href", "xlink:href", "action", "formaction", "poster", "data", "srcset"}


class _Page(HTMLParser):
    """What the tests check: tables, figures, fetching attributes, text in and out of <details>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[str] = []
        self.svgs = 0
        self.tags: set[str] = set()
        self.fetches: list[tuple[str, str, str]] = []
        self.urls_in_attributes: list[tuple[str, str]] = []
        self.details_depth = 0
        self.visible: list[str] = []
        self.hidden: list[str] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append(attrs.get("class", ""))
        if tag == "svg":
            self.svgs += 1
        if tag == "details":
            self.details_depth += 1
        if tag == "style":
            self._in_style = True
        for name, value in attrs.items():
            value = value or ""
            if name in FETCHING and not value.startswith("#"):
                self.fetches.append((tag, name, value))
            if "//" in value and not name.startswith("xmlns"):
                self.urls_in_attributes.append((name, value))

    def handle_endtag(self, tag):
        if tag == "details":
            self.details_depth -= 1
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data
        (self.hidden if self.details_depth else self.visible).append(data)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def demo_results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    run_demo(out=folder, plots=False)
    return read_results(folder / "results.jsonl")


def test_report_is_self_contained_and_has_every_table(demo_results, tmp_path):
    out = html_report(demo_results, tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    page = _parse(text)
    assert text.startswith("<!DOCTYPE html>")
    for cls in TABLES:
        assert cls in page.tables, cls
    assert page.svgs == 2  # the forest plot and one paired-difference figure
    assert not {"script", "link", "img", "iframe", "object", "embed"} & page.tags
    assert page.fetches == []
    assert page.urls_in_attributes == []
    assert "url(" not in page.style and "@import" not in page.style
    assert "@font-face" not in text
    assert '<meta name="viewport"' in text
    # 80 samples of the demo: one row each, and a light file.
    assert text.count("<summary>answer</summary>") == 80
    assert len(text.encode("utf-8")) < 2_000_000


def test_answers_show_only_behind_a_click(demo_results, tmp_path):
    text = render_html(demo_results)
    page = _parse(text)
    visible = "".join(page.visible)
    hidden = "".join(page.hidden)
    answers = {s["answer"] for s in demo_results.samples if s.get("answer")}
    assert answers
    for answer in answers:
        assert answer in hidden
        assert answer not in visible


def test_report_shows_the_numbers_of_the_text_report(demo_results):
    from evalstats.deciding._compare_results import compare_results
    from evalstats.presenting._report import report

    text = render_html(demo_results)
    rep = report(demo_results)
    for v in rep.variants:
        assert f"{v.passes}/{v.measured}" in text
        assert str(v.per_trial) in text and str(v.clustered) in text
    cmp = compare_results(demo_results, "v1", "v2")
    assert str(cmp.these_cases.difference) in text
    failed = next(c for s in demo_results.samples for c in s["checks"] if c["status"] == "failed")
    assert failed["reason"] in text


def test_file_is_private_and_never_overwritten(demo_results, tmp_path):
    out = tmp_path / "r.html"
    html_report(demo_results, out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    before = out.read_bytes()
    with pytest.raises(ResultsFileError, match="already exists"):
        html_report(demo_results, out)
    assert out.read_bytes() == before
    with pytest.raises(ResultsFileError, match="does not exist"):
        html_report(demo_results, tmp_path / "missing" / "r.html")


def test_imported_logs_make_a_report_too(tmp_path):
    res = load_results(DATA / "promptfoo" / "promptfoo-results.json")
    text = html_report(res, tmp_path / "p.html").read_text(encoding="utf-8")
    page = _parse(text)
    assert "promptfoo" in text and "a sample passes when" in text
    assert "icontains(politely)" in text
    assert page.fetches == [] and page.svgs == 2


def test_long_runs_list_the_first_samples_and_say_so(demo_results):
    text = render_html(demo_results, max_samples=10)
    assert "The first 10 of 80 samples" in text
    assert text.count("<summary>answer</summary>") == 10


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
def test_headless_chromium_renders_it_without_console_messages(demo_results, tmp_path):
    out = html_report(demo_results, tmp_path / "report.html")
    profile = tmp_path / "profile"
    profile.mkdir()
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--window-size=390,844",  # a phone's width
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        out.as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # With logging on, every console message (an error, a blocked request, a
    # Content-Security-Policy violation) is a line with CONSOLE on stderr.
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    dom = done.stdout
    assert 'id="samples"' in dom and dom.count("<svg") == 2


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
def test_the_chromium_check_sees_console_messages(tmp_path):
    # The check above can fail: a page that tries to fetch an image is reported.
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src '
        '\'none\'"><img src="http://127.0.0.1:9/x.png">'
    )
    profile = tmp_path / "profile"
    profile.mkdir()
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert any(":CONSOLE" in line for line in done.stderr.splitlines())
