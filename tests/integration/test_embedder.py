"""The real sentence-transformers embedder: bundled all-MiniLM-L6-v2, offline, off the loop."""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fixtures.loop import TICK_S, loop_ticks
from prometheus_client import CollectorRegistry

from factstream.config import EmbedSettings
from factstream.embed.base import Embedder
from factstream.embed.st_embedder import SentenceTransformerEmbedder, bundled_model_path
from factstream.errors import EmbedError
from factstream.metrics import EmbedMetrics


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
async def embedder(registry: CollectorRegistry) -> AsyncIterator[SentenceTransformerEmbedder]:
    emb = await SentenceTransformerEmbedder.load(EmbedSettings(), EmbedMetrics.create(registry))
    yield emb
    await emb.aclose()


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_default_model_loads_offline_and_embeds(
    embedder: SentenceTransformerEmbedder, registry: CollectorRegistry
) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384
    queen, monarch, rocket = await embedder.embed_batch(
        [
            "The Queen will address the nation on Christmas Day.",
            "The monarch gives a televised speech to the country at Christmas.",
            "The rocket launch was postponed because of high winds.",
        ]
    )
    assert all(math.isclose(math.sqrt(_dot(v, v)), 1.0, rel_tol=1e-4) for v in (queen, rocket))
    assert _dot(queen, monarch) > 0.5 > _dot(queen, rocket)
    # Alone or in a batch, the same text gets the same vector up to float rounding: matrix
    # kernels round differently by batch shape (seen 4e-9 on AVX-512), never more than that.
    alone = await embedder.embed("The Queen will address the nation on Christmas Day.")
    assert max(abs(a - b) for a, b in zip(alone, queen, strict=True)) < 1e-6
    assert (
        registry.get_sample_value("factstream_embed_texts_total", {"model": "all-MiniLM-L6-v2"})
        == 4
    )


async def test_encoding_does_not_block_the_event_loop(
    embedder: SentenceTransformerEmbedder,
) -> None:
    texts = [f"Fact number {i} about the news of the day, told at some length." for i in range(512)]
    vectors, elapsed, ticks = await loop_ticks(embedder.embed_batch(texts))
    assert len(vectors) == 512
    # The loop kept running while the model worked in its process.
    assert elapsed > 0.1 and ticks >= 0.3 * elapsed / TICK_S


async def test_any_model_by_path() -> None:
    settings = EmbedSettings(model=str(bundled_model_path()), batch_size=4)
    emb = await SentenceTransformerEmbedder.load(settings)
    try:
        assert emb.dim == 384 and emb.name == str(bundled_model_path())
        assert len(await emb.embed_batch(["a", "b", "c", "d", "e"])) == 5
    finally:
        await emb.aclose()


async def test_missing_model_is_an_embed_error() -> None:
    with pytest.raises(EmbedError, match="cannot load"):
        await SentenceTransformerEmbedder.load(EmbedSettings(model="no-such/model-anywhere"))


_PARENT = """
import asyncio, multiprocessing, sys
from factstream.config import EmbedSettings
from factstream.embed.st_embedder import SentenceTransformerEmbedder

async def main() -> None:
    embedder = await SentenceTransformerEmbedder.load(EmbedSettings())
    await embedder.embed("warm")
    print(*(p.pid for p in multiprocessing.active_children()), flush=True)
    await asyncio.sleep(600)

if __name__ == "__main__":
    asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


async def test_the_model_process_exits_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert parent.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), 120)
        (child_pid,) = (int(p) for p in line.split())
        assert _alive(child_pid)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
    deadline = time.monotonic() + 10
    while _alive(child_pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not _alive(child_pid), "the embedding process outlived its SIGKILLed parent"


async def test_a_killed_model_process_fails_one_call_and_is_replaced(
    embedder: SentenceTransformerEmbedder,
) -> None:
    before = await embedder.embed("The Queen will address the nation.")
    (child_pid,) = (p.pid for p in multiprocessing.active_children())
    os.kill(child_pid, signal.SIGKILL)
    with pytest.raises(EmbedError, match="died"):
        await embedder.embed("anything")
    assert await embedder.embed("The Queen will address the nation.") == pytest.approx(before)
