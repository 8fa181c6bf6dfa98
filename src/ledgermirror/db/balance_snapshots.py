"""The statements of balance snapshots: ``account_balance`` and ``token_balance`` rows copied from the current
``entity`` and ``token_account`` balances at one consensus timestamp, and the ``account_balance_file`` row that
names the snapshot (the reference's ``AccountBalanceRepository``/``TokenBalanceRepository`` snapshot queries,
written here from their described semantics).

A full snapshot copies every live balance, plus the balances of accounts deleted (token accounts dissociated)
after the previous treasury snapshot of the last 30 days, so their final 0 is recorded. A deduplicated snapshot
copies the treasury and the balances whose ``balance_timestamp`` moved past the previous snapshot. The treasury
row is the snapshot's marker: the REST API finds snapshots through it.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from ledgermirror.db.write import copy_rows

THIRTY_DAYS_NS = 2_592_000_000_000_000
SYNTHETIC_TREASURY_MEMO = "Mirror node created synthetic treasury account"

_MARKS = """
select (select max(consensus_timestamp) from account_balance_file) as last_snapshot,
       (select min(consensus_end) from record_file) as first_end
"""

_LAST_TREASURY_IN_RANGE = """
select max(consensus_timestamp) from account_balance
where account_id = $1 and consensus_timestamp >= $2 and consensus_timestamp < $3
"""

_ENSURE_TREASURY = """
insert into entity (id, balance, created_timestamp, decline_reward, deleted, memo, num, realm, shard,
                    timestamp_range, type)
select $1, 0, 0, true, false, $2, $3, $4, $5, int8range(0, null), 'ACCOUNT'
where not exists (select 1 from entity where id = $1)
"""

_ACCOUNTS_FULL = """
insert into account_balance (account_id, balance, consensus_timestamp)
select id, balance, $1::bigint from entity
where balance is not null
  and (deleted is not true or balance_timestamp > (
    select coalesce(max(consensus_timestamp), 0) from account_balance
    where account_id = $2 and consensus_timestamp > $1::bigint - $3::bigint))
order by id
"""

_ACCOUNTS_DEDUPLICATED = """
insert into account_balance (account_id, balance, consensus_timestamp)
select id, balance, $2::bigint from entity
where id = $3 or (balance is not null and balance_timestamp > $1)
order by id
"""

_TOKENS_FULL = """
insert into token_balance (account_id, balance, consensus_timestamp, token_id)
select account_id, balance, $1::bigint, token_id from token_account
where associated is true or balance_timestamp > (
    select coalesce(max(consensus_timestamp), 0) from account_balance
    where account_id = $2 and consensus_timestamp > $1::bigint - $3::bigint and consensus_timestamp < $1::bigint)
order by account_id, token_id
"""

_TOKENS_DEDUPLICATED = """
insert into token_balance (account_id, balance, consensus_timestamp, token_id)
select account_id, balance, $2::bigint, token_id from token_account
where balance_timestamp > $1
order by account_id, token_id
"""


@dataclass(frozen=True, slots=True)
class Marks:
    last_snapshot: int | None
    """The newest ``account_balance_file`` timestamp (a snapshot or an imported balance file)."""
    first_end: int | None
    """The first ``record_file.consensus_end``."""


def _count(status: str) -> int:
    return int(status.rsplit(" ", 1)[-1])


async def marks(conn: asyncpg.Connection) -> Marks:
    row = await conn.fetchrow(_MARKS)
    assert row is not None
    return Marks(row["last_snapshot"], row["first_end"])


async def last_treasury_snapshot(conn: asyncpg.Connection, treasury: int, lower: int, upper: int) -> int | None:
    """The newest treasury ``account_balance`` timestamp in ``[lower, upper)``, or None."""
    value = await conn.fetchval(_LAST_TREASURY_IN_RANGE, treasury, lower, upper)
    return int(value) if value is not None else None


async def ensure_treasury(conn: asyncpg.Connection, treasury: int, num: int, realm: int, shard: int) -> bool:
    """Create the reference's synthetic treasury entity (balance 0) unless the treasury exists; True if made."""
    status = await conn.execute(_ENSURE_TREASURY, treasury, SYNTHETIC_TREASURY_MEMO, num, realm, shard)
    return _count(status) == 1


async def snapshot_accounts(conn: asyncpg.Connection, timestamp: int, treasury: int, since: int | None) -> int:
    """Copy the account balances at ``timestamp``: full when ``since`` is None, else those changed after
    ``since`` (and the treasury). Returns the rows written."""
    if since is None:
        return _count(await conn.execute(_ACCOUNTS_FULL, timestamp, treasury, THIRTY_DAYS_NS))
    return _count(await conn.execute(_ACCOUNTS_DEDUPLICATED, since, timestamp, treasury))


async def snapshot_tokens(conn: asyncpg.Connection, timestamp: int, treasury: int, since: int | None) -> int:
    """Copy the token balances at ``timestamp`` (after :func:`snapshot_accounts` of the same snapshot)."""
    if since is None:
        return _count(await conn.execute(_TOKENS_FULL, timestamp, treasury, THIRTY_DAYS_NS))
    return _count(await conn.execute(_TOKENS_DEDUPLICATED, since, timestamp))


async def save_balance_file(
    conn: asyncpg.Connection,
    *,
    timestamp: int,
    name: str,
    count: int,
    load_start: int,
    load_end: int,
    synthetic: bool,
    file_hash: str | None = None,
    time_offset: int = 0,
) -> None:
    """The ``account_balance_file`` row of a snapshot or of an imported balance file."""
    row: dict[str, object] = {
        "consensus_timestamp": timestamp,
        "count": count,
        "load_start": load_start,
        "load_end": load_end,
        "file_hash": file_hash,
        "name": name,
        "bytes": None,
        "time_offset": time_offset,
        "synthetic": synthetic,
    }
    await copy_rows(conn, "account_balance_file", [row])
