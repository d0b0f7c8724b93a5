"""evalstats gate: a release policy, exit status 1 when it fails."""

from __future__ import annotations

import argparse
from typing import Any

from ._options import (
    FILE_HELP,
    UsageError,
    add_about,
    add_level_and_json,
    add_source_options,
    add_subset,
    load_run,
    show_result,
)

EXAMPLES = (
    "evalstats gate results.jsonl --variant new --min-pass 0.9",
    "evalstats gate results.jsonl --variant new --no-regression-vs old --margin 0.05",
    "evalstats gate results.jsonl --variant new --min-pass 0.8 --on lower-bound"
    " --every-case-passes",
    "evalstats gate results.jsonl --variant new --min-score 0.75 --on lower-bound",
    "evalstats gate results.jsonl --variant new --no-regression-vs old --score-margin 0.05",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help=FILE_HELP)
    p.add_argument("--variant", required=True, metavar="NAME", help="the variant to gate")
    p.add_argument(
        "--min-pass",
        type=float,
        metavar="RATE",
        help="the least acceptable pass rate, such as 0.9",
    )
    p.add_argument(
        "--min-score",
        type=float,
        metavar="SCORE",
        help="the least acceptable mean score on the 0-1 scale, such as 0.75 (graded checks)",
    )
    p.add_argument(
        "--on",
        default="estimate",
        metavar="estimate|lower-bound",
        help="hold the estimate or the lower bound of its interval to --min-pass (estimate); "
        "the bound is for the claim --about makes",
    )
    p.add_argument(
        "--every-case-passes",
        action="store_true",
        help="also require every case's own pass rate to reach --min-pass",
    )
    p.add_argument(
        "--no-regression-vs",
        metavar="NAME",
        help="also require the evidence to show the variant not worse than NAME by more "
        "than --margin (can't tell fails)",
    )
    p.add_argument(
        "--margin",
        type=float,
        metavar="M",
        help="with --no-regression-vs, required: how much worse still counts as no "
        "regression, such as 0.02 for 2 points (0: no worse at all, which needs a lot of data)",
    )
    p.add_argument(
        "--score-margin",
        type=float,
        metavar="M",
        help="with --no-regression-vs: also (or, without --margin, only) require the mean "
        "score not to be lower than NAME's by more than M on the 0-1 score scale, such as "
        "0.05 (graded checks; one step of a 1-5 rubric is 0.25); --margin is for pass rates",
    )
    add_about(
        p,
        "--on lower-bound and --no-regression-vs",
        "default these-cases (cases-like-these when the suite is declared sampled: true and "
        "has at least 5 cases, paired for --no-regression-vs); the other claim is shown beside it",
    )
    p.add_argument(
        "--allow-unfinished",
        action="store_true",
        help="judge a results file whose run did not finish, as far as it went "
        "(refused by default)",
    )
    add_level_and_json(p)
    add_subset(p, variants=False)  # --variant names the variant gated
    add_source_options(p)


class _Both:
    """The gate's result and the score gates', shown together; passed when all pass.

    ``rate`` is the pass-rate gate's result, or None when only score gates
    were asked for; ``scores`` maps each score gate's JSON key to its result.
    """

    def __init__(self, rate: Any, scores: dict[str, Any]) -> None:
        self.rate, self.scores = rate, scores
        self.passed = (rate is None or rate.passed) and all(s.passed for s in scores.values())

    def __str__(self) -> str:
        parts = [] if self.rate is None else [str(self.rate)]
        return "\n".join(parts + [str(s) for s in self.scores.values()])

    def to_dict(self) -> dict[str, Any]:
        head = {} if self.rate is None else self.rate.to_dict()
        return {**head, "passed": self.passed, **{k: s.to_dict() for k, s in self.scores.items()}}


def run(args: argparse.Namespace) -> int:
    from ..deciding._gate import gate

    if args.score_margin is not None and args.no_regression_vs is None:
        raise UsageError("evalstats gate: --score-margin goes with --no-regression-vs NAME")
    source = load_run([args.file], args)
    scores: dict[str, Any] = {}
    if args.min_score is not None:
        from ..deciding._score_gate import score_gate

        scores["score_gate"] = score_gate(
            source,
            variant=args.variant,
            min_score=args.min_score,
            on=args.on,
            about=args.about,
            level=args.level,
        )
    if args.score_margin is not None:
        from ..deciding._score_gate import score_no_regression

        scores["score_no_regression"] = score_no_regression(
            source,
            variant=args.variant,
            vs=args.no_regression_vs,
            margin=args.score_margin,
            about=args.about,
            level=args.level,
        )
    rate_asked = args.min_pass is not None or (
        args.no_regression_vs is not None and (args.score_margin is None or args.margin is not None)
    )
    if scores and not rate_asked:
        if len(scores) == 1:
            (only,) = scores.values()
            show_result(only, args, source)
            return 0 if only.passed else 1
        both = _Both(None, scores)
        show_result(both, args, source)
        return 0 if both.passed else 1
    result = gate(
        source,
        variant=args.variant,
        min_pass=args.min_pass,
        on=args.on,
        every_case_passes=args.every_case_passes,
        # --no-regression-vs with --score-margin alone gates the mean score only
        no_regression_vs=args.no_regression_vs
        if args.margin is not None or args.score_margin is None
        else None,
        margin=args.margin,
        level=args.level,
        about=args.about,
        allow_unfinished=args.allow_unfinished,
    )
    if scores:
        result = _Both(result, scores)
    show_result(result, args, source)
    return 0 if result.passed else 1
