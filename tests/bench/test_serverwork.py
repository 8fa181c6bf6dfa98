"""``bench/_serverwork``: PostgreSQL's background work read from its statistics views, on the real server."""

from __future__ import annotations

import asyncio

import asyncpg
from bench._serverwork import ServerWork, during, read

from ledgermirror.runtime import Prepared


async def _written_and_checkpointed(url: str) -> tuple[ServerWork, ServerWork]:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("create schema if not exists serverwork_test")
        await conn.execute("drop table if exists serverwork_test.rows")
        await conn.execute("create table serverwork_test.rows (id bigint primary key, note text)")
        before = await read(conn)
        await conn.execute(
            "insert into serverwork_test.rows select i, repeat('x', 50) from generate_series(1, 5000) i"
        )
        await conn.execute("checkpoint")
        after = await read(conn)
        await conn.execute("drop schema serverwork_test cascade")
        return before, after
    finally:
        await conn.close()


def test_the_wal_and_a_checkpoint_between_two_readings(database: Prepared) -> None:
    before, after = asyncio.run(_written_and_checkpointed(database.owner_url))
    work = during(before, after, 5000)
    # 5,000 heap rows and 5,000 index entries: a WAL record each at least, read without waiting a second
    assert work["wal_records"] >= 10_000 and work["wal_bytes"] > 5000 * 50
    assert work["wal_records_per_transaction"] == round(work["wal_records"] / 5000, 2)
    assert work["wal_fpi"] == 0  # the tests' throwaway server runs without full-page writes
    assert work["checkpoints_req"] >= 1  # CHECKPOINT is a requested one
    assert work["buffers_checkpoint"] >= 1


def test_autovacuums_are_counted_by_table_as_they_grew() -> None:
    before = ServerWork({"wal_records": 10.0}, {"a": 1, "b": 2}, {"a": 1})
    after = ServerWork({"wal_records": 30.0, "wal_fpi": 4.0}, {"a": 1, "b": 5, "c": 1}, {"a": 3})
    work = during(before, after, 4)
    assert work == {
        "wal_records": 20,
        "wal_fpi": 4,
        "wal_records_per_transaction": 5.0,
        "wal_fpi_per_transaction": 1.0,
        "autovacuums": {"b": 3, "c": 1},
        "autoanalyzes": {"a": 2},
    }
