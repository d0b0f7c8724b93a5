"""A run's memory does not grow with its samples: a lazy schedule, written as it is made, and
no timer left behind per sample (benchmarks/run_memory.py measures the peak)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.errors import InvalidArgument, ResultsFileError
from evalstats.results._file import ResultsWriter, read_results
from evalstats.running._checks import contains
from evalstats.running._engine import Variant, iter_schedule, run, run_async, schedule
from evalstats.running._suite import Case

MANIFEST = {
    "suite": {"name": "s", "version": 1, "path": "s.json", "sha256": "ab" * 32},
    "cases": [{"id": "a", "prompt": "p"}],
    "variants": [{"name": "v", "task": {"kind": "python", "name": "t"}}],
    "runs": 1,
    "seed": 0,
}


@given(n_cases=st.integers(1, 5), n_variants=st.integers(1, 4), runs=st.integers(1, 4))
def test_iter_schedule_makes_the_same_slots_as_schedule(
    n_cases: int, n_variants: int, runs: int
) -> None:
    cases = [f"c{i}" for i in range(n_cases)]
    variants = [f"v{i}" for i in range(n_variants)]
    assert tuple(iter_schedule(cases, variants, runs)) == schedule(cases, variants, runs)


def test_iter_schedule_checks_its_arguments_before_the_first_slot() -> None:
    with pytest.raises(InvalidArgument, match="variant name 'A' appears twice"):
        iter_schedule(["a"], ["A", "A"], 1)
    with pytest.raises(InvalidArgument, match="runs=0"):
        iter_schedule(["a"], ["A"], 0)


def test_a_schedule_written_in_chunks_reads_back_whole(tmp_path: Path) -> None:
    # More slots than one chunk (4,096), and text JSON must escape.
    slots = [[f'case "{i % 7}" é', i, i // 2, i % 2, "v"] for i in range(10_000)]
    path = tmp_path / "r.jsonl"
    with ResultsWriter.create(
        path, {**MANIFEST, "schedule": [["a", 0, 0, 0, "v"]]}, schedule=iter(slots)
    ):
        pass
    first = path.read_text(encoding="utf-8").splitlines()[0]
    manifest = json.loads(first)
    assert manifest["schedule"] == slots
    assert manifest["seed"] == 0 and manifest["type"] == "manifest"
    assert read_results(path).manifest["schedule"] == slots


def test_an_empty_schedule_is_an_empty_list(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsWriter.create(path, MANIFEST, schedule=iter([])):
        pass
    assert json.loads(path.read_text().splitlines()[0])["schedule"] == []


def test_a_secret_in_a_streamed_schedule_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-canary-3f9a1c0e7d5b"
    monkeypatch.setenv("EVALSTATS_CANARY_API_KEY", secret)
    path = tmp_path / "r.jsonl"
    slots = [["a", i, i, 0, "v"] for i in range(5000)] + [[secret, 0, 0, 0, "v"]]
    with pytest.raises(ResultsFileError, match="EVALSTATS_CANARY_API_KEY"):
        ResultsWriter.create(path, MANIFEST, schedule=iter(slots))
    assert not path.exists()


def test_a_run_records_the_whole_schedule_in_its_manifest(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run("shop", ["old=standin:shop-v1", "new=standin:shop-v2"], runs=3, out=out, progress=False)
    m = read_results(out).manifest
    cases = [c["id"] for c in m["cases"]]
    assert m["schedule"] == [s.to_list() for s in schedule(cases, ["old", "new"], 3)]


class NeverWaits:
    """An async task whose run returns without ever giving the event loop a turn."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "name": "never-waits"}

    async def run(self, prompt: Any, *, seed: int) -> str:
        return "fine"


def test_cancelled_timeouts_do_not_pile_up_when_tasks_never_wait(tmp_path: Path) -> None:
    # Each sample's timeout is a timer on the loop; when the task returns at
    # once the timer is cancelled, and the loop drops cancelled timers only
    # when it runs. Workers that never let it run kept one timer per sample.
    seen: list[int] = []

    class Counting(NeverWaits):
        async def run(self, prompt: Any, *, seed: int) -> str:
            scheduled = getattr(asyncio.get_running_loop(), "_scheduled", None)
            if scheduled is None:  # pragma: no cover - not CPython's event loop
                pytest.skip("this event loop does not show its timers")
            seen.append(len(scheduled))
            return "fine"

    async def main() -> None:
        await run_async(
            [Case("a", "say something", (contains("fine"),))],
            [Variant("v", Counting())],
            runs=2000,
            out=tmp_path / "r.jsonl",
            progress=False,
            timeout=60,
        )

    asyncio.run(main())
    assert len(seen) == 2000
    assert max(seen) < 200, max(seen)  # 2,000 (one per sample) before the workers yielded
