"""Rich display in notebooks: the verdict and interval the text gives, every name escaped."""

from __future__ import annotations

import html.parser

import pytest
from records import results

import evalstats
from evalstats._palette import BETTER, NEUTRAL, WORSE
from evalstats._repr import escaped, result_html
from evalstats.stats._intervals import Interval

#: Names that would run, fetch or reorder text if a page took them as markup.
HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "javascript:alert(1)",
    "a & b 'quoted' \"twice\"",
]


class _Page(html.parser.HTMLParser):
    """What a display holds: its tags with their attributes, and its text."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self.headline = ""
        self.pre = ""
        self._in: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in.append(tag)

    def handle_endtag(self, tag):
        assert self._in and self._in[-1] == tag, f"</{tag}> closes {self._in}"
        self._in.pop()

    def handle_data(self, data):
        self.text += data
        if "strong" in self._in:
            self.headline += data
        if "pre" in self._in:
            self.pre += data


def _checked(obj) -> _Page:
    """``obj``'s rich display parsed, with the guarantees every display keeps."""
    markup = obj._repr_html_()
    page = _Page(markup)
    assert {tag for tag, _ in page.tags} <= {"div", "p", "strong", "pre"}
    for _, attrs in page.tags:
        assert set(attrs) <= {"class", "style"}
    assert "<script" not in markup and "onerror=" not in markup.replace("onerror=&quot;", "")
    return page


def _pretty(obj) -> str:
    lib = pytest.importorskip("IPython.lib.pretty")
    return lib.pretty(obj)


def _hostile_outcomes():
    """A run over hostile case names in which B is clearly better."""
    a = {name: [i % 2 == 0 for i in range(10)] for name in HOSTILE}
    b = {name: [True] * 10 for name in HOSTILE}
    return a, b


# --- the helper ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*HOSTILE, "bidi \u202etxet\u202c", "line\nbreak", "nul\x00"])
def test_escaped_text_is_inert_and_reads_back_as_written(name):
    text = escaped(name)
    assert "<" not in text and ">" not in text and '"' not in text and "'" not in text
    assert "\u202e" not in text and "\x00" not in text  # controls shown, not obeyed
    page = _Page(f"<pre>{text}</pre>")
    assert page.tags == [("pre", {})]
    if name.isprintable() or "\n" in name:
        assert page.text == name


def test_a_headline_takes_the_colour_of_its_verdict():
    for verdict, colour in (("b_better", BETTER), ("a_better", WORSE), ("cant_tell", NEUTRAL)):
        page = _Page(result_html("text", headline="head", verdict=verdict))
        assert ("strong", {"style": f"color:{colour}"}) in page.tags
    page = _Page(result_html("text", headline="<b>"))
    assert ("strong", {}) in page.tags and page.headline == "<b>"


# --- each result ---------------------------------------------------------------------------


def test_a_comparison_shows_its_verdict_interval_and_escaped_case_names():
    a, b = _hostile_outcomes()
    cmp = evalstats.compare(a, b)
    page = _checked(cmp)
    assert page.headline == f"B better: {cmp.difference}"
    assert str(cmp.difference) in str(cmp)  # the interval beside the verdict in the text
    assert str(cmp) in page.text
    assert ("strong", {"style": f"color:{BETTER}"}) in page.tags
    assert _pretty(cmp) == str(cmp)


def test_a_comparison_that_cannot_tell_says_so_in_the_neutral_colour():
    cmp = evalstats.compare({"c": [True, False] * 5}, {"c": [False, True] * 5})
    page = _checked(cmp)
    assert page.headline == f"can't tell yet: {cmp.difference}"
    assert str(cmp).startswith(page.headline)
    assert ("strong", {"style": f"color:{NEUTRAL}"}) in page.tags


def test_a_results_comparison_escapes_hostile_variant_and_case_names():
    a, b = _hostile_outcomes()
    run = results({HOSTILE[0]: a, HOSTILE[1]: b})
    cmp = evalstats.compare_results(run, HOSTILE[0], HOSTILE[1])
    page = _checked(cmp)
    assert page.headline.startswith(f"B better: {cmp.primary.difference}")
    assert str(cmp) in page.text
    for name in HOSTILE:
        assert name in page.text
    assert _pretty(cmp) == str(cmp)


def test_a_report_shows_its_text_with_hostile_names_escaped():
    a, b = _hostile_outcomes()
    rep = evalstats.report(results({HOSTILE[2]: a, HOSTILE[3]: b}))
    page = _checked(rep)
    text = str(rep)
    assert page.headline == text.split("\n")[0]
    assert page.pre == text.partition("\n")[2]
    for name in HOSTILE:
        assert name in page.text
    assert _pretty(rep) == text


def test_a_sequential_comparison_shows_its_verdict_interval_and_looks():
    a, b = _hostile_outcomes()
    seq = evalstats.sequential_compare(a, b)
    page = _checked(seq)
    assert seq.verdict == "b_better"
    assert page.headline == f"B better: {seq.difference}"
    assert str(seq).startswith(page.headline)
    assert str(seq) in page.text and seq.trajectory_text() in page.text
    assert _pretty(seq) == str(seq)


def test_plans_show_their_text():
    plan = evalstats.plan(0.7, 0.9, icc=0.0, cases=4, simulate=False)
    page = _checked(plan)
    assert page.headline + "\n" + page.pre == str(plan)
    seq = evalstats.sequential_plan(0.7, 0.9, 20, cases=4, experiments=200)
    page = _checked(seq)
    assert page.headline + "\n" + page.pre == str(seq)
    assert _pretty(plan) == str(plan) and _pretty(seq) == str(seq)


@pytest.mark.parametrize(
    "interval",
    [
        Interval(0.82, 0.68, 0.91, 0.95, "wilson"),
        Interval(0.12, -0.03, 0.27, 0.9, "newcombe", difference=True),
        evalstats.proportion_ci(33, 40),
        evalstats.clustered_mean_ci([1, 0, 1, 1, 1, 1, 0, 0, 1], [0, 0, 0, 1, 1, 1, 2, 2, 2]),
    ],
)
def test_intervals_show_as_they_print_with_level_and_method(interval):
    page = _checked(interval)
    assert page.text == f"{interval}, {100 * interval.level:g}% interval, {interval.method}"
    assert _pretty(interval) == str(interval)
