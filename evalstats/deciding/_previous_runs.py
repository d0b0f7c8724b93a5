"""Two runs compared, and whether a run is due.

- :func:`compare_runs`: the same variant in an older and a newer run, only when
  the two runs are comparable (:class:`NotComparable` says why not).
- :func:`changed_since`: whether git shows a change under some paths since a
  ref, so a paid eval runs only when what it measures changed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._terminal import lines_text
from .._validate import check_level, suggest
from ..errors import InvalidArgument
from ..reading._views import (
    _case_ids,
    _check_variant,
    _pooled,
    _results,
    _variant_names,
)
from ..results._comparability import COMPARABILITY, comparability
from ..stats._compare import Comparison, compare, compare_counts

__all__ = ["NotComparable", "RunsComparison", "changed_since", "compare_runs"]


@dataclass(frozen=True)
class NotComparable:
    """Two runs that must not be compared, and why.

    ``differences`` names which of ``suite``, ``model``, ``counting method``
    and ``machine`` differ; ``details`` says how, one line each.
    """

    differences: tuple[str, ...]
    details: tuple[str, ...]
    comparable: Literal[False] = False

    def __str__(self) -> str:
        return lines_text(
            [
                "no comparable previous run: "
                + "; ".join(self.details)
                + " (--allow-different "
                + " ".join(sorted({d.replace(" ", "-") for d in self.differences}))
                + " compares them anyway)"
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": False,
            "summary": str(self),
            "differences": list(self.differences),
            "details": list(self.details),
        }


@dataclass(frozen=True)
class RunsComparison:
    """The same variants in an older and a newer run.

    ``comparisons`` maps each variant to a :class:`~evalstats.stats._compare.Comparison`
    with A the old run and B the new one: Newcombe's interval for independent
    samples on the measured samples, with per-case rows.
    """

    comparisons: dict[str, Comparison]
    level: float
    comparable: Literal[True] = True
    warnings: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        lines = ["old run = A, new run = B (independent samples, measured samples only)"]
        lines += [f"warning: {w}" for w in self.warnings]
        for name, c in self.comparisons.items():
            lines.append(f"variant {name}: {c}")
            if c.cases:
                lines.append(
                    "  per case: intervals exploratory (not adjusted for the number of "
                    f"cases); flags {c.flags_text()}"
                )
            for r in c.cases:
                flag = (
                    "  got clearly worse"
                    if r.worse
                    else ("  got clearly better" if r.better else "")
                )
                lines.append(
                    f"  {r.case}: {r.passes_a}/{r.trials_a} -> {r.passes_b}/{r.trials_b}  "
                    f"{r.difference}{flag}"
                )
        return lines_text(lines)  # a name holding a newline cannot forge a line

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": True,
            "level": self.level,
            "comparisons": {k: v.to_dict() for k, v in self.comparisons.items()},
            "warnings": list(self.warnings),
        }


def _allowed(allow_different: Sequence[str] | str) -> frozenset[str]:
    names = [allow_different] if isinstance(allow_different, str) else list(allow_different)
    known = {c.replace(" ", "-"): c for c in COMPARABILITY}
    out = set()
    for name in names:
        key = str(name).strip().replace(" ", "-").replace("_", "-")
        if key not in known:
            raise InvalidArgument(
                f"allow_different={name!r} is not one of {', '.join(known)}{suggest(key, known)}"
            )
        out.add(known[key])
    return frozenset(out)


def compare_runs(
    old: Any,
    new: Any,
    *,
    variant: str | None = None,
    level: float = 0.95,
    allow_different: Sequence[str] | str = (),
) -> RunsComparison | NotComparable:
    """Compare a newer run with an older one, but only when they are comparable.

    Two runs are comparable when they share the suite (the same parsed cases
    and checks: a comment or formatting change in the file is the same suite),
    the model (the task descriptions of the variants compared), the counting
    method and, where it matters, the machine: for ``cmd:`` tasks, Python
    callables and locally served models (see
    :func:`~evalstats.results._comparability.machine_matters`), not for a
    hosted API. Otherwise the answer is :class:`NotComparable`, which names
    every one of the four that differs and how (which cases or checks changed).

    Parameters
    ----------
    old, new : Results or path
        The two runs.
    variant : str, optional
        The variant to compare. By default every variant present in both runs
        (the variant names of the two runs must then be the same).
    level : float
        Confidence level.
    allow_different : sequence of str
        Names from ``suite``, ``model``, ``counting-method``, ``machine`` to
        compare anyway; each difference allowed is printed as a warning above
        the numbers, so the comparison never hides it.

    Returns
    -------
    RunsComparison or NotComparable
        Each variant's pass rate in the new run against the old, as
        independent samples (Newcombe's interval) on measured samples, with
        per-case rows flagging the cases that got clearly worse or better:
        each case's Fisher exact test, adjusted for the number of cases by
        the discrete Holm method (:func:`~evalstats.stats._compare.compare`);
        the per-case line says so, and says when no case can be flagged at
        the repeats run.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between
    independent proportions: comparison of eleven methods. Statistics in
    Medicine 17, 873-890.

    Examples
    --------
    >>> from evalstats.results._file import Results
    >>> m = {"suite": {"sha256": "ab"}, "counting_method": "1", "machine": "m1",
    ...      "variants": [{"name": "v", "task": {"kind": "python"}}]}
    >>> other = dict(m, machine="m2")
    >>> print(compare_runs(Results(None, m, (), None, ()), Results(None, other, (), None, ())))
    ... # doctest: +NORMALIZE_WHITESPACE
    no comparable previous run: machine differs ('m1' then 'm2'; 'v' runs locally)
    (--allow-different machine compares them anyway)
    """
    level = check_level(level)
    allowed = _allowed(allow_different)
    ro, rn = _results(old), _results(new)
    names_old, names_new = _variant_names(ro), _variant_names(rn)
    if variant is not None:
        _check_variant(variant, names_old, arg="variant")
        _check_variant(variant, names_new, arg="variant")
        chosen = [variant]
    else:
        chosen = [v for v in names_old if v in names_new]
    differences, details = comparability(
        ro.manifest,
        rn.manifest,
        chosen,
        variants=(names_old, names_new) if variant is None else None,
    )
    if any(d not in allowed for d in differences):
        return NotComparable(tuple(differences), tuple(details))
    compared_anyway = tuple(f"compared although the {d}" for d in details)

    case_ids = _case_ids(ro)
    comparisons = {}
    for v in chosen:
        xo = ro.measured_by_case(v, case_ids)
        xn = rn.measured_by_case(v, case_ids)
        if xo and xn:
            comparisons[v] = compare(xo, xn, paired=False, method="newcombe", level=level)
        else:
            comparisons[v] = compare_counts(*_pooled(xo), *_pooled(xn), level=level)
    warnings = (
        compared_anyway
        + tuple(f"old run: {w}" for w in ro.warnings)
        + tuple(f"new run: {w}" for w in rn.warnings)
    )
    return RunsComparison(comparisons, level, warnings=warnings)


# --- changed --------------------------------------------------------------------------------


def _git(
    args: Sequence[str], cwd: str | os.PathLike[str] | None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise InvalidArgument("git is not installed (or not on PATH)") from None


def _check_watched(spec: str, ref: str, commit: str, cwd: Any) -> None:
    """Refuse a path that names nothing, now or at ``ref``: a typo would read "unchanged"."""
    base = os.fspath(cwd) if cwd is not None else "."
    if os.path.lexists(os.path.join(base, spec)):
        return
    for args in (
        ["ls-files", "--cached", "--others", "--exclude-standard", "--", spec],
        ["ls-tree", "-r", "--name-only", commit, "--", spec],
    ):
        found = _git(args, cwd)
        if found.returncode == 0 and found.stdout.strip():
            return
    raise InvalidArgument(
        f"paths: {spec!r} names no file or folder, now or at {ref}; a path that does not "
        "exist never changes, so check it (paths are relative to the current directory)"
    )


def changed_since(
    ref: str, paths: Sequence[str | os.PathLike[str]], *, cwd: str | os.PathLike[str] | None = None
) -> bool:
    """Whether git shows any change under ``paths`` since ``ref``.

    A change is anything between the commit ``ref`` and the working tree:
    later commits, staged and unstaged edits, deletions, and new untracked
    files (ignored files do not count). Paths are git pathspecs, relative to
    ``cwd`` (the current directory by default).

    Parameters
    ----------
    ref : str
        A commit-ish: a branch, tag, hash or ``HEAD~3``.
    paths : sequence of str
        One or more pathspecs.
    cwd : path, optional
        A directory inside the repository.

    Returns
    -------
    bool

    Raises
    ------
    InvalidArgument
        When ``cwd`` is not in a git repository, ``ref`` names no commit, or a
        path names nothing in the working tree, the index or ``ref`` (a path
        deleted since ``ref`` is a change, not an error).
    """
    if not isinstance(ref, str) or not ref or ref.startswith("-"):
        raise InvalidArgument(f"ref={ref!r} must name a commit (a branch, tag or hash)")
    specs = (
        [os.fspath(p) for p in paths]
        if not isinstance(paths, str | os.PathLike)
        else [os.fspath(paths)]
    )
    if not specs:
        raise InvalidArgument("paths=[] is empty; name at least one path to watch")
    inside = _git(["rev-parse", "--is-inside-work-tree"], cwd)
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        where = os.fspath(cwd) if cwd is not None else "the current directory"
        raise InvalidArgument(f"{where} is not inside a git working tree")
    verify = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    if verify.returncode != 0:
        raise InvalidArgument(f"ref={ref!r} is not a commit in this repository")
    commit = verify.stdout.strip()
    for spec in specs:
        _check_watched(spec, ref, commit, cwd)
    diff = _git(["diff", "--quiet", commit, "--", *specs], cwd)
    if diff.returncode == 1:
        return True
    if diff.returncode != 0:
        raise InvalidArgument(f"git diff failed: {diff.stderr.strip() or diff.returncode}")
    untracked = _git(["ls-files", "--others", "--exclude-standard", "--", *specs], cwd)
    if untracked.returncode != 0:
        raise InvalidArgument(f"git ls-files failed: {untracked.stderr.strip()}")
    return bool(untracked.stdout.strip())
