"""evalstats: what your evals of AI assistants really show.

Run each case several times, score every answer with explicit checks, report
pass rates with honest intervals, compare two variants paired on the same cases,
and plan how many runs are needed before spending money.
"""

from __future__ import annotations

from .checks import Verdict
from .errors import (
    CaseFileError,
    EvalStatsError,
    InvalidArgument,
    ProviderError,
    ResultsFileError,
    TransientProviderError,
)
from .intervals import Interval

__version__ = "0.1.0"

__all__ = [
    "CaseFileError",
    "EvalStatsError",
    "Interval",
    "InvalidArgument",
    "ProviderError",
    "ResultsFileError",
    "TransientProviderError",
    "Verdict",
    "__version__",
]
