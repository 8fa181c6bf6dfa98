"""The detailed contract result (the reference's ``ContractResultDetailsViewModel``, upstream-contracts.md §5.3).

The global list ``/contracts/results`` shows it without ``logs`` and ``state_changes``; the single-result routes
(``/contracts/{id}/results/{timestamp}``, ``/contracts/results/{transactionIdOrHash}``) with them. It is the
per-contract object (:func:`.contract_result_render.render_result`) plus the block, the result name and status,
and the Ethereum transaction of the same consensus timestamp when there is one, which overrides ``amount``,
``from``, ``to``, ``gas_limit``, ``function_parameters`` and ``error_message``.

``hbar`` (default true) shows the Ethereum transaction's ``value`` and gas prices in tinybars (weibars divided by
10^10), as the reference does since it stores weibars; ``hbar=false`` shows the raw weibars (and a result without
an Ethereum transaction multiplies its tinybar ``amount`` by 10^10). Integers beyond 64 bits (weibar amounts) are
written as exact JSON numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ledgermirror.api.resources.contracts.contract_blocks import Block
from ledgermirror.api.resources.contracts.contract_encoding import (
    entity_address,
    hex_bytes,
    log_data_hex,
    log_topics,
    long_zero_of,
    quantity_hex,
    to_uint256,
)
from ledgermirror.api.resources.contracts.contract_result_defaults import NONE as NO_DEFAULTS
from ledgermirror.api.resources.contracts.contract_result_defaults import Defaults
from ledgermirror.api.resources.contracts.contract_result_render import RESULT_SCHEMA, render_result
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN
from ledgermirror.ledger.transaction_codes import result_name, result_number

WEIBARS_PER_TINYBAR = 10_000_000_000
LEGACY_TYPE = 0
SUCCESS_RESULTS = frozenset(
    result_number(name)
    for name in ("SUCCESS", "FEE_SCHEDULE_FILE_PART_UPLOADED", "SUCCESS_BUT_MISSING_EXPECTED_OPERATION")
)
"""The results whose ``status`` is ``0x1`` (22, 104, 220)."""

ETHEREUM_COLUMNS = """et.access_list, et.authorization_list, et.chain_id, et.consensus_timestamp, et.gas_price,
       et.max_fee_per_gas, et.max_priority_fee_per_gas, et.nonce, et.payer_account_id, et.recovery_id,
       et.signature_r, et.signature_s, et.signature_v, et.to_address, et.type, et.value"""
"""The Ethereum transaction columns every detailed result reads (the single routes add ``call_data``,
``call_data_id`` and ``gas_limit``)."""


@dataclass(frozen=True, slots=True)
class Extras:
    """What a detailed result shows beyond its row: the block, the Ethereum transaction (None: none), the logs
    and state changes (None: not shown), the call data file's content, and the output choices."""

    block: Block
    ethereum: Any = None
    logs: Sequence[Any] | None = None
    state_changes: Sequence[Any] | None = None
    file_data: bytes | None = None
    hbar: bool = True
    delegation: bool = True
    defaults: Defaults = NO_DEFAULTS
    """What shows where the result has no value (``contract_result_defaults.py``)."""


def json_integer(value: int | None) -> int | orjson.Fragment | None:
    """An integer orjson can write, or the exact number as a raw JSON fragment when it exceeds 64 bits."""
    if value is None or INT64_MIN <= value <= INT64_MAX:
        return value
    return orjson.Fragment(str(value).encode())


def tinybars(weibars: bytes | None, *, signed: bool) -> int | None:
    """Weibar bytes (big-endian) divided by 10^10, truncated toward zero; None for NULL or empty."""
    if not weibars:
        return None
    value = int.from_bytes(bytes(weibars), "big", signed=signed)
    quotient = abs(value) // WEIBARS_PER_TINYBAR
    return -quotient if value < 0 else quotient


def gas_price_hex(value: bytes | None, *, hbar: bool) -> str:
    """A gas price as a quantity: tinybars (``hbar``) or the stored weibars; ``"0x"`` for NULL or empty."""
    if not hbar:
        return quantity_hex(value)
    converted = tinybars(value, signed=False)
    return "0x" if converted is None else hex(converted)


def render_log(row: Any) -> dict[str, Any]:
    """A log inside a detailed result (the first six keys of the log object)."""
    return {
        "address": entity_address(row["evm_address"], row["contract_id"]),
        "bloom": hex_bytes(row["bloom"]),
        "contract_id": format_encoded(row["contract_id"]),
        "data": log_data_hex(row["data"]),
        "index": row["index"],
        "topics": log_topics(row["topic0"], row["topic1"], row["topic2"], row["topic3"]),
    }


def render_state_change(row: Any) -> dict[str, Any]:
    return {
        "address": entity_address(row["evm_address"], row["contract_id"]),
        "contract_id": format_encoded(row["contract_id"]),
        "slot": to_uint256(row["slot"]),
        "value_read": to_uint256(row["value_read"]),
        "value_written": to_uint256(row["value_written"]),
    }


def _hex_text_bytes(text: Any) -> bytes | None:
    """A stored ``0x`` hex string as bytes (odd lengths left-padded); None when it is not hex."""
    if not isinstance(text, str):
        return None
    digits = text.removeprefix("0x")
    try:
        return bytes.fromhex(digits.rjust(len(digits) + len(digits) % 2, "0"))
    except ValueError:
        return None


def render_authorization(item: Any) -> Any:
    """One EIP-7702 authorization as stored (JSON) -> the reference's item: the address padded to 40 digits, the
    chain id as a quantity, the rest as stored."""
    if not isinstance(item, dict):
        return item
    address = item.get("address")
    chain = _hex_text_bytes(item.get("chain_id"))
    return {
        "address": "0x" + address.removeprefix("0x").lower().rjust(40, "0")
        if isinstance(address, str)
        else address,
        "chain_id": quantity_hex(chain) if chain is not None else item.get("chain_id"),
        "nonce": item.get("nonce"),
        "r": item.get("r"),
        "s": item.get("s"),
        "y_parity": item.get("y_parity"),
    }


def _authorizations(stored: Any) -> list[Any]:
    listed = orjson.loads(stored) if isinstance(stored, (str, bytes)) else stored
    return [render_authorization(item) for item in listed or []]


def _signature_v(ethereum: Any) -> int | None:
    signature_v = ethereum["signature_v"]
    if ethereum["type"] == LEGACY_TYPE and signature_v:
        return int.from_bytes(bytes(signature_v), "big")
    value: int | None = ethereum["recovery_id"]
    return value


def _apply_ethereum(body: dict[str, Any], row: Any, ethereum: Any, extras: Extras, succeeded: bool) -> None:
    body["access_list"] = hex_bytes(ethereum["access_list"])
    if extras.hbar:
        body["amount"] = json_integer(tinybars(ethereum["value"], signed=True))
    else:
        value = ethereum["value"]
        body["amount"] = json_integer(int.from_bytes(bytes(value), "big")) if value else None
    body["chain_id"] = quantity_hex(ethereum["chain_id"])
    if not succeeded and not row["error_message"]:
        body["error_message"] = body["result"]
    if row["sender_id"] is not None:
        body["from"] = long_zero_of(row["sender_id"])
    gas_limit = _get(ethereum, "gas_limit")
    if gas_limit is not None:
        body["gas_limit"] = gas_limit
    body["gas_price"] = gas_price_hex(ethereum["gas_price"], hbar=extras.hbar)
    body["max_fee_per_gas"] = gas_price_hex(ethereum["max_fee_per_gas"], hbar=extras.hbar)
    body["max_priority_fee_per_gas"] = gas_price_hex(ethereum["max_priority_fee_per_gas"], hbar=extras.hbar)
    body["nonce"] = ethereum["nonce"]
    body["r"] = hex_bytes(ethereum["signature_r"])
    body["s"] = hex_bytes(ethereum["signature_s"])
    if ethereum["to_address"]:
        body["to"] = hex_bytes(ethereum["to_address"])
    body["type"] = ethereum["type"]
    body["v"] = json_integer(_signature_v(ethereum))
    call_data = _get(ethereum, "call_data")
    if call_data:
        body["function_parameters"] = hex_bytes(call_data)
    elif not row["function_parameters"] and extras.file_data is not None:
        body["function_parameters"] = hex_bytes(extras.file_data)
    if extras.delegation:
        body["authorization_list"] = _authorizations(ethereum["authorization_list"])


def _get(row: Any, key: str) -> Any:
    """A column the statement may not select (the global list reads no ``call_data`` or ``gas_limit``)."""
    try:
        return row[key]
    except KeyError:
        return None


def _failed_initcode(row: Any, ethereum: Any, succeeded: bool) -> str | None:
    if row["failed_initcode"]:
        return hex_bytes(row["failed_initcode"])
    call_data = _get(ethereum, "call_data") if ethereum is not None else None
    if not succeeded and call_data:
        return hex_bytes(call_data)
    return None


def render_detail(row: Any, extras: Extras) -> dict[str, Any]:
    """The detailed result object, keys in the reference's order (a replaced value keeps its place)."""
    body: dict[str, Any] = render_result(row)
    block = extras.block
    body["block_hash"] = block.block_hash
    body["block_number"] = block.number
    if extras.logs is not None:
        body["logs"] = [render_log(log) for log in extras.logs]
    body["result"] = result_name(row["transaction_result"])
    body["transaction_index"] = row["transaction_index"]
    if extras.state_changes is not None:
        body["state_changes"] = [render_state_change(change) for change in extras.state_changes]
    succeeded = row["transaction_result"] in SUCCESS_RESULTS
    body["status"] = "0x1" if succeeded else "0x0"
    ethereum = extras.ethereum
    body["failed_initcode"] = _failed_initcode(row, ethereum, succeeded)
    body.update(
        access_list=None,
        block_gas_used=block.block_gas_used,
        chain_id=None,
        gas_price=None,
        max_fee_per_gas=None,
        max_priority_fee_per_gas=None,
        r=None,
        s=None,
        type=None,
        v=None,
        nonce=None,
    )
    if ethereum is not None:
        _apply_ethereum(body, row, ethereum, extras, succeeded)
    elif not extras.hbar and row["amount"] is not None:
        body["amount"] = json_integer(row["amount"] * WEIBARS_PER_TINYBAR)
    _apply_defaults(body, extras)
    return body


def _apply_defaults(body: dict[str, Any], extras: Extras) -> None:
    """The newer reference's values where the result shows null: ``chain_id``, ``gas_price`` (weibars when
    ``hbar=false``, as the Ethereum prices then are) and ``type``."""
    defaults = extras.defaults
    if body["chain_id"] is None and defaults.chain_id is not None:
        body["chain_id"] = hex(defaults.chain_id)
    if body["gas_price"] is None and defaults.gas_price is not None:
        price = defaults.gas_price if extras.hbar else defaults.gas_price * WEIBARS_PER_TINYBAR
        body["gas_price"] = hex(price)
    if body["type"] is None and defaults.type is not None:
        body["type"] = defaults.type


_NULLABLE_STRING = {"type": ["string", "null"]}
_LOG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": {"type": "string"},
        "bloom": {"type": "string"},
        "contract_id": _NULLABLE_STRING,
        "data": {"type": "string"},
        "index": {"type": "integer"},
        "topics": {"type": "array", "items": {"type": "string"}},
    },
}
_STATE_CHANGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": _NULLABLE_STRING,
        "contract_id": _NULLABLE_STRING,
        "slot": {"type": "string"},
        "value_read": {"type": "string"},
        "value_written": _NULLABLE_STRING,
    },
}
DETAIL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **RESULT_SCHEMA["properties"],
        "block_hash": {"type": "string"},
        "block_number": {"type": ["integer", "null"]},
        "result": {"type": "string"},
        "transaction_index": {"type": ["integer", "null"]},
        "status": {"type": "string"},
        "failed_initcode": _NULLABLE_STRING,
        "access_list": _NULLABLE_STRING,
        "block_gas_used": {"type": ["integer", "null"]},
        "chain_id": _NULLABLE_STRING,
        "gas_price": _NULLABLE_STRING,
        "max_fee_per_gas": _NULLABLE_STRING,
        "max_priority_fee_per_gas": _NULLABLE_STRING,
        "r": _NULLABLE_STRING,
        "s": _NULLABLE_STRING,
        "type": {"type": ["integer", "null"]},
        "v": {"type": ["integer", "null"]},
        "nonce": {"type": ["integer", "null"]},
        "authorization_list": {"type": "array", "items": {"type": "object"}},
    },
}
"""A result of the global list."""
ONE_DETAIL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **DETAIL_SCHEMA["properties"],
        "logs": {"type": "array", "items": _LOG_SCHEMA},
        "state_changes": {"type": "array", "items": _STATE_CHANGE_SCHEMA},
    },
}
"""One result of the single-result routes, with its logs and state changes."""
