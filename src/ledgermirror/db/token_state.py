"""Importer writes of the token, topic and schedule services that depend on what the database already holds.

The writer's upsert (``db/write.py``) merges rows by key with the reference's general rules. A few reference
rules need the stored state of a row and are applied here, by the deferred steps of the importer's handlers
(``importer/handlers/tokens.py``, ``nfts.py``, ``airdrops.py``, ``schedules.py``):

* a claimed airdrop associates its receiver only when it is not associated already: :func:`associate_new`;
* a scheduled child sets ``schedule.executed_timestamp`` of an existing schedule only (a schedule created before
  the mirror's start gets no row): :func:`set_schedules_executed`;
* a burned or wiped NFT has no owner (``nft.account_id`` is NULL when ``deleted``): :func:`clear_deleted_owners`;
* TokenUpdateNfts changes the metadata of NFTs and keeps their spenders: :func:`update_nft_metadata`;
* the dissociation of an account from a deleted token lowers the token's ``total_supply`` by what the account
  held, and deletes the account's NFTs of an NFT class (owner and spenders cleared):
  :func:`dissociate_deleted_token`;
* a treasury change of an NFT class moves every NFT the old treasury holds to the new one, and both treasuries'
  ``token_account.balance`` with them: :func:`move_nft_treasury`.

Every statement is composed from the table model's names; values are always bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from ledgermirror.db import write
from ledgermirror.db.schema import RANGE_COLUMN, table

_ASSOCIATED = f"""
select t.account_id, t.token_id
from unnest($1::bigint[], $2::bigint[]) as s(account_id, token_id)
join token_account t on {write.key_probe(table("token_account"))}
where t.associated
"""

_SCHEDULES_EXECUTED = write.update_given_sql(
    "schedule", "executed_timestamp = s.stamp", "unnest($1::bigint[], $2::bigint[]) as s(schedule_id, stamp)"
)

_CLEAR_DELETED_OWNERS = """
update nft set account_id = null
where token_id = $1 and serial_number = any($2::bigint[]) and deleted and account_id is not null
"""

_OLD_TREASURY_BALANCE = """
update token_account set balance = 0, balance_timestamp = $3
where account_id = $1 and token_id = $2
"""

_NEW_TREASURY_BALANCE = """
update token_account set balance = balance + $3, balance_timestamp = $4
where account_id = $1 and token_id = $2
"""


def _quote(name: str) -> str:
    return '"' + name + '"'


def _nft_history_copy(where: str) -> str:
    """Copy the current ``nft`` rows matching ``where`` (parameters $1 and $2) into ``nft_history``, their
    range closed at ``$3`` (the change's consensus timestamp); rows opened at ``$3`` are left alone."""
    model = table("nft")
    columns = ", ".join(_quote(name) for name in model.column_names)
    values = ", ".join(
        f"int8range(lower({RANGE_COLUMN}), $3)" if name == RANGE_COLUMN else _quote(name)
        for name in model.column_names
    )
    return (
        f"insert into {_quote(model.history_name)} ({columns})\n"
        f"select {values} from {_quote(model.name)}\n"
        f"where {where} and lower({RANGE_COLUMN}) < $3"
    )


_METADATA_WHERE = "token_id = $1 and serial_number = any($2::bigint[])"
_METADATA_HISTORY = _nft_history_copy(_METADATA_WHERE)
_METADATA_UPDATE = f"""
update nft set metadata = $4, {RANGE_COLUMN} = int8range($3, null)
where {_METADATA_WHERE} and lower({RANGE_COLUMN}) <= $3
"""

_TREASURY_WHERE = "token_id = $1 and account_id = $2"
_TREASURY_HISTORY = _nft_history_copy(_TREASURY_WHERE)
_TREASURY_UPDATE = f"""
update nft set account_id = $3, spender = null, delegating_spender = null, {RANGE_COLUMN} = int8range($4, null)
where {_TREASURY_WHERE} and lower({RANGE_COLUMN}) <= $4
"""


_SUPPLY_DELTA = "update token set total_supply = total_supply + $2 where token_id = $1"

_HELD_WHERE = "token_id = $1 and account_id = $2"
_HELD_HISTORY = _nft_history_copy(_HELD_WHERE + " and not deleted")
_HELD_DELETE = f"""
update nft set deleted = true, account_id = null, spender = null, delegating_spender = null,
  {RANGE_COLUMN} = int8range($3, null)
where {_HELD_WHERE} and not deleted and lower({RANGE_COLUMN}) <= $3
"""


def _count(status: str) -> int:
    """Rows an ``INSERT 0 n`` / ``UPDATE n`` status reports."""
    return int(status.rsplit(" ", 1)[-1])


async def associate_new(conn: asyncpg.Connection, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Upsert ``token_account`` association rows except for pairs that are associated already."""
    if not rows:
        return {}
    pairs = [(row["account_id"], row["token_id"]) for row in rows]
    accounts, tokens = zip(*pairs, strict=True)
    associated = {
        (record["account_id"], record["token_id"])
        for record in await conn.fetch(_ASSOCIATED, list(accounts), list(tokens))
    }
    kept = [row for row in rows if (row["account_id"], row["token_id"]) not in associated]
    return {"token_account": await write.upsert(conn, "token_account", kept)} if kept else {}


async def set_schedules_executed(conn: asyncpg.Connection, executed: Sequence[tuple[int, int]]) -> dict[str, int]:
    """(schedule id, consensus timestamp): ``executed_timestamp`` of schedules the table holds."""
    if not executed:
        return {}
    ids, stamps = zip(*executed, strict=True)
    return {"schedule": _count(await conn.execute(_SCHEDULES_EXECUTED, list(ids), list(stamps)))}


async def clear_deleted_owners(conn: asyncpg.Connection, token_id: int, serials: Sequence[int]) -> dict[str, int]:
    """``account_id`` = NULL for the given NFTs once they are deleted (burned or wiped)."""
    if not serials:
        return {}
    await conn.execute(_CLEAR_DELETED_OWNERS, token_id, list(serials))
    return {}


async def update_nft_metadata(
    conn: asyncpg.Connection, token_id: int, serials: Sequence[int], metadata: bytes, consensus_timestamp: int
) -> dict[str, int]:
    """New metadata for the given NFTs from ``consensus_timestamp`` on: the previous state goes to
    ``nft_history``; owner, spenders and the other columns are kept. NFTs the table lacks are skipped."""
    if not serials:
        return {}
    serial_list = list(serials)
    history = _count(await conn.execute(_METADATA_HISTORY, token_id, serial_list, consensus_timestamp))
    updated = _count(await conn.execute(_METADATA_UPDATE, token_id, serial_list, consensus_timestamp, metadata))
    return {"nft_history": history, "nft": updated}


async def move_nft_treasury(
    conn: asyncpg.Connection, token_id: int, old_treasury: int, new_treasury: int, consensus_timestamp: int
) -> dict[str, int]:
    """Every NFT of ``token_id`` held by the old treasury now belongs to the new one (spenders cleared, the
    previous states in ``nft_history``); the old treasury's balance becomes 0 and the new one gains the count."""
    stamp = consensus_timestamp
    history = _count(await conn.execute(_TREASURY_HISTORY, token_id, old_treasury, stamp))
    moved = _count(await conn.execute(_TREASURY_UPDATE, token_id, old_treasury, new_treasury, stamp))
    await conn.execute(_OLD_TREASURY_BALANCE, old_treasury, token_id, stamp)
    await conn.execute(_NEW_TREASURY_BALANCE, new_treasury, token_id, moved, stamp)
    return {"nft_history": history, "nft": moved}


async def dissociate_deleted_token(
    conn: asyncpg.Connection, token_id: int, account_id: int, amount: int, consensus_timestamp: int
) -> dict[str, int]:
    """An account dissociated from a deleted token: ``total_supply`` += ``amount`` (negative: what it held);
    its NFTs of the token, if any, are deleted from ``consensus_timestamp`` on (previous states to history)."""
    await conn.execute(_SUPPLY_DELTA, token_id, amount)
    history = _count(await conn.execute(_HELD_HISTORY, token_id, account_id, consensus_timestamp))
    deleted = _count(await conn.execute(_HELD_DELETE, token_id, account_id, consensus_timestamp))
    return {"nft_history": history, "nft": deleted}
