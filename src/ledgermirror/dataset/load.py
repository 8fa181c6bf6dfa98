"""Loading a synthetic ledger: run every generator and bulk-copy its records with ``COPY`` in chunks.

Generators run in a worker thread one chunk ahead of the copy in progress, so building rows and PostgreSQL's work
overlap. Memory holds at most about two chunks per table. The whole load is one transaction: a failed or
interrupted load leaves the database as it was.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import asyncpg

from ledgermirror.dataset import accounts, associations, blocks, network, nfts, tokens
from ledgermirror.dataset.profiles import Profile, resolve_profile
from ledgermirror.dataset.tables import ALL_TABLES, Emit, Record, Table
from ledgermirror.dataset.world import World

_log = logging.getLogger(__name__)

Progress = Callable[[str, int], None]
_Batch = list[tuple[Table, list[Record]]]


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
)


class _Batcher:
    """Pulls ``(table, record)`` pairs and hands out full per-table chunks (and, at the end, the rest)."""

    def __init__(self, records: Emit, chunk_rows: int) -> None:
        self._records: Iterator[tuple[Table, Record]] = records
        self._chunk_rows = chunk_rows
        self._buffers: dict[Table, list[Record]] = {}
        self._done = False

    def next_batch(self) -> _Batch:
        """Chunks ready to copy; empty once everything was handed out."""
        if self._done:
            return []
        buffers = self._buffers
        for table, record in self._records:
            buffer = buffers.get(table)
            if buffer is None:
                buffer = buffers[table] = []
            buffer.append(record)
            if len(buffer) >= self._chunk_rows:
                buffers[table] = []
                return [(table, buffer)]
        self._done = True
        rest = [(table, buffer) for table, buffer in buffers.items() if buffer]
        buffers.clear()
        return rest


async def _copy_stream(
    conn: asyncpg.Connection, records: Emit, chunk_rows: int, counts: dict[str, int], progress: Progress | None
) -> None:
    batcher = _Batcher(records, chunk_rows)
    batch = await asyncio.to_thread(batcher.next_batch)
    while batch:
        upcoming = asyncio.ensure_future(asyncio.to_thread(batcher.next_batch))
        try:
            for table, rows in batch:
                await conn.copy_records_to_table(table.name, records=rows, columns=list(table.columns))
                counts[table.name] += len(rows)
                if progress is not None:
                    progress(table.name, counts[table.name])
        except BaseException:
            await asyncio.wait([upcoming])  # let the worker finish before unwinding
            raise
        batch = await upcoming


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
    counts = {table.name: 0 for table in ALL_TABLES}
    began = time.perf_counter()
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
