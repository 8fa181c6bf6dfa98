"""Requests as the reference reads them: entity ids, timestamps and limits converted, then every constraint
checked at once, with the reference's descriptions (``<method>.<parameter>.<property>: <message>``, joined
with ``", "``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ledgermirror.grpc_api.failures import invalid
from ledgermirror.ledger.entity_id import MAX_NUM, MAX_REALM, MAX_SHARD, encode_entity_id
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN, to_signed64

if TYPE_CHECKING:
    from hiero_sdk_python.hapi.mirror.consensus_service_pb2 import ConsensusTopicQuery
    from hiero_sdk_python.hapi.mirror.mirror_network_service_pb2 import AddressBookQuery

_NANOS = 1_000_000_000
_MAX_SECONDS = INT64_MAX // _NANOS  # 9223372036: from 9223372035 on, the reference takes the int64 maximum
NOT_NULL = "must not be null"
NOT_NEGATIVE = "must be greater than or equal to 0"


class _Timestamp(Protocol):
    seconds: int
    nanos: int


@dataclass(frozen=True, slots=True)
class EntityRef:
    encoded: int
    text: str
    """``shard.realm.num`` as the reference prints it in ``... does not exist``."""


def entity_ref(shard: int, realm: int, num: int) -> EntityRef:
    """The id, or ``Invalid entity ID: s.r.n`` for a component out of range."""
    if not (0 <= shard <= MAX_SHARD and 0 <= realm <= MAX_REALM and 0 <= num <= MAX_NUM):
        raise invalid(f"Invalid entity ID: {shard}.{realm}.{num}")
    return EntityRef(encode_entity_id(shard, realm, num), f"{shard}.{realm}.{num}")


def timestamp_ns(value: _Timestamp) -> int:
    """Nanoseconds since the epoch, clamped to int64 as the reference does (seconds from 9223372035 on are the
    int64 maximum; other overflows go to the maximum or the minimum by the sign of ``seconds``)."""
    if value.seconds >= _MAX_SECONDS - 1:
        return INT64_MAX
    total = value.seconds * _NANOS + value.nanos
    if total > INT64_MAX or total < INT64_MIN:
        return INT64_MAX if value.seconds >= 0 else INT64_MIN
    return total


def signed_limit(value: int) -> int:
    """A uint64 ``limit`` read as Java reads it: signed (values from 2^63 on are negative)."""
    return to_signed64(value)


class Violations:
    """The constraint failures of one request, reported together as one ``INVALID_ARGUMENT``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.messages: list[str] = []

    def check(self, ok: bool, prop: str, message: str) -> None:
        if not ok:
            self.messages.append(f"{self.prefix}.{prop}: {message}")

    def raise_any(self) -> None:
        if self.messages:
            raise invalid(", ".join(self.messages))


@dataclass(frozen=True, slots=True)
class TopicFilter:
    topic: EntityRef
    start: int
    end: int | None
    """Exclusive."""
    limit: int
    """0: no limit."""
    created: int
    """The wall-clock time the request was read (ns)."""


def topic_filter(query: ConsensusTopicQuery, now_ns: int) -> TopicFilter:
    """``ConsensusTopicQuery`` -> filter, or the reference's ``INVALID_ARGUMENT``."""
    topic: EntityRef | None = None
    if query.HasField("topicID"):
        tid = query.topicID
        topic = entity_ref(tid.shardNum, tid.realmNum, tid.topicNum)
    start = timestamp_ns(query.consensusStartTime) if query.HasField("consensusStartTime") else now_ns
    end = timestamp_ns(query.consensusEndTime) if query.HasField("consensusEndTime") else None
    limit = signed_limit(query.limit)
    violations = Violations("subscribeTopic.filter")
    violations.check(limit >= 0, "limit", NOT_NEGATIVE)
    violations.check(start >= 0, "startTime", NOT_NEGATIVE)
    violations.check(topic is not None, "topicId", NOT_NULL)
    violations.check(end is None or end > start, "validEndTime", "End time must be after start time")
    violations.check(start <= now_ns, "validStartTime", "Start time must be before the current time")
    violations.raise_any()
    assert topic is not None
    return TopicFilter(topic, start, end, limit, now_ns)


@dataclass(frozen=True, slots=True)
class NodesFilter:
    file: EntityRef
    limit: int


def nodes_filter(request: AddressBookQuery) -> NodesFilter:
    """``AddressBookQuery`` -> filter, or the reference's ``INVALID_ARGUMENT``."""
    file: EntityRef | None = None
    if request.HasField("file_id"):
        fid = request.file_id
        file = entity_ref(fid.shardNum, fid.realmNum, fid.fileNum)
    limit = request.limit
    violations = Violations("getNodes.filter")
    violations.check(file is not None, "fileId", NOT_NULL)
    violations.check(limit >= 0, "limit", NOT_NEGATIVE)
    violations.raise_any()
    assert file is not None
    return NodesFilter(file, limit)
