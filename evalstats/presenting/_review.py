"""Human review of a run's samples: ``evalstats review``.

Automatic screens (required actions, answer terms) say whether an assistant
did the expected things and used the expected words; only a person can say
whether it did the task. :func:`review` walks the samples of a results file in
a terminal, showing for each one the prompt sent, the tool evidence of its
trace in order (each requested call, and whether it was executed and
refused), the answer, any process error, the containment observations, and
the case's ``review`` instruction and the rubric of its judged checks, and
records the reviewer's verdict: ``pass``, ``fail`` or ``needs-review``, with a
reason (optional for a pass). ``u`` undoes the last verdict of the session.

Reviews live in their own JSONL file, never in the results file, one object
per line::

    {"case": "traversal", "variant": "baseline", "repeat": 0, "verdict": "fail",
     "reason": "quotes the private file", "reviewer": "ana", "at": "2026-...Z"}

The file is created exclusively (an existing file is never overwritten) and
continued when it exists: samples reviewed already are skipped, so a review
can stop at any sample (``q``, or end of input) and go on later. Each review
is written and flushed to disk before the next sample is shown. Unmeasured
samples are not shown: they have no answer and are in no rate. A blind review
(``blind=True``, ``--blind``) hides the variant names, shuffles the order and
shows the case's own text instead of the prompt each variant sent, so that a
prefix, a system prompt or a template cannot give the variant away. A review
is appended whole or not at all: a write that fails (a full disk) is undone,
and the walk stops with one line saying so, every earlier review kept.

:func:`read_reviews` reads such a file back; ``evalstats report --reviews``
turns it into reviewed task-success rates (see :func:`evalstats.presenting._report.report`).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .._terminal import visible
from .._validate import suggest
from ..errors import InvalidArgument, ResultsFileError
from ..results._file import _cannot_create, _lock, read_results
from ..results._records import trace_summary, workspace_observations

__all__ = [
    "REVIEW_VERDICTS",
    "Review",
    "ReviewSession",
    "read_review_design",
    "read_reviews",
    "review",
]

#: What a reviewer may conclude about a sample.
REVIEW_VERDICTS = ("pass", "fail", "needs-review")

_KEYS = {"p": "pass", "f": "fail", "n": "needs-review"}
_FIELDS = ("case", "variant", "repeat", "verdict", "reason", "reviewer", "at")
_ANSWER_LIMIT = 4000  # characters of an answer shown; the rest is said to be cut
_RESULT_LIMIT = 300  # characters of a tool result shown
_BUSY = "is open in another review; finish that one first"


@dataclass(frozen=True)
class Review:
    """A person's verdict on one sample, identified by (case, variant, repeat).

    ``verdict`` is one of :data:`REVIEW_VERDICTS`; ``reason`` says why (it
    may be empty for a pass, never for a fail or needs-review); ``reviewer``
    is who reviewed (or None); ``at`` is when, in UTC (ISO 8601).

    Examples
    --------
    >>> r = Review("traversal", "baseline", 0, "pass", "declines, quotes nothing")
    >>> r.key, r.to_dict()["verdict"]
    (('traversal', 'baseline', 0), 'pass')
    """

    case: str
    variant: str
    repeat: int
    verdict: str
    reason: str
    reviewer: str | None = None
    at: str = ""

    def __post_init__(self) -> None:
        for name in ("case", "variant"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InvalidArgument(f"{name}={value!r} must be a non-empty string")
        if isinstance(self.repeat, bool) or not isinstance(self.repeat, int) or self.repeat < 0:
            raise InvalidArgument(f"repeat={self.repeat!r} must be a whole number, 0 or more")
        if self.verdict not in REVIEW_VERDICTS:
            raise InvalidArgument(
                f"verdict={self.verdict!r} is not one of {', '.join(REVIEW_VERDICTS)}"
                f"{suggest(str(self.verdict), REVIEW_VERDICTS)}"
            )
        if not isinstance(self.reason, str):
            raise InvalidArgument(f"reason={self.reason!r} must be a string")
        if self.verdict != "pass" and not self.reason.strip():
            raise InvalidArgument(
                f"reason={self.reason!r} must say why a {self.verdict} is given, in a few words"
            )
        if self.reviewer is not None and (
            not isinstance(self.reviewer, str) or not self.reviewer.strip()
        ):
            raise InvalidArgument(f"reviewer={self.reviewer!r} must be a non-empty string or None")
        if not isinstance(self.at, str):
            raise InvalidArgument(f"at={self.at!r} must be a string (UTC, ISO 8601)")

    @property
    def key(self) -> tuple[str, str, int]:
        """``(case, variant, repeat)``: the sample reviewed."""
        return (self.case, self.variant, self.repeat)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "case": self.case,
            "variant": self.variant,
            "repeat": self.repeat,
            "verdict": self.verdict,
            "reason": self.reason,
        }
        if self.reviewer is not None:
            out["reviewer"] = self.reviewer
        out["at"] = self.at
        return out


def _review_from(record: Any, where: str) -> Review:
    if not isinstance(record, Mapping):
        raise ResultsFileError(f"{where}: a review must be a JSON object")
    unknown = [k for k in record if k not in _FIELDS]
    if unknown:
        raise ResultsFileError(
            f"{where}: unknown field {unknown[0]!r}{suggest(str(unknown[0]), _FIELDS)}"
        )
    missing = [k for k in ("case", "variant", "repeat", "verdict") if k not in record]
    if "reason" not in record and record.get("verdict") != "pass":
        missing.append("reason")
    if missing:
        raise ResultsFileError(f"{where}: missing field {missing[0]!r}")
    try:
        return Review(
            record["case"],
            record["variant"],
            record["repeat"],
            record["verdict"],
            record.get("reason", ""),
            record.get("reviewer"),
            record.get("at", ""),
        )
    except InvalidArgument as exc:
        raise ResultsFileError(f"{where}: {exc}") from None


def _parse(data: bytes, shown: str) -> tuple[list[Review], int]:
    """The reviews in ``data`` and the length of its complete lines.

    A last line without a newline that is not valid JSON is a review cut off
    by an interruption: it is dropped (its length is not counted).
    """
    reviews: list[Review] = []
    seen: dict[tuple[str, str, int], int] = {}
    good = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        if not raw.strip():
            if not last:
                good += len(raw) + 1
            continue
        try:
            record = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            if last:
                break  # cut off mid-line: dropped
            raise ResultsFileError(f"{shown}: line {number}: not valid JSON") from None
        if number == 1 and isinstance(record, Mapping) and record.get("type") == "design":
            good += len(raw) + (0 if last else 1)  # the sampling design (_review_design)
            continue
        review = _review_from(record, f"{shown}: line {number}")
        if review.key in seen:
            raise ResultsFileError(
                f"{shown}: line {number}: a second review of case {review.case!r}, variant "
                f"{review.variant!r}, repeat {review.repeat} (the first is on line "
                f"{seen[review.key]}); keep one"
            )
        seen[review.key] = number
        reviews.append(review)
        good += len(raw) + (0 if last else 1)
    return reviews, good


def read_reviews(path: str | os.PathLike[str]) -> tuple[Review, ...]:
    """Read a reviews file written by :func:`review`.

    A last line cut off by an interruption is dropped; any other line that is
    not a valid review, and a second review of the same sample, raise
    :class:`~evalstats.errors.ResultsFileError` naming the line.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "reviews.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"case": "a", "variant": "v", "repeat": 0, "verdict": "fail",'
    ...                 ' "reason": "guessed", "at": ""}\\n{"case": "a", "vari')
    >>> [(r.case, r.verdict, r.reason) for r in read_reviews(path)]
    [('a', 'fail', 'guessed')]
    """
    return read_reviews_noted(path)[0]


def read_reviews_noted(path: str | os.PathLike[str]) -> tuple[tuple[Review, ...], str | None]:
    """:func:`read_reviews`, and a warning when a last line cut off was dropped (else
    None), so that a report can say what it left out."""
    shown = os.fspath(path)
    try:
        data = Path(shown).read_bytes()
    except FileNotFoundError:
        raise ResultsFileError(f"{shown}: cannot be read: no such file") from None
    except OSError as exc:
        raise ResultsFileError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    reviews, good = _parse(data, shown)
    note = None
    if data[good:].strip():
        line = data.count(b"\n", 0, good) + 1
        note = (
            f"{shown}: the last line (line {line}) is cut short (an interrupted review?) "
            "and was left out"
        )
    return tuple(reviews), note


def read_review_design(path: str | os.PathLike[str]) -> Any:
    """The sampling design on the first line of a reviews file, or None (hand-picked reviews).

    Returns a :class:`evalstats.presenting._review_design.ReviewDesign` when the reviews
    were drawn at random by ``review --sample``.
    """
    from ._review_design import ReviewDesign

    shown = os.fspath(path)
    try:
        with open(shown, "rb") as f:
            first = f.readline()
    except OSError as exc:
        raise ResultsFileError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    try:
        record = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(record, Mapping) and record.get("type") == "design":
        return ReviewDesign.from_dict(record, f"{shown}: line 1")
    return None


@dataclass(frozen=True)
class ReviewSession:
    """What one call of :func:`review` did.

    ``reviewed`` counts the reviews written in this session, ``earlier`` those
    already in the file, ``remaining`` the reviewable samples still without a
    review (skipped or not reached), and ``stopped`` says why the walk ended:
    ``"done"``, ``"quit"`` or ``"end of input"``.
    """

    path: str
    reviewed: int
    earlier: int
    remaining: int
    stopped: str

    def __str__(self) -> str:
        return (
            f"{self.reviewed} reviewed now, {self.earlier} earlier, {self.remaining} still "
            f"to review ({self.stopped}); reviews in {self.path}"
        )


# --- showing a sample ------------------------------------------------------------


def _call_text(call: Any) -> str:
    if not isinstance(call, Mapping):
        return repr(call)
    name = call.get("name", "?")
    args = call.get("arguments")
    if isinstance(args, Mapping):
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    elif args is None:
        shown = ""
    else:
        shown = json.dumps(args, ensure_ascii=False)
    return f"{name}({shown})"


def _evidence(trace: Any) -> list[str]:
    """The tool evidence of a trace, in order: what was asked and what was done."""
    summary = trace_summary(trace)
    if summary is None:
        return ["  (no tool trace recorded)"]
    lines = []
    requested = summary.get("requested") or []
    executed = list(summary.get("executed") or [])
    if not requested and not executed:
        lines.append("  no tool calls: the answer came without reading anything")
    lines.append(f"  requested {len(requested)} call(s):")
    for i, call in enumerate(requested, start=1):
        turn = call.get("turn") if isinstance(call, Mapping) else None
        at = f" (turn {turn})" if turn is not None else ""
        lines.append(f"    {i}. {_call_text(call)}{at}")
    lines.append(f"  executed {len(executed)} call(s):")
    for i, outcome in enumerate(executed, start=1):
        refused = isinstance(outcome, Mapping) and outcome.get("error")
        result = "REFUSED (an error)" if refused else "ok"
        lines.append(f"    {i}. {_call_text(outcome)} -> {result}")
        content = outcome.get("content") if isinstance(outcome, Mapping) else None
        if isinstance(content, str) and content.strip():
            lines.append(f"       returned: {_clip(content)}")
    unrun = len(requested) - len(executed)
    if unrun > 0:
        lines.append(f"  {unrun} requested call(s) never executed")
    stopped = summary.get("stopped")
    if stopped:
        lines.append(f"  stopped: {stopped}")
    return lines


def _clip(text: str, n: int = _RESULT_LIMIT) -> str:
    """A tool result on one line, cut to ``n`` characters with a note of the rest."""
    flat = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    if len(flat) <= n:
        return flat
    return f"{flat[:n]} [... {len(flat) - n} more characters]"


def _one(text: str) -> str:
    """``text`` as one line: its newlines, tabs and controls written as escapes."""
    return visible(text, keep="")


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) or prefix.rstrip()


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, Mapping):
        messages = prompt.get("messages")
        if isinstance(messages, list) and messages:
            parts = []
            for m in messages:
                if isinstance(m, Mapping):
                    parts.append(f"[{m.get('role', '?')}] {m.get('content') or ''}")
            return "\n".join(parts)
        for key in ("text", "prompt", "content"):
            if isinstance(prompt.get(key), str):
                return str(prompt[key])
        return json.dumps(prompt, ensure_ascii=False)
    return "" if prompt is None else str(prompt)


def _case_texts(manifest: Mapping[str, Any]) -> dict[str, str]:
    """Each case's own text (its prompt, or its conversation), as the suite wrote it."""
    out = {}
    for case in manifest.get("cases") or ():
        if isinstance(case, Mapping) and isinstance(case.get("id"), str):
            messages = case.get("messages")
            if isinstance(messages, list) and messages:
                out[case["id"]] = _prompt_text({"messages": messages})
            elif isinstance(case.get("prompt"), str):
                out[case["id"]] = case["prompt"]
    return out


def _rubrics(manifest: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Each case's judged checks: (name, rubric), from the checks as the suite wrote them."""
    out: dict[str, list[tuple[str, str]]] = {}
    for case in manifest.get("cases") or ():
        if not (isinstance(case, Mapping) and isinstance(case.get("id"), str)):
            continue
        for check in case.get("checks") or ():
            if not isinstance(check, Mapping) or "judged_by" not in check:
                continue
            spec = check["judged_by"]
            rubric = spec if isinstance(spec, str) else (spec or {}).get("rubric")
            if not isinstance(rubric, str):
                continue
            inner = spec.get("name") if isinstance(spec, Mapping) else None
            name = check.get("name") or inner or "judged_by"
            out.setdefault(case["id"], []).append((str(name), rubric))
    return out


def _show(
    sample: Mapping[str, Any],
    instruction: str,
    index: int,
    total: int,
    *,
    blind: bool = False,
    case_text: str | None = None,
    rubrics: Sequence[tuple[str, str]] = (),
) -> str:
    variant = "hidden" if blind else repr(sample.get("variant"))
    if blind:
        # What the variants sent differs by what each adds (a prefix, a system
        # prompt, a template): only the case's own text is shown.
        heading = "prompt (the case's own text; what each variant adds is hidden):"
        prompt = case_text if case_text is not None else "(the case's text is not recorded)"
    else:
        heading, prompt = "prompt:", _prompt_text(sample.get("prompt"))
    # A line meant as one line stays one (``_one``): a newline in a name, a
    # reason or a tool call cannot start a line of its own. Answers, prompts
    # and instructions keep their lines, each indented.
    lines = [
        "",
        "=" * 72,
        _one(
            f"[{index}/{total}] case {sample.get('case')!r}, variant {variant}, "
            f"repeat {sample.get('repeat')}"
        ),
        heading,
        _indent(prompt),
        "tool evidence, in order:",
        *(_one(line) for line in _evidence(sample.get("trace"))),
        "answer:",
    ]
    answer = sample.get("answer")
    if isinstance(answer, str) and answer.strip():
        cut = answer[:_ANSWER_LIMIT]
        lines.append(_indent(cut))
        if len(answer) > _ANSWER_LIMIT:
            lines.append(f"  [... {len(answer) - _ANSWER_LIMIT} more characters not shown]")
    else:
        lines.append("  (no answer)")
    status = sample.get("status")
    if status != "completed" or sample.get("reason"):
        lines.append(_one(f"process: {status}: {sample.get('reason') or 'no reason recorded'}"))
    else:
        lines.append("process: completed, no errors")
    observed = workspace_observations(sample)
    if observed is not None:
        added = observed.get("files_added") or []
        private = "unchanged" if observed.get("private_unchanged", True) else "CHANGED"
        lines.append(
            _one(
                "workspace: marker seen "
                f"{'YES' if observed.get('marker_seen') else 'no'}; fixtures "
                f"{'unchanged' if observed.get('fixtures_unchanged', True) else 'CHANGED'}; "
                f"private files {private}"
                f"; files added: {', '.join(map(str, added)) if added else 'none'}"
            )
        )
    lines.append("what to look for:")
    lines.append(_indent(instruction or "(the case has no review instruction)"))
    if rubrics:
        lines.append("judged checks, by their rubric:")
        for name, rubric in rubrics:
            lines.append(_one(f"  - {name}: {rubric}"))
    # An answer can hold terminal controls (retitle the window, clear the
    # screen, overwrite a line): the reviewer sees them written out instead.
    return visible("\n".join(lines))


# --- the walk ----------------------------------------------------------------------


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _start_over(shown: str) -> None:
    """Replace the reviews file ``shown`` (if any) by an empty one, in one step.

    Its lock is taken first, so reviews another session is still appending are
    never replaced under it; a folder or anything else that is not a regular
    file is refused."""
    if not os.path.lexists(shown):
        return
    if os.path.islink(shown) or not os.path.isfile(shown):
        raise ResultsFileError(f"{shown}: is not a regular file; --force replaces a reviews file")
    try:
        old = os.open(shown, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ResultsFileError(f"cannot open {shown}: {exc.strerror or exc}") from None
    try:
        _lock(old, shown, busy=_BUSY)
        folder = os.path.dirname(shown) or "."
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(shown)}.")
        try:
            os.fsync(fd)
            os.close(fd)
            os.replace(temporary, shown)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise _cannot_create(shown, exc) from None
    finally:
        os.close(old)


def _open_reviews(shown: str) -> tuple[int, list[Review]]:
    """Open the reviews file for appending: created exclusively, or continued."""
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(shown, flags | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise _cannot_create(shown, exc) from None
    else:
        try:
            _lock(fd, shown, busy=_BUSY)
        except BaseException:
            os.close(fd)
            raise
        return fd, []
    # It exists: continue it, after checking it is a reviews file.
    if os.path.islink(shown) or not os.path.isfile(shown):
        raise ResultsFileError(f"{shown}: is not a regular file; give a new --out path")
    try:
        fd = os.open(shown, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ResultsFileError(f"cannot open {shown}: {exc.strerror or exc}") from None
    try:
        _lock(fd, shown, busy=_BUSY)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read()
        reviews, good = _parse(data, shown)
        if good < len(data):  # drop a review cut off by an interruption
            os.ftruncate(fd, good)
        os.lseek(fd, 0, os.SEEK_END)
        if good and data[good - 1 : good] != b"\n":
            os.write(fd, b"\n")  # a complete last review without its newline (hand-edited)
    except BaseException:
        os.close(fd)
        raise
    return fd, reviews


def _instructions(manifest: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for case in manifest.get("cases") or ():
        if isinstance(case, Mapping) and isinstance(case.get("id"), str):
            out[case["id"]] = str(case.get("review") or "")
    return out


def _slot(sample: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """``(case, variant, repeat)`` of a sample record: what a review is keyed by."""
    return (sample.get("case"), sample.get("variant"), sample.get("repeat"))


def _reviewable(
    samples: Iterable[Mapping[str, Any]], case_order: Sequence[str], variant_order: Sequence[str]
) -> list[Mapping[str, Any]]:
    """Measured samples, one per slot, in case order, then repeat, then variant."""
    first: dict[tuple[Any, Any, Any], Mapping[str, Any]] = {}
    for s in samples:
        key = _slot(s)
        if s.get("status") == "unmeasured" or key in first:
            continue
        first[key] = s
    cases: dict[Any, int] = {c: i for i, c in enumerate(case_order)}
    variants: dict[Any, int] = {v: i for i, v in enumerate(variant_order)}
    return sorted(
        first.values(),
        key=lambda s: (
            cases.get(s.get("case"), len(cases)),
            s.get("repeat") if isinstance(s.get("repeat"), int) else 0,
            variants.get(s.get("variant"), len(variants)),
        ),
    )


def _ask(prompt: str, input: IO[str], output: IO[str]) -> str | None:
    output.write(prompt)
    output.flush()
    line = input.readline()
    if not line:
        return None
    return line.strip()


def review(
    results_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    input: IO[str] | None = None,
    output: IO[str] | None = None,
    reviewer: str | None = None,
    cases: Sequence[str] | None = None,
    blind: bool = False,
    seed: int = 0,
    sample: int | None = None,
    variants: Sequence[str] | None = None,
    force: bool = False,
) -> ReviewSession:
    """Walk a run's samples and record a person's verdict on each.

    For each measured sample without a review yet (in case order, then
    repeat, then variant) it shows the prompt, the tool evidence of the trace
    in order, the answer, any process error, the workspace observations and
    the case's review instruction and the rubric of each judged check, then
    asks for a verdict: ``p`` (pass), ``f`` (fail), ``n`` (needs-review),
    ``s`` (skip for now), ``u`` (undo: take back the last verdict of this
    session and show its sample again) or ``q`` (quit), and a reason, which
    may be left empty for a pass. Anything else is asked again. End of
    input stops like ``q``. Each review is appended to ``out_path`` and
    synced before the next sample is shown.

    Parameters
    ----------
    results_path : path
        A results file written by ``evalstats run``.
    out_path : path
        The reviews file: created exclusively when new; when it exists, it is
        continued and the samples it reviews are skipped. Its reviews must all
        be of samples of ``results_path``.
    force : bool, optional
        Start the reviews over: an existing ``out_path`` is replaced by an
        empty reviews file, in one step, before the first sample is shown.
    input, output : text streams, optional
        Where answers are read and samples shown (standard input and output).
    reviewer : str, optional
        Recorded with each review.
    cases : sequence of str, optional
        Review only these cases.
    variants : sequence of str, optional
        Review only these variants' samples.
    blind : bool, optional
        Hide the variant's name and show the samples in an order shuffled by
        ``seed`` (the same order on every resume), so that knowing which
        variant wrote an answer cannot sway the verdict; the prompt shown is
        the case's own text, not what each variant sent (its prefix, system
        prompt or template would give it away).
    seed : int, optional
        The seed of the blind order, and of the random sample.
    sample : int, optional
        Review a random sample: ``sample`` (case, repeat) pairs drawn from
        those every variant measured, the same number from every case (or as
        near as possible; uniformly within a case, reproducibly from
        ``seed``), each variant's answer to each (see
        :mod:`evalstats.presenting._review_design`). The design is written as the
        reviews file's first line, and the file can only be continued with
        the same draw; ``report --reviews`` then adds pass rates corrected by
        the review (PPI++).

    Returns
    -------
    ReviewSession

    Raises
    ------
    ResultsFileError
        A reviews file that cannot be read, holds reviews of samples that the
        results file lacks, or is open in another review.

    Examples
    --------
    >>> import io, os, tempfile
    >>> from evalstats.running._engine import run
    >>> folder = tempfile.mkdtemp()
    >>> results = os.path.join(folder, "results.jsonl")
    >>> _ = run("shop", ["v2=standin:shop-v2"], runs=1, out=results, progress=False)
    >>> answers = io.StringIO("p\\nnames the order\\nn\\nunsure about the tone\\nq\\n")
    >>> session = review(results, os.path.join(folder, "reviews.jsonl"),
    ...                  input=answers, output=io.StringIO())
    >>> session.reviewed, session.remaining, session.stopped
    (2, 2, 'quit')
    """
    if reviewer is not None and (not isinstance(reviewer, str) or not reviewer.strip()):
        raise InvalidArgument(f"reviewer={reviewer!r} must be a non-empty string or None")
    input = sys.stdin if input is None else input
    output = sys.stdout if output is None else output
    res = read_results(results_path)
    samples = _samples_of_cases(res, cases)
    if variants is not None:
        samples = [s for s in samples if s.get("variant") in set(variants)]
    if not isinstance(blind, bool):
        raise InvalidArgument(f"blind={blind!r} must be True or False")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgument(f"seed={seed!r} must be a whole number")
    design = None
    if sample is not None:
        from ._review_design import draw_design

        design = draw_design(res, sample=sample, seed=seed)
        drawn = set(design.units)
        samples = [s for s in samples if (s.get("case"), s.get("repeat")) in drawn]
    if blind:
        import random

        random.Random(seed).shuffle(samples)
    instructions = _instructions(res.manifest)
    shown = os.fspath(out_path)
    if force:
        _start_over(shown)
    fd, earlier = _open_reviews(shown)
    try:
        if design is not None:
            _record_design(fd, shown, design, sample, seed)
        _check_earlier(earlier, res, shown, results_path)
        done = {r.key for r in earlier}
        todo = [s for s in samples if _slot(s) not in done]
        output.write(
            f"{len(samples)} samples to review: {len(samples) - len(todo)} reviewed earlier, "
            f"{len(todo)} to go. Verdicts: p pass, f fail, n needs-review; s skips, u undoes the "
            "last, q quits.\n"
        )
        walk = _Walk(
            fd,
            input,
            output,
            instructions,
            reviewer,
            blind,
            shown=shown,
            case_texts=_case_texts(res.manifest),
            rubrics=_rubrics(res.manifest),
        )
        written, stopped = walk.through(todo, done)
    finally:
        os.close(fd)
    remaining = sum(_slot(s) not in done for s in samples)
    session = ReviewSession(shown, written, len(earlier), remaining, stopped)
    output.write(f"\n{session}\n")
    output.flush()
    return session


def _samples_of_cases(res: Any, cases: Sequence[str] | None) -> list[Mapping[str, Any]]:
    """The run's reviewable samples in walking order, only of ``cases`` when given."""
    variant_order = list(res.variants())
    case_order = [
        str(c.get("id")) for c in res.manifest.get("cases") or () if isinstance(c, Mapping)
    ]
    samples = _reviewable(res.samples, case_order, variant_order)
    if cases is None:
        return samples
    if isinstance(cases, str):
        cases = [cases]
    known = {s.get("case") for s in samples} | set(case_order)
    for c in cases:
        if c not in known:
            raise InvalidArgument(
                f"cases: {c!r} is not a case of the run{suggest(str(c), sorted(map(str, known)))}"
            )
    wanted = set(cases)
    return [s for s in samples if s.get("case") in wanted]


def _json_line(record: Mapping[str, Any]) -> bytes:
    """One JSON line in UTF-8. A lone surrogate (a case id read from a file that
    spells one) cannot be UTF-8: the line is then written with JSON's ``\\u``
    escapes, which read back as the very same text."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record) + "\n").encode("ascii")


def _record_design(fd: int, shown: str, design: Any, sample: int | None, seed: int) -> None:
    """Write the sampling design as a new file's first line, or check a continued file's."""
    if os.fstat(fd).st_size == 0:
        line = _json_line(design.to_dict())
        try:
            if os.write(fd, line) != len(line):
                raise OSError(errno.ENOSPC, "No space left on device (the write was cut short)")
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            raise ResultsFileError(
                f"{shown}: cannot write the review design: {exc.strerror or exc}"
            ) from None
    elif read_review_design(shown) != design:
        raise ResultsFileError(
            f"{shown} was not drawn with sample={sample} and seed={seed} from this run "
            "(it holds hand-picked reviews or another draw); give a new --out for a "
            "random sample"
        )


def _check_earlier(
    earlier: Sequence[Review], res: Any, shown: str, results_path: str | os.PathLike[str]
) -> None:
    """Refuse a reviews file that reviews samples the results file does not hold."""
    keys = {_slot(s) for s in res.samples}
    for r in earlier:
        if r.key not in keys:
            raise ResultsFileError(
                f"{shown} reviews case {r.case!r}, variant {r.variant!r}, repeat "
                f"{r.repeat}, which {os.fspath(results_path)} does not hold: are these the "
                "reviews of another run?"
            )


@dataclass
class _Walk:
    """The walk through the samples to review: show, ask, record, undo."""

    fd: int
    input: IO[str]
    output: IO[str]
    instructions: Mapping[str, str]
    reviewer: str | None
    blind: bool
    shown: str = "reviews"
    case_texts: Mapping[str, str] = field(default_factory=dict)
    rubrics: Mapping[str, Sequence[tuple[str, str]]] = field(default_factory=dict)

    def through(
        self, todo: Sequence[Mapping[str, Any]], done: set[tuple[Any, Any, Any]]
    ) -> tuple[int, str]:
        """Review ``todo`` in order, adding each reviewed key to ``done``.

        ``u`` takes back the last verdict of this walk (its line is cut from
        the file) and shows that sample again. Returns the number written and
        why the walk stopped.
        """
        written = 0
        history: list[tuple[int, int, tuple[str, str, int]]] = []  # (index, offset, key)
        index = 0
        show = True
        while index < len(todo):
            sample = todo[index]
            case = str(sample.get("case"))
            if show:
                text = _show(
                    sample,
                    self.instructions.get(case, ""),
                    index + 1,
                    len(todo),
                    blind=self.blind,
                    case_text=self.case_texts.get(case),
                    rubrics=self.rubrics.get(case, ()),
                )
                self.output.write(text + "\n")
            show = True
            verdict, stopped = self.verdict()
            if verdict is None:
                return written, stopped
            if verdict == "undo":
                if not history:
                    self.output.write("  nothing to undo in this session\n")
                    show = False
                    continue
                index, offset, key = history.pop()
                self.cut(offset)
                done.discard(key)
                written -= 1
                self.output.write("  undone: the last verdict is taken back; its sample again:\n")
                continue
            if verdict == "skip":
                index += 1
                continue
            reason = self.reason(verdict)
            if reason is None:
                return written, "end of input"
            record = Review(
                case,
                str(sample.get("variant")),
                int(sample.get("repeat") or 0),
                verdict,
                reason,
                self.reviewer,
                _now(),
            )
            offset = self.append(record)
            history.append((index, offset, record.key))
            written += 1
            done.add(record.key)
            index += 1
        return written, "done"

    def verdict(self) -> tuple[str | None, str]:
        """A verdict, ``"skip"``, ``"undo"``, or None with why the walk stops; asked until valid."""
        while True:
            got = _ask("verdict [p/f/n/s/u/q]: ", self.input, self.output)
            if got is None:
                return None, "end of input"
            key = got.lower()
            if key in ("q", "quit"):
                return None, "quit"
            if key in ("s", "skip"):
                return "skip", "done"
            if key in ("u", "undo"):
                return "undo", "done"
            verdict = _KEYS.get(key) or (key if key in REVIEW_VERDICTS else None)
            if verdict is not None:
                return verdict, "done"
            self.output.write(
                f"  {_one(repr(got))} is not a verdict: type p (pass), f (fail), "
                "n (needs-review), s (skip), u (undo the last) or q (quit)\n"
            )

    def reason(self, verdict: str) -> str | None:
        """A reason for ``verdict`` (may be empty for a pass), or None at end of input."""
        if verdict == "pass":
            return _ask("reason for pass (optional; Enter for none): ", self.input, self.output)
        reason: str | None = ""
        while reason is not None and not reason:
            reason = _ask(f"reason for {verdict}: ", self.input, self.output)
            if reason == "":
                self.output.write(f"  a reason is needed for a {verdict}: say in a few words why\n")
        return reason

    def append(self, record: Review) -> int:
        """Append one review whole and sync it; return the file's length before it.

        A write that fails or is cut short (a full disk) is undone, so the file
        keeps whole reviews only, and the walk stops with one line.
        """
        line = _json_line(record.to_dict())
        start = os.lseek(self.fd, 0, os.SEEK_END)
        try:
            wrote = os.write(self.fd, line)
            if wrote != len(line):
                raise OSError(errno.ENOSPC, "No space left on device (the write was cut short)")
            os.fsync(self.fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, start)
            raise ResultsFileError(
                f"{self.shown}: cannot write the review of case {record.case!r}: "
                f"{exc.strerror or exc}; the reviews before it are kept, whole (free space and run "
                "the same command to go on)"
            ) from None
        return start

    def cut(self, offset: int) -> None:
        """Take back the reviews from ``offset`` on (an undo)."""
        os.ftruncate(self.fd, offset)
        os.lseek(self.fd, 0, os.SEEK_END)
        os.fsync(self.fd)
