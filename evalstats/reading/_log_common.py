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
import hashlib
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
    raise ValueError(f"{where} is {short_repr(value)} ({_json_kind(value)}), not true or false")


def strict_index(value: Any, where: str) -> int:
    """``value`` if it is a whole number of at least 0 (not a boolean, not text)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(
        f"{where} is {short_repr(value)} ({_json_kind(value)}), not a whole number of at least 0"
    )


def _json_kind(value: Any) -> str:
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
) -> Results:
    """The :class:`Results` of an imported log.

    ``samples`` are sample records (without ``"type"``), ``variants`` the
    manifest's variant objects (each with a ``"name"``) in the order to show
    them; ``case_fields`` what the manifest lists of each case beside its id
    (what identifies its input and target, for pairing logs of two tasks).
    The schedule lists each variant's (case, repeat) slots; the pair
    number is the index of the (case, repeat) slot and the position the
    variant's index, since foreign logs do not record the order the samples ran.
    """
    from ..results._file import COUNTING_METHOD, FORMAT_VERSION, Results

    shown = os.fspath(path)
    names = [str(v["name"]) for v in variants]
    position = {name: i for i, name in enumerate(names)}
    cases: dict[str, None] = {}
    pairs: dict[tuple[str, int], int] = {}
    schedule = []
    seen: set[tuple[str, str, int]] = set()
    notes = list(warnings)
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
    notes.append(MACHINE_NOTE)
    summary: dict[str, Any] | None
    if finished:
        summary = {"type": "summary", "status": "finished"}
    else:
        summary = {"type": "summary", "status": "interrupted", "reason": reason}
        notes.append(f"the {tool} run did not finish" + (f": {reason}" if reason else ""))
    return Results(
        path=shown,
        manifest=manifest,
        samples=tuple(samples),
        summary=summary,
        warnings=tuple(notes),
    )
