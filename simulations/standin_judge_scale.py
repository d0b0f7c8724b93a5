"""The stand-in judge on a scale: the mean score a run records, against the stated one.

Asked for a score on ``(low, high)``, the stand-in judge
(``evalstats.demo._judge.make_judge``) gives the point of the scale an
answer's true quality names with probability ``p`` (its sensitivity when the
quality is at least 0.5, its specificity below), else the mirrored point, so
an answer whose true point maps to ``t`` in [0, 1] has the expected score
``p * t + (1 - p) * (1 - t)``; with a True/False truth and a threshold above
the bottom, its pass/fail errs at exactly the binary judge's rates.

This script runs whole evals through the engine: five cases whose answers have
the qualities 0, 0.25, 0.5, 0.75 and 1, each answered ``runs`` times, scored
by ``judged_by(..., scale=(1, 5), threshold=4)`` and the stand-in judge at the
set sensitivity and specificity, and prints per case the mean recorded sample
score with its 95% Monte Carlo interval (the share of right points is
binomial: its Wilson interval, mapped to the score), the stated expected
score, and whether the interval holds it (about 1 in 20 should not).

Usage::

    python simulations/standin_judge_scale.py [--runs 2000] [--seed 0]

Measured (5 cases x 2,000 repeats, sensitivity 0.9, specificity 0.8, seed 0)::

    quality  stated  recorded mean (95% MC interval)   right points
       0.00  0.2000  0.2115 (0.1942 to 0.2299)           1577/2000
       0.25  0.3500  0.3550 (0.3464 to 0.3642)           1580/2000
       0.50  0.5000  0.5000 (0.5000 to 0.5000)           2000/2000
       0.75  0.7000  0.6997 (0.6928 to 0.7060)           1799/2000
       1.00  0.9000  0.9010 (0.8871 to 0.9133)           1802/2000

0 of the 5 stated means outside their 95% interval. ``tests/test_judge_scale.py``
runs the same at 300 repeats and asserts every mean within 4.5 binomial
standard errors of the stated one.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

QUALITIES = (0.0, 0.25, 0.5, 0.75, 1.0)


def measure(runs: int, sensitivity: float, specificity: float, seed: int) -> list[dict]:
    """One row per case: its quality, the stated mean score, the recorded mean and
    its 95% interval, the share of right points and the number of samples."""
    from evalstats.demo._judge import make_judge
    from evalstats.results._file import read_results
    from evalstats.running._engine import run
    from evalstats.running._judge import judged_by
    from evalstats.running._suite import Case
    from evalstats.running._variants import Variant
    from evalstats.stats._intervals import proportion_ci

    def quality(answer: str) -> float:
        return float(answer.rsplit(" ", 1)[1])

    judge = make_judge(quality, sensitivity=sensitivity, specificity=specificity, seed=seed)
    check = judged_by(judge, "A good answer.", scale=(1, 5), threshold=4)
    cases = [Case(f"q{q:g}", f"quality {q:g}", (check,)) for q in QUALITIES]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "r.jsonl"
        run(
            cases,
            [Variant("v", lambda prompt: prompt)],
            runs=runs,
            out=out,
            seed=seed,
            progress=False,
            timeout=None,
        )
        samples = read_results(out).samples
    rows = []
    for q in QUALITIES:
        scores = [s["score"] for s in samples if s["case"] == f"q{q:g}"]
        t = math.floor(4 * q + 0.5) / 4  # the true point, mapped to [0, 1]
        p = sensitivity if q >= 0.5 else specificity
        stated = p * t + (1 - p) * (1 - t)
        n = len(scores)
        mean = sum(scores) / n
        if t == 0.5:  # the point is its own mirror: every score is 0.5
            low = high = mean
            right = n
        else:
            right = sum(abs(s - t) < 1e-12 for s in scores)
            share = proportion_ci(right, n, method="wilson")
            # mean = share * t + (1 - share) * (1 - t), monotone in the share
            ends = [h * t + (1 - h) * (1 - t) for h in (share.low, share.high)]
            low, high = min(ends), max(ends)
        rows.append(
            {
                "quality": q,
                "stated": stated,
                "mean": mean,
                "low": low,
                "high": high,
                "right": right,
                "samples": n,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--sensitivity", type=float, default=0.9)
    parser.add_argument("--specificity", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = measure(args.runs, args.sensitivity, args.specificity, args.seed)
    print(
        f"stand-in judge on 1-5, sensitivity {args.sensitivity:g}, specificity "
        f"{args.specificity:g}, {args.runs} repeats per case (seed {args.seed})"
    )
    print("quality  stated  recorded mean (95% MC interval)   right points  holds")
    missed = 0
    for r in rows:
        holds = r["low"] - 1e-12 <= r["stated"] <= r["high"] + 1e-12
        missed += not holds
        print(
            f"{r['quality']:7.2f}  {r['stated']:6.4f}  {r['mean']:.4f} ({r['low']:.4f} to "
            f"{r['high']:.4f})          {r['right']:5d}/{r['samples']:<5d}  "
            f"{'yes' if holds else 'NO'}"
        )
    print(f"{missed} of {len(rows)} stated means outside their 95% interval")


if __name__ == "__main__":
    main()
