"""False "B better", the non-inferiority gate's size at its margin, and power, for mean scores.

The scores are drawn as in ``simulations/score_coverage.py`` (skewed,
bimodal, likert); A and B run every case ``repeats`` times, paired. Each
experiment is judged as :func:`evalstats.stats._score_compare.compare_scores`
and :func:`~evalstats.stats._score_compare.score_non_inferiority` judge it
(the limits of :func:`evalstats.stats._scores.score_limits` on (B - A + 1) / 2).

1. False "B better" (one-sided, goal at most 2.5%, Monte Carlo upper bound
   at most 2.8%), for each claim and method, under two nulls: ``same``, B
   scores like A on every case; ``spread`` (about cases like these only), B's
   case means drawn afresh from the same distribution of cases, so B gains on
   some cases and loses on others, 0 on average over cases like these.
2. The gate's size: B worse by exactly the margin (0.05) on average (about
   these cases: over the cases drawn; about cases like these: over the
   distribution of cases), B's runs scored 0 with probability q and as A's
   otherwise; how often ``score_non_inferiority(margin=0.05)`` passes. Goal
   as in 1.
3. Power: how often ``compare_scores`` says "B better" when B gains 0.10
   (each run 1 with probability q, else as A's), and how often the gate with
   margin 0.10 passes when B scores like A.

Measured (2,000 experiments a cell, 5-100 cases x 1, 3 repeats, seed 0).
False "B better", the default (betting): at most 0.5% (MC upper 0.9%) about
cases like these in 72 cells, at most 0.1% (0.3%) about these cases in 36;
the t interval up to 3.7% (4.6%) and 3.1% (4.0%), the studentized
bootstrap up to 6.1% (7.2%). The gate at its margin: betting at most 0.5%
(0.9%) about cases like these and 0.1% (0.4%) about these cases, in 36
cells each; the t interval up to 12.0% (13.5%) and 7.4% (8.6%) (at 5
cases; 4.1-6.0% at 30 and 3.2-4.5% at 100 cases of skewed scores about
cases like these), the studentized bootstrap up to 12.2%. The price, about
cases like these: B better by 0.10 is seen by the betting default 77% of
the time at 100 cases x 1 of skewed scores and 99% at 100 x 3, but 23% at
100 x 1 and 6.5% at 30 x 3 of mostly-0-and-1 scores (the t interval:
51% and 45%).

Usage::

    python simulations/score_compare.py [--experiments 2000] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

from evalstats.stats._intervals import betting_signs, proportion_ci
from evalstats.stats._score_compare import compare_method
from evalstats.stats._scores import SCORE_METHODS, score_limits


def _coverage_module():
    path = Path(__file__).resolve().parent / "score_coverage.py"
    spec = importlib.util.spec_from_file_location("score_coverage_simulation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_COV = _coverage_module()
KINDS, TRUE_MEAN = _COV.KINDS, _COV.TRUE_MEAN
CASES = (5, 10, 20, 30, 50, 100)
REPEATS = (1, 3)
LEVEL = 0.95
MARGIN = 0.05
GAIN = 0.10
RESAMPLES = 999


def _runs(kind: str, mu: np.ndarray, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """Runs (..., cases, repeats) with case means ``mu``, scored as ``kind`` scores are."""
    m = np.clip(mu, 1e-9, 1 - 1e-9)[..., None]
    shape = (*mu.shape, repeats)
    if kind == "skewed":
        return rng.beta(5.0 * m, 5.0 * (1 - m), shape)
    if kind == "bimodal":
        coin = (rng.random(shape) < m).astype(float)
        return np.where(rng.random(shape) < 0.85, coin, rng.beta(4.0 * m, 4.0 * (1 - m), shape))
    return rng.binomial(4, np.broadcast_to(m, shape)) / 4.0


def _case_means(kind: str, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    return _COV.draw(kind, shape[1], 1, shape[0], rng)[1]


def experiment(
    kind: str, cases: int, repeats: int, experiments: int, scenario: str, about: str, rng
) -> np.ndarray:
    """Pair differences (experiments, cases, repeats) in [-1, 1] under ``scenario``.

    ``same``: B scores like A. ``spread``: B's case means drawn afresh.
    ``margin``: B worse by :data:`MARGIN` (over these cases, or over the
    distribution of cases). ``gain``: B better by :data:`GAIN` likewise.
    """
    shape = (experiments, cases)
    mu = _case_means(kind, shape, rng)
    if scenario in ("margin", "gain") and about == "these_cases":
        base = mu.mean(axis=-1, keepdims=True)
        room = base if scenario == "margin" else 1.0 - base
        size = MARGIN if scenario == "margin" else GAIN
        # the cases drawn must leave room for the shift (q at most 0.9)
        for _ in range(100):
            bad = (room < size / 0.9).reshape(-1)
            if not bad.any():
                break
            mu[bad] = _case_means(kind, (int(bad.sum()), cases), rng)
            base = mu.mean(axis=-1, keepdims=True)
            room = base if scenario == "margin" else 1.0 - base
        q = size / room
    elif scenario == "margin":
        q = MARGIN / TRUE_MEAN[kind]
    elif scenario == "gain":
        q = GAIN / (1.0 - TRUE_MEAN[kind])
    a = _runs(kind, mu, repeats, rng)
    nu = _case_means(kind, shape, rng) if scenario == "spread" else mu
    b = _runs(kind, nu, repeats, rng)
    if scenario in ("margin", "gain"):
        qq = np.broadcast_to(np.asarray(q, dtype=float)[..., None], b.shape)
        hit = rng.random(b.shape) < qq
        b = np.where(hit, 0.0 if scenario == "margin" else 1.0, b)
    return b - a


def decisions(d: np.ndarray, about: str, method: str, threshold: float, rng) -> np.ndarray:
    """Whether the lower limit of the difference is above ``threshold``, per experiment."""
    u = (d + 1.0) / 2.0
    if method == "betting" and about == "cases_like_these" and threshold >= 0:
        return betting_signs(d.mean(axis=-1), LEVEL, threshold=threshold, only_above=True) == 1
    if method == "betting" and about == "these_cases":
        from evalstats.stats._scores import _fixed_rejects

        runs = u.reshape(u.shape[0], -1)
        point = np.full(runs.shape[0], (threshold + 1.0) / 2.0)
        return _fixed_rejects(runs, point, (1.0 - LEVEL) / 2.0) & (runs.mean(axis=-1) > point)
    low, _ = score_limits(u, LEVEL, about=about, method=method, resamples=RESAMPLES, seed=rng)
    return 2.0 * low - 1.0 > threshold


def _mc(k: int, n: int) -> str:
    ci = proportion_ci(k, n, method="wilson")
    return f"{100 * k / n:5.1f}% ({100 * ci.low:4.1f}-{100 * ci.high:4.1f})"


def rate(kind, cases, repeats, experiments, scenario, about, method, threshold, seed) -> int:
    """How many of ``experiments`` experiments pass ``lower limit > threshold``."""
    rng = np.random.default_rng([seed, cases, repeats, KINDS.index(kind), len(scenario)])
    d = experiment(kind, cases, repeats, experiments, scenario, about, rng)
    return int(np.sum(decisions(d, about, method, threshold, rng)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiments", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 300 if args.quick else args.experiments
    grid = (5, 30) if args.quick else CASES
    start = time.perf_counter()
    worst: dict[str, tuple[float, str]] = {}
    parts = [
        ("false B better", ("same", "spread"), 0.0),
        (f"gate passes at its margin {MARGIN}", ("margin",), -MARGIN),
        (f"power: B better by {GAIN}", ("gain",), 0.0),
        (f"power: gate (margin {GAIN}) passes B = A", ("same",), -GAIN),
    ]
    for title, scenarios, threshold in parts:
        print(f"\n{title}")
        for about, names in SCORE_METHODS.items():
            methods = [m for m in names[1:] if m not in ("percentile", "bca")]
            print(f"  about {about.replace('_', ' ')}: " + " | ".join(methods) + " | auto")
            for scenario in scenarios:
                if scenario == "spread" and about == "these_cases":
                    continue
                for kind in KINDS:
                    for cases in grid:
                        for repeats in REPEATS:
                            counts = {
                                m: rate(
                                    kind,
                                    cases,
                                    repeats,
                                    n,
                                    scenario,
                                    about,
                                    m,
                                    threshold,
                                    args.seed,
                                )
                                for m in methods
                            }
                            auto = compare_method(cases, about, cases * repeats)
                            row = "  ".join(_mc(counts[m], n) for m in methods)
                            print(
                                f"    {scenario:6} {kind:7} {cases:4d} x{repeats:<2d} {row}  {auto}"
                            )
                            if title.startswith("power"):
                                continue
                            share = counts[auto] / n
                            key = f"{title}, about {about.replace('_', ' ')}"
                            if key not in worst or share > worst[key][0]:
                                worst[key] = (
                                    share,
                                    f"{_mc(counts[auto], n)} at {scenario} "
                                    f"{kind} {cases} x {repeats}",
                                )
    print()
    for key, (_, text) in worst.items():
        print(f"default, worst: {key}: {text}")
    print(f"({n} experiments a cell, seed {args.seed}, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
