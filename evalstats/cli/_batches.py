"""evalstats batches: the provider batches a run --batch sent, and their states."""

from __future__ import annotations

import argparse

from ._options import show_result

EXAMPLES = (
    "evalstats batches results.jsonl",
    "evalstats batches results.jsonl --json",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a results file written by run --batch")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run(args: argparse.Namespace) -> int:
    from ..reading._batches import run_batches

    show_result(run_batches(args.file), args)
    return 0
