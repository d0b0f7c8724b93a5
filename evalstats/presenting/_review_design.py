"""A random subset of a run for a person to review, and pass rates corrected by it.

``evalstats review --sample N --seed S`` draws ``N`` of the run's
``(case, repeat)`` pairs, without replacement, from the pairs that every
variant measured, stratified by case: the same number of pairs from every
case, or as near as possible (a case with fewer pairs than its share gives
all it has; the one-pair remainder of an uneven split goes to cases drawn by
the seed), uniformly within each case. It asks for a verdict on each
variant's answer to each drawn pair: a sample stratified by variant (``N``
answers of each) and by case, paired across variants (the same pairs), with a
known inclusion probability for every pair (``N / population`` for all when
the cases have the same number of pairs: the draw is then self-weighting). With
fewer pairs to draw than cases, the draw is uniform over all pairs instead
(``"stratified_by": null``). The design is the first line of the reviews
file::

    {"type": "design", "run": "3f2a...", "seed": 7, "sample": 40, "population": 200,
     "inclusion_probability": 0.2, "stratified_by": "case",
     "strata": [{"case": "order", "population": 50, "sample": 10, ...}, ...],
     "variants": ["v1", "v2"], "units": [["order", 3], ...]}

(``inclusion_probability`` is null when it differs between cases.) ``run`` is
a fingerprint of the results file's manifest, so reviews drawn from one run
are refused for another. A design line without ``stratified_by`` (an older
file) is a uniform draw.

Because the reviewed pairs are a random draw, the automatic verdicts on every
sample and the person's verdicts on the drawn ones combine into a corrected
pass rate with a valid interval (:func:`evalstats.stats._ppi.ppi_pass_rate`, PPI++),
and, for two variants, a corrected paired difference
(:func:`evalstats.stats._ppi.ppi_diff`). When a draw stratified by case gave the
pairs of different cases different chances (cases of different sizes), the
cases are passed as ``strata``, so each case weighs by its share of the run
(a case needs a review decided pass or fail for that). Reviews of
samples outside the draw (chosen by hand, in a review without ``--sample``)
are counted but never used for the corrected estimate: a person's choice of
what to look at is not random.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._text import align_left, display_width
from ..errors import InvalidArgument, ResultsFileError
from ..results._file import Results, sample_passed
from ..stats._intervals import Interval, proportion_ci

__all__ = ["CorrectedRates", "CorrectedRow", "ReviewDesign", "corrected_rates", "draw_design"]

DESIGN_TYPE = "design"


class TooFewReviewed(InvalidArgument):
    """A variant has fewer drawn samples reviewed pass or fail than a corrected
    estimate needs: a review under way, or a draw too small for one. ``advice``
    says which, and what gives the corrected rates."""

    def __init__(self, message: str, advice: str) -> None:
        super().__init__(message)
        self.advice = advice


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
    #: ``"case"`` for a draw stratified by case, None for a uniform draw.
    stratified_by: str | None = None
    #: ``(case, pairs in the run, pairs drawn, inclusion probability)`` of a
    #: stratified draw, in case order; the probability is each pair's chance to
    #: be drawn, averaged over which cases get the remainder of an uneven split.
    strata: tuple[tuple[str, int, int, float], ...] = ()

    @property
    def inclusion_probability(self) -> float | None:
        """The chance of each pair to be drawn; None when it differs between cases.

        A draw whose pairs all have the same chance needs no weights (it is
        self-weighting); otherwise each case weighs by its share of the run.
        """
        if not self.strata:
            return self.sample / self.population
        shares = [p for *_, p in self.strata]
        return shares[0] if max(shares) - min(shares) < 1e-12 else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": DESIGN_TYPE,
            "design": "uniform random (case, repeat) pairs without replacement, "
            "each variant's answer reviewed (stratified by variant, paired)",
            "run": self.run,
            "seed": self.seed,
            "sample": self.sample,
            "population": self.population,
            "inclusion_probability": self.inclusion_probability,
        }
        if self.stratified_by is not None:
            out["design"] = (
                "(case, repeat) pairs without replacement, stratified by case (the same "
                "number from every case, as near as possible; uniform within a case), each "
                "variant's answer reviewed (stratified by variant, paired)"
            )
        out["stratified_by"] = self.stratified_by
        if self.strata:
            out["strata"] = [
                {
                    "case": c,
                    "population": size,
                    "sample": drawn,
                    "inclusion_probability": p,
                }
                for c, size, drawn, p in self.strata
            ]
        out["variants"] = list(self.variants)
        out["units"] = [list(u) for u in self.units]
        return out

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], where: str) -> ReviewDesign:
        try:
            units = tuple((str(c), int(r)) for c, r in record["units"])
            by = record.get("stratified_by")
            strata = tuple(
                (
                    str(s["case"]),
                    int(s["population"]),
                    int(s["sample"]),
                    float(s["inclusion_probability"]),
                )
                for s in record.get("strata") or ()
            )
            if by not in (None, "case") or (by == "case") != bool(strata):
                raise ValueError(by)
            return cls(
                str(record["run"]),
                int(record["seed"]),
                int(record["sample"]),
                int(record["population"]),
                tuple(str(v) for v in record["variants"]),
                units,
                by,
                strata,
            )
        except (KeyError, TypeError, ValueError):
            raise ResultsFileError(
                f"{where}: the sampling design line is malformed (it needs run, seed, "
                "sample, population, variants and units, and a stratified draw its strata)"
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


def _levels(sizes: Mapping[str, int], sample: int) -> tuple[int, list[str], int]:
    """``t``, the strata larger than ``t``, and the remainder: see :func:`allocate`."""
    t = 0
    while t < max(sizes.values()) and sum(min(n, t + 1) for n in sizes.values()) <= sample:
        t += 1
    open_ = [h for h, n in sizes.items() if n > t]
    return t, open_, sample - sum(min(n, t) for n in sizes.values())


def allocate(sizes: Mapping[str, int], sample: int, rng: random.Random) -> dict[str, int]:
    """How many of ``sample`` to draw from each stratum: equal, or as near as possible.

    Every stratum gets ``min(size, t)`` for the largest ``t`` that fits, and
    the remainder (fewer than the strata still larger than ``t``) goes one
    each to strata of those drawn by ``rng``. ``sample`` must not exceed the
    total size.

    Examples
    --------
    >>> allocate({"a": 15, "b": 15, "c": 2}, 20, random.Random(0))
    {'a': 9, 'b': 9, 'c': 2}
    """
    t, open_, remainder = _levels(sizes, sample)
    counts = {h: min(n, t) for h, n in sizes.items()}
    for h in rng.sample(open_, remainder):
        counts[h] += 1
    return counts


def inclusion_probabilities(sizes: Mapping[str, int], sample: int) -> dict[str, float]:
    """The chance of each unit of a stratum to be drawn by :func:`allocate`'s design.

    Averaged over which strata get the remainder: ``(t + r/e) / size`` for
    the ``e`` strata larger than ``t`` sharing a remainder ``r``, 1 for the
    others. Equal sizes give every unit ``sample / total``.

    >>> inclusion_probabilities({"a": 10, "b": 10, "c": 2}, 12)
    {'a': 0.5, 'b': 0.5, 'c': 1.0}
    """
    t, open_, remainder = _levels(sizes, sample)
    extra = remainder / len(open_) if open_ else 0.0
    return {h: (t + extra) / n if h in open_ else 1.0 for h, n in sizes.items()}


def draw_design(
    res: Results, *, sample: int, seed: int, stratify: str | None = "case"
) -> ReviewDesign:
    """Draw ``sample`` of the run's complete pairs at random (seeded), stratified by case.

    With ``stratify="case"`` (the default) the same number of pairs is drawn
    from every case, or as near as possible (see :func:`allocate`), uniformly
    within each case; with ``stratify=None``, or fewer pairs to draw than
    cases, uniformly from all pairs.

    Raises
    ------
    InvalidArgument
        ``sample`` not a whole number of at least 1, or larger than the run;
        ``stratify`` not ``"case"`` or None.
    """
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise InvalidArgument(f"sample={sample!r} must be a whole number of at least 1")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgument(f"seed={seed!r} must be a whole number")
    if stratify not in ("case", None):
        raise InvalidArgument(f"stratify={stratify!r} must be 'case' or None")
    variants, population = _population(res)
    if sample > len(population):
        raise InvalidArgument(
            f"sample={sample} is larger than the run: it has {len(population)} (case, repeat) "
            f"pairs measured by every variant"
        )
    rng = random.Random(seed)
    by_case: dict[str, list[tuple[str, int]]] = {}
    for pair in population:
        by_case.setdefault(pair[0], []).append(pair)
    if stratify is None or sample < len(by_case):
        units = tuple(sorted(rng.sample(population, sample)))
        return ReviewDesign(run_fingerprint(res), seed, sample, len(population), variants, units)
    sizes = {c: len(p) for c, p in by_case.items()}
    counts = allocate(sizes, sample, rng)
    chance = inclusion_probabilities(sizes, sample)
    drawn = [u for c, pairs in by_case.items() for u in rng.sample(pairs, counts[c])]
    strata = tuple((c, sizes[c], counts[c], chance[c]) for c in by_case)
    return ReviewDesign(
        run_fingerprint(res),
        seed,
        sample,
        len(population),
        variants,
        tuple(sorted(drawn)),
        "case",
        strata,
    )


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

    @property
    def width_ratio(self) -> float:
        """The corrected interval's width over the reviewed answers' own (Wilson)."""
        return float(self.corrected.width / self.reviewed.width)

    @property
    def judge_adds_nothing(self) -> bool:
        """The corrected interval is no narrower than the reviewed answers' own.

        A judge that does not shrink the variance in the reviews gets
        ``lambda = 0``, and the corrected interval is then the reviewed
        answers' own Wilson interval (with case weights it can be wider).
        The corrected interval is still the one reported (picking the narrower
        of two intervals after seeing both would undercover); this says so.
        """
        return self.width_ratio >= 1

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
            "width_ratio": self.width_ratio,
            "judge_adds_nothing": self.judge_adds_nothing,
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
    #: Variants of a draw stratified by case whose corrected rate could not
    #: weight the cases (a case without a review decided pass or fail).
    unweighted: tuple[str, ...] = ()

    def lines(self, level: str) -> list[str]:
        drawn = "stratified by case, " if self.design.stratified_by else ""
        out = [
            f"corrected by the random review (PPI++, {level} intervals; {self.design.sample} "
            f"of {self.design.population} (case, repeat) pairs drawn {drawn}with seed "
            f"{self.design.seed})",
        ]
        width = max(display_width(r.variant) for r in self.rows)
        for r in self.rows:
            out.append(
                f"  {align_left(r.variant, width)}  automatic "
                f"{f'{r.automatic_passed}/{r.automatic_total}':>9} {r.automatic}  reviewed "
                f"{f'{r.reviewed_passed}/{r.reviewed_total}':>7} {r.reviewed}  "
                f"corrected {r.corrected}"
            )
        if self.difference is not None and self.difference_of is not None:
            a, b = self.difference_of
            out.append(f"  {b} - {a}, corrected, paired: {self.difference}")
        for r in self.rows:
            if r.judge_adds_nothing:
                out.append(
                    f"  {r.variant}: the judge adds nothing here: the corrected interval is "
                    f"{r.width_ratio:.2f} times as wide as the reviewed answers' own (it agrees "
                    "too little with the reviews); review more samples or use a better judge"
                )
        if self.unweighted:
            out.append(
                f"  {', '.join(self.unweighted)}: a case has no drawn sample reviewed pass or "
                "fail, so the cases are not weighted by their share of the run"
            )
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
            "unweighted": list(self.unweighted),
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
        The design is of another run; :class:`TooFewReviewed` when a variant
        has fewer than 10 drawn samples reviewed pass or fail.
    """
    from ..stats._ppi import MIN_REVIEWED, ppi_diff, ppi_pass_rate

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
    unweighted: list[str] = []
    cases = [c for c, _ in population]

    weighted = design.stratified_by == "case" and design.inclusion_probability is None

    def strata(mask: list[bool]) -> list[str] | None:
        """The case of each pair when the draw gave the cases' pairs different chances
        and every case has a decided review; else None (the unweighted estimator)."""
        if not weighted:
            return None
        if set(cases) - {c for c, m in zip(cases, mask, strict=True) if m}:
            return None
        return cases

    for v in variants:
        auto = [bool(sample_passed(measured[(c, v, r)])) for c, r in population]
        mask = [(c, v, r) in verdicts for c, r in population]
        human = [verdicts.get((c, v, r), False) for c, r in population]
        undecided += sum((c, r) in units for c, r in population) - sum(mask)
        reviewed = sum(mask)
        if reviewed < MIN_REVIEWED:
            raise TooFewReviewed(
                f"variant {v!r} has reviewed={reviewed} randomly drawn samples decided pass or "
                f"fail; a corrected estimate needs at least {MIN_REVIEWED}",
                f"a draw of {design.sample} can never give one: draw at least {MIN_REVIEWED} "
                "pairs (review --sample) in a new reviews file"
                if design.sample < MIN_REVIEWED
                else f"review more of the {design.sample} drawn pairs: review --sample "
                f"{design.sample} --seed {design.seed} with the same --out goes on where it "
                "stopped",
            )
        k_auto = sum(auto)
        k_rev = sum(h for h, m in zip(human, mask, strict=True) if m)
        by_case = strata(mask)
        if weighted and by_case is None:
            unweighted.append(v)
        rows.append(
            CorrectedRow(
                v,
                proportion_ci(k_auto, len(auto), level=level),
                k_auto,
                len(auto),
                proportion_ci(k_rev, reviewed, level=level),
                k_rev,
                reviewed,
                ppi_pass_rate(auto, mask, human, level=level, strata=by_case),
            )
        )
        masks[v], autos[v], humans[v] = mask, auto, human
    difference = None
    pair = None
    if len(variants) == 2:
        a, b = variants
        both = [ma and mb for ma, mb in zip(masks[a], masks[b], strict=True)]
        if sum(both) >= MIN_REVIEWED:
            difference = ppi_diff(
                autos[a], autos[b], both, humans[a], humans[b], level=level, strata=strata(both)
            )
            pair = (a, b)
    return CorrectedRates(
        design, tuple(rows), difference, pair, hand_picked, undecided, tuple(unweighted)
    )
