"""What one document or one question costs, counted (issue 37): Weaviate requests and their
milliseconds by store method, Kafka requests by kind, texts embedded (and those embedded
before), and the main thread's CPU in named pure-Python steps (grounding, time parsing, the
candidates' cosines). Steps called per object (decoding each stored fact) are left to
py-spy: timing each call would cost more than the call. Counts do not move with the
machine's load; milliseconds do.

``Counting`` patches these in for one stretch of a run and takes them out after:

- Weaviate: every public ``WeaviateFactStore`` coroutine is timed (wall ms, awaits of other
  tasks included); its requests are the reads (``_objects``) and batch writes (``_write``)
  it sends, and a batch record's insert (one per ``record_batch``).
- Kafka: every request ``aiokafka`` sends a broker (``AIOKafkaClient.send``), by kind
  (Produce, AddPartitionsToTxn, EndTxn ...), with its round trip's wall ms.
- CPU: ``time.thread_time`` around the functions named in ``_STEPS``, wherever a
  ``factstream`` module bound them; only the outermost call of a step counts.
"""

from __future__ import annotations

import contextvars
import functools
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from aiokafka.client import AIOKafkaClient

from factstream.store.weaviate_store import WeaviateFactStore

__all__ = ["Counting", "Tally"]

# Step name -> (module, function): pure-Python work timed in thread CPU.
_STEPS: dict[str, tuple[tuple[str, str], ...]] = {
    "grounding": (
        ("factstream.edit.grounding", "check_grounded"),
        ("factstream.edit.persons", "unresolved_person"),
    ),
    "time parsing": (
        ("factstream.temporal.parse", "parse_time"),
        ("factstream.temporal.parse", "find_times"),
        ("factstream.temporal.parse", "strip_time"),
    ),
    "candidate cosines": (("factstream.store.rules", "similarities"),),
}
_PUBLIC = (
    "search",
    "get",
    "get_stored",
    "list_facts",
    "upsert",
    "count_facts",
    "applied_batch",
    "record_batch",
    "namespaces",
)
_method: contextvars.ContextVar[str] = contextvars.ContextVar("store_method", default="-")


class Tally:
    """Calls and seconds by key."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def add(self, key: str, seconds: float, calls: int = 1) -> None:
        self.calls[key] += calls
        self.seconds[key] += seconds

    def per(self, units: int, unit: str) -> dict[str, dict[str, float]]:
        """Per key: calls and ms per ``unit``, ms a call."""
        return {
            key: {
                f"calls_per_{unit}": round(self.calls[key] / units, 3),
                f"ms_per_{unit}": round(self.seconds[key] * 1000 / units, 3),
                "ms_per_call": round(self.seconds[key] * 1000 / self.calls[key], 3),
            }
            for key in sorted(self.calls, key=lambda k: -self.seconds[k])
            if self.calls[key]
        }


class Counting:
    """The counters of one stretch of a run (see the module docstring)."""

    def __init__(self) -> None:
        self.store = Tally()  # public store methods: calls, wall seconds
        self.requests: Counter[str] = Counter()  # Weaviate requests by the store method
        self.kafka = Tally()  # broker requests by kind
        self.cpu = Tally()  # thread CPU seconds by step
        self.texts: list[str] = []  # texts embedded, in order (RecordingEmbedder's calls)
        self._depth = threading.local()

    def embedded(self, calls: Sequence[Sequence[str]]) -> None:
        self.texts = [t for call in calls for t in call]

    def texts_summary(self, units: int, unit: str) -> dict[str, Any]:
        seen: set[str] = set()
        repeated = 0
        for text in self.texts:
            repeated += text in seen
            seen.add(text)
        return {
            "texts": len(self.texts),
            "distinct": len(seen),
            "embedded_again": repeated,
            f"texts_per_{unit}": round(len(self.texts) / units, 3),
            f"embedded_again_per_{unit}": round(repeated / units, 3),
        }

    def summary(self, units: int, unit: str) -> dict[str, Any]:
        requests = sum(self.requests.values())
        store_ms = sum(self.store.seconds.values()) * 1000
        return {
            "weaviate_requests_per_" + unit: round(requests / units, 3),
            "weaviate_requests_by_method": {
                k: round(v / units, 3) for k, v in self.requests.most_common()
            },
            "store_ms_per_" + unit: round(store_ms / units, 2),
            "store_methods": self.store.per(units, unit),
            "kafka_round_trips_per_" + unit: round(sum(self.kafka.calls.values()) / units, 3),
            "kafka_requests": self.kafka.per(units, unit),
            "embedded": self.texts_summary(units, unit),
            "cpu_ms_per_" + unit: {
                k: v[f"ms_per_{unit}"] for k, v in self.cpu.per(units, unit).items()
            },
        }

    @contextmanager
    def installed(self) -> Iterator[Counting]:
        undo: list[Callable[[], None]] = []
        try:
            self._patch_store(undo)
            self._patch_kafka(undo)
            for step, places in _STEPS.items():
                for module, name in places:
                    self._patch_step(step, module, name, undo)
            yield self
        finally:
            for restore in reversed(undo):
                restore()

    def _set(self, owner: Any, name: str, value: Any, undo: list[Callable[[], None]]) -> None:
        old = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, value)
        undo.append(lambda: setattr(owner, name, old))

    def _patch_store(self, undo: list[Callable[[], None]]) -> None:
        counting = self
        for name in _PUBLIC:
            inner = getattr(WeaviateFactStore, name)

            def timed(inner: Any = inner, name: str = name) -> Any:
                @functools.wraps(inner)
                async def wrapper(*args: Any, **kwargs: Any) -> Any:
                    token = _method.set(name)
                    started = time.perf_counter()
                    try:
                        return await inner(*args, **kwargs)
                    finally:
                        counting.store.add(name, time.perf_counter() - started)
                        if name == "record_batch":
                            counting.requests[name] += 1  # one insert
                        _method.reset(token)

                return wrapper

            self._set(WeaviateFactStore, name, timed(), undo)
        for private in ("_objects", "_write"):
            inner = getattr(WeaviateFactStore, private)

            def counted(inner: Any = inner) -> Any:
                @functools.wraps(inner)
                async def wrapper(*args: Any, **kwargs: Any) -> Any:
                    counting.requests[_method.get()] += 1
                    return await inner(*args, **kwargs)

                return wrapper

            self._set(WeaviateFactStore, private, counted(), undo)

    def _patch_kafka(self, undo: list[Callable[[], None]]) -> None:
        counting, inner = self, AIOKafkaClient.send

        @functools.wraps(inner)
        async def send(self: AIOKafkaClient, node_id: int, request: Any, **kwargs: Any) -> Any:
            kind = type(request).__name__.split("_v")[0].removesuffix("Request")
            started = time.perf_counter()
            try:
                return await inner(self, node_id, request, **kwargs)
            finally:
                counting.kafka.add(kind, time.perf_counter() - started)

        self._set(AIOKafkaClient, "send", send, undo)

    def _patch_step(
        self, step: str, module: str, name: str, undo: list[Callable[[], None]]
    ) -> None:
        original = getattr(sys.modules[module], name)
        counting = self

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(counting._depth, step, 0)
            if depth:
                return original(*args, **kwargs)
            setattr(counting._depth, step, 1)
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                counting.cpu.add(step, time.thread_time() - started)
                setattr(counting._depth, step, 0)

        # Every factstream module that bound the function by name (from ... import).
        for mod in list(sys.modules.values()):
            if not getattr(mod, "__name__", "").startswith("factstream"):
                continue
            for attr, value in list(vars(mod).items()):
                if value is original:
                    self._set(mod, attr, wrapper, undo)
