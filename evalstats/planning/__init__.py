"""Planning: exact power, sample sizes, simulation of whole evals, and cost."""
