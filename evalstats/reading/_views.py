"""What a run holds, read from its counts: variants, cases, slots and outcomes.

The helpers that the report (:mod:`evalstats.presenting._report`), the comparison of two
variants (:mod:`evalstats.deciding._compare_results`), the comparison of two runs
(:mod:`evalstats.deciding._previous_runs`) and the gate
(:mod:`evalstats.deciding._gate`) share. Each takes
a :class:`~evalstats.reading._tally.Tally`, the one-pass counts of a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._validate import suggest
from ..errors import InvalidArgument
from ..stats._intervals import ClusteredInterval, Interval
from ..stats._smallstats import clustered_counts, wilson_ci
from ._source import RunSource
from ._tally import Tally

# --- loading --------------------------------------------------------------------


def _results(results: Any) -> Tally:
    """The counts of a run, from a RunSource, a path, a Results, records, or the counts
    themselves (see :class:`~evalstats.reading._source.RunSource`)."""
    return RunSource.of(results).tally()


def _variant_names(res: Tally) -> list[str]:
    return res.variant_names()


def _case_ids(res: Tally) -> list[str]:
    """The cases of the run in suite order: those scheduled, or else those in the manifest
    (holdout cases only when the run included them), then any found only in samples."""
    return res.case_ids()


def suite_sampled(res: Tally) -> bool:
    """Whether the run's suite declares its cases sampled at random (``sampled: true``)."""
    suite = res.manifest.get("suite")
    return isinstance(suite, dict) and suite.get("sampled") is True


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


# --- rates ----------------------------------------------------------------------


@dataclass(frozen=True)
class VariantRates:
    """One variant's pass rates over the run, both ways, and its counts per case.

    ``per_trial`` is the Wilson interval of ``passes / measured`` (about these
    cases); ``clustered`` the case-clustered interval of the mean pass rate over
    the cases with a record (about cases like these). ``by_case`` holds
    ``(case, passes, measured)`` for every case of the run, in suite order.
    """

    variant: str
    passes: int
    measured: int
    unmeasured: int
    cases_measured: int
    per_trial: Interval
    clustered: ClusteredInterval
    by_case: tuple[tuple[str, int, int], ...]


def variant_rates(
    res: Tally, variant: str, level: float, case_ids: Sequence[str] | None = None
) -> VariantRates:
    """The pass rates of ``variant`` in ``res`` at ``level`` (see :class:`VariantRates`)."""
    counts = res.counts(variant)
    ids = _case_ids(res) if case_ids is None else case_ids
    cells = [counts.cells[c] for c in ids if c in counts.cells]
    passes = sum(c.passes for c in cells)
    measured = sum(c.measured for c in cells)
    by_case = []
    for case in ids:
        cell = counts.cells.get(case)
        by_case.append((case, 0, 0) if cell is None else (case, cell.passes, cell.measured))
    return VariantRates(
        variant=variant,
        passes=passes,
        measured=measured,
        unmeasured=counts.unmeasured,
        cases_measured=sum(1 for c in cells if c.measured),
        per_trial=wilson_ci(passes, measured, level),
        clustered=clustered_counts([c.passes for c in cells], [c.measured for c in cells], level),
        by_case=tuple(by_case),
    )


# --- scores ---------------------------------------------------------------------


@dataclass(frozen=True)
class PairedScores:
    """Two variants' scores paired by (case, repeat), in suite order of the cases.

    ``cases``, ``a`` and ``b`` are position by position one pair: the case,
    A's score and B's score of the same (case, repeat). ``unpaired`` counts the
    scored samples whose other side has no score (unmeasured, not run, or no
    graded check gave one).
    """

    cases: tuple[str, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]
    unpaired: int

    @property
    def n_cases(self) -> int:
        return len(set(self.cases))


def paired_scores(res: Tally, a: str, b: str) -> PairedScores:
    """The scores of ``a`` and ``b`` paired by (case, repeat) (see :class:`PairedScores`)."""
    rows_a = {(c, r): s for c, r, s in res.scores(a)}
    rows_b = {(c, r): s for c, r, s in res.scores(b)}
    order = {c: i for i, c in enumerate(_case_ids(res))}
    keys = sorted(
        (k for k in rows_a if k in rows_b), key=lambda k: (order.get(k[0], len(order)), k)
    )
    unpaired = len(rows_a) + len(rows_b) - 2 * len(keys)
    return PairedScores(
        tuple(c for c, _ in keys),
        tuple(rows_a[k] for k in keys),
        tuple(rows_b[k] for k in keys),
        unpaired,
    )
