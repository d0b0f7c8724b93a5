"""Deciding: the variants of a run compared, gates, runs compared, sequential looks.

Every verdict says which claim it makes (about these cases, or about cases
like these); looking again as data arrive stays valid only with the
sequential comparison.

Two variants of a run
---------------------
    compare_results           Compare variant b with variant a of one results file
    ResultsComparison         Variant B against variant A in one results file

Several variants
----------------
    compare_variants          Compare three or more variants of one run, adjusted for multiplicity
    MultipleComparison        Several variants of one run compared, adjusted for multiplicity

Release gates
-------------
    gate                      Decide whether a variant of a run meets a release policy
    GateResult                Whether a run meets a policy
    non_inferiority           Is variant b of a run no worse than a by more than margin?
    NonInferiority            Whether variant B is no worse than A by more than a margin

Looking as data arrive
----------------------
    sequential_compare        Compare two variants with a verdict valid however often one looks
    sequential_results        The anytime-valid comparison of variant b with a in a results file
    sequential_plan           Power within a budget and pairs to a verdict of the sequential design
    sequential_score_compare  Compare two variants' mean scores with a verdict valid however often
                              one looks
    sequential_score_results  The anytime-valid comparison of variant b's mean score with a's in a
                              results file
    SequentialComparison      The anytime-valid comparison of A and B after the latest look (pass
                              rates, or mean scores with ``on="score"``)

Runs over time
--------------
    compare_runs              Compare a newer run with an older one, but only when they are
                              comparable
    changed_since             Whether git shows any change under paths since ref
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._compare_results import ResultsComparison, compare_results
    from ._gate import GateResult, NonInferiority, gate, non_inferiority
    from ._previous_runs import changed_since, compare_runs
    from ._score_sequential import sequential_score_compare, sequential_score_results
    from ._sequential import (
        SequentialComparison,
        sequential_compare,
        sequential_plan,
        sequential_results,
    )
    from ._several import MultipleComparison, compare_variants

__getattr__, __dir__ = face(__name__, __file__)
