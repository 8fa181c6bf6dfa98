"""The reset between tests and spec checks: every public table empty afterwards, the migration history kept."""

from __future__ import annotations

import asyncpg
from tests.support import Ledger, with_connection

from ledgermirror import dataset
from ledgermirror.db.reset import KEEP, TRUNCATE_FROM, emptying_sql, occupancy_sql, reset
from ledgermirror.runtime import Prepared

_TABLES = """
select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and c.relkind in ('r', 'p') order by c.relname
"""


async def _counts(conn: asyncpg.Connection) -> dict[str, int]:
    tables = [row[0] for row in await conn.fetch(_TABLES)]
    return {table: await conn.fetchval(f'select count(*) from public."{table}"') for table in tables}


def test_reset_empties_large_and_small_tables_and_keeps_the_migration_history(
    database: Prepared, ledger: Ledger
) -> None:
    async def action(conn: asyncpg.Connection) -> tuple[dict[str, int], dict[str, int]]:
        await dataset.load(conn, "small", seed=5)
        before = await _counts(conn)
        await reset(conn)
        return before, await _counts(conn)

    before, after = with_connection(database.owner_url, action)
    filled = {table for table, count in before.items() if count and table != KEEP}
    assert any(before[table] >= TRUNCATE_FROM for table in filled), "no table took the TRUNCATE path"
    assert any(0 < before[table] < TRUNCATE_FROM for table in filled), "no table took the DELETE path"
    assert after == {table: before[table] if table == KEEP else 0 for table in before}
    assert after[KEEP] > 0


def test_reset_of_an_empty_database_changes_nothing(database: Prepared, ledger: Ledger) -> None:
    async def action(conn: asyncpg.Connection) -> tuple[dict[str, int], dict[str, int]]:
        before = await _counts(conn)
        await reset(conn)
        return before, await _counts(conn)

    before, after = with_connection(database.owner_url, action)
    assert before == after
    assert sum(count for table, count in after.items() if table != KEEP) == 0


def test_rows_a_test_writes_never_reach_the_next_one(database: Prepared) -> None:
    for round_ in range(3):
        ledger = Ledger(database.owner_url)
        ledger.reset()
        counts = with_connection(database.owner_url, _counts)
        assert sum(count for table, count in counts.items() if table != KEEP) == 0, f"round {round_}"
        ledger.load({"entities": [{"num": 100 + round_}], "tokens": [{"token_id": f"0.0.{200 + round_}"}]})


def test_statements_pick_delete_or_truncate_by_size() -> None:
    assert emptying_sql({}) == ""
    assert emptying_sql({"token": 3, "entity": TRUNCATE_FROM, 'odd"name': 1}) == (
        'delete from public."token"; delete from public."odd""name"; truncate table public."entity"'
    )
    probe = occupancy_sql(["a", "b"])
    assert probe.count(f"limit {TRUNCATE_FROM}") == 2
    assert probe.index('public."a"') < probe.index('public."b"')
