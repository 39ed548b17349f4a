"""`eval multihop`: does chain retrieval find each hop's fact of a multi-hop question? No LM.

A generated world's triples (``factstream world generate``) are loaded as facts valid over
their intervals, through the materializer as the live code writes them (``eval temporal``'s
loader), with their structure (subject, relation, object) as extraction ``v2`` gives it;
``--text-only`` loads them without structure (the entity index then reads the names in the
text). Every 2- and 3-hop question has, per answer, its gold decomposition (``chain``: the
triple of each hop). At the time the answer became known, the rule planner reads the
question (``ask.hop_rules``); hop 1 runs from its anchor, hop n from hop n-1's
*gold* entity (so each hop is scored alone), with the hop's relation from the plan; a hop
scores when its gold fact is ranked first (recall@1) or kept (recall@hop_top_k). The chain
as the agent follows it (hop n from hop n-1's retrieved entity) scores when it ends at the
gold answer. Beside it, the query agent's single retrieval (the whole question, top_k):
does it hold the last hop's fact?
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factstream.ask.chain import HopWhere, hop_facts
from factstream.ask.hop_rules import HopPlan, plan_by_rules
from factstream.ask.query import AskRequest, search_facts
from factstream.edit.materializer import Materializer
from factstream.embed.base import Embedder
from factstream.store.base import FactStore
from factstream.temporal.intervals import at
from factstream.topics.records import FactEdit
from factstream_lab.eval.datasets import Clark, load_clark
from factstream_lab.eval.report import write_results
from factstream_lab.eval.temporal import Retrieval, temporal_edits
from factstream_lab.eval.temporal_questions import triple_intervals

__all__ = [
    "ChainCase",
    "GoldHop",
    "HopScore",
    "MultihopReport",
    "evaluate_chains",
    "load_cases",
    "load_world_facts",
    "plot_multihop",
    "run_multihop",
]

_MISSES_KEPT = 20


@dataclass(frozen=True)
class GoldHop:
    """One hop of a gold decomposition: a triple of the world."""

    subject: str
    relation: str
    object: str
    document_id: str


@dataclass(frozen=True)
class ChainCase:
    """A multi-hop question at the time one of its answers became known, and its chain."""

    question: str
    when: datetime
    answer: str
    chain: tuple[GoldHop, ...]
    choices: tuple[str, ...] = ()


def load_cases(path: Path, *, min_hops: int = 2) -> list[ChainCase]:
    """The (question, answer) pairs of questions.jsonl with ``min_hops`` hops or more."""
    cases = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        if int(raw.get("hops", 1)) < min_hops:
            continue
        for answer in raw["answers"]:
            if "chain" not in answer:
                raise ValueError(f"{path}: an answer without its chain (regenerate the world)")
            chain = tuple(GoldHop(**hop) for hop in answer["chain"])
            when = datetime.fromisoformat(answer["known_from"])
            choices = tuple(raw.get("choices", ()))
            cases.append(ChainCase(raw["question"], when, answer["answer"], chain, choices))
    return cases


def _structured(edit: FactEdit, clark: Clark, triple_index: int) -> FactEdit:
    triple = clark.triples[triple_index]
    return FactEdit.model_validate(
        edit.model_dump()
        | {
            "subject": triple.subject,
            "relation": triple.relation,
            "object": triple.object,
            "object_type": "other",
        }
    )


async def load_world_facts(
    store: FactStore, embedder: Embedder, clark: Clark, namespace: str, *, structured: bool
) -> dict[str, int]:
    """Apply the world's triples as ``add`` edits; returns fact id -> triple index."""
    facts, _ = triple_intervals(clark.triples)
    batches, triple_of = temporal_edits(clark, facts, namespace)
    by_edit = {fact_id: index for fact_id, index in triple_of.items()}
    materializer = Materializer(store, embedder)
    for batch in batches:
        if structured:
            batch = [_structured(e, clark, by_edit[e.fact_id]) for e in batch]
        await materializer.apply(batch)
    return triple_of


@dataclass
class HopScore:
    """How one hop position scored over the cases that have it."""

    hop: int
    cases: int = 0
    first: int = 0
    kept: int = 0
    recall_at_1: float = 0.0
    recall_at_k: float = 0.0


@dataclass
class MultihopReport:
    """What ``run_multihop`` measured."""

    data: str
    kb: str  # structured or text-only
    facts: int
    questions: dict[str, int]  # by hops
    cases: int  # (question, answer) pairs
    planned: int  # cases the rule planner read into as many hops as the gold chain
    hop_top_k: int
    retrieval: Retrieval
    hops: list[HopScore]
    by_question_hops: dict[str, list[HopScore]]
    hops_without_index: list[HopScore]  # the same hops searched over every fact
    chain_correct: float  # following the retrieved chain ends at the gold answer
    single_last_hop_in_top_k: float  # the single retrieval holds the last hop's fact
    misses: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    embed_model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "multihop", **asdict(self)}


def _triple_index(clark: Clark) -> dict[tuple[str, str, str, str], int]:
    return {(t.subject, t.relation, t.object, t.document_id): t.index for t in clark.triples}


@dataclass
class _Tally:
    hops: dict[int, HopScore] = field(default_factory=dict)

    def add(self, hop: int, rank: int | None, k: int) -> None:
        score = self.hops.setdefault(hop, HopScore(hop))
        score.cases += 1
        score.first += rank == 1
        score.kept += rank is not None and rank <= k

    def scores(self) -> list[HopScore]:
        for s in self.hops.values():
            s.recall_at_1 = s.first / max(1, s.cases)
            s.recall_at_k = s.kept / max(1, s.cases)
        return [self.hops[h] for h in sorted(self.hops)]


async def evaluate_chains(
    store: FactStore,
    embedder: Embedder,
    clark: Clark,
    cases: Sequence[ChainCase],
    fact_ids: dict[str, int],
    namespace: str,
    retrieval: Retrieval,
    hop_top_k: int,
    tick: Callable[[], None] | None = None,
) -> tuple[_Tally, dict[int, _Tally], dict[str, Any]]:
    """Score every case's hops; returns the tallies (all, by question hops) and counts."""
    triples = _triple_index(clark)
    overall, plain, by_hops = _Tally(), _Tally(), defaultdict[int, _Tally](_Tally)
    counts: dict[str, Any] = {"planned": 0, "chain_correct": 0, "single": 0, "misses": []}
    for case in cases:
        where = HopWhere(namespace, None, at(case.when))
        plan = plan_by_rules(case.question)
        counts["planned"] += plan is not None and plan.hops == len(case.chain)
        for i, gold in enumerate(case.chain):
            entity = plan.anchor if plan is not None and i == 0 else case.chain[i - 1].object
            gold_index = triples[(gold.subject, gold.relation, gold.object, gold.document_id)]
            top = await _hop_ids(store, embedder, where, plan, i, entity, retrieval)
            rank = _rank([fact_ids.get(fact_id, -1) for fact_id in top], gold_index)
            top = await _hop_ids(store, embedder, where, plan, i, entity, retrieval, False)
            plain.add(i + 1, _rank([fact_ids.get(f, -1) for f in top], gold_index), hop_top_k)
            overall.add(i + 1, rank, hop_top_k)
            by_hops[len(case.chain)].add(i + 1, rank, hop_top_k)
            if rank != 1 and len(counts["misses"]) < _MISSES_KEPT:
                counts["misses"].append(
                    {"question": case.question, "hop": i + 1, "entity": entity, "rank": rank}
                )
        counts["chain_correct"] += await _chain_ends_right(
            store, embedder, where, plan, case, retrieval
        )
        counts["single"] += await _single_holds_last_hop(
            store, embedder, namespace, case, fact_ids, triples, retrieval
        )
        if tick is not None:
            tick()
    counts["plain"] = plain
    return overall, dict(by_hops), counts


def _rank(ids: list[int], gold: int) -> int | None:
    return ids.index(gold) + 1 if gold in ids else None


async def _hop_ids(
    store: FactStore,
    embedder: Embedder,
    where: HopWhere,
    plan: HopPlan | None,
    i: int,
    entity: str,
    retrieval: Retrieval,
    by_entity: bool = True,
) -> list[str]:
    """Hop ``i``'s ranked fact ids from ``entity`` (none without a plan for this hop)."""
    if plan is None or i >= plan.hops:
        return []
    relation = plan.relations[i]
    ranked = await hop_facts(
        store, embedder, where, entity, relation, alpha=retrieval.alpha, by_entity=by_entity
    )
    return [h.fact.fact_id for h in ranked]


async def _chain_ends_right(
    store: FactStore,
    embedder: Embedder,
    where: HopWhere,
    plan: HopPlan | None,
    case: ChainCase,
    retrieval: Retrieval,
) -> bool:
    """Following the best fact of each hop from the anchor ends at the gold answer."""
    if plan is None:
        return False
    entity: str | None = plan.anchor
    for relation in plan.relations:
        if entity is None:
            return False
        ranked = await hop_facts(store, embedder, where, entity, relation, alpha=retrieval.alpha)
        entity = ranked[0].leads_to if ranked else None
    return entity == case.answer


async def _single_holds_last_hop(
    store: FactStore,
    embedder: Embedder,
    namespace: str,
    case: ChainCase,
    fact_ids: dict[str, int],
    triples: dict[tuple[str, str, str, str], int],
    retrieval: Retrieval,
) -> bool:
    """The query agent's single retrieval (the whole question) holds the last hop's fact."""
    found = await search_facts(
        store,
        embedder,
        AskRequest(case.question, namespace, valid=at(case.when)),
        top_k=retrieval.top_k,
        min_similarity=retrieval.min_similarity,
        alpha=retrieval.alpha,
    )
    last = case.chain[-1]
    gold = triples[(last.subject, last.relation, last.object, last.document_id)]
    return any(fact_ids.get(f.fact.fact_id) == gold for f in found.facts)


async def run_multihop(
    data_dir: Path,
    store: FactStore,
    embedder: Embedder,
    retrieval: Retrieval,
    hop_top_k: int,
    *,
    structured: bool = True,
    namespace: str | None = None,
    out: Path | None = None,
    tick: Callable[[], None] | None = None,
    embed_model: str | None = None,
) -> MultihopReport:
    """Load the world into a fresh namespace, score every multi-hop case, drop it.

    Args:
        data_dir: a generated world's folder (documents, triples, questions with chains).
        store: the store the live code uses (Weaviate from settings; memory in unit tests).
        embedder: the configured embedder.
        retrieval: the query agent's top_k, floor and alpha (the single retrieval's, and
            the alpha of each hop).
        hop_top_k: facts kept per hop (``FACTSTREAM_API_HOP_TOP_K``).
        structured: load the triples with their structure (else text only).
        namespace: where to load (default ``eval-multihop-<time>``); dropped after.
        out: if given, ``out/multihop.json`` and ``out/multihop.png`` are written.
        tick: called after every case (progress).
        embed_model: the embedding model's name, for the report.
    """
    started = time.perf_counter()
    clark = load_clark(data_dir)
    cases = load_cases(data_dir / "questions.jsonl")
    if not cases:
        raise ValueError(f"{data_dir}: no multi-hop questions")
    namespace = namespace or f"eval-multihop-{datetime.now(UTC):%Y%m%d%H%M%S%f}"
    try:
        fact_ids = await load_world_facts(store, embedder, clark, namespace, structured=structured)
        loaded = time.perf_counter()
        overall, by_hops, counts = await evaluate_chains(
            store, embedder, clark, cases, fact_ids, namespace, retrieval, hop_top_k, tick
        )
    finally:
        await store.drop_namespace(namespace)
    questions = defaultdict[str, int](int)
    for question in {(c.question, len(c.chain)) for c in cases}:
        questions[f"{question[1]}-hop"] += 1
    n = len(cases)
    report = MultihopReport(
        data=str(data_dir),
        kb="structured" if structured else "text-only",
        facts=len(fact_ids),
        questions=dict(sorted(questions.items())),
        cases=n,
        planned=counts["planned"],
        hop_top_k=hop_top_k,
        retrieval=retrieval,
        hops=overall.scores(),
        by_question_hops={f"{h}-hop": t.scores() for h, t in sorted(by_hops.items())},
        hops_without_index=counts["plain"].scores(),
        chain_correct=counts["chain_correct"] / n,
        single_last_hop_in_top_k=counts["single"] / n,
        misses=counts["misses"],
        seconds={
            "load": round(loaded - started, 2),
            "score": round(time.perf_counter() - loaded, 2),
        },
        embed_model=embed_model,
    )
    if out is not None:
        write_results(out, "multihop", report.to_json())
        plot_multihop(report, out / "multihop.png")
    return report


def plot_multihop(report: MultihopReport, path: Path) -> Path:
    """A PNG of recall per hop (@1 and @hop_top_k), the chain's end and the single read."""
    from factstream_lab.eval.report import bar_figure

    labels = [f"hop {s.hop}" for s in report.hops] + ["chain end", "single read"]
    at_1 = [s.recall_at_1 for s in report.hops] + [report.chain_correct, 0.0]
    at_k = [s.recall_at_k for s in report.hops] + [0.0, report.single_last_hop_in_top_k]
    plain = [s.recall_at_1 for s in report.hops_without_index] + [0.0, 0.0]
    title = f"Multi-hop chain retrieval ({report.cases} cases, {report.kb} KB, no LM)"
    series = {
        "recall@1 / chain ends right": at_1,
        f"recall@{report.hop_top_k} / in top_k": at_k,
        "recall@1 without the entity index": plain,
    }
    return bar_figure(path, title, labels, series, goal=0.9)
