"""Bounded memory of namespaces (store/recent.py)."""

from __future__ import annotations

from factstream.store.recent import LastUse, RecentSet


def test_a_recent_set_keeps_the_latest_names_only() -> None:
    names = RecentSet(3)
    for i in range(100):
        names.add(f"ns-{i}")
    assert len(names) == 3
    assert "ns-99" in names and "ns-96" not in names
    assert "ns-97" in names  # looked up: now the most recent
    names.add("ns-new")
    assert "ns-97" in names and "ns-98" not in names


def test_last_use_forgets_namespaces_idle_past_its_window() -> None:
    now = [0.0]
    uses = LastUse(10.0, clock=lambda: now[0])
    for i in range(1_000):
        now[0] = i * 0.1
        uses.used(f"ns-{i}")
    assert len(uses) <= 101  # the last 10 s of a namespace every 0.1 s
    assert uses.in_use("ns-999") and not uses.in_use("ns-0")
    now[0] += 11
    assert not uses.in_use("ns-999") and len(uses) == 0
    assert uses.known_for() > 10


def test_last_use_hands_the_namespaces_gone_idle_to_its_sweeper() -> None:
    now = [0.0]
    uses = LastUse(10.0, clock=lambda: now[0], most_idle=3)
    uses.used("before")
    now[0] = 11.0
    # The first take knows nothing of what went idle before it: the sweeper must list.
    assert uses.take_idle() == ([], True)
    for name in ("a", "b", "c"):
        uses.used(name)
    now[0] = 22.0
    uses.used("c")  # used again: not idle
    assert uses.take_idle() == (["a", "b"], False)
    assert uses.take_idle() == ([], False)  # taken once
    assert uses.recent() == ["c"]
    for i in range(5):  # more go idle than it keeps: the sweeper is told
        uses.used(f"x{i}")
    now[0] = 40.0
    taken, missed = uses.take_idle()
    assert len(taken) == 3 and missed
    assert uses.take_idle() == ([], False)
