"""Vectors computed ahead: a document's embedding does not depend on the knowledge base, so
it can be computed as soon as the document is read, before its turn to be decided; nor do
the vectors of the new facts a decided plan will write, so they are computed as its commit
begins, beside the commit's re-check and Kafka transaction (``FactVectors``).

The worker's window reads a partition's next documents ahead of the ones in flight and
starts their embeddings here at once: requests made together merge into one batched model
call (embed/coalesce.py) instead of one call per document at its turn. Nothing else moves:
decisions, commits and acks keep their order (agents/window.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from types import TracebackType

from factstream.embed.base import Embedder, Vector
from factstream.topics.records import Document

__all__ = ["DocumentVectors", "FactVectors"]


class DocumentVectors:
    """Embeddings started ahead, by (namespace, document id), each taken once.

    At most ``most`` are held: past that, ``start`` does nothing and the document is
    embedded at its turn, as without this.
    """

    def __init__(self, embedder: Embedder, most: int = 256) -> None:
        self._embedder = embedder
        self._most = most
        self._started: dict[tuple[str, str], tuple[str, asyncio.Task[list[Vector]]]] = {}

    def start(self, doc: Document) -> None:
        """Begin embedding ``doc``'s text (merged with whatever else is asked meanwhile)."""
        key = (doc.namespace, doc.id)
        if key in self._started or len(self._started) >= self._most:
            return
        task = asyncio.create_task(self._embedder.embed_batch([doc.text]), name="embed-ahead")
        self._started[key] = (doc.text, task)

    async def take(self, doc: Document) -> Vector | None:
        """``doc``'s vector if it was started for this text; None if not (or it failed:
        the caller embeds it now and meets the error there)."""
        started = self._started.pop((doc.namespace, doc.id), None)
        if started is None:
            return None
        text, task = started
        if text != doc.text:
            task.cancel()
            return None
        try:
            return (await task)[0]
        except Exception:  # noqa: BLE001 - embedded again by the caller, which raises
            return None

    def drop(self, doc: Document) -> None:
        """Forget ``doc`` (committed, dead-lettered or a duplicate without a decision)."""
        started = self._started.pop((doc.namespace, doc.id), None)
        if started is not None:
            started[1].cancel()

    async def aclose(self) -> None:
        """Cancel what is still computing."""
        tasks = [task for _text, task in self._started.values()]
        self._started.clear()
        for task in tasks:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*tasks, return_exceptions=True)

    def __len__(self) -> int:
        return len(self._started)


class FactVectors:
    """The vectors of fact ``texts``, started now; a context that cancels what is left.

    Computing them writes nothing, so a commit starts them before its batch is durable
    (docs/design.md section 5): the apply takes those of the texts it needs
    (``Materializer.apply``) and embeds the others.
    """

    def __init__(self, embedder: Embedder, texts: Sequence[str]) -> None:
        self._texts = list(dict.fromkeys(texts))
        self._task = (
            asyncio.create_task(embedder.embed_batch(self._texts), name="embed-facts")
            if self._texts
            else None
        )

    async def known(self) -> dict[str, Vector]:
        """The vectors by text; none if they failed (the apply embeds them and meets the
        error there)."""
        if self._task is None:
            return {}
        try:
            return dict(zip(self._texts, await asyncio.shield(self._task), strict=True))
        except Exception:  # noqa: BLE001 - embedded again by the apply, which raises
            return {}

    def __enter__(self) -> FactVectors:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
