"""evalstats power: exact power of each rule at given trial counts."""

from __future__ import annotations

import argparse

from ._options import (
    UsageError,
    add_force,
    add_planned_for,
    add_sequential,
    planned_rates,
    show_all,
    show_result,
)
from ._score_plan import add_power_design, add_score_model, refuse_scores_only, wants_scores

EXAMPLES = (
    "evalstats power --pa 0.7 --pb 0.9 --trials 20 40 80",
    "evalstats power --pa 0.7 --pb 0.9 --trials 40 --method newcombe mcnemar --plot power.png",
    "evalstats power --pa 0.7 --pb 0.9 --trials 92 --sequential",
    "evalstats power --score-a 0.6 --score-b 0.7 --between 0.15 --within 0.1 --cases 20 40 "
    "--repeats 3",
)


def add(p: argparse.ArgumentParser) -> None:
    # Required unless the score options are given (checked in run).
    p.add_argument("--pa", type=float, help="true pass rate of A")
    p.add_argument("--pb", type=float, help="true pass rate of B")
    p.add_argument("--trials", type=int, nargs="+", help="trials per variant (one or more)")
    p.add_argument(
        "--method",
        nargs="+",
        default=["newcombe"],
        help="overlap, newcombe, ztest, mcnemar (newcombe)",
    )
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the power curves into FILE.png")
    add_force(p, "FILE.png")
    add_sequential(p, "each --trials value is the budget in pairs")
    add_planned_for(p, "with --sequential; default --pa,--pb; none: no planned effect")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    add_score_model(p)
    add_power_design(p)


def run(args: argparse.Namespace) -> int:
    if wants_scores(args):
        from ._score_plan import run_power

        return run_power(args)
    missing = [o for n, o in (("pa", "--pa"), ("pb", "--pb"), ("trials", "--trials"))
               if getattr(args, n) is None]  # fmt: skip
    if missing:
        raise UsageError(
            f"evalstats power: the following arguments are required: {', '.join(missing)}"
        )
    refuse_scores_only(args, "power")
    from ..planning._power import power_figure, power_table

    if args.sequential:
        from ..deciding._sequential import sequential_plan

        if args.plot:
            raise UsageError(
                "evalstats power: --plot draws fixed designs; drop it with --sequential"
            )
        planned_for = planned_rates(args.planned_for, (args.pa, args.pb))
        plans = [
            sequential_plan(
                args.pa,
                args.pb,
                budget,
                level=args.level,
                experiments=args.experiments,
                seed=args.seed,
                planned_for=planned_for,
            )
            for budget in args.trials
        ]
        show_all(plans, args)
        return 0
    if args.planned_for is not None:
        raise UsageError("evalstats power: --planned-for goes with --sequential")
    table = power_table(args.pa, args.pb, args.trials, methods=args.method, level=args.level)
    if args.plot:
        from .._files import refuse_existing
        from ..presenting._plots import _save

        refuse_existing(args.plot, force=args.force)  # before the work of drawing
        fig = power_figure(args.pa, args.pb, args.trials, methods=args.method, level=args.level)
        _save(fig, args.plot, force=args.force, dpi=120)
    show_result(table, args)
    return 0
