"""Runs of every shape for the benchmarks: many cases or many samples, JSONL or CSV.

:func:`results_file` writes an evalstats results file of two variants (``old``,
``new``) run ``runs`` times on ``cases`` cases, paired and alternating as the
engine schedules them, with per-case pass rates drawn from a beta distribution
(so that cases differ, some pass always, some never), one or two checks per
case, a tag on some cases, and a few incomplete and unmeasured samples: every
path of the tally and the per-case tables is taken. :func:`table_file` writes
the same kind of run as a long CSV table (``case,variant,repeat,passed``).
Both are seeded, so a file is the same on every machine; they are written to
``benchmarks/out/`` (ignored by git) and reused when present.

Usage::

    python benchmarks/shapes.py results CASES RUNS [SEED]   # prints the path
    python benchmarks/shapes.py table ROWS CASES [SEED]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
TIME = "2026-01-01T00:00:00.000+00:00"


def _rates(rng: random.Random, cases: int) -> list[tuple[float, float]]:
    """Each case's true pass rate under ``old`` and ``new``."""
    out = []
    for _ in range(cases):
        p = rng.betavariate(0.8, 0.5)
        q = min(1.0, max(0.0, p + rng.choice((0.0, 0.0, 0.05, 0.1, -0.05))))
        if rng.random() < 0.1:
            p = q = 1.0
        out.append((p, q))
    return out


def results_file(cases: int, runs: int, seed: int = 1, out: Path = OUT) -> Path:
    """A results file of ``2 * cases * runs`` samples (see the module's docstring)."""
    path = out / f"shape-{cases}x{runs}-s{seed}.jsonl"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    ids = [f"c{k:06d}" for k in range(cases)]
    rates = _rates(rng, cases)
    two = [rng.random() < 0.3 for _ in range(cases)]
    manifest_cases = [
        {
            "id": cid,
            "prompt": f"question {cid}",
            "checks": [{"python": "contains('x')"}] + ([{"python": "word_count(1, 9)"}] * t),
            "fixtures": {},
            "required_actions": [],
            "review": "",
            "tags": ["hard"] if k % 7 == 0 else (["easy", "math"] if k % 11 == 0 else []),
            "holdout": False,
        }
        for k, (cid, t) in enumerate(zip(ids, two, strict=True))
    ]
    variants = [
        {
            "name": name,
            "task": {"kind": "python", "name": f"fixture-{name}", "model": f"m-{name}"},
            "transform": {"prefix": "", "suffix": "", "system": None, "template": None},
        }
        for name in ("old", "new")
    ]
    schedule = []
    pair = 0
    for r in range(runs):
        for k, cid in enumerate(ids):
            first, second = ("old", "new") if (k + r) % 2 == 0 else ("new", "old")
            schedule += [[cid, r, pair, 0, first], [cid, r, pair, 1, second]]
            pair += 1
    manifest = {
        "type": "manifest",
        "format": 1,
        "evalstats": "0.1.0",
        "counting_method": "1",
        "suite": {"name": "shapes", "version": None, "path": None, "sha256": "0" * 64},
        "cases": manifest_cases,
        "include_holdout": False,
        "selection": None,
        "variants": variants,
        "runs": runs,
        "seed": seed,
        "concurrency": 1,
        "timeout_s": 60.0,
        "retries": 0,
        "python": "3.11.7",
        "os": "Linux",
        "arch": "x86_64",
        "machine": "0" * 16,
        "started_at": TIME,
        "schedule": schedule,
    }
    by_variant = {v: {"completed": 0, "incomplete": 0, "unmeasured": 0} for v in ("old", "new")}
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, separators=(",", ":")) + "\n")
        for cid, r, p, pos, v in schedule:
            k = int(cid[1:])
            rate = rates[k][0 if v == "old" else 1]
            u = rng.random()
            status = "unmeasured" if u < 0.004 else "incomplete" if u < 0.01 else "completed"
            by_variant[v][status] += 1
            checks = []
            if status != "unmeasured":
                ok = status == "completed" and rng.random() < rate
                checks.append(
                    {
                        "check": "contains('x')",
                        "axis": None,
                        "status": "passed" if ok else "failed",
                        "reason": "" if ok else "doesn't mention 'x'",
                    }
                )
                if two[k]:
                    ok2 = status == "completed" and rng.random() < 0.9
                    checks.append(
                        {
                            "check": "word_count(1, 9)",
                            "axis": None,
                            "status": "passed" if ok2 else "failed",
                            "reason": "" if ok2 else "12 words",
                        }
                    )
            record = {
                "type": "sample",
                "case": cid,
                "variant": v,
                "repeat": r,
                "pair": p,
                "position": pos,
                "status": status,
                "reason": {"completed": None, "incomplete": "crashed", "unmeasured": "429"}[status],
                "prompt": {"system": None, "messages": [{"role": "user", "content": "q"}]},
                "answer": None if status == "unmeasured" else "an answer",
                "trace": None,
                "checks": checks,
                "latency_s": round(rng.random(), 6),
                "attempts": 1,
                "tokens": None,
                "model": None,
                "started_at": TIME,
                "finished_at": TIME,
            }
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
        summary = {
            "type": "summary",
            "status": "finished",
            "reason": None,
            "samples": len(schedule),
            "by_variant": by_variant,
            "finished_at": TIME,
            "elapsed_s": 1.0,
        }
        f.write(json.dumps(summary, separators=(",", ":")) + "\n")
    tmp.rename(path)
    return path


def table_file(rows: int, cases: int, seed: int = 1, out: Path = OUT) -> Path:
    """A long CSV table of ``rows`` rows: two variants, as many repeats
    of each case, a pass column of 1/0 and a few empty (unmeasured) cells."""
    path = out / f"table-{rows}x{cases}-s{seed}.csv"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    rates = _rates(rng, cases)
    runs = -(-rows // (2 * cases))
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("case,variant,repeat,passed\n")
        written = 0
        for r in range(runs):
            for k in range(cases):
                for j, v in enumerate(("old", "new")):
                    if written >= rows:
                        break
                    u = rng.random()
                    cell = "" if u < 0.003 else "1" if rng.random() < rates[k][j] else "0"
                    f.write(f"item-{k:06d},{v},{r},{cell}\n")
                    written += 1
    tmp.rename(path)
    return path


if __name__ == "__main__":
    what, *numbers = sys.argv[1:]
    make = {"results": results_file, "table": table_file}[what]
    print(make(*(int(n) for n in numbers)))
