"""What the importer reads back from the database: where the stream stopped, the address book and node
stakes in force, and the lock that keeps a second importer out. Every statement of the importer's own
bookkeeping is here; rows go in through :mod:`ledgermirror.db.write`."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

IMPORTER_LOCK = 0x4C4D_494D_504F_5254  # "LMIMPORT": one importer per database
"""Session advisory lock key held while an importer runs."""

_TRY_LOCK = "select pg_try_advisory_lock($1)"
_UNLOCK = "select pg_advisory_unlock($1)"

_LAST_RECORD_FILE = """
select name, hash, consensus_end, index, version from record_file
order by consensus_end desc
limit 1
"""

_SHIFT_INDEXES = "update record_file set index = index + $1"

_CURRENT_BOOK = """
select start_consensus_timestamp, file_data from address_book
where file_id = $1
order by start_consensus_timestamp desc
limit 1
"""

_LATEST_NODE_STAKES = """
select node_id, stake from node_stake
where consensus_timestamp = (select max(consensus_timestamp) from node_stake)
"""


@dataclass(frozen=True, slots=True)
class LastRecordFile:
    name: str
    hash: str
    consensus_end: int
    index: int
    version: int


@dataclass(frozen=True, slots=True)
class StoredBook:
    start_consensus_timestamp: int
    file_data: bytes


async def try_lock(conn: asyncpg.Connection) -> bool:
    return bool(await conn.fetchval(_TRY_LOCK, IMPORTER_LOCK))


async def unlock(conn: asyncpg.Connection) -> None:
    await conn.fetchval(_UNLOCK, IMPORTER_LOCK)


async def last_record_file(conn: asyncpg.Connection) -> LastRecordFile | None:
    row = await conn.fetchrow(_LAST_RECORD_FILE)
    if row is None:
        return None
    return LastRecordFile(row["name"], row["hash"], row["consensus_end"], row["index"], row["version"])


async def shift_record_file_indexes(conn: asyncpg.Connection, offset: int) -> None:
    """Add ``offset`` to the ``index`` of every stored record file (the v5 -> v6 renumbering)."""
    await conn.execute(_SHIFT_INDEXES, offset)


async def current_book(conn: asyncpg.Connection, file_id: int) -> StoredBook | None:
    row = await conn.fetchrow(_CURRENT_BOOK, file_id)
    if row is None:
        return None
    return StoredBook(row["start_consensus_timestamp"], bytes(row["file_data"]))


async def latest_node_stakes(conn: asyncpg.Connection) -> dict[int, int]:
    return {row["node_id"]: row["stake"] for row in await conn.fetch(_LATEST_NODE_STAKES)}
