"""The ``evalstats`` command.

Thin on purpose: each verb parses its arguments, calls one library function and
prints the result (a table, or with ``--json`` one JSON document). No statistics
live here. Exit status: 0 done, 1 a gate failed (only ``gate``), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ._validate import suggest
from .errors import EvalStatsError

__all__ = ["main"]


class UsageError(EvalStatsError):
    """Bad command-line usage; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that reports a usage error as one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _print_json(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, allow_nan=False, default=_json_default)
    sys.stdout.write("\n")


def _json_default(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# --- verbs -----------------------------------------------------------------
# Each verb is a pair: a function that adds its arguments to a subparser, and a
# function that runs it and returns the exit status.


def _add_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=10, help="runs per case and variant (10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the stand-in (0)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    result = run_demo(runs=args.runs, seed=args.seed)
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result)
    return 0


def _add_power(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pa", type=float, required=True, help="true pass rate of A")
    p.add_argument("--pb", type=float, required=True, help="true pass rate of B")
    p.add_argument("--trials", type=int, nargs="+", required=True,
                   help="trials per variant (one or more)")
    p.add_argument("--method", nargs="+", default=["newcombe"],
                   help="overlap, newcombe, ztest, mcnemar (newcombe)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the power curves into FILE.png")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run_power(args: argparse.Namespace) -> int:
    from .power import power_figure, power_table

    table = power_table(args.pa, args.pb, args.trials, methods=args.method, level=args.level)
    if args.plot:
        fig = power_figure(args.pa, args.pb, args.trials, methods=args.method, level=args.level)
        fig.savefig(args.plot, dpi=120)
    if args.json:
        _print_json(table.to_dict())
    else:
        print(table)
    return 0


def _add_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pa", type=float, help="mean pass rate of A (from --from if omitted)")
    p.add_argument("--pb", type=float, help="mean pass rate of B to detect")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--icc", type=float,
                     help="intra-case correlation: share of variance between cases")
    how.add_argument("--from", dest="from_file", metavar="RESULTS.jsonl",
                     help="fit icc and spread (and rates) from a pilot run's results")
    p.add_argument("--cases", type=int, help="the cases you have")
    p.add_argument("--repeats", type=int, help="the runs per case and variant you can afford")
    p.add_argument("--spread", type=float, default=0.0,
                   help="case-by-variant spread on the logit scale (0; with --from, fitted)")
    p.add_argument("--power", type=float, default=0.8, help="target power (0.8)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run_plan(args: argparse.Namespace) -> int:
    from .power import case_model_from_results, plan

    model = None
    if args.from_file:
        model = case_model_from_results(args.from_file, p_a=args.pa, p_b=args.pb)
    elif args.pa is None or args.pb is None:
        raise UsageError("evalstats plan: give --pa and --pb (or --from a pilot run)")
    result = plan(args.pa, args.pb, icc=args.icc, cases=args.cases, repeats=args.repeats,
                  power=args.power, level=args.level, spread=args.spread, model=model)
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result)
    return 0

VERBS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[..., int]]] = {
    "demo": (
        "run the offline shop stand-in, version 1 against version 2",
        _add_demo,
        _run_demo,
    ),
    "power": (
        "exact power and false-positive rate of a comparison, per method and trials",
        _add_power,
        _run_power,
    ),
    "plan": (
        "cases and repeats for a paired eval when cases differ",
        _add_plan,
        _run_plan,
    ),
    "calibrate": (
        "measure a check against a person's verdicts; correct a pass rate for its errors",
        _add_calibrate,
        _run_calibrate,
    ),
    "report": (
        "pass rates of a results file per case and variant, with the right denominators",
        _add_report,
        _run_report,
    ),
    "compare": (
        "compare two variants of a results file, paired when the schedule paired them",
        _add_compare,
        _run_compare,
    ),
    "compare-runs": (
        "compare a run with an earlier one, if they are comparable",
        _add_compare_runs,
        _run_compare_runs,
    ),
    "gate": (
        "exit 1 when a variant misses a pass-rate policy (for CI)",
        _add_gate,
        _run_gate,
    ),
    "changed": (
        "exit 0 when git shows a change under the paths since REF, 1 otherwise",
        _add_changed,
        _run_changed,
    ),
    "run": (
        "run a suite's cases with each variant, writing every sample to a results file",
        _add_run,
        _run_run,
    ),
    "standin": (
        "serve the offline stand-ins over HTTP, with latency and faults to order",
        _add_standin,
        _run_standin,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="evalstats",
        description="Honest statistics for evals of AI assistants.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"evalstats {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for name, (help_text, add, _run) in VERBS.items():
        add(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        if args_list and not args_list[0].startswith("-") and args_list[0] not in VERBS:
            raise UsageError(
                f"evalstats: unknown verb {args_list[0]!r}{suggest(args_list[0], VERBS)}; "
                f"choose one of {', '.join(VERBS)}"
            )
        parser = build_parser()
        args = parser.parse_args(args_list)
        if args.verb is None:
            parser.print_help()
            return 2
        return VERBS[args.verb][2](args)
    except EvalStatsError as exc:
        print(f"evalstats: error: {exc}" if not isinstance(exc, UsageError) else str(exc),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evalstats: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``evalstats ... | head``): not an error of ours.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
