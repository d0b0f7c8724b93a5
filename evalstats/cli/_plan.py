"""evalstats plan: cases and repeats a paired comparison needs."""

from __future__ import annotations

import argparse

from ._options import (
    UsageError,
    add_level_and_json,
    add_planned_for,
    add_sequential,
    add_source_options,
    add_subset,
    load_run,
    planned_rates,
    show_result,
    subset,
)
from ._score_plan import add_score_model, check_cost, show_plan, wants_scores

EXAMPLES = (
    "evalstats plan --pa 0.7 --pb 0.8 --icc 0.2",
    "evalstats plan --pa 0.7 --pb 0.8 --icc 0.2 --cases 40 --cost-per-call 0.002",
    "evalstats plan --pa 0.7 --pb 0.9 --icc 0 --cases 4 --repeats 23 --sequential",
    "evalstats plan --pa 0.7 --pb 0.9 --icc 0 --cases 4 --repeats 23 --sequential --batch"
    " --batch-turnaround 1h",
    "evalstats plan --from pilot.jsonl --pb +0.1 --repeats 3",
    "evalstats plan --from pilot.jsonl --pb +0.1 --tag orders --variant old --variant new",
    "evalstats plan --score-a 0.6 --score-b 0.7 --between 0.15 --within 0.1 --cases 40",
    "evalstats plan --from pilot.jsonl --score-b +0.05 --repeats 3",
    "evalstats plan --from pilot.jsonl --score-b observed --repeats 2 --certainty 0.8",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pa",
        type=float,
        help="mean pass rate of A (with --from: fixes it; else the pilot's, uncertain)",
    )
    p.add_argument(
        "--pb",
        metavar="RATE|+GAIN|observed",
        help="what B should reach: a mean pass rate (0.9), a gain over A (+0.1: ten points "
        "above A, whatever A's rate), or, with --from, observed (the pilot's own B rate, "
        "with its uncertainty); required with --from",
    )
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--icc", type=float, help="intra-case correlation: share of variance between cases"
    )
    how.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="plan from a pilot run, with what it leaves uncertain about A's rate and the "
        "icc (needs --pb): a results file, or another tool's log (see evalstats import)",
    )
    add_score_model(p, how)
    p.add_argument("--cases", type=int, help="the cases you have")
    p.add_argument("--repeats", type=int, help="the runs per case and variant you can afford")
    p.add_argument(
        "--spread",
        type=float,
        help="case-by-variant spread on the logit scale (0; with --from, fitted)",
    )
    p.add_argument("--power", type=float, default=0.8, help="target power (0.8)")
    p.add_argument(
        "--certainty",
        type=float,
        help="with --from: the probability, over what the pilot leaves uncertain, with "
        "which the design should reach the target power (0.8; with a scored pilot and "
        "--score-b, only when given: else the design is sized for the model as fitted)",
    )
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
    p.add_argument(
        "--batch",
        action="store_true",
        help="with --cost-per-call: the calls go through a provider's batch API (run --batch), "
        "at half the price",
    )
    p.add_argument(
        "--batch-cost-per-call",
        type=float,
        metavar="DOLLARS",
        help="with --cost-per-call: what one call costs through the provider's batch API, "
        "when it bills other than half (implies --batch)",
    )
    add_sequential(p, "--repeats is the budget of runs per case", simulation=False)
    add_planned_for(p, "with --sequential and --icc 0; default --pa,--pb; none: no planned effect")
    add_sequential_batch(p)
    add_level_and_json(p)
    add_subset(p)  # of the pilot (--from)
    add_source_options(p)


def run(args: argparse.Namespace) -> int:
    if wants_scores(args):
        from ._score_plan import run_plan

        return run_plan(args)
    from ..planning._power import case_model_from_results, plan

    check_cost(args, sequential=True)
    turnaround = _batch_turnaround(args)
    if args.sequential:
        from ..deciding._sequential import sequential_plan

        if args.from_file or args.cases is None or args.repeats is None:
            raise UsageError(
                "evalstats plan: --sequential needs --pa, --pb, --icc, --cases and --repeats "
                "(the budget of runs per case)"
            )
        if args.pa is None or args.pb is None:
            raise UsageError("evalstats plan: give --pa and --pb")
        p_b = _rate_of_b(args.pb, args.pa)
        spread = 0.0 if args.spread is None else args.spread
        clustered = args.icc != 0 or spread != 0
        planned_for = planned_rates(args.planned_for, None if clustered else (args.pa, p_b))
        planned = sequential_plan(
            args.pa,
            p_b,
            args.repeats,
            cases=args.cases,
            icc=args.icc,
            spread=spread,
            level=args.level,
            experiments=args.experiments,
            seed=args.seed,
            planned_for=planned_for,
            looks="round",  # as run --until-decided looks
        )
        if args.batch:
            import dataclasses

            planned = dataclasses.replace(planned, batched=True, turnaround_s=turnaround)
        show_result(planned, args)
        return 0
    if args.planned_for is not None:
        raise UsageError("evalstats plan: --planned-for goes with --sequential")
    if subset(args) is not None and not args.from_file:
        raise UsageError("evalstats plan: --case, --tag and --variant choose part of --from FILE")
    pilot = source = None
    if args.certainty is not None and not args.from_file:
        raise UsageError("evalstats plan: --certainty goes with --from (a pilot run)")
    if args.from_file:
        if args.pb is None:
            raise UsageError(
                "evalstats plan: --from plans for what B should reach, never the pilot's own "
                "gain unless asked: give --pb (a rate such as 0.9, a gain over A such as "
                "+0.1, or observed)"
            )
        # One evalstats results file is counted as it is read; another tool's log is read.
        source = load_run([args.from_file], args)
        # --variant names A and B in the order given; else the pilot's first two.
        pilot = case_model_from_results(source, variants=args.variant)
    elif args.pa is None or args.pb is None:
        raise UsageError("evalstats plan: give --pa and --pb (or --from a pilot run)")
    else:
        _rate_of_b(args.pb, args.pa)  # "observed" is refused here, in the command's words
    result = plan(
        args.pa,
        args.pb,
        icc=args.icc,
        cases=args.cases,
        repeats=args.repeats,
        power=args.power,
        level=args.level,
        spread=args.spread,
        pilot=pilot,
        certainty=0.8 if args.certainty is None else args.certainty,
        simulate=not args.approximate,
        experiments=args.experiments,
        seed=args.seed,
    )
    return show_plan(result, args, source)


def add_sequential_batch(p: argparse.ArgumentParser) -> None:
    """``--batch-turnaround``: with --sequential --batch, a batch's expected turnaround."""
    p.add_argument(
        "--batch-turnaround",
        metavar="DURATION",
        help="with --sequential --batch: how long a batch takes to come back (such as 1h, "
        "30m, 90s, 2d; a number is seconds): the plan states the expected wall time of "
        "the rounds to a verdict",
    )


_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def _batch_turnaround(args: argparse.Namespace) -> float | None:
    """--batch-turnaround in seconds, checked: with --sequential --batch, positive."""
    text = args.batch_turnaround
    if text is None:
        return None
    if not (args.sequential and args.batch):
        raise UsageError("evalstats plan: --batch-turnaround goes with --sequential --batch")
    import math
    import re

    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|m|min|h|d)?\s*", text)
    seconds = float(found.group(1)) * _UNITS[found.group(2) or "s"] if found else math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise UsageError(
            f"evalstats plan: --batch-turnaround={text!r} must be a positive duration such as "
            "1h, 30m, 90s or 2d"
        )
    return seconds


def _rate_of_b(text: str, p_a: float) -> float:
    """--pb as B's rate, given A's: a rate, or a gain over A (+0.1)."""
    from ..planning._pilot import wanted

    want = wanted(text, name="--pb")
    if want.kind == "observed":
        raise UsageError("evalstats plan: --pb observed goes with --from (a pilot run)")
    return want.rate(p_a)
