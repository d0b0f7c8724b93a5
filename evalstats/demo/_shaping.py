"""What a chat request asks of the answer, and the answer shaped to it.

The stand-in server (:mod:`evalstats.demo._server`) reads these fields of a
request and honours them, as a real service does:

=========================================  =========================================
OpenAI ``/v1/chat/completions``            Ollama ``/api/chat``
=========================================  =========================================
``tool_choice``: ``none``, ``auto``,       (Ollama has no tool choice)
``required``, ``{"type": "function",
"function": {"name": ...}}``
``response_format``: ``json_object``,      ``format``: ``"json"`` or a JSON schema
``json_schema``
``max_completion_tokens``/``max_tokens``   ``options.num_predict``
``stop`` (a string or up to 4)             ``options.stop``
``n`` (1 to :data:`MAX_CHOICES` choices)   --
``logprobs``/``top_logprobs``: refused     --
with 400, naming the field
=========================================  =========================================

JSON answers and their known error rate
---------------------------------------
Asked for JSON, a model answers a JSON object: of the schema's shape when a
schema is given (every property present; the first string property holds the
model's reply, other strings a placeholder; numbers, booleans, enums, arrays,
nested objects and ``$ref`` to ``$defs`` filled in), otherwise
``{"reply": <the model's reply>}``. It *slips* with a known probability,
:data:`JSON_SLIP_RATES` (the shop assistant's own slip rate: 0.30 for
``shop-v1``, 0.10 for ``shop-v2``; 0.10 for ``notes``), drawn from the
choice's seed: half of the slips break the JSON (the closing brace is left
off), half leave out a field (the first required property). A check that the
answer is a JSON object with every field therefore passes with probability
``1 - slip rate`` exactly.

Length and stop
---------------
The reply (JSON included) is cut at the first stop sequence (``finish_reason``
stays ``"stop"``), then to about ``max_tokens`` tokens at four characters a
token (:func:`~evalstats.demo._server.estimate_tokens`), when longer, with
``finish_reason: "length"`` (Ollama ``done_reason: "length"``). Tool calls are
not cut.

Forced tool calls
-----------------
``tool_choice: "none"`` hides the tools from the model, so it answers in text.
``"required"`` or a named function makes it call a tool: its own call when it
would have made one (of the named function, if named); otherwise a call of the
named (or first offered) function with arguments of the function's parameter
schema's shape (placeholder values, as above).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "JSON_SLIP_RATES",
    "MAX_CHOICES",
    "Shape",
    "ShapeError",
    "cut",
    "forced_call",
    "json_answer",
    "ollama_shape",
    "openai_shape",
]

#: How often a JSON answer slips, by model (see the module docstring).
JSON_SLIP_RATES: dict[str, float] = {"shop-v1": 0.30, "shop-v2": 0.10, "notes": 0.10}

#: The most choices (``n``) one request may ask for.
MAX_CHOICES = 16

#: The most stop sequences, as in the OpenAI API.
MAX_STOP = 4

#: What a string field other than the reply holds.
PLACEHOLDER = "example"


class ShapeError(Exception):
    """A request field that cannot be honoured; ``param`` names it."""

    def __init__(self, message: str, param: str, code: str = "invalid_value") -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


@dataclass(frozen=True)
class Shape:
    """What one request asks of the answer.

    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or
    ``"function"`` (then ``function`` names it); ``json`` is None (text),
    ``{}`` (any JSON object) or the schema; ``max_tokens`` None for no limit.
    """

    tool_choice: str = "auto"
    function: str | None = None
    json: dict[str, Any] | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    n: int = 1


def _whole(value: Any, param: str, *, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(
            f"Invalid type for '{param}': expected an integer, but got "
            f"{type(value).__name__} instead.",
            param,
            "invalid_type",
        )
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise ShapeError(f"Invalid '{param}': {value} must be {bound}.", param)
    return value


def _stop(value: Any, param: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if (
        isinstance(value, list)
        and len(value) <= MAX_STOP
        and all(isinstance(s, str) and s for s in value)
    ):
        return tuple(value)
    raise ShapeError(
        f"Invalid '{param}': expected a string or a list of up to {MAX_STOP} non-empty strings.",
        param,
    )


def _schema_of(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ShapeError(f"Invalid '{param}': expected a JSON schema object.", param)
    return dict(value)


def openai_shape(request: Mapping[str, Any], tools: list[str] | None) -> Shape:
    """The :class:`Shape` of an OpenAI chat request; ``tools`` the names offered."""
    for field in ("logprobs", "top_logprobs"):
        if request.get(field) not in (None, False):
            raise ShapeError(
                f"'{field}' is not supported by the evalstats stand-in: it has no token "
                "probabilities to report.",
                field,
                "unsupported_parameter",
            )
    choice, function = "auto", None
    raw = request.get("tool_choice")
    if raw is not None:
        if not tools:
            raise ShapeError(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when "
                "'tools' are specified.",
                "tool_choice",
            )
        if raw in ("none", "auto", "required"):
            choice = raw
        elif (
            isinstance(raw, Mapping)
            and raw.get("type") == "function"
            and isinstance(raw.get("function"), Mapping)
            and isinstance(raw["function"].get("name"), str)
        ):
            choice, function = "function", raw["function"]["name"]
            if function not in tools:
                raise ShapeError(
                    f"Invalid value for 'tool_choice': function '{function}' is not among "
                    f"the tools ({', '.join(tools)}).",
                    "tool_choice",
                )
        else:
            raise ShapeError(
                "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or "
                '{"type": "function", "function": {"name": ...}}.',
                "tool_choice",
            )
    json_shape = None
    raw = request.get("response_format")
    if raw is not None:
        kind = raw.get("type") if isinstance(raw, Mapping) else None
        if kind == "json_object":
            json_shape = {}
        elif kind == "json_schema":
            spec = raw.get("json_schema")
            if not isinstance(spec, Mapping) or "schema" not in spec:
                raise ShapeError(
                    "Missing required parameter: 'response_format.json_schema.schema'.",
                    "response_format.json_schema",
                    "missing_required_parameter",
                )
            json_shape = _schema_of(spec["schema"], "response_format.json_schema.schema")
        elif kind != "text":
            raise ShapeError(
                "Invalid value for 'response_format.type': expected 'text', 'json_object' "
                "or 'json_schema'.",
                "response_format.type",
            )
    limit = None
    for field in ("max_completion_tokens", "max_tokens"):
        if request.get(field) is not None:
            limit = _whole(request[field], field, low=1)
            break
    n = request.get("n")
    n = 1 if n is None else _whole(n, "n", low=1, high=MAX_CHOICES)
    return Shape(choice, function, json_shape, limit, _stop(request.get("stop"), "stop"), n)


def ollama_shape(request: Mapping[str, Any], options: Mapping[str, Any]) -> Shape:
    """The :class:`Shape` of an Ollama chat request (``format`` and ``options``)."""
    raw = request.get("format")
    json_shape = None
    if raw == "json":
        json_shape = {}
    elif isinstance(raw, Mapping):
        json_shape = dict(raw)
    elif raw not in (None, ""):
        raise ShapeError(f'invalid format {raw!r}: use "json" or a JSON schema', "format")
    limit = options.get("num_predict")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ShapeError('option "num_predict" must be of type integer', "num_predict")
        limit = None if limit <= 0 else limit  # -1 (and 0 here): no limit
    return Shape(json=json_shape, max_tokens=limit, stop=_stop(options.get("stop"), "stop"))


# --- answers of a schema's shape -----------------------------------------------


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    seen = 0
    while isinstance(ref, str) and ref.startswith("#/") and seen < 32:
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        schema = node if isinstance(node, Mapping) else {}
        ref, seen = schema.get("$ref"), seen + 1
    return schema


def _instance(schema: Any, root: Mapping[str, Any], reply: list[str | None], depth: int) -> Any:
    """A value of ``schema``'s shape; the first string takes the reply (``reply[0]``)."""
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            usable = [o for o in options if _resolve(o, root).get("type") != "null"]
            return _instance((usable or options)[0], root, reply, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return {}
        return {key: _instance(sub, root, reply, depth + 1) for key, sub in properties.items()}
    if kind == "array":
        return [_instance(schema.get("items", {}), root, reply, depth + 1)]
    if kind in ("string", None):
        if reply[0] is not None:
            text, reply[0] = reply[0], None
            return text
        return PLACEHOLDER
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return None


def _shaped(schema: Mapping[str, Any], text: str) -> dict[str, Any]:
    if not schema:
        return {"reply": text}
    value = _instance(schema, schema, [text], 0)
    return value if isinstance(value, dict) else {"reply": value}


def json_answer(text: str, schema: Mapping[str, Any], *, slip_rate: float, seed: int) -> str:
    """``text`` as a JSON object of ``schema``'s shape (``{}``: any object), slipping.

    With probability ``slip_rate`` (drawn from ``seed``) the answer slips: half
    the time the JSON is broken (its closing brace left off), half the time a
    field is left out (the first required property, or the first one).

    Examples
    --------
    >>> schema = {"type": "object", "properties": {"reply": {"type": "string"},
    ...           "shipped": {"type": "boolean"}}, "required": ["reply", "shipped"]}
    >>> json_answer("It shipped.", schema, slip_rate=0.0, seed=1)
    '{"reply": "It shipped.", "shipped": true}'
    >>> json_answer("It shipped.", {}, slip_rate=0.0, seed=1)
    '{"reply": "It shipped."}'
    """
    value = _shaped(schema, text)
    rng = random.Random(f"evalstats.standin.json:{seed}")
    slipped, kind = rng.random() < slip_rate, rng.random()
    if slipped and kind >= 0.5 and value:
        required = schema.get("required") if schema else None
        names = [k for k in (required or []) if k in value] or list(value)
        del value[names[0]]
    answer = json.dumps(value, ensure_ascii=False)
    if slipped and (kind < 0.5 or not answer.endswith("}")):
        answer = answer[:-1]
    return answer


def forced_call(name: str, parameters: Any) -> dict[str, Any]:
    """A call of ``name`` with arguments of its ``parameters`` schema's shape."""
    arguments = _instance(
        parameters, parameters if isinstance(parameters, Mapping) else {}, [None], 0
    )
    return {"name": name, "arguments": arguments if isinstance(arguments, dict) else {}}


def cut(text: str, shape: Shape) -> tuple[str, bool]:
    """``text`` cut at the first stop sequence and to ``max_tokens``; whether the limit cut it."""
    positions = [i for i in (text.find(s) for s in shape.stop) if i >= 0]
    if positions:
        text = text[: min(positions)]
    if shape.max_tokens is not None and len(text) > 4 * shape.max_tokens:
        return text[: 4 * shape.max_tokens], True
    return text, False
