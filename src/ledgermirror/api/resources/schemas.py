"""Our own OpenAPI schemas of the response bodies and common parameter shapes."""

from __future__ import annotations

from typing import Any

# Query parameter values, written without the ``op:`` prefix: the document adds the prefix each parameter
# accepts (openapi.build_document). Numbers are bounded so that every text a pattern allows is accepted: ids
# by at most 3/4/11 digits (shard < 1024, realm < 65536, num < 2^38), integers by 18 digits (int64).
ENTITY_ID_VALUE = r"((\d{1,3}\.)?\d{1,4}\.)?\d{1,11}"
EVM_ADDRESS_VALUE = r"(0x)?[0-9a-fA-F]{40}"
TIMESTAMP_VALUE = r"(\d{1,9}|[0-8]\d{9})(\.\d{1,9})?"
"""seconds[.nanos] up to 8999999999.999999999 (the int64 nanosecond maximum is 9223372036.854775807)."""
INT64_VALUE = r"\d{1,18}"
POSITIVE_INT64_VALUE = r"[1-9]\d{0,17}"

ENTITY_ID_QUERY: dict[str, Any] = {"type": "string", "pattern": f"^{ENTITY_ID_VALUE}$"}
ENTITY_ID_OR_EVM_QUERY: dict[str, Any] = {
    "type": "string",
    "pattern": f"^({ENTITY_ID_VALUE}|{EVM_ADDRESS_VALUE})$",
}
TIMESTAMP_QUERY: dict[str, Any] = {"type": "string", "pattern": f"^{TIMESTAMP_VALUE}$"}
INT64_QUERY: dict[str, Any] = {"type": "string", "pattern": f"^{INT64_VALUE}$"}
POSITIVE_INT64_QUERY: dict[str, Any] = {"type": "string", "pattern": f"^{POSITIVE_INT64_VALUE}$"}
PUBLIC_KEY_QUERY: dict[str, Any] = {
    "type": "string",
    "pattern": r"^(0x)?([0-9a-fA-F]{64}|[0-9a-fA-F]{66}|[0-9a-fA-F]{88})$",
}

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


def list_response(key: str, item: dict[str, Any], header: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{<key>: [item, ...], "links": {"next": ...}}``, the shape of every paginated list; ``header`` holds the
    schemas of keys before the list (``/balances``: ``timestamp``)."""
    extra = header or {}
    return {
        "type": "object",
        "properties": {**extra, key: {"type": "array", "items": item}, "links": LINKS},
        "required": [*extra, key, "links"],
    }
