"""Running balances from an initial snapshot: genesis accounts only get balances when they exist first."""

from __future__ import annotations

import asyncio
import gzip
import importlib

import asyncpg
from tests.importer.handlers.items import PAYER, T0, account, crypto_transfer, fetch, import_items, timestamp
from tests.support import Ledger

from ledgermirror.importer.handlers.balances import BalanceSnapshot, read_balance_snapshot, seed_balances

stream = importlib.import_module("hiero_sdk_python.hapi.streams.account_balance_file_pb2")


def seed(url: str, snapshot: BalanceSnapshot) -> int:
    async def main() -> int:
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
    assert seed(ledger.url, snapshot) == 2
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
