"""The editor's count of its commits: per namespace, and which documents the latest were.

A decision made early (agents/window.py) records what it found against these counts, so
that its commit knows what it need not read again:

- ``count(namespace)``: a number that changes whenever a commit of the namespace begins
  (the serial of its latest commit). A decision retrieved with the same number at its
  commit saw the knowledge base its commit sees (its ``base``). The latest ``namespaces``
  namespaces are remembered; any other answers the newest serial forgotten, which is at
  least its own latest and changes when more are forgotten: a count that changes without
  a commit only makes a decision be made again, never one kept that should not be. So the
  ledger's size does not grow with the namespaces the worker has seen.
- ``serial``: commits of every namespace. A decision that found its document not applied
  (its ``checked``) finds it so at the commit too unless a commit of that same document
  began since (``committed_since``): a document's applied batch is written only by its own
  commit, and the worker owning the partition commits its documents one at a time.

The documents of the latest ``remember`` commits are kept; an older ``checked`` is not
known (None), and the commit then reads the store.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["Ledger"]


class Ledger:
    """Commits begun, counted per namespace and in all; the documents of the latest."""

    def __init__(self, remember: int = 4096, namespaces: int = 4096) -> None:
        self.serial = 0  # commits begun, all namespaces
        # namespace -> the serial of its latest commit, least recently committed first
        self._namespaces: OrderedDict[str, int] = OrderedDict()
        self._most_namespaces = max(namespaces, 1)
        self._namespace_forgotten = 0  # the newest serial dropped from ``_namespaces``
        # (namespace, document id) -> the serial of its latest commit, oldest first
        self._latest: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._remember = max(remember, 1)
        self._forgotten = 0  # the newest serial dropped from ``_latest``

    def __len__(self) -> int:
        """Namespaces and documents remembered (bounded by the constructor's arguments)."""
        return len(self._namespaces) + len(self._latest)

    def count(self, namespace: str) -> int:
        """Changes whenever a commit of ``namespace`` begins (see the module docstring)."""
        return self._namespaces.get(namespace, self._namespace_forgotten)

    def record(self, namespace: str, document_id: str) -> None:
        """Count a commit of the document (whatever it wrote, if anything)."""
        self.serial += 1
        self._namespaces.pop(namespace, None)
        self._namespaces[namespace] = self.serial
        while len(self._namespaces) > self._most_namespaces:
            _, serial = self._namespaces.popitem(last=False)
            self._namespace_forgotten = max(self._namespace_forgotten, serial)
        key = (namespace, document_id)
        self._latest.pop(key, None)
        self._latest[key] = self.serial
        while len(self._latest) > self._remember:
            _, serial = self._latest.popitem(last=False)
            self._forgotten = max(self._forgotten, serial)

    def committed_since(self, namespace: str, document_id: str, serial: int) -> bool | None:
        """Whether a commit of the document was counted after ``serial``; None: not known
        (commits since then have been forgotten)."""
        if serial < self._forgotten:
            return None
        latest = self._latest.get((namespace, document_id))
        return latest is not None and latest > serial
