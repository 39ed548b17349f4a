"""Benchmark 4: end to end with the real default LM (no goal: the CPU model is a stand-in).

A `factstream worker` subprocess on the real LM server (cache off) edits CLARK-News
documents published to a fresh deployment; documents/s runs from the publish to the moment
the group has committed them all (offsets are committed every
FACTSTREAM_WORKER_COMMIT_INTERVAL_S, so this errs long by up to that plus one sample). A
warm-up document in another namespace is edited first, so the model load is not counted.
Then questions about the edited namespace are answered by the query engine with generation.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.corpus import load, questions, stream_documents
from bench.harness import Deployment
from bench.lag import LagReader
from bench.measure import summary_ms
from bench.sizes import Size
from factstream.ask.query import AskRequest, QueryEngine
from factstream.clients import open_clients
from factstream.config import Settings

__all__ = ["run"]

_NAMESPACE = "e2e"


async def _edit(dep: Deployment, size: Size, data: Path) -> dict[str, Any]:
    docs = stream_documents(
        load(data), 3 * size.e2e_docs + 10, ["warm-up", _NAMESPACE], stated=False
    )
    warm = [d for d in docs if d.namespace == "warm-up"][:1]
    timed = [d for d in docs if d.namespace == _NAMESPACE][: size.e2e_docs]
    async with LagReader(dep) as reader:
        dep.start_worker()
        await dep.publish(warm)
        await reader.wait_drained(timeout_s=600, interval_s=0.25)
        started = time.monotonic()
        await dep.publish(timed)
        drained = await reader.wait_drained(timeout_s=600 + 120 * len(timed), interval_s=0.25)
    seconds = drained - started
    return {
        "documents": len(timed),
        "seconds": round(seconds, 1),
        "docs_per_s": round(len(timed) / seconds, 3),
    }


async def _ask(dep: Deployment, size: Size, data: Path) -> dict[str, Any]:
    s = dep.settings
    async with open_clients(s) as clients:
        engine = QueryEngine.of(clients, s)
        seconds = []
        for question in questions(data)[: size.e2e_questions]:
            started = time.perf_counter()
            await engine.ask(AskRequest(question, _NAMESPACE))
            seconds.append(time.perf_counter() - started)
    return summary_ms(seconds)


async def run(base: Settings, size: Size, workdir: Path, data: Path) -> dict[str, Any]:
    """Edit and ask on the real LM server of ``base``."""
    dep = Deployment(base, workdir / "e2e", stub=False)
    try:
        await dep.create_topics()
        edit = await _edit(dep, size, data)
        ask = await _ask(dep, size, data)
    finally:
        await dep.close()
    return {"model": base.lm.model, "edit": edit, "ask": ask, "goal": None, "met": None}
