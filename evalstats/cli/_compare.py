"""evalstats compare: two variants of a run compared (or several, or sequentially)."""

from __future__ import annotations

import argparse
import sys

from ._options import (
    FILE_HELP,
    UsageError,
    add_about,
    add_force,
    add_level_and_json,
    add_planned_for,
    add_source_options,
    add_subset,
    load_run,
    planned_rates,
    print_json,
    show_result,
    state_selection,
)

EXAMPLES = (
    "evalstats compare results.jsonl --a old --b new",
    "evalstats compare results.jsonl --a old --b new --about cases-like-these",
    "evalstats compare results.jsonl --a old --b new --sequential --plot looks.png",
    "evalstats compare graded.jsonl --a old --b new --sequential --on score",
    "evalstats compare results.jsonl --baseline old",
    "evalstats compare results.jsonl --a old --b new --case 'order*'",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help=FILE_HELP + "; two or more runs of one task (such as two Inspect logs, one "
        "per model) are joined and compared paired by (case, repeat)",
    )
    p.add_argument(
        "--a",
        metavar="NAME",
        help="the variant to compare against (with neither --a nor --b, a run of two "
        "variants compares the second with the first)",
    )
    p.add_argument("--b", metavar="NAME", help="the variant compared")
    several = p.add_mutually_exclusive_group()
    several.add_argument(
        "--baseline",
        metavar="NAME",
        help="compare every other variant with NAME (adjusted for multiplicity)",
    )
    several.add_argument(
        "--all-pairs",
        action="store_true",
        help="compare every pair of variants (adjusted for multiplicity)",
    )
    p.add_argument(
        "--adjust",
        default="holm",
        metavar="holm|shaffer|none",
        help="with --baseline or --all-pairs: how p-values and verdicts are adjusted (holm)",
    )
    p.add_argument(
        "--method",
        help="mcnemar or clustered when paired (mcnemar); "
        "newcombe, overlap or ztest as independent samples",
    )
    add_about(
        p,
        "the verdict",
        "default these-cases (cases-like-these when the suite is declared sampled: true and "
        "paired over at least 5 cases); the other claim is shown beside it",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="the anytime-valid comparison, valid however often the file was looked at, "
        "with its trajectory (a look after every round)",
    )
    p.add_argument(
        "--on",
        choices=("pass", "score"),
        default=None,
        help="with --sequential: what is compared, the pass rates (pass, the default) or, for "
        "a run whose samples carry scores, the mean scores (score: the anytime-valid betting "
        "comparison of the paired score differences)",
    )
    p.add_argument(
        "--plot", metavar="FILE.png", help="with --sequential: draw the trajectory into FILE.png"
    )
    add_force(p, "FILE.png")
    add_planned_for(p, "with --sequential; default: what the run recorded, else none")
    add_level_and_json(p)
    add_subset(p)
    add_source_options(p)


def run(args: argparse.Namespace) -> int:
    from ..deciding._compare_results import compare_results

    if args.sequential:
        from ..deciding._sequential import sequential_results

        if args.method is not None:
            raise UsageError("evalstats compare: --method is for the fixed-n compare; drop it")
        if args.a is None or args.b is None or args.baseline is not None or args.all_pairs:
            raise UsageError(
                "evalstats compare: --sequential compares two variants: give --a and --b"
            )
        if args.on == "score" and args.planned_for is not None:
            raise UsageError(
                "evalstats compare: --planned-for plans the pass-rate comparison; --on score "
                "goes without it"
            )
        if args.plot:
            from .._files import refuse_existing

            refuse_existing(args.plot, force=args.force)  # before the file is read
        source = load_run(args.files, args)
        if args.on == "score":
            from ..deciding._score_sequential import sequential_score_results

            seq = sequential_score_results(
                source, args.a, args.b, about=args.about or "these_cases", level=args.level
            )
        else:
            seq = sequential_results(
                source,
                args.a,
                args.b,
                about=args.about or "these_cases",
                level=args.level,
                planned_for=planned_rates(args.planned_for),
            )
        if args.plot:
            from ..presenting._plots import sequential_plot

            written = sequential_plot(seq, args.plot, force=args.force)
            print(f"evalstats: wrote {written}", file=sys.stderr)
        if args.json:
            print_json(seq.to_dict(), args.verb, source)
        else:
            state_selection(source)
            print(seq)
            print(seq.trajectory_text())
        return 0
    if args.plot or args.planned_for is not None:
        raise UsageError("evalstats compare: --plot and --planned-for go with --sequential")
    if args.on is not None:
        raise UsageError("evalstats compare: --on goes with --sequential")
    if args.force:
        raise UsageError("evalstats compare: --force goes with --sequential --plot FILE.png")
    several = args.baseline is not None or args.all_pairs
    if several and (args.a is not None or args.b is not None):
        raise UsageError("evalstats compare: give --a and --b, or --baseline, or --all-pairs")
    source = load_run(args.files, args)
    if several:
        from ..deciding._several import compare_variants

        many = compare_variants(
            source,
            baseline=args.baseline,
            all_pairs=args.all_pairs,
            adjust=args.adjust,
            method=args.method,
            level=args.level,
            about=args.about,
        )
        show_result(many, args, source)
        return 0
    a, b = args.a, args.b
    if (a is None) != (b is None):
        raise UsageError(
            "evalstats compare: give both --a and --b (or neither, for a run of two variants)"
        )
    if a is None:  # a run of exactly two variants (two joined logs, say) needs no names
        names = list(source.tally().variants())  # counted once, for names and comparison
        if len(names) != 2:
            raise UsageError(
                "evalstats compare: the run has variants "
                + (", ".join(repr(n) for n in names) or "none")
                + "; give --a and --b (two variants), --baseline NAME or --all-pairs"
            )
        a, b = names
    result = compare_results(source, a, b, method=args.method, level=args.level, about=args.about)
    show_result(result, args, source)
    return 0
