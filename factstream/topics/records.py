"""The wire records of docs/design.md section 2: typed, validated, UTF-8 JSON (orjson).

Every record carries ``schema_version``; readers accept the versions they know: a record
whose schema changed declares every version it still reads (``FactEdit``: 1 to 4, where 2
added valid time, the ``close`` op and update-or-correction, 3 ``said_by``, 4 ``turn_ids``;
``Document``: 1 to 3, where 2 added conversation ``turns`` and 3 their ``id``), and writes
the latest. Ids
that a replay must reproduce (document ids without a producer id, edit ids, ids of new
facts) are derived deterministically from their inputs.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import unicodedata
import uuid
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self, get_args

import orjson
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

__all__ = [
    "NAMESPACE_PATTERN",
    "Answer",
    "AnswerFact",
    "AnswerHop",
    "AskMode",
    "BatchRef",
    "ChangeKind",
    "DeadLetter",
    "DecidedBy",
    "Document",
    "DocumentKind",
    "EditOp",
    "Fact",
    "FactEdit",
    "FeedEntryState",
    "HistoryEntry",
    "InputRef",
    "Question",
    "Record",
    "SCHEMA_VERSION",
    "TimePlanNote",
    "ValidTimeSource",
    "Turn",
    "ValidWindow",
    "accepted_versions",
    "document_id_for",
    "edit_id_for",
    "fact_id_for",
    "render_turns",
]

# The version of records whose schema never changed; changed ones declare their own.
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

    # A record whose schema changes redeclares this with every version it reads, the
    # latest as the default (see FactEdit); ``accepted_versions`` reads them back.
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
    # Producers may omit the id (a content hash is used), and a conversation chunk's text
    # (its turns make it): the published schema says so.
    optional = ("id", "text")
    schema["required"] = [name for name in schema.get("required", []) if name not in optional]
    schema["anyOf"] = [{"required": ["text"]}, {"required": ["turns"]}]


def _visible(text: str) -> str:
    if not any(unicodedata.category(c)[0] in _VISIBLE for c in text):
        raise ValueError("has nothing visible (only white space, control or format characters)")
    return text


VisibleText = Annotated[NonEmptyText, AfterValidator(_visible)]
# A turn's id: visible, no white space (it is listed, joined by spaces, where cited).
TurnId = Annotated[str, StringConstraints(pattern=r"^\S{1,64}$")]


def _unique(ids: list[str]) -> list[str]:
    if len(set(ids)) < len(ids):
        raise ValueError("a turn is cited twice")
    return ids


# Cited turns: at least one, each once (none cited: the field is left out).
TurnIds = Annotated[list[TurnId], Field(min_length=1), AfterValidator(_unique)]


class Turn(BaseModel):
    """One turn of a conversation: who speaks, and what they say.

    First person in ``text`` refers to ``speaker``, second person to the addressee (the
    other speakers of the chunk). ``id`` (Document version 3): the producer's id of the
    turn, unique in its document; a turn without one is known by its position (``"1"``
    for the first turn of the document).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    speaker: VisibleText = Field(max_length=200)
    text: VisibleText
    id: TurnId | None = Field(None, description="The producer's id of the turn (D1:3).")


def render_turns(turns: Sequence[Turn]) -> str:
    """A conversation's turns as text: one ``Speaker: text`` line per turn."""
    return "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns)


class Document(Record):
    """An input event on ``factstream.documents``, keyed by namespace.

    Version 2 added ``turns``, a conversation chunk's speakers and what each said (kind
    ``conversation`` only); without ``text``, the text is the turns rendered one
    ``Speaker: text`` line each. Version 3 added each turn's ``id``, which the facts taken
    from it cite (``FactEdit.turn_ids``). Older records still read: their turns are known
    by their positions.
    """

    model_config = ConfigDict(json_schema_extra=_id_optional)

    schema_version: Literal[1, 2, 3] = 3  # type: ignore[assignment]  # widened: reads 1, 2
    id: Id = Field(description="Unique per namespace; a content hash when the producer omits it.")
    namespace: Namespace
    kind: DocumentKind
    timestamp: EventTime = Field(description="Event time (RFC 3339 with a zone).")
    text: VisibleText = Field(description="The text; a conversation chunk's turns when omitted.")
    source: str | None = None
    title: str | None = None
    speaker: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    turns: list[Turn] | None = Field(
        None, min_length=1, description="A conversation chunk's turns, in the order said."
    )

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        # A chunk with turns and no text: the text is the turns (omitted or null only).
        turns = data.get("turns")
        if data.get("text") is None and isinstance(turns, list) and turns:
            # Bad turns: their own errors are reported where they are validated.
            with contextlib.suppress(ValueError):
                data = {**data, "text": render_turns([Turn.model_validate(t) for t in turns])}
        # The id: omitted (or null) only; an id of another type or an empty one is an error.
        if data.get("id") is None:
            ns, ts, text = data.get("namespace"), data.get("timestamp"), data.get("text")
            when = _parse_time(ts)
            if isinstance(ns, str) and isinstance(text, str) and when is not None:
                data = {**data, "id": document_id_for(ns, when.isoformat(), text)}
        return data

    @model_validator(mode="after")
    def _turns_shape(self) -> Self:
        if self.turns is not None:
            if self.schema_version < 2:
                raise ValueError("turns need schema version 2")
            if self.kind is not DocumentKind.CONVERSATION:
                raise ValueError("only a conversation carries turns")
            if self.schema_version < 3 and any(turn.id is not None for turn in self.turns):
                raise ValueError("turn ids need schema version 3")
            ids = self.turn_ids
            if len(set(ids)) < len(ids):
                twice = sorted({i for i in ids if ids.count(i) > 1})
                raise ValueError(f"turn ids must be unique in a document: {' '.join(twice)}")
        return self

    @property
    def turn_ids(self) -> list[str]:
        """Each turn's id, in the order said: its own, else its position (``"1"`` first)."""
        turns = self.turns or ()
        return [turn.id or str(n) for n, turn in enumerate(turns, 1)]

    @property
    def speakers(self) -> list[str]:
        """The chunk's speakers, each once, in the order they first speak."""
        return list(dict.fromkeys(turn.speaker for turn in self.turns or ()))


class EditOp(StrEnum):
    """What an edit does to its fact.

    ``close``: the world changed; the fact stays true of its valid interval, which now ends
    at the edit's ``valid_to`` (its truth is unchanged).
    """

    ADD = "add"
    REINFORCE = "reinforce"
    INVALIDATE = "invalidate"
    REWRITE = "rewrite"
    CLOSE = "close"


class ChangeKind(StrEnum):
    """Why an invalidate, rewrite or close happened.

    ``update``: the world changed (a new CEO); the old fact held until then, so its valid
    interval is closed and it stays true of it. ``correction``: the old fact was never true;
    it is made false. An edit without one behaves as a correction (as before valid time).
    """

    UPDATE = "update"
    CORRECTION = "correction"


# Which ops may say which kind of change (None: not said).
_CHANGES: dict[EditOp, tuple[ChangeKind | None, ...]] = {
    EditOp.ADD: (None,),
    EditOp.REINFORCE: (None,),
    EditOp.INVALIDATE: (None, ChangeKind.CORRECTION),
    EditOp.REWRITE: (None, ChangeKind.CORRECTION, ChangeKind.UPDATE),
    EditOp.CLOSE: (None, ChangeKind.UPDATE),
}


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
    """One edit on the changelog ``factstream.fact-edits``, keyed by fact id.

    Version 2 added ``valid_from``/``valid_to`` (when the added or rewritten fact holds in
    the world; a close's ``valid_to`` ends its fact's interval), ``change`` and the ``close``
    op, and the structured ``subject``/``relation``/``object``/``object_type`` of an added or
    rewritten fact (all four or none, where extraction could tell). Version 3 added
    ``said_by``: for a fact added or rewritten from a conversation, the speaker who said
    it. Version 4 added ``turn_ids``: the ids of the turns of that conversation
    (``document_id``) the fact was said in, in the order said. Older records still read,
    and cannot carry what came later.
    """

    # Widened from the base's Literal[1]: a reader of version 4 reads 1 to 3 too.
    schema_version: Literal[1, 2, 3, 4] = 4  # type: ignore[assignment]
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
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    change: ChangeKind | None = None
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    object_type: str | None = None
    said_by: str | None = Field(
        None, min_length=1, description="Who said it: the speaker of a conversation's fact."
    )
    turn_ids: TurnIds | None = Field(
        None, description="The turns of the document the fact was said in, in the order said."
    )

    @model_validator(mode="after")
    def _op_shape(self) -> Self:
        if self.op is EditOp.REWRITE and (self.previous_text is None or self.replaces is None):
            raise ValueError("a rewrite names the fact it replaces and its previous text")
        if self.op is EditOp.INVALIDATE and self.truth:
            raise ValueError("an invalidated fact is false after the edit")
        if self.op in (EditOp.ADD, EditOp.REINFORCE, EditOp.CLOSE) and not self.truth:
            raise ValueError(f"an edit of op {self.op.value} leaves the fact true")
        if self.said_by is not None:
            if self.schema_version < 3:
                raise ValueError("said_by needs schema version 3")
            if self.op not in (EditOp.ADD, EditOp.REWRITE):
                raise ValueError(f"an edit of op {self.op.value} says no speaker")
        if self.turn_ids is not None:
            if self.schema_version < 4:
                raise ValueError("turn_ids need schema version 4")
            if self.op not in (EditOp.ADD, EditOp.REWRITE):
                raise ValueError(f"an edit of op {self.op.value} cites no turns")
        return self

    @model_validator(mode="after")
    def _valid_time_shape(self) -> Self:
        v2 = self.op is EditOp.CLOSE or self.change is not None
        if self.schema_version < 2 and (v2 or self.valid_from or self.valid_to):
            raise ValueError("valid time, change and the close op need schema version 2")
        if self.change not in _CHANGES[self.op]:
            raise ValueError(f"an edit of op {self.op.value} cannot be a {self.change}")
        if self.op is EditOp.CLOSE and (self.valid_to is None or self.valid_from is not None):
            raise ValueError("a close sets valid_to (when the fact stopped holding), only that")
        if self.op in (EditOp.REINFORCE, EditOp.INVALIDATE) and (self.valid_from or self.valid_to):
            raise ValueError(f"an edit of op {self.op.value} sets no valid time")
        _check_order(self.valid_from, self.valid_to)
        return self

    @model_validator(mode="after")
    def _structure_shape(self) -> Self:
        parts = (self.subject, self.relation, self.object, self.object_type)
        if all(part is None for part in parts):
            return self
        if self.schema_version < 2:
            raise ValueError("a structured fact needs schema version 2")
        if any(not part for part in parts):
            raise ValueError("subject, relation, object and object_type come together")
        if self.op not in (EditOp.ADD, EditOp.REWRITE):
            raise ValueError(f"an edit of op {self.op.value} carries no structure")
        return self


class HistoryEntry(BaseModel):
    """One change of a fact's truth, at event time ``ts``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ts: AwareDatetime
    truth: bool
    document_id: Id
    edit_id: Id


class Fact(Record):
    """The latest state of a fact, on the compacted topic ``factstream.facts``.

    ``[valid_from, valid_to)`` is when the fact held in the world (neither end: valid from
    ``first_seen``). Version 2 added ``closed_at``: the event time of the world change that
    set ``valid_to`` (a close, or a rewrite that is an update); a read as of an earlier time
    did not know that end yet and sees the interval open. Version 3 added ``turn_ids``: the
    turns of the conversation it was said in (its first history entry's document), as its
    add or rewrite cited them.
    """

    schema_version: Literal[1, 2, 3] = 3  # type: ignore[assignment]  # widened: reads 1, 2
    fact_id: Id
    namespace: Namespace
    text: NonEmptyText
    truth: bool
    history: list[HistoryEntry] = Field(min_length=1)
    first_seen: AwareDatetime
    last_changed: AwareDatetime
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    closed_at: AwareDatetime | None = None
    replaces: Id | None = None
    replaced_by: Id | None = None
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    object_type: str | None = None
    turn_ids: TurnIds | None = Field(
        None, description="The turns of its first document it was said in, in the order said."
    )

    @model_validator(mode="after")
    def _history_in_event_time_order(self) -> Self:
        times = [entry.ts for entry in self.history]
        if times != sorted(times):
            raise ValueError("history must be in event-time order")
        _check_order(self.valid_from, self.valid_to)
        if self.closed_at is not None and (self.valid_to is None or self.schema_version < 2):
            raise ValueError("closed_at says when valid_to was set: it needs one, and version 2")
        if self.turn_ids is not None and self.schema_version < 3:
            raise ValueError("turn_ids need schema version 3")
        return self

    def truth_at(self, when: datetime) -> bool | None:
        """The fact's truth at event time ``when``: the last history entry with ts <= when."""
        known = [entry.truth for entry in self.history if entry.ts <= when]
        return known[-1] if known else None


class ValidWindow(BaseModel):
    """A valid-time interval on the wire: ``[start, end)``, a missing end open."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: AwareDatetime | None = None
    end: AwareDatetime | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise ValueError(f"start {self.start} is not before end {self.end}")
        return self


AskMode = Literal["single", "multi_hop", "auto"]


class Question(Record):
    """A request on ``factstream.questions``, keyed by namespace.

    ``as_of`` asks what the knowledge base believed then; ``valid_at`` or ``valid_between``
    (version 2) what held in the world then, overriding a time the question itself names.
    Version 3 added ``mode`` (single, multi_hop or auto; None: the configured default).
    """

    schema_version: Literal[1, 2, 3] = 3  # type: ignore[assignment]  # widened: reads 1, 2
    id: Id
    namespace: Namespace
    question: NonEmptyText
    as_of: AwareDatetime | None = None
    top_k: int | None = Field(default=None, ge=1, le=100)
    choices: list[NonEmptyText] | None = None
    valid_at: AwareDatetime | None = None
    valid_between: ValidWindow | None = None
    mode: AskMode | None = None

    @model_validator(mode="after")
    def _one_valid_time(self) -> Self:
        if self.valid_at is not None and self.valid_between is not None:
            raise ValueError("give valid_at or valid_between, not both")
        if self.schema_version < 2 and (self.valid_at or self.valid_between):
            raise ValueError("valid_at and valid_between need schema version 2")
        if self.schema_version < 3 and self.mode is not None:
            raise ValueError("mode needs schema version 3")
        return self


class AnswerFact(BaseModel):
    """A fact as used in an answer's prompt, with when it held (if known)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact_id: Id
    text: str
    truth: bool
    history: list[HistoryEntry]
    score: float
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    turn_ids: TurnIds | None = Field(
        None, description="The turns of its first document it was said in (Answer version 5)."
    )


class ValidTimeSource(StrEnum):
    """Where the valid-time filter of a read came from.

    ``request``: the request's valid_at / valid_between; ``question``: a time the question
    names, read by the rules; ``plan``: planned by the LM from an event the question names,
    anchored on that event's fact's stored interval; ``current``: what still holds at as_of
    (or now), the default; ``none``: no valid-time filter.
    """

    REQUEST = "request"
    QUESTION = "question"
    PLAN = "plan"
    CURRENT = "current"
    NONE = "none"


class TimePlanNote(BaseModel):
    """What the LM's time plan of a question did (``ask/time_plan.py``).

    ``outcome``: ``anchored`` and ``past`` gave the valid time (source ``plan``); the others
    (``no_scope``, ``no_anchor``, ``unbounded``, ``invalid``, ``lm_error``) left the rules'
    result in place, and ``reason`` says why.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: str
    scope: str | None = None
    event: str | None = None
    anchor_fact_id: Id | None = None
    anchor_text: str | None = None
    reason: str | None = None


class AnswerHop(BaseModel):
    """One hop of a multi-hop answer: its sub-question, the facts kept, what it found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    entity: str = Field(description="The entity the hop looked facts up by.")
    relation: str
    facts: list[AnswerFact]
    answer: str | None = Field(description="The entity the hop's best fact leads to.")
    seconds: float = Field(ge=0)
    pruned: int = Field(ge=0, description="Facts ranked for the hop and left out.")


class Answer(Record):
    """A reply on ``factstream.answers``, keyed by question id.

    Version 2 added ``valid_time`` (the valid-time filter the facts were retrieved with) and
    ``time_expression`` (the question's words it was read from; None when the request gave
    it), and the facts' valid intervals. Version 3 added ``valid_time_source`` (where the
    filter came from) and ``time_plan`` (what the LM's plan of the question's time did).
    Version 4 added ``mode`` (how it was answered), ``hops`` (a multi-hop answer's chain),
    ``rounds`` (retrieval rounds: 2 when the self-check sent it back) and ``confidence``.
    Version 5 added the facts' ``turn_ids`` (the conversation turns they were said in).
    """

    schema_version: Literal[1, 2, 3, 4, 5] = 5  # type: ignore[assignment]  # widened: reads 1-4
    question_id: Id
    namespace: Namespace
    answer: str | None = None
    facts: list[AnswerFact] = Field(default_factory=list)
    model: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    error: str | None = None
    valid_time: ValidWindow | None = None
    time_expression: str | None = None
    valid_time_source: ValidTimeSource | None = None
    time_plan: TimePlanNote | None = None
    mode: Literal["single", "multi_hop"] | None = None
    hops: list[AnswerHop] | None = None
    rounds: int | None = Field(None, ge=1)
    confidence: float | None = Field(None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _versioned_fields(self) -> Self:
        hop_facts = [fact for hop in self.hops or () for fact in hop.facts]
        if self.schema_version < 5 and any(f.turn_ids for f in [*self.facts, *hop_facts]):
            raise ValueError("the facts' turn_ids need schema version 5")
        v4 = self.mode is not None or self.hops or self.rounds is not None
        if self.schema_version < 4 and (v4 or self.confidence is not None):
            raise ValueError("mode, hops, rounds and confidence need schema version 4")
        if self.schema_version < 3 and (self.valid_time_source or self.time_plan):
            raise ValueError("valid_time_source and time_plan need schema version 3")
        if self.schema_version < 2 and (self.valid_time or self.time_expression):
            raise ValueError("valid_time and time_expression need schema version 2")
        return self


class FeedEntryState(Record):
    """The latest published version of one feed entry.

    Written in the same Kafka transaction as the Document it describes, so the two are
    committed together or not at all.
    """

    namespace: Namespace
    entry_id: Id = Field(description="Stable id of the entry (hash of feed url and guid/link).")
    feed_url: str
    content_hash: str = Field(description="sha256 of the entry's title, text and link.")
    version: int = Field(ge=1, description="1 for the first publication, +1 per content change.")
    document_id: Id
    published_at: AwareDatetime


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


def _check_order(valid_from: datetime | None, valid_to: datetime | None) -> None:
    if valid_from is not None and valid_to is not None and valid_from >= valid_to:
        raise ValueError(f"valid_from {valid_from} is not before valid_to {valid_to}")


def accepted_versions(model: type[Record]) -> tuple[int, ...]:
    """The schema versions a reader of ``model`` accepts (its ``schema_version`` Literal)."""
    versions: tuple[int, ...] = get_args(model.model_fields["schema_version"].annotation)
    return versions


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
