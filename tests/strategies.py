"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st
from records import check, sample
from records import manifest as results_manifest  # noqa: F401 - the name tests import
from records import write as write_results_file  # noqa: F401 - the name tests import

levels = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


@st.composite
def counts(draw: st.DrawFn, max_trials: int = 500) -> tuple[int, int]:
    """A (successes, trials) pair with trials >= 1."""
    n = draw(st.integers(1, max_trials))
    k = draw(st.integers(0, n))
    return k, n


@st.composite
def paired_cells(draw: st.DrawFn, max_total: int = 300) -> tuple[int, int, int, int]:
    """Cells (both, only_a, only_b, neither) of a paired 2x2 table, total >= 1."""
    cells = draw(st.lists(st.integers(0, max_total // 4), min_size=4, max_size=4))
    if sum(cells) == 0:
        cells[draw(st.integers(0, 3))] = 1
    return tuple(cells)  # type: ignore[return-value]


# --- text for the checks' property tests ------------------------------------


@st.composite
def word_chars_text(draw: st.DrawFn, max_size: int = 8) -> str:
    """A non-empty run of characters that regex ``\\w`` treats as word characters."""
    import re

    word = re.compile(r"\w")
    alphabet = st.characters(categories=["L", "Nd", "Nl", "No"]).filter(
        lambda c: bool(word.match(c))
    )
    return draw(st.text(alphabet, min_size=1, max_size=max_size))


def whitespace_runs() -> st.SearchStrategy[str]:
    """A non-empty run of Unicode whitespace (what ``str.split()`` splits on)."""
    return st.text(st.sampled_from(_unicode_spaces()), min_size=1, max_size=4)


def _unicode_spaces() -> list[str]:
    import sys

    global _SPACES
    if _SPACES is None:
        _SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    return _SPACES


_SPACES: list[str] | None = None


def json_keys() -> st.SearchStrategy[str]:
    """A JSON object key without dots (dots separate nested keys in ``is_json_with``)."""
    return st.text(min_size=1, max_size=6).filter(lambda k: "." not in k)


@st.composite
def clustered_outcomes(
    draw: st.DrawFn, min_clusters: int = 1, max_clusters: int = 15
) -> tuple[list[float], list[int]]:
    """Outcomes in [0, 1] (mostly 0/1) with a case label each; at least one outcome."""
    n_clusters = draw(st.integers(min_clusters, max_clusters))
    outcomes: list[float] = []
    labels: list[int] = []
    values = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1))
    for c in range(n_clusters):
        runs = draw(st.lists(values, min_size=1, max_size=6))
        outcomes += runs
        labels += [c] * len(runs)
    return outcomes, labels


# --- power and planning ---------------------------------------------------------

#: A true pass rate, including the ends 0 and 1.
rates = st.one_of(
    st.sampled_from([0.0, 1.0, 0.5]),
    # (scipy's binom.pmf, the tests' reference, overflows for p near 1e-308)
    st.floats(1e-12, 1.0 - 1e-12),
)

#: An intra-case correlation for the case model.
iccs = st.floats(0.0, 0.9, allow_nan=False)


# --- results files (report, compare, gate) ---------------------------------------


_CHECK_STATUS = st.sampled_from(["passed", "failed", "failed-not-inspected", "unscored"])


@st.composite
def variant_sample_records(
    draw: st.DrawFn,
    cases: tuple[str, ...] = ("c1", "c2", "c3"),
    variant: str = "v",
    max_runs: int = 5,
) -> list[dict]:
    """Sample records of one variant: every status, check verdict and axis mixed."""
    runs = draw(st.integers(1, max_runs))
    records = []
    for r in range(runs):
        for case in cases:
            status = draw(st.sampled_from(["completed", "completed", "incomplete", "unmeasured"]))
            checks = []
            for name, axis in (("x", "content"), ("y", "format"), ("z", None)):
                verdict = draw(_CHECK_STATUS)
                reason = ""
                if verdict == "failed-not-inspected":
                    verdict, reason = "failed", "could not be inspected: the answer is empty"
                elif verdict == "failed":
                    reason = f"{name} missed"
                checks.append(check(verdict, name, axis=axis, reason=reason))
            if draw(st.booleans()):  # as written before the checks' flags were fields
                checks = [
                    {k: v for k, v in c.items() if k not in ("not_inspected", "judge_unmeasured")}
                    for c in checks
                ]
            tokens = st.fixed_dictionaries(
                {"input": st.integers(0, 50), "output": st.integers(0, 50)}
            )
            records.append(
                sample(
                    case,
                    variant,
                    r,
                    status=status,
                    checks=checks,
                    latency_s=draw(st.one_of(st.none(), st.floats(0, 100, allow_nan=False))),
                    answer="hidden answer",
                    tokens=draw(st.one_of(st.none(), tokens)),
                )
            )
    return records


@st.composite
def paired_run_outcomes(
    draw: st.DrawFn, max_cases: int = 4, max_runs: int = 5
) -> dict[str, dict[str, list[bool | None]]]:
    """``{variant: {case: [True, False or None (unmeasured) per repeat]}}`` for A and B."""
    cases = [f"c{i}" for i in range(draw(st.integers(1, max_cases)))]
    runs = draw(st.integers(1, max_runs))
    outcome = st.sampled_from([True, True, False, None])
    return {
        v: {c: draw(st.lists(outcome, min_size=runs, max_size=runs)) for c in cases}
        for v in ("A", "B")
    }


@st.composite
def paired_runs(
    draw: st.DrawFn, min_cases: int = 1, max_cases: int = 8, max_runs: int = 4
) -> tuple[dict[str, list[bool]], dict[str, list[bool]]]:
    """Pass/fail outcomes of A and B, ``{case: [passed per repeat]}``, equally many
    repeats per case."""
    runs = draw(st.integers(1, max_runs))
    cases = draw(st.integers(min_cases, max_cases))
    outcomes = st.lists(st.booleans(), min_size=runs, max_size=runs)
    a = {f"c{i}": draw(outcomes) for i in range(cases)}
    b = {f"c{i}": draw(outcomes) for i in range(cases)}
    return a, b


def one_more_pass(outcomes: dict[str, list[bool]], data: Any) -> dict[str, list[bool]]:
    """``outcomes`` with one failure, drawn by ``data`` (``st.data()``), turned into a
    pass (an example where nothing failed is passed over)."""
    fails = [(c, r) for c, rs in outcomes.items() for r, ok in enumerate(rs) if not ok]
    assume(fails)
    c, r = data.draw(st.sampled_from(fails))
    better = {k: list(v) for k, v in outcomes.items()}
    better[c][r] = True
    return better


# --- tool-using conversations (neutral form, see evalstats.running.providers._base.conversation)

_tool_texts = st.text(min_size=1, max_size=12)
_tool_arg_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8))


@st.composite
def tool_conversations(draw: st.DrawFn, max_rounds: int = 3) -> list[dict]:
    """A user question, then rounds of an assistant turn with tool calls and
    their results (each with the trace's ``error`` flag), then a final answer.

    Call ids are unique across the conversation.
    """
    messages: list[dict] = [{"role": "user", "content": draw(_tool_texts)}]
    n = 0
    for _ in range(draw(st.integers(0, max_rounds))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            name = draw(st.sampled_from(["list_notes", "read_note", "propose_note"]))
            args = draw(st.dictionaries(st.sampled_from(["path", "text"]), _tool_arg_values))
            calls.append({"id": f"call_{n}", "name": name, "arguments": args})
            n += 1
        content = draw(st.one_of(st.none(), st.just(""), _tool_texts))
        messages.append({"role": "assistant", "content": content, "tool_calls": calls})
        for call in calls:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["name"],
                    "content": draw(st.text(max_size=12)),
                    "error": draw(st.booleans()),
                }
            )
    messages.append({"role": "assistant", "content": draw(_tool_texts)})
    if draw(st.booleans()):
        messages.append({"role": "user", "content": draw(_tool_texts)})
    return messages


# --- workspace fixtures (see evalstats.running._workspace.make_workspace)

_fixture_segments = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8
)


@st.composite
def fixture_maps(draw: st.DrawFn, max_files: int = 5) -> dict[str, str]:
    """Case fixtures: relative paths (folders without a suffix, files ending in
    ``.txt`` or ``.md``, so no file is also a folder) mapped to any text."""
    paths = draw(
        st.lists(
            st.builds(
                lambda folders, stem, suffix: "/".join([*folders, stem + suffix]),
                st.lists(_fixture_segments, max_size=2),
                _fixture_segments,
                st.sampled_from([".txt", ".md"]),
            ).filter(lambda p: p != "private.txt"),
            max_size=max_files,
            unique=True,
        )
    )
    return {p: draw(st.text(max_size=40)) for p in paths}


# --- tool-use conversations and their trace files (see evalstats.running._traces)

_note_paths = st.sampled_from(
    ["notes.txt", "todo.md", "status.md", "../private.txt", "private.txt"]
)
_result_texts = st.text(max_size=30)


@st.composite
def traced_conversations(draw: st.DrawFn, max_turns: int = 4, max_calls: int = 3) -> dict:
    """A tool-use conversation as the list of steps that generated it.

    ``turns[n]`` lists the calls of response ``n`` that were executed, each
    ``{"id", "name", "arguments", "content", "error"}``, in the order their
    results came back (a turn with no calls is a reply the user answered with
    another message); ``call_orders[n]`` is the order in which response ``n``
    listed them; ``unexecuted`` lists
    the calls of the last response that never ran (a budget stopped the
    assistant). Call ids are unique, numbered afresh in every response (as
    some services do), or all the same. Write it out with :func:`trace_records`.
    """
    id_mode = draw(st.sampled_from(["unique", "per_turn", "same"]))
    serial = 0

    def new_call(index: int) -> dict:
        nonlocal serial
        serial += 1
        cid = {"unique": f"c{serial}", "per_turn": f"call_{index}", "same": "x"}[id_mode]
        name = draw(st.sampled_from(["list_notes", "read_note", "read_note", "propose_note"]))
        arguments: dict = {}
        if name != "list_notes":
            arguments["path"] = draw(_note_paths)
        if name == "propose_note":
            arguments["text"] = draw(_result_texts)
        return {"id": cid, "name": name, "arguments": arguments}

    turns = []
    call_orders = []
    for _ in range(draw(st.integers(0, max_turns))):
        steps = []
        for index in range(draw(st.integers(0, max_calls))):
            step = new_call(index)
            step["content"] = draw(_result_texts)
            step["error"] = draw(st.booleans())
            steps.append(step)
        turns.append(steps)
        # The response may list its calls in another order than their results
        # come back; with one id for every call only the order itself can pair them.
        order = list(range(len(steps)))
        if id_mode != "same":
            order = draw(st.permutations(order))
        call_orders.append(order)
    unexecuted = [new_call(i) for i in range(draw(st.integers(0, 2)))]
    stopped = (
        draw(st.sampled_from(["model_calls", "tool_calls", "deadline"])) if unexecuted else None
    )
    return {
        "question": draw(_result_texts),
        "turns": turns,
        "call_orders": call_orders,
        "unexecuted": unexecuted,
        "answer": draw(_result_texts),
        "stopped": stopped,
    }


def trace_records(conversation: dict) -> list[dict]:
    """The records of the trace file the notes assistant writes for ``conversation``.

    Every request repeats the whole history so far, tool results included, as
    the trace format says; each turn without calls is followed by a user
    message, so the conversation goes on.
    """
    tools = ["list_notes", "read_note", "propose_note"]
    history: list[dict] = [{"role": "user", "content": conversation["question"]}]
    records: list[dict] = [
        {
            "type": "start",
            "question": conversation["question"],
            "model": "openai:notes",
            "workspace_notes": ["notes.txt"],
            "budgets": {},
        }
    ]

    def public(step: dict) -> dict:
        return {"id": step["id"], "name": step["name"], "arguments": step["arguments"]}

    for turn, steps in enumerate(conversation["turns"]):
        records.append({"type": "request", "turn": turn, "messages": list(history), "tools": tools})
        calls = [public(steps[i]) for i in conversation["call_orders"][turn]]
        content = None if calls else f"reply {turn}"
        records.append({"type": "response", "turn": turn, "content": content, "tool_calls": calls})
        history.append({"role": "assistant", "content": content, "tool_calls": calls})
        for s in steps:
            history.append(
                {
                    "role": "tool",
                    "tool_call_id": s["id"],
                    "name": s["name"],
                    "content": s["content"],
                    "error": s["error"],
                }
            )
        if not calls:
            history.append({"role": "user", "content": "Go on."})
    last = len(conversation["turns"])
    records.append({"type": "request", "turn": last, "messages": list(history), "tools": tools})
    calls = [public(s) for s in conversation["unexecuted"]]
    records.append(
        {
            "type": "response",
            "turn": last,
            "content": None if calls else conversation["answer"],
            "tool_calls": calls,
        }
    )
    records.append(
        {"type": "final", "answer": conversation["answer"], "stopped": conversation["stopped"]}
    )
    return records


@st.composite
def paired_results(
    draw: st.DrawFn, min_cases: int = 1, max_cases: int = 5, max_repeats: int = 12
) -> tuple[dict, dict]:
    """Outcomes of A and B paired by (case, repeat): same cases, same repeat counts."""
    n_cases = draw(st.integers(min_cases, max_cases))
    a, b = {}, {}
    for i in range(n_cases):
        r = draw(st.integers(1, max_repeats))
        a[f"case{i}"] = draw(st.lists(st.booleans(), min_size=r, max_size=r))
        b[f"case{i}"] = draw(st.lists(st.booleans(), min_size=r, max_size=r))
    return a, b


# --- exact tests' p-values and reviewed subsets (multiplicity, PPI) ---------------


@st.composite
def attained_families(draw: st.DrawFn, max_size: int = 6) -> tuple[list[float], list[Any]]:
    """A few exact tests (McNemar's or Fisher's) with one p-value each that its test
    attains, and the set of values each test can attain."""
    from evalstats.stats._discrete import fisher_attainable, mcnemar_attainable

    sets = []
    for _ in range(draw(st.integers(1, max_size))):
        if draw(st.booleans()):
            sets.append(mcnemar_attainable(draw(st.integers(0, 14))))
        else:
            na, nb = draw(st.integers(1, 8)), draw(st.integers(1, 8))
            sets.append(fisher_attainable(na, nb, draw(st.integers(0, na + nb))))
    p = [float(s[draw(st.integers(0, s.size - 1))]) for s in sets]
    return p, sets


@st.composite
def reviewed_samples(
    draw: st.DrawFn, min_samples: int = 10, max_samples: int = 40
) -> tuple[list[bool], list[bool], list[bool]]:
    """Automatic verdicts on every sample, which were reviewed (at least ten, in any
    places) and a person's verdict on every sample (read only where reviewed)."""
    n = draw(st.integers(max(min_samples, 10), max_samples))
    auto = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    reviewed = draw(st.sets(st.integers(0, n - 1), min_size=10, max_size=n))
    mask = [i in reviewed for i in range(n)]
    human = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return auto, mask, human
