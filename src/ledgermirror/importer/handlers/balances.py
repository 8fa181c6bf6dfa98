"""A balance snapshot seeded into an empty database with its first imported unit: the simulator's genesis
``AllAccountBalances`` (``--initial-balances``) or a network's signed account balance file (``--balance-files``,
``importer/balance_files.py``).

The stream never gives genesis accounts (0.0.2, node and system accounts, ...) a balance, and a mirror that starts
mid-stream never sees the transfers before its first file: running balances only add to rows that exist. The
snapshot's balances are written before the first unit's rows (so its transfers add to them, and anything that
reads balances while writing it, node stakes, sees them), and what that unit's transfers at or before the
snapshot's timestamp added is taken back after them (the result of the reference's
``InitializeEntityBalanceMigration`` and ``TokenAccountBalanceMigration``: the file's balances plus the transfers
after it).
"""

from __future__ import annotations

import gzip
import time
from dataclasses import dataclass

import asyncpg

from ledgermirror.db import balance_snapshots
from ledgermirror.importer.balance_file import BalanceFile
from ledgermirror.importer.handlers import ids
from ledgermirror.ledger.protobuf import hapi_module

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class BalanceSnapshot:
    consensus_timestamp: int
    balances: tuple[tuple[int, int], ...]
    """(encoded account id, tinybars)"""
    tokens: tuple[tuple[int, int, int], ...] = ()
    """(encoded account id, encoded token id, balance)"""
    file: BalanceFile | None = None
    """The network's balance file it was read from: its rows and ``account_balance_file`` row are written too."""
    time_offset: int = 0
    """The balance file's ``time_offset`` (mainnet's errata: ``errata.balance_file_offset_on``)."""


def read_balance_snapshot(data: bytes) -> BalanceSnapshot:
    """An ``AllAccountBalances`` protobuf, gzip-compressed or not (HBAR balances only)."""
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


def snapshot_of_file(file: BalanceFile) -> BalanceSnapshot:
    """A verified balance file as a snapshot to seed."""
    return BalanceSnapshot(
        file.consensus_timestamp,
        tuple((line.account, line.balance) for line in file.accounts),
        tuple((line.account, token, balance) for line in file.accounts for token, balance in line.tokens),
        file,
    )


async def seed_balances(conn: asyncpg.Connection, snapshot: BalanceSnapshot) -> dict[str, int]:
    """Before the first unit's rows: the snapshot's balances onto ``entity`` and ``token_account`` (creating
    missing rows), so the unit's transfers add to them; for a network balance file also its ``account_balance``,
    ``token_balance`` and ``account_balance_file`` rows. Returns rows per table."""
    load_start = time.time_ns() // 1_000_000
    at = snapshot.consensus_timestamp
    rows = [
        (account, parts["num"], parts["realm"], parts["shard"], balance)
        for account, balance in snapshot.balances
        if account
        for parts in (ids.parts(account),)
    ]
    counts = {
        "entity": await balance_snapshots.seed_entities(conn, rows, at),
        "token_account": await balance_snapshots.seed_token_accounts(conn, list(snapshot.tokens), at),
    }
    file = snapshot.file
    if file is not None:
        counts.update(
            await balance_snapshots.save_balance_rows(conn, at, list(snapshot.balances), list(snapshot.tokens))
        )
        await balance_snapshots.save_balance_file(
            conn,
            timestamp=at,
            name=file.name,
            count=len(file.accounts),
            load_start=load_start,
            load_end=time.time_ns() // 1_000_000,
            synthetic=False,
            file_hash=file.file_hash.hex(),
            time_offset=snapshot.time_offset,
        )
        counts["account_balance_file"] = 1
    return counts


async def settle_seeded(conn: asyncpg.Connection, snapshot: BalanceSnapshot) -> None:
    """After the first unit's rows: its transfers at or before the snapshot's timestamp are already in the
    snapshot's balances, so what they added is taken back (the reference's balance migrations add the transfers
    after the file to its balances: the same result)."""
    await balance_snapshots.take_back_before(
        conn,
        [account for account, _ in snapshot.balances],
        [(account, token) for account, token, _ in snapshot.tokens],
        snapshot.consensus_timestamp,
    )
