"""Planning: exact power, sample sizes, simulation of whole evals.

How many runs and cases a comparison needs before anyone spends money:
exact power of each rule, plans for cases that differ, and simulation of a
whole eval against a stand-in whose true quality is known.

Exact power
-----------
    power                     Exact probability that compare_counts says B is better
    paired_power              Exact power of the McNemar test to find B better in a paired design
    sample_size               Trials per variant needed to find B better with the given power
    power_curve               Exact power and false-positive rate for each number of trials in a
                              range
    PowerCurve                Exact power and false-positive rate of one rule over a range of
                              trials
    power_table               Exact power with its false-positive rate for each method and trial
                              count
    PowerTable                Exact power and false-positive rate for several rules and trial
                              counts

Plans for cases that differ
---------------------------
    plan                      Cases and repeats for a paired comparison when cases differ
    Plan                      How many cases and repeats a paired, clustered eval needs
    fit_case_model            Estimate a CaseModel from a pilot run, so it can plan the real one

Plans for graded scores
-----------------------
    score_plan                Cases and repeats for comparing mean scores, by simulating the rule
    ScorePlan                 How many cases and repeats a comparison of mean scores needs
    score_power               Simulated power of the mean-score comparison for a design
    ScorePower                Simulated power of one design for a score model, both claims
    ScoreModel                Mean scores and their spread between cases and within a case
    fit_score_model           Fit a ScoreModel to a pilot's scores per case (one-way ANOVA)
    score_model_from_results  Fit a ScoreModel from a pilot run whose samples carry scores

Simulation
----------
    simulate_power            Monte-Carlo power of a whole eval of B against A, as a person would
                              run it
    PowerResult               Simulated power and false-positive rate, each with a 95% Wilson
                              interval
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._power import (
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
    from ._score_plan import (
        ScoreModel,
        ScorePlan,
        ScorePower,
        fit_score_model,
        score_model_from_results,
        score_plan,
        score_power,
    )
    from ._simulate import PowerResult, simulate_power

__getattr__, __dir__ = face(__name__, __file__)
