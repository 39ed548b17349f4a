"""The fact store: a Protocol and its Weaviate implementation (plus a unit-test double)."""
