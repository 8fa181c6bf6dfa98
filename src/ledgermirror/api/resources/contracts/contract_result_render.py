"""One contract result as the per-contract list shows it (the reference's ``ContractResultViewModel``, §4.1).

``render_result(row)`` reads the columns of :data:`RESULT_COLUMNS`; the detailed object of the global list and
of the single-result routes (:mod:`.contract_result_detail`) starts from it. Byte columns become ``0x`` hex
(``"0x"`` when NULL or empty); a NULL ``sender_id`` falls back to the sender alias the stored
``ContractFunctionResult`` carries, as the reference does.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.api.resources.contracts.contract_encoding import (
    bloom_hex,
    entity_address,
    hex_bytes,
    long_zero_of,
)
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.timestamps import format_ns

RESULT_COLUMNS = """cr.amount, cr.bloom, cr.call_result, cr.consensus_timestamp, cr.contract_id,
       cr.created_contract_ids, cr.error_message, cr.failed_initcode, cr.function_parameters,
       case when cr.sender_id is null then cr.function_result end as function_result, cr.gas_consumed,
       cr.gas_limit, cr.gas_used, cr.payer_account_id, cr.sender_id, cr.transaction_hash, cr.transaction_index,
       cr.transaction_nonce, cr.transaction_result, e.evm_address"""
"""What a result row carries; ``function_result`` only where ``from`` needs it (no ``sender_id``)."""
RESULT_FROM = """from contract_result cr
left join entity e on e.id = cr.contract_id"""


def sender_alias(function_result: bytes | None) -> str | None:
    """The sender alias of a stored ``ContractFunctionResult`` (``senderId.alias``), None when absent or when
    the bytes do not decode."""
    if not function_result:
        return None
    classes = protobuf.hapi()
    try:
        message = classes.ContractFunctionResult.FromString(bytes(function_result))
    except classes.DecodeError:
        return None  # the reference logs and ignores bytes that do not decode
    if not message.HasField("sender_id") or not message.sender_id.alias:
        return None
    return "0x" + bytes(message.sender_id.alias).hex()


def sender(row: Any) -> str | None:
    found = long_zero_of(row["sender_id"])
    return found if found is not None else sender_alias(row["function_result"])


def render_result(row: Any) -> dict[str, Any]:
    """The per-contract result object, keys in the reference's order."""
    contract_id = row["contract_id"]
    return {
        "address": entity_address(row["evm_address"], contract_id),
        "amount": row["amount"],
        "bloom": bloom_hex(row["bloom"]),
        "call_result": hex_bytes(row["call_result"]),
        "contract_id": format_encoded(contract_id),
        "created_contract_ids": [format_encoded(item) for item in row["created_contract_ids"] or []],
        "error_message": row["error_message"] or None,
        "from": sender(row),
        "function_parameters": hex_bytes(row["function_parameters"]),
        "gas_consumed": row["gas_consumed"],
        "gas_limit": row["gas_limit"],
        "gas_used": row["gas_used"],
        "timestamp": format_ns(row["consensus_timestamp"]),
        "to": long_zero_of(contract_id),
        "hash": hex_bytes(row["transaction_hash"]),
    }


RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": {"type": "string"},
        "amount": {"type": ["integer", "null"]},
        "bloom": {"type": "string"},
        "call_result": {"type": "string"},
        "contract_id": {"type": ["string", "null"]},
        "created_contract_ids": {"type": "array", "items": {"type": ["string", "null"]}},
        "error_message": {"type": ["string", "null"]},
        "from": {"type": ["string", "null"]},
        "function_parameters": {"type": "string"},
        "gas_consumed": {"type": ["integer", "null"]},
        "gas_limit": {"type": "integer"},
        "gas_used": {"type": ["integer", "null"]},
        "timestamp": {"type": "string"},
        "to": {"type": ["string", "null"]},
        "hash": {"type": "string"},
    },
}
