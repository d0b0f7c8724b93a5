"""``python -m evalstats``: the same command as ``evalstats``."""

from __future__ import annotations

import sys

from .cli._main import main

if __name__ == "__main__":
    sys.exit(main())
