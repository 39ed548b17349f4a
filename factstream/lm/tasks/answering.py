"""The typed LM tasks of answering a question from facts (ERASE App. A.3)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from factstream.lm.tasks.runner import AttemptSink, TaskResult, TaskRunner
from factstream.prompts import answer, verify_answer
from factstream.prompts.answer import FactWithHistory, QuestionAnswer
from factstream.prompts.registry import typed_prompt

__all__ = [
    "DEFAULT_ANSWER_CHOICE",
    "DEFAULT_ANSWER_FREE",
    "DEFAULT_VERIFY_ANSWER",
    "answer_choice",
    "answer_free",
    "check_answer",
]

DEFAULT_ANSWER_CHOICE = "answer_choice.v1"
DEFAULT_ANSWER_FREE = "answer_free.v1"
DEFAULT_VERIFY_ANSWER = "verify_answer.v1"


async def answer_choice(
    runner: TaskRunner,
    question: str,
    choices: Sequence[str],
    facts: Sequence[FactWithHistory],
    *,
    as_of: datetime | None = None,
    prompt: str = DEFAULT_ANSWER_CHOICE,
    use_cache: bool = True,
    on_token: AttemptSink | None = None,
) -> TaskResult[QuestionAnswer]:
    """Pick one of ``choices`` (verbatim), with brief reasoning.

    Args:
        runner: Runs prompts on the LM.
        question: The question.
        choices: At least two possible answers.
        facts: The facts retrieved for the question, with histories.
        as_of: The time the question is about (None: now).
        prompt: An ``answer_choice`` version.
        use_cache: Whether the response cache may answer.
        on_token: Streams the answer's pieces here (TaskRunner.run).
    """
    spec = typed_prompt(prompt, answer.CHOICE_V1)
    ctx = answer.AnswerChoiceContext(
        question=question, choices=tuple(choices), facts=tuple(facts), as_of=as_of
    )
    return await runner.run(spec, ctx, use_cache=use_cache, on_token=on_token)


async def answer_free(
    runner: TaskRunner,
    question: str,
    facts: Sequence[FactWithHistory],
    *,
    as_of: datetime | None = None,
    prompt: str = DEFAULT_ANSWER_FREE,
    use_cache: bool = True,
    on_token: AttemptSink | None = None,
) -> TaskResult[QuestionAnswer]:
    """A short free-form answer, with brief reasoning."""
    spec = typed_prompt(prompt, answer.FREE_V1)
    ctx = answer.AnswerFreeContext(question=question, facts=tuple(facts), as_of=as_of)
    return await runner.run(spec, ctx, use_cache=use_cache, on_token=on_token)


async def check_answer(
    runner: TaskRunner,
    question: str,
    draft: str,
    facts: Sequence[FactWithHistory],
    *,
    as_of: datetime | None = None,
    prompt: str = DEFAULT_VERIFY_ANSWER,
) -> TaskResult[verify_answer.Verdict]:
    """Whether ``facts`` state ``draft`` as the answer to ``question`` (the self-check)."""
    spec = typed_prompt(prompt, verify_answer.VERIFY_ANSWER_V1)
    ctx = verify_answer.VerifyAnswerContext(
        question=question, answer=draft, facts=tuple(facts), as_of=as_of
    )
    return await runner.run(spec, ctx)
