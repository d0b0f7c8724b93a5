"""How often a comparison of several identical variants finds a difference.

Each simulated run has k identical variants (3 or 5): every case has the same
pass rate under each, drawn from a Beta with mean 0.7 and icc 0.3, and each
variant runs each case 5 times on a paired schedule, with 10, 40 or 150
cases. The variants are compared as :func:`evalstats.deciding._several.compare_variants`
(the ``compare --baseline`` / ``--all-pairs`` command and the report's ranking)
compares them: with a baseline (k - 1 comparisons) and all pairs (k (k - 1) / 2).
It prints the share of runs in which some pair is called better or worse (the
family-wise error rate of the verdicts, two-sided), with its 95% Monte-Carlo
(Wilson) interval, for Holm's adjustment (the default), Shaffer's and none.

About cases like these (the default from 5 cases; ``--about cases-like-these``) each pair's
p-value is the clustered test that agrees with its interval
(:func:`evalstats.stats._clustered_pvalues.case_means_pvalues`, the very function
``compare_variants`` judges by: the betting capital's p-value, at every
number of cases). About these cases (``--about
trials``) it is the paired score test on all the pairs of runs (Tango's, with
a quarter-pair continuity correction: the p-value of ``compare``'s verdict
about these cases).

Goal: at most 5% with Holm (and Shaffer) about cases like these, at every
size; without adjustment the rate grows with the number of comparisons.
tests/test_multiple_scope.py checks that this simulator judges as
compare_variants does, and asserts the goal at reduced size.

Measured (20,000 runs a row): about cases like these, Holm and Shaffer at
most 0.58% (0.49% to 0.70%, 3 variants against a baseline at 150 cases),
0.0% at 10 and 40 cases; unadjusted up to 5.29% (4.99% to 5.61%, all pairs
of 5 at 150 cases). About these cases at 10 cases (the paired score test):
Holm at most 3.67% (3.41% to 3.93%, 3 variants against a baseline),
unadjusted up to 24.80% (24.21% to 25.41%, all pairs of 5); with the exact
McNemar test it replaced, 2.44% and 18.10%.

Run: python simulations/many_variants.py [--experiments 20000]  (about half a minute)
"""

from __future__ import annotations

import argparse

import numpy as np

from evalstats.deciding._several import _adjust
from evalstats.stats._casemodel import CaseModel
from evalstats.stats._clustered_pvalues import case_means_pvalues
from evalstats.stats._intervals import proportion_ci
from evalstats.stats._tango import paired_diff_pvalue

RUNS, ICC, RATE, LEVEL = 5, 0.3, 0.7, 0.95
ADJUST = ("holm", "shaffer", "none")
MODES = ("baseline", "all pairs")


def draw(rng: np.random.Generator, n: int, k: int, cases: int, runs: int = RUNS) -> np.ndarray:
    """Outcomes of n runs of k identical variants: shape (n, k, cases, runs), booleans."""
    rates, _ = CaseModel(RATE, RATE, ICC).draw(rng, (n, 1, cases, 1))
    return rng.random((n, k, cases, runs)) < rates


def pairs_of(k: int, mode: str) -> list[tuple[int, int]]:
    """The (a, b) variant indices compared, in compare_variants' order."""
    if mode == "baseline":
        return [(0, b) for b in range(1, k)]
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def raw_pvalues(outcomes: np.ndarray, pairs: list[tuple[int, int]], about: str) -> np.ndarray:
    """Each pair's unadjusted p-value, shape (n, pairs), as compare_variants computes it."""
    x = outcomes.astype(float)
    out = []
    for a, b in pairs:
        if about == "cases_like_these":
            out.append(case_means_pvalues((x[:, b] - x[:, a]).mean(axis=-1), level=LEVEL))
        else:
            only_a = (outcomes[:, a] & ~outcomes[:, b]).sum(axis=(1, 2))
            only_b = (~outcomes[:, a] & outcomes[:, b]).sum(axis=(1, 2))
            pairs = outcomes.shape[2] * outcomes.shape[3]  # the concordant ones enter as a count
            both = pairs - only_a - only_b
            out.append(paired_diff_pvalue(both, only_a, only_b, 0 * both, method="tango_cc"))
    return np.stack(out, axis=-1)


def any_called(p: np.ndarray, adjust: str, k: int, mode: str) -> np.ndarray:
    """Per run: whether some pair's adjusted p-value is below 1 - LEVEL."""
    adjusted = np.array([_adjust(list(row), adjust, k, mode == "all pairs") for row in p])
    return (adjusted < 1.0 - LEVEL).any(axis=-1)


def share(count: int, n: int) -> str:
    """count / n in percent with its 95% Wilson interval, to 0.01 point."""
    ci = proportion_ci(count, n)
    return f"{100 * ci.estimate:.2f}% ({100 * ci.low:.2f}% to {100 * ci.high:.2f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    n = args.experiments
    rng = np.random.default_rng(args.seed)
    print(
        f"k identical variants (case rates mean {RATE}, icc {ICC}), {RUNS} runs per case, paired; "
        f"{n} runs per row; share of runs calling some pair better or worse (two-sided, "
        f"level {LEVEL}), 95% Monte-Carlo intervals"
    )
    print(
        f"{'about':<17} {'cases':>5} {'k':>2} {'mode':<9} {'Holm':<22} {'Shaffer':<22} {'none':<22}"
    )
    for about, sizes in (("cases_like_these", (10, 40, 150)), ("these_cases", (10,))):
        words = "cases like these" if about == "cases_like_these" else "these cases"
        for cases in sizes:
            for k in (3, 5):
                outcomes = draw(rng, n, k, cases)
                for mode in MODES:
                    p = raw_pvalues(outcomes, pairs_of(k, mode), about)
                    cells = [share(int(any_called(p, adj, k, mode).sum()), n) for adj in ADJUST]
                    print(
                        f"{words:<17} {cases:>5} {k:>2} {mode:<9} "
                        f"{cells[0]:<22} {cells[1]:<22} {cells[2]:<22}"
                    )


if __name__ == "__main__":
    main()
