"""The stand-in server honours requests made through the official OpenAI and Ollama clients."""

from __future__ import annotations

import json

import pytest
from services import NOTES_TOOLS

from evalstats.demo._server import serve
from evalstats.demo._shaping import JSON_SLIP_RATES

openai = pytest.importorskip("openai")
ollama = pytest.importorskip("ollama")
pydantic = pytest.importorskip("pydantic")

pytestmark = pytest.mark.slow

ORDER = "Hi, where is my order A-1042?"
NOTES_Q = "What is the project called? See notes.txt."
TOOLS = NOTES_TOOLS


@pytest.fixture(scope="module")
def server():
    with serve(seed=3) as running:
        yield running


@pytest.fixture(scope="module")
def oa(server):
    client = openai.OpenAI(
        base_url=f"http://{server.host}:{server.port}/v1", api_key="none", max_retries=0
    )
    yield client
    client.close()


@pytest.fixture(scope="module")
def ol(server):
    return ollama.Client(host=f"http://{server.host}:{server.port}")


def _chat(oa, model="shop-v2", content=ORDER, **extra):
    return oa.chat.completions.create(
        model=model, messages=[{"role": "user", "content": content}], **extra
    )


# --- OpenAI wire ---------------------------------------------------------------------


def test_tool_choice_none_auto_required_and_named(oa) -> None:
    # With tool_choice none the notes model cannot call, so it answers in text.
    none = _chat(oa, "notes", NOTES_Q, tools=TOOLS, tool_choice="none", seed=1)
    assert none.choices[0].message.tool_calls is None
    assert none.choices[0].finish_reason == "stop"
    # required: a seed at which the model, left to itself, guesses without a call.
    guesses = [
        s
        for s in range(40)
        if _chat(oa, "notes", NOTES_Q, tools=TOOLS, tool_choice="auto", seed=s)
        .choices[0]
        .message.tool_calls
        is None
    ]
    assert guesses, "the notes model guesses on about half the seeds"
    forced = _chat(oa, "notes", NOTES_Q, tools=TOOLS, tool_choice="required", seed=guesses[0])
    (call,) = forced.choices[0].message.tool_calls
    assert forced.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "list_notes"  # the first tool offered
    named = _chat(
        oa,
        "shop-v2",
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "read_note"}},
        seed=4,
    )
    (call,) = named.choices[0].message.tool_calls
    assert call.function.name == "read_note"
    assert json.loads(call.function.arguments) == {"path": "example"}  # the schema's shape


def test_json_object_and_json_schema(oa) -> None:
    answers = [
        _chat(oa, response_format={"type": "json_object"}, seed=s).choices[0].message.content
        for s in range(60)
    ]
    good = [a for a in answers if _is_object_with(a, ("reply",))]
    assert 0 < len(answers) - len(good) < 20  # shop-v2 slips on 10% of JSON answers
    schema = {
        "type": "object",
        "properties": {
            "reply": {"type": "string"},
            "order_id": {"type": "string"},
            "status": {"type": "string", "enum": ["shipped", "pending"]},
            "items": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["reply", "order_id", "status", "items"],
        "additionalProperties": False,
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    seed = next(
        s
        for s in range(60)
        if _is_object_with(answers[s], ("reply",))  # the same draw decides the slip
    )
    doc = json.loads(_chat(oa, response_format=fmt, seed=seed).choices[0].message.content)
    assert set(doc) == {"reply", "order_id", "status", "items"}
    assert "A-1042" in doc["reply"] and doc["status"] == "shipped" and doc["items"] == [1]


def test_parse_with_a_pydantic_model(oa) -> None:
    class Answer(pydantic.BaseModel):
        reply: str
        shipped: bool
        eta_days: int

    for seed in range(20):
        try:
            result = oa.chat.completions.parse(
                model="shop-v2",
                messages=[{"role": "user", "content": ORDER}],
                response_format=Answer,
                seed=seed,
            )
        except (pydantic.ValidationError, openai.LengthFinishReasonError):
            continue  # a slip: the stand-in broke the JSON or left out a field
        parsed = result.choices[0].message.parsed
        assert isinstance(parsed, Answer)
        assert "A-1042" in parsed.reply and parsed.shipped is True and parsed.eta_days == 1
        return
    pytest.fail("every one of 20 answers slipped at a 10% slip rate")


def test_max_tokens_stop_and_n(oa) -> None:
    full = _chat(oa, seed=5).choices[0]
    assert full.finish_reason == "stop" and len(full.message.content) > 12
    for field in ("max_tokens", "max_completion_tokens"):
        short = _chat(oa, seed=5, **{field: 3}).choices[0]
        assert short.finish_reason == "length"
        assert short.message.content == full.message.content[:12]
    word = full.message.content.split()[2]
    stopped = _chat(oa, seed=5, stop=[word]).choices[0]
    assert stopped.finish_reason == "stop"
    assert stopped.message.content == full.message.content[: full.message.content.index(word)]
    many = _chat(oa, seed=5, n=3)
    assert [c.index for c in many.choices] == [0, 1, 2]
    assert many.choices[0].message.content == full.message.content
    streamed = _chat(oa, seed=5, n=2, stream=True)
    texts: dict[int, str] = {}
    for chunk in streamed:
        for choice in chunk.choices:
            texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
    assert texts[0] == full.message.content and set(texts) == {0, 1}


def test_logprobs_is_refused_naming_it(oa) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        _chat(oa, logprobs=True, top_logprobs=2)
    assert "logprobs" in str(info.value)
    assert info.value.status_code == 400


# --- Ollama wire -------------------------------------------------------------------------


def test_ollama_format_num_predict_and_stop(ol) -> None:
    messages = [{"role": "user", "content": ORDER}]
    full = ol.chat(model="shop-v2", messages=messages, options={"seed": 5})
    assert full.done_reason == "stop"
    text = full.message.content
    short = ol.chat(model="shop-v2", messages=messages, options={"seed": 5, "num_predict": 2})
    assert short.done_reason == "length" and short.message.content == text[:8]
    word = text.split()[2]
    stopped = ol.chat(model="shop-v2", messages=messages, options={"seed": 5, "stop": [word]})
    assert stopped.message.content == text[: text.index(word)]
    answers = [
        ol.chat(model="shop-v1", messages=messages, format="json", options={"seed": s})
        for s in range(60)
    ]
    slips = sum(not _is_object_with(a.message.content, ("reply",)) for a in answers)
    assert 5 < slips < 35  # shop-v1 slips on 30% of JSON answers

    class Answer(pydantic.BaseModel):
        reply: str
        shipped: bool

    docs = [
        ol.chat(
            model="shop-v2",
            messages=messages,
            format=Answer.model_json_schema(),
            options={"seed": s},
        ).message.content
        for s in range(10)
    ]
    ok = [Answer.model_validate_json(d) for d in docs if _is_object_with(d, ("reply", "shipped"))]
    assert ok and all("A-1042" in a.reply for a in ok)


# --- the known slip rate -------------------------------------------------------------------


def test_json_slip_rate_is_the_set_rate() -> None:
    # 2,000 answers straight from the shaping function: the share that fail a
    # JSON-with-fields check is within 4 standard errors of the set rate.
    from evalstats.demo._shaping import json_answer

    for model, rate in JSON_SLIP_RATES.items():
        n = 2000
        bad = sum(
            not _is_object_with(json_answer("ok", {}, slip_rate=rate, seed=s), ("reply",))
            for s in range(n)
        )
        se = (rate * (1 - rate) / n) ** 0.5
        assert abs(bad / n - rate) < 4 * se, model


def _is_object_with(text: str | None, keys: tuple[str, ...]) -> bool:
    try:
        doc = json.loads(text or "")
    except json.JSONDecodeError:
        return False
    return isinstance(doc, dict) and all(k in doc for k in keys)


# --- the teaching suite ---------------------------------------------------------------------


def test_the_json_suite_passes_at_the_stand_in_s_true_rates(server, tmp_path) -> None:
    from pathlib import Path

    from evalstats import proportion_ci, read_results, sample_passed
    from evalstats.cli import main

    suite = Path(__file__).resolve().parent.parent / "cases" / "json.yaml"
    base = f"http://{server.host}:{server.port}/v1"
    out = tmp_path / "json.jsonl"
    argv = ["run", str(suite), "--runs", "50", "--out", str(out), "--seed", "2"]
    for name in ("v1", "v2"):
        argv += ["--variant", f"{name}=openai:shop-{name},base_url={base},format=json"]
    assert main(argv) == 0
    results = read_results(out)
    for name, rate in (("v1", 0.70), ("v2", 0.90)):
        samples = [s for s in results.samples if s["variant"] == name]
        passed = sum(bool(sample_passed(s)) for s in samples)
        # 200 answers per variant: the 99.9% Wilson interval holds the true rate.
        assert proportion_ci(passed, len(samples), level=0.999).contains(rate), (name, passed)
