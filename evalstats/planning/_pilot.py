"""What a pilot run leaves uncertain, carried into a plan.

A pilot of 10 cases x 3 runs pins down neither A's pass rate nor how much
cases differ: its estimates are draws of luck around the truth, and a plan
that takes them as truth promises more power than it delivers. This module
turns the pilot's per-case counts into a posterior over the case model (A's
mean rate and intra-case correlation, exactly on a grid; B's rate as the
caller asks for it) that :func:`evalstats.planning._power.plan` plans
against:

* the design is the smallest that reaches the target power in ``certainty``
  of the case models drawn from the posterior, each model's power
  simulated on its own block of experiments (:class:`Mixture`), so that
  over what the pilot leaves uncertain the design reaches the target with
  about that probability (the idea of Browne 1995 and Julious & Owen 2006,
  who plan for an upper confidence limit of the pilot's variance);
* its power averaged over the posterior ("assurance", O'Hagan, Stevens &
  Campbell 2005) is simulated with a fresh case model drawn for every
  simulated experiment, and stated beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..stats._casemodel import CaseModel, PilotCounts
from ..stats._intervals import Interval

__all__ = ["Mixture", "Posterior", "Wanted", "wanted"]

#: A's mean rate on the grid: midpoints of 100 cells of (0, 1).
_MU = (np.arange(100) + 0.5) / 100
#: The intra-case correlation on the grid: 0, 0.01, ..., 0.98.
_RHO = np.arange(99) / 100
#: The coarser grid of the joint posterior of A's and B's counts, and its logit
#: shifts of the pilot's B (a nuisance: the plan's B is what the caller asks).
_MU_JOINT = (np.arange(50) + 0.5) / 50
_RHO_JOINT = np.arange(50) / 50
_SHIFTS = np.linspace(-4.0, 8.0, 31)
#: Gauss-Legendre nodes of the joint likelihood's integral over a case's rate.
_JOINT_NODES = 32
#: Distinct (passes, runs) pairs of a case's A and B counts, and runs per case,
#: up to which B's counts enter the posterior (beyond, the pilot is large
#: enough to pin A down alone).
_JOINT_PAIRS = 40
_JOINT_RUNS = 100
#: Runs per case the prior's Fisher information enumerates at most (beyond
#: that the data, not the prior, settle the posterior).
_PRIOR_RUNS = 100
#: Gauss-Legendre nodes on the quantile scale of each drawn Beta of case rates.
_QUANTILES = 64
#: Gauss-Hermite nodes of the case-by-variant spread in the vectorised moments.
_HERMITE_NODES = 12
#: B's rate of a drawn model is rounded to this grid (the observed gain's draws).
_RATE_GRID = 1e-4
#: Posterior draws whose normal approximations the plan averages (and ranks).
RANKED_DRAWS = 4000
#: Case models drawn from the posterior whose powers the search simulates, each
#: on its own block of experiments.
MODELS = 200


@dataclass(frozen=True)
class Wanted:
    """What B should reach: a rate, a gain over A, or the pilot's own B rate.

    ``kind`` is ``"rate"`` (B's mean pass rate is ``value``), ``"gain"`` (B's
    is A's plus ``value``, whatever A's rate) or ``"observed"`` (the pilot's
    B, with the uncertainty of its gain over A).
    """

    kind: str
    value: float | None = None

    def __str__(self) -> str:
        if self.kind == "rate":
            return f"{_pct(float(self.value or 0.0))}"
        if self.kind == "gain":
            return f"A's rate {_signed(float(self.value or 0.0))}"
        return "the pilot's own B rate"

    def rate(self, p_a: float) -> float:
        """B's rate when A's is ``p_a`` (not for ``observed``)."""
        return float(self.value) if self.kind == "rate" else p_a + float(self.value or 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value}


def wanted(p_b: Any, *, name: str = "p_b") -> Wanted:
    """``p_b`` read as a :class:`Wanted`: a rate such as 0.9, a gain over A written
    with its sign ("+0.1"), or "observed"; checked at the door."""
    from .._validate import as_rate

    if isinstance(p_b, Wanted):
        return p_b
    if isinstance(p_b, str):
        text = p_b.strip()
        if text.lower() == "observed":
            return Wanted("observed")
        if text.startswith("+"):
            try:
                gain = float(text[1:])
            except ValueError:
                gain = math.nan
            if not 0.0 < gain < 1.0:
                raise InvalidArgument(
                    f"{name}={p_b!r} must be a gain over A between +0 and +1, such as '+0.1'"
                )
            return Wanted("gain", gain)
        try:
            value = float(text)
        except ValueError:
            raise InvalidArgument(
                f"{name}={p_b!r} must be a rate such as 0.9, a gain over A such as '+0.1', "
                "or 'observed'"
            ) from None
        p_b = value
    rate = as_rate(name, p_b)
    if rate.ndim:
        raise InvalidArgument(f"{name} must be a single number, not an array of shape {rate.shape}")
    return Wanted("rate", float(rate))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _signed(x: float) -> str:
    return f"+{100 * x:.0f} points" if x >= 0 else f"{100 * x:.0f} points"


# --- the posterior of A's case model ------------------------------------------------


def _beta_params(mu: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore"):
        s = np.where(rho > 0, 1.0 / np.where(rho > 0, rho, 1.0) - 1.0, np.inf)
    return mu * s, (1.0 - mu) * s


def _log_likelihood(cells: dict[tuple[int, int], int], mu: np.ndarray, rho: np.ndarray) -> Any:
    """Log-likelihood of A's per-case counts on the grid (beta-binomial; binomial at rho 0)."""
    from scipy.special import betaln

    a, b = _beta_params(mu, rho)
    spread = rho > 0
    a_, b_ = np.where(spread, a, 1.0), np.where(spread, b, 1.0)
    out = np.zeros(np.broadcast(mu, rho).shape)
    with np.errstate(divide="ignore"):
        log_mu, log_not = np.log(mu), np.log1p(-mu)
    for (y, n), count in cells.items():
        bb = betaln(a_ + y, b_ + n - y) - betaln(a_, b_)
        binom = y * log_mu + (n - y) * log_not
        out = out + count * np.where(spread, bb, binom)
    return out


def _fisher(n: int, mu: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Fisher information of one beta-binomial count of ``n`` runs in (mu, rho).

    By enumeration of the n + 1 outcomes with the exact scores (digamma
    derivatives of the log probability in the Beta parameters, chained to
    (mu, rho)); at rho = 0 it is taken at rho = 1e-4, its limit to 4 digits.
    The outcomes are taken in turn by the recurrences of the gamma function and
    the digamma function (Gamma(x + 1) = x Gamma(x), psi(x + 1) = psi(x) + 1 / x),
    with no special function called: the digamma differences the scores need
    are then sums of a few positive terms, not differences of nearby
    digammas, which lose digits when a and b are large (rho near 0).
    """
    r = np.maximum(rho, 1e-4)
    s = 1.0 / r - 1.0
    a, b = mu * s, (1.0 - mu) * s
    ds = -1.0 / r**2
    shape = np.broadcast(mu, rho).shape
    # y = 0: log p = sum_{k<n} log(b + k) - log(a + b + k); psi(a + b + n) -
    # psi(a + b) and psi(b + n) - psi(b) as sums of 1 / (x + k)
    log_p, d_b, d_ab = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for k in range(n):
        log_p += np.log(b + k) - np.log(a + b + k)
        d_b += 1.0 / (b + k)
        d_ab += 1.0 / (a + b + k)
    d_a = np.zeros(shape)  # psi(a + y) - psi(a)
    info = np.zeros(shape + (2, 2))
    for y in range(n + 1):
        p = np.exp(log_p)
        ga = d_a - d_ab
        gb = d_b - d_ab  # psi(b + n - y) - psi(b) - (psi(a + b + n) - psi(a + b))
        g_mu = s * (ga - gb)
        g_rho = ds * (mu * ga + (1.0 - mu) * gb)
        info[..., 0, 0] += p * g_mu * g_mu
        info[..., 0, 1] += p * g_mu * g_rho
        info[..., 1, 1] += p * g_rho * g_rho
        if y < n:
            # p(y + 1) / p(y) = (n - y) / (y + 1) (a + y) / (b + n - y - 1)
            log_p += math.log((n - y) / (y + 1.0)) + np.log(a + y) - np.log(b + (n - y - 1))
            d_a += 1.0 / (a + y)
            d_b -= 1.0 / (b + (n - y - 1))
    info[..., 1, 0] = info[..., 0, 1]
    return info


def _log_jeffreys(runs: dict[int, int], mu: np.ndarray, rho: np.ndarray, *, joint: bool) -> Any:
    """Log of Jeffreys' prior for the pilot's design: the root of the determinant
    of the Fisher information of all its cases (``joint``), or, with A's rate
    fixed, the root of the information about rho alone."""
    total = 0.0
    for n, count in runs.items():
        total = total + count * _fisher(min(n, _PRIOR_RUNS), mu, rho)
    info = np.asarray(total)
    det = info[..., 1, 1] if not joint else info[..., 0, 0] * info[..., 1, 1] - info[..., 0, 1] ** 2
    return 0.5 * np.log(np.maximum(det, 1e-300))


def _joint_log_likelihood(
    paired: dict[tuple[int, int, int, int], int],
    mu: np.ndarray,
    rho: np.ndarray,
    shifts: np.ndarray = _SHIFTS,
    rates: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-likelihood of the cases both variants ran, on the grid (mu, rho, shift).

    A case's rate q is Beta(mu, rho); A's passes are Binomial(n_a, q) and B's
    Binomial(n_b, expit(logit q + shift)), the pilot's B shifted as the case
    model shifts it (no spread). The integral over q is by
    :data:`_JOINT_NODES` Gauss-Legendre nodes on the Beta's quantile scale
    (:func:`_case_rates`; at most :data:`_JOINT_RUNS` runs a case, so that no
    term underflows). Also returns B's mean rate at each grid point. ``rates``
    are those nodes when already computed (:func:`_joint_rates`).
    """
    from scipy.special import expit, log_expit

    x, lx = _joint_rates(mu, rho) if rates is None else rates
    w = _quantile_nodes(_JOINT_NODES)[1]
    with np.errstate(divide="ignore"):
        log_a, log_not_a = np.log(x), np.log1p(-x)
    z = lx[:, :, None] + shifts[None, None, :]
    log_b, log_not_b = log_expit(z), log_expit(-z)
    b_rates = np.einsum("q,cqs->cs", w, expit(z))
    total = np.zeros((x.shape[0], shifts.size))
    for (ya, na, yb, nb), count in paired.items():
        with np.errstate(invalid="ignore"):
            p_a = np.exp(_xlogy(ya, log_a) + _xlogy(na - ya, log_not_a))
            p_b = np.exp(_xlogy(yb, log_b) + _xlogy(nb - yb, log_not_b))
        with np.errstate(divide="ignore"):
            total += count * np.log(np.einsum("q,cq,cqs->cs", w, p_a, p_b))
    shape = (mu.size, rho.size, shifts.size)
    return total.reshape(shape), b_rates.reshape(shape)


def _joint_rates(mu: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The case rates of every (mu, rho) on the grid at the joint likelihood's nodes."""
    m_, r_ = np.meshgrid(mu, rho, indexing="ij")
    return _case_rates(m_.ravel(), r_.ravel(), nodes=_JOINT_NODES)


def _xlogy(k: int, log_p: np.ndarray) -> np.ndarray:
    """k log p, taken as 0 when k is 0 (where log p may be -inf)."""
    return np.zeros_like(log_p) if k == 0 else k * log_p


# --- the vectorised case model ------------------------------------------------------


@lru_cache(maxsize=4)
def _quantile_nodes(nodes: int = _QUANTILES) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on (0, 1) and their weights (summing to 1)."""
    t, w = np.polynomial.legendre.leggauss(nodes)
    return (t + 1.0) / 2.0, w / 2.0


#: The rates of :func:`_case_rates` at its default nodes, by (mu, rho): a plan asks
#: for the same drawn models' rates again, to solve B's shift and then for the law
#: of a case's difference (each Beta quantile takes about 1.6 microseconds).
_RATES: dict[tuple[float, float], tuple[np.ndarray, np.ndarray]] = {}
#: ... kept for at most this many models (64 nodes of two arrays: about 10 MB).
_KEPT_RATES = 10_000


def _case_rates(
    mu: np.ndarray, rho: np.ndarray, *, nodes: int = _QUANTILES
) -> tuple[np.ndarray, np.ndarray]:
    """Each drawn Beta of case rates at the Gauss-Legendre nodes of its quantile scale:
    the rates and their logits, shape (draws, _QUANTILES).

    E f(X) = integral over u of f(F^-1(u)); the quantiles below the median are
    found from the Beta, those above from the mirrored Beta (1 - X), so that
    rates near 0 and near 1 keep their precision, and so do their logits.
    At the default nodes each (mu, rho) is computed once (:data:`_RATES`): the
    functions act value by value, so a row is the same computed alone or with
    others.
    """
    if nodes != _QUANTILES:
        return _rates_at(mu, rho, nodes)
    keys = list(zip(mu.tolist(), rho.tolist(), strict=True))
    missing = [k for k, key in enumerate(keys) if key not in _RATES]
    if missing:
        if len(_RATES) + len(missing) > _KEPT_RATES:
            _RATES.clear()
            missing = list(range(len(keys)))
        x, lx = _rates_at(mu[missing], rho[missing], nodes)
        for row, k in enumerate(missing):
            _RATES[keys[k]] = (x[row], lx[row])
    found = [_RATES[key] for key in keys]
    shape = (len(keys), nodes)
    x_all = np.array([f[0] for f in found]).reshape(shape)
    lx_all = np.array([f[1] for f in found]).reshape(shape)
    return x_all, lx_all


def _rates_at(mu: np.ndarray, rho: np.ndarray, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_case_rates`, computed."""
    from scipy.special import betaincinv

    u, _ = _quantile_nodes(nodes)
    a, b = _beta_params(mu, rho)
    spread = rho > 0
    a_, b_ = np.where(spread, a, 1.0)[:, None], np.where(spread, b, 1.0)[:, None]
    low = u < 0.5
    near0 = betaincinv(a_, b_, u[low][None, :])  # X where it is small
    near1 = betaincinv(b_, a_, 1.0 - u[~low][None, :])  # 1 - X where X is large
    shape = (a_.shape[0], u.size)
    x, lx = np.empty(shape), np.empty(shape)
    x[:, low], x[:, ~low] = near0, 1.0 - near1
    with np.errstate(divide="ignore"):
        lx[:, low] = np.log(near0) - np.log1p(-near0)
        lx[:, ~low] = np.log1p(-near1) - np.log(near1)
    fixed = ~spread[:, None]
    with np.errstate(divide="ignore"):
        lmu = np.log(mu) - np.log1p(-mu)
    return np.where(fixed, mu[:, None], x), np.where(fixed, lmu[:, None], lx)


def _spread_nodes(spread: float) -> tuple[np.ndarray, np.ndarray]:
    """:data:`_HERMITE_NODES` Gauss-Hermite nodes and weights of the spread."""
    from ..stats._casemodel import _hermite

    return _hermite(spread, _HERMITE_NODES)


def _solve_shifts(rates: tuple[np.ndarray, np.ndarray], p_b: np.ndarray, spread: float) -> Any:
    """The logit shift giving B the mean ``p_b`` over each row's nodes, vectorised.

    Safeguarded Newton steps on the increasing mean of expit(logit x + s + z):
    a step leaving the bracket is replaced by the bracket's midpoint. Rows
    stop once their step is below 1e-10; only the rows still moving are
    computed.
    """
    from scipy.special import expit

    x, logits = rates
    z, wz = _spread_nodes(spread)
    lx = logits[:, :, None] + z[None, None, :]
    w = _quantile_nodes()[1][None, :, None] * wz[None, None, :]
    inner = (p_b > 0) & (p_b < 1)
    target = np.where(inner, p_b, 0.5)
    lo, hi = np.full(p_b.shape, -_SHIFT_BOUND), np.full(p_b.shape, _SHIFT_BOUND)
    mean = np.clip((x * w[:, :, 0] / wz[0]).sum(axis=1), 1e-12, 1 - 1e-12)
    s = np.clip(np.log(target / (1 - target)) - np.log(mean / (1 - mean)), lo, hi)
    moving = np.arange(p_b.size)
    for _ in range(100):
        sm = s[moving]
        q = expit(lx[moving] + sm[:, None, None])
        f = (q * w).sum(axis=(1, 2)) - target[moving]
        df = (q * (1.0 - q) * w).sum(axis=(1, 2))
        lo[moving] = np.where(f < 0, sm, lo[moving])
        hi[moving] = np.where(f > 0, sm, hi[moving])
        with np.errstate(divide="ignore", invalid="ignore"):
            step = sm - f / df
        bad = ~np.isfinite(step) | (step <= lo[moving]) | (step >= hi[moving])
        new = np.where(bad, 0.5 * (lo[moving] + hi[moving]), step)
        s[moving] = new
        moving = moving[np.abs(new - sm) >= 1e-10]
        if moving.size == 0:
            break
    return np.where(inner, s, np.where(p_b >= 1, np.inf, -np.inf))


def differences_of(
    p_a: np.ndarray, icc: np.ndarray, shift: np.ndarray, spread: float, repeats: int
) -> np.ndarray:
    """The law of a case's B passes less A passes over ``repeats`` runs, for each drawn
    model (A's mean rate, icc and B's logit shift): shape (models, 2 repeats + 1).

    By :func:`~evalstats.stats._casemodel.difference_pmf` on the Gauss-Legendre
    nodes of each model's quantile scale (:func:`_case_rates`) and the spread's
    Gauss-Hermite nodes, those B's shift was solved on; each distinct model once.
    """
    from scipy.special import expit

    from .._validate import whole_number
    from ..stats._casemodel import difference_pmf

    r = whole_number("repeats", repeats)
    rows = np.stack([p_a, icc, shift], axis=1)
    uniq, back = np.unique(rows, axis=0, return_inverse=True)
    x, logits = _case_rates(uniq[:, 0], uniq[:, 1])
    z, wz = _spread_nodes(spread)
    s = uniq[:, 2]
    with np.errstate(invalid="ignore"):
        y = expit(logits[:, :, None] + np.where(np.isinf(s), 0.0, s)[:, None, None] + z)
    # B's rate 1 (or 0) on every case when its shift is infinite, as CaseModel has it
    y = np.where(np.isinf(s)[:, None, None], (s > 0)[:, None, None].astype(float), y)
    w = np.broadcast_to(_quantile_nodes()[1], x.shape)
    law: np.ndarray = difference_pmf(x, w, y, wz, r)[back.ravel()]
    return law


#: The logit shifts the vectorised solver brackets (a shift of 200 moves a case
#: rate of 1e-80 to one half).
_SHIFT_BOUND = 200.0


@dataclass(frozen=True)
class _Draws:
    """Case models drawn from the posterior, as arrays: A's mean rate, icc, B's
    mean rate, the logit shift, and the moments the normal approximation uses."""

    p_a: np.ndarray
    icc: np.ndarray
    p_b: np.ndarray
    shift: np.ndarray
    difference: np.ndarray
    between: np.ndarray
    within: np.ndarray

    def score(self, repeats: float) -> np.ndarray:
        """The normal approximation's effect per case in standard units at ``repeats``
        (higher is easier): difference / sd of a case's mean difference."""
        r = np.inf if math.isinf(repeats) else float(repeats)
        var = self.between + (0.0 if math.isinf(r) else self.within / r)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = self.difference / np.sqrt(var)
        z = np.where(var > 0, z, np.where(self.difference > 0, np.inf, -np.inf))
        return np.where(self.difference > 1e-9, z, -np.inf)


class Mixture:
    """Case models drawn from a posterior, each on its own block of experiments.

    ``draw(rng, (experiments, cases))``, as :meth:`CaseModel.draw
    <evalstats.stats._casemodel.CaseModel.draw>` has it, gives row i the case
    rates of model ``i // per_model``; so :class:`~evalstats.planning._simulate.
    DesignPowers` simulates every model's designs at once, with common random
    numbers across designs, and :meth:`powers` splits its verdicts by model.
    """

    def __init__(self, draws: _Draws, per_model: int, spread: float) -> None:
        self.models, self.per_model, self.spread = draws.p_a.size, per_model, spread
        rows = np.repeat(np.arange(self.models), per_model)
        a, b = _beta_params(draws.p_a, draws.icc)
        self._spread_rows = (draws.icc > 0)[rows]
        self._a = np.where(draws.icc > 0, a, 1.0)[rows][:, None]
        self._b = np.where(draws.icc > 0, b, 1.0)[rows][:, None]
        self._p_a = draws.p_a[rows][:, None]
        self._shift = draws.shift[rows][:, None]
        self.draws = draws
        self._laws: dict[int, np.ndarray] = {}

    @property
    def experiments(self) -> int:
        return self.models * self.per_model

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> tuple[np.ndarray, Any]:
        rows, cases = size
        if rows != self.experiments:
            raise InvalidArgument(f"size={size!r} must have {self.experiments} rows")
        return self.draw_rows(rng, slice(0, rows), cases)

    def draw_rows(
        self, rng: np.random.Generator, rows: slice, cases: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The case rates of the experiments ``rows`` (a slice of them), drawn from ``rng``.

        With no spread, consecutive slices drawn in order from one generator
        are the rates :meth:`draw` gives all at once (its Beta draws are taken
        row after row; a spread's normal draws come after all of them).
        """
        from scipy.special import expit, logit

        size = (rows.stop - rows.start, cases)
        qa = rng.beta(self._a[rows], self._b[rows], size=size)
        np.copyto(qa, self._p_a[rows], where=~self._spread_rows[rows, None])
        with np.errstate(divide="ignore"):
            qb = logit(qa)
        qb += self._shift[rows]
        if self.spread:
            qb += rng.standard_normal(size) * self.spread
        expit(qb, out=qb)
        return qa, qb

    def differences(self, repeats: int) -> np.ndarray:
        """Each model's law of a case's B passes less A passes over ``repeats`` runs,
        shape (models, 2 repeats + 1): as :meth:`CaseModel.differences
        <evalstats.stats._casemodel.CaseModel.differences>`, on the nodes the
        posterior solved the model's shift on (:func:`differences_of`). Row i
        of the experiments has model ``i // per_model``."""
        if repeats not in self._laws:
            d = self.draws
            self._laws[repeats] = differences_of(d.p_a, d.icc, d.shift, self.spread, repeats)
        return self._laws[repeats]

    def powers(self, found_better: np.ndarray) -> np.ndarray:
        """Each model's share of its experiments in which B was found better."""
        return found_better.reshape(self.models, self.per_model).mean(axis=1)


class Posterior:
    """What a pilot leaves uncertain about the case model, as draws to plan against.

    A's case rates are Beta with mean ``mu`` and intra-case correlation
    ``rho`` (the :class:`~evalstats.stats._casemodel.CaseModel`). The
    posterior of (mu, rho) is computed exactly on a grid under Jeffreys'
    prior for the pilot's design (the root of the determinant of the Fisher
    information of A's counts, by enumeration of each case's outcomes):

    * from A's per-case counts alone (beta-binomial, 100 x 99 cells) when
      the pilot ran one variant, when its fitted spread is not 0, or when its
      cases hold more than :data:`_JOINT_PAIRS` distinct pairs of counts (a
      pilot that large pins A down alone);
    * otherwise from A's and B's counts together (50 x 50 cells, with the
      logit shift of the pilot's B as a third, nuisance, dimension with a
      flat prior on 41 values from -4 to 8): B's runs on a case are a second
      look at that case's rate, which sharpens the icc (a posterior sd about
      a quarter smaller at 10 cases x 3 runs and icc 0.1).

    With ``p_a`` given, mu is fixed and the posterior is that of rho. B's
    rate follows ``wanted``: a fixed rate (mu is then conditioned below it:
    B must be a gain), A's rate plus a gain (mu below 1 minus the gain), or
    the pilot's own B (its mean under the drawn shift, from the joint
    posterior; from a large pilot, A's draw plus the mean per-case gain with
    its t-distributed uncertainty). The case-by-variant ``spread`` is the
    pilot's fitted one, taken as known.
    """

    def __init__(
        self,
        counts: PilotCounts,
        wanted: Wanted,
        *,
        p_a: float | None,
        spread: float,
        seed: int,
    ) -> None:
        self.counts, self.wanted, self.fixed_a, self.spread = counts, wanted, p_a, spread
        self.seed = seed
        self._solved: dict[int, tuple[float, float, float]] = {}
        paired: dict[tuple[int, int, int, int], int] = {}
        for (ya, na), (yb, nb) in zip(counts.pairs, counts.b, strict=True):
            paired[(ya, na, yb, nb)] = paired.get((ya, na, yb, nb), 0) + 1
        self.joint = (
            bool(paired)
            and spread == 0.0
            and len(paired) <= _JOINT_PAIRS
            and max(max(k[1], k[3]) for k in paired) <= _JOINT_RUNS
        )
        runs: dict[int, int] = {}
        cells: dict[tuple[int, int], int] = {}
        for y, n in counts.a:
            runs[n] = runs.get(n, 0) + 1
            cells[(y, n)] = cells.get((y, n), 0) + 1
        mu_grid, rho_grid = _refined_grids(
            cells,
            runs,
            p_a,
            _MU_JOINT.size if self.joint else _MU.size,
            _RHO_JOINT.size if self.joint else _RHO.size,
        )
        mu = mu_grid[:, None] if p_a is None else np.array([[p_a]])
        rho = rho_grid[None, :]
        alone: dict[tuple[int, int], int] = {}
        pairs_left = dict(paired)
        for y, n in counts.a:
            # A's cases that B also ran enter the joint likelihood instead
            match = next(
                (k for k in pairs_left if self.joint and k[:2] == (y, n) and pairs_left[k]), None
            )
            if match is not None:
                pairs_left[match] -= 1
            else:
                alone[(y, n)] = alone.get((y, n), 0) + 1
        log_post = _log_likelihood(alone, mu, rho) + _log_jeffreys(runs, mu, rho, joint=p_a is None)
        width = np.where(rho_grid == 0, 0.5, 1.0)[None, :]  # rho = 0 stands for half a cell
        self._mu_grid, self._rho_grid = mu[:, 0], rho_grid
        self._cube: np.ndarray | None = None
        self._b_rates: np.ndarray | None = None
        if self.joint:
            # Two passes: the shifts the pilot's B allows, then a grid spanning them
            # (a large pilot's B pins its shift down to less than a coarse step).
            rates = _joint_rates(self._mu_grid, rho_grid)
            first, _ = _joint_log_likelihood(paired, self._mu_grid, rho_grid, rates=rates)
            profile = (first + log_post[:, :, None]).max(axis=(0, 1))
            kept = np.nonzero(profile >= profile.max() - 25.0)[0]
            step = _SHIFTS[1] - _SHIFTS[0]
            self._shifts = np.linspace(
                _SHIFTS[kept.min()] - step, _SHIFTS[kept.max()] + step, _SHIFTS.size
            )
            log_pairs, b_rates = _joint_log_likelihood(
                paired, self._mu_grid, rho_grid, self._shifts, rates=rates
            )
            log_cube = log_pairs + log_post[:, :, None]
            cube = np.exp(log_cube - log_cube.max()) * width[:, :, None]
            self._cube, self._b_rates = cube, b_rates
            w = cube.sum(axis=2)
        else:
            w = np.exp(log_post - log_post.max()) * width
            w = np.broadcast_to(w, (mu.shape[0], rho.shape[1])).copy()
        whole = w.sum()
        self.mu_interval = _grid_interval(self._mu_grid, w.sum(axis=1))
        if wanted.kind in ("rate", "gain"):
            limit = float(wanted.value) if wanted.kind == "rate" else 1.0 - float(wanted.value)
            w[self._mu_grid >= limit, :] = 0.0
        self.kept = float(w.sum() / whole)  # the share of the posterior where B is a gain
        self.icc_interval = _grid_interval(rho_grid, w.sum(axis=0))
        self._weights = w / w.sum() if w.sum() > 0 else w
        self._gain: tuple[float, float, int] | None = None
        if wanted.kind == "observed" and not self.joint:
            self._gain = self._observed_gain()

    def _observed_gain(self) -> tuple[float, float, int]:
        pairs = list(zip(self.counts.pairs, self.counts.b, strict=True))
        if len(pairs) < 2:
            raise InvalidArgument(
                "p_b='observed' needs a pilot of both variants on at least 2 of the same "
                f"cases; this one has {len(pairs)}: give the p_b to plan for"
            )
        d = np.array([yb / nb - ya / na for (ya, na), (yb, nb) in pairs])
        return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size)), d.size

    @property
    def gain_interval(self) -> tuple[float, float, float] | None:
        """The pilot's gain of B over A and its 95% interval (``observed`` only)."""
        if self.wanted.kind != "observed":
            return None
        if self._cube is not None and self._b_rates is not None:
            gain = self._b_rates - self._mu_grid[:, None, None]
            order = np.argsort(gain, axis=None)
            c = np.cumsum(self._cube.ravel()[order])
            c /= c[-1]
            flat = gain.ravel()[order]
            low = float(flat[min(int(np.searchsorted(c, 0.025)), flat.size - 1)])
            high = float(flat[min(int(np.searchsorted(c, 0.975)), flat.size - 1)])
            mean = float((gain * self._cube).sum() / self._cube.sum())
            return mean, low, high
        if self._gain is None:
            return None
        from scipy.special import stdtrit

        m, se, n = self._gain
        t = float(stdtrit(n - 1, 0.975))
        return m, m - t * se, m + t * se

    def draw(self, size: int, stream: int, *, null: bool = False) -> _Draws:
        """``size`` case models drawn from the posterior (seeded by ``stream``); with
        ``null``, each with B's mean set to A's (the same spread), for false positives."""
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 7, stream]))
        if self.wanted.kind == "observed" and self._cube is not None:
            cube = self._cube / self._cube.sum()
            cell = rng.choice(cube.size, size=size, p=cube.ravel())
            i, j, k = np.unravel_index(cell, cube.shape)
            p_a, icc = self._mu_grid[i], self._rho_grid[j]
            p_b = self._b_rates[i, j, k]  # type: ignore[index]
        else:
            flat = self._weights.ravel()
            cell = rng.choice(flat.size, size=size, p=flat)
            i, j = np.unravel_index(cell, self._weights.shape)
            p_a, icc = self._mu_grid[i], self._rho_grid[j]
        if self.wanted.kind == "gain":
            p_b = p_a + float(self.wanted.value)
        elif self.wanted.kind == "rate":
            p_b = np.full(size, float(self.wanted.value))
        elif self._gain is not None:
            m, se, n = self._gain
            p_b = np.clip(p_a + m + se * rng.standard_t(n - 1, size=size), 0.0, 1.0)
        if null:
            p_b = p_a
        # The moments of each drawn model, solved once per distinct model (and
        # kept: the assurance's draws mostly repeat the ranked ones).
        rate_key = np.rint(p_b / _RATE_GRID).astype(np.int64)
        p_b = rate_key * _RATE_GRID
        key = (i.astype(np.int64) * self._rho_grid.size + j) * (int(1 / _RATE_GRID) + 1) + rate_key
        uniq, first, back = np.unique(key, return_index=True, return_inverse=True)
        missing = [k for k, u in enumerate(uniq) if int(u) not in self._solved]
        if missing:
            idx = first[missing]
            rates = _case_rates(p_a[idx], icc[idx])
            shift = _solve_shifts(rates, p_b[idx], self.spread)
            between, within = _moments(rates, shift, self.spread)
            for m, k in enumerate(missing):
                self._solved[int(uniq[k])] = (shift[m], between[m], within[m])
        solved = np.array([self._solved[int(u)] for u in uniq]).reshape(-1, 3)[back.ravel()]
        return _Draws(p_a, icc, p_b, solved[:, 0], p_b - p_a, solved[:, 1], solved[:, 2])

    @cached_property
    def ranked(self) -> _Draws:
        """The draws that :meth:`hard` ranks (:data:`RANKED_DRAWS`, a fixed stream)."""
        return self.draw(RANKED_DRAWS, 0)

    def hard(self, repeats: float, certainty: float) -> int:
        """The index (in :attr:`ranked`) of the model harder than ``certainty`` of the
        ranked ones at ``repeats``, by the normal approximation's effect per case."""
        score = self.ranked.score(repeats)
        order = np.argsort(score, kind="stable")
        return int(order[min(int((1.0 - certainty) * score.size), score.size - 1)])

    def model(self, index: int) -> CaseModel:
        """The ranked draw ``index`` as a :class:`CaseModel`."""
        d = self.ranked
        return CaseModel(float(d.p_a[index]), float(d.p_b[index]), float(d.icc[index]), self.spread)

    def assurance(
        self, cases: int, repeats: int, *, experiments: int, level: float, stream: int
    ) -> tuple[Interval, Interval]:
        """Power averaged over the posterior, and the false-positive rate so averaged:
        every simulated experiment draws its own case model (for the false positives,
        the same with B's mean set to A's), then its cases and runs, and is judged by
        the clustered rule. Both with 95% Monte-Carlo (Wilson) intervals."""
        from ._simulate import _wilson

        hits = self._hits(cases, repeats, experiments, level, stream, null=False)
        false = self._hits(cases, repeats, experiments, level, stream + 1, null=True)
        return _wilson(hits, experiments), _wilson(false, experiments)

    def _hits(
        self, cases: int, repeats: int, experiments: int, level: float, stream: int, null: bool
    ) -> int:
        """Experiments in which B is found better: each draws its case model, then its
        cases' differences, one uniform a case through the law of its model
        (:func:`differences_of`, :func:`~evalstats.planning._simulate.judged_draws`)."""
        from ._simulate import _BLOCK, _verdicts, judged_draws

        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 8, stream]))
        memo = _verdicts(cases, repeats, level, True)
        hits, done = 0, 0
        block = max(1, min(_BLOCK, 2_000_000 // max(cases, 1)))
        while done < experiments:
            m = min(block, experiments - done)
            d = self.draw(m, stream * 1_000_003 + done + 1, null=null)
            cdf = np.cumsum(differences_of(d.p_a, d.icc, d.shift, self.spread, repeats), axis=1)
            u = rng.random((m, cases))
            verdicts = judged_draws(u, cdf, np.arange(m), repeats, level, memo)
            hits += int(np.count_nonzero(verdicts == 1))
            done += m
        return hits

    def to_dict(self) -> dict[str, Any]:
        gain = self.gain_interval
        return {
            "cases": self.counts.cases,
            "repeats": self.counts.repeats,
            "p_b": self.wanted.to_dict(),
            "p_a": self.fixed_a,
            "p_a_interval": None if self.fixed_a is not None else list(self.mu_interval),
            "icc_interval": list(self.icc_interval),
            "gain_interval": None if gain is None else list(gain),
            "spread": self.spread,
            "kept": self.kept,
            "prior": "Jeffreys",
        }


def _moments(
    rates: tuple[np.ndarray, np.ndarray], shift: np.ndarray, spread: float
) -> tuple[np.ndarray, np.ndarray]:
    """Variance over cases of B's rate minus A's, and the mean within-case variance."""
    from scipy.special import expit

    x, logits = rates
    z, wz = _spread_nodes(spread)
    qb = expit(logits[:, :, None] + shift[:, None, None] + z[None, None, :])
    qa = x[:, :, None]
    w = _quantile_nodes()[1][None, :, None] * wz[None, None, :]
    diff = qb - qa
    mean = (diff * w).sum(axis=(1, 2))
    between = (((diff - mean[:, None, None]) ** 2) * w).sum(axis=(1, 2))
    within = ((qa * (1 - qa) + qb * (1 - qb)) * w).sum(axis=(1, 2))
    return between, within


def _refined_grids(
    cells: dict[tuple[int, int], int],
    runs: dict[int, int],
    p_a: float | None,
    n_mu: int,
    n_rho: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The grid of (mu, rho) the posterior is computed on: ``n_mu`` x ``n_rho`` points
    spanning where A's counts leave posterior density above e^-25 of its peak (on the
    full grid), so that a large pilot's narrow posterior is not one cell wide."""
    mu = _MU[:, None] if p_a is None else np.array([[p_a]])
    log_post = _log_likelihood(cells, mu, _RHO[None, :]) + _log_jeffreys(
        runs, mu, _RHO[None, :], joint=p_a is None
    )
    keep = log_post >= log_post.max() - 25.0
    rows, cols = np.nonzero(keep)
    step_mu, step_rho = _MU[1] - _MU[0], _RHO[1] - _RHO[0]
    lo_rho = max(float(_RHO[cols.min()]) - step_rho, 0.0)
    hi_rho = min(float(_RHO[cols.max()]) + step_rho, float(_RHO[-1]))
    rho_grid = np.linspace(lo_rho, hi_rho, n_rho)
    if p_a is not None:
        return np.array([p_a]), rho_grid
    lo_mu = max(float(_MU[rows.min()]) - step_mu, step_mu / 2)
    hi_mu = min(float(_MU[rows.max()]) + step_mu, 1.0 - step_mu / 2)
    width = (hi_mu - lo_mu) / n_mu
    return lo_mu + (np.arange(n_mu) + 0.5) * width, rho_grid


def _grid_interval(values: np.ndarray, weights: np.ndarray) -> tuple[float, float, float]:
    """The posterior mean and central 95% interval of a gridded marginal."""
    w = weights / weights.sum()
    c = np.cumsum(w)
    low = float(values[min(int(np.searchsorted(c, 0.025)), values.size - 1)])
    high = float(values[min(int(np.searchsorted(c, 0.975)), values.size - 1)])
    return float((values * w).sum()), low, high
