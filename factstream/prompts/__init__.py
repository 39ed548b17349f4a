"""Prompts as code: one module per task, explicit versions, a registry by ``name.version``."""

from factstream.prompts.models import (
    Choice,
    Constraint,
    ConstraintBroken,
    DocumentView,
    JsonSchema,
    Message,
    Prompt,
)
from factstream.prompts.registry import PROMPTS, UnknownPrompt, get_prompt, prompt_ids

__all__ = [
    "PROMPTS",
    "Choice",
    "Constraint",
    "ConstraintBroken",
    "DocumentView",
    "JsonSchema",
    "Message",
    "Prompt",
    "UnknownPrompt",
    "get_prompt",
    "prompt_ids",
]
