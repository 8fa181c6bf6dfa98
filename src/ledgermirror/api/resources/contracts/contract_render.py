"""The contract object of ``GET /api/v1/contracts`` and ``GET /api/v1/contracts/{contractIdOrAddress}``
(``upstream-contracts.md`` §2, the reference's ``ContractViewModel``): its columns, its rendering and its OpenAPI
schema. One contract adds ``bytecode`` and ``runtime_bytecode`` (:func:`render_with_bytecode`)."""

from __future__ import annotations

from typing import Any

from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts.contract_encoding import add_hex_prefix, entity_address, hex_bytes
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns

NANOS_PER_SECOND = 1_000_000_000

COLUMNS = """e.auto_renew_account_id, e.auto_renew_period, e.created_timestamp, e.deleted, e.evm_address,
    e.expiration_timestamp, e.id, e.key, e.max_automatic_token_associations, e.memo, e.ethereum_nonce,
    e.obtainer_id, e.permanent_removal, e.proxy_account_id, e.timestamp_range,
    lower(e.timestamp_range) as timestamp_from, upper(e.timestamp_range) as timestamp_to, c.file_id"""
"""The entity columns a contract object reads (alias ``e``) and its ``contract`` row's file (alias ``c``)."""
BYTECODE_COLUMNS = "c.initcode, c.runtime_bytecode"


def expiration(row: Any) -> int | None:
    """``entity.expiration_timestamp``, else the creation plus the auto-renew period when both are known."""
    if row["expiration_timestamp"] is not None:
        return int(row["expiration_timestamp"])
    if row["created_timestamp"] is not None and row["auto_renew_period"] is not None:
        return int(row["created_timestamp"]) + int(row["auto_renew_period"]) * NANOS_PER_SECOND
    return None


def render(row: Any) -> dict[str, Any]:
    """One contract, keys in the reference's order."""
    return {
        "admin_key": render_key(row["key"]),
        "auto_renew_account": format_encoded(row["auto_renew_account_id"]),
        "auto_renew_period": row["auto_renew_period"],
        "contract_id": format_encoded(row["id"]),
        "created_timestamp": format_ns(row["created_timestamp"]),
        "deleted": row["deleted"],
        "evm_address": entity_address(row["evm_address"], row["id"]),
        "expiration_timestamp": format_ns(expiration(row)),
        "file_id": format_encoded(row["file_id"]),
        "max_automatic_token_associations": row["max_automatic_token_associations"],
        "memo": row["memo"],
        "nonce": row["ethereum_nonce"],
        "obtainer_id": format_encoded(row["obtainer_id"]),
        "permanent_removal": row["permanent_removal"],
        "proxy_account_id": format_encoded(row["proxy_account_id"]),
        "timestamp": {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])},
    }


def render_with_bytecode(row: Any, file_bytecode: bytes | None, from_file: bool) -> dict[str, Any]:
    """One contract with its code: ``bytecode`` is the creating file's content (hex text, ``0x`` added unless
    present) when ``from_file``, else the contract's ``initcode``; ``"0x"`` when neither has any."""
    bytecode = add_hex_prefix(file_bytecode) if from_file else hex_bytes(row["initcode"])
    return render(row) | {"bytecode": bytecode, "runtime_bytecode": hex_bytes(row["runtime_bytecode"])}


_HEX: dict[str, Any] = {"type": "string", "pattern": "^0x[0-9a-fA-F]*$"}
_NULLABLE_TIMESTAMP: dict[str, Any] = {"type": ["string", "null"], "example": "1586567700.453054000"}
_NULLABLE_INT: dict[str, Any] = {"type": ["integer", "null"], "format": "int64"}
CONTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "auto_renew_account": schemas.ENTITY_ID,
        "auto_renew_period": _NULLABLE_INT,
        "contract_id": schemas.ENTITY_ID,
        "created_timestamp": _NULLABLE_TIMESTAMP,
        "deleted": {"type": ["boolean", "null"]},
        "evm_address": {"type": ["string", "null"], "pattern": "^0x[0-9a-fA-F]{40}$"},
        "expiration_timestamp": _NULLABLE_TIMESTAMP,
        "file_id": schemas.ENTITY_ID,
        "max_automatic_token_associations": {"type": ["integer", "null"], "format": "int32"},
        "memo": {"type": ["string", "null"]},
        "nonce": _NULLABLE_INT,
        "obtainer_id": schemas.ENTITY_ID,
        "permanent_removal": {"type": ["boolean", "null"]},
        "proxy_account_id": schemas.ENTITY_ID,
        "timestamp": {
            "type": "object",
            "properties": {"from": _NULLABLE_TIMESTAMP, "to": _NULLABLE_TIMESTAMP},
            "required": ["from", "to"],
        },
    },
    "required": [
        "admin_key",
        "auto_renew_account",
        "auto_renew_period",
        "contract_id",
        "created_timestamp",
        "deleted",
        "evm_address",
        "expiration_timestamp",
        "file_id",
        "max_automatic_token_associations",
        "memo",
        "nonce",
        "obtainer_id",
        "permanent_removal",
        "proxy_account_id",
        "timestamp",
    ],
}
CONTRACT_WITH_BYTECODE_SCHEMA: dict[str, Any] = {
    **CONTRACT_SCHEMA,
    "properties": {**CONTRACT_SCHEMA["properties"], "bytecode": _HEX, "runtime_bytecode": _HEX},
    "required": [*CONTRACT_SCHEMA["required"], "bytecode", "runtime_bytecode"],
}
