"""evalstats compare-runs: a newer run compared with an older one."""

from __future__ import annotations

import argparse

from ._options import FILE_HELP, add_level_and_json, add_source_options, load_run, show_result

EXAMPLES = (
    "evalstats compare-runs monday.jsonl tuesday.jsonl",
    "evalstats compare-runs old.jsonl new.jsonl --variant main --allow-different machine",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the earlier run: " + FILE_HELP)
    p.add_argument("new", metavar="NEW", help="the later run, in the same kind of file")
    p.add_argument(
        "--variant", metavar="NAME", help="compare this variant only (default: every variant)"
    )
    p.add_argument(
        "--allow-different",
        action="append",
        default=[],
        metavar="FIELD",
        help="compare anyway although FIELD differs (suite, model, judge, counting-method or "
        "machine; repeatable); the difference is printed above the numbers",
    )
    add_level_and_json(p)
    add_source_options(p)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the runs were compared, 1 when they are not comparable."""
    from ..deciding._previous_runs import compare_runs

    old, new = load_run([args.old], args), load_run([args.new], args)
    result = compare_runs(
        old,
        new,
        variant=args.variant,
        level=args.level,
        allow_different=args.allow_different,
    )
    show_result(result, args)
    return 0 if result.comparable else 1
