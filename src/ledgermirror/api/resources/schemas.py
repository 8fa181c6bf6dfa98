"""Our own OpenAPI schemas of the response bodies and common parameter shapes."""

from __future__ import annotations

from typing import Any

ENTITY_ID_PATTERN = r"^((gte?|lte?|eq|ne):)?(\d{1,4}\.\d{1,5}\.)?\d{1,12}$"

ENTITY_ID_QUERY: dict[str, Any] = {"type": "string", "pattern": ENTITY_ID_PATTERN}

ENTITY_ID: dict[str, Any] = {
    "type": ["string", "null"],
    "pattern": r"^\d{1,10}\.\d{1,10}\.\d{1,10}$",
    "example": "0.0.2",
}

KEY: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "A protobuf key: ED25519, ECDSA_SECP256K1, or ProtobufEncoded hex for anything else",
    "properties": {
        "_type": {"type": "string", "enum": ["ECDSA_SECP256K1", "ED25519", "ProtobufEncoded"]},
        "key": {"type": "string", "pattern": "^[A-Fa-f0-9]*$"},
    },
    "required": ["_type", "key"],
}

LINKS: dict[str, Any] = {
    "type": "object",
    "properties": {"next": {"type": ["string", "null"], "example": "/api/v1/tokens?limit=25&token.id=gt:0.0.1"}},
    "required": ["next"],
}

ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "_status": {
            "type": "object",
            "properties": {
                "messages": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"message": {"type": "string"}, "detail": {"type": "string"}},
                        "required": ["message"],
                    },
                }
            },
        }
    },
}

TOKEN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": KEY,
        "metadata": {"type": "string", "format": "byte", "description": "base64; empty when none"},
        "name": {"type": "string"},
        "symbol": {"type": "string"},
        "token_id": ENTITY_ID,
        "type": {"type": "string", "enum": ["FUNGIBLE_COMMON", "NON_FUNGIBLE_UNIQUE"]},
        "decimals": {"type": "integer", "format": "int64"},
    },
    "required": ["admin_key", "metadata", "name", "symbol", "token_id", "type", "decimals"],
}

TIMESTAMP_RANGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "from": {"type": "string", "example": "1586567700.453054000"},
        "to": {"type": ["string", "null"], "example": None},
    },
    "required": ["from", "to"],
}


def list_response(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """``{<key>: [item, ...], "links": {"next": ...}}``, the shape of every paginated list."""
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": item}, "links": LINKS},
        "required": [key, "links"],
    }
