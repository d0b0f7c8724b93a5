"""How long does one anytime-valid look take on a large results set?

Times one look of ``sequential_compare`` (both scopes, and "these cases"
planned for an effect) on 100,000 (case, repeat) pairs over 4 cases, against
the fixed-n ``compare`` (exact McNemar) on the same data, measured in the same
run. Prints the figures and their ratio;
asserts nothing about time.

Usage::

    python benchmarks/sequential.py [--pairs 100000] [--cases 4]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from evalstats.deciding._sequential import sequential_compare
from evalstats.stats._compare import compare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--cases", type=int, default=4)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    runs = args.pairs // args.cases
    a = {f"case{i}": rng.random(runs) < 0.70 for i in range(args.cases)}
    b = {f"case{i}": rng.random(runs) < 0.71 for i in range(args.cases)}
    pairs = runs * args.cases

    fixed = min(timeit.repeat(lambda: compare(a, b), number=1, repeat=3))
    print(f"fixed-n compare (mcnemar), {pairs:,} pairs: {fixed * 1e3:.1f} ms")
    for about in ("these_cases", "cases_like_these"):
        seq = min(
            timeit.repeat(
                lambda about=about: sequential_compare(a, b, about=about, looks=[pairs]),
                number=1,
                repeat=7,
            )
        )
        print(
            f"one sequential look ({about}), {pairs:,} pairs: {seq * 1e3:.1f} ms; "
            f"ratio to the fixed-n compare: {seq / fixed:.3f}"
        )
    planned = min(
        timeit.repeat(
            lambda: sequential_compare(a, b, looks=[pairs], planned_for=(0.7, 0.9)),
            number=1,
            repeat=7,
        )
    )
    print(
        f"one sequential look (these_cases, planned for 0.7 -> 0.9), {pairs:,} pairs: "
        f"{planned * 1e3:.1f} ms; ratio to the fixed-n compare: {planned / fixed:.3f}"
    )
    print(sequential_compare(a, b, looks=[pairs]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
