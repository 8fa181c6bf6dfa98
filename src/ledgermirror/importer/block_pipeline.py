"""The block import loop: read blocks from a :class:`~.block_source.BlockSource`, verify, write, commit.

Per block, in number order: :func:`~.block_verify.verify_block` (numbers, root hash chain, proof; for a wrapped
record block the signatures over its record file and the record chain), all **before anything of it is
written**; then its rows go into the batch of the open database transaction (``handlers.rows_of_file`` with
the aliases it names looked up, over the wrapped record file, or over the native block's transactions as record
items), and one ``record_file`` row per block. Groups, address book reloads and the bootstrap book and balances
are the record pipeline's (:func:`.pipeline.write_files`). A refused block ends the transaction after the blocks
before it (committed).

A restart reads the last ``record_file`` row and asks the source for the block after it: its number must
follow, its previous root hash must be the stored root (``hash`` of a native block, ``wrapped_record_block_hash``
of a wrapped one) and a wrapped record file must continue the stored running hash. After record-stream files
(the cutover) the first block is the one after the last file's block number, checked against its running hash.

Blocks whose proof cannot be verified here (TSS signatures, block state proofs) are accepted as *chain-verified
only*: a warning is logged and the ``import_status`` row counts them (``ledgermirror import --status``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.db.commit_notify import notify_commit
from ledgermirror.importer.block_source import BlockSource, FileBlockSource, SourceBlock
from ledgermirror.importer.block_verify import BlockLink, VerifiedBlock, verify_block
from ledgermirror.importer.errors import BlockProofRejected, StreamFileError, StreamParseError
from ledgermirror.importer.handlers.balances import read_balance_snapshot
from ledgermirror.importer.handlers.base import Batch, ItemError
from ledgermirror.importer.handlers.lookups import rows_of_file_with_lookups
from ledgermirror.importer.pipeline import (
    ImportOptions,
    Position,
    has_node_stakes,
    load_book,
    sole_importer,
    write_files,
)
from ledgermirror.importer.progress import ImportStats, LogProgress, Progress
from ledgermirror.importer.record_file_row import record_file_row
from ledgermirror.importer.sources import SourceError, is_bucket
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
class _State:
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
        return await _BlockRun(conn, source, options, stop or asyncio.Event(), progress or LogProgress()).run()


class _BlockRun:
    def __init__(
        self,
        conn: asyncpg.Connection,
        source: BlockSource,
        options: ImportOptions,
        stop: asyncio.Event,
        progress: Progress,
    ) -> None:
        self.conn = conn
        self.source = source
        self.options = options
        self.stop = stop
        self.progress = progress
        self.stats = ImportStats()
        self.reached_end = False
        self.state: _State
        self.start_number: int | None = None
        """Where an empty database starts (None: the source's first block)."""

    async def run(self) -> ImportStats:
        self.state = await self._initial_state()
        backoff = self.options.poll_seconds
        while not self.stop.is_set() and not self.reached_end:
            try:
                imported = await self._import()
            except (StreamFileError, SourceError) as error:
                if self.options.once:
                    self.progress.refused(error, retrying=False)
                    raise
                self.progress.refused(error, retrying=True)
                imported = 0
            if imported:
                backoff = self.options.poll_seconds
                continue
            if self.options.once:
                break
            self.progress.waiting(self.stats, backoff)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), backoff)
            backoff = min(backoff * 2, self.options.max_poll_seconds)
        self.progress.finished(self.stats)
        return self.stats

    async def _initial_state(self) -> _State:
        book, pending = await load_book(self.conn, self.options)
        stakes = await import_state.latest_node_stakes(self.conn)
        link = await initial_link(self.conn)
        balances = None
        if link is None and self.options.initial_balances is not None:
            balances = read_balance_snapshot(self.options.initial_balances.read_bytes())
        if link is not None and link.record is not None:
            self.stats.last_name, self.stats.last_consensus_end = link.record.name, link.record.consensus_end
        position = Position(None, link.number if link else None, None, book, stakes, pending, balances)
        if link is None:
            self.start_number = await self._start_number()
        elif self.options.start is not None:
            _log.info("the database holds files: resuming after block %d, --start-date ignored", link.number)
        return _State(position, link)

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
        link = self.state.link
        return link.number + 1 if link is not None and link.number is not None else self.start_number

    async def _import(self) -> int:
        """Blocks from the source in transactions of several; returns how many were committed."""
        blocks = self.source.blocks(self._next_number())
        imported = 0
        try:
            while not self.stop.is_set() and not self.reached_end:
                tentative = dataclasses.replace(self.state, position=dataclasses.replace(self.state.position))
                group = ImportStats()
                async with self.conn.transaction():
                    refused, exhausted = await self._group(blocks, tentative, group)
                    await notify_commit(self.conn, group.last_consensus_end)
                self._committed(group)
                self.state = tentative
                imported += group.files
                if refused is not None:
                    raise refused
                if exhausted:
                    break
        finally:
            await _close(blocks)
        return imported

    async def _group(
        self, blocks: AsyncIterator[SourceBlock], state: _State, group: ImportStats
    ) -> tuple[StreamFileError | None, bool]:
        """Verify and gather blocks into the open transaction up to the group's limits; returns the refused
        block's error (if one ends the group) and whether the source has nothing more now."""
        batch = Batch(entity_transactions=self.options.entity_transactions)
        rows: list[dict[str, object]] = []
        refused: StreamFileError | None = None
        exhausted = False
        options = self.options
        while group.files < options.files_per_transaction and group.items < options.items_per_transaction:
            if self.stop.is_set():
                break
            load_start = time.time_ns() // 1_000_000
            fetched = time.perf_counter()
            source_block = await anext(blocks, None)
            self.stats.cost.download += time.perf_counter() - fetched
            if source_block is None:
                exhausted = True
                break
            checked = time.perf_counter()
            try:
                verified = verify_block(
                    source_block, state.position.book, state.link, stakes=state.position.stakes
                )
            except StreamFileError as error:
                refused = error
                break
            finally:
                self.stats.cost.data += time.perf_counter() - checked
            if options.require_verified_proofs and not verified.proof_verified:
                detail = f"its {verified.proof} proof cannot be verified here (verified proofs required)"
                refused = BlockProofRejected(source_block.name, detail)
                break
            if options.end is not None and verified.record.consensus_start > options.end:
                self.reached_end = True
                break
            built = time.perf_counter()
            try:
                await rows_of_file_with_lookups(self.conn, verified.record, batch, verified.sidecars)
            except ItemError as error:
                raise StreamParseError(source_block.name, str(error)) from error
            rows.append(block_file_row(verified, load_start, time.time_ns() // 1_000_000))
            self._accepted(verified, state)
            group.files += 1
            group.items += verified.record.count
            group.last_name, group.last_consensus_end = verified.record.name, verified.record.consensus_end
            group.write_seconds += time.perf_counter() - built
            if batch.address_book_changed or has_node_stakes(batch):
                group.rows += await write_files(self.conn, batch, rows, state.position, group)
                batch = Batch(entity_transactions=options.entity_transactions)
                rows = []
        group.rows += await write_files(self.conn, batch, rows, state.position, group)
        if state.last is not None and group.files:
            await self._save_status(state, group)
        return refused, exhausted

    def _accepted(self, verified: VerifiedBlock, state: _State) -> None:
        state.link = verified.link()
        state.position.index = verified.block.number
        state.last = verified
        if not verified.proof_verified:
            if state.chain_only == 0 and self.state.chain_only == 0:
                _log.warning(
                    "block %d accepted as chain-verified only: its %s proof cannot be verified here",
                    verified.block.number,
                    verified.proof,
                )
            state.chain_only += 1
            if state.first_chain_only is None:
                state.first_chain_only = verified.block.number

    async def _save_status(self, state: _State, group: ImportStats) -> None:
        last = state.last
        assert last is not None
        status = import_state.BlockStatus(
            BLOCKS,
            last.block.number,
            last.block.name,
            last.record.consensus_end,
            last.proof,
            last.proof_verified,
            state.chain_only - self.state.chain_only,
            state.first_chain_only,
        )
        await import_state.save_status(self.conn, status)

    def _committed(self, group: ImportStats) -> None:
        if group.files == 0:
            return
        stats = self.stats
        stats.files += group.files
        stats.items += group.items
        stats.rows += group.rows
        stats.tables.update(group.tables)
        stats.write_seconds += group.write_seconds
        stats.commits += 1
        stats.last_name, stats.last_consensus_end = group.last_name, group.last_consensus_end
        self.progress.committed(stats)


async def _close(blocks: AsyncIterator[SourceBlock]) -> None:
    closer = getattr(blocks, "aclose", None)
    if closer is not None:
        await closer()
