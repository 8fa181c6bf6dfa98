"""``db/citus.py`` against the migrated catalog (Citus itself cannot be installed here): every table and column
of the layout exists, colocated distribution columns share the type Citus colocates by, every unique index of
a distributed table holds its distribution column once :data:`WIDENED_KEYS` are applied (run in a transaction
that is rolled back), and a server without the extension is refused clearly, by the function and the command."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import asyncpg

from ledgermirror.db.citus import DISTRIBUTED, REFERENCE, WIDENED_KEYS, CitusUnavailable, apply, widen_key
from ledgermirror.db.schema import TABLES
from ledgermirror.exits import EXIT_DATABASE
from ledgermirror.runtime import Prepared

_COLUMN_TYPE = """select coalesce(nullif(t.typbasetype, 0), t.oid)::regtype::text
from pg_attribute a join pg_type t on t.oid = a.atttypid
where a.attrelid = $1::regclass and a.attname = $2 and not a.attisdropped"""
"""A column's type, a domain's base type for a domain (``entity_id`` is a domain over ``bigint``)."""
_UNIQUE = """select i.indexrelid::regclass::text as name,
       array(select a.attname from unnest(i.indkey) as k join pg_attribute a
             on a.attrelid = i.indrelid and a.attnum = k)::text[] as columns
from pg_index i where i.indrelid = $1::regclass and i.indisunique"""


def test_the_layout_names_tables_and_columns_of_our_schema() -> None:
    names = {name: {column.name for column in table.columns} for name, table in TABLES.items()}
    for item in DISTRIBUTED:
        assert item.table in names, item.table
        assert item.column in names[item.table], item
        assert item.colocate_with in names or item.colocate_with == "default", item
    assert set(REFERENCE) <= set(names)
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
