"""Tool-using assistants that evalstats evaluates through its subprocess harness.

:mod:`evalstats.agents.notes` is a small notes assistant: it answers a
question about the notes in a workspace with the tools ``list_notes``,
``read_note`` and ``propose_note``, over any provider, within budgets, and
writes a JSONL trace of every model request and response.
"""

from __future__ import annotations

__all__: list[str] = []
