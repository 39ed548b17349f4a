"""New namespaces' tenants created many to a request, each once, failures handed back."""

from __future__ import annotations

import asyncio

import pytest

from factstream.errors import StoreUnavailable
from factstream.store.recent import RecentSet
from factstream.store.tenants import TenantCreator


class Server:
    """The create requests a store would send; fails the next ``failures`` of them."""

    def __init__(self, failures: int = 0) -> None:
        self.requests: list[list[str]] = []
        self.failures = failures

    async def create(self, names: list[str]) -> None:
        await asyncio.sleep(0.001)
        self.requests.append(list(names))
        if self.failures:
            self.failures -= 1
            raise StoreUnavailable("http://weaviate", "create tenants: down")


async def _expect_then_ensure(creator: TenantCreator, names: list[str]) -> None:
    """Announce every name, then await them all at once (as the editor's read-ahead does)."""
    for name in names:
        creator.expect(name)
    await asyncio.gather(*(creator.ensure(name) for name in names))


async def test_expected_namespaces_share_requests() -> None:
    server = Server()
    creator = TenantCreator(server.create, RecentSet(10_000), chunk=100)
    names = [f"conv-{i}" for i in range(250)]
    await _expect_then_ensure(creator, names)
    assert [len(r) for r in server.requests] == [100, 100, 50]
    assert sorted(n for r in server.requests for n in r) == sorted(names)
    await creator.ensure("conv-7")  # known now: no request
    assert len(server.requests) == 3 and len(creator) == 0


async def test_ensure_alone_creates_and_waits() -> None:
    server = Server()
    creator = TenantCreator(server.create, RecentSet(10))
    await creator.ensure("a")
    assert server.requests == [["a"]] and "a" in creator.known
    creator.forget("a")  # dropped: made again when next needed
    await creator.ensure("a")
    assert server.requests == [["a"], ["a"]]


async def test_a_failed_request_is_raised_and_tried_again() -> None:
    server = Server(failures=1)
    creator = TenantCreator(server.create, RecentSet(10))
    creator.expect("b")  # nobody awaits this one
    with pytest.raises(StoreUnavailable):
        await creator.ensure("a")
    assert "a" not in creator.known and len(creator) == 0
    await creator.ensure("a")
    assert server.requests == [["b", "a"], ["a"]] and "a" in creator.known


async def test_known_namespaces_are_bounded() -> None:
    server = Server()
    creator = TenantCreator(server.create, RecentSet(50), chunk=100)
    names = [f"n{i}" for i in range(400)]
    await _expect_then_ensure(creator, names)
    assert len(creator.known) == 50 and len(creator) == 0
    await creator.ensure("n0")  # forgotten: asked again (a no-op for the server)
    assert server.requests[-1] == ["n0"]
