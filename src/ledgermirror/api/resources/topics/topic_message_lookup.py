"""Topic message look-ups through ``topic_message_lookup`` (the reference's ``query.topicMessageLookup``).

Each lookup row says which sequence numbers and consensus timestamps of a topic one monthly partition of
``topic_message`` holds. The filters are folded into one inclusive sequence range and one timestamp range; the
lookup rows overlapping both give the timestamp window the message query is confined to (no overlapping row:
no messages). The answer is the plain query's: the window only lets PostgreSQL skip what cannot match.
"""

from __future__ import annotations

from collections.abc import Sequence

from ledgermirror.api.querystring.grammar import Op
from ledgermirror.api.querystring.params import Filter
from ledgermirror.api.querystring.window import inclusive_bounds
from ledgermirror.db.pool import Database
from ledgermirror.db.sql import template

_OVERLAPPING = """select min(lower(timestamp_range)) as low, max(upper(timestamp_range)) as high
from topic_message_lookup
where topic_id = {topic}
  and sequence_number_range && int8range({sequence_low}, {sequence_high}, '[]')
  and timestamp_range && int8range({timestamp_low}, {timestamp_high}, '[]')"""

_HOLDING = """select lower(timestamp_range) as low, upper(timestamp_range) as high
from topic_message_lookup
where topic_id = {topic} and sequence_number_range @> {sequence}::bigint
limit 1"""


def fold(filters: Sequence[Filter[int]], low: int, high: int) -> tuple[int, int] | None:
    """The inclusive range of range and equality filters within ``[low, high]``; None when it is empty
    (bounds that cross, two different equalities, or an equality outside the bounds)."""
    lower, upper = inclusive_bounds(filters)
    lower, upper = max(lower, low), min(upper, high)
    equal = {item.value for item in filters if item.op is Op.EQ}
    if len(equal) > 1:
        return None
    if equal:
        (value,) = equal
        lower, upper = (value, value) if lower <= value <= upper else (1, 0)
    return (lower, upper) if lower <= upper else None


async def window(
    database: Database, topic_id: int, sequences: tuple[int, int], timestamps: tuple[int, int]
) -> tuple[int, int] | None:
    """``[from, to)`` covering the lookup rows that overlap both ranges; None when none does."""
    statement = template(
        _OVERLAPPING,
        topic=topic_id,
        sequence_low=sequences[0],
        sequence_high=sequences[1],
        timestamp_low=timestamps[0],
        timestamp_high=timestamps[1],
    )
    rows = await database.fetch(statement)
    if not rows or rows[0]["low"] is None or rows[0]["high"] is None:
        return None
    return rows[0]["low"], rows[0]["high"]


async def window_of(database: Database, topic_id: int, sequence: int) -> tuple[int, int] | None:
    """``[from, to)`` of the lookup row holding the sequence number; None when none does."""
    rows = await database.fetch(template(_HOLDING, topic=topic_id, sequence=sequence))
    if not rows or rows[0]["low"] is None or rows[0]["high"] is None:
        return None
    return rows[0]["low"], rows[0]["high"]
