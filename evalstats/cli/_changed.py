"""evalstats changed: whether git shows a change under some paths."""

from __future__ import annotations

import argparse

EXAMPLES = ("evalstats changed --since origin/main prompts/ cases/",)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--since",
        required=True,
        metavar="REF",
        help="a git commit, branch or tag to compare the working tree with",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATHSPEC",
        help="paths to watch; exit 0 changed, 1 unchanged, 2 when a path names nothing in the "
        "working tree nor at REF (a typo would otherwise read unchanged for ever)",
    )


def run(args: argparse.Namespace) -> int:
    from ..deciding._previous_runs import changed_since

    if changed_since(args.since, args.paths):
        print(f"changed since {args.since}")
        return 0
    print(f"unchanged since {args.since}")
    return 1
