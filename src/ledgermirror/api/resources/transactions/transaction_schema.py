"""OpenAPI schemas of a transaction (``/transactions``, ``/transactions/{id}``), in the reference's field order."""

from __future__ import annotations

from typing import Any

from ledgermirror.api.resources import schemas

_TIMESTAMP: dict[str, Any] = {"type": "string", "example": "1586567700.453054000"}
_NULLABLE_TIMESTAMP: dict[str, Any] = {"type": ["string", "null"], "example": "1586567700.453054000"}
_BASE64: dict[str, Any] = {"type": ["string", "null"], "format": "byte"}
_TRANSFER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account": schemas.ENTITY_ID,
        "amount": {"type": "integer", "format": "int64"},
        "is_approval": {"type": "boolean"},
    },
    "required": ["account", "amount", "is_approval"],
}
_TOKEN_TRANSFER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "token_id": schemas.ENTITY_ID,
        "account": schemas.ENTITY_ID,
        "amount": {"type": "integer", "format": "int64"},
        "is_approval": {"type": "boolean"},
    },
    "required": ["token_id", "account", "amount", "is_approval"],
}
_NFT_TRANSFER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "is_approval": {"type": "boolean"},
        "receiver_account_id": schemas.ENTITY_ID,
        "sender_account_id": schemas.ENTITY_ID,
        "serial_number": {"type": "integer", "format": "int64"},
        "token_id": schemas.ENTITY_ID,
    },
    "required": ["is_approval", "receiver_account_id", "sender_account_id", "serial_number", "token_id"],
}
_STAKING_REWARD: dict[str, Any] = {
    "type": "object",
    "properties": {"account": schemas.ENTITY_ID, "amount": {"type": "integer", "format": "int64"}},
    "required": ["account", "amount"],
}
_FEE_LIMIT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account_id": schemas.ENTITY_ID,
        "amount": {"type": "integer", "format": "int64"},
        "denominating_token_id": schemas.ENTITY_ID,
    },
}
ASSESSED_CUSTOM_FEE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "format": "int64"},
        "collector_account_id": schemas.ENTITY_ID,
        "effective_payer_account_ids": {"type": "array", "items": schemas.ENTITY_ID},
        "token_id": schemas.ENTITY_ID,
    },
    "required": ["amount", "collector_account_id", "effective_payer_account_ids", "token_id"],
}

TRANSACTION_PROPERTIES: dict[str, Any] = {
    "batch_key": schemas.KEY,
    "bytes": _BASE64,
    "charged_tx_fee": {"type": "integer", "format": "int64"},
    "consensus_timestamp": _TIMESTAMP,
    "entity_id": schemas.ENTITY_ID,
    "high_volume": {"type": "boolean"},
    "high_volume_pricing_multiplier": {"type": ["integer", "null"], "format": "int64"},
    "max_custom_fees": {"type": "array", "items": _FEE_LIMIT},
    "max_fee": {"type": ["string", "null"], "description": "tinybars, as a string"},
    "memo_base64": _BASE64,
    "name": {"type": "string", "example": "CRYPTOTRANSFER"},
    "nft_transfers": {"type": "array", "items": _NFT_TRANSFER},
    "node": schemas.ENTITY_ID,
    "nonce": {"type": "integer", "minimum": 0},
    "parent_consensus_timestamp": _NULLABLE_TIMESTAMP,
    "result": {"type": "string", "example": "SUCCESS"},
    "scheduled": {"type": "boolean"},
    "staking_reward_transfers": {"type": "array", "items": _STAKING_REWARD},
    "token_transfers": {"type": "array", "items": _TOKEN_TRANSFER},
    "transaction_hash": _BASE64,
    "transaction_id": {"type": "string", "example": "0.0.8-1565779444-711927004"},
    "transfers": {"type": "array", "items": _TRANSFER},
    "valid_duration_seconds": {"type": ["string", "null"]},
    "valid_start_timestamp": _TIMESTAMP,
}

TRANSACTION: dict[str, Any] = {
    "type": "object",
    "properties": TRANSACTION_PROPERTIES,
    "required": list(TRANSACTION_PROPERTIES),
}

TRANSACTION_DETAIL: dict[str, Any] = {
    "type": "object",
    "description": "A transaction; assessed_custom_fees only when the transaction charged custom fees",
    "properties": {
        "assessed_custom_fees": {"type": "array", "items": ASSESSED_CUSTOM_FEE},
        **TRANSACTION_PROPERTIES,
    },
    "required": list(TRANSACTION_PROPERTIES),
}

ONE_TRANSACTION_RESPONSE: dict[str, Any] = {
    "type": "object",
    "properties": {"transactions": {"type": "array", "items": TRANSACTION_DETAIL}},
    "required": ["transactions"],
}
