"""The batch: the rows one or more record files produce, gathered by the handlers and written in one go
(:mod:`.batch_writer`).

A handler looks at one item and adds rows to the batch; it never touches the database. Rows are dicts by
column name, checked against ``db/schema/`` when written:

* ``batch.insert(table, row)``: append-only rows (``transaction``, transfers, ``file_data``...), written with
  binary COPY (``db.write.copy_rows``). The tables of :data:`RECORD_TABLES` (those with a row or more in most
  transactions) hold value tuples in the model's column order instead, made by :data:`RECORDS` from the columns
  by keyword, or written by position where they are made for every transaction (``common``, its order checked
  on import) (``batch.records(table)`` is the list to append them to; ``db.write.copy_records`` writes them): no
  dict per row, and no pass that turns dicts into tuples before the COPY; a dict given to ``insert`` for one of
  them is made into its tuple;
* ``batch.upsert(table, row)``: a (partial) state of a keyed, usually versioned row (``entity``, ``node``,
  allowances...): its key, ``timestamp_range`` = the consensus timestamp (``[ts, ∞)``) and only the columns the
  transaction sets; merged by ``db.write.upsert`` (new else existing, history rows for superseded states);
* ``batch.add_balance`` / ``add_token_balance`` / ``add_allowance_debit``: running values (the reference's
  "partial" objects without range). Deltas are summed per key in memory and applied after the segment's upserts
  by ``db.running`` (``balance = balance + delta``), to existing rows only: a balance change for an account the
  database does not hold is dropped, as in the reference. Entity balance deltas are carried to the end of the
  batch (one statement) unless a later segment upserts that entity (``batch_writer.write_batch``; within one
  coalesced write, ``batch_writer.Written.entity_phases``);
* ``batch.defer(step)``: an async step that needs the database state of everything gathered so far (address
  books of files 0.0.101/102 built from their ``file_data``, an NFT treasury change). It closes the current
  *segment*: ``write_batch`` writes segment by segment (COPY, upserts, running values, then the step). A step
  that names the tables it ``touches`` lets ``write_batch`` write the next segments' rows before it when they
  touch none of those tables (one COPY and one merge per table for the lot instead of one per segment).

What one item hands to the handlers after its own (its ``transaction`` row, the entities it touches) and what
the items of one file hand to later items is not kept here: it is the :class:`~.context.ItemContext` each
handler is given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import asyncpg

from ledgermirror.db.schema import RANGE_COLUMN, record_maker
from ledgermirror.db.schema import table as table_model
from ledgermirror.importer.handlers.aliases import Aliases

if TYPE_CHECKING:
    from ledgermirror.importer.handlers.lookups import HeldAddresses

Step = Callable[[asyncpg.Connection], Awaitable[dict[str, int] | None]]

RECORD_TABLES = ("transaction", "crypto_transfer", "transaction_hash", "token_transfer")
"""Append-only tables whose rows the batch holds as values of every column in the model's order (:data:`RECORDS`
makes them): the ones with a row or more in most transactions (a ``transaction`` and a ``transaction_hash`` row
and about four ``crypto_transfer`` rows each). Value tuples, except the ``transaction`` rows of ``common``: lists,
which later items of the file may still complete (an atomic batch's inner transactions)."""
RECORDS: Mapping[str, Callable[..., tuple[Any, ...]]] = MappingProxyType(
    {name: record_maker(table_model(name)) for name in RECORD_TABLES}
)
"""table -> its record maker (``db.schema.record_maker``): columns by keyword, a value tuple in COPY order."""
RECORD_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {name: table_model(name).column_names for name in RECORD_TABLES}
)
"""table -> the columns of its value tuples."""
Touches = Mapping[str, frozenset[tuple[Any, ...]] | None]
K = TypeVar("K")


@dataclass(slots=True)
class Segment:
    """Rows gathered between two deferred steps."""

    inserts: dict[str, list[Any]] = field(default_factory=dict)
    """table -> rows: dicts by column name, value tuples for the tables of :data:`RECORD_COLUMNS`"""
    upserts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    entity_balances: dict[int, list[int]] = field(default_factory=dict)
    """entity id -> [delta, last consensus timestamp]"""
    token_balances: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    """(account id, token id) -> [delta, last consensus timestamp]"""
    allowance_debits: dict[tuple[int, int, int | None], int] = field(default_factory=dict)
    """(owner, spender, token id or None for HBAR) -> summed (negative) amount"""
    entity_phases: list[tuple[int, dict[int, list[int]]]] = field(default_factory=list)
    """Balance deltas that must reach ``entity`` before one of the segment's ``entity`` upserts: (the index of
    the upsert in ``upserts["entity"]``, entity id -> [delta, last consensus timestamp] gathered before it),
    taken out of :attr:`entity_balances` (:meth:`Batch.upsert`)."""
    step: Step | None = None
    touches: Touches | None = None
    """What ``step`` reads or writes (None: anything): table -> the keys of its rows (a key may be a prefix of
    the table's key: every row under it), or None for the whole table; a table's history twin goes with it. A
    step may run after a later segment's rows that touch none of it (``batch_writer`` writes both as one)."""


def add_delta(deltas: dict[K, list[int]], key: K, delta: int, stamp: int) -> None:
    """Sum a running delta into ``deltas`` (key -> [delta, last consensus timestamp]), deltas given in order; a
    new key gets a list of its own (a list given elsewhere is never changed). Where it would run for every
    transfer it is written inline instead (a call costs about what the sum does): ``common.crypto_transfers``
    and ``common.token_transfers``, and ``batch_writer._join``."""
    held = deltas.get(key)
    if held is None:
        deltas[key] = [delta, stamp]
    else:
        held[0] += delta
        held[1] = stamp


_BALANCE_COLUMNS = ("balance", "balance_timestamp")


def closes_balance(row: Mapping[str, Any]) -> bool:
    """Whether an ``entity`` upsert row must follow the balance deltas before it: it closes a version (its
    history row holds the balance) or sets the balance. A partial update of another running value (an EVM
    nonce, a stake period start) commutes with the deltas."""
    return RANGE_COLUMN in row or any(name in row for name in _BALANCE_COLUMNS)


class Batch:
    """Rows of one or more record files, in order (see the module text)."""

    def __init__(
        self,
        *,
        entity_transactions: bool = False,
        synthetic_log_addresses: bool = True,
        hold_addresses: bool = False,
    ) -> None:
        self.entity_transactions = entity_transactions
        """Write ``entity_transaction`` rows (the reference's ``persist.entityTransactions``, off by default)."""
        self.synthetic_log_addresses = synthetic_log_addresses
        """Complete synthetic ``Transfer`` logs with EVM addresses at the end of each file (the reference's
        ``persist.syntheticContractLogEvmAddressLookup``, on by default; ``lookups.rows_of_file_with_lookups``)."""
        self.hold_addresses = hold_addresses
        """Hold each file's synthetic log address completion (:attr:`held_addresses`) for the end of the
        gathering, which reads the addresses of every held file at once (``lookups.complete_held_addresses``):
        one read a batch instead of one a file."""
        self.held_addresses: list[HeldAddresses] = []
        """The files whose synthetic ``Transfer`` logs still wait for their EVM addresses: the batch is not
        written (``batch_writer.plan_batch``) until they are completed."""
        self.segments: list[Segment] = [Segment()]
        self.address_book_changed = False
        """A successful file transaction on 0.0.101 or 0.0.102 is in the batch (the signers may change)."""
        self.aliases = Aliases()
        """Aliases and EVM addresses -> entity ids: the batch's creates, and what ``lookups`` read."""
        self._latest: dict[tuple[str, tuple[Any, ...]], dict[str, Any]] = {}

    # Rows ----------------------------------------------------------------------------------------------------

    @property
    def _segment(self) -> Segment:
        return self.segments[-1]

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """An append-only row (COPY); for a table of :data:`RECORD_COLUMNS`, its value tuple."""
        rows = self._segment.inserts.get(table)
        if rows is None:
            rows = self._segment.inserts[table] = []
        make = RECORDS.get(table)
        rows.append(row if make is None else make(**row))

    def insert_all(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Append-only rows (COPY), in order: as :meth:`insert` for each."""
        if table in RECORD_COLUMNS:
            for row in rows:
                self.insert(table, row)
            return
        held = self._segment.inserts.get(table)
        if held is None:
            held = self._segment.inserts[table] = []
        held.extend(rows)

    def records(self, table: str) -> list[Any]:
        """The current segment's rows of a :data:`RECORD_COLUMNS` table, to append its values to (a tuple, or
        a list, in that table's column order)."""
        if table not in RECORD_COLUMNS:
            raise KeyError(f"{table} rows are not held as value tuples")
        rows = self._segment.inserts.get(table)
        if rows is None:
            rows = self._segment.inserts[table] = []
        return rows

    def upsert(self, table: str, row: dict[str, Any]) -> None:
        """A partial state: key + ``timestamp_range`` lower bound + the columns set (``db.write.upsert``).

        An ``entity`` row that closes a version (or sets the balance) takes the balance deltas of that entity
        gathered before it in the segment out of the running values: they are written before the row
        (:attr:`Segment.entity_phases`), so the version it closes holds the balance of every transfer before
        it, wherever the segments fall. A creation leaves them to follow it (the funding transfer to a new
        account comes before its creation): the created version starts with them, as the reference merges a
        balance-only change into the creation that follows it."""
        segment = self._segment
        rows = segment.upserts.get(table)
        if rows is None:
            rows = segment.upserts[table] = []
        rows.append(row)
        if (
            table == "entity"
            and segment.entity_balances
            and closes_balance(row)
            and "created_timestamp" not in row
        ):
            due = segment.entity_balances.pop(row["id"], None)
            if due is not None:
                segment.entity_phases.append((len(rows) - 1, {row["id"]: due}))
        key = tuple(row.get(name) for name in table_model(table).key)
        held = self._latest.get((table, key))
        if held is not None and row.get("timestamp_range") in (None, held.get("timestamp_range")):
            held.update({name: value for name, value in row.items() if value is not None})
        else:
            self._latest[(table, key)] = dict(row)

    def latest(self, table: str, *key: Any) -> dict[str, Any] | None:
        """The values this batch last set for a key (merged over one timestamp), None when it set none."""
        return self._latest.get((table, key))

    def account_of(self, message: Any) -> int:
        """An ``AccountID``'s entity, an alias looked up (0.0.0 when unknown)."""
        return self.aliases.account(message)

    def contract_of(self, message: Any) -> int:
        """A ``ContractID``'s entity, an EVM address looked up (0.0.0 when unknown)."""
        return self.aliases.contract(message)

    # Running values ------------------------------------------------------------------------------------------

    def add_balance(self, entity_id: int, amount: int, consensus_timestamp: int) -> None:
        """``entity.balance += amount``, ``balance_timestamp = consensus_timestamp`` (existing accounts only)."""
        add_delta(self._segment.entity_balances, entity_id, amount, consensus_timestamp)

    def entity_balances(self) -> dict[int, list[int]]:
        """The current segment's entity balance deltas (entity id -> [delta, last consensus timestamp]), for a
        caller that adds many in a row as :meth:`add_balance` does (``common.crypto_transfers``)."""
        return self._segment.entity_balances

    def token_balances(self) -> dict[tuple[int, int], list[int]]:
        """The current segment's token balance deltas ((account id, token id) -> [delta, last consensus
        timestamp]), for a caller that adds many in a row as :meth:`add_token_balance` does."""
        return self._segment.token_balances

    def add_token_balance(self, account_id: int, token_id: int, amount: int, consensus_timestamp: int) -> None:
        """``token_account.balance += amount`` for an existing association (``associated`` becomes true)."""
        add_delta(self._segment.token_balances, (account_id, token_id), amount, consensus_timestamp)

    def add_allowance_debit(self, owner: int, spender: int, amount: int, token_id: int | None = None) -> None:
        """An approved debit: ``crypto_allowance.amount`` (or ``token_allowance.amount`` of ``token_id``)
        ``+= amount`` (negative), ``amount_granted`` unchanged, existing allowances only."""
        key = (owner, spender, token_id)
        self._segment.allowance_debits[key] = self._segment.allowance_debits.get(key, 0) + amount

    def defer(self, step: Step, touches: Mapping[str, Iterable[tuple[Any, ...]] | None] | None = None) -> None:
        """Run ``step`` after everything gathered so far is written; later rows are written after it, unless
        ``touches`` (every table and key the step reads or writes: :attr:`Segment.touches`) shows that the order
        does not matter for them."""
        self._segment.step = step
        self._segment.touches = (
            None
            if touches is None
            else {name: None if keys is None else frozenset(keys) for name, keys in touches.items()}
        )
        self.segments.append(Segment())

    def row_count(self) -> int:
        """Rows gathered (inserts and upserts)."""
        return sum(
            len(rows)
            for segment in self.segments
            for group in (segment.inserts, segment.upserts)
            for rows in group.values()
        )
