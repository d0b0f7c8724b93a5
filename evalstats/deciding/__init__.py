"""Deciding: two variants of a run compared, gates, runs compared, several variants, looks.

Sequential looks stay valid however often they are made.
"""
