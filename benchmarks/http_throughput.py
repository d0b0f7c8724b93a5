"""How much does concurrency buy against a model served over HTTP?

Starts the stand-in server (``evalstats standin serve``) as a separate process
on 127.0.0.1 with a fixed latency (20 ms by default), then sends chat
requests for the shop suite's prompts

1. sequentially (a small number, 200 by default: at 20 ms that is about 4 s),
2. ``--concurrency`` at a time (32 by default, 1,000 requests),

through four clients:

* ``engine + openai provider``: ``evalstats.running._engine.run`` with the ``openai``
  provider, the path a real model takes (a sample is a request plus its
  checks and its line in the results file);
* ``httpx async``: one ``httpx.AsyncClient`` (one connection pool) and a
  semaphore, without the engine;
* ``httpx async, client/worker``: the same, but each of ``--concurrency``
  workers has its own ``AsyncClient`` (a pool of one connection), which shows
  what one shared pool costs: httpcore scans every pooled connection for every
  request it assigns (see encode/httpx issue 3215), so the client's CPU time per
  request grows with the number of connections in the pool (the providers
  spread their requests over several pools for this reason);
* ``httpx threads``: one ``httpx.Client`` shared by a pool of threads, as a
  reference for what the server itself can deliver.

For each it prints both throughputs and their ratio (the goal: 20x or more;
the ceiling is ``concurrency / latency``, 1,600 per second at 32 and 20 ms).
The baseline of every ratio is the sequential leg measured in the same run.

Then the client-side overhead per request: with a second server at 0 ms
latency, the mean wall time of a sequential request minus the server's own
time for it (the ``Server-Timing`` header the stand-in sends). What is left is
what the client side costs: building and parsing JSON, the HTTP library, the
loopback round trip and, for the engine, scoring and writing the record.

Measured (2 shared cores), engine + openai provider against the floor (bare
httpx with one client per worker) in the same runs:

* machine otherwise idle (load below 1), five runs: 21.2-28.6x the sequential
  throughput (861-1,300 samples/s at 32 in flight and 20 ms), client CPU
  0.64-0.71 ms per sample, against 0.65-0.74 ms for the floor and 0.55-1.00 ms
  for httpx on threads (goal: 1.0 ms and 20x);
* with other work on the machine (load 2-3), two runs: 21.2-24.1x, client CPU
  0.64-0.66 ms against 0.66-0.68 ms for the floor.

The CPU time per sample depends on what else the cores are doing: an earlier
measurement at a higher load gave 1.01-1.06 ms for the engine and 0.93-1.00 ms
for the floor. The ratio of the two, run by run, is the steadier figure:
0.96-0.99 in the runs above.

Asserts nothing about time. Usage::

    python benchmarks/http_throughput.py [--samples 1000] [--sequential 200] [--concurrency 32]
                              [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

from evalstats.running._run_cases import load_shop_cases

PROMPTS = [case.prompt for case in load_shop_cases()]
CHAT = "/v1/chat/completions"


@contextmanager
def standin_server(latency_ms: float) -> Iterator[str]:
    """``evalstats standin serve`` in its own process; yields the base URL."""
    command = [
        sys.executable,
        "-m",
        "evalstats",
        "standin",
        "serve",
        "--port",
        "0",
        "--latency-ms",
        f"{latency_ms:g}",
        "--seed",
        "0",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line: list[str] = []
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
        proc.stdout.close()


class Clock:
    """Wall time and this process's CPU time (all threads) since it was made."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def body(i: int) -> dict:
    return {
        "model": "shop-v1",
        "seed": i,
        "messages": [{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}],
    }


def server_ms(response: httpx.Response) -> float:
    return float(response.headers["server-timing"].removeprefix("app;dur="))


# --- clients -------------------------------------------------------------------------


def httpx_async(url: str, n: int, concurrency: int) -> tuple[tuple[float, float], list[float]]:
    """Seconds for ``n`` requests, ``concurrency`` at a time; the server's ms for each."""

    async def main() -> tuple[tuple[float, float], list[float]]:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> float:
                async with gate:
                    response = await client.post(CHAT, json=body(i))
                    response.raise_for_status()
                    return server_ms(response)

            await asyncio.gather(*(one(i) for i in range(concurrency)))  # open connections
            clock = Clock()
            server = await asyncio.gather(*(one(i) for i in range(n)))
            return clock.read(), list(server)

    return asyncio.run(main())


def httpx_async_per_worker(
    url: str, n: int, concurrency: int
) -> tuple[tuple[float, float], list[float]]:
    """``concurrency`` workers, each with its own one-connection AsyncClient."""

    async def main() -> tuple[tuple[float, float], list[float]]:
        clients = [httpx.AsyncClient(base_url=url, timeout=60) for _ in range(concurrency)]
        try:
            await asyncio.gather(*(c.post(CHAT, json=body(i)) for i, c in enumerate(clients)))
            todo = iter(range(n))
            server: list[float] = []

            async def worker(client: httpx.AsyncClient) -> None:
                for i in todo:
                    response = await client.post(CHAT, json=body(i))
                    response.raise_for_status()
                    server.append(server_ms(response))

            clock = Clock()
            await asyncio.gather(*(worker(c) for c in clients))
            return clock.read(), server
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))

    return asyncio.run(main())


def httpx_threads(url: str, n: int, concurrency: int) -> tuple[tuple[float, float], list[float]]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    with httpx.Client(base_url=url, limits=limits, timeout=60) as client:

        def one(i: int) -> float:
            response = client.post(CHAT, json=body(i))
            response.raise_for_status()
            return server_ms(response)

        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(one, range(concurrency)))  # open connections
            clock = Clock()
            server = list(pool.map(one, range(n)))
        return clock.read(), server


def engine(url: str, n: int, concurrency: int) -> tuple[tuple[float, float], list[float]]:
    """Seconds for about ``n`` samples through evalstats.run and the openai provider."""
    from evalstats.running._engine import Variant, run
    from evalstats.running.providers import make_provider

    runs = max(1, round(n / len(PROMPTS)))
    with tempfile.TemporaryDirectory() as tmp:
        provider = make_provider("openai", "shop-v1", {"base_url": url + "/v1"})
        out = Path(tmp) / "results.jsonl"
        clock = Clock()
        outcome = run(
            "shop",
            [Variant("a", provider)],
            runs=runs,
            out=out,
            concurrency=concurrency,
            progress=False,
        )
        elapsed = clock.read()
        written = outcome.samples_written
        if outcome.status != "finished" or written != runs * len(PROMPTS):
            raise SystemExit(f"the engine run did not finish cleanly: {outcome}")
    # The engine keeps no response headers: no server times from this client.
    return elapsed, [float("nan")] * written


Client = Callable[[str, int, int], tuple[tuple[float, float], list[float]]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000, help="concurrent leg (1000)")
    parser.add_argument("--sequential", type=int, default=200, help="sequential leg (200)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument(
        "--overhead-requests",
        type=int,
        default=300,
        help="sequential requests at 0 ms for the overhead figure (300)",
    )
    args = parser.parse_args(argv)

    clients: list[tuple[str, Client]] = [
        ("engine + openai provider", engine),
        ("httpx async", httpx_async),
        ("httpx async, client/worker", httpx_async_per_worker),
        ("httpx threads", httpx_threads),
    ]

    ceiling = args.concurrency / (args.latency_ms / 1000) if args.latency_ms else float("inf")
    print(
        f"stand-in server in its own process, latency {args.latency_ms:g} ms; "
        f"{os.cpu_count()} CPUs (shared)"
    )
    print(
        f"sequential: {args.sequential} requests; concurrent: {args.samples} requests, "
        f"{args.concurrency} at a time (ceiling {ceiling:,.0f}/s)"
    )
    print("client CPU: this process's CPU time per request in the concurrent leg; when it")
    print("nears 1000 / (concurrent/s) ms, the client, not the server, sets the pace")
    print(
        f"{'client':26} {'sequential/s':>13} {'concurrent/s':>13} {'ratio':>7} {'client CPU':>11}"
    )
    with standin_server(args.latency_ms) as url:
        for name, client in clients:
            (seq_s, _), seq_done = client(url, args.sequential, 1)
            (con_s, con_cpu), con_done = client(url, args.samples, args.concurrency)
            seq_rate, con_rate = len(seq_done) / seq_s, len(con_done) / con_s
            print(
                f"{name:26} {seq_rate:13,.1f} {con_rate:13,.1f} {con_rate / seq_rate:6.1f}x "
                f"{con_cpu / len(con_done) * 1000:8.2f} ms"
            )

    n = args.overhead_requests
    print(f"\nclient-side overhead per request: {n} sequential requests at 0 ms latency;")
    print("wall time per request minus the server's own time (its Server-Timing header)")
    with standin_server(0) as url:
        _, server = httpx_async(url, 50, 1)  # warm up
        for name, client in clients:
            (wall, _cpu), server = client(url, n, 1)
            per = wall / len(server) * 1000
            known = [s for s in server if not math.isnan(s)]
            if known:
                srv = statistics.fmean(known)
                print(
                    f"  {name:27} {per:6.2f} ms per request, server {srv:5.2f} ms, "
                    f"client side {per - srv:5.2f} ms"
                )
            else:
                # The engine does not expose headers: use the server time that the
                # plain async client saw on the same server.
                _, seen = httpx_async(url, n, 1)
                srv = statistics.fmean(seen)
                print(
                    f"  {name:27} {per:6.2f} ms per sample,  server {srv:5.2f} ms, "
                    f"client side {per - srv:5.2f} ms (request, checks and record)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
