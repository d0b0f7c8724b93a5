"""evalstats report: pass rates with the right denominators."""

from __future__ import annotations

import argparse
import sys

from ._options import (
    FILE_HELP,
    add_about,
    add_force,
    add_source_options,
    add_subset,
    load_run,
    print_json,
    renamed,
    state_selection,
)

EXAMPLES = (
    "evalstats report results.jsonl",
    "evalstats report results.jsonl --plots figures --html report.html",
    "evalstats report inspect-log.eval --json",
    "evalstats report results.jsonl --tag orders --variant new",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help=FILE_HELP)
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument(
        "--plots", metavar="DIR", help="also write forest.png and paired-differences.png into DIR"
    )
    renamed(p, "--plot", "--plots DIR (report writes several figures)")
    p.add_argument(
        "--html",
        metavar="REPORT.html",
        help="also write the whole report as one self-contained HTML file (a new file, 0600): "
        "the verdicts first, every section of the text report, the samples with filters and "
        "a side-by-side view, the manifest in words",
    )
    add_force(p, "the figures in DIR and REPORT.html")
    p.add_argument(
        "--reviews",
        metavar="REVIEWS.jsonl",
        help="add reviewed task-success rates from a reviews file (evalstats review); "
        "for a random sample (review --sample), also pass rates corrected by it (PPI++)",
    )
    p.add_argument(
        "--prices",
        metavar="PRICES.yaml",
        help="model name to {input: ..., output: ...} in dollars per million tokens; "
        "a variant's own prices (price_in=, price_out=) win; a run --batch is priced at "
        "the model's batch_input and batch_output, or its batch share of the listed price "
        "(0 to 1), else at half",
    )
    add_about(
        p,
        "the ranking of three or more variants (Holm-adjusted)",
        "default these-cases (cases-like-these when the suite is declared sampled: true and "
        "paired over at least 5 cases); the other claim's ranking is shown beside it",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")
    add_subset(p)
    add_source_options(p)


def run(args: argparse.Namespace) -> int:
    prices = None
    if args.prices:
        from ..planning._cost import load_prices

        prices = load_prices(args.prices)  # refused before reading
    from .._validate import check_level
    from ..presenting._report import report

    check_level(args.level)  # a bad level is reported before the file is read
    _refuse_outputs(args)  # and an existing output before anything is drawn
    # One source, read once: an evalstats results file is counted as it is read,
    # unless the HTML page (which lists samples) wants the records, which are then
    # read once and counted; another tool's log is read into a Results. The
    # figures and the page show the report and comparisons made of it once.
    source = load_run([args.file], args, records=bool(args.html))
    result = report(source, level=args.level, reviews=args.reviews, about=args.about, prices=prices)
    if args.plots:
        from ..presenting._plots import report_plots

        for path in report_plots(source, args.plots, level=args.level, force=args.force):
            print(f"evalstats: wrote {path}", file=sys.stderr)
    if args.html:
        from ..presenting._html import html_report

        page = html_report(
            source,
            args.html,
            level=args.level,
            reviews=args.reviews,
            about=args.about,
            prices=prices,
            force=args.force,
        )
        print(f"evalstats: wrote {page}", file=sys.stderr)
    if args.json:
        print_json(result.to_dict(), "report", source)
    else:
        state_selection(source)
        print(result)
    return 0


def _refuse_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an HTML page that exists (without --force).

    The figures are checked by ``report_plots``, which draws them all before
    writing any; both are checked before either is written.
    """
    from .._files import refuse_existing
    from ..errors import ResultsFileError

    if args.html:
        refuse_existing(args.html, force=args.force, error=ResultsFileError)
