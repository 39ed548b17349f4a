"""The editor's commit counts (agents/ledger.py): what a commit need not read again."""

from __future__ import annotations

from factstream.agents.ledger import Ledger


def test_only_a_commit_of_the_same_document_counts_as_committed_since() -> None:
    ledger = Ledger()
    ledger.record("desk", "a")
    checked = ledger.serial
    ledger.record("desk", "b")
    ledger.record("sport", "a")  # the same id in another namespace is another document
    assert ledger.count("desk") == 2 and ledger.count("sport") == 1 and ledger.serial == 3
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
