"""evalstats: what your evals of AI assistants really show.

Run each case several times, score every answer with explicit checks, report
pass rates with honest intervals, compare two variants paired on the same cases,
and plan how many runs are needed before spending money.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .checks import (
    INSPECTION_FAILURE,
    Verdict,
    avoids,
    check_from_spec,
    contains,
    contains_any,
    has_terms,
    is_json_with,
    matches,
    run_check,
    word_count,
)
from .compare import CaseRow, Comparison, compare, compare_counts, detectable_difference
from .errors import (
    CaseFileError,
    EvalStatsError,
    InvalidArgument,
    ProviderError,
    ResultsFileError,
    TransientProviderError,
)
from .intervals import (
    ClusteredInterval,
    Interval,
    clustered_mean_ci,
    clustered_paired_diff_ci,
    diff_ci,
    paired_diff_ci,
    proportion_ci,
)
from .judge import Calibration, calibrate, corrected_pass_rate, judged_by
from .runner import RunResult, run_cases
from .standin.judge import make_judge
from .standin.shop import make_assistant

__all__ = [
    "Calibration",
    "CaseFileError",
    "CaseRow",
    "ClusteredInterval",
    "Comparison",
    "EvalStatsError",
    "INSPECTION_FAILURE",
    "Interval",
    "InvalidArgument",
    "ProviderError",
    "ResultsFileError",
    "RunResult",
    "TransientProviderError",
    "Verdict",
    "__version__",
    "avoids",
    "calibrate",
    "check_from_spec",
    "clustered_mean_ci",
    "clustered_paired_diff_ci",
    "compare",
    "compare_counts",
    "contains",
    "contains_any",
    "corrected_pass_rate",
    "detectable_difference",
    "diff_ci",
    "has_terms",
    "is_json_with",
    "judged_by",
    "make_assistant",
    "make_judge",
    "matches",
    "paired_diff_ci",
    "proportion_ci",
    "run_cases",
    "run_check",
    "word_count",
]
