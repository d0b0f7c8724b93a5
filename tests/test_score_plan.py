"""Plans for graded scores: the model, the comparison's decision, the pilot fit, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import records
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.planning import ScoreModel, fit_score_model, score_plan, score_power
from evalstats.planning._score_plan import (
    _draw_block,
    score_decisions,
    variance_components,
)
from evalstats.stats import compare_scores, score_non_inferiority
from evalstats.stats._intervals import proportion_ci

# --- the model ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mean_a": 1.2}, "mean_a=1.2 must be a mean score in [0, 1]"),
        ({"mean_b": -0.1}, "mean_b=-0.1 must be a mean score in [0, 1]"),
        ({"between": -0.1}, "between=-0.1 must be a standard deviation, at least 0"),
        ({"within": float("nan")}, "within=nan must be a finite number"),
        ({"correlation": 1.5}, "correlation=1.5 must be in [-1, 1]"),
        ({"between": 0.45, "within": 0.2}, "between=0.45 and within=0.2 are impossible"),
        ({"mean_b": 0.97}, "with mean_b=0.97"),
    ],
)
def test_the_model_refuses_what_no_scores_in_0_1_can_be(kwargs, message) -> None:
    base = {"mean_a": 0.6, "mean_b": 0.7, "between": 0.15, "within": 0.1}
    with pytest.raises(InvalidArgument) as e:
        ScoreModel(**{**base, **kwargs})
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_sd_just_inside_m_1_minus_m_is_possible_and_one_at_it_is_not() -> None:
    # scores in [0, 1] with mean 0.5 have variance at most 0.25 (all 0 or 1)
    ScoreModel(0.5, 0.5, between=0.3, within=0.39)  # 0.09 + 0.1521 < 0.25
    with pytest.raises(InvalidArgument, match="impossible"):
        ScoreModel(0.5, 0.5, between=0.3, within=0.4)  # 0.09 + 0.16 = 0.25


@pytest.mark.parametrize(
    "model",
    [
        ScoreModel(0.6, 0.7, between=0.15, within=0.1),
        ScoreModel(0.3, 0.35, between=0.2, within=0.35, correlation=0.5, between_b=0.1),
        ScoreModel(0.8, 0.9, between=0.0, within=0.2),
    ],
)
def test_the_simulated_scores_have_the_models_moments(model: ScoreModel) -> None:
    # One experiment of 6,000 cases x 4 runs: the one-way ANOVA of its scores recovers
    # each variant's mean, SD of case means and SD of a case's runs.
    a, b = _draw_block(model, 6000, 4, 1, 11, 0, False)
    assert a.min() >= 0 and a.max() <= 1 and b.min() >= 0 and b.max() <= 1
    for scores, (mean, between, within) in (
        (a[0], (model.mean_a, model.between, model.within)),
        (b[0], (model.mean_b, *model.spread_b)),
    ):
        fit = variance_components(dict(enumerate(scores.tolist())))
        assert fit.mean == pytest.approx(mean, abs=0.01)
        assert fit.between**2 == pytest.approx(between**2, abs=0.004)  # 3 SE
        assert fit.within == pytest.approx(within, abs=0.006)


def test_correlation_one_ranks_the_cases_alike_and_the_null_copies_a() -> None:
    model = ScoreModel(0.5, 0.6, between=0.2, within=0.0)
    a, b = _draw_block(model, 50, 1, 3, 0, 0, False)
    assert (np.argsort(a[..., 0], axis=1) == np.argsort(b[..., 0], axis=1)).all()
    a, b = _draw_block(model, 50, 1, 3, 0, 0, True)
    assert np.array_equal(a, b)  # B scores as A on every case (and within 0: every run)


# --- the decision is compare_scores' own ----------------------------------------------

LIKERT = ScoreModel(0.6, 0.7, between=0.15, within=0.2)


@pytest.mark.parametrize(("cases", "repeats"), [(2, 3), (3, 1), (7, 2), (20, 4), (40, 1)])
@pytest.mark.parametrize("about", ["these_cases", "cases_like_these"])
def test_score_decisions_equal_compare_scores_verdict(cases, repeats, about) -> None:
    rng = np.random.default_rng([cases, repeats])
    for seed, model in enumerate(
        [LIKERT, ScoreModel(0.5, 0.58, between=0.2, within=0.4, correlation=0.3)]
    ):
        a, b = _draw_block(model, cases, repeats, 12, seed, 0, False)
        if seed == 0:  # a 1-5 rubric: scores in steps of 0.25, ties and exact zeros
            a, b = np.round(a * 4) / 4, np.round(b * 4) / 4
        a[0], b[0] = a[1], a[1]  # one experiment with B = A exactly
        labels = [f"c{j}" for j in range(cases) for _ in range(repeats)]
        order = rng.permutation(cases * repeats)  # the listing order changes nothing
        for margin in (None, 0.1):
            fast = score_decisions(a, b, about=about, margin=margin)
            for e in range(a.shape[0]):
                x, y = a[e].ravel()[order], b[e].ravel()[order]
                lab = [labels[i] for i in order]
                if margin is None:
                    slow = compare_scores(x, y, lab, about=about).verdict == "b_better"
                else:
                    slow = score_non_inferiority(x, y, lab, about=about, margin=margin).passed
                assert bool(fast[e]) == slow, (e, margin)


scores = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
    st.floats(0.0, 1.0, allow_nan=False),
)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(1, 3),
    st.data(),
    st.sampled_from(["these_cases", "cases_like_these"]),
    st.sampled_from([None, 0.05, 0.3]),
)
def test_score_decisions_equal_the_verdict_whatever_the_scores(
    cases, repeats, data, about, margin
) -> None:
    shape = (2, cases, repeats)
    size = 2 * cases * repeats
    a = np.array(data.draw(st.lists(scores, min_size=size, max_size=size))).reshape(shape)
    b = np.array(data.draw(st.lists(scores, min_size=size, max_size=size))).reshape(shape)
    fast = score_decisions(a, b, about=about, margin=margin)
    labels = np.repeat(np.arange(cases), repeats)
    for e in range(2):
        x, y = a[e].ravel(), b[e].ravel()
        if margin is None:
            slow = compare_scores(x, y, labels, about=about).verdict == "b_better"
        else:
            slow = score_non_inferiority(x, y, labels, about=about, margin=margin).passed
        assert bool(fast[e]) == slow


@given(st.floats(0.0, 1.0), st.floats(0.0, 0.6), st.floats(0.0, 0.6))
def test_a_model_exists_exactly_when_its_variance_fits_in_0_1(mean, between, within) -> None:
    room = mean * (1 - mean)
    total = between**2 + within**2
    try:
        ScoreModel(mean, mean, between, within)
    except InvalidArgument:
        assert total >= room and total > 0
    else:
        assert total < room or total == 0


# --- power ----------------------------------------------------------------------------


def test_b_equal_to_a_says_b_better_at_most_the_one_sided_level() -> None:
    # B = A on every case (correlation 1): no claim may say "B better" more than 2.5%
    # of the time (the betting intervals' guarantee), beyond Monte-Carlo error.
    for model in (
        ScoreModel(0.5, 0.5, between=0.2, within=0.3),
        ScoreModel(0.85, 0.85, between=0.1, within=0.25),
    ):
        p = score_power(model, 12, 3, experiments=3000, seed=4)
        assert p.power.estimate <= 0.025 + 2 * np.sqrt(0.025 * 0.975 / 3000)
        assert p.false_positive_rate.estimate <= 0.025 + 2 * np.sqrt(0.025 * 0.975 / 3000)
        assert p.power_cases_like_these.estimate <= 0.025 + 2 * np.sqrt(0.025 * 0.975 / 3000)
    # About cases like these the null also holds when B's case means differ from A's,
    # drawn from the same law (correlation 0.3): gains on some cases, losses on others.
    spread = ScoreModel(0.5, 0.5, between=0.25, within=0.2, correlation=0.3)
    p = score_power(spread, 25, 1, experiments=3000, seed=5)
    assert p.power_cases_like_these.estimate <= 0.025 + 2 * np.sqrt(0.025 * 0.975 / 3000)


def test_power_rises_with_the_design_and_the_text_states_it() -> None:
    model = ScoreModel(0.6, 0.75, between=0.15, within=0.15)
    small, large = (score_power(model, c, 2, experiments=1000) for c in (10, 40))
    assert small.power.estimate < large.power.estimate
    text = str(large)
    assert "40 cases x 2 runs per variant (160 calls)" in text
    assert "about these cases: power" in text and "about cases like these: power" in text
    assert json.loads(json.dumps(large.to_dict()))["power"]["method"] == "wilson"


# --- the plan -------------------------------------------------------------------------


def _check_module():
    from simulation import load

    return load("score_plan_check")


@pytest.mark.slow
def test_plans_deliver_their_stated_power_on_other_score_laws() -> None:
    # Reduced simulations/score_plan_check.py: skewed, mostly-0-and-1 and 1-5 rubric
    # scores, planned with the beta model of their moments; the plan's design run on the
    # true law with fresh seeds delivers the power stated (within Monte-Carlo error and
    # the model's misfit) and so the target.
    sim = _check_module()
    laws = (
        sim.Law("skewed", 0.75, 0.12, 0.5),
        sim.Law("bimodal", 0.5, 0.2, 0.35),
        sim.Law("likert", 0.6, 0.15, 0.4),
    )
    for law in laws:
        res = sim.check(law, {"cases": 12}, 1000, 2000, 0, 0)
        plan, n = res["plan"], res["experiments"]
        assert plan.reachable and plan.cases == 12
        got = res["hits"] / n
        assert abs(got - res["stated"].estimate) < 0.05, (law, got, res["stated"])
        assert proportion_ci(res["hits"], n).high > 0.8 - 0.02, law
        assert res["null"] / n <= 0.025 + 2 * np.sqrt(0.025 * 0.975 / n)


def test_the_plan_is_the_fewest_repeats_and_states_a_fresh_simulation() -> None:
    from evalstats.planning._score_plan import _goal, _hits

    model = ScoreModel(0.6, 0.75, between=0.15, within=0.15)
    plan = score_plan(model, cases=10, experiments=1000)
    assert plan.reachable and plan.fixed == "cases" and plan.cases == 10
    fewer = _hits(model, 10, plan.repeats - 1, 1000, seed=0, level=0.95, margin=None)
    assert fewer["these_cases"] / 1000 < _goal(0.8, 1000)  # one repeat fewer falls short
    assert plan.power.seed == 1  # the stated power is not the search's own estimate
    assert plan.power.power.estimate >= 0.8
    text = str(plan)
    assert f"Run 10 cases x {plan.repeats} runs per variant" in text
    assert "About cases like these:" in text


def test_a_plan_out_of_reach_says_so() -> None:
    model = ScoreModel(0.6, 0.61, between=0.15, within=0.15)
    plan = score_plan(model, cases=4, max_repeats=8, experiments=500)
    assert not plan.reachable and plan.repeats == 8
    assert "no number of repeats up to 8 reaches 80% with 4 cases" in str(plan)
    with pytest.raises(InvalidArgument, match="nothing to detect"):
        score_plan(ScoreModel(0.6, 0.6, 0.1, 0.1))


def test_a_gate_plan_counts_passes_of_the_non_inferiority_gate() -> None:
    model = ScoreModel(0.7, 0.7, between=0.1, within=0.15)
    plan = score_plan(model, repeats=2, margin=0.1, experiments=1000)
    assert plan.reachable and plan.power.false_positive_rate is None
    assert "passing the gate at margin 0.1" in str(plan)


def test_a_plan_about_cases_like_these_sizes_for_that_claim() -> None:
    model = ScoreModel(0.6, 0.75, between=0.15, within=0.15)
    plan = score_plan(model, about="cases_like_these", experiments=1000)
    assert plan.reachable and plan.repeats == 1 and plan.about == "cases_like_these"
    assert plan.power.power_cases_like_these.estimate >= 0.8
    fp = plan.power.false_positive_cases_like_these
    assert fp is not None and fp.estimate <= 0.025 + 2 * np.sqrt(0.025 * 0.975 / 1000)
    text = str(plan).splitlines()
    assert "about cases like these;" in text[0]
    assert text[2].startswith("About these cases: power")


# --- the pilot: one-way ANOVA ---------------------------------------------------------


def test_variance_components_by_hand() -> None:
    # Three cases of two runs: case means 0.3, 0.7, 0.5, grand mean 0.5.
    # SS_within = 4 x 0.01 = 0.04 on 6 - 3 df: MS_within = 0.04 / 3;
    # SS_between = 2 (0.04 + 0.04 + 0) = 0.16 on 2 df: MS_between = 0.08;
    # n0 = 2, so the between variance is (0.08 - 0.04 / 3) / 2 = 1 / 30.
    fit = variance_components({"a": [0.2, 0.4], "b": [0.6, 0.8], "c": [0.5, 0.5]})
    assert fit.ms_within == pytest.approx(0.04 / 3, abs=1e-15)
    assert fit.ms_between == pytest.approx(0.08, abs=1e-15)
    assert fit.between == pytest.approx((1 / 30) ** 0.5, abs=1e-14)
    assert fit.within == pytest.approx((0.04 / 3) ** 0.5, abs=1e-14)
    assert fit.mean == pytest.approx(0.5)


def test_variance_components_match_statsmodels_anova_on_an_unbalanced_table() -> None:
    pd = pytest.importorskip("pandas")
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(3)
    cells = {f"c{i}": (i / 12 + rng.beta(2, 3, size=1 + i % 4) / 4).tolist() for i in range(9)}
    frame = pd.DataFrame([(c, y) for c, ys in cells.items() for y in ys], columns=["case", "y"])
    table = anova_lm(ols("y ~ C(case)", data=frame).fit())
    fit = variance_components(cells)
    # statsmodels' one-way ANOVA table: the mean squares of cases and of the residual
    assert fit.ms_between == pytest.approx(table.loc["C(case)", "mean_sq"], rel=1e-10)
    assert fit.ms_within == pytest.approx(table.loc["Residual", "mean_sq"], rel=1e-10)
    sizes = np.array([len(v) for v in cells.values()], dtype=float)
    n0 = (sizes.sum() - (sizes**2).sum() / sizes.sum()) / (len(sizes) - 1)
    assert fit.ms_between > fit.ms_within  # cases differ: the between variance is positive
    assert fit.between**2 == pytest.approx((fit.ms_between - fit.ms_within) / n0, rel=1e-12)


def test_a_large_pilot_recovers_the_model() -> None:
    model = ScoreModel(0.55, 0.65, between=0.18, within=0.12, correlation=0.8)
    a, b = _draw_block(model, 3000, 3, 1, 2, 0, False)
    fitted = fit_score_model(dict(enumerate(a[0].tolist())), dict(enumerate(b[0].tolist())))
    assert fitted.mean_b - fitted.mean_a == pytest.approx(0.1, abs=0.01)
    assert fitted.between == pytest.approx(0.18, abs=0.01)
    assert fitted.within == pytest.approx(0.12, abs=0.005)
    # the copula's 0.8 between normal scores is a little less between the case means
    assert 0.7 < fitted.correlation < 0.82


# --- the command ----------------------------------------------------------------------


_pilot = records.scored_pilot


ARGS = ["--score-a", "0.6", "--score-b", "0.75", "--between", "0.15", "--within", "0.15"]


def test_plan_with_scores_costs_its_calls_at_the_batch_price_given(capsys) -> None:
    argv = ["plan", *ARGS, "--cases", "10", "--experiments", "1000", "--cost-per-call", "0.002"]
    assert main([*argv, "--json"]) == 0
    calls = json.loads(capsys.readouterr().out)["cost"]["calls"]
    assert main([*argv, "--batch-cost-per-call", "0.0012"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    # calls x the batch price, worked by hand: the listed price shown beside it
    assert last == (
        f"Cost: {calls} calls x $0.0012 (the batch price; $0.002 listed) = ${calls * 0.0012:.2f}."
    )
    assert main(["plan", *ARGS, "--cases", "10", "--batch-cost-per-call", "0.0012"]) == 2
    assert "--batch-cost-per-call goes with --cost-per-call" in capsys.readouterr().err


def test_plan_with_scores_prints_the_model_the_design_and_its_power(capsys) -> None:
    assert main(["plan", *ARGS, "--cases", "10", "--experiments", "1000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Plan to detect mean score 0.60 -> 0.75 with 80% power")
    assert "(beta model, correlation 1 between A's and B's case means)" in out[0]
    assert out[1].startswith("Run 10 cases x ") and "by simulation" in out[1]
    assert out[-1].startswith("Designs found by simulating the score model (1000 experiments")
    assert main(["plan", *ARGS, "--cases", "10", "--experiments", "1000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "evalstats.plan/2" and doc["kind"] == "scores"
    assert doc["cases"] == 10 and doc["model"]["between"] == 0.15
    assert 0 <= doc["power"]["power"]["low"] <= doc["power"]["power"]["high"] <= 1


def test_plan_about_cases_like_these_and_about_alone(capsys) -> None:
    argv = ["plan", *ARGS, "--about", "cases-like-these", "--experiments", "500", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["about"] == "cases_like_these" and doc["repeats"] == 1
    assert (
        main(["plan", "--pa", "0.7", "--pb", "0.8", "--icc", "0.1", "--about", "these-cases"]) == 2
    )
    err = capsys.readouterr().err
    assert "--about goes with mean scores" in err and err.count("\n") == 1


def test_power_with_scores_prints_each_design(capsys) -> None:
    argv = ["power", *ARGS, "--cases", "10", "20", "--repeats", "2", "--experiments", "500"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "10 cases x 2 runs per variant (40 calls)" in out
    assert "20 cases x 2 runs per variant (80 calls)" in out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["cases"] for d in doc["designs"]] == [10, 20]


def test_plan_from_a_scored_pilot_fits_its_spreads(tmp_path: Path, capsys) -> None:
    pilot = _pilot(tmp_path / "pilot.jsonl")
    argv = ["plan", "--from", str(pilot), "--score-b", "observed", "--repeats", "2"]
    assert main([*argv, "--experiments", "1000"]) == 0
    out = capsys.readouterr().out
    assert "Fitted from a pilot of 12 cases (36 runs of A, 36 of B" in out
    assert main([*argv, "--experiments", "1000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fitted = doc["model"]["pilot"]["fitted"]
    assert 0.05 < fitted["within_a"] < 0.15  # runs were drawn with SD 0.1
    assert doc["model"]["mean_b"] == pytest.approx(fitted["mean_b"])
    assert main(["plan", "--from", str(pilot), "--score-b", "+0.2", "--experiments", "500"]) == 0
    assert "-> " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--score-a", "1.5", "--score-b", "0.7", "--between", "0.1", "--within", "0.1"],
         "--score-a=1.5 must be a mean score in [0, 1]"),
        (["--score-a", "0.6", "--score-b", "0.7", "--between", "-0.1", "--within", "0.1"],
         "--between=-0.1 must be a standard deviation"),
        (["--score-a", "0.6", "--score-b", "0.7", "--between", "0.45", "--within", "0.2"],
         "--between=0.45 and --within=0.2 are impossible with --score-a=0.6"),
        (["--score-a", "0.6", "--score-b", "0.7", "--between", "0.1"],
         "missing --within"),
        (["--score-a", "0.6", "--pb", "0.7", "--between", "0.1", "--within", "0.1"],
         "--pb is for pass rates"),
        (["--score-a", "0.6", "--score-b", "+0.5", "--between", "0.1", "--within", "0.1"],
         "puts B above 1"),
        (["--score-a", "0.6", "--score-b", "observed", "--between", "0.1", "--within", "0.1"],
         "--score-b observed goes with --from"),
        (["--score-a", "0.6", "--score-b", "0.7", "--between", "0.1", "--within", "0.1",
          "--margin", "2"], "margin=2.0 must be above 0 and below 1"),
    ],
)  # fmt: skip
def test_bad_score_options_are_one_line_and_exit_2(argv, message, capsys) -> None:
    assert main(["plan", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--power", "1.5"], "evalstats: error: power=1.5 must be strictly between 0 and 1\n"),
        (["--margin", "3"], "evalstats: error: margin=3.0 must be above 0 and below 1"),
        (["--experiments", "5"], "evalstats: error: experiments=5 must be at least 100\n"),
        (["--cases", "1"], "evalstats: error: cases=1 must be at least 2\n"),
        (["--seed", "-1"], "evalstats: error: seed=-1 must be at least 0\n"),
    ],
)
def test_a_bad_option_beside_a_scored_pilot_is_named_as_itself(
    tmp_path: Path, capsys, extra, message
) -> None:
    # the option is at fault, not the pilot: its error is not put under --from FILE
    pilot = _pilot(tmp_path / "pilot.jsonl")
    assert main(["plan", "--from", str(pilot), "--score-b", "observed", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


def test_a_pilot_without_scores_and_mixed_options_are_refused(tmp_path: Path, capsys) -> None:
    pilot = _pilot(tmp_path / "binary.jsonl", scored=False)
    assert main(["plan", "--from", str(pilot), "--score-b", "observed"]) == 2
    err = capsys.readouterr().err
    assert f"--from {pilot}: no sample of variant 'A' carries a score" in err
    assert err.count("\n") == 1
    assert main(["power", *ARGS, "--trials", "20"]) == 2
    assert "--trials is for pass rates" in capsys.readouterr().err
    assert main(["power", "--pa", "0.7", "--pb", "0.9", "--trials", "20", "--cases", "4"]) == 2
    assert "--cases goes with mean scores" in capsys.readouterr().err
    assert main(["power", "--pa", "0.7"]) == 2
    err = capsys.readouterr().err
    assert "the following arguments are required: --pb, --trials" in err


@pytest.mark.parametrize(("mean", "sd"), [(0.6, 0.15), (0.05, 0.04), (0.5, 0.45), (0.93, 0.05)])
def test_the_beta_table_is_scipy_stats_beta_ppf_to_the_last_bit(mean, sd):
    # The fixed model's table of case means takes betaincinv, the function
    # scipy.stats.beta.ppf computes, without importing scipy.stats for it.
    from scipy.special import ndtr
    from scipy.stats import beta

    from evalstats.planning._score_plan import _beta_table

    z, q = _beta_table(mean, sd)
    nu = mean * (1 - mean) / sd**2 - 1
    want = np.maximum.accumulate(np.nan_to_num(beta.ppf(ndtr(z), mean * nu, (1 - mean) * nu)))
    assert np.array_equal(q, want)


def test_a_score_plan_for_given_figures_does_not_import_scipy_stats():
    # Importing scipy.stats took 0.6 s of the 2.6 s such a plan takes.
    from imported import imported_of

    argv = ["plan", *ARGS[:6], "--within", "0.1", "--cases", "20", "--experiments", "400"]
    assert imported_of(argv, ["scipy.stats"]) == []
