"""Runs whose samples carry scores, built with the record factory (tests/records.py).

:func:`scored_run` writes a run of paired variants whose one graded check
gives each sample a score: a judge's level on a 1-5 scale, mapped to [0, 1]
as the engine maps it, ``(level - 1) / 4``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import records


def random_levels(seed: int, *, cases: int, repeats: int, shift: int = 1) -> dict:
    """Levels on 1-5 for variants ``old`` and ``new``, by case and repeat: A's drawn
    from 2, 3, 3, 4 and B's from the same raised by ``shift`` (kept within 1-5)."""
    rng = random.Random(seed)
    a = {f"c{i}": [rng.choice([2, 3, 3, 4]) for _ in range(repeats)] for i in range(cases)}
    b = {
        f"c{i}": [max(1, min(5, rng.choice([2, 3, 3, 4]) + shift)) for _ in range(repeats)]
        for i in range(cases)
    }
    return {"old": a, "new": b}


def level_sample(case: str, variant: str, repeat: int, level: int | None, **fields: Any) -> dict:
    """A sample whose judge gave ``level`` on 1-5 (None: an unmeasured sample)."""
    if level is None:
        return records.sample(case, variant, repeat, None, **fields)
    score = (level - 1) / 4
    check = records.check(
        "passed" if level >= 4 else "failed",
        "judge",
        reason="" if level >= 4 else "below 4",
        score=score,
        raw_score=level,
        scale=(1, 5),
    )
    return records.sample(case, variant, repeat, checks=[check], score=score, **fields)


def scored_run(
    path: Path,
    levels: Mapping[str, Mapping[str, Sequence[int | None]]],
    *,
    sampled: bool = False,
) -> Path:
    """Write ``{variant: {case: [level per repeat]}}`` as a finished run to ``path``."""
    variants = list(levels)
    cases = list(dict.fromkeys(c for by_case in levels.values() for c in by_case))
    runs = max(len(row) for by_case in levels.values() for row in by_case.values())
    samples = [
        level_sample(case, v, r, lv)
        for v, by_case in levels.items()
        for case, row in by_case.items()
        for r, lv in enumerate(row)
    ]
    manifest = records.manifest(cases, variants, runs, sampled=sampled)
    records.write(path, manifest, samples, {"status": "finished"})
    return path


def scores_of(levels: Mapping[str, Sequence[int | None]]) -> tuple[list[str], list[float]]:
    """Cases and scores, pair by pair, of one variant's measured levels."""
    cases, scores = [], []
    for case, row in levels.items():
        for lv in row:
            if lv is not None:
                cases.append(case)
                scores.append((lv - 1) / 4)
    return cases, scores
