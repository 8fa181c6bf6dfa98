"""The API's connection pool and the single door through which it queries.

The pool lives on the application state (no globals). Connections are read-only sessions with a statement
timeout, so every query has a time budget. Connection loss and timeouts become
:class:`~ledgermirror.db.errors.DatabaseUnavailable` (the API answers it with 503); the pool reconnects by itself
on the next request once the database is back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import asyncpg

from ledgermirror.db.errors import CONNECTION_FAILURES, DatabaseUnavailable, connection_is_broken
from ledgermirror.db.sql import Statement
from ledgermirror.settings import Settings

T = TypeVar("T")


async def _no_reset(conn: asyncpg.Connection) -> None:
    """A read-only API leaves no session state behind; skipping asyncpg's reset saves ~40% of server CPU."""


def session_settings(settings: Settings) -> dict[str, str]:
    """The PostgreSQL settings of every API session.

    - read-only transactions, and each statement's time budget;
    - ``plan_cache_mode``: by default each prepared statement is planned once per connection
      (``force_generic_plan``). PostgreSQL's ``auto`` keeps planning again on every execution whenever the
      generic plan's estimate looks dearer than a custom one's, which for the API's range and keyset
      conditions is nearly always: planning was half of PostgreSQL's time on an account page;
    - no parallel workers (``max_parallel_workers_per_gather``): an API query reads a page through an index in
      well under a millisecond, and a parallel plan only adds the cost of starting a worker process. A generic
      plan reads ``LIMIT $n`` as a tenth of the table, which made the token list a parallel plan 100 times
      slower on a server with parallel workers (``bench/plans`` shows the plan each statement really gets).
    """
    return {
        "application_name": "ledgermirror-api",
        "default_transaction_read_only": "on",
        "statement_timeout": str(settings.statement_timeout_ms),
        "plan_cache_mode": settings.plan_cache_mode,
        "max_parallel_workers_per_gather": str(settings.parallel_workers_per_query),
    }


async def create_pool(dsn: str, settings: Settings) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(
        dsn,
        min_size=0,
        max_size=settings.pool_max_size,
        max_inactive_connection_lifetime=300,
        statement_cache_size=settings.statement_cache_size,
        reset=_no_reset,
        timeout=5,
        server_settings=session_settings(settings),
    )
    assert pool is not None
    return pool


class PoolObserver(Protocol):
    """Who is told of failures (the API's metrics); the data layer knows nothing more of it."""

    def timed_out(self) -> None: ...
    def failed(self) -> None: ...


class _Unobserved:
    def timed_out(self) -> None:
        pass

    def failed(self) -> None:
        pass


class Database:
    def __init__(
        self, pool: asyncpg.Pool, acquire_timeout: float = 5.0, observer: PoolObserver | None = None
    ) -> None:
        self.pool = pool
        self.acquire_timeout = acquire_timeout
        self.observer: PoolObserver = observer if observer is not None else _Unobserved()
        self.waiting = 0
        """Queries waiting for a connection now (read by the metrics sampler; plain ints cost nothing)."""
        self.in_use = 0
        """Queries holding a connection now."""

    async def fetch(self, statement: Statement) -> list[asyncpg.Record]:
        rows: list[asyncpg.Record] = await self._query(lambda conn: conn.fetch(statement.text, *statement.args))
        return rows

    async def fetchval(self, text: str, *args: Any) -> Any:
        return await self._query(lambda conn: conn.fetchval(text, *args))

    async def _query(self, work: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``work`` on a pooled connection. A connection-level failure (the server went away mid-query, the
        protocol lost its state) terminates that connection, so the pool never hands it to the next request;
        every such failure is :class:`DatabaseUnavailable`."""
        self.waiting += 1
        waiting = True
        try:
            async with self.pool.acquire(timeout=self.acquire_timeout) as conn:
                self.waiting -= 1
                waiting = False
                self.in_use += 1
                try:
                    return await work(conn)
                except CONNECTION_FAILURES as error:
                    if isinstance(error, asyncpg.QueryCanceledError):
                        self.observer.timed_out()
                    if connection_is_broken(error):
                        # asyncpg may already have taken a connection it saw die back from this proxy
                        # (InterfaceError: "released back to the pool"): then there is nothing left to end
                        with contextlib.suppress(asyncpg.InterfaceError):
                            conn.terminate()
                    raise
                finally:
                    self.in_use -= 1
        except CONNECTION_FAILURES as error:
            self.observer.failed()
            raise DatabaseUnavailable(str(error) or type(error).__name__) from error
        finally:
            if waiting:
                self.waiting -= 1

    async def close(self) -> None:
        await self.pool.close()
