"""Pass rates corrected by a random reviewed subset: prediction-powered inference.

A judge (or any automatic check) gives a verdict on every sample; a person
reviews a uniformly random subset. Prediction-powered inference (PPI,
Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023) uses the automatic
verdicts on all samples and corrects their bias with the reviewed subset:

    estimate = lam * mean(auto on unreviewed) + mean(human - lam * auto on reviewed)

which is unbiased for the rate a person would give, whatever the judge's
errors, as long as the reviewed subset is a random draw. PPI++ (Angelopoulos,
Duchi & Zrnic 2023) chooses ``lam`` from the data to make the variance
smallest: ``lam = 0`` is the reviewed subset alone, ``lam = 1`` is plain PPI.
A judge that agrees with the person makes the interval narrower than one from
the reviewed subset alone; a useless judge gets ``lam`` near 0 and costs little.

Two methods:

``"ppi++"`` (the default)
    The PPI++ interval with two small-sample adjustments for 0/1 verdicts:
    ``z^2/4`` pseudo-reviews are added to each of the four cells of the
    reviewed (person x judge) table, so that with ``lam = 0`` the interval is
    the Agresti & Coull (1998) one, the simple form of Wilson's score
    interval; and the quantile is Student's t with ``n - 1`` degrees of
    freedom, ``n`` the number reviewed. Without them the interval covers
    89% or less at nominal 95% with 30 reviewed and a true rate of 0.8
    (``simulations/ppi_coverage.py``).
``"wald"``
    The PPI++ interval exactly as ``ppi_py.ppi_mean_ci`` computes it (normal
    quantile, plug-in variances), clipped to [0, 1]. Kept as the reference.

A reviewed subset drawn within strata (``strata=``, for example the same
number of samples from every case, as ``evalstats review --sample`` draws it)
is no longer a uniform draw when the strata differ in size: a sample of a
small case is more likely to be reviewed. The estimator then weights every
stratum by its share of the samples (Cochran 1977, Sampling Techniques, 3rd
ed., section 5.2; the "combined" form of section 7.11, one ``lam`` for all
strata): a reviewed sample of stratum ``h`` weighs ``N_h / n_h`` (the inverse
of its inclusion probability, Horvitz & Thompson 1952), an unreviewed one
``N_h / (N_h - n_h)``, so that each term above becomes the weighted sum of the
per-stratum means. Its variance is estimated from the weighted residuals as if
the reviewed samples had been drawn with replacement, without using the strata
(Wolter 2007, Introduction to Variance Estimation, 2nd ed., section 1.6; this
overstates the variance of a stratified draw by the spread between the
strata's means, so the interval stays valid with one or two reviews per
stratum, where a per-stratum variance cannot be estimated), and the t quantile
takes Kish's effective number of reviews. With strata of equal size and equal
allocation every weight is 1 and this is the estimator above unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validate import check_level, check_method
from .errors import InvalidArgument
from .intervals import Interval, _z

__all__ = ["MIN_REVIEWED", "ppi_diff", "ppi_pass_rate"]

#: Fewest reviewed samples a corrected estimate is computed from.
MIN_REVIEWED = 10

_METHODS = ("ppi++", "wald")


def _verdicts(name: str, value: Any) -> np.ndarray:
    """A 1-D array of 0/1 verdicts (bools or 0/1 numbers) as floats."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise InvalidArgument(f"{name} must be a one-dimensional sequence of verdicts")
    if arr.dtype == bool:
        return arr.astype(float)
    try:
        out = arr.astype(float)
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"{name} must hold verdicts as True/False or 1/0, got {arr.dtype}"
        ) from None
    bad = ~np.isin(out, (0.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidArgument(f"{name}[{i}]={value[i]!r} must be a verdict: True/False or 1/0")
    return out


def _mask(name: str, value: Any, size: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] != size:
        raise InvalidArgument(
            f"{name} must be one True/False per sample ({size}), got shape {arr.shape}"
        )
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise InvalidArgument(f"{name} must hold True/False (reviewed or not)")
        arr = arr.astype(bool)
    return arr


def _human(name: str, value: Any, mask: np.ndarray) -> np.ndarray:
    """The person's verdicts on the reviewed samples, given per sample or per review."""
    arr = np.asarray(value, dtype=object)
    reviewed = int(mask.sum())
    if arr.ndim == 1 and arr.shape[0] == mask.shape[0]:
        arr = arr[mask]
    elif arr.ndim != 1 or arr.shape[0] != reviewed:
        raise InvalidArgument(
            f"{name} must give the person's verdict for each sample ({mask.shape[0]}) or "
            f"for each reviewed sample ({reviewed}), got shape {arr.shape}"
        )
    return _verdicts(name, list(arr))


def _check_reviewed(reviewed: int, total: int) -> None:
    if reviewed < MIN_REVIEWED:
        raise InvalidArgument(
            f"reviewed={reviewed} samples is too few for a corrected estimate; "
            f"review at least {MIN_REVIEWED} randomly chosen samples"
        )


def _core(
    y: np.ndarray,
    yhat: np.ndarray,
    weights: np.ndarray,
    yhat_unlabeled: np.ndarray,
    level: float,
    df: float | None,
    *,
    design: np.ndarray | None = None,
    design_unlabeled: np.ndarray | None = None,
    lam: float | None = None,
) -> tuple[float, float, float, float]:
    """PPI++ for a mean: estimate, low, high and the tuned lambda.

    ``y``/``yhat`` are the reviewed samples (with ``weights``, 1 for a real
    review, fractional for a pseudo-review); ``yhat_unlabeled`` the automatic
    verdicts on the samples nobody reviewed. With unit weights and ``df=None``
    this is ``ppi_py.ppi_mean_ci`` with ``lam=None`` (Angelopoulos, Duchi &
    Zrnic 2023, section 6): ``lam = cov(y, yhat) / ((1 + n/N) var(yhat_all))``
    clipped to [0, 1], the covariance over the reviewed samples (divisor n),
    the variance over reviewed and unreviewed predictions together (divisor
    n + N - 1), and the standard error
    ``sqrt(lam^2 var(yhat_unlabeled)/N + var(y - lam yhat)/n)`` with divisors
    N and n.

    ``design`` and ``design_unlabeled`` are the stratum weights of a
    stratified draw (see the module docstring; None is all 1): means become
    weighted means, a variance of a mean ``sum(w^2 (x - mean)^2) / sum(w)^2``,
    and ``n/N`` in ``lam`` the ratio of Kish's effective sizes. A given
    ``lam`` is used as it is (the exact-enumeration tests fix it).
    """
    d = np.ones(y.shape[0]) if design is None else design
    e = np.ones(yhat_unlabeled.shape[0]) if design_unlabeled is None else design_unlabeled
    w = weights * d  # what each reviewed row weighs in a mean
    m = float(w.sum())
    big_n = yhat_unlabeled.shape[0]

    def wmean(x: np.ndarray) -> float:
        return float((w * x).sum() / m)

    def var_of_mean(x: np.ndarray) -> float:
        centre = wmean(x)
        return float((weights * d**2 * (x - centre) ** 2).sum()) / m**2

    my, mh = wmean(y), wmean(yhat)
    if lam is not None:
        lam = float(lam)
    elif big_n == 0:
        lam = 0.0
    else:
        cov = wmean((y - my) * (yhat - mh))
        total = float(weights.sum()) + big_n
        pooled = (float((weights * yhat).sum()) + float(yhat_unlabeled.sum())) / total
        var_all = (
            float((weights * (yhat - pooled) ** 2).sum())
            + float(((yhat_unlabeled - pooled) ** 2).sum())
        ) / (total - 1)
        n_eff = m**2 / float((weights * d**2).sum())
        big_n_eff = float(e.sum()) ** 2 / float((e**2).sum())
        ratio = n_eff / big_n_eff
        lam = 0.0 if var_all <= 0 else float(np.clip(cov / ((1 + ratio) * var_all), 0, 1))
    rect = y - lam * yhat
    mr = wmean(rect)
    var_rect = var_of_mean(rect)
    if big_n:
        mu = float((e * yhat_unlabeled).sum() / e.sum())
        var_u = float((e**2 * (yhat_unlabeled - mu) ** 2).sum()) / float(e.sum()) ** 2
        estimate = lam * mu + mr
        se = math.sqrt(lam**2 * var_u + var_rect)
    else:
        estimate, se = mr, math.sqrt(var_rect)
    if df is None:
        q = _z(level)
    else:
        from scipy.special import stdtrit

        q = float(stdtrit(df, 0.5 + level / 2))
    return estimate, estimate - q * se, estimate + q * se, lam


def _stratum_weights(
    value: Any, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int] | tuple[None, None, int]:
    """Weights of a draw stratified by ``value`` (one label per sample).

    A reviewed sample of stratum ``h`` weighs ``N_h / n_h``, an unreviewed one
    ``N_h / (N_h - n_h)``, each scaled to average 1 over the reviewed (and
    unreviewed) samples. Returns them and the number of strata, or ``None``
    weights when ``value`` is None.
    """
    if value is None:
        return None, None, 1
    labels = np.asarray(value, dtype=object)
    if labels.ndim != 1 or labels.shape[0] != mask.shape[0]:
        raise InvalidArgument(
            f"strata must give one stratum (a case, say) per sample ({mask.shape[0]}), "
            f"got shape {labels.shape}"
        )
    keys = labels.tolist()
    try:
        for key in keys:
            hash(key)
    except TypeError:
        raise InvalidArgument(
            "strata must hold labels such as case ids (strings or numbers)"
        ) from None
    size: dict[Any, int] = {}
    drawn: dict[Any, int] = {}
    for key, reviewed in zip(keys, mask.tolist(), strict=True):
        size[key] = size.get(key, 0) + 1
        drawn[key] = drawn.get(key, 0) + bool(reviewed)
    empty = [k for k in size if drawn[k] == 0]
    if empty:
        raise InvalidArgument(
            f"strata={empty[0]!r} has {size[empty[0]]} samples and none reviewed; a draw "
            "stratified by it must review at least one sample of every stratum"
        )
    per = np.array(
        [
            size[k] / drawn[k] if r else size[k] / (size[k] - drawn[k])
            for k, r in zip(keys, mask.tolist(), strict=True)
        ]
    )
    d, e = per[mask], per[~mask]
    if e.size:
        e = e / e.mean()
    return d / d.mean(), e, len(size)


def _pseudo(cells: Sequence[tuple[float, ...]], mass: float) -> tuple[np.ndarray, np.ndarray]:
    """Pseudo-reviews: each cell of the reviewed table gets ``mass / len(cells)``."""
    rows = np.array(cells, dtype=float)
    return rows, np.full(len(cells), mass / len(cells))


def _adjusted(
    cells: Sequence[tuple[float, ...]],
    mass: float,
    y: np.ndarray,
    yhat: np.ndarray,
    rest: np.ndarray,
    design: np.ndarray | None,
    design_unlabeled: np.ndarray | None,
    level: float,
    method: str,
) -> tuple[float, float, float, float]:
    """:func:`_core`, with the pseudo-reviews and t quantile of ``"ppi++"``.

    Pseudo-reviews weigh as an average review (stratum weight 1); the t
    quantile's degrees of freedom are Kish's effective number of reviews less
    one (``n - 1`` when every stratum weight is 1).
    """
    n = y.shape[0]
    weights = np.ones(n)
    df: float | None = None
    if method == "ppi++":
        rows, w = _pseudo(cells, mass)
        y = np.concatenate([y, rows[:, 0]])
        yhat = np.concatenate([yhat, rows[:, 1]])
        weights = np.concatenate([weights, w])
        df = n - 1.0
        if design is not None:
            df = float(design.sum()) ** 2 / float((design**2).sum()) - 1
            design = np.concatenate([design, np.ones(len(cells))])
    return _core(
        y, yhat, weights, rest, level, df, design=design, design_unlabeled=design_unlabeled
    )


def _strata_note(strata: Any, groups: int) -> str:
    return "" if strata is None else f"; drawn within {groups} strata, each weighted by its size"


def ppi_pass_rate(
    auto: Any,
    reviewed_mask: Any,
    human: Any,
    *,
    level: float = 0.95,
    method: str = "ppi++",
    strata: Any = None,
) -> Interval:
    """Pass rate corrected by a random reviewed subset (PPI++, power-tuned).

    Parameters
    ----------
    auto : sequence of bool
        The automatic verdict (judge or check) on every sample.
    reviewed_mask : sequence of bool
        Which samples a person reviewed; they must be a uniformly random
        subset (for example ``evalstats review --sample``), not chosen by hand.
    human : sequence of bool
        The person's verdicts: one per sample (entries of unreviewed samples
        are ignored) or one per reviewed sample, in order.
    level : float, optional
        Confidence level (0.95).
    method : {"ppi++", "wald"}, optional
        ``"ppi++"`` adds the small-sample adjustments described in the module
        docstring; ``"wald"`` is ``ppi_py.ppi_mean_ci`` exactly.
    strata : sequence, optional
        The stratum of every sample (its case, say) when the reviewed subset
        was drawn uniformly within each stratum rather than from all samples
        (``evalstats review --sample`` draws the same number from every
        case). Each stratum is then weighted by its share of the samples (see
        the module docstring); every stratum needs at least one review.

    Returns
    -------
    Interval
        The corrected rate a person would give, with its interval, clipped
        to [0, 1]; the note gives ``lam`` and the counts.

    Raises
    ------
    InvalidArgument
        Fewer than 10 reviewed samples, mismatched lengths, or values that are
        not verdicts.

    References
    ----------
    .. [1] Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. &
       Zrnic, T. (2023). Prediction-powered inference. Science 382(6671),
       669-674.
    .. [2] Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++:
       Efficient prediction-powered inference. arXiv:2311.01453.
    .. [3] Agresti, A. & Coull, B. A. (1998). Approximate is better than
       "exact" for interval estimation of binomial proportions. The American
       Statistician 52(2), 119-126.
    .. [4] Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley,
       sections 5.2 and 7.11.

    Examples
    --------
    A judge passed 700 of 1,000 answers; a person reviewed 40 of them at
    random and agreed on all but four:

    >>> auto = [True] * 700 + [False] * 300
    >>> reviewed = [i % 25 == 0 for i in range(1000)]
    >>> human = [a if i not in (0, 25, 725, 750) else not a for i, a in enumerate(auto)]
    >>> print(ppi_pass_rate(auto, reviewed, human))
    69% (59% to 80%)
    """
    level = check_level(level)
    method = check_method(method, _METHODS)
    a = _verdicts("auto", auto)
    mask = _mask("reviewed_mask", reviewed_mask, a.shape[0])
    y = _human("human", human, mask)
    n = y.shape[0]
    _check_reviewed(n, a.shape[0])
    d, e, groups = _stratum_weights(strata, mask)
    yhat, rest = a[mask], a[~mask]
    estimate, low, high, lam = _adjusted(
        [(1, 1), (1, 0), (0, 1), (0, 0)], _z(level) ** 2, y, yhat, rest, d, e, level, method
    )
    note = (
        f"PPI++ ({'small-sample adjusted' if method == 'ppi++' else 'Wald'}), "
        f"lambda={lam:.3g}; {a.shape[0]} automatic verdicts, {n} reviewed"
        f"{_strata_note(strata, groups)}"
    )
    return Interval(
        float(np.clip(estimate, 0, 1)),
        float(np.clip(low, 0, 1)),
        float(np.clip(high, 0, 1)),
        level,
        method,
        note=note,
    )


def ppi_diff(
    auto_a: Any,
    auto_b: Any,
    reviewed_mask: Any,
    human_a: Any,
    human_b: Any,
    *,
    level: float = 0.95,
    method: str = "ppi++",
    strata: Any = None,
) -> Interval:
    """Corrected paired difference of pass rates, B minus A, by PPI++.

    Each position is one pair: the same case and repeat run on variant A and
    on variant B. A reviewed pair has both of its answers reviewed by a
    person. The difference of the person's verdicts (-1, 0 or 1) is the
    quantity estimated; the difference of the automatic verdicts predicts it.

    Parameters
    ----------
    auto_a, auto_b : sequence of bool
        The automatic verdicts of the two variants, one per pair.
    reviewed_mask : sequence of bool
        Which pairs a person reviewed (a uniformly random subset).
    human_a, human_b : sequence of bool
        The person's verdicts, one per pair or one per reviewed pair.
    level : float, optional
        Confidence level (0.95).
    method : {"ppi++", "wald"}, optional
        ``"ppi++"`` adds pseudo-reviews of total mass 2, one eighth on each
        of the 16 combinations of (person A, person B, judge A, judge B), so
        that with ``lam = 0`` the centre and variance are those of Agresti &
        Min (2005) for paired proportions (half a pair added to each cell),
        and uses Student's t with ``n - 1`` degrees of freedom. ``"wald"`` is
        ``ppi_py.ppi_mean_ci`` applied to the differences.
    strata : sequence, optional
        The stratum of every pair (its case) when the reviewed pairs were
        drawn within strata; as in :func:`ppi_pass_rate`.

    Returns
    -------
    Interval
        The corrected difference ``p_b - p_a``, clipped to [-1, 1].

    References
    ----------
    .. [1] Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++:
       Efficient prediction-powered inference. arXiv:2311.01453.
    .. [2] Agresti, A. & Min, Y. (2005). Simple improved confidence intervals
       for comparing matched proportions. Statistics in Medicine 24(5),
       729-740.
    """
    level = check_level(level)
    method = check_method(method, _METHODS)
    a = _verdicts("auto_a", auto_a)
    b = _verdicts("auto_b", auto_b)
    if a.shape != b.shape:
        raise InvalidArgument(
            f"auto_a and auto_b must have one verdict per pair, got {a.shape[0]} and {b.shape[0]}"
        )
    mask = _mask("reviewed_mask", reviewed_mask, a.shape[0])
    ya = _human("human_a", human_a, mask)
    yb = _human("human_b", human_b, mask)
    n = ya.shape[0]
    _check_reviewed(n, a.shape[0])
    dw, ew, groups = _stratum_weights(strata, mask)
    diff = b - a
    cells = [(hb - ha, jb - ja) for ha in (0, 1) for hb in (0, 1) for ja in (0, 1) for jb in (0, 1)]
    estimate, low, high, lam = _adjusted(
        cells, 2.0, yb - ya, diff[mask], diff[~mask], dw, ew, level, method
    )
    note = (
        f"PPI++ paired difference ({'small-sample adjusted' if method == 'ppi++' else 'Wald'}), "
        f"lambda={lam:.3g}; {a.shape[0]} pairs, {n} reviewed{_strata_note(strata, groups)}"
    )
    return Interval(
        float(np.clip(estimate, -1, 1)),
        float(np.clip(low, -1, 1)),
        float(np.clip(high, -1, 1)),
        level,
        method,
        difference=True,
        note=note,
    )
