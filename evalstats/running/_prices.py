"""Prices in dollars per million tokens, checked.

Below both :mod:`evalstats.running._variants` (a variant's own ``price_in`` and
``price_out``) and :mod:`evalstats.planning._cost` (which prices a run's variants), so
neither imports the other for them; :mod:`evalstats.planning._cost` re-exports
:class:`Prices`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument

__all__ = ["Prices", "without_prices"]


def _price(name: str, value: Any) -> float:
    """``value`` as dollars per million tokens: a finite number >= 0."""
    shown = value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise InvalidArgument(
                f"{name}={value!r} must be a number (dollars per million tokens)"
            ) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument(f"{name}={value!r} must be a number (dollars per million tokens)")
    if not math.isfinite(value) or value < 0:
        raise InvalidArgument(
            f"{name}={shown!r} must be a finite number >= 0 (dollars per million tokens)"
        )
    return float(value)


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens, ``input`` (the prompt) and ``output`` (the answer).

    Examples
    --------
    >>> Prices(0.15, 0.6).cost(1000, 500)
    0.00045
    >>> Prices(-1, 0.6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: price_in=-1 must be a finite number >= 0 ...
    """

    input: float
    output: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "input", _price("price_in", self.input))
        object.__setattr__(self, "output", _price("price_out", self.output))

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Dollars for these token counts."""
        return (input_tokens * self.input + output_tokens * self.output) / 1e6

    def to_dict(self) -> dict[str, float]:
        return {"input": self.input, "output": self.output}


def without_prices(description: Any) -> Any:
    """A variant's manifest description without its ``"prices"``.

    Prices are recorded with a variant for the cost, but they change nothing the
    variant sends or measures: a run whose prices were added or corrected is
    still the same variant when it is resumed, extended, merged or compared.
    """
    if isinstance(description, dict) and "prices" in description:
        return {k: v for k, v in description.items() if k != "prices"}
    return description
