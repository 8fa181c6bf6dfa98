"""The block path: blocks read from a :class:`~.block_source.BlockSource`, verified, run through the import
driver (:mod:`.driver`).

Per block, in number order: :func:`~.block_verify.verify_block` (numbers, root hash chain, proof; for a wrapped
record block the signatures over its record file and the record chain), all **before anything of it is
written**; its rows are those of the wrapped record file, or of the native block's transactions as record
items, and one ``record_file`` row per block. :class:`Blocks` gives the driver these verified blocks, their
rows and the ``import_status`` row; grouping, writing, address book reloads, the bootstrap book and balances,
and the commit are the driver's. A refused block ends the transaction after the blocks before it
(committed).

A restart reads the last ``record_file`` row and asks the source for the block after it: its number must
follow, its previous root hash must be the stored root (``hash`` of a native block, ``wrapped_record_block_hash``
of a wrapped one) and a wrapped record file must continue the stored running hash. After record-stream files
(the cutover) the first block is the one after the last file's block number, checked against its running hash.

Blocks whose proof cannot be verified here (TSS signatures, block state proofs) are accepted as *chain-verified
only*: a warning is logged and the ``import_status`` row counts them (``ledgermirror import --status``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.importer.block_source import BlockSource, FileBlockSource, SourceBlock
from ledgermirror.importer.block_verify import BlockLink, VerifiedBlock, verify_block
from ledgermirror.importer.collector import import_thresholds
from ledgermirror.importer.driver import Driver, Position, RecordRows, load_book, sole_importer
from ledgermirror.importer.errors import BlockProofRejected, StreamFileError
from ledgermirror.importer.handlers.balances import read_balance_snapshot
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.progress import ImportStats, LogProgress, Progress
from ledgermirror.importer.record_file_row import record_file_row
from ledgermirror.importer.sources import SourceError, is_bucket
from ledgermirror.importer.stream_unpacker import StreamUnpacker
from ledgermirror.importer.verify import ChainLink

_log = logging.getLogger("ledgermirror.importer")
BLOCKS = "blocks"


def block_file_row(verified: VerifiedBlock, load_start: int, load_end: int) -> dict[str, Any]:
    """The ``record_file`` row of a block (``fees-and-streams.md`` D): a wrapped block's record file with the
    wrapped block's root hashes; a native block as version 7 with its rounds and software version."""
    block, record = verified.block, verified.record
    row = record_file_row(record, block.number, load_start, load_end)
    if block.wrapped is not None:
        row["wrapped_record_block_hash"] = verified.root_hash
        row["previous_wrapped_record_block_hash"] = block.previous_root_hash or None
        return row
    software = block.software_version
    row.update(
        software_version_major=software.major,
        software_version_minor=software.minor,
        software_version_patch=software.patch,
        round_start=block.round_start,
        round_end=block.round_end,
    )
    return row


async def initial_link(conn: asyncpg.Connection) -> BlockLink | None:
    """What the next block continues: the last ``record_file`` row, as a block or as a record file."""
    last = await import_state.last_record_file(conn)
    if last is None:
        return None
    stored = bytes.fromhex(last.hash)
    root = stored if last.version >= 7 else last.wrapped_record_block_hash
    return BlockLink(last.index, root, ChainLink(last.name, stored, last.consensus_end, last.index))


@dataclass(slots=True)
class BlockState:
    """The block path's committed state: the position, the block chain link and the chain-only count."""

    position: Position
    link: BlockLink | None
    chain_only: int = 0
    first_chain_only: int | None = None
    last: VerifiedBlock | None = None


async def run_block_import(
    conn: asyncpg.Connection,
    source: BlockSource,
    options: ImportOptions,
    *,
    stop: asyncio.Event | None = None,
    progress: Progress | None = None,
) -> ImportStats:
    """Import blocks from ``source`` until done (``once``, ``end``) or ``stop`` is set. Raises the refused
    block's :class:`StreamFileError` in ``once`` mode (the blocks before it are committed)."""
    async with sole_importer(conn):
        link = await initial_link(conn)
        state = await initial_state(conn, options, link)
        driver = Driver(conn, options, stop or asyncio.Event(), progress or LogProgress(), state)
        if link is not None and link.record is not None:
            driver.stats.last_name, driver.stats.last_consensus_end = link.record.name, link.record.consensus_end
        unpacker = StreamUnpacker()
        with import_thresholds():
            try:
                return await _BlockRun(driver, source, unpacker).run(link)
            finally:
                driver.close()
                await unpacker.close()


async def initial_state(conn: asyncpg.Connection, options: ImportOptions, link: BlockLink | None) -> BlockState:
    """The committed state: after the block (or record file) ``link`` names, else empty."""
    book, pending = await load_book(conn, options)
    stakes = await import_state.latest_node_stakes(conn)
    balances = None
    if link is None and options.initial_balances is not None:
        balances = read_balance_snapshot(options.initial_balances.read_bytes())
    position = Position(None, link.number if link else None, None, book, stakes, pending, balances)
    return BlockState(position, link)


class Blocks:
    """The blocks the source has from one number on, verified in turn for the driver."""

    def __init__(self, blocks: AsyncIterator[SourceBlock], driver: Driver[BlockState]) -> None:
        self.blocks = blocks
        self.driver = driver
        """Whose ``state`` is the committed one (a warning and the status count chain-only blocks since it)."""
        self.exhausted = False
        self.reached_end = False

    def copy(self, state: BlockState) -> BlockState:
        return dataclasses.replace(state, position=dataclasses.replace(state.position))

    def previous(self, state: BlockState) -> BlockLink | None:
        return state.link

    def position(self, state: BlockState) -> Position:
        return state.position

    async def next_unit(self, state: BlockState) -> VerifiedBlock | None:
        cost = self.driver.stats.cost
        fetched = time.perf_counter()
        source_block = await anext(self.blocks, None)
        cost.download += time.perf_counter() - fetched
        if source_block is None:
            self.exhausted = True
            return None
        checked = time.perf_counter()
        try:
            verified = verify_block(source_block, state.position.book, state.link, stakes=state.position.stakes)
        finally:
            cost.data += time.perf_counter() - checked
        options = self.driver.options
        if options.require_verified_proofs and not verified.proof_verified:
            detail = f"its {verified.proof} proof cannot be verified here (verified proofs required)"
            raise BlockProofRejected(source_block.name, detail)
        if options.end is not None and verified.record.consensus_start > options.end:
            self.reached_end = True
            return None
        return verified

    def name_of(self, unit: VerifiedBlock) -> str:
        return unit.block.name

    async def accept(
        self, unit: VerifiedBlock, state: BlockState, record_rows: RecordRows, load_start: int
    ) -> None:
        record_rows.append(block_file_row(unit, load_start, time.time_ns() // 1_000_000))
        state.link = unit.link()
        state.position.index = unit.block.number
        state.last = unit
        if not unit.proof_verified:
            if state.chain_only == 0 and self.driver.state.chain_only == 0:
                _log.warning(
                    "block %d accepted as chain-verified only: its %s proof cannot be verified here",
                    unit.block.number,
                    unit.proof,
                )
            state.chain_only += 1
            if state.first_chain_only is None:
                state.first_chain_only = unit.block.number

    async def before_commit(self, conn: asyncpg.Connection, state: BlockState, group: ImportStats) -> None:
        """The ``import_status`` row of the last block."""
        last = state.last
        if last is None or not group.files:
            return
        status = import_state.BlockStatus(
            BLOCKS,
            last.block.number,
            last.block.name,
            last.record.consensus_end,
            last.proof,
            last.proof_verified,
            state.chain_only - self.driver.state.chain_only,
            state.first_chain_only,
        )
        await import_state.save_status(conn, status)


class _BlockRun:
    """Following the block source: blocks from the one after the last imported, imported by the driver."""

    def __init__(self, driver: Driver[BlockState], source: BlockSource, unpacker: StreamUnpacker) -> None:
        self.driver = driver
        self.source = source
        self.unpacker = unpacker
        """Unpacks the blocks read ahead (decompressed and hashed in a process of its own)."""
        self.options = driver.options
        self.start_number: int | None = None
        """Where an empty database starts (None: the source's first block)."""

    async def run(self, link: BlockLink | None) -> ImportStats:
        driver = self.driver
        if link is None:
            self.start_number = await self._start_number()
        elif self.options.start is not None:
            _log.info("the database holds files: resuming after block %d, --start-date ignored", link.number)
        backoff = self.options.poll_seconds
        while not driver.stop.is_set() and not driver.reached_end:
            try:
                imported = await self._import()
            except (StreamFileError, SourceError) as error:
                if self.options.once:
                    driver.progress.refused(error, retrying=False)
                    raise
                driver.progress.refused(error, retrying=True)
                imported = 0
            if imported:
                backoff = self.options.poll_seconds
                continue
            if self.options.once:
                break
            await driver.wait(backoff)
            backoff = min(backoff * 2, self.options.max_poll_seconds)
        driver.progress.finished(driver.stats)
        return driver.stats

    async def _start_number(self) -> int | None:
        """An empty database: the first block at or after ``start``; else a bucket's newest block (the record
        path's rule, so a new mirror does not start a months-long download by accident); else the first."""
        source = self.source
        if not isinstance(source, FileBlockSource):
            return None
        if self.options.start is not None:
            number = await source.number_at(self.options.start)
            if number is None:  # every block present is older: wait for the next one
                last = await source.last_number()
                number = last + 1 if last is not None else None
            _log.info("empty database: starting at block %s (--start-date)", number)
            return number
        if is_bucket(source.store):
            number = await source.last_number()
            _log.info("empty database on a bucket: starting at its newest block %s", number)
            return number
        return None

    def _next_number(self) -> int | None:
        link = self.driver.state.link
        return link.number + 1 if link is not None and link.number is not None else self.start_number

    async def _import(self) -> int:
        """Blocks from the source in transactions of several; returns how many were committed."""
        blocks = self.source.blocks(self._next_number(), self.unpacker)
        try:
            return await self.driver.run_units(Blocks(blocks, self.driver))
        finally:
            await _close(blocks)


async def _close(blocks: AsyncIterator[SourceBlock]) -> None:
    closer = getattr(blocks, "aclose", None)
    if closer is not None:
        await closer()
