"""``topic_message`` rows as the reference sends them (``ConsensusTopicResponse``), serialized once per row and
shared by every subscriber that receives it."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

from ledgermirror.grpc_api.wire import mirror
from ledgermirror.ledger.entity_id import decode_entity_id

_NANOS = 1_000_000_000
BLOCK_STREAM_RUNNING_HASH_VERSION = 3
"""What the reference sends for a NULL ``running_hash_version`` (block streams no longer carry one)."""

_log = logging.getLogger("ledgermirror.grpc")


@dataclass(frozen=True, slots=True)
class TopicMessage:
    consensus_timestamp: int
    sequence_number: int
    payload: bytes
    """The serialized ``ConsensusTopicResponse``."""
    noticed: float = 0.0
    """When the API learnt of the commit that brought it (``time.monotonic()``; 0 for history)."""


def topic_message(row: asyncpg.Record, topic: int, noticed: float = 0.0) -> TopicMessage:
    classes = mirror()
    response = classes.ConsensusTopicResponse()
    timestamp = row["consensus_timestamp"]
    response.consensusTimestamp.seconds, response.consensusTimestamp.nanos = divmod(timestamp, _NANOS)
    response.message = bytes(row["message"] or b"")
    response.runningHash = bytes(row["running_hash"] or b"")
    response.sequenceNumber = row["sequence_number"]
    version = row["running_hash_version"]
    response.runningHashVersion = BLOCK_STREAM_RUNNING_HASH_VERSION if version is None else version
    if row["chunk_num"] is not None:
        chunk = response.chunkInfo
        chunk.number = row["chunk_num"]
        chunk.total = row["chunk_total"] or 0
        initial = row["initial_transaction_id"]
        parsed = False
        if initial is not None:
            try:
                chunk.initialTransactionID.ParseFromString(bytes(initial))
                parsed = True
            except classes.DecodeError:
                chunk.ClearField("initialTransactionID")
                _log.error(
                    "Failed to parse TransactionID for topic %s sequence number %s", topic, row["sequence_number"]
                )
        payer, valid_start = row["payer_account_id"], row["valid_start_timestamp"]
        if not parsed and payer is not None and valid_start is not None:
            account = chunk.initialTransactionID.accountID
            account.shardNum, account.realmNum, account.accountNum = decode_entity_id(payer)
            start = chunk.initialTransactionID.transactionValidStart
            start.seconds, start.nanos = divmod(valid_start, _NANOS)
    return TopicMessage(timestamp, row["sequence_number"], response.SerializeToString(), noticed)
