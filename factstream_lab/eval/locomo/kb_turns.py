"""The turns knowledge base: each turn a passage, the RAG baseline of the ERASE paper.

One batch of ``add`` edits per session (its turns, in order), applied by the materializer as
the worker's would be, into a namespace of its own: no LM, no editing. A passage's event
time is its session's time; its valid time starts where the turn's own time expression
starts (``told_time``, the reading a fact's valid time starts from: "last month" said on
18 April is from 1 March), else at the session's time, and stays open, so that a question
that names a time ("in March 2023") finds the turn that told of it.
"""

from __future__ import annotations

from factstream.edit.materializer import Materializer
from factstream.temporal import ValidInterval, told_time
from factstream.topics.records import fact_id_for
from factstream_lab.eval.locomo.chunks import turn_passage
from factstream_lab.eval.locomo.data import Conversation, Session
from factstream_lab.eval.temporal import add_edit

__all__ = ["DEFAULT_TURN_CONTEXT", "load_turns", "passage_start", "passage_text"]

DEFAULT_TURN_CONTEXT = 0  # turns said before a passage's own, in it


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
    turns = session.turns[max(0, position - context) : position + 1]
    return "\n".join(turn_passage(t) for t in turns)


async def load_turns(
    materializer: Materializer, conversation: Conversation, namespace: str, context: int = 0
) -> dict[str, tuple[str, ...]]:
    """Add every turn of ``conversation`` as a passage (with ``context`` turns before it,
    ``passage_text``); returns each passage's turn, by fact id."""
    cited: dict[str, tuple[str, ...]] = {}
    for session in conversation.sessions:
        document = f"locomo-{conversation.id}-s{session.number}"
        size = len(session.turns)
        edits = []
        for position, turn in enumerate(session.turns):
            text = passage_text(session, position, context)
            interval = passage_start(turn.said, session)
            edits.append(
                add_edit(namespace, document, position, size, text, session.time, interval)
            )
            cited[fact_id_for(namespace, document, position)] = (turn.id,)
        await materializer.apply(edits)
    return cited
