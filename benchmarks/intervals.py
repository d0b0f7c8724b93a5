"""How fast are vectorised Wilson intervals?

Times one million Wilson intervals computed in one vectorised call of
``proportion_ci`` against a plain Python loop of scalar calls on a subset
(10,000 pairs by default), scaled to the same count, measured in the same run.
Prints the figures and their ratio; asserts nothing about time.

Usage::

    python benchmarks/intervals.py [--pairs 1000000] [--loop 10000]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from evalstats.stats._intervals import proportion_ci


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--loop", type=int, default=10_000)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    n = rng.integers(1, 1000, size=args.pairs)
    k = rng.integers(0, n + 1)
    kl, nl = k[: args.loop].tolist(), n[: args.loop].tolist()

    vec = min(timeit.repeat(lambda: proportion_ci(k, n), number=1, repeat=3))

    def loop() -> None:
        for ki, ni in zip(kl, nl, strict=True):
            proportion_ci(ki, ni)

    scalar = min(timeit.repeat(loop, number=1, repeat=1)) * (args.pairs / args.loop)

    print(
        f"vectorised: {args.pairs:,} Wilson intervals in {vec:.3f} s "
        f"({vec / args.pairs * 1e9:.0f} ns each)"
    )
    print(
        f"scalar loop: {args.loop:,} calls, scaled to {args.pairs:,}: {scalar:.1f} s "
        f"({scalar / args.pairs * 1e6:.1f} us each)"
    )
    print(f"ratio: vectorised is {scalar / vec:,.0f}x faster than the scalar loop")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
