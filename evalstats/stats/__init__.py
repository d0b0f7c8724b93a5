"""Statistics on counts: intervals, paired comparisons, the case model, PPI.

The first stage: nothing here knows about results files, runs or suites.
Every function takes counts or outcomes, checks them at the door and returns
a frozen result that prints as a person writes it.

Intervals
---------
    Interval                  An estimate with a confidence interval
    ClusteredInterval         An Interval over runs grouped by case (a case is a cluster)
    proportion_ci             Confidence interval for a pass rate from successes out of trials
    diff_ci                   Confidence interval for the difference of two pass rates, p_b - p_a
    paired_diff_ci            Confidence interval for p_b - p_a from paired pass/fail outcomes
    paired_diff_pvalue        The p-value of the paired score test of p_b - p_a = delta0
    clustered_mean_ci         Mean pass rate over runs grouped by case, with an interval about
                              cases like these
    clustered_paired_diff_ci  Mean paired difference b - a over runs grouped by case
    cases_for_margin          The fewest cases whose clustered paired interval can show "within
                              margin"

Mean scores
-----------
    ScoreInterval             An Interval for a mean score in [0, 1], printed as a score
    score_mean_ci             Mean score over runs grouped by case, about these cases or cases
                              like these (t/CR2, betting, bootstrap)
    ScoreComparison           Variant B's mean score against A's, paired by case and repeat
    ScoreCaseRow              One case of a score comparison, with its Holm-adjusted flag
    compare_scores            Compare two variants' mean scores from paired scores
    ScoreNonInferiority       Whether B's mean score is shown within a margin of A's
    score_non_inferiority     The non-inferiority gate on the mean score

Comparisons
-----------
    Comparison                The outcome of comparing variant A with variant B
    CaseRow                   One case of a comparison
    compare                   Compare two variants from the pass/fail outcomes of each case's
                              repeats
    compare_counts            Compare the pass rates of two independent samples, A and B
    detectable_difference     The smallest difference p_b - p_a that these trials would usually
                              detect

How cases differ
----------------
    CaseModel                 How pass rates vary between cases, for A and for B

Rates corrected by a reviewed subset
------------------------------------
    ppi_pass_rate             Pass rate corrected by a random reviewed subset (PPI++, power-tuned)
    ppi_diff                  Corrected paired difference of pass rates, B minus A, by PPI++
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._casemodel import CaseModel
    from ._compare import CaseRow, Comparison, compare, compare_counts, detectable_difference
    from ._intervals import (
        ClusteredInterval,
        Interval,
        cases_for_margin,
        clustered_mean_ci,
        clustered_paired_diff_ci,
        diff_ci,
        paired_diff_ci,
        proportion_ci,
    )
    from ._ppi import ppi_diff, ppi_pass_rate
    from ._score_compare import (
        ScoreCaseRow,
        ScoreComparison,
        ScoreNonInferiority,
        compare_scores,
        score_non_inferiority,
    )
    from ._scores import ScoreInterval, score_mean_ci
    from ._tango import paired_diff_pvalue

__getattr__, __dir__ = face(__name__, __file__)
