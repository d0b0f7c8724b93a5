"""Reading the parts of a sample record that several stages look into.

A sample's tool-call trace may carry a summary of what was requested and
executed, and a ``cmd:`` sample carries what was observed of its workspace;
these find them wherever the writer put them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["trace_summary", "workspace_observations"]


def trace_summary(trace: Any) -> Mapping[str, Any] | None:
    """The ``{"requested", "executed", "stopped"}`` summary inside a sample's trace."""
    if not isinstance(trace, Mapping):
        return None
    if "requested" in trace or "executed" in trace:
        return trace
    for key in ("summary", "trace"):
        inner = trace.get(key)
        if isinstance(inner, Mapping) and ("requested" in inner or "executed" in inner):
            return inner
    return None


def workspace_observations(sample: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The containment observations of a sample record, if it carries any.

    They are :func:`evalstats.running._workspace.observe`'s dict, kept by the ``cmd:``
    harness under the trace's ``"workspace"`` key (or the sample's own).
    """
    trace = sample.get("trace")
    for holder in (trace, sample):
        if isinstance(holder, Mapping):
            found = holder.get("workspace")
            if isinstance(found, Mapping):
                return found
    if isinstance(trace, Mapping):
        summary = trace_summary(trace)
        if summary is not None and isinstance(summary.get("workspace"), Mapping):
            return summary["workspace"]  # type: ignore[no-any-return]
    return None
