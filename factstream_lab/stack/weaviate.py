"""Weaviate built from source with ``go install``, run with a data folder and no modules."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import httpx

from factstream.config import LocalSettings, WeaviateSettings
from factstream_lab.stack.base import LaunchSpec, LocalService, Port
from factstream_lab.stack.process import CacheLayout, port_is_free, require_tool, run_step
from factstream_lab.stack.progress import Outcome, Progress

__all__ = ["WeaviatePeers", "WeaviateService"]

_GO_HINT = "install Go >= 1.21 (it fetches the toolchain Weaviate asks for); see https://go.dev/dl"
_MODULE = "github.com/weaviate/weaviate/cmd/weaviate-server"


@dataclass(frozen=True)
class WeaviatePeers:
    """This node's place in a cluster on 127.0.0.1 (Weaviate's CLUSTER_IN_LOCALHOST mode:
    a peer's data and Raft RPC ports are one above its gossip and Raft ports).

    Attributes:
        index: this node's position (0-based); its hostname is ``node{index + 1}``.
        raft_ports: every node's Raft port, node1 first (RAFT_JOIN, the voters).
        join_gossip_port: the gossip port of the node the others join (node1's).
    """

    index: int
    raft_ports: tuple[int, ...]
    join_gossip_port: int

    @property
    def hostname(self) -> str:
        return f"node{self.index + 1}"

    def env(self) -> dict[str, str]:
        joined = ",".join(f"node{i + 1}:{port}" for i, port in enumerate(self.raft_ports))
        if len(self.raft_ports) == 1:
            joined = "node1"  # alone: itself
        env = {
            "CLUSTER_HOSTNAME": self.hostname,
            "RAFT_JOIN": joined,
            "RAFT_BOOTSTRAP_EXPECT": str(len(self.raft_ports)),
        }
        if self.index:
            env["CLUSTER_JOIN"] = f"127.0.0.1:{self.join_gossip_port}"
        return env


class WeaviateService(LocalService):
    """A Weaviate node: REST and gRPC on 127.0.0.1, our own vectors only; alone, or one of
    a cluster's ``peers``."""

    name = "weaviate"

    def __init__(
        self,
        weaviate: WeaviateSettings,
        local: LocalSettings,
        layout: CacheLayout,
        peers: WeaviatePeers | None = None,
    ) -> None:
        super().__init__(layout)
        self.weaviate, self.local = weaviate, local
        self.peers = peers or WeaviatePeers(0, (local.weaviate_raft_port,), 0)

    @property
    def host(self) -> str:
        return self.weaviate.host

    @property
    def ports(self) -> list[Port]:
        return [
            Port(self.weaviate.http_port, "FACTSTREAM_WEAVIATE_HTTP_PORT"),
            Port(self.weaviate.grpc_port, "FACTSTREAM_WEAVIATE_GRPC_PORT"),
            Port(self.local.weaviate_gossip_port, "FACTSTREAM_LOCAL_WEAVIATE_GOSSIP_PORT"),
            Port(self.local.weaviate_data_port, "FACTSTREAM_LOCAL_WEAVIATE_DATA_PORT"),
            Port(self.local.weaviate_raft_port, "FACTSTREAM_LOCAL_WEAVIATE_RAFT_PORT"),
            Port(self.local.weaviate_raft_rpc_port, "FACTSTREAM_LOCAL_WEAVIATE_RAFT_RPC_PORT"),
        ]

    @property
    def endpoint(self) -> str:
        return f"{self.weaviate.url} (gRPC {self.weaviate.host}:{self.weaviate.grpc_port})"

    @property
    def binary(self) -> Path:
        return self.layout.root / "weaviate" / self.local.weaviate_version / "weaviate-server"

    @property
    def data_dir(self) -> Path:
        return self.layout.data / f"weaviate-{self.weaviate.http_port}"

    def provision(self, progress: Progress | None = None) -> None:
        progress = progress or Progress()
        title = "build Weaviate"
        if self.binary.exists():
            progress.report(self.name, title, Outcome.CACHED, str(self.binary))
            return
        go = require_tool(self.name, "go", _GO_HINT)
        what = f"go install {_MODULE}@{self.local.weaviate_version} (a few minutes)"
        with progress.step(self.name, title, what, self.build_log) as step:
            staging = self.binary.parent.with_name(f"{self.local.weaviate_version}.partial")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            run_step(
                self.name,
                what,
                # -s -w: no symbol table or DWARF (a faster link; panics still trace).
                [go, "install", "-ldflags=-s -w", f"{_MODULE}@{self.local.weaviate_version}"],
                self.build_log,
                env={"GOBIN": str(staging), "CGO_ENABLED": "1", "GOTOOLCHAIN": "auto"},
                tick=step.tick,
            )
            shutil.rmtree(self.binary.parent, ignore_errors=True)
            staging.rename(self.binary.parent)
            step.ends(Outcome.BUILT, str(self.binary))

    def launch(self) -> LaunchSpec:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # No Go runtime settings (GOGC, GOMEMLIMIT, GODEBUG), measured (issue 40,
        # bench.namespace_memory, docs/operations.md "Namespaces at scale"): once its idle
        # tenants are inactive Weaviate's RSS is back at the store's after its first
        # namespaces were used (0.94-1.00x) with Go's defaults; GOGC=50 left more (1.31x);
        # GOMEMLIMIT can only sit above the peak live heap (Weaviate refuses writes near
        # it), so it does not lower the idle RSS; madvdontneed=1 is Go's default already.
        env = {
            "PERSISTENCE_DATA_PATH": str(self.data_dir),
            "DEFAULT_VECTORIZER_MODULE": "none",
            "ENABLE_MODULES": "",
            "DISABLE_TELEMETRY": "true",
            "GO_PROFILING_DISABLE": "true",
            "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
            "QUERY_DEFAULTS_LIMIT": "25",
            "CLUSTER_IN_LOCALHOST": "true",
            "CLUSTER_BIND_ADDR": "127.0.0.1",
            "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
            "CLUSTER_GOSSIP_BIND_PORT": str(self.local.weaviate_gossip_port),
            "CLUSTER_DATA_BIND_PORT": str(self.local.weaviate_data_port),
            "RAFT_PORT": str(self.local.weaviate_raft_port),
            "RAFT_INTERNAL_RPC_PORT": str(self.local.weaviate_raft_rpc_port),
            "GRPC_PORT": str(self.weaviate.grpc_port),
            **self.peers.env(),
        }
        argv = [
            str(self.binary),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.weaviate.http_port),
            "--scheme",
            "http",
        ]
        return LaunchSpec(argv, env)

    def ready(self) -> bool:
        try:
            resp = httpx.get(f"{self.weaviate.url}/v1/.well-known/ready", timeout=2.0)
        except httpx.HTTPError:
            return False
        return resp.status_code == 200 and not port_is_free(self.weaviate.grpc_port, self.host)
