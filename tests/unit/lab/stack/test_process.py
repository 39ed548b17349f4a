"""Process plumbing: build steps name their failures, detached servers start and stop."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factstream.errors import BuildStepFailed, ServiceStartFailed, ToolMissing
from factstream_lab.stack.process import (
    CacheLayout,
    free_ports,
    port_is_free,
    process_alive,
    read_pid,
    require_tool,
    run_step,
    staged_folder,
    start_detached,
    stop_children,
    stop_process,
    wait_until,
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that something listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_run_step_logs_output(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    run_step("svc", "say hello", [sys.executable, "-c", "print('hello from step')"], log)
    text = log.read_text()
    assert "### svc: say hello" in text and "hello from step" in text


def test_failed_step_names_step_exit_code_and_log(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    cmd = [sys.executable, "-c", "import sys; print('compiler exploded'); sys.exit(3)"]
    with pytest.raises(BuildStepFailed) as info:
        run_step("weaviate", "go install", cmd, log)
    assert info.value.returncode == 3
    assert "weaviate: step 'go install' failed with exit code 3" in str(info.value)
    assert str(log) in str(info.value)
    assert "compiler exploded" in log.read_text()


def test_missing_tool_is_a_clear_error() -> None:
    with pytest.raises(ToolMissing, match="'no-such-tool-xyz' is not installed.*apt-get"):
        require_tool("kafka", "no-such-tool-xyz", "try apt-get install it")


def test_port_is_free(listener: int) -> None:
    assert not port_is_free(listener)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    assert port_is_free(free)


def test_detached_process_survives_and_stops(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path)
    pidfile, log = layout.pidfile("sleeper"), layout.log("sleeper")
    pid = start_detached(
        [sys.executable, "-c", "print('up', flush=True); import time; time.sleep(60)"], log, pidfile
    )
    assert read_pid(pidfile) == pid and process_alive(pid)
    deadline = time.monotonic() + 10
    while "up" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "up" in log.read_text()
    stop_process(pid, grace_s=5)
    assert not process_alive(pid)
    assert read_pid(pidfile) is None


def test_a_detached_server_inherits_no_descriptor_of_ours(tmp_path: Path) -> None:
    """Run under `flock LOCK ...`, a server would otherwise hold the lock while it runs."""
    layout = CacheLayout(tmp_path)
    pidfile, log = layout.pidfile("sleeper"), layout.log("sleeper")
    held = os.open(tmp_path / "lock", os.O_CREAT | os.O_RDWR)
    os.set_inheritable(held, True)
    try:
        pid = start_detached([sys.executable, "-c", "import time; time.sleep(60)"], log, pidfile)
        try:
            target = str(tmp_path / "lock")
            deadline, opened = time.monotonic() + 10, set[str]()
            while str(log) not in opened and time.monotonic() < deadline:  # until it runs
                time.sleep(0.05)
                with contextlib.suppress(OSError):
                    opened = {os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()}
            time.sleep(0.2)  # past the exec
            opened = {os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()}
            assert str(log) in opened
            assert target not in opened
        finally:
            stop_process(pid, grace_s=5)
    finally:
        os.close(held)


def test_a_state_folder_keeps_data_logs_and_pids_apart_from_the_builds(tmp_path: Path) -> None:
    shared, own = CacheLayout(tmp_path / "cache"), CacheLayout(tmp_path / "cache", tmp_path / "t")
    assert own.root == shared.root == tmp_path / "cache"
    assert (own.data, own.logs) == (tmp_path / "t" / "data", tmp_path / "t" / "logs")
    assert own.pidfile("kafka-1") == tmp_path / "t" / "run" / "kafka-1.pid"
    assert shared.pidfile("kafka-1") == tmp_path / "cache" / "run" / "kafka-1.pid"


def test_wait_until_fails_fast_when_the_process_exits(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path)
    log = layout.log("crasher")
    pid = start_detached([sys.executable, "-c", "raise SystemExit(1)"], log, layout.pidfile("c"))
    started = time.monotonic()
    with pytest.raises(ServiceStartFailed, match="exited during start-up"):
        wait_until("crasher", lambda: False, pid=pid, log=log, timeout_s=30)
    assert time.monotonic() - started < 10


def test_wait_until_times_out(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path)
    log = layout.log("slow")
    pid = start_detached(
        [sys.executable, "-c", "import time; time.sleep(30)"], log, layout.pidfile("slow")
    )
    try:
        with pytest.raises(ServiceStartFailed, match="not ready after 1s"):
            wait_until("slow", lambda: False, pid=pid, log=log, timeout_s=1, interval_s=0.1)
    finally:
        stop_process(pid, grace_s=2)


def test_free_ports_are_distinct_and_free() -> None:
    ports = free_ports(5, pair_last=True)
    assert len(set(ports)) == 5
    assert all(port_is_free(port) for port in [*ports, ports[-1] + 1])


def test_stop_children_kills_what_ignores_sigterm_and_reaps_all() -> None:
    stubborn = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + (
        "print('ready', flush=True); time.sleep(60)"
    )
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    deaf = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
    assert deaf.stdout is not None and deaf.stdout.readline() == b"ready\n"
    began = time.monotonic()
    stop_children([polite, deaf], grace_s=0.5)
    deaf.stdout.close()
    assert time.monotonic() - began < 10
    assert polite.returncode == -15 and deaf.returncode == -9


def test_staged_folder_replaces_the_folder_only_when_complete(tmp_path: Path) -> None:
    folder = tmp_path / "tool" / "1.0"
    folder.mkdir(parents=True)
    (folder / "old").write_text("old")
    with pytest.raises(RuntimeError), staged_folder(folder) as staging:
        (staging / "half").write_text("half")
        raise RuntimeError("the build failed")
    assert sorted(p.name for p in folder.iterdir()) == ["old"]  # untouched
    with staged_folder(folder) as staging:
        assert staging != folder and not any(staging.iterdir())  # a fresh one
        (staging / "new").write_text("new")
    assert sorted(p.name for p in folder.iterdir()) == ["new"]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["1.0"]
