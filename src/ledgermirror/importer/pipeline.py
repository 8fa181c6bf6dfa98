"""The import loop: list, verify, write, commit; resume where the database stopped.

Per record file, in stream order:

1. its signature files are fetched from every node folder and checked, consensus is reached, and the data
   file and sidecars are taken from a node that signed them and checked (:mod:`.downloader`, :mod:`.verify`),
   all **before anything of the file is written** (downloads of the next ``prefetch_files`` files run ahead;
   their bytes are trusted only once checked);
2. its rows are gathered (``handlers.rows_of_file``) into the batch of the open database transaction; the
   batch is written (``write_batch``), then the ``record_file`` rows of its files, at the end of the
   transaction, or before the next file is verified when a file changes the node set. One transaction holds
   one file, or up to ``files_per_transaction`` files (``items_per_transaction`` items) while catching up; a
   refused file ends the transaction after the files before it (committed) and nothing of it is written.

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
import calendar
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from ledgermirror.db import address_books, import_state, write
from ledgermirror.db.commit_notify import notify_commit
from ledgermirror.importer.address_book import AddressBook, read_address_book
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
from ledgermirror.importer.errors import ConsensusNotReached, StreamFileError, StreamParseError
from ledgermirror.importer.handlers import address_books as book_handlers
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.balances import BalanceSnapshot, read_balance_snapshot, seed_balances
from ledgermirror.importer.handlers.base import Batch, ItemError, write_batch
from ledgermirror.importer.handlers.lookups import rows_of_file_with_lookups
from ledgermirror.importer.progress import ImportStats, LogProgress, Progress
from ledgermirror.importer.record_file_row import next_index, record_file_row, renumber_before_v6
from ledgermirror.importer.sources import NodeFolder, SourceError, Store, discover_nodes, is_bucket
from ledgermirror.importer.stream_names import stem_of
from ledgermirror.importer.verify import ChainLink

_log = logging.getLogger("ledgermirror.importer")

ADDRESS_BOOK_FILE = ids.encoded(0, 0, 102)
BOOTSTRAP_TIMESTAMP = 0
"""The bootstrap book is saved as taking effect after this timestamp (so it starts at 1, as the reference's)."""
_NEWEST_WINDOWS_SECONDS = (600, 3_600, 86_400, 7 * 86_400, 31 * 86_400, 366 * 86_400, None)
_NEWEST_ATTEMPTS = 10


def has_node_stakes(batch: Batch) -> bool:
    return any("node_stake" in segment.inserts for segment in batch.segments)


DEFAULT_FILES_PER_TRANSACTION = 50
_REDISCOVER_SECONDS = 60.0


class ImporterError(RuntimeError):
    """The import cannot run (no address book, another importer holds the database)."""


@dataclass(frozen=True, slots=True)
class ImportOptions:
    once: bool = False
    start: int | None = None
    """Nanoseconds: on an empty database, the first file imported is the first at or after it."""
    end: int | None = None
    """Nanoseconds: stop after the last file at or before it."""
    address_book: Path | None = None
    initial_balances: Path | None = None
    """An ``AllAccountBalances`` snapshot (``*_Balances.pb[.gz]``) seeded into an empty database with the first
    file, so genesis accounts get balances."""
    files_per_transaction: int = DEFAULT_FILES_PER_TRANSACTION
    items_per_transaction: int = 20_000
    list_limit: int = 1_000
    prefetch_files: int = 8
    """Files downloaded ahead of verification (their bytes only: nothing is trusted before it is checked)."""
    list_every_node: bool | None = None
    """List every node's folder (True), or only the heaviest third plus one and read the others' signature
    files by name (False); None: every node for a folder, the third for a bucket (LIST requests cost ten GETs)."""
    """Files downloaded ahead of verification (their bytes only: nothing is trusted before it is checked)."""
    poll_seconds: float = 1.0
    max_poll_seconds: float = 30.0
    entity_transactions: bool = False
    require_verified_proofs: bool = False
    """Blocks: refuse a block whose proof cannot be verified here (TSS, state proofs) instead of accepting it
    as chain-verified only."""


@dataclass(slots=True)
class Position:
    """What the next file is checked against; replaced as a whole when a transaction commits."""

    link: ChainLink | None
    index: int | None
    cursor: str | None
    book: AddressBook
    stakes: dict[int, int]
    pending_book: bytes | None
    """Bootstrap book bytes not yet written (written with the first committed file)."""
    pending_balances: BalanceSnapshot | None = None
    """The initial balance snapshot, seeded with the first committed file."""


def stream_name_prefix(nanos: int) -> str:
    """The name stem of an instant (``2022-07-13T08_46_11.304284003Z``): listing after it starts there."""
    return stem_of(nanos)


def parse_date(text: str) -> int:
    """``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM[:SS[.f]]Z`` (UTC) as nanoseconds since the epoch."""
    cleaned = text.strip().rstrip("Z").replace(" ", "T")
    day, _, clock = cleaned.partition("T")
    year, month, date = (int(part) for part in day.split("-"))
    parts = clock.split(":") if clock else []
    hour = int(parts[0]) if parts else 0
    minute = int(parts[1]) if len(parts) > 1 else 0
    second_text = parts[2] if len(parts) > 2 else "0"
    whole, _, fraction = second_text.partition(".")
    seconds = calendar.timegm((year, month, date, hour, minute, int(whole), 0, 0, 0))
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0")[:9] or 0)


async def load_book(conn: asyncpg.Connection, options: ImportOptions) -> tuple[AddressBook, bytes | None]:
    """The address book in force: the database's latest 0.0.102, else ``--address-book`` (its bytes are
    returned to be written with the first committed file)."""
    stored = await import_state.current_book(conn, ADDRESS_BOOK_FILE)
    given = options.address_book
    if stored is not None:
        if given is not None:
            _log.info("the database has an address book: --address-book %s is not needed", given)
        return read_address_book(stored.file_data, "address book 0.0.102 (database)"), None
    if given is None:
        raise ImporterError(
            "the database has no address book yet: pass --address-book FILE (a NodeAddressBook protobuf, "
            "e.g. the network's file 0.0.102) to bootstrap the node set"
        )
    data = given.read_bytes()
    return read_address_book(data, str(given)), data


async def write_files(
    conn: asyncpg.Connection,
    batch: Batch,
    record_rows: list[dict[str, object]],
    position: Position,
    group: ImportStats,
) -> int:
    """Write the gathered rows, then the files' ``record_file`` rows; reload the node set if it changed."""
    if not record_rows:
        return 0
    started = time.perf_counter()
    rows = 0
    if position.pending_book is not None:
        book, entries, endpoints = book_handlers.book_rows(
            ADDRESS_BOOK_FILE, BOOTSTRAP_TIMESTAMP, position.pending_book
        )
        saved = await address_books.save_book(conn, book, entries, endpoints)
        group.tables.update(saved)
        rows += sum(saved.values())
        position.pending_book = None
    if position.pending_balances is not None:
        seeded = await seed_balances(conn, position.pending_balances)
        group.tables["entity"] += seeded
        rows += seeded
        position.pending_balances = None
    counts = await write_batch(conn, batch)
    counts.update(await write.copy_rows(conn, "record_file", record_rows))
    group.tables.update(counts)
    rows += sum(counts.values())
    if batch.address_book_changed or counts.get("address_book"):
        stored = await import_state.current_book(conn, ADDRESS_BOOK_FILE)
        if stored is not None:
            position.book = read_address_book(stored.file_data, "address book 0.0.102")
            _log.info("address book reloaded", extra={"nodes": len(position.book.nodes), "file": position.cursor})
    if counts.get("node_stake"):
        position.stakes = await import_state.latest_node_stakes(conn)
    group.write_seconds += time.perf_counter() - started
    return rows


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
        return await _Run(conn, store, options, stop or asyncio.Event(), progress or LogProgress()).run()


@contextlib.asynccontextmanager
async def sole_importer(conn: asyncpg.Connection) -> AsyncIterator[None]:
    """Hold the importers' advisory lock for the block, or raise :class:`ImporterError` if another holds it."""
    if not await import_state.try_lock(conn):
        raise ImporterError("another importer is writing to this database (advisory lock held)")
    try:
        yield
    finally:
        await import_state.unlock(conn)


class _Run:
    def __init__(
        self,
        conn: asyncpg.Connection,
        store: Store,
        options: ImportOptions,
        stop: asyncio.Event,
        progress: Progress,
    ) -> None:
        self.conn = conn
        self.store = store
        self.options = options
        self.stop = stop
        self.progress = progress
        self.stats = ImportStats()
        self.reached_end = False
        self.position: Position

    async def run(self) -> ImportStats:
        position = self.position = await self._initial_position()
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
        while folders and not self.stop.is_set() and not self.reached_end:
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
            await self._wait(backoff)
            backoff = min(backoff * 2, self.options.max_poll_seconds)
            if refused or time.monotonic() - discovered >= _REDISCOVER_SECONDS:
                with contextlib.suppress(SourceError):  # nodes come and go (a refusal may be a missing node)
                    folders = await discover_nodes(self.store)
                discovered = time.monotonic()
        self.progress.finished(self.stats)
        return self.stats

    def _listed(self, folders: list[NodeFolder]) -> list[NodeFolder]:
        every = self.options.list_every_node
        if every if every is not None else not is_bucket(self.store):
            return folders
        return listing_folders(folders, self.position.book, self.position.stakes)

    async def _candidates(self, folders: list[NodeFolder]) -> list[Candidate]:
        position = self.position
        candidates, _ = await list_candidates(
            self.store, self._listed(folders), position.cursor, self.options.list_limit, every_folder=folders
        )
        if self.options.start is not None and position.link is None:
            candidates = [c for c in candidates if c.instant >= self.options.start]
        return candidates

    async def _wait(self, seconds: float) -> None:
        self.progress.waiting(self.stats, seconds)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    async def _discover(self) -> list[NodeFolder]:
        """The node folders; following, an empty source is waited for (an empty list means stopped)."""
        backoff = self.options.poll_seconds
        while True:
            try:
                folders = await discover_nodes(self.store)
            except SourceError:
                if self.options.once:
                    raise
                await self._wait(backoff)
                backoff = min(backoff * 2, self.options.max_poll_seconds)
                if self.stop.is_set():
                    return []
                continue
            _log.info("source", extra={"source": str(self.store), "node_folders": len(folders)})
            return folders

    # Starting point ------------------------------------------------------------------------------------------

    async def _initial_position(self) -> Position:
        book, pending = await load_book(self.conn, self.options)
        stakes = await import_state.latest_node_stakes(self.conn)
        last = await import_state.last_record_file(self.conn)
        if last is None:
            cursor = stream_name_prefix(self.options.start) if self.options.start is not None else None
            balances = None
            if self.options.initial_balances is not None:
                balances = read_balance_snapshot(self.options.initial_balances.read_bytes())
            return Position(None, None, cursor, book, stakes, pending, balances)
        if self.options.initial_balances is not None:
            _log.warning("the database already holds files: --initial-balances ignored")
        if self.options.start is not None:
            _log.warning("the database already holds files: resuming after %s, --start-date ignored", last.name)
        block = last.index if last.version >= 6 else None
        link = ChainLink(last.name, bytes.fromhex(last.hash), last.consensus_end, block)
        self.stats.last_name, self.stats.last_consensus_end = last.name, last.consensus_end
        return Position(link, last.index, cursor_after(last.name), book, stakes, pending)

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
        """Import ``candidates`` in transactions of several files (``self.position`` follows each commit). A
        refused file is raised after the files before it are committed."""
        remaining = Prefetcher(self.store, candidates, self.options.prefetch_files, self.stats.cost)
        try:
            while remaining and not self.stop.is_set() and not self.reached_end:
                tentative = dataclasses.replace(self.position)
                group = ImportStats()
                started = time.perf_counter()
                async with self.conn.transaction():
                    refused = await self._group(remaining, tentative, group)
                    await notify_commit(self.conn, group.last_consensus_end)
                self._committed(group, time.perf_counter() - started)
                self.position = tentative
                if refused is not None:
                    raise refused
        finally:
            remaining.close()

    async def _group(
        self, remaining: Prefetcher, position: Position, group: ImportStats
    ) -> StreamFileError | None:
        """Verify and write files from ``remaining`` (consumed) into the open transaction, up to the group's
        limits; returns the refused file's error, if one ends the group. Rows of several files are gathered
        in one batch and written together, before the next file is verified when a file changes the node
        set (0.0.101/0.0.102, node stakes)."""
        batch = Batch(entity_transactions=self.options.entity_transactions)
        record_rows: list[dict[str, object]] = []
        refused: StreamFileError | None = None
        while remaining and group.files < self.options.files_per_transaction:
            if group.items >= self.options.items_per_transaction or self.stop.is_set():
                break
            if self.options.end is not None and remaining.peek().instant > self.options.end:
                self.reached_end = True
                break
            load_start = time.time_ns() // 1_000_000
            fetched = await remaining.next()
            try:
                verified = await verify_download(
                    self.store,
                    fetched,
                    position.book,
                    position.link,
                    stakes=position.stakes,
                    cost=self.stats.cost,
                )
            except StreamFileError as error:
                refused = error
                break
            built = time.perf_counter()
            record = verified.record
            try:
                await rows_of_file_with_lookups(self.conn, record, batch, verified.sidecars)
            except ItemError as error:  # a verified file whose transaction we cannot read: the group rolls back
                raise StreamParseError(record.name, str(error)) from error
            await renumber_before_v6(self.conn, record, position.index, record_rows)
            index = next_index(record, position.index)
            record_rows.append(record_file_row(record, index, load_start, time.time_ns() // 1_000_000))
            position.link, position.index, position.cursor = verified.link(), index, cursor_after(record.name)
            group.files += 1
            group.items += record.count
            group.last_name, group.last_consensus_end = record.name, record.consensus_end
            group.write_seconds += time.perf_counter() - built
            if batch.address_book_changed or has_node_stakes(batch):
                group.rows += await self._flush(batch, record_rows, position, group)
                batch = Batch(entity_transactions=self.options.entity_transactions)
                record_rows = []
        group.rows += await self._flush(batch, record_rows, position, group)
        return refused

    async def _flush(
        self, batch: Batch, record_rows: list[dict[str, object]], position: Position, group: ImportStats
    ) -> int:
        return await write_files(self.conn, batch, record_rows, position, group)

    def _committed(self, group: ImportStats, seconds: float) -> None:
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
        _log.debug("committed", extra={"files": group.files, "seconds": round(seconds, 4)})
