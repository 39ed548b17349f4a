"""Small measuring tools: percentiles, a recording embedder, process memory, stage seconds."""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

from prometheus_client import CollectorRegistry

from factstream.embed.base import Embedder, Vector
from factstream.embed.cache import CachedEmbedder

__all__ = [
    "CpuMeter",
    "RecordingEmbedder",
    "child_pids",
    "embed_busy_seconds",
    "percentile",
    "recording_model",
    "rss_mib",
    "stage_seconds",
    "summary_ms",
    "wait_idle",
]

_TICK = os.sysconf("SC_CLK_TCK")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation between closest ranks."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean and max of latencies, in milliseconds."""
    return {
        "p50_ms": round(percentile(seconds, 0.50) * 1000, 2),
        "p95_ms": round(percentile(seconds, 0.95) * 1000, 2),
        "mean_ms": round(sum(seconds) / len(seconds) * 1000, 2),
        "max_ms": round(max(seconds) * 1000, 2),
        "count": len(seconds),
    }


class RecordingEmbedder:
    """An Embedder that passes every call through and remembers the texts of each call."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []
        self.recording = False

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed(self, text: str) -> Vector:
        return (await self.embed_batch([text]))[0]

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        if self.recording and texts:
            self.calls.append(list(texts))
        return await self.inner.embed_batch(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


def recording_model(embedder: Embedder) -> tuple[Embedder, RecordingEmbedder, Embedder]:
    """``embedder`` with the model's own calls recorded (under its caches, if it has them):
    the embedder to use, the recording, and the model."""
    if isinstance(embedder, CachedEmbedder):
        recording = RecordingEmbedder(embedder.inner)
        return embedder.around(recording), recording, embedder.inner
    recording = RecordingEmbedder(embedder)
    return recording, recording, embedder


def rss_mib(pid: int) -> float:
    """The resident memory of process ``pid``, MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS for pid {pid}")


def stage_seconds(registry: CollectorRegistry) -> dict[str, float]:
    """Seconds per editor stage summed over documents (factstream_stage_seconds)."""
    found: dict[str, float] = {}
    for family in registry.collect():
        if family.name != "factstream_stage_seconds":
            continue
        for sample in family.samples:
            if sample.name.endswith("_sum"):
                found[sample.labels["stage"]] = round(sample.value, 3)
    return found


def embed_busy_seconds(registry: CollectorRegistry) -> tuple[float, int]:
    """Seconds the embedding model spent in encode calls, and the calls (the model's own)."""
    for family in registry.collect():
        if family.name == "factstream_embed_batch_seconds":
            busy = sum(s.value for s in family.samples if s.name.endswith("_sum"))
            calls = sum(s.value for s in family.samples if s.name.endswith("_count"))
            return busy, int(calls)
    return 0.0, 0


def child_pids(pid: int, marker: str) -> list[int]:
    """The child processes of ``pid`` whose command line holds ``marker`` (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            except FileNotFoundError:  # it exited since the listing
                continue
            if marker.encode() in cmdline:
                found.append(int(child))
    return found


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _machine_busy() -> float:
    """CPU seconds all cores spent not idle since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:8]]
    return (sum(values) - values[3] - values[4]) / _TICK  # less idle and iowait


async def wait_idle(
    pid: int | None,
    *,
    below: float = 0.1,
    window_s: float = 2.0,
    quiet_windows: int = 5,
    timeout_s: float = 300.0,
) -> float:
    """Wait until process ``pid`` has used under ``below`` of a core in ``quiet_windows``
    windows of ``window_s`` in a row; seconds waited (0 without a pid). After a bulk load
    Weaviate flushes and compacts its segments in bursts (one seen 4-6 s after the load's
    end, a core for 2 s): queries timed meanwhile measure that, not search."""
    if pid is None or not Path(f"/proc/{pid}").exists():
        return 0.0
    started, quiet = time.monotonic(), 0
    while quiet < quiet_windows and time.monotonic() - started < timeout_s:
        before = _cpu_seconds(pid)
        await asyncio.sleep(window_s)
        quiet = quiet + 1 if (_cpu_seconds(pid) - before) / window_s < below else 0
    return round(time.monotonic() - started, 1)


class CpuMeter:
    """CPU seconds of named processes, and of the whole machine, over a stretch of time."""

    def __init__(self, pids: dict[str, int]) -> None:
        self._pids = {name: pid for name, pid in pids.items() if Path(f"/proc/{pid}").exists()}
        self._start = {name: _cpu_seconds(pid) for name, pid in self._pids.items()}
        self._busy, self._wall = _machine_busy(), time.monotonic()

    def stop(self) -> dict[str, float]:
        """CPU seconds since the meter was made, by process, plus the machine's."""
        used = {
            name: round(_cpu_seconds(pid) - self._start[name], 1)
            for name, pid in self._pids.items()
            if Path(f"/proc/{pid}").exists()
        }
        wall = time.monotonic() - self._wall
        used["machine (all processes)"] = round(_machine_busy() - self._busy, 1)
        used["machine capacity"] = round(wall * (os.cpu_count() or 1), 1)
        return used
