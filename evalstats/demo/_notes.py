"""The offline notes model: a tool-calling stand-in whose behaviour rates are known.

:func:`respond` is a small "local model" that answers questions about a
folder of notes with three tools, ``list_notes()``, ``read_note(path)`` and
``propose_note(path, text)``. It is a pure function of the conversation (the
neutral message form of :mod:`evalstats.running.providers._base`, tool turns included),
the tools offered, a seed and the behaviour knobs of :class:`NotesModel`, so
it can be tested without HTTP; :mod:`evalstats.demo._server` serves it as
the model ``notes``.

What it does with a question
----------------------------
1. It finds the notes the question names (file names ending in ``.txt`` or
   ``.md``, with any directory part, so ``../private.txt`` is asked for as
   written). When none is named it calls ``list_notes`` first and then reads
   the listed notes whose names share a word with the question (all of them,
   up to :data:`MAX_LISTED_READS`, when none does).
2. It reads them one call at a time, then answers by quoting the line of
   each note read that shares the most words with the question ("According
   to notes.txt: Project name: Paper Kite"). A refused read is answered
   honestly ("I could not read draft.txt: refused: ..."), never with invented
   content; when a note it read says nothing about the question (no line
   shares a word with it), it says so ("notes.txt does not say anything
   about that").

How often it misbehaves is set by the knobs (the defaults are a "small local
model"), each decided once per conversation:

===================  =======  ====================================================
knob                 default  the behaviour
===================  =======  ====================================================
``p_read``           0.5      reads (or lists) before answering; otherwise it
                              guesses at once, a plausible wrong answer with no
                              tool call
``p_read_revised``   0.9      ``p_read`` when the question (or a system message)
                              holds :data:`READ_FIRST_PREFIX`
``p_stop_early``     0.2      of two or more notes to read, answers after the
                              first
``p_text_call``      0.1      when it would make its first call, writes
                              tool-call-looking text (``read_note("notes.txt")``)
                              as its final answer instead of a structured call
``p_obey_note``      0.3      obeys a line starting ``INSTRUCTION:`` in a note it
                              read (otherwise it says it did not follow it)
===================  =======  ====================================================

:meth:`NotesModel.rates` gives the true rate of each behaviour that follows,
for comparing observed rates with.

Consistent over a conversation
------------------------------
Over HTTP the model is stateless: every request carries the whole history and
the model decides afresh. So that a conversation does not flip-flop between
turns, every decision is drawn from a generator seeded by the request's seed
and a hash of the question (without the read-first prefix), never by the turn:
the same seed gives the same decisions on every turn. Clients should send the
same seed on each turn of a conversation. Decisions about how to start (read
or guess, text or structured call) matter only on the first turn; later turns
follow the history as it is, so a history the model would not have produced
still gets a sensible reply.

Because the prefix is left out of the hash, a conversation with the prefix and
the same conversation without it share their random draws: with the prefix,
it reads whenever it would have read without (``p_read <= p_read_revised``),
and more often. The improvement is real and known: ``p_read_revised - p_read``
in the probability of reading first.

Tool results are recognised as refusals by the trace's ``"error": true`` or,
as sent over the wire (where that flag is not sent), by content starting with
``refused`` or ``error``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .._validate import as_rate, suggest
from ..errors import InvalidArgument

__all__ = [
    "DEFAULT_NOTES_MODEL",
    "MAX_LISTED_READS",
    "READ_FIRST_PREFIX",
    "TOOL_NAMES",
    "Decisions",
    "NotesModel",
    "decide",
    "note_paths",
    "parse_notes_knobs",
    "respond",
]

#: The text whose presence in the user message raises the read rate.
READ_FIRST_PREFIX = "Read the relevant notes before you answer."

#: The tools the model knows how to call.
TOOL_NAMES = ("list_notes", "read_note", "propose_note")

#: The most notes it reads after listing when no listed name matches the question.
MAX_LISTED_READS = 3

# A note path as a question writes it: optional leading "/" or directory parts
# ("../", "notes/"), then a file name ending in .txt or .md.
_NOTE_PATH = re.compile(r"(?<![\w/.-])(/?(?:[\w.-]+/)*[\w.-]+\.(?:txt|md))\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]{2,}")
_INSTRUCTION = re.compile(r"^\s*INSTRUCTION:\s*(.*)$", re.IGNORECASE)
_REPLY_WITH = re.compile(
    r"\b(?:reply|answer|respond|say)\s+(?:only\s+)?with\s+(.+?)[.!]?\s*$", re.IGNORECASE
)
# Words that say nothing about which note or line is relevant.
_STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "answer",
        "are",
        "as",
        "at",
        "be",
        "before",
        "by",
        "can",
        "could",
        "do",
        "does",
        "file",
        "files",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "note",
        "notes",
        "of",
        "on",
        "or",
        "our",
        "please",
        "project",
        "read",
        "relevant",
        "say",
        "says",
        "tell",
        "that",
        "the",
        "their",
        "them",
        "there",
        "this",
        "to",
        "us",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "txt",
        "md",
    )
)
# A few words a question uses for what a note is called.
_SYNONYMS = {
    "task": "todo",
    "todo": "task",
    "tasks": "todo",
    "status": "release",
    "release": "status",
    "language": "lang",
    "lang": "language",
    "called": "name",
    "named": "name",
    "when": "date",
}

# Plausible wrong answers for a guess, by topic word in the question. None of
# them holds a fact of the notes suite's fixtures.
_GUESSES: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset({"name", "called"}),
        ("The project is called Blue Harbor.", "The project is named Lantern."),
    ),
    (
        frozenset({"language", "written"}),
        ("The project is written in Python.", "It is written in Rust."),
    ),
    (
        frozenset({"task", "todo", "next"}),
        ("The next task is fixing the login page.", "Next up is the database migration."),
    ),
    (
        frozenset({"status", "release"}),
        ("The release was cancelled last week.", "The release is waiting on legal review."),
    ),
    (
        frozenset({"region", "cloud", "production"}),
        ("Production runs in us-east-1.", "Production is hosted in eu-west-2."),
    ),
    (
        frozenset({"launch", "date"}),
        ("The launch is planned for June 3.", "It says the launch date is the first of May."),
    ),
)
_DEFAULT_GUESSES = (
    "As far as I know, everything in the notes is up to date.",
    "I believe that file only holds old meeting minutes.",
)


@dataclass(frozen=True)
class NotesModel:
    """The behaviour knobs of the notes model: probabilities, each in [0, 1].

    The defaults behave like a small local model; see the module docstring
    for what each knob does.

    Examples
    --------
    >>> NotesModel().rates()["reads_first"]
    0.45
    >>> NotesModel().rates(prefix=True)["reads_first"]
    0.81
    """

    p_read: float = 0.5
    p_read_revised: float = 0.9
    p_stop_early: float = 0.2
    p_text_call: float = 0.1
    p_obey_note: float = 0.3

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            object.__setattr__(self, name, float(as_rate(name, value)))

    def read_rate(self, *, prefix: bool = False) -> float:
        """The probability that it sets out to read (before the text-call slip)."""
        return self.p_read_revised if prefix else self.p_read

    def rates(self, *, prefix: bool = False) -> dict[str, float]:
        """The true per-conversation rate of each behaviour, with or without the prefix.

        Keys and their denominators:

        * ``guesses``: of all conversations, answers at once without a call;
        * ``text_call``: of all conversations, answers with tool-call-looking
          text instead of its first call;
        * ``reads_first``: of all conversations, makes a structured first call
          (``read_note``, or ``list_notes`` when no note is named) -- every
          later call follows from it;
        * ``stops_early``: of conversations with two or more notes to read,
          reads only the first; ``reads_all`` reads every one of them;
        * ``obeys_note``: of conversations where the notes it would read hold
          an ``INSTRUCTION:`` line, obeys it.
        """
        p = self.read_rate(prefix=prefix)
        structured = p * (1 - self.p_text_call)
        return {
            "guesses": 1 - p,
            "text_call": p * self.p_text_call,
            "reads_first": structured,
            "stops_early": structured * self.p_stop_early,
            "reads_all": structured * (1 - self.p_stop_early),
            "obeys_note": structured * self.p_obey_note,
        }


#: The default knobs.
DEFAULT_NOTES_MODEL = NotesModel()


def parse_notes_knobs(specs: Iterable[str]) -> NotesModel:
    """The notes model with knobs set from ``KNOB=VALUE`` texts; the rest at their defaults.

    What ``evalstats standin serve --notes p_read=0.3`` gives; several knobs
    may share one text, separated by commas (``p_read=0.3,p_obey_note=0``).

    Examples
    --------
    >>> parse_notes_knobs(["p_read=0.3", "p_obey_note=0,p_text_call=0.05"]).rates()["reads_first"]
    0.285
    >>> parse_notes_knobs(["p_reed=0.3"])
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: unknown notes knob 'p_reed' (did you mean 'p_read'?); \
knobs are p_read, p_read_revised, p_stop_early, p_text_call, p_obey_note
    """
    names = tuple(asdict(DEFAULT_NOTES_MODEL))
    if isinstance(specs, str):
        specs = [specs]
    knobs: dict[str, str] = {}
    for spec in specs:
        for item in str(spec).split(","):
            name, eq, value = item.partition("=")
            name = name.strip()
            if name not in names:
                raise InvalidArgument(
                    f"unknown notes knob {name!r}{suggest(name, names)}; "
                    f"knobs are {', '.join(names)}"
                )
            if not eq or not value.strip():
                raise InvalidArgument(f"notes knob {name} needs a value ({name}=RATE)")
            if name in knobs:
                raise InvalidArgument(f"notes knob {name} is given twice")
            knobs[name] = value.strip()
    return NotesModel(**{k: float(as_rate(k, v)) for k, v in knobs.items()})


@dataclass(frozen=True)
class Decisions:
    """What the model decided for one conversation (one seed and question).

    ``reads``: reads before answering (else guesses); ``text_call``: writes its
    first call as text; ``stops_early``: answers after the first of several
    notes; ``obeys_note``: obeys an instruction found in a note; ``pick``: a
    uniform draw in [0, 1) that chooses among wordings.
    """

    reads: bool
    text_call: bool
    stops_early: bool
    obeys_note: bool
    pick: float


def _core(question: str) -> str:
    """The question without the read-first prefix, whitespace folded."""
    text = re.sub(re.escape(READ_FIRST_PREFIX), " ", question, flags=re.IGNORECASE)
    return " ".join(text.split())


def decide(
    question: str, *, seed: int, knobs: NotesModel = DEFAULT_NOTES_MODEL, prefix: bool | None = None
) -> Decisions:
    """The decisions for the conversation about ``question`` with ``seed``.

    Drawn from a generator seeded by ``seed`` and a SHA-256 hash of the
    question without :data:`READ_FIRST_PREFIX`, five uniform draws in a fixed
    order, so one knob never shifts another and the prefix changes only the
    read threshold. ``prefix`` says whether the prefix is present (by default:
    whether ``question`` holds it).

    Examples
    --------
    >>> q = "What is the project called? See notes.txt."
    >>> decide(q, seed=3) == decide(q, seed=3)
    True
    >>> always = NotesModel(p_read=1, p_text_call=0)
    >>> decide(q, seed=3, knobs=always).reads, decide(q, seed=3, knobs=always).text_call
    (True, False)
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgument(f"seed={seed!r} must be a whole number")
    if not isinstance(question, str):
        raise InvalidArgument(f"question={question!r} must be a string")
    if prefix is None:
        prefix = READ_FIRST_PREFIX.casefold() in question.casefold()
    digest = hashlib.sha256(_core(question).encode()).hexdigest()
    rng = random.Random(f"evalstats.standin.notes:{seed}:{digest}")
    u_read, u_text, u_stop, u_obey, pick = (rng.random() for _ in range(5))
    return Decisions(
        reads=u_read < knobs.read_rate(prefix=prefix),
        text_call=u_text < knobs.p_text_call,
        stops_early=u_stop < knobs.p_stop_early,
        obeys_note=u_obey < knobs.p_obey_note,
        pick=pick,
    )


def note_paths(text: str) -> list[str]:
    """The note paths ``text`` names, in order, each once.

    Examples
    --------
    >>> note_paths("Compare notes.txt with status.md, then ../private.txt.")
    ['notes.txt', 'status.md', '../private.txt']
    """
    seen: list[str] = []
    for match in _NOTE_PATH.finditer(text):
        if match.group(1) not in seen:
            seen.append(match.group(1))
    return seen


def _words(text: str) -> set[str]:
    words = {w for w in _WORD.findall(text.casefold()) if w not in _STOPWORDS}
    words |= {w[:-1] for w in words if len(w) > 3 and w.endswith("s")}
    return words | {_SYNONYMS[w] for w in words if w in _SYNONYMS}


def _overlap(wanted: set[str], words: set[str]) -> int:
    """How many wanted words appear, a word matching its inflections ("agree", "agreed")."""
    return sum(
        any(
            w == v or (min(len(w), len(v)) >= 4 and (w.startswith(v) or v.startswith(w)))
            for v in words
        )
        for w in wanted
    )


def _tool_names(tools: Iterable[Any] | None) -> set[str]:
    """Tool names from names or definitions (OpenAI's ``{"type", "function"}`` or bare)."""
    names: set[str] = set()
    for tool in tools or ():
        if isinstance(tool, str):
            names.add(tool)
        elif isinstance(tool, Mapping):
            function = tool.get("function")
            inner: Mapping[str, Any] = function if isinstance(function, Mapping) else tool
            name = inner.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


@dataclass(frozen=True)
class _Outcome:
    name: str
    arguments: Mapping[str, Any]
    content: str | None  # None: the call has no result in the history
    error: bool


def _is_refusal(message: Mapping[str, Any], content: str) -> bool:
    if message.get("error") is True:
        return True
    return content.lstrip().casefold().startswith(("refused", "error"))


def _history(messages: Sequence[Mapping[str, Any]]) -> tuple[str, bool, list[_Outcome]]:
    """The question, whether the prefix is present, and the tool outcomes since it."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    if last_user is None:
        raise InvalidArgument("messages has no user message for the notes model to answer")
    question = messages[last_user].get("content")
    question = question if isinstance(question, str) else ""
    # The prefix counts in the question or in a system message.
    prefix = any(
        isinstance(m.get("content"), str)
        and READ_FIRST_PREFIX.casefold() in m["content"].casefold()
        for i, m in enumerate(messages)
        if i == last_user or m.get("role") == "system"
    )
    calls: list[dict[str, Any]] = []  # {"id", "name", "arguments", "content", "error"}
    for message in messages[last_user + 1 :]:
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    arguments = call.get("arguments")
                    calls.append(
                        {
                            "id": call.get("id"),
                            "name": str(call.get("name", "")),
                            "arguments": arguments if isinstance(arguments, Mapping) else {},
                            "content": None,
                            "error": False,
                        }
                    )
        elif role == "tool":
            content = message.get("content")
            content = content if isinstance(content, str) else ""
            waiting = [c for c in calls if c["content"] is None]
            # By id (OpenAI), else by name (Ollama's tool_name), else in order.
            match = next(
                (
                    c
                    for c in waiting
                    if c["id"] is not None and c["id"] == message.get("tool_call_id")
                ),
                None,
            )
            if match is None and message.get("tool_call_id") is None:
                match = next(
                    (c for c in waiting if c["name"] == message.get("name")),
                    waiting[0] if waiting else None,
                )
            if match is not None:
                match["content"] = content
                match["error"] = _is_refusal(message, content)
    outcomes = [_Outcome(c["name"], c["arguments"], c["content"], c["error"]) for c in calls]
    return question, prefix, outcomes


def _listed(content: str) -> list[str]:
    """Paths from a ``list_notes`` result: a JSON list (or ``{"notes": [...]}``), else
    the note paths the text names, else its lines."""
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    if isinstance(value, Mapping):
        value = value.get("notes")
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    lines = [line.strip().lstrip("-*").strip() for line in content.splitlines()]
    return note_paths(content) or [line for line in lines if line]


def _note_text(content: str) -> str:
    """A ``read_note`` result's text: as it is, or the ``text`` of a JSON object."""
    if content.lstrip().startswith("{"):
        try:
            value = json.loads(content)
        except ValueError:
            return content
        if isinstance(value, Mapping):
            for key in ("text", "content"):
                if isinstance(value.get(key), str):
                    return str(value[key])
    return content


def _choose(listed: list[str], question: str) -> list[str]:
    wanted = _words(question)
    matching = [p for p in listed if _overlap(wanted, _words(re.sub(r"\.(txt|md)$", "", p)))]
    return matching or listed[:MAX_LISTED_READS]


def _best_line(text: str, question: str) -> tuple[str | None, int]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not _INSTRUCTION.match(ln)]
    if not lines:
        return None, 0
    wanted = _words(question)
    scores = [_overlap(wanted, _words(ln)) for ln in lines]
    best = max(range(len(lines)), key=lambda i: (scores[i], -i))
    return lines[best], scores[best]


def _instruction(text: str) -> str | None:
    for line in text.splitlines():
        found = _INSTRUCTION.match(line)
        if found:
            return found.group(1).strip()
    return None


def _guess(question: str, pick: float) -> str:
    words = set(_WORD.findall(question.casefold()))
    parts = [options[int(pick * len(options))] for topic, options in _GUESSES if topic & words]
    return " ".join(parts) or _DEFAULT_GUESSES[int(pick * len(_DEFAULT_GUESSES))]


def _call_id(seed: int, question: str, index: int) -> str:
    digest = hashlib.sha256(f"{seed}:{question}:{index}".encode()).hexdigest()
    return f"call_{digest[:20]}"


def _text_call(name: str, arguments: Mapping[str, Any], pick: float) -> str:
    if pick < 0.5:
        inner = ", ".join(json.dumps(v) for v in arguments.values())
        return f"{name}({inner})"
    return json.dumps({"name": name, "arguments": dict(arguments)})


def _answer(
    question: str, targets: list[str], reads: dict[str, _Outcome], *, listed_only: bool, obeys: bool
) -> str:
    parts: list[str] = []
    quoted: list[str] = []
    silent: list[str] = []  # read, but with no line about the question
    ignored: list[str] = []
    for path in targets:
        outcome = reads.get(path)
        if outcome is None:
            continue
        if outcome.error or outcome.content is None:
            reason = outcome.content.strip() if outcome.content else "no result came back"
            parts.append(f"I could not read {path}: {reason}")
            continue
        text = _note_text(outcome.content)
        instruction = _instruction(text)
        if instruction is not None and obeys:
            said = _REPLY_WITH.search(instruction)
            return said.group(1).strip() if said else instruction
        if instruction is not None:
            ignored.append(path)
        line, score = _best_line(text, question)
        if line is not None and score > 0:
            parts.append(f"According to {path}: {line}")
            quoted.append(path)
        else:
            silent.append(path)
    # Notes picked from a listing that say nothing are not worth a word when
    # another one answered; a named note that says nothing is.
    if silent and not (listed_only and quoted):
        if len(silent) == 1:
            parts.append(f"{silent[0]} does not say anything about that")
        else:
            parts.append(f"The notes I read ({', '.join(silent)}) do not say anything about that")
    if ignored:
        parts.append(f"({', '.join(ignored)} also holds an instruction, which I did not follow.)")
    return " ".join(p if p.endswith((".", ")")) else p + "." for p in parts)


def respond(
    messages: Sequence[Mapping[str, Any]],
    tools: Iterable[Any] | None = TOOL_NAMES,
    *,
    seed: int,
    knobs: NotesModel = DEFAULT_NOTES_MODEL,
) -> dict[str, Any]:
    """The notes model's next turn in a conversation.

    Parameters
    ----------
    messages : sequence of mappings
        The conversation in the neutral form: ``{"role", "content"}``, assistant
        turns with ``tool_calls`` (``{"id", "name", "arguments"}``) and
        ``{"role": "tool", "tool_call_id", "name", "content"}`` results (an
        ``"error"`` flag is read when present). The last user message is the
        question.
    tools : iterable, optional
        The tools offered, as names or definitions; without ``read_note`` the
        model cannot read and guesses.
    seed : int
        Seeds the conversation's decisions (with the question), see :func:`decide`.
    knobs : NotesModel, optional
        The behaviour rates.

    Returns
    -------
    dict
        ``{"content": str or None, "tool_calls": [{"id", "name", "arguments"}]}``:
        either one tool call (content None) or a final answer (no calls).

    References
    ----------
    The tool-calling message shapes follow the OpenAI API reference, "Create
    chat completion" (``tool_calls``, ``role: "tool"``); the stand-in's rates
    are its own, documented in :class:`NotesModel`.

    Examples
    --------
    >>> careful = NotesModel(p_read=1, p_text_call=0)
    >>> question = [{"role": "user", "content": "What is the project called? See notes.txt."}]
    >>> turn = respond(question, seed=1, knobs=careful)
    >>> turn["content"], [(c["name"], c["arguments"]) for c in turn["tool_calls"]]
    (None, [('read_note', {'path': 'notes.txt'})])
    >>> result = {"role": "tool", "tool_call_id": turn["tool_calls"][0]["id"],
    ...           "name": "read_note", "content": "Project name: Paper Kite"}
    >>> history = [*question, {"role": "assistant", **turn}, result]
    >>> respond(history, seed=1, knobs=careful)["content"]
    'According to notes.txt: Project name: Paper Kite.'
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgument(f"seed={seed!r} must be a whole number")
    if not isinstance(knobs, NotesModel):
        raise InvalidArgument(f"knobs={knobs!r} must be a NotesModel")
    question, prefix, outcomes = _history(messages)
    core = _core(question)
    decisions = decide(question, seed=seed, knobs=knobs, prefix=prefix)
    available = _tool_names(tools)
    named = note_paths(core)
    call_id = _call_id(seed, core, len(outcomes))
    if not outcomes:
        return _first_turn(core, named, decisions, available, call_id)
    chosen = _targets(core, named, outcomes, decisions)
    if isinstance(chosen, str):
        return _said(chosen)
    targets, listed_only = chosen
    reads = _first_reads(outcomes)
    pending = [p for p in targets if p not in reads]
    attempted = sum(p in reads for p in targets)
    stop = decisions.stops_early and len(targets) >= 2 and attempted >= 1
    if pending and not stop and "read_note" in available and len(outcomes) < 2 * len(targets) + 1:
        return _called(call_id, "read_note", {"path": pending[0]})
    text = _answer(core, targets, reads, listed_only=listed_only, obeys=decisions.obeys_note)
    return _said(text or _guess(core, decisions.pick))


def _said(text: str) -> dict[str, Any]:
    """A turn that answers."""
    return {"content": text, "tool_calls": []}


def _called(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A turn that makes one tool call."""
    return {"content": None, "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _first_turn(
    core: str, named: list[str], decisions: Any, available: Any, call_id: str
) -> dict[str, Any]:
    """The first turn: read the named note (or list the notes), or guess without reading."""
    first: tuple[str, dict[str, Any]] = (
        ("read_note", {"path": named[0]}) if named else ("list_notes", {})
    )
    if not decisions.reads or first[0] not in available:
        return _said(_guess(core, decisions.pick))
    if decisions.text_call:
        return _said(_text_call(*first, decisions.pick))
    return _called(call_id, *first)


def _targets(
    core: str, named: list[str], outcomes: Sequence[_Outcome], decisions: Any
) -> tuple[list[str], bool] | str:
    """The notes to read and whether a listing chose them, or the answer when there are none."""
    if named:
        return named, False
    listing = next((o for o in outcomes if o.name == "list_notes"), None)
    if listing is None:
        return _guess(core, decisions.pick)
    if listing.error or listing.content is None:
        reason = listing.content.strip() if listing.content else "no result came back"
        return f"I could not list the notes: {reason}"
    targets = _choose(_listed(listing.content), core)
    return (targets, True) if targets else "There are no notes to read."


def _first_reads(outcomes: Sequence[_Outcome]) -> dict[str, _Outcome]:
    """Each note path's first ``read_note`` outcome."""
    reads: dict[str, _Outcome] = {}
    for outcome in outcomes:
        path = outcome.arguments.get("path")
        if outcome.name == "read_note" and isinstance(path, str) and path not in reads:
            reads[path] = outcome
    return reads
