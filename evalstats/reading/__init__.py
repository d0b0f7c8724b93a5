"""Reading runs back: other tools' logs, merged runs, stored answers scored again.

Every analysis reads a results file (or another tool's log) through the
one-pass tally of this stage, from a run source opened once per command.

Reading
-------
    RunSource                 One run to read (a results file, a Results, records), read at
                              most once and passed to every view of it
    Subset                    The part of a run an analysis reads: cases by id pattern or tag,
                              variants by name
    load_results              Read a results file or another tool's log into Results
    merge_runs                Join two runs of the same suite and variants into one results file
    rescore                   Apply a suite's current checks to a run's stored answers; write a new
                              results file
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._logs import load_results
    from ._merge import merge_runs
    from ._rescore import rescore
    from ._source import RunSource, Subset

__getattr__, __dir__ = face(__name__, __file__)
