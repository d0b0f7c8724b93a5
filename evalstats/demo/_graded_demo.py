"""``evalstats demo --graded``: a mean-score comparison whose truth is known.

The four shop messages are graded by a rubric: each case's one check is
``covers`` on the facts a complete reply states
(:func:`~evalstats.demo._shop.required_facts`), so a reply scores the share
of those facts it states. Two versions of the graded stand-in
(:func:`~evalstats.demo._shop.make_graded_assistant`) answer every case
``runs`` times through the same engine a real eval uses, into a
``results.jsonl``; the demo reads it back and compares their mean scores,
paired by case and run (:func:`~evalstats.stats._score_compare.compare_scores`),
about these cases (the default) and about cases like these, beside the
stand-in's exact true mean scores (:func:`~evalstats.demo._shop.true_mean_score`).

Two pairs: ``"better"``, version 1 against version 2 (true difference
+0.20), and ``"same"``, version 2 against version 3, whose true mean score
is version 2's on every case (true difference 0). ``simulations/graded_demo.py``
measures how often the interval about these cases covers the true
difference and how often the comparison decides.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import check_level, whole_number
from ..errors import InvalidArgument
from ..results._file import Results, read_results
from ..stats._claims import CLAIMS, MIN_CASES, claim_words, few_cases_note
from ..stats._score_compare import ScoreComparison, compare_scores
from ..stats._scores import ScoreInterval, _num, score_mean_ci
from ._shop import COVER_RATES, make_graded_assistant, required_facts, true_mean_score

__all__ = [
    "GRADED_PAIRS",
    "GradedCaseRow",
    "GradedDemoResult",
    "GradedShopTask",
    "graded_cases",
    "paired_scores",
    "run_graded_demo",
    "true_difference",
]

#: The version pairs the demo compares, A then B.
GRADED_PAIRS: dict[str, tuple[int, int]] = {"better": (1, 2), "same": (2, 3)}

_WHAT = {
    "these_cases": "paired over the (case, run) pairs: would these cases, run again, score higher?",
    "cases_like_these": "over the cases' mean differences: would cases like these score higher?",
}


class GradedShopTask:
    """The graded shop stand-in as a task of the engine (in process).

    Each sample gets a fresh assistant, ``make_graded_assistant(version,
    seed=seed)``, so the same sample seed gives the same answer whatever
    the schedule. It reads only the prompt's text.
    """

    def __init__(self, version: int) -> None:
        make_graded_assistant(version)  # the version checked at the door
        self.version = version

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "standin",
            "model": f"shop-graded-v{self.version}",
            "base_url": None,
            "settings": {},
        }

    async def run(self, prompt: Any, *, seed: int) -> str:
        return make_graded_assistant(self.version, seed=seed)(prompt.text)

    def __repr__(self) -> str:
        return f"GradedShopTask({self.version})"


def graded_cases() -> tuple[Any, ...]:
    """The four shop messages, each with one check: ``covers`` on its required facts.

    Examples
    --------
    >>> [c.checks[0].name for c in graded_cases()][0]
    "covers('A-1042', 'shipped', 'tracking link', 'Thursday')"
    """
    from ..running._graded import covers
    from ..running._run_cases import load_shop_cases
    from ..running._suite import Case

    out = []
    for case in load_shop_cases():
        terms = [term for term, _ in required_facts(case.prompt or "")]
        out.append(Case(case.id, case.prompt, ((covers(*terms), "content"),)))
    return tuple(out)


def true_difference(pair: str, prompts: Any = None) -> tuple[float, float, float]:
    """The true mean scores of the pair's versions A and B over ``prompts``, and B - A.

    Exact, from the stand-in's cover rates: each prompt's true mean is
    :func:`~evalstats.demo._shop.true_mean_score`, and with every case run
    equally often the mean over the run is the mean over the prompts (by
    default the four shop messages).

    Examples
    --------
    >>> [round(x, 10) for x in true_difference("better")]
    [0.55, 0.75, 0.2]
    >>> true_difference("same")[2]
    0.0
    """
    a, b = _versions(pair)
    if prompts is None:
        prompts = [c.prompt for c in graded_cases()]
    prompts = list(prompts)
    mean_a = math.fsum(true_mean_score(a, p) for p in prompts) / len(prompts)
    mean_b = math.fsum(true_mean_score(b, p) for p in prompts) / len(prompts)
    return mean_a, mean_b, mean_b - mean_a


def _versions(pair: str) -> tuple[int, int]:
    if pair not in GRADED_PAIRS:
        raise InvalidArgument(
            f"pair={pair!r} is not a pair of the graded demo; choose "
            f"{' or '.join(map(repr, GRADED_PAIRS))}"
        )
    return GRADED_PAIRS[pair]


def _signed(x: float) -> str:
    return "0" if abs(x) < 1e-12 else _num(x, signed=True)


@dataclass(frozen=True)
class GradedCaseRow:
    """One case run by one version: its mean score, the truth and the facts missed."""

    case: str
    variant: str
    score: ScoreInterval
    true_mean: float
    missed: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "variant": self.variant,
            "score": self.score.to_dict(),
            "true_mean": self.true_mean,
            "missed": dict(self.missed),
        }


@dataclass(frozen=True)
class GradedDemoResult:
    """What ``evalstats demo --graded`` ran and found, beside the stand-in's truth.

    ``comparisons`` holds the comparison of B with A about these cases (the
    default claim) and about cases like these; ``true_means`` each variant's
    exact true mean over the cases and ``true_case_means`` per case.
    ``directory`` holds ``results.jsonl``; None when the demo ran without
    ``out`` (``results`` holds every sample in memory).
    """

    runs: int
    seed: int
    level: float
    pair: str
    variants: tuple[str, str]
    directory: Path | None
    results: Results
    rows: tuple[GradedCaseRow, ...]
    overall: dict[str, dict[str, ScoreInterval]]
    comparisons: dict[str, ScoreComparison]
    true_means: dict[str, float]
    true_case_means: dict[str, dict[str, float]]

    @property
    def results_file(self) -> Path | None:
        return None if self.directory is None else self.directory / "results.jsonl"

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.case for r in self.rows))

    @property
    def true_difference(self) -> float:
        a, b = self.variants
        return self.true_means[b] - self.true_means[a]

    def _truth(self) -> str:
        a, b = (self.true_means[v] for v in self.variants)
        text = f"The stand-in's true mean scores are {_num(a)} and {_num(b)}: "
        if abs(b - a) < 1e-12:
            same = all(
                abs(m[self.variants[0]] - m[self.variants[1]]) < 1e-12
                for m in self.true_case_means.values()
            )
            return text + "a true difference of 0" + (", on every case." if same else ".")
        return text + f"a true difference of {_signed(b - a)}."

    @property
    def meaning(self) -> str:
        """One plain sentence (or two) on what the comparison about these cases means."""
        cmp = self.comparisons["these_cases"]
        va, vb = (v.removeprefix("v") for v in self.variants)
        lead = (
            f"With {cmp.pairs} pairs of runs (version {va} scored {_num(cmp.mean_a)} on "
            f"average, version {vb} {_num(cmp.mean_b)}), "
        )
        if cmp.verdict == "cant_tell":
            if cmp.detectable is None or math.isnan(cmp.detectable):
                detect = "these runs are too few to detect any difference reliably"
            else:
                detect = (
                    "these runs would usually detect only a difference of "
                    f"{_num(cmp.detectable)} or more"
                )
            said = (
                f"the comparison about these cases can't tell yet whether version {vb} "
                f"scores higher: a gap this size could be luck, and {detect}."
            )
        else:
            higher = vb if cmp.verdict == "b_better" else va
            said = f"the comparison about these cases says version {higher} scores higher."
        return f"{lead}{said} {self._truth()}"

    def __str__(self) -> str:
        a, b = self.variants
        va, vb = (v.removeprefix("v") for v in self.variants)
        cases = self.cases
        width = max(len("overall"), *(len(c) for c in cases))
        level = f"{100 * self.level:g}%"
        head = f"mean score ({level})"
        lines = [
            f"evalstats demo --graded: the offline shop assistant graded by the share of "
            f"each case's required facts a reply states, version {va} (true mean score "
            f"{_num(self.true_means[a])}) against version {vb} "
            f"({_num(self.true_means[b])}), {len(cases)} cases x {self.runs} runs, "
            f"seed {self.seed}.",
            "",
            f"{'case':<{width}}  version  {head:<22}  true  facts missed most often",
        ]
        for row in self.rows:
            missed = ", ".join(f"{term} x{n}" for term, n in row.missed[:2])
            lines.append(
                f"{row.case:<{width}}  {row.variant:<7}  {row.score!s:<22}  "
                f"{_num(row.true_mean):<4}  {missed or '-'}".rstrip()
            )
        for v in self.variants:
            these, like = self.overall[v]["these_cases"], self.overall[v]["cases_like_these"]
            lines.append(
                f"{'overall':<{width}}  {v:<7}  {these!s:<22}  {_num(self.true_means[v]):<4}  "
                f"cases like these: {like}"
            )
        lines += ["", f"Does version {vb} score higher than version {va}?"]
        for about in CLAIMS:
            cmp = self.comparisons[about]
            lines.append(f"  {claim_words(about):<16}  {_WHAT[about]}")
            text = str(cmp)
            if about == "cases_like_these" and cmp.n_cases < MIN_CASES:
                text += f"; {few_cases_note(cmp.n_cases)}"
            lines.append(f"  {'':<16}  {text}")
            if about == "these_cases":
                lines.append(
                    f"  {'':<16}  true difference: {_signed(self.true_difference)} "
                    "(the stand-in's true means of these cases)"
                )
        lines += ["", self.meaning, ""]
        if self.results_file is None:
            lines.append("Add --out-dir DIR to keep every sample for `evalstats report`.")
        else:
            lines.append(f"Every sample is in {self.results_file}; `evalstats report` reads it.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready document: settings, the truth, the scores, the comparisons."""
        return {
            "graded": self.pair,
            "runs": self.runs,
            "seed": self.seed,
            "level": self.level,
            "variants": list(self.variants),
            "cover_rates": {v: COVER_RATES[int(v[1:])] for v in self.variants},
            "true_means": self.true_means,
            "true_case_means": self.true_case_means,
            "true_difference": self.true_difference,
            "results_file": None if self.results_file is None else str(self.results_file),
            "cases": [r.to_dict() for r in self.rows],
            "overall": {
                v: {about: ci.to_dict() for about, ci in claims.items()}
                for v, claims in self.overall.items()
            },
            "comparisons": {about: c.to_dict() for about, c in self.comparisons.items()},
            "meaning": self.meaning,
        }


def run_graded_demo(
    *,
    pair: str = "better",
    runs: int = 10,
    seed: int = 0,
    level: float = 0.95,
    out: str | Path | None = None,
    progress: bool = False,
    force: bool = False,
) -> GradedDemoResult:
    """Run the graded shop demo through the engine and compare the two versions' mean scores.

    Parameters
    ----------
    pair : {"better", "same"}
        ``"better"``: version 1 against version 2 (true mean scores 0.55 and
        0.75); ``"same"``: version 2 against version 3 (0.75 on every case).
    runs : int
        Runs of each case per version.
    seed : int
        Seeds every sample, so a seed reproduces the demo.
    level : float
        Confidence level of every interval.
    out : path, optional
        Folder for ``results.jsonl``; without it the demo works in a temporary
        folder that it removes. An existing ``results.jsonl`` there is never
        overwritten (without ``force``): the demo stops with an error instead.
    progress : bool
        Show a progress bar on stderr.
    force : bool
        Replace an earlier demo's ``results.jsonl`` in ``out``.

    Examples
    --------
    >>> result = run_graded_demo(runs=3, seed=1)
    >>> result.variants, result.comparisons["these_cases"].pairs
    (('v1', 'v2'), 12)
    >>> round(result.true_difference, 10)
    0.2
    """
    from ._shop_demo import _work_directory

    versions = _versions(pair)
    runs = whole_number("runs", runs)
    seed = whole_number("seed", seed, minimum=0)
    level = check_level(level)
    cases = graded_cases()
    with _work_directory(out, "evalstats-demo-") as directory:
        _run_engine(directory, cases, versions, runs, seed, progress, force=force)
        results = read_results(directory / "results.jsonl")
    names = tuple(f"v{v}" for v in versions)
    truth = {
        case.id: {f"v{v}": true_mean_score(v, case.prompt or "") for v in versions}
        for case in cases
    }
    mean_a, mean_b, _ = true_difference(pair, [c.prompt for c in cases])
    return _analyse(
        results,
        names,  # type: ignore[arg-type]
        truth,
        {names[0]: mean_a, names[1]: mean_b},
        runs=runs,
        seed=seed,
        level=level,
        pair=pair,
        directory=None if out is None else directory,
    )


def _run_engine(
    directory: Path,
    cases: tuple[Any, ...],
    versions: tuple[int, int],
    runs: int,
    seed: int,
    progress: bool,
    *,
    force: bool,
) -> None:
    """Both graded versions through the engine into ``directory/results.jsonl``
    (an earlier one replaced with ``force``), as the binary demo writes its file."""
    from .._files import replacing
    from ..errors import ResultsFileError
    from ..running._engine import Variant, run
    from ..running._suite import suite_from_cases

    suite = suite_from_cases(cases, name="shop-graded", version=1)
    variants = [Variant(f"v{v}", GradedShopTask(v)) for v in versions]
    with replacing(
        directory / "results.jsonl", force=force, keep=True, error=ResultsFileError
    ) as target:
        run(suite, variants, runs=runs, out=target, seed=seed, progress=progress, concurrency=1)


def paired_scores(results: Results, a: str, b: str) -> tuple[list[float], list[float], list[str]]:
    """The scores of ``a`` and ``b`` paired by (case, repeat), with each pair's case.

    Pairs in the manifest's order of cases, then by repeat; a slot that only
    one variant scored (an unmeasured sample) is left out.
    """
    from ..reading._source import RunSource

    tally = RunSource.of(results).tally()
    left = {(c, r): s for c, r, s in tally.scores(a)}
    right = {(c, r): s for c, r, s in tally.scores(b)}
    listed = [c.get("id") for c in results.manifest.get("cases") or [] if isinstance(c, dict)]
    order = {c: i for i, c in enumerate(dict.fromkeys([*listed, *(c for c, _ in left)]))}
    keys = sorted((k for k in left if k in right), key=lambda k: (order[k[0]], k[1]))
    return [left[k] for k in keys], [right[k] for k in keys], [k[0] for k in keys]


def _missed(results: Results, case: str, variant: str, prompt: str) -> tuple[tuple[str, int], ...]:
    """How often each required fact was missing from the variant's answers to a case,
    most often first (each answer checked again, fact by fact)."""
    from ..running._graded import covers

    checks = [(term, covers(term)) for term, _ in required_facts(prompt)]
    counts: Counter[str] = Counter()
    for s in results.samples:
        if (
            s.get("case") == case
            and s.get("variant") == variant
            and s.get("status") == ("completed")
        ):
            answer = s.get("answer") or ""
            counts.update(term for term, check in checks if check(answer).score < 1.0)
    order = {term: i for i, (term, _) in enumerate(checks)}
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], order[kv[0]])))


def _analyse(
    results: Results,
    variants: tuple[str, str],
    truth: dict[str, dict[str, float]],
    true_means: dict[str, float],
    *,
    runs: int,
    seed: int,
    level: float,
    pair: str,
    directory: Path | None,
) -> GradedDemoResult:
    from ..presenting._score_report import score_summaries
    from ..reading._source import RunSource

    prompts = {c.id: c.prompt or "" for c in graded_cases()}
    tally = RunSource.of(results).tally()
    rows = []
    for case in truth:
        for v in variants:
            scores = [s for c, _, s in tally.scores(v) if c == case]
            ci = score_mean_ci(scores, [case] * len(scores), about="these_cases", level=level)
            rows.append(
                GradedCaseRow(case, v, ci, truth[case][v], _missed(results, case, v, prompts[case]))
            )
    overall = {
        s.variant: {"these_cases": s.these_cases, "cases_like_these": s.cases_like_these}
        for s in score_summaries(tally, variants, level)
    }
    a, b, labels = paired_scores(results, *variants)
    comparisons = {
        about: compare_scores(a, b, labels, about=about, level=level, seed=0) for about in CLAIMS
    }
    return GradedDemoResult(
        runs,
        seed,
        level,
        pair,
        variants,
        directory,
        results,
        tuple(rows),
        overall,
        comparisons,
        true_means,
        truth,
    )
