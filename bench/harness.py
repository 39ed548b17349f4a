"""An isolated deployment for one benchmark: its own topics, consumer group, Weaviate
collections, optionally the deterministic stub LM server and worker subprocesses.

Settings come from environment variables exactly as a worker reads them, so the bench
process and its worker subprocesses see one deployment. ``close`` removes what it made.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import orjson
from aiokafka import AIOKafkaProducer

from factstream.config import Settings
from factstream.store.weaviate_store import drop_collections
from factstream.streams.admin import delete_topics, ensure_topics
from factstream.streams.placement import Placement
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import Document
from factstream_lab.stack.process import free_port, stop_children, wait_until

__all__ = ["REPO", "Deployment"]

REPO = Path(__file__).resolve().parents[1]
# The project's deterministic OpenAI-compatible server (tests/fixtures): zero delay unless
# a benchmark gives it a latency per call.
_STUB = REPO / "tests" / "fixtures" / "openai_stub.py"


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


class Deployment:
    """One benchmark's deployment on the shared Kafka and Weaviate.

    Args:
        base: Settings of the running services (Kafka, Weaviate, LM).
        workdir: Where logs and the stub's rules go.
        stub: Serve the LM with the zero-latency stub (else the real LM of ``base``).
        env: More FACTSTREAM_* variables for this deployment.
    """

    def __init__(self, base: Settings, workdir: Path, *, stub: bool, **env: str) -> None:
        tag = uuid.uuid4().hex[:8]
        self.tag, self.workdir = tag, workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.rules = workdir / "rules.json"
        self.stub_port = free_port() if stub else None
        lm_url = f"http://127.0.0.1:{self.stub_port}/v1" if stub else base.lm.url
        self.env: dict[str, str] = {
            "FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS": base.kafka.bootstrap_servers,
            "FACTSTREAM_KAFKA_TOPIC_PREFIX": f"bench{tag}.",
            "FACTSTREAM_WORKER_APP_ID": f"bench{tag}",
            "FACTSTREAM_STORE_COLLECTION_PREFIX": f"Bench{tag}",
            "FACTSTREAM_WEAVIATE_HOST": base.weaviate.host,
            "FACTSTREAM_WEAVIATE_HTTP_PORT": str(base.weaviate.http_port),
            "FACTSTREAM_WEAVIATE_GRPC_PORT": str(base.weaviate.grpc_port),
            "FACTSTREAM_LM_URL": lm_url,
            "FACTSTREAM_LM_MODEL": "stub" if stub else base.lm.model,
            "FACTSTREAM_LM_BACKEND": "llamacpp",
            # A cached answer costs no LM time and no tokens: benchmarks measure real calls.
            "FACTSTREAM_LM_CACHE": "false",
            "FACTSTREAM_CACHE_DIR": str(base.local.cache_dir),
            "FACTSTREAM_WORKER_METRICS_PORT": "0",
            **env,
        }
        self.settings = Settings.from_env(self.env)  # as the worker subprocesses read them
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[Any] = []

    def topic(self, name: TopicName) -> str:
        return topic_name(name, self.settings.kafka.topic_prefix)

    async def create_topics(self) -> None:
        await ensure_topics(self.settings.kafka, self.settings.worker)

    async def publish(self, docs: Sequence[Document]) -> None:
        """Documents on this deployment's documents topic, keyed by namespace, placed by
        the deployment's placement map (``FACTSTREAM_KAFKA_PLACEMENT_FILE``) if it has one.

        A plain (not transactional) producer, as most publishers are: a transaction's commit
        marker takes an offset of its own, which committed offsets never reach, so lag
        measured as end offset minus committed offset would never come back to 0.
        """
        producer = AIOKafkaProducer(
            bootstrap_servers=self.settings.kafka.bootstrap_servers, linger_ms=5
        )
        placement = Placement.load(self.settings.kafka.placement_file)
        await producer.start()
        try:
            topic = self.topic(TopicName.DOCUMENTS)
            sent = []
            for doc in docs:
                key = doc.namespace.encode()
                partition = await placement.for_send(producer, topic, key)
                sent.append(
                    await producer.send(topic, doc.to_bytes(), key=key, partition=partition)
                )
            await producer.flush()
            for future in sent:
                await future
        finally:
            await producer.stop()

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = (self.workdir / f"{name}.log").open("ab")
        self._logs.append(log)
        proc = subprocess.Popen(  # noqa: S603 - our own programs
            argv, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT
        )
        self._procs.append(proc)
        return proc

    def start_stub(self, rules: dict[str, Any], latency_ms: float = 0.0) -> None:
        """The stub LM server, answering from ``rules`` (the Decisions JSON form), each call
        after ``latency_ms`` (no concurrency limit)."""
        if self.stub_port is None:
            raise RuntimeError("this deployment uses the real LM")
        self.rules.write_bytes(orjson.dumps(rules))
        port = str(self.stub_port)
        argv = [sys.executable, str(_STUB), "--port", port, "--rules", str(self.rules)]
        argv += ["--lm-latency", str(latency_ms)]
        proc = self._spawn("stub", argv)
        url = f"http://127.0.0.1:{port}/v1/models"
        wait_until(
            "stub LM",
            lambda: _answers(url),
            pid=proc.pid,
            log=self.workdir / "stub.log",
            timeout_s=60,
            interval_s=0.1,
        )

    async def stub_stats(self) -> dict[str, Any]:
        """The stub's /stats: requests by task, tokens, the most requests at once."""
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.get(f"http://127.0.0.1:{self.stub_port}/stats")
            response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    def start_worker(self) -> subprocess.Popen[bytes]:
        """A `factstream worker` subprocess of this deployment."""
        return self._spawn(
            f"worker-{len(self._procs)}", [sys.executable, "-m", "factstream", "worker"]
        )

    def pids(self) -> dict[str, int]:
        """The pids of this deployment's processes, by log name."""
        return {
            Path(log.name).stem: proc.pid for log, proc in zip(self._logs, self._procs, strict=True)
        }

    def check_alive(self) -> None:
        """Raise if a process of this deployment died."""
        for proc in self._procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args!r} exited {proc.returncode}; see {self.workdir}")

    async def close(self) -> None:
        """Stop the processes, delete the topics and collections this deployment made."""
        stop_children(self._procs)
        for log in self._logs:
            log.close()
        await delete_topics(self.settings.kafka)
        drop_collections(self.settings.weaviate, self.settings.store.collection_prefix)
