"""How often the no-regression gate passes a variant at, or beyond, its margin.

``gate --no-regression-vs old --margin M`` passes when the lower limit of the
interval for p_new - p_old lies above -M (:func:`evalstats.gate.non_inferiority`).
A variant exactly M worse sits on the boundary: a gate at level 0.95 (a
one-sided test at 2.5%) should pass it at most about 2.5% of the time, and
one truly worse by more should pass less often. What "exactly M worse" means
depends on the claim the gate makes:

* about **these cases** (``--about trials``: the paired McNemar comparison
  and Newcombe's paired interval on all runs): these cases' own rates differ by
  M. Each experiment draws 10 (or more) cases from the case model and then
  shifts B's rates on the logit scale so that these cases' mean difference
  is exactly -M (column "these: boundary").
* about **cases like these** (the default from 5 cases; the clustered
  comparison: the distribution-free
  betting interval below 100 cases, CR2 + t from there): the case model's
  mean difference is -M, and each experiment's cases are a fresh draw
  (column "like these: boundary").

The column "these, read as like" is the these-cases rule judged against the
cases-like-these boundary: the rate at which a verdict about these cases
would wrongly pass a variant that is M worse on cases like these (the reason
the claim must be chosen and stated). Then the power of the cases-like-these
rule when new is as good as old, and how often each rule passes a new
variant 20 points worse (90% -> 70%), where before the margin "can't tell"
counted as no regression and the gate passed 35% of 10-case runs (81% at
90% -> 80%).

Every rate is printed with its 95% Monte-Carlo (Wilson) interval. The rules
are applied vectorised (:func:`evalstats.intervals.paired_diff_ci` on the
pooled cells; :func:`evalstats.intervals.clustered_limits` on the case
differences); ``check_against_gate`` confirms on the first experiments of
every design that the public function gives the same verdicts.

Measured (6,000 experiments a cell; rate with its 95% Monte-Carlo interval;
old 90%, icc 0.3; margin 5 and 10 points):

* about these cases, at these cases' boundary: 1.4-2.3% at 10 x 5, 40 x 3,
  100 x 3 and 300 x 3 (worst 2.3%, 1.9 to 2.7): within 2.5%.
* the same verdict against the cases-like-these boundary: 1.9-3.7% (worst
  3.7%, 3.3 to 4.2, at 10 x 5 with a 10-point margin).
* about cases like these: 0.0-0.1% below 100 cases (the betting interval;
  a new variant as good as the old passes 0.0% of 10 x 5 runs and 28.6%
  (27.5 to 29.8) of 40 x 3 runs at a 10-point margin); at 100 cases, where
  CR2 + t takes over, 3.4% (3.0 to 3.9) and 4.2% (3.7 to 4.7), and at 300
  cases 2.8% (2.4 to 3.2) and 3.0% (2.6 to 3.4): above 2.5%, the t interval
  being too narrow on the low side for case differences this skewed.
* 20 points worse (90% -> 70%) with a 10-point margin: 0.2% (0.2 to 0.4)
  about these cases at 10 x 5, 0.0% elsewhere.

Run: python simulations/gate_margin.py [--experiments 6000]  (about 10 minutes on 2 cores)
"""

from __future__ import annotations

import argparse

import numpy as np

from evalstats.intervals import clustered_limits, paired_diff_ci, proportion_ci
from evalstats.power import CaseModel

#: (cases, runs) per variant.
DESIGNS = [(10, 5), (40, 3), (100, 3), (300, 3)]
P_OLD, ICC = 0.9, 0.3
MARGINS = (0.05, 0.1)
LEVEL = 0.95


def case_rates(
    rng: np.random.Generator, model: CaseModel, shape: tuple[int, int], *, these: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case rates of old and new, shape (experiments, cases).

    With ``these`` new's rates are shifted on the logit scale, experiment by
    experiment, so that these cases' mean difference is exactly the model's
    p_b - p_a (bisection on the shift, to 1e-12).
    """
    from scipy.special import expit, logit

    qa, qb = model.draw(rng, shape)
    if not these:
        return qa, qb
    target = model.p_b - model.p_a
    base = logit(qb)
    lo = np.full(shape[0], -20.0)
    hi = np.full(shape[0], 20.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        gap = (expit(base + mid[:, None]) - qa).mean(axis=1) - target
        lo, hi = np.where(gap < 0, mid, lo), np.where(gap < 0, hi, mid)
    return qa, expit(base + hi[:, None])


def runs(
    rng: np.random.Generator, qa: np.ndarray, qb: np.ndarray, repeats: int
) -> tuple[np.ndarray, np.ndarray]:
    """Paired pass/fail outcomes, shape (experiments, cases, runs): run r of old
    and run r of new on a case are one pair."""
    shape = qa.shape + (repeats,)
    return rng.random(shape) < qa[..., None], rng.random(shape) < qb[..., None]


def passes_these(xa: np.ndarray, xb: np.ndarray, margin: float) -> np.ndarray:
    """The gate's verdict about these cases: Newcombe's paired interval on all runs."""
    both = np.sum(xa & xb, axis=(1, 2))
    only_a = np.sum(xa & ~xb, axis=(1, 2))
    only_b = np.sum(~xa & xb, axis=(1, 2))
    neither = np.sum(~xa & ~xb, axis=(1, 2))
    low = paired_diff_ci(both, only_a, only_b, neither, level=LEVEL, method="newcombe").low
    return np.asarray(low) > -margin


def passes_like(xa: np.ndarray, xb: np.ndarray, margin: float) -> np.ndarray:
    """The gate's verdict about cases like these: the clustered interval."""
    d = xb.mean(axis=2) - xa.mean(axis=2)
    low, _ = clustered_limits(d, LEVEL, difference=True)
    return low > -margin


def gate_results(xa: np.ndarray, xb: np.ndarray):
    """One experiment as a results file holds it (for the public functions)."""
    from evalstats.results import Results

    cases, repeats = xa.shape
    names = [f"c{i}" for i in range(cases)]
    schedule, samples = [], []
    for r in range(repeats):
        for i, case in enumerate(names):
            order = ("old", "new") if (i + r) % 2 == 0 else ("new", "old")
            for position, v in enumerate(order):
                pair = r * cases + i
                schedule.append([case, r, pair, position, v])
                ok = bool(xa[i, r] if v == "old" else xb[i, r])
                samples.append(
                    {
                        "type": "sample",
                        "case": case,
                        "variant": v,
                        "repeat": r,
                        "pair": pair,
                        "position": position,
                        "status": "completed",
                        "checks": [{"check": "c", "status": "passed" if ok else "failed"}],
                    }
                )
    manifest = {
        "type": "manifest",
        "cases": [{"id": c} for c in names],
        "variants": [{"name": "old"}, {"name": "new"}],
        "runs": repeats,
        "schedule": schedule,
    }
    return Results(None, manifest, tuple(samples), {"status": "finished"}, ())


def check_against_gate(xa: np.ndarray, xb: np.ndarray, margin: float) -> int:
    """Experiments on which the vectorised rules and the public gate disagree."""
    from evalstats.gate import non_inferiority

    these = passes_these(xa, xb, margin)
    like = passes_like(xa, xb, margin)
    wrong = 0
    for i in range(xa.shape[0]):
        res = gate_results(xa[i], xb[i])
        got_these = non_inferiority(res, "old", "new", margin=margin, advice=False, scope="trials")
        got_like = non_inferiority(res, "old", "new", margin=margin, advice=False, scope="cases")
        wrong += (got_these.verdict == "not_worse") != bool(these[i])
        wrong += (got_like.verdict == "not_worse") != bool(like[i])
    return wrong


def rate(
    p_new: float,
    margin: float,
    cases: int,
    repeats: int,
    n: int,
    seed: int,
    *,
    rule: str,
    these: bool,
) -> tuple[int, int]:
    """Passes of ``rule`` ("these" or "like") out of ``n`` experiments."""
    rng = np.random.default_rng(seed)
    model = CaseModel(P_OLD, p_new, ICC)
    passed = done = 0
    block = max(1, 200_000 // (cases * repeats))
    while done < n:
        m = min(block, n - done)
        qa, qb = case_rates(rng, model, (m, cases), these=these)
        xa, xb = runs(rng, qa, qb, repeats)
        ok = passes_these(xa, xb, margin) if rule == "these" else passes_like(xa, xb, margin)
        passed += int(np.count_nonzero(ok))
        done += m
    return passed, n


def _ci(k: int, n: int) -> str:
    """A rate and its 95% Wilson interval, in percent to 0.1."""
    ci = proportion_ci(k, n)
    return f"{100 * k / n:.1f}% ({100 * ci.low:.1f} to {100 * ci.high:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=6000)
    parser.add_argument("--check", type=int, default=100, help="experiments checked per design")
    args = parser.parse_args()
    n = args.experiments
    print(
        f"old {P_OLD:.0%}, icc {ICC}, paired runs; {n} experiments a cell; "
        "95% Monte-Carlo intervals; goal at the boundary: at most 2.5%"
    )
    header = (
        f"{'design':<13} {'margin':>6}  {'these: boundary':<20} {'like these: boundary':<22} "
        f"{'these, read as like':<20} {'like: power at =':<20} {'these: 90->70':<18} "
        f"{'like: 90->70':<18}"
    )
    print(header)
    seed = 0
    for cases, repeats in DESIGNS:
        rng = np.random.default_rng(99)
        qa, qb = case_rates(
            rng, CaseModel(P_OLD, P_OLD - 0.1, ICC), (args.check, cases), these=False
        )
        xa, xb = runs(rng, qa, qb, repeats)
        wrong = check_against_gate(xa, xb, 0.1)
        for margin in MARGINS:
            p_edge = P_OLD - margin
            cells = []
            for rule, these, p_new in (
                ("these", True, p_edge),
                ("like", False, p_edge),
                ("these", False, p_edge),
                ("like", False, P_OLD),
                ("these", False, 0.7),
                ("like", False, 0.7),
            ):
                seed += 1
                cells.append(
                    _ci(*rate(p_new, margin, cases, repeats, n, seed, rule=rule, these=these))
                )
            print(
                f"{f'{cases} x {repeats}':<13} {margin:>6g}  {cells[0]:<20} {cells[1]:<22} "
                f"{cells[2]:<20} {cells[3]:<20} {cells[4]:<18} {cells[5]:<18}"
            )
        print(
            f"  (the public gate agreed on {2 * args.check - wrong} of {2 * args.check} verdicts)"
        )


if __name__ == "__main__":
    main()
