"""Every third-party package the code imports is declared in pyproject.toml."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import evalstats

ROOT = Path(evalstats.__file__).parent
#: Import names whose distribution is named otherwise.
DISTRIBUTION = {"yaml": "pyyaml", "inspect_ai": "inspect-ai"}


def _imported() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "evalstats":
                    found.setdefault(top, set()).add(path.name)
    return found


def _declared() -> set[str]:
    project = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += extra
    return {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].lower() for spec in specs}


def test_every_imported_package_is_declared() -> None:
    declared = _declared()
    missing = {
        name: sorted(files)
        for name, files in _imported().items()
        if DISTRIBUTION.get(name, name).lower().replace("_", "-") not in declared
    }
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
