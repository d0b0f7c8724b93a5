"""A small in-process runner: run a task over cases several times and score every answer.

``run_cases(task, cases, runs=10)`` calls ``task(prompt) -> str`` for every case
and repeat, runs **every** check on every answer (so two problems in one answer
are both recorded), and returns a :class:`RunResult` that gives per-case
outcomes, pass counts, the most common problems and per-axis counts, and, when
graded checks (:func:`~evalstats.running._graded.covers`, a scaled judge) give
scores, each sample's score and each case's mean score.

Rules of meaning (see the design card):

* **Unscored is not passed.** A check that returns an unscored verdict leaves
  its denominator; a sample passes when every *scored* check passed.
* A sample whose checks were *all* unscored showed nothing: it is **not** a
  pass. It stays in its case's outcomes as ``False`` (so repeats stay aligned
  for paired comparisons) and is counted in :meth:`RunResult.unscored_samples`.
* **Incomplete samples stay in the denominator.** A task that raises, or
  returns an empty answer or no text, gives an ``incomplete`` sample; after a
  raise every check fails with the exception's message.
* **A sample's score is the engine's.** Its checks' scores by the suite's
  ``score`` rule (``mean``, weighted by the checks' weights, or ``min``; see
  :func:`~evalstats.running._graded.sample_score`), as
  :func:`~evalstats.running._graded.record_score` makes it for a results
  file: None when no check gave one (or the sample is unmeasured), 0 for an
  incomplete sample of a case with a graded check.

:class:`Case` is :class:`evalstats.running._suite.Case`; :func:`load_cases` reads a
suite file through :func:`evalstats.running._suite.load_suite` and
:func:`load_shop_cases` reads the shipped shop suite.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from .._validate import whole_number
from ..errors import InvalidArgument, ProviderError, TransientProviderError
from ..results._axiscount import AxisCount
from ..results._file import sample_passed
from ._checks import INSPECTION_FAILURE, Verdict, check_name, run_check
from ._graded import record_score
from ._scoring import weights_of
from ._suite import Case, Suite, find_suite, load_suite

__all__ = [
    "AxisCount",
    "Case",
    "CheckResult",
    "RunResult",
    "Sample",
    "load_cases",
    "load_shop_cases",
    "run_cases",
]

Task = Callable[[str], str]
SampleStatus = Literal["completed", "incomplete", "unmeasured"]


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one answer, with the check's name and axis."""

    check: str
    axis: str | None
    verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "axis": self.axis,
            "status": self.verdict.status,
            "reason": self.verdict.reason,
        }


@dataclass(frozen=True)
class Sample:
    """One answer to one case in one repeat, and what every check said of it.

    ``status`` is ``"completed"`` when the task returned non-empty text,
    ``"incomplete"`` when it raised or returned nothing to inspect (the
    sample stays in the denominator, every check failed), and
    ``"unmeasured"`` when the task or a model-graded check met a transient
    service failure (:class:`~evalstats.errors.TransientProviderError`): no
    verdict, and no place in any pass rate. ``error`` holds the exception's
    type and message when something raised. ``score`` is the sample's score
    in [0, 1] from its graded checks (None when no check gave one), made as
    the engine makes a sample record's ``score``.
    """

    case: str
    repeat: int
    answer: str | None
    checks: tuple[CheckResult, ...]
    status: SampleStatus
    variant: str = "default"
    error: str | None = None
    score: float | None = None

    @property
    def scored(self) -> bool:
        """Whether at least one check scored this answer."""
        return any(r.verdict.is_scored for r in self.checks)

    @property
    def passed(self) -> bool:
        """Whether the sample passed, by the counting rule of results files.

        :func:`evalstats.results._file.sample_passed`: a completed sample passes when
        every scored check passed and at least one check was scored; an
        incomplete one never passes (even when a check of its own passed the
        non-text answer), nor an unmeasured one.
        """
        checks = [{"status": r.verdict.status} for r in self.checks]
        return bool(sample_passed({"status": self.status, "checks": checks}))

    @property
    def problems(self) -> tuple[str, ...]:
        """The reasons of the failed checks, in check order."""
        return tuple(r.verdict.reason for r in self.checks if r.verdict.is_failed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "variant": self.variant,
            "repeat": self.repeat,
            "status": self.status,
            "passed": self.passed,
            "answer": self.answer,
            "error": self.error,
            "checks": [r.to_dict() for r in self.checks],
            **({"score": self.score} if self.score is not None else {}),
        }


@dataclass(frozen=True)
class RunResult:
    """The samples of one run of one variant over a set of cases.

    ``samples`` are in the order they ran: repeat by repeat, each repeat going
    through the cases in order. ``cases`` lists the case ids in suite order.
    """

    samples: tuple[Sample, ...]
    cases: tuple[str, ...]
    runs: int
    variant: str = "default"

    def outcomes(self) -> dict[str, list[bool]]:
        """Each case's pass/fail outcomes in repeat order.

        A sample passes when every scored check passed; a sample with no scored
        check is ``False``: it showed nothing, and it keeps its place so that
        two runs can be paired by (case, repeat). Unmeasured samples are left
        out (unmeasured is its own bucket, see :meth:`unmeasured`), so a case
        with one has fewer outcomes than ``runs``.
        """
        out: dict[str, list[bool]] = {case: [] for case in self.cases}
        for sample in sorted(self.samples, key=lambda s: s.repeat):
            if sample.status != "unmeasured":
                out[sample.case].append(sample.passed)
        return out

    def scores(self) -> dict[str, list[float]]:
        """Each case's sample scores in repeat order, of the samples that have one.

        Empty lists throughout when no check gives a score (pass/fail checks only).
        """
        out: dict[str, list[float]] = {case: [] for case in self.cases}
        for sample in sorted(self.samples, key=lambda s: s.repeat):
            if sample.score is not None:
                out[sample.case].append(sample.score)
        return out

    def mean_scores(self) -> dict[str, float | None]:
        """``{case: mean of its sample scores}``; None for a case no sample of which has one."""
        return {case: (sum(row) / len(row) if row else None) for case, row in self.scores().items()}

    @property
    def mean_score(self) -> float | None:
        """The mean of the cases' mean scores (each case weighs alike); None without scores."""
        means = [m for m in self.mean_scores().values() if m is not None]
        return sum(means) / len(means) if means else None

    def pass_counts(self) -> dict[str, tuple[int, int]]:
        """``{case: (passes, measured samples)}``; incomplete samples count, unmeasured not."""
        return {case: (sum(o), len(o)) for case, o in self.outcomes().items()}

    @property
    def passes(self) -> int:
        """Passing samples over all cases."""
        return sum(s.passed for s in self.samples)

    @property
    def trials(self) -> int:
        """Measured samples over all cases (the overall denominator)."""
        return sum(s.status != "unmeasured" for s in self.samples)

    def unmeasured(self) -> dict[str, int]:
        """``{case: number of unmeasured samples}`` (in no pass rate, always reported)."""
        return self._count(lambda s: s.status == "unmeasured")

    def incomplete(self) -> dict[str, int]:
        """``{case: number of incomplete samples}``."""
        return self._count(lambda s: s.status == "incomplete")

    def unscored_samples(self) -> dict[str, int]:
        """``{case: measured samples that no check scored}`` (counted as not passed)."""
        return self._count(lambda s: s.status != "unmeasured" and not s.scored)

    def _count(self, predicate: Callable[[Sample], bool]) -> dict[str, int]:
        counts = dict.fromkeys(self.cases, 0)
        for s in self.samples:
            counts[s.case] += bool(predicate(s))
        return counts

    def problems(self, *, top: int | None = None) -> dict[str, list[tuple[str, int]]]:
        """The most common problems per case: ``{case: [(reason, count), ...]}``.

        Every failed check of every sample counts once, so an answer with two
        problems contributes both. ``top`` keeps the ``top`` most common.
        """
        if top is not None:
            top = whole_number("top", top)
        return {case: counter.most_common(top) for case, counter in self.problem_counts().items()}

    def problem_counts(self) -> dict[str, Counter[str]]:
        """``{case: Counter of failure reasons}``."""
        counters: dict[str, Counter[str]] = {case: Counter() for case in self.cases}
        for s in self.samples:
            counters[s.case].update(s.problems)
        return counters

    def axis_counts(self) -> dict[str, AxisCount]:
        """Per-axis verdict counts, each axis with its own denominator.

        An axis counts the verdicts of the checks that name it, over every
        sample; unscored verdicts are out of ``scored`` and counted apart.
        Checks without an axis count only in the per-case and overall figures.
        Axes are listed in the order they first appear.
        """
        tallies: dict[str, list[int]] = {}
        for s in self.samples:
            for r in s.checks:
                if r.axis is None:
                    continue
                t = tallies.setdefault(r.axis, [0, 0, 0, 0])
                v = r.verdict
                if not v.is_scored:
                    t[2] += 1
                    continue
                t[1] += 1
                t[0] += v.is_passed
                t[3] += v.not_inspected
        return {axis: AxisCount(*t) for axis, t in tallies.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary with every sample."""
        counts = self.pass_counts()
        incomplete = self.incomplete()
        unmeasured = self.unmeasured()
        unscored = self.unscored_samples()
        problems = self.problem_counts()
        means = self.mean_scores()
        scored = any(m is not None for m in means.values())
        return {
            "variant": self.variant,
            "runs": self.runs,
            "passes": self.passes,
            "trials": self.trials,
            "cases": [
                {
                    "case": case,
                    "passes": counts[case][0],
                    "trials": counts[case][1],
                    "incomplete": incomplete[case],
                    "unmeasured": unmeasured[case],
                    "unscored_samples": unscored[case],
                    "problems": [
                        {"reason": r, "count": n} for r, n in problems[case].most_common()
                    ],
                    **({"mean_score": means[case]} if scored else {}),
                }
                for case in self.cases
            ],
            "axes": {axis: c.to_dict() for axis, c in self.axis_counts().items()},
            **({"mean_score": self.mean_score} if scored else {}),
            "samples": [s.to_dict() for s in self.samples],
        }


def run_cases(
    task: Task, cases: Iterable[Case] | Suite, *, runs: int, variant: str = "default"
) -> RunResult:
    """Run ``task`` on every case ``runs`` times and score every answer.

    The schedule goes repeat by repeat, each repeat through the cases in order,
    so that anything that drifts during a run touches every case alike. Every
    check runs on every answer through :func:`~evalstats.running._checks.run_check`, so
    a check that raises fails instead of stopping the run.

    An exception raised by the task (any ``Exception``; ``KeyboardInterrupt``
    stops the run) makes the sample ``incomplete`` and fails every check with
    ``could not be inspected: the task raised <Type>: <message>``. A task that
    returns an empty answer, or something other than text, also gives an
    ``incomplete`` sample, whose checks fail as having nothing to inspect.

    Parameters
    ----------
    task : callable
        ``task(prompt) -> str``, for example an assistant from
        :func:`evalstats.demo._shop.make_assistant`.
    cases : iterable of Case, or Suite
        With unique ids, for example :func:`load_shop_cases`. A
        :class:`~evalstats.running._suite.Suite` runs its cases (holdout cases
        left out) and makes each sample's score by its ``score`` rule, as the
        engine does; cases alone are scored by the weighted mean.
    runs : int
        Repeats per case, at least 1.
    variant : str, optional
        A name for what is being run, kept on the result and its samples.

    Returns
    -------
    RunResult

    Examples
    --------
    >>> from evalstats.demo._shop import make_assistant
    >>> result = run_cases(make_assistant(2, seed=0), load_shop_cases(), runs=5)
    >>> result.pass_counts()["order status"]
    (4, 5)
    >>> result.problems()["order status"]
    [('has 58 words, more than 25', 1)]
    >>> result.passes, result.trials
    (19, 20)

    A graded check gives each sample a score, weighted by the checks' weights:

    >>> from evalstats.running._graded import covers
    >>> from evalstats.running._suite import CaseCheck
    >>> case = Case("c", "p", (CaseCheck(covers("a", "b"), weight=3), covers("c")))
    >>> graded = run_cases(lambda p: "a and c", [case], runs=2)
    >>> [s.score for s in graded.samples], graded.mean_scores()
    ([0.625, 0.625], {'c': 0.625})
    """
    if not callable(task):
        raise InvalidArgument(f"task={task!r} must be callable: task(prompt) -> str")
    runs = whole_number("runs", runs)
    if not isinstance(variant, str) or not variant:
        raise InvalidArgument(f"variant={variant!r} must be a non-empty string")
    rule = "mean"
    if isinstance(cases, Suite):
        rule = cases.score  # checked by the suite
        cases = cases.select()
    case_list = list(cases)
    if not case_list:
        raise InvalidArgument("cases is empty; give at least one case")
    seen: set[str] = set()
    for i, case in enumerate(case_list):
        if not isinstance(case, Case):
            raise InvalidArgument(f"cases[{i}]={case!r} must be a Case")
        if case.id in seen:
            raise InvalidArgument(f"cases[{i}] repeats the case id {case.id!r}")
        if case.prompt is None:
            raise InvalidArgument(
                f"cases[{i}] (case {case.id!r}) is a conversation (messages); run_cases sends "
                "one prompt: run it with evalstats.run"
            )
        seen.add(case.id)

    samples: list[Sample] = []
    for repeat in range(runs):
        for case in case_list:
            samples.append(_run_one(task, case, repeat, variant, rule))
    return RunResult(
        samples=tuple(samples),
        cases=tuple(c.id for c in case_list),
        runs=runs,
        variant=variant,
    )


def _scored(sample: Sample, case: Case, rule: str) -> Sample:
    """``sample`` with its score, made from its checks as the engine makes a record's."""
    if sample.status == "unmeasured":
        return sample
    checks = [(c, axis) for c, axis in case.checks]
    # the case's own checks: run_cases runs no required actions (they give no score)
    weights = weights_of(case)[: len(checks)]
    verdicts = [r.verdict for r in sample.checks]
    score = record_score(verdicts, checks, sample.status, weights=weights, rule=rule)
    if not isinstance(score, float):  # unset: no check gave a score
        return sample
    return replace(sample, score=score)


def _run_one(task: Task, case: Case, repeat: int, variant: str, rule: str = "mean") -> Sample:
    return _scored(_answered(task, case, repeat, variant), case, rule)


def _answered(task: Task, case: Case, repeat: int, variant: str) -> Sample:
    assert case.prompt is not None  # run_cases refuses conversations
    try:
        answer = task(case.prompt)
        results = tuple(
            CheckResult(check_name(c), axis, run_check(c, answer)) for c, axis in case.checks
        )
    except TransientProviderError as exc:
        # The service gave no answer (or a judge no verdict): unmeasured, not
        # failed. This runner does not retry; the engine does.
        error = f"{type(exc).__name__}: {exc}"
        return Sample(case.id, repeat, None, (), "unmeasured", variant, error)
    except ProviderError:
        raise  # a refusal the user must fix (401, 404, ...): stop the run
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        failed = Verdict.failed(f"{INSPECTION_FAILURE}: the task raised {error}")
        results = tuple(CheckResult(check_name(c), axis, failed) for c, axis in case.checks)
        return Sample(case.id, repeat, None, results, "incomplete", variant, error)
    completed = isinstance(answer, str) and bool(answer.strip())
    stored = answer if isinstance(answer, str) else None
    return Sample(
        case.id, repeat, stored, results, "completed" if completed else "incomplete", variant
    )


# --- loading ------------------------------------------------------------------


def load_cases(path: str | Path, *, include_holdout: bool = False) -> tuple[Case, ...]:
    """Read the cases of a JSON or YAML suite file such as ``cases/shop.json``.

    A thin wrapper around :func:`evalstats.running._suite.load_suite`, which validates
    the file and raises :class:`~evalstats.errors.CaseFileError` naming the
    file, the case and the field. Holdout cases are left out unless
    ``include_holdout=True``.
    """
    return load_suite(path).select(include_holdout=include_holdout)


def load_shop_cases() -> tuple[Case, ...]:
    """The four shop cases (``cases/shop.json``), as shipped with evalstats.

    Examples
    --------
    >>> [case.id for case in load_shop_cases()]
    ['order status', 'broken lamp refund', 'discount trick', 'thank-you']
    """
    return load_cases(find_suite("shop"))
