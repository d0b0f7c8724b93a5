"""Anytime-valid comparison of two variants' mean scores: look as often as you like.

The graded twin of :mod:`evalstats.deciding._sequential`. Each (case, repeat)
pair gives a paired difference d = s_B - s_A in [-1, 1] of the two samples'
scores in [0, 1]; the pairs are taken round by round in the order ``evalstats
run`` runs them (round r is repeat r of every case, in case order).

About these cases, the question is the mean over these cases of each case's
expected difference, Delta = (1/C) sum_c mu_c. For a null value m in (-1, 1)
the "B better" e-process is the wealth of betting on d - m,

    K+(m) = (1/G) sum_j prod_i (1 + b_j (d_i - m) / (1 + m)),

averaged over G = 64 bets b_j = 0.9 (j + 1/2) / G fixed in advance (the
device of :func:`evalstats.stats._scores.fixed_bet_limits`, after Waudby-Smith &
Ramdas 2024, with a uniform grid of bets in place of a geometric
one); every factor is at least 1 - b_j > 0. "A better" bets on m - d:
K-(m) = (1/G) sum_j prod_i (1 + b_j (m - d_i) / (1 - m)). Its guarantees:

* When every pair's expected difference is at most m given the pairs before
  it (A and B alike on every case, m = 0), each product is a non-negative
  supermartingale pair by pair, and so is their average: by Ville's
  inequality it ever reaches 2 / a with probability at most a / 2, however
  often one looks, after every pair.
* When only the mean over these cases is at most m (B better on some cases,
  worse on others), each complete round holds every case once, and for a
  fixed bet E prod_c (1 + b y_c) = prod_c (1 + b E y_c) <= (1 + b mean_c E y_c)^C
  <= 1 by the inequality of arithmetic and geometric means (every factor is
  positive): the wealth at the ends of rounds is a supermartingale, so looks
  after every round (as ``run --until-decided`` looks) keep the guarantee.

The verdict is "B better" once K+(0) reaches 2 / (1 - level) (40 at 95%),
"A better" once K-(0) does. Every factor falls as m rises (d - m falls and
1 + m rises), so K+ falls in m and K- rises: the shares m neither process
rejects at 2 / (1 - level) form an interval, a confidence sequence for Delta
that covers it at every look at once with probability at least ``level``,
and it excludes 0 exactly when a verdict has been reached. As on the pass/fail
side, the printed interval is the intersection over the looks so far, and
the verdict stands once reached.

About cases like these, the cases' mean differences are bet on as the
pass/fail side does (:func:`evalstats.deciding._sequential.log_evalue_cases`,
which holds for any values in [-1, 1]).

``simulations/score_sequential.py`` measures the false "B better" rate under
continuous monitoring for skewed, bimodal and Likert-like scores, the coverage
of the interval over every look, and the power at a stated difference.

References
----------
Ville, J. (1939). Etude critique de la notion de collectif. Gauthier-Villars.

Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random
variables by betting. JRSS Series B 86, 1-27.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .._validate import check_level
from ..errors import InvalidArgument
from ..stats._claims import check_about, refuses_scope
from ._sequential import (
    SequentialComparison,
    _cases_trajectory,
    _comparison,
    _in_round_order,
)

__all__ = [
    "SCORE_BETS",
    "log_evalue_scores",
    "score_crossings",
    "sequential_score_compare",
    "sequential_score_results",
]

#: The number of fixed bets the score e-processes average over.
SCORE_BETS = 64
#: The largest bet, as a share of the most a factor can lose.
_CAP = 0.9
#: Values (looks x distinct differences x bets) worked on at once.
_BLOCK = 1 << 21


def _bets() -> np.ndarray:
    return _CAP * (np.arange(SCORE_BETS) + 0.5) / SCORE_BETS


def _log_mean_exp(x: np.ndarray) -> np.ndarray:
    """log of the mean of exp(x) over the last axis."""
    top = np.max(x, axis=-1)
    safe = np.where(np.isfinite(top), top, 0.0)
    return safe + np.log(np.mean(np.exp(x - safe[..., None]), axis=-1))  # type: ignore[no-any-return]


def _scaled(d: Any, null: Any, direction: int) -> np.ndarray:
    """What each factor bets on: (d - m) / (1 + m) for "B better", (m - d) / (1 - m) else."""
    if direction > 0:
        return (d - null) / (1.0 + null)  # type: ignore[no-any-return]
    return (null - d) / (1.0 - null)  # type: ignore[no-any-return]


def log_evalue_scores(differences: Any, *, null: float = 0.0, direction: int = 1) -> np.ndarray:
    """Log of the score e-process after every pair, for "B better" (``direction=1``)
    or "A better" (``direction=-1``) than ``null``.

    ``differences`` has the pairs, in the order they were run, on its last axis
    (each s_B - s_A in [-1, 1]); the result has the same shape: entry t is

        log (1/G) sum_j prod_{i <= t} (1 + b_j y_i),

    y_i = (d_i - null) / (1 + null) for "B better" and (null - d_i) / (1 - null)
    for "A better", b_j = 0.9 (j + 1/2) / G, G = :data:`SCORE_BETS`. Vectorised
    over the leading axes.

    Examples
    --------
    >>> import numpy as np
    >>> log_e = log_evalue_scores([0.5, 0.5, -0.25])
    >>> [round(float(x), 4) for x in np.exp(log_e)]
    [1.225, 1.5175, 1.3261]
    """
    d = np.asarray(differences, dtype=float)
    y = _scaled(d, null, direction)
    with np.errstate(divide="ignore"):
        logs = np.cumsum(np.log1p(y[..., None] * _bets()), axis=-2)
    return _log_mean_exp(logs)


def _log_evalue_at(
    values: np.ndarray, counts: np.ndarray, null: np.ndarray, direction: int
) -> np.ndarray:
    """The log e-process at each look l against its own null ``null[l]``, from the
    counts ``counts[l, v]`` of each distinct difference ``values[v]`` so far."""
    bets = _bets()
    out = np.empty(len(null))
    step = max(1, _BLOCK // max(1, values.size * bets.size))
    for start in range(0, len(null), step):
        part = slice(start, start + step)
        y = _scaled(values[None, :], null[part, None], direction)  # (looks, values)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.log1p(y[..., None] * bets)  # (looks, values, bets)
            terms = np.where(counts[part, :, None] > 0, terms, 0.0)
        out[part] = _log_mean_exp(np.einsum("lv,lvb->lb", counts[part], terms))
    return out


class _Looks:
    """The pairs so far at each look, and the score e-processes there against any null.

    Few distinct differences (Likert-like or pass/fail-like scores): the counts of
    each distinct difference at each look, so a look costs (distinct values x bets).
    Many (continuous scores): each look's own prefix of the pairs. Whichever is less.
    """

    def __init__(self, diff: np.ndarray, points: np.ndarray) -> None:
        self.diff, self.points = diff, points
        self.values, codes = np.unique(diff, return_inverse=True)
        size = len(self.values)
        self.by_counts = len(points) * size <= int(points.sum())
        self.counts = np.zeros((len(points), size)) if self.by_counts else None
        if self.counts is not None:
            running, done = np.zeros(size), 0
            for i, p in enumerate(points):
                running += np.bincount(codes[done:p], minlength=size)
                self.counts[i], done = running, int(p)
        self.mean = np.cumsum(diff)[points - 1] / points

    def log_evalue(self, null: np.ndarray, direction: int, rows: np.ndarray) -> np.ndarray:
        """The log e-process of looks ``rows`` against their own ``null`` values."""
        if self.counts is not None:
            return _log_evalue_at(self.values, self.counts[rows], null, direction)
        bets = _bets()
        out = np.empty(len(rows))
        for k, r in enumerate(rows):
            y = _scaled(self.diff[: self.points[r]], null[k], direction)
            with np.errstate(divide="ignore"):
                out[k] = _log_mean_exp(np.log1p(y[:, None] * bets).sum(axis=0))
        return out


def _falling_root(
    f: Any, lo: np.ndarray, hi: np.ndarray, *, keep: str, tol: float = 1e-10
) -> np.ndarray:
    """Where each row's falling function ``f(x, rows)`` crosses 0 between ``lo`` and ``hi``.

    ``f(x, rows)`` gives the function of the rows ``rows`` (an index array) at
    ``x``; it must fall in x. Rows positive at ``hi`` give ``hi``, rows not
    positive at ``lo`` give ``lo``. The rest are narrowed by the Illinois
    variant of false position (Dowell & Jarratt 1971), with a bisection step
    wherever false position stalls at an end, to a bracket of ``tol``;
    the end returned is ``keep`` (``"lo"``, where f is still positive, or
    ``"hi"``), so a confidence limit errs on the wide side.
    """
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    every = np.arange(len(lo))
    f_lo, f_hi = f(lo, every), f(hi, every)
    out = np.where(f_hi > 0, hi, lo)
    bracketed = (f_lo > 0) & (f_hi <= 0)
    todo = np.flatnonzero(bracketed)
    side = np.zeros(len(lo), dtype=np.int8)  # which end moved last (1 low, -1 high)
    for _ in range(200):
        todo = todo[hi[todo] - lo[todo] > tol]
        if not todo.size:
            break
        a, b, fa, fb = lo[todo], hi[todo], f_lo[todo], f_hi[todo]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x = b - fb * (b - a) / (fb - fa)
        mid = 0.5 * (a + b)
        stalled = ~np.isfinite(x) | (x <= a) | (x >= b)
        x = np.where(stalled, mid, x)
        fx = f(x, todo)
        up = fx > 0  # the root lies above x
        # Illinois: the end that stays twice in a row has its value halved.
        keep_hi = up & (side[todo] == 1)
        keep_lo = ~up & (side[todo] == -1)
        f_hi[todo] = np.where(keep_hi, 0.5 * fb, f_hi[todo])
        f_lo[todo] = np.where(keep_lo, 0.5 * fa, f_lo[todo])
        lo[todo] = np.where(up, x, a)
        f_lo[todo] = np.where(up, fx, f_lo[todo])
        hi[todo] = np.where(up, b, x)
        f_hi[todo] = np.where(up, f_hi[todo], fx)
        side[todo] = np.where(up, 1, -1)
    return np.where(bracketed, lo if keep == "lo" else hi, out)


def _score_interval(
    looks: _Looks,
    bound: float,
    verdict_b: np.ndarray,
    verdict_a: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The null values neither e-process rejects at ``bound``, at every look.

    K+ falls as the null rises, so the low limit is where it falls below the
    bound; K- rises, so the high limit is where it reaches it. At the mean
    difference so far both are at most 1 (the bets' factors average to 1 there,
    and a product of positive numbers is at most the power of their mean), so
    the low limit lies in [-1, mean] and the high one in [mean, 1]. A limit on
    the wrong side of 0 for the verdict at 0 is a root-finding tolerance and
    is set to 0 (or just past it), so the interval excludes 0 exactly when a
    verdict has been reached.
    """
    edge = 1.0 - 1e-12
    mean = np.clip(looks.mean, -edge, edge)  # all pairs at -1 or at 1: a limit at the end

    def low_side(m: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return looks.log_evalue(m, 1, rows) - bound

    def high_side(m: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return bound - looks.log_evalue(m, -1, rows)

    # Found in log(1 + m) and -log(1 - m), in which the e-values are nearly linear
    # where they are steepest (near the ends); both grow with m, so each side still falls.
    def low_log(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return low_side(np.expm1(x), rows)

    def high_log(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return high_side(-np.expm1(-x), rows)

    tiny = math.log(1.0 - edge)
    # Each limit is taken on its wide side of the root: the low one where K+ still
    # rejects, the high one where K- already does.
    low_x = _falling_root(low_log, np.full(mean.shape, tiny), np.log1p(mean), keep="lo")
    high_x = _falling_root(high_log, -np.log1p(-mean), np.full(mean.shape, -tiny), keep="hi")
    low, high = np.expm1(low_x), -np.expm1(-high_x)
    low = np.where(low <= -edge, -1.0, low)
    high = np.where(high >= edge, 1.0, high)
    low = np.where(verdict_b, np.maximum(low, np.nextafter(0.0, 1.0)), np.minimum(low, 0.0))
    high = np.where(verdict_a, np.minimum(high, np.nextafter(0.0, -1.0)), np.maximum(high, 0.0))
    return low, high


def _scores(name: str, results: Any) -> dict[str, np.ndarray]:
    """Case id -> the scores of its repeats, checked: numbers in [0, 1], none missing."""
    if not isinstance(results, Mapping) or not results:
        raise InvalidArgument(
            f"{name} must map each case id to its scores in repeat order, got {results!r:.80}"
        )
    out: dict[str, np.ndarray] = {}
    for case, seq in results.items():
        if isinstance(seq, str | bytes) or not isinstance(seq, Sequence | np.ndarray):
            raise InvalidArgument(f"{name}[{case!r}] must be a sequence of scores in [0, 1]")
        values = []
        for i, x in enumerate(seq):
            if isinstance(x, bool) or not isinstance(x, int | float | np.integer | np.floating):
                raise InvalidArgument(f"{name}[{case!r}][{i}]={x!r} must be a score in [0, 1]")
            if not 0.0 <= float(x) <= 1.0:
                raise InvalidArgument(f"{name}[{case!r}][{i}]={x!r} must be a score in [0, 1]")
            values.append(float(x))
        if not values:
            raise InvalidArgument(f"{name}[{case!r}] is empty; expected at least one score")
        out[str(case)] = np.asarray(values)
    return out


@refuses_scope
def sequential_score_compare(
    scores_a: Mapping[str, Sequence[float]],
    scores_b: Mapping[str, Sequence[float]],
    *,
    about: str = "these_cases",
    level: float = 0.95,
    looks: Sequence[int] | None = None,
) -> SequentialComparison:
    """Compare two variants' mean scores with a verdict valid however often one looks.

    Parameters
    ----------
    scores_a, scores_b : mapping of case id to sequence of float
        Each case's scores in [0, 1] in repeat order, paired by (case,
        repeat): both sides need the same cases with the same repeat counts.
    about : {"these_cases", "cases_like_these"}
        ``these_cases``: the betting e-process on the paired differences (see
        the module docstring). ``cases_like_these``: the betting e-process over
        the cases' mean paired differences; it needs at least 2 cases and
        decides only after every case has a pair.
    level : float
        The confidence level; each direction spends (1 - level) / 2.
    looks : sequence of int, optional
        The numbers of pairs at which the data were looked at (increasing); by
        default after every round. Looks inside a round keep the guarantee
        when A and B score alike on every case; when B is better on some
        cases and worse on others, only looks at the ends of rounds do (see
        the module docstring). At the ends of rounds the result does not
        depend on the order the cases are listed in.

    Returns
    -------
    SequentialComparison
        With ``on="score"``: the difference is of mean scores (B - A), and
        ``only_b``, ``only_a`` count the pairs B scored higher, lower.

    References
    ----------
    Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random
    variables by betting. JRSS Series B 86, 1-27.

    Examples
    --------
    >>> a = {"x": [0.5] * 30, "y": [0.25] * 30}
    >>> b = {"x": [0.75] * 30, "y": [0.5] * 30}
    >>> c = sequential_score_compare(a, b)
    >>> c.verdict, c.decided_at, str(c.difference)
    ('b_better', 28, '+0.25 (+0.13 to +0.32)')
    """
    level = check_level(level)
    about = check_about(about) or "these_cases"
    a = _scores("scores_a", scores_a)
    b = _scores("scores_b", scores_b)
    if set(a) != set(b) or any(len(a[c]) != len(b[c]) for c in a):
        raise InvalidArgument(
            "an anytime-valid comparison needs scores paired by (case, repeat): scores_a "
            "and scores_b must have the same cases with the same numbers of repeats"
        )
    cases = list(a)
    case_idx, points, xa, xb = _in_round_order(cases, a, b, looks, about)
    diff = xb - xa
    alpha = 1.0 - level
    bound = math.log(2.0 / alpha)
    reason = ""
    if about == "these_cases":
        at = _Looks(diff, points)
        zero, every = np.zeros(len(points)), np.arange(len(points))
        log_b = at.log_evalue(zero, 1, every)
        log_a = at.log_evalue(zero, -1, every)
        low, high = _score_interval(at, bound, log_b >= bound, log_a >= bound)
        estimate = at.mean
        method = "betting confidence sequence"
    else:
        estimate, low, high, log_b, log_a, started = _cases_trajectory(
            diff, case_idx, points, len(cases), alpha
        )
        if not started[-1]:
            reason = "not every case has a pair yet, so nothing is known about cases like these"
        method = "betting confidence sequence"
    from ..stats._scores import ScoreInterval

    return _comparison(
        points,
        (log_b, log_a),
        (estimate, low, high),
        diff,
        bound=bound,
        interval=lambda est, lo, hi, pairs: ScoreInterval(
            est,
            lo,
            hi,
            level,
            method,
            difference=True,
            about=about,
            cases=len(cases),
            runs=pairs,
        ),
        about=about,
        level=level,
        cases=len(cases),
        reason=reason,
        on="score",
    )


@refuses_scope
def sequential_score_results(
    results: Any, a: str, b: str, *, about: str = "these_cases", level: float = 0.95
) -> SequentialComparison:
    """The anytime-valid comparison of variant ``b``'s mean score with ``a``'s in a results file.

    The scores are paired by (case, repeat); a pair where either side is
    unmeasured, missing or carries no score is left out, and the reason says
    how many. The pairs are taken round by round, with a look after every round.

    Parameters
    ----------
    results : Results, RunSource or path
    a, b : str
        Variant names; positive differences mean B scores higher.
    about : {"these_cases", "cases_like_these"}
    level : float
    """
    from ..reading._source import tally
    from ..results._file import Results

    level = check_level(level)
    about = check_about(about) or "these_cases"
    res = results if isinstance(results, Results) else tally(results)
    if a == b:
        raise InvalidArgument(f"a={a!r} and b={b!r} are the same variant; name two")
    where = res.path or "the results"
    slots = res.outcomes(a)
    if set(slots) != set(res.outcomes(b)):
        raise InvalidArgument(
            f"an anytime-valid comparison needs {a!r} and {b!r} run on the same (case, "
            "repeat) slots, which this file's schedule did not do"
        )
    found_a = {(c, r): s for c, r, s in _scores_of(res, a)}
    found_b = {(c, r): s for c, r, s in _scores_of(res, b)}
    if not found_a and not found_b:
        raise InvalidArgument(
            f"{where}: no sample carries a score; a comparison of mean scores needs graded "
            "checks (compare pass rates instead)"
        )
    xa: dict[str, list[float]] = {}
    xb: dict[str, list[float]] = {}
    left_out = 0
    for case, row in slots.items():
        for repeat in range(len(row)):
            x, y = found_a.get((case, repeat)), found_b.get((case, repeat))
            if x is None or y is None:
                left_out += 1
                continue
            xa.setdefault(case, []).append(x)
            xb.setdefault(case, []).append(y)
    if not xa:
        raise InvalidArgument(
            f"{where}: no (case, repeat) pair has a score for both {a!r} and {b!r}; "
            "nothing to compare"
        )
    result = sequential_score_compare(xa, xb, about=about, level=level)
    notes = [result.reason] if result.reason else []
    if left_out:
        notes.append(
            f"{left_out} pair{'s' if left_out != 1 else ''} with an unmeasured, missing or "
            "unscored side left out"
        )
    return replace(result, reason="; ".join(notes))


def _scores_of(res: Any, variant: str) -> list[tuple[str, int, float]]:
    """``(case, repeat, score)`` of each measured sample of ``variant`` with a score."""
    scores = getattr(res, "scores", None)
    if callable(scores):
        return list(scores(variant))
    out = []
    seen: set[tuple[str, int]] = set()
    for s in res.samples:  # the first record of a slot counts, as for pass/fail
        key = (str(s.get("case")), s.get("repeat"))
        if s.get("variant") != variant or key in seen:
            continue
        seen.add(key)
        score = s.get("score")
        if (
            s.get("status") != "unmeasured"
            and isinstance(score, int | float)
            and not isinstance(score, bool)
        ):
            out.append((str(s["case"]), int(s["repeat"]), float(score)))
    return out


def score_crossings(
    differences: Any, *, level: float = 0.95, null: Any = 0.0, every: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Where simulated experiments' score e-processes first reach the verdict's bound.

    ``differences`` has shape (experiments, pairs), each row the paired
    differences in round order; the data are looked at after every ``every``
    pairs (``every`` = the number of cases: after every round). Returns the
    pairs run (to the first crossing, or all of them) and the verdict (+1 "B
    better than ``null``", -1 "A better", 0 none) of each experiment, the
    same e-processes and bound as :func:`sequential_score_compare`. With
    ``null`` the true mean difference, a crossing is a look whose interval
    misses it: the coverage over every look is the share with verdict 0.
    ``null`` may also give each experiment its own value (shape (experiments,)).
    """
    d = np.asarray(differences, dtype=float)
    experiments, pairs = d.shape
    bound = math.log(2.0 / (1.0 - check_level(level)))
    bets = _bets()
    step = max(1, _BLOCK // max(1, pairs * bets.size))
    stopped = np.empty(experiments, dtype=np.int64)
    verdict = np.empty(experiments, dtype=np.int8)
    nulls = np.broadcast_to(np.asarray(null, dtype=float), (experiments,))
    for start in range(0, experiments, step):
        part = d[start : start + step]
        hits = []
        for direction in (1, -1):
            y = _scaled(part, nulls[start : start + step, None], direction)
            with np.errstate(divide="ignore"):
                logs = np.cumsum(np.log1p(y[..., None] * bets), axis=1)
            log_e = _log_mean_exp(logs)[:, every - 1 :: every]
            hits.append(log_e >= bound)
        up, down = hits
        either = up | down
        hit = either.any(axis=1)
        first = np.argmax(either, axis=1)
        rows = np.arange(len(first))
        block = slice(start, start + len(part))
        verdict[block] = np.where(hit, np.where(up[rows, first], 1, -1), 0)
        stopped[block] = np.where(hit, first + 1, up.shape[1]) * every
    return stopped, verdict
