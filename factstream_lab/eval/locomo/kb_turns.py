"""The turns knowledge base: each turn a passage, the RAG baseline of the ERASE paper.

One batch of ``add`` edits per session (its turns, in order), applied by the materializer as
the worker's would be, into a namespace of its own: no LM, no editing. A passage's event
time is its session's time; its valid time starts where the turn's own time expression
starts (``told_time``, the reading a fact's valid time starts from: "last month" said on
18 April is from 1 March), else at the session's time, and stays open, so that a question
that names a time ("in March 2023") finds the turn that told of it.

A passage's text may carry the turns said before it (``context``: keywords and embedding
both see them). Apart from that, its vector may be that of a window of turns around it
(``EmbedWindow``): a reply ("They were awestruck and humbled.") is embedded with the turn
it answers ("How did the kids like the military memorial?"), while its text, the one BM25
matches and an answer is drawn from, stays the turn alone, and it cites its own turn only.
"""

from __future__ import annotations

from dataclasses import dataclass

from factstream.edit.ahead import FactVectors
from factstream.edit.materializer import Materializer
from factstream.embed.base import Embedder, Vector
from factstream.temporal import ValidInterval, told_time
from factstream.topics.records import fact_id_for
from factstream_lab.eval.locomo.chunks import turn_passage
from factstream_lab.eval.locomo.data import Conversation, Session
from factstream_lab.eval.temporal import add_edit

__all__ = [
    "DEFAULT_TURN_CONTEXT",
    "EmbedWindow",
    "load_turns",
    "passage_start",
    "passage_text",
    "window_text",
]

DEFAULT_TURN_CONTEXT = 0  # turns said before a passage's own, in it


@dataclass(frozen=True)
class EmbedWindow:
    """The turns of its session, said before and after a passage's own, that its vector is
    computed from (0 and 0: the passage's text alone)."""

    before: int = 0
    after: int = 0

    @property
    def alone(self) -> bool:
        return self.before == 0 and self.after == 0


def passage_start(text: str, session: Session) -> ValidInterval:
    """A passage's valid time: from the start of the time it tells of (else its session's
    time), open."""
    reference = told_time(text, session.time)
    start = reference.interval.start if reference is not None else None
    return ValidInterval(start or session.time, None)


def passage_text(session: Session, position: int, context: int) -> str:
    """The turn at ``position`` as a passage, after the ``context`` turns of its session
    said before it, one line each: a reply ("Yeah, here's one I did last week") is found
    by the question it answers ("What did you paint?"). The passage cites its own turn
    only."""
    return window_text(session, position, EmbedWindow(context, 0))


def window_text(session: Session, position: int, window: EmbedWindow) -> str:
    """The turns of ``session`` from ``window.before`` before ``position`` to
    ``window.after`` after it, one line each."""
    turns = session.turns[max(0, position - window.before) : position + window.after + 1]
    return "\n".join(turn_passage(t) for t in turns)


class _WindowVectors(FactVectors):
    """Vectors known beforehand, by passage text: each the embedding of its window."""

    def __init__(self, embedder: Embedder, vectors: dict[str, Vector]) -> None:
        super().__init__(embedder, [])
        self._vectors = vectors

    async def known(self) -> dict[str, Vector]:
        return dict(self._vectors)


async def _window_vectors(
    embedder: Embedder, session: Session, texts: list[str], window: EmbedWindow
) -> _WindowVectors:
    """Each passage's vector from its window; a text said twice in a session (a bare
    "Thanks!") keeps its first window's."""
    windows = [window_text(session, p, window) for p in range(len(texts))]
    vectors = await embedder.embed_batch(windows)
    by_text: dict[str, Vector] = {}
    for text, vector in zip(texts, vectors, strict=True):
        by_text.setdefault(text, vector)
    return _WindowVectors(embedder, by_text)


async def load_turns(
    materializer: Materializer,
    conversation: Conversation,
    namespace: str,
    context: int = 0,
    window: EmbedWindow | None = None,
) -> dict[str, tuple[str, ...]]:
    """Add every turn of ``conversation`` as a passage (with ``context`` turns before it,
    ``passage_text``; its vector from ``window``'s turns when given); returns each
    passage's turn, by fact id."""
    window = window or EmbedWindow()
    cited: dict[str, tuple[str, ...]] = {}
    for session in conversation.sessions:
        document = f"locomo-{conversation.id}-s{session.number}"
        size = len(session.turns)
        edits = []
        texts = [passage_text(session, p, context) for p in range(size)]
        for position, (turn, text) in enumerate(zip(session.turns, texts, strict=True)):
            interval = passage_start(turn.said, session)
            edits.append(
                add_edit(namespace, document, position, size, text, session.time, interval)
            )
            cited[fact_id_for(namespace, document, position)] = (turn.id,)
        ahead = (
            None
            if window.alone
            else await _window_vectors(materializer.embedder, session, texts, window)
        )
        await materializer.apply(edits, ahead=ahead)
    return cited
