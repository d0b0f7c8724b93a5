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
    Wilson's (1927) score interval around the PPI++ estimate, computed as if
    the estimate came from ``n_eff`` reviews instead of ``n``: the effective
    number of reviews is ``n`` divided by the design effect, the ratio of the
    estimate's variance at the tuned ``lam`` to its variance at ``lam = 0``
    (the reviewed answers alone). This is how a binomial interval is carried
    over to an estimate of a complex design (Korn & Graubard 1998, with the
    Clopper-Pearson interval; the Wilson form is SAS PROC SURVEYFREQ's
    "modified Wilson" limits, which Franco, Little, Louis & Slud 2019 recommend
    over the others they compare). When the judge does not shrink the variance
    (``lam = 0``) the interval is the reviewed answers' own Wilson interval,
    exactly; every estimated reduction narrows it. The design effect is
    computed with ``z^2/4`` pseudo-reviews added to each cell of the reviewed
    (person x judge) table: without them, 30 reviews that happen to agree with
    a sharp judge every time promise a variance near 0 (with sensitivity and
    specificity 0.95 that happens one time in five) and the interval covers
    too little. With them it covers 94.7% or more at nominal 95% for judges of
    sensitivity 0.7-0.95 and specificity 0.6-0.95 with 30-200 of 1,000
    answers reviewed (by exact enumeration, ``simulations/ppi_exact.py``; by
    simulation, with the paired difference, ``simulations/ppi_coverage.py``).
    ``lam`` itself is tuned on the reviews alone,
    as ``ppi_py`` tunes it; if the pseudo-reviews say it does not help, it is 0.
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
stratum, where a per-stratum variance cannot be estimated), and the effective
number of reviews starts from Korn & Graubard's (1998) ``p (1 - p) / v`` of
the weighted reviews (``v`` that variance, at most ``n``) instead of ``n``.
With strata of equal size and equal allocation every weight is 1 and this is
the estimator above unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import check_level, check_method
from ..errors import InvalidArgument
from ._intervals import Interval, _newcombe_phi, _one_sample_limits, _square_and_add, _z

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
    *,
    design: np.ndarray | None = None,
    design_unlabeled: np.ndarray | None = None,
    lam: float | None = None,
) -> tuple[float, float, float]:
    """PPI++ for a mean: the estimate, the variance of the estimate and ``lam``.

    ``y``/``yhat`` are the reviewed samples (with ``weights``, 1 for a real
    review, fractional for a pseudo-review); ``yhat_unlabeled`` the automatic
    verdicts on the samples nobody reviewed. With unit weights this is
    ``ppi_py.ppi_mean_ci`` with ``lam=None`` (Angelopoulos, Duchi & Zrnic 2023,
    section 6): ``lam = cov(y, yhat) / ((1 + n/N) var(yhat_all))`` clipped to
    [0, 1], the covariance over the reviewed samples (divisor n), the variance
    over reviewed and unreviewed predictions together (divisor n + N - 1), and
    the variance ``lam^2 var(yhat_unlabeled)/N + var(y - lam yhat)/n`` with
    divisors N and n.

    ``design`` and ``design_unlabeled`` are the stratum weights of a
    stratified draw (see the module docstring; None is all 1): means become
    weighted means, a variance of a mean ``sum(w^2 (x - mean)^2) / sum(w)^2``,
    and ``n/N`` in ``lam`` the ratio of Kish's effective sizes. A given
    ``lam`` is used as it is.
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
    estimate, variance = wmean(rect), var_of_mean(rect)
    if big_n and lam:
        mu = float((e * yhat_unlabeled).sum() / e.sum())
        var_u = float((e**2 * (yhat_unlabeled - mu) ** 2).sum()) / float(e.sum()) ** 2
        estimate += lam * mu
        variance += lam**2 * var_u
    return estimate, variance, lam


def _design_effect(
    cells: Sequence[tuple[float, ...]],
    mass: float,
    y: np.ndarray,
    yhat: np.ndarray,
    rest: np.ndarray,
    design: np.ndarray | None,
    design_unlabeled: np.ndarray | None,
    lam: float,
) -> float:
    """How much ``lam`` shrinks the variance: ``V(lam) / V(0)``, from the reviewed
    table with ``mass`` pseudo-reviews spread evenly over ``cells``.

    The pseudo-reviews (weighing as an average review, stratum weight 1) keep
    a handful of reviews that happen to agree perfectly with the judge from
    promising a variance near 0 (with 30 reviews and a judge of sensitivity
    and specificity 0.95, none disagree one time in five); the ratio is 1 at
    ``lam = 0`` whatever they are.
    """
    rows = np.array(cells, dtype=float)
    weights = np.concatenate([np.ones(y.shape[0]), np.full(len(cells), mass / len(cells))])
    yy = np.concatenate([y, rows[:, 0]])
    hh = np.concatenate([yhat, rows[:, 1]])
    dd = None if design is None else np.concatenate([design, np.ones(len(cells))])
    kw = {"design": dd, "design_unlabeled": design_unlabeled}
    at_lam = _core(yy, hh, weights, rest, lam=lam, **kw)[1]
    at_zero = _core(yy, hh, weights, rest, lam=0.0, **kw)[1]
    return at_lam / at_zero if at_zero > 0 else 1.0


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


def _tuned(
    cells: Sequence[tuple[float, ...]],
    mass: float,
    y: np.ndarray,
    yhat: np.ndarray,
    rest: np.ndarray,
    design: np.ndarray | None,
    design_unlabeled: np.ndarray | None,
    method: str,
) -> tuple[float, float, float, float]:
    """The power-tuned PPI++ estimate, its variance, ``lam`` and, for ``"ppi++"``,
    the effective number of reviews (NaN for ``"wald"``).

    The effective number is that of the reviews alone (:func:`_reviews_worth`,
    ``n`` for a uniform draw) divided by :func:`_design_effect`; when the
    design effect says the judge does not shrink the variance, ``lam`` is 0
    and the estimate is the reviewed answers' own. It is at most the number of
    samples: reviewing every one could tell no more.
    """
    n = y.shape[0]

    def core(lam: float | None = None) -> tuple[float, float, float]:
        return _core(
            y, yhat, np.ones(n), rest, design=design, design_unlabeled=design_unlabeled, lam=lam
        )

    estimate, variance, lam = core()
    if method == "wald":
        return estimate, variance, lam, math.nan
    effect = 1.0
    if lam > 0:
        effect = _design_effect(cells, mass, y, yhat, rest, design, design_unlabeled, lam)
        if not effect < 1:
            effect = 1.0
            estimate, variance, lam = core(0.0)
    return (
        estimate,
        variance,
        lam,
        min(_reviews_worth(y, design) / effect, float(n + rest.shape[0])),
    )


def _reviews_worth(y: np.ndarray, design: np.ndarray | None) -> float:
    """The effective number of the reviews alone: ``n`` for a uniform draw; for a
    stratified one Korn & Graubard's (1998) ``s^2 / v``, the spread of the person's
    verdicts over the variance of their weighted mean, but never more than ``n``
    (a weighted draw is worth no more than a uniform one), or Kish's (1992)
    ``(sum w)^2 / sum w^2`` when every review agrees."""
    n = y.shape[0]
    if design is None:
        return float(n)
    total = float(design.sum())
    centre = float((design * y).sum()) / total
    spread = float((design * (y - centre) ** 2).sum()) / total
    variance = float((design**2 * (y - centre) ** 2).sum()) / total**2
    if variance > 0:
        return min(spread / variance, float(n))
    return total**2 / float((design**2).sum())


def _wilson_limits(
    rate: float, n_eff: float, level: float, exact: float | None
) -> tuple[float, float]:
    """Wilson's (1927) score interval for ``rate`` from ``n_eff`` (effective) trials.

    ``exact`` is the count of passes when ``n_eff`` is a real number of
    reviews, so that the limits are the very floats of :func:`proportion_ci`.
    """
    k = rate * n_eff if exact is None else exact
    low, high = _one_sample_limits("wilson", np.array(k), np.array(n_eff), level)
    return float(low), float(high)


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
        ``"ppi++"`` is Wilson's score interval at the effective number of
        reviews (see the module docstring): with ``lam = 0`` it is the reviewed
        answers' own Wilson interval. ``"wald"`` is ``ppi_py.ppi_mean_ci``
        exactly.
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
        to [0, 1]; the note gives the effective number of reviews, ``lam`` and
        the counts.

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
    .. [3] Wilson, E. B. (1927). Probable inference, the law of succession,
       and statistical inference. JASA 22, 209-212.
    .. [4] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for
       proportions with small expected number of positive counts estimated
       from survey data. Survey Methodology 24(2), 193-201.
    .. [5] Franco, C., Little, R. J. A., Louis, T. A. & Slud, E. V. (2019).
       Comparative study of confidence intervals for proportions in complex
       sample surveys. Journal of Survey Statistics and Methodology 7(3),
       334-364.
    .. [6] Kish, L. (1992). Weighting for unequal P_i. Journal of Official
       Statistics 8(2), 183-200.
    .. [7] Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley,
       sections 5.2 and 7.11.

    Examples
    --------
    A judge passed 700 of 1,000 answers; a person reviewed 40 of them at
    random and agreed on all but four:

    >>> auto = [True] * 700 + [False] * 300
    >>> reviewed = [i % 25 == 0 for i in range(1000)]
    >>> human = [a if i not in (0, 25, 725, 750) else not a for i, a in enumerate(auto)]
    >>> print(ppi_pass_rate(auto, reviewed, human))
    70% (59% to 79%)
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
    estimate, variance, lam, n_eff = _tuned(
        [(1, 1), (1, 0), (0, 1), (0, 0)], _z(level) ** 2, y, yhat, rest, d, e, method
    )
    estimate = float(np.clip(estimate, 0, 1))
    if method == "wald":
        half = _z(level) * math.sqrt(variance)
        low, high = float(np.clip(estimate - half, 0, 1)), float(np.clip(estimate + half, 0, 1))
        how = "Wald"
    else:
        exact = float(y.sum()) if lam == 0 and d is None else None
        low, high = _wilson_limits(estimate, n_eff, level, exact)
        how = f"Wilson score at {n_eff:.1f} effective reviews"
    note = (
        f"PPI++ ({how}), lambda={lam:.3g}; {a.shape[0]} automatic verdicts, {n} reviewed"
        f"{_strata_note(strata, groups)}"
    )
    return Interval(estimate, low, high, level, method, note=note)


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
        ``"ppi++"`` is Newcombe's (1998c) paired score interval (method 10,
        as :func:`evalstats.paired_diff_ci` computes it) at the effective
        number of reviews: the Wilson intervals of the two corrected rates
        (one ``lam``, tuned on the differences, for both, so that their
        difference is the corrected difference) at ``n`` over the design
        effect of the difference, combined with the correlation of the
        person's verdicts on the reviewed pairs. With ``lam = 0`` it is
        :func:`evalstats.paired_diff_ci` of the reviewed pairs, exactly. The
        design effect is computed with pseudo-reviews of total mass 2, one
        eighth on each of the 16 combinations of (person A, person B, judge
        A, judge B): half a pair in each cell of the person's table, as
        Agresti & Min (2005) add. ``"wald"`` is ``ppi_py.ppi_mean_ci``
        applied to the differences.
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
    .. [2] Newcombe, R. G. (1998c). Improved confidence intervals for the
       difference between binomial proportions based on paired data.
       Statistics in Medicine 17, 2635-2650.
    .. [3] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for
       proportions with small expected number of positive counts estimated
       from survey data. Survey Methodology 24(2), 193-201.
    .. [4] Agresti, A. & Min, Y. (2005). Simple improved confidence intervals
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
    estimate, variance, lam, n_eff = _tuned(
        cells, 2.0, yb - ya, diff[mask], diff[~mask], dw, ew, method
    )
    if method == "wald":
        half = _z(level) * math.sqrt(variance)
        low, high = estimate - half, estimate + half
        how = "Wald"
    else:
        # Newcombe's (1998c) method 10 at the effective number of reviews: the
        # Wilson intervals of the two corrected rates (one lam for both, so
        # that their difference is the corrected difference) combined with the
        # correlation of the person's verdicts on the reviewed pairs.
        ones = np.ones(n)
        rates = []
        for y, auto in ((ya, a), (yb, b)):
            rate = _core(y, auto[mask], ones, auto[~mask], design=dw, design_unlabeled=ew, lam=lam)
            exact = float(y.sum()) if lam == 0 and dw is None else None
            p = float(np.clip(rate[0], 0, 1))
            rates.append((p, *_wilson_limits(p, n_eff, level, exact)))
        (pa, la, ua), (pb, lb, ub) = rates
        estimate = pb - pa
        f = np.array
        both = float((ya * yb).sum())
        only_a = float((ya * (1 - yb)).sum())
        only_b = float(((1 - ya) * yb).sum())
        neither = float(((1 - ya) * (1 - yb)).sum())
        phi = float(_newcombe_phi(both, only_a, only_b, neither, both + only_a + only_b + neither))
        low, high = (
            float(x) for x in _square_and_add(f(pb), f(lb), f(ub), f(pa), f(la), f(ua), phi)
        )
        how = f"Newcombe's paired score method at {n_eff:.1f} effective reviews"
    note = (
        f"PPI++ paired difference ({how}), lambda={lam:.3g}; {a.shape[0]} pairs, {n} reviewed"
        f"{_strata_note(strata, groups)}"
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
