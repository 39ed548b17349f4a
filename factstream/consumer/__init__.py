"""Reading the changelog downstream (docs/consuming.md).

    from factstream.consumer import ChangelogConsumer

    async with ChangelogConsumer(settings.kafka, group_id="audit") as changelog:
        async for entry in changelog.follow():
            if entry.edit is not None:
                ...  # one fact's edits come in order; for state across facts, see below
            await changelog.commit()  # at least once: after handling

``ChangelogConsumer`` (``reader.py``) reads read_committed, resumes from stored or group
offsets, drops repeated edit ids; ``ChangelogEntry`` (``entries.py``) holds a ``FactEdit``,
a ``Tombstone``, an ``UnknownVersion`` (a newer schema) or a ``Malformed`` record;
``BatchAssembler`` (``batches.py``) turns entries into whole document batches in input order:
what a consumer that keeps state across facts applies (docs/consuming.md has the loop).
"""

from factstream.consumer.batches import BatchAssembler, input_position
from factstream.consumer.entries import (
    KNOWN_VERSIONS,
    ChangelogEntry,
    Malformed,
    Payload,
    Tombstone,
    UnknownVersion,
    decode_payload,
)
from factstream.consumer.reader import ChangelogConsumer, Start

__all__ = [
    "KNOWN_VERSIONS",
    "BatchAssembler",
    "ChangelogConsumer",
    "ChangelogEntry",
    "Malformed",
    "Payload",
    "Start",
    "Tombstone",
    "UnknownVersion",
    "decode_payload",
    "input_position",
]
