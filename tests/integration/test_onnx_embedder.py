"""The ONNX Runtime embedder against the torch reference, on CLARK-News texts.

Stores built with one runtime must work with the other: every vector within 1e-4 cosine of
sentence-transformers' on the same text, alone or in a batch of mixed lengths.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from fixtures.loop import TICK_S, loop_ticks
from prometheus_client import CollectorRegistry

from factstream.config import EmbedSettings, Settings
from factstream.embed.base import Embedder
from factstream.embed.factory import load_embedder
from factstream.embed.onnx_embedder import OnnxEmbedder
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.metrics import EmbedMetrics
from factstream_lab.eval.datasets import load_clark, verbalise

CLARK = Path(__file__).parents[1] / "data" / "clark-slice"


def _clark_texts() -> list[str]:
    clark = load_clark(CLARK)
    questions = [
        str(json.loads(line)["question"])
        for line in (CLARK / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    documents = [doc.text for doc in clark.documents.values()]
    # Two texts over the model's 256 tokens, which both runtimes cut alike.
    longer = [" ".join(documents[:12]), " ".join(documents[12:30])]
    return documents + questions + [verbalise(t) for t in clark.triples] + longer


@pytest.fixture
async def onnx_embedder() -> AsyncIterator[Embedder]:
    emb = await load_embedder(EmbedSettings(runtime="onnx"), Settings().local.cache_dir)
    yield emb
    await emb.aclose()


async def test_auto_runs_onnx_on_this_cpu(onnx_embedder: Embedder) -> None:
    auto = await load_embedder(EmbedSettings(), Settings().local.cache_dir)
    try:
        assert isinstance(auto, OnnxEmbedder) and isinstance(onnx_embedder, OnnxEmbedder)
        assert auto.name == "all-MiniLM-L6-v2" and auto.dim == 384
    finally:
        await auto.aclose()


async def test_vectors_equal_the_torch_reference_on_clark_news(onnx_embedder: Embedder) -> None:
    texts = _clark_texts()
    assert len(texts) > 200 and max(len(t) for t in texts) > 3000  # truncated ones too
    reference = await SentenceTransformerEmbedder.load(EmbedSettings(runtime="torch"))
    try:
        expected = np.array(await reference.embed_batch(texts))
        singles = np.array([await reference.embed(t) for t in texts[80:90]])
    finally:
        await reference.aclose()
    got = np.array(await onnx_embedder.embed_batch(texts))
    assert got.shape == expected.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * expected).sum(axis=1)
    assert 1.0 - cosines.min() < 1e-4, f"worst text: {texts[int(cosines.argmin())][:80]!r}"
    alone = np.array([await onnx_embedder.embed(t) for t in texts[80:90]])  # questions
    assert 1.0 - (alone * singles).sum(axis=1).min() < 1e-4
    # A question embedded inline, on a session of one thread, is the same vector.
    inline = await load_embedder(
        EmbedSettings(runtime="onnx", question_inline=True, question_threads=1),
        Settings().local.cache_dir,
    )
    try:
        inlined = np.array([await inline.embed(t) for t in texts[80:90]])
    finally:
        await inline.aclose()
    assert 1.0 - (inlined * singles).sum(axis=1).min() < 1e-4
    # Different texts still get different vectors (not one vector for everything).
    assert (got[:80] @ got[:80].T)[np.triu_indices(80, 1)].max() < 0.999


async def test_metrics_and_a_free_event_loop() -> None:
    registry = CollectorRegistry()
    emb = await load_embedder(
        EmbedSettings(runtime="onnx"), Settings().local.cache_dir, EmbedMetrics.create(registry)
    )
    texts = [f"Fact number {i} about the news of the day, told at some length." for i in range(256)]
    try:
        vectors, elapsed, ticks = await loop_ticks(emb.embed_batch(texts))
    finally:
        await emb.aclose()
    assert len(vectors) == 256 and vectors[0] != vectors[1]
    assert elapsed > 0.1 and ticks >= 0.3 * elapsed / TICK_S  # the model ran off the loop
    labels = {"model": "all-MiniLM-L6-v2"}
    assert registry.get_sample_value("factstream_embed_texts_total", labels) == 256


async def test_int8_weights_are_close_to_float32_not_equal(onnx_embedder: Embedder) -> None:
    """FACTSTREAM_EMBED_QUANTIZE=int8: other vectors (so a store needs one setting), close
    enough that retrieval is judged by the evaluations (docs/benchmarks.md)."""
    texts = _clark_texts()
    int8 = await load_embedder(
        EmbedSettings(runtime="onnx", quantize="int8"), Settings().local.cache_dir
    )
    try:
        got = np.array(await int8.embed_batch(texts))
        alone = np.array([await int8.embed(t) for t in texts[80:90]])
    finally:
        await int8.aclose()
    expected = np.array(await onnx_embedder.embed_batch(texts))
    cosines = (got * expected).sum(axis=1)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert cosines.min() > 0.98, f"worst text: {texts[int(cosines.argmin())][:80]!r}"
    assert 1.0 - cosines.min() > 1e-4  # not the float32 graph
    # Activations are quantized per call, with one scale for the whole padded batch: a text's
    # vector depends a little on the texts it was embedded with (docs/benchmarks.md).
    beside = (alone * got[80:90]).sum(axis=1)
    assert beside.min() > 0.98 and 1.0 - beside.min() > 1e-6
