"""Ids, timestamps and keys of HAPI messages in the form the tables store them."""

from __future__ import annotations

from typing import Any

from ledgermirror.ledger.entity_id import MAX_NUM, EntityId, InvalidEntityId
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN

EMPTY = 0
"""The id 0.0.0: an unset id, or an account given only by its alias."""

NANOS_PER_DAY = 86_400_000_000_000


def encoded(shard: int, realm: int, num: int) -> int:
    """The encoded id, EMPTY when out of range (the reference logs and stores 0.0.0)."""
    if shard == 0 and realm == 0 and 0 <= num <= MAX_NUM:
        return num
    try:
        return EntityId(shard, realm, num).encoded
    except InvalidEntityId:
        return EMPTY


def account_id(message: Any) -> int:
    """An ``AccountID``: its encoded id, EMPTY when it is given by alias or unset."""
    num: int = message.accountNum
    if not num:  # unset, or given by alias
        return EMPTY
    shard = message.shardNum
    realm = message.realmNum
    if shard == 0 and realm == 0 and 0 < num <= MAX_NUM:  # encoded()'s common case, without the call
        return num
    return encoded(shard, realm, num)


def account_alias(message: Any) -> bytes:
    """The alias of an ``AccountID`` given by alias (b"" otherwise)."""
    return bytes(message.alias) if message.WhichOneof("account") == "alias" else b""


def entity_of(message: Any, num_field: str) -> int:
    """A ``FileID``/``TopicID``/``TokenID``/``ScheduleID`` (``num_field`` names its number field)."""
    return encoded(message.shardNum, message.realmNum, getattr(message, num_field))


def file_id(message: Any) -> int:
    return entity_of(message, "fileNum")


def topic_id(message: Any) -> int:
    return entity_of(message, "topicNum")


def token_id(message: Any) -> int:
    return entity_of(message, "tokenNum")


def schedule_id(message: Any) -> int:
    return entity_of(message, "scheduleNum")


def contract_id(message: Any) -> int:
    """A ``ContractID`` by number (EMPTY when given by EVM address: that needs a lookup)."""
    if message.WhichOneof("contract") != "contractNum":
        return EMPTY
    return encoded(message.shardNum, message.realmNum, message.contractNum)


def parts(entity_id: int) -> dict[str, int]:
    """``id``, ``shard``, ``realm`` and ``num`` columns of an entity row."""
    decoded = EntityId.decode(entity_id)
    return {"id": entity_id, "shard": decoded.shard, "realm": decoded.realm, "num": decoded.num}


def nullable(entity_id: int) -> int | None:
    """EMPTY stored as NULL."""
    return entity_id or None


def nanos(timestamp: Any) -> int:
    """A ``Timestamp`` in ns since the epoch, clamped to the int64 range."""
    value: int = timestamp.seconds * 1_000_000_000 + timestamp.nanos
    if INT64_MIN <= value <= INT64_MAX:  # the common case, without the calls to min and max
        return value
    return INT64_MAX if value > INT64_MAX else INT64_MIN


def epoch_day(consensus_timestamp: int) -> int:
    return consensus_timestamp // NANOS_PER_DAY


def key_bytes(message: Any) -> bytes:
    """A ``Key`` (or ``KeyList``) serialized."""
    return bytes(message.SerializeToString())
