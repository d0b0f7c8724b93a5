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


def test_all_is_sorted_and_expected() -> None:
    assert evalstats.__all__ == sorted(evalstats.__all__)
    assert evalstats.__all__ == EXPECTED


def test_every_name_is_importable() -> None:
    for name in evalstats.__all__:
        assert hasattr(evalstats, name), name


def test_invalid_argument_is_a_value_error() -> None:
    assert issubclass(evalstats.InvalidArgument, ValueError)
    assert issubclass(evalstats.TransientProviderError, evalstats.ProviderError)


def test_import_is_light_and_names_load_on_first_use() -> None:
    # CONVENTIONS: heavy imports happen where they are needed, so that
    # `import evalstats` and every `cmd:` subprocess stay fast.
    import subprocess
    import sys

    code = (
        "import sys, evalstats; "
        "heavy = [m for m in ('numpy', 'scipy', 'statsmodels', 'matplotlib', 'httpx') "
        "if m in sys.modules]; "
        "print(heavy); "
        "evalstats.proportion_ci(3, 10); print('numpy' in sys.modules); "
        "evalstats.proportion_ci([3], [10]); print('numpy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "False"  # one count needs no numpy (a small report stays fast)
    assert out[2] == "True"  # arrays load it on first use


def test_no_public_name_is_also_a_module() -> None:
    # A public function never shares its name with a module of the package, so
    # importing a module by its full name cannot hide a function.
    import pkgutil

    modules = {m.name.rpartition(".")[2] for m in pkgutil.walk_packages(evalstats.__path__)}
    assert not modules & set(evalstats.__all__)
    from evalstats.planning._power import sample_size

    assert sample_size(0.7, 0.9) == 61  # the README's figure


def test_unknown_names_raise_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = evalstats.nonsense  # type: ignore[attr-defined]
