"""The importer's alias and EVM-address lookups: which live entity holds an alias or an EVM address, and the
EVM addresses of given entities."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

_ENTITY_IDS = """
select id, alias, evm_address from entity
where (alias = any($1::bytea[]) or evm_address = any($1::bytea[])) and deleted is not true
order by id
"""


async def entity_ids(conn: asyncpg.Connection, keys: Sequence[bytes]) -> dict[bytes, int]:
    """Alias or EVM address -> the id of the live entity holding it (the lowest id when several do)."""
    found: dict[bytes, int] = {}
    wanted = set(keys)
    for row in await conn.fetch(_ENTITY_IDS, list(wanted)):
        for column in ("alias", "evm_address"):
            key = row[column]
            if key is not None and bytes(key) in wanted:
                found.setdefault(bytes(key), row["id"])
    return found


_EVM_ADDRESSES = """
select id, evm_address from entity where id = any($1::bigint[]) and length(evm_address) > 0
"""


async def evm_addresses(conn: asyncpg.Connection, entity_ids: Sequence[int]) -> dict[int, bytes]:
    """Entity id -> its non-empty ``evm_address`` (the reference's ``findEvmAddressesByIds``); ids without one
    are left out."""
    if not entity_ids:
        return {}
    return {row["id"]: bytes(row["evm_address"]) for row in await conn.fetch(_EVM_ADDRESSES, list(entity_ids))}
