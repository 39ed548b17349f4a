"""Texts embedded once: repeated questions and repeated texts served from memory.

A vector depends on its text alone, so a text asked for again need not reach the model.
``CachedEmbedder`` wraps the loaded embedder (``clients.open_clients``) with two
least-recently-used caches:

- questions (``embed``, the ask path), keyed by the question with its whitespace collapsed
  (the tokenizer splits on whitespace, so the vector is the same): a repeated question
  costs no model call (``FACTSTREAM_EMBED_QUESTION_CACHE`` entries);
- texts (``embed_batch``: documents, titles, statements, fact texts), keyed by the exact
  text (``FACTSTREAM_EMBED_TEXT_CACHE`` entries): the facts a window's dependency check
  embeds and the commit then writes, a title or a relation name many documents share.
  A text asked for while its first call is still computing waits for that call.

Vectors are kept as arrays of doubles (3 KB for 384 dimensions, exactly the floats the
model gave) and handed out as fresh lists, so no caller shares one with another. 0 entries
turns a cache off.
"""

from __future__ import annotations

import asyncio
from array import array
from collections import OrderedDict
from collections.abc import Sequence

from factstream.embed.base import Embedder, Vector
from factstream.errors import EmbedError
from factstream.tally import count

__all__ = ["CachedEmbedder", "question_key"]


def question_key(text: str) -> str:
    """The form a question is cached under: its whitespace collapsed."""
    return " ".join(text.split())


class _Lru:
    """At most ``size`` vectors by key, the least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, array[float]] = OrderedDict()

    def get(self, key: str) -> Vector | None:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found.tolist()

    def put(self, key: str, vector: Sequence[float]) -> None:
        if self.size <= 0:
            return
        self._items[key] = array("d", vector)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class CachedEmbedder:
    """``inner`` with repeated questions and texts served from memory (module docstring).

    Attributes other than the Embedder protocol's (the model's ``cpu_seconds``, say) are
    the inner embedder's. ``hits`` and ``misses`` count texts, questions included.
    """

    def __init__(self, inner: Embedder, *, questions: int, texts: int) -> None:
        self.inner = inner
        self._questions, self._texts = _Lru(questions), _Lru(texts)
        self._computing: dict[str, asyncio.Future[Vector]] = {}
        self.hits = self.misses = 0

    def around(self, inner: Embedder) -> CachedEmbedder:
        """A cache of the same sizes, empty, around ``inner``."""
        return CachedEmbedder(inner, questions=self._questions.size, texts=self._texts.size)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __getattr__(self, attr: str) -> object:
        return getattr(self.inner, attr)

    async def embed(self, text: str) -> Vector:
        """One question's vector (the ask path's call), from the cache when asked before."""
        key = question_key(text)
        found = self._questions.get(key)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        vector = await self.inner.embed(text)
        self._questions.put(key, vector)
        return vector

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        """Vectors for ``texts``; only those neither cached nor computing reach the model."""
        found: dict[str, Vector] = {}
        waiting: dict[str, asyncio.Future[Vector]] = {}
        wanted: list[str] = []
        for text in dict.fromkeys(texts):
            vector = self._texts.get(text)
            if vector is not None:
                found[text] = vector
            elif text in self._computing:
                waiting[text] = self._computing[text]
            else:
                wanted.append(text)
        self.hits += len(texts) - len(wanted)
        self.misses += len(wanted)
        count("embed_cached", len(texts) - len(wanted))
        count("embed_model", len(wanted))
        if wanted:
            found |= await self._compute(wanted)
        for text, future in waiting.items():
            try:
                found[text] = await asyncio.shield(future)
            except Exception:  # noqa: BLE001 - its first call failed or was given up: ask again
                found |= await self._compute([text])
        return [list(found[text]) for text in texts]

    async def _compute(self, texts: list[str]) -> dict[str, Vector]:
        """Embed ``texts`` (none cached or computing), cache them, and tell any waiters."""
        loop = asyncio.get_running_loop()
        futures = {text: loop.create_future() for text in texts}
        self._computing |= futures
        try:
            vectors = await self.inner.embed_batch(texts)
        except BaseException as exc:
            # A cancelled call tells its waiters so; they ask again.
            failed = exc if isinstance(exc, Exception) else EmbedError("the call was cancelled")
            for future in futures.values():
                future.set_exception(failed)
                future.exception()  # marked retrieved: no warning when nobody waits
            raise
        finally:
            for text in texts:
                self._computing.pop(text, None)
        out = dict(zip(texts, vectors, strict=True))
        for text, vector in out.items():
            self._texts.put(text, vector)
            futures[text].set_result(vector)
        return out

    async def aclose(self) -> None:
        await self.inner.aclose()
