"""Apache Kafka (KRaft) from Maven Central jars, run with the machine's Java: a single node, or
one broker+controller of a cluster (``factstream services up --cluster``)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from factstream.config import KafkaSettings, LocalSettings
from factstream_lab.stack.assets import assets_dir
from factstream_lab.stack.base import LaunchSpec, LocalService, Port
from factstream_lab.stack.process import CacheLayout, port_is_free, require_tool, run_step
from factstream_lab.stack.progress import Outcome, Progress

__all__ = ["KafkaQuorum", "KafkaService", "kafka_answers_metadata", "new_cluster_id"]

_JAVA_HINT = "install Java 17 (Debian: apt-get install openjdk-17-jre-headless)"
_MVN_HINT = "install Maven (Debian: apt-get install maven)"


@dataclass(frozen=True)
class KafkaQuorum:
    """This node's place in a cluster of combined broker+controller nodes.

    Attributes:
        node_id: this node's id (1-based).
        controller_ports: every node's controller port, node 1 first (the static voters).
        cluster_id: the id all nodes' storage is formatted with.
    """

    node_id: int
    controller_ports: tuple[int, ...]
    cluster_id: str

    @property
    def voters(self) -> str:
        return ",".join(f"{i}@127.0.0.1:{p}" for i, p in enumerate(self.controller_ports, 1))

    @property
    def size(self) -> int:
        return len(self.controller_ports)


class KafkaService(LocalService):
    """A KRaft broker+controller on 127.0.0.1: alone, or one node of a ``quorum``.

    In a cluster the internal topics (offsets, transaction state) get a replication factor
    of the cluster's size and min.insync.replicas of 2, as the product's own topics do.
    """

    name = "kafka"

    def __init__(
        self,
        kafka: KafkaSettings,
        local: LocalSettings,
        layout: CacheLayout,
        quorum: KafkaQuorum | None = None,
    ) -> None:
        super().__init__(layout)
        self.kafka, self.local = kafka, local
        self._host, self._port = kafka.first_host_port
        self.quorum = quorum

    @property
    def host(self) -> str:
        return self._host

    @property
    def ports(self) -> list[Port]:
        return [
            Port(self._port, "FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS"),
            Port(self.local.kafka_controller_port, "FACTSTREAM_LOCAL_KAFKA_CONTROLLER_PORT"),
        ]

    @property
    def endpoint(self) -> str:
        return f"{self._host}:{self._port}"

    @property
    def _pom(self) -> Path:
        return assets_dir() / "kafka" / "pom.xml"

    @property
    def libs(self) -> Path:
        """The broker's classpath folder, keyed by version and pom content."""
        digest = hashlib.sha256(self._pom.read_bytes()).hexdigest()[:10]
        return self.layout.root / "kafka" / f"{self.local.kafka_version}-{digest}" / "libs"

    @property
    def maven_repository(self) -> Path:
        """Maven's local repository for the resolve: in the cache folder, not ``~/.m2``
        (Java takes its home from the password file, not ``$HOME``): an empty cache folder
        resolves everything from Maven Central, as a first run does."""
        return self.layout.root / "kafka" / "m2"

    @property
    def data_dir(self) -> Path:
        return self.layout.data / f"kafka-{self._port}"

    def provision(self, progress: Progress | None = None) -> None:
        progress = progress or Progress()
        require_tool(self.name, "java", _JAVA_HINT)
        title = "resolve Kafka jars"
        if (self.libs / ".complete").exists():
            progress.report(self.name, title, Outcome.CACHED, str(self.libs))
            return
        mvn = require_tool(self.name, "mvn", _MVN_HINT)
        what = f"resolve org.apache.kafka:kafka_2.13:{self.local.kafka_version} jars with mvn"
        with progress.step(self.name, title, what, self.build_log) as step:
            self._resolve(mvn, what, step.tick)
            step.ends(Outcome.FETCHED, str(self.libs))

    def _resolve(self, mvn: str, what: str, tick: Callable[[], None]) -> None:
        staging = self.libs.with_name("libs.partial")
        shutil.rmtree(staging, ignore_errors=True)
        run_step(
            self.name,
            what,
            [
                mvn,
                "-B",
                "-q",
                "-f",
                self._pom,
                f"-Dkafka.version={self.local.kafka_version}",
                "dependency:copy-dependencies",
                f"-DoutputDirectory={staging}",
                "-DincludeScope=runtime",
                f"-Dmaven.repo.local={self.maven_repository}",
            ],
            self.build_log,
            tick=tick,
        )
        shutil.rmtree(self.libs, ignore_errors=True)
        staging.rename(self.libs)
        (self.libs / ".complete").touch()

    def _properties(self) -> Path:
        ctrl = self.local.kafka_controller_port
        quorum = self.quorum or KafkaQuorum(1, (ctrl,), "")
        replicas, min_isr = str(quorum.size), str(min(2, quorum.size))
        lines = {
            "process.roles": "broker,controller",
            "node.id": str(quorum.node_id),
            "controller.quorum.voters": quorum.voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{self._port},CONTROLLER://127.0.0.1:{ctrl}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self._port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir / "log"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": replicas,
            "offsets.topic.num.partitions": "8",
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": min_isr,
            "share.coordinator.state.topic.replication.factor": replicas,
            "share.coordinator.state.topic.min.isr": min_isr,
            # Topics are created on purpose, with their declared partitions and configs:
            # a producer writing to a misspelt or not-yet-created topic fails instead.
            "auto.create.topics.enable": "false",
            # One node, tests and demos: no reason to wait for more members to join a group.
            "group.initial.rebalance.delay.ms": "0",
        }
        path = self.data_dir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
        return path

    def _java(self, main: str, *args: str | Path) -> list[str]:
        return [
            "java",
            f"-Xmx{self.local.kafka_heap}",
            "-Xms256m",
            f"-Dlog4j2.configurationFile={assets_dir() / 'kafka' / 'log4j2.properties'}",
            "-cp",
            f"{self.libs}/*",
            main,
            *map(str, args),
        ]

    def prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        props = self._properties()
        if (self.data_dir / "log" / "meta.properties").exists():
            return
        cluster_id = (self.quorum and self.quorum.cluster_id) or new_cluster_id()
        run_step(
            self.name,
            "format KRaft storage",
            self._java("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", props),
            self.build_log,
        )

    def launch(self) -> LaunchSpec:
        return LaunchSpec(self._java("kafka.Kafka", self.data_dir / "server.properties"))

    def ready(self) -> bool:
        if port_is_free(self._port, self._host):
            return False
        return asyncio.run(kafka_answers_metadata(self.kafka.bootstrap_servers))


def new_cluster_id(seed: str | None = None) -> str:
    """A KRaft cluster id: random, or derived from ``seed`` (the same for every node).

    Never one that begins with "-": the storage tool's argument parser would read it as an
    option ("argument --cluster-id/-t: expected one argument"), so, as Kafka's own
    ``Uuid.randomUuid`` does, such an id is drawn again (a seed is hashed again).
    """
    while True:
        if seed:
            raw = hashlib.sha256(seed.encode()).digest()[:16]
            seed += "'"
        else:
            raw = uuid.uuid4().bytes
        cluster_id = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


async def kafka_answers_metadata(bootstrap_servers: str, timeout_ms: int = 3000) -> bool:
    """True if a broker at ``bootstrap_servers`` answers a metadata request."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=timeout_ms)
    quiet = logging.getLogger("aiokafka")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # a not-yet-ready broker is expected here, not an error
    try:
        await admin.start()
        await admin.list_topics()
    except Exception:  # noqa: BLE001 - any failure means "not ready"
        return False
    finally:
        quiet.setLevel(level)
        await admin.close()
    return True
