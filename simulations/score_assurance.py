"""Do score plans from a pilot deliver the assurance they state?

``evalstats plan --from PILOT --score-b ...`` on a scored pilot fits the
score model by a one-way analysis of variance, finds the design for the
fitted model, and states its assurance: its power averaged over what the
pilot leaves uncertain (:func:`evalstats.planning._score_pilot.score_assurance`).
Assurance is a claim about power, so it is measured as power is: draw true
score models, draw a pilot of each, plan from the pilot as the command
does, and run the design found on the true model.

Each trial draws a true model from a spread (:data:`SPREAD`: A's mean,
B's gain, the SDs of case means and of a case's runs, the correlation of
A's and B's case means), draws one pilot of 10 cases x 3 runs per variant
from it (the planner's own beta model), plans for 80% power about these
cases with 30 cases (the repeats found), asking for the true gain or for
the pilot's own B (half each), and runs the design found on the true model
(``--experiments`` experiments, judged by the comparison's own rule).
Printed over all plans, by what they ask, and by the assurance stated:

- ``stated``: the assurance the plan states, averaged over the plans;
- ``realised``: the true power of the designs, averaged over the plans
  (what a person planning from such pilots gets, on average);
- ``decided``: the share of designs that decided when each was run once on
  the true model (a Bernoulli draw of its true power, the plain count);
- ``as fitted``: the power the plan states for the fitted model, taken as
  the truth (what ``plan --from`` stated before it stated assurance).

Ranges are 95% Monte-Carlo intervals over the plans (t intervals of the
means of per-plan figures, and of the paired difference realised - stated;
Wilson for ``decided``).

Measured (``--pilots 300 --experiments 2000 --plan-experiments 1000``,
seed 0; 525 s on a loaded 2-core machine; 9 pilots refused, as the command
refuses them)::

    plans       n  stated             realised           realised - stated  as fitted
    all       291  75.9 (74.7-77.2)   82.3 (79.7-85.0)   +6.4 (+3.5, +9.3)  87.3 (86.4-88.3)
    gain      146  82.4 (81.2-83.6)   88.1 (86.5-89.6)   +5.6 (+4.2, +7.1)  88.5 (87.6-89.4)
    observed  145  69.4 (67.8-71.0)   76.6 (71.6-81.5)   +7.2 (+1.5, +12.9) 86.1 (84.4-87.9)
    50-80%    185  69.9 (69.0-70.9)   80.3 (76.7-83.9)   +10.4 (+6.4, +14.3)
    80-95%     93  86.0 (85.1-86.9)   84.3 (80.2-88.3)   -1.7 (-5.8, +2.3)
    95-100%    11  98.0 (96.9-99.0)   96.8 (93.1-100.5)  -1.1 (-4.9, +2.7)

(in percent; decided, run once on the truth: 82.1% (77.3% to 86.1%) of all
designs, 84.2% of those given the gain, 80.0% of those for the pilot's own.)

The stated assurance is conservative: the designs deliver 6.4 points more
on average (5.6 when the gain is given, 7.2 for the pilot's own gain, and
10 points where the assurance stated is 50-80%), while the power of the
fit taken as truth is 5.0 points too high (9.5 for the pilot's own gain).
The reference posterior's variances are skewed towards larger values
(with 10 cases the case means' variance has posterior mean 9/7 of its
estimate), and for the pilot's own gain it allows gains near 0 that these
true models never have: averaged over what a pilot allows, the power is
lower than that of the models actually drawn. ``--quick`` (40 pilots,
37 plans, 46 s): stated 77.6%, realised 74.9% (-2.7, -12.4 to +6.9).

Sized with a certainty (``--certainty 0.8``): each pilot is planned a second
time as ``plan --from PILOT --certainty 0.8`` plans it (the fewest repeats on
30 cases whose power reaches 80% in 80% of 200 score models drawn from the
pilot's posterior, 10 experiments per model at ``--plan-experiments 1000``),
and both designs are run on the true model. Printed: the share of true
models on which each design's true power reaches the target, with its 95%
Wilson interval. Measured (``--pilots 160 --experiments 2000
--plan-experiments 1000 --certainty 0.8``, seed 0; 859 s of one core, 5
pilots refused)::

    true power at least 80%, of 155 true models:
      sized with --certainty 0.8: 88% (82% to 93%) (realised 92.0% (89.9 to 94.2),
                                  runs per variant 1149 on average)
      sized for the fit:          72% (65% to 79%) (runs per variant 487 on average)

(the same run's other rows: stated assurance 76.2% (74.6 to 77.8), realised
81.6% (78.0 to 85.2), realised - stated +5.4 points (+1.4 to +9.4), as fitted
87.7% (86.6 to 88.8), in line with the 300-pilot figures above.) Designs
sized for 80% of what the pilot allows deliver the target on 88% of the true
models, above the 80% asked, where designs sized for the fit deliver it on
72%, at 2.4 times the runs on average. The share is above the certainty
asked, as the reference posterior's lean towards larger spreads (above)
would make it.

At the command's own setting (``--plan-experiments 4000``, the default:
40 experiments per drawn model), with ``--naming`` (below) also printing
the reach each plan states (the share of 200 fresh models from its
posterior whose simulated power reaches the target) against the share of
true models on which the designs deliver it (a calibrated reach matches
it on average; each plan's truth is one model, so no per-plan share is
there for its interval to cover). Measured (``--pilots 60 --experiments
2000 --certainty 0.8 --naming``, seed 0; 838 s, 4 pilots refused)::

    true power at least 80%, of 56 true models:
      sized with --certainty 0.8: 88% (76% to 94%) (realised 91.7% (88.3 to 95.1),
                                  runs per variant 915 on average)
      sized for the fit:          63% (49% to 74%) (runs per variant 424 on average)
    fresh power of the model named - the order statistic, over 56 plans (points):
      first tied (before)  mean +1.6 (+0.2 to +3.0), SD 5.2 (4.4 to 6.4),
                           mean |gap| 4.3 (3.4 to 5.2)
      by effect (now)      mean +0.6 (-0.4 to +1.6), SD 3.7 (3.1 to 4.6),
                           mean |gap| 2.9 (2.2 to 3.5)
      |gap| before - now:  +1.4 (+0.4 to +2.5)
    reach stated 82.3% (79.3 to 85.3), delivered 88% (76% to 94%) of the true
    models, delivered - stated +5.2 points (-4.4 to +14.7), paired over the plans

The reach stated is within the delivered share's interval, on the
conservative side as the certainty itself is.

Naming the model (``--certainty 0.8 --naming``): a plan sized with a
certainty names the drawn model at the order statistic it was sized by
and states that model's power. A model's simulated power takes only one
value more than its experiments, so about a dozen models tie there (at
10 experiments a model); the plan names the one nearest the certainty's
point of the design's standardized effect, where it named the first tied
before. Printed: the fresh power (``--experiments``) of each minus the
order statistic, its mean and SD (t and chi-square 95% intervals over the
plans), the mean absolute gap, and the paired difference of the absolute
gaps. Measured (``--pilots 100 --experiments 2000 --plan-experiments 1000
--certainty 0.8 --naming``, seed 0, 10 experiments a model; 802 s, 4
pilots refused; in points)::

    fresh power of the model named - the order statistic, over 96 plans:
      first tied (before)  mean +3.9 (+2.1 to +5.8), SD 9.2 (8.1 to 10.7),
                           mean |gap| 7.8 (6.5 to 9.0)
      by effect (now)      mean +1.1 (-0.0 to +2.1), SD 5.3 (4.6 to 6.2),
                           mean |gap| 4.4 (3.8 to 5.1)
      |gap| before - now:  +3.3 (+2.0 to +4.7)

The model named is now 3.3 points nearer the power the design was sized
by, its gap's SD nearly halved; the designs are those found before (the
order statistic still sizes them). At the command's 40 experiments a
model (above) fewer models tie and the gain is smaller: 1.4 points, the
SD 5.2 down to 3.7.

Usage::

    python simulations/score_assurance.py [--pilots 300] [--experiments 2000]
        [--plan-experiments 4000] [--seed 0] [--quick] [--certainty 0.8] [--naming]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from evalstats.errors import InvalidArgument
from evalstats.planning._pilot import Wanted
from evalstats.planning._power import at_certainty
from evalstats.planning._score_pilot import ModelPowers, ScorePosterior, pilot_score_plan
from evalstats.planning._score_plan import (
    ScoreModel,
    _draw_block,
    fit_score_model,
    score_power,
)
from evalstats.stats._intervals import Interval, proportion_ci

TARGET = 0.8
LEVEL = 0.95
PILOT_CASES, PILOT_REPEATS = 10, 3
CASES = 30


@dataclass(frozen=True)
class Truth:
    """A true score model and what the plan asks B to reach."""

    model: ScoreModel
    ask: str  # "gain": the true gain; "observed": the pilot's own B


def draw_truth(rng: np.random.Generator) -> Truth:
    """A true model from the spread of :data:`SPREAD` (drawn again until possible)."""
    while True:
        mean_a = rng.uniform(0.4, 0.8)
        gain = rng.uniform(0.04, 0.15)
        between, within = rng.uniform(0.05, 0.25), rng.uniform(0.05, 0.2)
        rho = rng.uniform(0.6, 1.0)
        mean_b = mean_a + gain
        room = min(mean_a * (1 - mean_a), mean_b * (1 - mean_b))
        if mean_b < 0.97 and between**2 + within**2 < 0.9 * room:
            model = ScoreModel(mean_a, mean_b, between, within, rho)
            return Truth(model, "observed" if rng.random() < 0.5 else "gain")


#: The spread true models are drawn from (``draw_truth``).
SPREAD = (
    "A's mean U(0.4, 0.8), gain U(0.04, 0.15), SD of case means U(0.05, 0.25), of a "
    "case's runs U(0.05, 0.2), correlation U(0.6, 1); the plan asks for the true gain or "
    "the pilot's own B, half each"
)


@dataclass(frozen=True)
class Outcome:
    ask: str
    stated: float
    realised: float
    decided: bool
    fitted: float
    design: tuple[int, int]
    #: With ``--certainty``: the true power of the design sized for that share of the
    #: models the pilot allows, and that design.
    sure: float | None = None
    sure_design: tuple[int, int] | None = None
    #: With ``--certainty``: the order statistic of the drawn models' powers the design
    #: was sized by, the fresh power (on ``--experiments``) of the model the plan names
    #: and of the first model tied with it (how it was named before ties were broken by
    #: the standardized effect), and the reach the plan states (estimate, low, high).
    at_point: float | None = None
    named: float | None = None
    first_tied: float | None = None
    reach: tuple[float, float, float] | None = None


def one_pilot(truth: Truth, index: int, args: argparse.Namespace) -> Outcome | None:
    """Plan from one pilot of ``truth`` and run the design on the truth; None when the
    pilot leaves nothing to plan for (the command refuses it)."""
    seed = args.seed * 1_000_003 + index
    a, b = _draw_block(truth.model, PILOT_CASES, PILOT_REPEATS, 1, 90_000 + seed, index, False)
    scores_a = {i: a[0, i].tolist() for i in range(PILOT_CASES)}
    scores_b = {i: b[0, i].tolist() for i in range(PILOT_CASES)}
    fitted = fit_score_model(scores_a, scores_b)
    gain = truth.model.mean_b - truth.model.mean_a
    if truth.ask == "gain":
        wanted = Wanted("gain", gain)
        mean_b = fitted.mean_a + gain
        if mean_b > 1.0:
            return None
    else:
        wanted = Wanted("observed")
        mean_b = fitted.mean_b
        if mean_b <= fitted.mean_a:
            return None  # nothing to detect: the command refuses it
    try:  # as the command fits it, and refuses what it refuses
        model = ScoreModel(
            fitted.mean_a,
            mean_b,
            fitted.between,
            fitted.within,
            fitted.correlation,
            between_b=fitted.spread_b[0],
            within_b=fitted.spread_b[1],
        )
        posterior = ScorePosterior(scores_a, scores_b, wanted=wanted, seed=seed)
        posterior.draw(100, 9)
    except InvalidArgument:
        return None
    options = dict(cases=CASES, power=TARGET, level=LEVEL, experiments=args.plan_experiments,
                   seed=seed)  # fmt: skip
    plan = pilot_score_plan(model, posterior, **options)
    assert plan.assurance is not None

    def on_truth(design: tuple[int, int]) -> float:
        true = score_power(truth.model, *design, level=LEVEL, experiments=args.experiments,
                           seed=seed + 7)  # fmt: skip
        return float(true.power.estimate)

    realised = on_truth((plan.cases, plan.repeats))
    sure = sure_design = None
    named: dict[str, object] = {}
    if args.certainty is not None:
        sized = pilot_score_plan(model, posterior, certainty=args.certainty, **options)
        sure_design = (sized.cases, sized.repeats)
        sure = realised if sure_design == (plan.cases, plan.repeats) else on_truth(sure_design)
        if args.naming:
            named = naming(posterior, sized, args, seed)
    rng = np.random.default_rng([args.seed, index, 3])
    return Outcome(
        truth.ask,
        float(plan.assurance.estimate),
        realised,
        bool(rng.random() < realised),
        float(plan.power.power.estimate),
        (plan.cases, plan.repeats),
        sure,
        sure_design,
        **named,  # type: ignore[arg-type]
    )


def naming(posterior: ScorePosterior, sized: object, args: argparse.Namespace, seed: int) -> dict:
    """The order statistic a plan sized with a certainty was sized by, the fresh powers of
    the model it names and of the first model tied with it, and the reach it states."""
    sizing = ModelPowers(posterior, args.certainty, target=TARGET, level=LEVEL, margin=None,
                         about="these_cases", experiments=args.plan_experiments,
                         seed=seed)  # fmt: skip
    design = (sized.cases, sized.repeats)  # type: ignore[attr-defined]
    powers = sizing.powers(*design)
    first = at_certainty(powers, args.certainty)
    assert sizing.model(*design) == sized.sized_for  # type: ignore[attr-defined]

    def fresh(model: ScoreModel) -> float:
        return float(score_power(model, *design, level=LEVEL, experiments=args.experiments,
                                 seed=seed + 11).power.estimate)  # fmt: skip

    d = sizing.draws.take(first)
    tied = ScoreModel(float(d.mean_a), float(d.mean_b), float(d.between_a),
                      float(d.within_a), float(d.correlation), between_b=float(d.between_b),
                      within_b=float(d.within_b))  # fmt: skip
    reach = sized.reach  # type: ignore[attr-defined]
    return {
        "at_point": float(powers[first]),
        "named": fresh(sized.sized_for),  # type: ignore[attr-defined]
        "first_tied": fresh(tied),
        "reach": (float(reach.estimate), float(reach.low), float(reach.high)),
    }


def _t(values: np.ndarray) -> tuple[float, float, float]:
    from scipy.stats import t

    m = float(values.mean())
    if values.size < 2:
        return m, m, m
    h = float(t.ppf(0.975, values.size - 1)) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return m, m - h, m + h


def _f(triple: tuple[float, float, float], signed: bool = False) -> str:
    m, lo, hi = (100 * x for x in triple)
    fmt = "{:+.1f}" if signed else "{:.1f}"
    return f"{fmt.format(m)}% ({fmt.format(lo)} to {fmt.format(hi)})"


def summary(outcomes: list[Outcome]) -> dict[str, tuple[float, float, float]]:
    stated = np.array([o.stated for o in outcomes])
    realised = np.array([o.realised for o in outcomes])
    fitted = np.array([o.fitted for o in outcomes])
    decided = sum(o.decided for o in outcomes)
    ci = proportion_ci(decided, len(outcomes), method="wilson")
    return {
        "stated": _t(stated),
        "realised": _t(realised),
        "difference": _t(realised - stated),
        "decided": (decided / len(outcomes), float(ci.low), float(ci.high)),
        "fitted": _t(fitted),
    }


#: Bins of stated assurance in which stated and realised are compared.
BINS = ((0.0, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 1.01))


def trials(pilots: int, args: argparse.Namespace) -> list[Outcome]:
    """One true model, one pilot and one plan per trial."""
    rng = np.random.default_rng([args.seed, 41])
    out = []
    for i in range(pilots):
        o = one_pilot(draw_truth(rng), i, args)
        if o is not None:
            out.append(o)
    refused = pilots - len(out)
    print(
        f"{pilots} pilots, {refused} refused (nothing to detect, or SDs the gain makes impossible)"
    )
    return out


def _row(name: str, outcomes: list[Outcome]) -> str:
    s = summary(outcomes)
    return (
        f"{name:16} {len(outcomes):>6}  {_f(s['stated']):22} {_f(s['realised']):22} "
        f"{_f(s['difference'], True):24} {_f(s['decided']):22} {_f(s['fitted'])}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pilots", type=int, default=300)
    parser.add_argument("--experiments", type=int, default=2000)
    parser.add_argument(
        "--plan-experiments",
        type=int,
        default=4000,
        help="experiments per design of each plan (the command's 4,000: 40 per drawn model)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="40 pilots, 1000 experiments")
    parser.add_argument(
        "--certainty",
        type=float,
        default=None,
        help="also plan each pilot with this certainty and count the true models on which "
        "each kind of design delivers the target",
    )
    parser.add_argument(
        "--naming",
        action="store_true",
        help="with --certainty: the fresh power of the model each plan names against the "
        "order statistic it was sized by, and the reach it states against what it delivers",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.pilots, args.experiments = 40, 1000
    start = time.perf_counter()
    outcomes = trials(args.pilots, args)
    print(f"true models: {SPREAD}")
    print(f"{'stated':16} {'plans':>6}  {'stated':22} {'realised':22} "
          f"{'realised - stated':24} {'decided':22} as fitted")  # fmt: skip
    print(_row("all", outcomes))
    for ask in ("gain", "observed"):
        print(_row(f"asks {ask}", [o for o in outcomes if o.ask == ask]))
    for low, high in BINS:
        part = [o for o in outcomes if low <= o.stated < high]
        if len(part) >= 2:
            print(_row(f"{100 * low:.0f}-{min(100, 100 * high):.0f}%", part))
    if args.certainty is not None:
        print(reaching(outcomes, args.certainty))
        if args.naming:
            print(named_gaps(outcomes))
            print(reach_kept(outcomes))
    print(f"({time.perf_counter() - start:.0f} s)")


def reached(outcomes: list[Outcome], sized: bool) -> Interval:
    """The share of true models on which the design delivers the target power (sized with
    the certainty, or for the fit), with its 95% Wilson interval."""
    powers = [o.sure if sized else o.realised for o in outcomes]
    hits = sum(p is not None and p >= TARGET for p in powers)
    return proportion_ci(hits, len(outcomes), method="wilson")


def reaching(outcomes: list[Outcome], certainty: float) -> str:
    """Designs sized with ``certainty`` beside those sized for the fit: how often each
    delivers the target on the true model, and what it costs in runs."""
    runs = np.array([o.design[0] * o.design[1] for o in outcomes], dtype=float)
    sure_runs = np.array([o.sure_design[0] * o.sure_design[1] for o in outcomes
                          if o.sure_design is not None], dtype=float)  # fmt: skip
    sure = np.array([o.sure for o in outcomes if o.sure is not None])
    return "\n".join(
        [
            f"true power at least {TARGET:.0%}, of {len(outcomes)} true models:",
            f"  sized with --certainty {certainty:g}: {reached(outcomes, True)} "
            f"(realised {_f(_t(sure))}, runs per variant {sure_runs.mean():.0f} on average)",
            f"  sized for the fit:          {reached(outcomes, False)} "
            f"(runs per variant {runs.mean():.0f} on average)",
        ]
    )


def _sd(values: np.ndarray) -> tuple[float, float, float]:
    """The SD of ``values`` with its 95% chi-square interval."""
    from scipy.stats import chi2

    n = values.size
    sd = float(values.std(ddof=1))
    return (
        sd,
        sd * math.sqrt((n - 1) / chi2.ppf(0.975, n - 1)),
        sd * math.sqrt((n - 1) / chi2.ppf(0.025, n - 1)),
    )


def gaps(outcomes: list[Outcome]) -> tuple[np.ndarray, np.ndarray]:
    """Fresh power minus the order statistic, of the model named and of the first tied."""
    rows = [o for o in outcomes if o.at_point is not None]
    named = np.array([o.named - o.at_point for o in rows])  # type: ignore[operator]
    first = np.array([o.first_tied - o.at_point for o in rows])  # type: ignore[operator]
    return named, first


def named_gaps(outcomes: list[Outcome]) -> str:
    """How far the named model's fresh power falls from the order statistic, named as the
    plan names it and as the first tied model."""
    after, before = gaps(outcomes)
    lines = [f"fresh power of the model named - the order statistic, over {after.size} plans:"]
    for name, g in (("first tied (before)", before), ("by effect (now)", after)):
        lines.append(
            f"  {name:20} mean {_f(_t(g), True)}, SD {_f(_sd(g))}, mean |gap| {_f(_t(np.abs(g)))}"
        )
    lines.append(f"  |gap| before - now: {_f(_t(np.abs(before) - np.abs(after)), True)}")
    return "\n".join(lines)


def reach_kept(outcomes: list[Outcome]) -> str:
    """The reach plans state against the share of true models on which they deliver: a
    calibrated reach is, averaged over the plans, the share of their true models on which
    the design reaches the target (each plan's own truth is one such model, so the stated
    interval, over the posterior's models, has no per-plan share to cover)."""
    rows = [o for o in outcomes if o.reach is not None]
    stated = np.array([o.reach[0] for o in rows])  # type: ignore[index]
    hit = np.array([o.sure is not None and o.sure >= TARGET for o in rows], dtype=float)
    return (
        f"reach stated {_f(_t(stated))}, delivered {reached(rows, True)} of the true "
        f"models, delivered - stated {_f(_t(hit - stated), True)} (paired over the plans)"
    )


if __name__ == "__main__":
    main()
