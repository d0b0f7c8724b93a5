"""evalstats merge: two runs of the same suite joined, or the shards of one run."""

from __future__ import annotations

import argparse

from ._options import UsageError, add_force, show_result

EXAMPLES = (
    "evalstats merge monday.jsonl tuesday.jsonl --out both.jsonl",
    "evalstats merge shard-1.jsonl shard-2.jsonl shard-3.jsonl shard-4.jsonl --out all.jsonl",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="two runs of the same suite and variants (the second with another seed; its "
        "repeats follow the first's), or every shard of one run (run --shard I/N), in any order",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the merged results file to create")
    add_force(p, "--out FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run(args: argparse.Namespace) -> int:
    from ..reading._merge import is_shard, merge_runs, merge_shards
    from ..results._file import read_results

    runs = [read_results(path) for path in args.files]
    if any(is_shard(r) for r in runs):
        show_result(merge_shards(runs, out=args.out, force=args.force), args)
    elif len(runs) == 2:
        show_result(merge_runs(runs[0], runs[1], out=args.out, force=args.force), args)
    else:
        raise UsageError(
            f"evalstats merge: {len(runs)} file{'s' * (len(runs) != 1)} given; merge two runs "
            "(FIRST SECOND), or every shard of one run"
        )
    return 0
