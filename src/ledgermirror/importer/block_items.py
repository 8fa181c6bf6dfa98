"""A native block's transactions as the record items the handlers consume (``importer-transaction-handlers.md``
§6.1-6.2): one :class:`~ledgermirror.importer.record_file.RecordItem` per transaction with a result, carrying a
*synthetic* ``TransactionRecord`` rebuilt from the ``TransactionResult`` (status, timestamps, schedule ref,
fee, transfers, token transfers, assessed fees, automatic associations, staking rewards), the body's id and
memo, and ``transactionHash`` = SHA-384 of the signed transaction bytes. The result's fields are moved to the
record's numbers in their encoded form (``protobuf_wire.retagged``) and the record parsed once from them: the
same message as copying them field by field, in less time. The ``Transaction`` is ``{signedTransactionBytes}``,
and the body and signed transaction parsed here go with the item. From the outputs and state changes: the
created account (``account_create``), the schedule id and scheduled transaction id (create and sign), the
PRNG output, the id created by a file, topic or token create (the new key in the transaction's state changes),
a mint's serials (the result's NFT transfers) and new total supply (the token's state value), and a topic
message's sequence number and running hash.

Pending airdrops and contract results with their trace data: :mod:`.block_transformers`. Not rebuilt yet:
aliases resolved through state, the reverse-order undo of state values across child transactions.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from ledgermirror.importer import block_transformers as transformers
from ledgermirror.importer import protobuf_wire
from ledgermirror.importer._proto import protos
from ledgermirror.importer.block_file import BlockFile, BlockTransaction
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import RecordFile, RecordItem
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.ledger.protobuf import hapi_module
from ledgermirror.ledger.transaction_codes import result_number

BLOCK_FILE_VERSION = 7
_NEW_ID_KEYS = {
    "fileCreate": ("file_id_key", "fileID"),
    "consensusCreateTopic": ("topic_id_key", "topicID"),
    "tokenCreation": ("token_id_key", "tokenID"),
}
_SUPPLY_CHANGES = ("tokenMint", "tokenBurn", "tokenWipe")
_STATE_READERS = frozenset(
    ("tokenAirdrop", "nodeCreate", "consensusSubmitMessage", *_NEW_ID_KEYS, *_SUPPLY_CHANGES)
)
"""The transactions whose record :func:`_apply_state_changes` completes."""
_VARINT_TYPES = frozenset(
    (
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    )
)
_RUNNING_HASH_VERSION = 3


def record_file_of_block(block: BlockFile, root_hash: bytes) -> tuple[RecordFile, SidecarFile]:
    """The block as a version-7 ``RecordFile`` (hash = its root hash, previous hash = the footer's) and the
    sidecar records rebuilt from its trace data, as one sidecar file."""
    sidecar_records: list[Any] = []
    items = tuple(record_item_of(block.name, transaction, sidecar_records) for transaction in block.transactions)
    stamps = [item.consensus_timestamp for item in items]
    first, last = (stamps[0], stamps[-1]) if stamps else (block.timestamp, block.timestamp)
    record_file = RecordFile(
        name=block.name,
        version=BLOCK_FILE_VERSION,
        hapi_version=block.hapi_version,
        previous_hash=block.previous_root_hash,
        hash=root_hash,
        file_hash=b"",
        metadata_hash=None,
        block_number=block.number,
        items=items,
        sidecars=(),
        size=block.size,
        consensus_start=first,
        consensus_end=last,
    )
    return record_file, SidecarFile(block.name, b"", tuple(sidecar_records), 0)


def record_item_of(name: str, transaction: BlockTransaction, sidecar_records: list[Any]) -> RecordItem:
    """The transaction as the record item a record file would give: its synthetic record (and the sidecar
    records of its trace data, appended to ``sidecar_records``), the ``Transaction`` that wraps its signed bytes,
    and its body and signed transaction as parsed here, which the handlers' item takes as they are."""
    modules = protos()
    signed_bytes = transaction.signed_transaction
    try:
        signed = modules.transaction_contents.SignedTransaction.FromString(signed_bytes)
        body = modules.transaction.TransactionBody.FromString(signed.bodyBytes)
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad signed transaction: {error}") from error
    record = synthetic_record(transaction, body, sidecar_records, name)
    return RecordItem(
        transaction.consensus_timestamp,
        record.SerializeToString(),
        _wire().transaction_bytes(signed_bytes),  # the Transaction {signedTransactionBytes}, serialized
        record,
        # parsed once: an item without signed bytes is left to item_of, which refuses it as a record's would be
        (body, signed) if signed_bytes else None,
    )


def synthetic_record(
    transaction: BlockTransaction, body: Any, sidecar_records: list[Any] | None = None, name: str = ""
) -> Any:
    """The ``TransactionRecord`` the record stream would have carried, as far as the block tells it; the
    sidecar records its trace data gives are appended to ``sidecar_records``. ``name``: the block's, for a
    malformed result's error."""
    wire = _wire()
    parts, others = protobuf_wire.retagged(transaction.result_bytes, wire.record_keys, name)
    status = others.get(wire.status_key)  # the receipt holds the result's status (and is there when it is 0)
    receipt = wire.status_in_receipt + status if status is not None else b""
    parts.append(protobuf_wire.length_delimited(wire.receipt_key, receipt))
    parts.append(wire.hash_key_and_length)
    parts.append(hashlib.sha384(transaction.signed_transaction).digest())
    record = wire.record_class.FromString(b"".join(parts))
    record.memo = body.memo
    if body.HasField("transactionID"):
        record.transactionID.CopyFrom(body.transactionID)
    if transaction.outputs:
        _apply_outputs(record, transaction)
    body_name = body.WhichOneof("data") or ""
    updates = None  # read only when a step needs them
    if body_name in _STATE_READERS:
        updates = _map_updates(transaction)
        _apply_state_changes(record, body, body_name, updates)
    result = transformers.contract_result(record, transaction.outputs, body_name) if transaction.outputs else None
    if result is not None:
        if updates is None:
            updates = _map_updates(transaction)
        if body_name == "contractCreateInstance":
            transformers.created_evm_address(result, updates)
        traces = transformers.trace_records(result, transaction.trace_data, updates, record.consensusTimestamp)
        if sidecar_records is not None:
            sidecar_records.extend(traces)
    return record


@dataclass(frozen=True, slots=True)
class _RecordWire:
    """How a ``TransactionResult``'s bytes become a ``TransactionRecord``'s (:func:`synthetic_record`): the
    fields both hold are moved to the record's numbers without parsing them (``protobuf_wire.retagged``)."""

    record_class: Any
    record_keys: dict[int, bytes]
    """Each copied result field's key (number and wire type), and its key in the record."""
    status_key: int
    receipt_key: bytes
    status_in_receipt: bytes
    hash_key_and_length: bytes
    signed_key: bytes
    """``Transaction.signedTransactionBytes``'s key."""

    def transaction_bytes(self, signed_bytes: bytes) -> bytes:
        """``Transaction(signedTransactionBytes=signed_bytes).SerializeToString()``."""
        return protobuf_wire.length_delimited(self.signed_key, signed_bytes) if signed_bytes else b""


_RESULT_IN_RECORD = {
    "consensus_timestamp": "consensusTimestamp",
    "parent_consensus_timestamp": "parent_consensus_timestamp",
    "schedule_ref": "scheduleRef",
    "transaction_fee_charged": "transactionFee",
    "transfer_list": "transferList",
    "token_transfer_lists": "tokenTransferLists",
    "automatic_token_associations": "automatic_token_associations",
    "paid_staking_rewards": "paid_staking_rewards",
    "assessed_custom_fees": "assessed_custom_fees",
    "high_volume_pricing_multiplier": "high_volume_pricing_multiplier",
}
"""The ``TransactionResult`` fields the record carries under its own names (``congestion_pricing_multiplier``
has no place in a record)."""


@functools.cache
def _wire() -> _RecordWire:
    modules = protos()
    record_fields = modules.transaction_record.TransactionRecord.DESCRIPTOR.fields_by_name
    result_class = hapi_module("block.stream.output.transaction_result_pb2").TransactionResult
    result_fields = result_class.DESCRIPTOR.fields_by_name
    keys = {}
    for result_name, record_name in _RESULT_IN_RECORD.items():
        source, target = result_fields[result_name], record_fields[record_name]
        wire_type = _wire_type(source)
        # moved bytes mean the same only in a field of the same type
        if (wire_type, _type_name(source)) != (_wire_type(target), _type_name(target)):
            raise RuntimeError(f"TransactionResult.{result_name} and TransactionRecord.{record_name} differ")
        keys[source.number << 3 | wire_type] = protobuf_wire.key_of(target.number, wire_type)
    receipt = record_fields["receipt"]
    hash_field = record_fields["transactionHash"]
    signed = modules.transaction.Transaction.DESCRIPTOR.fields_by_name["signedTransactionBytes"]
    return _RecordWire(
        record_class=modules.transaction_record.TransactionRecord,
        record_keys=keys,
        status_key=result_fields["status"].number << 3 | protobuf_wire.VARINT,
        receipt_key=protobuf_wire.key_of(receipt.number, protobuf_wire.LENGTH_DELIMITED),
        status_in_receipt=protobuf_wire.key_of(
            receipt.message_type.fields_by_name["status"].number, protobuf_wire.VARINT
        ),
        hash_key_and_length=protobuf_wire.key_of(hash_field.number, protobuf_wire.LENGTH_DELIMITED)
        + protobuf_wire.encode_varint(hashlib.sha384().digest_size),
        signed_key=protobuf_wire.key_of(signed.number, protobuf_wire.LENGTH_DELIMITED),
    )


def _type_name(field: Any) -> str:
    return field.message_type.full_name if field.message_type is not None else str(field.type)


def _wire_type(field: Any) -> int:
    if field.message_type is not None:
        return protobuf_wire.LENGTH_DELIMITED
    if field.type in _VARINT_TYPES:
        return protobuf_wire.VARINT
    raise RuntimeError(f"no wire type known for {field.full_name}")


def _apply_outputs(record: Any, transaction: BlockTransaction) -> None:
    for output in transaction.outputs:
        which = output.WhichOneof("transaction")
        if which == "account_create" and output.account_create.HasField("created_account_id"):
            record.receipt.accountID.CopyFrom(output.account_create.created_account_id)
        elif which == "create_schedule":
            created = output.create_schedule
            if created.HasField("schedule_id"):
                record.receipt.scheduleID.CopyFrom(created.schedule_id)
            if created.HasField("scheduled_transaction_id"):
                record.receipt.scheduledTransactionID.CopyFrom(created.scheduled_transaction_id)
        elif which == "sign_schedule" and output.sign_schedule.HasField("scheduled_transaction_id"):
            record.receipt.scheduledTransactionID.CopyFrom(output.sign_schedule.scheduled_transaction_id)
        elif which == "util_prng":
            prng = output.util_prng
            if prng.WhichOneof("entropy") == "prng_number":
                record.prng_number = prng.prng_number
            elif prng.WhichOneof("entropy") == "prng_bytes":
                record.prng_bytes = prng.prng_bytes


def _map_updates(transaction: BlockTransaction) -> list[Any]:
    return [
        change.map_update
        for changes in transaction.state_changes
        for change in changes.state_changes
        if change.WhichOneof("change_operation") == "map_update"
    ]


def _apply_state_changes(record: Any, body: Any, body_name: str, updates: list[Any]) -> None:
    success = record.receipt.status == _success()
    if body_name == "tokenAirdrop" and success:
        transformers.pending_airdrops(body.tokenAirdrop, record, updates)
    if body_name == "nodeCreate" and success:
        nodes = [update.value.node_value for update in updates if update.value.HasField("node_value")]
        if nodes:
            record.receipt.node_id = max(node.node_id for node in nodes)
    if body_name in _NEW_ID_KEYS and success:
        key_name, receipt_field = _NEW_ID_KEYS[body_name]
        created = [update.key for update in updates if update.key.WhichOneof("key_choice") == key_name]
        if created:
            newest = max(created, key=lambda key: _id_number(getattr(key, key_name)))
            getattr(record.receipt, receipt_field).CopyFrom(getattr(newest, key_name))
    if body_name in _SUPPLY_CHANGES:
        tokens = [update.value.token_value for update in updates if update.value.HasField("token_value")]
        if tokens:
            record.receipt.newTotalSupply = tokens[-1].total_supply
        if body_name == "tokenMint":
            serials = sorted(
                transfer.serialNumber
                for token_list in record.tokenTransferLists
                for transfer in token_list.nftTransfers
                if not transfer.HasField("senderAccountID") or not _id_number(transfer.senderAccountID)
            )
            record.receipt.serialNumbers.extend(serials)
    if body_name == "consensusSubmitMessage":
        topics = [update.value.topic_value for update in updates if update.value.HasField("topic_value")]
        if topics:
            record.receipt.topicSequenceNumber = topics[-1].sequence_number
            record.receipt.topicRunningHash = topics[-1].running_hash
            record.receipt.topicRunningHashVersion = _RUNNING_HASH_VERSION


def _id_number(entity: Any) -> int:
    for field in ("fileNum", "topicNum", "tokenNum", "accountNum"):
        if hasattr(entity, field):
            return int(getattr(entity, field))
    return 0


def _success() -> int:
    return result_number("SUCCESS")
