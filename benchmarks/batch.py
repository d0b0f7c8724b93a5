"""What does ``run --batch`` cost the client, and does its memory stay flat?

Starts the stand-in server (``evalstats standin serve``) in its own process on
127.0.0.1, with batches that end at once, and runs the shop suite with the
``openai`` provider against it, each run in a fresh subprocess whose peak
resident memory (``ru_maxrss``) and wall time are taken:

1. ``--batch`` (5,000 requests a batch, 2 in flight per variant) at a quarter
   of the requests, a half, and all of them (100,000 by default);
2. the same requests without ``--batch``, 32 in flight (the baseline, measured
   in the same run; ``--plain N`` takes fewer, and the time is then scaled).

It prints each run's requests, seconds, requests per second and peak memory,
the ratio of the batch run's time to the plain run's, and the ratio of the
largest batch run's peak memory to the smallest's (flat: near 1). The
server's own work (answering, building the output files) runs in the
server's process and is not in the client's figures; the seconds are the
client's wall time, the server's included.

Measured (2 cores shared with other work, load about 16), two runs:

* ``--batch``: 100,000 requests in 303-315 s (318-330 per second), peak
  230-237 MB; 50,000: 224-226 MB; 25,000: 194-200 MB. The peak is set by the
  requests waiting at once (2 batches of 5,000 per variant, 20,000 in all,
  each with its prompt, request body and coroutine): from 50,000 to 100,000
  requests it grows 3-5%, from 25,000 to 100,000 the ratio is 1.18-1.19;
* without ``--batch``, 32 in flight: 20,000 requests at 121-138 per second,
  peak 50 MB; the batch run's throughput is 2.30-2.73x that.

Asserts nothing. Usage::

    python benchmarks/batch.py [--requests 100000] [--plain 100000]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from evalstats.running._engine import run
from evalstats.running.providers._batch import BatchOptions

base, requests, out, batch = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
runs = requests // 8  # the shop suite: 4 cases x 2 variants per repeat
variants = [f"old=openai:shop-v1,base_url={base}/v1", f"new=openai:shop-v2,base_url={base}/v1"]
options = {"batch": BatchOptions(size=5000, poll_s=0.2, linger_s=0.2)} if batch else {
    "concurrency": 32}
start = time.perf_counter()
outcome = run("shop", variants, runs=runs, out=out, progress=False, **options)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
done = sum(c["completed"] for c in outcome.by_variant.values())
print(json.dumps({"samples": outcome.samples_written, "completed": done, "peak_kib": peak,
                  "seconds": elapsed}))
"""


@contextmanager
def standin_server() -> Iterator[str]:
    """``evalstats standin serve`` in its own process; yields the base URL."""
    command = [sys.executable, "-m", "evalstats", "standin", "serve", "--port", "0"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line: list[str] = []
        assert proc.stdout is not None
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(60)
        if not line or not line[0].startswith("http://127.0.0.1:"):
            raise SystemExit("the stand-in server did not print its base URL within 60 s")
        yield line[0].strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure(base: str, requests: int, folder: Path, *, batch: bool) -> dict[str, float]:
    out = folder / f"{'batch' if batch else 'plain'}-{requests}.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, base, str(requests), str(out), "1" if batch else "0"],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--plain", type=int, default=None, help="requests without --batch")
    args = parser.parse_args()
    sizes = [args.requests // 4, args.requests // 2, args.requests]
    plain = args.plain or args.requests
    with standin_server() as base, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = [(n, True, measure(base, n, folder, batch=True)) for n in sizes]
        rows.append((plain, False, measure(base, plain, folder, batch=False)))
    print(f"{'mode':<8} {'requests':>9} {'seconds':>9} {'per s':>8} {'peak MB':>8}")
    for n, batch, r in rows:
        rate = r["samples"] / r["seconds"]
        print(
            f"{'batch' if batch else 'plain':<8} {n:>9,} {r['seconds']:>9.1f} {rate:>8,.0f} "
            f"{r['peak_kib'] / 1024:>8.0f}"
        )
        assert r["completed"] == r["samples"] == n, r
    batch_rate = rows[2][2]["samples"] / rows[2][2]["seconds"]
    plain_rate = rows[3][2]["samples"] / rows[3][2]["seconds"]
    print(
        f"batch / plain throughput: {batch_rate / plain_rate:.2f}x; peak memory at "
        f"{sizes[2]:,} / at {sizes[0]:,} requests: "
        f"{rows[2][2]['peak_kib'] / rows[0][2]['peak_kib']:.2f}"
    )


if __name__ == "__main__":
    main()
