"""Per-case "clearly worse / better" flags: how often they find a real drop, and how often they lie.

A comparison flags a case from that case's own exact test (McNemar's on its
discordant pairs when A and B are paired by (case, repeat), Fisher's on its
2 x 2 table otherwise), adjusted for the number of cases. This script measures,
for the discrete Holm adjustment (the default), Tarone's and Holm's:

1. Power. Every case but one has the same pass rate under A and B; one case
   drops from 90% under A to 50% under B. The share of comparisons that flag
   that case as worse, among 10, 20 and 40 cases at 5, 10 and 20 repeats, with
   the unchanged cases (a) at 90% like the dropping one, (b) drawn from a Beta
   of mean 0.7 and icc 0.3 (the package's usual case model), (c) all at 50%,
   where every unchanged case has many discordant pairs and so counts fully.
2. False flags. A and B identical on every case (so any flag is false); the
   share of comparisons that flag any case (the family-wise error rate), for
   case rates from a Beta (mean 0.7, icc 0.3), uniform, all 50% and all 90%,
   at 10 to 100 cases and 5 to 20 repeats; beside the unadjusted tests
   (``adjust="none"``) and the rule of flagging a case whose own exploratory,
   unadjusted interval excludes 0.

Within a pair, A's and B's outcomes are independent draws at the case's rates.
Every share comes with its 95% Monte-Carlo (Wilson) interval. The flags are
computed as ``compare`` computes them (each case's exact p-value, the values
its test can attain, :func:`evalstats.stats._discrete.adjust_discrete`), and
the first comparisons of every setting are checked against ``compare`` itself.

Goal (issue 23): the drop flagged in at least 15% of comparisons at 10 repeats
and 45% at 20; any false flag in at most 5%.

Run: python simulations/case_flags.py [--experiments 4000]  (about 20 minutes)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalstats.stats._casemodel import CaseModel
from evalstats.stats._compare import adjust_pvalues, compare
from evalstats.stats._discrete import (
    _fisher_all,
    adjust_discrete,
    fisher_attainable,
    flag_power,
    mcnemar_attainable,
)
from evalstats.stats._intervals import diff_ci, paired_diff_ci, proportion_ci

LEVEL = 0.95
METHODS = ("discrete_holm", "tarone", "holm")
NAMES = {"discrete_holm": "discrete Holm", "tarone": "Tarone", "holm": "Holm", "none": "none"}
CHECKED = 20  # comparisons per setting also run through compare()
CASES = (10, 20, 40)
RUNS = (5, 10, 20)
NULL_SETTINGS = ((10, 5), (10, 10), (20, 10), (40, 10), (40, 20), (100, 5))  # (cases, runs)


def _beta(mean: float, icc: float):
    model = CaseModel(mean, mean, icc)
    return lambda rng, size: model.draw(rng, size)[0]


def _fixed(rate: float):
    return lambda rng, size: np.full(size, rate)


#: The unchanged cases of the power part.
OTHERS = {"at 90%": _fixed(0.9), "Beta(0.7, icc 0.3)": _beta(0.7, 0.3), "at 50%": _fixed(0.5)}
#: The case rates of the false-flag part (a Beta of icc 1/3 around 0.5 is uniform).
NULLS = {
    "Beta(0.7, icc 0.3)": _beta(0.7, 0.3),
    "uniform": _beta(0.5, 1 / 3),
    "at 50%": _fixed(0.5),
    "at 90%": _fixed(0.9),
}


class Tests:
    """Each case's exact test at ``runs`` repeats: p-values and attainable values, tabulated."""

    def __init__(self, runs: int, paired: bool) -> None:
        self.paired = paired
        if paired:
            # the p-value of a split with k = min(only_a, only_b), by discordant count d
            self.sets = [mcnemar_attainable(d) for d in range(runs + 1)]
            self.table = np.ones((runs + 1, runs + 1))
            for d, values in enumerate(self.sets):
                self.table[d, : values.size] = values
        else:
            # the p-value of a table with ka passes of A, by passes in all s
            self.sets = [fisher_attainable(runs, runs, s) for s in range(2 * runs + 1)]
            self.table = np.ones((2 * runs + 1, runs + 1))
            for s in range(2 * runs + 1):
                low = max(0, s - runs)
                p = _fisher_all(runs, runs, s)
                self.table[s, low : low + p.size] = p

    def __call__(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """P-values, and which attainable set each has, for outcomes of shape (..., cases, runs)."""
        if self.paired:
            only_a = np.count_nonzero(a & ~b, axis=-1)
            only_b = np.count_nonzero(b & ~a, axis=-1)
            key = only_a + only_b
            return self.table[key, np.minimum(only_a, only_b)], key
        ka = np.count_nonzero(a, axis=-1)
        key = ka + np.count_nonzero(b, axis=-1)
        return self.table[key, ka], key


def _flags(p: np.ndarray, key: np.ndarray, sign: np.ndarray, tests: Tests) -> dict:
    """Signed flags (+1 B better, -1 B worse, 0 none) of one comparison's cases, by adjustment."""
    sets = [tests.sets[k] for k in key.tolist()]
    alpha = 1.0 - LEVEL
    out = {}
    for method in METHODS:
        if method == "holm":
            adjusted = adjust_pvalues(p, method=method)
        else:
            adjusted = adjust_discrete(p, sets, method=method)
        out[method] = np.where(adjusted < alpha, sign, 0)
    out["none"] = np.where(p < alpha, sign, 0)
    return out


def _check(a: np.ndarray, b: np.ndarray, paired: bool, flags: dict) -> None:
    """compare() itself flags exactly these cases (its default, the discrete Holm)."""
    ra = {f"c{i}": list(x) for i, x in enumerate(a)}
    rb = {f"c{i}": list(x) for i, x in enumerate(b)}
    c = compare(ra, rb, paired=paired, about="these_cases", level=LEVEL)
    got = np.array([1 if r.better else -1 if r.worse else 0 for r in c.cases])
    assert (got == flags["discrete_holm"]).all(), "compare() flags differ from the simulation's"


def _interval_apart(a: np.ndarray, b: np.ndarray, paired: bool) -> np.ndarray:
    """Per comparison: whether some case's own (exploratory) Newcombe interval excludes 0."""
    if paired:
        both = (a & b).sum(axis=-1)
        only_a = (a & ~b).sum(axis=-1)
        only_b = (b & ~a).sum(axis=-1)
        neither = a.shape[-1] - both - only_a - only_b
        d = paired_diff_ci(both, only_a, only_b, neither, level=LEVEL)
    else:
        n = a.shape[-1]
        d = diff_ci(a.sum(axis=-1), n, b.sum(axis=-1), n, level=LEVEL)
    return np.asarray(((np.asarray(d.low) > 0) | (np.asarray(d.high) < 0)).any(axis=-1))


def _run(rng, rates_a: np.ndarray, rates_b: np.ndarray, runs: int, paired: bool):
    """Outcomes and flags of ``len(rates_a)`` comparisons; the first :data:`CHECKED` checked."""
    n, cases = rates_a.shape
    a = rng.random((n, cases, runs)) < rates_a[..., None]
    b = rng.random((n, cases, runs)) < rates_b[..., None]
    tests = Tests(runs, paired)
    p, key = tests(a, b)
    sign = np.sign(b.sum(axis=-1) - a.sum(axis=-1))
    flags = []
    for e in range(n):
        f = _flags(p[e], key[e], sign[e], tests)
        if e < CHECKED:
            _check(a[e], b[e], paired, f)
        flags.append(f)
    return a, b, flags


def _share(hits: int, n: int) -> str:
    ci = proportion_ci(hits, n)
    return f"{100 * hits / n:5.1f}% ({100 * float(ci.low):4.1f} to {100 * float(ci.high):4.1f})"


def power(experiments: int) -> dict:
    print(
        f"1. Power: one case drops from 90% (A) to 50% (B), the others unchanged; share of "
        f"{experiments} comparisons that flag it as worse (95% Monte-Carlo intervals)"
    )
    for paired in (True, False):
        alone = [100 * flag_power(r, 1 - LEVEL, paired=paired, rates=(0.9, 0.5)) for r in RUNS]
        print(
            f"(the most any adjustment can reach, {'paired' if paired else 'unpaired'}: the "
            f"case's own test alone flags it in "
            + ", ".join(f"{x:.1f}%" for x in alone)
            + f" at {', '.join(map(str, RUNS))} repeats, exactly)"
        )
    head = "  ".join(f"{NAMES[m]:<22}" for m in METHODS)
    print(f"{'others':<19} {'design':<8} {'cases':>5} {'runs':>4}  {head}")
    found = {}
    for index, (label, draw) in enumerate(OTHERS.items()):
        for paired in (True, False):
            design = "paired" if paired else "unpaired"
            for cases in CASES:
                for runs in RUNS:
                    rng = np.random.default_rng([cases, runs, int(paired), index])
                    rates = draw(rng, (experiments, cases))
                    ra, rb = rates.copy(), rates.copy()
                    ra[:, 0], rb[:, 0] = 0.9, 0.5
                    _, _, flags = _run(rng, ra, rb, runs, paired)
                    hits = {m: sum(int(f[m][0] == -1) for f in flags) for m in METHODS}
                    found[(label, paired, cases, runs)] = hits["discrete_holm"] / experiments
                    row = "  ".join(f"{_share(hits[m], experiments):<22}" for m in METHODS)
                    print(f"{label:<19} {design:<8} {cases:>5} {runs:>4}  {row}", flush=True)
    return found


def false_flags(experiments: int) -> dict:
    print()
    print(
        f"2. False flags: A = B on every case; share of {experiments} comparisons that flag "
        "any case (95% Monte-Carlo intervals)"
    )
    cols = [*METHODS, "none"]
    head = "  ".join(f"{NAMES[m]:<22}" for m in cols)
    print(f"{'case rates':<19} {'design':<8} {'cases':>5} {'runs':>4}  {head}  interval excl. 0")
    found = {}
    for index, (label, draw) in enumerate(NULLS.items()):
        for paired in (True, False):
            design = "paired" if paired else "unpaired"
            for cases, runs in NULL_SETTINGS:
                rng = np.random.default_rng([cases, runs, int(paired), index, 7])
                rates = draw(rng, (experiments, cases))
                a, b, flags = _run(rng, rates, rates, runs, paired)
                hits = {m: sum(int(f[m].any()) for f in flags) for m in cols}
                apart = int(_interval_apart(a, b, paired).sum())
                found[(label, paired, cases, runs)] = hits["discrete_holm"] / experiments
                row = "  ".join(f"{_share(hits[m], experiments):<22}" for m in cols)
                print(
                    f"{label:<19} {design:<8} {cases:>5} {runs:>4}  {row}  "
                    f"{_share(apart, experiments)}",
                    flush=True,
                )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=4000)
    args = parser.parse_args()
    n = args.experiments
    start = time.perf_counter()
    found = power(n)
    errors = false_flags(n)
    print()
    for others in OTHERS:
        for paired in (True, False):
            at10 = [found[(others, paired, c, 10)] for c in CASES]
            at20 = [found[(others, paired, c, 20)] for c in CASES]
            print(
                f"discrete Holm, {'paired' if paired else 'unpaired'}, others {others}: the drop "
                f"flagged in {100 * min(at10):.1f}-{100 * max(at10):.1f}% at 10 repeats "
                f"(goal: 15%), {100 * min(at20):.1f}-{100 * max(at20):.1f}% at 20 (goal: 45%)"
            )
    worst = max(errors, key=lambda k: errors[k])
    print(
        f"largest share of comparisons with a false flag (discrete Holm): "
        f"{_share(round(errors[worst] * n), n)} (goal: at most 5%), at {worst}"
    )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
