"""The fact store: a Protocol and its Weaviate implementation (plus a unit-test double).

Implementations are imported from their modules (``weaviate_store``, ``memory``), so that
importing the Protocol does not load the Weaviate client.
"""

from factstream.store.base import AppliedBatch, FactPage, FactStore, SearchHit, StoredFact

__all__ = ["AppliedBatch", "FactPage", "FactStore", "SearchHit", "StoredFact"]
