"""Several variants about cases like these: the clustered tests' p-values, Holm-adjusted,
the default claim from 5 cases, and the family-wise error rate (simulations/many_variants.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import results
from strategies import write_results_file

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.deciding._several import compare_variants
from evalstats.errors import InvalidArgument
from evalstats.results._file import Results
from evalstats.stats._clustered_pvalues import clustered_paired_pvalue
from evalstats.stats._compare import adjust_pvalues


def _simulation():
    from simulation import load

    return load("many_variants")


def _results(
    outcomes: np.ndarray, variants: list[str] | None = None, *, sampled: bool = True
) -> Results:
    """A paired results file from outcomes of shape (variants, cases, runs)."""
    variants = variants or [f"v{i}" for i in range(outcomes.shape[0])]
    return results(
        {
            name: {f"c{c}": [bool(x) for x in row] for c, row in enumerate(outcomes[v])}
            for v, name in enumerate(variants)
        },
        sampled=sampled,
    )


def _flat(outcomes: np.ndarray, v: int) -> np.ndarray:
    return outcomes[v].ravel()


# --- the default claim and its p-values ------------------------------------------------------


def test_sampled_from_five_cases_the_default_is_cases_like_these_with_clustered_pvalues():
    rng = np.random.default_rng(3)
    rates = rng.beta(2, 1, (1, 12, 1))
    outcomes = rng.random((3, 12, 4)) < np.clip(rates + np.array([0, 0.3, 0])[:, None, None], 0, 1)
    res = _results(outcomes, ["old", "new", "other"])
    many = compare_variants(res, baseline="old")
    assert many.about == "cases_like_these"
    assert many.about_note == "the suite declares its cases sampled at random"
    # a suite not declared sampled: about these cases, cases like these beside
    hand_built = compare_variants(
        _results(outcomes, ["old", "new", "other"], sampled=False), baseline="old"
    )
    assert hand_built.about == "these_cases" and hand_built.beside.startswith("ranking against")
    assert "about cases like these" in hand_built.beside
    clusters = np.repeat(np.arange(12), 4)
    for pair in many.pairs:
        a, b = ["old", "new", "other"].index(pair.a), ["old", "new", "other"].index(pair.b)
        expected = clustered_paired_pvalue(_flat(outcomes, a), _flat(outcomes, b), clusters)
        assert pair.comparison.pvalue == pytest.approx(expected, rel=1e-12)
        assert pair.comparison.method == "clustered"
    raw = [p.comparison.pvalue for p in many.pairs]
    assert [p.adjusted_pvalue for p in many.pairs] == pytest.approx(adjust_pvalues(raw).tolist())
    text = str(many)
    assert "Holm-adjusted over 2 comparisons, about cases like these" in text
    assert "the clustered betting test" in text
    assert "(Holm-adjusted, about cases like these: the suite declares" in many.ranking()
    doc = json.loads(json.dumps(many.to_dict()))
    assert doc["about"] == "cases_like_these" and doc["pairs"][0]["pvalue"] == pytest.approx(raw[0])


def test_with_fewer_than_five_cases_the_claim_is_about_these_cases_and_says_why():
    rng = np.random.default_rng(4)
    outcomes = rng.random((3, 4, 6)) < 0.6
    many = compare_variants(_results(outcomes), all_pairs=True)
    assert many.about == "these_cases"
    note = "with 4 cases nothing can be said about cases like these (it takes at least 5)"
    assert many.about_note == note
    assert all(p.comparison.method == "mcnemar" for p in many.pairs)
    assert note in str(many) and note in many.ranking()
    assert "about these cases" in many.ranking()
    # asked for, the claim about cases like these is made, with the same note
    asked = compare_variants(_results(outcomes), all_pairs=True, about="cases_like_these")
    assert asked.about == "cases_like_these" and asked.about_note == note
    assert all(p.comparison.method == "clustered" for p in asked.pairs)


def test_betting_at_100_cases_too_and_the_trials_scope_on_request():
    rng = np.random.default_rng(5)
    rates = rng.beta(3, 1, (1, 110, 1))
    outcomes = rng.random((3, 110, 2)) < rates
    res = _results(outcomes)
    many = compare_variants(res, all_pairs=True, adjust="shaffer")
    assert many.about == "cases_like_these"
    # the clustered interval is the betting interval at every number of cases
    assert {p.comparison.difference.method for p in many.pairs} == {"betting"}
    assert "the clustered betting test" in str(many)
    trials = compare_variants(res, all_pairs=True, about="these_cases")
    assert trials.about == "these_cases"
    assert all(p.comparison.method == "mcnemar" for p in trials.pairs)
    for p in trials.pairs:
        assert (
            p.comparison.pvalue
            == compare_results(res, p.a, p.b, about="these_cases").primary.pvalue
        )


@st.composite
def two_variant_runs(draw):
    cases = draw(st.integers(2, 14))
    runs = draw(st.integers(1, 4))
    gain = draw(st.sampled_from([0.0, 0.3, 0.7, -0.5]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rates = rng.beta(2, 2, (cases, 1))
    a = rng.random((cases, runs)) < rates
    b = rng.random((cases, runs)) < np.clip(rates + gain, 0, 1)
    return np.stack([a, b])


@settings(max_examples=60, deadline=None)
@given(two_variant_runs(), st.sampled_from([0.9, 0.95]))
def test_one_comparison_decides_as_the_clustered_interval(outcomes, level):
    # With one comparison nothing is adjusted: the verdict from the clustered
    # p-value is the verdict of the clustered interval (whether it excludes 0).
    res = _results(outcomes)
    many = compare_variants(res, baseline="v0", about="cases_like_these", level=level)
    alone = compare_results(res, "v0", "v1", about="cases_like_these", level=level)
    (pair,) = many.pairs
    assert pair.adjusted_pvalue == pair.comparison.pvalue
    assert pair.verdict == alone.verdict


# --- bad input --------------------------------------------------------------------------------


def test_a_clustered_claim_from_one_case_is_refused():
    outcomes = np.random.default_rng(0).random((3, 1, 5)) < 0.5
    with pytest.raises(
        InvalidArgument, match="about='cases_like_these' needs pairs from at least 2 cases"
    ):
        compare_variants(_results(outcomes), all_pairs=True, about="cases_like_these")


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    def file(outcomes, name):
        res = _results(outcomes)
        path = tmp_path / name
        write_results_file(path, res.manifest, [dict(s) for s in res.samples], {"status": "ok"})
        return str(path)

    rng = np.random.default_rng(1)
    three = file(rng.random((3, 6, 3)) < 0.5, "three.jsonl")
    one_case = file(rng.random((3, 1, 3)) < 0.5, "one_case.jsonl")
    one_variant = file(rng.random((1, 6, 3)) < 0.5, "one_variant.jsonl")
    for args, pattern in [
        ([three, "--baseline", "nope"], "baseline='nope'"),
        ([one_variant, "--all-pairs"], "all_pairs: the run has 1 variant"),
        (
            [one_case, "--all-pairs", "--about", "cases-like-these"],
            "about='cases_like_these' needs pairs from",
        ),
        (
            [three, "--all-pairs", "--about", "everything"],
            "--about: 'everything': choose these-cases or cases-like-these",
        ),
    ]:
        assert main(["compare", *args]) == 2
        err = capsys.readouterr().err
        assert pattern in err and len(err.strip().splitlines()) == 1, err
    assert main(["compare", three, "--all-pairs", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["about"] == "cases_like_these" and "about cases like these" in doc["ranking"]


# --- the family-wise error rate (simulations/many_variants.py at reduced size) ----------------


def test_the_simulator_judges_as_compare_variants_does():
    sim = _simulation()
    rng = np.random.default_rng(8)
    for cases in (10, 120):
        outcomes = sim.draw(rng, 2, 4, cases, runs=3)
        for about in ("cases_like_these", "these_cases"):
            for mode in sim.MODES:
                p = sim.raw_pvalues(outcomes, sim.pairs_of(4, mode), about)
                for i in range(2):
                    kw = {"baseline": "v0"} if mode == "baseline" else {"all_pairs": True}
                    many = compare_variants(_results(outcomes[i]), about=about, **kw)
                    got = [pair.comparison.pvalue for pair in many.pairs]
                    assert got == pytest.approx(p[i].tolist(), rel=1e-9, abs=1e-300)
                    called = any(pair.verdict != "cant_tell" for pair in many.pairs)
                    assert called == bool(sim.any_called(p[i : i + 1], "holm", 4, mode)[0])


@pytest.mark.parametrize("cases", [40, 150])
def test_identical_variants_are_seldom_called_different_about_cases_like_these(cases):
    # Reduced simulations/many_variants.py (3 and 5 identical variants, icc
    # 0.3, 5 runs per case, 1,000 runs each): Holm-adjusted clustered verdicts
    # call some pair better or worse in at most 5% of runs (the full run,
    # 20,000 runs a row, measures at most 0.58%, 0.49% to 0.70%, at 150 cases,
    # and 0.0% at 10-40: the clustered test is the betting interval's at every
    # size, and conservative); allowed: 5% plus 3 binomial standard errors
    # (7.1%). Without adjustment the rate grows with the number of pairs
    # (1.3% to 5.3% at 150 cases).
    sim = _simulation()
    rng = np.random.default_rng(cases)
    n = 1000
    limit = 0.05 * n + 3 * np.sqrt(n * 0.05 * 0.95)
    for k in (3, 5):
        outcomes = sim.draw(rng, n, k, cases)
        for mode in sim.MODES:
            p = sim.raw_pvalues(outcomes, sim.pairs_of(k, mode), "cases")
            holm = int(sim.any_called(p, "holm", k, mode).sum())
            assert holm <= limit, (k, mode, holm)
            if cases == 150:
                assert int(sim.any_called(p, "none", k, mode).sum()) >= holm
