"""Tests of the built-in checks, run_check and check specs."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import json_keys, whitespace_runs, word_chars_text

from evalstats.errors import InvalidArgument
from evalstats.running._checks import (
    CHECK_ERROR,
    INSPECTION_FAILURE,
    Verdict,
    avoids,
    check_from_spec,
    check_name,
    contains,
    contains_any,
    has_terms,
    is_json_with,
    links_within,
    matches,
    run_check,
    word_count,
)

EMPTY_ANSWERS = [None, "", " ", "\n\t ", "\u3000\u00a0"]

ALL_CHECKS = [
    contains("A-1042"),
    contains("A-1042", case_sensitive=True),
    contains_any("sorry", "apologise"),
    contains_any("sorry", case_sensitive=True),
    avoids("SAVE100", "discount code:"),
    word_count(3, 25),
    word_count(0, 0),
    matches(r"\bA-\d{4}\b"),
    matches("^hi", flags=re.IGNORECASE | re.MULTILINE),
    is_json_with("a", "b.c"),
    has_terms("Go", "C++", "Paper Kite"),
    has_terms("Straße", "ß", "İ"),
    links_within("example.com", "docs.python.org"),
]


# --- nothing to inspect ----------------------------------------------------


@pytest.mark.parametrize("check", ALL_CHECKS, ids=check_name)
@pytest.mark.parametrize("answer", EMPTY_ANSWERS, ids=repr)
def test_nothing_to_inspect_fails_every_check(check, answer) -> None:
    problem = check(answer)
    assert isinstance(problem, str)
    assert problem.startswith(INSPECTION_FAILURE)
    assert run_check(check, answer).not_inspected


def test_empty_answer_reasons() -> None:
    assert contains("x")("") == "could not be inspected: the answer is empty"
    assert contains("x")(None) == "could not be inspected: there is no answer"
    assert contains("x")("  ") == "could not be inspected: the answer is only whitespace"
    assert contains("x")(b"x") == "could not be inspected: the answer is bytes, not text"


def test_avoids_fails_an_empty_answer_although_it_contains_no_phrase() -> None:
    # Documented choice: an empty answer has shown nothing, so it cannot pass a screen.
    assert avoids("SAVE100")("").startswith(INSPECTION_FAILURE)
    assert avoids("SAVE100")("No code for you.") is None


@pytest.mark.parametrize("check", ALL_CHECKS, ids=check_name)
@given(answer=st.text())
def test_no_check_raises_on_any_string(check, answer) -> None:
    result = check(answer)
    assert result is None or isinstance(result, str)
    if result is not None:
        assert result  # a failure always says why


# --- names -----------------------------------------------------------------


def test_names_are_readable() -> None:
    assert contains("A-1042").name == "contains('A-1042')"
    assert contains("A-1042").__name__ == "contains('A-1042')"
    assert contains("A", case_sensitive=True).name == "contains('A', case_sensitive=True)"
    assert contains_any("a", "b").name == "contains_any('a', 'b')"
    assert avoids("SAVE100").name == "avoids('SAVE100')"
    assert word_count(3, 25).name == "word_count(3, 25)"
    assert matches("x+").name == "matches('x+')"
    assert matches("x", flags=re.I).name == "matches('x', flags=re.IGNORECASE)"
    assert is_json_with("a.b").name == "is_json_with('a.b')"
    assert has_terms("Go", "C++").name == "has_terms('Go', 'C++')"
    assert repr(word_count(1, 2)) == "word_count(1, 2)"


def test_check_name_of_plain_functions() -> None:
    def polite(answer: str) -> str | None:
        return None

    assert check_name(polite) == "polite"
    assert check_name(contains("x")) == "contains('x')"
    assert check_name(lambda a: None).startswith("<function")


# --- contains / contains_any -----------------------------------------------


def test_contains() -> None:
    assert contains("A-1042")("Your order A-1042 has shipped.") is None
    assert contains("A-1042")("your order a-1042") is None
    assert contains("A-1042")("Your order has shipped.") == "doesn't mention 'A-1042'"
    assert contains("A-1042", case_sensitive=True)("a-1042") == "doesn't mention 'A-1042'"
    # Unicode case folding, not just lower(): ß folds to ss.
    assert contains("strasse")("Hauptstraße 5") is None
    assert contains("Straße")("HAUPTSTRASSE") is None


def test_contains_any() -> None:
    check = contains_any("sorry", "apologise")
    assert check("We APOLOGISE.") is None
    assert check("Too bad.") == "mentions none of 'sorry', 'apologise'"
    assert contains_any("Sorry", case_sensitive=True)("sorry") == "mentions none of 'Sorry'"


@given(text=st.text(min_size=1), prefix=st.text(), suffix=st.text(), pick=st.integers(0, 3))
def test_contains_is_case_insensitive(text, prefix, suffix, pick) -> None:
    # Property: contains(t) finds any variant of t whose case folding equals t's,
    # wherever it is embedded. upper() may change length ('ß' -> 'SS') or fold to
    # something else ('ı'.upper() == 'I', which folds to 'i'), hence the assume.
    assume(text.strip())
    variant = [text, text.upper(), text.lower(), text.casefold()][pick]
    assume(variant.casefold() == text.casefold())
    answer = prefix + variant + suffix
    assume(answer.strip())
    assert contains(text)(answer) is None
    assert contains_any("\x00never\x00", text)(answer) is None


@given(text=st.text(min_size=1), answer=st.text(min_size=1))
def test_contains_agrees_on_case_folded_answers(text, answer) -> None:
    # Whatever the answer, folding its case does not change the outcome.
    assume(text.strip() and answer.strip())
    assert (contains(text)(answer) is None) == (contains(text)(answer.casefold()) is None)
    assert (contains(text)(answer) is None) == (text.casefold() in answer.casefold())


@given(text=st.text(min_size=1), answer=st.text(min_size=1))
def test_contains_case_sensitive_is_plain_substring(text, answer) -> None:
    assume(text.strip() and answer.strip())
    assert (contains(text, case_sensitive=True)(answer) is None) == (text in answer)


# --- avoids ----------------------------------------------------------------


def test_avoids_reports_first_phrase_in_the_answer() -> None:
    check = avoids("SAVE100", "has been issued")
    assert check("Your refund has been issued; use SAVE100.") == "says 'has been issued'"
    assert check("Use save100: your refund has been issued.") == "says 'SAVE100'"
    assert check("We will review it.") is None


def test_avoids_ties_report_the_longest_phrase() -> None:
    assert avoids("discount", "discount code:")("Discount code: SAVE100") == "says 'discount code:'"


@given(
    phrases=st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=4),
    answer=st.text(min_size=1),
)
def test_avoids_reports_the_phrase_found_first(phrases, answer) -> None:
    assume(all(p.strip() for p in phrases) and answer.strip())
    folded = answer.casefold()
    hits = [(folded.find(p.casefold()), p) for p in phrases if p.casefold() in folded]
    result = avoids(*phrases)(answer)
    if not hits:
        assert result is None
        return
    first = min(at for at, _ in hits)
    at_first = [p for at, p in hits if at == first]
    assert result in {f"says {p!r}" for p in at_first}
    longest = max(len(p.casefold()) for p in at_first)
    expected = next(p for p in at_first if len(p.casefold()) == longest)
    assert result == f"says {expected!r}"


@given(phrase=st.text(min_size=1, max_size=8), prefix=st.text(), suffix=st.text())
def test_avoids_catches_any_case_variant(phrase, prefix, suffix) -> None:
    assume(phrase.strip())
    variant = phrase.upper()
    assume(variant.casefold() == phrase.casefold())
    assert avoids(phrase)(prefix + variant + suffix) == f"says {phrase!r}"


# --- word_count --------------------------------------------------------------


def test_word_count() -> None:
    check = word_count(3, 5)
    assert check("one two three") is None
    assert check("one two") == "has 2 words, fewer than 3"
    assert check("Thanks!") == "has 1 word, fewer than 3"
    assert check("a b c d e f") == "has 6 words, more than 5"
    # Any Unicode whitespace separates words: no-break space, ideographic space.
    assert check("one\u00a0two\u3000three\u2003four") is None
    assert word_count(1, 1)("A-1042.") is None


@given(
    words=st.lists(word_chars_text(), min_size=1, max_size=40),
    gaps=st.data(),
    low=st.integers(0, 50),
    span=st.integers(0, 50),
)
def test_word_count_with_any_whitespace(words, gaps, low, span) -> None:
    seps = [gaps.draw(whitespace_runs()) for _ in range(len(words) + 1)]
    answer = seps[0] + "".join(w + s for w, s in zip(words, seps[1:], strict=True))
    high = low + span
    result = word_count(low, high)(answer)
    n = len(words)
    if low <= n <= high:
        assert result is None
    else:
        assert result is not None and result.startswith(f"has {n} word")


# --- matches -------------------------------------------------------------------


def test_matches() -> None:
    assert matches(r"\bA-\d{4}\b")("Order A-1042 shipped") is None
    assert matches(r"\bA-\d{4}\b")("Order A-10423") == r"doesn't match '\\bA-\\d{4}\\b'"
    assert matches("^hello", flags=re.IGNORECASE)("HELLO there") is None
    assert matches("^hello")("HELLO there") is not None
    assert matches("^two$", flags=re.MULTILINE)("one\ntwo\nthree") is None
    assert matches(re.compile("x+", re.I))("XX") is None


@given(word=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1), answer=st.text())
def test_matches_with_ignorecase_flag(word, answer) -> None:
    answer = answer + word.upper()
    assert matches(re.escape(word), flags=re.IGNORECASE)(answer) is None
    if answer.strip():
        expected = re.search(re.escape(word), answer) is not None
        assert (matches(re.escape(word))(answer) is None) == expected


@given(lines=st.lists(st.text(alphabet="ab \t", min_size=1), min_size=1, max_size=5))
def test_matches_with_multiline_flag(lines) -> None:
    answer = "\n".join(lines) + "\nend"
    assert matches("^end$", flags=re.MULTILINE)(answer) is None
    assert (matches("^end$")(answer) is None) == (answer == "end")


# --- is_json_with ------------------------------------------------------------------


def test_is_json_with() -> None:
    check = is_json_with("order.id", "status")
    assert check('{"order": {"id": "A-1042"}, "status": "shipped"}') is None
    assert check(' \n{"order": {"id": null}, "status": 1}\n') is None
    assert check('{"order": {"id": 1}}') == "JSON object lacks 'status'"
    assert check('{"order": "A-1042"}') == "JSON object lacks 'order.id', 'status'"
    assert check("[1, 2]") == "could not be inspected: the JSON is an array, not an object"
    assert check('"x"') == "could not be inspected: the JSON is a string, not an object"
    assert check("null") == "could not be inspected: the JSON is null, not an object"
    assert check("3") == "could not be inspected: the JSON is a number, not an object"
    assert check("true") == "could not be inspected: the JSON is a boolean, not an object"
    assert check("Here it is: {}").startswith("could not be inspected: not valid JSON (")
    assert check("[" * 100_000).startswith("could not be inspected: not valid JSON")
    assert is_json_with(" ", "a. ")('{" ": 1, "a": {" ": 2}}') is None  # blank keys are keys


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(value=json_values)
def test_is_json_with_non_object_json_is_not_inspected(value) -> None:
    assume(not isinstance(value, dict))
    assert is_json_with("a")(json.dumps(value)).startswith(f"{INSPECTION_FAILURE}: the JSON is ")


@given(answer=st.text())
def test_is_json_with_invalid_json_is_not_inspected(answer) -> None:
    try:
        json.loads(answer)
    except ValueError:
        result = is_json_with("a")(answer)
        assert result is not None and result.startswith(INSPECTION_FAILURE)


@given(path=st.lists(json_keys(), min_size=1, max_size=4), leaf=json_values, other=json_keys())
def test_is_json_with_nested_keys(path, leaf, other) -> None:
    key = ".".join(path)
    document: object = leaf
    for part in reversed(path):
        document = {part: document}
    assert is_json_with(key)(json.dumps(document)) is None
    # Removing the innermost key makes it missing, not uninspectable.
    inner: object = {}
    for part in reversed(path[:-1]):
        inner = {part: inner}
    assert is_json_with(key)(json.dumps(inner)) == f"JSON object lacks {key!r}"
    assume(other != path[0])
    assert is_json_with(key)(json.dumps({other: document})) == f"JSON object lacks {key!r}"


# --- has_terms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "answer"),
    [
        ("Go", "We rewrote it in GO."),
        ("Go", "go"),
        ("Paper Kite", "Ask paper   kite about it"),
        ("Paper Kite", "Paper\nKite"),
        ("C++", "I like C++."),
        ("C++", "(C++)"),
        ("Node.js", "Built on Node.js, mostly."),
        ("A-1042", "Order A-1042 shipped."),
        ("A-1042", "order a-1042"),
        ("Straße", "die STRASSE hier"),
        ("über", "Über uns"),
        ("日本", "日本 は"),
        ("Ελλάδα", "Η ΕΛΛΆΔΑ είναι"),
        ("naïve", "a NAÏVE view"),
    ],
)
def test_has_terms_passes(term, answer) -> None:
    assert has_terms(term)(answer) is None


@pytest.mark.parametrize(
    ("term", "answer"),
    [
        ("Go", "an ongoing project"),
        ("Go", "Gopher"),
        ("Go", "go_lang"),
        ("Go", "Go2"),
        ("Paper Kite", "PaperKite"),
        ("Paper Kite", "paper kites"),
        ("C++", "C++y"),
        ("C++", "ObjC++"),
        ("Node.js", "Node.jsx"),
        ("A-1042", "A-10423"),
        ("A-1042", "XA-1042"),
        ("Straße", "Straßenbahn"),
        ("cafe", "cafe\u0301"),  # decomposed é: the accent belongs to the word
        ("über", "überall"),
    ],
)
def test_has_terms_fails(term, answer) -> None:
    assert has_terms(term)(answer) == f"doesn't mention the term {term!r}"


def test_has_terms_lists_every_missing_term() -> None:
    check = has_terms("Go", "Rust", "C++")
    assert check("Go and C++") == "doesn't mention the term 'Rust'"
    assert check("Python") == "doesn't mention the terms 'Go', 'Rust', 'C++'"


def test_negation_limitation_is_preserved() -> None:
    # A lexical screen is not a semantic judge: it sees the term, not the "not".
    # This is kept on purpose; the docstring says so.
    assert has_terms("Go")("The project does not use Go.") is None
    assert "not a semantic judge" in (has_terms.__doc__ or "")


def test_has_terms_needs_a_boundary_in_scripts_written_without_spaces() -> None:
    # Every CJK ideograph is a Unicode word character, so inside a run of
    # unspaced Japanese there is no word boundary: the documented limit, for
    # which contains() is the screen to use.
    assert has_terms("東京")("私は東京で働いています") == "doesn't mention the term '東京'"
    assert has_terms("東京")("私は 東京 で働いています") is None
    assert contains("東京")("私は東京で働いています") is None
    assert "contains" in (has_terms.__doc__ or "") and "without spaces" in (has_terms.__doc__ or "")


def test_has_terms_with_a_later_whole_occurrence() -> None:
    # The first occurrence is inside a word; a later one is whole.
    assert has_terms("Go")("Gopher, then Go.") is None
    assert has_terms("aa")("aaa aa") is None


# Punctuation, symbols, spaces and controls, less the connector punctuation
# ('_', '‿', ...) that regex \w counts as word characters.
non_word = st.characters(categories=["Zs", "P", "S", "Cc"]).filter(lambda c: not re.match(r"\w", c))


@given(
    term=st.text(min_size=1, max_size=12),
    left=st.text(non_word, max_size=3),
    right=st.text(non_word, max_size=3),
    pick=st.integers(0, 2),
)
def test_has_terms_between_non_word_characters_always_passes(term, left, right, pick) -> None:
    assume(term.strip())
    variant = [term, term.upper(), term.casefold()][pick]
    assume(variant.casefold() == term.casefold())
    assert has_terms(term)(left + variant + right) is None


@given(term=st.text(min_size=1, max_size=12), left=word_chars_text(), right=word_chars_text())
def test_has_terms_inside_word_characters_never_passes(term, left, right) -> None:
    # A term is looked for stripped: "0 " inside "00 0" is "0", found at the end.
    assume(term.strip() and term == term.strip())
    answer = left + term + right
    assert has_terms(term)(answer) == f"doesn't mention the term {term!r}"


# --- run_check ----------------------------------------------------------------------


def test_run_check_wraps_results() -> None:
    assert run_check(lambda a: None, "x") == Verdict.passed()
    assert run_check(lambda a: "too short", "x") == Verdict.failed("too short")
    assert run_check(lambda a: Verdict.unscored("n/a"), "x") == Verdict.unscored("n/a")


def test_run_check_turns_an_exception_into_a_failure() -> None:
    def broken(answer: str) -> str | None:
        raise KeyError("id")

    verdict = run_check(broken, "x")
    assert verdict.is_failed
    assert verdict.reason == f"{CHECK_ERROR}: broken: KeyError: 'id'"
    assert not verdict.not_inspected


def test_run_check_rejects_a_bad_return_value() -> None:
    def counts(answer: str) -> int:
        return 3

    verdict = run_check(counts, "x")
    assert verdict.is_failed
    assert verdict.reason == f"{CHECK_ERROR}: counts returned int, not None, a str or a Verdict"


def test_run_check_lets_keyboard_interrupt_through() -> None:
    def interrupted(answer: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_check(interrupted, "x")


# --- bad arguments at construction ---------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: contains(""), "contains(): text='' must not be empty"),
        (lambda: contains(42), "contains(): text=42 must be a string, not int"),
        (lambda: contains("x", case_sensitive="yes"), "case_sensitive='yes' must be True"),
        (lambda: contains_any(), "contains_any() needs at least one text; got none"),
        (lambda: avoids(), "avoids() needs at least one phrase; got none"),
        (lambda: avoids("ok", None), "avoids(): phrases[1]=None must be a string"),
        (lambda: has_terms(), "has_terms() needs at least one term; got none"),
        (lambda: has_terms("  "), "has_terms(): terms[0]='  ' must not be empty"),
        (lambda: has_terms(["Go"]), "has_terms(): terms[0]=['Go'] must be a string, not list"),
        (lambda: word_count(5, 3), "word_count(): low=5 is larger than high=3"),
        (lambda: word_count(-1, 3), "word_count(): low=-1 is negative"),
        (lambda: word_count(1.5, 3), "word_count(): low=1.5 must be a whole number"),
        (lambda: word_count(True, 3), "word_count(): low=True must be a whole number"),
        (lambda: matches("("), "matches(): pattern='(' is not a valid regular expression"),
        (lambda: matches(""), "matches(): pattern='' must not be empty"),
        (lambda: matches(3), "matches(): pattern=3 must be a string, not int"),
        (lambda: matches("x", flags="i"), "matches(): flags='i' must be re flags"),
        (lambda: matches(re.compile("x"), flags=re.I), "cannot be added to a compiled pattern"),
        (lambda: is_json_with(), "is_json_with() needs at least one key; got none"),
        (lambda: is_json_with("a..b"), "is_json_with(): keys[0]='a..b' has an empty part"),
        (lambda: links_within(), "links_within() needs at least one domain; got none"),
        (lambda: links_within(7), "links_within(): domains[0]=7 must be a string, not int"),
        (lambda: links_within("https://example.com"), "domains[0]='https://example.com' must"),
        (lambda: links_within("example.com/x"), "without a scheme, a path or a port"),
        (lambda: links_within("ok.org", "a b"), "domains[1]='a b' must be a domain name"),
    ],
)
def test_bad_arguments_raise_at_construction(build, message) -> None:
    with pytest.raises(InvalidArgument) as info:
        build()
    assert message in str(info.value)


# --- specs ----------------------------------------------------------------------------


def test_check_from_spec() -> None:
    assert check_from_spec({"contains": "A-1042"}).name == "contains('A-1042')"
    assert check_from_spec({"word_count": [3, 25]}).name == "word_count(3, 25)"
    assert check_from_spec({"avoids": ["a", "b"], "axis": "safety"}).name == "avoids('a', 'b')"
    spec = {"contains": {"text": "A", "case_sensitive": True}}
    assert check_from_spec(spec).name == "contains('A', case_sensitive=True)"
    assert check_from_spec({"matches": {"pattern": "x", "flags": 2}})("X") is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"contain": "A"}, "unknown check 'contain' (did you mean 'contains'?); choose one of"),
        ({"word_cont": [1, 2]}, "(did you mean 'word_count'?)"),
        ({}, "names no check"),
        ({"axis": "x"}, "names no check"),
        ({"contains": "a", "avoids": "b"}, "names several checks (contains, avoids)"),
        (["contains", "a"], "a check spec must be a mapping"),
        ({"word_count": [1]}, "check 'word_count' cannot take [1]"),
        ({"contains": {"txt": "a"}}, "check 'contains' cannot take {'txt': 'a'}"),
        ({"word_count": [5, 1]}, "low=5 is larger than high=1"),
        ({"contains": 5}, "must be a string, not int"),
    ],
)
def test_check_from_spec_errors(spec, message) -> None:
    with pytest.raises(InvalidArgument) as info:
        check_from_spec(spec)
    assert message in str(info.value)


def reference_has_term(term: str, answer: str) -> bool:
    """Brute force over every substring: is ``term`` there as a whole term?

    Independent of the implementation's search: tries every (start, end) pair of
    the original answer, compares case-folded text against the term's words
    separated by whitespace runs, and judges boundaries on the original
    characters (word characters: Unicode \\w and combining marks).
    """
    import unicodedata

    def is_word(ch: str) -> bool:
        return bool(re.match(r"\w", ch)) or unicodedata.category(ch).startswith("M")

    whole = re.compile(r"\s+".join(re.escape(w) for w in term.casefold().split()))
    n = len(answer)
    for i in range(n):
        if i > 0 and is_word(answer[i - 1]):
            continue
        for j in range(i + 1, n + 1):
            if j < n and is_word(answer[j]):
                continue
            if whole.fullmatch(answer[i:j].casefold()):
                return True
    return False


tricky = st.sampled_from(list("aAsSßẞiIİı -_.+\u0301\u0345\u00a0ΣσςﬁFlǅ"))


@given(
    term=st.text(tricky, min_size=1, max_size=4), answer=st.text(tricky, min_size=1, max_size=12)
)
def test_has_terms_agrees_with_brute_force(term, answer) -> None:
    assume(term.strip() and answer.strip())
    assert (has_terms(term)(answer) is None) == reference_has_term(term, answer)


@given(term=st.text(min_size=1, max_size=6), answer=st.text(min_size=1, max_size=30))
def test_has_terms_agrees_with_brute_force_on_any_text(term, answer) -> None:
    assume(term.strip() and answer.strip())
    assert (has_terms(term)(answer) is None) == reference_has_term(term, answer)


@given(term=st.text(tricky, min_size=1, max_size=4), answer=st.text(tricky, min_size=1))
def test_has_terms_ignores_case(term, answer) -> None:
    # Folding the answer's case never changes the outcome; nor does upper() or
    # lower() when they fold to the same text (they may not: 'ı'.upper() is 'I').
    assume(term.strip() and answer.strip())
    outcome = has_terms(term)(answer) is None
    assert (has_terms(term)(answer.casefold()) is None) == outcome
    assert (has_terms(term.upper())(answer) is None) == outcome or (
        term.upper().casefold() != term.casefold()
    )
    for variant in (answer.upper(), answer.lower()):
        if variant.casefold() == answer.casefold():
            assert (has_terms(term)(variant) is None) == outcome


@pytest.mark.parametrize("check", ALL_CHECKS, ids=check_name)
@pytest.mark.parametrize("answer", ["\ud800", "a\udfff b", "\x00", '{"a": 1e999}', "9" * 5000])
def test_no_check_raises_on_odd_strings(check, answer) -> None:
    result = check(answer)
    assert result is None or isinstance(result, str)


def test_run_check_lets_provider_errors_through() -> None:
    # A judge whose service failed has not judged: the runner decides what that
    # sample is (unmeasured after retries), so run_check must not turn it into
    # a failed verdict the way it does for a check's own bug.
    from evalstats.errors import ProviderError, TransientProviderError

    def flaky_judge_check(answer: str) -> None:
        raise TransientProviderError("429 from the judge", retry_after=1.0)

    def refused_judge_check(answer: str) -> None:
        raise ProviderError("401 from the judge")

    with pytest.raises(TransientProviderError):
        run_check(flaky_judge_check, "an answer")
    with pytest.raises(ProviderError):
        run_check(refused_judge_check, "an answer")


# --- links_within ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("See https://example.com.", None),
        ("Docs: http://DOCS.Example.com:8080/a?b=1, then https://example.com/x", None),
        ("[refunds](https://help.example.com/refunds)", None),
        (
            "https://example.com.evil.net/x",
            "links outside example.com: https://example.com.evil.net/x",
        ),
        ("https://notexample.com", "links outside example.com: https://notexample.com"),
        (
            "https://example.com/a and https://evil.org",
            "links outside example.com: https://evil.org",
        ),
        (
            "https://user@example.com@evil.org/",
            "links outside example.com: https://user@example.com@evil.org/",
        ),
        ("http://[::1", "links outside example.com: http://[::1"),
        ("Write to help at example.com", "could not be inspected: the answer has no links"),
        ("ftp://example.com/file", "could not be inspected: the answer has no links"),
    ],
)
def test_links_within(answer, problem) -> None:
    assert links_within("example.com")(answer) == problem


def test_no_links_at_all_is_nothing_to_inspect() -> None:
    verdict = run_check(links_within("example.com"), "Our team will reply within 2 days.")
    assert verdict.is_failed and verdict.not_inspected
    assert check_from_spec({"links_within": ["example.com"]}).name == "links_within('example.com')"


_bases = st.sampled_from(
    ["example.com", "EXAMPLE.com", "notexample.com", "example.com.evil.net", "evil.org"]
)
_subs = st.sampled_from(["", "docs.", "a.b."])
_tails = st.sampled_from(["", "/", "/x?y=1", ":8080/z", "/a.", "/b,"])
_fillers = st.text(st.characters(exclude_characters=":/"), max_size=12)


@given(
    links=st.lists(st.tuples(_subs, _bases, _tails), min_size=1, max_size=4),
    fillers=st.lists(_fillers, min_size=5, max_size=5),
)
def test_links_within_passes_exactly_when_every_host_is_within(links, fillers) -> None:
    parts = [fillers[0]]
    for i, (sub, base, tail) in enumerate(links):
        parts += [f"https://{sub}{base}{tail}", fillers[i + 1]]
    answer = " ".join(parts)
    within = all(base.lower() == "example.com" for _, base, _ in links)
    assert (links_within("example.com")(answer) is None) == within


# --- regular expressions within a time limit ---------------------------------------


def test_a_catastrophic_regex_gives_its_verdict_at_once() -> None:
    # took 36 s with re under --timeout 5; the regex engine answers without backtracking
    check = matches("^(a+)+$")
    assert run_check(check, "a" * 29 + "b").reason == "doesn't match '^(a+)+$'"
    assert run_check(check, "a" * 29).status == "passed"


def test_a_regex_that_runs_past_its_time_limit_fails_naming_the_check(monkeypatch) -> None:
    import evalstats.running._checks as checks_module

    monkeypatch.setattr(checks_module, "REGEX_TIMEOUT_S", 0.05)
    verdict = run_check(matches("^(?:a|a)+$"), "a" * 40 + "b")
    assert verdict.status == "failed"
    assert verdict.reason.startswith("the check itself raised: matches('^(?:a|a)+$'): TimeoutError")
    assert "ran longer than 0.05 s on an answer of 41 characters" in verdict.reason


@pytest.mark.parametrize(
    ("pattern", "answer"),
    [(r"\w+$", "café"), (r"^\d$", "\u0663"), (r"\bnaïve\b", "a naïve plan"), (r"(?i)ÉTÉ", "été")],
)
def test_the_regex_engine_finds_what_re_finds(pattern: str, answer: str) -> None:
    assert re.search(pattern, answer) is not None
    assert run_check(matches(pattern), answer).status == "passed"
