"""evalstats calibrate: a check measured against a person's verdicts."""

from __future__ import annotations

import argparse

from ._options import add_level_and_json, show_result

EXAMPLES = (
    "evalstats calibrate verdicts.csv",
    "evalstats calibrate verdicts.csv --observed 31/40 --min-sensitivity 0.9",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file",
        metavar="FILE",
        help="CSV or JSONL of paired verdicts, one answer per row: human (or person) "
        "and check (or judge) verdicts, optionally the answer",
    )
    p.add_argument(
        "--observed",
        metavar="K/N",
        help="a pass rate the check reported (K passes of N); also print it corrected "
        "for the check's errors",
    )
    for what in ("sensitivity", "specificity"):
        p.add_argument(
            f"--min-{what}",
            type=float,
            default=0.8,
            metavar="SHARE",
            help=f"'passed calibration' needs the lower end of the {what} interval to "
            "reach this (default 0.8)",
        )
    add_level_and_json(p)


def run(args: argparse.Namespace) -> int:
    from ..running._judge import calibrate_file

    report = calibrate_file(
        args.file,
        observed=args.observed,
        level=args.level,
        min_sensitivity=args.min_sensitivity,
        min_specificity=args.min_specificity,
    )
    show_result(report, args)
    return 0
