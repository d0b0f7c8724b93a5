"""The ``evalstats`` command.

Thin on purpose: each verb parses its arguments, calls one library function and
prints the result (a table, or with ``--json`` one JSON document). No statistics
live here. Exit status: 0 done, 1 a gate failed (only ``gate``), 2 bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .._terminal import VisibleWriter, visible
from .._validate import suggest
from ..errors import EvalStatsError, InvalidArgument

__all__ = ["main"]


class UsageError(EvalStatsError):
    """Bad command-line usage; printed as one line, exit status 2."""


# Characters of an error message the command prints at most.
_ERROR_LIMIT = 1000


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that reports a usage error as one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


#: The version of every ``--json`` document's layout; a reader checks
#: ``document["schema"] == "evalstats.<verb>/2"`` before trusting its fields
#: (version 2 names the claim ``about``, where version 1 said ``scope``).
JSON_SCHEMA_VERSION = 2


def _print_json(document: Any, verb: str) -> None:
    if isinstance(document, dict):
        document = {"schema": f"evalstats.{verb}/{JSON_SCHEMA_VERSION}", **document}
    json.dump(document, sys.stdout, indent=2, allow_nan=False, default=_json_default)
    sys.stdout.write("\n")


def _show(result: Any, args: argparse.Namespace) -> None:
    """Print a verb's result: its table, or with ``--json`` one JSON document whose
    ``schema`` field names the verb and the layout's version."""
    if args.json:
        _print_json(result.to_dict(), args.verb)
    else:
        print(result)


def _given(**values: Any) -> dict[str, Any]:
    """The options the user gave, so that unset ones keep the library's defaults."""
    return {name: value for name, value in values.items() if value is not None}


#: ``--about`` on the command line, and the claim each spelling names.
_ABOUT = {"these-cases": "these_cases", "cases-like-these": "cases_like_these"}
#: Spellings of earlier versions, refused with the one to use now.
_OLD_ABOUT = {
    "trials": "these-cases",
    "cases": "cases-like-these",
    "these_cases": "these-cases",
    "cases_like_these": "cases-like-these",
}


def _about(text: str) -> str:
    """``--about``'s value as the claim it names (``argparse`` type)."""
    if text in _ABOUT:
        return _ABOUT[text]
    if text in _OLD_ABOUT:
        raise argparse.ArgumentTypeError(
            f"{text!r} is the old spelling; say --about {_OLD_ABOUT[text]}"
        )
    raise argparse.ArgumentTypeError(f"{text!r}: choose these-cases or cases-like-these")


class _Renamed(argparse.Action):
    """An option of earlier versions, refused with a line naming the one to use now."""

    def __init__(self, *args: Any, now: str, **kwargs: Any) -> None:
        self.now = now
        super().__init__(*args, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        parser.error(f"{option} is now {self.now}")


def _add_about(p: argparse.ArgumentParser, what: str, default: str) -> None:
    """The one ``--about`` option: which claim ``what`` makes (``default`` says the default)."""
    p.add_argument(
        "--about",
        type=_about,
        metavar="these-cases|cases-like-these",
        help=f"the claim of {what}: these-cases (would these cases, run again, pass more often) "
        f"or cases-like-these (would cases drawn the way these were); {default}",
    )
    p.add_argument(
        "--scope", nargs="?", action=_Renamed, now="--about these-cases|cases-like-these"
    )


def _add_level_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


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


def _add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal, so "
        "pipes and CI logs get none)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar (as --no-progress)")


def _progress(args: argparse.Namespace) -> bool:
    """Whether to draw a progress bar: asked for, or stderr is a terminal."""
    if args.quiet or getattr(args, "json", False):
        return False
    if args.progress is not None:
        return bool(args.progress)
    return sys.stderr.isatty()


def _add_demo(p: argparse.ArgumentParser) -> None:
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
        help="runs per case and variant (10 for shop, 3 for notes)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the stand-in (0)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="folder for results.jsonl and the figures (default: none: the demo works in a "
        "temporary folder and removes it)",
    )
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
        "(at most --runs rounds, 33 by default) and show the pairs saved against the "
        "fixed design",
    )
    _add_progress(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run_demo(args: argparse.Namespace) -> int:
    if args.sequential:
        from ..demo._sequential_demo import run_sequential_demo

        if args.suite != "shop" or args.over_http:
            raise UsageError("evalstats demo: --sequential runs the shop stand-in in process")
        _show(
            run_sequential_demo(
                **_given(max_runs=args.runs),
                seed=args.seed,
                out=args.out,
                progress=_progress(args),
            ),
            args,
        )
        return 0
    if args.suite == "notes":
        return _run_notes_demo(args)
    from ..demo._shop_demo import run_demo

    result = run_demo(
        **_given(runs=args.runs),
        seed=args.seed,
        out=args.out,
        plots=not args.no_plots,
        progress=_progress(args),
        over_http=bool(args.over_http),
        base_url=args.over_http if isinstance(args.over_http, str) else None,
    )
    _show(result, args)
    return 0


def _run_notes_demo(args: argparse.Namespace) -> int:
    from ..demo._notes_demo import run_notes_demo

    if args.over_http:
        raise UsageError(
            "evalstats demo: --over-http is for --suite shop; the notes demo always runs over HTTP"
        )
    result = run_notes_demo(
        **_given(runs=args.runs),
        seed=args.seed,
        out=args.out,
        progress=_progress(args),
    )
    _show(result, args)
    return 0


def _add_power(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pa", type=float, required=True, help="true pass rate of A")
    p.add_argument("--pb", type=float, required=True, help="true pass rate of B")
    p.add_argument(
        "--trials", type=int, nargs="+", required=True, help="trials per variant (one or more)"
    )
    p.add_argument(
        "--method",
        nargs="+",
        default=["newcombe"],
        help="overlap, newcombe, ztest, mcnemar (newcombe)",
    )
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the power curves into FILE.png")
    p.add_argument("--force", action="store_true", help="replace FILE.png if it exists")
    _add_sequential(p, "each --trials value is the budget in pairs")
    _add_planned_for(p, "with --sequential; default --pa,--pb; none: no planned effect")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _add_sequential(p: argparse.ArgumentParser, budget: str, *, simulation: bool = True) -> None:
    p.add_argument(
        "--sequential",
        action="store_true",
        help=f"the anytime-valid sequential design instead ({budget}): power within the "
        "budget and pairs to a verdict, by simulation, beside the fixed design",
    )
    if simulation:
        p.add_argument(
            "--experiments",
            type=int,
            default=4000,
            help="simulated experiments (--sequential; 4000)",
        )
        p.add_argument(
            "--seed", type=int, default=0, help="seed of the simulation (--sequential; 0)"
        )


def _planned(text: str | None, rates: tuple[float, float] | None = None) -> Any:
    """--planned-for PA,PB as (p_a, p_b); "none" or absent: None, or ``rates``
    (plan and power plan for the rates they are given)."""
    if text is None:
        return rates
    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return (float(parts[0]), float(parts[1]))
    except ValueError:
        raise InvalidArgument(
            f"--planned-for={text!r} must be two pass rates PA,PB such as 0.7,0.9 (or none)"
        ) from None


def _add_planned_for(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--planned-for",
        metavar="PA,PB",
        help="the pass rates of A and B the sequential design was planned for: its "
        "e-process (these cases) concentrates on that effect, deciding earlier when the "
        f"plan is about right and staying valid when it is not ({default})",
    )


def _show_all(results: list[Any], args: argparse.Namespace) -> None:
    if args.json:
        _print_json({"sequential": [r.to_dict() for r in results]}, args.verb)
    else:
        print("\n\n".join(str(r) for r in results))


def _run_power(args: argparse.Namespace) -> int:
    from ..planning._power import power_figure, power_table

    if args.sequential:
        from ..deciding._sequential import sequential_plan

        if args.plot:
            raise UsageError(
                "evalstats power: --plot draws fixed designs; drop it with --sequential"
            )
        planned_for = _planned(args.planned_for, (args.pa, args.pb))
        plans = [
            sequential_plan(
                args.pa,
                args.pb,
                budget,
                level=args.level,
                experiments=args.experiments,
                seed=args.seed,
                planned_for=planned_for,
            )
            for budget in args.trials
        ]
        _show_all(plans, args)
        return 0
    if args.planned_for is not None:
        raise UsageError("evalstats power: --planned-for goes with --sequential")
    table = power_table(args.pa, args.pb, args.trials, methods=args.method, level=args.level)
    if args.plot:
        from ..presenting._plots import _save

        fig = power_figure(args.pa, args.pb, args.trials, methods=args.method, level=args.level)
        _save(fig, args.plot, overwrite=args.force, dpi=120)
    _show(table, args)
    return 0


def _add_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pa", type=float, help="mean pass rate of A (from --from if omitted)")
    p.add_argument("--pb", type=float, help="mean pass rate of B to detect")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--icc", type=float, help="intra-case correlation: share of variance between cases"
    )
    how.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="fit icc and spread (and rates) from a pilot run: a results file, or "
        "another tool's log (see evalstats import)",
    )
    p.add_argument("--cases", type=int, help="the cases you have")
    p.add_argument("--repeats", type=int, help="the runs per case and variant you can afford")
    p.add_argument(
        "--spread",
        type=float,
        default=0.0,
        help="case-by-variant spread on the logit scale (0; with --from, fitted)",
    )
    p.add_argument("--power", type=float, default=0.8, help="target power (0.8)")
    p.add_argument(
        "--experiments",
        type=int,
        default=8000,
        help="simulated experiments per design (8000)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation (0)")
    p.add_argument(
        "--approximate",
        action="store_true",
        help="plan by the normal approximation alone, without simulating",
    )
    p.add_argument(
        "--cost-per-call",
        type=float,
        metavar="DOLLARS",
        help="what one sample costs: also state the design's cost (cases x repeats x "
        "variants x this)",
    )
    _add_sequential(p, "--repeats is the budget of runs per case", simulation=False)
    _add_planned_for(p, "with --sequential and --icc 0; default --pa,--pb; none: no planned effect")
    _add_level_and_json(p)
    _add_source_options(p)


def _run_plan(args: argparse.Namespace) -> int:
    from ..planning._power import case_model_from_results, plan

    if args.cost_per_call is not None:
        from ..planning._cost import design_cost

        design_cost(None, args.cost_per_call)  # a bad price is refused before planning
    if args.sequential:
        from ..deciding._sequential import sequential_plan

        if args.from_file or args.cases is None or args.repeats is None:
            raise UsageError(
                "evalstats plan: --sequential needs --pa, --pb, --icc, --cases and --repeats "
                "(the budget of runs per case)"
            )
        if args.pa is None or args.pb is None:
            raise UsageError("evalstats plan: give --pa and --pb")
        clustered = args.icc != 0 or args.spread != 0
        planned_for = _planned(args.planned_for, None if clustered else (args.pa, args.pb))
        planned = sequential_plan(
            args.pa,
            args.pb,
            args.repeats,
            cases=args.cases,
            icc=args.icc,
            spread=args.spread,
            level=args.level,
            experiments=args.experiments,
            seed=args.seed,
            planned_for=planned_for,
            looks="round",  # as run --until-decided looks
        )
        _show(planned, args)
        return 0
    if args.planned_for is not None:
        raise UsageError("evalstats plan: --planned-for goes with --sequential")
    model = None
    if args.from_file:
        # One evalstats results file is counted as it is read; another tool's log is read.
        model = case_model_from_results(_load([args.from_file], args), p_a=args.pa, p_b=args.pb)
    elif args.pa is None or args.pb is None:
        raise UsageError("evalstats plan: give --pa and --pb (or --from a pilot run)")
    result = plan(
        args.pa,
        args.pb,
        icc=args.icc,
        cases=args.cases,
        repeats=args.repeats,
        power=args.power,
        level=args.level,
        spread=args.spread,
        model=model,
        simulate=not args.approximate,
        experiments=args.experiments,
        seed=args.seed,
    )
    if args.cost_per_call is None:
        _show(result, args)
        return 0
    from ..planning._cost import design_cost

    cost = design_cost(result.calls, args.cost_per_call)
    if args.json:
        _print_json({**result.to_dict(), "cost": cost.to_dict()}, "plan")
    else:
        print(f"{result}\n{cost}")
    return 0


def _add_calibrate(p: argparse.ArgumentParser) -> None:
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
    _add_level_and_json(p)


def _run_calibrate(args: argparse.Namespace) -> int:
    from ..running._judge import calibrate_file

    report = calibrate_file(
        args.file,
        observed=args.observed,
        level=args.level,
        min_sensitivity=args.min_sensitivity,
        min_specificity=args.min_specificity,
    )
    _show(report, args)
    return 0


def _add_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help=_FILE_HELP)
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument(
        "--plot", metavar="DIR", help="also write forest.png and paired-differences.png into DIR"
    )
    p.add_argument(
        "--html",
        metavar="REPORT.html",
        help="also write the whole report as one self-contained HTML file (a new file, 0600)",
    )
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
        "a variant's own prices (price_in=, price_out=) win",
    )
    _add_about(
        p,
        "the ranking of three or more variants (Holm-adjusted)",
        "default cases-like-these when paired over at least 5 cases, else these-cases, saying why",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")
    _add_source_options(p)


def _run_report(args: argparse.Namespace) -> int:
    prices = None
    if args.prices:
        from ..planning._cost import load_prices

        prices = load_prices(args.prices)  # refused before reading
    from .._validate import check_level
    from ..presenting._report import report

    check_level(args.level)  # a bad level is reported before the file is read
    from ..reading._tally import tally

    # One evalstats results file is counted as it is read (a path); another
    # tool's log is read into a Results. The cost is counted with the rest; the
    # figures and the HTML page (which lists samples) read the records
    # themselves, from the file, only when asked for.
    results = _load([args.file], args)
    counted = tally(results)
    result = report(
        counted, level=args.level, reviews=args.reviews, about=args.about, prices=prices
    )
    if args.plot:
        from ..presenting._plots import report_plots

        for path in report_plots(results, args.plot, level=args.level):
            print(f"evalstats: wrote {path}", file=sys.stderr)
    if args.html:
        from ..presenting._html import html_report

        print(
            f"evalstats: wrote {html_report(results, args.html, level=args.level)}", file=sys.stderr
        )
    if args.json:
        _print_json(result.to_dict(), "report")
    else:
        print(result)
    return 0


def _add_review(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a results file (JSONL) written by run")
    p.add_argument(
        "--out",
        required=True,
        metavar="REVIEWS.jsonl",
        help="the reviews file: created if new, continued if it exists (reviewed "
        "samples are skipped)",
    )
    p.add_argument("--reviewer", metavar="NAME", help="recorded with each review")
    p.add_argument(
        "--case", action="append", metavar="ID", help="review only this case (repeat for more)"
    )
    p.add_argument(
        "--blind",
        action="store_true",
        help="hide variant names and shuffle the samples (by --seed)",
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


def _run_review(args: argparse.Namespace) -> int:
    from ..presenting._review import review

    review(
        args.file,
        args.out,
        reviewer=args.reviewer,
        cases=args.case,
        blind=args.blind,
        seed=args.seed,
        sample=args.sample,
    )
    return 0


def _add_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help=_FILE_HELP + "; two or more runs of one task (such as two Inspect logs, one "
        "per model) are joined and compared paired by (case, repeat)",
    )
    p.add_argument(
        "--a",
        metavar="NAME",
        help="the variant to compare against (with neither --a nor --b, a run of two "
        "variants compares the second with the first)",
    )
    p.add_argument("--b", metavar="NAME", help="the variant compared")
    p.add_argument(
        "--baseline",
        metavar="NAME",
        help="compare every other variant with NAME (adjusted for multiplicity)",
    )
    p.add_argument(
        "--all-pairs",
        action="store_true",
        help="compare every pair of variants (adjusted for multiplicity)",
    )
    p.add_argument(
        "--adjust",
        default="holm",
        metavar="holm|shaffer|none",
        help="with --baseline or --all-pairs: how p-values and verdicts are adjusted (holm)",
    )
    p.add_argument(
        "--method",
        help="mcnemar or clustered when paired (mcnemar); "
        "newcombe, overlap or ztest as independent samples",
    )
    _add_about(
        p,
        "the verdict",
        "default cases-like-these when paired over at least 5 cases, else these-cases, "
        "saying why (with --sequential: these-cases)",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="the anytime-valid comparison, valid however often the file was looked at, "
        "with its trajectory (a look after every round)",
    )
    p.add_argument(
        "--plot", metavar="FILE.png", help="with --sequential: draw the trajectory into FILE.png"
    )
    _add_planned_for(p, "with --sequential; default: what the run recorded, else none")
    _add_level_and_json(p)
    _add_source_options(p)


def _run_compare(args: argparse.Namespace) -> int:
    from ..deciding._compare_results import compare_results

    if args.sequential:
        from ..deciding._sequential import sequential_results

        if args.method is not None:
            raise UsageError("evalstats compare: --method is for the fixed-n compare; drop it")
        if args.a is None or args.b is None or args.baseline is not None or args.all_pairs:
            raise UsageError(
                "evalstats compare: --sequential compares two variants: give --a and --b"
            )
        source = _load(args.files, args, stream=False)
        seq = sequential_results(
            source,
            args.a,
            args.b,
            about=args.about or "these_cases",
            level=args.level,
            planned_for=_planned(args.planned_for),
        )
        if args.plot:
            from ..presenting._plots import sequential_plot

            print(f"evalstats: wrote {sequential_plot(seq, args.plot)}", file=sys.stderr)
        if args.json:
            _print_json(seq.to_dict(), args.verb)
        else:
            print(seq)
            print(seq.trajectory_text())
        return 0
    if args.plot or args.planned_for is not None:
        raise UsageError("evalstats compare: --plot and --planned-for go with --sequential")
    several = args.baseline is not None or args.all_pairs
    if several and (args.a is not None or args.b is not None):
        raise UsageError("evalstats compare: give --a and --b, or --baseline, or --all-pairs")
    source = _load(args.files, args)
    if several:
        from ..deciding._several import compare_variants

        many = compare_variants(
            source,
            baseline=args.baseline,
            all_pairs=args.all_pairs,
            adjust=args.adjust,
            method=args.method,
            level=args.level,
            about=args.about,
        )
        _show(many, args)
        return 0
    a, b = args.a, args.b
    if (a is None) != (b is None):
        raise UsageError(
            "evalstats compare: give both --a and --b (or neither, for a run of two variants)"
        )
    if a is None:  # a run of exactly two variants (two joined logs, say) needs no names
        from ..reading._tally import tally

        source = tally(source)  # counted once, for the names and the comparison
        names = list(source.variants())
        if len(names) != 2:
            raise UsageError(
                "evalstats compare: the run has variants "
                + (", ".join(repr(n) for n in names) or "none")
                + "; give --a and --b (two variants), --baseline NAME or --all-pairs"
            )
        a, b = names
    result = compare_results(source, a, b, method=args.method, level=args.level, about=args.about)
    _show(result, args)
    return 0


def _add_compare_runs(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the earlier run: " + _FILE_HELP)
    p.add_argument("new", metavar="NEW", help="the later run, in the same kind of file")
    p.add_argument(
        "--variant", metavar="NAME", help="compare this variant only (default: every variant)"
    )
    p.add_argument(
        "--allow-different",
        action="append",
        default=[],
        metavar="FIELD",
        help="compare anyway although FIELD differs (suite, model, judge, counting-method or "
        "machine; repeatable); the difference is printed above the numbers",
    )
    _add_level_and_json(p)
    _add_source_options(p)


def _run_compare_runs(args: argparse.Namespace) -> int:
    """Exit 0 when the runs were compared, 1 when they are not comparable."""
    from ..deciding._previous_runs import compare_runs

    old, new = _load([args.old], args), _load([args.new], args)
    result = compare_runs(
        old,
        new,
        variant=args.variant,
        level=args.level,
        allow_different=args.allow_different,
    )
    _show(result, args)
    return 0 if result.comparable else 1


def _add_rescore(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a results file (JSONL) written by run")
    p.add_argument(
        "--suite",
        required=True,
        metavar="SUITE",
        help="the suite with the new checks (same cases and prompts as the run)",
    )
    p.add_argument(
        "--out", required=True, metavar="FILE", help="the new results file (never overwritten)"
    )
    p.add_argument(
        "--judge",
        metavar="SPEC",
        help="the judge of the suite's judged_by checks, as for run (the stored answers are "
        "judged again; recorded in the new manifest)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run_rescore(args: argparse.Namespace) -> int:
    from ..reading._rescore import rescore

    _show(rescore(args.file, args.suite, out=args.out, judge=args.judge), args)
    return 0


def _add_merge(p: argparse.ArgumentParser) -> None:
    p.add_argument("first", metavar="FIRST", help="a results file written by run")
    p.add_argument(
        "second",
        metavar="SECOND",
        help="a run of the same suite and variants (another seed); its repeats follow FIRST's",
    )
    p.add_argument(
        "--out", required=True, metavar="FILE", help="the merged results file (never overwritten)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run_merge(args: argparse.Namespace) -> int:
    from ..reading._merge import merge_runs

    _show(merge_runs(args.first, args.second, out=args.out), args)
    return 0


def _add_gate(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help=_FILE_HELP)
    p.add_argument("--variant", required=True, metavar="NAME", help="the variant to gate")
    p.add_argument(
        "--min-pass",
        type=float,
        metavar="RATE",
        help="the least acceptable pass rate, such as 0.9",
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
    _add_about(
        p,
        "--on lower-bound and --no-regression-vs",
        "default cases-like-these from 5 cases (paired, for --no-regression-vs), else "
        "these-cases, saying why",
    )
    _add_level_and_json(p)
    _add_source_options(p)


def _run_gate(args: argparse.Namespace) -> int:
    from ..deciding._gate import gate

    result = gate(
        _load([args.file], args),
        variant=args.variant,
        min_pass=args.min_pass,
        on=args.on,
        every_case_passes=args.every_case_passes,
        no_regression_vs=args.no_regression_vs,
        margin=args.margin,
        level=args.level,
        about=args.about,
    )
    _show(result, args)
    return 0 if result.passed else 1


def _add_changed(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--since",
        required=True,
        metavar="REF",
        help="a git commit, branch or tag to compare the working tree with",
    )
    p.add_argument("paths", nargs="+", metavar="PATHSPEC", help="paths to watch")


def _run_changed(args: argparse.Namespace) -> int:
    from ..deciding._previous_runs import changed_since

    if changed_since(args.since, args.paths):
        print(f"changed since {args.since}")
        return 0
    print(f"unchanged since {args.since}")
    return 1


def _add_run(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "suite",
        metavar="SUITE",
        help="a suite file (.json, .yaml) or a shipped suite's name, such as shop",
    )
    p.add_argument(
        "--variant",
        action="append",
        required=True,
        metavar="NAME=TASK[,KEY=VALUE]",
        help="a variant: a name, a task (standin:shop-v1, standin:shop-v2; a model "
        "service openai:MODEL, ollama:MODEL, anthropic:MODEL, gemini:MODEL, with "
        "settings such as temperature=0.2, max_tokens=1024, context=8192, base_url=URL; "
        "or cmd:COMMAND, run once per sample in a fresh workspace) and "
        "optionally prefix=, suffix=, system=, template= (TEXT or @FILE); repeat "
        "for each variant",
    )
    p.add_argument(
        "--runs", type=int, help="repeats of each case per variant (not with --until-decided)"
    )
    p.add_argument(
        "--until-decided",
        action="store_true",
        help="run two variants round by round, look after each round with the anytime-valid "
        "comparison, and stop at its verdict (needs --max-runs)",
    )
    p.add_argument(
        "--max-runs", type=int, metavar="N", help="with --until-decided: at most N rounds"
    )
    _add_about(p, "--until-decided's comparison", "default these-cases")
    p.add_argument(
        "--level", type=float, default=0.95, help="with --until-decided: confidence level (0.95)"
    )
    _add_planned_for(p, "with --until-decided; default none")
    p.add_argument("--out", metavar="FILE", help="the results file to create (JSONL)")
    p.add_argument(
        "--judge",
        metavar="SPEC",
        help="the judge of the suite's judged_by checks: a model service as for a variant "
        "(openai:gpt-4o-mini,temperature=0) or the offline stand-in "
        "standin:judge,sensitivity=0.9,specificity=0.8,seed=1; recorded in the manifest",
    )
    p.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=None,
        metavar="FILE",
        help="continue an interrupted run: in FILE, or in --out when no FILE is "
        "given; runs only the samples it lacks",
    )
    p.add_argument(
        "--extend",
        metavar="FILE",
        help="add to a finished run in FILE: more repeats (--runs is the new total) and the "
        "suite's new cases for every repeat, keeping the schedule paired and alternating; "
        "the manifest records each extension",
    )
    p.add_argument("--concurrency", type=int, default=1, help="samples in flight at once (1)")
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per attempt of a sample (60; a cmd: task's command 130); a cmd: "
        "task's command is killed at this time and its sample is incomplete",
    )
    p.add_argument("--retries", type=int, default=3, help="retries of transient errors (3)")
    p.add_argument(
        "--stop-after-unmeasured",
        type=int,
        default=20,
        metavar="N",
        help="stop the run when N samples in a row are unmeasured (the service is down; "
        "resume later); 0 never stops (20)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the run (0)")
    p.add_argument("--include-holdout", action="store_true", help="also run the holdout cases")
    p.add_argument(
        "--prices",
        metavar="PRICES.yaml",
        help="model name to {input: ..., output: ...} in dollars per million tokens, "
        "recorded in the manifest for variants without price_in=/price_out= of their own",
    )
    p.add_argument(
        "--case",
        action="append",
        metavar="ID",
        help="run only the cases whose id matches (a shell pattern such as 'order*'; repeatable)",
    )
    p.add_argument(
        "--tag",
        action="append",
        metavar="TAG",
        help="run only the cases with this tag (repeatable)",
    )
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="run only the first N (selected) cases, in file order",
    )
    _add_progress(p)
    p.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="leave each cmd: sample's workspace in place (its folder is in the "
        "sample record, under trace.kept_workspace)",
    )


def _run_run(args: argparse.Namespace) -> int:
    out = args.out
    if isinstance(args.resume, str):
        if out is not None and out != args.resume:
            raise UsageError(
                f"evalstats run: --out {out} and --resume {args.resume} name different files; "
                "give the file to resume once"
            )
        out = args.resume
    if args.extend is not None:
        if out is not None and out != args.extend:
            raise UsageError(
                f"evalstats run: --out {out} and --extend {args.extend} name different files; "
                "an extension adds to the file it extends"
            )
        if args.resume is not None or args.until_decided:
            raise UsageError(
                "evalstats run: --extend goes without --resume and --until-decided (running the "
                "same --extend again completes an interrupted extension)"
            )
        out = args.extend
    if out is None:
        raise UsageError("evalstats run: give --out FILE (or --resume FILE to continue a run)")
    variants = args.variant
    if args.prices:
        from ..planning._cost import priced_variants

        variants = priced_variants(variants, args.prices)
    if args.keep_workspaces:
        from ..running._variants import keeping_workspaces

        variants = keeping_workspaces(variants)
    if not args.until_decided:
        if args.runs is None:
            raise UsageError("evalstats run: give --runs N (or --until-decided --max-runs N)")
        if args.max_runs is not None:
            raise UsageError("evalstats run: --max-runs goes with --until-decided")
        if args.planned_for is not None:
            raise UsageError("evalstats run: --planned-for goes with --until-decided")
    suite: Any = args.suite
    judge: Any = None
    described = None
    if args.judge is not None:
        import dataclasses
        from pathlib import Path

        from ..running._judge_spec import judge_from_spec
        from ..running._suite import find_suite, load_suite

        judge, described = judge_from_spec(args.judge)
        found = find_suite(args.suite)
        suite = load_suite(found, judge=judge)
        if Path(args.suite) != found:  # a shipped suite by name, recorded as given
            suite = dataclasses.replace(suite, path=str(args.suite))
    try:
        if args.until_decided:
            return _run_until_decided(args, suite, variants, out, described)
        outcome = _run_with(args, suite, variants, out, described)
    finally:
        if hasattr(judge, "close"):
            judge.close()
    print(outcome)
    if outcome.status == "interrupted":
        print(
            f"evalstats: {outcome.reason}; continue with the same command"
            + ("" if args.extend else f" and --resume {out}"),
            file=sys.stderr,
        )
        return 130
    return 0


def _run_with(args: argparse.Namespace, suite: Any, variants: Any, out: str, judge: Any) -> Any:
    from ..running._engine import run

    return run(
        suite,
        variants,
        runs=args.runs,
        out=out,
        resume=args.resume is not None,
        extend=args.extend is not None,
        **_run_options(args, judge),
    )


def _run_options(args: argparse.Namespace, judge: Any) -> dict[str, Any]:
    """The engine's options that a fixed run and a run until decided share."""
    return {
        "concurrency": args.concurrency,
        **_given(timeout=args.timeout),
        "retries": args.retries,
        "seed": args.seed,
        "include_holdout": args.include_holdout,
        "case_ids": args.case,
        "tags": args.tag,
        "limit": args.limit,
        "stop_after_unmeasured": args.stop_after_unmeasured or None,
        "progress": _progress(args),
        "judge": judge,
    }


def _add_source_options(p: argparse.ArgumentParser) -> None:
    """How to read another tool's log (ignored for evalstats results files)."""
    from ..reading._logs import FORMATS

    g = p.add_argument_group("reading other tools' logs")
    g.add_argument(
        "--format",
        choices=FORMATS,
        help="the file's format (default: found from its content)",
    )
    g.add_argument(
        "--pass-threshold",
        type=float,
        metavar="X",
        help="numeric scores pass when at least X (Inspect scorers, lm-eval metrics, a "
        "table's score column); without it only 1/0, True/False and C/I are read",
    )
    g.add_argument(
        "--columns",
        metavar="ROLE=NAME,...",
        help="for CSV/Parquet: which column is which, such as case=item,variant=prompt "
        "(roles: case, variant, repeat, pass, latency_s, answer, model)",
    )
    g.add_argument("--scorer", metavar="NAME", help="for Inspect logs: the scorer that decides")
    g.add_argument(
        "--metric",
        metavar="NAME[,FILTER]",
        help="for lm-eval samples: the metric (and filter) that decides",
    )


def _source_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "format": args.format,
        "pass_threshold": args.pass_threshold,
        "columns": args.columns,
        "scorer": args.scorer,
        "metric": args.metric,
    }


_FILE_HELP = (
    "a results file written by run, or another tool's log: an Inspect AI log (.eval, "
    ".json), a promptfoo results.json, lm-eval samples_*.jsonl, a CSV/Parquet table"
)


def _load(paths: Sequence[str], args: argparse.Namespace, *, stream: bool = True) -> Any:
    """The run to analyse: one file read, or several runs of the same task joined.

    With ``stream``, one evalstats results file is handed on as its path, for
    the library to read as it counts; anything else is read into a Results.
    """
    from ..reading._logs import detect_format, load_results, merge

    options = _source_options(args)
    plain = not any(v is not None for v in options.values())
    if stream and len(paths) == 1 and plain and detect_format(paths[0]) == "evalstats":
        return paths[0]
    runs = [load_results(path, **options) for path in paths]
    return merge(runs)


def _add_import(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="an Inspect AI log (.eval, .json), a promptfoo results.json, an lm-eval "
        "samples_*.jsonl, or a CSV/Parquet table; several runs of the same task are joined",
    )
    p.add_argument("--out", required=True, metavar="RESULTS.jsonl", help="the file to create")
    _add_source_options(p)


def _run_import(args: argparse.Namespace) -> int:
    from ..reading._logs import write_results

    results = _load(args.files, args)
    write_results(results, args.out)
    cases = len({s["case"] for s in results.samples})
    print(
        f"wrote {args.out}: {len(results.samples)} samples, {cases} cases, variants "
        + ", ".join(results.variants())
    )
    for warning in results.warnings:
        print(visible(f"evalstats: {warning}", keep=""), file=sys.stderr)
    return 0


def _run_until_decided(
    args: argparse.Namespace, suite: Any, variants: list[Any], out: str, judge: Any
) -> int:
    from ..deciding._until_decided import run_until_decided

    if args.max_runs is None:
        raise UsageError("evalstats run: --until-decided needs --max-runs N (the budget)")
    if args.runs is not None:
        raise UsageError(
            "evalstats run: --until-decided runs round by round; give --max-runs, not --runs"
        )
    result = run_until_decided(
        suite,
        variants,
        max_runs=args.max_runs,
        out=out,
        about=args.about or "these_cases",
        level=args.level,
        resume=args.resume is not None,
        planned_for=_planned(args.planned_for),
        **_run_options(args, judge),
    )
    print(result)
    if result.comparison is not None:
        print(result.comparison.trajectory_text())
    if result.status == "interrupted":
        print(
            f"evalstats: {result.reason}; continue with the same command and --resume {out}",
            file=sys.stderr,
        )
        return 130
    return 0


def _add_standin(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        choices=["serve"],
        help="serve: the stand-ins shop-v1, shop-v2 and notes over HTTP (OpenAI at /v1, "
        "Ollama at /api)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="a loopback address to listen on (127.0.0.1); no other host is allowed",
    )
    p.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (0)")
    p.add_argument(
        "--latency-ms",
        default="0",
        metavar="MS|LOW:HIGH",
        help="delay before each answer: fixed, or uniform between LOW and HIGH (0)",
    )
    p.add_argument(
        "--error-rate",
        type=float,
        default=0.0,
        help="share of chat requests that fail, half 429 and half 500 (0)",
    )
    p.add_argument(
        "--retry-after", type=int, default=1, help="whole seconds a 429 asks the client to wait (1)"
    )
    p.add_argument(
        "--hang-rate",
        type=float,
        default=0.0,
        help="share of chat requests that stall for --hang-s more seconds (0)",
    )
    p.add_argument("--hang-s", type=float, default=5.0, help="length of a stall in seconds (5)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the faults and of answers to requests without a seed (0)",
    )
    p.add_argument(
        "--notes",
        action="append",
        default=[],
        metavar="KNOB=RATE",
        help="a knob of the notes model: p_read, p_read_revised, p_stop_early, "
        "p_text_call, p_obey_note (repeat, or join with commas; defaults 0.5, 0.9, "
        "0.2, 0.1, 0.3)",
    )


def _run_standin(args: argparse.Namespace) -> int:
    from ..demo._notes import parse_notes_knobs
    from ..demo._server import serve_until_signal

    return serve_until_signal(
        args.host,
        args.port,
        latency_ms=args.latency_ms,
        error_rate=args.error_rate,
        retry_after=args.retry_after,
        hang_rate=args.hang_rate,
        hang_s=args.hang_s,
        seed=args.seed,
        notes=parse_notes_knobs(args.notes) if args.notes else None,
    )


VERBS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[..., int]]] = {
    "demo": (
        "run an offline demo: the shop stand-in's two versions, or (--suite notes) the "
        "tool-using notes assistant without and with a read-first prefix",
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
    "review": (
        "walk a run's samples in the terminal and record a person's verdict on each",
        _add_review,
        _run_review,
    ),
    "compare": (
        "compare two variants of a results file, paired when the schedule paired them",
        _add_compare,
        _run_compare,
    ),
    "compare-runs": (
        "compare a run with an earlier one, if they are comparable (exit 1 when not)",
        _add_compare_runs,
        _run_compare_runs,
    ),
    "rescore": (
        "score a run's stored answers again with a suite's current checks, calling no model",
        _add_rescore,
        _run_rescore,
    ),
    "merge": (
        "join two runs of the same suite and variants into one results file",
        _add_merge,
        _run_merge,
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
    "import": (
        "turn another tool's eval log (Inspect, promptfoo, lm-eval, CSV) into a results file",
        _add_import,
        _run_import,
    ),
    "standin": (
        "serve the offline stand-ins over HTTP, with latency and faults to order",
        _add_standin,
        _run_standin,
    ),
}


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The command's parser: every verb, or only ``verb`` (all that running it needs)."""
    parser = _Parser(
        prog="evalstats",
        description="Honest statistics for evals of AI assistants.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"evalstats {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for name, (help_text, add, _run) in VERBS.items():
        if verb is None or name == verb:
            add(sub.add_parser(name, help=help_text, description=help_text))
    return parser


#: Verbs that only read files and print: run as the ``evalstats`` command, they end
#: the process as soon as their output is flushed (see :func:`_exit_now`).
READ_ONLY = frozenset({"report", "compare", "compare-runs", "gate", "plan"})


def _exit_now(code: int) -> NoReturn:
    """End the process now that the output is out, skipping interpreter teardown.

    Freeing every object of a large report one by one takes longer than the
    report itself (0.4 s after 100,000 samples); a read-only verb has nothing
    left to write or close, so once stdout and stderr are flushed it leaves.
    """
    import os

    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Called with no arguments (as the ``evalstats`` command), a read-only verb
    ends the process itself once its output is flushed; called with ``argv``
    (from Python), it always returns.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    code = _main(args_list)
    if argv is None and args_list and args_list[0] in READ_ONLY:
        _exit_now(code)
    return code


def _main(args_list: list[str]) -> int:
    previous = _catch_sigterm()
    try:
        if args_list and not args_list[0].startswith("-") and args_list[0] not in VERBS:
            raise UsageError(
                f"evalstats: unknown verb {args_list[0]!r}{suggest(args_list[0], VERBS)}; "
                f"choose one of {', '.join(VERBS)}"
            )
        parser = build_parser(args_list[0] if args_list and args_list[0] in VERBS else None)
        args = parser.parse_args(args_list)
        if args.verb is None:
            parser.print_help()
            return 2
        # What a verb prints may quote answers, reasons and names from files:
        # terminal controls in them are shown, not obeyed.
        stdout, sys.stdout = sys.stdout, VisibleWriter(sys.stdout)
        try:
            return VERBS[args.verb][2](args)
        finally:
            sys.stdout = stdout
    except EvalStatsError as exc:
        line = f"evalstats: error: {exc}" if not isinstance(exc, UsageError) else str(exc)
        if len(line) > _ERROR_LIMIT:  # an error quotes a short prefix, never a whole value
            line = f"{line[:_ERROR_LIMIT]}… ({len(line) - _ERROR_LIMIT} more characters)"
        print(visible(line, keep=""), file=sys.stderr)  # one line, whatever the message holds
        return 2
    except KeyboardInterrupt:
        print("evalstats: interrupted", file=sys.stderr)
        return 130
    except _Terminated:
        print("evalstats: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # The reader went away (``evalstats ... | head``): not an error of ours.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)


class _Terminated(BaseException):
    """SIGTERM outside a run (which handles it itself): start-up, reading, a report."""


def _catch_sigterm() -> Any:
    """Turn SIGTERM into :class:`_Terminated` (cleanups run, one line is printed).

    Returns the handler it replaced, or None when it installed none (not the
    main thread, or someone else's handler is in place).
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        return None

    def terminated(signum: int, frame: Any) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, terminated)
    return previous


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
