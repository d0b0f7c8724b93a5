"""Plans from a pilot run: its posterior, the model planned for, the assurance stated."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.planning._pilot import (
    Posterior,
    _case_rates,
    _fisher,
    _log_likelihood,
    _moments,
    _solve_shifts,
    wanted,
)
from evalstats.planning._power import (
    CaseModel,
    case_model_from_results,
    fit_case_model,
    plan,
)
from evalstats.planning._simulate import simulate_clustered
from evalstats.stats._casemodel import PilotCounts


def _outcomes(counts, runs):
    return {f"c{i}": [True] * int(k) + [False] * (runs - int(k)) for i, k in enumerate(counts)}


def _pilot(truth, cases=10, runs=3, seed=0):
    """A fitted pilot of both variants drawn from ``truth``."""
    rng = np.random.default_rng(seed)
    qa, qb = truth.draw(rng, (cases,))
    a = _outcomes(rng.binomial(runs, qa), runs)
    b = _outcomes(rng.binomial(runs, qb), runs)
    return fit_case_model(a, b)


# --- the posterior's pieces against independent references --------------------------


@pytest.mark.parametrize(("mu", "rho"), [(0.3, 0.2), (0.7, 0.5), (0.95, 0.05), (0.5, 0.9)])
def test_likelihood_is_scipys_beta_binomial(mu, rho):
    from scipy.stats import betabinom, binom

    cells = {(0, 3): 2, (2, 3): 1, (3, 3): 4, (4, 7): 1}
    s = 1 / rho - 1
    expected = sum(k * betabinom.logpmf(y, n, mu * s, (1 - mu) * s) for (y, n), k in cells.items())
    # the grid leaves out the binomial coefficients (the same at every cell)
    from scipy.special import comb

    coef = sum(k * math.log(comb(n, y)) for (y, n), k in cells.items())
    got = _log_likelihood(cells, np.array([[mu]]), np.array([[rho]]))
    assert float(got[0, 0]) + coef == pytest.approx(expected, rel=1e-10)
    # rho = 0: every case has rate mu, the counts are binomial
    binomial = sum(k * binom.logpmf(y, n, mu) for (y, n), k in cells.items())
    got0 = _log_likelihood(cells, np.array([[mu]]), np.array([[0.0]]))
    assert float(got0[0, 0]) + coef == pytest.approx(binomial, rel=1e-10)


@pytest.mark.parametrize(("n", "mu", "rho"), [(3, 0.7, 0.3), (1, 0.4, 0.2), (10, 0.9, 0.6)])
def test_fisher_information_is_that_of_scipys_beta_binomial(n, mu, rho):
    # E[score score^T] by enumeration, the scores by central differences of
    # scipy.stats.betabinom.logpmf in (mu, rho): an independent computation.
    from scipy.stats import betabinom

    def logp(y, m, r):
        s = 1 / r - 1
        return betabinom.logpmf(y, n, m * s, (1 - m) * s)

    h = 1e-5
    info = np.zeros((2, 2))
    for y in range(n + 1):
        p = math.exp(logp(y, mu, rho))
        g = np.array(
            [
                (logp(y, mu + h, rho) - logp(y, mu - h, rho)) / (2 * h),
                (logp(y, mu, rho + h) - logp(y, mu, rho - h)) / (2 * h),
            ]
        )
        info += p * np.outer(g, g)
    got = _fisher(n, np.array(mu), np.array(rho))
    assert got == pytest.approx(info, rel=1e-5, abs=1e-8)


def _exact_fisher(n, mu, rho):
    # The information in exact rational arithmetic: with a = mu s and b = (1 - mu)
    # s, p(y) = C(n, y) (a)_y (b)_{n-y} / (a + b)_n (rising factorials) and
    # psi(x + m) - psi(x) = sum_{k<m} 1 / (x + k), exactly, for whole m.
    from fractions import Fraction

    mu, r = Fraction(mu), Fraction(max(rho, 1e-4))
    s = 1 / r - 1
    a, b = mu * s, (1 - mu) * s

    def rising(x, m):
        return math.prod((x + k for k in range(m)), start=Fraction(1))

    def psi_gap(x, m):
        return sum((1 / (x + k) for k in range(m)), Fraction(0))

    info = [[Fraction(0)] * 2 for _ in range(2)]
    for y in range(n + 1):
        p = math.comb(n, y) * rising(a, y) * rising(b, n - y) / rising(a + b, n)
        ga, gb = psi_gap(a, y) - psi_gap(a + b, n), psi_gap(b, n - y) - psi_gap(a + b, n)
        g = (s * (ga - gb), -(mu * ga + (1 - mu) * gb) / r**2)
        for i in range(2):
            for j in range(2):
                info[i][j] += p * g[i] * g[j]
    return np.array([[float(v) for v in row] for row in info])


@pytest.mark.parametrize(
    ("n", "mu", "rho", "rel"),
    [
        (3, 0.7, 0.3, 1e-12),
        (30, 0.05, 0.02, 1e-12),
        (100, 0.97, 0.6, 1e-12),
        # rho = 0 is taken at 1e-4, where a and b are near 1e4: scores cancel
        (3, 0.485, 0.0, 1e-6),
        (100, 0.485, 0.0, 1e-6),
        (10, 0.9, 0.0, 1e-6),
    ],
)
def test_fisher_information_is_the_exact_rational_enumeration(n, mu, rho, rel):
    got = _fisher(n, np.array(mu), np.array(rho))
    want = _exact_fisher(n, mu, rho)
    assert got == pytest.approx(want, rel=rel)


@pytest.mark.parametrize(
    ("mu", "rho", "shift"), [(0.3, 0.2, 1.0), (0.7, 0.5, -0.4), (0.5, 0.02, 2.8)]
)
def test_joint_likelihood_is_the_integral_over_the_case_rate(mu, rho, shift):
    # A case's A and B counts given its rate q ~ Beta, B's rate expit(logit q +
    # shift): the integral by scipy.integrate.quad, against the grid's nodes.
    from scipy.integrate import quad
    from scipy.special import expit, logit
    from scipy.stats import beta, binom

    from evalstats.planning import _pilot

    i = int(np.argmin(abs(_pilot._SHIFTS - shift)))
    s_grid = float(_pilot._SHIFTS[i])
    paired = {(2, 3, 3, 3): 2, (0, 3, 1, 3): 1, (1, 4, 4, 5): 1}
    a, b = mu * (1 / rho - 1), (1 - mu) * (1 / rho - 1)
    expected = 0.0
    for (ya, na, yb, nb), k in paired.items():

        def f(q, ya=ya, na=na, yb=yb, nb=nb):
            qb = expit(logit(q) + s_grid)
            return beta.pdf(q, a, b) * binom.pmf(ya, na, q) * binom.pmf(yb, nb, qb)

        value = quad(f, 0, 1, limit=200, points=[mu])[0]
        from scipy.special import comb

        expected += k * (math.log(value) - math.log(comb(na, ya)) - math.log(comb(nb, yb)))
    got, b_rates = _pilot._joint_log_likelihood(paired, np.array([mu]), np.array([rho]))
    assert float(got[0, 0, i]) == pytest.approx(expected, abs=2e-3)
    mean_b = quad(lambda q: beta.pdf(q, a, b) * expit(logit(q) + s_grid), 0, 1, limit=200)[0]
    assert float(b_rates[0, 0, i]) == pytest.approx(mean_b, abs=1e-4)


def test_b_counts_sharpen_the_posterior_only_where_both_variants_ran():
    fitted = _pilot(CaseModel(0.5, 0.65, 0.1), seed=6)
    both = Posterior(fitted.pilot, wanted("+0.15"), p_a=None, spread=0.0, seed=0)
    alone = Posterior(
        fit_case_model(_outcomes([k for k, _ in fitted.pilot.a], 3)).pilot,
        wanted("+0.15"),
        p_a=None,
        spread=0.0,
        seed=0,
    )
    assert both.joint and not alone.joint
    width = lambda post: post.icc_interval[2] - post.icc_interval[1]  # noqa: E731
    assert width(both) < width(alone)
    # B on half of A's cases: those enter jointly, the others by A's counts alone
    half = PilotCounts(fitted.pilot.a, fitted.pilot.pairs[:5], fitted.pilot.b[:5])
    part = Posterior(half, wanted("+0.15"), p_a=None, spread=0.0, seed=0)
    assert part.joint and width(both) <= width(part) + 0.02


@settings(max_examples=40, deadline=None)
@given(
    mu=st.floats(0.1, 0.9),
    rho=st.sampled_from([0.0, 0.01, 0.1, 0.3, 0.5, 0.7]),
    gain=st.floats(0.02, 0.3),
    spread=st.sampled_from([0.0, 0.5]),
)
def test_vectorised_moments_match_the_case_model(mu, rho, gain, spread):
    # The posterior's draws solve B's shift and the moments at 64 Gauss-Legendre
    # nodes of each Beta's quantile scale, all at once; CaseModel does it one
    # model at a time by Gauss-Jacobi quadrature.
    p_b = min(mu + gain, 0.99)
    x = _case_rates(np.array([mu]), np.array([rho]))
    shift = _solve_shifts(x, np.array([p_b]), spread)
    between, within = _moments(x, shift, spread)
    m = CaseModel(mu, p_b, rho, spread).moments()
    # B's mean under the shift found, by CaseModel's own quadrature, is p_b
    from evalstats.stats._casemodel import _hermite, _shifted

    model = CaseModel(mu, p_b, rho, spread)
    nodes, weights = model._nodes()
    w = weights[:, None] * _hermite(spread)[1][None, :]
    mean_b = float((_shifted(nodes[:, None], float(shift[0]), spread) * w).sum())
    assert mean_b == pytest.approx(p_b, abs=2e-5)
    assert float(between[0]) == pytest.approx(m["between"], rel=0.005, abs=1e-6)
    assert float(within[0]) == pytest.approx(m["within"], rel=0.001)


def test_a_large_pilot_pins_the_model_down():
    truth = CaseModel(0.6, 0.8, 0.3)
    fitted = _pilot(truth, cases=2000, runs=5, seed=3)
    post = Posterior(fitted.pilot, wanted("+0.2"), p_a=None, spread=0.0, seed=0)
    mean, low, high = post.mu_interval
    assert low <= 0.6 <= high and high - low < 0.05
    mean, low, high = post.icc_interval
    assert low <= 0.3 <= high and high - low < 0.1


def test_a_small_pilot_leaves_wide_intervals_that_the_plan_states():
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=1)
    p = plan(p_b="+0.2", pilot=fitted, repeats=3, experiments=1000)
    mean, low, high = p.pilot["p_a_interval"]
    assert high - low > 0.2  # 30 runs of A, spread over 10 cases
    text = str(p)
    assert "from a pilot of 10 cases x 3 runs" in text
    assert "averaged over what the pilot leaves uncertain (assurance)" in text
    assert "of the case models the pilot allows (planned for 80%)" in text
    json.dumps(p.to_dict())


# --- the plan from a pilot --------------------------------------------------------------


def test_the_design_reaches_the_target_in_the_certainty_of_the_pilots_models():
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=2)
    p = plan(p_b="+0.2", pilot=fitted, repeats=3, experiments=1000, certainty=0.8)
    assert p.reachable and p.reach.estimate >= 0.7  # a fresh 200 models: 0.8 up to noise
    # independently: models drawn from the posterior, each simulated by
    # simulate_clustered (CaseModel's own draws) at the design
    post = Posterior(fitted.pilot, wanted("+0.2"), p_a=None, spread=fitted.spread, seed=0)
    powers = [
        simulate_clustered(
            post.model(k), cases=p.cases, repeats=3, experiments=200, seed=k
        ).power.estimate
        for k in range(0, 4000, 40)
    ]
    assert np.mean(np.array(powers) >= 0.8) >= 0.7
    # and a larger certainty asks for more cases
    surer = plan(p_b="+0.2", pilot=fitted, repeats=3, experiments=1000, certainty=0.95)
    assert surer.cases > p.cases and surer.reach.estimate > p.reach.estimate


def test_the_assurance_is_the_average_power_of_the_pilots_models():
    # Posterior.assurance draws a fresh model for every experiment; averaging
    # simulate_clustered (CaseModel's own draws) over the ranked draws is an
    # independent path to the same figure.
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=4)
    post = Posterior(fitted.pilot, wanted("+0.2"), p_a=None, spread=0.0, seed=0)
    got, false_positives = post.assurance(30, 3, experiments=20_000, level=0.95, stream=1)
    assert false_positives.high < 0.025  # the rule's own error, averaged the same way
    powers = [
        simulate_clustered(
            post.model(k), cases=30, repeats=3, experiments=200, seed=k
        ).power.estimate
        for k in range(0, 4000, 20)
    ]
    sd = math.sqrt(np.var(powers) / len(powers) + (got.high - got.low) ** 2 / 16)
    assert float(got.estimate) == pytest.approx(float(np.mean(powers)), abs=4 * sd)


def test_the_approximate_assurance_is_statsmodels_power_averaged_over_the_draws():
    from statsmodels.stats.power import TTestPower

    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=4)
    p = plan(p_b="+0.2", pilot=fitted, repeats=3, simulate=False)
    post = Posterior(fitted.pilot, wanted("+0.2"), p_a=None, spread=0.0, seed=0)
    d = post.ranked
    effect = d.difference / np.sqrt(d.between + d.within / 3)
    power = TTestPower().power(effect_size=effect, nobs=p.cases, alpha=0.025, alternative="larger")
    assert p.power == pytest.approx(float(np.mean(power)), abs=1e-6)


def test_the_observed_gain_is_planned_for_only_when_asked():
    fitted = _pilot(CaseModel(0.6, 0.9, 0.2), seed=5)
    with pytest.raises(InvalidArgument, match=r"p_b=None: a plan from a pilot needs"):
        plan(pilot=fitted)
    p = plan(p_b="observed", pilot=fitted, repeats=3, simulate=False)  # simulated: the CLI test
    gain = p.pilot["gain_interval"]
    assert gain[1] < gain[0] < gain[2]
    assert "the pilot's own gain of B over A" in str(p)


def test_a_pilot_that_shows_no_clear_gain_cannot_be_planned_for_its_own_gain():
    alike = fit_case_model(
        _outcomes([2, 1, 3, 0, 2, 2, 1, 3, 2, 1], 3), _outcomes([2, 2, 3, 0, 1, 2, 1, 3, 2, 1], 3)
    )
    with pytest.raises(InvalidArgument, match=r"that B is no better than A; give the p_b"):
        plan(p_b="observed", pilot=alike, repeats=3, experiments=500)


def test_a_rate_a_pilot_leaves_no_room_for_is_refused():
    high = fit_case_model(_outcomes([3] * 10, 3))
    with pytest.raises(InvalidArgument, match=r"p_b=0.6: the pilot puts A's rate at"):
        plan(p_b=0.6, pilot=high, repeats=3)


def test_fixing_a_rate_leaves_the_icc_uncertain():
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=2)
    p = plan(0.7, "+0.2", pilot=fitted, repeats=3, simulate=False)
    assert p.model.p_a == 0.7 and p.model.p_b == pytest.approx(0.9)
    assert p.pilot["p_a"] == 0.7 and "A's rate 70% (given)" in str(p)


def test_a_pilot_that_allows_identical_cases_plans_in_finite_numbers():
    # Drawn models at icc 0 have (nearly) no spread between cases: their
    # normal approximation's effect is enormous, and its power was NaN, which
    # the plan's JSON refused (test_compare_stream's pilot).
    rng = np.random.default_rng(7)
    a, b = ({f"c{i}": [bool(x) for x in rng.random(6) < p] for i in range(6)} for p in (0.5, 0.8))
    p = plan(p_b="+0.1", pilot=fit_case_model(a, b), simulate=False)
    assert p.pilot["icc_interval"][1] == 0.0
    json.dumps(p.to_dict(), allow_nan=False)
    assert p.ceiling == 1.0 and p.approximate_ceiling == 1.0


def test_a_spread_given_with_a_pilot_is_planned_for_and_said():
    # A spread of B's gain that 10 cases cannot tell from 0 is fitted as 0;
    # given, it is planned for (more cases) and the plan says it was given.
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=2)
    p = plan(p_b="+0.2", pilot=fitted, repeats=3, spread=1.0, simulate=False)
    assert p.pilot["spread"] == 1.0 and p.pilot["spread_given"]
    assert "spread 1 (given)" in str(p)
    q = plan(p_b="+0.2", pilot=fitted, repeats=3, simulate=False)
    assert fitted.spread == 0.0 and not q.pilot["spread_given"] and q.cases < p.cases


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p_b": "+0.2", "icc": 0.3}, r"icc=0.3 with pilot="),
        ({"p_b": "+0.2", "model": CaseModel(0.5, 0.6, 0.1)}, r"model= and pilot= exclude"),
        ({"p_b": "+1.5"}, r"p_b='\+1.5' must be a gain over A between"),
        ({"p_b": "more"}, r"p_b='more' must be a rate such as 0.9"),
        ({"p_b": 1.7}, r"p_b=1.7"),
        ({"p_b": "+0.2", "certainty": 1.0}, r"certainty=1.0 must be strictly between"),
        ({"p_b": "+0.2", "spread": -1}, r"spread=-1"),
    ],
)
def test_bad_pilot_arguments_are_named(kwargs, message):
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=2)
    with pytest.raises(InvalidArgument, match=message):
        plan(pilot=fitted, repeats=3, experiments=500, **kwargs)


def test_a_fitted_model_is_not_taken_as_truth_unless_rebuilt():
    fitted = _pilot(CaseModel(0.7, 0.9, 0.3), seed=2)
    with pytest.raises(InvalidArgument, match=r"is fitted from a pilot of 10 cases: pass it as"):
        plan(model=fitted)
    with pytest.raises(InvalidArgument, match=r"pilot=CaseModel\(.*\) must be a CaseModel fitted"):
        plan(p_b=0.9, pilot=CaseModel(0.7, 0.9, 0.3))
    truth = CaseModel(fitted.p_a, fitted.p_b, fitted.icc, fitted.spread)
    assert plan(model=truth, repeats=3, simulate=False).reachable
    one = fit_case_model(_outcomes([2, 1, 3], 3))
    with pytest.raises(InvalidArgument, match=r"the pilot ran one variant"):
        plan(p_b="observed", pilot=one)


def test_given_rates_take_a_gain_and_refuse_the_observed_one():
    p = plan(0.7, "+0.2", icc=0.3, repeats=3, simulate=False)
    assert p.model.p_b == pytest.approx(0.9)
    with pytest.raises(InvalidArgument, match=r"p_b='observed' plans for a pilot's own B"):
        plan(0.7, "observed", icc=0.3)
    with pytest.raises(InvalidArgument, match=r"puts B above 100%"):
        plan(0.9, "+0.2", icc=0.3)
    assert case_model_from_results  # the same vocabulary: see test_cli_plan_from_a_pilot


# --- the command ------------------------------------------------------------------------------


def _write_pilot(path: Path, cases=10, runs=3, seed=3):
    from evalstats.results._file import ResultsWriter

    truth = CaseModel(0.7, 0.9, 0.3)
    rng = np.random.default_rng(seed)
    qa, qb = truth.draw(rng, (cases,))
    writer = ResultsWriter.create(path, {"variants": ["A", "B"], "runs": runs})
    for c in range(cases):
        for r in range(runs):
            for v, q in (("A", qa[c]), ("B", qb[c])):
                verdict = "passed" if rng.random() < q else "failed"
                writer.write_sample(
                    {
                        "case": f"c{c}",
                        "variant": v,
                        "repeat": r,
                        "status": "completed",
                        "checks": [{"status": verdict}],
                    }
                )
    writer.close({})
    return path


def test_cli_plan_from_a_pilot_refuses_without_pb(tmp_path, capsys):
    path = _write_pilot(tmp_path / "pilot.jsonl")
    assert main(["plan", "--from", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "never the pilot's own gain unless asked: give --pb" in err
    assert main(["plan", "--from", str(path), "--pb", "+0.2", "--certainty", "2"]) == 2
    assert "certainty=2" in capsys.readouterr().err
    assert main(["plan", "--pa", "0.7", "--pb", "0.9", "--icc", "0.3", "--certainty", "0.9"]) == 2
    assert "--certainty goes with --from" in capsys.readouterr().err
    assert main(["plan", "--pa", "0.7", "--pb", "observed", "--icc", "0.3"]) == 2
    err = capsys.readouterr().err
    assert err == "evalstats plan: --pb observed goes with --from (a pilot run)\n"
    assert main(["plan", "--from", str(path), "--pb", "abc"]) == 2
    assert "p_b='abc' must be a rate" in capsys.readouterr().err


def test_cli_plan_from_a_pilot(tmp_path, capsys):
    path = _write_pilot(tmp_path / "pilot.jsonl")
    args = ["plan", "--from", str(path), "--repeats", "3", "--experiments", "1000"]
    assert main([*args, "--pb", "+0.2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pilot"]["p_b"] == {"kind": "gain", "value": 0.2}
    assert doc["assurance"]["estimate"] == doc["power"]
    assert doc["certainty"] == 0.8 and doc["repeats"] == 3
    # the Python API gives the same plan
    fitted = case_model_from_results(path)
    same = plan(p_b="+0.2", pilot=fitted, repeats=3, experiments=1000)
    assert same.cases == doc["cases"] and same.power == doc["power"]
    assert main([*args, "--pb", "observed"]) == 0
    assert "the pilot's own gain of B over A" in capsys.readouterr().out
    assert main([*args, "--pb", "0.95", "--pa", "0.7"]) == 0
    assert "70% -> 95%" in capsys.readouterr().out


# --- plans from pilots deliver what they state (simulations/plan_check.py, reduced) ----------


def _plan_check():
    from simulation import load

    return load("plan_check")


@pytest.mark.slow
def test_plans_from_pilots_deliver_the_power_they_state():
    # Part 2 of simulations/plan_check.py reduced to 10 pilots of 10 cases x 3
    # runs from one truth, 0.7 -> 0.9 at icc 0.3, asking for +0.2 at 1 run a
    # case, planned with 1,000 experiments and checked with 4,000. The full
    # simulation's goal: the delivered power within 3 points of the stated on
    # average, and at least 75% of the designs reaching 80%. Here the mean gap
    # is allowed 3 points plus two standard errors over the 10 pilots, and 6
    # of 10 designs must reach 80% (10 designs that each do with probability
    # 0.8 give 6 or more with probability 0.97, scipy.stats.binom.sf(5, 10, 0.8)).
    # The estimates taken as truth, the old plan --from, reach it less often.
    r = _plan_check().pilot_trials(
        (0.7, 0.9, 0.3, 0.0),
        "gain",
        1,
        pilots=10,
        seed=0,
        experiments=1000,
        check=4000,
    )
    assert r["refused"].sum() == 0
    gap = r["delivered"] - r["stated"]
    se = float(np.std(gap, ddof=1)) / math.sqrt(gap.size)
    assert abs(float(np.mean(gap))) <= 0.03 + 2 * se
    reached = int(np.sum(r["delivered"] >= 0.8))
    assert reached >= 6
    assert np.mean(r["point_delivered"] >= 0.8) < reached / 10
