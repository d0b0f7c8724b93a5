"""What a run holds, read from its results: variants, cases, slots and outcomes.

The helpers that the report (:mod:`evalstats.report`), the comparison of two
variants (:mod:`evalstats.comparison`), the comparison of two runs
(:mod:`evalstats.runs`) and the gate (:mod:`evalstats.gate`) share.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ._validate import suggest
from .errors import InvalidArgument
from .results import Results, read_results, sample_passed

# --- loading --------------------------------------------------------------------


def _results(results: Any) -> Results:
    """A :class:`~evalstats.results.Results` from itself or from a path."""
    if isinstance(results, str | os.PathLike):
        return read_results(results)
    if not all(hasattr(results, a) for a in ("manifest", "samples", "warnings")):
        raise InvalidArgument(
            f"results={results!r} must be a Results (from read_results) or the path of a "
            "results file"
        )
    return results  # type: ignore[no-any-return]


def _and_unlisted(listed: list[str], res: Results, key: str) -> list[str]:
    """``listed``, then the ``key`` values (case or variant) found only in samples."""
    seen = set(listed)
    found: list[str] = [s.get(key) for s in res.samples]  # type: ignore[misc]
    return listed + list(dict.fromkeys(v for v in found if v not in seen))


def _variant_names(res: Results) -> list[str]:
    names = [str(v.get("name")) for v in res.manifest.get("variants", []) if isinstance(v, dict)]
    return _and_unlisted(names, res, "variant")


def _case_ids(res: Results) -> list[str]:
    """The cases of the run in suite order: those scheduled, or else those in the manifest
    (holdout cases only when the run included them), then any found only in samples."""
    schedule = res.manifest.get("schedule")
    if isinstance(schedule, list) and schedule:
        ids = list(
            dict.fromkeys(
                str(slot[0]) for slot in schedule if isinstance(slot, list | tuple) and slot
            )
        )
    else:
        holdout = bool(res.manifest.get("include_holdout"))
        ids = [
            str(c.get("id"))
            for c in res.manifest.get("cases", [])
            if isinstance(c, dict) and (holdout or not c.get("holdout"))
        ]
    return _and_unlisted(ids, res, "case")


def _check_variant(name: Any, names: Sequence[str], *, arg: str = "variant") -> str:
    if name not in names:
        shown = ", ".join(repr(n) for n in names) or "none"
        raise InvalidArgument(
            f"{arg}={name!r} is not a variant{suggest(str(name), names)}; the run has {shown}"
        )
    return str(name)


# --- outcomes by slot------------------------------------------------------------


def _slots(res: Results) -> dict[str, set[tuple[str, int]]]:
    """The scheduled (case, repeat) slots of each variant."""
    out: dict[str, set[tuple[str, int]]] = {}
    for slot in res.manifest.get("schedule", ()) or ():
        if isinstance(slot, list | tuple) and len(slot) >= 5:
            out.setdefault(slot[4], set()).add((slot[0], int(slot[1])))
    if isinstance(res.manifest.get("until_decided"), dict) and out:
        # A sequential run's manifest schedules its first round; every later
        # round (evalstats.sequential_run) runs the same slots again.
        rounds = 1 + max((int(s.get("repeat", 0)) for s in res.samples), default=0)
        out = {v: {(c, r) for c, _ in slots for r in range(rounds)} for v, slots in out.items()}
    return out


def _by_slot(res: Results, variant: str) -> tuple[dict[tuple[str, int], bool | None], int]:
    """Outcome per (case, repeat) of one variant, and its number of unmeasured samples."""
    out: dict[tuple[str, int], bool | None] = {}
    unmeasured = 0
    for s in res.samples:
        if s.get("variant") != variant:
            continue
        key: tuple[str, int] = (s.get("case"), int(s.get("repeat", 0)))  # type: ignore[assignment]
        if key in out:  # a duplicate record: the first one counts, as the reader says
            continue
        passed = sample_passed(s)
        unmeasured += passed is None
        out[key] = passed
    return out, unmeasured


def _measured_by_case(
    outcomes: Mapping[tuple[str, int], bool | None], case_ids: Sequence[str]
) -> dict[str, list[bool]]:
    """``{case: [outcomes of measured samples in repeat order]}``, empty cases left out."""
    grouped: dict[str, list[tuple[int, bool]]] = {}
    for (case, repeat), passed in outcomes.items():
        if passed is not None:
            grouped.setdefault(case, []).append((repeat, passed))
    order = {c: i for i, c in enumerate(case_ids)}
    return {
        c: [p for _, p in sorted(grouped[c])]
        for c in sorted(grouped, key=lambda c: order.get(c, len(order)))
    }


def _pooled(by_case: Mapping[str, list[bool]]) -> tuple[int, int]:
    """Passes and outcomes over all cases: the counts when cases cannot be compared."""
    return sum(sum(x) for x in by_case.values()), sum(len(x) for x in by_case.values())
