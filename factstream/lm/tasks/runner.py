"""Run a prompt on an LM and return a validated, typed result, or raise; never guess.

An answer that does not parse, or breaks its prompt's check, is sent back to the LM with the
reason, a bounded number of times; then the prompt may salvage the last answer (keep it
without the parts its check refuses, counted), else LMOutputInvalid is raised. A prompt that
salvages at once keeps a salvageable answer at the first attempt instead of asking again.

One defect is repaired instead of asked about: raw control characters inside the answer's
JSON strings are escaped (``factstream.lm.repair``). Each call's ``max_tokens`` comes from the
prompt's constraint and input (``factstream.lm.budget``); an answer cut off at it is asked
again with a larger one. Invalid answers are counted by task and kind
(``factstream_lm_invalid_outputs``), repairs by task (``factstream_lm_repaired``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from factstream.config import LMSettings
from factstream.errors import LMOutputInvalid
from factstream.lm.base import Completion, CompletionRequest, LMClient, Usage
from factstream.lm.budget import first_budget, longest_constrained, retry_budget
from factstream.lm.repair import escape_control_characters
from factstream.metrics import LMMetrics
from factstream.prompts.models import ConstraintBroken, Message, Prompt

__all__ = ["AttemptSink", "TaskResult", "TaskRunner", "build_task_runner", "merge"]

log = logging.getLogger(__name__)

C = TypeVar("C")
R = TypeVar("R", bound=BaseModel)
T = TypeVar("T")
U = TypeVar("U")


AttemptSink = Callable[[int, str], Awaitable[None]]
"""Receives (attempt, piece) for each piece of text streamed; attempt counts from 1."""


@dataclass(frozen=True)
class TaskResult(Generic[T]):
    """A task's value and what it cost.

    Attributes:
        value: The validated result.
        prompt: The prompt id that produced it (``classify_facts.v1``).
        model: The model that answered.
        usage: Tokens the server spent now (cached answers cost nothing).
        cached_usage: Tokens of the answers served from the cache, as first spent.
        calls: LM calls made (including retries and cache hits).
        attempts: The most attempts any one call needed (1 when the first answer was valid).
    """

    value: T
    prompt: str
    model: str
    usage: Usage
    cached_usage: Usage = Usage()
    calls: int = 1
    attempts: int = 1

    def with_value(self, value: U) -> TaskResult[U]:
        """The same accounting around another value (a projection of this one)."""
        return TaskResult(
            value,
            self.prompt,
            self.model,
            self.usage,
            self.cached_usage,
            self.calls,
            self.attempts,
        )


@dataclass(frozen=True)
class TaskRunner:
    """Runs prompts on one LM with bounded output retries.

    Args:
        lm: The LM client (usually wrapped by CachingLM).
        metrics: Where to count invalid outputs; None counts nothing.
        attempts: Tries per call before LMOutputInvalid.
        temperature: Sampling temperature of every call.
    """

    lm: LMClient
    metrics: LMMetrics | None = None
    attempts: int = 3
    temperature: float = 0.0

    async def run(
        self,
        prompt: Prompt[C, R],
        ctx: C,
        *,
        use_cache: bool = True,
        on_token: AttemptSink | None = None,
    ) -> TaskResult[R]:
        """Ask ``prompt`` about ``ctx`` until the answer parses and passes its check.

        With ``on_token`` each answer is streamed: its pieces go there with the attempt's
        number (a later attempt replaces what an invalid one showed).

        Raises:
            LMOutputInvalid: Every attempt was invalid.
            LMError: The server failed (after its own retries).
        """
        messages = list(prompt.messages(ctx))
        constraint = prompt.constraint(ctx)
        longest = longest_constrained(constraint)
        own = None if prompt.answer_chars is None else prompt.answer_chars(ctx)
        max_tokens = first_budget(longest, own)
        usage, cached = Usage(), Usage()
        reason, text, broken = "", "", None
        for attempt in range(1, self.attempts + 1):
            request = CompletionRequest(
                messages=tuple(messages),
                task=prompt.name,
                prompt=prompt.id,
                constraint=constraint,
                max_tokens=max_tokens,
                temperature=self.temperature,
                use_cache=use_cache,
            )
            completion = await self._send(request, attempt, on_token)
            usage, cached = _account(completion, usage, cached)
            text, broken = completion.text, None  # broken: parsed, but breaks the check
            try:
                value = broken = self._parse(prompt, text)
                prompt.check(ctx, value)
            except (ValidationError, ConstraintBroken) as exc:
                kept = self._salvage(prompt, ctx, broken) if prompt.salvage_at_once else None
                if kept is not None:
                    return TaskResult(
                        kept, prompt.id, completion.model, usage, cached, attempt, attempt
                    )
                reason, kind = _reason(exc, completion), _kind(exc, completion)
                log.info("%s attempt %d: invalid output (%s)", prompt.id, attempt, reason)
                self._count_invalid(prompt.name, kind)
                if kind == "cut_off":  # the next answer may run longer (factstream.lm.budget)
                    max_tokens = retry_budget(max_tokens, longest)
                messages += [
                    Message(role="assistant", content=text),
                    Message(role="user", content=f"That answer is invalid: {reason}. Try again."),
                ]
                continue
            return TaskResult(value, prompt.id, completion.model, usage, cached, attempt, attempt)
        kept = self._salvage(prompt, ctx, broken)
        if kept is not None:
            n = self.attempts
            return TaskResult(kept, prompt.id, completion.model, usage, cached, n, n)
        raise LMOutputInvalid(prompt.id, self.attempts, reason, text)

    def _parse(self, prompt: Prompt[C, R], text: str) -> R:
        """The answer parsed; one with raw control characters in its strings is parsed with
        them escaped (``factstream.lm.repair``), and counted, before it is asked again."""
        try:
            return prompt.parse_text(text)
        except ValidationError as exc:
            repaired = escape_control_characters(text) if _not_json(exc) else None
            if repaired is None:
                raise
            value = prompt.parse_text(repaired)  # another defect: that error, retried
            log.info("%s: escaped raw control characters in the answer's strings", prompt.id)
            if self.metrics is not None:
                self.metrics.repaired.labels(prompt.name, self.lm.model, "control_characters").inc()
            return value

    async def _send(
        self, request: CompletionRequest, attempt: int, on_token: AttemptSink | None
    ) -> Completion:
        if on_token is None:
            return await self.lm.complete(request)

        async def piece(text: str) -> None:
            await on_token(attempt, text)

        return await self.lm.stream(request, piece)

    def _salvage(self, prompt: Prompt[C, R], ctx: C, broken: R | None) -> R | None:
        """What the prompt keeps of the last answer, which parsed but broke its check."""
        if broken is None or prompt.salvage is None:
            return None
        salvaged = prompt.salvage(ctx, broken)
        if salvaged is None:
            return None
        log.info("%s: kept the last answer without %s", prompt.id, ", ".join(salvaged.refused))
        if self.metrics is not None:
            for reason in salvaged.refused:
                self.metrics.refused.labels(prompt.name, self.lm.model, reason).inc()
        return salvaged.value

    def _count_invalid(self, task: str, kind: str) -> None:
        if self.metrics is not None:
            self.metrics.invalid_outputs.labels(task, self.lm.model, kind).inc()
            self.metrics.retries.labels(task, self.lm.model, "invalid_output").inc()
            self.metrics.requests.labels(task, self.lm.model, "invalid_output").inc()


def _account(completion: Completion, usage: Usage, cached: Usage) -> tuple[Usage, Usage]:
    if completion.cached:
        return usage, cached + completion.usage
    return usage + completion.usage, cached


def _not_json(exc: ValidationError) -> bool:
    return any(error["type"] == "json_invalid" for error in exc.errors())


def _kind(exc: Exception, completion: Completion) -> str:
    """Why an answer is invalid, as a metric label: cut_off, json, schema or check."""
    if completion.finish_reason == "length":
        return "cut_off"
    if isinstance(exc, ValidationError):
        return "json" if _not_json(exc) else "schema"
    return "check"


def _reason(exc: Exception, completion: Completion) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        reason = f"{where}: {first.get('msg', 'invalid')}"
    else:
        reason = str(exc)
    if completion.finish_reason == "length":
        reason += " (the answer was cut off at the token limit)"
    return reason[:300]


def merge(results: list[TaskResult[T]]) -> tuple[Usage, Usage, int, int]:
    """Sum usage, cached usage and calls of several results; the most attempts of any."""
    usage, cached, calls, attempts = Usage(), Usage(), 0, 0
    for r in results:
        usage, cached = usage + r.usage, cached + r.cached_usage
        calls, attempts = calls + r.calls, max(attempts, r.attempts)
    return usage, cached, calls, attempts


def build_task_runner(lm_settings: LMSettings, lm: LMClient, metrics: LMMetrics) -> TaskRunner:
    """A TaskRunner with the output-retry budget and temperature of the settings."""
    return TaskRunner(
        lm, metrics, attempts=lm_settings.output_attempts, temperature=lm_settings.temperature
    )
