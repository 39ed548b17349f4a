"""Benchmark 1: pipeline throughput without LM time, against the embedding-only bound.

CLARK-News documents go through the real editor and materializer (factstream.agents.editor:
retrieve on Weaviate, classify / rewrite / extract on the zero-latency stub LM server,
publish each batch in a Kafka transaction, apply it to Weaviate) in ``lanes`` namespaces
at once, as the worker's partition actors run them. The bound embeds exactly the texts the
pipeline embedded (documents and changed facts) with the same model, runtime and batch size,
in one ``embed_batch`` call: the throughput if embedding were the only work. Each lane reads
its documents ahead as the worker's window does, their embeddings started early. CPU seconds
are counted per process; with the ONNX runtime the model runs in a thread of the bench's
process, whose CPU time is counted apart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.corpus import load, stream_documents, stub_rules
from bench.harness import Deployment
from bench.measure import (
    CpuMeter,
    RecordingEmbedder,
    child_pids,
    embed_busy_seconds,
    recording_model,
    stage_seconds,
)
from bench.sizes import Size
from factstream.agents.editor import Editor, InputRecord, Outcome
from factstream.clients import open_clients
from factstream.config import Settings
from factstream.embed.factory import choose_runtime
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.recovery import RecoveredBatches
from factstream.topics.definitions import TopicName
from factstream.topics.records import Document, InputRef
from factstream_lab.stack import manager
from factstream_lab.stack.process import read_pid

__all__ = ["GOAL", "run", "service_pids"]

GOAL = 0.8  # pipeline documents/s over the embedding-only bound


async def _lane(
    editor: Editor,
    recovered: RecoveredBatches,
    topic: str,
    lane: int,
    docs: list[Document],
    ahead: int,
) -> Counter[str]:
    """One partition actor's documents in order, read ``ahead`` past the one in flight as the
    worker's window reads them (their embeddings started)."""
    outcomes: Counter[str] = Counter()
    records = [
        InputRecord(
            key=doc.namespace.encode(),
            value=doc.to_bytes(),
            source=InputRef(topic=topic, partition=lane, offset=offset),
            appended_ms=int(time.time() * 1000),
        )
        for offset, doc in enumerate(docs)
    ]
    read = 0
    for offset, record in enumerate(records):
        while read < min(offset + 1 + ahead, len(records)):
            editor.read_ahead(records[read])
            read += 1
        outcomes[(await editor.handle(record, recovered)).value] += 1
    return outcomes


async def _edit_all(
    editor: Editor,
    settings: Settings,
    topic: str,
    lanes: dict[str, list[Document]],
    pids: dict[str, int],
) -> tuple[float, Counter[str], dict[str, float]]:
    """Edit every lane's documents, lanes at once; seconds, outcomes, CPU seconds of ``pids``."""
    recovered = [RecoveredBatches(settings.kafka) for _ in lanes]
    now = int(time.time() * 1000)
    for r in recovered:  # the one changelog read per actor, done before the clock starts
        await r.take("warm-up", "warm-up", now)
    meter, started = CpuMeter(pids), time.perf_counter()
    ahead = settings.embed.batch_size  # as the worker's window reads ahead
    results = await asyncio.gather(
        *(
            _lane(editor, recovered[i], topic, i, docs, ahead)
            for i, docs in enumerate(lanes.values())
        )
    )
    elapsed = time.perf_counter() - started
    return elapsed, sum(results, Counter()), meter.stop()


async def _bound(embedder: RecordingEmbedder) -> dict[str, float]:
    texts = [t for call in embedder.calls for t in call]
    started = time.perf_counter()
    await embedder.inner.embed_batch(texts)
    batched = time.perf_counter() - started
    started = time.perf_counter()
    for call in embedder.calls:
        await embedder.inner.embed_batch(call)
    call_for_call = time.perf_counter() - started
    return {
        "texts": len(texts),
        "calls": len(embedder.calls),
        "batched_s": batched,
        "call_for_call_s": call_for_call,
    }


async def run(base: Settings, size: Size, workdir: Path, data: Path) -> dict[str, Any]:
    """Run the benchmark ``size.throughput_trials`` times (fresh namespaces each, the same
    documents); the trial of the median ratio is reported, with every trial's figures."""
    clark = load(data)
    dep = Deployment(base, workdir / "throughput", stub=True)
    try:
        dep.start_stub(stub_rules(clark))
        await dep.create_topics()
        trials = []
        for trial in range(size.throughput_trials):
            namespaces = [f"tp{trial}x{i}" for i in range(size.throughput_lanes)]
            docs = stream_documents(clark, size.throughput_docs + size.throughput_lanes, namespaces)
            trials.append(await _measure(dep, size, docs, lanes=size.throughput_lanes))
    finally:
        await dep.close()
    median = sorted(trials, key=lambda t: t["ratio"])[len(trials) // 2]
    keys = ("pipeline_docs_per_s", "bound_docs_per_s", "ratio", "embed_busy_s", "seconds")
    return {**median, "trials": [{k: t[k] for k in keys} for t in trials]}


async def _measure(
    dep: Deployment, size: Size, clark_docs: list[Document], lanes: int
) -> dict[str, Any]:
    async with open_clients(dep.settings) as opened:
        # The model's calls recorded (under the text cache): the bound embeds what it computed.
        used, recording, model = recording_model(opened.embedder)
        clients = dataclasses.replace(opened, embedder=used)
        publisher = ChangelogPublisher(dep.settings.kafka, dep.settings.worker.app_id)
        await publisher.start()
        try:
            editor = Editor(clients, publisher, dep.settings.editor, dep.settings.worker)
            topic = dep.topic(TopicName.DOCUMENTS)
            # Warm-up: one document per lane (model, connections, tenants), not timed.
            warm, timed_docs = clark_docs[:lanes], clark_docs[lanes:]
            await _edit_all(editor, dep.settings, topic, _by_namespace(warm), {})
            recording.recording = True
            busy_before = embed_busy_seconds(clients.metrics.registry)
            thread_before = _model_thread_cpu(model)
            pids = {
                "bench (editor + materializer)": os.getpid(),
                **_embedding_pids(),
                **service_pids(dep),
            }
            elapsed, outcomes, cpu = await _edit_all(
                editor, dep.settings, topic, _by_namespace(timed_docs), pids
            )
            recording.recording = False
            busy_after = embed_busy_seconds(clients.metrics.registry)
            if thread_before is not None:  # the model ran in a thread of the bench's process
                used_s = round(_model_thread_cpu(model) - thread_before, 1)  # type: ignore[operator]
                bench = cpu["bench (editor + materializer)"]
                cpu["bench (editor + materializer)"] = round(bench - used_s, 1)
                cpu["embedding model"] = used_s
            stages = stage_seconds(clients.metrics.registry)
            bound = await _bound(recording)
        finally:
            await publisher.stop()
    return {
        **_result(len(timed_docs), lanes, elapsed, outcomes, stages, bound),
        "embed_runtime": choose_runtime(dep.settings.embed)[0],
        "embed_busy_s": round(busy_after[0] - busy_before[0], 2),
        "embed_model_calls": busy_after[1] - busy_before[1],
        "cpu_s": cpu,
        **_cpu_per_document(cpu, len(timed_docs)),
    }


def _model_thread_cpu(embedder: object) -> float | None:
    """CPU seconds of an in-process model's thread (the ONNX embedder), else None."""
    seconds = getattr(embedder, "cpu_seconds", None)
    return float(seconds) if seconds is not None else None


def _cpu_per_document(cpu: dict[str, float], docs: int) -> dict[str, Any]:
    """The model's CPU seconds per document, and those of every other process measured
    (the editor's Python, Weaviate, Kafka, the stub LM): the goal's other form is the
    latter under half the former."""
    model = cpu.get("embedding model")
    if model is None or not docs:
        return {}
    rest = sum(v for k, v in cpu.items() if k != "embedding model" and not k.startswith("machine"))
    return {
        "model_cpu_s_per_doc": round(model / docs, 4),
        "non_model_cpu_s_per_doc": round(rest / docs, 4),
        "non_model_over_model_cpu": round(rest / model, 3) if model else None,
    }


def _embedding_pids() -> dict[str, int]:
    """The embedding model's process (spawned by multiprocessing), when there is one."""
    children = child_pids(os.getpid(), "spawn_main")
    return {"embedding model": children[0]} if len(children) == 1 else {}


def service_pids(dep: Deployment) -> dict[str, int]:
    """The stub LM, and Weaviate and Kafka when this cache folder runs them."""
    services = manager.build_services(dep.settings, ["weaviate", "kafka"])
    found = {svc.name: pid for svc in services if (pid := read_pid(svc.pidfile)) is not None}
    return {**found, "stub LM": dep.pids()["stub"]}


def _by_namespace(docs: list[Document]) -> dict[str, list[Document]]:
    lanes: dict[str, list[Document]] = {}
    for doc in docs:
        lanes.setdefault(doc.namespace, []).append(doc)
    return lanes


def _result(
    docs: int,
    lanes: int,
    elapsed: float,
    outcomes: Counter[str],
    stages: dict[str, float],
    bound: dict[str, float],
) -> dict[str, Any]:
    pipeline = docs / elapsed
    bound_rate = docs / bound["batched_s"]
    calls_rate = docs / bound["call_for_call_s"]
    applied = outcomes.get(Outcome.APPLIED.value, 0)
    return {
        "documents": docs,
        "lanes": lanes,
        "outcomes": dict(outcomes),
        "applied": applied,
        "seconds": round(elapsed, 3),
        "pipeline_docs_per_s": round(pipeline, 2),
        "embedded_texts": int(bound["texts"]),
        "embed_calls": int(bound["calls"]),
        "bound_docs_per_s": round(bound_rate, 2),
        "ratio": round(pipeline / bound_rate, 3),
        "call_for_call_bound_docs_per_s": round(calls_rate, 2),
        "ratio_to_call_for_call": round(pipeline / calls_rate, 3),
        "stage_seconds": stages,
        "goal": f"ratio >= {GOAL}",
        "met": pipeline / bound_rate >= GOAL,
    }
