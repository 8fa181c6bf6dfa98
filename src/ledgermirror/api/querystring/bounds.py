"""Multi-column keyset bounds: the filters of routes that page through a composite key.

Token allowances page by (spender, token), NFT allowances by (spender or owner, token), an account's NFTs by
(token, serial number) and airdrops by (counterparty, token, serial number). Each column's filters form a
:class:`Bound` (an optional equal, lower and upper :class:`Limit`), and the bounds together select one range of
the key tuple in sort order:

* a column pinned by an equality (or the first ranged column, when its lower and upper limits meet) is an
  independent ``col = v``, and so are any other limits on that column;
* the other columns, in key order, form row comparisons: the lower side is ``(c1, c2, ...) >= (v1, v2, ...)``
  and stops after the first column whose lower limit is exclusive (``gt``) or after the last column with a lower
  limit; the upper side likewise. ``spender.id=gte:2001&token.id=gt:10002`` selects ``(spender, token_id) >
  (2001, 10002)``: the rest of spender 2001 after token 10002, then every later spender.

This module holds no SQL: :meth:`Keyset.conditions` yields :class:`Condition` triples (column keys, operator,
values) that a resource's plan passes to ``Select.compare_rows`` with its own column names. It also checks the
reference's rules for combining the filters (two dialects with their own messages: :func:`node_bound` with
:func:`check_node`, :func:`java_bound` with :func:`check_java`) and picks the anchors of the next link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.querystring.grammar import Op
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.window import closed
from ledgermirror.ledger.entity_id import EntityId

LOWER_OPS = frozenset({Op.GT, Op.GTE})
UPPER_OPS = frozenset({Op.LT, Op.LTE})


@dataclass(frozen=True, slots=True)
class Limit:
    """One filter on one key column: ``op`` and an integer value (an encoded id or a serial number)."""

    op: Op
    value: int

    @property
    def closed(self) -> int:
        """The limit as an inclusive integer: ``gt:5`` is 6, ``lt:5`` is 4, anything else its value."""
        return closed(self.op, self.value)


@dataclass(slots=True)
class Bound:
    """The filters of one key column. ``key`` is the public parameter, ``column`` the plan's column key."""

    key: str
    column: str
    given: list[Limit] = field(default_factory=list)
    equal: Limit | None = None
    lower: Limit | None = None
    upper: Limit | None = None

    @property
    def has_range(self) -> bool:
        return self.lower is not None or self.upper is not None

    @property
    def is_empty(self) -> bool:
        return self.equal is None and not self.has_range

    def count(self, *ops: Op) -> int:
        return sum(1 for limit in self.given if limit.op in ops)


@dataclass(frozen=True, slots=True)
class Condition:
    """``(columns...) op (values...)``; one column is a plain comparison."""

    columns: tuple[str, ...]
    op: Op
    values: tuple[int, ...]


# -- building bounds ---------------------------------------------------------------------------------------------


def node_bound(key: str, column: str, limits: Iterable[Limit]) -> Bound:
    """The Node service's rules, filter by filter: one equality, one lower and one upper limit; no ``ne``."""
    bound = Bound(key, column)
    for limit in limits:
        bound.given.append(limit)
        if limit.op is Op.EQ:
            if bound.equal is not None:
                raise BadRequest(f"Only one equal (eq) operator is allowed for {key}")
            bound.equal = limit
        elif limit.op in LOWER_OPS:
            if bound.lower is not None:
                raise BadRequest(f"Only one gt/gte operator is allowed for {key}")
            bound.lower = limit
        elif limit.op in UPPER_OPS:
            if bound.upper is not None:
                raise BadRequest(f"Only one lt/lte operator is allowed for {key}")
            bound.upper = limit
        else:
            raise BadRequest(f"Not equal (ne) operator is not supported for {key}")
    return bound


def java_bound(key: str, column: str, limits: Iterable[Limit]) -> Bound:
    """The Java service's bound: the last ``eq``/``gt``/``gte`` is the lower side (an ``eq`` stays an equality),
    the last ``lt``/``lte`` the upper side. Nothing is rejected here; see :func:`check_java`."""
    bound = Bound(key, column)
    low: Limit | None = None
    for limit in limits:
        bound.given.append(limit)
        if limit.op is Op.EQ or limit.op in LOWER_OPS:
            low = limit
        elif limit.op in UPPER_OPS:
            bound.upper = limit
    if low is not None and low.op is Op.EQ:
        bound.equal = low
    else:
        bound.lower = low
    return bound


def in_query_order(order: Sequence[str], build: Mapping[str, Callable[[], Bound]]) -> dict[str, Bound]:
    """Build the bounds in the order their keys appear in the query, so the first bad filter is the one
    reported (``order`` holds the query's keys; keys it lacks are built last)."""
    keys = [key for key in order if key in build] + [key for key in build if key not in order]
    return {key: build[key]() for key in keys}


# -- the reference's rules ---------------------------------------------------------------------------------------


def check_node(primary: Bound, secondary: Bound) -> None:
    """The Node service's combination rules and messages, in its order."""
    for bound in (primary, secondary):
        if bound.has_range and bound.equal is not None:
            raise BadRequest(f"Can't support both range and equal for {bound.key}")
    if primary.is_empty and not secondary.is_empty:
        raise BadRequest(f"{secondary.key} without a {primary.key} parameter filter")
    if primary.equal is None and secondary.lower is not None and _op(primary.lower) is not Op.GTE:
        raise BadRequest(f"{primary.key} must have gte or eq operator")
    if primary.equal is None and secondary.upper is not None and _op(primary.upper) is not Op.LTE:
        raise BadRequest(f"{primary.key} must have lte or eq operator")


def check_range(bound: Bound) -> None:
    """The Java service's check that a bound's lower side (``eq`` counts) does not pass its upper side."""
    low = bound.equal or bound.lower
    if low is not None and bound.upper is not None and low.closed > bound.upper.closed:
        raise BadRequest(f"Invalid range provided for {bound.key}")


def check_java(primary: Bound, secondary: Bound) -> None:
    """The Java service's combination rules and messages (NFT allowances), in its order."""
    check_range(primary)
    if primary.is_empty and not secondary.is_empty:
        raise BadRequest(f"{secondary.key} parameter must have {primary.key} present")
    for bound in (primary, secondary):
        key = bound.key
        if bound.count(Op.NE):
            raise BadRequest(f"Unsupported range operator ne for {key}")
        for ops in ((Op.EQ,), (Op.GT, Op.GTE), (Op.LT, Op.LTE)):
            if bound.count(*ops) > 1:
                names = ", ".join(op.value for op in ops)
                raise BadRequest(
                    f"Only one range operator from [{names}] is allowed for the given parameter for {key}"
                )
        if bound.count(Op.EQ) and bound.count(*LOWER_OPS, *UPPER_OPS):
            raise BadRequest(f"Can't support both range and equal for {key}")
    if (primary.equal or primary.lower) is None or primary.upper is None:
        check_range(secondary)
    if secondary.upper is not None and primary.equal is None and _op(primary.upper) is not Op.LTE:
        raise BadRequest(f"Requires the presence of an lte or eq {primary.key} parameter")
    if secondary.lower is not None and primary.equal is None and _op(primary.lower) is not Op.GTE:
        raise BadRequest(f"Requires the presence of an gte or eq {primary.key} parameter")


def _op(limit: Limit | None) -> Op | None:
    return None if limit is None else limit.op


# -- conditions and anchors --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Keyset:
    """The bounds of a composite key, in sort order."""

    bounds: tuple[Bound, ...]

    def conditions(self, lead: tuple[str, int] | None = None) -> list[Condition]:
        """The conditions on the key columns. ``lead`` is a column the query pins to one value that leads the
        index to read (the path account): row comparisons start with it, so they bound that index exactly
        rather than a sibling index whose first column is the key's."""
        found: list[Condition] = []
        ranged: list[tuple[str, Limit | None, Limit | None]] = []
        for bound in self.bounds:
            lower, upper = bound.lower, bound.upper
            pinned = bound.equal.value if bound.equal is not None else None
            if pinned is None and not ranged and lower and upper and lower.closed == upper.closed:
                # the leading ranged column's limits meet (gte:5&lte:5, gt:4&lt:6): an equality
                pinned, lower, upper = lower.closed, None, None
            if pinned is not None:
                found.append(Condition((bound.column,), Op.EQ, (pinned,)))
                found.extend(
                    Condition((bound.column,), limit.op, (limit.value,)) for limit in (lower, upper) if limit
                )
            elif lower is not None or upper is not None:
                ranged.append((bound.column, lower, upper))
        lower_side = _row_condition([(column, lower) for column, lower, _ in ranged], Op.GTE)
        upper_side = _row_condition([(column, upper) for column, _, upper in ranged], Op.LTE)
        for side in (lower_side, upper_side):
            if side is not None and lead is not None and len(side.columns) > 1:
                found.append(Condition((lead[0], *side.columns), side.op, (lead[1], *side.values)))
            elif side is not None:
                found.append(side)
        return found

    def anchors(self, last: Sequence[tuple[str, int]]) -> list[Anchor]:
        """Next-link anchors for the first ``len(last)`` key columns, ``last`` holding the last row's values as
        (link text, number).

        A key pinned by an equality gets no anchor; every anchor but the last is inclusive, so the next page
        resumes inside the same leading key. Empty when every key is pinned: the page ends the data. The first
        anchor carries its number for the empty-range check.
        """
        open_keys = [
            (bound, value) for bound, value in zip(self.bounds, last, strict=False) if bound.equal is None
        ]
        return [
            Anchor(bound.key, text, inclusive=index < len(open_keys) - 1, number=number if index == 0 else None)
            for index, (bound, (text, number)) in enumerate(open_keys)
        ]


def _row_condition(limits: list[tuple[str, Limit | None]], inclusive: Op) -> Condition | None:
    """One side of the range: columns join while the previous column's limit is inclusive."""
    columns: list[str] = []
    values: list[int] = []
    op = inclusive
    for column, limit in limits:
        if limit is None or op is not inclusive:
            break
        columns.append(column)
        values.append(limit.value)
        op = limit.op
    return Condition(tuple(columns), op, tuple(values)) if columns else None


def entity_key(encoded: int) -> tuple[str, int]:
    """An encoded id of the last row as a next-link anchor value: ``shard.realm.num`` and the number."""
    return str(EntityId.decode(encoded)), encoded


def integer_key(value: int) -> tuple[str, int]:
    """A serial number of the last row as a next-link anchor value."""
    return str(value), value
