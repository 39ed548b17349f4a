"""Candidates' vectors as compact float32 arrays, not lists of Python floats (issue 37).

A search asks Weaviate for its candidates' vectors to check their cosine exactly
(``rules.similarities``). The client decodes each vector's bytes into a list of 384
Python floats (``struct.unpack``, then ``float()`` of each), which numpy then reads back
one float at a time: for the editor's 50-odd candidates a search, the largest part of its
Python time after waiting (``bench.editor_cost``; docs/benchmarks.md). Inside
``compact_vectors()`` the client's decoder gives ``array('f')`` instead (the same
float32 values; indexing gives Python floats; numpy reads it as a buffer at once); outside
it, and in any other task, the client decodes as it always does, so vectors handed to
callers (``get_stored``) stay lists. The decoder is the client's private
``_ByteOps.decode_float32s``: if a client version lacks it, nothing is replaced and
searches decode as before.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["compact_vectors", "installed"]

_COMPACT: ContextVar[bool] = ContextVar("factstream_compact_vectors", default=False)
_INSTALLED: list[bool] = []


def _wrap(original: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def decode_float32s(byte_vector: bytes) -> Any:
        if _COMPACT.get():
            return array("f", byte_vector)  # native order, as the client's struct.unpack reads
        return original(byte_vector)

    return decode_float32s


def installed() -> bool:
    """Install the decoder once (idempotent); whether the client has the hook."""
    if not _INSTALLED:
        try:
            from weaviate.collections.grpc.shared import _ByteOps  # noqa: PLC0415
        except ImportError:
            _INSTALLED.append(False)
        else:
            original = getattr(_ByteOps, "decode_float32s", None)
            if original is None:
                _INSTALLED.append(False)
            else:
                _ByteOps.decode_float32s = staticmethod(_wrap(original))  # type: ignore[method-assign, assignment]
                _INSTALLED.append(True)
    return _INSTALLED[0]


@contextmanager
def compact_vectors() -> Iterator[None]:
    """Vectors read in this block (this task and the tasks it starts) come as array('f')."""
    installed()
    token = _COMPACT.set(True)
    try:
        yield
    finally:
        _COMPACT.reset(token)
