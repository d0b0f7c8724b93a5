"""What a scored pilot leaves uncertain, carried into a score plan.

A pilot of 10 cases x 3 runs fits the score model of
:mod:`~evalstats.planning._score_plan` (each variant's mean, the SD of case
means, the SD of a case's runs, the correlation of A's and B's case means)
by a one-way analysis of variance, but pins none of them down: a plan that
takes the fit as truth promises more power than the design delivers about
as often as less, and says nothing of how far off it may be.
:class:`ScorePosterior` is the posterior of that model given the pilot, and
:func:`score_assurance` the design's power averaged over it (its
"assurance", O'Hagan, Stevens & Campbell 2005), with a fresh model drawn for
every simulated experiment, judged by the comparison's own rule
(:func:`~evalstats.planning._score_plan.score_decisions`).

The posterior
-------------
It is the normal-theory posterior of the one-way random-effects model
y_ij = mu + c_i + e_ij under the reference prior (Box & Tiao 1973, section
5.2; the same chi-square pivots give the classical confidence intervals of
Searle, Casella & McCulloch 1992, sections 3.5-3.6, of which its intervals
are the generalized version, Weerahandi 1993):

- Within a case: SS_within / sigma_w^2 is chi-square on N - k degrees of
  freedom, so sigma_w^2 is drawn as SS_within / chi2(N - k), for each
  variant (0 when every case ran once: then runs are not told from cases).
- Between cases: the observed case means of A and B, over the k cases both
  scored, are bivariate with covariance Sigma = (between-case covariance)
  + sigma_w^2 / n0 on the diagonal (n0 the analysis of variance's
  effective runs per case, exact when the design is balanced). With the
  prior |Sigma|^-2, Sigma is inverse-Wishart on k degrees of freedom with
  scale (k - 1) S, S the case means' covariance (its diagonal each
  variant's MS_between / n0), so that each variant's marginal is the
  one-variant reference posterior, (k - 1) S_vv / chi2(k - 1) (Gelman et
  al. 2013, section 3.6, with one degree of freedom more). The scale must
  be positive definite, which S of k case means is only from k = 3 (two
  fix a correlation of -1 or 1): a pilot of both variants needs 3 shared
  cases, one of A alone 2.
- The means: (mu_A, mu_B) given Sigma are normal about the means of the
  case means with covariance Sigma / k.
- A variant's between-case variance is Sigma_vv - sigma_w^2 / n0, set to 0
  when negative (as the point estimate is); the correlation is the drawn
  covariance over the drawn between-case SDs, kept in [-1, 1] (1 when
  either SD is 0); and SDs no scores in [0, 1] with the drawn mean can
  have are shrunk just inside what it allows, as the fit's are.

Why these distributions and not a bootstrap: the chi-square and Wishart
laws are exact for normal scores, and their posteriors of a variance are
skewed towards larger values, which is the direction that costs power; a
parametric bootstrap of the fitted model gives the sampling distribution
of the estimates about the fit, skewed the other way, and needs a pilot
simulated and refitted per draw. Scores in [0, 1] are not normal (a beta of
runs mostly 0 or 1 has lighter tails than a normal of its SD, which makes
the chi-square law too wide, not too narrow). ``simulations/score_assurance.py``
measures the assurance against pilots of 10 cases x 3 runs drawn from 300
known beta models: it is conservative, the designs delivering 6.4 points
(3.5 to 9.3) more power than the assurance stated on average, where the
power of the fit taken as truth is 5.0 points too high.

Sized with a certainty
----------------------
By default the design is the one found for the model as fitted, and the
assurance says what it is worth over what the pilot leaves uncertain. With
``certainty`` C, :func:`pilot_score_plan` instead searches for the fewest
cases x repeats whose power reaches the target in a share C of 200 models
drawn from the posterior (:class:`ModelPowers`, the (1 - C) order statistic
of their simulated powers, as pass-rate plans from a pilot take it), and
names the model at that point. A model's simulated power takes only a few
values (one more than its experiments), so many models tie at that point;
the one named is, of those, the one nearest the same point of the normal
approximation's standardized effect of the design (gain over the SD of the
mean difference the rule judges), and the power stated is a fresh
simulation of it. ``simulations/score_assurance.py --certainty 0.8``
counts the true models on which such designs deliver the target, beside
the designs sized for the fit; with ``--naming`` it also measures how far
the named model's power falls from the order statistic and the reach
stated against what the designs deliver.

What B should reach is the caller's (:class:`~evalstats.planning._pilot.Wanted`):
a fixed mean, A's drawn mean plus a gain, or the pilot's own B (drawn with
A, so the gain's uncertainty is that of the paired case means). Draws in
which the mean asked for is not a gain over A (or would put B above 1) are
left out, and their share is stated (``kept``). A mean of A or a
correlation given by the caller is fixed.

References
----------
Box, G. E. P., & Tiao, G. C. (1973). *Bayesian Inference in Statistical
Analysis*, chapter 5. Addison-Wesley.
Searle, S. R., Casella, G., & McCulloch, C. E. (1992). *Variance
Components*, chapter 3. Wiley.
Weerahandi, S. (1993). Generalized confidence intervals. *JASA* 88, 899-905.
Gelman, A., et al. (2013). *Bayesian Data Analysis*, 3rd ed., section 3.6.
O'Hagan, A., Stevens, J. W., & Campbell, M. J. (2005). Assurance in
clinical trial design. *Pharmaceutical Statistics* 4, 187-201.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidArgument
from ._pilot import Wanted
from ._score_plan import _squeezed, variance_components

if TYPE_CHECKING:
    from ..stats._intervals import Interval
    from ._score_plan import ScoreModel, ScorePlan, ScorePower

__all__ = [
    "ModelPowers",
    "ScorePosterior",
    "pilot_score_plan",
    "score_assurance",
    "score_posterior_from_results",
]

#: Posterior draws whose quantiles give the stated intervals.
INTERVAL_DRAWS = 20_000
#: Scores drawn at once in the assurance's simulation (experiments x cases x repeats).
_CELLS = 1_000_000


@dataclass(frozen=True)
class ScoreDraws:
    """Score models drawn from a :class:`ScorePosterior`, one per row, as arrays."""

    mean_a: np.ndarray
    mean_b: np.ndarray
    between_a: np.ndarray
    within_a: np.ndarray
    between_b: np.ndarray
    within_b: np.ndarray
    correlation: np.ndarray

    def __len__(self) -> int:
        return int(self.mean_a.size)

    def take(self, rows: Any) -> ScoreDraws:
        return ScoreDraws(*(getattr(self, f)[rows] for f in _FIELDS))


_FIELDS = (
    "mean_a",
    "mean_b",
    "between_a",
    "within_a",
    "between_b",
    "within_b",
    "correlation",
)


def inverse_wishart_2x2(df: int, scale: np.ndarray, size: int, rng: np.random.Generator) -> Any:
    """``size`` draws (size, 2, 2) of the inverse-Wishart law on ``df`` degrees of freedom
    with the positive definite 2 x 2 ``scale``, by Bartlett's decomposition.

    With C the lower Cholesky factor of the scale and A lower triangular (a
    standard normal below the diagonal, the square roots of chi-square draws
    on df - 1 and df degrees of freedom on it), each draw is X X' for X = C
    A^-1 (Anderson 2003, section 7.2). The draws are taken from ``rng`` in
    the order ``scipy.stats.invwishart.rvs(df, scale, size, random_state=rng)``
    takes them, and each entry is worked out by the same operations as its
    LAPACK and BLAS calls (a reciprocal of each diagonal, then products), so
    the draws are the same floats, but for a last bit where a BLAS fuses a
    multiply and an add (tests/test_score_plan_pilot.py), without
    importing scipy.stats (half a second) or a BLAS call per draw.
    """
    c11 = math.sqrt(scale[0, 0])
    c21 = scale[1, 0] * (1.0 / c11)
    c22 = math.sqrt(scale[1, 1] - c21 * c21)
    below = rng.normal(size=(size, 1))[:, 0]
    diagonal = rng.chisquare(df=np.array([df - 1, df]), size=(size, 2)) ** 0.5
    x22 = (1.0 / diagonal[:, 1]) * c22
    r11 = 1.0 / diagonal[:, 0]
    x11 = r11 * c11
    x21 = r11 * (c21 - below * x22)
    out = np.empty((size, 2, 2))
    out[:, 0, 0] = x11 * x11
    out[:, 0, 1] = out[:, 1, 0] = x11 * x21
    out[:, 1, 1] = x22 * x22 + x21 * x21
    return out


class ScorePosterior:
    """The posterior of a pilot's score model (see the module), to draw models from.

    Parameters
    ----------
    scores_a, scores_b : mapping of case to its runs' scores
        The pilot's scores of A and (optional: else B is a copy of A) B.
    wanted : Wanted
        What B should reach: ``Wanted("rate", m)``, ``Wanted("gain", g)`` or
        ``Wanted("observed")`` (needs ``scores_b``).
    mean_a : float, optional
        A's mean, when given rather than drawn.
    correlation : float, optional
        The correlation of A's and B's case means, when given.
    margin : float, optional
        The non-inferiority margin planned for: draws count as a gain when B
        is above A - margin.
    seed : int
        Seed of the draws.

    >>> a = {i: [0.5 + 0.04 * i, 0.54 + 0.04 * i] for i in range(8)}
    >>> post = ScorePosterior(a, wanted=Wanted("gain", 0.1))
    >>> for part in post.describe().split(", "):
    ...     print(part)
    A's mean 0.66 (0.58 to 0.74)
    SD of case means 0.11 (0.06 to 0.20)
    of a case's runs 0.03 (0.02 to 0.05)
    """

    def __init__(
        self,
        scores_a: Mapping[Any, Sequence[float]],
        scores_b: Mapping[Any, Sequence[float]] | None = None,
        *,
        wanted: Wanted,
        mean_a: float | None = None,
        correlation: float | None = None,
        margin: float | None = None,
        seed: int = 0,
    ) -> None:
        if not isinstance(wanted, Wanted):
            raise InvalidArgument(f"wanted={wanted!r} must be a Wanted (rate, gain or observed)")
        if wanted.kind == "observed" and scores_b is None:
            raise InvalidArgument(
                "the pilot's own B needs a pilot of both variants: give the mean B should reach"
            )
        self.wanted, self.fixed_a, self.fixed_rho = wanted, mean_a, correlation
        self.margin, self.seed = margin, seed
        self.paired = scores_b is not None
        self._a = variance_components(scores_a)
        self._b = self._a if scores_b is None else variance_components(scores_b)
        shared = [c for c in self._a.case_means if c in self._b.case_means]
        if self.paired and len(shared) < 3:
            raise InvalidArgument(
                f"scores_b: a pilot's A and B must both score at least 3 of the same cases; "
                f"these share {len(shared)}, whose case means' covariance is singular (so few "
                "points fix a correlation of -1 or 1), and the posterior of the between-case "
                "covariance (inverse-Wishart, scale (k - 1) S) needs it positive definite"
            )
        self.cases = len(shared) if self.paired else self._a.cases
        # S: the case means' covariance (diagonal: each variant's MS_between / n0).
        sa = self._a.ms_between / self._a.n0
        sb = self._b.ms_between / self._b.n0
        r = 1.0
        if self.paired:
            x = np.array([self._a.case_means[c] for c in shared])
            y = np.array([self._b.case_means[c] for c in shared])
            sx, sy = float(x.std(ddof=1)), float(y.std(ddof=1))
            if sx > 0 and sy > 0:
                r = float(np.corrcoef(x, y)[0, 1])
        r = min(max(r, -0.999999), 0.999999)
        sa, sb = max(sa, 1e-12), max(sb, 1e-12)
        self._scale = (self.cases - 1) * np.array(
            [[sa, r * math.sqrt(sa * sb)], [r * math.sqrt(sa * sb), sb]]
        )
        self._centre = np.array([self._a.mean, self._b.mean])
        self._intervals: dict[str, tuple[float, float, float]] | None = None
        self.kept = 1.0

    # --- drawing ------------------------------------------------------------------

    def _raw(self, size: int, rng: np.random.Generator) -> ScoreDraws:
        """``size`` draws of the unconditioned posterior (B's mean as observed)."""
        k = self.cases

        def within(v: Any) -> np.ndarray:
            df = v.runs - v.cases
            if df <= 0 or v.ms_within == 0.0:
                return np.zeros(size)
            return np.sqrt(v.ms_within * df / rng.chisquare(df, size))

        wa = within(self._a)
        wb = within(self._b) if self.paired else wa
        sigma = np.zeros((size, 2, 2))
        if self.paired:
            sigma[:] = inverse_wishart_2x2(k, self._scale, size, rng)
        else:
            sigma[:, 0, 0] = sigma[:, 1, 1] = self._scale[0, 0] / rng.chisquare(k - 1, size)
        # the means given Sigma: normal about the case means' means, covariance Sigma / k
        # (through the 2 x 2 Cholesky factor, written out)
        l11 = np.sqrt(sigma[:, 0, 0] / k)
        l21 = np.where(l11 > 0, sigma[:, 0, 1] / k / np.where(l11 > 0, l11, 1.0), 0.0)
        l22 = np.sqrt(np.maximum(sigma[:, 1, 1] / k - l21 * l21, 0.0))
        z = rng.standard_normal((size, 2))
        means = np.empty((size, 2))
        means[:, 0] = self._centre[0] + l11 * z[:, 0]
        means[:, 1] = self._centre[1] + l21 * z[:, 0] + l22 * z[:, 1]
        if not self.paired:
            means[:, 1] = means[:, 0]
        va = np.maximum(sigma[:, 0, 0] - wa**2 / self._a.n0, 0.0)
        vb = np.maximum(sigma[:, 1, 1] - wb**2 / self._b.n0, 0.0) if self.paired else va
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where((va > 0) & (vb > 0), sigma[:, 0, 1] / np.sqrt(va * vb), 1.0)
        rho = np.clip(np.nan_to_num(rho, nan=1.0), -1.0, 1.0)
        if not self.paired:
            rho = np.ones(size)
        mean_a = np.clip(means[:, 0], 0.0, 1.0)
        mean_b = np.clip(means[:, 1], 0.0, 1.0)
        return ScoreDraws(mean_a, mean_b, np.sqrt(va), wa, np.sqrt(vb), wb, rho)

    def draw(self, size: int, stream: int = 0, seed: int | None = None) -> ScoreDraws:
        """``size`` score models drawn from the posterior (seeded by ``seed``, by default
        the posterior's, and ``stream``), B's mean as :attr:`wanted` asks, each SD possible
        for its mean; draws in which B would not be a gain (or above 1) are drawn again."""
        first = self.seed if seed is None else seed
        rng = np.random.default_rng(np.random.SeedSequence([first, 13, stream]))
        parts: list[ScoreDraws] = []
        got = tried = 0
        while got < size:
            d = self._planned(self._raw(max(size - got, 64) * 2, rng))
            keep = self._keep(d)
            tried += len(d)
            got += int(keep.sum())
            parts.append(d.take(keep))
            if tried >= 200 * size and got < size:
                raise InvalidArgument(
                    f"B can reach {self._what()} only if A's mean score is below "
                    f"{self.limit:.3g}, which the pilot gives probability {got / tried:.2%}: "
                    "nothing to plan for"
                )
        self.kept = got / tried
        d = ScoreDraws(*(np.concatenate([getattr(p, f) for p in parts])[:size] for f in _FIELDS))
        ba, wa = _squeezed(d.mean_a, d.between_a, d.within_a)
        bb, wb = _squeezed(d.mean_b, d.between_b, d.within_b)
        return ScoreDraws(d.mean_a, d.mean_b, ba, wa, bb, wb, d.correlation)

    @property
    def limit(self) -> float:
        """The mean of A above which B cannot be the gain asked for (1 for ``observed``)."""
        value = float(self.wanted.value or 0.0)
        if self.wanted.kind == "rate":
            return value + (0.0 if self.margin is None else float(self.margin))
        return 1.0 - value if self.wanted.kind == "gain" else 1.0

    def _what(self) -> str:
        if self.wanted.kind == "rate":
            return f"a mean score of {float(self.wanted.value or 0.0):g}"
        return f"a gain of {float(self.wanted.value or 0.0):g} over A"

    def _planned(self, d: ScoreDraws) -> ScoreDraws:
        mean_a = d.mean_a if self.fixed_a is None else np.full(len(d), float(self.fixed_a))
        if self.wanted.kind == "rate":
            mean_b = np.full(len(d), float(self.wanted.value or 0.0))
        elif self.wanted.kind == "gain":
            mean_b = mean_a + float(self.wanted.value or 0.0)
        else:
            mean_b = d.mean_b
        rho = d.correlation if self.fixed_rho is None else np.full(len(d), float(self.fixed_rho))
        return ScoreDraws(mean_a, mean_b, d.between_a, d.within_a, d.between_b, d.within_b, rho)

    def _keep(self, d: ScoreDraws) -> np.ndarray:
        if self.wanted.kind == "observed":
            return np.ones(len(d), dtype=bool)
        m = 0.0 if self.margin is None else float(self.margin)
        return (d.mean_b <= 1.0) & (d.mean_b - d.mean_a + m > 0.0)

    # --- what it says -------------------------------------------------------------

    @property
    def intervals(self) -> dict[str, tuple[float, float, float]]:
        """Posterior mean and central 95% interval of each planned-for quantity (of
        :data:`INTERVAL_DRAWS` draws, a fixed stream): means, the gain B - A, the SDs
        and the correlation."""
        if self._intervals is None:
            d = self.draw(INTERVAL_DRAWS, 0)
            values = {f: getattr(d, f) for f in _FIELDS}
            values["gain"] = d.mean_b - d.mean_a
            out = {}
            for name, v in values.items():
                low, high = np.quantile(v, [0.025, 0.975])
                out[name] = (float(v.mean()), float(low), float(high))
            self._intervals = out
        return self._intervals

    def describe(self) -> str:
        """The planned-for quantities with their 95% intervals, in words."""
        iv = self.intervals

        def f(name: str, signed: bool = False) -> str:
            m, lo, hi = iv[name]
            fmt = "{:+.2f}" if signed else "{:.2f}"
            return f"{fmt.format(m)} ({fmt.format(lo)} to {fmt.format(hi)})"

        parts = []
        if self.fixed_a is None:
            parts.append(f"A's mean {f('mean_a')}")
        else:
            parts.append(f"A's mean {float(self.fixed_a):.2f} (given)")
        if self.wanted.kind == "observed":
            parts.append(f"B's gain {f('gain', signed=True)}")
        if self.paired:
            parts.append(f"SD of case means A {f('between_a')} and B {f('between_b')}")
            parts.append(f"of a case's runs A {f('within_a')} and B {f('within_b')}")
            if self.fixed_rho is None:
                parts.append(f"correlation {f('correlation')}")
        else:
            parts.append(f"SD of case means {f('between_a')}")
            parts.append(f"of a case's runs {f('within_a')}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        iv = self.intervals
        out: dict[str, Any] = {f"{name}_interval": list(v) for name, v in iv.items()}
        if self.fixed_a is not None:
            out["mean_a_interval"] = None
        if self.fixed_rho is not None:
            out["correlation_interval"] = None
        if self.wanted.kind != "observed":
            out["gain_interval"] = None
        if self.wanted.kind == "rate":
            out["mean_b_interval"] = None
        return {
            "cases": self.cases,
            "runs_a": self._a.runs,
            "runs_b": self._b.runs if self.paired else None,
            "score_b": self.wanted.to_dict(),
            "mean_a": self.fixed_a,
            "correlation": self.fixed_rho,
            **out,
            "kept": self.kept,
            "prior": "reference (normal one-way model)",
        }


def score_posterior_from_results(
    results: Any,
    *,
    wanted: Wanted,
    variants: Sequence[str] | None = None,
    mean_a: float | None = None,
    correlation: float | None = None,
    margin: float | None = None,
    seed: int = 0,
) -> ScorePosterior:
    """:class:`ScorePosterior` of a pilot run whose samples carry scores (read as
    :func:`~evalstats.planning._score_plan.score_model_from_results` reads them)."""
    from ._score_plan import pilot_scores

    per = pilot_scores(results, variants=variants)
    return ScorePosterior(
        per[0],
        per[1] if len(per) > 1 else None,
        wanted=wanted,
        mean_a=mean_a,
        correlation=correlation,
        margin=margin,
        seed=seed,
    )


# --- the assurance ----------------------------------------------------------------


def _beta_shapes(mean: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(spread, a, b) of each row's beta of case means with this mean and SD: ``spread``
    false for a row without (SD 0, or a mean of 0 or 1), whose case means are its mean
    (its a and b are then those of a placeholder beta)."""
    spread = (sd > 0) & (mean > 0) & (mean < 1)
    m = np.where(spread, mean, 0.5)
    s = np.where(spread, sd, 0.1)
    nu = m * (1.0 - m) / (s * s) - 1.0
    return spread, m * nu, (1.0 - m) * nu


def _concentrations(
    mean: np.ndarray, between: np.ndarray, within: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(kappa, scored) of each row's within-case beta: within^2 = (m (1 - m) - between^2)
    / (kappa + 1); ``scored`` false for a row without within-case SD, whose runs are
    their case's mean."""
    scored = within > 0
    w = np.where(scored, within, 1.0)
    kappa = np.maximum((mean * (1.0 - mean) - between * between) / (w * w) - 1.0, 1e-6)
    return kappa, scored


def _case_means(mean: np.ndarray, sd: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Case means (rows, cases): the beta of each row's mean and SD at quantiles ``u``."""
    from scipy.special import betaincinv

    spread, a, b = _beta_shapes(mean, sd)
    q = betaincinv(a[:, None], b[:, None], u)
    return np.where(spread[:, None], q, mean[:, None])


def _runs(mu: np.ndarray, mean: np.ndarray, between: np.ndarray, within: np.ndarray,
          repeats: int, rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """Runs (rows, cases, repeats) of cases with means ``mu`` (rows, cases), each row's
    within-case beta (:func:`_concentrations`)."""
    kappa, scored = _concentrations(mean, between, within)
    m = np.clip(mu, 1e-12, 1.0 - 1e-12)[:, :, None]
    k = kappa[:, None, None]
    shape = (*mu.shape, repeats)
    drawn = rng.beta(np.broadcast_to(k * m, shape), np.broadcast_to(k * (1.0 - m), shape))
    return np.where(scored[:, None, None], drawn, np.broadcast_to(mu[:, :, None], shape))


def _scores(d: ScoreDraws, cases: int, repeats: int, rng: np.random.Generator) -> tuple[Any, Any]:
    """One experiment per draw: A's and B's scores, each (draws, cases, repeats)."""
    from scipy.special import ndtr

    z1 = rng.standard_normal((len(d), cases))
    z2 = rng.standard_normal((len(d), cases))
    rho = d.correlation[:, None]
    zb = rho * z1 + np.sqrt(np.maximum(1.0 - rho * rho, 0.0)) * z2
    mu_a = _case_means(d.mean_a, d.between_a, ndtr(z1))
    mu_b = _case_means(d.mean_b, d.between_b, ndtr(zb))
    a = _runs(mu_a, d.mean_a, d.between_a, d.within_a, repeats, rng)
    b = _runs(mu_b, d.mean_b, d.between_b, d.within_b, repeats, rng)
    return a, b


def score_assurance(
    posterior: ScorePosterior,
    cases: int,
    repeats: int,
    *,
    level: float = 0.95,
    margin: float | None = None,
    about: str = "these_cases",
    experiments: int = 4000,
    stream: int = 1,
) -> Interval:
    """The power of ``cases`` x ``repeats`` averaged over the posterior: its assurance.

    Every simulated experiment draws its own score model from ``posterior``,
    then its cases and runs from that model (betas, as
    :func:`~evalstats.planning._score_plan.score_power` draws them), and is
    judged by the comparison's own rule about the claim ``about``
    (:func:`~evalstats.planning._score_plan.score_decisions`; with
    ``margin``, the non-inferiority gate). Returned as the share deciding,
    with its 95% Monte-Carlo (Wilson) interval.
    """
    from ._score_plan import _mc, score_decisions

    rng = np.random.default_rng(np.random.SeedSequence([posterior.seed, 17, stream]))
    draws = posterior.draw(experiments, stream)
    block = max(1, min(experiments, _CELLS // max(1, cases * repeats)))
    hits = 0
    for start in range(0, experiments, block):
        d = draws.take(slice(start, start + block))
        a, b = _scores(d, cases, repeats, rng)
        hits += int(score_decisions(a, b, about=about, level=level, margin=margin).sum())
    return _mc(hits, experiments)


#: Stream of the models a plan sized with a certainty is searched over (apart from the
#: intervals' stream 0 and the assurance's seed + 1).
_MODELS_STREAM = 1_000_003
#: Scores a :class:`ModelPowers` keeps for the next design (80 MB).
_CACHED = 10_000_000
#: Nodes of the tables through which a drawn model's case means are read
#: (:func:`_quantile_tables`).
_NODES = 513
#: A beta with a or b below this is read exactly, not from its table.
_U_SHAPED = 0.1


def _quantile_tables(mean: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, ...]:
    """(q, s, spread, a, b, exact), a row per model: the quantiles q of the beta of its
    mean and SD at Phi(z) on :data:`_NODES` normal scores z from -8.5 to 8.5, and
    their slopes dq/dz (phi(z) over the beta's density at q) times the step, kept
    within Fritsch & Carlson's bound so that the cubic read between nodes never
    falls. ``spread`` is false for a model without spread (SD 0, or a mean of 0
    or 1), whose case means are its mean; ``a`` and ``b`` are the beta's
    parameters, and ``exact`` marks the models whose case means are computed
    exactly instead (a or b below :data:`_U_SHAPED`).

    Read by :func:`_read_tables`, a case mean is the beta's quantile at the
    nodes and, for normal scores within 6 of 0 (all but 2e-9 of the draws; past
    about 7 the nodes are too far apart for the upper tail, where Phi(z) rounds
    towards 1), within 1.6e-7 of it between them (largest error over the 400
    models a plan from the tests' scored pilot of 12 cases draws; 2.6e-6 with
    257 nodes, and 4.6e-6 for the linear table of 4,097 nodes a fixed model's
    simulation reads): the beta law of each model, from 513 quantiles a model
    instead of one per case and experiment. A steeply U-shaped beta (a or b
    below 0.1: case means piled at 0 and 1) jumps between its nodes near the
    median, where the cubic errs by up to 1e-3 (a = b = 0.02); its rows keep
    betaincinv (tests/test_score_plan_pilot.py).
    """
    from scipy.special import betaincinv, betaln, ndtr

    from ._score_plan import _Z_EDGE

    z = np.linspace(-_Z_EDGE, _Z_EDGE, _NODES)
    spread, a, b = _beta_shapes(mean, sd)
    a, b = a[:, None], b[:, None]
    q = betaincinv(a, b, ndtr(z))
    q = np.maximum.accumulate(np.nan_to_num(q, nan=0.0), axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_density = (a - 1.0) * np.log(q) + (b - 1.0) * np.log1p(-q) - betaln(a, b)
        slope = np.exp(-0.5 * z * z - log_density) * ((z[1] - z[0]) / math.sqrt(2.0 * math.pi))
    rise = np.diff(q, axis=1)
    bound = 3.0 * np.minimum(np.pad(rise, ((0, 0), (1, 0)), "edge"),
                             np.pad(rise, ((0, 0), (0, 1)), "edge"))  # fmt: skip
    slope = np.clip(np.nan_to_num(slope, nan=0.0, posinf=0.0), 0.0, bound)
    exact = spread & (np.minimum(a, b)[:, 0] < _U_SHAPED)
    return q, np.where(spread[:, None], slope, 0.0), spread, a[:, 0], b[:, 0], exact


def _read_tables(
    tables: tuple[np.ndarray, ...], models: np.ndarray, z: Any, mean: np.ndarray
) -> Any:
    """Case means (rows, cases) at normal scores ``z`` (rows, cases), each row read by
    cubic Hermite interpolation from the table of its model (``models``, one a row),
    or its ``mean`` when the model has no spread."""
    from ._score_plan import _Z_EDGE

    q, slope = (t.ravel() for t in tables[:2])
    t = np.clip((z + _Z_EDGE) * ((_NODES - 1) / (2.0 * _Z_EDGE)), 0.0, _NODES - 1.0)
    i = np.minimum(t.astype(np.intp), _NODES - 2)
    f = t - i
    g = 1.0 - f
    at = models[:, None] * _NODES + i
    read = g * g * ((1.0 + 2.0 * f) * q[at] + f * slope[at]) + f * f * (
        (3.0 - 2.0 * f) * q[at + 1] - g * slope[at + 1]
    )
    out = np.where(tables[2][models][:, None], np.clip(read, 0.0, 1.0), mean[:, None])
    a, b, exact = tables[3:]
    rows = np.flatnonzero(exact[models])
    if rows.size:
        from scipy.special import betaincinv, ndtr

        m = models[rows]
        out[rows] = betaincinv(a[m][:, None], b[m][:, None], ndtr(z[rows]))
    return out


class _Block:
    """One block of a :class:`ModelPowers`' experiments, and the cases drawn for it so
    far: each case's two streams (positioned after its runs), its case means of A and
    B (2, rows, cases) and their runs (2, rows, cases, repeats)."""

    def __init__(self, d: ScoreDraws, models: np.ndarray, number: int) -> None:
        self.d, self.models, self.number = d, models, number
        self.other = np.sqrt(np.maximum(1.0 - d.correlation * d.correlation, 0.0))[:, None]
        self.runs_of: list[tuple[np.ndarray, np.ndarray]] = []
        for mean, between, within in ((d.mean_a, d.between_a, d.within_a),
                                      (d.mean_b, d.between_b, d.within_b)):  # fmt: skip
            self.runs_of.append(_concentrations(mean, between, within))
        self.streams: list[tuple[np.random.Generator, np.random.Generator]] = []
        self.means = np.empty((2, len(d), 0))
        self.runs = np.empty((2, len(d), 0, 0))

    def draw_runs(
        self, variant: int, mu: np.ndarray, rng: np.random.Generator, repeats: int
    ) -> Any:
        """The next ``repeats`` runs (rows, repeats) of one case of one variant, its means
        ``mu`` (rows,), from the case's stream ``rng``, one repeat after another."""
        kappa, scored = self.runs_of[variant]
        m = np.clip(mu, 1e-12, 1.0 - 1e-12)
        shape = (repeats, mu.size)
        drawn = rng.beta(
            np.broadcast_to(kappa * m, shape), np.broadcast_to(kappa * (1.0 - m), shape)
        )
        return np.where(scored[:, None], drawn.T, mu[:, None])


class ModelPowers:
    """Power of score designs over models drawn from a :class:`ScorePosterior`.

    :data:`~evalstats.planning._pilot.MODELS` models are drawn once; each is
    simulated on its own ``experiments // 100`` experiments (at least 10),
    judged by the comparison's own rule, with common random numbers across
    designs (every block of experiments and every case has its own random
    stream, a case's runs drawn one repeat after another, so a design with one
    more case or repeat adds draws and changes none; the cases drawn are kept
    for the next design while fewer than :data:`_CACHED` scores are). A case's
    means are read from its model's table of quantiles (:func:`_quantile_tables`).
    The power of a design at ``certainty`` is the (1 - certainty) order
    statistic of the models' powers, as
    :class:`~evalstats.planning._power._PilotPowers` takes it for pass rates;
    each model's power is noisy (sd 0.063 at 40 experiments and power 0.8),
    which leans the quantile to the conservative side.

    A model's simulated power takes only ``per_model + 1`` values, so many
    models tie at the order statistic (a dozen at 10 experiments a model),
    whose true powers spread widely. The model named for a design
    (:meth:`index`, :meth:`model`) is, of those tied at the order statistic,
    the one nearest the certainty's point of :meth:`effects` (the normal
    approximation's standardized effect of the design on each model, a
    smooth measure of how hard the design finds it): its simulated power is
    the order statistic, which sizes the design whichever tied model is
    named, and among the tied it is the one the approximation puts at the
    certainty's point. ``simulations/score_assurance.py --naming`` measures
    how far the named model's fresh power falls from the order statistic.

    ``seed`` seeds the models and experiments (by default the posterior's).
    """

    def __init__(
        self,
        posterior: ScorePosterior,
        certainty: float,
        *,
        target: float,
        level: float,
        margin: float | None,
        about: str,
        experiments: int,
        fresh: bool = False,
        seed: int | None = None,
    ) -> None:
        from ._pilot import MODELS
        from ._score_plan import _BLOCK

        self.posterior, self.certainty, self.target = posterior, certainty, target
        self.level, self.margin, self.about = level, margin, about
        self.experiments = experiments
        self.seed = posterior.seed if seed is None else seed
        self.per_model = max(10, experiments // 100)
        # ``fresh``: other models and other experiments, for what the design found
        # on the first ones delivers on models it was not chosen on
        self._tag = 20 if fresh else 19
        self.draws = posterior.draw(MODELS, _MODELS_STREAM + int(fresh), self.seed)
        models = np.repeat(np.arange(MODELS), self.per_model)
        rows = self.draws.take(models)
        self._rows = models.size
        self._blocks = [
            _Block(rows.take(slice(start, start + _BLOCK)), models[start : start + _BLOCK], k)
            for k, start in enumerate(range(0, models.size, _BLOCK))
        ]
        self._tables: list[tuple[np.ndarray, ...]] | None = None
        self._memo: dict[tuple[int, int], np.ndarray] = {}

    def powers(self, cases: int, repeats: int) -> np.ndarray:
        """Each drawn model's simulated power for ``cases`` x ``repeats``."""
        from ._score_plan import score_decisions

        key = (cases, repeats)
        if key not in self._memo:
            found = np.empty(self._rows, dtype=bool)
            start = 0
            for block in self._blocks:
                a, b = self._scores(block, cases, repeats)
                found[start : start + len(block.d)] = score_decisions(
                    a, b, about=self.about, level=self.level, margin=self.margin
                )
                start += len(block.d)
            self._memo[key] = found.reshape(len(self.draws), self.per_model).mean(axis=1)
        return self._memo[key]

    def _fits(self, cases: int, repeats: int) -> bool:
        return 2 * self._rows * cases * repeats <= _CACHED

    def _scores(self, block: _Block, cases: int, repeats: int) -> tuple[Any, Any]:
        """A's and B's scores (rows, cases, repeats) of one block, kept for the next
        design while they fit in :data:`_CACHED`."""
        have, deep = block.runs.shape[2:]
        if repeats > deep and have:
            if not self._fits(have, repeats):
                _, _, runs = self._cases(block, 0, cases, repeats)
                return runs[0], runs[1]
            more = np.stack(
                [
                    np.stack(
                        [block.draw_runs(v, block.means[v, :, j], pair[v], repeats - deep)
                         for j, pair in enumerate(block.streams)],
                        axis=1,
                    )
                    for v in (0, 1)
                ]
            )  # fmt: skip
            block.runs = np.concatenate([block.runs, more], axis=3)
        deep = max(deep, repeats) if have else repeats
        runs = block.runs
        if cases > have:
            if self._fits(cases, deep):
                streams, means, new = self._cases(block, have, cases, deep)
                block.streams += streams
                block.means = np.concatenate([block.means, means], axis=2)
                block.runs = runs = new if not have else np.concatenate([runs, new], axis=2)
            else:
                _, _, new = self._cases(block, have, cases, repeats)
                runs = np.concatenate([runs[:, :, :, :repeats], new], axis=2) if have else new
        return runs[0, :, :cases, :repeats], runs[1, :, :cases, :repeats]

    def _cases(
        self, block: _Block, first: int, last: int, repeats: int
    ) -> tuple[list[tuple[np.random.Generator, np.random.Generator]], np.ndarray, np.ndarray]:
        """Cases ``first`` to ``last - 1`` of a block, each from its own streams of A and
        B: the streams, the case means (2, rows, cases) and ``repeats`` runs of each
        (2, rows, cases, repeats)."""
        if self._tables is None:
            d = self.draws
            self._tables = [
                _quantile_tables(d.mean_a, d.between_a),
                _quantile_tables(d.mean_b, d.between_b),
            ]
        rows, seed = len(block.d), self.seed
        z = np.empty((2, rows, last - first))
        streams = []
        for j in range(first, last):
            ga = np.random.default_rng([seed, self._tag, block.number, j, 0])
            gb = np.random.default_rng([seed, self._tag, block.number, j, 1])
            z[0, :, j - first] = ga.standard_normal(rows)
            z[1, :, j - first] = gb.standard_normal(rows)
            streams.append((ga, gb))
        zb = block.d.correlation[:, None] * z[0] + block.other * z[1]
        means = np.stack(
            [
                _read_tables(self._tables[0], block.models, z[0], block.d.mean_a),
                _read_tables(self._tables[1], block.models, zb, block.d.mean_b),
            ]
        )
        runs = np.empty((2, rows, last - first, repeats))
        for j, pair in enumerate(streams):
            for v in (0, 1):
                runs[v, :, j, :] = block.draw_runs(v, means[v, :, j], pair[v], repeats)
        return streams, means, runs

    def effects(self, cases: int, repeats: int) -> np.ndarray:
        """Each drawn model's standardized effect for ``cases`` x ``repeats``: B's gain over
        A (plus the margin) over the normal approximation's SD of the mean difference the
        comparison judges (smaller is harder). About these cases the rule reads the runs as
        one sample, of the SD of a run's difference across cases and runs; about cases like
        these, the case means' differences, their SD over ``cases`` plus the runs' over
        ``cases`` x ``repeats``."""
        d = self.draws
        cov = d.correlation * d.between_a * d.between_b
        cases_var = d.between_a**2 + d.between_b**2 - 2.0 * cov
        runs_var = d.within_a**2 + d.within_b**2
        if self.about == "these_cases":
            var = (cases_var + runs_var) / (cases * repeats)
        else:
            var = cases_var / cases + runs_var / (cases * repeats)
        gap = d.mean_b - d.mean_a + (0.0 if self.margin is None else self.margin)
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = np.where(var > 0, gap / np.sqrt(np.maximum(var, 1e-300)), np.inf)
        return out

    def index(self, cases: int, repeats: int) -> int:
        """The drawn model at the certainty's point of the powers of this design: of the
        models whose simulated power is the (1 - certainty) order statistic, the one whose
        :meth:`effects` rank is nearest that point's (the first in the models' order among
        equals)."""
        from ._power import at_certainty, certainty_place

        powers = self.powers(cases, repeats)
        tied = np.flatnonzero(powers == powers[at_certainty(powers, self.certainty)])
        if tied.size == 1:
            return int(tied[0])
        rank = np.empty(powers.size, dtype=np.intp)
        rank[np.argsort(self.effects(cases, repeats), kind="stable")] = np.arange(powers.size)
        point = certainty_place(powers.size, self.certainty)
        return int(tied[np.argmin(np.abs(rank[tied] - point))])

    def power(self, cases: int, repeats: int) -> float:
        """The power this design reaches in ``certainty`` of the drawn models (their
        (1 - certainty) order statistic, the model named there's simulated power)."""
        from ._power import at_certainty

        powers = self.powers(cases, repeats)
        return float(powers[at_certainty(powers, self.certainty)])

    def reach(self, cases: int, repeats: int) -> Interval:
        """The share of the drawn models whose simulated power reaches the target, with
        its 95% (Wilson) interval over the models."""
        from ._score_plan import _mc

        powers = self.powers(cases, repeats)
        return _mc(int(np.count_nonzero(powers >= self.target)), powers.size)

    def model(self, cases: int, repeats: int) -> ScoreModel:
        """The drawn model at the certainty's point, as a score model."""
        return self.model_of(self.index(cases, repeats))

    def model_of(self, index: int) -> ScoreModel:
        """Drawn model ``index`` as a score model."""
        from ._score_plan import ScoreModel

        d = self.draws.take(index)
        return ScoreModel(
            float(d.mean_a),
            float(d.mean_b),
            float(d.between_a),
            float(d.within_a),
            float(d.correlation),
            between_b=float(d.between_b),
            within_b=float(d.within_b),
        )

    def judged(self, cases: int, repeats: int, seed: int) -> ScorePower:
        """A fresh simulation of the model at the certainty's point, for this design."""
        from ._score_plan import score_power

        return score_power(
            self.model(cases, repeats),
            cases,
            repeats,
            level=self.level,
            margin=self.margin,
            experiments=self.experiments,
            seed=seed,
        )


def pilot_score_plan(
    model: ScoreModel,
    posterior: ScorePosterior,
    *,
    certainty: float | None = None,
    **options: Any,
) -> ScorePlan:
    """:func:`~evalstats.planning._score_plan.score_plan` of ``model`` (fitted from a
    pilot), with the design's assurance over ``posterior``.

    Without ``certainty`` the design is the one ``score_plan(model,
    **options)`` finds for the model as fitted. With it (in (0, 1)), the
    design is the fewest, searched by the same rules, whose simulated power
    reaches the target in ``certainty`` of the models drawn from
    ``posterior`` (:class:`ModelPowers`), and the plan names the model at
    that point (``sized_for``: among the models whose simulated power ties
    there, the one at that point of the design's standardized effect) and
    states its power, a fresh simulation of that model (``power``), which
    falls either side of the order statistic the design was sized by (2.9
    points from it on average at 40 experiments a model, 4.3 naming the
    first tied model; ``simulations/score_assurance.py --naming``). The
    models and their experiments are seeded by the plan's ``seed`` when it
    is given, else by the posterior's. Either way the plan
    also states the design's power averaged over what the pilot leaves
    uncertain (:func:`score_assurance`, on as many experiments as the
    plan's designs, each with its own drawn model, seeded apart from them)
    and the posterior's intervals of the planned-for quantities.
    ``simulations/score_assurance.py`` measures how often designs sized
    with ``certainty=0.8`` reach the target on the true model (88%, 76% to
    94%, of 56 at the default experiments, against a stated reach of 82%).
    """
    from dataclasses import replace

    from ._score_plan import score_plan

    if not isinstance(posterior, ScorePosterior):
        raise InvalidArgument(f"posterior={posterior!r} must be a ScorePosterior")
    sizing = None
    seed = options.get("seed")
    if certainty is not None:
        sizing = _model_powers(posterior, certainty, options, seed=seed)
    found = score_plan(model, sizing=sizing, **options)
    assured = score_assurance(
        posterior,
        found.cases,
        found.repeats,
        level=found.level,
        margin=found.margin,
        about=found.about,
        experiments=found.experiments,
        stream=int(options.get("seed", 0)) + 1,
    )
    if sizing is None:
        return replace(found, assurance=assured, posterior=posterior)
    # The share of models the design serves, on models and experiments it was
    # not chosen on: on its own, by construction, it would be at least the
    # certainty.
    fresh = _model_powers(posterior, sizing.certainty, options, fresh=True, seed=seed)
    return replace(
        found,
        assurance=assured,
        posterior=posterior,
        certainty=sizing.certainty,
        sized_for=sizing.model(found.cases, found.repeats),
        reach=fresh.reach(found.cases, found.repeats),
        models=len(sizing.draws),
        model_experiments=sizing.per_model,
    )


def _model_powers(
    posterior: ScorePosterior,
    certainty: Any,
    options: Any,
    *,
    fresh: bool = False,
    seed: Any = None,
) -> ModelPowers:
    """:class:`ModelPowers` for a plan's options, its arguments checked as the plan's
    (:func:`~evalstats.planning._score_plan.checked_options`, the same defaults)."""
    from .._validate import as_rate
    from ._power import _single
    from ._score_plan import checked_options

    sure = float(_single("certainty", as_rate("certainty", certainty, open_interval=True)))
    checked = checked_options(**options)
    return ModelPowers(
        posterior,
        sure,
        target=checked["power"],
        level=checked["level"],
        margin=checked["margin"],
        about=checked["about"],
        experiments=checked["experiments"],
        fresh=fresh,
        seed=None if seed is None else checked["seed"],
    )
