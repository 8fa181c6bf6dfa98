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


# Seeding an empty database from a balance file -------------------------------------------------------------

_SEED_ENTITIES = """
insert into entity (id, num, realm, shard, balance, balance_timestamp, deleted, timestamp_range, type)
select d.id, d.num, d.realm, d.shard, d.balance, $6, false, int8range(0, null), 'ACCOUNT'
from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
  as d(id, num, realm, shard, balance)
on conflict (id) do update set balance = excluded.balance, balance_timestamp = excluded.balance_timestamp
"""

_SEED_TOKEN_ACCOUNTS = """
insert into token_account (account_id, token_id, associated, balance, balance_timestamp, created_timestamp,
                           timestamp_range)
select d.account_id, d.token_id, true, d.balance, $4, $4, int8range($4, null)
from unnest($1::bigint[], $2::bigint[], $3::bigint[]) as d(account_id, token_id, balance)
on conflict (account_id, token_id) do update set balance = excluded.balance,
  balance_timestamp = excluded.balance_timestamp
"""

_TAKE_BACK_ENTITIES = """
update entity e set balance = e.balance - t.amount, balance_timestamp = greatest(e.balance_timestamp, $2)
from (
  select entity_id, sum(amount)::bigint as amount from crypto_transfer
  where consensus_timestamp <= $2 and entity_id = any($1::bigint[])
  group by entity_id
) t
where e.id = t.entity_id
"""

_TAKE_BACK_TOKEN_ACCOUNTS = """
update token_account a set balance = a.balance - t.amount, balance_timestamp = greatest(a.balance_timestamp, $3)
from (
  select account_id, token_id, sum(amount)::bigint as amount from (
    select account_id, token_id, amount from token_transfer where consensus_timestamp <= $3
    union all
    select (n.moved ->> side)::bigint, (n.moved ->> 'token_id')::bigint, change
    from (
      select jsonb_array_elements(nft_transfer) as moved from transaction
      where consensus_timestamp <= $3 and nft_transfer is not null
    ) n
    cross join (values ('receiver_account_id', 1), ('sender_account_id', -1)) as sides(side, change)
    where n.moved ->> side is not null
  ) moves
  group by account_id, token_id
) t
join unnest($1::bigint[], $2::bigint[]) as d(account_id, token_id)
  on d.account_id = t.account_id and d.token_id = t.token_id
where a.account_id = t.account_id and a.token_id = t.token_id
"""


async def seed_entities(
    conn: asyncpg.Connection, balances: list[tuple[int, int, int, int, int]], timestamp: int
) -> int:
    """Balances of a snapshot taken at ``timestamp`` onto ``entity``, before the first unit's rows so its
    transfers add to them: (id, num, realm, shard, balance) per account; a missing account is created (type
    ACCOUNT, range ``[0, ∞)``). Returns the rows written."""
    if not balances:
        return 0
    ids, nums, realms, shards, amounts = (list(column) for column in zip(*balances, strict=True))
    return _count(await conn.execute(_SEED_ENTITIES, ids, nums, realms, shards, amounts, timestamp))


async def seed_token_accounts(
    conn: asyncpg.Connection, balances: list[tuple[int, int, int]], timestamp: int
) -> int:
    """(account, token, balance) of a snapshot at ``timestamp`` onto ``token_account`` (associated)."""
    if not balances:
        return 0
    accounts, tokens, amounts = (list(column) for column in zip(*balances, strict=True))
    return _count(await conn.execute(_SEED_TOKEN_ACCOUNTS, accounts, tokens, amounts, timestamp))


async def take_back_before(
    conn: asyncpg.Connection, accounts: list[int], token_accounts: list[tuple[int, int]], timestamp: int
) -> None:
    """After the first unit's rows: take back what its transfers (and NFT moves) at or before ``timestamp`` added
    to the seeded balances, which already hold them (the first record file may begin before the snapshot)."""
    if accounts:
        await conn.execute(_TAKE_BACK_ENTITIES, accounts, timestamp)
    if token_accounts:
        holders, tokens = (list(column) for column in zip(*token_accounts, strict=True))
        await conn.execute(_TAKE_BACK_TOKEN_ACCOUNTS, holders, tokens, timestamp)


async def save_balance_rows(
    conn: asyncpg.Connection,
    timestamp: int,
    accounts: list[tuple[int, int]],
    tokens: list[tuple[int, int, int]],
) -> dict[str, int]:
    """The ``account_balance`` and ``token_balance`` rows of an imported balance file."""
    counts = await copy_rows(
        conn,
        "account_balance",
        (
            {"consensus_timestamp": timestamp, "account_id": account, "balance": balance}
            for account, balance in accounts
        ),
    )
    token_counts = await copy_rows(
        conn,
        "token_balance",
        (
            {"consensus_timestamp": timestamp, "account_id": account, "token_id": token, "balance": balance}
            for account, token, balance in tokens
        ),
    )
    return {**counts, **token_counts}
