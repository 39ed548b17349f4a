"""Multi-hop answering: plan a question into hops and follow them on one snapshot.

The planner reads the question with the rules (``hop_rules``: "the R of the R of E", "E's
R's R"), else with the LM (``plan_hops.v1``). The chain starts at the plan's anchor; each
hop is chain retrieval (``chain.hop_facts``: the entity's facts from the entity index,
ranked by relation) at one ``as_of`` and one valid time for all hops, keeps the best
``hop_top_k`` facts, answers with the entity the best fact leads to, and prunes the kept
facts that lead elsewhere (they do not serve the chain). The next hop is anchored on that
entity. The chain's facts, hop by hop, are the final answer's provenance
(docs/design.md section 6; RAE, TEMPLE-MQA).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from factstream.ask.chain import HopFact, HopWhere, hop_facts
from factstream.ask.hop_rules import HopPlan, hop_question, plan_by_rules
from factstream.embed.base import Embedder
from factstream.errors import LMError
from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts import plan_hops
from factstream.prompts.registry import typed_prompt
from factstream.store.base import FactStore

__all__ = ["DEFAULT_PLAN_HOPS", "Chain", "HopPlanner", "HopResult", "follow_chain"]

DEFAULT_PLAN_HOPS = "plan_hops.v1"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HopResult:
    """One hop: its sub-question, what it looked up, the facts kept, the entity it found.

    ``pruned`` counts the facts ranked for the hop but left out: beyond ``hop_top_k``, or
    leading to another entity than the answer. ``seconds``: the hop's retrieval time.
    """

    question: str
    entity: str
    relation: str
    facts: list[HopFact]
    answer: str | None
    seconds: float
    pruned: int


@dataclass(frozen=True)
class Chain:
    """A followed plan: its hops in order (it stops at a hop that found nothing)."""

    plan: HopPlan
    hops: list[HopResult]

    @property
    def complete(self) -> bool:
        """Every planned hop found an entity."""
        return len(self.hops) == self.plan.hops and self.hops[-1].answer is not None

    def facts(self) -> list[HopFact]:
        """The chain's facts, hop by hop, each once."""
        seen: set[str] = set()
        found = []
        for hop in self.hops:
            for fact in hop.facts:
                if fact.fact.fact_id not in seen:
                    seen.add(fact.fact.fact_id)
                    found.append(fact)
        return found


@dataclass(frozen=True)
class HopPlanner:
    """Plans questions into hops: the rules, else the LM (None: rules only).

    Args:
        runner: runs ``plan_hops`` on the LM; None plans with the rules only.
        max_hops: a longer plan is not followed (one retrieval answers instead).
        prompt: the ``plan_hops`` version.
    """

    runner: TaskRunner | None
    max_hops: int
    prompt: str = DEFAULT_PLAN_HOPS

    async def plan(self, question: str, timings: dict[str, float] | None = None) -> HopPlan | None:
        """The question's plan, or None when neither the rules nor the LM give one."""
        plan = plan_by_rules(question)
        if plan is None and self.runner is not None:
            start = time.perf_counter()
            plan = await self._lm_plan(question)
            if timings is not None:
                timings["plan_hops"] = time.perf_counter() - start
        if plan is not None and plan.hops > self.max_hops:
            # Cut short, the chain would answer another question: not followed at all.
            log.info("a plan of %d hops is over the limit of %d", plan.hops, self.max_hops)
            return None
        return plan

    async def _lm_plan(self, question: str) -> HopPlan | None:
        assert self.runner is not None  # noqa: S101 - checked by the caller
        spec = typed_prompt(self.prompt, plan_hops.PLAN_HOPS_V1)
        try:
            result = await self.runner.run(spec, plan_hops.PlanHopsContext(question=question))
        except LMError as exc:
            log.info("no hop plan from the LM: %s", exc)
            return None
        value = result.value
        relations = tuple(r.strip() for r in value.relations)
        return HopPlan(value.entity.strip(), relations, result.prompt)


async def follow_chain(
    store: FactStore,
    embedder: Embedder,
    where: HopWhere,
    plan: HopPlan,
    *,
    alpha: float,
    hop_top_k: int,
) -> Chain:
    """Follow ``plan`` from its anchor, one hop after the other, all at ``where``."""
    hops: list[HopResult] = []
    entity = plan.anchor
    for relation in plan.relations:
        start = time.perf_counter()
        ranked = await hop_facts(store, embedder, where, entity, relation, alpha=alpha)
        kept = ranked[:hop_top_k]
        answer = kept[0].leads_to if kept else None
        serving = [h for h in kept if h.leads_to == answer]
        seconds = time.perf_counter() - start
        question = hop_question(entity, relation)
        pruned = len(ranked) - len(serving)
        hops.append(HopResult(question, entity, relation, serving, answer, seconds, pruned))
        if answer is None:
            break
        entity = answer
    return Chain(plan, hops)
