"""The LM interface every caller sees: one chat completion, with an optional output constraint."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from factstream.prompts.models import Constraint, Message

__all__ = ["Completion", "CompletionRequest", "LMClient", "TokenSink", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Tokens one or more completions took, as the server reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class CompletionRequest:
    """One chat completion to run.

    Attributes:
        messages: The conversation.
        task: Task name, the metric label (bounded set: ``classify_facts`` ...).
        prompt: Prompt id (``classify_facts.v1``), for logs and records.
        constraint: What the output must look like; the backend enforces it server-side.
        max_tokens: Completion budget.
        temperature: Sampling temperature (0 is greedy).
        use_cache: Whether a cached answer may be returned (and this one stored).
    """

    messages: tuple[Message, ...]
    task: str
    prompt: str
    constraint: Constraint | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    use_cache: bool = True


@dataclass(frozen=True)
class Completion:
    """What the server answered."""

    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None
    cached: bool = False


TokenSink = Callable[[str], Awaitable[None]]
"""Receives each piece of a completion's text as the server generates it."""


@runtime_checkable
class LMClient(Protocol):
    """An OpenAI-compatible chat LM (vLLM, llama.cpp's server, or a test double)."""

    @property
    def model(self) -> str:
        """The model name requests are sent with."""
        ...

    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one completion; raises an LMError subclass on failure."""
        ...

    async def stream(self, request: CompletionRequest, on_token: TokenSink) -> Completion:
        """``complete``, handing each piece of the text to ``on_token`` as it is generated.

        The pieces joined are the returned completion's text. A failure after the first
        piece is not retried (the caller has seen part of an answer): it raises LMError.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and background tasks."""
        ...
