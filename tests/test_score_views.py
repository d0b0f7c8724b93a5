"""Mean scores in compare: the comparison beside the pass rates, both claims, on the
command line and in --json."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scored import random_levels, scored_run, scores_of

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.deciding._score_results import score_family
from evalstats.stats._score_compare import compare_scores

#: this file's runs: 12 cases x 3 repeats unless a test says otherwise
_levels = functools.partial(random_levels, cases=12, repeats=3)


@pytest.fixture(scope="module")
def run12(tmp_path_factory) -> tuple[Path, dict]:
    levels = _levels(1)
    return scored_run(tmp_path_factory.mktemp("s") / "r.jsonl", levels), levels


def test_the_printed_comparison_is_compare_scores_on_the_same_pairs(run12, capsys) -> None:
    path, levels = run12
    cases, a = scores_of(levels["old"])
    _, b = scores_of(levels["new"])
    # the reference: compare_scores on the scores the test lays out itself, pair by pair
    these = compare_scores(a, b, cases, about="these_cases")
    like = compare_scores(a, b, cases, about="cases_like_these")
    got = compare_results(str(path), "old", "new").scores
    assert got is not None and got.pairs == 36 and got.cases == 12 and got.unpaired == 0
    assert got.these_cases.difference.to_dict() == these.difference.to_dict()
    assert got.cases_like_these.difference.to_dict() == like.difference.to_dict()
    assert got.verdict == these.verdict and got.about == "these_cases"
    assert sorted(r.adjusted_pvalue for r in got.these_cases.cases) == sorted(
        r.adjusted_pvalue for r in these.cases
    )
    assert main(["compare", str(path), "--a", "old", "--b", "new"]) == 0
    out = capsys.readouterr().out
    assert f"these cases:      {these}" in out
    assert f"cases like these: {like}" in out
    assert "score verdict: " in out
    assert main(["compare", str(path), "--a", "old", "--b", "new", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["scores"]
    assert doc["these_cases"]["difference"]["low"] == these.difference.low
    assert doc["cases_like_these"]["difference"]["high"] == like.difference.high
    assert doc["verdict"] == these.verdict and doc["about"] == "these_cases"
    assert doc["primary"] == doc["these_cases"]
    assert len(doc["these_cases"]["case_rows"]) == 12
    assert [r["case"] for r in doc["these_cases"]["case_rows"]] == list(levels["old"])


def test_a_sampled_suite_makes_the_claim_about_cases_like_these(tmp_path: Path) -> None:
    path = scored_run(tmp_path / "r.jsonl", _levels(2), sampled=True)
    got = compare_results(str(path), "old", "new")
    assert got.about == "cases_like_these" and got.scores.about == "cases_like_these"
    assert got.scores.verdict == got.scores.cases_like_these.verdict
    assert (
        "score verdict: " in str(got)
        and "about cases like these" in str(got).split("score verdict: ")[1].split("\n")[0]
    )


def test_the_pass_rate_part_is_unchanged_by_scores(tmp_path: Path) -> None:
    # The same run with its scores taken away prints what it printed before
    # scores existed: the scored run's output begins with exactly that text.
    levels = _levels(3)
    path = scored_run(tmp_path / "r.jsonl", levels)
    bare = tmp_path / "bare.jsonl"
    with open(path, encoding="utf-8") as f, open(bare, "w", encoding="utf-8") as g:
        for line in f:
            rec = json.loads(line)
            rec.pop("score", None)
            for c in rec.get("checks", []):
                for k in ("score", "raw_score", "scale"):
                    c.pop(k, None)
            g.write(json.dumps(rec) + "\n")
    plain = compare_results(str(bare), "old", "new")
    scored = compare_results(str(path), "old", "new")
    assert plain.scores is None and "mean score" not in str(plain)
    assert str(scored).startswith(str(plain) + "\n\nmean scores (0 to 1)")
    assert "scores" not in plain.to_dict()
    assert {k: v for k, v in scored.to_dict().items() if k != "scores"} == plain.to_dict()


def test_an_unmeasured_side_leaves_its_pair_out(tmp_path: Path) -> None:
    levels = _levels(4, cases=6, repeats=2)
    levels["new"]["c0"][1] = None
    path = scored_run(tmp_path / "r.jsonl", levels)
    got = compare_results(str(path), "old", "new").scores
    assert got.pairs == 11 and got.unpaired == 1
    assert "1 scored samples without a partner left out" in "\n".join(got.lines())


def _agrees(verdict: str, low: float, high: float) -> bool:
    if verdict == "b_better":
        return low > 0
    if verdict == "a_better":
        return high < 0
    return low <= 0 <= high


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.integers(2, 6),
    st.integers(1, 4),
    st.integers(-2, 2),
    st.integers(0, 10_000),
    st.booleans(),
)
def test_the_printed_verdict_agrees_with_its_interval_and_mirrors(
    tmp_path: Path, cases: int, repeats: int, shift: int, seed: int, sampled: bool
) -> None:
    levels = _levels(seed, cases=cases, repeats=repeats, shift=shift)
    path = scored_run(
        tmp_path / f"r{seed}-{cases}-{repeats}-{shift}-{sampled}.jsonl", levels, sampled=sampled
    )
    ab = compare_results(str(path), "old", "new").scores
    ba = compare_results(str(path), "new", "old").scores
    for got in (ab, ba):
        for c in (got.these_cases, got.cases_like_these, got.primary):
            if c is not None:
                assert _agrees(c.verdict, c.difference.low, c.difference.high)
        text = "\n".join(got.lines())
        assert f"{got.primary.difference}" in text
    mirror = {"b_better": "a_better", "a_better": "b_better", "cant_tell": "cant_tell"}
    assert ba.verdict == mirror[ab.verdict]
    d, e = ab.these_cases.difference, ba.these_cases.difference
    assert e.estimate == pytest.approx(-d.estimate, abs=1e-12)
    assert ab.these_cases.mean_a == ba.these_cases.mean_b


# --- several variants ---------------------------------------------------------------


def _three(seed: int, cases: int = 10) -> dict:
    rng = random.Random(seed)
    return {
        v: {f"c{i}": [min(5, rng.choice([2, 3, 3, 4]) + k) for _ in range(3)] for i in range(cases)}
        for v, k in (("old", 0), ("mid", 1), ("new", 1), ("top", 2))
    }


def _pvalue(a, b, cases) -> float:
    """The least alpha at which compare_scores' interval excludes 0, by bisection."""
    lo, hi = 1e-4, 0.5  # the levels compare_scores takes: 0.5 to 0.9999
    if compare_scores(a, b, cases, level=1.0 - hi).verdict == "cant_tell":
        return 1.0
    if compare_scores(a, b, cases, level=1.0 - lo).verdict != "cant_tell":
        return lo
    for _ in range(40):
        mid = (lo + hi) / 2
        if compare_scores(a, b, cases, level=1.0 - mid).verdict == "cant_tell":
            lo = mid
        else:
            hi = mid
    return hi


def test_several_variants_are_holm_adjusted_as_holm_on_the_intervals_p_values(
    tmp_path: Path, capsys
) -> None:
    from statsmodels.stats.multitest import multipletests

    from evalstats.deciding._several import compare_variants

    # p-values about 0.027, 0.032 and 0.0003: Holm decides only the last, where
    # unadjusted every one would be decided
    levels = _three(7)
    path = scored_run(tmp_path / "r.jsonl", levels)
    many = compare_variants(str(path), baseline="old")
    fam = many.scores
    assert fam is not None and [(p.a, p.b) for p in fam.pairs] == [
        ("old", "mid"),
        ("old", "new"),
        ("old", "top"),
    ]
    # reference: statsmodels' Holm on each pair's p-value, the least alpha at which
    # its interval excludes 0 (found by bisection, independently of the step-down)
    pvalues = []
    for p in fam.pairs:
        cases, a = scores_of(levels[p.a])
        _, b = scores_of(levels[p.b])
        pvalues.append(_pvalue(a, b, cases))
    reject = multipletests(pvalues, alpha=0.05, method="holm")[0]
    assert list(reject) == [False, False, True]
    bare = compare_variants(str(path), baseline="old", adjust="none").scores
    assert [p.verdict for p in bare.pairs] == ["b_better"] * 3
    assert [p.verdict != "cant_tell" for p in fam.pairs] == list(reject)
    for p in fam.pairs:
        d = p.comparison.difference
        assert _agrees(p.verdict, d.low, d.high) and p.comparison.level == p.level
        assert 0.95 <= p.level <= 1 - 0.05 / 3 + 1e-12
    assert main(["compare", str(path), "--baseline", "old", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["scores"]
    assert [q["verdict"] for q in doc["pairs"]] == [p.verdict for p in fam.pairs]
    assert doc["means"]["old"] == pytest.approx(sum(scores_of(levels["old"])[1]) / 30)
    unadjusted = compare_variants(str(path), all_pairs=True, adjust="none").scores
    assert all(p.level == 0.95 for p in unadjusted.pairs) and len(unadjusted.pairs) == 6


def test_several_variants_without_scores_are_as_before() -> None:
    import records

    from evalstats.deciding._several import compare_variants

    run = records.results({v: {"x": [True, False] * 3, "y": [True] * 6} for v in ("p", "q", "r")})
    many = compare_variants(run, baseline="p")
    assert many.scores is None and "scores" not in many.to_dict()
    assert "mean scores" not in str(many)


# --- gate --no-regression-vs NAME --score-margin M -----------------------------------


def test_the_score_no_regression_gate_is_score_non_inferiority_on_the_pairs(run12, capsys) -> None:
    from evalstats.deciding._score_gate import score_no_regression
    from evalstats.stats._score_compare import score_non_inferiority

    path, levels = run12
    cases, a = scores_of(levels["old"])
    _, b = scores_of(levels["new"])
    for claim in ("these_cases", "cases_like_these"):
        ref = score_non_inferiority(a, b, cases, margin=0.1, about=claim)
        got = score_no_regression(str(path), variant="new", vs="old", margin=0.1, about=claim)
        assert got.primary.difference.to_dict() == ref.difference.to_dict()
        assert got.passed == ref.passed == (ref.difference.low > -0.1)
        assert got.beside is not None and got.beside.about != claim
    base = ["gate", str(path), "--no-regression-vs"]
    assert main([*base, "old", "--variant", "new", "--score-margin", "0.1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("score gate passed: new against old") and "not the claim decided" in out
    # old against new is worse by about 0.26: it fails (exit 1)
    assert main([*base, "new", "--variant", "old", "--score-margin", "0.05", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is False and doc["primary"]["difference"]["high"] < 0
    # both gates: the pass rate's and the mean score's, passed only when both pass
    both = [*base, "old", "--variant", "new", "--score-margin", "0.1", "--margin", "0.1"]
    assert main([*both, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is True and doc["score_no_regression"]["passed"] is True
    assert any("not worse than 'old' by more than 10%" in c for c in doc["checked"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--no-regression-vs", "old", "--score-margin", "3"],
            "evalstats: error: score_margin=3.0 must be above 0 and below 1 (it is on the "
            "0-1 score scale: one step of a 1-5 rubric is 0.25)",
        ),
        (
            ["--no-regression-vs", "old", "--score-margin", "nan"],
            "evalstats: error: score_margin=nan must be above 0 and below 1",
        ),
        (
            ["--score-margin", "0.1"],
            "evalstats gate: --score-margin goes with --no-regression-vs NAME",
        ),
    ],
)
def test_a_score_margin_on_the_wrong_scale_is_one_line(run12, capsys, extra, message) -> None:
    path, _ = run12
    assert main(["gate", str(path), "--variant", "new", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == message and captured.out == ""


def test_a_score_margin_on_a_run_without_scores_is_refused(tmp_path: Path, capsys) -> None:
    import records

    path = tmp_path / "r.jsonl"
    outcomes = {v: {"x": [True, False] * 3, "y": [True] * 6} for v in ("old", "new")}
    manifest = records.manifest(["x", "y"], ["old", "new"], 6)
    records.write(path, manifest, records.samples(outcomes), {"status": "finished"})
    args = ["gate", str(path), "--variant", "new", "--no-regression-vs", "old"]
    assert main([*args, "--score-margin", "0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "evalstats: error: 'new' and 'old' have no scored pairs: --score-margin needs "
        "graded checks run by both on the same (case, repeat)"
    )


# --- ordinal levels: the tally's per-level counts and the report ----------------------


def _expected_levels(levels: dict) -> dict[int, int]:
    """The answers at each level, counted here from the levels the test laid out."""
    out = {lv: 0 for lv in range(1, 6)}
    for row in levels.values():
        for lv in row:
            if lv is not None:
                out[lv] += 1
    return out


def test_the_report_shows_the_share_at_each_level_beside_the_mean(run12, capsys) -> None:
    from evalstats.presenting._report import report
    from evalstats.reading._source import RunSource
    from evalstats.results._file import read_results

    path, levels = run12
    for source in (str(path), read_results(path)):  # the file's pass and the records'
        tally = RunSource.of(source).tally()
        for v in ("old", "new"):
            want = _expected_levels(levels[v])
            got = tally.levels(v)
            assert {k[3]: n for k, n in got.items()} == {lv: n for lv, n in want.items() if n}
            assert {k[:3] for k in got} == {("judge", 1.0, 5.0)}
    rep = report(str(path))
    for s in rep.scores:
        (lc,) = s.levels
        want = _expected_levels(levels[s.variant])
        total = sum(want.values())
        assert dict(lc.counts) == want and lc.total == total == 36
        assert dict(lc.shares()) == {lv: n / total for lv, n in want.items()}
        text = ", ".join(f"{lv}: {n} ({100 * n / total:.0f}%)" for lv, n in want.items())
        assert f"levels of 'judge' (1 to 5): {text} of 36" in str(rep)
        means = {
            c: sum((lv - 1) / 4 for lv in row) / len(row) for c, row in levels[s.variant].items()
        }
        assert [c for c, *_ in s.by_case] == list(means)
        assert [m for _, _, m, _, _ in s.by_case] == pytest.approx(list(means.values()))
    assert "assumes equal steps" in str(rep)
    assert main(["report", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (old,) = [s for s in doc["scores"] if s["variant"] == "old"]
    want = _expected_levels(levels["old"])
    assert old["levels"][0]["counts"] == {str(k): n for k, n in want.items()}
    assert old["levels"][0]["scale"] == [1, 5] and old["levels"][0]["between"] == 0
    assert [r["case"] for r in old["by_case"]] == list(levels["old"])


def test_levels_are_counted_on_every_path_of_the_reader(tmp_path: Path) -> None:
    # Every sample's reason its own: after 1,024 samples the reader stops keeping
    # checks seen before and decodes lines whole; the levels are counted the same.
    import records

    rng = random.Random(9)
    want = {lv: 0 for lv in range(1, 6)}
    samples = []
    between = 0
    for r in range(1300):
        lv = rng.choice([1, 2, 3, 4, 5, 2.5])
        if lv == 2.5:
            between += 1
        else:
            want[lv] += 1
        check = records.check(
            "passed", "judge", reason=f"reason {r}", score=(lv - 1) / 4, raw_score=lv,
            scale=(1, 5),
        )  # fmt: skip
        samples.append(records.sample(f"c{r % 13}", "v", r // 13, checks=[check]))
    cases = [f"c{i}" for i in range(13)]
    path = records.write(tmp_path / "r.jsonl", records.manifest(cases, ["v"], 100), samples)
    from evalstats.presenting._score_report import level_counts
    from evalstats.reading._source import RunSource

    (lc,) = level_counts(RunSource.of(str(path)).tally(), "v")
    assert dict(lc.counts) == want and lc.between == between
    assert "between levels: " in lc.text()


def test_a_continuous_scale_has_no_levels(tmp_path: Path) -> None:
    import records

    from evalstats.presenting._score_report import level_counts
    from evalstats.reading._source import RunSource

    def run(name: str, scale: tuple, raws: list) -> Any:
        lo, hi = scale
        samples = [
            records.sample(
                "c",
                "v",
                r,
                checks=[
                    records.check(
                        "passed", "f", score=(x - lo) / (hi - lo), raw_score=x, scale=scale
                    )
                ],
            )
            for r, x in enumerate(raws)
        ]
        path = records.write(tmp_path / name, records.manifest(["c"], ["v"], len(raws)), samples)
        return RunSource.of(str(path)).tally()

    # a 0-1 scale has two levels only: a score on it is a share, not a level
    assert run("a.jsonl", (0, 1), [0.25, 0.5, 1.0, 0.0]).levels("v") == {}
    # a 0-10 scale of mostly fractional scores is continuous: no levels in the report
    tally = run("b.jsonl", (0, 10), [7.3, 6.1, 8.0, 5.5])
    assert tally.levels("v") == {("f", 0.0, 10.0, 8): 1, ("f", 0.0, 10.0, None): 3}
    assert level_counts(tally, "v") == ()


def test_the_family_wise_error_of_identical_variants_stays_within_holm_s_goal() -> None:
    # Reduced simulations/score_several.py: 4 identical variants, 3 against the
    # baseline, 10 cases of 3 runs, 40 runs; the goal (at most 5% with Holm) with a
    # margin for 40 runs: at most 4 runs with a false verdict (10%).
    from simulation import load

    module = load("score_several")
    found = module.rates(40, 10, "these_cases", seed=1)
    holm, none = found["holm"][0], found["none"][0]
    assert holm <= 4 and holm <= none  # Holm's intervals are the wider: never more errors
    # and the simulator judges as compare --baseline does: score_family on its runs
    run = module.draw(np.random.default_rng(3), 6)
    fam = score_family(run, [("base", v) for v in module.VARIANTS[1:]])
    assert [p.b for p in fam.pairs] == ["v1", "v2", "v3"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.integers(1, 5), st.just(3.5), st.none()), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    )
)
def test_level_counts_add_up_to_the_scored_answers(rows) -> None:
    # In memory, through the same tally: each level's count is the number of answers
    # given it, the between ones apart, the shares summing to 1 when all are levels.
    import records

    from evalstats.presenting._score_report import level_counts
    from evalstats.reading._source import RunSource
    from evalstats.results._file import Results

    samples = []
    for i, row in enumerate(rows):
        for r, lv in enumerate(row):
            if lv is None:
                samples.append(records.sample(f"c{i}", "v", r, None))
                continue
            check = records.check("passed", "judge", score=(lv - 1) / 4, raw_score=lv, scale=(1, 5))
            samples.append(records.sample(f"c{i}", "v", r, checks=[check]))
    runs = max(len(row) for row in rows)
    manifest = records.manifest([f"c{i}" for i in range(len(rows))], ["v"], runs)
    tally = RunSource.of(
        Results(None, manifest, tuple(samples), {"status": "finished"}, ())
    ).tally()
    given_levels = [lv for row in rows for lv in row if lv is not None]
    found = level_counts(tally, "v")
    between = sum(1 for lv in given_levels if lv == 3.5)
    if not given_levels or 2 * between > len(given_levels):
        assert found == ()
        return
    (lc,) = found
    assert lc.total == len(given_levels) and lc.between == between
    for level, n in lc.counts:
        assert n == sum(1 for lv in given_levels if lv == level)
    if not between:
        assert sum(x for _, x in lc.shares()) == pytest.approx(1.0)
