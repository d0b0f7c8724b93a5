"""The checks a case can hold, in a namespace of their own.

A check is any callable ``check(answer) -> None | str | Verdict``: None passes,
a string is the reason it failed, a number in [0, 1] is a score, a
:class:`Verdict` says ``passed``, ``failed`` or ``unscored`` (and may carry
a score, :meth:`Verdict.scored`). These build the common ones; every name here is
also importable from ``evalstats``.

Text
----
    contains                  the answer contains a text
    contains_any              the answer contains at least one of several texts
    avoids                    the answer contains none of several phrases
    has_terms                 every term appears as a whole term
    covers                    the share of terms the answer mentions, as a score in [0, 1]
    matches                   a regular expression is found in the answer
    word_count                the answer's number of words lies in a range
    is_json_with              the answer is a JSON object with the given keys
    equals                    the answer is a text, whitespace around it aside
    json_schema               the answer is JSON that a JSON Schema accepts
    links_within              the answer has links, each to an allowed domain

Judged, traced and left to a person
-----------------------------------
    judged_by                 a model-graded check against a rubric
    required_action           the tool-call trace holds an executed call
    review_only               every verdict left to a person (unscored)

Running checks
--------------
    Verdict                   what one check concluded about one answer
    INSPECTION_FAILURE        the reason prefix of a failure with nothing to inspect
    run_check                 one check on one answer, as a Verdict
    check_from_spec           a built-in check from its declarative spec in a suite file
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import face

if TYPE_CHECKING:
    from .running._checks import (
        INSPECTION_FAILURE,
        Verdict,
        avoids,
        check_from_spec,
        contains,
        contains_any,
        equals,
        has_terms,
        is_json_with,
        json_schema,
        links_within,
        matches,
        review_only,
        run_check,
        word_count,
    )
    from .running._graded import covers
    from .running._judge import judged_by
    from .running._traces import required_action

__getattr__, __dir__ = face(__name__, __file__)
