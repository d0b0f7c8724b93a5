"""Whether two runs may be compared: same suite, model, judge, counting method, machine.

Read from the two manifests alone, so that anything holding runs (the
comparison of two runs, ``merge``) asks the same question the same way.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from .._text import canonical_json, short_repr

__all__ = ["COMPARABILITY", "comparability", "machine_matters", "suite_differences"]

COMPARABILITY = ("suite", "model", "judge", "counting method", "machine")


def _judge_text(judge: Any) -> str:
    if isinstance(judge, Mapping) and isinstance(judge.get("spec"), str):
        return judge["spec"]
    return "none" if judge is None else short_repr(judge, 40)


def _tasks(manifest: Mapping[str, Any]) -> dict[str, Any]:
    return {
        str(v.get("name")): v.get("task")
        for v in manifest.get("variants", [])
        if isinstance(v, dict)
    }


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
            return [f"sha256 {short_repr(sha_o, 40)} then {short_repr(sha_n, 40)}"]
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
            if canonical_json(a.get(key)) != canonical_json(b.get(key)):
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


def comparability(
    mo: Mapping[str, Any],
    mn: Mapping[str, Any],
    chosen: Sequence[str],
    *,
    variants: tuple[Sequence[str], Sequence[str]] | None = None,
) -> tuple[list[str], list[str]]:
    """Which of :data:`COMPARABILITY` differ between two runs, and how.

    ``mo`` and ``mn`` are the old and new runs' manifests, ``chosen`` the
    variants to be compared. With ``variants`` (each run's variant names) the
    runs must also have the same variants. Returns the differences and one line
    each saying how; both lists are empty when the runs are comparable.
    """
    differences: list[str] = []
    details: list[str] = []
    suite = suite_differences(mo, mn)
    if suite:
        differences.append("suite")
        details.append("suite differs (" + "; ".join(suite) + ")")
    to, tn = _tasks(mo), _tasks(mn)
    model_problems = []
    if variants is not None and sorted(variants[0]) != sorted(variants[1]):
        model_problems.append(f"variants {list(variants[0])} then {list(variants[1])}")
    for v in chosen:
        if to.get(v) != tn.get(v):
            model_problems.append(
                f"variant {v!r}: task {short_repr(to.get(v), 40)} then {short_repr(tn.get(v), 40)}"
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
        details.append(f"counting method differs ({short_repr(co, 40)} then {short_repr(cn, 40)})")
    fo, fn = mo.get("machine"), mn.get("machine")
    local = [v for v in chosen if machine_matters(to.get(v)) or machine_matters(tn.get(v))]
    if (local or not chosen) and (fo is None or fo != fn):
        differences.append("machine")
        runs_here = (
            f"; {_names(local)} run{'s' if len(local) == 1 else ''} locally" if local else ""
        )
        details.append(
            f"machine differs ({short_repr(fo, 40)} then {short_repr(fn, 40)}{runs_here})"
        )
    return differences, details
