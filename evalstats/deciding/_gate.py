"""A pass/fail release policy for CI: :func:`gate`."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from .._terminal import lines_text
from .._validate import as_rate, check_level, check_method
from ..errors import InvalidArgument
from ..reading._views import (
    VariantRates,
    _check_variant,
    _results,
    _variant_names,
    suite_sampled,
    variant_rates,
)
from ..stats._claims import (
    MIN_CASES,
    check_about,
    claim_words,
    default_about,
    few_cases_note,
    refuses_scope,
)
from ..stats._intervals import _pct, cases_for_margin
from ._compare_results import compare_results

if TYPE_CHECKING:
    from ..stats._compare import Comparison

__all__ = [
    "GateResult",
    "NonInferiority",
    "gate",
    "non_inferiority",
    "non_inferiority_verdict",
    "what_would_pass",
]

NonInferiorityVerdict = Literal["not_worse", "worse", "cant_tell"]


def _margin(value: Any) -> float:
    """A non-inferiority margin: a difference of pass rates in [0, 1)."""
    try:
        m = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"margin={value!r} must be a number in [0, 1), such as 0.05 for 5 points"
        ) from None
    if math.isnan(m) or not 0.0 <= m < 1.0:
        hint = " (did you mean a fraction, such as 0.05 for 5 points?)" if m >= 1 else ""
        raise InvalidArgument(f"margin={value!r} must be at least 0 and less than 1{hint}")
    return m


def non_inferiority_verdict(comparison: Comparison, margin: float) -> NonInferiorityVerdict:
    """Is B no worse than A by more than ``margin``, by this comparison's interval?

    ``"not_worse"`` when the lower limit of the interval for p_b - p_a is
    above ``-margin``; ``"worse"`` when its upper limit is below
    ``-margin`` (B is worse by more than the margin); ``"cant_tell"``
    otherwise, and when the comparison has no interval. With a two-sided
    interval at level 0.95 this is the one-sided test at 2.5% of
    ``p_b - p_a <= -margin`` (Wellek 2010, ch. 1; the confidence-interval
    approach to non-inferiority of ICH E9 and CPMP 2000).

    References
    ----------
    Wellek, S. (2010). Testing Statistical Hypotheses of Equivalence and
    Noninferiority, 2nd ed. Chapman & Hall/CRC, chapter 1.
    """
    m = _margin(margin)
    low, high = float(comparison.difference.low), float(comparison.difference.high)
    if comparison.trials_a == 0 or comparison.trials_b == 0 or math.isnan(low):
        return "cant_tell"
    if low > -m:
        return "not_worse"
    if high < -m:
        return "worse"
    return "cant_tell"


@dataclass(frozen=True)
class NonInferiority:
    """Whether variant B is no worse than A by more than a margin.

    Attributes
    ----------
    verdict : {"not_worse", "worse", "cant_tell"}
        See :func:`non_inferiority_verdict`.
    a, b : str
        The variants: A the reference (the old one), B the one gated.
    margin : float
        How much worse than A (in pass-rate units) still counts as no worse.
    comparison : Comparison
        The comparison whose interval for p_b - p_a decided it.
    advice : str
        For ``cant_tell``: how many more runs or cases would usually decide
        it, planned for the rule used: about cases like these by
        :func:`evalstats.planning._power.plan` (the clustered comparison simulated),
        about these cases by :func:`_trials_rule_power` (the exact power of
        the paired score interval, or of Newcombe's for unpaired runs); empty
        when not asked for or not plannable.
    about : {"these_cases", "cases_like_these"}
        The claim.
    about_note : str
        Why the default claim is the one made (empty when ``about`` or
        ``method`` was given).
    beside : str
        The other claim's verdict, or what it would take: about cases like
        these, the fewest cases that could show B within the margin even if
        no case changed (:func:`~evalstats.stats._intervals.cases_for_margin`);
        printed on the line after the verdict.
    """

    verdict: NonInferiorityVerdict
    a: str
    b: str
    margin: float
    comparison: Comparison
    advice: str = ""
    about: str = "these_cases"
    about_note: str = ""
    beside: str = ""

    def __str__(self) -> str:
        m = _pct(self.margin)
        # the bound B - A must clear: -margin, in the signed style of the interval
        floor = _pct(-self.margin, signed=True) if self.margin > 0 else "0"
        d = self.comparison.difference
        bound = f"lower limit of B - A {_pct(float(d.low), signed=True)}"
        if self.verdict == "not_worse":
            head = f"{self.b!r} is not worse than {self.a!r} by more than {m}: {bound} > {floor}"
        elif self.verdict == "worse":
            head = (
                f"{self.b!r} is worse than {self.a!r} by more than {m}: upper limit of B - A "
                f"{_pct(float(d.high), signed=True)} < {floor}"
            )
        else:
            within = f"within {m} of" if self.margin > 0 else "no worse than"
            head = (
                f"can't tell yet whether {self.b!r} is {within} {self.a!r}: {bound} "
                f"is not above {floor}"
            )
        about = f"about {claim_words(self.about)}" + (
            f": {self.about_note}" if self.about_note else ""
        )
        test = self.comparison.test_name
        text = f"{head} ({test} {d}, {100 * self.comparison.level:g}%, {about})"
        if self.margin == 0:
            text += (
                "; a margin of 0 asks for B to be shown no worse at all, which in practice "
                "means shown better: that needs a lot of data"
            )
        if self.advice:
            text += f"; {self.advice}"
        return text + (f"\n{self.beside}" if self.beside else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "a": self.a,
            "b": self.b,
            "margin": self.margin,
            "comparison": self.comparison.to_dict(),
            "about": self.about,
            "about_note": self.about_note,
            "advice": self.advice,
            "beside": self.beside,
            "summary": str(self),
        }


#: The power "would usually decide it" plans for.
_ADVICE_POWER = 0.8
#: The most pairs (or runs per variant) the advice about these cases looks at.
_ADVICE_MAX_TRIALS = 200_000
#: Tails of the binomial counts dropped by the exact power of the rules about
#: these cases (their probability is lost, so the power is at most this much
#: short per dropped tail).
_ADVICE_TAIL = 1e-7


def _trials_rule_power(
    p: float,
    trials: int,
    margin: float,
    *,
    level: float = 0.95,
    discordance: float | None = None,
    method: str = "newcombe",
) -> float:
    """Exact probability that the gate's rule about these cases shows B within ``margin`` of A.

    A and B both pass at rate ``p`` (B truly as good). Paired (``discordance``
    given: the share of pairs on which A and B disagree, split evenly between
    them): ``trials`` pairs, multinomial cells (both, only A, only B,
    neither), judged by the comparison's paired score interval
    (:data:`evalstats.stats._compare.THESE_CASES_INTERVAL`, as
    ``gate(..., about="these_cases")`` judges paired runs): its lower limit is
    above ``-margin`` exactly when the score statistic at ``-margin``
    exceeds the normal quantile, which is what is summed. Unpaired
    (``discordance=None``): ``trials`` independent runs of each, judged by
    :func:`evalstats.stats._intervals.diff_ci` with ``method``. The gate
    passes when the interval's lower limit at ``level`` is above ``-margin``;
    the probability is summed over every count (binomial tails below 1e-7
    dropped, so it is at most about 1e-6 short).
    """
    import numpy as np

    from ..planning._power import _support
    from ..stats._compare import THESE_CASES_INTERVAL
    from ..stats._intervals import _z, diff_ci
    from ..stats._tango import CORRECTIONS, statistic

    if discordance is None:
        k, w = _support(trials, p, _ADVICE_TAIL)
        ka, kb = np.meshgrid(k, k, indexing="ij")
        low = diff_ci(ka.ravel(), trials, kb.ravel(), trials, level=level, method=method).low
        weight = np.outer(w, w).ravel()
        return float(weight @ (np.asarray(low) > -margin))
    psi = float(discordance)
    q = (p - psi / 2.0) / (1.0 - psi) if psi < 1.0 else 0.0  # P(both | agree)
    cells: list[list[np.ndarray]] = [[], [], [], [], []]
    for d, wd in zip(*_support(trials, psi, _ADVICE_TAIL), strict=True):
        ob, wb = _support(int(d), 0.5, _ADVICE_TAIL)
        bo, wo = _support(trials - int(d), q, _ADVICE_TAIL)
        only_b, both = np.meshgrid(ob, bo, indexing="ij")
        cells[0].append(both.ravel())
        cells[1].append((d - only_b).ravel())
        cells[2].append(only_b.ravel())
        cells[3].append((trials - d - both).ravel())
        cells[4].append((wd * np.outer(wb, wo)).ravel())
    both, only_a, only_b, neither, weight = (np.concatenate(c) for c in cells)
    score = statistic(only_a, only_b, trials, -margin, CORRECTIONS[THESE_CASES_INTERVAL])
    return float(weight @ (score > _z(level)))


def _trials_needed(power_at: Any, start: int) -> int | None:
    """The least n with power_at(n) >= the target, searched from ``start``.

    Steps of a quarter up (or down) from ``start`` bracket it, then bisection
    finds it (power is taken to grow with n: the saw-teeth of discrete counts
    can make a smaller n reach the target too). None above
    :data:`_ADVICE_MAX_TRIALS`.
    """
    hi = max(start, 2)
    if power_at(hi) >= _ADVICE_POWER:
        lo = hi
        while lo > 1:
            lo = max(1, (4 * lo) // 5)
            if power_at(lo) < _ADVICE_POWER:
                break
            hi = lo
        else:
            return 1
    else:
        lo = hi
        while True:
            if lo >= _ADVICE_MAX_TRIALS:
                return None
            hi = min(max(lo + 1, (5 * lo) // 4), _ADVICE_MAX_TRIALS)
            if power_at(hi) >= _ADVICE_POWER:
                break
            lo = hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_at(mid) >= _ADVICE_POWER:
            hi = mid
        else:
            lo = mid
    return hi


#: The most tables the exact power of the paired rule sums, per number of
#: pairs (about 0.2 s); beyond, the advice gives the normal approximation.
_ADVICE_CELLS = 600_000


def _paired_tables(pairs: int, p: float, psi: float) -> float:
    """About how many tables :func:`_trials_rule_power` sums for ``pairs`` pairs."""
    q = (p - psi / 2.0) / (1.0 - psi) if psi < 1.0 else 0.0
    width = 10.6  # the counts within about 5.3 sd of their means: tails of 1e-7

    def span(n: float, r: float) -> float:
        return width * math.sqrt(n * r * (1.0 - r)) + 1.0

    return span(pairs, psi) * span(pairs * psi, 0.5) * span(pairs * (1.0 - psi), q)


def _trials_advice(comparison: Comparison, margin: float, level: float) -> str:
    """The advice for the rule about these cases (the paired score interval, or Newcombe's)."""
    from statistics import NormalDist

    from ..stats._intervals import DIFF_METHODS

    n = int(comparison.trials_a)
    if margin == 0 or n == 0:
        return ""
    p = comparison.successes_a / n
    if not margin < p < 1.0:
        return ""  # A's rate is 0 or 1, or within the margin of 0: nothing to plan on
    cases = len(comparison.cases)
    # The normal approximation of either rule at B = A: the lower limit is
    # about d - z sd / sqrt(n), so P(above -margin) = 0.8 at
    # n = ((z_{1-alpha/2} + z_0.8) / margin)^2 var, var the variance of one
    # pair's difference (the discordance) or of two independent runs.
    z = NormalDist().inv_cdf(0.5 + level / 2.0) + NormalDist().inv_cdf(_ADVICE_POWER)
    if comparison.paired:
        assert comparison.only_a is not None and comparison.only_b is not None
        seen = (comparison.only_a + comparison.only_b) / n
        # at least one disagreement in the pairs planned for, and possible at rate p
        psi = min(max(seen, 1.0 / n), 2.0 * min(p, 1.0 - p))
        approx = max(2, math.ceil((z / margin) ** 2 * psi))
        if _paired_tables(int(1.3 * approx), p, psi) > _ADVICE_CELLS:
            pairs: int | None = approx
            how = (
                "the normal approximation of the paired score interval, (z_.975 + z_.8)^2 x "
                "discordance / margin^2, too many pairs to sum exactly"
            )
        else:
            pairs = _trials_needed(
                lambda t: _trials_rule_power(p, t, margin, level=level, discordance=psi), approx
            )
            how = "the exact power of the paired score interval (Tango)"
        if pairs is None:
            return ""
        runs = math.ceil(pairs / max(cases, 1))
        return (
            f"if it is truly as good, about {runs} runs per case on these {cases} cases "
            f"({pairs} pairs) would usually (80%) decide it (planned for the rule used, about "
            f"these cases: {how}, at A's rate {_pct(p)} and the discordance {_pct(psi)} seen "
            "in this run)"
        )
    method = str(comparison.difference.method)
    if method not in DIFF_METHODS:
        return ""
    approx = max(2, math.ceil((z / margin) ** 2 * 2.0 * p * (1.0 - p)))
    runs_each = _trials_needed(
        lambda t: _trials_rule_power(p, t, margin, level=level, method=method), approx
    )
    if runs_each is None:
        return ""
    return (
        f"if it is truly as good, about {runs_each} runs of each variant would usually (80%) "
        f"decide it (planned for the rule used, about these cases: the exact power of the "
        f"{method} interval for independent runs at A's rate {_pct(p)})"
    )


def _advice(
    res: Any,
    a: str,
    b: str,
    margin: float,
    level: float,
    comparison: Comparison | None = None,
) -> str:
    """How many runs or cases would usually show B within ``margin`` of A, if it is as good.

    Planned for the rule the comparison used: about these cases
    (``comparison.about == "these_cases"``), the exact power of its interval
    (:func:`_trials_rule_power`); about cases like these, the planner's
    simulation of the clustered comparison (:func:`evalstats.planning._power.plan`).
    """
    if comparison is not None and comparison.about == "these_cases":
        return _trials_advice(comparison, margin, level)
    from ..planning._power import case_model_from_results, plan

    try:
        fitted = case_model_from_results(res, variants=[a, b])
    except InvalidArgument:
        return ""
    if margin == 0 or fitted.cases is None or fitted.cases < 2:
        return ""
    # Showing B no worse than A - margin when B is truly as good as A is
    # detecting a gain of `margin` over a variant at A's rate minus the margin.
    p_b = fitted.p_a
    p_a = p_b - margin
    if not 0.0 < p_a < 1.0:
        return ""  # A's rate is 0 or 1 (or within the margin of 0): nothing to plan on
    model = type(fitted)(p_a, p_b, fitted.icc, fitted.spread)
    cases, runs = fitted.cases, max(fitted.repeats or 1, 1)
    parts = []
    try:
        more_runs = plan(0, 0, model=model, cases=cases, level=level, experiments=1000)
        if more_runs.reachable:
            parts.append(f"{more_runs.repeats} runs per case on these {cases} cases")
        more_cases = plan(0, 0, model=model, repeats=runs, level=level, experiments=1000)
        parts.append(f"{more_cases.cases} cases x {runs} runs")
    except InvalidArgument:
        pass
    if not parts:
        return ""
    return (
        "if it is truly as good, about "
        + " or ".join(parts)
        + " would usually (80%) decide it (planned for the clustered comparison, icc "
        f"{fitted.icc:.2g} fitted from this run)"
    )


@refuses_scope
def non_inferiority(
    results: Any,
    a: str,
    b: str,
    *,
    margin: float,
    level: float = 0.95,
    method: str | None = None,
    advice: bool = True,
    about: str | None = None,
) -> NonInferiority:
    """Is variant ``b`` of a run no worse than ``a`` by more than ``margin``?

    The comparison is :func:`~evalstats.deciding._compare_results.compare_results`' primary
    one (``method`` and ``about`` as there: by default about these cases,
    about cases like these when the suite declares its cases sampled at
    random and the outcomes are paired over at least 5 cases); B passes when the
    lower limit of its interval for p_b - p_a, at ``level``, lies above
    ``-margin``
    (:func:`non_inferiority_verdict`). "Can't tell" is not a pass: with
    ``advice`` it says how many runs per case, or cases, would usually decide
    it if B is truly as good as A, planned for the rule used: about cases like
    these by :func:`evalstats.planning._power.plan` on the case model fitted from this
    run, about these cases by the exact power of its interval (the paired
    score interval, :func:`_trials_rule_power`) at A's rate and the
    discordance seen.

    Parameters
    ----------
    results : Results or path
    a, b : str
        The reference variant (the old one) and the one judged.
    margin : float
        In [0, 1): how much lower B's pass rate may be and still count as no
        worse (0.05 is 5 points). A margin of 0 asks B to be shown no worse
        at all, which needs a lot of data.
    level : float
        Confidence level of the two-sided interval (0.95: a one-sided test at
        2.5%).
    method : str, optional
        The comparison method, as in ``compare_results``.
    advice : bool
        Plan how much more data would decide a "can't tell".
    about : {"these_cases", "cases_like_these"}, optional
        The claim, as in ``compare_results``: ``"cases_like_these"``, B is not
        worse on cases like these (the clustered interval); ``"these_cases"``,
        not worse on these cases run again (Tango's paired score interval with
        a quarter-pair continuity correction, which keeps the test's size at
        its margin: simulations/gate_margin.py).

    Returns
    -------
    NonInferiority
    """
    m = _margin(margin)
    level = check_level(level)
    res = _results(results)
    names = _variant_names(res)
    a = _check_variant(a, names, arg="a")
    b = _check_variant(b, names, arg="b")
    cmp = compare_results(res, a, b, method=method, level=level, about=about)
    if cmp.primary is None:
        raise InvalidArgument(f"{b!r} cannot be compared with {a!r}: {cmp.reason}")
    return _judged(res, cmp, m, level, advice=advice)


def _judged(res: Any, cmp: Any, margin: float, level: float, *, advice: bool) -> NonInferiority:
    """The non-inferiority verdict of ``compare_results``' result ``cmp``, the other
    claim's beside it."""
    verdict = non_inferiority_verdict(cmp.primary, margin)
    text = (
        _advice(res, cmp.a, cmp.b, margin, level, cmp.primary)
        if advice and verdict == "cant_tell"
        else ""
    )
    return NonInferiority(
        verdict,
        cmp.a,
        cmp.b,
        margin,
        cmp.primary,
        text,
        cmp.about,
        cmp.about_note,
        _beside(cmp, margin, level),
    )


def _beside(cmp: Any, margin: float, level: float) -> str:
    """The line about the claim the verdict does not make: its verdict, or what it
    would take."""
    other = "cases_like_these" if cmp.about == "these_cases" else "these_cases"
    found = cmp.cases_like_these if other == "cases_like_these" else cmp.these_cases
    head = f"about {claim_words(other)} (not the claim decided):"
    if found is None or found is cmp.primary:
        why = cmp.reason.split(": ", 1)[-1] if cmp.reason else "not computed"
        return f"{head} no verdict: {why}"
    m = _pct(margin)
    floor = _pct(-margin, signed=True) if margin > 0 else "0"
    d = found.difference
    verdict = non_inferiority_verdict(found, margin)
    if verdict == "not_worse":
        text = (
            f"not worse by more than {m}: lower limit {_pct(float(d.low), signed=True)} > {floor}"
        )
    elif verdict == "worse":
        text = f"worse by more than {m}: upper limit {_pct(float(d.high), signed=True)} < {floor}"
    else:
        text = f"can't tell yet: lower limit {_pct(float(d.low), signed=True)} is not above {floor}"
    text = f"{head} {text} ({found.test_name} {d})"
    if other == "cases_like_these" and verdict != "not_worse":
        need = cases_for_margin(margin, level)
        text += (
            f"; it needs at least {need} cases for a {m} margin, even if B matches A on every case"
            if need is not None
            else f"; no suite of up to 100,000 cases could show a {m} margin"
        )
    return text


@dataclass(frozen=True)
class GateResult:
    """Whether a run meets a policy.

    Attributes
    ----------
    passed : bool
        True when every rule of the policy held.
    reasons : tuple of str
        Why the gate failed, one line per broken rule (empty when it passed).
    checked : tuple of str
        Every rule that was evaluated and what was found, passed or not.
    beside : tuple of str
        For each rule that makes a claim, what the other claim says (its
        verdict, or what it would take); these lines decide nothing.
    hints : tuple of str
        For a lower-bound rule that failed, what would pass it: the highest
        bound this many cases (or samples) can reach even if every sample
        passes, and how many would let the threshold pass; computed with the
        interval the rule uses.
    """

    passed: bool
    reasons: tuple[str, ...]
    checked: tuple[str, ...] = ()
    beside: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()

    def __str__(self) -> str:
        head = "gate passed" if self.passed else "gate failed"
        lines = [head]
        lines += [f"  ok: {c}" for c in self.checked if c not in self.reasons]
        lines += [f"  FAILED: {r}" for r in self.reasons]
        lines += [f"  would pass: {h}" for h in self.hints]
        lines += [f"  beside: {b}" for b in self.beside]
        return lines_text(lines)  # a name holding a newline cannot forge a line

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "checked": list(self.checked),
            "beside": list(self.beside),
            "hints": list(self.hints),
            "summary": str(self),
        }


@refuses_scope
def gate(
    results: Any,
    *,
    variant: str,
    min_pass: float | None = None,
    on: str = "estimate",
    every_case_passes: bool = False,
    no_regression_vs: str | None = None,
    margin: float | None = None,
    level: float = 0.95,
    about: str | None = None,
    allow_unfinished: bool = False,
) -> GateResult:
    """Decide whether a variant of a run meets a release policy.

    Rules, at least one of ``min_pass`` and ``no_regression_vs``:

    * the variant's pass rate over measured samples is at least ``min_pass``:
      its estimate (``on="estimate"``) or the lower limit of its interval
      (``on="lower-bound"``, the stricter rule) for the claim ``about``
      makes: about these cases, the Wilson interval on all measured runs
      (the default), or about cases like these, the case-clustered interval
      of the mean pass rate (:func:`~evalstats.stats._intervals.clustered_mean_ci`,
      the distribution-free betting interval; the default from 5 cases with
      a measured sample when the suite declares its cases sampled at
      random);
    * ``every_case_passes``: every case's own pass-rate estimate (passes of
      measured samples) is at least ``min_pass``; a case with no measured
      sample breaks this rule. (The estimate, whatever ``on`` says: a lower
      bound from a handful of repeats of one case would fail nearly always.)
    * ``no_regression_vs`` with ``margin``: the evidence must say that this
      variant (B) is not worse than the named one (A) by more than
      ``margin``: the lower limit of the interval for p_b - p_a (at
      ``level``, from :func:`compare_results`' primary comparison) lies above
      ``-margin`` (:func:`non_inferiority`), about cases like these or about
      these cases as ``about`` says. "Can't tell" fails the gate, with a line
      saying how many more runs or cases would usually decide it. If no
      comparison can be made the rule fails.

    The gate always fails when the variant has no measured sample, and it
    refuses a results file whose run did not finish (no summary record, as
    a killed run, merge, rescore or import leaves, or a summary that says
    ``"interrupted"`` or ``"stopped"``) unless ``allow_unfinished``: a part
    of a run is not the run a policy was written for.

    Parameters
    ----------
    results : Results or path
    variant : str
    min_pass : float, optional
        The least acceptable pass rate, in [0, 1].
    on : {"estimate", "lower-bound"}
    every_case_passes : bool
    no_regression_vs : str, optional
    margin : float
        Required with ``no_regression_vs``: in [0, 1), how much worse than
        the named variant still counts as no regression (0.02 is 2 points).
        A margin of 0 means no worse at all, which needs a lot of data.
    level : float
        Confidence level of the intervals and the comparison.
    about : {"these_cases", "cases_like_these"}, optional
        The claim of the lower-bound and no-regression rules, as in
        :func:`~evalstats.deciding._compare_results.compare_results`. By
        default about these cases; about cases like these when the suite
        declares its cases sampled at random (``sampled: true``) and there
        are at least 5 cases (for the no-regression rule: paired over at
        least 5 cases). Every rule's line says which claim it makes and why,
        and a ``beside`` line says what the other claim finds (or, for a
        margin about cases like these, the fewest cases that could show it).
    allow_unfinished : bool
        Judge a results file whose run did not finish, as far as it went.

    Returns
    -------
    GateResult

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Examples
    --------
    >>> from evalstats.results._file import Results
    >>> def sample(repeat, ok):
    ...     check = {"check": "c", "axis": None, "status": "passed" if ok else "failed",
    ...              "reason": ""}
    ...     return {"type": "sample", "case": "x", "variant": "v", "repeat": repeat,
    ...             "status": "completed", "checks": [check]}
    >>> res = Results(None, {"variants": [{"name": "v"}], "cases": [{"id": "x"}]},
    ...               tuple(sample(r, r < 19) for r in range(20)), None, ())
    >>> gate(res, variant="v", min_pass=0.9).passed
    True
    >>> print(gate(res, variant="v", min_pass=0.9, on="lower-bound"))
    gate failed
      FAILED: variant 'v': lower bound of the 95% per-trial interval is 76%, below 90%, \
about these cases: the default, as the suite does not declare its cases sampled at \
random (19 of 20 measured samples passed: 95% (76% to 99%))
      would pass: with 20 measured samples the lower bound cannot exceed 84% even if every \
sample passes; 35 measured samples would let 90% pass
      beside: about cases like these (not the claim decided): no verdict: with 1 case \
nothing can be said about cases like these (it takes at least 5)
    """
    level = check_level(level)
    threshold, on, about, margin = _check_policy(
        min_pass, on, every_case_passes, no_regression_vs, margin, about
    )
    if not isinstance(allow_unfinished, bool):
        raise InvalidArgument(f"allow_unfinished={allow_unfinished!r} must be True or False")
    res = _results(results)
    if not allow_unfinished:
        _check_finished(res)
    variant = _check_gated_variants(res, variant, no_regression_vs)
    rates = variant_rates(res, variant, level)
    found: list[tuple[bool, str]] = []
    beside: list[str] = []
    hints: list[str] = []
    for ok, text, other in _pass_rate_rule(
        rates, variant, threshold, on, level, about, sampled=suite_sampled(res)
    ):
        found.append((ok, text))
        beside += [other] if other else []
        if not ok and on == "lower-bound" and threshold is not None and rates.measured:
            used, _ = _bound_about(rates.cases_measured, about, sampled=suite_sampled(res))
            hints.append(what_would_pass(rates, used, level, threshold))
    if every_case_passes:
        found.append(_every_case_rule(rates, threshold))
    if no_regression_vs is not None:
        assert margin is not None
        ok, text, other = _no_regression_rule(res, variant, no_regression_vs, margin, level, about)
        found.append((ok, text))
        beside += [other] if other else []
    checked = [text for _, text in found]
    reasons = [text for ok, text in found if not ok]
    return GateResult(not reasons, tuple(reasons), tuple(checked), tuple(beside), tuple(hints))


#: The most cases (or samples) the advice of a failed lower-bound rule looks at.
MAX_ADVICE = 10_000


def _fewest(reaches: Any, start: int) -> int | None:
    """The least n > start with ``reaches(n)`` (monotone in n), or None past MAX_ADVICE."""
    lo, hi = start, max(2 * start, start + 1)
    while not reaches(hi):
        if hi >= MAX_ADVICE:
            return None
        lo, hi = hi, min(2 * hi, MAX_ADVICE)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def what_would_pass(rates: VariantRates, about: str, level: float, threshold: float) -> str:
    """What would let the lower-bound rule pass, computed with the interval it uses.

    If every measured sample had passed, the bound would be the interval's
    lower end at this run's size; when that is below ``threshold`` no
    outcome at this size passes, and the fewest cases (about cases like
    these, each run as often as this run's cases on average) or samples
    (about these cases) that would let a perfect run pass are named.
    Otherwise, about these cases, the most failing samples the bound
    tolerates at this size.

    Examples
    --------
    >>> from evalstats.stats._smallstats import clustered_counts, wilson_ci
    >>> rates = VariantRates("v", 100, 100, 0, 20, wilson_ci(100, 100, 0.95),
    ...     clustered_counts([5] * 20, [5] * 20, 0.95), tuple((f"c{i}", 5, 5) for i in range(20)))
    >>> print(what_would_pass(rates, "cases_like_these", 0.95, 0.9))
    with 20 cases the lower bound cannot exceed 82% even if every sample passes; 39 cases \
would let 90% pass
    """
    from ..stats._smallstats import clustered_counts, wilson_ci

    pct = _pct(threshold)
    if about == "cases_like_these":
        runs = [m for _, _, m in rates.by_case if m] or [rates.measured]
        cases = len(runs)
        best = float(clustered_counts(runs, runs, level).low)
        each = max(1, round(sum(runs) / cases))
        if best >= threshold:
            return (
                f"with {cases} cases the lower bound reaches {_pct(best)} if every sample "
                f"passes: it is the failing samples that keep it below {pct}"
            )

        def reaches(k: int) -> bool:
            return float(clustered_counts([each] * k, [each] * k, level).low) >= threshold

        need = _fewest(reaches, cases)
        more = (
            f"{need} cases would let {pct} pass"
            if need is not None
            else f"not even {MAX_ADVICE:,} cases would let {pct} pass"
        )
        return (
            f"with {cases} cases the lower bound cannot exceed {_pct(best)} even if every "
            f"sample passes; {more}"
        )
    n = rates.measured
    best = float(wilson_ci(n, n, level).low)
    if best < threshold:
        need = _fewest(lambda m: float(wilson_ci(m, m, level).low) >= threshold, n)
        more = (
            f"{need} measured samples would let {pct} pass"
            if need is not None
            else f"not even {MAX_ADVICE:,} samples would let {pct} pass"
        )
        return (
            f"with {n} measured samples the lower bound cannot exceed {_pct(best)} even if "
            f"every sample passes; {more}"
        )
    # the most failures the bound tolerates at n samples (it falls as failures grow)
    lo, hi = 0, n + 1  # 0 failures reach it; n + 1 cannot
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if float(wilson_ci(n - mid, n, level).low) >= threshold else (lo, mid)
    failures = lo
    return (
        f"with {n} measured samples the lower bound reaches {pct} with at most "
        f"{failures} failing ({rates.measured - rates.passes} failed)"
    )


def _check_finished(res: Any) -> None:
    """Refuse a results file whose run did not finish."""
    if res.path is None:
        return  # records built in memory: no file to have been cut short
    status = (res.summary or {}).get("status")
    if status == "finished":
        return
    why = (
        "it has no summary record: the run, merge, rescore or import writing it was stopped "
        "before the end"
        if res.summary is None
        else f"its summary says {status!r}"
    )
    raise InvalidArgument(
        f"{res.path}: the run did not finish ({why}); finish it (evalstats run --resume) "
        "or judge it as far as it went with --allow-unfinished (allow_unfinished=True)"
    )


def _check_policy(
    min_pass: float | None,
    on: str,
    every_case_passes: bool,
    no_regression_vs: str | None,
    margin: float | None,
    about: str | None,
) -> tuple[float | None, str, str | None, float | None]:
    """The policy's arguments checked: (threshold, on, about, margin)."""
    if min_pass is None and no_regression_vs is None:
        raise InvalidArgument(
            "min_pass=None and no_regression_vs=None: give a pass rate to reach, a variant "
            "not to regress against (with a margin), or both"
        )
    threshold = None if min_pass is None else float(as_rate("min_pass", min_pass))
    on = check_method(on, ("estimate", "lower-bound"), name="on")
    about = check_about(about)
    if no_regression_vs is not None and margin is None:
        raise InvalidArgument(
            f"margin=None: no_regression_vs={no_regression_vs!r} needs a margin, how much "
            "worse still counts as no regression (such as 0.02 for 2 points; 0 means no "
            "worse at all, which needs a lot of data)"
        )
    if margin is not None:
        margin = _margin(margin)
    if every_case_passes and threshold is None:
        raise InvalidArgument(
            "every_case_passes=True needs min_pass, the rate each case must reach"
        )
    if not isinstance(every_case_passes, bool):
        raise InvalidArgument(f"every_case_passes={every_case_passes!r} must be True or False")
    return threshold, on, about, margin


def _check_gated_variants(res: Any, variant: str, no_regression_vs: str | None) -> str:
    """The gated variant's name checked against the run (and the one not to regress from)."""
    names = _variant_names(res)
    variant = _check_variant(variant, names)
    if no_regression_vs is not None:
        _check_variant(no_regression_vs, names, arg="no_regression_vs")
        if no_regression_vs == variant:
            raise InvalidArgument(
                f"no_regression_vs={no_regression_vs!r} is the gated variant itself"
            )
    return variant


def _pass_rate_rule(
    summary: VariantRates,
    variant: str,
    threshold: float | None,
    on: str,
    level: float,
    about: str | None,
    *,
    sampled: bool,
) -> list[tuple[bool, str, str]]:
    """The rule on the variant's pass rate: (held, line, the other claim's line), none
    without min_pass.

    A variant with no measured sample fails here whatever the policy.
    """
    if summary.measured == 0:
        return [
            (
                False,
                f"variant {variant!r} has no measured samples "
                f"({summary.unmeasured} unmeasured), so its pass rate is unknown",
                "",
            )
        ]
    if threshold is None:
        return []
    if on == "estimate":
        value = float(summary.per_trial.estimate)
        counts = (
            f"{summary.passes} of {summary.measured} measured samples passed: {summary.per_trial}"
        )
        ok = value >= threshold
        line = (
            f"variant {variant!r}: pass rate is {_pct(value)}, "
            f"{'at least' if ok else 'below'} {_pct(threshold)} ({counts})"
        )
        return [(ok, line, "")]
    used, note = _bound_about(summary.cases_measured, about, sampled=sampled)
    ok, what, value, counts = _lower_bound(summary, used, level, threshold)
    claim = f", about {claim_words(used)}" + (f": {note}" if note else "")
    line = (
        f"variant {variant!r}: {what} is {_pct(value)}, "
        f"{'at least' if ok else 'below'} {_pct(threshold)}{claim} ({counts})"
    )
    other = "cases_like_these" if used == "these_cases" else "these_cases"
    head = f"about {claim_words(other)} (not the claim decided):"
    if other == "cases_like_these" and summary.cases_measured < 2:
        return [(ok, line, f"{head} no verdict: {few_cases_note(summary.cases_measured)}")]
    held, what, value, counts = _lower_bound(summary, other, level, threshold)
    beside = (
        f"{head} {what} is {_pct(value)}, {'at least' if held else 'below'} "
        f"{_pct(threshold)} ({counts})"
    )
    return [(ok, line, beside)]


def _lower_bound(
    summary: VariantRates, about: str, level: float, threshold: float
) -> tuple[bool, str, float, str]:
    """The lower-bound rule for the claim ``about``: (held, what, the bound, counts)."""
    if about == "cases_like_these":
        ci = summary.clustered
        return (
            float(ci.low) >= threshold,
            f"lower bound of the {100 * level:g}% case-clustered interval",
            float(ci.low),
            f"{summary.passes} of {summary.measured} measured samples passed; "
            f"{ci.method} interval over {ci.clusters} cases: {ci}",
        )
    return (
        float(summary.per_trial.low) >= threshold,
        f"lower bound of the {100 * level:g}% per-trial interval",
        float(summary.per_trial.low),
        f"{summary.passes} of {summary.measured} measured samples passed: {summary.per_trial}",
    )


def _bound_about(cases: int, about: str | None, *, sampled: bool) -> tuple[str, str]:
    """The claim of the lower-bound rule over ``cases`` cases, and why when not asked."""
    if about is None:
        return default_about(n_cases=cases, sampled=sampled)
    if about == "cases_like_these" and cases < 2:
        raise InvalidArgument(
            f"about='cases_like_these' needs measured samples from at least 2 cases to say "
            f"anything about cases like these, got {cases}; use about='these_cases'"
        )
    if about == "cases_like_these" and cases < MIN_CASES:
        return about, few_cases_note(cases)
    return about, ""


def _every_case_rule(rates: VariantRates, threshold: float | None) -> tuple[bool, str]:
    """The rule that every case's own estimate reaches the threshold: (held, line)."""
    want = "" if threshold is None else _pct(threshold)
    low_cases = []
    for case, passes, measured in rates.by_case:
        if measured == 0:
            low_cases.append(f"{case!r} (no measured samples)")
        elif threshold is not None and passes / measured < threshold:
            low_cases.append(f"{case!r} ({passes}/{measured})")
    if low_cases:
        return (
            False,
            f"{len(low_cases)} case{'s' if len(low_cases) > 1 else ''} below "
            f"{want}: {', '.join(low_cases)}",
        )
    return True, f"every case passes at least {want} of its measured samples"


def _no_regression_rule(
    res: Any,
    variant: str,
    no_regression_vs: str,
    margin: float,
    level: float,
    about: str | None,
) -> tuple[bool, str, str]:
    """The rule that the variant is not worse than another by more than margin: (held,
    line, the other claim's line)."""
    cmp = compare_results(res, no_regression_vs, variant, level=level, about=about)
    if cmp.primary is None:
        return (
            False,
            f"no regression against {no_regression_vs!r}: cannot be checked: {cmp.reason}",
            "",
        )
    found = _judged(res, cmp, margin, level, advice=True)
    line = str(replace(found, beside=""))
    return found.verdict == "not_worse", line, found.beside
