"""The engine: run cases x variants x repeats against tasks, durably.

An experiment is a suite of cases, one or more :class:`Variant` objects (a
name, a task and an optional prompt transform) and a number of ``runs``. The
engine

1. lays out a :func:`schedule`: for every repeat and every case, each variant
   runs once; which variant goes first alternates with the parity of
   ``case_index + repeat``, so neither always gets the cold start;
2. runs the samples, ``concurrency`` at a time, each with a per-sample
   ``timeout``; transient failures (:class:`~evalstats.errors.TransientProviderError`,
   timeouts) are retried with exponential backoff and full jitter that honours
   ``retry_after`` up to the run's timeout, and a sample that still has no
   answer after the last retry, or whose service asks to wait longer than
   that, is *unmeasured*;
3. scores every answer with every check of its case and writes one record per
   sample, in the order samples finish, to a JSONL results file
   (:mod:`evalstats.results._file`) that starts with a manifest of everything that
   produced the run and ends with a summary.

Rules of meaning (see the design card): a task that raises or returns an empty
answer gives an *incomplete* sample whose checks all fail as not inspected (it
stays in the denominator); a service that gave no answer gives an *unmeasured*
sample (it leaves pass rates and is counted apart); a
:class:`~evalstats.errors.ProviderError` that is not transient stops the run,
because every further sample would fail the same way.

:func:`run` also handles SIGINT and SIGTERM: it stops starting samples,
cancels the ones in flight (they are not recorded, so ``resume=True`` runs them
again), and writes the summary with status ``"interrupted"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import hashlib
import inspect
import json
import os
import random
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from msgspec import UNSET

from .._terminal import visible
from .._text import canonical_json
from .._validate import confusable, confusable_message, whole_number
from ..errors import (
    InvalidArgument,
    ProviderError,
    ResultsFileError,
    TransientProviderError,
)
from ..results._recordable import recordable
from ..results._records import CheckVerdict, Manifest, Sample, Summary, Tokens, to_record
from ._checks import Verdict, nothing_to_inspect, run_check, sample_seed_now, scoring_sample
from ._graded import record_score
from ._options import DEFAULT_TIMEOUT_S, Limits, Retries, Selection, _DefaultTimeout, gather
from ._prices import without_prices
from ._scoring import (
    checks_of,
    is_judged,
    judge_unmeasured,
    may_block,
    needs_trace,
    not_inspected,
    verdict_record,
    weights_of,
)
from ._shards import shard_cases, shard_record
from ._tasks import CallableTask, Prompt, Task, TaskResult, as_task
from ._threads import Alarm, DaemonPool
from ._variants import (
    PROVIDER_KINDS,
    TASK_KINDS,
    Variant,
    parse_variant,
    task_from_name,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "PROVIDER_KINDS",
    "TASK_KINDS",
    "TRANSIENT_ERRORS",
    "Prompt",
    "RunOutcome",
    "Slot",
    "Task",
    "TaskResult",
    "Variant",
    "as_task",
    "iter_schedule",
    "parse_variant",
    "run",
    "run_async",
    "sample_seed",
    "schedule",
    "task_from_name",
]

#: Exceptions worth a retry: a transient provider error and a timeout (the
#: per-sample timeout raises ``TimeoutError``, and so may a task). Providers
#: append their transport errors (for example ``httpx.TransportError``).
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (TransientProviderError, TimeoutError)

#: The longest wait between two attempts, unless the service asks for more.
MAX_BACKOFF_S = 30.0

#: The longest wait before a retry a service may ask for (``retry_after``) when
#: the run has no timeout; with one, the timeout is the limit. A sample whose
#: service asks for more is unmeasured at once, and the run says so once.
MAX_SERVER_DELAY_S = 600.0

#: Seconds a harness task (``wants_case``) may take beyond the run's timeout
#: to stop its process and clean up before the engine cancels it.
_HARNESS_MARGIN_S = 15.0

#: Samples (cases x runs x variants) one run may take; more is refused up front.
MAX_SAMPLES = 1_000_000


RunStatus = Literal["finished", "interrupted", "stopped"]


# --- the schedule -----------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One sample to take: a case, a repeat and a variant, with its pair and position.

    ``pair`` numbers the (case, repeat) pairs, ``repeat * n_cases +
    case_index``; ``position`` is the variant's place within its pair (0 runs
    first).
    """

    case: str
    case_index: int
    repeat: int
    pair: int
    position: int
    variant: str

    def to_list(self) -> list[Any]:
        """``[case, repeat, pair, position, variant]``, as in the manifest's schedule."""
        return [self.case, self.repeat, self.pair, self.position, self.variant]


def schedule(cases: Sequence[Any], variants: Sequence[Any], runs: int) -> tuple[Slot, ...]:
    """Every (case, repeat, variant) once, repeat by repeat, alternating who goes first.

    The order is repeat-major, then case; within each (case, repeat) pair
    the variants run in their given order rotated by ``(case_index + repeat)
    % len(variants)``. For two variants, the first goes first when
    ``case_index + repeat`` is even and second when it is odd, so neither
    always meets the cold start, and each case alternates from repeat to
    repeat.

    Parameters
    ----------
    cases : sequence
        Case objects (with an ``id``) or case ids.
    variants : sequence
        :class:`Variant` objects (with a ``name``) or variant names.
    runs : int
        Repeats, at least 1.

    Examples
    --------
    >>> for slot in schedule(["a", "b"], ["A", "B"], 2)[:6]:
    ...     print(slot.case, slot.repeat, slot.pair, slot.position, slot.variant)
    a 0 0 0 A
    a 0 0 1 B
    b 0 1 0 B
    b 0 1 1 A
    a 1 2 0 B
    a 1 2 1 A
    """
    runs = whole_number("runs", runs)
    ids, names = _ids_and_names(cases, variants)
    return tuple(_slots(ids, names, runs))


def iter_schedule(cases: Sequence[Any], variants: Sequence[Any], runs: int) -> Iterator[Slot]:
    """The slots of :func:`schedule`, made one at a time as they are taken.

    The arguments are checked at once; the slots are not held, so a run's
    memory does not grow with its number of samples.
    """
    runs = whole_number("runs", runs)
    ids, names = _ids_and_names(cases, variants)
    return _slots(ids, names, runs)


#: The schedule's walk, under a name a function's own ``iter_schedule`` may wrap.
_iter_schedule = iter_schedule


def _ids_and_names(cases: Sequence[Any], variants: Sequence[Any]) -> tuple[list[str], list[str]]:
    ids = [c if isinstance(c, str) else c.id for c in cases]
    names = [v if isinstance(v, str) else v.name for v in variants]
    if not ids:
        raise InvalidArgument("cases is empty; give at least one case")
    if not names:
        raise InvalidArgument("variants is empty; give at least one variant")
    _unique("case id", ids)
    _unique("variant name", names)
    return ids, names


def _slots(ids: Sequence[str], names: Sequence[str], runs: int) -> Iterator[Slot]:
    k = len(names)
    for repeat in range(runs):
        for index, case_id in enumerate(ids):
            shift = (index + repeat) % k
            order = [*names[shift:], *names[:shift]]
            pair = repeat * len(ids) + index
            for position, name in enumerate(order):
                yield Slot(case_id, index, repeat, pair, position, name)


def _unique(what: str, values: Sequence[str]) -> None:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise InvalidArgument(f"the {what} {v!r} appears twice; {what}s must be unique")
        seen.add(v)
    # Two names that look alike (a zero-width character, a compatibility form)
    # would show as one in every report.
    pair = confusable(values)
    if pair is not None:
        raise InvalidArgument(confusable_message(what, values[pair[0]], values[pair[1]]))


def sample_seed(seed: int, case_id: str, repeat: int, variant: str) -> int:
    """The seed of one sample: a stable hash of the run's seed and the sample's place.

    SHA-256 of the four values, as a number in ``[0, 2**63)``: the same in
    every process and on every machine, and independent of the schedule and
    the concurrency, so a resumed or re-run sample gets the same seed.

    Examples
    --------
    >>> sample_seed(0, "order status", 3, "new") == sample_seed(0, "order status", 3, "new")
    True
    >>> sample_seed(0, "order status", 3, "new") == sample_seed(1, "order status", 3, "new")
    False
    """
    key = json.dumps([seed, case_id, repeat, variant], ensure_ascii=False)
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def backoff_delay(
    attempt: int, *, base: float, retry_after: float | None = None, rng: random.Random
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry).

    Exponential backoff with full jitter (a uniform draw between 0 and
    ``min(MAX_BACKOFF_S, base * 2 ** (attempt - 1))``), and at least
    ``retry_after`` when the service asked for a delay.

    References
    ----------
    Brooker, M. (2015). Exponential Backoff And Jitter. AWS Architecture Blog
    ("Full Jitter").
    """
    cap = min(MAX_BACKOFF_S, base * 2.0 ** (attempt - 1))
    delay = rng.uniform(0.0, cap) if cap > 0 else 0.0
    if retry_after is not None and retry_after > delay:
        delay = float(retry_after)
    return delay


def _wait_refused(retry_after: Any, timeout: float | None) -> str | None:
    """Why a service's ``retry_after`` is not waited for, or None when it is within the limit.

    The limit is the run's ``timeout`` (a wait longer than an attempt may take
    is not worth a sample), or :data:`MAX_SERVER_DELAY_S` when there is none.
    """
    limit = MAX_SERVER_DELAY_S if timeout is None else float(timeout)
    if not isinstance(retry_after, int | float) or not retry_after > limit:
        return None
    wait = f"{retry_after:,.0f} s" if 10 <= retry_after < 1e12 else f"{retry_after:.3g} s"
    bound = (
        f"the longest evalstats waits ({limit:g} s)"
        if timeout is None
        else f"the run's timeout ({limit:g} s)"
    )
    return f"the service asked to wait {wait} before a retry, longer than {bound}"


# --- running --------------------------------------------------------------------


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended.

    ``status`` is ``"finished"``, ``"interrupted"`` or ``"stopped"``;
    ``samples_written`` counts the sample records this call wrote;
    ``skipped`` the ones already in the file when resuming; ``by_variant``
    counts completed, incomplete and unmeasured samples per variant over the
    whole file (as in its summary); ``elapsed_s`` is this call's time.
    """

    path: str
    status: RunStatus
    samples_written: int
    by_variant: dict[str, dict[str, int]]
    elapsed_s: float
    skipped: int = 0
    reason: str | None = None

    def __str__(self) -> str:
        counts = "; ".join(
            f"{name}: {c['completed']} completed, {c['incomplete']} incomplete, "
            f"{c['unmeasured']} unmeasured"
            for name, c in self.by_variant.items()
        )
        return f"{self.path}: {self.status}, {self.samples_written} samples written ({counts})"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _resolve_suite(suite_or_cases: Any) -> Any:
    from ._suite import find_suite, load_suite, suite_from_cases

    if hasattr(suite_or_cases, "select") and hasattr(suite_or_cases, "cases"):
        return suite_or_cases
    if isinstance(suite_or_cases, str | Path):
        found = find_suite(suite_or_cases)
        suite = load_suite(found)
        if Path(suite_or_cases) != found:
            # A shipped suite by name: record the name given, not where it is installed.
            suite = dataclasses.replace(suite, path=str(suite_or_cases))
        return suite
    try:
        items = list(suite_or_cases)
    except TypeError:
        raise InvalidArgument(
            f"suite={suite_or_cases!r} must be a Suite, a suite file or name, or a list of cases"
        ) from None
    return suite_from_cases(items)


def _resolve_trace(value: Any, needed: bool) -> tuple[Any, Any, str | None]:
    """``(trace, record, problem)`` for what a task returned as its trace.

    ``trace`` is the :class:`~evalstats.running._traces.Trace` to score trace checks
    on, or None; ``record`` what the sample record keeps (a trace's JSON
    summary, merged into the task's dict when it gave one, in place of any
    ``"summary"`` the dict held); ``problem`` the
    reason the sample is incomplete: a trace that cannot be read (or none,
    when the case needs one), or an assistant stopped by a budget or an error.
    """
    if value is None and not needed:
        return None, None, None
    from ._traces import Trace, TraceError, trace_of, trace_summary

    found = trace_of(value)
    kept: dict[str, Any] = {}
    if isinstance(value, Mapping) and not isinstance(value, Trace):
        kept = {k: v for k, v in value.items() if not isinstance(v, Trace | TraceError)}
        if isinstance(kept.get("summary"), Mapping):
            del kept["summary"]  # the summary is kept once, at the top level
    if isinstance(found, Trace):
        record = {**kept, **trace_summary(found)}
        if found.stopped is not None:
            return found, record, f"the assistant was stopped before it finished: {found.stopped}"
        return found, record, None
    if isinstance(found, TraceError):
        record = {**kept, "trace_error": str(found)}
        if needed or not found.missing:
            return None, record, str(found)
        return None, record, None
    if needed:
        return None, value, "the task produced no trace to inspect"
    return None, value, None


_RESUME_KEYS = ("suite", "cases", "variants", "runs", "seed", "include_holdout", "judge")


def _norm(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists), for comparing manifests."""
    return json.loads(json.dumps(value, sort_keys=True))


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:

    out = []
    shard = _shard_difference(old.get("shard"), new.get("shard"))
    if shard is not None:
        out.append(shard)
    # A sequential run (evalstats.deciding._until_decided) grows by a round per call,
    # each with its look: resumed as a fixed run, it would take rounds without looks.
    grows = isinstance(old.get("until_decided"), Mapping)
    if grows and not isinstance(new.get("until_decided"), Mapping):
        most = old["until_decided"].get("max_runs")
        out.append(
            "the stopping rule (the file is a run until decided; resume it with "
            f"--until-decided --max-runs {most if isinstance(most, int) else 'N'})"
        )
    for key in _RESUME_KEYS:
        a, b = old.get(key), new.get(key)
        if key == "runs" and grows and isinstance(a, int) and isinstance(b, int) and b >= a:
            continue
        if key == "suite":
            a = (a or {}).get("sha256") if isinstance(a, Mapping) else None
            b = (b or {}).get("sha256")
            if a != b:
                out.append("the suite's SHA-256")
            continue
        if key == "variants" and isinstance(a, list) and isinstance(b, list):
            # Prices are recorded with a variant but are not part of it.
            a, b = [without_prices(v) for v in a], [without_prices(v) for v in b]
        if _norm(a) != _norm(b):
            if key in ("runs", "seed", "include_holdout"):
                out.append(f"{key} (the file has {a!r}, this run {b!r})")
            else:
                out.append(f"the {key}")
    return out


def _shard_difference(old: Any, new: Any) -> str | None:
    """How this run's shard differs from the file's (None: the same shard of the same run).

    The shard's index and count, and the digest of the whole run it is part of:
    a shard resumed as another (2/3 for 2/2 may take the same cases) or as part
    of another whole run would keep a ``"shard"`` record that no longer merges."""

    def named(record: Any) -> str | None:
        if not isinstance(record, Mapping):
            return None
        return f"{record.get('index')}/{record.get('count')}"

    if _norm(old) == _norm(new):
        return None
    was, now = named(old), named(new)
    if was is None:
        return (
            f"the shard (the file is no shard, this run is shard {now}; resume it without --shard)"
        )
    if now is None or was != now:
        this = "is no shard" if now is None else f"is shard {now}"
        return f"the shard (the file is shard {was}, this run {this}; resume it with --shard {was})"
    return (
        f"the whole run shard {was} is part of (its digest: the selected cases or the "
        "settings differ)"
    )


@dataclass(frozen=True)
class _Attempts:
    result: Any
    attempts: int
    unmeasured: str | None = None
    error: Exception | None = None


class _Stop(Exception):
    """A non-transient provider error: the run stops."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class _State:
    by_variant: dict[str, dict[str, int]]
    written: int = 0
    unmeasured: int = 0
    interrupted: str | None = None
    stopping: bool = False
    workers: list[asyncio.Task[None]] = field(default_factory=list)
    # The circuit breaker: unmeasured records held back while they come in a row
    # (written once a measured sample ends the streak), and why it tripped.
    breaker: int | None = None
    held: list[tuple[Slot, dict[str, Any]]] = field(default_factory=list)
    tripped: str | None = None


class _Engine:
    """The per-run machinery; one instance per call of :func:`run_async`."""

    def __init__(
        self,
        *,
        cases: Mapping[str, Any],
        variants: Mapping[str, Variant],
        seed: int,
        timeout: float | None,
        retries: int,
        backoff: float,
        concurrency: int,
        score_rule: str = "mean",
    ) -> None:
        self.cases = cases
        self.variants = variants
        self.seed = seed
        self.timeout = timeout
        # A timeout given on purpose binds harness tasks too; the default
        # leaves them their own (see _DefaultTimeout).
        self.timeout_given = not isinstance(timeout, _DefaultTimeout)
        self.retries = retries
        self.backoff = backoff
        self.rng = random.Random(f"evalstats.engine.backoff:{seed}")
        self.checks = {cid: checks_of(case) for cid, case in cases.items()}
        # how a sample's score is made: the suite's rule and its checks' weights
        self.score_rule = score_rule
        self.weights = {cid: weights_of(case) for cid, case in cases.items()}
        self.blocking_checks = {
            cid: any(may_block(c) for c, _, _ in checks) for cid, checks in self.checks.items()
        }
        self.needs_trace = {
            cid: any(needs_trace(c) for c, _, _ in checks) for cid, checks in self.checks.items()
        }
        self.prompts: dict[tuple[str, str], Prompt] = {}
        # run --batch: the judged checks whose judge sends its calls in batches, by id
        self.batch_judged: dict[int, Any] = {}
        self.executor: DaemonPool | None = None
        # the deadline of checks run inline, on the loop's thread (set by run_async)
        self.alarm: Alarm | None = None
        self.concurrency = concurrency
        self.said_wait_refused = False

    def _refuse_wait(self, why: str) -> None:
        """Say once per run that samples asked to wait too long are recorded unmeasured."""
        if self.said_wait_refused:
            return
        self.said_wait_refused = True
        from tqdm import tqdm  # writes above a progress bar, if one is drawn

        line = f"evalstats: {why}; such samples are recorded unmeasured, without waiting"
        tqdm.write(visible(line, keep=""), file=sys.stderr)

    def _pool(self) -> DaemonPool:
        """The threads of sync Python tasks and checks: daemon threads, so that a call
        that never returns holds only its own (see :mod:`._threads`)."""
        if self.executor is None:
            self.executor = DaemonPool("evalstats-task")
        return self.executor

    def prompt(self, case_id: str, variant: str) -> Prompt:
        key = (case_id, variant)
        p = self.prompts.get(key)
        if p is None:
            p = self.prompts[key] = self.variants[variant].render(self.cases[case_id])
        return p

    async def _bounded(self, make: Callable[[], Awaitable[Any]]) -> Any:
        if self.timeout is None:
            return await make()
        async with asyncio.timeout(self.timeout):
            return await make()

    async def _call_task(self, task: Task, prompt: Prompt, seed: int, case: Any = None) -> Any:
        if getattr(task, "wants_case", False) is True:
            # A harness task (cmd:) gets the case, for its workspace, and
            # enforces the run's timeout itself: it kills its process group and
            # returns what it captured, so a hung command gives an incomplete
            # sample instead of a timeout retried. The engine's bound, with a
            # margin for the kill and the clean-up, is only a safety net.
            if self.timeout is None:
                return await task.run(prompt, seed=seed, case=case)  # type: ignore[call-arg]
            own = getattr(task, "timeout", None)
            if not self.timeout_given and isinstance(own, int | float) and own > 0:
                # No timeout chosen: the task's own default (130 s for cmd:) holds.
                limit, given = float(own), {}
            else:
                limit, given = self.timeout, {"timeout": self.timeout}
            try:
                async with asyncio.timeout(limit + _HARNESS_MARGIN_S):
                    return await task.run(prompt, seed=seed, case=case, **given)  # type: ignore[call-arg]
            except TimeoutError:
                # The harness did not come back: its failure, not a model
                # service's, so the sample is incomplete, never retried.
                raise RuntimeError(
                    f"the command did not finish within {limit:g} s and its clean-up did not "
                    f"end within {_HARNESS_MARGIN_S:g} s more"
                ) from None
        if isinstance(task, CallableTask) and not task.is_async:
            fn = task.fn
            if self.timeout is None:
                result = fn(prompt.text)
            else:
                loop = asyncio.get_running_loop()
                pool = self._pool()
                result = await self._bounded(lambda: loop.run_in_executor(pool, fn, prompt.text))
            if inspect.isawaitable(result):
                result = await self._bounded(lambda: result)
            return result
        return await self._bounded(lambda: task.run(prompt, seed=seed))

    async def _with_retries(
        self, make: Callable[[], Awaitable[Any]], *, failed: BaseException | None = None
    ) -> _Attempts:
        """Call ``make()`` until it gives a result, retrying transient failures.

        Returns the result, or the reason it is unmeasured (out of retries),
        or the exception it raised (not transient, not a ProviderError).
        ``failed`` is a transient error a first attempt, made elsewhere,
        already raised.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                if failed is not None:
                    error, failed = failed, None
                    raise error
                return _Attempts(await make(), attempt)
            except TRANSIENT_ERRORS as exc:
                if isinstance(exc, TimeoutError) and not str(exc):
                    limit = f" after {self.timeout:g} s" if self.timeout is not None else ""
                    reason = f"timed out{limit}"
                else:
                    reason = f"{type(exc).__name__}: {exc}"
                tries = "attempt" if attempt == 1 else "attempts"
                retry_after = getattr(exc, "retry_after", None)
                why = _wait_refused(retry_after, self.timeout)
                if why is not None:
                    self._refuse_wait(why)
                    reason = f"no answer after {attempt} {tries}: {reason}; {why}"
                    return _Attempts(None, attempt, reason)
                if attempt > self.retries:
                    return _Attempts(None, attempt, f"no answer after {attempt} {tries}: {reason}")
                delay = backoff_delay(
                    attempt, base=self.backoff, retry_after=retry_after, rng=self.rng
                )
                await _sleep(delay)
            except ProviderError as exc:
                raise _Stop(exc) from exc
            except Exception as exc:
                return _Attempts(None, attempt, error=exc)

    async def sample(self, slot: Slot) -> Sample:
        variant = self.variants[slot.variant]
        prompt = self.prompt(slot.case, slot.variant)
        seed = sample_seed(self.seed, slot.case, slot.repeat, slot.variant)
        checks = self.checks[slot.case]
        started_at = _now()
        t0 = time.perf_counter()
        status = "completed"
        reason: str | None = None
        answer: Any = None
        trace = tokens = model = None
        verdicts: list[CheckVerdict] = []
        notes: list[str] = []
        case = self.cases[slot.case]
        call = await self._with_retries(lambda: self._call_task(variant.task, prompt, seed, case))
        latency = time.perf_counter() - t0
        attempts, result = call.attempts, call.result
        if call.unmeasured is not None:
            status, reason = "unmeasured", call.unmeasured
        elif call.error is not None:
            reason = f"the task raised {type(call.error).__name__}: {call.error}"
            status, verdicts = "incomplete", not_inspected(checks, reason)
        else:
            if isinstance(result, TaskResult):
                answer, trace, model = result.answer, result.trace, result.model
                tokens = _tokens(result.tokens)
            else:
                answer = result
            # What is scored is what is recorded: text and numbers JSON cannot
            # hold (a lone surrogate, NaN) are rewritten visibly first.
            if isinstance(answer, str):
                answer, notes = recordable(answer, "answer")
            trace, trace_notes = recordable(trace, "trace", strict=True)
            notes += trace_notes
            # A trace that cannot be read (or none, when a check needs one)
            # makes the sample incomplete: no outcome is guessed from the answer.
            parsed, trace, problem = _resolve_trace(trace, self.needs_trace[slot.case])
            nothing = problem or nothing_to_inspect(answer)
            if nothing is not None:
                status, reason = "incomplete", nothing
                verdicts = not_inspected(checks, nothing)
            else:
                with scoring_sample(seed):
                    scored = await self._score(slot.case, checks, answer, parsed)
                if isinstance(scored, str):
                    status, reason = "unmeasured", scored
                else:
                    verdicts = scored
            # What the trace holds that JSON has no form for (a Python task's
            # own objects) is kept as its repr, so the sample is still written.
            trace, trace_notes = recordable(trace, "trace")
            notes += trace_notes
        return Sample(
            case=slot.case,
            variant=slot.variant,
            repeat=slot.repeat,
            pair=slot.pair,
            position=slot.position,
            status=status,
            reason=reason,
            prompt=prompt.to_dict(),
            answer=answer if isinstance(answer, str) else None,
            trace=trace,
            checks=verdicts,
            latency_s=round(latency, 6),
            attempts=attempts,
            tokens=tokens,
            model=model,
            started_at=started_at,
            finished_at=_now(),
            recording_notes=notes if notes else UNSET,
            score=record_score(
                verdicts, checks, status, weights=self.weights[slot.case], rule=self.score_rule
            ),
        )

    async def _score(
        self,
        case_id: str,
        checks: Sequence[tuple[Callable[[Any], Any], str | None, str]],
        answer: str,
        trace: Any = None,
    ) -> list[CheckVerdict] | str:
        """Every check's verdict, or the reason the sample is unmeasured.

        A check with ``needs_trace = True`` is given ``trace`` (the sample's
        :class:`~evalstats.running._traces.Trace`) instead of the answer.
        """
        blocking = self.blocking_checks[case_id]
        out = []
        for check, axis, name in checks:
            failed: BaseException | None = None
            subject = trace if needs_trace(check) else answer
            if not blocking:  # fast checks run here; a retry goes through the loop below
                try:
                    verdict = run_check(check, subject, alarm=self.alarm)
                except TRANSIENT_ERRORS as exc:
                    failed = exc
                except ProviderError as exc:
                    raise _Stop(exc) from exc
                else:
                    out.append(verdict_record(name, axis, verdict))
                    continue

            def make(
                check: Callable[[Any], Any] = check, subject: Any = subject, name: str = name
            ) -> Awaitable[Verdict]:
                batched = self.batch_judged.get(id(check))
                if batched is not None:
                    # run --batch: the judge's call goes in a batch, awaited on the loop
                    seed = sample_seed_now()
                    return batched.verdict(check, subject, name, 0 if seed is None else seed)
                if not blocking:

                    async def inline() -> Verdict:
                        return run_check(check, subject, alarm=self.alarm)

                    return inline()
                loop = asyncio.get_running_loop()
                pool = self._pool()
                # in the sample's context, so that a judge sees the sample's seed
                run = contextvars.copy_context().run
                return self._bounded(
                    lambda: loop.run_in_executor(pool, run, run_check, check, subject)
                )

            call = await self._with_retries(make, failed=failed)
            if call.unmeasured is not None and is_judged(check):
                # The judge gave no verdict after retries: the check is unmeasured
                # for the judge, neither passed nor failed, and counted apart.
                out.append(judge_unmeasured(name, axis, call.unmeasured))
                continue
            if call.unmeasured is not None:
                return f"the check {name} could not be scored: {call.unmeasured}"
            if call.error is not None:  # run_check turns check errors into verdicts
                raise call.error
            out.append(verdict_record(name, axis, call.result))
        return out


def _tokens(tokens: Mapping[str, int | None] | None) -> Tokens | None:
    if tokens is None:
        return None
    return Tokens(input=tokens.get("input"), output=tokens.get("output"))


async def _sleep(seconds: float) -> None:
    """The engine's wait between attempts (a seam for tests)."""
    await asyncio.sleep(seconds)


async def run_async(
    suite_or_cases: Any,
    variants: Sequence[Variant | str],
    *,
    runs: int,
    out: str | Path,
    seed: int = 0,
    selection: Selection | None = None,
    retries: Retries | int = 3,
    limits: Limits | None = None,
    resume: bool = False,
    extend: bool = False,
    progress: bool = True,
    judge: Mapping[str, Any] | None = None,
    until_decided: Mapping[str, Any] | None = None,
    batch: Any = None,
    _handle_signals: bool = False,
    **options: Any,
) -> RunOutcome:
    """Run every case with every variant ``runs`` times; write every sample to ``out``.

    See :func:`run`, its synchronous twin, for the parameters. This coroutine
    does not install signal handlers; cancelling it stops starting samples,
    cancels the ones in flight and writes the summary with status
    ``"interrupted"`` before the cancellation propagates.

    The stages: check the arguments; select the cases and read the variants;
    lay out the schedule; let each task prepare (once per run); write the
    manifest (or reopen the file to resume); run the samples, ``concurrency``
    workers at a time; write the summary; release the tasks.
    """
    chosen, retrying, limited = gather(selection, retries, limits, options)
    runs = _checked_arguments(runs=runs, seed=seed, out=out)
    timeout = limited.timeout
    retries, backoff = retrying.count, retrying.backoff
    suite, cases, variant_list = _cases_and_variants(
        suite_or_cases, variants, runs=runs, selection=chosen
    )
    concurrency = limited.concurrency_for(v.task for v in variant_list)
    everyone, cases = _shard_of(cases, chosen.shard)
    judges: dict[int, Any] = {}
    if batch is not None:
        variant_list, concurrency, timeout = _batched(variant_list, batch)
        judges = _batched_judges(cases, batch)
    tasks = list({id(v.task): v.task for v in variant_list}.values())
    await _prepare_tasks(tasks, retries=retries, backoff=float(backoff), seed=seed, timeout=timeout)
    manifest = _run_manifest(
        suite,
        cases,
        variant_list,
        everyone,
        chosen,
        runs=runs,
        seed=seed,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        judge=judge,
        until_decided=until_decided,
    )
    if batch is not None:
        manifest["batch"] = batch.record()
        if judges:
            # The judge's calls go in batches too, billed at the batch price: recorded.
            manifest["batch"]["judge"] = next(iter(judges.values())).describe()
        if resume:
            _retake_unanswered(out)
    by_variant = {v.name: {"completed": 0, "incomplete": 0, "unmeasured": 0} for v in variant_list}
    writer, skipped, count, pending = _open_writer(
        out,
        manifest,
        cases,
        variant_list,
        runs,
        by_variant,
        resume=resume,
        extend=extend,
        everyone=everyone if chosen.shard is not None else None,
        polled=batch is not None,
    )
    if batch is not None:
        tasks += [j.task for j in judges.values()]
        _attach_batches(tasks, writer, out, resume=resume or extend)
    engine = _Engine(
        cases={c.id: c for c in cases},
        variants={v.name: v for v in variant_list},
        seed=seed,
        timeout=timeout,
        retries=retries,
        backoff=float(backoff),
        concurrency=concurrency,
        score_rule=getattr(suite, "score", "mean"),
    )
    if judges:
        _use_batched_judges(engine, judges)
    state = _run_state(by_variant, retrying.stop_after_unmeasured)
    bar = _progress(count, unmeasured=state.unmeasured, enabled=progress)
    loop = asyncio.get_running_loop()
    installed = _install_signal_handlers(loop, state) if _handle_signals else []
    fresh = not (resume or extend)
    try:
        with Alarm.installed(None if timeout is None else float(timeout)) as engine.alarm:
            stop, cancelled, status, reason, elapsed = await _run_and_summarise(
                engine, writer, pending, count, state, bar, concurrency, skipped=skipped
            )
        if batch is not None and status == "interrupted":
            await _cancel_batches(tasks)
    except BaseException:
        _remove_if_empty(out, state, writer, fresh=fresh)
        raise
    finally:
        await _release(loop, installed, bar, engine, tasks)
    if status != "finished":
        _remove_if_empty(out, state, writer, fresh=fresh)
    if cancelled:
        raise asyncio.CancelledError
    if stop is not None:
        raise stop
    return RunOutcome(
        path=str(out),
        status=status,
        samples_written=state.written,
        by_variant=by_variant,
        elapsed_s=elapsed,
        skipped=skipped,
        reason=reason,
    )


def _remove_if_empty(out: str | Path, state: _State, writer: Any, *, fresh: bool) -> None:
    """Remove the file of a new run that ended before writing a sample (a wrong
    model name, an interruption): it holds nothing to resume, and left behind it
    would only refuse the next run to the same path. A file the run wrote a batch
    record to (a batch sent to a provider, which a resume polls instead of paying
    for again) is kept."""
    if fresh and state.written == 0 and writer.batches_written == 0:
        with contextlib.suppress(OSError):
            os.unlink(out)


def _cases_and_variants(
    suite_or_cases: Any,
    variants: Any,
    *,
    runs: int,
    selection: Selection,
) -> tuple[Any, tuple[Any, ...], list[Variant]]:
    """The suite, the cases that run and the variants, checked against each other
    (the sample limit, the schedule's names, conversations sent to plain callables)."""
    suite, cases = _suite_and_cases(suite_or_cases, selection)
    variant_list = _variants(variants)
    samples = len(cases) * runs * len(variant_list)
    if samples > MAX_SAMPLES:
        raise InvalidArgument(
            f"runs={runs} with {len(cases)} cases and {len(variant_list)} variants makes "
            f"{samples:,} samples; the limit is {MAX_SAMPLES:,} samples per run"
        )
    iter_schedule(cases, variant_list, runs)  # checks case ids and variant names now
    _check_conversations(variant_list, cases)
    return suite, cases, variant_list


def _record_options(
    manifest: dict[str, Any],
    *,
    judge: Mapping[str, Any] | None,
    until_decided: Mapping[str, Any] | None,
) -> None:
    """Record in the manifest the judge and the stopping rule, when given."""
    if judge is not None:
        manifest["judge"] = dict(judge)
    if until_decided is not None:
        manifest["until_decided"] = dict(until_decided)


def _batched(variant_list: Sequence[Variant], options: Any) -> tuple[list[Variant], int, None]:
    """The variants with their providers sending batches (``run --batch``), and the
    concurrency and timeout of such a run: every request of the batches in flight
    waits at once, and a batch's wait is bounded by its own time limit."""
    from .providers._batch import BatchOptions, batched

    if not isinstance(options, BatchOptions):
        raise InvalidArgument(f"batch={options!r} must be a BatchOptions")
    wrapped = [dataclasses.replace(v, task=batched(v.task, v.name, options)) for v in variant_list]
    return wrapped, options.size * options.in_flight * len(wrapped), None


def _batched_judges(cases: Sequence[Any], options: Any) -> dict[int, Any]:
    """The judges of the cases' judged checks that send their calls in batches too
    (``run --batch`` with a judge whose provider has a batch API), by the id of the
    judge they stand for. A provider's judge without one is said in one line and
    left to call as before; an in-process judge makes no calls to batch."""
    from ._judge import JudgedCheck
    from .providers import ProviderJudge
    from .providers._batch import batched_judge

    out: dict[int, Any] = {}
    said: set[int] = set()
    for case in cases:
        for check, _axis, _name in checks_of(case):
            judge = check.judge if isinstance(check, JudgedCheck) else None
            if judge is None or id(judge) in out or id(judge) in said:
                continue
            wrapped = batched_judge(judge, options)
            if wrapped is not None:
                out[id(judge)] = wrapped
            elif isinstance(judge, ProviderJudge):
                said.add(id(judge))
                what = f"{judge.provider.kind}:{getattr(judge.provider, 'model', '')}"
                line = (
                    f"evalstats: the judge ({what}) has no batch API evalstats can use; "
                    "its calls are sent one by one"
                )
                print(visible(line, keep=""), file=sys.stderr)
    return out


def _use_batched_judges(engine: _Engine, judges: Mapping[int, Any]) -> None:
    """Score the engine's judged checks whose judge is batched through its batches: each
    such check is scored as a copy asking the batched judge (the suite's own checks are
    left as they are)."""
    import copy

    from ._judge import JudgedCheck

    copies: dict[int, Any] = {}
    for case_id, checks in engine.checks.items():
        swapped = []
        for check, axis, name in checks:
            if isinstance(check, JudgedCheck) and id(check.judge) in judges:
                if id(check) not in copies:
                    twin = copy.copy(check)
                    twin.judge = judges[id(check.judge)]
                    copies[id(check)] = twin
                    engine.batch_judged[id(twin)] = twin.judge
                check = copies[id(check)]
            swapped.append((check, axis, name))
        engine.checks[case_id] = tuple(swapped)


def _retake_unanswered(out: str | Path) -> None:
    """Before a batch run resumes: remove the unmeasured samples its batches gave no
    answer for, so that they are taken again (the batch records keep which)."""
    from ..results._file import drop_samples
    from .providers._batch import unanswered_sample

    if os.path.exists(out):
        dropped = drop_samples(out, unanswered_sample)
        if dropped:
            line = f"evalstats: {out}: taking again {dropped} samples their batches did not answer"
            print(visible(line, keep=""), file=sys.stderr)


def _warn_unpolled(out: str | Path, batches: Sequence[Mapping[str, Any]]) -> None:
    """A batch run resumed without --batch: say that its unfinished batches go unread.

    ``batches`` are the file's batch records, in file order, as its reader kept
    them while the run was resumed (no second pass over the file)."""
    started: set[Any] = set()
    for record in batches:
        if record.get("state") == "submitted":
            started.add(record.get("id"))
        elif record.get("state") in ("ended", "cancelled"):
            started.discard(record.get("id"))
    if started:
        n = len(started)
        line = (
            f"evalstats: {out}: lists {n} batch{'es' * (n > 1)} not seen to end; resumed without "
            "--batch, their requests are sent again one by one (give --batch to poll them)"
        )
        print(visible(line, keep=""), file=sys.stderr)


async def _cancel_batches(tasks: Sequence[Any]) -> None:
    """An interrupted batch run cancels its unfinished batches at the provider."""
    cancelled = 0
    for task in tasks:
        cancel = getattr(task, "cancel_unfinished", None)
        if cancel is not None:
            cancelled += await cancel()
    if cancelled:
        print(
            f"evalstats: cancelled {cancelled} unfinished batch{'es' * (cancelled > 1)} at the "
            "provider; --resume takes what they did not answer",
            file=sys.stderr,
        )


def _attach_batches(tasks: Sequence[Any], writer: Any, out: str | Path, *, resume: bool) -> None:
    """Give each batching task the writer, and the batch records the file holds."""
    recorded: list[dict[str, Any]] = []
    if resume:
        with open(out, "rb") as f:
            for line in f:
                if line.startswith(b'{"type":"batch"'):
                    with contextlib.suppress(ValueError):
                        recorded.append(json.loads(line))
    for task in tasks:
        attach = getattr(task, "attach", None)
        if attach is not None:
            attach(writer, recorded)


def _shard_of(
    cases: tuple[Any, ...], shard: tuple[int, int] | None
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(everyone, cases)``: the run's cases, and the ones this shard runs (all of them
    when it is no shard)."""
    if shard is None:
        return cases, cases
    return cases, shard_cases(cases, shard)


def _shard_slots(
    everyone: Sequence[Any], cases: Sequence[Any], variants: Sequence[Any], runs: int
) -> Iterator[Slot]:
    """The slots of the whole run's schedule over ``everyone`` that take ``cases``: their
    pairs, positions and case indices as in one run."""
    mine = {c if isinstance(c, str) else c.id for c in cases}
    return (s for s in _iter_schedule(everyone, variants, runs) if s.case in mine)


def _run_state(by_variant: dict[str, dict[str, int]], breaker: int | None) -> _State:
    """The run's counters and its circuit breaker (tripping after ``breaker`` unmeasured
    samples in a row), counting the unmeasured samples a resumed file already holds."""
    state = _State(by_variant=by_variant, breaker=breaker)
    state.unmeasured = sum(c["unmeasured"] for c in by_variant.values())  # when resuming
    return state


def _open_writer(
    out: str | Path,
    manifest: dict[str, Any],
    cases: Sequence[Any],
    variant_list: Sequence[Variant],
    runs: int,
    by_variant: dict[str, dict[str, int]],
    *,
    resume: bool,
    extend: bool,
    everyone: Sequence[Any] | None = None,
    polled: bool = True,
) -> tuple[Any, int, int, Iterator[Slot]]:
    """Open the results file (new, resumed or extended): ``(writer, skipped, count,
    pending)``, the samples already there, the number still to take and their slots.

    For a shard, ``everyone`` is the whole run's cases: its slots are the whole
    schedule's slots of ``cases``. A run resumed without ``polled`` (without
    ``--batch``) says which batches the file lists unfinished (:func:`_warn_unpolled`)."""

    def iter_schedule(cases: Sequence[Any], variants: Sequence[Any], runs: int) -> Iterator[Slot]:
        if everyone is None:
            return _iter_schedule(cases, variants, runs)
        return _shard_slots(everyone, cases, variants, runs)

    # The schedule is made afresh each time it is walked, never held: once
    # into the manifest, once (when resuming) to count what the file holds,
    # once as the samples are taken.
    if extend:
        if resume:
            raise InvalidArgument("extend=True and resume=True: extending a run also resumes it")
        writer, done, scheduled = _open_extension(out, manifest, cases, runs, by_variant)
        skipped = sum(1 for s in scheduled if _key(s) in done)
        count = len(scheduled) - skipped
        pending: Iterator[Slot] = (s for s in scheduled if _key(s) not in done)
    else:
        writer, done = _open_results(
            out,
            manifest,
            by_variant,
            resume=resume,
            schedule=(s.to_list() for s in iter_schedule(cases, variant_list, runs)),
            polled=polled,
        )
        skipped = (
            sum(1 for s in iter_schedule(cases, variant_list, runs) if _key(s) in done)
            if done
            else 0
        )
        count = runs * len(cases) * len(variant_list) - skipped
        pending = iter_schedule(cases, variant_list, runs)
        if done:
            pending = (s for s in pending if _key(s) not in done)
    return writer, skipped, count, pending


async def _run_and_summarise(
    engine: _Engine,
    writer: Any,
    pending: Iterator[Slot],
    count: int,
    state: _State,
    bar: Any,
    concurrency: int,
    *,
    skipped: int,
) -> tuple[ProviderError | None, bool, RunStatus, str | None, float]:
    """Take the samples, then write the summary and close the file:
    ``(stop, cancelled, status, reason, elapsed_s)``."""
    t0 = time.perf_counter()
    with writer:
        stop, cancelled = await _run_samples(
            engine, writer, pending, count, state, bar, concurrency
        )
        status: RunStatus = "finished"
        reason: str | None = None
        if stop is not None:
            status, reason = "stopped", f"{type(stop).__name__}: {stop}"
        elif state.interrupted is not None:
            status, reason = "interrupted", state.interrupted
        elapsed = time.perf_counter() - t0
        summary = Summary(
            status=status,
            reason=reason,
            samples=skipped + state.written,
            # Samples from earlier sessions: the run was resumed (or
            # extended) after it may have been looked at.
            resumed_with=skipped if skipped else UNSET,
            by_variant=state.by_variant,
            finished_at=_now(),
            elapsed_s=round(elapsed, 6),
        )
        writer.close(to_record(summary))
    return stop, cancelled, status, reason, elapsed


def _checked_arguments(*, runs: Any, seed: Any, out: Any) -> int:
    """The run's own arguments checked (the options are checked by their objects): runs."""
    runs = whole_number("runs", runs)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgument(f"seed={seed!r} must be a whole number")
    if not isinstance(out, str | Path) or not str(out):
        raise InvalidArgument(f"out={out!r} must be a file path")
    return runs


def _suite_and_cases(suite_or_cases: Any, selection: Selection) -> tuple[Any, tuple[Any, ...]]:
    """The suite and the cases that run: the holdout cases only when asked for, and
    only those the selection (case id patterns, tags, a limit) keeps."""
    suite = _resolve_suite(suite_or_cases)
    cases = tuple(
        suite.select(
            include_holdout=selection.include_holdout,
            ids=selection.case_ids,
            tags=selection.tags,
            limit=selection.limit,
        )
    )
    if not cases:
        raise InvalidArgument(
            f"suite {suite.name!r} has no cases to run"
            + (
                ""
                if selection.include_holdout
                else " (holdout cases run only with include_holdout)"
            )
        )
    return suite, cases


def _variants(variants: Any) -> list[Variant]:
    """The variants, strings parsed by :func:`parse_variant`."""
    if isinstance(variants, Variant | str):
        variants = [variants]
    variant_list = [parse_variant(v) if isinstance(v, str) else v for v in variants]
    for i, v in enumerate(variant_list):
        if not isinstance(v, Variant):
            raise InvalidArgument(f"variants[{i}]={v!r} must be a Variant or 'NAME=TASK'")
    return variant_list


def _check_conversations(variant_list: Sequence[Variant], cases: Sequence[Any]) -> None:
    """A plain callable receives one text: it cannot be sent a conversation."""
    for v in variant_list:
        if isinstance(v.task, CallableTask):
            for case in cases:
                if (
                    getattr(case, "messages", None)
                    and len([m for m in case.messages if m.get("role") != "system"]) > 1
                ):
                    raise InvalidArgument(
                        f"Variant {v.name!r}: case {case.id!r} is a conversation, and the "
                        f"plain callable {v.task.name} receives only the last message's text; "
                        "write a Task to send whole conversations"
                    )


async def _prepare_tasks(
    tasks: Sequence[Any], *, retries: int, backoff: float, seed: int, timeout: float | None
) -> None:
    """Let each task that has one run its ``prepare()``, retrying transient failures.

    A provider asks its service once per run (Ollama: the model's digest and
    the server version, for the manifest; an unknown model fails here, before
    any file is written). A transient failure (429, 5xx, a dropped
    connection) is retried like a sample's, and raised after the last retry,
    or at once when the service asks to wait longer than the run's timeout.
    """
    prepare_rng = random.Random(f"evalstats.engine.prepare:{seed}")
    for task in tasks:
        prepare = getattr(task, "prepare", None)
        if prepare is None:
            continue
        attempt = 0
        while True:
            attempt += 1
            try:
                await prepare()
                break
            except TransientProviderError as exc:
                if attempt > retries:
                    raise
                why = _wait_refused(exc.retry_after, timeout)
                if why is not None:
                    raise TransientProviderError(f"{exc}; {why}") from None
                delay = backoff_delay(
                    attempt, base=backoff, retry_after=exc.retry_after, rng=prepare_rng
                )
                await _sleep(delay)


def _manifest(
    suite: Any,
    cases: Sequence[Any],
    variant_list: Sequence[Variant],
    *,
    runs: int,
    seed: int,
    concurrency: int,
    timeout: float | None,
    retries: int,
    include_holdout: bool,
    selection: Mapping[str, Any],
) -> dict[str, Any]:
    """The manifest line: everything that produced the run.

    Its ``"schedule"`` is written by the results writer from the slots as they
    are made (see :func:`_open_results`), so it is not held here.
    """
    from .. import __version__
    from ..results._file import environment

    env = environment()
    manifest = Manifest(
        evalstats=__version__,
        counting_method=_counting_method(),
        suite=suite.to_dict(),
        cases=[case.to_dict() for case in cases],
        include_holdout=bool(include_holdout),
        selection=dict(selection) or None,
        variants=[v.describe() for v in variant_list],
        runs=runs,
        seed=seed,
        concurrency=concurrency,
        timeout_s=None if timeout is None else float(timeout),
        retries=retries,
        python=env["python"],
        os=env["os"],
        arch=env["arch"],
        machine=env["machine"],
        started_at=_now(),
    )
    return {"type": "manifest", **to_record(manifest)}


def _open_results(
    out: str | Path,
    manifest: Mapping[str, Any],
    by_variant: dict[str, dict[str, int]],
    *,
    resume: bool,
    schedule: Iterator[list[Any]],
    polled: bool = True,
) -> tuple[Any, set[tuple[str, str, int]]]:
    """The writer, and the (case, variant, repeat) samples the file already holds.

    A new file gets the manifest, its ``schedule`` written from ``schedule``
    as the slots come. To resume, the file's manifest must match
    this run's; the samples it holds are counted into ``by_variant``, and,
    without ``polled``, the batches it lists unfinished are named.
    """
    from ..results._file import Results, ResultsWriter, remove_cut_manifest, rewrite_manifest

    done: set[tuple[str, str, int]] = set()
    if resume and remove_cut_manifest(out):
        # A run that was cut off while writing its manifest (a full disk)
        # took no sample: start it again rather than refuse for ever. Its file
        # was looked at and removed under its lock, so a run still writing the
        # manifest is refused as busy instead.
        print(
            visible(
                f"evalstats: {out}: held only a cut-off manifest; starting the run again", keep=""
            ),
            file=sys.stderr,
        )
        resume = False
    if not resume:
        return ResultsWriter.create(out, manifest, schedule=schedule), done

    def same_run(previous: Results) -> None:
        if previous.manifest.get("extensions"):
            # Its schedule is no longer one run's: the extension's slots are taken from it.
            raise ResultsFileError(
                f"{out}: was extended; continue it with the same --extend command "
                "(extend=True), which takes the samples it lacks"
            )
        _refuse_differences(out, previous.manifest, manifest)

    def rewritten(previous: Results) -> dict[str, Any] | None:
        """The file's manifest with this run's prices and sequential budget, or None
        when they are the same; refuses first what is not the same run."""
        same_run(previous)
        old = previous.manifest
        new = dict(old)
        if _norm(old.get("variants")) != _norm(manifest.get("variants")):
            history = list(old.get("repriced") or [])
            history.append({"at": _now(), "variants": old.get("variants")})
            new.update(variants=manifest["variants"], repriced=history)
        budget = _budget(old.get("until_decided"), manifest.get("until_decided"))
        if budget is not None:
            new["until_decided"] = budget
        return new if new != old else None

    rewrite_manifest(out, rewritten)
    writer, previous = ResultsWriter.resume(out, check=same_run)
    done = _held(previous, by_variant)
    for warning in previous.warnings:
        print(visible(f"evalstats: {out}: {warning}", keep=""), file=sys.stderr)
    if not polled:
        _warn_unpolled(out, previous.batches)
    return writer, done


def check_resumable(
    suite_or_cases: Any,
    variants: Sequence[Variant | str],
    *,
    runs: int,
    out: str | Path,
    seed: int = 0,
    selection: Selection | None = None,
    retries: Retries | int = 3,
    limits: Limits | None = None,
    judge: Mapping[str, Any] | None = None,
    until_decided: Mapping[str, Any] | None = None,
    **options: Any,
) -> None:
    """Refuse, as ``run(..., resume=True)`` would, a run that is not the one ``out``
    holds, without running anything and without writing to the file.

    For a resume that has nothing left to take (a run until decided that has
    its verdict or has spent its budget), which would otherwise not compare
    this run with the file's at all. The options of :func:`run` that do not
    make the run (``progress``, ``batch``, ...) are taken and left unused.
    """
    from ..results._file import read_results
    from ._options import _SHORTHAND

    shorthand = {k: v for k, v in options.items() if k in _SHORTHAND}
    chosen, _, limited = gather(selection, retries, limits, shorthand)
    runs = _checked_arguments(runs=runs, seed=seed, out=out)
    suite, cases, variant_list = _cases_and_variants(
        suite_or_cases, variants, runs=runs, selection=chosen
    )
    everyone, cases = _shard_of(cases, chosen.shard)
    manifest = _run_manifest(
        suite,
        cases,
        variant_list,
        everyone,
        chosen,
        runs=runs,
        seed=seed,
        concurrency=1,
        timeout=limited.timeout,
        retries=0,
        judge=judge,
        until_decided=until_decided,
    )
    _refuse_differences(out, read_results(out).manifest, manifest)


def _run_manifest(
    suite: Any,
    cases: Sequence[Any],
    variant_list: Sequence[Variant],
    everyone: Any,
    chosen: Selection,
    *,
    runs: int,
    seed: int,
    concurrency: int,
    timeout: Any,
    retries: int,
    judge: Mapping[str, Any] | None,
    until_decided: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The manifest of a run: its cases, variants and settings, its judge and
    stopping rule, and for a shard the shard it is of the whole run."""
    manifest = _manifest(
        suite,
        cases,
        variant_list,
        runs=runs,
        seed=seed,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        include_holdout=chosen.include_holdout,
        selection=chosen.record(),
    )
    _record_options(manifest, judge=judge, until_decided=until_decided)
    if chosen.shard is not None:
        manifest["shard"] = shard_record(manifest, everyone, chosen.shard)
    return manifest


def _refuse_differences(out: str | Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse to resume the run of manifest ``old`` as the run of manifest ``new``
    when they differ in what makes the run (:func:`_differences`)."""
    differ = _differences(old, new)
    if differ:
        raise ResultsFileError(
            f"{out}: cannot resume: this run differs from the file's in {', '.join(differ)}"
        )


def _budget(old: Any, new: Any) -> dict[str, Any] | None:
    """A sequential run's stopping rule with this session's budget, or None when it is
    the same.

    A resume of a run until decided may change ``max_runs`` (the deciding module
    refuses one below the rounds already taken): the anytime-valid comparison
    stays valid however long it runs. The manifest then records the budget the
    run now has, so that readers accept its later rounds, and under
    ``"budgets"`` each change: when, and from how many rounds to how many."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return None
    was, now = old.get("max_runs"), new.get("max_runs")
    if not isinstance(now, int) or was == now:
        return None
    history = list(old.get("budgets") or [])
    history.append({"at": _now(), "max_runs": [was, now]})
    return dict(old, max_runs=now, budgets=history)


def _held(previous: Any, by_variant: dict[str, dict[str, int]]) -> set[tuple[str, str, int]]:
    """The (case, variant, repeat) samples a file holds, counted into ``by_variant``."""
    done: set[tuple[str, str, int]] = set()
    for record in previous.samples:
        key = (record.get("case"), record.get("variant"), record.get("repeat"))
        if key in done:
            continue
        done.add(key)  # type: ignore[arg-type]
        counts = by_variant.get(record.get("variant"))  # type: ignore[arg-type]
        if counts is not None and record.get("status") in counts:
            counts[record["status"]] += 1
    return done


def _key(slot: Slot) -> tuple[str, str, int]:
    return (slot.case, slot.variant, slot.repeat)


# --- extending a finished run ---------------------------------------------------------


def _case_fields(case: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest case with empty fields left out, so a file from a version that did not
    write a field (no tags, not holdout) reads as the same case."""
    return {k: v for k, v in case.items() if v not in (None, False, "", [], {})}


def _extension(
    previous: Any,
    manifest: Mapping[str, Any],
    cases: Sequence[Any],
    runs: int,
) -> dict[str, Any] | None:
    """The manifest of ``previous`` grown to ``runs`` repeats and this run's cases, or
    None when its schedule already holds them all; refuses what is not the same run.

    The new slots are those of a fresh :func:`schedule` over the file's cases
    (in their order) then the added ones, with ``runs`` repeats, that the
    file's schedule lacks: more repeats of every case, and every repeat of an
    added case. Each case keeps alternating who goes first from repeat to
    repeat, as in one run of that length; the new pairs are numbered after the
    file's. The sample seeds depend on the case, the repeat and the seed, so an
    extension takes the samples a longer run would have taken.
    """
    old = previous.manifest
    shown = previous.path
    if isinstance(old.get("until_decided"), Mapping):
        raise InvalidArgument(
            f"{shown}: a sequential run (--until-decided) grows round by round; continue it "
            "with --until-decided and --resume"
        )
    shard = old.get("shard")
    if isinstance(shard, Mapping):
        # Its pairs are numbered in the whole run's schedule and its manifest holds the
        # whole run's digest: extended alone, it would no longer merge with the others.
        raise InvalidArgument(
            f"{shown}: is shard {shard.get('index')}/{shard.get('count')} of a run, one share "
            "of a fixed run; merge the shards (evalstats merge), then extend the merged file"
        )
    slots = old.get("schedule")
    old_runs = old.get("runs")
    listed = old.get("cases")
    if (
        not isinstance(slots, list)
        or not slots
        or not isinstance(old_runs, int)
        or not isinstance(listed, list)
        or not all(isinstance(c, Mapping) and isinstance(c.get("id"), str) for c in listed)
    ):
        raise InvalidArgument(
            f"{shown}: its manifest has no schedule, runs and cases; only a results file "
            "written by evalstats run can be extended"
        )
    problems = []
    names_old = [v.get("name") for v in old.get("variants") or () if isinstance(v, Mapping)]
    names_new = [v["name"] for v in manifest["variants"]]
    if sorted(map(str, names_old)) != sorted(names_new):
        problems.append(f"the variants ({names_old} in the file, {names_new} in this run)")
    else:
        mine = {v["name"]: without_prices(v) for v in manifest["variants"]}
        for v in old["variants"]:
            if canonical_json(without_prices(v)) != canonical_json(mine[v["name"]]):
                problems.append(f"variant {v['name']!r}")
    for key in ("seed", "include_holdout", "judge", "counting_method"):
        if canonical_json(old.get(key)) != canonical_json(manifest.get(key)):
            problems.append(
                f"{key} (the file has {old.get(key)!r}, this run {manifest.get(key)!r})"
            )
    new_cases = {c.id: c.to_dict() for c in cases}
    old_ids = [c["id"] for c in listed]
    missing = [c for c in old_ids if c not in new_cases]
    if missing:
        problems.append(
            "the cases: " + ", ".join(repr(c) for c in missing[:3]) + " of the file not selected"
        )
    changed = [
        c
        for c in listed
        if c["id"] in new_cases
        and canonical_json(_case_fields(c)) != canonical_json(_case_fields(new_cases[c["id"]]))
    ]
    if changed:
        problems.append(
            "case " + ", ".join(repr(c["id"]) for c in changed[:3]) + " (rescore for new checks)"
        )
    if problems:
        raise ResultsFileError(
            f"{shown}: cannot extend: this run differs from the file's in " + "; ".join(problems)
        )
    if runs < old_runs:
        raise InvalidArgument(
            f"runs={runs} is fewer than the file's {old_runs}; --runs is the total of repeats "
            "after the extension"
        )
    added = [c for c in new_cases if c not in set(old_ids)]
    order = old_ids + added
    names = [str(n) for n in names_old]
    taken = {(s[0], int(s[1]), s[4]) for s in slots if isinstance(s, list) and len(s) >= 5}
    pair = max(int(s[2]) for s in slots) + 1
    extra: list[list[Any]] = []
    last: tuple[str, int] | None = None
    for slot in _slots(order, names, runs):
        if (slot.case, slot.repeat, slot.variant) in taken:
            continue
        if last is not None and (slot.case, slot.repeat) != last:
            pair += 1
        last = (slot.case, slot.repeat)
        extra.append([slot.case, slot.repeat, pair, slot.position, slot.variant])
    if not extra:
        return None
    grown = {k: v for k, v in old.items() if k not in ("type", "format", "schedule")}
    grown["runs"] = runs
    grown["cases"] = list(listed) + [new_cases[c] for c in added]
    history = list(old.get("extensions") or [])
    history.append(
        {
            "at": _now(),
            "runs": [old_runs, runs],
            "cases_added": added,
            "samples_added": len(extra),
            "evalstats": manifest.get("evalstats"),
            "selection": manifest.get("selection"),
            "variants": manifest.get("variants"),
            "machine": manifest.get("machine"),
        }
    )
    grown["extensions"] = history
    grown["schedule"] = list(slots) + extra
    return grown


def _open_extension(
    out: str | Path,
    manifest: Mapping[str, Any],
    cases: Sequence[Any],
    runs: int,
    by_variant: dict[str, dict[str, int]],
) -> tuple[Any, set[tuple[str, str, int]], list[Slot]]:
    """Grow the file's schedule (recording the extension in its manifest), then open it
    to append: the writer, the samples it holds, and every slot of its schedule."""
    from ..results._file import ResultsWriter, rewrite_manifest

    rewrite_manifest(out, lambda previous: _extension(previous, manifest, cases, runs))
    writer, previous = ResultsWriter.resume(out)
    for warning in previous.warnings:
        print(visible(f"evalstats: {out}: {warning}", keep=""), file=sys.stderr)
    done = _held(previous, by_variant)
    index = {c["id"]: i for i, c in enumerate(previous.manifest["cases"])}
    scheduled = [
        Slot(str(s[0]), index.get(s[0], 0), int(s[1]), int(s[2]), int(s[3]), str(s[4]))
        for s in previous.manifest["schedule"]
    ]
    return writer, done, scheduled


def _install_signal_handlers(loop: asyncio.AbstractEventLoop, state: _State) -> list[int]:
    """On SIGINT and SIGTERM, stop starting samples and cancel the workers."""

    def on_signal(signum: int) -> None:
        if state.interrupted is None:
            state.interrupted = f"interrupted by {signal.Signals(signum).name}"
        state.stopping = True
        for w in state.workers:
            w.cancel()

    installed: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover
            pass
    return installed


async def _run_samples(
    engine: _Engine,
    writer: Any,
    pending: Iterator[Slot],
    count: int,
    state: _State,
    bar: Any,
    concurrency: int,
) -> tuple[ProviderError | None, bool]:
    """Run the ``count`` pending samples, ``concurrency`` workers at a time, writing each record.

    Each worker lets the event loop run after every sample, even when the
    task never waits: so the workers take turns, a signal is seen between
    samples, and the loop clears the timeout timers the samples cancelled
    (which it does only when it runs), instead of keeping one per sample.

    Returns the provider error that stopped the run (or None) and whether the
    run was cancelled.
    """
    queue = pending
    by_variant = state.by_variant

    def write(slot: Slot, record: Sample) -> None:
        writer.write_sample(record)
        state.written += 1
        by_variant[slot.variant][record.status] += 1
        if bar is not None:
            if record.status == "unmeasured":
                state.unmeasured += 1
                bar.set_postfix(unmeasured=state.unmeasured, refresh=False)
            bar.update(1)

    async def worker() -> None:
        for slot in queue:
            if state.stopping:
                return
            record = await engine.sample(slot)
            if state.breaker and record.status == "unmeasured":
                # Held back while they come in a row: if the breaker trips they are
                # not written, so a resumed run takes those samples again.
                state.held.append((slot, record))
                if len(state.held) >= state.breaker and state.tripped is None:
                    state.tripped = str(record.reason or "no answer")
                    state.stopping = True
                    return
            else:
                if state.tripped is None:
                    for held in state.held:
                        write(*held)
                    state.held.clear()
                write(slot, record)
            await asyncio.sleep(0)

    stop: ProviderError | None = None
    cancelled = False
    n = min(concurrency, count)
    state.workers = [asyncio.ensure_future(worker()) for _ in range(n)]
    try:
        if state.workers:
            await asyncio.wait(state.workers, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        cancelled = True
        state.interrupted = state.interrupted or "the run was cancelled"
    state.stopping = True
    for w in state.workers:
        w.cancel()
    results = await asyncio.gather(*state.workers, return_exceptions=True)
    for r in results:
        if isinstance(r, _Stop):
            stop = stop or r.error
        elif isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
            raise r
    if state.tripped is None:
        for held in state.held:
            write(*held)
    elif stop is None:
        stop = ProviderError(
            f"stopped after {state.breaker} samples in a row were unmeasured (the last: "
            f"{state.tripped}); the service is not answering. Every measured sample is in "
            "the file; fix the service and continue with --resume"
        )
    state.held.clear()
    return stop, cancelled


async def _release(
    loop: asyncio.AbstractEventLoop,
    installed: Sequence[int],
    bar: Any,
    engine: _Engine,
    tasks: Sequence[Any],
) -> None:
    """Remove the signal handlers, close the bar and the worker threads, close the tasks."""
    for installed_sig in installed:
        loop.remove_signal_handler(installed_sig)
    if bar is not None:
        bar.close()
    if engine.executor is not None:
        engine.executor.shutdown(wait=False, cancel_futures=True)
    for task in tasks:
        aclose = getattr(task, "aclose", None)
        if aclose is not None:
            await aclose()


def _counting_method() -> str:
    from ..results._file import COUNTING_METHOD

    return COUNTING_METHOD


def _progress(total: int, *, unmeasured: int, enabled: bool) -> Any:
    """A tqdm bar on stderr: samples done of ``total``, unmeasured so far, time left."""
    if not enabled:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, file=sys.stderr, unit="sample", dynamic_ncols=True, leave=True)
    bar.set_postfix(unmeasured=unmeasured, refresh=False)
    return bar


def run(suite_or_cases: Any, variants: Sequence[Variant | str], **arguments: Any) -> RunOutcome:
    """Run every case with every variant ``runs`` times and write each sample to ``out``.

    The samples follow :func:`schedule` (repeat by repeat, variants
    alternating who goes first), ``concurrency`` at a time, and each is
    written to the JSONL file ``out`` as it finishes: a manifest first, one
    record per sample, a summary last.

    Per sample: the variant renders the case's prompt; the task answers within
    ``timeout`` seconds; a transient error or timeout is retried up to
    ``retries`` times, waiting by exponential backoff with full jitter (base
    ``backoff`` seconds, doubling, capped at 30 s, at least the service's
    ``retry_after``); after the last retry the sample is ``unmeasured``. A
    task that raises any other exception, or returns an empty answer or no
    text, gives an ``incomplete`` sample whose checks all fail as ``could not
    be inspected``. Every check then scores the answer; a model-graded check
    that fails transiently is retried the same way; after its last retry a
    judged check (``judged_by``) is recorded ``unscored`` and marked
    ``judge_unmeasured`` (the judge gave no verdict: neither passed nor
    failed), and any other blocking check leaves the sample ``unmeasured``.
    Unmeasured samples record no verdicts. A :class:`~evalstats.errors.ProviderError` that is not
    transient (from the task or a check) stops the run: the samples in flight
    are dropped, the summary says ``"stopped"`` and the error is raised once
    the file is closed.

    Each record holds the exact prompt sent, the answer (when it is text),
    the task's trace, tokens and model when it reports them, every check's
    verdict, ``attempts`` and ``latency_s``: the seconds from the start of
    the first attempt to the end of the last, retries and their waits
    included, checks excluded. The manifest lists the cases that run (the
    holdout cases only with ``include_holdout``), the variants with their
    task descriptions and exact transforms, and the whole schedule.

    Parameters
    ----------
    suite_or_cases : Suite, str, path or list of Case
        A suite, a suite file or ``"shop"`` (see :func:`evalstats.running._suite.find_suite`),
        or a list of cases.
    variants : sequence of Variant or str
        At least one, with unique names; strings are parsed by :func:`parse_variant`.
    runs : int
        Repeats of every case with every variant.
    out : str or path
        The results file. It must not exist, unless ``resume`` is true.
    concurrency : int, optional
        Samples in flight at once (1: one after the other); by default 8 when
        a variant's task is a model service over HTTP, otherwise 1.
    timeout : float or None, optional
        Seconds each attempt may take (60; when it is not given, a ``cmd:``
        task's command keeps its own default of 130 s). A plain sync callable
        task runs in a worker thread so that its timeout can be enforced; with
        ``timeout=None`` it runs in the event loop's thread, which is faster
        but blocks the loop while it runs. A thread that times out cannot be
        killed: it finishes in the background and its answer is discarded.
    retries : int, optional
        Retries of a transient failure (3): at most ``retries + 1`` attempts.
    seed : int, optional
        The run's seed; each sample's seed is :func:`sample_seed` of it.
    include_holdout : bool, optional
        Also run the cases marked ``holdout``.
    resume : bool, optional
        ``out`` is an earlier, unfinished results file: check that its
        manifest matches this run (suite hash, cases, variants, runs, seed,
        include_holdout, judge, shard, and for a run until decided that it
        is resumed as one), drop a truncated last line, and run only the
        samples it lacks (an unmeasured sample is not missing: it stays, and
        is not run again). Concurrency, timeout and retries may differ; the
        file keeps its first manifest.
    progress : bool, optional
        Show a progress bar on stderr (samples done, unmeasured so far, time left).
    backoff : float, optional
        The first retry's backoff ceiling in seconds (0.5).
    judge : mapping, optional
        What judges the suite's ``judged_by`` checks (``{"spec": ...}``, from
        ``--judge``), recorded in the manifest: runs with different judges are
        not comparable.
    case_ids, tags, limit : optional
        Run part of the suite: the cases whose id matches one of the
        shell-style patterns ``case_ids``, that carry one of ``tags``, the
        first ``limit`` of them (see :meth:`~evalstats.running._suite.Suite.select`).
        The selection is recorded in the manifest under ``"selection"``.
    stop_after_unmeasured : int or None, optional
        The circuit breaker: when this many samples in a row are unmeasured
        (20), the service is taken to be down and the run stops with a
        :class:`~evalstats.errors.ProviderError`, status ``"stopped"``. Those
        unmeasured samples are not written, so ``resume=True`` takes them
        again once the service answers. None turns the breaker off.
    until_decided : mapping, optional
        Set by :func:`evalstats.deciding._until_decided.run_until_decided`, which calls
        this once per round: recorded in the manifest, and it lets a resume
        add rounds (``runs`` may grow).
    batch : BatchOptions, optional
        Send the requests of the variants' providers (``openai:``,
        ``anthropic:``, ``gemini:``) through their batch APIs
        (:mod:`evalstats.running.providers._batch`): each batch recorded in
        ``out`` before the run waits on it, polled again on resume; the run's
        concurrency is every request of the batches in flight, and a batch's
        wait is bounded by its own time limit instead of ``timeout``. The
        options are recorded in the manifest under ``"batch"``. Refused for a
        task without a batch API. The suite's judged checks whose judge is a
        provider's with a batch API send their judge's calls in batches too
        (recorded under ``"batch"`` as ``"judge"``); another provider's judge
        is said in one line and called as without batches.
    extend : bool, optional
        Add to the finished (or interrupted) run in ``out``: grow it to
        ``runs`` repeats of every case, and run every repeat of the cases
        this suite selects that the file lacks. The new slots are those a
        single run of ``runs`` repeats over the file's cases (then the added
        ones) would have: each case keeps alternating which variant goes
        first, the new pairs are numbered after the file's, and the sample
        seeds are the ones that run would use. The file's manifest is
        rewritten (the samples kept byte for byte, the file replaced in one
        step) with the new runs, cases and schedule, and an entry under
        ``"extensions"`` saying when, from how many runs to how many, which
        cases were added and with which variants (prices included). The
        variants (prices aside), seed, judge, holdout cases and the file's
        cases must be the same; a changed case is refused, and so are a run
        until decided and a shard (merge the shards, then extend the merged
        file). Running the same extension again completes it after an
        interruption.

    Returns
    -------
    RunOutcome
        ``status`` is ``"finished"``, or ``"interrupted"`` after SIGINT or
        SIGTERM (resume with ``resume=True``).

    Raises
    ------
    ResultsFileError
        ``out`` exists (and ``resume`` is false; the file is left untouched),
        or it cannot be resumed.
    ProviderError
        A non-transient provider error stopped the run (after the file was closed).

    Examples
    --------
    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "results.jsonl")
    >>> outcome = run("shop", ["old=standin:shop-v1", "new=standin:shop-v2"],
    ...               runs=5, out=out, progress=False)
    >>> outcome.status, outcome.samples_written
    ('finished', 40)
    >>> outcome.by_variant["new"]
    {'completed': 20, 'incomplete': 0, 'unmeasured': 0}
    """
    if _loop_running():
        # Called from code that already runs an event loop (a Jupyter cell, an
        # async web handler): asyncio.run would refuse, so the run gets its own
        # loop in a worker thread, and this call waits for it. Signals are the
        # host's to handle there.
        return _in_worker_thread(
            lambda: asyncio.run(
                run_async(suite_or_cases, variants, _handle_signals=False, **arguments)
            )
        )
    return asyncio.run(
        run_async(suite_or_cases, variants, _handle_signals=_in_main_thread(), **arguments)
    )


# run takes run_async's arguments, written once: help() and editors show them.
run.__signature__ = inspect.signature(run_async).replace(  # type: ignore[attr-defined]
    parameters=[
        p for p in inspect.signature(run_async).parameters.values() if p.name != "_handle_signals"
    ],
    return_annotation=RunOutcome,
)


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _loop_running() -> bool:
    """Whether this thread is already running an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _in_worker_thread(call: Any) -> Any:
    """``call()`` in a new thread, its result or exception returned here."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalstats-run") as pool:
        return pool.submit(call).result()
