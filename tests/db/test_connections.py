"""``db/connections.ConnectionSet`` against the embedded PostgreSQL: opened on need, never more than its size,
handed over first in first out, a waiter's time bound, broken connections replaced, closing."""

from __future__ import annotations

import asyncio
import socket

import asyncpg
import pytest

from ledgermirror.db.connections import ConnectionSet
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
