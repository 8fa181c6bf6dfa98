"""Per-app state of the status service (settings, clock, pools, body cache, metrics), reached from each request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ledgermirror.clock import Clock
from ledgermirror.db.connections import MAX_IDLE_SECONDS, ConnectionSet
from ledgermirror.metrics.status import StatusMetrics
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.db import status_connections
from ledgermirror.ttl_cache import TtlCache

if TYPE_CHECKING:
    from ledgermirror.status.watcher import Watcher


@dataclass(slots=True)
class StatusState:
    settings: StatusSettings
    clock: Clock
    read_url: str
    write_url: str | None
    cache: TtlCache[bytes]
    metrics: StatusMetrics = field(default_factory=StatusMetrics)
    max_idle_seconds: float = MAX_IDLE_SECONDS
    """How long a free database connection is kept (``Settings.db_max_idle_seconds``)."""
    watcher: Watcher | None = None
    """The evaluator's loop, while automation runs."""
    _read: ConnectionSet | None = field(default=None)
    _write: ConnectionSet | None = field(default=None)

    async def open(self) -> None:
        idle = self.max_idle_seconds
        self._read = status_connections(
            self.read_url, size=self.settings.pool_max_size, read_only=True, max_idle_seconds=idle
        )
        if self.write_url is not None:
            self._write = status_connections(self.write_url, size=2, read_only=False, max_idle_seconds=idle)

    async def close(self) -> None:
        for pool in (self._read, self._write):
            if pool is not None:
                await pool.close()
        self._read = self._write = None

    def read_pool(self) -> ConnectionSet:
        assert self._read is not None, "the status app is not started"
        return self._read

    def write_pool(self) -> ConnectionSet | None:
        return self._write
