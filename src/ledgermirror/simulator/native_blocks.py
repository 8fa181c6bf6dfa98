"""Native HIP-1056 blocks (``simulate --format native``): the same transactions as block items, to show that
the importer's block-to-record transformation (``importer/block_items.py``) writes the record stream's rows.

Per record file of the run, block ``<its block number>`` holds: ``block_header``, one ``round_header``, then per
transaction its ``signed_transaction``, a ``transaction_result`` (what a consensus node puts there: status,
timestamps, schedule ref, fee, transfers, token transfers, automatic associations, staking rewards, assessed
fees), its ``transaction_output`` (account create, schedule create and sign, PRNG) and the ``state_changes`` a
node would write at its consensus time for what the importer reads back (a created file, topic, token or node; a
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

import zstandard

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
_SUCCESS = 22
"""``ResponseCodeEnum.SUCCESS``."""


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
    if record.HasField("transferList"):
        result.transfer_list.CopyFrom(record.transferList)
    result.token_transfer_lists.extend(record.tokenTransferLists)
    result.automatic_token_associations.extend(record.automatic_token_associations)
    result.paid_staking_rewards.extend(record.paid_staking_rewards)
    result.assessed_custom_fees.extend(record.assessed_custom_fees)
    found.append(holder)
    found.extend(_outputs(block_item, body, record))
    found.extend(contract_items(block_item, body, record, item.sidecars))
    changes = _state_changes(block_item, body, record)
    changes.state_changes.state_changes.extend(
        _contract_state(block_item, body, record, item.sidecars) + _pending_airdrop_state(block_item, record)
    )
    if changes.state_changes.state_changes:
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


def _state_changes(block_item: Any, body: Any, record: Any) -> Any:
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
    elif name == "nodeCreate" and receipt.status == _SUCCESS:
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        update.key.entity_number_key.value = receipt.node_id
        update.value.node_value.node_id = receipt.node_id
    elif name == "consensusSubmitMessage" and receipt.topicSequenceNumber:
        topic = body.consensusSubmitMessage.topicID
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        update.key.topic_id_key.CopyFrom(topic)
        update.value.topic_value.topic_id.CopyFrom(topic)
        update.value.topic_value.sequence_number = receipt.topicSequenceNumber
        update.value.topic_value.running_hash = receipt.topicRunningHash
    return item


_CONTRACT_BODIES = {"contractCall": "contract_call", "contractCreateInstance": "contract_create"}


def _result_of(record: Any) -> Any | None:
    which = record.WhichOneof("body")
    return getattr(record, which) if which in ("contractCallResult", "contractCreateResult") else None


def contract_items(block_item: Any, body: Any, record: Any, sidecars: Sequence[Any]) -> list[Any]:
    """The contract output (an ``EvmTransactionResult``) and its ``EvmTraceData`` (logs, actions, slot usages,
    executed initcode) of a contract call, create or Ethereum transaction."""
    name = body.WhichOneof("data")
    result = _result_of(record)
    if result is None or (name not in _CONTRACT_BODIES and name != "ethereumTransaction"):
        return []
    output = block_item()
    if name == "ethereumTransaction":
        create = record.WhichOneof("body") == "contractCreateResult"
        ethereum = output.transaction_output.ethereum_call
        evm = ethereum.evm_create_transaction_result if create else ethereum.evm_call_transaction_result
    else:
        evm = getattr(output.transaction_output, _CONTRACT_BODIES[name]).evm_transaction_result
    evm.SetInParent()
    if result.HasField("sender_id"):
        evm.sender_id.CopyFrom(result.sender_id)
    if result.HasField("contractID"):
        evm.contract_id.CopyFrom(result.contractID)
    evm.result_data = result.contractCallResult
    evm.error_message = result.errorMessage
    evm.gas_used = result.gasUsed
    evm.contract_nonces.extend(result.contract_nonces)
    if result.HasField("signer_nonce"):
        evm.signer_nonce.CopyFrom(result.signer_nonce)
    context = evm.internal_call_context
    context.gas, context.value, context.call_data = result.gas, result.amount, result.functionParameters
    trace = block_item()
    data = trace.trace_data.evm_trace_data
    for log in result.logInfo:
        data.logs.add(contract_id=log.contractID, data=log.data, topics=list(log.topic))
    for sidecar in sidecars:
        kind = sidecar.WhichOneof("sidecar_records")
        if kind == "actions":
            data.contract_actions.extend(sidecar.actions.contract_actions)
        elif kind == "state_changes":
            for change in sidecar.state_changes.contract_state_changes:
                _slot_usage(data.contract_slot_usages.add(), change)
        elif kind == "bytecode":
            data.executed_initcode.contract_id.CopyFrom(sidecar.bytecode.contract_id)
            data.executed_initcode.explicit_initcode = sidecar.bytecode.initcode
    return [output, trace]


def _slot_usage(usage: Any, change: Any) -> None:
    usage.contract_id.CopyFrom(change.contract_id)
    written = [storage for storage in change.storage_changes if storage.HasField("value_written")]
    usage.written_slot_keys.keys.extend(storage.slot for storage in written)
    for storage in change.storage_changes:
        if storage.HasField("value_written"):
            usage.slot_reads.add(index=written.index(storage), read_value=storage.value_read)
        else:
            usage.slot_reads.add(key=storage.slot, read_value=storage.value_read)


def _contract_state(block_item: Any, body: Any, record: Any, sidecars: Sequence[Any]) -> list[Any]:
    """Written slot values, a created contract's bytecode and its account (alias = its EVM address)."""
    changes = block_item().state_changes
    for sidecar in sidecars:
        kind = sidecar.WhichOneof("sidecar_records")
        if kind == "state_changes":
            for change in sidecar.state_changes.contract_state_changes:
                for storage in change.storage_changes:
                    if storage.HasField("value_written"):
                        update = changes.state_changes.add(state_id=_STATE_ID).map_update
                        update.key.slot_key_key.contractID.CopyFrom(change.contract_id)
                        update.key.slot_key_key.key = storage.slot
                        update.value.slot_value_value.value = storage.value_written.value
        elif kind == "bytecode":
            update = changes.state_changes.add(state_id=_STATE_ID).map_update
            update.key.contract_id_key.CopyFrom(sidecar.bytecode.contract_id)
            update.value.bytecode_value.code = sidecar.bytecode.runtime_bytecode
    result = _result_of(record)
    creates = body.WhichOneof("data") == "contractCreateInstance"
    if creates and result is not None and result.HasField("evm_address"):
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        update.key.account_id_key.accountNum = result.contractID.contractNum
        update.value.account_value.account_id.accountNum = result.contractID.contractNum
        update.value.account_value.alias = result.evm_address.value
    return list(changes.state_changes)


def _pending_airdrop_state(block_item: Any, record: Any) -> list[Any]:
    changes = block_item().state_changes
    for pending in record.new_pending_airdrops:
        update = changes.state_changes.add(state_id=_STATE_ID).map_update
        update.key.pending_airdrop_id_key.CopyFrom(pending.pending_airdrop_id)
        if pending.HasField("pending_airdrop_value"):
            value = update.value.account_pending_airdrop_value.pending_airdrop_value
            value.amount = pending.pending_airdrop_value.amount
        else:
            update.value.account_pending_airdrop_value.SetInParent()
    return list(changes.state_changes)
