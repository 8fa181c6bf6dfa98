"""A token's custom fee schedule (the ``custom_fee`` JSONB arrays) in the reference's ``custom_fees`` object.

Fungible tokens show ``fixed_fees`` and ``fractional_fees``, non-fungible ones ``fixed_fees`` and
``royalty_fees``; a missing array is ``[]``, and ids stored encoded are rendered ``shard.realm.num``.
"""

from __future__ import annotations

import json
from typing import Any

from ledgermirror.api.resources import schemas
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.timestamps import format_ns

NON_FUNGIBLE = "NON_FUNGIBLE_UNIQUE"


def _fees(value: Any) -> list[dict[str, Any]]:
    """A JSONB array as asyncpg returns it (text), or ``[]``."""
    if value is None:
        return []
    loaded = json.loads(value) if isinstance(value, str) else value
    return [item for item in loaded if isinstance(item, dict)] if isinstance(loaded, list) else []


def _number(value: Any) -> Any:
    """Amounts may be stored as numbers or as digit strings; both answer as numbers."""
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def _id(value: Any) -> str | None:
    return None if value is None else format_encoded(int(value))


def _fixed(fee: dict[str, Any]) -> dict[str, Any]:
    return {
        "all_collectors_are_exempt": bool(fee.get("all_collectors_are_exempt", False)),
        "amount": _number(fee.get("amount")),
        "collector_account_id": _id(fee.get("collector_account_id")),
        "denominating_token_id": _id(fee.get("denominating_token_id")),
    }


def _fractional(fee: dict[str, Any], token_id: int) -> dict[str, Any]:
    return {
        "all_collectors_are_exempt": bool(fee.get("all_collectors_are_exempt", False)),
        "amount": {"numerator": _number(fee.get("numerator")), "denominator": _number(fee.get("denominator"))},
        "collector_account_id": _id(fee.get("collector_account_id")),
        "denominating_token_id": format_encoded(token_id),
        "maximum": _number(fee.get("maximum_amount")),
        "minimum": _number(fee.get("minimum_amount")),
        "net_of_transfers": bool(fee.get("net_of_transfers", False)),
    }


def _royalty(fee: dict[str, Any]) -> dict[str, Any]:
    fallback = fee.get("fallback_fee")
    rendered = None
    if isinstance(fallback, dict) and _number(fallback.get("amount")):
        rendered = {
            "amount": _number(fallback.get("amount")),
            "denominating_token_id": _id(fallback.get("denominating_token_id")),
        }
    return {
        "all_collectors_are_exempt": bool(fee.get("all_collectors_are_exempt", False)),
        "amount": {"denominator": _number(fee.get("denominator")), "numerator": _number(fee.get("numerator"))},
        "collector_account_id": _id(fee.get("collector_account_id")),
        "fallback_fee": rendered,
    }


def render_custom_fees(row: Any, token_id: int, token_type: str) -> dict[str, Any]:
    """``row`` holds ``fees_created``, ``fixed_fees``, ``fractional_fees`` and ``royalty_fees``."""
    body: dict[str, Any] = {
        "created_timestamp": format_ns(row["fees_created"]),
        "fixed_fees": [_fixed(fee) for fee in _fees(row["fixed_fees"])],
    }
    if token_type == NON_FUNGIBLE:
        body["royalty_fees"] = [_royalty(fee) for fee in _fees(row["royalty_fees"])]
    else:
        body["fractional_fees"] = [_fractional(fee, token_id) for fee in _fees(row["fractional_fees"])]
    return body


_FRACTION: dict[str, Any] = {
    "type": "object",
    "properties": {"numerator": {"type": "integer"}, "denominator": {"type": "integer"}},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "created_timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "fixed_fees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "all_collectors_are_exempt": {"type": "boolean"},
                    "amount": {"type": "integer", "format": "int64"},
                    "collector_account_id": schemas.ENTITY_ID,
                    "denominating_token_id": schemas.ENTITY_ID,
                },
            },
        },
        "fractional_fees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "all_collectors_are_exempt": {"type": "boolean"},
                    "amount": _FRACTION,
                    "collector_account_id": schemas.ENTITY_ID,
                    "denominating_token_id": schemas.ENTITY_ID,
                    "maximum": {"type": ["integer", "null"], "format": "int64"},
                    "minimum": {"type": "integer", "format": "int64"},
                    "net_of_transfers": {"type": "boolean"},
                },
            },
        },
        "royalty_fees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "all_collectors_are_exempt": {"type": "boolean"},
                    "amount": _FRACTION,
                    "collector_account_id": schemas.ENTITY_ID,
                    "fallback_fee": {
                        "type": ["object", "null"],
                        "properties": {
                            "amount": {"type": "integer", "format": "int64"},
                            "denominating_token_id": schemas.ENTITY_ID,
                        },
                    },
                },
            },
        },
    },
    "required": ["created_timestamp", "fixed_fees"],
}
