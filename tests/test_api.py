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
    "Limits",
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
    "Retries",
    "RunOutcome",
    "RunResult",
    "RunSource",
    "ScoreCaseRow",
    "ScoreComparison",
    "ScoreInterval",
    "ScoreModel",
    "ScoreNonInferiority",
    "ScorePlan",
    "ScorePower",
    "Selection",
    "SequentialComparison",
    "Subset",
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
    "cases_for_margin",
    "changed_since",
    "check_from_spec",
    "clustered_mean_ci",
    "clustered_paired_diff_ci",
    "compare",
    "compare_counts",
    "compare_results",
    "compare_runs",
    "compare_scores",
    "compare_variants",
    "contains",
    "contains_any",
    "corrected_pass_rate",
    "covers",
    "detectable_difference",
    "diff_ci",
    "equals",
    "find_suite",
    "fit_case_model",
    "fit_score_model",
    "gate",
    "has_terms",
    "html_report",
    "is_json_with",
    "json_schema",
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
    "score_mean_ci",
    "score_model_from_results",
    "score_non_inferiority",
    "score_plan",
    "score_power",
    "sequential_compare",
    "sequential_plan",
    "sequential_results",
    "sequential_score_compare",
    "sequential_score_results",
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


# --- the faces: one list, the docstring maps kept true ------------------------------

STAGES = ("stats", "results", "running", "reading", "planning", "deciding", "presenting", "demo")


def _mapped(doc: str) -> set[str]:
    """The names a face's docstring maps: the first word of each entry (four spaces, the
    name, two or more spaces, what it does)."""
    import re

    return {m.group(1) for m in re.finditer(r"^    ([A-Za-z_]\w*) {2,}\S", doc, re.M)}


def _listed(doc: str) -> set[str]:
    """The names the root's docstring lists under each stage, comma-separated."""
    import re

    names: set[str] = set()
    for line in doc.splitlines():
        if line.startswith("    "):
            names.update(n.strip() for n in line.split(",") if n.strip())
    assert all(re.fullmatch(r"[A-Za-z_]\w*", n) for n in names), names
    return names


def test_the_root_is_the_stages_faces_and_nothing_else() -> None:
    import importlib

    union = {"__version__"}
    for stage in STAGES:
        module = importlib.import_module(f"evalstats.{stage}")
        assert set(module.__all__) <= set(evalstats.__all__), stage
        union |= set(module.__all__)
    union |= set(importlib.import_module("evalstats.errors").__all__) & set(EXPECTED)
    assert union == set(evalstats.__all__)


def test_every_docstring_map_lists_exactly_its_names() -> None:
    import importlib

    for stage in STAGES:
        module = importlib.import_module(f"evalstats.{stage}")
        assert _mapped(module.__doc__) == set(module.__all__), stage
    assert _listed(evalstats.__doc__) == set(evalstats.__all__) - {"__version__"}
    checks = importlib.import_module("evalstats.checks")
    assert _mapped(checks.__doc__) == set(checks.__all__)
    assert set(checks.__all__) <= set(evalstats.__all__)


def test_every_public_module_imports_as_a_module() -> None:
    import importlib
    import types

    for name in (*STAGES, "errors", "checks", "cli", "demo.notes_agent"):
        module = importlib.import_module(f"evalstats.{name}")
        assert isinstance(module, types.ModuleType), name
        alias = __import__(f"evalstats.{name}", fromlist=["_"])
        assert alias is module, name


def test_a_stage_face_loads_its_module_only_when_a_name_is_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, evalstats.stats as s; print('evalstats.stats._ppi' in sys.modules); "
        "s.ppi_pass_rate; print('evalstats.stats._ppi' in sys.modules); "
        "import evalstats; print(evalstats.ppi_pass_rate is s.ppi_pass_rate)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["False", "True", "True"]
