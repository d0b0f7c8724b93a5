"""evalstats import: another tool's log written as an evalstats results file."""

from __future__ import annotations

import argparse
import sys

from .._terminal import visible
from ._options import add_force, add_source_options, add_subset, load_run, state_selection

EXAMPLES = (
    "evalstats import inspect-log.eval --out results.jsonl",
    "evalstats import table.csv --columns case=item,variant=prompt --out results.jsonl",
    "evalstats import inspect-log.eval --case 'order*' --out orders.jsonl",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="an Inspect AI log (.eval, .json), a promptfoo results.json, an lm-eval "
        "samples_*.jsonl, or a CSV/Parquet table; several runs of the same task are joined",
    )
    p.add_argument("--out", required=True, metavar="RESULTS.jsonl", help="the file to create")
    add_force(p, "--out RESULTS.jsonl")
    add_subset(p)
    add_source_options(p)


def run(args: argparse.Namespace) -> int:
    from .._files import refuse_existing
    from ..errors import InvalidArgument, ResultsFileError
    from ..reading._logs import detect_format, write_results
    from ._options import subset

    narrowed = subset(args) is not None
    for path in args.files:
        if narrowed:
            break  # part of an evalstats run, written as its own file, is what was asked
        if (getattr(args, "format", None) or detect_format(path)) in ("evalstats", "jsonl"):
            raise InvalidArgument(
                f"{path}: is already an evalstats results file; give it to report, compare "
                "or gate as it is (evalstats merge joins two runs; --case, --tag or --variant "
                "with import writes part of it)"
            )
    refuse_existing(args.out, force=args.force, error=ResultsFileError)  # before reading
    source = load_run(args.files, args)
    results = source.results()
    write_results(results, args.out, force=args.force)
    state_selection(source)
    cases = len({s["case"] for s in results.samples})
    print(
        f"wrote {args.out}: {len(results.samples)} samples, {cases} cases, variants "
        + ", ".join(results.variants())
    )
    for warning in results.warnings:
        print(visible(f"evalstats: {warning}", keep=""), file=sys.stderr)
    return 0
