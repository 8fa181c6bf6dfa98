"""Tokens of the filter language: operators, sort order, and splitting of the raw query string."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from ledgermirror.db.sql import Op, Order

__all__ = [
    "ALL_OPS",
    "EQ_ONLY",
    "RANGE_OPS",
    "BadOperator",
    "Op",
    "Order",
    "RawQuery",
    "split_operator",
    "split_query",
]

ALL_OPS = frozenset(Op)
EQ_ONLY = frozenset({Op.EQ})
RANGE_OPS = frozenset({Op.EQ, Op.GT, Op.GTE, Op.LT, Op.LTE})
_BY_TEXT = {op.value: op for op in Op}


class BadOperator(ValueError):
    """The value has an ``x:`` prefix that is not a lower-case operator."""


def split_operator(value: str) -> tuple[Op | None, str]:
    """``"gte:0.0.5"`` -> ``(Op.GTE, "0.0.5")``; a value without a colon has no operator.

    >>> split_operator("lt:10")
    (<Op.LT: 'lt'>, '10')
    >>> split_operator("10")
    (None, '10')
    """
    head, sep, rest = value.partition(":")
    if not sep:
        return None, value
    op = _BY_TEXT.get(head)
    if op is None:
        raise BadOperator(value)
    return op, rest


@dataclass(slots=True)  # not frozen: it holds dicts (unhashable either way), and a frozen one took 1 µs to make
class RawQuery:
    """The query string as the client sent it: lower-cased keys in first-seen order, decoded values.

    ``exact_counts`` holds the largest number of repeats of one exact (case-sensitive) spelling of each key.
    """

    items: dict[str, list[str]]
    exact_counts: dict[str, int]


def split_query(query_string: str) -> RawQuery:
    """Values of one exact spelling stay together, spellings in first-seen order (``a=1&A=2&a=3`` -> 1, 3, 2)."""
    by_spelling: dict[str, list[str]] = {}
    for pair in query_string.split("&"):
        raw_key, _, raw_value = pair.partition("=")
        key = _decode(raw_key)
        if key:
            by_spelling.setdefault(key, []).append(_decode(raw_value))
    items: dict[str, list[str]] = {}
    exact_counts: dict[str, int] = {}
    for key, texts in by_spelling.items():
        lowered = key.lower()
        items.setdefault(lowered, []).extend(texts)
        exact_counts[lowered] = max(exact_counts.get(lowered, 0), len(texts))
    return RawQuery(items, exact_counts)


def _decode(text: str) -> str:
    return unquote(text.replace("+", " "), errors="replace") if ("%" in text or "+" in text) else text
