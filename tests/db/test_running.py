"""Running values (``db.running``): deltas added to the rows a table holds, keys it does not hold dropped, with a
plan that does not depend on the table's statistics."""

from __future__ import annotations

from typing import Any

import asyncpg
from asyncpg import Range
from tests.support import Ledger, entity_analyzed_with_few_live_rows, generic_plan, with_connection

from ledgermirror.db import running, write


def _entity(id_: int, type_: str, balance: int | None) -> dict[str, Any]:
    return {
        "id": id_,
        "num": id_,
        "realm": 0,
        "shard": 0,
        "type": type_,
        "balance": balance,
        "timestamp_range": Range(1, None),
    }


def test_running_values_change_the_rows_held_and_drop_other_keys(ledger: Ledger) -> None:
    """Accounts and contracts start from 0; other types add only to a balance they have; token balances,
    hbar and token allowance debits add to the rows held; a key the table does not hold is dropped."""

    async def action(
        conn: asyncpg.Connection,
    ) -> tuple[list[int], list[asyncpg.Record], list[asyncpg.Record], list[asyncpg.Record]]:
        await write.copy_rows(
            conn,
            "entity",
            [
                _entity(1, "ACCOUNT", None),
                _entity(2, "CONTRACT", 7),
                _entity(3, "FILE", None),
                _entity(4, "TOPIC", 5),
            ],
        )
        await write.copy_rows(
            conn,
            "token_account",
            [
                {
                    "account_id": 1,
                    "token_id": 9,
                    "balance": 10,
                    "associated": False,
                    "timestamp_range": Range(1, None),
                },
                {
                    "account_id": 2,
                    "token_id": 9,
                    "balance": 0,
                    "associated": True,
                    "timestamp_range": Range(1, None),
                },
            ],
        )
        allowance = {"amount_granted": 100, "payer_account_id": 1, "timestamp_range": Range(1, None)}
        await write.copy_rows(conn, "crypto_allowance", [{"owner": 1, "spender": 2, "amount": 50, **allowance}])
        await write.copy_rows(
            conn, "token_allowance", [{"owner": 1, "spender": 2, "token_id": 9, "amount": 60, **allowance}]
        )
        counts = [
            await running.add_entity_balances(
                conn, [(1, 3, 100), (2, -2, 101), (3, 4, 102), (4, 1, 103), (8, 1, 104)]
            ),
            await running.add_token_balances(conn, [(1, 9, -4, 105), (2, 9, 6, 106), (3, 9, 1, 107)]),
            await running.add_allowance_debits(conn, [(1, 2, None, -5), (1, 2, 9, -6), (1, 3, None, -1)]),
        ]
        return (
            counts,
            await conn.fetch("select id, balance, balance_timestamp from entity order by id"),
            await conn.fetch(
                "select account_id, balance, balance_timestamp, associated from token_account order by 1"
            ),
            await conn.fetch("select amount from crypto_allowance union all select amount from token_allowance"),
        )

    counts, entities, tokens, allowances = with_connection(ledger.url, action)
    assert counts == [4, 2, 2]
    assert [tuple(row) for row in entities] == [(1, 3, 100), (2, 5, 101), (3, None, 102), (4, 6, 103)]
    assert [tuple(row) for row in tokens] == [(1, 6, 105, True), (2, 6, 106, True)]
    assert sorted(row["amount"] for row in allowances) == [45, 54]


def test_entity_balances_probe_the_key_index_after_stale_statistics(ledger: Ledger) -> None:
    """With statistics of a few live rows, a join of the deltas to ``entity`` by key read the whole table once for
    each delta (12,500 deltas into 25,000 rows: 4.8 s, against 0.07 s); each delta's row is now found by one
    probe of the key's index (a match the planner can neither hash nor merge)."""
    ids = list(range(1, 2_001, 2))

    async def action(conn: asyncpg.Connection) -> tuple[list[str], int, list[asyncpg.Record]]:
        async with entity_analyzed_with_few_live_rows(conn):
            await write.copy_rows(conn, "entity", [_entity(n, "ACCOUNT", 10) for n in range(1, 2_001)])
            async with conn.transaction():
                await conn.execute(";\n".join(write._WRITER_PLANS))
                explained = await conn.fetch(
                    "explain " + running._ENTITY_BALANCES, ids, [1] * len(ids), [5] * len(ids)
                )
            plans = [
                "\n".join(row[0] for row in explained),
                await generic_plan(conn, running._ENTITY_BALANCES, write._WRITER_PLANS),  # as the writer runs it
            ]
            changed = await running.add_entity_balances(conn, [(n, 1, 5) for n in ids])
            return plans, changed, await conn.fetch("select balance, count(*) from entity group by 1 order by 1")

    plans, changed, balances = with_connection(ledger.url, action)
    for plan in plans:
        assert "Materialize" not in plan and "Seq Scan" not in plan, plan
        assert plan.count("Index Cond: (id = ANY (ARRAY[s.id]))") == 1, plan  # one probe of the key a row
    assert changed == 1_000
    assert [tuple(row) for row in balances] == [(10, 1_000), (11, 1_000)]
