"""evalstats merge: two runs of the same suite joined."""

from __future__ import annotations

import argparse

from ._options import add_force, show_result

EXAMPLES = ("evalstats merge monday.jsonl tuesday.jsonl --out both.jsonl",)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("first", metavar="FIRST", help="a results file written by run")
    p.add_argument(
        "second",
        metavar="SECOND",
        help="a run of the same suite and variants (another seed); its repeats follow FIRST's",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the merged results file to create")
    add_force(p, "--out FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run(args: argparse.Namespace) -> int:
    from ..reading._merge import merge_runs

    show_result(merge_runs(args.first, args.second, out=args.out, force=args.force), args)
    return 0
