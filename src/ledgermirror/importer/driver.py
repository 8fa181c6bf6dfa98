"""The import driver: verified units (record files, or blocks) through grouping, row building, writing and commit.

One database transaction holds one unit, or up to ``files_per_transaction`` units (``items_per_transaction``
items) while catching up. Per unit, in stream order:

1. the unit kind (:class:`Units`: ``pipeline.RecordFiles``, ``block_pipeline.Blocks``) gives the next unit,
   verified **before anything of it is written**, or refuses it (:class:`StreamFileError`: the transaction
   ends after the units before it, which are committed, and the refusal is raised);
2. its rows are gathered (``errata.rows_with_errata``: ``lookups.rows_of_file_with_lookups``, then mainnet's
   errata) into the batch of the open transaction, and the kind adds its ``record_file`` row and moves its
   state past it;
3. the batch is written (:func:`write_files`: the batch, then the ``record_file`` rows) at the end of the
   transaction, or before the next unit is verified when a unit changes the node set (0.0.101/0.0.102, node
   stakes), since the next unit is checked against it;
4. :meth:`Driver.commit_group` commits: the import's only commit point.

The state the next unit is checked against (:class:`Position`, and the kind's own) is copied for each
transaction and replaced as a whole when it commits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import asyncpg

from ledgermirror.db import address_books, import_state, write
from ledgermirror.db.commit_notify import notify_commit
from ledgermirror.importer.address_book import AddressBook, read_address_book
from ledgermirror.importer.block_verify import BlockLink
from ledgermirror.importer.errata import rows_with_errata
from ledgermirror.importer.errors import ImporterError, StreamFileError, StreamParseError
from ledgermirror.importer.handlers import address_books as book_handlers
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.balances import BalanceSnapshot, seed_balances
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import write_batch
from ledgermirror.importer.handlers.item import ItemError
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.progress import ImportStats, Progress
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.importer.verify import ChainLink

_log = logging.getLogger("ledgermirror.importer")

ADDRESS_BOOK_FILE = ids.encoded(0, 0, 102)
BOOTSTRAP_TIMESTAMP = 0
"""The bootstrap book is saved as taking effect after this timestamp (so it starts at 1, as the reference's)."""


@dataclass(slots=True)
class Position:
    """What the next unit is checked against; replaced as a whole when a transaction commits."""

    link: ChainLink | None
    index: int | None
    cursor: str | None
    book: AddressBook
    stakes: dict[int, int]
    pending_book: bytes | None
    """Bootstrap book bytes not yet written (written with the first committed unit)."""
    pending_balances: BalanceSnapshot | None = None
    """The initial balance snapshot, seeded with the first committed unit."""


class Unit(Protocol):
    """A verified unit: what is written is its record file (a block's wrapped file, or its transactions as one)."""

    @property
    def record(self) -> RecordFile: ...

    @property
    def sidecars(self) -> Sequence[SidecarFile]: ...


S = TypeVar("S")
U = TypeVar("U", bound=Unit)
RecordRows = list[dict[str, object]]
"""``record_file`` rows gathered since the batch was last written."""


class Units(Protocol[S, U]):
    """What differs between unit kinds, for one pass of the driver over what the source has now. ``S`` is the
    kind's state (holding a :class:`Position`), ``U`` its verified unit."""

    exhausted: bool
    """The source has nothing more now."""
    reached_end: bool
    """The next unit is after ``options.end``."""

    def copy(self, state: S) -> S:
        """A copy of the committed state for a new transaction (changed as units are accepted)."""

    def position(self, state: S) -> Position: ...

    def previous(self, state: S) -> ChainLink | BlockLink | None:
        """What the next unit is checked against: the last file or block, if any."""

    async def next_unit(self, state: S) -> U | None:
        """The next unit, verified against ``state``; None when :attr:`exhausted` or :attr:`reached_end`.
        Raises :class:`StreamFileError` for a refused unit."""

    def name_of(self, unit: U) -> str:
        """The unit's name in errors."""

    async def accept(self, unit: U, state: S, record_rows: RecordRows, load_start: int) -> None:
        """Add the unit's ``record_file`` row to ``record_rows`` and move ``state`` past the unit (its rows are
        in the batch)."""

    async def before_commit(self, state: S, group: ImportStats) -> None:
        """The kind's last writes in the transaction, after its units' rows."""


def batch_of(options: ImportOptions) -> Batch:
    """An empty batch with the options' persistence settings."""
    return Batch(
        entity_transactions=options.entity_transactions,
        synthetic_log_addresses=options.synthetic_log_evm_lookup,
    )


def has_node_stakes(batch: Batch) -> bool:
    return any("node_stake" in segment.inserts for segment in batch.segments)


async def load_book(conn: asyncpg.Connection, options: ImportOptions) -> tuple[AddressBook, bytes | None]:
    """The address book in force: the database's latest 0.0.102, else ``--address-book`` (its bytes are
    returned to be written with the first committed unit)."""
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
    record_rows: RecordRows,
    position: Position,
    group: ImportStats,
) -> int:
    """Write the gathered rows, then the units' ``record_file`` rows; reload the node set if it changed."""
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


@contextlib.asynccontextmanager
async def sole_importer(conn: asyncpg.Connection) -> AsyncIterator[None]:
    """Hold the importers' advisory lock for the block, or raise :class:`ImporterError` if another holds it."""
    if not await import_state.try_lock(conn):
        raise ImporterError("another importer is writing to this database (advisory lock held)")
    try:
        yield
    finally:
        await import_state.unlock(conn)


class Driver(Generic[S]):
    """Runs units into the database of ``conn``; ``state`` is the committed state of the unit kind."""

    def __init__(
        self,
        conn: asyncpg.Connection,
        options: ImportOptions,
        stop: asyncio.Event,
        progress: Progress,
        state: S,
    ) -> None:
        self.conn = conn
        self.options = options
        self.stop = stop
        self.progress = progress
        self.state = state
        self.stats = ImportStats()
        self.reached_end = False

    async def wait(self, seconds: float) -> None:
        """Wait ``seconds``, or until stopped."""
        self.progress.waiting(self.stats, seconds)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    async def run_units(self, units: Units[S, U]) -> int:
        """Import ``units`` in transactions until the source has nothing more now, the end or a stop; returns
        how many were committed. A refused unit is raised after the units before it are committed."""
        imported = 0
        while not units.exhausted and not self.stop.is_set() and not self.reached_end:
            tentative = units.copy(self.state)
            group, refused = await self.commit_group(units, tentative)
            self.state = tentative
            imported += group.files
            if refused is not None:
                raise refused
        return imported

    async def commit_group(self, units: Units[S, U], state: S) -> tuple[ImportStats, StreamFileError | None]:
        """The import's only commit point: one database transaction of units (:meth:`_write_group`) and the
        kind's last writes, committed; then the run's statistics and progress. What must be in the same
        transaction goes before the end of the ``async with``, what follows each commit after it."""
        group = ImportStats()
        started = time.perf_counter()
        async with self.conn.transaction():
            refused = await self._write_group(units, state, group)
            await units.before_commit(state, group)
            await notify_commit(self.conn, group.last_consensus_end)  # delivered when the transaction commits
        self._committed(group, time.perf_counter() - started)
        return group, refused

    async def _write_group(self, units: Units[S, U], state: S, group: ImportStats) -> StreamFileError | None:
        """Verify and write units into the open transaction up to the group's limits; returns the refused
        unit's error, if one ends the group. Rows of several units are gathered in one batch and written
        together, before the next unit is verified when a unit changes the node set."""
        options = self.options
        batch = batch_of(options)
        record_rows: RecordRows = []
        refused: StreamFileError | None = None
        while group.files < options.files_per_transaction and group.items < options.items_per_transaction:
            if self.stop.is_set():
                break
            load_start = time.time_ns() // 1_000_000
            try:
                unit = await units.next_unit(state)
            except StreamFileError as error:
                refused = error
                break
            if unit is None:
                self.reached_end = units.reached_end
                break
            built = time.perf_counter()
            record = unit.record
            try:
                await rows_with_errata(
                    self.conn, unit, batch, units.previous(state), units.position(state).book, options
                )
            except ItemError as error:  # a verified unit whose transaction we cannot read: the group rolls back
                raise StreamParseError(units.name_of(unit), str(error)) from error
            await units.accept(unit, state, record_rows, load_start)
            group.files += 1
            group.items += record.count
            group.last_name, group.last_consensus_end = record.name, record.consensus_end
            group.write_seconds += time.perf_counter() - built
            if batch.address_book_changed or has_node_stakes(batch):
                group.rows += await write_files(self.conn, batch, record_rows, units.position(state), group)
                batch = batch_of(options)
                record_rows = []
        group.rows += await write_files(self.conn, batch, record_rows, units.position(state), group)
        return refused

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
