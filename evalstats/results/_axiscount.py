"""Verdict counts of one axis or one check: :class:`AxisCount`.

Built by the in-process runner (:mod:`evalstats.running._run_cases`, which re-exports it)
and by the report of a results file (:mod:`evalstats.presenting._report`); a module of its
own so that a report need not import the runner, and with it the suite and
check machinery.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["AxisCount"]


@dataclass(frozen=True)
class AxisCount:
    """Verdicts of one axis (or one check): ``passed`` of ``scored``.

    ``unscored`` verdicts are in no denominator and counted apart;
    ``not_inspected`` counts the failures that had nothing to inspect (see
    :func:`evalstats.results._records.not_inspected`); they are among the
    failures, and so in ``scored``. Samples that were unmeasured are not counted at all.
    """

    passed: int
    scored: int
    unscored: int
    not_inspected: int

    @property
    def failed(self) -> int:
        return self.scored - self.passed

    @property
    def rate(self) -> float:
        """``passed / scored``; NaN when nothing was scored."""
        return self.passed / self.scored if self.scored else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "scored": self.scored,
            "unscored": self.unscored,
            "not_inspected": self.not_inspected,
            "rate": None if not self.scored else self.rate,
        }
