"""Setup converters for the contract tables, with the reference loader's defaults and conversions:
``contractresults`` (each also gives its ``contract_transaction_hash`` row), ``contractlogs``,
``contractStateChanges``, ``contractactions``, ``contractStates`` and ``ethereumtransactions``; and the
``contract_transaction`` rows the reference harness derives from the results, logs and state changes of a setup
(:func:`contract_transaction_rows`), which the single-result routes need to find anything.

Conventions (``upstream-contracts.md`` §10.2): byte columns go through *valueToBuffer* (hex with optional
``0x``, odd length left-padded; other strings base64; numbers pass through, so PostgreSQL stores their decimal
text); ids are spec values (a bare number is a num in the configured shard and realm) unless noted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledgermirror.conformance.ids import Context, spec_id
from ledgermirror.conformance.rows import Row, pick
from ledgermirror.conformance.values import SetupValueError, js_str, json_text, value_to_buffer

DEFAULT_PAYER_ACCOUNT_ID = 102
DEFAULT_SENDER_ID = 101
_DEFAULT_HASH = bytes(range(32))

RESULT_DEFAULTS: dict[str, Any] = {
    "amount": 0,
    "bloom": None,
    "call_result": None,
    "consensus_timestamp": 1234510001,
    "contract_id": 0,
    "created_contract_ids": [],
    "error_message": "",
    "failed_initcode": None,
    "function_parameters": "0x010102020303",
    "function_result": None,
    "gas_consumed": None,
    "gas_limit": 1000,
    "gas_used": None,
    "payer_account_id": DEFAULT_PAYER_ACCOUNT_ID,
    "sender_id": DEFAULT_SENDER_ID,
    "transaction_hash": _DEFAULT_HASH,
    "transaction_index": 1,
    "transaction_nonce": 0,
    "transaction_result": 22,
}
"""``contractresults`` defaults; only these 19 columns are inserted (other spec keys are ignored)."""
_RESULT_BYTES = (
    "bloom",
    "call_result",
    "failed_initcode",
    "function_parameters",
    "function_result",
    "transaction_hash",
)

LOG_DEFAULTS: dict[str, Any] = {
    "bloom": "0x0123",
    "consensus_timestamp": 1234510001,
    "contract_id": 1,
    "data": "0x0123",
    "index": 0,
    "payer_account_id": DEFAULT_PAYER_ACCOUNT_ID,
    "root_contract_id": None,
    "topic0": "0x97c1fc0a6ed5551bc831571325e9bdb365d06803100dc20648640ba24ce69750",
    "topic1": "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925",
    "topic2": "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    "topic3": "0xe8d47b56e8cdfa95f871b19d4f50a857217c44a95502b0811a350fec1500dd67",
    "transaction_hash": _DEFAULT_HASH,
    "transaction_index": 0,
}
"""``contractlogs`` defaults; every key of the merged item is inserted (extra keys must be columns)."""
_LOG_BYTES = ("bloom", "data", "topic0", "topic1", "topic2", "topic3", "transaction_hash")

STATE_CHANGE_DEFAULTS: dict[str, Any] = {
    "consensus_timestamp": 1234510001,
    "contract_id": 1,
    "migration": False,
    "payer_account_id": 2,
    "slot": "0x1",
    "value_read": "0x0101",
    "value_written": "0xa1a1",
}
"""``contractStateChanges`` defaults; every key of the merged item is inserted."""

ACTION_DEFAULTS: dict[str, Any] = {
    "call_depth": 1,
    "call_operation_type": 1,
    "call_type": 1,
    "caller": 8001,
    "caller_type": "CONTRACT",
    "consensus_timestamp": 1234510001,
    "gas": 10000,
    "gas_used": 5000,
    "index": 1,
    "input": None,
    "payer_account_id": DEFAULT_PAYER_ACCOUNT_ID,
    "recipient_account": None,
    "recipient_address": None,
    "recipient_contract": None,
    "result_data": None,
    "result_data_type": 11,
    "value": 100,
}
"""``contractactions`` defaults; only these columns are inserted. ``recipient_account`` is not converted."""

STATE_DEFAULTS: dict[str, Any] = {
    "contract_id": None,
    # The reference writes 1664365660048674966 as a JS number: the double it becomes prints as below.
    "created_timestamp": 1664365660048675000,
    "modified_timestamp": 1664365660048675000,
    "slot": "0000000000000000000000000000000000000000000000000000000000000001",
    "value": 1,
}
"""``contractStates`` defaults; only these columns are inserted. A numeric ``value`` stays a number, so
PostgreSQL stores its decimal text (1 -> the byte ``0x31``)."""

ETHEREUM_DEFAULTS: dict[str, Any] = {
    "access_list": None,
    "authorization_list": None,
    "call_data_id": None,
    "call_data": None,
    "chain_id": None,
    "consensus_timestamp": "187654000123456",
    "data": "0x000000000",
    "gas_limit": 1000000,
    "gas_price": "0xAD78EBC5AC620000",
    "hash": "0x0000000000000000000000000000000000000000000000000000000000000123",
    "max_fee_per_gas": None,
    "max_gas_allowance": 10000,
    "max_priority_fee_per_gas": None,
    "nonce": 1,
    "payer_account_id": 5001,
    "recovery_id": 1,
    "signature_r": "0xd693b532a80fed6392b428604171fb32fdbf953728a3a7ecc7d4062b1652c042",
    "signature_s": "0x24e9c602ac800b983b035700a14b23f78a253ab762deab5dc27e3555a750b354",
    "signature_v": "0x1b",
    "to_address": "0x0000000000000000000000000000000000001389",
    "type": 2,
    "value": "0x0",
}
"""``ethereumtransactions`` defaults; keys starting with ``_`` are dropped, every other key is inserted."""
_ETHEREUM_BYTES = (
    "access_list",
    "call_data",
    "chain_id",
    "data",
    "gas_price",
    "hash",
    "max_fee_per_gas",
    "max_priority_fee_per_gas",
    "signature_r",
    "signature_s",
    "signature_v",
    "to_address",
    "value",
)


def _converted(values: dict[str, Any], byte_columns: Iterable[str]) -> dict[str, Any]:
    for column in byte_columns:
        if column in values:
            values[column] = value_to_buffer(values[column])
    return values


def result_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``contractresults``: a ``contract_result`` row and its ``contract_transaction_hash`` row (entity = the
    contract, hash = the result's transaction hash)."""
    result = _converted({**RESULT_DEFAULTS, **item}, _RESULT_BYTES)
    result["contract_id"] = spec_id(result["contract_id"], ctx)
    result["payer_account_id"] = spec_id(result["payer_account_id"], ctx)
    result["sender_id"] = spec_id(result["sender_id"], ctx)
    created = result["created_contract_ids"]
    if not isinstance(created, list):
        raise SetupValueError(f"created_contract_ids must be an array, not {created!r}")
    result["created_contract_ids"] = [spec_id(value, ctx) for value in created]
    hash_row = {
        "consensus_timestamp": result["consensus_timestamp"],
        "entity_id": result["contract_id"],
        "hash": result["transaction_hash"],
        "payer_account_id": result["payer_account_id"],
        "transaction_result": result["transaction_result"],
    }
    return [Row("contract_result", pick(result, RESULT_DEFAULTS)), Row("contract_transaction_hash", hash_row)]


def log_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``contractlogs``: ``payer_account_id`` is inserted as given (not parsed as an id)."""
    log = _converted({**LOG_DEFAULTS, **item}, _LOG_BYTES)
    log["contract_id"] = spec_id(log["contract_id"], ctx)
    log["root_contract_id"] = spec_id(log["root_contract_id"], ctx)
    return [Row("contract_log", log)]


def state_change_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    change = _converted({**STATE_CHANGE_DEFAULTS, **item}, ("slot", "value_read", "value_written"))
    change["contract_id"] = spec_id(change["contract_id"], ctx)
    change["payer_account_id"] = spec_id(change["payer_account_id"], ctx)
    return [Row("contract_state_change", change)]


def action_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    action = _converted({**ACTION_DEFAULTS, **item}, ("input", "recipient_address", "result_data"))
    for column in ("payer_account_id", "caller", "recipient_contract"):
        action[column] = spec_id(action[column], ctx)
    return [Row("contract_action", pick(action, ACTION_DEFAULTS))]


def state_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    state = _converted({**STATE_DEFAULTS, **item}, ("slot", "value"))
    state["contract_id"] = spec_id(state["contract_id"], ctx)
    return [Row("contract_state", pick(state, STATE_DEFAULTS))]


def ethereum_transaction_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``ethereumtransactions``: ``authorization_list`` is stored as its JSON text when given."""
    given = {key: value for key, value in item.items() if not key.startswith("_")}
    transaction = _converted({**ETHEREUM_DEFAULTS, **given}, _ETHEREUM_BYTES)
    if transaction["authorization_list"] is not None:
        transaction["authorization_list"] = json_text(transaction["authorization_list"])
    transaction["payer_account_id"] = spec_id(transaction["payer_account_id"], ctx)
    transaction["call_data_id"] = spec_id(transaction["call_data_id"], ctx)
    return [Row("ethereum_transaction", transaction)]


def _sources(setup: dict[str, Any]) -> list[dict[str, Any]]:
    """The merged results, then logs, then state changes (the reference's encounter order)."""
    merged: list[dict[str, Any]] = []
    for key, defaults in (
        ("contractresults", RESULT_DEFAULTS),
        ("contractlogs", LOG_DEFAULTS),
        ("contractStateChanges", STATE_CHANGE_DEFAULTS),
    ):
        items = setup.get(key) or []
        merged += [{**defaults, **item} for item in items if isinstance(item, dict)]
    return merged


def contract_transaction_rows(setup: dict[str, Any], ctx: Context) -> list[Row]:
    """The derived ``contract_transaction`` rows: per consensus timestamp (as given, so ``1`` and ``"1"`` are
    one key, as JS object keys are), the involved ids are each item's contract and payer, deduplicated in
    encounter order; one row per id, with the first payer and all ids."""
    groups: dict[str, tuple[list[int | None], list[int]]] = {}
    for item in _sources(setup):
        key = js_str(item["consensus_timestamp"])
        payer = spec_id(item["payer_account_id"], ctx)
        contract = spec_id(item["contract_id"], ctx)
        first_payer, ids = groups.setdefault(key, ([payer], []))
        if contract is not None and contract not in ids:
            ids.append(contract)
        if payer is not None and payer not in ids:
            ids.append(payer)
            if not first_payer[0]:
                first_payer[0] = payer
    rows: list[Row] = []
    for timestamp, (first_payer, ids) in groups.items():
        contract_ids = "{" + ",".join(str(value) for value in ids) + "}"
        for entity in ids:
            values = {
                "consensus_timestamp": timestamp,
                "entity_id": entity,
                "payer_account_id": first_payer[0],
                "contract_ids": contract_ids,
            }
            rows.append(Row("contract_transaction", values))
    return rows
