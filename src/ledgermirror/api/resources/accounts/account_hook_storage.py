"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/hooks/{hookId}/storage``: a hook's storage slots, lowest key
first by default.

``key`` takes up to 100 values (``[op:][0x]`` and 1 to 64 hex digits, left-padded to 32 bytes; ``ne`` is not
accepted): equalities form one set, ``gt``/``gte`` raise the lower bound and ``lt``/``lte`` lower the upper
bound, and equalities outside the bounds match nothing. Without ``timestamp`` the slots are the live, not
deleted rows of ``hook_storage``. With ``timestamp`` (at most two; ``eq`` reads as ``lte``) each key's newest
change in the range from ``hook_storage_change``, deleted slots included (their value is null or zero).
Keys and values are ``0x`` and 64 hex digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.querystring.window import inclusive_bounds, inclusive_range
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.api.resources.network.system_files import at_most_two_timestamps
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.timestamps import format_ns

MAX_VALUES = 100
KEY_BYTES = 32
MAX_KEY = (1 << (8 * KEY_BYTES)) - 1


def key_text(value: int) -> str:
    return "0x" + format(value, "064x")


KEY = ParamSpec[int](
    "key",
    values.storage_slot,
    "A storage slot key (1 to 64 hex digits, optional 0x, left-padded to 32 bytes) with an optional eq, gt, "
    "gte, lt or lte operator; up to 100 values. Equalities form one set, the others bound it.",
    ops=RANGE_OPS,
    schema={"type": "string", "pattern": r"^(0x)?[0-9a-fA-F]{1,64}$"},
    example="gte:0x01",
    max_count=MAX_VALUES,
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The slots as of this consensus time range (seconds[.nanoseconds]; eq means lte; at most two values): each "
    "key's newest change in the range.",
    ops=RANGE_OPS,
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
    max_count=2,
)

PARAMS = ParamSet([KEY, LIMIT, ORDER, TIMESTAMP], checks=[at_most_two_timestamps])

PATH_HOOK = "hookId"
OPENAPI_HOOK_PARAMETER: dict[str, Any] = {
    "name": PATH_HOOK,
    "in": "path",
    "required": True,
    "description": "The hook id (0 to 2^63-1)",
    "schema": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 9223372036854775807},
    "example": 1,
}

_CURRENT = """select s.key, s.value, s.modified_timestamp as timestamp
from hook_storage s"""
_HISTORICAL = """select s.key, s.value, s.timestamp
from (
    select distinct on (key) key, value_written as value, consensus_timestamp as timestamp
    from hook_storage_change
    where owner_id = {owner} and hook_id = {hook} and consensus_timestamp between {lower} and {upper}
    order by key, consensus_timestamp desc
) s"""
_OWNER = Column("s.owner_id")
_HOOK = Column("s.hook_id")
_KEY = Column("s.key")
_DELETED = Column("s.deleted")


@dataclass(frozen=True, slots=True)
class Storage:
    owner: int
    hook: int
    lower: bytes
    upper: bytes
    equal: list[bytes] | None
    window: tuple[int, int] | None
    """The inclusive timestamp range (historical slots), or None (live slots)."""
    empty: bool = False
    """The filters match nothing (the body still names the hook and its owner)."""


def _bytes(value: int) -> bytes:
    return value.to_bytes(KEY_BYTES, "big")


def hook_of(path_params: dict[str, Any], ctx: AppContext) -> int:
    try:
        return values.integer_between(0)(str(path_params[PATH_HOOK]), ctx.parse_ctx)
    except InvalidValue:
        raise BadRequest(f"Invalid parameter: {PATH_HOOK}") from None


async def _locate(request: Request, ctx: AppContext) -> tuple[int, int]:
    """The path's owner, then its hook id."""
    return await account_ref.path_account(request, ctx), hook_of(request.path_params, ctx)


async def _prepare(path: tuple[int, int], query: ParsedQuery, ctx: AppContext) -> Storage:
    owner, hook = path
    keys = query.filters(KEY)
    lower, upper = inclusive_range([item for item in keys if item.op is not Op.EQ])
    low, high = max(lower or 0, 0), min(MAX_KEY if upper is None else upper, MAX_KEY)
    empty = low > high
    low, high = min(low, MAX_KEY), max(high, 0)
    equal: list[bytes] | None = None
    if any(item.op is Op.EQ for item in keys):
        inside = sorted({item.value for item in keys if item.op is Op.EQ and low <= item.value <= high})
        empty = empty or not inside
        equal = [_bytes(value) for value in inside]
    window = None
    if query.has(TIMESTAMP):
        window = inclusive_bounds(query.filters(TIMESTAMP), eq_is_upper=True)
        empty = empty or window[0] > window[1]
    return Storage(owner, hook, _bytes(low), _bytes(high), equal, window, empty)


def plan(storage: Storage, query: ParsedQuery, limit: int, order: Order) -> Select:
    if storage.window is None:
        select = Select(_CURRENT).compare(_OWNER, Op.EQ, storage.owner).compare(_HOOK, Op.EQ, storage.hook)
        select.is_not_true(_DELETED)
    else:
        lower, upper = storage.window
        select = Select(
            _HISTORICAL, {"owner": storage.owner, "hook": storage.hook, "lower": lower, "upper": upper}
        )
    select.compare(_KEY, Op.GTE, storage.lower).compare(_KEY, Op.LTE, storage.upper)
    if storage.empty:
        select.where("false")
    if storage.equal is not None:
        select.any_of(_KEY, storage.equal)
    return select.order_by([_KEY], order).limit(limit)


def _hex(value: bytes | None) -> str | None:
    if value is None:
        return None
    return "0x" + value.hex().rjust(2 * KEY_BYTES, "0")


def render(row: Any) -> dict[str, Any]:
    return {"key": _hex(row["key"]), "timestamp": format_ns(row["timestamp"]), "value": _hex(row["value"])}


def _header(storage: Storage | None, rows: Sequence[Any]) -> dict[str, Any]:
    if storage is None:
        return {}
    return {"hook_id": storage.hook, "owner_id": format_encoded(storage.owner)}


def _anchors(storage: Storage, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    number = int.from_bytes(row["key"], "big")
    return [Anchor(KEY.name, key_text(number), number=number)]


SLOT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key": {"type": "string", "pattern": "^0x[0-9a-f]{64}$"},
        "timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "value": {"type": ["string", "null"], "pattern": "^0x[0-9a-f]{64}$"},
    },
    "required": ["key", "timestamp", "value"],
}

LIST = ListSpec[tuple[int, int], Storage](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/hooks/{hookId}/storage",
    items="storage",
    params=PARAMS,
    default_order=Order.ASC,
    locate=_locate,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List a hook's storage slots",
    description="The storage slots of one hook of the account, now or as of a timestamp range, in ascending key "
    "order by default, with pagination through links.next.",
    item_schema=SLOT,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER, OPENAPI_HOOK_PARAMETER),
    header=_header,
    header_schema={"hook_id": {"type": "integer", "format": "int64"}, "owner_id": schemas.ENTITY_ID},
)
ENDPOINT = LIST.endpoint()
