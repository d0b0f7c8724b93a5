"""Public faces whose names load on first use, listed once.

A face (the package root, a stage's ``__init__``, ``evalstats.checks``) names
its public objects in one ``if TYPE_CHECKING:`` block of imports, which type
checkers and editors read as they are. At run time :func:`face` reads that
same block from the face's source, the first time a name is asked for, and
imports the module holding it then: ``import evalstats`` stays fast and the
list of public names exists once. ``from .stage import *`` in a block takes
every public name of that face.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["face", "public_imports"]


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def public_imports(path: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of each relative import in the file's ``if TYPE_CHECKING:`` block."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    found = []
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                    found.append((stmt.module, [alias.name for alias in stmt.names]))
    return found


def face(
    name: str, path: str, *, extra: tuple[str, ...] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of the face ``name`` whose source is ``path``.

    ``__all__`` is the sorted list of the face's public names (and ``extra``,
    names the face defines itself).
    """
    table: dict[str, str] = {}

    def names() -> dict[str, str]:
        if not table:
            for module, imported in public_imports(path):
                if imported == ["*"]:
                    below = importlib.import_module(f".{module}", name)
                    table.update(dict.fromkeys(below.__all__, module))
                else:
                    table.update(dict.fromkeys(imported, module))
        return table

    def __getattr__(attr: str) -> Any:
        if attr == "__all__":
            return sorted([*names(), *extra])
        module = names().get(attr)
        if module is None:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        value = getattr(importlib.import_module(f".{module}", name), attr)
        setattr(sys.modules[name], attr, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[name]), *names()})

    return __getattr__, __dir__
