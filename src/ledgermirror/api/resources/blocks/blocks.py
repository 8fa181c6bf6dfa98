"""``GET /api/v1/blocks`` and ``GET /api/v1/blocks/{hashOrNumber}``: record files as blocks.

The list is ordered by whichever of ``block.number`` and ``timestamp`` comes first in the query string (the
block number or the consensus end), by consensus end when neither is given, and always paginates on
``block.number``. One block is found by its number or by its hash: 96 hex characters match the whole SHA-384
record file hash, 64 (an Ethereum-style block hash) its first half; an optional ``0x`` prefix, any case.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.listing import ListSpec, no_context, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import ALL_OPS, RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.int64 import INT64_MAX as _INT64_MAX
from ledgermirror.ledger.timestamps import format_ns

_DECIMAL = re.compile(r"\d{1,19}", re.ASCII)
_HEX_NUMBER = re.compile(r"0x([0-9a-fA-F]{1,64})", re.ASCII)
_HASH = re.compile(r"(?:0x)?([0-9A-Fa-f]{64}|[0-9A-Fa-f]{96})", re.ASCII)
_LOGS_BLOOM_HEX_DIGITS = 512
PATH_PARAMETER = "hashOrNumber"


def parse_block_number(text: str) -> int | None:
    """Decimal (up to 19 digits) or ``0x`` hex, 0 to 2^63-1; None when it is neither."""
    match = _HEX_NUMBER.fullmatch(text)
    if match is not None:
        value = int(match.group(1), 16)
    elif _DECIMAL.fullmatch(text):
        value = int(text)
    else:
        return None
    return value if value <= _INT64_MAX else None


def block_number(text: str, ctx: ParseContext) -> int:
    value = parse_block_number(text)
    if value is None:
        raise InvalidValue(text)
    return value


BLOCK_NUMBER = ParamSpec[int](
    "block.number",
    block_number,
    "Block number (decimal or 0x hex), with an optional operator; repeat for ranges. Equalities are combined "
    "as one list.",
    ops=RANGE_OPS,
    schema={"type": "string", "pattern": r"^(\d{1,18}|0x[0-9a-fA-F]{1,15})$"},
    example="gte:100",
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The block's consensus end timestamp (`seconds[.nanos]`), with an optional operator; repeat for ranges.",
    ops=ALL_OPS,
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1676540001.234390000",
)

PARAMS = ParamSet([BLOCK_NUMBER, LIMIT, ORDER, TIMESTAMP])
NO_PARAMS = ParamSet([])

_SELECT = """select count, hash, name, prev_hash, hapi_version_major, hapi_version_minor, hapi_version_patch,
       index, consensus_start, consensus_end, gas_used, logs_bloom, coalesce(size, length(bytes)) as size
from record_file"""

_INDEX = Column("index")
_CONSENSUS_END = Column("consensus_end")
_HASH_C = Column('hash collate "C"')
"""Matches the ``record_file__hash`` index, so exact and prefix lookups are index range scans."""

BLOCK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "format": "int64", "minimum": 0},
        "hapi_version": {"type": ["string", "null"], "example": "0.28.1"},
        "hash": {"type": "string", "pattern": "^0x[0-9a-f]{96}$"},
        "name": {"type": "string", "example": "2022-04-07T16_59_23.159846003Z.rcd"},
        "number": {"type": "integer", "format": "int64", "minimum": 0},
        "previous_hash": {"type": "string", "pattern": "^0x[0-9a-f]{96}$"},
        "size": {"type": ["integer", "null"]},
        "timestamp": {
            "type": "object",
            "properties": {"from": {"type": "string"}, "to": {"type": ["string", "null"]}},
            "required": ["from", "to"],
        },
        "gas_used": {"type": ["integer", "null"], "format": "int64", "minimum": 0},
        "logs_bloom": {"type": ["string", "null"], "pattern": "^0x[0-9a-fA-F]{0,512}$"},
    },
    "required": [
        "count",
        "hapi_version",
        "hash",
        "name",
        "number",
        "previous_hash",
        "size",
        "timestamp",
        "gas_used",
        "logs_bloom",
    ],
}


def _order_column(query: ParsedQuery) -> Column:
    for key in query.given:
        if key == BLOCK_NUMBER.name:
            return _INDEX
        if key == TIMESTAMP.name:
            return _CONSENSUS_END
    return _CONSENSUS_END


def _filter(select: Select, column: Column, found: list[Any]) -> None:
    equal = [item.value for item in found if item.op is Op.EQ]
    if len(equal) == 1:
        select.compare(column, Op.EQ, equal[0])
    elif equal:
        select.any_of(column, equal)
    for item in found:
        if item.op is not Op.EQ:
            select.compare(column, item.op, item.value)


def plan(context: None, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT)
    _filter(select, _INDEX, query.filters(BLOCK_NUMBER))
    _filter(select, _CONSENSUS_END, query.filters(TIMESTAMP))
    return select.order_by([_order_column(query)], order).limit(limit)


def _hex(data: bytes | None, pad_to: int = 0) -> str | None:
    if data is None:
        return None
    return "0x" + (data.hex().rjust(pad_to, "0") if data else "")


def render(row: Any) -> dict[str, Any]:
    version = (row["hapi_version_major"], row["hapi_version_minor"], row["hapi_version_patch"])
    gas_used = row["gas_used"]
    return {
        "count": row["count"],
        "hapi_version": None if None in version else "{}.{}.{}".format(*version),
        "hash": "0x" + row["hash"],
        "name": row["name"],
        "number": row["index"],
        "previous_hash": "0x" + row["prev_hash"],
        "size": row["size"],
        "timestamp": {"from": format_ns(row["consensus_start"]), "to": format_ns(row["consensus_end"])},
        "gas_used": None if gas_used is None or gas_used == -1 else gas_used,
        "logs_bloom": _hex(row["logs_bloom"], _LOGS_BLOOM_HEX_DIGITS),
    }


def _anchors(context: None, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(BLOCK_NUMBER.name, str(row["index"]), number=row["index"])]


def plan_one(hash_or_number: str) -> Select:
    """The lookup for one path value; ``400 Invalid parameter: hashOrNumber`` when it is neither form."""
    select = Select(_SELECT)
    match = _HASH.fullmatch(hash_or_number)
    if match is not None:
        digits = match.group(1).lower()
        if len(digits) == 96:
            select.compare(_HASH_C, Op.EQ, digits)
        else:  # a prefix: [digits, digits with its last character incremented)
            select.compare(_HASH_C, Op.GTE, digits).compare(_HASH_C, Op.LT, digits[:-1] + chr(ord(digits[-1]) + 1))
    elif _DECIMAL.fullmatch(hash_or_number) and int(hash_or_number) <= _INT64_MAX:
        select.compare(_INDEX, Op.EQ, int(hash_or_number))
    else:
        raise BadRequest(f"Invalid parameter: {PATH_PARAMETER}")
    return select.limit(2)


async def get_block(request: Request, ctx: AppContext) -> Page:
    query_of(request, ctx, NO_PARAMS)
    rows = await ctx.database.fetch(plan_one(request.path_params[PATH_PARAMETER]).build())
    if len(rows) != 1:
        raise NotFound()
    return Page(render(rows[0]))


LIST = ListSpec[Request, None](
    path="/api/v1/blocks",
    items="blocks",
    params=PARAMS,
    default_order=Order.DESC,
    locate=query_first,
    prepare=no_context,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List blocks",
    description="Blocks (record files), newest first by default, ordered by block number or consensus end "
    "(whichever filter comes first), with keyset pagination on block.number through links.next.",
    item_schema=BLOCK_SCHEMA,
    tag="blocks",
)
LIST_ENDPOINT = LIST.endpoint()

ONE_ENDPOINT = Endpoint(
    path="/api/v1/blocks/{hashOrNumber}",
    handler=get_block,
    params=NO_PARAMS,
    max_age=600,
    summary="Get a block",
    description="One block by number, or by hash: 96 hex characters (the record file hash) or 64 (its first "
    "half, an Ethereum-style block hash), with or without 0x, in any case.",
    response_schema=BLOCK_SCHEMA,
    tag="blocks",
    path_params=(
        {
            "name": PATH_PARAMETER,
            "in": "path",
            "required": True,
            "description": "Block number (decimal) or block hash (64 or 96 hex characters, optional 0x)",
            "schema": {"type": "string", "pattern": r"^(\d{1,19}|(0x)?([0-9A-Fa-f]{64}|[0-9A-Fa-f]{96}))$"},
            "example": "0x" + "ab" * 32,
        },
    ),
)
