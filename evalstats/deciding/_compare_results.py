"""Two variants of one run compared: :func:`compare_results`.

Paired by (case, repeat) when the schedule ran both variants on the same
slots, with a verdict about these cases (the paired score test) and one about
cases like these (a case-clustered interval); otherwise as independent samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._terminal import lines_text
from .._text import align_left, display_width
from .._validate import check_level, check_method
from ..errors import InvalidArgument
from ..reading._views import (
    _case_ids,
    _check_variant,
    _results,
    _slots,
    _variant_names,
    suite_sampled,
)
from ..stats._claims import (
    MIN_CASES,
    check_about,
    check_fits,
    claim_of,
    claim_words,
    default_about,
    few_cases_note,
    refuses_scope,
)
from ..stats._compare import (
    PAIRED_METHODS,
    UNPAIRED_METHODS,
    CaseCounts,
    Comparison,
    Table,
    _compare_tables,
    _compare_unpaired,
    compare_counts,
)

if TYPE_CHECKING:
    from ._score_results import ResultsScoreComparison

__all__ = ["ResultsComparison", "compare_results"]

# The outcome codes of a (case, repeat) slot in evalstats.reading._tally.
from ..reading._tally import _FAILED, _INCOMPLETE, _PASSED, _UNMEASURED  # noqa: E402
from ..reading._tally import _NONE as _NO_RECORD  # noqa: E402


@dataclass(frozen=True)
class ResultsComparison:
    """Variant B against variant A in one results file.

    Attributes
    ----------
    a, b : str
        The variant names.
    paired : bool
        Whether the schedule ran both variants on the same (case, repeat)
        slots, so that outcomes are paired.
    these_cases : Comparison or None
        The verdict about these cases: the paired score test on the pairs and
        the interval that inverts it (paired), or Newcombe's interval on the
        measured samples (unpaired).
        None when there was nothing to compare (``reason`` says why).
    cases_like_these : Comparison or None
        The verdict about cases like these: the mean paired difference with a
        case-clustered interval. None when unpaired or with fewer than two
        cases with usable pairs (``reason`` says why).
    primary : Comparison or None
        The comparison the verdict (and ``gate``) uses: by the method or the
        claim asked for; by default ``these_cases`` (``cases_like_these`` when
        the suite declares its cases sampled at random and the outcomes are
        paired over at least 5 cases).
    about : {"these_cases", "cases_like_these"}
        The claim of ``primary``.
    about_note : str
        Why the default claim is the one made (the suite not declared
        sampled, too few cases, or not paired); empty when a claim or a
        method was asked for.
    pairs : int
        Pairs used (paired only).
    dropped_unmeasured : int
        Scheduled pairs left out because a side was unmeasured.
    dropped_missing : int
        Scheduled pairs left out because a side has no record (a run that did
        not finish), and neither side was unmeasured.
    unmeasured_a, unmeasured_b : int
        Unmeasured samples of each variant.
    reason : str
        Why a comparison is missing, when one is.
    scores : ResultsScoreComparison or None
        The mean scores compared, B - A, both claims, when paired samples
        carry scores (graded checks); None otherwise, and the output is
        that of a run of pass/fail checks.
    """

    a: str
    b: str
    paired: bool
    these_cases: Comparison | None
    cases_like_these: Comparison | None
    primary: Comparison | None
    pairs: int
    dropped_unmeasured: int
    dropped_missing: int
    unmeasured_a: int
    unmeasured_b: int
    level: float
    reason: str = ""
    warnings: tuple[str, ...] = ()
    about: str = "these_cases"
    about_note: str = ""
    #: The mean scores compared, when the samples carry scores (graded checks).
    scores: ResultsScoreComparison | None = None

    @property
    def verdict(self) -> str:
        """The primary verdict: ``b_better``, ``a_better`` or ``cant_tell``."""
        return "cant_tell" if self.primary is None else self.primary.verdict

    @property
    def worse_cases(self) -> tuple[str, ...]:
        """Cases on which B got clearly worse (from the per-case rows)."""
        base = self.these_cases
        return () if base is None else base.worse_cases

    def __str__(self) -> str:
        lines = [f"B={self.b} against A={self.a}"]
        lines += [f"warning: {w}" for w in self.warnings]
        if self.paired:
            lines.append(
                f"paired by (case, repeat): {self.pairs} pairs; {self.dropped_unmeasured} "
                "dropped because a side was unmeasured"
                + (
                    f", {self.dropped_missing} because a side was not run"
                    if self.dropped_missing
                    else ""
                )
            )
        else:
            lines.append(
                "not paired: the schedule did not run both variants on the same slots; "
                "compared as independent samples"
            )
        lines.append(f"unmeasured samples: A {self.unmeasured_a}, B {self.unmeasured_b}")
        if self.these_cases is not None:
            lines.append(f"these cases:      {self.these_cases}")
        if self.cases_like_these is not None:
            lines.append(f"cases like these: {self.cases_like_these}")
        if self.primary is not None and self.primary not in (
            self.these_cases,
            self.cases_like_these,
        ):
            lines.append(f"{self.primary.method}: {self.primary}")
        if self.primary is not None:
            verdict = {"b_better": "B better", "a_better": "A better"}.get(
                self.primary.verdict, "can't tell yet"
            )
            lines.append(
                f"verdict: {verdict}, about {claim_words(self.about)}"
                + (f"; {self.about_note}" if self.about_note else "")
            )
        if self.reason:
            lines.append(self.reason)
        if self.these_cases is not None and self.these_cases.cases:
            rows = self.these_cases.cases
            width = max(display_width(r.case) for r in rows) if rows else 4
            lines.append("")
            lines.append(
                f"per case: B - A with its own interval (exploratory: not adjusted for the "
                f"number of cases); flags {self.these_cases.flags_text()}"
            )
            lines.append(f"  {'case':<{width}}  {'A':>7}  {'B':>7}  B - A")
            for r in rows:
                flag = (
                    "  B clearly worse" if r.worse else ("  B clearly better" if r.better else "")
                )
                lines.append(
                    f"  {align_left(r.case, width)}  {f'{r.passes_a}/{r.trials_a}':>7}  "
                    f"{f'{r.passes_b}/{r.trials_b}':>7}  {r.difference}{flag}"
                )
        if self.scores is not None:
            lines += self.scores.lines()
        return lines_text(lines)  # a name holding a newline cannot forge a line

    def to_dict(self) -> dict[str, Any]:
        def d(c: Comparison | None) -> dict[str, Any] | None:
            return None if c is None else c.to_dict()

        return {
            "a": self.a,
            "b": self.b,
            "verdict": self.verdict,
            "paired": self.paired,
            "level": self.level,
            "these_cases": d(self.these_cases),
            "cases_like_these": d(self.cases_like_these),
            "primary": d(self.primary),
            "about": self.about,
            "about_note": self.about_note,
            "pairs": self.pairs,
            "dropped_unmeasured": self.dropped_unmeasured,
            "dropped_missing": self.dropped_missing,
            "unmeasured_a": self.unmeasured_a,
            "unmeasured_b": self.unmeasured_b,
            "worse_cases": list(self.worse_cases),
            "reason": self.reason,
            "warnings": list(self.warnings),
            **({"scores": self.scores.to_dict()} if self.scores is not None else {}),
        }

    def _repr_html_(self) -> str:
        """A notebook's display: the verdict and its interval in the verdict's colour,
        then the text ``print`` gives."""
        from .._repr import result_html, verdict_words

        head = verdict_words(self.verdict)
        if self.primary is not None and self.primary.trials_a and self.primary.trials_b:
            head += f": {self.primary.difference}, about {claim_words(self.about)}"
        return result_html(str(self), headline=head, verdict=self.verdict)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


def _looked_before(res: Any) -> tuple[str, ...]:
    """Why this fixed-n comparison may not hold its error rate: earlier looks."""
    advice = (
        "repeated looks inflate the false-positive rate of this fixed-n comparison; "
        "'evalstats compare --sequential' stays valid however often one looks"
    )
    if res.looks:
        n = len(res.looks)
        return (f"the file was looked at {n} time{'s' if n != 1 else ''} as it grew; {advice}",)
    extensions = res.manifest.get("extensions")
    if isinstance(extensions, list) and extensions:
        n = len(extensions)
        return (
            f"the run was extended {'once' if n == 1 else f'{n} times'} after its first session "
            f"(run --extend); if it was looked at before, {advice}",
        )
    parts = res.manifest.get("merged_from")
    if isinstance(parts, list) and len(parts) > 1:
        return (
            f"the file merges {len(parts)} runs (evalstats merge); if one was looked at before "
            f"the next was run, {advice}",
        )
    summary = res.summary or {}
    if summary.get("resumed_with"):
        return (
            f"the run was resumed or extended after an earlier session; if it was looked "
            f"at then, {advice}",
        )
    return ()


@refuses_scope
def compare_results(
    results: Any,
    a: str,
    b: str,
    *,
    method: str | None = None,
    level: float = 0.95,
    about: str | None = None,
) -> ResultsComparison:
    """Compare variant ``b`` with variant ``a`` of one results file.

    When the manifest's schedule ran both variants on the same (case, repeat)
    slots the outcomes are paired; a pair where either side is unmeasured (or
    has no record) is dropped from the paired analysis and counted. Two
    verdicts are given: about these cases, the paired score test on the pairs
    (Tango's, with the interval that inverts it), and about cases like these, the mean
    paired difference with a case-clustered interval. Per-case rows flag the
    cases where B got clearly worse or better: each case's own exact test,
    adjusted for the number of cases by the discrete Holm method (see
    :func:`evalstats.stats._compare.compare`), and the per-case line says when
    no case can be flagged at the repeats run; the per-case intervals are
    exploratory. When the samples carry scores (graded checks), the mean
    scores are compared beside the pass rates
    (:func:`~evalstats.deciding._score_results.compare_result_scores`), about
    the claim the pass-rate verdict makes.

    Parameters
    ----------
    results : Results or path
        A results file or what :func:`evalstats.results._file.read_results` returned.
    a, b : str
        Variant names; positive differences mean B passes more often.
    method : str, optional
        The method of the ``primary`` comparison (the one ``verdict`` and
        ``gate`` use). Paired: ``mcnemar`` or ``clustered``; an unpaired
        method (``newcombe``, ``overlap``, ``ztest``) compares all measured
        samples as independent samples. Unpaired schedules: ``newcombe``
        (default), ``overlap`` or ``ztest``. Not given: chosen by ``about``.
    level : float
        Confidence level; the test size is 1 - level.
    about : {"these_cases", "cases_like_these"}, optional
        The claim of the ``primary`` verdict. ``"cases_like_these"``:
        ``clustered``; needs paired outcomes from at least 2 cases.
        ``"these_cases"``: these cases, run again (``mcnemar`` when paired,
        else ``newcombe``). By default ``"these_cases"``, whose validity
        comes from the paired, alternating design whatever the cases are;
        ``"cases_like_these"`` when the suite declares its cases sampled at
        random (``sampled: true``) and the outcomes are paired over at least
        :data:`~evalstats.stats._claims.MIN_CASES` (5) cases
        (:func:`~evalstats.stats._claims.default_about`). ``about_note`` says
        why. Both verdicts are computed either way. A method implies its
        claim; a claim that contradicts it raises.

    Returns
    -------
    ResultsComparison

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12, 153-157.
    Newcombe, R. G. (1998). Improved confidence intervals for the difference
    between binomial proportions based on paired data. Statistics in Medicine
    17, 2635-2650.
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.

    Examples
    --------
    >>> from evalstats.results._file import Results
    >>> def sample(case, variant, repeat, ok):
    ...     check = {"check": "c", "axis": None, "status": "passed" if ok else "failed",
    ...              "reason": ""}
    ...     return {"type": "sample", "case": case, "variant": variant, "repeat": repeat,
    ...             "status": "completed", "checks": [check]}
    >>> schedule = [[c, r, 0, 0, v] for r in range(10) for c in "xy" for v in "AB"]
    >>> manifest = {"cases": [{"id": "x"}, {"id": "y"}], "schedule": schedule,
    ...             "variants": [{"name": "A"}, {"name": "B"}]}
    >>> samples = [sample(c, "A", r, r < 4) for c in "xy" for r in range(10)]
    >>> samples += [sample(c, "B", r, True) for c in "xy" for r in range(10)]
    >>> cmp = compare_results(Results(None, manifest, tuple(samples), None, ()), "A", "B")
    >>> cmp.paired, cmp.pairs, cmp.these_cases.verdict, cmp.these_cases.only_b
    (True, 20, 'b_better', 12)
    >>> cmp.about, cmp.verdict
    ('these_cases', 'b_better')
    >>> cmp.about_note
    'the default, as the suite does not declare its cases sampled at random'
    """
    level = check_level(level)
    res = _results(results)
    a, b = _check_request(res, a, b, method, about)
    case_ids = _case_ids(res)
    slots = _slots(res)
    paired = bool(slots.get(a)) and slots.get(a) == slots.get(b)
    if not paired and method in PAIRED_METHODS:
        raise InvalidArgument(
            f"method={method!r} needs outcomes paired by (case, repeat), but the schedule did "
            f"not run {a!r} and {b!r} on the same slots; choose one of "
            f"{', '.join(repr(m) for m in UNPAIRED_METHODS)}"
        )
    common = dict(
        a=a,
        b=b,
        paired=paired,
        level=level,
        unmeasured_a=res.unmeasured(a),
        unmeasured_b=res.unmeasured(b),
        warnings=tuple(res.warnings) + _looked_before(res),
    )
    independent = _Independent(
        _measured_counts(res, a, case_ids), _measured_counts(res, b, case_ids), level
    )
    if not paired:
        return _unpaired_comparison(
            independent, a, b, method, about, common, sampled=suite_sampled(res)
        )
    pairs = _pairs(slots[a], res.outcome_codes, a, b, case_ids)
    these, like, reasons = _paired_verdicts(pairs, level)
    method, note = _primary_method(
        method, about, like, len(pairs.cases), sampled=suite_sampled(res)
    )
    if method == "mcnemar":
        chosen = these
    elif method == "clustered":
        chosen = like
    else:
        chosen = independent(method)
    return ResultsComparison(
        these_cases=these,
        cases_like_these=like,
        primary=chosen,
        pairs=pairs.count,
        dropped_unmeasured=pairs.dropped_unmeasured,
        dropped_missing=pairs.dropped_missing,
        reason="; ".join(reasons),
        about=claim_of(method),
        about_note=note,
        scores=_result_scores(res, a, b, about=claim_of(method), level=level),
        **common,  # type: ignore[arg-type]
    )


def _result_scores(
    res: Any, a: str, b: str, *, about: str, level: float
) -> ResultsScoreComparison | None:
    """The mean scores compared beside the pass rates, or None when a side has no
    score to pair: then the mean scores' modules are not even imported."""
    if not (res.scores(a) and res.scores(b)):
        return None
    from ._score_results import compare_result_scores

    return compare_result_scores(res, a, b, about=about, level=level)


def _check_request(
    res: Any, a: str, b: str, method: str | None, about: str | None
) -> tuple[str, str]:
    """The two variants checked against the run, and the method and claim against each other."""
    names = _variant_names(res)
    a = _check_variant(a, names, arg="a")
    b = _check_variant(b, names, arg="b")
    if a == b:
        raise InvalidArgument(f"a={a!r} and b={b!r} are the same variant; name two")
    if method is not None:
        check_method(method, PAIRED_METHODS + UNPAIRED_METHODS)
    check_about(about)
    check_fits(method, about)
    return a, b


def _unpaired_comparison(
    independent: _Independent,
    a: str,
    b: str,
    method: str | None,
    about: str | None,
    common: dict[str, Any],
    *,
    sampled: bool,
) -> ResultsComparison:
    """The comparison when the schedule did not pair the variants: about these cases only."""
    if about == "cases_like_these":
        raise InvalidArgument(
            f"about='cases_like_these' needs outcomes paired by (case, repeat), since a claim "
            f"about cases like these compares A and B case by case, but the schedule did not "
            f"run {a!r} and {b!r} on the same slots; use about='these_cases'"
        )
    primary = independent(method or "newcombe")
    return ResultsComparison(
        these_cases=primary if method in (None, "newcombe") else independent("newcombe"),
        cases_like_these=None,
        primary=primary,
        pairs=0,
        dropped_unmeasured=0,
        dropped_missing=0,
        reason="cases like these: needs paired outcomes; the schedule did not pair them",
        about="these_cases",
        about_note=""
        if method is not None or about is not None
        else default_about(
            n_cases=len(independent.a),
            not_paired="the schedule did not run both variants on the same slots",
            sampled=sampled,
        )[1],
        **common,
    )


def _primary_method(
    method: str | None,
    about: str | None,
    like: Comparison | None,
    n_cases: int,
    *,
    sampled: bool,
) -> tuple[str, str]:
    """The paired primary comparison's method (from the claim when not given) and its note."""
    note = ""
    if method is None:
        if about is None:
            about, note = default_about(n_cases=n_cases, sampled=sampled)
        elif about == "cases_like_these":
            if like is None:
                raise InvalidArgument(
                    f"about='cases_like_these' needs pairs from at least 2 cases to say anything "
                    f"about cases like these, got {n_cases}; use about='these_cases'"
                )
            if n_cases < MIN_CASES:
                note = few_cases_note(n_cases)
        method = "clustered" if about == "cases_like_these" else "mcnemar"
    return method, note


def _measured_counts(res: Any, variant: str, case_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``{case: (passes, measured samples)}`` of ``variant``, in ``case_ids`` order (then
    any other case), cases with no measured sample left out: counted from the tally's
    outcome codes, one byte per repeat, without an object per sample."""
    cells = res.counts(variant).cells
    known = set(case_ids)
    order = [c for c in case_ids if c in cells] + [c for c in cells if c not in known]
    out = {}
    for case in order:
        codes = res.outcome_codes(variant, case)
        measured = len(codes) - codes.count(_NO_RECORD) - codes.count(_UNMEASURED)
        if measured:
            out[case] = (codes.count(_PASSED), measured)
    return out


class _Independent:
    """The two variants' measured samples compared as independent samples."""

    def __init__(
        self, a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], level: float
    ) -> None:
        self.a, self.b, self.level = a, b, level

    def __call__(self, method: str) -> Comparison:
        """``compare(a, b, paired=False, method=method)`` on the measured samples,
        from their counts; on the pooled counts when a side has none."""
        if not self.a or not self.b:
            ka, na = (sum(x) for x in zip(*self.a.values(), strict=True)) if self.a else (0, 0)
            kb, nb = (sum(x) for x in zip(*self.b.values(), strict=True)) if self.b else (0, 0)
            return compare_counts(ka, na, kb, nb, method=method, level=self.level)
        none = (0, 0)
        counts: list[CaseCounts] = [
            (case, *self.a.get(case, none), *self.b.get(case, none))
            for case in list(self.a) + [c for c in self.b if c not in self.a]
        ]
        result = _compare_unpaired(counts, method=method, level=self.level)
        return replace(result, about=claim_of(method), about_note="")


@dataclass(frozen=True)
class _Pairs:
    """Outcomes paired by (case, repeat): each case's 2 x 2 table, and the dropped pairs.

    ``cases`` lists the cases with at least one pair, in suite order, and
    ``tables`` their tables (both passed, only A, only B, neither).
    """

    cases: tuple[str, ...]
    tables: tuple[Table, ...]
    dropped_unmeasured: int
    dropped_missing: int

    @property
    def count(self) -> int:
        return sum(sum(t) for t in self.tables)


# Each outcome code as a class of the pairing (a bytes.translate table): 0 no
# record, 1 passed, 2 failed (failed or incomplete), 3 unmeasured.
def _class_table() -> bytes:
    table = bytearray(256)
    table[_PASSED], table[_FAILED], table[_INCOMPLETE], table[_UNMEASURED] = 1, 2, 2, 3
    return bytes(table)


_CLASS = _class_table()
#: Repeats of one case paired at a time: bounds the working arrays.
_CHUNK = 1 << 14


def _pairs(
    scheduled: Mapping[str, bytes],
    codes: Callable[[str, str], bytes],
    a: str,
    b: str,
    case_ids: Sequence[str],
) -> _Pairs:
    """Pair the scheduled slots; a pair with a side unmeasured or not run is dropped.

    ``codes(variant, case)`` gives the outcome code of each repeat (see
    :mod:`evalstats.reading._tally`): 0 no record, 1 passed, 2 and 3 failed, 4 unmeasured.
    The pairs are counted, never listed: each scheduled repeat's classes under
    A and B (see ``_CLASS``) make a key 1 + 4 class_a + class_b (0 when not
    scheduled), and the keys of each case are counted in chunks of ``_CHUNK``
    repeats, so that the working memory is a few bytes per repeat of a chunk
    whatever the number of pairs.
    """
    order = {c: i for i, c in enumerate(case_ids)}
    ordered = sorted(scheduled, key=lambda c: order.get(c, len(order)))
    counts = np.zeros((len(ordered), 17), dtype=np.int64)
    group: list[int] = []  # cases counted together, up to _CHUNK repeats in all
    size = 0
    for k, case in enumerate(ordered):
        n = len(scheduled[case])
        if n > _CHUNK:
            counts[k] = _case_keys(scheduled[case], codes(a, case), codes(b, case))
            continue
        if size + n > _CHUNK:
            _group_keys(group, ordered, scheduled, codes, a, b, counts)
            group, size = [], 0
        group.append(k)
        size += n
    _group_keys(group, ordered, scheduled, codes, a, b, counts)
    by = counts[:, 1:].reshape(-1, 4, 4)  # by[case, class_a, class_b]
    dropped_unmeasured = int(by[:, 3, :].sum() + by[:, :3, 3].sum())
    dropped_missing = int(by[:, 0, :3].sum() + by[:, 1:3, 0].sum())
    found = np.stack([by[:, 1, 1], by[:, 1, 2], by[:, 2, 1], by[:, 2, 2]], axis=1)
    kept = np.flatnonzero(found.sum(axis=1) > 0)
    cases = [ordered[k] for k in kept.tolist()]
    tables: list[Table] = [tuple(row) for row in found[kept].tolist()]  # type: ignore[misc]
    return _Pairs(tuple(cases), tuple(tables), dropped_unmeasured, dropped_missing)


def _case_keys(on: bytes, ca: bytes, cb: bytes) -> np.ndarray:
    """The 17 key counts of one case's scheduled repeats, ``_CHUNK`` repeats at a time."""
    keys = np.zeros(17, dtype=np.int64)
    for start in range(0, len(on), _CHUNK):
        stop = min(start + _CHUNK, len(on))
        key = _classes(ca, start, stop) * np.uint8(4)
        key += _classes(cb, start, stop)
        key += np.uint8(1)
        key *= np.frombuffer(on, dtype=np.uint8, count=stop - start, offset=start) != 0
        keys += np.bincount(key, minlength=17)
    return keys


def _group_keys(
    group: list[int],
    ordered: Sequence[str],
    scheduled: Mapping[str, bytes],
    codes: Callable[[str, str], bytes],
    a: str,
    b: str,
    counts: np.ndarray,
) -> None:
    """The key counts of a group of cases (their repeats side by side), into ``counts``."""
    if not group:
        return
    on = [scheduled[ordered[k]] for k in group]
    sizes = [len(x) for x in on]
    sides = []
    for variant in (a, b):
        parts = [
            codes(variant, ordered[k])[:n].ljust(n, b"\0")
            for k, n in zip(group, sizes, strict=True)
        ]
        sides.append(np.frombuffer(b"".join(parts).translate(_CLASS), dtype=np.uint8))
    key = sides[0] * np.uint8(4)
    key += sides[1]
    key += np.uint8(1)
    key *= np.frombuffer(b"".join(on), dtype=np.uint8) != 0
    place = np.repeat(np.arange(len(group), dtype=np.int64) * 17, sizes)
    found = np.bincount(place + key, minlength=17 * len(group)).reshape(len(group), 17)
    counts[group] = found


def _classes(codes: bytes, start: int, stop: int) -> np.ndarray:
    """The classes (see ``_CLASS``) of repeats ``start`` to ``stop`` of one side's codes,
    a repeat past the end of ``codes`` having no record."""
    part = codes[start:stop].translate(_CLASS).ljust(stop - start, b"\0")
    return np.frombuffer(part, dtype=np.uint8)


def _paired_verdicts(
    pairs: _Pairs, level: float
) -> tuple[Comparison | None, Comparison | None, list[str]]:
    """About these cases (McNemar) and about cases like these (clustered), and why not."""
    reasons = []
    these: Comparison | None = None
    like: Comparison | None = None
    if pairs.count == 0:
        reasons.append(
            "no pair has a measured outcome on both sides, so there is nothing to compare"
        )
    else:
        these = _compare_tables(pairs.cases, pairs.tables, method="mcnemar", level=level)
        if len(pairs.cases) >= 2:
            like = _compare_tables(pairs.cases, pairs.tables, method="clustered", level=level)
        else:
            reasons.append(
                f"cases like these: needs pairs from at least 2 cases, got {len(pairs.cases)}"
            )
    return these, like, reasons
