"""Every prompt version by id (``classify_facts.v1``); call sites name prompts by id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from factstream.errors import FactstreamError
from factstream.prompts import (
    answer,
    classify_fact,
    classify_facts,
    extract_facts,
    plan_hops,
    plan_time,
    render_turn,
    rewrite_fact,
    verify_answer,
)
from factstream.prompts.models import Prompt

__all__ = ["PROMPTS", "UnknownPrompt", "get_prompt", "prompt_ids", "typed_prompt"]

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
