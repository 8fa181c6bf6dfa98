"""The timestamp window (``api/querystring/window.py``): the loose reading (tightest bounds, one equality folded
in, None when nothing can match), the strict one (the account's 400s and 404) and ``bind``."""

from __future__ import annotations

import pytest

from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.params import Filter
from ledgermirror.api.querystring.window import BoundWindow, TimestampWindow, bind, timestamp_window
from ledgermirror.ledger.int64 import INT64_MAX


def stamp(op: Op, value: int) -> Filter[int]:
    return Filter("timestamp", op, value)


def test_the_tightest_bounds_inclusive_with_exclusions_in_query_order() -> None:
    filters = [stamp(Op.GT, 1), stamp(Op.GTE, 5), stamp(Op.LT, 20), stamp(Op.NE, 9), stamp(Op.NE, 9)]
    found = timestamp_window(filters)
    assert found == TimestampWindow(5, 19, (9, 9))
    assert found.folded() == found


def test_one_equality_becomes_both_bounds() -> None:
    found = timestamp_window([stamp(Op.EQ, 7), stamp(Op.GTE, 5), stamp(Op.EQ, 7), stamp(Op.NE, 8)])
    assert found.equals == (7,)
    assert found.folded() == TimestampWindow(7, 7, (8,), (7,))


@pytest.mark.parametrize(
    "filters",
    [
        pytest.param([stamp(Op.EQ, 7), stamp(Op.EQ, 8)], id="two-equalities"),
        pytest.param([stamp(Op.EQ, 4), stamp(Op.GTE, 5)], id="equality-below"),
        pytest.param([stamp(Op.EQ, 9), stamp(Op.LT, 9)], id="equality-above"),
        pytest.param([stamp(Op.GT, 5), stamp(Op.LT, 6)], id="empty-range"),
        pytest.param([stamp(Op.GT, INT64_MAX)], id="past-the-last-nanosecond"),
    ],
)
def test_nothing_matches_in_the_loose_reading(filters: list[Filter[int]]) -> None:
    assert timestamp_window(filters).folded() is None


def test_range_empty_reads_the_bounds_only() -> None:
    assert not timestamp_window([stamp(Op.EQ, 7), stamp(Op.EQ, 8)]).range_empty
    assert timestamp_window([stamp(Op.GTE, 8), stamp(Op.LTE, 7)]).range_empty
    assert not timestamp_window([]).range_empty


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ([stamp(Op.GT, 1), stamp(Op.GTE, 2)], "Multiple gt or gte operators not permitted for timestamp param"),
        ([stamp(Op.LT, 9), stamp(Op.LTE, 8)], "Multiple lt or lte operators not permitted for timestamp param"),
        ([stamp(Op.EQ, 1), stamp(Op.NE, 2)], "Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param"),
        (
            [stamp(Op.LT, 1), stamp(Op.LT, 2), stamp(Op.GT, 1), stamp(Op.GT, 2)],
            "Multiple gt or gte operators not permitted for timestamp param",
        ),
    ],
)
def test_the_strict_rules(filters: list[Filter[int]], message: str) -> None:
    with pytest.raises(BadRequest) as raised:
        timestamp_window(filters, strict=True)
    assert raised.value.messages == (message,)
    timestamp_window(filters)  # the loose reading takes any mix


def test_the_strict_empty_range_is_a_404_and_repeated_equalities_are_kept() -> None:
    with pytest.raises(NotFound):
        timestamp_window([stamp(Op.GT, 5), stamp(Op.LT, 5)], strict=True)
    found = timestamp_window([stamp(Op.EQ, 9), stamp(Op.EQ, 7)], strict=True)
    assert found.equals == (9, 7)
    assert found.folded() is None


def test_bind_closes_and_cuts_from_the_end_the_page_starts_at() -> None:
    assert bind(TimestampWindow(), Order.DESC, first=10, now=20, width=100) == BoundWindow(10, 20, None)
    assert bind(TimestampWindow(), Order.DESC, first=10, now=100, width=10) == BoundWindow(91, 100, 91)
    assert bind(TimestampWindow(5, None), Order.ASC, first=10, now=100, width=10) == BoundWindow(5, 14, 14)
