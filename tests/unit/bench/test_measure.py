"""The benchmark's process accounting finds the processes it meters."""

from __future__ import annotations

import multiprocessing
import os
import time
from multiprocessing.synchronize import Event

from bench.measure import CpuMeter, child_pids


def _spin(ready: Event, stop: Event) -> None:
    ready.set()
    deadline = time.monotonic() + 60  # never outlive a broken test
    while not stop.is_set() and time.monotonic() < deadline:
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            pass


def _idle(ready: Event, stop: Event) -> None:
    ready.set()
    stop.wait(60)


def _spin_here(cpu_seconds: float, timeout_s: float) -> None:
    """Spin in this process until it has used ``cpu_seconds`` of CPU (however loaded)."""
    start, deadline = time.process_time(), time.monotonic() + timeout_s
    while time.process_time() - start < cpu_seconds:
        assert time.monotonic() < deadline, f"{cpu_seconds} CPU-s took over {timeout_s} s"


def test_child_pids_finds_a_spawned_child_by_its_command_line() -> None:
    child = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(5,))
    child.start()
    try:
        deadline = time.monotonic() + 5
        while child.pid not in child_pids(os.getpid(), "spawn_main"):
            assert time.monotonic() < deadline, "the spawned child was not found"
            time.sleep(0.05)
        assert child_pids(os.getpid(), "no-such-marker-in-any-command-line") == []
    finally:
        child.kill()
        child.join()


def test_cpu_meter_counts_a_busy_child_and_not_an_idle_one() -> None:
    # Under load a fixed stretch of wall time buys an unknown share of a core, so the window
    # is set by CPU instead: this process spins beside the busy child until it has used
    # 0.6 CPU-s, a reference taken over the same window; both spinners get a like share.
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    ready = {"busy": ctx.Event(), "idle": ctx.Event()}
    children = {
        "busy": ctx.Process(target=_spin, args=(ready["busy"], stop)),
        "idle": ctx.Process(target=_idle, args=(ready["idle"], stop)),
    }
    for child in children.values():
        child.start()
    try:
        # Both past their start-up (a spawned interpreter's imports are CPU too).
        for name, event in ready.items():
            assert event.wait(timeout=60), f"the {name} child never started"
        pids = {name: child.pid for name, child in children.items() if child.pid is not None}
        assert pids.keys() == children.keys()
        meter = CpuMeter({**pids, "reference": os.getpid()})
        _spin_here(0.6, timeout_s=60)
        used = meter.stop()
    finally:
        stop.set()
        for child in children.values():
            child.join()
    assert used["reference"] >= 0.6
    assert used["busy"] >= 0.5 * used["reference"] and used["busy"] >= 0.3
    assert used["idle"] <= 0.1
    assert used["machine (all processes)"] >= used["busy"]
