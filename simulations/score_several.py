"""How often the mean scores of several identical variants are called different.

Each simulated run has 4 identical variants scored by a judge on 1 to 5: every
case has its own chances of each level (drawn from a Dirichlet with weights
1, 2, 3, 2, 1, so cases differ and the scores are discrete and lumpy), the
same under every variant, and each variant runs each case 3 times, at 10 or
30 cases. The three variants other than the baseline are compared with it as
``compare --baseline`` compares their mean scores
(:func:`evalstats.deciding._score_results.score_family`, the very function:
Holm's steps taken on the comparisons' intervals, or none), about these cases
and about cases like these. It prints the share of runs in which some pair is
called better or worse (the family-wise error rate of the verdicts,
two-sided) with its 95% Monte-Carlo (Wilson) interval.

Goal: at most 5% with Holm in every row; unadjusted, the rate may exceed what
one comparison allows. tests/test_score_views.py asserts the goal at reduced
size.

Measured (1,000 runs a row, seed 0, about 8 minutes on the shared 2-core machine):

=====================  ========================  ========================
row                    Holm                      unadjusted
=====================  ========================  ========================
these cases, 10 cases  0.0% (0.0% to 0.4%)       0.0% (0.0% to 0.4%)
these cases, 30 cases  0.1% (0.0% to 0.6%)       0.3% (0.1% to 0.9%)
cases like these, 10   0.0% (0.0% to 0.4%)       0.0% (0.0% to 0.4%)
cases like these, 30   0.0% (0.0% to 0.4%)       0.0% (0.0% to 0.4%)
=====================  ========================  ========================

The betting intervals the comparisons use are conservative on these lumpy
1-5 scores, so even unadjusted the family rarely errs here; Holm's steps
keep it at most 5% whatever the intervals, as long as each keeps its level.

Run: python simulations/score_several.py [--experiments 1000]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from evalstats.deciding._score_results import score_family
from evalstats.stats._intervals import proportion_ci

VARIANTS = ("base", "v1", "v2", "v3")
RUNS = 3
WEIGHTS = (1.0, 2.0, 3.0, 2.0, 1.0)


@dataclass
class _Run:
    """What score_family reads of a run: each variant's (case, repeat, score) and the cases."""

    rows: dict[str, list[tuple[str, int, float]]]
    cases: list[str]

    def scores(self, variant: str) -> list[tuple[str, int, float]]:
        return self.rows[variant]

    def case_ids(self) -> list[str]:
        return self.cases


def draw(rng: np.random.Generator, cases: int, runs: int = RUNS) -> _Run:
    """One run of identical variants: levels 1-5 drawn from each case's own chances."""
    chances = rng.dirichlet(WEIGHTS, size=cases)
    ids = [f"c{i}" for i in range(cases)]
    rows = {}
    for v in VARIANTS:
        levels = np.array([rng.choice(5, size=runs, p=p) for p in chances])  # 0..4
        rows[v] = [(ids[i], r, levels[i, r] / 4.0) for i in range(cases) for r in range(runs)]
    return _Run(rows, ids)


def family_errs(run: _Run, about: str, adjust: str) -> bool:
    """Whether some pair of the family is called better or worse."""
    wanted = [("base", v) for v in VARIANTS[1:]]
    fam = score_family(run, wanted, about=about, adjust=adjust)
    assert fam is not None
    return any(p.verdict != "cant_tell" for p in fam.pairs)


def rates(experiments: int, cases: int, about: str, seed: int = 0) -> dict[str, tuple[int, int]]:
    """``{adjust: (runs with an error, runs)}`` for Holm and none, on the same runs."""
    rng = np.random.default_rng(seed)
    errs = {"holm": 0, "none": 0}
    for _ in range(experiments):
        run = draw(rng, cases)
        for adjust in errs:
            errs[adjust] += family_errs(run, about, adjust)
    return {a: (k, experiments) for a, k in errs.items()}


def _share(k: int, n: int) -> str:
    ci = proportion_ci(k, n)
    return f"{100 * k / n:.1f}% ({100 * ci.low:.1f}% to {100 * ci.high:.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--experiments", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{args.experiments} runs a row; family-wise false verdicts, 95% Wilson MC interval")
    for about in ("these_cases", "cases_like_these"):
        for cases in (10, 30):
            found = rates(args.experiments, cases, about, seed=args.seed)
            print(
                f"{about:<17} {cases:>3} cases  Holm {_share(*found['holm']):<24} "
                f"unadjusted {_share(*found['none'])}",
                flush=True,
            )


if __name__ == "__main__":
    main()
