"""Parameters that many endpoints share."""

from __future__ import annotations

from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.params import ParamSpec

LIMIT = ParamSpec(
    "limit",
    values.limit,
    "The maximum number of items to return (1 to the configured maximum; larger values are capped).",
    ops=frozenset(),
    repeatable=False,
    schema={"type": "integer", "format": "int32", "minimum": 1, "default": 25},
)

ORDER = ParamSpec[Order](
    "order",
    values.order,
    "The sort order, asc or desc (case-insensitive).",
    ops=frozenset(),
    repeatable=False,
    schema={"type": "string", "enum": ["asc", "desc"]},
)
