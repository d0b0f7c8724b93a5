"""The stand-in judge's error rates, per case, as a run sees them.

A run judges the same answer again on every repeat of a case (a stand-in shop
assistant has a few distinct replies per case). The stand-in judge
(``evalstats.demo._judge.make_judge``) must then err independently on every
call, at the rates it was given, on every case: a judge whose verdict is fixed
by the answer's text fails one correct reply every time and passes it never,
which is what the previous version did (16 of 47 correct answers failed at
sensitivity 0.9, 34%).

This script runs whole evals through the engine: ``cases`` cases, each answered
with the same good reply (or the same bad one) on every one of ``runs``
repeats, judged by ``judged_by`` and the stand-in judge at the set
sensitivity and specificity, and prints, per case, the share of good answers
passed and of bad answers failed, with its 95% Wilson interval (Monte Carlo
error), and how many cases' intervals miss the set rate (about 5% should).

Usage::

    python simulations/standin_judge.py [--cases 5] [--runs 2000] [--seed 0]

Measured (5 cases x 2,000 repeats, sensitivity 0.9, specificity 0.8, seed 0):
good answers passed 0.8895 to 0.9130 over the 5 cases (each Wilson interval
about +-0.013 wide on either side), bad answers failed 0.7865 to 0.8155; 0 of
the 10 per-case 95% intervals miss the set rate. ``tests/test_judge.py``
asserts the same at 2,000 calls per case, within 4 binomial standard errors.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path


def _run(good: bool, args: argparse.Namespace, folder: Path) -> dict[str, tuple[int, int]]:
    from evalstats.demo._judge import make_judge
    from evalstats.running._engine import run
    from evalstats.running._judge import judged_by
    from evalstats.running._suite import Case
    from evalstats.running._variants import Variant

    judge = make_judge(
        lambda answer: answer.endswith("good"),
        sensitivity=args.sensitivity,
        specificity=args.specificity,
        seed=args.seed,
    )
    check = judged_by(judge, "A good answer ends with 'good'.")
    cases = [Case(f"case {i}", f"Question {i}?", (check,)) for i in range(args.cases)]
    reply = "This reply is good" if good else "This reply is bad"
    out = folder / f"{'good' if good else 'bad'}.jsonl"
    run(
        cases,
        [Variant("v", lambda prompt: reply)],
        runs=args.runs,
        out=out,
        seed=args.seed,
        progress=False,
    )
    counts: dict[str, tuple[int, int]] = {}
    for line in out.read_text().splitlines():
        record = json.loads(line)
        if record["type"] != "sample":
            continue
        hit, n = counts.get(record["case"], (0, 0))
        status = record["checks"][0]["status"]
        right = status == "passed" if good else status == "failed"
        counts[record["case"]] = (hit + right, n + 1)
    return counts


def main() -> None:
    from evalstats.stats._intervals import proportion_ci

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=5)
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--sensitivity", type=float, default=0.9)
    p.add_argument("--specificity", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    missed = total = 0
    with tempfile.TemporaryDirectory() as folder:
        for good, rate, what in (
            (True, args.sensitivity, "sensitivity (good answers passed)"),
            (False, args.specificity, "specificity (bad answers failed)"),
        ):
            print(f"{what}, set {rate:g}:")
            for case, (hit, n) in _run(good, args, Path(folder)).items():
                ci = proportion_ci(hit, n, method="wilson")
                inside = ci.low <= rate <= ci.high
                missed += not inside
                total += 1
                print(
                    f"  {case}: {hit}/{n} = {hit / n:.4f}, 95% MC interval "
                    f"{ci.low:.4f} to {ci.high:.4f}{'' if inside else '  (misses the set rate)'}"
                )
    print(f"{missed} of {total} per-case intervals miss the set rate (about 5% expected)")


if __name__ == "__main__":
    main()
