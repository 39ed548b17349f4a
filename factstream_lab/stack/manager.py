"""Bring the local stack up, down, and report on it; reuse what already runs."""

from __future__ import annotations

import itertools
import time
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from factstream.config import Settings
from factstream.errors import PortTaken
from factstream_lab.stack.base import LocalService
from factstream_lab.stack.cluster import cluster_services
from factstream_lab.stack.kafka import KafkaService
from factstream_lab.stack.llama import LlamaServer
from factstream_lab.stack.postgres import PostgresService
from factstream_lab.stack.process import (
    CacheLayout,
    port_is_free,
    read_pid,
    start_detached,
    stop_process,
    wait_until,
)
from factstream_lab.stack.progress import Outcome, Progress, RunningStep
from factstream_lab.stack.weaviate import WeaviateService

__all__ = [
    "OPTIONAL_SERVICE_NAMES",
    "SERVICE_NAMES",
    "ServiceState",
    "ServiceStatus",
    "build_services",
    "down",
    "provision_all",
    "status",
    "up",
]

SERVICE_NAMES = ("kafka", "weaviate", "lm")
# Started only when named (``--only postgres``, the mirror's tests): the stack runs without it.
OPTIONAL_SERVICE_NAMES = ("postgres",)


class ServiceState(StrEnum):
    STARTED = "started"  # this call started it
    RUNNING = "running"  # runs from our pid file
    EXTERNAL = "external"  # answers, but not a process we started
    REMOTE = "remote"  # settings point elsewhere: not ours to run
    STOPPED = "stopped"


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    state: ServiceState
    endpoint: str
    pid: int | None
    log: str


def _report_found(progress: Progress, row: ServiceStatus) -> None:
    """A service that needed no start: already running (ours or another's), or remote."""
    title = f"start {row.name}"
    if row.state is ServiceState.REMOTE:
        progress.report(row.name, title, Outcome.REMOTE, f"{row.endpoint}, not ours to run")
    elif row.state is ServiceState.EXTERNAL:
        note = f"{row.endpoint}, a server this cache folder did not start"
        progress.report(row.name, title, Outcome.RUNNING, note)
    else:
        note = f"{row.endpoint}, pid {row.pid}"
        progress.report(row.name, title, Outcome.RUNNING, note, log=Path(row.log))


def build_services(
    settings: Settings, names: Iterable[str] = SERVICE_NAMES, *, cluster: bool = False
) -> list[LocalService]:
    """The services named, in start order, configured from ``settings``.

    Args:
        cluster: Kafka and Weaviate as three-node clusters (factstream_lab.stack.cluster);
            their nodes come one after another, node 1 first.
    """
    layout = CacheLayout(settings.local.cache_dir)
    every: dict[str, list[LocalService]] = {
        "kafka": [KafkaService(settings.kafka, settings.local, layout)],
        "weaviate": [WeaviateService(settings.weaviate, settings.local, layout)],
        "lm": [LlamaServer(settings.lm, settings.local, layout)],
        "postgres": [PostgresService(settings.postgres, settings.local, layout)],
    }
    wanted = set(names)
    unknown = wanted - every.keys()
    if unknown:
        raise ValueError(f"unknown service(s) {sorted(unknown)}; known: {list(every)}")
    if cluster:
        every |= {k: v for k, v in cluster_services(settings, layout).items() if k in wanted}
    return [svc for name, nodes in every.items() if name in wanted for svc in nodes]


def _status(svc: LocalService, started: bool = False) -> ServiceStatus:
    if not svc.is_local:
        return ServiceStatus(svc.name, ServiceState.REMOTE, svc.endpoint, None, "-")
    pid = read_pid(svc.pidfile)
    if started:
        state = ServiceState.STARTED
    elif svc.ready():
        state = ServiceState.RUNNING if pid else ServiceState.EXTERNAL
    else:
        state = ServiceState.STOPPED
    return ServiceStatus(svc.name, state, svc.endpoint, pid, str(svc.log))


def provision_all(services: Sequence[LocalService], progress: Progress) -> set[int]:
    """Provision ``services`` all at once, one thread each (every step is a subprocess: a
    download, a ``go install``, a C++ build), so the longest sets the wall time, not the sum.

    A cluster's nodes share their build: only the first node of each name is provisioned.
    Every step reports its own start, end or failure (with its log); after all have ended,
    the first failure, in service order, is raised.

    Returns:
        The ``id`` of each service provisioned, so a later start does not report it twice.
    """
    firsts: dict[str, LocalService] = {}
    for svc in services:
        if svc.is_local:
            firsts.setdefault(svc.name, svc)
    todo = list(firsts.values())
    if not todo:
        return set()
    with ThreadPoolExecutor(len(todo), thread_name_prefix="provision") as pool:
        futures = [pool.submit(svc.provision, progress) for svc in todo]
    errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error
    return {id(svc) for svc in todo}


def _start(
    group: Sequence[LocalService],
    timeout_s: float,
    progress: Progress,
    provisioned: Collection[int] = (),
) -> list[tuple[LocalService, bool]]:
    """Start the nodes of ``group`` (or wait for our earlier start of them), all before
    waiting for any: a cluster's node answers only once enough of its peers run.

    Returns each node with True if this call spawned it.
    """
    with ExitStack() as steps:
        launched: list[tuple[LocalService, int, bool, RunningStep]] = []
        for svc in group:
            pid = read_pid(svc.pidfile)
            spawned = pid is None
            if pid is None:
                for port in svc.ports:  # before provisioning: a taken port fails fast
                    if not port_is_free(port.number):
                        raise PortTaken(svc.name, port.number, port.setting)
                if id(svc) not in provisioned:
                    svc.provision(progress)
            what = svc.endpoint if spawned else f"{svc.endpoint}, started earlier (pid {pid})"
            title = f"start {svc.name if len(group) == 1 else svc.instance}"
            step = steps.enter_context(progress.step(svc.name, title, what, svc.log))
            if pid is None:
                svc.prepare()
                spec = svc.launch()
                pid = start_detached(spec.argv, svc.log, svc.pidfile, env=spec.env)
            # else: our process from an earlier 'up' is still starting; wait for it too.
            launched.append((svc, pid, spawned, step))
        for svc, pid, spawned, step in launched:
            wait_until(
                svc.name, svc.ready, pid=pid, log=svc.log, timeout_s=timeout_s, tick=step.tick
            )
            step.ends(Outcome.STARTED if spawned else Outcome.RUNNING, f"pid {pid}")
    return [(svc, spawned) for svc, _, spawned, _ in launched]


def _wait_ports_released(svc: LocalService, timeout_s: float = 10.0) -> None:
    # The kernel may close a dead process's listening sockets a moment after it exits;
    # an 'up' right after 'down' must not mistake them for a stranger's.
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(port_is_free(p.number) for p in svc.ports):
        time.sleep(0.05)


def start_services(
    services: Sequence[LocalService], timeout_s: float, progress: Progress | None = None
) -> list[ServiceStatus]:
    """Provision and start ``services`` in order; ones that already answer are reused.

    Args:
        services: In start order.
        timeout_s: How long each may take to answer once started.
        progress: Where each step (build, start) is reported; silent by default.
    """
    progress = progress or Progress()
    result = []
    # A cluster's nodes come one after another under one name: they start together.
    groups: list[list[LocalService]] = []
    for _, nodes in itertools.groupby(services, key=lambda svc: svc.name):
        group = []
        for svc in nodes:
            if not svc.is_local or svc.ready():
                row = _status(svc)
                _report_found(progress, row)
                result.append(row)
            else:
                group.append(svc)
        if group:
            groups.append(group)
    # Each service to start that has no process of ours yet is provisioned first, all at
    # once (a port taken by a stranger fails before any build).
    fresh = [svc for group in groups for svc in group if read_pid(svc.pidfile) is None]
    for svc in fresh:
        for port in svc.ports:
            if not port_is_free(port.number):
                raise PortTaken(svc.name, port.number, port.setting)
    provisioned = provision_all(fresh, progress)
    for group in groups:
        started = _start(group, timeout_s, progress, provisioned)
        result += [_status(svc, started=spawned) for svc, spawned in started]
    return result


def stop_services(services: Sequence[LocalService]) -> list[ServiceStatus]:
    """Stop those of ``services`` that we started (reverse order); leave others alone."""
    for svc in reversed(services):
        pid = read_pid(svc.pidfile)
        if pid is not None:
            stop_process(pid)
            _wait_ports_released(svc)
        svc.pidfile.unlink(missing_ok=True)
    return [_status(svc) for svc in services]


def provision(
    settings: Settings, names: Iterable[str] = SERVICE_NAMES, progress: Progress | None = None
) -> None:
    """Download and build the named local services without starting them, all at once."""
    progress = progress or Progress()
    local = []
    for svc in build_services(settings, names):
        if svc.is_local:
            local.append(svc)
        else:
            progress.report(svc.name, "provision", Outcome.REMOTE, f"uses {svc.endpoint}")
    provision_all(local, progress)


def up(
    settings: Settings,
    names: Iterable[str] = SERVICE_NAMES,
    progress: Progress | None = None,
    *,
    cluster: bool = False,
) -> list[ServiceStatus]:
    """Provision and start the named services; ones that already answer are reused.

    Args:
        settings: Where the services listen and the cache folder.
        names: Which services.
        progress: Where each step (build, start) is reported; silent by default.
        cluster: Kafka and Weaviate as three-node clusters.
    """
    services = build_services(settings, names, cluster=cluster)
    return start_services(services, settings.local.start_timeout_s, progress)


def down(
    settings: Settings, names: Iterable[str] = SERVICE_NAMES, *, cluster: bool = False
) -> list[ServiceStatus]:
    """Stop the named services that this cache folder started."""
    return stop_services(build_services(settings, names, cluster=cluster))


def status(
    settings: Settings, names: Iterable[str] = SERVICE_NAMES, *, cluster: bool = False
) -> list[ServiceStatus]:
    """What runs now."""
    return [_status(svc) for svc in build_services(settings, names, cluster=cluster)]
