"""The ``evalstats`` command: a table of verbs, each in its own module.

Thin on purpose: each verb parses its arguments, calls one library function and
prints the result (a table, or with ``--json`` one JSON document). No statistics
live here. Exit status: 0 done, 1 a gate failed (only ``gate``), 2 bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .._terminal import VisibleWriter, visible
from .._validate import suggest
from ..errors import EvalStatsError
from ._options import _ERROR_LIMIT, Parser, UsageError

__all__ = ["VERBS", "build_parser", "main"]


#: Each verb: its help line, and the module (in this package) that adds its
#: arguments (``add``), runs it (``run``) and holds its ``EXAMPLES``. A verb's
#: module is imported only when that verb runs.
VERBS: dict[str, tuple[str, str]] = {
    "demo": (
        "run an offline demo: the shop stand-in's two versions, or (--suite notes) the "
        "tool-using notes assistant without and with a read-first prefix",
        "_demo",
    ),
    "power": (
        "exact power and false-positive rate of a comparison, per method and trials",
        "_power",
    ),
    "plan": (
        "cases and repeats for a paired eval when cases differ",
        "_plan",
    ),
    "calibrate": (
        "measure a check against a person's verdicts; correct a pass rate for its errors",
        "_calibrate",
    ),
    "report": (
        "pass rates of a results file per case and variant, with the right denominators",
        "_report",
    ),
    "review": (
        "walk a run's samples in the terminal and record a person's verdict on each",
        "_review",
    ),
    "compare": (
        "compare two variants of a results file, paired when the schedule paired them",
        "_compare",
    ),
    "compare-runs": (
        "compare a run with an earlier one, if they are comparable (exit 1 when not)",
        "_compare_runs",
    ),
    "rescore": (
        "score a run's stored answers again with a suite's current checks, calling no model",
        "_rescore",
    ),
    "merge": (
        "join two runs of the same suite and variants, or the shards of one run, into one "
        "results file",
        "_merge",
    ),
    "batches": (
        "list the provider batches a run --batch sent, and their states",
        "_batches",
    ),
    "gate": (
        "exit 1 when a variant misses a pass-rate policy (for CI)",
        "_gate",
    ),
    "changed": (
        "exit 0 when git shows a change under the paths since REF, 1 otherwise",
        "_changed",
    ),
    "run": (
        "run a suite's cases with each variant, writing every sample to a results file",
        "_run",
    ),
    "import": (
        "turn another tool's eval log (Inspect, promptfoo, lm-eval, CSV) into a results file",
        "_import",
    ),
    "standin": (
        "serve the offline stand-ins over HTTP, with latency and faults to order",
        "_standin",
    ),
}


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The command's parser: every verb, or only ``verb`` (all that running it needs)."""
    parser = Parser(
        prog="evalstats",
        description="Honest statistics for evals of AI assistants.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"evalstats {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=Parser)
    for name, (help_text, _module) in VERBS.items():
        if verb is None:  # the list of verbs needs only their help lines
            sub.add_parser(name, help=help_text)
        elif name == verb:
            verb_module = _verb_module(name)
            p = sub.add_parser(
                name,
                help=help_text,
                description=help_text,
                epilog=_examples(verb_module.EXAMPLES),
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
            verb_module.add(p)
    return parser


def _verb_module(verb: str) -> Any:
    import importlib

    return importlib.import_module(f".{VERBS[verb][1]}", __package__)


def _examples(examples: Sequence[str]) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in examples)


#: Verbs that only read files and print: run as the ``evalstats`` command, they end
#: the process as soon as their output is flushed (see :func:`_exit_now`).
READ_ONLY = frozenset({"report", "compare", "compare-runs", "gate", "plan"})

#: Read-only verbs that also run without the cyclic garbage collector (see
#: :func:`main`); not ``plan``, whose simulations are the planner's to manage.
NO_COLLECTOR = READ_ONLY - {"plan"}


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
    if argv is None and args_list and args_list[0] in READ_ONLY:
        _one_blas_thread()
        if args_list[0] in NO_COLLECTOR:
            # Their objects form no cycles worth collecting, and the process ends
            # once its output is out; the collector would only walk the objects of
            # each import (numpy's, mostly): about 11 ms of a compare.
            import gc

            gc.disable()
    code = _main(args_list)
    if argv is None and args_list and args_list[0] in READ_ONLY:
        _exit_now(code)
    return code


#: The thread pools of the linear algebra libraries numpy may load, by the
#: variable that sizes them.
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread() -> None:
    """Size the command's linear algebra to one thread, unless the caller chose.

    Every product the verbs take is of a few vectors; a second BLAS thread only
    spins waiting for work (``compare`` on 100,000 samples took more CPU than
    wall time on two cores) and splits a long dot product's sum across threads,
    so that its last bits depend on the machine's cores. Set before numpy is
    first imported, which reads it then; a child (the planner's simulation
    workers) inherits it. Only for the read-only verbs: ``run`` starts the
    user's own commands, which keep the environment they were given.
    """
    import os

    if "numpy" not in sys.modules:
        for name in _BLAS_THREADS:
            os.environ.setdefault(name, "1")


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
            return int(_verb_module(args.verb).run(args))
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
