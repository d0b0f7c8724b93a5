"""The records of a results file, defined once: manifest, sample, check verdict, look, batch,
summary.

These msgspec structs are the schema of the results file
(:mod:`evalstats.results._file`). The engine builds its records as them and
hands them to the writer as :func:`to_record` lays them out (fields in the
order below, fields left :data:`~msgspec.UNSET` not written); the reader checks
every record against them (:func:`sample_problem`, :func:`manifest_problem`),
naming the first field that does not fit in the words of its
``Meta(description=...)``; and the tally (:mod:`evalstats.reading._tally`)
decodes lines with structs :func:`derived` from them that keep only the fields
it counts. A reader ignores fields it does not know, so producers may add
their own (an import's ``imported``, ``rescored``, ``extensions``).

A check verdict's two flags are written where they can be true:
``not_inspected`` on every failed verdict, ``judge_unmeasured`` on every
unscored one (so that a run of mostly passing checks carries neither).

Older files. A failed verdict written before ``not_inspected`` was a field
leaves it unset; :func:`not_inspected` then infers it from the reason, as
readers always did: a failure whose reason starts with
:data:`INSPECTION_FAILURE`. Before ``judge_unmeasured`` was written on every
unscored verdict, it was written only when true.

The end of this module reads the parts of a sample record that several stages
look into: the summary inside a tool-call trace, a ``cmd:`` sample's workspace
observations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, get_args, get_origin

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .._text import short_repr
from .._validate import suggest

__all__ = [
    "BATCH_STATES",
    "CHECK_STATUSES",
    "FORMAT_VERSION",
    "INSPECTION_FAILURE",
    "MAX_RUNS",
    "NON_FINITE",
    "SAMPLE_STATUSES",
    "BatchRecord",
    "CheckVerdict",
    "Look",
    "Manifest",
    "Sample",
    "Summary",
    "Tokens",
    "derived",
    "manifest_problem",
    "not_inspected",
    "sample_problem",
    "slot_problem",
    "to_record",
    "trace_summary",
    "workspace_observations",
]

#: Version of the file layout; a reader refuses a manifest with another one.
FORMAT_VERSION = 1

#: The most runs per case and variant a results file may hold: a manifest's
#: ``runs`` and every ``repeat`` (which counts from 0) stay below it, so that a
#: corrupt or hostile file cannot make a reader allocate without bound.
MAX_RUNS = 1_000_000

#: Reasons that start with this say there was nothing to inspect (an empty
#: answer, no JSON where JSON was asked, a task that raised); such a verdict is
#: a failure, counted apart from real misses.
INSPECTION_FAILURE = "could not be inspected"

_SampleStatus = Literal["completed", "incomplete", "unmeasured"]
_CheckStatus = Literal["passed", "failed", "unscored"]
SAMPLE_STATUSES: tuple[str, ...] = get_args(_SampleStatus)
CHECK_STATUSES: tuple[str, ...] = get_args(_CheckStatus)

#: How the writer records numbers JSON cannot hold (see :mod:`evalstats.results._recordable`);
#: a reader takes them as numbers that were not measured.
NON_FINITE = ("NaN", "Infinity", "-Infinity")
_NonFinite = Literal["NaN", "Infinity", "-Infinity"]

# --- the fields ---------------------------------------------------------------------
# Each description is what an error says of a value that does not fit.

Text = Annotated[str, Meta(description="must be a string")]
Label = Annotated[str | None, Meta(description="must be a string or null")]
Flag = Annotated[bool, Meta(description="must be true or false")]
Repeat = Annotated[
    int, Meta(ge=0, lt=MAX_RUNS, description=f"must be a whole number from 0 to {MAX_RUNS - 1:,}")
]
Whole = Annotated[int, Meta(ge=0, description="must be a whole number of at least 0")]
SampleStatus = Annotated[_SampleStatus, Meta(description="is not a sample status")]
CheckStatus = Annotated[_CheckStatus, Meta(description="is not a check status")]
#: Seconds; the non-finite spellings are counted as no latency.
Seconds = Annotated[
    float | _NonFinite | None, Meta(description="must be a number of seconds or null")
]
Count = Annotated[
    Annotated[int, Meta(ge=0)] | _NonFinite | None,
    Meta(description="must be a whole number or null"),
]
#: A graded check's or a sample's score, mapped to [0, 1].
Score = Annotated[float, Meta(ge=0.0, le=1.0, description="must be a number from 0 to 1")]
#: A score as its check gave it, on its scale, and that scale (low, high).
RawScore = Annotated[float, Meta(description="must be a number")]
ScoreScale = Annotated[
    list[float], Meta(min_length=2, max_length=2, description="must be a list [low, high]")
]


class Tokens(Struct, kw_only=True, gc=False):
    """The tokens a sample's answer took, as its task reported them (each may be unknown)."""

    input: Count = None
    output: Count = None


JudgeTokens = Annotated[Tokens, Meta(description='must be an object {"input": n, "output": n}')]


class CheckVerdict(Struct, kw_only=True, gc=False):
    """One check's verdict on one sample.

    ``not_inspected``, set on a failed verdict: whether it failed because there
    was nothing to inspect (see :data:`INSPECTION_FAILURE`; unset in older
    files, see :func:`not_inspected`). ``judge_unmeasured``, set on an unscored
    verdict: whether it is a judged check whose judge gave no verdict after
    retries. Neither is set on the other statuses, where it cannot be true.
    ``judge``: a judged check's evidence (the judge's prompt and reply), so
    that a verdict can be audited. ``score``, ``raw_score`` and ``scale``,
    set by a graded check only: its score in [0, 1], and the score as given
    on its scale (unset in files from pass/fail checks and older versions).
    ``judge_tokens`` and ``judge_model``, set by a judged check whose judge
    called a model: the tokens that call took, as the model service reported
    them (either may be unknown), and the model it was asked for (the name a
    prices file prices it by). Unset when the judge made no model call, when it
    does not say (an in-process judge), and in older files: the judge's cost is
    then unknown, never taken as zero.
    """

    check: Label = None
    axis: Label = None
    status: CheckStatus
    reason: Label = None
    not_inspected: Flag | UnsetType = UNSET
    judge_unmeasured: Flag | UnsetType = UNSET
    judge: dict[str, Any] | UnsetType = UNSET
    score: Score | UnsetType = UNSET
    raw_score: RawScore | UnsetType = UNSET
    scale: ScoreScale | UnsetType = UNSET
    judge_tokens: JudgeTokens | UnsetType = UNSET
    judge_model: Text | UnsetType = UNSET


class Sample(Struct, kw_only=True, tag="sample", tag_field="type"):
    """One case, run once, by one variant: the record the engine writes as it finishes.

    ``pair`` and ``position`` place it in the schedule (the pair of samples of
    one case and repeat, and who went first); ``reason`` says why it is not
    completed; ``latency_s`` runs from the start of the first attempt to the
    end of the last. ``recording_notes`` says what the writer rewrote that JSON
    cannot hold (see :mod:`evalstats.results._recordable`); ``workspace``, on
    files of harnesses that keep them on the sample, its workspace observations.
    """

    case: Text
    variant: Text
    repeat: Repeat
    pair: int | None = None
    position: int | None = None
    status: SampleStatus
    reason: str | None = None
    prompt: Any = None
    answer: Any = None
    trace: Any = None
    checks: Annotated[list[CheckVerdict], Meta(description="must be a list")]
    latency_s: Seconds = None
    attempts: int | None = None
    tokens: Annotated[Tokens | None, Meta(description="must be an object or null")] = None
    model: Any = None
    started_at: str | None = None
    finished_at: str | None = None
    recording_notes: list[str] | UnsetType = UNSET
    workspace: Any = UNSET
    #: The sample's score in [0, 1] from its graded checks (the suite's rule);
    #: unset when no check gave a score (and in older files).
    score: Score | UnsetType = UNSET


class ManifestCase(Struct, kw_only=True, gc=False):
    """A case as a manifest lists it: its ``id`` (its description follows, as written)."""

    id: str


class ManifestVariant(Struct, kw_only=True, gc=False):
    """A variant as a manifest lists it: its ``name`` (its task and transform follow)."""

    name: str


CaseEntry = Annotated[str | ManifestCase, Meta(description='must be an object with a string "id"')]
VariantEntry = Annotated[
    str | ManifestVariant, Meta(description='must be an object with a string "name" (or a name)')
]
#: The items of a schedule slot, in order.
SLOT_ITEMS = ("case", "repeat", "pair", "position", "variant")
Slot = Annotated[
    tuple[Text, Repeat, Whole, Whole, Text],
    Meta(description="must be a list [case, repeat, pair, position, variant]"),
]


class Manifest(Struct, kw_only=True, tag="manifest", tag_field="type"):
    """What produced a run: the first record of its file.

    The fields a reader relies on are checked (:func:`manifest_problem`):
    ``suite``, ``cases``, ``variants``, ``runs`` and ``schedule``, the slots
    ``[case, repeat, pair, position, variant]`` in the order they run. The
    writer writes ``schedule`` last, slot by slot as they are made. ``judge``
    and ``until_decided`` record a run's judge and stopping rule when it had
    them.
    """

    format: int = FORMAT_VERSION
    evalstats: str | None = None
    counting_method: str | None = None
    suite: Annotated[dict[str, Any] | None, Meta(description="must be an object")] = None
    cases: Annotated[list[CaseEntry] | None, Meta(description="must be a list of cases")] = None
    include_holdout: bool = False
    selection: dict[str, Any] | None = None
    variants: Annotated[
        list[VariantEntry] | None, Meta(description="must be a list of variants")
    ] = None
    runs: Annotated[
        Annotated[int, Meta(ge=0, le=MAX_RUNS)] | None,
        Meta(description=f"must be a whole number from 0 to {MAX_RUNS:,}"),
    ] = None
    seed: int | None = None
    concurrency: int | None = None
    timeout_s: float | None = None
    retries: int | None = None
    python: str | None = None
    os: str | None = None
    arch: str | None = None
    machine: str | None = None
    started_at: str | None = None
    judge: dict[str, Any] | UnsetType = UNSET
    until_decided: dict[str, Any] | UnsetType = UNSET
    schedule: (
        Annotated[list[Slot] | None, Meta(description="must be a list of slots")] | UnsetType
    ) = UNSET


class Look(Struct, kw_only=True, tag="look", tag_field="type"):
    """What the anytime-valid comparison said after a round of a sequential run.

    ``about`` is the claim (``scope`` in files written before it had that
    name); the e-values, the estimate and its confidence-sequence bounds are
    enough to redraw the trajectory. ``on`` is ``"score"`` when the look compared
    mean scores (unset: pass rates). ``started_at`` is when the round began in
    the session that ran it and ``at`` when the look was taken (ISO 8601, UTC),
    ``batches`` the batches the round sent (``run --batch``); files written
    before looks had them read as before, without a wall time per round.
    """

    round: int | None = None
    pairs: int
    about: str | UnsetType = UNSET
    scope: str | UnsetType = UNSET
    level: float | None = None
    evalue_b: float | None = None
    evalue_a: float | None = None
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    verdict: str
    decided_at: int | None = None
    planned_for: dict[str, Any] | None = None
    on: str | UnsetType = UNSET
    started_at: str | None | UnsetType = UNSET
    at: str | None | UnsetType = UNSET
    batches: int | UnsetType = UNSET


#: The states a batch record says its batch is in.
BATCH_STATES = ("submitted", "ended", "cancelled")


class BatchRecord(Struct, kw_only=True, tag="batch", tag_field="type"):
    """A batch of requests sent to a provider's batch API (``run --batch``).

    Written once with ``state="submitted"`` as soon as the provider has given
    the batch its ``id`` and before the run waits on it, listing the
    ``requests`` (their custom ids) it holds; so a run killed at any
    moment and resumed polls the batch instead of submitting it again. Written
    again with ``state="ended"`` (or ``"cancelled"``) when its results are in,
    with the custom ids it gave no answer for (``unanswered``: expired,
    errored or cancelled requests), whose samples are unmeasured and taken again
    on resume. A reader of samples skips these records; files without them
    read as before.
    """

    id: str
    provider: str
    variant: str
    state: str = "submitted"
    at: str | None = None
    requests: list[str] | UnsetType = UNSET
    answered: int | UnsetType = UNSET
    unanswered: list[str] | UnsetType = UNSET
    status: str | UnsetType = UNSET  # the provider's own word for the batch's state


class Summary(Struct, kw_only=True, tag="summary", tag_field="type"):
    """How a run ended: the last record of its file, when it ended cleanly.

    ``status`` is ``finished``, ``stopped`` or ``interrupted`` (with its
    ``reason``); ``resumed_with`` counts the samples of earlier sessions;
    ``until_decided`` is a sequential run's verdict.
    """

    status: str | None = None
    reason: str | None = None
    samples: int | None = None
    resumed_with: int | UnsetType = UNSET
    by_variant: dict[str, dict[str, int]] | None = None
    finished_at: str | None = None
    elapsed_s: float | None = None
    until_decided: dict[str, Any] | UnsetType = UNSET


def to_record(struct: Struct) -> dict[str, Any]:
    """A record of this schema as the plain dict the writer writes: its fields in
    order, nested records as dicts, fields left unset out (the ``"type"`` tag is
    the writer's)."""
    optional, nested = _LAYOUT.get(struct.__class__) or _layout(struct.__class__)
    out = msgspec.structs.asdict(struct)
    for name in optional:
        if out[name] is UNSET:
            del out[name]
    for name in nested:
        # (the metaclass tested by identity: isinstance(value, Struct) takes a microsecond)
        value = out.get(name)  # (an optional record, such as judge_tokens, may be gone)
        if value.__class__ is list:
            out[name] = [to_record(v) if type(v.__class__) is _META else v for v in value]
        elif type(value.__class__) is _META:
            out[name] = to_record(value)
    return out


def _layout(kind: type[Struct]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields of a struct that may be left unset, and those that may hold records."""

    def holds(t: Any, what: type) -> bool:
        return (isinstance(t, type) and issubclass(t, what)) or any(
            holds(a, what) for a in get_args(t) if not isinstance(a, Meta)
        )

    fields = msgspec.structs.fields(kind)
    found = (
        tuple(f.name for f in fields if f.default is UNSET),
        tuple(f.name for f in fields if holds(f.type, Struct)),
    )
    _LAYOUT[kind] = found
    return found


_LAYOUT: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_META = type(Struct)


def not_inspected(check: Any) -> bool:
    """Whether a verdict is a failure with nothing to inspect: its field, or for a
    verdict written before the field, its reason (starting with :data:`INSPECTION_FAILURE`)."""
    if check.status != "failed":
        return False
    if check.not_inspected is not UNSET:
        return check.not_inspected
    return bool(check.reason) and check.reason.startswith(INSPECTION_FAILURE)  # type: ignore[union-attr]


def derived(
    name: str,
    struct: type[Struct],
    fields: Sequence[str],
    retyped: Mapping[str, Any] | None = None,
    **options: Any,
) -> type[Struct]:
    """A struct of some of ``struct``'s fields, in its order, with their types and
    defaults: what a reader that needs only those decodes into. ``retyped`` gives
    a field another type (or ``(type, default)``): a part read lazily
    (``msgspec.Raw``), or a nested record derived in turn. ``options`` are
    :func:`msgspec.defstruct`'s (``tag``, ``gc``, ...); the struct's tag is kept."""
    retyped = dict(retyped or {})
    kept = []
    for info in msgspec.structs.fields(struct):
        if info.name not in fields:
            continue
        kind, default = info.type, info.default
        if info.name in retyped:
            kind = retyped.pop(info.name)
            if isinstance(kind, tuple):
                kind, default = kind
        kept.append(
            (info.name, kind) if default is msgspec.NODEFAULT else (info.name, kind, default)
        )
    missing = (set(fields) - {k[0] for k in kept}) | set(retyped)
    if missing:
        raise TypeError(f"{struct.__name__} has no field {', '.join(sorted(missing))}")
    own = struct.__struct_config__
    if own.tag is not None:
        options.setdefault("tag", own.tag)
        options.setdefault("tag_field", own.tag_field)
    return msgspec.defstruct(name, kept, kw_only=True, **options)


# --- what is wrong with a record --------------------------------------------------------


def _field_types(struct: type[Struct]) -> dict[str, Any]:
    return {f.name: f.type for f in msgspec.structs.fields(struct)}


def _required(struct: type[Struct]) -> tuple[str, ...]:
    return tuple(f.name for f in msgspec.structs.fields(struct) if f.required)


def _fits(value: Any, kind: Any) -> bool:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


def _choices(kind: Any) -> tuple[str, ...]:
    """The values of a ``Literal`` field (through ``Annotated``), or ()."""
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    return get_args(kind) if get_origin(kind) is Literal else ()


def _says(kind: Any) -> str:
    """The description a field's type carries (the outermost one)."""
    if get_origin(kind) is Annotated:
        for meta in get_args(kind)[1:]:
            if isinstance(meta, Meta) and meta.description:
                return meta.description
        return _says(get_args(kind)[0])
    for arm in get_args(kind):  # a union: the description of the part that has one
        if arm is not UnsetType and get_origin(arm) is Annotated:
            return _says(arm)
    return "does not fit"


def _wrong(where: str, value: Any, kind: Any) -> str:
    """``where=value`` and what it should be, with the closest choice for a word."""
    text = f"{where}={short_repr(value)} {_says(kind)}"
    choices = _choices(kind)
    if choices:
        text += f"{suggest(str(value), choices)}; expected one of " + ", ".join(map(repr, choices))
    return text


def _first_wrong(
    struct: type[Struct],
    record: Mapping[str, Any],
    names: Sequence[str],
    where: Callable[[str], str],
) -> str | None:
    """The first of ``names`` (fields of ``struct``) whose value in ``record`` does not fit."""
    types = _TYPES[struct]
    for name in names:
        if name in record and not _fits(record[name], types[name]):
            return _wrong(where(name), record[name], types[name])
    return None


def sample_problem(record: Mapping[str, Any], *, written: bool = True) -> str | None:
    """What is wrong with a sample record, or None when it can be counted.

    The writer checks what the reader needs to count a sample (the required
    fields, the statuses); ``written`` says the record was read from a file, and
    the fields only a reader counts are checked too (the checks' names, axes,
    reasons and flags, the latency, the tokens).
    """
    if _fits(record, _READ_SAMPLE if written else _WRITTEN_SAMPLE):
        return None
    for key in _REQUIRED_SAMPLE:
        if key not in record:
            return f'the sample has no "{key}"'
    found = _first_wrong(Sample, record, ("case", "variant", "repeat", "status"), '"{}"'.format)
    if found is not None:
        return found
    checks = record["checks"]
    if not isinstance(checks, list | tuple):
        return _wrong('"checks"', checks, _TYPES[Sample]["checks"])
    for i, check in enumerate(checks):
        if not isinstance(check, Mapping) or "status" not in check:
            return f'checks[{i}] must be an object with a "status"'
        found = _first_wrong(CheckVerdict, check, ("status",), f'checks[{i}]: "{{}}"'.format)
        if found is not None:
            return found
    if not written:
        return None
    for i, check in enumerate(checks):
        found = _first_wrong(CheckVerdict, check, _READ_CHECK_FIELDS, f'checks[{i}]: "{{}}"'.format)
        if found is not None:
            return found
    found = _first_wrong(Sample, record, ("latency_s", "score"), '"{}"'.format)
    if found is not None:
        return found
    tokens = record.get("tokens")
    if isinstance(tokens, Mapping):
        return _first_wrong(Tokens, tokens, ("input", "output"), '"tokens": "{}"'.format)
    if tokens is not None:
        return _wrong('"tokens"', tokens, _TYPES[Sample]["tokens"])
    return None


def slot_problem(slot: Any) -> str | None:
    """What is wrong with one slot of a manifest's schedule, or None."""
    if _fits(slot, Slot):
        return None
    if not isinstance(slot, list | tuple) or len(slot) != len(SLOT_ITEMS):
        return f"{short_repr(slot)} {_says(Slot)}"
    for name, value, part in zip(SLOT_ITEMS, slot, get_args(get_args(Slot)[0]), strict=True):
        if not _fits(value, part):
            return f"{short_repr(slot)}: {_wrong(name, value, part)}"
    return f"{short_repr(slot)} {_says(Slot)}"  # pragma: no cover - some item does not fit


#: The counting methods this evalstats counts by (results/_file.py writes
#: COUNTING_METHOD, the newest); a file of any other is refused.
COUNTING_METHODS = ("1",)


def manifest_problem(manifest: Mapping[str, Any], *, schedule: bool = True) -> str | None:
    """What is wrong with the manifest fields a reader relies on, or None.

    ``suite`` is an object; ``cases`` a list of objects with a string ``id``
    (or of ids); ``variants`` a list of objects with a string ``name`` (or of
    names); ``counting_method`` one of :data:`COUNTING_METHODS`; ``runs`` a
    whole number up to :data:`MAX_RUNS`; ``schedule``
    (checked when ``schedule`` is true) a list of ``[case, repeat, pair,
    position, variant]`` slots. Each may be absent or null.
    """
    types = _TYPES[Manifest]
    method = manifest.get("counting_method")
    if method is not None and method not in COUNTING_METHODS:
        # Counted by this evalstats' rule, another method's samples would give
        # other rates than the run meant, without a word: refused instead.
        if not isinstance(method, str):
            return f'"counting_method" must be a string such as "1", not {short_repr(method)}'
        return (
            f'"counting_method" is {short_repr(method)}; this evalstats counts samples by '
            f"method {', '.join(map(repr, COUNTING_METHODS))} only, not by the rule that run meant"
        )
    for name in ("suite", "cases", "variants", "runs", "schedule"):
        if name not in manifest or (name == "schedule" and not schedule):
            continue
        value = manifest[name]
        if value is None:
            continue
        if name in ("suite", "runs"):
            if not _fits(value, types[name]):
                return _wrong(f'"{name}"', value, types[name])
            continue
        if not isinstance(value, list):
            return _wrong(f'"{name}"', value, types[name])
        if name == "schedule":
            for i, slot in enumerate(value):
                problem = slot_problem(slot)
                if problem is not None:
                    return f'"schedule"[{i}]: {problem}'
            continue
        entry = _ENTRIES[name]
        for i, item in enumerate(value):
            if not _fits(item, entry):
                return _wrong(f'"{name}"[{i}]', item, entry)
    return None


_TYPES = {s: _field_types(s) for s in (Sample, CheckVerdict, Tokens, Manifest)}
_ENTRIES = {"cases": CaseEntry, "variants": VariantEntry}
_REQUIRED_SAMPLE = _required(Sample)
#: The fields of a check verdict a reader counts.
_READ_CHECK_FIELDS = (
    "check",
    "axis",
    "status",
    "reason",
    "not_inspected",
    "judge_unmeasured",
    "score",
    "judge_tokens",
    "judge_model",
)
#: What a sample record must fit to be written, and to be read.
_WRITTEN_SAMPLE = derived(
    "_WrittenSample",
    Sample,
    (*_REQUIRED_SAMPLE,),
    {"checks": list[derived("_WrittenCheck", CheckVerdict, ("status",))]},  # type: ignore[misc]
)
_READ_SAMPLE = derived(
    "_ReadSample",
    Sample,
    (*_REQUIRED_SAMPLE, "latency_s", "tokens", "score"),
    {"checks": list[derived("_ReadCheck", CheckVerdict, _READ_CHECK_FIELDS)]},  # type: ignore[misc]
)


# --- the parts several stages look into -------------------------------------------------


def trace_summary(trace: Any) -> Mapping[str, Any] | None:
    """The ``{"requested", "executed", "stopped"}`` summary inside a sample's trace."""
    if not isinstance(trace, Mapping):
        return None
    if "requested" in trace or "executed" in trace:
        return trace
    for key in ("summary", "trace"):
        inner = trace.get(key)
        if isinstance(inner, Mapping) and ("requested" in inner or "executed" in inner):
            return inner
    return None


def workspace_observations(sample: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The containment observations of a sample record, if it carries any.

    They are :func:`evalstats.running._workspace.observe`'s dict, kept by the ``cmd:``
    harness under the trace's ``"workspace"`` key (or the sample's own).
    """
    trace = sample.get("trace")
    for holder in (trace, sample):
        if isinstance(holder, Mapping):
            found = holder.get("workspace")
            if isinstance(found, Mapping):
                return found
    if isinstance(trace, Mapping):
        summary = trace_summary(trace)
        if summary is not None and isinstance(summary.get("workspace"), Mapping):
            return summary["workspace"]  # type: ignore[no-any-return]
    return None
