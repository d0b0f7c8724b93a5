"""evalstats run: an eval run, fixed or until decided."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._options import (
    UsageError,
    add_about,
    add_force,
    add_planned_for,
    add_progress,
    planned_rates,
    run_options,
)

EXAMPLES = (
    "evalstats run shop --variant v1=standin:shop-v1 --variant v2=standin:shop-v2"
    " --runs 10 --out results.jsonl",
    "evalstats run cases/example.yaml"
    " --variant new=openai:gpt-4o-mini,temperature=0.2 --runs 5 --concurrency 8 --out new.jsonl",
    "evalstats run shop --variant v1=standin:shop-v1 --variant v2=standin:shop-v2"
    " --until-decided --max-runs 30 --out seq.jsonl",
    "evalstats run graded.json --variant v1=standin:shop-v1 --variant v2=standin:shop-v2"
    " --until-decided --on score --max-runs 30 --out seq.jsonl",
    "evalstats run shop --variant v1=standin:shop-v1 --runs 10 --resume results.jsonl",
    "evalstats run shop --variant v1=standin:shop-v1 --runs 10 --shard 2/4 --out shard-2.jsonl",
    "evalstats run shop --variant new=openai:gpt-4o-mini --runs 10 --batch --out batch.jsonl",
)


def add(p: argparse.ArgumentParser) -> None:
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
    add_about(
        p,
        "--until-decided's comparison",
        "these-cases, the only one rounds of the same cases can decide",
    )
    p.add_argument(
        "--level", type=float, default=0.95, help="with --until-decided: confidence level (0.95)"
    )
    add_planned_for(p, "with --until-decided; default none")
    add_until_decided_on(p)
    p.add_argument("--out", metavar="FILE", help="the results file to create (JSONL)")
    add_force(
        p,
        "--out FILE (after a mistake: the new run is written beside it and replaces it "
        "when it ends; a run that writes no sample leaves it as it was)",
    )
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
    p.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="samples in flight at once (8 when a variant is a model service over HTTP, "
        "otherwise 1)",
    )
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
        "recorded in the manifest for variants without price_in=/price_out= of their own; "
        "with --batch, a model's batch_input and batch_output, or its batch share of the "
        "listed price (0 to 1), are recorded too (else a batch costs half)",
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
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="run shard I of N: a fixed share of the selected cases (by a hash of their ids; "
        "a case's pairs never split) into its own results file; evalstats merge joins the N "
        "files into the whole run's",
    )
    p.add_argument(
        "--batch",
        nargs="?",
        type=int,
        const=5_000,
        default=None,
        metavar="SIZE",
        help="send the requests through the provider's batch API (openai:, anthropic:, gemini:), "
        "SIZE requests a batch at most (5000), within the provider's limits; each batch's id "
        "is written to the results file before the run waits on it, so --resume polls it; "
        "a --judge of those providers sends its calls in batches too",
    )
    p.add_argument(
        "--batch-poll-s",
        type=float,
        default=15.0,
        metavar="S",
        help="with --batch: seconds between looks at a batch (15)",
    )
    p.add_argument(
        "--batch-time-limit-s",
        type=float,
        default=25 * 3600.0,
        metavar="S",
        help="with --batch: stop the run when a batch has not ended after S seconds; it is "
        "left at the provider and --resume polls it again (90000, 25 hours)",
    )
    p.add_argument(
        "--batches-in-flight",
        type=int,
        default=2,
        metavar="N",
        help="with --batch: batches submitted and not ended at once, per variant (2)",
    )
    add_progress(p)
    p.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="leave each cmd: sample's workspace in place (its folder is in the "
        "sample record, under trace.kept_workspace)",
    )


def run(args: argparse.Namespace) -> int:
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
    if args.force and (args.resume is not None or args.extend is not None):
        raise UsageError(
            "evalstats run: --force replaces --out FILE with a new run; it goes without "
            "--resume and --extend, which add to the file"
        )
    if args.shard is not None and (args.until_decided or args.extend is not None):
        raise UsageError(
            "evalstats run: --shard goes without --until-decided and --extend (a shard is "
            "one share of a fixed run; merge the shards, then extend the merged file)"
        )
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
        if args.on is not None:
            raise UsageError("evalstats run: --on goes with --until-decided")
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
    import contextlib

    from .._files import replacing
    from ..errors import ResultsFileError

    adds = args.resume is not None or args.extend is not None
    if not adds and not args.force and os.path.lexists(out) and not os.path.isdir(out):
        raise ResultsFileError(
            f"{out} already exists; results are never overwritten: choose a new --out path, "
            f"resume that run with --resume, or add --force to replace it"
        )
    writing = (
        contextlib.nullcontext(out)
        if adds
        else replacing(out, force=args.force, keep=True, error=ResultsFileError)
    )
    try:
        check = getattr(judge, "check", None)
        if check is not None:
            _check_judge(args.judge, check)
        # With --force over an existing file the run is written beside it and
        # takes its name when it ends (stopped or interrupted too: its samples
        # are kept); a run that wrote no sample leaves the old file as it was.
        with writing as target:
            if args.until_decided:
                return _run_until_decided(args, suite, variants, target, described, shown=out)
            outcome = _run_with(args, suite, variants, target, described)
    finally:
        if hasattr(judge, "close"):
            judge.close()
    if target != out:  # written beside the old file, now at its name
        import dataclasses

        outcome = dataclasses.replace(outcome, path=out)
    print(outcome)
    if outcome.status == "interrupted" and outcome.samples_written + outcome.skipped == 0:
        print(f"evalstats: {outcome.reason}; no sample was written", file=sys.stderr)
        return 130
    for line in _summary(out):
        print(line)
    if outcome.status == "interrupted":
        print(
            f"evalstats: {outcome.reason}; continue with the same command"
            + ("" if args.extend else f" and --resume {out}"),
            file=sys.stderr,
        )
        return 130
    return 0


def _check_judge(spec: str, check: Any) -> None:
    """Stop before the run when nothing answers at the judge's URL."""
    from ..errors import ProviderError

    try:
        check()
    except ProviderError as exc:
        raise ProviderError(f"--judge {spec}: {exc} (no sample was run)") from None


def _summary(out: str) -> list[str]:
    """Each variant's pass rate and, with two variants, the comparison's verdict.

    Both from the report and the comparison that ``report`` and ``compare``
    print, on the file as written, so the lines agree with theirs.
    """
    from .._terminal import visible
    from ..deciding._compare_results import compare_results
    from ..errors import EvalStatsError
    from ..presenting._report import report
    from ..reading._source import RunSource

    try:
        source = RunSource.open(out)
        rep = report(source)
    except EvalStatsError:  # nothing measured to summarise: the counts above say so
        return []
    names = [v.variant for v in rep.variants]
    rates = [f"{visible(name)} {rep.variant(name).per_trial}" for name in names]
    lines = [f"pass rate per trial ({100 * rep.level:g}%): " + "; ".join(rates)]
    if len(names) == 2:
        found = compare_results(source, names[0], names[1], level=rep.level)
        if found.primary is not None:
            lines.append(f"{visible(names[1])} against {visible(names[0])}: {found.primary}")
    elif len(names) > 2:
        lines.append(f"compare them with: evalstats compare {out} --baseline {names[0]}")
    return lines


def _run_with(args: argparse.Namespace, suite: Any, variants: Any, out: str, judge: Any) -> Any:
    from ..running._engine import run

    options = run_options(args, judge)
    if args.shard is not None:
        import dataclasses

        from ..running._shards import parse_shard

        shard = parse_shard(args.shard)
        options["selection"] = dataclasses.replace(options["selection"], shard=shard)
    options.update(_batch_options(args))
    return run(
        suite,
        variants,
        runs=args.runs,
        out=out,
        resume=args.resume is not None,
        extend=args.extend is not None,
        **options,
    )


def _run_until_decided(
    args: argparse.Namespace,
    suite: Any,
    variants: list[Any],
    out: str,
    judge: Any,
    *,
    shown: str,
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
        planned_for=planned_rates(args.planned_for),
        on=_until_decided_on(args),
        **run_options(args, judge),
        **_batch_options(args),
    )
    if out != shown:  # written beside the old file, now at its name
        import dataclasses

        result = dataclasses.replace(result, path=shown)
    print(result)
    if result.comparison is not None:
        print(result.comparison.trajectory_text())
    if result.status == "interrupted":
        print(
            f"evalstats: {result.reason}; continue with the same command and --resume {shown}",
            file=sys.stderr,
        )
        return 130
    return 0


def add_until_decided_on(p: argparse.ArgumentParser) -> None:
    """``--on pass|score``: what --until-decided's looks compare."""
    p.add_argument(
        "--on",
        choices=("pass", "score"),
        default=None,
        help="with --until-decided: what each look compares, the pass rates (pass, the "
        "default) or, for a suite with graded checks, the mean scores (score: the "
        "anytime-valid betting comparison of the paired score differences)",
    )


def _until_decided_on(args: argparse.Namespace) -> str:
    """--on, checked against --planned-for (a planned effect is of pass rates)."""
    on = args.on or "pass"
    if on == "score" and args.planned_for is not None:
        raise UsageError(
            "evalstats run: --planned-for plans the pass-rate comparison; --on score goes "
            "without it"
        )
    return on


def _batch_options(args: argparse.Namespace) -> dict[str, Any]:
    """``{"batch": BatchOptions(...)}`` with --batch; nothing without. With
    --until-decided each round's requests go in their own batches, and the look
    after the round waits for them."""
    if args.batch is None:
        return {}
    from ..running.providers._batch import BatchOptions

    return {
        "batch": BatchOptions(
            size=args.batch,
            in_flight=args.batches_in_flight,
            poll_s=args.batch_poll_s,
            time_limit_s=args.batch_time_limit_s,
            prices=_batch_prices(args.prices),
        )
    }


def _batch_prices(path: str | None) -> tuple[tuple[str, float, float], ...]:
    """The batch prices ``--prices FILE`` gives, ``(model, input, output)``, for the
    manifest of a --batch run."""
    if not path:
        return ()
    from ..planning._cost import load_prices

    return tuple(
        (model, batch.input, batch.output)
        for model, price in load_prices(path).items()
        if price.has_batch
        for batch in (price.batched(),)
    )
