"""WeaviateFactStore: the FactStore on Weaviate (async client v4), the only weaviate importer.

One tenant per namespace (or per pool of namespaces: store/pools.py) in two multi-tenant
collections (facts with our own vectors, and applied-batch records). Weaviate errors leave
this module as factstream StoreErrors.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast
from weakref import WeakValueDictionary

import weaviate
from weaviate import exceptions as wx
from weaviate.classes.aggregate import GroupByAggregate, Metrics
from weaviate.classes.config import (
    Configure,
    ConsistencyLevel,
    DataType,
    Property,
    Reconfigure,
    Tokenization,
)
from weaviate.classes.data import DataObject
from weaviate.classes.init import Auth
from weaviate.classes.query import Filter, MetadataQuery, Sort
from weaviate.classes.tenants import Tenant, TenantActivityStatus
from weaviate.collections import CollectionAsync
from weaviate.collections.classes.filters import FilterReturn
from weaviate.collections.classes.internal import Object, QueryReturn
from weaviate.outputs.aggregate import AggregateBoolean

from factstream.config import StoreSettings, WeaviateSettings
from factstream.errors import StoreError, StoreUnavailable, StoreWriteFailed
from factstream.store.base import (
    AppliedBatch,
    FactCounts,
    FactPage,
    SearchHit,
    StoredFact,
    TenantSweep,
)
from factstream.store.entities import ENTITY_INDEX_VERSION, is_about
from factstream.store.pools import POOLED_MAX_FACTS, hybrid_ranked, is_pool, pool_of
from factstream.store.recent import LastUse, RecentSet
from factstream.store.replicas import ReplicaRepair, nudged
from factstream.store.rules import (
    check_list_limit,
    check_search_args,
    check_write,
    order_key,
    similarities,
    valid_during,
    visible,
)
from factstream.store.schema import (
    BM25_B,
    BM25_K1,
    DATE_MAX,
    DATE_MIN,
    CollectionSpec,
    PropertySpec,
    PropertyType,
    PropertyValue,
    StoreCollections,
    batch_from_properties,
    batch_properties,
    batch_uuid,
    clamp_date,
    collections_for,
    entity_properties,
    fact_from_properties,
    fact_properties,
    fact_uuid,
    valid_time_properties,
)
from factstream.store.tenants import TenantCreator
from factstream.store.vector_bytes import compact_vectors
from factstream.tally import count
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import Fact

__all__ = ["MAX_RESULTS", "WeaviateFactStore", "drop_collections", "is_outage"]

log = logging.getLogger(__name__)

# Weaviate's default QUERY_MAXIMUM_RESULTS: no single query may ask for more.
MAX_RESULTS = 10_000
# When too few candidates survive the exact checks, ask again for this many times more.
_GROWTH = 4
# Weaviate computes cosine distance in float32; widen its cut so our exact check decides.
_DISTANCE_SLACK = 1e-5
# As of a time, the first query asks for top_k and top_k / this more (see _first_limit).
_AS_OF_MARGIN = 4
# Candidates a query reads past its cut, to see the end of a tie with the last kept one
# without asking again (see the search).
_TIE_PAST = 3
_ID_CHUNK = 500
# Namespaces whose tenant (and backfill checks) a store remembers; others are checked again.
_REMEMBER = 10_000
# Tenants per activity-status update request.
_TENANT_CHUNK = 100

_Obj = Object[Any, Any]
_Collection = CollectionAsync[Any, Any]

_UNAVAILABLE = (
    wx.WeaviateConnectionError,
    wx.WeaviateGRPCUnavailableError,
    wx.WeaviateRetryError,
    wx.WeaviateStartUpError,
    wx.WeaviateTimeoutError,
)
# What Weaviate (cluster/router) answers while a restarted node does not know its shards yet.
_NOT_SERVING_YET = ("no read replica found", "no write replica found")


class WeaviateFactStore:
    """Facts in Weaviate, one tenant per namespace; create it with :meth:`open`.

    Searches are hybrid (dense + BM25 on ``text``). Weaviate filters candidates by a superset
    of "true at T", by valid time (overlap with the asked interval, exact for dates Weaviate
    can compare) and by vector distance, then every candidate is checked exactly here
    (``Fact.truth_at``, ``rules.valid_during``, true cosine), fetching more candidates until
    ``top_k`` survive.

    Objects written before valid time lack ``valid_start``/``valid_end``: the first
    valid-time read of a namespace in a process finds and backfills them (``open`` adds the
    properties to an older collection).
    """

    def __init__(
        self,
        client: weaviate.WeaviateAsyncClient,
        collections: StoreCollections,
        settings: StoreSettings,
        url: str,
    ) -> None:
        """Wrap a connected client whose collections exist; :meth:`open` does both."""
        self._client, self._url = client, url
        # Every read and write waits for the replicas the consistency level asks for.
        level = ConsistencyLevel(settings.consistency)
        self._facts = client.collections.use(collections.facts.name).with_consistency_level(level)
        self._batches = client.collections.use(collections.batches.name).with_consistency_level(
            level
        )
        self._batch_size, self._overfetch = settings.write_batch_size, settings.search_overfetch
        # 0: a tenant per namespace; P: namespaces share P pool tenants (store/pools.py).
        self._pools, self._bm25_b = settings.pools, settings.bm25_b
        # Facts written here, for the nodes that come back from a SIGKILL (store.replicas).
        self.replicas = (
            ReplicaRepair(settings.reindex_window_s) if settings.reindex_window_s > 0 else None
        )
        # Per namespace, only while in use or recent: a worker meets 100,000s of them.
        self._writing: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()
        # Tenants known to exist; new ones are created many to a request (store/tenants.py).
        self._tenants = TenantCreator(self._create_tenants, RecentSet(_REMEMBER), _TENANT_CHUNK)
        self._valid_ready = RecentSet(_REMEMBER)  # namespaces whose objects have valid time
        self._entities_ready = RecentSet(_REMEMBER)  # ... and the current entity keys
        # When each namespace was last used here (edited, asked), for the idle sweep.
        self.last_use = LastUse(settings.tenant_idle_s)

    @classmethod
    async def open(cls, connection: WeaviateSettings, settings: StoreSettings) -> WeaviateFactStore:
        """Connect and create the collections if missing (idempotent, safe to race).

        Raises:
            StoreUnavailable: Weaviate cannot be reached.
            StoreError: the collections cannot be created or conflict with ours.
        """
        key = connection.api_key
        client = weaviate.use_async_with_local(
            host=connection.host,
            port=connection.http_port,
            grpc_port=connection.grpc_port,
            auth_credentials=Auth.api_key(key.get_secret_value()) if key else None,
        )
        collections = collections_for(settings.collection_prefix, pooled=settings.pools > 0)
        store = cls(client, collections, settings, connection.url)
        try:
            with store._translated("connect"):
                await client.connect()
                for spec in (collections.facts, collections.batches):
                    await _ensure_collection(
                        client, spec, settings.replication_factor, settings.bm25_b, settings.pools
                    )
        except BaseException:
            await client.close()
            raise
        return store

    async def search(
        self,
        namespace: str,
        query: str,
        vector: Sequence[float],
        *,
        as_of: datetime | None,
        top_k: int,
        min_similarity: float,
        alpha: float,
        valid: ValidInterval | None = None,
        entities: Sequence[str] | None = None,
    ) -> list[SearchHit]:
        """Hybrid search over the facts true at ``as_of``; see ``FactStore.search``."""
        check_search_args(top_k, min_similarity, alpha)
        if (valid is not None and valid.is_empty) or (entities is not None and not entities):
            return []
        await self._ensure_valid_time(namespace, valid)
        await self._ensure_entities(namespace, entities)
        if self._pools:
            return await self._pooled_search(
                namespace, query, vector, as_of, top_k, min_similarity, alpha, valid, entities
            )
        server_filter = _and(_truth_filter(as_of, include_false=False), _valid_filter(valid, as_of))
        server_filter = _and(server_filter, _entity_filter(entities))
        collection = self._tenant(self._facts, namespace)
        max_distance = _max_distance(min_similarity, alpha)
        floored = max_distance is not None or min_similarity <= -1.0
        limit = _first_limit(top_k, self._overfetch, as_of, entities, floored=floored)
        while True:
            # Equal scores are cut by fact id (_tie_broken), so every candidate tied with the
            # last kept must be seen. One past the cut showed a tie but not its end: a tie
            # there cost a second request for _GROWTH times the candidates (issue 37: the
            # ask benchmark's facts come in pairs of equal score). A few past settle most
            # ties in the one request; only a tie running through all of them asks again.
            asked = min(limit + _TIE_PAST, MAX_RESULTS)
            with compact_vectors():  # the vectors only feed the cosine check
                objects = await self._objects(
                    self._facts,
                    namespace,
                    collection.query.hybrid(
                        query,
                        vector=list(vector),
                        alpha=alpha,
                        query_properties=["text"],
                        max_vector_distance=max_distance,
                        filters=server_filter,
                        limit=asked,
                        include_vector=True,
                        return_properties=["record"],
                        return_metadata=MetadataQuery(score=True),
                    ),
                )
            hits, sure = _hits(objects, vector, as_of, valid, min_similarity, entities, top_k)
            if sure or len(objects) < asked or asked >= MAX_RESULTS:
                return _tie_broken(hits)[:top_k]
            limit = min(limit * _GROWTH, MAX_RESULTS)

    async def _pooled_search(
        self,
        namespace: str,
        query: str,
        vector: Sequence[float],
        as_of: datetime | None,
        top_k: int,
        min_similarity: float,
        alpha: float,
        valid: ValidInterval | None,
        entities: Sequence[str] | None,
    ) -> list[SearchHit]:
        """The search of a pooled namespace, on its own statistics (store/pools.py): every
        row of the namespace read (one filtered fetch), the exact checks applied, and the
        rest ranked here as the hybrid search ranks a tenant holding the namespace alone,
        asking for as many candidates as :meth:`search` would, and more while too few pass
        the similarity floor.

        Raises:
            StoreError: the namespace has more than ``POOLED_MAX_FACTS`` facts (it belongs
                in a tenant of its own: promotion is not built).
        """
        collection = self._tenant(self._facts, namespace)
        with compact_vectors():
            objects = await self._objects(
                self._facts,
                namespace,
                collection.query.fetch_objects(
                    filters=self._mine(namespace),
                    limit=POOLED_MAX_FACTS + 1,
                    include_vector=True,
                    return_properties=["record"],
                ),
            )
        if len(objects) > POOLED_MAX_FACTS:
            raise StoreError(
                f"namespace {namespace} has more than {POOLED_MAX_FACTS} facts, the most a "
                "pooled namespace is searched with; it needs a tenant of its own "
                "(FACTSTREAM_STORE_POOLS=0, or promotion: not built)"
            )
        facts = [fact_from_properties(obj.properties) for obj in objects]
        cosines = similarities(vector, [_vector_of(obj) for obj in objects])
        candidates = [
            i
            for i, fact in enumerate(facts)
            if visible(fact, as_of)
            and valid_during(fact, valid, as_of)
            and (entities is None or is_about(fact, entities))
        ]
        max_distance = _max_distance(min_similarity, alpha)
        floored = max_distance is not None or min_similarity <= -1.0
        limit = _first_limit(top_k, self._overfetch, as_of, entities, floored=floored)
        texts = [fact.text for fact in facts]
        while True:
            asked = min(limit + _TIE_PAST, MAX_RESULTS)
            ranked = hybrid_ranked(
                texts,
                cosines,
                candidates,
                query,
                alpha=alpha,
                max_distance=max_distance,
                limit=asked,
                k1=BM25_K1,
                b=self._bm25_b,
            )
            hits = [
                SearchHit(facts[r.index], cosines[r.index], r.score)
                for r in ranked
                if cosines[r.index] >= min_similarity
            ]
            if len(hits) >= top_k or len(ranked) < asked or asked >= MAX_RESULTS:
                return _tie_broken(hits)[:top_k]
            limit = min(limit * _GROWTH, MAX_RESULTS)

    async def prepare_read(self, namespace: str, *, valid: ValidInterval | None) -> None:
        """Ready the namespace for a search (``Preparing``), while the caller embeds its
        question: the once-per-process valid-time check, whose read activates an inactive
        tenant; without that check, a read that activates the tenant when it may have been
        made inactive (not used here for ``tenant_idle_s``). The search then finds both done.
        """
        if valid is not None and not valid.is_empty and namespace not in self._valid_ready:
            await self._ensure_valid_time(namespace, valid)
        elif self.last_use.keep_s > 0 and not self.last_use.in_use(self._tenant_name(namespace)):
            collection = self._tenant(self._facts, namespace)
            await self._objects(
                self._facts,
                namespace,
                collection.query.fetch_objects(limit=1, return_properties=[]),
            )

    async def get(self, namespace: str, fact_ids: Sequence[str]) -> dict[str, Fact]:
        """The facts among ``fact_ids`` that exist, by id."""
        found: dict[str, Fact] = {}
        for obj in await self._facts_by_ids(namespace, fact_ids, with_vectors=False):
            fact = fact_from_properties(obj.properties)
            found[fact.fact_id] = fact
        return found

    async def get_stored(self, namespace: str, fact_ids: Sequence[str]) -> dict[str, StoredFact]:
        """The facts among ``fact_ids`` that exist, by id, with their vectors."""
        found: dict[str, StoredFact] = {}
        for obj in await self._facts_by_ids(namespace, fact_ids, with_vectors=True):
            fact = fact_from_properties(obj.properties)
            found[fact.fact_id] = StoredFact(fact, _vector_of(obj))
        return found

    async def _facts_by_ids(
        self, namespace: str, fact_ids: Sequence[str], *, with_vectors: bool, sure: bool = False
    ) -> list[_Obj]:
        objects: list[_Obj] = []
        unique = list(dict.fromkeys(fact_ids))
        for start in range(0, len(unique), _ID_CHUNK):
            ids = [fact_uuid(namespace, fact_id) for fact_id in unique[start : start + _ID_CHUNK]]
            objects += await self._by_ids(
                self._facts, namespace, ids, with_vectors=with_vectors, sure=sure
            )
        return objects

    async def list_facts(
        self,
        namespace: str,
        *,
        as_of: datetime | None = None,
        include_false: bool = False,
        limit: int = 100,
        cursor: str | None = None,
        valid: ValidInterval | None = None,
    ) -> FactPage:
        """Facts in byte order of their ids, ``limit`` a page; see ``rules.visible``."""
        check_list_limit(limit)
        if valid is not None and valid.is_empty:
            return FactPage([], None)
        await self._ensure_valid_time(namespace, valid)
        chunk = min((limit + 1) * self._overfetch, MAX_RESULTS)
        collection = self._tenant(self._facts, namespace)
        shown: list[Fact] = []
        while len(shown) <= limit:
            server_filter = _and(
                _truth_filter(as_of, include_false=include_false), _valid_filter(valid, as_of)
            )
            server_filter = _and(server_filter, self._mine(namespace))
            if cursor is not None:
                server_filter = _and(
                    server_filter, Filter.by_property("order_key").greater_than(cursor)
                )
            objects = await self._objects(
                self._facts,
                namespace,
                collection.query.fetch_objects(
                    filters=server_filter,
                    sort=Sort.by_property("order_key"),
                    limit=chunk,
                    return_properties=["record"],
                ),
            )
            facts = [fact_from_properties(obj.properties) for obj in objects]
            shown += [
                fact
                for fact in facts
                if visible(fact, as_of, include_false=include_false)
                and valid_during(fact, valid, as_of)
            ]
            if len(objects) < chunk:
                break
            cursor = order_key(facts[-1].fact_id)
        page = shown[:limit]
        more = len(shown) > limit
        return FactPage(page, order_key(page[-1].fact_id) if more else None)

    async def upsert(self, namespace: str, facts: Sequence[StoredFact]) -> None:
        """Insert or replace facts in batches; check every object and raise if any failed.

        Vectors of mixed lengths fail before anything is sent. Objects the server rejected are
        deleted: Weaviate may keep an object whose vector it refused, and a half-indexed fact
        must not linger. Others may have been written; the materializer retries the batch.

        Raises:
            StoreWriteFailed: some facts were rejected (their ids and the server's messages).
        """
        check_write(namespace, facts)
        if not facts:
            return
        await self._ensure_tenant(namespace)
        if self.replicas:  # before writing: a failed attempt may have reached a replica
            self.replicas.wrote(namespace, [item.fact.fact_id for item in facts])
        async with self._lock(namespace):
            failures = await self._write_all(namespace, facts)
        if failures and all(_not_serving_yet(message) for message in failures.values()):
            raise StoreUnavailable(self._url, f"write facts: {next(iter(failures.values()))}")
        if failures:
            ids = [fact_uuid(namespace, fact_id) for fact_id in failures]
            with self._translated("delete failed facts"):
                await self._tenant(self._facts, namespace).data.delete_many(
                    Filter.by_id().contains_any(ids)
                )
            raise StoreWriteFailed(namespace, failures)

    async def count_facts(self, namespace: str) -> FactCounts:
        """The namespace's facts true and false now (one aggregate over the stored truth)."""
        metric = Metrics("truth").boolean(total_true=True, total_false=True)
        with self._translated("count facts"):
            try:
                result = await self._tenant(self._facts, namespace).aggregate.over_all(
                    filters=self._mine(namespace), return_metrics=metric, total_count=True
                )
            except wx.WeaviateQueryError:
                if await self._facts.tenants.exists(self._tenant_name(namespace)):
                    raise
                return FactCounts(0, 0)
        truth = result.properties["truth"]
        assert isinstance(truth, AggregateBoolean)  # noqa: S101 - asked for boolean metrics
        return FactCounts(truth.total_true or 0, truth.total_false or 0)

    async def common_words(
        self, namespace: str, words: Sequence[str], *, as_of: datetime | None
    ) -> frozenset[str]:
        """The ``words`` (lower case) in more than half of the facts true at ``as_of``, as
        BM25 matches them; see ``WordCounting``. Two rounds: the facts counted, then each
        word's matches in parallel (a BM25-only aggregate, stopped at one past half: a word
        that reaches it is common). Truth is the store's filter (``_truth_filter``), a
        superset of the facts true at ``as_of``."""
        unique = sorted({w.lower() for w in words if w.strip()})
        if not unique:
            return frozenset()
        collection = self._tenant(self._facts, namespace)
        truth = _and(_truth_filter(as_of, include_false=False), self._mine(namespace))
        with self._translated("count words"):
            try:
                total = (
                    await collection.aggregate.over_all(filters=truth, total_count=True)
                ).total_count or 0
                if total == 0:
                    return frozenset()
                half = total // 2 + 1
                counts = await asyncio.gather(
                    *(
                        collection.aggregate.hybrid(
                            word,
                            alpha=0.0,
                            query_properties=["text"],
                            filters=truth,
                            object_limit=half,
                            total_count=True,
                        )
                        for word in unique
                    )
                )
            except wx.WeaviateQueryError:
                if await self._facts.tenants.exists(self._tenant_name(namespace)):
                    raise
                return frozenset()
        found = zip(unique, counts, strict=True)
        return frozenset(w for w, c in found if (c.total_count or 0) >= half)

    async def applied_batch(self, namespace: str, document_id: str) -> AppliedBatch | None:
        """The batch already applied for ``document_id``, if any."""
        found = await self._by_ids(self._batches, namespace, [batch_uuid(namespace, document_id)])
        return batch_from_properties(found[0].properties) if found else None

    async def record_batch(self, namespace: str, batch: AppliedBatch) -> None:
        """Record ``batch`` as applied; an existing record for its document wins."""
        await self._ensure_tenant(namespace)
        collection = self._tenant(self._batches, namespace)
        try:
            count("weaviate_write")
            with self._translated("record batch"):
                await collection.data.insert(
                    self._marked(namespace, batch_properties(batch)),
                    uuid=batch_uuid(namespace, batch.document_id),
                )
        except StoreUnavailable:
            raise
        except StoreError as exc:
            # Inserting an existing id fails atomically: the first record stays.
            if await self.applied_batch(namespace, batch.document_id) is None:
                raise StoreWriteFailed(namespace, {batch.document_id: str(exc)}) from exc

    async def drop_namespace(self, namespace: str) -> None:
        """Remove the namespace's tenant from both collections (absent tenants are fine);
        a pooled namespace's rows are deleted from its pool instead."""
        if self._pools:
            await self._drop_pooled(namespace)
        else:
            with self._translated("drop namespace"):
                for collection in (self._facts, self._batches):
                    await collection.tenants.remove([namespace])
            self._tenants.forget(namespace)
        self._valid_ready.discard(namespace)
        self._entities_ready.discard(namespace)

    async def has_namespace(self, namespace: str) -> bool:
        """Whether the namespace has a tenant (active or not); one lookup, not a listing.
        Pooled: whether its pool holds a row of it (a fact or an applied batch)."""
        if self._pools:
            return await self._has_pooled(namespace)
        with self._translated("find namespace"):
            return bool(await self._facts.tenants.exists(namespace))

    async def _drop_pooled(self, namespace: str) -> None:
        """Delete the namespace's rows from its pool, in both collections (a delete by
        filter removes at most Weaviate's query maximum at once: repeated until none)."""
        with self._translated("drop namespace"):
            for collection in (self._facts, self._batches):
                if not await collection.tenants.exists(self._tenant_name(namespace)):
                    continue
                pool = self._tenant(collection, namespace)
                mine = self._mine(namespace)
                assert mine is not None  # noqa: S101 - pooled
                while True:
                    deleted = await pool.data.delete_many(mine)
                    if deleted.matches == 0:
                        break
        self._valid_ready.discard(namespace)
        self._entities_ready.discard(namespace)

    async def _has_pooled(self, namespace: str) -> bool:
        """Whether the namespace's pool holds a row of it (a fact or an applied batch): a
        lookup of the pool and a count, not a listing (the ask path asks it)."""
        pool, mine = self._tenant_name(namespace), self._mine(namespace)
        with self._translated("find namespace"):
            for collection in (self._facts, self._batches):
                if not await collection.tenants.exists(pool):
                    continue
                counted = await collection.with_tenant(pool).aggregate.over_all(
                    filters=mine, total_count=True
                )
                if counted.total_count:
                    return True
        return False

    async def _pooled_names(self, others: Sequence[str]) -> list[str]:
        """The namespaces with rows in the pools, with ``others`` (namespaces of their own
        tenants), sorted."""
        names = set(others)
        with self._translated("list namespaces"):
            for collection in (self._facts, self._batches):
                pools = [t for t in await collection.tenants.get() if is_pool(t)]
                for pool in pools:
                    result = await collection.with_tenant(pool).aggregate.over_all(
                        group_by=GroupByAggregate(prop="namespace", limit=MAX_RESULTS * 100),
                        total_count=True,
                    )
                    names |= {
                        str(group.grouped_by.value)
                        for group in result.groups
                        if (group.total_count or 0) > 0
                    }
        return sorted(names)

    async def deactivate_idle(
        self, owns: Callable[[str], bool], *, listing: bool = True
    ) -> TenantSweep:
        """Make inactive the active tenants of the namespaces ``owns`` names that were not
        used here in the last ``tenant_idle_s`` seconds; see :class:`TenantSweep`.

        An inactive tenant keeps its data on disk and frees its memory (HNSW index, open
        segments); Weaviate activates it again at its next read or write (the collections
        have auto tenant activation), so a caller never sees it. Weaviate's OFFLOADED status
        needs an offload module (offload-s3) that the local stack does not have: tenants
        are only made inactive. Nothing is done before this store has been open
        ``tenant_idle_s`` (a namespace may have been used just before it began).

        ``listing``: every tenant is listed (what another process activated is found too;
        ~1.7 s at 30,000 tenants). Without it only the namespaces this store used that have
        gone idle since the last sweep are made inactive (no listing, nothing per tenant
        that exists), unless it lost track of some (the first sweep, or more went idle
        than it keeps): then it lists. ``active`` is then the owned namespaces used here
        lately.
        """
        idle_s = self.last_use.keep_s
        if idle_s <= 0 or self.last_use.known_for() < idle_s:
            return TenantSweep(0, [])
        went_idle, missed = self.last_use.take_idle()
        if self._pools:
            # A pool holds namespaces of every partition: the store that used it sweeps it
            # (a worker's next use activates it again if another made it inactive).
            owns = _owning_pools(owns)
        if listing or missed:
            with self._translated("list tenants"):
                tenants = await self._facts.tenants.get()
            active = [
                name
                for name, tenant in tenants.items()
                if tenant.activity_status == TenantActivityStatus.ACTIVE and owns(name)
            ]
            idle = [name for name in active if not self.last_use.in_use(name)]
            still = len(active) - len(idle)
        else:
            idle = [name for name in went_idle if owns(name)]
            still = sum(1 for name in self.last_use.recent() if owns(name))
        for start in range(0, len(idle), _TENANT_CHUNK):
            names = [n for n in idle[start : start + _TENANT_CHUNK] if not self.last_use.in_use(n)]
            if names:
                await self._set_status(names, TenantActivityStatus.INACTIVE)
        return TenantSweep(still, idle)

    async def _set_status(self, names: list[str], status: TenantActivityStatus) -> None:
        """Set the tenants' activity status in both collections (a batch tenant may be
        missing: a namespace with facts and no applied batch yet)."""
        with self._translated("set tenant status"):
            for collection in (self._facts, self._batches):
                present = await collection.tenants.get_by_names(names)
                if present:
                    await collection.tenants.update(
                        [Tenant(name=name, activity_status=status) for name in present]
                    )

    async def namespaces(self) -> list[str]:
        """The namespaces that have a tenant, sorted; pooled: those with rows in the pools."""
        with self._translated("list namespaces"):
            tenants = sorted(await self._facts.tenants.get())
        if not self._pools:
            return tenants
        return await self._pooled_names([t for t in tenants if not is_pool(t)])

    async def close(self) -> None:
        """Close the client's connections."""
        await self._tenants.aclose()
        with self._translated("close"):
            await self._client.close()

    async def _ensure_valid_time(self, namespace: str, valid: ValidInterval | None) -> None:
        """Before a valid-time read: backfill the namespace's objects written without it."""
        if valid is None or namespace in self._valid_ready:
            return
        having = Filter.by_property("valid_start").greater_or_equal(DATE_MIN)
        if await self._lacking(namespace, having, "check valid time"):
            await self._backfill(namespace, "valid time", _lacks_valid_time, valid_time_properties)
        self._valid_ready.add(namespace)

    async def _ensure_entities(self, namespace: str, entities: Sequence[str] | None) -> None:
        """Before an entity-filtered read: re-key objects without the current entity keys."""
        if entities is None or namespace in self._entities_ready:
            return
        having = Filter.by_property("entity_version").equal(ENTITY_INDEX_VERSION)
        if await self._lacking(namespace, having, "check entity keys"):
            await self._backfill(namespace, "entity keys", _lacks_entities, entity_properties)
        self._entities_ready.add(namespace)

    async def _lacking(self, namespace: str, having: FilterReturn, action: str) -> bool:
        """Whether some objects of the namespace fail ``having`` (checked once per process:
        the objects passing it are counted against all of them).
        """
        collection = self._tenant(self._facts, namespace)
        with self._translated(action):
            for attempt in (1, 2):
                try:
                    mine = self._mine(namespace)
                    every = await collection.aggregate.over_all(filters=mine, total_count=True)
                    passing = await collection.aggregate.over_all(
                        filters=_and(having, mine), total_count=True
                    )
                    break
                except wx.WeaviateQueryError:
                    if not await self._facts.tenants.exists(self._tenant_name(namespace)):
                        return False  # no tenant yet: nothing to backfill, nothing to find
                    if attempt == 2:
                        raise
                    # The tenant appeared meanwhile (an earlier document of the namespace,
                    # committed while this one was decided): ask it again.
        return (every.total_count or 0) != (passing.total_count or 0)

    async def _backfill(
        self,
        namespace: str,
        what: str,
        lacks: Callable[[Mapping[str, object]], bool],
        derive: Callable[[Fact], dict[str, PropertyValue]],
    ) -> None:
        """Give every object of a namespace that ``lacks`` them the properties ``derive`` makes.

        A partial update from the object's own record; the record is read again afterwards,
        and if a writer replaced it meanwhile (our update may have landed on the new one)
        the update is made again from the new record. Writers of this version always write
        the derived properties, so this converges.
        """
        collection = self._tenant(self._facts, namespace)
        done = 0
        with self._translated(f"backfill {what}"):
            async for obj in self._every(collection, namespace):
                if not lacks(obj.properties):
                    continue
                record = obj.properties["record"]
                while True:
                    fact = fact_from_properties({"record": record})
                    await collection.data.update(obj.uuid, properties=derive(fact))
                    now = await collection.query.fetch_object_by_id(
                        obj.uuid, return_properties=["record"]
                    )
                    if now is None or now.properties["record"] == record:
                        break
                    record = now.properties["record"]
                done += 1
        log.info("backfilled %s of %d facts in namespace %s", what, done, namespace)

    def _tenant(self, collection: _Collection, namespace: str) -> _Collection:
        """The collection's tenant of the namespace (its pool's, pooled); the tenant counts
        as used now."""
        name = self._tenant_name(namespace)
        self.last_use.used(name)
        return collection.with_tenant(name)

    def _tenant_name(self, namespace: str) -> str:
        """The namespace's tenant: its own, or its pool (a hash of the name)."""
        return pool_of(namespace, self._pools) if self._pools else namespace

    def _mine(self, namespace: str) -> FilterReturn | None:
        """Pooled: the filter keeping the namespace's rows of its pool; else none."""
        return Filter.by_property("namespace").equal(namespace) if self._pools else None

    def _marked(self, namespace: str, props: dict[str, PropertyValue]) -> dict[str, PropertyValue]:
        """A row's properties, with its namespace when pooled."""
        return props | {"namespace": namespace} if self._pools else props

    async def _every(self, collection: _Collection, namespace: str) -> AsyncIterator[_Obj]:
        """Every object of the namespace (its tenant, or its rows of the pool)."""
        props = ["record", "valid_start", "entity_version"]
        if not self._pools:
            async for obj in collection.iterator(return_properties=props):
                yield obj
            return
        found = await collection.query.fetch_objects(
            filters=self._mine(namespace), limit=POOLED_MAX_FACTS, return_properties=props
        )
        for obj in found.objects:
            yield obj

    def _lock(self, namespace: str) -> asyncio.Lock:
        """The namespace's write lock, kept only while someone holds or waits for it."""
        lock = self._writing.get(namespace)
        if lock is None:
            lock = self._writing[namespace] = asyncio.Lock()
        return lock

    def expect(self, namespace: str) -> None:
        """A document of ``namespace`` comes soon: create its tenant (if not known to exist)
        with the other namespaces expected meanwhile, in one request per collection."""
        self._tenants.expect(self._tenant_name(namespace))

    async def _ensure_tenant(self, namespace: str) -> None:
        # Creating an existing tenant is a no-op in Weaviate, so racing writers are fine;
        # auto tenant creation covers a tenant dropped behind this cache's back.
        await self._tenants.ensure(self._tenant_name(namespace))

    async def _create_tenants(self, names: list[str]) -> None:
        """Create the namespaces' tenants in both collections, one request each, at once."""
        tenants = [Tenant(name=name) for name in names]
        with self._translated("create tenants"):
            await asyncio.gather(
                *(collection.tenants.create(tenants) for collection in (self._facts, self._batches))
            )

    async def node_health(self) -> dict[str, bool] | None:
        """Each Weaviate node's name -> whether it is HEALTHY; None if none answers."""
        try:
            nodes = await self._client.cluster.nodes()
        except (*_UNAVAILABLE, wx.WeaviateBaseError) as exc:
            log.info("Weaviate's nodes not listed: %s", exc)
            return None
        return {node.name: node.status == "HEALTHY" for node in nodes}

    async def reindex(self, namespace: str, fact_ids: Collection[str]) -> int:
        """Make every replica index these facts' vectors again; how many exist.

        Each is written with a :func:`nudged` vector, then with its own: a changed vector
        gives the object a new doc id, which every replica adds to its vector index (an
        unchanged write keeps the doc id and touches no vector). Written at consistency ALL:
        a replica that missed these writes would later take the final version from async
        replication, whose vector equals its old copy's, and index nothing. Read and written
        under the namespace's write lock, so no upsert of this store falls in between. A
        read that finds no tenant raises while the tenant exists (the poll retries): this
        store wrote these facts, so an empty answer there is a replica not ready yet.

        Raises:
            StoreWriteFailed: some writes were rejected (the facts keep a vector 1e-7 off).
        """
        async with self._lock(namespace):
            found = await self._facts_by_ids(
                namespace, sorted(fact_ids), with_vectors=True, sure=True
            )
            current = [
                StoredFact(fact_from_properties(obj.properties), _vector_of(obj)) for obj in found
            ]
            if not current:
                return 0
            moved = [StoredFact(item.fact, nudged(item.vector)) for item in current]
            every = self._facts.with_consistency_level(ConsistencyLevel.ALL)
            failures = await self._write_all(namespace, moved, every)
            if not failures:
                failures = await self._write_all(namespace, current, every)
        if failures:
            raise StoreWriteFailed(namespace, failures)
        return len(current)

    async def _write_all(
        self, namespace: str, facts: Sequence[StoredFact], into: _Collection | None = None
    ) -> dict[str, str]:
        """Write in batches, then :meth:`_flush_vectors`; the failed ids with messages.
        ``into``: the facts collection at another consistency level than the settings'."""
        failures: dict[str, str] = {}
        for start in range(0, len(facts), self._batch_size):
            chunk = facts[start : start + self._batch_size]
            failures |= await self._write(namespace, chunk, into)
        if not failures:
            failures = await self._flush_vectors(namespace, facts[-1], into)
        return failures

    async def _flush_vectors(
        self, namespace: str, last: StoredFact, into: _Collection | None = None
    ) -> dict[str, str]:
        """Make the tenant's vectors just written survive a SIGKILL: write ``last`` again.

        Weaviate v1.38.14's synchronous batch path (objectsBatcher.Objects) flushes the
        shard's HNSW commit log once the batch is stored but before its index workers have
        added the batch's vectors (the caller waits for them afterwards): those log entries
        stay in a buffer until the shard's next write, and a SIGKILL loses them. The objects
        survive (listed, fetched, found by BM25); no vector search finds them again, and
        nothing repairs them: async replication and read repair compare objects, which
        agree (issue 25). Writing the last fact again, unchanged, touches no vector (same
        vector and properties: Weaviate keeps the doc id) and its own flush writes those
        entries out.
        """
        return await self._write(namespace, [last], into)

    async def _write(
        self, namespace: str, chunk: Sequence[StoredFact], into: _Collection | None = None
    ) -> dict[str, str]:
        """Write one batch; the failed fact ids with the server's message for each."""
        objects = [
            DataObject(
                properties=self._marked(namespace, fact_properties(item.fact)),
                vector=list(item.vector),
                uuid=fact_uuid(namespace, item.fact.fact_id),
            )
            for item in chunk
        ]
        count("weaviate_write")
        try:
            with self._translated("write facts"):
                facts = self._facts if into is None else into
                result = await self._tenant(facts, namespace).data.insert_many(objects)
        except StoreError as exc:
            if isinstance(exc, StoreUnavailable) or not isinstance(
                exc.__cause__, wx.WeaviateInsertManyAllFailedError
            ):
                raise
            return {item.fact.fact_id: str(exc.__cause__) for item in chunk}
        failed = {chunk[i].fact.fact_id: error.message for i, error in result.errors.items()}
        for i, item in enumerate(chunk):
            if i not in result.errors and i not in result.uuids:
                failed[item.fact.fact_id] = "no result for this object in the batch reply"
        return failed

    async def _by_ids(
        self,
        collection: _Collection,
        namespace: str,
        ids: list[uuid.UUID],
        *,
        with_vectors: bool = False,
        sure: bool = False,
    ) -> list[_Obj]:
        query = self._tenant(collection, namespace).query
        return await self._objects(
            collection,
            namespace,
            query.fetch_objects(
                filters=_and(Filter.by_id().contains_any(ids), self._mine(namespace)),
                limit=len(ids),
                include_vector=with_vectors,
            ),
            sure=sure,
        )

    async def _objects(
        self,
        collection: _Collection,
        namespace: str,
        query: Awaitable[QueryReturn[Any, Any]],
        *,
        sure: bool = False,
    ) -> list[_Obj]:
        """Await a read; a namespace without a tenant in ``collection`` has no objects.

        A writer may create the tenant between the failed read and a check of the tenant's
        existence, so the server's "tenant not found" is itself the answer: nothing then.
        ``sure``: a read of what this store wrote (``reindex``), where an empty answer
        would drop work: "tenant not found" raises too while the tenant exists (a replica
        just restarted may say it before it knows its tenants).
        """
        count("weaviate_read")
        with self._translated("read"):
            try:
                return list((await query).objects)
            except wx.WeaviateQueryError as exc:
                missing = "tenant not found" in str(exc) and not sure
                tenant = self._tenant_name(namespace)
                if not missing and await collection.tenants.exists(tenant):
                    raise
                self._tenants.forget(tenant)
                return []

    @contextmanager
    def _translated(self, action: str) -> Iterator[None]:
        try:
            yield
        except _UNAVAILABLE as exc:
            raise StoreUnavailable(self._url, f"{action}: {exc}") from exc
        except wx.UnexpectedStatusCodeError as exc:
            if exc.status_code >= 500:
                raise StoreUnavailable(self._url, f"{action}: {exc}") from exc
            raise StoreError(f"{action} at {self._url}: {exc}") from exc
        except wx.WeaviateBaseError as exc:
            if is_outage(exc):
                raise StoreUnavailable(self._url, f"{action}: {exc}") from exc
            raise StoreError(f"{action} at {self._url}: {exc}") from exc


def _owning_pools(owns: Callable[[str], bool]) -> Callable[[str], bool]:
    """``owns`` for namespaces of their own tenants; every pool counts as owned."""

    def owned(tenant: str) -> bool:
        return is_pool(tenant) or owns(tenant)

    return owned


def drop_collections(connection: WeaviateSettings, prefix: str) -> list[str]:
    """Delete every collection whose name starts with ``prefix`` (a test's or a benchmark's
    own, when it ends); returns the names deleted."""
    with weaviate.connect_to_local(
        host=connection.host, port=connection.http_port, grpc_port=connection.grpc_port
    ) as client:
        ours = [name for name in client.collections.list_all() if name.startswith(prefix)]
        for name in ours:
            client.collections.delete(name)
    return ours


def is_outage(exc: BaseException) -> bool:
    """True when Weaviate could not be reached or cannot serve yet, anywhere in the chain.

    The client wraps a connection that failed every retry in a query error, and a restarted
    node answers "no read replica found" until it knows its shards again: both pass.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, _UNAVAILABLE) or _not_serving_yet(str(seen)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _not_serving_yet(message: str) -> bool:
    return any(phrase in message for phrase in _NOT_SERVING_YET)


def _truth_filter(as_of: datetime | None, *, include_false: bool) -> FilterReturn | None:
    """A superset of ``rules.visible`` that Weaviate can evaluate on the flat properties.

    Truth at T needs the whole history, so at T this keeps the facts whose history starts by
    T and that are true now or changed after T: it drops exactly the facts unseen at T and
    those whose last change, by T, made them false. The exact check follows in Python.
    """
    if as_of is None:
        return None if include_false else Filter.by_property("truth").equal(True)
    seen = Filter.by_property("history_from").less_or_equal(as_of)
    if include_false:
        return seen
    changed_later = Filter.by_property("history_to").greater_than(as_of)
    return seen & (Filter.by_property("truth").equal(True) | changed_later)


def _lacks_valid_time(props: Mapping[str, object]) -> bool:
    return props.get("valid_start") is None


def _lacks_entities(props: Mapping[str, object]) -> bool:
    return props.get("entity_version") != ENTITY_INDEX_VERSION


def _entity_filter(entities: Sequence[str] | None) -> FilterReturn | None:
    """Facts indexed under any of ``entities`` (``store.entities``); None filters nothing."""
    if entities is None:
        return None
    return Filter.by_property("entity_keys").contains_any(list(entities))


def _valid_filter(valid: ValidInterval | None, as_of: datetime | None) -> FilterReturn | None:
    """Facts whose valid interval, as known at ``as_of``, overlaps ``valid``; run by Weaviate.

    ``[s, e)`` overlaps ``[start, end)`` when ``s < end`` and ``e > start`` (an open end
    drops its condition); as of T, an end set after T (``valid_closed > T``) is open. Exact
    for times Weaviate can compare; a time clamped to the edge of that range compares
    inclusively (a superset), and ``rules.valid_during`` decides.
    """
    if valid is None:
        return None
    parts = []
    if valid.end is not None:
        parts.append(_compare("valid_start", "<", valid.end))
    if valid.start is not None:
        ends_after = _compare("valid_end", ">", valid.start)
        if as_of is not None:
            ends_after = ends_after | _compare("valid_closed", ">", as_of)
        parts.append(ends_after)
    return Filter.all_of(parts) if parts else None


def _compare(prop: str, op: str, when: datetime) -> FilterReturn:
    """``prop op when`` on a clamped date property; inclusive where ``when`` is clamped."""
    bound, by = clamp_date(when), Filter.by_property(prop)
    exact = DATE_MIN < bound < DATE_MAX
    if op == "<":
        return by.less_than(bound) if exact else by.less_or_equal(bound)
    return by.greater_than(bound) if exact else by.greater_or_equal(bound)


def _max_distance(min_similarity: float, alpha: float) -> float | None:
    """The server's cut on vector distance (1 - cosine) for a similarity floor; None: none.

    The cut only prunes candidates (the exact floor is applied after) and is ignored at
    alpha 0. A floor of -1 or below prunes nothing, and a cut would still cost: Weaviate
    answers a distance-limited hybrid query from every object within the distance, here
    every object the filters pass, so none is sent (a hop searches with the floor -1).
    """
    if alpha <= 0 or min_similarity <= -1.0:
        return None
    return 1.0 - min_similarity + _DISTANCE_SLACK


def _first_limit(
    top_k: int,
    overfetch: int,
    as_of: datetime | None,
    entities: Sequence[str] | None,
    *,
    floored: bool = True,
) -> int:
    """Candidates the first query of a search asks for.

    Facts true now (no ``as_of``, no entity filter) are filtered by Weaviate exactly
    (``truth``, valid time, and the similarity floor when the distance cut carries it:
    ``floored``), so ``top_k`` candidates give ``top_k`` hits and more would only be sent,
    decoded and checked for nothing (issue 26: a third of a search's client time at 100k
    facts). As of a time T the filter is a superset only by the facts whose history changed
    after T (``_truth_filter``): none at the head of the stream, where the editor retrieves
    at its document's time, so those ask for ``top_k`` and a quarter more (issue 37: the
    editor's three queries of 50 asked for 150 candidates each, vectors and records).
    Facts about entities, or under a floor that only the exact check applies (BM25 alone),
    are filtered by a looser superset: ``overfetch`` candidates per hit. Either way the
    search asks again for more when too few pass the exact checks.
    """
    if entities is not None or not floored:
        return min(top_k * overfetch, MAX_RESULTS)
    if as_of is None:
        return min(top_k, MAX_RESULTS)
    return min(top_k + max(1, top_k // _AS_OF_MARGIN), MAX_RESULTS)


def _and(a: FilterReturn | None, b: FilterReturn | None) -> FilterReturn | None:
    if a is None or b is None:
        return a if b is None else b
    return a & b


def _tie_broken(hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` by score, equal scores by fact id: Weaviate returns equals in the order of
    its internal ids, which follow the objects' write history, not their content."""
    return sorted(hits, key=lambda hit: (-hit.score, hit.fact.fact_id))


def _hits(
    objects: Sequence[_Obj],
    vector: Sequence[float],
    as_of: datetime | None,
    valid: ValidInterval | None,
    min_similarity: float,
    entities: Sequence[str] | None = None,
    most: int | None = None,
) -> tuple[list[SearchHit], bool]:
    """The candidates exactly true at ``as_of``, valid during ``valid``, above the floor,
    about one of ``entities`` (None: any), in the server's order (by score); the first
    ``most`` of them (None: all) and those tied with the ``most``-th, the records after
    those not parsed. And whether they are sure: an object scoring below the ``most``-th
    was seen, so none not returned ties with it (the caller cuts equals by id,
    ``_tie_broken``)."""
    cosines = similarities(vector, [_vector_of(obj) for obj in objects])
    hits: list[SearchHit] = []
    for obj, cos in zip(objects, cosines, strict=True):
        score = float(obj.metadata.score or 0.0)
        if most is not None and len(hits) >= most and score < hits[most - 1].score:
            return hits, True
        if cos < min_similarity:
            continue
        fact = fact_from_properties(obj.properties)
        if entities is not None and not is_about(fact, entities):
            continue
        if visible(fact, as_of) and valid_during(fact, valid, as_of):
            hits.append(SearchHit(fact, cos, score))
    return hits, False


def _vector_of(obj: _Obj) -> Sequence[float]:
    stored = obj.vector["default"]
    if stored and not isinstance(stored[0], float):
        raise StoreError(f"object {obj.uuid} holds a multi-vector, not one fact vector")
    return cast("Sequence[float]", stored)


async def _ensure_collection(
    client: weaviate.WeaviateAsyncClient,
    spec: CollectionSpec,
    replication_factor: int = 1,
    bm25_b: float = BM25_B,
    pools: int = 0,
) -> None:
    """Create the collection unless it exists; add properties an older version lacked.

    Raises:
        StoreError: the collection exists without multi-tenancy, or with its namespaces laid
            out otherwise than ``pools`` says (``_layout``).
    """
    if not await client.collections.exists(spec.name):
        try:
            await client.collections.create(
                spec.name,
                description=_layout(pools),
                properties=[_property(p) for p in spec.properties],
                vector_config=Configure.Vectors.self_provided() if spec.vectors else None,
                inverted_index_config=Configure.inverted_index(bm25_b=bm25_b, bm25_k1=BM25_K1),
                multi_tenancy_config=Configure.multi_tenancy(
                    enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
                ),
                replication_config=Configure.replication(factor=replication_factor),
            )
            return
        except wx.UnexpectedStatusCodeError:
            if not await client.collections.exists(spec.name):
                raise  # not a lost race with another creator
    config = await client.collections.use(spec.name).config.get()
    if not config.multi_tenancy_config.enabled:
        raise StoreError(f"collection {spec.name} exists without multi-tenancy")
    if (laid_out := _pools_in(config.description)) != pools:
        # Namespaces would be looked for in tenants that do not hold them: every fact of the
        # store would seem gone, and new ones would be written beside the old.
        raise StoreError(
            f"collection {spec.name} holds its namespaces {_layout_words(laid_out)}, but "
            f"FACTSTREAM_STORE_POOLS is {pools} ({_layout_words(pools)}): set it to "
            f"{laid_out}, or rebuild into another collection prefix (factstream rebuild)"
        )
    if not config.multi_tenancy_config.auto_tenant_activation:
        # Inactive tenants (deactivate_idle) must come back at their next use by themselves.
        await client.collections.use(spec.name).config.update(
            multi_tenancy_config=Reconfigure.multi_tenancy(auto_tenant_activation=True)
        )
    bm25 = config.inverted_index_config.bm25
    if (bm25.b, bm25.k1) != (bm25_b, BM25_K1):
        # Mutable: the next search scores with it (schema.BM25_B says why it matters).
        await client.collections.use(spec.name).config.update(
            inverted_index_config=Reconfigure.inverted_index(bm25_b=bm25_b, bm25_k1=BM25_K1)
        )
    present = {prop.name for prop in config.properties}
    ranged = {p.name for p in spec.properties if p.ranged}
    if unranged := sorted(
        p.name for p in config.properties if p.name in ranged and not p.index_range_filters
    ):
        # An index setting of an existing property cannot change: only a new collection
        # (``factstream rebuild`` into another prefix) gets it.
        log.warning(
            "collection %s was created without range indexes on %s: reads at a time "
            "(as_of, valid time) cost more as it grows; rebuild it to get them",
            spec.name,
            ", ".join(unranged),
        )
    for prop in spec.properties:
        if prop.name not in present:
            await client.collections.use(spec.name).config.add_property(_property(prop))


def _layout(pools: int) -> str:
    """The collection's description: how its namespaces map to tenants, read at each open."""
    return f"factstream: namespaces {_layout_words(pools)}"


def _layout_words(pools: int) -> str:
    return f"in {pools} pool tenants" if pools else "in a tenant each"


def _pools_in(description: str | None) -> int:
    """The pool count a collection was created with (``_layout``); a collection without it
    was created before pools, with a tenant per namespace: 0."""
    found = _POOLS_IN.search(description or "")
    return int(found[1]) if found else 0


_POOLS_IN = re.compile(r"^factstream: namespaces in (\d+) pool tenants$")


def _property(spec: PropertySpec) -> Property:
    # PropertyType's values are Weaviate's data type names.
    text = spec.type in (PropertyType.TEXT, PropertyType.TEXT_ARRAY)
    return Property(
        name=spec.name,
        data_type=DataType(spec.type.value),
        index_filterable=spec.filterable,
        index_searchable=spec.searchable if text else None,
        index_range_filters=spec.ranged or None,
        tokenization=(Tokenization.WORD if spec.searchable else Tokenization.FIELD)
        if text
        else None,
    )
