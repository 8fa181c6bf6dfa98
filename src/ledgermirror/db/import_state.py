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
select name, hash, consensus_end, index, version, wrapped_record_block_hash from record_file
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


_SAVE_STATUS = """
insert into import_status as status (id, stream, last_index, last_name, last_consensus_end, last_proof,
    last_proof_verified, chain_only_blocks, first_chain_only_index)
values (1, $1, $2, $3, $4, $5, $6, $7, $8)
on conflict (id) do update set stream = excluded.stream, last_index = excluded.last_index,
    last_name = excluded.last_name, last_consensus_end = excluded.last_consensus_end,
    last_proof = excluded.last_proof, last_proof_verified = excluded.last_proof_verified,
    chain_only_blocks = status.chain_only_blocks + excluded.chain_only_blocks,
    first_chain_only_index = coalesce(status.first_chain_only_index, excluded.first_chain_only_index)
"""

_STATUS = "select * from import_status where id = 1"


@dataclass(frozen=True, slots=True)
class BlockStatus:
    """How the last imported block (or file) was verified; ``chain_only`` counts blocks accepted on the hash
    chain only, ``first_chain_only`` is the first of them."""

    stream: str
    last_index: int
    last_name: str
    last_consensus_end: int
    last_proof: str
    last_proof_verified: bool
    chain_only: int
    first_chain_only: int | None


@dataclass(frozen=True, slots=True)
class LastRecordFile:
    name: str
    hash: str
    consensus_end: int
    index: int
    version: int
    wrapped_record_block_hash: bytes | None = None
    """The root hash of the wrapped record block the file came in (None: from the record stream)."""


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
    wrapped = row["wrapped_record_block_hash"]
    return LastRecordFile(
        row["name"],
        row["hash"],
        row["consensus_end"],
        row["index"],
        row["version"],
        bytes(wrapped) if wrapped is not None else None,
    )


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


async def save_status(conn: asyncpg.Connection, status: BlockStatus) -> None:
    """Record the last accepted block; ``status.chain_only`` is added to the stored count."""
    await conn.execute(
        _SAVE_STATUS,
        status.stream,
        status.last_index,
        status.last_name,
        status.last_consensus_end,
        status.last_proof,
        status.last_proof_verified,
        status.chain_only,
        status.first_chain_only,
    )


async def import_status(conn: asyncpg.Connection) -> BlockStatus | None:
    row = await conn.fetchrow(_STATUS)
    if row is None:
        return None
    return BlockStatus(
        row["stream"],
        row["last_index"],
        row["last_name"],
        row["last_consensus_end"],
        row["last_proof"],
        row["last_proof_verified"],
        row["chain_only_blocks"],
        row["first_chain_only_index"],
    )
