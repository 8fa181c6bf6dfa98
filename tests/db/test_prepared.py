"""A batch's appended rows on a second connection, committed in two phases with the main transaction
(``db.prepared``), against the real server: the normal commit, and every way a crash or an error can end it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg
import pytest

from ledgermirror.db import prepared
from ledgermirror.db.prepared import Appender
from ledgermirror.runtime import Prepared

T = TypeVar("T")

_TABLES = "create table prepared_probe_main (n int); create table prepared_probe_side (n int)"
_DROP = "drop table if exists prepared_probe_main, prepared_probe_side"


def run(database: Prepared, action: Callable[[asyncpg.Connection, asyncpg.Connection], Awaitable[T]]) -> T:
    """``action(main, side)`` on two connections to the test database, with the probe tables made and dropped
    around it (and no prepared transaction of ours left behind)."""

    async def main() -> T:
        main_conn = await asyncpg.connect(database.owner_url)
        side_conn = await asyncpg.connect(database.owner_url)
        try:
            await main_conn.execute(_TABLES)
            return await action(main_conn, side_conn)
        finally:
            side_conn.terminate()
            await prepared.settle(main_conn)
            await main_conn.execute(_DROP)
            await main_conn.close()

    return asyncio.run(main())


async def _rows(conn: asyncpg.Connection) -> tuple[list[int], list[int]]:
    main = [row["n"] for row in await conn.fetch("select n from prepared_probe_main order by n")]
    side = [row["n"] for row in await conn.fetch("select n from prepared_probe_side order by n")]
    return main, side


async def _prepare_both(main: asyncpg.Connection, side: asyncpg.Connection) -> Appender:
    """The main transaction is open with a row; the appender's row is written and prepared."""
    appender = Appender(side)
    await main.execute("begin")
    await main.execute("insert into prepared_probe_main values (1)")
    await appender.begin(main)
    await side.execute("insert into prepared_probe_side values (2)")
    await appender.prepare()
    return appender


def test_the_server_takes_prepared_transactions(database: Prepared) -> None:
    async def action(main: asyncpg.Connection, side: asyncpg.Connection) -> bool:
        return await prepared.supported(main)

    assert run(database, action)


def test_both_commit_and_nothing_is_left_prepared(database: Prepared) -> None:
    async def action(main: asyncpg.Connection, side: asyncpg.Connection) -> tuple[object, ...]:
        appender = await _prepare_both(main, side)
        hidden = await _rows(main)  # the main transaction sees its own row; the prepared one is not visible
        await main.execute("commit")
        between = await _rows(main)
        await appender.commit()
        left = await main.fetchval("select count(*) from pg_prepared_xacts where gid like 'ledgermirror-import-%'")
        return hidden, between, await _rows(main), left

    hidden, between, after, left = run(database, action)
    assert hidden == ([1], [])
    assert between == ([1], [])
    assert after == ([1], [2])
    assert left == 0


Rows = tuple[list[int], list[int]]


def test_a_crash_after_the_main_commit_is_settled_by_committing(database: Prepared) -> None:
    async def action(main: asyncpg.Connection, side: asyncpg.Connection) -> tuple[Rows, dict[str, bool], Rows]:
        await _prepare_both(main, side)
        await main.execute("commit")
        side.terminate()  # the importer dies before the second phase: the prepared transaction outlives it
        before = await _rows(main)
        settled = await prepared.settle(main)
        return before, settled, await _rows(main)

    before, settled, after = run(database, action)
    assert before == ([1], [])
    assert list(settled.values()) == [True]
    assert next(iter(settled)).startswith("ledgermirror-import-")
    assert after == ([1], [2])


def test_a_crash_before_the_main_commit_is_settled_by_rolling_back(database: Prepared) -> None:
    async def action(main: asyncpg.Connection, side: asyncpg.Connection) -> tuple[dict[str, bool], Rows]:
        await _prepare_both(main, side)
        side.terminate()
        await main.execute("rollback")  # the main transaction never committed (its connection died with it)
        settled = await prepared.settle(main)
        return settled, await _rows(main)

    settled, after = run(database, action)
    assert list(settled.values()) == [False]
    assert after == ([], [])


@pytest.mark.parametrize("main_committed", [False, True])
def test_abandoning_after_the_prepare_follows_the_main_transaction(
    database: Prepared, main_committed: bool
) -> None:
    """An error after the prepare (the main commit failed, or its answer was lost): the appender's rows end as
    the main transaction did."""

    async def action(main: asyncpg.Connection, side: asyncpg.Connection) -> tuple[list[int], list[int]]:
        appender = await _prepare_both(main, side)
        await main.execute("commit" if main_committed else "rollback")
        await appender.abandon()
        return await _rows(main)

    assert run(database, action) == (([1], [2]) if main_committed else ([], []))


def test_abandoning_before_the_prepare_rolls_back(database: Prepared) -> None:
    async def action(main: asyncpg.Connection, side: asyncpg.Connection) -> tuple[object, ...]:
        appender = Appender(side)
        await main.execute("begin")
        await appender.begin(main)
        await side.execute("insert into prepared_probe_side values (2)")
        await main.execute("rollback")
        await appender.abandon()
        return side.is_in_transaction(), await _rows(main), await prepared.settle(main)

    in_transaction, rows, settled = run(database, action)
    assert not in_transaction
    assert rows == ([], [])
    assert settled == {}


def test_only_names_of_import_transactions_are_written_into_sql() -> None:
    assert prepared.gid_of("1234") == "ledgermirror-import-1234"
    with pytest.raises(ValueError, match="not a transaction id"):
        prepared.gid_of("1'; drop table transaction; --")
