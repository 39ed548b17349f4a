"""Nothing a worker keeps per namespace lives forever: past their caps, its books stop growing.

The commit ledger, the busiest-namespaces counters (with their series), the store's known
tenants (TenantCreator over a RecentSet) and the last-use map (with the namespaces gone idle
that it keeps for the idle sweep) are driven with namespaces
never seen before, with caps smaller than the worker's (4,096 and 10,000) so that the test
is quick; once every cap is reached, tracemalloc must see (almost) nothing more per new
namespace. A structure keyed by
namespace that is never pruned grows by at least ~100 bytes per namespace and fails this.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from factstream.agents.ledger import Ledger
from factstream.agents.series import NamespaceSeries
from factstream.metrics import Metrics
from factstream.store.recent import LastUse, RecentSet
from factstream.store.tenants import TenantCreator
from factstream.topics.records import EditOp

_MOST_BYTES_PER_NAMESPACE = 16  # past the caps; an unbounded dict entry alone is ~100
_CAP = 500


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _create(names: list[str]) -> None:
    return None


async def test_books_stop_growing_past_their_caps() -> None:
    clock = _Clock()
    ledger = Ledger(remember=_CAP, namespaces=_CAP)
    series = NamespaceSeries(Metrics.create().worker, ["chosen"], busiest=10)
    tenants = TenantCreator(_create, RecentSet(_CAP))
    last_use = LastUse(5.0, clock, most_idle=_CAP)
    last_use.take_idle()  # a sweeper that takes nothing more: what goes idle is kept, capped

    async def conversations(start: int, count: int) -> None:
        for i in range(start, start + count):
            ns = f"conversation-{i:08d}"
            tenants.expect(ns)
            await tenants.ensure(ns)
            last_use.used(ns)
            ledger.record(ns, "turns-1")
            series.edited(ns, [EditOp.ADD, EditOp.ADD])
            clock.now += 0.01  # 100 new namespaces a second: 500 within the idle time

    tracemalloc.start()  # before any: what is freed later was traced too
    try:
        await conversations(0, 4 * _CAP)  # past every cap
        gc.collect()
        before = tracemalloc.take_snapshot()
        more = 6 * _CAP
        await conversations(4 * _CAP, more)
        await asyncio.sleep(0)
        gc.collect()
        grown = tracemalloc.take_snapshot().compare_to(before, "filename")
    finally:
        tracemalloc.stop()
    ours = sum(s.size_diff for s in grown if "/factstream/" in s.traceback[0].filename)
    assert ours / more < _MOST_BYTES_PER_NAMESPACE, [str(s) for s in grown[:5]]
    assert len(tenants.known) == _CAP and len(tenants) == 0
    assert len(ledger) <= 2 * _CAP and series.tracked() <= 100 and len(last_use) <= _CAP + 1
