"""A native block's transactions as the record items the handlers consume (``importer-transaction-handlers.md``
§6.1-6.2): one :class:`~ledgermirror.importer.record_file.RecordItem` per transaction with a result, carrying a
*synthetic* ``TransactionRecord`` rebuilt from the ``TransactionResult`` (status, timestamps, schedule ref,
fee, transfers, token transfers, assessed fees, automatic associations, staking rewards), the body's id and
memo, and ``transactionHash`` = SHA-384 of the signed transaction bytes. The ``Transaction`` is
``{signedTransactionBytes}``. From the outputs and state changes: the created account (``account_create``), the
schedule id and scheduled transaction id (create and sign), the PRNG output, the id created by a file, topic or
token create (the new key in the transaction's state changes), a mint's serials (the result's NFT transfers)
and new total supply (the token's state value), and a topic message's sequence number and running hash.

Pending airdrops and contract results with their trace data: :mod:`.block_transformers`. Not rebuilt yet:
aliases resolved through state, the reverse-order undo of state values across child transactions.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ledgermirror.importer import block_transformers as transformers
from ledgermirror.importer._proto import protos
from ledgermirror.importer.block_file import BlockFile, BlockTransaction
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import RecordFile, RecordItem
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.ledger.transaction_codes import result_number

BLOCK_FILE_VERSION = 7
_NEW_ID_KEYS = {
    "fileCreate": ("file_id_key", "fileID"),
    "consensusCreateTopic": ("topic_id_key", "topicID"),
    "tokenCreation": ("token_id_key", "tokenID"),
}
_SUPPLY_CHANGES = ("tokenMint", "tokenBurn", "tokenWipe")
_RUNNING_HASH_VERSION = 3


def record_file_of_block(block: BlockFile, root_hash: bytes) -> tuple[RecordFile, SidecarFile]:
    """The block as a version-7 ``RecordFile`` (hash = its root hash, previous hash = the footer's) and the
    sidecar records rebuilt from its trace data, as one sidecar file."""
    sidecar_records: list[Any] = []
    items = tuple(_record_item(block.name, transaction, sidecar_records) for transaction in block.transactions)
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


def _record_item(name: str, transaction: BlockTransaction, sidecar_records: list[Any]) -> RecordItem:
    modules = protos()
    try:
        signed = modules.transaction_contents.SignedTransaction.FromString(transaction.signed_transaction)
        body = modules.transaction.TransactionBody.FromString(signed.bodyBytes)
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad signed transaction: {error}") from error
    record = synthetic_record(transaction, body, sidecar_records)
    wrapped = modules.transaction.Transaction(signedTransactionBytes=transaction.signed_transaction)
    return RecordItem(
        consensus_timestamp=transaction.consensus_timestamp,
        record_bytes=record.SerializeToString(),
        transaction_bytes=wrapped.SerializeToString(),
        record=record,
    )


def synthetic_record(transaction: BlockTransaction, body: Any, sidecar_records: list[Any] | None = None) -> Any:
    """The ``TransactionRecord`` the record stream would have carried, as far as the block tells it; the
    sidecar records its trace data gives are appended to ``sidecar_records``."""
    result = transaction.result
    record = protos().transaction_record.TransactionRecord()
    record.receipt.status = result.status
    record.consensusTimestamp.CopyFrom(result.consensus_timestamp)
    if result.HasField("parent_consensus_timestamp"):
        record.parent_consensus_timestamp.CopyFrom(result.parent_consensus_timestamp)
    if result.HasField("schedule_ref"):
        record.scheduleRef.CopyFrom(result.schedule_ref)
    record.transactionFee = result.transaction_fee_charged
    if result.HasField("transfer_list"):
        record.transferList.CopyFrom(result.transfer_list)
    record.tokenTransferLists.extend(result.token_transfer_lists)
    record.assessed_custom_fees.extend(result.assessed_custom_fees)
    record.automatic_token_associations.extend(result.automatic_token_associations)
    record.paid_staking_rewards.extend(result.paid_staking_rewards)
    record.high_volume_pricing_multiplier = result.high_volume_pricing_multiplier
    record.memo = body.memo
    if body.HasField("transactionID"):
        record.transactionID.CopyFrom(body.transactionID)
    record.transactionHash = hashlib.sha384(transaction.signed_transaction).digest()
    _apply_outputs(record, transaction)
    body_name = body.WhichOneof("data") or ""
    updates = _map_updates(transaction)
    _apply_state_changes(record, body, body_name, updates)
    result = transformers.contract_result(record, transaction.outputs, body_name)
    if result is not None:
        if body_name == "contractCreateInstance":
            transformers.created_evm_address(result, updates)
        traces = transformers.trace_records(result, transaction.trace_data, updates, record.consensusTimestamp)
        if sidecar_records is not None:
            sidecar_records.extend(traces)
    return record


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
