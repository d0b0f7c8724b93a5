"""The anytime-valid comparison of mean scores: validity, coverage and power.

Validity. With B scoring like A, the script looks after every pair up to
the budget and counts how often the comparison of mean scores
(``evalstats.deciding._score_sequential``) ever says "B better" (one-sided,
nominal at most 2.5% at the 95% level), for three kinds of scores, each
case drawing its own distribution in every experiment:

* skewed: Beta with mean m_c ~ U(0.6, 0.95) and concentration 4;
* bimodal, mostly 0 and 1: 1 with probability 0.9 p_c, 0 with 0.9 (1 - p_c),
  else uniform on [0, 1], p_c ~ U(0.3, 0.9);
* Likert-like: five levels 0, 1/4, 1/2, 3/4, 1 with probabilities
  Dirichlet(1, 1, 1, 1, 1) per case;

at 1, 5, 20 and 50 cases (the rounds that make the budget of pairs). Then
with cases on which B is better and cases on which it is worse by the same
amount (the mean over these cases is 0: Beta scores with case means
m_c +- 0.1), looking after every round, which is what the guarantee covers
there. Each line prints the rate with its 95% Monte Carlo (Wilson) interval.

Coverage. The interval printed beside the verdict is a confidence sequence:
the script counts how often some look's interval misses the true mean
difference (nominal at most 5% at 95%), with A = B and with B better by the
stated difference.

Power at a stated difference: Likert scores, 20 cases, B's level
probabilities those of A moved so that B's mean is 0.05 or 0.1 higher on every case
(one tenth of the weight of each level moved up to the next, then topped up
from level 0), budget 50 rounds, looking after every round: the share of
"B better" within the budget, the mean rounds run and their median and
90th percentile.

Usage::

    python simulations/score_sequential.py [--experiments 4000] [--pairs 1000] [--seed 0]
        [--quick]

``--quick`` runs every part with few experiments (a smoke test).

Figures (``--experiments 4000 --pairs 1000``, seed 0; 95% Monte Carlo intervals):

* false "B better", B = A, a look after every pair: 1.27% to 2.12% across the
  twelve settings; the largest 2.12% (1.72% to 2.62%), bimodal at 5 cases, so
  the largest upper bound is 2.62% (goal at most 2.8%);
* B better on half the cases, worse on the others, a look after every round:
  0.83% (0.59% to 1.16%) at 2 cases, 0.25% at 10, 0.15% at 50;
* some look's interval missing the true difference (2,000 experiments): 2.85%
  (2.21% to 3.67%) and 2.15% with A = B at 1 and 20 cases; 3.10% and 1.70%
  with B better by 0.1;
* power, 20 cases, at most 50 rounds: B better by 0.05, 68.6% (67.1% to
  70.0%), rounds run mean 33.2 (32.8 to 33.7), median 35, 90th percentile 50;
  by 0.1, 100% (99.9% to 100%), mean 10.2 (10.0 to 10.4), median 9, 90th 19.

``tests/test_score_sequential.py`` asserts validity at reduced size.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalstats.deciding._score_sequential import score_crossings
from evalstats.stats._intervals import proportion_ci

LEVELS = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


def rate_line(label: str, hits: int, n: int) -> str:
    ci = proportion_ci(hits, n, method="wilson")
    return (
        f"{label:<62} {100 * ci.estimate:6.2f}%  ({100 * ci.low:.2f}% to "
        f"{100 * ci.high:.2f}%)  n={n}"
    )


def _round_order(x: np.ndarray) -> np.ndarray:
    """(experiments, rounds, cases) -> (experiments, pairs), round by round."""
    return x.reshape(x.shape[0], -1)


def draw_skewed(rng, experiments, rounds, cases, shift=None):
    mean = rng.uniform(0.6, 0.95, size=(experiments, 1, cases))
    a = rng.beta(4 * mean, 4 * (1 - mean), size=(experiments, rounds, cases))
    mean_b = mean if shift is None else np.clip(mean + shift, 0.01, 0.99)
    b = rng.beta(4 * mean_b, 4 * (1 - mean_b), size=(experiments, rounds, cases))
    return _round_order(b - a), float(np.mean(mean_b - mean))


def draw_bimodal(rng, experiments, rounds, cases):
    p = rng.uniform(0.3, 0.9, size=(experiments, 1, cases))

    def one() -> np.ndarray:
        u = rng.random((experiments, rounds, cases))
        mid = rng.random((experiments, rounds, cases))
        return np.where(u < 0.9 * p, 1.0, np.where(u < 0.9, 0.0, mid))

    return _round_order(one() - one())


def _likert_probs(rng, experiments, cases):
    return rng.dirichlet(np.ones(5), size=(experiments, cases))  # (E, C, 5)


def _draw_levels(rng, probs, rounds):
    experiments, cases, _ = probs.shape
    cum = np.cumsum(probs, axis=-1)[:, None, :, :]  # (E, 1, C, 5)
    u = rng.random((experiments, rounds, cases, 1))
    return LEVELS[np.minimum((u > cum).sum(axis=-1), 4)]


def likert_better(probs: np.ndarray, gain: float) -> np.ndarray:
    """Level probabilities whose mean is ``gain`` higher: the share of each level moved
    up one level, the share s solving mean + s * (1/4) * (1 - p_top) = mean + gain, topped
    at moving everything; where that cannot reach the gain, what it can."""
    top = probs[..., 4]
    share = np.clip(4 * gain / np.maximum(1 - top, 1e-12), 0, 1)[..., None]
    moved = probs[..., :4] * share
    out = probs.copy()
    out[..., :4] -= moved
    out[..., 1:] += moved
    return out


def draw_likert(rng, experiments, rounds, cases, gain=0.0):
    pa = _likert_probs(rng, experiments, cases)
    pb = pa if gain == 0 else likert_better(pa, gain)
    a = _draw_levels(rng, pa, rounds)
    b = _draw_levels(rng, pb, rounds)
    true = float(np.mean((pb - pa) @ LEVELS))
    return _round_order(b - a), true, (pb - pa) @ LEVELS


def validity(experiments: int, pairs: int, seed: int) -> list[float]:
    print("false 'B better' with B = A, a look after every pair (nominal <= 2.5%):")
    highs = []
    rng = np.random.default_rng(seed)
    for kind in ("skewed", "bimodal", "Likert"):
        for cases in (1, 5, 20, 50):
            rounds = pairs // cases
            if kind == "skewed":
                d, _ = draw_skewed(rng, experiments, rounds, cases)
            elif kind == "bimodal":
                d = draw_bimodal(rng, experiments, rounds, cases)
            else:
                d, _, _ = draw_likert(rng, experiments, rounds, cases)
            _, verdict = score_crossings(d)
            hits = int(np.sum(verdict == 1))
            print("  " + rate_line(f"{kind}, {cases} cases x {rounds} rounds", hits, experiments))
            highs.append(proportion_ci(hits, experiments, method="wilson").high)
    print("false 'B better', B better on half the cases and worse on the others by 0.1")
    print("(the mean over these cases 0), a look after every round (nominal <= 2.5%):")
    for cases in (2, 10, 50):
        rounds = pairs // cases
        shift = np.where(np.arange(cases) % 2 == 0, 0.1, -0.1)[None, None, :]
        d, _ = draw_skewed(rng, experiments, rounds, cases, shift=shift)
        _, verdict = score_crossings(d, every=cases)
        hits = int(np.sum(verdict == 1))
        print("  " + rate_line(f"skewed, {cases} cases x {rounds} rounds", hits, experiments))
        highs.append(proportion_ci(hits, experiments, method="wilson").high)
    return highs


def coverage(experiments: int, pairs: int, seed: int) -> None:
    print("intervals missing the true mean difference at some look (nominal <= 5%):")
    rng = np.random.default_rng(seed + 1)
    for gain in (0.0, 0.1):
        for cases in (1, 20):
            rounds = pairs // cases
            d, _, per_case = draw_likert(rng, experiments, rounds, cases, gain=gain)
            truth = per_case.mean(axis=1)  # each experiment's own mean over its cases
            _, verdict = score_crossings(d, null=truth, every=cases)
            misses = int(np.sum(verdict != 0))
            label = f"Likert, B {'= A' if gain == 0 else f'+{gain:g}'}, {cases} cases x {rounds}"
            print("  " + rate_line(label + " rounds, a look every round", misses, experiments))


def power(experiments: int, seed: int) -> None:
    for gain in (0.05, 0.1):
        power_at(experiments, seed, gain)


def power_at(experiments: int, seed: int, gain: float) -> None:
    cases, rounds = 20, 50
    rng = np.random.default_rng(seed + 2)
    d, true, _ = draw_likert(rng, experiments, rounds, cases, gain=gain)
    stopped, verdict = score_crossings(d, every=cases)
    run = stopped // cases
    hits = int(np.sum(verdict == 1))
    print(
        f"power, Likert, B's mean +{gain:g} on every case (true {true:+.3f}), {cases} cases, "
        f"at most {rounds} rounds, a look every round:"
    )
    print("  " + rate_line("'B better' within the budget", hits, experiments))
    mean = run.mean()
    half = 1.96 * run.std(ddof=1) / np.sqrt(experiments)
    print(
        f"  rounds run: mean {mean:.1f} ({mean - half:.1f} to {mean + half:.1f}), median "
        f"{np.median(run):g}, 90th percentile {np.percentile(run, 90):g}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--experiments", type=int, default=4000)
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.experiments, args.pairs = 200, 200
    start = time.perf_counter()
    highs = validity(args.experiments, args.pairs, args.seed)
    print(f"largest Monte Carlo upper bound: {100 * max(highs):.2f}% (goal <= 2.8%)")
    coverage(max(200, args.experiments // 2), args.pairs, args.seed)
    power(args.experiments, args.seed)
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
