"""The typed LM tasks of editing one document: classify, rewrite, extract (ERASE steps 2-4).

Rewrite and extract return :class:`NewFact` whatever the prompt version: v1's plain texts get
the interval their words name (else valid from the document's event time), v2's structured
facts the interval resolved from their time expression, and their structure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from factstream.lm.tasks.facts import NewFact
from factstream.lm.tasks.runner import TaskResult, TaskRunner, merge
from factstream.prompts import classify_fact, classify_facts, extract_facts, rewrite_fact
from factstream.prompts.classify_facts import Label
from factstream.prompts.models import DocumentView
from factstream.prompts.registry import get_prompt, typed_prompt
from factstream.prompts.rewrite_fact import Change

__all__ = [
    "DEFAULT_CLASSIFY_FACT",
    "DEFAULT_CLASSIFY_FACTS",
    "DEFAULT_EXTRACT",
    "DEFAULT_REWRITE",
    "classify_facts_batched",
    "classify_facts_per_fact",
    "extract_new_facts",
    "rewrite_false_fact",
]

DEFAULT_CLASSIFY_FACTS = "classify_facts.v3"
DEFAULT_CLASSIFY_FACT = "classify_fact.v3"
DEFAULT_REWRITE = "rewrite_fact.v2"
DEFAULT_EXTRACT = "extract_facts.v2"


async def classify_facts_batched(
    runner: TaskRunner,
    document: DocumentView,
    facts: Sequence[str],
    *,
    prompt: str = DEFAULT_CLASSIFY_FACTS,
    use_cache: bool = True,
) -> TaskResult[list[Label]]:
    """One call for all facts; labels in the order of ``facts``.

    Args:
        runner: Runs prompts on the LM.
        document: The new document.
        facts: The retrieved facts (non-empty).
        prompt: A ``classify_facts`` version.
        use_cache: Whether the response cache may answer.
    """
    spec = typed_prompt(prompt, classify_facts.V1)
    ctx = classify_facts.ClassifyFactsContext(document=document, facts=tuple(facts))
    result = await runner.run(spec, ctx, use_cache=use_cache)
    labels = classify_facts.labels_in_order(result.value)
    return result.with_value(labels)


async def classify_facts_per_fact(
    runner: TaskRunner,
    document: DocumentView,
    facts: Sequence[str],
    *,
    prompt: str = DEFAULT_CLASSIFY_FACT,
    use_cache: bool = True,
) -> TaskResult[list[Label]]:
    """One call per fact (ERASE's own way), run concurrently within the LM's limit."""
    spec = typed_prompt(prompt, classify_fact.V1)
    results = await asyncio.gather(
        *(
            runner.run(
                spec,
                classify_fact.ClassifyFactContext(document=document, fact=fact),
                use_cache=use_cache,
            )
            for fact in facts
        )
    )
    usage, cached, calls, attempts = merge(list(results))
    labels = [r.value.answer for r in results]
    model = results[0].model if results else runner.lm.model
    return TaskResult(labels, spec.id, model, usage, cached, calls, attempts)


async def rewrite_false_fact(
    runner: TaskRunner,
    document: DocumentView,
    fact: str,
    true_facts: Sequence[str] = (),
    *,
    change: Change | None = None,
    prompt: str = DEFAULT_REWRITE,
    use_cache: bool = True,
) -> TaskResult[NewFact | None]:
    """The fact rewritten to hold as of the document's date, or None if it cannot be.

    Args:
        change: Why the fact is false (v2 prompts say it): ``update`` the world changed,
            ``correction`` it was never true; None not known.
    """
    ctx = rewrite_fact.RewriteFactContext(
        document=document, fact=fact, true_facts=tuple(true_facts), change=change
    )
    if get_prompt(prompt).response_model is rewrite_fact.StructuredRewrite:
        structured = await runner.run(
            typed_prompt(prompt, rewrite_fact.V2), ctx, use_cache=use_cache
        )
        found = structured.value.rewrite
        new = None if found is None else NewFact.from_structured(found, document.timestamp)
        return structured.with_value(new)
    plain = await runner.run(typed_prompt(prompt, rewrite_fact.V1), ctx, use_cache=use_cache)
    text = plain.value.rewrite
    return plain.with_value(None if text is None else NewFact.from_text(text, document.timestamp))


async def extract_new_facts(
    runner: TaskRunner,
    document: DocumentView,
    *,
    max_facts: int = extract_facts.DEFAULT_MAX_FACTS,
    prompt: str = DEFAULT_EXTRACT,
    use_cache: bool = True,
) -> TaskResult[list[NewFact]]:
    """The atomic facts the document states (stripped, duplicate texts removed, in order)."""
    ctx = extract_facts.ExtractFactsContext(document=document, max_facts=max_facts)
    when = document.timestamp
    if get_prompt(prompt).response_model is extract_facts.StructuredFacts:
        structured = await runner.run(
            typed_prompt(prompt, extract_facts.V2), ctx, use_cache=use_cache
        )
        found = [NewFact.from_structured(f, when) for f in structured.value.facts]
        return structured.with_value(_unique(found))
    plain = await runner.run(typed_prompt(prompt, extract_facts.V1), ctx, use_cache=use_cache)
    return plain.with_value(_unique([NewFact.from_text(f, when) for f in plain.value.facts]))


def _unique(facts: list[NewFact]) -> list[NewFact]:
    """The first fact of each text, in order."""
    first: dict[str, NewFact] = {}
    for fact in facts:
        first.setdefault(fact.text, fact)
    return list(first.values())
