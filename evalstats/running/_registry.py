"""Kinds of task and judge that other packages register, found by entry point.

A package adds a task kind (the ``KIND`` of ``KIND:NAME``) by declaring an entry
point in the group ``evalstats.tasks`` whose object is ``factory(rest) -> Task``,
and a judge kind in ``evalstats.judges`` whose object is ``factory(spec, model,
settings) -> (judge, description)``. evalstats registers its own offline
stand-ins this way (see ``pyproject.toml``), so the running stage never imports
the demo stage. Entry points are read only when a kind is not already known.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JUDGE_GROUP", "TASK_GROUP", "entry_point", "entry_point_names"]

TASK_GROUP = "evalstats.tasks"
JUDGE_GROUP = "evalstats.judges"


def _entry_points(group: str) -> Any:
    from importlib.metadata import entry_points

    return entry_points(group=group)


def entry_point(group: str, name: str) -> Any | None:
    """The object the entry point ``name`` of ``group`` names, loaded; None when none does."""
    for point in _entry_points(group):
        if point.name == name:
            return point.load()
    return None


def entry_point_names(group: str) -> list[str]:
    """The names registered in ``group`` by the installed packages."""
    return sorted({point.name for point in _entry_points(group)})
