"""Which Weaviate client errors are an outage (retried without end) and which are not."""

from __future__ import annotations

from weaviate import exceptions as wx

from factstream.store.weaviate_store import is_outage


def _chained(outer: Exception, cause: BaseException) -> Exception:
    outer.__cause__ = cause
    return outer


def test_a_query_that_failed_every_connection_retry_is_an_outage() -> None:
    retry = wx.WeaviateRetryError("failed to connect to all addresses; Connection refused", 5)
    assert is_outage(_chained(wx.WeaviateQueryError(str(retry), "GRPC search"), retry))


def test_a_restarted_node_that_does_not_know_its_shards_yet_is_an_outage() -> None:
    rpc = RuntimeError('details = "batch delete: cannot find objects: no read replica found"')
    delete = wx.WeaviateDeleteManyError("[UNKNOWN] batch delete: cannot find objects")
    assert is_outage(_chained(delete, rpc))
    assert is_outage(wx.WeaviateQueryError("no write replica found", "GRPC batch"))


def test_a_refused_request_is_not_an_outage() -> None:
    bad = wx.WeaviateQueryError("invalid filter: property 'x' does not exist", "GRPC search")
    assert not is_outage(_chained(bad, ValueError("no such property")))
