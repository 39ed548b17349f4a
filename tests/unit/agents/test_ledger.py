"""The editor's commit counts (agents/ledger.py): what a commit need not read again."""

from __future__ import annotations

from factstream.agents.ledger import Ledger


def test_only_a_commit_of_the_same_document_counts_as_committed_since() -> None:
    ledger = Ledger()
    ledger.record("desk", "a")
    checked = ledger.serial
    ledger.record("desk", "b")
    ledger.record("sport", "a")  # the same id in another namespace is another document
    assert ledger.serial == 3
    assert ledger.committed_since("desk", "a", checked) is False
    ledger.record("desk", "a")
    assert ledger.committed_since("desk", "a", checked) is True
    assert ledger.committed_since("desk", "a", ledger.serial) is False


def test_past_what_it_remembers_it_does_not_know() -> None:
    ledger = Ledger(remember=2)
    checked = ledger.serial
    ledger.record("desk", "a")
    ledger.record("desk", "b")
    ledger.record("desk", "c")  # "a" is forgotten: it committed after ``checked``
    assert ledger.committed_since("desk", "a", checked) is None
    assert ledger.committed_since("desk", "z", checked) is None
    assert ledger.committed_since("desk", "a", 1) is False  # later commits of it are kept
    assert ledger.committed_since("desk", "c", ledger.serial - 1) is True
    assert ledger.committed_since("desk", "b", ledger.serial) is False


def test_a_namespace_count_changes_at_each_of_its_commits_and_only_then() -> None:
    ledger = Ledger()
    before = ledger.count("desk")
    ledger.record("desk", "a")
    desk = ledger.count("desk")
    assert desk != before
    ledger.record("sport", "a")
    assert ledger.count("desk") == desk  # another namespace's commit changes nothing here
    ledger.record("desk", "b")
    assert ledger.count("desk") != desk


def test_namespaces_remembered_are_bounded_and_a_forgotten_one_never_looks_unchanged() -> None:
    """Issue 40: a worker that sees 100,000 namespaces keeps the latest few only. A decision
    whose base was taken before its namespace was forgotten must not find the same count at
    a commit made after one of that namespace (that would skip the re-decision)."""
    ledger = Ledger(remember=8, namespaces=8)
    ledger.record("desk", "a")
    base = ledger.count("desk")
    for i in range(10_000):
        ledger.record(f"ns-{i}", "a")
    assert len(ledger) <= 16  # 8 namespaces, 8 documents, not 10,001 of each
    forgotten = ledger.count("desk")
    assert forgotten != base  # may only cause a decision to be made again
    ledger.record("desk", "b")
    assert ledger.count("desk") not in (base, forgotten)
    assert ledger.count("never-seen") <= ledger.serial
