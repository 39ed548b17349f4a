"""Grounded output through the real llama.cpp server (SmolLM2-135M) on the demo's documents.

The pipeline edits the first demo documents in order against an in-memory store; every
added or rewritten fact it keeps must pass the grounding check, and none may carry prompt
text or a placeholder. The share it keeps, by reason refused, is printed (``-s``).
"""

from __future__ import annotations

import json
from collections import Counter

from prometheus_client import CollectorRegistry

from factstream.config import EditorSettings, Settings
from factstream.edit.grounding import REASONS, check_grounded
from factstream.edit.materializer import Materializer
from factstream.edit.pipeline import EditContext, edit_document, to_records
from factstream.embed.fake import HashingEmbedder
from factstream.errors import LMOutputInvalid
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.lm.tasks.runner import build_task_runner
from factstream.metrics import LMMetrics
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import Document, EditOp, InputRef
from factstream_lab.demo.run import DEFAULT_DEMO_DATA

DOCUMENTS = 6  # of the demo's 40: minutes of CPU for the 135M model


async def test_kept_facts_are_grounded_in_their_documents(lm_settings: Settings) -> None:
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
                if edit.op not in (EditOp.ADD, EditOp.REWRITE):
                    continue
                kept[str(edit.op)] += 1
                old = edit.previous_text if edit.op is EditOp.REWRITE else None
                also = [] if old is None else [hit.fact.text for hit in plan.retrieved]
                body = (
                    document.text
                    if document.title is None
                    else f"{document.title}\n\n{document.text}"
                )
                refusal = check_grounded(edit.text, body, old, also=also, date=document.timestamp)
                assert refusal is None, (document.id, edit.text, refusal)
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
