"""The common "CRUD" entity rule (reference §3.0) and the entity column encodings (memo, key, public key)."""

from __future__ import annotations

import enum
from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.item import Item


class Operation(enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


def upsert_entity(
    item: Item, batch: Batch, entity_id: int, operation: Operation, entity_type: str, **fields: Any
) -> None:
    """On success and for a real id: the entity's new state ``[ts, ∞)`` with the fields given (None = not set).

    CREATE sets ``created_timestamp`` and ``deleted = false``, UPDATE ``deleted = false`` (an update undeletes),
    DELETE ``deleted = true``."""
    if not item.successful or not entity_id:
        return
    stamp = item.consensus_timestamp
    row: dict[str, Any] = {**ids.parts(entity_id), "timestamp_range": stamp, "type": entity_type}
    if operation is Operation.CREATE:
        row["created_timestamp"] = stamp
    row["deleted"] = operation is Operation.DELETE
    for name, value in fields.items():
        if value is not None:
            row[name] = value
    if "key" in row and "public_key" not in row:
        row["public_key"] = public_key(row["key"])
    batch.upsert("entity", row)


def sanitize(text: str) -> str:
    """``DomainUtils.sanitize``: each NUL becomes U+FFFD."""
    return text.replace("\x00", "\ufffd")


_PRIMITIVES = ("ed25519", "ECDSA_secp256k1", "ECDSA_384", "RSA_3072")


def public_key(key_bytes: bytes) -> str:
    """``entity.public_key`` of a serialized Key: the lowercase hex of its single primitive key (directly, or in
    a key list or threshold key of exactly one key, at most two levels deep); '' otherwise (the sentinel the
    writer turns into NULL)."""
    modules = protos()
    try:
        key = modules.basic_types.Key.FromString(key_bytes)
    except modules.decode_error:
        return ""
    return _primitive(key, 0)


def _primitive(key: Any, depth: int) -> str:
    case = key.WhichOneof("key")
    if case in _PRIMITIVES:
        return bytes(getattr(key, case)).hex()
    if depth >= 2:
        return ""
    if case == "keyList":
        keys = key.keyList.keys
    elif case == "thresholdKey":
        keys = key.thresholdKey.keys.keys
    else:
        return ""
    return _primitive(keys[0], depth + 1) if len(keys) == 1 else ""


def key_or_none(message: Any, field: str) -> bytes | None:
    """The serialized sub-message ``field`` when it is set."""
    return bytes(getattr(message, field).SerializeToString()) if message.HasField(field) else None
