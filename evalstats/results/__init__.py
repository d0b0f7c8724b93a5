"""The results file: the record format, its writer and its reader.

A run is written as JSONL (a manifest, one record per sample, a summary);
this stage writes those records safely, reads them back and checks them.

Writing and reading
-------------------
    ResultsWriter             Writes a results file: the manifest, then samples as they finish,
                              then a summary
    Results                   A results file as read: manifest, samples in file order, summary,
                              warnings
    read_results              Read a results file written by ResultsWriter
    sample_passed             Whether a sample passed, under counting method COUNTING_METHOD
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._file import Results, ResultsWriter, read_results, sample_passed

__getattr__, __dir__ = face(__name__, __file__)
