"""The statements of the gRPC topic subscriptions (``ConsensusService.subscribeTopic``): the topic's entity, a
page of its messages in consensus order, the newest message of a topic, and one read of what is new for many
topics at once (the live fan-out's shared query: one round trip per wake-up for every subscribed topic).
"""

from __future__ import annotations

from collections.abc import Sequence

from ledgermirror.db.sql import Statement, template

MESSAGE_COLUMNS = (
    "consensus_timestamp, message, running_hash, sequence_number, running_hash_version, chunk_num, "
    "chunk_total, initial_transaction_id, payer_account_id, valid_start_timestamp"
)

_ENTITY_TYPE = "select type::text from entity where id = {id}"

_PAGE = (
    f"select {MESSAGE_COLUMNS} from topic_message "
    "where topic_id = {topic} and consensus_timestamp >= {start} and consensus_timestamp < {end} "
    "order by consensus_timestamp limit {limit}"
)

_NEWEST = "select coalesce(max(consensus_timestamp), -1) from topic_message where topic_id = {topic}"

_NEW_FOR_TOPICS = (
    f"select wanted.topic_id, {', '.join('m.' + name for name in MESSAGE_COLUMNS.split(', '))} "
    "from unnest({topics}::bigint[], {after}::bigint[]) as wanted(topic_id, after) "
    "cross join lateral ("
    f"select {MESSAGE_COLUMNS} from topic_message "
    "where topic_message.topic_id = wanted.topic_id and topic_message.consensus_timestamp > wanted.after "
    "order by topic_message.consensus_timestamp limit {limit}"
    ") as m order by wanted.topic_id, m.consensus_timestamp"
)


def entity_type(entity_id: int) -> Statement:
    """The entity's type (``TOPIC``, ``ACCOUNT``, ...), no row when there is no such entity."""
    return template(_ENTITY_TYPE, id=entity_id)


def page(topic_id: int, start: int, end: int, limit: int) -> Statement:
    """At most ``limit`` messages of the topic with ``start <= consensus_timestamp < end``, oldest first."""
    return template(_PAGE, topic=topic_id, start=start, end=end, limit=limit)


def newest(topic_id: int) -> Statement:
    """The topic's newest consensus timestamp (-1 when it has no message)."""
    return template(_NEWEST, topic=topic_id)


def new_for_topics(topics: Sequence[int], after: Sequence[int], limit: int) -> Statement:
    """For each ``topics[i]``, at most ``limit`` of its messages after ``after[i]``, oldest first (by topic)."""
    return template(_NEW_FOR_TOPICS, topics=list(topics), after=list(after), limit=limit)


_IMPORTER_POSITION = "select max(consensus_end) from record_file"


def importer_position() -> Statement:
    """The newest consensus time the importer has committed (NULL before its first file)."""
    return template(_IMPORTER_POSITION)
