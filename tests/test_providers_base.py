"""What every provider shares: settings, seeds, the client, Retry-After, secrets, judges.

Retry-After follows RFC 9110, section 10.2.3 (delay-seconds or an HTTP-date
in IMF-fixdate form); ``retry-after-ms`` is OpenAI's millisecond header
(https://platform.openai.com/docs/guides/rate-limits).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.results._file import read_results
from evalstats.running import _engine as engine
from evalstats.running._checks import contains
from evalstats.running._engine import Prompt
from evalstats.running._judge import judged_by
from evalstats.running._suite import Case
from evalstats.running.providers import (
    PROVIDERS,
    AnthropicProvider,
    OllamaProvider,
    OpenAIProvider,
    make_judge_from_provider,
    make_provider,
)
from evalstats.running.providers._base import (
    CLIENT_SHARDS,
    SEED_MODULUS,
    conversation,
    normalise_tools,
    public_url,
    retry_after_seconds,
    scrub,
)

KEYS = {
    "OPENAI_API_KEY": "sk-canary-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-canary-0123456789",
    "GEMINI_API_KEY": "AIza-canary-gemini-0123456789",
}


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    for name in ("OPENAI_BASE_URL", "OLLAMA_HOST", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def openai_reply(content="Your order A-1042 has shipped.", model="shop-v2"):
    return {
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17},
    }


def ok(request):
    return httpx.Response(200, json=openai_reply())


# --- Retry-After ---------------------------------------------------------------


def test_retry_after_forms():
    assert retry_after_seconds({"Retry-After": "0"}) == 0.0
    assert retry_after_seconds({"retry-after": "120"}) == 120.0
    assert retry_after_seconds({"Retry-After": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({"Retry-After": "-3"}) is None
    assert retry_after_seconds({"retry-after-ms": "x", "Retry-After": "4"}) == 4.0
    # RFC 9110 section 10.2.3's example date is 946684799 s after the epoch
    # (2000-01-01T00:00:00Z is 946684800); read one hour before it.
    date = "Fri, 31 Dec 1999 23:59:59 GMT"
    assert retry_after_seconds({"Retry-After": date}, now=946684799.0 - 3600) == 3600.0
    # A date in the past means: now.
    assert retry_after_seconds({"Retry-After": "Fri, 31 Dec 1999 23:59:59 GMT"}) == 0.0


@given(st.integers(0, 10**7))
def test_retry_after_seconds_round_trip(seconds):
    assert retry_after_seconds({"Retry-After": str(seconds)}) == float(seconds)
    assert retry_after_seconds({"retry-after-ms": str(seconds)}) == seconds / 1000


@given(st.integers(0, 4 * 10**9), st.integers(0, 10**6))
def test_retry_after_http_date_round_trip(now, delay):
    date = email.utils.formatdate(now + delay, usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=float(now)) == float(delay)


# --- secrets -------------------------------------------------------------------

secret_chars = st.characters(min_codepoint=33, max_codepoint=126)


@given(
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    key=st.text(secret_chars, min_size=12, max_size=40),
)
def test_scrub_never_leaves_the_key(before, after, key):
    assert key not in scrub(before + key + after, [key])


@given(st.lists(st.text(st.characters(codec="ascii"), max_size=7), max_size=10))
def test_scrub_leaves_short_words_alone(words):
    text = " ".join(words)
    assert scrub(text, ["sk-secret-0123456789"]) == text


def test_scrub_catches_masked_echoes_and_environment_keys(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-abcdefghijkl")
    text = scrub("keys sk-canary***6789 and tok-abcdefghijkl here", [KEYS["OPENAI_API_KEY"]])
    assert text == "keys [redacted] and [redacted] here"


def test_public_url_drops_credentials_query_and_fragment():
    assert public_url("https://u:p@api.example:8443/v1/x?key=secret#frag") == (
        "https://api.example:8443/v1/x"
    )
    assert public_url("http://[::1]:11434/api") == "http://[::1]:11434/api"


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
@pytest.mark.parametrize(
    "url",
    [
        "http://user:hunter2@127.0.0.1:9/v1",
        "http://:hunter2@127.0.0.1:9",
        "https://hunter2@api.example/v1",
        "user:hunter2@127.0.0.1:11434",  # the scheme-less form OLLAMA_HOST takes
    ],
)
def test_base_url_credentials_are_refused_without_showing_them(kind, url):
    with pytest.raises(InvalidArgument, match="holds a user name or password") as info:
        make_provider(kind, "m", {"base_url": url})
    message = str(info.value)
    assert "hunter2" not in message and "\n" not in message
    assert message.startswith(f"{kind}: base_url=")


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/v1\r\nX-Injected: 1",
        "http://127.0.0.1:9/v\n1",
        "http://127.0.0.1:9/\x00",
        "http://127.0.0.1:9/v1\x1b[2J",
        "http://127.0.0.1:9/v 1",
        "http://127.0.0.1:9/\u200bv1",
    ],
)
def test_base_url_control_characters_are_refused_in_one_line(kind, url):
    with pytest.raises(InvalidArgument, match=r"holds the character U\+") as info:
        make_provider(kind, "m", {"base_url": url})
    assert "\n" not in str(info.value) and "\r" not in str(info.value)


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_base_url_query_or_fragment_is_refused_without_showing_it(kind):
    with pytest.raises(InvalidArgument, match="holds a query or fragment") as info:
        make_provider(kind, "m", {"base_url": "http://127.0.0.1:9/v1?key=hunter2"})
    assert "hunter2" not in str(info.value)


def test_base_url_from_the_environment_is_checked_and_named(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://me:hunter2@127.0.0.1:9/v1")
    with pytest.raises(InvalidArgument, match="^openai: OPENAI_BASE_URL=.* user name"):
        OpenAIProvider("m")


# --- settings and seeds ----------------------------------------------------------


def test_make_provider_parses_text_settings():
    p = make_provider(
        "ollama",
        "qwen3:0.6b",
        {
            "temperature": "0.2",
            "max_tokens": "1024",
            "context": "8192",
            "top_p": "0.9",
            "seed": "7",
            "stop": "END",
            "base_url": "http://gpu:11434",
        },
    )
    assert isinstance(p, OllamaProvider)
    assert p.settings == {
        "temperature": 0.2,
        "max_tokens": 1024,
        "context": 8192,
        "top_p": 0.9,
        "seed": 7,
        "stop": ("END",),
    }
    assert p.base_url == "http://gpu:11434"
    assert make_provider("openai", "m", {"seed": "none"}).settings == {"seed": None}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"temperature": "hot"}, "openai: temperature='hot' must be a number"),
        ({"temperature": "-0.1"}, r"temperature=-0.1 must be in \[0, 2\]"),
        ({"temperature": "nan"}, "temperature=nan must be a finite number"),
        ({"max_tokens": "0"}, "max_tokens=0 must be at least 1"),
        ({"max_tokens": "1.5"}, "max_tokens='1.5' must be a whole number"),
        ({"top_p": "0"}, r"top_p=0.0 must be in \(0, 1\]"),
        ({"seed": "-1"}, "seed=-1 must be at least 0"),
        ({"stop": ""}, "stop='' must not be empty"),
        ({"max_token": "5"}, "unknown setting 'max_token' \\(did you mean 'max_tokens'\\?\\)"),
        ({"base_url": ""}, "base_url='' must be a URL"),
        ({"base_url": "ftp://x"}, "must be an http:// or https:// URL"),
    ],
)
def test_bad_settings(settings, message):
    with pytest.raises(InvalidArgument, match=message):
        make_provider("openai", "gpt-4o-mini", settings)


def test_unknown_kind_and_empty_model():
    with pytest.raises(InvalidArgument, match="did you mean 'gemini'"):
        make_provider("gemeni", "x")
    with pytest.raises(InvalidArgument, match="model='' must be a model name"):
        make_provider("ollama", "")


def body_of(p, prompt="Hi", seed=None):
    system, messages = conversation(prompt)
    _, _, body = p._request(system, messages, p._seed_to_send(seed))
    return body


@given(st.integers(0, 2**64))
def test_the_per_sample_seed_is_sent_modulo_2_31(seed):
    for kind in ("openai", "ollama", "gemini"):
        p = make_provider(kind, "m")
        assert p._settings_sent(body_of(p, seed=seed))["seed"] == seed % SEED_MODULUS
    assert "seed" not in make_provider("anthropic", "m")._settings_sent(
        body_of(make_provider("anthropic", "m"), seed=seed)
    )


@given(st.integers(0, 2**40))
def test_a_fixed_seed_or_none_overrides_the_sample_seed(seed):
    fixed = make_provider("openai", "m", {"seed": "5"})
    assert body_of(fixed, seed=seed)["seed"] == 5
    none = make_provider("ollama", "m", {"seed": "none"})
    assert "seed" not in body_of(none, seed=seed)["options"]


@st.composite
def provider_settings(draw, kind):
    known = PROVIDERS[kind].settings_known
    chosen = draw(st.lists(st.sampled_from(known), unique=True))
    values = {
        "temperature": st.floats(0, PROVIDERS[kind].temperature_max),
        "max_tokens": st.integers(1, 10**6),
        "top_p": st.floats(0.01, 1.0),
        "seed": st.one_of(st.none(), st.integers(0, 2**31 - 1)),
        "stop": st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3),
        "context": st.integers(1, 10**6),
        "format": st.just("json"),
    }
    return {name: draw(values[name]) for name in chosen}


@given(st.data())
def test_settings_sent_are_the_settings_asked_for(data):
    """Every provider's body carries each asked setting under its own name, unchanged."""
    for kind in PROVIDERS:
        settings = data.draw(provider_settings(kind), label=kind)
        p = make_provider(kind, "m", settings)
        sample_seed = data.draw(st.integers(0, 2**40))
        sent = p._settings_sent(body_of(p, seed=sample_seed))
        expected = {k: (list(v) if k == "stop" else v) for k, v in settings.items()}
        if p.takes_seed:
            if "seed" not in settings:
                expected["seed"] = sample_seed % SEED_MODULUS
            elif settings["seed"] is None:
                del expected["seed"]
        if kind == "anthropic":
            expected.setdefault("max_tokens", 1024)
        assert sent == expected


def test_a_mapping_mistake_is_caught_before_sending(monkeypatch):
    p = make_provider("openai", "m", {"temperature": "0.5"}, transport=httpx.MockTransport(ok))
    original = p._request

    def lossy(system, messages, seed):
        method, path, body = original(system, messages, seed)
        body["temperature"] = 1.0
        return method, path, body

    monkeypatch.setattr(p, "_request", lossy)
    with pytest.raises(ProviderError, match="would send temperature=1.0 but 0.5 was asked for"):
        asyncio.run(p.complete("Hi"))


# --- conversation and tools ---------------------------------------------------------


def test_conversation_takes_the_system_text_from_messages_or_prompt():
    prompt = Prompt(
        "q", "sys", ({"role": "system", "content": "sys"}, {"role": "user", "content": "q"})
    )
    assert conversation(prompt) == ("sys", [{"role": "user", "content": "q"}])
    bare = Prompt("q", "only here", ({"role": "user", "content": "q"},))
    assert conversation(bare) == ("only here", [{"role": "user", "content": "q"}])
    assert conversation("text") == (None, [{"role": "user", "content": "text"}])
    with pytest.raises(InvalidArgument, match="at least one user message"):
        conversation(Prompt("", "s", ({"role": "system", "content": "s"},)))
    with pytest.raises(InvalidArgument, match="messages\\[0\\]"):
        conversation(Prompt("", None, ({"role": "tool", "content": "x"},)))


def test_tool_definitions_are_checked():
    assert normalise_tools([{"name": "f"}]) == (
        {"name": "f", "description": "", "parameters": {"type": "object", "properties": {}}},
    )
    with pytest.raises(InvalidArgument, match="tools\\[0\\] has no 'name'"):
        normalise_tools([{"description": "x"}])
    with pytest.raises(InvalidArgument, match="used twice"):
        normalise_tools([{"name": "f"}, {"name": "f"}])
    with pytest.raises(InvalidArgument, match="unknown field 'paramters' \\(did you mean"):
        normalise_tools([{"name": "f", "paramters": {}}])
    with pytest.raises(InvalidArgument, match="must be a list"):
        normalise_tools({"name": "f"})


# --- the client ---------------------------------------------------------------------


def test_one_client_per_run_shared_by_concurrent_requests():
    seen = []

    def service(request):
        seen.append(request)
        return ok(request)

    p = OpenAIProvider(
        "m", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(service)
    )

    async def one_run():
        for i in range(3):  # one after another: one client
            await p.complete("Hi", seed=i)
        assert len(p._clients) == 1
        results = await asyncio.gather(*(p.complete("Hi", seed=i) for i in range(20)))
        assert p.client() is p._clients[0]
        assert 1 <= len(p._clients) <= CLIENT_SHARDS
        assert p._in_flight == [0] * len(p._clients)
        return list(p._clients), results

    first, results = asyncio.run(one_run())
    assert len(seen) == 23 and all(r.answer for r in results)
    assert first[0].timeout == httpx.Timeout(120.0, connect=10.0, pool=None)
    # A new event loop (the next run) gets new clients.
    second, _ = asyncio.run(one_run())
    assert not set(map(id, second)) & set(map(id, first))

    async def close():
        await p.aclose()

    asyncio.run(close())
    assert p._clients == [] and all(c.is_closed for c in second)


def test_a_client_closed_by_hand_is_replaced_by_the_next_request():
    p = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(ok))

    async def go():
        await p.complete("Hi")
        closed = p.client()
        await closed.aclose()  # not through p.aclose(): the provider still holds it
        result = await p.complete("Hi again")
        return closed, result

    closed, result = asyncio.run(go())
    assert result.answer and closed.is_closed
    assert closed not in p._clients and not any(c.is_closed for c in p._clients)


def test_concurrent_requests_are_spread_over_the_client_pools():
    gate = asyncio.Event()

    async def service(request):
        await gate.wait()
        return ok(request)

    p = OpenAIProvider(
        "m", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(service)
    )

    async def go():
        tasks = [asyncio.create_task(p.complete("Hi", seed=i)) for i in range(4 * CLIENT_SHARDS)]
        while sum(p._in_flight) < len(tasks):
            await asyncio.sleep(0)
        # Every pool is in use, and the load is even.
        assert p._in_flight == [4] * CLIENT_SHARDS
        gate.set()
        await asyncio.gather(*tasks)
        assert p._in_flight == [0] * CLIENT_SHARDS

    asyncio.run(go())


def test_the_client_pools_share_one_tls_context(monkeypatch):
    made = []
    real = httpx.create_ssl_context

    def counting(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(httpx, "create_ssl_context", counting)
    p = OpenAIProvider("m", base_url="https://127.0.0.1:9/v1")

    async def pools(provider):
        for _ in range(3):
            index = provider._pick_client()
            provider._in_flight[index] += 1  # busy, so the next pick makes a new pool
        clients = list(provider._clients)
        await provider.aclose()
        return clients

    clients = asyncio.run(pools(p))
    assert len(clients) == 3 and len(made) == 1  # the CA bundle is loaded once
    assert len(asyncio.run(pools(p.fresh_copy()))) == 3
    asyncio.run(pools(p))
    assert len(made) == 1  # a copy, and a later run, reuse it


def test_provider_is_an_async_context_manager():
    async def go():
        async with OpenAIProvider(
            "m", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(ok)
        ) as p:
            await p.complete("Hi")
            clients = list(p._clients)
        return clients

    assert all(c.is_closed for c in asyncio.run(go()))


def test_describe_is_json_and_keyless():
    for kind in PROVIDERS:
        p = make_provider(kind, "m", {"stop": "X"})
        text = json.dumps(p.describe())
        assert json.loads(text)["kind"] == kind
        assert all(key not in text for key in KEYS.values())
        assert all(key not in repr(p) for key in KEYS.values())


# --- judges -------------------------------------------------------------------------


def judge_service(request):
    prompt = json.loads(request.content)["messages"][-1]["content"]
    verdict = "PASS" if "A-1042" in prompt.split("<answer>")[-1] else "FAIL"
    return httpx.Response(200, json=openai_reply(f"Looked at it.\n{verdict}", model="judge"))


def test_judge_from_provider_with_judged_by():
    provider = OpenAIProvider(
        "judge", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(judge_service)
    )
    judge = make_judge_from_provider(provider)
    try:
        check = judged_by(judge, "Quotes the order number.")
        assert check("Order A-1042 is on its way.").status == "passed"
        assert check("Your order is on its way.").status == "failed"
        # From many threads at once, and from inside a running event loop.
        results = []
        threads = [
            threading.Thread(target=lambda: results.append(check("A-1042 ships.").status))
            for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == ["passed"] * 8

        async def inside():
            return check("A-1042").status

        assert asyncio.run(inside()) == "passed"
        assert provider._clients == []  # the judge works on its own copy
    finally:
        judge.close()


def test_judge_lets_transient_errors_through():
    def busy(request):
        return httpx.Response(
            429, headers={"Retry-After": "2"}, json={"error": {"message": "slow"}}
        )

    judge = make_judge_from_provider(
        OpenAIProvider("j", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(busy))
    )
    try:
        with pytest.raises(TransientProviderError) as info:
            judge("grade this")
        assert info.value.retry_after == 2.0
    finally:
        judge.close()


def test_judge_needs_a_provider():
    with pytest.raises(InvalidArgument, match="provider must be a Provider"):
        make_judge_from_provider(lambda prompt: "PASS")


# --- through the engine ---------------------------------------------------------------


CASES = [
    Case("order", "Where is my order A-1042?", (contains("A-1042"),)),
    Case("refund", "I want a refund.", (contains("refund"),)),
]


def test_a_run_through_the_engine_retries_rate_limits_and_records_the_trace(tmp_path):
    calls = {"n": 0}

    def flaky(request):
        if request.method == "GET":  # the check, before the run, that a server answers there
            return httpx.Response(404)
        calls["n"] += 1
        if calls["n"] % 2:  # every other request is rate limited
            return httpx.Response(
                429, headers={"Retry-After": "0"}, json={"error": {"message": "x"}}
            )
        return ok(request)

    p = OpenAIProvider(
        "shop-v2",
        base_url="http://127.0.0.1:9/v1",
        settings={"temperature": 0.3},
        transport=httpx.MockTransport(flaky),
    )
    out = tmp_path / "run.jsonl"
    outcome = engine.run(
        CASES,
        [engine.Variant("v", p)],
        runs=3,
        out=out,
        progress=False,
        backoff=0.0,
        seed=4,
        concurrency=1,
    )
    assert outcome.status == "finished"
    results = read_results(out)
    assert results.manifest["variants"][0]["task"] == p.describe()
    samples = results.samples
    assert len(samples) == 6
    assert {s["status"] for s in samples} == {"completed"}
    seeds = set()
    for s in samples:
        assert s["model"] == "shop-v2"
        assert s["tokens"] == {"input": 10, "output": 7}
        assert s["trace"]["settings"]["temperature"] == 0.3
        seeds.add(s["trace"]["settings"]["seed"])
        assert s["attempts"] == 2  # one 429, then the answer
    assert len(seeds) == 6  # each sample had its own seed
    assert all(key not in out.read_text() for key in KEYS.values())


def test_a_4xx_stops_the_run_and_nothing_secret_is_written(tmp_path):
    def unauthorized(request):
        return httpx.Response(
            401,
            json={
                "error": {
                    "message": f"Incorrect API key provided: {request.headers['authorization']}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )

    p = OpenAIProvider("gpt-4o-mini", transport=httpx.MockTransport(unauthorized))
    out = tmp_path / "run.jsonl"
    with pytest.raises(ProviderError) as info:
        engine.run(CASES, [engine.Variant("v", p)], runs=1, out=out, progress=False)
    assert "openai: HTTP 401" in str(info.value)
    assert KEYS["OPENAI_API_KEY"] not in str(info.value)
    # The run stopped before any sample: no file is left, so nothing secret either.
    assert not out.exists()


def test_anthropic_provider_has_no_seed_in_its_trace():
    def service(request):
        return httpx.Response(
            200,
            json={
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    p = AnthropicProvider("claude-x", transport=httpx.MockTransport(service))
    result = asyncio.run(p.run("Hi", seed=99))
    assert result.trace["settings"] == {"max_tokens": 1024}


# --- wire formats, as properties ------------------------------------------------------

json_values = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=8))
tool_args = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
tool_names = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)


def wire_response(kind, parts, calls, tokens):
    """A response in ``kind``'s documented wire format (see the per-provider tests)."""
    text = "".join(parts)
    if kind == "openai":
        message = {"role": "assistant", "content": text if parts else None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)},
                }
                for i, (n, a) in enumerate(calls)
            ]
        return {
            "model": "M",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
        }
    if kind == "ollama":
        message = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for n, a in calls]
        return {
            "model": "M",
            "message": message,
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": tokens[0],
            "eval_count": tokens[1],
        }
    if kind == "anthropic":
        blocks = [{"type": "text", "text": p} for p in parts]
        blocks += [
            {"type": "tool_use", "id": f"call_{i}", "name": n, "input": a}
            for i, (n, a) in enumerate(calls)
        ]
        return {
            "type": "message",
            "role": "assistant",
            "model": "M",
            "content": blocks,
            "stop_reason": "end_turn",
            "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
        }
    gemini_parts = [{"text": p} for p in parts]
    gemini_parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": gemini_parts}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": tokens[0], "candidatesTokenCount": tokens[1]},
        "modelVersion": "M",
    }


@given(
    kind=st.sampled_from(sorted(PROVIDERS)),
    parts=st.lists(st.text(max_size=20), max_size=3),
    calls=st.lists(st.tuples(tool_names, tool_args), max_size=3),
    tokens=st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)),
)
def test_every_wire_format_reads_back_the_same_answer(kind, parts, calls, tokens):
    p = make_provider(kind, "M")
    done = p._parse(wire_response(kind, parts, calls, tokens))
    assert done.answer == "".join(parts)
    assert done.tool_calls == tuple(
        {"id": f"call_{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(calls)
    )
    assert done.tokens == {"input": tokens[0], "output": tokens[1]}
    assert done.model == "M"


@st.composite
def conversations(draw):
    turns = draw(st.integers(0, 3))
    texts = st.text(min_size=1, max_size=20)
    messages = []
    for _ in range(turns):
        messages.append({"role": "user", "content": draw(texts)})
        messages.append({"role": "assistant", "content": draw(texts)})
    messages.append({"role": "user", "content": draw(texts)})
    system = draw(st.one_of(st.none(), texts))
    full = ([{"role": "system", "content": system}] if system is not None else []) + messages
    return Prompt(messages[-1]["content"], system, tuple(full)), system, messages


@given(conversations(), st.sampled_from(sorted(PROVIDERS)))
def test_every_wire_format_sends_the_conversation_in_order(conversation_, kind):
    prompt, system, messages = conversation_
    body = body_of(make_provider(kind, "M"), prompt, seed=1)
    system_turn = [{"role": "system", "content": system}] if system is not None else []
    if kind in ("openai", "ollama"):
        assert body["messages"] == system_turn + messages
    elif kind == "anthropic":
        assert body["messages"] == messages
        assert body.get("system") == system
    else:
        roles = {"user": "user", "assistant": "model"}
        assert body["contents"] == [
            {"role": roles[m["role"]], "parts": [{"text": m["content"]}]} for m in messages
        ]
        expected = {"parts": [{"text": system}]} if system is not None else None
        assert body.get("systemInstruction") == expected


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("openai", {"choices": [{"message": ["not", "a", "message"]}]}),
        ("ollama", {"message": {"content": "x", "tool_calls": [["odd"]]}}),
        ("anthropic", {"content": [{"type": "tool_use", "input": 5, "name": "f"}], "usage": 3}),
        ("gemini", {"candidates": ["odd"]}),
    ],
)
def test_a_response_in_another_shape_stops_with_a_clear_line(kind, body):
    p = make_provider(
        kind, "m", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=body))
    )
    with pytest.raises(
        ProviderError, match=f"^{kind}: could not read the response from .*base URL"
    ):
        asyncio.run(p.complete("Hi"))


def test_provider_from_name_and_task_factory():
    from evalstats.running.providers import provider_from_name, task_factory

    p = provider_from_name("ollama:qwen3:0.6b", {"temperature": "0.1"})
    assert (p.kind, p.model, p.settings) == ("ollama", "qwen3:0.6b", {"temperature": 0.1})
    assert provider_from_name("openai:gpt-4o-mini").model == "gpt-4o-mini"
    with pytest.raises(InvalidArgument, match="must be KIND:MODEL"):
        provider_from_name("qwen3")
    with pytest.raises(InvalidArgument, match="did you mean 'anthropic'"):
        provider_from_name("antropic:claude")
    factory = task_factory("gemini")
    assert factory("gemini-2.0-flash").describe()["kind"] == "gemini"
    with pytest.raises(InvalidArgument, match="unknown provider"):
        task_factory("nope")


def test_format_json_asks_each_wire_for_a_json_object() -> None:
    openai_body = body_of(make_provider("openai", "m", {"format": "json"}), seed=1)
    assert openai_body["response_format"] == {"type": "json_object"}
    ollama_body = body_of(make_provider("ollama", "m", {"format": "json"}), seed=1)
    assert ollama_body["format"] == "json"
    assert "response_format" not in body_of(make_provider("openai", "m"), seed=1)
    with pytest.raises(InvalidArgument, match=r"format='yaml' must be json"):
        make_provider("openai", "m", {"format": "yaml"})
    with pytest.raises(InvalidArgument, match=r"format"):
        make_provider("anthropic", "m", {"format": "json"})
