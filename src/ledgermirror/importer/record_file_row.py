"""The ``record_file`` row of a verified file (``fees-and-streams.md`` B.1, ``importer-transaction-handlers.md``
§5.7): hashes in hex, the index, counts, sizes, consensus range, versions, and the gas used and logs bloom of
its top-level contract results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.importer.record_file import RecordFile

FIRST_BLOCK_VERSION = 6
"""Record files carry their block number from v6 on."""

BLOOM_BYTES = 256
DIGEST_SHA_384 = 0
_CONTRACT_RESULTS = ("contractCallResult", "contractCreateResult")


def next_index(record: RecordFile, previous_index: int | None) -> int:
    """v6: the file's block number; earlier versions: the previous index plus one (0 for the first)."""
    if record.block_number is not None:
        return record.block_number
    return previous_index + 1 if previous_index is not None else 0


async def renumber_before_v6(
    conn: asyncpg.Connection, record: RecordFile, previous_index: int | None, pending: Sequence[dict[str, Any]]
) -> None:
    """The first v6 file after v5 or older ones: every earlier file's ``index`` (stored, and the ``pending``
    rows not written yet) moves by ``block_number - previous index - 1``, so that the older files end right
    before the v6 block number (the reference's ``RecordFileParser``)."""
    if record.block_number is None or previous_index is None:
        return
    if pending:
        previous_version: int | None = pending[-1]["version"]
    else:
        last = await import_state.last_record_file(conn)
        previous_version = last.version if last is not None else None
    if previous_version is None or previous_version >= FIRST_BLOCK_VERSION:
        return
    offset = record.block_number - previous_index - 1
    if offset:
        for row in pending:
            row["index"] += offset
        await import_state.shift_record_file_indexes(conn, offset)


def gas_and_bloom(record: RecordFile) -> tuple[int, bytes]:
    """Sum of ``gas_used`` and OR of the blooms over top-level items with a contract call or create result."""
    gas = 0
    bloom = 0
    for item in record.items:
        message = item.record
        if message.HasField("parent_consensus_timestamp"):
            continue
        which = message.WhichOneof("body")
        if which not in _CONTRACT_RESULTS:
            continue
        result = getattr(message, which)
        gas += result.gasUsed
        if result.bloom:
            bloom |= int.from_bytes(bytes(result.bloom).rjust(BLOOM_BYTES, b"\0")[-BLOOM_BYTES:], "big")
    return gas, bloom.to_bytes(BLOOM_BYTES, "big")


def record_file_row(record: RecordFile, index: int, load_start: int, load_end: int) -> dict[str, Any]:
    gas_used, logs_bloom = gas_and_bloom(record)
    hapi = record.hapi_version
    return {
        "name": record.name,
        "load_start": load_start,
        "load_end": load_end,
        "hash": record.hash.hex(),
        "prev_hash": record.previous_hash.hex(),
        "consensus_start": record.consensus_start,
        "consensus_end": record.consensus_end,
        "count": record.count,
        "digest_algorithm": DIGEST_SHA_384,
        "hapi_version_major": hapi.major if hapi else None,
        "hapi_version_minor": hapi.minor if hapi else None,
        "hapi_version_patch": hapi.patch if hapi else None,
        "version": record.version,
        "file_hash": record.file_hash.hex(),
        "bytes": None,
        "index": index,
        "gas_used": gas_used,
        "logs_bloom": logs_bloom,
        "size": record.size,
        "sidecar_count": len(record.sidecars),
        "software_version_major": hapi.major if hapi else None,
        "software_version_minor": hapi.minor if hapi else None,
        "software_version_patch": hapi.patch if hapi else None,
    }
