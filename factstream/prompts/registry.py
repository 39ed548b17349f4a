"""Every prompt version by id (``classify_facts.v1``); call sites name prompts by id.

Also ``sample_contexts``: contexts for every task, for the checks that render every prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from factstream.errors import FactstreamError
from factstream.prompts import (
    answer,
    classify_fact,
    classify_facts,
    extract_facts,
    judge_answer,
    plan_hops,
    plan_time,
    render_turn,
    rewrite_fact,
    verify_answer,
)
from factstream.prompts.models import DocumentView, Prompt

__all__ = [
    "PROMPTS",
    "UnknownPrompt",
    "get_prompt",
    "prompt_ids",
    "sample_contexts",
    "typed_prompt",
]

C = TypeVar("C")
R = TypeVar("R", bound=BaseModel)


class UnknownPrompt(FactstreamError):
    """No prompt has that id (or it belongs to another task)."""


def _collect(groups: Iterable[Mapping[str, Prompt[Any, Any]]]) -> dict[str, Prompt[Any, Any]]:
    found: dict[str, Prompt[Any, Any]] = {}
    for versions in groups:
        for version, prompt in versions.items():
            if version != prompt.version:
                raise ValueError(f"{prompt.id} is filed under version {version!r}")
            if prompt.id in found:
                raise ValueError(f"two prompts claim the id {prompt.id}")
            found[prompt.id] = prompt
    return found


PROMPTS: Mapping[str, Prompt[Any, Any]] = _collect(
    [
        classify_facts.versions,
        classify_fact.versions,
        rewrite_fact.versions,
        extract_facts.versions,
        answer.versions,
        answer.free_versions,
        plan_time.versions,
        plan_hops.versions,
        verify_answer.versions,
        render_turn.versions,
        judge_answer.versions,
    ]
)


def prompt_ids() -> list[str]:
    """Every registered prompt id, sorted."""
    return sorted(PROMPTS)


def get_prompt(prompt_id: str) -> Prompt[Any, Any]:
    """The prompt with ``prompt_id`` (``name.version``); raises UnknownPrompt."""
    try:
        return PROMPTS[prompt_id]
    except KeyError:
        raise UnknownPrompt(f"no prompt {prompt_id!r}; known: {prompt_ids()}") from None


def typed_prompt(prompt_id: str, like: Prompt[C, R]) -> Prompt[C, R]:
    """The prompt ``prompt_id``, checked to be a version of the same task as ``like``.

    Args:
        prompt_id: The requested id, e.g. ``classify_facts.v2``.
        like: Any version of the task the caller runs; gives the static type.
    """
    prompt = get_prompt(prompt_id)
    if prompt.name != like.name or prompt.response_model is not like.response_model:
        raise UnknownPrompt(f"{prompt_id} is not a version of {like.name}")
    return prompt


def sample_contexts(document: DocumentView, fill: Callable[[str], str]) -> dict[str, list[Any]]:
    """Contexts for every task (by prompt name), each data field filled by ``fill(role)``.

    What renders every prompt uses them: grounding's probe (the prompts' own text is what the
    rendered messages keep once the data is set aside) and the tests that put hostile text in
    every field. Roles: fact, other, true, question, one, two, answer, speaker, listener,
    turn, keep, gold. Where a field changes the text around it, a task comes more than once:
    rewrite_fact per kind of change, render_turn without and with names to keep.
    """
    fact, other = fill("fact"), fill("other")
    shown = (answer.FactWithHistory(text=fact),)
    question = fill("question")
    return {
        "extract_facts": [extract_facts.ExtractFactsContext(document=document)],
        "rewrite_fact": [
            rewrite_fact.RewriteFactContext(
                document=document, fact=fact, true_facts=(fill("true"),), change=change
            )
            for change in (None, "update", "correction")
        ],
        "classify_facts": [
            classify_facts.ClassifyFactsContext(document=document, facts=(fact, other))
        ],
        "classify_fact": [classify_fact.ClassifyFactContext(document=document, fact=fact)],
        "answer_choice": [
            answer.AnswerChoiceContext(
                question=question, facts=shown, choices=(fill("one"), fill("two"))
            )
        ],
        "answer_free": [answer.AnswerFreeContext(question=question, facts=shown)],
        "plan_time": [plan_time.PlanTimeContext(question=question)],
        "plan_hops": [plan_hops.PlanHopsContext(question=question)],
        "verify_answer": [
            verify_answer.VerifyAnswerContext(question=question, answer=fill("answer"), facts=shown)
        ],
        "render_turn": [
            render_turn.RenderTurnContext(
                speaker=fill("speaker"),
                listener=fill("listener"),
                turn=fill("turn"),
                facts=(fact,),
                keep=keep,
            )
            for keep in ((), (fill("keep"),))
        ],
        "judge_answer": [
            judge_answer.JudgeAnswerContext(
                question=question, gold=fill("gold"), answer=fill("answer")
            )
        ],
    }
