"""Running an eval: suites, checks, variants, tasks, providers and the engine.

A suite file becomes cases, a variant names a task and a prompt transform, and
the engine schedules every (case, repeat, variant), gets each answer (in
process, from a model service over httpx, or from a command in a fresh
workspace), scores it with the case's checks and writes it to the results file.
"""
