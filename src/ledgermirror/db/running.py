"""Running values the importer adds to: ``entity.balance``, ``token_account.balance``, allowance amounts.

These are the reference's "partial" objects without a ``timestamp_range``: they change existing rows in place,
make no history row, and a key the table does not hold is dropped (no row is created), as the reference's
upsert does for rows without range. Deltas come summed per key; each statement takes them as arrays, finds each
key's row by one probe of its index (``db.write.update_given_sql``: a plan that does not depend on the table's
statistics), with the writer's planner settings (``db.write.execute_by_index``).
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from ledgermirror.db.write import execute_by_index, update_given_sql

_ENTITY_BALANCES = update_given_sql(
    "entity",
    """balance = case
    when t.type in ('ACCOUNT', 'CONTRACT') then coalesce(t.balance, 0) + s.amount
    when t.balance is not null then t.balance + s.amount
  end,
  balance_timestamp = s.stamp""",
    "unnest($1::bigint[], $2::bigint[], $3::bigint[]) as s(id, amount, stamp)",
)

_TOKEN_BALANCES = update_given_sql(
    "token_account",
    "balance = t.balance + s.amount, balance_timestamp = s.stamp, associated = true",
    "unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) as s(account_id, token_id, amount, stamp)",
)

_CRYPTO_ALLOWANCE_DEBITS = update_given_sql(
    "crypto_allowance",
    "amount = t.amount + s.amount",
    "unnest($1::bigint[], $2::bigint[], $3::bigint[]) as s(owner, spender, amount)",
)

_TOKEN_ALLOWANCE_DEBITS = update_given_sql(
    "token_allowance",
    "amount = t.amount + s.amount",
    "unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) as s(owner, spender, token_id, amount)",
)

_ENTITY_IDS_HELD = "select id from entity where id = any($1::bigint[])"

_CLEAR_EMPTY_PUBLIC_KEYS = "update entity set public_key = null where id = any($1::bigint[]) and public_key = ''"


def _count(status: str) -> int:
    """Rows an ``UPDATE n`` status reports."""
    return int(status.rsplit(" ", 1)[-1])


async def add_entity_balances(conn: asyncpg.Connection, deltas: Sequence[tuple[int, int, int]]) -> int:
    """(id, amount, timestamp): accounts and contracts start from 0; other types only add to a balance they
    have (files, topics, tokens and schedules never get one). Returns the rows changed."""
    if not deltas:
        return 0
    ids, amounts, stamps = zip(*deltas, strict=True)
    return _count(await execute_by_index(conn, _ENTITY_BALANCES, list(ids), list(amounts), list(stamps)))


async def entity_ids_held(conn: asyncpg.Connection, ids: Sequence[int]) -> set[int]:
    """The ids of ``ids`` that ``entity`` holds."""
    return {row["id"] for row in await conn.fetch(_ENTITY_IDS_HELD, list(ids))}


async def add_token_balances(conn: asyncpg.Connection, deltas: Sequence[tuple[int, int, int, int]]) -> int:
    """(account id, token id, amount, timestamp) onto existing associations. Returns the rows changed."""
    if not deltas:
        return 0
    accounts, tokens, amounts, stamps = zip(*deltas, strict=True)
    status = await execute_by_index(
        conn, _TOKEN_BALANCES, list(accounts), list(tokens), list(amounts), list(stamps)
    )
    return _count(status)


async def add_allowance_debits(
    conn: asyncpg.Connection, debits: Sequence[tuple[int, int, int | None, int]]
) -> int:
    """(owner, spender, token id or None for HBAR, amount): approved debits lower ``amount`` (not
    ``amount_granted``) of existing allowances. Returns the rows changed."""
    hbar = [(owner, spender, amount) for owner, spender, token, amount in debits if token is None]
    tokens = [(owner, spender, token, amount) for owner, spender, token, amount in debits if token is not None]
    changed = 0
    if hbar:
        owners, spenders, amounts = zip(*hbar, strict=True)
        changed += _count(
            await execute_by_index(conn, _CRYPTO_ALLOWANCE_DEBITS, list(owners), list(spenders), list(amounts))
        )
    if tokens:
        owners, spenders, token_ids, amounts = zip(*tokens, strict=True)
        status = await execute_by_index(
            conn, _TOKEN_ALLOWANCE_DEBITS, list(owners), list(spenders), list(token_ids), list(amounts)
        )
        changed += _count(status)
    return changed


async def clear_empty_public_keys(conn: asyncpg.Connection, ids: Sequence[int]) -> None:
    """The reference's sentinel: a key that is not one primitive key gives ``public_key`` '' which becomes NULL
    (so an update to such a key clears the previous value)."""
    if ids:
        await conn.execute(_CLEAR_EMPTY_PUBLIC_KEYS, list(ids))


_CLEAR_PROXY_SENTINELS = """
update node set grpc_proxy_endpoint = null
where node_id = any($1::bigint[]) and (grpc_proxy_endpoint ->> 'port')::bigint = -1
"""


async def clear_proxy_endpoint_sentinels(conn: asyncpg.Connection, node_ids: Sequence[int]) -> None:
    """A NodeUpdate's default gRPC proxy endpoint (written with port -1) clears the node's endpoint."""
    if node_ids:
        await conn.execute(_CLEAR_PROXY_SENTINELS, list(node_ids))


_CONTRACT_TYPE = "update entity set type = 'CONTRACT' where id = any($1::bigint[]) and type <> 'CONTRACT'"
_CONTRACT_TYPE_HISTORY = (
    "update entity_history set type = 'CONTRACT' where id = any($1::bigint[]) and type <> 'CONTRACT'"
)


async def set_contract_type(conn: asyncpg.Connection, ids: Sequence[int]) -> dict[str, int]:
    """Entities (and their history) of migration bytecode records become CONTRACTs (the reference's
    ``SidecarContractMigration.updateContractType``)."""
    if not ids:
        return {}
    changed = _count(await conn.execute(_CONTRACT_TYPE, list(ids)))
    changed += _count(await conn.execute(_CONTRACT_TYPE_HISTORY, list(ids)))
    return {"entity": changed} if changed else {}
