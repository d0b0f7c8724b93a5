"""Are the size switches between two code paths set where the paths cross?

Several constants pick, by size, between two ways of computing the same result:
``_FEW`` (stats/_intervals.py: the betting bets by whole-array running sums or
place by place), ``_PMF_FFT`` (stats/_casemodel.py: the law of a case's
difference of passes by a direct correlation or by FFT), ``_EXACT_BELOW``
(stats/_discrete.py: the McNemar p-values with exact integers or with their
leading bits and an error bound) and ``_T_SERIES_MAX_DF`` (stats/_intervals.py:
the Student t quantile by the finite series or by scipy). For each, both paths
are forced (the module's constant set to 0 or to a huge value, here only) and
timed at sizes from about 1/8 to 8 times the switch, the two in turn round after
round (so that a change in the machine's load falls on both), best of at least
``--repeat`` timings; printed with the ratio of the second path's time to the
first's, the path the constant picks, whether it is the faster one (within 10%),
and the largest difference between the two paths' results. Block sizes that
bound memory and may cost speed are swept the same way, each setting's time
against the one set: ``_PIECES`` (cli/_options.py: JSON pieces a write of
print_json, on a document of 10,000 cases), ``_WIDE`` and ``_BLOCK``
(stats/_intervals.py: rows of betting bounds a block) and ``_PMF_VALUES``
(stats/_casemodel.py: models of difference_pmf a block). Prints the figures;
asserts nothing about time.

One run of this script on the 2-core development machine at a load average of
about 2.5 (other work on both cores: a figure of 0.1-1 s moves by 10-40%
between runs). Times in ms; "ratio" is path 2 / path 1; "faster" says whether
the path picked is, and how much slower it is if not:

=================  =========  =========  =========  =====  ======  ===========
constant           size       path 1     path 2     ratio  picks   faster
=================  =========  =========  =========  =====  ======  ===========
``_FEW = 256``     values a   running    place by
(1,000 values      place      sums       place
a row)             8          2.90       8.44       2.91   1       yes
                   32         9.51       14.73      1.55   1       yes
                   128        19.38      21.67      1.12   1       yes
                   256        31.50      32.39      1.03   2       tie
                   512        63.01      54.02      0.86   2       yes
                   2,048      460.00     386.35     0.84   2       yes
(100 values)       8          1.33       1.79       1.35   1       yes
                   128        3.08       3.32       1.08   1       tie
                   256        4.28       4.23       0.99   2       tie
                   2,048      24.15      18.31      0.76   2       yes
``_PMF_FFT = 32``  runs       direct     FFT
(one case model)   4          0.553      0.551      1.00   1       tie
                   8          0.797      0.749      0.94   1       tie
                   16         1.235      1.094      0.89   1       no (1.13x)
                   32         2.181      1.814      0.83   1       no (1.20x)
                   64         4.111      3.190      0.78   2       yes
                   256        36.45      20.30      0.56   2       yes
(200 models)       4          22.41      22.72      1.01   1       tie
                   16         73.48      69.35      0.94   1       tie
                   32         210.77     150.06     0.71   1       no (1.40x)
                   64         472.54     321.89     0.68   2       yes
``_EXACT_BELOW``   pairs      exact      kept bits
``= 1200``         75         0.022      0.017      0.78   1       no (1.28x)
                   150        0.046      0.040      0.88   1       no (1.13x)
                   300        0.099      0.099      1.01   1       tie
                   600        0.238      0.214      0.90   1       no (1.11x)
                   1,000      0.468      0.376      0.80   1       no (1.25x)
                   1,200      0.601      0.456      0.76   2       yes
                   9,600      14.84      3.39       0.23   2       yes
``_T_SERIES_``     df         series     import +
``MAX_DF``                               stdtrit
``= 20,000``       2,500      1.00       497        497    1       yes
                   20,000     17.15      497        29.0   1       yes
                   40,000     34.98      497        14.2   2       no (14.2x)
                   160,000    93.42      497        5.32   2       no (5.32x)
=================  =========  =========  =========  =====  ======  ===========

(stdtrit: importing scipy.special in a fresh process, 497 ms, and the call,
0.002 ms once imported.) The largest differences between the paths: none for
``_FEW`` and ``_EXACT_BELOW`` (the same floats at every size), at most 1.1e-16
for ``_PMF_FFT``, 4.0e-13 for ``_T_SERIES_MAX_DF`` up to 20,000 df (1.1e-11 at
160,000). The block sizes, each setting's time over the set one's (the results
the same at every setting):

===============================  ===========================================
constant (what is timed)         setting: time / the set one's time
===============================  ===========================================
``_PIECES = 4096``               1: 2.27, 16: 0.82, 64: 0.84, 256: 0.91,
(print_json, 950,008 pieces,     65,536: 1.07, all at once: 0.91
the set one 711 ms)
``_WIDE = 2048``                 256: 1.33, 512: 1.35, 1024: 1.10,
(2,048 rows of 200 values,       4096: 1.50, 8192: 1.39, 16384: 2.24
380 ms)
``_BLOCK = 1 << 17``             1 << 14: 0.99, 1 << 15: 0.89, 1 << 16: 0.85,
(8,192 rows of 20 values,        1 << 18: 0.83, 1 << 19: 1.08, 1 << 20: 1.03
268 ms)
``_PMF_VALUES = 1 << 21``        1 << 15: 0.97, 1 << 17: 0.94, 1 << 19: 0.96,
(1,000 models, 16 runs, 382 ms)  1 << 23: 1.00
===============================  ===========================================

What the figures say. ``_FEW`` is at the crossover: the running sums win below
256 values a place, the two are even at 256, place by place wins above, at both
row lengths. ``_PMF_FFT``: the FFT is as fast at 4 and 8 runs and faster from 16
(1.1-1.2x at 16 and 32 for one model; for 200 models even at 16, and at 32
1.40x in this run and the one before, 1.09-1.14x in four other runs of the same
hour), so the paths cross at about 8-16 runs, below the switch; its results move
by rounding, and printed figures with them, so the switch stays.
``_EXACT_BELOW``: the kept bits are never slower (even at 300-450 pairs,
1.1-1.3x faster elsewhere below 1,200), by at most 0.1 ms for a number of pairs
whose values are then cached; the switch stays. ``_T_SERIES_MAX_DF``: a
process's first quantile is faster by the series than by importing scipy up to
beyond 160,000 df, and every later one faster by scipy once it is imported; the
switch keeps a series call to 17 ms at most. ``_PIECES``: one piece a write
(json.dump's) is 2.3x slower; from 16 pieces on the settings are within the
noise. ``_WIDE``: the set value is the fastest. ``_BLOCK`` and ``_PMF_VALUES``:
no setting is ahead beyond the noise. No switch between paths that give the
same result is set where the other path is more than 1.3x faster over a range
it governs, so none was moved.

Usage::

    python benchmarks/crossovers.py [--quick] [--repeat 3] [--spend 0.25]

``--quick`` times fewer and smaller sizes (about 15 s); by default about 2 min.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np  # noqa: E402

#: The most timings of a figure (of each path): they are taken while they take
#: less than ``--spend`` seconds in all (and at least ``--repeat`` of them).
_ROUNDS = 25

#: A path within this share of the other's time is as fast (the noise of a
#: best-of-several time on a shared machine).
_NOISE = 0.10


@contextlib.contextmanager
def _set(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` set to ``value`` for the block."""
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def _once(run: Callable[..., Any], args: tuple[Any, ...], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        run(*args)
    return (time.perf_counter() - start) / number


def _number(run: Callable[..., Any], args: tuple[Any, ...]) -> int:
    """Calls a timing loops over, so that a loop takes about 5 ms at least."""
    return max(1, int(0.005 / max(_once(run, args, 1), 1e-9)))


@dataclass(frozen=True)
class _Timing:
    """How a figure is timed: the best of at least ``repeats`` timings, more
    (up to :data:`_ROUNDS`) while they take less than ``spend`` seconds in all."""

    repeats: int
    spend: float

    def more(self, taken: int, spent: float) -> bool:
        return taken < self.repeats or (spent < self.spend and taken < _ROUNDS)


def _best(timing: _Timing, run: Callable[..., Any], *args: Any) -> float:
    """The best time of ``run(*args)`` (see :class:`_Timing`)."""
    number = _number(run, args)
    times: list[float] = []
    while timing.more(len(times), sum(times) * number):
        times.append(_once(run, args, number))
    return min(times)


def _settings(
    module: Any,
    name: str,
    values: tuple[int, ...],
    timing: _Timing,
    run: Callable[..., Any],
    *args: Any,
) -> tuple[dict[int, float], dict[int, Any]]:
    """The best time and the result of ``run(*args)`` with ``module.name`` set to
    each of ``values``.

    The settings are timed in turn, round after round, so that a change in the
    machine's load falls on all of them.
    """
    found, numbers = {}, {}
    for value in values:
        with _set(module, name, value):
            found[value] = run(*args)
            numbers[value] = _number(run, args)
    times: dict[int, list[float]] = {value: [] for value in values}
    spent = 0.0
    while timing.more(len(times[values[0]]), spent / len(values)):
        for value in values:
            with _set(module, name, value):
                times[value].append(_once(run, args, numbers[value]))
            spent += times[value][-1] * numbers[value]
    return {value: min(t) for value, t in times.items()}, found


def _paths(
    module: Any, name: str, timing: _Timing, run: Callable[..., Any], *args: Any
) -> tuple[list[float], list[Any]]:
    """:func:`_settings` with the switch ``module.name`` set so that the first
    path is always taken (a huge value), then the second (0): lists of two."""
    times, found = _settings(module, name, (1 << 40, 0), timing, run, *args)
    return list(times.values()), list(found.values())


def _verdict(picked: float, other: float) -> str:
    """Whether the picked path's time is the faster one, within :data:`_NOISE`."""
    if picked <= other * (1.0 - _NOISE):
        return "yes"
    if picked <= other * (1.0 + _NOISE):
        return "tie"
    return f"NO ({picked / other:.2f}x)"


def _seconds(t: float) -> str:
    return f"{t * 1e3:9.3f} ms" if t < 10.0 else f"{t:9.2f} s "


class _Table:
    """A section of the printout: a crossover between two named paths."""

    def __init__(self, title: str, size: str, one: str, two: str) -> None:
        self.one, self.two = one, two
        print(f"\n{title}")
        head = f"{size:>10}  {one:>12}  {two:>12}  {'ratio':>6}  {'picks':<12}  {'faster':<11}"
        print(head + "  largest difference")
        print("-" * (len(head) + 20))

    def row(self, size: Any, one: float, two: float, picks_one: bool, diff: str) -> None:
        picked, other = (one, two) if picks_one else (two, one)
        print(
            f"{size:>10,}  {_seconds(one)}  {_seconds(two)}  {two / one:6.2f}  "
            f"{self.one if picks_one else self.two:<12}  {_verdict(picked, other):<11}  {diff}"
        )


class _Sweep:
    """A section of the printout: one setting of a block size against the others."""

    def __init__(self, title: str, setting: str, chosen: int) -> None:
        self.chosen = chosen
        print(f"\n{title}")
        head = f"{setting:>14}  {'time':>12}  {'ratio to set':>12}"
        print(head + "  largest difference")
        print("-" * (len(head) + 20))

    def rows(self, times: dict[int, float], diffs: dict[int, str]) -> None:
        base = times[self.chosen]
        for value, t in times.items():
            mark = " (set)" if value == self.chosen else ""
            shown = "all" if value >= 1 << 40 else f"{value:,}"
            print(f"{shown + mark:>14}  {_seconds(t)}  {t / base:12.2f}  {diffs[value]}")


def _difference(a: Any, b: Any) -> str:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.array_equal(a, b):
        return "0 (identical)"
    return f"{float(np.max(np.abs(a - b))):.1e}"


# --- the sections -------------------------------------------------------------------


def few(quick: bool, timing: _Timing) -> None:
    """``_FEW`` of evalstats.stats._intervals: the bets by running sums or place by place."""
    from evalstats.stats import _intervals

    rng = np.random.default_rng(0)
    for n in (100,) if quick else (100, 1000):
        table = _Table(
            f"_FEW = {_intervals._FEW} (stats/_intervals.py): betting lower bounds of rows of "
            f"{n:,} values, 8 orders: size = orders x rows, the values a place",
            "size",
            "running sums",
            "place/place",
        )
        for size in (8, 64, 256, 512, 2048) if quick else (8, 32, 64, 128, 256, 512, 1024, 2048):
            x = rng.random((size // 8, n))
            # running sums always, then place by place always
            times, found = _paths(_intervals, "_FEW", timing, _intervals._betting_lower, x, 0.025)
            table.row(size, *times, size < _intervals._FEW, _difference(*found))


def pieces(quick: bool, timing: _Timing) -> None:
    """``_PIECES`` of evalstats.cli._options: JSON pieces joined for each write."""
    from evalstats._terminal import VisibleWriter
    from evalstats.cli import _options

    cases = 1000 if quick else 10_000
    rng = np.random.default_rng(0)
    document = {
        "cases": [
            {
                "case": f"case-{i:05d}",
                "tags": ["billing", "refunds"],
                "variants": {
                    v: {
                        "passes": int(rng.integers(0, 6)),
                        "runs": 5,
                        "rate": float(rng.random()),
                        "low": float(rng.random()),
                        "high": float(rng.random()),
                        "latency_s": [0.5, 1.25],
                        "error": None,
                    }
                    for v in ("A", "B")
                },
            }
            for i in range(cases)
        ]
    }
    count = sum(1 for _ in json.JSONEncoder(indent=2).iterencode(document))
    sweep = _Sweep(
        f"_PIECES = {_options._PIECES} (cli/_options.py): print_json of {cases:,} cases "
        f"({count:,} pieces) to os.devnull through the CLI's VisibleWriter",
        "pieces a write",
        _options._PIECES,
    )
    values = (1, 16, 256, 4096, 1 << 40) if quick else (1, 16, 64, 256, 4096, 65536, 1 << 40)
    texts = {}
    for value in values:
        with _set(_options, "_PIECES", value):
            texts[value] = _printed(_StringWriter(), _options.print_json, document).text()
    with open(os.devnull, "w") as devnull:
        stdout = VisibleWriter(devnull)
        times = _settings(
            _options, "_PIECES", values, timing, _printed, stdout, _options.print_json, document
        )[0]
    same = texts[_options._PIECES]
    sweep.rows(times, {v: "identical" if t == same else "DIFFERENT" for v, t in texts.items()})


def _printed(stdout: Any, print_json: Callable[..., Any], document: Any) -> Any:
    """``print_json(document, "report")`` to ``stdout``; returns ``stdout``."""
    with _set(sys, "stdout", stdout):
        print_json(document, "report")
    return stdout


class _StringWriter:
    """Collects what is written (a stand-in for stdout)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def pmf_fft(quick: bool, timing: _Timing) -> None:
    """``_PMF_FFT`` of evalstats.stats._casemodel: the laws correlated directly or by FFT."""
    from evalstats.stats import _casemodel

    rng = np.random.default_rng(0)
    shapes = [(1, 80, 24, "one case model (CaseModel: 80 nodes x 24 Hermite nodes)")]
    shapes.append((200, 64, 12, "200 drawn models (plan --from: 64 nodes x 12 Hermite nodes)"))
    for models, nodes, extra, what in shapes:
        table = _Table(
            f"_PMF_FFT = {_casemodel._PMF_FFT} (stats/_casemodel.py): difference_pmf of {what}; "
            "size = runs",
            "runs",
            "direct",
            "FFT",
        )
        top = (32 if models > 1 else 64) if quick else (64 if models > 1 else 256)
        for runs in (r for r in (4, 8, 16, 32, 64, 128, 256) if r <= top):
            x = rng.random((models, nodes))
            wx = np.full((models, nodes), 1.0 / nodes)
            y = rng.random((models, nodes, extra))
            wy = np.full(extra, 1.0 / extra)
            args = (x, wx, y, wy, runs)  # direct always, then FFT always
            times, found = _paths(_casemodel, "_PMF_FFT", timing, _casemodel.difference_pmf, *args)
            table.row(runs, *times, runs <= _casemodel._PMF_FFT, _difference(*found))


def exact_below(quick: bool, timing: _Timing) -> None:
    """``_EXACT_BELOW`` of evalstats.stats._discrete: exact integers or the kept leading bits."""
    from evalstats.stats import _discrete

    attainable = _discrete._mcnemar_attainable.__wrapped__  # not the cached values
    table = _Table(
        f"_EXACT_BELOW = {_discrete._EXACT_BELOW} (stats/_discrete.py): _mcnemar_attainable; "
        "size = discordant pairs",
        "pairs",
        "exact",
        "kept bits",
    )
    for d in (
        (150, 600, 1000, 4800)
        if quick
        else (75, 150, 300, 450, 600, 800, 1000, 1200, 2400, 4800, 9600)
    ):
        # exact integers always, then the kept bits always
        times, found = _paths(_discrete, "_EXACT_BELOW", timing, attainable, d)
        same = "0 (identical)" if found[0] == found[1] else _difference(*found)
        table.row(d, *times, d < _discrete._EXACT_BELOW, same)


def _scipy_import(repeats: int) -> float:
    """The best time of ``import scipy.special`` in a fresh process (what the series saves)."""
    import subprocess

    code = (
        "import time; t = time.perf_counter(); import scipy.special; print(time.perf_counter() - t)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ]
    runs += [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for _ in range(repeats - 1)
    ]
    return min(float(r.stdout) for r in runs)


def t_series(quick: bool, timing: _Timing) -> None:
    """``_T_SERIES_MAX_DF`` of evalstats.stats._intervals: the series or scipy's quantile."""
    from evalstats.stats import _intervals

    imported = _scipy_import(timing.repeats)
    _intervals._t(10**9, 0.95)  # scipy imported here too, before the warm calls are timed
    warm = _best(timing, _intervals._t, 10**6, 0.95)
    table = _Table(
        f"_T_SERIES_MAX_DF = {_intervals._T_SERIES_MAX_DF:,} (stats/_intervals.py): the 95% "
        "Student t quantile _t; size = degrees of freedom; stdtrit = a process's first call: "
        f"import scipy.special ({imported * 1e3:.0f} ms, a fresh process) and the call "
        f"({warm * 1e3:.3f} ms once imported)",
        "df",
        "series",
        "stdtrit",
    )
    sizes = (2500, 20_000, 160_000) if quick else (2500, 10_000, 20_000, 40_000, 80_000, 160_000)
    for df in sizes:
        # the series always, then scipy always
        times, found = _paths(_intervals, "_T_SERIES_MAX_DF", timing, _intervals._t, df, 0.95)
        times[1] += imported
        table.row(df, *times, df <= _intervals._T_SERIES_MAX_DF, _difference(*found))


def betting_blocks(quick: bool, timing: _Timing) -> None:
    """``_WIDE`` and ``_BLOCK`` of evalstats.stats._intervals: rows of betting bounds a block."""
    from evalstats.stats import _intervals

    rng = np.random.default_rng(1)
    for name, n, rows, values in (
        ("_WIDE", 200, 512 if quick else 2048, (256, 512, 1024, 2048, 4096, 8192, 16384)),
        ("_BLOCK", 20, 2048 if quick else 8192, tuple(1 << k for k in range(14, 21))),
    ):
        chosen = getattr(_intervals, name)
        sweep = _Sweep(
            f"{name} = {chosen:,} (stats/_intervals.py): betting lower bounds of {rows:,} rows "
            f"of {n} values, the rows of a block set by it",
            name,
            chosen,
        )
        x = rng.random((rows, n))
        values = values[2:-2] if quick else values
        run = _intervals._betting_lower
        times, found = _settings(_intervals, name, values, timing, run, x, 0.025)
        sweep.rows(times, {v: _difference(f, found[chosen]) for v, f in found.items()})


def pmf_values(quick: bool, timing: _Timing) -> None:
    """``_PMF_VALUES`` of evalstats.stats._casemodel: models of difference_pmf a block."""
    from evalstats.stats import _casemodel

    rng = np.random.default_rng(2)
    models, nodes, extra, runs = (300 if quick else 1000), 64, 12, 16
    x = rng.random((models, nodes))
    wx = np.full((models, nodes), 1.0 / nodes)
    y = rng.random((models, nodes, extra))
    wy = np.full(extra, 1.0 / extra)
    chosen = _casemodel._PMF_VALUES
    sweep = _Sweep(
        f"_PMF_VALUES = {chosen:,} (stats/_casemodel.py): difference_pmf of {models:,} models, "
        f"{nodes} nodes x {extra} Hermite nodes, {runs} runs "
        f"({nodes * (runs + 1):,} values a model)",
        "_PMF_VALUES",
        chosen,
    )
    values = (1 << 17, 1 << 23) if quick else tuple(1 << k for k in range(15, 24, 2))
    values = tuple(sorted({*values, chosen}))
    run = _casemodel.difference_pmf
    times, found = _settings(_casemodel, "_PMF_VALUES", values, timing, run, x, wx, y, wy, runs)
    sweep.rows(times, {v: _difference(f, found[chosen]) for v, f in found.items()})


_SECTIONS = (few, pieces, pmf_fft, exact_below, t_series, betting_blocks, pmf_values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, smaller sizes (under 20 s)")
    parser.add_argument("--repeat", type=int, default=None, help="timings a figure (3; 2 quick)")
    parser.add_argument(
        "--spend", type=float, default=None, help="seconds a figure may take (0.25; 0.03 quick)"
    )
    args = parser.parse_args(argv)
    spend = args.spend if args.spend is not None else (0.03 if args.quick else 0.25)
    timing = _Timing(args.repeat or (2 if args.quick else 3), spend)
    start = time.perf_counter()
    print(
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; best of "
        f"{timing.repeats} to {_ROUNDS} timings (while they take under {spend} s). "
        "ratio = second path's time / first's; picks = the path the constant picks at that "
        f"size; faster = whether it is the faster one (tie: within {_NOISE:.0%})"
    )
    for section in _SECTIONS:
        section(args.quick, timing)
    print(f"\n{time.perf_counter() - start:.1f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
