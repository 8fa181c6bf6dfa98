"""Outages seen under load, made deterministic: a connection that dies mid-query is an outage with its own cause
(``db/pool.Database``), and readiness answers DOWN, never 500, whichever of its reads fails."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import asyncpg
import pytest
from starlette.testclient import TestClient

from ledgermirror.api.app import create_app
from ledgermirror.db.errors import DatabaseUnavailable
from ledgermirror.db.pool import Database, api_connections
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings


def test_a_connection_that_dies_mid_query_is_an_outage_with_its_own_cause_and_is_replaced(
    database: Prepared,
) -> None:
    """Seen under load while the server stopped: the outage's message must be the connection's loss, and the
    dead connection must not serve the next request (the next query opens a new one)."""

    async def run() -> None:
        pool = api_connections(database.api_url, Settings())
        db = Database(pool, acquire_timeout=5)
        try:
            killed: list[Any] = []

            async def dies(conn: Any) -> None:
                killed.append(conn)
                await conn.execute("select pg_terminate_backend(pg_backend_pid())")

            with pytest.raises(DatabaseUnavailable):
                await db._query(dies)
            assert killed[0].is_closed()
            assert pool.get_size() == 0  # it left the set
            assert await db.fetchval("select 1") == 1  # and the next query opened a new one
            assert pool.get_size() == 1
        finally:
            await db.close()

    asyncio.run(run())


def test_readiness_is_down_not_500_when_the_database_fails_after_its_first_check(database: Prepared) -> None:
    """Readiness reads twice (``select 1``, then the importer's status); the outage test once caught the
    database going between the two, and the second read's failure escaped as a 500. Here the second read is
    held behind a lock until the statement time budget ends it."""
    locked, release = threading.Event(), threading.Event()

    def hold_lock() -> None:
        async def hold() -> None:
            conn = await asyncpg.connect(database.owner_url)
            try:
                async with conn.transaction():
                    await conn.execute("lock table import_status in access exclusive mode")
                    locked.set()
                    await asyncio.to_thread(release.wait, 30)
            finally:
                await conn.close()

        asyncio.run(hold())

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert locked.wait(30)
        settings = Settings(statement_timeout_ms=300)
        with TestClient(create_app(settings, database.api_url)) as client:
            answer = client.get("/health/readiness")
        assert answer.status_code == 503
        assert answer.json() == {"status": "DOWN", "checks": {"database": "DOWN"}}
    finally:
        release.set()
        holder.join(30)
