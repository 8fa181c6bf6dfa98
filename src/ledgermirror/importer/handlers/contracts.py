"""Smart contracts, the entity side only (reference §3.6): ContractCreate, ContractUpdate, ContractDelete,
ContractCall and EthereumTransaction give ``transaction.entity_id`` (and ``initial_balance``); on success the
contract's ``entity`` row and its ``contract`` row (``file_id``, inline ``initcode``); the nonces of function
results (the Ethereum sender's ``signer_nonce`` from HAPI 0.47, ``contract_nonces``) into
``entity.ethereum_nonce``.

Contract results, logs, sidecar records (state changes, actions, ``runtime_bytecode``) and
``ethereum_transaction`` rows are the common step :func:`.contract_results.contract_results`.

Before HAPI 0.47 the sender's nonce is the RLP nonce + 1 (success, revert or too many child records only).

A created contract's ``contract`` row: ``file_id`` and ``initcode`` of the body, ``runtime_bytecode`` (and
``initcode`` when the body has none) from its own bytecode sidecar record only, and for a child what it lacks
from its ContractCreate or EthereumTransaction parent (``updateChildFromParent``). Contracts that contracts
created before HAPI 0.23 (no child records then) are written from the function result
(:func:`.contract_results.created_contracts`).

Contracts named by EVM address are looked up (``lookups``: create2 and lazily created addresses; a long-zero
address directly).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.importer.ethereum_data import EthereumDataError, decode_ethereum_data
from ledgermirror.importer.handlers import hooks, ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.contract_results import contract_results, function_result
from ledgermirror.importer.handlers.crypto import staking_fields
from ledgermirror.importer.handlers.entities import Operation, key_or_none, sanitize, upsert_entity
from ledgermirror.importer.handlers.item import Item
from ledgermirror.ledger.transaction_codes import result_number

CONTRACT = "CONTRACT"
SIGNER_NONCE_MINOR = 47
"""From HAPI 0.47 the record's ``signer_nonce`` is the Ethereum sender's nonce after the transaction."""
RLP_NONCE_RESULTS = frozenset(
    result_number(name) for name in ("SUCCESS", "CONTRACT_REVERT_EXECUTED", "MAX_CHILD_RECORDS_EXCEEDED")
)
"""Before HAPI 0.47 the sender's nonce becomes the RLP nonce + 1 only with these statuses."""


def _result_contract(batch: Batch, record: Any) -> int:
    for name in ("contractCreateResult", "contractCallResult"):
        if record.HasField(name) and getattr(record, name).HasField("contractID"):
            return batch.contract_of(getattr(record, name).contractID)
    return ids.EMPTY


def _self_key(contract: int) -> bytes:
    """A contract created without an admin key gets a Key naming itself."""
    parts = ids.parts(contract)
    key = protos().basic_types.Key(
        contractID=protos().basic_types.ContractID(
            shardNum=parts["shard"], realmNum=parts["realm"], contractNum=parts["num"]
        )
    )
    return bytes(key.SerializeToString())


def contract_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.contractCreateInstance
    record = item.record
    contract = ids.contract_id(record.receipt.contractID) if record.receipt.HasField("contractID") else 0
    context.set_transaction(entity_id=ids.nullable(contract), initial_balance=body.initialBalance)
    if not item.successful or not contract:
        return
    result = record.contractCreateResult
    evm_address = bytes(result.evm_address.value) if result.HasField("evm_address") else None
    batch.aliases.learn(evm_address, contract)
    upsert_entity(
        item,
        batch,
        contract,
        Operation.CREATE,
        CONTRACT,
        balance=0,
        balance_timestamp=item.consensus_timestamp,
        auto_renew_account_id=(
            batch.account_of(body.auto_renew_account_id) if body.HasField("auto_renew_account_id") else None
        ),
        auto_renew_period=body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
        evm_address=evm_address or None,
        key=key_or_none(body, "adminKey") or _self_key(contract),
        max_automatic_token_associations=body.max_automatic_token_associations,
        memo=sanitize(body.memo),
        proxy_account_id=ids.account_id(body.proxyAccountID) or None if body.HasField("proxyAccountID") else None,
        **staking_fields(item, body, update=False),
    )
    hooks.create_hooks(item, batch, contract, body.hook_creation_details)
    row: dict[str, Any] = {
        "id": contract,
        "file_id": ids.nullable(ids.file_id(body.fileID)) if body.HasField("fileID") else None,
        "initcode": bytes(body.initcode) if body.WhichOneof("initcodeSource") == "initcode" else None,
    }
    bytecode = _own_bytecode(item, contract)
    if bytecode is not None:
        row["runtime_bytecode"] = bytes(bytecode.runtime_bytecode)
        if row["initcode"] is None:
            row["initcode"] = bytes(bytecode.initcode)
    _child_from_parent(item, context, row)
    batch.upsert("contract", row)


def _own_bytecode(item: Item, contract: int) -> Any:
    """The first non-migration bytecode sidecar record of the created contract itself (the reference's
    ``createContract``: runtime bytecode and, without one in the body, initcode come from it only)."""
    for record in item.sidecar_records:
        is_bytecode = record.WhichOneof("sidecar_records") == "bytecode" and not record.migration
        if is_bytecode and ids.contract_id(record.bytecode.contract_id) == contract:
            return record.bytecode
    return None


def _child_from_parent(item: Item, context: ItemContext, row: dict[str, Any]) -> None:
    """The reference's ``updateChildFromParent``: a child ContractCreate takes what it lacks from its parent
    ContractCreate (its ``fileID`` or ``initcode``) or EthereumTransaction (its ``call_data`` file, else the
    decoded call data as initcode)."""
    parent_stamp = item.parent_consensus_timestamp
    parent = context.file.items.get(parent_stamp) if parent_stamp is not None else None
    if parent is None:
        return
    if parent.body_name == "contractCreateInstance":
        body = parent.body.contractCreateInstance
        source = body.WhichOneof("initcodeSource")
        if source == "fileID" and row["file_id"] is None:
            row["file_id"] = ids.nullable(ids.file_id(body.fileID))
        elif source == "initcode" and row["initcode"] is None:
            row["initcode"] = bytes(body.initcode)
    elif parent.body_name == "ethereumTransaction":
        body = parent.body.ethereumTransaction
        if body.HasField("call_data") and row["file_id"] is None:
            row["file_id"] = ids.nullable(ids.file_id(body.call_data))
            return
        ethereum = context.file.ethereum.get(parent.consensus_timestamp)
        if row["initcode"] is None and ethereum is not None:
            row["initcode"] = ethereum.get("call_data")


def contract_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.contractUpdateInstance
    contract = batch.contract_of(body.contractID)
    context.set_transaction(entity_id=ids.nullable(contract))
    memo = None
    if body.HasField("memoWrapper"):
        memo = sanitize(body.memoWrapper.value)
    elif body.memo:
        memo = sanitize(body.memo)
    upsert_entity(
        item,
        batch,
        contract,
        Operation.UPDATE,
        CONTRACT,
        expiration_timestamp=ids.nanos(body.expirationTime) if body.HasField("expirationTime") else None,
        auto_renew_account_id=(
            batch.account_of(body.auto_renew_account_id) if body.HasField("auto_renew_account_id") else None
        ),
        auto_renew_period=body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
        key=key_or_none(body, "adminKey"),
        max_automatic_token_associations=(
            body.max_automatic_token_associations.value
            if body.HasField("max_automatic_token_associations")
            else None
        ),
        memo=memo,
        proxy_account_id=ids.account_id(body.proxyAccountID) if body.HasField("proxyAccountID") else None,
        **staking_fields(item, body, update=True),
    )
    hooks.delete_hooks(item, batch, contract, body.hook_ids_to_delete)
    hooks.create_hooks(item, batch, contract, body.hook_creation_details)


def contract_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.contractDeleteInstance
    contract = batch.contract_of(body.contractID)
    context.set_transaction(entity_id=ids.nullable(contract))
    case = body.WhichOneof("obtainers")
    obtainer = 0
    if case == "transferAccountID":
        obtainer = ids.account_id(body.transferAccountID)  # the reference looks up only a contract obtainer
    elif case == "transferContractID":
        obtainer = batch.contract_of(body.transferContractID)
    upsert_entity(
        item,
        batch,
        contract,
        Operation.DELETE,
        CONTRACT,
        obtainer_id=obtainer or None,
        permanent_removal=body.permanent_removal,
    )


def contract_call(item: Item, batch: Batch, context: ItemContext) -> None:
    contract = _result_contract(batch, item.record) or batch.contract_of(item.body.contractCall.contractID)
    context.set_transaction(entity_id=ids.nullable(contract))


def ethereum_transaction(item: Item, batch: Batch, context: ItemContext) -> None:
    context.set_transaction(entity_id=ids.nullable(_result_contract(batch, item.record)))
    result = function_result(item.record)
    if result is None or not result.HasField("sender_id"):
        return
    sender = ids.account_id(result.sender_id)
    if not sender:
        return
    if item.hapi_at_least(SIGNER_NONCE_MINOR):
        if result.HasField("signer_nonce"):
            batch.upsert("entity", {**ids.parts(sender), "ethereum_nonce": result.signer_nonce.value})
        return
    if item.result not in RLP_NONCE_RESULTS:
        return
    try:  # before HAPI 0.47: the RLP nonce + 1
        nonce = decode_ethereum_data(bytes(item.body.ethereumTransaction.ethereum_data))["nonce"]
    except EthereumDataError:
        return
    batch.upsert("entity", {**ids.parts(sender), "ethereum_nonce": nonce + 1})


def contract_nonces(item: Item, batch: Batch, context: ItemContext) -> None:
    """Every item with a function result: each ``contract_nonces`` entry sets that contract's nonce (a
    running value: no history, existing contracts only)."""
    result = function_result(item.record)
    if result is None:
        return
    for entry in result.contract_nonces:
        contract = ids.contract_id(entry.contract_id)
        if contract:
            batch.upsert("entity", {**ids.parts(contract), "ethereum_nonce": entry.nonce})


COMMON: tuple[Handler, ...] = (contract_nonces, contract_results)

HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "contractCreateInstance": contract_create,
        "contractUpdateInstance": contract_update,
        "contractDeleteInstance": contract_delete,
        "contractCall": contract_call,
        "ethereumTransaction": ethereum_transaction,
    }
)
