"""Loading a synthetic ledger: run every generator and write its rows through the writer (``db/write.py``),
with binary ``COPY`` in chunks.

Generators yield rows by table and column name. A worker thread runs them one chunk ahead of the copy in
progress and encodes each chunk for COPY (typed from the schema model, superseded versions routed to the
``_history`` twins), so building rows and PostgreSQL's work overlap. Memory holds at most about two chunks per
table. The whole load is one transaction: a failed or interrupted load leaves the database as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import asyncpg

from ledgermirror.dataset import (
    accounts,
    associations,
    blocks,
    consensus,
    hooks,
    network,
    nft_transfers,
    nfts,
    schedules,
    tokens,
)
from ledgermirror.dataset.profiles import Profile, resolve_profile
from ledgermirror.dataset.world import Emit, Row, World
from ledgermirror.db import schema, write

_log = logging.getLogger(__name__)

Progress = Callable[[str, int], None]


class DatasetError(RuntimeError):
    """The database cannot take a synthetic ledger (no schema, or already loaded)."""


@dataclass(frozen=True)
class _Stream:
    name: str
    produce: Callable[[World], Emit]


def _chain(*producers: Callable[[World], Emit]) -> Callable[[World], Emit]:
    def produce(world: World) -> Emit:
        return itertools.chain.from_iterable(producer(world) for producer in producers)

    return produce


STREAMS: tuple[_Stream, ...] = (
    _Stream("entities", accounts.entities),
    _Stream("tokens", tokens.tokens),
    _Stream("associations", associations.associations),
    _Stream("nfts", nfts.nfts),
    _Stream("airdrops", associations.fungible_airdrops),
    _Stream("allowances", accounts.crypto_allowances),
    _Stream("staking", accounts.entity_stakes),
    _Stream(
        "balances",
        _chain(accounts.account_balances, associations.fungible_token_balances, nfts.nft_token_balances),
    ),
    _Stream("network", _chain(network.system_files, network.nodes)),
    _Stream("blocks", blocks.blocks),
    _Stream("topics", _chain(consensus.topics, consensus.messages)),
    _Stream("schedules", schedules.schedules),
    _Stream("nft_transfers", nft_transfers.nft_transfers),
    _Stream("hooks", _chain(hooks.hooks, hooks.registered_nodes)),
)


class _Batcher:
    """Pulls ``(table, row)`` pairs and hands out full per-table chunks, encoded for COPY (and, at the end, the
    rest)."""

    def __init__(self, rows: Emit, chunk_rows: int) -> None:
        self._rows: Iterator[tuple[str, Row]] = rows
        self._chunk_rows = chunk_rows
        self._buffers: dict[str, list[Row]] = {}
        self._done = False

    def next_batch(self) -> list[write.CopyChunk]:
        """Chunks ready to copy; empty once everything was handed out."""
        if self._done:
            return []
        buffers = self._buffers
        for table, row in self._rows:
            buffer = buffers.get(table)
            if buffer is None:
                buffer = buffers[table] = []
            buffer.append(row)
            if len(buffer) >= self._chunk_rows:
                buffers[table] = []
                return write.encode(table, buffer)
        self._done = True
        rest = [chunk for table, buffer in buffers.items() if buffer for chunk in write.encode(table, buffer)]
        buffers.clear()
        return rest


async def _copy_stream(
    conn: asyncpg.Connection, rows: Emit, chunk_rows: int, counts: dict[str, int], progress: Progress | None
) -> None:
    batcher = _Batcher(rows, chunk_rows)
    batch = await asyncio.to_thread(batcher.next_batch)
    while batch:
        upcoming = asyncio.ensure_future(asyncio.to_thread(batcher.next_batch))
        try:
            for table, copied in (await write.copy_chunks(conn, batch)).items():
                counts[table] += copied
                if progress is not None:
                    progress(table, counts[table])
        except BaseException:
            await asyncio.wait([upcoming])  # let the worker finish before unwinding
            raise
        batch = await upcoming


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """A bulk load allocates millions of short-lived rows and builds no reference cycles, so the cyclic garbage
    collector's repeated scans of the chunks in flight are pure cost (about a sixth of the generators' time);
    it is paused for the load and resumed after (reference counting still frees every row)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def is_loaded(conn: asyncpg.Connection) -> bool:
    """True if the ``entity`` table exists and has rows."""
    exists = await conn.fetchval("select to_regclass('entity') is not null")
    return bool(exists) and bool(await conn.fetchval("select exists (select 1 from entity)"))


async def load(
    conn: asyncpg.Connection,
    profile: str | Profile = "small",
    *,
    seed: int = 1,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Fill a migrated, empty database with the synthetic ledger of ``profile`` and ``seed``; rows per table.

    The same profile and seed always give the same rows. ``progress(table, rows_so_far)`` is called after every
    chunk copied.
    """
    chosen = resolve_profile(profile)
    if not await conn.fetchval("select to_regclass('entity') is not null"):
        raise DatasetError("the mirror schema is missing: run the migrations first")
    if await is_loaded(conn):
        raise DatasetError("the database already holds entities: load into an empty database")
    world = World(chosen, seed)
    counts = dict.fromkeys(schema.TABLES, 0)
    began = time.perf_counter()
    with _collector_paused():
        async with conn.transaction():
            for stream in STREAMS:
                stream_began = time.perf_counter()
                await _copy_stream(conn, stream.produce(world), chosen.chunk_rows, counts, progress)
                _log.info(
                    "dataset stream loaded",
                    extra={"stream": stream.name, "seconds": round(time.perf_counter() - stream_began, 3)},
                )
    for table in sorted(name for name, rows in counts.items() if rows):
        await conn.execute(f'analyze "{table}"')
    _log.info(
        "dataset loaded",
        extra={"profile": chosen.name, "seed": seed, "rows": sum(counts.values()),
               "seconds": round(time.perf_counter() - began, 3)},
    )  # fmt: skip
    return counts
