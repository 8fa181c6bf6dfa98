"""``links.next``: the next page written in the public filter language, as the reference writes it.

Given the request's own query and the sort key of the last row returned (the *anchor*), the link repeats every
parameter the client sent, replaces the bounds that point the way the page moves, and appends
``gt:``/``lt:`` (or ``gte:``/``lte:`` for an inclusive anchor) with the anchor value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from ledgermirror.api.querystring.grammar import Order, RawQuery

_SAFE = ":.,-_~!$'()*/;@="


@dataclass(frozen=True, slots=True)
class Anchor:
    key: str
    value: str
    inclusive: bool = False
    to_number: Callable[[str], int | None] | None = None
    """Reads a bound of this key as a number, for the empty-range check (primary anchor only)."""


def next_link(path: str, raw: RawQuery, anchors: Sequence[Anchor], order: Order) -> str | None:
    query: dict[str, list[str]] = {key: list(texts) for key, texts in raw.items.items()}
    forward = "gt" if order is Order.ASC else "lt"
    for anchor in anchors:
        new_op = forward + ("e" if anchor.inclusive else "")
        bound = f"{new_op}:{anchor.value}"
        current = query.get(anchor.key)
        if current is None:
            query[anchor.key] = [bound]
        elif len(current) == 1 and forward in current[0]:
            del query[anchor.key]  # a lone bound in the paging direction moves to the end
            query[anchor.key] = [bound]
        else:
            query[anchor.key] = [*(text for text in current if forward not in text), bound]
    if anchors and _empty_range(query.get(anchors[0].key, []), anchors[0].to_number):
        return None
    base = path[:-1] if path.endswith("/") and len(path) > 1 else path
    pairs = "&".join(f"{key}={quote(text, safe=_SAFE)}" for key, texts in query.items() for text in texts)
    return f"{base}?{pairs}"


def _empty_range(texts: list[str], to_number: Callable[[str], int | None] | None) -> bool:
    if to_number is None:
        return False
    lower: int | None = None
    upper: int | None = None
    for text in texts:
        op, _, value = text.partition(":")
        if op not in ("gt", "gte", "lt", "lte"):
            continue
        number = to_number(value)
        if number is None:
            continue
        if op.startswith("gt"):
            candidate = number + (1 if op == "gt" else 0)
            lower = candidate if lower is None else max(lower, candidate)
        else:
            candidate = number - (1 if op == "lt" else 0)
            upper = candidate if upper is None else min(upper, candidate)
    return lower is not None and upper is not None and upper < lower
