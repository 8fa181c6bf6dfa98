"""The v5 -> v6 renumbering: the first v6 file moves the indexes of the older files so that they end right
before its block number (the reference's RecordFileParser)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import asyncpg
from tests.importer.handlers.items import record_file
from tests.importer.importing import fetch
from tests.support import Ledger

from ledgermirror.importer.record_file_row import renumber_before_v6


def _stored(ledger: Ledger, index: int, version: int) -> None:
    ledger.execute(
        "insert into record_file (name, load_start, load_end, hash, prev_hash, consensus_start, consensus_end,"
        " count, digest_algorithm, version, file_hash, index) values ($1, 0, 0, '', '', $2, $2, 0, 0, $3, '', $2)",
        f"f{index}.rcd", index, version,
    )  # fmt: skip


def _renumber(url: str, block_number: int | None, previous: int, pending: list[dict[str, Any]]) -> None:
    record = dataclasses.replace(record_file([]), block_number=block_number)

    async def go() -> None:
        conn = await asyncpg.connect(url)
        try:
            await renumber_before_v6(conn, record, previous, pending)
        finally:
            await conn.close()

    asyncio.run(go())


def _indexes(url: str) -> list[int]:
    return [row["index"] for row in fetch(url, "select index from record_file order by consensus_end")]


def test_first_v6_file_renumbers_stored_and_pending_v5_files(ledger: Ledger) -> None:
    _stored(ledger, 0, 5)
    _stored(ledger, 1, 5)
    pending = [{"index": 2, "version": 5}]
    _renumber(ledger.url, 10, 2, pending)
    assert _indexes(ledger.url) == [7, 8]
    assert pending == [{"index": 9, "version": 5}]


def test_no_renumbering_after_v6_or_for_older_files(ledger: Ledger) -> None:
    _stored(ledger, 0, 5)
    _renumber(ledger.url, None, 0, [])  # a v5 file after v5: nothing
    _stored(ledger, 1, 6)
    _renumber(ledger.url, 10, 1, [])  # v6 after v6: the chain check's business
    assert _indexes(ledger.url) == [0, 1]
