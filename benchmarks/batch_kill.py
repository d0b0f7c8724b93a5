"""Does ``run --batch`` survive ``kill -9`` at any moment, and never pay twice?

Serves the stand-in (batches ending ``--delay`` seconds after they are made)
in this process, then ``--moments`` times: starts ``evalstats run --batch 4``
on the shop suite (2 variants, 6 repeats: 48 samples in 12 batches) as a
subprocess, waits until its results file exists, kills it with SIGKILL after
a uniform draw of 0 to ``--window`` seconds, and runs the same command with
``--resume`` to the end. After each, it counts

* samples lost (a (case, variant, repeat) the finished file lacks),
* samples written twice,
* requests sent in two batches, and batches the stand-in created that the file
  does not list (a batch paid for twice),

and prints the totals, how many kills fell while the run was under way, and
the 95% upper bound (Clopper-Pearson) on the share of kills that lose or
double anything, given none did. The same check with 6 moments is the test
``tests/test_batch_run.py::test_kill_9_at_random_moments_loses_nothing_and_pays_once``.

Measured (2 cores shared with other work, load about 14), seed 1: 20 kills, all
20 while the run was under way, in 124 s: 0 samples lost, 0 written twice, 0
requests sent in two batches, 0 batches made but not listed; 0 of 20 kills
lost or doubled anything, so the share is at most 14% (95% one-sided
Clopper-Pearson upper bound).

Asserts nothing. Usage::

    python benchmarks/batch_kill.py [--moments 20] [--window 2.0] [--delay 0.2] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from scipy.stats import beta  # noqa: E402

from evalstats.demo._server import serve  # noqa: E402
from evalstats.results._file import read_results  # noqa: E402


def _command(base: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "evalstats", "run", "shop",
        "--variant", f"v1=openai:shop-v1,base_url={base}/v1",
        "--variant", f"v2=openai:shop-v2,base_url={base}/v1",
        "--runs", "6", "--batch", "4", "--batch-poll-s", "0.05", "--no-progress",
        "--out", str(out), *extra,
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moments", type=int, default=20)
    parser.add_argument("--window", type=float, default=2.0)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lost = twice = resent = unlisted = cut = bad = 0
    started = time.perf_counter()
    with serve(batch_delay_s=args.delay) as server, tempfile.TemporaryDirectory() as tmp:
        for moment in range(args.moments):
            out = Path(tmp) / f"run-{moment}.jsonl"
            before = server.app.batches.creations().get("openai", 0)
            process = subprocess.Popen(
                _command(server.base_url, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            for _ in range(400):
                if out.exists() or process.poll() is not None:
                    break
                time.sleep(0.025)
            time.sleep(rng.uniform(0.0, args.window))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            cut += read_results(out).summary is None
            subprocess.run(
                _command(server.base_url, out, "--resume"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
                timeout=300,
                env={**os.environ},
            )
            results = read_results(out)
            keys = Counter((s["case"], s["variant"], s["repeat"]) for s in results.samples)
            submitted = [b for b in results.batches if b["state"] == "submitted"]
            requests = Counter(c for b in submitted for c in b["requests"])
            made = server.app.batches.creations()["openai"] - before
            this = (
                48 - len(keys),
                sum(n - 1 for n in keys.values()),
                sum(n - 1 for n in requests.values()),
                made - len(submitted),
            )
            lost, twice, resent, unlisted = (
                a + b for a, b in zip((lost, twice, resent, unlisted), this, strict=True)
            )
            bad += any(this)
    upper = beta.ppf(0.95, bad + 1, args.moments - bad) if bad < args.moments else 1.0
    print(
        f"{args.moments} kills ({cut} while the run was under way) in "
        f"{time.perf_counter() - started:.0f} s: {lost} samples lost, {twice} written twice, "
        f"{resent} requests sent in two batches, {unlisted} batches made but not listed"
    )
    print(
        f"kills that lost or doubled anything: {bad} of {args.moments}; the share is at most "
        f"{upper:.0%} (95% one-sided Clopper-Pearson upper bound)"
    )


if __name__ == "__main__":
    main()
