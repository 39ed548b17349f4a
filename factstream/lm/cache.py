"""A disk cache of LM answers keyed by (model, messages, constraint, parameters), in SQLite.

Replays and evaluations then see exactly the answers they saw before. The cache is a wrapper
(``CachingLM``) around any LMClient, so the HTTP adapter knows nothing about it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from factstream.lm.base import Completion, CompletionRequest, LMClient, TokenSink, Usage
from factstream.metrics import LMMetrics
from factstream.prompts.models import Choice, JsonSchema

__all__ = ["CachingLM", "SQLiteLMCache", "cache_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    created_at REAL NOT NULL
)
"""


def cache_key(model: str, request: CompletionRequest) -> str:
    """A digest of everything that decides the answer: model, messages, constraint, params."""
    constraint: dict[str, Any] | None
    match request.constraint:
        case JsonSchema(name=name, schema=schema):
            constraint = {"json_schema": {"name": name, "schema": schema}}
        case Choice(options=options):
            constraint = {"choice": list(options)}
        case _:
            constraint = None
    material = {
        "model": model,
        "messages": [m.model_dump() for m in request.messages],
        "constraint": constraint,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class SQLiteLMCache:
    """Completions stored in one SQLite file (WAL, so several processes may share it)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``, marked cached."""
        with self._lock:
            row = self._db.execute(
                "SELECT model, text, prompt_tokens, completion_tokens, finish_reason "
                "FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        model, text, prompt_tokens, completion_tokens, finish_reason = row
        return Completion(text, Usage(prompt_tokens, completion_tokens), model, finish_reason, True)

    def put(self, key: str, prompt: str, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (first answer wins)."""
        usage = asdict(completion.usage)
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    completion.model,
                    prompt,
                    completion.text,
                    usage["prompt_tokens"],
                    usage["completion_tokens"],
                    completion.finish_reason,
                    time.time(),
                ),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM completions").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


class CachingLM:
    """An LMClient that answers from ``cache`` when it can and stores what ``inner`` answers.

    Requests with ``use_cache=False`` go straight to ``inner`` and are not stored.
    """

    def __init__(self, inner: LMClient, cache: SQLiteLMCache, metrics: LMMetrics | None = None):
        self.inner, self.cache, self.metrics = inner, cache, metrics

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(self, request: CompletionRequest) -> Completion:
        if not request.use_cache:
            return await self.inner.complete(request)
        key = cache_key(self.inner.model, request)
        hit = await self._hit(request, key)
        if hit is not None:
            return hit
        completion = await self.inner.complete(request)
        await asyncio.to_thread(self.cache.put, key, request.prompt, completion)
        return completion

    async def stream(self, request: CompletionRequest, on_token: TokenSink) -> Completion:
        """A cached answer comes as one piece; else ``inner`` streams and the answer is kept."""
        if not request.use_cache:
            return await self.inner.stream(request, on_token)
        key = cache_key(self.inner.model, request)
        hit = await self._hit(request, key)
        if hit is not None:
            await on_token(hit.text)
            return hit
        completion = await self.inner.stream(request, on_token)
        await asyncio.to_thread(self.cache.put, key, request.prompt, completion)
        return completion

    async def _hit(self, request: CompletionRequest, key: str) -> Completion | None:
        hit = await asyncio.to_thread(self.cache.get, key)
        if hit is not None and self.metrics is not None:
            self.metrics.cache_hits.labels(request.task, self.model).inc()
            self.metrics.requests.labels(request.task, self.model, "cached").inc()
            tokens = self.metrics.cached_tokens
            tokens.labels(request.task, self.model, "prompt").inc(hit.usage.prompt_tokens)
            tokens.labels(request.task, self.model, "completion").inc(hit.usage.completion_tokens)
        return hit

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.cache.close()
