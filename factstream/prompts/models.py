"""What a prompt is: messages, the answer's shape (constraint), its response model, its checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from factstream.errors import LMError

__all__ = [
    "Choice",
    "Constraint",
    "ConstraintBroken",
    "DocumentView",
    "JsonSchema",
    "Message",
    "Prompt",
    "PromptFn",
    "QuestionContext",
    "REASONED_ANSWER_JSON",
    "Salvaged",
    "as_data",
    "chat",
    "defuse_control_tokens",
    "question_messages",
    "strict_object",
]

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


@dataclass(frozen=True)
class JsonSchema:
    """The answer must be JSON valid against ``schema``."""

    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Choice:
    """The answer must be exactly one of ``options``."""

    options: tuple[str, ...]


Constraint = JsonSchema | Choice


class ConstraintBroken(LMError):
    """An answer parsed but breaks a rule of its prompt (wrong indices, missing facts ...)."""


class DocumentView(BaseModel):
    """The parts of a document the prompts show the LM."""

    model_config = ConfigDict(frozen=True)

    text: str
    timestamp: datetime
    title: str | None = None
    # A conversation chunk's speakers, in the order they first speak (its text has one
    # "Speaker: text" line per turn); empty for an article.
    speakers: tuple[str, ...] = ()

    @property
    def body(self) -> str:
        """Title (if any) and text, as the prompts show them."""
        return self.text if self.title is None else f"{self.title}\n\n{self.text}"

    @property
    def date(self) -> str:
        """The event date as the prompts write it (YYYY-MM-DD)."""
        return self.timestamp.date().isoformat()

    @property
    def wrapped(self) -> str:
        """The document wrapped as data with its date, as every editing prompt shows it."""
        return as_data("document", self.body, date=self.date)


C = TypeVar("C")
R = TypeVar("R", bound=BaseModel)
PromptFn = Callable[[C], list[Message]]


def _no_check(ctx: Any, value: Any) -> None:
    return None


@dataclass(frozen=True)
class Salvaged(Generic[R]):
    """What of an answer that broke its check is kept, and what was refused.

    Attributes:
        value: The answer without the refused parts.
        refused: One bounded reason label per refused part (``structure``, ``interval``).
    """

    value: R
    refused: tuple[str, ...]


@dataclass(frozen=True)
class Prompt(Generic[C, R]):
    """One version of one prompt: pure functions from a context to what the LM gets.

    Attributes:
        name: Task name, also the metric label (``classify_facts``).
        version: Version tag (``v1``); ``id`` is ``name.version``.
        messages: ``(context) -> list[Message]``.
        response_model: The pydantic model the answer parses into.
        constraint: ``(context) -> Constraint`` the server must enforce; it also bounds the
            completion budget (``factstream.lm.budget``), so every string in a schema has a
            ``maxLength`` and every array a ``maxItems``.
        check: ``(context, parsed)``; raises ConstraintBroken when the answer breaks a rule.
        parse: ``(text) -> response``; default: JSON into ``response_model``.
        salvage: ``(context, parsed) -> Salvaged | None``: after the last attempt, what of an
            answer that parsed but broke ``check`` may be kept (None: nothing, it fails).
        salvage_at_once: Salvage an answer that breaks ``check`` at the first attempt instead
            of asking again (where what is refused is a few fields: a retry costs a whole
            generation and small models rarely fix them); unsalvageable answers are retried.
        answer_chars: ``(context) -> int``: the most characters an answer to this input
            needs, where the input says more than the schema can (a short document states
            little); None: the schema's bound alone sets the budget.
    """

    name: str
    version: str
    messages: Callable[[C], list[Message]]
    response_model: type[R]
    constraint: Callable[[C], Constraint]
    check: Callable[[C, R], None] = field(default=_no_check)
    parse: Callable[[str], R] | None = None
    salvage: Callable[[C, R], Salvaged[R] | None] | None = None
    salvage_at_once: bool = False
    answer_chars: Callable[[C], int] | None = None

    @property
    def id(self) -> str:
        """``name.version``, as recorded on every edit and used by the registry."""
        return f"{self.name}.{self.version}"

    def parse_text(self, text: str) -> R:
        """Parse the raw completion (raises pydantic.ValidationError or ConstraintBroken)."""
        if self.parse is not None:
            return self.parse(text)
        return self.response_model.model_validate_json(text)


# The closing line of the prompts whose answer is brief reasoning, then the answer.
REASONED_ANSWER_JSON = 'Answer with JSON only: {"reasoning": "...", "answer": "..."}.'


def chat(system: str, user: str) -> list[Message]:
    """The two messages of a one-turn prompt: its system text, then the user's."""
    return [Message(role="system", content=system), Message(role="user", content=user)]


def strict_object(name: str, properties: Mapping[str, Any]) -> JsonSchema:
    """A JSON schema for an object with exactly ``properties``, all required, nothing else."""
    return JsonSchema(
        name,
        {
            "type": "object",
            "properties": dict(properties),
            "required": list(properties),
            "additionalProperties": False,
        },
    )


# Spellings that chat templates turn into control tokens: the server renders the messages
# into one prompt and tokenizes it with special tokens on (llama.cpp and vLLM both do), so
# a document containing "<|im_end|><|im_start|>system" would open a real system turn.
# ChatML / Llama 3 / Phi (<|...|>), Llama 2 and Mistral, Gemma.
_CONTROL_TOKENS = re.compile(
    r"<\|[^<>|\s]{1,40}\|>|</?s>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>|<(?:bos|eos|pad)>",
    re.IGNORECASE,
)


def defuse_control_tokens(text: str) -> str:
    """``text`` with every chat-template control token broken by a space (``< |im_end|>``)."""
    return _CONTROL_TOKENS.sub(lambda m: f"{m[0][0]} {m[0][1:]}", text)


def as_data(tag: str, text: str, **attrs: str) -> str:
    """Wrap untrusted text in ``<tag>`` so the LM reads it as data, never as instructions.

    A closing tag inside the text (any case, any spacing) is defused, so the text cannot end
    its own wrapper, and so are chat-template control tokens, so it cannot open a turn.
    """
    closing = re.compile(rf"<(\s*)/(\s*{re.escape(tag)})", re.IGNORECASE)
    defused = closing.sub(r"<\1\\/\2", defuse_control_tokens(text))
    attr = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f"<{tag}{attr}>\n{defused}\n</{tag}>"


class QuestionContext(BaseModel):
    """One question, the whole context of a prompt that plans it (hops, time)."""

    model_config = ConfigDict(frozen=True)

    question: str = Field(min_length=1)


def question_messages(system: str, guide: str, ctx: QuestionContext, reply: str) -> list[Message]:
    """A planning prompt's turns: ``system``, then the guide, the question as data, and the
    JSON shape ``reply`` to answer with."""
    user = f"{guide}\n\n{as_data('question', ctx.question)}\n\nAnswer with JSON only: {reply}."
    return chat(system, user)
