"""Running balances from an initial snapshot: genesis accounts only get balances when they exist first."""

from __future__ import annotations

import asyncio
import gzip
import importlib

import asyncpg
from tests.importer.handlers.items import (
    PAYER,
    T0,
    account,
    crypto_transfer,
    fetch,
    import_items,
    timestamp,
    write,
)
from tests.support import Ledger

from ledgermirror.importer.handlers.balances import BalanceSnapshot, read_balance_snapshot, seed_balances
from ledgermirror.importer.handlers.batch import Batch

stream = importlib.import_module("hiero_sdk_python.hapi.streams.account_balance_file_pb2")


def seed(url: str, snapshot: BalanceSnapshot) -> dict[str, int]:
    async def main() -> dict[str, int]:
        conn = await asyncpg.connect(url)
        try:
            return await seed_balances(conn, snapshot)
        finally:
            await conn.close()

    return asyncio.run(main())


def test_snapshot_then_transfers(ledger: Ledger) -> None:
    message = stream.AllAccountBalances(
        consensusTimestamp=timestamp(T0),
        allAccounts=[
            stream.SingleAccountBalances(accountID=account(PAYER), hbarBalance=5_000),
            stream.SingleAccountBalances(accountID=account(98), hbarBalance=10),
        ],
    )
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, balance, timestamp_range)"
        " values (2, 2, 0, 0, 'ACCOUNT', 1, '[1,)')"
    )
    snapshot = read_balance_snapshot(gzip.compress(message.SerializeToString()))
    assert snapshot == BalanceSnapshot(T0, ((PAYER, 5_000), (98, 10)))
    assert seed(ledger.url, snapshot) == {"entity": 2, "token_account": 0}
    import_items(ledger.url, crypto_transfer([(PAYER, -100), (98, 100)], at=T0 + 1, fee=4))
    rows = fetch(
        ledger.url, "select id, balance, balance_timestamp, type, timestamp_range from entity order by id"
    )
    assert [(row["id"], row["balance"], row["balance_timestamp"], row["type"]) for row in rows] == [
        (PAYER, 5_000 - 104, T0 + 1, "ACCOUNT"),
        (98, 10 + 104, T0 + 1, "ACCOUNT"),
    ]
    assert (rows[1]["timestamp_range"].lower, rows[1]["timestamp_range"].upper) == (0, None)
    assert fetch(ledger.url, "select count(*) from entity_history") == [{"count": 0}]


def test_entity_balance_deltas_carried_to_the_end_of_the_batch_keep_segment_order(ledger: Ledger) -> None:
    """Deltas of entities no later segment upserts are applied once per batch; the others with their segment,
    before the upsert that closes its version into the history, or, for an entity the database does not hold,
    once the upsert has created the row (the reference merges a balance-only change into the version that
    follows it: ``SqlEntityListener.mergeEntity``)."""
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, balance, balance_timestamp, timestamp_range) values"
        " (1001, 1001, 0, 0, 'ACCOUNT', 100, 1, '[1,)'), (1002, 1002, 0, 0, 'ACCOUNT', 100, 1, '[1,)')"
    )

    async def step(conn: asyncpg.Connection) -> dict[str, int]:
        return {}

    batch = Batch()
    batch.add_balance(1001, 5, T0)
    batch.add_balance(1002, 7, T0)
    batch.add_balance(1003, 9, T0)
    batch.defer(step)
    batch.add_balance(1001, 6, T0 + 1)
    batch.upsert("entity", {"id": 1002, "memo": "updated", "timestamp_range": T0 + 1})
    created = {"id": 1003, "num": 1003, "realm": 0, "shard": 0, "type": "ACCOUNT", "timestamp_range": T0 + 1}
    batch.upsert("entity", created)
    batch.defer(step)
    batch.add_balance(1002, 3, T0 + 2)
    write(ledger.url, batch)
    rows = fetch(ledger.url, "select id, balance, balance_timestamp, memo from entity order by id")
    assert [(row["id"], row["balance"], row["balance_timestamp"]) for row in rows] == [
        (1001, 111, T0 + 1),
        (1002, 110, T0 + 2),
        (1003, 9, T0),
    ]
    assert rows[1]["memo"] == "updated"
    history = fetch(ledger.url, "select id, balance, timestamp_range from entity_history")
    assert [(row["id"], row["balance"]) for row in history] == [(1002, 107)]
    assert (history[0]["timestamp_range"].lower, history[0]["timestamp_range"].upper) == (1, T0 + 1)
