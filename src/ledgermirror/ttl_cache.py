"""The one bounded TTL cache: rendered API answers (``api/context.py``), decoded fee schedules, and the status
service's rendered bodies all use :class:`TtlCache`.

Entries live for their own ``ttl_seconds`` (or the cache's default) on an injectable clock (``time.monotonic`` by
default; the status service passes its clock so tests can move time). The cache is bounded (least recently used
entries go first) and can be cleared.

A value computed from a read that began before a :meth:`clear` must not outlive the clear: a reader takes
:attr:`generation` before it reads and passes it to :meth:`put`, which drops the value if the cache was cleared
since (the status page once kept a body read just before the evaluator's write for the cache's whole lifetime).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class TtlCache(Generic[V]):
    def __init__(
        self, capacity: int, *, ttl_seconds: float = 0.0, now: Callable[[], float] = time.monotonic
    ) -> None:
        """``ttl_seconds`` is the default lifetime of :meth:`put`; ``now`` returns seconds."""
        self.capacity = capacity
        self.ttl_seconds = ttl_seconds
        self._now = now
        self._entries: OrderedDict[str, tuple[float, V]] = OrderedDict()
        self.generation = 0
        """How many times the cache was cleared."""

    def get(self, key: str) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires <= self._now():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: str, value: V, ttl_seconds: float | None = None, *, read_in: int | None = None) -> None:
        """Keep ``value``; ``read_in`` is the :attr:`generation` taken before the value was read: if the cache was
        cleared since, the value may predate the write that cleared it and is not kept."""
        ttl = self.ttl_seconds if ttl_seconds is None else ttl_seconds
        if self.capacity <= 0 or ttl <= 0 or (read_in is not None and read_in != self.generation):
            return
        self._entries[key] = (self._now() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()
        self.generation += 1

    def __len__(self) -> int:
        return len(self._entries)
