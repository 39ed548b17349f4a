"""What a document and a question cost, broken down (issue 37): ``make bench-breakdown``.

    python -m bench.breakdown [--docs 160] [--lanes 8] [--facts 10000] [--queries 100]
        [--spy/--no-spy] [--only documents|questions] [--keep PREFIX] [--out results/bench]

``make bench-breakdown`` asks at 100,000 facts, 200 questions a pass.

Documents: CLARK-News documents through the real editor and materializer as the
throughput benchmark runs them (``bench.throughput``: 8 namespaces at once, the
zero-latency stub LM, real Kafka transactions and Weaviate), one trial, with
``bench.counting`` installed: per document the Weaviate requests by store method and their
milliseconds, Kafka requests by kind (round trips), texts embedded and those embedded
again, the main thread's CPU in grounding, time parsing and decoding stored facts; the CPU
seconds of each process; and, with ``--spy`` (py-spy attached to this process for the
timed stretch), the event loop's CPU by stage (the innermost own module of each sample).

Questions: a namespace filled as the ask benchmark fills it (``bench.kept``; ``--keep``
reuses one), the CLARK-News questions asked through the query engine's retrieval (embed
the question, one hybrid search), per question the same counts, p50 / p95 of each part,
then the same questions once more (what a repeated question costs).

Writes ``<stamp>-breakdown.json``; counts do not move with the machine's load,
milliseconds and CPU seconds do (state the load average beside them: it is in the file).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Annotated, Any

import typer

from bench import kept, spy
from bench.ask import _engine
from bench.corpus import DEFAULT_DATA, load, stream_documents, stub_rules
from bench.counting import Counting
from bench.harness import REPO, Deployment
from bench.measure import CpuMeter, recording_model, stage_seconds, summary_ms
from bench.report import new_report, write_named
from bench.throughput import (
    _by_namespace,
    _edit_all,
    _embedding_pids,
    _lane,
    _model_thread_cpu,
    service_pids,
)
from factstream.agents.editor import Editor
from factstream.ask.query import AskRequest
from factstream.clients import open_clients
from factstream.config import Settings, load_settings
from factstream.embed.base import Embedder, Vector
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.recovery import RecoveredBatches
from factstream.topics.definitions import TopicName
from factstream.topics.records import Document
from factstream_lab.stack import manager

__all__ = ["STAGES", "main", "stage_of"]

# Own modules (under factstream/) by the stage their Python serves; first match wins.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "editor retrieval (rerank, names)",
        (
            "edit/retrieval",
            "edit/rerank",
            "text/",
            "edit/statements",
            "edit/fillers",
        ),
    ),
    ("store client (Weaviate)", ("store/",)),
    ("grounding", ("edit/grounding", "edit/persons")),
    ("time parsing", ("temporal/",)),
    ("LM client and tasks", ("lm/", "tasks/", "prompts/")),
    ("Kafka publishing", ("streams/",)),
    ("records", ("topics/",)),
    ("embedding client", ("embed/",)),
    ("ask path", ("ask/",)),
    ("editor and materializer", ("agents/", "edit/")),
)


def stage_of(module: str) -> str:
    """The stage of an own module path (``store/weaviate_store.py``)."""
    for stage, prefixes in STAGES:
        if module.startswith(prefixes):
            return stage
    return "other own code"


class _Spy:
    """py-spy attached to this process (raw output), from ``start`` to ``stop``."""

    def __init__(self, raw: Path, rate: int = 100) -> None:
        self.raw, self.rate = raw, rate
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # py-spy is a dev dependency: in the venv beside this Python, else on the PATH.
        beside = Path(sys.executable).parent / "py-spy"
        program = str(beside) if beside.exists() else "py-spy"
        argv = [program, "record", "--pid", str(os.getpid()), "-r", str(self.rate)]
        argv += ["-f", "raw", "-o", str(self.raw), "--nonblocking"]
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603
        time.sleep(1.0)  # attached before the stretch begins

    def stop(self) -> dict[str, Any]:
        if self._proc is None:
            return {}
        self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        if not self.raw.exists():
            return {"error": "py-spy wrote nothing (not permitted to attach?)"}
        summary = spy.summarise(self.raw.read_text(), self.rate, top=None)
        functions: dict[str, float] = summary["by_function_cpu_s"]  # type: ignore[assignment]
        summary["by_function_cpu_s"] = dict(list(functions.items())[:30])
        modules: dict[str, float] = summary["by_own_module_cpu_s"]  # type: ignore[assignment]
        stages: defaultdict[str, float] = defaultdict(float)
        for module, seconds in modules.items():
            stages[stage_of(module)] += seconds
        main_cpu = float(summary["main_thread_cpu_s"])  # type: ignore[arg-type]
        stages["no own frame (event loop, library tasks)"] = main_cpu - sum(stages.values())
        return {
            **summary,
            "by_stage_cpu_s": {
                k: round(v, 2) for k, v in sorted(stages.items(), key=lambda kv: -kv[1])
            },
        }


async def documents(
    base: Settings, docs: int, lanes: int, workdir: Path, data: Path, spy_on: bool
) -> dict[str, Any]:
    """The documents' breakdown (see the module docstring)."""
    clark = load(data)
    dep = Deployment(base, workdir / "documents", stub=True)
    try:
        dep.start_stub(stub_rules(clark))
        await dep.create_topics()
        namespaces = [f"bd{i}" for i in range(lanes)]
        return await _documents(
            dep, stream_documents(clark, docs + lanes, namespaces), lanes, spy_on
        )
    finally:
        await dep.close()


async def _documents(
    dep: Deployment, all_docs: list[Any], lanes: int, spy_on: bool
) -> dict[str, Any]:
    async with open_clients(dep.settings) as opened:
        used, recording, model = recording_model(opened.embedder)
        clients = dataclasses.replace(opened, embedder=used)
        publisher = ChangelogPublisher(dep.settings.kafka, dep.settings.worker.app_id)
        await publisher.start()
        try:
            editor = Editor(clients, publisher, dep.settings.editor, dep.settings.worker)
            topic = dep.topic(TopicName.DOCUMENTS)
            warm, timed_docs = all_docs[:lanes], all_docs[lanes:]
            await _edit_all(editor, dep.settings, topic, _by_namespace(warm), {})
            counting = Counting()
            profiler = _Spy(dep.workdir / "spy.raw") if spy_on else None
            pids = {"bench (editor + materializer)": os.getpid(), **_embedding_pids()}
            pids |= service_pids(dep)
            thread_before = _model_thread_cpu(model)
            asked_before = _asked(used)
            stages_before = stage_seconds(clients.metrics.registry)
            if profiler is not None:
                profiler.start()
            recording.recording = True
            elapsed, outcomes, cpu = await _edit_counted(
                editor, dep.settings, topic, _by_namespace(timed_docs), pids, counting
            )
            recording.recording = False
            profile = profiler.stop() if profiler is not None else None
            if thread_before is not None:
                used_s = round(_model_thread_cpu(model) - thread_before, 2)  # type: ignore[operator]
                cpu["bench (editor + materializer)"] = round(
                    cpu["bench (editor + materializer)"] - used_s, 2
                )
                cpu["embedding model"] = used_s
            asked = _asked(used) - asked_before if asked_before >= 0 else -1
            stages_after = stage_seconds(clients.metrics.registry)
        finally:
            await publisher.stop()
    n = len(timed_docs)
    counting.embedded(recording.calls)
    stage_ms = {
        k: round((v - stages_before.get(k, 0.0)) * 1000 / n, 2) for k, v in stages_after.items()
    }
    machine = {k: v for k, v in cpu.items() if k.startswith("machine")}
    per_process = {k: round(v / n * 1000, 2) for k, v in cpu.items() if not k.startswith("machine")}
    model_ms = per_process.get("embedding model")
    others = sum(v for k, v in per_process.items() if k != "embedding model")
    result: dict[str, Any] = {
        "documents": n,
        "lanes": lanes,
        "outcomes": dict(outcomes),
        "seconds": round(elapsed, 2),
        "docs_per_s": round(n / elapsed, 2),
        **counting.summary(n, "doc"),
        # Without a cache every text asked reached the model.
        "texts_asked_per_doc": round((asked if asked >= 0 else len(counting.texts)) / n, 3),
        "stage_wall_ms_per_doc": stage_ms,
        "cpu_ms_per_doc_by_process": per_process,
        "non_model_cpu_ms_per_doc": round(others, 2),
        "model_cpu_ms_per_doc": model_ms,
        "machine_cpu_s": machine,
    }
    if profile is not None and "by_stage_cpu_s" in profile:
        # py-spy counts a runnable thread waiting for a core as active: on loaded cores its
        # seconds exceed the CPU. Its shares are kept, scaled to this process's CPU.
        sampled = sum(profile["by_stage_cpu_s"].values())
        own = cpu["bench (editor + materializer)"]
        result["python_by_stage_cpu_ms_per_doc"] = {
            k: round(v / sampled * own * 1000 / n, 2) for k, v in profile["by_stage_cpu_s"].items()
        }
    if profile is not None:
        result["python_by_stage"] = {
            "what": "py-spy, the event loop's thread, sampled seconds over the timed stretch "
            "(CPU and waits for a core)",
            "main_thread_cpu_s": profile.get("main_thread_cpu_s"),
            "main_thread_cpu_ms_per_doc": round(
                float(profile.get("main_thread_cpu_s", 0.0)) * 1000 / n, 2
            ),
            "by_stage_cpu_s": profile.get("by_stage_cpu_s"),
            "by_owner_cpu_s": profile.get("by_owner_cpu_s"),
            "by_own_module_cpu_s": profile.get("by_own_module_cpu_s"),
            "by_function_cpu_s": profile.get("by_function_cpu_s"),
            "error": profile.get("error"),
        }
    return result


def _asked(embedder: object) -> int:
    """Texts asked of a cached embedder so far (hits and misses); -1 without a cache."""
    hits, misses = getattr(embedder, "hits", None), getattr(embedder, "misses", None)
    return -1 if hits is None or misses is None else int(hits) + int(misses)


async def _edit_counted(
    editor: Editor,
    settings: Settings,
    topic: str,
    lanes: dict[str, list[Document]],
    pids: dict[str, int],
    counting: Counting,
) -> tuple[float, Counter[str], dict[str, float]]:
    """``throughput._edit_all``, counted from the clock's start (after the changelog reads
    each lane makes once)."""
    recovered = [RecoveredBatches(settings.kafka) for _ in lanes]
    now = int(time.time() * 1000)
    for r in recovered:
        await r.take("warm-up", "warm-up", now)
    ahead = settings.embed.batch_size
    with counting.installed():
        meter, started = CpuMeter(pids), time.perf_counter()
        results = await asyncio.gather(
            *(
                _lane(editor, recovered[i], topic, i, docs, ahead)
                for i, docs in enumerate(lanes.values())
            )
        )
        elapsed = time.perf_counter() - started
        cpu = meter.stop()
    return elapsed, sum(results, Counter()), cpu


class _QuestionEmbeds:
    """The engine's embedder, its one-question calls counted and timed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.calls, self.seconds = inner, 0, 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed(self, text: str) -> Vector:
        started = time.perf_counter()
        try:
            return await self.inner.embed(text)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - started

    def misses(self) -> int:
        """Questions that reached the model: the cache's misses, else every call."""
        return int(getattr(self.inner, "misses", self.calls))

    async def embed_batch(self, texts: Any) -> list[Vector]:
        return await self.inner.embed_batch(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def questions(facts: int, queries: int, data: Path, keep: str | None) -> dict[str, Any]:
    """The questions' breakdown (see the module docstring)."""
    async with kept.filled(facts, data, keep, "breakdown") as f:
        counted = _QuestionEmbeds(f.clients.embedder)
        engine = _engine(f.clients, f.settings, counted)
        asked = kept.asked(data, queries)
        passes = {}
        for name in ("first", "repeated"):
            passes[name] = await _ask_all(engine, counted, asked)
        return {**f.result, **passes}


async def _ask_all(engine: Any, counted: _QuestionEmbeds, asked: list[str]) -> dict[str, Any]:
    """Ask every question (the first ``kept.WARM_UP`` untimed); per question its parts."""
    for question in asked[: kept.WARM_UP]:
        await engine.retrieve(AskRequest(question, kept.NAMESPACE), {})
    total: list[float] = []
    embed: list[float] = []
    search: list[float] = []
    counting, calls_before, misses_before = Counting(), counted.calls, counted.misses()
    with counting.installed():
        for question in asked[kept.WARM_UP :]:
            timings: dict[str, float] = {}
            started = time.perf_counter()
            await engine.retrieve(AskRequest(question, kept.NAMESPACE), timings)
            total.append(time.perf_counter() - started)
            embed.append(timings["embed"])
            search.append(timings["retrieve"])
    n = len(total)
    outside = [t - e - s for t, e, s in zip(total, embed, search, strict=True)]
    summary = counting.summary(n, "question")
    summary.pop("embedded")  # the question's embedding is counted below
    return {
        "questions": n,
        "retrieve": summary_ms(total),
        "embed_question": summary_ms(embed),
        "search": summary_ms(search),
        "python_outside": summary_ms(outside),
        "embed_calls_per_question": round((counted.calls - calls_before) / n, 3),
        "questions_to_the_model_per_question": round((counted.misses() - misses_before) / n, 3),
        **summary,
    }


def main(
    docs: Annotated[int, typer.Option(help="Documents timed (after one a lane).")] = 160,
    lanes: Annotated[int, typer.Option(help="Namespaces edited at once.")] = 8,
    facts: Annotated[int, typer.Option(help="Facts in the questions' namespace.")] = 10_000,
    queries: Annotated[int, typer.Option(help="Questions timed per pass.")] = 100,
    spy_on: Annotated[bool, typer.Option("--spy/--no-spy", help="py-spy the documents.")] = True,
    only: Annotated[str | None, typer.Option(help="documents or questions")] = None,
    keep: kept.Keep = None,
    out: Annotated[Path, typer.Option(help="Where results go.")] = REPO / "results" / "bench",
    data: Annotated[Path, typer.Option(help="CLARK-News folder.")] = DEFAULT_DATA,
) -> None:
    """Break a document's and a question's cost down; writes ``<stamp>-breakdown.json``."""
    report = new_report("breakdown")
    base = load_settings()
    manager.up(base, ["kafka", "weaviate"])  # the stub LM is its own; no real LM needed
    workdir = Path(tempfile.mkdtemp(prefix="factstream-breakdown-"))
    if only in (None, "documents"):
        report["document"] = asyncio.run(documents(base, docs, lanes, workdir, data, spy_on))
    if only in (None, "questions"):
        report["question"] = asyncio.run(questions(facts, queries, data, keep))
    report["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    write_named(report, out, "breakdown")


if __name__ == "__main__":
    typer.run(main)
