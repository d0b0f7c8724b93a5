"""How fast are the fixed-bet limits now that bounds of the capital decide first?

Times ``fixed_bet_limits`` (the betting interval about these cases: 40
bisection steps per side, each asking ``_fixed_rejects`` whether every row's
capital reaches 1 / alpha) with the verdicts decided from bounds of the
capital where they settle it, against the same bisection with every verdict
worked out in full (all 16 bets' log products of every value, as before the
bounds), measured in the same run. The exact path is this module's
``exact_rejects``, swapped in for ``_fixed_rejects`` while it is timed; both
give the same limits, bit for bit, which the script checks. Figures:

1. 4,000 rows x 20 values (a planner-sized batch of short runs);
2. 200 rows x 2,000 values (long runs);
3. ``score_mean_ci(..., about="these_cases", method="betting")`` on one
   variant's run of 40 cases x 3 runs (one row of 120 scores), the public
   call.

Scores are beta(2, 1) draws (mean 2/3). Prints each figure's best of
``--repeat`` times (the two paths' runs alternating), the ratio to the
exact path and whether the limits agree; asserts nothing about time.

Measured on the 2-core development machine, shared with other work, at a
load average of about 1.1, best of 5 (``--repeat 5``):

==========================  ==========  ==========  =======
figure                      bounds      exact       ratio
==========================  ==========  ==========  =======
4,000 x 20                  0.989 s     1.190 s     0.83x
200 x 2,000                 4.459 s     5.097 s     0.87x
score_mean_ci, 40 x 3       5.9 ms      5.5 ms      1.07x
==========================  ==========  ==========  =======

The limits were identical in each. An earlier run at a load of 2.2-3.0
gave 0.79x, 0.87x and 1.07x. The gain is small because a bisection
closes in on the threshold: by about its 13th step at 2,000 values and
its 20th at 20 the bounds, which work out 2 bets of 16 and bound the
others to within about a**3 s2 of each other, settle no row, and a row
they leave is worked out in full at every later step (some 70%
of the row-steps at 20 values; ``tests/test_fixed_rejects.py``). At one
row the bounds' own cost, about that of the full capital at this size,
is not won back. A planner's single evaluation per experiment, far from
the threshold for most, is where the bounds pay (``score_certainty.py``).

Usage::

    python benchmarks/fixed_bets.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import timeit
from collections.abc import Callable, Iterator

import numpy as np

from evalstats.stats import _scores


def exact_rejects(x: np.ndarray, m: np.ndarray, alpha: float, **_: object) -> np.ndarray:
    """The fixed-bet verdicts with every row's capital worked out in full."""
    m = np.broadcast_to(np.asarray(m, dtype=float), (x.shape[0],))
    return _scores._fixed_exact_rejects(x, m, math.log(1.0 / alpha))


@contextlib.contextmanager
def exact_path() -> Iterator[None]:
    """``_fixed_rejects`` replaced by :func:`exact_rejects` while the block runs."""
    bounded = _scores._fixed_rejects
    _scores._fixed_rejects = exact_rejects
    try:
        yield
    finally:
        _scores._fixed_rejects = bounded


def best_of_both(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best times of ``call`` with the bounds and on the exact path, runs alternating.

    A call under 0.1 s is timed as the mean of as many calls as take about
    0.5 s.
    """
    number = max(1, round(0.5 / timeit.timeit(call, number=1)))
    bounded, exact = [], []
    for _ in range(repeat):
        bounded.append(timeit.timeit(call, number=number) / number)
        with exact_path():
            exact.append(timeit.timeit(call, number=number) / number)
    return min(bounded), min(exact)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure; the best")
    args = parser.parse_args(argv)
    from evalstats.stats._scores import fixed_bet_limits, score_mean_ci

    rng = np.random.default_rng(0)
    run = rng.beta(2.0, 1.0, 120)
    cases = np.repeat(np.arange(40), 3)
    figures: list[tuple[str, Callable[[], object]]] = []
    for rows, n in ((4000, 20), (200, 2000)):
        x = rng.beta(2.0, 1.0, (rows, n))
        figures.append((f"{rows:,} x {n:,}", lambda x=x: fixed_bet_limits(x, 0.95)))
    figures.append(
        (
            "score_mean_ci, 40 x 3",
            lambda: score_mean_ci(run, cases, about="these_cases", method="betting"),
        )
    )
    print(f"{'figure':<24} {'bounds':>10} {'exact':>10} {'ratio':>7}  limits")
    for name, call in figures:
        got = call()
        with exact_path():
            want = call()
        if isinstance(got, tuple):
            same = all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
        else:
            same = (got.low, got.high) == (want.low, want.high)
        bounded, exact = best_of_both(call, args.repeat)
        print(
            f"{name:<24} {bounded:8.4f}s {exact:8.4f}s {bounded / exact:6.2f}x  "
            f"{'identical' if same else 'DIFFER'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
