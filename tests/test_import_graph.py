"""Imports go down the data flow: the modules of evalstats import each other without a cycle.

The graph is read from the source with the standard library's ``ast``, so it
sees every import the package can make, at module level and inside functions
(an import inside a function is still an import: it only moves the moment it
runs). Imports under ``if TYPE_CHECKING:`` never run and are left out. The
package root re-exports names lazily, so an import of the root itself (``from
. import __version__``) joins the graph only through what the root imports back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import evalstats

ROOT = "evalstats"
PACKAGE_DIR = Path(evalstats.__file__).parent


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package is its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([ROOT, *parts])] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Import statements anywhere in the tree, skipping the bodies of ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _targets(
    module: str, path: Path, node: ast.Import | ast.ImportFrom, known: set[str]
) -> set[str]:
    """The package modules one import statement loads."""
    names: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            names.add(alias.name)
        return {_known_prefix(name, known) for name in names} - {None}  # type: ignore[operator]
    if node.level:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        names.add(submodule if submodule in known else base)
    return {_known_prefix(name, known) for name in names} - {None}  # type: ignore[operator]


def _known_prefix(name: str, known: set[str]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            for target in _targets(module, path, node, known):
                # Loading a submodule first runs the packages above it, except those
                # already running because the importer lives inside them.
                chain = target.split(".")
                for depth in range(1, len(chain) + 1):
                    step = ".".join(chain[:depth])
                    if step == module or module.startswith(step + "."):
                        continue
                    graph[module].add(step)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycles() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_graph_sees_function_level_imports() -> None:
    # The subprocess harness is loaded only when a "cmd:" task is named.
    assert "evalstats.running._command" in _graph()["evalstats.running._variants"]


def test_a_cycle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_type_checking_imports_are_left_out() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .engine import Task\nelse:\n    from .checks import Verdict\n"
        "def f():\n    from .traces import Trace\n"
    )
    modules = {node.module for node in _imports(tree) if isinstance(node, ast.ImportFrom)}
    assert modules == {"typing", "checks", "traces"}


# --- stages -----------------------------------------------------------------------

#: The stages from the bottom up; a module's folder names its stage, and a module
#: imports only from its own stage or the stages below it. Modules directly under
#: ``evalstats/`` (errors, argument checks, the terminal, output files) are the base; the
#: package root re-exports lazily and ``__main__`` is the command.
STAGES = (
    "base",
    "stats",
    "results",
    "running",
    "reading",
    "planning",
    "deciding",
    "presenting",
    "demo",
    "cli",
)

#: Imports that run against the stages: none.
AGAINST_THE_STAGES: set[tuple[str, str]] = set()


def _stage(module: str) -> str | None:
    """The stage of a module from its dotted name alone (None for the package root)."""
    parts = module.split(".")
    if len(parts) == 1 or module == "evalstats.checks":
        return None  # the package's faces re-export every stage lazily
    if parts[1] == "__main__":
        return "cli"
    return parts[1] if parts[1] in STAGES else "base"


def _against_the_stages(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    found = set()
    for module, targets in graph.items():
        here = _stage(module)
        for target in targets:
            there = _stage(target)
            if here is None or there is None:
                continue  # the package root
            if any(other.startswith(target + ".") for other in targets):
                continue  # a stage's face, loaded on the way to one of its modules
            if STAGES.index(there) > STAGES.index(here):
                found.add((module, target))
    return found


def test_imports_go_down_the_stages() -> None:
    found = _against_the_stages(_graph())
    assert found <= AGAINST_THE_STAGES, "against the stages: " + ", ".join(
        f"{a} -> {b}" for a, b in sorted(found - AGAINST_THE_STAGES)
    )
    assert found == AGAINST_THE_STAGES, "cut, so no longer listed: " + ", ".join(
        f"{a} -> {b}" for a, b in sorted(AGAINST_THE_STAGES - found)
    )


def test_every_module_sits_in_a_stage() -> None:
    # Only the base modules live directly under evalstats/; every other module is
    # inside a stage's folder.
    base = {m for m in _modules() if m.count(".") == 1}
    assert base == {
        "evalstats.__main__",
        "evalstats._files",
        "evalstats._lazy",
        "evalstats._palette",
        "evalstats._repr",
        "evalstats._terminal",
        "evalstats._text",
        "evalstats._validate",
        "evalstats.checks",
        "evalstats.errors",
    } | {f"evalstats.{s}" for s in STAGES[1:]}


def test_an_import_up_the_stages_is_found() -> None:
    graph = {
        "evalstats.stats._x": {"evalstats.running", "evalstats.running._y"},
        "evalstats.stats._z": {"evalstats.presenting"},
        "evalstats.running._y": {"evalstats.stats", "evalstats.stats._x"},
    }
    assert _against_the_stages(graph) == {
        ("evalstats.stats._x", "evalstats.running._y"),
        ("evalstats.stats._z", "evalstats.presenting"),
    }
