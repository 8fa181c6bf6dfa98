"""``db/connections.ConnectionSet`` against the embedded PostgreSQL: opened on need, never more than its size,
handed over first in first out, a waiter's time bound, broken connections replaced, idle ones retired, the
``async with`` block of the status service, closing."""

from __future__ import annotations

import asyncio
import socket
import struct
from urllib.parse import parse_qs, urlsplit

import asyncpg
import pytest

from ledgermirror.db.connections import ConnectionSet
from ledgermirror.db.errors import DatabaseUnavailable
from ledgermirror.db.pool import Database
from ledgermirror.runtime import Prepared


def _set(url: str, size: int) -> tuple[ConnectionSet, list[asyncpg.Connection]]:
    opened: list[asyncpg.Connection] = []

    async def connect() -> asyncpg.Connection:
        conn = await asyncpg.connect(url)
        opened.append(conn)
        return conn

    return ConnectionSet(connect, size), opened


def test_connections_are_opened_on_need_and_reused(database: Prepared) -> None:
    async def run() -> None:
        pool, opened = _set(database.api_url, 2)
        assert pool.get_size() == 0
        first = await pool.acquire(5)
        assert await first.fetchval("select 1") == 1
        pool.release(first)
        again = await pool.acquire(5)
        assert again is first and len(opened) == 1  # a free connection is reused, none opened
        second = await pool.acquire(5)
        assert second is not first and pool.get_size() == 2
        pool.release(again)
        pool.release(second)
        await pool.close()
        assert pool.get_size() == 0 and all(conn.is_closed() for conn in opened)

    asyncio.run(run())


def test_waiters_are_served_in_arrival_order(database: Prepared) -> None:
    async def run() -> None:
        pool, opened = _set(database.api_url, 1)
        held = await pool.acquire(5)
        served: list[int] = []

        async def wait(number: int) -> None:
            conn = await pool.acquire(5)
            served.append(number)
            await asyncio.sleep(0)
            pool.release(conn)

        tasks = [asyncio.create_task(wait(number)) for number in range(5)]
        await asyncio.sleep(0.01)
        assert served == []  # nobody gets more than the set's one connection
        pool.release(held)
        await asyncio.gather(*tasks)
        assert served == [0, 1, 2, 3, 4]
        assert len(opened) == 1
        await pool.close()

    asyncio.run(run())


def test_a_waiter_gives_up_after_its_timeout_and_leaves_the_line(database: Prepared) -> None:
    async def run() -> None:
        pool, _ = _set(database.api_url, 1)
        held = await pool.acquire(5)
        with pytest.raises(TimeoutError):
            await pool.acquire(0.05)
        pool.release(held)  # nobody is waiting any more: the connection is free again
        assert await pool.acquire(0.05) is held
        pool.release(held)
        await pool.close()

    asyncio.run(run())


def test_a_connection_handed_over_as_its_waiter_is_cancelled_is_passed_on(database: Prepared) -> None:
    async def run() -> None:
        pool, _ = _set(database.api_url, 1)
        held = await pool.acquire(5)
        waiter = asyncio.create_task(pool.acquire(5))
        await asyncio.sleep(0.01)
        pool.release(held)  # given to the waiter...
        waiter.cancel()  # ...which is cancelled before it could run
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert await pool.acquire(0.05) is held  # not lost
        pool.release(held)
        await pool.close()

    asyncio.run(run())


def test_a_discarded_connection_is_ended_and_the_next_in_line_opens_another(database: Prepared) -> None:
    async def run() -> None:
        pool, opened = _set(database.api_url, 1)
        broken = await pool.acquire(5)
        waiter = asyncio.create_task(pool.acquire(5))
        await asyncio.sleep(0.01)
        pool.discard(broken)
        replacement = await waiter
        assert broken.is_closed() and replacement is not broken and len(opened) == 2
        assert await replacement.fetchval("select 2") == 2
        assert pool.get_size() == 1
        pool.release(replacement)
        await pool.close()

    asyncio.run(run())


def test_a_free_connection_the_server_ended_is_replaced_when_next_taken(database: Prepared) -> None:
    async def run() -> None:
        pool, opened = _set(database.api_url, 1)
        first = await pool.acquire(5)
        pid = first.get_server_pid()
        pool.release(first)
        owner = await asyncpg.connect(database.owner_url)
        try:
            assert await owner.fetchval("select pg_terminate_backend($1)", pid)
        finally:
            await owner.close()
        for _ in range(100):  # the client sees the connection close
            if first.is_closed():
                break
            await asyncio.sleep(0.01)
        second = await pool.acquire(5)
        assert second is not first and await second.fetchval("select 1") == 1
        assert pool.get_size() == 1 and len(opened) == 2
        pool.release(second)
        await pool.close()

    asyncio.run(run())


def test_a_connection_that_cannot_be_opened_frees_its_place() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def run() -> None:
        pool, _ = _set(f"postgresql://nobody@127.0.0.1:{port}/none", 1)
        for _ in range(2):
            with pytest.raises(OSError):
                await pool.acquire(5)
            assert pool.get_size() == 0
        await pool.close()

    asyncio.run(run())


def test_closing_ends_busy_connections_when_given_back_and_refuses_new_work(database: Prepared) -> None:
    async def run() -> None:
        pool, _ = _set(database.api_url, 1)
        busy = await pool.acquire(5)
        waiter = asyncio.create_task(pool.acquire(5))
        await asyncio.sleep(0.01)
        await pool.close()
        with pytest.raises(asyncpg.InterfaceError):
            await waiter
        with pytest.raises(asyncpg.InterfaceError):
            await pool.acquire(5)
        assert not busy.is_closed()
        pool.release(busy)
        assert busy.is_closed() and pool.get_size() == 0

    asyncio.run(run())


def test_a_size_below_one_is_refused() -> None:
    async def connect() -> asyncpg.Connection:
        raise AssertionError("never called")

    with pytest.raises(ValueError):
        ConnectionSet(connect, 0)


class Firewall:
    """A TCP relay on 127.0.0.1 to the embedded server's socket that, like a stateful firewall or NAT past its
    idle timeout, can forget the flows it carries without a word: nothing of a forgotten flow passes any more
    (the server's goodbye never reaches the client, which still sees its connection open), and the client's
    next bytes on it are answered with a reset."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.upstream = f"{parse_qs(parts.query)['host'][0]}/.s.PGSQL.{parts.port or 5432}"
        self.user, self.database = parts.username, parts.path.lstrip("/")
        self.forgotten: set[asyncio.StreamWriter] = set()
        self.flows: set[asyncio.StreamWriter] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._flow, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"postgresql://{self.user}@127.0.0.1:{port}/{self.database}"

    def forget(self) -> None:
        self.forgotten |= self.flows

    async def _flow(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        server_in, server_out = await asyncio.open_unix_connection(self.upstream)
        self.flows.add(client_out)

        async def to_server() -> None:
            while data := await client_in.read(65536):
                if client_out in self.forgotten:  # unknown to the firewall now: refused with a reset
                    client_out.get_extra_info("socket").setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    client_out.transport.abort()
                    break
                server_out.write(data)
            server_out.close()

        async def to_client() -> None:
            while data := await server_in.read(65536):
                if client_out not in self.forgotten:
                    client_out.write(data)
            if client_out not in self.forgotten:
                client_out.close()

        upward = asyncio.ensure_future(to_server())
        self.tasks.add(upward)
        await to_client()
        await upward

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()
        for flow in self.flows:
            flow.transport.abort()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def test_a_connection_free_longer_than_its_bound_is_retired_and_a_new_one_opened(database: Prepared) -> None:
    async def run() -> None:
        now = [0.0]
        opened: list[asyncpg.Connection] = []

        async def connect() -> asyncpg.Connection:
            opened.append(await asyncpg.connect(database.api_url))
            return opened[-1]

        pool = ConnectionSet(connect, 2, max_idle_seconds=60, clock=lambda: now[0])
        first, second = await pool.acquire(5), await pool.acquire(5)
        pool.release(first)  # given back at 0
        now[0] = 50
        pool.release(second)  # given back at 50
        now[0] = 100
        assert await pool.acquire(5) is second  # free 50 s: kept
        pool.release(second)  # given back at 100, and the oldest free one (100 s) is retired on the way
        assert first.is_closed() and pool.get_size() == 1
        now[0] = 161
        third = await pool.acquire(5)  # free 61 s: retired, and a new one opened in its place
        assert second.is_closed() and third is opened[2] and pool.get_size() == 1
        assert await third.fetchval("select 3") == 3
        pool.release(third)
        await pool.close()

    asyncio.run(run())


def test_an_idle_connection_the_server_ended_unseen_is_replaced_without_a_failed_request(
    database: Prepared,
) -> None:
    """The server ends an idle connection (``pg_terminate_backend``) and a firewall between keeps the client
    from seeing it: while the connection is within its idle bound, the next request fails on it (what retiring
    idle connections prevents); past the bound it is retired unused and the request succeeds on a new one."""

    async def run() -> None:
        firewall = Firewall(database.api_url)
        url = await firewall.start()
        now = [0.0]
        opened: list[asyncpg.Connection] = []

        async def connect() -> asyncpg.Connection:
            opened.append(await asyncpg.connect(url))
            return opened[-1]

        async def end_unseen(conn: asyncpg.Connection) -> None:
            firewall.forget()
            owner = await asyncpg.connect(database.owner_url)
            try:
                assert await owner.fetchval("select pg_terminate_backend($1, 5000)", conn.get_server_pid())
            finally:
                await owner.close()
            await asyncio.sleep(0.05)
            assert not conn.is_closed()  # the client cannot tell

        db = Database(ConnectionSet(connect, 1, max_idle_seconds=60, clock=lambda: now[0]), acquire_timeout=5)
        try:
            assert await db.fetchval("select 1") == 1  # given back at 0
            await end_unseen(opened[0])
            now[0] = 30
            with pytest.raises(DatabaseUnavailable):
                await db.fetchval("select 1")  # within the bound: reused, and the request fails
            assert await db.fetchval("select 2") == 2  # given back at 30 on a new connection
            await end_unseen(opened[1])
            now[0] = 91
            assert await db.fetchval("select 3") == 3  # past the bound: retired unused, no failed request
            assert opened[1].is_closed() and len(opened) == 3 and db.pool.get_size() == 1
        finally:
            await db.close()
            await firewall.close()

    asyncio.run(run())


def test_a_connection_block_gives_back_a_good_connection_and_ends_one_left_in_a_transaction(
    database: Prepared,
) -> None:
    async def run() -> None:
        pool, opened = _set(database.api_url, 1)
        async with pool.connection(5) as conn:
            assert await conn.fetchval("select 1") == 1
        with pytest.raises(asyncpg.UndefinedTableError):
            async with pool.connection(5) as again:
                await again.fetchval("select * from no_such_table")
        assert again is conn and not conn.is_closed()  # a statement's error: the session is as good as before
        with pytest.raises(RuntimeError):
            async with pool.connection(5) as again:
                await again.execute("begin")
                raise RuntimeError("left inside a transaction")
        assert again is conn and conn.is_closed() and pool.get_size() == 0
        async with pool.connection(5) as fresh:
            assert fresh is opened[1] and not fresh.is_in_transaction()
        await pool.close()

    asyncio.run(run())


def test_an_idle_bound_that_is_not_positive_is_refused() -> None:
    async def connect() -> asyncpg.Connection:
        raise AssertionError("never called")

    with pytest.raises(ValueError):
        ConnectionSet(connect, 1, max_idle_seconds=0)
