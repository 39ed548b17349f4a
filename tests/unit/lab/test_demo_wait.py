"""The demo waits for an outcome per document: a dead-lettered one has no batch to wait for."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, start_http_server

from factstream.store.base import AppliedBatch
from factstream.store.memory import InMemoryFactStore
from factstream_lab.demo.run import wait_processed
from factstream_lab.stack.process import free_port
from factstream_lab.up import Part


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Part]:
    """A live child standing in for the worker (only its liveness is asked)."""
    part = Part("worker", ["sleep", "60"], tmp_path / "w.log", "")
    part.process = subprocess.Popen(["sleep", "60"])  # noqa: S607 - a test stand-in
    yield part
    part.process.kill()
    part.process.wait()


def serve_outcomes(outcomes: dict[str, int]) -> int:
    registry = CollectorRegistry()
    counter = Counter("factstream_documents", "outcomes", ["outcome"], registry=registry)
    for outcome, n in outcomes.items():
        counter.labels(outcome).inc(n)
    port = free_port()
    start_http_server(port, addr="127.0.0.1", registry=registry)
    return port


async def store_with(applied: list[str]) -> InMemoryFactStore:
    store = InMemoryFactStore()
    for doc_id in applied:
        await store.record_batch("demo", AppliedBatch(document_id=doc_id, batch_id="b", size=1))
    return store


async def test_dead_letters_end_the_wait_once_every_document_has_an_outcome(
    worker: Part,
) -> None:
    store = await store_with(["a", "b"])
    port = serve_outcomes({"applied": 2, "dead_letter": 1})
    ticks: list[int] = []
    metrics = await wait_processed(store, "demo", ["a", "b", "c"], ticks.append, 5, worker, port)
    assert sum(ticks) == 3 and 'outcome="dead_letter"' in metrics


async def test_a_document_without_an_outcome_is_still_waited_for(worker: Part) -> None:
    store = await store_with(["a"])
    port = serve_outcomes({"applied": 1, "dead_letter": 1})
    with pytest.raises(TimeoutError, match="2 documents not edited in"):
        await wait_processed(store, "demo", ["a", "b", "c"], lambda n: None, 1.0, worker, port)
