"""Inclusive ranges of integer filters, and the timestamp window of every route that bounds time.

The one home of inclusive bounds: :func:`closed` (``gt:5`` is 6), :func:`inclusive_range` (the tightest bounds of
range filters), :func:`inclusive_bounds` (the same within ``[0, 2^63 - 1]``). A :class:`TimestampWindow` is what a
route's ``timestamp`` filters leave: the tightest inclusive bounds, the equalities and the ``ne`` exclusions. The
reference reads them two ways, and :func:`timestamp_window` does both:

- loose (``/transactions``, the global ``/contracts/results`` and ``/contracts/results/logs``): any mix, the
  tightest bounds win; :meth:`TimestampWindow.folded` puts one equality into the bounds and says when nothing can
  match (two different equalities, an equality outside the bounds, an empty range);
- strict (``/accounts/{id}``): at most one lower and one upper bound, an equality alone (each a 400), and an empty
  range a 404.

:func:`bind` is the reference's ``bindTimestampRange``: an open window closed at the first transaction and now,
then cut to a width from the end the page starts at.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.params import Filter
from ledgermirror.ledger.int64 import INT64_MAX

_LOWER = frozenset({Op.GT, Op.GTE})
_UPPER = frozenset({Op.LT, Op.LTE})


def closed(op: Op, value: int) -> int:
    """A bound as an inclusive integer: ``gt:5`` is 6, ``lt:5`` is 4, any other operator its value. The one home
    of this rule (range filters, keyset bounds, the next link's empty-range check, timestamp windows)."""
    if op is Op.GT:
        return value + 1
    if op is Op.LT:
        return value - 1
    return value


def inclusive_range(filters: Iterable[Filter[int]], *, eq_is_upper: bool = False) -> tuple[int | None, int | None]:
    """The tightest inclusive ``(lower, upper)`` of integer range filters (None: unbounded on that side);
    ``eq_is_upper`` reads an equality as "as of" (``lte``); ``ne`` and other equalities are ignored."""
    lower: int | None = None
    upper: int | None = None
    for item in filters:
        if item.op in _LOWER:
            bound = closed(item.op, item.value)
            lower = bound if lower is None else max(lower, bound)
        elif item.op in _UPPER or (item.op is Op.EQ and eq_is_upper):
            bound = closed(item.op, item.value)
            upper = bound if upper is None else min(upper, bound)
    return lower, upper


def inclusive_bounds(filters: Iterable[Filter[int]], *, eq_is_upper: bool = False) -> tuple[int, int]:
    """:func:`inclusive_range` within ``[0, 2^63 - 1]``. ``lower > upper`` means the range is empty."""
    lower, upper = inclusive_range(filters, eq_is_upper=eq_is_upper)
    return max(0, lower) if lower is not None else 0, min(INT64_MAX, upper) if upper is not None else INT64_MAX


@dataclass(frozen=True, slots=True)
class TimestampWindow:
    """Which consensus timestamps qualify: ``[lower, upper]`` (inclusive; None: open), minus ``excluded`` (the
    ``ne`` values); ``equals`` holds the distinct equalities given, in query order."""

    lower: int | None = None
    upper: int | None = None
    excluded: tuple[int, ...] = ()
    equals: tuple[int, ...] = ()

    @property
    def range_empty(self) -> bool:
        """The bounds admit no timestamp: ``upper < lower``, or a lower bound past the last nanosecond a bigint
        holds (``gt:<the maximum>``)."""
        lower, upper = self.lower, self.upper
        return lower is not None and (lower > INT64_MAX or (upper is not None and upper < lower))

    def folded(self) -> TimestampWindow | None:
        """The loose reading: one equality becomes both bounds (``equals`` keeps it); None when no timestamp can
        match (an empty range, two different equalities, an equality outside the bounds)."""
        if self.range_empty or len(self.equals) > 1:
            return None
        if not self.equals:
            return self
        (only,) = self.equals
        if (self.lower is not None and only < self.lower) or (self.upper is not None and only > self.upper):
            return None
        return TimestampWindow(only, only, self.excluded, self.equals)


def timestamp_window(filters: Sequence[Filter[int]], *, strict: bool = False) -> TimestampWindow:
    """The window of ``timestamp`` filters (see the module's docstring for the two readings); ``strict`` raises
    the reference's 400s and, for an empty range, its 404 ``Timestamp range is empty``."""
    lower, upper = inclusive_range(filters)
    equals = [item.value for item in filters if item.op is Op.EQ]
    excluded = tuple(item.value for item in filters if item.op is Op.NE)
    if strict:
        if sum(item.op in _LOWER for item in filters) > 1:
            raise BadRequest("Multiple gt or gte operators not permitted for timestamp param")
        if sum(item.op in _UPPER for item in filters) > 1:
            raise BadRequest("Multiple lt or lte operators not permitted for timestamp param")
        if equals and len(equals) != len(filters):
            raise BadRequest("Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param")
    window = TimestampWindow(lower, upper, excluded, tuple(dict.fromkeys(equals)))
    if strict and window.range_empty:
        raise NotFound("Timestamp range is empty")
    return window


@dataclass(frozen=True, slots=True)
class BoundWindow:
    """A window after :func:`bind`; ``edge`` is where the next page starts when it was cut (None: it was not)."""

    lower: int | None
    upper: int | None
    edge: int | None


def bind(window: TimestampWindow, order: Order, *, first: int, now: int, width: int) -> BoundWindow:
    """Close an open window (first transaction, now) and cut it to ``width`` from the end the page starts at."""
    begin = window.lower if window.lower is not None else first
    end = window.upper if window.upper is not None else now
    if end - begin + 1 <= width:
        return BoundWindow(begin, end, None)
    if order is Order.DESC:
        begin = end - width + 1
        return BoundWindow(begin, end, begin)
    end = begin + width - 1
    return BoundWindow(begin, end, end)
