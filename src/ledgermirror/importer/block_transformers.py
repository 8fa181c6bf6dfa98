"""What a native block's transaction puts back into its synthetic record beyond the common fields
(``importer-transaction-handlers.md`` §6.2): pending airdrops, and contract and Ethereum results with their
logs and sidecar records (actions, bytecode, storage changes) rebuilt from the ``EvmTransactionResult`` output,
the ``EvmTraceData`` and the block's state changes.

* **Pending airdrops** (TokenAirdrop): a credit of the body that is not a transfer of the result became
  pending; its amount is the pending airdrop's value in the state changes (accumulated over repeated
  airdrops), else the body's amount.
* **Contract results**: ``contract_call`` / ``contract_create`` / ``ethereum_call`` outputs give the
  ``ContractFunctionResult`` (contract id, also the receipt's; result data, error, gas used, sender, nonces,
  signer nonce; gas, amount and parameters from the internal call context) on the record's call or create
  result; an Ethereum transaction with no gas used has no receipt contract id. A create's EVM address is the
  new account's alias in the state changes. ``createdContractIDs`` stays empty: ``EvmTransactionResult`` has
  no such field (the reference sets none either; docs/importer.md, "What a native block does not carry").
* **Trace data**: logs become ``logInfo`` (with their blooms, the result's bloom the OR of them); contract
  actions become an action sidecar record; slot usages become a storage-change sidecar record (reads by key or
  by index into the written keys; written values from the state changes); executed initcode with the runtime
  bytecode from the state changes becomes a bytecode sidecar record.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.ledger.evm import log_bloom

_CALL_OUTPUTS = {"contract_call": False, "contract_create": True}


def pending_airdrops(body: Any, record: Any, updates: list[Any]) -> None:
    """``record.new_pending_airdrops`` of a successful TokenAirdrop."""
    accumulated = {
        update.key.pending_airdrop_id_key.SerializeToString(): update.value.account_pending_airdrop_value
        for update in updates
        if update.key.WhichOneof("key_choice") == "pending_airdrop_id_key"
    }
    credited: set[tuple[bytes, bytes]] = set()
    moved: set[tuple[bytes, int, bytes]] = set()
    for token_list in record.tokenTransferLists:
        token = token_list.token.SerializeToString()
        credited.update((token, t.accountID.SerializeToString()) for t in token_list.transfers if t.amount > 0)
        moved.update(
            (token, nft.serialNumber, nft.receiverAccountID.SerializeToString()) for nft in token_list.nftTransfers
        )
    for token_list in body.token_transfers:
        token = token_list.token.SerializeToString()
        senders = [t.accountID for t in token_list.transfers if t.amount < 0]
        for transfer in token_list.transfers:
            if transfer.amount <= 0 or not senders or (token, transfer.accountID.SerializeToString()) in credited:
                continue
            pending = record.new_pending_airdrops.add()
            airdrop = pending.pending_airdrop_id
            airdrop.sender_id.CopyFrom(senders[0])
            airdrop.receiver_id.CopyFrom(transfer.accountID)
            airdrop.fungible_token_type.CopyFrom(token_list.token)
            stored = accumulated.get(airdrop.SerializeToString())
            amount = stored.pending_airdrop_value.amount if stored is not None else transfer.amount
            pending.pending_airdrop_value.amount = amount
        for nft in token_list.nftTransfers:
            if (token, nft.serialNumber, nft.receiverAccountID.SerializeToString()) in moved:
                continue
            airdrop = record.new_pending_airdrops.add().pending_airdrop_id
            airdrop.sender_id.CopyFrom(nft.senderAccountID)
            airdrop.receiver_id.CopyFrom(nft.receiverAccountID)
            airdrop.non_fungible_token.token_ID.CopyFrom(token_list.token)
            airdrop.non_fungible_token.serial_number = nft.serialNumber


def contract_result(record: Any, outputs: tuple[Any, ...], body_name: str) -> Any | None:
    """Set the record's call or create result from the contract output; returns it (None: no such output)."""
    for output in outputs:
        which = output.WhichOneof("transaction")
        if which in _CALL_OUTPUTS:
            evm = getattr(output, which).evm_transaction_result
            create = _CALL_OUTPUTS[which]
        elif which == "ethereum_call":
            ethereum = output.ethereum_call
            create = ethereum.WhichOneof("transaction_result") == "evm_create_transaction_result"
            evm = ethereum.evm_create_transaction_result if create else ethereum.evm_call_transaction_result
        else:
            continue
        result = record.contractCreateResult if create else record.contractCallResult
        _fill(result, evm)
        if evm.HasField("contract_id") and not (body_name == "ethereumTransaction" and evm.gas_used == 0):
            record.receipt.contractID.CopyFrom(evm.contract_id)
        return result
    return None


def _fill(result: Any, evm: Any) -> None:
    result.SetInParent()
    if evm.HasField("contract_id"):
        result.contractID.CopyFrom(evm.contract_id)
    result.contractCallResult = evm.result_data
    result.errorMessage = evm.error_message
    result.gasUsed = evm.gas_used
    if evm.HasField("sender_id"):
        result.sender_id.CopyFrom(evm.sender_id)
    result.contract_nonces.extend(evm.contract_nonces)
    if evm.HasField("signer_nonce"):
        result.signer_nonce.CopyFrom(evm.signer_nonce)
    if evm.HasField("internal_call_context"):
        context = evm.internal_call_context
        result.gas, result.amount, result.functionParameters = context.gas, context.value, context.call_data


def created_evm_address(result: Any, updates: list[Any]) -> None:
    """A create's ``evm_address``: the alias of the new contract's account in the state changes."""
    contract = result.contractID.contractNum
    for update in updates:
        value = update.value
        if value.HasField("account_value") and value.account_value.account_id.accountNum == contract:
            if value.account_value.alias:
                result.evm_address.value = value.account_value.alias
            return


def trace_records(result: Any, traces: tuple[Any, ...], updates: list[Any], stamp: Any) -> list[Any]:
    """Logs into ``result``; the sidecar records (actions, storage changes, bytecode) of the traces."""
    sidecar = protos().sidecar_file
    records: list[Any] = []
    bloom = 0
    written = _written_slots(updates)
    for trace in traces:
        if not trace.HasField("evm_trace_data"):
            continue
        data = trace.evm_trace_data
        for log in data.logs:
            info = result.logInfo.add(data=log.data)
            info.contractID.CopyFrom(log.contract_id)
            info.topic.extend(log.topics)
            info.bloom = log_bloom(_long_zero(log.contract_id), list(log.topics))
            bloom |= int.from_bytes(info.bloom, "big")
        if data.contract_actions:
            record = sidecar.TransactionSidecarRecord()
            record.actions.contract_actions.extend(data.contract_actions)
            records.append(record)
        if data.contract_slot_usages:
            record = sidecar.TransactionSidecarRecord()
            for usage in data.contract_slot_usages:
                _storage_changes(record.state_changes.contract_state_changes.add(), usage, written)
            records.append(record)
        if data.HasField("executed_initcode"):
            records.append(_bytecode(sidecar, data.executed_initcode, updates))
    if bloom:
        result.bloom = bloom.to_bytes(256, "big")
    for record in records:
        record.consensus_timestamp.CopyFrom(stamp)
    return records


def _long_zero(contract: Any) -> bytes:
    return bytes(
        contract.shardNum.to_bytes(4, "big")
        + contract.realmNum.to_bytes(8, "big")
        + (contract.contractNum.to_bytes(8, "big"))
    )


def _written_slots(updates: list[Any]) -> dict[tuple[int, bytes], bytes]:
    found = {}
    for update in updates:
        if update.key.WhichOneof("key_choice") == "slot_key_key":
            key = update.key.slot_key_key
            found[(key.contractID.contractNum, bytes(key.key))] = bytes(update.value.slot_value_value.value)
    return found


def _storage_changes(change: Any, usage: Any, written: dict[tuple[int, bytes], bytes]) -> None:
    change.contract_id.CopyFrom(usage.contract_id)
    keys = list(usage.written_slot_keys.keys)
    reads: dict[bytes, bytes] = {}
    for read in usage.slot_reads:
        key = read.key if read.WhichOneof("identifier") == "key" else keys[read.index]
        reads[bytes(key)] = bytes(read.read_value)
    for key, value in reads.items():
        if key not in keys:
            change.storage_changes.add(slot=key, value_read=value)
    for key in keys:
        storage = change.storage_changes.add(slot=key, value_read=reads.get(bytes(key), b""))
        new_value = written.get((usage.contract_id.contractNum, bytes(key)))
        if new_value is not None:
            storage.value_written.value = new_value


def _bytecode(sidecar: Any, executed: Any, updates: list[Any]) -> Any:
    record = sidecar.TransactionSidecarRecord()
    code = record.bytecode
    code.contract_id.CopyFrom(executed.contract_id)
    runtime = b""
    for update in updates:
        key = update.key
        if (
            key.WhichOneof("key_choice") == "contract_id_key"
            and update.value.HasField("bytecode_value")
            and key.contract_id_key.contractNum == executed.contract_id.contractNum
        ):
            runtime = bytes(update.value.bytecode_value.code)
    code.runtime_bytecode = runtime
    if executed.WhichOneof("initcode") == "explicit_initcode":
        code.initcode = executed.explicit_initcode
    else:
        bookends = executed.initcode_bookends
        code.initcode = bookends.deploy_bytecode + runtime + bookends.metadata_bytecode
    return record
