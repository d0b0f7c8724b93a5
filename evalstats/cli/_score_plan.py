"""The score options of ``evalstats plan`` and ``evalstats power``: planning for mean scores.

``--score-a`` and ``--score-b`` (A's and B's mean scores in [0, 1]),
``--between`` (the SD of case means), ``--within`` (the SD of a case's
runs), ``--correlation`` and ``--margin`` describe a
:class:`~evalstats.planning._score_plan.ScoreModel`; with ``plan --from``
the model is fitted from a pilot whose samples carry scores.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from ._options import UsageError

#: The options of the pass-rate planner that a score plan does not take, and
#: how they read on the command line.
_BINARY = (
    ("pa", "--pa"),
    ("pb", "--pb"),
    ("icc", "--icc"),
    ("spread", "--spread"),
    ("trials", "--trials"),
    ("approximate", "--approximate"),
    ("sequential", "--sequential"),
    ("planned_for", "--planned-for"),
    ("plot", "--plot"),
)

#: The score options, as attribute and option.
_SCORE = (
    ("score_a", "--score-a"),
    ("score_b", "--score-b"),
    ("between", "--between"),
    ("within", "--within"),
    ("correlation", "--correlation"),
    ("margin", "--margin"),
)

_NAMES = {
    "mean_a": "--score-a",
    "mean_b": "--score-b",
    "between": "--between",
    "within": "--within",
    "correlation": "--correlation",
}


def add_score_model(p: argparse.ArgumentParser, between: Any = None) -> None:
    """The options of a score model (``between``: the group ``--between`` goes in)."""
    p.add_argument(
        "--score-a",
        type=float,
        metavar="MEAN",
        help="plan for graded scores: A's mean score in [0, 1] (with --score-b, --between, "
        "--within)",
    )
    p.add_argument(
        "--score-b",
        metavar="MEAN|+GAIN" + ("|observed" if between is not None else ""),
        help="B's mean score in [0, 1], or a gain over A (+0.05)"
        + (", or with --from observed (the pilot's own B)" if between is not None else ""),
    )
    (between if between is not None else p).add_argument(
        "--between",
        type=float,
        metavar="SD",
        help="with scores: the SD of case means (how much cases differ)",
    )
    p.add_argument(
        "--within",
        type=float,
        metavar="SD",
        help="with scores: the SD of a case's repeated runs",
    )
    p.add_argument(
        "--correlation",
        type=float,
        help="with scores: correlation of A's and B's case means (1: cases rank alike)",
    )
    p.add_argument(
        "--margin",
        type=float,
        help="with scores: plan for the non-inferiority gate at this margin on the [0, 1] "
        "scale (the chance it passes B)",
    )
    if between is not None:  # plan: the claim the design is sized for
        from ._options import add_about

        add_about(p, "a score plan's design", "default these-cases; the other is shown beside")


def wants_scores(args: argparse.Namespace) -> bool:
    """Whether a score option was given (``--about`` is one of plan's)."""
    return any(getattr(args, name, None) is not None for name, _ in (*_SCORE, ("about", "")))


def _refuse_binary(args: argparse.Namespace, verb: str) -> None:
    for name, option in _BINARY:
        value = getattr(args, name, None)
        if value not in (None, False):
            raise UsageError(
                f"evalstats {verb}: {option} is for pass rates; mean scores are planned with "
                "--score-a, --score-b, --between and --within"
            )


def _mean_of_b(text: str | None, mean_a: float | None, *, pilot: bool) -> Any:
    """--score-b as a mean, ("gain", g) or "observed"."""
    if text is None:
        raise UsageError(
            "evalstats plan: give --score-b, B's mean score (0.7), a gain over A (+0.05)"
            + (", or observed" if pilot else "")
        )
    t = text.strip()
    if t.lower() == "observed":
        if not pilot:
            raise UsageError("evalstats plan: --score-b observed goes with --from (a pilot run)")
        return "observed"
    try:
        value = float(t)
    except ValueError:
        raise UsageError(
            f"--score-b={text!r} must be a mean score such as 0.7 or a gain such as +0.05"
        ) from None
    if t.startswith("+"):
        if not 0.0 < value < 1.0:
            raise UsageError(f"--score-b={text!r} must be a gain over A between +0 and +1")
        if mean_a is None:
            return ("gain", value)
        if mean_a + value > 1.0:
            raise UsageError(
                f"--score-b={text!r} puts B above 1 with A's mean score {mean_a:g}: give a "
                f"gain of at most +{1.0 - mean_a:.3g}"
            )
        return mean_a + value
    return value


def score_model(args: argparse.Namespace, verb: str) -> Any:
    """The score model the options describe (``--from`` aside)."""
    from ..planning._score_plan import ScoreModel

    _refuse_binary(args, verb)
    missing = [o for n, o in _SCORE[:4] if getattr(args, n, None) is None]
    if missing:
        raise UsageError(
            f"evalstats {verb}: a score plan needs --score-a, --score-b, --between and "
            f"--within (missing {', '.join(missing)})"
        )
    mean_b = _mean_of_b(args.score_b, args.score_a, pilot=False)
    return ScoreModel(
        args.score_a,
        mean_b,
        args.between,
        args.within,
        1.0 if args.correlation is None else args.correlation,
        names=_NAMES,
    )


def _pilot_model(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The model fitted from ``--from``, the run, and its scores per case (A's, B's)."""
    from dataclasses import replace

    from ..errors import InvalidArgument
    from ..planning._score_plan import fit_score_model, pilot_scores
    from ._options import load_run

    if args.within is not None:
        raise UsageError("evalstats plan: --within is fitted from --from FILE (the pilot); drop it")
    want = _mean_of_b(args.score_b, None, pilot=True)
    source = load_run([args.from_file], args)
    try:
        per = pilot_scores(source, variants=args.variant)
        fitted = fit_score_model(per[0], per[1] if len(per) > 1 else None)
    except InvalidArgument as e:
        raise InvalidArgument(f"--from {args.from_file}: {e}") from None
    names = {
        **_NAMES,
        "between": "A's between-case SD (fitted)",
        "within": "A's within-case SD (fitted)",
        "between_b": "B's between-case SD (fitted)",
        "within_b": "B's within-case SD (fitted)",
    }
    mean_a = fitted.mean_a if args.score_a is None else args.score_a
    if want == "observed":
        mean_b = fitted.mean_b
    elif isinstance(want, tuple):
        mean_b = mean_a + want[1]
        if mean_b > 1.0:
            raise UsageError(
                f"--score-b={args.score_b!r} puts B above 1 with A's mean score {mean_a:.3g}"
            )
    else:
        mean_b = want
    correlation = fitted.correlation if args.correlation is None else args.correlation
    model = replace(fitted, mean_a=mean_a, mean_b=mean_b, correlation=correlation, names=names)
    return model, source, per


def _posterior(args: argparse.Namespace, per: list[Any]) -> Any:
    """What the pilot leaves uncertain, with B's mean as --score-b asks."""
    from ..errors import InvalidArgument
    from ..planning._pilot import Wanted
    from ..planning._score_pilot import ScorePosterior

    want = _mean_of_b(args.score_b, None, pilot=True)
    if want == "observed":
        wanted = Wanted("observed")
    elif isinstance(want, tuple):
        wanted = Wanted("gain", want[1])
    else:
        wanted = Wanted("rate", want)
    try:
        return ScorePosterior(
            per[0],
            per[1] if len(per) > 1 else None,
            wanted=wanted,
            mean_a=args.score_a,
            correlation=args.correlation,
            margin=args.margin,
            seed=args.seed,
        )
    except InvalidArgument as e:
        raise InvalidArgument(f"--from {args.from_file}: {e}") from None


def run_plan(args: argparse.Namespace) -> int:
    """``evalstats plan`` with score options."""
    from ..errors import InvalidArgument
    from ..planning._score_plan import checked_options, score_plan
    from ._options import subset

    if all(getattr(args, name, None) is None for name, _ in _SCORE):
        raise UsageError(
            "evalstats plan: --about goes with mean scores (--score-a, --score-b, --between, "
            "--within, or --from a scored pilot with --score-b)"
        )
    _refuse_binary(args, "plan")
    check_cost(args, sequential=False)
    certainty = getattr(args, "certainty", None)
    if certainty is not None:
        if not args.from_file:
            raise UsageError("evalstats plan: --certainty goes with --from (a scored pilot run)")
        if not 0.0 < certainty < 1.0:
            raise UsageError(
                f"evalstats plan: --certainty={certainty:g} must be above 0 and below 1 (the "
                "share of the models the pilot allows that the design should serve, such as 0.8)"
            )
    options = dict(
        cases=args.cases,
        repeats=args.repeats,
        power=args.power,
        level=args.level,
        margin=args.margin,
        about=args.about or "these_cases",
        experiments=args.experiments,
        seed=args.seed,
    )
    # The options are refused as themselves, before a pilot's errors are named by its file.
    checked_options(**options)
    source = per = None
    if args.from_file:
        model, source, per = _pilot_model(args)
    else:
        if subset(args) is not None:
            raise UsageError(
                "evalstats plan: --case, --tag and --variant choose part of --from FILE"
            )
        model = score_model(args, "plan")
    if model.mean_b - model.mean_a + (args.margin or 0.0) <= 0.0:
        what = "the pilot's B" if args.score_b.strip().lower() == "observed" else "--score-b"
        raise UsageError(
            f"evalstats plan: {what} ({model.mean_b:.3g}) is not above A ({model.mean_a:.3g})"
            + ("" if args.margin is None else f" less --margin {args.margin:g}")
            + ": nothing to detect; give the mean score B should reach (--score-b)"
        )
    if per is None:
        result = score_plan(model, **options)
    else:
        from ..planning._score_pilot import pilot_score_plan

        posterior = _posterior(args, per)
        try:
            result = pilot_score_plan(model, posterior, certainty=certainty, **options)
        except InvalidArgument as e:
            raise InvalidArgument(f"--from {args.from_file}: {e}") from None
    return show_plan(result, args, source)


def check_cost(args: argparse.Namespace, *, sequential: bool) -> None:
    """``plan``'s cost options checked before anything is planned: ``--batch`` and
    ``--batch-cost-per-call`` go with ``--cost-per-call`` (``--batch`` also with
    ``--sequential``, when the plan can be sequential), and a bad price is refused."""
    if args.batch and args.cost_per_call is None and not (sequential and args.sequential):
        raise UsageError(
            "evalstats plan: --batch goes with --cost-per-call DOLLARS"
            + (" (or --sequential)" if sequential else "")
        )
    if args.batch_cost_per_call is not None and args.cost_per_call is None:
        raise UsageError(
            "evalstats plan: --batch-cost-per-call goes with --cost-per-call DOLLARS (the "
            "listed price, shown beside the batch price)"
        )
    if args.cost_per_call is not None:
        from ..planning._cost import design_cost

        design_cost(None, args.cost_per_call, batch_cost_per_call=args.batch_cost_per_call)


def show_plan(result: Any, args: argparse.Namespace, source: Any) -> int:
    """A plan printed (text or ``--json``), with its cost when ``--cost-per-call`` is
    given: through a batch API with ``--batch``, at ``--batch-cost-per-call`` when given."""
    from ._options import print_json, show_result, state_selection

    if args.cost_per_call is None:
        show_result(result, args, source)
        return 0
    from ..planning._cost import design_cost

    cost = design_cost(
        result.calls,
        args.cost_per_call,
        batch=args.batch,
        batch_cost_per_call=args.batch_cost_per_call,
    )
    if source is not None:
        from ..planning._cost import judge_calls_per_sample

        # A pilot whose judged checks called a judge: its calls are not in the price a call.
        cost = dataclasses.replace(cost, judge_calls_per_sample=judge_calls_per_sample(source))
    if args.json:
        print_json({**result.to_dict(), "cost": cost.to_dict()}, "plan", source)
    else:
        state_selection(source)
        print(f"{result}\n{cost}")
    return 0


def add_power_design(p: argparse.ArgumentParser) -> None:
    """``power``'s design options for scores."""
    p.add_argument(
        "--cases",
        type=int,
        nargs="+",
        help="with scores: cases per variant (one or more; with --repeats)",
    )
    p.add_argument(
        "--repeats", type=int, default=None, help="with scores: runs per case and variant (1)"
    )


def run_power(args: argparse.Namespace) -> int:
    """``evalstats power`` with score options: each design's simulated power."""
    from ..planning._score_plan import score_power
    from ._options import print_json

    model = score_model(args, "power")
    if not args.cases:
        raise UsageError("evalstats power: with scores give --cases (one or more)")
    repeats = 1 if args.repeats is None else args.repeats
    results = [
        score_power(
            model,
            cases,
            repeats,
            level=args.level,
            margin=args.margin,
            experiments=args.experiments,
            seed=args.seed,
        )
        for cases in args.cases
    ]
    if args.json:
        print_json({"kind": "scores", "designs": [r.to_dict() for r in results]}, "power")
    else:
        print("\n\n".join(str(r) for r in results))
    return 0


def refuse_scores_only(args: argparse.Namespace, verb: str) -> None:
    """A design option of scores given without the score model."""
    for name, option in (("cases", "--cases"), ("repeats", "--repeats")):
        if getattr(args, name, None) is not None:
            raise UsageError(
                f"evalstats {verb}: {option} goes with mean scores (--score-a, --score-b, "
                "--between, --within); pass rates take --trials"
            )
