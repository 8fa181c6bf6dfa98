"""Which stream to import (``--stream records|blocks|auto``) and the record-to-block cutover.

``records`` runs the record pipeline, ``blocks`` the block pipeline (a ``grpc://`` source is always blocks).
``auto`` (the default) follows the reference's single-stage cutover (``importer-transaction-handlers.md``
§6.3): while the cutover is not complete it imports the record stream until nothing new is listed, then asks
the block source for the block after the last imported file (its number + 1, continuing its running hash);
once a block has been imported the cutover is complete (the last ``record_file`` row came from a block) and
only blocks are followed. Neither a gap (the block after the last file must be there) nor a duplicate (blocks
at or below the last file's number are never asked for) can occur; the chain checks of both pipelines hold
across the switch.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.importer.block_items import BLOCK_FILE_VERSION
from ledgermirror.importer.block_node import open_block_node_source
from ledgermirror.importer.block_pipeline import run_block_import
from ledgermirror.importer.block_source import BlockSource, FileBlockSource
from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.progress import ImportStats, LogProgress, Progress
from ledgermirror.importer.sources import SourceError, Store, StoreRequests, discover_nodes, open_store

STREAMS = ("records", "blocks", "auto")
_log = logging.getLogger("ledgermirror.importer")


def open_block_source(source: str, requests: StoreRequests | None = None) -> BlockSource:
    """A block source for a folder, an ``s3://`` / ``gs://`` bucket or ``grpc://host:port[,...]`` block nodes
    (a folder's or bucket's requests counted in ``requests``)."""
    if source.startswith("grpc://"):
        return open_block_node_source(source)
    return FileBlockSource(open_store(source, requests))


async def cutover_complete(conn: asyncpg.Connection) -> bool:
    """The last ``record_file`` row came from a block (a native block, or a wrapped record block)."""
    last = await import_state.last_record_file(conn)
    return last is not None and (last.version >= BLOCK_FILE_VERSION or last.wrapped_record_block_hash is not None)


async def run_stream(
    conn: asyncpg.Connection,
    source: str,
    options: ImportOptions,
    stream: str = "auto",
    *,
    stop: asyncio.Event | None = None,
    progress: Progress | None = None,
    requests: StoreRequests | None = None,
) -> ImportStats:
    """Import ``source`` (folder, bucket URL or ``grpc://`` block nodes) as ``stream`` says; a folder's or
    bucket's requests are counted in ``requests``."""
    stop = stop or asyncio.Event()
    progress = progress or LogProgress()
    if stream == "blocks" or source.startswith("grpc://"):
        blocks = open_block_source(source, requests)
        try:
            return await run_block_import(conn, blocks, options, stop=stop, progress=progress)
        finally:
            await blocks.close()
    store = open_store(source, requests)
    if stream == "records":
        return await run_import(conn, store, options, stop=stop, progress=progress)
    return await run_auto(conn, store, options, stop=stop, progress=progress)


async def _has_record_folders(store: Store) -> bool:
    try:
        await discover_nodes(store)
    except SourceError:
        return False
    return True


async def run_auto(
    conn: asyncpg.Connection,
    store: Store,
    options: ImportOptions,
    *,
    stop: asyncio.Event,
    progress: Progress,
) -> ImportStats:
    """Records until their stream stops, then blocks from the block after the last file (module text). While
    following, each round imports what the record stream has (``once``), then looks for the next block; so a
    record stream is polled with the block source, at the record pipeline's backoff."""
    blocks = FileBlockSource(store)
    once = dataclasses.replace(options, once=True)
    total = ImportStats()
    backoff = options.poll_seconds
    records = False
    while not stop.is_set():
        imported = 0
        records = records or await _has_record_folders(store)
        if records and not await cutover_complete(conn):
            try:
                imported += _add(total, await run_import(conn, store, once, stop=stop, progress=progress))
            except (StreamFileError, SourceError) as error:
                if options.once:
                    raise
                progress.refused(error, retrying=True)
        has_blocks = await blocks.root() is not None
        if not records and not has_blocks and options.once:
            raise SourceError(
                f"no node folders (record0.0.N/, <network>/<shard>/<node>/record/) nor blocks in {store}"
            )
        if not stop.is_set() and has_blocks:
            before = await cutover_complete(conn)
            block_stats = await run_block_import(conn, blocks, once, stop=stop, progress=progress)
            imported += _add(total, block_stats)
            if block_stats.files and not before:
                _log.info("cutover: the stream continues in blocks", extra={"last_file": block_stats.last_name})
            if await cutover_complete(conn) and not options.once:
                _add(total, await run_block_import(conn, blocks, options, stop=stop, progress=progress))
                break
        if options.once:
            if imported == 0:
                break
            continue
        if imported:
            backoff = options.poll_seconds
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), backoff)
        backoff = min(backoff * 2, options.max_poll_seconds)
    return total


def _add(total: ImportStats, part: ImportStats) -> int:
    total.files += part.files
    total.items += part.items
    total.rows += part.rows
    total.commits += part.commits
    if part.last_name is not None:
        total.last_name, total.last_consensus_end = part.last_name, part.last_consensus_end
    return part.files
