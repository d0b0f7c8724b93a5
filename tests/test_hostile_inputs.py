"""Hostile text in every field a user or another tool controls: shown, never obeyed.

Five classes, each with fresh payloads:

1. markup in names, ids, checks, answers, tags and notes: the HTML report
   shows it as text and no element or attribute on the page comes from data;
2. terminal controls and newlines: the approval prompt, the review screen and
   the text of report and compare show them as escapes, and a suite or a
   variant whose names hold them (or look like another's) is refused at load;
3. values of the wrong type in other tools' logs, and absurd numbers on the
   command line: one line naming the file, line and field (or the argument),
   exit status 2, no traceback, nothing written;
4. ``$`` (mathtext) in names and lone surrogates in stored answers: figures,
   the HTML page and the review still work;
5. output files: written whole or not at all, an existing one refused unless
   ``--force``, a symbolic link replaced and never written through.
"""

from __future__ import annotations

import errno
import html
import io
import itertools
import json
import os
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats._files import write_output
from evalstats._terminal import lines_text, visible
from evalstats._validate import confusable, name_key, name_problem
from evalstats.cli import main
from evalstats.demo.notes_agent import Proposal, ask_on_stdin
from evalstats.errors import InvalidArgument
from evalstats.presenting._html import render_html
from evalstats.presenting._markup import TAGS, csp, element, inline_script, safe_href, text
from evalstats.presenting._page_script import SCRIPT
from evalstats.results._file import ResultsWriter

DATA = Path(__file__).parent / "data"

# --- payloads --------------------------------------------------------------------------

EVIL = "evil.example"
MARKUP = [
    f'<meta http-equiv="refresh" content="0;url=https://{EVIL}/">',
    '<img src=x onerror="alert(1)">',
    '<svg onload="alert(2)"><circle r="9"/></svg>',
    '<iframe srcdoc="&lt;script&gt;alert(3)&lt;/script&gt;"></iframe>',
    f'<base href="https://{EVIL}/">',
    '<a href="javascript:alert(4)">click</a>',
    '"><script>alert(5)</script>',
    "'><b onmouseover=alert(6)>x</b>",
    "</pre></details></td></tr></table><h1>forged</h1>",
    "<!-- hidden --><![CDATA[x]]><?php x ?>",
    "&lt;already escaped&gt; &amp; &#x3c;",
    "<style>body{display:none}</style>",
    '<form action="https://evil.example/"><input name=q></form>',
]

#: Retitle the window, erase lines, move up, hide text, one-byte CSI, bidi override.
CONTROLS = "\x1b]0;pwned\x07\x1b[2K\x1b[1A\r\x1b[8mhidden\x1b[0m\x9b2J\u202etxt.exe\b"

TERMINAL = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n", "\t"}
TERMINAL |= set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def snapshot(folder: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for top, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, folder)
            out[rel] = (
                ("->" + os.readlink(path)) if os.path.islink(path) else Path(path).read_bytes()
            )
    return out


def one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], folder: Path) -> str:
    """Run ``argv``: exit 2, one line on stderr, no traceback, nothing in ``folder`` changed."""
    before = snapshot(folder)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("evalstats"), err
    assert snapshot(folder) == before
    return err


def hostile_run(path: Path, names: list[str], *, answer: str = "an answer") -> Path:
    """A results file whose every name, reason and answer is one of ``names`` (cycled)."""
    pick = itertools.cycle(names)
    cases = [next(pick) for _ in range(3)]
    variants = [next(pick), next(pick)]
    manifest = {
        "suite": {"name": next(pick), "version": next(pick)},
        "cases": [{"id": c, "tags": [next(pick)], "review": next(pick)} for c in cases],
        "runs": 2,
        "variants": [{"name": v, "task": {"kind": next(pick)}} for v in variants],
        "machine": next(pick),
        "environment": {next(pick): next(pick)},
    }
    with ResultsWriter.create(path, manifest) as w:
        for c in cases:
            for v in variants:
                for repeat in (0, 1):
                    passed = (repeat + len(v)) % 2 == 0
                    w.write_sample(
                        {
                            "case": c,
                            "variant": v,
                            "repeat": repeat,
                            "status": "completed",
                            "reason": next(pick),
                            "answer": f"{answer} {next(pick)}",
                            "trace": {"note": next(pick)},
                            "checks": [
                                {
                                    "check": next(pick),
                                    "name": next(pick),
                                    "axis": next(pick),
                                    "status": "passed" if passed else "failed",
                                    "reason": next(pick),
                                }
                            ],
                        }
                    )
        w.close({"status": "finished"})
    return path


# --- 1. markup ----------------------------------------------------------------------------

#: What the page itself is made of, beside the report's own elements.
PAGE_TAGS = TAGS | {"html", "head", "meta", "title", "style", "body", "script"}
#: matplotlib's SVG (as html.parser lower-cases it).
SVG_TAGS = {"svg", "defs", "style", "g", "path", "use", "clippath", "rect", "text", "tspan"}
OUR_METAS = [
    {"charset": "utf-8"},
    # nothing loads, and only the page's own script runs (allowed by its hash)
    {
        "http-equiv": "Content-Security-Policy",
        "content": re.search(r'content="([^"]*)"', csp(inline_script(SCRIPT)[1])).group(1),
    },
    {"name": "viewport", "content": "width=device-width, initial-scale=1"},
]


class _Elements(HTMLParser):
    """Every element, attribute, comment and declaration of a page, and its text; the
    strings of the samples' data (JSON in a script no browser runs) count as its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.others: list[str] = []
        self.data: list[str] = []
        self.scripts: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._script = tag == "script"
        if self._script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._script = False

    handle_startendtag = handle_starttag

    def handle_comment(self, data):
        self.others.append(f"comment {data!r}")

    def handle_decl(self, decl):
        if decl.lower() != "doctype html":
            self.others.append(f"declaration {decl!r}")

    def handle_pi(self, data):
        self.others.append(f"processing instruction {data!r}")

    def unknown_decl(self, data):
        self.others.append(f"declaration {data!r}")

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data
        else:
            self.data.append(data)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def assert_nothing_came_from_data(page: str, payloads: list[str]) -> None:
    parsed = _Elements()
    parsed.feed(page)
    parsed.close()
    assert parsed.others == []
    metas = [attrs for tag, attrs in parsed.elements if tag == "meta"]
    assert metas == OUR_METAS
    for tag, attrs in parsed.elements:
        assert tag in PAGE_TAGS | SVG_TAGS, tag
        for name, value in attrs.items():
            value = value or ""
            assert not name.startswith("on"), (tag, name)
            assert name not in ("srcdoc", "src", "action", "formaction", "http-equiv") or (
                tag == "meta"
            )
            if name in ("href", "xlink:href"):
                assert value.startswith("#"), (tag, name, value)
            assert EVIL not in value and "alert(" not in value and "javascript:" not in value
    # Two scripts: the samples' data and the page's own, nothing else.
    scripts = [attrs for tag, attrs in parsed.elements if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "samples-data"}, {}]
    assert parsed.scripts[1] == SCRIPT
    assert "<" not in parsed.scripts[0]  # no text in the data can end its element
    data = json.loads(parsed.scripts[0])
    texts = "".join(parsed.data) + "\n".join(_strings(data))
    for payload in payloads:
        assert visible(payload) in texts, payload  # shown, as the characters it is


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("markup")
    path = hostile_run(folder / "r.jsonl", MARKUP)
    return render_html(path)


def test_markup_in_every_field_shows_as_text_on_the_page(hostile_page):
    assert_nothing_came_from_data(hostile_page, MARKUP)


def test_the_page_has_its_own_elements_only(hostile_page):
    assert hostile_page.count("<svg") == 2  # the two figures, none from a name
    assert hostile_page.count("<script") == 2  # the samples' data and the page's own
    assert "<iframe" not in hostile_page
    assert "<base" not in hostile_page and "<img" not in hostile_page


def test_names_from_a_csv_log_are_text_on_the_page(tmp_path, capsys):
    rows = ["case,variant,passed"]
    for i, payload in enumerate(MARKUP[:6]):
        quoted = '"' + payload.replace('"', '""') + '"'
        for case in ("q1", quoted):
            rows.append(f"{case},{quoted if i % 2 else 'plain'},{i % 2}")
    log = tmp_path / "log.csv"
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    page = tmp_path / "page.html"
    assert main(["report", str(log), "--html", str(page)]) == 0
    capsys.readouterr()
    assert_nothing_came_from_data(page.read_text(encoding="utf-8"), MARKUP[:6])


def _promptfoo_with(tmp_path: Path, edit) -> Path:
    doc = json.loads((DATA / "promptfoo" / "promptfoo-results.json").read_text(encoding="utf-8"))
    edit(doc)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def test_names_from_a_promptfoo_log_are_text_on_the_page(tmp_path, capsys):
    def edit(doc):
        for i, prompt in enumerate(doc["results"]["prompts"]):
            prompt["label"] = MARKUP[i % len(MARKUP)]
        for i, entry in enumerate(doc["results"]["results"]):
            entry["prompt"]["label"] = MARKUP[entry["promptIdx"] % len(MARKUP)]
            (entry.get("testCase") or {})["description"] = MARKUP[(i + 3) % len(MARKUP)]

    log = _promptfoo_with(tmp_path, edit)
    page = tmp_path / "page.html"
    assert main(["report", str(log), "--html", str(page)]) == 0
    capsys.readouterr()
    assert_nothing_came_from_data(page.read_text(encoding="utf-8"), [])


def test_a_model_name_from_an_inspect_log_is_text_on_the_page(tmp_path, capsys):
    pytest.importorskip("inspect_ai")
    doc = json.loads((DATA / "inspect" / "inspect_a.json").read_text(encoding="utf-8"))
    doc["eval"]["model"] = MARKUP[0]
    log = tmp_path / "log.json"
    log.write_text(json.dumps(doc), encoding="utf-8")
    page = tmp_path / "page.html"
    assert main(["report", str(log), "--html", str(page)]) == 0
    capsys.readouterr()
    assert_nothing_came_from_data(page.read_text(encoding="utf-8"), [MARKUP[0]])


_any_text = st.text(st.characters(exclude_categories=()), max_size=40)
_ENTITY = re.compile(r"&(amp|lt|gt|quot|#x27);")


@given(_any_text)
def test_escaped_text_holds_no_markup_and_no_control(value):
    shown = text(value)
    assert not set("<>\"'") & set(shown)
    assert _ENTITY.sub("", shown).count("&") == 0
    assert not TERMINAL & set(shown)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in shown)
    shown.encode("utf-8")  # always encodable
    if not TERMINAL & set(value) and not any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        assert html.unescape(shown) == value  # plain text comes back exactly


@given(_any_text, _any_text)
def test_an_element_has_only_the_attributes_it_was_given(child, title):
    parsed = _Elements()
    parsed.feed(element("td", child, cls="num", title=title))
    parsed.close()
    assert [tag for tag, _ in parsed.elements] == ["td"]
    assert parsed.elements[0][1] == {"class": "num", "title": html.unescape(text(title))}
    assert "".join(parsed.data) == html.unescape(text(child))


@given(_any_text)
def test_a_link_goes_only_to_this_page_or_the_web(url):
    href = safe_href(url)
    assert href is None or href == url
    if href is not None:
        assert href.startswith("#") or href.lower().startswith(("http://", "https://"))


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:x",
        "java\tscript:x",
        "data:x",
        "file:///etc/passwd",
        "//evil.example/",
        "vbscript:x",
        "https:",
        '#x" onclick="y',
    ],
)
def test_dangerous_links_are_dropped(url):
    assert safe_href(url) is None
    assert element("a", "x", href=url) == "<a>x</a>"


# --- 2. terminal -----------------------------------------------------------------------


def test_the_approval_prompt_shows_the_proposal_as_text():
    forged = f"fine{CONTROLS}\npath: 'innocent.txt'\napprove? [y/N] y\n\x1b[8m"
    err = io.StringIO()
    proposal = Proposal(f"n{CONTROLS}.txt", forged)
    assert ask_on_stdin(proposal, stdin=io.StringIO("n\n"), stderr=err) is False
    shown = err.getvalue()
    assert not TERMINAL & set(shown)
    lines = shown.split("\n")
    assert lines[0] == "The assistant proposes a new note."
    assert lines[1].startswith("path: 'n\\x1b]0;pwned\\x07")
    assert lines[-1] == "approve? [y/N] "  # the prompt's own, once, at the end
    text_lines = lines[3:-1]
    assert text_lines and all(line.startswith("  | ") for line in text_lines)
    assert sum(line.startswith("approve?") for line in lines) == 1
    assert sum(line.startswith("path:") for line in lines) == 1


@given(st.lists(_any_text, min_size=1, max_size=5))
def test_lines_text_keeps_one_line_per_line(lines):
    out = lines_text(lines)
    assert out.count("\n") == len(lines) - 1
    assert not TERMINAL & set(out)


def _forged_csv(tmp_path: Path) -> Path:
    log = tmp_path / "log.csv"
    rows = ["case,variant,passed"]
    for case in ('"a\nFAKE: B better, all checks passed"', "b\tc", "plain"):
        for variant, passed in (('"old\nFAKE2"', 0), ("new", 1)):
            rows.append(f"{case},{variant},{passed}")
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return log


@pytest.mark.parametrize(
    "argv",
    [
        ["report"],
        ["compare", "--a", "old\nFAKE2", "--b", "new"],
        ["compare", "--baseline", "old\nFAKE2"],
        ["compare", "--a", "old\nFAKE2", "--b", "new", "--sequential"],
    ],
    ids=["report", "compare", "compare-baseline", "compare-sequential"],
)
def test_a_newline_in_a_name_prints_no_forged_line(tmp_path, capsys, argv):
    log = _forged_csv(tmp_path)
    assert main([argv[0], str(log), *argv[1:]]) == 0
    out, err = capsys.readouterr()
    assert not any(line.lstrip().startswith("FAKE") for line in out.splitlines()), out
    assert "\t" not in out and not TERMINAL & set(out)
    if argv[0] == "report":
        assert "a\\nFAKE: B better" in out


def test_the_review_screen_keeps_one_line_fields_on_one_line(tmp_path):
    from evalstats.presenting._review import review

    path = hostile_run(tmp_path / "r.jsonl", [f"x\nFAKE{CONTROLS}", "ok"])
    out = io.StringIO()
    review(path, tmp_path / "reviews.jsonl", input=io.StringIO("q\n"), output=out)
    shown = out.getvalue()
    assert not TERMINAL & set(shown)
    assert not any(line.startswith("FAKE") for line in shown.splitlines())


SUITE_CASE = {"id": "a", "prompt": "Where is A-1042?", "checks": [{"contains": "A-1042"}]}


def _suite(*cases: dict, name: str = "mini") -> str:
    return json.dumps({"name": name, "cases": [{**SUITE_CASE, **c} for c in cases]})


LOADING_DOOR = [
    ("newline in an id", _suite({"id": "a\nFAKE"}), "cases[0]: id:", "\\n"),
    ("ESC in an id", _suite({"id": "a\x1b[2Jb"}), "cases[0]: id:", "\\x1b"),
    ("bidi override in an id", _suite({"id": "exe.\u202etxt"}), "cases[0]: id:", "\\u202e"),
    ("tab in an id", _suite({"id": "a\tb"}), "cases[0]: id:", "\\t"),
    ("C1 in an id", _suite({"id": "a\x85b"}), "cases[0]: id:", "\\x85"),
    ("an id not in NFC", _suite({"id": "cafe\u0301"}), "cases[0]: id:", "NFC"),
    (
        "ids that differ by a zero-width space",
        _suite({"id": "order"}, {"id": "or\u200bder"}),
        'case "or\u200bder": id:',
        "looks the same",
    ),
    (
        "ids that differ by a full-width letter",
        _suite({"id": "order"}, {"id": "\uff4frder"}),
        "id:",
        "looks the same",
    ),
    ("a tag with a newline", _suite({"tags": ["ok", "x\nFAKE"]}), 'case "a": tags[1]:', "\\n"),
    (
        "tags that differ by a zero-width joiner",
        _suite({"id": "a", "tags": ["billing"]}, {"id": "b", "tags": ["bil\u200dling"]}),
        'case "b": tags[0]:',
        "looks the same",
    ),
    (
        "an axis with ESC",
        _suite({"checks": [{"contains": "x", "axis": "tone\x1b[8m"}]}),
        'case "a": checks',
        "\\x1b",
    ),
    ("a suite name with a newline", _suite({}, name="mini\nFAKE"), "name:", "\\n"),
]


@pytest.mark.parametrize(
    ("suite", "where", "what"), [r[1:] for r in LOADING_DOOR], ids=[r[0] for r in LOADING_DOOR]
)
def test_a_suite_with_unfit_names_is_refused_in_one_line(tmp_path, capsys, suite, where, what):
    path = tmp_path / "suite.json"
    path.write_text(suite, encoding="utf-8")
    argv = ["run", str(path), "--variant", "v=standin:shop-v1", "--runs", "1"]
    argv += ["--out", str(tmp_path / "o")]
    err = one_line_exit_2(argv, capsys, tmp_path)
    assert str(path) in err and where in err and what in err, err
    assert not TERMINAL & set(err)


@pytest.mark.parametrize(
    ("variants", "what"),
    [
        (["a\nFAKE=standin:shop-v1"], "\\n"),
        (["a\x1b[2J=standin:shop-v1"], "\\x1b"),
        (["cafe\u0301=standin:shop-v1"], "NFC"),
        (["new=standin:shop-v1", "ne\u200bw=standin:shop-v2"], "looks the same"),
        (["new=standin:shop-v1", "n\ufeffew=standin:shop-v2"], "looks the same"),
    ],
)
def test_variants_with_unfit_names_are_refused_in_one_line(tmp_path, capsys, variants, what):
    suite = tmp_path / "suite.json"
    suite.write_text(_suite({}), encoding="utf-8")
    argv = ["run", str(suite), "--runs", "1", "--out", str(tmp_path / "o")]
    for v in variants:
        argv += ["--variant", v]
    err = one_line_exit_2(argv, capsys, tmp_path)
    assert what in err and "variant" in err, err


@given(_any_text)
def test_a_name_that_passes_is_plain_nfc_text(value):
    if name_problem(value) is None:
        assert visible(value, keep="") == value
        assert unicodedata.normalize("NFC", value) == value
        assert confusable([value, value + "\u200b"]) == (0, 1)
        assert name_key(value) == name_key(value + "\ufeff")


# --- 3. wrong types in logs, absurd numbers --------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("success", "false"),
        ("success", "maybe"),
        ("success", 1),
        ("success", None),
        ("testIdx", "0"),
        ("testIdx", 1.5),
        ("promptIdx", True),
        ("prompt", "just text"),
    ],
)
def test_a_promptfoo_value_of_the_wrong_type_is_one_line(tmp_path, capsys, field, value):
    def edit(doc):
        doc["results"]["results"][2][field] = value

    log = _promptfoo_with(tmp_path, edit)
    doc = log.read_text(encoding="utf-8")
    entry_line = _line_of_third_entry(doc)
    for argv in (["report", str(log)], ["import", str(log), "--out", str(tmp_path / "o.jsonl")]):
        err = one_line_exit_2(argv, capsys, tmp_path)
        assert str(log) in err and f"line {entry_line}:" in err, err
        assert f"results.results[2].{field}" in err, err


def _line_of_third_entry(doc: str) -> int:
    """The line where results.results[2] opens (the file is written with indent=2)."""
    inner = doc.index('"results": [', doc.index('"results": {'))
    opened = [m.start() for m in re.finditer(r"\n {6}\{", doc[inner:])]
    return doc.count("\n", 0, inner + opened[2] + 1) + 1


def test_a_promptfoo_assertion_pass_as_text_is_one_line(tmp_path, capsys):
    def edit(doc):
        for entry in doc["results"]["results"]:
            for c in (entry.get("gradingResult") or {}).get("componentResults") or []:
                c["pass"] = "true"

    log = _promptfoo_with(tmp_path, edit)
    err = one_line_exit_2(["report", str(log)], capsys, tmp_path)
    assert "componentResults[0].pass" in err and "not true or false" in err


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("passed", "maybe", "neither a pass/fail word"),
        ("passed", "inf", "not a finite score"),
        ("repeat", "inf", "whole number"),
        ("repeat", "1e300", "whole number"),
        ("latency_s", "abc", "not a number of seconds"),
        ("latency_s", "-1", "not a number of seconds"),
    ],
)
def test_a_table_cell_of_the_wrong_type_is_one_line(tmp_path, capsys, column, value, problem):
    row = {"case": "q1", "variant": "a", "repeat": "0", "passed": "1", "latency_s": "0.5"}
    row[column] = value
    log = tmp_path / "t.csv"
    log.write_text(",".join(row) + "\n" + "q0,a,0,1,0.1\n" + ",".join(row.values()) + "\n")
    err = one_line_exit_2(["report", str(log)], capsys, tmp_path)
    assert str(log) in err and "row 3" in err and problem in err, err


ABSURD = [
    (["power", "--pa", "0.5", "--pb", "0.6", "--trials", "20", "--level", "1e-300"], "level="),
    (["power", "--pa", "0.5", "--pb", "0.6", "--trials", "20", "--level", "0.99999"], "level="),
    (
        [
            "power",
            "--pa",
            "0.5",
            "--pb",
            "0.6",
            "--trials",
            "20",
            "--sequential",
            "--experiments",
            "100000000000",
        ],
        "experiments=",
    ),
    (
        ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "100000000", "--sequential"],
        "runs=",
    ),
    (["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--spread", "1e308"], "spread="),
    (["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--level", "1e-300"], "level="),
    (["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--power", "1e-300"], "power="),
    (["plan", "--pa", "1e-300", "--pb", "0.8", "--icc", "0.2"], "p_a="),
    (["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.9999999999999999"], "icc="),
    (["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--repeats", "10" * 6], "repeats="),
    (["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--cases", "10" * 6], "cases="),
    (
        ["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--experiments", "100000000000"],
        "experiments=",
    ),
    (
        ["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.2", "--cost-per-call", "1e308"],
        "cost_per_call=",
    ),
    (
        [
            "plan",
            "--pa",
            "0.7",
            "--pb",
            "0.9",
            "--icc",
            "0",
            "--cases",
            "4",
            "--repeats",
            "100000000",
            "--sequential",
        ],
        "runs=",
    ),
    (
        [
            "plan",
            "--pa",
            "0.7",
            "--pb",
            "0.9",
            "--icc",
            "0.1",
            "--cases",
            "4",
            "--repeats",
            "23",
            "--sequential",
            "--spread",
            "1e308",
        ],
        "spread=",
    ),
    (["report", "{d}/r.jsonl", "--level", "1e-300"], "level="),
    (["compare", "{d}/r.jsonl", "--a", "old", "--b", "new", "--level", "1e-300"], "level="),
    (
        ["compare", "{d}/r.jsonl", "--a", "old", "--b", "new", "--sequential", "--level", "0.3"],
        "level=",
    ),
]


@pytest.mark.parametrize(
    ("argv", "named"), ABSURD, ids=[" ".join(a[:1] + a[-2:]) for a, _ in ABSURD]
)
def test_an_absurd_number_is_one_line_naming_the_argument(tmp_path, capsys, argv, named):
    hostile_run(tmp_path / "r.jsonl", ["old", "new", "x"])
    err = one_line_exit_2([a.replace("{d}", str(tmp_path)) for a in argv], capsys, tmp_path)
    assert named in err, err


def test_absurd_numbers_raise_value_errors_naming_the_argument():
    from evalstats.deciding._sequential import sequential_plan, simulate_sequential
    from evalstats.planning._power import plan, power_table
    from evalstats.stats._compare import compare_counts

    cases = [
        (lambda: compare_counts(3, 10, 7, 10, level=1e-300), "level="),
        (lambda: power_table(0.5, 0.6, [20], level=0.3), "level="),
        (lambda: plan(0.7, 0.8, icc=0.2, spread=1e308), "spread="),
        (lambda: plan(0.7, 0.8, icc=0.2, power=0.1), "power="),
        (lambda: plan(0.7, 0.8, icc=0.2, experiments=10**11), "experiments="),
        (lambda: plan(0.7, 0.8, icc=0.2, repeats=10**12), "repeats="),
        (lambda: sequential_plan(0.5, 0.6, 20, experiments=10**11), "experiments="),
        (lambda: simulate_sequential(0.5, 0.6, 10**8, experiments=10), "runs="),
        (lambda: simulate_sequential(0.5, 0.6, 19_000, experiments=50_000), "experiments="),
    ]
    for call, named in cases:
        with pytest.raises(ValueError, match=re.escape(named)):
            call()


# --- 4. mathtext and lone surrogates ----------------------------------------------------

MATH = ["$\\frac{$", "$x^$", "_hidden", "a$b$c\\", "%$\\$"]


def _with_surrogates(path: Path) -> Path:
    """``path`` rewritten so that "SURROGATE" is a JSON-escaped lone surrogate."""
    raw = path.read_text(encoding="utf-8")
    path.write_text(raw.replace("SURROGATE", "\\ud800"), encoding="utf-8")
    return path


def test_mathtext_in_names_draws_figures_and_a_page(tmp_path, capsys):
    run = hostile_run(tmp_path / "r.jsonl", MATH)
    figures, page = tmp_path / "figures", tmp_path / "page.html"
    assert main(["report", str(run), "--plots", str(figures), "--html", str(page)]) == 0
    capsys.readouterr()
    for name in ("forest.png", "paired-differences.png"):
        assert (figures / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text_of_page = page.read_text(encoding="utf-8")
    assert "$\\frac{$" in html.unescape(text_of_page)


def test_a_variant_named_with_an_underscore_stays_in_the_legend(tmp_path):
    from evalstats.presenting._plots import forest_figure
    from evalstats.presenting._report import report

    run = hostile_run(tmp_path / "r.jsonl", ["_hidden", "$x^$", "c", "_shown", "v"])
    fig = forest_figure(report(run))
    legend = fig.axes[0].get_legend()
    assert {t.get_text() for t in legend.get_texts()} == {"_shown", "v"}


def test_a_lone_surrogate_in_an_answer_makes_a_page_and_a_review(tmp_path, capsys):
    names = ["c", "d", "e", "v", "w"]
    run = _with_surrogates(hostile_run(tmp_path / "r.jsonl", names, answer="SURROGATE"))
    page = tmp_path / "page.html"
    assert main(["report", str(run), "--html", str(page)]) == 0
    capsys.readouterr()
    assert "\\ud800" in page.read_text(encoding="utf-8")
    from evalstats.presenting._review import review

    out = io.StringIO()
    reviews = tmp_path / "reviews.jsonl"
    session = review(run, reviews, input=io.StringIO("p\nfine\nq\n"), output=out)
    assert session.reviewed == 1 and "\\ud800" in out.getvalue()
    out.getvalue().encode("utf-8")


def test_a_lone_surrogate_in_a_case_id_is_reviewed_and_resumed(tmp_path):
    from evalstats.presenting._review import review

    run = _with_surrogates(hostile_run(tmp_path / "r.jsonl", ["cSURROGATE", "d", "e", "v", "w"]))
    reviews = tmp_path / "reviews.jsonl"
    review(run, reviews, input=io.StringIO("p\nfine\nq\n"), output=io.StringIO())
    [line] = reviews.read_bytes().splitlines()
    assert json.loads(line)["case"] == "c\ud800"
    again = review(run, reviews, input=io.StringIO("q\n"), output=io.StringIO())
    assert again.earlier == 1  # the review is found again: same case id


# --- 5. output files ------------------------------------------------------------------


def test_compare_plot_refuses_the_results_file_itself(tmp_path, capsys):
    run = hostile_run(tmp_path / "r.jsonl", ["old", "new", "x"])
    argv = ["compare", str(run), "--a", "old", "--b", "new", "--sequential", "--plot", str(run)]
    err = one_line_exit_2(argv, capsys, tmp_path)
    assert "already exists" in err and "--force" in err


def test_report_plots_refuses_an_existing_figure_and_replaces_it_with_force(tmp_path, capsys):
    run = hostile_run(tmp_path / "r.jsonl", ["old", "new", "x"])
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "forest.png").write_bytes(b"mine")
    err = one_line_exit_2(["report", str(run), "--plots", str(figures)], capsys, tmp_path)
    assert "forest.png already exists" in err
    assert main(["report", str(run), "--plots", str(figures), "--force"]) == 0
    capsys.readouterr()
    assert (figures / "forest.png").read_bytes()[:4] == b"\x89PNG"


def test_report_html_refuses_an_existing_page_and_replaces_it_with_force(tmp_path, capsys):
    run = hostile_run(tmp_path / "r.jsonl", ["old", "new", "x"])
    page = tmp_path / "page.html"
    page.write_text("mine")
    one_line_exit_2(["report", str(run), "--html", str(page)], capsys, tmp_path)
    assert main(["report", str(run), "--html", str(page), "--force"]) == 0
    capsys.readouterr()
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert page.stat().st_mode & 0o777 == 0o600


def test_a_planted_link_is_replaced_not_written_through(tmp_path, capsys):
    run = hostile_run(tmp_path / "r.jsonl", ["old", "new", "x"])
    figures = tmp_path / "figures"
    figures.mkdir()
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"do not overwrite")
    os.symlink(victim, figures / "forest.png")
    one_line_exit_2(["report", str(run), "--plots", str(figures)], capsys, tmp_path)
    assert main(["report", str(run), "--plots", str(figures), "--force"]) == 0
    capsys.readouterr()
    assert victim.read_bytes() == b"do not overwrite"
    assert not (figures / "forest.png").is_symlink()


def test_a_failed_drawing_leaves_no_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from evalstats.presenting._plots import report_plots

    run = hostile_run(tmp_path / "r.jsonl", ["old", "new", "x"])

    def broken(self, *args, **kwargs):
        raise ValueError("the drawing failed")

    monkeypatch.setattr(Figure, "savefig", broken)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match="the drawing failed"):
        report_plots(run, tmp_path / "figures")
    assert snapshot(tmp_path) == before


def test_a_full_disk_leaves_no_file_and_the_rerun_works(tmp_path, monkeypatch):
    target = tmp_path / "out.png"
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InvalidArgument, match="cannot write .*out.png: No space left on device"):
        write_output(target, b"png bytes")
    assert os.listdir(tmp_path) == []  # no 0-byte file, no temporary file
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert write_output(target, b"png bytes").read_bytes() == b"png bytes"


def test_a_name_taken_while_writing_is_refused_and_kept(tmp_path):
    target = tmp_path / "out.png"

    def racing(handle):
        handle.write(b"ours")
        target.write_bytes(b"theirs")  # another process takes the name meanwhile

    with pytest.raises(InvalidArgument, match="already exists"):
        write_output(target, racing)
    assert target.read_bytes() == b"theirs"
    assert os.listdir(tmp_path) == ["out.png"]


def test_power_plot_keeps_an_existing_file_unless_forced(tmp_path, capsys):
    png = tmp_path / "p.png"
    png.write_bytes(b"mine")
    argv = ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "5", "--plot", str(png)]
    one_line_exit_2(argv, capsys, tmp_path)
    assert main([*argv, "--force"]) == 0
    capsys.readouterr()
    assert png.read_bytes()[:4] == b"\x89PNG"
