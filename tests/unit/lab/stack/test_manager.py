"""up/down/status: reuse what answers, refuse taken ports, start and stop our own processes."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factstream.config import Settings
from factstream.errors import BuildStepFailed, PortTaken
from factstream_lab.stack.base import LaunchSpec, LocalService, Port
from factstream_lab.stack.manager import (
    ServiceState,
    build_services,
    start_services,
    stop_services,
)
from factstream_lab.stack.process import CacheLayout, free_port, port_is_free, read_pid, run_step
from factstream_lab.stack.progress import PlainReporter, Progress


class EchoService(LocalService):
    """A real tiny TCP server (python -m http.server) standing in for a service."""

    name = "echo"

    def __init__(self, layout: CacheLayout, port: int, host: str = "127.0.0.1") -> None:
        super().__init__(layout)
        self.port, self._host = port, host
        self.provisioned = 0

    @property
    def host(self) -> str:
        return self._host

    @property
    def ports(self) -> list[Port]:
        return [Port(self.port, "ECHO_PORT")]

    @property
    def endpoint(self) -> str:
        return f"{self._host}:{self.port}"

    def provision(self, progress: Progress | None = None) -> None:
        self.provisioned += 1

    def launch(self) -> LaunchSpec:
        return LaunchSpec(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port)]
        )

    def ready(self) -> bool:
        return not port_is_free(self.port)


class BrokenBuild(EchoService):
    def provision(self, progress: Progress | None = None) -> None:
        cmd = [sys.executable, "-c", "raise SystemExit(2)"]
        with (progress or Progress()).step(self.name, "compile", "a build", self.build_log) as step:
            run_step(self.name, "compile", cmd, self.build_log, tick=step.tick)


@pytest.fixture
def layout(tmp_path: Path) -> CacheLayout:
    return CacheLayout(tmp_path)


@pytest.fixture
def echo(layout: CacheLayout) -> Iterator[EchoService]:
    svc = EchoService(layout, free_port())
    yield svc
    stop_services([svc])


def test_up_starts_then_reuses_then_down_stops(echo: EchoService) -> None:
    first = start_services([echo], timeout_s=20)
    assert first[0].state is ServiceState.STARTED and first[0].pid is not None
    second = start_services([echo], timeout_s=20)
    assert second[0].state is ServiceState.RUNNING and second[0].pid == first[0].pid
    assert echo.provisioned == 1  # the second up neither rebuilt nor restarted it
    after = stop_services([echo])
    assert after[0].state is ServiceState.STOPPED
    assert port_is_free(echo.port)


def test_a_server_we_did_not_start_is_reused_and_left_running(layout: CacheLayout) -> None:
    outside = EchoService(CacheLayout(layout.root / "elsewhere"), free_port())
    start_services([outside], timeout_s=20)
    try:
        ours = EchoService(layout, outside.port)
        rows = start_services([ours], timeout_s=20)
        assert rows[0].state is ServiceState.EXTERNAL and ours.provisioned == 0
        stop_services([ours])
        assert not port_is_free(outside.port)
    finally:
        stop_services([outside])


def test_port_held_by_something_else_is_a_clear_error(layout: CacheLayout) -> None:
    class NeedsTwoPorts(EchoService):
        @property
        def ports(self) -> list[Port]:
            return [Port(self.port, "ECHO_PORT"), Port(self.extra, "ECHO_EXTRA_PORT")]

    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        svc = NeedsTwoPorts(layout, free_port())
        svc.extra = squatter.getsockname()[1]  # type: ignore[attr-defined]
        with pytest.raises(PortTaken, match=rf"port 127.0.0.1:{svc.extra} .*ECHO_EXTRA_PORT"):  # type: ignore[attr-defined]
            start_services([svc], timeout_s=5)
    assert svc.provisioned == 0


def test_failed_build_step_stops_the_up(layout: CacheLayout) -> None:
    svc = BrokenBuild(layout, free_port())
    with pytest.raises(BuildStepFailed, match="step 'compile' failed.*echo-build.log"):
        start_services([svc], timeout_s=5)
    assert port_is_free(svc.port)


def test_remote_services_are_not_ours_to_run(layout: CacheLayout) -> None:
    svc = EchoService(layout, free_port(), host="gpu-box.internal")
    rows = start_services([svc], timeout_s=5)
    assert rows[0].state is ServiceState.REMOTE and svc.provisioned == 0


def test_services_listen_where_clients_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:29092")
    monkeypatch.setenv("FACTSTREAM_WEAVIATE_HTTP_PORT", "28080")
    monkeypatch.setenv("FACTSTREAM_LM_URL", "http://127.0.0.1:28000/v1")
    kafka, weav, lm = build_services(Settings())
    assert [p.number for p in kafka.ports][:1] == [29092]
    assert weav.ports[0].number == 28080
    assert lm.ports[0].number == 28000
    assert len({p.number for svc in (kafka, weav, lm) for p in svc.ports}) == 9


def test_unknown_service_name() -> None:
    with pytest.raises(ValueError, match="unknown service"):
        build_services(Settings(), ["mysql"])


def test_up_reports_each_start_then_the_reuse(echo: EchoService) -> None:
    lines: list[str] = []
    progress = Progress(PlainReporter(lines.append, now=lambda: "t"))
    start_services([echo], timeout_s=20, progress=progress)
    start_services([echo], timeout_s=20, progress=progress)
    pid = read_pid(echo.pidfile)
    assert len(lines) == 3
    assert lines[0] == f"t echo      start echo: {echo.endpoint} ...; log: {echo.log}"
    assert lines[1].startswith("t echo      start echo: started in ")
    assert lines[1].endswith(f"; pid {pid}")
    assert (
        lines[2] == f"t echo      start echo: running; {echo.endpoint}, pid {pid}; log: {echo.log}"
    )


def test_a_failed_build_is_reported_as_failed(layout: CacheLayout) -> None:
    lines: list[str] = []
    svc = BrokenBuild(layout, free_port())
    with pytest.raises(BuildStepFailed):
        start_services([svc], timeout_s=5, progress=Progress(PlainReporter(lines.append)))
    assert "compile: FAILED after" in lines[-1] and "exit code 2" in lines[-1]


class MeetingService(EchoService):
    """Provisions only while the others provision too: a barrier all must reach."""

    def __init__(self, layout: CacheLayout, port: int, barrier: threading.Barrier) -> None:
        super().__init__(layout, port)
        self.barrier = barrier
        self.name = f"meet-{port}"

    def provision(self, progress: Progress | None = None) -> None:
        self.barrier.wait()  # BrokenBarrierError if provisioned one after another
        super().provision(progress)


def test_services_are_provisioned_at_once_then_each_started(layout: CacheLayout) -> None:
    barrier = threading.Barrier(3, timeout=10)
    services = [MeetingService(layout, free_port(), barrier) for _ in range(3)]
    try:
        rows = start_services(services, timeout_s=20)
        assert [r.state for r in rows] == [ServiceState.STARTED] * 3
        assert [svc.provisioned for svc in services] == [1, 1, 1]  # not again at the start
    finally:
        stop_services(services)


class SlowService(EchoService):
    name = "slow"

    def provision(self, progress: Progress | None = None) -> None:
        time.sleep(0.5)
        super().provision(progress)


def test_a_failed_build_is_raised_after_the_others_end(layout: CacheLayout) -> None:
    broken, slow = BrokenBuild(layout, free_port()), SlowService(layout, free_port())
    lines: list[str] = []
    with pytest.raises(BuildStepFailed) as raised:
        start_services([broken, slow], timeout_s=20, progress=Progress(PlainReporter(lines.append)))
    assert raised.value.service == "echo"
    assert slow.provisioned == 1  # its build ran to the end beside the failing one
    assert read_pid(slow.pidfile) is None and read_pid(broken.pidfile) is None  # none started
    assert any("compile: FAILED" in line for line in lines)
