"""An initial balance snapshot (``AllAccountBalances``, a ``*_Balances.pb.gz`` file) for a fresh mirror.

The stream never gives genesis accounts (0.0.2, node and system accounts, ...) a balance: running balances
only add to rows that exist. Seeding the snapshot's HBAR balances first makes them count (reference §4.1).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import asyncpg

from ledgermirror.db import running
from ledgermirror.importer.handlers import ids
from ledgermirror.ledger.protobuf import hapi_module

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class BalanceSnapshot:
    consensus_timestamp: int
    balances: tuple[tuple[int, int], ...]
    """(encoded account id, tinybars)"""


def read_balance_snapshot(data: bytes) -> BalanceSnapshot:
    """An ``AllAccountBalances`` protobuf, gzip-compressed or not."""
    if data.startswith(_GZIP_MAGIC):
        data = gzip.decompress(data)
    module = hapi_module("streams.account_balance_file_pb2")
    message = module.AllAccountBalances.FromString(data)
    balances = tuple(
        (
            ids.encoded(entry.accountID.shardNum, entry.accountID.realmNum, entry.accountID.accountNum),
            entry.hbarBalance,
        )
        for entry in message.allAccounts
    )
    return BalanceSnapshot(ids.nanos(message.consensusTimestamp), balances)


async def seed_balances(conn: asyncpg.Connection, snapshot: BalanceSnapshot) -> int:
    """Write the snapshot's balances onto ``entity`` (creating missing accounts); returns the rows written."""
    rows = [
        (account, parts["num"], parts["realm"], parts["shard"], balance)
        for account, balance in snapshot.balances
        if account
        for parts in (ids.parts(account),)
    ]
    return await running.seed_entity_balances(conn, rows, snapshot.consensus_timestamp)
