"""Helpers of the import tests: copies of the fixture streams, one import run, what the database holds."""

from __future__ import annotations

import asyncio
import gzip
import shutil
from pathlib import Path
from typing import Any

import asyncpg
from tests.importer.fixtures import NODE_IDS, RECORDS, SIGNING_BOOK

from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.progress import ImportStats
from ledgermirror.importer.sources import Store, open_store

_NON_EMPTY_TABLES = (
    "select tablename from pg_tables where schemaname = 'public' and tablename <> 'ledgermirror_schema_history'"
)


def copy_streams(root: Path) -> Path:
    """The v6 fixtures in the ``recordstreams/record0.0.N/`` layout under ``root``; returns ``root``."""
    shutil.copytree(RECORDS, root / "recordstreams")
    return root


def copy_streams_hip679(root: Path, network: str = "testnet") -> Path:
    """The v6 fixtures in the HIP-679 ``<network>/<shard>/<node id>/record/`` layout under ``root``."""
    for node_id in NODE_IDS:
        shutil.copytree(RECORDS / f"record0.0.{node_id + 3}", root / network / "0" / str(node_id) / "record")
    return root


def node_file(root: Path, node_id: int, name: str) -> Path:
    return root / "recordstreams" / f"record0.0.{node_id + 3}" / name


def rewrite_gzip(path: Path, change: Any) -> None:
    """Decompress, apply ``change`` (bytes -> bytes), compress again."""
    path.write_bytes(gzip.compress(change(gzip.decompress(path.read_bytes()))))


def flip(data: bytes, position: int) -> bytes:
    position %= len(data)
    return data[:position] + bytes([data[position] ^ 0x01]) + data[position + 1 :]


def run(url: str, source: str | Path | Store, *, book: Path | None = SIGNING_BOOK, **options: Any) -> ImportStats:
    store = open_store(str(source)) if isinstance(source, (str, Path)) else source
    settings = ImportOptions(once=True, address_book=book, **options)

    async def go() -> ImportStats:
        conn = await asyncpg.connect(url)
        try:
            return await run_import(conn, store, settings)
        finally:
            await conn.close()

    return asyncio.run(go())


def table_counts(url: str) -> dict[str, int]:
    """Rows per non-empty table."""

    async def go() -> dict[str, int]:
        conn = await asyncpg.connect(url)
        try:
            counts = {}
            for (name,) in await conn.fetch(_NON_EMPTY_TABLES):
                count = await conn.fetchval(f'select count(*) from "{name}"')
                if count:
                    counts[name] = count
            return counts
        finally:
            await conn.close()

    return asyncio.run(go())


def fetch(url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    async def go() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(sql, *args))
        finally:
            await conn.close()

    return asyncio.run(go())
