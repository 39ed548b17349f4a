"""`factstream up`: starts the worker and the API, serves /v1/ask, stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory

from factstream_lab.stack.kafka import kafka_answers_metadata
from factstream_lab.stack.process import free_port, process_alive


async def test_up_serves_questions_and_stops_cleanly(stack_factory: StackFactory) -> None:
    stack = await stack_factory(Decisions(extract={"[doc-1]": ["The ferry runs on Sundays."]}))
    port = free_port()
    env = {**os.environ, **stack.env, "FACTSTREAM_API_PORT": str(port)}
    out = stack.tmp / "up.log"
    with out.open("wb") as log:
        up = subprocess.Popen(
            [sys.executable, "-m", "factstream", "up"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert up.poll() is None, out.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        text = out.read_text()
        assert "WITHOUT authentication" in text  # no keys configured: said out loud
        pids = [int(p) for p in re.findall(r"^(?:worker|api)\s+pid (\d+)", text, re.M)]
        assert len(pids) == 2, text
        assert re.search(rf"^console\s+{re.escape(base)}/ui\b", text, re.M), text
        assert 'id="login"' in httpx.get(f"{base}/ui", timeout=10).text  # the console

        doc = {
            "namespace": "desk",
            "kind": "article",
            "timestamp": "2024-05-01T00:00:00Z",
            "text": "[doc-1] The ferry now runs on Sundays.",
        }
        published = httpx.post(f"{base}/v1/documents", json={"documents": [doc]}, timeout=30)
        assert published.status_code == 202, published.text
        facts: list[object] = []
        while time.monotonic() < deadline and not facts:
            page = httpx.get(f"{base}/v1/facts", params={"namespace": "desk"}, timeout=30)
            facts = page.json().get("facts", []) if page.status_code == 200 else []
            time.sleep(0.5)
        assert facts, "the worker never edited the document in"
        asked = httpx.post(
            f"{base}/v1/ask",
            json={"question": "When does the ferry run?", "namespace": "desk"},
            timeout=60,
        )
        assert asked.status_code == 200, asked.text
        assert [f["text"] for f in asked.json()["facts"]] == ["The ferry runs on Sundays."]
    finally:
        up.send_signal(signal.SIGINT)
        code = up.wait(timeout=90)
    assert code == 0, out.read_text()
    assert "stopped" in out.read_text()
    assert not any(process_alive(pid) for pid in pids)
    # The services were already running: `up` reused them and left them running.
    assert await kafka_answers_metadata(stack.settings.kafka.bootstrap_servers)
