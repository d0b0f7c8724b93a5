"""The offline stand-ins whose true quality is known, the notes assistant, and the demos.

The stand-ins register themselves as the task kind ``standin:`` and the
judge kind ``standin:judge``; the notes assistant runs as ``python -m
evalstats.demo.notes_agent``.

Stand-ins
---------
    make_assistant            The offline shop assistant, version 1 or 2
    make_judge                An offline judge with a set sensitivity and specificity
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._judge import make_judge
    from ._shop import make_assistant

__getattr__, __dir__ = face(__name__, __file__)
