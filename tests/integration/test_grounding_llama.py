"""Grounded output through the real llama.cpp server (SmolLM2-135M) on the demo's documents.

The pipeline edits the first demo documents in order against an in-memory store and the
edits are applied as the worker applies them. What the grounding check decided must show in
the store: every fact the pipeline kept (an add or a rewrite) is stored, no fact it refused
(the text of its log line) is, each refusal logged is one counted, and at least one fact is
kept (the test fails when every fact was refused). The share it keeps, by reason refused,
is printed (``-s``).
"""

from __future__ import annotations

import json
import logging
from collections import Counter

import pytest
from prometheus_client import CollectorRegistry

from factstream.config import EditorSettings, Settings
from factstream.edit.grounding import REASONS
from factstream.edit.materializer import Materializer
from factstream.edit.pipeline import EditContext, edit_document, normalise, to_records
from factstream.embed.fake import HashingEmbedder
from factstream.errors import LMOutputInvalid
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.lm.tasks.runner import build_task_runner
from factstream.metrics import LMMetrics
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import Document, EditOp, InputRef
from factstream_lab.demo.run import DEFAULT_DEMO_DATA

DOCUMENTS = 6  # of the demo's 40: minutes of CPU for the 135M model


def _refused_texts(records: list[logging.LogRecord]) -> list[str]:
    """The fact texts the pipeline logged as refused by the grounding check."""
    return [
        str(r.args[-1])
        for r in records
        if r.name == "factstream.edit.pipeline"
        and isinstance(r.args, tuple)
        and str(r.msg).startswith("%s: refused %s fact of document")
    ]


async def test_refused_facts_stay_out_of_the_store_and_kept_ones_are_in_it(
    lm_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="factstream.edit.pipeline")
    lines = DEFAULT_DEMO_DATA.read_text().splitlines()[:DOCUMENTS]
    documents = [Document.model_validate(json.loads(line)) for line in lines]
    registry = CollectorRegistry()
    metrics = LMMetrics.create(registry)
    settings = lm_settings.lm.model_copy(update={"cache": False})
    lm = OpenAICompatLM(settings, metrics)
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    editor = EditorSettings(min_similarity=-1.0, grounding=True)
    ctx = EditContext(store, embedder, build_task_runner(settings, lm, metrics), editor)
    materializer = Materializer(store, embedder)
    kept: Counter[str] = Counter()
    kept_texts: set[str] = set()
    invalid = 0
    try:
        for offset, document in enumerate(documents):
            try:
                plan = await edit_document(document, ctx)
            except LMOutputInvalid:
                invalid += 1  # the worker dead-letters it; the 135M model breaks JSON at times
                continue
            source = InputRef(topic="demo", partition=0, offset=offset)
            edits = to_records(plan, source)
            for edit in edits:
                if edit.op in (EditOp.ADD, EditOp.REWRITE):
                    kept[str(edit.op)] += 1
                    kept_texts.add(normalise(edit.text))
            if edits:
                await materializer.apply(edits)
    finally:
        await lm.aclose()
    refused = {
        (task, reason): registry.get_sample_value(
            "factstream_lm_refused_total",
            {"task": task, "model": settings.model, "reason": reason},
        )
        or 0.0
        for task in ("extract_facts", "rewrite_fact")
        for reason in REASONS
    }
    total_refused = sum(refused.values())
    total = sum(kept.values()) + total_refused
    share = sum(kept.values()) / total if total else 1.0
    by_reason = {f"{t}/{r}": int(n) for (t, r), n in refused.items() if n}
    print(
        f"\ngrounding on {len(documents)} demo documents: kept {sum(kept.values())} of "
        f"{int(total)} facts ({share:.0%}) {dict(kept)}; refused {by_reason}; "
        f"{invalid} documents without valid LM output"
    )
    assert total > 0, "the model stated no fact at all"
    assert kept_texts, f"every fact was refused: {by_reason}"
    namespaces = {d.namespace for d in documents}
    stored = {
        normalise(f.text)
        for ns in namespaces
        for f in (await store.list_facts(ns, include_false=True, limit=10_000)).facts
    }
    # A kept fact is in the store (true, or made false by a later document: still stored).
    assert kept_texts <= stored, sorted(kept_texts - stored)
    refused_texts = _refused_texts(caplog.records)
    assert len(refused_texts) == int(total_refused), (refused_texts, by_reason)
    # A refused fact is not, unless the LM stated it again and it was kept then.
    leaked = {normalise(t) for t in refused_texts} & stored - kept_texts
    assert not leaked, sorted(leaked)
