"""How fast does ``report`` read a large results file, and how much memory does it take?

Figures, each measured in a fresh process (wall time and peak RSS from
``ru_maxrss``), against the floor measured in the same run: a loop that only
parses every line of the same file with orjson and keeps nothing.

1. ``evalstats report FILE`` on 100,000 samples: goal at most 1.0 s and 100 MB,
   and at most 1.5x the orjson loop.
2. The same on 400,000 samples: the peak memory within 10% of the 100,000-sample
   one (memory must not grow with samples beyond the per-case tables).
3. ``evalstats report FILE`` on 1,000 samples: goal at most 0.15 s wall, from
   process start to exit.
4. ``compare`` and ``gate`` on the 100,000-sample file, for reference.

The files are real runs of the shop suite (old = stand-in version 1, new =
version 2) written by the engine; the large ones repeat a 1,000-sample run with
shifted repeats, so their records are the engine's own. They are written to
``benchmarks/out/`` (ignored by git) and reused when present.

Usage::

    python benchmarks/report.py [--samples 100000] [--large 400000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
BASE_RUNS = 125  # 4 cases x 2 variants x 125 runs = 1,000 samples

_FLOOR = """
import orjson, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        orjson.loads(line)
"""


def base_file() -> Path:
    """A 1,000-sample run of the shop suite, written by the engine."""
    path = OUT / "shop-1000.jsonl"
    if not path.exists():
        from evalstats.engine import run

        tmp = path.with_suffix(".part")
        tmp.unlink(missing_ok=True)
        run(
            "shop",
            ["old=standin:shop-v1", "new=standin:shop-v2"],
            runs=BASE_RUNS,
            out=tmp,
            progress=False,
        )
        tmp.rename(path)
    return path


def large_file(samples: int) -> Path:
    """``samples`` samples: the base run repeated with shifted repeats and pairs."""
    path = OUT / f"shop-{samples}.jsonl"
    if path.exists():
        return path
    lines = base_file().read_bytes().splitlines()
    manifest, records, summary = json.loads(lines[0]), lines[1:-1], json.loads(lines[-1])
    copies = max(1, samples // len(records))
    pairs = 1 + max(slot[2] for slot in manifest["schedule"])
    schedule = manifest["schedule"]
    manifest["schedule"] = [
        [c, r + k * BASE_RUNS, p + k * pairs, pos, v]
        for k in range(copies)
        for c, r, p, pos, v in schedule
    ]
    manifest["runs"] = BASE_RUNS * copies
    parsed = [json.loads(line) for line in records]
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, separators=(",", ":")) + "\n")
        for k in range(copies):
            for rec in parsed:
                rec = dict(rec, repeat=rec["repeat"] + k * BASE_RUNS, pair=rec["pair"] + k * pairs)
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        summary["samples"] = copies * len(parsed)
        f.write(json.dumps(summary, separators=(",", ":")) + "\n")
    tmp.rename(path)
    return path


def measure(argv: list[str], *, repeat: int) -> dict[str, float]:
    """Best wall time of ``repeat`` fresh processes (start to exit), and their peak RSS."""
    best = {"wall": float("inf"), "peak_mb": 0.0}
    for _ in range(repeat):
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, *argv], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):
            raise SystemExit(f"{argv} exited {child.returncode}")
        best["wall"] = min(best["wall"], elapsed)
        best["peak_mb"] = max(best["peak_mb"], usage.ru_maxrss / 1024)  # KiB on Linux
    return best


def cli(*argv: str) -> list[str]:
    return ["-m", "evalstats.cli", *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    small, big, huge = base_file(), large_file(args.samples), large_file(args.large)
    n = args.repeat

    floor = measure(["-c", _FLOOR, str(big)], repeat=n)
    rep = measure(cli("report", str(big)), repeat=n)
    print(f"1. report on {args.samples:,} samples ({big.stat().st_size / 1e6:.0f} MB)")
    print(f"   floor (orjson loop): {floor['wall']:6.2f} s, peak {floor['peak_mb']:5.0f} MB")
    print(
        f"   report:              {rep['wall']:6.2f} s, peak {rep['peak_mb']:5.0f} MB  "
        f"({rep['wall'] / floor['wall']:.2f}x the floor; goals 1.0 s, 100 MB, 1.5x)"
    )
    floor4 = measure(["-c", _FLOOR, str(huge)], repeat=1)
    rep4 = measure(cli("report", str(huge)), repeat=1)
    print(f"2. report on {args.large:,} samples ({huge.stat().st_size / 1e6:.0f} MB)")
    print(f"   floor (orjson loop): {floor4['wall']:6.2f} s, peak {floor4['peak_mb']:5.0f} MB")
    print(
        f"   report:              {rep4['wall']:6.2f} s, peak {rep4['peak_mb']:5.0f} MB  "
        f"({rep4['wall'] / floor4['wall']:.2f}x the floor; memory "
        f"{rep4['peak_mb'] / rep['peak_mb']:.2f}x the {args.samples:,}-sample report's, "
        "goal within 1.10x)"
    )
    start_only = measure(cli("--help"), repeat=n)
    small_rep = measure(cli("report", str(small)), repeat=n)
    print("3. report on 1,000 samples, process start to exit")
    print(f"   baseline (evalstats --help): {start_only['wall']:6.3f} s")
    print(
        f"   report:                      {small_rep['wall']:6.3f} s  "
        f"({small_rep['wall'] / start_only['wall']:.2f}x the baseline; goal 0.15 s)"
    )
    print(f"4. on {args.samples:,} samples (floor {floor['wall']:.2f} s)")
    for name, argv in (
        ("compare", cli("compare", str(big), "--a", "old", "--b", "new")),
        (
            "gate",
            cli(
                "gate",
                str(big),
                "--variant",
                "new",
                "--min-pass",
                "0.5",
                "--no-regression-vs",
                "old",
                "--margin",
                "0.02",
            ),
        ),
        ("plan", cli("plan", "--from", str(big))),
    ):
        fig = measure(argv, repeat=n)
        print(
            f"   {name + ':':<8} {fig['wall']:6.2f} s, peak {fig['peak_mb']:5.0f} MB  "
            f"({fig['wall'] / floor['wall']:.2f}x the floor)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
