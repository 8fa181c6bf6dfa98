"""``links.next``: the next page written in the public filter language, as the reference writes it.

Given the request's typed filters (:attr:`ParsedQuery.given`, each with the text the client wrote) and the sort
key of the last row returned (the *anchor*), the link repeats every parameter the client sent, replaces the
bounds that point the way the page moves, and appends ``gt:``/``lt:`` (or ``gte:``/``lte:`` for an inclusive
anchor) with the anchor value. Operators are read from the typed filters, never from the text; ``order`` is
written in lower case, as the reference does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.params import Filter
from ledgermirror.api.querystring.window import inclusive_range
from ledgermirror.ledger.entity_id import EntityId

_SAFE = ":.,-_~!$'()*/;@="
_LOWER = frozenset({Op.GT, Op.GTE})
_UPPER = frozenset({Op.LT, Op.LTE})


@dataclass(frozen=True, slots=True)
class Anchor:
    """The next page's bound on ``key``: ``value`` is its text in the link. ``number`` is the value as a
    number for the empty-range check (primary anchor only; None: no check). A ``value`` of None adds no bound
    and only drops the key's bounds in the paging direction (a key the last row leaves open)."""

    key: str
    value: str | None
    inclusive: bool = False
    number: int | None = None


def next_link(
    path: str, given: Mapping[str, Sequence[Filter[Any]]], anchors: Sequence[Anchor], order: Order
) -> str | None:
    query: dict[str, list[Filter[Any]]] = {key: list(found) for key, found in given.items()}
    forward = _LOWER if order is Order.ASC else _UPPER
    for anchor in anchors:
        current = query.get(anchor.key)
        kept = [item for item in current or [] if item.op not in forward]
        if anchor.value is None:
            if kept:
                query[anchor.key] = kept
            else:
                query.pop(anchor.key, None)
            continue
        op = _bound_op(order, anchor.inclusive)
        bound = Filter(anchor.key, op, anchor.number, f"{op.value}:{anchor.value}")
        if current is not None and len(current) == 1 and current[0].op in forward:
            del query[anchor.key]  # a lone bound in the paging direction moves to the end
        query[anchor.key] = [*kept, bound]
    if anchors and anchors[0].number is not None and _empty_range(query.get(anchors[0].key, [])):
        return None
    base = path[:-1] if path.endswith("/") and len(path) > 1 else path
    pairs = "&".join(f"{key}={quote(_text(item), safe=_SAFE)}" for key, found in query.items() for item in found)
    return f"{base}?{pairs}"


def _text(item: Filter[Any]) -> str:
    """The value as the client wrote it, except ``order``, which the reference writes in lower case
    (``order=DESC`` -> ``order=desc``)."""
    return item.value.value if isinstance(item.value, Order) else item.text


def _bound_op(order: Order, inclusive: bool) -> Op:
    if order is Order.ASC:
        return Op.GTE if inclusive else Op.GT
    return Op.LTE if inclusive else Op.LT


def number_of(value: Any) -> int | None:
    """A typed filter value as a number for the empty-range check: an integer, an entity id's encoded form;
    None for anything else (an opaque EVM address)."""
    if isinstance(value, EntityId):
        return value.encoded
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _empty_range(filters: list[Filter[Any]]) -> bool:
    numbers = [
        Filter(item.key, item.op, number) for item in filters if (number := number_of(item.value)) is not None
    ]
    lower, upper = inclusive_range(numbers)
    return lower is not None and upper is not None and upper < lower
