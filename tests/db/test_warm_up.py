"""``db/warm_up.py`` against the embedded PostgreSQL: the hot indexes read to their end through the server's
files (the embedded server has no ``pg_prewarm``), the time bound, indexes the database lacks, and a role that may
not read the server's files (nothing read, nothing refused)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncpg

from ledgermirror.db.warm_up import HOT_INDEXES, warm_up, warm_up_at
from ledgermirror.runtime import Prepared


def _stepping(step: float) -> Callable[[], float]:
    """A clock that moves ``step`` seconds each time it is read."""
    moments = iter(range(1_000_000))
    return lambda: next(moments) * step


def test_the_hot_indexes_are_read_to_their_end_through_the_servers_files(database: Prepared) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            done = await warm_up(conn, 60.0)
            sizes = await conn.fetch(
                "select i.name, pg_relation_size(to_regclass(i.name)) as bytes from unnest($1::text[]) as i(name) "
                "where to_regclass(i.name) is not null",
                list(HOT_INDEXES),
            )
        finally:
            await conn.close()
        assert done.method == "files"  # the owner is a superuser; pgserver ships no pg_prewarm
        assert not done.cut_short
        assert done.indexes == [row["name"] for row in sizes]
        assert "entity_pkey" in done.indexes and "crypto_transfer__entity_id_consensus_timestamp" in done.indexes
        assert done.bytes_read == sum(row["bytes"] for row in sizes) > 0

    asyncio.run(run())


def test_the_warm_up_stops_at_its_time_bound(database: Prepared) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            nothing = await warm_up(conn, 0.0)
            some = await warm_up(conn, 2.5, now=_stepping(1.0))
        finally:
            await conn.close()
        assert nothing.cut_short and nothing.indexes == [] and nothing.bytes_read == 0
        # the clock is read at the start and before each read: two reads fit in 2.5 "seconds"
        assert some.cut_short and some.indexes == list(HOT_INDEXES[:2])

    asyncio.run(run())


def test_an_index_the_database_lacks_is_skipped(database: Prepared) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            done = await warm_up(conn, 60.0, ("no_such_index", "entity_pkey"))
        finally:
            await conn.close()
        assert done.indexes == ["entity_pkey"] and not done.cut_short

    asyncio.run(run())


def test_a_role_that_may_not_read_the_servers_files_warms_nothing_and_fails_nothing(database: Prepared) -> None:
    done = asyncio.run(warm_up_at(database.api_url, 60.0))  # the API's read-only role
    assert done.method == "none" and done.indexes == [] and done.bytes_read == 0


def test_an_unreachable_database_is_logged_not_raised() -> None:
    done = asyncio.run(warm_up_at("postgresql://nobody@127.0.0.1:1/none", 5.0))
    assert done.method == "none"
