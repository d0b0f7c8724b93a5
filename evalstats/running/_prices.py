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

__all__ = ["BATCH_DISCOUNT", "Prices", "without_prices"]

#: What the providers' batch APIs bill of the listed price (OpenAI's Batch API,
#: Anthropic's Message Batches and Gemini's batch mode each list 50% off): the
#: batch price of :class:`Prices` that state none of their own.
BATCH_DISCOUNT = 0.5


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

    ``batch_input`` and ``batch_output`` are what the provider's batch API bills
    (both or neither); without them a batch costs :data:`BATCH_DISCOUNT` of the
    listed prices (:meth:`batched`).

    Examples
    --------
    >>> Prices(0.15, 0.6).cost(1000, 500)
    0.00045
    >>> Prices(0.15, 0.6).batched()
    Prices(input=0.075, output=0.3, batch_input=None, batch_output=None)
    >>> Prices(0.15, 0.6, batch_input=0.1, batch_output=0.4).batched().output
    0.4
    >>> Prices(-1, 0.6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: price_in=-1 must be a finite number >= 0 ...
    """

    input: float
    output: float
    batch_input: float | None = None
    batch_output: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "input", _price("price_in", self.input))
        object.__setattr__(self, "output", _price("price_out", self.output))
        if (self.batch_input is None) != (self.batch_output is None):
            given, lacking = (
                ("batch_input", "batch_output")
                if self.batch_output is None
                else ("batch_output", "batch_input")
            )
            raise InvalidArgument(f"{given} goes with {lacking}: give both batch prices or neither")
        if self.batch_input is not None:
            object.__setattr__(self, "batch_input", _price("batch_input", self.batch_input))
            object.__setattr__(self, "batch_output", _price("batch_output", self.batch_output))

    @property
    def has_batch(self) -> bool:
        """Whether these prices state their own batch prices."""
        return self.batch_input is not None

    def batched(self) -> Prices:
        """The prices a batch API bills: the stated batch prices, else
        :data:`BATCH_DISCOUNT` of the listed ones."""
        if self.batch_input is not None and self.batch_output is not None:
            return Prices(self.batch_input, self.batch_output)
        return Prices(self.input * BATCH_DISCOUNT, self.output * BATCH_DISCOUNT)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Dollars for these token counts."""
        return (input_tokens * self.input + output_tokens * self.output) / 1e6

    def to_dict(self) -> dict[str, float]:
        out = {"input": self.input, "output": self.output}
        if self.batch_input is not None and self.batch_output is not None:
            out["batch_input"] = self.batch_input
            out["batch_output"] = self.batch_output
        return out


def without_prices(description: Any) -> Any:
    """A variant's manifest description without its ``"prices"``.

    Prices are recorded with a variant for the cost, but they change nothing the
    variant sends or measures: a run whose prices were added or corrected is
    still the same variant when it is resumed, extended, merged or compared.
    """
    if isinstance(description, dict) and "prices" in description:
        return {k: v for k, v in description.items() if k != "prices"}
    return description
