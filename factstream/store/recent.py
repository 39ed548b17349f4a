"""Bounded memory of namespaces: what a process keeps about each must not grow with them.

``RecentSet`` remembers the latest ``maxsize`` names added (a name forgotten is only checked
again); ``LastUse`` remembers when each namespace was last used, for as long as it may still
count as in use (older uses are dropped: the namespace is idle).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["LastUse", "RecentSet"]


class RecentSet:
    """A set of the ``maxsize`` names added or looked up most recently."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self._names: OrderedDict[str, None] = OrderedDict()
        self._maxsize = maxsize

    def __contains__(self, name: object) -> bool:
        if name not in self._names:
            return False
        self._names.move_to_end(name)  # type: ignore[arg-type]  # a str: it is a key
        return True

    def __len__(self) -> int:
        return len(self._names)

    def add(self, name: str) -> None:
        """Remember ``name``, forgetting the least recent if full."""
        self._names[name] = None
        self._names.move_to_end(name)
        while len(self._names) > self._maxsize:
            self._names.popitem(last=False)

    def discard(self, name: str) -> None:
        """Forget ``name`` if remembered."""
        self._names.pop(name, None)


class LastUse:
    """When each namespace was last used, for the namespaces used in the last ``keep_s``."""

    def __init__(self, keep_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep_s, self._clock = keep_s, clock
        self._used: OrderedDict[str, float] = OrderedDict()  # least recently used first
        self.started = clock()

    def __len__(self) -> int:
        return len(self._used)

    def used(self, namespace: str) -> None:
        """The namespace is in use now."""
        self._used[namespace] = self._clock()
        self._used.move_to_end(namespace)
        self.prune()

    def in_use(self, namespace: str) -> bool:
        """Whether it was used in the last ``keep_s`` seconds."""
        self.prune()
        return namespace in self._used

    def known_for(self) -> float:
        """Seconds since this began: before ``keep_s`` an unused namespace may be in use
        still, by this process before it started."""
        return self._clock() - self.started

    def prune(self) -> None:
        """Drop the uses older than ``keep_s``."""
        cutoff = self._clock() - self.keep_s
        while self._used:
            namespace, when = next(iter(self._used.items()))
            if when >= cutoff:
                return
            del self._used[namespace]
