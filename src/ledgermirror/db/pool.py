"""The API's connections and the single door through which it queries.

The connections (:class:`~ledgermirror.db.connections.ConnectionSet`) live on the application state (no
globals). They are read-only sessions with a statement timeout, so every query has a time budget. Connection
loss and timeouts become :class:`~ledgermirror.db.errors.DatabaseUnavailable` (the API answers it with 503); a
broken connection is ended, and the next query opens a new one once the database is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextvars import ContextVar, Token
from typing import Any, Protocol, TypeVar

import asyncpg

from ledgermirror.db.connections import ConnectionSet, connection_set
from ledgermirror.db.errors import CONNECTION_FAILURES, DatabaseUnavailable, connection_is_broken
from ledgermirror.db.replicas import PROBE, Floor, Member, describe, split_urls
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


def api_database(
    urls: str,
    settings: Settings,
    observer: PoolObserver | None = None,
    *,
    stamp: Callable[[int], dict[str, str]] | None = None,
) -> Database:
    """The API's :class:`Database` over each URL of ``urls`` (one, or several comma-separated: read replicas,
    optionally the primary last; ``db/replicas.split_urls``), each with its own :func:`api_connections`.
    ``stamp`` makes each member's freshness headers from its newest consensus timestamp (``Member.headers``)."""
    listed = split_urls(urls)
    return Database(
        [api_connections(url, settings) for url in listed],
        observer=observer,
        labels=[describe(url) for url in listed],
        max_lag_seconds=settings.replica_max_lag_seconds,
        stamp=stamp,
    )


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
    """The API's door to its databases: one (``pool``), or several read replicas and optionally the primary
    (``db/replicas.py``). With several, each query goes to a usable member (answering, replay lag within the
    bound): the one serving fewest queries now. A request pins one member for all its queries (:meth:`pinned`),
    so its answer is one database's; a query whose member fails at the connection level is run again once on
    another usable member, and the failed one is left until a probe finds it well again."""

    def __init__(
        self,
        pool: ConnectionSet | Sequence[ConnectionSet],
        acquire_timeout: float = 5.0,
        observer: PoolObserver | None = None,
        *,
        labels: Sequence[str] = (),
        max_lag_seconds: float = 30.0,
        stamp: Callable[[int], dict[str, str]] | None = None,
    ) -> None:
        pools = [pool] if isinstance(pool, ConnectionSet) else list(pool)
        if not pools:
            raise ValueError("the API reads from at least one database")
        names = list(labels) or [f"database {number}" for number in range(1, len(pools) + 1)]
        self.members = [
            Member(name, member_pool, max_lag_seconds=max_lag_seconds, stamp=stamp)
            for name, member_pool in zip(names, pools, strict=True)
        ]
        self.single = self.members[0] if len(self.members) == 1 else None
        """The only database, when there is one: nothing to choose (requests need not be pinned)."""
        self._turn = 0
        self._pinned: ContextVar[Member | None] = ContextVar("pinned_member", default=None)
        self.acquire_timeout = acquire_timeout
        self.observer: PoolObserver = observer if observer is not None else _Unobserved()
        self.waiting = 0
        """Queries waiting for a connection now (read by the metrics sampler; plain ints cost nothing)."""
        self.in_use = 0
        """Queries holding a connection now."""

    @property
    def pool(self) -> ConnectionSet:
        """The first database's connections (the only one's, with one database)."""
        return self.members[0].pool

    def open_connections(self) -> int:
        return sum(member.pool.get_size() for member in self.members)

    def fetch(self, statement: Statement) -> Coroutine[Any, Any, list[asyncpg.Record]]:
        """The statement's rows (awaited). Not a coroutine of its own: the one that runs the statement is
        returned, and with one database it is :meth:`_query_on`'s (two coroutines fewer for every statement,
        each resumed when the rows arrive)."""
        work: Callable[[Any], Awaitable[list[asyncpg.Record]]] = lambda conn: conn.fetch(  # noqa: E731
            statement.text, *statement.args
        )
        single = self.single
        return self._query(work) if single is None else self._query_on(single, work)

    async def fetchval(self, text: str, *args: Any) -> Any:
        return await self._query(lambda conn: conn.fetchval(text, *args))

    def choose(self, floor: Floor | None = None, avoid: Member | None = None) -> Member:
        """The member a request reads from: a usable one holding what ``floor`` asks (a next link's bounds,
        ``api/freshness.floor_of``; with ``floor.freshest``, one of those with the newest consensus data), the
        least busy, in turn on ties; else the freshest usable one; else, when none is usable, any but ``avoid``
        (its failure is then the answer)."""
        if self.single is not None:
            return self.single
        members = [member for member in self.members if member is not avoid] or self.members
        usable = [member for member in members if member.usable]
        if not usable:
            return members[self._next_turn() % len(members)]
        if floor is not None:
            fresh = [member for member in usable if member.holds(floor)]
            if fresh and floor.freshest:
                newest = max(member.newest_ns or 0 for member in fresh)
                fresh = [member for member in fresh if (member.newest_ns or 0) == newest]
            if not fresh:
                return max(usable, key=lambda member: member.newest_ns or 0)
            usable = fresh
        least = min(member.in_use for member in usable)
        idle = [member for member in usable if member.in_use == least]
        return idle[self._next_turn() % len(idle)]

    def freshest(self) -> Member:
        """The usable member with the newest consensus data (any member when none is usable)."""
        usable = [member for member in self.members if member.usable] or self.members
        return max(usable, key=lambda member: member.newest_ns or 0)

    @property
    def replicated(self) -> bool:
        """Reads go to a standby (or may): a ``NOTIFY`` from the importer cannot reach them from there."""
        return len(self.members) > 1 or self.members[0].standby

    def _next_turn(self) -> int:
        self._turn += 1
        return self._turn

    @contextlib.contextmanager
    def pinned(self, floor: Floor | None = None, member: Member | None = None) -> Iterator[Member]:
        """Every query inside the block (in this task) goes to one member: ``member``, or one chosen now
        (:meth:`choose`)."""
        member = member or self.choose(floor)
        token = self.pin(member)
        try:
            yield member
        finally:
            self.unpin(token)

    def pin(self, member: Member) -> Token[Member | None]:
        """:meth:`pinned` without a context manager (for a long-lived task: no generator held while it runs);
        every query of the task goes to ``member`` until :meth:`unpin` with the token returned."""
        return self._pinned.set(member)

    def unpin(self, token: Token[Member | None]) -> None:
        self._pinned.reset(token)

    def current(self) -> Member | None:
        """The member the running request is pinned to, if any."""
        return self._pinned.get()

    async def _query(self, work: Callable[[Any], Awaitable[T]]) -> T:
        if self.single is not None:
            return await self._query_on(self.single, work)
        member = self._pinned.get() or self.choose()
        try:
            return await self._query_on(member, work)
        except DatabaseUnavailable as error:
            if not isinstance(error.__cause__, CONNECTION_FAILURES):
                raise
            if isinstance(error.__cause__, asyncpg.QueryCanceledError):
                raise  # the statement's time ran out: another database would take as long
            member.failed()
            other = self.choose(avoid=member)
            if other is member or not other.usable:
                raise
            if self._pinned.get() is member:
                self._pinned.set(other)
            return await self._query_on(other, work)

    async def _query_on(self, member: Member, work: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``work`` on a connection of ``member``. A connection-level failure (the server went away
        mid-query, the protocol lost its state) ends that connection, so it never serves the next request, and
        so does a query abandoned half-way (cancelled); every such failure is :class:`DatabaseUnavailable`."""
        pool = member.pool
        self.waiting += 1
        try:
            conn = await pool.acquire(self.acquire_timeout)
        except CONNECTION_FAILURES as error:
            self.observer.failed()
            raise DatabaseUnavailable(str(error) or type(error).__name__) from error
        finally:
            self.waiting -= 1
        self.in_use += 1
        member.in_use += 1
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
            member.in_use -= 1
        pool.release(conn)
        return result

    async def probe(self, member: Member, timeout: float) -> None:
        """Ask ``member`` how it is (``db/replicas.PROBE``) and record the answer, or its failure."""
        try:
            async with asyncio.timeout(timeout):
                rows = await self._query_on(member, lambda conn: conn.fetch(PROBE))
        except (DatabaseUnavailable, TimeoutError, asyncpg.PostgresError):
            member.failed()
            return
        member.record(rows[0], time.monotonic())

    async def probe_all(self, timeout: float) -> None:
        """Probe every member at once."""
        await asyncio.gather(*(self.probe(member, timeout) for member in self.members))

    async def watch(self, every_seconds: float) -> None:
        """Probe every member every ``every_seconds``, for ever (the app's lifespan runs it as a task)."""
        while True:
            await self.probe_all(timeout=max(every_seconds, 1.0))
            await asyncio.sleep(every_seconds)

    async def close(self) -> None:
        for member in self.members:
            await member.pool.close()
