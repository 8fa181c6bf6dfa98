"""Both services' connections to PostgreSQL: at most ``size`` of them, opened on first need, handed out in turn.

Why not ``asyncpg.Pool``: measured on this machine (uvloop, a real connection), its ``acquire`` and ``release``
cost 14 µs of CPU per use with a timeout and 10 µs without, against 0.3 µs for taking a connection from a
list; its release runs in a task of its own (``asyncio.shield``) and arms a timer. For the network supply
(one statement) that was a tenth of the API's CPU per request; an account page paid it three times. What the
services need of a pool is small, and is all here:

- at most ``size`` connections, each opened when a query needs one and none is free (so a worker that serves
  nothing holds none), with the session settings it is given (:func:`connection_set`, the one factory: the API's
  ``db/pool.session_settings``, the status service's ``status/db.session_settings``);
- a free connection is taken without waiting, and without arming a timer; when none is free and none may be
  opened, the query waits in arrival order (first in, first out) for one to be given back, at most ``timeout``
  seconds (then :class:`TimeoutError`, which the caller turns into ``503``);
- a connection the caller saw break is ended and leaves the set (:meth:`discard`), and the next query in line
  opens a new one; a free connection the server ended meanwhile is dropped when next taken: an outage ends by
  itself when the database is back, with no connection left dead;
- a connection left free longer than ``max_idle_seconds`` is retired (ended) when next taken, or when a
  connection given back finds it at the bottom of the free ones, and a new one is opened in its place: a
  firewall or NAT that forgets an idle connection without a word (the client cannot see it: the next query
  would hang or fail) never gets one older than that;
- :meth:`close` ends the free connections now and the busy ones when they are given back.

There is no reset on release: API sessions are read-only, run no transactions and leave no state behind; the
status service's writes run in ``conn.transaction()`` blocks, and :meth:`connection` ends a connection given
back inside a transaction instead of reusing it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import asyncpg

from ledgermirror.db.errors import CONNECTION_FAILURES, connection_is_broken

Connect = Callable[[], Awaitable[asyncpg.Connection]]

CONNECT_SECONDS = 5.0
"""The longest a new connection may take to open (its share of a query's wait for a connection)."""
MAX_IDLE_SECONDS = 180.0
"""The default for retiring a free connection: under the shortest idle timeout of common firewalls and load
balancers (four minutes), a new connection costs a few milliseconds once every three minutes at most."""


def connection_set(
    url: str,
    *,
    size: int,
    session: Mapping[str, str],
    max_idle_seconds: float = MAX_IDLE_SECONDS,
    statement_cache_size: int = 100,
) -> ConnectionSet:
    """The one factory of both services' connections: to ``url``, at most ``size``, each opened on need with the
    PostgreSQL settings ``session`` (``application_name``, timeouts, read-only...), none open yet."""
    server_settings = dict(session)

    async def connect() -> asyncpg.Connection:
        return await asyncpg.connect(
            url,
            timeout=CONNECT_SECONDS,
            statement_cache_size=statement_cache_size,
            server_settings=server_settings,
        )

    return ConnectionSet(connect, size, max_idle_seconds=max_idle_seconds)


class ConnectionSet:
    def __init__(
        self,
        connect: Connect,
        size: int,
        *,
        max_idle_seconds: float = MAX_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if size < 1:
            raise ValueError("a connection set holds at least one connection")
        if not max_idle_seconds > 0:
            raise ValueError("a connection's idle time bound must be positive")
        self._connect = connect
        self.size = size
        self.max_idle_seconds = max_idle_seconds
        self._clock = clock
        self._free: list[tuple[asyncpg.Connection, float]] = []
        """Free connections with when each was given back, the most recent last (taken first)."""
        self._opened = 0
        """Connections open or being opened (free and busy)."""
        self._waiting: deque[asyncio.Future[asyncpg.Connection | None]] = deque()
        self._closed = False

    def get_size(self) -> int:
        """Connections open now (or being opened), free or busy."""
        return self._opened

    async def acquire(self, timeout: float) -> asyncpg.Connection:
        """A connection of the set for the caller alone, until :meth:`release` or :meth:`discard`."""
        free = self._free
        while free and not self._waiting:
            conn, given_back = free.pop()
            if self._clock() - given_back > self.max_idle_seconds:
                self._retire(conn)  # free too long, and so is every one below it (given back earlier)
                while free:
                    self._retire(free.pop()[0])
                break
            if not conn.is_closed():
                return conn
            self._retire(conn)  # the server ended it while it was free (a restart, an administrator)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            if self._closed:
                raise asyncpg.InterfaceError("the connection set is closed")
            if self._opened < self.size:
                return await self._open(deadline)
            given = await self._wait(deadline)
            if given is not None:
                return given
            # None: a connection left the set; its place is ours to open (next turn of the loop)

    async def _open(self, deadline: float) -> asyncpg.Connection:
        self._opened += 1
        try:
            async with asyncio.timeout_at(deadline):
                return await self._connect()
        except BaseException:
            self._opened -= 1
            self._pass_place_on()
            raise

    async def _wait(self, deadline: float) -> asyncpg.Connection | None:
        waiter: asyncio.Future[asyncpg.Connection | None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            async with asyncio.timeout_at(deadline):
                return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                given = waiter.result()  # handed over as the wait ended otherwise: pass it on
                if given is not None:
                    self.release(given)
                else:
                    self._pass_place_on()
            else:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
            raise

    def _next_waiter(self) -> asyncio.Future[asyncpg.Connection | None] | None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                return waiter
        return None

    def _pass_place_on(self) -> None:
        """A place in the set came free (a connection left it, or one could not be opened): the first waiter, if
        any, opens the next connection."""
        waiter = self._next_waiter()
        if waiter is not None:
            waiter.set_result(None)

    def release(self, conn: asyncpg.Connection) -> None:
        """Give back a connection that is as good as it was taken."""
        if self._closed or conn.is_closed():
            self.discard(conn)
            return
        waiter = self._next_waiter()
        if waiter is not None:
            waiter.set_result(conn)
            return
        free = self._free
        now = self._clock()
        free.append((conn, now))
        while now - free[0][1] > self.max_idle_seconds:  # the oldest free ones, unused for too long
            self._retire(free.pop(0)[0])

    def _retire(self, conn: asyncpg.Connection) -> None:
        """End a free connection; its place is open again (nobody waits: a free connection means no waiter)."""
        conn.terminate()
        self._opened -= 1

    @contextlib.asynccontextmanager
    async def connection(self, timeout: float) -> AsyncIterator[asyncpg.Connection]:
        """A connection for an ``async with`` block (the status service), given back when the block ends. It is
        ended instead when the block ends with it inside a transaction, by a failure that broke it, or by a
        cancellation (its session may still be answering)."""
        conn = await self.acquire(timeout)
        try:
            yield conn
        except Exception as error:
            if conn.is_in_transaction() or (
                isinstance(error, CONNECTION_FAILURES) and connection_is_broken(error)
            ):
                self.discard(conn)
            else:
                self.release(conn)  # the statement's or the caller's fault, the session is as good as before
            raise
        except BaseException:
            self.discard(conn)
            raise
        if conn.is_in_transaction():
            self.discard(conn)
        else:
            self.release(conn)

    def discard(self, conn: asyncpg.Connection) -> None:
        """End a connection that must not serve another query; its place goes to the next in line."""
        conn.terminate()
        self._opened -= 1
        self._pass_place_on()

    async def close(self) -> None:
        self._closed = True
        free, self._free = self._free, []
        for waiter in self._waiting:
            if not waiter.done():
                waiter.set_exception(asyncpg.InterfaceError("the connection set is closed"))
        self._waiting.clear()
        for conn, _ in free:
            self._opened -= 1
            try:
                await conn.close(timeout=5)
            except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
                conn.terminate()


async def sibling(conn: asyncpg.Connection) -> asyncpg.Connection:
    """A new connection to ``conn``'s server and database, as its user, with its TLS mode and server settings,
    opened on the running event loop (the importer's background writer: its own thread and loop, so it cannot
    share ``conn``). asyncpg keeps what ``connect`` was given on the connection (``_addr``, ``_params``): read
    there, not reparsed from a URL the caller may not have."""
    addr: Any = getattr(conn, "_addr")  # noqa: B009 (not in asyncpg's stubs)
    params: Any = getattr(conn, "_params")  # noqa: B009
    if isinstance(addr, str):  # a Unix socket: <folder>/.s.PGSQL.<port>
        folder, _, name = addr.rpartition("/")
        host, port = folder, int(name.rsplit(".", 1)[1])
    else:
        host, port = addr[0], addr[1]
    mode = params.sslmode.name.replace("_", "-")
    ssl: Any = params.ssl if mode.startswith("verify") else mode
    connection: asyncpg.Connection = await asyncpg.connect(
        host=host,
        port=port,
        user=params.user,
        password=params.password,
        database=params.database,
        ssl=ssl,
        server_settings=params.server_settings,
        timeout=CONNECT_SECONDS * 2,
    )
    return connection
