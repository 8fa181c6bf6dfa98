"""Setup converters for topics and schedules: ``topicmessages``, ``topicmessagelookups``, ``schedules`` and
``transactionsignatures``, with the reference loader's defaults; and the ``topic_message_lookup`` rows the
reference harness generates when ``query.topicMessageLookup`` is on and the spec gave none.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from hiero_sdk_python.hapi.services import basic_types_pb2

from ledgermirror.conformance.ids import Context, encoded_id, spec_id
from ledgermirror.conformance.rows import Row
from ledgermirror.conformance.values import SetupValueError, buffer_from, value_to_buffer

_MESSAGE_DEFAULTS: dict[str, Any] = {
    "chunk_num": None,
    "chunk_total": None,
    "consensus_timestamp": None,
    "initial_transaction_id": None,
    "message": "message",
    "payer_account_id": 3,
    "running_hash": "running_hash",
    "running_hash_version": 2,
    "sequence_number": None,
    "topic_id": None,
    "valid_start_timestamp": None,
}

_SCHEDULE_DEFAULTS: dict[str, Any] = {
    "consensus_timestamp": None,
    "creator_account_id": "0.0.1024",
    "executed_timestamp": None,
    "expiration_time": None,
    "payer_account_id": "0.0.1024",
    "schedule_id": None,
    "transaction_body": bytes([1, 1, 2, 2, 3, 3]),
    "wait_for_expiry": False,
}


def _raw_bytes(value: Any) -> Any:
    """node-postgres' bytea input: a string is its UTF-8 bytes (``\\x...`` text is hex, as PostgreSQL reads
    it), an array its byte values."""
    if value is None or (isinstance(value, str) and value.startswith("\\x")):
        return value
    return buffer_from(value)


def _initial_transaction_id(value: Any, ctx: Context) -> bytes | None:
    """The protobuf ``TransactionID``, its account rebuilt in the configured shard and realm."""
    raw = value_to_buffer(value)
    if raw is None:
        return None
    if not isinstance(raw, (bytes, bytearray)):
        raise SetupValueError(f"initial_transaction_id must be bytes, not {raw!r}")
    parsed = basic_types_pb2.TransactionID()
    parsed.ParseFromString(bytes(raw))
    num = parsed.accountID.accountNum if parsed.HasField("accountID") else 0
    parsed.accountID.CopyFrom(basic_types_pb2.AccountID(shardNum=ctx.shard, realmNum=ctx.realm, accountNum=num))
    return parsed.SerializeToString()


def topic_message_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``message`` and ``running_hash`` go to bytea as node-postgres sends them: a string as its text, an
    array as an array literal (``{"1","2"}``, whose characters become the bytes)."""
    message = {**_MESSAGE_DEFAULTS, **item}
    values = {
        "chunk_num": message["chunk_num"],
        "chunk_total": message["chunk_total"],
        "consensus_timestamp": message["consensus_timestamp"],
        "initial_transaction_id": _initial_transaction_id(message["initial_transaction_id"], ctx),
        "message": message["message"],
        "payer_account_id": spec_id(message["payer_account_id"], ctx),
        "running_hash": message["running_hash"],
        "running_hash_version": message["running_hash_version"],
        "sequence_number": message["sequence_number"],
        "topic_id": spec_id(message["topic_id"], ctx),
        "valid_start_timestamp": message["valid_start_timestamp"],
    }
    return [Row("topic_message", values)]


def topic_message_lookup_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    values = {
        "partition": item.get("partition"),
        "sequence_number_range": item.get("sequence_number_range"),
        "timestamp_range": item.get("timestamp_range"),
        "topic_id": spec_id(item.get("topic_id"), ctx),
    }
    return [Row("topic_message_lookup", values)]


def schedule_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    schedule = {**_SCHEDULE_DEFAULTS, **item}
    values = {
        "consensus_timestamp": schedule["consensus_timestamp"],
        "creator_account_id": spec_id(schedule["creator_account_id"], ctx),
        "executed_timestamp": schedule["executed_timestamp"],
        "expiration_time": schedule["expiration_time"],
        "payer_account_id": spec_id(schedule["payer_account_id"], ctx),
        "schedule_id": spec_id(schedule["schedule_id"], ctx),
        "transaction_body": _raw_bytes(schedule["transaction_body"]),
        "wait_for_expiry": schedule["wait_for_expiry"],
    }
    return [Row("schedule", values)]


def transaction_signature_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    values = {
        "consensus_timestamp": item.get("consensus_timestamp"),
        "public_key_prefix": _raw_bytes(item.get("public_key_prefix")),
        "entity_id": encoded_id(item.get("entity_id"), ctx, nullable=True),
        "signature": _raw_bytes(item.get("signature")),
        "type": item.get("type"),
    }
    return [Row("transaction_signature", values)]


def _month_partition(timestamp_ns: int) -> str:
    moment = datetime.fromtimestamp(timestamp_ns // 1_000_000_000, UTC)
    return f"topic_message_p{moment.year:04d}_{moment.month:02d}"


def generated_lookup_rows(messages: Iterable[tuple[int, int, int]]) -> list[Row]:
    """One lookup row per topic and UTC month of ``(topic_id, sequence_number, consensus_timestamp)``
    messages: the inclusive sequence and timestamp ranges of that group."""
    groups: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for topic_id, sequence, timestamp in messages:
        groups.setdefault((topic_id, _month_partition(timestamp)), []).append((sequence, timestamp))
    rows: list[Row] = []
    for (topic_id, partition), members in groups.items():
        sequences = [sequence for sequence, _ in members]
        timestamps = [timestamp for _, timestamp in members]
        values = {
            "partition": partition,
            "sequence_number_range": f"[{min(sequences)},{max(sequences)}]",
            "timestamp_range": f"[{min(timestamps)},{max(timestamps)}]",
            "topic_id": topic_id,
        }
        rows.append(Row("topic_message_lookup", values))
    return rows
