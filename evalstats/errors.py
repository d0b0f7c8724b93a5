"""The exceptions evalstats raises.

::

    EvalStatsError
    ├── InvalidArgument        (also a ValueError): a bad count, level, rate or method
    ├── CaseFileError          a suite file that cannot be read or validated
    ├── ResultsFileError       a results file that cannot be written or read
    ├── ProviderError          a model service refused or failed a request
    │   └── TransientProviderError   429, 5xx, timeouts, dropped connections: worth a retry
    ├── CalibrationFileError   (judge calibration) a file of a person's verdicts that cannot be read
    └── TraceError             (tool traces) a tool-call trace that is missing or malformed

The command line turns any ``EvalStatsError`` into one line on stderr and exit status 2.
"""

from __future__ import annotations

__all__ = [
    "CaseFileError",
    "EvalStatsError",
    "InvalidArgument",
    "ProviderError",
    "ResultsFileError",
    "TransientProviderError",
]


class EvalStatsError(Exception):
    """Base class of every error evalstats raises on purpose."""


class InvalidArgument(EvalStatsError, ValueError):
    """An argument has a value that makes no sense; the message names it."""


class CaseFileError(EvalStatsError):
    """A suite file is malformed; the message names the file, the case and the field."""


class ResultsFileError(EvalStatsError):
    """A results file cannot be created, appended to or read."""


class ProviderError(EvalStatsError):
    """A model service answered with an error that retrying will not fix."""


class TransientProviderError(ProviderError):
    """A model service failed in a way that may pass: rate limits, 5xx, timeouts.

    ``retry_after`` holds the delay in seconds the service asked for, if any.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
