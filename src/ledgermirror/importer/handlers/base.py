"""The handler core: one parsed :class:`Item` per record item, the :class:`Batch` of rows they produce, and
:func:`write_batch`, which writes a batch through ``db/`` in one go.

A handler (``Handler``) looks at one item and adds rows to the batch; it never touches the database. Rows are
dicts by column name, checked against ``db/schema/`` when written:

* ``batch.insert(table, row)``: append-only rows (``transaction``, transfers, ``file_data``...), written with
  binary COPY (``db.write.copy_rows``);
* ``batch.upsert(table, row)``: a (partial) state of a keyed, usually versioned row (``entity``, ``node``,
  allowances...): its key, ``timestamp_range`` = the consensus timestamp (``[ts, ∞)``) and only the columns the
  transaction sets; merged by ``db.write.upsert`` (new else existing, history rows for superseded states);
* ``batch.add_balance`` / ``add_token_balance`` / ``add_allowance_debit``: running values (the reference's
  "partial" objects without range). Deltas are summed per key in memory and applied after the segment's upserts
  by ``db.running`` (``balance = balance + delta``), to existing rows only: a balance change for an account the
  database does not hold is dropped, as in the reference. Entity balance deltas are carried to the end of the
  batch (one statement) unless a later segment upserts that entity (:func:`write_batch`);
* ``batch.defer(step)``: an async step that needs the database state of everything gathered so far (address
  books of files 0.0.101/102 built from their ``file_data``, an NFT treasury change). It closes the current
  *segment*: :func:`write_batch` writes segment by segment (COPY, upserts, running values, then the step).

Which handler runs for an item is :data:`ledgermirror.importer.handlers.registry.HANDLERS` (by the name of the
``TransactionBody`` ``data`` oneof); the rows every item gets whatever its type are in ``common.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import asyncpg

from ledgermirror.db import running, write
from ledgermirror.db.schema import NO_DEFAULT, RANGE_COLUMN
from ledgermirror.db.schema import table as table_model
from ledgermirror.importer._proto import protos
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.lookups import Aliases
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.transaction_codes import result_number

if TYPE_CHECKING:
    from ledgermirror.importer.record_file import RecordFile, RecordItem
    from ledgermirror.importer.sidecar_file import SidecarFile

FAIL_INVALID = result_number("FAIL_INVALID")
DIGEST_SHA_384 = 0
"""``sidecar_file.hash_algorithm`` (and ``record_file.digest_algorithm``) of SHA-384."""
SUCCESS_CODES = frozenset(
    result_number(name)
    for name in ("SUCCESS", "SUCCESS_BUT_MISSING_EXPECTED_OPERATION", "FEE_SCHEDULE_FILE_PART_UPLOADED")
)
"""Receipt statuses the reference counts as successful (``RecordItem.isSuccessful``)."""


class ItemError(ValueError):
    """A record item whose transaction cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Item:
    """One record item, parsed once."""

    consensus_timestamp: int
    """Nanoseconds since the epoch (clamped to the int64 maximum)."""
    index: int
    """Position in the file, counting every item."""
    record: Any
    """``TransactionRecord``."""
    transaction: Any
    """``Transaction``."""
    body: Any
    """``TransactionBody`` (from ``signedTransactionBytes``, else ``bodyBytes``, else the deprecated ``body``)."""
    body_name: str
    """The ``TransactionBody`` ``data`` oneof name, e.g. ``"cryptoTransfer"``; "" when none is set."""
    transaction_bytes: bytes
    payer_account_id: int
    """Encoded id of the body's ``transactionID.accountID`` (0 when given only as an alias)."""
    result: int
    """The receipt status (``ResponseCodeEnum``), stored as it is."""
    successful: bool
    """SUCCESS, SUCCESS_BUT_MISSING_EXPECTED_OPERATION or FEE_SCHEDULE_FILE_PART_UPLOADED, and a successful
    parent (a child of a failed parent never is)."""
    parent_consensus_timestamp: int | None
    type: int = 0
    """``transaction.type``: the oneof field number (an unknown oneof: its single unknown field's number)."""
    signature_map: Any = None
    """``SignatureMap`` of the transaction, None when it has none."""
    hapi_version: tuple[int, int, int] | None = None
    """The record file's HAPI version (None for files before v5)."""
    record_bytes: bytes = b""
    """The ``TransactionRecord`` as stored (node transactions keep it in ``transaction_record_bytes``)."""
    sidecar_records: tuple[Any, ...] = ()
    """The ``TransactionSidecarRecord`` messages of the file's sidecars with this item's consensus timestamp."""

    @property
    def successful_or_fail_invalid(self) -> bool:
        """Token transfers, NFT transfers, assessed fees and automatic associations are written then."""
        return self.successful or self.result == FAIL_INVALID

    def hapi_at_least(self, minor: int) -> bool:
        """HAPI version 0.``minor`` or later (files without a version count as old)."""
        return self.hapi_version is not None and self.hapi_version >= (0, minor, 0)


Handler = Callable[[Item, "Batch"], None]
Step = Callable[[asyncpg.Connection], Awaitable[dict[str, int] | None]]


@dataclass(slots=True)
class Segment:
    """Rows gathered between two deferred steps."""

    inserts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    upserts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    entity_balances: dict[int, list[int]] = field(default_factory=dict)
    """entity id -> [delta, last consensus timestamp]"""
    token_balances: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    """(account id, token id) -> [delta, last consensus timestamp]"""
    allowance_debits: dict[tuple[int, int, int | None], int] = field(default_factory=dict)
    """(owner, spender, token id or None for HBAR) -> summed (negative) amount"""
    step: Step | None = None


class Batch:
    """Rows of one or more record files, in order (see the module text)."""

    def __init__(self, *, entity_transactions: bool = False) -> None:
        self.entity_transactions = entity_transactions
        """Write ``entity_transaction`` rows (the reference's ``persist.entityTransactions``, off by default)."""
        self.segments: list[Segment] = [Segment()]
        self.transaction: dict[str, Any] = {}
        """The ``transaction`` row of the item being handled: handlers set its ``entity_id`` and the like."""
        self.touched: set[int] = set()
        """Entity ids the item being handled touches (for ``entity_transaction``)."""
        self.address_book_changed = False
        """A successful file transaction on 0.0.101 or 0.0.102 is in the batch (the signers may change)."""
        self.atomic_batches: dict[int, dict[str, Any]] = {}
        """``transaction`` rows of atomic batches by consensus timestamp (their inner transactions list)."""
        self.log_index = 0
        """The next ``contract_log.index``: runs per record file (reset by :func:`rows_of_file`)."""
        self.aliases = Aliases()
        """Aliases and EVM addresses -> entity ids: the batch's creates, and what ``lookups`` read."""
        self.hook_queues: dict[int, list[tuple[int, int]]] = {}
        """(owner, hook id) of the hooks a CryptoTransfer calls, by its consensus timestamp, in execution order:
        its hook executions (child calls to 0.0.365) take them in turn."""
        self.contract_parents: dict[int, tuple[int, int, bytes]] = {}
        """Items with a contract result by consensus timestamp: (timestamp, index, 32-byte hash) that synthetic
        logs of their children take."""
        self._latest: dict[tuple[str, tuple[Any, ...]], dict[str, Any]] = {}

    # Rows ----------------------------------------------------------------------------------------------------

    @property
    def _segment(self) -> Segment:
        return self.segments[-1]

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """An append-only row (COPY)."""
        rows = self._segment.inserts.get(table)
        if rows is None:
            rows = self._segment.inserts[table] = []
        rows.append(row)

    def upsert(self, table: str, row: dict[str, Any]) -> None:
        """A partial state: key + ``timestamp_range`` lower bound + the columns set (``db.write.upsert``)."""
        rows = self._segment.upserts.get(table)
        if rows is None:
            rows = self._segment.upserts[table] = []
        rows.append(row)
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

    def set_transaction(self, **columns: Any) -> None:
        """Set columns of the current item's ``transaction`` row."""
        self.transaction.update(columns)

    def touch(self, *entity_ids: int | None) -> None:
        """Entities the current item involves (for ``entity_transaction``); None and 0 are ignored."""
        if self.entity_transactions:
            self.touched.update(entity_id for entity_id in entity_ids if entity_id)

    # Running values ------------------------------------------------------------------------------------------

    def add_balance(self, entity_id: int, amount: int, consensus_timestamp: int) -> None:
        """``entity.balance += amount``, ``balance_timestamp = consensus_timestamp`` (existing accounts only)."""
        held = self._segment.entity_balances.get(entity_id)
        if held is None:
            self._segment.entity_balances[entity_id] = [amount, consensus_timestamp]
        else:
            held[0] += amount
            held[1] = consensus_timestamp

    def add_token_balance(self, account_id: int, token_id: int, amount: int, consensus_timestamp: int) -> None:
        """``token_account.balance += amount`` for an existing association (``associated`` becomes true)."""
        held = self._segment.token_balances.get((account_id, token_id))
        if held is None:
            self._segment.token_balances[(account_id, token_id)] = [amount, consensus_timestamp]
        else:
            held[0] += amount
            held[1] = consensus_timestamp

    def add_allowance_debit(self, owner: int, spender: int, amount: int, token_id: int | None = None) -> None:
        """An approved debit: ``crypto_allowance.amount`` (or ``token_allowance.amount`` of ``token_id``)
        ``+= amount`` (negative), ``amount_granted`` unchanged, existing allowances only."""
        key = (owner, spender, token_id)
        self._segment.allowance_debits[key] = self._segment.allowance_debits.get(key, 0) + amount

    def defer(self, step: Step) -> None:
        """Run ``step`` after everything gathered so far is written; later rows are written after it."""
        self._segment.step = step
        self.segments.append(Segment())

    def row_count(self) -> int:
        """Rows gathered (inserts and upserts)."""
        return sum(
            len(rows)
            for segment in self.segments
            for group in (segment.inserts, segment.upserts)
            for rows in group.values()
        )


# Items -------------------------------------------------------------------------------------------------------


def item_of(
    record_item: RecordItem,
    index: int,
    *,
    hapi_version: tuple[int, int, int] | None = None,
    parent_successful: bool = True,
) -> Item:
    """Parse one record item's transaction (``RecordItem.java``'s rules)."""
    modules = protos()
    record = record_item.record
    try:
        transaction = record_item.transaction()
        body, signature_map = _body_and_signatures(transaction)
    except modules.decode_error as error:
        raise ItemError(f"item {index}: Error parsing transactionBody from transaction: {error}") from error
    body_name = body.WhichOneof("data") or ""
    result = record.receipt.status
    parent = None
    if record.HasField("parent_consensus_timestamp"):
        parent = ids.nanos(record.parent_consensus_timestamp)
    return Item(
        consensus_timestamp=min(record_item.consensus_timestamp, INT64_MAX),
        index=index,
        record=record,
        transaction=transaction,
        body=body,
        body_name=body_name,
        transaction_bytes=record_item.transaction_bytes,
        payer_account_id=ids.account_id(body.transactionID.accountID),
        result=result,
        successful=parent_successful and result in SUCCESS_CODES,
        parent_consensus_timestamp=parent,
        type=_type_of(body, body_name),
        signature_map=signature_map,
        hapi_version=hapi_version,
        record_bytes=record_item.record_bytes,
    )


def _body_and_signatures(transaction: Any) -> tuple[Any, Any]:
    modules = protos()
    body_class = modules.transaction.TransactionBody
    if transaction.signedTransactionBytes:
        signed = modules.transaction_contents.SignedTransaction.FromString(transaction.signedTransactionBytes)
        return body_class.FromString(signed.bodyBytes), signed.sigMap if signed.HasField("sigMap") else None
    if transaction.bodyBytes:
        signature_map = transaction.sigMap if transaction.HasField("sigMap") else None
        return body_class.FromString(transaction.bodyBytes), signature_map
    if transaction.HasField("body"):
        return transaction.body, transaction.sigMap if transaction.HasField("sigMap") else None
    raise modules.decode_error("no signedTransactionBytes, bodyBytes or body")


def _type_of(body: Any, body_name: str) -> int:
    if body_name:
        return int(body.DESCRIPTOR.fields_by_name[body_name].number)
    from google.protobuf.unknown_fields import UnknownFieldSet

    unknown_fields = UnknownFieldSet(body)
    unknown = [unknown_fields[index].field_number for index in range(len(unknown_fields))]
    return unknown[0] if len(unknown) == 1 else 0


def rows_of_file(record_file: RecordFile, batch: Batch, sidecars: Sequence[SidecarFile] = ()) -> None:
    """Every item of the file: its common rows and its handler's rows, in file order. Each item gets the
    records of the file's (verified) ``sidecars`` that carry its consensus timestamp. (The importer reads the
    aliases the items name first: ``lookups.rows_of_file_with_lookups``.)"""
    rows_of_items(record_file, items_of_file(record_file, sidecars), batch, sidecars)


def items_of_file(record_file: RecordFile, sidecars: Sequence[SidecarFile] = ()) -> list[Item]:
    """The file's items, parsed, with their sidecar records; a child of a failed parent is not successful."""
    hapi = tuple(record_file.hapi_version) if record_file.hapi_version is not None else None
    by_timestamp: dict[int, list[Any]] = {}
    for sidecar in sidecars:
        for sidecar_record in sidecar.records:
            by_timestamp.setdefault(ids.nanos(sidecar_record.consensus_timestamp), []).append(sidecar_record)
    successes: dict[int, bool] = {}
    items = []
    for index, record_item in enumerate(record_file.items):
        item = item_of(record_item, index, hapi_version=hapi)  # type: ignore[arg-type]
        found = by_timestamp.get(item.consensus_timestamp)
        if found:
            item = replace(item, sidecar_records=tuple(found))
        parent = item.parent_consensus_timestamp
        if parent is not None and item.successful and not successes.get(parent, True):
            item = _failed(item)
        successes[item.consensus_timestamp] = item.successful
        items.append(item)
    return items


def rows_of_items(
    record_file: RecordFile, items: Sequence[Item], batch: Batch, sidecars: Sequence[SidecarFile] = ()
) -> None:
    """The rows of the file's parsed ``items``, then one ``sidecar_file`` row per sidecar (§5.7)."""
    from ledgermirror.importer.handlers.common import rows_of_item

    batch.log_index = 0
    batch.hook_queues.clear()
    batch.contract_parents.clear()
    for item in items:
        rows_of_item(item, batch)
    for listed, sidecar in zip(record_file.sidecars, sidecars, strict=False):
        batch.insert(
            "sidecar_file",
            {
                "bytes": None,
                "count": len(sidecar.records),
                "consensus_end": record_file.consensus_end,
                "hash_algorithm": DIGEST_SHA_384,
                "hash": listed.hash,
                "id": listed.id,
                "name": sidecar.name,
                "size": sidecar.size,
                "types": sorted(listed.types),
            },
        )


def _failed(item: Item) -> Item:
    return replace(item, successful=False)


# Writing -----------------------------------------------------------------------------------------------------

_UPSERT_FIRST = ("entity",)
_UPSERT_LAST = ("token", "token_account", "nft")  # the reference's flush order (DomainClassComparator)


def _upsert_order(names: list[str]) -> list[str]:
    middle = [name for name in names if name not in _UPSERT_FIRST and name not in _UPSERT_LAST]
    return [
        *(name for name in _UPSERT_FIRST if name in names),
        *middle,
        *(name for name in _UPSERT_LAST if name in names),
    ]


def _add(total: dict[str, int], more: dict[str, int] | None) -> None:
    for name, count in (more or {}).items():
        total[name] = total.get(name, 0) + count


def _uniform(table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with every nullable column without default given (None where unset), so that the writer stages
    them in few groups (one per set of columns). For those columns None and "not given" mean the same to
    ``db.write.upsert`` (inserted as NULL, or "keep the existing value"); columns with a default and columns a
    NULL clears (``replace_nulls``) are left as the handler gave them."""
    model = table_model(table)
    fill = [
        column.name
        for column in model.columns
        if column.nullable
        and column.default is NO_DEFAULT
        and column.name != RANGE_COLUMN
        and column.name not in model.replace_nulls
    ]
    for row in rows:
        for name in fill:
            if name not in row:
                row[name] = None
    return rows


async def write_segment(
    conn: asyncpg.Connection, segment: Segment, entity_balances: dict[int, list[int]] | None = None
) -> dict[str, int]:
    """The segment's rows, upserts, running values and step; ``entity_balances`` (default: the segment's)
    are the entity balance deltas to apply now."""
    counts: dict[str, int] = {}
    balances = segment.entity_balances if entity_balances is None else entity_balances
    for name, rows in segment.inserts.items():
        _add(counts, await write.copy_rows(conn, name, rows))
    for name in _upsert_order(list(segment.upserts)):
        rows = segment.upserts[name]
        taken = await write.upsert(conn, name, _uniform(name, rows))
        _add(counts, {name: taken})
        if name == "entity":
            await running.clear_empty_public_keys(conn, [row["id"] for row in rows if row.get("public_key") == ""])
        elif name == "node":
            cleared = [row["node_id"] for row in rows if (row.get("grpc_proxy_endpoint") or {}).get("port") == -1]
            await running.clear_proxy_endpoint_sentinels(conn, cleared)
    if balances:
        await running.add_entity_balances(conn, [(key, delta, stamp) for key, (delta, stamp) in balances.items()])
    if segment.token_balances:
        await running.add_token_balances(
            conn,
            [
                (account, token, delta, stamp)
                for (account, token), (delta, stamp) in segment.token_balances.items()
            ],
        )
    if segment.allowance_debits:
        await running.add_allowance_debits(
            conn,
            [
                (owner, spender, token, amount)
                for (owner, spender, token), amount in segment.allowance_debits.items()
            ],
        )
    if segment.step is not None:
        _add(counts, await segment.step(conn))
    return counts


def _entities_upserted_after(segments: list[Segment]) -> list[set[int]]:
    """For each segment, the entity ids that a later segment of the batch upserts."""
    after: list[set[int]] = []
    seen: set[int] = set()
    for segment in reversed(segments):
        after.append(set(seen))
        seen.update(row["id"] for row in segment.upserts.get("entity", ()))
    after.reverse()
    return after


async def write_batch(conn: asyncpg.Connection, batch: Batch) -> dict[str, int]:
    """Write the batch in one database transaction (the caller's, if one is open); rows written by table.

    Entity balance deltas are carried to the end of the batch and applied in one statement, except for an
    entity that a later segment upserts (created, updated, or a running value such as its nonce): its deltas
    are applied with their own segment, before that upsert (which may create the row, close its version into
    ``entity_history`` or set ``balance_timestamp``). No deferred step reads ``entity``, so the result is the
    same as applying every segment's deltas in turn, with one statement per batch instead of one per segment.

    A batch holding a NodeStakeUpdate ends with the pending rewards of the period it ended (``entity_stakes``),
    read from the balances and entity versions written before.
    """
    counts: dict[str, int] = {}
    upserted_after = _entities_upserted_after(batch.segments)
    carried: dict[int, list[int]] = {}
    async with conn.transaction():
        for segment, later in zip(batch.segments, upserted_after, strict=True):
            now: dict[int, list[int]] = {}
            for key, (delta, stamp) in segment.entity_balances.items():
                if key in later:
                    now[key] = [delta, stamp]
                elif (held := carried.get(key)) is not None:
                    held[0] += delta
                    held[1] = stamp
                else:
                    carried[key] = [delta, stamp]
            _add(counts, await write_segment(conn, segment, now))
        if carried:
            await running.add_entity_balances(
                conn, [(key, delta, stamp) for key, (delta, stamp) in carried.items()]
            )
        if any("node_stake" in segment.inserts for segment in batch.segments):
            from ledgermirror.importer.handlers.entity_stakes import update_entity_stakes

            _add(counts, await update_entity_stakes(conn))
    return counts
