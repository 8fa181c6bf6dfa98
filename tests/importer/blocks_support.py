"""Helpers of the block stream tests: simulated networks in each format, block tampering, table digests."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import zstandard

from ledgermirror.importer.block_file import split_items
from ledgermirror.importer.block_source import block_bytes, block_key
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.progress import ImportStats
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

SEED = 5
NODES = 2
SECONDS = 12
TPS = 20
FILES = SECONDS // 2
_TABLES = (
    "select tablename from pg_tables where schemaname = 'public' and tablename <> 'ledgermirror_schema_history'"
)
_COLUMNS = "select column_name from information_schema.columns where table_name = $1 order by 1"
_DIGEST = (
    "select count(*), md5(coalesce(string_agg(r::text, '|' order by r::text), '')) from (select {} from \"{}\") r"
)


def simulated(root: Path, fmt: str) -> Path:
    out = root / fmt
    simulate(out, nodes=NODES, seconds=SECONDS, tps=TPS, seed=SEED, fmt=fmt)
    return out


def copy(network: Path, target: Path) -> Path:
    shutil.copytree(network, target)
    return target


def import_stream(url: str, source: Path, stream: str = "auto", **options: Any) -> ImportStats:
    options.setdefault("initial_balances", source / INITIAL_BALANCES)
    settings = ImportOptions(once=True, address_book=source / "addressbook.bin", **options)

    async def go() -> ImportStats:
        conn = await asyncpg.connect(url)
        try:
            return await run_stream(conn, str(source), settings, stream)
        finally:
            await conn.close()

    return asyncio.run(go())


def block_path(network: Path, number: int) -> Path:
    return network / "block" / block_key(number)


def rewrite_block(network: Path, number: int, change: Callable[[list[tuple[int, bytes]]], list[bytes]]) -> None:
    """Decompress block ``number``, give its ``(kind, item bytes)`` to ``change``, store what it returns."""
    path = block_path(network, number)
    data = zstandard.ZstdDecompressor().decompress(path.read_bytes(), max_output_size=1 << 30)
    items = split_items(path.name, data)
    path.write_bytes(zstandard.ZstdCompressor().compress(block_bytes(change(items))))


def digests(url: str, skip: dict[str, tuple[str, ...]] | None = None) -> dict[str, tuple[int, str]]:
    """Every non-empty table's row count and content digest, without the ``skip`` columns per table."""

    async def go() -> dict[str, tuple[int, str]]:
        conn = await asyncpg.connect(url)
        try:
            found = {}
            for (name,) in await conn.fetch(_TABLES):
                columns = [
                    row["column_name"]
                    for row in await conn.fetch(_COLUMNS, name)
                    if row["column_name"] not in (skip or {}).get(name, ())
                ]
                listed = ", ".join(f'"{column}"' for column in columns)
                count, digest = await conn.fetchrow(_DIGEST.format(listed, name))
                if count:
                    found[name] = (count, digest)
            return found
        finally:
            await conn.close()

    return asyncio.run(go())
