"""The offline stand-ins as a task kind and a judge kind: ``standin:shop-v2``, ``standin:judge``.

Registered by entry point (groups ``evalstats.tasks`` and ``evalstats.judges``,
see ``pyproject.toml``), so that naming ``standin:...`` in a variant or a judge
spec reaches them without the running stage importing this one.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

from .._validate import suggest
from ..errors import InvalidArgument
from ..running._tasks import Prompt
from ._judge import make_judge
from ._shop import make_assistant, reply_is_good

__all__ = ["StandinShopTask", "shop_task", "standin_judge"]

_STANDIN_KEYS = ("sensitivity", "specificity", "seed")


class StandinShopTask:
    """The offline shop assistant as a task: ``standin:shop-v1`` or ``standin:shop-v2``.

    Each sample gets a fresh assistant, ``make_assistant(version,
    seed=seed)``, so every sample starts from fresh state and the same sample
    seed gives the same answer whatever the schedule or concurrency. The
    stand-in reads only the final user message (it ignores a system prompt,
    like a model that pays it no attention). ``delay`` seconds of waiting
    (asynchronous) before each answer mimic a model service's latency.
    """

    def __init__(self, version: int, *, delay: float = 0.0) -> None:
        self.version = version
        self.delay = delay
        self._make = make_assistant

    def describe(self) -> dict[str, Any]:
        settings: dict[str, Any] = {"delay": self.delay} if self.delay else {}
        return {
            "kind": "standin",
            "model": f"shop-v{self.version}",
            "base_url": None,
            "settings": settings,
        }

    async def run(self, prompt: Prompt, *, seed: int) -> str:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._make(self.version, seed=seed)(prompt.text)

    def __repr__(self) -> str:
        extra = f"?delay={self.delay:g}" if self.delay else ""
        return f"task_from_name('standin:shop-v{self.version}{extra}')"


def shop_task(rest: str) -> StandinShopTask:
    """The task of ``standin:REST``: ``shop-v1`` or ``shop-v2``, with ``?delay=SECONDS``."""
    name, _, query = rest.partition("?")
    versions = {"shop-v1": 1, "shop-v2": 2}
    if name not in versions:
        raise InvalidArgument(
            f"unknown stand-in {name!r}{suggest(name, versions)}; "
            f"choose one of {', '.join(versions)}"
        )
    delay = 0.0
    if query:
        key, eq, value = query.partition("=")
        if key != "delay" or not eq:
            raise InvalidArgument(
                f"stand-in option {query!r} is not known; the one option is ?delay=SECONDS"
            )
        try:
            delay = float(value)
        except ValueError:
            delay = math.nan
        if not (math.isfinite(delay) and delay >= 0):
            raise InvalidArgument(f"delay={value!r} must be a number of seconds, 0 or more")
    return StandinShopTask(versions[name], delay=delay)


def standin_judge(
    spec: str, model: str, settings: dict[str, str]
) -> tuple[Callable[[str], str], dict[str, Any]]:
    """The judge of ``standin:judge[,sensitivity=S][,specificity=P][,seed=N]``.

    It judges the shop stand-ins' replies (a reply is good when it has no
    slip, see :func:`~evalstats.demo._shop.reply_is_good`) and errs at the
    rates given (0.9 and 0.9 by default).
    """
    if model != "judge":
        raise InvalidArgument(
            f"judge={spec!r}: unknown stand-in judge {model!r}{suggest(model, ['judge'])}; "
            "the stand-in judge is standin:judge"
        )
    for key in settings:
        if key not in _STANDIN_KEYS:
            raise InvalidArgument(
                f"judge={spec!r}: unknown setting {key!r}{suggest(key, _STANDIN_KEYS)}; "
                f"the stand-in judge takes {', '.join(_STANDIN_KEYS)}"
            )
    values: dict[str, Any] = {}
    for key, cast in (("sensitivity", float), ("specificity", float), ("seed", int)):
        if key in settings:
            try:
                values[key] = cast(settings[key])
            except ValueError:
                raise InvalidArgument(
                    f"judge={spec!r}: {key}={settings[key]!r} must be a number"
                ) from None
    judge = make_judge(
        reply_is_good,
        sensitivity=values.get("sensitivity", 0.9),
        specificity=values.get("specificity", 0.9),
        seed=values.get("seed", 0),
    )
    description = {"spec": spec, "kind": "standin", "model": "judge", "settings": values}
    return judge, description
