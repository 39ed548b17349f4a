"""Benchmark 2: LM tokens per document, batched classification vs ERASE's per-fact prompts.

The namespace holds every CLARK-News triple as a fact, true from the time of the document
that states it. For each chosen document the editor's own retrieval (hybrid search, top_k,
similarity floor, true at the document's time) picks the facts; the same facts are then
classified by each batched prompt version in one call and by ERASE's per-fact prompt one
call per fact, on the real LM server with the cache off. Tokens are the server's usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.corpus import clark_facts, load
from bench.harness import Deployment
from bench.sizes import Size
from factstream.clients import Clients, open_clients
from factstream.config import EditorSettings, Settings
from factstream.lm.base import Usage
from factstream.lm.tasks.editing import (
    DEFAULT_CLASSIFY_FACTS,
    classify_facts_batched,
    classify_facts_per_fact,
)
from factstream.prompts.classify_facts import FALSE_LABELS, Label
from factstream.prompts.models import DocumentView
from factstream.store.base import StoredFact
from factstream_lab.eval.datasets import ClarkDocument

__all__ = ["BATCHED", "GOAL", "PER_FACT", "run"]

GOAL = 0.25  # batched tokens per document over per-fact tokens per document
BATCHED = ("classify_facts.v1", "classify_facts.v2", "classify_facts.v3")
PER_FACT = "classify_fact.v1"  # ERASE Appendix A.1, one call per fact
_NAMESPACE = "tokens"


async def _load_facts(clients: Clients, clark_dir: Path) -> list[ClarkDocument]:
    clark = load(clark_dir)
    facts = clark_facts(clark, _NAMESPACE)
    vectors = await clients.embedder.embed_batch([f.text for f in facts])
    await clients.store.upsert(
        _NAMESPACE, [StoredFact(f, v) for f, v in zip(facts, vectors, strict=True)]
    )
    return sorted(clark.documents.values(), key=lambda d: d.position)


async def _retrieved(clients: Clients, cfg: EditorSettings, doc: ClarkDocument) -> list[str]:
    hits = await clients.store.search(
        _NAMESPACE,
        doc.text,
        await clients.embedder.embed(doc.text),
        as_of=doc.stream_time,
        top_k=cfg.top_k,
        min_similarity=cfg.min_similarity,
        alpha=cfg.alpha,
    )
    return [hit.fact.text for hit in hits]


async def _choose(
    clients: Clients,
    cfg: EditorSettings,
    docs: Sequence[ClarkDocument],
    count: int,
    most: int,
) -> list[tuple[ClarkDocument, list[str]]]:
    """``count`` documents spread over the stream, each with the facts retrieved for it."""
    with_facts = []
    for doc in docs:
        facts = (await _retrieved(clients, cfg, doc))[:most]
        if facts:  # a document without retrieved facts skips classification in both modes
            with_facts.append((doc, facts))
    step = max(1, len(with_facts) // count)
    return with_facts[::step][:count]


def _agree(a: Label, b: Label) -> bool:
    """The same label; v3's outdated and wrong agree with make_false (all make it false)."""
    return a == b or (a in FALSE_LABELS and b in FALSE_LABELS)


def _per_doc(usage: Usage, docs: int, facts: int) -> dict[str, float]:
    return {
        "prompt_tokens_per_doc": round(usage.prompt_tokens / docs, 1),
        "completion_tokens_per_doc": round(usage.completion_tokens / docs, 1),
        "tokens_per_doc": round(usage.total_tokens / docs, 1),
        "tokens_per_fact": round(usage.total_tokens / facts, 1),
    }


async def _classify(
    clients: Clients, chosen: list[tuple[ClarkDocument, list[str]]]
) -> dict[str, Any]:
    usage = {prompt: Usage() for prompt in (*BATCHED, PER_FACT)}
    agree = {prompt: 0 for prompt in BATCHED}
    rows: list[dict[str, int]] = []
    for doc, facts in chosen:
        row = {"facts": len(facts)}
        view = DocumentView(text=doc.text, timestamp=doc.timestamp)
        per_fact = await classify_facts_per_fact(
            clients.runner, view, facts, prompt=PER_FACT, use_cache=False
        )
        usage[PER_FACT] += per_fact.usage
        row[PER_FACT] = per_fact.usage.total_tokens
        for prompt in BATCHED:
            batched = await classify_facts_batched(
                clients.runner, view, facts, prompt=prompt, use_cache=False
            )
            usage[prompt] += batched.usage
            row[prompt] = batched.usage.total_tokens
            pairs = zip(batched.value, per_fact.value, strict=True)
            agree[prompt] += sum(_agree(a, b) for a, b in pairs)
        rows.append(row)
    docs, facts_n = len(chosen), sum(len(f) for _, f in chosen)
    return {
        "prompts": {p: _per_doc(u, docs, facts_n) for p, u in usage.items()},
        "ratios": {
            p: round(usage[p].total_tokens / usage[PER_FACT].total_tokens, 3) for p in BATCHED
        },
        "label_agreement_with_per_fact": {p: round(agree[p] / facts_n, 3) for p in BATCHED},
        "documents": docs,
        "facts": facts_n,
        "facts_per_doc": round(facts_n / docs, 2),
        "per_document": rows,
    }


async def run(base: Settings, size: Size, workdir: Path, data: Path) -> dict[str, Any]:
    """Run the benchmark on the real LM server of ``base``."""
    dep = Deployment(base, workdir / "tokens", stub=False)
    try:
        async with open_clients(dep.settings) as clients:
            docs = await _load_facts(clients, data)
            chosen = await _choose(
                clients, dep.settings.editor, docs, size.token_docs, size.token_max_facts
            )
            result = await _classify(clients, chosen)
    finally:
        await dep.close()
    # The headline is the prompt the editor uses by default.
    ratio = result["ratios"][DEFAULT_CLASSIFY_FACTS]
    return {
        **result,
        "model": base.lm.model,
        "default_prompt": DEFAULT_CLASSIFY_FACTS,
        "ratio": ratio,
        "goal": f"batched/per-fact tokens <= {GOAL}",
        "met": ratio <= GOAL,
    }
