"""Multiplicity adjustments that use the discreteness of exact tests.

A comparison flags a case on which B got clearly worse (or better) from that
case's own exact test: McNemar's on its discordant pairs when A and B are
paired by (case, repeat), Fisher's on its 2 x 2 table otherwise. An exact test
on a few outcomes can take only a few p-values. Given the discordant count
(McNemar) or the margins (Fisher), each test has a smallest p-value it can
reach at all; a case with 3 discordant pairs can do no better than p = 0.25.
Holm's and Bonferroni's adjustments count such a case as a full test. The
discrete adjustments here count each test only by the chance it has of
reaching a p-value that small:

- :func:`adjust_discrete` with ``"discrete_holm"``: Holm's step-down method
  with each test counted by its null distribution (Westfall & Wolfinger 1997;
  Zhu & Guo 2019, "MHolm"), the default for per-case flags;
- with ``"tarone"``: Tarone's (1990) modified Bonferroni method, which leaves
  out the tests whose smallest p-value is above the threshold.

Both keep the family-wise error rate at most ``1 - level`` whatever the
dependence between the tests. ``discrete_holm`` flags everything that Holm's
method or Tarone's flags; ``tarone``, a single step, flags everything
Bonferroni's does, but may miss what Holm's later steps find.

The rest says what the flags can do at the number of repeats run:
:func:`smallest_pvalue` (the smallest p-value a case's test can reach at all)
and :func:`repeats_to_flag` (how many repeats would usually flag a case that
drops from 90% to 40%).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "DISCRETE_METHODS",
    "adjust_discrete",
    "fisher_attainable",
    "flag_power",
    "flags_note",
    "mcnemar_attainable",
    "repeats_to_flag",
    "smallest_pvalue",
]

#: The discrete adjustments, by the names ``adjust=`` takes.
DISCRETE_METHODS = ("discrete_holm", "tarone")

#: Relative tolerance when an observed p-value is matched with the values its
#: test can attain: a value within it counts as reached. Counting a little
#: more than is reached only makes an adjusted p-value larger.
TOLERANCE = 1e-9

#: Fisher's two-sided p-value sums the tables no more likely than the one seen,
#: with this relative tolerance on "no more likely" (scipy.stats.fisher_exact's).
FISHER_TOLERANCE = 1e-7


# --- what each test can attain ------------------------------------------------


#: Bits kept of the binomial coefficients in :func:`_mcnemar_attainable` once
#: they outgrow them (a sum's error is then carried along as a bound).
_KEPT = 128
#: Below this many discordant pairs exact integers are used. They give the same
#: floats as the kept bits (tests/test_discrete.py), and are not faster:
#: ``benchmarks/crossovers.py`` finds the kept bits even at 300-450 pairs and
#: 1.1-1.3x faster at 75-150 and at 600-1,000 (0.38 against 0.47 ms at 1,000),
#: at most 0.1 ms a number of pairs, whose values are then cached.
_EXACT_BELOW = 1200


@functools.lru_cache(maxsize=4096)
def _mcnemar_attainable(discordant: int) -> tuple[float, ...]:
    """The attainable two-sided p-values, min(1, 2 P(X <= k)) for k = 0 to d/2,
    each the correctly rounded float of the exact fraction.

    The sums of binomial coefficients are kept to their leading :data:`_KEPT`
    bits and a common power of 2, with a bound on what the cuts and the
    divisions left out, so that each exact sum lies between two integers
    that round to the same float: that float is its value. Should the two
    ever round apart, every value is computed again with exact integers
    (:func:`_mcnemar_attainable_exact`), which give the same floats in time
    quadratic in d.
    """
    d = discordant
    if d == 0:
        return (1.0,)
    if d < _EXACT_BELOW:
        return _mcnemar_attainable_exact(d)
    out = []
    # C(d, k) lies in [term, term + term_err] * 2**exp, the sum of those up to
    # k - 1 in [total, total + total_err] * 2**exp; exact until the first cut.
    term, term_err, total, total_err, exp = 1, 0, 0, 0, 0
    ldexp = math.ldexp
    for k in range(d // 2 + 1):
        total += term
        total_err += term_err
        # 2 * P(X <= k) = (the sum) / 2**shift, X ~ Binomial(d, 1/2)
        shift = d - 1 - exp
        if total.bit_length() - shift >= -1021:  # a normal float, or 1 and more
            value = float(total)  # correctly rounded; scaling it is exact
            if total_err and value != float(total + total_err):
                return _mcnemar_attainable_exact(d)
            out.append(ldexp(value, -shift))
        elif (total + total_err).bit_length() - shift <= -1075:
            out.append(0.0)  # below half the smallest float
        else:  # a subnormal float: correctly rounded divisions
            value = total / (1 << shift)
            if total_err and value != (total + total_err) / (1 << shift):
                return _mcnemar_attainable_exact(d)
            out.append(value)
        more, fewer = d - k, k + 1
        term = term * more // fewer  # C(d, k + 1), exact while nothing is cut
        if term_err:
            term_err = term_err * more // fewer + 2
        cut = term.bit_length() - _KEPT
        if cut > 0:
            term >>= cut
            total >>= cut
            term_err = (term_err >> cut) + 2
            total_err = (total_err >> cut) + 2
            exp += cut
    out[-1] = min(1.0, out[-1])  # below 1 but at k = d/2, where it may pass it
    return tuple(sorted(set(out)))


def _mcnemar_attainable_exact(discordant: int) -> tuple[float, ...]:
    """:func:`_mcnemar_attainable` with exact integers throughout."""
    out = []
    total, term = 0, 1  # term = C(d, k)
    for k in range(discordant // 2 + 1):
        total += term
        term = term * (discordant - k) // (k + 1)
        # 2 * P(X <= k), X ~ Binomial(d, 1/2): one correctly rounded division
        out.append(min(1.0, (2 * total) / (1 << discordant)))
    return tuple(sorted(set(out)))


def mcnemar_attainable(discordant: int) -> np.ndarray:
    """Every p-value the exact two-sided McNemar test can give with this many discordant pairs.

    Given ``discordant`` = d pairs on which A and B disagree, ``only_b`` is
    Binomial(d, 1/2) under the null, and the two-sided p-value of a split
    with k = min(only_a, only_b) is min(1, 2 P(X <= k)) (as
    ``scipy.stats.binomtest(only_b, d, 0.5)``): the values for k = 0 to d/2,
    ascending, computed with exact integers and one rounding each. The
    smallest is 2 / 2^d; no discordant pair gives only 1.

    Examples
    --------
    >>> mcnemar_attainable(5).tolist()
    [0.0625, 0.375, 1.0]
    """
    return np.array(_mcnemar_attainable(int(discordant)))


@functools.lru_cache(maxsize=4096)
def _fisher_attainable(trials_a: int, trials_b: int, passes: int) -> tuple[float, ...]:
    p = _fisher_all(trials_a, trials_b, passes)
    return tuple(np.unique(p).tolist())


def _fisher_all(trials_a: int, trials_b: int, passes: int) -> np.ndarray:
    """Fisher's two-sided p-value of every table with these margins, by A's passes."""
    from scipy.special import gammaln

    low, high = max(0, passes - trials_b), min(trials_a, passes)
    k = np.arange(low, high + 1)
    # hypergeometric probabilities of k passes of A, by log-gamma
    log = (
        gammaln(trials_a + 1)
        - gammaln(k + 1)
        - gammaln(trials_a - k + 1)
        + gammaln(trials_b + 1)
        - gammaln(passes - k + 1)
        - gammaln(trials_b - passes + k + 1)
        - gammaln(trials_a + trials_b + 1)
        + gammaln(passes + 1)
        + gammaln(trials_a + trials_b - passes + 1)
    )
    pmf = np.exp(log)
    unlikely = pmf[None, :] <= pmf[:, None] * (1.0 + FISHER_TOLERANCE)
    return np.minimum(unlikely.astype(float) @ pmf, 1.0)


def fisher_attainable(trials_a: int, trials_b: int, passes: int) -> np.ndarray:
    """Every p-value Fisher's exact two-sided test can give with these margins.

    With ``trials_a`` and ``trials_b`` trials and ``passes`` passes in all,
    A's passes are hypergeometric under the null; the p-value of a table sums
    the probabilities of the tables no more likely than it (scipy's relative
    tolerance 1e-7 included), as ``scipy.stats.fisher_exact``. Returned
    ascending and without repeats.

    Examples
    --------
    >>> fisher_attainable(3, 3, 3).round(4).tolist()
    [0.1, 1.0]
    """
    return np.array(_fisher_attainable(int(trials_a), int(trials_b), int(passes)))


# --- the adjustments ------------------------------------------------------------


def adjust_discrete(pvalues: Any, attainable: Sequence[Any], *, method: str) -> np.ndarray:
    """P-values adjusted for multiplicity by a discrete method; NaN entries stay NaN.

    ``attainable[i]`` holds every p-value the i-th test could have given under
    its null (given what it conditions on), ascending; each p-value must be
    valid, P(p <= a) <= a, so that the largest attainable value at or below t,
    F_i(t), bounds the chance of a p-value at or below t. (Arguments are
    trusted: :func:`evalstats.stats._compare.adjust_pvalues` checks them.)

    ``"discrete_holm"``: with the p-values sorted, p_(1) <= ... <= p_(m), the
    k-th step sums F_j(p_(k)) over the tests j not yet passed (ranks k to m);
    the adjusted p-values are these sums made non-decreasing, capped at 1.
    It is the closed test whose local test of a set I rejects when the sum of
    F_j(min p_I) over I is at most the level (a Bonferroni bound, valid under
    any dependence), so it controls the family-wise error rate strongly.
    A test that cannot reach p_(k) adds 0 to the k-th sum; one that can
    adds at most p_(k), so no adjusted p-value exceeds Holm's.

    ``"tarone"``: p_i times the number of tests whose smallest attainable
    p-value is at or below p_i, capped at 1: the smallest level at which
    Tarone's (1990) procedure, which tests at alpha / K only the tests able to
    reach alpha / K (K the least number with at most K such tests), rejects
    the i-th test, made monotone so that rejection at one level implies it at
    every higher level (it then rejects at least what Tarone's does).

    References
    ----------
    Tarone, R. E. (1990). A modified Bonferroni method for discrete data.
    Biometrics 46, 515-522.

    Westfall, P. H. & Wolfinger, R. D. (1997). Multiple tests with discrete
    distributions. The American Statistician 51, 3-8.

    Hommel, G. & Krummenauer, F. (1998). Improvements and modifications of
    Tarone's multiple test procedure for discrete data. Biometrics 54, 673-681.

    Zhu, Y. & Guo, W. (2019). Family-wise error rate controlling procedures for
    discrete data. Statistics in Biopharmaceutical Research 12, 117-128.

    Examples
    --------
    Three McNemar tests on 10, 3 and 2 discordant pairs, all of them one-sided
    (p = 2 / 2^d): Holm multiplies the smallest by 3, the discrete Holm by 1,
    since neither other test can reach 0.002.

    >>> p = [2 / 2**10, 0.25, 0.5]
    >>> sets = [mcnemar_attainable(d) for d in (10, 3, 2)]
    >>> adjust_discrete(p, sets, method="discrete_holm").round(5).tolist()
    [0.00195, 0.25, 0.5]
    >>> adjust_discrete(p, sets, method="tarone").round(5).tolist()
    [0.00195, 0.5, 1.0]
    """
    p = np.asarray(pvalues, dtype=float)
    out = p.copy()
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    q = p[ok]
    sets = [np.asarray(attainable[i], dtype=np.float64) for i in ok.tolist()]
    if method == "tarone":
        smallest = np.sort([s[0] for s in sets])
        reach = np.searchsorted(smallest, q * (1.0 + TOLERANCE), side="right")
        out[ok] = np.minimum(np.maximum(reach, 1) * q, 1.0)
        return out
    # The tests in one order that does not depend on how they were listed (by
    # p-value, ties by their sets), so that the sums below add the same steps
    # in the same order, to the last bit, however the cases are listed.
    # Ties are ordered by the sets' values, ranked once per distinct set.
    keys = [s.tobytes() for s in sets]
    distinct = sorted(set(keys), key=lambda b: np.frombuffer(b).tolist())
    code = {b: i for i, b in enumerate(distinct)}
    order = np.lexsort((np.array([code[b] for b in keys]), q))
    sets = [sets[i] for i in order.tolist()]
    t = q[order]
    rank = np.arange(m)
    # F_j is a step function: write it as steps of height a - (the value
    # before a) at each attainable a. A step of test j at a counts in the
    # k-th sum when t_k reaches a and j ranks k or later: for k from
    # lo = (the first k with t_k >= a) to rank(j). Add these ranges up with a
    # difference array.
    values = np.concatenate(sets)
    sizes = np.array([s.size for s in sets])
    # Each set's steps, all sets at once: the differences along the joined
    # values, each set's first step being its first value (the value before is 0).
    steps = np.diff(values, prepend=0.0)
    starts = (np.cumsum(sizes) - sizes)[sizes > 0]
    steps[starts] = values[starts]
    owner_rank = np.repeat(rank, sizes)
    lo = np.searchsorted(t * (1.0 + TOLERANCE), values, side="left")
    keep = lo <= owner_rank
    diff = np.zeros(m + 1)
    np.add.at(diff, lo[keep], steps[keep])
    np.add.at(diff, owner_rank[keep] + 1, -steps[keep])
    sums = np.cumsum(diff[:m])
    # A test's own step at its p-value counts in its sum; the maximum only
    # guards against rounding in the sum of steps.
    stepped = np.minimum(np.maximum.accumulate(np.maximum(sums, t)), 1.0)
    adjusted = np.empty(m)
    adjusted[order] = stepped
    out[ok] = adjusted
    return out


# --- what the flags can do at this number of repeats ---------------------------


def smallest_pvalue(trials_a: int, trials_b: int, *, paired: bool) -> float:
    """The smallest p-value a case's exact test can reach with these numbers of runs.

    Paired (``trials_a`` = ``trials_b`` = n pairs): McNemar's, 2 / 2^n, when
    every pair is discordant and all go one way. Unpaired: Fisher's, the
    smallest over the tables with all of one side passing and none of the
    other (2 / C(2n, n) when both sides have n trials), which is the
    smallest over every table (tests/test_discrete.py checks it up to 20
    trials a side).

    Examples
    --------
    >>> smallest_pvalue(5, 5, paired=True)
    0.0625
    >>> round(smallest_pvalue(3, 3, paired=False), 4)
    0.1
    """
    if paired:
        return min(1.0, math.ldexp(1.0, 1 - int(trials_a))) if trials_a else 1.0
    return _smallest_fisher(int(trials_a), int(trials_b))


@functools.lru_cache(maxsize=256)
def _smallest_fisher(trials_a: int, trials_b: int) -> float:
    if trials_a == 0 or trials_b == 0:
        return 1.0
    # A's trials all pass and B's all fail (trials_a passes in all), or the
    # other way round (trials_b passes in all).
    return min(_fisher_attainable(trials_a, trials_b, s)[0] for s in {trials_a, trials_b})


#: The case whose flag :func:`repeats_to_flag` plans for: its pass rate drops
#: from 90% under A to 40% under B.
DROP = (0.9, 0.4)
#: "Usually", as elsewhere in evalstats: with probability 80%.
USUALLY = 0.8
#: :func:`repeats_to_flag` looks no further than this many repeats.
MOST_REPEATS = 1000


def flag_power(
    repeats: int, threshold: float, *, paired: bool, rates: tuple[float, float] = DROP
) -> float:
    """The chance that a case whose rate moves from ``rates[0]`` to ``rates[1]`` has p < threshold.

    Exact: the case runs ``repeats`` times under each variant, independently
    (paired: the pair's two outcomes are independent, so a pair is only-A
    with probability p_a (1 - p_b) and only-B with p_b (1 - p_a)), and the
    probability counts the outcomes whose exact test (McNemar's paired,
    Fisher's unpaired) gives p < ``threshold`` in the direction of the move.

    Examples
    --------
    Alone, with no other case to adjust for, a case that drops from 90% to
    50% is flagged in 19% of paired comparisons at 10 repeats:

    >>> round(flag_power(10, 0.05, paired=True, rates=(0.9, 0.5)), 3)
    0.192
    """
    from ._binomial import binom_pmf

    pa, pb = rates
    n = int(repeats)
    if paired:
        only_a, only_b = pa * (1 - pb), pb * (1 - pa)
        disc = only_a + only_b
        if disc == 0.0:
            return 0.0
        toward_a = only_a / disc
        total = 0.0
        d = np.arange(n + 1)
        weights = binom_pmf(d, n, disc)
        for m, w in zip(d.tolist(), weights.tolist(), strict=True):
            values = _mcnemar_attainable(m)
            # splits k = min(only_a, only_b) below this count have p < threshold
            below = sum(1 for v in values if v < threshold and v < 1.0)
            if not below:
                continue
            # p < threshold with the move's sign: only_b <= below - 1
            k = np.arange(below)
            total += w * float(binom_pmf(k, m, 1 - toward_a).sum())
        return total
    ka = np.arange(n + 1)
    prob_a = binom_pmf(ka, n, pa)
    prob_b = binom_pmf(ka, n, pb)
    total = 0.0
    for s in range(2 * n + 1):
        low, high = max(0, s - n), min(n, s)
        a = np.arange(low, high + 1)
        p = _fisher_all(n, n, s)
        hit = (p < threshold) & (a > s - a)  # A passes more: B got worse
        total += float((prob_a[a] * prob_b[s - a])[hit].sum())
    return total


@functools.lru_cache(maxsize=256)
def repeats_to_flag(
    cases: int,
    *,
    level: float,
    paired: bool,
    adjusted: bool,
    start: int = 1,
    rates: tuple[float, float] = DROP,
) -> int | None:
    """The fewest repeats (from ``start``) that would usually flag a case dropping from 90% to 40%.

    "Usually" is with probability 80% (:data:`USUALLY`), and the probability
    is a floor that holds whatever the other cases do: among ``cases`` cases
    an adjusted flag (Holm, Bonferroni, Tarone, discrete Holm) is raised
    whenever the case's own p-value is below (1 - level) / cases, since none
    of these adjusts a p-value by more than Bonferroni's factor; unadjusted,
    below 1 - level. The chance is :func:`flag_power`, exact. None when even
    :data:`MOST_REPEATS` (1000) repeats would not do.

    Examples
    --------
    >>> repeats_to_flag(1, level=0.95, paired=True, adjusted=True)
    18
    """
    threshold = (1.0 - level) / (cases if adjusted else 1)
    for n in range(max(1, start), MOST_REPEATS + 1):
        if smallest_pvalue(n, n, paired=paired) >= threshold:
            continue
        if flag_power(n, threshold, paired=paired, rates=rates) >= USUALLY:
            return n
    return None


def flags_note(
    trials: Sequence[tuple[int, int]], *, level: float, paired: bool, adjusted: bool
) -> str:
    """What to say when no case's test can reach p < 1 - level; "" when one can.

    ``trials`` holds (trials of A, trials of B) of every case tested. The
    sentence names the repeats run and how many would usually flag a case
    that drops from 90% to 40% among this many cases
    (:func:`repeats_to_flag`).

    Examples
    --------
    >>> flags_note([(5, 5)] * 10, level=0.95, paired=True, adjusted=True)
    'with 5 repeats no single case can be flagged at 95%; 28 repeats would usually flag a \
case that drops from 90% to 40% among 10 cases'
    >>> flags_note([(6, 6)] * 10, level=0.95, paired=True, adjusted=True)
    ''
    """
    alpha = 1.0 - level
    if not trials or any(smallest_pvalue(na, nb, paired=paired) < alpha for na, nb in trials):
        return ""
    distinct = sorted(set(trials))
    if len(distinct) == 1 and distinct[0][0] == distinct[0][1]:
        runs = distinct[0][0]
        ran = f"with {runs} repeat{'s' if runs != 1 else ''}"
    elif len(distinct) == 1:
        ran = f"with {distinct[0][0]} repeats under A and {distinct[0][1]} under B"
    else:
        runs = max(max(t) for t in trials)
        ran = f"with at most {runs} repeat{'s' if runs != 1 else ''} per case"
    pct = f"{100 * level:g}%"
    head = f"{ran} no single case can be flagged at {pct}"
    most = max(max(t) for t in trials)
    needed = repeats_to_flag(
        len(trials), level=level, paired=paired, adjusted=adjusted, start=most + 1
    )
    drop = f"a case that drops from {100 * DROP[0]:g}% to {100 * DROP[1]:g}%"
    among = f" among {len(trials)} cases" if adjusted and len(trials) > 1 else ""
    if needed is None:
        return f"{head}; even {MOST_REPEATS} repeats would not usually flag {drop}{among}"
    return f"{head}; {needed} repeats would usually flag {drop}{among}"
