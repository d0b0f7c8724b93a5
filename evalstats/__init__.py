"""evalstats: what your evals of AI assistants really show.

Run each case several times, score every answer with explicit checks, report
pass rates with honest intervals, compare two variants paired on the same cases,
and plan how many runs are needed before spending money.

The package is cut into stages, in the order data flows through them; each is
a subpackage whose docstring says what every name does. The names below are
all importable from ``evalstats`` itself, and load on first use, so that
``import evalstats`` (and ``evalstats --help``, and every subprocess the
``cmd:`` harness starts) stays fast.

Statistics on counts (:mod:`evalstats.stats`)
---------------------------------------------
    CaseModel, CaseRow, ClusteredInterval, Comparison, Interval, ScoreCaseRow, ScoreComparison,
    ScoreInterval, ScoreNonInferiority, cases_for_margin, clustered_mean_ci,
    clustered_paired_diff_ci, compare, compare_counts, compare_scores, detectable_difference,
    diff_ci, paired_diff_ci, paired_diff_pvalue, ppi_diff, ppi_pass_rate, proportion_ci,
    score_mean_ci, score_non_inferiority

The results file (:mod:`evalstats.results`)
-------------------------------------------
    Results, ResultsWriter, read_results, sample_passed

Running an eval (:mod:`evalstats.running`)
------------------------------------------
    Calibration, CalibrationFileError, Case, CaseCheck, INSPECTION_FAILURE, Limits, Prompt,
    Retries, RunOutcome, RunResult, Selection, Suite, Task, TaskResult, Trace, TraceError, Variant,
    Verdict, Workspace, avoids, calibrate, check_from_spec, contains, contains_any, covers,
    corrected_pass_rate, equals, find_suite, has_terms, is_json_with, json_schema, judged_by,
    links_within, load_suite, make_workspace, matches, observe, parse_variant, read_trace,
    required_action, review_only, run, run_cases, run_check, suite_from_cases, word_count

Reading runs back (:mod:`evalstats.reading`)
--------------------------------------------
    RunSource, Subset, load_results, merge_runs, rescore

Planning (:mod:`evalstats.planning`)
------------------------------------
    Plan, PowerCurve, PowerResult, PowerTable, ScoreModel, ScorePlan, ScorePower, fit_case_model,
    fit_score_model, paired_power, plan, power, power_curve, power_table, sample_size,
    score_model_from_results, score_plan, score_power, simulate_power

Deciding (:mod:`evalstats.deciding`)
------------------------------------
    GateResult, MultipleComparison, NonInferiority, ResultsComparison, SequentialComparison,
    changed_since, compare_results, compare_runs, compare_variants, gate, non_inferiority,
    sequential_compare, sequential_plan, sequential_results, sequential_score_compare,
    sequential_score_results

Presenting (:mod:`evalstats.presenting`)
----------------------------------------
    Report, html_report, read_reviews, report, review

The offline stand-ins (:mod:`evalstats.demo`)
---------------------------------------------
    make_assistant, make_judge

Errors (:mod:`evalstats.errors`)
--------------------------------
    CaseFileError, EvalStatsError, InvalidArgument, ProviderError, ResultsFileError,
    TransientProviderError

The check factories also have a namespace of their own, :mod:`evalstats.checks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import face

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .deciding import *
    from .demo import *
    from .errors import (
        CaseFileError,
        EvalStatsError,
        InvalidArgument,
        ProviderError,
        ResultsFileError,
        TransientProviderError,
    )
    from .planning import *
    from .presenting import *
    from .reading import *
    from .results import *
    from .running import *
    from .stats import *

__getattr__, __dir__ = face(__name__, __file__, extra=("__version__",))
