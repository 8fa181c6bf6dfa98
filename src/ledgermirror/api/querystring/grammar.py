"""Tokens of the filter language: operators, sort order, and splitting of the raw query string."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from urllib.parse import unquote


class Op(Enum):
    EQ = "eq"
    NE = "ne"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"


ALL_OPS = frozenset(Op)
EQ_ONLY = frozenset({Op.EQ})
RANGE_OPS = frozenset({Op.EQ, Op.GT, Op.GTE, Op.LT, Op.LTE})
_BY_TEXT = {op.value: op for op in Op}


class Order(Enum):
    ASC = "asc"
    DESC = "desc"


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


@dataclass(frozen=True, slots=True)
class RawQuery:
    """The query string as the client sent it: lower-cased keys in first-seen order, decoded values.

    ``exact_counts`` holds the largest number of repeats of one exact (case-sensitive) spelling of each key.
    """

    items: dict[str, list[str]]
    exact_counts: dict[str, int]


def split_query(query_string: str) -> RawQuery:
    items: dict[str, list[str]] = {}
    spellings: dict[str, int] = {}
    exact_counts: dict[str, int] = {}
    for pair in query_string.split("&"):
        if not pair:
            continue
        raw_key, _, raw_value = pair.partition("=")
        key = _decode(raw_key)
        value = _decode(raw_value)
        lowered = key.lower()
        items.setdefault(lowered, []).append(value)
        spellings[key] = spellings.get(key, 0) + 1
        exact_counts[lowered] = max(exact_counts.get(lowered, 0), spellings[key])
    return RawQuery(items, exact_counts)


def _decode(text: str) -> str:
    return unquote(text.replace("+", " "), errors="replace") if ("%" in text or "+" in text) else text
