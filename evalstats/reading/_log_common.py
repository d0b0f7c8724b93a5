"""What every reader shares: building a :class:`~evalstats.Results` from foreign samples.

A reader turns each foreign record into a sample record of the results-file
contract (``case``, ``variant``, ``repeat``, ``status``, ``checks``, and where
the source has them ``answer``, ``latency_s``, ``tokens``, ``model``), then
:func:`build` adds a manifest: the cases in order of first appearance, the
variants, and a schedule whose slots are the (case, repeat) pairs each variant
was run on, so that two variants run on the same slots compare paired.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._text import short_repr
from ..errors import InvalidArgument, ResultsFileError

if TYPE_CHECKING:
    from ..results._file import Results

#: Imported logs do not record the machine they ran on; they all carry this
#: value, and every imported run says so in its warnings.
UNRECORDED_MACHINE = "unrecorded (imported)"

MACHINE_NOTE = (
    "the log does not record the machine it ran on; compare-runs takes imported runs "
    "as made on the same one"
)

#: String score values that mean pass and fail (Inspect's CORRECT / INCORRECT /
#: NOANSWER, and the words people put in a pass column).
TRUE_WORDS = frozenset({"c", "correct", "pass", "passed", "true", "yes", "y", "t", "ok"})
FALSE_WORDS = frozenset(
    {"i", "n", "incorrect", "fail", "failed", "false", "no", "f", "noanswer", "wrong"}
)


def file_error(path: str | os.PathLike[str], problem: str) -> ResultsFileError:
    """The one-line error every reader raises: the file, then the problem."""
    return ResultsFileError(f"{os.fspath(path)}: {problem}")


@contextlib.contextmanager
def opening(
    path: str | os.PathLike[str], *, folder: str, text: str = "", missing: str = "no such file"
) -> Iterator[None]:
    """Turn what can go wrong opening and reading ``path`` into one-line file errors.

    A missing file says ``missing``; a folder, that it is not ``folder``; bytes
    that are not UTF-8, that they are not ``text`` (when given); any other
    error of the system, that it cannot be read and why.
    """
    try:
        yield
    except FileNotFoundError:
        raise file_error(path, missing) from None
    except IsADirectoryError:
        raise file_error(path, f"is a folder, not {folder}") from None
    except UnicodeDecodeError:
        if not text:
            raise
        raise file_error(path, f"is not UTF-8 text; is it {text}?") from None
    except OSError as error:
        raise file_error(path, f"cannot read: {error.strerror or error}") from None


def json_line(text: str, find: Any) -> int | None:
    """The line (from 1) where the JSON object ``find(document)`` starts in ``text``, or None.

    Used only to say where a bad value is, once a reader has found one: the
    text is parsed again with the pure-Python scanner, noting where each
    object begins, so the C parser stays in charge of the normal read.

    >>> json_line('{"a": [\\n {"x": 1},\\n {"x": 2}]}', lambda d: d["a"][1])
    3
    """
    import json.decoder
    import json.scanner

    starts: dict[int, int] = {}
    decoder = json.JSONDecoder()
    plain: Any = json.decoder.JSONObject  # type: ignore[attr-defined]

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> Any:
        value, end = plain(s_and_end, *args)
        starts[id(value)] = s_and_end[1] - 1
        return value, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        document = decoder.decode(text)
        start = starts.get(id(find(document)))
    except (ValueError, LookupError, TypeError):
        return None
    return None if start is None else text.count("\n", 0, start) + 1


def strict_bool(value: Any, where: str) -> bool:
    """``value`` if it is true or false itself; a string such as ``"false"`` or a
    number is refused, since ``bool("false")`` is True."""
    if isinstance(value, bool):
        return value
    raise ValueError(f"{where} is {short_repr(value)} ({json_kind(value)}), not true or false")


def strict_index(value: Any, where: str) -> int:
    """``value`` if it is a whole number of at least 0 (not a boolean, not text)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(
        f"{where} is {short_repr(value)} ({json_kind(value)}), not a whole number of at least 0"
    )


#: Keys of lm-eval's aggregated results file (``results_<date>.json``) beside
#: ``results``, which tell it from promptfoo's (whose results sit beside ``config``).
LM_EVAL_RESULTS_KEYS = frozenset(
    {"group_subtasks", "configs", "n-shot", "higher_is_better", "n-samples", "lm_eval_version"}
)


def json_kind(value: Any) -> str:
    """What a JSON value is, in words for a message: ``null``, ``a boolean``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return "an object" if isinstance(value, Mapping) else "a list"


def check_threshold(pass_threshold: Any) -> float | None:
    """``pass_threshold`` as a finite float, or None."""
    if pass_threshold is None:
        return None
    if isinstance(pass_threshold, bool) or not isinstance(pass_threshold, int | float):
        raise InvalidArgument(f"pass_threshold={pass_threshold!r} must be a number")
    if not math.isfinite(pass_threshold):
        raise InvalidArgument(f"pass_threshold={pass_threshold!r} must be a finite number")
    return float(pass_threshold)


#: Score values that are words, and the score each stands for, as Inspect's
#: ``value_to_float`` maps them (``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, yes and
#: true 1, no and false 0), with the other pass/fail words the pass rule reads.
SCORE_WORDS: dict[str, float] = {
    **dict.fromkeys(TRUE_WORDS, 1.0),
    **dict.fromkeys(FALSE_WORDS, 0.0),
    "p": 0.5,
}


def score_number(value: Any) -> float | None:
    """The number an imported score value stands for, or None when it stands for none.

    A boolean is 1 or 0, a number itself (NaN and infinities too, for the
    caller to refuse), a word of :data:`SCORE_WORDS` (any case) its worth, and
    text that is a number that number, as Inspect's ``value_to_float`` reads
    them; anything else (other text, a list, an object) is None.

    >>> [score_number(v) for v in (True, 3, "P", " c ", "0.25", "maybe", [1])]
    [1.0, 3.0, 0.5, 1.0, 0.25, None, None]
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in SCORE_WORDS:
            return SCORE_WORDS[word]
        try:
            return float(word)
        except ValueError:
            return None
    return None


def check_scale(scale: Any) -> tuple[float, float] | None:
    """``scale`` (``"1,5"`` or a pair of numbers) as a finite ``(low, high)`` with
    ``low < high``, or None.

    >>> check_scale("1,5"), check_scale((0, 100)), check_scale(None)
    ((1.0, 5.0), (0.0, 100.0), None)
    """
    if scale is None:
        return None
    parts: Any = scale.split(",") if isinstance(scale, str) else scale
    try:
        if isinstance(parts, str | bytes) or len(parts) != 2:
            raise ValueError
        if any(isinstance(x, bool) for x in parts):
            raise ValueError
        low, high = (float(x) for x in parts)
    except (TypeError, ValueError):
        raise InvalidArgument(f"scale={scale!r} must be two numbers LOW,HIGH such as 1,5") from None
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        raise InvalidArgument(
            f"scale={scale!r} must be two finite numbers LOW,HIGH with LOW below HIGH, such as 1,5"
        )
    return low, high


def check_threshold_on_scale(threshold: float | None, scale: tuple[float, float] | None) -> None:
    """Refuse a pass threshold outside the declared scale (no score could reach it, or
    every score would)."""
    if threshold is None or scale is None:
        return
    low, high = scale
    if not low <= threshold <= high:
        raise InvalidArgument(
            f"pass_threshold={threshold:g} is outside scale={low:g},{high:g}; a threshold "
            "is on the scores' own scale"
        )


class OffScale(ValueError):
    """A score value that does not fit the scale: the ``index`` of the value, and the
    ``problem`` in words; its text is ``"{place}: {problem}"``."""

    def __init__(self, index: int, place: str, problem: str) -> None:
        super().__init__(f"{place}: {problem}")
        self.index, self.problem = index, problem


def score_scale(
    numbers: Sequence[float],
    *,
    scale: tuple[float, float] | None,
    asked: bool,
    what: str,
    place: Any,
    words: Sequence[bool] | None = None,
) -> tuple[float, float] | None:
    """The scale of a log's score values, or None when the log keeps no scores.

    ``numbers`` are the values (as :func:`score_number` reads them) of the
    scored samples or checks, ``place(i)`` says where the ``i``-th is (``sample
    'q1', epoch 2``), ``words[i]`` whether it was a word (``C``, ``P``). A log
    keeps its scores when ``asked`` (a declared ``scale``, a score column) or
    when some value is not 0 or 1 (a binary log's pass rate is its mean score
    already). The scale is the declared one, else 0 to 1 when every value lies
    in it; a value outside 0 to 1 on no declared scale, outside the declared
    scale, not finite, or a word on a scale other than 0 to 1 raises
    :class:`OffScale` naming its place and ``what`` it is.

    >>> score_scale([0.0, 1.0], scale=None, asked=False, what="x", place=str)
    >>> score_scale([0.5, 1.0], scale=None, asked=False, what="x", place=str)
    (0.0, 1.0)
    >>> score_scale([7.0], scale=None, asked=False, what="x", place=str)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.reading._log_common.OffScale: 0: x is 7, outside 0 to 1, ...
    """
    graded = asked or any(x != 0.0 and x != 1.0 for x in numbers)
    if not graded:
        return None
    low, high = scale if scale is not None else (0.0, 1.0)
    for i, x in enumerate(numbers):
        if words is not None and words[i] and (low, high) != (0.0, 1.0):
            problem = (
                f"{what} is a word worth {x:g} on 0 to 1, but the scale is {low:g} to "
                f"{high:g} (--scale)"
            )
        elif low <= x <= high:
            continue
        elif not math.isfinite(x):
            problem = f"{what} is {x!r}, not a finite score"
        elif scale is None:
            problem = (
                f"{what} is {x:g}, outside 0 to 1, and the file does not say its scale; give "
                "--scale LOW,HIGH (scale=), such as --scale 1,5"
            )
        else:
            problem = f"{what} is {x:g}, outside its scale {low:g} to {high:g} (--scale)"
        raise OffScale(i, str(place(i)), problem)
    return low, high


def with_score(record: dict[str, Any], raw: float, scale: tuple[float, float]) -> dict[str, Any]:
    """``record`` (a check or sample record) with the score of ``raw`` on ``scale``:
    ``score`` mapped linearly to [0, 1], ``raw_score`` and ``scale`` as given."""
    low, high = scale
    record["score"] = min(1.0, max(0.0, (raw - low) / (high - low)))
    record["raw_score"] = raw
    record["scale"] = [low, high]
    return record


def scores_note(what: str, scale: tuple[float, float], declared: bool) -> str:
    """The warning that says where an imported run's scores come from."""
    low, high = scale
    if (low, high) == (0.0, 1.0):
        return f"each sample's score is {what}, from 0 to 1"
    return (
        f"each sample's score is {what} on its scale {low:g} to {high:g}"
        f"{' (--scale)' if declared else ''}, mapped to 0 to 1"
    )


class PassRule:
    """Turns one score value into pass (True), fail (False), or raises.

    The rule: a boolean counts as itself; ``C``/``correct``/``yes`` and the like
    pass and ``I``/``N``/``incorrect``/``no`` fail; a number passes when it is at
    least ``threshold``, and without a threshold only the binary numbers 1 and 0
    are accepted. ``used`` records which branches were taken, so the reader can
    say which rule decided.
    """

    def __init__(self, threshold: float | None, *, what: str) -> None:
        self.threshold = threshold
        self.what = what
        self.used: set[str] = set()

    def __call__(self, value: Any) -> bool:
        if isinstance(value, bool):
            self.used.add("boolean")
            return value
        if isinstance(value, int | float):
            number = float(value)
            if not math.isfinite(number):
                raise ValueError(f"{self.what} is {value!r}, not a finite score")
            if self.threshold is not None:
                self.used.add("threshold")
                return number >= self.threshold
            if number in (0.0, 1.0):
                self.used.add("binary")
                return number == 1.0
            raise ValueError(
                f"{self.what} is {value!r}, not 0 or 1; give --pass-threshold "
                "(pass_threshold=) to say which scores pass"
            )
        if isinstance(value, str):
            word = value.strip().lower()
            if word in TRUE_WORDS:
                self.used.add("word")
                return True
            if word in FALSE_WORDS:
                self.used.add("word")
                return False
            if word == "p":  # Inspect's PARTIAL: a score of 0.5, as a number decides
                return self._partial(value)
            try:
                number = float(word)
            except ValueError:
                raise ValueError(
                    f"{self.what} is {value!r}, which is neither a pass/fail word "
                    "(C, I, correct, yes, no, ...) nor a number"
                ) from None
            return self(number)
        raise ValueError(
            f"{self.what} is {short_repr(value)}, which is neither a number, a boolean nor a "
            "pass/fail word"
        )

    def _partial(self, value: Any) -> bool:
        if self.threshold is None:
            raise ValueError(
                f"{self.what} is {value!r}, partial credit (0.5), not a pass or a fail; give "
                "--pass-threshold (pass_threshold=) to say which scores pass"
            )
        return self(0.5)

    def describe(self) -> str:
        """Which rule decided, in words."""
        parts = []
        if "word" in self.used:
            parts.append("C/correct/yes pass and I/N/incorrect/no fail")
        if "boolean" in self.used:
            parts.append("True passes and False fails")
        if "binary" in self.used:
            parts.append("1 passes and 0 fails")
        if "threshold" in self.used:
            parts.append(
                f"a number passes when it is at least {self.threshold:g} (--pass-threshold)"
            )
        return "; ".join(parts) or "no scored sample"


def check(
    name: str, passed: bool | None, *, reason: str = "", axis: str | None = None
) -> dict[str, Any]:
    """A check verdict record: passed, failed, or (``None``) unscored."""
    status = "unscored" if passed is None else "passed" if passed else "failed"
    return {"check": name, "axis": axis, "status": status, "reason": reason}


def suite_digest(parts: Iterable[Any]) -> str:
    """SHA-256 of what identifies the foreign task (name, version, its cases)."""
    import hashlib  # here: a log read for its counts alone needs no digest (hashlib loads OpenSSL)

    text = json.dumps(list(parts), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()  # lone ones too


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` with repeats told apart as ``name``, ``name (2)``, ``name (3)``."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def build(
    path: str | os.PathLike[str],
    samples: list[dict[str, Any]],
    *,
    tool: str,
    tool_version: Any,
    suite: Mapping[str, Any],
    variants: Sequence[Mapping[str, Any]],
    pass_rule: str,
    finished: bool = True,
    reason: str | None = None,
    warnings: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
    case_fields: Mapping[str, Mapping[str, Any]] | None = None,
    scores: tuple[str, tuple[float, float], bool] | None = None,
    placed: tuple[list[list[Any]], dict[str, None], int | None] | None = None,
    built: bool = False,
) -> Results:
    """The :class:`Results` of an imported log.

    ``samples`` are sample records (without ``"type"``), ``variants`` the
    manifest's variant objects (each with a ``"name"``) in the order to show
    them; ``case_fields`` what the manifest lists of each case beside its id
    (what identifies its input and target, for pairing logs of two tasks);
    ``scores``, for a log whose samples carry scores, what they are, their
    scale and whether it was declared (``--scale``): the manifest's
    ``imported`` and the warnings say so. ``placed``, from a reader that
    placed its samples itself (each with its ``pair`` and ``position``, no
    (case, variant, repeat) twice): the schedule, the cases in order and
    ``runs``, as :func:`_place` finds them. ``built``: the records and
    manifest fit the schema by construction, so the tally reads them unchecked.
    The schedule lists each variant's (case, repeat) slots; the pair
    number is the index of the (case, repeat) slot and the position the
    variant's index, since foreign logs do not record the order the samples ran.
    """
    from ..results._file import COUNTING_METHOD, FORMAT_VERSION, Results

    shown = os.fspath(path)
    notes = list(warnings)
    if placed is None:
        schedule, cases, runs = _place(samples, [str(v["name"]) for v in variants], notes)
    else:
        schedule, cases, runs = placed
    manifest: dict[str, Any] = {
        "type": "manifest",
        "format": FORMAT_VERSION,
        "counting_method": COUNTING_METHOD,
        "imported": {
            "tool": tool,
            "version": tool_version,
            "file": os.path.basename(shown),
            "pass_rule": pass_rule,
            **(extra or {}),
            **({} if scores is None else {"scores": {"of": scores[0], "scale": list(scores[1])}}),
        },
        "suite": dict(suite),
        "cases": [{"id": c, **(case_fields or {}).get(c, {})} for c in cases],
        "include_holdout": False,
        "variants": [dict(v) for v in variants],
        "runs": runs,
        "schedule": schedule,
        "machine": UNRECORDED_MACHINE,
    }
    notes.insert(0, f"imported from {tool}: a sample passes when {pass_rule}")
    if scores is not None:
        notes.insert(1, scores_note(*scores))
    notes.append(MACHINE_NOTE)
    summary: dict[str, Any] | None
    if finished:
        summary = {"type": "summary", "status": "finished"}
    else:
        summary = {"type": "summary", "status": "interrupted", "reason": reason}
        notes.append(f"the {tool} run did not finish" + (f": {reason}" if reason else ""))
    results = Results(
        path=shown,
        manifest=manifest,
        samples=tuple(samples),
        summary=summary,
        warnings=tuple(notes),
    )
    if built:
        # Read by the tally as they are (see reading._tally._tally_results); set past
        # the frozen dataclass, so that equality and printing stay those of Results.
        object.__setattr__(results, "built", True)
    return results


def _place(
    samples: list[dict[str, Any]], names: list[str], notes: list[str]
) -> tuple[list[list[Any]], dict[str, None], int | None]:
    """Each sample's ``pair`` and ``position`` set, and the schedule, the cases in
    order and ``runs`` (see :func:`build`); a second sample of a (case, variant,
    repeat) is noted and left out of the schedule."""
    position = {name: i for i, name in enumerate(names)}
    cases: dict[str, None] = {}
    pairs: dict[tuple[str, int], int] = {}
    schedule = []
    seen: set[tuple[str, str, int]] = set()
    for s in samples:
        key = (s["case"], s["variant"], s["repeat"])
        if key in seen:
            notes.append(
                f"a second sample for case {key[0]!r}, variant {key[1]!r}, repeat {key[2]}; "
                "the first one counts"
            )
            continue
        seen.add(key)
        cases.setdefault(s["case"], None)
        slot = (s["case"], s["repeat"])
        pair = pairs.setdefault(slot, len(pairs))
        s["pair"] = pair
        s["position"] = position.get(s["variant"], 0)
        schedule.append([s["case"], s["repeat"], pair, s["position"], s["variant"]])
    repeats: dict[tuple[str, str], int] = {}
    for s in samples:
        repeats[(s["case"], s["variant"])] = max(
            repeats.get((s["case"], s["variant"]), 0), s["repeat"] + 1
        )
    # ``runs`` only when every (case, variant) has the same number of repeats: a
    # reader pads each case to ``runs`` repeats and counts the rest as not run,
    # which for an unbalanced foreign log would invent missing samples.
    counts = set(repeats.values())
    runs = counts.pop() if len(counts) == 1 else None
    return schedule, cases, runs
