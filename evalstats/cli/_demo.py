"""evalstats demo: the offline stand-ins compared, with the figures."""

from __future__ import annotations

import argparse

from ._options import (
    UsageError,
    add_force,
    add_progress,
    given,
    renamed,
    show_result,
    wants_progress,
)

EXAMPLES = (
    "evalstats demo",
    "evalstats demo --runs 20 --seed 1 --out-dir demo-out",
    "evalstats demo --sequential --max-runs 33",
    "evalstats demo --suite notes --json",
    "evalstats demo --graded",
    "evalstats demo --graded same --runs 20",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--suite",
        choices=["shop", "notes"],
        default="shop",
        help="shop: the shop stand-in, version 1 against version 2; notes: the "
        "tool-using notes assistant as a subprocess per sample, without and with a "
        "read-first prefix (shop)",
    )
    p.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs per case and variant (10 for shop, 3 for notes; not with --sequential)",
    )
    p.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help="with --sequential: at most N rounds (33)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the stand-in (0)")
    p.add_argument(
        "--out-dir",
        metavar="DIR",
        help="folder for results.jsonl and the figures (default: none: the demo works in a "
        "temporary folder and removes it)",
    )
    renamed(p, "--out", "--out-dir DIR (the demo writes a folder)")
    add_force(p, "the results.jsonl and figures of an earlier demo in --out-dir DIR")
    p.add_argument("--no-plots", action="store_true", help="write no figures")
    p.add_argument(
        "--over-http",
        nargs="?",
        const=True,
        default=False,
        metavar="BASE_URL",
        help="reach the stand-ins over HTTP with the openai provider, through a stand-in "
        "server started for the demo (or the one at BASE_URL)",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="shop only: run round by round until the anytime-valid comparison decides "
        "(at most --max-runs rounds, 33 by default) and show the pairs saved against the "
        "fixed design",
    )
    p.add_argument(
        "--graded",
        nargs="?",
        const="better",
        choices=["better", "same"],
        metavar="PAIR",
        help="shop only: the graded stand-in, each reply scored by the share of its case's "
        "required facts it states, and the versions' mean scores compared beside their known "
        "truth; PAIR better (the default): version 1 against version 2, true difference "
        "+0.20; same: version 2 against version 3, true difference 0",
    )
    add_progress(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run(args: argparse.Namespace) -> int:
    if args.graded is not None:
        return _run_graded_demo(args)
    if args.sequential:
        from ..demo._sequential_demo import run_sequential_demo

        if args.suite != "shop" or args.over_http:
            raise UsageError("evalstats demo: --sequential runs the shop stand-in in process")
        if args.runs is not None:
            raise UsageError(
                "evalstats demo: --sequential runs round by round; give --max-runs N, not --runs"
            )
        show_result(
            run_sequential_demo(
                **given(max_runs=args.max_runs),
                seed=args.seed,
                out=args.out_dir,
                progress=wants_progress(args),
                force=args.force,
            ),
            args,
        )
        return 0
    if args.max_runs is not None:
        raise UsageError("evalstats demo: --max-runs goes with --sequential")
    if args.suite == "notes":
        return _run_notes_demo(args)
    from ..demo._shop_demo import run_demo

    result = run_demo(
        **given(runs=args.runs),
        seed=args.seed,
        out=args.out_dir,
        plots=not args.no_plots,
        progress=wants_progress(args),
        over_http=bool(args.over_http),
        base_url=args.over_http if isinstance(args.over_http, str) else None,
        force=args.force,
    )
    show_result(result, args)
    return 0


def _run_notes_demo(args: argparse.Namespace) -> int:
    from ..demo._notes_demo import run_notes_demo

    if args.over_http:
        raise UsageError(
            "evalstats demo: --over-http is for --suite shop; the notes demo always runs over HTTP"
        )
    result = run_notes_demo(
        **given(runs=args.runs),
        seed=args.seed,
        out=args.out_dir,
        progress=wants_progress(args),
        force=args.force,
    )
    show_result(result, args)
    return 0


#: Options the graded demo refuses, and why.
_NOT_GRADED = (
    ("sequential", "--sequential", "it runs a fixed number of runs (--runs N)"),
    ("max_runs", "--max-runs", "it runs a fixed number of runs (--runs N)"),
    ("over_http", "--over-http", "the graded stand-in runs in process"),
    ("no_plots", "--no-plots", "it draws no figures"),
)


def _run_graded_demo(args: argparse.Namespace) -> int:
    from ..demo._graded_demo import run_graded_demo

    if args.suite != "shop":
        raise UsageError("evalstats demo: --graded grades the shop stand-in, not --suite notes")
    for name, option, why in _NOT_GRADED:
        if getattr(args, name) not in (None, False):
            raise UsageError(f"evalstats demo: --graded does not take {option}: {why}")
    result = run_graded_demo(
        pair=args.graded,
        **given(runs=args.runs),
        seed=args.seed,
        out=args.out_dir,
        progress=wants_progress(args),
        force=args.force,
    )
    show_result(result, args)
    return 0
