"""A random review sample (review --sample) and pass rates corrected by it (report --reviews)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from evalstats import InvalidArgument, ppi_diff, ppi_pass_rate, read_results, report
from evalstats.cli import main
from evalstats.engine import run
from evalstats.errors import ResultsFileError
from evalstats.results import sample_passed
from evalstats.review import read_review_design, read_reviews, review


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("run") / "results.jsonl"
    run("shop", ["v1=standin:shop-v1", "v2=standin:shop-v2"], runs=15, out=path, progress=False)
    return path


def _person(results: Path, out: Path, *, sample: int | None, seed: int, flip=()) -> None:
    """Review as a person who agrees with the checks except on the samples in ``flip``."""
    res = read_results(results)
    first = {}
    for s in res.samples:
        first.setdefault((s["case"], s["variant"], s["repeat"]), s)
    design = None
    if sample is not None:
        from evalstats.reviewsample import draw_design

        design = draw_design(res, sample=sample, seed=seed)
    # The walk's order: case order, then repeat, then variant.
    cases = [c["id"] for c in res.manifest["cases"]]
    keys = sorted(
        (k for k, s in first.items() if s["status"] != "unmeasured"),
        key=lambda k: (cases.index(k[0]), k[2], ["v1", "v2"].index(k[1])),
    )
    if design is not None:
        keys = [k for k in keys if (k[0], k[2]) in set(design.units)]
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


def test_report_gives_automatic_reviewed_and_corrected_rates(results, tmp_path) -> None:
    out = tmp_path / "reviews.jsonl"
    res = read_results(results)
    design_units = None
    from evalstats.reviewsample import draw_design

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


def test_bad_input_is_one_line_and_exit_2(results, tmp_path, capsys) -> None:
    # --sample larger than the run
    assert main(["review", str(results), "--out", str(tmp_path / "r.jsonl"), "--sample", "61"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "sample=61 is larger than the run" in err
    # fewer than 10 reviewed
    few = tmp_path / "few.jsonl"
    _person(results, few, sample=9, seed=2)
    assert main(["report", str(results), "--reviews", str(few)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "reviewed=9" in err and "at least 10" in err
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
