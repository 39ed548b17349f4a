"""How many candidates the Weaviate store asks for and reads (issues 26 and 37): ``top_k``
where the server's filter is exact (facts true now), a quarter more as of a time (a superset
only by facts changed after it), ``overfetch`` per hit for entities, each with a few past the
cut to see a tie's end, more when too few pass the exact checks or a tie runs through those
few, and no record parsed past the ``top_k``-th hit. On a stand-in for the client that
answers from a list in order."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from factstream.config import StoreSettings
from factstream.store.schema import collections_for
from factstream.store.weaviate_store import WeaviateFactStore
from tests.unit.store.builders import day, make_fact

TOP_K, OVERFETCH = 3, 4
PAST = 3  # candidates read past the cut (a tie with the last kept?)


class _Candidates:
    """The collection's query interface: hybrid answers the first ``limit`` objects."""

    def __init__(self, objects: list[Any]) -> None:
        self.objects, self.limits = objects, list[int]()
        self.query = self

    def with_tenant(self, _namespace: str) -> _Candidates:
        return self

    def with_consistency_level(self, _level: object) -> _Candidates:
        return self

    async def hybrid(self, _text: str, **kw: Any) -> SimpleNamespace:
        self.limits.append(kw["limit"])
        return SimpleNamespace(objects=self.objects[: kw["limit"]])


def _obj(record: object, score: float = 1.0) -> SimpleNamespace:
    return SimpleNamespace(
        uuid="u",
        vector={"default": [1.0, 0.0]},
        properties={"record": record},
        metadata=SimpleNamespace(score=score),
    )


def _store(objects: list[Any]) -> tuple[WeaviateFactStore, _Candidates]:
    candidates = _Candidates(objects)
    client = SimpleNamespace(collections=SimpleNamespace(use=lambda _name: candidates))
    settings = StoreSettings(search_overfetch=OVERFETCH)
    return WeaviateFactStore(client, collections_for("T"), settings, "url"), candidates  # type: ignore[arg-type]


def _true(i: int, score: float | None = None) -> SimpleNamespace:
    # The server's order: by score, falling with the place unless a score is given.
    return _obj(make_fact(f"t{i}").to_bytes().decode(), 1.0 / (i + 1) if score is None else score)


def _false(i: int) -> SimpleNamespace:
    fact = make_fact(f"f{i}", changes=((0, True), (1, False)))
    return _obj(fact.to_bytes().decode(), 2.0 + 1.0 / (i + 1))


async def _search(store: WeaviateFactStore, as_of: Any = None) -> list[str]:
    hits = await store.search(
        "desk-a", "q", [1.0, 0.0], as_of=as_of, top_k=TOP_K, min_similarity=0.0, alpha=0.75
    )
    return [h.fact.fact_id for h in hits]


async def test_facts_true_now_ask_for_top_k_and_parse_no_record_past_it() -> None:
    # A few past top_k (does one tie with the top_k-th?); a record after the first object
    # scoring below the top_k-th hit is not read: these would fail to parse.
    store, candidates = _store([_true(0), _true(1), _true(2), *[_obj(None, 0.0)] * PAST])
    assert await _search(store) == ["t0", "t1", "t2"]
    assert candidates.limits == [TOP_K + PAST]


async def test_equal_scores_at_the_cut_are_cut_by_fact_id_whatever_the_server_order() -> None:
    # t4, t3, t2, t9 tie at the cut (the server returns equals in its own order): all of
    # them are read, and the lowest ids kept; the tie ends within the few read past the
    # cut, so one request settles it.
    tied = [_true(0, 0.9), _true(4, 0.5), _true(3, 0.5), _true(2, 0.5), _true(9, 0.5)]
    store, candidates = _store([*tied, _true(5, 0.1), _obj(None, 0.0)])
    assert await _search(store) == ["t0", "t2", "t3"]
    assert candidates.limits == [TOP_K + PAST]


async def test_a_tie_running_past_the_few_read_past_the_cut_asks_again() -> None:
    # Every candidate past the cut ties: whether one after them ties too is unknown, so the
    # search asks again for more until one scores lower (t1 is the lowest id of the tie).
    tied = [_true(i, 0.5) for i in (8, 7, 6, 5, 4, 3, 2, 1)]
    store, candidates = _store([_true(0, 0.9), *tied, _true(9, 0.1), _obj(None, 0.0)])
    assert await _search(store) == ["t0", "t1", "t2"]
    assert candidates.limits == [TOP_K + PAST, TOP_K * 4 + PAST]


async def test_facts_as_of_a_time_ask_for_a_quarter_more_than_top_k() -> None:
    store, candidates = _store([_true(i) for i in range(20)])
    assert await _search(store, as_of=day(5)) == ["t0", "t1", "t2"]
    assert candidates.limits == [TOP_K + 1 + PAST]
    store, candidates = _store([_true(i) for i in range(100)])
    hits = await store.search(
        "desk-a", "q", [1.0, 0.0], as_of=day(5), top_k=50, min_similarity=-1.0, alpha=0.75
    )
    assert len(hits) == 50 and candidates.limits == [62 + PAST]


@pytest.mark.parametrize("as_of", [None, day(5)])
async def test_too_few_passing_the_exact_check_asks_again_for_more(as_of: Any) -> None:
    # False facts the server let through (a superset) are dropped here: ask again.
    objects = [_false(i) for i in range(TOP_K * OVERFETCH)] + [_true(i) for i in range(5)]
    store, candidates = _store(objects)
    assert await _search(store, as_of) == ["t0", "t1", "t2"]
    first = TOP_K + PAST if as_of is None else TOP_K + 1 + PAST
    assert candidates.limits[0] == first and len(candidates.limits) > 1
    assert candidates.limits == sorted(candidates.limits)


async def test_a_floor_weaviate_does_not_apply_asks_for_overfetch_per_hit() -> None:
    # BM25 alone (alpha 0) sends no distance cut: the floor is ours alone to check.
    store, candidates = _store([_true(i) for i in range(20)])
    hits = await store.search(
        "desk-a", "q", [1.0, 0.0], as_of=None, top_k=TOP_K, min_similarity=0.5, alpha=0.0
    )
    assert len(hits) == TOP_K and candidates.limits == [TOP_K * OVERFETCH + PAST]
