"""evalstats review: a person's verdicts on a run's samples."""

from __future__ import annotations

import argparse

from ._options import add_subset, state_selection, subset

EXAMPLES = (
    "evalstats review results.jsonl --out reviews.jsonl",
    "evalstats review results.jsonl --out reviews.jsonl --blind --sample 20 --seed 7",
    "evalstats review results.jsonl --out reviews.jsonl --tag orders --variant new",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a results file (JSONL) written by run")
    p.add_argument(
        "--out",
        required=True,
        metavar="REVIEWS.jsonl",
        help="the reviews file: created if new, continued if it exists (reviewed "
        "samples are skipped)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="start the reviews over: replace an existing REVIEWS.jsonl by an empty one, in "
        "one step (never while another review session holds it)",
    )
    p.add_argument("--reviewer", metavar="NAME", help="recorded with each review")
    p.add_argument(
        "--blind",
        action="store_true",
        help="hide variant names and what each variant added to the prompt (the case's own "
        "text is shown), and shuffle the samples (by --seed)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the --blind order and of --sample (0)"
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="review a random sample: N (case, repeat) pairs, each variant's answer, drawn "
        "with --seed; report --reviews then corrects the pass rates by it (PPI++)",
    )

    add_subset(p)


def run(args: argparse.Namespace) -> int:
    from ..presenting._review import review
    from ..reading._source import RunSource

    cases = variants = None
    part = subset(args)
    # The run is counted before the reviews file is opened: a sample the
    # manifest does not plan is refused here, as report and gate refuse it.
    source = RunSource.open(args.file, subset=part)
    source.tally()
    if part is not None:
        source.results()
        state_selection(source)
        cases, variants = list(source.selected.cases), list(source.selected.variants)
    review(
        args.file,
        args.out,
        reviewer=args.reviewer,
        cases=cases,
        variants=variants,
        blind=args.blind,
        seed=args.seed,
        sample=args.sample,
        force=args.force,
    )
    return 0
