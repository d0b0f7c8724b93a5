"""Statistics on counts: intervals, exact binomial tests, paired comparisons, the case model, PPI.

The first stage: nothing here knows about results files, runs or suites. Every
function takes counts or outcomes, checks them at the door and returns a frozen
result that prints as a person writes it.
"""
