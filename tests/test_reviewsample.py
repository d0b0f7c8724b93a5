"""A random review sample (review --sample) and pass rates corrected by it (report --reviews)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats import InvalidArgument, ppi_diff, ppi_pass_rate, read_results, report
from evalstats.cli import main
from evalstats.errors import ResultsFileError
from evalstats.presenting._review import read_review_design, read_reviews, review
from evalstats.results._file import sample_passed
from evalstats.running._engine import run


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("run") / "results.jsonl"
    run("shop", ["v1=standin:shop-v1", "v2=standin:shop-v2"], runs=15, out=path, progress=False)
    return path


def _person(
    results: Path, out: Path, *, sample: int | None, seed: int, flip=(), part=slice(None)
) -> None:
    """Review as a person who agrees with the checks except on the samples in ``flip``
    (the ``part`` of the walk's samples: a review stopped, or one going on)."""
    res = read_results(results)
    first = {}
    for s in res.samples:
        first.setdefault((s["case"], s["variant"], s["repeat"]), s)
    design = None
    if sample is not None:
        from evalstats.presenting._review_design import draw_design

        design = draw_design(res, sample=sample, seed=seed)
    # The walk's order: case order, then repeat, then variant.
    cases = [c["id"] for c in res.manifest["cases"]]
    keys = sorted(
        (k for k, s in first.items() if s["status"] != "unmeasured"),
        key=lambda k: (cases.index(k[0]), k[2], ["v1", "v2"].index(k[1])),
    )
    if design is not None:
        keys = [k for k in keys if (k[0], k[2]) in set(design.units)]
    keys = keys[part]
    answers = []
    for k in keys:
        ok = bool(sample_passed(first[k])) != (k in flip)
        answers += ["p" if ok else "f", "checked"]
    review(
        results,
        out,
        input=io.StringIO("\n".join(answers) + "\n"),
        output=io.StringIO(),
        sample=sample,
        seed=seed,
    )


def test_the_design_is_recorded_and_the_draw_is_uniform_and_paired(results, tmp_path) -> None:
    out = tmp_path / "reviews.jsonl"
    _person(results, out, sample=20, seed=3)
    first = json.loads(out.read_text().splitlines()[0])
    assert first["type"] == "design" and first["sample"] == 20 and first["population"] == 60
    assert first["inclusion_probability"] == pytest.approx(20 / 60)
    assert first["seed"] == 3 and first["variants"] == ["v1", "v2"]
    reviews = read_reviews(out)
    assert len(reviews) == 40  # both variants' answers to each of the 20 drawn pairs
    pairs = {(r.case, r.repeat) for r in reviews}
    assert pairs == {tuple(u) for u in first["units"]}
    assert read_review_design(out).units == tuple(tuple(u) for u in first["units"])
    # Another seed, another draw; the same seed, the same draw.
    other = tmp_path / "other.jsonl"
    _person(results, other, sample=20, seed=4)
    assert read_review_design(other).units != read_review_design(out).units


def test_the_draw_takes_the_same_number_from_every_case_reproducibly(results) -> None:
    from collections import Counter

    from evalstats.presenting._review_design import draw_design

    res = read_results(results)
    design = draw_design(res, sample=22, seed=9)
    per_case = Counter(c for c, _ in design.units)
    # 22 pairs from 4 cases of 15: 6, 6, 5 and 5; which two get the sixth is drawn
    assert sorted(per_case.values()) == [5, 5, 6, 6]
    assert design.stratified_by == "case"
    assert {(c, size, n) for c, size, n, _ in design.strata} == {
        (c, 15, per_case[c]) for c in per_case
    }
    # every pair has the same chance, 22/60: (5 + 2/4) / 15 in every case
    assert design.inclusion_probability == pytest.approx(22 / 60, abs=1e-12)
    assert draw_design(res, sample=22, seed=9) == design
    seeds = {draw_design(res, sample=22, seed=s).units for s in range(5)}
    assert len(seeds) == 5
    # the round trip through the reviews file's first line
    from evalstats.presenting._review_design import ReviewDesign

    back = ReviewDesign.from_dict(json.loads(json.dumps(design.to_dict())), "here")
    assert back == design
    # fewer pairs than cases: a uniform draw, said so
    small = draw_design(res, sample=3, seed=1)
    assert small.stratified_by is None and small.strata == ()
    assert small.to_dict()["stratified_by"] is None
    assert draw_design(res, sample=22, seed=9, stratify=None).stratified_by is None
    with pytest.raises(InvalidArgument, match="stratify='variant' must be 'case' or None"):
        draw_design(res, sample=22, seed=9, stratify="variant")


def test_an_older_design_line_without_strata_is_a_uniform_draw() -> None:
    from evalstats.presenting._review_design import ReviewDesign

    old = {
        "type": "design",
        "run": "ab",
        "seed": 1,
        "sample": 2,
        "population": 8,
        "inclusion_probability": 0.25,
        "variants": ["v"],
        "units": [["a", 0], ["b", 1]],
    }
    design = ReviewDesign.from_dict(old, "here")
    assert design.stratified_by is None and design.inclusion_probability == 0.25
    with pytest.raises(ResultsFileError, match="malformed"):
        ReviewDesign.from_dict({**old, "stratified_by": "case"}, "here")


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=5),
    share=st.floats(0, 1),
    seed=st.integers(0, 1000),
)
def test_allocation_is_as_even_as_possible_and_its_chances_are_exact(
    sizes: list[int], share: float, seed: int
) -> None:
    import itertools
    import random
    from fractions import Fraction

    from evalstats.presenting._review_design import allocate, inclusion_probabilities

    by = {f"c{i}": n for i, n in enumerate(sizes)}
    sample = round(share * sum(sizes))
    counts = allocate(by, sample, random.Random(seed))
    assert sum(counts.values()) == sample
    assert all(0 <= counts[h] <= by[h] for h in by)
    # as even as possible: a stratum two or more short of the most drawn is exhausted
    top = max(counts.values())
    assert all(counts[h] >= top - 1 or counts[h] == by[h] for h in by)
    # Exact chances, by enumerating which strata get the remainder (each choice
    # equally likely): a unit's chance is the mean of drawn / size over them.
    # t: the level every stratum reaches unless exhausted (the fewest drawn of a
    # stratum not exhausted; a stratum left at t exists when a remainder is shared)
    t = min((counts[h] for h in by if counts[h] < by[h]), default=max(counts.values(), default=0))
    base = {h: min(by[h], t) for h in by}
    eligible = [h for h in by if by[h] > t]
    remainder = sample - sum(base.values())
    chance = {h: Fraction(0) for h in by}
    choices = list(itertools.combinations(eligible, remainder))
    for chosen in choices:
        for h in by:
            chance[h] += Fraction(base[h] + (h in chosen), by[h]) / len(choices)
    got = inclusion_probabilities(by, sample)
    assert all(got[h] == pytest.approx(float(chance[h]), abs=1e-12) for h in by)


def test_cases_of_different_sizes_are_weighted_by_their_share(results, tmp_path) -> None:
    # Drop v1's samples of 'order status' after its first repeat: that case has
    # one complete pair of 46, so its pair is always drawn and weighs 1/46 of
    # the run; the corrected rates weight each case by its share.
    lines = results.read_text().splitlines()
    kept = []
    for line in lines:
        rec = json.loads(line)
        if rec.get("type") == "summary":
            continue
        dropped = rec.get("type") == "sample" and rec["variant"] == "v1"
        if dropped and rec["case"] == "order status" and rec["repeat"] >= 1:
            continue
        kept.append(line)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(kept) + "\n")
    out = tmp_path / "reviews.jsonl"
    _person(cut, out, sample=16, seed=2)
    design = read_review_design(out)
    sizes = {c: size for c, size, _, _ in design.strata}
    assert sizes == {
        "broken lamp refund": 15,
        "discount trick": 15,
        "order status": 1,
        "thank-you": 15,
    }
    assert design.inclusion_probability is None
    assert {c: p for c, _, _, p in design.strata}["order status"] == 1.0
    res = read_results(cut)
    first = {}
    for s in res.samples:
        first.setdefault((s["case"], s["variant"], s["repeat"]), s)
    pairs = sorted({(c, r) for c, v, r in first if (c, "v1", r) in first and (c, "v2", r) in first})
    units = set(design.units)
    corrected = report(cut, reviews=out).corrected
    for row in corrected.rows:
        auto = [bool(sample_passed(first[(c, row.variant, r)])) for c, r in pairs]
        mask = [(c, r) in units for c, r in pairs]
        strata = [c for c, _ in pairs]
        assert row.corrected == ppi_pass_rate(auto, mask, auto, strata=strata)
        assert "drawn within 4 strata" in row.corrected.note
    assert corrected.unweighted == ()
    assert "stratified by case" in "\n".join(corrected.lines("95%"))


def test_report_gives_automatic_reviewed_and_corrected_rates(results, tmp_path) -> None:
    out = tmp_path / "reviews.jsonl"
    res = read_results(results)
    design_units = None
    from evalstats.presenting._review_design import draw_design

    design_units = draw_design(res, sample=25, seed=1).units
    # The person disagrees with the checks on three drawn v1 answers.
    flip = {(c, "v1", r) for c, r in design_units[:3]}
    _person(results, out, sample=25, seed=1, flip=flip)
    rep = report(results, reviews=out)
    corrected = rep.corrected
    assert corrected is not None
    first = {}
    for s in res.samples:
        first.setdefault((s["case"], s["variant"], s["repeat"]), s)
    pairs = sorted({(k[0], k[2]) for k in first})
    units = set(design_units)
    for row in corrected.rows:
        auto = [bool(sample_passed(first[(c, row.variant, r)])) for c, r in pairs]
        mask = [(c, r) in units for c, r in pairs]
        human = [a != ((c, row.variant, r) in flip) for a, (c, r) in zip(auto, pairs, strict=True)]
        assert row.automatic_passed == sum(auto) and row.automatic_total == 60
        assert row.reviewed_total == 25
        # 25 pairs from 4 cases of 15 each: 7, 6, 6 and 6, every pair with the
        # same chance 25/60 (which case gets the 7th is drawn), so no weights
        assert row.corrected == ppi_pass_rate(auto, mask, human)
    a_auto = [bool(sample_passed(first[(c, "v1", r)])) for c, r in pairs]
    b_auto = [bool(sample_passed(first[(c, "v2", r)])) for c, r in pairs]
    mask = [(c, r) in units for c, r in pairs]
    a_h = [a != ((c, "v1", r) in flip) for a, (c, r) in zip(a_auto, pairs, strict=True)]
    assert corrected.difference == ppi_diff(a_auto, b_auto, mask, a_h, b_auto)
    text = str(rep)
    assert "corrected by the random review (PPI++" in text
    assert "v2 - v1, corrected, paired:" in text
    doc = rep.to_dict()
    assert doc["corrected"]["design"]["sample"] == 25


def test_hand_picked_reviews_are_not_used_for_the_corrected_rates(results, tmp_path) -> None:
    out = tmp_path / "reviews.jsonl"
    _person(results, out, sample=12, seed=5)
    before = report(results, reviews=out).corrected
    # Go on without --sample: every other sample, chosen by the person, reviewed too.
    _person(results, out, sample=None, seed=0)
    after = report(results, reviews=out).corrected
    assert after.hand_picked == 2 * (60 - 12)
    assert [r.corrected for r in after.rows] == [r.corrected for r in before.rows]
    assert "chosen by hand) are not used" in "\n".join(after.lines("95%"))
    # A random draw cannot continue a file of hand-picked reviews.
    hand = tmp_path / "hand.jsonl"
    _person(results, hand, sample=None, seed=0)
    with pytest.raises(ResultsFileError, match="hand-picked reviews or another draw"):
        review(results, hand, input=io.StringIO(""), output=io.StringIO(), sample=12, seed=5)
    assert report(results, reviews=hand).corrected is None


def test_a_review_under_way_reports_without_corrected_rates_until_it_has_10(
    results, tmp_path, capsys
) -> None:
    # 5 of 12 drawn pairs reviewed (each variant's answer): too few for a corrected
    # estimate, but the report, its reviewed rates and a note saying how to go on
    # are there (this was exit 2, the whole report refused)
    out = tmp_path / "reviews.jsonl"
    _person(results, out, sample=12, seed=2, part=slice(0, 10))
    rep = report(results, reviews=out)
    assert rep.corrected is None and [r.passed + r.failed for r in rep.reviewed] == [5, 5]
    (note,) = [w for w in rep.warnings if "review-corrected" in w]
    assert note.startswith(f"{out}: no review-corrected rates yet: variant 'v1' has reviewed=5")
    assert note.endswith("review --sample 12 --seed 2 with the same --out goes on where it stopped")
    assert main(["report", str(results), "--reviews", str(out)]) == 0
    assert "warning: " + note in capsys.readouterr().out.splitlines()
    # going on as the note says gives them
    _person(results, out, sample=12, seed=2, part=slice(10, None))
    done = report(results, reviews=out)
    assert [r.reviewed_total for r in done.corrected.rows] == [12, 12]
    assert not [w for w in done.warnings if "review-corrected" in w]


def test_bad_input_is_one_line_and_exit_2(results, tmp_path, capsys) -> None:
    # --sample larger than the run
    assert main(["review", str(results), "--out", str(tmp_path / "r.jsonl"), "--sample", "61"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "sample=61 is larger than the run" in err
    # a draw of fewer than 10: the report holds, and says the draw is too small
    few = tmp_path / "few.jsonl"
    _person(results, few, sample=9, seed=2)
    assert main(["report", str(results), "--reviews", str(few), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["corrected"] is None
    (note,) = [w for w in doc["warnings"] if "review-corrected" in w]
    assert "reviewed=9" in note and "at least 10" in note and "a draw of 9 can never" in note
    # a reviews file from another run of the same suite
    other = tmp_path / "other.jsonl"
    run("shop", ["v1=standin:shop-v1", "v2=standin:shop-v2"], runs=15, out=other, progress=False)
    drawn = tmp_path / "drawn.jsonl"
    _person(results, drawn, sample=12, seed=2)
    assert main(["report", str(other), "--reviews", str(drawn)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "drawn from another run" in err
    with pytest.raises(InvalidArgument, match="sample=0 must be a whole number"):
        review(results, tmp_path / "z.jsonl", input=io.StringIO(""), output=io.StringIO(), sample=0)


def test_the_readme_s_random_review_commands_run(tmp_path, monkeypatch, capsys) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("Review a random subset instead", 1)[1].split("```sh\n", 1)[1]
    commands = [line.split("#")[0].split() for line in block.split("```", 1)[0].splitlines()]
    assert [c[:2] for c in commands] == [
        ["evalstats", "run"],
        ["evalstats", "review"],
        ["evalstats", "report"],
    ]
    monkeypatch.chdir(tmp_path)
    assert main(commands[0][1:]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("p\nlooks right\n" * 40))
    assert main(commands[1][1:]) == 0
    capsys.readouterr()
    assert main(commands[2][1:]) == 0
    out = capsys.readouterr().out
    assert "corrected by the random review (PPI++, 95% intervals; 20 of 60" in out
    assert "v2 - v1, corrected, paired:" in out


def test_the_report_says_when_the_judge_adds_nothing() -> None:
    import numpy as np

    from evalstats import proportion_ci
    from evalstats.presenting._review_design import CorrectedRates, CorrectedRow, ReviewDesign

    rng = np.random.default_rng(4)
    truth = rng.random(600) < 0.5
    mask = np.zeros(600, dtype=bool)
    mask[rng.choice(600, 30, replace=False)] = True
    contrary = ~truth  # a judge that disagrees with the person: lambda = 0, the reviews alone
    k = int(truth[mask].sum())

    def row(name, auto):
        return CorrectedRow(
            name,
            proportion_ci(int(auto.sum()), 600),
            int(auto.sum()),
            600,
            proportion_ci(k, 30),
            k,
            30,
            ppi_pass_rate(auto, mask, truth),
        )

    useless, sharp = row("contrary", contrary), row("sharp", truth)
    assert useless.judge_adds_nothing and useless.width_ratio >= 1
    assert not sharp.judge_adds_nothing and sharp.width_ratio < 0.8
    design = ReviewDesign("r", 1, 30, 600, ("contrary", "sharp"), ())
    rates = CorrectedRates(design, (useless, sharp), None, None, 0, 0)
    text = "\n".join(rates.lines("95%"))
    assert "contrary: the judge adds nothing here: the corrected interval is" in text
    assert "sharp: the judge adds nothing" not in text
    doc = rates.to_dict()
    assert [v["judge_adds_nothing"] for v in doc["variants"]] == [True, False]
