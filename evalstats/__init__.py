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
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module it lives in.
_EXPORTS: dict[str, str] = {
    "Calibration": "judge",
    "CalibrationFileError": "judge",
    "Case": "cases",
    "CaseCheck": "cases",
    "CaseFileError": "errors",
    "CaseModel": "casemodel",
    "CaseRow": "compare",
    "ClusteredInterval": "intervals",
    "Comparison": "compare",
    "EvalStatsError": "errors",
    "GateResult": "gate",
    "INSPECTION_FAILURE": "checks",
    "Interval": "intervals",
    "InvalidArgument": "errors",
    "MultipleComparison": "multiple",
    "NonInferiority": "gate",
    "Plan": "power",
    "PowerCurve": "power",
    "PowerResult": "simulate",
    "PowerTable": "power",
    "Prompt": "tasks",
    "ProviderError": "errors",
    "Report": "report",
    "Results": "results",
    "ResultsComparison": "comparison",
    "ResultsFileError": "errors",
    "ResultsWriter": "results",
    "RunOutcome": "engine",
    "RunResult": "runner",
    "SequentialComparison": "sequential",
    "Suite": "cases",
    "Task": "tasks",
    "TaskResult": "tasks",
    "Trace": "traces",
    "TraceError": "traces",
    "TransientProviderError": "errors",
    "Variant": "variants",
    "Verdict": "checks",
    "Workspace": "workspace",
    "avoids": "checks",
    "calibrate": "judge",
    "changed_since": "runs",
    "check_from_spec": "checks",
    "clustered_mean_ci": "intervals",
    "clustered_paired_diff_ci": "intervals",
    "compare": "compare",
    "compare_counts": "compare",
    "compare_results": "comparison",
    "compare_runs": "runs",
    "compare_variants": "multiple",
    "contains": "checks",
    "contains_any": "checks",
    "corrected_pass_rate": "judge",
    "detectable_difference": "compare",
    "diff_ci": "intervals",
    "find_suite": "cases",
    "fit_case_model": "power",
    "gate": "gate",
    "has_terms": "checks",
    "html_report": "html",
    "is_json_with": "checks",
    "judged_by": "judge",
    "links_within": "checks",
    "load_results": "imports",
    "load_suite": "cases",
    "make_assistant": "standin.shop",
    "make_judge": "standin.judge",
    "make_workspace": "workspace",
    "matches": "checks",
    "merge_runs": "merge",
    "non_inferiority": "gate",
    "observe": "workspace",
    "paired_diff_ci": "intervals",
    "paired_power": "power",
    "parse_variant": "variants",
    "plan": "power",
    "power": "power",
    "power_curve": "power",
    "power_table": "power",
    "ppi_diff": "ppi",
    "ppi_pass_rate": "ppi",
    "proportion_ci": "intervals",
    "read_results": "results",
    "read_reviews": "review",
    "read_trace": "traces",
    "report": "report",
    "required_action": "traces",
    "rescore": "rescore",
    "review": "review",
    "review_only": "checks",
    "run": "engine",
    "run_cases": "runner",
    "run_check": "checks",
    "sample_passed": "results",
    "sample_size": "power",
    "sequential_compare": "sequential",
    "sequential_plan": "sequential",
    "sequential_results": "sequential",
    "simulate_power": "simulate",
    "suite_from_cases": "cases",
    "word_count": "checks",
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
    from .casemodel import CaseModel
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
    from .comparison import ResultsComparison, compare_results
    from .engine import RunOutcome, run
    from .errors import (
        CaseFileError,
        EvalStatsError,
        InvalidArgument,
        ProviderError,
        ResultsFileError,
        TransientProviderError,
    )
    from .gate import GateResult, NonInferiority, gate, non_inferiority
    from .html import html_report
    from .imports import load_results
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
    from .merge import merge_runs
    from .multiple import MultipleComparison, compare_variants
    from .power import (
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
    from .ppi import ppi_diff, ppi_pass_rate
    from .report import Report, report
    from .rescore import rescore
    from .results import Results, ResultsWriter, read_results, sample_passed
    from .review import read_reviews, review
    from .runner import RunResult, run_cases
    from .runs import changed_since, compare_runs
    from .sequential import (
        SequentialComparison,
        sequential_compare,
        sequential_plan,
        sequential_results,
    )
    from .simulate import PowerResult, simulate_power
    from .standin.judge import make_judge
    from .standin.shop import make_assistant
    from .tasks import Prompt, Task, TaskResult
    from .traces import Trace, TraceError, read_trace, required_action
    from .variants import Variant, parse_variant
    from .workspace import Workspace, make_workspace, observe


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalstats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package's module type: a public function keeps its name.

    Five public functions share their module's name (``power``, ``compare``,
    ``report``, ``review``, ``gate``). Importing such a submodule makes the import system
    bind it on the package, which would hide the function; this keeps the
    function there instead. The submodules stay importable by their full name
    (``from evalstats.power import sample_size``).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
