"""The stand-in server's batch endpoints: OpenAI, Anthropic and Gemini wire formats."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from evalstats.demo._server import serve
from evalstats.errors import InvalidArgument

QUESTION = "Where is my order A-1042?"


def _chat(seed: int) -> dict:
    return {"model": "shop-v2", "seed": seed, "messages": [{"role": "user", "content": QUESTION}]}


def _openai_batch(client: httpx.Client, bodies: dict[str, dict]) -> dict:
    lines = [
        {"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body}
        for cid, body in bodies.items()
    ]
    content = "\n".join(json.dumps(line) for line in lines).encode()
    upload = client.post(
        "/v1/files", files={"file": ("in.jsonl", content)}, data={"purpose": "batch"}
    )
    assert upload.status_code == 200 and upload.json()["purpose"] == "batch"
    created = client.post(
        "/v1/batches",
        json={
            "input_file_id": upload.json()["id"],
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        },
    )
    assert created.status_code == 200, created.text
    return created.json()


def _wait(client: httpx.Client, path: str, done) -> dict:
    for _ in range(200):
        document = client.get(path).json()
        if done(document):
            return document
        time.sleep(0.02)
    raise AssertionError(f"{path} did not end")


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_openai_batch_answers_as_the_chat_route_keyed_by_custom_id() -> None:
    bodies = {f"req-{i}": _chat(seed=i) for i in range(40)}
    with serve(batch_delay_s=0.1) as server, httpx.Client(base_url=server.base_url) as client:
        batch = _openai_batch(client, bodies)
        assert batch["object"] == "batch" and batch["status"] == "in_progress"
        assert batch["output_file_id"] is None and batch["request_counts"]["total"] == 40
        ended = _wait(client, f"/v1/batches/{batch['id']}", lambda b: b["status"] == "completed")
        assert ended["request_counts"] == {"total": 40, "completed": 40, "failed": 0}
        assert ended["error_file_id"] is None
        out = _lines(client.get(f"/v1/files/{ended['output_file_id']}/content").text)
        assert sorted(line["custom_id"] for line in out) == sorted(bodies)
        assert [line["custom_id"] for line in out] != list(bodies)  # in no particular order
        for line in out:
            assert line["response"]["status_code"] == 200 and line["error"] is None
            sync = client.post("/v1/chat/completions", json=bodies[line["custom_id"]]).json()
            got = line["response"]["body"]["choices"][0]["message"]["content"]
            assert got == sync["choices"][0]["message"]["content"]
        listed = client.get("/v1/batches").json()
        assert [b["id"] for b in listed["data"]] == [batch["id"]]
        assert server.app.batches.creations() == {"openai": 1}


def test_openai_errors_expiry_and_a_batch_that_never_ends() -> None:
    bodies = {f"r{i}": _chat(seed=i) for i in range(60)}
    with serve(batch_error_rate=0.3, batch_expire_rate=0.2) as server:
        client = httpx.Client(base_url=server.base_url)
        batch = _wait(client, f"/v1/batches/{_openai_batch(client, bodies)['id']}", lambda b: True)
        assert batch["status"] == "expired" and batch["expired_at"] is not None
        out = _lines(client.get(f"/v1/files/{batch['output_file_id']}/content").text)
        errors = _lines(client.get(f"/v1/files/{batch['error_file_id']}/content").text)
        assert sorted(x["custom_id"] for x in out + errors) == sorted(bodies)
        assert errors and all(e["error"]["code"] == "batch_expired" for e in errors)
        failed = [x for x in out if x["response"]["status_code"] == 500]
        assert 0 < len(failed) < len(out)
        assert failed[0]["response"]["body"]["error"]["type"] == "server_error"
        # A request sent again in a new batch draws afresh.
        again = _openai_batch(client, {e["custom_id"]: bodies[e["custom_id"]] for e in errors})
        assert again["id"] != batch["id"]
        client.close()
    with serve(batch_never_ends=True) as server, httpx.Client(base_url=server.base_url) as client:
        batch = _openai_batch(client, {"only": _chat(1)})
        time.sleep(0.05)
        assert client.get(f"/v1/batches/{batch['id']}").json()["status"] == "in_progress"
        cancelled = client.post(f"/v1/batches/{batch['id']}/cancel").json()
        assert cancelled["status"] == "cancelled"
        (line,) = _lines(client.get(f"/v1/files/{cancelled['error_file_id']}/content").text)
        assert line["error"]["code"] == "batch_cancelled"


def test_openai_refuses_bad_uploads_and_inputs() -> None:
    with serve() as server, httpx.Client(base_url=server.base_url) as client:
        wrong = client.post(
            "/v1/files", files={"file": ("x.jsonl", b"{}")}, data={"purpose": "fine-tune"}
        )
        assert wrong.status_code == 400 and "purpose" in wrong.json()["error"]["message"]
        line = {"custom_id": "same", "method": "POST", "url": "/v1/chat/completions"}
        content = "\n".join(json.dumps({**line, "body": _chat(1)}) for _ in range(2)).encode()
        upload = client.post(
            "/v1/files", files={"file": ("in.jsonl", content)}, data={"purpose": "batch"}
        ).json()
        batch = client.post(
            "/v1/batches",
            json={
                "input_file_id": upload["id"],
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
            },
        ).json()
        assert batch["status"] == "failed"
        assert "not unique" in batch["errors"]["data"][0]["message"]
        missing = client.get("/v1/batches/batch_nope")
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"


def test_anthropic_message_batches() -> None:
    params = {
        "model": "shop-v1",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    requests = [{"custom_id": f"case_{i}", "params": params} for i in range(30)]
    with serve(batch_delay_s=0.1, batch_error_rate=0.2, batch_expire_rate=0.1) as server:
        client = httpx.Client(base_url=server.base_url)
        batch = client.post("/v1/messages/batches", json={"requests": requests}).json()
        assert batch["type"] == "message_batch" and batch["processing_status"] == "in_progress"
        assert batch["request_counts"]["processing"] == 30 and batch["results_url"] is None
        early = client.get(f"/v1/messages/batches/{batch['id']}/results")
        assert early.status_code == 400 and early.json()["type"] == "error"
        ended = _wait(
            client,
            f"/v1/messages/batches/{batch['id']}",
            lambda b: b["processing_status"] == "ended",
        )
        assert ended["results_url"].endswith(f"/v1/messages/batches/{batch['id']}/results")
        counts = ended["request_counts"]
        assert counts["processing"] == 0 and sum(counts.values()) == 30
        assert counts["succeeded"] and counts["errored"] and counts["expired"]
        results = _lines(client.get(f"/v1/messages/batches/{batch['id']}/results").text)
        kinds = {r["custom_id"]: r["result"]["type"] for r in results}
        assert sorted(kinds) == sorted(r["custom_id"] for r in requests)
        ok = next(r["result"] for r in results if r["result"]["type"] == "succeeded")
        assert (
            ok["message"]["content"][0]["type"] == "text"
            and "order" in (ok["message"]["content"][0]["text"])
        )
        assert ok["message"]["usage"]["input_tokens"] > 0
        bad = next(r["result"] for r in results if r["result"]["type"] == "errored")
        assert bad["error"]["error"]["type"] == "api_error"
        refused = client.post(
            "/v1/messages/batches",
            json={"requests": [{"custom_id": "no spaces", "params": params}]},
        )
        assert refused.status_code == 400
        assert refused.json()["error"]["type"] == "invalid_request_error"
        client.close()
    with serve(batch_never_ends=True) as server, httpx.Client(base_url=server.base_url) as client:
        batch = client.post("/v1/messages/batches", json={"requests": requests[:2]}).json()
        cancelled = client.post(f"/v1/messages/batches/{batch['id']}/cancel").json()
        assert cancelled["processing_status"] == "ended" and cancelled["cancel_initiated_at"]
        results = _lines(client.get(f"/v1/messages/batches/{batch['id']}/results").text)
        assert {r["result"]["type"] for r in results} == {"canceled"}
        assert server.app.batches.creations() == {"anthropic": 1}


def _gemini_request(seed: int) -> dict:
    return {
        "request": {
            "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
            "generationConfig": {"seed": seed},
        },
        "metadata": {"key": f"k{seed}"},
    }


def test_gemini_batch_generate_content() -> None:
    body = {
        "batch": {
            "display_name": "eval",
            "input_config": {"requests": {"requests": [_gemini_request(i) for i in range(10)]}},
        }
    }
    with serve(batch_delay_s=0.05) as server, httpx.Client(base_url=server.base_url) as client:
        operation = client.post("/v1beta/models/shop-v2:batchGenerateContent", json=body).json()
        assert operation["name"].startswith("batches/") and operation["done"] is False
        assert operation["metadata"]["state"] == "BATCH_STATE_RUNNING"
        done = _wait(client, f"/v1beta/{operation['name']}", lambda o: o["done"])
        assert done["metadata"]["state"] == "BATCH_STATE_SUCCEEDED"
        responses = done["response"]["inlinedResponses"]["inlinedResponses"]
        assert [r["metadata"]["key"] for r in responses] == [f"k{i}" for i in range(10)]
        sync = client.post("/v1/chat/completions", json=_chat(3)).json()
        text = responses[3]["response"]["candidates"][0]["content"]["parts"][0]["text"]
        assert text == sync["choices"][0]["message"]["content"]
    with serve(batch_expire_rate=0.5) as server, httpx.Client(base_url=server.base_url) as client:
        operation = client.post("/v1beta/models/shop-v2:batchGenerateContent", json=body).json()
        done = _wait(client, f"/v1beta/{operation['name']}", lambda o: o["done"])
        assert done["metadata"]["state"] == "BATCH_STATE_EXPIRED" and "response" not in done
        assert server.app.batches.creations() == {"gemini": 1}


def test_batch_knobs_are_checked() -> None:
    with pytest.raises(InvalidArgument, match="batch_error_rate"):
        serve(batch_error_rate=1.5)
    with pytest.raises(InvalidArgument, match="batch_delay_s"):
        serve(batch_delay_s=-1)
