"""A random subset of a run for a person to review, and pass rates corrected by it.

``evalstats review --sample N --seed S`` draws ``N`` of the run's
``(case, repeat)`` pairs uniformly at random, without replacement, from the
pairs that every variant measured, and asks for a verdict on each variant's
answer to each drawn pair: a sample stratified by variant (``N`` answers of
each), paired across variants (the same pairs), with a known inclusion
probability ``N / population`` for every pair. The design is the first line
of the reviews file::

    {"type": "design", "run": "3f2a...", "seed": 7, "sample": 40, "population": 200,
     "inclusion_probability": 0.2, "variants": ["v1", "v2"], "units": [["order", 3], ...]}

``run`` is a fingerprint of the results file's manifest, so reviews drawn
from one run are refused for another.

Because the reviewed pairs are a random draw, the automatic verdicts on every
sample and the person's verdicts on the drawn ones combine into a corrected
pass rate with a valid interval (:func:`evalstats.ppi.ppi_pass_rate`, PPI++),
and, for two variants, a corrected paired difference
(:func:`evalstats.ppi.ppi_diff`). Reviews of samples outside the draw (chosen
by hand, in a review without ``--sample``) are counted but never used for the
corrected estimate: a person's choice of what to look at is not random.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InvalidArgument, ResultsFileError
from .intervals import Interval, proportion_ci
from .results import Results, sample_passed

__all__ = ["CorrectedRates", "CorrectedRow", "ReviewDesign", "corrected_rates", "draw_design"]

DESIGN_TYPE = "design"


def run_fingerprint(res: Results) -> str:
    """A short fingerprint of a run: the SHA-256 of its manifest, canonical JSON."""
    text = json.dumps(res.manifest, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class ReviewDesign:
    """How the reviewed samples were drawn (see the module docstring)."""

    run: str
    seed: int
    sample: int
    population: int
    variants: tuple[str, ...]
    units: tuple[tuple[str, int], ...]

    @property
    def inclusion_probability(self) -> float:
        return self.sample / self.population

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": DESIGN_TYPE,
            "design": "uniform random (case, repeat) pairs without replacement, "
            "each variant's answer reviewed (stratified by variant, paired)",
            "run": self.run,
            "seed": self.seed,
            "sample": self.sample,
            "population": self.population,
            "inclusion_probability": self.inclusion_probability,
            "variants": list(self.variants),
            "units": [list(u) for u in self.units],
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], where: str) -> ReviewDesign:
        try:
            units = tuple((str(c), int(r)) for c, r in record["units"])
            return cls(
                str(record["run"]),
                int(record["seed"]),
                int(record["sample"]),
                int(record["population"]),
                tuple(str(v) for v in record["variants"]),
                units,
            )
        except (KeyError, TypeError, ValueError):
            raise ResultsFileError(
                f"{where}: the sampling design line is malformed (it needs run, seed, "
                "sample, population, variants and units)"
            ) from None


def _measured_slots(res: Results) -> dict[tuple[Any, Any, Any], Mapping[str, Any]]:
    first: dict[tuple[Any, Any, Any], Mapping[str, Any]] = {}
    for s in res.samples:
        key = (s.get("case"), s.get("variant"), s.get("repeat"))
        if key not in first:
            first[key] = s
    return {k: s for k, s in first.items() if s.get("status") != "unmeasured"}


def _population(res: Results) -> tuple[tuple[str, ...], list[tuple[str, int]]]:
    """The variants and the (case, repeat) pairs that every variant measured."""
    variants = tuple(res.variants())
    measured = _measured_slots(res)
    pairs: dict[tuple[str, int], set[str]] = {}
    for case, variant, repeat in measured:
        pairs.setdefault((str(case), int(repeat or 0)), set()).add(str(variant))
    complete = sorted(p for p, seen in pairs.items() if seen >= set(variants))
    return variants, complete


def draw_design(res: Results, *, sample: int, seed: int) -> ReviewDesign:
    """Draw ``sample`` pairs uniformly at random (seeded) from the run's complete pairs.

    Raises
    ------
    InvalidArgument
        ``sample`` not a whole number of at least 1, or larger than the run.
    """
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise InvalidArgument(f"sample={sample!r} must be a whole number of at least 1")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgument(f"seed={seed!r} must be a whole number")
    variants, population = _population(res)
    if sample > len(population):
        raise InvalidArgument(
            f"sample={sample} is larger than the run: it has {len(population)} (case, repeat) "
            f"pairs measured by every variant"
        )
    units = tuple(sorted(random.Random(seed).sample(population, sample)))
    return ReviewDesign(run_fingerprint(res), seed, sample, len(population), variants, units)


# --- the corrected rates -----------------------------------------------------------


@dataclass(frozen=True)
class CorrectedRow:
    """One variant: automatic, reviewed and corrected pass rates."""

    variant: str
    automatic: Interval
    automatic_passed: int
    automatic_total: int
    reviewed: Interval
    reviewed_passed: int
    reviewed_total: int
    corrected: Interval

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "automatic": {
                "passed": self.automatic_passed,
                "total": self.automatic_total,
                "interval": self.automatic.to_dict(),
            },
            "reviewed": {
                "passed": self.reviewed_passed,
                "total": self.reviewed_total,
                "interval": self.reviewed.to_dict(),
            },
            "corrected": self.corrected.to_dict(),
        }


@dataclass(frozen=True)
class CorrectedRates:
    """Pass rates corrected by a random review (PPI++), per variant and paired."""

    design: ReviewDesign
    rows: tuple[CorrectedRow, ...]
    difference: Interval | None
    difference_of: tuple[str, str] | None
    hand_picked: int
    undecided: int

    def lines(self, level: str) -> list[str]:
        out = [
            f"corrected by the random review (PPI++, {level} intervals; {self.design.sample} "
            f"of {self.design.population} (case, repeat) pairs drawn with seed "
            f"{self.design.seed})",
        ]
        width = max(len(r.variant) for r in self.rows)
        for r in self.rows:
            out.append(
                f"  {r.variant:<{width}}  automatic "
                f"{f'{r.automatic_passed}/{r.automatic_total}':>9} {r.automatic}  reviewed "
                f"{f'{r.reviewed_passed}/{r.reviewed_total}':>7} {r.reviewed}  "
                f"corrected {r.corrected}"
            )
        if self.difference is not None and self.difference_of is not None:
            a, b = self.difference_of
            out.append(f"  {b} - {a}, corrected, paired: {self.difference}")
        if self.hand_picked:
            out.append(
                f"  {self.hand_picked} review(s) of samples outside the random draw (chosen "
                "by hand) are not used for the corrected rates"
            )
        if self.undecided:
            out.append(
                f"  {self.undecided} drawn sample(s) reviewed needs-review or not yet reviewed "
                "are left out of the corrected rates"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "design": self.design.to_dict(),
            "variants": [r.to_dict() for r in self.rows],
            "difference": None if self.difference is None else self.difference.to_dict(),
            "difference_of": list(self.difference_of) if self.difference_of else None,
            "hand_picked": self.hand_picked,
            "undecided": self.undecided,
        }


def corrected_rates(
    res: Results,
    design: ReviewDesign,
    reviews: Iterable[Any],
    *,
    level: float = 0.95,
    where: str = "reviews",
) -> CorrectedRates:
    """The PPI++ corrected pass rates of a run from its random review.

    Raises
    ------
    InvalidArgument
        The design is of another run, or a variant has fewer than 10 drawn
        samples reviewed pass or fail.
    """
    from .ppi import MIN_REVIEWED, ppi_diff, ppi_pass_rate

    if design.run != run_fingerprint(res):
        raise InvalidArgument(
            f"{where} was drawn from another run (run {design.run}, these results are run "
            f"{run_fingerprint(res)}); review a random sample of this run"
        )
    measured = _measured_slots(res)
    variants, population = _population(res)
    units = set(design.units)
    verdicts: dict[tuple[str, str, int], bool] = {}
    hand_picked = 0
    for r in reviews:
        if (r.case, r.repeat) not in units:
            hand_picked += 1
            continue
        if r.verdict in ("pass", "fail"):
            verdicts[(r.case, r.variant, r.repeat)] = r.verdict == "pass"
    undecided = 0
    rows = []
    masks: dict[str, list[bool]] = {}
    autos: dict[str, list[bool]] = {}
    humans: dict[str, list[bool]] = {}
    for v in variants:
        auto = [bool(sample_passed(measured[(c, v, r)])) for c, r in population]
        mask = [(c, v, r) in verdicts for c, r in population]
        human = [verdicts.get((c, v, r), False) for c, r in population]
        undecided += sum((c, r) in units for c, r in population) - sum(mask)
        reviewed = sum(mask)
        if reviewed < MIN_REVIEWED:
            raise InvalidArgument(
                f"variant {v!r} has reviewed={reviewed} randomly drawn samples decided pass or "
                f"fail; a corrected estimate needs at least {MIN_REVIEWED}"
            )
        k_auto = sum(auto)
        k_rev = sum(h for h, m in zip(human, mask, strict=True) if m)
        rows.append(
            CorrectedRow(
                v,
                proportion_ci(k_auto, len(auto), level=level),
                k_auto,
                len(auto),
                proportion_ci(k_rev, reviewed, level=level),
                k_rev,
                reviewed,
                ppi_pass_rate(auto, mask, human, level=level),
            )
        )
        masks[v], autos[v], humans[v] = mask, auto, human
    difference = None
    pair = None
    if len(variants) == 2:
        a, b = variants
        both = [ma and mb for ma, mb in zip(masks[a], masks[b], strict=True)]
        if sum(both) >= MIN_REVIEWED:
            difference = ppi_diff(autos[a], autos[b], both, humans[a], humans[b], level=level)
            pair = (a, b)
    return CorrectedRates(design, tuple(rows), difference, pair, hand_picked, undecided)
