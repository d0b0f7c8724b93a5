"""What does fitting a figure to its text cost?

Every figure is grown until each text it draws lies inside it
(``presenting/_plots.py``, ``_fit``): one layout pass more than saving alone.
This times the paired-difference figure of 4 and 200 cases and the
sequential figure of 33 looks, drawn and saved as PNG, against the same
figures with the fitting step skipped, measured in the same run. Prints the
figures and their ratio; asserts nothing about time.

Usage::

    python benchmarks/figures.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import timeit
from unittest import mock

import numpy as np

from evalstats.deciding._sequential import sequential_compare
from evalstats.presenting import _plots
from evalstats.stats._compare import compare


def _outcomes(cases: int, runs: int, seed: int = 0) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    a = {f"case {i}": (rng.random(runs) < 0.7).tolist() for i in range(cases)}
    b = {f"case {i}": (rng.random(runs) < 0.9).tolist() for i in range(cases)}
    return a, b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; best kept")
    args = parser.parse_args(argv)

    drawings = {
        "paired differences, 4 cases": (
            _plots.paired_difference_figure,
            compare(*_outcomes(4, 10)),
        ),
        "paired differences, 200 cases": (
            _plots.paired_difference_figure,
            compare(*_outcomes(200, 10)),
        ),
        "sequential, 33 looks": (_plots.sequential_figure, sequential_compare(*_outcomes(4, 33))),
    }
    print(f"{'figure (drawn and saved as PNG)':<34} {'fitted':>9} {'not fitted':>11} {'ratio':>6}")
    for name, (draw, data) in drawings.items():

        def once(draw=draw, data=data) -> None:
            _plots.png_bytes(draw(data))

        fitted = min(timeit.repeat(once, number=1, repeat=args.repeat))
        with mock.patch.object(_plots, "_fit", lambda fig: fig):
            bare = min(timeit.repeat(once, number=1, repeat=args.repeat))
        print(f"{name:<34} {fitted:>8.2f}s {bare:>10.2f}s {fitted / bare:>5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
