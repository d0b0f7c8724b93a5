"""evalstats: what your evals of AI assistants really show.

Run each case several times, score every answer with explicit checks, report
pass rates with honest intervals, compare two variants paired on the same cases,
and plan how many runs are needed before spending money.

The names below are imported when first used, so that ``import evalstats``
(and ``evalstats --help``, and every subprocess the ``cmd:`` harness starts)
stays fast; ``from evalstats import proportion_ci`` works as usual.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module it lives in.
_EXPORTS: dict[str, str] = {
    "Calibration": "running._judge",
    "CalibrationFileError": "running._judge",
    "Case": "running._suite",
    "CaseCheck": "running._suite",
    "CaseFileError": "errors",
    "CaseModel": "stats._casemodel",
    "CaseRow": "stats._compare",
    "ClusteredInterval": "stats._intervals",
    "Comparison": "stats._compare",
    "EvalStatsError": "errors",
    "GateResult": "deciding._gate",
    "INSPECTION_FAILURE": "running._checks",
    "Interval": "stats._intervals",
    "InvalidArgument": "errors",
    "MultipleComparison": "deciding._several",
    "NonInferiority": "deciding._gate",
    "Plan": "planning._power",
    "PowerCurve": "planning._power",
    "PowerResult": "planning._simulate",
    "PowerTable": "planning._power",
    "Prompt": "running._tasks",
    "ProviderError": "errors",
    "Report": "presenting._report",
    "Results": "results._file",
    "ResultsComparison": "deciding._compare_results",
    "ResultsFileError": "errors",
    "ResultsWriter": "results._file",
    "RunOutcome": "running._engine",
    "RunResult": "running._run_cases",
    "SequentialComparison": "deciding._sequential",
    "Suite": "running._suite",
    "Task": "running._tasks",
    "TaskResult": "running._tasks",
    "Trace": "running._traces",
    "TraceError": "running._traces",
    "TransientProviderError": "errors",
    "Variant": "running._variants",
    "Verdict": "running._checks",
    "Workspace": "running._workspace",
    "avoids": "running._checks",
    "calibrate": "running._judge",
    "changed_since": "deciding._previous_runs",
    "check_from_spec": "running._checks",
    "clustered_mean_ci": "stats._intervals",
    "clustered_paired_diff_ci": "stats._intervals",
    "compare": "stats._compare",
    "compare_counts": "stats._compare",
    "compare_results": "deciding._compare_results",
    "compare_runs": "deciding._previous_runs",
    "compare_variants": "deciding._several",
    "contains": "running._checks",
    "contains_any": "running._checks",
    "corrected_pass_rate": "running._judge",
    "detectable_difference": "stats._compare",
    "diff_ci": "stats._intervals",
    "find_suite": "running._suite",
    "fit_case_model": "planning._power",
    "gate": "deciding._gate",
    "has_terms": "running._checks",
    "html_report": "presenting._html",
    "is_json_with": "running._checks",
    "judged_by": "running._judge",
    "links_within": "running._checks",
    "load_results": "reading._logs",
    "load_suite": "running._suite",
    "make_assistant": "demo._shop",
    "make_judge": "demo._judge",
    "make_workspace": "running._workspace",
    "matches": "running._checks",
    "merge_runs": "reading._merge",
    "non_inferiority": "deciding._gate",
    "observe": "running._workspace",
    "paired_diff_ci": "stats._intervals",
    "paired_diff_pvalue": "stats._tango",
    "paired_power": "planning._power",
    "parse_variant": "running._variants",
    "plan": "planning._power",
    "power": "planning._power",
    "power_curve": "planning._power",
    "power_table": "planning._power",
    "ppi_diff": "stats._ppi",
    "ppi_pass_rate": "stats._ppi",
    "proportion_ci": "stats._intervals",
    "read_results": "results._file",
    "read_reviews": "presenting._review",
    "read_trace": "running._traces",
    "report": "presenting._report",
    "required_action": "running._traces",
    "rescore": "reading._rescore",
    "review": "presenting._review",
    "review_only": "running._checks",
    "run": "running._engine",
    "run_cases": "running._run_cases",
    "run_check": "running._checks",
    "sample_passed": "results._file",
    "sample_size": "planning._power",
    "sequential_compare": "deciding._sequential",
    "sequential_plan": "deciding._sequential",
    "sequential_results": "deciding._sequential",
    "simulate_power": "planning._simulate",
    "suite_from_cases": "running._suite",
    "word_count": "running._checks",
}

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
    "MultipleComparison",
    "NonInferiority",
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
    "SequentialComparison",
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
    "compare_variants",
    "contains",
    "contains_any",
    "corrected_pass_rate",
    "detectable_difference",
    "diff_ci",
    "find_suite",
    "fit_case_model",
    "gate",
    "has_terms",
    "html_report",
    "is_json_with",
    "judged_by",
    "links_within",
    "load_results",
    "load_suite",
    "make_assistant",
    "make_judge",
    "make_workspace",
    "matches",
    "merge_runs",
    "non_inferiority",
    "observe",
    "paired_diff_ci",
    "paired_diff_pvalue",
    "paired_power",
    "parse_variant",
    "plan",
    "power",
    "power_curve",
    "power_table",
    "ppi_diff",
    "ppi_pass_rate",
    "proportion_ci",
    "read_results",
    "read_reviews",
    "read_trace",
    "report",
    "required_action",
    "rescore",
    "review",
    "review_only",
    "run",
    "run_cases",
    "run_check",
    "sample_passed",
    "sample_size",
    "sequential_compare",
    "sequential_plan",
    "sequential_results",
    "simulate_power",
    "suite_from_cases",
    "word_count",
]

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from .deciding._compare_results import ResultsComparison, compare_results
    from .deciding._gate import GateResult, NonInferiority, gate, non_inferiority
    from .deciding._previous_runs import changed_since, compare_runs
    from .deciding._sequential import (
        SequentialComparison,
        sequential_compare,
        sequential_plan,
        sequential_results,
    )
    from .deciding._several import MultipleComparison, compare_variants
    from .demo._judge import make_judge
    from .demo._shop import make_assistant
    from .errors import (
        CaseFileError,
        EvalStatsError,
        InvalidArgument,
        ProviderError,
        ResultsFileError,
        TransientProviderError,
    )
    from .planning._power import (
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
    from .planning._simulate import PowerResult, simulate_power
    from .presenting._html import html_report
    from .presenting._report import Report, report
    from .presenting._review import read_reviews, review
    from .reading._logs import load_results
    from .reading._merge import merge_runs
    from .reading._rescore import rescore
    from .results._file import Results, ResultsWriter, read_results, sample_passed
    from .running._checks import (
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
    from .running._engine import RunOutcome, run
    from .running._judge import (
        Calibration,
        CalibrationFileError,
        calibrate,
        corrected_pass_rate,
        judged_by,
    )
    from .running._run_cases import RunResult, run_cases
    from .running._suite import Case, CaseCheck, Suite, find_suite, load_suite, suite_from_cases
    from .running._tasks import Prompt, Task, TaskResult
    from .running._traces import Trace, TraceError, read_trace, required_action
    from .running._variants import Variant, parse_variant
    from .running._workspace import Workspace, make_workspace, observe
    from .stats._casemodel import CaseModel
    from .stats._compare import CaseRow, Comparison, compare, compare_counts, detectable_difference
    from .stats._intervals import (
        ClusteredInterval,
        Interval,
        clustered_mean_ci,
        clustered_paired_diff_ci,
        diff_ci,
        paired_diff_ci,
        proportion_ci,
    )
    from .stats._ppi import ppi_diff, ppi_pass_rate
    from .stats._tango import paired_diff_pvalue


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalstats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
