"""How much does drawing a scored pilot's between-case covariance cost, ours against scipy's?

A plan from a scored pilot of both variants draws the covariance of A's and
B's case means from its inverse-Wishart posterior, for the assurance's
4,000 experiments, the intervals' draws and, with ``--certainty``, the
models searched over. ``evalstats.planning._score_pilot.inverse_wishart_2x2``
gives the same floats as ``scipy.stats.invwishart.rvs`` on the same
generator (tests/test_score_plan_pilot.py). Printed, medians of
``--repeat`` runs in this process (draws) and in fresh processes (import):

1. importing ``scipy.stats`` (which ours does not need), against importing
   ``scipy.special`` (which every plan imports anyway);
2. ``--draws`` draws by each, and the ratio of ours to scipy's.

Measured on the 2-core development machine (medians of 5): importing
``scipy.stats`` 0.562 s, of which ``scipy.special`` 0.209 s; 4,000 draws
0.43 ms by ours, 8.03 ms by scipy's (0.054x), the same floats. The whole
``evalstats plan --from`` of the scored pilot fixture (``--score-b
observed --repeats 2``) went from 4.06 s to 3.57 s of wall time.

Usage::

    python benchmarks/inverse_wishart.py [--draws 4000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np


def _import_time(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    stats = statistics.median(_import_time("scipy.stats") for _ in range(args.repeat))
    special = statistics.median(_import_time("scipy.special") for _ in range(args.repeat))
    print(f"import scipy.stats:   {stats:.3f} s (import scipy.special: {special:.3f} s)")

    from scipy.stats import invwishart

    from evalstats.planning._score_pilot import inverse_wishart_2x2

    k, scale = 12, 11 * np.array([[0.05, 0.04], [0.04, 0.045]])
    ours, theirs = [], []
    for i in range(args.repeat):
        t = time.perf_counter()
        mine = inverse_wishart_2x2(k, scale, args.draws, np.random.default_rng(i))
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        ref = invwishart.rvs(
            df=k, scale=scale, size=args.draws, random_state=np.random.default_rng(i)
        )
        theirs.append(time.perf_counter() - t)
        assert np.array_equal(mine, np.asarray(ref).reshape(mine.shape))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(
        f"{args.draws} draws: ours {a * 1e3:.2f} ms, scipy.stats.invwishart {b * 1e3:.2f} ms "
        f"[{a / b:.3f}x]; the same floats"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
