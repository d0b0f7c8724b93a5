"""The public surface changes only on purpose."""

from __future__ import annotations

import evalstats

EXPECTED = [
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


def test_all_is_sorted_and_expected() -> None:
    assert evalstats.__all__ == sorted(evalstats.__all__)
    assert evalstats.__all__ == EXPECTED


def test_every_name_is_importable() -> None:
    for name in evalstats.__all__:
        assert hasattr(evalstats, name), name


def test_invalid_argument_is_a_value_error() -> None:
    assert issubclass(evalstats.InvalidArgument, ValueError)
    assert issubclass(evalstats.TransientProviderError, evalstats.ProviderError)
