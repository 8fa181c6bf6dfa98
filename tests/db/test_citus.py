"""``db/citus.py`` against the migrated catalog (Citus itself cannot be installed here): every table and column
of the layout exists, colocated distribution columns share the type Citus colocates by, every unique index of
a distributed table holds its distribution column once :data:`WIDENED_KEYS` are applied (run in a transaction
that is rolled back), the time partitioning converts every large table on PostgreSQL itself (rows kept, the
API's role reads them, a second run only adds months; rolled back), and a server without the extension is
refused clearly, by the function and the command."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import asyncpg
from tests.api.test_blocks import record_file
from tests.support import Ledger

from ledgermirror.db.citus import (
    DISTRIBUTED,
    MONTHS_AHEAD,
    REFERENCE,
    TIME_PARTITIONED,
    WIDENED_KEYS,
    CitusUnavailable,
    apply,
    partition_by_time,
    widen_key,
)
from ledgermirror.db.schema import TABLES
from ledgermirror.exits import EXIT_DATABASE
from ledgermirror.ledger.timestamps import month_start
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

_COLUMN_TYPE = """select coalesce(nullif(t.typbasetype, 0), t.oid)::regtype::text
from pg_attribute a join pg_type t on t.oid = a.atttypid
where a.attrelid = $1::regclass and a.attname = $2 and not a.attisdropped"""
"""A column's type, a domain's base type for a domain (``entity_id`` is a domain over ``bigint``)."""
_UNIQUE = """select i.indexrelid::regclass::text as name,
       array(select a.attname from unnest(i.indkey) as k join pg_attribute a
             on a.attrelid = i.indrelid and a.attnum = k)::text[] as columns
from pg_index i where i.indrelid = $1::regclass and i.indisunique"""
_PARTITION_KEY = """select a.attname from pg_partitioned_table p
join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
where p.partrelid = $1::regclass"""


def test_the_layout_names_tables_and_columns_of_our_schema() -> None:
    names = {name: {column.name for column in table.columns} for name, table in TABLES.items()}
    for item in DISTRIBUTED:
        assert item.table in names, item.table
        assert item.column in names[item.table], item
        assert item.colocate_with in names or item.colocate_with == "default", item
    assert set(REFERENCE) <= set(names)
    for table, time_column in TIME_PARTITIONED.items():
        assert time_column in names[table], table
    assert len({item.table for item in DISTRIBUTED}) == len(DISTRIBUTED)
    distributed = {item.table: item.column for item in DISTRIBUTED}
    for table, key in WIDENED_KEYS.items():
        assert distributed[table] in key and set(key) <= names[table], table
    # an upsert's conflict key (the writer's ``on conflict``) must hold the distribution column too
    for name, column in distributed.items():
        key = TABLES[name].key
        assert not key or column in key or name in WIDENED_KEYS, (name, key, column)


def test_colocated_columns_share_a_type_and_widened_keys_hold_the_distribution_column(database: Prepared) -> None:
    async def check() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            column = {item.table: item.column for item in DISTRIBUTED}
            for item in DISTRIBUTED:
                if item.colocate_with != "default":
                    group = item.colocate_with
                    mine = await conn.fetchval(_COLUMN_TYPE, item.table, item.column)
                    theirs = await conn.fetchval(_COLUMN_TYPE, group, column[group])
                    assert mine == theirs, (item, mine, theirs)
            transaction = conn.transaction()
            await transaction.start()
            try:
                for table in WIDENED_KEYS:
                    await widen_key(conn, table)
                for item in DISTRIBUTED:
                    for index in await conn.fetch(_UNIQUE, item.table):
                        assert item.column in index["columns"], (item, index["name"], index["columns"])
            finally:
                await transaction.rollback()
        finally:
            await conn.close()

    asyncio.run(check())


def test_a_server_without_citus_is_refused_clearly(database: Prepared) -> None:
    async def attempt() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            await apply(conn)
        finally:
            await conn.close()

    try:
        asyncio.run(attempt())
    except CitusUnavailable as error:
        assert "no Citus extension" in str(error)
    else:
        raise AssertionError("applied a Citus layout on a server without Citus")
    done = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "db", "migrate", "--citus"],
        env={**os.environ, "LEDGERMIRROR_DB_URL": database.owner_url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_DATABASE, done.stderr
    assert "the server has no Citus extension" in done.stderr
    assert "migrations applied" in done.stdout  # the schema itself is migrated first


SECOND = 1_000_000_000
JAN_2024 = 1_704_067_200 * SECOND
MAR_2024 = 1_709_251_200 * SECOND


def test_the_large_tables_are_partitioned_by_month_with_their_rows(database: Prepared, ledger: Ledger) -> None:
    """Partitioning is plain PostgreSQL: run for real on the embedded server, every time-partitioned table at
    once after the widened keys (as ``apply`` does before distributing), then rolled back."""
    ledger.load(
        {
            "recordFiles": [
                record_file(1, consensus_start=JAN_2024 + 5, consensus_end=JAN_2024 + 9),
                record_file(2, consensus_start=MAR_2024 + 5, consensus_end=MAR_2024 + 9),
            ],
            "transactions": [
                {"consensus_timestamp": JAN_2024 + 7, "payerAccountId": "0.0.1002", "type": 14},
                {"consensus_timestamp": MAR_2024 + 7, "payerAccountId": "0.0.1002", "type": 14},
            ],
        }
    )
    now = MAR_2024 + 20 * 86_400 * SECOND  # 2024-03-21
    role = Settings().api_role

    async def check() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            before = await conn.fetch("select * from transaction order by consensus_timestamp")
            transaction = conn.transaction()
            await transaction.start()
            try:
                for table in WIDENED_KEYS:
                    await widen_key(conn, table)
                made = {table: await partition_by_time(conn, table, now_ns=now) for table in TIME_PARTITIONED}
                # the oldest row's month (January, with February between) to MONTHS_AHEAD past March
                assert made["transaction"][0] == "transaction_p2024_01"
                assert made["record_file"][-1] == f"record_file_p2024_{3 + MONTHS_AHEAD:02d}"
                assert len(made["transaction"]) == 3 + MONTHS_AHEAD
                assert made["topic_message"][0] == "topic_message_p2024_03"  # empty: from now's month
                for table, column in TIME_PARTITIONED.items():
                    key = await conn.fetchval(_PARTITION_KEY, table)
                    assert key == column, table
                    for index in await conn.fetch(_UNIQUE, table):  # PostgreSQL and Citus both need them
                        assert column in index["columns"], (table, index["name"])
                assert await conn.fetch("select * from transaction order by consensus_timestamp") == before
                january = await conn.fetchval("select count(*) from transaction_p2024_01")
                assert january == 1
                await conn.execute(f"set local role {role}")  # the API's role reads the new tables
                assert await conn.fetchval("select count(*) from record_file") == 2
                await conn.execute("reset role")
                # a later run (a month on) adds only the month missing at the end
                later = month_start(now, months_back=-1)
                assert await partition_by_time(conn, "transaction", now_ns=later) == [
                    f"transaction_p2024_{4 + MONTHS_AHEAD:02d}"
                ]
                assert await partition_by_time(conn, "transaction", now_ns=later) == []
            finally:
                await transaction.rollback()
        finally:
            await conn.close()

    asyncio.run(check())
