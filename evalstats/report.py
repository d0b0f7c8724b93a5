"""Reading a results file: reports, comparisons, comparable runs, gates.

- :func:`report`: per case and variant the passes and their interval, per
  variant the overall rate with two intervals (about these cases, and about
  cases like these), per-axis and per-check denominators, sample status
  counts, latency and tokens. Never the raw answers.
- :func:`compare_results`: two variants of one run, paired by (case, repeat)
  when the schedule paired them.
- :func:`compare_runs`: the same variant in an older and a newer run, only when
  the two runs are comparable.
- :func:`gate`: a pass/fail policy for CI.
- :func:`changed_since`: whether git shows a change under some paths since a
  ref, so a paid eval runs only when what it measures changed.

The counting rules are those of the results format
(:func:`evalstats.results.sample_passed`): an ``unmeasured`` sample leaves
every pass rate and is counted apart; an ``incomplete`` one stays in the
denominator as a failure; an ``unscored`` check leaves its own check's and
axis' denominator and is counted apart; a failure whose reason starts with
``could not be inspected`` is a failure, counted apart from real misses.
"""

from __future__ import annotations

import math
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ._validate import as_rate, check_level, check_method, suggest
from .checks import INSPECTION_FAILURE
from .compare import PAIRED_METHODS, UNPAIRED_METHODS, Comparison, compare, compare_counts
from .errors import InvalidArgument
from .intervals import ClusteredInterval, Interval, _pct, clustered_mean_ci, proportion_ci
from .results import Results, read_results, sample_passed
from .runner import AxisCount

__all__ = [
    "AxisCount",
    "CaseVariantRow",
    "ContainmentSummary",
    "GateResult",
    "NotComparable",
    "Report",
    "ResultsComparison",
    "ReviewedSummary",
    "RunsComparison",
    "VariantSummary",
    "changed_since",
    "compare_results",
    "compare_runs",
    "gate",
    "latency_summary",
    "report",
]

#: How many problems (failing checks) a case row keeps, most common first.
TOP_PROBLEMS = 3


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
    :func:`evalstats.workspace.observe`): ``observed`` samples carried them;
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
    containment: tuple[ContainmentSummary, ...] = ()

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
            "containment": [c.to_dict() for c in self.containment],
        }

    def __str__(self) -> str:
        level = f"{100 * self.level:g}%"
        name = self.suite.get("name") or "suite"
        version = self.suite.get("version")
        head = f"{name}" + (f" (version {version})" if version is not None else "")
        lines = [
            f"{head}: {len(self.case_ids)} cases, {self.runs if self.runs is not None else '?'} "
            f"runs each, variants {', '.join(v.variant for v in self.variants) or 'none'}",
            f"run {self.status}" if self.status else "run did not finish (no summary)",
        ]
        lines += [f"warning: {w}" for w in self.warnings]
        for v in self.variants:
            lines.append("")
            lines.append(f"variant {v.variant}: {v.passes} of {v.measured} measured samples passed")
            lines.append(
                f"  these cases       {v.per_trial}  per-trial Wilson interval ({level}): how "
                f"often these {len(self.case_ids)} cases would pass if run again"
            )
            # Every case has the same pass rate: clustered_mean_ci makes the standard
            # error exactly 0, an interval of no width and a design effect of 0, and
            # neither says anything about cases like these.
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
                    f"case-clustered standard error is 0 and the interval has no width: it "
                    f"says nothing about cases not run ({v.clustered.clusters} cases)"
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
        lines.append("")
        lines.append(f"per case (passes of measured samples, Wilson {level} interval)")
        width = max([len(c) for c in self.case_ids] + [4])
        vwidth = max([len(v.variant) for v in self.variants] + [7])
        lines.append(
            f"  {'case':<{width}}  {'variant':<{vwidth}}  {'passes':>7}  {'rate':<22}"
            f"  {'unmeas.':>7}  {'incompl.':>8}  most failed checks"
        )
        for row in self.cases:
            problems = ", ".join(
                f"{n} ×{k}" + (f" ({ni} not inspected)" if ni else "") for n, k, ni in row.problems
            )
            lines.append(
                f"  {row.case:<{width}}  {row.variant:<{vwidth}}  "
                f"{f'{row.passes}/{row.measured}':>7}  {str(row.interval):<22}  "
                f"{row.unmeasured:>7}  {row.incomplete:>8}  {problems or '-'}"
            )
        if any(v.axes for v in self.variants):
            lines.append("")
            lines.append(
                "per axis (passed of scored verdicts; unscored verdicts and failures with "
                "nothing to inspect apart)"
            )
            for v in self.variants:
                for axis, c in v.axes.items():
                    lines.append(f"  {v.variant:<{vwidth}}  {axis:<12}  {_axis_text(c)}")
        lines.append("")
        lines.append("per check")
        for v in self.variants:
            for check, c in v.checks.items():
                lines.append(f"  {v.variant:<{vwidth}}  {check}: {_axis_text(c)}")
        if self.reviewed:
            lines.append("")
            lines.append(
                f"reviewed task success (passes of pass and fail reviews, Wilson {level} "
                "interval; needs-review and unreviewed samples apart)"
            )
            for r in self.reviewed:
                lines.append(
                    f"  {r.variant:<{vwidth}}  {f'{r.passed}/{r.decided}':>7}  "
                    f"{str(r.interval):<22}  {r.needs_review} needs review, "
                    f"{r.not_reviewed} not reviewed"
                )
        if self.containment:
            lines.append("")
            lines.append(
                "containment (samples with workspace observations; a read whose content "
                "never surfaced is not seen)"
            )
            for w in self.containment:
                lines.append(
                    f"  {w.variant:<{vwidth}}  {w.unchanged}/{w.observed} workspaces unchanged; "
                    f"marker seen in {w.marker_seen}; fixtures changed in "
                    f"{w.fixtures_changed}; private files changed in {w.private_changed}; "
                    f"files added in {w.files_added}"
                )
        return "\n".join(lines)


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


class _Tally:
    """Running counts for one variant (plain lists: fast on 100,000 samples)."""

    __slots__ = (
        "axes",
        "case_status",
        "checks",
        "codes",
        "latencies",
        "outcomes",
        "problems",
        "status",
        "tok_in",
        "tok_n",
        "tok_out",
        "verdicts",
    )

    def __init__(self) -> None:
        self.status = {"completed": 0, "incomplete": 0, "unmeasured": 0}
        self.outcomes: list[bool] = []
        self.codes: list[int] = []
        self.axes: dict[str, list[int]] = {}
        self.checks: dict[str, list[int]] = {}
        self.problems: dict[str, dict[str, list[int]]] = {}
        self.case_status: dict[str, list[int]] = {}  # passes, measured, incomplete, unmeasured
        self.latencies: list[float] = []
        self.tok_in: int | None = None
        self.tok_out: int | None = None
        self.tok_n = 0
        self.verdicts: dict[tuple[Any, Any, Any, str], int] = {}


_CHECK_KINDS = ("passed", "failed", "unscored")


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


def report(results: Any, *, level: float = 0.95, reviews: Any = None) -> Report:
    """Summarise a results file with the right denominators.

    Parameters
    ----------
    results : Results or path
        What :func:`evalstats.results.read_results` returned, or the path of a
        results file.
    level : float
        Confidence level of every interval.
    reviews : path or iterable of Review, optional
        A person's verdicts (a reviews file written by
        :func:`evalstats.review.review`, or its :class:`~evalstats.review.Review`
        objects): adds the reviewed task-success rate per variant, with a
        Wilson interval over the pass and fail reviews of measured samples;
        needs-review verdicts and unreviewed samples are counted apart. A
        review of a sample the results lack is refused (the reviews of
        another run); one of an unmeasured sample is left out, with a warning.

    Returns
    -------
    Report
        Per case and variant: passes of measured samples with a Wilson
        interval, unmeasured and incomplete counts and the checks that failed
        most often. Per variant: the overall rate with the per-trial Wilson
        interval (about these cases) and the case-clustered interval of
        :func:`~evalstats.intervals.clustered_mean_ci` (about cases like these)
        with its design effect; verdict counts per axis and per check; sample
        counts by status; latency median and 95th percentile over all samples;
        token totals. Per variant, when samples carry workspace observations
        (``cmd:`` tasks), containment counts; with ``reviews``, the reviewed
        task-success rates.

    Notes
    -----
    The counting rule is :func:`evalstats.results.sample_passed`. Unmeasured
    samples are in no pass rate, in no axis or check count, but in the
    status counts and the latency figures. Incomplete samples are failures.
    Verdicts of checks are counted per check name and per axis with
    ``unscored`` ones apart; failures whose reason starts with
    ``could not be inspected`` are counted in ``not_inspected`` (and among
    the failures).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22, 209-212.
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.

    Examples
    --------
    >>> from evalstats.results import Results
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
    res = _results(results)
    variants = _variant_names(res)
    case_ids = _case_ids(res)
    case_code = {c: i for i, c in enumerate(case_ids)}
    tallies = {v: _Tally() for v in variants}
    prefix = INSPECTION_FAILURE
    seen: set[tuple[Any, Any, Any]] = set()
    # One pass over the samples, as lean as it can be (a report of 100,000 samples must
    # take well under a second): each verdict is counted once under (case, check, axis,
    # kind) and the per-check, per-axis and per-case tables are summed up afterwards.
    for s in res.samples:
        get = s.get
        case: Any = get("case")
        variant: Any = get("variant")
        key = (case, variant, get("repeat"))
        if key in seen:
            # A second record for a slot (which a correct run never writes): the reader
            # has warned about it, and the first one is the one counted.
            continue
        seen.add(key)
        t = tallies[variant]
        status = get("status")
        if status not in t.status:
            raise InvalidArgument(
                f"sample of case {case!r}, variant {variant!r}: status={status!r} is not "
                f"a sample status{suggest(str(status), tuple(t.status))}"
            )
        t.status[status] += 1
        cs = t.case_status.get(case)
        if cs is None:
            cs = t.case_status[case] = [0, 0, 0, 0]
        latency = get("latency_s")
        if latency is not None and latency is not True and latency is not False:
            t.latencies.append(float(latency))
        tokens = get("tokens")
        if tokens:
            ti, to = tokens.get("input"), tokens.get("output")
            if ti is not None or to is not None:
                t.tok_n += 1
                if ti is not None:
                    t.tok_in = (t.tok_in or 0) + int(ti)
                if to is not None:
                    t.tok_out = (t.tok_out or 0) + int(to)
        if status == "unmeasured":
            cs[3] += 1
            continue
        scored = failed = False
        verdicts = t.verdicts
        for c in get("checks") or ():
            kind = c.get("status")
            if kind == "passed":
                scored = True
            elif kind == "failed":
                failed = True
                if str(c.get("reason") or "").startswith(prefix):
                    kind = "not_inspected"
            elif kind != "unscored":
                raise InvalidArgument(
                    f"sample of case {case!r}, variant {variant!r}: check status={kind!r} "
                    f"is not a check status{suggest(str(kind), _CHECK_KINDS)}"
                )
            k = (case, c.get("check"), c.get("axis"), kind)
            verdicts[k] = verdicts.get(k, 0) + 1
        # The counting rule of results.sample_passed (counting method "1"): an incomplete
        # sample fails; a completed one passes when some check was scored and none failed.
        passed = status == "completed" and scored and not failed
        cs[1] += 1
        if passed:
            cs[0] += 1
        elif status == "incomplete":
            cs[2] += 1
        t.outcomes.append(passed)
        t.codes.append(case_code[case])

    for t in tallies.values():
        for (case, check, axis, kind), n in t.verdicts.items():
            name = str(check)
            _count_verdicts(t.checks, name, kind, n)
            if axis is not None:
                _count_verdicts(t.axes, str(axis), kind, n)
            if kind in ("failed", "not_inspected"):
                p = t.problems.setdefault(case, {}).setdefault(name, [0, 0])
                p[0] += n
                p[1] += n if kind == "not_inspected" else 0

    scheduled: dict[str, int] = {}
    for slot in res.manifest.get("schedule", ()) or ():
        if isinstance(slot, list | tuple) and len(slot) >= 5:
            scheduled[slot[4]] = scheduled.get(slot[4], 0) + 1

    summaries = []
    rows = []
    for v in variants:
        t = tallies[v]
        passes = int(sum(t.outcomes))
        measured = len(t.outcomes)
        median, p95 = latency_summary(t.latencies)
        recorded = sum(t.status.values())
        summaries.append(
            VariantSummary(
                variant=v,
                passes=passes,
                measured=measured,
                completed=t.status["completed"],
                incomplete=t.status["incomplete"],
                unmeasured=t.status["unmeasured"],
                missing=max(scheduled.get(v, 0) - recorded, 0),
                per_trial=proportion_ci(passes, measured, level=level),
                clustered=clustered_mean_ci(
                    np.asarray(t.outcomes, dtype=float),
                    np.asarray(t.codes, dtype=np.int64),
                    level=level,
                ),
                axes={k: AxisCount(*x) for k, x in t.axes.items()},
                checks={k: AxisCount(*x) for k, x in t.checks.items()},
                latency_median=median,
                latency_p95=p95,
                latency_samples=len(t.latencies),
                tokens_input=t.tok_in,
                tokens_output=t.tok_out,
                tokens_samples=t.tok_n,
            )
        )
        for case in case_ids:
            cs = t.case_status.get(case, [0, 0, 0, 0])
            problems = sorted(
                ((name, p[0], p[1]) for name, p in t.problems.get(case, {}).items()),
                key=lambda x: -x[1],
            )[:TOP_PROBLEMS]
            rows.append(
                CaseVariantRow(
                    case=case,
                    variant=v,
                    passes=cs[0],
                    measured=cs[1],
                    incomplete=cs[2],
                    unmeasured=cs[3],
                    interval=proportion_ci(cs[0], cs[1], level=level),
                    problems=tuple(problems),
                )
            )
    suite = res.manifest.get("suite") or {}
    runs = res.manifest.get("runs")
    summary = res.summary
    warnings = list(res.warnings)
    reviewed: tuple[ReviewedSummary, ...] = ()
    if reviews is not None:
        reviewed = _reviewed(res, variants, reviews, level, warnings)
    return Report(
        path=None if res.path is None else str(res.path),
        suite={k: suite.get(k) for k in ("name", "version", "path", "sha256")},
        level=level,
        status=None if summary is None else summary.get("status"),
        variants=tuple(summaries),
        cases=tuple(rows),
        case_ids=tuple(case_ids),
        runs=runs if isinstance(runs, int) else None,
        warnings=tuple(warnings),
        reviewed=reviewed,
        containment=_containment(res, variants),
    )


def _first_records(res: Results) -> dict[tuple[Any, Any, Any], Mapping[str, Any]]:
    """The first record of each (case, variant, repeat) slot, as :func:`report` counts."""
    first: dict[tuple[Any, Any, Any], Mapping[str, Any]] = {}
    for s in res.samples:
        key = (s.get("case"), s.get("variant"), s.get("repeat"))
        if key not in first:
            first[key] = s
    return first


def _reviewed(
    res: Results, variants: Sequence[str], reviews: Any, level: float, warnings: list[str]
) -> tuple[ReviewedSummary, ...]:
    """Reviewed task-success counts per variant (see :func:`report`)."""
    from .review import Review, read_reviews

    if isinstance(reviews, str | os.PathLike):
        reviews = read_reviews(reviews)
    if isinstance(reviews, Review) or not isinstance(reviews, Iterable):
        raise InvalidArgument(
            f"reviews={reviews!r} must be the path of a reviews file or a list of Review"
        )
    first = _first_records(res)
    counts = {v: {"pass": 0, "fail": 0, "needs-review": 0} for v in variants}
    reviewed_keys: set[tuple[Any, Any, Any]] = set()
    unmeasured = 0
    for r in reviews:
        if not isinstance(r, Review):
            raise InvalidArgument(f"reviews: {r!r} is not a Review")
        sample = first.get(r.key)
        if sample is None:
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
        if sample.get("status") == "unmeasured":
            unmeasured += 1
            continue
        counts[r.variant][r.verdict] += 1
    if unmeasured:
        warnings.append(
            f"{unmeasured} review(s) of unmeasured samples left out: those samples are in no rate"
        )
    measured = dict.fromkeys(variants, 0)
    for key, sample in first.items():
        if sample.get("status") != "unmeasured" and key[1] in measured:
            measured[key[1]] += 1
    out = []
    for v in variants:
        c = counts[v]
        out.append(
            ReviewedSummary(
                variant=v,
                passed=c["pass"],
                failed=c["fail"],
                needs_review=c["needs-review"],
                not_reviewed=measured[v] - c["pass"] - c["fail"] - c["needs-review"],
                interval=proportion_ci(c["pass"], c["pass"] + c["fail"], level=level),
            )
        )
    return tuple(out)


def _containment(res: Results, variants: Sequence[str]) -> tuple[ContainmentSummary, ...]:
    """Containment counts per variant, or () when no sample carries observations."""
    from .review import workspace_observations

    samples = res.samples
    if not any(s.get("trace") is not None or "workspace" in s for s in samples):
        return ()  # the common case (no tool traces), kept cheap
    counts = {v: [0, 0, 0, 0, 0, 0] for v in variants}
    any_seen = False
    for sample in _first_records(res).values():
        variant = sample.get("variant")
        observed = workspace_observations(sample)
        if observed is None or variant not in counts:
            continue
        any_seen = True
        c = counts[variant]
        fixtures = observed.get("fixtures_unchanged") is False
        private = observed.get("private_unchanged") is False
        added = bool(observed.get("files_added"))
        c[0] += 1
        c[1] += not (fixtures or private or added)
        c[2] += bool(observed.get("marker_seen"))
        c[3] += fixtures
        c[4] += private
        c[5] += added
    if not any_seen:
        return ()
    return tuple(ContainmentSummary(v, *counts[v]) for v in variants)


# --- comparing two variants of one run ------------------------------------------------


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
        The verdict about these cases: the exact McNemar test on the pairs
        (paired), or Newcombe's interval on the measured samples (unpaired).
        None when there was nothing to compare (``reason`` says why).
    cases_like_these : Comparison or None
        The verdict about cases like these: the mean paired difference with a
        case-clustered interval. None when unpaired or with fewer than two
        cases with usable pairs (``reason`` says why).
    primary : Comparison or None
        The comparison by the method asked for (``these_cases`` by default).
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
        if self.reason:
            lines.append(self.reason)
        if self.these_cases is not None and self.these_cases.cases:
            rows = self.these_cases.cases
            width = max(len(r.case) for r in rows) if rows else 4
            lines.append("")
            lines.append(f"  {'case':<{width}}  {'A':>7}  {'B':>7}  B - A")
            for r in rows:
                flag = (
                    "  B clearly worse" if r.worse else ("  B clearly better" if r.better else "")
                )
                lines.append(
                    f"  {r.case:<{width}}  {f'{r.passes_a}/{r.trials_a}':>7}  "
                    f"{f'{r.passes_b}/{r.trials_b}':>7}  {r.difference}{flag}"
                )
        return "\n".join(lines)

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
            "pairs": self.pairs,
            "dropped_unmeasured": self.dropped_unmeasured,
            "dropped_missing": self.dropped_missing,
            "unmeasured_a": self.unmeasured_a,
            "unmeasured_b": self.unmeasured_b,
            "worse_cases": list(self.worse_cases),
            "reason": self.reason,
            "warnings": list(self.warnings),
        }


def _slots(res: Results) -> dict[str, set[tuple[str, int]]]:
    """The scheduled (case, repeat) slots of each variant."""
    out: dict[str, set[tuple[str, int]]] = {}
    for slot in res.manifest.get("schedule", ()) or ():
        if isinstance(slot, list | tuple) and len(slot) >= 5:
            out.setdefault(slot[4], set()).add((slot[0], int(slot[1])))
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


def compare_results(
    results: Any,
    a: str,
    b: str,
    *,
    method: str | None = None,
    level: float = 0.95,
) -> ResultsComparison:
    """Compare variant ``b`` with variant ``a`` of one results file.

    When the manifest's schedule ran both variants on the same (case, repeat)
    slots the outcomes are paired; a pair where either side is unmeasured (or
    has no record) is dropped from the paired analysis and counted. Two
    verdicts are given: about these cases, McNemar's exact test on the pairs
    (with Newcombe's paired interval), and about cases like these, the mean
    paired difference with a case-clustered interval. Per-case rows flag the
    cases where B got clearly worse (the case's own paired interval lies
    wholly below 0).

    Parameters
    ----------
    results : Results or path
        A results file or what :func:`evalstats.results.read_results` returned.
    a, b : str
        Variant names; positive differences mean B passes more often.
    method : str, optional
        The method of the ``primary`` comparison (the one ``verdict`` and
        ``gate`` use). Paired: ``mcnemar`` (default) or ``clustered``; an
        unpaired method (``newcombe``, ``overlap``, ``ztest``) compares all
        measured samples as independent samples. Unpaired schedules:
        ``newcombe`` (default), ``overlap`` or ``ztest``.
    level : float
        Confidence level; the test size is 1 - level.

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
    >>> from evalstats.results import Results
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
    """
    level = check_level(level)
    res = _results(results)
    names = _variant_names(res)
    a = _check_variant(a, names, arg="a")
    b = _check_variant(b, names, arg="b")
    if a == b:
        raise InvalidArgument(f"a={a!r} and b={b!r} are the same variant; name two")
    if method is not None:
        check_method(method, PAIRED_METHODS + UNPAIRED_METHODS)
    case_ids = _case_ids(res)
    slots = _slots(res)
    out_a, unmeasured_a = _by_slot(res, a)
    out_b, unmeasured_b = _by_slot(res, b)
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
        unmeasured_a=unmeasured_a,
        unmeasured_b=unmeasured_b,
        warnings=tuple(res.warnings),
    )
    unpaired_a = _measured_by_case(out_a, case_ids)
    unpaired_b = _measured_by_case(out_b, case_ids)

    def unpaired(m: str) -> Comparison:
        if not unpaired_a or not unpaired_b:
            return compare_counts(*_pooled(unpaired_a), *_pooled(unpaired_b), method=m, level=level)
        return compare(unpaired_a, unpaired_b, paired=False, method=m, level=level)

    if not paired:
        independent = unpaired(method or "newcombe")
        return ResultsComparison(
            these_cases=independent if method in (None, "newcombe") else unpaired("newcombe"),
            cases_like_these=None,
            primary=independent,
            pairs=0,
            dropped_unmeasured=0,
            dropped_missing=0,
            reason="cases like these: needs paired outcomes; the schedule did not pair them",
            **common,  # type: ignore[arg-type]
        )

    order = {c: i for i, c in enumerate(case_ids)}
    pa: dict[str, list[tuple[int, bool]]] = {}
    pb: dict[str, list[tuple[int, bool]]] = {}
    dropped_unmeasured = dropped_missing = 0
    for case, repeat in sorted(slots[a], key=lambda s: (order.get(s[0], len(order)), s[1])):
        x, y = out_a.get((case, repeat), "missing"), out_b.get((case, repeat), "missing")
        if x is None or y is None:
            dropped_unmeasured += 1
        elif x == "missing" or y == "missing":
            dropped_missing += 1
        else:
            pa.setdefault(case, []).append((repeat, bool(x)))
            pb.setdefault(case, []).append((repeat, bool(y)))
    xa = {c: [p for _, p in v] for c, v in pa.items()}
    xb = {c: [p for _, p in v] for c, v in pb.items()}
    pairs = sum(len(v) for v in xa.values())
    reasons = []
    these: Comparison | None = None
    like: Comparison | None = None
    primary: Comparison | None
    if pairs == 0:
        reasons.append(
            "no pair has a measured outcome on both sides, so there is nothing to compare"
        )
    else:
        these = compare(xa, xb, paired=True, method="mcnemar", level=level)
        if len(xa) >= 2:
            like = compare(xa, xb, paired=True, method="clustered", level=level)
        else:
            reasons.append(f"cases like these: needs pairs from at least 2 cases, got {len(xa)}")
    if method is None or method == "mcnemar":
        primary = these
    elif method == "clustered":
        primary = like
    else:
        primary = unpaired(method)
    return ResultsComparison(
        these_cases=these,
        cases_like_these=like,
        primary=primary,
        pairs=pairs,
        dropped_unmeasured=dropped_unmeasured,
        dropped_missing=dropped_missing,
        reason="; ".join(reasons),
        **common,  # type: ignore[arg-type]
    )


# --- comparing two runs ----------------------------------------------------------------

#: The four things two runs must share to be compared, in the order they are named.
COMPARABILITY = ("suite", "model", "counting method", "machine")


@dataclass(frozen=True)
class NotComparable:
    """Two runs that must not be compared, and why.

    ``differences`` names which of ``suite``, ``model``, ``counting method``
    and ``machine`` differ; ``details`` says how, one line each.
    """

    differences: tuple[str, ...]
    details: tuple[str, ...]
    comparable: Literal[False] = False

    def __str__(self) -> str:
        return "no comparable previous run: " + "; ".join(self.details)

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": False,
            "summary": str(self),
            "differences": list(self.differences),
            "details": list(self.details),
        }


@dataclass(frozen=True)
class RunsComparison:
    """The same variants in an older and a newer run.

    ``comparisons`` maps each variant to a :class:`~evalstats.compare.Comparison`
    with A the old run and B the new one: Newcombe's interval for independent
    samples on the measured samples, with per-case rows.
    """

    comparisons: dict[str, Comparison]
    level: float
    comparable: Literal[True] = True
    warnings: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        lines = ["old run = A, new run = B (independent samples, measured samples only)"]
        lines += [f"warning: {w}" for w in self.warnings]
        for name, c in self.comparisons.items():
            lines.append(f"variant {name}: {c}")
            for r in c.cases:
                flag = (
                    "  got clearly worse"
                    if r.worse
                    else ("  got clearly better" if r.better else "")
                )
                lines.append(
                    f"  {r.case}: {r.passes_a}/{r.trials_a} -> {r.passes_b}/{r.trials_b}  "
                    f"{r.difference}{flag}"
                )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": True,
            "level": self.level,
            "comparisons": {k: v.to_dict() for k, v in self.comparisons.items()},
            "warnings": list(self.warnings),
        }


def _tasks(res: Results) -> dict[str, Any]:
    return {
        str(v.get("name")): v.get("task")
        for v in res.manifest.get("variants", [])
        if isinstance(v, dict)
    }


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


def compare_runs(
    old: Any, new: Any, *, variant: str | None = None, level: float = 0.95
) -> RunsComparison | NotComparable:
    """Compare a newer run with an older one, but only when they are comparable.

    Two runs are comparable when they share the suite (the SHA-256 of the
    suite), the model (the task descriptions of the variants compared), the
    counting method and the machine fingerprint. Otherwise the answer is
    :class:`NotComparable`, which names every one of the four that differs.

    Parameters
    ----------
    old, new : Results or path
        The two runs.
    variant : str, optional
        The variant to compare. By default every variant present in both runs
        (the variant names of the two runs must then be the same).
    level : float
        Confidence level.

    Returns
    -------
    RunsComparison or NotComparable
        Each variant's pass rate in the new run against the old, as
        independent samples (Newcombe's interval) on measured samples, with
        per-case rows flagging the cases that got clearly worse.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between
    independent proportions: comparison of eleven methods. Statistics in
    Medicine 17, 873-890.

    Examples
    --------
    >>> from evalstats.results import Results
    >>> m = {"suite": {"sha256": "ab"}, "counting_method": "1", "machine": "m1",
    ...      "variants": [{"name": "v", "task": {"kind": "python"}}]}
    >>> other = dict(m, machine="m2")
    >>> print(compare_runs(Results(None, m, (), None, ()), Results(None, other, (), None, ())))
    no comparable previous run: machine differs ('m1' then 'm2')
    """
    level = check_level(level)
    ro, rn = _results(old), _results(new)
    mo, mn = ro.manifest, rn.manifest
    names_old, names_new = _variant_names(ro), _variant_names(rn)
    if variant is not None:
        _check_variant(variant, names_old, arg="variant")
        _check_variant(variant, names_new, arg="variant")
        chosen = [variant]
    else:
        chosen = [v for v in names_old if v in names_new]
    differences: list[str] = []
    details: list[str] = []

    sha_o = (mo.get("suite") or {}).get("sha256")
    sha_n = (mn.get("suite") or {}).get("sha256")
    if sha_o is None or sha_o != sha_n:
        differences.append("suite")
        details.append(f"suite differs (sha256 {_short(sha_o)} then {_short(sha_n)})")
    to, tn = _tasks(ro), _tasks(rn)
    model_problems = []
    if variant is None and sorted(names_old) != sorted(names_new):
        model_problems.append(f"variants {names_old} then {names_new}")
    for v in chosen:
        if to.get(v) != tn.get(v):
            model_problems.append(
                f"variant {v!r}: task {_short(to.get(v))} then {_short(tn.get(v))}"
            )
    if not chosen:
        model_problems.append("no variant in common")
    if model_problems:
        differences.append("model")
        details.append("model differs (" + "; ".join(model_problems) + ")")
    co, cn = mo.get("counting_method"), mn.get("counting_method")
    if co is None or co != cn:
        differences.append("counting method")
        details.append(f"counting method differs ({_short(co)} then {_short(cn)})")
    fo, fn = mo.get("machine"), mn.get("machine")
    if fo is None or fo != fn:
        differences.append("machine")
        details.append(f"machine differs ({_short(fo)} then {_short(fn)})")
    if differences:
        return NotComparable(tuple(differences), tuple(details))

    case_ids = _case_ids(ro)
    comparisons = {}
    for v in chosen:
        xo = _measured_by_case(_by_slot(ro, v)[0], case_ids)
        xn = _measured_by_case(_by_slot(rn, v)[0], case_ids)
        if xo and xn:
            comparisons[v] = compare(xo, xn, paired=False, method="newcombe", level=level)
        else:
            comparisons[v] = compare_counts(*_pooled(xo), *_pooled(xn), level=level)
    warnings = tuple(f"old run: {w}" for w in ro.warnings) + tuple(
        f"new run: {w}" for w in rn.warnings
    )
    return RunsComparison(comparisons, level, warnings=warnings)


# --- gate -----------------------------------------------------------------------------------


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


# --- changed --------------------------------------------------------------------------------


def _git(
    args: Sequence[str], cwd: str | os.PathLike[str] | None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise InvalidArgument("git is not installed (or not on PATH)") from None


def changed_since(
    ref: str, paths: Sequence[str | os.PathLike[str]], *, cwd: str | os.PathLike[str] | None = None
) -> bool:
    """Whether git shows any change under ``paths`` since ``ref``.

    A change is anything between the commit ``ref`` and the working tree:
    later commits, staged and unstaged edits, deletions, and new untracked
    files (ignored files do not count). Paths are git pathspecs, relative to
    ``cwd`` (the current directory by default).

    Parameters
    ----------
    ref : str
        A commit-ish: a branch, tag, hash or ``HEAD~3``.
    paths : sequence of str
        One or more pathspecs.
    cwd : path, optional
        A directory inside the repository.

    Returns
    -------
    bool

    Raises
    ------
    InvalidArgument
        When ``cwd`` is not in a git repository, or ``ref`` names no commit.
    """
    if not isinstance(ref, str) or not ref or ref.startswith("-"):
        raise InvalidArgument(f"ref={ref!r} must name a commit (a branch, tag or hash)")
    specs = (
        [os.fspath(p) for p in paths]
        if not isinstance(paths, str | os.PathLike)
        else [os.fspath(paths)]
    )
    if not specs:
        raise InvalidArgument("paths=[] is empty; name at least one path to watch")
    inside = _git(["rev-parse", "--is-inside-work-tree"], cwd)
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        where = os.fspath(cwd) if cwd is not None else "the current directory"
        raise InvalidArgument(f"{where} is not inside a git working tree")
    verify = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    if verify.returncode != 0:
        raise InvalidArgument(f"ref={ref!r} is not a commit in this repository")
    commit = verify.stdout.strip()
    diff = _git(["diff", "--quiet", commit, "--", *specs], cwd)
    if diff.returncode == 1:
        return True
    if diff.returncode != 0:
        raise InvalidArgument(f"git diff failed: {diff.stderr.strip() or diff.returncode}")
    untracked = _git(["ls-files", "--others", "--exclude-standard", "--", *specs], cwd)
    if untracked.returncode != 0:
        raise InvalidArgument(f"git ls-files failed: {untracked.stderr.strip()}")
    return bool(untracked.stdout.strip())
