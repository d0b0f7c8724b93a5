"""Plans for graded scores: the power of the mean-score comparison, and cases x repeats.

A graded check scores each run in [0, 1]. :class:`ScoreModel` says how the
scores of two variants A and B are spread, and :func:`score_power` and
:func:`score_plan` find, by simulating that model, how often the comparison
actually used (:func:`~evalstats.stats._score_compare.compare_scores` with
``method="auto"``: the betting intervals, about these cases and about cases
like these) says B is better, and the fewest cases x repeats that reach a
target power.

The model (all of it in [0, 1])
-------------------------------
- Case means: each variant's mean score over the runs of one case is drawn
  from a beta distribution with the variant's mean (``mean_a``,
  ``mean_b``) and standard deviation ``between`` (the SD of case means;
  ``between_b`` for B when it differs). A and B are paired by case through a
  Gaussian copula: the normal scores behind A's and B's case means have
  correlation ``correlation`` (1, the default: a case hard for A is as hard
  for B, B's case means a monotone function of A's, as the pass-rate
  plan's spread 0 makes B's gain the same shift for every case).
- Runs: a case with mean mu is scored, run after run, as independent draws
  from a beta with mean mu and concentration kappa (variance mu (1 - mu) /
  (kappa + 1)). ``within`` is the root mean within-case variance over cases
  (the SD of a case's repeated runs, as a one-way analysis of variance
  estimates it), so kappa + 1 = (m (1 - m) - between^2) / within^2. A beta
  with a small kappa is U-shaped: runs scored mostly 0 or 1.
- So the model exists exactly when between^2 + within^2 < m (1 - m), the
  variance of the most spread scores in [0, 1] with mean m (scores all 0 or
  1): a larger SD is impossible for that mean, and refused.

The decision is the comparison's own (:func:`score_decisions`, equal to
``compare_scores(...).verdict == "b_better"`` and to
``score_non_inferiority(...).passed``, tested on random inputs), computed
for many simulated experiments at once: one evaluation of the betting
capital at the grid point the interval's bisection would have to pass,
instead of the bisection. Designs are searched with common random numbers
(every case, in every block of experiments, has its own random stream, so a
design with one more case or one more repeat adds draws and changes none),
and the design found is simulated afresh for the power it states.
``simulations/score_plan_check.py`` checks that the designs reach their
stated power when the scores are in truth skewed, mostly 0 and 1, or on a
1-5 rubric. What a pilot the model is fitted from leaves uncertain, and a
design's power averaged over it (its assurance), are
:mod:`~evalstats.planning._score_pilot`'s.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._validate import check_level
from ..errors import InvalidArgument
from ..stats._claims import claim_words

if TYPE_CHECKING:
    import numpy as np

    from ..stats._intervals import Interval

__all__ = [
    "ScoreModel",
    "ScorePlan",
    "ScorePower",
    "fit_score_model",
    "score_decisions",
    "score_model_from_results",
    "score_plan",
    "score_power",
    "variance_components",
]


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------


def _number(name: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={value!r} must be a number") from None
    if math.isnan(x) or math.isinf(x):
        raise InvalidArgument(f"{name}={value!r} must be a finite number")
    return x


def _mean(name: str, value: Any) -> float:
    x = _number(name, value)
    if not 0.0 <= x <= 1.0:
        raise InvalidArgument(f"{name}={value!r} must be a mean score in [0, 1]")
    return x


def _sd(name: str, value: Any) -> float:
    x = _number(name, value)
    if x < 0.0:
        raise InvalidArgument(f"{name}={value!r} must be a standard deviation, at least 0")
    return x


def _possible(mean: float, between: float, within: float, names: tuple[str, str, str]) -> None:
    """Refuse SDs no scores in [0, 1] with this mean can have."""
    room = mean * (1.0 - mean)
    total = between * between + within * within
    if total == 0.0:
        return
    if total >= room or (within == 0.0 and between * between >= room):
        m, b, w = names
        raise InvalidArgument(
            f"{b}={between:g} and {w}={within:g} are impossible with {m}={mean:g}: scores in "
            f"[0, 1] with mean {mean:g} have variance below m (1 - m) = {room:.4g} (an SD "
            f"below {math.sqrt(room):.3g}), and {b}^2 + {w}^2 = {total:.4g} is not below it"
        )


@dataclass(frozen=True)
class ScoreModel:
    """How two variants' scores in [0, 1] are spread, for planning (see the module).

    Parameters
    ----------
    mean_a, mean_b : float
        Each variant's mean score over cases like these, in [0, 1].
    between : float
        The SD of A's case means (the mean score of each case over many runs).
    within : float
        The SD of a case's repeated runs (root mean over cases of A's
        within-case variances).
    correlation : float
        Correlation, in [-1, 1], of the normal scores behind A's and B's case
        means (a Gaussian copula): 1, the default, ranks the cases the same
        for both variants.
    between_b, within_b : float, optional
        B's, when they differ from A's (default: A's).
    pilot : dict, optional
        What the model was fitted from (:func:`fit_score_model`).

    Every argument is checked here: a mean outside [0, 1], a negative SD, or
    SDs that no scores in [0, 1] with that mean can have (between^2 +
    within^2 must be below m (1 - m)) are refused, naming the argument.

    >>> print(ScoreModel(0.6, 0.7, between=0.15, within=0.1))
    A 0.60, B 0.70; SD of case means 0.15, of a case's runs 0.10; correlation 1
    """

    mean_a: float
    mean_b: float
    between: float = 0.0
    within: float = 0.0
    correlation: float = 1.0
    between_b: float | None = None
    within_b: float | None = None
    pilot: dict[str, Any] | None = field(default=None, compare=False)
    names: dict[str, str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        n = {
            "mean_a": "mean_a",
            "mean_b": "mean_b",
            "between": "between",
            "within": "within",
            "correlation": "correlation",
            "between_b": "between_b",
            "within_b": "within_b",
            **(self.names or {}),
        }
        set_ = object.__setattr__
        set_(self, "mean_a", _mean(n["mean_a"], self.mean_a))
        set_(self, "mean_b", _mean(n["mean_b"], self.mean_b))
        set_(self, "between", _sd(n["between"], self.between))
        set_(self, "within", _sd(n["within"], self.within))
        rho = _number(n["correlation"], self.correlation)
        if not -1.0 <= rho <= 1.0:
            raise InvalidArgument(f"{n['correlation']}={self.correlation!r} must be in [-1, 1]")
        set_(self, "correlation", rho)
        if self.between_b is not None:
            set_(self, "between_b", _sd(n["between_b"], self.between_b))
        if self.within_b is not None:
            set_(self, "within_b", _sd(n["within_b"], self.within_b))
        _possible(self.mean_a, self.between, self.within, (n["mean_a"], n["between"], n["within"]))
        b_names = (
            n["mean_b"],
            n["between_b"] if self.between_b is not None else n["between"],
            n["within_b"] if self.within_b is not None else n["within"],
        )
        _possible(self.mean_b, self.spread_b[0], self.spread_b[1], b_names)

    @property
    def spread_b(self) -> tuple[float, float]:
        """B's (between, within)."""
        return (
            self.between if self.between_b is None else self.between_b,
            self.within if self.within_b is None else self.within_b,
        )

    def with_b(self, mean_b: float) -> ScoreModel:
        """The same model with B's mean replaced (its spreads kept)."""
        return replace(self, mean_b=mean_b)

    def null(self) -> ScoreModel:
        """B scoring as A on every case: A's mean and spreads, correlation 1."""
        return ScoreModel(self.mean_a, self.mean_a, self.between, self.within, 1.0)

    def _sd_text(self) -> str:
        bb, wb = self.spread_b
        if (bb, wb) == (self.between, self.within):
            return f"SD of case means {self.between:.2f}, of a case's runs {self.within:.2f}"
        return (
            f"SD of case means {self.between:.2f} (B {bb:.2f}), of a case's runs "
            f"{self.within:.2f} (B {wb:.2f})"
        )

    def __str__(self) -> str:
        return (
            f"A {self.mean_a:.2f}, B {self.mean_b:.2f}; {self._sd_text()}; "
            f"correlation {self.correlation:.2g}"
        )

    def to_dict(self) -> dict[str, Any]:
        bb, wb = self.spread_b
        return {
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "between": self.between,
            "within": self.within,
            "between_b": bb,
            "within_b": wb,
            "correlation": self.correlation,
            "pilot": self.pilot,
        }


#: Normal scores of the table through which a beta's quantiles are read.
_GRID = 4097
_Z_EDGE = 8.5


@functools.lru_cache(maxsize=64)
def _beta_table(mean: float, sd: float) -> tuple[np.ndarray, np.ndarray]:
    """(z, q): q the quantile of the beta with this mean and SD at Phi(z), on a grid of z."""
    import numpy as np
    from scipy.special import betaincinv, ndtr

    z = np.linspace(-_Z_EDGE, _Z_EDGE, _GRID)
    nu = mean * (1.0 - mean) / (sd * sd) - 1.0
    # scipy.stats.beta.ppf computes this same function (Boost's ibeta_inv), to the
    # last bit; importing scipy.stats for it took 0.6 s of a score plan's 2.6 s
    q = betaincinv(mean * nu, (1.0 - mean) * nu, ndtr(z))
    q = np.maximum.accumulate(np.nan_to_num(q, nan=0.0))
    z.setflags(write=False)
    q.setflags(write=False)
    return z, q


def _case_means(mean: float, sd: float, z: np.ndarray) -> np.ndarray:
    """Case means with the beta law of ``mean`` and ``sd``, from normal scores ``z``."""
    import numpy as np

    if sd == 0.0:
        return np.full(z.shape, mean)
    grid, q = _beta_table(mean, sd)
    out: np.ndarray = np.interp(z, grid, q)
    return out


def _concentration(mean: float, between: float, within: float) -> float:
    """kappa of the within-case beta: within^2 = (m (1 - m) - between^2) / (kappa + 1)."""
    if within == 0.0:
        return math.inf
    return (mean * (1.0 - mean) - between * between) / (within * within) - 1.0


def _runs(mu: np.ndarray, kappa: float, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """Runs (repeats, experiments) of cases with means ``mu`` (experiments,)."""
    import numpy as np

    if math.isinf(kappa):
        return np.broadcast_to(mu, (repeats, mu.size)).copy()
    m = np.clip(mu, 1e-12, 1.0 - 1e-12)
    return rng.beta(kappa * m, kappa * (1.0 - m), size=(repeats, mu.size))


#: Experiments drawn together; each (block, case, variant) has its own random
#: stream, so designs of more cases or repeats share every earlier draw.
_BLOCK = 500
#: The most runs per variant a simulated experiment may have.
MAX_SIMULATED_RUNS = 6000


def _draw_block(
    model: ScoreModel, cases: int, repeats: int, size: int, seed: int, block: int, null: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Scores of A and B, each (size, cases, repeats), of one block of experiments."""
    import numpy as np

    a = np.empty((size, cases, repeats))
    b = np.empty((size, cases, repeats))
    used = model.null() if null else model
    bb, wb = used.spread_b
    kappa_a = _concentration(used.mean_a, used.between, used.within)
    kappa_b = _concentration(used.mean_b, bb, wb)
    rho = used.correlation
    other = math.sqrt(max(0.0, 1.0 - rho * rho))
    for j in range(cases):
        ga = np.random.default_rng([seed, block, j, 0])
        gb = np.random.default_rng([seed, block, j, 1])
        z1 = ga.standard_normal(size)
        z2 = gb.standard_normal(size)
        mu_a = _case_means(used.mean_a, used.between, z1)
        mu_b = mu_a if null else _case_means(used.mean_b, bb, rho * z1 + other * z2)
        a[:, j, :] = _runs(mu_a, kappa_a, repeats, ga).T
        b[:, j, :] = _runs(mu_b, kappa_b, repeats, gb).T
    return a, b


# ---------------------------------------------------------------------------
# The comparison's decision, for many experiments at once
# ---------------------------------------------------------------------------


def _grid_point(threshold: float, bisections: int) -> float:
    """The smallest k / 2**bisections whose difference 2 m - 1 is above ``threshold``."""
    scale = 2.0**bisections
    k = math.floor((1.0 + threshold) / 2.0 * scale)
    while k > 0 and 2.0 * ((k - 1) / scale) - 1.0 > threshold:
        k -= 1
    while not 2.0 * (k / scale) - 1.0 > threshold:
        k += 1
    return k / scale


def score_decisions(
    scores_a: Any,
    scores_b: Any,
    *,
    about: str = "these_cases",
    level: float = 0.95,
    margin: float | None = None,
) -> np.ndarray:
    """Whether the mean-score comparison says B is better, per simulated experiment.

    ``scores_a`` and ``scores_b`` have shape (experiments, cases, repeats):
    each experiment runs every case ``repeats`` times with each variant,
    paired by position. True exactly where
    ``compare_scores(a, b, cases, about=about, level=level).verdict ==
    "b_better"`` (``method="auto"``, the betting intervals), or with a
    ``margin`` where ``score_non_inferiority(..., margin=margin).passed``:
    the interval's lower limit for B - A is above 0 (or -margin).

    The lower limit is a bisection's bound (a multiple of 2**-40 on (d + 1) /
    2 about these cases, of 2**-42 about cases like these) capped at the
    mean; the capital is nonincreasing in the mean tested, so the bound
    passes a threshold exactly when the test rejects at the first grid
    point past it, and one evaluation per experiment decides.
    """
    import numpy as np

    from ..stats._intervals import _BISECTIONS, _rejected_at
    from ..stats._scores import _FIXED_BISECTIONS, _fixed_rejects

    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    rows = a.shape[0]
    threshold = 0.0 if margin is None else -float(margin)
    alpha = (1.0 - level) / 2.0
    u = (b - a + 1.0) / 2.0
    if about == "these_cases":
        runs = u.reshape(rows, -1)
        mean = runs.mean(axis=-1)
        keep = 2.0 * mean - 1.0 > threshold
        out = np.zeros(rows, dtype=bool)
        if keep.any():
            point = _grid_point(threshold, _FIXED_BISECTIONS)
            kept = runs[keep]
            out[keep] = _fixed_rejects(kept, point, alpha)
        return out
    if a.shape[1] < 2:
        return np.zeros(rows, dtype=bool)  # one case: the interval is the whole range
    case_means = u.mean(axis=-1)
    mean = u.reshape(rows, -1).mean(axis=-1)
    keep = 2.0 * mean - 1.0 > threshold
    point = _grid_point(threshold, _BISECTIONS)
    out = _rejected_at(case_means, alpha, point, keep)
    return np.asarray(out, dtype=bool)


# ---------------------------------------------------------------------------
# Power
# ---------------------------------------------------------------------------

_CLAIMS = ("these_cases", "cases_like_these")


def _check_design(cases: Any, repeats: Any) -> tuple[int, int]:
    from .._validate import whole_number

    c = whole_number("cases", cases, minimum=2)
    r = whole_number("repeats", repeats, minimum=1)
    if c * r > MAX_SIMULATED_RUNS:
        raise InvalidArgument(
            f"cases={c} x repeats={r} is {c * r} runs per variant, more than the "
            f"{MAX_SIMULATED_RUNS} a simulated experiment may have"
        )
    return c, r


def _hits(
    model: ScoreModel,
    cases: int,
    repeats: int,
    experiments: int,
    *,
    seed: int,
    level: float,
    margin: float | None,
    claims: Sequence[str] = ("these_cases",),
    null: bool = False,
) -> dict[str, int]:
    """How many simulated experiments each claim's decision says B is better (or passes)."""
    out = dict.fromkeys(claims, 0)
    for block, start in enumerate(range(0, experiments, _BLOCK)):
        size = min(_BLOCK, experiments - start)
        a, b = _draw_block(model, cases, repeats, size, seed, block, null)
        for about in claims:
            out[about] += int(score_decisions(a, b, about=about, level=level, margin=margin).sum())
    return out


def _mc(hits: int, n: int) -> Interval:
    from ..stats._intervals import proportion_ci

    return proportion_ci(hits, n, method="wilson")


def _pct(x: float) -> str:
    from ._power import _pct as pct

    return pct(x)


def _ci(interval: Interval) -> str:
    from ._power import _ci as ci

    return ci(interval)


def _runs_word(r: int) -> str:
    return f"{r} run" if r == 1 else f"{r} runs"


def _rule_text(margin: float | None) -> str:
    if margin is None:
        return "compare_scores' own rule, the betting intervals"
    return f"score_non_inferiority's own rule at margin {margin:g}, the betting intervals"


@dataclass(frozen=True)
class ScorePower:
    """The simulated power of one design for a :class:`ScoreModel`.

    ``power`` is the share of simulated experiments in which
    ``compare_scores`` says "B better" about these cases (with a
    ``margin``: in which ``score_non_inferiority`` passes), with its 95%
    Monte-Carlo (Wilson) interval; ``power_cases_like_these`` the same about
    cases like these. ``false_positive_rate`` is the share saying "B better"
    about these cases when B scores as A on every case (None with a
    margin), at most (1 - level) / 2 by the betting interval's guarantee,
    and ``false_positive_cases_like_these`` the same about cases like these.
    """

    model: ScoreModel
    cases: int
    repeats: int
    level: float
    experiments: int
    power: Interval
    power_cases_like_these: Interval
    false_positive_rate: Interval | None
    margin: float | None = None
    seed: int = 0
    false_positive_cases_like_these: Interval | None = None

    def claimed(self, about: str) -> tuple[Interval, Interval | None]:
        """The power and the false "B better" of the claim ``about``."""
        if about == "these_cases":
            return self.power, self.false_positive_rate
        return self.power_cases_like_these, self.false_positive_cases_like_these

    @property
    def calls(self) -> int:
        """Model calls for both variants: 2 x cases x repeats."""
        return 2 * self.cases * self.repeats

    def _what(self) -> str:
        if self.margin is None:
            return "power"
        return f"chance to pass the gate at margin {self.margin:g}"

    def __str__(self) -> str:
        fp = self.false_positive_rate
        fp_like = self.false_positive_cases_like_these
        lines = [
            f"{self.cases} cases x {_runs_word(self.repeats)} per variant ({self.calls} calls) "
            f"for mean scores {self.model}:",
            f"  about {claim_words('these_cases')}: {self._what()} {_ci(self.power)}"
            + ("" if fp is None else f', false "B better" {_ci(fp)}'),
            f"  about {claim_words('cases_like_these')}: {self._what()} "
            f"{_ci(self.power_cases_like_these)}"
            + ("" if fp_like is None else f', false "B better" {_ci(fp_like)}'),
            f"By simulating the score model ({self.experiments} experiments, "
            f"{_rule_text(self.margin)}, level {self.level:g}); ranges are 95% Monte-Carlo "
            "intervals.",
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        fp = self.false_positive_rate
        return {
            "model": self.model.to_dict(),
            "cases": self.cases,
            "repeats": self.repeats,
            "calls": self.calls,
            "level": self.level,
            "margin": self.margin,
            "experiments": self.experiments,
            "seed": self.seed,
            "power": self.power.to_dict(),
            "power_cases_like_these": self.power_cases_like_these.to_dict(),
            "false_positive_rate": None if fp is None else fp.to_dict(),
            "false_positive_cases_like_these": None
            if self.false_positive_cases_like_these is None
            else self.false_positive_cases_like_these.to_dict(),
        }


def _margin(value: Any) -> float | None:
    if value is None:
        return None
    m = _number("margin", value)
    if not 0.0 < m < 1.0:
        raise InvalidArgument(
            f"margin={value!r} must be above 0 and below 1 (it is on the [0, 1] score scale)"
        )
    return m


def _experiments(value: Any) -> int:
    from .._validate import whole_number

    n = whole_number("experiments", value, minimum=100)
    if n > MAX_EXPERIMENTS:
        raise InvalidArgument(f"experiments={value!r} must be at most {MAX_EXPERIMENTS}")
    return n


#: The most experiments per design a plan or power simulates.
MAX_EXPERIMENTS = 100_000


def _model(model: Any) -> ScoreModel:
    if not isinstance(model, ScoreModel):
        raise InvalidArgument(f"model={model!r} must be a ScoreModel")
    return model


def score_power(
    model: ScoreModel,
    cases: int,
    repeats: int,
    *,
    level: float = 0.95,
    margin: float | None = None,
    experiments: int = 4000,
    seed: int = 0,
) -> ScorePower:
    """Power of the mean-score comparison for ``cases`` x ``repeats``, by simulation.

    Simulates ``experiments`` experiments of ``model`` and judges each as
    ``compare_scores(..., method="auto")`` does (:func:`score_decisions`),
    about these cases and about cases like these, and the false "B better"
    about these cases with B scoring as A on every case. With ``margin``,
    the power is the chance that ``score_non_inferiority`` passes B.

    >>> model = ScoreModel(0.6, 0.7, between=0.15, within=0.1)
    >>> p = score_power(model, 40, 3, experiments=1000)
    >>> print(p.power)
    99% (98% to 99.6%)
    """
    from .._validate import whole_number

    model = _model(model)
    c, r = _check_design(cases, repeats)
    level = check_level(level)
    m = _margin(margin)
    n = _experiments(experiments)
    seed = whole_number("seed", seed, minimum=0)
    hits = _hits(model, c, r, n, seed=seed, level=level, margin=m, claims=_CLAIMS)
    fp = fp_like = None
    if m is None:
        null = _hits(model, c, r, n, seed=seed, level=level, margin=None, null=True, claims=_CLAIMS)
        fp, fp_like = _mc(null["these_cases"], n), _mc(null["cases_like_these"], n)
    return ScorePower(
        model,
        c,
        r,
        level,
        n,
        _mc(hits["these_cases"], n),
        _mc(hits["cases_like_these"], n),
        fp,
        m,
        seed,
        fp_like,
    )


# ---------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------

_Z_LEVEL = 1.959963984540054  # scipy.stats.norm.isf(0.025)
#: How often a planned design is searched again when its fresh simulation
#: falls short of the target.
_ROUNDS = 3


def _guess(model: ScoreModel, target: float, margin: float | None) -> int:
    """About how many pairs the these-cases comparison needs: the normal
    approximation, doubled for the betting interval's extra width."""
    from scipy.special import ndtri

    bb, wb = model.spread_b
    var = (
        model.within**2
        + wb**2
        + model.between**2
        + bb**2
        - 2.0 * model.correlation * model.between * bb
    )
    gap = model.mean_b - model.mean_a + (0.0 if margin is None else margin)
    if gap <= 0.0:
        return 10**9
    z = _Z_LEVEL + float(ndtri(target))
    return max(2, math.ceil(2.0 * var * (z / gap) ** 2))


@dataclass(frozen=True)
class ScorePlan:
    """Cases and repeats for comparing two variants' mean scores.

    ``cases`` x ``repeats`` (per variant) is the design: the fewest of the
    dimension searched whose simulated power about the claim ``about``
    (these cases by default) reaches ``target``; ``power`` is that of a
    fresh simulation of it (:class:`ScorePower`, with both claims' power).
    ``reachable`` is False when no design within the search bounds reaches
    the target; ``power`` is then that of the largest searched (or the
    given) design. A plan from a scored pilot
    (:func:`~evalstats.planning._score_pilot.pilot_score_plan`) also holds
    ``assurance``, the design's power averaged over what the pilot leaves
    uncertain, and that ``posterior``
    (:class:`~evalstats.planning._score_pilot.ScorePosterior`). Sized with a
    ``certainty``, the design is the fewest whose power reaches ``target``
    in that share of ``models`` score models drawn from the posterior;
    ``sized_for`` is the drawn model at its (1 - certainty) point (of the
    models tied there, the one the normal approximation's standardized
    effect puts at that point), ``power`` a fresh simulation of that model,
    and ``reach`` the share of as many
    models drawn afresh (with fresh experiments) whose simulated power
    reaches the target, with its 95% Wilson interval over those models.
    """

    model: ScoreModel
    target: float
    level: float
    cases: int
    repeats: int
    reachable: bool
    power: ScorePower
    fixed: str = ""
    margin: float | None = None
    experiments: int = 4000
    bound: str = ""
    about: str = "these_cases"
    assurance: Interval | None = None
    posterior: Any = field(default=None, compare=False, repr=False)
    certainty: float | None = None
    sized_for: ScoreModel | None = None
    reach: Interval | None = None
    models: int | None = None
    model_experiments: int | None = None

    @property
    def calls(self) -> int:
        return 2 * self.cases * self.repeats

    def _head(self) -> str:
        m = self.model
        if self.margin is None:
            what = f"mean score {m.mean_a:.2f} -> {m.mean_b:.2f}"
        else:
            what = (
                f"B's mean score {m.mean_b:.2f} (A {m.mean_a:.2f}) passing the gate at "
                f"margin {self.margin:g}"
            )
        bb, wb = m.spread_b
        if (bb, wb) == (m.between, m.within):
            spread = f"case means with SD {m.between:.2f} and runs with SD {m.within:.2f}"
        else:
            spread = (
                f"case means with SD {m.between:.2f} (B {bb:.2f}) and runs with SD "
                f"{m.within:.2f} (B {wb:.2f})"
            )
        return (
            f"Plan to detect {what} with {_pct(self.target)} power (level {self.level:g}), "
            f"about {claim_words(self.about)}; {spread} (beta model, correlation "
            f"{m.correlation:.2g} between A's and B's case means)."
        )

    def _pilot(self) -> str | None:
        pilot = self.model.pilot
        if not pilot:
            return None
        fitted = (
            f"Fitted from a pilot of {pilot['cases']} cases ({pilot['runs_a']} runs of A, "
            f"{pilot['runs_b']} of B; one-way analysis of variance)"
        )
        post = self.posterior
        if post is None:
            return f"{fitted}, taken as the truth: a small pilot leaves the spreads uncertain."
        text = (
            f"{fitted}: {post.describe()}; 95% intervals of what the pilot leaves uncertain "
            "(the one-way model's posterior, reference prior)."
        )
        if post.kept < 0.995:
            text += (
                f"\nB can gain that much only if A's mean score is below {post.limit:.2f}, "
                f"which the pilot gives probability {_pct(post.kept)}: the plan takes it to be."
            )
        return text

    def _assured(self, what: str) -> str | None:
        if self.assurance is None:
            return None
        sized = (
            "the design is sized for the model as fitted"
            if self.certainty is None
            else f"the design reaches {_pct(self.target)} for {_ci(self.reach)} of the "
            f"{self.models} models drawn afresh (planned for {_pct(self.certainty)})"
        )
        return (
            f"{what[0].upper()}{what[1:]} {_ci(self.assurance)} averaged over what the pilot "
            f"leaves uncertain (assurance), about {claim_words(self.about)}; {sized}."
        )

    def _sized_for(self) -> str | None:
        """What a plan sized with a certainty was sized for."""
        if self.certainty is None or self.sized_for is None:
            return None
        return (
            f"Sized for the score model at the {_pct(1.0 - self.certainty)} point of those the "
            f"pilot allows ({self.sized_for}); the design's power below is that model's."
        )

    def _below_target(self, what: str, power: Interval) -> str | None:
        """Why the named model's power, in a plan sized with a certainty, can fall short."""
        if self.certainty is None or not self.reachable or power.estimate >= self.target:
            return None
        return (
            f"That model's {what} falls below the {_pct(self.target)} planned for on fresh "
            f"experiments: the design was sized by the {self.models} models' {what} at "
            f"{self.model_experiments} experiments each, which put it at "
            f"{_pct(self.target)} or more at that point; the share of models the design "
            "serves is stated next."
        )

    def __str__(self) -> str:
        p = self.power
        lines = [self._head()]
        pilot = self._pilot()
        if pilot:
            lines.append(pilot)
        sized_for = self._sized_for()
        if sized_for:
            lines.append(sized_for)
        what = "power" if self.margin is None else "chance to pass"
        power, fp = p.claimed(self.about)
        other = "cases_like_these" if self.about == "these_cases" else "these_cases"
        fp_text = "" if fp is None else f', false "B better" {_ci(fp)}'
        design = f"{self.cases} cases x {_runs_word(self.repeats)} per variant ({self.calls} calls)"
        if self.reachable:
            lines.append(f"Run {design}: {what} {_ci(power)} by simulation{fp_text}.")
        else:
            lines.append(
                f"{design[0].upper()}{design[1:]} give only {what} {_ci(power)} by "
                f"simulation{fp_text}: {self.bound}"
            )
        below = self._below_target(what, power)
        if below:
            lines.append(below)
        assured = self._assured(what)
        if assured:
            lines.append(assured)
        lines.append(
            f"About {claim_words(other)}: {what} {_ci(p.claimed(other)[0])} with this design."
        )
        if self.reachable and self.fixed == "" and self.repeats == 1:
            lines.append(
                "With every call costing the same, one run per case is the cheapest design: "
                "about these cases a repeat is worth about a new case, about cases like these "
                "less."
            )
        searched = (
            f"the score model ({self.experiments} experiments each"
            if self.certainty is None
            else f"{self.models} score models drawn from the pilot's posterior "
            f"({self.model_experiments} experiments each, "
            "common random numbers across designs"
        )
        lines.append(
            f"Designs found by simulating {searched}, {_rule_text(self.margin)}); ranges are "
            "95% Monte-Carlo intervals."
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return (
            {
                "kind": "scores",
                "about": self.about,
                "model": self.model.to_dict(),
                "target": self.target,
                "level": self.level,
                "margin": self.margin,
                "cases": self.cases,
                "repeats": self.repeats,
                "calls": self.calls,
                "reachable": self.reachable,
                "fixed": self.fixed,
                "experiments": self.experiments,
                "power": self.power.to_dict(),
                "bound": self.bound or None,
            }
            | (
                {}
                if self.posterior is None
                else {
                    "assurance": None if self.assurance is None else self.assurance.to_dict(),
                    "pilot": self.posterior.to_dict(),
                }
            )
            | (
                {}
                if self.certainty is None or self.sized_for is None
                else {
                    "certainty": self.certainty,
                    "models": self.models,
                    "model_experiments": self.model_experiments,
                    "reach": None if self.reach is None else self.reach.to_dict(),
                    "sized_for": self.sized_for.to_dict(),
                }
            )
        )


def _goal(target: float, experiments: int) -> float:
    """What a simulated power must reach for its 95% Wilson interval to clear ``target``."""
    return min(target + _Z_LEVEL * math.sqrt(target * (1.0 - target) / experiments), 1.0)


def _fewest(power_at: Any, goal: float, lo: int, hi: int, guess: int) -> int | None:
    """The smallest n in [lo, hi] with ``power_at(n) >= goal`` (power rising in n), or None."""
    n = min(max(guess, lo), hi)
    seen: dict[int, bool] = {}

    def ok(k: int) -> bool:
        if k not in seen:
            seen[k] = power_at(k) >= goal
        return seen[k]

    if ok(n):
        top = n
        low = lo - 1
        step = max(1, n // 2)
        while top - step >= lo and ok(top - step):
            top -= step
            step *= 2
        low = max(low, top - step)
    else:
        low = n
        top = None
        step = max(1, n)
        while top is None:
            nxt = min(low + step, hi)
            if ok(nxt):
                top = nxt
            elif nxt == hi:
                return None
            else:
                low = nxt
                step *= 2
    while top - low > 1:
        mid = (low + top) // 2
        if ok(mid):
            top = mid
        else:
            low = mid
    return top


def checked_options(
    *,
    cases: Any = None,
    repeats: Any = None,
    power: Any = 0.8,
    level: Any = 0.95,
    margin: Any = None,
    about: Any = "these_cases",
    max_cases: Any = 3000,
    max_repeats: Any = 1000,
    experiments: Any = 4000,
    seed: Any = 0,
) -> dict[str, Any]:
    """:func:`score_plan`'s options checked as it checks them, each bad one named: the
    values it plans with, by name (``power`` the target, ``about`` the claim)."""
    from .._validate import whole_number
    from ..stats._claims import check_about
    from ._power import _target

    return {
        "about": check_about(about) or "these_cases",
        "power": _target(power),
        "level": check_level(level),
        "margin": _margin(margin),
        "experiments": _experiments(experiments),
        "seed": whole_number("seed", seed, minimum=0),
        "max_cases": whole_number("max_cases", max_cases, minimum=2),
        "max_repeats": whole_number("max_repeats", max_repeats, minimum=1),
        "cases": None if cases is None else whole_number("cases", cases, minimum=2),
        "repeats": None if repeats is None else whole_number("repeats", repeats, minimum=1),
    }


def score_plan(
    model: ScoreModel,
    *,
    cases: int | None = None,
    repeats: int | None = None,
    power: float = 0.8,
    level: float = 0.95,
    margin: float | None = None,
    about: str = "these_cases",
    max_cases: int = 3000,
    max_repeats: int = 1000,
    experiments: int = 4000,
    seed: int = 0,
    sizing: Any = None,
) -> ScorePlan:
    """Cases and repeats for comparing mean scores with the target power, by simulation.

    The comparison is ``compare_scores(..., method="auto")`` about the
    claim ``about`` (with ``margin``: ``score_non_inferiority``), judged on
    ``experiments`` simulated experiments of ``model`` per design
    (:func:`score_decisions`), with common random numbers across designs.
    Given ``repeats``, the plan finds the fewest cases; given ``cases``, the
    fewest repeats; given both, it states their power; given neither, one
    run per case on enough cases (about these cases a repeat is worth about
    as much as a new case, about cases like these less, so with every call
    costing the same one run per case is the cheapest). A design is taken
    when its simulated power reaches the target by more than its
    Monte-Carlo error (1.96 standard errors: its 95% interval lies above
    the target), and is then simulated afresh (another seed) for the power
    it states; should that fall short of the target, the search goes on
    higher.

    Parameters
    ----------
    model : ScoreModel
        The scores planned for.
    cases, repeats : int, optional
        What is fixed.
    power : float
        The target power.
    level : float
        Confidence level of the comparison's interval.
    margin : float, optional
        Plan for the non-inferiority gate at this margin instead (the
        chance that it passes B).
    about : {"these_cases", "cases_like_these"}
        The claim the design is sized for; the other's power is stated
        beside it.
    max_cases, max_repeats : int
        Search bounds (and cases x repeats at most 6,000 runs per variant).
    experiments : int
        Simulated experiments per design (4,000: the 95% Monte-Carlo
        interval of a power near 80% is about +-1.3 points).
    seed : int
        Seed of the simulation; the same seed gives the same plan.
    sizing : optional
        Another power to search designs by, for
        :func:`~evalstats.planning._score_pilot.pilot_score_plan`: an object
        with ``power(cases, repeats)`` (compared with the target itself,
        searched once) and ``judged(cases, repeats, seed)``, the
        :class:`ScorePower` stated for the design found.

    Examples
    --------
    >>> model = ScoreModel(0.6, 0.7, between=0.15, within=0.1)
    >>> p = score_plan(model, cases=40, experiments=1000)
    >>> p.cases, p.repeats, p.reachable
    (40, 3, True)
    """
    model = _model(model)
    checked = checked_options(
        cases=cases, repeats=repeats, power=power, level=level, margin=margin, about=about,
        max_cases=max_cases, max_repeats=max_repeats, experiments=experiments, seed=seed,
    )  # fmt: skip
    cases, repeats, about, seed = (checked[k] for k in ("cases", "repeats", "about", "seed"))
    target, level, m, n = (checked[k] for k in ("power", "level", "margin", "experiments"))
    max_c, max_r = checked["max_cases"], checked["max_repeats"]
    gap = model.mean_b - model.mean_a + (0.0 if m is None else m)
    if gap <= 0.0:
        what = "B's mean score must be above A's" if m is None else "B must be above A - margin"
        raise InvalidArgument(
            f"mean_b={model.mean_b:g} with mean_a={model.mean_a:g}: nothing to detect ({what})"
        )

    def judged(c: int, r: int, s: int) -> ScorePower:
        if sizing is not None:
            return sizing.judged(c, r, s)  # type: ignore[no-any-return]
        return score_power(model, c, r, level=level, margin=m, experiments=n, seed=s)

    def searched(c: int, r: int) -> float:
        if sizing is not None:
            return float(sizing.power(c, r))
        return _hits(model, c, r, n, seed=seed, level=level, margin=m, claims=(about,))[about] / n

    def reaches(c: int, r: int, sim: ScorePower) -> bool:
        if sizing is not None:
            return searched(c, r) >= target
        return float(sim.claimed(about)[0].estimate) >= target

    fixed = "both" if cases and repeats else "cases" if cases else "repeats" if repeats else ""
    common = {
        "model": model,
        "target": target,
        "level": level,
        "margin": m,
        "experiments": n,
        "about": about,
    }
    if cases is not None and repeats is not None:
        _check_design(cases, repeats)
        sim = judged(cases, repeats, seed + 1)
        ok = reaches(cases, repeats, sim)
        bound = "" if ok else "add cases or repeats."
        return ScorePlan(
            cases=cases, repeats=repeats, reachable=ok, power=sim, fixed=fixed, bound=bound,
            **common,
        )  # fmt: skip
    pairs = _guess(model, target, m)
    goal = _goal(target, n) if sizing is None else target
    for round_ in range(_ROUNDS if sizing is None else 1):
        if cases is not None:
            c = cases
            top = min(max_r, MAX_SIMULATED_RUNS // c)
            if top < 1:
                _check_design(c, 1)
            found = _fewest(lambda k, c=c: searched(c, k), goal, 1, top, -(-pairs // c))
            design = (c, found if found is not None else top)
            bound = (
                f"no number of repeats up to {top} reaches {_pct(target)} with {c} cases; "
                "add cases."
            )
        else:
            r = 1 if repeats is None else repeats
            top = min(max_c, MAX_SIMULATED_RUNS // r)
            if top < 2:
                _check_design(2, r)
            found = _fewest(lambda k, r=r: searched(k, r), goal, 2, top, -(-pairs // r))
            design = (found if found is not None else top, r)
            bound = (
                f"no number of cases up to {top} reaches {_pct(target)} with "
                f"{_runs_word(r)} per case (the search bound)."
            )
        sim = judged(*design, seed + 1 + round_)
        if found is None:
            return ScorePlan(
                cases=design[0], repeats=design[1], reachable=False, power=sim, fixed=fixed,
                bound=bound, **common,
            )  # fmt: skip
        shortfall = target - float(sim.claimed(about)[0].estimate)
        if shortfall <= 0 or round_ == _ROUNDS - 1:
            break
        goal += shortfall + math.sqrt(target * (1.0 - target) / n)
    reached = reaches(*design, sim)
    short = "its fresh simulation fell short of the target; add cases."
    return ScorePlan(
        cases=design[0], repeats=design[1], reachable=reached, power=sim, fixed=fixed,
        bound="" if reached else short, **common,
    )  # fmt: skip


# ---------------------------------------------------------------------------
# From a pilot: the one-way analysis of variance
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Components:
    mean: float
    between: float
    within: float
    cases: int
    runs: int
    ms_between: float
    ms_within: float
    case_means: dict[Any, float]
    n0: float = 1.0


def variance_components(scores: Mapping[Any, Sequence[float]]) -> _Components:
    """Between- and within-case variance of scores by case: one-way ANOVA, method of moments.

    ``scores`` maps each case to its runs' scores. With k cases, n_i runs
    in case i and N in all: MS_within = sum_i sum_j (y_ij - ybar_i)^2 / (N
    - k), MS_between = sum_i n_i (ybar_i - ybar)^2 / (k - 1), and the
    between-case variance (MS_between - MS_within) / n0, n0 = (N - sum_i
    n_i^2 / N) / (k - 1) (Searle, Casella & McCulloch 1992, section 3.6),
    set to 0 when negative. The within SD is sqrt(MS_within) (0 when every
    case has one run: then the between variance is the case means'
    variance, within runs included). The mean is that of the case means.
    """
    import numpy as np

    groups = [np.asarray(list(v), dtype=float) for v in scores.values() if len(v)]
    k = len(groups)
    if k < 2:
        raise InvalidArgument("a pilot needs scores on at least 2 cases to fit their spread")
    sizes = np.array([g.size for g in groups], dtype=float)
    means = np.array([g.mean() for g in groups])
    total = float(sizes.sum())
    grand = float(sum(float(g.sum()) for g in groups) / total)
    ss_within = float(sum(float(((g - g.mean()) ** 2).sum()) for g in groups))
    ms_between = float((sizes * (means - grand) ** 2).sum() / (k - 1))
    ms_within = ss_within / (total - k) if total > k else 0.0
    n0 = (total - float((sizes**2).sum()) / total) / (k - 1)
    var_between = max(0.0, (ms_between - ms_within) / n0)
    labels = [c for c, v in scores.items() if len(v)]
    return _Components(
        float(means.mean()),
        math.sqrt(var_between),
        math.sqrt(ms_within),
        k,
        int(total),
        ms_between,
        ms_within,
        {c: float(m) for c, m in zip(labels, means, strict=True)},
        float(n0),
    )


def _fitted_correlation(a: _Components, b: _Components) -> float:
    """The correlation of A's and B's true case means, from their observed ones.

    The runs of A and B are independent, so the covariance of the observed
    case means estimates that of the true ones; it is divided by the fitted
    between-case SDs and kept in [-1, 1] (1 when either SD is 0).
    """
    import numpy as np

    shared = [c for c in a.case_means if c in b.case_means]
    if len(shared) < 2 or a.between == 0.0 or b.between == 0.0:
        return 1.0
    x = np.array([a.case_means[c] for c in shared])
    y = np.array([b.case_means[c] for c in shared])
    cov = float(((x - x.mean()) * (y - y.mean())).sum() / (len(shared) - 1))
    return float(min(1.0, max(-1.0, cov / (a.between * b.between))))


def _squeezed(mean: Any, between: Any, within: Any) -> tuple[Any, Any]:
    """The SDs, shrunk by the least factor that makes them possible for ``mean``:
    numbers, or numpy arrays of them (one model each, as the posterior draws them)."""
    import numpy as np

    room = mean * (1.0 - mean)
    total = between * between + within * within
    over = (total > 0) & (total >= room * (1.0 - 1e-9))
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(over, np.sqrt(room * (1.0 - 1e-6) / np.where(over, total, 1.0)), 1.0)
    return between * f, within * f


def fit_score_model(
    scores_a: Mapping[Any, Sequence[float]],
    scores_b: Mapping[Any, Sequence[float]] | None = None,
    *,
    names: dict[str, str] | None = None,
) -> ScoreModel:
    """A :class:`ScoreModel` fitted from a pilot's scores per case, per variant.

    Each variant's mean, between-case SD and within-case SD by
    :func:`variance_components`; the correlation of A's and B's case means
    from the cases both scored (:func:`_fitted_correlation`). Without B,
    B is a copy of A. Fitted SDs at the edge of what the mean allows (a
    variant whose runs are all 0 or 1) are shrunk just inside it.
    """
    a = variance_components(scores_a)
    b = a if scores_b is None else variance_components(scores_b)
    ba, wa = map(float, _squeezed(a.mean, a.between, a.within))
    bb, wb = map(float, _squeezed(b.mean, b.between, b.within))
    rho = 1.0 if scores_b is None else _fitted_correlation(a, b)
    shared = len(set(a.case_means) & set(b.case_means))
    return ScoreModel(
        a.mean,
        b.mean,
        ba,
        wa,
        rho,
        between_b=bb,
        within_b=wb,
        names=names,
        pilot={
            "cases": shared,
            "cases_a": a.cases,
            "cases_b": b.cases,
            "runs_a": a.runs,
            "runs_b": b.runs,
            "fitted": {
                "mean_a": a.mean,
                "mean_b": b.mean,
                "between_a": a.between,
                "within_a": a.within,
                "between_b": b.between,
                "within_b": b.within,
                "correlation": rho,
            },
        },
    )


def score_model_from_results(results: Any, *, variants: Sequence[str] | None = None) -> ScoreModel:
    """:func:`fit_score_model` from a pilot run whose samples carry scores.

    ``results`` is a run (:class:`~evalstats.reading._source.RunSource`), a
    path, :class:`~evalstats.results._file.Results` or a tally; ``variants``
    names A and B (default: the run's first two). Only measured samples
    with a score count (unscored and unmeasured ones are left out).
    """
    per = pilot_scores(results, variants=variants)
    return fit_score_model(per[0], per[1] if len(per) > 1 else None)


def pilot_scores(
    results: Any, *, variants: Sequence[str] | None = None
) -> list[dict[str, list[float]]]:
    """A scored pilot's scores per case, for A and (when the run has it) B.

    As :func:`score_model_from_results` reads them: ``variants`` names A and B
    (default: the run's first two); only measured samples with a score count.
    """
    from ..reading._source import tally

    run = tally(results)
    names = tuple(run.variants()) if variants is None else tuple(variants)
    if not names:
        raise InvalidArgument("the results hold no variants to fit a score model to")
    per: list[dict[str, list[float]]] = []
    for name in names[:2]:
        rows = run.scores(name)
        if not rows:
            raise InvalidArgument(
                f"no sample of variant {name!r} carries a score: a score plan needs a pilot "
                "scored by a graded check (plan for pass rates with --pb)"
            )
        cells: dict[str, list[float]] = {}
        for case, _repeat, score in rows:
            cells.setdefault(case, []).append(score)
        per.append(cells)
    return per
