"""``evalstats demo``: the shop stand-in, version 1 against version 2, end to end.

Both versions of the offline shop assistant answer the four shop cases
``runs`` times each, through the same engine a real eval uses: a paired
schedule in alternating order, every answer scored by the suite's checks, every
sample written to a ``results.jsonl`` beside two figures. The demo then reads
that file back and compares the versions four ways (the overlap rule tutorials
use, Newcombe's difference interval, the paired score test (Tango's) about
these cases, and the case-clustered interval about cases like these), so a newcomer
sees why "72% against 88%" on 40 trials may still be luck.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import whole_number
from ..deciding._compare_results import compare_results
from ..errors import InvalidArgument
from ..presenting._report import Report, report
from ..results._file import Results, read_results
from ..stats._compare import Comparison, compare_counts
from ._shop import SLIP_RATES

__all__ = ["DemoResult", "run_demo"]

#: The comparisons shown side by side, with what each one is.
METHODS = {
    "overlap": "Wilson intervals don't overlap (the rule tutorials use)",
    "newcombe": "difference interval excludes 0 (Newcombe)",
    "mcnemar": "paired score test on (case, run) pairs, about these cases (Tango)",
    "clustered": "case-clustered paired difference, about cases like these",
}
VARIANTS = ("v1", "v2")
_DISPLAY = {
    "overlap": "the overlap rule",
    "newcombe": "Newcombe",
    "mcnemar": "the paired score test",
    "clustered": "the clustered comparison",
}


@dataclass(frozen=True)
class DemoResult:
    """What ``evalstats demo`` ran and found.

    ``directory`` holds ``results.jsonl`` (every sample, readable with
    ``evalstats report``) and the figures listed in ``plots``; it is None
    when the demo ran without ``out`` (its temporary folder is gone, and
    ``results`` holds every sample in memory).
    """

    runs: int
    seed: int
    level: float
    directory: Path | None
    results: Results
    report: Report
    comparisons: dict[str, Comparison]
    plots: tuple[Path, ...] = ()
    over_http: str | None = None
    cost: Any = None

    @property
    def results_file(self) -> Path | None:
        return None if self.directory is None else self.directory / "results.jsonl"

    @property
    def meaning(self) -> str:
        """One plain sentence (or two) on what the comparisons mean."""
        a, b = (self.report.variant(v) for v in VARIANTS)
        says = [m for m, c in self.comparisons.items() if c.verdict == "b_better"]
        against = [m for m, c in self.comparisons.items() if c.verdict == "a_better"]
        unsure = [m for m, c in self.comparisons.items() if c.verdict == "cant_tell"]
        truth = (
            f"The stand-in's true pass rates are {100 * (1 - SLIP_RATES[1]):.0f}% and "
            f"{100 * (1 - SLIP_RATES[2]):.0f}%."
        )
        counts = f"version 1 passed {a.passes}/{a.measured}, version 2 {b.passes}/{b.measured}"
        lead = f"With {a.measured} trials per version ({counts}), "
        if not says and not against:
            sizes = sorted(
                max(1, math.ceil(100 * c.detectable - 1e-9))
                for c in self.comparisons.values()
                if c.detectable is not None and not math.isnan(c.detectable)
            )
            if not sizes:
                detect = "these trials are too few to detect any difference reliably"
            elif sizes[0] == sizes[-1]:
                detect = f"these trials would usually detect only a difference of {sizes[0]} "
                detect += "points or more"
            else:
                detect = (
                    f"these trials would usually detect only a difference of {sizes[0]} to "
                    f"{sizes[-1]} points or more, depending on the method"
                )
            return (
                f"{lead}no method can tell yet whether version 2 is better: a gap this size "
                f"could be luck, and {detect}. {truth}"
            )
        parts = []
        if says:
            parts.append(
                f"{_names(says)} {'says' if len(says) == 1 else 'say'} version 2 is better"
            )
        if against:
            parts.append(
                f"{_names(against)} {'says' if len(against) == 1 else 'say'} version 1 is better"
            )
        if unsure:
            parts.append(f"{_names(unsure)} can't tell yet")
        text = lead + "; ".join(parts) + "."
        if "overlap" in unsure and says:
            text += (
                " The overlap rule asks for far more evidence than a difference interval "
                "or a paired test, so it misses real improvements more often."
            )
        return f"{text} {truth}"

    def __str__(self) -> str:
        rep = self.report
        cases = rep.case_ids
        width = max(len("overall"), *(len(c) for c in cases))
        level = f"{100 * self.level:g}%"
        how = f" over HTTP ({self.over_http})" if self.over_http else ""
        lines = [
            f"evalstats demo: the offline shop assistant{how}, version 1 (slips on "
            f"{100 * SLIP_RATES[1]:.0f}% of replies) against version 2 "
            f"({100 * SLIP_RATES[2]:.0f}%), {len(cases)} cases x {self.runs} runs, "
            f"seed {self.seed}.",
            "",
            f"{'case':<{width}}  version  passed   {'pass rate (' + level + ' Wilson)':<24}  "
            "checks failed most often",
        ]
        rows = {(r.case, r.variant): r for r in rep.cases}
        for case in cases:
            for variant in VARIANTS:
                row = rows[(case, variant)]
                problems = ", ".join(f"{name} x{n}" for name, n, _ in row.problems[:2])
                lines.append(
                    f"{case:<{width}}  {variant:<7}  {row.passes:>3}/{row.measured:<4}  "
                    f"{row.interval!s:<24}  {problems or '-'}".rstrip()
                )
        for variant in VARIANTS:
            v = rep.variant(variant)
            lines.append(
                f"{'overall':<{width}}  {variant:<7}  {v.passes:>3}/{v.measured:<4}  "
                f"{v.per_trial!s:<24}  cases like these: {v.clustered}"
            )
        lines += ["", "Is version 2 better than version 1?"]
        for method, comparison in self.comparisons.items():
            lines.append(f"  {method:<10} {METHODS[method]}")
            lines.append(f"             {comparison}")
        lines += ["", self.meaning, ""]
        if self.cost is not None:
            lines.append(_cost_line(self.cost))
            lines.append("")
        if self.results_file is None:
            lines.append(
                "Add --out-dir DIR to keep every sample (and the figures) for `evalstats report`."
            )
        else:
            lines.append(f"Every sample is in {self.results_file}; `evalstats report` reads it.")
        if self.plots:
            lines.append("Figures: " + ", ".join(str(p) for p in self.plots))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready document: settings, the report, the comparisons, the files."""
        return {
            "runs": self.runs,
            "seed": self.seed,
            "level": self.level,
            "over_http": self.over_http,
            "slip_rates": {f"v{v}": rate for v, rate in SLIP_RATES.items()},
            "results_file": None if self.results_file is None else str(self.results_file),
            "plots": [str(p) for p in self.plots],
            "report": self.report.to_dict(),
            "comparisons": {m: c.to_dict() for m, c in self.comparisons.items()},
            "meaning": self.meaning,
            "cost": None if self.cost is None else self.cost.to_dict(),
        }


#: The example price the demo quotes, dollars per million tokens (OpenAI's list
#: price of gpt-4o-mini, input and output).
EXAMPLE_PRICES = (0.15, 0.60)


def _cost_line(cost: Any) -> str:
    from ..planning._cost import _dollars

    p_in, p_out = EXAMPLE_PRICES
    tokens = sum(v.input_tokens + v.output_tokens for v in cost.variants)
    how = (
        "tokens estimated from the text at 4 characters a token, as the in-process "
        "stand-in reports none"
        if cost.estimated
        else "tokens as the server reported them"
    )
    return (
        f"At an example price of ${p_in:g} in and ${p_out:g} out per million tokens, this "
        f"run would cost about {_dollars(cost.total)} ({tokens:,} tokens; {how}), "
        f"{_batch_estimate(cost)}; `evalstats report --prices FILE` prices a real run."
    )


def _batch_estimate(cost: Any) -> str:
    """What the demo's run would cost through a provider's batch API."""
    from ..planning._cost import Prices, _dollars

    batch = Prices(*EXAMPLE_PRICES).batched()
    total = sum(batch.cost(v.input_tokens, v.output_tokens) for v in cost.variants)
    return f"or about {_dollars(total)} through a batch API (`run --batch`, at half the price)"


def _names(methods: list[str]) -> str:
    names = [_DISPLAY.get(m, m) for m in methods]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@contextlib.contextmanager
def _work_directory(out: str | Path | None, prefix: str) -> Iterator[Path]:
    """The folder ``out``, created if missing; without one, a temporary folder named
    ``prefix...`` that is removed on leaving, so a demo leaves nothing behind."""
    if out is None:
        with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
            yield Path(scratch)
        return
    directory = Path(out)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InvalidArgument(f"out={str(out)!r}: cannot create it: {error.strerror}") from None
    yield directory


def run_demo(
    *,
    runs: int = 10,
    seed: int = 0,
    level: float = 0.95,
    out: str | Path | None = None,
    plots: bool = True,
    progress: bool = False,
    over_http: bool = False,
    base_url: str | None = None,
    force: bool = False,
) -> DemoResult:
    """Run the shop demo through the engine and compare the two versions.

    Parameters
    ----------
    runs : int
        Runs of each case per version.
    seed : int
        Seeds every sample (see :func:`evalstats.running._engine.sample_seed`), so a
        seed reproduces the demo.
    level : float
        Confidence level of every interval.
    out : path, optional
        Folder for ``results.jsonl`` and the figures. Without it the demo runs
        in a temporary folder that it removes, keeps the samples in memory only
        and writes no figures. An existing ``results.jsonl`` there is (without ``force``) never
        overwritten: the demo stops with an error instead.
    plots : bool
        Write the forest plot and the paired-difference plot (only with ``out``).
    progress : bool
        Show a progress bar on stderr.
    over_http : bool
        Reach the stand-ins over HTTP, through the ``openai`` provider and a
        stand-in server started on 127.0.0.1 for the demo: the path a real
        model takes, instead of calling them in-process.
    base_url : str, optional
        With ``over_http``, use the ``evalstats standin serve`` server already
        at this base URL (for example ``http://127.0.0.1:8000/v1``).

    Examples
    --------
    >>> import tempfile
    >>> result = run_demo(runs=5, seed=1, out=tempfile.mkdtemp(), plots=False)
    >>> [result.report.variant(v).measured for v in ("v1", "v2")]
    [20, 20]
    >>> sorted(result.comparisons)
    ['clustered', 'mcnemar', 'newcombe', 'overlap']
    """
    runs = whole_number("runs", runs)
    seed = whole_number("seed", seed, minimum=0)
    if base_url is not None and not over_http:
        raise InvalidArgument(f"base_url={base_url!r} is for over_http=True")
    with _work_directory(out, "evalstats-demo-") as directory:
        results, base_url = _run_shop(
            directory, runs, seed, progress, over_http, base_url, force=force
        )
        figures: tuple[Path, ...] = ()
        if plots and out is not None:
            from ..presenting._plots import report_plots

            figures = report_plots(results, directory, level=level, force=force)
    rep = report(results, level=level)
    a, b = (rep.variant(v) for v in VARIANTS)
    paired = compare_results(results, *VARIANTS, method="mcnemar", level=level)
    comparisons = {
        method: compare_counts(
            a.passes, a.measured, b.passes, b.measured, method=method, level=level
        )
        for method in ("overlap", "newcombe")
    }
    if paired.these_cases is not None:
        comparisons["mcnemar"] = paired.these_cases
    if paired.cases_like_these is not None:
        comparisons["clustered"] = paired.cases_like_these
    kept = None if out is None else directory
    from ..planning._cost import Prices, cost_summary

    cost = cost_summary(results, default=Prices(*EXAMPLE_PRICES), estimate=True)
    return DemoResult(runs, seed, level, kept, results, rep, comparisons, figures, base_url, cost)


def _run_shop(
    directory: Path,
    runs: int,
    seed: int,
    progress: bool,
    over_http: bool,
    base_url: str | None,
    *,
    force: bool = False,
) -> tuple[Results, str | None]:
    """Run both versions into ``directory/results.jsonl`` and read the file back,
    with the base URL they were reached at (None in-process)."""
    if not over_http:
        _run_engine(directory, runs, seed, progress, None, force=force)
    elif base_url is not None:
        _run_engine(directory, runs, seed, progress, base_url, force=force)
    else:
        from ._server import serve

        with serve(seed=seed) as server:
            base_url = f"{server.base_url}/v1"
            _run_engine(directory, runs, seed, progress, base_url, force=force)
    return read_results(directory / "results.jsonl"), base_url


def _run_engine(
    directory: Path,
    runs: int,
    seed: int,
    progress: bool,
    base_url: str | None,
    *,
    force: bool = False,
) -> None:
    """Both stand-in versions through the engine, in-process or over HTTP (an
    earlier ``results.jsonl`` replaced with ``force``)."""
    from .._files import replacing
    from ..errors import ResultsFileError
    from ..running._engine import Variant, parse_variant, run

    if base_url is None:
        variants = [Variant(f"v{v}", f"standin:shop-v{v}") for v in (1, 2)]
    else:
        variants = [parse_variant(f"v{v}=openai:shop-v{v},base_url={base_url}") for v in (1, 2)]
    with replacing(
        directory / "results.jsonl", force=force, keep=True, error=ResultsFileError
    ) as target:
        run(
            "shop",
            variants,
            runs=runs,
            out=target,
            seed=seed,
            progress=progress,
            concurrency=1 if base_url is None else 8,
        )
