"""The record path: record files listed from node folders, verified with their signatures and sidecars, run
through the import driver (:mod:`.driver`); resume where the database stopped.

Per record file, in stream order: its signature files are fetched from every node folder and checked,
consensus is reached, and the data file and sidecars are taken from a node that signed them and checked
(:mod:`.downloader`, :mod:`.verify`), all **before anything of the file is written** (downloads of the next
``prefetch_files`` files run ahead; their bytes are trusted only once checked). :class:`RecordFiles` gives
the driver these verified files and their ``record_file`` rows; grouping, writing and the commit are the
driver's.

A restart reads the last ``record_file`` row, lists only names after it and checks the next file's previous
hash against its hash (and the block number), so the chain is re-checked across the restart and nothing is
written twice. A session advisory lock keeps a second importer off the same database.

The address book in force is the latest ``address_book`` row of 0.0.102; an empty database takes it from
``--address-book FILE`` (written with the first committed file, as the reference's bootstrap book starting
at 1), and its genesis balances from ``--initial-balances FILE`` (seeded with the first committed file). A
file whose transactions change 0.0.101/0.0.102 (or the node stakes) reloads it before the next file is
verified.

Where to start on an empty database: ``start`` if given; else a local folder from its first file, a bucket
from its newest file that verifies (the reference's rule, so a new mirror does not start a months-long
download by accident). ``end`` stops after the last file at or before it. ``once`` stops when nothing new
is listed; otherwise the source is polled with exponential backoff until ``stop`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.db.import_state import LastRecordFile
from ledgermirror.importer.balance_files import start_from_balance_file
from ledgermirror.importer.collector import import_thresholds
from ledgermirror.importer.downloader import (
    Candidate,
    FileUnavailable,
    Prefetcher,
    cursor_after,
    fetch_verified,
    list_candidates,
    listing_folders,
    verify_download,
)
from ledgermirror.importer.driver import Driver, Position, RecordRows, load_book, sole_importer
from ledgermirror.importer.errors import ConsensusNotReached, StreamFileError
from ledgermirror.importer.handlers.balances import read_balance_snapshot
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.progress import ImportStats, LogProgress, Progress
from ledgermirror.importer.record_file_row import next_index, record_file_row, renumber_before_v6
from ledgermirror.importer.sources import NodeFolder, SourceError, Store, discover_nodes, is_bucket
from ledgermirror.importer.stream_names import stem_of
from ledgermirror.importer.stream_unpacker import StreamUnpacker
from ledgermirror.importer.verify import ChainLink, VerifiedRecordFile

_log = logging.getLogger("ledgermirror.importer")

_NEWEST_WINDOWS_SECONDS = (600, 3_600, 86_400, 7 * 86_400, 31 * 86_400, 366 * 86_400, None)
_NEWEST_ATTEMPTS = 10
_REDISCOVER_SECONDS = 60.0


def stream_name_prefix(nanos: int) -> str:
    """The name stem of an instant (``2022-07-13T08_46_11.304284003Z``): listing after it starts there."""
    return stem_of(nanos)


class RecordFiles:
    """The record files of one listing (their downloads run ahead), verified in turn for the driver."""

    def __init__(self, store: Store, remaining: Prefetcher, driver: Driver[Position]) -> None:
        self.store = store
        self.remaining = remaining
        self.driver = driver
        self.exhausted = not remaining
        self.reached_end = False

    def copy(self, state: Position) -> Position:
        return dataclasses.replace(state)

    def previous(self, state: Position) -> ChainLink | None:
        return state.link

    def position(self, state: Position) -> Position:
        return state

    async def next_unit(self, state: Position) -> VerifiedRecordFile | None:
        remaining = self.remaining
        if not remaining:
            self.exhausted = True
            return None
        end = self.driver.options.end
        if end is not None and remaining.peek().instant > end:
            self.reached_end = True
            return None
        fetched = await remaining.next()
        self.exhausted = not remaining
        return await verify_download(
            self.store, fetched, state.book, state.link, stakes=state.stakes, cost=self.driver.stats.cost
        )

    def name_of(self, unit: VerifiedRecordFile) -> str:
        return unit.record.name

    async def accept(
        self, unit: VerifiedRecordFile, state: Position, record_rows: RecordRows, load_start: int
    ) -> None:
        record = unit.record
        await renumber_before_v6(self.driver.conn, record, state.index, record_rows)
        index = next_index(record, state.index)
        record_rows.append(record_file_row(record, index, load_start, time.time_ns() // 1_000_000))
        state.link, state.index, state.cursor = unit.link(), index, cursor_after(record.name)

    async def before_commit(self, conn: asyncpg.Connection, state: Position, group: ImportStats) -> None:
        return None


async def run_import(
    conn: asyncpg.Connection,
    store: Store,
    options: ImportOptions,
    *,
    stop: asyncio.Event | None = None,
    progress: Progress | None = None,
) -> ImportStats:
    """Import from ``store`` into the database of ``conn`` until done (``once``, ``end``) or ``stop`` is set.
    Raises :class:`StreamFileError` for a refused file in ``once`` mode (the files before it are committed)."""
    async with sole_importer(conn):
        last = await import_state.last_record_file(conn)
        position = await initial_position(conn, options, last)
        if last is None and options.balance_files:
            options = dataclasses.replace(options, start=await start_from_balance_file(store, position, options))
        driver = Driver(conn, options, stop or asyncio.Event(), progress or LogProgress(), position)
        if last is not None:
            driver.stats.last_name, driver.stats.last_consensus_end = last.name, last.consensus_end
        with import_thresholds():
            run = _Run(driver, store)
            try:
                return await run.run()
            finally:
                await run.unpacker.close()
                driver.close()


async def initial_position(
    conn: asyncpg.Connection, options: ImportOptions, last: LastRecordFile | None
) -> Position:
    """The committed position: after the database's ``last`` file, else where ``options`` start."""
    book, pending = await load_book(conn, options)
    stakes = await import_state.latest_node_stakes(conn)
    if last is None:
        cursor = stream_name_prefix(options.start) if options.start is not None else None
        balances = None
        if options.initial_balances is not None:
            balances = read_balance_snapshot(options.initial_balances.read_bytes())
        return Position(None, None, cursor, book, stakes, pending, balances)
    if options.initial_balances is not None:
        _log.warning("the database already holds files: --initial-balances ignored")
    if options.start is not None:
        _log.warning("the database already holds files: resuming after %s, --start-date ignored", last.name)
    block = last.index if last.version >= 6 else None
    link = ChainLink(last.name, bytes.fromhex(last.hash), last.consensus_end, block)
    return Position(link, last.index, cursor_after(last.name), book, stakes, pending)


class _Run:
    """Following the record stream: node folders discovered, files listed, imported by the driver."""

    def __init__(self, driver: Driver[Position], store: Store) -> None:
        self.driver = driver
        self.store = store
        self.options = driver.options
        self.stop = driver.stop
        self.progress = driver.progress
        self.unpacker = StreamUnpacker()
        """The run's unpacking process (started at its first file), for every file the run prefetches."""

    async def run(self) -> ImportStats:
        position = self.driver.state
        folders = await self._discover()
        if (
            folders
            and position.link is None
            and position.cursor is None
            and self.options.start is None
            and is_bucket(self.store)
        ):
            position.cursor = await self._newest_start(folders, position)
        backoff = self.options.poll_seconds
        discovered = time.monotonic()
        while folders and not self.stop.is_set() and not self.driver.reached_end:
            try:
                candidates = await self._candidates(folders)
            except SourceError as error:
                if self.options.once:
                    raise
                self.progress.refused(error, retrying=True)
                candidates = []
            refused = False
            if candidates:
                try:
                    await self._import(candidates)
                    backoff = self.options.poll_seconds
                    continue
                except (StreamFileError, SourceError) as error:
                    if self.options.once:
                        self.progress.refused(error, retrying=False)
                        raise
                    refused = True
                    if isinstance(error, (ConsensusNotReached, FileUnavailable)):
                        # usual at the head of the stream: the other nodes' files are still being uploaded
                        _log.info("waiting for more nodes' files: %s", error)
                        backoff = self.options.poll_seconds
                    else:
                        self.progress.refused(error, retrying=True)
            elif self.options.once:
                break
            await self.driver.wait(backoff)
            backoff = min(backoff * 2, self.options.max_poll_seconds)
            if refused or time.monotonic() - discovered >= _REDISCOVER_SECONDS:
                with contextlib.suppress(SourceError):  # nodes come and go (a refusal may be a missing node)
                    folders = await discover_nodes(self.store)
                discovered = time.monotonic()
        self.progress.finished(self.driver.stats)
        return self.driver.stats

    def _listed(self, folders: list[NodeFolder]) -> list[NodeFolder]:
        every = self.options.list_every_node
        if every if every is not None else not is_bucket(self.store):
            return folders
        return listing_folders(folders, self.driver.state.book, self.driver.state.stakes)

    async def _candidates(self, folders: list[NodeFolder]) -> list[Candidate]:
        position = self.driver.state
        candidates, _ = await list_candidates(
            self.store, self._listed(folders), position.cursor, self.options.list_limit, every_folder=folders
        )
        if self.options.start is not None and position.link is None:
            candidates = [c for c in candidates if c.instant >= self.options.start]
        return candidates

    async def _discover(self) -> list[NodeFolder]:
        """The node folders; following, an empty source is waited for (an empty list means stopped)."""
        backoff = self.options.poll_seconds
        while True:
            try:
                folders = await discover_nodes(self.store)
            except SourceError:
                if self.options.once:
                    raise
                await self.driver.wait(backoff)
                backoff = min(backoff * 2, self.options.max_poll_seconds)
                if self.stop.is_set():
                    return []
                continue
            _log.info("source", extra={"source": str(self.store), "node_folders": len(folders)})
            return folders

    # Starting point ------------------------------------------------------------------------------------------

    async def _newest_start(self, folders: list[NodeFolder], position: Position) -> str | None:
        """The cursor before the newest file that verifies (looking back over growing windows)."""
        now = time.time_ns()
        for window in _NEWEST_WINDOWS_SECONDS:
            after = stream_name_prefix(now - window * 1_000_000_000) if window is not None else None
            found: list[Candidate] = []
            while True:
                listed, complete = await list_candidates(
                    self.store, self._listed(folders), after, self.options.list_limit, every_folder=folders
                )
                found.extend(listed)
                if complete or not listed:
                    break
                after = listed[-1].signature_name
            last_error: StreamFileError | None = None
            for candidate in reversed(found[-_NEWEST_ATTEMPTS:]):
                try:
                    await fetch_verified(self.store, candidate, position.book, None, stakes=position.stakes)
                except StreamFileError as error:
                    last_error = error
                    continue
                _log.info("empty database on a bucket: starting at its newest file %s", candidate.stem)
                return candidate.stem
            if last_error is not None:
                raise last_error
        return None

    # Importing -----------------------------------------------------------------------------------------------

    async def _import(self, candidates: list[Candidate]) -> None:
        """Import ``candidates`` in transactions of several files (the driver's state follows each commit). A
        refused file is raised after the files before it are committed."""
        remaining = Prefetcher(
            self.store, candidates, self.options.prefetch_files, self.driver.stats.cost, self.unpacker
        )
        try:
            await self.driver.run_units(RecordFiles(self.store, remaining, self.driver))
        finally:
            remaining.close()
