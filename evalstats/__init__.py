"""evalstats: what your evals of AI assistants really show.

Run each case several times, score every answer with explicit checks, report
pass rates with honest intervals, compare two variants paired on the same cases,
and plan how many runs are needed before spending money.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .cases import Case, CaseCheck, Suite, find_suite, load_suite, suite_from_cases
from .checks import (
    INSPECTION_FAILURE,
    Verdict,
    avoids,
    check_from_spec,
    contains,
    contains_any,
    has_terms,
    is_json_with,
    links_within,
    matches,
    review_only,
    run_check,
    word_count,
)
from .compare import CaseRow, Comparison, compare, compare_counts, detectable_difference
from .engine import Prompt, RunOutcome, Task, TaskResult, Variant, parse_variant, run
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
from .judge import (
    Calibration,
    CalibrationFileError,
    calibrate,
    corrected_pass_rate,
    judged_by,
)
from .power import (
    CaseModel,
    Plan,
    PowerCurve,
    PowerTable,
    fit_case_model,
    paired_power,
    plan,
    power,
    power_curve,
    power_table,
    sample_size,
)
from .report import (
    GateResult,
    Report,
    ResultsComparison,
    changed_since,
    compare_results,
    compare_runs,
    gate,
    report,
)
from .results import Results, ResultsWriter, read_results, sample_passed
from .review import read_reviews, review
from .runner import RunResult, run_cases
from .simulate import PowerResult, simulate_power
from .standin.judge import make_judge
from .standin.shop import make_assistant
from .traces import Trace, TraceError, read_trace, required_action
from .workspace import Workspace, make_workspace, observe

__all__ = [
    "Calibration",
    "CalibrationFileError",
    "Case",
    "CaseCheck",
    "CaseFileError",
    "CaseModel",
    "CaseRow",
    "ClusteredInterval",
    "Comparison",
    "EvalStatsError",
    "GateResult",
    "INSPECTION_FAILURE",
    "Interval",
    "InvalidArgument",
    "Plan",
    "PowerCurve",
    "PowerResult",
    "PowerTable",
    "Prompt",
    "ProviderError",
    "Report",
    "Results",
    "ResultsComparison",
    "ResultsFileError",
    "ResultsWriter",
    "RunOutcome",
    "RunResult",
    "Suite",
    "Task",
    "TaskResult",
    "Trace",
    "TraceError",
    "TransientProviderError",
    "Variant",
    "Verdict",
    "Workspace",
    "__version__",
    "avoids",
    "calibrate",
    "changed_since",
    "check_from_spec",
    "clustered_mean_ci",
    "clustered_paired_diff_ci",
    "compare",
    "compare_counts",
    "compare_results",
    "compare_runs",
    "contains",
    "contains_any",
    "corrected_pass_rate",
    "detectable_difference",
    "diff_ci",
    "find_suite",
    "fit_case_model",
    "gate",
    "has_terms",
    "is_json_with",
    "judged_by",
    "links_within",
    "load_suite",
    "make_assistant",
    "make_judge",
    "make_workspace",
    "matches",
    "observe",
    "paired_diff_ci",
    "paired_power",
    "parse_variant",
    "plan",
    "power",
    "power_curve",
    "power_table",
    "proportion_ci",
    "read_results",
    "read_reviews",
    "read_trace",
    "report",
    "required_action",
    "review",
    "review_only",
    "run",
    "run_cases",
    "run_check",
    "sample_passed",
    "sample_size",
    "simulate_power",
    "suite_from_cases",
    "word_count",
]
