"""The search A/B's loading of a commit's store code: a module of its own, its own helpers."""

from __future__ import annotations

import sys

from bench.ask_search_ab import _search_at
from factstream.store import weaviate_store


def test_a_commits_search_runs_its_own_modules_helpers_not_this_trees() -> None:
    search = _search_at("HEAD")
    module = sys.modules[search.__module__]
    assert module is not weaviate_store
    assert search is module.WeaviateFactStore.search
    assert search is not weaviate_store.WeaviateFactStore.search
    assert search.__globals__["_hits"] is module._hits  # noqa: SLF001
    assert module._hits is not weaviate_store._hits  # noqa: SLF001
