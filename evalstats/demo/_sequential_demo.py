"""``evalstats demo --sequential``: the shop stand-in run until decided, beside the fixed design."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import whole_number
from ..deciding._sequential import sequential_plan
from ..deciding._until_decided import SequentialRun, run_until_decided
from ._shop import SLIP_RATES

__all__ = ["SequentialDemo", "run_sequential_demo"]


@dataclass(frozen=True)
class SequentialDemo:
    """What ``evalstats demo --sequential`` ran and found, beside the fixed design."""

    run: SequentialRun
    plan: Any  # SequentialPlan of this budget, looking after every round
    directory: Path

    def __str__(self) -> str:
        sim = self.plan.simulation
        cmp = self.run.comparison
        used = cmp.pairs if cmp is not None else 0
        lines = [
            "Stop when the answer is clear: the shop stand-in, version 1 (slips on 30% of "
            "replies) against version 2 (10%),",
            f"one run of each of the 4 cases per version per round, a look after every round, "
            f"at most {self.run.max_runs} rounds ({4 * self.run.max_runs} pairs).",
            "",
            str(self.run),
        ]
        if cmp is not None:
            lines.append(cmp.trajectory_text())
        lines.append("")
        if self.plan.fixed_pairs is not None:
            fixed = self.plan.fixed_pairs
            mean = sim.expected_pairs
            lines += [
                f"A fixed design with the power this budget gives ({sim.power}, simulated) "
                f"runs {fixed} pairs (exact McNemar power).",
                f"This run used {used} pairs; the fixed design always uses {fixed}. On average "
                f"the sequential design uses {mean.estimate:.1f} pairs ({mean.low:.1f} to "
                f"{mean.high:.1f}), {mean.estimate / fixed:.2f} of the fixed design's {fixed} "
                f"(simulated, {sim.experiments} experiments),",
                "and its verdict stays valid however often you look, which the fixed-n "
                "test's does not.",
            ]
        lines.append(f"results: {self.directory / 'results.jsonl'}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.to_dict(),
            "plan": self.plan.to_dict(),
            "directory": str(self.directory),
        }


def run_sequential_demo(
    *,
    max_runs: int = 33,
    seed: int = 0,
    level: float = 0.95,
    out: str | Path | None = None,
    progress: bool = False,
    experiments: int = 4000,
    force: bool = False,
) -> SequentialDemo:
    """Run the shop stand-in with ``run_until_decided`` and set it beside the fixed design.

    The default budget, 33 rounds of the 4 shop cases (132 pairs), gives the
    sequential design about 90% power at the stand-in's true rates (0.7 and
    0.9); the fixed McNemar design needs 91 pairs for that power. With
    ``force`` an earlier ``results.jsonl`` in ``out`` is replaced when the run ends.
    """
    import tempfile

    max_runs = whole_number("max_runs", max_runs)
    folder = Path(tempfile.mkdtemp(prefix="evalstats-demo-")) if out is None else Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    from .._files import replacing
    from ..errors import ResultsFileError

    with replacing(
        folder / "results.jsonl", force=force, keep=True, error=ResultsFileError
    ) as target:
        result = run_until_decided(
            "shop",
            ["v1=standin:shop-v1", "v2=standin:shop-v2"],
            max_runs=max_runs,
            out=target,
            level=level,
            seed=seed,
            progress=progress,
        )
    plan = sequential_plan(
        1.0 - SLIP_RATES[1],
        1.0 - SLIP_RATES[2],
        max_runs,
        cases=4,
        level=level,
        experiments=experiments,
        seed=seed,
        looks="round",
    )
    return SequentialDemo(result, plan, folder)
