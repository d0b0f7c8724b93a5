"""The case model: how pass rates vary between cases, for two variants.

:class:`CaseModel` is what :func:`evalstats.planning._power.plan` plans against and
:func:`evalstats.planning._simulate.simulate_clustered` draws from; it lives below both,
so that neither imports the other for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from .._validate import as_rate, check_spread, whole_number
from ..errors import InvalidArgument

__all__ = ["CaseModel", "PilotCounts"]


def _rate(name: str, value: Any) -> float:
    rate = as_rate(name, value)
    if rate.ndim:
        raise InvalidArgument(f"{name} must be a single number, not an array of shape {rate.shape}")
    return float(rate)


_QUAD = 80  # Gauss-Jacobi nodes for expectations over the Beta of case pass rates
_QUAD_SMOOTH = 2000  # quantile nodes when the Beta is narrow or nearly all at 0 or 1
_SINGULAR = 0.5  # a Beta parameter below this piles the mass up at one end
_ICC_ZERO = 1e-6  # below this the case rates vary by < 1e-6 p(1-p): taken as identical
_HERMITE = 24  # Gauss-Hermite nodes for the case-by-variant spread
_BETA_MIN = 1e-9  # Beta parameters below this are lost in the quadrature's arithmetic


@dataclass(frozen=True)
class PilotCounts:
    """The per-case counts of a pilot run, kept by a :class:`CaseModel` fitted from it.

    ``a`` holds ``(passes, runs)`` for each of A's cases; ``b`` the same for
    B on the cases both variants ran, and ``pairs`` A's counts on those same
    cases, in the same order (both empty for a pilot of one variant). They
    are what :func:`evalstats.planning._power.plan` needs to carry what the
    pilot leaves uncertain into a plan.
    """

    a: tuple[tuple[int, int], ...]
    pairs: tuple[tuple[int, int], ...] = ()
    b: tuple[tuple[int, int], ...] = ()

    @property
    def cases(self) -> int:
        """A's cases in the pilot."""
        return len(self.a)

    @property
    def repeats(self) -> int:
        """Runs per case of A, rounded (as :func:`fit_case_model` reports them)."""
        return round(sum(n for _, n in self.a) / len(self.a))


@dataclass(frozen=True)
class CaseModel:
    """How pass rates vary between cases, for A and for B.

    A case's pass rate under A is drawn from a Beta distribution with mean
    ``p_a`` and intra-case correlation ``icc`` (``alpha + beta = 1/icc - 1``,
    so the variance of case rates is ``icc * p_a * (1 - p_a)``). Under B the
    same case's rate is shifted on the logit scale by the constant that makes
    B's mean ``p_b``, plus, optionally, a case-by-variant normal term with
    standard deviation ``spread`` (logit scale): some cases gain more from B
    than others.

    ``icc == 0`` means every case has the same pass rate. ``icc`` is A's;
    B's follows from the shift and the spread. A model fitted from a pilot
    (:func:`evalstats.planning._power.fit_case_model`) also records ``cases``,
    ``repeats`` and B's own ANOVA estimate ``icc_b``, for information: they
    do not enter the model, and its per-case counts in ``pilot``
    (:class:`PilotCounts`), from which a plan carries what the pilot leaves
    uncertain.
    """

    p_a: float
    p_b: float
    icc: float
    spread: float = 0.0
    cases: int | None = field(default=None, compare=False)
    repeats: int | None = field(default=None, compare=False)
    icc_b: float | None = field(default=None, compare=False)
    pilot: PilotCounts | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _rate("p_a", self.p_a)
        _rate("p_b", self.p_b)
        try:
            icc, _ = float(self.icc), float(self.spread)
        except (TypeError, ValueError):
            raise InvalidArgument(
                f"icc={self.icc!r} and spread={self.spread!r} must be numbers"
            ) from None
        if math.isnan(icc) or not 0.0 <= icc < 1.0:
            raise InvalidArgument(f"icc={self.icc!r} must be at least 0 and less than 1")
        check_spread(self.spread)
        ab = self._beta()
        if ab is not None and min(ab) < _BETA_MIN:
            raise InvalidArgument(
                f"p_a={self.p_a!r} with icc={self.icc!r} puts almost every case at a pass rate "
                "of exactly 0 or 1, past what the case model computes: give p_a further from "
                "0 and 1 (or exactly 0 or 1), or a smaller icc"
            )

    # -- the distribution of case rates --
    def _beta(self) -> tuple[float, float] | None:
        if self.icc < _ICC_ZERO or self.p_a in (0.0, 1.0):
            return None
        s = 1.0 / self.icc - 1.0
        return self.p_a * s, (1.0 - self.p_a) * s

    def _nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature nodes and weights (summing to 1) for A's case rates."""
        return self._quadrature

    @cached_property
    def _quadrature(self) -> tuple[np.ndarray, np.ndarray]:
        """The nodes of :meth:`_nodes`, computed once per model.

        Gauss-Jacobi quadrature for the Beta(a, b) density: with x = (1 + t) / 2
        it is the Jacobi weight (1 - t)^(b - 1) (1 + t)^(a - 1), so expectations
        of smooth functions of the rate are exact to high order even when the
        density is unbounded at 0 or 1. Two cases take the midpoint rule on
        the Beta's quantiles instead: a narrow density (icc < 0.005), where
        Gauss-Jacobi overflows, and one whose mass piles up at 0 or 1 (a or
        b below 0.5: a high icc, or a rate near 0 or 1), where the logit
        shift's image expit(logit x + s) is far from any polynomial near that
        end and Gauss-Jacobi misses B's mean (tests/test_plan.py).
        """
        ab = self._beta()
        if ab is None:
            return np.array([self.p_a]), np.ones(1)
        if ab[0] + ab[1] > 200 or min(ab) < _SINGULAR:
            u = (np.arange(_QUAD_SMOOTH) + 0.5) / _QUAD_SMOOTH
            return _beta_ppf(u, *ab), np.full(_QUAD_SMOOTH, 1.0 / _QUAD_SMOOTH)
        from scipy.special import roots_jacobi

        with np.errstate(invalid="ignore", divide="ignore"):
            # (a + b == 1 makes one recurrence term 0/0, which scipy then replaces)
            t, w = roots_jacobi(_QUAD, ab[1] - 1.0, ab[0] - 1.0)
        return (1.0 + t) / 2.0, w / w.sum()

    def shift(self) -> float:
        """The logit shift that gives B the mean ``p_b``."""
        return self._shift

    @cached_property
    def _shift(self) -> float:
        # Computed once per model: the planner's simulator draws many blocks.
        return _solve_shift(*self._nodes(), self.p_b, self.spread)

    def moments(self) -> dict[str, float]:
        """Moments of per-case rates that the plan needs.

        ``difference``: mean of (B's rate - A's rate), ``p_b - p_a``;
        ``between``: variance over cases of (B's rate - A's rate);
        ``within``: mean over cases of ``q_a(1 - q_a) + q_b(1 - q_b)``, the
        binomial variance of one run of each variant.
        """
        return dict(self._moments)

    @cached_property
    def _moments(self) -> dict[str, float]:
        # Computed once per model: a plan's searches call clustered_power, and
        # so this, dozens of times on the same model. (The fields are frozen.)
        x, wx = self._nodes()
        qa = x[:, None]
        qb = _shifted(qa, self._shift, self.spread)  # (nodes, hermite)
        w = wx[:, None] * _hermite(self.spread)[1][None, :]
        diff = qb - qa
        mean_diff = float((diff * w).sum())
        between = float((((diff - mean_diff) ** 2) * w).sum())
        within = float(((qa * (1 - qa) + qb * (1 - qb)) * w).sum())
        return {"difference": mean_diff, "between": between, "within": within}

    def differences(self, repeats: int) -> np.ndarray:
        """The law of one case's B passes less A passes over ``repeats`` runs each.

        ``out[d + repeats]`` is the probability that a case drawn from the
        model, run ``repeats`` times by each variant, has ``d`` more passes
        under B than under A (d = -repeats .. repeats): the binomial counts of
        each variant averaged over the case rates by the model's own
        quadrature (:meth:`moments` uses the same nodes), by
        :func:`difference_pmf`. Cases are independent draws, so the
        differences of an eval's cases are independent draws from this law.
        """
        return _differences_of(self, whole_number("repeats", repeats))

    def draw(
        self, rng: np.random.Generator, size: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw per-case pass rates of A and B, each of shape ``size``."""
        ab = self._beta()
        qa = np.full(size, self.p_a) if ab is None else rng.beta(*ab, size=size)
        z = rng.standard_normal(size) * self.spread if self.spread else 0.0
        qb = _shifted(qa, self.shift(), 0.0, extra=z)
        return qa, qb

    def draw_rows(
        self, rng: np.random.Generator, rows: slice, cases: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The case rates of experiments ``rows`` (a slice) of ``cases`` cases each.

        With no spread, consecutive slices drawn in order from one generator
        are the rates :meth:`draw` gives all at once (its Beta draws are taken
        row after row; a spread's normal draws come after all of them).
        """
        return self.draw(rng, (rows.stop - rows.start, cases))

    def to_dict(self) -> dict[str, Any]:
        return {
            "p_a": self.p_a,
            "p_b": self.p_b,
            "icc": self.icc,
            "spread": self.spread,
            "cases": self.cases,
            "repeats": self.repeats,
            "icc_b": self.icc_b,
        }


@lru_cache(maxsize=64)
def _differences_of(model: CaseModel, repeats: int) -> np.ndarray:
    x, wx = model._nodes()
    y = _shifted(x[:, None], model.shift(), model.spread)  # (nodes, hermite)
    out = difference_pmf(x[None, :], wx[None, :], y[None, :, :], _hermite(model.spread)[1], repeats)
    law: np.ndarray = out[0]
    law.setflags(write=False)
    return law


#: Values (models x nodes x counts) the law of differences works on at once.
#: A bound on memory: ``benchmarks/crossovers.py`` finds 1,000 models' laws as fast
#: (within 6%) from 1 << 15 to 1 << 23.
_PMF_VALUES = 1 << 21
#: Above this many runs the two counts' laws are convolved by FFT.
#: ``benchmarks/crossovers.py`` times both: even up to 8 runs, the FFT 1.1-1.2x
#: faster at 16 and 32 (one case model; 200 drawn models: even at 16, 1.1-1.4x
#: faster at 32) and 1.3-1.8x from 64 runs; the laws differ by rounding only (at
#: most 1.1e-16), so moving the switch would move printed figures' last digits.
_PMF_FFT = 32


def difference_pmf(
    x: np.ndarray, wx: np.ndarray, y: np.ndarray, wy: np.ndarray, repeats: int
) -> np.ndarray:
    """The law of K_b - K_a, each model's: shape (models, 2 repeats + 1), d = -R..R.

    Given a case's rates, K_a ~ Binomial(R, x) and K_b ~ Binomial(R, y)
    independently; the case's rates are quadrature nodes: ``x`` (models,
    nodes) A's rates with weights ``wx`` (models, nodes, each row summing to
    1), ``y`` (models, nodes, extra) B's rate at each node of A's and each
    node of a further average (a spread's Gauss-Hermite nodes) with weights
    ``wy`` (extra,). So ``P(K_b - K_a = d) = sum_i wx_i sum_h wy_h sum_k
    Bin(k; R, x_i) Bin(k + d; R, y_ih)``; the sum over k is a correlation of
    the two counts' laws, taken directly up to :data:`_PMF_FFT` runs and by
    FFT above. Rounding's negative crumbs are set to 0 and each row rescaled
    to sum to 1. Models are worked on a few at a time (:data:`_PMF_VALUES`).
    """
    from scipy.special import gammaln, xlog1py, xlogy

    r = int(repeats)
    k = np.arange(r + 1, dtype=float)
    log_choose = gammaln(r + 1.0) - gammaln(k + 1.0) - gammaln(r - k + 1.0)

    def law(p: np.ndarray) -> np.ndarray:
        q = p[..., None]
        return np.exp(log_choose + xlogy(k, q) + xlog1py(r - k, -q))

    models, nodes = x.shape
    out = np.empty((models, 2 * r + 1))
    step = max(1, _PMF_VALUES // max(1, nodes * (r + 1)))
    size = 1 << max(0, (2 * r).bit_length())  # at least 2R + 1
    for lo in range(0, models, step):
        hi = min(lo + step, models)
        a = law(x[lo:hi]) * wx[lo:hi, :, None]  # (m, nodes, R + 1), weighted
        b = np.zeros_like(a)
        for h, w in enumerate(wy):
            b += w * law(y[lo:hi, :, h])
        if r <= _PMF_FFT:
            for d in range(-r, r + 1):
                first, last = max(0, -d), min(r, r - d)
                pair = a[:, :, first : last + 1] * b[:, :, first + d : last + d + 1]
                out[lo:hi, d + r] = pair.sum(axis=(1, 2))
        else:
            spectrum = np.fft.rfft(a, size, axis=-1) * np.fft.rfft(b[:, :, ::-1], size, axis=-1)
            conv = np.fft.irfft(spectrum.sum(axis=1), size, axis=-1)[:, : 2 * r + 1]
            out[lo:hi] = conv[:, ::-1]
    np.maximum(out, 0.0, out=out)
    out /= out.sum(axis=1, keepdims=True)
    return out


def _beta_ppf(u: np.ndarray, a: float, b: float) -> np.ndarray:
    """``scipy.stats.beta.ppf(u, a, b)`` for 0 < u < 1 and a, b > 0, without importing
    scipy.stats: the function ``beta.ppf`` itself calls (Boost's beta quantile in
    ``scipy.special``), so the nodes are the same to the last bit; importing
    ``scipy.stats`` alone takes about 0.5 s. A SciPy without it falls back on
    ``beta.ppf``."""
    try:
        from scipy.special._ufuncs import _beta_ppf as ppf
    except ImportError:  # pragma: no cover - a SciPy that no longer has it
        from scipy.stats import beta

        return np.asarray(beta.ppf(u, a, b), dtype=float)
    return np.asarray(ppf(u, a, b), dtype=float)


@lru_cache(maxsize=4)
def _standard_hermite(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return x, w / w.sum()


def _hermite(spread: float, nodes: int = _HERMITE) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights (summing to 1) of a normal with sd ``spread``."""
    if spread == 0.0:
        return np.zeros(1), np.ones(1)
    x, w = _standard_hermite(nodes)
    return x * spread, w


def _shifted(qa: np.ndarray, shift: float, spread: float, *, extra: Any = None) -> np.ndarray:
    from scipy.special import expit, logit

    z = _hermite(spread)[0] if extra is None else extra
    with np.errstate(divide="ignore", invalid="ignore"):
        x = logit(qa) + shift + z
    if math.isinf(shift):
        # B's rate 1 (or 0) on every case, also where A's is 0 (or 1)
        return np.full(np.shape(x), 1.0 if shift > 0 else 0.0)
    return np.asarray(expit(x))


def _solve_shift(nodes: np.ndarray, weights: np.ndarray, p_b: float, spread: float) -> float:
    """The logit shift whose mean B rate over the nodes is ``p_b``."""
    if p_b in (0.0, 1.0):
        return -math.inf if p_b == 0.0 else math.inf
    if np.all((nodes == 0.0) | (nodes == 1.0)):
        raise InvalidArgument(
            f"p_a={float(nodes[0]):g}: every case passes or fails under A, so no shift on the "
            f"logit scale gives B the mean p_b={p_b:g}; the case model needs 0 < p_a < 1"
        )
    qa = nodes[:, None]
    w = weights[:, None] * _hermite(spread)[1][None, :]

    def gap_and_slope(s: float) -> tuple[float, float]:
        # the mean's gap and its derivative in the shift, sum w q (1 - q)
        q = _shifted(qa, s, spread)
        return float((q * w).sum()) - p_b, float((q * (1.0 - q) * w).sum())

    def gap(s: float) -> float:
        return gap_and_slope(s)[0]

    # Past a shift of 2048 on the logit scale every rate a double can hold is 0
    # or 1: the bracket stops there, before infinities make the gap NaN.
    lo, hi = -1.0, 1.0
    while gap(lo) > 0 and lo > -2048.0:
        lo *= 2
    while gap(hi) < 0 and hi < 2048.0:
        hi *= 2
    if gap(lo) > 0 or gap(hi) < 0:
        share = float(weights[nodes >= 1.0].sum() if gap(lo) > 0 else weights[nodes <= 0.0].sum())
        raise InvalidArgument(
            f"p_b={p_b:g}: A's case rates sit so near 0 and 1 ({100 * share:.3g}% of them at "
            f"{'1' if gap(lo) > 0 else '0'} to machine precision, an icc near 1) that no shift "
            "on the logit scale gives B that mean; the case model needs a lower icc"
        )

    return _newton_in(gap_and_slope, lo, hi)


def _newton_in(f: Any, lo: float, hi: float, *, xtol: float = 1e-12) -> float:
    """The root of an increasing function with f(lo) <= 0 <= f(hi), by Newton's steps
    kept inside the bracket (a step leaving it, or a flat slope, bisects instead);
    ``f(x)`` gives the value and the slope at x. It stops once a step, or the
    bracket, is below ``xtol``. (scipy.optimize's brentq would do; importing
    scipy.optimize after scipy.special takes 0.16-0.18 s, by ``python -X
    importtime``, of a plan whose own work can be well under a second.)"""
    x = 0.5 * (lo + hi)
    for _ in range(200):
        fx, slope = f(x)
        if fx == 0.0:
            return x
        if fx < 0.0:
            lo = x
        else:
            hi = x
        step = fx / slope if slope > 0.0 else math.inf
        new = x - step
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - x) < xtol or hi - lo < xtol:
            return new
        x = new
    return x
