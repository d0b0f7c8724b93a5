"""Check functions and the :class:`Verdict` they come to.

A check is any callable ``check(answer) -> None | str``: ``None`` when the answer
is fine, otherwise the problem in a few words. A check may also return a
:class:`Verdict`, for example to say that it does not apply (``unscored``). The
runner wraps every result in a ``Verdict`` with :meth:`Verdict.of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["INSPECTION_FAILURE", "Verdict"]

#: Reasons that start with this say there was nothing to inspect (an empty
#: answer, no JSON where JSON was asked); such a verdict is a failure, counted
#: apart from real misses.
INSPECTION_FAILURE = "could not be inspected"

Status = Literal["passed", "failed", "unscored"]
_STATUSES = ("passed", "failed", "unscored")


@dataclass(frozen=True)
class Verdict:
    """What one check concluded about one answer.

    ``status`` is ``"passed"``, ``"failed"`` or ``"unscored"``; ``reason`` says
    why (empty for a pass). **Unscored is not passed**: an unscored verdict
    leaves that check's denominator.

    Examples
    --------
    >>> Verdict.of(None)
    Verdict(status='passed', reason='')
    >>> Verdict.of("doesn't mention 'A-1042'").status
    'failed'
    >>> Verdict.unscored("no order id in this case").is_scored
    False
    """

    status: Status
    reason: str = ""

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            from ._validate import suggest
            from .errors import InvalidArgument

            raise InvalidArgument(
                f"status={self.status!r} is not one of {', '.join(_STATUSES)}"
                f"{suggest(str(self.status), _STATUSES)}"
            )

    @classmethod
    def passed(cls) -> Verdict:
        return cls("passed")

    @classmethod
    def failed(cls, reason: str) -> Verdict:
        return cls("failed", str(reason))

    @classmethod
    def unscored(cls, reason: str) -> Verdict:
        return cls("unscored", str(reason))

    @classmethod
    def of(cls, result: Any) -> Verdict:
        """Wrap what a check returned: ``None`` passes, a string fails, a Verdict stays."""
        if isinstance(result, Verdict):
            return result
        if result is None:
            return cls.passed()
        if isinstance(result, str):
            return cls.failed(result or "failed")
        raise TypeError(
            f"a check must return None, a str or a Verdict, not {type(result).__name__}"
        )

    @property
    def is_passed(self) -> bool:
        return self.status == "passed"

    @property
    def is_failed(self) -> bool:
        return self.status == "failed"

    @property
    def is_scored(self) -> bool:
        """False for ``unscored``: such a verdict is in no pass-rate denominator."""
        return self.status != "unscored"

    @property
    def not_inspected(self) -> bool:
        """A failure because there was nothing to inspect."""
        return self.is_failed and self.reason.startswith(INSPECTION_FAILURE)
