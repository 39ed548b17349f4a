"""Bounded memory of namespaces: what a process keeps about each must not grow with them.

``RecentSet`` remembers the latest ``maxsize`` names added (a name forgotten is only checked
again); ``LastUse`` remembers when each namespace was last used, for as long as it may still
count as in use (older uses are dropped: the namespace is idle). Once a sweeper has asked
for them (:meth:`LastUse.take_idle`), the namespaces dropped since are kept for its next
sweep, at most ``most_idle`` of them: past that the sweeper is told it missed some.
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

    def __init__(
        self,
        keep_s: float,
        clock: Callable[[], float] = time.monotonic,
        most_idle: int = 10_000,
    ) -> None:
        if most_idle < 1:
            raise ValueError("most_idle must be at least 1")
        self.keep_s, self._clock = keep_s, clock
        self._used: OrderedDict[str, float] = OrderedDict()  # least recently used first
        self.started = clock()
        # Dropped since the sweeper's last take (None: no sweeper yet, nothing kept).
        self._idle: dict[str, None] | None = None
        self._most_idle, self._missed = most_idle, False

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
        """Drop the uses older than ``keep_s`` (kept for the sweeper, if one takes them)."""
        cutoff = self._clock() - self.keep_s
        while self._used:
            namespace, when = next(iter(self._used.items()))
            if when >= cutoff:
                return
            del self._used[namespace]
            if self._idle is not None:
                if len(self._idle) < self._most_idle:
                    self._idle[namespace] = None
                else:
                    self._missed = True

    def recent(self) -> list[str]:
        """The namespaces used in the last ``keep_s`` seconds."""
        self.prune()
        return list(self._used)

    def take_idle(self) -> tuple[list[str], bool]:
        """The namespaces that became idle since the last take (not used again since), and
        whether some were not kept (more than ``most_idle``; the first take has none):
        the sweeper must then find the idle ones another way (list them)."""
        self.prune()
        first = self._idle is None
        taken = [name for name in self._idle or () if name not in self._used]
        missed, self._idle, self._missed = self._missed or first, {}, False
        return taken, missed
