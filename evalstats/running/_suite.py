"""Cases and suites: the model, loading and validation.

A **case** is one thing to ask (a ``prompt``, or a conversation in
``messages``) and the checks every answer must pass. A **suite** is a named,
versioned list of cases, read from a JSON or YAML file with :func:`load_suite`
or built from Python objects with :func:`suite_from_cases`.

A suite file looks like this (YAML; JSON has the same fields)::

    name: shop
    version: 1
    description: Customer messages to a small shop's support assistant.
    cases:
      - id: order status
        prompt: Hi, where is my order A-1042?
        checks:
          - contains: A-1042
            axis: content
          - word_count: [3, 25]
            axis: format
        review: Does it say the order has shipped?
        tags: [orders]
      - id: angry follow-up
        messages:
          - {role: system, content: You answer for a small shop.}
          - {role: user, content: Where is my order?}
          - {role: assistant, content: Which order do you mean?}
          - {role: user, content: "A-1042, obviously."}
        checks:
          - has_terms: [A-1042]
        holdout: true

Top-level fields: ``name`` (default: the file's stem), ``version`` (a string,
a whole number or null), ``description``, ``sampled`` (true when the cases were
drawn at random from real traffic: a verdict about cases like these is then
the default), ``score`` (how a sample's score is made from its graded checks'
scores: ``mean``, the weighted mean, by default, or ``min``, the lowest) and
``cases``. Case fields: ``id``,
exactly one of ``prompt`` and ``messages``, ``checks`` (at least one),
``fixtures`` (relative path -> text, files for a workspace),
``required_actions`` (tool calls a trace must show, such as ``{"tool":
"read_note", "path": "notes.txt"}``: see
:func:`evalstats.running._traces.required_action_from_spec`), ``review`` (what a person should look
for), ``tags`` and ``holdout`` (kept aside: run only when asked).

A check is a declarative spec with one key naming a built-in check of
:data:`evalstats.running._checks.BUILTIN_CHECKS` (``{"contains": "A-1042"}``,
``{"word_count": [3, 25]}``) and an optional ``"axis"``, or
``{"judged_by": {"rubric": "..."}}`` (or ``{"judged_by": "rubric"}``), a
model-graded check whose judge must be given to :func:`load_suite`, because a
file cannot hold one; ``{"judged_by": {"rubric": "...", "scale": [1, 5],
"threshold": 4}}`` asks the judge for a score on the scale instead of PASS or
FAIL, and ``{"covers": ["refund", "14 days"]}`` (or ``{"covers": {"terms":
[...], "threshold": 0.5}}``) scores the share of the terms an answer
mentions. A check may carry a ``"weight"`` (a number, 0 or more; 1 by default):
its share in the sample's score when the suite's ``score`` is ``mean``
(a check that gives no score, pass/fail, has none to weigh).

Every validation error raises :class:`~evalstats.errors.CaseFileError` naming
the file, the case (by id, or by index when the id is unusable) and the field,
with line and column for syntax errors, such as::

    cases/shop.json: case "refund request": checks[1]: unknown check "contain"
    (did you mean "contains"?)

(on one line).

Unknown fields are errors too, with the closest known field, so that a typo
such as ``promt`` is caught instead of silently ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import fnmatch
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from .._files import read_input
from .._text import canonical_json, clip, csv_separator
from .._validate import (
    confusable,
    confusable_message,
    name_problem,
    plain_name,
    suggest,
    whole_number,
)
from ..errors import CaseFileError, InvalidArgument
from ._checks import BUILTIN_CHECKS, check_from_spec, check_name

__all__ = [
    "CASE_FIELDS",
    "Case",
    "CaseCheck",
    "PythonCheck",
    "SUITE_FIELDS",
    "Suite",
    "case_from_dict",
    "find_suite",
    "load_suite",
    "shipped_suites",
    "suite_from_cases",
    "suite_from_dict",
]

#: The fields a case may have in a suite file.
CASE_FIELDS = (
    "id",
    "prompt",
    "messages",
    "checks",
    "fixtures",
    "required_actions",
    "review",
    "tags",
    "holdout",
)

#: The top-level fields of a suite file.
SUITE_FIELDS = ("name", "version", "description", "sampled", "score", "cases")

_ROLES = ("system", "user", "assistant")
_MESSAGE_FIELDS = ("role", "content")
_JUDGED_BY_FIELDS = ("rubric", "name", "scale", "threshold")
_SUFFIXES = (".json", ".yaml", ".yml")


# --- small helpers ------------------------------------------------------------


#: Characters of a value an error message quotes at most.
QUOTE_LIMIT = 80


def _q(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """A value as it would be written in a suite file: ``"text"``, ``3``, ``null``.

    At most ``limit`` characters, so a huge value (or one that YAML aliases
    make huge) costs nothing to quote: only a prefix is ever built.

    Examples
    --------
    >>> _q([["lol"] * 9] * 9, limit=30)
    '[["lol", "lol", "lol", "lol", …'
    """
    out: list[str] = []
    room = [limit + 1]

    def put(text: str) -> bool:
        out.append(text[: room[0]])
        room[0] -= len(text)
        return room[0] > 0

    def walk(v: Any, depth: int) -> bool:
        if depth > 50:
            return put("…")
        if isinstance(v, Mapping):
            if not put("{"):
                return False
            for i, (k, item) in enumerate(v.items()):
                if (i and not put(", ")) or not walk(str(k), depth + 1) or not put(": "):
                    return False
                if not walk(item, depth + 1):
                    return False
            return put("}")
        if isinstance(v, list | tuple):
            if not put("["):
                return False
            for i, item in enumerate(v):
                if (i and not put(", ")) or not walk(item, depth + 1):
                    return False
            return put("]")
        if isinstance(v, str):
            return put(json.dumps(v[: room[0] + 2], ensure_ascii=False)[: room[0] + 1])
        if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 256:
            return put(f"<a whole number of {v.bit_length()} bits>")
        try:
            text = json.dumps(v, ensure_ascii=False) if _is_json_scalar(v) else repr(v)
        except (TypeError, ValueError):
            text = object.__repr__(v)
        return put(text[: room[0] + 1])

    walk(value, 0)
    text = "".join(out)
    return text if len(text) <= limit else text[:limit] + "…"


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float)


def _did_you_mean(value: Any, options: Iterable[str]) -> str:
    """``' (did you mean "x"?)'`` for the closest option, quoted as in a suite file."""
    close = difflib.get_close_matches(str(value), list(options), n=1, cutoff=0.5)
    return f" (did you mean {_q(close[0])}?)" if close else ""


def _kind(value: Any) -> str:
    """What a value is, in the words of a suite file."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _shown(value: Any) -> str:
    """A value where text was expected: quoted if it is text, else what it is.

    Numbers and booleans get a hint, because YAML reads ``id: 3`` or ``no`` as
    such when text was meant.
    """
    if isinstance(value, str):
        return _q(value)
    if isinstance(value, bool | int | float):
        return f"{_kind(value)}; put it in quotes to make it text"
    return _kind(value)


def _json_copy(value: Any) -> Any:
    """A deep, JSON-ready copy (plain dicts and lists); raises ValueError if not JSON-like."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


class _FrozenDict(dict):  # type: ignore[type-arg]
    """A read-only dict: hashable, and still serialised by ``json`` as an object."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("this mapping belongs to a frozen case and cannot be changed")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(canonical_json(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))


class _Problem(Exception):
    """A field of a case that is wrong: ``field`` (``checks[1]``) and what is wrong."""

    def __init__(self, field: str, text: str) -> None:
        super().__init__(f"{field}: {text}")
        self.field = field
        self.text = text


class _CaseInvalid(InvalidArgument):
    """Raised by ``Case(...)``: an InvalidArgument that keeps the field apart."""

    def __init__(self, label: str, problem: _Problem) -> None:
        where = f"Case {label}" if label else "Case"
        text = problem.text if problem.field == "id" else f"{problem.field}: {problem.text}"
        super().__init__(f"{where}: {text}")
        self.problem = problem


# --- checks -------------------------------------------------------------------


def _check_names() -> tuple[str, ...]:
    return (*BUILTIN_CHECKS, "covers", "judged_by", "python")


#: Keys of a check spec that are not the check: where it is counted, what it is called
#: and its weight in the sample's score.
_SPEC_EXTRAS = ("axis", "name", "weight")

#: The folder a suite file being loaded is in: ``python`` checks are imported from it.
_SUITE_DIR: ContextVar[Path | None] = ContextVar("evalstats_suite_dir", default=None)
#: The bytes of the other files a suite being loaded reads (Python checks, case
#: tables): part of the suite's hash, so that changing them changes the suite.
_SUITE_SOURCES: ContextVar[dict[str, bytes] | None] = ContextVar(
    "evalstats_suite_sources", default=None
)

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PythonCheck:
    """A check written in Python beside the suite: ``{"python": "module:function"}``.

    ``function(answer)`` returns what any check returns (None, a reason, a
    :class:`~evalstats.running._checks.Verdict`); an exception it raises is a
    failed verdict naming ``module:function`` (see
    :func:`~evalstats.running._checks.run_check`). A function with a true
    ``needs_trace`` attribute is given the sample's trace, as built-in trace
    checks are; one with a true ``graded`` attribute is declared graded (it
    gives a score, so an incomplete sample of its case scores 0).
    """

    __slots__ = ("__name__", "blocking", "function", "graded", "name", "needs_trace", "target")

    def __init__(self, target: str, function: Callable[..., Any]) -> None:
        self.target = target
        self.function = function
        self.name = self.__name__ = target
        self.needs_trace = getattr(function, "needs_trace", False) is True
        self.blocking = getattr(function, "blocking", False) is True
        self.graded = getattr(function, "graded", False) is True

    def __call__(self, answer: Any) -> Any:
        return self.function(answer)

    def __repr__(self) -> str:
        return f"python({self.target!r})"


def _module_file(base: Path, module: str) -> Path | None:
    parts = module.split(".")
    for candidate in (
        base.joinpath(*parts).with_suffix(".py"),
        base.joinpath(*parts, "__init__.py"),
    ):
        if candidate.is_file():
            return candidate
    return None


def _python_check(value: Any) -> PythonCheck:
    """The function ``module:function`` of a ``.py`` file in the suite's folder."""
    example = 'such as "checks:is_polite" for def is_polite(answer) in checks.py beside the suite'
    if not isinstance(value, str) or value.count(":") != 1:
        raise InvalidArgument(f'check "python" takes "module:function", {example}')
    module, _, function = value.partition(":")
    if not _DOTTED.fullmatch(module) or not _IDENTIFIER.fullmatch(function):
        raise InvalidArgument(
            f'check "python": {_q(value)} is not "module:function" (Python names), {example}'
        )
    base = _SUITE_DIR.get()
    if base is None:
        raise InvalidArgument(
            'check "python" is imported from the suite file\'s folder: load the suite from '
            "its file (load_suite), or give the function itself as the check"
        )
    file = _module_file(base, module)
    if file is None:
        raise InvalidArgument(
            f'check "python": cannot import {_q(module)}: no {module.replace(".", "/")}.py '
            f"in the suite's folder ({base})"
        )
    function_object = _imported(file, base, module, function)
    sources = _SUITE_SOURCES.get()
    if sources is not None and str(file) not in sources:
        sources[str(file)] = file.read_bytes()
    return PythonCheck(value, function_object)


def _imported(file: Path, base: Path, module: str, function: str) -> Callable[..., Any]:
    import importlib.util

    key = hashlib.sha256(os.fsencode(file.resolve())).hexdigest()[:16]
    unique = f"_evalstats_suite_{key}_{module.replace('.', '_')}"
    info = file.stat()
    stamp = (str(file), info.st_mtime_ns, info.st_size)
    loaded = sys.modules.get(unique)
    if loaded is None or getattr(loaded, "__evalstats_stamp__", None) != stamp:
        spec = importlib.util.spec_from_file_location(unique, file)
        if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has one
            raise InvalidArgument(f'check "python": cannot import {_q(module)} from {file}')
        loaded = importlib.util.module_from_spec(spec)
        loaded.__evalstats_stamp__ = stamp  # type: ignore[attr-defined]  # the file imported
        sys.modules[unique] = loaded
        # its own imports of its neighbours (import helpers) find them in the suite's folder
        sys.path.insert(0, str(base))
        try:
            # compiled from its bytes (no cached bytecode, nothing written beside it)
            exec(compile(file.read_bytes(), str(file), "exec"), vars(loaded))
        except Exception as exc:  # the module's own code raised: one line, naming it
            del sys.modules[unique]
            raise InvalidArgument(
                f'check "python": importing {_q(module)} ({file.name}) raised '
                f"{type(exc).__name__}: {clip(str(exc), 160, '…')}"
            ) from None
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(str(base))
    found = getattr(loaded, function, None)
    if found is None:
        names = [n for n in vars(loaded) if not n.startswith("_") and callable(vars(loaded)[n])]
        raise InvalidArgument(
            f'check "python": {_q(module)} has no function {_q(function)}'
            f"{_did_you_mean(function, names)}"
        )
    if not callable(found):
        raise InvalidArgument(
            f'check "python": {module}:{function} is {_kind(found)}, not a function'
        )
    return found


def _build_check(spec: Mapping[str, Any], judge: Callable[[str], str] | None) -> Callable[..., Any]:
    """Build the check a spec (without its axis and name) names; raise InvalidArgument if not."""
    names = [k for k in spec if k not in _SPEC_EXTRAS]
    if not names:
        raise InvalidArgument(
            'names no check; write one key naming a check, such as {"contains": "A-1042"}'
        )
    if len(names) > 1:
        shown = ", ".join(_q(n) for n in names)
        raise InvalidArgument(f"names several checks ({shown}); give one check per entry")
    name = names[0]
    if name == "python":
        if not (isinstance(spec[name], str) and ":" in spec[name]):
            raise InvalidArgument(
                'check "python" names a function in a .py file beside the suite, '
                '"module:function" (such as "checks:is_polite"), not '
                f"{_q(spec[name]) if isinstance(spec[name], str) else _kind(spec[name])}"
            )
        return _python_check(spec[name])
    if not isinstance(name, str) or name not in _check_names():
        raise InvalidArgument(
            f"unknown check {_q(name)}{_did_you_mean(name, _check_names())}; "
            f"choose one of {', '.join(sorted(_check_names()))}"
        )
    if name == "judged_by":
        return _build_judged_by(spec[name], judge, spec.get("name"))
    if name == "covers":
        return _build_covers(spec[name])
    return check_from_spec({name: spec[name]})


_COVERS_FIELDS = ("terms", "threshold")


def _build_covers(value: Any) -> Callable[..., Any]:
    """``{"covers": [terms]}``, ``{"covers": "term"}`` or ``{"covers": {"terms": [...],
    "threshold": 0.5}}``: the graded check of the share of terms an answer mentions."""
    from ._graded import covers

    threshold = None
    if isinstance(value, Mapping):
        for key in value:
            if key not in _COVERS_FIELDS:
                raise InvalidArgument(
                    f'check "covers": unknown field {_q(key)}{_did_you_mean(key, _COVERS_FIELDS)}; '
                    f"known fields: {', '.join(_COVERS_FIELDS)}"
                )
        threshold = value.get("threshold")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float | None):
            raise InvalidArgument(
                f'check "covers": threshold: must be a number from 0 to 1, not {_shown(threshold)}'
            )
        value = value.get("terms")
    terms = [value] if isinstance(value, str) else value
    if not isinstance(terms, list | tuple) or not terms:
        raise InvalidArgument(
            'check "covers" takes the terms an answer should mention: a list of strings, '
            f'such as ["refund", "14 days"], not {_kind(value)}'
        )
    try:
        return covers(*terms, threshold=threshold)
    except InvalidArgument as exc:
        raise InvalidArgument(f'check "covers": {exc}') from None


def _build_judged_by(
    value: Any, judge: Callable[[str], str] | None, named: Any = None
) -> Callable[..., Any]:
    if isinstance(value, str):
        value = {"rubric": value}
    if isinstance(value, Mapping) and named is not None and "name" not in value:
        value = {**value, "name": named}
    if not isinstance(value, Mapping):
        raise InvalidArgument(
            f'check "judged_by" takes a rubric: {{"rubric": "what a good answer does"}}, '
            f"not {_kind(value)}"
        )
    for key in value:
        if key not in _JUDGED_BY_FIELDS:
            raise InvalidArgument(
                f'check "judged_by": unknown field {_q(key)}'
                f"{_did_you_mean(key, _JUDGED_BY_FIELDS)}; "
                f"known fields: {', '.join(_JUDGED_BY_FIELDS)}"
            )
    rubric = value.get("rubric")
    if not isinstance(rubric, str) or not rubric.strip():
        raise InvalidArgument('check "judged_by" needs a "rubric": a non-empty string')
    name = value.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise InvalidArgument('check "judged_by": "name" must be a non-empty string')
    scale, threshold = _judged_scale(value)
    if judge is None:
        raise InvalidArgument(
            'check "judged_by" needs a judge, which a case file cannot hold: give one '
            "(load_suite(..., judge=...), or --judge on the command line)"
        )
    from ._judge import judged_by

    return judged_by(judge, rubric, scale=scale, threshold=threshold, name=name)


def _judged_scale(value: Mapping[str, Any]) -> tuple[Any, Any]:
    """A ``judged_by`` spec's ``scale`` and ``threshold``, checked before any judge is."""
    from ._judge import _judge_scale

    scale, threshold = value.get("scale"), value.get("threshold")
    if scale is not None and (
        isinstance(scale, str | bytes | Mapping)
        or not isinstance(scale, list | tuple)
        or len(scale) != 2
        or any(isinstance(x, bool) or not isinstance(x, int | float) for x in scale)
    ):
        raise InvalidArgument(
            'check "judged_by": scale: must be a list of two numbers [low, high], such as '
            f"[1, 5], not {_q(scale) if isinstance(scale, list | tuple) else _kind(scale)}"
        )
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise InvalidArgument(
            f'check "judged_by": threshold: must be a number on the scale, not {_shown(threshold)}'
        )
    try:
        _judge_scale(None if scale is None else tuple(scale), threshold)
    except InvalidArgument as exc:
        raise InvalidArgument(f'check "judged_by": {exc}') from None
    return (None if scale is None else tuple(scale)), threshold


def _check_weight(weight: Any) -> float:
    """A check's weight: a finite number, 0 or more."""
    import math

    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise InvalidArgument(f"must be a number, 0 or more, not {_shown(weight)}")
    value = float(weight)
    if not math.isfinite(value) or value < 0:
        raise InvalidArgument(f"must be a finite number, 0 or more, not {_q(weight)}")
    return value


def _check_axis(axis: Any) -> str | None:
    if axis is not None and (not isinstance(axis, str) or not axis.strip()):
        raise InvalidArgument(f"axis={axis!r} must be a non-empty string or None")
    if axis is not None:
        plain_name("axis", axis)
    return axis


@dataclass(frozen=True, eq=False)
class CaseCheck:
    """One check of a case: the callable, its axis and the spec it came from.

    ``check`` is called with an answer (see :func:`evalstats.running._checks.run_check`);
    ``axis`` groups checks in reports (``"format"``, ``"safety"``) or is None;
    ``spec`` is the declarative spec the check was built from, without its
    axis (for example ``{"contains": "A-1042"}``), or None for a check given
    as a Python callable.

    A ``CaseCheck`` unpacks as a ``(check, axis)`` pair (``for check, axis in
    case.checks``), as the checks of the first runner did.

    Two checks built from specs are equal when their specs and axes are; two
    Python checks are equal when they are the same callable with the same
    axis. A ``judged_by`` check is identified by its spec: two such checks
    with the same rubric and different judges compare equal.

    ``weight`` (1 by default; a finite number, 0 or more) is the check's
    share in the sample's score when the suite's ``score`` rule is the
    weighted mean (see :func:`~evalstats.running._graded.sample_score`); in a
    spec it is the key ``"weight"``.
    """

    check: Callable[[Any], Any]
    axis: str | None = None
    spec: Mapping[str, Any] | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not callable(self.check):
            raise InvalidArgument(
                f"check={self.check!r} must be callable: check(answer) -> None | str | Verdict"
            )
        _check_axis(self.axis)
        try:
            object.__setattr__(self, "weight", _check_weight(self.weight))
        except InvalidArgument as exc:
            expected = str(exc).rsplit(", not ", 1)[0]  # the value is named first here
            raise InvalidArgument(f"weight={self.weight!r} {expected}") from None
        if self.spec is not None:
            if not isinstance(self.spec, Mapping):
                raise InvalidArgument(f"spec={self.spec!r} must be a mapping or None")
            spec = dict(self.spec)
            if "weight" in spec:
                # The spec as written in a file, weight included: take its weight.
                try:
                    written = _check_weight(spec.pop("weight"))
                except InvalidArgument as exc:
                    raise InvalidArgument(f"weight: {exc}") from None
                if self.weight not in (1.0, written):
                    raise InvalidArgument(
                        f"spec={self.spec!r} has weight={written:g} but the check has "
                        f"weight={self.weight:g}"
                    )
                object.__setattr__(self, "weight", written)
            axis = spec.pop("axis", None)
            if axis is not None and self.axis is None:
                # The spec as written in a file, axis included: take its axis.
                object.__setattr__(self, "axis", _check_axis(axis))
            elif axis is not None and axis != self.axis:
                raise InvalidArgument(
                    f"spec={self.spec!r} has axis={axis!r} but the check has axis={self.axis!r}"
                )
            try:
                copied = _json_copy(spec)
            except ValueError as exc:
                raise InvalidArgument(f"spec={self.spec!r} must be JSON-like: {exc}") from None
            object.__setattr__(self, "spec", _FrozenDict(copied))

    @classmethod
    def from_spec(
        cls, spec: Mapping[str, Any], *, judge: Callable[[str], str] | None = None
    ) -> CaseCheck:
        """Build a check from a declarative spec, as written in a suite file.

        Parameters
        ----------
        spec : mapping
            One key naming a check, and optionally ``"axis"``:
            ``{"contains": "A-1042", "axis": "content"}``,
            ``{"judged_by": {"rubric": "Names the order."}}``.
        judge : callable, optional
            ``judge(prompt) -> text``, needed by ``judged_by`` specs only.

        Returns
        -------
        CaseCheck

        Raises
        ------
        InvalidArgument
            For an unknown check (with the closest known name), bad arguments,
            or a ``judged_by`` spec without a judge.

        Examples
        --------
        >>> c = CaseCheck.from_spec({"word_count": [3, 25], "axis": "format"})
        >>> c.name, c.axis, dict(c.spec)
        ('word_count(3, 25)', 'format', {'word_count': [3, 25]})
        >>> c.check("Your order has shipped.") is None
        True
        """
        if not isinstance(spec, Mapping):
            raise InvalidArgument(
                f'must be a mapping like {{"contains": "A-1042"}}, not {_kind(spec)}'
            )
        axis = _check_axis(spec.get("axis"))
        named = spec.get("name")
        if named is not None:
            if not isinstance(named, str) or not named.strip():
                raise InvalidArgument(f"name: must be a non-empty string, not {_shown(named)}")
            try:
                plain_name("name", named)
            except InvalidArgument as exc:
                raise InvalidArgument(f"name: {exc}") from None
        weight = 1.0
        if "weight" in spec:
            try:
                weight = _check_weight(spec["weight"])
            except InvalidArgument as exc:
                raise InvalidArgument(f"weight: {exc}") from None
        check = _build_check(spec, judge)
        kept = {k: v for k, v in spec.items() if k not in ("axis", "weight")}
        return cls(check, axis, kept, weight)

    @property
    def name(self) -> str:
        """The check's name in reports: the spec's ``name`` when it gives one, else the
        readable name (:func:`evalstats.running._checks.check_name`)."""
        if self.spec is not None and isinstance(self.spec.get("name"), str):
            return str(self.spec["name"])
        return check_name(self.check)

    def __iter__(self) -> Iterator[Any]:
        yield self.check
        yield self.axis

    def __getitem__(self, index: int) -> Any:
        return (self.check, self.axis)[index]

    def _key(self) -> tuple[Any, ...]:
        if self.spec is not None:
            return ("spec", canonical_json(self.spec), self.axis, self.weight)
        return ("python", id(self.check), self.axis, self.weight)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CaseCheck):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def to_dict(self) -> dict[str, Any]:
        """The spec with its axis (and its weight, when not 1), or ``{"python": name}``
        for a Python callable."""
        out: dict[str, Any] = (
            _json_copy(self.spec) if self.spec is not None else {"python": self.name}
        )
        if self.axis is not None:
            out["axis"] = self.axis
        if self.weight != 1.0:
            out["weight"] = int(self.weight) if self.weight.is_integer() else self.weight
        return out


# --- field checks shared by Case(...) and the loader ----------------------------


def _norm_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Problem("id", f"id={value!r} must be a non-empty string")
    _norm_name("id", value)
    return value


def _norm_name(field: str, value: str) -> str:
    """A name (an id, a tag, an axis) as plain text written one way: see
    :func:`evalstats._validate.name_problem`."""
    problem = name_problem(value)
    if problem is not None:
        raise _Problem(field, f"{_q(value)} {problem}")
    return value


def _norm_prompt(prompt: Any, messages: Any) -> tuple[str | None, tuple[Any, ...] | None]:
    if prompt is not None and messages is not None:
        raise _Problem("prompt", 'give either "prompt" or "messages", not both')
    if prompt is None and messages is None:
        raise _Problem(
            "prompt", 'missing: give "prompt" (a string) or "messages" (a list of messages)'
        )
    if prompt is not None:
        if not isinstance(prompt, str) or not prompt.strip():
            shown = _shown(prompt)
            raise _Problem("prompt", f"must be a non-empty string, not {shown}")
        return prompt, None
    return None, _norm_messages(messages)


def _norm_messages(messages: Any) -> tuple[_FrozenDict, ...]:
    if isinstance(messages, str | bytes) or not isinstance(messages, list | tuple):
        raise _Problem(
            "messages",
            f'must be a list of {{"role": ..., "content": ...}} mappings, not {_kind(messages)}',
        )
    if not messages:
        raise _Problem("messages", "is empty; give at least one user message")
    out = []
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, Mapping):
            raise _Problem(where, f'must be a mapping with "role" and "content", not {_kind(m)}')
        for key in m:
            if key not in _MESSAGE_FIELDS:
                raise _Problem(
                    where,
                    f"unknown field {_q(key)}{_did_you_mean(key, _MESSAGE_FIELDS)}; "
                    'a message has "role" and "content"',
                )
        role = m.get("role")
        if role is None:
            raise _Problem(f"{where}.role", f"missing; give one of {', '.join(_ROLES)}")
        if role not in _ROLES:
            raise _Problem(
                f"{where}.role",
                f"unknown role {_q(role)}{_did_you_mean(role, _ROLES)}; "
                f"choose one of {', '.join(_ROLES)}",
            )
        if role == "system" and i != 0:
            raise _Problem(f"{where}.role", '"system" may only be the first message')
        content = m.get("content")
        if not isinstance(content, str) or not content.strip():
            shown = _shown(content)
            raise _Problem(f"{where}.content", f"must be a non-empty string, not {shown}")
        out.append(_FrozenDict(role=role, content=content))
    last = out[-1]["role"]
    if last != "user":
        raise _Problem(
            f"messages[{len(out) - 1}].role",
            f'the last message must be from "user" (it is what is answered), not {_q(last)}',
        )
    return tuple(out)


def _norm_checks(checks: Any, judge: Callable[[str], str] | None = None) -> tuple[CaseCheck, ...]:
    if isinstance(checks, str | bytes | Mapping) or not isinstance(checks, Iterable):
        raise _Problem("checks", f"must be a list of checks, not {_kind(checks)}")
    items = list(checks)
    if not items:
        raise _Problem("checks", "has no checks; give it at least one")
    out = []
    for i, item in enumerate(items):
        where = f"checks[{i}]"
        if isinstance(item, CaseCheck):
            out.append(item)
        elif isinstance(item, Mapping):
            axis = item.get("axis")
            if axis is not None and (not isinstance(axis, str) or not axis.strip()):
                shown = _shown(axis)
                raise _Problem(f"{where}.axis", f"must be a non-empty string, not {shown}")
            if "weight" in item:
                try:
                    _check_weight(item["weight"])
                except InvalidArgument as exc:
                    raise _Problem(f"{where}.weight", str(exc)) from None
            try:
                made = CaseCheck.from_spec(item, judge=judge)
            except InvalidArgument as exc:
                raise _Problem(where, str(exc)) from None
            if "name" in item:
                earlier = [j for j, c in enumerate(out) if c.name == made.name]
                if earlier:
                    raise _Problem(
                        f"{where}.name",
                        f"{_q(made.name)} is already the name of checks[{earlier[0]}]; "
                        "each check of a case needs its own name",
                    )
            out.append(made)
        elif isinstance(item, tuple):
            if len(item) != 2 or not callable(item[0]):
                raise _Problem(where, f"{item!r} must be a (check, axis) pair")
            try:
                out.append(CaseCheck(item[0], item[1]))
            except InvalidArgument as exc:
                raise _Problem(where, str(exc)) from None
        elif callable(item):
            out.append(CaseCheck(item))
        else:
            raise _Problem(
                where,
                f'{item!r} must be a check spec such as {{"contains": "A-1042"}}, '
                "a callable, or a (check, axis) pair",
            )
    if all(c.weight == 0 for c in out):
        raise _Problem(
            "checks",
            "every check has weight 0, so no sample could have a score; "
            "give at least one a weight above 0",
        )
    return tuple(out)


def _bad_fixture_path(path: str) -> str | None:
    if not path.strip():
        return "a fixture path must not be empty"
    if "\x00" in path:
        return "a fixture path must not contain a NUL character"
    # A drive or a leading slash covers every absolute path, POSIX or Windows
    # ("C:\\x", "\\\\server\\share"), and also "\\x" and "C:x", which are
    # relative only to a current drive or folder.
    if PureWindowsPath(path).drive or path.startswith(("\\", "/")):
        return "the path must be relative (inside the workspace), not absolute"
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        return 'the path must stay inside the workspace: no ".." parts'
    if all(p in ("", ".") for p in parts):
        return "the path names no file"
    from ._workspace import INDEX_NAME, PRIVATE_NAME

    # The workspace writes these itself (the index of readable notes and the
    # planted private file): a fixture of that name would be overwritten, and
    # every sample of the case would be incomplete.
    normal = "/".join(p for p in parts if p not in ("", "."))
    if normal in (INDEX_NAME, PRIVATE_NAME):
        return (
            f"{normal!r} is made by the workspace itself (the notes index or the private "
            "file); give the fixture another name"
        )
    return None


def _norm_fixtures(fixtures: Any) -> _FrozenDict:
    if fixtures is None:
        fixtures = {}
    if not isinstance(fixtures, Mapping):
        raise _Problem(
            "fixtures", f"must be a mapping of relative path to text, not {_kind(fixtures)}"
        )
    out = {}
    for path, content in fixtures.items():
        where = f"fixtures[{_q(path)}]"
        if not isinstance(path, str):
            raise _Problem(where, f"a fixture path must be a string, not {_kind(path)}")
        problem = _bad_fixture_path(path)
        if problem:
            raise _Problem(where, problem)
        if not isinstance(content, str):
            raise _Problem(
                where, f"the file's content must be text (a string), not {_kind(content)}"
            )
        out[path] = content
    return _FrozenDict(out)


def _norm_required_actions(actions: Any) -> tuple[Any, ...]:
    from ._traces import required_action_from_spec

    if actions is None:
        return ()
    if isinstance(actions, str | bytes | Mapping) or not isinstance(actions, list | tuple):
        raise _Problem("required_actions", f"must be a list of mappings, not {_kind(actions)}")
    out = []
    for i, action in enumerate(actions):
        if not isinstance(action, Mapping):
            raise _Problem(f"required_actions[{i}]", f"must be a mapping, not {_kind(action)}")
        try:
            # The check it becomes: unknown keys and wrong values fail here, at load.
            required_action_from_spec(action)
        except InvalidArgument as exc:
            raise _Problem(f"required_actions[{i}]", str(exc)) from None
        try:
            out.append(_FrozenDict(_json_copy(action)))
        except ValueError as exc:
            raise _Problem(f"required_actions[{i}]", f"must be JSON-like: {exc}") from None
    return tuple(out)


def _norm_review(review: Any) -> str:
    if review is None:
        return ""
    if not isinstance(review, str):
        raise _Problem("review", f"must be a string, not {_kind(review)}")
    return review


def _selectors(name: str, values: Any) -> tuple[str, ...]:
    """Patterns or tags for :meth:`Suite.select`, checked: a list of non-empty strings."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidArgument(f"{name}s={values!r} must be a list of strings")
    for v in values:
        if not isinstance(v, str) or not v:
            raise InvalidArgument(f"{name}={v!r} must be a non-empty string")
    return tuple(values)


def _norm_tags(tags: Any) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str | bytes | Mapping) or not isinstance(tags, list | tuple):
        raise _Problem("tags", f"must be a list of strings, not {_kind(tags)}")
    for i, tag in enumerate(tags):
        if not isinstance(tag, str) or not tag.strip():
            shown = _shown(tag)
            raise _Problem(f"tags[{i}]", f"must be a non-empty string, not {shown}")
        _norm_name(f"tags[{i}]", tag)
    pair = confusable(tags)
    if pair is not None:
        raise _Problem(f"tags[{pair[1]}]", confusable_message("tag", tags[pair[0]], tags[pair[1]]))
    return tuple(tags)


def _norm_holdout(holdout: Any) -> bool:
    if not isinstance(holdout, bool):
        shown = _q(holdout) if isinstance(holdout, str) else _kind(holdout)
        raise _Problem("holdout", f"must be true or false, not {shown}")
    return holdout


# --- the case -------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One case: what is asked, and the checks every answer must pass.

    ``Case(id, prompt, checks)`` works positionally, as with the first runner;
    the other fields are keyword-only.

    Parameters
    ----------
    id : str
        Unique within its suite.
    prompt : str, optional
        The message sent. Give exactly one of ``prompt`` and ``messages``.
    checks : sequence
        At least one. Each is a :class:`CaseCheck`, a declarative spec
        (``{"contains": "A-1042", "axis": "content"}``), a ``(check, axis)``
        pair, or a bare callable (no axis); all become ``CaseCheck`` objects.
    messages : sequence of mappings, optional
        A conversation: ``{"role": "system" | "user" | "assistant",
        "content": text}`` items, a system message only first, the last from
        the user.
    fixtures : mapping, optional
        Relative path -> text: files for the case's workspace. Paths may not be
        absolute or contain ``..``.
    required_actions : sequence of mappings, optional
        Tool calls the sample's trace must show, each a spec of
        :func:`evalstats.running._traces.required_action_from_spec` (checked here, kept
        verbatim); the engine scores them as checks with axis ``"action"``.
    review : str, optional
        What a person reviewing answers should look for.
    tags : sequence of str, optional
    holdout : bool, optional
        A case kept aside: :meth:`Suite.select` leaves it out unless asked.

    Notes
    -----
    Mappings (``fixtures``, each message, each required action) are stored as
    read-only dicts, so ``json.dumps`` takes them as they are. Two cases are
    equal when every field is; checks compare as :class:`CaseCheck` says.

    Examples
    --------
    >>> from evalstats.running._checks import contains
    >>> case = Case("order", "Where is A-1042?", (contains("A-1042"), {"word_count": [3, 25]}))
    >>> [(c.name, c.axis) for c in case.checks]
    [("contains('A-1042')", None), ('word_count(3, 25)', None)]
    >>> case.to_dict()["checks"]
    [{'python': "contains('A-1042')"}, {'word_count': [3, 25]}]
    """

    id: str
    prompt: str | None = None
    checks: tuple[CaseCheck, ...] = ()
    _: KW_ONLY
    messages: tuple[Mapping[str, str], ...] | None = None
    fixtures: Mapping[str, str] = field(default_factory=_FrozenDict)
    required_actions: tuple[Mapping[str, Any], ...] = ()
    review: str = ""
    tags: tuple[str, ...] = ()
    holdout: bool = False

    def __post_init__(self) -> None:
        label = _q(self.id) if isinstance(self.id, str) and self.id.strip() else ""
        try:
            _norm_id(self.id)
        except _Problem as p:
            raise _CaseInvalid("", p) from None
        try:
            prompt, messages = _norm_prompt(self.prompt, self.messages)
            values = {
                "prompt": prompt,
                "messages": messages,
                "checks": _norm_checks(self.checks),
                "fixtures": _norm_fixtures(self.fixtures),
                "required_actions": _norm_required_actions(self.required_actions),
                "review": _norm_review(self.review),
                "tags": _norm_tags(self.tags),
                "holdout": _norm_holdout(self.holdout),
            }
        except _Problem as p:
            raise _CaseInvalid(label, p) from None
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:
        return hash((self.id, self.prompt, self.messages))

    def to_dict(self) -> dict[str, Any]:
        """The case as a JSON-ready dict in the suite-file format.

        Python callables appear as ``{"python": check_name}``; everything else
        can be read back with :func:`case_from_dict`.
        """
        out: dict[str, Any] = {"id": self.id}
        if self.prompt is not None:
            out["prompt"] = self.prompt
        else:
            out["messages"] = [dict(m) for m in self.messages or ()]
        out["checks"] = [c.to_dict() for c in self.checks]
        out["fixtures"] = dict(self.fixtures)
        out["required_actions"] = [_json_copy(a) for a in self.required_actions]
        out["review"] = self.review
        out["tags"] = list(self.tags)
        out["holdout"] = self.holdout
        return out


def _case_label(raw: Mapping[str, Any], index: int) -> str:
    case_id = raw.get("id")
    if isinstance(case_id, str) and case_id.strip() and name_problem(case_id) is None:
        return f"case {_q(case_id)}"
    return f"cases[{index}]"


def _case_from_mapping(
    raw: Any, index: int, where: str, judge: Callable[[str], str] | None
) -> Case:
    """Build one case of a document, raising CaseFileError that names ``where``."""
    if not isinstance(raw, Mapping):
        raise CaseFileError(
            f'{where}cases[{index}]: must be a mapping with "id", "prompt" and "checks", '
            f"not {_kind(raw)}"
        )
    label = _case_label(raw, index)
    for key in raw:
        if key not in CASE_FIELDS:
            raise CaseFileError(
                f"{where}{label}: unknown field {_q(key)}{_did_you_mean(key, CASE_FIELDS)}; "
                f"known fields: {', '.join(CASE_FIELDS)}"
            )
    try:
        if "id" not in raw:
            raise _Problem("id", "missing: every case needs an id")
        if not isinstance(raw["id"], str) or not raw["id"].strip():
            shown = _shown(raw["id"])
            raise _Problem("id", f"must be a non-empty string, not {shown}")
        if "checks" not in raw:
            raise _Problem("checks", "missing: give at least one check")
        checks = _norm_checks(raw["checks"], judge)
        return Case(
            raw["id"],
            raw.get("prompt"),
            checks,
            messages=raw.get("messages"),
            fixtures=raw.get("fixtures"),  # type: ignore[arg-type]
            required_actions=raw.get("required_actions"),  # type: ignore[arg-type]
            review=raw.get("review"),  # type: ignore[arg-type]
            tags=raw.get("tags"),  # type: ignore[arg-type]
            holdout=raw.get("holdout", False),
        )
    except _Problem as p:
        raise CaseFileError(f"{where}{label}: {p.field}: {p.text}") from None
    except _CaseInvalid as exc:
        problem = exc.problem
        raise CaseFileError(f"{where}{label}: {problem.field}: {problem.text}") from None


def case_from_dict(data: Mapping[str, Any], *, judge: Callable[[str], str] | None = None) -> Case:
    """Build a case from a dict in the suite-file format (the inverse of ``Case.to_dict``).

    Parameters
    ----------
    data : mapping
        ``{"id": ..., "prompt": ..., "checks": [...], ...}``, for example an
        entry of a results manifest's ``"cases"``.
    judge : callable, optional
        For ``judged_by`` checks.

    Returns
    -------
    Case

    Raises
    ------
    CaseFileError
        Naming the case and the field, as for a file.

    Examples
    --------
    >>> case = case_from_dict({"id": "hi", "prompt": "Hello", "checks": [{"contains": "hi"}]})
    >>> case_from_dict(case.to_dict()) == case
    True
    """
    return _case_from_mapping(data, 0, "", judge)


# --- the suite ------------------------------------------------------------------


def _cases_sha256(cases: Iterable[Case], score: str = "mean") -> str:
    listed = [c.to_dict() for c in cases]
    # a rule other than the default is part of what the suite is (a resume compares it)
    text = canonical_json(listed if score == "mean" else {"cases": listed, "score": score})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_score_rule(score: Any) -> str:
    from ._graded import SCORE_RULES

    if not isinstance(score, str) or score not in SCORE_RULES:
        raise InvalidArgument(
            f"score={score!r} must be 'mean' or 'min' (how a sample's score is made from "
            f"its checks' scores){suggest(str(score), SCORE_RULES)}"
        )
    return score


@dataclass(frozen=True)
class Suite:
    """A named, versioned set of cases.

    Parameters
    ----------
    name : str
    version : str, int or None
    cases : tuple of Case
        At least one, with unique ids.
    path : str, optional
        The file it was read from, as the user gave it; None for Python suites.
    sha256 : str, optional
        Of the file's bytes; for Python suites (and when not given), of the
        canonical JSON (sorted keys, no spaces, UTF-8) of
        ``[case.to_dict() for case in cases]``.
    description : str, optional
        Keyword-only.
    sampled : bool, optional
        Keyword-only: the cases were drawn at random from the traffic the
        assistant serves, so a verdict about cases like these is what the
        data support by default (see :func:`~evalstats.stats._claims.default_about`).
    score : {"mean", "min"}, optional
        Keyword-only: how a sample's score is made from its checks' scores,
        the weighted mean (default, as promptfoo does) or the lowest (see
        :func:`~evalstats.running._graded.sample_score`).
    """

    name: str
    version: str | int | None
    cases: tuple[Case, ...]
    path: str | None = None
    sha256: str | None = None
    _: KW_ONLY
    description: str = ""
    sampled: bool = False
    score: str = "mean"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument(f"name={self.name!r} must be a non-empty string")
        if isinstance(self.version, bool) or not isinstance(self.version, str | int | None):
            raise InvalidArgument(
                f"version={self.version!r} must be a string, a whole number or None"
            )
        if isinstance(self.cases, str | bytes) or not isinstance(self.cases, Iterable):
            raise InvalidArgument(f"cases={self.cases!r} must be a sequence of Case objects")
        cases = tuple(self.cases)
        if not cases:
            raise InvalidArgument("cases is empty; a suite needs at least one case")
        seen: dict[str, int] = {}
        for i, case in enumerate(cases):
            if not isinstance(case, Case):
                raise InvalidArgument(f"cases[{i}]={case!r} must be a Case")
            if case.id in seen:
                raise InvalidArgument(
                    f"cases[{i}] repeats the id {_q(case.id)} of cases[{seen[case.id]}]"
                )
            seen[case.id] = i
        try:
            _refuse_confusable(cases, "")
        except CaseFileError as exc:
            raise InvalidArgument(str(exc)) from None
        plain_name("name", self.name)
        if self.path is not None and not isinstance(self.path, str):
            raise InvalidArgument(f"path={self.path!r} must be a string or None")
        if not isinstance(self.description, str):
            raise InvalidArgument(f"description={self.description!r} must be a string")
        if not isinstance(self.sampled, bool):
            raise InvalidArgument(f"sampled={self.sampled!r} must be True or False")
        _check_score_rule(self.score)
        object.__setattr__(self, "cases", cases)
        if self.sha256 is None:
            object.__setattr__(self, "sha256", _cases_sha256(cases, self.score))

    def select(
        self,
        *,
        include_holdout: bool = False,
        ids: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> tuple[Case, ...]:
        """The cases to run, in suite order: holdout cases only when asked.

        ``ids`` keeps the cases whose id matches any of these shell-style
        patterns (``order*``, ``case-?``; an exact id matches itself), ``tags``
        those that carry any of these tags; given both, a case must pass both.
        ``limit`` then keeps the first ``limit`` of them, in file order. A
        pattern or tag that selects no case is an error (a typo would otherwise
        run nothing it names).

        Examples
        --------
        >>> suite = suite_from_cases([
        ...     Case("a", "p", ({"contains": "x"},), tags=("orders",)),
        ...     Case("b", "p", ({"contains": "x"},), holdout=True),
        ...     Case("a2", "p", ({"contains": "x"},)),
        ... ])
        >>> [c.id for c in suite.select()], [c.id for c in suite.select(include_holdout=True)]
        (['a', 'a2'], ['a', 'b', 'a2'])
        >>> [c.id for c in suite.select(ids=["a*"])], [c.id for c in suite.select(tags=["orders"])]
        (['a', 'a2'], ['a'])
        >>> [c.id for c in suite.select(ids=["a*"], limit=1)]
        ['a']
        """
        if not isinstance(include_holdout, bool):
            raise InvalidArgument(f"include_holdout={include_holdout!r} must be True or False")
        chosen = [c for c in self.cases if include_holdout or not c.holdout]
        if ids is not None:
            patterns = _selectors("case", ids)
            for pattern in patterns:
                if not any(fnmatch.fnmatchcase(c.id, pattern) for c in chosen):
                    hint = suggest(pattern, [c.id for c in chosen])
                    raise InvalidArgument(
                        f"case={pattern!r} matches no case of suite {self.name!r}"
                        + (hint or ("" if include_holdout else " (holdout cases are left out)"))
                    )
            chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
        if tags is not None:
            wanted = _selectors("tag", tags)
            known = sorted({t for c in chosen for t in c.tags})
            for tag in wanted:
                if tag not in known:
                    raise InvalidArgument(
                        f"tag={tag!r} is on no case selected from suite {self.name!r}"
                        + (suggest(tag, known) or f" (tags: {', '.join(known) or 'none'})")
                        + ("" if include_holdout else "; holdout cases are left out")
                    )
            chosen = [c for c in chosen if set(c.tags) & set(wanted)]
        if limit is not None:
            chosen = chosen[: whole_number("limit", limit)]
        return tuple(chosen)

    def case(self, case_id: str) -> Case:
        """The case with id ``case_id``; InvalidArgument (with the closest id) if none."""
        for c in self.cases:
            if c.id == case_id:
                return c
        ids = [c.id for c in self.cases]
        hint = suggest(str(case_id), ids)
        raise InvalidArgument(f"case_id={case_id!r} is not in the suite{hint}")

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "version", "path", "sha256"}``: the suite entry of a results manifest,
        with ``"sampled": true`` when the suite declares its cases sampled at random,
        and ``"score": "min"`` when a sample's score is its checks' lowest (the
        weighted mean, the default, is not written).

        The cases go apart, as ``[case.to_dict() for case in suite.select(...)]``.
        """
        entry = {
            "name": self.name,
            "version": self.version,
            "path": self.path,
            "sha256": self.sha256,
        }
        if self.sampled:
            entry["sampled"] = True
        if self.score != "mean":
            entry["score"] = self.score
        return entry


def suite_from_cases(
    cases: Iterable[Case],
    *,
    name: str = "python suite",
    version: str | int | None = None,
    score: str = "mean",
) -> Suite:
    """A suite from Python :class:`Case` objects (``runner.Case`` is the same class).

    The suite has no path; its ``sha256`` is of the canonical JSON of
    ``[case.to_dict() for case in cases]``, in which a Python check appears
    only by name: two different callables with the same name hash alike.
    ``score`` is the suite's rule for a sample's score (``"mean"`` or ``"min"``).

    Examples
    --------
    >>> from evalstats.running._checks import contains
    >>> suite = suite_from_cases([Case("hi", "Hello", (contains("hi"),))], name="greetings")
    >>> suite.name, [c.id for c in suite.cases], len(suite.sha256)
    ('greetings', ['hi'], 64)
    """
    if isinstance(cases, Suite):
        cases = cases.cases
    if isinstance(cases, str | bytes) or not isinstance(cases, Iterable):
        raise InvalidArgument(f"cases={cases!r} must be a list of Case objects")
    return Suite(name, version, tuple(cases), score=score)


def suite_from_dict(
    document: Mapping[str, Any],
    *,
    judge: Callable[[str], str] | None = None,
    path: str | None = None,
    sha256: str | None = None,
) -> Suite:
    """A suite from a parsed suite document (what a JSON or YAML file holds).

    ``path`` names the source in error messages and is kept on the suite;
    ``sha256`` defaults to the hash of the canonical JSON of the cases. The
    name defaults to the stem of ``path``, else ``"suite"``.
    Errors raise :class:`~evalstats.errors.CaseFileError` naming the source,
    the case and the field.

    Examples
    --------
    >>> suite = suite_from_dict({"name": "tiny", "version": 2, "cases": [
    ...     {"id": "hi", "prompt": "Hello", "checks": [{"contains": "hi"}]}]})
    >>> suite.name, suite.version, suite.cases[0].checks[0].name
    ('tiny', 2, "contains('hi')")
    """
    where = f"{path}: " if path else ""
    default_name = Path(path).stem if path else "suite"
    return _suite_from_document(document, where, path, sha256, judge, default_name=default_name)


def _suite_from_document(
    document: Any,
    where: str,
    path: str | None,
    sha256: str | None,
    judge: Callable[[str], str] | None,
    *,
    default_name: str | None,
) -> Suite:
    if not isinstance(document, Mapping):
        raise CaseFileError(
            f'{where}the top level must be a mapping with a "cases" list, not {_kind(document)}'
        )
    for key in document:
        if key not in SUITE_FIELDS:
            raise CaseFileError(
                f"{where}unknown top-level field {_q(key)}{_did_you_mean(key, SUITE_FIELDS)}; "
                f"known fields: {', '.join(SUITE_FIELDS)}"
            )
    name = document.get("name", default_name)
    if name is None:
        raise CaseFileError(f"{where}name: missing: give the suite a name")
    if not isinstance(name, str) or not name.strip():
        shown = _shown(name)
        raise CaseFileError(f"{where}name: must be a non-empty string, not {shown}")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, str | int | None):
        raise CaseFileError(
            f"{where}version: must be a string, a whole number or null, not {_kind(version)}"
        )
    description = document.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise CaseFileError(f"{where}description: must be a string, not {_kind(description)}")
    sampled = document.get("sampled", False)
    if not isinstance(sampled, bool):
        shown = _q(sampled) if isinstance(sampled, str) else _kind(sampled)
        raise CaseFileError(
            f"{where}sampled: must be true or false (were the cases drawn at random from "
            f"real traffic?), not {shown}"
        )
    score = document.get("score", "mean")
    if score not in ("mean", "min"):
        shown = _q(score) if isinstance(score, str) else _kind(score)
        hint = _did_you_mean(score, ("mean", "min")) if isinstance(score, str) else ""
        raise CaseFileError(
            f'{where}score: must be "mean" or "min" (how a sample\'s score is made from its '
            f"checks' scores), not {shown}{hint}"
        )
    raw_cases = document.get("cases")
    if raw_cases is None:
        raise CaseFileError(f"{where}cases: missing: give a list of cases")
    if isinstance(raw_cases, Mapping):
        raw_cases = _cases_from_table(raw_cases, where)
    if not isinstance(raw_cases, list | tuple):
        raise CaseFileError(f"{where}cases: must be a list of cases, not {_kind(raw_cases)}")
    if not raw_cases:
        raise CaseFileError(f"{where}cases: is empty; give at least one case")
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_cases):
        case = _case_from_mapping(raw, i, where, judge)
        if case.id in seen:
            raise CaseFileError(
                f"{where}case {_q(case.id)}: id: duplicate: cases[{seen[case.id]}] and "
                f"cases[{i}] both use it"
            )
        seen[case.id] = i
        cases.append(case)
    _refuse_confusable(cases, where)
    if name_problem(name) is not None:
        raise CaseFileError(f"{where}name: {_q(name)} {name_problem(name)}")
    return Suite(
        name,
        version,
        tuple(cases),
        path,
        sha256,
        description=description,
        sampled=sampled,
        score=score,
    )


#: The fields of ``cases:`` when the cases come from a table.
TABLE_FIELDS = ("from", "columns", "checks")
#: The most bytes a table of cases may hold.
MAX_TABLE_BYTES = 256 * 1024 * 1024
_JSON_CELLS = ("checks", "messages", "fixtures", "required_actions")
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def _cases_from_table(spec: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The cases of ``cases: {from: FILE.csv|FILE.jsonl, columns: ..., checks: [...]}``.

    One case per row. ``columns`` maps a case field to the column holding it
    (``{id: ticket, prompt: message}``); a field it does not map is read from
    the column of the same name, when there is one. In a CSV file ``tags``
    are separated by commas, ``holdout`` is true/false/yes/no/1/0 or empty,
    and ``checks``, ``messages``, ``fixtures`` and ``required_actions`` hold
    JSON. ``checks`` beside ``from`` are every row's checks, after the row's
    own; in them a value that is exactly ``"{column}"`` is that row's cell.
    """
    for key in spec:
        if key not in TABLE_FIELDS:
            raise CaseFileError(
                f"{where}cases: unknown field {_q(key)}{_did_you_mean(key, TABLE_FIELDS)}; "
                f"cases from a table take {', '.join(TABLE_FIELDS)}"
            )
    name = spec.get("from")
    if not isinstance(name, str) or not name.strip():
        raise CaseFileError(
            f"{where}cases.from: must name a .csv or .jsonl file beside the suite, "
            f"not {_shown(name)}"
        )
    base = _SUITE_DIR.get()
    if base is None:
        raise CaseFileError(
            f"{where}cases.from: a table of cases is read from the suite file's folder: "
            "load the suite from its file"
        )
    suffix = Path(name).suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise CaseFileError(f"{where}cases.from: {_q(name)} must end in .csv or .jsonl")
    columns = spec.get("columns") or {}
    if not isinstance(columns, Mapping):
        raise CaseFileError(f"{where}cases.columns: must map case fields to columns")
    for field_name, column in columns.items():
        if field_name not in CASE_FIELDS:
            raise CaseFileError(
                f"{where}cases.columns: unknown case field {_q(field_name)}"
                f"{_did_you_mean(field_name, CASE_FIELDS)}; known fields: {', '.join(CASE_FIELDS)}"
            )
        if not isinstance(column, str) or not column:
            raise CaseFileError(
                f"{where}cases.columns.{field_name}: must name a column, not {_shown(column)}"
            )
    template = spec.get("checks") or []
    if not isinstance(template, list):
        raise CaseFileError(f"{where}cases.checks: must be a list of checks, not {_kind(template)}")
    path = base / name
    shown = f"{where}{name}"
    try:
        info = os.stat(path)
    except OSError as exc:
        raise CaseFileError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    import stat

    if not stat.S_ISREG(info.st_mode):
        raise CaseFileError(f"{shown}: is not a regular file")
    if info.st_size > MAX_TABLE_BYTES:
        raise CaseFileError(f"{shown}: holds {info.st_size:,} bytes, more than {MAX_TABLE_BYTES:,}")
    data = path.read_bytes()[: MAX_TABLE_BYTES + 1]
    sources = _SUITE_SOURCES.get()
    if sources is not None:
        sources[str(path)] = data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{shown}: not UTF-8 text (byte {exc.start})") from None
    if suffix == ".csv":
        rows = _csv_rows(text, shown, known={*CASE_FIELDS, *map(str.lower, columns.values())})
    else:
        rows = _jsonl_rows(text, shown)
    if not rows:
        raise CaseFileError(f"{shown}: has no rows; give at least one case")
    header = list(dict.fromkeys(k for _, row in rows for k in row))
    mapping = {f: columns.get(f, f) for f in CASE_FIELDS}
    for field_name, column in columns.items():
        if column not in header:
            raise CaseFileError(
                f"{where}cases.columns.{field_name}: {_q(column)} is not a column of {name}"
                f"{_did_you_mean(column, header)}; its columns: {', '.join(header)}"
            )
    cases = []
    for line, row in rows:
        at = f"{shown}: row {line}"
        raw: dict[str, Any] = {}
        for field_name, column in mapping.items():
            if column not in row or row[column] in ("", None):
                continue
            raw[field_name] = _cell(field_name, row[column], csv_cell=suffix == ".csv", at=at)
        own = raw.get("checks", [])
        if not isinstance(own, list):
            raise CaseFileError(f"{at}: {mapping['checks']}: must hold a JSON list of checks")
        filled = [_fill(check, row, at, f"cases.checks[{i}]") for i, check in enumerate(template)]
        if own or filled:
            raw["checks"] = [*own, *filled]
        cases.append(raw)
    return cases


def _csv_rows(
    text: str, shown: str, *, known: Collection[str] = ()
) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a CSV table of cases, separated by commas, semicolons or tabs (the
    one the rows agree on; of several, the one that parts the header into ``known``
    names)."""
    import csv
    import io

    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=csv_separator(text, known))
    if not reader.fieldnames:
        raise CaseFileError(f"{shown}: has no header row naming its columns")
    duplicated = [c for c in reader.fieldnames if reader.fieldnames.count(c) > 1]
    if duplicated:
        raise CaseFileError(f"{shown}: the column {_q(duplicated[0])} appears twice in the header")
    rows = []
    try:
        for row in reader:
            if None in row:
                raise CaseFileError(
                    f"{shown}: row {reader.line_num}: has more cells than the header has columns"
                )
            if any(v not in ("", None) for v in row.values()):
                rows.append((reader.line_num, dict(row)))
    except csv.Error as exc:
        raise CaseFileError(f"{shown}: not valid CSV at line {reader.line_num}: {exc}") from None
    return rows


def _jsonl_rows(text: str, shown: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise CaseFileError(f"{shown}: line {number}: not valid JSON: {exc}") from None
        if not isinstance(row, dict):
            raise CaseFileError(f"{shown}: line {number}: must be a JSON object, not {_kind(row)}")
        rows.append((number, row))
    return rows


def _cell(field_name: str, value: Any, *, csv_cell: bool, at: str) -> Any:
    """A table cell as the case field it fills."""
    if not csv_cell:
        return value
    if field_name == "tags":
        return [t.strip() for t in value.split(",") if t.strip()]
    if field_name == "holdout":
        word = value.strip().lower()
        if word in ("true", "yes", "1"):
            return True
        if word in ("false", "no", "0"):
            return False
        raise CaseFileError(f"{at}: holdout: must be true or false, not {_q(value)}")
    if field_name in _JSON_CELLS:
        try:
            return json.loads(value)
        except (ValueError, RecursionError) as exc:
            raise CaseFileError(f"{at}: {field_name}: not valid JSON: {exc}") from None
    return value


def _fill(value: Any, row: Mapping[str, Any], at: str, where: str) -> Any:
    """``value`` with each string that is exactly ``"{column}"`` replaced by the row's cell."""
    if isinstance(value, str):
        found = _PLACEHOLDER.fullmatch(value)
        if found is None:
            return value
        column = found.group(1)
        if column not in row:
            raise CaseFileError(
                f"{at}: {where}: {_q(value)} names no column{_did_you_mean(column, list(row))}; "
                f"the columns: {', '.join(map(str, row))}"
            )
        cell = row[column]
        if cell in ("", None):
            raise CaseFileError(f"{at}: {where}: the column {_q(column)} is empty in this row")
        return cell
    if isinstance(value, list):
        return [_fill(v, row, at, where) for v in value]
    if isinstance(value, Mapping):
        return {k: _fill(v, row, at, where) for k, v in value.items()}
    return value


def _refuse_confusable(cases: Sequence[Case], where: str) -> None:
    """Refuse two ids, or two tags, that look alike but differ (invisible characters,
    compatibility forms): a report would show them as one."""
    ids = [c.id for c in cases]
    pair = confusable(ids)
    if pair is not None:
        first, second = pair
        raise CaseFileError(
            f"{where}case {_q(ids[second])}: id: "
            + confusable_message("id", ids[first], ids[second])
            + f" (cases[{first}])"
        )
    tagged = [(c.id, i, tag) for c in cases for i, tag in enumerate(c.tags)]
    pair = confusable(tag for _, _, tag in tagged)
    if pair is not None:
        (case_a, _, tag_a), (case_b, k, tag_b) = tagged[pair[0]], tagged[pair[1]]
        raise CaseFileError(
            f"{where}case {_q(case_b)}: tags[{k}]: "
            + confusable_message("tag", tag_a, tag_b)
            + f" (case {_q(case_a)})"
        )


# --- files ----------------------------------------------------------------------


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _duplicate_key_object(text: str) -> tuple[int, int] | None:
    """Line and column of the ``{`` of the innermost object with a duplicate key.

    Called only after a duplicate was found: it parses again with the json
    module's pure-Python scanner, whose object parser is told where each
    object starts (the C scanner has no such hook).
    """
    from json import decoder, scanner

    found: list[int] = []

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> Any:
        try:
            return decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        except _DuplicateKey:
            if not found:  # the innermost object raises first
                found.append(s_and_end[1] - 1)
            raise

    dec = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    dec.parse_object = parse_object  # type: ignore[attr-defined]
    dec.scan_once = scanner.py_make_scanner(dec)  # type: ignore[attr-defined]
    with contextlib.suppress(_DuplicateKey, ValueError):
        dec.decode(text)
    if not found:  # pragma: no cover - the first parse found a duplicate
        return None
    pos = found[0]
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


def _parse_json(text: str, shown: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CaseFileError(
            f"{shown}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except _DuplicateKey as exc:
        at = _duplicate_key_object(text)
        where = f" at line {at[0]} column {at[1]}" if at else ""
        raise CaseFileError(
            f"{shown}: not valid JSON: duplicate key {_q(exc.args[0])} in the object{where} "
            "(the second would silently replace the first)"
        ) from None
    except ValueError as exc:
        raise CaseFileError(f"{shown}: not valid JSON: {exc}") from None
    except RecursionError:
        raise CaseFileError(
            f"{shown}: not valid JSON here: its values are nested too deeply"
        ) from None


@functools.cache
def _yaml_loader() -> type:
    import yaml

    # libyaml's parser when PyYAML has it (several times faster), with the same
    # safe constructor and the same line and column marks.
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[valid-type,misc]
        """PyYAML's safe loader, refusing duplicate keys."""

    def construct_mapping(loader: Loader, node: Any, deep: bool = False) -> Any:
        loader.flatten_mapping(node)
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # unhashable: construct_mapping reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {_q(key)} (the second would silently replace the first)",
                    key_node.start_mark,
                )
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


#: Values a YAML suite may hold once its aliases are expanded, whatever its size;
#: a larger file may hold :data:`EXPANDED_PER_BYTE` values per byte of its text.
MAX_EXPANDED_VALUES = 1_000_000
EXPANDED_PER_BYTE = 4


def _check_expansion(document: Any, shown: str, text_size: int = 0) -> None:
    """Refuse a document whose aliases expand past its limit, or loop.

    PyYAML shares an aliased value instead of copying it, so a few hundred
    bytes of aliases of aliases ("billion laughs") load at once and then
    expand in whatever walks them: validation, an error message. The limit
    is :data:`MAX_EXPANDED_VALUES`, or :data:`EXPANDED_PER_BYTE` values per
    byte of the text when that is more: written out without aliases a value
    takes at least a byte, so a large suite (100,000 cases) is read whole,
    while aliases that multiply a small text are refused. The size is counted
    once per distinct container, so the check costs one pass.
    """
    limit = max(MAX_EXPANDED_VALUES, EXPANDED_PER_BYTE * text_size)
    sizes: dict[int, int] = {}
    inside: set[int] = set()

    def size(value: Any) -> int:
        if not isinstance(value, dict | list):
            return 1
        key = id(value)
        if key in sizes:
            return sizes[key]
        if key in inside:
            raise CaseFileError(
                f"{shown}: not valid here: a YAML alias refers to a value that contains it"
            )
        inside.add(key)
        total = 1 + len(value) if isinstance(value, dict) else 1
        for item in value.values() if isinstance(value, dict) else value:
            total += size(item)
            if total > limit:
                break
        inside.discard(key)
        sizes[key] = total
        return total

    if size(document) > limit:
        raise CaseFileError(
            f"{shown}: the YAML document expands to more than {limit:,} values "
            f"(aliases of aliases?); the limit is {EXPANDED_PER_BYTE} values per byte of "
            f"its text, at least MAX_EXPANDED_VALUES={MAX_EXPANDED_VALUES}"
        )


def _parse_yaml(text: str, shown: str) -> Any:
    import yaml

    try:
        document = yaml.load(text, Loader=_yaml_loader())  # a safe loader subclass
        _check_expansion(document, shown, len(text))
        return document
    except RecursionError:
        raise CaseFileError(
            f"{shown}: not valid YAML here: its values are nested too deeply"
        ) from None
    except (ValueError, OverflowError) as exc:
        # PyYAML's constructors raise these for a value its tag cannot hold:
        # a date that is no date (2001-02-30), an integer of 5,000 digits.
        why = str(exc)
        if "integer string conversion" in why:
            why = f"a whole number has more than {sys.get_int_max_str_digits()} digits"
        raise CaseFileError(f"{shown}: not valid YAML: {clip(why, 201, '…')}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "cannot be parsed"
        if exc.context and problem.startswith("but "):
            # PyYAML splits "expected a single document in the stream" / "but found ...".
            problem = f"{exc.context} {problem}"
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise CaseFileError(f"{shown}: not valid YAML: {problem}{at}") from None
    except yaml.YAMLError as exc:
        raise CaseFileError(f"{shown}: not valid YAML: {exc}") from None


def _shipped_dirs() -> list[Path]:
    import evalstats

    package = Path(evalstats.__file__).parent
    return [package / "_cases", package.parent / "cases"]


def shipped_suites() -> tuple[str, ...]:
    """The names of the suites shipped with evalstats, such as ``"shop"``.

    Examples
    --------
    >>> "shop" in shipped_suites()
    True
    """
    names: set[str] = set()
    for directory in _shipped_dirs():
        if directory.is_dir():
            names.update(p.stem for p in directory.iterdir() if p.suffix in _SUFFIXES)
    return tuple(sorted(names))


def find_suite(name_or_path: str | os.PathLike[str]) -> Path:
    """The file of a suite given by name (``"shop"``) or by path.

    A bare name (no directory, no ``.json``/``.yaml``/``.yml`` suffix) of a
    shipped suite gives its file (``evalstats/_cases/shop.json`` when
    installed, ``cases/shop.json`` in a source tree). Anything else is taken
    as a path, which must exist.

    Raises
    ------
    CaseFileError
        When there is no such file nor shipped suite, with the closest
        shipped name.

    Examples
    --------
    >>> find_suite("shop").name
    'shop.json'
    """
    if not isinstance(name_or_path, str | os.PathLike):
        raise InvalidArgument(f"name_or_path={name_or_path!r} must be a suite name or a path")
    given = os.fspath(name_or_path)
    bare = isinstance(name_or_path, str) and not any(s in given for s in "/\\")
    if bare and Path(given).suffix.lower() not in _SUFFIXES:
        for directory in _shipped_dirs():
            for suffix in _SUFFIXES:
                candidate = directory / f"{given}{suffix}"
                if candidate.is_file():
                    return candidate
    path = Path(given)
    if path.is_file():
        return path
    if path.exists():
        raise CaseFileError(f"{given}: is not a file")
    shipped = shipped_suites()
    hint = _did_you_mean(given, shipped) if bare else ""
    names = ", ".join(shipped) or "none"
    raise CaseFileError(f"{given}: cannot be read: no such file{hint}; shipped suites: {names}")


def load_suite(path: str | os.PathLike[str], *, judge: Callable[[str], str] | None = None) -> Suite:
    """Read and validate a suite from a JSON or YAML file, or a shipped suite by name.

    Parameters
    ----------
    path : str or path-like
        A ``.json``, ``.yaml`` or ``.yml`` file, or the name of a shipped suite
        (``"shop"``, see :func:`find_suite`). The suite keeps it as given.
    judge : callable, optional
        ``judge(prompt) -> text`` for the suite's ``judged_by`` checks; a suite
        with such checks and no judge is refused.

    Returns
    -------
    Suite
        With ``sha256`` of the file's bytes.

    Raises
    ------
    CaseFileError
        Naming the file, the case and the field; for syntax errors the line
        and column.

    Examples
    --------
    >>> suite = load_suite("shop")
    >>> suite.name, suite.version, suite.path, len(suite.cases)
    ('shop', 1, 'shop', 4)
    >>> suite.cases[0].checks[0].to_dict()
    {'contains': 'A-1042', 'axis': 'content'}
    """
    if not isinstance(path, str | os.PathLike):
        raise InvalidArgument(f"path={path!r} must be a path to a suite file")
    shown = os.fspath(path)
    if isinstance(shown, bytes):  # pragma: no cover - bytes paths are not documented
        shown = os.fsdecode(shown)
    file = find_suite(shown)
    suffix = file.suffix.lower()
    if suffix not in _SUFFIXES:
        raise CaseFileError(f"{shown}: a suite file must end in .json, .yaml or .yml")
    try:
        data = read_input(file, what="a suite file", error=CaseFileError)
    except IsADirectoryError:
        raise CaseFileError(f"{shown}: is a folder, not a suite file") from None
    except OSError as exc:
        raise CaseFileError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CaseFileError(
            f"{shown}: not UTF-8 text: byte {data[exc.start]:#04x} at line {line} column {column}"
        ) from None
    document = _parse_json(text, shown) if suffix == ".json" else _parse_yaml(text, shown)
    sources: dict[str, bytes] = {}
    folder = _SUITE_DIR.set(file.parent)
    read = _SUITE_SOURCES.set(sources)
    try:
        suite = _suite_from_document(
            document, f"{shown}: ", shown, None, judge, default_name=file.stem
        )
    finally:
        _SUITE_DIR.reset(folder)
        _SUITE_SOURCES.reset(read)
    digest = hashlib.sha256(data)
    for extra in sorted(sources):  # the Python checks and case tables it reads
        digest.update(hashlib.sha256(sources[extra]).digest())
    return dataclasses.replace(suite, sha256=digest.hexdigest())
