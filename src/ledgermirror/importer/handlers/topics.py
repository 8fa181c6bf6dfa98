"""The consensus service (reference §3.3, §5.1): topics and their messages.

ConsensusCreateTopic writes the TOPIC entity, the versioned ``topic`` row (its keys) and the topic's
``custom_fee`` row; ConsensusUpdateTopic a partial entity and topic update (and a new fee schedule when the body
has one); ConsensusDeleteTopic only ``entity.deleted``; ConsensusSubmitMessage one ``topic_message`` row. All only
on success; the main entity is the topic whatever the status.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ledgermirror.importer.handlers import custom_fees, ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import Operation, key_or_none, sanitize, upsert_entity
from ledgermirror.importer.handlers.item import Item

TOPIC = "TOPIC"
DEFAULT_RUNNING_HASH_VERSION = 3
"""Not stored: ``running_hash_version`` is NULL when the receipt says 3."""


def _fee_exempt_key_list(body: Any, keys: Any) -> bytes:
    """The serialized ``FeeExemptKeyList`` of these keys (zero bytes for none); its class is the one of the
    ConsensusUpdateTopic field (read from the body's own message types, no import)."""
    key_list = type(body.consensusUpdateTopic.fee_exempt_key_list)()
    key_list.keys.extend(keys)
    return bytes(key_list.SerializeToString())


def topic_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.consensusCreateTopic
    topic = ids.topic_id(item.record.receipt.topicID)
    context.set_transaction(entity_id=ids.nullable(topic))
    if not item.successful or not topic:
        return
    stamp = item.consensus_timestamp
    auto_renew = batch.account_of(body.autoRenewAccount) if body.HasField("autoRenewAccount") else ids.EMPTY
    upsert_entity(
        item,
        batch,
        topic,
        Operation.CREATE,
        TOPIC,
        memo=sanitize(body.memo),
        auto_renew_account_id=auto_renew or None,
        auto_renew_period=body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
    )
    batch.upsert(
        "topic",
        {
            "id": topic,
            "created_timestamp": stamp,
            "admin_key": key_or_none(body, "adminKey"),
            "submit_key": key_or_none(body, "submitKey"),
            "fee_schedule_key": key_or_none(body, "fee_schedule_key"),
            "fee_exempt_key_list": _fee_exempt_key_list(item.body, body.fee_exempt_key_list),
            "timestamp_range": stamp,
        },
    )
    custom_fees.write_custom_fee(item, batch, topic, custom_fees.topic_fee_lists(body.custom_fees))


def topic_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.consensusUpdateTopic
    topic = ids.topic_id(body.topicID)
    context.set_transaction(entity_id=ids.nullable(topic))
    if not item.successful or not topic:
        return
    stamp = item.consensus_timestamp
    upsert_entity(
        item,
        batch,
        topic,
        Operation.UPDATE,
        TOPIC,
        memo=sanitize(body.memo.value) if body.HasField("memo") else None,
        auto_renew_account_id=batch.account_of(body.autoRenewAccount)
        if body.HasField("autoRenewAccount")
        else None,
        auto_renew_period=body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
        expiration_timestamp=ids.nanos(body.expirationTime) if body.HasField("expirationTime") else None,
    )
    row: dict[str, Any] = {"id": topic, "timestamp_range": stamp}
    for field, column in (
        ("adminKey", "admin_key"),
        ("submitKey", "submit_key"),
        ("fee_schedule_key", "fee_schedule_key"),
    ):
        value = key_or_none(body, field)
        if value is not None:
            row[column] = value
    if body.HasField("fee_exempt_key_list"):
        row["fee_exempt_key_list"] = bytes(body.fee_exempt_key_list.SerializeToString())
    batch.upsert("topic", row)
    if body.HasField("custom_fees"):
        custom_fees.write_custom_fee(item, batch, topic, custom_fees.topic_fee_lists(body.custom_fees.fees))


def topic_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    topic = ids.topic_id(item.body.consensusDeleteTopic.topicID)
    context.set_transaction(entity_id=ids.nullable(topic))
    upsert_entity(item, batch, topic, Operation.DELETE, TOPIC)


def running_hash_version(version: int) -> int | None:
    """``topic_message.running_hash_version``: NULL for the default 3, 1 for 0, else as given."""
    if version == DEFAULT_RUNNING_HASH_VERSION:
        return None
    return version or 1


def submit_message(item: Item, batch: Batch, context: ItemContext) -> None:
    """One ``topic_message`` per successful message; chunks are separate rows (never reassembled)."""
    body = item.body.consensusSubmitMessage
    topic = ids.topic_id(body.topicID)
    context.set_transaction(entity_id=ids.nullable(topic))
    if not item.successful:
        return
    receipt = item.record.receipt
    chunked = body.HasField("chunkInfo")
    chunk = body.chunkInfo
    batch.insert(
        "topic_message",
        {
            "consensus_timestamp": item.consensus_timestamp,
            "topic_id": topic,
            "message": bytes(body.message),
            "payer_account_id": item.payer_account_id,
            "running_hash": bytes(receipt.topicRunningHash),
            "sequence_number": receipt.topicSequenceNumber,
            "running_hash_version": running_hash_version(receipt.topicRunningHashVersion),
            "chunk_num": chunk.number if chunked else None,
            "chunk_total": chunk.total if chunked else None,
            "initial_transaction_id": (
                bytes(chunk.initialTransactionID.SerializeToString())
                if chunked and chunk.HasField("initialTransactionID")
                else None
            ),
        },
    )


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "consensusCreateTopic": topic_create,
        "consensusUpdateTopic": topic_update,
        "consensusDeleteTopic": topic_delete,
        "consensusSubmitMessage": submit_message,
    }
)
"""Consensus service transactions by ``TransactionBody`` oneof name."""
