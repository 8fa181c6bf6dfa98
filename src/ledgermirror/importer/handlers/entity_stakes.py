"""Pending staking rewards after a NodeStakeUpdate (reference §5.6): once the rows of a batch holding a
``node_stake`` are written, each staking period that ended since the last computation gets its
``entity_stake`` rows (``db.entity_stakes``), written with the writer's history rule (the previous row of an
entity goes to ``entity_stake_history``). Nothing happens while 0.0.800 (the staking reward account) is
missing, as in the reference.
"""

from __future__ import annotations

import asyncpg

from ledgermirror.db import entity_stakes, write
from ledgermirror.importer.handlers import ids

STAKING_REWARD_ACCOUNT = ids.encoded(0, 0, 800)
MAX_PERIODS = 400
"""Periods computed in one go at most (a year and more of missed days)."""


async def update_entity_stakes(conn: asyncpg.Connection) -> dict[str, int]:
    """Every ended period not computed yet, oldest first; rows written by table."""
    written = 0
    for _ in range(MAX_PERIODS):
        rows = await entity_stakes.pending(conn, STAKING_REWARD_ACCOUNT)
        if not any(row["id"] == STAKING_REWARD_ACCOUNT for row in rows):
            break  # done, or 0.0.800 is not live at the period's end: no progress possible
        written += await write.upsert(conn, "entity_stake", rows)
    return {"entity_stake": written} if written else {}
