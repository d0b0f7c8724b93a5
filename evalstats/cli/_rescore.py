"""evalstats rescore: a run's stored answers scored by a suite's current checks."""

from __future__ import annotations

import argparse

from ._options import add_force, show_result

EXAMPLES = ("evalstats rescore results.jsonl --suite cases/example.yaml --out rescored.jsonl",)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a results file (JSONL) written by run")
    p.add_argument(
        "--suite",
        required=True,
        metavar="SUITE",
        help="the suite with the new checks (same cases and prompts as the run)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the new results file to create")
    add_force(p, "--out FILE (it may be FILE itself)")
    p.add_argument(
        "--judge",
        metavar="SPEC",
        help="the judge of the suite's judged_by checks, as for run (the stored answers are "
        "judged again; recorded in the new manifest)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run(args: argparse.Namespace) -> int:
    from ..reading._rescore import rescore

    outcome = rescore(args.file, args.suite, out=args.out, judge=args.judge, force=args.force)
    show_result(outcome, args)
    return 0
