"""Does ``run`` keep its memory flat as the number of samples grows?

Runs the shop suite in process (the ``standin:shop-v1`` and ``standin:shop-v2``
stand-ins, which answer without waiting, with the default 60 s timeout) for a
small and a large number of samples, each in a fresh subprocess, and prints
each run's peak resident memory (``ru_maxrss`` of that process) and the ratio
of the large run's peak to the small run's, the baseline measured in the same
run. Goal: the large run (200,000 samples) at 60 MB or less, and within 10% of
the small one (20,000 samples).

Asserts nothing.

Usage::

    python benchmarks/run_memory.py [--small 20000] [--large 200000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from evalstats.running._engine import run

samples, out = int(sys.argv[1]), sys.argv[2]
runs = samples // 8  # the shop suite: 4 cases x 2 variants per repeat
start = time.perf_counter()
outcome = run("shop", ["old=standin:shop-v1", "new=standin:shop-v2"], runs=runs, out=out,
              progress=False)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
print(json.dumps({"samples": outcome.samples_written, "peak_kib": peak, "seconds": elapsed}))
"""


def measure(samples: int, folder: Path) -> dict[str, float]:
    out = folder / f"run-{samples}.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(samples), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    out.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--large", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = measure(args.small, Path(tmp))
        large = measure(args.large, Path(tmp))
    for leg in (small, large):
        print(
            f"run, {leg['samples']:>9,.0f} samples in process: peak RSS "
            f"{leg['peak_kib'] / 1024:6.1f} MB ({leg['samples'] / leg['seconds']:,.0f} samples/s)"
        )
    ratio = large["peak_kib"] / small["peak_kib"]
    print(f"peak RSS ratio, large / small: {ratio:.3f} (goal: at most 1.10; large at most 60 MB)")


if __name__ == "__main__":
    main()
