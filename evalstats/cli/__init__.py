"""The ``evalstats`` command."""

from ._main import main

__all__ = ["main"]
