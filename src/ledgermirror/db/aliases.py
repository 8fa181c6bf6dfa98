"""The importer's alias and EVM-address lookup: which live entity holds an alias or an EVM address."""

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
