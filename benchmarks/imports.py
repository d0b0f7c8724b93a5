"""How fast, and in how much memory, are other tools' logs imported?

Builds two inputs of 100,000 samples each in a temporary folder:

* an Inspect AI log in its JSON format: the committed fixture's samples copied
  to 20,000 sample ids x 5 epochs (their event logs dropped, as a log written
  with few events would have them), written with Inspect's own
  ``write_eval_log``; and a smaller ``.eval`` (zip) log of 5,000 samples, since
  Inspect's writer takes time quadratic in the samples for one ``.eval`` write
  (7 s for 2,000 samples, 29 s for 4,000 here);
* a CSV long table: 10,000 cases x 2 variants x 5 repeats.

Then times, each in a fresh subprocess so that its peak memory (maximum
resident set size) is its own:

* Inspect: ``inspect_ai.log.read_eval_log`` alone (the source tool's reader)
  against ``evalstats.reading._logs.load_results`` (which reads through it and then
  builds the sample records);
* CSV: ``pandas.read_csv`` against ``load_results``.

Prints the figures and the ratios (ours / theirs); asserts nothing about time.
The Inspect part is skipped, with a message, when inspect_ai is not installed.

Usage::

    python benchmarks/imports.py [--samples 100000] [--eval-samples 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "inspect" / "inspect_a.eval"


def _measure(kind: str, path: str) -> None:
    """Child process: read ``path`` one way, print seconds and peak memory as JSON."""
    import resource

    if kind == "write-inspect":
        _write_inspect(path, int(os.environ["EVALSTATS_BENCH_SAMPLES"]))
        return
    # Imports happen before the clock starts: the figures are about reading.
    if path.endswith((".eval", ".json")):
        import inspect_ai.log  # noqa: F401

        import evalstats.reading._log_inspect  # noqa: F401
    else:
        import pandas  # noqa: F401

        import evalstats.reading._log_table  # noqa: F401
    start = time.perf_counter()
    if kind == "inspect-theirs":
        from inspect_ai.log import read_eval_log

        log = read_eval_log(path)
        n = len(log.samples or [])
    elif kind == "csv-theirs":
        import pandas as pd

        n = len(pd.read_csv(path))
    else:
        from evalstats.reading._logs import load_results

        n = len(load_results(path).samples)
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"seconds": elapsed, "peak_mib": peak_kib / 1024, "samples": n}))


def _baseline_mib() -> float:
    """Peak memory of a child that only imports what the CSV measurements import."""
    code = (
        "import resource, pandas, evalstats.reading._logs;"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    return float(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )


def _run(kind: str, path: str, repeat: int) -> dict[str, float]:
    best: dict[str, float] | None = None
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, __file__, "--measure", kind, path],
            capture_output=True,
            text=True,
            check=True,
        )
        got = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None or got["seconds"] < best["seconds"]:
            best = got
    assert best is not None
    return best


def _write_inspect(path: str, samples: int) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(FIXTURE))
    template = [s.model_copy(update={"events": [], "attachments": {}}) for s in log.samples or []]
    epochs = 5
    ids = max(1, samples // epochs)
    out = []
    for i in range(ids):
        for epoch in range(1, epochs + 1):
            s = template[(i * epochs + epoch) % len(template)]
            out.append(s.model_copy(update={"id": f"s{i}", "epoch": epoch}))
    log.samples = out
    log.eval.config.epochs = epochs
    write_eval_log(log, path)


def _write_csv(path: str, samples: int) -> None:
    rng = random.Random(0)
    repeats, variants = 5, ("baseline", "candidate")
    cases = max(1, samples // (repeats * len(variants)))
    with open(path, "w", encoding="utf-8") as f:
        f.write("case,variant,repeat,passed,latency_s\n")
        for c in range(cases):
            for r in range(repeats):
                for v in variants:
                    ok = "true" if rng.random() < 0.8 else "false"
                    f.write(f"case-{c},{v},{r},{ok},{rng.uniform(0.2, 3.0):.3f}\n")


def _show(name: str, ours: dict[str, float], theirs: dict[str, float], base: float) -> None:
    print(f"{name}: {int(ours['samples']):,} samples")
    print(
        f"  source tool's reader: {theirs['seconds']:.2f} s, peak {theirs['peak_mib']:.0f} MiB "
        f"({theirs['peak_mib'] - base:.0f} MiB above the imports alone)"
    )
    print(
        f"  evalstats load_results: {ours['seconds']:.2f} s, peak {ours['peak_mib']:.0f} MiB "
        f"({ours['peak_mib'] - base:.0f} MiB above the imports alone)"
    )
    print(
        f"  ratio (ours / theirs): time {ours['seconds'] / theirs['seconds']:.2f}x, "
        f"peak memory {ours['peak_mib'] / theirs['peak_mib']:.2f}x"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--eval-samples", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each reader; best kept")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        _measure(*args.measure)
        return 0
    base = _baseline_mib()
    print(f"a child process that imports pandas and the log readers peaks at {base:.0f} MiB")
    with tempfile.TemporaryDirectory() as folder:
        try:
            import inspect_ai  # noqa: F401
        except ImportError:
            print('inspect: skipped, inspect_ai is not installed (pip install ".[inspect]")')
        else:
            for name, samples in (("big.json", args.samples), ("big.eval", args.eval_samples)):
                log = os.path.join(folder, name)
                # Written by a child, so that this process stays small: a child
                # process starts with its parent's peak memory on Linux.
                subprocess.run(
                    [sys.executable, __file__, "--measure", "write-inspect", log],
                    check=True,
                    env=dict(os.environ, EVALSTATS_BENCH_SAMPLES=str(samples)),
                )
                print(f"inspect log {name}: {os.path.getsize(log) / 2**20:.1f} MiB on disk")
                theirs = _run("inspect-theirs", log, args.repeat)
                ours = _run("ours", log, args.repeat)
                _show(f"Inspect log ({os.path.splitext(name)[1]})", ours, theirs, base)
        table = os.path.join(folder, "big.csv")
        _write_csv(table, args.samples)
        print(f"csv table: {os.path.getsize(table) / 2**20:.1f} MiB on disk")
        theirs = _run("csv-theirs", table, args.repeat)
        ours = _run("ours", table, args.repeat)
        _show("CSV table", ours, theirs, base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
