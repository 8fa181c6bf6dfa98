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
   stakes), since the next unit is checked against it, or when the unit makes a balance snapshot due (written
   right after it, in its transaction, which it ends: ``importer/balance_snapshots.py``);
4. :meth:`Driver.commit_group` commits: the import's only commit point.

With ``ImportOptions.overlap`` (``LEDGERMIRROR_IMPORT_OVERLAP``, on by default for ``ledgermirror import``) a
transaction's units are gathered without writing (:meth:`Driver._gather`), then written and committed by a
background writer (its own thread, event loop and connection: ``importer/overlap.py``) while the next
transaction's units are verified and their rows built; the row builder's reads are answered so that they see the
transaction in flight (``overlap.GuardedReads``). A transaction is written only after the one before it committed,
in the same grouping, with the same rows; the background writer takes a balance snapshot after the rows of the
transaction its file ends (once a committed snapshot has checked the treasury). One that must write as it goes
(a node set change, the run's first balance snapshot, the bootstrap book or balances, mainnet's errata, record
files before v6) waits for the one in flight to commit and goes on as above on the import's connection.

The state the next unit is checked against (:class:`Position`, and the kind's own) is copied for each
transaction and replaced as a whole when it commits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, cast

import asyncpg

from ledgermirror.db import address_books, import_state, write
from ledgermirror.db.commit_notify import notify_commit
from ledgermirror.importer.address_book import AddressBook, read_address_book
from ledgermirror.importer.balance_snapshots import BalanceSnapshots, SnapshotClock
from ledgermirror.importer.block_verify import BlockLink
from ledgermirror.importer.errata import is_mainnet, rows_with_errata
from ledgermirror.importer.errors import ImporterError, StreamFileError, StreamParseError
from ledgermirror.importer.evidence import EvidenceRows
from ledgermirror.importer.handlers import address_books as book_handlers
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.balances import BalanceSnapshot, seed_balances, settle_seeded
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import BatchPlan, plan_batch, write_batch
from ledgermirror.importer.handlers.item import ItemError
from ledgermirror.importer.handlers.lookups import DatabaseReads, LookupReads, complete_held_addresses
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.overlap import BackgroundWriter, GuardedReads, InFlight
from ledgermirror.importer.progress import ImportStats, Progress
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.importer.verify import ChainLink, Consensus

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

    @property
    def consensus(self) -> Consensus | None:
        """The nodes' signatures, when the unit carries them (the signature evidence)."""


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

    async def before_commit(self, conn: asyncpg.Connection, state: S, group: ImportStats) -> None:
        """The kind's last writes in the transaction (on ``conn``), after its units' rows."""


def batch_of(options: ImportOptions) -> Batch:
    """An empty batch with the options' persistence settings."""
    return Batch(
        entity_transactions=options.entity_transactions,
        synthetic_log_addresses=options.synthetic_log_evm_lookup,
        hold_addresses=True,
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
    *,
    plan: BatchPlan | None = None,
) -> int:
    """Write the gathered rows (``plan``: the batch's plan, made already), then the units' ``record_file`` rows;
    reload the node set if it changed."""
    if not record_rows:
        return 0
    started = time.perf_counter()
    await complete_held_addresses(conn, batch)  # on this connection, as the rows were gathered (none when planned)
    rows = 0
    if position.pending_book is not None:
        book, entries, endpoints = book_handlers.book_rows(
            ADDRESS_BOOK_FILE, BOOTSTRAP_TIMESTAMP, position.pending_book
        )
        saved = await address_books.save_book(conn, book, entries, endpoints)
        group.tables.update(saved)
        rows += sum(saved.values())
        position.pending_book = None
    seeded = position.pending_balances
    if seeded is not None:  # before the unit's rows, whose transfers add to it
        seeded_rows = await seed_balances(conn, seeded)
        group.tables.update(seeded_rows)
        rows += sum(seeded_rows.values())
    counts = await write_batch(conn, batch, plan)
    counts.update(await write.copy_rows(conn, "record_file", record_rows))
    if seeded is not None:
        await settle_seeded(conn, seeded)
        position.pending_balances = None
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


FIRST_BLOCK_VERSION = 6
"""Record files before v6 have no block number: the first v6 file renumbers them (``record_file_row``)."""


@dataclass(slots=True)
class Built(Generic[S]):
    """A transaction's units gathered without writing (``LEDGERMIRROR_IMPORT_OVERLAP``): the rows, the kind's
    state after them, and why the gathering stopped."""

    state: S
    group: ImportStats = field(default_factory=ImportStats)
    batch: Batch = field(default_factory=Batch)
    record_rows: RecordRows = field(default_factory=list)
    evidence: EvidenceRows = field(default_factory=EvidenceRows)
    refused: StreamFileError | None = None
    barrier: bool = False
    """The rest of the transaction must be written in it as it goes (:meth:`Driver._write_group`)."""
    held: Unit | None = None
    """A verified unit not gathered yet: the transaction goes on with it (a record file before v6)."""
    flush: bool = False
    """The last gathered unit changes the node set or makes a balance snapshot due: write what is gathered
    (and take the snapshot) before the next unit."""
    snapshot_due: bool = False
    snapshot_at: int | None = None
    """A balance snapshot the background writer takes after the transaction's rows (``BalanceSnapshots.claim``):
    the gathering ended at the file that made it due."""
    reads: GuardedReads | None = None
    """The gathering's reads while a transaction was in flight: what they put off runs once it committed."""


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
        self.snapshots = BalanceSnapshots(options.balance_snapshots)
        self.evidence = EvidenceRows()
        self._writer: BackgroundWriter | None = None
        """The overlapped import's writer, kept from one listing of the source to the next (:meth:`close`)."""

    def close(self) -> None:
        """End the overlapped import's writer (its thread and connection), if one was started."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    async def wait(self, seconds: float) -> None:
        """Wait ``seconds``, or until stopped."""
        self.progress.waiting(self.stats, seconds)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    async def run_units(self, units: Units[S, U]) -> int:
        """Import ``units`` in transactions until the source has nothing more now, the end or a stop; returns
        how many were committed. A refused unit is raised after the units before it are committed."""
        if self.options.overlap:
            return await self._run_overlapped(units)
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
        self.evidence = EvidenceRows()
        async with self.conn.transaction():
            await self.snapshots.begin(self.conn)
            refused = await self._write_group(units, state, group)
            await units.before_commit(self.conn, state, group)
            group.rows += await self.evidence.write(self.conn)
            await notify_commit(self.conn, group.last_consensus_end)  # delivered when the transaction commits
        self.snapshots.committed()
        self._committed(group, time.perf_counter() - started)
        return group, refused

    async def _write_group(
        self, units: Units[S, U], state: S, group: ImportStats, start: Built[S] | None = None
    ) -> StreamFileError | None:
        """Verify and write units into the open transaction up to the group's limits; returns the refused
        unit's error, if one ends the group. Rows of several units are gathered in one batch and written
        together, before the next unit is verified when a unit changes the node set. ``start``: what an
        overlapped gathering (:meth:`_gather`) gathered already, without writing, for this transaction."""
        options = self.options
        batch = start.batch if start is not None else batch_of(options)
        record_rows: RecordRows = start.record_rows if start is not None else []
        held = cast("U | None", start.held) if start is not None else None
        reads = DatabaseReads(self.conn)
        ended = False  # a balance snapshot ends its transaction
        if start is not None and start.flush:
            batch, record_rows = await self._flush(units, state, group, batch, record_rows, start.snapshot_due)
            ended = start.snapshot_due
        refused: StreamFileError | None = None
        while (
            not ended
            and group.files < options.files_per_transaction
            and group.items < options.items_per_transaction
        ):
            if self.stop.is_set() and held is None:
                break
            load_start = time.time_ns() // 1_000_000
            unit: U | None
            if held is not None:
                unit, held = held, None
            else:
                try:
                    unit = await units.next_unit(state)
                except StreamFileError as error:
                    refused = error
                    break
            if unit is None:
                self.reached_end = units.reached_end
                break
            snapshot_due = await self._gather_unit(
                units, unit, state, group, batch, record_rows, reads, load_start
            )
            if batch.address_book_changed or has_node_stakes(batch) or snapshot_due:
                batch, record_rows = await self._flush(units, state, group, batch, record_rows, snapshot_due)
                ended = snapshot_due
        group.rows += await write_files(self.conn, batch, record_rows, units.position(state), group)
        return refused

    async def _flush(  # noqa: PLR0917
        self,
        units: Units[S, U],
        state: S,
        group: ImportStats,
        batch: Batch,
        record_rows: RecordRows,
        snapshot_due: bool,
    ) -> tuple[Batch, RecordRows]:
        """Write what is gathered (the node set is reloaded if it changed), then the snapshot if one is due;
        returns a new batch and ``record_file`` rows to gather into."""
        group.rows += await write_files(self.conn, batch, record_rows, units.position(state), group)
        if snapshot_due:  # the balances after this file, in its transaction
            assert group.last_consensus_end is not None
            snapshot_rows = await self.snapshots.take(self.conn, group.last_consensus_end)
            group.tables.update(snapshot_rows)
            group.rows += sum(snapshot_rows.values())
        return batch_of(self.options), []

    async def _gather_unit(  # noqa: PLR0917
        self,
        units: Units[S, U],
        unit: U,
        state: S,
        group: ImportStats,
        batch: Batch,
        record_rows: RecordRows,
        reads: LookupReads,
        load_start: int,
        evidence: EvidenceRows | None = None,
    ) -> bool:
        """Build a verified unit's rows into ``batch`` and accept it; returns whether it makes a balance
        snapshot due."""
        built = time.perf_counter()
        record = unit.record
        try:
            await rows_with_errata(
                self.conn, unit, batch, units.previous(state), units.position(state).book, self.options, reads
            )
        except ItemError as error:  # a verified unit whose transaction we cannot read: the group rolls back
            raise StreamParseError(units.name_of(unit), str(error)) from error
        await units.accept(unit, state, record_rows, load_start)
        (evidence if evidence is not None else self.evidence).add(
            record, unit.consensus, units.position(state).book
        )
        group.files += 1
        group.items += record.count
        group.last_name, group.last_consensus_end = record.name, record.consensus_end
        group.write_seconds += time.perf_counter() - built
        self._last_version = record.version
        return self.snapshots.due(record.consensus_end)

    # Overlapped: the next transaction built while this one is written ------------------------------------------

    _last_version: int | None = None

    async def _run_overlapped(self, units: Units[S, U]) -> int:
        """:meth:`run_units` with each plain transaction written and committed by a :class:`BackgroundWriter`
        while the next one's units are verified and their rows built (:meth:`_gather`). A transaction that
        must write as it goes (it changes the node set, takes a balance snapshot, seeds the bootstrap book or
        balances, holds mainnet's errata or record files before v6) waits for the one being written to commit,
        then runs as :meth:`commit_group` does."""
        last = await import_state.last_record_file(self.conn)
        self._last_version = last.version if last is not None else None
        self._imported = 0
        self._inflight = None
        latest = self.state
        try:
            while not units.exhausted and not self.stop.is_set() and not self.reached_end:
                built = await self._gather_next(units, latest)
                latest = built.state
                # Planned while the transaction before it is still being written, unless reads it put off will
                # complete rows once that one commits (the plan would hold those rows before they are final):
                # the writer then starts on it as soon as it is free.
                put_off = built.reads is not None and bool(built.reads.completions)
                ready = _ready(built) if not built.barrier and built.group.files and not put_off else None
                await self._settle()
                if built.reads is not None:
                    self.stats.deferred_reads += len(built.reads.completions)
                    await built.reads.complete()
                if built.barrier:
                    await self._commit_rest(units, built)
                elif built.group.files:
                    self._writer = self._writer or BackgroundWriter(self.conn)
                    self._inflight = self._submit(self._writer, units, built, ready or _ready(built))
                if built.refused is not None:
                    await self._settle()
                    raise built.refused
            await self._settle()
        except BaseException:
            self.close()  # a transaction still in flight rolls back with the writer's connection
            raise
        return self._imported

    _imported: int = 0
    _inflight: _Written[S] | None = None

    async def _gather_next(self, units: Units[S, U], latest: S) -> Built[S]:
        """The next transaction gathered (:meth:`_gather`) after ``latest``, while the one in flight is
        written; a failure commits the one in flight first (it was complete), then is raised."""
        inflight = self._inflight
        if inflight is None:
            await self.snapshots.begin(self.conn)
        else:
            inflight.clock = self.snapshots.follow()
        built = Built(units.copy(latest), batch=batch_of(self.options))
        try:
            await self._gather(units, built, inflight.guard if inflight is not None else None)
            await complete_held_addresses(built.reads or self.conn, built.batch)  # one read for its files
        except Exception:
            await self._settle()
            raise
        return built

    async def _settle(self) -> None:
        """Wait for the commit of the transaction in flight, if any; then it is the committed state."""
        written = self._inflight
        if written is None:
            return
        self._inflight = None
        waited = time.perf_counter()
        await written.guard.done
        self.stats.write_wait_seconds += time.perf_counter() - waited + written.guard.wait_seconds
        self.stats.background_write_seconds += written.seconds
        self.snapshots.committed(written.clock)
        self.state = written.built.state
        group = written.built.group
        self._committed(group, time.perf_counter() - written.started)
        self._imported += group.files
        self.stats.overlapped += 1
        self.stats.background_snapshots += written.built.snapshot_at is not None
        self.stats.waited_reads += written.guard.waits

    def _barrier_before(self, units: Units[S, U], unit: U, state: S) -> bool:
        """Whether ``unit`` must be gathered in a transaction that writes as it goes."""
        version = unit.record.version
        previous = self._last_version
        return (
            version < FIRST_BLOCK_VERSION
            or (previous is not None and previous < FIRST_BLOCK_VERSION)
            or is_mainnet(units.position(state).book, self.options.network)
        )

    async def _gather(self, units: Units[S, U], built: Built[S], inflight: InFlight | None) -> None:
        """Verify units and build their rows into ``built`` without writing, up to the group's limits, reading
        through :class:`GuardedReads` while ``inflight`` is written; stops early (``built.barrier``) where the
        transaction must write as it goes."""
        options = self.options
        state, group = built.state, built.group
        position = units.position(state)
        if position.pending_book is not None or position.pending_balances is not None:
            built.barrier = True
            return
        reads: LookupReads = DatabaseReads(self.conn)
        if inflight is not None:
            reads = built.reads = GuardedReads(self.conn, inflight)
        while group.files < options.files_per_transaction and group.items < options.items_per_transaction:
            if self.stop.is_set():
                break
            load_start = time.time_ns() // 1_000_000
            try:
                unit = await units.next_unit(state)
            except StreamFileError as error:
                built.refused = error
                break
            if unit is None:
                self.reached_end = units.reached_end
                break
            if self._barrier_before(units, unit, state):
                built.barrier, built.held = True, unit
                return
            due = await self._gather_unit(
                units, unit, state, group, built.batch, built.record_rows, reads, load_start, built.evidence
            )
            node_set = built.batch.address_book_changed or has_node_stakes(built.batch)
            if due and not node_set and self.snapshots.in_background:
                assert group.last_consensus_end is not None
                built.snapshot_at = self.snapshots.claim(group.last_consensus_end)
                return
            if node_set or due:
                built.barrier = built.flush = True
                built.snapshot_due = due
                return

    async def _commit_rest(self, units: Units[S, U], built: Built[S]) -> None:
        """A gathering that stopped at a barrier, written and committed in one transaction on the import's
        connection, going on as :meth:`commit_group` does (nothing is being written meanwhile); a refused unit
        is left in ``built.refused``."""
        group = built.group
        started = time.perf_counter()
        self.evidence = built.evidence
        async with self.conn.transaction():
            built.refused = await self._write_group(units, built.state, group, built)
            await units.before_commit(self.conn, built.state, group)
            group.rows += await self.evidence.write(self.conn)
            await notify_commit(self.conn, group.last_consensus_end)
        self.snapshots.committed()
        self.state = built.state
        self._committed(group, time.perf_counter() - started)
        self._imported += group.files

    def _submit(self, writer: BackgroundWriter, units: Units[S, U], built: Built[S], ready: _Ready) -> _Written[S]:
        """Write and commit ``built`` in the writer's thread, on its connection (``ready``: its plan and guard,
        made in the row builder's thread: the writer's thread only writes)."""
        group, state, position = built.group, built.state, units.position(built.state)
        plan = ready.plan

        async def write_and_commit(conn: asyncpg.Connection) -> None:
            started = time.perf_counter()
            try:
                await write(conn)
            finally:
                written.seconds = time.perf_counter() - started

        async def write(conn: asyncpg.Connection) -> None:
            async with conn.transaction():
                group.rows += await write_files(conn, built.batch, built.record_rows, position, group, plan=plan)
                if built.snapshot_at is not None:  # the balances after the transaction's last file
                    taken = await self.snapshots.write(conn, built.snapshot_at)
                    group.tables.update(taken)
                    group.rows += sum(taken.values())
                await units.before_commit(conn, state, group)
                group.rows += await built.evidence.write(conn)
                await notify_commit(conn, group.last_consensus_end)

        written = _Written(built, ready.guard, time.perf_counter())
        written.guard.follow(writer.submit(write_and_commit))
        return written

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


class _Ready(NamedTuple):
    """A gathered transaction's plan (``plan_batch``) and guard, made before it is handed to the writer (the
    writer changes the batch's rows)."""

    plan: BatchPlan
    guard: InFlight


def _ready(built: Built[Any]) -> _Ready:
    return _Ready(plan_batch(built.batch), InFlight(built.batch))


@dataclass(slots=True)
class _Written(Generic[S]):
    """A transaction handed to the background writer."""

    built: Built[S]
    guard: InFlight
    started: float
    clock: SnapshotClock | None = None
    seconds: float = 0.0
    """Wall seconds of the write and commit (set by the writer's thread when done)."""
