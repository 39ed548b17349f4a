"""The LM client's own CPU per completion: the OpenAI SDK's call against ours (issue 37).

    python -m bench.lm_client [--calls 300] [--out results/bench]

Starts the zero-latency stub LM (tests/fixtures/openai_stub.py, the throughput benchmark's)
and sends the same completions, CLARK-News documents under a JSON-schema grammar as the
editor's are sent to llama.cpp, two ways taking turns call by call: ``sdk``, the OpenAI
SDK's ``chat.completions.create`` on the same HTTP client (the client's path before issue
37, without its retries and metrics), and ``client``, ``OpenAICompatLM.complete`` (the
request posted directly, with retries and metrics). The calling thread's CPU time per call
(the event loop's: every part of a call runs there) moves little with the machine's load,
unlike wall time. Writes ``<stamp>-lm-client.json``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import httpx2
import orjson
import typer
from openai import AsyncOpenAI
from prometheus_client import CollectorRegistry

from bench.corpus import DEFAULT_DATA, load, stub_rules
from bench.report import write_named
from factstream.config import LMSettings
from factstream.lm.backends import LlamaCppBackend
from factstream.lm.base import CompletionRequest
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.metrics import LMMetrics
from factstream.prompts.models import JsonSchema, Message
from factstream_lab import provenance

__all__ = ["main"]

_STUB = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openai_stub.py"
_WARM_UP = 20
_SCHEMA = {
    "type": "object",
    "properties": {
        "labels": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "label": {"enum": ["supported", "contradicted", "unrelated"]},
                },
                "required": ["id", "label"],
            },
        }
    },
    "required": ["labels"],
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _requests(data: Path, n: int) -> list[CompletionRequest]:
    clark = load(data)
    docs = sorted(clark.documents.values(), key=lambda d: d.position)
    texts = [f"<document>\n{doc.text}\n</document>" for doc in docs]
    return [
        CompletionRequest(
            messages=(
                Message(role="system", content="Label each fact against the document."),
                Message(role="user", content=texts[i % len(texts)]),
            ),
            task="classify_facts",
            prompt="classify_facts.v1",
            constraint=JsonSchema("labels", _SCHEMA),
            max_tokens=256,
        )
        for i in range(n)
    ]


async def _measure(url: str, requests: list[CompletionRequest]) -> dict[str, list[float]]:
    settings = LMSettings(url=url, model="stub", backend="llamacpp")
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0))
    lm = OpenAICompatLM(settings, LMMetrics.create(CollectorRegistry()), http_client=http)
    sdk = AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0, http_client=http)
    backend = LlamaCppBackend()

    async def by_sdk(request: CompletionRequest) -> str:
        fields = backend.constraint_fields(request.constraint)
        reply = await sdk.chat.completions.create(
            model="stub",
            messages=[m.model_dump() for m in request.messages],  # type: ignore[misc]
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            extra_body=fields or None,
        )
        return reply.choices[0].message.content or ""

    async def by_client(request: CompletionRequest) -> str:
        return (await lm.complete(request)).text

    ways = {"sdk": by_sdk, "client": by_client}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    wall: dict[str, list[float]] = {name: [] for name in ways}
    texts: dict[str, list[str]] = {name: [] for name in ways}
    try:
        for i, request in enumerate(requests):
            order = list(ways.items()) if i % 2 == 0 else list(reversed(ways.items()))
            for name, way in order:
                c0, w0 = time.thread_time(), time.perf_counter()
                text = await way(request)
                c1, w1 = time.thread_time(), time.perf_counter()
                if i >= _WARM_UP:
                    cpu[name].append(c1 - c0)
                    wall[name].append(w1 - w0)
                    texts[name].append(text)
    finally:
        await lm.aclose()
        await sdk.close()
    if texts["sdk"] != texts["client"]:
        raise RuntimeError("the two ways got different answers")
    return {**{f"cpu_{k}": v for k, v in cpu.items()}, **{f"wall_{k}": v for k, v in wall.items()}}


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(statistics.fmean(values) * 1000, 3),
        "p50": round(statistics.median(values) * 1000, 3),
    }


def main(
    calls: Annotated[int, typer.Option(help="Completions per way.")] = 300,
    out: Annotated[Path, typer.Option(help="Where results go.")] = Path("results/bench"),
    data: Annotated[Path, typer.Option(help="CLARK-News folder.")] = DEFAULT_DATA,
) -> None:
    """Time the LM client's CPU per completion, the SDK's way and ours, taking turns."""
    port = _free_port()
    load_start = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.json"
        rules.write_bytes(orjson.dumps(stub_rules(load(data))))
        argv = [sys.executable, str(_STUB), "--port", str(port), "--rules", str(rules)]
        stub = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
        try:
            url = f"http://127.0.0.1:{port}/v1"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx2.get(f"{url}/models", timeout=1).status_code == 200:
                        break
                except httpx2.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("the stub LM did not start")
                time.sleep(0.2)
            got = asyncio.run(_measure(url, _requests(data, calls + _WARM_UP)))
        finally:
            stub.terminate()
            stub.wait(10)
    sdk, ours = _ms(got["cpu_sdk"]), _ms(got["cpu_client"])
    result: dict[str, Any] = {
        "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        "commit": provenance.commit(),
        "what": "the event loop's CPU ms per completion against the zero-latency stub, "
        "the two ways taking turns on the same requests (after a warm-up)",
        "calls": len(got["cpu_sdk"]),
        "load_avg_at_start": load_start,
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpu_ms": {"sdk": sdk, "client": ours},
        "wall_ms": {"sdk": _ms(got["wall_sdk"]), "client": _ms(got["wall_client"])},
        "client_over_sdk_cpu_mean": round(ours["mean"] / sdk["mean"], 3),
    }
    write_named(result, out, "lm-client")


if __name__ == "__main__":
    typer.run(main)
