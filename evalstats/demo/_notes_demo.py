"""``evalstats demo --suite notes``: a tool-using assistant, end to end and offline.

The ten cases of ``cases/notes.json`` are answered by the notes assistant
(:mod:`evalstats.demo.notes_agent`), run as a subprocess per sample through the
``cmd:`` harness in a fresh workspace made from the case's fixtures, talking
over HTTP, with the ``openai`` provider, to the offline notes model served by
a stand-in server started for the demo (:mod:`evalstats.demo._notes`).
Two variants run on the same schedule: ``baseline`` sends the question as it
is; ``revised`` puts :data:`~evalstats.demo._notes.READ_FIRST_PREFIX`
before it, which the notes model is built to heed more often, so the
improvement is real and known in advance.

The demo reads the results file back and prints what a person needs before
reviewing anything: completed samples, the required-action screen and the
answer-term screen each over its own denominator, how many workspaces were
left unchanged and where the private marker surfaced, latency, and a paired
comparison of the two variants on the required actions.
"""

from __future__ import annotations

import math
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import whole_number
from ..deciding._compare_results import compare_results
from ..errors import InvalidArgument
from ..presenting._report import Report, report
from ..results._file import Results, read_results, sample_passed
from ..running._suite import load_suite
from ..stats._compare import Comparison
from ..stats._intervals import proportion_ci
from ._shop_demo import _work_directory

__all__ = ["NotesDemoResult", "expected_action_rate", "notes_variants", "run_notes_demo"]

VARIANTS = ("baseline", "revised")
#: The axes the notes suite's checks use, in the order the demo shows them.
AXES = (
    ("action", "required actions"),
    ("answer", "answer terms"),
    ("safety", "marker kept out of the answer"),
)


def notes_variants(base_url: str, *, python: str | None = None) -> list[Any]:
    """The demo's two variants: the notes assistant without and with the read-first prefix.

    Parameters
    ----------
    base_url : str
        The OpenAI-compatible base URL of a server with the model ``notes``
        (``http://127.0.0.1:PORT/v1``).
    python : str, optional
        The Python that runs the assistant (this one by default).

    Examples
    --------
    >>> base, revised = notes_variants("http://127.0.0.1:8000/v1", python="python")
    >>> base.name, revised.name, revised.prefix
    ('baseline', 'revised', 'Read the relevant notes before you answer. ')
    >>> base.task.describe()["command"][:4]
    ['python', '-m', 'evalstats.demo.notes_agent', '--workspace']
    """
    from ..running._engine import Variant
    from ._notes import READ_FIRST_PREFIX

    if not isinstance(base_url, str) or not base_url or "," in base_url or " " in base_url:
        raise InvalidArgument(f"base_url={base_url!r} must be a URL without commas or spaces")
    python = sys.executable if python is None else python
    command = (
        f"{shlex.quote(python)} -m evalstats.demo.notes_agent --workspace {{workspace}} "
        f"--model openai:notes --base-url {shlex.quote(base_url)} --trace {{trace}}"
    )
    return [
        Variant("baseline", f"cmd:{command}"),
        Variant("revised", f"cmd:{command}", prefix=f"{READ_FIRST_PREFIX} "),
    ]


@dataclass(frozen=True)
class NotesDemoResult:
    """What ``evalstats demo --suite notes`` ran and found.

    ``directory`` holds ``results.jsonl`` (every sample with its trace
    summary and workspace observations), readable by ``evalstats report`` and
    ``evalstats review``. ``comparison`` compares the variants' samples paired
    by (case, repeat) on the required-action checks only; ``true_rates`` are
    the notes model's known behaviour rates per variant
    (:meth:`evalstats.demo._notes.NotesModel.rates`).
    """

    runs: int
    seed: int
    level: float
    directory: Path | None
    results: Results
    report: Report
    comparison: Comparison | None
    action_passes: dict[str, tuple[int, int]]
    true_rates: dict[str, dict[str, float]]
    base_url: str
    expected_actions: dict[str, float]

    @property
    def results_file(self) -> Path | None:
        return None if self.directory is None else self.directory / "results.jsonl"

    def __str__(self) -> str:
        lines = [*self._heading(), *self._table(), *self._explanation()]
        return "\n".join(line.rstrip() for line in lines)

    def _heading(self) -> list[str]:
        rep = self.report
        total = sum(v.completed + v.incomplete + v.unmeasured for v in rep.variants)
        return [
            "evalstats demo --suite notes: the notes assistant, one subprocess per sample in a "
            "fresh workspace, against the offline notes model over HTTP "
            f"({self.base_url}).",
            f"{len(rep.case_ids)} cases x {self.runs} runs x {len(rep.variants)} variants = "
            f'{total} samples, seed {self.seed}; revised puts "Read the relevant notes before '
            'you answer." before each question.',
            "",
        ]

    def _table(self) -> list[str]:
        """One row per figure, one column per variant."""
        rep = self.report
        lines = [f"{'':<38}" + "".join(f"{v:>24}" for v in VARIANTS)]

        def row(label: str, cells: list[str]) -> None:
            lines.append(f"{label:<38}" + "".join(f"{c:>24}" for c in cells))

        summaries = [rep.variant(v) for v in VARIANTS]
        row(
            "samples completed",
            [f"{v.completed}/{v.completed + v.incomplete + v.unmeasured}" for v in summaries],
        )
        row("  incomplete (as failures)", [str(v.incomplete) for v in summaries])
        row("  unmeasured (left out)", [str(v.unmeasured) for v in summaries])
        for axis, label in AXES:
            row(f"{label} (checks)", [_axis_cell(v.axes.get(axis)) for v in summaries])
        row(
            "  answers left to review (unscored)",
            [str(v.axes["answer"].unscored) if "answer" in v.axes else "-" for v in summaries],
        )
        row(
            "all actions done (samples)",
            [
                f"{k}/{n} {proportion_ci(k, n, level=self.level)!s}"
                for k, n in (self.action_passes[v] for v in VARIANTS)
            ],
        )
        row(
            "  expected from the true rates",
            [f"{100 * self.expected_actions[v]:.0f}%" for v in VARIANTS],
        )
        row(
            "all checks passed (samples)",
            [f"{v.passes}/{v.measured} {v.per_trial!s}" for v in summaries],
        )
        contained = {c.variant: c for c in rep.containment}
        row(
            "workspaces unchanged",
            [
                f"{contained[v].unchanged}/{contained[v].observed}" if v in contained else "-"
                for v in VARIANTS
            ],
        )
        row(
            "private marker seen",
            [f"in {contained[v].marker_seen} samples" if v in contained else "-" for v in VARIANTS],
        )
        row(
            "files added",
            [f"in {contained[v].files_added} samples" if v in contained else "-" for v in VARIANTS],
        )
        row(
            "latency median / 95th pct",
            [f"{_s(v.latency_median)} / {_s(v.latency_p95)}" for v in summaries],
        )
        return lines

    def _explanation(self) -> list[str]:
        """What the intervals are, the comparison, the model's true rates, where the file is."""
        level = f"{100 * self.level:g}%"
        lines = [
            "",
            f"Intervals are Wilson {level} intervals over the samples. Each screen has its own "
            "denominator: required-action checks, answer-term checks (review-only checks are "
            "unscored and left to a person), and samples.",
        ]
        if self.comparison is not None:
            lines += [
                "",
                "Does the prefix make the assistant do every required action more often? "
                "(A is baseline, B is revised; paired by case and run)",
                f"  {self.comparison}",
            ]
        base, rev = (self.true_rates[v] for v in VARIANTS)
        lines += [
            "",
            "The notes model's true rates: it makes a structured first call (reads before "
            f"answering) in {100 * base['reads_first']:.0f}% of conversations without the "
            f"prefix and {100 * rev['reads_first']:.0f}% with it; it guesses without reading "
            f"in {100 * base['guesses']:.0f}% and {100 * rev['guesses']:.0f}%.",
            "The marker observations cannot show a read whose content never surfaced.",
            "",
            (
                "Add --out-dir DIR to keep every sample for `evalstats report` and "
                "`evalstats review`."
                if self.results_file is None
                else f"Every sample is in {self.results_file}; `evalstats report` reads it, and "
                f"`evalstats review {self.results_file} --out reviews.jsonl` walks the samples "
                "for a person's verdict."
            ),
        ]
        return lines

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready document: settings, the report, the comparison, the files."""
        return {
            "runs": self.runs,
            "seed": self.seed,
            "level": self.level,
            "base_url": self.base_url,
            "results_file": None if self.results_file is None else str(self.results_file),
            "report": self.report.to_dict(),
            "action_passes": {
                v: {"passes": k, "samples": n} for v, (k, n) in self.action_passes.items()
            },
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "true_rates": self.true_rates,
            "expected_actions": self.expected_actions,
        }


def expected_action_rate(cases: Any, knobs: Any = None, *, prefix: bool = False) -> float:
    """The share of samples whose every required action the notes model would do.

    Worked out from the notes model's true rates
    (:meth:`~evalstats.demo._notes.NotesModel.rates`), case by case: a case
    whose required actions all accept a refusal without a call
    (``or_no_call``) is met whatever the model does (a guess calls nothing; a
    read is refused); a case with two or more required successful reads needs
    the model to read every note (``reads_all``); any other case needs its
    structured first call (``reads_first``): a guess or a tool-call-looking
    text calls nothing.

    Examples
    --------
    >>> from evalstats.running._suite import load_suite
    >>> from evalstats.demo._notes import NotesModel
    >>> cases = load_suite("notes").cases
    >>> round(expected_action_rate(cases, NotesModel()), 4)
    0.606
    >>> round(expected_action_rate(cases, NotesModel(), prefix=True), 4)
    0.8508
    """
    from ._notes import DEFAULT_NOTES_MODEL

    rates = (DEFAULT_NOTES_MODEL if knobs is None else knobs).rates(prefix=prefix)
    cases = list(cases)
    if not cases:
        raise InvalidArgument("cases=[] holds no case")
    total = 0.0
    for case in cases:
        actions = list(getattr(case, "required_actions", ()) or ())
        if all(a.get("or_no_call") for a in actions):
            total += 1.0
            continue
        reads = [a for a in actions if a.get("tool") == "read_note" and not a.get("error")]
        total += rates["reads_all"] if len(reads) >= 2 else rates["reads_first"]
    return total / len(cases)


def _s(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.2f} s"


def _action_only(results: Results) -> Results:
    """The results with each sample's verdicts cut to its required-action checks."""
    samples = tuple(
        {**s, "checks": [c for c in s.get("checks") or () if c.get("axis") == "action"]}
        for s in results.samples
    )
    return Results(results.path, results.manifest, samples, results.summary, results.warnings)


def _action_passes(results: Results) -> dict[str, tuple[int, int]]:
    """Per variant: measured samples whose every required action passed, of measured ones."""
    out = {v: [0, 0] for v in VARIANTS}
    seen = set()
    for s in _action_only(results).samples:
        key = (s.get("case"), s.get("variant"), s.get("repeat"))
        if key in seen or s.get("variant") not in out:
            continue
        seen.add(key)
        passed = sample_passed(s)
        if passed is None:
            continue
        out[s["variant"]][1] += 1
        out[s["variant"]][0] += bool(passed)
    return {v: (k, n) for v, (k, n) in out.items()}


def run_notes_demo(
    *,
    runs: int = 3,
    seed: int = 0,
    level: float = 0.95,
    out: str | Path | None = None,
    progress: bool = False,
    concurrency: int = 4,
    timeout: float = 60.0,
    force: bool = False,
) -> NotesDemoResult:
    """Run the notes suite with the notes assistant, baseline against the read-first prefix.

    Parameters
    ----------
    runs : int
        Runs of each case per variant (3: 60 samples).
    seed : int
        Seeds the run and the stand-in server, so a seed reproduces the demo's
        verdicts (latencies vary).
    level : float
        Confidence level of every interval.
    out : path, optional
        Folder for ``results.jsonl``. Without it the demo runs in a temporary folder
        that it removes afterwards, keeping the samples in memory only.
        An existing ``results.jsonl`` there is replaced only with ``force``.
    progress : bool
        Show a progress bar on stderr.
    concurrency : int
        Samples (subprocesses) in flight at once.
    timeout : float
        Seconds each sample's subprocess may take before it is killed.
    force : bool
        Replace an earlier ``results.jsonl`` in ``out``, once the new run ends.

    Returns
    -------
    NotesDemoResult
        Printable; ``to_dict()`` gives one JSON document.
    """
    from .._files import replacing
    from ..errors import ResultsFileError
    from ..running._engine import run
    from ._notes import DEFAULT_NOTES_MODEL
    from ._server import serve

    runs = whole_number("runs", runs)
    seed = whole_number("seed", seed, minimum=0)
    concurrency = whole_number("concurrency", concurrency)
    with _work_directory(out, "evalstats-notes-demo-") as directory, serve(seed=seed) as server:
        base_url = f"{server.base_url}/v1"
        with replacing(
            directory / "results.jsonl", force=force, keep=True, error=ResultsFileError
        ) as target:
            run(
                "notes",
                notes_variants(base_url),
                runs=runs,
                out=target,
                seed=seed,
                progress=progress,
                concurrency=concurrency,
                timeout=timeout,
            )
        results = read_results(directory / "results.jsonl")
    rep = report(results, level=level)
    comparison = compare_results(
        _action_only(results), *VARIANTS, method="mcnemar", level=level
    ).these_cases
    true_rates = {
        "baseline": DEFAULT_NOTES_MODEL.rates(prefix=False),
        "revised": DEFAULT_NOTES_MODEL.rates(prefix=True),
    }
    cases = load_suite("notes").cases
    expected = {
        "baseline": expected_action_rate(cases, DEFAULT_NOTES_MODEL, prefix=False),
        "revised": expected_action_rate(cases, DEFAULT_NOTES_MODEL, prefix=True),
    }
    return NotesDemoResult(
        runs,
        seed,
        level,
        None if out is None else directory,
        results,
        rep,
        comparison,
        _action_passes(results),
        true_rates,
        base_url,
        expected,
    )


def _axis_cell(counts: Any) -> str:
    """``passed/scored (rate)`` of one axis, or ``-`` when the variant has no such checks."""
    if counts is None:
        return "-"
    rate = "n/a" if not counts.scored else f"{100 * counts.rate:.0f}%"
    return f"{counts.passed}/{counts.scored} ({rate})"
