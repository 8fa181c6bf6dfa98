"""One topic message as the reference renders it (the three message routes share it), and its schema."""

from __future__ import annotations

import base64
from typing import Any

from ledgermirror.api.resources import schemas
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.protobuf import hapi
from ledgermirror.ledger.timestamps import format_ns

COLUMNS = """consensus_timestamp, message, running_hash, sequence_number, running_hash_version, chunk_num,
       chunk_total, payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id"""
SELECT = f"select {COLUMNS}\nfrom topic_message"

DEFAULT_RUNNING_HASH_VERSION = 3
"""What the reference shows for a NULL ``running_hash_version``."""

_TRANSACTION_ID: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account_id": schemas.ENTITY_ID,
        "nonce": {"type": ["integer", "null"], "minimum": 0},
        "scheduled": {"type": ["boolean", "null"]},
        "transaction_valid_start": {"type": ["string", "null"], "example": "1234567890.000000000"},
    },
    "required": ["account_id", "nonce", "scheduled", "transaction_valid_start"],
}

MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "chunk_info": {
            "type": ["object", "null"],
            "properties": {
                "initial_transaction_id": _TRANSACTION_ID,
                "number": {"type": "integer", "minimum": 1},
                "total": {"type": ["integer", "null"], "minimum": 1},
            },
            "required": ["initial_transaction_id", "number", "total"],
        },
        "consensus_timestamp": {"type": "string", "example": "1234567890.000000001"},
        "message": {"type": "string", "description": "base64, or the UTF-8 text with encoding=utf-8"},
        "payer_account_id": schemas.ENTITY_ID,
        "running_hash": {"type": "string", "format": "byte"},
        "running_hash_version": {"type": "integer", "example": 3},
        "sequence_number": {"type": "integer", "format": "int64", "minimum": 1},
        "topic_id": schemas.ENTITY_ID,
    },
    "required": [
        "chunk_info",
        "consensus_timestamp",
        "message",
        "payer_account_id",
        "running_hash",
        "running_hash_version",
        "sequence_number",
        "topic_id",
    ],
}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _initial_transaction_id(row: Any) -> dict[str, Any]:
    """From the stored protobuf ``TransactionID`` when there is one (and it decodes), else from the row."""
    raw: bytes | None = row["initial_transaction_id"]
    if raw is not None:
        classes = hapi()
        try:
            parsed = classes.TransactionID.FromString(raw)
        except classes.DecodeError:
            parsed = None
        if parsed is not None:
            account = parsed.accountID
            start = parsed.transactionValidStart
            return {
                "account_id": f"{account.shardNum}.{account.realmNum}.{account.accountNum}",
                "nonce": parsed.nonce,
                "scheduled": parsed.scheduled,
                "transaction_valid_start": f"{start.seconds}.{start.nanos:09d}",
            }
    return {
        "account_id": format_encoded(row["payer_account_id"]),
        "nonce": None,
        "scheduled": None,
        "transaction_valid_start": format_ns(row["valid_start_timestamp"]),
    }


def render(row: Any, *, utf8: bool = False) -> dict[str, Any]:
    """Key order as the reference's; ``utf8`` shows the message as text (invalid bytes become U+FFFD)."""
    message: bytes = row["message"]
    version = row["running_hash_version"]
    chunk = None
    if row["chunk_num"] is not None:
        chunk = {
            "initial_transaction_id": _initial_transaction_id(row),
            "number": row["chunk_num"],
            "total": row["chunk_total"],
        }
    return {
        "chunk_info": chunk,
        "consensus_timestamp": format_ns(row["consensus_timestamp"]),
        "message": message.decode("utf-8", errors="replace") if utf8 else _b64(message),
        "payer_account_id": format_encoded(row["payer_account_id"]),
        "running_hash": _b64(row["running_hash"]),
        "running_hash_version": DEFAULT_RUNNING_HASH_VERSION if version is None else version,
        "sequence_number": row["sequence_number"],
        "topic_id": format_encoded(row["topic_id"]),
    }
