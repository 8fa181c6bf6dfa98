"""The API's connections and the single door through which it queries.

The connections (:class:`~ledgermirror.db.connections.ConnectionSet`) live on the application state (no
globals). They are read-only sessions with a statement timeout, so every query has a time budget. Connection
loss and timeouts become :class:`~ledgermirror.db.errors.DatabaseUnavailable` (the API answers it with 503); a
broken connection is ended, and the next query opens a new one once the database is back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import asyncpg

from ledgermirror.db.connections import ConnectionSet, connection_set
from ledgermirror.db.errors import CONNECTION_FAILURES, DatabaseUnavailable, connection_is_broken
from ledgermirror.db.sql import Statement
from ledgermirror.settings import Settings

T = TypeVar("T")


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


def api_connections(url: str, settings: Settings) -> ConnectionSet:
    """The API's connections to ``url`` (:func:`~ledgermirror.db.connections.connection_set` with the API's
    session settings): none open until a query needs one, ``pool_max_size`` at most."""
    return connection_set(
        url,
        size=settings.pool_max_size,
        session=session_settings(settings),
        max_idle_seconds=settings.db_max_idle_seconds,
        statement_cache_size=settings.statement_cache_size,
    )


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
        self, pool: ConnectionSet, acquire_timeout: float = 5.0, observer: PoolObserver | None = None
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
        """Run ``work`` on a connection of the set. A connection-level failure (the server went away mid-query,
        the protocol lost its state) ends that connection, so it never serves the next request, and so does a
        query abandoned half-way (cancelled); every such failure is :class:`DatabaseUnavailable`."""
        pool = self.pool
        self.waiting += 1
        try:
            conn = await pool.acquire(self.acquire_timeout)
        except CONNECTION_FAILURES as error:
            self.observer.failed()
            raise DatabaseUnavailable(str(error) or type(error).__name__) from error
        finally:
            self.waiting -= 1
        self.in_use += 1
        try:
            result = await work(conn)
        except CONNECTION_FAILURES as error:
            if isinstance(error, asyncpg.QueryCanceledError):
                self.observer.timed_out()
            if connection_is_broken(error):
                pool.discard(conn)
            else:
                pool.release(conn)
            self.observer.failed()
            raise DatabaseUnavailable(str(error) or type(error).__name__) from error
        except Exception:
            pool.release(conn)  # the statement's fault (bad input, a bug), not the session's
            raise
        except BaseException:
            pool.discard(conn)  # cancelled mid-query: the session may still be answering
            raise
        finally:
            self.in_use -= 1
        pool.release(conn)
        return result

    async def close(self) -> None:
        await self.pool.close()
