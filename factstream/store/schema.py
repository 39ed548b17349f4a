"""The fact store's Weaviate collections as plain data: names, properties, object ids, codecs.

Kept free of the ``weaviate`` import (``weaviate_store.py`` turns these specs into collection
definitions and creates them idempotently), so the layout is readable and unit-testable alone.

Both collections are multi-tenant, one tenant per namespace. Facts carry self-provided vectors
(no vectorizer); applied-batch records carry none.

Weaviate compares dates as 64-bit nanoseconds since 1970, so only instants between
:data:`DATE_MIN` and :data:`DATE_MAX` compare right (earlier or later ones wrap around).
The derived dates that filters run on are clamped into that range, an open end stored as
the bound itself; whoever filters on them treats a bound as inclusive and checks exactly.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from factstream.store.base import AppliedBatch
from factstream.store.entities import ENTITY_INDEX_VERSION, fact_entity_keys
from factstream.store.rules import order_key, valid_interval
from factstream.topics.records import Fact

__all__ = [
    "BATCH_PROPERTIES",
    "BM25_B",
    "BM25_K1",
    "DATE_MAX",
    "DATE_MIN",
    "ENTITY_PROPERTIES",
    "FACT_PROPERTIES",
    "NAMESPACE_PROPERTY",
    "CollectionSpec",
    "PropertyValue",
    "PropertySpec",
    "PropertyType",
    "StoreCollections",
    "VALID_TIME_PROPERTIES",
    "batch_from_properties",
    "batch_properties",
    "batch_uuid",
    "clamp_date",
    "collections_for",
    "entity_properties",
    "fact_from_properties",
    "fact_properties",
    "fact_uuid",
    "valid_time_properties",
]

PropertyValue = str | bool | int | datetime | list[str]
# Inside the int64-nanosecond range (1677-09-21 to 2262-04-11) that Weaviate compares dates in.
DATE_MIN = datetime(1678, 1, 1, tzinfo=UTC)
DATE_MAX = datetime(2262, 1, 1, tzinfo=UTC)
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://factstream.dev/store")


class PropertyType(StrEnum):
    TEXT = "text"
    BOOL = "boolean"
    DATE = "date"
    INT = "int"
    TEXT_ARRAY = "text[]"


@dataclass(frozen=True)
class PropertySpec:
    """One property.

    Attributes:
        name: the property name.
        type: its data type.
        filterable: indexed for filters (and sorting).
        searchable: indexed for BM25, split into words; other text is one token (ids, names).
        ranged: indexed for range filters (<, >) too, at a cost that does not grow with
            the number of distinct values (a filterable index alone merges one bitmap per
            value in the range, and every fact has times of its own: "true at T" reads
            grew with the namespace).
    """

    name: str
    type: PropertyType
    filterable: bool = True
    searchable: bool = False
    ranged: bool = False


# BM25's length normalisation (Okapi ``b``, StoreSettings.bm25_b; Weaviate's own default
# is 0.75). Weaviate keeps the average text length per segment, counting object versions
# since replaced or deleted until a compaction drops them (a fact is rewritten at every
# reinforce, close or invalidation), so with ``b`` > 0 the same live facts score differently
# in two deployments, or in one before and after a memtable flush: the hybrid first stage's
# last places then hold other facts (issue 39's CLARK-300 divergence; docs/concurrency.md).
# ``b`` 0 makes the score independent of that history (the conversation world's failure
# with it was its LM double's tie, broken by the ranking: docs/concurrency.md). ``k1``
# stays Weaviate's default.
BM25_B = 0.0
BM25_K1 = 1.2


@dataclass(frozen=True)
class CollectionSpec:
    """One multi-tenant collection; ``vectors`` says whether objects carry our own vectors."""

    name: str
    properties: tuple[PropertySpec, ...]
    vectors: bool


@dataclass(frozen=True)
class StoreCollections:
    """The two collections of one store."""

    facts: CollectionSpec
    batches: CollectionSpec


_TEXT, _DATE = PropertyType.TEXT, PropertyType.DATE

FACT_PROPERTIES = (
    PropertySpec("fact_id", _TEXT),
    # Listing order and cursor: hex of the id, so sorting and range filters agree.
    PropertySpec("order_key", _TEXT),
    PropertySpec("text", _TEXT, filterable=False, searchable=True),
    PropertySpec("truth", PropertyType.BOOL),
    PropertySpec("first_seen", _DATE),
    PropertySpec("last_changed", _DATE),
    PropertySpec("valid_from", _DATE),
    PropertySpec("valid_to", _DATE),
    PropertySpec("closed_at", _DATE),
    PropertySpec("subject", _TEXT),
    PropertySpec("relation", _TEXT),
    PropertySpec("object", _TEXT),
    PropertySpec("object_type", _TEXT),
    PropertySpec("replaces", _TEXT),
    PropertySpec("replaced_by", _TEXT),
    # The conversation turns a fact was said in (Fact version 3); added to older collections
    # on start, objects written before have none.
    PropertySpec("turn_ids", PropertyType.TEXT_ARRAY),
    # The first and last history times, derived here so the "true at T" prefilter holds
    # whatever the writer put in first_seen and last_changed.
    PropertySpec("history_from", _DATE, ranged=True),
    PropertySpec("history_to", _DATE, ranged=True),
    # The valid interval (rules.valid_interval) clamped to [DATE_MIN, DATE_MAX], open ends
    # as those bounds, and when its end was set (closed_at; DATE_MIN if never): what the
    # valid-time filter compares ("overlaps", as known at as_of) inside Weaviate.
    PropertySpec("valid_start", _DATE, ranged=True),
    PropertySpec("valid_end", _DATE, ranged=True),
    PropertySpec("valid_closed", _DATE, ranged=True),
    # The entity index (store.entities): the keys of the entities the fact names, and the
    # version of the rule that derived them (older objects are re-keyed on first use).
    PropertySpec("entity_keys", PropertyType.TEXT_ARRAY),
    PropertySpec("entity_version", PropertyType.INT),
    # The whole fact (history included) as its wire JSON: what reads return, exactly as
    # written. The flat properties above exist only to filter, sort and search.
    PropertySpec("record", _TEXT, filterable=False),
)

BATCH_PROPERTIES = (
    PropertySpec("document_id", _TEXT),
    PropertySpec("batch_id", _TEXT),
    PropertySpec("size", PropertyType.INT, filterable=False),
)

# Added in the valid-time release: objects written before lack them until backfilled.
VALID_TIME_PROPERTIES = ("valid_start", "valid_end", "valid_closed")
# Added with the entity index: objects written before lack them until re-keyed.
ENTITY_PROPERTIES = ("entity_keys", "entity_version")
_DERIVED = (
    "order_key",
    "history_from",
    "history_to",
    *VALID_TIME_PROPERTIES,
    *ENTITY_PROPERTIES,
    "record",
)
_FLAT_FACT_FIELDS = tuple(spec.name for spec in FACT_PROPERTIES if spec.name not in _DERIVED)


# The namespace of a row, in stores whose namespaces share pool tenants (store/pools.py):
# every read and delete of a pooled namespace filters on it.
NAMESPACE_PROPERTY = PropertySpec("namespace", _TEXT)


def collections_for(prefix: str, *, pooled: bool = False) -> StoreCollections:
    """The collections of a store whose names start with ``prefix`` (``{prefix}Fact`` ...);
    ``pooled``: with the ``namespace`` property (added to existing collections on open)."""
    extra = (NAMESPACE_PROPERTY,) if pooled else ()
    return StoreCollections(
        facts=CollectionSpec(f"{prefix}Fact", (*FACT_PROPERTIES, *extra), vectors=True),
        batches=CollectionSpec(f"{prefix}AppliedBatch", (*BATCH_PROPERTIES, *extra), vectors=False),
    )


def fact_uuid(namespace: str, fact_id: str) -> uuid.UUID:
    """The object id of a fact: the same (namespace, fact id) always maps to it."""
    return uuid.uuid5(_ID_NAMESPACE, f"fact\x1f{namespace}\x1f{fact_id}")


def batch_uuid(namespace: str, document_id: str) -> uuid.UUID:
    """The object id of a document's applied-batch record."""
    return uuid.uuid5(_ID_NAMESPACE, f"batch\x1f{namespace}\x1f{document_id}")


def clamp_date(t: datetime) -> datetime:
    """``t`` moved into ``[DATE_MIN, DATE_MAX]``, the range Weaviate compares dates in."""
    return min(max(t, DATE_MIN), DATE_MAX)


def valid_time_properties(fact: Fact) -> dict[str, PropertyValue]:
    """``valid_start``, ``valid_end``, ``valid_closed`` of a fact: its interval, clamped."""
    interval = valid_interval(fact)
    return {
        "valid_start": DATE_MIN if interval.start is None else clamp_date(interval.start),
        "valid_end": DATE_MAX if interval.end is None else clamp_date(interval.end),
        "valid_closed": DATE_MIN if fact.closed_at is None else clamp_date(fact.closed_at),
    }


def entity_properties(fact: Fact) -> dict[str, PropertyValue]:
    """``entity_keys`` and ``entity_version`` of a fact (``store.entities``); a fact that
    names no entity gets no keys (an empty array is left out, as unset fields are)."""
    keys = list(fact_entity_keys(fact))
    props: dict[str, PropertyValue] = {"entity_version": ENTITY_INDEX_VERSION}
    if keys:
        props["entity_keys"] = keys
    return props


def fact_properties(fact: Fact) -> dict[str, PropertyValue]:
    """The properties a fact is stored with; unset optional fields are left out."""
    values: dict[str, PropertyValue | None] = {
        name: getattr(fact, name) for name in _FLAT_FACT_FIELDS
    }
    props = {name: value for name, value in values.items() if value is not None}
    props["order_key"] = order_key(fact.fact_id)
    props["history_from"], props["history_to"] = fact.history[0].ts, fact.history[-1].ts
    props |= valid_time_properties(fact)
    props |= entity_properties(fact)
    props["record"] = fact.to_bytes().decode()
    return props


def fact_from_properties(props: Mapping[str, object]) -> Fact:
    """The fact stored with ``props`` (read from its ``record``)."""
    record = props["record"]
    if not isinstance(record, str):
        raise TypeError(f"stored fact record is {type(record).__name__}, not JSON text")
    return Fact.model_validate_json(record)


def batch_properties(batch: AppliedBatch) -> dict[str, PropertyValue]:
    """The properties of an applied-batch record."""
    return {"document_id": batch.document_id, "batch_id": batch.batch_id, "size": batch.size}


def batch_from_properties(props: Mapping[str, object]) -> AppliedBatch:
    """The applied batch stored with ``props``."""
    size = props["size"]
    if not isinstance(size, int):
        raise TypeError(f"stored batch size is {type(size).__name__}, not int")
    return AppliedBatch(str(props["document_id"]), str(props["batch_id"]), size)
