"""Emptying the ledger's tables between tests and between conformance checks (never used by ``serve``).

A reset runs before every test and every spec check, so it must be cheap and exact. Truncating every table
costs new files, catalog changes and (with fsync on) several fsyncs per table, even for the many tables a test
never touched. Instead one statement asks every table whether it holds rows (reading at most
:data:`TRUNCATE_FROM` rows of each), then only the tables that do are emptied: small ones with ``DELETE``
(no new files, no catalog change, cached plans stay valid), large ones (a loaded synthetic ledger) with one
``TRUNCATE``. Sequences are left as they are, as a plain ``TRUNCATE`` leaves them.
"""

from __future__ import annotations

import asyncpg

KEEP = "ledgermirror_schema_history"
"""The migration history: never emptied."""

TRUNCATE_FROM = 1000
"""A table holding at least this many rows is truncated; a smaller one is emptied with ``DELETE``."""

_TABLES_SQL = """
select c.relname
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relname <> $1
order by c.relname
"""


async def reset(conn: asyncpg.Connection) -> None:
    """Empty every table in schema ``public`` except the migration history."""
    tables = [row[0] for row in await conn.fetch(_TABLES_SQL, KEEP)]
    if not tables:
        return
    counts = await conn.fetchrow(occupancy_sql(tables))
    assert counts is not None
    occupied = {table: count for table, count in zip(tables, counts, strict=True) if count}
    statement = emptying_sql(occupied)
    if statement:
        await conn.execute(statement)


def occupancy_sql(tables: list[str]) -> str:
    """One row: per table (in order), how many rows it holds, counted up to :data:`TRUNCATE_FROM`."""
    probes = ", ".join(
        f"(select count(*) from (select from {_qualified(table)} limit {TRUNCATE_FROM}) as probe)"
        for table in tables
    )
    return f"select {probes}"


def emptying_sql(occupied: dict[str, int]) -> str:
    """The statements that empty the given tables (name -> rows counted), or ``""`` when none hold rows."""
    large = [_qualified(table) for table, count in occupied.items() if count >= TRUNCATE_FROM]
    small = [_qualified(table) for table, count in occupied.items() if count < TRUNCATE_FROM]
    statements = [f"delete from {table}" for table in small]
    if large:
        statements.append(f"truncate table {', '.join(large)}")
    return "; ".join(statements)


def _qualified(table: str) -> str:
    return 'public."' + table.replace('"', '""') + '"'
