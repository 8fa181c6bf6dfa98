"""The importer's alias and EVM-address lookups: which live entity holds an alias or an EVM address, and the
EVM addresses of given entities."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

_HOLDERS = """
select id, alias, evm_address, deleted is true as deleted from entity
where alias = any($1::bytea[]) or evm_address = any($1::bytea[])
order by id
"""

Holder = tuple[int, bytes | None, bytes | None, bool]
"""An entity holding a key: id, alias, EVM address, deleted."""


async def holders(conn: asyncpg.Connection, keys: Sequence[bytes]) -> list[Holder]:
    """Every entity (deleted ones too) whose alias or EVM address is one of ``keys``, by id."""
    return [
        (
            row["id"],
            None if row["alias"] is None else bytes(row["alias"]),
            None if row["evm_address"] is None else bytes(row["evm_address"]),
            row["deleted"],
        )
        for row in await conn.fetch(_HOLDERS, sorted(set(keys)))
    ]


def live_ids(found: Sequence[Holder], keys: Sequence[bytes]) -> dict[bytes, int]:
    """Alias or EVM address -> the id of the live entity holding it (the lowest id when several do), from
    :func:`holders`."""
    wanted = set(keys)
    ids: dict[bytes, int] = {}
    for entity_id, alias, evm_address, deleted in found:
        if deleted:
            continue
        for key in (alias, evm_address):
            if key is not None and key in wanted:
                ids.setdefault(key, entity_id)
    return ids


async def entity_ids(conn: asyncpg.Connection, keys: Sequence[bytes]) -> dict[bytes, int]:
    """Alias or EVM address -> the id of the live entity holding it (the lowest id when several do)."""
    return live_ids(await holders(conn, keys), keys)


_EVM_ADDRESSES = """
select id, evm_address from entity where id = any($1::bigint[]) and length(evm_address) > 0
"""


async def evm_addresses(conn: asyncpg.Connection, entity_ids: Sequence[int]) -> dict[int, bytes]:
    """Entity id -> its non-empty ``evm_address`` (the reference's ``findEvmAddressesByIds``); ids without one
    are left out."""
    if not entity_ids:
        return {}
    return {row["id"]: bytes(row["evm_address"]) for row in await conn.fetch(_EVM_ADDRESSES, list(entity_ids))}
