"""Hook storage slots (HIP-1195): the current value of each slot, whose ``created_timestamp`` restarts when a
deleted slot is written again (the reference's ``hook_storage`` upsert rule)."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

_UPSERT = """
insert into hook_storage (created_timestamp, hook_id, modified_timestamp, owner_id, key, value, deleted)
select * from unnest(
  $1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bytea[], $6::bytea[], $7::boolean[]
)
on conflict (owner_id, hook_id, key) do update set
  value = excluded.value,
  modified_timestamp = excluded.modified_timestamp,
  deleted = excluded.deleted,
  created_timestamp = case when hook_storage.deleted then excluded.created_timestamp
                           else hook_storage.created_timestamp end
"""

Slot = tuple[int, int, int, int, bytes, bytes, bool]
"""(created_timestamp, hook_id, modified_timestamp, owner_id, key, value, deleted)"""


async def upsert_slots(conn: asyncpg.Connection, slots: Sequence[Slot]) -> int:
    """One row per (owner, hook, key) (the caller folds repeated writes); returns the rows written."""
    if not slots:
        return 0
    columns = [list(values) for values in zip(*slots, strict=True)]
    await conn.execute(_UPSERT, *columns)
    return len(slots)
