"""A script of simulations/ loaded from its file, for the reduced-size tests that run it.

The folder is not a package, and is not put on sys.path (its coverage.py would
hide the coverage package). The module is registered under its name before it
runs, so that its dataclasses can look their module up.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SIMULATIONS = Path(__file__).resolve().parents[1] / "simulations"


def load(name: str) -> ModuleType:
    """``simulations/NAME.py``, run as the module ``NAME_simulation``."""
    spec = importlib.util.spec_from_file_location(f"{name}_simulation", SIMULATIONS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
