"""Reading runs back: the one-pass tally of a results file, other tools' logs, merge, rescore."""
