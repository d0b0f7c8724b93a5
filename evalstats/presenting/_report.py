"""The report of a results file: :func:`report` and what it returns.

- :func:`report`: per case and variant the passes and their interval, per
  variant the overall rate with two intervals (about these cases, and about
  cases like these), per-axis and per-check denominators, sample status
  counts, latency and tokens. Never the raw answers.

The other readings of a results file live in modules of their own and are
also reachable from here, as they were before they moved:
:func:`~evalstats.deciding._compare_results.compare_results` (two variants of one run),
:func:`~evalstats.compare_runs` and :func:`~evalstats.changed_since`
(two runs; whether a run is due), :func:`~evalstats.deciding._gate.gate` (a release
policy).

The counting rules are those of the results format
(:func:`evalstats.results._file.sample_passed`): an ``unmeasured`` sample leaves
every pass rate and is counted apart; an ``incomplete`` one stays in the
denominator as a failure; an ``unscored`` check leaves its own check's and
axis' denominator and is counted apart; a failure with nothing to inspect
(marked ``not_inspected``) is a failure, counted apart from real misses.
"""

from __future__ import annotations

import math
import os
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._terminal import lines_text
from .._text import align_left, display_width
from .._validate import check_level
from ..errors import InvalidArgument, ResultsFileError
from ..reading._source import RunSource
from ..reading._tally import Tally
from ..reading._views import _case_ids, _check_variant, _variant_names, variant_rates
from ..results._axiscount import AxisCount
from ..stats._claims import check_about, refuses_scope
from ..stats._intervals import ClusteredInterval, Interval
from ..stats._smallstats import clustered_counts, wilson_ci, wilson_cis
from ._rounds import RoundTime, round_lines, round_times
from ._score_report import ScoreSummary, score_lines, score_summaries

__all__ = [
    "AxisCount",
    "CaseVariantRow",
    "ContainmentSummary",
    "Report",
    "ReviewedSummary",
    "VariantSummary",
    "latency_summary",
    "report",
]

#: How many problems (failing checks) a case row keeps, most common first.
TOP_PROBLEMS = 3
# --- small statistics -------------------------------------------------------------


def latency_summary(latencies: Iterable[float]) -> tuple[float, float]:
    """Median and 95th percentile of latencies, both taken from the data.

    The median is the lower middle value for an even count (so it is always a
    latency that was observed); the 95th percentile is the nearest-rank one,
    the ``ceil(0.95 n)``-th smallest value. Empty input gives ``(nan, nan)``.
    Both are the inverse of the empirical distribution function, definition 1
    of Hyndman & Fan (1996) (numpy's ``method="inverted_cdf"``), at 0.5 and
    0.95.

    Parameters
    ----------
    latencies : iterable of float
        Seconds, one per sample.

    Returns
    -------
    (float, float)
        The median and the 95th percentile.

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages.
    The American Statistician 50, 361-365.

    Examples
    --------
    >>> latency_summary([0.4, 0.1, 0.3, 0.2])
    (0.2, 0.4)
    >>> latency_summary([float(i) for i in range(1, 21)])
    (10.0, 19.0)
    """
    values = sorted(float(x) for x in latencies)
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    median = values[(n - 1) // 2]
    # ceil(0.95 n) in integers, so that 0.95 * 20 = 19.000000000000004 cannot round up.
    rank = -(-95 * n // 100)
    return median, values[rank - 1]


#: From this many latencies on, their quantiles are not found by sorting Python
#: floats (32 bytes each) but from the kept 4-byte values (see evalstats.reading._tally).
_SELECT_FROM = 50_000


def _latency_quantiles(latencies: Any) -> tuple[float, float]:
    """:func:`latency_summary` of a variant's kept latencies (see evalstats.reading._tally)."""
    n = len(latencies)
    if n < _SELECT_FROM or n == 0:
        return latency_summary(latencies)
    ranks = [(n - 1) // 2, -(-95 * n // 100) - 1]  # as latency_summary takes them
    if not any(len(block) for block in latencies.other):
        # All in microseconds: each block of 4-byte counts sorted on its own (the
        # Python ints of one block at a time), then each rank found by bisection
        # on the value over the sorted blocks; the two counts are then divided.
        blocks = [array("I", sorted(block)) for block in latencies.micro if len(block)]
        return _kth(blocks, ranks[0]) / 1e6, _kth(blocks, ranks[1]) / 1e6
    import numpy as np

    values = np.concatenate(
        [np.frombuffer(b, dtype=np.uint32) / 1e6 for b in latencies.micro]
        + [np.frombuffer(b, dtype=np.float64) for b in latencies.other]
    )
    picked = np.partition(values, ranks)[ranks]
    return float(picked[0]), float(picked[1])


def _kth(blocks: Sequence[array[int]], k: int) -> int:
    """The ``k``-th smallest (from 0) of the values of sorted ``blocks``."""
    lo, hi = min(b[0] for b in blocks), max(b[-1] for b in blocks)
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(bisect_right(b, mid) for b in blocks) > k:
            hi = mid
        else:
            lo = mid + 1
    return lo


# --- the report ---------------------------------------------------------------------


@dataclass(frozen=True)
class CaseVariantRow:
    """One case under one variant.

    Attributes
    ----------
    case, variant : str
    passes, measured : int
        Passing samples of the measured ones (completed and incomplete).
    incomplete, unmeasured : int
        Incomplete samples (in ``measured``, as failures) and unmeasured ones
        (not in ``measured``).
    interval : Interval
        Wilson interval of ``passes / measured``.
    problems : tuple of (check name, failures, of which not inspected)
        The checks that failed most often on this case, most common first
        (at most :data:`TOP_PROBLEMS`). Check names only: never answer text.
    """

    case: str
    variant: str
    passes: int
    measured: int
    incomplete: int
    unmeasured: int
    interval: Interval
    problems: tuple[tuple[str, int, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "variant": self.variant,
            "passes": self.passes,
            "measured": self.measured,
            "incomplete": self.incomplete,
            "unmeasured": self.unmeasured,
            "interval": self.interval.to_dict(),
            "problems": [
                {"check": name, "failed": n, "not_inspected": ni} for name, n, ni in self.problems
            ],
        }


@dataclass(frozen=True)
class VariantSummary:
    """One variant over all cases.

    Attributes
    ----------
    variant : str
    passes, measured : int
        Passing samples of the measured ones.
    completed, incomplete, unmeasured : int
        Samples by status (``measured = completed + incomplete``).
    missing : int
        Scheduled samples with no record (a run that did not finish).
    per_trial : Interval
        Wilson interval of ``passes / measured``, every sample taken as an
        independent trial: about **these cases**, how often they would pass if
        run again.
    clustered : ClusteredInterval
        The mean pass rate with a case-clustered (cluster-robust) interval:
        about **cases like these**, the cases being a sample of the cases one
        could have written. Its ``design_effect`` says how much the runs of a
        case agree with each other.
    axes, checks : dict of name to AxisCount
        Verdict counts per axis and per check, each with its own denominator.
    latency_median, latency_p95 : float
        Over every sample with a latency, unmeasured and incomplete ones too
        (see :func:`latency_summary`); NaN when none has one.
    latency_samples : int
        How many samples carried a latency.
    tokens_input, tokens_output : int or None
        Token totals over the samples that reported them (None when none did).
    tokens_samples : int
        How many samples reported tokens.
    cases_measured : int
        Cases with at least one measured sample: the cases the rates speak of.
    """

    variant: str
    passes: int
    measured: int
    completed: int
    incomplete: int
    unmeasured: int
    missing: int
    per_trial: Interval
    clustered: ClusteredInterval
    axes: dict[str, AxisCount]
    checks: dict[str, AxisCount]
    latency_median: float
    latency_p95: float
    latency_samples: int
    tokens_input: int | None
    tokens_output: int | None
    tokens_samples: int
    cases_measured: int = 0

    @property
    def design_effect(self) -> float:
        return float(self.clustered.design_effect)

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {
            "variant": self.variant,
            "passes": self.passes,
            "measured": self.measured,
            "cases_measured": self.cases_measured,
            "completed": self.completed,
            "incomplete": self.incomplete,
            "unmeasured": self.unmeasured,
            "missing": self.missing,
            "per_trial": self.per_trial.to_dict(),
            "clustered": self.clustered.to_dict(),
            "design_effect": num(self.design_effect),
            "axes": {k: v.to_dict() for k, v in self.axes.items()},
            "checks": {k: v.to_dict() for k, v in self.checks.items()},
            "latency_s": {
                "median": num(self.latency_median),
                "p95": num(self.latency_p95),
                "samples": self.latency_samples,
            },
            "tokens": {
                "input": self.tokens_input,
                "output": self.tokens_output,
                "samples": self.tokens_samples,
            },
        }


@dataclass(frozen=True)
class ReviewedSummary:
    """A person's verdicts on one variant's samples (from ``evalstats review``).

    ``interval`` is the Wilson interval of ``passed / (passed + failed)``: the
    reviewed task-success rate. Samples marked ``needs_review`` are in no
    denominator and counted apart, as are measured samples with no review
    (``not_reviewed``); a rate over the reviewed samples speaks for all of them
    only if the reviewed ones were not picked for how they looked.
    """

    variant: str
    passed: int
    failed: int
    needs_review: int
    not_reviewed: int
    interval: Interval

    @property
    def decided(self) -> int:
        """Reviews that said pass or fail: the rate's denominator."""
        return self.passed + self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "passed": self.passed,
            "failed": self.failed,
            "decided": self.decided,
            "needs_review": self.needs_review,
            "not_reviewed": self.not_reviewed,
            "interval": self.interval.to_dict(),
        }


@dataclass(frozen=True)
class ContainmentSummary:
    """Containment observations of one variant's samples, as counts of samples.

    Read from each sample's workspace observations (see
    :func:`evalstats.running._workspace.observe`): ``observed`` samples carried them;
    of those, ``marker_seen`` showed the private marker in a tool result, the
    answer or captured output; ``fixtures_changed`` and ``private_changed``
    had a fixture or a private file altered; ``files_added`` had any file
    added; ``unchanged`` had none of these three. They cannot show a read
    whose content never surfaced.
    """

    variant: str
    observed: int
    unchanged: int
    marker_seen: int
    fixtures_changed: int
    private_changed: int
    files_added: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "observed": self.observed,
            "marker_seen": self.marker_seen,
            "fixtures_changed": self.fixtures_changed,
            "private_changed": self.private_changed,
            "files_added": self.files_added,
            "workspace_unchanged": self.unchanged,
        }


@dataclass(frozen=True)
class TagSummary:
    """One variant's pass rate over the cases that carry one tag.

    ``cases`` counts the tagged cases with measured samples; ``per_trial`` is
    the Wilson interval of ``passes / measured`` (about these cases) and
    ``clustered`` the case-clustered interval (about cases like these with
    this tag), as for a variant over all cases. A case with several tags is
    in each tag's rate.
    """

    tag: str
    variant: str
    cases: int
    passes: int
    measured: int
    per_trial: Interval
    clustered: ClusteredInterval

    def to_dict(self) -> dict[str, Any]:
        return {
            "tag": self.tag,
            "variant": self.variant,
            "cases": self.cases,
            "passes": self.passes,
            "measured": self.measured,
            "per_trial": self.per_trial.to_dict(),
            "clustered": self.clustered.to_dict(),
        }


@dataclass(frozen=True)
class Report:
    """What a results file shows, with the right denominators.

    ``str()`` is a plain-text table, ``to_dict()`` a JSON-ready dict; neither
    contains any answer text. Build one with :func:`report`.
    """

    path: str | None
    suite: dict[str, Any]
    level: float
    status: str | None
    variants: tuple[VariantSummary, ...]
    cases: tuple[CaseVariantRow, ...]
    case_ids: tuple[str, ...]
    runs: int | None
    warnings: tuple[str, ...] = ()
    reviewed: tuple[ReviewedSummary, ...] = ()
    corrected: Any = None
    containment: tuple[ContainmentSummary, ...] = ()
    ranking: str = ""
    cost: Any = None
    tags: tuple[TagSummary, ...] = ()
    #: Mean scores per variant, when samples carry scores (graded checks).
    scores: tuple[ScoreSummary, ...] = ()
    #: A sequential run's rounds and the wall time of each (``run --until-decided``).
    rounds: tuple[RoundTime, ...] = ()

    def variant(self, name: str) -> VariantSummary:
        """The summary of variant ``name``."""
        for v in self.variants:
            if v.variant == name:
                return v
        names = [v.variant for v in self.variants]
        _check_variant(name, names)
        raise AssertionError  # pragma: no cover

    def rows(self, variant: str) -> tuple[CaseVariantRow, ...]:
        """The per-case rows of one variant, in case order."""
        return tuple(r for r in self.cases if r.variant == variant)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "suite": self.suite,
            "level": self.level,
            "status": self.status,
            "runs": self.runs,
            "warnings": list(self.warnings),
            "variants": [v.to_dict() for v in self.variants],
            "cases": [r.to_dict() for r in self.cases],
            "reviewed": [r.to_dict() for r in self.reviewed],
            "corrected": None if self.corrected is None else self.corrected.to_dict(),
            "containment": [c.to_dict() for c in self.containment],
            "ranking": self.ranking,
            "tags": [t.to_dict() for t in self.tags],
            **({"cost": self.cost.to_dict()} if self.priced else {}),
            **({"scores": [s.to_dict() for s in self.scores]} if self.scores else {}),
            **({"rounds": [r.to_dict() for r in self.rounds]} if self.rounds else {}),
        }

    @property
    def priced(self) -> bool:
        """Whether the report has a cost: some variant has a price, or prices were
        given (that then say which models they name)."""
        return self.cost is not None and bool(self.cost.known or self.cost.listed)

    def __str__(self) -> str:
        level = f"{100 * self.level:g}%"
        lines = self._head_lines()
        for v in self.variants:
            lines += self._variant_lines(v, level)
        lines += score_lines(self.scores, self.level)
        vwidth = max([display_width(v.variant) for v in self.variants] + [7])
        lines += self._case_lines(level, vwidth)
        lines += self._check_lines(level, vwidth)
        lines += self._review_and_other_lines(level, vwidth)
        lines += round_lines(self.rounds)
        return lines_text(lines)  # a name holding a newline cannot forge a line

    def _head_lines(self) -> list[str]:
        """The suite, the run's status, its warnings and the ranking."""
        name = self.suite.get("name") or "suite"
        version = self.suite.get("version")
        head = f"{name}" + (f" (version {version})" if version is not None else "")
        lines = [
            f"{head}: {len(self.case_ids)} cases, {self.runs if self.runs is not None else '?'} "
            f"runs each, variants {', '.join(v.variant for v in self.variants) or 'none'}",
            f"run {self.status}" if self.status else "run did not finish (no summary)",
        ]
        lines += [f"warning: {w}" for w in self.warnings]
        if self.ranking:
            lines += self.ranking.split("\n")
        return lines

    def _variant_lines(self, v: VariantSummary, level: str) -> list[str]:
        """One variant's pass rates (these cases, cases like these) and sample counts."""
        lines: list[str] = []
        lines.append("")
        lines.append(f"variant {v.variant}: {v.passes} of {v.measured} measured samples passed")
        lines.append(
            f"  these cases       {v.per_trial}  per-trial Wilson interval ({level}): how "
            f"often these {v.cases_measured} case{'s' if v.cases_measured != 1 else ''} "
            "would pass if run again"
        )
        # Every case has the same pass rate: clustered_mean_ci makes the standard
        # error exactly 0 (and the design effect 0), which says nothing about
        # cases like these; its interval is then the distribution-free one.
        flat = v.clustered.clusters >= 2 and v.clustered.se == 0.0
        deff = "n/a" if flat or math.isnan(v.design_effect) else f"{v.design_effect:.2f}"
        lines.append(
            f"  cases like these  {v.clustered}  case-clustered interval ({level}, "
            f"{v.clustered.clusters} cases, design effect {deff}): how often cases "
            "like these would pass"
        )
        if v.clustered.clusters < 2:
            lines.append(f"    note: {v.clustered.note}")
        elif flat:
            lines.append(
                f"    note: every case passed the same share of its runs, so the "
                f"case-clustered standard error is 0 and says nothing about cases not "
                f"run ({v.clustered.clusters} cases); the interval is the "
                f"distribution-free betting interval"
            )
        lines.append(
            f"  samples: {v.completed} completed, {v.incomplete} incomplete (counted as "
            f"failures), {v.unmeasured} unmeasured (left out of the rates)"
            + (f", {v.missing} scheduled but not run" if v.missing else "")
        )
        if v.latency_samples:
            lines.append(
                f"  latency: median {_seconds(v.latency_median)}, 95th percentile "
                f"{_seconds(v.latency_p95)} over {v.latency_samples} samples (all "
                "statuses)"
            )
        if v.tokens_samples:
            lines.append(
                f"  tokens: {_maybe(v.tokens_input)} in, {_maybe(v.tokens_output)} out "
                f"over {v.tokens_samples} samples"
            )
        return lines

    def _case_lines(self, level: str, vwidth: int) -> list[str]:
        """The per-case table."""
        lines: list[str] = []
        lines.append("")
        lines.append(f"per case (passes of measured samples, Wilson {level} interval)")
        width = max([display_width(c) for c in self.case_ids] + [4])
        lines.append(
            f"  {'case':<{width}}  {'variant':<{vwidth}}  {'passes':>7}  {'rate':<22}"
            f"  {'unmeas.':>7}  {'incompl.':>8}  most failed checks"
        )
        for row in self.cases:
            problems = ", ".join(
                f"{n} ×{k}" + (f" ({ni} not inspected)" if ni else "") for n, k, ni in row.problems
            )
            lines.append(
                f"  {align_left(row.case, width)}  {align_left(row.variant, vwidth)}  "
                f"{f'{row.passes}/{row.measured}':>7}  {str(row.interval):<22}  "
                f"{row.unmeasured:>7}  {row.incomplete:>8}  {problems or '-'}"
            )
        return lines

    def _check_lines(self, level: str, vwidth: int) -> list[str]:
        """Per axis, per check and per tag."""
        lines: list[str] = []
        if any(v.axes for v in self.variants):
            lines.append("")
            lines.append(
                "per axis (passed of scored verdicts; unscored verdicts and failures with "
                "nothing to inspect apart)"
            )
            for v in self.variants:
                for axis, c in v.axes.items():
                    variant, named = align_left(v.variant, vwidth), align_left(axis, 12)
                    lines.append(f"  {variant}  {named}  {_axis_text(c)}")
        lines.append("")
        lines.append("per check")
        for v in self.variants:
            for check, c in v.checks.items():
                lines.append(f"  {align_left(v.variant, vwidth)}  {check}: {_axis_text(c)}")
        if self.tags:
            lines.append("")
            lines.append(
                f"per tag (passes of measured samples; Wilson {level} interval about these "
                f"cases, case-clustered {level} interval about cases like these)"
            )
            twidth = max(display_width(t.tag) for t in self.tags)
            for t in self.tags:
                lines.append(
                    f"  {align_left(t.tag, twidth)}  {align_left(t.variant, vwidth)}  "
                    f"{f'{t.passes}/{t.measured}':>7}  {str(t.per_trial):<22}  cases like these "
                    f"{t.clustered}  ({t.cases} case{'s' if t.cases != 1 else ''})"
                )
        return lines

    def _review_and_other_lines(self, level: str, vwidth: int) -> list[str]:
        """Reviewed and corrected rates, containment and cost, where the run has them."""
        lines: list[str] = []
        if self.reviewed:
            lines.append("")
            lines.append(
                f"reviewed task success (passes of pass and fail reviews, Wilson {level} "
                "interval; needs-review and unreviewed samples apart)"
            )
            for r in self.reviewed:
                lines.append(
                    f"  {align_left(r.variant, vwidth)}  {f'{r.passed}/{r.decided}':>7}  "
                    f"{str(r.interval):<22}  {r.needs_review} needs review, "
                    f"{r.not_reviewed} not reviewed"
                )
        if self.corrected is not None:
            lines.append("")
            lines.extend(self.corrected.lines(level))
        if self.containment:
            lines.append("")
            lines.append(
                "containment (samples with workspace observations; a read whose content "
                "never surfaced is not seen)"
            )
            for w in self.containment:
                lines.append(
                    f"  {align_left(w.variant, vwidth)}  {w.unchanged}/{w.observed} workspaces "
                    f"unchanged; marker seen in {w.marker_seen}; fixtures changed in "
                    f"{w.fixtures_changed}; private files changed in {w.private_changed}; "
                    f"files added in {w.files_added}"
                )
        if self.priced:
            lines.append("")
            lines.extend(self.cost.lines())
        return lines

    def _repr_html_(self) -> str:
        """A notebook's display: the text ``print`` gives, its first line as the headline."""
        from .._repr import result_html

        head, _, rest = str(self).partition("\n")
        return result_html(rest, headline=head)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain display: the text ``print`` gives."""
        from .._repr import pretty

        pretty(self, p, cycle)


def _seconds(x: float) -> str:
    """A duration with a unit that suits it: 1.23 s, 45.6 ms, 19 µs."""
    if x >= 1.0:
        return f"{x:.3g} s"
    if x >= 1e-3:
        return f"{1e3 * x:.3g} ms"
    return f"{1e6 * x:.3g} µs"


def _maybe(x: int | None) -> str:
    return "?" if x is None else f"{x:,}"


def _axis_text(c: AxisCount) -> str:
    rate = "n/a" if not c.scored else f"{100 * c.rate:.0f}%"
    text = f"{c.passed}/{c.scored} passed ({rate}); {c.unscored} unscored"
    if c.not_inspected:
        text += f"; {c.not_inspected} of the {c.failed} failures had nothing to inspect"
    return text


def _count_verdicts(table: dict[str, list[int]], key: str, kind: str, n: int) -> None:
    """Add ``n`` verdicts of one kind to ``table[key]`` = [passed, scored, unscored, n.i.]."""
    t = table.get(key)
    if t is None:
        t = table[key] = [0, 0, 0, 0]
    if kind == "unscored":
        t[2] += n
        return
    t[1] += n
    if kind == "passed":
        t[0] += n
    elif kind == "not_inspected":
        t[3] += n


@refuses_scope
def report(
    results: Any,
    *,
    level: float = 0.95,
    reviews: Any = None,
    about: str | None = None,
    prices: Any = None,
) -> Report:
    """Summarise a results file with the right denominators.

    Parameters
    ----------
    results : RunSource, Results or path
        A run opened once per command (:class:`~evalstats.reading._source.RunSource`:
        the report of the same options is then made once), what
        :func:`evalstats.results._file.read_results` returned, or the path of a
        results file.
    level : float
        Confidence level of every interval.
    reviews : path or iterable of Review, optional
        A person's verdicts (a reviews file written by
        :func:`evalstats.review`, or its :class:`~evalstats.presenting._review.Review`
        objects): adds the reviewed task-success rate per variant, with a
        Wilson interval over the pass and fail reviews of measured samples;
        needs-review verdicts and unreviewed samples are counted apart. A
        review of a sample the results lack is refused (the reviews of
        another run); one of an unmeasured sample is left out, with a warning.
        A reviews file drawn at random (``evalstats review --sample``) also
        gives the pass rates corrected by the review (PPI++, see
        :mod:`evalstats.presenting._review_design`): it must be of this run, and each
        variant needs at least 10 drawn samples reviewed pass or fail.
    about : {"these_cases", "cases_like_these"}, optional
        The claim of the ranking of three or more variants
        (:func:`~evalstats.deciding._several.compare_variants`, all pairs,
        Holm-adjusted): as there, about these cases (the paired score test)
        by default, about cases like these (each pair's clustered test) when
        the suite declares its cases sampled at random and the run paired
        the variants over at least 5 cases; the ranking by the other claim
        is on the next line. The pass rates are given both ways whatever the
        claim.
    prices : mapping or path, optional
        Model name to :class:`~evalstats.planning._cost.Prices` in dollars per million
        tokens, or a prices file (:func:`~evalstats.planning._cost.load_prices`). With
        it, or when a variant carries prices of its own in the manifest, the
        report has a ``cost`` (:class:`~evalstats.planning._cost.CostSummary`): per
        variant the total, per sample and per measured sample (in a run with
        judged checks, also the judge calls that scored its answers and its
        whole), and the run's total, from the token counts the samples and
        verdicts report (a call without them is counted apart, never priced
        at $0).

    Returns
    -------
    Report
        Per case and variant: passes of measured samples with a Wilson
        interval, unmeasured and incomplete counts and the checks that failed
        most often. Per variant: the overall rate with the per-trial Wilson
        interval (about these cases) and the case-clustered interval of
        :func:`~evalstats.stats._intervals.clustered_mean_ci` (about cases like these)
        with its design effect; verdict counts per axis and per check; sample
        counts by status; latency median and 95th percentile over all samples;
        token totals. Per variant, when samples carry workspace observations
        (``cmd:`` tasks), containment counts; with ``reviews``, the reviewed
        task-success rates. For a run made with ``run --until-decided`` whose
        looks record their times, its rounds and the wall time of each
        (:mod:`evalstats.presenting._rounds`).

    Notes
    -----
    The counting rule is :func:`evalstats.results._file.sample_passed`. Unmeasured
    samples are in no pass rate, in no axis or check count, but in the
    status counts and the latency figures. Incomplete samples are failures.
    Verdicts of checks are counted per check name and per axis with
    ``unscored`` ones apart; failures with nothing to inspect (marked
    ``not_inspected``, or in older files whose reason starts with ``could not
    be inspected``) are counted in ``not_inspected`` (and among the failures).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.

    Examples
    --------
    >>> from evalstats.results._file import Results
    >>> def sample(case, repeat, ok):
    ...     check = {"check": "c", "axis": None, "status": "passed" if ok else "failed",
    ...              "reason": "" if ok else "missing"}
    ...     return {"type": "sample", "case": case, "variant": "v", "repeat": repeat,
    ...             "status": "completed", "checks": [check], "latency_s": 0.1}
    >>> manifest = {"suite": {"name": "toy"}, "cases": [{"id": "x"}, {"id": "y"}],
    ...             "variants": [{"name": "v"}], "runs": 2}
    >>> samples = (sample("x", 0, True), sample("x", 1, True), sample("y", 0, True),
    ...            sample("y", 1, False))
    >>> r = report(Results(None, manifest, samples, None, ()))
    >>> v = r.variant("v")
    >>> v.passes, v.measured, str(v.per_trial)
    (3, 4, '75% (30% to 95%)')
    >>> r.rows("v")[1].problems
    (('c', 1, 0),)
    """
    level = check_level(level)
    about = check_about(about)
    source = RunSource.of(results)
    key = _options_key(level, about, reviews, prices)
    if key is None:  # reviews or prices given as objects
        return _report(source, level, reviews, about, prices)
    return source.once(key, lambda: _report(source, level, reviews, about, prices))


def _options_key(
    level: float, about: str | None, reviews: Any, prices: Any
) -> tuple[Any, ...] | None:
    """What tells one report of a run from another, or None when an option is an
    object (not a file) that cannot say it."""
    files = []
    for option in (reviews, prices):
        if option is not None and not isinstance(option, str | os.PathLike):
            return None
        files.append(None if option is None else os.fspath(option))
    return ("report", level, about, *files)


def _report(
    source: RunSource, level: float, reviews: Any, about: str | None, prices: Any
) -> Report:
    res = source.tally()
    variants = _variant_names(res)
    case_ids = _case_ids(res)
    summaries, rows = _variant_tables(res, variants, case_ids, level)
    warnings = list(res.warnings) + _judge_warnings(res, variants)
    reviewed, corrected = _review_views(source, res, variants, reviews, level, warnings)
    cost = _cost(source, res, prices)
    suite = res.manifest.get("suite") or {}
    runs = res.manifest.get("runs")
    return Report(
        path=res.path,
        suite={k: suite.get(k) for k in ("name", "version", "path", "sha256")},
        level=level,
        status=None if res.summary is None else res.summary.get("status"),
        variants=tuple(summaries),
        cases=tuple(rows),
        case_ids=tuple(case_ids),
        runs=runs if isinstance(runs, int) else None,
        warnings=tuple(warnings),
        reviewed=reviewed,
        corrected=corrected,
        containment=_containment(res, variants),
        ranking=_ranking(res, variants, level, about),
        cost=cost,
        tags=_tags(res, variants, case_ids, level),
        scores=score_summaries(res, variants, level),
        rounds=round_times(res.looks),
    )


def _variant_tables(
    res: Tally, variants: Sequence[str], case_ids: Sequence[str], level: float
) -> tuple[list[VariantSummary], list[CaseVariantRow]]:
    """Each variant's summary, and its rows per case, in the run's order."""
    summaries = []
    rows: list[CaseVariantRow] = []
    for v in variants:
        counts = res.counts(v)
        tables = _VerdictTables(counts)
        summaries.append(
            _variant_summary(res, v, counts, tables, res.scheduled(v), case_ids, level)
        )
        rows += _case_rows(v, counts, tables, case_ids, level)
    return summaries, rows


def _judge_warnings(res: Tally, variants: Sequence[str]) -> list[str]:
    """One warning per variant whose judge left check verdicts unmeasured."""
    warnings = []
    judge_unmeasured = {v: res.counts(v).judge_unmeasured for v in variants}
    for v, n in judge_unmeasured.items():
        if not n:
            continue
        warnings.append(
            f"variant {v}: {n} judged check verdict(s) unmeasured: the judge gave no verdict "
            "after retries (neither passed nor failed, left out of those checks' denominators)"
        )
    return warnings


def _review_views(
    source: RunSource,
    res: Tally,
    variants: Sequence[str],
    reviews: Any,
    level: float,
    warnings: list[str],
) -> tuple[tuple[ReviewedSummary, ...], Any]:
    """The reviewed task-success rates and, for a reviews file drawn at random, the
    review-corrected pass rates (None otherwise); warnings about the reviews are appended."""
    reviewed: tuple[ReviewedSummary, ...] = ()
    corrected = None
    if reviews is not None:
        design = None
        if isinstance(reviews, str | os.PathLike):
            from ._review import read_review_design, read_reviews_noted

            where = os.fspath(reviews)
            _regular_reviews(where)
            path, (reviews, cut) = reviews, read_reviews_noted(reviews)
            if cut is not None:
                warnings.append(cut)
            design = read_review_design(path)
        reviewed = _reviewed(res, variants, reviews, level, warnings)
        if design is not None:
            from ._review_design import TooFewReviewed, corrected_rates

            # the corrected rates weigh each sample: they need the records
            records = source.results(need="the review-corrected rates need each sample")
            try:
                corrected = corrected_rates(records, design, reviews, level=level, where=where)
            except TooFewReviewed as few:  # a review under way: the rest of the report holds
                warnings.append(f"{where}: no review-corrected rates yet: {few}; {few.advice}")
    return reviewed, corrected


def _cost(source: RunSource, res: Tally, prices: Any) -> Any:
    """The run's cost summary when prices are given or the manifest carries some, else None
    (of the run's part the source reads: its judge's calls are counted from its records)."""
    listed = res.manifest.get("variants")
    if prices is None and not any(
        isinstance(v, Mapping) and isinstance(v.get("prices"), Mapping) for v in listed or ()
    ):
        return None  # no variant carries prices (has_prices would say so), cost not imported
    from ..planning._cost import cost_summary, has_prices

    if prices is not None or has_prices(res.manifest):
        return cost_summary(source, prices=prices)
    return None


def _ranking(res: Tally, variants: Sequence[str], level: float, about: str | None) -> str:
    """With three or more variants: one line ranking them, all pairs adjusted."""
    if len(variants) < 3:
        return ""
    from ..deciding._several import compare_variants

    try:
        found = compare_variants(res, all_pairs=True, level=level, about=about)
    except InvalidArgument as e:  # a pair with nothing measured
        return f"no ranking: {e}"
    return f"{found.ranking()}\nbeside: {found.beside}"


class _VerdictTables:
    """One variant's verdicts summed per check, per axis and per (case, check)."""

    def __init__(self, counts: Any) -> None:
        # [passed, scored, unscored, not inspected] per check and per axis;
        # [failed, of which not inspected] per case and check
        self.checks: dict[str, list[int]] = {}
        self.axes: dict[str, list[int]] = {}
        self.problems: dict[str, dict[str, list[int]]] = {}
        for (case, check, axis, kind), n in counts.verdicts.items():
            name = str(check)
            _count_verdicts(self.checks, name, kind, n)
            if axis is not None:
                _count_verdicts(self.axes, str(axis), kind, n)
            if kind in ("failed", "not_inspected"):
                p = self.problems.setdefault(case, {}).setdefault(name, [0, 0])
                p[0] += n
                p[1] += n if kind == "not_inspected" else 0

    def top_problems(self, case: str) -> tuple[tuple[str, int, int], ...]:
        """The checks that failed most often on ``case``, most common first."""
        found = ((name, p[0], p[1]) for name, p in self.problems.get(case, {}).items())
        return tuple(sorted(found, key=lambda x: -x[1])[:TOP_PROBLEMS])


def _variant_summary(
    res: Tally,
    variant: str,
    counts: Any,
    tables: _VerdictTables,
    scheduled: int,
    case_ids: Sequence[str],
    level: float,
) -> VariantSummary:
    """One variant over all cases, from its counts."""
    rates = variant_rates(res, variant, level, case_ids)
    median, p95 = _latency_quantiles(counts.latencies)
    recorded = counts.completed + counts.incomplete + counts.unmeasured
    return VariantSummary(
        variant=variant,
        passes=rates.passes,
        measured=rates.measured,
        completed=counts.completed,
        incomplete=counts.incomplete,
        unmeasured=counts.unmeasured,
        missing=max(scheduled - recorded, 0),
        per_trial=rates.per_trial,
        clustered=rates.clustered,
        axes={k: AxisCount(*x) for k, x in tables.axes.items()},
        checks={k: AxisCount(*x) for k, x in tables.checks.items()},
        latency_median=median,
        latency_p95=p95,
        latency_samples=len(counts.latencies),
        tokens_input=counts.tok_in,
        tokens_output=counts.tok_out,
        tokens_samples=counts.tok_n,
        cases_measured=rates.cases_measured,
    )


def _case_rows(
    variant: str,
    counts: Any,
    tables: _VerdictTables,
    case_ids: Sequence[str],
    level: float,
) -> list[CaseVariantRow]:
    """One row per case of one variant, in case order."""
    cells = counts.cells
    found = [cells.get(case) for case in case_ids]
    tallied = [
        (0, 0, 0, 0)
        if cell is None
        else (cell.passes, cell.measured, cell.incomplete, cell.unmeasured)
        for cell in found
    ]
    intervals = wilson_cis([t[0] for t in tallied], [t[1] for t in tallied], level)
    return [
        CaseVariantRow(
            case=case,
            variant=variant,
            passes=passes,
            measured=measured,
            incomplete=incomplete,
            unmeasured=unmeasured,
            interval=interval,
            problems=tables.top_problems(case),
        )
        for case, (passes, measured, incomplete, unmeasured), interval in zip(
            case_ids, tallied, intervals, strict=True
        )
    ]


def _regular_reviews(shown: str) -> None:
    """Refuse a reviews file that is not a regular file (a FIFO, a device), or one
    larger than a file read whole may be, before it is opened; a missing file or
    a folder is left to the reader's own words."""
    from .._files import INPUT_LIMIT, check_input

    try:
        check_input(shown, what="a reviews file", error=ResultsFileError)
        size = os.stat(shown).st_size
    except OSError:
        return
    if size > INPUT_LIMIT:
        raise ResultsFileError(
            f"{shown}: holds {size} bytes; a reviews file is read whole, at most {INPUT_LIMIT}"
        )


def _reviewed(
    res: Tally, variants: Sequence[str], reviews: Any, level: float, warnings: list[str]
) -> tuple[ReviewedSummary, ...]:
    """Reviewed task-success counts per variant (see :func:`report`); a reviews file
    is read by :func:`_review_views`, so ``reviews`` is a sequence here."""
    from ._review import Review

    if isinstance(reviews, Review) or not isinstance(reviews, Iterable):
        raise InvalidArgument(
            f"reviews={reviews!r} must be the path of a reviews file or a list of Review"
        )
    counts = {v: {"pass": 0, "fail": 0, "needs-review": 0} for v in variants}
    reviewed_keys: set[tuple[Any, Any, Any]] = set()
    unmeasured = 0
    for r in reviews:
        if not isinstance(r, Review):
            raise InvalidArgument(f"reviews: {r!r} is not a Review")
        status = res.status(r.case, r.variant, r.repeat)
        if status is None:
            raise InvalidArgument(
                f"reviews: case {r.case!r}, variant {r.variant!r}, repeat {r.repeat} is not "
                "a sample of these results: are these the reviews of another run?"
            )
        if r.key in reviewed_keys:
            raise InvalidArgument(
                f"reviews: case {r.case!r}, variant {r.variant!r}, repeat {r.repeat} is "
                "reviewed twice; keep one review"
            )
        reviewed_keys.add(r.key)
        if status == "unmeasured":
            unmeasured += 1
            continue
        counts[r.variant][r.verdict] += 1
    if unmeasured:
        warnings.append(
            f"{unmeasured} review(s) of unmeasured samples left out: those samples are in no rate"
        )
    out = []
    for v in variants:
        c = counts[v]
        measured = sum(cell.measured for cell in res.counts(v).cells.values())
        out.append(
            ReviewedSummary(
                variant=v,
                passed=c["pass"],
                failed=c["fail"],
                needs_review=c["needs-review"],
                not_reviewed=measured - c["pass"] - c["fail"] - c["needs-review"],
                interval=wilson_ci(c["pass"], c["pass"] + c["fail"], level),
            )
        )
    return tuple(out)


def _containment(res: Tally, variants: Sequence[str]) -> tuple[ContainmentSummary, ...]:
    """Containment counts per variant, or () when no sample carries observations."""
    if not res.observed:
        return ()  # the common case (no tool traces), kept cheap
    return tuple(ContainmentSummary(v, *res.counts(v).containment) for v in variants)


def _tags(
    res: Tally, variants: Sequence[str], case_ids: Sequence[str], level: float
) -> tuple[TagSummary, ...]:
    """Per tag (in the order the cases first carry them) and variant, the pass rate over
    the tagged cases, clustered by case; () when no case carries a tag."""
    known = set(case_ids)
    tagged: dict[str, dict[str, None]] = {}  # tag -> its cases, in order, each once
    for case in res.manifest.get("cases") or ():
        if not isinstance(case, dict) or case.get("id") not in known:
            continue
        tags = case.get("tags")
        for tag in tags if isinstance(tags, list) else ():
            if isinstance(tag, str):
                tagged.setdefault(tag, {})[case["id"]] = None
    out = []
    for tag, ids in tagged.items():
        for v in variants:
            cells = [c for c in (res.counts(v).cells.get(i) for i in ids) if c is not None]
            passes = [c.passes for c in cells]
            measured = [c.measured for c in cells]
            out.append(
                TagSummary(
                    tag=tag,
                    variant=v,
                    cases=sum(1 for m in measured if m),
                    passes=sum(passes),
                    measured=sum(measured),
                    per_trial=wilson_ci(sum(passes), sum(measured), level),
                    clustered=clustered_counts(passes, measured, level),
                )
            )
    return tuple(out)
