"""A Weaviate of the benchmark's own (free ports, its own data folder), for the 1M-fact case:
the shared one stays untouched, and this one's memory is measured alone."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from bench.measure import rss_mib
from factstream.config import Settings, WeaviateSettings
from factstream_lab.stack.process import CacheLayout, free_ports, stop_children, wait_until
from factstream_lab.stack.weaviate import WeaviateService

__all__ = ["OwnWeaviate"]


class OwnWeaviate:
    """Weaviate started from the cached binary on free ports; ``stop`` removes its data."""

    def __init__(self, base: Settings, workdir: Path, **env: str) -> None:
        """``env``: more environment for the server (``GOMEMLIMIT``, monitoring ports)."""
        workdir.mkdir(parents=True, exist_ok=True)
        self._env = env
        self._log_path = workdir / "weaviate.log"
        http, grpc, gossip, data, raft = free_ports(5, pair_last=True)
        connection = WeaviateSettings(host="127.0.0.1", http_port=http, grpc_port=grpc)
        local = base.local.model_copy(
            update={
                "weaviate_gossip_port": gossip,
                "weaviate_data_port": data,
                # Weaviate reaches a peer's internal RPC at its Raft port + 1.
                "weaviate_raft_port": raft,
                "weaviate_raft_rpc_port": raft + 1,
            }
        )
        self._service = WeaviateService(connection, local, CacheLayout(base.local.cache_dir))
        self.settings = base.model_copy(update={"weaviate": connection})
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self.data_mib = 0.0

    def start(self) -> None:
        self._service.provision()  # a no-op when the binary is cached
        spec = self._service.launch()
        self._log = self._log_path.open("ab")
        self._proc = subprocess.Popen(  # noqa: S603 - the cached Weaviate binary
            spec.argv,
            env={**os.environ, **spec.env, **self._env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        wait_until(
            "weaviate (bench)",
            self._service.ready,
            pid=self._proc.pid,
            log=self._log_path,
            timeout_s=120,
        )

    @property
    def pid(self) -> int | None:
        """The server's pid while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def data_dir(self) -> Path:
        """The server's data folder (removed by ``stop``)."""
        return self._service.data_dir

    def rss_mib(self) -> float:
        if self._proc is None:
            raise RuntimeError("not started")
        return rss_mib(self._proc.pid)

    def stop(self) -> None:
        """Stop the server and delete its data folder (after measuring its size)."""
        if self._proc is not None:
            stop_children([self._proc], grace_s=60)
        if self._log is not None:
            self._log.close()
        data = self._service.data_dir
        if data.exists():
            size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
            self.data_mib = round(size / 2**20, 1)
            shutil.rmtree(data, ignore_errors=True)
