"""Requests counted per stretch of work (one commit): units that do not move with load.

A commit's seconds depend on how busy the machine is; how many Weaviate requests, texts
embedded and Kafka requests it makes do not (docs/concurrency.md, "The commit's own
requests"). ``counting`` opens a tally for the work of the current task and of the tasks
it starts (a ``ContextVar``: a task copies its context when it is created); the store,
the embedder cache and the transactional producer add to it with ``count``. Work of other
tasks (the decisions of the documents read ahead) is never counted in it.

Kinds: ``weaviate_read`` (a query or a fetch by id), ``weaviate_write`` (a batch write
of facts, an applied record's insert), ``embed_cached`` (texts a call found cached),
``embed_model`` (texts that reached the model), ``kafka`` (requests the producer sent a
broker while a transaction of the counted work held it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Tally", "count", "counting", "current", "line"]

Tally = Counter[str]

_CURRENT: ContextVar[Tally | None] = ContextVar("factstream_tally", default=None)


def count(kind: str, n: int = 1) -> None:
    """Add ``n`` of ``kind`` to the tally open here, if one is."""
    tally = _CURRENT.get()
    if tally is not None and n:
        tally[kind] += n


def current() -> Tally | None:
    """The tally open here (None: none)."""
    return _CURRENT.get()


@contextmanager
def counting(into: Tally) -> Iterator[Tally]:
    """Count the work of this block (and of the tasks it starts) into ``into``."""
    token = _CURRENT.set(into)
    try:
        yield into
    finally:
        _CURRENT.reset(token)


def line(tally: Tally) -> str:
    """A tally for the log: ``kind=n`` pairs, by kind."""
    return " ".join(f"{kind}={n}" for kind, n in sorted(tally.items()))
