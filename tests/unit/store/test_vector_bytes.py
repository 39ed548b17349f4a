"""Candidates' vectors decoded as float32 arrays inside ``compact_vectors`` only (issue 37)."""

from __future__ import annotations

import asyncio
import struct
from array import array

from weaviate.collections.grpc.shared import _ByteOps

from factstream.store.rules import similarities
from factstream.store.vector_bytes import compact_vectors, installed

_VALUES = [0.25, -1.5, 3.0e-7, 12345.678]
_BYTES = struct.pack(f"{len(_VALUES)}f", *_VALUES)


def test_the_client_hook_is_installed() -> None:
    assert installed()


def test_inside_the_block_the_same_floats_come_as_an_array() -> None:
    installed()
    plain = _ByteOps.decode_float32s(_BYTES)
    with compact_vectors():
        compact = _ByteOps.decode_float32s(_BYTES)
    assert isinstance(plain, list)
    assert isinstance(compact, array)
    assert list(compact) == plain
    assert isinstance(compact[0], float)


def test_outside_the_block_and_in_other_tasks_the_client_decodes_as_before() -> None:
    installed()

    async def elsewhere() -> object:
        return _ByteOps.decode_float32s(_BYTES)

    async def main() -> tuple[object, object]:
        other = asyncio.ensure_future(elsewhere())  # started outside the block
        with compact_vectors():
            inside = _ByteOps.decode_float32s(_BYTES)
            return inside, await other

    inside, other = asyncio.run(main())
    assert isinstance(inside, array)
    assert isinstance(other, list)
    assert isinstance(_ByteOps.decode_float32s(_BYTES), list)


def test_similarities_of_arrays_equal_those_of_lists() -> None:
    installed()
    rows = [struct.pack("4f", *v) for v in ([1, 0, 0, 0], [0.5, 0.5, 0, 0], _VALUES)]
    query = [0.3, -0.2, 0.9, 0.1]
    lists = [_ByteOps.decode_float32s(r) for r in rows]
    with compact_vectors():
        arrays = [_ByteOps.decode_float32s(r) for r in rows]
    assert similarities(query, arrays) == similarities(query, lists)
