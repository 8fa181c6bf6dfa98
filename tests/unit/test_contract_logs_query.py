"""The pure rules of the contract logs query: topic values as stored, the collapse of gte:T&lte:T, the global
route's loose timestamp bounds, the topic search's timestamp rule, and the (timestamp, index) bound rules."""

from __future__ import annotations

import pytest

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import NothingMatches
from ledgermirror.api.querystring.bounds import Limit
from ledgermirror.api.querystring.params import Filter
from ledgermirror.api.resources.contracts import contract_logs_query as logs
from ledgermirror.db.sql import Op

DAY = 86_400 * 1_000_000_000


def stamp(op: Op, value: int) -> Filter[int]:
    return Filter("timestamp", op, value, f"{op.value}:{value}")


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("a", b"\x0a"),
        ("0x000A", b"\x0a"),
        ("0x00", b""),
        ("0", b""),
        ("1234", b"\x12\x34"),
        ("0x0123", b"\x01\x23"),
    ],
)
def test_topics_are_compared_as_stored(text: str, stored: bytes) -> None:
    assert logs.topic_value(text) == stored


def test_gte_and_lte_of_one_timestamp_is_an_equality() -> None:
    assert logs.collapse([stamp(Op.GTE, 5), stamp(Op.LTE, 5)]) == [stamp(Op.EQ, 5)]
    for kept in ([stamp(Op.GTE, 5), stamp(Op.LTE, 6)], [stamp(Op.GT, 5), stamp(Op.LTE, 5)], [stamp(Op.GTE, 5)]):
        assert logs.collapse(kept) == kept


def test_optimized_takes_the_tightest_bounds() -> None:
    found = logs.optimized([stamp(Op.GT, 1), stamp(Op.GTE, 5), stamp(Op.LT, 20), stamp(Op.LTE, 30)])
    assert found == [Limit(Op.GTE, 5), Limit(Op.LTE, 19)]
    assert logs.optimized([stamp(Op.EQ, 7), stamp(Op.GTE, 5)]) == [Limit(Op.EQ, 7)]
    assert logs.optimized([stamp(Op.NE, 7)]) == [Limit(Op.NE, 7)]
    assert logs.optimized([]) == []
    for empty in (
        [stamp(Op.EQ, 7), stamp(Op.EQ, 8)],
        [stamp(Op.EQ, 4), stamp(Op.GTE, 5)],
        [stamp(Op.GT, 5), stamp(Op.LT, 6)],
        [stamp(Op.GT, 2**63 - 1)],
    ):
        with pytest.raises(NothingMatches):
            logs.optimized(empty)


def test_a_topic_search_needs_a_timestamp_equality_or_a_week() -> None:
    logs.check_topic_timestamps([stamp(Op.EQ, 5)])
    logs.check_topic_timestamps([stamp(Op.GTE, 0), stamp(Op.LTE, 7 * DAY)])
    for bad in ([], [stamp(Op.GTE, 1)], [stamp(Op.GTE, 0), stamp(Op.LTE, 7 * DAY + 1)], [stamp(Op.NE, 1)]):
        with pytest.raises(BadRequest):
            logs.check_topic_timestamps(bad)


def test_bound_rules() -> None:
    bounds = logs.log_bounds([Limit(Op.GTE, 10)], [Limit(Op.GT, 2)])
    (condition,) = bounds.keyset.conditions()
    assert (condition.columns, condition.op, condition.values) == (("timestamp", "index"), Op.GT, (10, 2))
    with pytest.raises(BadRequest, match="timestamp must have eq operator"):
        logs.log_bounds([Limit(Op.GTE, 10)], [Limit(Op.EQ, 2)])
    with pytest.raises(BadRequest, match="index without a timestamp parameter filter"):
        logs.log_bounds([], [Limit(Op.GT, 2)])
    window = logs.with_window(bounds, 10, 99)
    assert (window.timestamp.lower, window.timestamp.upper) == (Limit(Op.GTE, 10), Limit(Op.LTE, 99))
