"""More than two variants: comparisons with a baseline or of all pairs, adjusted."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from records import results

from evalstats.cli import main
from evalstats.deciding._several import compare_variants, shaffer_limits
from evalstats.errors import InvalidArgument
from evalstats.results._file import Results
from evalstats.stats._compare import adjust_pvalues


def _draw(rng, rates: dict[str, float], cases: int, runs: int) -> Results:
    return results(
        {v: {f"c{i}": list(rng.random(runs) < p) for i in range(cases)} for v, p in rates.items()},
        runs,
    )


# --- Shaffer's multipliers ------------------------------------------------------------


def _true_counts_by_labelling(k: int) -> set[int]:
    # Every way of giving k variants equal or different means: label each with
    # one of k values; the true equalities are the pairs with the same label.
    out = set()
    for labels in itertools.product(range(k), repeat=k):
        out.add(sum(labels[i] == labels[j] for i in range(k) for j in range(i + 1, k)))
    return out


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_shaffer_limits_match_enumeration_of_possible_equalities(k):
    m = k * (k - 1) // 2
    possible = _true_counts_by_labelling(k)
    expected = [max(t for t in possible if t <= m - j) for j in range(m)]
    assert shaffer_limits(k) == expected


def test_shaffer_limits_for_four_variants_are_the_published_ones():
    # Shaffer (1986), S1 for four groups; Garcia & Herrera (2008), JMLR 9,
    # 2677-2694, section 2.2: 6, 3, 3, 3, 2, 1.
    assert shaffer_limits(4) == [6, 3, 3, 3, 2, 1]
    assert shaffer_limits(3) == [3, 1, 1]


# --- comparisons -------------------------------------------------------------------------


def test_baseline_comparisons_are_holm_adjusted_and_the_table_says_so():
    rng = np.random.default_rng(1)
    res = _draw(rng, {"old": 0.6, "new": 0.95, "other": 0.6}, cases=20, runs=5)
    many = compare_variants(res, baseline="old")
    assert [(p.a, p.b) for p in many.pairs] == [("old", "new"), ("old", "other")]
    raw = [p.comparison.pvalue for p in many.pairs]
    assert [p.adjusted_pvalue for p in many.pairs] == pytest.approx(adjust_pvalues(raw).tolist())
    verdicts = {p.b: p.verdict for p in many.pairs}
    assert verdicts["new"] == "b_better" and verdicts["other"] == "cant_tell"
    text = str(many)
    assert "Holm-adjusted over 2 comparisons" in text
    assert "ranking against old" in text and "new 9" in text and "better" in text
    assert json.loads(json.dumps(many.to_dict()))["adjust"] == "holm"
    # Shaffer with a baseline is Holm: any combination of those can be true
    same = compare_variants(res, baseline="old", adjust="shaffer")
    assert [p.adjusted_pvalue for p in same.pairs] == [p.adjusted_pvalue for p in many.pairs]


def test_all_pairs_shaffer_is_between_holm_and_unadjusted():
    rng = np.random.default_rng(2)
    res = _draw(rng, {"a": 0.5, "b": 0.7, "c": 0.9, "d": 0.7}, cases=20, runs=5)
    holm = compare_variants(res, all_pairs=True)
    shaffer = compare_variants(res, all_pairs=True, adjust="shaffer")
    none = compare_variants(res, all_pairs=True, adjust="none")
    assert len(holm.pairs) == 6
    for h, s, n in zip(holm.pairs, shaffer.pairs, none.pairs, strict=True):
        assert n.adjusted_pvalue <= s.adjusted_pvalue + 1e-15 <= h.adjusted_pvalue + 2e-15
        assert n.adjusted_pvalue == n.comparison.pvalue
    # Shaffer by hand: sorted p times (6, 3, 3, 3, 2, 1), made non-decreasing
    raw = np.array([p.comparison.pvalue for p in none.pairs])
    order = np.argsort(raw, kind="stable")
    by_hand = np.minimum(np.maximum.accumulate(raw[order] * [6, 3, 3, 3, 2, 1]), 1.0)
    got = np.array([p.adjusted_pvalue for p in shaffer.pairs])[order]
    assert got == pytest.approx(by_hand)
    line = holm.ranking()
    assert line.startswith("ranking (Holm-adjusted") and line.index("c 9") < line.index("a ")


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"baseline": "nope"}, "baseline='nope'"),
        ({}, "give a baseline or all_pairs=True"),
        ({"baseline": "a", "all_pairs": True}, "one of them"),
        ({"all_pairs": True, "adjust": "hochberg"}, "adjust='hochberg'"),
    ],
)
def test_bad_input_names_the_argument(kwargs, pattern):
    res = _draw(np.random.default_rng(0), {"a": 0.5, "b": 0.5, "c": 0.5}, cases=3, runs=2)
    with pytest.raises(InvalidArgument, match=pattern):
        compare_variants(res, **kwargs)


def test_all_pairs_with_one_variant_is_refused():
    res = _draw(np.random.default_rng(0), {"a": 0.5}, cases=3, runs=2)
    with pytest.raises(InvalidArgument, match="all_pairs: the run has 1 variant"):
        compare_variants(res, all_pairs=True)


def test_with_identical_variants_few_runs_find_any_difference():
    # Reduced simulations/many_variants.py: four identical variants, 10 cases
    # x 5 runs, all pairs; the Holm-adjusted verdicts call some pair different
    # in at most 5% of runs (here 6 of 120 plus a margin of 4 for Monte-Carlo
    # error), the unadjusted ones more often.
    rng = np.random.default_rng(7)
    holm = raw = 0
    for _ in range(120):
        res = _draw(rng, dict.fromkeys("abcd", 0.7), cases=10, runs=5)
        many = compare_variants(res, all_pairs=True)
        holm += any(p.verdict != "cant_tell" for p in many.pairs)
        raw += any(p.comparison.pvalue < 0.05 for p in many.pairs)
    assert holm <= 6 + 4
    assert raw >= holm


# --- the command ---------------------------------------------------------------------------


def test_cli_compare_baseline_and_all_pairs(tmp_path, capsys):
    from evalstats.results._file import ResultsWriter

    rng = np.random.default_rng(3)
    res = _draw(rng, {"old": 0.6, "new": 0.95, "other": 0.6}, cases=12, runs=4)
    path = tmp_path / "r.jsonl"
    writer = ResultsWriter.create(path, res.manifest)
    for s in res.samples:
        writer.write_sample(s)
    writer.close({})
    assert main(["compare", str(path), "--baseline", "old"]) == 0
    out = capsys.readouterr().out
    assert "Holm-adjusted over 2 comparisons" in out and "ranking against old" in out
    assert main(["compare", str(path), "--all-pairs", "--adjust", "shaffer", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["adjust"] == "shaffer" and len(doc["pairs"]) == 3
    for args, pattern in [
        (["--baseline", "nope"], "baseline='nope'"),
        (["--baseline", "old", "--a", "old", "--b", "new"], "--baseline"),
        ([], "--a and --b"),
        (["--all-pairs", "--adjust", "x"], "adjust='x'"),
    ]:
        assert main(["compare", str(path), *args]) == 2
        err = capsys.readouterr().err
        assert pattern in err and len(err.strip().splitlines()) == 1


def test_report_of_three_variants_ranks_them_with_adjusted_verdicts():
    from evalstats.presenting._report import report

    rng = np.random.default_rng(4)
    res = _draw(rng, {"old": 0.6, "new": 0.95, "other": 0.6}, cases=20, runs=5)
    rep = report(res)
    many = compare_variants(res, all_pairs=True)
    assert rep.ranking == f"{many.ranking()}\nbeside: {many.beside}"
    assert rep.ranking.startswith("ranking (Holm-adjusted") and rep.ranking in str(rep)
    assert rep.ranking.split("): ", 1)[1].startswith("new 9")
    assert rep.to_dict()["ranking"] == rep.ranking
    two = report(_draw(rng, {"old": 0.6, "new": 0.95}, cases=5, runs=2))
    assert two.ranking == "" and "ranking" not in str(two)
