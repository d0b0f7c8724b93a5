"""A pass/fail release policy for CI: :func:`gate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._layout import _check_variant, _results, _variant_names
from ._validate import as_rate, check_level, check_method
from .comparison import compare_results
from .errors import InvalidArgument
from .intervals import _pct
from .report import report

__all__ = ["GateResult", "gate"]


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
    """

    passed: bool
    reasons: tuple[str, ...]
    checked: tuple[str, ...] = ()

    def __str__(self) -> str:
        head = "gate passed" if self.passed else "gate failed"
        lines = [head]
        lines += [f"  ok: {c}" for c in self.checked if c not in self.reasons]
        lines += [f"  FAILED: {r}" for r in self.reasons]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "checked": list(self.checked),
            "summary": str(self),
        }


def gate(
    results: Any,
    *,
    variant: str,
    min_pass: float,
    on: str = "estimate",
    every_case_passes: bool = False,
    no_regression_vs: str | None = None,
    level: float = 0.95,
) -> GateResult:
    """Decide whether a variant of a run meets a release policy.

    Rules, each optional but the first:

    * the variant's pass rate over measured samples is at least ``min_pass``:
      its estimate (``on="estimate"``) or the lower limit of its per-trial
      Wilson interval (``on="lower-bound"``, the stricter rule);
    * ``every_case_passes``: every case's own pass-rate estimate (passes of
      measured samples) is at least ``min_pass``; a case with no measured
      sample breaks this rule. (The estimate, whatever ``on`` says: a lower
      bound from a handful of repeats of one case would fail nearly always.)
    * ``no_regression_vs``: the paired comparison of this variant (B) with the
      named one (A) must not say that A is better (McNemar's exact test on the
      pairs, as :func:`compare_results` by default; unpaired runs use
      Newcombe's interval). If no comparison can be made the rule fails.

    The gate always fails when the variant has no measured sample.

    Parameters
    ----------
    results : Results or path
    variant : str
    min_pass : float
        The least acceptable pass rate, in [0, 1].
    on : {"estimate", "lower-bound"}
    every_case_passes : bool
    no_regression_vs : str, optional
    level : float
        Confidence level of the intervals and the comparison.

    Returns
    -------
    GateResult

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.

    Examples
    --------
    >>> from evalstats.results import Results
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
      FAILED: variant 'v': lower bound of the 95% per-trial interval is 76%, below 90% \
(19 of 20 measured samples passed: 95% (76% to 99%))
    """
    level = check_level(level)
    threshold = float(as_rate("min_pass", min_pass))
    on = check_method(on, ("estimate", "lower-bound"), name="on")
    if not isinstance(every_case_passes, bool):
        raise InvalidArgument(f"every_case_passes={every_case_passes!r} must be True or False")
    res = _results(results)
    names = _variant_names(res)
    variant = _check_variant(variant, names)
    if no_regression_vs is not None:
        _check_variant(no_regression_vs, names, arg="no_regression_vs")
        if no_regression_vs == variant:
            raise InvalidArgument(
                f"no_regression_vs={no_regression_vs!r} is the gated variant itself"
            )
    rep = report(res, level=level)
    summary = rep.variant(variant)
    want = _pct(threshold)
    checked: list[str] = []
    reasons: list[str] = []

    def rule(ok: bool, text: str) -> None:
        checked.append(text)
        if not ok:
            reasons.append(text)

    if summary.measured == 0:
        rule(
            False,
            f"variant {variant!r} has no measured samples "
            f"({summary.unmeasured} unmeasured), so its pass rate is unknown",
        )
    else:
        counts = (
            f"{summary.passes} of {summary.measured} measured samples passed: {summary.per_trial}"
        )
        if on == "estimate":
            value = float(summary.per_trial.estimate)
            what = "pass rate"
        else:
            value = float(summary.per_trial.low)
            what = f"lower bound of the {100 * level:g}% per-trial interval"
        ok = value >= threshold
        rule(
            ok,
            f"variant {variant!r}: {what} is {_pct(value)}, "
            f"{'at least' if ok else 'below'} {want} ({counts})",
        )
    if every_case_passes:
        low_cases = []
        for row in rep.rows(variant):
            if row.measured == 0:
                low_cases.append(f"{row.case!r} (no measured samples)")
            elif row.passes / row.measured < threshold:
                low_cases.append(f"{row.case!r} ({row.passes}/{row.measured})")
        if low_cases:
            rule(
                False,
                f"{len(low_cases)} case{'s' if len(low_cases) > 1 else ''} below "
                f"{want}: {', '.join(low_cases)}",
            )
        else:
            rule(True, f"every case passes at least {want} of its measured samples")
    if no_regression_vs is not None:
        cmp = compare_results(res, no_regression_vs, variant, level=level)
        if cmp.primary is None:
            rule(
                False,
                f"no regression against {no_regression_vs!r}: cannot be checked: {cmp.reason}",
            )
        elif cmp.primary.verdict == "a_better":
            rule(False, f"{variant!r} is clearly worse than {no_regression_vs!r}: {cmp.primary}")
        else:
            rule(True, f"no clear regression against {no_regression_vs!r}: {cmp.primary}")
    return GateResult(not reasons, tuple(reasons), tuple(checked))
