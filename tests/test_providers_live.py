"""Optional live tests: two cases against a real model server.

Skipped unless a server is named:

* ``EVALSTATS_LIVE_OLLAMA=MODEL`` (for example ``qwen3:0.6b``) runs against
  Ollama at ``OLLAMA_HOST`` (default ``127.0.0.1:11434``);
* ``EVALSTATS_LIVE_BASE_URL=URL`` with ``EVALSTATS_LIVE_MODEL=MODEL`` runs
  against any OpenAI-compatible server (``OPENAI_API_KEY`` if it needs one).

Run them with ``python -m pytest -m live tests/test_providers_live.py``.
"""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from evalstats.results._file import read_results
from evalstats.running import _engine as engine
from evalstats.running._checks import word_count
from evalstats.running._suite import Case
from evalstats.running.providers import make_provider

pytestmark = pytest.mark.live

CASES = [
    Case("greeting", "Say hello in one short sentence.", (word_count(1, 60),)),
    Case("capital", "What is the capital of France? Answer in one word.", (word_count(1, 60),)),
]


def run_two_cases(provider, tmp_path):
    out = tmp_path / "live.jsonl"
    outcome = engine.run(
        CASES,
        [engine.Variant("live", provider)],
        runs=1,
        out=out,
        concurrency=2,
        timeout=300.0,
        progress=False,
    )
    assert outcome.status == "finished"
    samples = read_results(out).samples
    assert sorted(s["case"] for s in samples) == ["capital", "greeting"]
    for sample in samples:
        assert sample["status"] == "completed", sample["reason"]
        assert sample["model"]
        assert sample["tokens"]["input"] > 0 and sample["tokens"]["output"] > 0
        assert sample["trace"]["settings"]["temperature"] == 0.0
    return samples


@pytest.mark.skipif(
    not os.environ.get("EVALSTATS_LIVE_OLLAMA"), reason="set EVALSTATS_LIVE_OLLAMA=MODEL"
)
def test_ollama_live(tmp_path):
    provider = make_provider(
        "ollama", os.environ["EVALSTATS_LIVE_OLLAMA"], {"temperature": "0", "max_tokens": "200"}
    )
    asyncio.run(provider.prepare())
    facts = provider.describe()
    assert re.fullmatch(r"[0-9a-f]{64}", facts["digest"] or "")
    assert facts["server_version"]
    run_two_cases(provider, tmp_path)


@pytest.mark.skipif(
    not (os.environ.get("EVALSTATS_LIVE_BASE_URL") and os.environ.get("EVALSTATS_LIVE_MODEL")),
    reason="set EVALSTATS_LIVE_BASE_URL and EVALSTATS_LIVE_MODEL",
)
def test_openai_compatible_live(tmp_path):
    provider = make_provider(
        "openai",
        os.environ["EVALSTATS_LIVE_MODEL"],
        {
            "temperature": "0",
            "max_tokens": "200",
            "base_url": os.environ["EVALSTATS_LIVE_BASE_URL"],
        },
    )
    run_two_cases(provider, tmp_path)
