"""Contract results, logs, sidecar records and Ethereum transactions (reference §3.6, §5.2).

Runs for every item (a ``COMMON`` step, after the type's handler has set ``transaction.entity_id``):

* its sidecar records (matched to the item by consensus timestamp in ``rows_of_file``) first:
  state changes to ``contract_state_change`` as given (slots and values without leading zeros) and, for each
  written value or migration read, the current value in ``contract_state`` (the slot left-padded to 32 bytes,
  the value as written: the reference's ``ContractState``), actions to ``contract_action``, a migration
  bytecode record to ``contract.runtime_bytecode`` and its entity typed CONTRACT (``SidecarContractMigration``;
  the others are the ContractCreate handler's, and give a failed create its ``failed_initcode``); the state
  changes of the hook system contract 0.0.365 in a hook execution (a child ContractCall to 0.0.365) go to
  ``hook_storage_change`` instead, under the next (owner, hook) of the parent CryptoTransfer's hook execution
  queue (:mod:`.hooks`);
* for a ContractCall or ContractCreate whatever the status, and for any item whose record has a function result
  (EthereumTransaction, precompile children): one ``contract_result`` row, its ``contract_transaction_hash``
  row, and one ``contract_log`` row per ``logInfo`` (``index`` runs per record file: :attr:`Batch.log_index`);
  ``gas_consumed`` is ``gas_used`` from HAPI 0.69 (the reference's ``smartContractThrottlingVersion``), before
  it the top-level action's gas used plus the intrinsic gas of the payload (NULL without actions);
* for an EthereumTransaction: the ``ethereum_transaction`` row from the decoded RLP (written whatever the
  status; none when the payload does not decode), and a default ``contract_result`` for a failure without a
  function result (not for DUPLICATE_TRANSACTION or WRONG_NONCE; ``call_result`` empty), and a second
  ``transaction_hash`` row keyed by the 32-byte Ethereum hash;
* ``contract_transaction``: one row per contract or account involved (the result's contract, 0.0.0 when it did
  not resolve, the payer, the contracts of its logs and state changes), each listing them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg

from ledgermirror.db import running
from ledgermirror.importer.ethereum_data import EthereumDataError, decode_ethereum_data
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import ItemContext
from ledgermirror.importer.handlers.entities import Operation, upsert_entity
from ledgermirror.importer.handlers.evm import keccak256
from ledgermirror.importer.handlers.hooks import hook_storage_changes
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.handlers.synthetic_logs import contract_parent
from ledgermirror.ledger.transaction_codes import result_number

CONTRACT_CALL = "contractCall"
CONTRACT_CREATE = "contractCreateInstance"
ETHEREUM = "ethereumTransaction"
NO_DEFAULT_RESULT = frozenset(result_number(name) for name in ("DUPLICATE_TRANSACTION", "WRONG_NONCE"))
"""Failed Ethereum transactions that get no default ``contract_result``."""
HASH_LENGTH = 32
SLOT_LENGTH = 32
RESULT_NOT_SET = 0
THROTTLING_MINOR = 69
"""From HAPI 0.69 (``smartContractThrottlingVersion``) ``gas_consumed`` is the result's ``gas_used``."""
TX_BASE_COST = 21_000
TX_DATA_ZERO_COST = 4
TX_DATA_NON_ZERO_COST = 16
TX_CREATE_EXTRA = 32_000
CREATE_CALL_TYPE = 2
"""``ContractActionType.CREATE``."""
CHILD_RECORDS_MINOR = 23
"""From HAPI 0.23 a contract created by a contract has a child ContractCreate record of its own."""
HOOK_CONTRACT_NUM = 365
"""The hook system contract: its state changes in a hook execution are the hook's storage."""


def function_result(record: Any) -> Any:
    """The record's ``contractCallResult`` or ``contractCreateResult``, None when it has neither."""
    name = record.WhichOneof("body")  # the two are the members of the oneof ``body``
    return None if name is None else getattr(record, name)


_CONTRACT_BODIES = frozenset((CONTRACT_CALL, CONTRACT_CREATE, ETHEREUM))


@dataclass(slots=True)
class _Sidecars:
    """What the item's sidecar records gave beyond their rows."""

    initcode: bytes | None = None
    creation: bool = False
    top_gas_used: int | None = None
    """``gas_used`` of the top-level action (call depth 0), None without actions."""
    involved: dict[int, None] = field(default_factory=dict)
    """Contracts of the state changes (ordered set)."""


def contract_results(item: Item, batch: Batch, context: ItemContext) -> None:
    result = function_result(item.record)
    if result is None and not item.sidecar_records and item.body_name not in _CONTRACT_BODIES:
        return  # most items: no rows below (no sidecar records, no Ethereum row, no result)
    sidecars = sidecar_rows(item, batch, context)
    ethereum = _ethereum_row(item, batch) if item.body_name == ETHEREUM else None
    if ethereum is not None:
        context.file.ethereum[item.consensus_timestamp] = ethereum
    involved: dict[int, None] = {}
    if item.body_name in (CONTRACT_CALL, CONTRACT_CREATE) or result is not None:
        involved = _result_rows(item, batch, context, result, ethereum, sidecars=sidecars)
    elif item.body_name == ETHEREUM and ethereum is not None and item.result not in NO_DEFAULT_RESULT:
        _insert_result(
            batch,
            {
                **_common(item, ethereum),
                "contract_id": 0,
                "gas_used": 0,
                "gas_limit": ethereum["gas_limit"],
                "function_parameters": ethereum.get("call_data") or b"",
                "call_result": b"",
                "sender_id": item.payer_account_id,
                "created_contract_ids": [],
            },
        )
    involved.update(sidecars.involved)
    _contract_transactions(item, batch, involved)


def _insert_result(batch: Batch, row: dict[str, Any]) -> None:
    """A ``contract_result`` row and its ``contract_transaction_hash`` row."""
    batch.insert("contract_result", row)
    batch.insert(
        "contract_transaction_hash",
        {
            "consensus_timestamp": row["consensus_timestamp"],
            "entity_id": row["contract_id"],
            "hash": row["transaction_hash"],
            "payer_account_id": row["payer_account_id"],
            "transaction_result": row["transaction_result"],
        },
    )


def _contract_transactions(item: Item, batch: Batch, involved: dict[int, None]) -> None:
    """One ``contract_transaction`` row per involved id, each listing every id (0.0.0 too, as the reference's
    ``addContractTransaction``: a call whose contract did not resolve)."""
    entity_ids = list(involved)
    for entity_id in entity_ids:
        batch.insert(
            "contract_transaction",
            {
                "consensus_timestamp": item.consensus_timestamp,
                "contract_ids": entity_ids,
                "entity_id": entity_id,
                "payer_account_id": item.payer_account_id,
            },
        )


def gas_consumed(item: Item, gas_used: int, parameters: bytes, sidecars: _Sidecars) -> int | None:
    """The reference's ``gas_consumed``: ``gas_used`` from HAPI 0.69; before, the top-level action's gas used
    plus the intrinsic gas of the payload (the initcode of a create, else the function parameters)."""
    if item.hapi_at_least(THROTTLING_MINOR):
        return gas_used
    if sidecars.top_gas_used is None:
        return None
    payload = sidecars.initcode if sidecars.initcode is not None else parameters
    zeros = payload.count(0)
    cost = TX_BASE_COST + TX_DATA_ZERO_COST * zeros + TX_DATA_NON_ZERO_COST * (len(payload) - zeros)
    return sidecars.top_gas_used + cost + (TX_CREATE_EXTRA if sidecars.creation else 0)


def _common(item: Item, ethereum: dict[str, Any] | None) -> dict[str, Any]:
    if ethereum is not None:
        transaction_hash = ethereum["hash"]
    else:
        transaction_hash = bytes(item.record.transactionHash[:HASH_LENGTH])
    return {
        "consensus_timestamp": item.consensus_timestamp,
        "payer_account_id": item.payer_account_id,
        "transaction_hash": transaction_hash,
        "transaction_index": item.index,
        "transaction_nonce": item.transaction_id.nonce,
        "transaction_result": item.result,
    }


def _result_rows(
    item: Item,
    batch: Batch,
    context: ItemContext,
    result: Any,
    ethereum: dict[str, Any] | None,
    *,
    sidecars: _Sidecars,
) -> dict[int, None]:
    created_initcode = sidecars.initcode if sidecars.creation else None
    body_name = item.body_name
    failed_initcode = None
    if body_name == CONTRACT_CREATE:
        body = item.body.contractCreateInstance
        contract = context.transaction_value("entity_id") or 0
        amount, gas_limit, parameters = body.initialBalance, body.gas, bytes(body.constructorParameters)
        if not item.successful:
            inline = bytes(body.initcode) if body.WhichOneof("initcodeSource") == "initcode" else None
            failed_initcode = inline or created_initcode
    elif body_name == CONTRACT_CALL:
        body = item.body.contractCall
        contract = context.transaction_value("entity_id") or 0
        amount, gas_limit, parameters = body.amount, body.gas, bytes(body.functionParameters)
    else:
        contract = batch.contract_of(result.contractID) if result.HasField("contractID") else 0
        amount, gas_limit, parameters = result.amount, result.gas, bytes(result.functionParameters)
        if ethereum is not None and not gas_limit:  # before HAPI 0.25 the result has no gas: the RLP's
            amount = int.from_bytes(ethereum.get("value") or b"", "big")
            gas_limit, parameters = ethereum["gas_limit"], ethereum.get("call_data") or b""
    common = _common(item, ethereum)
    row: dict[str, Any] = {
        **common,
        "contract_id": contract,
        "amount": amount,
        "gas_limit": gas_limit,
        "function_parameters": parameters,
        "sender_id": item.payer_account_id,
        "failed_initcode": failed_initcode,
        "created_contract_ids": [],
    }
    if result is not None:
        if result.HasField("sender_id"):
            row["sender_id"] = ids.account_id(result.sender_id)
        row.update(
            bloom=bytes(result.bloom),
            call_result=bytes(result.contractCallResult),
            error_message=result.errorMessage,
            gas_used=result.gasUsed,
            gas_consumed=gas_consumed(item, result.gasUsed, parameters, sidecars),
            function_result=bytes(result.SerializeToString()),
            created_contract_ids=created_contracts(item, batch, result, contract),
        )
    involved: dict[int, None] = {contract: None, item.payer_account_id: None}
    if result is not None:
        context.file.contract_parents[item.consensus_timestamp] = contract_parent(item, common["transaction_hash"])
        involved.update(_log_rows(batch, context, result, contract, common))
    _insert_result(batch, row)
    return involved


def created_contracts(item: Item, batch: Batch, result: Any, contract: int) -> list[int]:
    """The result's ``createdContractIDs`` that resolve (``created_contract_ids``). Before HAPI 0.23 a contract
    created by a contract has no child record: on success each one but the transaction's own contract gets its
    ``entity`` row here (and, under a ContractCreate, the body's renewal period, admin key, proxy, memo and a
    ``contract`` row with its file), as the reference's ``processCreatedContractEntity``."""
    created = [entity_id for entity_id in map(batch.contract_of, result.createdContractIDs) if entity_id]
    if not item.successful or item.hapi_at_least(CHILD_RECORDS_MINOR):
        return created
    body = item.body.contractCreateInstance if item.body_name == CONTRACT_CREATE else None
    for entity_id in created:
        if entity_id == contract:
            continue
        fields: dict[str, Any] = {}
        if body is not None:
            fields = {
                "auto_renew_period": body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
                "key": bytes(body.adminKey.SerializeToString()) if body.HasField("adminKey") else None,
                "proxy_account_id": (
                    ids.account_id(body.proxyAccountID) if body.HasField("proxyAccountID") else None
                ),
                "memo": body.memo,
            }
        upsert_entity(
            item,
            batch,
            entity_id,
            Operation.CREATE,
            "CONTRACT",
            balance=0,
            balance_timestamp=item.consensus_timestamp,
            max_automatic_token_associations=0,
            **fields,
        )
        if body is not None:
            file_id = ids.nullable(ids.file_id(body.fileID)) if body.HasField("fileID") else None
            batch.upsert("contract", {"id": entity_id, "file_id": file_id})
    return created


def _log_rows(
    batch: Batch, context: ItemContext, result: Any, root_contract: int, common: dict[str, Any]
) -> dict[int, None]:
    """The result's logs; returns their contracts (ordered set)."""
    contracts: dict[int, None] = {}
    for log in result.logInfo:
        topics: list[bytes | None] = [bytes(topic).lstrip(b"\0") for topic in log.topic[:4]]
        topics += [None] * (4 - len(topics))
        batch.insert(
            "contract_log",
            {
                "consensus_timestamp": common["consensus_timestamp"],
                "index": context.file.log_index,
                "contract_id": ids.contract_id(log.contractID),
                "root_contract_id": root_contract,
                "bloom": bytes(log.bloom),
                "data": bytes(log.data),
                "topic0": topics[0],
                "topic1": topics[1],
                "topic2": topics[2],
                "topic3": topics[3],
                "payer_account_id": common["payer_account_id"],
                "transaction_hash": common["transaction_hash"],
                "transaction_index": common["transaction_index"],
                "synthetic": False,
            },
        )
        context.file.log_index += 1
        contracts[ids.contract_id(log.contractID)] = None
    return contracts


def _ethereum_row(item: Item, batch: Batch) -> dict[str, Any] | None:
    body = item.body.ethereumTransaction
    data = bytes(body.ethereum_data)
    try:
        decoded = decode_ethereum_data(data)
    except EthereumDataError:
        return None  # the reference logs a recoverable error and writes no row
    row = {
        **decoded,
        "consensus_timestamp": item.consensus_timestamp,
        "data": data,
        "call_data_id": ids.nullable(ids.file_id(body.call_data)) if body.HasField("call_data") else None,
        "max_gas_allowance": body.max_gas_allowance,
        "payer_account_id": item.payer_account_id,
        "hash": bytes(item.record.ethereum_hash) or keccak256(data),
    }
    batch.insert("ethereum_transaction", row)
    if row["hash"]:  # the reference's ``onEthereumTransaction``: the Ethereum hash also finds the transaction
        batch.insert(
            "transaction_hash",
            {
                "consensus_timestamp": item.consensus_timestamp,
                "hash": row["hash"],
                "hash_suffix": None,
                "payer_account_id": item.payer_account_id,
            },
        )
    return row


# Sidecars ----------------------------------------------------------------------------------------------------


def sidecar_rows(item: Item, batch: Batch, context: ItemContext) -> _Sidecars:
    """The item's sidecar records as rows; returns the initcode of a bytecode record, whether it creates a
    contract, the top-level action's gas used and the contracts whose state changed."""
    found = _Sidecars()
    action_index = 0
    hook_execution = is_hook_execution(item, batch)
    for record in item.sidecar_records:
        kind = record.WhichOneof("sidecar_records")
        if kind == "state_changes":
            _state_changes(item, batch, context, record, found, hook_execution=hook_execution)
        elif kind == "actions":
            for action in record.actions.contract_actions:
                if action.call_depth == 0:
                    found.top_gas_used = action.gas_used
                    found.creation = action.call_type == CREATE_CALL_TYPE
                batch.insert("contract_action", _action_row(item, action, action_index))
                action_index += 1
        elif kind == "bytecode":
            code = record.bytecode
            contract = ids.contract_id(code.contract_id)
            if not record.migration:
                found.initcode = _payload(item, code)
                found.creation = True
            elif contract:  # the reference's SidecarContractMigration
                batch.upsert("contract", {"id": contract, "runtime_bytecode": bytes(code.runtime_bytecode)})
                _migrated_contracts(batch).ids.append(contract)
    return found


class _MigratedContracts:
    """The contracts of a batch's migration bytecode records, typed CONTRACT (``entity`` and
    ``entity_history``) by one deferred step, deferred at the first such record (they are contracts the
    database already holds)."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    async def __call__(self, conn: asyncpg.Connection) -> dict[str, int]:
        return await running.set_contract_type(conn, sorted(set(self.ids)))


def _migrated_contracts(batch: Batch) -> _MigratedContracts:
    for segment in batch.segments:
        if isinstance(segment.step, _MigratedContracts):
            return segment.step
    step = _MigratedContracts()
    batch.defer(step, touches={"entity": None})  # its list grows after
    return step


def _payload(item: Item, code: Any) -> bytes | None:
    """The reference's ``ContractInitcodeService.get``: for a ContractCreate its body's initcode, else the
    sidecar's; nothing for other transactions."""
    if item.body_name != CONTRACT_CREATE:
        return None
    body = item.body.contractCreateInstance
    if body.WhichOneof("initcodeSource") == "initcode":
        return bytes(body.initcode)
    return bytes(code.initcode)


def is_hook_execution(item: Item, batch: Batch) -> bool:
    """A hook execution: a child ContractCall to the hook system contract 0.0.365."""
    return (
        item.body_name == CONTRACT_CALL
        and item.parent_consensus_timestamp is not None
        and ids.parts(batch.contract_of(item.body.contractCall.contractID))["num"] == HOOK_CONTRACT_NUM
    )


def _state_changes(
    item: Item, batch: Batch, context: ItemContext, record: Any, found: _Sidecars, *, hook_execution: bool
) -> None:
    timestamp = item.consensus_timestamp
    for change in record.state_changes.contract_state_changes:
        contract = ids.contract_id(change.contract_id)
        if hook_execution and ids.parts(contract)["num"] == HOOK_CONTRACT_NUM:
            hook_storage_changes(item, batch, context, change.storage_changes)
            continue
        for storage in change.storage_changes:
            found.involved[contract] = None  # per storage change, as the reference's addContractTransaction
            slot = bytes(storage.slot)
            read = bytes(storage.value_read)
            written = bytes(storage.value_written.value) if storage.HasField("value_written") else None
            batch.insert(
                "contract_state_change",
                {
                    "consensus_timestamp": timestamp,
                    "contract_id": contract,
                    "payer_account_id": item.payer_account_id,
                    "slot": slot,
                    "value_read": read,
                    "value_written": written,
                    "migration": record.migration,
                },
            )
            if written is not None or record.migration:
                batch.upsert(
                    "contract_state",
                    {
                        "contract_id": contract,
                        "slot": slot.rjust(SLOT_LENGTH, b"\0"),
                        "value": written if written is not None else read,
                        "created_timestamp": timestamp,
                        "modified_timestamp": timestamp,
                    },
                )


def _action_row(item: Item, action: Any, index: int) -> dict[str, Any]:
    caller_case = action.WhichOneof("caller")
    caller, caller_type = None, None
    if caller_case == "calling_account":
        caller, caller_type = ids.account_id(action.calling_account), "ACCOUNT"
    elif caller_case == "calling_contract":
        caller, caller_type = ids.contract_id(action.calling_contract), "CONTRACT"
    recipient = action.WhichOneof("recipient")
    result_case = action.WhichOneof("result_data")
    result_type = action.DESCRIPTOR.fields_by_name[result_case].number if result_case else RESULT_NOT_SET
    return {
        "consensus_timestamp": item.consensus_timestamp,
        "index": index,
        "caller": caller,
        "caller_type": caller_type,
        "recipient_account": (
            ids.account_id(action.recipient_account) if recipient == "recipient_account" else None
        ),
        "recipient_contract": (
            ids.contract_id(action.recipient_contract) if recipient == "recipient_contract" else None
        ),
        "recipient_address": bytes(action.targeted_address) if recipient == "targeted_address" else None,
        "call_depth": action.call_depth,
        "call_type": action.call_type,
        "call_operation_type": action.call_operation_type,
        "gas": action.gas,
        "gas_used": action.gas_used,
        "input": bytes(action.input),
        "value": action.value,
        "result_data": bytes(getattr(action, result_case)) if result_case else None,
        "result_data_type": result_type,
        "payer_account_id": item.payer_account_id,
    }
