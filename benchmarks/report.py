"""How fast does ``report`` read a large results file, and how much memory does it take?

Figures, each from fresh processes (the median wall time, start to exit, of
``--repeat`` runs after a warm-up run, their median CPU time, user + system,
and their peak RSS from ``ru_maxrss``), each with its ratio to a floor
measured in the same run: for a large file a loop that only parses every line
of the same file with orjson and keeps nothing; for a small one the start of
Python itself (``python -c pass``).

1. ``evalstats report FILE`` on 100,000 samples: goal at most 1.0 s and 100 MB,
   and at most 1.5x the orjson loop. Also with ``--prices`` (the cost counted
   in the same pass), and on the same file with a reason of its own on every
   check, so that no two samples carry the same checks' text: the worst case
   for the reader's memo of checks seen before (see ``evalstats.reading._tally``).
2. The same on 400,000 samples: the peak memory within 10% of the 100,000-sample
   one (memory must not grow with samples beyond the per-case tables).
3. ``evalstats report FILE`` on 1,000 samples: goal at most 0.15 s wall, from
   process start to exit.
(``compare``, ``gate`` and ``plan --from`` on the same files are measured by
``benchmarks/compare.py``.)

The files are real runs of the shop suite (old = stand-in version 1, new =
version 2) written by the engine; the large ones repeat a 1,000-sample run with
shifted repeats, so their records are the engine's own (and a case's samples
repeat the very same checks' text more often than a real model's would: hence
the figure with every reason distinct). They are written to
``benchmarks/out/`` (ignored by git) by a child process and reused when present.
The children run with bytecode written and read, as an installed package runs.

Measured on the 2-core development machine, shared with other work and noisy
(single runs vary by 10-30%): medians of 5 runs (15 for the small report) in
each of two runs of this script, at a load average of about 1.3-1.5:

=====================================  ===============  ===========  ======  ===========
figure                                 wall             ratio        peak    goal
=====================================  ===============  ===========  ======  ===========
orjson loop, 100,000 samples (85 MB)   0.299, 0.296 s   floor        59 MB
report, 100,000 samples                0.335, 0.340 s   1.12, 1.15x  29 MB   1.0 s, 1.5x
report --prices, 100,000 samples       0.347, 0.345 s   1.16, 1.16x  30 MB
orjson loop, every reason distinct     0.313, 0.301 s   floor        59 MB
report, every reason distinct          0.426, 0.418 s   1.36, 1.39x  29 MB   1.5x
orjson loop, 400,000 samples           1.175, 1.152 s   floor        200 MB
report, 400,000 samples                1.145, 1.138 s   0.97, 0.99x  31 MB   memory 1.1x
python -c pass                         0.017, 0.017 s   floor        14 MB
report, 1,000 samples                  0.059, 0.058 s   3.55, 3.51x  22 MB   0.15 s
=====================================  ===============  ===========  ======  ===========

The 400,000-sample report peaks at 1.05x the 100,000-sample one's memory.

With every reason distinct, the reader's memo of checks seen before finds
nothing, so it decodes each line whole and counts its checks one by one (see
``evalstats.reading._tally``): that case is the nearest its goal. Before the reader
counted a whole line's checks as decoded (building no verdicts object per
sample), counted the verdicts its memo keeps once per sample, and decoded the
names it knows as shared strings, the two 100,000-sample figures were, measured
alternately with the present reader in the same runs: at a load of about 1,
1.56-1.57x (every reason distinct) and 1.25-1.27x (the common file), against
1.33-1.41x and 1.12-1.13x now; at a load of about 2.6, and without the shared
names (about 3% of the instructions), 1.60-1.66x and 1.36-1.37x against
1.50-1.54x and 1.13-1.26x. So under load the distinct-reasons figure can still
cross 1.5x. What remains is Python's own cost per line (about 49,000
instructions a sample on a 20,000-sample file, by callgrind: the msgspec decode
about 19,000, the three checks' counting about 8,000, the rest of the sample's
counting about 8,000, the line loop about 5,500, the schedule about 6,000 a
slot), no step that could be dropped. Keying a memo on the checks without their
reasons cost more than it saved in every form tried (a regular expression
blanking the reasons, a tuple of each check's fields, a decode hook classifying
each reason).

When these goals were set, the 100,000-sample report took 1.72x the orjson
loop (decoding and counting every check of every sample, and importing numpy
for the latency quantiles) and the 1,000-sample one 0.31 s (numpy for the
clustered interval, the runner's imports and every verb's parser).

With ``--against REF`` every ``report`` figure is also measured on the tree of
that git revision (extracted into a temporary folder), its runs alternating
with this tree's so that a change of load hits both alike, and printed with the
ratio of this tree's median to that revision's. Each revision reads the same
files, written by this tree's engine; the 100,000- and 1,000-sample reports are
also measured on files written by the revision's own engine (in
``benchmarks/out/REF/``), as a user of each would have them.

With the record schema as one definition (``evalstats.results._records``) and
every view taking one ``RunSource``, against the revision before them
(``--against main``), medians of 5 runs (15 for the 1,000-sample files) at a
load average of 1.5-2.4, wall time and its ratio to the revision's, and the
ratio of the CPU times:

===========================================  =========  ==========  =========
report of                                    wall       wall ratio  CPU ratio
===========================================  =========  ==========  =========
100,000 samples                              0.566 s    0.98x       0.99x
100,000 samples, ``--prices``                0.584 s    1.00x       1.00x
100,000 samples, every reason distinct       0.717 s    0.99x       0.99x
400,000 samples                              2.041 s    1.02x       1.02x
1,000 samples, process start to exit         0.101 s    1.01x       1.01x
100,000 samples written by the revision      0.577 s    1.00x       1.00x
1,000 samples written by the revision        0.101 s    1.00x       1.00x
===========================================  =========  ==========  =========

Two earlier runs at a load of 7-11 gave CPU ratios of 0.99-1.02x for the same
figures (their wall ratios, 0.81-1.09x, said more of the load). A run written
by this tree's engine is 0.7% larger than the revision's (its failed verdicts
say ``not_inspected``); each tree reading the 100,000-sample file its own
engine wrote: 0.566 s here against the revision's 0.580 s.

Usage, from the repository root::

    python benchmarks/report.py [--samples 100000] [--large 400000] [--repeat 5]
    python benchmarks/report.py --against main
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "out"
BASE_RUNS = 125  # 4 cases x 2 variants x 125 runs = 1,000 samples

_FLOOR = """
import orjson, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        orjson.loads(line)
"""


def base_file(out: Path = OUT) -> Path:
    """A 1,000-sample run of the shop suite, written by the engine."""
    path = out / "shop-1000.jsonl"
    if not path.exists():
        from evalstats.running._engine import run

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


def large_file(samples: int, out: Path = OUT) -> Path:
    """``samples`` samples: the base run repeated with shifted repeats and pairs."""
    path = out / f"shop-{samples}.jsonl"
    if path.exists():
        return path
    lines = base_file(out).read_bytes().splitlines()
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


def distinct_file(samples: int) -> Path:
    """The ``samples``-sample file with a reason of its own on every check: no two
    samples carry the same checks' text (the worst case for the tally's memo)."""
    path = OUT / f"shop-{samples}-distinct.jsonl"
    if path.exists():
        return path
    tmp = path.with_suffix(".part")
    with open(large_file(samples), encoding="utf-8") as f, open(tmp, "w", encoding="utf-8") as out:
        for number, line in enumerate(f, start=1):
            record = json.loads(line)
            if record.get("type") == "sample":
                for check in record["checks"]:
                    check["reason"] = f"{check.get('reason') or ''} (line {number})"
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    tmp.rename(path)
    return path


def prices_file() -> Path:
    """Prices for the stand-ins' models (the report's cost, counted in the same pass)."""
    path = OUT / "prices.yaml"
    path.write_text(
        "shop-v1: {input: 0.15, output: 0.60}\nshop-v2: {input: 0.80, output: 4.00}\n",
        encoding="utf-8",
    )
    return path


#: The children's environment: bytecode written and read as an installed package
#: has it (a session that sets PYTHONDONTWRITEBYTECODE would compile every module
#: on every start, about 0.1 s).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def tree_env(tree: Path) -> dict[str, str]:
    """The children's environment with ``tree``'s evalstats first on the path."""
    return {**_ENV, "PYTHONPATH": str(tree)}


def measure(argv: list[str], *, repeat: int, envs: Sequence[dict[str, str]] = ()) -> list[dict]:
    """For each environment (default: this tree's), the median wall time (start to
    exit) and CPU time (user + system) of ``repeat`` fresh processes after one
    warm-up run, their best wall time and their peak RSS. The environments take
    turns run by run, so that a change of load hits each alike."""
    envs = list(envs) or [tree_env(HERE)]
    walls: list[list[float]] = [[] for _ in envs]
    cpus: list[list[float]] = [[] for _ in envs]
    peaks = [0.0 for _ in envs]
    for i in range(repeat + 1):
        for k, env in enumerate(envs):
            start = time.perf_counter()
            # run from the files' folder: a child started from the repository
            # root would import its evalstats first, whatever PYTHONPATH says
            child = subprocess.Popen(
                [sys.executable, *argv], stdout=subprocess.DEVNULL, env=env, cwd=OUT
            )
            _, status, usage = os.wait4(child.pid, 0)
            elapsed = time.perf_counter() - start
            code = os.waitstatus_to_exitcode(status)
            if code not in (0, 1):
                raise SystemExit(f"{argv} exited {code}")
            if i == 0:
                continue  # the warm-up: bytecode written, file in the page cache
            walls[k].append(elapsed)
            cpus[k].append(usage.ru_utime + usage.ru_stime)
            peaks[k] = max(peaks[k], usage.ru_maxrss / 1024)  # KiB on Linux
    return [
        {
            "wall": statistics.median(w),
            "best": min(w),
            "cpu": statistics.median(c),
            "peak_mb": peak,
        }
        for w, c, peak in zip(walls, cpus, peaks, strict=True)
    ]


def one(argv: list[str], *, repeat: int) -> dict[str, float]:
    """:func:`measure` of this tree alone."""
    return measure(argv, repeat=repeat)[0]


def cli(*argv: str) -> list[str]:
    return ["-m", "evalstats", *argv]


def show(name: str, fig: dict[str, float], floor: dict[str, float] | None, goal: str = "") -> None:
    """One figure: median wall (best), median CPU, peak memory, and the ratios to the floor."""
    line = (
        f"   {name + ':':<27} {fig['wall']:6.3f} s (best {fig['best']:.3f}), "
        f"CPU {fig['cpu']:6.3f} s, peak {fig['peak_mb']:4.0f} MB"
    )
    if floor is not None:
        line += (
            f"  [{fig['wall'] / floor['wall']:.2f}x the floor's wall, "
            f"{fig['cpu'] / floor['cpu']:.2f}x its CPU]"
        )
    print(line + (f"  goal {goal}" if goal else ""))


class Against:
    """This tree and, with ``--against REF``, the tree of that revision: a report
    figure measured on each, runs alternating, with the ratio of the two."""

    def __init__(self, ref: str | None, tree: Path | None) -> None:
        self.ref, self.envs = ref, [tree_env(HERE)]
        if tree is not None:
            self.envs.append(tree_env(tree))
        self.ratios: list[tuple[str, float, float]] = []

    def report(
        self, name: str, argv: list[str], floor: dict[str, float], *, repeat: int, goal: str = ""
    ) -> dict[str, float]:
        figs = measure(argv, repeat=repeat, envs=self.envs)
        show(name, figs[0], floor, goal)
        if self.ref is not None:
            now, before = figs
            show(f"  {self.ref}", before, floor)
            wall, cpu = now["wall"] / before["wall"], now["cpu"] / before["cpu"]
            print(f"   {'':<27} this tree / {self.ref}: wall {wall:.2f}x, CPU {cpu:.2f}x")
            self.ratios.append((name, wall, cpu))
        return figs[0]

    def summary(self) -> None:
        if self.ratios:
            print(f"this tree / {self.ref} (median wall, median CPU):")
            for name, wall, cpu in self.ratios:
                print(f"   {name + ':':<44} {wall:.2f}x  {cpu:.2f}x")


def _tree_of(ref: str, into: Path) -> Path:
    """The files of revision ``ref`` of this repository, extracted into ``into``."""
    archive = subprocess.run(
        ["git", "archive", ref], cwd=HERE, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _make(args: argparse.Namespace, out: Path, env: dict[str, str]) -> None:
    """The files, made by a child with ``env``'s evalstats (a child process starts
    with its parent's peak memory on Linux, so this process stays small)."""
    subprocess.run(
        [sys.executable, __file__, "--make", "--out", str(out), "--samples", str(args.samples)]
        + ["--large", str(args.large)],
        check=True,
        env=env,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each figure; medians")
    parser.add_argument(
        "--against", metavar="REF", help="also measure every report on the tree of this revision"
    )
    parser.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=OUT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make:
        out = args.out
        out.mkdir(parents=True, exist_ok=True)
        base_file(out), large_file(args.samples, out)
        if out == OUT:
            large_file(args.large), distinct_file(args.samples), prices_file()
        return 0
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        tree = _tree_of(args.against, Path(folder)) if args.against else None
        return _figures(args, Against(args.against, tree), tree)


def _figures(args: argparse.Namespace, against: Against, tree: Path | None) -> int:
    _make(args, OUT, tree_env(HERE))
    small, big, huge = base_file(), large_file(args.samples), large_file(args.large)
    distinct, prices = distinct_file(args.samples), prices_file()
    n = args.repeat

    floor = one(["-c", _FLOOR, str(big)], repeat=n)
    print(f"1. report on {args.samples:,} samples ({big.stat().st_size / 1e6:.0f} MB)")
    show("floor (orjson loop)", floor, None)
    rep = against.report(
        "report", cli("report", str(big)), floor, repeat=n, goal="1.0 s, 100 MB, 1.5x"
    )
    against.report(
        "report --prices", cli("report", str(big), "--prices", str(prices)), floor, repeat=n
    )
    floor_d = one(["-c", _FLOOR, str(distinct)], repeat=n)
    print("   every check's reason its own (no two samples carry the same checks' text):")
    show("floor (orjson loop)", floor_d, None)
    against.report("report, every reason distinct", cli("report", str(distinct)), floor_d, repeat=n)

    floor4 = one(["-c", _FLOOR, str(huge)], repeat=max(1, n // 2))
    print(f"2. report on {args.large:,} samples ({huge.stat().st_size / 1e6:.0f} MB)")
    show("floor (orjson loop)", floor4, None)
    rep4 = against.report(
        f"report, {args.large:,} samples", cli("report", str(huge)), floor4, repeat=max(1, n // 2)
    )
    print(
        f"   peak memory {rep4['peak_mb'] / rep['peak_mb']:.2f}x the {args.samples:,}-sample "
        "report's (goal: within 1.10x)"
    )

    start_only = one(["-c", "pass"], repeat=3 * n)
    print("3. report on 1,000 samples, process start to exit")
    show("floor (python -c pass)", start_only, None)
    show("evalstats --help", one(cli("--help"), repeat=3 * n), start_only)
    against.report(
        "report, 1,000 samples", cli("report", str(small)), start_only, repeat=3 * n, goal="0.15 s"
    )

    if tree is not None:
        # The files as a user of the revision has them: written by its own engine.
        commit = subprocess.run(
            ["git", "rev-parse", "--short", args.against], cwd=HERE, capture_output=True,
            text=True, check=True,
        ).stdout.strip()  # fmt: skip
        theirs = OUT / commit
        _make(args, theirs, tree_env(tree))
        their_big, their_small = large_file(args.samples, theirs), base_file(theirs)
        print(f"4. the files written by {args.against}'s engine")
        floor_t = one(["-c", _FLOOR, str(their_big)], repeat=n)
        show(f"floor, {their_big.stat().st_size / 1e6:.0f} MB", floor_t, None)
        against.report(
            f"report, {args.samples:,} of {args.against}", cli("report", str(their_big)),
            floor_t, repeat=n,
        )  # fmt: skip
        against.report(
            f"report, 1,000 of {args.against}", cli("report", str(their_small)),
            start_only, repeat=3 * n,
        )  # fmt: skip
    against.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
