"""ScriptedLM: an LMClient double that replays scripted answers and records every request.

For unit tests only; nothing at run time falls back to it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable

from factstream.lm.base import Completion, CompletionRequest, TokenSink, Usage

__all__ = ["Reply", "ScriptedLM"]

Reply = str | Completion | Exception | Callable[[CompletionRequest], str]


class ScriptedLM:
    """Answers each request with the next scripted reply.

    A reply is a string (the completion text), a Completion (returned as it is: a finish
    reason of its own), an exception (raised), or a function of the request returning the
    text. Usage is counted in whitespace-separated words.

    Args:
        replies: The script, consumed in order; running out raises AssertionError.
        model: The model name reported.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, model: str = "scripted") -> None:
        self._replies: deque[Reply] = deque(replies)
        self._model = model
        self.requests: list[CompletionRequest] = []
        self.closed = False

    @property
    def model(self) -> str:
        return self._model

    def add(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._replies.extend(replies)

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        if not self._replies:
            raise AssertionError(f"ScriptedLM: no reply scripted for {request.prompt}")
        reply = self._replies.popleft()
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, Completion):
            return reply
        text = reply if isinstance(reply, str) else reply(request)
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        return Completion(text, Usage(prompt_words, len(text.split())), self._model, "stop")

    async def stream(self, request: CompletionRequest, on_token: TokenSink) -> Completion:
        """The scripted reply, handed to ``on_token`` a word (with its spacing) at a time."""
        completion = await self.complete(request)
        for piece in re.findall(r"\s*\S+\s*|\s+", completion.text):
            await on_token(piece)
        return completion

    async def aclose(self) -> None:
        self.closed = True
