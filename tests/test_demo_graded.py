"""The graded shop stand-in: its exact true mean scores, against enumeration and simulation."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.demo._shop import (
    COVER_RATES,
    GRADED_FACTS,
    classify,
    make_graded_assistant,
    required_facts,
    true_mean_score,
    true_pass_rate,
)
from evalstats.errors import InvalidArgument
from evalstats.running._checks import has_terms, run_check
from evalstats.running._graded import covers
from evalstats.running._run_cases import load_shop_cases
from evalstats.stats._intervals import proportion_ci

SHOP = [c.prompt for c in load_shop_cases()]
# Messages of every kind: the shop's four, an order without its id, and one
# the stand-in does not recognise.
MESSAGES = [*SHOP, "Where is my order?", "What are your opening hours?"]


# --- the exact truth -----------------------------------------------------------


def test_true_means_are_the_means_of_the_cover_rates() -> None:
    # By hand from COVER_RATES: order (0.9 + 0.8 + 0.3 + 0.2) / 4 = 0.55, ...
    by_hand = {
        1: [0.55, 0.55, 0.50, 0.60],
        2: [0.75, 0.75, 0.70, 0.80],
        3: [0.75, 0.75, 0.70, 0.80],
    }
    for version, means in by_hand.items():
        got = [true_mean_score(version, m) for m in SHOP]
        assert got == pytest.approx(means, abs=1e-12), version
    for message in MESSAGES:  # version 3 matches version 2 message by message
        assert true_mean_score(3, message) == true_mean_score(2, message)
        assert true_mean_score(2, message) > true_mean_score(1, message)
    # every fact stated: the product of the rates, (0.9)(0.7) for version 2's thanks
    assert true_pass_rate(2, SHOP[3]) == pytest.approx(0.63, abs=1e-12)
    assert set(COVER_RATES[1]) == set(GRADED_FACTS)
    for rates in COVER_RATES.values():
        for kind, facts in GRADED_FACTS.items():
            assert len(rates[kind]) == len(facts)


@pytest.mark.parametrize("message", MESSAGES)
def test_every_pattern_of_stated_facts_scores_its_share(message: str) -> None:
    # Exact enumeration: whichever facts a reply states, its covers score is
    # their share, and each fact's term is found exactly when it is stated (no
    # term hides in the greeting or in another fact's sentence). So the score's
    # expectation is the mean of the cover rates: true_mean_score is exact.
    terms = [term for term, _ in required_facts(message)]
    check = covers(*terms)
    assistant = make_graded_assistant(1)
    for pattern in itertools.product([False, True], repeat=len(terms)):
        reply = assistant(message, covered=list(pattern))
        assert check(reply).score == sum(pattern) / len(terms), (pattern, reply)
        found = [run_check(has_terms(term), reply).is_passed for term in terms]
        assert found == list(pattern), reply
        assert check(reply).status == ("passed" if all(pattern) else "failed")


def test_a_large_simulation_of_the_stand_in_matches_the_exact_means() -> None:
    # Each version answers each shop message 4,000 times, each with a fresh
    # assistant as the engine's task makes one per sample; the mean covers score
    # must lie within its Monte Carlo interval (mean +- 3.89 standard errors,
    # 99.99% two-sided, 12 cells) of the exact true mean, and the pass rate (all
    # facts stated) within the 99.99% Wilson interval of the exact product.
    n = 4000
    for version in COVER_RATES:
        for message in SHOP:
            check = covers(*(t for t, _ in required_facts(message)))
            scores = [
                check(make_graded_assistant(version, seed)(message)).score for seed in range(n)
            ]
            mean = math.fsum(scores) / n
            sd = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (n - 1))
            truth = true_mean_score(version, message)
            assert abs(mean - truth) <= 3.89 * sd / math.sqrt(n), (version, message, mean)
            passed = sum(s == 1.0 for s in scores)
            wilson = proportion_ci(passed, n, level=0.9999)
            assert wilson.low <= true_pass_rate(version, message) <= wilson.high


_IDS = st.from_regex(r"[A-Z]-[0-9]{3,5}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40),
    order_id=st.one_of(st.none(), _IDS),
    word=st.sampled_from(["", "refund", "discount", "thanks", "order", "where is"]),
    version=st.sampled_from(sorted(COVER_RATES)),
    seed=st.integers(0, 2**32),
)
def test_any_reply_scores_the_share_of_the_facts_it_states(
    text: str, order_id: str | None, word: str, version: int, seed: int
) -> None:
    message = " ".join(x for x in (word, text, order_id) if x)
    facts = required_facts(message)
    assistant = make_graded_assistant(version, seed)
    reply = assistant(message)
    assert assistant.last_kind == classify(message)
    stated = assistant.last_covered
    assert stated is not None and len(stated) == len(facts)
    score = covers(*(t for t, _ in facts))(reply).score
    assert score == sum(stated) / len(facts)
    assert make_graded_assistant(version, seed)(message) == reply  # deterministic


def test_bad_versions_and_overrides_name_the_argument() -> None:
    with pytest.raises(InvalidArgument, match=r"^version=4 .*choose 1, 2, 3"):
        make_graded_assistant(4)
    with pytest.raises(InvalidArgument, match=r"^version=True"):
        true_mean_score(True, "hi")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"^covered=\[True\] must be 4"):
        make_graded_assistant(1)(SHOP[0], covered=[True])
