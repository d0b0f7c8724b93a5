"""Monte-Carlo power: against stand-ins, and against a model of differing cases.

Two simulators, both reporting power and the false-positive rate each with its
own Monte-Carlo interval:

* :func:`simulate_power` runs whole evals, as a person would: stand-ins that
  really write text, the runner, the real checks, the real comparison.
* :func:`simulate_clustered` draws from a :class:`~evalstats.stats._casemodel.CaseModel`
  (cases that differ in difficulty), vectorised over experiments, and judges
  each experiment with the clustered paired comparison.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import check_experiments, check_level, check_method, whole_number
from ..errors import InvalidArgument
from ..stats._casemodel import CaseModel
from ..stats._intervals import Interval

__all__ = ["DesignPowers", "PowerResult", "simulate_clustered", "simulate_power"]

#: Comparison methods simulate_power can judge by.
SIMULATION_METHODS = ("overlap", "newcombe", "ztest", "mcnemar", "clustered")


def _wilson(hits: int, n: int) -> Interval:
    from ..stats._intervals import proportion_ci

    return proportion_ci(hits, n, level=0.95, method="wilson")


@dataclass(frozen=True)
class PowerResult:
    """Simulated power and false-positive rate, each with a 95% Wilson interval.

    ``power`` is the share of experiments in which the comparison said B is
    better when B really is (as simulated); ``false_positive_rate`` the share
    in which it said so when B was a copy of A. Both are :class:`Interval`
    objects whose ``low``/``high`` are the Monte-Carlo uncertainty of the
    simulation itself. ``settings`` records what was simulated.
    """

    power: Interval
    false_positive_rate: Interval
    experiments: int
    hits: int
    false_positives: int
    settings: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        s = self.settings
        what = ", ".join(f"{k}={v}" for k, v in s.items() if k not in ("seed",))
        return (
            f"power {self.power} and false-positive rate {self.false_positive_rate} "
            f"from {self.experiments} simulated experiments ({what}; seed {s.get('seed')}); "
            "ranges are 95% Monte-Carlo intervals"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "power": self.power.to_dict(),
            "false_positive_rate": self.false_positive_rate.to_dict(),
            "experiments": self.experiments,
            "hits": self.hits,
            "false_positives": self.false_positives,
            "settings": dict(self.settings),
        }


# --- the vectorised case-model simulator --------------------------------------

_BLOCK = 20_000  # experiments drawn at once (bounds memory: block x cases floats)

#: A limit this far beyond 0 decides (rounding in the t limits is about 1e-16).
_DECIDED = 1e-12


#: Values (experiments x cases) judged at once: the betting rule's copies and
#: sorts of a judgement are this many floats each, whatever the experiments.
_JUDGED = 1 << 20


def clustered_decisions(
    passes_a: np.ndarray,
    passes_b: np.ndarray,
    repeats: int,
    *,
    level: float,
    rng: np.random.Generator | None = None,
    method: str = "auto",
    only_b_better: bool = False,
    memo: dict[Any, int] | None = None,
) -> np.ndarray:
    """+1/-1/0 verdicts of the clustered paired comparison, one per experiment.

    ``passes_a`` and ``passes_b`` have shape ``(experiments, cases)`` and hold
    each case's pass count out of ``repeats`` runs. The per-case mean paired
    differences ``d_c = (passes_b - passes_a) / repeats`` are judged by
    :func:`evalstats.stats._intervals.clustered_limits` with ``method`` (by default as
    :func:`evalstats.stats._compare.compare` judges them: the betting interval, at
    every number of cases, :data:`~evalstats.stats._intervals.AUTO_METHOD`); B is
    better when the lower limit is above 0.
    ``rng`` is accepted for callers that pass one and not used: the verdict
    depends on the counts only.

    The betting rule is judged by :func:`evalstats.stats._intervals.betting_signs`,
    which gives the interval's decisions exactly without computing its limits
    (one evaluation of the betting capital per side instead of a bisection),
    so that the planner can afford to simulate it. With ``only_b_better``
    the betting rule's "A better" side is not evaluated (those rows are 0),
    for callers that count only "B better". Its decision depends only on the
    multiset of an experiment's differences, which with few repeats take few
    values (-1, 0 and 1 at one repeat): experiments with the same multiset are
    judged once (:func:`_betting_decisions`), and ``memo`` (for one number of
    cases, repeats, level and side; by default one kept per process for each,
    :func:`_verdicts`) keeps the verdicts of multisets already judged.
    Experiments are judged :data:`_JUDGED` values at a time.
    """
    from ..stats._intervals import AUTO_METHOD, clustered_limits

    if method == "auto":
        method = AUTO_METHOD
    if method == "betting":
        if memo is None:
            memo = _verdicts(passes_a.shape[-1], repeats, level, only_b_better)
        return _betting_decisions(passes_a, passes_b, repeats, level, only_b_better, memo)
    # widened to int64 as they are subtracted (no copies of the counts)
    d = np.subtract(passes_b, passes_a, dtype=np.int64, casting="unsafe") / repeats
    low, high = clustered_limits(d, level, difference=True, method=method)
    return np.where(low > _DECIDED, 1, np.where(high < -_DECIDED, -1, 0)).astype(np.int8)


#: The verdicts of multisets of differences judged in this process, per (cases,
#: repeats, level, side): a verdict is a function of those alone. Emptied when
#: it holds more than _KEPT_VERDICTS (about 100 bytes each).
_VERDICTS: dict[tuple[int, int, float, bool], dict[Any, int]] = {}
_KEPT_VERDICTS = 200_000


def _verdicts(cases: int, repeats: int, level: float, only_above: bool) -> dict[Any, int]:
    """The kept verdicts of one number of cases, repeats, level and side."""
    if sum(len(v) for v in _VERDICTS.values()) > _KEPT_VERDICTS:
        _VERDICTS.clear()
    return _VERDICTS.setdefault((cases, repeats, float(level), only_above), {})


def _betting_decisions(
    passes_a: np.ndarray,
    passes_b: np.ndarray,
    repeats: int,
    level: float,
    only_above: bool,
    memo: dict[Any, int],
) -> np.ndarray:
    """:func:`clustered_decisions` by the betting rule, each multiset of differences once.

    Row by row the same as ``betting_signs(d, level, threshold=_DECIDED,
    only_above=only_above)`` on all the rows at once: each row's decision is
    computed by the same operations whatever the other rows, and depends only
    on the multiset of its values (tests/test_fast_paths.py). Judged
    :data:`_JUDGED` values at a time (:func:`_judged`).
    """
    rows, cases = passes_a.shape
    out = np.empty(rows, dtype=np.int8)
    step = max(1, _JUDGED // max(cases, 1))
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        diff = np.subtract(
            passes_b[start:stop], passes_a[start:stop], dtype=np.int64, casting="unsafe"
        )
        out[start:stop] = _judged(diff, repeats, level, only_above, memo)
    return out


def _multiset_keys(diff: np.ndarray, repeats: int) -> np.ndarray | None:
    """One integer per row of differences -R..R that names the row's multiset exactly,
    or None when the keys would not fit in 64 bits.

    The key is the row's count of each difference as the digits of a number in
    base cases + 1 (a count is at most the number of cases), the count of the
    largest difference left out: the counts add up to the number of cases.
    """
    cases = diff.shape[1]
    width = 2 * repeats + 1
    base = cases + 1
    if base ** (width - 1) > np.iinfo(np.int64).max:
        return None
    # the digit of difference v at index v (a negative index counts from the end)
    digits = [base ** (v + repeats) for v in range(repeats)] + [0]
    digits += [base ** (v + repeats) for v in range(-repeats, 0)]
    keys: np.ndarray = np.take(np.array(digits, dtype=np.int64), diff).sum(axis=1)
    return keys


def _judged(
    diff: np.ndarray, repeats: int, level: float, only_above: bool, memo: dict[Any, int]
) -> np.ndarray:
    """The betting rule's verdicts (int8) on rows of difference counts (of ``repeats``
    runs a case), each multiset judged once, and only when ``memo`` lacks it."""
    from ..stats._intervals import betting_signs

    n, cases = diff.shape
    width = 2 * repeats + 1
    # A multiset is a row's count of each difference -R..R, when that is no
    # longer than the row itself.
    if width > max(2 * cases, 64):
        out: np.ndarray = betting_signs(
            diff / repeats, level, threshold=_DECIDED, only_above=only_above
        )
        return out
    found = _multiset_keys(diff, repeats)
    if found is not None:
        return _judged_by_keys(found, lambda rows: diff[rows], repeats, level, only_above, memo)
    codes = diff + (repeats + np.arange(n, dtype=np.int64)[:, None] * width)
    hist = np.bincount(codes.ravel(), minlength=n * width).reshape(n, width)
    hist = hist.astype(np.int32 if cases >= 1 << 15 else np.int16)
    uniq, first, back = np.unique(hist, axis=0, return_index=True, return_inverse=True)
    keys = [row.tobytes() for row in uniq]
    return _verdicts_of(
        keys, first, back, lambda rows: diff[rows], repeats, level, only_above, memo
    )


def _judged_by_keys(
    found: np.ndarray,
    rows_of: Callable[[np.ndarray], np.ndarray],
    repeats: int,
    level: float,
    only_above: bool,
    memo: dict[Any, int],
) -> np.ndarray:
    """:func:`_judged` from the rows' :func:`_multiset_keys`; ``rows_of(indices)``
    gives the difference counts of those rows, when a multiset is new."""
    uniq, first, back = np.unique(found, return_index=True, return_inverse=True)
    return _verdicts_of(uniq.tolist(), first, back, rows_of, repeats, level, only_above, memo)


def _verdicts_of(
    keys: list[Any],
    first: np.ndarray,
    back: np.ndarray,
    rows_of: Callable[[np.ndarray], np.ndarray],
    repeats: int,
    level: float,
    only_above: bool,
    memo: dict[Any, int],
) -> np.ndarray:
    """Each row's verdict: row i has multiset ``keys[back[i]]``, first met at row
    ``first[back[i]]``; those ``memo`` lacks are judged on that row and kept."""
    from ..stats._intervals import betting_signs

    signs = np.array([memo.get(k, 2) for k in keys], dtype=np.int8)
    new = np.flatnonzero(signs == 2)
    if new.size:
        judged = betting_signs(
            rows_of(first[new]) / repeats, level, threshold=_DECIDED, only_above=only_above
        )
        signs[new] = judged
        memo.update(zip([keys[i] for i in new], judged.tolist(), strict=True))
    out: np.ndarray = signs[back.ravel()]
    return out


def _clustered_hits(
    model: CaseModel,
    cases: int,
    repeats: int,
    experiments: int,
    level: float,
    rng: np.random.Generator,
    method: str = "auto",
) -> int:
    hits = 0
    done = 0
    while done < experiments:
        m = min(_BLOCK, experiments - done)
        qa, qb = model.draw(rng, (m, cases))
        ya = rng.binomial(repeats, qa)
        yb = rng.binomial(repeats, qb)
        verdicts = clustered_decisions(
            ya, yb, repeats, level=level, method=method, only_b_better=True
        )
        hits += int(np.count_nonzero(verdicts == 1))
        done += m
    return hits


def simulate_clustered(
    model: CaseModel,
    *,
    cases: int,
    repeats: int,
    experiments: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
    method: str = "auto",
) -> PowerResult:
    """Simulated power of the clustered paired comparison under a case model.

    Each experiment draws ``cases`` cases from ``model`` (their pass rates
    under A and B), runs each ``repeats`` times per variant (binomial counts),
    and judges B against A as :func:`evalstats.stats._compare.compare` does with
    ``method="clustered"`` (:func:`clustered_decisions`). The false-positive
    rate comes from the same simulation with B's mean set to A's (the same
    case-by-variant spread).
    Vectorised over experiments; 10,000 experiments x 20 cases x 10 repeats
    take a fraction of a second.

    Parameters
    ----------
    model : CaseModel
        The case model (see :func:`evalstats.planning._power.plan`).
    cases, repeats : int
        Cases per experiment (at least 2) and runs per case and variant.
    experiments : int
        Simulated experiments.
    level : float
        Confidence level of the comparison.
    seed : int
        Seed; the same seed gives the same result.
    method : {"auto", "cr2", "cr1", "betting"}
        The interval the verdict comes from, as in
        :func:`evalstats.stats._intervals.clustered_paired_diff_ci`; ``auto`` is what
        :func:`evalstats.stats._compare.compare` uses.

    Returns
    -------
    PowerResult

    References
    ----------
    Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640 (the
    clustered standard error).

    Examples
    --------
    >>> from evalstats.planning._power import CaseModel
    >>> r = simulate_clustered(CaseModel(0.7, 0.9, 0.3), cases=40, repeats=3,
    ...                        experiments=2000, seed=1)
    >>> print(r.power)
    89% (87% to 90%)
    """
    if not isinstance(model, CaseModel):
        raise InvalidArgument(f"model={model!r} must be a CaseModel")
    cases = whole_number("cases", cases, minimum=2)
    repeats = whole_number("repeats", repeats)
    experiments = check_experiments(experiments)
    level = check_level(level)
    from ..stats._intervals import CLUSTERED_METHODS

    method = check_method(method, CLUSTERED_METHODS)
    streams = np.random.SeedSequence(whole_number("seed", seed, minimum=0)).spawn(2)
    hits = _clustered_hits(
        model, cases, repeats, experiments, level, np.random.default_rng(streams[0]), method
    )
    null = CaseModel(model.p_a, model.p_a, model.icc, model.spread)
    false = _clustered_hits(
        null, cases, repeats, experiments, level, np.random.default_rng(streams[1]), method
    )
    return PowerResult(
        _wilson(hits, experiments),
        _wilson(false, experiments),
        experiments,
        hits,
        false,
        {
            "p_a": model.p_a,
            "p_b": model.p_b,
            "icc": model.icc,
            "spread": model.spread,
            "cases": cases,
            "repeats": repeats,
            "method": "clustered",
            "interval": method,
            "level": level,
            "seed": seed,
        },
    )


# --- many designs under one model: the planner's simulator ----------------------

#: Counts standing for unlimited repeats: case rates scaled to this many runs
#: (rounding moves a rate by at most 5e-7).
_UNLIMITED = 1 << 20
#: Columns (cases) of the design simulator drawn at once, each block from its
#: own seed, so that the first c cases are the same draws whatever else is asked.
_COLUMNS = 16


def _unlimited_counts(qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """Case rates as counts of :data:`_UNLIMITED` runs, B's less A's (four bytes a value)."""
    kb = np.rint(qb * _UNLIMITED).astype(np.int32)
    kb -= np.rint(qa * _UNLIMITED).astype(np.int32)
    return kb


#: Up to this many values of a difference, it is found by comparing the
#: uniform with each step of the distribution function; beyond, by one
#: sorted search over every row's steps.
_COMPARED = 9


def judged_draws(
    u: np.ndarray, cdf: np.ndarray, model: np.ndarray, repeats: int, level: float, memo: Any
) -> np.ndarray:
    """The betting rule's "B better" verdicts (int8) on experiments drawn as uniforms
    ``u`` (rows, cases) through the distribution functions ``cdf[model[i]]`` of
    a case's difference (:func:`_drawn_differences`), each multiset judged once
    (``memo``: see :func:`_judged`).

    With few values of a difference the multisets' keys are counted from the
    comparisons themselves (:func:`_drawn_keys`), and only the rows of new
    multisets are turned into differences.
    """
    keys = _drawn_keys(u, cdf, model, repeats)
    if keys is None:
        diff = _drawn_differences(u, cdf, model, repeats)
        return _judged(diff, repeats, level, True, memo)

    def rows_of(found: np.ndarray) -> np.ndarray:
        return _drawn_differences(u[found], cdf, model[found], repeats)

    return _judged_by_keys(keys, rows_of, repeats, level, True, memo)


def _drawn_keys(u: np.ndarray, cdf: np.ndarray, model: np.ndarray, repeats: int) -> Any:
    """The :func:`_multiset_keys` of :func:`_drawn_differences`, counted from the
    uniforms: the cases at or past each step of the distribution function give
    the count of each difference. None with more than :data:`_COMPARED` steps,
    or when the keys would not fit in 64 bits."""
    steps = cdf[:, :-1]
    cases = u.shape[1]
    base = cases + 1
    if steps.shape[1] > _COMPARED or base ** steps.shape[1] > np.iinfo(np.int64).max:
        return None
    mine = steps[model]
    past = [np.count_nonzero(u >= mine[:, k : k + 1], axis=1) for k in range(steps.shape[1])]
    # difference -R + j has count past[j - 1] - past[j] (past[-1]: every case), and
    # digit base**j; the largest difference's count is left out (see _multiset_keys)
    keys = np.zeros(u.shape[0], dtype=np.int64)
    above = np.full(u.shape[0], cases, dtype=np.int64)
    for j, now in enumerate(past):
        keys += (above - now) * base**j
        above = now
    return keys


def _drawn_differences(
    u: np.ndarray, cdf: np.ndarray, model: np.ndarray, repeats: int
) -> np.ndarray:
    """Differences -R..R (int64) of uniforms ``u`` (rows, cases): row i's through the
    distribution function ``cdf[model[i]]`` (cumulative, 2R + 1 values).

    A difference is -R plus the number of steps of the function at or below
    its uniform (the inverse distribution function), so that a larger uniform
    never gives a smaller difference. The last step (1) is never passed.
    """
    steps = cdf[:, :-1]
    if steps.shape[1] <= _COMPARED:
        mine = steps[model]  # (rows, 2R)
        out = np.zeros(u.shape, dtype=np.int64)
        for k in range(steps.shape[1]):
            out += u >= mine[:, k : k + 1]
    else:
        # each row's steps moved to [row, row + 1): one search over them all
        shifted = (steps + np.arange(steps.shape[0])[:, None]).ravel()
        found = np.searchsorted(shifted, u + model[:, None], side="right")
        out = found - model[:, None] * steps.shape[1]
    out -= repeats
    return out


class DesignPowers:
    """Simulated power of many (cases, repeats) designs under one case model.

    Every design is judged by the clustered comparison's own decision rule
    (:func:`clustered_decisions`, the rule :func:`evalstats.stats._compare.compare`
    applies with ``method="clustered"``) on ``experiments`` simulated
    experiments, with common random numbers across designs: experiment i's
    case j has one uniform draw u_ij in every design, and its difference of
    passes (B's less A's, of R runs each) is the value at u_ij of the
    inverse distribution function of that difference's law under the model
    (``model.differences(R)``: the binomial counts averaged over the case
    rates by quadrature). Cases are independent draws from the model and
    the rule depends only on the differences, so this is the model's own
    experiment, drawn with one number a case instead of two rates and two
    counts; a design with c cases sees the first c, and designs with more
    repeats move each case's difference the same way (the draws are
    comonotone across R). So the power of neighbouring designs differs by
    the designs, not by the luck of separate simulations, and a search over
    cases and repeats sees a nearly monotone surface.

    Every ``power(cases, repeats)`` is a function of its arguments and the
    seed alone, whatever was asked before. ``repeats=math.inf`` judges the
    case rates themselves (unlimited repeats), drawn by ``model.draw(rng,
    size)``. ``model`` is a :class:`CaseModel`, or a mixture whose rows come
    from different case models (:class:`evalstats.planning._pilot.Mixture`:
    its ``differences(R)`` has a row per model, and experiment i has model
    ``i // per_model``), which works the same way.

    Nothing is kept between designs but the laws of the differences: each
    design draws its uniforms again from each block's seed and judges them
    :data:`_JUDGED` values at a time, so that its working memory does not
    grow with the experiments. The rates of unlimited repeats are drawn as
    they are judged, a slice of experiments at a time, when the model has no
    spread (:meth:`_by_rows`).
    """

    def __init__(self, model: CaseModel, *, experiments: int, level: float, seed: int = 0) -> None:
        self.model = model
        self.experiments = check_experiments(experiments)
        self.level = check_level(level)
        self.seed = whole_number("seed", seed, minimum=0)
        self.evaluations = 0

    def _block(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Block j's case rates under A and B (drawn from the block's own seed)."""
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 1, j]))
        return self.model.draw(rng, (self.experiments, _COLUMNS))

    def _by_rows(self) -> bool:
        """Whether a block's rates can be drawn a slice of experiments at a time, in
        order, the same as at once: without spread, from a model that draws slices."""
        return getattr(self.model, "spread", None) == 0 and hasattr(self.model, "draw_rows")

    def _laws(self, repeats: int) -> np.ndarray:
        """Each experiment row's distribution function of a case's difference:
        shape (models, 2 repeats + 1), the model of row i ``i // (experiments /
        models)``."""
        law = np.atleast_2d(self.model.differences(repeats))
        if self.experiments % law.shape[0]:
            raise InvalidArgument(
                f"experiments={self.experiments} must be a multiple of the model's "
                f"{law.shape[0]} case models"
            )
        return np.cumsum(law, axis=1)

    def found_better(self, cases: int, repeats: float) -> np.ndarray:
        """Whether B is found better, experiment by experiment (booleans, in order).

        The experiments are judged :data:`_JUDGED` values at a time: their
        uniforms drawn from each block's seed, a slice of experiments at a
        time, turned into differences (:func:`_drawn_differences`). For
        unlimited repeats, their case rates as counts, drawn for each slice
        of experiments as it is judged (:meth:`_by_rows`; else every block's
        at once).
        """
        blocks = -(-cases // _COLUMNS)
        r = _UNLIMITED if math.isinf(repeats) else int(repeats)
        self.evaluations += 1
        out = np.empty(self.experiments, dtype=bool)
        memo = _verdicts(cases, r, self.level, True)
        step = max(1, _JUDGED // cases)
        if math.isinf(repeats) and self._by_rows():
            seeds = [np.random.SeedSequence([self.seed, 1, j]) for j in range(blocks)]
            gens = [np.random.default_rng(s) for s in seeds]
            for start in range(0, self.experiments, step):
                rows = slice(start, min(start + step, self.experiments))
                diff = np.empty((rows.stop - rows.start, cases), dtype=np.int64)
                for j, g in enumerate(gens):
                    lo, hi = j * _COLUMNS, min((j + 1) * _COLUMNS, cases)
                    counts = _unlimited_counts(*self.model.draw_rows(g, rows, _COLUMNS))
                    diff[:, lo:hi] = counts[:, : hi - lo]
                out[rows] = _judged(diff, r, self.level, True, memo) == 1
            return out
        if math.isinf(repeats):
            # every block's rates at once (a spread's normal draws follow all
            # the Beta draws), as counts of _UNLIMITED runs, B's less A's
            counts = [_unlimited_counts(*self._block(j)) for j in range(blocks)]
            whole = np.concatenate(counts, axis=1)[:, :cases]
            del counts
            for start in range(0, self.experiments, step):
                rows = slice(start, min(start + step, self.experiments))
                out[rows] = _judged(whole[rows].astype(np.int64), r, self.level, True, memo) == 1
            return out
        laws = self._laws(r)
        per_law = self.experiments // laws.shape[0]
        gens = [
            np.random.default_rng(np.random.SeedSequence([self.seed, 2, j])) for j in range(blocks)
        ]
        for start in range(0, self.experiments, step):
            rows = slice(start, min(start + step, self.experiments))
            size = (rows.stop - rows.start, _COLUMNS)
            u = np.concatenate([g.random(size) for g in gens], axis=1)[:, :cases]
            model = np.arange(rows.start, rows.stop) // per_law
            out[rows] = judged_draws(u, laws, model, r, self.level, memo) == 1
        return out

    def hits(self, cases: int, repeats: float) -> int:
        """Experiments (of ``self.experiments``) in which B is found better."""
        return int(np.count_nonzero(self.found_better(cases, repeats)))

    def power(self, cases: int, repeats: float) -> float:
        """The share of experiments in which B is found better."""
        return self.hits(cases, repeats) / self.experiments

    def interval(self, cases: int, repeats: float) -> Interval:
        """The simulated power with its 95% Monte-Carlo (Wilson) interval."""
        return _wilson(self.hits(cases, repeats), self.experiments)


# --- whole evals against stand-ins ---------------------------------------------

#: Below this many task calls in all, simulate_power stays in one process
#: (starting workers costs more than it saves).
_POOL_THRESHOLD = 20_000


def _judge(
    out_a: dict[str, list[bool]], out_b: dict[str, list[bool]], method: str, level: float
) -> int:
    from ..stats._compare import compare, compare_counts

    if method in ("mcnemar", "clustered"):
        verdict = compare(out_a, out_b, paired=True, method=method, level=level).verdict
    else:
        ka = sum(sum(v) for v in out_a.values())
        na = sum(len(v) for v in out_a.values())
        kb = sum(sum(v) for v in out_b.values())
        nb = sum(len(v) for v in out_b.values())
        verdict = compare_counts(ka, na, kb, nb, method=method, level=level).verdict
    return 1 if verdict == "b_better" else -1 if verdict == "a_better" else 0


def _describe(f: Any) -> str:
    """A stable name for a task factory (no memory addresses)."""
    import functools

    if isinstance(f, functools.partial):
        args = [repr(a) for a in f.args] + [f"{k}={v!r}" for k, v in f.keywords.items()]
        return f"{_describe(f.func)}({', '.join(args)}, seed)"
    return getattr(f, "__qualname__", type(f).__name__)


def _experiment_seeds(seed: int, experiments: int) -> list[tuple[int, int, int]]:
    """Three task seeds per experiment (A, B, and A's copy for the null).

    Derived with SeedSequence.spawn, so experiment i gets the same seeds
    whatever the number of processes.
    """
    children = np.random.SeedSequence(seed).spawn(experiments)
    return [tuple(int(x) for x in c.generate_state(3)) for c in children]  # type: ignore[misc]


def _run_experiments(
    make_task_a: Callable[[int], Any],
    make_task_b: Callable[[int], Any],
    cases: Sequence[Any],
    runs: int,
    method: str,
    level: float,
    seeds: Sequence[tuple[int, int, int]],
) -> list[tuple[int, int]]:
    from ..running._run_cases import run_cases

    out = []
    for sa, sb, sa2 in seeds:
        res_a = run_cases(make_task_a(sa), cases, runs=runs, variant="A").outcomes()
        res_b = run_cases(make_task_b(sb), cases, runs=runs, variant="B").outcomes()
        res_a2 = run_cases(make_task_a(sa2), cases, runs=runs, variant="A again").outcomes()
        out.append((_judge(res_a, res_b, method, level), _judge(res_a, res_a2, method, level)))
    return out


_WORKER: dict[str, Any] = {}


def _init_worker(*args: Any) -> None:
    _WORKER["args"] = args


def _work(seeds: Sequence[tuple[int, int, int]]) -> list[tuple[int, int]]:
    make_a, make_b, cases, runs, method, level = _WORKER["args"]
    return _run_experiments(make_a, make_b, cases, runs, method, level, seeds)


def simulate_power(
    make_task_a: Callable[[int], Any],
    make_task_b: Callable[[int], Any],
    cases: Iterable[Any],
    *,
    runs_per_case: int,
    experiments: int = 300,
    method: str = "overlap",
    level: float = 0.95,
    seed: int = 0,
    processes: int | None = None,
) -> PowerResult:
    """Monte-Carlo power of a whole eval of B against A, as a person would run it.

    Each experiment makes fresh tasks ``make_task_a(seed_a)`` and
    ``make_task_b(seed_b)``, runs every case ``runs_per_case`` times with each
    (:func:`evalstats.running._run_cases.run_cases`, the real checks), and compares the
    results with ``method``; the power is the share of experiments that say
    ``b_better``. The false-positive rate comes from the same machinery with
    A against a second, independently seeded copy of A.

    Parameters
    ----------
    make_task_a, make_task_b : callable
        ``make_task(seed) -> task`` with ``task(prompt) -> str``; for the shop
        stand-in, ``functools.partial(make_assistant, 1)``. Worker processes
        are forked where the platform can, so they need not be picklable.
    cases : iterable of Case
        The suite, for example :func:`evalstats.running._run_cases.load_shop_cases`.
    runs_per_case : int
        Repeats per case and variant.
    experiments : int
        Simulated experiments (each runs A, B and A's copy).
    method : {"overlap", "newcombe", "ztest", "mcnemar", "clustered"}
        The comparison: the first three on pooled counts
        (:func:`~evalstats.stats._compare.compare_counts`), the last two paired by
        (case, repeat) (:func:`~evalstats.stats._compare.compare`).
    level : float
        Confidence level of the comparison.
    seed : int
        Seed; experiment i's task seeds come from
        ``SeedSequence(seed).spawn(experiments)[i]``, so the result is the same
        for any number of processes.
    processes : int, optional
        Worker processes; None uses two when the work is large enough to pay
        for starting them (and the machine has two cores), else one.

    Returns
    -------
    PowerResult

    Examples
    --------
    >>> from functools import partial
    >>> from evalstats.running._run_cases import load_shop_cases
    >>> from evalstats.demo._shop import make_assistant
    >>> r = simulate_power(partial(make_assistant, 1), partial(make_assistant, 2),
    ...                    load_shop_cases(), runs_per_case=10, experiments=100, seed=3)
    >>> print(r.power)
    24% (17% to 33%)
    """
    if not callable(make_task_a) or not callable(make_task_b):
        raise InvalidArgument("make_task_a and make_task_b must be callables make_task(seed)")
    case_list = list(cases)
    if not case_list:
        raise InvalidArgument("cases is empty; give at least one case")
    runs = whole_number("runs_per_case", runs_per_case)
    experiments = check_experiments(experiments)
    method = check_method(method, SIMULATION_METHODS)
    level = check_level(level)
    seed = whole_number("seed", seed, minimum=0)
    if method == "clustered" and len(case_list) < 2:
        raise InvalidArgument("method='clustered' needs at least 2 cases")
    calls = 3 * experiments * runs * len(case_list)
    if processes is None:
        processes = 2 if calls >= _POOL_THRESHOLD and (os.cpu_count() or 1) >= 2 else 1
    processes = whole_number("processes", processes)
    seeds = _experiment_seeds(seed, experiments)
    args = (make_task_a, make_task_b, case_list, runs, method, level)
    if processes == 1 or experiments == 1:
        results = _run_experiments(*args, seeds)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        n_chunks = processes * 4
        chunks = [seeds[i::n_chunks] for i in range(n_chunks)]
        order = [range(i, experiments, n_chunks) for i in range(n_chunks)]
        # The tasks and cases (whose checks are often closures, which cannot be
        # pickled) reach the workers through the initializer: with "fork" its
        # arguments are inherited, not pickled. Only seeds and verdicts travel.
        # Where fork is missing, "spawn" needs picklable tasks and checks.
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        results_by_index: dict[int, tuple[int, int]] = {}
        with ProcessPoolExecutor(
            max_workers=processes, mp_context=ctx, initializer=_init_worker, initargs=args
        ) as pool:
            futures = [pool.submit(_work, chunk) for chunk in chunks if chunk]
            for idx, fut in zip((o for o in order if o), futures, strict=True):
                for i, r in zip(idx, fut.result(), strict=True):
                    results_by_index[i] = r
        results = [results_by_index[i] for i in range(experiments)]
    hits = sum(1 for b, _ in results if b == 1)
    false = sum(1 for _, f in results if f == 1)
    return PowerResult(
        _wilson(hits, experiments),
        _wilson(false, experiments),
        experiments,
        hits,
        false,
        {
            "task_a": _describe(make_task_a),
            "task_b": _describe(make_task_b),
            "cases": len(case_list),
            "runs_per_case": runs,
            "method": method,
            "level": level,
            "seed": seed,
            "processes": processes,
        },
    )
