"""Presenting: the text and JSON report, the HTML page, figures and human review.

Text, JSON, HTML and figures are made from the same counts.

Reports
-------
    report                    Summarise a results file with the right denominators
    Report                    What a results file shows, with the right denominators
    html_report               Write the report of a run as one self-contained HTML file

Human review
------------
    review                    Walk a run's samples and record a person's verdict on each
    read_reviews              Read a reviews file written by review
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import face

if TYPE_CHECKING:
    from ._html import html_report
    from ._report import Report, report
    from ._review import read_reviews, review

__getattr__, __dir__ = face(__name__, __file__)
