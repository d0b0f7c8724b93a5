"""evalstats plan: cases and repeats a paired comparison needs."""

from __future__ import annotations

import argparse

from ._options import (
    UsageError,
    add_level_and_json,
    add_planned_for,
    add_sequential,
    add_source_options,
    load_run,
    planned_rates,
    print_json,
    show_result,
)

EXAMPLES = (
    "evalstats plan --pa 0.7 --pb 0.8 --icc 0.2",
    "evalstats plan --pa 0.7 --pb 0.8 --icc 0.2 --cases 40 --cost-per-call 0.002",
    "evalstats plan --pa 0.7 --pb 0.9 --icc 0 --cases 4 --repeats 23 --sequential",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pa", type=float, help="mean pass rate of A (from --from if omitted)")
    p.add_argument("--pb", type=float, help="mean pass rate of B to detect")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--icc", type=float, help="intra-case correlation: share of variance between cases"
    )
    how.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="fit icc and spread (and rates) from a pilot run: a results file, or "
        "another tool's log (see evalstats import)",
    )
    p.add_argument("--cases", type=int, help="the cases you have")
    p.add_argument("--repeats", type=int, help="the runs per case and variant you can afford")
    p.add_argument(
        "--spread",
        type=float,
        default=0.0,
        help="case-by-variant spread on the logit scale (0; with --from, fitted)",
    )
    p.add_argument("--power", type=float, default=0.8, help="target power (0.8)")
    p.add_argument(
        "--experiments",
        type=int,
        default=8000,
        help="simulated experiments per design (8000)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation (0)")
    p.add_argument(
        "--approximate",
        action="store_true",
        help="plan by the normal approximation alone, without simulating",
    )
    p.add_argument(
        "--cost-per-call",
        type=float,
        metavar="DOLLARS",
        help="what one sample costs: also state the design's cost (cases x repeats x "
        "variants x this)",
    )
    add_sequential(p, "--repeats is the budget of runs per case", simulation=False)
    add_planned_for(p, "with --sequential and --icc 0; default --pa,--pb; none: no planned effect")
    add_level_and_json(p)
    add_source_options(p)


def run(args: argparse.Namespace) -> int:
    from ..planning._power import case_model_from_results, plan

    if args.cost_per_call is not None:
        from ..planning._cost import design_cost

        design_cost(None, args.cost_per_call)  # a bad price is refused before planning
    if args.sequential:
        from ..deciding._sequential import sequential_plan

        if args.from_file or args.cases is None or args.repeats is None:
            raise UsageError(
                "evalstats plan: --sequential needs --pa, --pb, --icc, --cases and --repeats "
                "(the budget of runs per case)"
            )
        if args.pa is None or args.pb is None:
            raise UsageError("evalstats plan: give --pa and --pb")
        clustered = args.icc != 0 or args.spread != 0
        planned_for = planned_rates(args.planned_for, None if clustered else (args.pa, args.pb))
        planned = sequential_plan(
            args.pa,
            args.pb,
            args.repeats,
            cases=args.cases,
            icc=args.icc,
            spread=args.spread,
            level=args.level,
            experiments=args.experiments,
            seed=args.seed,
            planned_for=planned_for,
            looks="round",  # as run --until-decided looks
        )
        show_result(planned, args)
        return 0
    if args.planned_for is not None:
        raise UsageError("evalstats plan: --planned-for goes with --sequential")
    model = None
    if args.from_file:
        # One evalstats results file is counted as it is read; another tool's log is read.
        model = case_model_from_results(load_run([args.from_file], args), p_a=args.pa, p_b=args.pb)
    elif args.pa is None or args.pb is None:
        raise UsageError("evalstats plan: give --pa and --pb (or --from a pilot run)")
    result = plan(
        args.pa,
        args.pb,
        icc=args.icc,
        cases=args.cases,
        repeats=args.repeats,
        power=args.power,
        level=args.level,
        spread=args.spread,
        model=model,
        simulate=not args.approximate,
        experiments=args.experiments,
        seed=args.seed,
    )
    if args.cost_per_call is None:
        show_result(result, args)
        return 0
    from ..planning._cost import design_cost

    cost = design_cost(result.calls, args.cost_per_call)
    if args.json:
        print_json({**result.to_dict(), "cost": cost.to_dict()}, "plan")
    else:
        print(f"{result}\n{cost}")
    return 0
