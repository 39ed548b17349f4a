"""bench.tenant_scale's arithmetic: Go memstats parsing and the slopes per namespace."""

from __future__ import annotations

from bench.tenant_scale import _slopes, memstats_mib

_PROFILE = """heap profile: 1: 2 [3: 4] @ heap/1048576
# runtime.MemStats
# Alloc = 31457280
# HeapAlloc = 31457280
# HeapSys = 419430400
# HeapIdle = 335544320
# HeapInuse = 76546048
# HeapReleased = 322961408
# Sys = 444596224
# NextGC = 62914560
"""


def test_memstats_are_read_in_mib() -> None:
    stats = memstats_mib(_PROFILE)
    assert stats["HeapAlloc"] == 30.0
    assert stats["HeapInuse"] == 73.0
    assert stats["Sys"] == 424.0
    assert "NextGC" not in stats  # only the fields kept


def _point(n: int, rss: float, alloc: float, inuse: float, data: float) -> dict[str, object]:
    heap = {"HeapAlloc": alloc, "HeapInuse": inuse}
    return {"n": n, "rss_after_gc_mib": rss, "go_heap_mib": heap, "data_mib": data}


def test_slopes_are_kib_per_namespace_between_first_and_last() -> None:
    points = [
        _point(1000, 150.0, 28.0, 70.0, 10.0),
        _point(2000, 999.0, 999.0, 999.0, 999.0),  # the middle does not count
        _point(11000, 170.0, 38.0, 80.0, 110.0),
    ]
    slopes = _slopes(points)
    assert slopes["rss_kib"] == 2.05  # 20 MiB over 10,000 namespaces
    assert slopes["heap_alloc_kib"] == 1.02
    assert slopes["heap_inuse_kib"] == 1.02
    assert slopes["data_kib"] == 10.24


def test_one_point_has_no_slope() -> None:
    assert _slopes([_point(1000, 1.0, 1.0, 1.0, 1.0)])["rss_kib"] is None
