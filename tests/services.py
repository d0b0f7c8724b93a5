"""Shared test helpers for talking to model services: a recording mock service for
``httpx.MockTransport`` and the notes tools as the OpenAI wire writes them."""

from __future__ import annotations

import json

import httpx

#: The notes assistant's two tools, as an OpenAI chat request lists them.
NOTES_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_notes",
            "description": "List the notes.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_note",
            "description": "Read one note.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
]


class Service:
    """A mock service: records each request and answers with ``reply(request)``."""

    def __init__(self, reply):
        self.reply = reply
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.reply(request)

    @property
    def body(self) -> dict:
        return json.loads(self.requests[-1].content)
