"""Running an eval: suites, checks, variants, tasks, providers and the engine.

A suite file becomes cases, a variant names a task and a prompt transform,
and the engine schedules every (case, repeat, variant), gets each answer (in
process, from a model service over httpx, or from a command in a fresh
workspace), scores it with the case's checks and writes it to the results
file. The check factories are also in :mod:`evalstats.checks`.

Suites
------
    Suite                     A named, versioned set of cases
    Case                      One case: what is asked, and the checks every answer must pass
    CaseCheck                 One check of a case: the callable, its axis and the spec it came from
    load_suite                Read and validate a suite from a JSON or YAML file, or a shipped
                              suite by name
    find_suite                The file of a suite given by name ("shop") or by path
    suite_from_cases          A suite from Python Case objects (runner.Case is the same class)

Checks
------
    Verdict                   What one check concluded about one answer
    INSPECTION_FAILURE        the reason prefix of a failure with nothing to inspect
    run_check                 Run one check on one answer and return its Verdict
    check_from_spec           Build a built-in check from a declarative spec, as written in case
                              files
    contains                  A check that the answer contains text
    contains_any              A check that the answer contains at least one of texts
    avoids                    A check that the answer contains none of phrases (case-insensitive)
    has_terms                 A check that every one of terms appears as a whole term in the answer
    covers                    A graded check: the share of terms the answer mentions, a score
    matches                   A check that the regular expression pattern is found in the answer
    word_count                A check that the answer has between low and high words, inclusive
    is_json_with              A check that the answer is a JSON object that has every key in keys
    equals                    A check that the answer is text, whitespace around either aside
    json_schema               A check that the answer is JSON that a JSON Schema accepts
    links_within              A check that the answer has links and every one leads to one of
                              domains
    review_only               A check that leaves the answer to a person: every verdict is unscored
    required_action           A check that the trace holds an executed call to tool with that
                              result

Model-graded checks and their calibration
-----------------------------------------
    judged_by                 A model-graded check: ask judge whether an answer meets rubric
    calibrate                 Measure a check against answers a person has already judged
    Calibration               How a check's verdicts compare with a person's on the same answers
    CalibrationFileError      A calibration file that cannot be read; the message names the file,
                              line and problem
    corrected_pass_rate       The true pass rate behind a judge's pass rate, corrected for the
                              judge's errors

Variants and tasks
------------------
    Variant                   A named way of answering: a task and an optional prompt transform
    parse_variant             A variant from its command-line form NAME=TASK[,KEY=VALUE]
    Task                      Anything that answers prompts for the engine
    TaskResult                What a task returned: the answer and, when it knows them, more facts
    Prompt                    What is sent to a task for one sample

Running
-------
    Selection                 Which cases of the suite run
    Retries                   How transient failures are retried
    Limits                    How many samples are in flight at once, and how long each attempt
                              may take
    run                       Run every case with every variant runs times and write each sample to
                              out
    RunOutcome                How a run ended
    run_cases                 Run task on every case runs times and score every answer
    RunResult                 The samples of one run of one variant over a set of cases

Tool traces and workspaces
--------------------------
    Trace                     What a tool-using assistant did in one sample
    TraceError                A trace that cannot be read: missing, cut off, malformed or
                              incomplete
    read_trace                Read a trace file (or its lines) into a Trace
    Workspace                 A fresh folder for one sample; see the module docstring for its
                              layout
    make_workspace            Lay out a fresh workspace for one sample of case
    observe                   What a sample left behind: marker seen, fixtures and private files,
                              files added
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._checks import (
        INSPECTION_FAILURE,
        Verdict,
        avoids,
        check_from_spec,
        contains,
        contains_any,
        equals,
        has_terms,
        is_json_with,
        json_schema,
        links_within,
        matches,
        review_only,
        run_check,
        word_count,
    )
    from ._engine import RunOutcome, run
    from ._graded import covers
    from ._judge import Calibration, CalibrationFileError, calibrate, corrected_pass_rate, judged_by
    from ._options import Limits, Retries, Selection
    from ._run_cases import RunResult, run_cases
    from ._suite import Case, CaseCheck, Suite, find_suite, load_suite, suite_from_cases
    from ._tasks import Prompt, Task, TaskResult
    from ._traces import Trace, TraceError, read_trace, required_action
    from ._variants import Variant, parse_variant
    from ._workspace import Workspace, make_workspace, observe

__getattr__, __dir__ = face(__name__, __file__)
