"""Named tasks and variants: ``standin:shop-v2``, ``cmd:...``, ``NAME=TASK,suffix=...``.

:func:`task_from_name` turns a task name into a :class:`~evalstats.Task` (the
model services of :mod:`evalstats.running.providers`, the subprocess harness of
:mod:`evalstats.running._command`, and the kinds other packages register by
entry point, such as the offline stand-ins); a :class:`Variant` is a named
task with a prompt transform, and :func:`parse_variant` reads one from its
command-line form. The engine takes variants; the providers and the harness
never import this module or the engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._files import read_input
from .._text import clip
from .._validate import name_problem, suggest
from ..errors import InvalidArgument
from ._registry import TASK_GROUP, entry_point, entry_point_names
from ._tasks import CallableTask, Prompt, Task, as_task

__all__ = [
    "PROVIDER_KINDS",
    "TASK_KINDS",
    "Variant",
    "keeping_workspaces",
    "parse_variant",
    "task_from_name",
]


# --- named tasks --------------------------------------------------------------


#: Task kinds by prefix: ``task_from_name("KIND:REST")`` calls
#: ``TASK_KINDS[KIND](REST)``. A kind not here is looked up among the entry
#: points of the group ``evalstats.tasks`` (where the offline stand-ins are
#: registered, as ``standin``) and kept here once found.
TASK_KINDS: dict[str, Callable[[str], Task]] = {}


#: Task kinds served by :mod:`evalstats.running.providers` over HTTP. They are looked
#: up lazily, so that runs of in-process tasks never import httpx.
PROVIDER_KINDS = ("anthropic", "gemini", "ollama", "openai")


#: The most a prompt given as ``@FILE`` (prefix, suffix, system, template) may hold.
_TEXT_LIMIT = 16 << 20


def task_from_name(name: str, settings: Mapping[str, str] | None = None) -> Task:
    """The task a name stands for, such as ``"standin:shop-v2"`` or ``"ollama:qwen3:0.6b"``.

    A name is ``KIND:REST``. The kinds in :data:`PROVIDER_KINDS` are model
    services reached with :func:`evalstats.running.providers.provider_from_name`, and
    take ``settings`` (``temperature``, ``max_tokens``, ``context``,
    ``base_url``, ...); any other kind picks a factory from :data:`TASK_KINDS`
    and takes no settings. The stand-ins are ``standin:shop-v1`` and
    ``standin:shop-v2`` (add ``?delay=0.05`` to make each answer wait 50 ms,
    like a service would).

    Examples
    --------
    >>> task_from_name("standin:shop-v2").describe()["model"]
    'shop-v2'
    >>> task_from_name("standin:shop-v3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: unknown stand-in 'shop-v3' (did you mean 'shop-v2'?); ...
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"task={name!r} must be a name like 'standin:shop-v2'")
    kind, colon, rest = name.partition(":")
    if colon and kind in PROVIDER_KINDS and kind not in TASK_KINDS:
        from .providers import provider_from_name

        return provider_from_name(name, settings)
    if colon and kind == "cmd" and kind not in TASK_KINDS:
        from ._command import cmd_task  # a subprocess per sample

        TASK_KINDS["cmd"] = cmd_task
    if colon and kind not in TASK_KINDS:
        found = entry_point(TASK_GROUP, kind)
        if found is not None:
            TASK_KINDS[kind] = found
    if not colon or kind not in TASK_KINDS:
        kinds = sorted({*TASK_KINDS, *PROVIDER_KINDS, "cmd", *entry_point_names(TASK_GROUP)})
        raise InvalidArgument(
            f"unknown task {name!r}{suggest(kind, kinds) if colon else ''}; a task name "
            f"is KIND:NAME with KIND one of {', '.join(kinds)} "
            "(for example 'standin:shop-v2' or 'ollama:qwen3:0.6b')"
        )
    if kind == "cmd":
        return TASK_KINDS[kind](rest, settings)  # type: ignore[call-arg]
    if settings:
        raise InvalidArgument(
            f"task {name!r} takes no settings, but was given {', '.join(sorted(settings))}"
        )
    return TASK_KINDS[kind](rest)


# --- variants -------------------------------------------------------------------


def _case_messages(case: Any) -> tuple[str | None, list[dict[str, str]], str]:
    """A case's own system text, the turns before the last, and the last user text."""
    messages = getattr(case, "messages", None)
    if not messages:
        return None, [], case.prompt
    turns = [dict(m) for m in messages]
    system = None
    if turns and turns[0].get("role") == "system":
        system = turns.pop(0)["content"]
    last = turns.pop()
    return system, turns, last["content"]


#: ``{{ name }}``: a Jinja placeholder, which a template does not fill.
_JINJA = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def _single(found: re.Match[str]) -> str:
    return "{" + found.group(1) + "}"


@dataclass(frozen=True)
class Variant:
    """A named way of answering: a task and an optional prompt transform.

    The transform turns a case's prompt (or the last user message of its
    conversation) into the text sent: ``template`` first, its ``"{prompt}"``
    replaced by the case's text (plain replacement, so other braces in a
    template are kept as written), then ``prefix`` before and ``suffix``
    after. ``system`` is the system prompt; when the case's conversation has
    its own system message, the variant's comes first and the case's follows
    after a blank line. Texts are used exactly as given (a file's final
    newline included).

    ``task`` is a :class:`Task`, a task name such as ``"standin:shop-v2"``
    (see :func:`task_from_name`) or a plain callable ``f(text) -> str``
    (wrapped by :func:`as_task`; such a callable cannot take a system prompt).

    Examples
    --------
    >>> from evalstats.running._run_cases import load_shop_cases
    >>> v = Variant("brief", "standin:shop-v2", suffix=" Answer in one sentence.")
    >>> v.render(load_shop_cases()[3]).text
    "Thanks, that's all I needed! Answer in one sentence."
    """

    name: str
    task: Any
    prefix: str = ""
    suffix: str = ""
    system: str | None = None
    template: str | None = None
    price_in: float | None = None
    price_out: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument(f"Variant: name={self.name!r} must be a non-empty string")
        problem = name_problem(self.name)
        if problem is not None:  # printed at the start of report lines, and a key
            raise InvalidArgument(f"Variant: name={self.name!r} {problem}")
        task = self.task
        if isinstance(task, str):
            task = task_from_name(task)
        task = as_task(task)
        object.__setattr__(self, "task", task)
        for key in ("prefix", "suffix"):
            if not isinstance(getattr(self, key), str):
                raise InvalidArgument(
                    f"Variant {self.name!r}: {key}={getattr(self, key)!r} must be a string"
                )
        for key in ("system", "template"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise InvalidArgument(
                    f"Variant {self.name!r}: {key}={value!r} must be a string or None"
                )
        if self.template is not None and _JINJA.search(self.template):
            found = _JINJA.search(self.template).group(0)  # type: ignore[union-attr]
            raise InvalidArgument(
                f"Variant {self.name!r}: template={clip(self.template, 40)!r} has the "
                f"Jinja-style {found!r}, which would be sent as written; a template puts "
                "the case's prompt where '{prompt}' is, in single braces: "
                f"{clip(_JINJA.sub(_single, self.template), 60)!r}"
            )
        if self.template is not None and "{prompt}" not in self.template:
            raise InvalidArgument(
                f"Variant {self.name!r}: template={clip(self.template, 40)!r} has no "
                "'{prompt}' to put the case's prompt in"
            )
        if (self.price_in is None) != (self.price_out is None):
            given, lacking = (
                ("price_in", "price_out") if self.price_out is None else ("price_out", "price_in")
            )
            raise InvalidArgument(
                f"Variant {self.name!r}: {given}={getattr(self, given)!r} needs {lacking} too "
                "(dollars per million tokens)"
            )
        if self.price_in is not None:
            from ._prices import Prices

            try:
                prices = Prices(self.price_in, self.price_out)  # type: ignore[arg-type]
            except InvalidArgument as exc:
                raise InvalidArgument(f"Variant {self.name!r}: {exc}") from None
            object.__setattr__(self, "price_in", prices.input)
            object.__setattr__(self, "price_out", prices.output)
        if self.system is not None and isinstance(task, CallableTask):
            raise InvalidArgument(
                f"Variant {self.name!r}: system={clip(self.system, 40)!r} cannot be given to "
                f"the plain callable {task.name}, which only receives the prompt text; "
                "write a Task (describe() and async run(prompt, *, seed)) to use a system prompt"
            )

    def render(self, case: Any) -> Prompt:
        """The exact prompt this variant sends for ``case``."""
        case_system, turns, text = _case_messages(case)
        if self.template is not None:
            text = self.template.replace("{prompt}", text)
        text = f"{self.prefix}{text}{self.suffix}"
        parts = [s for s in (self.system, case_system) if s is not None]
        system = "\n\n".join(parts) if parts else None
        messages: list[dict[str, str]] = []
        if system is not None:
            messages.append({"role": "system", "content": system})
        messages.extend(turns)
        messages.append({"role": "user", "content": text})
        return Prompt(text, system, tuple(messages))

    def describe(self) -> dict[str, Any]:
        """``{"name", "task", "transform"}`` for the manifest, and ``"prices"``
        (dollars per million tokens, ``{"input", "output"}``) when given."""
        out = {
            "name": self.name,
            "task": self.task.describe(),
            "transform": {
                "prefix": self.prefix,
                "suffix": self.suffix,
                "system": self.system,
                "template": self.template,
            },
        }
        if self.price_in is not None:
            out["prices"] = {"input": self.price_in, "output": self.price_out}
        return out


_VARIANT_OPTIONS = ("prefix", "suffix", "system", "template")
#: Prices in dollars per million tokens: recorded for the cost, never sent.
_PRICE_OPTIONS = ("price_in", "price_out")


def parse_variant(spec: str) -> Variant:
    """A variant from its command-line form ``NAME=TASK[,KEY=VALUE]...``.

    Keys are ``prefix``, ``suffix``, ``system`` and ``template``, and
    ``price_in`` and ``price_out`` (dollars per million input and output
    tokens, recorded in the manifest for the cost and never sent); a value
    ``@FILE`` is the text of that file (UTF-8, used exactly, final newline
    included), any other value is the text itself. Values cannot contain
    commas: put such text in a file. For a model service (``openai:``,
    ``ollama:``, ``anthropic:``, ``gemini:``) any other key is a generation
    setting passed to the provider, as in
    ``revised=ollama:qwen3:0.6b,temperature=0.2,max_tokens=1024,context=8192``.

    Examples
    --------
    >>> v = parse_variant("new=standin:shop-v2,suffix= Be brief.")
    >>> v.name, v.suffix, v.task.describe()["model"]
    ('new', ' Be brief.', 'shop-v2')
    >>> parse_variant("new=standin:shop-v2,sufix=x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: variant 'new=standin:shop-v2,sufix=x': unknown key 'sufix' ...
    """
    if not isinstance(spec, str):
        raise InvalidArgument(f"variant={spec!r} must be a string NAME=TASK[,KEY=VALUE]...")
    where = f"variant {spec!r}"
    name, eq, rest = spec.partition("=")
    name = name.strip()
    if not eq or not name or not rest.strip():
        raise InvalidArgument(
            f"{where}: expected NAME=TASK[,prefix=@FILE][,suffix=TEXT][,system=@FILE]"
            "[,template=@FILE], for example 'new=standin:shop-v2'"
        )
    task_name, *options = rest.split(",")
    task_name = task_name.strip()
    takes_settings = task_name.partition(":")[0] in (*PROVIDER_KINDS, "cmd")
    kwargs: dict[str, Any] = {}
    settings: dict[str, str] = {}
    for option in options:
        key, eq, value = option.partition("=")
        key = key.strip()
        if key in _PRICE_OPTIONS:
            from ._prices import _price

            if key in kwargs:
                raise InvalidArgument(f"{where}: {key} is given twice")
            try:
                kwargs[key] = _price(key, value.strip() if eq else None)
            except InvalidArgument as exc:
                raise InvalidArgument(f"{where}: {exc}") from None
            continue
        if takes_settings and key not in _VARIANT_OPTIONS and eq:
            # A generation setting (temperature=0.2, base_url=...): the
            # provider checks its name and value.
            if key in settings:
                raise InvalidArgument(f"{where}: {key} is given twice")
            settings[key] = value.strip()
            continue
        if key not in _VARIANT_OPTIONS or not eq:
            known = (*_VARIANT_OPTIONS, *_PRICE_OPTIONS)
            problem = (
                f"unknown key {key!r}{suggest(key, known)}"
                if key not in _VARIANT_OPTIONS
                else f"{key} needs a value ({key}=TEXT or {key}=@FILE)"
            )
            raise InvalidArgument(f"{where}: {problem}; keys are {', '.join(known)}")
        if key in kwargs:
            raise InvalidArgument(f"{where}: {key} is given twice")
        if value.startswith("@"):
            path = Path(value[1:])
            try:
                # A regular file, read whole within the cap: a FIFO or a device is refused.
                value = read_input(path, what=f"a {key} file", limit=_TEXT_LIMIT).decode("utf-8")
            except IsADirectoryError:
                raise InvalidArgument(
                    f"{where}: {key} file {str(path)!r} is a folder; give a text file"
                ) from None
            except InvalidArgument as exc:
                raise InvalidArgument(f"{where}: {key} file {exc}") from None
            except (OSError, UnicodeDecodeError) as exc:
                why = getattr(exc, "strerror", None) or str(exc)
                raise InvalidArgument(
                    f"{where}: {key} file {str(path)!r} cannot be read: {why}"
                ) from None
        kwargs[key] = value
    try:
        task = task_from_name(task_name, settings)
        return Variant(name, task, **kwargs)
    except InvalidArgument as exc:
        raise InvalidArgument(f"{where}: {exc}") from None


def keeping_workspaces(variants: Iterable[Any]) -> list[Any]:
    """The variants (objects or ``NAME=TASK`` strings), each ``cmd:`` task keeping its workspaces.

    What ``evalstats run --keep-workspaces`` does: strings are parsed with
    :func:`parse_variant`, and every :class:`~evalstats.running._command.CmdTask` among
    the variants' tasks leaves each sample's workspace in place (its path is
    in the sample record, under ``trace.kept_workspace``). Other tasks are
    unchanged. The manifest does not record the option, so a run can be
    resumed with or without it.

    Examples
    --------
    >>> [v] = keeping_workspaces(["a=cmd:python -c pass"])
    >>> v.name, v.task.keep_workspaces
    ('a', True)
    """
    from ._command import CmdTask

    out = []
    for v in variants:
        variant = parse_variant(v) if isinstance(v, str) else v
        if isinstance(variant, Variant) and isinstance(variant.task, CmdTask):
            variant.task.keep_workspaces = True
        out.append(variant)
    return out
