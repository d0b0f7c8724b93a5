"""What a run holds, read from its counts: variants, cases, slots and outcomes.

The helpers that the report (:mod:`evalstats.presenting._report`), the comparison of two
variants (:mod:`evalstats.deciding._compare_results`), the comparison of two runs
(:mod:`evalstats.deciding._previous_runs`) and the gate
(:mod:`evalstats.deciding._gate`) share. Each takes
a :class:`~evalstats.reading._tally.Tally`, the one-pass counts of a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._validate import suggest
from ..errors import InvalidArgument
from ._tally import Tally, tally

# --- loading --------------------------------------------------------------------


def _results(results: Any) -> Tally:
    """The counts of a run, from a path, a Results, records, or the counts themselves."""
    return tally(results)


def _variant_names(res: Tally) -> list[str]:
    return res.variant_names()


def _case_ids(res: Tally) -> list[str]:
    """The cases of the run in suite order: those scheduled, or else those in the manifest
    (holdout cases only when the run included them), then any found only in samples."""
    return res.case_ids()


def _check_variant(name: Any, names: Sequence[str], *, arg: str = "variant") -> str:
    if name not in names:
        shown = ", ".join(repr(n) for n in names) or "none"
        raise InvalidArgument(
            f"{arg}={name!r} is not a variant{suggest(str(name), names)}; the run has {shown}"
        )
    return str(name)


# --- outcomes by slot ----------------------------------------------------------------


def _slots(res: Tally) -> dict[str, dict[str, bytes]]:
    """The scheduled repeats of each case, per variant (a byte per repeat)."""
    out = {v: res.slots(v) for v in res.variant_names()}
    if isinstance(res.manifest.get("until_decided"), dict) and any(out.values()):
        # A sequential run's manifest schedules its first round; every later
        # round (evalstats.deciding._until_decided) runs the same slots again.
        rounds = 1 + max(res.max_recorded_repeat(), 0)
        out = {v: {case: b"\1" * rounds for case in slots} for v, slots in out.items()}
    return out


def _pooled(by_case: Mapping[str, list[bool]]) -> tuple[int, int]:
    """Passes and outcomes over all cases: the counts when cases cannot be compared."""
    return sum(sum(x) for x in by_case.values()), sum(len(x) for x in by_case.values())
