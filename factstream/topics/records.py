"""The wire records of docs/design.md section 2: typed, validated, UTF-8 JSON (orjson).

Every record carries ``schema_version``; readers accept the versions they know. Ids that a
replay must reproduce (document ids without a producer id, edit ids, ids of new facts) are
derived deterministically from their inputs.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

import orjson
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)

__all__ = [
    "NAMESPACE_PATTERN",
    "Answer",
    "AnswerFact",
    "BatchRef",
    "DeadLetter",
    "DecidedBy",
    "Document",
    "DocumentKind",
    "EditOp",
    "Fact",
    "FactEdit",
    "HistoryEntry",
    "InputRef",
    "Question",
    "Record",
    "SCHEMA_VERSION",
    "document_id_for",
    "edit_id_for",
    "fact_id_for",
]

SCHEMA_VERSION = 1
# Weaviate tenant names allow [A-Za-z0-9_-], 64 at most; a namespace is one tenant.
NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://factstream.dev/ids")

Namespace = Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)]
NonEmptyText = Annotated[str, StringConstraints(min_length=1)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]
# RFC 3339 section 5.6: a date, "T" (or t, or the space its note allows), a time with
# seconds, and a zone. Numbers are refused: an epoch does not say its unit.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
# What a reader can see: letters, marks, numbers, punctuation, symbols.
_VISIBLE = frozenset("LMNPS")


def _rfc3339(value: object, handler: ValidatorFunctionWrapHandler) -> datetime:
    # pydantic's own errors first (they say what is wrong); then refuse what it would
    # accept but RFC 3339 does not: epochs, times without seconds, week dates.
    parsed: datetime = handler(value)
    if isinstance(value, int | float):
        raise ValueError(f"an RFC 3339 date-time string was expected, got {type(value).__name__}")
    if isinstance(value, str) and not _RFC3339.fullmatch(value):
        raise ValueError(
            f"{value[:40]!r} is not an RFC 3339 date-time with a zone (2024-03-01T12:00:00Z)"
        )
    return parsed


EventTime = Annotated[AwareDatetime, WrapValidator(_rfc3339)]


class Record(BaseModel):
    """Base of every wire record: strict about unknown fields, JSON via orjson."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1

    def to_bytes(self) -> bytes:
        """UTF-8 JSON; ``None`` fields are left out."""
        return orjson.dumps(self.model_dump(mode="json", exclude_none=True))

    @classmethod
    def from_bytes(cls, raw: bytes) -> Self:
        """Parse and validate; raises pydantic.ValidationError or orjson.JSONDecodeError."""
        return cls.model_validate(orjson.loads(raw))


class DocumentKind(StrEnum):
    ARTICLE = "article"
    CONVERSATION = "conversation"


def _id_optional(schema: dict[str, Any]) -> None:
    # Producers may omit the id (a content hash is used): the published schema says so.
    schema["required"] = [name for name in schema.get("required", []) if name != "id"]


class Document(Record):
    """An input event on ``factstream.documents``, keyed by namespace."""

    model_config = ConfigDict(json_schema_extra=_id_optional)

    id: Id = Field(description="Unique per namespace; a content hash when the producer omits it.")
    namespace: Namespace
    kind: DocumentKind
    timestamp: EventTime = Field(description="Event time (RFC 3339 with a zone).")
    text: NonEmptyText
    source: str | None = None
    title: str | None = None
    speaker: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _visible(cls, text: str) -> str:
        if not any(unicodedata.category(c)[0] in _VISIBLE for c in text):
            raise ValueError("has nothing visible (only white space, control or format characters)")
        return text

    @model_validator(mode="before")
    @classmethod
    def _default_id(cls, data: object) -> object:
        # Omitted (or null) only: an id of another type or an empty one is an error.
        if isinstance(data, dict) and data.get("id") is None:
            ns, ts, text = data.get("namespace"), data.get("timestamp"), data.get("text")
            when = _parse_time(ts)
            if isinstance(ns, str) and isinstance(text, str) and when is not None:
                data = {**data, "id": document_id_for(ns, when.isoformat(), text)}
        return data


class EditOp(StrEnum):
    ADD = "add"
    REINFORCE = "reinforce"
    INVALIDATE = "invalidate"
    REWRITE = "rewrite"


class BatchRef(BaseModel):
    """Which document batch an edit belongs to, and where in it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Id
    size: int = Field(ge=1)
    position: int = Field(ge=0)

    @model_validator(mode="after")
    def _position_in_batch(self) -> Self:
        if self.position >= self.size:
            raise ValueError(f"position {self.position} outside a batch of {self.size}")
        return self


class InputRef(BaseModel):
    """Where the document that caused an edit was read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    topic: str
    partition: int = Field(ge=0)
    offset: int = Field(ge=0)


class DecidedBy(BaseModel):
    """The model and prompt version behind an edit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    prompt_version: str


class FactEdit(Record):
    """One edit on the changelog ``factstream.fact-edits``, keyed by fact id."""

    edit_id: Id
    namespace: Namespace
    fact_id: Id
    op: EditOp
    text: NonEmptyText
    previous_text: str | None = None
    replaces: Id | None = None
    replaced_by: Id | None = None
    truth: bool
    event_time: AwareDatetime
    document_id: Id
    batch: BatchRef
    input: InputRef
    decided_by: DecidedBy
    created_at: AwareDatetime

    @model_validator(mode="after")
    def _op_shape(self) -> Self:
        if self.op is EditOp.REWRITE and (self.previous_text is None or self.replaces is None):
            raise ValueError("a rewrite names the fact it replaces and its previous text")
        if self.op is EditOp.INVALIDATE and self.truth:
            raise ValueError("an invalidated fact is false after the edit")
        if self.op in (EditOp.ADD, EditOp.REINFORCE) and not self.truth:
            raise ValueError(f"an edit of op {self.op.value} leaves the fact true")
        return self


class HistoryEntry(BaseModel):
    """One change of a fact's truth, at event time ``ts``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ts: AwareDatetime
    truth: bool
    document_id: Id
    edit_id: Id


class Fact(Record):
    """The latest state of a fact, on the compacted topic ``factstream.facts``."""

    fact_id: Id
    namespace: Namespace
    text: NonEmptyText
    truth: bool
    history: list[HistoryEntry] = Field(min_length=1)
    first_seen: AwareDatetime
    last_changed: AwareDatetime
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    replaces: Id | None = None
    replaced_by: Id | None = None
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    object_type: str | None = None

    @model_validator(mode="after")
    def _history_in_event_time_order(self) -> Self:
        times = [entry.ts for entry in self.history]
        if times != sorted(times):
            raise ValueError("history must be in event-time order")
        return self

    def truth_at(self, when: datetime) -> bool | None:
        """The fact's truth at event time ``when``: the last history entry with ts <= when."""
        known = [entry.truth for entry in self.history if entry.ts <= when]
        return known[-1] if known else None


class Question(Record):
    """A request on ``factstream.questions``, keyed by namespace."""

    id: Id
    namespace: Namespace
    question: NonEmptyText
    as_of: AwareDatetime | None = None
    top_k: int | None = Field(default=None, ge=1, le=100)
    choices: list[NonEmptyText] | None = None


class AnswerFact(BaseModel):
    """A fact as used in an answer's prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact_id: Id
    text: str
    truth: bool
    history: list[HistoryEntry]
    score: float


class Answer(Record):
    """A reply on ``factstream.answers``, keyed by question id."""

    question_id: Id
    namespace: Namespace
    answer: str | None = None
    facts: list[AnswerFact] = Field(default_factory=list)
    model: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    error: str | None = None


class DeadLetter(Record):
    """Input that could not be processed, with the reason and the original bytes."""

    topic: str
    partition: int = Field(ge=0)
    offset: int = Field(ge=0)
    key: str | None = Field(None, description="The original key, base64.")
    value: str = Field(description="The original value bytes, base64.")
    reason: str
    error_type: str
    failed_at: AwareDatetime


def _parse_time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def document_id_for(namespace: str, timestamp: str, text: str) -> str:
    """The id of a document whose producer gave none: a hash of what it says, when and where."""
    digest = hashlib.sha256(f"{namespace}\x1f{timestamp}\x1f{text}".encode()).hexdigest()
    return f"sha256-{digest[:32]}"


def edit_id_for(namespace: str, document_id: str, position: int) -> str:
    """Deterministic edit id: the same document batch always yields the same edit ids."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"edit\x1f{namespace}\x1f{document_id}\x1f{position}"))


def fact_id_for(namespace: str, document_id: str, position: int) -> str:
    """Deterministic id of a fact created by the edit at ``position`` of a document's batch."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"fact\x1f{namespace}\x1f{document_id}\x1f{position}"))
