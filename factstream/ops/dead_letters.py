"""Dead letters people can act on: list them, show one, replay them (``factstream dlq``).

A dead letter (``factstream.documents.dlq``) holds an input record the worker could not
edit in, with the reason and the original key and bytes. Replaying sends the original bytes
under the original key to ``factstream.documents`` again, with a header naming the dead
letter (``factstream-replay-of: PARTITION:OFFSET``). It is safe to repeat: the worker skips
a document whose batch is already applied (its id is in the document, or a hash of what it
says, so every replay of it has the same one), so a second replay of a document the first
edited in changes nothing. A record that was bad input is refused again unless what made it
bad (a limit) changed.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import orjson

from factstream.config import KafkaSettings, WorkerSettings
from factstream.errors import BadInput, FactstreamError
from factstream.streams.admin import ensure_topics
from factstream.streams.browse import committed_records, record_at
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.decode import decode_document
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import DeadLetter

__all__ = [
    "REPLAY_HEADER",
    "DeadLetterNotFound",
    "Letter",
    "letter_at",
    "parse_ref",
    "read_letters",
    "replay",
]

REPLAY_HEADER = "factstream-replay-of"
_REF = re.compile(r"(\d+):(\d+)")
_NO_LIMIT = 1 << 62  # decoding a dead letter's document to tell its id, whatever its size


class DeadLetterNotFound(FactstreamError):
    """No dead letter at that position (the ref is PARTITION:OFFSET of the dead-letter topic)."""


@dataclass(frozen=True)
class Letter:
    """One dead letter and where it sits on the dead-letter topic.

    Attributes:
        partition: Its partition on ``factstream.documents.dlq``.
        offset: Its offset there.
        record: The dead letter: where the input was, its bytes, the reason.
    """

    partition: int
    offset: int
    record: DeadLetter

    @property
    def ref(self) -> str:
        """``PARTITION:OFFSET``: how the commands name it."""
        return f"{self.partition}:{self.offset}"

    @cached_property
    def key(self) -> bytes | None:
        """The original record's key (a document's namespace)."""
        return None if self.record.key is None else base64.b64decode(self.record.key)

    @cached_property
    def value(self) -> bytes:
        """The original record's bytes."""
        return base64.b64decode(self.record.value)

    @property
    def namespace(self) -> str | None:
        """The original key as text (a namespace), if it had one."""
        return None if self.key is None else self.key.decode("utf-8", "replace")

    @cached_property
    def document_id(self) -> str | None:
        """The document's id (given, or the content hash the worker gives it); None when
        the record is not a document."""
        try:
            return decode_document(self.key, self.value, max_bytes=_NO_LIMIT).id
        except BadInput:
            pass
        try:
            data = orjson.loads(self.value)
        except orjson.JSONDecodeError:
            return None
        found = data.get("id") if isinstance(data, dict) else None
        return found if isinstance(found, str) else None

    @property
    def cause(self) -> str:
        """The reason in a few words, the same for letters that failed alike: ``LM output
        invalid (extract_facts.v2)``, ``bad input: value is not valid JSON``, or the error's
        type."""
        reason, kind = self.record.reason, self.record.error_type
        if kind == "LMOutputInvalid":
            parts = reason.split(": ")
            return f"LM output invalid ({parts[1]})" if len(parts) > 2 else "LM output invalid"
        if kind == "BadInput":
            return f"bad input: {reason.split(': ')[0][:60]}"
        return kind


def parse_ref(ref: str) -> tuple[int, int]:
    """``PARTITION:OFFSET`` as numbers.

    Raises:
        DeadLetterNotFound: ``ref`` is not of that form.
    """
    match = _REF.fullmatch(ref.strip())
    if match is None:
        raise DeadLetterNotFound(f"{ref!r} is not a dead letter's PARTITION:OFFSET (see dlq list)")
    return int(match[1]), int(match[2])


async def read_letters(
    kafka: KafkaSettings, namespace: str | None = None, cause: str | None = None
) -> list[Letter]:
    """Every dead letter so far (of ``namespace`` only, if given; whose ``cause`` starts
    with ``cause``, if given), partition by partition, oldest first."""
    letters = []
    async for record in committed_records(kafka, TopicName.DOCUMENTS_DLQ):
        letter = Letter(record.partition, record.offset, DeadLetter.from_bytes(record.value))
        if namespace is not None and letter.namespace != namespace:
            continue
        if cause is not None and not letter.cause.startswith(cause):
            continue
        letters.append(letter)
    return letters


async def letter_at(kafka: KafkaSettings, ref: str) -> Letter:
    """The dead letter at ``ref`` (``PARTITION:OFFSET``).

    Raises:
        DeadLetterNotFound: there is none there.
    """
    partition, offset = parse_ref(ref)
    topic = topic_name(TopicName.DOCUMENTS_DLQ, kafka.topic_prefix)
    value = await record_at(kafka, topic, partition, offset)
    if value is None:
        raise DeadLetterNotFound(f"no dead letter at {ref} of {topic}")
    return Letter(partition, offset, DeadLetter.from_bytes(value))


async def replay(kafka: KafkaSettings, worker: WorkerSettings, letters: Iterable[Letter]) -> int:
    """Send each letter's original record to ``factstream.documents`` again, under its
    original key, in the order given, in one transaction; the number sent."""
    records = [
        (letter.key, letter.value, [(REPLAY_HEADER, letter.ref.encode())]) for letter in letters
    ]
    if not records:
        return 0
    await ensure_topics(kafka, worker)
    publisher = ChangelogPublisher(kafka, client_id="factstream-dlq-replay")
    await publisher.start()
    try:
        await publisher.republish_documents(records)
    finally:
        await publisher.stop()
    return len(records)
