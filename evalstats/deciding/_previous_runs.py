"""Two runs compared, and whether a run is due.

- :func:`compare_runs`: the same variant in an older and a newer run, only when
  the two runs are comparable (:class:`NotComparable` says why not).
- :func:`changed_since`: whether git shows a change under some paths since a
  ref, so a paid eval runs only when what it measures changed.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._validate import check_level, suggest
from ..errors import InvalidArgument
from ..reading._tally import Tally
from ..reading._views import (
    _case_ids,
    _check_variant,
    _pooled,
    _results,
    _variant_names,
)
from ..stats._compare import Comparison, compare, compare_counts

__all__ = [
    "COMPARABILITY",
    "NotComparable",
    "RunsComparison",
    "changed_since",
    "compare_runs",
    "comparability",
    "machine_matters",
    "suite_differences",
]


COMPARABILITY = ("suite", "model", "judge", "counting method", "machine")


def _judge_text(judge: Any) -> str:
    if isinstance(judge, Mapping) and isinstance(judge.get("spec"), str):
        return judge["spec"]
    return "none" if judge is None else _short(judge)


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
        return (
            "no comparable previous run: "
            + "; ".join(self.details)
            + " (--allow-different "
            + " ".join(sorted({d.replace(" ", "-") for d in self.differences}))
            + " compares them anyway)"
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
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": True,
            "level": self.level,
            "comparisons": {k: v.to_dict() for k, v in self.comparisons.items()},
            "warnings": list(self.warnings),
        }


def _tasks(res: Tally) -> dict[str, Any]:
    return {
        str(v.get("name")): v.get("task")
        for v in res.manifest.get("variants", [])
        if isinstance(v, dict)
    }


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


def _cases_by_id(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """The manifest's parsed cases by id, or None when it lists none."""
    cases = manifest.get("cases")
    if not isinstance(cases, list) or not cases:
        return None
    out: dict[str, Any] = {}
    for case in cases:
        if not isinstance(case, Mapping) or not isinstance(case.get("id"), str):
            return None
        out[case["id"]] = case
    return out


def _names(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def suite_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """How the suite of two runs differs, read from the cases each manifest lists.

    Two suite files that parse to the same cases (same ids, prompts, checks,
    fixtures and every other field) are the same suite, whatever their bytes:
    an edited comment or a reformatted file changes nothing measured. Without
    parsed cases in both manifests, the suite files' SHA-256 decide.

    Returns
    -------
    list of str
        One phrase per kind of change (cases added or removed, checks changed,
        prompts changed, other fields changed); empty when the suites agree.

    Examples
    --------
    >>> old = {"cases": [{"id": "a", "prompt": "Hi", "checks": [{"contains": "x"}]}]}
    >>> new = {"cases": [{"id": "a", "prompt": "Hi", "checks": [{"contains": "y"}]}]}
    >>> suite_differences(old, new)
    ["checks changed in case 'a'"]
    >>> suite_differences(old, dict(old, suite={"sha256": "another file"}))
    []
    """
    co, cn = _cases_by_id(old), _cases_by_id(new)
    if co is None or cn is None:
        sha_o = (old.get("suite") or {}).get("sha256")
        sha_n = (new.get("suite") or {}).get("sha256")
        if sha_o is None or sha_o != sha_n:
            return [f"sha256 {_short(sha_o)} then {_short(sha_n)}"]
        return []
    out = []
    removed = [c for c in co if c not in cn]
    added = [c for c in cn if c not in co]
    if removed:
        out.append(f"cases removed: {_names(removed)}")
    if added:
        out.append(f"cases added: {_names(added)}")
    changed: dict[str, list[str]] = {}
    for case_id in (c for c in co if c in cn):
        a, b = co[case_id], cn[case_id]
        for key in sorted(set(a) | set(b)):
            if _canonical(a.get(key)) != _canonical(b.get(key)):
                changed.setdefault(key, []).append(case_id)
    for key, ids in changed.items():
        what = {"checks": "checks", "prompt": "prompts"}.get(key, f"field {key!r}")
        out.append(f"{what} changed in case{'s' if len(ids) > 1 else ''} {_names(ids)}")
    return out


def _local_host(url: Any) -> bool:
    """Whether a base URL points at this machine or a private network (a
    self-hosted model), rather than a hosted API."""
    if not isinstance(url, str) or not url:
        return True
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost" or "." not in host or host.endswith((".local", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def machine_matters(task: Any) -> bool:
    """Whether the machine a task ran on can change what it measures.

    It does for a ``cmd:`` task or a Python callable (they run here), and for a
    model served locally or on a private network (Ollama, a vLLM or llama.cpp
    server): the hardware and build can change its answers and speed. It does
    not for a hosted API (the host is irrelevant) nor for the in-process
    stand-ins, which answer the same everywhere.
    """
    if not isinstance(task, Mapping):
        return True
    kind = task.get("kind")
    if kind == "standin":
        return False
    if kind in ("openai", "anthropic", "gemini", "ollama"):
        return _local_host(task.get("base_url"))
    return True


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


def comparability(
    old: Any, new: Any, chosen: Sequence[str], *, every_variant: bool
) -> tuple[list[str], list[str]]:
    """Which of :data:`COMPARABILITY` differ between two runs, and how (one
    line each); both lists are empty when the runs are comparable. The runs are
    given as their tallies (as :func:`compare_runs` reads them) or as anything
    :func:`evalstats.reading._tally.tally` counts, such as a Results (as ``merge`` has them)."""
    old, new = _results(old), _results(new)
    mo, mn = old.manifest, new.manifest
    differences: list[str] = []
    details: list[str] = []
    suite = suite_differences(mo, mn)
    if suite:
        differences.append("suite")
        details.append("suite differs (" + "; ".join(suite) + ")")
    to, tn = _tasks(old), _tasks(new)
    model_problems = []
    names_old, names_new = _variant_names(old), _variant_names(new)
    if every_variant and sorted(names_old) != sorted(names_new):
        model_problems.append(f"variants {names_old} then {names_new}")
    for v in chosen:
        if to.get(v) != tn.get(v):
            model_problems.append(
                f"variant {v!r}: task {_short(to.get(v))} then {_short(tn.get(v))}"
            )
    if not chosen:
        model_problems.append("no variant in common")
    if model_problems:
        differences.append("model")
        details.append("model differs (" + "; ".join(model_problems) + ")")
    jo, jn = mo.get("judge"), mn.get("judge")
    if jo != jn:
        # The judge is the ruler of judged checks: another judge, another ruler.
        differences.append("judge")
        details.append(f"judge differs ({_judge_text(jo)} then {_judge_text(jn)})")
    co, cn = mo.get("counting_method"), mn.get("counting_method")
    if co is None or co != cn:
        differences.append("counting method")
        details.append(f"counting method differs ({_short(co)} then {_short(cn)})")
    fo, fn = mo.get("machine"), mn.get("machine")
    local = [v for v in chosen if machine_matters(to.get(v)) or machine_matters(tn.get(v))]
    if (local or not chosen) and (fo is None or fo != fn):
        differences.append("machine")
        runs_here = (
            f"; {_names(local)} run{'s' if len(local) == 1 else ''} locally" if local else ""
        )
        details.append(f"machine differs ({_short(fo)} then {_short(fn)}{runs_here})")
    return differences, details


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
    callables and locally served models (see :func:`machine_matters`), not for
    a hosted API. Otherwise the answer is :class:`NotComparable`, which names
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
        per-case rows flagging the cases that got clearly worse.

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
    differences, details = comparability(ro, rn, chosen, every_variant=variant is None)
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
        When ``cwd`` is not in a git repository, or ``ref`` names no commit.
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
    diff = _git(["diff", "--quiet", commit, "--", *specs], cwd)
    if diff.returncode == 1:
        return True
    if diff.returncode != 0:
        raise InvalidArgument(f"git diff failed: {diff.stderr.strip() or diff.returncode}")
    untracked = _git(["ls-files", "--others", "--exclude-standard", "--", *specs], cwd)
    if untracked.returncode != 0:
        raise InvalidArgument(f"git ls-files failed: {untracked.stderr.strip()}")
    return bool(untracked.stdout.strip())
