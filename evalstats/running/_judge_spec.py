"""A judge named on the command line: ``evalstats run --judge SPEC``.

``SPEC`` is a model service in the form of a variant's task and settings
(``openai:gpt-4o-mini,temperature=0``, ``ollama:qwen3:0.6b``,
``anthropic:claude-3-5-haiku-latest,max_tokens=512``, with ``base_url=URL``
for a server of one's own), or the offline stand-in judge
``standin:judge[,sensitivity=S][,specificity=P][,seed=N]`` (a judge kind
registered by entry point in the group ``evalstats.judges``), which judges the
shop stand-ins' replies and errs at the rates given (0.9 and 0.9 by default).

A spec names the judge, not what it is asked: whether a check asks for PASS
or FAIL or for a score on a scale is the check's, declared beside its rubric
in the suite (``{"judged_by": {"rubric": ..., "scale": [1, 5], "threshold":
4}}``), so one judge can grade a suite's pass/fail and scaled checks alike.
A ``scale`` or ``threshold`` setting here is refused with that advice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._validate import suggest
from ..errors import InvalidArgument
from ._registry import JUDGE_GROUP, entry_point, entry_point_names
from ._variants import PROVIDER_KINDS

__all__ = ["judge_from_spec"]


def _settings(spec: str, parts: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise InvalidArgument(f"judge={spec!r}: {part!r} must be KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def judge_from_spec(spec: str) -> tuple[Callable[[str], str], dict[str, Any]]:
    """The judge a spec names, and what the manifest records of it.

    Returns
    -------
    (judge, description)
        ``judge(prompt) -> text`` (a provider's judge has a ``close()``), and
        ``{"spec": spec, "kind": ..., "model": ..., "settings": {...}}``.

    Raises
    ------
    InvalidArgument
        An unknown provider or stand-in, or a bad setting.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise InvalidArgument(
            f"judge={spec!r} must be KIND:MODEL[,KEY=VALUE]... (openai:gpt-4o-mini, "
            "ollama:qwen3:0.6b) or standin:judge[,sensitivity=0.9,specificity=0.8,seed=1]"
        )
    head, *rest = spec.split(",")
    kind, _, model = head.partition(":")
    kind, model = kind.strip(), model.strip()
    settings = _settings(spec, rest)
    _refuse_check_settings(spec, settings)
    if kind not in PROVIDER_KINDS:
        factory = entry_point(JUDGE_GROUP, kind)
        if factory is not None:
            return factory(spec, model, settings)  # type: ignore[no-any-return]
    from .providers import PROVIDERS, make_judge_from_provider, make_provider

    if kind not in PROVIDERS:
        choices = sorted({*PROVIDERS, *entry_point_names(JUDGE_GROUP)})
        raise InvalidArgument(
            f"judge={spec!r}: unknown provider {kind!r}{suggest(kind, choices)}; "
            f"choose one of {', '.join(choices)}"
        )
    provider = make_provider(kind, model, settings)
    description = {
        "spec": spec,
        "kind": kind,
        "model": model,
        "settings": dict(provider.describe().get("settings") or {}),
    }
    return make_judge_from_provider(provider), description


#: Settings that belong to a judged check, not to its judge.
_CHECK_SETTINGS = ("scale", "threshold")


def _refuse_check_settings(spec: str, settings: dict[str, str]) -> None:
    """A scale or threshold given to a judge: say where it belongs, in one line."""
    for key in _CHECK_SETTINGS:
        if key in settings:
            raise InvalidArgument(
                f"judge={spec!r}: {key} is the check's, not the judge's: declare it in the "
                'suite beside the rubric ({"judged_by": {"rubric": "...", "scale": [1, 5], '
                '"threshold": 4}})'
            )
