"""Options every verb shares, defined once (as pip keeps its cmdoptions).

A verb's module adds its arguments with these and prints with :func:`show_result`;
a usage error is :class:`UsageError`, printed as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .._terminal import visible
from ..errors import EvalStatsError, InvalidArgument


class UsageError(EvalStatsError):
    """Bad command-line usage; printed as one line, exit status 2."""


# Characters of an error message the command prints at most.
_ERROR_LIMIT = 1000


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that reports a usage error as one line and exit 2.

    Options are never abbreviated: ``plan --a`` is not taken for ``--approximate``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


#: The version of every ``--json`` document's layout; a reader checks
#: ``document["schema"] == "evalstats.<verb>/2"`` before trusting its fields
#: (version 2 names the claim ``about``, where version 1 said ``scope``).
JSON_SCHEMA_VERSION = 2


#: Pieces of a JSON document joined for each write (about 200 kB of text).
#: ``benchmarks/crossovers.py`` times print_json of 10,000 cases (950,008 pieces)
#: through the CLI's VisibleWriter: one piece a write (as json.dump) is 2.3x
#: slower; from 16 pieces a write to the whole document at once, 0.82-1.07x of
#: this setting's time, within the noise of 2 shared cores.
_PIECES = 4096


def print_json(document: Any, verb: str, source: Any = None) -> None:
    """Print ``document`` as the verb's JSON; with the ``source`` of a narrowed
    run (``--case``, ``--tag``, ``--variant``) it says, under ``"selection"``,
    what was kept."""
    if isinstance(document, dict):
        selected = getattr(source, "selected", None)
        if selected is not None:
            document = {**document, "selection": selected.to_dict()}
        document = {"schema": f"evalstats.{verb}/{JSON_SCHEMA_VERSION}", **document}
    # The text as json.dump writes it, in a few large writes: json.dump writes each
    # of its pieces (1.5 million for a report of 10,000 cases), and stdout may be a
    # VisibleWriter that scans each; joining them all at once would hold them all.
    encoder = json.JSONEncoder(indent=2, allow_nan=False, default=json_default)
    pieces = encoder.iterencode(document)
    while batch := list(itertools.islice(pieces, _PIECES)):
        sys.stdout.write("".join(batch))
    sys.stdout.write("\n")


def show_result(result: Any, args: argparse.Namespace, source: Any = None) -> None:
    """Print a verb's result: its table, or with ``--json`` one JSON document whose
    ``schema`` field names the verb and the layout's version. With the ``source``
    of a narrowed run, the selection is stated: a line above the table, or the
    document's ``"selection"``."""
    if args.json:
        print_json(result.to_dict(), args.verb, source)
    else:
        state_selection(source)
        print(result)


def state_selection(source: Any) -> None:
    """Print the line that says what part of the run a table is of (if narrowed)."""
    selected = getattr(source, "selected", None)
    if selected is not None:
        print(visible(str(selected), keep=""))


def given(**values: Any) -> dict[str, Any]:
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


def add_about(p: argparse.ArgumentParser, what: str, default: str) -> None:
    """The one ``--about`` option: which claim ``what`` makes (``default`` says the default)."""
    p.add_argument(
        "--about",
        type=_about,
        metavar="these-cases|cases-like-these",
        help=f"the claim of {what}: these-cases (would these cases, run again, pass more often) "
        f"or cases-like-these (would cases drawn the way these were); {default}",
    )
    renamed(p, "--scope", "--about these-cases|cases-like-these")


def renamed(p: argparse.ArgumentParser, old: str, now: str, *, takes_value: bool = True) -> None:
    """Refuse ``old``, an option of earlier versions, in one line naming ``now``."""
    p.add_argument(old, nargs="?" if takes_value else 0, action=_Renamed, now=now)


def add_force(p: argparse.ArgumentParser, what: str) -> None:
    """``--force``: replace ``what`` if it exists (without it, an existing file is refused)."""
    p.add_argument(
        "--force",
        action="store_true",
        help=f"replace {what} if it exists (without --force an existing file is refused "
        "and left as it was; a file is always written whole or not at all)",
    )


def add_level_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def json_default(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal, so "
        "pipes and CI logs get none)",
    )
    renamed(p, "--quiet", "--no-progress", takes_value=False)


def wants_progress(args: argparse.Namespace) -> bool:
    """Whether to draw a progress bar: asked for, or stderr is a terminal."""
    if getattr(args, "json", False):
        return False
    if args.progress is not None:
        return bool(args.progress)
    return sys.stderr.isatty()


def add_sequential(p: argparse.ArgumentParser, budget: str, *, simulation: bool = True) -> None:
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


def planned_rates(text: str | None, rates: tuple[float, float] | None = None) -> Any:
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


def add_planned_for(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--planned-for",
        metavar="PA,PB",
        help="the pass rates of A and B the sequential design was planned for: its "
        "e-process (these cases) concentrates on that effect, deciding earlier when the "
        f"plan is about right and staying valid when it is not ({default})",
    )


def show_all(results: list[Any], args: argparse.Namespace) -> None:
    if args.json:
        print_json({"sequential": [r.to_dict() for r in results]}, args.verb)
    else:
        print("\n\n".join(str(r) for r in results))


def add_source_options(p: argparse.ArgumentParser) -> None:
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
        "(roles: case, variant, repeat, pass, score, latency_s, answer, model)",
    )
    g.add_argument(
        "--scale",
        metavar="LOW,HIGH",
        help="the scale of the log's scores, such as 1,5: each is mapped to 0 to 1 and kept "
        "beside pass/fail (default: scores from 0 to 1 as they are; others need it)",
    )
    g.add_argument(
        "--scorer",
        metavar="NAME",
        help="for Inspect logs: the scorer that decides (NAME/KEY for one metric "
        "of a scorer whose values are dictionaries)",
    )
    g.add_argument(
        "--metric",
        metavar="NAME[,FILTER]",
        help="for lm-eval samples: the metric (and filter) that decides",
    )


def add_subset(p: argparse.ArgumentParser, *, variants: bool = True) -> None:
    """``--case``, ``--tag`` (and ``--variant``): read only part of the run. Every
    reading verb takes them (see :class:`~evalstats.reading._source.Subset`)."""
    g = p.add_argument_group("reading part of the run")
    g.add_argument(
        "--case",
        action="append",
        metavar="ID",
        help="only the cases whose id matches (a shell pattern such as 'order*'; repeatable)",
    )
    g.add_argument(
        "--tag",
        action="append",
        metavar="TAG",
        help="only the cases with this tag (repeatable; with --case, both must hold)",
    )
    if variants:
        g.add_argument(
            "--variant",
            action="append",
            metavar="NAME",
            help="only this variant (repeatable)",
        )


def subset(args: argparse.Namespace) -> Any:
    """The part of the run the command reads, or None for all of it."""
    from ..reading._source import Subset

    variants = getattr(args, "variant", None)
    return Subset.of(
        cases=getattr(args, "case", None),
        tags=getattr(args, "tag", None),
        variants=variants if isinstance(variants, list) else None,
    )


def source_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "format": args.format,
        "pass_threshold": args.pass_threshold,
        "columns": args.columns,
        "scorer": args.scorer,
        "metric": args.metric,
        "scale": args.scale,
    }


FILE_HELP = (
    "a results file written by run, or another tool's log: an Inspect AI log (.eval, "
    ".json), a promptfoo results.json, lm-eval samples_*.jsonl, a CSV/Parquet table"
)


def load_run(paths: Sequence[str], args: argparse.Namespace, *, records: bool = False) -> Any:
    """The run to analyse, opened once for the command: one file, or several runs of
    the same task (or Inspect logs of the same samples; a folder of them) joined
    (a :class:`~evalstats.reading._source.RunSource`), narrowed to the part
    ``--case``, ``--tag`` and ``--variant`` keep.

    One evalstats results file is read as the source needs it: counted as it is
    read, or with ``records`` read whole once; anything else is read into a Results.
    """
    from ..reading._logs import load_results, load_run, log_files, merge
    from ..reading._source import RunSource

    left_out: list[str] = []
    paths = [found for path in paths for found in log_files(path, left_out=left_out)]
    for line in left_out:  # a folder of logs is its Inspect logs: say what else it holds
        print(f"evalstats: warning: {line}", file=sys.stderr)
    options = source_options(args)
    plain = not any(v is not None for v in options.values())
    part = subset(args)
    if len(paths) == 1 and plain:
        return RunSource.open(paths[0], records=records, subset=part)  # the file opened once
    if len(paths) == 1:
        return RunSource(load_run(paths[0], **options), subset=part)
    runs = [load_results(path, **options) for path in paths]
    return RunSource(merge(runs), subset=part)


def run_options(args: argparse.Namespace, judge: Any) -> dict[str, Any]:
    """The engine's options that a fixed run and a run until decided share."""
    from ..running._options import Limits, Retries, Selection

    return {
        "selection": Selection(
            case_ids=args.case,
            tags=args.tag,
            limit=args.limit,
            include_holdout=args.include_holdout,
        ),
        "retries": Retries(args.retries, stop_after_unmeasured=args.stop_after_unmeasured or None),
        "limits": Limits(args.concurrency, **given(timeout=args.timeout)),
        "seed": args.seed,
        "progress": wants_progress(args),
        "judge": judge,
    }
