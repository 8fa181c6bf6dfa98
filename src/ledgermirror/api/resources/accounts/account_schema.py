"""The OpenAPI schemas of the account object (``/api/v1/accounts`` and ``/api/v1/accounts/{id}``)."""

from __future__ import annotations

from typing import Any

from ledgermirror.api.resources import schemas

_TIMESTAMP: dict[str, Any] = {"type": ["string", "null"], "pattern": r"^\d{1,10}(\.\d{1,9})?$"}
_INT64: dict[str, Any] = {"type": ["integer", "null"], "format": "int64"}

BALANCE: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {
        "balance": _INT64,
        "timestamp": _TIMESTAMP,
        "tokens": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"token_id": schemas.ENTITY_ID, "balance": {"type": "integer", "format": "int64"}},
                "required": ["token_id", "balance"],
            },
        },
    },
    "required": ["balance", "timestamp", "tokens"],
}

ACCOUNT_PROPERTIES: dict[str, Any] = {
    "account": schemas.ENTITY_ID,
    "alias": {"type": ["string", "null"], "pattern": "^[A-Z2-7]+$"},
    "auto_renew_period": _INT64,
    "balance": BALANCE,
    "created_timestamp": _TIMESTAMP,
    "decline_reward": {"type": "boolean"},
    "delegation_address": {
        "type": "string",
        "description": "`0x` when unset; left out with LEDGERMIRROR_ENABLE_DELEGATION_ADDRESS=false",
        "pattern": "^0x([0-9a-f]{40})?$",
    },
    "deleted": {"type": ["boolean", "null"]},
    "ethereum_nonce": _INT64,
    "evm_address": {"type": ["string", "null"], "pattern": "^0x[0-9a-f]{40}$"},
    "expiry_timestamp": _TIMESTAMP,
    "key": schemas.KEY,
    "max_automatic_token_associations": {"type": ["integer", "null"], "format": "int32"},
    "memo": {"type": "string"},
    "pending_reward": {"type": "integer", "format": "int64"},
    "receiver_sig_required": {"type": ["boolean", "null"]},
    "staked_account_id": schemas.ENTITY_ID,
    "staked_node_id": _INT64,
    "stake_period_start": _TIMESTAMP,
}

ACCOUNT: dict[str, Any] = {
    "type": "object",
    "properties": ACCOUNT_PROPERTIES,
    "required": list(ACCOUNT_PROPERTIES),
}

ONE_ACCOUNT_RESPONSE: dict[str, Any] = {
    "type": "object",
    "properties": {
        **ACCOUNT["properties"],
        "transactions": {
            "type": "array",
            "description": "The account's transactions, newest first by default (the reference's Transaction)",
            "items": {"type": "object"},
        },
        "links": schemas.LINKS,
    },
    "required": [*ACCOUNT["required"], "transactions", "links"],
}
