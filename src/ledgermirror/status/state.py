"""Per-app state of the status service (settings, clock, pools, body cache, metrics), reached from each request."""

from __future__ import annotations

from dataclasses import dataclass, field

import asyncpg

from ledgermirror.clock import Clock
from ledgermirror.metrics.status import StatusMetrics
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.db import create_pool
from ledgermirror.ttl_cache import TtlCache


@dataclass(slots=True)
class StatusState:
    settings: StatusSettings
    clock: Clock
    read_url: str
    write_url: str | None
    cache: TtlCache[bytes]
    metrics: StatusMetrics = field(default_factory=StatusMetrics)
    _read: asyncpg.Pool | None = field(default=None)
    _write: asyncpg.Pool | None = field(default=None)

    async def open(self) -> None:
        self._read = await create_pool(self.read_url, max_size=self.settings.pool_max_size, read_only=True)
        if self.write_url is not None:
            self._write = await create_pool(self.write_url, max_size=2, read_only=False)

    async def close(self) -> None:
        for pool in (self._read, self._write):
            if pool is not None:
                await pool.close()
        self._read = self._write = None

    def read_pool(self) -> asyncpg.Pool:
        assert self._read is not None, "the status app is not started"
        return self._read

    def write_pool(self) -> asyncpg.Pool | None:
        return self._write
