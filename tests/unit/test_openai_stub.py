"""The deterministic OpenAI-compatible test server: fixed latency without a concurrency limit,
and the calls and tokens it served at /stats (what the busy-namespace benchmark counts)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx

from tests.fixtures.decisions import Decisions
from tests.fixtures.openai_stub import create_app


def _request(marker: str) -> dict[str, object]:
    user = f"<document>\n[{marker}] Ada founded Northwind.\n</document>"
    return {"model": "stub", "messages": [{"role": "user", "content": user}]}


async def test_calls_wait_the_latency_all_at_once_and_stats_count_them(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    decisions = Decisions(extract={"Ada": ["Ada founded Northwind."]})
    rules.write_text(json.dumps(decisions.to_json()))
    app = create_app(rules, latency_s=0.3)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://stub") as client:
        started = time.monotonic()
        answers = await asyncio.gather(
            *(client.post("/v1/chat/completions", json=_request(f"doc-{i}")) for i in range(20))
        )
        elapsed = time.monotonic() - started
        stats = (await client.get("/stats")).json()
    assert elapsed >= 0.3
    assert stats["max_in_flight"] == 20  # every call waited at once: no concurrency limit
    assert stats["requests"] == 20 and stats["by_task"] == {"extract_facts": 20}
    usage = [a.json()["usage"] for a in answers]
    reported = sum(u["total_tokens"] for u in usage)
    assert stats["total_tokens"] == reported > 0
    assert stats["tokens"]["extract_facts"] == {
        "prompt": sum(u["prompt_tokens"] for u in usage),
        "completion": sum(u["completion_tokens"] for u in usage),
    }
    assert json.loads(answers[0].json()["choices"][0]["message"]["content"]) == {
        "facts": ["Ada founded Northwind."]
    }


async def test_a_streamed_answer_is_the_same_answer_in_word_chunks(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    decisions = Decisions(extract={"Ada": ["Ada founded Northwind."]})
    rules.write_text(json.dumps(decisions.to_json()))
    transport = httpx.ASGITransport(app=create_app(rules))
    async with httpx.AsyncClient(transport=transport, base_url="http://stub") as client:
        whole = await client.post("/v1/chat/completions", json=_request("doc-1"))
        streamed = await client.post(
            "/v1/chat/completions", json={**_request("doc-1"), "stream": True}
        )
    assert streamed.headers["content-type"].startswith("text/event-stream")
    lines = [line.removeprefix("data: ") for line in streamed.text.split("\n\n") if line]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    pieces = [c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]]
    text = whole.json()["choices"][0]["message"]["content"]
    assert "".join(pieces) == text and len([p for p in pieces if p]) == len(text.split())
    assert chunks[-1]["usage"] == whole.json()["usage"]
