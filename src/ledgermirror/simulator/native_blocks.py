"""Native HIP-1056 blocks (``simulate --format native``): the same transactions as block items, to show that
the importer's block-to-record transformation (``importer/block_items.py``) writes the record stream's rows.

Per record file of the run, block ``<its block number>`` holds: ``block_header``, one ``round_header``, then per
transaction its ``signed_transaction``, a ``transaction_result`` (what a consensus node puts there: status,
timestamps, schedule ref, fee, transfers, token transfers, automatic associations, staking rewards, assessed
fees), its ``transaction_output`` (account create, schedule create and sign, PRNG) and the ``state_changes`` a
node would write at its consensus time for what the importer reads back (a created file, topic or token; a
token's total supply after a mint, burn or wipe; a topic's sequence number and running hash); then
``block_footer`` (previous root hash chained) and a ``block_proof`` whose TSS signature is a placeholder: no
TSS library exists in Python, so the importer accepts these blocks as chain-verified only. Contract results and
their trace data (EVM results, logs, state changes, actions, bytecode) are not written.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Sequence
from typing import Any

from ledgermirror.importer import block_hash
from ledgermirror.importer.block_source import block_bytes
from ledgermirror.simulator.block_files import WrappedBlock
from ledgermirror.simulator.emitter import StreamItem
from ledgermirror.simulator.hapi import set_timestamp

ZSTD_LEVEL = 3
_CREATED = {
    "fileCreate": ("fileID", "file_id_key", "file_value", "file_id"),
    "consensusCreateTopic": ("topicID", "topic_id_key", "topic_value", "topic_id"),
    "tokenCreation": ("tokenID", "token_id_key", "token_value", "token_id"),
}
_SUPPLY = {"tokenMint": "tokenMint", "tokenBurn": "tokenBurn", "tokenWipe": "tokenWipe"}
_STATE_ID = 1


def _modules() -> Any:
    class Modules:
        item = importlib.import_module("hiero_sdk_python.hapi.block.stream.block_item_pb2")
        record = importlib.import_module("hiero_sdk_python.hapi.services.transaction_record_pb2")
        transaction = importlib.import_module("hiero_sdk_python.hapi.services.transaction_pb2")
        contents = importlib.import_module("hiero_sdk_python.hapi.services.transaction_contents_pb2")

    return Modules


def native_block(
    items: Sequence[StreamItem],
    number: int,
    *,
    previous_root: bytes,
    hapi_version: tuple[int, int, int],
    seed: int,
) -> WrappedBlock:
    """The native block of one file's transactions; ``previous_root`` is the previous block's root hash."""
    import zstandard

    modules = _modules()
    block_item = modules.item.BlockItem
    header = block_item()
    header.block_header.number = number
    for version in (header.block_header.hapi_proto_version, header.block_header.software_version):
        version.major, version.minor, version.patch = hapi_version
    set_timestamp(header.block_header.block_timestamp, items[0].consensus_timestamp)
    out: list[Any] = [header, block_item(round_header={"round_number": number + 1})]
    for item in items:
        out.extend(_transaction_items(modules, item))
    footer = block_item()
    footer.block_footer.previous_block_root_hash = previous_root
    footer.block_footer.root_hash_of_all_block_hashes_tree = _derived(seed, "all-blocks", number)
    footer.block_footer.start_of_block_state_root_hash = _derived(seed, "state", number)
    proof = block_item()
    proof.block_proof.block = number
    proof.block_proof.signed_block_proof.block_signature = _derived(seed, "tss", number)
    out += [footer, proof]
    serialized = [(message.WhichOneof("item"), message.SerializeToString()) for message in out]
    kinds = [(block_item.DESCRIPTOR.fields_by_name[name].number, data) for name, data in serialized]
    root = block_hash.block_root_hash(
        header.block_header.block_timestamp.SerializeToString(),
        kinds,
        previous_root,
        footer.block_footer.root_hash_of_all_block_hashes_tree,
        footer.block_footer.start_of_block_state_root_hash,
    )
    data = block_bytes(item for _, item in kinds)
    stored = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True).compress(data)
    return WrappedBlock(number, stored, root)


def _derived(seed: int, what: str, number: int) -> bytes:
    return hashlib.sha384(f"ledgermirror-simulator:{what}:{seed}:{number}".encode()).digest()


def _transaction_items(modules: Any, item: StreamItem) -> list[Any]:
    block_item = modules.item.BlockItem
    record = modules.record.TransactionRecord.FromString(item.record_bytes)
    signed = modules.transaction.Transaction.FromString(item.transaction_bytes).signedTransactionBytes
    body_bytes = modules.contents.SignedTransaction.FromString(signed).bodyBytes
    body = modules.transaction.TransactionBody.FromString(body_bytes)
    found: list[Any] = [block_item(signed_transaction=signed)]
    holder = block_item()
    result = holder.transaction_result
    result.SetInParent()
    result.status = record.receipt.status
    result.consensus_timestamp.CopyFrom(record.consensusTimestamp)
    if record.HasField("parent_consensus_timestamp"):
        result.parent_consensus_timestamp.CopyFrom(record.parent_consensus_timestamp)
    if record.HasField("scheduleRef"):
        result.schedule_ref.CopyFrom(record.scheduleRef)
    result.transaction_fee_charged = record.transactionFee
    result.transfer_list.CopyFrom(record.transferList)
    result.token_transfer_lists.extend(record.tokenTransferLists)
    result.automatic_token_associations.extend(record.automatic_token_associations)
    result.paid_staking_rewards.extend(record.paid_staking_rewards)
    result.assessed_custom_fees.extend(record.assessed_custom_fees)
    found.append(holder)
    found.extend(_outputs(block_item, body, record))
    changes = _state_changes(block_item, body, record)
    if changes is not None:
        found.append(changes)
    return found


def _outputs(block_item: Any, body: Any, record: Any) -> list[Any]:
    name = body.WhichOneof("data")
    receipt = record.receipt
    output = block_item()
    transaction_output = output.transaction_output
    if name == "cryptoCreateAccount" and receipt.HasField("accountID"):
        transaction_output.account_create.created_account_id.CopyFrom(receipt.accountID)
    elif name == "scheduleCreate" and receipt.HasField("scheduleID"):
        transaction_output.create_schedule.schedule_id.CopyFrom(receipt.scheduleID)
        transaction_output.create_schedule.scheduled_transaction_id.CopyFrom(receipt.scheduledTransactionID)
    elif name == "scheduleSign" and receipt.HasField("scheduledTransactionID"):
        transaction_output.sign_schedule.scheduled_transaction_id.CopyFrom(receipt.scheduledTransactionID)
    elif name == "util_prng" and record.WhichOneof("entropy") == "prng_number":
        transaction_output.util_prng.prng_number = record.prng_number
    elif name == "util_prng" and record.WhichOneof("entropy") == "prng_bytes":
        transaction_output.util_prng.prng_bytes = record.prng_bytes
    else:
        return []
    return [output]


def _state_changes(block_item: Any, body: Any, record: Any) -> Any | None:
    name = body.WhichOneof("data")
    receipt = record.receipt
    item = block_item()
    changes = item.state_changes
    changes.consensus_timestamp.CopyFrom(record.consensusTimestamp)
    if name in _CREATED and receipt.HasField(_CREATED[name][0]):
        receipt_field, key_field, value_field, id_field = _CREATED[name]
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        getattr(update.key, key_field).CopyFrom(getattr(receipt, receipt_field))
        getattr(getattr(update.value, value_field), id_field).CopyFrom(getattr(receipt, receipt_field))
    elif name in _SUPPLY and receipt.newTotalSupply:
        token = getattr(body, name).token
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        update.key.token_id_key.CopyFrom(token)
        update.value.token_value.token_id.CopyFrom(token)
        update.value.token_value.total_supply = receipt.newTotalSupply
    elif name == "consensusSubmitMessage" and receipt.topicSequenceNumber:
        topic = body.consensusSubmitMessage.topicID
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        update.key.topic_id_key.CopyFrom(topic)
        update.value.topic_value.topic_id.CopyFrom(topic)
        update.value.topic_value.sequence_number = receipt.topicSequenceNumber
        update.value.topic_value.running_hash = receipt.topicRunningHash
    else:
        return None
    return item
