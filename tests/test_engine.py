"""The engine: schedule, prompts, tasks, retries, statuses, durability and resume."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.demo._shop import make_assistant
from evalstats.errors import (
    InvalidArgument,
    ProviderError,
    ResultsFileError,
    TransientProviderError,
)
from evalstats.results._file import read_results
from evalstats.running import _engine as engine
from evalstats.running._checks import INSPECTION_FAILURE, contains, links_within, word_count
from evalstats.running._engine import (
    Prompt,
    TaskResult,
    Variant,
    as_task,
    backoff_delay,
    parse_variant,
    run,
    run_async,
    sample_seed,
    schedule,
    task_from_name,
)
from evalstats.running._judge import judged_by
from evalstats.running._suite import Case, find_suite, load_suite, suite_from_cases

SHOP = ["old=standin:shop-v1", "new=standin:shop-v2"]


def two_cases() -> list[Case]:
    return [
        Case("a", "Where is A-1042?", ((contains("A-1042"), "content"), word_count(1, 20))),
        Case("b", "Thanks!", ((contains("welcome"), "tone"),)),
    ]


def keys(samples: Any) -> list[tuple[str, str, int]]:
    return [(s["case"], s["variant"], s["repeat"]) for s in samples]


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the engine's backoff waits instead of sleeping."""
    recorded: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(engine, "_sleep", fake_sleep)
    return recorded


# --- schedule ------------------------------------------------------------------


@given(
    n_cases=st.integers(1, 6),
    n_variants=st.integers(1, 4),
    runs=st.integers(1, 5),
)
def test_schedule_has_every_sample_once_and_rotates_who_goes_first(
    n_cases: int, n_variants: int, runs: int
) -> None:
    cases = [f"c{i}" for i in range(n_cases)]
    variants = [f"v{j}" for j in range(n_variants)]
    slots = schedule(cases, variants, runs)
    triples = [(s.case, s.repeat, s.variant) for s in slots]
    assert len(triples) == len(set(triples)) == n_cases * n_variants * runs
    # repeat-major, then case; each (case, repeat) pair contiguous
    assert [(s.repeat, s.case_index) for s in slots] == sorted(
        (s.repeat, s.case_index) for s in slots
    )
    for s in slots:
        assert s.case == cases[s.case_index]
        assert s.pair == s.repeat * n_cases + s.case_index
        # the variant at position p is variants[(p + case_index + repeat) % k]
        assert s.variant == variants[(s.position + s.case_index + s.repeat) % n_variants]
    if n_variants == 2:
        for s in slots:
            if s.variant == "v0":
                assert (s.position == 0) == ((s.case_index + s.repeat) % 2 == 0)


def test_schedule_with_two_variants_alternates_by_parity() -> None:
    slots = schedule(["x", "y"], ["A", "B"], 2)
    firsts = [(s.case, s.repeat, s.variant) for s in slots if s.position == 0]
    assert firsts == [("x", 0, "A"), ("y", 0, "B"), ("x", 1, "B"), ("y", 1, "A")]


def test_schedule_rejects_bad_input() -> None:
    with pytest.raises(InvalidArgument, match="runs=0 must be at least 1"):
        schedule(["a"], ["A"], 0)
    with pytest.raises(InvalidArgument, match="variant name 'A' appears twice"):
        schedule(["a"], ["A", "A"], 1)
    with pytest.raises(InvalidArgument, match="case id 'a' appears twice"):
        schedule(["a", "a"], ["A"], 1)
    with pytest.raises(InvalidArgument, match="cases is empty"):
        schedule([], ["A"], 1)


# --- seeds and backoff ------------------------------------------------------------


def test_sample_seed_is_the_documented_hash() -> None:
    # An independent computation of the documented rule: SHA-256 of the JSON
    # list [seed, case, repeat, variant], first 8 bytes big-endian, shifted to 63 bits.
    digest = hashlib.sha256(json.dumps([7, "order status", 3, "new"]).encode()).hexdigest()
    assert sample_seed(7, "order status", 3, "new") == int(digest[:16], 16) >> 1


_places = st.tuples(
    st.integers(0, 5), st.sampled_from("abc"), st.integers(0, 5), st.sampled_from("AB")
)


@given(a=_places, b=_places)
def test_sample_seeds_are_in_range_and_differ_between_samples(a: Any, b: Any) -> None:
    sa, sb = sample_seed(*a), sample_seed(*b)
    assert 0 <= sa < 2**63
    assert (sa == sb) == (a == b)


@given(
    attempt=st.integers(1, 12),
    base=st.floats(0, 5),
    retry_after=st.none() | st.floats(0, 100),
    seed=st.integers(0, 1000),
)
def test_backoff_is_full_jitter_capped_and_honours_retry_after(
    attempt: int, base: float, retry_after: float | None, seed: int
) -> None:
    delay = backoff_delay(attempt, base=base, retry_after=retry_after, rng=random.Random(seed))
    cap = min(engine.MAX_BACKOFF_S, base * 2 ** (attempt - 1))
    if retry_after is not None:
        assert delay >= retry_after
        assert delay <= max(cap, retry_after)
    else:
        assert 0 <= delay <= cap


# --- variants and prompts --------------------------------------------------------


def test_render_applies_template_then_prefix_and_suffix() -> None:
    case = Case("c", "Where is {it}?", (contains("x"),))
    v = Variant("v", "standin:shop-v1", prefix="P ", suffix=" S", template='{"q": "{prompt}"}')
    prompt = v.render(case)
    assert prompt.text == 'P {"q": "Where is {it}?"} S'
    assert prompt.system is None
    assert prompt.messages == ({"role": "user", "content": prompt.text},)
    assert prompt.to_dict() == {
        "system": None,
        "messages": [{"role": "user", "content": prompt.text}],
    }


def test_render_of_a_conversation_keeps_the_turns_and_joins_system_prompts() -> None:
    case = Case(
        "c",
        None,
        (contains("x"),),
        messages=(
            {"role": "system", "content": "You answer for a shop."},
            {"role": "user", "content": "Where is my order?"},
            {"role": "assistant", "content": "Which one?"},
            {"role": "user", "content": "A-1042."},
        ),
    )
    prompt = Variant("v", "standin:shop-v1", system="Be brief.", suffix="!").render(case)
    assert prompt.text == "A-1042.!"
    assert prompt.system == "Be brief.\n\nYou answer for a shop."
    assert [m["role"] for m in prompt.messages] == ["system", "user", "assistant", "user"]
    assert prompt.messages[0]["content"] == prompt.system
    assert prompt.messages[-1]["content"] == "A-1042.!"


def test_variant_rejects_what_cannot_work() -> None:
    with pytest.raises(InvalidArgument, match="has no '\\{prompt\\}'"):
        Variant("v", "standin:shop-v1", template="no slot")
    with pytest.raises(InvalidArgument, match="cannot be given to the plain callable"):
        Variant("v", str.upper, system="Be brief.")
    with pytest.raises(InvalidArgument, match="name=''"):
        Variant("", "standin:shop-v1")


def test_parse_variant_reads_files_and_names_the_spec_in_errors(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix.txt"
    prefix.write_text("Be brief, please.\n", encoding="utf-8")
    v = parse_variant(f"new=standin:shop-v2,prefix=@{prefix},suffix= Thanks")
    assert v.name == "new"
    assert v.prefix == "Be brief, please.\n"  # exactly as in the file
    assert v.suffix == " Thanks"
    assert v.describe() == {
        "name": "new",
        "task": {"kind": "standin", "model": "shop-v2", "base_url": None, "settings": {}},
        "transform": {
            "prefix": "Be brief, please.\n",
            "suffix": " Thanks",
            "system": None,
            "template": None,
        },
    }
    with pytest.raises(InvalidArgument, match="unknown key 'prefx' \\(did you mean 'prefix'\\?\\)"):
        parse_variant("new=standin:shop-v2,prefx=hi")
    with pytest.raises(InvalidArgument, match="variant 'new': expected NAME=TASK"):
        parse_variant("new")
    with pytest.raises(InvalidArgument, match="system file .* cannot be read"):
        parse_variant(f"new=standin:shop-v2,system=@{tmp_path / 'missing.txt'}")
    with pytest.raises(InvalidArgument, match="suffix is given twice"):
        parse_variant("new=standin:shop-v2,suffix=a,suffix=b")
    with pytest.raises(
        InvalidArgument, match="variant 'x=standn:shop-v2': unknown task .*did you mean 'standin'"
    ):
        parse_variant("x=standn:shop-v2")


def test_named_tasks() -> None:
    task = task_from_name("standin:shop-v1?delay=0.01")
    assert task.describe()["settings"] == {"delay": 0.01}
    with pytest.raises(InvalidArgument, match="did you mean 'shop-v2'"):
        task_from_name("standin:shop-v2x")
    with pytest.raises(InvalidArgument, match="delay='-1' must be"):
        task_from_name("standin:shop-v1?delay=-1")
    with pytest.raises(InvalidArgument, match="KIND:NAME"):
        task_from_name("shop-v1")


def test_as_task_wraps_callables_and_passes_tasks_through() -> None:
    async def shout(text: str) -> str:
        return text.upper()

    wrapped = as_task(shout)
    assert wrapped.describe() == {"kind": "python", "name": f"{__name__}.{shout.__qualname__}"}
    prompt = Prompt("hi", None, ({"role": "user", "content": "hi"},))
    assert asyncio.run(wrapped.run(prompt, seed=0)) == "HI"
    assert asyncio.run(as_task(str.upper).run(prompt, seed=0)) == "HI"  # sync, in a thread
    standin = task_from_name("standin:shop-v2")
    assert as_task(standin) is standin

    class SyncRun:
        def describe(self) -> dict[str, Any]:
            return {}

        def run(self, prompt: Prompt, *, seed: int) -> str:
            return ""

    with pytest.raises(InvalidArgument, match="not async"):
        as_task(SyncRun())
    with pytest.raises(InvalidArgument, match="neither a Task nor a callable"):
        as_task(42)


# --- a run, end to end -----------------------------------------------------------


def test_a_run_writes_manifest_samples_in_schedule_order_and_summary(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    outcome = run("shop", SHOP, runs=3, out=out, progress=False, seed=5)
    assert outcome.status == "finished" and outcome.samples_written == 24 and outcome.skipped == 0
    results = read_results(out)
    assert results.warnings == ()
    m = results.manifest
    assert m["suite"]["path"] == "shop"  # as given, not where it is installed
    suite = load_suite(find_suite("shop"))
    for key in (
        "evalstats",
        "counting_method",
        "python",
        "os",
        "arch",
        "machine",
        "started_at",
        "concurrency",
        "timeout_s",
        "retries",
        "include_holdout",
    ):
        assert key in m
    assert m["suite"]["sha256"] == suite.sha256
    assert m["cases"] == [c.to_dict() for c in suite.select()]
    assert [v["name"] for v in m["variants"]] == ["old", "new"]
    assert m["runs"] == 3 and m["seed"] == 5
    slots = schedule(suite.select(), ["old", "new"], 3)
    assert m["schedule"] == [s.to_list() for s in slots]
    # sequential: finishing order is the schedule's order
    assert [
        (r["case"], r["repeat"], r["pair"], r["position"], r["variant"]) for r in results.samples
    ] == [tuple(s.to_list()) for s in slots]
    assert results.summary is not None and results.summary["status"] == "finished"
    assert results.summary["samples"] == 24
    assert results.summary["by_variant"] == outcome.by_variant
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    # each answer is a fresh stand-in seeded with the sample's seed
    for r in results.samples:
        version = 1 if r["variant"] == "old" else 2
        seed = sample_seed(5, r["case"], r["repeat"], r["variant"])
        prompt = r["prompt"]["messages"][-1]["content"]
        assert r["answer"] == make_assistant(version, seed=seed)(prompt)
        assert r["attempts"] == 1 and r["status"] == "completed"


def test_answers_do_not_depend_on_concurrency(tmp_path: Path) -> None:
    run("shop", SHOP, runs=4, out=tmp_path / "a.jsonl", progress=False)
    run("shop", SHOP, runs=4, out=tmp_path / "b.jsonl", progress=False, concurrency=5)
    a = {
        k: s["answer"]
        for k, s in zip(
            keys(read_results(tmp_path / "a.jsonl").samples),
            read_results(tmp_path / "a.jsonl").samples,
            strict=True,
        )
    }
    b_samples = read_results(tmp_path / "b.jsonl").samples
    assert {k: s["answer"] for k, s in zip(keys(b_samples), b_samples, strict=True)} == a


def test_records_are_written_in_finishing_order(tmp_path: Path) -> None:
    finished: list[str] = []
    delays = {"a": 0.03, "b": 0.0}

    async def task(text: str) -> str:
        case = "a" if "A-1042" in text else "b"
        await asyncio.sleep(delays[case])
        finished.append(text)
        return "You're welcome, A-1042."

    cases = two_cases()
    v = [Variant("x", task, suffix=" (x)"), Variant("y", task, suffix=" (y)")]
    run(cases, v, runs=3, out=tmp_path / "r.jsonl", progress=False, concurrency=4)
    samples = read_results(tmp_path / "r.jsonl").samples
    assert [s["prompt"]["messages"][-1]["content"] for s in samples] == finished
    slots = {(s.case, s.repeat, s.variant): s for s in schedule(cases, v, 3)}
    assert sorted(keys(samples)) == sorted((c, v, r) for c, r, v in slots)
    assert keys(samples) != [(s.case, s.variant, s.repeat) for s in slots.values()]  # reordered
    for s in samples:
        slot = slots[(s["case"], s["repeat"], s["variant"])]
        assert (s["pair"], s["position"]) == (slot.pair, slot.position)


def test_concurrency_keeps_that_many_samples_in_flight(tmp_path: Path) -> None:
    live = 0
    peak = 0

    async def task(text: str) -> str:
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.01)
        live -= 1
        return "You're welcome, A-1042."

    outcome = run(
        two_cases(),
        [Variant("x", task)],
        runs=20,
        out=tmp_path / "r.jsonl",
        progress=False,
        concurrency=8,
    )
    assert outcome.samples_written == 40
    assert peak == 8
    assert len(set(keys(read_results(tmp_path / "r.jsonl").samples))) == 40


def test_an_existing_results_path_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b"precious\n")
    before = os.stat(out)
    with pytest.raises(ResultsFileError, match="already exists"):
        run("shop", SHOP, runs=1, out=out, progress=False)
    assert out.read_bytes() == b"precious\n"
    assert os.stat(out).st_mtime_ns == before.st_mtime_ns


def test_python_cases_and_plain_callables(tmp_path: Path) -> None:
    outcome = run(
        two_cases(),
        [Variant("echo", lambda text: text)],
        runs=2,
        out=tmp_path / "r.jsonl",
        progress=False,
        timeout=None,
    )
    assert outcome.by_variant == {"echo": {"completed": 4, "incomplete": 0, "unmeasured": 0}}
    results = read_results(tmp_path / "r.jsonl")
    assert results.manifest["variants"][0]["task"]["kind"] == "python"
    assert results.manifest["suite"]["sha256"] == suite_from_cases(two_cases()).sha256
    first = results.samples[0]
    assert first["checks"] == [  # no flag on a passed verdict: neither can be true
        {"check": "contains('A-1042')", "axis": "content", "status": "passed", "reason": ""},
        {"check": "word_count(1, 20)", "axis": None, "status": "passed", "reason": ""},
    ]


def test_a_plain_callable_cannot_take_a_conversation(tmp_path: Path) -> None:
    case = Case(
        "c",
        None,
        (contains("x"),),
        messages=(
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Yes?"},
            {"role": "user", "content": "Order A-1042"},
        ),
    )
    with pytest.raises(InvalidArgument, match="is a conversation"):
        run([case], [Variant("v", str.upper)], runs=1, out=tmp_path / "r.jsonl", progress=False)
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": 0}, "runs=0 must be at least 1"),
        ({"concurrency": 0}, "concurrency=0 must be at least 1"),
        ({"timeout": -1}, "timeout=-1 must be a positive number"),
        ({"retries": -1}, "retries=-1 must be at least 0"),
        ({"seed": "x"}, "seed='x' must be a whole number"),
        ({"backoff": float("nan")}, "backoff=nan must be"),
    ],
)
def test_run_checks_its_arguments(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"runs": 1, **kwargs}
    with pytest.raises(InvalidArgument, match=message):
        run("shop", SHOP, out=tmp_path / "r.jsonl", progress=False, **args)
    assert not (tmp_path / "r.jsonl").exists()


# --- statuses: retries, timeouts, incomplete, unmeasured, stopped ------------------


def run_one(tmp_path: Path, task: Any, **kwargs: Any) -> list[dict[str, Any]]:
    out = tmp_path / f"r{len(list(tmp_path.iterdir()))}.jsonl"
    cases = kwargs.pop("cases", two_cases()[:1])
    run(cases, [Variant("v", task)], runs=1, out=out, progress=False, **kwargs)
    return list(read_results(out).samples)


def test_transient_failures_are_retried_until_an_answer(tmp_path: Path, waits: list[float]) -> None:
    calls = 0

    async def flaky(text: str) -> str:
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise TransientProviderError("503 service unavailable")
        return "A-1042 is on its way"

    [sample] = run_one(tmp_path, flaky, backoff=0.25)
    assert sample["status"] == "completed" and sample["attempts"] == 3
    assert len(waits) == 2
    assert 0 <= waits[0] <= 0.25 and 0 <= waits[1] <= 0.5  # full jitter, doubling


def test_after_the_last_retry_the_sample_is_unmeasured(tmp_path: Path, waits: list[float]) -> None:
    async def down(text: str) -> str:
        raise TransientProviderError("429 too many requests", retry_after=0.2)

    [sample] = run_one(tmp_path, down, retries=2, backoff=0.001)
    assert sample["status"] == "unmeasured"
    assert sample["reason"] == (
        "no answer after 3 attempts: TransientProviderError: 429 too many requests"
    )
    assert sample["attempts"] == 3 and sample["checks"] == [] and sample["answer"] is None
    assert len(waits) == 2 and all(w >= 0.2 for w in waits)  # Retry-After honoured


def test_a_timeout_is_retried_then_unmeasured(tmp_path: Path, waits: list[float]) -> None:
    async def hangs(text: str) -> str:
        await asyncio.sleep(30)
        return "never"

    [sample] = run_one(tmp_path, hangs, timeout=0.05, retries=1)
    assert sample["status"] == "unmeasured"
    assert sample["reason"] == "no answer after 2 attempts: timed out after 0.05 s"
    assert len(waits) == 1


def test_a_sync_task_that_hangs_times_out_in_its_thread(tmp_path: Path, waits: list[float]) -> None:
    import threading

    release = threading.Event()

    def hangs(text: str) -> str:
        release.wait(5)
        return "late"

    try:
        [sample] = run_one(tmp_path, hangs, timeout=0.05, retries=0)
    finally:
        release.set()
    assert sample["status"] == "unmeasured"
    assert sample["reason"] == "no answer after 1 attempt: timed out after 0.05 s"


def test_a_task_that_raises_gives_an_incomplete_sample(tmp_path: Path) -> None:
    def broken(text: str) -> str:
        raise ValueError("boom")

    [sample] = run_one(tmp_path, broken)
    assert sample["status"] == "incomplete"
    assert sample["reason"] == "the task raised ValueError: boom"
    reason = f"{INSPECTION_FAILURE}: the task raised ValueError: boom"
    assert [c["status"] for c in sample["checks"]] == ["failed", "failed"]
    assert all(c["reason"] == reason for c in sample["checks"])
    assert all(c["not_inspected"] is True for c in sample["checks"])


def test_a_check_with_nothing_to_inspect_is_marked_so_in_a_completed_sample(
    tmp_path: Path,
) -> None:
    case = Case("c", "Where are the terms?", (links_within("example.com"), contains("terms")))
    [sample] = run_one(tmp_path, lambda text: "Read the terms on our site.", cases=[case])
    assert sample["status"] == "completed"
    links, terms = sample["checks"]
    assert links["status"] == "failed" and links["not_inspected"] is True
    assert links["reason"] == f"{INSPECTION_FAILURE}: the answer has no links"
    assert terms["status"] == "passed" and "not_inspected" not in terms
    assert "judge_unmeasured" not in links and "judge_unmeasured" not in terms


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "the answer is empty"),
        ("  \n", "the answer is only whitespace"),
        (None, "there is no answer"),
        (42, "the answer is int, not text"),
        (TaskResult(""), "the answer is empty"),
    ],
)
def test_an_empty_answer_is_incomplete_and_fails_every_check(
    tmp_path: Path, answer: Any, reason: str
) -> None:
    async def task(text: str) -> Any:
        return answer

    [sample] = run_one(tmp_path, task)
    assert sample["status"] == "incomplete" and sample["reason"] == reason
    text = answer.answer if isinstance(answer, TaskResult) else answer
    assert sample["answer"] == (text if isinstance(text, str) else None)  # kept when text
    assert [c["reason"] for c in sample["checks"]] == [f"{INSPECTION_FAILURE}: {reason}"] * 2
    assert [c["not_inspected"] for c in sample["checks"]] == [True, True]


def test_a_task_result_keeps_trace_tokens_and_model(tmp_path: Path) -> None:
    class Reporting:
        def describe(self) -> dict[str, Any]:
            return {"kind": "test", "model": "m"}

        async def run(self, prompt: Prompt, *, seed: int) -> TaskResult:
            return TaskResult(
                "A-1042 shipped",
                trace=[{"tool": "lookup"}],
                tokens={"input": 12, "output": 3},
                model="m-2026",
            )

    [sample] = run_one(tmp_path, Reporting())
    assert sample["status"] == "completed"
    assert sample["trace"] == [{"tool": "lookup"}]
    assert sample["tokens"] == {"input": 12, "output": 3}
    assert sample["model"] == "m-2026"


def test_a_judge_that_fails_transiently_leaves_its_check_unmeasured_for_the_judge(
    tmp_path: Path, waits: list[float]
) -> None:
    calls = 0

    def judge(prompt: str) -> str:
        nonlocal calls
        calls += 1
        raise TransientProviderError("judge rate limited")

    case = Case("c", "Where is A-1042?", (contains("A-1042"), judged_by(judge, "Polite.")))
    [sample] = run_one(tmp_path, lambda text: "A-1042 shipped", cases=[case], retries=2)
    # The answer was measured; the judge gave no verdict: that check is neither
    # passed nor failed, and marked so that the report counts it apart.
    assert sample["status"] == "completed" and sample["answer"] == "A-1042 shipped"
    plain, judged = sample["checks"]
    assert plain["status"] == "passed"
    assert judged["status"] == "unscored" and judged["judge_unmeasured"] is True
    assert "not_inspected" not in judged and "judge_unmeasured" not in plain
    assert (
        judged["reason"].startswith("the judge gave no verdict")
        and "rate limited" in judged["reason"]
    )
    assert calls == 3 and len(waits) == 2


def test_a_plain_check_that_fails_transiently_is_retried(
    tmp_path: Path, waits: list[float]
) -> None:
    calls = 0

    def flaky_check(answer: str) -> str | None:
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise TransientProviderError("lookup service busy")
        return None

    case = Case("c", "Where is A-1042?", (contains("A-1042"), flaky_check))
    [sample] = run_one(tmp_path, lambda text: "A-1042 shipped", cases=[case], retries=2)
    assert sample["status"] == "completed" and calls == 3 and len(waits) == 2
    assert [c["status"] for c in sample["checks"]] == ["passed", "passed"]
    calls = -10
    [sample] = run_one(tmp_path, lambda text: "A-1042 shipped", cases=[case], retries=2)
    assert sample["status"] == "unmeasured" and calls == -7  # 1 + 2 retries
    assert sample["reason"] == (
        "the check flaky_check could not be scored: no answer after 3 attempts: "
        "TransientProviderError: lookup service busy"
    )


def test_a_judge_that_recovers_scores_the_answer(tmp_path: Path, waits: list[float]) -> None:
    calls = 0

    def judge(prompt: str) -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise TransientProviderError("judge busy")
        return "Fine.\nPASS"

    case = Case("c", "Where is A-1042?", (judged_by(judge, "Polite."),))
    [sample] = run_one(tmp_path, lambda text: "A-1042 shipped", cases=[case])
    assert sample["status"] == "completed"
    assert sample["checks"][0]["status"] == "passed"
    assert len(waits) == 1


def test_a_provider_error_that_is_not_transient_stops_the_run(tmp_path: Path) -> None:
    calls = 0

    async def task(text: str) -> str:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise ProviderError("401 invalid API key")
        return "A-1042"

    out = tmp_path / "r.jsonl"
    with pytest.raises(ProviderError, match="401 invalid API key"):
        run(two_cases(), [Variant("v", task)], runs=5, out=out, progress=False)
    results = read_results(out)
    assert len(results.samples) == 2
    assert results.summary is not None
    assert results.summary["status"] == "stopped"
    assert results.summary["reason"] == "ProviderError: 401 invalid API key"


def test_a_judge_provider_error_stops_the_run_too(tmp_path: Path) -> None:
    def judge(prompt: str) -> str:
        raise ProviderError("judge model not found")

    case = Case("c", "Where is A-1042?", (judged_by(judge, "Polite."),))
    out = tmp_path / "r.jsonl"
    with pytest.raises(ProviderError, match="judge model not found"):
        run([case], [Variant("v", str.upper)], runs=2, out=out, progress=False)
    assert not out.exists()  # stopped before any sample: no file to refuse the next run


def test_progress_bar_counts_unmeasured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], waits: list[float]
) -> None:
    async def down(text: str) -> str:
        raise TransientProviderError("down")

    run(two_cases(), [Variant("v", down)], runs=1, out=tmp_path / "r.jsonl", retries=0)
    err = capsys.readouterr().err
    assert "2/2" in err and "unmeasured=2" in err
    run(
        two_cases(),
        [Variant("v", down)],
        runs=1,
        out=tmp_path / "q.jsonl",
        retries=0,
        progress=False,
    )
    assert capsys.readouterr().err == ""


# --- resume ------------------------------------------------------------------------


def finished_run(tmp_path: Path, name: str = "full.jsonl", **kwargs: Any) -> Path:
    out = tmp_path / name
    run("shop", SHOP, runs=3, out=out, progress=False, **kwargs)
    return out


@settings(max_examples=15)
@given(cut=st.integers(0, 24), partial=st.integers(0, 30), data=st.data())
def test_resume_after_a_crash_loses_and_duplicates_nothing(
    tmp_path_factory: pytest.TempPathFactory, cut: int, partial: int, data: st.DataObject
) -> None:
    tmp = tmp_path_factory.mktemp("resume")
    full = finished_run(tmp)
    lines = full.read_bytes().splitlines(keepends=True)
    manifest, samples = lines[0], lines[1:25]
    # a crash after `cut` samples, in the middle of writing the next line
    next_line = samples[cut] if cut < len(samples) else lines[-1]
    crashed = manifest + b"".join(samples[:cut]) + next_line[: min(partial, len(next_line) - 1)]
    out = tmp / "crashed.jsonl"
    out.write_bytes(crashed)
    concurrency = data.draw(st.integers(1, 4))
    outcome = run(
        "shop", SHOP, runs=3, out=out, progress=False, resume=True, concurrency=concurrency
    )
    assert outcome.status == "finished"
    assert outcome.skipped == cut and outcome.samples_written == 24 - cut
    results = read_results(out)
    assert results.warnings == ()
    assert sorted(keys(results.samples)) == sorted(keys(read_results(full).samples))
    assert len(set(keys(results.samples))) == 24
    assert out.read_bytes().startswith(manifest + b"".join(samples[:cut]))  # kept as written
    expected = {
        k: s["answer"]
        for k, s in zip(keys(read_results(full).samples), read_results(full).samples, strict=True)
    }
    assert {
        k: s["answer"] for k, s in zip(keys(results.samples), results.samples, strict=True)
    } == expected
    assert results.summary is not None and results.summary["samples"] == 24
    assert results.summary["by_variant"] == read_results(full).summary["by_variant"]  # type: ignore[index]


def test_resume_of_a_finished_run_adds_nothing(tmp_path: Path) -> None:
    out = finished_run(tmp_path)
    outcome = run("shop", SHOP, runs=3, out=out, progress=False, resume=True)
    assert outcome.samples_written == 0 and outcome.skipped == 24
    results = read_results(out)
    assert len(results.samples) == 24 and results.summary["status"] == "finished"  # type: ignore[index]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"runs": 4}, "runs (the file has 3, this run 4)"),
        ({"seed": 1}, "seed (the file has 0, this run 1)"),
        ({"variants": ["old=standin:shop-v1", "new=standin:shop-v1"]}, "the variants"),
        ({"variants": ["old=standin:shop-v1", "new=standin:shop-v2,suffix=!"]}, "the variants"),
        ({"include_holdout": True}, "include_holdout"),
    ],
)
def test_resume_refuses_a_different_run(tmp_path: Path, change: dict[str, Any], named: str) -> None:
    out = finished_run(tmp_path)
    before = out.read_bytes()
    args: dict[str, Any] = {"runs": 3, "variants": SHOP, **change}
    variants = args.pop("variants")
    with pytest.raises(ResultsFileError, match="cannot resume") as info:
        run("shop", variants, out=out, progress=False, resume=True, **args)
    assert named in str(info.value)
    assert out.read_bytes() == before


def test_resume_refuses_another_suite(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run(two_cases(), SHOP, runs=1, out=out, progress=False)
    with pytest.raises(ResultsFileError, match="the suite's SHA-256"):
        run("shop", SHOP, runs=1, out=out, progress=False, resume=True)


def test_a_cancelled_run_is_interrupted_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    variants = ["old=standin:shop-v1?delay=0.005", "new=standin:shop-v2?delay=0.005"]

    async def main() -> None:
        job = asyncio.ensure_future(
            run_async("shop", variants, runs=10, out=out, progress=False, concurrency=2)
        )
        while len(out.read_bytes().splitlines()) < 6 if out.exists() else True:
            await asyncio.sleep(0.005)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(main())
    first = read_results(out)
    assert first.summary is not None and first.summary["status"] == "interrupted"
    assert 5 <= len(first.samples) < 80
    outcome = run("shop", variants, runs=10, out=out, progress=False, resume=True, concurrency=8)
    assert outcome.status == "finished" and outcome.skipped == len(first.samples)
    results = read_results(out)
    assert len(results.samples) == len(set(keys(results.samples))) == 80


def test_fresh_stand_ins_per_sample_keep_their_true_pass_rates(tmp_path: Path) -> None:
    # Each sample gets make_assistant(version, seed=sample_seed(...)); the pass
    # rates must then match the stand-in's known truth (0.70 and 0.90, see
    # evalstats.demo._shop.SLIP_RATES) within a 99.9% Wilson interval.
    from evalstats.results._file import sample_passed
    from evalstats.stats._intervals import proportion_ci

    out = tmp_path / "r.jsonl"
    run("shop", SHOP, runs=150, out=out, progress=False)
    samples = read_results(out).samples
    for variant, truth in (("old", 0.70), ("new", 0.90)):
        passed = [sample_passed(s) for s in samples if s["variant"] == variant]
        ci = proportion_ci(sum(passed), len(passed), level=0.999)
        assert ci.low <= truth <= ci.high, (variant, ci)


def test_holdout_cases_run_only_when_asked(tmp_path: Path) -> None:
    cases = [
        *two_cases(),
        Case("kept aside", "Where is A-1042?", (contains("A-1042"),), holdout=True),
    ]
    suite = suite_from_cases(cases)
    for include in (False, True):
        out = tmp_path / f"r{include}.jsonl"
        run(
            suite,
            [Variant("v", str.upper)],
            runs=2,
            out=out,
            progress=False,
            include_holdout=include,
        )
        results = read_results(out)
        ran = {s["case"] for s in results.samples}
        assert ("kept aside" in ran) == include
        assert results.manifest["include_holdout"] is include
        assert [c["id"] for c in results.manifest["cases"]] == [
            c.id for c in suite.select(include_holdout=include)
        ]
    only_holdout = suite_from_cases([cases[-1]])
    with pytest.raises(InvalidArgument, match="no cases to run"):
        run(
            only_holdout,
            [Variant("v", str.upper)],
            runs=1,
            out=tmp_path / "x.jsonl",
            progress=False,
        )


def test_a_task_that_leaks_a_key_stops_the_run_before_the_key_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-9b1f3e5d7c"
    monkeypatch.setenv("EVALSTATS_TEST_API_KEY", secret)

    def leaky(text: str) -> str:
        return f"A-1042, and my key is {secret}"

    out = tmp_path / "r.jsonl"
    with pytest.raises(ResultsFileError, match="refusing to write a credential"):
        run(two_cases(), [Variant("v", leaky)], runs=2, out=out, progress=False)
    # The first sample was refused: the run wrote none, so it leaves no file at all.
    assert not out.exists()


def test_task_kinds_is_a_registry_for_more_kinds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Echo:
        def __init__(self, name: str) -> None:
            self.name = name

        def describe(self) -> dict[str, Any]:
            return {"kind": "echo", "model": self.name, "base_url": None, "settings": {}}

        async def run(self, prompt: Prompt, *, seed: int) -> TaskResult:
            return TaskResult(f"{self.name}: {prompt.text}", model=self.name)

    monkeypatch.setitem(engine.TASK_KINDS, "echo", Echo)
    out = tmp_path / "r.jsonl"
    run(two_cases(), ["e=echo:A-1042"], runs=1, out=out, progress=False)
    results = read_results(out)
    assert results.manifest["variants"][0]["task"]["model"] == "A-1042"
    assert [s["answer"] for s in results.samples] == ["A-1042: Where is A-1042?", "A-1042: Thanks!"]


def test_run_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    # A Jupyter cell runs in an event loop: run() must not fail there with
    # "asyncio.run() cannot be called from a running event loop".
    out = tmp_path / "r.jsonl"

    async def cell() -> Any:
        return engine.run(
            "shop", ["a=standin:shop-v1", "b=standin:shop-v2"], runs=2, out=out, progress=False
        )

    outcome = asyncio.run(cell())
    assert outcome.status == "finished"
    assert outcome.samples_written == 16
    same = tmp_path / "same.jsonl"
    engine.run("shop", ["a=standin:shop-v1", "b=standin:shop-v2"], runs=2, out=same, progress=False)
    answers = [s["answer"] for s in read_results(out).samples]
    assert answers == [s["answer"] for s in read_results(same).samples]


def test_run_inside_a_loop_raises_what_the_run_raised(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text("not mine\n")

    async def cell() -> Any:
        return engine.run("shop", ["a=standin:shop-v1"], runs=1, out=out, progress=False)

    with pytest.raises(ResultsFileError):
        asyncio.run(cell())
    assert out.read_text() == "not mine\n"
