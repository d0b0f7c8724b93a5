"""``evalstats demo``: the shop stand-in, version 1 against version 2, end to end.

Both versions of the offline shop assistant answer the four shop cases
``runs`` times each; every answer is scored by the suite's checks; each case
and each version gets its pass rate with a Wilson interval, and the two
versions are compared three ways (the overlap rule tutorials use, Newcombe's
difference interval, and McNemar's exact paired test) so a newcomer sees why
"72% against 88%" on 40 trials may still be luck.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .compare import Comparison, compare
from .errors import InvalidArgument
from .intervals import Interval, proportion_ci
from .runner import RunResult, load_shop_cases, run_cases
from .standin.shop import SLIP_RATES, make_assistant

__all__ = ["DemoResult", "run_demo"]

#: The comparisons shown side by side, with what each one is.
METHODS = {
    "overlap": "Wilson intervals don't overlap (the tutorial rule)",
    "newcombe": "difference interval excludes 0 (Newcombe)",
    "mcnemar": "exact paired test on (case, run) pairs (McNemar)",
}
_VERSIONS = (1, 2)


@dataclass(frozen=True)
class DemoResult:
    """What ``evalstats demo`` ran and found."""

    runs: int
    seed: int
    level: float
    results: tuple[RunResult, RunResult]
    comparisons: dict[str, Comparison]

    def rate(self, result: RunResult, case: str | None = None) -> Interval:
        """A version's pass rate, for one case or overall, with its Wilson interval."""
        if case is None:
            return proportion_ci(result.passes, result.trials, level=self.level)
        passes, trials = result.pass_counts()[case]
        return proportion_ci(passes, trials, level=self.level)

    @property
    def meaning(self) -> str:
        """One plain sentence (or two) on what the comparisons mean."""
        a, b = self.results
        says = [m for m, c in self.comparisons.items() if c.verdict == "b_better"]
        against = [m for m, c in self.comparisons.items() if c.verdict == "a_better"]
        unsure = [m for m, c in self.comparisons.items() if c.verdict == "cant_tell"]
        truth = (
            f"The stand-in's true pass rates are {100 * (1 - SLIP_RATES[1]):.0f}% and "
            f"{100 * (1 - SLIP_RATES[2]):.0f}%."
        )
        counts = f"version 1 passed {a.passes}/{a.trials}, version 2 {b.passes}/{b.trials}"
        if not says and not against:
            sizes = sorted(
                max(1, math.ceil(100 * c.detectable - 1e-9))
                for c in self.comparisons.values()
                if c.detectable is not None and c.detectable == c.detectable
            )
            detect = (
                f"these trials would usually detect only a difference of "
                f"{sizes[0]} to {sizes[-1]} points or more, depending on the method"
                if sizes and sizes[0] != sizes[-1]
                else f"these trials would usually detect only a difference of {sizes[0]} points "
                "or more"
                if sizes
                else "these trials are too few to detect any difference reliably"
            )
            return (
                f"With {a.trials} trials per version ({counts}), none of the three methods "
                f"can tell yet whether version 2 is better: a gap this size could be luck, and "
                f"{detect}. {truth}"
            )
        parts = []
        if says:
            parts.append(f"{_names(says)} {'says' if len(says) == 1 else 'say'} version 2 is "
                         "better")
        if against:
            parts.append(f"{_names(against)} {'says' if len(against) == 1 else 'say'} "
                         "version 1 is better")
        if unsure:
            parts.append(f"{_names(unsure)} can't tell yet")
        text = f"With {a.trials} trials per version ({counts}), " + "; ".join(parts) + "."
        if "overlap" in unsure and says:
            text += (
                " The overlap rule asks for far more evidence than a difference interval "
                "or a paired test, so it misses real improvements more often."
            )
        return f"{text} {truth}"

    def __str__(self) -> str:
        a, b = self.results
        cases = a.cases
        width = max(len("overall"), *(len(c) for c in cases))
        level = f"{100 * self.level:g}%"
        lines = [
            f"evalstats demo: the offline shop assistant, version 1 (slips on "
            f"{100 * SLIP_RATES[1]:.0f}% of replies) against version 2 "
            f"({100 * SLIP_RATES[2]:.0f}%), {len(cases)} cases x {self.runs} runs, "
            f"seed {self.seed}.",
            "",
            f"{'case':<{width}}  version  passed   {'pass rate (' + level + ' Wilson)':<24}  "
            "checks failed most often",
        ]
        for case in cases:
            for version, result in zip(_VERSIONS, self.results, strict=True):
                passes, trials = result.pass_counts()[case]
                problems = ", ".join(
                    f"{check} x{n}" for check, n in _failed_checks(result, case).most_common(2)
                )
                lines.append(
                    f"{case:<{width}}  v{version:<6}  {passes:>3}/{trials:<4}  "
                    f"{self.rate(result, case)!s:<24}  {problems or '-'}".rstrip()
                )
        for version, result in zip(_VERSIONS, self.results, strict=True):
            lines.append(
                f"{'overall':<{width}}  v{version:<6}  {result.passes:>3}/{result.trials:<4}  "
                f"{self.rate(result)!s}"
            )
        lines += ["", "Is version 2 better than version 1?"]
        for method, comparison in self.comparisons.items():
            lines.append(f"  {method:<9} {METHODS[method]}")
            lines.append(f"            {comparison}")
        lines += ["", self.meaning]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready document: settings, per-case and overall rates, comparisons."""
        versions = []
        for version, result in zip(_VERSIONS, self.results, strict=True):
            summary = result.to_dict()
            summary.pop("samples")
            for row in summary["cases"]:
                row["rate"] = self.rate(result, row["case"]).to_dict()
            summary["rate"] = self.rate(result).to_dict()
            summary["version"] = version
            summary["slip_rate"] = SLIP_RATES[version]
            versions.append(summary)
        return {
            "runs": self.runs,
            "seed": self.seed,
            "level": self.level,
            "versions": versions,
            "comparisons": {m: c.to_dict() for m, c in self.comparisons.items()},
            "meaning": self.meaning,
        }


_DISPLAY = {"overlap": "the overlap rule", "newcombe": "Newcombe", "mcnemar": "McNemar"}


def _failed_checks(result: RunResult, case: str) -> Counter[str]:
    """How often each check failed on one case's samples."""
    return Counter(
        r.check for s in result.samples if s.case == case for r in s.checks if r.verdict.is_failed
    )


def _names(methods: list[str]) -> str:
    names = [_DISPLAY.get(m, m) for m in methods]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def run_demo(*, runs: int = 10, seed: int = 0, level: float = 0.95) -> DemoResult:
    """Run the shop demo: both stand-in versions, ``runs`` times on each shop case.

    Version 1 is seeded with ``seed`` and version 2 with ``seed + 1``, so the two
    versions' slips are independent. The comparisons pair the outcomes by
    (case, run) for McNemar and pool them for the overlap rule and Newcombe.

    Examples
    --------
    >>> result = run_demo(runs=5, seed=1)
    >>> [r.trials for r in result.results]
    [20, 20]
    >>> sorted(result.comparisons)
    ['mcnemar', 'newcombe', 'overlap']
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise InvalidArgument(f"runs={runs!r} must be a whole number of at least 1")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgument(f"seed={seed!r} must be a whole number of at least 0")
    cases = load_shop_cases()
    results = tuple(
        run_cases(make_assistant(v, seed=seed + i), cases, runs=runs, variant=f"v{v}")
        for i, v in enumerate(_VERSIONS)
    )
    a, b = results[0].outcomes(), results[1].outcomes()
    comparisons = {
        method: compare(a, b, paired=(method == "mcnemar"), method=method, level=level)
        for method in METHODS
    }
    return DemoResult(runs, seed, level, results, comparisons)  # type: ignore[arg-type]

