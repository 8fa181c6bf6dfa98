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
NATIVE_COLUMNS = (
    "load_start",
    "load_end",
    "name",
    "hash",
    "prev_hash",
    "file_hash",
    "version",
    "size",
    "sidecar_count",
    "round_start",
    "round_end",
)
"""The ``record_file`` columns of a native block that differ from its record file's by definition: the block's
name, root hash chain, version 7, no file hash, its size, no sidecar files (trace data instead), its rounds."""
NATIVE_ABSENT = frozenset({"sidecar_file", "signature_evidence"})
"""The tables a native import leaves empty by definition (docs/importer.md, "What a native block does not
carry"): its contract trace data comes inside the block, not in sidecar files, and its TSS proof names no nodes,
so there is no signature evidence. The record stream has one ``signature_evidence`` row per file and one
``sidecar_file`` row per file with sidecars."""
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
