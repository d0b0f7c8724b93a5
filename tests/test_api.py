"""The public surface changes only on purpose."""

from __future__ import annotations

import evalstats

EXPECTED = [
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


def test_all_is_sorted_and_expected() -> None:
    assert evalstats.__all__ == sorted(evalstats.__all__)
    assert evalstats.__all__ == EXPECTED


def test_every_name_is_importable() -> None:
    for name in evalstats.__all__:
        assert hasattr(evalstats, name), name


def test_invalid_argument_is_a_value_error() -> None:
    assert issubclass(evalstats.InvalidArgument, ValueError)
    assert issubclass(evalstats.TransientProviderError, evalstats.ProviderError)
