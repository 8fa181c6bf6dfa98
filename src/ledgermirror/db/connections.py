"""The API's connections to PostgreSQL: at most ``size`` of them, opened on first need, handed out in turn.

Why not ``asyncpg.Pool``: measured on this machine (uvloop, a real connection), its ``acquire`` and ``release``
cost 14 µs of CPU per use with a timeout and 10 µs without, against 0.3 µs for taking a connection from a
list; its release runs in a task of its own (``asyncio.shield``) and arms a timer. For the network supply
(one statement) that was a tenth of the API's CPU per request; an account page paid it three times. What the
API needs of a pool is small, and is all here:

- at most ``size`` connections, each opened when a query needs one and none is free (so a worker that serves
  nothing holds none) by the `connect` it is given (`db/pool.create_pool`: the API's session settings);
- a free connection is taken without waiting, and without arming a timer; when none is free and none may be
  opened, the query waits in arrival order (first in, first out) for one to be given back, at most ``timeout``
  seconds (then :class:`TimeoutError`, which the caller turns into ``503``);
- a connection the caller saw break is ended and leaves the set (:meth:`discard`), and the next query in line
  opens a new one; a free connection the server ended meanwhile is dropped when next taken: an outage ends by
  itself when the database is back, with no connection left dead;
- :meth:`close` ends the free connections now and the busy ones when they are given back.

There is no reset on release: API sessions are read-only, run no transactions and leave no state behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable

import asyncpg

Connect = Callable[[], Awaitable[asyncpg.Connection]]


class ConnectionSet:
    def __init__(self, connect: Connect, size: int) -> None:
        if size < 1:
            raise ValueError("a connection set holds at least one connection")
        self._connect = connect
        self.size = size
        self._free: list[asyncpg.Connection] = []
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
            conn = free.pop()
            if not conn.is_closed():
                return conn
            conn.terminate()  # the server ended it while it was free (a restart, an administrator)
            self._opened -= 1
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
        else:
            self._free.append(conn)

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
        for conn in free:
            self._opened -= 1
            try:
                await conn.close(timeout=5)
            except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
                conn.terminate()
