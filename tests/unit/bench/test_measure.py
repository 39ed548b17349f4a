"""The benchmark's process accounting finds the processes it meters."""

from __future__ import annotations

import multiprocessing
import os
import time
from multiprocessing.synchronize import Event

from bench.measure import CpuMeter, child_pids


def _spin(seconds: float, spinning: Event) -> None:
    spinning.set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


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
    ctx = multiprocessing.get_context("spawn")
    spinning = ctx.Event()
    busy = ctx.Process(target=_spin, args=(1.5, spinning))
    idle = ctx.Process(target=time.sleep, args=(1.5,))
    busy.start()
    idle.start()
    assert spinning.wait(timeout=30), "the busy child never started"
    assert busy.pid is not None and idle.pid is not None
    meter = CpuMeter({"busy": busy.pid, "idle": idle.pid})
    time.sleep(0.7)
    used = meter.stop()
    busy.join()
    idle.join()
    assert used["busy"] >= 0.3 and used["idle"] <= 0.1
    assert used["machine (all processes)"] >= used["busy"]
