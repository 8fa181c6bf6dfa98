"""Balance snapshots written during an import, as the reference's ``HistoricalBalanceService`` takes them.

A snapshot is due when a record file's ``consensus_end`` is at least ``min_frequency`` past the last
``account_balance_file`` (or, before there is one, past the first record file's end plus ``initial_delay``).
It is taken at that file's ``consensus_end``, inside the database transaction that writes the file (the driver
writes the rows gathered so far first), so a restart never finds half a snapshot and a replayed file never makes
a second one. The first snapshot of a calendar month (UTC) is full, later ones copy only the balances changed
since the month's previous snapshot (the reference's monthly ``account_balance`` partitions, which REST reads
from the first day of the snapshot's month).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import asyncpg

from ledgermirror.db import balance_snapshots as statements
from ledgermirror.ledger.entity_id import encode_entity_id
from ledgermirror.ledger.timestamps import month_start

_log = logging.getLogger("ledgermirror.importer")

MINUTE_NS = 60 * 1_000_000_000
TREASURY_NUM = 2


@dataclass(frozen=True, slots=True)
class SnapshotRules:
    """The reference's ``historicalBalance`` properties (``LEDGERMIRROR_IMPORT_BALANCE_SNAPSHOT_*``)."""

    enabled: bool = True
    min_frequency_ns: int = 15 * MINUTE_NS
    initial_delay_ns: int = 2 * MINUTE_NS
    token_balances: bool = True
    shard: int = 0
    realm: int = 0

    @property
    def treasury(self) -> int:
        return encode_entity_id(self.shard, self.realm, TREASURY_NUM)


def instant_text(nanos: int) -> str:
    """Java's ``Instant.toString``: seconds always, the fraction in the shortest of 3, 6 or 9 digits that shows
    it exactly, none when 0."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    if fraction:
        digits = f"{fraction:09d}"
        while digits.endswith("000"):
            digits = digits[:-3]
        text += "." + digits
    return text + "Z"


def snapshot_name(nanos: int) -> str:
    """The ``account_balance_file.name`` of a snapshot: ``<instant, ':' as '_'>_Balances.csv``."""
    return instant_text(nanos).replace(":", "_") + "_Balances.csv"


@dataclass(slots=True)
class SnapshotClock:
    """When the next snapshot is due. ``last``/``first_end`` are the committed values; the open transaction
    works on a copy (:meth:`begin`) made the committed one by :meth:`committed`."""

    last: int | None
    first_end: int | None
    treasury_checked: bool = False
    """The treasury was checked (made if missing) in this transaction."""

    def due(self, consensus_end: int, rules: SnapshotRules) -> bool:
        if self.first_end is None:
            self.first_end = consensus_end
        last = self.last if self.last is not None else self.first_end + rules.initial_delay_ns
        return consensus_end - last >= rules.min_frequency_ns


class BalanceSnapshots:
    """The driver's snapshot taker: :meth:`due` per record file, :meth:`take` when it is."""

    def __init__(self, rules: SnapshotRules | None) -> None:
        self.rules = rules
        self._committed: SnapshotClock | None = None
        self._open: SnapshotClock | None = None
        self._treasury_checked = False

    async def begin(self, conn: asyncpg.Connection) -> None:
        """A transaction begins: work on a copy of the committed clock (read from the database until it holds an
        ``account_balance_file``: one small query per transaction for the first minutes of a new mirror)."""
        if self.rules is None or not self.rules.enabled:
            return
        if self._committed is None or self._committed.last is None:  # until there is one (a seeded balance file)
            marks = await statements.marks(conn)
            self._committed = SnapshotClock(marks.last_snapshot, marks.first_end)
        self._open = SnapshotClock(self._committed.last, self._committed.first_end)

    def follow(self) -> SnapshotClock | None:
        """The next transaction begins while the open one is written (``LEDGERMIRROR_IMPORT_OVERLAP``): it works
        on a copy of the open clock, which is final (a snapshot the written one holds was claimed already).
        Returns the clock of the transaction being written, for :meth:`committed`."""
        written = self._open
        if written is not None:
            self._open = SnapshotClock(written.last, written.first_end)
        return written

    def committed(self, clock: SnapshotClock | None = None) -> None:
        """The transaction committed: its clock (the open one, or ``clock`` from :meth:`follow`) is now the
        committed one."""
        done = clock if clock is not None else self._open
        if done is not None:
            self._committed = done
            self._treasury_checked = self._treasury_checked or done.treasury_checked
            if clock is None:
                self._open = None

    def due(self, consensus_end: int) -> bool:
        """Whether the record file ending at ``consensus_end`` (accepted in the open transaction) makes a
        snapshot due."""
        if self._open is None or self.rules is None:
            return False
        return self._open.due(consensus_end, self.rules)

    @property
    def in_background(self) -> bool:
        """Whether a due snapshot may be taken by the overlapped import's background writer (:meth:`claim`, then
        :meth:`write` there): once a committed snapshot checked the treasury, a snapshot only reads balances and
        writes the balance tables, which no row building reads."""
        return self._treasury_checked

    def claim(self, timestamp: int) -> int:
        """The open transaction will hold the snapshot at ``timestamp`` (written by :meth:`write`): the clock
        moves now, so the transaction built next (:meth:`follow`) does not find it due again."""
        assert self._open is not None
        self._open.last = timestamp
        return timestamp

    async def take(self, conn: asyncpg.Connection, timestamp: int) -> dict[str, int]:
        """Write the snapshot at ``timestamp`` (the rows of every file up to it already written); rows per
        table."""
        rules = self.rules
        assert rules is not None and self._open is not None
        counts: dict[str, int] = {}
        if not self._treasury_checked:
            if await statements.ensure_treasury(conn, rules.treasury, TREASURY_NUM, rules.realm, rules.shard):
                counts["entity"] = 1
            self._open.treasury_checked = True
        counts.update(await self.write(conn, self.claim(timestamp)))
        return counts

    async def write(self, conn: asyncpg.Connection, timestamp: int) -> dict[str, int]:
        """The snapshot's rows at ``timestamp`` (the clock is :meth:`take`'s or :meth:`claim`'s); rows per
        table."""
        rules = self.rules
        assert rules is not None
        load_start = time.time_ns() // 1_000_000
        treasury = rules.treasury
        lower = month_start(timestamp)
        upper = month_start(lower + 32 * 86_400 * 1_000_000_000)
        since = await statements.last_treasury_snapshot(conn, treasury, lower, upper)
        accounts = await statements.snapshot_accounts(conn, timestamp, treasury, since)
        tokens = await statements.snapshot_tokens(conn, timestamp, treasury, since) if rules.token_balances else 0
        name = snapshot_name(timestamp)
        await statements.save_balance_file(
            conn,
            timestamp=timestamp,
            name=name,
            count=accounts,
            load_start=load_start,
            load_end=time.time_ns() // 1_000_000,
            synthetic=True,
        )
        _log.info(
            "generated %s historical account balance file %s with %d account balances and %d token balances",
            "full" if since is None else "deduped",
            name,
            accounts,
            tokens,
        )
        return {"account_balance": accounts, "token_balance": tokens, "account_balance_file": 1}
