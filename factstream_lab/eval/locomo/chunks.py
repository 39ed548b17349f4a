"""A LoCoMo conversation as a user would publish it: conversation documents, chunk by chunk.

Each session is cut into chunks of ``turns_per_chunk`` consecutive turns; a chunk is one
``conversation`` document (docs/world.md) with the speakers as named, the session's date
and time as its timestamp, a shared photo as its caption, and each turn's id (its
``dia_id``). The chunks go to one namespace, in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from factstream.topics.records import Document
from factstream.topics.records import Turn as DocumentTurn
from factstream_lab.eval.locomo.data import Conversation, Session, Turn

__all__ = ["Chunk", "chunks", "conversation_documents", "turn_passage"]

DEFAULT_TURNS_PER_CHUNK = 8


@dataclass(frozen=True)
class Chunk:
    """``turns`` of ``session``, the ``index``-th chunk (from 1) of ``of`` in it."""

    session: Session
    turns: tuple[Turn, ...]
    index: int
    of: int

    def document_id(self, conversation: str) -> str:
        return f"locomo-{conversation}-s{self.session.number}-c{self.index}"


def chunks(session: Session, turns_per_chunk: int) -> Iterator[Chunk]:
    """The session's turns cut into consecutive chunks of at most ``turns_per_chunk``."""
    if turns_per_chunk < 1:
        raise ValueError(f"a chunk holds at least one turn, not {turns_per_chunk}")
    turns = session.turns
    count = -(-len(turns) // turns_per_chunk)
    for index in range(count):
        part = turns[index * turns_per_chunk : (index + 1) * turns_per_chunk]
        yield Chunk(session, part, index + 1, count)


def conversation_documents(
    conversation: Conversation, namespace: str, turns_per_chunk: int = DEFAULT_TURNS_PER_CHUNK
) -> list[tuple[Document, tuple[str, ...]]]:
    """The conversation's documents in order, each with the ids of the turns it holds."""
    found = []
    for session in conversation.sessions:
        for chunk in chunks(session, turns_per_chunk):
            # No text: a conversation chunk's text is its turns, one 'Speaker: text' line each.
            document = Document.model_validate(
                {
                    "id": chunk.document_id(conversation.id),
                    "namespace": namespace,
                    "kind": "conversation",
                    "timestamp": session.time,
                    "turns": [_document_turn(t) for t in chunk.turns],
                    "metadata": {
                        "conversation": f"locomo-{conversation.id}",
                        "session": str(session.number),
                        "chunk": f"{chunk.index}/{chunk.of}",
                    },
                }
            )
            found.append((document, tuple(t.id for t in chunk.turns)))
    return found


def _document_turn(turn: Turn) -> DocumentTurn:
    return DocumentTurn(speaker=turn.speaker, text=turn.said, id=turn.id)


def turn_passage(turn: Turn) -> str:
    """A turn as a passage of the turns knowledge base: 'Speaker: what they said'."""
    return f"{turn.speaker}: {turn.said}"
