"""Building the next batch while this one is written (``LEDGERMIRROR_IMPORT_OVERLAP``; ``driver.py``).

The driver hands a built batch to :class:`BackgroundWriter`, which writes and commits it on its own connection in
a thread of its own (with its own event loop), and meanwhile verifies the next units and builds their rows on
the import's connection. PostgreSQL works on the batch while Python builds the next one; the GIL is shared, so
the writer's turns come at the interpreter's switch interval (lowered while a batch is written, see
:data:`SWITCH_INTERVAL`).

Row building reads the database in two places only (``handlers/lookups.py``): which live entity holds an alias
or EVM address, and the EVM address of given entities. While batch N is being written, the committed database
is the one before N (or, once N commits, after it). :class:`GuardedReads` answers a read from it only where N
cannot change the answer, and otherwise waits for N's commit and reads again, so every answer is the one the
sequential import would get:

- an alias or EVM address is safe when no ``entity`` row N upserts carries it (as ``alias`` or
  ``evm_address``), and N sets neither ``alias``, ``evm_address`` nor ``deleted`` of any entity holding it now
  (deleted ones too: an undelete);
- an entity's EVM address is safe when no ``entity`` row N upserts for it sets ``evm_address``.

An upsert changes a column only where its row gives a value (``db.write.upsert`` coalesces a NULL with the
stored value, unless the table declares the column ``replace_nulls``, counted as set). Nothing else in a
batch's write changes ``entity.alias``, ``evm_address``, ``deleted`` or adds entities: running values change
balances, the deferred steps ``type`` and ``public_key``; the balance snapshot's treasury and the seeded genesis
balances are written only by transactions the driver never overlaps.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import asyncpg

from ledgermirror.db import aliases as stored_aliases
from ledgermirror.db.connections import sibling
from ledgermirror.db.schema import table as table_model
from ledgermirror.importer.handlers.batch import Batch

T = TypeVar("T")

_HOLDING = ("alias", "evm_address", "deleted")
"""The ``entity`` columns the lookups' answers depend on (with ``id``)."""

SWITCH_INTERVAL = 0.00005
"""Seconds between the interpreter's forced GIL hand-overs while a batch is written: the writer's thread waits
up to this long for the GIL after each answer of the server (the default, 5 ms, would add that to each of the
batch's statements, about 300 of them). Where the writer is what the import waits on (PostgreSQL's share grows
with the tables), 0.05 ms made the first 2 M transactions with 32 MB of shared buffers 3.9 % faster than 0.2 ms
(11,645 and 11,358 against 10,838 and 11,303 tx/s, alternated); where the row builder is, it changed nothing
(docs/performance.md)."""


class InFlight:
    """A batch being written and committed: what of ``entity`` it may change, and its commit."""

    def __init__(self, batch: Batch) -> None:
        """Read ``batch`` before it is handed to the writer (whose ``write_batch`` changes its rows)."""
        keys: set[bytes] = set()
        holders: set[int] = set()
        addresses: set[int] = set()
        model = table_model("entity")
        for segment in batch.segments:
            for row in segment.upserts.get("entity", ()):
                for column in _HOLDING:
                    if row.get(column) is not None or (column in row and column in model.replace_nulls):
                        holders.add(row["id"])
                        if column == "evm_address":
                            addresses.add(row["id"])
                        if column != "deleted" and row[column]:
                            keys.add(bytes(row[column]))
        self.keys = frozenset(keys)
        """Aliases and EVM addresses the batch gives entities."""
        self.holders = frozenset(holders)
        """Entities whose alias, EVM address or deleted flag the batch may change."""
        self.addresses = frozenset(addresses)
        """Entities whose EVM address the batch may change."""
        self.done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        """The commit (set by :meth:`follow`)."""
        self.waits = 0
        """Reads that waited for the commit."""
        self.wait_seconds = 0.0
        """How long they waited."""

    def follow(self, done: asyncio.Future[Any]) -> None:
        """The batch was handed to the writer: ``done`` is its commit."""
        self.done = done

    async def committed(self) -> None:
        """Wait for the commit (raises what the write raised)."""
        if self.done.done():
            await self.done
            return
        self.waits += 1
        started = time.perf_counter()
        try:
            await asyncio.shield(self.done)
        finally:
            self.wait_seconds += time.perf_counter() - started


class GuardedReads:
    """The lookups' reads (``lookups.LookupReads``) on ``conn`` while ``inflight`` is written elsewhere."""

    def __init__(self, conn: asyncpg.Connection, inflight: InFlight) -> None:
        self.conn = conn
        self.inflight = inflight
        self.completions: list[Callable[[], Awaitable[None]]] = []
        """What :meth:`deferred` put off, to run in order once ``inflight`` committed (:meth:`complete`)."""

    def deferred(self, entity_ids: Sequence[int], completion: Callable[[], Awaitable[None]]) -> bool:
        """A file's synthetic log addresses whose answer ``inflight`` may change: completed after its commit
        instead of waiting for it now (``lookups.rows_of_file_with_lookups``)."""
        inflight = self.inflight
        if inflight.done.done() or not any(entity_id in inflight.addresses for entity_id in entity_ids):
            return False
        self.completions.append(completion)
        return True

    async def complete(self) -> None:
        """Run the deferred completions (``inflight`` committed)."""
        await self.inflight.committed()
        for completion in self.completions:
            await completion()
        self.completions.clear()

    async def entity_ids(self, keys: Sequence[bytes]) -> dict[bytes, int]:
        inflight = self.inflight
        if not inflight.done.done() and not any(key in inflight.keys for key in keys):
            found = await stored_aliases.holders(self.conn, keys)
            if not any(holder[0] in inflight.holders for holder in found):
                return stored_aliases.live_ids(found, keys)
        await inflight.committed()
        return await stored_aliases.entity_ids(self.conn, keys)

    async def evm_addresses(self, entity_ids: Sequence[int]) -> dict[int, bytes]:
        inflight = self.inflight
        if any(entity_id in inflight.addresses for entity_id in entity_ids):
            await inflight.committed()
        return await stored_aliases.evm_addresses(self.conn, entity_ids)


class BackgroundWriter:
    """A thread running an event loop with its own connection to ``conn``'s database; :meth:`submit` runs a
    coroutine function on that connection there, one at a time in submission order."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._origin = conn
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ledgermirror-writer", daemon=True)
        self._thread.start()
        self._conn: asyncpg.Connection | None = None
        self._switch = sys.getswitchinterval()

    def submit(self, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> asyncio.Future[T]:
        """Run ``work(connection)`` in the writer's thread; its result (or error) in the returned future."""
        sys.setswitchinterval(SWITCH_INTERVAL)
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._run(work), self._loop))

    async def _run(self, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        if self._conn is None or self._conn.is_closed():
            self._conn = await sibling(self._origin)
        try:
            return await work(self._conn)
        finally:
            sys.setswitchinterval(self._switch)

    async def _shutdown(self) -> None:
        if self._conn is not None:
            self._conn.terminate()
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        """End the connection (terminated: a transaction still open rolls back) and the thread."""
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()
        sys.setswitchinterval(self._switch)
